"""Relative time words read against the run's as_of, in UTC, as an on-call engineer types
them after the fact: "what changed yesterday?", "what alerts fired on payment-api
yesterday?", "who owned payment-api 2 hours ago?", "which releases went out last week?";
against the real Neo4j with the demo dataset, through the CLI.

Before (h31-relative), every one of them was listed as not resolved and the answer was at
as_of: "what changed yesterday?" listed the changes before the incident's first error,
whatever day as_of was, and the run was `partial`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from investigator.timeline import time_references, unplaced_times

BOB = ("--subject", "acme/user:bob", "--deadline-seconds", "300")
RELEASE_0723 = "Release deploy:release-2026.07.23.1 finished at 2026-07-23T10:02:00Z, in the period"
RULES_0723 = "RR-2026-07-23a (change:risk-rules-RR-2026-07-23a) happened at 2026-07-23T10:02:21Z"
RISK_0722 = (
    "Release deploy:risk-engine-2026.07.22.3 finished at 2026-07-22T16:30:00Z, in the period"
)
RELEASE_0720 = "release-2026.07.20.2"
FIRING = (
    "Alert alert:PaymentApiHighErrorRate fired on svc:payment-api at 2026-07-23T10:03:10Z "
    "(until 2026-07-23T10:50:00Z)"
)


def _ask(invoke, question: str, as_of: str) -> tuple[str, dict[str, Any]]:  # type: ignore[no-untyped-def]
    report = invoke("investigate", question, *BOB, "--as-of", as_of)
    assert report.code == 0, report
    doc = json.loads(invoke("investigate", question, *BOB, "--as-of", as_of, "--json").out)
    return report.out, doc


def _claims(out: str) -> str:
    return out.split("\nClaims\n", 1)[1].split("\nEvidence\n", 1)[0]


def test_what_changed_yesterday_lists_the_day_before_as_of(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    out, doc = _ask(invoke, "What changed yesterday?", "2026-07-24T12:00:00Z")
    assert (
        "Time       'yesterday' read as 2026-07-23 (UTC), the day before as_of's day: "
        "2026-07-23T00:00:00Z to 2026-07-23T23:59:59Z, against as_of 2026-07-24T12:00:00Z; "
        "the KG's times are UTC"
    ) in out, out
    claims = _claims(out)
    assert RELEASE_0723 in claims and RULES_0723 in claims, out
    assert "risk-engine-2026.07.22.3" not in claims, out  # 07-22: the day before yesterday
    assert "not resolved" not in out, out
    assert doc["status"] == "complete"
    assert doc["unresolved_time_words"] == []
    assert doc["relative_times"] == [
        {
            "words": "yesterday",
            "kind": "day",
            "start": "2026-07-23T00:00:00Z",
            "end": "2026-07-23T23:59:59Z",
            "reading": "2026-07-23 (UTC), the day before as_of's day",
        }
    ]
    # A day earlier, "yesterday" is 07-22: the risk-engine release, none of 07-23.
    out, _ = _ask(invoke, "What changed yesterday?", "2026-07-23T12:00:00Z")
    claims = _claims(out)
    assert RISK_0722 in claims, out
    assert "2026-07-23" not in claims.replace("(change:risk", ""), out


@pytest.mark.parametrize(
    ("as_of", "day", "listed"),
    [
        # as_of's UTC day decides: its last second, its first, and the one after.
        ("2026-07-20T23:59:59Z", "2026-07-19", False),
        ("2026-07-21T00:00:00Z", "2026-07-20", True),
        ("2026-07-21T23:59:59Z", "2026-07-20", True),
        ("2026-07-22T00:00:00Z", "2026-07-21", False),
    ],
)
def test_yesterday_turns_at_midnight_utc(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, as_of: str, day: str, listed: bool
) -> None:
    out, doc = _ask(invoke, "Which releases of payment-api went out yesterday?", as_of)
    assert f"'yesterday' read as {day} (UTC), the day before as_of's day" in out, out
    assert (RELEASE_0720 in _claims(out)) is listed, out
    assert doc["relative_times"][0]["start"] == f"{day}T00:00:00Z"
    assert doc["relative_times"][0]["end"] == f"{day}T23:59:59Z"


def test_alerts_fired_yesterday_are_the_firings_of_that_day(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    out, doc = _ask(invoke, "What alerts fired on payment-api yesterday?", "2026-07-24T12:00:00Z")
    assert FIRING in _claims(out), out
    assert doc["status"] == "complete"
    # The next day's "yesterday" (07-24) had none: said, not a silent empty answer.
    out, doc = _ask(invoke, "What alerts fired on payment-api yesterday?", "2026-07-25T12:00:00Z")
    assert FIRING not in out, out
    assert (
        "no alert the subject may read fired on what was asked from 2026-07-24T00:00:00Z to "
        "2026-07-24T23:59:59Z ('yesterday')"
    ) in out, out


@pytest.mark.parametrize(
    ("as_of", "at", "owner"),
    [
        # payment-api moved from payments-core to payments-platform at 2026-07-24T00:00:00Z.
        ("2026-07-24T01:59:59Z", "2026-07-23T23:59:59Z", "team:payments-core"),
        ("2026-07-24T02:00:00Z", "2026-07-24T00:00:00Z", "team:payments-platform"),
    ],
)
def test_who_owned_it_two_hours_ago_is_the_owner_at_as_of_minus_two_hours(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, as_of: str, at: str, owner: str
) -> None:
    out, doc = _ask(invoke, "Who owned payment-api 2 hours ago?", as_of)
    assert (
        f"Time       '2 hours ago' read as {at}, as_of {as_of} minus 2 h; the KG's times are UTC"
    ) in out, out
    named = [
        line for line in out.splitlines() if f"At the time named in the question, {at}" in line
    ]
    assert len(named) == 1 and f"{owner} OWNS svc:payment-api" in named[0], out
    assert doc["relative_times"][0]["kind"] == "instant"
    assert doc["relative_times"][0]["start"] == doc["relative_times"][0]["end"] == at
    assert doc["status"] == "complete"


def test_last_week_asked_on_a_monday_is_the_iso_week_before(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    question = "Which releases of payment-api went out last week?"
    out, doc = _ask(invoke, question, "2026-07-27T00:00:00Z")  # a Monday, its first second
    assert (
        "'last week' read as the ISO week before as_of's, Monday 2026-07-20 to Sunday "
        "2026-07-26 (UTC): 2026-07-20T00:00:00Z to 2026-07-26T23:59:59Z"
    ) in out, out
    claims = _claims(out)
    assert RELEASE_0720 in claims and "release-2026.07.23.1" in claims, out
    assert doc["relative_times"][0]["kind"] == "week"
    # One second earlier (Sunday) the week before is 07-13 to 07-19: neither release.
    out, _ = _ask(invoke, question, "2026-07-26T23:59:59Z")
    assert "Monday 2026-07-13 to Sunday 2026-07-19" in out, out
    assert RELEASE_0720 not in _claims(out) and "release-2026.07.23.1" not in _claims(out), out
    # "On Monday" asked on a Monday is the Monday before, said so.
    out, _ = _ask(
        invoke, "Which releases of payment-api went out on Monday?", "2026-07-27T09:00:00Z"
    )
    assert (
        "'on Monday' read as 2026-07-20 (UTC), the last Monday before as_of's day (as_of's day "
        "is itself a Monday: the one a week before)"
    ) in out, out
    assert RELEASE_0720 in _claims(out), out


def test_last_night_and_overnight_are_the_night_before_as_of(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # Before (h35-time-words) "last night" and "overnight" were not resolved and the answer
    # was at as_of: "what happened last night?" listed nothing of the night.
    out, doc = _ask(invoke, "what happened last night?", "2026-07-23T11:00:00Z")
    assert (
        "Time       'last night' read as the night before as_of's day (a night is read as "
        "18:00 to 06:00 UTC): 2026-07-22T18:00:00Z to 2026-07-23T05:59:59Z, against as_of "
        "2026-07-23T11:00:00Z; the KG's times are UTC"
    ) in out, out
    assert (
        "Alert alert:KubePodCrashLooping fired on svc:checkout at 2026-07-23T03:12:00Z"
    ) in _claims(out), out
    assert "Incident inc:2026-07-23-payments" not in _claims(out), out  # 10:02: the morning
    assert doc["unresolved_time_words"] == []
    assert [(r["words"], r["kind"]) for r in doc["relative_times"]] == [("last night", "period")]
    # "Overnight" is the same night; nothing fired on payment-api in it, and the gap says so.
    out, doc = _ask(invoke, "anything overnight on payment-api?", "2026-07-23T11:00:00Z")
    assert "Time       'overnight' read as the night before as_of's day" in out, out
    assert (
        "no alert the subject may read fired on what was asked from 2026-07-22T18:00:00Z to "
        "2026-07-23T05:59:59Z ('overnight')"
    ) in out, out
    assert "PaymentApiHighErrorRate fired" not in _claims(out), out
    assert doc["unresolved_time_words"] == []


def test_runbook_card_reads_yesterday_against_now(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    card = invoke("runbook", "payment recovery runbook yesterday", "--subject", "acme/user:bob")
    assert card.code == 0, card
    assert "Time      from the text: 'yesterday' read as " in card.out, card.out
    assert "the day before today; the card is at its end" in card.out, card.out
    doc = json.loads(
        invoke("runbook", "payment recovery runbook 2 hours ago", "--subject", "acme/user:bob",
               "--json").out
    )  # fmt: skip
    assert doc["as_of_from"] == "text"
    assert doc["time_note"].startswith("from the text: '2 hours ago' read as "), doc
    # --as-of given: it is the card's time, the text's words are not used (as a date's).
    given = invoke("runbook", "payment recovery runbook yesterday", "--subject", "acme/user:bob",
                   "--as-of", "2026-07-24T12:00:00Z")  # fmt: skip
    assert (
        "Time      not used: 'yesterday' in the text: --as-of was given, and is this card's time"
    ) in given.out, given.out


AS_OF = datetime(2026, 7, 24, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        ("昨天谁负责 payment-api？", datetime(2026, 7, 23), datetime(2026, 7, 23, 23, 59, 59)),
        ("前天发生了什么", datetime(2026, 7, 22), datetime(2026, 7, 22, 23, 59, 59)),
        ("上周发布了什么", datetime(2026, 7, 13), datetime(2026, 7, 19, 23, 59, 59)),
        ("what changed today?", datetime(2026, 7, 24), datetime(2026, 7, 24, 12)),
        ("what changed earlier today?", datetime(2026, 7, 24), datetime(2026, 7, 24, 12)),
        ("what changed this week?", datetime(2026, 7, 20), datetime(2026, 7, 24, 12)),
        ("what changed this month?", datetime(2026, 7, 1), datetime(2026, 7, 24, 12)),
        ("what changed last month?", datetime(2026, 6, 1), datetime(2026, 6, 30, 23, 59, 59)),
        ("what changed since yesterday?", datetime(2026, 7, 23), datetime(2026, 7, 24, 12)),
        ("what happened last Friday?", datetime(2026, 7, 17), datetime(2026, 7, 17, 23, 59, 59)),
        ("what changed since Monday?", datetime(2026, 7, 20), datetime(2026, 7, 24, 12)),
        ("who owned it on Thursday?", datetime(2026, 7, 23), datetime(2026, 7, 23, 23, 59, 59)),
    ],
)
def test_relative_periods_are_read_against_as_of(
    question: str, start: datetime, end: datetime
) -> None:
    period = time_references(question, AS_OF).period
    assert period is not None
    assert (period[0].at, period[1].at) == (start.replace(tzinfo=UTC), end.replace(tzinfo=UTC))
    assert unplaced_times(question, AS_OF) == []


@pytest.mark.parametrize(
    ("ago", "delta"),
    [
        ("5h ago", timedelta(hours=5)),
        ("90m ago", timedelta(minutes=90)),
        ("2d ago", timedelta(days=2)),
        ("an hour ago", timedelta(hours=1)),
        ("half an hour ago", timedelta(minutes=30)),
        ("3 weeks ago", timedelta(weeks=3)),
        ("2小时前", timedelta(hours=2)),
    ],
)
def test_an_amount_ago_is_as_of_minus_it(ago: str, delta: timedelta) -> None:
    refs = time_references(f"who owned payment-api {ago}?", AS_OF)
    assert [n.at for n in refs.named] == [AS_OF - delta]
    assert refs.unresolved == []


@pytest.mark.parametrize(
    "words",
    ["tonight", "the other day", "a few hours ago",
     "several days ago", "2 months ago", "yesterday morning", "今天早上", "Friday"],
)  # fmt: skip
def test_words_that_need_the_askers_clock_or_are_vague_stay_unresolved(words: str) -> None:
    refs = time_references(f"what changed on payment-api {words}?", AS_OF)
    assert refs.unresolved == [words] and refs.relative == [] and refs.period is None
    # Without an as_of (the planner's first reading) nothing relative is read either.
    assert time_references("what changed yesterday?").unresolved == ["yesterday"]


def _july(day: int, hour: int = 0, minute: int = 0, second: int = 0) -> datetime:
    return datetime(2026, 7, day, hour, minute, second, tzinfo=UTC)


@pytest.mark.parametrize(
    ("question", "as_of", "start", "end"),
    [
        ("what happened last night?", AS_OF, _july(23, 18), _july(24, 5, 59, 59)),
        ("anything overnight?", AS_OF, _july(23, 18), _july(24, 5, 59, 59)),
        # Asked at 03:00, the night is the one under way: up to as_of.
        ("what paged last night?", _july(24, 3), _july(23, 18), _july(24, 3)),
        ("what broke this morning?", AS_OF, _july(24, 6), _july(24, 11, 59, 59)),
        ("what broke this morning?", _july(24, 9), _july(24, 6), _july(24, 9)),
        ("who was on call last weekend?", AS_OF, _july(18), _july(19, 23, 59, 59)),
    ],
)  # fmt: skip
def test_a_night_a_morning_and_a_weekend_are_fixed_windows_in_utc(
    question: str, as_of: datetime, start: datetime, end: datetime
) -> None:
    period = time_references(question, as_of).period
    assert period is not None
    assert (period[0].at, period[1].at) == (start, end)
    assert unplaced_times(question, as_of) == []


def test_this_morning_asked_before_it_began_is_not_resolved() -> None:
    refs = time_references("what broke this morning?", datetime(2026, 7, 24, 5, tzinfo=UTC))
    assert refs.unresolved == ["this morning"] and refs.period is None


@pytest.mark.parametrize(
    ("question", "at"),
    [
        ("who owned payment-api yesterday at 10:02?", datetime(2026, 7, 23, 10, 2)),
        ("who owned payment-api at 10:02 yesterday?", datetime(2026, 7, 23, 10, 2)),
        ("who owned payment-api yesterday at 11pm +02:00?", datetime(2026, 7, 23, 21)),
        ("who owned payment-api on Monday at 00:00 UTC?", datetime(2026, 7, 20)),
        ("昨天 10:02 谁负责 payment-api？", datetime(2026, 7, 23, 10, 2)),
    ],
)
def test_a_clock_time_beside_a_relative_day_is_that_instant(question: str, at: datetime) -> None:
    refs = time_references(question, AS_OF)
    assert [n.at for n in refs.named] == [at.replace(tzinfo=UTC)]
    assert refs.period is None and refs.unresolved == []


def test_a_clock_time_in_a_zone_not_converted_leaves_the_day_a_period() -> None:
    refs = time_references("who owned payment-api yesterday at 10:02 CEST?", AS_OF)
    assert refs.period is not None and refs.period[0].at == datetime(2026, 7, 23, tzinfo=UTC)
    assert refs.unresolved == ["at 10:02 CEST"]
