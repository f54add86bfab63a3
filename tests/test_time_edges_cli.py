"""Edges of the question's time words, through the CLI against a real Neo4j with the demo
dataset (h26-time, from the pre-release explorer's findings 5-7):

1. An amount too large for the calendar ("in the last 99999999999 hours", "99999999999
   weeks before the alert") crashed with `OverflowError` (exit 1); it now reaches the
   calendar's earliest (or latest) time, as "99999999 hours" already did.
2. "what changed in July" asked on July 23 said "not used: 'in July' ... after as_of" and
   listed it in `unresolved_time_words`, while the claim read July 1 to as_of; it now says
   the period is read up to as_of, and lists nothing unused.
3. "in the last hour and since March" answered 'since March' and said nothing of 'in the
   last hour'; the second period is now said, and the answer partial."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from conftest import investigate_json

from investigator.timeline import (
    EARLIEST,
    LATEST,
    period_notes,
    time_references,
    unplaced_times,
)

ALICE = ["--subject", "acme/user:alice"]
AS_OF = datetime(2026, 7, 23, 10, 5, tzinfo=UTC)
# Past the calendar from any as_of, in seconds as in weeks.
HUGE = ("9" * 20, "9" * 40, "9" * 20 + ".5", "99999999999" + "0" * 10)
UNITS = ("s", "sec", "second", "min", "minute", "h", "hr", "hour", "day", "week")


def _written(unit: str, qty: str) -> str:
    """`qty unit` as a user writes it: "99999999999 hours", "99999999999h"."""
    return f"{qty}{unit}" if unit in ("s", "h") else f"{qty} {unit}s"


@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize("qty", HUGE)
def test_a_huge_amount_of_any_unit_reaches_the_end_of_the_calendar(unit: str, qty: str) -> None:
    amount = _written(unit, qty)
    # A window ending at as_of: from the calendar's earliest time.
    window = time_references(f"what changed in the last {amount}?", AS_OF)
    assert window.period is not None
    assert window.period[0].at == EARLIEST and window.period[1].at == AS_OF
    assert unplaced_times(f"what changed in the last {amount}?", AS_OF) == []
    # That far from a written time, either side.
    before = time_references(f"who owned payment-api {amount} before 2026-07-20?", AS_OF)
    after = time_references(f"who owned payment-api {amount} after 2026-07-20?", AS_OF)
    assert [n.at for n in before.named] == [EARLIEST]
    assert [n.at for n in after.named] == [LATEST]
    # That far from an event: an amount no longer than the calendar, never an overflow.
    event = time_references(f"who owned payment-api {amount} before the alert?", AS_OF)
    assert event.offset is not None and timedelta(0) < event.offset <= timedelta(days=999_999_999)
    assert -event.offset <= timedelta(0)


@pytest.mark.parametrize("unit", UNITS)
def test_an_amount_of_hundreds_of_digits_is_placed_or_said_never_a_crash(unit: str) -> None:
    amount = _written(unit, "9" * 400)
    for question in (
        f"what changed in the last {amount}?",
        f"who owned payment-api {amount} before 2026-07-20?",
        f"who owned payment-api {amount} after the alert?",
        f"what changed {amount} ago?",
    ):
        refs = time_references(question, AS_OF)
        unplaced = unplaced_times(question, AS_OF)
        # Either read (the calendar's end, or an event's offset) or listed as not used.
        assert refs.named or refs.offset is not None or unplaced, question
        assert all(n.at in (EARLIEST, LATEST, AS_OF) for n in refs.named), question


def test_an_amount_too_large_for_the_calendar_is_no_crash(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    as_of = ["--as-of", "2026-07-23T10:05:00Z", "--deadline-seconds", "600"]
    report = invoke(
        "investigate", "What changed on payment-api in the last 99999999999 hours?", *ALICE, *as_of
    )
    assert report.code == 0, report
    assert "OverflowError" not in report.out + report.err
    assert (
        "in the period asked, from 0001-01-01T00:00:00Z to 2026-07-23T10:05:00Z "
        "('in the last 99999999999 hours')"
    ) in report.out
    for question in (
        "Who owned payment-api 99999999999 weeks before the alert?",
        "What changed on payment-api in the past 99999999999999999999 seconds?",
    ):
        run = invoke("investigate", question, *ALICE, *as_of)
        assert run.code == 0, run
        assert "OverflowError" not in run.out + run.err


def test_a_month_running_past_as_of_is_read_up_to_as_of_said_so(
    demo_graph, cli_env, invoke
) -> None:  # type: ignore[no-untyped-def]
    as_of = ["--as-of", "2026-07-23T12:00:00Z", "--deadline-seconds", "600"]
    report = invoke("investigate", "what changed in July", *ALICE, *as_of)
    assert report.code == 0, report
    assert "not used: 'in July'" not in report.out
    assert (
        "Time       'in July' runs to 2026-07-31T23:59:59Z, after as_of 2026-07-23T12:00:00Z: "
        "the period is read from 2026-07-01T00:00:00Z up to as_of"
    ) in report.out, report.out
    assert "from 2026-07-01T00:00:00Z to 2026-07-23T12:00:00Z ('in July')" in report.out
    doc = investigate_json(invoke, "what changed in July", *ALICE, *as_of)
    assert doc["unresolved_time_words"] == []
    assert doc["unresolved_time_reasons"] == []
    assert any("read from 2026-07-01T00:00:00Z up to as_of" in n for n in doc["time_notes"])


def test_a_period_wholly_after_as_of_is_still_not_used() -> None:
    question = "what changed between 2026-08-01 and 2026-08-05?"
    assert period_notes(question, AS_OF) == []
    assert {u.reason.value for u in unplaced_times(question, AS_OF)} == {"after_as_of"}
    # One begun by as_of is read up to it, whichever way it is written.
    begun = "what changed between 2026-07-20 and 2026-07-30?"
    assert unplaced_times(begun, AS_OF) == []
    assert len(period_notes(begun, AS_OF)) == 1


def test_a_second_period_asked_is_said_never_dropped(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    as_of = ["--as-of", "2026-07-23T10:05:00Z", "--deadline-seconds", "600"]
    question = "What changed on payment-api in the last hour and since March?"
    report = invoke("investigate", question, *ALICE, *as_of)
    assert report.code == 0, report
    assert (
        "Time       not used: 'in the last hour': two periods asked; the answer reads "
        "'since March'; ask 'in the last hour' separately"
    ) in report.out, report.out
    assert "('since March')" in report.out
    doc = investigate_json(invoke, question, *ALICE, *as_of)
    assert doc["status"] == "partial"
    assert doc["unresolved_time_words"] == ["in the last hour"]
    assert [(u["words"], u["reason"]) for u in doc["unresolved_time_reasons"]] == [
        ("in the last hour", "other_period")
    ]


@pytest.mark.parametrize(
    ("question", "read", "set_aside"),
    [
        ("what changed in July and in the last 2 days", "'in July'", "in the last 2 days"),
        (
            "what changed in the last hour between 2026-07-20 and 2026-07-22",
            "'between 2026-07-20 and 2026-07-22'",
            "in the last hour",
        ),
        (
            "what changed between 2026-07-20 and 2026-07-22 in March",
            "'in March'",
            ("between 2026-07-20 and 2026-07-22"),
        ),
    ],
)
def test_of_two_periods_the_one_starting_first_is_read_the_other_said(
    question: str, read: str, set_aside: str
) -> None:
    unplaced = unplaced_times(question, AS_OF)
    assert [(u.words, u.reason.value) for u in unplaced] == [(set_aside, "other_period")]
    assert f"the answer reads {read}" in unplaced[0].detail


@pytest.mark.parametrize(
    ("ago", "delta"),
    [
        ("5h ago", timedelta(hours=5)),
        ("90m ago", timedelta(minutes=90)),
        ("2d ago", timedelta(days=2)),
        ("9999s ago", timedelta(seconds=9999)),
    ],
)
def test_a_short_unit_ago_is_read_against_as_of_never_dropped(ago: str, delta: timedelta) -> None:
    # Before (h31-relative) it was listed as not read; now it is as_of minus the amount.
    assert unplaced_times(f"what changed on payment-api {ago}?", AS_OF) == []
    refs = time_references(f"what changed on payment-api {ago}?", AS_OF)
    assert [n.at for n in refs.named] == [AS_OF - delta]
