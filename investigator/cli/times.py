"""Parsing the CLI's time flags: ISO-8601 with a zone (or `now`), else one clear line and
exit 2.

Standard library only at import: a command checks its times before its heavy imports.
"""

from __future__ import annotations

from datetime import UTC, datetime

from investigator.errors import BadInput
from investigator.zoned_times import zoned_time


def parse_zoned_time(flag: str, value: str | None) -> datetime | None:
    """`value` as a UTC datetime (None stays None, and so does `now`: the default); a
    missing zone or bad text is BadInput (`investigator.zoned_times`)."""
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
