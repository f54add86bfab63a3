"""A release named by the minute it ran ("did the 10:02 release follow the change policy?").

The clock time picks the release: the one whose finish (or start) falls in that minute on the
date in scope (as_of's, UTC), never the last one by as_of in its place.
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
    """The minute a question names its release by, on the date in scope."""

    model_config = ConfigDict(frozen=True)

    hour: int
    minute: int
    day: str  # YYYY-MM-DD, as_of's date in UTC

    def text(self) -> str:
        return f"{self.hour:02d}:{self.minute:02d} UTC on {self.day}"

    def matches(self, *instants: datetime | None) -> bool:
        """Whether one of `instants` (a finish, a start) falls in the minute named."""
        utc = [t.astimezone(UTC) for t in instants if t is not None]
        return any(
            t.date().isoformat() == self.day and (t.hour, t.minute) == (self.hour, self.minute)
            for t in utc
        )


def release_clock(question: str, as_of: datetime) -> ReleaseClock | None:
    """The minute the question names its release by, on as_of's date; None if it names none
    or several (two clock times pick no one release)."""
    found = {(int(m["hour"]), int(m["minute"])) for m in _CLOCK_RELEASE.finditer(question)}
    if len(found) != 1:
        return None
    ((hour, minute),) = found
    return ReleaseClock(hour=hour, minute=minute, day=as_of.astimezone(UTC).date().isoformat())


def at_clock(
    clock: ReleaseClock, finishes: Sequence[tuple[datetime | None, datetime | None]]
) -> list[int]:
    """The positions of the (finish, start) pairs the clock picks: a finish in the minute
    first; a start only when no finish is (a release started at 10:02 and finished at 10:09
    is "the 10:02 release" only when none finished then)."""
    by_finish = [i for i, (done, _) in enumerate(finishes) if clock.matches(done)]
    if by_finish:
        return by_finish
    return [i for i, (_, started) in enumerate(finishes) if clock.matches(started)]
