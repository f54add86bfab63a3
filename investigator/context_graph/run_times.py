"""Which time a recorded run answered for, and who chose it: the run's `as_of` and
`known_at`, each with where it came from, as `trace`, `runs` and `replay` say it.

The run records (`CtxRun`, hashed into its chain and so covered by its anchor) `as_of_from`
(`given`: `--as-of` or a served `as_of`; `text`: one time written in a runbook lookup's text;
`now`: none given), `as_of_words` (the text's words it was read from) and `time_note` (what
the answer said of the time words in the text), and `known_at_given`. Runs recorded before
`as_of_from` was kept: an investigation's `as_of_given` (recorded since session 29) says
`given` or `now`; otherwise where as_of came from is "not recorded", never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel

from graph_schema.canonical import iso_utc
from investigator.terminal import one_line

AsOfFrom = Literal["given", "text", "now"]
KnownAtFrom = Literal["given", "now"]
_AS_OF_FROM: frozenset[str] = frozenset({"given", "text", "now"})
NOT_RECORDED = "source not recorded"
# How many characters of the text's words a phrase quotes.
_WORDS_MAX = 80


class RunTimes(BaseModel):
    """A recorded run's two times and where each came from (None: not recorded)."""

    as_of: str | None
    as_of_from: AsOfFrom | None
    as_of_words: str | None
    known_at: str | None
    known_at_from: KnownAtFrom | None
    time_note: str | None

    def as_of_phrase(self) -> str:
        """`as_of 2026-07-22T23:00:00Z (from the text: '2026-07-23 01:00+0200')`."""
        return f"as_of {_shown(self.as_of)} ({self._as_of_source()})"

    def known_at_phrase(self) -> str:
        """`known_at 2026-12-06T05:40:01Z (now: none given)`."""
        source = {"given": "given", "now": "now: none given", None: NOT_RECORDED}
        return f"known_at {_shown(self.known_at)} ({source[self.known_at_from]})"

    def phrase(self) -> str:
        """Both, in one phrase: what `trace` and `replay` print."""
        return f"{self.as_of_phrase()}, {self.known_at_phrase()}"

    def _as_of_source(self) -> str:
        if self.as_of_from == "text":
            words = one_line(self.as_of_words, _WORDS_MAX) if self.as_of_words else None
            return f"from the text: {words}" if words else "from the text"
        if self.as_of_from is None:
            return NOT_RECORDED
        said = "given" if self.as_of_from == "given" else "now: none given"
        # Time words in the text that were not taken for it: said, the note has the rest.
        return f"{said}; a time in the text not used" if self.time_note else said


def run_times(run: Mapping[str, Any] | None) -> RunTimes:
    """The times of a run from its recorded `CtxRun` properties (as shown to the reader)."""
    run = run or {}
    recorded = run.get("as_of_from")
    as_of_from: Any = recorded if recorded in _AS_OF_FROM else None
    if as_of_from is None and isinstance(run.get("as_of_given"), bool):
        # An investigation recorded before `as_of_from`: it recorded whether as_of was given.
        as_of_from = "given" if run["as_of_given"] else "now"
    known_given = run.get("known_at_given")
    known_at_from: Any = None
    if isinstance(known_given, bool):
        known_at_from = "given" if known_given else "now"
    return RunTimes(
        as_of=_text(run.get("as_of")),
        as_of_from=as_of_from,
        as_of_words=_text(run.get("as_of_words")) if as_of_from == "text" else None,
        known_at=_text(run.get("known_at")),
        known_at_from=known_at_from,
        time_note=_text(run.get("time_note")),
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _shown(value: str | None) -> str:
    """A recorded instant as the rest of the output writes it (`...:00Z`)."""
    if value is None:
        return "-"
    try:
        return iso_utc(datetime.fromisoformat(value))
    except ValueError:
        return one_line(value, 40)
