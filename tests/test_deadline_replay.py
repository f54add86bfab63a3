"""A run's deadline decides only where it stops, and the run says so; its replay stops at the
same place, never by a clock (the first question on a just-started, busy server made fewer
reads than on a warm one, said nothing, and its replay reported pack_hash_mismatch)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from datetime import UTC, datetime

import neo4j

from investigator.context_graph import RunRecorder
from investigator.investigation import InvestigationRequest, InvestigationResult, investigate
from investigator.replay import replay_run

PERIOD = "Who owned payment-api between 2026-07-01 and 2026-07-30?"
AS_OF = datetime(2026, 7, 23, 10, 3, tzinfo=UTC)
BOB = "acme/user:bob"


def _ask(driver: neo4j.Driver, question: str = PERIOD, **kw: object) -> InvestigationResult:
    request = InvestigationRequest(
        question=question,
        subject_id=BOB,
        service_id="svc:payment-api",
        as_of=AS_OF,
        **{"deadline_s": 600, **kw},  # type: ignore[arg-type]
    )
    return investigate(request, driver=driver, recorder=RunRecorder(driver))


def _ticking_clock() -> Callable[[], float]:
    """A clock one unit later at each reading: where a deadline falls, without real time."""
    ticks = itertools.count()
    return lambda: float(next(ticks))


def _replayed(invoke, run_id: str) -> dict:  # type: ignore[no-untyped-def]
    res = invoke("replay", run_id, "--json", "--subject", BOB)
    doc = json.loads(res.out)
    assert (res.code, doc["verified"], doc["drift"]) == (0, True, []), doc
    return doc  # type: ignore[no-any-return]


def test_a_deadline_before_the_ownership_records_read_says_deadline_and_replays(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    full = _ask(demo_graph)
    assert [tc.template_id for tc in full.tool_calls][-1] == "ownership_records"
    assert full.stop_reason == "evidence_sufficient"
    # The deadline found passed once the loop's rounds are done, before the records read
    # (on a cold, loaded server the rounds alone took longer than the deadline).
    cut = _ask(demo_graph, deadline_after_calls=len(full.tool_calls) - 1)
    assert len(cut.tool_calls) == len(full.tool_calls) - 1
    # Before: stop evidence_sufficient, as if nothing had been skipped.
    assert (cut.stop_reason, cut.search_cut_short) == ("deadline", True)
    assert cut.deadline_cut_after_calls == len(cut.tool_calls)
    assert cut.status.value == "partial"
    # Before: replay re-ran it without the cut (the records read too) and reported
    # pack_hash_mismatch although every recorded call re-executed identically.
    doc = _replayed(invoke, cut.run_id)
    assert doc["pack_hash_match"] is True


def test_a_run_cut_by_the_clock_answers_as_its_replay_cut_after_its_calls(
    demo_graph: neo4j.Driver,
) -> None:
    """A clock that moves one unit per reading (a stand-in for slow reads, no real time): for
    every place the deadline can fall, the run cut there is the run `deadline_after_calls`
    rebuilds, rounds and all (before, a clock passed between the round's start and its first
    read counted a round the replay never began)."""
    seen = set()
    for deadline_s in range(0, 9):
        request = InvestigationRequest(
            question=PERIOD, subject_id=BOB, service_id="svc:payment-api", as_of=AS_OF,
            deadline_s=deadline_s + 0.5,
        )  # fmt: skip
        clocked = investigate(
            request,
            driver=demo_graph,
            recorder=RunRecorder(demo_graph),
            monotonic=_ticking_clock(),
        )
        if clocked.stop_reason != "deadline":
            continue
        assert clocked.deadline_cut_after_calls is not None
        again = investigate(
            request.model_copy(update={"deadline_after_calls": clocked.deadline_cut_after_calls}),
            driver=demo_graph,
        )
        shape = [
            (r.rounds, r.stop_reason, r.status, len(r.tool_calls), r.missing_evidence)
            for r in (clocked, again)
        ]
        assert shape[0] == shape[1], (deadline_s, shape)
        replayed = replay_run(demo_graph, clocked.run_id)
        assert (replayed.verified, replayed.drift) == (True, []), (deadline_s, replayed.drift)
        seen.add(len(clocked.tool_calls))
    assert len(seen) >= 3, seen


def test_a_run_its_deadline_did_not_stop_replays_on_any_server(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    """Recorded with a deadline of a millisecond that its (stopped) clock never reached: the
    replay re-runs it whole, however long its reads take (before, replay read its own clock
    against the recorded deadline and was cut after a millisecond: pack_hash_mismatch)."""
    request = InvestigationRequest(
        question=PERIOD, subject_id=BOB, service_id="svc:payment-api", as_of=AS_OF,
        deadline_s=0.001,
    )  # fmt: skip
    run = investigate(
        request, driver=demo_graph, recorder=RunRecorder(demo_graph), monotonic=lambda: 0.0
    )
    assert (run.stop_reason, run.search_cut_short) == ("evidence_sufficient", False)
    doc = _replayed(invoke, run.run_id)
    assert doc["pack_hash_match"] is True
