"""Why the question's time words the answer is not about were not used: one line each,
shared by `investigate`'s card (its `Time` lines) and the served summary (results.py, which
puts a served caller's argument names in place of the flags: served_words.py)."""

from __future__ import annotations

from datetime import datetime

from graph_schema.canonical import iso_utc
from investigator.claims import NO_ERRORS_NAMED
from investigator.investigation import InvestigationResult
from investigator.terminal import one_line
from investigator.timeline import UnplacedReason, UnplacedTime, time_references


def _clean(text: object, limit: int = 160) -> str:
    return one_line(text, limit)


def _iso(value: datetime | None) -> str:
    return "-" if value is None else iso_utc(value)


_GIVE_A_DATE = (
    "Give --as-of, or the time in the question as a date and time with its zone "
    "(YYYY-MM-DDTHH:MM:SSZ)"
)


def unplaced_time_lines(result: InvestigationResult) -> list[str]:
    """The `Time` lines of the question's time words the answer is not about, each saying
    why: words it does not read as a time, an amount it cannot apply, an event not found,
    a time after as_of, a second period asked, or the run's deadline (runs recorded before
    the reasons were kept get the first two kinds of line, by the words alone)."""
    reasons = result.unresolved_time_reasons or [
        UnplacedTime(words=w, reason=UnplacedReason.NOT_READ, detail="")
        for w in result.unresolved_time_words
    ]
    late = time_references(result.question).after(result.as_of)
    by_reason: dict[UnplacedReason, list[UnplacedTime]] = {}
    for u in reasons:
        moved = u.words in late and u.reason is not UnplacedReason.OTHER_PERIOD
        reason = UnplacedReason.AFTER_AS_OF if moved else u.reason
        by_reason.setdefault(reason, []).append(u)
    lines: list[str] = []
    if unread := by_reason.get(UnplacedReason.NOT_READ):
        words = ", ".join(repr(_clean(u.words, 60)) for u in unread)
        lines.append(f"not resolved: {words}; the answer is at as_of. {_GIVE_A_DATE}")
    for u in by_reason.get(UnplacedReason.NOT_APPLIED, []):
        lines.append(
            f"not resolved: {_clean(u.words, 80)!r}; the answer is at as_of, not at "
            f"the event: {_clean(u.detail, 200)}, so it is not applied. {_GIVE_A_DATE}"
        )
    for u in by_reason.get(UnplacedReason.ZONE_NOT_READ, []):
        lines.append(
            f"not resolved: {_clean(u.words, 80)!r}; the answer is at as_of. "
            f"{_clean(u.detail[:1].upper() + u.detail[1:], 200)}"
        )
    for u in by_reason.get(UnplacedReason.OTHER_PERIOD, []):
        lines.append(f"not used: {_clean(u.words, 80)!r}: {_clean(u.detail, 300)}")
    unnamed = any(m.description == NO_ERRORS_NAMED for m in result.missing_evidence)
    for u in by_reason.get(UnplacedReason.EVENT_NOT_FOUND, []):
        if unnamed:
            # A later --as-of would find nothing more: the question names no errors to find.
            lines.append(
                f"not resolved: {_clean(u.words, 80)!r}; the answer is at as_of: "
                "the question names no errors to look for (see Missing evidence)"
            )
            continue
        lines.append(
            f"not resolved: {_clean(u.words, 80)!r}; the answer is at as_of. The "
            f"words are read, but {_clean(u.detail, 200)} in the KG as known at "
            f"{_iso(result.known_at)} that this subject may read: give a later --as-of or "
            "--known-at if it happened or was recorded after them, or the time in the question "
            "as a date and time with its zone (YYYY-MM-DDTHH:MM:SSZ)"
        )
    for u in by_reason.get(UnplacedReason.NAME_UNRESOLVED, []):
        # Not looked for, so a later --as-of would find nothing more: the name is the cause.
        lines.append(
            f"not resolved: {_clean(u.words, 80)!r}; the answer is at as_of: "
            f"{_clean(u.detail, 200)} (see above); ask with a visible id"
        )
    for u in by_reason.get(UnplacedReason.DEADLINE, []):
        lines.append(
            f"not resolved: {_clean(u.words, 80)!r}; the answer is at as_of. Not for "
            f"its wording: {_clean(u.detail, 200)} (stop: deadline). Give the run more time "
            "with --deadline-seconds, or ask again"
        )
    for u in by_reason.get(UnplacedReason.READ_FAILED, []):
        lines.append(
            f"not resolved: {_clean(u.words, 80)!r}; the answer is at as_of. Not for "
            f"its wording: {_clean(u.detail, 200)}. Ask again"
        )
    for u in by_reason.get(UnplacedReason.CUT_SHORT, []):
        # the detail names the flag, or the argument in served words (served_words.py)
        option = "--budget-tokens" if "budget" in u.detail else "--max-rounds"
        lines.append(
            f"not resolved: {_clean(u.words, 80)!r}; the answer is at as_of. Not for "
            f"its wording: {_clean(u.detail, 200)}. Ask again with a larger {option}"
        )
    explicit = [u for u in by_reason.get(UnplacedReason.AFTER_AS_OF, []) if u.words in late]
    if explicit:
        words = ", ".join(repr(_clean(u.words, 60)) for u in explicit)
        lines.append(
            f"not used: {words} is after as_of {_iso(result.as_of)}, and as_of "
            "bounds what the answer may know; the answer is at as_of. Give a later --as-of "
            "to ask about that time"
        )
    for u in by_reason.get(UnplacedReason.AFTER_AS_OF, []):
        if u.words not in late:  # an event's instant: "two hours after the alert fired"
            lines.append(
                f"not used: {_clean(u.words, 80)!r} is {_clean(u.detail, 200)}, and "
                "as_of bounds what the answer may know; the answer is at as_of. Give a later "
                "--as-of to ask about that time"
            )
    return lines
