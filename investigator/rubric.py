"""The evidence-sufficiency rubric: which evidence types each intent requires.

Sufficiency is a set difference : `missing = required - supported`.
"Happened after" supports a time correlation only; a root cause needs `mechanism` evidence,
and without it the root-cause claim stays a hypothesis and `mechanism` is listed as missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum

from pydantic import BaseModel


class Intent(StrEnum):
    """What a question asks for; each intent has required evidence types."""

    DEPLOYMENT_CORRELATION = "deployment_correlation"
    OWNERSHIP_AT_TIME = "ownership_at_time"
    APPLICABLE_RUNBOOK = "applicable_runbook"
    ROOT_CAUSE = "root_cause"
    INCIDENT_LOOKUP = "incident_lookup"
    ERROR_TIMELINE = "error_timeline"
    RELEASE_LOOKUP = "release_lookup"
    APPLICABLE_POLICY = "applicable_policy"
    DEPENDENCIES = "dependencies"  # "what does X depend on?" (DEPENDS_ON out of X)
    DEPENDENTS = "dependents"  # "what depends on X?", the blast radius (DEPENDS_ON into X)
    ENTITY_LOOKUP = "entity_lookup"
    CHANGE_HISTORY = "change_history"  # "what changed before the errors?"
    ALERT_FIRING = "alert_firing"  # "which alerts fired on X?", "when did alert X fire?"
    SERVICE_STATUS = "service_status"  # "is payment-api healthy now?", "status of checkout?"
    INCIDENT_LIST = "incident_list"  # "list all incidents in July 2026" (no service named)
    TIMELINE = "timeline"  # "timeline of PAY-4097", "what happened during the incident?"


# Required evidence types per intent (docs/design.md section 7).
REQUIRED_EVIDENCE: dict[Intent, tuple[str, ...]] = {
    Intent.DEPLOYMENT_CORRELATION: ("deployment_time", "error_first_seen", "affected_service"),
    Intent.OWNERSHIP_AT_TIME: ("ownership",),
    Intent.APPLICABLE_RUNBOOK: ("runbook",),
    Intent.ROOT_CAUSE: ("mechanism",),
    Intent.INCIDENT_LOOKUP: ("incident_report",),
    Intent.ERROR_TIMELINE: ("error_first_seen",),
    Intent.RELEASE_LOOKUP: ("deployment_time",),
    Intent.APPLICABLE_POLICY: ("policy",),
    Intent.DEPENDENCIES: ("dependency",),
    Intent.DEPENDENTS: ("dependent",),
    Intent.ENTITY_LOOKUP: ("entity",),
    # The first error dates the window whose changes are listed.
    Intent.CHANGE_HISTORY: ("error_first_seen",),
    # A FIRED_ON record (alert -> service) with its firing time.
    Intent.ALERT_FIRING: ("alert_firing",),
    # The service asked about: what is recorded of it at as_of (its incidents open, alerts
    # firing, release rolling out) is the answer, and "none" is one; the KG records no
    # health check, a named gap that is never required.
    Intent.SERVICE_STATUS: ("entity",),
    # The incidents of the tenant open in the period asked (incidents_in_period).
    Intent.INCIDENT_LIST: ("incident_report",),
    # The first error dates the window whose events are listed (as for change_history).
    Intent.TIMELINE: ("error_first_seen",),
}

# Evidence that is useful for an intent but whose absence does not make the answer partial.
OPTIONAL_EVIDENCE: dict[Intent, tuple[str, ...]] = {
    Intent.DEPLOYMENT_CORRELATION: ("change_event", "incident_report", "mechanism"),
    Intent.OWNERSHIP_AT_TIME: ("entity",),
    Intent.APPLICABLE_RUNBOOK: ("alert_definition", "ownership"),
    # The first error dates the window whose changes are the candidate causes.
    Intent.ROOT_CAUSE: ("incident_report", "change_event", "deployment_time", "error_first_seen"),
    Intent.INCIDENT_LOOKUP: ("error_first_seen", "affected_service", "alert_definition"),
    Intent.ERROR_TIMELINE: ("affected_service", "incident_report"),
    Intent.RELEASE_LOOKUP: ("change_event",),
    Intent.APPLICABLE_POLICY: ("ownership",),
    Intent.DEPENDENCIES: ("entity",),
    Intent.DEPENDENTS: ("entity",),
    Intent.ENTITY_LOOKUP: ("document",),
    Intent.CHANGE_HISTORY: ("change_event", "deployment_time", "mechanism", "incident_report"),
    Intent.ALERT_FIRING: ("alert_definition",),
    Intent.SERVICE_STATUS: (
        "incident_report",
        "affected_service",
        "alert_firing",
        "deployment_time",
    ),
    Intent.INCIDENT_LIST: (),
    # Every dated record of the window is an event of the timeline.
    Intent.TIMELINE: (
        "incident_report",
        "affected_service",
        "deployment_time",
        "change_event",
        "alert_firing",
    ),
}

# Intents whose answer is a list: every record of these types the run read is listed, the
# gate's five per type aside (five of a service's dependents are no blast radius, five
# firings no alert history; the reads' row caps and the pack's budget still bound them).
LISTED_IN_FULL: dict[Intent, tuple[str, ...]] = {
    Intent.DEPENDENCIES: ("dependency", "dependent"),
    Intent.DEPENDENTS: ("dependency", "dependent"),
    Intent.ALERT_FIRING: ("alert_firing",),
    Intent.SERVICE_STATUS: ("alert_firing", "incident_report", "affected_service"),
    Intent.INCIDENT_LIST: ("incident_report",),
    # A timeline cut at five releases or firings is no timeline.
    Intent.TIMELINE: (
        "error_first_seen",
        "incident_report",
        "affected_service",
        "deployment_time",
        "change_event",
        "alert_firing",
    ),
}

# What a missing requirement means to a reader (used in `missing_evidence`).
MISSING_DESCRIPTIONS: dict[str, str] = {
    # What the subject may read, never a claim about the whole graph: a record hidden by its
    # ACL or purpose must read the same as none at all.
    "entity": "no matching entity the subject may read",
    "deployment_time": "no release/deployment time for the service",
    "error_first_seen": "no first-seen time for the error or incident",
    "affected_service": "no link between the error/incident and the service",
    "ownership": "no OWNS relationship valid at as_of",
    "runbook": "no runbook version valid at as_of that applies to the service, alert or error "
    "code asked about",
    # Not "no config diff": a change record may hold one, and it says what changed, not why
    # the errors came (the gate types it change_event, never mechanism).
    "mechanism": "no mechanism evidence the subject may read: no record that says how a change "
    "caused the errors (e.g. a postmortem or incident report naming it, a rollback and what it "
    "did, a controlled comparison)",
    "change_event": "no record of other changes in the window",
    "dependency": "no dependency relationship",
    "dependent": "no service found that depends on it (no DEPENDS_ON relationship into it)",
    "incident_report": "no incident report",
    "alert_definition": "no alert definition",
    "alert_firing": "no alert recorded as firing on it by as_of (no FIRED_ON record the subject "
    "may read)",
    "policy": "no policy valid at as_of that the subject may read for this purpose",
    "document": "no document",
}


# Asks the KG has no record type for (graph_schema/kg_types.py: no on-call rota, pager or
# response-action record): never supported, so a question making them is answered `partial`
# with the gap named, never silently `complete` on its other parts. Each is read with the
# intent whose evidence is the nearest answer (the owner then; the runbook in force then).
UNRECORDED_ASKS: dict[str, tuple[Intent, str]] = {
    "on_call": (
        Intent.OWNERSHIP_AT_TIME,
        "no on-call rota or paging record: the KG has no such type; the owning team at the "
        "time (if found) is the owner, not who was on call or paged",
    ),
    "runbook_followed": (
        Intent.APPLICABLE_RUNBOOK,
        "no record of what the responders did: the KG has no response-action type, so whether "
        "the runbook was followed cannot be answered (only which version was in force)",
    ),
    "approval": (
        Intent.RELEASE_LOOKUP,
        "no approval or sign-off record: the KG records no review of the release or change "
        "(no approval, second review or load-test record type), so whether and by whom it was "
        "approved is unknown, not absent; no verdict is given (only what its own record says "
        "is: when it ran, what it changed, by which pipeline)",
    ),
    "resolver": (
        Intent.INCIDENT_LOOKUP,
        "no record of who resolved or worked on the incident: the KG has no responder type, "
        "so who did it cannot be answered (only when the incident started and was resolved, "
        "as its own record says)",
    ),
    "response_action": (
        Intent.APPLICABLE_RUNBOOK,
        "no record of what the responders did (fail over, roll back, restart): the KG has no "
        "response-action type, so whether it was done cannot be answered (only what the "
        "runbook in force says to do)",
    ),
}

# A question whose words no intent rule reads: the names in it were looked up, nothing more,
# so the answer is `partial` with this gap (never `complete` on a name read back).
UNREAD_QUESTION = "question"
UNREAD_QUESTION_HINT = (
    "ask e.g. who owns X, what caused X, did the release cause X, should we roll back X, "
    "what changed before X, which runbook applies to X, what depends on X"
)


class MissingEvidence(BaseModel):
    """One unmet rubric requirement."""

    evidence_type: str
    intents: list[str]
    description: str
    # False for evidence that would strengthen the answer but is not a rubric requirement
    # (e.g. mechanism evidence for a correlation question); only required gaps make a
    # run `partial`.
    required: bool = True


def required_types(intents: Iterable[str]) -> list[str]:
    """The union of required evidence types of `intents`, sorted."""
    out: set[str] = set()
    for intent in intents:
        out.update(REQUIRED_EVIDENCE.get(Intent(intent), ()))
    return sorted(out)


def useful_types(intents: Iterable[str]) -> list[str]:
    """Required plus optional evidence types of `intents`, sorted (the relevance filter)."""
    out: set[str] = set(required_types(intents))
    for intent in intents:
        out.update(OPTIONAL_EVIDENCE.get(Intent(intent), ()))
    return sorted(out)


def listed_types(intents: Iterable[str]) -> frozenset[str]:
    """The evidence types `intents` list in full (`LISTED_IN_FULL`)."""
    return frozenset(t for i in intents for t in LISTED_IN_FULL.get(Intent(i), ()))


def missing_evidence(intents: Iterable[str], supported: Iterable[str]) -> list[MissingEvidence]:
    """Unmet requirements: required types of `intents` minus `supported`, sorted by type."""
    intent_list = [Intent(i) for i in intents]
    have = set(supported)
    out: list[MissingEvidence] = []
    for etype in required_types(intent_list):
        if etype in have:
            continue
        needing = sorted(i.value for i in intent_list if etype in REQUIRED_EVIDENCE[i])
        out.append(
            MissingEvidence(
                evidence_type=etype,
                intents=needing,
                description=MISSING_DESCRIPTIONS.get(etype, etype),
            )
        )
    return out


def unrecorded_evidence(asks: Iterable[str]) -> list[MissingEvidence]:
    """The required gaps of asks the KG has no record type for (`UNRECORDED_ASKS`), sorted."""
    out: list[MissingEvidence] = []
    for ask in sorted(set(asks)):
        intent, description = UNRECORDED_ASKS[ask]
        out.append(
            MissingEvidence(evidence_type=ask, intents=[intent.value], description=description)
        )
    return out


def unread_question_gap(words: str, *, other_language: bool = False) -> MissingEvidence:
    """The required gap of a question read as nothing but the names in it (`other_language`:
    one asked in another language than English, which the planner does not read)."""
    language = " (questions are read in English)" if other_language else ""
    return MissingEvidence(
        evidence_type=UNREAD_QUESTION,
        intents=[Intent.ENTITY_LOOKUP.value],
        description=f"the question's words {words!r} ask something it does not read{language}: "
        f"only the names in it were looked up; {UNREAD_QUESTION_HINT}",
    )


# What the lookups that do not read traces, logs or metrics read, in plain words (the
# `unread_records_gap`: an intent id such as `incident_lookup` is jargon to an SRE).
INTENT_READS_PLAIN: dict[str, str] = {
    Intent.INCIDENT_LOOKUP.value: "the incident's own record",
    Intent.ERROR_TIMELINE.value: "when the error was first and last seen",
    Intent.RELEASE_LOOKUP.value: "the release's own record",
    Intent.OWNERSHIP_AT_TIME.value: "who owned the service",
    Intent.APPLICABLE_RUNBOOK.value: "the runbook in force",
    Intent.APPLICABLE_POLICY.value: "the policy in force",
    Intent.DEPENDENCIES.value: "what the service depends on",
    Intent.DEPENDENTS.value: "what depends on the service",
    Intent.ALERT_FIRING.value: "the alert firings",
    Intent.SERVICE_STATUS.value: "what is recorded of the service's state",
    Intent.INCIDENT_LIST.value: "the list of incidents",
}


def unread_records_gap(words: str, intents: Sequence[str]) -> MissingEvidence:
    """The required gap of a question asking for records its intents do not read ("show me
    the logs for PAY-4097", read as an incident lookup): what was read is stated in plain
    words (`INTENT_READS_PLAIN`), the records asked for are not."""
    read = [INTENT_READS_PLAIN.get(i, i.replace("_", " ")) for i in sorted(intents)]
    return MissingEvidence(
        evidence_type=UNREAD_QUESTION,
        intents=sorted(intents),
        description=f"the question's words {words!r} ask for records this answer does not read "
        f"(it reads {', '.join(dict.fromkeys(read))}): none of them was looked for, so none is "
        "stated here, which does not say that none is recorded; a trace the subject may read is "
        "shown when asked by its id (tell me about trace:<id>)",
    )
