"""A release named by the minute it ran ("did the 10:02 release follow the change policy?").

The clock time picks the releases: those by as_of whose finish (or start) falls in that
minute of a day (UTC), on the latest such day, every one of that minute (an auditor asking
about "the 10:02 release" when two finished at 10:02:00 and 10:02:30 hears of both), never the
last release by as_of in their place.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict

from investigator.evidence import iso_utc
from investigator.lazy_pattern import LazyPattern

# "the 10:02 release", "the 9:55 deploy", "the 14:30 rollout": a 24-hour clock time just
# before the release noun (a time elsewhere in the question is a time word, timeline.py).
_CLOCK_RELEASE = LazyPattern(
    r"\b(?P<hour>[01]?\d|2[0-3]):(?P<minute>[0-5]\d)(?:\s*utc)?\s+"
    r"(?:release|deploy(?:ment)?|rollout)\b",
    re.IGNORECASE,
)


class ReleaseClock(BaseModel):
    """The minute of the day (UTC) a question names its release by."""

    model_config = ConfigDict(frozen=True)

    hour: int
    minute: int

    def text(self) -> str:
        return f"{self.hour:02d}:{self.minute:02d} UTC"

    def matches(self, at: datetime | None) -> bool:
        """Whether `at` (a finish, a start) falls in the minute named, on any day."""
        if at is None:
            return False
        utc = at.astimezone(UTC)
        return (utc.hour, utc.minute) == (self.hour, self.minute)


def release_clock(question: str) -> ReleaseClock | None:
    """The minute the question names its release by; None if it names none or several (two
    clock times pick no one release)."""
    found = {(int(m["hour"]), int(m["minute"])) for m in _CLOCK_RELEASE.finditer(question)}
    if len(found) != 1:
        return None
    ((hour, minute),) = found
    return ReleaseClock(hour=hour, minute=minute)


def at_clock(
    clock: ReleaseClock, times: Sequence[tuple[datetime | None, datetime | None]]
) -> list[int]:
    """The positions of the (finish, start) pairs the clock picks, all by as_of: every finish
    in the minute named on the latest day one falls in it (10:02:00 and 10:02:30 both), else
    every start in it on its latest such day (a release started at 10:02 and finished at
    10:09 is "the 10:02 release" only when none finished at 10:02)."""
    for side in (0, 1):
        hits = [(t, i) for i, pair in enumerate(times) if clock.matches(t := pair[side])]
        if hits:
            latest = max(_minute_of(t) for t, _ in hits if t is not None)
            return sorted(i for t, i in hits if t is not None and _minute_of(t) == latest)
    return []


def _minute_of(at: datetime) -> datetime:
    """`at`'s minute (UTC), its seconds dropped."""
    return at.astimezone(UTC).replace(second=0, microsecond=0)


def clock_choice(
    question: str,
    releases: Mapping[str, tuple[datetime, str]],
    starts: Mapping[str, datetime],
) -> tuple[list[tuple[str, datetime, str]], str] | None:
    """ "Did the 10:02 release follow the change policy?" naming no service: the releases
    read (release -> (finish by as_of, service); `starts`: their starts) the clock picks,
    whatever service shipped them, as (service, time, release) latest first, with the note's
    words saying which; None when the question names no minute or no release read is of it
    (then "the release" is chosen as for any question naming none)."""
    clock = release_clock(question)
    if clock is None:
        return None
    ordered = sorted(releases.items())
    picked = [ordered[i] for i in at_clock(clock, [(at, starts.get(r)) for r, (at, _) in ordered])]
    if not picked:
        return None
    # Sorted once, oldest first for the note; the picks are that order reversed (the keys,
    # time then release id, never tie: each release is read once).
    oldest_first = sorted(((svc, at, rel) for rel, (at, svc) in picked), key=lambda x: (x[1], x[2]))
    said = [
        f"{rel} of {svc} ({_ran_in(clock, at, starts.get(rel))})" for svc, at, rel in oldest_first
    ]
    taken = oldest_first[::-1]
    if len(said) == 1:
        return taken, f"it names the release by its minute, {clock.text()}: {said[0]} is read"
    return taken, (
        f"it names the release by its minute, {clock.text()}, and {len(said)} releases ran then: "
        f"{' and '.join(said)}; each is read and judged by its own service's rule"
    )


def _ran_in(clock: ReleaseClock, finish: datetime, start: datetime | None) -> str:
    """ "finished <finish>", or "started <start>" when its start is what fell in the minute."""
    if clock.matches(finish) or start is None:
        return f"finished {iso_utc(finish)}"
    return f"started {iso_utc(start)}"
