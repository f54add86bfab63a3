"""The minute a question names its release by picks every release of that minute, on the
latest day one ran then (no database)."""

from __future__ import annotations

from datetime import UTC, datetime

from investigator.release_clock import at_clock, clock_choice, release_clock


def _at(day: int, hour: int, minute: int, second: int = 0) -> datetime:
    return datetime(2026, 7, day, hour, minute, second, tzinfo=UTC)


def test_every_release_finished_in_the_minute_is_picked_not_only_the_latest_instant() -> None:
    clock = release_clock("did the 10:02 release follow the change policy?")
    assert clock is not None
    times = [
        (_at(23, 10, 2, 30), _at(23, 10, 0)),  # risk-engine, 10:02:30
        (_at(22, 10, 2, 45), _at(22, 9, 0)),  # the day before: not the latest day
        (_at(23, 10, 2, 0), _at(23, 9, 55)),  # payment-api, 10:02:00
        (_at(23, 10, 3, 0), _at(23, 10, 2)),  # started at 10:02: a finish comes first
    ]
    # Before: only the finish at the latest instant (10:02:30) was kept.
    assert at_clock(clock, times) == [0, 2]


def test_the_clock_choice_names_each_release_of_the_minute() -> None:
    releases = {
        "deploy:a": (_at(23, 10, 2, 0), "svc:payment-api"),
        "deploy:b": (_at(23, 10, 2, 30), "svc:risk-engine"),
        "deploy:c": (_at(23, 9, 58), "svc:ledger"),
    }
    got = clock_choice("did the 10:02 release follow the change policy?", releases, {})
    assert got is not None
    taken, note = got
    assert taken == [
        ("svc:risk-engine", _at(23, 10, 2, 30), "deploy:b"),
        ("svc:payment-api", _at(23, 10, 2, 0), "deploy:a"),
    ]
    assert "2 releases ran then: deploy:a of svc:payment-api (finished 2026-07-23T10:02:00Z)" in (
        note
    )
    assert clock_choice("did the 10:05 release follow the change policy?", releases, {}) is None
    assert clock_choice("did the release follow the change policy?", releases, {}) is None


def test_releases_of_one_instant_are_taken_latest_id_first_and_said_oldest_first() -> None:
    # One instant, three releases: the picks go by time then id, newest first, and the note
    # says them the other way round (one order, reversed).
    at = _at(23, 10, 2, 30)
    releases = {"deploy:b": (at, "svc:risk-engine"), "deploy:c": (at, "svc:ledger")}
    releases["deploy:a"] = (_at(23, 10, 2, 0), "svc:payment-api")
    got = clock_choice("did the 10:02 release follow the change policy?", releases, {})
    assert got is not None
    taken, note = got
    assert [rel for _, _, rel in taken] == ["deploy:c", "deploy:b", "deploy:a"]
    assert note.index("deploy:a of") < note.index("deploy:b of") < note.index("deploy:c of")


def test_a_release_picked_by_its_start_is_said_started_then() -> None:
    releases = {"deploy:r": (_at(23, 10, 2, 30), "svc:risk-engine")}
    got = clock_choice(
        "did the 10:00 release follow the change policy?",
        releases,
        {"deploy:r": _at(23, 10, 0, 10)},
    )
    assert got is not None
    assert got[1].endswith("deploy:r of svc:risk-engine (started 2026-07-23T10:00:10Z) is read")
