"""Parsing the CLI's time flags: ISO-8601 with a zone, else one clear line and exit 2.

Standard library only at import: a command checks its times before its heavy imports.
"""

from __future__ import annotations

from datetime import UTC, datetime

from investigator.errors import BadInput


def zoned_time(flag: str, value: str) -> datetime | str:
    """`value` as a UTC datetime, or the one-line reason it is not an ISO-8601 time with a
    zone (`parse_zoned_time` raises it as BadInput)."""
    raw = value.strip()
    shown = repr(value[:60])
    try:
        parsed = datetime.fromisoformat(raw)
    except ValueError:
        return f"{flag} {shown} is not an ISO-8601 time (e.g. 2026-07-23T10:03:00Z)"
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        if "T" not in raw.upper() and " " not in raw:
            # A day alone: which instant of it is not guessed (nor which zone's day).
            return (
                f"{flag} {shown} is a day without a time: write its instant with a zone, "
                f"e.g. {raw[:10]}T00:00:00Z"
            )
        return f"{flag} {shown} has no zone: add Z or an offset like +02:00"
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        return f"{flag} {shown} is out of range in UTC"


def parse_zoned_time(flag: str, value: str | None) -> datetime | None:
    """`value` as a UTC datetime (None stays None); a missing zone or bad text is BadInput."""
    if value is None:
        return None
    parsed = zoned_time(flag, value)
    if isinstance(parsed, str):
        raise BadInput(parsed)
    return parsed


def parse_known_at(flag: str, value: str | None) -> datetime | None:
    """`--known-at`: as `parse_zoned_time`, and not later than now (the KG cannot know the
    future; `--as-of` may be in the future, `--known-at` may not)."""
    parsed = parse_zoned_time(flag, value)
    if parsed is not None:
        from investigator.timeline import refuse_future_known_at  # its regexes: only when asked

        refuse_future_known_at(flag, parsed, datetime.now(UTC))
    return parsed
