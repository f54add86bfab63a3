"""A service's state at as_of says only what was read for it (h35-status-gaps): a part of it
(its incidents, the alerts firing on it, its releases rolling out) whose read did not run for
the service is "unknown, not read", never "no incident open"; an incident record read is
used whatever evidence type the gate admitted it under.

Before: "checkout?" planned with its entity lookup beside the status said "no incident open"
during the payments incident (its record was admitted from the text search as a document),
and a status whose FIRED_ON walk did not run said "no alert firing" while an alert fired.
Real runs on the real Neo4j, the planner told what to plan (no question plans these today)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import neo4j
from test_failed_reads_swept import _ReadsFail

from investigator.investigation import InvestigationRequest, InvestigationResult, investigate
from investigator.planner import DeterministicPlanner, Known, PlanInput, PlanStep
from investigator.rubric import Intent

AT_INCIDENT = datetime(2026, 7, 23, 10, 30, tzinfo=UTC)


class _Planner(DeterministicPlanner):
    """The deterministic planner, with the intents given and the walks named left out."""

    def __init__(self, intents: Sequence[Intent] = (), skip_walks: Sequence[str] = ()) -> None:
        super().__init__()
        self._intents = list(intents)
        self._skip = set(skip_walks)

    def intents(self, inp: PlanInput) -> list[Intent]:
        return self._intents or super().intents(inp)

    def plan(self, inp, intents, known: Known, steps: list[PlanStep]):  # type: ignore[no-untyped-def]
        kept = [
            s
            for s in steps
            if not (
                s.template_id == "dependency_neighbourhood"
                and s.options.get("rel_type") in self._skip
            )
        ]
        return super().plan(inp, intents, known, kept)


def _ask(driver: neo4j.Driver, question: str, planner: _Planner) -> InvestigationResult:
    request = InvestigationRequest(
        question=question, subject_id="acme/user:bob", as_of=AT_INCIDENT, deadline_s=600
    )
    return investigate(request, driver=driver, planner=planner, recorder=None)


def _summary(result: InvestigationResult, service: str) -> str:
    [summary] = [
        c.statement
        for c in result.claims
        if c.statement.startswith(f"{service} at as_of")
        and "(what the subject may read" in c.statement
    ]
    return summary


def test_a_lookup_beside_the_status_names_the_open_incident(demo_graph: neo4j.Driver) -> None:
    planner = _Planner([Intent.ENTITY_LOOKUP, Intent.SERVICE_STATUS])
    result = _ask(demo_graph, "checkout?", planner)
    summary = _summary(result, "svc:checkout")
    # Before: "no incident open, no alert firing, no release rolling out".
    assert summary.endswith(": 1 incident open, no alert firing, no release rolling out"), summary
    assert (
        "svc:checkout at as_of 2026-07-23T10:30:00Z: incident inc:2026-07-23-payments open "
        "(Payments authorization failures 2026-07-23, started 2026-07-23T10:02:38Z, not "
        "resolved by as_of)"
    ) in [c.statement for c in result.claims], result.claims


def test_a_part_not_read_is_unknown_never_none(demo_graph: neo4j.Driver) -> None:
    result = _ask(demo_graph, "is payment-api healthy?", _Planner(skip_walks=["FIRED_ON"]))
    assert not any(tc.template_id == "dependency_neighbourhood" and tc.options.get("rel_type")
                   == "FIRED_ON" for tc in result.tool_calls)  # fmt: skip
    summary = _summary(result, "svc:payment-api")
    # Before: "1 incident open, no alert firing, ..." while PaymentApiHighErrorRate fired.
    assert summary.endswith(
        ": 1 incident open, alerts firing: unknown, not read, no release rolling out"
    ), summary
    assert "no alert firing" not in repr(result.missing_evidence)


def test_deploy_safety_with_neither_walk_read(demo_graph: neo4j.Driver) -> None:
    planner = _Planner(skip_walks=["FIRED_ON", "AFFECTED_BY"])
    result = _ask(demo_graph, "is it safe to deploy payment-api now?", planner)
    summary = _summary(result, "svc:payment-api")
    assert "open incidents: unknown, not read, alerts firing: unknown, not read" in summary
    [safety] = [
        m.description for m in result.missing_evidence if m.evidence_type == "deploy_safety"
    ]
    # Before: "no incident open and no alert firing is recorded at as_of" during the incident.
    assert "no incident open" not in safety, safety
    assert safety.endswith(
        "; whether an incident is open or an alert firing at as_of is unknown (not read), and "
        "none would be no sign that deploying is safe"
    ), safety
    [health] = [m.description for m in result.missing_evidence if m.evidence_type == "health_check"]
    assert "no incident open and no alert firing is what is recorded" not in health, health


def test_one_gap_for_the_failed_read_of_a_change_period(demo_graph: neo4j.Driver) -> None:
    request = InvestigationRequest(
        question="what changed between 2026-07-01 and 2026-07-15?",
        subject_id="acme/user:bob",
        as_of=datetime(2026, 7, 26, 12, 0, tzinfo=UTC),
        deadline_s=600,
    )
    executor = _ReadsFail(demo_graph, "change_events_in_window")
    result = investigate(request, driver=demo_graph, executor=executor, recorder=None)
    assert {tc.template_id for tc in result.tool_calls if tc.error} == {"change_events_in_window"}
    assert result.claims  # the runbook version and the retraction of the period
    gaps = [m.description for m in result.missing_evidence if m.required]
    # Before: "the run stopped (read_failed) before its search of the period ... may be
    # incomplete" and a second gap "a read of the run failed: change_events_in_window@3 ...".
    [gap] = [g for g in gaps if "change_events_in_window" in g]
    assert gap.startswith(
        "unknown, not absent: a read of the run failed before its search of the period from "
        "2026-07-01T00:00:00Z to 2026-07-15T23:59:59Z ('between 2026-07-01 and 2026-07-15') "
        "finished: change_events_in_window@3 ("
    ), gap
    assert "so the changes listed may be incomplete" in gap, gap
    assert not [g for g in gaps if "(read_failed)" in g], gaps
