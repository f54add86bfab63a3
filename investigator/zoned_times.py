"""Reading a time the asker typed (the CLI's time flags, a served call's `as_of` and
`known_at`): ISO-8601 / RFC 3339 with a zone, in UTC, or `now`.

Standard library only: the CLI checks its times before its heavy imports. RFC 3339 allows
a lower-case `t` and `z` ("2026-07-23t10:30:00z"): they read as `T` and `Z`. `now` (any
case) is the default itself: it reads as no time given, so the run says `now` as it does
when the time is left out.
"""

from __future__ import annotations

from datetime import UTC, datetime

NOW_WORD = "now"


def zoned_time(field: str, value: str) -> datetime | str | None:
    """`value` as a UTC datetime, None for `now` (the default: as if left out), or the
    one-line reason it is not an ISO-8601 time with a zone (`field` names it: `--as-of`,
    `as_of`)."""
    raw = value.strip()
    shown = repr(value[:60])
    if raw.lower() == NOW_WORD:
        return None
    try:
        # Upper case: the date and clock are digits, so only `t` and `z` change.
        parsed = datetime.fromisoformat(raw.upper())
    except ValueError:
        return f"{field} {shown} is not an ISO-8601 time (e.g. 2026-07-23T10:03:00Z, or now)"
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        if "T" not in raw.upper() and " " not in raw:
            # A day alone: which instant of it is not guessed (nor which zone's day).
            return (
                f"{field} {shown} is a day without a time: write its instant with a zone, "
                f"e.g. {raw[:10]}T00:00:00Z"
            )
        return f"{field} {shown} has no zone: add Z or an offset like +02:00"
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        return f"{field} {shown} is out of range in UTC"
