"""Time as the investigator means it: which instant a question's words refer to.

Rules, in order (docs/investigation.md, "Time references"):

1. an explicit time written in the question means that time: an ISO date-time anywhere
   ("2026-07-23T10:02:00Z"); a date with its year after "on", "at", "as of", "by", "until"
   ("on 2026-07-20", "on 23 July 2026", "on July 23, 2026": its 00:00 UTC); a date with its
   year and a clock time ("2026-07-23 at 10:03 UTC", "10:03 on 23 July 2026"). The words
   before one place its side: "before 2026-07-24" is 1 s before it, "after 2026-07-23" the
   day's end, "between A and B" both ends (also two clock times on one day), "on the
   morning of 2026-07-23" the day, said so. Given `as_of`, a day without its year ("at
   midnight on July 24") is in the year of `as_of`, said so. A clock time without a zone is
   read as UTC, and the claim says so; a zone it does not know ("PST") is not guessed;
2. event words ("then", "at that moment", "at the time (of the incident)", "when it fired",
   当时, 那时, 事发时) mean the anchor event: the first error, else the release, else the
   incident start, else the alert, of the latest episode by `as_of` (a phrase naming one of
   them picks that one, with no stand-in: "when the first error happened", "at the first
   error", "when the alert went off", "at the time of the release"; "during the ledger
   incident", "during the PAY-4097 incident", "during inc:2026-07-23-payments" (that id
   only), "when release 2026.07.20.2 was deployed"; "for the payments incident", "were we
   supposed to", a bare "who was on call", 事故期间, 事故发生时: the incident start, as asked
   after the fact; an id or code naming no incident seen
   names none; a release within a day before the earlier of `as_of` and `known_at` comes
   before an error older than it);
   "when the incident was resolved", "at the end of the incident" mean its `resolved_at`;
   "before the release", "just before the errors started", "before the incident", "before
   the alert fired" (发布前, 故障前) mean one second before that event (a release: before it
   started, when its record says), and "after the release", "after the errors started",
   "after the alert fired", "after the incident" (发布后) the event itself: the state once it
   happened; an amount moves them ("two days before the alert", "the day after the
   incident"), and "the first / previous / last release" picks that release among those
   known (an amount or a pick it cannot apply, "a few hours before the alert", is listed,
   never taken as the event itself);
3. "now", "currently" (现在, 目前) mean `as_of`;
4. nothing: `as_of`.

Relative words are read against `as_of`, in UTC (the KG's times are UTC; `_RELATIVE_PERIOD`,
`_AGO`), when it is given (the run always has one: now when none is asked): "yesterday"
(昨天) is the UTC day before as_of's UTC day, "the day before yesterday" (前天) the one
before it, "today" (今天) as_of's day up to as_of; "this week" / "this month" from the start
of as_of's ISO week / month up to as_of, "last week" (上周) the ISO week before as_of's
(Monday to Sunday), "last month" (上个月) the month before; "on Monday" / "last Monday" the
most recent such day before as_of's day (asked on a Monday: the Monday a week before); "last
night" / "overnight" 18:00 UTC the day before as_of's to 06:00 on it, "this morning" 06:00 to
12:00 UTC on as_of's day, "last weekend" the Saturday and Sunday before as_of's ISO week. Each is
a period as if its dates had been written (`RelativeTime`, `TimeReferences.relative`); "N
hours ago" (5h ago, 2小时前) is the instant as_of minus N, and "yesterday at 10:02" that
instant. Time words it does not resolve are listed, and the answer says it is at `as_of`:
relative ones that are vague ("the other day", "tonight", "a few hours ago", "2 months ago",
昨晚; any relative word when no `as_of` is given), a day
without a year when no `as_of` is given, a clock time without a date ("at 10:03"), a time relative
   to an event other than the anchors ("right after the migration", "before the
   rollback", "when the incident was declared"), the moment of anything else ("when the
   first timeout happened", "at the time of the migration").

`as_of` always stays a reference too, so when the owner or the runbook in force differs
between the event and `as_of`, both are admitted and both are stated, labelled. A reference
after `as_of` is not used: `as_of` bounds what the answer may know. An explicit one is then
listed with the words not used (`time_words_not_used`), so the answer says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Literal, NamedTuple

from pydantic import BaseModel, Field

from investigator.errors import BadInput
from investigator.evidence import Evidence, iso_utc
from investigator.evidence import instant_of as instant_of  # imported from here too
from investigator.lazy_pattern import LazyPattern

EARLIEST = datetime.min.replace(tzinfo=UTC)
LATEST = datetime.max.replace(tzinfo=UTC)


def shift(value: datetime, delta: timedelta) -> datetime:
    """`value + delta`, saturating at the ends of the calendar instead of overflowing."""
    try:
        return value + delta
    except OverflowError:
        return EARLIEST if delta < timedelta(0) else LATEST


class AnchorEvent(StrEnum):
    """The events a question's "then" can mean, in the order they are tried."""

    FIRST_ERROR = "first_error"
    RELEASE = "release"
    INCIDENT_START = "incident_start"
    ALERT = "alert"
    # "when the incident was resolved": its `resolved_at`. Never a stand-in for "then".
    INCIDENT_END = "incident_end"
    # "before the ownership change", "after the handover": the latest change of owner of the
    # services asked about by as_of (an OWNS record starting where another team's held).
    # Never a stand-in for "then".
    OWNER_CHANGE = "owner_change"


# The order the plain "then" tries when its first error is not found.
ANCHOR_ORDER: tuple[AnchorEvent, ...] = (
    AnchorEvent.FIRST_ERROR,
    AnchorEvent.RELEASE,
    AnchorEvent.INCIDENT_START,
    AnchorEvent.ALERT,
)

_ALERT_WORDS = LazyPattern(
    # "the alert fired", not "what / which alert fired" (which asks for the alert).
    r"\bwhen (it|the alert|the page|\w+) (fired|paged|triggered)\b|"
    r"(?<!what )(?<!which )(?<!any )\b(alert|page) fired\b|告警时|"
    # "when the alert went off", "when the alert was triggered", "at the time of the alert"
    r"\bwhen (?:it|the (?:[\w.:-]+ )?(?:alert|page)) (?:first )?(?:went off|started firing|"
    r"began firing|(?:was|got) (?:first )?(?:triggered|raised))\b|"
    r"\bat the time of the (?:[\w.:-]+ )?(?:alert|page)\b",
    re.IGNORECASE,
)
# A release's version as written: "release 2026.07.20.2", "release-2026.07.20.2".
_RELEASE_VERSION = LazyPattern(r"\d{4}\.\d{2}\.\d{2}\.\d+")
# How far before the first error another change counts as a confounder (claims/candidates.py);
# "what changed around the release?" reads this far on either side of it
# (change_period.event_change_period).
CONFOUNDER_WINDOW = timedelta(minutes=30)
# "Around the release", "at the same time as the incident": an event with a window on both
# sides of it (a change question's period; another question's instant is the event's).
_AROUND = (
    r"(?:around|near|close\s+to|(?:at\s+)?(?:about|around|roughly)\s+the\s+same\s+time\s+as|"
    r"at\s+the\s+same\s+time\s+as)"
)
AROUND_WORDS = LazyPattern(r"\s*" + _AROUND + r"\s", re.IGNORECASE)
# The words that pick one release among those known ("the very first", "the most recent").
_PICK = (
    r"(?:(?:very|most) )?(?:first|earliest|initial|original|previous|prior|preceding|earlier|"
    r"last|latest|newest|recent|final) "
)
_RELEASE_WORDS = LazyPattern(
    # "around the release", "at the same time as release 2026.07.23.1": that release
    r"\b" + _AROUND + r"\s+(?:the\s+)?(?:release[-\s_]+v?\d{4}\.\d{2}\.\d{2}\.\d+|"
    r"deploy:release-\d{4}\.\d{2}\.\d{2}\.\d+|\d{4}\.\d{2}\.\d{2}\.\d+ release)(?![\w.-])|"
    r"\b" + _AROUND + r"\s+(?:the|this|that|its)\s+(?:" + _PICK + r")?"
    r"(?:release|deploy(?:ment)?|rollout)\b|"
    # "when release 2026.07.20.2 was deployed": that release (its version is in the words)
    r"\b(?:at|during|when) (?:the )?(?:release[-\s_]+v?\d{4}\.\d{2}\.\d{2}\.\d+|"
    r"deploy:release-\d{4}\.\d{2}\.\d{2}\.\d+|\d{4}\.\d{2}\.\d{2}\.\d+ release)"
    r"(?: (?:was|got|had been) (?:deployed|released|shipped|rolled out|finished))?(?![\w.-])|"
    # "when the release was rolled back" is the rollback, not the release
    r"\b(at|during|when) (the )?(" + _PICK + r")?(release|deploy(ment)?|rollout)\b"
    r"(?!\s+(?:was|were|got|had been)\s+(?:rolled|reverted|undone|backed|pulled))|"
    r"\bwhen (the )?(" + _PICK + r")?(release|deploy(ment)?|rollout) "
    r"(went out|finished|happened|landed)\b|"
    r"\bwhen it (was )?(released|deployed|shipped)\b|发布时|上线时|部署时|"
    # "on the day of the release": that release (h39-walk-time; was dropped without a word)
    r"\b(?:on )?the (?:very )?day of (?:the|this|that|its) (?:" + _PICK + r")?"
    r"(?:release|deploy(?:ment)?|rollout)\b|"
    # "at the time of the release": the release, not the first error "at the time" was
    r"\bat the time of the (?:(?:very|most) )?(?:[\w.:-]+ )?(?:release|deploy(?:ment)?|rollout)\b",
    re.IGNORECASE,
)
# An incident named by its id: "inc:2026-07-23-payments", "incident inc:2026-07-23-payments".
_INCIDENT_ID = LazyPattern(r"(?<![\w:])inc:[\w.:-]*\w", re.IGNORECASE)
# "the incident", or words naming it: "the payments incident", "the 2026-07-23 outage", or
# its id (before, "during inc:2026-07-23-payments" was no time word: answered at as_of)
_THE_INCIDENT = (
    r"(?:the (?:[\w.:-]+ ){0,3}?(?:incident|outage)|(?:the )?(?:(?:incident|outage) )?"
    + _INCIDENT_ID.pattern
    + r")"
)
_INCIDENT_WORDS = LazyPattern(
    r"\b" + _AROUND + r"\s+" + _THE_INCIDENT + r"\b|"
    r"\b(?:at the time of|during|throughout) " + _THE_INCIDENT + r"\b|"
    # "on the day of the incident": its start, as "during the incident" (before h39-walk-time,
    # dropped without a word: the answer was at as_of, `complete`)
    r"\b(?:on )?the (?:very )?day of " + _THE_INCIDENT + r"\b|"
    r"\bat the (?:start|beginning|onset) of " + _THE_INCIDENT + r"\b|"
    r"\b(?:when|while) " + _THE_INCIDENT + r" (?:started|began|happened|was (?:happening|"
    r"ongoing|going on|open|active))\b|事发时|故障时|事故时|"
    # 事故期间 ("during the incident"), 事故发生时 ("when the incident happened"), 故障期间,
    # 事发期间: the incident's start, as "during the incident" (before, dropped without a
    # word: the answer was at as_of, `complete`)
    r"(?:事故|故障|事件)(?:发生)?(?:期间|之时|时)|事发期间|出事时",
    re.IGNORECASE,
)
# The response to the incident: "did the responders follow runbook v3", "was it followed",
# "for the PAY-4097 incident", "who was paged" ask what held while it was handled: its start.
_RESPONSE_WORDS = LazyPattern(
    r"\b(?:did|do|have|had)\s+(?:the\s+)?(?:responders?|on-?call(?:\s+engineers?)?|"
    r"engineers?|team|we|they)\s+(?:follow|skip)\b(?!\s+up)|"
    r"\b(?:was|were)\b[^?]{0,60}?\b(?:followed|skipped)\b(?!\s+by)|"
    r"\bfor the (?:[A-Z][A-Z0-9]{1,9}-\d{2,6}\s+)?(?:incident|outage)\b|"
    # "for the payments incident", "on call in the 2026-07-23 outage", "for inc:...": the
    # words naming it are read as "during the payments incident" reads them (before, only
    # "for the incident" and "for the PAY-4097 incident" were: the answer was at as_of)
    r"\b(?:for|in) " + _THE_INCIDENT + r"\b(?![ -](?:report|review|doc|channel|ticket|"
    r"summary|timeline|postmortem|commander|manager|process|record))|"
    # "what runbook were we supposed to follow", "which runbook did we use", "should we
    # have paged": what the responders were to do, at the incident's start
    r"\b(?:were|was) (?:we|they|you|the (?:responders?|on-?call|team)) supposed to\b|"
    r"\bshould (?:we|they|the (?:responders?|on-?call|team)) have\b|"
    r"\b(?:did|had) (?:we|they|the (?:responders?|on-?call|team)) use\b|"
    r"\b(?:we|they) used (?:during|for|in|on)\b|"
    r"\b(?:was|were|got|should have been|would have been)\s+paged\b",
    re.IGNORECASE,
)
# "who was on call?", "who was on-call and who was paged": the past tense asks who it was
# while the incident was handled (before, the owner at as_of alone was named, the team that
# took over the day after). Only when the question names no other time.
_ON_CALL_PAST = LazyPattern(r"\bwho (?:was|were) (?:the )?on[- ]?call\b", re.IGNORECASE)
_RESOLVED = r"(?:resolved|closed|over|ended|fixed)"
_INCIDENT_END_WORDS = LazyPattern(
    r"\b(?:when|once|as) (?:the|this|that) (?:incident|outage) (?:was |got |had been )?"
    + _RESOLVED
    + r"\b|\bat the (?:end|close) of the (?:incident|outage)\b|"
    r"\bwhen it (?:was |got )?(?:resolved|closed)\b|事故结束时|故障结束时|故障恢复时|事故解决时",
    re.IGNORECASE,
)
# The first error as users name it: "the first error", "PAY-4097", "the PAY-4097 errors".
_FIRST_ERROR_NOUN = (
    r"(?:(?:very\s+)?first\s+)?(?:[A-Z][A-Z0-9]{1,9}-\d{2,6}(?:\s+(?:errors?|failures?))?|"
    r"(?:[A-Z][A-Z0-9]{1,9}-\d{2,6}\s+)?(?:errors?|failures?|problems?))"
)
# How they say it began: "happened", "first occurred", "was first seen".
_FIRST_ERROR_BEGAN = (
    r"(?:(?:first\s+)?(?:started|began|appeared|showed up|happened|occurred|hit|broke out|"
    r"kicked in|surfaced)|(?:was|were)\s+(?:first\s+)?(?:seen|logged|raised|reported|thrown|"
    r"returned|observed|detected))"
)
# What follows "at the moment" when it is a moment of something ("at the moment the errors
# started", "at the moment of the incident"); alone, "at the moment" is now.
_MOMENT_OF = r"\s+(?:of|when|it|they|the|this|that|errors?|failures?|[A-Z][A-Z0-9]{1,9}-\d{2,6})\b"
_EVENT_WORDS = LazyPattern(
    # "at the time of the migration" names no anchor: "at the time" is "then" only alone
    r"(?<!since )\bthen\b|\bat that (moment|point)\b|\bat the point\b|\bat that time\b|"
    # "at the moment" alone is now; followed by what happened it is that moment
    r"\bat the moment\b(?=" + _MOMENT_OF + r")|"
    r"\bat the time\b(?!\s+of\b)|"
    r"\bback then\b|\bwhen it (happened|started|broke|fired)\b|\bduring the (incident|outage)\b|"
    # "when PAY-4097 started", "when the errors began", "as the errors first appeared"
    r"\b(when|as) (the )?([A-Z][A-Z0-9]{1,9}-\d{2,6} |errors? |failures? |problems? )?"
    r"(errors? )?(started|began|first appeared|first showed up|hit|broke out)\b|"
    # "while PAY-4097 was happening", "while the errors were happening": its first error
    r"\bwhile (?:the )?(?:[A-Z][A-Z0-9]{1,9}-\d{2,6}(?: errors?| failures?)?|errors?|failures?)"
    r" (?:was|were) (?:happening|occurring|ongoing|going on|being (?:raised|thrown|returned))\b|"
    # "when the first error happened", "the moment PAY-4097 was first seen", "when it first
    # happened" (before, these were dropped without a word: the answer was at as_of)
    r"\b(?:when|once|as soon as|the moment)\s+(?:the\s+)?"
    + _FIRST_ERROR_NOUN
    + r"\s+"
    + _FIRST_ERROR_BEGAN
    + r"\b|\bwhen (?:it|they) first (?:happened|started|began|occurred|appeared|showed up)\b|"
    # "at the first error", "at the time of the (first) PAY-4097 errors", "at the onset of
    # the errors"
    r"\bat the (?:very\s+)?first\s+(?:[A-Z][A-Z0-9]{1,9}-\d{2,6}\s+)?(?:errors?|failures?)\b|"
    r"\bat the (?:time|start|beginning|onset) of (?:the\s+)?" + _FIRST_ERROR_NOUN + r"\b|"
    r"当时|那时|那个时候|彼时|事发时|故障时|事故时|发布时|上线时|告警时",
    re.IGNORECASE,
)


class EventSide(StrEnum):
    """Which side of the anchor event a question asks about ("before the release")."""

    BEFORE = "before"
    AFTER = "after"


# How far before an event "before <event>" looks: the state just before it happened.
BEFORE_EVENT = timedelta(seconds=1)
# The incident of "before/after the incident", "... incident inc:...", "... inc:...".
_SIDE_INCIDENT = rf"(?:(?:incident|outage)(?:\s+{_INCIDENT_ID.pattern})?|{_INCIDENT_ID.pattern})"
# An amount of time before or after an event: "two days", "30 minutes", "an hour and a
# half", "the day" ("the day after the incident"); also the amounts it cannot apply ("a few
# hours", "long", "the morning", "in the two days": a period), read so that they are said.
_AMOUNT_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15,
    "twenty": 20, "thirty": 30, "forty": 40, "forty-five": 45, "fifty": 50, "sixty": 60,
    "ninety": 90,
}  # fmt: skip
_AMOUNT_UNITS = {
    "s": timedelta(seconds=1), "sec": timedelta(seconds=1), "second": timedelta(seconds=1),
    "min": timedelta(minutes=1), "minute": timedelta(minutes=1),
    "h": timedelta(hours=1), "hr": timedelta(hours=1), "hour": timedelta(hours=1),
    "day": timedelta(days=1), "week": timedelta(weeks=1),
}  # fmt: skip
_OFFSET = (
    r"(?P<offset>(?P<period>\b(?:in|within|during|over|for|throughout)\s+(?:the\s+)?"
    r"(?:(?:last|first|past|few|next)\s+)?)?"
    r"(?:\b(?:about|around|roughly|approximately|exactly|just|only)\s+|"
    r"\b(?P<bound>nearly|almost|over|under|less\s+than|more\s+than|at\s+least|at\s+most|"
    r"up\s+to)\s+)?"
    r"(?:\b(?P<qty>(?:\d+|one|two|three|four|five|six)\s+and\s+a\s+half|\d+(?:\.\d+)?|"
    r"an?|one|two|three|four|five|six|seven|eight|nine|ten|"
    r"eleven|twelve|fifteen|twenty|thirty|forty-five|forty|fifty|sixty|ninety|half\s+an?|"
    r"a\s+couple\s+of|a\s+few|few|several|many|some|a\s+number\s+of)\s*)?"
    r"(?P<unit>\b(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?)|"
    r"(?<=\d)(?:s|h|m))\b(?P<half>\s+and\s+a\s+half)?"
    r"|\bthe\s+(?P<the_unit>minute|hour|day|week|month|year)"
    r"|\bthe\s+(?P<part>morning|afternoon|evening|night)"
    r"|\b(?P<vague>a\s+(?:short\s+|long\s+)?(?:while|time|bit|moment)|some\s+time|a\s+little|"
    r"moments|long|well|way|much|not\s+long|soon|ages|hours|days|weeks|months|years))\s+"
)
# Words just before a side phrase that say an amount it did not read ("one and a half hours
# before the alert"): the phrase is then not taken as the event itself.
_AMOUNT_TAIL = LazyPattern(
    r"(?:(?<![\w.:-])\d+(?:[.,]\d+)?\s*|\b(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|"
    r"weeks?|months?|years?|half|while|time|bit|moments?|long|well|way|much|soon|ages)\s+)$",
    re.IGNORECASE,
)


# The longest amount read: past the whole calendar from any as_of, and still negatable
# (`-timedelta.max` overflows). "99999999999 hours" is read as this, not an OverflowError.
_LONGEST_AMOUNT = timedelta(days=999_999_999)


def _scaled(unit: timedelta, qty: float) -> timedelta:
    """`unit * qty`, saturating at `_LONGEST_AMOUNT` (shifting by it reaches the calendar's
    end, as `shift` says) instead of overflowing."""
    try:
        return min(unit * qty, _LONGEST_AMOUNT)
    except (OverflowError, ValueError):
        return _LONGEST_AMOUNT


def _amount(m: re.Match[str], spans: bool = False) -> tuple[timedelta | None, str | None]:
    """The amount an `_OFFSET` match moves the instant by, or why it cannot be applied
    (None, None: no amount written). `spans`: a change question, whose amount before or
    after an event is the length of the period it reads ("in the week before the
    incident"), so a period's words are an amount like any other."""
    words = (m.group("offset") or "").strip()
    if not words:
        return None, None
    if m.group("period") and not spans:
        return None, f"{words!r} is a period, not an instant"
    if m.group("part"):
        return None, f"{words!r} names a part of a day, which has no clock time here"
    if m.group("bound"):
        return None, f"{words!r} is a bound, not an amount"
    if m.group("vague"):
        return None, f"{words!r} is no exact amount"
    written = (m.group("unit") or m.group("the_unit") or "").lower()
    unit = {"s": "sec", "m": "min", "h": "hour"}.get(written) or written.removesuffix("s")
    if not m.group("qty") and not m.group("the_unit") and written != unit and len(written) > 1:
        return None, f"{words!r} is no exact amount"  # "hours before the alert"
    if unit in ("month", "year"):
        return None, f"{words!r}: a {unit} has no fixed length"
    qty_text = re.sub(r"\s+", " ", (m.group("qty") or "one").lower())
    if qty_text.endswith(" and a half"):  # "one and a half hours"
        qty_text, extra = qty_text.split(" ", 1)[0], 0.5
    else:
        extra = 0.0
    if qty_text.startswith("half"):
        qty = 0.5
    elif qty_text in _AMOUNT_NUMBERS:
        qty = _AMOUNT_NUMBERS[qty_text]
    elif re.fullmatch(r"\d+(?:\.\d+)?", qty_text):
        qty = float(qty_text)
    else:
        return None, f"{words!r} is no exact amount"
    if m.group("half"):
        extra += 0.5
    return _scaled(_AMOUNT_UNITS[unit], qty + extra), None


# "In the last hour", "over the past 3 days", "last 30 minutes": a window ending at as_of.
# "Last week" alone is a calendar week, "last night" 18:00 to 06:00 UTC (`_RELATIVE_PERIOD`).
_LAST_SPAN = LazyPattern(
    r"(?:\b(?:in|within|during|over|for|from)\s+)?"
    r"(?:\bthe\s+(?:last|past|previous)\s+|\bpast\s+|\blast\s+(?=\d|an?\b|half\b))"
    r"(?:(?P<qty>\d+(?:\.\d+)?|an?|half\s+an?|one|two|three|four|five|six|seven|eight|nine|"
    r"ten|eleven|twelve|fifteen|twenty|thirty|forty-five|forty|fifty|sixty|ninety)\s*)?"
    r"(?P<unit>seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|(?<=\d)(?:s|m|h|d))\b",
    re.IGNORECASE,
)
_SPAN_UNITS = {"m": "min", "h": "hour", "d": "day", "s": "sec"}


def _last_span(m: re.Match[str]) -> timedelta:
    """The length of "the last N <unit>" (N one when not written: "the last hour")."""
    written = m.group("unit").lower()
    unit = _SPAN_UNITS.get(written) or written.removesuffix("s")
    qty_text = re.sub(r"\s+", " ", (m.group("qty") or "one").lower())
    if qty_text.startswith("half"):
        qty = 0.5
    elif qty_text in _AMOUNT_NUMBERS:
        qty = float(_AMOUNT_NUMBERS[qty_text])
    else:
        qty = float(qty_text)
    return _scaled(_AMOUNT_UNITS[unit], qty)


# An amount written just before a side word of a written time ("two days before 2026-11-11").
_OFFSET_BEFORE = LazyPattern(r"(?:" + _OFFSET + r")$", re.IGNORECASE)


def amount_text(delta: timedelta) -> str:
    """`2 d`, `2 h 30 min`, `45 s`: an amount of time as the Time line says it."""
    if delta >= _LONGEST_AMOUNT:
        return "more than the calendar holds"
    seconds = int(delta.total_seconds())
    days, rest = divmod(seconds, 86400)
    parts = [(days, "d"), (rest // 3600, "h"), (rest % 3600 // 60, "min"), (rest % 60, "s")]
    return " ".join(f"{n} {unit}" for n, unit in parts if n) or "0 s"


# A release named by its version, with no article: "before release 2026.07.23.1", "after
# release-2026.07.20.2", "before deploy:release-2026.07.23.1" (before, not placed: the words
# were read as a correlation to judge).
_VERSIONED = r"(?:release[-\s_]+v?|deploy:release-)\d{4}\.\d{2}\.\d{2}\.\d+"
# "before/after <anchor event>": the side, then which event ("before the ownership change":
# the service's latest change of owner). Non-anchor events ("after the migration") stay
# unresolved. An incident named by its id needs no article ("before
# inc:2026-07-23-payments", "after incident inc:..."): before, only "during inc:..." was a time.
# An amount before the side ("two days before the alert") moves the instant by it.
_EVENT_SIDE_WORDS = LazyPattern(
    r"(?:" + _OFFSET + r")?"
    r"\b(?:(?:right|just|shortly|immediately)\s+)?"
    r"(?:(?P<before>before|prior to)|(?P<after>after|following|since))\s+"
    r"(?:(?:the|this|that|its)\s+|(?=(?:(?:incident|outage)\s+)?inc:)|(?=" + _VERSIONED + r"))"
    r"(?:(?P<release>" + _VERSIONED + r"(?:\s+(?:deploy(?:ment)?|rollout))?|"
    r"(?:(?:very|most)\s+)?(?:[\w.:-]+\s+)?(?:release|deploy(?:ment)?|rollout))"
    r"(?:\s+(?:went out|finished|happened|landed))?\b"
    r"|(?P<error>(?:first\s+)?(?:[A-Z][A-Z0-9]{1,9}-\d{2,6}\s+)?(?:errors?|failures?))"
    r"(?:\s+(?:started|began|first appeared|appeared))?\b"
    r"|(?P<alert>alert|page)(?:\s+(?:fired|paged|triggered))?\b"
    r"|(?P<owner_change>(?:ownership|owner|team)\s+(?:change|handover|hand-?off|transfer|switch)"
    r"|handover|hand-?off)\b"
    r"|(?P<incident>" + _SIDE_INCIDENT + r"(?:\s+(?:(?P<began>started|began)|"
    r"(?P<ended>(?:was\s+|got\s+|had\s+been\s+)?" + _RESOLVED + r")))?)\b)"
    r"|(?P<zh_release_before>发布前|上线前|部署前)|(?P<zh_release_after>发布后|上线后|部署后)"
    r"|(?P<zh_error_before>故障前|出错前|报错前)",
    re.IGNORECASE,
)


def _event_side(question: str) -> tuple[AnchorEvent, EventSide, re.Match[str]] | None:
    """The first "before/after <anchor event>" phrase of a question, if any."""
    for m in _EVENT_SIDE_WORDS.finditer(question):
        if m.group("zh_release_before"):
            return AnchorEvent.RELEASE, EventSide.BEFORE, m
        if m.group("zh_release_after"):
            return AnchorEvent.RELEASE, EventSide.AFTER, m
        if m.group("zh_error_before"):
            return AnchorEvent.FIRST_ERROR, EventSide.BEFORE, m
        side = EventSide.BEFORE if m.group("before") else EventSide.AFTER
        if m.group("release"):
            return AnchorEvent.RELEASE, side, m
        if m.group("error"):
            return AnchorEvent.FIRST_ERROR, side, m
        if m.group("alert"):
            return AnchorEvent.ALERT, side, m
        if m.group("owner_change"):
            return AnchorEvent.OWNER_CHANGE, side, m
        if m.group("incident"):
            # "before the incident (started)", "after it started": its start; "after the
            # incident", "before it was resolved": its end (`resolved_at`).
            began = m.group("began") or (side is EventSide.BEFORE and not m.group("ended"))
            return (AnchorEvent.INCIDENT_START if began else AnchorEvent.INCIDENT_END), side, m
    return None


class ReleasePick(StrEnum):
    """Which of the releases known a question's words name ("the first release")."""

    FIRST = "first"
    PREVIOUS = "previous"  # the one before the release "the release" alone would mean
    LATEST = "latest"


_RELEASE_PICKS = {
    **dict.fromkeys(("first", "earliest", "initial", "original"), ReleasePick.FIRST),
    **dict.fromkeys(("previous", "prior", "preceding", "earlier"), ReleasePick.PREVIOUS),
    **dict.fromkeys(("last", "latest", "newest", "recent", "final"), ReleasePick.LATEST),
}
# Words that pick a release it does not choose (no count of releases is kept).
_UNREAD_PICKS = frozenset(
    {"second", "third", "fourth", "fifth", "next", "upcoming", "following", "later",
     "subsequent", "another", "other", "penultimate", "older"}
)  # fmt: skip
_PICK_WORDS = LazyPattern(r"\b([\w-]+)\s+(?:release|deploy(?:ment)?|rollout)\b", re.IGNORECASE)


def release_pick(words: str | None) -> ReleasePick | None:
    """The release the words pick among those known ("before the first release"), if any."""
    for m in _PICK_WORDS.finditer(words or ""):
        pick = _RELEASE_PICKS.get(m.group(1).lower())
        if pick is not None:
            return pick
    return None


def _release_pick_problem(event: AnchorEvent | None, words: str) -> str | None:
    """Why a release's words cannot be applied ("the second release": no count is kept)."""
    if event is not AnchorEvent.RELEASE:
        return None
    for m in _PICK_WORDS.finditer(words):
        if m.group(1).lower() in _UNREAD_PICKS:
            return (
                f"which release {m.group(0)!r} means is not read (only the first, the "
                "previous or the latest release, or one named by its version)"
            )
    return None


def without_event_side_words(question: str) -> str:
    """The question with its resolved "before/after <event>" phrase blanked (for the intent
    rules: "before the release" is a time, not by itself a correlation question)."""
    found = _event_side(question)
    return question if found is None else _blank(question, found[2].start(), found[2].end())


_NOW_WORDS = LazyPattern(
    r"\b(now|currently|current|today|at present|these days|nowadays|"
    r"at the moment(?!" + _MOMENT_OF + r")|at this (?:moment|time)|as we speak)\b|"
    r"现在|目前|当前|如今",
    re.IGNORECASE,
)
# Zone abbreviations it does not convert (several are ambiguous: IST, CST): a time in one
# of them is listed as not resolved, never read as UTC.
_OTHER_ZONES = (
    r"(?-i:CET|CEST|EET|EEST|WET|WEST|BST|IST|PST|PDT|MST|MDT|CST|CDT|EST|EDT|AKST|AKDT|"
    r"HST|JST|KST|HKT|SGT|AEST|AEDT|ACST|AWST|NZST|NZDT|MSK|ET|PT|CT|MT)"
)
# An ISO date and time with its zone written right after it or after a space, as `date`, log
# lines and Alertmanager's StartsAt write it ("2026-07-24 01:00 +0200", "... +02:00",
# "2026-07-23 10:03:10 +0000 UTC", "2026-07-25 10:03 UTC"): an abbreviation after an offset
# (Go's "+0200 CEST") names the offset; one alone ("... 01:00 CEST") is `other`, not
# converted and never read as UTC.
_DATETIME = LazyPattern(
    r"(?<![\w:.@/-])(?P<date>\d{4}-\d{2}-\d{2})[T ]"
    r"(?P<clock>\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)"
    r"(?:(?P<zone>Z|[+-]\d{2}:?\d{2})"
    r"|[ \t]+(?P<spaced>(?-i:Z)|(?-i:UTC|GMT)(?:[ \t]*[+-]\d{1,2}(?::?\d{2})?)?|[+-]\d{2}:?\d{2})"
    r"(?:[ \t]+(?-i:UTC|GMT|" + _OTHER_ZONES + r")(?![\w-]))?"
    r"|[ \t]+(?P<other>" + _OTHER_ZONES + r"|local(?: time)?))?(?![\w-])"
)
# Times relative to a day or a clock: "yesterday", "2 hours ago", "last night", "on Monday",
# 昨天. Those `_RELATIVE_PERIOD` and `_AGO` read against as_of are blanked first; the rest
# ("last night", "a few hours ago", any of them with no as_of) are answered at `as_of` and
# said so (`InvestigationResult.unresolved_time_words`), instead of quietly meaning "now".
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_UNIT = r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?)"
_RELATIVE_WORDS = LazyPattern(
    r"\b(?:(?:the )?day before yesterday|yesterday(?: (?:morning|afternoon|evening|night))?|"
    r"tonight|last night|earlier today|"
    r"this (?:morning|afternoon|evening|week|month)|the other day|"
    r"(?:the )?(?:previous|next) (?:day|week|morning)|"
    r"last (?:week|weekend|month|year|night|" + _WEEKDAY + r")|"
    r"(?:on |this |last )?" + _WEEKDAY + r"|"
    r"(?:(?:\d+|an?|one|two|three|four|five|six|ten|a few|a couple of|several)\s+"
    + _UNIT
    + r"|\d+[smhd])\s+ago)\b|"  # "5h ago" too: never dropped silently
    r"前天|昨天|昨晚|今早|今天早上|上周|上个月|(?:\d+|几|半)\s*(?:秒|分钟|个?小时|天|周)前",
    re.IGNORECASE,
)
# Not inside an id: "RR-2026-07-23a" names a rule set, not an error code RR-2026 (as planner).
_ERROR_CODE = LazyPattern(r"\b[A-Z][A-Z0-9]{1,9}-\d{2,6}\b(?![-\w]|\.\w)")

# -- dates and clock times written out -----------------------------------------------------
_MONTHS = {
    "january": 1,
    "february": 2,
    "march": 3,
    "april": 4,
    "may": 5,
    "june": 6,
    "july": 7,
    "august": 8,
    "september": 9,
    "october": 10,
    "november": 11,
    "december": 12,
}
_MONTH_NUMBER = {
    **_MONTHS,
    **{name[:3]: n for name, n in _MONTHS.items()},
    "sept": 9,
}
# "may" only as "May": "who may 3 ..." is no date.
_MONTH = (
    r"(?:"
    + "|".join(
        n if n != "may" else "(?-i:May)" for n in sorted(_MONTH_NUMBER, key=len, reverse=True)
    )
    + r")\b\.?"
)
_ORDINAL = r"(?:st|nd|rd|th)?"
# A day with its year: ISO, "23 July 2026", "July 23, 2026", 2026年7月23日 (a weekday before it
# is part of it: "Thursday, 23 July 2026").
_DAY_WITH_YEAR = (
    r"(?:" + _WEEKDAY + r",?\s+)?"
    r"(?:(?<![\w:.@/-])(?P<iy>\d{4})-(?P<im>\d{2})-(?P<id>\d{2})(?![\w:-])"
    r"|(?<![\d:])(?P<dd>\d{1,2})" + _ORDINAL + r"\s+(?:of\s+)?(?P<dm>" + _MONTH + r")(?:,?\s+"
    r"(?P<dy>\d{4}))?(?![\d:])"
    r"|(?P<mm>" + _MONTH + r")\s+(?P<md>\d{1,2})" + _ORDINAL + r"(?:,?\s+(?P<my>\d{4}))?"
    r"(?![\d:])"
    r"|(?<!\d)(?P<cy>\d{4})年(?P<cm>\d{1,2})月(?P<cd>\d{1,2})[日号]"
    # 7月23日: a day without its year in Chinese (the year of as_of, like "July 23")
    r"|(?<![年\d])(?P<zm>\d{1,2})月(?P<zd>\d{1,2})[日号])"
)
_CLOCK = (
    r"(?:(?<![\d:.])(?P<hh>\d{1,2}):(?P<mi>\d{2})(?::(?P<ss>\d{2}))?(?!\d|:\d)"
    r"(?:\s*(?P<ap>[ap])\.?m\b\.?)?"
    r"|(?<![\d:.])(?P<h12>\d{1,2})\s*(?P<ap12>[ap])\.?m\b\.?|(?P<word>midnight|noon))"
)
_ZONE = (
    r"(?:\s*(?P<zone>(?-i:Z)\b|(?-i:UTC|GMT)(?:\s*[+-]\d{1,2}(?::?\d{2})?)?|[+-]\d{2}:?\d{2})"
    r"|\s+(?P<other>" + _OTHER_ZONES + r"\b|local(?: time)?\b|北京时间))?"
)
_AT_DAY = r"\b(?:on|as of|as at|at|by|until|during|for)\s+"
# "on 23 July 2026 at 10:03 UTC", "2026-07-23 at 10:03", "2026年7月23日 10:03"
_DAY_THEN_CLOCK = LazyPattern(
    r"(?:" + _AT_DAY + r")?" + _DAY_WITH_YEAR + r",?\s*(?:at\s+|@\s*)?" + _CLOCK + _ZONE,
    re.IGNORECASE,
)
# "10:03 UTC on 2026-07-23", "at midnight on July 24, 2026"
_CLOCK_THEN_DAY = LazyPattern(_CLOCK + _ZONE + r",?\s+(?:on\s+)?" + _DAY_WITH_YEAR, re.IGNORECASE)
# "between 10:00 and 10:30 on 2026-07-23", "on 2026-07-23 from 10:00 to 10:30 UTC": both ends
# of a period of clock times on one day (the day is written once, after or before them).
_CLOCK_PAIR = (
    r"(?P<a>"
    + _CLOCK.replace("?P<", "?P<a_")
    + _ZONE.replace("?P<", "?P<a_")
    + r")\s*(?:and|to|through|till|until|-|–)\s*(?P<b>"
    + _CLOCK.replace("?P<", "?P<b_")
    + _ZONE.replace("?P<", "?P<b_")
    + r")"
)
_CLOCK_RANGE_THEN_DAY = LazyPattern(
    r"\b(?:between|from)\s+" + _CLOCK_PAIR + r",?\s+(?:on\s+)?" + _DAY_WITH_YEAR, re.IGNORECASE
)
_DAY_THEN_CLOCK_RANGE = LazyPattern(
    _DAY_WITH_YEAR + r",?\s+(?:between|from)\s+" + _CLOCK_PAIR, re.IGNORECASE
)
# "on 2026-07-20", "as of July 20, 2026", 2026年7月20日: the day's 00:00 UTC. A day with no
# such word before it is placed only after a side word ("before 2026-07-24", _LEAD).
_DAY_ALONE = LazyPattern(
    r"(?:(?P<at_day>" + _AT_DAY + r"))?" + _DAY_WITH_YEAR + r"|(?<!\d)(?P<cy2>\d{4})年"
    r"(?P<cm2>\d{1,2})月(?P<cd2>\d{1,2})[日号]",
    re.IGNORECASE,
)
_PART = r"(?:early\s+|late\s+)?(?P<part>morning|afternoon|evening|night)"
# The words just before a written time that say which side of it the question asks about:
# "before 2026-07-24", "after ...", "since ...", "between A and B", "on the morning of ...".
_LEAD = LazyPattern(
    r"(?:\b(?:(?:right|just|shortly|immediately)\s+)?(?P<before>before|prior\s+to)"
    r"|\b(?P<after>after|following)|\b(?P<since>since|from)|\b(?P<between>between)"
    r"|\b(?P<to>and|to|through|till|until)"
    r"|\b(?:on|in|during|for)\s+the\s+" + _PART + r"\s+of"
    r"|\b(?P<name>the))\s+$",
    re.IGNORECASE,
)
# The side of a Chinese written time, said after it: 7月24日之前 ("before July 24"), 2026年7月23日
# 10:03以后 ("after ..."). The one-character 前 / 后 only where it ends the phrase (7月24日前谁负责,
# 7月24日后的, not 后端 "backend"). Before h39-walk-time, 7月24日之前 was the day's start, the
# wrong side of an ownership moved at that midnight.
_CHINESE_SIDE = LazyPattern(
    r"\s*(?:(?P<before>之前|以前|前(?=$|[谁的，,。？?！!\s]))"
    r"|(?P<after>之后|以后|后(?=$|[谁的，,。？?！!\s])))"
)
# "on 2026-07-23 in the morning": the part of the day, read with the day.
_PART_AFTER = LazyPattern(
    r",?\s+(?:(?:in|during)\s+the\s+" + _PART + r"\b|at\s+(?P<night>night)\b)", re.IGNORECASE
)
# A word of what a "when ..." phrase is about: not a verb that makes it a question ("when
# was it changed?", "when did it start?") nor a word that starts another clause.
_SUBJECT_WORD = (
    r"(?!(?:was|were|is|are|am|be|been|did|do|does|has|have|had|will|would|should|could|can|"
    r"may|might|must|and|or|but|who|whom|which|what|when|where|why|how|for|on|in|at|to|with|"
    r"from|by|of|then)\b)[\w.:-]+"
)
# A verb in the past that says something happened: "happened", "went down", "was raised".
_PAST_EVENT = (
    r"(?:happened|occurred|started|began|appeared|showed\s+up|hit|broke(?:\s+out)?|failed|"
    r"crashed|fired|went\s+(?:off|down|out|live)|came\s+(?:back|up|down)|kicked\s+in|spiked|"
    r"changed|finished|ended|stopped|recovered|moved|landed|"
    r"(?:was|were|got)\s+(?:first\s+)?[a-z]+(?:ed|en|wn|ne))\b"
)
# Time-like words it does not resolve, looked for in what the above left.
_UNRESOLVED_PATTERNS: tuple[LazyPattern, ...] = (
    # relative to an event that is not an anchor: "right after the ownership change"
    LazyPattern(
        r"\b(?:(?:right|just|shortly|immediately|soon|(?:an?|one|\d+|a few)\s+\w+)\s+)?"
        r"(?:after|before|since|prior to|following|until|till)\s+(?:the|this|that|its|their)\s+"
        r"(?:[\w.:-]+\s+)?(?:(?:ownership|owner|team|on-?call|config(?:uration)?|schema)\s+)?"
        r"(?:changes?|moves?|handovers?|hand-?offs?|transfers?|reorg(?:anization)?|releases?|"
        r"deploy(?:ment)?s?|rollouts?|rollbacks?|incidents?|outages?|migrations?|alerts?|pages?|"
        r"fix|mitigation|failover)\b",
        re.IGNORECASE,
    ),
    # a moment of an event that is not an anchor: "when the incident was declared", "when
    # the rollback was done", "at the end of the migration"
    LazyPattern(
        r"\b(?:when|once|as|while|before|after|since)\s+(?:(?:the|this|that|its|their)\s+"
        r"(?:[\w.:-]+\s+)?"
        r"(?:incidents?|outages?|rollbacks?|fix|mitigation|failover|migrations?|changes?|"
        r"handovers?|hand-?offs?|transfers?|releases?|deploy(?:ment)?s?|rollouts?|alerts?|"
        r"pages?|tickets?|sev\d?|publications?)|it"
        # a thing named by an id: "when RR-2026-07-23a was published"
        r"|(?:the\s+)?[a-z][\w.:-]*\d[\w.:-]*(?:\s+(?:rules?|rule\s+set|change|release))?)"
        r"\s+(?:was|were|got|had been|has been)\s+"
        r"[a-z]+(?:\s+(?:back|out|over|up|down))?\b|"
        r"\bat the (?:start|beginning|end|close) of the (?:[\w.:-]+\s+)?"
        r"(?:rollbacks?|fix|mitigation|failover|migrations?|changes?|handovers?|releases?|"
        r"deploy(?:ment)?s?|rollouts?)\b",
        re.IGNORECASE,
    ),
    # a day without its year (or with one where it is not read as a time): "on July 23"
    LazyPattern(
        r"(?:\b(?:on|at|by|until|since|before|after|from)\s+(?:the\s+)?)?(?:"
        + _WEEKDAY
        + r",?\s+)?(?:(?<![\d:])\d{1,2}"
        + _ORDINAL
        + r"\s+(?:of\s+)?"
        + _MONTH
        + r"|"
        + _MONTH
        + r"\s+\d{1,2}"
        + _ORDINAL
        + r"\b)(?:,?\s+\d{4}\b)?",
        re.IGNORECASE,
    ),
    # a month: "in July", "since March 2026"
    LazyPattern(
        r"\b(?:in|during|since|until|by|early|late|mid-?)\s+(?:(?-i:May)|"
        + "|".join(name for name in _MONTHS if name != "may")
        + r")\b(?:\s+\d{4}\b)?",
        re.IGNORECASE,
    ),
    # 07/23/2026 or 23/07/2026: which is the month is not written
    LazyPattern(r"(?<![\w/.:-])\d{1,4}/\d{1,2}/\d{1,4}(?![\w/])"),
    # 24.07.2026: a day written with dots (before h39-walk-time, dropped without a word: the
    # answer was at as_of, `complete`); a release named 2026.07.23.1 or a version 1.2.10 is not
    LazyPattern(r"(?<![\w.:-])\d{1,2}\.\d{1,2}\.\d{4}(?!\w|\.\d)"),
    # a clock time used as a time: "at 10:03", "10:03 UTC", "10pm"; "the 10:02 release" names
    # a release and is left alone
    LazyPattern(
        r"(?:\b(?:at|around|about|approximately|by|before|after|since|until|till|from|near|"
        r"between)\s+"
        r"(?:~\s*)?)"
        + _CLOCK
        + _ZONE
        + r"|"
        + _CLOCK.replace("?P<", "?P<z")
        + r"(?:\s*(?:(?-i:Z)\b|(?-i:UTC|GMT)(?:\s*[+-]\d{1,2}(?::?\d{2})?)?|[+-]\d{2}:?\d{2})"
        r"|\s+(?:" + _OTHER_ZONES + r"\b|local time\b))"
        r"|(?<![\d:.])\d{1,2}(?::\d{2})?\s*[ap]\.?m\b\.?",
        re.IGNORECASE,
    ),
    _RELATIVE_WORDS,
    # the moment of something that is not an anchor, in the user's words: "when the cache
    # failed", "when the first timeout happened", "at the time of the migration", "at the
    # first timeout" (before, dropped without a word: the answer was at as_of, `complete`)
    LazyPattern(
        r"\b(?:when|once|as soon as|the moment)\s+(?:" + _SUBJECT_WORD + r"\s+){1,4}?"
        r"(?:first\s+)?" + _PAST_EVENT + r"|"
        r"\bat the (?:time|start|beginning|onset) of\s+(?:"
        + _SUBJECT_WORD
        + r"\s+){0,3}"
        + _SUBJECT_WORD
        + r"|\bat the (?:very\s+)?first\s+(?:"
        + _SUBJECT_WORD
        + r"\s+){0,2}"
        + _SUBJECT_WORD,
        re.IGNORECASE,
    ),
    # a part of a day without its day: "in the morning", "at night"
    LazyPattern(
        r"\b(?:(?:in|during|on|for)\s+the\s+(?:early\s+|late\s+)?"
        r"(?:morning|afternoon|evening|night)|at\s+night|overnight)\b",
        re.IGNORECASE,
    ),
    # a part of a day named by what happened on it, or "that day" / "that night": "the night
    # of the incident", "the morning of the release" (before h39-walk-time, dropped without a
    # word: the answer was at as_of, `complete`)
    LazyPattern(
        r"\b(?:on\s+)?(?:the|that)\s+(?:early\s+|late\s+)?(?:morning|afternoon|evening|night)"
        r"\s+of\s+(?:the|that|this|its)\s+[\w.:-]+(?:\s+(?:incident|outage|release|deploy"
        r"(?:ment)?|rollout|alert|change))?"
        r"|\b(?:on\s+)?that\s+(?:very\s+)?(?:day|night|morning|afternoon|evening)\b",
        re.IGNORECASE,
    ),
    # any date left: "Who owned it 2026-07-23?" ("the 2026-07-23 incident" names one)
    LazyPattern(r"(?<![\w:.@/-])(?<!\bthe )\d{4}-\d{2}-\d{2}(?![\w:-])", re.IGNORECASE),
    LazyPattern(
        r"(?<![年\d])\d{1,2}月\d{1,2}[日号]|(?:凌晨|上午|中午|下午|晚上)?\d{1,2}[点點时](?:\d{1,2}分?|半)?|"
        r"(?:发布|上线|部署|变更|交接|事发|故障|事故|告警)(?:之前|之后|以前|以后|前|后)"
    ),
)


class NamedTime(BaseModel):
    """An explicit time written in the question, as resolved, and the words that name it."""

    at: datetime
    words: str
    # How it was read when the text did not say it all (None: exactly as written).
    reading: str | None = None
    # Which end of a period it is ("between A and B", "from A to B"), None for a lone time.
    period_end: Literal["start", "end"] | None = None
    # The word just before it, lower-case ("since", "after", "before", "until", "on"), None
    # when none: a change question reads a lone time as a period by it
    # (change_period.written_change_period).
    lead: str | None = None


def _zone_offset(zone: str) -> timedelta | None:
    """`Z`, `UTC`, `GMT`, `+02:00`, `UTC+2` as an offset; None if out of range."""
    text = zone.strip().upper().removeprefix("UTC").removeprefix("GMT").strip()
    if text in ("", "Z"):
        return timedelta(0)
    found = re.fullmatch(r"([+-])(\d{1,2}):?(\d{2})?", text)
    if not found:
        return None
    hours, minutes = int(found.group(2)), int(found.group(3) or 0)
    if hours > 14 or minutes > 59:
        return None
    sign = -1 if found.group(1) == "-" else 1
    return sign * timedelta(hours=hours, minutes=minutes)


def _day_of(m: re.Match[str], year: int | None = None) -> tuple[int, int, int] | None:
    """(year, month, day) of a `_DAY_WITH_YEAR` match; a day written without its year
    ("July 24") takes `year` (None: not placed)."""
    groups = m.groupdict()
    for y, mo, d in (
        ("iy", "im", "id"),
        ("dy", "dm", "dd"),
        ("my", "mm", "md"),
        ("cy", "cm", "cd"),
        ("", "zm", "zd"),
    ):
        if groups.get(d):
            month = groups[mo]
            number = (
                int(month) if month.isdigit() else _MONTH_NUMBER.get(month.lower().rstrip("."), 0)
            )
            if y and groups.get(y):
                return int(groups[y]), number, int(groups[d])
            return None if year is None else (year, number, int(groups[d]))
    if groups.get("cy2"):
        return int(groups["cy2"]), int(groups["cm2"]), int(groups["cd2"])
    return None


def _clock_of(m: re.Match[str], prefix: str = "") -> tuple[int, int, int] | None:
    """(hour, minute, second) of a `_CLOCK` match (its groups named with `prefix`), 12-hour
    times converted; None if invalid."""
    groups = {k.removeprefix(prefix): v for k, v in m.groupdict().items() if k.startswith(prefix)}
    if groups.get("word"):
        return (0, 0, 0) if groups["word"].lower() == "midnight" else (12, 0, 0)
    hour_text = groups.get("hh") or groups.get("h12")
    if hour_text is None:
        return None
    hour, minute, second = int(hour_text), int(groups.get("mi") or 0), int(groups.get("ss") or 0)
    half = (groups.get("ap") or groups.get("ap12") or "").lower()
    if half:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half == "p" else 0)
    if hour > 23 or minute > 59 or second > 59:
        return None
    return hour, minute, second


def _instant(
    day: tuple[int, int, int] | None,
    clock: tuple[int, int, int] | None,
    zone: str | None,
) -> datetime | None:
    """The UTC instant of a day, a clock time and a zone (UTC when None); None if invalid."""
    if day is None:
        return None
    offset = timedelta(0) if zone is None else _zone_offset(zone)
    if offset is None:
        return None
    try:
        local = datetime(*day, *(clock or (0, 0, 0)), tzinfo=UTC)
    except ValueError:
        return None
    return shift(local, -offset)


def _parse_explicit(date: str, time_text: str | None, zone: str | None) -> datetime | None:
    text = date + ("T" + time_text if time_text else "T00:00:00")
    if zone:
        text += "+00:00" if zone == "Z" else zone
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


class ResponseMetric(StrEnum):
    """A postmortem's response time asked about: each the difference between two recorded
    instants (claims.timeline.response_metric_claims says which two)."""

    DETECT = "detect"  # first error -> first alert firing on a service the incident affected
    DECLARE = "declare"  # first error -> the incident's first record (when it was declared)
    ACKNOWLEDGE = "acknowledge"  # no acknowledgement record exists in the KG: a gap
    RESOLVE = "resolve"  # first error -> the incident's recorded resolution


# "How long did it take to detect the incident?", "how long until the alert fired?", "time to
# resolve", "MTTR": a response time, measured between two records' instants; its words name
# the ends of a span, not an instant the answer is held at (blanked before the time words are
# read: "until the alert fired" is no "before the alert" state).
_HOW_LONG_TO = (
    r"\bhow\s+(?:long|quickly|fast|soon)\b[^?.]{0,50}?\b(?:to|until|till|before)\s+"
    r"(?:(?:we|they|it|someone|anyone|on-?call|the\s+[\w-]+)\s+)?(?:(?:was|were|got|had|have|be)\s+)?"
)
_HOW_QUICKLY_WAS = (
    r"\bhow\s+(?:long|quickly|fast|soon)\s+(?:did|was|were|had|has)\s+(?:we|they|it|on-?call|"
    r"(?:the|this|that)\s+[\w-]+)\s+(?:(?:be|been|get|got)\s+)?"
)
_METRIC_WORDS: tuple[tuple[ResponseMetric, LazyPattern], ...] = (
    (
        ResponseMetric.DETECT,
        LazyPattern(
            r"\b(?:mean\s+)?time[\s-]+to[\s-]+(?:detect(?:ion)?|notice|alert)\b|\bMTTD\b|\bTTD\b|"
            r"\bdetection\s+(?:time|delay|latency|lag)\b|"
            + _HOW_LONG_TO
            + r"(?:detect(?:ed|ion)?|notic(?:e|ed)|catch|caught|spot(?:ted)?|alerted)\b|"
            + _HOW_QUICKLY_WAS
            + r"(?:detect(?:ed)?|notic(?:e|ed)|catch|caught|spot(?:ted)?|alerted)\b|"
            # "how long until the alert fired?", "how long before PaymentApiHighErrorRate
            # alert went off", "how long after the first error did the alert fire?"
            r"\bhow\s+(?:long|quickly|fast|soon)\b[^?.]{0,50}?\b(?:until|till|before|for)\s+"
            r"(?:the\s+|an?\s+|any\s+|our\s+)?(?:first\s+)?(?:[\w.:-]+\s+)?(?:alert|page)s?\s+"
            r"(?:to\s+)?(?:fired?|went\s+off|go\s+off|triggered|trigger|paged|page)\b|"
            r"\bhow\s+(?:long|many\s+(?:seconds|minutes))\s+after\s+the\s+(?:first\s+)?errors?\b"
            r"[^?.]{0,40}?\b(?:alert|page)s?\s+(?:fire|fired|go\s+off|went\s+off|trigger(?:ed)?)\b|"
            r"多久(?:才)?(?:被)?(?:发现|检测到|告警)|发现用了多久|检测时间",
            re.IGNORECASE,
        ),
    ),
    (
        ResponseMetric.DECLARE,
        LazyPattern(
            r"\b(?:mean\s+)?time[\s-]+to[\s-]+declar(?:e|ation)\b|\bdeclaration\s+time\b|"
            + _HOW_LONG_TO
            + r"declar\w*\b|"
            + _HOW_QUICKLY_WAS
            + r"declar\w*\b|"
            # "when was the incident declared?", "when did we declare the incident?"
            r"\b(?:when|what\s+time)\s+(?:was|were)\s+(?:(?:the|this|that|our)\s+)?"
            r"(?:[\w.:-]+\s+)?(?:incident|outage|it)\s+(?:first\s+|officially\s+)?declared\b|"
            r"\b(?:when|what\s+time)\s+did\s+(?:we|they|on-?call|someone|anyone)\s+"
            r"(?:first\s+|officially\s+)?declare\b|"
            r"什么时候宣布|何时宣布|多久(?:才)?(?:被)?宣布",
            re.IGNORECASE,
        ),
    ),
    (
        ResponseMetric.ACKNOWLEDGE,
        LazyPattern(
            r"\b(?:mean\s+)?time[\s-]+to[\s-]+(?:acknowledge?(?:ment)?|ack)\b|\bMTTA\b|\bTTA\b|"
            + _HOW_LONG_TO
            + r"(?:acknowledg\w*|ack(?:ed)?)\b|"
            + _HOW_QUICKLY_WAS
            + r"(?:acknowledg\w*|ack(?:ed)?)\b|多久(?:才)?(?:被)?(?:确认|响应)",
            re.IGNORECASE,
        ),
    ),
    (
        ResponseMetric.RESOLVE,
        LazyPattern(
            r"\b(?:mean\s+)?time[\s-]+to[\s-]+(?:resol(?:ve|ution)|recover(?:y)?|restor(?:e|ation)|"
            r"fix|repair)\b|\bMTTR\b|\bTTR\b|\bresolution\s+time\b|"
            + _HOW_LONG_TO
            + r"(?:resolv\w*|recover\w*|fix(?:ed)?|restor\w*|repair\w*)\b|"
            + _HOW_QUICKLY_WAS
            + r"(?:resolv\w*|recover\w*|fix(?:ed)?|restor\w*|repair\w*)\b|"
            r"多久(?:才)?(?:被)?(?:解决|恢复|修复)|(?:解决|恢复|修复)用了多久",
            re.IGNORECASE,
        ),
    ),
)


def response_metrics(question: str) -> list[ResponseMetric]:
    """The response times the question asks for ("how long did it take to detect the
    incident?": detect; "TTD and TTR": both), in the order of `ResponseMetric`."""
    return [metric for metric, pattern in _METRIC_WORDS if pattern.search(question)]


def without_metric_words(question: str) -> str:
    """`question` with the words asking a response time blanked (positions kept): they name
    the ends of a span ("until the alert fired"), not an instant the answer holds at."""
    for _, pattern in _METRIC_WORDS:
        for found in list(pattern.finditer(question)):
            question = _blank(question, found.start(), found.end())
    return question


def _blank(text: str, start: int, end: int) -> str:
    """`text` with [start, end) replaced by spaces (positions kept for later patterns)."""
    return text[:start] + " " * (end - start) + text[end:]


# Zero values that payloads write for "no time": Go's zero time (Alertmanager's `endsAt` of a
# firing alert) and the Unix epoch. A pasted notification's are not times asked about.
_PLACEHOLDER_TIMES = frozenset({datetime(1, 1, 1, tzinfo=UTC), datetime(1970, 1, 1, tzinfo=UTC)})
NO_ZONE_READING = "no zone given: read as UTC"
DAY_READING = "a day: its start, 00:00 UTC"


class _Written(NamedTuple):
    """A time as written in the question, before the words around it are read."""

    start: int
    end: int
    words: str
    at: datetime | None  # None: it looks like a time but is not a valid one
    reading: str | None
    day: bool  # a day alone (no clock time)
    at_day: str  # "on", "until", ... when the match starts with one ("" if not)
    no_time: bool = False  # a zero value a payload writes for "no time": blanked, not a time
    year_note: str | None = None  # the day had no year: whose year it took
    day_span: tuple[int, int] | None = None  # a day written once for two clock times
    zone_not_read: str | None = None  # a zone written that is not converted ("CEST")


def _clock_range(m: re.Match[str], year: int | None) -> list[_Written]:
    """The two ends of "between 10:00 and 10:30 on <day>" as written times: each a clock
    time on that day (a zone written once applies to both)."""
    day = _day_of(m, year)
    zone_b = m.group("b_zone")
    other = m.group("a_other") or m.group("b_other")
    out: list[_Written] = []
    for end, zone in (("a", m.group("a_zone") or zone_b), ("b", zone_b)):
        clock = _clock_of(m, end + "_")
        at = None if other or clock is None else _instant(day, clock, zone)
        words = m.group(end).strip()
        out.append(
            _Written(
                m.start(end),
                m.start(end) + len(words),
                words,
                at,
                None if zone else NO_ZONE_READING,
                False,
                "",
                year_note=_year_note(m, year),
                day_span=(m.start(), m.end()),
                zone_not_read=other,
            )
        )
    return out


def _year_note(m: re.Match[str], year: int | None) -> str | None:
    """That the year was taken from as_of, when the day was written without one ("July
    24")."""
    groups = m.groupdict()
    no_year = (
        (groups.get("dd") and not groups.get("dy"))
        or (groups.get("md") and not groups.get("my"))
        or groups.get("zd")
    )
    return f"no year given: the year of as_of, {year}" if no_year and year is not None else None


def _written_times(question: str, year: int | None = None) -> list[_Written]:
    """Every date and date-time written in the question, in order (each span once).

    A day written without its year takes `year` (the year of as_of), said in its reading;
    without `year` it is not placed."""
    found: list[_Written] = []
    text = question
    for m in list(_DATETIME.finditer(text)):
        zone, other = m.group("zone") or m.group("spaced"), m.group("other")
        parsed = _parse_explicit(m.group("date"), m.group("clock"), None)
        offset = _zone_offset(zone) if zone else timedelta(0)
        parsed = None if parsed is None or offset is None or other else shift(parsed, -offset)
        text = _blank(text, m.start(), m.end())
        # a pasted alert's "endsAt" of a firing alert is no time at all
        no_time = parsed in _PLACEHOLDER_TIMES
        reading = None if zone or other else NO_ZONE_READING
        found.append(
            _Written(
                m.start(), m.end(), m.group(0), parsed, reading, False, "", no_time,
                zone_not_read=other,
            )
        )  # fmt: skip
    for pattern in (_CLOCK_RANGE_THEN_DAY, _DAY_THEN_CLOCK_RANGE):
        for m in list(pattern.finditer(text)):
            found.extend(_clock_range(m, year))
            text = _blank(text, m.start(), m.end())
    for pattern in (_DAY_THEN_CLOCK, _CLOCK_THEN_DAY):
        for m in list(pattern.finditer(text)):
            zone, other, clock = m.group("zone"), m.group("other"), _clock_of(m)
            at = None if other or clock is None else _instant(_day_of(m, year), clock, zone)
            reading = None if zone else NO_ZONE_READING
            words = m.group(0).strip()
            note = _year_note(m, year)
            found.append(
                _Written(
                    m.start(), m.start() + len(words), words, at, reading, False, "", False, note,
                    zone_not_read=other,
                )
            )  # fmt: skip
            text = _blank(text, m.start(), m.end())
    for m in list(_DAY_ALONE.finditer(text)):
        # A Chinese day is a time without "on" before it (2026年7月23日, 7月23日). Its year
        # form matches `_DAY_WITH_YEAR`'s own `cy` first (`cy2` only when nothing precedes
        # it): before h39-walk-time, only `cy2` was looked at, so "2026年7月23日谁负责
        # payment-api？" was a bare date, dropped without a word, and the answer was at now.
        chinese = m.group("cy") or m.group("cy2") or m.group("zd")
        at_day = m.group("at_day") or ("年" if chinese else "")
        words = m.group(0).strip()
        at = _instant(_day_of(m, year), None, None)
        note = _year_note(m, year)
        found.append(
            _Written(
                m.start(), m.start() + len(words), words, at, DAY_READING, True, at_day, False, note
            )
        )
        text = _blank(text, m.start(), m.end())
    return sorted(found)


# "between A and B", "from A to B": the words between the two ends.
_RANGE_GAP = LazyPattern(r"\s*(?:and|to|through|till|until|-|–)\s*", re.IGNORECASE)


def _named_times(
    question: str,
    year: int | None = None,
    not_applied: dict[str, str] | None = None,
    zones: dict[str, str] | None = None,
) -> tuple[list[NamedTime], list[tuple[int, str]], str]:
    """Explicit times of the question, words that look like one but are not resolved (with
    their position), and the question with the resolved ones blanked out.

    The word before a time says which side of it is asked about: "before 2026-07-24" is 1 s
    before its start, "after 2026-07-23" the day's end, "between A and B" both ends (a day
    at the end of a period: its last second). A day with none of these words, nor "on", "at",
    "by", "until", "during", "for" before it, is not placed here ("the 2026-07-23 incident"
    names an incident; a bare date is listed as not resolved by `_unresolved_words`).
    An amount before the side ("two days before 2026-11-11") moves the time by it; one it
    cannot apply ("a few days before ...") is not resolved, and why goes to `not_applied`;
    a time in a zone it does not convert ("01:00 CEST") is not resolved, its zone in `zones`.
    """
    named: list[NamedTime] = []
    unresolved: list[tuple[int, str]] = []
    text = question
    range_end: int | None = None  # where an open "between/from <time>" ended
    for w in _written_times(question, year):
        if w.no_time:
            text = _blank(text, w.start, w.end)
            continue
        date_start = w.start + len(w.at_day) if w.at_day != "年" else w.start
        window_start = max(0, w.start - 40)
        lead = _LEAD.search(question[window_start : w.start])
        side = {k: v for k, v in (lead.groupdict() if lead else {}).items() if v}
        closes = range_end is not None and bool(
            _RANGE_GAP.fullmatch(question[range_end:date_start])
        )
        range_end = None
        if "name" in side and w.day:
            continue  # "the 2026-07-23 incident": a name, not a time
        lead_word = (
            " ".join((lead.group(0) if lead is not None else w.at_day).lower().split())
            if w.at_day != "年"
            else ""
        )
        if not closes:
            side.pop("to", None)  # "A and B" is no period without "between" or "from"
        start, end = w.start, w.end
        chinese_side = (
            _CHINESE_SIDE.match(question, end)
            if not side and re.search(r"[日号]", w.words) is not None
            else None
        )
        if chinese_side is not None:
            side = {k: v for k, v in chinese_side.groupdict().items() if v}
            end = chinese_side.end()
        if lead is not None and side and "name" not in side:
            start = window_start + lead.start()
        if w.day and not w.at_day and start == w.start and not closes:
            continue  # a bare date: left for the catch-all of `_unresolved_words`
        part = side.get("part")
        after_part = _PART_AFTER.match(question, end) if w.day else None
        if after_part is not None:
            part, end = after_part.group("part") or "night", after_part.end()
        amount: tuple[timedelta | None, str | None] = (None, None)
        sided = {"before", "after"} & set(side) and not closes
        reach = max(0, start - 60)
        while reach > 0 and not question[reach - 1].isspace():
            reach -= 1  # a whole word: never the tail of a long number ("999...9s before")
        found = _OFFSET_BEFORE.search(question, reach, start) if sided else None
        if found is not None:
            amount, start = _amount(found), found.start()
        words = question[start:end].strip()
        text = _blank(text, start, end)
        if amount[1] is not None and not_applied is not None:
            not_applied[words] = amount[1]
        if w.at is None or amount[1] is not None:
            unresolved.append((start, words))
            if w.zone_not_read and zones is not None:
                zones[words] = w.zone_not_read
            continue
        at, reading = w.at, w.reading
        if amount[0] is not None:
            # "two days before 2026-11-11": that far from the time (a day's start), either side.
            way = "before" if "before" in side else "after"
            at = shift(w.at, -amount[0] if way == "before" else amount[0])
            reading = f"{amount_text(amount[0])} {way} {iso_utc(w.at)}" + (
                ", the start of that day" if w.day else ""
            )
            if w.reading == NO_ZONE_READING:
                reading += f"; {NO_ZONE_READING}"
        elif closes:
            # Both ends of "between A and B": A is the one named just before.
            named[-1] = named[-1].model_copy(update={"period_end": "start"})
            if w.day:
                # The end of a period of days is its last day's last second.
                at = shift(w.at, timedelta(days=1) - BEFORE_EVENT)
                reading = "the end of the period: that day's last second, 23:59:59 UTC"
        elif "before" in side:
            at = shift(w.at, -BEFORE_EVENT)
            reading = f"1 s before {iso_utc(w.at)}" + (", the start of that day" if w.day else "")
            if w.reading == NO_ZONE_READING:
                reading += f"; {NO_ZONE_READING}"
        elif "after" in side and w.day:
            # After a day is after all of it: its end.
            at = shift(w.at, timedelta(days=1))
            reading = "after a day: its end, 00:00 UTC of the next day"
        if not closes and ("between" in side or side.get("since", "").lower() == "from"):
            range_end = w.end
            if reading == DAY_READING:
                reading = "the start of the period: that day's start, 00:00 UTC"
        if part:
            # A part of a day has no clock time of its own here (no time zone says when it is).
            reading = (
                f"the {part} of a day: the day's start, 00:00 UTC; the {part} itself is not placed"
                if reading == DAY_READING
                else f"{reading}; the {part} is not placed"
            )
        if w.day_span is not None:
            text = _blank(text, w.day_span[0], w.day_span[1])  # the day both ends are on
        if w.year_note:
            reading = f"{reading}; {w.year_note}" if reading else w.year_note
        named.append(
            NamedTime(
                at=at,
                words=words,
                reading=reading,
                period_end="end" if closes else None,
                lead=lead_word or None,
            )
        )
    return named, unresolved, text


def _unresolved_words(text: str) -> list[tuple[int, str]]:
    """Time-like words left in `text` (resolved ones blanked), with their positions."""
    found: list[tuple[int, str]] = []
    for pattern in _UNRESOLVED_PATTERNS:
        for m in list(pattern.finditer(text)):
            if m.group(0).strip():
                found.append((m.start(), m.group(0).strip()))
                text = _blank(text, m.start(), m.end())
    return found


class RelativeTime(BaseModel):
    """A relative time word of the question as read against `as_of` (UTC): a period
    (`start` to `end`, as if its dates had been written) or an instant (`start` == `end`)."""

    words: str
    kind: Literal["day", "week", "month", "period", "instant"]
    start: datetime
    end: datetime
    # How it was read: "2026-07-23 (UTC), the day before as_of's day".
    reading: str

    def note(self, as_of: datetime) -> str:
        """The Time line: how the words were read, against which as_of."""
        if self.kind == "instant":
            amount = self.reading.removeprefix("as_of minus ")
            how = (
                f"as_of {iso_utc(as_of)} minus {amount}"
                if amount != self.reading
                else f"{self.reading}, against as_of {iso_utc(as_of)}"
            )
            return f"{self.words!r} read as {iso_utc(self.start)}, {how}; the KG's times are UTC"
        return (
            f"{self.words!r} read as {self.reading}: {iso_utc(self.start)} to "
            f"{iso_utc(self.end)}, against as_of {iso_utc(as_of)}; the KG's times are UTC"
        )


class TimeReferences(BaseModel):
    """What a question's time words refer to (before anything is retrieved)."""

    event: AnchorEvent | None = None
    # The words that made it event-anchored (for the claim's "why").
    event_words: str | None = None
    # "before/after the release": which side of the event (None: the event itself).
    side: EventSide | None = None
    # "two days before the alert": how far from the event, on its side (None: 1 s before it,
    # or the event itself after it).
    offset: timedelta | None = None
    # Error codes the question names (the anchor is their first error).
    codes: list[str] = Field(default_factory=list)
    now: bool = False
    # The explicit times, sorted; `named` says which words named each and how it was read.
    explicit: list[datetime] = Field(default_factory=list)
    named: list[NamedTime] = Field(default_factory=list)
    # Time words it does not resolve ("yesterday", "at 10:03", "July 23"), as written.
    unresolved: list[str] = Field(default_factory=list)
    # Of those, the ones read but not applied, and why ("a few hours before the alert": no
    # exact amount); the others are words it does not read as a time.
    not_applied: dict[str, str] = Field(default_factory=dict)
    # Of those, the periods set aside for the one the answer reads ("in the last hour and
    # since March"), each with the words of the one read.
    other_periods: dict[str, str] = Field(default_factory=dict)
    # Of those, the times in a zone it does not convert ("2026-07-24 01:00 CEST"), each with
    # the zone as written: never read as UTC.
    zones_not_read: dict[str, str] = Field(default_factory=dict)
    # The relative words read against as_of ("yesterday", "2 hours ago"), as read.
    relative: list[RelativeTime] = Field(default_factory=list)

    @property
    def anchored(self) -> bool:
        """Whether the question asks about some time other than `as_of`."""
        return self.event is not None or bool(self.explicit)

    @property
    def period(self) -> tuple[NamedTime, NamedTime] | None:
        """The two ends of the period the question names ("between A and B"), or None."""
        starts = [n for n in self.named if n.period_end == "start"]
        ends = [n for n in self.named if n.period_end == "end"]
        if not starts or not ends:
            return None
        return starts[0], ends[0]

    def after(self, as_of: datetime) -> list[str]:
        """The words of the explicit times after `as_of` (not used: not yet happened)."""
        return list(dict.fromkeys(n.words for n in self.named if n.at > as_of))


# A whole month asked about ("in July 2026", "during March", "since March"): not followed by
# a day ("in July 23" is a day, read elsewhere). "May" only capitalised, as in `_MONTH`.
_MONTH_PERIOD = LazyPattern(
    r"\b(?P<side>in|during|throughout|since)\s+(?P<month>"
    + "|".join(n if n != "may" else "(?-i:May)" for n in sorted(_MONTHS, key=len, reverse=True))
    + r")\b(?:\s+(?P<year>\d{4})\b)?(?!\s*\d)",
    re.IGNORECASE,
)


def _month_period(m: re.Match[str], as_of: datetime) -> list[NamedTime]:
    """The two ends of a month asked about: "in July 2026" its first instant to the next
    month's; "since March" that month's first instant to as_of. A month without its year is
    the latest one begun by as_of, and the reading says so."""
    month = _MONTHS[m.group("month").lower()]
    words = m.group(0).strip()
    if m.group("year"):
        year, how = int(m.group("year")), ""
    else:
        year = as_of.year if month <= as_of.month else as_of.year - 1
        how = f", no year written: the latest {m.group('month').title()} begun by as_of"
    start = datetime(year, month, 1, tzinfo=UTC)
    if m.group("side").lower() == "since":
        end, end_reading = as_of, "the end of the period: as_of"
    else:
        end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC) - timedelta(seconds=1)
        end_reading = f"the month's last second{how}, UTC"
    return [
        NamedTime(
            at=start,
            words=words,
            reading=f"the month's first instant{how}, UTC",
            period_end="start",
        ),
        NamedTime(at=end, words=words, reading=end_reading, period_end="end"),
    ]


# Relative words read against as_of, in UTC (the KG's times are UTC): a day ("yesterday",
# "on Monday", 昨天), a calendar week or month ("last week", "this month", 上周), and an
# instant ("2 hours ago", "5h ago", 2小时前); a night, a morning, a weekend in UTC. What is
# vague ("the other day", "tonight", "a few hours ago") is left to `_RELATIVE_WORDS`:
# listed as not resolved, and the answer says it is at as_of.
_DAY_PART_AFTER = r"(?!\s+(?:morning|afternoon|evening|night)\b)"
_RELATIVE_PERIOD = LazyPattern(
    r"(?P<since>\bsince\s+)?(?:\b(?:on|during|for|in|from|over)\s+)?(?:"
    r"\b(?P<dby>(?:the\s+)?day\s+before\s+yesterday)\b|"
    r"\b(?P<yesterday>yesterday)\b" + _DAY_PART_AFTER + r"|"
    r"\b(?P<today>(?:earlier\s+)?today|so\s+far\s+today)\b|"
    r"\b(?P<night>last\s+night|overnight)\b|"
    r"\b(?P<morning>this\s+morning)\b|"
    r"\b(?P<weekend>last\s+weekend)\b|"
    r"\b(?P<this>this)\s+(?P<this_unit>week|month)\b|"
    r"\b(?P<last>last)\s+(?P<last_unit>week|month)\b|"
    r"(?:\b(?P<day_word>last|this\s+past)\s+)?\b(?P<weekday>" + _WEEKDAY + r")\b"
    r"(?!\s*,?\s*(?:\d|" + _MONTH + r"))" + _DAY_PART_AFTER + r"|"
    r"(?P<zh>前天|昨天|今天|上周|上个?星期|上个月|本周|这周|这个?星期|本月|这个月)"
    r"(?!早上|上午|中午|下午|晚上|夜里|凌晨))",
    re.IGNORECASE,
)
# The words that make a weekday a day asked about: "on Monday", "last Monday", "since
# Monday" (a bare "Monday" is listed as not resolved, as before).
_WEEKDAY_LEAD = LazyPattern(r"(?:since|on|during|for|from|over|last|this\s+past)\s", re.IGNORECASE)
_AGO = LazyPattern(
    r"(?:\b(?P<qty>\d+(?:\.\d+)?|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
    r"twelve|fifteen|twenty|thirty|forty-five|forty|fifty|sixty|ninety|half\s+an?)\s*"
    r"(?P<unit>seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|(?<=\d)(?:s|m|h|d))"
    r"\s+ago\b)|"
    r"(?P<zqty>\d+|半)\s*(?P<zunit>秒|分钟|个?小时|天|周)前",
    re.IGNORECASE,
)
_ZH_UNITS = {
    "秒": "sec",
    "分钟": "min",
    "小时": "hour",
    "个小时": "hour",
    "天": "day",
    "周": "week",
}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ZH_PERIOD = {
    "前天": "dby", "昨天": "yesterday", "今天": "today", "上周": "last week",
    "上星期": "last week", "上个星期": "last week", "上个月": "last month", "本周": "this week",
    "这周": "this week", "这星期": "this week", "这个星期": "this week", "本月": "this month",
    "这个月": "this month",
}  # fmt: skip


# "Last night", "overnight": 18:00 the day before as_of's to 06:00 on it, UTC (the zone
# every relative word is read in); "this morning" is 06:00 to 12:00 on as_of's day.
NIGHT_HOURS = (18, 6)


def _day_bounds(day: datetime) -> tuple[datetime, datetime]:
    return day, day + timedelta(days=1) - BEFORE_EVENT


def _relative_period(m: re.Match[str], as_of: datetime) -> RelativeTime:
    """The period a `_RELATIVE_PERIOD` match names, against as_of's UTC day."""
    words = m.group(0).strip()
    midnight = as_of.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    date = midnight.date().isoformat()
    which = m.group("zh") and _ZH_PERIOD[m.group("zh")]
    if m.group("dby") or which == "dby":
        start, end = _day_bounds(midnight - timedelta(days=2))
        kind, reading = "day", f"{start.date().isoformat()} (UTC), two days before as_of's day"
    elif m.group("yesterday") or which == "yesterday":
        start, end = _day_bounds(midnight - timedelta(days=1))
        kind, reading = "day", f"{start.date().isoformat()} (UTC), the day before as_of's day"
    elif m.group("today") or which == "today":
        start, end = midnight, as_of
        kind, reading = "day", f"{date} (UTC) up to as_of, as_of's day"
    elif m.group("night"):
        # The tool's one zone is UTC: a night is 18:00 to 06:00 UTC, said so in its reading.
        start = midnight - timedelta(hours=24 - NIGHT_HOURS[0])
        end = midnight + timedelta(hours=NIGHT_HOURS[1]) - BEFORE_EVENT
        kind, reading = (
            "period",
            (
                f"the night before as_of's day (a night is read as {NIGHT_HOURS[0]:02d}:00 to "
                f"{NIGHT_HOURS[1]:02d}:00 UTC)"
            ),
        )
    elif m.group("morning"):
        start = midnight + timedelta(hours=NIGHT_HOURS[1])
        end = midnight + timedelta(hours=12) - BEFORE_EVENT
        kind, reading = (
            "period",
            (f"as_of's morning (a morning is read as {NIGHT_HOURS[1]:02d}:00 to 12:00 UTC)"),
        )
    elif m.group("weekend"):
        monday = midnight - timedelta(days=midnight.weekday())
        start, end = monday - timedelta(days=2), monday - BEFORE_EVENT
        kind, reading = "period", "the weekend before as_of's ISO week, Saturday and Sunday (UTC)"
    elif m.group("weekday"):
        wanted = _WEEKDAYS.index(m.group("weekday").lower())
        back = (midnight.weekday() - wanted - 1) % 7 + 1
        start, end = _day_bounds(midnight - timedelta(days=back))
        name = m.group("weekday").title()
        same = f" (as_of's day is itself a {name}: the one a week before)" if back == 7 else ""
        kind = "day"
        reading = f"{start.date().isoformat()} (UTC), the last {name} before as_of's day{same}"
    else:
        unit = m.group("this_unit") or m.group("last_unit") or (which or "").split()[-1]
        last = bool(m.group("last")) or (which or "").startswith("last")
        if unit.lower() == "week":
            monday = midnight - timedelta(days=midnight.weekday())
            kind = "week"
            if last:
                start, end = monday - timedelta(days=7), monday - BEFORE_EVENT
                reading = (
                    f"the ISO week before as_of's, Monday {start.date().isoformat()} to "
                    f"Sunday {end.date().isoformat()} (UTC)"
                )
            else:
                start, end = monday, as_of
                reading = (
                    f"as_of's ISO week, from Monday {monday.date().isoformat()} (UTC) to as_of"
                )
        else:
            first = midnight.replace(day=1)
            kind = "month"
            if last:
                start, end = (first - timedelta(days=1)).replace(day=1), first - BEFORE_EVENT
                reading = f"{start.strftime('%B %Y')} (UTC), the month before as_of's"
            else:
                start, end = first, as_of
                reading = f"{first.strftime('%B %Y')} (UTC) up to as_of, as_of's month"
    if m.group("since"):
        # "since yesterday": from its start to as_of.
        end = as_of
        reading += ", and from it up to as_of"
        kind = "period"
    return RelativeTime(words=words, kind=kind, start=start, end=min(end, as_of), reading=reading)


# A clock time written beside a relative day: "yesterday at 10:02", "at 10:02 yesterday",
# "on Monday at 14:00 UTC", "昨天 10:02".
_CLOCK_AFTER_DAY = LazyPattern(r",?\s*(?:at\s+|@\s*)?" + _CLOCK + _ZONE, re.IGNORECASE)
_CLOCK_BEFORE_DAY = LazyPattern(
    r"(?:\b(?:at|@)\s*)?" + _CLOCK + _ZONE + r",?\s+(?:on\s+)?$", re.IGNORECASE
)


def _clock_on_day(
    text: str, m: re.Match[str], rel: RelativeTime, as_of: datetime
) -> tuple[RelativeTime, int, int] | None:
    """The instant of a clock time written beside a relative day ("yesterday at 10:02"),
    with the span of the words; None when there is none, or its zone is one it does not
    convert (the clock is then listed as not resolved, the day stays a period)."""
    after = _CLOCK_AFTER_DAY.match(text, m.end())
    before = None if after else _CLOCK_BEFORE_DAY.search(text, 0, m.start())
    found = after or before
    if found is None or found.group("other"):
        return None
    clock = _clock_of(found)
    zone = found.group("zone")
    offset = timedelta(0) if zone is None else _zone_offset(zone)
    if clock is None or offset is None:
        return None
    start, end = (m.start(), found.end()) if after else (found.start(), m.end())
    at = shift(rel.start.replace(hour=clock[0], minute=clock[1], second=clock[2]), -offset)
    day = rel.start.date().isoformat()
    how = rel.reading.removeprefix(day).removesuffix(" up to as_of, as_of's day")
    reading = f"{found.group(0).strip(' ,@').removeprefix('at ').strip()} on {day}{how}"
    if zone is None:
        reading += f"; {NO_ZONE_READING}"
    words = text[start:end].strip()
    return RelativeTime(words=words, kind="instant", start=at, end=at, reading=reading), start, end


def _relative_ago(m: re.Match[str], as_of: datetime) -> RelativeTime:
    """The instant "N <unit> ago" names: as_of minus N."""
    if m.group("zunit"):
        unit = _ZH_UNITS[m.group("zunit")]
        qty = 0.5 if m.group("zqty") == "半" else float(m.group("zqty"))
    else:
        written = m.group("unit").lower()
        unit = _SPAN_UNITS.get(written) or written.removesuffix("s")
        qty_text = re.sub(r"\s+", " ", m.group("qty").lower())
        number = _AMOUNT_NUMBERS.get(qty_text, qty_text)
        qty = 0.5 if qty_text.startswith("half") else float(number)
    length = _scaled(_AMOUNT_UNITS[unit], qty)
    return RelativeTime(
        words=m.group(0).strip(),
        kind="instant",
        start=shift(as_of, -length),
        end=shift(as_of, -length),
        reading=f"as_of minus {amount_text(length)}",
    )


def _relative_named(rel: RelativeTime) -> list[NamedTime]:
    """A relative time as the question's written times are: a period's two ends, or one
    instant."""
    if rel.kind == "instant":
        return [NamedTime(at=rel.start, words=rel.words, reading=rel.reading)]
    return [
        NamedTime(at=rel.start, words=rel.words, reading=rel.reading, period_end="start"),
        NamedTime(at=rel.end, words=rel.words, reading=rel.reading, period_end="end"),
    ]


def _period_words(period: Sequence[NamedTime]) -> str:
    """The words of a period as written: "in July", or "between A and B"'s two ends."""
    return " ".join(dict.fromkeys(n.words for n in period))


def _one_period(
    periods: list[tuple[int, list[NamedTime]]],
) -> tuple[list[NamedTime], dict[str, tuple[int, str]]]:
    """The ends of the one period the answer reads, of those asked (position, ends): the
    one that starts first, then the one written first; and each other one's words, with
    its position and the words of the one read. A second period is said, never dropped
    silently ("in the last hour and since March")."""
    if not periods:
        return [], {}
    ordered = sorted(periods, key=lambda p: (min(n.at for n in p[1]), p[0]))
    read = _period_words(ordered[0][1])
    return ordered[0][1], {_period_words(ends): (at, read) for at, ends in ordered[1:]}


def time_references(
    question: str, as_of: datetime | None = None, *, spans: bool = False
) -> TimeReferences:
    """The time references of a question (pure; English and Chinese). Given `as_of`, a day
    written without its year ("at midnight on July 24") is in the year of `as_of`.
    `spans`: the question asks what changed (change_period.asks_changes), so an amount
    before or after an event is a period's length, "in the week before the incident" too
    (for another question it is a period, not an instant: not applied)."""
    # A response time's words ("how long until the alert fired?") name no instant asked.
    question = without_metric_words(question)
    not_applied: dict[str, str] = {}
    zones: dict[str, str] = {}
    month = _MONTH_PERIOD.search(question) if as_of is not None else None
    if month is not None and as_of is not None:
        # Blanked before the other patterns, which list a bare month as not read.
        question_read = _blank(question, month.start(), month.end())
    else:
        question_read = question
    named, unresolved, rest = _named_times(
        question_read, as_of.year if as_of else None, not_applied, zones
    )
    # Each period asked ("between A and B", "in July", "in the last hour"), where it is
    # written: the answer reads one, and says the others (`_one_period`).
    periods: list[tuple[int, list[NamedTime]]] = []
    # Each "between A and B" is a period of its own: a second one's end is never read as a
    # point in time ("between July 1 and July 10 and between July 20 and July 30").
    between: list[list[NamedTime]] = []
    for n in named:
        if n.period_end == "start" or (n.period_end and not between):
            between.append([n])
        elif n.period_end:
            between[-1].append(n)
    for ends in between:
        periods.append((max(0, question.find(ends[0].words)), ends))
    named = [n for n in named if not n.period_end]
    if month is not None and as_of is not None:
        periods.append((month.start(), _month_period(month, as_of)))
    span = _LAST_SPAN.search(rest)
    if span is not None:
        span_words = span.group(0).strip()
        rest = _blank(rest, span.start(), span.end())
        if as_of is None:
            unresolved.append((span.start(), span_words))
            not_applied[span_words] = "a window ending at as_of, and no as_of is known yet"
        else:
            # A window ending at as_of, both ends stated as a period ("between A and B").
            length = _last_span(span)
            window = [
                NamedTime(
                    at=shift(as_of, -length),
                    words=span_words,
                    reading=f"the start of the window: as_of minus {amount_text(length)}",
                    period_end="start",
                ),
                NamedTime(
                    at=as_of,
                    words=span_words,
                    reading="the end of the window: as_of",
                    period_end="end",
                ),
            ]
            periods.append((span.start(), window))
    # Relative words read against as_of ("yesterday", "last week", "2 hours ago"): a period
    # as if its dates had been written, or an instant as if its time had been.
    relative: list[RelativeTime] = []
    if as_of is not None:
        for found_period in list(_RELATIVE_PERIOD.finditer(rest)):
            if found_period.group("weekday") and not _WEEKDAY_LEAD.match(found_period.group(0)):
                continue  # a bare "Friday" ("the Friday batch job") is no day asked about
            rel = _relative_period(found_period, as_of)
            if rel.start > rel.end:
                continue  # "this morning" asked before 06:00: not begun, said not resolved
            clocked = _clock_on_day(rest, found_period, rel, as_of) if rel.kind == "day" else None
            if clocked is not None:
                # "yesterday at 10:02": that instant, as a written date and time is.
                rest = _blank(rest, clocked[1], clocked[2])
                named += _relative_named(clocked[0])
                relative.append(clocked[0])
                continue
            rest = _blank(rest, found_period.start(), found_period.end())
            periods.append((found_period.start(), _relative_named(rel)))
            relative.append(rel)
        for found_ago in list(_AGO.finditer(rest)):
            rel = _relative_ago(found_ago, as_of)
            rest = _blank(rest, found_ago.start(), found_ago.end())
            named += _relative_named(rel)
            relative.append(rel)
    kept, other_periods = _one_period(periods)
    named += kept
    # A relative period set aside for another one is said as not read, not as read.
    relative = [r for r in relative if r.kind == "instant" or r.words not in other_periods]
    unresolved += [(at, words) for words, (at, _) in other_periods.items()]
    event: AnchorEvent | None = None
    words: str | None = None
    side: EventSide | None = None
    offset: timedelta | None = None
    searched = question  # what the event words below are looked for in
    sided = _event_side(rest)
    if sided is not None:
        event, side, m = sided
        start = m.start()
        offset, problem = _amount(m, spans)
        tail = None if m.group("offset") else _AMOUNT_TAIL.search(question, 0, start)
        if tail is not None:
            amount = question[tail.start() : m.start()].strip()
            start, problem = tail.start(), f"{amount!r} is no amount it reads"
        words = question[start : m.end()].strip()
        problem = problem or _release_pick_problem(event, words)
        rest = _blank(rest, start, m.end())
        if problem is not None:
            # Read, but not applied: said, and never taken as the event itself.
            unresolved.append((start, words))
            not_applied[words] = problem
            searched = _blank(question, start, m.end())
            event, side, offset, words = None, None, None, None
    for kind, pattern in (
        (AnchorEvent.ALERT, _ALERT_WORDS),
        (AnchorEvent.RELEASE, _RELEASE_WORDS),
        (AnchorEvent.INCIDENT_END, _INCIDENT_END_WORDS),
        (AnchorEvent.INCIDENT_START, _INCIDENT_WORDS),
        (AnchorEvent.INCIDENT_START, _RESPONSE_WORDS),
        (AnchorEvent.FIRST_ERROR, _EVENT_WORDS),
    ):
        if event is not None:
            break
        found = pattern.search(searched)
        if found:
            event, words = kind, found.group(0)
            # Resolved words are not also time words it cannot place.
            rest = _blank(rest, found.start(), found.end())
            break
    if event is None and not named and not relative and not unresolved:
        on_call = _ON_CALL_PAST.search(searched)
        if on_call:
            event, words = AnchorEvent.INCIDENT_START, on_call.group(0)
    unresolved += _unresolved_words(rest)
    ordered = sorted(named, key=lambda n: (n.at, n.words))
    return TimeReferences(
        event=event,
        event_words=words,
        side=side,
        offset=offset,
        codes=sorted(set(_ERROR_CODE.findall(question))),
        now=bool(_NOW_WORDS.search(question)),
        explicit=sorted({n.at for n in named}),
        named=ordered,
        unresolved=list(dict.fromkeys(w for _, w in sorted(unresolved))),
        not_applied=not_applied,
        other_periods={words: read for words, (_, read) in other_periods.items()},
        zones_not_read=zones,
        relative=relative,
    )


class UnplacedReason(StrEnum):
    """Why the answer is not about a time the question names (it is at `as_of` instead)."""

    NOT_READ = "not_read"  # words it does not read as a time ("yesterday")
    NOT_APPLIED = "not_applied"  # read, but an amount or a pick it cannot apply ("a few hours")
    EVENT_NOT_FOUND = "event_not_found"  # no such event by as_of, as known at known_at
    # Not looked for: the service named (--service, the question's words) resolved to nothing
    # the subject may see, and no other was read.
    NAME_UNRESOLVED = "name_unresolved"
    AFTER_AS_OF = "after_as_of"  # the time lies after as_of
    DEADLINE = "deadline"  # the run's deadline stopped the search before the event was found
    # ... its last round (--max-rounds) or its full evidence budget did, reads still planned
    CUT_SHORT = "cut_short"
    # ... a read of the run failed (timed out, refused): the event is unknown, not absent
    READ_FAILED = "read_failed"
    OTHER_PERIOD = "other_period"  # a second period asked: the answer reads another one
    ZONE_NOT_READ = "zone_not_read"  # a zone it does not convert ("CEST"): never read as UTC


class UnplacedTime(BaseModel):
    """A time the question names that the answer is not about, and why."""

    words: str
    reason: UnplacedReason
    detail: str


# How a run that stopped with reads still planned stopped, as the Time line says it.
_STOPPED_BY = {
    "max_rounds": "after its last round (--max-rounds)",
    "budget_exhausted": "with its evidence budget full (--budget-tokens)",
}


# What each anchor event is, as a sentence names the one not found.
_EVENT_NAMES = {
    AnchorEvent.FIRST_ERROR: "first error",
    AnchorEvent.RELEASE: "release",
    AnchorEvent.INCIDENT_START: "incident start",
    AnchorEvent.ALERT: "alert firing",
    AnchorEvent.INCIDENT_END: "incident resolution",
    AnchorEvent.OWNER_CHANGE: "change of owner of the service asked about",
}
_PICKED_RELEASES = {
    ReleasePick.FIRST: "first release",
    ReleasePick.PREVIOUS: "release before the latest one",
    ReleasePick.LATEST: "release",
}


def unplaced_times(
    question: str,
    as_of: datetime,
    references: Sequence[ReferenceTime] | None = None,
    *,
    late: Sequence[ReferenceTime] = (),
    cut_short_by: str | None = None,
    spans: bool = False,
) -> list[UnplacedTime]:
    """The question's time words the answer is not about, as written, each with why: the
    unresolved ones, then the explicit times after `as_of`, then (given the run's
    `references`) the words that name an event ("then", "before the release") when it was
    not placed: after `as_of` (`late`), not found by then, or not looked up before the run
    stopped with reads still planned (`cut_short_by`: its stop reason, `deadline`,
    `max_rounds` or `budget_exhausted`; `read_failed`: one of its reads failed). For each,
    the answer is at `as_of`. `spans`: a change question (`time_references`)."""
    refs = time_references(question, as_of, spans=spans)
    out = [_unplaced_words(refs, w) for w in refs.unresolved]
    period = refs.period
    out += [
        UnplacedTime(
            words=n.words,
            reason=UnplacedReason.AFTER_AS_OF,
            detail=f"{iso_utc(n.at)}, after as_of {iso_utc(as_of)}",
        )
        for n in refs.named
        # A period begun by as_of is read up to as_of (`period_notes`), its end not unused.
        if n.at > as_of and not (period is not None and n in period and period[0].at <= as_of)
    ]
    placed = references is None or any(r.kind == "event" for r in references)
    if refs.event is not None and refs.event_words and not placed:
        # "then", "when it started", "before the release": not placed, and why.
        event = _EVENT_NAMES[refs.event]
        pick = release_pick(refs.event_words) if refs.event is AnchorEvent.RELEASE else None
        event = _PICKED_RELEASES[pick] if pick is not None else event
        after = next((r for r in late if r.kind == "event"), None)
        if after is not None:
            unplaced = UnplacedTime(
                words=refs.event_words,
                reason=UnplacedReason.AFTER_AS_OF,
                detail=f"{after.describe()}, after as_of {iso_utc(as_of)}",
            )
        elif cut_short_by == "deadline":
            unplaced = UnplacedTime(
                words=refs.event_words,
                reason=UnplacedReason.DEADLINE,
                detail=f"the run's deadline stopped the search before the {event} was found",
            )
        elif cut_short_by == "read_failed":
            # A read that failed (a timeout on a loaded server) may have held it: never "no
            # incident start is found", and no later --as-of to give.
            unplaced = UnplacedTime(
                words=refs.event_words,
                reason=UnplacedReason.READ_FAILED,
                detail=f"a read of the run failed (see its tool calls: a query timed out or "
                f"Neo4j refused it) before the {event} was found: unknown, not absent",
            )
        elif cut_short_by is not None:
            # Not "no such event": the search stopped before it could look (a false "give a
            # later --as-of" sent a user with --max-rounds 1 after a first error that exists).
            unplaced = UnplacedTime(
                words=refs.event_words,
                reason=UnplacedReason.CUT_SHORT,
                detail=f"the run stopped {_STOPPED_BY.get(cut_short_by, cut_short_by)} "
                f"before the {event} was found",
            )
        else:
            unplaced = UnplacedTime(
                words=refs.event_words,
                reason=UnplacedReason.EVENT_NOT_FOUND,
                detail=f"no {event} is found by as_of {iso_utc(as_of)}",
            )
        out.append(unplaced)
    first: dict[str, UnplacedTime] = {}
    for u in out:
        first.setdefault(u.words, u)
    return list(first.values())


def _unplaced_words(refs: TimeReferences, words: str) -> UnplacedTime:
    """Why `refs` leaves these unresolved words of the question unused."""
    if words in refs.other_periods:
        read = refs.other_periods[words]
        return UnplacedTime(
            words=words,
            reason=UnplacedReason.OTHER_PERIOD,
            detail=f"two periods asked; the answer reads {read!r}; ask {words!r} separately",
        )
    if words in refs.zones_not_read:
        return UnplacedTime(
            words=words, reason=UnplacedReason.ZONE_NOT_READ, detail=zone_not_read(refs, words)
        )
    if words in refs.not_applied:
        return UnplacedTime(
            words=words, reason=UnplacedReason.NOT_APPLIED, detail=refs.not_applied[words]
        )
    return UnplacedTime(words=words, reason=UnplacedReason.NOT_READ, detail="not read as a time")


def zone_not_read(refs: TimeReferences, words: str) -> str:
    """Why a time written in a zone it does not convert is not used, and what to write."""
    zone = refs.zones_not_read[words]
    why = (
        "names no zone"
        if zone.lower().startswith("local")
        else "not understood (zone names are not converted: some, like IST or CST, name several)"
    )
    return f"zone {zone} {why}: give its offset instead (+02:00, -05:00), or Z for UTC"


def period_notes(question: str, as_of: datetime) -> list[str]:
    """What the answer says when the period asked begins by `as_of` and runs past it ("in
    July" asked on July 23): it is read up to `as_of`, which bounds what the answer may know."""
    period = time_references(question, as_of).period
    if period is None or period[0].at > as_of or period[1].at <= as_of:
        return []
    start, end = period
    words = _period_words([start, end])
    return [
        f"{words!r} runs to {iso_utc(end.at)}, after as_of {iso_utc(as_of)}: the period is "
        f"read from {iso_utc(start.at)} up to as_of, which bounds what the answer may know. "
        "Give a later --as-of to read all of it"
    ]


def relative_notes(question: str, as_of: datetime) -> list[str]:
    """The Time lines of the relative words read against `as_of` ("'yesterday' read as
    2026-07-23 (UTC), the day before as_of's day: ...")."""
    return [r.note(as_of) for r in time_references(question, as_of).relative]


def time_words_not_used(
    question: str, as_of: datetime, references: Sequence[ReferenceTime] | None = None
) -> list[str]:
    """The words of `unplaced_times`: the question's time words the answer is not about."""
    return [u.words for u in unplaced_times(question, as_of, references)]


# How far from as_of an event taken as "then" may lie before the answer says so.
FAR_FROM_AS_OF = timedelta(days=1)


def _span(delta: timedelta) -> str:
    """`1 d 2 h`, `130 d 13 h 57 min` (whole minutes: the instants are printed beside it)."""
    minutes = int(abs(delta).total_seconds()) // 60
    days, rest = divmod(minutes, 24 * 60)
    parts = [(days, "d"), (rest // 60, "h"), (rest % 60, "min")]
    return " ".join(f"{n} {unit}" for n, unit in parts if n) or "0 min"


def far_anchor_notes(
    question: str,
    as_of: datetime,
    references: Sequence[ReferenceTime],
    *,
    also_as_of: bool = True,
) -> list[str]:
    """What the answer says when the event taken for the question's "then" (or "during the
    incident", "before the release") lies more than `FAR_FROM_AS_OF` from `as_of`, was
    moved by an amount ("two days before the alert"), or was taken over other moments the
    plain "then" could mean (each named, with why not): the claims name its date, but a user who
    asked "then" expecting another moment, or a hurried reader of the amount, would not
    notice. `also_as_of`: the answer also states what holds at as_of (an owner or version in
    force there), so it is said to hold there too; else it holds at that moment alone (a
    release asked about, or a version that ended before as_of with none later in what the KG
    knew at known_at)."""
    refs = time_references(question, as_of)
    words = refs.event_words or "then"
    # An amount moved the instant from the event ("two days before the alert"): said even
    # when near as_of, so that no reader thinks it was dropped.
    moved = refs.offset is not None and refs.side is not None
    return [
        f"{words!r} is taken as {r.describe()}"
        + (f", {_span(as_of - r.at)} before as_of {iso_utc(as_of)}" if far else "")
        # The other moments found that the plain "then" could have meant: named, and why not.
        + (f" (also found, not taken: {'; '.join(r.passed_over)})" if r.passed_over else "")
        + f"; the answer holds at that moment{' (and at as_of)' if also_as_of else ''}. "
        "Name the moment in the question, "
        "or give --as-of, to ask about another one"
        for r in references
        if r.kind == "event" and ((far := as_of - r.at > FAR_FROM_AS_OF) or moved or r.passed_over)
    ]


def refuse_future_known_at(field: str, known_at: datetime | None, now: datetime) -> None:
    """BadInput (exit 2) when `known_at` is later than `now`.

    What the KG knows at a future instant is not known yet: a run there would see records
    ingested after it ran, so its replay would drift (ingest refuses a future `recorded_at`
    for the same reason). No clock-skew allowance: `known_at` defaults to now when omitted.
    """
    if known_at is not None and known_at > now:
        raise BadInput(
            f"{field} {iso_utc(known_at)} is in the future (now is {iso_utc(now)}): the KG "
            "cannot know it yet; omit it to see the KG as known now"
        )


def future_as_of_notes(as_of: datetime, known_at: datetime) -> list[str]:
    """A Time note when `as_of` is later than `known_at` (`--as-of 9999-12-31T23:59:59Z`, or
    2062 typed for 2026): what the records known at known_at say holds then, not a record of
    then, so a later record may change it. None otherwise."""
    if as_of <= known_at:
        return []
    return [
        f"as_of {iso_utc(as_of)} is after known_at {iso_utc(known_at)}: what holds then as "
        "recorded by known_at; later records may change it"
    ]


class ReferenceTime(BaseModel):
    """One instant a time-bound claim is about, and why."""

    at: datetime
    label: str  # "the first PAY-4097 error", "as_of"
    why: str  # "the question says 'then'"
    kind: str  # "event" | "explicit" | "as_of"
    # The record the event was read from (a release, an alert's FIRED_ON, an incident), when
    # known: the gate admits it as evidence of the answer (`GatePolicy.anchor_ids`).
    element_id: str | None = None
    # The plain "then": the other moments found that it could have meant, each described
    # (`<label>, <time>, <why not>`), passed over. The Time line names them.
    passed_over: list[str] = Field(default_factory=list)
    # Of those, the first error passed over, as (its code, its first-seen instant): a claim
    # that states it rests on a moment the run did not take (`passed_over_error`).
    errors_passed_over: list[tuple[str, datetime]] = Field(default_factory=list)

    def describe(self) -> str:
        """`<label>, <time>` as claims print it."""
        return f"{self.label}, {iso_utc(self.at)}"


# Property names that carry an event's instant, most specific first.
DEPLOY_TIME_KEYS = ("finished_at", "ended_at", "completed_at", "deployed_at", "claimed_time", "at")
FIRST_SEEN_KEYS = ("first_seen", "first_seen_at", "started_at", "at")
CHANGE_TIME_KEYS = ("at", "changed_at", "finished_at", "deployed_at", "started_at")
ALERT_TIME_KEYS = ("fired_at", "at")


def instant(ev: Evidence, keys: Sequence[str]) -> datetime | None:
    """The first zoned instant among `keys` of the evidence's context or props, else its
    valid_from."""
    for key in keys:
        raw = ev.context.get(key, ev.props.get(key))
        if isinstance(raw, str):
            try:
                parsed = datetime.fromisoformat(raw.replace("Z", "+00:00"))
            except ValueError:
                continue
            if parsed.tzinfo is not None:
                return parsed
    return ev.valid_from


def incident_span(ev: Evidence) -> tuple[datetime | None, datetime | None]:
    """An incident record's (start, resolution): its `started_at` (context, then props), else
    its valid_from; its `resolved_at`, else its valid_to, else None (no resolution recorded).
    The one reading of both: `incidents_in_period` and `incidents_at` rows carry the same
    coalesced times in their context, the other reads the record's props."""
    resolved = instant_of(ev.context.get("resolved_at", ev.props.get("resolved_at")))
    return instant(ev, ("started_at",)), resolved or ev.valid_to


def change_instant(ev: Evidence) -> datetime | None:
    """When a release (its finish) or another change (its instant) took effect."""
    return instant(ev, DEPLOY_TIME_KEYS if ev.type == "Deployment" else CHANGE_TIME_KEYS)


def cause_kind(ev: Evidence) -> Literal["deployment_time", "change_event"]:
    """What a competing cause is counted as: a release (a Deployment record) or another
    change event."""
    return "deployment_time" if ev.type == "Deployment" else "change_event"


def release_of(ev: Evidence) -> str | None:
    """The release a deployment-time record is about: itself, or its fact slot's subject (a
    CI/CD document of the release's time, `doc:cicd-release-2026.07.23.1`)."""
    if ev.type == "Deployment":
        return ev.element_id
    key = ev.conflict_key or ""
    if key.startswith("deployment_time|"):
        return key.split("|", 1)[1]
    entity = ev.context.get("entity")
    return entity if isinstance(entity, str) and entity.startswith("deploy:") else None


def counted_cause(ev: Evidence, window: tuple[datetime, datetime] | None) -> bool:
    """Whether a record in the cause window is counted as a competing cause of its own: a
    release or another change event, not a record of a release's time (a CI/CD document:
    the release it is about is the cause, as claims/candidates.py weighs it)."""
    return in_cause_window(ev, window) and (ev.type == "Deployment" or release_of(ev) is None)


def in_cause_window(ev: Evidence, window: tuple[datetime, datetime] | None) -> bool:
    """Whether a release or change event took effect in `window` (the window before the
    first error whose changes are the competing causes)."""
    if window is None or not {"deployment_time", "change_event"} & set(ev.evidence_types):
        return False
    at = change_instant(ev)
    return at is not None and window[0] <= at <= window[1]


def nearest_first(ev: Evidence, window: tuple[datetime, datetime]) -> tuple[timedelta, str]:
    """The order competing causes are kept in when not all fit the evidence budget: nearest
    the first error (the window's end) first, then by element id."""
    at = change_instant(ev) or window[0]
    return window[1] - at, ev.element_id


def _code(ev: Evidence) -> str:
    code = ev.context.get("code") or ev.context.get("error_code")
    return code.removeprefix("err:") if isinstance(code, str) else (ev.name or ev.element_id)


def passed_over_error(ev: Evidence, refs: Sequence[ReferenceTime]) -> ReferenceTime | None:
    """The moment taken for the plain "then" when `ev` is the first-seen record of an error
    it passed over (the Time line says "also found, not taken"): at as_of 10:00 the PAY-1002
    error of 2025 while the rollout of 09:55:12 is "then"."""
    at = instant(ev, FIRST_SEEN_KEYS)
    if at is None:
        return None
    return next(
        (
            r
            for r in refs
            for name, seen in r.errors_passed_over
            if at == seen and name in (_code(ev), "error")
        ),
        None,
    )


def first_error(
    evidence: Sequence[Evidence],
    as_of: datetime,
    first_seen: datetime | None = None,
    codes: Sequence[str] = (),
) -> tuple[datetime, str] | None:
    """The first error "then" refers to, at or before `as_of`, with its error's name.

    Of the error codes the question names, the earliest first-seen; when it names none, the
    latest first-seen (the most recent incident, not an unrelated error of years ago).
    """
    firsts = [ev for ev in evidence if "error_first_seen" in ev.evidence_types]
    explicit = [ev for ev in firsts if "first_seen" in ev.context] or firsts
    seen = [(t, _code(ev)) for ev in explicit if (t := instant(ev, FIRST_SEEN_KEYS))]
    seen = [(t, name) for t, name in seen if t <= as_of]
    named = [(t, name) for t, name in seen if name in codes]
    if named:
        return min(named)
    if seen and not codes:
        return max(seen)
    if first_seen is not None and first_seen <= as_of:
        return (first_seen, "error")
    # A code the question names that has not been seen by as_of is not another code's error
    # (before, "then" was a PAY-1002 error of the year before).
    return None


# A release named as written in questions (the planner's mentions use it too).
RELEASE_NAME = LazyPattern(r"\brelease-\d{4}\.\d{2}\.\d{2}\.\d+\b", re.IGNORECASE)


class SeenEvent(NamedTuple):
    """An event a check step read but the gate did not (yet) admit: a release, an alert's
    firing. `element_id` is the record it was read from."""

    at: datetime
    name: str
    service: str | None = None
    element_id: str | None = None
    # A release's rollout start, when its record says (its `at` is its finish).
    started: datetime | None = None


# An event found: its instant, its name, the id of its record (when known).
_Found = tuple[datetime, str, str | None]


def _release(
    evidence: Sequence[Evidence],
    before: datetime,
    services: Sequence[str],
    words: str | None = None,
    known: Sequence[tuple[datetime, str, str | None] | SeenEvent] = (),
    history_read: bool = False,
) -> _Found | None:
    """The release the question's words mean: the one they name ("before the
    release-2026.07.23.1 deploy"), else the one they pick among the services' releases by
    `before` ("the first release": the earliest, only once `history_read` says their
    earliest releases were read; "the previous release": the one before the latest), else
    the latest.

    `known`: releases a check step read (deployment time, name, service), as evidence."""
    # "release-2026.07.20.2", "release 2026.07.20.2": the version names it, however written.
    named = set(_RELEASE_VERSION.findall(words or ""))
    releases: list[tuple[datetime, str, str | None]] = [
        (t, ev.name or ev.element_id, ev.element_id)
        for ev in evidence
        if ev.type == "Deployment"
        and "deployment_time" in ev.evidence_types
        and (not services or ev.context.get("service") in (None, *services))
        and (t := instant(ev, DEPLOY_TIME_KEYS)) is not None
        and (
            bool(named & set(_RELEASE_VERSION.findall(_release_text(ev)))) if named else t <= before
        )
    ]
    releases += [
        (r.at, r.name, r.element_id)
        for r in (SeenEvent(*k) for k in known)
        if (not services or r.service in (None, *services))
        and (bool(named & set(_RELEASE_VERSION.findall(r.name))) if named else r.at <= before)
    ]
    # One release read by several steps is one release (the previous one is another).
    unique = sorted({name: (t, name, record) for t, name, record in releases}.values())
    pick = None if named else release_pick(words)
    if pick is ReleasePick.FIRST:
        return unique[0] if unique and history_read else None
    if pick is ReleasePick.PREVIOUS:
        return unique[-2] if len(unique) > 1 else None
    return unique[-1] if unique else None


def rollout_under_way(ev: Evidence, at: datetime) -> tuple[datetime, datetime] | None:
    """(start, finish) of a release whose rollout had started by `at` and had not finished:
    in progress then, so not yet "the release" (its record is valid from its finish). None
    for any other record, or a release with no start before its finish."""
    if ev.type != "Deployment" or "deployment_time" not in ev.evidence_types:
        return None
    started = instant_of(ev.context.get("started_at", ev.props.get("started_at")))
    finished = instant(ev, DEPLOY_TIME_KEYS)
    if started is None or finished is None or not started <= at < finished:
        return None
    return started, finished


def _rollout(
    evidence: Sequence[Evidence],
    as_of: datetime,
    services: Sequence[str],
    known: Sequence[tuple[datetime, str, str | None] | SeenEvent] = (),
) -> _Found | None:
    """The latest release of the services whose rollout was under way at `as_of` (started by
    it, not finished), as (its start, its name, its record): the release then going out."""
    rolling: list[tuple[datetime, str, str | None]] = [
        (under_way[0], ev.name or ev.element_id, ev.element_id)
        for ev in evidence
        if (not services or ev.context.get("service") in (None, *services))
        and (under_way := rollout_under_way(ev, as_of)) is not None
    ]
    rolling += [
        (r.started, r.name, r.element_id)
        for r in (SeenEvent(*k) for k in known)
        if r.started is not None
        and r.started <= as_of < r.at
        and (not services or r.service in (None, *services))
    ]
    return max(rolling, key=lambda r: (r[0], r[1])) if rolling else None


def _release_text(ev: Evidence) -> str:
    """The words a release record is known by (name, id, its `release` property)."""
    release = ev.context.get("release", ev.props.get("release"))
    return f"{ev.name or ''} {ev.element_id} {release if isinstance(release, str) else ''}"


# The words naming an incident: "during the checkout incident" -> "checkout".
_INCIDENT_NAME_WORDS = LazyPattern(
    r"\bthe ((?:[\w.:-]+ ){1,3}?)(?:incident|outage)\b", re.IGNORECASE
)
_NOT_A_NAME = frozenset({"whole", "entire", "same", "last", "latest", "recent", "current", "big"})


def _incident_text(ev: Evidence) -> str:
    """The words an incident record is known by: name, id and summary."""
    summary = ev.context.get("summary", ev.props.get("summary"))
    return f"{ev.name or ''} {ev.element_id} {summary if isinstance(summary, str) else ''}"


def _incident_of_code(incident: Evidence, code: str, evidence: Sequence[Evidence]) -> bool:
    """Whether `code`'s first error is of this incident: seen within `EPISODE` of its start
    (an error code its services emitted a year before is not what the incident was)."""
    start = incident_span(incident)[0]
    if start is None:
        return False
    return any(
        _code(ev) == code
        and (t := instant(ev, FIRST_SEEN_KEYS)) is not None
        and abs(t - start) <= EPISODE
        for ev in evidence
        if "error_first_seen" in ev.evidence_types
    )


def _named_incidents(evidence: Sequence[Evidence], words: str | None) -> list[Evidence]:
    """The incident records the question's words name ("the payments incident": those whose
    name, id or summary has every word; "the PAY-4097 incident": the incident of that error
    code), else all of them. Words with an id or a code in them that name no incident the
    subject sees name none: no other incident stands in for it (before, the latest did)."""
    incidents = [ev for ev in evidence if ev.type == "Incident"]
    ids = {m.group(0).lower() for m in _INCIDENT_ID.finditer(words or "")}
    if ids:
        # "during inc:2026-07-23-payments": that record, and no other (one the subject may
        # not see is as unknown as one that does not exist).
        return [ev for ev in incidents if ev.element_id.lower() in ids]
    found = _INCIDENT_NAME_WORDS.search(words or "")
    raw = [t for t in (found.group(1).split() if found else []) if t.lower() not in _NOT_A_NAME]
    tokens = [t.lower().rstrip("s") for t in raw]
    codes = [t for t in raw if _ERROR_CODE.fullmatch(t)]
    named = [
        ev
        for ev in incidents
        if tokens
        and all(
            t in _incident_text(ev).lower()
            or (t.upper() in codes and _incident_of_code(ev, t.upper(), evidence))
            for t in tokens
        )
    ]
    if not named and any(any(ch.isdigit() for ch in t) for t in tokens):
        return []  # "the PAY-9999 incident": an id nobody sees is not the latest incident
    return named or incidents


def _incident_start(
    evidence: Sequence[Evidence], as_of: datetime, words: str | None = None
) -> _Found | None:
    """The start of the incident the words name, else of the latest incident by `as_of` (the
    one in question, not one of years ago)."""
    starts = [
        (t, ev.name or ev.element_id, ev.element_id)
        for ev in _named_incidents(evidence, words)
        if (t := incident_span(ev)[0]) is not None and t <= as_of
    ]
    return max(starts) if starts else None


def incident_start_named(
    evidence: Sequence[Evidence], as_of: datetime, words: str | None = None
) -> tuple[datetime, str, str | None] | None:
    """(start, name, incident id) of the incident `words` name among the incident records
    of `evidence` ("during the PAY-4097 incident", "for the payments incident"), else of the
    latest one started by `as_of`; None: none that the words name started by then. As
    `investigate` places the incident's start (a runbook lookup's TEXT reads it too)."""
    return _incident_start(evidence, as_of, words)


def _incident_before(
    evidence: Sequence[Evidence], episode: Sequence[_Found | None], words: str | None = None
) -> _Found | None:
    """The start of the latest incident that began before every event of `episode` (the
    moment taken for the plain "then" and the events tried with it), if any."""
    begins = [hit[0] for hit in episode if hit is not None]
    if not begins:
        return None
    starts = [
        (t, ev.name or ev.element_id, ev.element_id)
        for ev in _named_incidents(evidence, words)
        if (t := incident_span(ev)[0]) is not None and t < min(begins)
    ]
    return max(starts) if starts else None


def _incident_end(
    evidence: Sequence[Evidence], as_of: datetime, words: str | None = None
) -> _Found | None:
    """The resolution by `as_of` of the incident the words name, else of the latest one
    resolved (an incident not resolved yet has none)."""
    ends = [
        (t, ev.name or ev.element_id, ev.element_id)
        for ev in _named_incidents(evidence, words)
        if (t := incident_span(ev)[1]) is not None and t <= as_of
    ]
    return max(ends) if ends else None


def predates_every_release(evidence: Sequence[Evidence], at: datetime) -> bool:
    """Whether `at` lies before every release record of the evidence began (its rollout
    start, else its finish), there being one: an error first seen then is older than every
    change read, so it is not the errors a question naming none asks about."""
    begins = [
        instant_of(ev.context.get("started_at", ev.props.get("started_at")))
        or instant(ev, DEPLOY_TIME_KEYS)
        for ev in evidence
        if ev.type == "Deployment" and "deployment_time" in ev.evidence_types
    ]
    known = [b for b in begins if b is not None]
    return bool(known) and all(at < b for b in known)


def _before_every_release(
    evidence: Sequence[Evidence],
    known: Sequence[tuple[datetime, str, str | None] | SeenEvent],
    at: datetime,
) -> bool:
    """`predates_every_release`, counting the releases a check step read too (their start
    when known, else their finish)."""
    begins = [r.started or r.at for r in (SeenEvent(*k) for k in known)]
    if any(b <= at for b in begins):
        return False
    return predates_every_release(evidence, at) or (bool(begins) and not _has_release(evidence))


def _has_release(evidence: Sequence[Evidence]) -> bool:
    return any(
        ev.type == "Deployment" and "deployment_time" in ev.evidence_types for ev in evidence
    )


def _release_start(evidence: Sequence[Evidence], name: str, finished: datetime) -> datetime | None:
    """When the release named `name` (finished at `finished`) started, if its record says."""
    for ev in evidence:
        if ev.type == "Deployment" and (ev.name or ev.element_id) == name:
            started = instant_of(ev.context.get("started_at", ev.props.get("started_at")))
            if started is not None and started <= finished:
                return started
    return None


def _alert_name(ev: Evidence) -> str:
    """The alert a firing record is of: its `alert`, else the start of a FIRED_ON record
    (`FIRED_ON|alert:X|svc:Y|...`, admitted as the anchor), else its name or id."""
    parts = ev.element_id.split("|")
    of_record = parts[1] if ev.type == "FIRED_ON" and len(parts) > 2 else None
    return str(ev.context.get("alert") or of_record or ev.name or ev.element_id)


def _alert(
    evidence: Sequence[Evidence],
    as_of: datetime,
    known: Sequence[tuple[datetime, str] | tuple[datetime, str, str]] = (),
) -> _Found | None:
    """The first firing by `as_of` of the alerts read (`known`: instant, alert id and, when
    known, its FIRED_ON record's id) or admitted."""
    fired: list[tuple[datetime, str, str | None]] = [
        (k[0], k[1].removeprefix("alert:"), k[2] if len(k) > 2 else None)
        for k in known
        if k[0] <= as_of
    ]
    fired += [
        (
            t,
            _alert_name(ev).removeprefix("alert:"),
            ev.element_id,
        )
        for ev in evidence
        if (ev.type == "FIRED_ON" or "fired_at" in ev.context or "fired_at" in ev.props)
        and (t := instant(ev, ALERT_TIME_KEYS)) is not None
        and t <= as_of
    ]
    return min(fired) if fired else None


# How far before the latest anchor event the other events of the same episode lie: the
# release, the first error, the incident and its alert are minutes apart, never a day.
EPISODE = timedelta(hours=24)


# Event words that name the error itself ("when the first error happened", "while the errors
# were happening"), unlike "then" or "when it started": no other event stands in for it.
_NAMES_AN_ERROR = LazyPattern(r"\b(?:errors?|failures?)\b", re.IGNORECASE)


def _plain_then_order(
    found: dict[AnchorEvent, _Found | None],
    refs: TimeReferences,
    as_of: datetime,
    known_at: datetime | None = None,
    rolling: _Found | None = None,
) -> list[AnchorEvent]:
    """The events tried when the words or the question name the error ("when PAY-4097
    started", "when the first error happened", "then" in a question naming a code seen by
    as_of): the first error, else the release, the incident start, the alert. The plain
    "then" takes the nearest episode instead (`_nearest_episode`).

    A release within `EPISODE` before `as_of` comes first when the latest error is of an
    episode long before it (or there is none): at as_of 10:02:37, 37 s after the release,
    "then" is not a PAY-1002 error of the year before (it was). A release long before
    `as_of` never displaces the error: asked months later, "then" stays the incident's first
    error, not the latest release. When the words name the error ("when PAY-4097 started"),
    no other event stands in for it; when they name an error without its code ("when the
    first error happened"), neither does a release that just went out. "Just went out" is
    measured from the earlier of `as_of`
    and `known_at`: with `--known-at` 10:02:10 (the release recorded, its errors not yet),
    the release known by then is the moment, as with `--as-of` 10:02:10 (before, a later
    as_of made "then" a PAY-1002 error of the year before).
    """
    if _ERROR_CODE.search(refs.event_words or ""):
        return [AnchorEvent.FIRST_ERROR]
    err, release = found[AnchorEvent.FIRST_ERROR], found[AnchorEvent.RELEASE]
    horizon = min(as_of, known_at) if known_at is not None else as_of
    release_nearer = (
        release is not None
        and release[0] >= shift(horizon, -EPISODE)
        and (err is None or release[0] > shift(err[0], EPISODE))
    )
    if _NAMES_AN_ERROR.search(refs.event_words or ""):
        # "when the first error happened": the error or nothing. Before it, a release that
        # just went out, or is going out (`rolling`: its start), is not it, nor an error of
        # an episode long before that release (before h28-then, a rollout under way at as_of
        # left it the PAY-1002 error of 509 days before).
        going_out = rolling is not None and (err is None or rolling[0] > shift(err[0], EPISODE))
        return [] if release_nearer or going_out else [AnchorEvent.FIRST_ERROR]
    if release_nearer:
        return [k for k in ANCHOR_ORDER if k is not AnchorEvent.FIRST_ERROR]
    return list(ANCHOR_ORDER)


# The events of an incident: what the plain "then" looks for first (a release is a change).
_INCIDENT_EVENTS = (AnchorEvent.FIRST_ERROR, AnchorEvent.INCIDENT_START, AnchorEvent.ALERT)


def _nearest_episode(
    found: dict[AnchorEvent, _Found | None],
    *,
    horizon: datetime,
    background_error: bool,
) -> tuple[list[AnchorEvent], dict[AnchorEvent, str]]:
    """The events the plain "then" tries, in order, and those it passes over, with why.

    "Then" is the latest incident by `as_of`: its latest event found (a first error, an
    incident start, an alert firing) and the events within `EPISODE` before it make one
    episode, tried first error, release, incident start, alert (the release, the first error,
    the incident and its alert of one episode are minutes apart). A release is "then" too
    when it went out, or is going out, within `EPISODE` before `horizon` (the earlier of
    as_of and --known-at: what the KG knew by then), or when no incident event is found;
    a later release, long before as_of, is a change with no incident after it, passed over.
    An error first seen before every release read (`background_error`: one emitted for
    years) is no incident of its own, passed over once a release is found. An event of an
    earlier episode is passed over, however the order ranks it: at as_of 10:00, with a
    release rolling out since 09:55, "then" is not a PAY-1002 error of 509 days before (it
    was, before h28-then). Words naming the error ("when PAY-4097 started") do not come here
    (`_plain_then_order`).
    """
    hits = {k: hit for k in ANCHOR_ORDER if (hit := found[k]) is not None}
    passed: dict[AnchorEvent, str] = {}
    release = hits.get(AnchorEvent.RELEASE)
    if background_error and release is not None and AnchorEvent.FIRST_ERROR in hits:
        passed[AnchorEvent.FIRST_ERROR] = "first seen before every release read"
        del hits[AnchorEvent.FIRST_ERROR]
    if not hits:
        return [], passed
    incident = [hits[k][0] for k in _INCIDENT_EVENTS if k in hits]
    near = release is not None and release[0] >= shift(horizon, -EPISODE)
    latest = max(at for at, _, _ in hits.values()) if near or not incident else max(incident)
    start = shift(latest, -EPISODE)
    for k, (at, _, _) in hits.items():
        if at < start:
            passed[k] = "earlier"
        elif at > latest:
            passed[k] = "a change with no error, incident or alert found after it"
    order = [k for k in hits if k not in passed]
    return order, {k: passed[k] for k in ANCHOR_ORDER if k in passed}


def _event_label(kind: AnchorEvent, name: str, rolling: bool = False) -> str:
    """How a claim names the event of `kind` called `name` ("the first PAY-4097 error")."""
    if kind is AnchorEvent.RELEASE and rolling:
        return f"the start of the rollout of release {name}"
    if kind is AnchorEvent.FIRST_ERROR:
        return f"the first {name} error" if name != "error" else "the first error"
    return {
        AnchorEvent.RELEASE: f"the release {name}",
        AnchorEvent.INCIDENT_START: f"the start of incident {name}",
        AnchorEvent.ALERT: f"the {name} alert",
        AnchorEvent.INCIDENT_END: f"the resolution of incident {name}",
        AnchorEvent.OWNER_CHANGE: f"the change of owner {name}",
    }[kind]


def reference_times(
    refs: TimeReferences,
    evidence: Sequence[Evidence],
    *,
    as_of: datetime,
    first_seen: datetime | None = None,
    services: Sequence[str] = (),
    alerts_fired: Sequence[tuple[datetime, str] | tuple[datetime, str, str]] = (),
    releases: Sequence[tuple[datetime, str, str | None] | SeenEvent] = (),
    known_at: datetime | None = None,
    release_history_read: bool = False,
    late: list[ReferenceTime] | None = None,
    owner_changes: Sequence[tuple[datetime, str, str | None]] = (),
) -> list[ReferenceTime]:
    """The instants other than `as_of` that the question's time words resolve to (sorted).

    `known_at`: what the KG knew by then bounds what "just went out" means (the run's
    `--known-at`). `release_history_read`: the services' earliest releases were read, so
    "the first release" may be placed. `late`, when given, receives the event instant the
    words resolved to when it lies after `as_of` (not used: the answer says so).
    `owner_changes`: (instant, "of <service> from <team> to <team>", the new OWNS record)
    of each change of owner of the services asked about read (planner.note_owner_changes):
    "before the ownership change" is the latest by `as_of`.

    Resolved from the evidence found so far (pure): an event not yet found, or after
    `as_of`, resolves to nothing, and the question is then answered at `as_of`.
    """
    out: list[ReferenceTime] = []
    for named in refs.named:
        if named.at <= as_of:
            why = f"explicit, {named.reading}" if named.reading else "explicit"
            out.append(
                ReferenceTime(
                    at=named.at, label="the time named in the question", why=why, kind="explicit"
                )
            )
    if refs.event is not None:
        err = first_error(evidence, as_of, first_seen, refs.codes)
        if (
            err is not None
            and refs.side is EventSide.BEFORE
            and not refs.codes
            and predates_every_release(evidence, err[0])
        ):
            # "Before the errors" naming none: as for a correlation (claims), an error first
            # seen before every release read (one emitted for years) is not "the errors".
            err = None
        read = release_history_read
        release = _release(evidence, as_of, services, refs.event_words, releases, read)
        latest_release = release
        picked = release_pick(refs.event_words) is not None
        if err is not None and not picked and not (release and release[0] > shift(err[0], EPISODE)):
            # "The release": the one before the first error; not when the error is of an
            # episode long before the latest release (a PAY-1002 error of last year). Words
            # that pick one ("the most recent release") pick it among those by as_of.
            release = _release(evidence, err[0], services, refs.event_words, releases, read)
        found: dict[AnchorEvent, _Found | None] = {
            AnchorEvent.FIRST_ERROR: None if err is None else (*err, None),
            AnchorEvent.RELEASE: release,
            AnchorEvent.INCIDENT_START: _incident_start(evidence, as_of, refs.event_words),
            AnchorEvent.ALERT: _alert(evidence, as_of, alerts_fired),
            AnchorEvent.INCIDENT_END: _incident_end(evidence, as_of, refs.event_words),
            AnchorEvent.OWNER_CHANGE: max(
                (c for c in owner_changes if c[0] <= as_of), default=None
            ),
        }
        order = [refs.event, *(k for k in ANCHOR_ORDER if k is not refs.event)]
        passed: dict[AnchorEvent, str] = {}
        rolling: _Found | None = None
        plain = False
        words = refs.event_words or ""
        if refs.event is AnchorEvent.FIRST_ERROR and refs.side is None:
            rolling = _rollout(evidence, as_of, services, releases)
            if (
                _ERROR_CODE.search(words)
                or _NAMES_AN_ERROR.search(words)
                or (refs.codes and err is not None)
            ):
                # The words, or the question, name the error: it is the moment.
                order = _plain_then_order(found, refs, as_of, known_at, rolling)
                rolling = None
            else:
                # The plain "then": the nearest episode by as_of. Its release is the latest
                # by as_of, or one still rolling out then, whichever began last.
                if rolling is not None and (
                    latest_release is None or rolling[0] > latest_release[0]
                ):
                    found[AnchorEvent.RELEASE] = rolling
                else:
                    found[AnchorEvent.RELEASE], rolling = latest_release, None
                found_err = found[AnchorEvent.FIRST_ERROR]
                plain = True
                order, passed = _nearest_episode(
                    found,
                    horizon=min(as_of, known_at) if known_at is not None else as_of,
                    background_error=found_err is not None
                    and _before_every_release(evidence, releases, found_err[0]),
                )
        for kind in order:
            hit = found[kind]
            if hit is None:
                continue
            if kind is not refs.event and (
                refs.side is not None or refs.event is not AnchorEvent.FIRST_ERROR
            ):
                # "before the release" or "when the alert fired" with no such event found is
                # not the first error: a phrase that names its event gets no stand-in. Only
                # the plain "then" (the first error) falls back along the anchor order.
                continue
            at, name, record = hit
            event_label = _event_label(kind, name, rolling is not None and hit == rolling)
            # "after the release": the state once it happened, at the event itself.
            label, when = event_label, at
            if refs.side is EventSide.BEFORE:
                # "before the release": before any of it rolled out, unless it says
                # "before the release finished".
                started = (
                    _release_start(evidence, name, at)
                    if kind is AnchorEvent.RELEASE
                    and "finish" not in (refs.event_words or "").lower()
                    else None
                )
                if started is not None:
                    event_label, at = f"the start of the release {name}", started
                label, when = f"1 s before {event_label}", shift(at, -BEFORE_EVENT)
            if refs.offset is not None and refs.side is not None:
                # "two days before the alert": that far from the event, its instant said.
                way = -refs.offset if refs.side is EventSide.BEFORE else refs.offset
                amount = amount_text(refs.offset)
                label = f"{amount} {refs.side.value} {event_label} ({iso_utc(at)})"
                when = shift(at, way)
            passed_over = [
                (k, other, why) for k, why in passed.items() if (other := found[k]) is not None
            ]
            if plain:
                # The incident before the moment taken: the one a reader may have meant by
                # "then" (`found` holds only the latest of each kind; before, an earlier
                # incident was never named).
                before = _incident_before(evidence, [found[k] for k in order], refs.event_words)
                if before is not None and all(other != before for _, other, _ in passed_over):
                    passed_over.append((AnchorEvent.INCIDENT_START, before, "earlier"))
                    passed_over.sort(key=lambda p: ANCHOR_ORDER.index(p[0]))
            placed = ReferenceTime(
                at=when,
                label=label,
                why=f"the question says {refs.event_words!r}",
                kind="event",
                element_id=record,
                passed_over=[
                    f"{_event_label(k, other[1], other == rolling)}, {iso_utc(other[0])}, {why}"
                    for k, other, why in passed_over
                ],
                errors_passed_over=[
                    (other[1], other[0])
                    for k, other, _ in passed_over
                    if k is AnchorEvent.FIRST_ERROR
                ],
            )
            if when > as_of:
                if late is not None:
                    late.append(placed)
                break
            out.append(placed)
            break
    unique = {(r.at, r.kind): r for r in out}
    return sorted(unique.values(), key=lambda r: (r.at, r.kind))


def holds_at(ev: Evidence, at: datetime) -> bool:
    """Whether a state record is valid at `at` (`valid_from <= at < valid_to`)."""
    return (ev.valid_from is None or ev.valid_from <= at) and (
        ev.valid_to is None or ev.valid_to > at
    )
