"""Times named in a question, and `--known-at` (investigator.timeline, pure): which words
resolve to which instant, which are listed as not resolved, and what is refused.
The CLI end to end is tests/test_time_words_cli.py."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from investigator.errors import BadInput
from investigator.timeline import (
    AnchorEvent,
    EventSide,
    SeenEvent,
    reference_times,
    time_references,
)

NO_ZONE = "explicit, no zone given: read as UTC"
DAY = "explicit, a day: its start, 00:00 UTC"
AS_OF = datetime(2026, 12, 1, tzinfo=UTC)


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]


# -- unit: what the words resolve to -------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "at", "why"),
    [
        (
            "Who owned payment-api on 23 July 2026 at 10:03 UTC?",
            utc(2026, 7, 23, 10, 3),
            "explicit",
        ),
        ("Who owned it on July 23, 2026 at 10:03 UTC?", utc(2026, 7, 23, 10, 3), "explicit"),
        ("Who owned it 2026-07-23 at 10:03 UTC?", utc(2026, 7, 23, 10, 3), "explicit"),
        ("Who owned it at 10:03 on 2026-07-23?", utc(2026, 7, 23, 10, 3), NO_ZONE),
        ("Who owned it on 2026-07-23 at 10:03?", utc(2026, 7, 23, 10, 3), NO_ZONE),
        ("Who owned it 10:03 UTC on 23 July 2026?", utc(2026, 7, 23, 10, 3), "explicit"),
        ("Who owned it on Thursday, 23rd July 2026?", utc(2026, 7, 23), DAY),
        ("Who owned it on July 23, 2026?", utc(2026, 7, 23), DAY),
        ("Who owned it on 2026-07-23?", utc(2026, 7, 23), DAY),
        ("Who owned it at 10pm +02:00 on 2026-07-23?", utc(2026, 7, 23, 20, 0), "explicit"),
        ("Who owned it on 2026-07-23 at 10:03 UTC+2?", utc(2026, 7, 23, 8, 3), "explicit"),
        ("Who owned it at midnight on July 24, 2026?", utc(2026, 7, 24), NO_ZONE),
        ("2026年7月23日 10:03 谁负责 payment-api？", utc(2026, 7, 23, 10, 3), NO_ZONE),
        # a Chinese day with its year needs no word before it (h39-walk-time)
        ("2026年7月23日谁负责 payment-api？", utc(2026, 7, 23), DAY),
        ("Who owned it at 2026-07-23T10:03:00Z?", utc(2026, 7, 23, 10, 3), "explicit"),
    ],
)
def test_dates_with_their_year_resolve_as_written_or_as_utc_said(
    question: str, at: datetime, why: str
) -> None:
    refs = time_references(question)
    assert refs.explicit == [at] and refs.unresolved == []
    # The claim says how a time without a zone, or a day, was read.
    [ref] = reference_times(refs, [], as_of=AS_OF)
    assert (ref.at, ref.label, ref.why) == (at, "the time named in the question", why)


@pytest.mark.parametrize(
    ("question", "words"),
    [
        # no year: never guessed
        ("Who owned payment-api on July 23?", ["on July 23"]),
        ("Who owned payment-api on the 23rd of July?", ["on the 23rd of July"]),
        ("Who owned it in July?", ["in July"]),
        ("7月23日谁负责 payment-api？", ["7月23日"]),
        # a clock time without a date
        ("Who owned payment-api at 10:03?", ["at 10:03"]),
        ("Who owned payment-api 10:03 UTC?", ["10:03 UTC"]),
        ("Who owned payment-api yesterday at 10:02?", ["yesterday", "at 10:02"]),
        ("Who owned payment-api at midnight on July 24?", ["midnight on July 24"]),
        ("Which runbook applies, it fired at 03:12: whose?", ["at 03:12"]),
        # a zone it does not convert, an impossible date or clock, an ambiguous numeric date
        ("Who owned it on 23 July 2026 at 10:03 PST?", ["on 23 July 2026 at 10:03 PST"]),
        ("Who owned it on Feb 30, 2026?", ["on Feb 30, 2026"]),
        ("Who owned it at 25:00 on 2026-07-23?", ["25:00 on 2026-07-23"]),
        ("Who owned it on 07/23/2026?", ["07/23/2026"]),
        ("Who owned it on 24.07.2026?", ["24.07.2026"]),  # was dropped (h39-walk-time)
        # weekday, week, relative to an event that is not an anchor
        ("Who owned payment-api on Monday?", ["on Monday"]),
        ("Who owned payment-api last week?", ["last week"]),
        # ("right after the ownership change" is placed since h30-before: test_owner_change_*)
        ("Which runbook applied right after the migration?", ["right after the migration"]),
        ("Who owned payment-api before the rollback?", ["before the rollback"]),
        # the moment of an event that is not an anchor: never "now"
        (
            "Who owned payment-api when the incident was declared?",
            ["when the incident was declared"],
        ),
        ("What happened when the release was rolled back?", ["when the release was rolled back"]),
        ("Who owned payment-api at the end of the migration?", ["at the end of the migration"]),
        ("变更前谁负责 payment-api？", ["变更前"]),  # before a change: not an anchor event
        # a part of a day without its day, a thing named by an id, a date with no word
        # placing it: each was dropped without a word (the answer was "now", complete)
        ("Who owned payment-api in the morning?", ["in the morning"]),
        # a part of an event's day, or of "that day" (h39-walk-time: each was dropped)
        ("Who owned payment-api the night of the incident?", ["the night of the incident"]),
        ("Who owned payment-api the morning of the release?", ["the morning of the release"]),
        ("Who owned payment-api that day?", ["that day"]),
        (
            "Who owned risk-engine when RR-2026-07-23a was published?",
            ["when RR-2026-07-23a was published"],
        ),
        ("Who owned payment-api 2026-07-23?", ["2026-07-23"]),
        ("Who owned it, 2026-07-22 and 2026-07-23?", ["2026-07-22", "2026-07-23"]),
    ],
)
def test_time_words_it_cannot_place_are_listed(question: str, words: list[str]) -> None:
    refs = time_references(question)
    assert refs.unresolved == words
    assert refs.explicit == []


BEFORE_DAY = "explicit, 1 s before 2026-07-24T00:00:00Z, the start of that day"


@pytest.mark.parametrize(
    ("question", "placed"),
    [
        # before a day is 1 s before its start; before a time, 1 s before it
        ("Who owned payment-api before 2026-07-24?", [(utc(2026, 7, 23, 23, 59, 59), BEFORE_DAY)]),
        ("Who owned it before 24 July 2026?", [(utc(2026, 7, 23, 23, 59, 59), BEFORE_DAY)]),
        ("Who owned it prior to 2026-07-23T10:00:00Z?",
         [(utc(2026, 7, 23, 9, 59, 59), "explicit, 1 s before 2026-07-23T10:00:00Z")]),
        # after a day is its end; after a time, the time itself; since a day, its start
        ("Who owned it after 2026-07-23?",
         [(utc(2026, 7, 24), "explicit, after a day: its end, 00:00 UTC of the next day")]),
        ("Who owned it after 2026-07-23T10:00:00Z?", [(utc(2026, 7, 23, 10), "explicit")]),
        ("Who owned it since 2026-07-24?", [(utc(2026, 7, 24), DAY)]),
        # a period: both ends (a day at its end: its last second)
        ("Who owned payment-api between 2026-07-23 and 2026-07-25?", [
            (utc(2026, 7, 23), "explicit, the start of the period: that day's start, 00:00 UTC"),
            (utc(2026, 7, 25, 23, 59, 59),
             "explicit, the end of the period: that day's last second, 23:59:59 UTC"),
        ]),
        ("Who owned it from 2026-07-23T10:00:00Z to 2026-07-23T11:00:00Z?",
         [(utc(2026, 7, 23, 10), "explicit"), (utc(2026, 7, 23, 11), "explicit")]),
        # a part of a day: the day, said so (no time zone says when a morning is)
        ("Who owned payment-api on the morning of 2026-07-23?", [(utc(2026, 7, 23),
         "explicit, the morning of a day: the day's start, 00:00 UTC; the morning itself is "
         "not placed")]),
        ("Who owned it during the night of 2026-07-23?", [(utc(2026, 7, 23),
         "explicit, the night of a day: the day's start, 00:00 UTC; the night itself is not "
         "placed")]),
        ("Who owned it on 2026-07-23 in the morning?", [(utc(2026, 7, 23),
         "explicit, the morning of a day: the day's start, 00:00 UTC; the morning itself is "
         "not placed")]),
    ],
)  # fmt: skip
def test_a_side_or_a_period_of_a_written_time_is_placed(
    question: str, placed: list[tuple[datetime, str]]
) -> None:
    refs = time_references(question)
    assert refs.unresolved == []
    refs_at = reference_times(refs, [], as_of=AS_OF)
    assert [(r.at, r.why) for r in refs_at] == placed


@pytest.mark.parametrize(
    ("question", "event", "words"),
    [
        ("Who owned payment-api during the payments incident?", "incident_start",
         "during the payments incident"),
        ("Who owned it while the incident was ongoing?", "incident_start",
         "while the incident was ongoing"),
        ("Who owned payment-api while PAY-4097 was happening?", "first_error",
         "while PAY-4097 was happening"),
        ("Which runbook applied while the errors were happening?", "first_error",
         "while the errors were happening"),
    ],
)  # fmt: skip
def test_a_named_incident_and_while_errors_happened_are_anchor_events(
    question: str, event: str, words: str
) -> None:
    refs = time_references(question)
    assert (refs.event, refs.event_words, refs.unresolved) == (AnchorEvent(event), words, [])


def test_a_pasted_alerts_zero_end_time_is_no_time() -> None:
    # Alertmanager writes Go's zero time as the `endsAt` of a firing alert; it was read as a
    # time asked about ("in force at 0001-01-01T00:00:00Z").
    refs = time_references(
        '{"status": "firing", "startsAt": "2026-12-04T01:02:11Z", "endsAt": '
        '"0001-01-01T00:00:00Z", "labels": {"alertname": "KubePersistentVolumeFillingUp"}}'
    )
    assert refs.explicit == [datetime(2026, 12, 4, 1, 2, 11, tzinfo=UTC)]
    assert refs.unresolved == []


@pytest.mark.parametrize(
    ("question", "event", "side", "words"),
    [
        ("Who owned payment-api before the release?", "release", "before", "before the release"),
        ("Who owned it just before the release went out?", "release", "before",
         "just before the release went out"),
        ("Which runbook applied after the deploy?", "release", "after", "after the deploy"),
        ("Who owned it before the release-2026.07.20.2 deploy?", "release", "before",
         "before the release-2026.07.20.2 deploy"),
        ("Who owned it right before the PAY-4097 errors started?", "first_error", "before",
         "right before the PAY-4097 errors started"),
        ("Who owned it after the errors began?", "first_error", "after", "after the errors began"),
        ("Who owned it before the incident?", "incident_start", "before", "before the incident"),
        ("Who owned it after the incident started?", "incident_start", "after",
         "after the incident started"),
        # the incident's end is its record's `resolved_at`
        ("Who owned payment-api after the incident?", "incident_end", "after",
         "after the incident"),
        ("Who owned it just before the outage was resolved?", "incident_end", "before",
         "just before the outage was resolved"),
        ("Before the alert fired, who owned it?", "alert", "before", "Before the alert fired"),
        # an incident named by its id needs no article
        ("Who owned payment-api before inc:2026-07-23-payments?", "incident_start", "before",
         "before inc:2026-07-23-payments"),
        ("Who owned payment-api after inc:2026-07-23-payments?", "incident_end", "after",
         "after inc:2026-07-23-payments"),
        ("Who owned it after incident inc:2026-07-23-payments started?", "incident_start",
         "after", "after incident inc:2026-07-23-payments started"),
        ("发布前谁负责 payment-api？", "release", "before", "发布前"),
        ("发布后谁负责 payment-api？", "release", "after", "发布后"),
    ],
)  # fmt: skip
def test_before_and_after_an_anchor_event_are_placed(
    question: str, event: str, side: str, words: str
) -> None:
    refs = time_references(question)
    assert (refs.event, refs.side, refs.event_words) == (
        AnchorEvent(event),
        EventSide(side),
        words,
    )
    assert refs.unresolved == []


@pytest.mark.parametrize(
    "question",
    [
        # the seed question: "the 10:02 release" names a release, "at that moment" is an event
        "Was the 10:02 release of payment-api related to the PAY-4097 errors? Who owned the "
        "service at that moment? Which runbook version applied?",
        "Which release of payment-api was deployed shortly before the PAY-4097 errors started?",
        "When did the payment-api release 2026.07.23.1 finish, before or after the PAY-4097 "
        "errors began?",
        "Since when does payment-api emit PAY-1002?",
        "What happened in inc:2026-07-23-payments?",
        "Who may 3 teams call?",
        "当时谁负责 payment-api？",
    ],
)
def test_names_and_anchor_words_are_not_flagged(question: str) -> None:
    refs = time_references(question)
    assert refs.unresolved == [] and refs.explicit == []


def test_a_time_after_as_of_is_not_a_reference_and_is_named() -> None:
    from investigator.timeline import time_words_not_used

    question = "Who owned payment-api on 2026-07-25?"
    as_of = utc(2026, 7, 20)
    assert reference_times(time_references(question), [], as_of=as_of) == []
    assert time_words_not_used(question, as_of) == ["on 2026-07-25"]
    # At or after it, it is used and nothing is listed.
    later = utc(2026, 7, 26)
    [ref] = reference_times(time_references(question), [], as_of=later)
    assert (ref.at, ref.why) == (utc(2026, 7, 25), DAY)
    assert time_words_not_used(question, later) == []


def test_a_future_known_at_is_bad_input() -> None:
    from investigator.timeline import refuse_future_known_at

    now = utc(2026, 12, 2, 12)
    refuse_future_known_at("--known-at", None, now)
    refuse_future_known_at("--known-at", now, now)
    with pytest.raises(BadInput, match=r"--known-at 2030-01-01T00:00:00Z is in the future"):
        refuse_future_known_at("--known-at", utc(2030, 1, 1), now)


@pytest.mark.parametrize(
    ("question", "event", "words"),
    [
        ("Who owned payment-api when the first error happened?", "first_error",
         "when the first error happened"),
        ("Who owned it when the first error occurred?", "first_error",
         "when the first error occurred"),
        ("Who owned it when the errors first started?", "first_error",
         "when the errors first started"),
        ("Who owned it when PAY-4097 was first seen?", "first_error",
         "when PAY-4097 was first seen"),
        ("Who owned it when it first happened?", "first_error", "when it first happened"),
        ("Who owned it the moment the errors started?", "first_error",
         "the moment the errors started"),
        ("Who owned it at the first error?", "first_error", "at the first error"),
        ("Which runbook applied at the time of the PAY-4097 errors?", "first_error",
         "at the time of the PAY-4097 errors"),
        ("Who owned it when the alert went off?", "alert", "when the alert went off"),
        ("Who owned it when the alert was triggered?", "alert", "when the alert was triggered"),
        ("Who owned it at the time of the release?", "release", "at the time of the release"),
        ("Who owned it at the time of the incident?", "incident_start",
         "at the time of the incident"),
    ],
)  # fmt: skip
def test_the_anchor_events_in_the_users_own_words(question: str, event: str, words: str) -> None:
    # Before, the first error's phrases and "went off" were no time words at all (answered
    # at as_of, nothing said), and "at the time of ..." was the plain "then" whatever it named.
    refs = time_references(question)
    assert (refs.event, refs.event_words, refs.unresolved) == (AnchorEvent(event), words, [])


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("Who owned payment-api when the first timeout happened?",
         "when the first timeout happened"),
        ("Who owned it when the latency spike occurred?", "when the latency spike occurred"),
        ("Who owned it when the database went down?", "when the database went down"),
        ("Who owned it when the pool was exhausted?", "when the pool was exhausted"),
        ("Who owned it at the time of the migration?", "at the time of the migration"),
        ("Who owned it at the first timeout?", "at the first timeout"),
    ],
)  # fmt: skip
def test_a_moment_that_is_no_anchor_is_listed_never_dropped(question: str, words: str) -> None:
    refs = time_references(question)
    assert refs.event is None and refs.unresolved == [words]


@pytest.mark.parametrize(
    "question",
    [
        "When did the first error happen?",
        "When was PAY-4097 first seen on payment-api?",
        "Which runbook applies when the pool is exhausted?",
        "Who owned payment-api, and when was it changed?",
    ],
)
def test_questions_about_when_are_no_time_words(question: str) -> None:
    refs = time_references(question)
    assert refs.event is None and refs.unresolved == []


def test_an_error_named_in_words_has_no_stand_in_before_it_happened() -> None:
    # At 10:02:30 the release (10:02:00) just went out and no error of this episode is
    # known: "then" is the release, "when the first error happened" nothing (not the
    # release, nor an error of the year before).
    release = SeenEvent(utc(2026, 7, 23, 10, 2), "release-2026.07.23.1", "svc:payment-api")
    at = utc(2026, 7, 23, 10, 2, 30)
    then = reference_times(time_references("Who owned it then?"), [], as_of=at, releases=[release])
    assert [r.label for r in then] == ["the release release-2026.07.23.1"]
    named = time_references("Who owned it when the first error happened?")
    assert reference_times(named, [], as_of=at, releases=[release]) == []


@pytest.mark.parametrize(
    ("question", "at"),
    [
        ("2026年7月24日之前谁负责 payment-api？", utc(2026, 7, 23, 23, 59, 59)),
        ("在2026年7月24日以前，谁负责 payment-api？", utc(2026, 7, 23, 23, 59, 59)),
        ("2026年7月24日前谁负责 payment-api？", utc(2026, 7, 23, 23, 59, 59)),
        ("2026年7月23日之后谁负责 payment-api？", utc(2026, 7, 24)),
        ("2026年7月23日 10:03之前谁负责 payment-api？", utc(2026, 7, 23, 10, 2, 59)),
        # 后端 is "backend", not "after": the day itself
        ("2026年7月23日后端谁负责？", utc(2026, 7, 23)),
    ],
)
def test_a_chinese_side_written_after_the_time_is_read(question: str, at: datetime) -> None:
    refs = time_references(question)
    assert refs.explicit == [at] and refs.unresolved == [], refs


def test_a_release_or_version_with_dots_is_no_day() -> None:
    for question in (
        "Was release 2026.07.23.1 related to PAY-4097?",
        "Was the 2026.07.23.1 release bad?",
        "Did payment-api 1.2.10 on 10.0.0.1 fail?",
    ):
        assert time_references(question).unresolved == [], question
