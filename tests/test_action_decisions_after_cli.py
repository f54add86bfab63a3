"""Action decisions asked after the fact, on the demo data through the CLI against a real
Neo4j (session 34): "should we have failed over payment-db during the incident?" asked on
07-26 or with no --as-of is answered by the runbook in force at the incident's start (v3's
"Do not fail over payment-db unless its own health checks fail."), said as of then.

Before: the past tense ("should we have failed over") was no action decision, and payment-db,
which the incident did not affect (only its dependency path names it), placed no incident:
`partial`, "no incident of svc:payment-db ..." and no step quoted; "should we have restarted
payment-api during PAY-4097?" listed the incident's facts without saying v3 has no restart
step. Now the incident is looked up as a bare "the incident" is, and the step of the version
in force at its start is quoted, or its silence is the required gap.
"""

from __future__ import annotations

import neo4j
import pytest
from conftest import claim_lines

from investigator.planner import asks_action_decision, asks_action_decision_after

BOB = ["--subject", "acme/user:bob"]
CAROL = ["--subject", "acme/user:carol"]
MALLORY = ["--subject", "globex/user:mallory"]
DEADLINE = ["--deadline-seconds", "600"]
AFTER = ["--as-of", "2026-07-26T00:00:00Z"]  # v4 in force (no fail-over step)
FAIL_OVER = "should we have failed over payment-db during the incident?"
THEN = (
    "the version in force at the start of incident Payments authorization failures "
    "2026-07-23, 2026-07-23T10:02:38Z"
)
V3_STEP = 'v3 says "Do not fail over payment-db unless its own health checks fail." (it forbids '
NOT_PLACED = "not at the time asked after the fact: none placed"


pytestmark = pytest.mark.usefixtures("patient_reads")


@pytest.mark.parametrize(
    ("question", "action"),
    [
        (FAIL_OVER, "fail over"),
        ("were we supposed to fail over payment-db?", "fail over"),
        ("should we have restarted payment-api during PAY-4097?", "restart"),
        ("should they have scaled up checkout?", "scale up"),
        ("should we have paged payments-platform?", "page"),
    ],
)
def test_past_tense_decisions_are_decisions_after_the_fact(question: str, action: str) -> None:
    assert asks_action_decision(question) == action
    assert asks_action_decision_after(question)


@pytest.mark.parametrize(
    "question",
    ["should we fail over payment-db?", "who should we have paged?", "did we fail over?"],
)
def test_other_readings_are_not_after_the_fact(question: str) -> None:
    assert not asks_action_decision_after(question)


@pytest.mark.parametrize(
    "when",
    [AFTER, []],  # after the incident (v4 in force), and with no --as-of (now)
)
def test_fail_over_after_the_fact_quotes_the_step_in_force_at_the_incident(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, when: list[str]
) -> None:
    report = invoke("investigate", FAIL_OVER, *BOB, *when, *DEADLINE)
    assert report.code == 0, report
    assert (
        "Incident   'the incident' is taken as inc:2026-07-23-payments (Payments authorization "
        "failures 2026-07-23, 2026-07-23T10:02:38Z to 2026-07-23T10:48:00Z)"
    ) in report.out, report.out
    step = [line for line in claim_lines(report.out) if V3_STEP in line]
    assert len(step) == 1 and THEN in step[0], report.out
    # v2's "fail over ... to the replica" was superseded by then; v4 (today's) has no step.
    assert "to the replica" not in report.out, report.out
    assert "runbook_step" not in report.out, report.out
    assert "Status     complete" in report.out, report.out


def test_were_we_supposed_to_and_restart_after_the_fact(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    supposed = invoke(
        "investigate", "were we supposed to fail over payment-db?", *BOB, *AFTER, *DEADLINE
    )
    assert supposed.code == 0, supposed
    assert any(V3_STEP in line and THEN in line for line in claim_lines(supposed.out)), supposed.out
    restart = invoke(
        "investigate", "should we have restarted payment-api during PAY-4097?", *BOB, *DEADLINE
    )
    assert restart.code == 0, restart
    assert (
        "runbook_step (required): no step of runbook:payment-recovery@v3 (in force at the "
        "start of incident Payments authorization failures 2026-07-23, 2026-07-23T10:02:38Z"
    ) in restart.out, restart.out
    assert "Status     partial" in restart.out, restart.out


@pytest.mark.parametrize(
    ("flags", "v3_then"),
    [
        (["--as-of", "2026-07-23T10:00:00Z"], False),  # before the incident started
        (["--as-of", "2026-07-23T10:02:38Z"], True),  # at its start
        (["--as-of", "2026-07-23T11:00:00Z"], True),  # after it was resolved
        (["--known-at", "2026-07-23T10:00:00Z"], False),  # before any record of it
    ],
)
def test_before_at_and_after_the_incident(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, flags: list[str], v3_then: bool
) -> None:
    report = invoke("investigate", FAIL_OVER, *BOB, *flags, *DEADLINE)
    assert report.code == 0, report
    placed = [line for line in claim_lines(report.out) if V3_STEP in line and THEN in line]
    assert bool(placed) == v3_then, report.out
    if not v3_then:
        # No incident placed by then: whatever is said is at as_of, and says so (the step
        # in force at as_of, when a runbook is known by known_at).
        assert "Time       not resolved: 'during the incident'" in report.out, report.out
        assert (NOT_PLACED in report.out) == ("--as-of" in flags), report.out


def test_carol_and_mallory_place_no_incident(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    # Carol may not read the incident: nothing is placed through it, and that is said.
    carol = invoke("investigate", FAIL_OVER, *CAROL, *AFTER, *DEADLINE)
    assert carol.code == 0, carol
    assert "inc:2026-07-23-payments" not in carol.out, carol.out
    assert THEN not in carol.out, carol.out
    assert NOT_PLACED in carol.out, carol.out
    # Mallory (globex) reads nothing of acme.
    mallory = invoke("investigate", FAIL_OVER, *MALLORY, *AFTER, *DEADLINE)
    assert mallory.code == 0, mallory
    body = mallory.out.split("\nClaims\n", 1)[1]
    assert "runbook:payment-recovery@" not in body, mallory.out
    assert "inc:2026-07-23-payments" not in mallory.out, mallory.out
    assert "Status     partial" in mallory.out, mallory.out
