"""A correction that made a team the owner of a past time, told from the team's side, and a
team's OWNS reads cut at their row caps, through the CLI against a real Neo4j, with our own
small bundles written here.

Tenant initech: team:shelving-ops owns svc:crate from 2025-01-01, recorded on 2026-02-01 as
ending on 2025-06-01; a correction recorded on 2026-03-01 moves its end to 2025-09-01 (the
team owned crate three months longer than first recorded). team:warehouse owns 201 services
(svc:box-000 ... svc:box-200) from 2025-01-01: more than one read of what it owned (100) or of
every record of it (200) holds. user:ivy reads `internal`.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import ingest_only
from test_team_side_ownership import IVY, _ask, _claims, _gaps, _node, _owns, _principal, _source

OPS = "team:shelving-ops"
WAREHOUSE = "team:warehouse"
START = "2025-01-01T00:00:00Z"
CORRECTED_AT = "2026-03-01T09:00:00Z"
BOXES = 201
CORRECTION = (
    "the owner of svc:crate was corrected at 2026-03-01T09:00:00Z: recorded as not "
    f"{OPS} until then, {OPS} since (asked with a known_at before the correction, the answer "
    f"is not {OPS})"
)


def _bundles(folder: Path) -> list[Path]:
    internal = ["internal"]
    crate = _owns(OPS, "svc:crate", START, internal)
    crate["valid_to"] = "2025-06-01T00:00:00Z"
    initech = {
        "tenant": "initech",
        "sources": [_source("src:catalog", "service_catalog"), _source("src:iam", "identity")],
        "principals": [_principal("user:ivy", ["internal"])],
        "nodes": [
            _node(OPS, "Team", "Shelving Ops", internal),
            _node(WAREHOUSE, "Team", "Warehouse", internal),
            _node("svc:crate", "Service", "crate", internal),
            *(_node(f"svc:box-{n:03d}", "Service", f"box-{n:03d}", internal) for n in range(BOXES)),
        ],
        "edges": [
            crate,
            *(_owns(WAREHOUSE, f"svc:box-{n:03d}", START, internal) for n in range(BOXES)),
        ],
    }
    corrected = _owns(OPS, "svc:crate", START, internal)
    corrected.update(valid_to="2025-09-01T00:00:00Z", recorded_at=CORRECTED_AT)
    correction = {
        "tenant": "initech",
        "sources": [_source("src:catalog", "service_catalog")],
        "edges": [corrected],
    }
    paths = []
    for name, bundle in (("initech.json", initech), ("correction.json", correction)):
        path = folder / name
        path.write_text(json.dumps(bundle))
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def corrected(driver: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> neo4j.Driver:
    return ingest_only(driver, _bundles(tmp_path_factory.mktemp("team-corrections")))


def _crate(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c for c in _claims(doc) if "svc:crate" in c]


# 1. A correction that made the team the owner of a time past is told from its side, as the
# service side tells it; --known-at before it gives the answer recorded then. Before, the
# team side said only that the team owned crate, with no word of the correction.
def test_a_correction_that_made_the_team_owner_is_told(  # type: ignore[no-untyped-def]
    corrected: neo4j.Driver, cli_env, invoke
) -> None:
    question = "What did team:shelving-ops own on 2025-07-01?"
    after = _ask(invoke, question, *IVY, "--deadline-seconds", "600")
    said = "At the time named in the question, 2025-07-01T00:00:00Z (explicit, a day: its start, "
    assert _crate(after) == [
        f"{said}00:00 UTC): {OPS} OWNS svc:crate (valid {START} to 2025-09-01T00:00:00Z)",
        f"{said}00:00 UTC): {CORRECTION}",
    ], _claims(after)
    assert after["status"] == "complete"
    # Bound to the record of the edge as corrected.
    claim = next(c for c in after["claims"] if c["statement"].endswith(CORRECTION))
    cited = [e for e in after["evidence"] if e["evidence_id"] in claim["evidence_ids"]]
    assert [(e["element_id"], e["version"]) for e in cited] == [
        (f"OWNS|{OPS}|svc:crate|2025-01-01", 2)
    ]
    before = _ask(
        invoke, question, *IVY, "--known-at", "2026-02-15T00:00:00Z", "--deadline-seconds", "600"
    )
    assert _crate(before) == [], _claims(before)
    assert any(f"no OWNS record of {OPS} holds at" in g for g in _gaps(before)), _gaps(before)


def test_a_correction_over_a_period_from_the_team_side(  # type: ignore[no-untyped-def]
    corrected: neo4j.Driver, cli_env, invoke
) -> None:
    doc = _ask(
        invoke,
        "Which services did team:shelving-ops own between 2025-03-01 and 2025-12-01?",
        *IVY,
        "--deadline-seconds",
        "600",
    )
    assert f"From 2025-06-01T00:00:00Z to 2025-09-01T00:00:00Z {CORRECTION}" in _claims(doc)
    # A team record learned once (warehouse's boxes) is no correction.
    assert not any("corrected" in c and "box" in c for c in _claims(doc))


# 2. A team's reads cut at their row caps are required gaps: the list is not complete.
# Before, 100 of the 201 services were listed, `complete`, and nothing said of the rest.
def test_a_team_read_cut_at_its_cap_is_a_required_gap(  # type: ignore[no-untyped-def]
    corrected: neo4j.Driver, cli_env, invoke
) -> None:
    result = invoke(
        "investigate",
        "What did team:warehouse own?",
        *IVY,
        "--as-of",
        "2026-06-01T00:00:00Z",
        "--deadline-seconds",
        "600",
        "--json",
    )
    assert result.code == 0, result
    doc = json.loads(result.out)
    required = [m["description"] for m in doc["missing_evidence"] if m["required"]]
    assert (
        f"more than 100 OWNS records of {WAREHOUSE} up to 2026-06-01T00:00:00Z (newest first): "
        "one read holds 100, the rest were not read, so the list of what it owned is not "
        # Not "ask for one kind": the read holds every kind, one kind asked reads the same.
        "complete; ask over a narrower period ('between A and B')"
    ) in required, required
    records = [
        g
        for g in required
        if g.startswith(f"more than 200 records of the OWNS edges of {WAREHOUSE} known at ")
    ]
    assert len(records) == 1, required
    assert records[0].endswith(
        ": one read holds 200, the rest were not read, so the list is not complete: which of "
        "its records were retracted or corrected is not told"
    ), records
    assert doc["status"] == "partial"


def test_a_team_read_within_its_cap_has_no_such_gap(  # type: ignore[no-untyped-def]
    corrected: neo4j.Driver, cli_env, invoke
) -> None:
    doc = _ask(invoke, "What did team:shelving-ops own on 2025-07-01?", *IVY)
    assert not any(g.startswith("more than") for g in _gaps(doc)), _gaps(doc)
