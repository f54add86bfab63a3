"""Time as the investigator means it: which instant a question's words refer to.

Rules, in order (docs/investigation.md, "Time references"):

1. an explicit time written in the question ("on 2026-07-20", "2026-07-23T10:02:00Z") means
   that time;
2. event words ("then", "at that moment", "at the time (of the incident)", "when it fired",
   当时, 那时, 事发时) mean the anchor event: the first error, else the release, else the
   incident start, else the alert (a phrase naming one of them picks that one);
3. "now", "currently" (现在, 目前) mean `as_of`;
4. nothing: `as_of`. Relative words it does not resolve ("yesterday", "2 hours ago", 昨天)
   are listed, and the answer says it is at `as_of`.

`as_of` always stays a reference too, so when the owner or the runbook in force differs
between the event and `as_of`, both are admitted and both are stated, labelled. A reference
after `as_of` is ignored: at `as_of` that moment has not happened yet.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from pydantic import BaseModel, Field

from investigator.evidence import Evidence, iso_utc

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


ANCHOR_ORDER: tuple[AnchorEvent, ...] = tuple(AnchorEvent)

_ALERT_WORDS = re.compile(
    r"\bwhen (it|the alert|the page|\w+) (fired|paged|triggered)\b|\b(alert|page) fired\b|告警时",
    re.IGNORECASE,
)
_RELEASE_WORDS = re.compile(
    r"\b(at|during|when) (the )?(release|deploy(ment)?|rollout)\b|"
    r"\bwhen (the )?(release|deploy(ment)?|rollout) (went out|finished|happened|landed)\b|"
    r"\bwhen it (was )?(released|deployed|shipped)\b|发布时|上线时|部署时",
    re.IGNORECASE,
)
_INCIDENT_WORDS = re.compile(
    r"\b(at the time of|during) the (incident|outage)\b|"
    r"\bwhen the (incident|outage) (started|began|happened)\b|事发时|故障时|事故时",
    re.IGNORECASE,
)
_EVENT_WORDS = re.compile(
    r"(?<!since )\bthen\b|\bat (that|the) (moment|time|point)\b|\bat the time\b|"
    r"\bback then\b|\bwhen it (happened|started|broke|fired)\b|\bduring the (incident|outage)\b|"
    # "when PAY-4097 started", "when the errors began", "as the errors first appeared"
    r"\b(when|as) (the )?([A-Z][A-Z0-9]{1,9}-\d{2,6} |errors? |failures? |problems? )?"
    r"(errors? )?(started|began|first appeared|first showed up|hit|broke out)\b|"
    r"当时|那时|那个时候|彼时|事发时|故障时|事故时|发布时|上线时|告警时",
    re.IGNORECASE,
)
_NOW_WORDS = re.compile(
    r"\b(now|currently|current|today|at present|these days|nowadays)\b|现在|目前|当前|如今",
    re.IGNORECASE,
)
_DATETIME = re.compile(
    r"(?<![\w:.@/-])(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)"
    r"(Z|[+-]\d{2}:?\d{2})?(?![\w-])"
)
# Times relative to a day or a clock the planner does not resolve: "yesterday", "2 hours
# ago", "last night", "on Monday", 昨天. A question with them is answered at `as_of` and says
# so (`InvestigationResult.unresolved_time_words`), instead of quietly meaning "now".
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_UNIT = r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?)"
_RELATIVE_WORDS = re.compile(
    r"\b(?:(?:the )?day before yesterday|yesterday|tonight|last night|earlier today|"
    r"this (?:morning|afternoon|evening)|"
    r"last (?:week|weekend|month|year|night|" + _WEEKDAY + r")|"
    r"(?:on |this |last )?" + _WEEKDAY + r"|"
    r"(?:\d+|an?|one|two|three|four|five|six|ten|a few|a couple of|several)\s+"
    + _UNIT
    + r"\s+ago)\b|"
    r"前天|昨天|昨晚|今早|今天早上|上周|上个月|(?:\d+|几|半)\s*(?:秒|分钟|个?小时|天|周)前",
    re.IGNORECASE,
)
_ERROR_CODE = re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d{2,6}\b")
_DATE_AFTER_PREPOSITION = re.compile(
    r"\b(?:on|as of|as at|at|by|until)\s+(\d{4}-\d{2}-\d{2})(?![\w:-])", re.IGNORECASE
)


class TimeReferences(BaseModel):
    """What a question's time words refer to (before anything is retrieved)."""

    event: AnchorEvent | None = None
    # The words that made it event-anchored (for the claim's "why").
    event_words: str | None = None
    # Error codes the question names (the anchor is their first error).
    codes: list[str] = Field(default_factory=list)
    now: bool = False
    explicit: list[datetime] = Field(default_factory=list)
    # Relative time words it does not resolve ("yesterday", "2 hours ago"), as written.
    unresolved: list[str] = Field(default_factory=list)

    @property
    def anchored(self) -> bool:
        """Whether the question asks about some time other than `as_of`."""
        return self.event is not None or bool(self.explicit)


def _parse_explicit(date: str, time_text: str | None, zone: str | None) -> datetime | None:
    text = date + ("T" + time_text if time_text else "T00:00:00")
    if zone:
        text += "+00:00" if zone == "Z" else zone
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def time_references(question: str) -> TimeReferences:
    """The time references of a question (pure; English and Chinese)."""
    explicit: list[datetime] = []
    for date, clock, zone in _DATETIME.findall(question):
        parsed = _parse_explicit(date, clock, zone or None)
        if parsed is not None:
            explicit.append(parsed)
    for date in _DATE_AFTER_PREPOSITION.findall(question):
        parsed = _parse_explicit(date, None, None)
        if parsed is not None and not any(e.date() == parsed.date() for e in explicit):
            explicit.append(parsed)
    event: AnchorEvent | None = None
    words: str | None = None
    for kind, pattern in (
        (AnchorEvent.ALERT, _ALERT_WORDS),
        (AnchorEvent.RELEASE, _RELEASE_WORDS),
        (AnchorEvent.INCIDENT_START, _INCIDENT_WORDS),
        (AnchorEvent.FIRST_ERROR, _EVENT_WORDS),
    ):
        found = pattern.search(question)
        if found:
            event, words = kind, found.group(0)
            break
    return TimeReferences(
        event=event,
        event_words=words,
        codes=sorted(set(_ERROR_CODE.findall(question))),
        now=bool(_NOW_WORDS.search(question)),
        explicit=sorted(set(explicit)),
        unresolved=list(dict.fromkeys(m.group(0) for m in _RELATIVE_WORDS.finditer(question))),
    )


class ReferenceTime(BaseModel):
    """One instant a time-bound claim is about, and why."""

    at: datetime
    label: str  # "the first PAY-4097 error", "as_of"
    why: str  # "the question says 'then'"
    kind: str  # "event" | "explicit" | "as_of"

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


def _code(ev: Evidence) -> str:
    code = ev.context.get("code") or ev.context.get("error_code")
    return code.removeprefix("err:") if isinstance(code, str) else (ev.name or ev.element_id)


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
    return min(seen) if seen else None


def _release(
    evidence: Sequence[Evidence], before: datetime, services: Sequence[str]
) -> tuple[datetime, str] | None:
    releases = [
        (t, ev.name or ev.element_id)
        for ev in evidence
        if ev.type == "Deployment"
        and "deployment_time" in ev.evidence_types
        and (not services or ev.context.get("service") in (None, *services))
        and (t := instant(ev, DEPLOY_TIME_KEYS)) is not None
        and t <= before
    ]
    return max(releases) if releases else None


def _incident_start(evidence: Sequence[Evidence], as_of: datetime) -> tuple[datetime, str] | None:
    starts = [
        (t, ev.name or ev.element_id)
        for ev in evidence
        if ev.type == "Incident" and (t := instant(ev, ("started_at",))) is not None and t <= as_of
    ]
    return min(starts) if starts else None


def instant_of(raw: object) -> datetime | None:
    """A zoned ISO-8601 text (or datetime) as a datetime; anything else None."""
    if isinstance(raw, datetime):
        return raw if raw.tzinfo is not None else None
    if not isinstance(raw, str):
        return None
    try:
        parsed = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def _alert(
    evidence: Sequence[Evidence], as_of: datetime, known: Sequence[tuple[datetime, str]] = ()
) -> tuple[datetime, str] | None:
    fired = [(t, name.removeprefix("alert:")) for t, name in known if t <= as_of]
    fired += [
        (t, str(ev.context.get("alert") or ev.name or ev.element_id).removeprefix("alert:"))
        for ev in evidence
        if (ev.type == "FIRED_ON" or "fired_at" in ev.context or "fired_at" in ev.props)
        and (t := instant(ev, ALERT_TIME_KEYS)) is not None
        and t <= as_of
    ]
    return min(fired) if fired else None


def reference_times(
    refs: TimeReferences,
    evidence: Sequence[Evidence],
    *,
    as_of: datetime,
    first_seen: datetime | None = None,
    services: Sequence[str] = (),
    alerts_fired: Sequence[tuple[datetime, str]] = (),
) -> list[ReferenceTime]:
    """The instants other than `as_of` that the question's time words resolve to (sorted).

    Resolved from the evidence found so far (pure): an event not yet found, or after
    `as_of`, resolves to nothing, and the question is then answered at `as_of`.
    """
    out: list[ReferenceTime] = []
    for at in refs.explicit:
        if at <= as_of:
            out.append(
                ReferenceTime(
                    at=at, label="the time named in the question", why="explicit", kind="explicit"
                )
            )
    if refs.event is not None:
        err = first_error(evidence, as_of, first_seen, refs.codes)
        found: dict[AnchorEvent, tuple[datetime, str] | None] = {
            AnchorEvent.FIRST_ERROR: err,
            AnchorEvent.RELEASE: _release(evidence, err[0] if err else as_of, services),
            AnchorEvent.INCIDENT_START: _incident_start(evidence, as_of),
            AnchorEvent.ALERT: _alert(evidence, as_of, alerts_fired),
        }
        order = [refs.event, *(k for k in ANCHOR_ORDER if k is not refs.event)]
        for kind in order:
            hit = found[kind]
            if hit is None:
                continue
            at, name = hit
            label = {
                AnchorEvent.FIRST_ERROR: f"the first {name} error"
                if name != "error"
                else "the first error",
                AnchorEvent.RELEASE: f"the release {name}",
                AnchorEvent.INCIDENT_START: f"the start of incident {name}",
                AnchorEvent.ALERT: f"the {name} alert",
            }[kind]
            out.append(
                ReferenceTime(
                    at=at, label=label, why=f"the question says {refs.event_words!r}", kind="event"
                )
            )
            break
    unique = {(r.at, r.kind): r for r in out}
    return sorted(unique.values(), key=lambda r: (r.at, r.kind))


def holds_at(ev: Evidence, at: datetime) -> bool:
    """Whether a state record is valid at `at` (`valid_from <= at < valid_to`)."""
    return (ev.valid_from is None or ev.valid_from <= at) and (
        ev.valid_to is None or ev.valid_to > at
    )
