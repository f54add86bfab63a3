"""The time a free-text runbook lookup is at when no as_of is given: one time its TEXT places.

Shared by `investigator runbook TEXT` (its card's `Time` line, its `--json`) and the served
`runbook_lookup` tool (target `text`), so a hurried "payment recovery on 2026-07-25 01:00
+0200" is the version in force then wherever it is asked, and both say what became of a
time written in the text. Before, the served tool did not read the text for a time: it
answered at now and said nothing (explorer e29 finding 17).

An explicit as_of (`--as-of`, the tool's `as_of`) and a time in the text that disagree: the
explicit one wins, and the note says the text's time was not used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from investigator.evidence import iso_utc
from investigator.lazy_pattern import LazyPattern
from investigator.terminal import one_line
from investigator.timeline import AnchorEvent, time_references, zone_not_read

# Where a lookup's as_of came from, in the run's words (investigator/context_graph/
# run_times.py, `CtxRun.as_of_from`): `given` (`--as-of`, the tool's `as_of`), `text` (one
# time written in its TEXT) or `now`. One vocabulary for the card's JSON, the served tool,
# the run and trace (until session 32 the JSON said `as_of` for `given`).
AsOfFrom = Literal["given", "text", "now"]

# How a note that took as_of from the text begins.
FROM_TEXT = "from the text: "


@dataclass(frozen=True)
class AsOfArgument:
    """How the asker names its as_of, for the notes: the CLI's flag or the tool's argument."""

    name: str  # "--as-of"
    give: str  # "give --as-of T"
    answer: str  # what is at a time: "card", "lookup"


CLI_AS_OF = AsOfArgument("--as-of", "--as-of T", "card")
SERVED_AS_OF = AsOfArgument("as_of", "as_of", "lookup")


@dataclass(frozen=True)
class TextTime:
    """What a TEXT lookup's time is: `at` (None: not from the text), `note` (what became of
    the time words in the text, None when it has none) and where as_of came from; `words`:
    the words of the text `at` was read from, quoted as the note quotes them (with how they
    were read), None when `at` is not from the text."""

    at: datetime | None
    note: str | None
    as_of_from: AsOfFrom
    words: str | None = None
    # The words naming an incident whose start `at` is ("during the PAY-4097 incident"),
    # read by the lookup's run (`RunbookQuery.incident_words`); None: not an incident's.
    incident_words: str | None = None
    # The purpose the incident was read under when the lookup is to run under it (no
    # purpose asked: `runbook_lookup` reads no incident record, `incident_investigation`
    # does); None: the lookup's own choice.
    purpose: str | None = None


def lookup_time(
    text: str | None,
    as_of: datetime | None,
    argument: AsOfArgument = CLI_AS_OF,
    now: datetime | None = None,
) -> TextTime:
    """The lookup's time for `text` (None: not a free-text lookup) and an as_of given or
    not: the given one, else one time the text places, else now (`at` None). `now`: what
    relative words ("yesterday", "2 hours ago") are read against (default: the clock)."""
    from_text, note = text_time(text, as_of, argument, now) if text is not None else (None, None)
    source: AsOfFrom = "given" if as_of is not None else "text" if from_text else "now"
    words = None
    if from_text is not None and note is not None and note.startswith(FROM_TEXT):
        # "from the text: '2026-07-25' (a day: ...); --as-of sets another time": the words.
        words = note.removeprefix(FROM_TEXT).removesuffix(f"; {argument.name} sets another time")
    return TextTime(from_text, note, source, words)


def text_time(
    text: str,
    as_of: datetime | None,
    argument: AsOfArgument = CLI_AS_OF,
    now: datetime | None = None,
) -> tuple[datetime | None, str | None]:
    """The instant a TEXT lookup is at when no as_of is given, and the note saying so.

    A hurried "payment recovery runbook on 2026-07-23T10:05:00Z" means the version in force
    then: one time the text places (investigator.timeline) is the lookup's as_of, said so.
    Words it cannot place alone ("yesterday", "when the alert fired", two times), or a time
    beside an as_of given, are not used, and the note says so instead of the answer being
    silently at now. A bare "then" ending a clause ("payment recovery then", "what did the
    runbook say then?") is said not used too: a lookup has no incident to place it at. One
    inside a sentence ("if ... then", "pool exhausted, then what?") is a sequence, not a
    time, and is not reported; nor is one beside a time the text places (that time is it).

    Relative words, with no as_of given, are read against now as an investigation reads
    them against its as_of (UTC): "2 hours ago" is now minus 2 h; "yesterday", "last week"
    a period, whose end the card is at (the version in force at the end of yesterday),
    said so. Beside an as_of given they are not used, as a written time is not.
    """
    refs = time_references(text)
    placed = sorted({n.at for n in refs.named})
    event_words = refs.event_words
    bare_then = _bare_then(event_words)
    if bare_then and (placed or not _then_as_a_time(text)):
        event_words = None
    if as_of is None and not placed and event_words is None and refs.unresolved:
        relative = _relative_time(text, now or datetime.now(UTC), argument)
        if relative is not None:
            return relative
    words = [n.words for n in refs.named] + refs.unresolved
    if event_words:
        words.append(event_words)
    if not words:
        return None, None
    quoted = ", ".join(repr(one_line(w, 60)) for w in dict.fromkeys(words))
    name, answer = argument.name, argument.answer
    if as_of is None and len(placed) == 1 and not refs.unresolved and event_words is None:
        reading = next(n.reading for n in refs.named if n.at == placed[0])
        how = f" ({reading})" if reading else ""
        return placed[0], f"{FROM_TEXT}{quoted}{how}; {name} sets another time"
    if as_of is not None and placed == [as_of] and not refs.unresolved and event_words is None:
        return None, None  # the text and the as_of given name the same instant
    if as_of is not None:
        return None, (
            f"not used: {quoted} in the text: {name} was given, and is this {answer}'s time"
        )
    zoned = [w for w in words if w in refs.zones_not_read]
    if zoned:
        # A zone it does not convert: never read as UTC, and said what to write instead.
        why = "; ".join(f"{one_line(w, 60)!r}: {zone_not_read(refs, w)}" for w in zoned)
        return None, f"not used: {why}; the {answer} is at now. Or give {argument.give}"
    what = "only one date or date-time with its year is used"
    if bare_then and words == [event_words]:
        what = f"a runbook lookup has no incident to place it at; {what}"
    return None, (
        f"not used: {quoted} in the text ({what}); the {answer} is at now. "
        f"Give {argument.give} (ISO-8601 with a zone) for the version in force then"
    )


def _relative_time(text: str, now: datetime, argument: AsOfArgument) -> tuple[datetime, str] | None:
    """The instant one relative time word of `text` names against now (a period's end,
    capped at now), and the note saying how it was read; None when the text has anything
    else it cannot place, or more than one."""
    refs = time_references(text, now)
    if len(refs.relative) != 1 or refs.unresolved or refs.event_words:
        return None
    rel = refs.relative[0]
    at = rel.end
    # The investigation's reading, against now rather than an as_of given.
    reading = (
        rel.reading.replace("as_of's day", "today").replace("as_of's", "the current one")
    ).replace("as_of", "now")
    if rel.kind == "instant":
        how = f"{iso_utc(at)}, {reading} ({iso_utc(now)})"
    else:
        how = f"{reading}; the {argument.answer} is at its end, {iso_utc(at)}"
    return at, f"from the text: {rel.words!r} read as {how}, UTC; {argument.name} sets another time"


def _bare_then(words: str | None) -> bool:
    """Whether a text has only the word "then" for an event (not "back then", "at that
    moment", "when the alert fired": those name a time the lookup does not place)."""
    return words is not None and words.strip().casefold() == "then"


# "then" ending a clause: "payment recovery then", "what did it say then?".
_CLAUSE_THEN = LazyPattern(r"\bthen\b\s*(?=$|[?!.,;:)])", re.IGNORECASE)
_IF = LazyPattern(r"\bif\b", re.IGNORECASE)


def _then_as_a_time(text: str) -> bool:
    """Whether `text` has a "then" that ends a clause not opened by "if": a time asked about
    ("the runbook then"), not a step after another ("then what?", "if ... then restart")."""
    for m in _CLAUSE_THEN.finditer(text):
        start = max(text.rfind(stop, 0, m.start()) for stop in ".?!;") + 1
        if _IF.search(text, start, m.start()) is None:
            return True
    return False


def incident_words(text: str | None) -> str | None:
    """The words of a TEXT that place it at an incident's start, as `investigate` reads them
    ("during the PAY-4097 incident", "rollback steps for the payments incident", "what were
    we supposed to follow"), when they are its only time words; None otherwise (a time
    written beside them, "before the incident", "two hours after the incident")."""
    if text is None:
        return None
    refs = time_references(text)
    if (
        refs.event is not AnchorEvent.INCIDENT_START
        or refs.side is not None
        or refs.offset is not None
        or refs.named
        or refs.unresolved
        or refs.relative
        or not refs.event_words
    ):
        return None
    return refs.event_words


def incident_placed_note(
    words: str, at: datetime, incident: str, argument: AsOfArgument = CLI_AS_OF
) -> str:
    """The Time line of a lookup placed at the start of the incident its text names."""
    return (
        f"{words!r} read as {iso_utc(at)}, the incident's start ({one_line(incident, 80)}); "
        f"{argument.name} sets another time"
    )


def incident_not_placed_note(words: str, argument: AsOfArgument = CLI_AS_OF) -> str:
    """The Time line when the incident the text names is none the subject may read."""
    return (
        f"not placed: {words!r} in the text names no incident this subject may read that "
        f"started by now; the {argument.answer} is at now. Give {argument.give} (ISO-8601 "
        "with a zone) for the version in force then"
    )


def without_time_words(text: str, as_of: datetime) -> str:
    """`text` without the words of the times it places ("at midnight on July 25, 2026",
    "yesterday at noon", "2 hours ago": `time_references`, relative words read against the
    lookup's `as_of`), for its runbook search: the time chooses the version in force, not a
    page. Words it does not place ("after the rollback") stay: they may name the page. The
    text as it is when nothing else would be left to search.

    Before h39-walk-time the search read them as words of the page: "payment recovery 2
    hours ago" (as_of now minus 2 h, said on the card) found no runbook, "hours" and "ago"
    being in none, and "payment recovery at midnight on July 25, 2026" neither."""
    refs = time_references(text, as_of)
    spans = {n.words for n in refs.named} | {r.words for r in refs.relative}
    out = text
    for words in sorted(spans, key=len, reverse=True):
        out = out.replace(words, " ")
    out = " ".join(out.split())
    return out if out and out != text else text
