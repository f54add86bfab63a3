"""An amount before or after an event ("two days before the alert"), which release "the first
release" is, and why a time the answer is not about was not used (pure: the question's words
and evidence as the gate admits it)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from investigator.evidence import Evidence
from investigator.timeline import (
    AnchorEvent,
    EventSide,
    ReleasePick,
    SeenEvent,
    UnplacedReason,
    reference_times,
    release_pick,
    time_references,
    unplaced_times,
)

AS_OF = datetime(2026, 12, 1, tzinfo=UTC)
ALERT = datetime(2026, 11, 11, 10, 5, tzinfo=UTC)


@pytest.mark.parametrize(
    ("question", "event", "side", "offset"),
    [
        ("Who owned it two days before the alert?", AnchorEvent.ALERT, EventSide.BEFORE,
         timedelta(days=2)),
        ("Which runbook applied two hours after the alert fired?", AnchorEvent.ALERT,
         EventSide.AFTER, timedelta(hours=2)),
        ("Who owned it 30 minutes before the release?", AnchorEvent.RELEASE, EventSide.BEFORE,
         timedelta(minutes=30)),
        ("Who owned it the day after the incident?", AnchorEvent.INCIDENT_END, EventSide.AFTER,
         timedelta(days=1)),
        ("Who owned it an hour and a half before the alert?", AnchorEvent.ALERT,
         EventSide.BEFORE, timedelta(minutes=90)),
        ("Who owned it one and a half hours before the first error?", AnchorEvent.FIRST_ERROR,
         EventSide.BEFORE, timedelta(minutes=90)),
        ("Who owned it 2h after the release?", AnchorEvent.RELEASE, EventSide.AFTER,
         timedelta(hours=2)),
        ("Who owned it a week before the incident?", AnchorEvent.INCIDENT_START,
         EventSide.BEFORE, timedelta(weeks=1)),
        # No amount: 1 s before, or the event itself, as before.
        ("Who owned it just before the release?", AnchorEvent.RELEASE, EventSide.BEFORE, None),
        ("Who owned PAY-4097 before the release?", AnchorEvent.RELEASE, EventSide.BEFORE, None),
    ],
)  # fmt: skip
def test_an_amount_before_or_after_an_event_is_read(
    question: str, event: AnchorEvent, side: EventSide, offset: timedelta | None
) -> None:
    refs = time_references(question, AS_OF)
    assert (refs.event, refs.side, refs.offset) == (event, side, offset)
    assert refs.unresolved == []


@pytest.mark.parametrize(
    ("question", "words", "why"),
    [
        ("Who owned it a few hours before the alert?", "a few hours before the alert",
         "'a few hours' is no exact amount"),
        ("Who owned it long before the release?", "long before the release",
         "'long' is no exact amount"),
        ("Who owned it hours after the alert fired?", "hours after the alert fired",
         "'hours' is no exact amount"),
        ("Who owned it the morning after the incident?", "the morning after the incident",
         "'the morning' names a part of a day, which has no clock time here"),
        ("Who owned it in the two days before the release?",
         "in the two days before the release", "'in the two days' is a period, not an instant"),
        ("Who owned it less than two hours after the alert?",
         "less than two hours after the alert", "'less than two hours' is a bound, not an amount"),
        ("Who owned it a month before the release?", "a month before the release",
         "'a month': a month has no fixed length"),
        ("Who owned it before the second release?", "before the second release",
         "which release 'second release' means is not read (only the first, the previous or "
         "the latest release, or one named by its version)"),
        ("Who owned it a few days before 2026-11-11?", "a few days before 2026-11-11",
         "'a few days' is no exact amount"),
    ],
)  # fmt: skip
def test_an_amount_or_a_pick_it_cannot_apply_is_listed_never_the_event(
    question: str, words: str, why: str
) -> None:
    # Before, each was the event itself (or 1 s before it), `complete`, without a word.
    refs = time_references(question, AS_OF)
    assert refs.event is None and refs.explicit == []
    assert refs.unresolved == [words]
    unplaced = unplaced_times(question, AS_OF, [])
    assert [(u.words, u.reason, u.detail) for u in unplaced] == [
        (words, UnplacedReason.NOT_APPLIED, why)
    ]


def test_an_amount_before_or_after_a_written_time_moves_it() -> None:
    before = time_references("Who owned it two days before 2026-11-11?", AS_OF)
    assert before.explicit == [datetime(2026, 11, 9, tzinfo=UTC)]
    assert before.named[0].reading == "2 d before 2026-11-11T00:00:00Z, the start of that day"
    after = time_references("Who owned it 90 minutes after 2026-11-11T10:05:00Z?", AS_OF)
    assert after.explicit == [datetime(2026, 11, 11, 11, 35, tzinfo=UTC)]
    assert after.named[0].words == "90 minutes after 2026-11-11T10:05:00Z"


@pytest.mark.parametrize(
    ("words", "pick"),
    [
        ("before the first release", ReleasePick.FIRST),
        ("before the earliest deployment", ReleasePick.FIRST),
        ("before the previous release", ReleasePick.PREVIOUS),
        ("before the earlier release", ReleasePick.PREVIOUS),
        ("before the last release", ReleasePick.LATEST),
        ("before the release", None),
        ("before the 2026.11.09.1 release", None),
    ],
)
def test_which_release_the_words_pick(words: str, pick: ReleasePick | None) -> None:
    assert release_pick(words) is pick


def _release(name: str, finished: datetime) -> Evidence:
    return Evidence(
        evidence_id=f"ev:{name}",
        element_id=f"deploy:{name}",
        kind="node",
        type="Deployment",
        name=name,
        evidence_types=["deployment_time"],
        context={"service": "svc:tps-report", "finished_at": finished.isoformat()},
        valid_from=finished,
    )


def test_the_first_and_the_previous_release_are_chosen_among_those_known() -> None:
    older = datetime(2026, 11, 9, 14, tzinfo=UTC)
    newer = datetime(2026, 11, 11, 9, 58, tzinfo=UTC)
    evidence = [_release("tps-2026.11.11.1", newer)]
    seen = [SeenEvent(older, "tps-2026.11.09.1", "svc:tps-report", "deploy:tps-2026.11.09.1")]

    def placed(question: str, **kw: bool) -> list[tuple[datetime, str]]:
        refs = time_references(question, AS_OF)
        found = reference_times(refs, evidence, as_of=AS_OF, releases=seen, **kw)
        return [(r.at, r.label) for r in found]

    one_s = timedelta(seconds=1)
    # "first": the earliest, once the services' earliest releases were read, never before.
    assert placed("Who owned it before the first release?") == []
    assert placed("Who owned it before the first release?", release_history_read=True) == [
        (older - one_s, "1 s before the release tps-2026.11.09.1")
    ]
    # "previous": the one before the latest (a release read twice is one release).
    assert placed("Who owned it before the previous release?") == [
        (older - one_s, "1 s before the release tps-2026.11.09.1")
    ]
    assert placed("Who owned it before the last release?") == [
        (newer - one_s, "1 s before the release tps-2026.11.11.1")
    ]
    # An amount moves the instant from the release the words pick, its instant said.
    assert placed("Who owned it two days after the first release?", release_history_read=True) == [
        (older + timedelta(days=2), "2 d after the release tps-2026.11.09.1 (2026-11-09T14:00:00Z)")
    ]


def test_an_event_instant_after_as_of_is_said_as_such() -> None:
    fired = Evidence(
        evidence_id="ev:fired",
        element_id="FIRED_ON|alert:TpsReportErrorRateHigh|svc:tps-report|x",
        kind="relationship",
        type="FIRED_ON",
        evidence_types=["alert_definition"],
        context={"fired_at": ALERT.isoformat()},
        valid_from=ALERT,
    )
    question = "Which runbook applied two hours after the alert fired?"
    as_of = ALERT + timedelta(hours=1)
    late: list = []  # type: ignore[type-arg]
    found = reference_times(time_references(question, as_of), [fired], as_of=as_of, late=late)
    assert found == []
    assert [(r.at, r.label) for r in late] == [
        (
            ALERT + timedelta(hours=2),
            "2 h after the TpsReportErrorRateHigh alert (2026-11-11T10:05:00Z)",
        )
    ]
    unplaced = unplaced_times(question, as_of, found, late=late)
    assert [(u.reason, u.detail) for u in unplaced] == [
        (
            UnplacedReason.AFTER_AS_OF,
            "2 h after the TpsReportErrorRateHigh alert (2026-11-11T10:05:00Z), "
            "2026-11-11T12:05:00Z, after as_of 2026-11-11T11:05:00Z",
        )
    ]


def test_an_event_not_placed_says_whether_it_was_not_found_or_the_deadline_cut_it() -> None:
    question = "Who owned it when the incident started?"
    not_found = unplaced_times(question, AS_OF, [])
    assert [(u.reason, u.detail) for u in not_found] == [
        (UnplacedReason.EVENT_NOT_FOUND, "no incident start is found by as_of 2026-12-01T00:00:00Z")
    ]
    cut = unplaced_times(question, AS_OF, [], cut_short_by="deadline")
    assert [(u.reason, u.detail) for u in cut] == [
        (
            UnplacedReason.DEADLINE,
            "the run's deadline stopped the search before the incident start was found",
        )
    ]
    # Words it does not read stay what they are, deadline or not.
    unread = unplaced_times("Who owned it the other day?", AS_OF, [], cut_short_by="deadline")
    assert [(u.words, u.reason) for u in unread] == [("the other day", UnplacedReason.NOT_READ)]
    # Its last round (--max-rounds) stopped it: not found is not said either.
    rounds = unplaced_times(question, AS_OF, [], cut_short_by="max_rounds")
    assert [(u.reason, u.detail) for u in rounds] == [
        (
            UnplacedReason.CUT_SHORT,
            "the run stopped after its last round (--max-rounds) before the incident start "
            "was found",
        )
    ]
