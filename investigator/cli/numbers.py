"""Numbers on the command line, written with the ASCII digits 0-9 only.

Python's `int()` and `float()` (which click's INT and FLOAT use) also take other scripts'
digits (`１`, `٣`), underscores (`1_000`), padding, and `nan` or `inf`. None of them is what a
user means by a count or a number of seconds, so each is refused with one line, exit 2.
"""

from __future__ import annotations

import re
from typing import Any

import click

_WHOLE = re.compile(r"-?[0-9]+")
_DECIMAL = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


def parse_whole(text: str) -> int | None:
    """`text` as an int when it is a whole number in ASCII digits, else None."""
    return int(text) if _WHOLE.fullmatch(text) else None


class WholeNumber(click.IntRange):
    """A whole number in ASCII digits, within the optional bounds of `click.IntRange`."""

    name = "integer"

    def _describe_range(self) -> str:
        # Unbounded: the command checks the range itself (and its help text says it).
        return "" if self.min is None and self.max is None else super()._describe_range()

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not _WHOLE.fullmatch(value):
            self.fail(f"{value[:40]!r} is not a whole number (digits 0-9)", param, ctx)
        return super().convert(value, param, ctx)


class DecimalNumber(click.FloatRange):
    """A decimal number in ASCII digits (no `nan`, `inf` or exponent), within bounds."""

    name = "float"

    def _describe_range(self) -> str:
        return "" if self.min is None and self.max is None else super()._describe_range()

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not _DECIMAL.fullmatch(value):
            self.fail(f"{value[:40]!r} is not a number (digits 0-9, one '.')", param, ctx)
        return super().convert(value, param, ctx)
