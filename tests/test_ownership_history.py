"""Owners over a period and the history of ownership, as an investigator asks after the fact
(real Neo4j, our own fixture `tests/fixtures/ownership-history`, tenant initech).

svc:tps-report: team:alpha, then team:beta from 2026-11-10 (recorded 2026-11-01), beta's end
on 2026-11-20 and team:gamma from then (recorded 2026-11-19, before the handover: no
correction), then a correction recorded 2026-12-01: alpha until 2026-11-12, beta from then.
Before, "between A and B" stated only the owners at both ends (team:beta, the owner for 8 of
the 13 days, was `rejected_temporal`) and a history question only today's owner, both
`complete`; no answer said that the owner of 2026-11-10 to 2026-11-12 had been corrected.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import neo4j
import pytest
from conftest import wipe
from test_serving_mcp import server_env

__all__ = ["server_env"]  # a module fixture, used by name

FIXTURE = Path(__file__).parent / "fixtures" / "ownership-history"
IVY = ["--subject", "initech/user:ivy"]
TPS = ["--service", "svc:tps-report"]
BEFORE_CORRECTION = "2026-11-30T00:00:00Z"
PERIOD = "Who owned tps-report between 2026-11-09 and 2026-11-21?"
CORRECTION = (
    "From 2026-11-10T00:00:00Z to 2026-11-12T00:00:00Z the owner of svc:tps-report was "
    "corrected at 2026-12-01T09:00:00Z: recorded as team:beta until then, team:alpha since "
    "(asked with a known_at before the correction, the answer is team:beta)"
)


@pytest.fixture(scope="module")
def initech(driver: neo4j.Driver) -> neo4j.Driver:
    """The three bundles ingested one after the other, as their recorded times say."""
    from graph_schema.bundle import load_bundle
    from graph_schema.schema_ddl import apply_schema
    from graph_schema.writer import ingest_bundle

    wipe(driver)
    apply_schema(driver)
    for name in ("10-catalog.yaml", "20-handover.yaml", "30-correction.yaml"):
        ingest_bundle(driver, load_bundle(FIXTURE / name))
    driver.execute_query("CALL db.awaitIndexes(300)")
    return driver


def _ask(invoke, question: str, *flags: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("investigate", question, *IVY, *flags, "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def _claims(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


def _rejected_owners(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [r["candidate_id"] for r in doc["rejected"] if str(r["candidate_id"]).startswith("OWNS")]


def test_a_period_states_every_owner_in_it(initech: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # As first recorded: beta from 11-10 to 11-20 sits between the two ends.
    doc = _ask(invoke, PERIOD, *TPS, "--known-at", BEFORE_CORRECTION)
    says = (
        "(the question says 'between 2026-11-09 and 2026-11-21': 2026-11-09T00:00:00Z to "
        "2026-11-21T23:59:59Z)"
    )
    assert _claims(doc) == [
        f"From 2025-01-01T00:00:00Z to 2026-11-10T00:00:00Z {says}: team:alpha OWNS svc:tps-report",
        f"From 2026-11-10T00:00:00Z to 2026-11-20T00:00:00Z {says}: team:beta OWNS svc:tps-report",
        f"From 2026-11-20T00:00:00Z, still at as_of, {doc['as_of'].replace('+00:00', 'Z')} "
        f"{says}: team:gamma OWNS svc:tps-report",
    ], _claims(doc)
    assert doc["status"] == "complete"
    assert _rejected_owners(doc) == []
    # Known now: the corrected intervals, and the correction said.
    doc = _ask(invoke, PERIOD, *TPS)
    assert (
        f"From 2026-11-12T00:00:00Z to 2026-11-20T00:00:00Z {says}: team:beta OWNS svc:tps-report"
        in _claims(doc)
    )
    assert (
        f"From 2025-01-01T00:00:00Z to 2026-11-12T00:00:00Z {says}: team:alpha OWNS svc:tps-report"
        in _claims(doc)
    )
    assert CORRECTION in _claims(doc), _claims(doc)


def test_a_period_inside_one_owner_names_only_that_owner(  # type: ignore[no-untyped-def]
    initech: neo4j.Driver, cli_env, invoke
) -> None:
    doc = _ask(invoke, "Who owned tps-report between 2026-11-13 and 2026-11-15?", *TPS)
    as_of = doc["as_of"].replace("+00:00", "Z")
    assert _claims(doc) == [
        # Today's owner, after the period, is said as at any time: at as_of, labelled.
        f"At as_of, {as_of}: team:gamma OWNS svc:tps-report (valid 2026-11-20T00:00:00Z to open)",
        # The correction was about 11-10 to 11-12, outside the period asked: not said.
        "From 2026-11-12T00:00:00Z to 2026-11-20T00:00:00Z (the question says 'between "
        "2026-11-13 and 2026-11-15': 2026-11-13T00:00:00Z to 2026-11-15T23:59:59Z): team:beta "
        "OWNS svc:tps-report",
    ], _claims(doc)


@pytest.mark.parametrize(
    ("question", "words"),
    [
        (
            "How did ownership of tps-report change over time?",
            "How did ownership of tps-report change",
        ),
        ("Show the ownership history of tps-report", "ownership history"),
    ],
)
def test_the_ownership_history_and_its_correction(  # type: ignore[no-untyped-def]
    initech: neo4j.Driver, cli_env, invoke, question: str, words: str
) -> None:
    result = invoke("investigate", question, *IVY, *TPS)
    assert result.code == 0, result
    says = f"(the question says {words!r})"
    # In time order, the correction at the span it changed; in the text report as in --json.
    owners = [
        f"From 2025-01-01T00:00:00Z to 2026-11-12T00:00:00Z {says}: team:alpha OWNS svc:tps-report",
        CORRECTION,
        f"From 2026-11-12T00:00:00Z to 2026-11-20T00:00:00Z {says}: team:beta OWNS svc:tps-report",
    ]
    for line in owners:
        assert line in result.out, result.out
    assert "From 2026-11-20T00:00:00Z, still at as_of, " in result.out
    doc = _ask(invoke, question, *TPS)
    assert _claims(doc)[:3] == owners, _claims(doc)
    assert _claims(doc)[3].endswith(f"{says}: team:gamma OWNS svc:tps-report")
    assert doc["status"] == "complete"
    assert _rejected_owners(doc) == []
    # The older records were read in one call, whatever the number of edges (before: one
    # `version_history` call per superseded edge), which a replay re-runs.
    reads = [t for t in _templates(doc) if t in ("ownership_records", "version_history")]
    assert reads == ["ownership_records"], _templates(doc)
    replay = invoke("replay", doc["run_id"], *IVY, "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["verified"] is True


def test_the_history_as_known_before_the_correction(initech: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # beta's end recorded the day before the handover is a new record, but no correction.
    doc = _ask(
        invoke, "Show the ownership history of tps-report", *TPS, "--known-at", BEFORE_CORRECTION
    )
    owners = _claims(doc)
    assert len(owners) == 3, owners
    assert owners[1] == (
        "From 2026-11-10T00:00:00Z to 2026-11-20T00:00:00Z (the question says 'ownership "
        "history'): team:beta OWNS svc:tps-report"
    )
    assert not any("corrected" in c for c in owners), owners


def test_the_history_up_to_as_of(initech: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _ask(
        invoke, "Show the ownership history of tps-report", *TPS, "--as-of", "2026-11-15T00:00:00Z"
    )
    assert [c.rsplit(": ", 1)[-1] for c in _claims(doc) if "OWNS" in c] == [
        "team:alpha OWNS svc:tps-report",
        "team:beta OWNS svc:tps-report",
    ], _claims(doc)
    # gamma's record starts after as_of: not yet an owner, so not in the history.


def test_a_long_history_lists_every_owner(initech: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # Six records: more than the five items the gate keeps per evidence type elsewhere.
    doc = _ask(invoke, "Which teams have owned stapler?", "--service", "svc:stapler")
    owners = [c.split(": ", 1)[-1] for c in _claims(doc)]
    assert owners == [
        "team:alpha OWNS svc:stapler",
        "team:beta OWNS svc:stapler",
        "team:gamma OWNS svc:stapler",
        "team:alpha OWNS svc:stapler",
        "team:beta OWNS svc:stapler",
        "team:gamma OWNS svc:stapler",
    ], _claims(doc)
    assert _rejected_owners(doc) == []


def test_one_owner_at_one_time_is_unchanged(initech: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # No period, no history asked: the owner at the time named, and today's, as before.
    doc = _ask(invoke, "Who owned tps-report on 2026-11-15?", *TPS)
    assert _claims(doc) == [
        f"At as_of, {doc['as_of'].replace('+00:00', 'Z')}: team:gamma OWNS svc:tps-report "
        "(valid 2026-11-20T00:00:00Z to open)",
        "At the time named in the question, 2026-11-15T00:00:00Z (explicit, a day: its start, "
        "00:00 UTC): team:beta OWNS svc:tps-report (valid 2026-11-12T00:00:00Z to "
        "2026-11-20T00:00:00Z)",
    ], _claims(doc)


def test_versions_of_one_runbook_are_no_tie(initech: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # v1 is the version in force at 10:03 and v2 is rejected as out of time on the same card:
    # before, the card also said "2 runbooks named 'tps-recovery' fit alike ... the card shows
    # the first: name the one you mean with --alert ID".
    result = invoke("runbook", "tps recovery", "--as-of", "2026-11-11T10:03:00Z", *IVY)
    assert result.code == 0, result
    assert "Runbook   TPS recovery runbook v1  [runbook:tps-recovery@v1, v1, trusted]" in result.out
    assert "runbook:tps-recovery@v2 (v2): rejected_temporal" in result.out
    assert "alike" not in result.out, result.out
    doc = json.loads(
        invoke("runbook", "tps recovery", "--as-of", "2026-11-11T10:03:00Z", *IVY, "--json").out
    )
    assert doc["runbook"]["id"] == "runbook:tps-recovery@v1"
    assert not doc.get("note"), doc.get("note")


# svc:binder handed on every month from 2021-01 on: 55 OWNS records, more than the 50 one
# read of the owners holds (the template's row cap).
BINDER_RECORDS = 55


def _binder_bundle(folder: Path) -> Path:
    """Our own bundle of svc:binder's 55 owners (alpha, beta, gamma in turn), written here."""
    months = [f"{2021 + m // 12}-{m % 12 + 1:02d}-01T00:00:00Z" for m in range(BINDER_RECORDS + 1)]
    teams = ["team:alpha", "team:beta", "team:gamma"]
    edges = [
        {
            "type": "OWNS",
            "from": teams[m % 3],
            "to": "svc:binder",
            "key": f"OWNS|{teams[m % 3]}|svc:binder|{months[m][:10]}",
            "acl": ["internal"],
            "source_id": "src:catalog",
            "source_version": "cat@5",
            "locator": f"catalog#binder-{m}",
            "valid_from": months[m],
            **({"valid_to": months[m + 1]} if m < BINDER_RECORDS - 1 else {}),
            "recorded_at": "2026-11-02T09:00:00Z",
        }
        for m in range(BINDER_RECORDS)
    ]
    service = {
        "id": "svc:binder",
        "label": "Service",
        "name": "binder",
        "acl": ["internal"],
        "source_id": "src:catalog",
        "source_version": "cat@5",
        "locator": "catalog#svc:binder",
        "valid_from": "2021-01-01T00:00:00Z",
        "recorded_at": "2026-11-02T09:00:00Z",
    }
    path = folder / "binder.yaml"
    path.write_text(json.dumps({"tenant": "initech", "nodes": [service], "edges": edges}))
    return path


@pytest.fixture(scope="module")
def binder(initech: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> neo4j.Driver:
    from graph_schema.bundle import load_bundle
    from graph_schema.writer import ingest_bundle

    ingest_bundle(initech, load_bundle(_binder_bundle(tmp_path_factory.mktemp("binder"))))
    initech.execute_query("CALL db.awaitIndexes(300)")
    return initech


def test_a_history_longer_than_one_read_says_where_it_was_cut(  # type: ignore[no-untyped-def]
    binder: neo4j.Driver, cli_env, invoke
) -> None:
    # Before: the first 50 records by start were read and the run said `complete`, today's
    # owner (from 2025-07-01) and the four before it left out without a word.
    doc = _ask(invoke, "Show the ownership history of binder", "--service", "svc:binder")
    owners = [c for c in _claims(doc) if c.endswith("OWNS svc:binder")]
    assert len(owners) == 50, _claims(doc)
    # The newest 50: today's owner among them, the five oldest not.
    assert any(c.startswith("From 2025-07-01T00:00:00Z, still at as_of") for c in owners), owners
    assert not any(c.startswith("From 2021-05-01T00:00:00Z ") for c in owners), owners
    assert doc["status"] == "partial"
    cut = [m["description"] for m in doc["missing_evidence"] if m["evidence_type"] == "ownership"]
    assert cut == [
        "the owners of svc:binder in the period are more than the 50 records read at once "
        "(newest first): the history is cut at 2021-06-01T00:00:00Z, and owners before then "
        "may be missing; ask for the rest with the same question with --as-of "
        "2021-06-01T00:00:00Z"
    ], doc["missing_evidence"]
    # Asked as the gap says: the rest of the history, whole.
    doc = _ask(
        invoke,
        "Show the ownership history of binder",
        "--service",
        "svc:binder",
        "--as-of",
        "2021-06-01T00:00:00Z",
    )
    starts = [c.split(" ", 2)[1] for c in _claims(doc) if c.endswith("OWNS svc:binder")]
    assert starts == [f"2021-{m:02d}-01T00:00:00Z" for m in range(1, 7)], _claims(doc)
    assert doc["status"] == "complete", doc["missing_evidence"]


def test_a_period_longer_than_one_read_says_where_it_was_cut(  # type: ignore[no-untyped-def]
    binder: neo4j.Driver, cli_env, invoke
) -> None:
    doc = _ask(
        invoke, "Who owned binder between 2020-06-01 and 2025-12-31?", "--service", "svc:binder"
    )
    assert doc["status"] == "partial"
    cut = [m["description"] for m in doc["missing_evidence"] if m["evidence_type"] == "ownership"]
    assert len(cut) == 1 and cut[0].endswith(
        "ask for the rest with 'between 2020-06-01T00:00:00Z and 2021-06-01T00:00:00Z'"
    ), cut


def _templates(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [str(c["template"]).split("@")[0] for c in doc["tool_calls"]]


AT_INCIDENT = (
    "the owner of svc:tps-report was corrected at 2026-12-01T09:00:00Z: recorded as team:beta "
    "until then, team:alpha since (asked with a known_at before the correction, the answer is "
    "team:beta)"
)


def test_one_time_says_its_owner_was_corrected(initech: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # Before, the answer named team:alpha and nothing else: what an answer given before
    # 2026-12-01 said (team:beta) was nowhere. One more read, of every OWNS record.
    doc = _ask(invoke, "Who owned tps-report at 2026-11-11T10:00Z?", *TPS)
    claims = _claims(doc)
    assert (
        "At the time named in the question, 2026-11-11T10:00:00Z (explicit): team:alpha OWNS "
        "svc:tps-report (valid 2025-01-01T00:00:00Z to 2026-11-12T00:00:00Z)"
    ) in claims, claims
    assert (
        f"At the time named in the question, 2026-11-11T10:00:00Z (explicit): {AT_INCIDENT}"
    ) in claims, claims
    assert _templates(doc).count("ownership_records") == 1, _templates(doc)
    # The read is recorded like any other: a replay re-runs it and gives the same answer.
    replay = invoke("replay", doc["run_id"], *IVY, "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["verified"] is True


def test_one_time_known_before_the_correction(initech: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # Asked as known before the correction: team:beta, and no correction (none was known).
    doc = _ask(
        invoke, "Who owned tps-report at 2026-11-11T10:00Z?", *TPS, "--known-at", BEFORE_CORRECTION
    )
    claims = _claims(doc)
    assert not [c for c in claims if "corrected" in c], claims
    assert any("team:beta OWNS svc:tps-report" in c and "2026-11-11T10:00:00Z" in c for c in claims)


def test_no_superseded_owner_record_no_more_reads(initech: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # svc:stapler's OWNS records were never superseded: no correction can be, no more read.
    doc = _ask(invoke, "Who owned stapler on 2025-04-01?", "--service", "svc:stapler")
    assert "ownership_records" not in _templates(doc), _templates(doc)
    assert not [c for c in _claims(doc) if "corrected" in c], _claims(doc)


def test_then_says_its_owner_was_corrected(initech: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # "Then" is the first TPS-500 error of 2026-11-11: team:alpha as known now, team:beta
    # as an answer given before the 2026-12-01 correction said.
    doc = _ask(
        invoke, "The TPS-500 errors of the 2026-11-11 incident: who owned tps-report then?", *TPS
    )
    then = "At the first TPS-500 error, 2026-11-11T10:02:00Z (the question says 'then')"
    assert f"{then}: {AT_INCIDENT}" in _claims(doc), _claims(doc)
    assert doc["status"] == "complete"


def test_a_handover_recorded_before_it_happens_costs_no_read(  # type: ignore[no-untyped-def]
    initech: neo4j.Driver, cli_env, invoke
) -> None:
    # beta's record was rewritten on 2026-11-19 (its end, the handover to gamma on the 20th),
    # before the 2026-11-25 asked: it can have changed nothing recorded for 11-25. Before,
    # any rewritten record cost the read of every record (and changed the pack hash) with
    # nothing to say.
    doc = _ask(invoke, "Who owned tps-report on 2026-11-25?", *TPS, "--known-at", BEFORE_CORRECTION)
    assert "ownership_records" not in _templates(doc), _templates(doc)
    assert [c.rsplit(": ", 1)[-1] for c in _claims(doc)] == [
        "team:gamma OWNS svc:tps-report (valid 2026-11-20T00:00:00Z to open)"
    ], _claims(doc)


# svc:copier: alpha, then delta (a record only `incident` readers see) from 2026-03-01 to
# 2026-06-01, retracted on 2026-07-10, then beta.
COPIER = ["--service", "svc:copier"]
EVE = ["--subject", "initech/user:eve"]
DELTA_KEY = "OWNS|team:delta|svc:copier|2026-03-01"
RETRACTED = (
    "team:delta was recorded as the owner of svc:copier{span}; that record was retracted at "
    "2026-07-10T08:00:00Z: recorded in error: delta never owned copier"
)


@pytest.fixture(scope="module")
def copier(initech: neo4j.Driver) -> neo4j.Driver:
    from graph_schema.bundle import load_bundle
    from graph_schema.writer import ingest_bundle

    for name in (
        "40-copier.yaml",
        "50-copier-retraction.yaml",
        "60-copier-error.yaml",
        "70-initrode-copier.yaml",
    ):
        ingest_bundle(initech, load_bundle(FIXTURE / name))
    initech.execute_query("CALL db.awaitIndexes(300)")
    return initech


def _tombstones(doc: dict) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    return [(e["element_id"], e["status"]) for e in doc["evidence"] if e["status"] != "active"]


def test_a_history_names_a_retracted_owner(copier: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # Before: the history went from alpha to beta as if nothing had been recorded between.
    doc = _ask(invoke, "Show the ownership history of copier", *COPIER)
    says = "(the question says 'ownership history')"
    retracted = f"From 2026-03-01T00:00:00Z to 2026-06-01T00:00:00Z {says}: " + RETRACTED.format(
        span=""
    )
    assert _claims(doc)[:3] == [
        f"From 2025-01-01T00:00:00Z to 2026-03-01T00:00:00Z {says}: team:alpha OWNS svc:copier",
        retracted,
        f"From 2026-06-01T00:00:00Z, still at as_of, {doc['as_of'].replace('+00:00', 'Z')} "
        f"{says}: team:beta OWNS svc:copier",
    ], _claims(doc)
    # A fact about the records, bound to the tombstone, which the pack carries as retracted.
    claim = next(c for c in doc["claims"] if c["statement"] == retracted)
    assert claim["epistemic_status"] == "fact"
    tombstone = next(e for e in doc["evidence"] if e["element_id"] == DELTA_KEY)
    assert tombstone["status"] == "retracted"
    assert claim["evidence_ids"] == [tombstone["evidence_id"]]
    assert _templates(doc).count("ownership_records") == 1, _templates(doc)
    replay = invoke("replay", doc["run_id"], *IVY, "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["verified"] is True
    # As known before the retraction, delta was the owner: no retraction is said.
    doc = _ask(
        invoke,
        "Show the ownership history of copier",
        *COPIER,
        "--known-at",
        "2026-07-01T00:00:00Z",
    )
    assert any(c.endswith(": team:delta OWNS svc:copier") for c in _claims(doc)), _claims(doc)
    assert not any("retracted" in c for c in _claims(doc)), _claims(doc)


def test_one_time_covered_only_by_a_retracted_record(copier: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # Before: only today's owner, and not a word about 2026-04-15.
    doc = _ask(invoke, "Who owned copier on 2026-04-15?", *COPIER)
    said = (
        "At the time named in the question, 2026-04-15T00:00:00Z (explicit, a day: its start, "
        "00:00 UTC): no owner of svc:copier is recorded: "
        + RETRACTED.format(span=" from 2026-03-01T00:00:00Z to 2026-06-01T00:00:00Z")
    )
    assert said in _claims(doc), _claims(doc)
    assert _tombstones(doc) == [(DELTA_KEY, "retracted")]
    assert not any("team:delta OWNS" in c for c in _claims(doc)), _claims(doc)
    # The text report marks the tombstone it lists as evidence: no current record.
    text = invoke("investigate", "Who owned copier on 2026-04-15?", *IVY, *COPIER)
    assert f"{DELTA_KEY}  (ownership)  retracted" in text.out, text.out
    replay = invoke("replay", doc["run_id"], *IVY, "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["verified"] is True


@pytest.mark.parametrize(
    "question", ["Show the ownership history of copier", "Who owned copier on 2026-04-15?"]
)
def test_a_retraction_stays_hidden_from_who_may_not_read_the_record(  # type: ignore[no-untyped-def]
    copier: neo4j.Driver, cli_env, invoke, question: str
) -> None:
    # The tombstone keeps the record's ACL: eve (no `incident`) learns nothing of delta.
    result = invoke("investigate", question, *EVE, *COPIER, "--json")
    assert result.code == 0, result
    assert "delta" not in result.out.lower(), result.out
    assert "retract" not in result.out.lower(), result.out
    text = invoke("investigate", question, *EVE, *COPIER)
    assert text.code == 0, text
    assert "delta" not in text.out.lower() and "retract" not in text.out.lower(), text.out


# A time asked at which no owner record the subject may read holds: before the first record,
# or in the months only delta's record covered (hidden from eve, retracted for ivy, never
# recorded in tenant initrode). Before, each was `complete` with today's owner alone.
ON_0415 = (
    "the time named in the question, 2026-04-15T00:00:00Z (explicit, a day: its start, 00:00 UTC)"
)
AT_ERROR = "the first COPY-500 error, 2026-04-15T10:00:00Z (the question says 'then')"
NO_OWNER = (
    "no owner of svc:copier is recorded at {at}, in the records this subject may read: who "
    "owned it then is not known (the owner stated is the owner at as_of, not then)"
)
UNOWNED = [
    ("Who owned copier on 2026-04-15?", [], ON_0415),
    (
        "Who owned copier on 2024-06-01?",
        [],
        "the time named in the question, 2024-06-01T00:00:00Z (explicit, a day: its start, "
        "00:00 UTC)",
    ),
    ("Who owned copier then?", [], AT_ERROR),
    ("Who owned copier then?", ["--as-of", "2026-12-01T00:00:00Z"], AT_ERROR),
]
SUBJECTS = ["initech/user:eve", "initrode/user:eve", "initech/user:ivy"]


def _gaps(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [m["description"] for m in doc["missing_evidence"] if m["required"]]


@pytest.mark.parametrize("subject", SUBJECTS)
@pytest.mark.parametrize(("question", "flags", "at"), UNOWNED)
def test_a_time_with_no_owner_recorded_is_not_complete(  # type: ignore[no-untyped-def]
    copier: neo4j.Driver, cli_env, invoke, subject: str, question: str, flags: list[str], at: str
) -> None:
    result = invoke("investigate", question, "--subject", subject, *COPIER, *flags, "--json")
    assert result.code == 0, result
    doc = json.loads(result.out)
    assert doc["status"] == "partial", doc["status"]
    # The loop had no step left that could read the owner then (before: evidence_sufficient).
    assert doc["stop_reason"] == "no_progress", doc["stop_reason"]
    assert _gaps(doc) == [NO_OWNER.format(at=at)], doc["missing_evidence"]
    # Today's owner is stated as the owner at as_of, never as the owner then.
    as_of = doc["as_of"].replace("+00:00", "Z")
    owners = [c for c in _claims(doc) if "OWNS svc:copier" in c]
    assert owners == [
        f"At as_of, {as_of}: team:beta OWNS svc:copier (valid 2026-06-01T00:00:00Z to open)"
    ], _claims(doc)
    text = invoke("investigate", question, "--subject", subject, *COPIER, *flags)
    assert text.code == 0, text
    assert "Status     partial  (stop: no_progress" in text.out, text.out
    assert f"ownership (required): {NO_OWNER.format(at=at)}" in text.out, text.out


@pytest.mark.parametrize("subject", SUBJECTS)
@pytest.mark.parametrize(
    ("question", "at"),
    [
        ("Who owned copier at 2026-06-01T00:00:00Z?", "2026-06-01T00:00:00Z (explicit)"),
        (
            "Who owned copier on 2026-07-01?",
            "2026-07-01T00:00:00Z (explicit, a day: its start, 00:00 UTC)",
        ),
    ],
)
def test_at_and_after_a_handover_the_owner_then_is_complete(  # type: ignore[no-untyped-def]
    copier: neo4j.Driver, cli_env, invoke, subject: str, question: str, at: str
) -> None:
    result = invoke("investigate", question, "--subject", subject, *COPIER, "--json")
    assert result.code == 0, result
    doc = json.loads(result.out)
    assert doc["status"] == "complete", doc["missing_evidence"]
    assert doc["stop_reason"] == "evidence_sufficient"
    assert _gaps(doc) == []
    assert any(
        c.startswith(f"At the time named in the question, {at} and at as_of")
        and c.endswith(": team:beta OWNS svc:copier (valid 2026-06-01T00:00:00Z to open)")
        for c in _claims(doc)
    ), _claims(doc)


def _as_told(doc: dict) -> dict:  # type: ignore[type-arg]
    """What a run says about copier and how it read it, whatever the tenant."""
    return {
        "status": doc["status"],
        "rounds": doc["rounds"],
        "claims": _claims(doc),
        "missing": doc["missing_evidence"],
        "evidence": [(e["element_id"], e["status"], e["evidence_id"]) for e in doc["evidence"]],
        # initech holds other services (tps-report's runbooks, incident): only copier's.
        "rejected": [
            (r["element_id"], r["reason"])
            for r in doc["rejected"]
            if "copier" in str(r["element_id"]).lower() or "COPY" in str(r["element_id"])
        ],
        # The text search reads initech's runbooks too; rows_hash differs by tenant.
        "reads": [
            (c["template"], c["params"], c["row_count"])
            for c in doc["tool_calls"]
            if not c["template"].startswith("fulltext_search")
        ],
    }


@pytest.mark.parametrize(
    ("question", "flags"),
    [
        *((q, f) for q, f, _ in UNOWNED),
        ("Who owned copier on 2026-07-01?", []),
        ("Show the ownership history of copier", []),
    ],
)
def test_eve_is_told_what_she_would_be_if_the_hidden_record_never_existed(  # type: ignore[no-untyped-def]
    copier: neo4j.Driver, cli_env, invoke, question: str, flags: list[str]
) -> None:
    # Same KG knowledge but for delta's record (hidden from eve in initech, never recorded
    # in initrode), same inputs: the same answer, word for word.
    times = ["--as-of", "2026-12-01T00:00:00Z", "--known-at", "2026-12-02T00:00:00Z"]
    told = []
    for tenant in ("initech", "initrode"):
        result = invoke(
            "investigate",
            question,
            "--subject",
            f"{tenant}/user:eve",
            *COPIER,
            *(flags or times[:2]),
            *times[2:],
            "--json",
        )
        assert result.code == 0, result
        told.append(_as_told(json.loads(result.out)))
    assert told[0] == told[1]


# The owners of an alert and of a runbook version (`owners_of`), asked after the fact:
# alert:CopierJam as svc:copier (alpha, delta's record retracted and hidden from eve, beta
# from 2026-06-01; never delta in initrode), runbook:copier-jam@v1 gamma's from 2026-02-01
# until a correction recorded 2026-09-01 made it beta's from 2026-05-01. Before, each answer
# was `complete` with the owner at as_of alone: no gap, no retraction, no correction.
JAM = "alert:CopierJam"
RUNBOOK = "runbook:copier-jam@v1"
JAM_DELTA = "OWNS|team:delta|alert:CopierJam|2026-03-01"
JAM_RETRACTED = (
    "team:delta was recorded as the owner of alert:CopierJam from 2026-03-01T00:00:00Z to "
    "2026-06-01T00:00:00Z; that record was retracted at 2026-07-10T08:00:00Z: recorded in "
    "error: delta never owned CopierJam"
)


# The history and the owners over a period of an alert or a runbook version (`owners_of`),
# as a service's. Before, neither read the records of their OWNS edges: delta's retracted
# record of CopierJam was not named and the runbook's correction of 2026-09-01 not said.
JAM_HISTORY = [
    ("Show the ownership history of alert:CopierJam", ["--as-of", "2026-12-01T00:00:00Z"]),
    # Starts before the first record, spans delta's months (a gap to eve) and the handover
    # to beta, ends after as_of.
    (
        "Who owned the CopierJam alert between 2024-06-01 and 2026-12-20?",
        ["--as-of", "2026-12-01T00:00:00Z"],
    ),
    # No --as-of, with "then" (the whole history up to now).
    ("How did ownership of the CopierJam alert change over time, and who owned it then?", []),
]


@pytest.fixture(scope="module")
def jam(copier: neo4j.Driver) -> neo4j.Driver:
    from graph_schema.bundle import load_bundle
    from graph_schema.writer import ingest_bundle

    for name in (
        "80-copier-jam.yaml",
        "85-copier-jam-retraction.yaml",
        "86-copier-jam-correction.yaml",
        "90-initrode-copier-jam.yaml",
    ):
        ingest_bundle(copier, load_bundle(FIXTURE / name))
    copier.execute_query("CALL db.awaitIndexes(300)")
    return copier


def _no_owner(owned: str, at: str) -> str:
    return NO_OWNER.replace("svc:copier", owned).format(at=at)


JAM_UNOWNED = [
    ("Who owned the CopierJam alert on 2026-04-15?", [], JAM, ON_0415),
    (
        "Who owned the CopierJam alert on 2024-06-01?",
        [],
        JAM,
        "the time named in the question, 2024-06-01T00:00:00Z (explicit, a day: its start, "
        "00:00 UTC)",
    ),
    (
        f"Who owned {RUNBOOK} on 2026-01-15?",
        [],
        RUNBOOK,
        "the time named in the question, 2026-01-15T00:00:00Z (explicit, a day: its start, "
        "00:00 UTC)",
    ),
]


@pytest.mark.parametrize("subject", SUBJECTS[::2])
@pytest.mark.parametrize(("question", "flags", "owned", "at"), JAM_UNOWNED)
def test_an_alert_or_runbook_with_no_owner_recorded_then_is_not_complete(  # type: ignore[no-untyped-def]
    jam: neo4j.Driver,
    cli_env,
    invoke,
    subject: str,
    question: str,
    flags: list[str],
    owned: str,
    at: str,
) -> None:
    result = invoke("investigate", question, "--subject", subject, *flags, "--json")
    assert result.code == 0, result
    doc = json.loads(result.out)
    assert (doc["status"], doc["stop_reason"]) == ("partial", "no_progress")
    # The alert fired on copier: its service's owner is read (and told) too.
    assert _no_owner(owned, at) in _gaps(doc), doc["missing_evidence"]
    as_of = doc["as_of"].replace("+00:00", "Z")
    owners = [c for c in _claims(doc) if f"OWNS {owned}" in c]
    assert len(owners) == 1 and owners[0].startswith(f"At as_of, {as_of}: team:beta OWNS"), owners
    text = invoke("investigate", question, "--subject", subject, *flags)
    assert "Status     partial  (stop: no_progress" in text.out, text.out
    assert f"ownership (required): {_no_owner(owned, at)}" in text.out, text.out


@pytest.mark.parametrize("flags", [[], ["--as-of", "2026-12-01T00:00:00Z"]])
def test_an_alert_then_names_its_retracted_owner_to_who_may_read_it(  # type: ignore[no-untyped-def]
    jam: neo4j.Driver, cli_env, invoke, flags: list[str]
) -> None:
    # "then": CopierJam fired with copier's first COPY-500 error, in delta's months.
    question = "Who owned the CopierJam alert then?"
    doc = _ask(invoke, question, *flags)
    said = f"At {AT_ERROR}: no owner of {JAM} is recorded: {JAM_RETRACTED}"
    assert said in _claims(doc), _claims(doc)
    assert (JAM_DELTA, "retracted") in _tombstones(doc)
    assert _no_owner(JAM, AT_ERROR) in _gaps(doc), doc["missing_evidence"]
    assert "owners_of_records" in _templates(doc), _templates(doc)
    replay = invoke("replay", doc["run_id"], *IVY, "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["verified"] is True
    # eve may not read delta's record: the gap alone, not a word of delta or a retraction.
    result = invoke("investigate", question, *EVE, *flags, "--json")
    assert result.code == 0, result
    assert _no_owner(JAM, AT_ERROR) in _gaps(json.loads(result.out)), result.out
    assert "delta" not in result.out.lower() and "retract" not in result.out.lower()


@pytest.mark.parametrize(
    "question",
    [
        "Who owned the CopierJam alert at 2026-06-01T00:00:00Z?",
        "Who owned the CopierJam alert on 2026-07-01?",
    ],
)
def test_an_alert_at_and_after_its_handover_is_complete(  # type: ignore[no-untyped-def]
    jam: neo4j.Driver, cli_env, invoke, question: str
) -> None:
    doc = _ask(invoke, question)
    assert (doc["status"], doc["stop_reason"]) == ("complete", "evidence_sufficient")
    assert any(
        c.startswith("At the time named in the question, 2026-")
        and c.endswith(f": team:beta OWNS {JAM} (valid 2026-06-01T00:00:00Z to open)")
        for c in _claims(doc)
    ), _claims(doc)


def test_a_runbook_says_its_owner_was_corrected(jam: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    question = f"Who owned {RUNBOOK} on 2026-07-01?"
    doc = _ask(invoke, question)
    at = (
        "the time named in the question, 2026-07-01T00:00:00Z (explicit, a day: its start, "
        "00:00 UTC)"
    )
    assert (
        f"At {at}: the owner of {RUNBOOK} was corrected at 2026-09-01T09:00:00Z: recorded as "
        "team:gamma until then, team:beta since (asked with a known_at before the correction, "
        "the answer is team:gamma)"
    ) in _claims(doc), _claims(doc)
    assert doc["status"] == "complete"
    # As known before the correction: gamma then, and no correction said.
    doc = _ask(invoke, question, "--known-at", "2026-08-01T00:00:00Z")
    assert any(f"team:gamma OWNS {RUNBOOK}" in c for c in _claims(doc)), _claims(doc)
    assert not any("corrected" in c for c in _claims(doc)), _claims(doc)


@pytest.mark.parametrize(
    "question",
    [
        "Who owned the CopierJam alert on 2026-04-15?",
        "Who owned the CopierJam alert then?",
        "Who owned the CopierJam alert on 2026-07-01?",
        *(q for q, _ in JAM_HISTORY),
    ],
)
def test_eve_is_told_of_the_alert_what_she_would_be_if_the_hidden_record_never_existed(  # type: ignore[no-untyped-def]
    jam: neo4j.Driver, cli_env, invoke, question: str
) -> None:
    told = []
    for tenant in ("initech", "initrode"):
        result = invoke(
            "investigate",
            question,
            "--subject",
            f"{tenant}/user:eve",
            "--as-of",
            "2026-12-01T00:00:00Z",
            "--known-at",
            "2026-12-02T00:00:00Z",
            "--json",
        )
        assert result.code == 0, result
        told.append(_as_told(json.loads(result.out)))
    assert told[0] == told[1]


def _span_says(doc: dict) -> str:  # type: ignore[type-arg]
    """The `(the question says ...)` of the history's first alert owner claim."""
    first = next(c for c in _claims(doc) if c.endswith(f"team:alpha OWNS {JAM}"))
    return first.split(": team:alpha OWNS", 1)[0].removeprefix(
        "From 2025-01-01T00:00:00Z to 2026-03-01T00:00:00Z "
    )


@pytest.mark.parametrize(("question", "flags"), JAM_HISTORY)
def test_an_alert_history_names_its_retracted_owner(  # type: ignore[no-untyped-def]
    jam: neo4j.Driver, cli_env, invoke, question: str, flags: list[str]
) -> None:
    doc = _ask(invoke, question, *flags)
    says = _span_says(doc)
    alert_claims = [c for c in _claims(doc) if JAM in c]
    assert alert_claims[:2] == [
        f"From 2025-01-01T00:00:00Z to 2026-03-01T00:00:00Z {says}: team:alpha OWNS {JAM}",
        f"From 2026-03-01T00:00:00Z to 2026-06-01T00:00:00Z {says}: team:delta was recorded as "
        f"the owner of {JAM}; that record was retracted at 2026-07-10T08:00:00Z: recorded in "
        "error: delta never owned CopierJam",
    ], alert_claims
    assert alert_claims[2].startswith("From 2026-06-01T00:00:00Z, still at as_of, "), alert_claims
    assert alert_claims[2].endswith(f"{says}: team:beta OWNS {JAM}"), alert_claims
    assert (JAM_DELTA, "retracted") in _tombstones(doc)
    assert "owners_of_records" in _templates(doc), _templates(doc)
    replay = invoke("replay", doc["run_id"], *IVY, "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["verified"] is True
    text = invoke("investigate", question, *IVY, *flags)
    assert "team:delta was recorded as the owner of alert:CopierJam" in text.out, text.out
    # eve may not read delta's record: alpha and beta alone, not a word of delta.
    result = invoke("investigate", question, *EVE, *flags, "--json")
    assert result.code == 0, result
    assert "delta" not in result.out.lower() and "retract" not in result.out.lower()
    told = [c for c in _claims(json.loads(result.out)) if JAM in c]
    assert len(told) == 2 and told[0] == alert_claims[0], told
    assert told[1].endswith(f"{says}: team:beta OWNS {JAM}"), told


@pytest.mark.parametrize(
    "question", [f"Who has owned {RUNBOOK}?", f"Show the ownership history of {RUNBOOK}"]
)
def test_a_runbook_history_says_its_owner_was_corrected(  # type: ignore[no-untyped-def]
    jam: neo4j.Driver, cli_env, invoke, question: str
) -> None:
    doc = _ask(invoke, question, "--as-of", "2026-12-01T00:00:00Z")
    assert (
        f"From 2026-05-01T00:00:00Z to 2026-09-01T09:00:00Z the owner of {RUNBOOK} was "
        "corrected at 2026-09-01T09:00:00Z: recorded as team:gamma until then, team:beta since "
        "(asked with a known_at before the correction, the answer is team:gamma)"
    ) in _claims(doc), _claims(doc)
    assert "owners_of_records" in _templates(doc), _templates(doc)
    # As known before the correction: gamma's record open-ended, no correction said.
    doc = _ask(
        invoke, question, "--as-of", "2026-08-01T00:00:00Z", "--known-at", "2026-08-01T00:00:00Z"
    )
    assert any(
        c.startswith("From 2026-02-01T00:00:00Z, still at as_of")
        and c.endswith(f"team:gamma OWNS {RUNBOOK}")
        for c in _claims(doc)
    ), _claims(doc)
    assert not any("corrected" in c for c in _claims(doc)), _claims(doc)


# A stretch of a period with no owner recorded (delta's months of copier and CopierJam: its
# record retracted, and hidden from eve; never written in initrode; before the first record).
# Before, the answer went from one owner to the next, `complete`, with no word of the stretch.
def _period_gap(owned: str, start: str, end: str, says: str) -> str:
    return (
        f"no owner of {owned} is recorded from {start} to {end} ({says}), in the records this "
        "subject may read: who owned it then is not known"
    )


BETWEEN = "the question says 'between 2025-06-01 and 2026-07-01': 2025-06-01T00:00:00Z to " + (
    "2026-07-01T23:59:59Z"
)
PERIOD_GAPS = [
    (
        "Who owned copier between 2025-06-01 and 2026-07-01?",
        COPIER,
        [_period_gap("svc:copier", "2026-03-01T00:00:00Z", "2026-06-01T00:00:00Z", BETWEEN)],
    ),
    (
        "Who owned the CopierJam alert between 2025-06-01 and 2026-07-01?",
        [],
        # The owners of the service it fires on are stated too (as what they are): so is
        # their stretch.
        [
            _period_gap(JAM, "2026-03-01T00:00:00Z", "2026-06-01T00:00:00Z", BETWEEN),
            _period_gap("svc:copier", "2026-03-01T00:00:00Z", "2026-06-01T00:00:00Z", BETWEEN),
        ],
    ),
    (
        # Before the first record (2025-01-01) is a stretch with no owner recorded too.
        "Who owned copier between 2024-06-01 and 2025-06-01?",
        COPIER,
        [
            _period_gap(
                "svc:copier",
                "2024-06-01T00:00:00Z",
                "2025-01-01T00:00:00Z",
                "the question says 'between 2024-06-01 and 2025-06-01': 2024-06-01T00:00:00Z "
                "to 2025-06-01T23:59:59Z",
            )
        ],
    ),
    (
        # A whole history starts at the first record: delta's months alone.
        "Show the ownership history of copier",
        COPIER,
        [
            _period_gap(
                "svc:copier",
                "2026-03-01T00:00:00Z",
                "2026-06-01T00:00:00Z",
                "the question says 'ownership history'",
            )
        ],
    ),
]


@pytest.mark.parametrize(("question", "flags", "gaps"), PERIOD_GAPS)
def test_a_period_names_the_stretches_with_no_owner_recorded(  # type: ignore[no-untyped-def]
    jam: neo4j.Driver, cli_env, invoke, question: str, flags: list[str], gaps: list[str]
) -> None:
    told = []
    for subject in SUBJECTS:
        result = invoke("investigate", question, "--subject", subject, *flags, "--json")
        assert result.code == 0, result
        doc = json.loads(result.out)
        assert doc["status"] == "partial", (subject, doc["missing_evidence"])
        assert _gaps(doc) == gaps, (subject, _gaps(doc))
        told.append(_gaps(doc))
    # eve in initech (delta's record hidden) is told what she is told where it never existed.
    assert told[0] == told[1]
    text = invoke("investigate", question, *IVY, *flags)
    assert gaps[0] in " ".join(text.out.split()), text.out


@pytest.mark.parametrize(
    "question",
    [
        # Inside one owner's record, and from a handover's instant (valid_from inclusive) on.
        "Who owned copier between 2025-06-01 and 2026-02-01?",
        "Who owned copier between 2026-06-01 and 2026-07-01?",
        "Who owned tps-report between 2026-11-09 and 2026-11-21?",
    ],
)
def test_a_period_owned_throughout_has_no_gap(  # type: ignore[no-untyped-def]
    jam: neo4j.Driver, cli_env, invoke, question: str
) -> None:
    flags = TPS if "tps" in question else COPIER
    doc = _ask(invoke, question, *flags)
    assert doc["status"] == "complete", doc["missing_evidence"]
    assert _gaps(doc) == []


# alert:Shredder handed on every month from 2021-01 on: 55 OWNS records, more than the 50
# `owners_of` reads at once (oldest first). Before, the newest five were left out without a
# word: no gap said the history was cut.
def _shredder_bundle(folder: Path) -> Path:
    """Our own bundle of alert:Shredder's 55 owners (alpha, beta, gamma in turn)."""
    months = [f"{2021 + m // 12}-{m % 12 + 1:02d}-01T00:00:00Z" for m in range(BINDER_RECORDS + 1)]
    teams = ["team:alpha", "team:beta", "team:gamma"]
    edges = [
        {
            "type": "OWNS",
            "from": teams[m % 3],
            "to": "alert:Shredder",
            "key": f"OWNS|{teams[m % 3]}|alert:Shredder|{months[m][:10]}",
            "acl": ["internal"],
            "source_id": "src:obs",
            "source_version": "obs@9",
            "locator": f"rules#shredder-{m}",
            "valid_from": months[m],
            **({"valid_to": months[m + 1]} if m < BINDER_RECORDS - 1 else {}),
            "recorded_at": "2026-11-02T09:00:00Z",
        }
        for m in range(BINDER_RECORDS)
    ]
    alert = {
        "id": "alert:Shredder",
        "label": "Alert",
        "name": "Shredder",
        "acl": ["internal"],
        "source_id": "src:obs",
        "source_version": "obs@9",
        "locator": "rules#Shredder",
        "valid_from": "2021-01-01T00:00:00Z",
        "recorded_at": "2026-11-02T09:00:00Z",
        "props": {"alertname": "Shredder", "severity": "warning", "summary": "shredder jammed"},
    }
    path = folder / "shredder.yaml"
    path.write_text(json.dumps({"tenant": "initech", "nodes": [alert], "edges": edges}))
    return path


@pytest.fixture(scope="module")
def shredder(jam: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> neo4j.Driver:
    from graph_schema.bundle import load_bundle
    from graph_schema.writer import ingest_bundle

    ingest_bundle(jam, load_bundle(_shredder_bundle(tmp_path_factory.mktemp("shredder"))))
    jam.execute_query("CALL db.awaitIndexes(300)")
    return jam


SHREDDER_CUT = (
    "the owners of alert:Shredder are more than the 50 records read at once (oldest first): "
    "the history is cut at 2025-02-01T00:00:00Z, and owners after then may be missing; who "
    "owned it later is not known from this answer"
)


@pytest.mark.parametrize(
    "question", ["Show the ownership history of alert:Shredder", "Who owns alert:Shredder?"]
)
def test_an_alert_history_longer_than_one_read_says_where_it_was_cut(  # type: ignore[no-untyped-def]
    shredder: neo4j.Driver, cli_env, invoke, question: str
) -> None:
    doc = _ask(invoke, question)
    assert doc["status"] == "partial", doc["missing_evidence"]
    assert SHREDDER_CUT in _gaps(doc), _gaps(doc)
    # A cut is no stretch with no owner: nothing after it is said to be unowned.
    assert not any(g.startswith("no owner of alert:Shredder is recorded from") for g in _gaps(doc))


def test_an_alert_asked_before_its_cut_is_complete(  # type: ignore[no-untyped-def]
    shredder: neo4j.Driver, cli_env, invoke
) -> None:
    doc = _ask(invoke, "Who owned alert:Shredder on 2022-03-15?", "--as-of", "2024-01-01T00:00:00Z")
    assert doc["status"] == "complete", doc["missing_evidence"]
    assert any("team:gamma OWNS alert:Shredder" in c for c in _claims(doc)), _claims(doc)


# Questions from a team's side: what a team owned (`owned_by_team`). Before, no team was
# looked up: "What did team:beta own on 2026-06-01?" had no claim and the generic gap, and
# a name matching a service's words answered with that service's owner.
def _team_owned(doc: dict, team: str) -> list[str]:  # type: ignore[type-arg]
    return sorted(
        c.rsplit(" OWNS ", 1)[1].split(" ", 1)[0] for c in _claims(doc) if f"{team} OWNS " in c
    )


@pytest.mark.parametrize(
    ("question", "owned"),
    [
        # The day before copier's and CopierJam's handover to beta (valid_from inclusive):
        # the runbook version alone (beta's since the correction, from 2026-05-01).
        ("What did team:beta own on 2026-05-31?", [RUNBOOK]),
        ("What did team:beta own on 2026-06-01?", [JAM, RUNBOOK, "svc:copier"]),
        # By its name; tps-report was beta's from 2026-11-12 to 2026-11-20 (as corrected).
        # Services only: the alert and the runbook version are counted in a claim of their
        # own (tests/test_team_side_ownership.py).
        (
            "Which services did Team Beta own at 2026-11-15T00:00:00Z?",
            ["svc:copier", "svc:tps-report"],
        ),
        ("What did the beta team own on 2026-11-20?", [JAM, RUNBOOK, "svc:copier"]),
        # No time named: at as_of.
        ("Which services did Team Gamma own?", ["svc:stapler", "svc:tps-report"]),
    ],
)
def test_what_a_team_owned_at_a_time(  # type: ignore[no-untyped-def]
    jam: neo4j.Driver, cli_env, invoke, question: str, owned: list[str]
) -> None:
    doc = _ask(invoke, question)
    team = "team:gamma" if "Gamma" in question else "team:beta"
    assert _team_owned(doc, team) == owned, _claims(doc)
    assert doc["status"] == "complete", doc["missing_evidence"]
    # Each claim bound to its OWNS record (what else the team owned: to theirs).
    for claim in doc["claims"]:
        assert len(claim["evidence_ids"]) == 1 or "also owned" in claim["statement"], claim
    assert "owned_by_team" in _templates(doc), _templates(doc)


def test_a_team_that_owned_nothing_then_is_not_complete(  # type: ignore[no-untyped-def]
    jam: neo4j.Driver, cli_env, invoke
) -> None:
    # gamma's records all start later (stapler from 2025-05-01 on).
    doc = _ask(invoke, "What did team:gamma own on 2025-02-01?")
    assert _team_owned(doc, "team:gamma") == [], _claims(doc)
    assert doc["status"] == "partial"
    assert _gaps(doc) == [
        "no OWNS record of team:gamma holds at the time named in the question, "
        "2025-02-01T00:00:00Z (explicit, a day: its start, 00:00 UTC) in the records this "
        "subject may read: what it owned then is not known"
    ], _gaps(doc)


def test_what_a_team_owned_over_a_period(jam: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _ask(invoke, "Show what team:alpha owned between 2025-02-01 and 2025-04-01")
    says = (
        "(the question says 'between 2025-02-01 and 2025-04-01': 2025-02-01T00:00:00Z to "
        "2025-04-01T23:59:59Z)"
    )
    assert (
        f"From 2025-01-01T00:00:00Z to 2025-03-01T00:00:00Z {says}: team:alpha OWNS svc:stapler"
        in _claims(doc)
    ), _claims(doc)
    # alpha's later stapler record (2025-07-01 to 2025-09-01) lies outside the period.
    # (svc:binder's and alert:Shredder's monthly owners, when those tests' bundles are in,
    # are alpha's in the period too.)
    bulk = {"svc:binder", "alert:Shredder"}
    owned = [o for o in _team_owned(doc, "team:alpha") if o not in bulk]
    assert owned == [JAM, "svc:copier", "svc:stapler", "svc:tps-report"], _claims(doc)
    # A team's records say nothing of who owned the rest of the time: no owner gap.
    assert doc["status"] == "complete", doc["missing_evidence"]


def _vault_bundle(folder: Path, tenant: str) -> Path:
    """team:skunk (a record only `incident` readers see) owns svc:vault since 2026-01-01."""
    common = {
        "source_id": "src:catalog",
        "source_version": "cat@7",
        "recorded_at": "2026-11-03T09:00:00Z",
    }
    nodes = [
        {
            "id": "team:skunk",
            "label": "Team",
            "name": "Skunk Works",
            "acl": ["internal", "incident"],
            "locator": "catalog#team:skunk",
            "valid_from": "2025-01-01T00:00:00Z",
            **common,
        },
        {
            "id": "svc:vault",
            "label": "Service",
            "name": "vault",
            "acl": ["internal"],
            "locator": "catalog#svc:vault",
            "valid_from": "2025-01-01T00:00:00Z",
            **common,
        },
    ]
    edges = [
        {
            "type": "OWNS",
            "from": "team:skunk",
            "to": "svc:vault",
            "key": "OWNS|team:skunk|svc:vault|2026-01-01",
            "acl": ["internal", "incident"],
            "locator": "catalog#vault-skunk",
            "valid_from": "2026-01-01T00:00:00Z",
            **common,
        },
    ]
    path = folder / "vault.yaml"
    path.write_text(json.dumps({"tenant": tenant, "nodes": nodes, "edges": edges}))
    return path


@pytest.fixture(scope="module")
def vault(jam: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> neo4j.Driver:
    from graph_schema.bundle import load_bundle
    from graph_schema.writer import ingest_bundle

    ingest_bundle(jam, load_bundle(_vault_bundle(tmp_path_factory.mktemp("vault"), "initech")))
    jam.execute_query("CALL db.awaitIndexes(300)")
    return jam


@pytest.mark.parametrize(
    "question", ["What did team:skunk own?", "Which services did Skunk Works own?"]
)
def test_a_team_the_subject_may_not_read_is_a_team_that_does_not_exist(  # type: ignore[no-untyped-def]
    vault: neo4j.Driver, cli_env, invoke, question: str
) -> None:
    doc = _ask(invoke, question)  # ivy may read it
    assert _team_owned(doc, "team:skunk") == ["svc:vault"], _claims(doc)
    told = []
    # eve (internal only) in initech, where it is hidden from her, and in initrode, where it
    # never existed.
    for subject in ("initech/user:eve", "initrode/user:eve"):
        result = invoke("investigate", question, "--subject", subject, "--json")
        assert result.code == 0, result
        seen = json.loads(result.out)
        assert "vault" not in result.out and "team:skunk OWNS" not in result.out
        assert seen["status"] == "partial"
        told.append((_claims(seen), _gaps(seen), len(seen["evidence"])))
    assert told[0] == told[1], told
    words = "team:skunk" if "team:" in question else "Skunk Works"
    assert told[0][1] == [
        f"no team named {words!r} is recorded in the records this subject may read: what it "
        "owned is not known"
    ], told


# Months without days or a year, and "since then". Before, "between March and July" was no
# period (the answer was the owner at as_of, `complete`) and "since then" the owner at one
# instant, both without a word.
def test_months_without_a_year_are_a_period_in_the_year_of_as_of(  # type: ignore[no-untyped-def]
    jam: neo4j.Driver, cli_env, invoke
) -> None:
    doc = _ask(
        invoke,
        "Who owned copier between March and July?",
        *COPIER,
        "--as-of",
        "2026-12-01T00:00:00Z",
    )
    says = (
        "(the question says 'between March and July': 2026-03-01T00:00:00Z to "
        "2026-07-31T23:59:59Z; no year given: the year of as_of, 2026; whole months, no zone "
        "given: read as UTC)"
    )
    assert (
        f"From 2026-06-01T00:00:00Z, still at as_of, 2026-12-01T00:00:00Z {says}: team:beta "
        "OWNS svc:copier"
    ) in _claims(doc), _claims(doc)
    # alpha's record ends as the period starts (valid_to exclusive): not an owner in it.
    assert not any("team:alpha OWNS svc:copier" in c for c in _claims(doc)), _claims(doc)
    assert _gaps(doc) == [
        _period_gap("svc:copier", "2026-03-01T00:00:00Z", "2026-06-01T00:00:00Z", says[1:-1])
    ], _gaps(doc)


def test_since_then_is_never_silently_one_instant(jam: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _ask(invoke, "Who has been the owner of copier since then?", *COPIER)
    assert doc["status"] == "partial", doc["missing_evidence"]
    assert (
        "the question says 'since then': a period that starts at an event is not placed for an "
        "owner question, so the owners over it are not answered (those stated are at the "
        "times they say): ask with 'between <date> and <date>'"
    ) in _gaps(doc), _gaps(doc)


def test_a_served_correction_claim_names_no_cli_flag(  # type: ignore[no-untyped-def]
    initech: neo4j.Driver, server_env
) -> None:
    """The correction claim reaches a served caller as it is (claims are not mapped to the
    tool's words, serving/served_words.py): before session 32 it told an MCP caller, who has
    no flags, "asked with --known-at before the correction"; now "a known_at", the tool's
    argument and the CLI's alike."""
    from test_serving_mcp import DEADLINE, ok, run_async, stdio, text

    from investigator.serving.served_words import CLI_FLAG

    got: dict[str, Any] = {}

    async def main() -> None:
        async with stdio(server_env, "--subject", "initech/user:ivy") as client:
            asked = {"question": PERIOD, "service": "svc:tps-report", "deadline_seconds": DEADLINE}
            result = await client.call_tool("investigate", asked)
            got["doc"], got["summary"] = ok(result), text(result)

    run_async(main)
    claims = _claims(got["doc"])
    assert CORRECTION in claims, claims
    assert [c for c in claims if CLI_FLAG.search(c)] == [], claims
    assert "--known-at" not in got["summary"], got["summary"]
    assert "(asked with a known_at before the correction" in got["summary"], got["summary"]
