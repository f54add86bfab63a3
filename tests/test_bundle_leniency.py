"""Bundles that accept what users write (issue 15), ingested into a real Neo4j: domain
fields named like record fields are moved out of the record's way, numbers are taken where
text is typed, kinds, labels and types match in any case; a truly bad bundle still gets
every problem listed, exit 2, nothing written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import neo4j
import pytest
import yaml

SOURCE = {
    "source_id": "src:cmdb",
    "source_type": "cmdb",
    "trust": "trusted",
    "allowed_purposes": ["incident_investigation"],
}


@pytest.fixture()
def empty(driver: neo4j.Driver) -> neo4j.Driver:
    with driver.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()
    return driver


def _write(tmp_path: Path, bundle: dict[str, Any]) -> Path:
    path = tmp_path / "bundle.yaml"
    path.write_text(yaml.safe_dump(bundle, sort_keys=False), encoding="utf-8")
    return path


def _props(driver: neo4j.Driver, ident: str) -> dict[str, Any]:
    records, _, _ = driver.execute_query(
        "MATCH (n:KG {id: $id}) WHERE n.superseded_at IS NULL RETURN properties(n) AS p, "
        "[l IN labels(n) WHERE NOT l STARTS WITH 'KGTenant_'] AS labels",
        id=ident,
    )
    return {**records[0]["p"], "_labels": sorted(records[0]["labels"])}


def test_natural_domain_fields_are_accepted(  # type: ignore[no-untyped-def]
    empty: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    bundle = {
        "tenant": "acme",
        "sources": [SOURCE],
        "nodes": [
            {"id": "svc:a", "label": "service", "source_id": "src:cmdb", "props": {"tier": 1}},
            {
                "id": "deploy:a-1",
                "label": "Deployment",
                "source_id": "src:cmdb",
                "props": {"version": "1.4.2", "service": "svc:a"},
            },
            {
                "id": "inc:1",
                "label": "INCIDENT",
                "source_id": "src:cmdb",
                "props": {"title": "Checkout down", "status": "resolved", "severity": 2},
            },
        ],
        "edges": [
            {"type": "deployed_as", "from": "svc:a", "to": "deploy:a-1", "source_id": "src:cmdb"}
        ],
        "documents": [
            {
                "id": "doc:pm-1",
                "kind": "Postmortem",
                "title": 1,
                "content": "what happened",
                "locator": "wiki/pm-1",
                "source_id": "src:cmdb",
                "props": {"version": 3},
            }
        ],
    }
    result = invoke("ingest", str(_write(tmp_path, bundle)))
    assert result.code == 0, result
    service = _props(empty, "svc:a")
    assert service["tier"] == "1" and service["_labels"] == ["KG", "Service"]
    deploy = _props(empty, "deploy:a-1")
    assert deploy["release"] == "1.4.2" and deploy["version"] == 1  # the record's own version
    incident = _props(empty, "inc:1")
    assert incident["title"] == "Checkout down"
    assert (incident["incident_status"], incident["status"]) == ("resolved", "active")
    assert incident["severity"] == "2"
    doc = _props(empty, "doc:pm-1")
    assert (doc["kind"], doc["title"], doc["document_version"]) == ("postmortem", "1", 3)
    records, _, _ = empty.execute_query("MATCH ()-[r:DEPLOYED_AS]->() RETURN count(r) AS c")
    assert records[0]["c"] == 1
    again = invoke("ingest", str(_write(tmp_path, bundle)), "--json")
    assert '"node_records_created": 0' in again.out, again


def test_a_truly_bad_bundle_lists_every_problem_and_writes_nothing(  # type: ignore[no-untyped-def]
    empty: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    bundle = {
        "tenant": "acme",
        "sources": [SOURCE],
        "nodes": [
            {"id": "svc:a", "label": "Widget", "source_id": "src:cmdb"},
            {
                "id": "deploy:1",
                "label": "Deployment",
                "source_id": "src:cmdb",
                "props": {"version": "1", "release": "2"},
            },
            {"id": "svc:b", "label": "Service", "source_id": "src:cmdb", "props": {"tier": True}},
        ],
        "documents": [
            {"id": "d", "kind": "memo", "title": "t", "content": "c", "locator": "l"},
        ],
    }
    result = invoke("ingest", str(_write(tmp_path, bundle)))
    assert result.code == 2, result
    assert "nodes[0] svc:a: label: label 'Widget' is not one of" in result.err
    assert "property 'version' is stored as 'release', which is also given" in result.err
    assert "nodes[2] svc:b: tier: Input should be a valid string" in result.err
    assert "documents[0] d: kind" in result.err
    records, _, _ = empty.execute_query("MATCH (n:KG) RETURN count(n) AS c")
    assert records[0]["c"] == 0


def test_a_runbook_without_supports_is_the_runbook(  # type: ignore[no-untyped-def]
    empty: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    # Found by an attacker: `supports` is optional, but a runbook without it was rejected
    # `low_relevance` and the card said "no version ... is valid at as_of".
    bundle = {
        "tenant": "acme",
        "sources": [dict(SOURCE, allowed_purposes=["runbook_lookup"])],
        "principals": [
            {"id": "user:oncall", "labels": ["internal"], "purposes": ["runbook_lookup"]}
        ],
        "nodes": [
            {"id": "svc:a", "label": "Service", "source_id": "src:cmdb", "acl": ["internal"]}
        ],
        "documents": [
            {"id": "runbook:a@v1", "kind": "runbook", "title": "A recovery", "content":
             "1. Restart a.", "locator": "wiki/a", "source_id": "src:cmdb", "acl": ["internal"],
             "applies_to": ["svc:a"], "valid_from": "2025-01-01T00:00:00Z"},
            {"id": "doc:said-nothing", "kind": "runbook", "title": "B", "content": "b",
             "locator": "wiki/b", "source_id": "src:cmdb", "supports": []},
        ],
    }  # fmt: skip
    result = invoke("ingest", str(_write(tmp_path, bundle)))
    assert result.code == 0, result
    assert _props(empty, "runbook:a@v1")["supports"] == ["runbook"]
    assert _props(empty, "doc:said-nothing")["supports"] == []  # as written
    card = invoke("runbook", "--service", "svc:a", "--subject", "acme/user:oncall")
    assert card.code == 0, card
    assert card.out.startswith("Runbook   A recovery  [runbook:a@v1"), card.out


def test_relationships_instead_of_edges_names_the_key(  # type: ignore[no-untyped-def]
    empty: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    # Other graph formats call them relationships: the refusal said only "Extra inputs are
    # not permitted", with no word of the key a bundle uses.
    bundle = {
        "tenant": "acme",
        "sources": [SOURCE],
        "nodes": [{"id": "svc:a", "label": "Service", "source_id": "src:cmdb"}],
        "relationships": [{"type": "DEPENDS_ON", "from": "svc:a", "to": "svc:a"}],
    }
    result = invoke("ingest", str(_write(tmp_path, bundle)))
    assert result.code == 2, result
    problem = next(line for line in result.err.splitlines() if "relationships" in line)
    assert problem.endswith(
        "bundle: relationships: Extra inputs are not permitted; the key is `edges`"
    )
    records, _, _ = empty.execute_query("MATCH (n:KG) RETURN count(n) AS c")
    assert records[0]["c"] == 0
