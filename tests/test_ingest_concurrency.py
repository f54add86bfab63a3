"""Two writers of one tenant at once (graph_schema.ingest_mark `WriteScope.bump`): an ingest
whose tenant another ingest, a purge or a hand delete changed under it stops with
`IngestInterrupted` (one line, exit 1) instead of writing a second current copy of a
relationship or failing with a raw driver error; running it again completes the store.

The other writer runs inside a hook of the first one's write transaction, before that
transaction writes anything: the interleaving is the same on every run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import neo4j
import pytest
from test_ingest_paths import stored_records

import graph_schema.writer as writer
from graph_schema.bundle import LoadedBundle, apply_overrides
from graph_schema.ingest_mark import IngestInterrupted
from graph_schema.purge import purge_content
from graph_schema.schema_ddl import apply_schema
from graph_schema.synthetic import generate_bundle, write_bundle_file
from graph_schema.writer import ingest_bundle

NOW = datetime.now(UTC)
SMALL = 40  # the batch size of the ingest the hooks stop


@pytest.fixture()
def graph(clean_db: neo4j.Driver) -> neo4j.Driver:
    apply_schema(clean_db, tenants=())  # as `investigator ingest` does first
    return clean_db


def _generated(tenant: str, services: int = 12) -> LoadedBundle:
    loaded = LoadedBundle.from_bundles([("gen", generate_bundle(services, 7, tenant="gen"))])
    return apply_overrides(loaded, tenant=tenant)


def _stored(driver: neo4j.Driver, tenant: str) -> tuple[list[Any], list[Any]]:
    return stored_records(driver, tenant)


def _doubled(driver: neo4j.Driver, tenant: str) -> tuple[int, int]:
    """Ids with two current records, and relationship keys with two current copies between
    current records."""
    nodes = driver.execute_query(
        "MATCH (n:KG {tenant: $t}) WHERE n.superseded_at IS NULL "
        "WITH n.id AS id, count(*) AS c WHERE c > 1 RETURN count(*) AS n",
        t=tenant,
    ).records[0]["n"]
    edges = driver.execute_query(
        "MATCH (a:KG {tenant: $t})-[r]->(b:KG) WHERE r.superseded_at IS NULL "
        "AND a.superseded_at IS NULL AND b.superseded_at IS NULL "
        "WITH r.key AS key, count(*) AS c WHERE c > 1 RETURN count(*) AS n",
        t=tenant,
    ).records[0]["n"]
    return int(nodes), int(edges)


def _before_first(
    monkeypatch: pytest.MonkeyPatch, name: str, meanwhile: Callable[[], None]
) -> list[BaseException]:
    """Run `meanwhile` in the first call of the writer's `name` transaction function, before
    it writes; the other calls (the batches in flight beside it) wait until it is done.

    The other writer's own calls go straight through: those from the thread that runs it
    (the general writer's), and batches of more than `SMALL` rows (a first ingest's, written
    by its own threads with the default batch size)."""
    original = getattr(writer, name)
    done = threading.Event()
    lock = threading.Lock()
    calls = 0
    errors: list[BaseException] = []
    running: list[int] = []

    def hooked(tx: neo4j.ManagedTransaction, rows: Any) -> Any:
        nonlocal calls
        if threading.get_ident() in running or len(rows) > SMALL:
            return original(tx, rows)
        with lock:
            calls += 1
            first = calls == 1
        if first:
            running.append(threading.get_ident())
            try:
                meanwhile()
            except BaseException as exc:  # the test asserts on it
                errors.append(exc)
            finally:
                done.set()
        else:
            assert done.wait(timeout=120)
        return original(tx, rows)

    monkeypatch.setattr(writer, name, hooked)
    return errors


def test_a_second_ingest_between_two_batches_stops_the_first_without_doubling_a_relationship(
    graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ingest B of the same bundle runs while ingest A is about to write its first batch of
    # relationships: B finds A's nodes and writes every relationship. A's batches would
    # write them again (relationships have no uniqueness constraint): before, A ended
    # "successfully" with two current copies of each.
    other: list[Any] = []
    errors = _before_first(
        monkeypatch,
        "_create_fresh_edges",
        lambda: other.append(ingest_bundle(graph, _generated("acme"), now=NOW)),
    )
    with pytest.raises(IngestInterrupted) as stopped:
        ingest_bundle(graph, _generated("acme"), now=NOW, batch_size=SMALL)
    monkeypatch.undo()
    assert errors == [] and other[0].edge_records_created > 0
    line = str(stopped.value)
    assert "\n" not in line and stopped.value.exit_code == 1
    assert line.startswith("ingest stopped: another ingest or a purge of tenant acme")
    assert "run this ingest again" in line
    assert _doubled(graph, "acme") == (0, 0)
    # Running it again is the no-op a second ingest of the bundle is.
    again = ingest_bundle(graph, _generated("acme"), now=NOW, batch_size=SMALL, full=True)
    assert not again.changed
    ingest_bundle(graph, _generated("whole"), now=NOW, batch_size=SMALL)
    assert _stored(graph, "acme") == _stored(graph, "whole")


def test_two_first_ingests_of_one_tenant_give_one_line_and_one_store(
    graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # B writes the nodes A's second batch was about to write: before, A failed with the raw
    # `neo4j.exceptions.ConstraintError` of the (tenant, id, version) constraint.
    errors = _before_first(
        monkeypatch,
        "_create_nodes",
        lambda: ingest_bundle(graph, _generated("acme"), now=NOW),
    )
    with pytest.raises(IngestInterrupted, match=r"^ingest stopped: another ingest") as stopped:
        ingest_bundle(graph, _generated("acme"), now=NOW, batch_size=SMALL)
    monkeypatch.undo()
    assert errors == []
    assert "tenant acme" in str(stopped.value)
    assert _doubled(graph, "acme") == (0, 0)
    marks = graph.execute_query("MATCH (m:IngestMark {tenant: 'acme'}) RETURN count(m) AS n")
    assert marks.records[0]["n"] == 1
    again = ingest_bundle(graph, _generated("acme"), now=NOW, batch_size=SMALL)
    assert not again.changed
    ingest_bundle(graph, _generated("whole"), now=NOW, batch_size=SMALL)
    assert _stored(graph, "acme") == _stored(graph, "whole")


def test_a_re_ingest_with_changes_beside_another_stops_before_doubling_a_version(
    graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Both read version 1 of the same services and plan version 2. B commits first; A's
    # write of version 2 then stops instead of failing on the constraint (or superseding
    # B's record), and A run again writes its own version 3 on top of B's.
    ingest_bundle(graph, _generated("acme"), now=NOW)
    a = apply_overrides(_generated("acme"), source_id=None)
    b = apply_overrides(_generated("acme"), source_id=None)
    a.parts[0].bundle.nodes[1].props["tier"] = "a"
    b.parts[0].bundle.nodes[1].props["tier"] = "b"
    errors = _before_first(
        monkeypatch, "_write_nodes", lambda: ingest_bundle(graph, b, now=NOW, full=True)
    )
    with pytest.raises(IngestInterrupted, match=r"^ingest stopped: another ingest"):
        ingest_bundle(graph, a, now=NOW, full=True)
    monkeypatch.undo()
    assert errors == []
    assert _doubled(graph, "acme") == (0, 0)
    again = ingest_bundle(graph, a, now=NOW, full=True)
    assert again.node_records_created == 1
    target = a.parts[0].bundle.nodes[1].id
    versions = graph.execute_query(
        "MATCH (n:KG {tenant: 'acme', id: $id}) RETURN n.version AS v, n.tier AS tier, "
        "n.superseded_at IS NULL AS current ORDER BY v",
        id=target,
    ).records
    assert [(r["v"], r["tier"], r["current"]) for r in versions][1:] == [
        (2, "b", False),
        (3, "a", True),
    ]


def test_a_purge_during_an_ingest_stops_it(
    graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest_bundle(graph, _generated("acme"), now=NOW)
    changed = _generated("acme")
    target = changed.parts[0].bundle.nodes[1]
    target.props["tier"] = "changed"
    errors = _before_first(
        monkeypatch, "_write_nodes", lambda: purge_content(graph, "acme", str(target.id))
    )
    with pytest.raises(IngestInterrupted, match="another ingest or a purge of tenant acme"):
        ingest_bundle(graph, changed, now=NOW, full=True)
    monkeypatch.undo()
    assert errors == []
    assert ingest_bundle(graph, changed, now=NOW, full=True).node_records_created == 1


def test_records_deleted_by_hand_during_an_ingest_stop_it_in_one_line(
    graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: `RuntimeError: wrote 0 of 40 relationships: an endpoint disappeared meanwhile`.
    def delete_tenant() -> None:
        with graph.session() as session:
            session.run("MATCH (n {tenant: 'acme'}) DETACH DELETE n").consume()

    errors = _before_first(monkeypatch, "_create_fresh_edges", delete_tenant)
    with pytest.raises(IngestInterrupted) as stopped:
        ingest_bundle(graph, _generated("acme"), now=NOW, batch_size=SMALL)
    monkeypatch.undo()
    assert errors == []
    assert str(stopped.value).startswith(
        "ingest stopped: 40 of 40 relationships found no endpoint: records of tenant acme "
        "were deleted while this ingest wrote it"
    )
    ingest_bundle(graph, _generated("acme"), now=NOW, batch_size=SMALL)
    ingest_bundle(graph, _generated("whole"), now=NOW, batch_size=SMALL)
    assert _stored(graph, "acme") == _stored(graph, "whole")


def test_the_cli_says_it_in_one_line_with_exit_1(
    graph: neo4j.Driver,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    cli_env: Any,
    invoke: Any,
) -> None:
    path = tmp_path / "bundle.json"
    write_bundle_file(generate_bundle(12, 7, tenant="acme"), path)
    create_nodes = writer._create_nodes
    errors = _before_first(
        monkeypatch,
        "_create_nodes",
        lambda: ingest_bundle(graph, _generated("acme"), now=NOW),
    )
    result = invoke("ingest", str(path), "--batch-size", str(SMALL))
    monkeypatch.setattr(writer, "_create_nodes", create_nodes)  # the environment stays
    assert errors == []
    assert result.code == 1, result
    assert result.err.startswith("error: ingest stopped: another ingest of tenant acme"), result
    assert result.err.count("\n") == 1 and "Error:" not in result.err
    assert invoke("ingest", str(path), "--batch-size", str(SMALL)).code == 0
    assert _doubled(graph, "acme") == (0, 0)
