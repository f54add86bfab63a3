"""Parsing the CLI's time flags: ISO-8601 with a zone, else one clear line and exit 2."""

from __future__ import annotations

from datetime import UTC, datetime

from investigator.errors import BadInput
from investigator.timeline import refuse_future_known_at
from investigator.usage_checks import zoned_time


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
    refuse_future_known_at(flag, parsed, datetime.now(UTC))
    return parsed
