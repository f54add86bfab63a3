"""Time words of a question (investigator.timeline): what "then", "now" and a date mean."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from investigator.evidence import Evidence, evidence_id_for, sha256_text
from investigator.planner import DeterministicPlanner, Known, PlanInput, steps_for
from investigator.rubric import Intent
from investigator.timeline import (
    EARLIEST,
    LATEST,
    AnchorEvent,
    reference_times,
    shift,
    time_references,
)

AS_OF = datetime(2026, 11, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("question", "event"),
    [
        (
            "Was the checkout release related to the CHK-5021 errors, and who owned checkout then?",
            AnchorEvent.FIRST_ERROR,
        ),
        ("Who owned payment-api at that moment?", AnchorEvent.FIRST_ERROR),
        ("Which runbook applied at the time?", AnchorEvent.FIRST_ERROR),
        ("Who owned payment-api at the time of the incident?", AnchorEvent.INCIDENT_START),
        ("Who owned payment-api at the start of the incident?", AnchorEvent.INCIDENT_START),
        ("Who owned payment-api when the incident was resolved?", AnchorEvent.INCIDENT_END),
        ("Who owned payment-api at the end of the outage?", AnchorEvent.INCIDENT_END),
        ("事故结束时哪个团队负责 payment-api？", AnchorEvent.INCIDENT_END),
        ("Who was on call when it fired?", AnchorEvent.ALERT),
        ("Who owned payment-api at the release?", AnchorEvent.RELEASE),
        ("当时谁负责 payment-api？", AnchorEvent.FIRST_ERROR),
        ("那时哪个团队负责 payment-api？", AnchorEvent.FIRST_ERROR),
        ("事发时哪个团队负责 payment-api？", AnchorEvent.INCIDENT_START),
        ("Who owned payment-api when PAY-4097 started?", AnchorEvent.FIRST_ERROR),
        ("Who owned it when the errors began?", AnchorEvent.FIRST_ERROR),
        ("Who owns payment-api?", None),
        ("Who owns payment-api now?", None),
    ],
)
def test_event_words_name_the_anchor_event(question: str, event: AnchorEvent | None) -> None:
    assert time_references(question).event is event


def test_now_and_explicit_times() -> None:
    assert time_references("Who owns payment-api currently?").now
    assert time_references("目前谁负责 payment-api？").now
    refs = time_references("Who owned payment-api on 2026-07-20 and at 2026-07-23T10:02:00Z?")
    assert refs.explicit == [
        datetime(2026, 7, 20, tzinfo=UTC),
        datetime(2026, 7, 23, 10, 2, tzinfo=UTC),
    ]
    # A date inside an id or a name is not a time reference.
    assert time_references("What happened in inc:2026-07-23-payments?").explicit == []
    assert time_references("the 2026-07-23 payments incident").explicit == []


def _ev(element_id: str, types: list[str], **kw: object) -> Evidence:
    return Evidence(
        evidence_id=evidence_id_for(element_id, 1, sha256_text(element_id), []),
        element_id=element_id,
        content=element_id,
        evidence_types=types,
        **kw,
    )


FIRST = _ev(
    "EMITTED|svc:a|err:E-1",
    ["error_first_seen"],
    context={"error_code": "err:E-1", "first_seen": "2026-07-23T10:02:38Z"},
)
RELEASE = _ev(
    "deploy:r1",
    ["deployment_time"],
    type="Deployment",
    name="r1",
    context={"service": "svc:a"},
    props={"finished_at": "2026-07-23T10:02:00Z"},
)


def test_then_resolves_to_the_first_error_and_the_release_when_named() -> None:
    then = reference_times(time_references("who owned it then?"), [FIRST, RELEASE], as_of=AS_OF)
    assert [(r.at, r.label) for r in then] == [
        (datetime(2026, 7, 23, 10, 2, 38, tzinfo=UTC), "the first E-1 error")
    ]
    release = reference_times(
        time_references("who owned it at the release?"), [FIRST, RELEASE], as_of=AS_OF
    )
    assert [r.label for r in release] == ["the release r1"]


INCIDENT = _ev(
    "inc:1",
    ["incident_context"],
    type="Incident",
    name="Payments down",
    props={"started_at": "2026-07-23T10:02:38Z", "resolved_at": "2026-07-23T10:48:00Z"},
)


def test_when_the_incident_was_resolved_is_its_resolution_not_as_of() -> None:
    resolved = datetime(2026, 7, 23, 10, 48, tzinfo=UTC)
    for question in (
        "Who owned payment-api when the incident was resolved?",
        "Who owned it at the end of the incident?",
        "Who owned it after the incident?",
    ):
        refs = reference_times(time_references(question), [FIRST, INCIDENT], as_of=AS_OF)
        assert [(r.at, r.label) for r in refs] == [
            (resolved, "the resolution of incident Payments down")
        ], question
    before = reference_times(
        time_references("Who owned it before the incident was resolved?"), [INCIDENT], as_of=AS_OF
    )
    assert [r.at for r in before] == [resolved - timedelta(seconds=1)]
    # Not resolved by as_of: no stand-in, not even the plain "then"'s first error.
    early = datetime(2026, 7, 23, 10, 30, tzinfo=UTC)
    question = time_references("Who owned it when the incident was resolved?")
    assert reference_times(question, [FIRST, INCIDENT], as_of=early) == []
    assert reference_times(time_references("who owned it then?"), [INCIDENT], as_of=AS_OF)[
        0
    ].label == ("the start of incident Payments down")


def test_before_the_release_is_before_it_started() -> None:
    started = RELEASE.model_copy(
        update={"props": {**RELEASE.props, "started_at": "2026-07-23T09:55:12Z"}}
    )
    before = reference_times(
        time_references("who owned it before the release?"), [started], as_of=AS_OF
    )
    assert [(r.at, r.label) for r in before] == [
        (datetime(2026, 7, 23, 9, 55, 11, tzinfo=UTC), "1 s before the start of the release r1")
    ]
    finished = reference_times(
        time_references("who owned it before the release finished?"), [started], as_of=AS_OF
    )
    assert [r.at for r in finished] == [datetime(2026, 7, 23, 10, 1, 59, tzinfo=UTC)]
    # A release record without its start: one second before it finished, as before.
    bare = reference_times(
        time_references("who owned it before the release?"), [RELEASE], as_of=AS_OF
    )
    assert [r.at for r in bare] == [datetime(2026, 7, 23, 10, 1, 59, tzinfo=UTC)]


def test_an_event_after_as_of_is_no_reference() -> None:
    early = datetime(2026, 7, 1, tzinfo=UTC)
    assert reference_times(time_references("who owned it then?"), [FIRST], as_of=early) == []


@pytest.mark.parametrize(
    "as_of",
    [EARLIEST, EARLIEST + timedelta(days=1), datetime(2020, 1, 1, tzinfo=UTC), LATEST],
)
def test_plans_hold_at_any_as_of(as_of: datetime) -> None:
    """A first error after as_of, or an as_of at the calendar's ends, never breaks a plan."""
    known = Known(services=["svc:a"], first_seen=datetime(2026, 7, 23, 10, 2, 38, tzinfo=UTC))
    inp = PlanInput(question="Was the release related?", as_of=as_of, known_at=AS_OF)
    steps = steps_for(["deployment_time", "change_event"], known, as_of=as_of)
    plan = DeterministicPlanner().plan(inp, [Intent.DEPLOYMENT_CORRELATION], known, steps)
    scope = plan.time_scope
    assert scope.from_ is not None and scope.to is not None and scope.from_ <= scope.to
    for step in steps:
        if "to" in step.params:
            assert str(step.params["from"]) <= str(step.params["to"])


def test_shift_saturates() -> None:
    assert shift(EARLIEST, -timedelta(days=7)) == EARLIEST
    assert shift(LATEST, timedelta(days=7)) == LATEST


def test_competing_cause_checks_count_only_successful_calls() -> None:
    from types import SimpleNamespace

    from investigator.planner import competing_cause_status, competing_cause_steps

    first = datetime(2026, 7, 23, 10, 2, 38, tzinfo=UTC)
    known = Known(services=["svc:a"], first_seen=first, upstream=["svc:db"])
    intents = [Intent.DEPLOYMENT_CORRELATION]
    steps = competing_cause_steps(intents, known, as_of=AS_OF, focus=["svc:a"])
    assert {s.template_id for s in steps} == {
        "change_events_in_window",
        "deployments_in_window",
        "dependency_neighbourhood",
        "rollouts_under_way",
    }
    calls = [
        SimpleNamespace(
            template=f"{s.template_id}@1",
            params=dict(s.params),
            options={**s.options, "extra": 1},
            evidence_type=s.evidence_type,
            error=None,
        )
        for s in steps
    ]
    done = competing_cause_status(intents, known, calls, as_of=AS_OF, focus=["svc:a"])
    assert done.complete and done.anchor == first
    calls[0].error = "query timed out after 5 s and was cancelled"
    partly = competing_cause_status(intents, known, calls, as_of=AS_OF, focus=["svc:a"])
    assert not partly.complete and len(partly.not_run) == 1
    # No first error by as_of: nothing to check, and no stronger verdict either.
    early = competing_cause_status(
        intents, known, calls, as_of=datetime(2026, 7, 1, tzinfo=UTC), focus=["svc:a"]
    )
    assert not early.complete


def test_when_it_fired_resolves_to_the_alert_fire_time() -> None:
    fired = [(datetime(2026, 7, 23, 10, 3, 10, tzinfo=UTC), "alert:HighErrors")]
    refs = reference_times(
        time_references("Who owned svc:a when HighErrors fired?"),
        [FIRST],
        as_of=AS_OF,
        alerts_fired=fired,
    )
    assert [(r.at, r.label) for r in refs] == [(fired[0][0], "the HighErrors alert")]


@pytest.mark.parametrize(
    ("question", "unresolved"),
    [
        ("Who owned payment-api yesterday at 10:02?", ["yesterday", "at 10:02"]),
        ("What broke 2 hours ago, and a few minutes ago?", ["2 hours ago", "a few minutes ago"]),
        ("Who owned it on Monday, and last week?", ["on Monday", "last week"]),
        ("What paged last night?", ["last night"]),
        ("Which runbook applied the day before yesterday?", ["the day before yesterday"]),
        ("昨天谁负责 payment-api？3小时前呢？", ["昨天", "3小时前"]),
        # Resolved words, explicit times and times inside ids are not listed.
        ("Who owned payment-api then? And now?", []),
        ("Who owned payment-api at 2026-07-23T10:02:00Z?", []),
        ("Was the 10:02 release of payment-api related to the PAY-4097 errors?", []),
        ("What happened in inc:2026-07-23-payments today?", []),
    ],
)
def test_relative_time_words_are_listed_not_resolved(question: str, unresolved: list[str]) -> None:
    refs = time_references(question)
    assert refs.unresolved == unresolved
    if unresolved:  # listing them resolves nothing: such a question is about as_of
        assert not refs.anchored
