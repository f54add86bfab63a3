"""A run that stopped before its search was done says what it did not look for as unknown,
never as a negative finding; a question placed at an incident not yet recorded says that."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import neo4j
import pytest

from graph_schema.bundle import load_bundle
from graph_schema.writer import ingest_bundle
from investigator.context_graph import RunRecorder
from investigator.investigation import InvestigationRequest, InvestigationResult, investigate

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "initech-live-window"

# The explorer's words (e21-audit finding 1).
SEED = (
    "Was the 10:02 release of payment-api related to the PAY-4097 errors? "
    "Who owned payment-api at that moment?"
)
AS_OF = datetime(2026, 7, 23, 10, 3, tzinfo=UTC)
BOB = "acme/user:bob"


@pytest.fixture(scope="module")
def kg(demo_graph: neo4j.Driver) -> neo4j.Driver:
    """The demo, plus tenant initech: tps-report's incident of 2026-11-11 (first error
    10:02:00, recorded 10:02:30; the incident recorded only at 10:10)."""
    for bundle in sorted(FIXTURES.glob("*.yaml")):
        ingest_bundle(demo_graph, load_bundle(bundle))
    demo_graph.execute_query("CALL db.awaitIndexes(300)")
    return demo_graph


def _seed(driver: neo4j.Driver, **kw: object) -> InvestigationResult:
    request = InvestigationRequest(
        question=SEED,
        subject_id=BOB,
        service_id="svc:payment-api",
        as_of=AS_OF,
        deadline_s=600,
        **kw,  # type: ignore[arg-type]
    )
    return investigate(request, driver=driver, recorder=RunRecorder(driver))


def _gap(result: InvestigationResult, evidence_type: str) -> str:
    return next(m.description for m in result.missing_evidence if m.evidence_type == evidence_type)


def test_a_run_cut_by_its_deadline_never_says_the_error_is_not_known(  # type: ignore[no-untyped-def]
    kg: neo4j.Driver, cli_env, invoke
) -> None:
    full = _seed(kg)
    assert any("PAY-4097 first seen at 2026-07-23T10:02:38Z" in c.statement for c in full.claims)
    # The deadline as replay applies it: after the calls of the first round, whatever the
    # machine's speed (on a loaded machine `--deadline-seconds 1` stops it right there).
    first_round = sum(1 for tc in full.tool_calls if tc.round == 1)
    cut = _seed(kg, deadline_after_calls=first_round)
    assert (cut.stop_reason, cut.rounds) == ("deadline", 1)
    statements = [c.statement for c in cut.claims]
    # Before: "No first-seen PAY-4097 error is known at as_of ...", citing the release.
    assert not [s for s in statements if "is known" in s or "No first-seen" in s], statements
    # Before: 'at that moment' was the release, a stand-in for the error never looked up.
    assert not [s for s in statements if "at that moment" in s], statements
    assert "at that moment" in cut.unresolved_time_words
    assert any(
        s.startswith("At 2026-07-23T10:03:00Z: team:payments-core OWNS svc:payment-api")
        for s in statements
    ), statements
    assert _gap(cut, "error_first_seen").startswith(
        "unknown, not absent: the run stopped (deadline) with reads still planned"
    )
    assert cut.status.value == "partial" and cut.verdict is not None
    assert cut.verdict.value == "uncertain" and cut.search_cut_short
    # An auditor's replay re-runs it to the same calls and states the same claims.
    replayed = invoke("replay", cut.run_id, "--json", "--subject", BOB)
    doc = json.loads(replayed.out)
    assert (replayed.code, doc["verified"], doc["drift"]) == (0, True, []), doc


def test_the_report_of_a_run_stopped_after_its_last_round_says_so(  # type: ignore[no-untyped-def]
    kg: neo4j.Driver, cli_env, invoke
) -> None:
    res = invoke(
        "investigate", SEED, "--service", "svc:payment-api", "--as-of", "2026-07-23T10:03:00Z",
        "--subject", BOB, "--max-rounds", "1", "--deadline-seconds", "600",
    )  # fmt: skip
    assert res.code == 0, res
    assert "Status     partial  (stop: max_rounds, rounds: 1)" in res.out
    assert "Stopped    after its last round (--max-rounds), with reads still planned" in res.out
    assert "No first-seen" not in res.out
    assert (
        "error_first_seen (required): unknown, not absent: the run stopped (max_rounds) with "
        "reads still planned, before its search for this finished; ask again with a larger "
        "--max-rounds"
    ) in res.out
    # The Time line says the search stopped, not that no first error exists by as_of (which
    # sent the user to change --as-of or --known-at for an error at 10:02:38 bob may read).
    time_line = next(line for line in res.out.splitlines() if line.startswith("Time "))
    assert time_line == (
        "Time       not resolved: 'at that moment'; the answer is at as_of. Not for its "
        "wording: the run stopped after its last round (--max-rounds) before the first error "
        "was found. Ask again with a larger --max-rounds"
    ), time_line
    assert "give a later --as-of" not in res.out


def test_the_incident_start_not_yet_recorded_is_said_not_a_missing_first_error(  # type: ignore[no-untyped-def]
    kg: neo4j.Driver, cli_env, invoke
) -> None:
    live = ("--service", "svc:tps-report", "--as-of", "2026-11-11T10:05:00Z",
            "--known-at", "2026-11-11T10:05:00Z", "--subject", "initech/user:ivy")  # fmt: skip
    res = invoke("investigate", "Who owned tps-report when the incident started?", *live)
    assert res.code == 0, res
    # Before: "no first-seen time for the error or incident", though the first error was
    # recorded at 10:02:30 (the incident only at 10:10).
    assert "no first-seen time for the error or incident" not in res.out
    assert (
        "error_first_seen (required): no incident of the service that the subject may read is "
        "known at as_of and known_at, so 'when the incident started' cannot be placed"
    ) in res.out
    assert "At 2026-11-11T10:05:00Z: team:beta OWNS svc:tps-report" in res.out
    # The first error itself was known then: asked about, it is found.
    then = invoke("investigate", "Who owned tps-report then?", *live)
    assert "TPS-500 first seen at 2026-11-11T10:02:00Z" in then.out, then


def test_a_run_cut_before_it_read_the_owner_at_the_asked_time_is_not_complete(  # type: ignore[no-untyped-def]
    kg: neo4j.Driver,
) -> None:
    # Seen in the golden set on a loaded, fresh server: "before the release" was placed in
    # round 2, the owner at that moment was to be read in round 3, the deadline came first,
    # and the run said `complete` with only the owner at as_of.
    def ask(**kw: object) -> InvestigationResult:
        request = InvestigationRequest(
            question="Who owned payment-api before the release?",
            subject_id=BOB,
            service_id="svc:payment-api",
            as_of=datetime(2026, 12, 1, tzinfo=UTC),
            deadline_s=600,
            **kw,  # type: ignore[arg-type]
        )
        return investigate(request, driver=kg, recorder=RunRecorder(kg))

    full = ask()
    asked = "(the question says 'before the release'): team:payments-core OWNS svc:payment-api"
    assert full.status.value == "complete" and full.rounds >= 2
    assert any(asked in c.statement for c in full.claims), [c.statement for c in full.claims]
    before_last = sum(1 for tc in full.tool_calls if tc.round < full.rounds)
    cut = ask(deadline_after_calls=before_last)
    assert cut.stop_reason == "deadline" and cut.search_cut_short
    assert not any(asked in c.statement for c in cut.claims)
    # Before: `complete`, answered only at as_of.
    assert cut.status.value == "partial"
