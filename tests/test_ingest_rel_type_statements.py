"""Edge reads and writes by relationship type (issue 12): a few keys of several types are one
statement naming those types (one plan where a small ingest planned one per type), many keys
one statement per type; both write the same records against a real Neo4j."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import neo4j
import pytest
from conftest import wipe

from graph_schema import kg_types
from graph_schema.bundle import apply_overrides, load_bundle
from graph_schema.kg_types import ONE_STATEMENT_ROWS, RelType, RelTypeStatement
from graph_schema.writer import ingest_bundle

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "initech-time"
STATEMENT = "UNWIND $rows AS row MATCH ()-[r:REL_TYPE]->() WHERE r.key = row.key RETURN r"


def test_few_keys_of_several_types_are_one_statement_naming_those_types() -> None:
    owns = [{"key": "OWNS|team:a|svc:b"}]
    applies = [{"key": "APPLIES_TO|rb:x|svc:b"}, {"key": "APPLIES_TO|rb:x|alert:y"}]
    batches = RelTypeStatement(STATEMENT).batches(
        {RelType.OWNS: owns, RelType.APPLIES_TO: applies, RelType.EMITTED: []}
    )
    assert batches == [
        (STATEMENT.replace("REL_TYPE", "APPLIES_TO|OWNS"), [*applies, *owns]),
    ]
    # One type: the statement of that type alone.
    assert RelTypeStatement(STATEMENT).batches({RelType.OWNS: owns}) == [
        (STATEMENT.replace("REL_TYPE", "OWNS"), owns)
    ]


def test_many_keys_are_one_statement_per_type() -> None:
    owns = [{"key": f"OWNS|team:a|svc:{i}"} for i in range(ONE_STATEMENT_ROWS)]
    applies = [{"key": "APPLIES_TO|rb:x|svc:b"}]
    batches = RelTypeStatement(STATEMENT).batches({RelType.OWNS: owns, RelType.APPLIES_TO: applies})
    assert batches == [
        (STATEMENT.replace("REL_TYPE", "APPLIES_TO"), applies),
        (STATEMENT.replace("REL_TYPE", "OWNS"), owns),
    ]


def _records(driver: neo4j.Driver, tenant: str) -> dict[str, Any]:
    """What an ingest stored in `tenant`, without its record times (they are the ingest's)."""
    nodes, _, _ = driver.execute_query(
        "MATCH (n:KG) WHERE n.tenant = $tenant "
        "RETURN n.id AS id, n.version AS version, n.content_hash AS hash, n.status AS status, "
        "n.superseded_at IS NULL AS current ORDER BY id, version",
        tenant=tenant,
    )
    edges, _, _ = driver.execute_query(
        "MATCH (a)-[r]->(b) WHERE r.tenant = $tenant "
        "RETURN type(r) AS type, r.key AS key, r.version AS version, r.content_hash AS hash, "
        "r.status AS status, r.superseded_at IS NULL AS current, a.id AS from_id, "
        "a.version AS from_version, b.id AS to_id, b.version AS to_version "
        "ORDER BY key, version, from_version, to_version",
        tenant=tenant,
    )
    return {"nodes": [r.data() for r in nodes], "edges": [r.data() for r in edges]}


def test_one_statement_and_per_type_store_the_same_records(
    clean_db: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The catalog, then the incident bundle: 15 relationship records of 9 types into a
    # tenant with records (its unchanged-read, history read and supersession by type).
    stored: dict[int, dict[str, Any]] = {}
    reports: dict[int, list[dict[str, Any]]] = {}
    tenant = "rel-types"
    for limit in (ONE_STATEMENT_ROWS, 0):
        wipe(clean_db)
        monkeypatch.setattr(kg_types, "ONE_STATEMENT_ROWS", limit)
        reports[limit] = []
        for name in ("10-initech-catalog.yaml", "20-initech-incident.yaml"):
            loaded = apply_overrides(load_bundle(FIXTURES / name), tenant=tenant)
            report = ingest_bundle(clean_db, loaded)
            reports[limit].append(report.model_dump(exclude={"seconds"}))
        stored[limit] = _records(clean_db, tenant)
    assert reports[ONE_STATEMENT_ROWS][1]["records_superseded"] > 0
    assert reports[ONE_STATEMENT_ROWS] == reports[0]
    assert stored[ONE_STATEMENT_ROWS] == stored[0]
    assert len({e["type"] for e in stored[0]["edges"]}) >= 5
