"""Which incident "the incident" means in a question that names no incident and no service.

"Was the deployment related to the incident?" names no record: the words that would link one
are missing. The incident meant is the one the subject may read that was open at as_of, or,
with none open, the one that had started by then; when several fit, the question is
ambiguous: the report names them and asks for one, never picking one silently.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel, Field

from cypher_templates.executor import TemplateRow
from cypher_templates.plan import PlanStep
from investigator.evidence import iso_utc
from investigator.timeline import instant_of

# A bare reference: "the incident", "this outage", "the current incident" (not "the
# payments incident", whose own words can link it).
_THE_INCIDENT = re.compile(
    r"\b(?:the|this|that)\s+(?:(?:current|ongoing|latest|last|recent)\s+)?(?:incident|outage)\b",
    re.IGNORECASE,
)
# The navigation step that lists the incidents (planner.NAV_PREFIX + a name).
THE_INCIDENT_LOOKUP = "nav-the-incident"
# The candidates named when several fit (the template returns at most the step's limit).
LOOKUP_LIMIT = 5


# Any word of an incident ("the payments incident", "the outage", "its postmortem").
_INCIDENT_WORD = re.compile(r"\b(?:incident|outage|postmortem)s?\b", re.IGNORECASE)


def speaks_of_incident(question: str) -> bool:
    """Whether the question speaks of an incident at all (named, bare or by its words)."""
    return _INCIDENT_WORD.search(question) is not None


def the_incident_words(question: str) -> str | None:
    """The words of a bare reference to an incident ("the incident", "the outage"), if any."""
    found = _THE_INCIDENT.search(question)
    return found.group(0) if found else None


def the_incident_step(at: datetime) -> PlanStep:
    """The round-one step listing the incidents started by `at`, open ones first."""
    return PlanStep.model_validate(
        {
            "step_id": THE_INCIDENT_LOOKUP,
            "template_id": "incidents_at",
            "params": {"at": at.isoformat()},
            "evidence_type": "incident_report",
            "limit": LOOKUP_LIMIT,
        }
    )


class IncidentCandidate(BaseModel):
    """An incident the words could mean."""

    incident_id: str
    name: str | None = None
    started_at: datetime | None = None
    resolved_at: datetime | None = None
    open: bool

    def describe(self) -> str:
        """`inc:X (TPS reports failing, 2026-11-11T10:02:00Z to 2026-11-11T11:00:00Z)`."""
        start = iso_utc(self.started_at) if self.started_at else "?"
        end = iso_utc(self.resolved_at) if self.resolved_at else "open"
        label = f"{self.name}, " if self.name and self.name != self.incident_id else ""
        return f"{self.incident_id} ({label}{start} to {end})"


class IncidentReading(BaseModel):
    """How the question's bare "the incident" was read: the incident taken, or why none."""

    words: str
    taken: str | None = None
    # open_at_as_of | only_before_as_of | several_open | several_before | none | unread
    # (`unread`: the read of the incidents failed, so nothing is known of them)
    why: str
    candidates: list[IncidentCandidate] = Field(default_factory=list)
    more: bool = False  # more incidents fit than are listed

    def line(self) -> str:
        """The report's `Incident` line (without its label)."""
        if self.taken is not None:
            chosen = self.candidates[0].describe()
            where = (
                "the only incident open at as_of"
                if self.why == "open_at_as_of"
                else "the only incident started by as_of"
            )
            return f"'{self.words}' is taken as {chosen}: {where}"
        if self.why == "unread":
            # A read that did not finish says nothing of the incidents: never "none".
            return (
                f"'{self.words}' is not placed: the read of the incidents started by as_of did "
                "not finish (see Reads), so which incident it means is unknown, not absent; "
                "ask again, or name the incident or the service with --service"
            )
        if not self.candidates:
            return (
                f"'{self.words}' names no incident: none you may read had started by as_of "
                "(as known at known_at); name the service with --service"
            )
        which = "open at as_of" if self.why == "several_open" else "started by as_of"
        listed = "; ".join(c.describe() for c in self.candidates)
        more = " and more" if self.more else ""
        return (
            f"'{self.words}' could mean {len(self.candidates)}{more} incidents {which}: "
            f"{listed}; none was picked: name one (its id) or the service with --service"
        )


def read_the_incident(
    words: str, rows: Sequence[TemplateRow], *, truncated: bool
) -> IncidentReading:
    """The incident `words` mean among `rows` of `incidents_at` (open ones first);
    `truncated` when the call had more rows than its limit."""
    candidates = [
        IncidentCandidate(
            incident_id=row.element.element_id,
            name=row.element.name,
            started_at=instant_of(row.context.get("started_at")),
            # Open at as_of: its later resolution is not said (the answer is as of as_of).
            resolved_at=None
            if row.context.get("open") is True
            else instant_of(row.context.get("resolved_at")),
            open=row.context.get("open") is True,
        )
        for row in rows
        if row.element.kind == "node"
    ]
    opened = [c for c in candidates if c.open]
    # Open ones come first: a cut list may hide more open ones only when all listed are open.
    more = truncated and (not opened or len(opened) == len(candidates))
    if len(opened) == 1:
        return IncidentReading(
            words=words, taken=opened[0].incident_id, why="open_at_as_of", candidates=opened
        )
    if len(opened) > 1:
        return IncidentReading(words=words, why="several_open", candidates=opened, more=more)
    if len(candidates) == 1 and not more:
        return IncidentReading(
            words=words,
            taken=candidates[0].incident_id,
            why="only_before_as_of",
            candidates=candidates,
        )
    if candidates:
        return IncidentReading(words=words, why="several_before", candidates=candidates, more=more)
    return IncidentReading(words=words, why="none")


__all__ = [
    "THE_INCIDENT_LOOKUP",
    "IncidentCandidate",
    "IncidentReading",
    "read_the_incident",
    "the_incident_step",
    "the_incident_words",
]
