"""Regular expressions compiled on first use, not at import (issue 12).

Python compiles a pattern in Python code: the evidence gate's instruction rules, the
question's time words, the planner's intents and the ownership questions' words took about
0.1 s of CPU in every new process that imported them, and a `runbook` lookup uses none of
them (a trusted runbook is never searched for instructions; the lookup reads no question).
A `LazyPattern` holds the pattern's text (`pattern`, as `re.Pattern.pattern` does, so a
larger pattern can still be built from it) and compiles it the first time it searches,
keeping the compiled pattern; the matches are those of `re.compile(pattern, flags)`. The
compiled programs are kept across processes (`investigator.pattern_cache`), so a new process
rebuilds a pattern from its program instead of parsing it again.

The warm process compiles every one before it forks (`compile_all`), so a command it
serves compiles none of them.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

_MADE: list[LazyPattern] = []


class LazyPattern:
    """`re.compile(pattern, flags)`, compiled the first time it is used."""

    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None
        _MADE.append(self)

    @property
    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (compiled now if it was not yet)."""
        compiled = self._compiled
        if compiled is None:
            from investigator.pattern_cache import compile_pattern

            compiled = self._compiled = compile_pattern(self.pattern, self.flags)
        return compiled

    @property
    def is_compiled(self) -> bool:
        return self._compiled is not None

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.match(string, pos, endpos)

    def fullmatch(
        self, string: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> re.Match[str] | None:
        return self.compiled.fullmatch(string, pos, endpos)

    def finditer(
        self, string: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self.compiled.findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled.sub(repl, string, count)

    def subn(
        self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0
    ) -> tuple[str, int]:
        return self.compiled.subn(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        return self.compiled.split(string, maxsplit)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self.flags!r})"


def compile_all() -> int:
    """Compile every lazy pattern made so far (the warm process, before it forks); how many
    were compiled now."""
    fresh = [p for p in _MADE if not p.is_compiled]
    for p in fresh:
        p.compiled  # noqa: B018 (compiles it)
    from investigator.pattern_cache import write_new

    write_new()
    return len(fresh)
