"""Retracted and corrected OWNS records told from a team's side ("What did team:x own on
<date>?"), as the service side tells them, through the CLI against a real Neo4j, with our own
small bundles written here; and a runbook version's owners not stated after the version.

Tenant initech: team:shelving-ops owns svc:shelf; its records of svc:bin and of
alert:ShelfHidden (readable with `incident` only) from 2025-01-01 were retracted on
2026-03-01; its record of svc:crate from 2025-01-01, open, was corrected on 2026-03-01 to
end on 2025-06-01; it owns runbook:shelf@v1 (in force 2025-01-01 to 2026-01-01) by a record
with no end. Tenant initrode: a team:shelving-ops of its own, whose record of svc:bin was
retracted for a reason initech must never read. user:ivy reads `internal` and `incident`,
user:eve `internal` only. Everything is recorded on 2026-02-01 but the retractions and the
correction (2026-03-01).
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import ingest_only
from test_team_side_ownership import (
    EVE,
    IVY,
    _ask,
    _claims,
    _node,
    _owns,
    _principal,
    _runbook,
    _source,
)

OPS = "team:shelving-ops"
RETRACTED_AT = "2026-03-01T09:00:00Z"
BIN = (
    f"{OPS} was recorded as the owner of svc:bin from 2025-01-01T00:00:00Z, open-ended; that "
    f"record was retracted at {RETRACTED_AT}: recorded in error"
)
# Over a period, the span leads the claim (`From A, open-ended (...): ...`).
BIN_SPANLESS = BIN.replace(" from 2025-01-01T00:00:00Z, open-ended", "")
HIDDEN = (
    f"{OPS} was recorded as the owner of alert:ShelfHidden from 2025-01-01T00:00:00Z, "
    f"open-ended; that record was retracted at {RETRACTED_AT}: hidden shelf reason"
)


def _key(team: str, owned: str) -> str:
    return f"OWNS|{team}|{owned}|2025-01-01"


def _bundles(folder: Path) -> list[Path]:
    internal, incident = ["internal"], ["internal", "incident"]
    start = "2025-01-01T00:00:00Z"
    initech = {
        "tenant": "initech",
        "sources": [
            _source("src:catalog", "service_catalog"),
            _source("src:wiki", "wiki"),
            _source("src:iam", "identity"),
        ],
        "principals": [
            _principal("user:ivy", ["internal", "incident"]),
            _principal("user:eve", ["internal"]),
        ],
        "nodes": [
            _node(OPS, "Team", "Shelving Ops", internal),
            *(_node(f"svc:{s}", "Service", s, internal) for s in ("shelf", "bin", "crate")),
            _node("alert:ShelfHidden", "Alert", "ShelfHidden", internal),
        ],
        "documents": [_runbook(1, start, "2026-01-01T00:00:00Z")],
        "edges": [
            _owns(OPS, "svc:shelf", start, internal),
            _owns(OPS, "svc:bin", start, internal),
            _owns(OPS, "svc:crate", start, internal),
            _owns(OPS, "alert:ShelfHidden", start, incident),
            # No end recorded: the version's own end (2026-01-01) bounds it.
            _owns(OPS, "runbook:shelf@v1", start, internal),
        ],
    }
    corrected = _owns(OPS, "svc:crate", start, internal)
    corrected.update(valid_to="2025-06-01T00:00:00Z", recorded_at=RETRACTED_AT)
    correction = {
        "tenant": "initech",
        "sources": [_source("src:catalog", "service_catalog")],
        "edges": [corrected],
    }
    retractions = {
        "tenant": "initech",
        "retractions": [
            {"key": _key(OPS, "svc:bin"), "reason": "recorded in error", "at": RETRACTED_AT},
            {
                "key": _key(OPS, "alert:ShelfHidden"),
                "reason": "hidden shelf reason",
                "at": RETRACTED_AT,
            },
        ],
    }
    initrode = {
        "tenant": "initrode",
        "sources": [_source("src:catalog", "service_catalog"), _source("src:iam", "identity")],
        "principals": [_principal("user:eve", ["internal"])],
        "nodes": [
            _node(OPS, "Team", "Shelving Ops", internal),
            _node("svc:bin", "Service", "bin", internal),
        ],
        "edges": [_owns(OPS, "svc:bin", start, internal)],
    }
    initrode_retraction = {
        "tenant": "initrode",
        "retractions": [
            {"key": _key(OPS, "svc:bin"), "reason": "initrode-only reason", "at": RETRACTED_AT}
        ],
    }
    paths = []
    for name, bundle in (
        ("initech.json", initech),
        ("initech-correction.json", correction),
        ("initech-retractions.json", retractions),
        ("initrode.json", initrode),
        ("initrode-retraction.json", initrode_retraction),
    ):
        path = folder / name
        path.write_text(json.dumps(bundle))
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def retracted(driver: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> neo4j.Driver:
    return ingest_only(driver, _bundles(tmp_path_factory.mktemp("retracted")))


def _retraction_claims(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return sorted(c for c in _claims(doc) if "was retracted at" in c)


# 1. A team-side answer names the team's records retracted at the time asked, as the service
# side does, without the service side's "no owner of svc:x is recorded" (the team side did
# not read the service's other owners). Before, nothing was said of them.
def test_a_team_side_answer_names_its_retracted_records(  # type: ignore[no-untyped-def]
    retracted: neo4j.Driver, cli_env, invoke
) -> None:
    doc = _ask(invoke, "What did team:shelving-ops own on 2025-09-01?", *IVY)
    told = _retraction_claims(doc)
    assert [c.split("): ", 1)[1] for c in told] == [HIDDEN, BIN], told
    assert all(c.startswith("At the time named in the question, 2025-09-01") for c in told)
    assert not any("no owner of" in c for c in told)
    # Bound to the tombstones, which the pack carries as retracted records.
    claim = next(c for c in doc["claims"] if c["statement"] in told and "svc:bin" in c["statement"])
    cited = [e for e in doc["evidence"] if e["evidence_id"] in claim["evidence_ids"]]
    assert [e["status"] for e in cited] == ["retracted"]


def test_a_retraction_the_subject_may_not_read_is_not_told(  # type: ignore[no-untyped-def]
    retracted: neo4j.Driver, cli_env, invoke
) -> None:
    doc = _ask(invoke, "What did team:shelving-ops own on 2025-09-01?", *EVE)
    assert [c.split("): ", 1)[1] for c in _retraction_claims(doc)] == [BIN]
    assert "ShelfHidden" not in doc["_out"] and "hidden shelf reason" not in doc["_out"]


def test_another_tenants_team_of_the_same_id_is_not_told(  # type: ignore[no-untyped-def]
    retracted: neo4j.Driver, cli_env, invoke
) -> None:
    for flags in (IVY, EVE, ["--subject", "initrode/user:eve"]):
        doc = _ask(invoke, "What did team:shelving-ops own on 2025-09-01?", *flags)
        told = _retraction_claims(doc)
        if flags[1].startswith("initrode"):
            # initrode's own team: its own retraction, told to its own reader only.
            assert [c.split("): ", 1)[1] for c in told] == [
                BIN.replace("recorded in error", "initrode-only reason")
            ], told
            assert "recorded in error" not in doc["_out"]
        else:
            assert "initrode-only reason" not in doc["_out"]


# Over a period: the retraction and the correction of the team's records in it; the
# correction says the team no longer owned it, not that no one did.
def test_a_team_side_period_names_retractions_and_corrections(  # type: ignore[no-untyped-def]
    retracted: neo4j.Driver, cli_env, invoke
) -> None:
    doc = _ask(
        invoke, "Which services did team:shelving-ops own between 2025-03-01 and 2025-09-01?", *IVY
    )
    claims = _claims(doc)
    assert any(
        c.startswith("From 2025-01-01T00:00:00Z, open-ended (") and c.endswith(BIN_SPANLESS)
        for c in claims
    ), claims
    corrected = [c for c in claims if "the owner of svc:crate was corrected at" in c]
    assert corrected == [
        "From 2025-06-01T00:00:00Z to 2026-03-01T09:00:00Z the owner of svc:crate was corrected "
        f"at {RETRACTED_AT}: recorded as {OPS} until then, not {OPS} since (asked with "
        f"a known_at before the correction, the answer is {OPS})"
    ], claims


# 2. "What did X own over time?" is a history (before: only "owned ... over time" was).
def test_own_over_time_is_a_history(retracted: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _ask(invoke, "What did team:shelving-ops own over time?", *IVY)
    claims = _claims(doc)
    # Stated over the whole history, not at as_of: the corrected record of svc:crate, which
    # ended in 2025, and the runbook version superseded on 2026-01-01 are told.
    assert any("svc:crate" in c and "OWNS" not in c.split(":", 1)[0] for c in claims), claims
    assert any(c.endswith(f"{OPS} OWNS svc:crate") for c in claims), claims
    assert any(c.endswith(BIN_SPANLESS) for c in claims), claims


# 3. The owners of a runbook version, asked from its side (`owners_of`), are not stated after
# the version's end (before: the record with no end was stated at any later time).
def test_a_runbook_versions_owner_is_not_stated_after_the_version(  # type: ignore[no-untyped-def]
    retracted: neo4j.Driver, cli_env, invoke
) -> None:
    after = _ask(invoke, "Who owned runbook:shelf@v1 on 2026-06-01?", *IVY)
    assert not any(f"{OPS} OWNS runbook:shelf@v1" in c for c in _claims(after)), _claims(after)
    during = _ask(invoke, "Who owned runbook:shelf@v1 on 2025-06-01?", *IVY)
    assert any(
        f"{OPS} OWNS runbook:shelf@v1" in c and "in force until 2026-01-01T00:00:00Z" in c
        for c in _claims(during)
    ), _claims(during)
