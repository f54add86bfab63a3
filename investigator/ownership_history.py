"""Owners over a period, and corrections of what was recorded about them.

"Who owned X between A and B?" and "How did ownership of X change over time?" ask for every
owner in a period (the second: the whole history up to as_of), each with its valid interval,
not for the owner at one instant. The gate admits every ownership record valid at some time
in the period (`GatePolicy.ownership_period`) and the claims state each by its interval.

A correction is a later record of OWNS edges that changed who was recorded as the owner for
a time already past when it was recorded (the owner on 2026-11-11 was team:beta as first
recorded, team:alpha after a correction of 2026-12-04): an answer given before the
correction, or with `--known-at` before it, named another owner. A record that only closes
an open interval at a time still to come when it was recorded (ownership moves on the 20th,
recorded on the 19th) corrects nothing.

Both kinds of question read the records with one bounded read per service,
`ownership_records` (every record of the service's OWNS edges known at the run's known_at,
superseded and retracted ones included; tenant, ACL and purpose in Cypher like any read,
recorded, replayable), whatever the number of its edges; the owners of an alert or a
runbook version (`owners_of`) by `owners_of_records`, one read per alert or runbook version.

A history reads it always: a retracted record (its tombstone, `status = 'retracted'`) is
invisible to the current reads, so only this read can show an ownership that was recorded
and then retracted; the answer names it, citing the tombstone ("team:a was recorded as the
owner from A to B; that record was retracted at R: reason"). A tombstone keeps the ACL of
the record it ends, so a subject who may not read the record never learns it existed.

A question about one instant ("Who owned tps-report then?") is told of a correction of who
was recorded at that instant, and, when no owner holds at it, of a retracted record that
did. It reads the records of a service (the rule, `services_to_check`):
- when no current record of the service holds at an instant asked (the answer has no owner
  for it: a retraction is the one record that can say why), or
- when a current record was rewritten (version above 1) after an instant asked: a record
  written at R can only have changed what was recorded for instants before R (a later one
  was still to come: a plan, not a correction). A handover recorded before it happens
  (beta's end and gamma's start written on the 19th for the 20th) rewrote nothing for an
  instant asked after the 19th, so it costs no read there.
As_of is an instant asked too; at a now that follows every record written, nothing can have
been corrected, so "Who owns X?" needs no read. The owners of an alert or a runbook version
(`owners_of`) are read the same way, by `owners_of_records`, under the same rule.

A question from a team's side (`owned_by_team`) reads every record of the team's OWNS edges
(`owned_by_team_records`), whatever its time: only they show a record of the team that was
retracted or corrected. The answer names the retractions at the times it states, without
saying whether anyone else owned the thing then (the team side did not read that).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel, ConfigDict

from cypher_templates.plan import PlanStep
from investigator.context_graph.models import ToolCallRecord
from investigator.evidence import Evidence, as_held, iso_utc
from investigator.lazy_pattern import LazyPattern
from investigator.rubric import Intent, MissingEvidence
from investigator.timeline import EARLIEST, UnplacedTime, time_references

# Words that ask for the history of ownership rather than the owner at one time.
HISTORY_WORDS = LazyPattern(
    r"\bowner(?:ship|s)?\s+history\b"
    r"|\bhistory\s+of\s+(?:the\s+)?owner(?:ship|s)?\b"
    r"|\bownership\s+changes\b"
    r"|\bhow\s+(?:did|has|have)\s+(?:the\s+)?owner(?:ship|s)?\b[^?.!]*?\bchanged?\b"
    r"|\bowner(?:ship|s)?\b[^?.!]*?\bchanged\b"
    r"|\b(?:owner(?:ship|s)?|own(?:ed|s)?)\b[^?.!]*?\bover\s+time\b"
    r"|\b(?:previous|past|former|earlier|all(?:\s+the)?|every)\s+owners\b"
    r"|\b(?:who|which\s+teams?)\s+(?:has|have)\s+(?:ever\s+)?owned\b",
    re.IGNORECASE,
)


# A question from the team's side: what a team owned ("What did team:payments own on ...?",
# "Which services did Finance Eng own?", "services owned by the payments team", "which
# services belong to payments-core", "payments-core team services").
_KIND = r"(?:services?|alerts?|runbooks?)"
# Where the team's words end: a time word, or the end of the clause.
_WORDS_END = (
    r"(?=\s+(?:on|at|in|during|between|from|since|before|after|until|then|as|now|for)\b|[?.!,]|$)"
)
_TEAM_SIDE = LazyPattern(
    r"\bwhat\s+(?:else\s+)?(?:did|does|do|has|have)\s+(?P<a>[^?.!]+?)\s+own(?:ed)?\b"
    r"|\b(?:which|what)\s+(?:" + _KIND + r"|things|systems)\s+(?:did|does|do|has|have)\s+"
    r"(?P<b>[^?.!]+?)\s+own(?:ed)?\b"
    r"|\b(?:" + _KIND + r"|what|everything|things)\s+(?:were\s+|are\s+|was\s+|is\s+)?"
    r"owned\s+by\s+(?P<c>[^?.!,]+?)"
    + _WORDS_END
    + r"|\b(?:show|list|tell\s+me)\s+(?:me\s+)?what\s+(?P<d>[^?.!]+?)\s+(?:has\s+|had\s+)?owned\b"
    r"|\b(?:" + _KIND + r"|what|things|systems)\s+(?:that\s+)?(?:did\s+|does\s+|do\s+)?"
    r"belong(?:s|ed)?\s+to\s+(?P<e>[^?.!,]+?)"
    + _WORDS_END
    + r"|(?:^\s*(?:(?:show|list|give)(?:\s+me)?\s+|(?:what|which)\s+are\s+)?(?:the\s+)?|\bthe\s+)"
    r"(?!(?:is|are|was|were|do|does|did|who|what|which|how|why|when)\b)"
    r"(?P<f>(?!the\b)[\w:.-]+(?:\s+(?!the\b)[\w:.-]+){0,3}?)"
    r"\s+team(?:'s)?\s+"
    + _KIND
    + r"\b"
    + _WORDS_END
    + r"|\b"
    + _KIND
    + r"\s+of\s+(?P<g>team[\s:][^?.!,\s]+|(?:the\s+)?[^?.!,]+?\s+team)\b"
    r"|\b(?:what|which\s+" + _KIND + r")\s+(?:is|are|was|were)\s+(?P<h>[^?.!]+?)\s+"
    r"responsible\s+for\b"
    # A team named alone: "team payments-core", "team:payments-core?".
    r"|^\s*(?P<i>team[\s:]+[\w.-]+(?:\s+[\w.-]+)?)\s*[?.!]?\s*$",
    re.IGNORECASE,
)
_TEAM_FILLER = LazyPattern(r"^(?:the|our|a)\s+|^team\s+(?!team\b)|\s+team$|'s$", re.IGNORECASE)


# Who "what is X responsible for" asks about is a team only when X reads as one: not a
# record of another kind ("the release", "this alert") nor a phrase led by an article,
# unless it ends in "team" ("the payments team").
_RESPONSIBLE_TEAM = LazyPattern(
    r"(?!(?:the|a|an|this|that|these|those|it|our|my|their)\b(?!.*\bteam$))"
    r"(?!(?:releases?|deploy(?:s|ments?)?|changes?|incidents?|alerts?|errors?|outages?|"
    r"services?|runbooks?|polic(?:y|ies)|rollouts?|bugs?|failures?|commits?)\b)",
    re.IGNORECASE,
)


def asked_team(question: str) -> str | None:
    """The words that name the team a question asks about from its side ("team:payments",
    "Finance Eng", "payments" for "the payments team"), or None when it asks no such thing."""
    found = _TEAM_SIDE.search(question)
    if found is None:
        return firing_team(question)  # "which alerts fired for the payments team?"
    words = next(g for g in found.groups() if g is not None).strip()
    if found["h"] is not None and not _RESPONSIBLE_TEAM.match(words):
        return None  # "What was the release responsible for?": a record, not a team
    previous = None
    while previous != words:  # "the payments team" -> "payments"
        previous, words = words, _TEAM_FILLER.sub("", words).strip()
    if not words or words.lower() in {"it", "they", "we", "you", "i", "he", "she", "who"}:
        return None
    return words[:200]


# "Which alerts fired for the payments team?", "alerts of team:payments-core yesterday", "what
# paged the Payments Core team?": alert firings asked for a team (h33b-firings). The team is
# asked about from its side: the firings are those on the services it owned at each firing.
_TEAM_WORD = r"(?!(?:the|for|of|on|our|a|an|my|team|yesterday|today|now)\b)[\w.:-]+"
_FIRING_FOR_TEAM = LazyPattern(
    r"\b(?:fired|fires|firing|fire|paged|went\s+off)\b[^?.!]{0,40}?"
    r"\b(?:for|of|on|to|owned\s+by|belonging\s+to)\s+(?:the\s+|our\s+)?"
    r"(?:(?P<a>team:[\w.-]+)|team\s+(?P<b>" + _TEAM_WORD + r")|"
    r"(?P<c>" + _TEAM_WORD + r"(?:\s+" + _TEAM_WORD + r"){0,2}?)\s+team)\b",
    re.IGNORECASE,
)


def firing_team(question: str) -> str | None:
    """The words naming the team an alert-firing question asks for ("payments" for "which
    alerts fired for the payments team?", "team:payments-core"), or None."""
    found = _FIRING_FOR_TEAM.search(question)
    if found is None:
        return None
    return next(g for g in found.groups() if g is not None).strip()[:200]


def asks_team_firings(question: str, intents: Iterable[Intent | str]) -> bool:
    """Whether an alert-firing question asks for a team's firings (`firing_team`)."""
    return Intent.ALERT_FIRING.value in {str(i) for i in intents} and (
        firing_team(question) is not None
    )


# The kinds a question from a team's side asks for ("Which services did X own?", "alerts
# owned by X", "services that belong to X", "X team services"); "What did X own?" asks for
# every kind.
_ASKED_KINDS = LazyPattern(
    r"\b(?:which|what)\s+(?P<a>" + _KIND + r")\s+(?:did|does|do|has|have|is|are|was|were)\b"
    r"|\b(?P<b>" + _KIND + r")\s+(?:that\s+)?(?:were\s+|are\s+|was\s+|is\s+|did\s+|does\s+|do\s+)?"
    r"(?:owned\s+by|belong(?:s|ed)?\s+to|of\s+(?:the\s+)?team)\b"
    r"|\bteam(?:'s)?\s+(?P<c>" + _KIND + r")\b"
    r"|\b(?P<d>" + _KIND + r")\s+of\s+[^?.!,]+?\s+team\b",
    re.IGNORECASE,
)


def asked_kinds(question: str) -> frozenset[str] | None:
    """The kinds of thing ('service', 'alert', 'runbook') a question from a team's side asks
    for ("Which services did Finance Eng own?": services), or None for every kind."""
    found = _ASKED_KINDS.search(question)
    if found is None:
        return None
    word = next(g for g in found.groups() if g is not None).lower()
    return frozenset({word.removesuffix("s")})


class OwnershipPeriod(BaseModel):
    """The period a question asks the owners over: [start, end], end at most as_of."""

    model_config = ConfigDict(frozen=True)

    start: datetime | None  # None: since the first record (the whole history)
    end: datetime
    words: str  # the question's words that ask for it
    # How a named period's ends were placed ("2026-07-23T10:00:00Z to ...; no zone given:
    # read as UTC"); None for a whole history.
    placed: str | None = None

    @property
    def why(self) -> str:
        """`the question says '<words>'[: <placed>]`, as a claim says why."""
        said = f"the question says {self.words!r}"
        return f"{said}: {self.placed}" if self.placed else said

    def overlaps(self, ev: Evidence) -> bool:
        """Whether a record's valid interval holds some instant of the period."""
        return (ev.valid_from is None or ev.valid_from <= self.end) and (
            ev.valid_to is None or self.start is None or ev.valid_to > self.start
        )

    @property
    def bounds(self) -> tuple[datetime, datetime]:
        """(start, end) for the gate, the start of a whole history the earliest time."""
        return (self.start or EARLIEST, self.end)


_MONTH_NAMES = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH_WORD = r"(?:" + "|".join(f"{m}|{m[:3]}" for m in _MONTH_NAMES) + r")"
# "between March and July", "from March 2025 to July 2025": two months, days not written.
_MONTH_RANGE = LazyPattern(
    r"\b(?:between|from)\s+(?P<m1>" + _MONTH_WORD + r")(?:\s+(?P<y1>\d{4}))?\s+"
    r"(?:and|to|until|till|through)\s+(?P<m2>" + _MONTH_WORD + r")(?:\s+(?P<y2>\d{4}))?\b",
    re.IGNORECASE,
)
# "since then", "since that time": a period from an event the owner reads cannot place.
SINCE_THEN = LazyPattern(r"\bsince\s+(?:then|that\s+(?:time|moment|point|day))\b", re.IGNORECASE)


def _month_number(word: str) -> int:
    return [m[:3] for m in _MONTH_NAMES].index(word.lower()[:3]) + 1


def _month_period(question: str, as_of: datetime) -> OwnershipPeriod | None:
    """ "between March and July": from the first month's first instant to the last month's
    last second, UTC; a year not written is as_of's (the start's year before when the first
    month comes after the last), and the claims say so."""
    found = _MONTH_RANGE.search(question)
    if found is None:
        return None
    m1, m2 = _month_number(found["m1"]), _month_number(found["m2"])
    notes = []
    y2 = int(found["y2"]) if found["y2"] else int(found["y1"]) if found["y1"] else as_of.year
    y1 = int(found["y1"]) if found["y1"] else y2 - 1 if m1 > m2 else y2
    if not found["y1"] and not found["y2"]:
        notes.append(
            f"no year given: the year of as_of, {y2}"
            + ("" if y1 == y2 else f", its first month in the year before, {y1}")
        )
    elif not found["y1"] or not found["y2"]:
        notes.append(f"a year given for one month only: read as {y1} to {y2}")
    start = datetime(y1, m1, 1, tzinfo=UTC)
    after = datetime(y2 + (m2 == 12), m2 % 12 + 1, 1, tzinfo=UTC)
    end = after - timedelta(seconds=1)
    if start > as_of or end < start:
        return None
    notes.append("whole months, no zone given: read as UTC")
    placed = f"{iso_utc(start)} to {iso_utc(end)}; " + "; ".join(notes)
    return OwnershipPeriod(start=start, end=min(end, as_of), words=found.group(0), placed=placed)


def asked_ownership_period(question: str, as_of: datetime) -> OwnershipPeriod | None:
    """The period the question asks the owners over: a period it names ("between A and B",
    "between March and July", its end at most as_of; none when it starts after as_of), else
    its whole history up to as_of when it asks for one ("ownership history", "how did
    ownership change"), else None."""
    named = asked_named_period(question, as_of)
    if named is not None:
        return named
    asked = HISTORY_WORDS.search(question)
    if asked is None:
        return None
    return OwnershipPeriod(start=None, end=as_of, words=asked.group(0))


# How a month's two ends are read (timeline's month period): one note for the whole month.
_MONTH_END_READING = LazyPattern(r"^the month's (?:first instant|last second)")


def asked_named_period(question: str, as_of: datetime) -> OwnershipPeriod | None:
    """The period a question names ("between A and B", "between March and July"), its end at
    most as_of; None when it names none or one that starts after as_of."""
    months = _month_period(question, as_of)
    if months is not None:
        return months
    period = time_references(question, as_of).period
    if period is not None:
        start, end = period
        if start.at > as_of:
            return None  # not yet happened: the Time line says so, the answer is at as_of
        # What the readings add to the two instants ("no zone given", whose year), once: a
        # month's two ends read alike ("the whole month, no year written: ...").
        notes = [
            _MONTH_END_READING.sub("the whole month", part)
            for n in (start, end)
            for part in (n.reading or "").split("; ")
            if part and not part.startswith(("the start of the period", "the end of the period"))
        ]
        placed = f"{iso_utc(start.at)} to {iso_utc(end.at)}" + "".join(
            f"; {note}" for note in dict.fromkeys(notes)
        )
        return OwnershipPeriod(
            start=start.at,
            end=min(end.at, as_of),
            # "in July" is both ends' words: said once, not 'in July in July'.
            words=" ".join(dict.fromkeys((start.words, end.words))),
            placed=placed,
        )
    return None


def _owner(ev: Evidence) -> str:
    """The team of an OWNS record (`team:a OWNS svc:b`, as the templates state it)."""
    team = ev.context.get("team")
    return team if isinstance(team, str) else ev.content.split(" ", 1)[0]


def _owned(ev: Evidence) -> str:
    """What an OWNS record says is owned (its statement's last word)."""
    return ev.content.rsplit(" ", 1)[-1]


# One read of every record of a service's OWNS edges, retracted ones included.
RECORDS_TEMPLATE = "ownership_records"
# The owners of an alert or a runbook version, and the same read of every record of them.
ENTITY_OWNERS_TEMPLATE = "owners_of"
ENTITY_RECORDS_TEMPLATE = "owners_of_records"
# The reads of a service's owners a history or a single-time question makes.
OWNER_READS = ("ownership_over_time", "ownership_in_period")
# What a team owned, asked from its side, and the same read of every record of it.
TEAM_OWNS_TEMPLATE = "owned_by_team"
TEAM_RECORDS_TEMPLATE = "owned_by_team_records"


def read_services(calls: Sequence[ToolCallRecord]) -> set[str]:
    """The services whose owners the run read (a history question reads all their records)."""
    return {
        str(call.params["service_id"])
        for call in calls
        if call.template_id in OWNER_READS and "service_id" in call.params
    }


def read_entities(calls: Sequence[ToolCallRecord]) -> set[str]:
    """The alerts and runbook versions whose own owners the run read (`owners_of`): a history
    or period question reads all their records too, as a service's."""
    return {
        str(call.params["entity_id"])
        for call in calls
        if call.template_id == ENTITY_OWNERS_TEMPLATE and "entity_id" in call.params
    }


def read_teams(calls: Sequence[ToolCallRecord]) -> set[str]:
    """The teams whose OWNS records the run read from the team's side (`owned_by_team`):
    every record of each is read too, whatever the question's time (a retraction or a
    correction of one of them is known only from there)."""
    return {
        str(call.params["team_id"])
        for call in calls
        if call.template_id == TEAM_OWNS_TEMPLATE and "team_id" in call.params
    }


def services_to_check(rows: dict[str, list[Evidence]], instants: Iterable[datetime]) -> set[str]:
    """The services (`rows`: each one's current OWNS records, as read) whose every record a
    single-time question reads (the rule in the module docstring): no current record holds
    at an instant asked, or one was rewritten (version above 1) after an instant asked."""
    asked = sorted(set(instants))
    out = set()
    for service, records in rows.items():
        owns = [ev for ev in records if _is_owns(ev)]
        for at in asked:
            if not _holding(owns, at) or any(
                ev.version > 1 and ev.recorded_at is not None and ev.recorded_at > at for ev in owns
            ):
                out.add(service)
    return out


def _is_owns(ev: Evidence) -> bool:
    return "ownership" in ev.evidence_types and ev.kind == "relationship"


def records_steps(
    services: Iterable[str], entities: Iterable[str] = (), teams: Iterable[str] = ()
) -> list[PlanStep]:
    """One `ownership_records` read per service, then one `owners_of_records` read per alert
    or runbook version, then one `owned_by_team_records` read per team (each sorted)."""
    return [
        *(
            PlanStep(
                template_id=RECORDS_TEMPLATE,
                params={"service_id": service},
                evidence_type="ownership",
            )
            for service in sorted(set(services))
        ),
        *(
            PlanStep(
                template_id=ENTITY_RECORDS_TEMPLATE,
                params={"entity_id": entity},
                evidence_type="ownership",
            )
            for entity in sorted(set(entities))
        ),
        *(
            PlanStep(
                template_id=TEAM_RECORDS_TEMPLATE,
                params={"team_id": team},
                evidence_type="ownership",
            )
            for team in sorted(set(teams))
        ),
    ]


def whole_records(
    rows: Sequence[Sequence[Evidence]], calls: Sequence[ToolCallRecord]
) -> list[Evidence]:
    """The rows of the `ownership_records` reads, less those of a service whose read its row
    cap cut: a record missing from the chain could make a correction seem to be (no
    correction is said of it, as without the read)."""
    cut = {
        str(call.params.get("service_id", call.params.get("entity_id")))
        for call in calls
        if call.template_id in (RECORDS_TEMPLATE, ENTITY_RECORDS_TEMPLATE) and call.truncated
    }
    # A team's read cut by its row cap: none of its records (a missing version could make
    # a retraction or a correction seem to be).
    cut_teams = {
        str(call.params.get("team_id"))
        for call in calls
        if call.template_id == TEAM_RECORDS_TEMPLATE and call.truncated
    }
    return [
        ev
        for read in rows
        for ev in read
        if _owned(ev) not in cut and ev.context.get("asked_team") not in cut_teams
    ]


def corrections_at(records: Sequence[Evidence], at: datetime) -> list[OwnershipCorrection]:
    """The corrections of who was recorded as the owner at the instant `at`, by what is
    owned and then oldest first (each record of the OWNS edges known at the run's known_at)."""
    return sorted(
        (
            c
            for c in ownership_corrections(records)
            if (c.start is None or c.start <= at) and at < c.end
        ),
        key=lambda c: (c.owned, c.corrected_at),
    )


# The template that reads the owners of a period (newest first, row-capped).
PERIOD_TEMPLATE = "ownership_in_period"


def cut_histories(calls: Sequence[ToolCallRecord]) -> list[tuple[str, int]]:
    """(service, rows read) of each service whose owners over the period were more than its
    read's row limit (a truncated `ownership_in_period` call), sorted; not when a read of
    all its OWNS records (`ownership_over_time`) held them all."""
    whole = {
        str(call.params["service_id"])
        for call in calls
        if call.template_id == "ownership_over_time" and not call.truncated and not call.error
    }
    return sorted(
        {
            (str(call.params["service_id"]), call.row_count)
            for call in calls
            if call.template_id == PERIOD_TEMPLATE
            and call.truncated
            and call.params["service_id"] not in whole
        }
    )


def history_cut_at(
    service: str, owners: Sequence[Evidence], period: OwnershipPeriod, read: int
) -> datetime | None:
    """Where a service's history read newest first (`read` records) was cut: the start of
    the oldest record read (None when none read has a start)."""
    starts = sorted(
        (
            ev.valid_from
            for ev in owners
            if _owned(ev) == service and ev.valid_from is not None and period.overlaps(ev)
        ),
        reverse=True,
    )
    return starts[min(read, len(starts)) - 1] if starts else None


def history_cut_text(
    service: str, owners: Sequence[Evidence], period: OwnershipPeriod, read: int
) -> str:
    """What a history cut by the row cap lacks and how to ask for it. The period's records
    are read newest first (`read` of them), so the cut is the start of the oldest one read:
    those that start before it may be missing."""
    cut_at = history_cut_at(service, owners, period, read)
    if cut_at is None:
        return (
            f"the owners of {service} in the period are more than the {read} records read at "
            "once, and none read has a start: ask for a narrower period"
        )
    cut = iso_utc(cut_at)
    ask = (
        f"the same question with --as-of {cut}"
        if period.start is None
        else f"'between {iso_utc(period.start)} and {cut}'"
    )
    return (
        f"the owners of {service} in the period are more than the {read} records read at once "
        f"(newest first): the history is cut at {cut}, and owners before then may be missing; "
        f"ask for the rest with {ask}"
    )


class OwnershipCorrection(BaseModel):
    """Who was recorded as the owner for [start, end) before `corrected_at`, and since."""

    model_config = ConfigDict(frozen=True)

    owned: str
    corrected_at: datetime
    start: datetime | None  # None: from the earliest time
    end: datetime  # at most `corrected_at`: what was still to come then was no correction
    before: list[str]
    after: list[str]
    # The edge keys whose records held in that span, before or after: the claim's evidence.
    keys: list[str]

    def sentence(self, *, team_side: bool = False) -> str:
        """`the owner of X was corrected at T: recorded as A until then, B since (...)`: one
        wording for the investigation's claim and the runbook card's Owner line. Read from a
        team's side (`team_side`), no team since says only that this team no longer owns it."""
        was = ", ".join(self.before) if self.before else f"not {', '.join(self.after)}"
        since = ", ".join(self.after) if self.after else (f"not {was}" if team_side else "no owner")
        return (
            f"the owner of {self.owned} was corrected at {iso_utc(self.corrected_at)}: recorded "
            f"as {was} until then, {since} since (asked with a known_at before the correction, "
            f"the answer is {was})"
        )


def _live(
    records: Sequence[tuple[Evidence, datetime | None]], at: datetime, *, just_before: bool
) -> list[Evidence]:
    """The active records current at transaction time `at` (or just before it)."""
    out = []
    for ev, superseded in records:
        if ev.status != "active" or ev.recorded_at is None:
            continue
        known = ev.recorded_at < at if just_before else ev.recorded_at <= at
        current = superseded is None or (superseded >= at if just_before else superseded > at)
        if known and current:
            out.append(ev)
    return out


def _holding(records: Sequence[Evidence], at: datetime) -> list[Evidence]:
    return [
        ev
        for ev in records
        if (ev.valid_from is None or ev.valid_from <= at)
        and (ev.valid_to is None or at < ev.valid_to)
    ]


def ownership_corrections(
    records: Sequence[Evidence], period: OwnershipPeriod | None = None
) -> list[OwnershipCorrection]:
    """The corrections the records of OWNS edges show (every record of each key known at
    the run's known_at, as `ownership_records` reads them), sorted; only
    those about a span in `period` when given.

    At each time a record was written, the owners it left recorded for each earlier valid
    time are compared with those recorded just before: a span whose owners differ, and for
    which some owner was recorded before, was corrected then (a first record corrects
    nothing; a later span is a plan, not a correction).
    """
    by_key: dict[str, dict[int, Evidence]] = {}
    for ev in records:
        if "ownership" in ev.evidence_types or ev.type == "OWNS":
            by_key.setdefault(ev.element_id, {}).setdefault(ev.version, ev)
    by_owned: dict[str, list[tuple[Evidence, datetime | None]]] = {}
    for versions in by_key.values():
        chain = [versions[v] for v in sorted(versions)]
        for ev, newer in zip(chain, [*chain[1:], None], strict=True):
            superseded = newer.recorded_at if newer is not None else None
            by_owned.setdefault(_owned(ev), []).append((ev, superseded))
    out: list[OwnershipCorrection] = []
    for owned, timed in sorted(by_owned.items()):
        written = sorted({ev.recorded_at for ev, _ in timed if ev.recorded_at is not None})
        for at in written:
            before = _live(timed, at, just_before=True)
            after = _live(timed, at, just_before=False)
            if not before:
                continue  # the first record of who owns it: learned, not corrected
            cuts = {EARLIEST, at}
            for ev in (*before, *after):
                cuts |= {t for t in (ev.valid_from, ev.valid_to) if t is not None and t < at}
            edges = sorted(cuts)
            spans: list[OwnershipCorrection] = []
            for start, end in itertools.pairwise(edges):
                was, now = _holding(before, start), _holding(after, start)
                was_teams, now_teams = (
                    sorted({_owner(e) for e in was}),
                    sorted({_owner(e) for e in now}),
                )
                if was_teams == now_teams or (
                    not was_teams and not _team_record_extended(before, now)
                ):
                    continue
                keys = sorted({e.element_id for e in (*was, *now)})
                last = spans[-1] if spans else None
                # One span cut in two by the end of a record that did not change: merged.
                if last is not None and (last.end, last.before, last.after) == (
                    start,
                    was_teams,
                    now_teams,
                ):
                    merged = sorted({*last.keys, *keys})
                    spans[-1] = last.model_copy(update={"end": end, "keys": merged})
                    continue
                spans.append(
                    OwnershipCorrection(
                        owned=owned,
                        corrected_at=at,
                        start=None if start == EARLIEST else start,
                        end=end,
                        before=was_teams,
                        after=now_teams,
                        keys=keys,
                    )
                )
            out += spans
    if period is not None:
        out = [c for c in out if _span_in(c, period)]
    return sorted(out, key=lambda c: (c.owned, c.start or EARLIEST, c.corrected_at))


def _team_record_extended(before: Sequence[Evidence], now: Sequence[Evidence]) -> bool:
    """Whether a span no owner was recorded for, read from a team's side, became the team's
    by a rewrite of one of its own records known before (its interval moved to cover the
    span): the team's record said it did not own it then, and says so no longer. A first
    record of the team is learned, as on the service side: its own records cannot tell."""
    earlier = {e.element_id for e in before}
    return any(e.context.get("asked_team") and e.element_id in earlier for e in now)


def _span_in(c: OwnershipCorrection, period: OwnershipPeriod) -> bool:
    return (c.start is None or c.start <= period.end) and (
        period.start is None or c.end > period.start
    )


class OwnershipRetraction(BaseModel):
    """An OWNS record retracted as known at the run's known_at: who it said owned what over
    which valid interval, when the retraction was recorded and why; its tombstone is the
    evidence (it keeps the retracted record's ACL, interval and statement)."""

    model_config = ConfigDict(frozen=True)

    owned: str
    team: str
    start: datetime | None  # None: from the earliest time
    end: datetime | None  # None: open
    retracted_at: datetime | None  # the tombstone's recorded_at
    reason: str
    tombstone: Evidence


def ownership_retractions(records: Sequence[Evidence]) -> list[OwnershipRetraction]:
    """The retractions among the records of OWNS edges (`ownership_records`): each key whose
    latest record known is a tombstone (one re-recorded since is not retracted), sorted by
    what is owned, then start, then team."""
    latest: dict[str, Evidence] = {}
    for ev in records:
        if _is_owns(ev) and (
            ev.element_id not in latest or ev.version > latest[ev.element_id].version
        ):
            latest[ev.element_id] = ev
    out = [
        OwnershipRetraction(
            owned=_owned(ev),
            team=_owner(ev),
            start=ev.valid_from,
            end=ev.valid_to,
            retracted_at=ev.recorded_at,
            reason=str(ev.props.get("retraction_reason") or "no reason recorded"),
            tombstone=ev,
        )
        for ev in latest.values()
        if ev.status == "retracted"
    ]
    return sorted(out, key=lambda r: (r.owned, r.start or EARLIEST, r.team, r.tombstone.element_id))


def retractions_in(
    records: Sequence[Evidence], period: OwnershipPeriod
) -> list[OwnershipRetraction]:
    """The retracted OWNS records whose valid interval holds some instant of `period` (a
    team's record of a runbook version: no longer than the version, `as_held`)."""
    return [r for r in ownership_retractions(records) if period.overlaps(as_held(r.tombstone))]


def retractions_unowned_at(
    records: Sequence[Evidence], owners: Sequence[Evidence], at: datetime
) -> list[OwnershipRetraction]:
    """The retracted OWNS records that held at `at` for a service no current owner record
    among `owners` holds at then: why no owner is recorded at that instant."""
    owned_then = {_owned(ev) for ev in _holding([ev for ev in owners if _is_owns(ev)], at)}
    return [
        r
        for r in ownership_retractions(records)
        if r.owned not in owned_then
        and _holding([r.tombstone], at)
        and not r.tombstone.context.get("asked_team")  # the team side's: team_retractions_at
    ]


def unplaced_team_gaps(
    missing: Sequence[MissingEvidence],
    unplaced: Sequence[UnplacedTime],
    team_words: str | None,
    teams: Sequence[str],
    as_of: datetime,
) -> list[MissingEvidence]:
    """A question from a team's side whose time words were not placed ("before the reorg",
    "then" with no first error found) is answered at as_of: a required `ownership` gap per
    phrase says what it owned at the time asked is not known, and why, so a `partial` run
    says what it lacks. A team not linked has its own gap (`no team named ...`)."""
    if team_words is None or not teams:
        return list(missing)
    named = " and ".join(sorted(teams))
    return [
        *missing,
        *(
            MissingEvidence(
                evidence_type="ownership",
                intents=[Intent.OWNERSHIP_AT_TIME.value],
                description=f"the question says {u.words!r}, which is not placed in time "
                f"({u.detail}): what {named} owned then is not known; what it owned at as_of, "
                f"{iso_utc(as_of)}, is stated instead",
                required=True,
            )
            for u in unplaced
        ),
    ]


def team_side_instants(as_of: datetime, named: Iterable[datetime]) -> list[datetime]:
    """The instants a team-side answer states what the team owned at: those the question
    names, else as_of (what it owned at another time than the one asked is not stated)."""
    return sorted(set(named)) or [as_of]


def team_retractions_at(records: Sequence[Evidence], at: datetime) -> list[OwnershipRetraction]:
    """The retracted OWNS records of a team asked about from its side (`owned_by_team_records`)
    that held at `at`: what the team was recorded as owning then, and no longer is. Whether
    another team owned it then is not read, so nothing is said of that."""
    return [
        r
        for r in ownership_retractions(records)
        if r.tombstone.context.get("asked_team") and _holding([as_held(r.tombstone)], at)
    ]


def stated_tombstones(
    records: Sequence[Evidence],
    owners: Sequence[Evidence],
    period: OwnershipPeriod | None,
    instants: Iterable[datetime],
    team_instants: Iterable[datetime] = (),
) -> list[Evidence]:
    """The tombstones an answer cites (they join the pack's evidence): those of the period
    asked, else those that say why no owner is recorded at an instant asked, and those of
    the team asked about from its side at the instants its answer states (`team_instants`)."""
    if period is not None:
        found = retractions_in(records, period)
    else:
        found = [
            *(
                r
                for at in sorted(set(instants))
                for r in retractions_unowned_at(records, owners, at)
            ),
            *(r for at in sorted(set(team_instants)) for r in team_retractions_at(records, at)),
        ]
    unique = {r.tombstone.evidence_id: r.tombstone for r in found}
    return [unique[k] for k in sorted(unique)]


def retraction_text(r: OwnershipRetraction, *, span: bool = True) -> str:
    """`team:a was recorded as the owner of svc:b [from A to B]; that record was retracted at
    R: <reason>` (R: the tombstone's record time)."""
    start = iso_utc(r.start) if r.start else "the first record"
    interval = f" from {start} to {iso_utc(r.end)}" if r.end else f" from {start}, open-ended"
    at = iso_utc(r.retracted_at) if r.retracted_at else "an unknown time"
    return (
        f"{r.team} was recorded as the owner of {r.owned}{interval if span else ''}; that "
        f"record was retracted at {at}: {r.reason}"
    )


def unowned_at(
    owners: Sequence[Evidence], instants: Iterable[datetime]
) -> list[tuple[str, datetime]]:
    """(owned, instant) for each service, alert or runbook version some admitted OWNS record
    names (its context's `service`, or `owned` for `owners_of`) and each instant asked at
    which none of its records admitted holds, sorted. Only what the subject may read is
    admitted, so a record hidden from them counts as absent, as if it never existed."""
    services: dict[str, list[Evidence]] = {}
    for ev in owners:
        service = ev.context.get("service", ev.context.get("owned"))
        if ev.status == "active" and isinstance(service, str):
            services.setdefault(service, []).append(ev)
    return [
        (service, at)
        for service, records in sorted(services.items())
        for at in sorted(set(instants))
        if not _holding(records, at)
    ]


def cut_entity_reads(
    calls: Sequence[ToolCallRecord], cut_at: dict[str, datetime | None]
) -> list[tuple[str, int, datetime | None]]:
    """(alert or runbook version, rows read, latest start read) of each whose `owners_of`
    read its row cap cut (it reads every OWNS record, oldest first: the newest are the ones
    left out; `cut_at` as the loop noted it), sorted."""
    return sorted(
        {
            (entity, call.row_count, cut_at.get(entity))
            for call in calls
            if call.template_id == ENTITY_OWNERS_TEMPLATE and call.truncated and not call.error
            for entity in [str(call.params["entity_id"])]
        },
        key=lambda cut: (cut[0], cut[1]),
    )


def entity_cut_text(entity: str, read: int, cut_at: datetime | None) -> str:
    """What an alert's or runbook version's owners read cut by its row cap lacks: its records
    are read oldest first, so owners recorded to start after the cut may be missing."""
    where = (
        f"the history is cut at {iso_utc(cut_at)}, and owners after then may be missing"
        if cut_at is not None
        else "owners beyond them may be missing"
    )
    return (
        f"the owners of {entity} are more than the {read} records read at once (oldest "
        f"first): {where}; who owned it later is not known from this answer"
    )


def uncovered_in_period(
    owners: Sequence[Evidence], period: OwnershipPeriod, known_from: dict[str, datetime]
) -> list[tuple[str, datetime | None, datetime]]:
    """(owned, start, end) of each stretch of the period at which no admitted active OWNS
    record of a service, alert or runbook version some admitted record names holds (a
    record hidden from the subject counts as absent, as if it never existed), by owned and
    start. A whole history starts at the first record; `known_from[owned]`: a read cut at
    that time (newest first), before which nothing is said; a read cut oldest first is left
    out by the caller. Each stretch is [start, end): the end is the next record's start, or
    the period's end."""
    by_owned: dict[str, list[Evidence]] = {}
    for ev in owners:
        owned = ev.context.get("service", ev.context.get("owned"))
        if ev.status == "active" and _is_owns(ev) and isinstance(owned, str):
            by_owned.setdefault(owned, []).append(ev)
    out: list[tuple[str, datetime | None, datetime]] = []
    for owned, records in sorted(by_owned.items()):
        inside = [ev for ev in records if period.overlaps(ev)]
        if period.start is not None:
            cursor: datetime | None = period.start
        elif inside:
            starts = [ev.valid_from for ev in inside]
            cursor = None if None in starts else min(s for s in starts if s is not None)
        else:
            continue  # a whole history with no record in it: the rubric's gap says so
        if owned in known_from and (cursor is None or cursor < known_from[owned]):
            cursor = known_from[owned]
        for ev in sorted(inside, key=lambda e: (e.valid_from is not None, e.valid_from)):
            if ev.valid_from is not None and cursor is not None and ev.valid_from > cursor:
                out.append((owned, cursor, ev.valid_from))
            if ev.valid_to is None:
                cursor = period.end
                break
            if cursor is None or ev.valid_to > cursor:
                cursor = ev.valid_to
        if cursor is not None and cursor < period.end:
            out.append((owned, cursor, period.end))
    return out
