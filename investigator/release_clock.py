"""A release named by the minute it ran ("did the 10:02 release follow the change policy?").

The clock time picks the release: the latest by as_of whose finish (or start) falls in that
minute of a day (UTC), never the last release by as_of in its place.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict

# "the 10:02 release", "the 9:55 deploy", "the 14:30 rollout": a 24-hour clock time just
# before the release noun (a time elsewhere in the question is a time word, timeline.py).
_CLOCK_RELEASE = re.compile(
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
    """The positions of the (finish, start) pairs the clock picks, all by as_of: the latest
    finish in the minute named (releases finished at that same instant all), else the latest
    start in it (a release started at 10:02 and finished at 10:09 is "the 10:02 release" only
    when none finished at 10:02)."""
    for side in (0, 1):
        hits = [(t, i) for i, pair in enumerate(times) if clock.matches(t := pair[side])]
        if hits:
            latest = max(t for t, _ in hits if t is not None)
            return sorted(i for t, i in hits if t == latest)
    return []
