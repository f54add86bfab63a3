"""The writer's two ways in, on a real Neo4j: a tenant's first ingest (records streamed batch
by batch while the next batch's drafts are built) stores exactly what the general writer
(history, planning, versions) stores; a re-ingest finds unchanged records by comparing
content hashes in Neo4j, and still sees a record whose type changed under the same values.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import neo4j
import pytest
import yaml

from graph_schema.bundle import Bundle, LoadedBundle, SourceSpec, apply_overrides
from graph_schema.synthetic import generate_bundle
from graph_schema.writer import ingest_bundle

NOW = datetime.now(UTC)  # one ingest time for both tenants
# Per-tenant values: left out when two tenants' records are compared.
_PER_TENANT = ("tenant", "recorded_at", "content_hash", "superseded_at")


@pytest.fixture()
def graph(driver: neo4j.Driver) -> neo4j.Driver:
    with driver.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()
    return driver


def stored_records(
    driver: neo4j.Driver, tenant: str, skip_id: str = "src:seed"
) -> tuple[list[Any], list[Any]]:
    """A tenant's node and relationship records (but `skip_id`), without what differs
    between tenants: two tenants' stores compare equal when they hold the same records."""
    nodes, _, _ = driver.execute_query(
        "MATCH (n:KG {tenant: $tenant}) WHERE n.id <> $skip_id "
        "RETURN n.id AS id, n.version AS version, n.superseded_at IS NULL AS current, "
        "[l IN labels(n) WHERE NOT l STARTS WITH 'KGTenant_'] AS labels, properties(n) AS p",
        tenant=tenant,
        skip_id=skip_id,
    )
    edges, _, _ = driver.execute_query(
        "MATCH (a:KG {tenant: $tenant})-[r]->(b) "
        "RETURN type(r) AS type, a.id AS a, a.version AS av, b.id AS b, b.version AS bv, "
        "r.superseded_at IS NULL AS current, properties(r) AS p",
        tenant=tenant,
    )

    def plain(record: neo4j.Record) -> tuple[Any, ...]:
        props = {k: v for k, v in record["p"].items() if k not in _PER_TENANT}
        rest = {k: (sorted(v) if k == "labels" else v) for k, v in record.items() if k != "p"}
        return (sorted(rest.items()), sorted(props.items()))

    return sorted(map(plain, nodes)), sorted(map(plain, edges))


def test_first_ingest_stores_what_the_general_writer_stores(graph: neo4j.Driver) -> None:
    # "fresh" has no record: its first ingest streams. "kept" already has one (another
    # source), so the same bundle goes through history reads and planning.
    seed = Bundle(
        tenant="kept",
        sources=[
            SourceSpec(
                source_id="src:seed",
                source_type="wiki",
                owner_team="team:x",
                classification="internal",
                allowed_purposes=["audit"],
            )
        ],
    )
    ingest_bundle(graph, LoadedBundle.from_bundles([("seed", seed)]), now=NOW)
    generated = LoadedBundle.from_bundles([("gen", generate_bundle(12, 7, tenant="gen"))])
    reports = {}
    for tenant in ("fresh", "kept"):
        loaded = apply_overrides(generated, tenant=tenant)
        reports[tenant] = ingest_bundle(graph, loaded, now=NOW, batch_size=50)
    fresh, kept = reports["fresh"], reports["kept"]
    assert fresh.model_dump(exclude={"seconds"}) == kept.model_dump(exclude={"seconds"})
    assert fresh.node_records_created > 100 and fresh.tombstones_created > 0
    assert stored_records(graph, "fresh") == stored_records(graph, "kept")

    again = ingest_bundle(graph, apply_overrides(generated, tenant="fresh"))
    assert not again.changed
    assert again.nodes_unchanged == fresh.node_records_created
    assert again.edges_unchanged == fresh.edge_records_created
    assert again.retractions_unchanged == fresh.tombstones_created


def test_reingest_finds_changed_records_in_chunked_reads(
    graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every third node and edge changes; one tenant's re-ingest reads the hashes in one
    # chunk per statement, the other's in chunks of a few rows: both find the same records.
    bundle = generate_bundle(12, 7, tenant="gen")
    changed = bundle.model_copy(
        update={
            "nodes": [
                n.model_copy(update={"source_version": "v2"}) if i % 3 == 0 else n
                for i, n in enumerate(bundle.nodes)
            ],
            "edges": [
                e.model_copy(update={"source_version": "v2"}) if i % 3 == 0 else e
                for i, e in enumerate(bundle.edges)
            ],
        }
    )
    original = LoadedBundle.from_bundles([("gen", bundle)])
    update = LoadedBundle.from_bundles([("gen", changed)])
    reports = {}
    for tenant, read_batch in (("whole", 10000), ("chunked", 7)):
        ingest_bundle(graph, apply_overrides(original, tenant=tenant), now=NOW)
        monkeypatch.setattr("graph_schema.writer._READ_BATCH", read_batch)
        reports[tenant] = ingest_bundle(graph, apply_overrides(update, tenant=tenant), now=NOW)
    whole, chunked = reports["whole"], reports["chunked"]
    assert whole.model_dump(exclude={"seconds"}) == chunked.model_dump(exclude={"seconds"})
    assert whole.nodes_unchanged > 0 and whole.edges_unchanged > 0
    assert whole.node_records_created > 0 and whole.edge_records_created > 0
    assert stored_records(graph, "whole") == stored_records(graph, "chunked")


def _bundle(label: str) -> dict[str, Any]:
    return {
        "tenant": "acme",
        "sources": [
            {
                "source_id": "src:catalog",
                "source_type": "service_catalog",
                "owner_team": "team:a",
                "classification": "internal",
                "allowed_purposes": ["audit"],
            }
        ],
        "nodes": [
            {"id": "svc:a", "label": "Service", "name": "a", "source_id": "src:catalog"},
            {"id": "x:1", "label": label, "name": "one", "source_id": "src:catalog"},
        ],
        "edges": [{"type": "OWNS", "from": "x:1", "to": "svc:a", "source_id": "src:catalog"}],
    }


def test_reingest_sees_a_changed_type_under_the_same_values(
    graph: neo4j.Driver, cli_env: object, invoke: Any, tmp_path: Path
) -> None:
    first = tmp_path / "team.yaml"
    first.write_text(yaml.safe_dump(_bundle("Team")), encoding="utf-8")
    assert invoke("ingest", str(first)).code == 0
    before = stored_records(graph, "acme")

    # Same id and properties (so the same content hash), another type: refused.
    second = tmp_path / "person.yaml"
    second.write_text(yaml.safe_dump(_bundle("Person")), encoding="utf-8")
    result = invoke("ingest", str(second))
    assert result.code == 2, result
    assert "id 'x:1' is a Team in tenant 'acme'" in result.err
    assert stored_records(graph, "acme") == before
    assert invoke("ingest", str(first)).code == 0
    assert stored_records(graph, "acme") == before


def test_a_change_recorded_before_1970_is_newer_than_the_record_before_it(
    graph: neo4j.Driver,
) -> None:
    # The history read turns `recorded_at` into microseconds in Cypher and the writer compares
    # them with Python's: half a second before 1970 must not read as half a second after it.
    data = _bundle("Team")
    data["nodes"][1]["recorded_at"] = "1969-12-31T23:59:59.5Z"
    ingest_bundle(graph, LoadedBundle.from_bundles([("old", Bundle.model_validate(data))]), now=NOW)
    changed = _bundle("Team")
    changed["nodes"][1].update(name="renamed", recorded_at="1969-12-31T23:59:59.7Z")
    loaded = LoadedBundle.from_bundles([("new", Bundle.model_validate(changed))])
    report = ingest_bundle(graph, loaded, now=NOW)
    assert report.node_records_created == 1
    current, _, _ = graph.execute_query(
        "MATCH (n:KG {tenant: 'acme', id: 'x:1'}) WHERE n.superseded_at IS NULL "
        "RETURN n.name AS name, n.version AS version, toString(n.recorded_at) AS recorded_at"
    )
    # Learned at its own (explicit) time, not at the ingest's: it is later than the first.
    assert [(r["name"], r["version"], r["recorded_at"]) for r in current] == [
        ("renamed", 2, "1969-12-31T23:59:59.7Z")
    ]
    again = ingest_bundle(graph, loaded, now=NOW, full=True)
    assert again.node_records_created == 0 and again.edge_records_created == 0
