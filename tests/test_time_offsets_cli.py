"""An investigator asking after the fact, in their own words, about a time some way from an
event: "two days before the alert", "two hours after the alert fired", "before the first
release", and why a time the answer is not about was not used (real Neo4j; tenant initech's
tps-report: owned by team:alpha until 2026-11-10, team:beta until 11-20, then team:gamma;
releases on 11-09 (13:50-14:00) and 11-11 (09:50-09:58), alert fired 11-11 10:05, incident
10:02-11:00, runbook v1 until 11-11 12:00 then v2)."""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import ingest_fixture_bundle

from graph_schema.bundle import load_bundle
from graph_schema.writer import ingest_bundle

IVY = ["--service", "svc:tps-report", "--subject", "initech/user:ivy"]
AS_OF = "2026-12-01T00:00:00Z"
OWNS = "OWNS svc:tps-report"


@pytest.fixture(scope="module")
def initech(driver: neo4j.Driver) -> neo4j.Driver:
    return ingest_fixture_bundle(driver, "initech-time")


def _run(invoke, question: str, *flags: str) -> tuple[dict, str]:  # type: ignore[no-untyped-def,type-arg]
    """The run's JSON document and its report, asked the same way (time enough for a first
    question on a new server, unless `flags` give a deadline)."""
    asked = ["investigate", question, *IVY, "--deadline-seconds", "600", *flags]
    doc = invoke(*asked, "--json")
    assert doc.code == 0, doc
    report = invoke(*asked)
    assert report.code == 0, report
    return json.loads(doc.out), report.out


ALERT = "the TpsReportErrorRateHigh alert (2026-11-11T10:05:00Z)"
RELEASE = "the start of the release tps-2026.11.11.1 (2026-11-11T09:50:00Z)"
RESOLVED = "the resolution of incident TPS reports failing 2026-11-11 (2026-11-11T11:00:00Z)"


@pytest.mark.parametrize(
    ("question", "words", "taken", "held"),
    [
        # Before, 1 s before the alert (10:04:59): team:beta, `complete`.
        ("Who owned tps-report two days before the alert?", "two days before the alert",
         f"2 d before {ALERT}, 2026-11-09T10:05:00Z", "team:alpha " + OWNS),
        # Before, the alert itself (10:05): v1, `complete`.
        ("Which runbook applied two hours after the alert fired?",
         "two hours after the alert fired", f"2 h after {ALERT}, 2026-11-11T12:05:00Z",
         "runbook:tps-recovery@v2"),
        ("Who owned tps-report 30 minutes before the release?", "30 minutes before the release",
         f"30 min before {RELEASE}, 2026-11-11T09:20:00Z", "team:beta " + OWNS),
        ("Who owned tps-report the day after the incident?", "the day after the incident",
         f"1 d after {RESOLVED}, 2026-11-12T11:00:00Z", "team:beta " + OWNS),
    ],
)  # fmt: skip
def test_an_amount_from_an_event_moves_the_answer_and_is_said(  # type: ignore[no-untyped-def]
    initech, cli_env, invoke, question: str, words: str, taken: str, held: str
) -> None:
    doc, report = _run(invoke, question, "--as-of", AS_OF)
    assert doc["status"] == "complete", (doc["stop_reason"], doc["unresolved_time_words"])
    # The claim holds at the instant the amount moved to, and names it and the words.
    statements = [c["statement"] for c in doc["claims"]]
    assert any(f"{taken} (the question says '{words}')" in s and held in s for s in statements), (
        statements
    )
    # The Time line quotes all the words, the amount with them (before, only 'before the
    # alert'), and the event's own instant beside the one taken.
    assert f"Time       '{words}' is taken as {taken}" in report


def test_an_amount_at_and_around_as_of(initech, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    question = "Which runbook applied two hours after the alert fired?"
    # Asked an hour after the alert: the instant asked about has not come yet, and says so.
    early, report = _run(invoke, question, "--as-of", "2026-11-11T11:05:00Z")
    assert early["status"] == "partial"
    assert early["unresolved_time_words"] == ["two hours after the alert fired"]
    assert [r["reason"] for r in early["unresolved_time_reasons"]] == ["after_as_of"]
    assert (
        "Time       not used: 'two hours after the alert fired' is 2 h after the "
        "TpsReportErrorRateHigh alert (2026-11-11T10:05:00Z), 2026-11-11T12:05:00Z, after as_of "
        "2026-11-11T11:05:00Z, and as_of bounds what the answer may know"
    ) in report
    assert not any("v2" in c["statement"] for c in early["claims"])
    # Asked exactly then: v2 (in force from 12:00), complete.
    at, _ = _run(invoke, question, "--as-of", "2026-11-11T12:05:00Z")
    assert at["status"] == "complete", at["unresolved_time_words"]
    assert any(
        "runbook:tps-recovery@v2) is the version in force at 2 h after the "
        "TpsReportErrorRateHigh alert (2026-11-11T10:05:00Z), 2026-11-11T12:05:00Z"
        in c["statement"]
        for c in at["claims"]
    ), at["claims"]


def test_an_amount_it_cannot_apply_is_said_and_the_run_is_partial(  # type: ignore[no-untyped-def]
    initech, cli_env, invoke
) -> None:
    doc, report = _run(
        invoke, "Who owned tps-report a few hours before the alert?", "--as-of", AS_OF
    )
    assert doc["status"] == "partial"
    assert doc["unresolved_time_words"] == ["a few hours before the alert"]
    assert doc["unresolved_time_reasons"] == [
        {
            "words": "a few hours before the alert",
            "reason": "not_applied",
            "detail": "'a few hours' is no exact amount",
        }
    ]
    assert (
        "Time       not resolved: 'a few hours before the alert'; the answer is at as_of, not "
        "at the event: 'a few hours' is no exact amount, so it is not applied."
    ) in report
    # Not the alert itself either (before, 1 s before it: team:beta).
    statements = [c["statement"] for c in doc["claims"]]
    assert not any("alert" in s for s in statements), statements
    assert any(s.startswith(f"At {AS_OF}: team:gamma {OWNS}") for s in statements), statements


@pytest.mark.parametrize(
    ("question", "at", "owner"),
    [
        # Before, the newest release (11-11 09:49:59): team:beta, with 'first' quoted beside it.
        ("Who owned tps-report before the first release?",
         "1 s before the start of the release tps-2026.11.09.1, 2026-11-09T13:49:59Z", "alpha"),
        ("Who owned tps-report before the previous release?",
         "1 s before the start of the release tps-2026.11.09.1, 2026-11-09T13:49:59Z", "alpha"),
        ("Who owned tps-report before the last release?",
         "1 s before the start of the release tps-2026.11.11.1, 2026-11-11T09:49:59Z", "beta"),
    ],
)  # fmt: skip
def test_the_release_the_words_pick(
    initech, cli_env, invoke, question: str, at: str, owner: str
) -> None:  # type: ignore[no-untyped-def]
    doc, _ = _run(invoke, question, "--as-of", AS_OF)
    assert doc["status"] == "complete", doc["unresolved_time_words"]
    statements = [c["statement"] for c in doc["claims"]]
    assert any(s.startswith(f"At {at} ") and f"team:{owner} {OWNS}" in s for s in statements), (
        statements
    )


def test_the_releases_picked_are_those_known_at_known_at(initech, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # Known at 11-10, only the 11-09 release was recorded: it is the first, and no release
    # came before it.
    then = ["--as-of", "2026-11-10T12:00:00Z", "--known-at", "2026-11-10T12:00:00Z"]
    first, _ = _run(invoke, "Who owned tps-report before the first release?", *then)
    assert any(
        c["statement"].startswith("At 1 s before the start of the release tps-2026.11.09.1")
        for c in first["claims"]
    ), first["claims"]
    previous, report = _run(invoke, "Who owned tps-report before the previous release?", *then)
    assert previous["status"] == "partial"
    assert [r["reason"] for r in previous["unresolved_time_reasons"]] == ["event_not_found"]
    assert (
        "Time       not resolved: 'before the previous release'; the answer is at as_of. The "
        "words are read, but no release before the latest one is found by as_of "
        "2026-11-10T12:00:00Z in the KG as known at 2026-11-10T12:00:00Z that this subject "
        "may read"
    ) in report


def test_why_a_time_is_not_resolved_is_said(initech, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    question = "Who owned tps-report when the incident started?"
    # The run's deadline, not the words: said so, with the flag that gives it more time.
    cut, report = _run(invoke, question, "--as-of", AS_OF, "--deadline-seconds", "0")
    assert cut["stop_reason"] == "deadline"
    assert [r["reason"] for r in cut["unresolved_time_reasons"]] == ["deadline"]
    assert (
        "Time       not resolved: 'when the incident started'; the answer is at as_of. Not for "
        "its wording: the run's deadline stopped the search before the incident start was "
        "found (stop: deadline). Give the run more time with --deadline-seconds, or ask again"
    ) in report
    assert "Give --as-of, or the time in the question" not in report
    # The incident record was recorded at 10:10: at known_at 10:05 none is known.
    early, report = _run(
        invoke, question, "--as-of", "2026-11-11T10:05:00Z", "--known-at", "2026-11-11T10:05:00Z"
    )
    assert [r["reason"] for r in early["unresolved_time_reasons"]] == ["event_not_found"]
    assert (
        "Time       not resolved: 'when the incident started'; the answer is at as_of. The "
        "words are read, but no incident start is found by as_of 2026-11-11T10:05:00Z in the "
        "KG as known at 2026-11-11T10:05:00Z that this subject may read: give a later --as-of "
        "or --known-at"
    ) in report
    # Words it does not read as a time keep their line.
    vague, report = _run(invoke, "Who owned tps-report the other day?", "--as-of", AS_OF)
    assert [r["reason"] for r in vague["unresolved_time_reasons"]] == ["not_read"]
    assert (
        "Time       not resolved: 'the other day'; the answer is at as_of. Give --as-of, or the "
        "time "
        "in the question as a date and time with its zone (YYYY-MM-DDTHH:MM:SSZ)"
    ) in report


def test_a_run_with_an_amount_replays(initech, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(
        invoke("investigate", "Who owned tps-report two days before the alert?", *IVY,
               "--as-of", AS_OF, "--deadline-seconds", "600", "--json").out
    )  # fmt: skip
    replay = json.loads(
        invoke("replay", doc["run_id"], "--subject", "initech/user:ivy", "--json").out
    )
    assert replay["verified"] is True, replay["drift"]


# Twelve later releases of cover-sheet: more than the newest ten a lookup of the latest reads.
MANY_RELEASES = (
    "tenant: initech\nnodes:\n"
    + "".join(
        f"  - {{id: deploy:cover-2026.10.{d:02d}.1, label: Deployment,"
        f" name: cover-2026.10.{d:02d}.1,"
        f" acl: [internal], source_id: src:cicd, source_version: run-c{d}, locator: cicd/c/{d},"
        f' valid_from: "2026-10-{d:02d}T12:00:00Z", recorded_at: "2026-10-{d:02d}T12:00:05Z",'
        f' props: {{service: svc:cover-sheet, release: "2026.10.{d:02d}.1",'
        f' finished_at: "2026-10-{d:02d}T12:00:00Z"}}}}\n'
        for d in range(1, 14)
    )
    + (
        "edges:\n  - {type: OWNS, from: team:alpha, to: svc:cover-sheet, acl: [internal],"
        " source_id: src:catalog, source_version: cat@9, locator: catalog#owns-cover,"
        ' valid_from: "2025-01-01T00:00:00Z", recorded_at: "2026-01-02T09:00:00Z"}\n'
    )
)


def test_the_first_of_many_releases_is_the_earliest(  # type: ignore[no-untyped-def]
    initech, cli_env, invoke, tmp_path: Path
) -> None:
    (tmp_path / "50-cover.yaml").write_text(MANY_RELEASES, encoding="utf-8")
    ingest_bundle(initech, load_bundle(tmp_path))
    asked = ["investigate", "Who owned cover-sheet before the first release?",
             "--service", "svc:cover-sheet", "--subject", "initech/user:ivy",
             "--as-of", AS_OF, "--deadline-seconds", "600", "--json"]  # fmt: skip
    doc = json.loads(invoke(*asked).out)
    # (partial all the same: cover-sheet emitted no error, and the plan asks for its first.)
    assert doc["unresolved_time_words"] == []
    assert any(
        c["statement"].startswith(
            "At 1 s before the release cover-2026.10.01.1, 2026-10-01T11:59:59Z (the question "
            "says 'before the first release')"
        )
        and "team:alpha OWNS svc:cover-sheet" in c["statement"]
        for c in doc["claims"]
    ), doc["claims"]
