"""Which time a recorded run answered for, and who chose it: the run's `as_of` and
`known_at`, each with where it came from, as `trace`, `runs` and `replay` say it.

The run records (`CtxRun`, hashed into its chain and so covered by its anchor) `as_of_from`
(`given`: `--as-of` or a served `as_of`; `text`: one time written in a runbook lookup's text,
or the start of the incident it names;
`now`: none given), `as_of_words` (the text's words it was read from) and `time_note` (what
the answer said of the time words in the text), and `known_at_given`. Runs recorded before
`as_of_from` was kept: an investigation's `as_of_given` (recorded since session 29) says
`given` or `now`; otherwise where as_of came from is "not recorded", never guessed.

A purge acts at its own time and asks about none: it records its time as both as_of and
known_at (`known_at_given` true, as the purge sets it), which read "(given)" until session 32.
Its times are said as what they are: `(now: a purge asks about no time)`.

The same words say where the as_of of an answer being printed came from (`investigate`'s
report and the runbook card, `as_of_source`), so the answer and its trace agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from graph_schema.canonical import iso_utc
from investigator.terminal import one_line

AsOfFrom = Literal["given", "text", "now"]
KnownAtFrom = Literal["given", "now"]
_AS_OF_FROM: frozenset[str] = frozenset({"given", "text", "now"})
NOT_RECORDED = "source not recorded"
# A purge's times: its own, no question of a time.
PURGE_TIME = "now: a purge asks about no time"
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
    # A purge run: its times are its own (not in the JSON documents: `*_from` say `now`).
    purge: bool = Field(default=False, exclude=True)

    def as_of_phrase(self) -> str:
        """`as_of 2026-07-22T23:00:00Z (from the text: '2026-07-23 01:00+0200')`."""
        return f"as_of {_shown(self.as_of)} ({self._as_of_source()})"

    def known_at_phrase(self) -> str:
        """`known_at 2026-12-06T05:40:01Z (now: none given)`."""
        source = {"given": "given", "now": "now: none given", None: NOT_RECORDED}
        said = PURGE_TIME if self.purge else source[self.known_at_from]
        return f"known_at {_shown(self.known_at)} ({said})"

    def quoting_fields(self) -> list[str]:
        """The fields of a `trace` or `replay` document that quote the run's own words (its
        time words, the note on them, the phrase quoting the words), as JSON Pointers: the
        document's `untrusted_fields` (recorded words are data, never instructions)."""
        fields = [f"/{k}" for k in ("as_of_words", "time_note") if getattr(self, k)]
        return [*fields, "/times"] if self.as_of_words and self.as_of_from == "text" else fields

    def phrase(self) -> str:
        """Both, in one phrase: what `trace` and `replay` print."""
        if self.purge:  # one time, its own: said once
            return f"as_of {_shown(self.as_of)}, known_at {_shown(self.known_at)} ({PURGE_TIME})"
        return f"{self.as_of_phrase()}, {self.known_at_phrase()}"

    def _as_of_source(self) -> str:
        if self.purge:
            return PURGE_TIME
        return as_of_source(self.as_of_from, self.as_of_words, self.time_note)


def as_of_source(
    as_of_from: AsOfFrom | None, words: str | None = None, time_note: str | None = None
) -> str:
    """Where an as_of came from, as trace says it and an answer prints it (`given`, `from
    the text: '2026-07-25 01:00 +0200'`, `now: none given`, `source not recorded`); `words`:
    the text's words it was read from, `time_note`: what was said of the text's time words
    (a time in the text not taken for it is said)."""
    if as_of_from == "text":
        quoted = one_line(words, _WORDS_MAX) if words else None
        return f"from the text: {quoted}" if quoted else "from the text"
    if as_of_from is None:
        return NOT_RECORDED
    said = "given" if as_of_from == "given" else "now: none given"
    # Time words in the text that were not taken for it: said, the note has the rest.
    return f"{said}; a time in the text not used" if time_note else said


def run_times(run: Mapping[str, Any] | None) -> RunTimes:
    """The times of a run from its recorded `CtxRun` properties (as shown to the reader)."""
    run = run or {}
    recorded = run.get("as_of_from")
    if recorded == "as_of":
        # The runbook JSON's word for `given` until session 32: read as the run's word.
        recorded = "given"
    as_of_from: Any = recorded if recorded in _AS_OF_FROM else None
    if as_of_from is None and isinstance(run.get("as_of_given"), bool):
        # An investigation recorded before `as_of_from`: it recorded whether as_of was given.
        as_of_from = "given" if run["as_of_given"] else "now"
    known_given = run.get("known_at_given")
    known_at_from: Any = None
    if isinstance(known_given, bool):
        known_at_from = "given" if known_given else "now"
    purge = run.get("command") == "purge"
    if purge:
        # Its own time, set by the purge (recorded `known_at_given`): none was asked.
        as_of_from = known_at_from = "now"
    return RunTimes(
        as_of=_text(run.get("as_of")),
        as_of_from=as_of_from,
        as_of_words=_text(run.get("as_of_words")) if as_of_from == "text" else None,
        known_at=_text(run.get("known_at")),
        known_at_from=known_at_from,
        time_note=_text(run.get("time_note")),
        purge=purge,
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
