"""Deterministic claim rules: statements bound to pack evidence, with a verdict.

Every claim carries an epistemic status (`fact` for what a record states, `inference` for
what follows from several records, `hypothesis` for what would need more evidence) and the
ids of the pack evidence it rests on; a claim without evidence is never emitted. For a
correlation question the verdict is `confirmed`, `likely`, `uncertain` or `refuted`, about
the change the question names (else the release closest before the first error):
"happened after" gives at most `likely`; only mechanism evidence naming the change can
confirm it, and mechanism evidence ruling it out refutes it; another change in the same
window (a confounder) lowers the verdict one step, two or more that no mechanism record
rules out one step more (no verdict stronger than `uncertain`), and an unresolved conflict
one step.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from pydantic import BaseModel, Field

from graph_schema.canonical import sha256_hex
from graph_schema.front_matter_contact import front_matter_contact
from investigator.change_period import (
    CHANGES_TEMPLATE,
    RELEASES_TEMPLATE,
    ROLLOUTS_TEMPLATE,
    TENANT_ROLLOUTS_TEMPLATE,
    CausesDropped,
    EventPeriod,
    WindowCut,
)
from investigator.context_graph.models import ToolCallRecord
from investigator.evidence import (
    Evidence,
    as_held,
    canonical_json,
    iso_utc,
    supported_evidence_types,
    version_named,
)
from investigator.gate import Conflict, authority
from investigator.lazy_pattern import LazyPattern
from investigator.ownership_history import (
    SINCE_THEN,
    OwnershipCorrection,
    OwnershipPeriod,
    OwnershipRetraction,
    asked_kinds,
    corrections_at,
    entity_cut_text,
    history_cut_at,
    history_cut_text,
    ownership_corrections,
    retraction_text,
    retractions_in,
    retractions_unowned_at,
    team_retractions_at,
    team_side_instants,
    uncovered_in_period,
    unowned_at,
)
from investigator.planner import (
    CHANGE_LOOKBACK,
    DEPENDS_ON_HOPS,
    DEPLOY_LOOKBACK,
    CompetingCauseChecks,
    asked_in_another_language,
    asks_about_rollback,
    asks_an_incident,
    asks_incident_duration,
    asks_open_incidents_anywhere,
    errors_read_only_for_then,
    extract_mentions,
    runbook_search_text,
    unread_words,
    unrecorded_asks,
)
from investigator.record_time import recorded_after, undated
from investigator.rubric import (
    Intent,
    MissingEvidence,
    missing_evidence,
    unread_question_gap,
    unrecorded_evidence,
)
from investigator.runbook_fallback import own_runbooks_weak
from investigator.runbook_period import uncovered_by_versions
from investigator.runbook_search import without_words
from investigator.runbook_sections import (
    SECTION_EXCERPT,
    SectionFocus,
    alert_section,
    budget_cut_words,
    card_focus,
    pointed_at,
    question_focus,
    runbook_steps,
)
from investigator.timeline import (
    ALERT_TIME_KEYS,
    CHANGE_TIME_KEYS,
    DEPLOY_TIME_KEYS,
    EPISODE,
    FIRST_SEEN_KEYS,
    AnchorEvent,
    EventSide,
    NamedTime,
    ReferenceTime,
    holds_at,
    instant,
    instant_of,
    passed_over_error,
    reference_times,
    release_of,
    rollout_under_way,
    time_references,
)

# How far before the first error another change counts as a confounder, and how long after a
# release an error may appear and still be called time-correlated.
CONFOUNDER_WINDOW = timedelta(minutes=30)
CORRELATION_WINDOW = timedelta(minutes=30)
# From how many competing causes that no mechanism record rules out a correlation verdict is
# lowered one step more than for any confounder: no stronger than `uncertain`.
UNEXPLAINED_CAUSES = 2

# What to ask again with when the loop stopped with reads still planned, per stop reason.
_LONGER_SEARCH = {
    "deadline": "a longer --deadline-seconds",
    "max_rounds": "a larger --max-rounds",
    "budget_exhausted": "a larger --budget-tokens",
}
# Said for `search_stopped_by` when the loop finished but one of its reads failed (a template
# timed out on a loaded server): its rows are unknown, and "none found" would be a claim.
READ_FAILED = "read_failed"
# The `error_first_seen` gap of a question that names no service, alert or error code (and
# was given no --service): which errors it asks about is unknown, so none was looked for.
NO_ERRORS_NAMED = (
    "the question names no service, alert or error code, so no errors were looked for: "
    'name the service (--service payment-api) or the error code ("What changed before the '
    'PAY-4097 errors?")'
)
# The ownership and mechanism gaps of a question that names nothing to look them up for
# ("who owned it then", "what broke", no --service): nothing was searched, so "no OWNS
# relationship" or "no mechanism evidence" would state a false reason.
NOTHING_NAMED = (
    "the question names no service, error code, release or incident (and no --service was "
    "given), so no {what} was looked for: name one (--service payment-api, or e.g. "
    '"{example}")'
)
# The same gaps when what the question's words found had not started by as_of (the payments
# incident asked about at 09:00, before it began at 10:02): it names something, recorded
# later and not followed, so "names no service" would be false.
STARTED_LATER = (
    "what the question's words found had not started by as_of {as_of}: {later} "
    "(recorded later, not followed), so no {what} was looked for: ask at a later --as-of, or "
    "name what held then (--service payment-api)"
)
# The gaps of what is read for a service when the one named (--service, or the question's
# words) resolved to nothing the subject may see and no other service was read: nothing was
# looked up for it, so "no release for the service" or "names no service" would be false.
NAME_UNRESOLVED = (
    "{names} resolved to nothing this subject may see (its close ids, if any, are suggested "
    "with it), so no {what} was looked for: ask with a visible id"
)
_UNRESOLVED_GAPS = {
    "deployment_time": "release",
    "error_first_seen": "first error",
    "affected_service": "error of a service",
    "ownership": "owner",
    "dependency": "dependency",
    "dependent": "dependent",
    "incident_report": "incident",
    "alert_firing": "alert firing",
}
NOTHING_NAMED_GAPS = {
    "ownership": ("owner", "who owned payment-api then?"),
    "mechanism": ("mechanism", "what broke PAY-4097?"),
    "alert_firing": ("alert firing", "which alerts fired on payment-api?"),
}
# What a question's subject is read from: a service, incident, error, release, alert or a
# runbook its words found ("who owns the runbook for ledger sync lag?").
_SUBJECT_ID = re.compile(r"(?:^|\|)(?:svc|inc|err|deploy|alert|runbook):")
# How a gap left by a search that did not finish begins: not found yet is not none.
UNKNOWN_NOT_ABSENT = "unknown, not absent: "


class EpistemicStatus(StrEnum):
    """How strongly a claim is known."""

    FACT = "fact"
    INFERENCE = "inference"
    HYPOTHESIS = "hypothesis"


class Verdict(StrEnum):
    """The answer to a correlation question, strongest first."""

    CONFIRMED = "confirmed"
    LIKELY = "likely"
    UNCERTAIN = "uncertain"
    REFUTED = "refuted"


_LOWER = {
    Verdict.CONFIRMED: Verdict.LIKELY,
    Verdict.LIKELY: Verdict.UNCERTAIN,
    Verdict.UNCERTAIN: Verdict.UNCERTAIN,
    Verdict.REFUTED: Verdict.REFUTED,
}


class Claim(BaseModel):
    """One statement bound to evidence in the pack."""

    claim_id: str
    statement: str
    epistemic_status: EpistemicStatus
    confidence: float = Field(ge=0.0, le=1.0)
    evidence_ids: list[str] = Field(min_length=1)
    intent: str


class CauseAssessment(StrEnum):
    """What the trusted mechanism evidence says of a competing or candidate cause."""

    RULED_OUT = "ruled_out"  # a record clears it, none names it as the cause
    NAMED_AS_CAUSE = "named_as_cause"  # a record names it as the cause, none clears it
    DISPUTED = "disputed"  # records do both
    # No mechanism record says either, but a trusted report in the pack that records no
    # mechanism (a draft postmortem) names it as the cause (`reported_by`).
    REPORTED_AS_CAUSE = "reported_as_cause"
    NO_MECHANISM_EVIDENCE = "no_mechanism_evidence"  # no record says either


class Confounder(BaseModel):
    """Another change in the correlation window that could explain the errors too."""

    evidence_id: str
    element_id: str
    # When it took effect: a release's finish (the deployment time), a change's instant.
    at: datetime
    # A release's rollout start, when its record has one before `at`: errors are weighed
    # against it (an error first seen during the rollout can be its effect).
    started_at: datetime | None = None
    description: str
    # Evidence ids of the mechanism records that clear it / name it as the cause.
    assessment: CauseAssessment = CauseAssessment.NO_MECHANISM_EVIDENCE
    ruled_out_by: list[str] = Field(default_factory=list)
    named_by: list[str] = Field(default_factory=list)
    # Evidence ids of the reports (trusted documents that are no mechanism record, e.g. a
    # draft postmortem of confidence 0.3) that name it as the cause: what was recorded of it
    # then, not what decides it.
    reported_by: list[str] = Field(default_factory=list)


class ClaimSet(BaseModel):
    """Claims, the verdict (correlation questions only), confounders and gaps."""

    claims: list[Claim]
    verdict: Verdict | None
    confounders: list[Confounder]
    missing_evidence: list[MissingEvidence]


# Property names that carry the relevant instant, most specific first (investigator.timeline).
_DEPLOY_TIME_KEYS = DEPLOY_TIME_KEYS
_FIRST_SEEN_KEYS = FIRST_SEEN_KEYS
_CHANGE_TIME_KEYS = CHANGE_TIME_KEYS
_instant = instant


def _label(ev: Evidence) -> str:
    code = ev.context.get("code") or ev.context.get("error_code")
    if "error_first_seen" in ev.evidence_types and isinstance(code, str):
        return code.removeprefix("err:")
    return ev.name or ev.title or ev.element_id


def _title(ev: Evidence) -> str:
    """A runbook's or policy's name in a claim: its title, as the runbook card names it (an
    imported page's record name is its file name, `backdoor-ec2-spambot`, where its title
    is the finding's, `Backdoor:EC2/Spambot`)."""
    return ev.title or _label(ev)


def _about(ev: Evidence, entity_id: str) -> bool:
    """Whether `ev` is a record about `entity_id` (same record, its fact slot, its documents)."""
    return (
        ev.element_id == entity_id
        or entity_id in (ev.conflict_key or "")
        or entity_id in (ev.context.get("entity"), ev.context.get("deployment"))
    )


def _claim(
    statement: str, status: EpistemicStatus, confidence: float, evs: Sequence[Evidence], intent: str
) -> Claim:
    ids = sorted({ev.evidence_id for ev in evs})
    digest = sha256_hex(canonical_json([statement, ids, status.value]))
    return Claim(
        claim_id="claim:" + digest[:16],
        statement=statement,
        epistemic_status=status,
        confidence=confidence,
        evidence_ids=ids,
        intent=intent,
    )


def _with(evidence: Sequence[Evidence], etype: str) -> list[Evidence]:
    # A tombstone in the pack (a retracted OWNS record an answer cites) supports nothing.
    return [ev for ev in evidence if etype in ev.evidence_types and ev.status == "active"]


def _validity(ev: Evidence) -> str:
    """` (valid A to B)` after a runbook or policy claim, or nothing when the document states
    no validity at all (an imported file: in force until replaced, nothing to repeat in every
    claim; records of other kinds keep saying it)."""
    if ev.valid_from is None and ev.valid_to is None:
        return ""
    return f" ({_valid_text(ev)})"


def _valid_text(ev: Evidence) -> str:
    end = iso_utc(ev.valid_to) if ev.valid_to else "open"
    if ev.valid_from is None:
        # An imported runbook often states no start: say so, rather than print "?".
        return f"valid to {end}, no start recorded"
    return f"valid {iso_utc(ev.valid_from)} to {end}"


def _through(ev: Evidence, etype: str) -> str:
    """For a service found over several hops of DEPENDS_ON (`etype` the way it was walked):
    who depends on whom, through whom, in the order of the chain. A dependent's path runs
    from the service asked about back to it ("svc:api-gateway depends on svc:payment-db
    through svc:checkout, svc:payment-api"); a dependency's out of the service asked about
    ("svc:checkout depends on svc:payment-db through svc:payment-api")."""
    path = ev.context.get("path")
    if not isinstance(path, list) or len(path) < 3:
        return ""
    names = [str(p) for p in path]
    if etype == "dependent":
        names.reverse()
    return f", so {names[0]} depends on {names[-1]} through {', '.join(names[1:-1])}"


def _incident_facts(ev: Evidence, as_of: datetime) -> str:
    """What an incident record says of itself: severity, start and resolution by `as_of`, as
    recorded (the record current at the run's known_at: SEV2 at 10:10, SEV1 from 10:20).
    Not resolved by as_of, and in force past it: open at as_of (asked "when was it
    resolved?" at 10:40, before its 10:48 resolution, that is the answer then)."""
    parts = []
    severity = ev.props.get("severity")
    if isinstance(severity, str) and severity.strip():
        parts.append(f"severity {severity.strip()}")
    resolved = False
    for key, word in (("started_at", "started"), ("resolved_at", "resolved")):
        at = instant_of(ev.props.get(key))
        if at is not None and at <= as_of:
            parts.append(f"{word} {iso_utc(at)}")
            resolved |= key == "resolved_at"
    if not resolved and (ev.valid_to is None or ev.valid_to > as_of):
        parts.append(f"open at as_of {iso_utc(as_of)} (no resolution recorded by as_of)")
    return "".join(f", {p}" for p in parts)


def _incident_duration_claims(incidents: Sequence[Evidence], as_of: datetime) -> list[Claim]:
    """For "how long did the incident last?": one fact per incident record read, the time
    from its start (started_at, else valid_from) to its resolution (resolved_at, else
    valid_to) by as_of, or, not resolved by as_of, how long it had been open then ("so far").
    An incident with no start recorded gets none (its start and end stay in its own fact)."""
    out = []
    for ev in sorted(incidents, key=lambda e: e.element_id):
        if ev.type != "Incident":
            continue
        start = instant_of(ev.props.get("started_at")) or ev.valid_from
        if start is None or start > as_of:
            continue
        end = instant_of(ev.props.get("resolved_at")) or ev.valid_to
        if end is not None and end <= as_of:
            said = (
                f"Incident {ev.element_id} lasted {_human(end - start)}: started "
                f"{iso_utc(start)}, resolved {iso_utc(end)}"
            )
        else:
            said = (
                f"Incident {ev.element_id} open for {_human(as_of - start)} so far: started "
                f"{iso_utc(start)}, not resolved by as_of {iso_utc(as_of)}"
            )
        out.append(_claim(said, EpistemicStatus.FACT, 0.95, [ev], Intent.INCIDENT_LOOKUP.value))
    return out


def _valid_by(ev: Evidence, as_of: datetime) -> str:
    """`_valid_text` as known at `as_of`: an end after as_of is not stated (the incident's
    10:48 end, asked at 10:40, read as when it was resolved), only that it ends later."""
    if ev.valid_to is None or ev.valid_to <= as_of:
        return _valid_text(ev)
    start = iso_utc(ev.valid_from) if ev.valid_from else "no start recorded"
    return f"valid {start}, ends after as_of"


def _affected_claims(affected: Sequence[Evidence], as_of: datetime) -> list[Claim]:
    """One claim per incident naming the services it affected, bound to those `AFFECTED_BY`
    records ("What did the payments incident affect?" listed them only as evidence); an end
    after `as_of` is not stated (`_valid_by`)."""
    by_incident: dict[str, list[Evidence]] = {}
    for ev in affected:
        parts = ev.element_id.split("|")
        incident = ev.context.get("incident") or (parts[2] if len(parts) == 3 else None)
        if isinstance(incident, str):
            by_incident.setdefault(incident, []).append(ev)
    out = []
    for incident, evs in sorted(by_incident.items()):
        services = sorted(
            (str(ev.context.get("service") or ev.element_id.split("|")[1]), ev) for ev in evs
        )
        named = ", ".join(f"{svc} ({_valid_by(ev, as_of)})" for svc, ev in services)
        out.append(
            _claim(
                f"Services affected by incident {incident}: {named}",
                EpistemicStatus.FACT,
                0.95,
                evs,
                Intent.INCIDENT_LOOKUP.value,
            )
        )
    return out


def _named_only(ev: Evidence, found_by_text: Sequence[str] = ()) -> str:
    """How a runbook read as the one the question names is tied to it: by its name, by the
    heading of the section admitted (a file of one section per alert), or by the words of
    the question (the runbook search's best fit, `found_by_text`), alone."""
    if ev.context.get("anchor_type") != "runbook":
        return ""
    if ev.context.get("anchor") in found_by_text:
        return (
            ", found by the words of the question alone (the runbook search's best fit; "
            "no service, alert or error code it names links to it),"
        )
    # A cut without an anchor is the page's opening text, which no heading names.
    cut = SECTION_EXCERPT in ev.transformations and "#" in (ev.locator or "")
    by = "the heading of its section" if cut else "its name"
    return f", found by {by} alone (no service, alert or error code record links to it),"


# A source version an importer wrote: the file's commit or content hash.
_FILE_VERSION = re.compile(r"^(git|sha256):([0-9a-f]{12})[0-9a-f]*$")


def _version_words(ev: Evidence) -> str:
    """A runbook's version as the card names it: its own label (`v3`), else, for an
    imported file without one, the commit or content hash it was read from, short."""
    own = ev.props.get("runbook_version")
    if own is None and (at := re.search(r"@v(\d+)$", ev.element_id)):
        own = at.group(1)
    if own is not None and str(own).strip():
        return "v" + str(own).strip().removeprefix("v").removeprefix("V")
    match = _FILE_VERSION.match(ev.source_version or "")
    return f"{match.group(1)}:{match.group(2)}" if match else f"v{ev.version}"


def _versioned(ev: Evidence) -> str:
    """A runbook version as a claim names it, fact or inference: its id and its version as
    the card's `Runbook` line names it (`runbook:mimir-runbooks, sha256:b008c1d2ff90`), or
    the id alone when it ends with that version already (`runbook:payment-recovery@v3`)."""
    label = _version_words(ev)
    return ev.element_id if ev.element_id.endswith("@" + label) else f"{ev.element_id}, {label}"


class _TextOwners(BaseModel):
    """The owner claims of runbooks chosen by the question's words, and what is not known."""

    claims: list[Claim] = Field(default_factory=list)
    missing: list[MissingEvidence] = Field(default_factory=list)


def _places_named(evidence: Sequence[Evidence], question: str) -> list[str]:
    """The services the run read that the question writes, by id or by the name its id
    holds ("ssh brute force on svc:payment-api": svc:payment-api): where a symptom shows."""
    said = " ".join(question.split())
    return sorted(
        {
            ev.element_id
            for ev in evidence
            if ev.type == "Service"
            and "entity" in ev.evidence_types
            and any(
                without_words(question, [form]) != said
                for form in (ev.element_id, ev.element_id.split(":", 1)[-1])
            )
        }
    )


def _text_runbook_owners(
    runbooks: Sequence[Evidence],
    evidence: Sequence[Evidence],
    found_by_text: Sequence[str],
    runbook_services: Sequence[tuple[str, str]],
    held_at: Callable[[Evidence], str],
    question: str = "",
) -> _TextOwners:
    """For each runbook chosen by the question's words alone: its owner at as_of as the card
    reads it (its own OWNS record, else the owner of a service it applies to), each a `fact`
    bound to that OWNS record; and, said as gaps that would strengthen the answer, that no
    service, alert or error code record ties it to the question, and an owner not found.
    A question that names a service (the place of a symptom) is not said to name none: the
    gap says that no record ties the runbook to it."""
    out = _TextOwners()
    owners = _with(evidence, "ownership")
    places = _places_named(evidence, question)
    for rb in sorted({str(ev.context.get("anchor")) for ev in runbooks} & set(found_by_text)):
        services = {svc for runbook, svc in runbook_services if runbook == rb}
        own = [ev for ev in owners if ev.context.get("owned") == rb]
        through = [ev for ev in owners if ev.context.get("service") in services]
        own_ids = {ev.evidence_id for ev in own}
        for ev in own or through:
            via = (
                f", the owner of {rb}"
                if ev.evidence_id in own_ids
                else f", through service {ev.context.get('service')}, which {rb} applies to"
            )
            out.claims.append(
                _claim(
                    f"{held_at(ev)}: {ev.content} ({_valid_text(ev)}){via}",
                    EpistemicStatus.FACT,
                    0.9,
                    [ev],
                    Intent.APPLICABLE_RUNBOOK.value,
                )
            )
        unnamed = (
            f"no service, alert or error code record the subject may read is named by the "
            f"question: {rb} is tied to it"
        )
        if places:
            named = ", ".join(places)
            unnamed = (
                f"no record the subject may read ties {rb} to {named}, which the question "
                f"names: {rb} is tied to the question"
            )
        if not services & set(places):
            out.missing.append(
                MissingEvidence(
                    evidence_type="entity",
                    intents=[Intent.APPLICABLE_RUNBOOK.value],
                    description=f"{unnamed} by the runbook search's best fit for its words alone",
                    required=False,
                )
            )
        if not (own or through):
            out.missing.append(_text_owner_gap(rb))
    return out


def _text_owner_gap(rb: str) -> MissingEvidence:
    """The gap that would strengthen a runbook found by the question's words: no owner of it
    (nor of a service it applies to) at as_of."""
    return MissingEvidence(
        evidence_type="ownership",
        intents=[Intent.APPLICABLE_RUNBOOK.value],
        description=f"no owner of {rb} at as_of the subject may read: no OWNS "
        "record of it, nor of a service it applies to",
        required=False,
    )


def derive_claims(
    intents: Sequence[str],
    evidence: Sequence[Evidence],
    *,
    as_of: datetime,
    conflicts: Sequence[Conflict] = (),
    service_id: str | None = None,
    question: str | None = None,
    competing_checks: CompetingCauseChecks | None = None,
    references: Sequence[ReferenceTime] | None = None,
    found_by_text: Sequence[str] = (),
    runbook_services: Sequence[tuple[str, str]] = (),
    search_stopped_by: str | None = None,
    ownership_period: OwnershipPeriod | None = None,
    version_period: OwnershipPeriod | None = None,
    versions_cut: Sequence[tuple[str, int]] = (),
    event_period: EventPeriod | None = None,
    firing_period: EventPeriod | None = None,
    ownership_records: Sequence[Evidence] = (),
    ownership_cut: Sequence[tuple[str, int]] = (),
    owners_cut: Sequence[tuple[str, int, datetime | None]] = (),
    owners_asked: Sequence[str] = (),
    not_valid_then: Sequence[str] = (),
    owners_unread: Sequence[str] = (),
    alerts_unfound: Sequence[tuple[str, bool]] = (),
    owners_dropped: Sequence[Evidence] = (),
    team_words: str | None = None,
    teams: Sequence[str] = (),
    window_cuts: Sequence[WindowCut] = (),
    releases_unread: bool = False,
    cause_cuts: Sequence[WindowCut] = (),
    team_cuts: Sequence[WindowCut] = (),
    causes_dropped: Sequence[CausesDropped] = (),
    period_was_read: bool = False,
    services_read: Sequence[str] = (),
    unresolved_names: Sequence[str] = (),
    started_later: Mapping[str, datetime] | None = None,
    errors_later: Mapping[str, datetime] | None = None,
    known_at: datetime | None = None,
    walks_capped: Sequence[tuple[str, str, int]] = (),
    incident_lists_cut: Sequence[tuple[str, str, int]] = (),
) -> ClaimSet:
    """Apply the claim rules of each intent to the pack evidence (pure, deterministic).

    `question` resolves time words ("then" = the anchor event; investigator.timeline): a
    state claim then names the instant it holds at and why. `competing_checks` says which
    competing-cause checks ran; without all of them a correlation verdict stays `uncertain`.
    `found_by_text`: the runbooks the loop chose by the question's words alone (their claim
    says so, an `inference`, with their owner and what no record ties); `runbook_services`:
    (runbook, service) for the services those runbooks apply to, whose owner is theirs.
    `search_stopped_by`: the stop reason when the retrieval loop stopped with reads
    still planned (`RetrievalOutcome.cut_short`), or `READ_FAILED` when one of its reads
    failed: nothing is then said to be not known, and each required gap says that the
    search did not finish.
    `ownership_period`: the period the question asks the owners over (each owner
    is stated by its valid interval), `ownership_records` the older records of their OWNS
    edges (a correction of who was recorded is stated too; ownership_history.py); for a
    question about one time, every record of a service with a superseded one (each
    correction of who was recorded at an instant asked is stated);
    `ownership_cut`: (service, rows read) of each service whose owners over the period were
    more than one read holds (a required gap says where the history was cut); `owners_cut`
    the same of each alert or runbook version whose `owners_of` read (oldest first) was cut.
    A stretch of a period asked at which no owner is recorded is a required gap.
    `owners_asked`: the alerts and runbook versions whose own owners were read (`owners_of`),
    `not_valid_then` those whose own record the gate refused as not valid at as_of or a time
    asked: one with no owner admitted is a required gap (another entity's owner is no answer).
    `owners_unread`: those whose `owners_of` read failed: who owns them is unknown, never
    absent, a required gap each (the owner of a service it fires on is no answer either).
    `alerts_unfound`: (service, read failed) of each service whose alerts were read for a
    question asking the owner of an alert it does not name ("who owns the alert that fired
    on checkout?") and none was found (or the read failed): a required gap each, since the
    service's owner is not the alert's.
    `owners_dropped`: OWNS records the run read and admitted but the pack dropped for the
    evidence budget: an owner gap they would fill says so, never that no record holds.
    `version_period`: the period a runbook or policy question asks the versions over
    (runbook_period.py): each dated version in force at some instant of it is stated by its
    valid interval; `versions_cut`: (anchor, rows read) of each read of the versions cut at
    its row cap, a required gap each (versions of the period may be past it).
    `team_words`: the words naming the team a question asks about from its side
    (`asked_team`), `teams` the teams they linked to: what each owned is stated (its records
    say nothing of who owned the rest, so no owner gap is drawn from them); none linked is a
    required gap, said alike for a team that does not exist and one the subject may not read.
    `window_cuts`: each read of releases or change events cut at its row cap, a required gap
    each for a change question (change_period.py); `releases_unread`: no releases were read
    (the run stopped first), said beside a period's changes. `cause_cuts`: each read of the
    window before the first error (or of the earliest releases) cut at its row cap: a
    required gap each, and no correlation verdict stronger than `uncertain`. `causes_dropped`:
    the releases and change events of that window read but left out for the evidence budget,
    likewise a required gap each and no verdict stronger than `uncertain`. `team_cuts`:
    each read of a team's OWNS edges from its side cut at its row cap, a required gap each.
    `period_was_read`: the period a change question asks over was read, so its answer needs
    no first error (no `error_first_seen` gap of its own). In every answer the claims of
    releases and change events are listed by when they happened (then the record's id),
    ahead of the untimed claims of their intent and status.
    `services_read`: the services the run found (the question's words, `--service`, or a
    record in force at as_of): the question named one, so its gaps never say it named none.
    `started_later`: what the question's words found that starts after as_of (id -> its
    start), not followed: a gap of a question naming nothing else says so ("recorded later").
    `errors_later`: error codes whose first sighting the run read starts after as_of (code id
    -> that start): a mechanism record about those errors alone, none of them known at
    as_of, is held back (`_hindsight`), and a required `error_first_seen` gap says why.
    `unresolved_names`: the --service and the question's names that resolved to nothing the
    subject may see; with no service read and no first error, the service's gaps say so
    (nothing was looked up for them), not "none found" or "names no service".
    `known_at`: what the KG knew when the run read it, named in a gap that says no runbook
    version is in force at as_of (a later version may have been recorded since).
    `event_period`: the period a change or release question's words before or after an
    event name, its event placed ("the day before the incident"; change_period.py): the
    changes in it are listed, none outside it; "before the release" alone lists the last
    release of each service asked about by then and the other changes of the day before.
    """
    intent_set = {Intent(i) for i in intents}
    claims: list[Claim] = []
    confounders: list[Confounder] = []
    verdict: Verdict | None = None
    as_of_text = iso_utc(as_of)
    refs = (
        list(references)
        if references is not None
        else reference_times(
            time_references(question, as_of),
            evidence,
            as_of=as_of,
            services=[service_id] if service_id else (),
        )
        if question
        else []
    )

    def held_at(ev: Evidence) -> str:
        """Which instants a state record holds at: `as_of` alone, or labelled references."""
        if not refs:
            return f"At {as_of_text}"
        return _holds_text(ev, refs, as_of)

    def held_somewhere(ev: Evidence) -> bool:
        # A record admitted for an instant the answer no longer names (a stand-in "then"
        # dropped when the search stopped early) holds at nothing asked: no claim says so.
        return holds_at(ev, as_of) or any(holds_at(ev, r.at) for r in refs)

    # "Which services did X own?": the other kinds X owned are counted in a claim of their
    # own, not listed among the services.
    kinds = asked_kinds(question or "") if team_words is not None else None
    listed, other_kinds = _split_kinds(_with(evidence, "ownership"), kinds)
    if Intent.OWNERSHIP_AT_TIME in intent_set and ownership_period is not None:
        owners = _with(evidence, "ownership")
        claims += _owners_in_period(listed, ownership_period, as_of, held_at)
        claims += _other_kinds_claims(
            other_kinds,
            kinds,
            lambda ev: (
                f"In the period asked ({ownership_period.why})"
                if ownership_period.overlaps(as_held(ev))
                else held_at(as_held(ev))
            ),
        )
        claims += _correction_claims(owners, ownership_records, ownership_period)
        claims += _period_retraction_claims(evidence, ownership_records, ownership_period)
    elif Intent.OWNERSHIP_AT_TIME in intent_set:
        named_instants = [r.at for r in refs if r.kind != "as_of"]

        def named_version_only(ev: Evidence) -> bool:
            # "Which team owned runbook:x@v3?" after v3 was superseded: said over its life.
            held = as_held(ev)
            return (
                not named_instants
                and not held_somewhere(held)
                and version_named(question or "", ev)
            )

        def stated_then(ev: Evidence) -> bool:
            held = as_held(ev)  # a team's record of a runbook version: no longer than it
            if named_version_only(ev):
                return True
            if not held_somewhere(held):
                return False
            # What the team owned at another time than the one asked is not stated.
            return not (
                ev.context.get("asked_team")
                and named_instants
                and not any(holds_at(held, at) for at in named_instants)
            )

        claims += _other_kinds_claims(
            [ev for ev in other_kinds if stated_then(ev)], kinds, lambda ev: held_at(as_held(ev))
        )
        for ev in listed:
            if not stated_then(ev):
                continue
            when = (
                f"While {ev.context.get('owned')} was in force"
                if named_version_only(ev)
                else held_at(as_held(ev))
            )
            claims.append(
                _claim(
                    f"{when}: {ev.content} ({_valid_text(ev)}{_version_end(ev)})",
                    EpistemicStatus.FACT,
                    0.95,
                    [ev],
                    Intent.OWNERSHIP_AT_TIME.value,
                )
            )
        claims += _instant_correction_claims(
            _with(evidence, "ownership"), ownership_records, refs, as_of
        )
        claims += _instant_retraction_claims(evidence, ownership_records, refs, as_of)
        claims += _team_retraction_claims(evidence, ownership_records, refs, as_of)
    unknown_then: list[tuple[str, datetime]] = []
    text_gaps: list[MissingEvidence] = []
    if Intent.APPLICABLE_RUNBOOK in intent_set:
        focus = question_focus(question or "")
        runbooks = _with(evidence, "runbook")
        for ev in runbooks:
            if pointed_at(ev, runbooks) is not None:
                continue  # a "moved to" stub: the runbook it points at is the one in force
            # A runbook of several alerts: the section of the alert the question names.
            section = alert_section(ev, focus)
            if section is None and SECTION_EXCERPT not in ev.transformations:
                # A whole file: where its steps are, as the card's Locator line gives them.
                section = runbook_steps(ev, card_focus(ev, focus)).locator
            where = f" [{section or ev.locator}]" if section or ev.locator else ""
            if (cut := budget_cut_words(ev)) is not None:
                # Too long for the budget: the part the card shows, and how to read the rest.
                where = f" [{ev.locator}: {cut}]"
            elif SECTION_EXCERPT in ev.transformations and "#" not in (ev.locator or ""):
                # The page's opening text (`alert_excerpt`): as the card, say none is about it.
                asked = ", ".join(focus.names)
                where = f" [{ev.locator}: its opening text; none of its sections is about {asked}]"
            tie = _named_only(ev, found_by_text)
            if undated(ev) and refs:
                # "Then", or a time written in the question: each version at the instants it
                # was in force (that time and as_of), by its record times.
                then = _undated_then(ev, refs, as_of, runbooks, tie, where)
                if then is not None:
                    claims += then[0]
                    unknown_then += [(ev.element_id, at) for at in then[1]]
                    continue
            over = _served_over(ev, runbooks, as_of)
            if recorded_after(ev, as_of):
                # An undated version recorded after as_of: nothing says it was the one in
                # force then (record_time.py), so no fact says so.
                claims.append(
                    _claim(
                        f"Runbook {_title(ev)} ({_versioned(ev)}){tie} states no validity and "
                        f"its earliest version was recorded at {_when(ev.recorded_at)}, after "
                        f"{iso_utc(as_of)}: this is that version; what it said at "
                        f"{iso_utc(as_of)} is not known{_set_aside_text(ev, over)}{where}",
                        EpistemicStatus.INFERENCE,
                        0.5,
                        [ev],
                        Intent.APPLICABLE_RUNBOOK.value,
                    )
                )
                if over is None:
                    # (With a trusted runbook in force then claimed, which applies is known.)
                    unknown_then.append((ev.element_id, as_of))
                continue
            if over is not None and ev.trust != "trusted":
                # An untrusted page of the alert or error code beside the trusted runbook in
                # force on its service (e29-qa finding 3): never a fact over it.
                claims.append(
                    _claim(
                        f"Runbook {_title(ev)} ({_versioned(ev)}){tie} names it, recorded "
                        f"{_when(ev.recorded_at)}{_set_aside_text(ev, over)}{where}",
                        EpistemicStatus.INFERENCE,
                        0.5,
                        [ev],
                        Intent.APPLICABLE_RUNBOOK.value,
                    )
                )
                continue
            by_text = ev.context.get("anchor") in found_by_text
            if version_period is not None and not by_text and _dated_in(ev, version_period):
                claims.append(
                    _claim(
                        f"{_span_text(ev, as_of)} ({version_period.why}): Runbook {_title(ev)} "
                        f"({_versioned(ev)}){tie} {_was(ev)} the version in force{where}",
                        EpistemicStatus.FACT,
                        0.95,
                        [ev],
                        Intent.APPLICABLE_RUNBOOK.value,
                    )
                )
                continue
            when = _undated_in_force(ev, as_of) or _in_force(ev, refs, as_of, runbooks)
            if by_text and budget_cut_words(ev) is None:
                # Where its steps are, as the card's Locator line gives them.
                steps = runbook_steps(ev, SectionFocus(text=runbook_search_text(question or "")))
                where = f" [{steps.locator or ev.locator}]" if steps.locator or ev.locator else ""
            claims.append(
                _claim(
                    f"Runbook {_title(ev)} ({_versioned(ev)}){tie} is the version "
                    f"in force {when}{_validity(ev)}{where}" + _rollback_step(ev, question or ""),
                    # That it applies rests on its words matching, not on a record.
                    EpistemicStatus.INFERENCE if by_text else EpistemicStatus.FACT,
                    0.7 if by_text else 0.95,
                    [ev],
                    Intent.APPLICABLE_RUNBOOK.value,
                )
            )
        text_owners = _text_runbook_owners(
            runbooks, evidence, found_by_text, runbook_services, held_at, question or ""
        )
        if Intent.OWNERSHIP_AT_TIME not in intent_set:
            claims += text_owners.claims  # else claimed as every owner is, below
        text_gaps = text_owners.missing
    if Intent.APPLICABLE_POLICY in intent_set:
        policies = _with(evidence, "policy")
        for ev in policies:
            where = f" [{ev.locator}]" if ev.locator else ""
            if version_period is not None and _dated_in(ev, version_period):
                claims.append(
                    _claim(
                        f"{_span_text(ev, as_of)} ({version_period.why}): Policy {_title(ev)} "
                        f"({ev.element_id}) {_was(ev)} in force{where}",
                        EpistemicStatus.FACT,
                        0.95,
                        [ev],
                        Intent.APPLICABLE_POLICY.value,
                    )
                )
                continue
            claims.append(
                _claim(
                    f"Policy {_title(ev)} ({ev.element_id}) is in force "
                    f"{_in_force(ev, refs, as_of, policies)}{_validity(ev)}{where}",
                    EpistemicStatus.FACT,
                    0.95,
                    [ev],
                    Intent.APPLICABLE_POLICY.value,
                )
            )
    timed = _with(evidence, "deployment_time")
    # A rollout under way at an instant asked about is not "the release" then: said as such.
    rolling = _rollout_claims(timed, refs, as_of)
    if Intent.RELEASE_LOOKUP in intent_set:
        # Its finish lies after as_of: no fact states it.
        released = [ev for ev in timed if ev not in rolling[1]]
        asked_period = (
            event_period.named()
            if event_period is not None
            else time_references(question or "", as_of).period
        )
        if event_period is not None and event_period.last_only:
            # "What was deployed before release X?": the last release by then.
            released = _last_releases(released, event_period.end, services_read)
        elif asked_period is not None and asked_period[0].at <= as_of:
            # "Which releases of X in July 2026?": those finished in the period, not the
            # latest by as_of.
            released, release_gaps = _releases_in_period(released, asked_period, as_of)
            text_gaps = [*text_gaps, *release_gaps]
        claims.extend(_release_claims(released))
    claims += rolling[0]
    # Each DEPENDS_ON record read either way states its direction (and, a dependent found
    # over several hops, through whom).
    for asked, etype in ((Intent.DEPENDENCIES, "dependency"), (Intent.DEPENDENTS, "dependent")):
        if asked not in intent_set:
            continue
        for ev in _with(evidence, etype):
            if not held_somewhere(ev):
                continue
            claims.append(
                _claim(
                    f"{held_at(ev)}: {ev.content} ({_valid_text(ev)}){_through(ev, etype)}",
                    EpistemicStatus.FACT,
                    0.9,
                    [ev],
                    asked.value,
                )
            )
    if Intent.ALERT_FIRING in intent_set:
        written = time_references(question or "", as_of)
        asked_period = written.period or (firing_period.named() if firing_period else None)
        # "Which alerts fired before the incident?": those by the instant its words name.
        before = (
            min((r.at for r in refs if r.kind == "event" and r.at <= as_of), default=None)
            if asked_period is None and written.side is EventSide.BEFORE
            else None
        )
        fired_claims, fired_gaps = _alert_firing_claims(
            _with(evidence, "alert_firing"), question or "", as_of, asked_period, before
        )
        claims.extend(fired_claims)
        text_gaps = [*text_gaps, *fired_gaps]
    if Intent.INCIDENT_LIST in intent_set:
        incidents_listed, list_gaps = _incident_list_claims(
            evidence, question or "", as_of, incident_lists_cut
        )
        claims.extend(incidents_listed)
        text_gaps = [*text_gaps, *list_gaps]
    if Intent.SERVICE_STATUS in intent_set:
        status_claims, status_gaps = _service_status_claims(
            evidence, service_id, as_of, known_at, services_read
        )
        claims.extend(status_claims)
        text_gaps = [*text_gaps, *status_gaps]
    if Intent.ENTITY_LOOKUP in intent_set:
        for ev in _with(evidence, "entity"):
            # A relationship's text names its type and both ends ("svc:a AFFECTED_BY inc:b"):
            # said alone (before, after its type and key, the type printed twice:
            # "AFFECTED_BY AFFECTED_BY|svc:a|inc:b: svc:a AFFECTED_BY inc:b"; explorer e29 m9).
            statement = (
                ev.content
                if ev.kind == "relationship" and ev.content
                else f"{ev.type or 'Entity'} {ev.element_id}: {ev.content or _label(ev)}"
            )
            claims.append(
                _claim(
                    statement,
                    EpistemicStatus.FACT,
                    0.9,
                    [ev],
                    Intent.ENTITY_LOOKUP.value,
                )
            )
    if Intent.INCIDENT_LOOKUP in intent_set:
        for ev in _with(evidence, "incident_report"):
            if ev.type != "Incident":
                continue
            claims.append(
                _claim(
                    f"Incident {ev.element_id}: {_label(ev)}{_incident_facts(ev, as_of)} "
                    f"({_valid_by(ev, as_of)})",
                    EpistemicStatus.FACT,
                    0.95,
                    [ev],
                    Intent.INCIDENT_LOOKUP.value,
                )
            )
        claims.extend(_affected_claims(_with(evidence, "affected_service"), as_of))
        if asks_incident_duration(question or ""):
            claims.extend(_incident_duration_claims(_with(evidence, "incident_report"), as_of))
    firsts = _with(evidence, "error_first_seen")
    timeline = {Intent.INCIDENT_LOOKUP, Intent.ERROR_TIMELINE, Intent.DEPLOYMENT_CORRELATION}
    if intent_set & timeline:
        # A question naming no error is about the latest episode's errors: one first seen a day
        # or more before the latest one is of no episode of it, and is said to be so.
        by_as_of = [(t, ev) for t, ev in _sightings(firsts) if t <= as_of]
        latest, latest_ev = max(
            by_as_of, key=lambda p: (p[0], p[1].element_id), default=(None, None)
        )
        named_codes = _asked_error_codes(question)
        only_for_then = errors_read_only_for_then(question or "")
        # Read only to place the event of a period asked ("what was deployed the day before
        # the incident?"): the errors are no change of the period, so not stated.
        # Read only to place the words' event (the errors of "before the incident"): no answer
        # of their own to a change or an alert question.
        placing_only = only_for_then and (
            event_period is not None or Intent.ALERT_FIRING in intent_set
        )
        for ev in [] if placing_only else firsts:
            at = _instant(ev, _FIRST_SEEN_KEYS)
            when = f" first seen at {iso_utc(at)}" if at else ""
            if (taken := passed_over_error(ev, refs)) is not None:
                # The Time line says this error is "also found, not taken" for "then": read
                # only to place "then" ("who owned payment-api then?"), it is no answer (before,
                # the PAY-1002 error of 2025 was stated beside the owner at the rollout of
                # 09:55:12); asked for otherwise, it is said not to be that moment.
                if only_for_then:
                    continue
                words = taken.why.removeprefix("the question says ")
                when += f" (not what {words} is taken as)"
            if at and latest and latest_ev and not named_codes and latest - at > EPISODE:
                when += (
                    f" ({_human(latest - at)} before {_label(latest_ev)} was first seen at "
                    f"{iso_utc(latest)}: an older error, not of that episode)"
                )
            claims.append(
                _claim(
                    f"{_label(ev)}{when}: {ev.content}",
                    EpistemicStatus.FACT,
                    0.95,
                    [ev],
                    sorted(i.value for i in intent_set & timeline)[0],
                )
            )
    mechanisms = [ev for ev in _with(evidence, "mechanism") if ev.trust == "trusted"]
    # Evidence about one error is no mechanism of another: only the mechanisms of the time of
    # the errors the question names are read (PAY-1002's cause is not PAY-4097's postmortem).
    mechanisms, unbound_mechanism_gap = _mechanisms_of_asked_errors(mechanisms, firsts, question)
    # A record explaining errors that had not happened at as_of is hindsight: not claimed.
    mechanisms, hindsight_gap = _hindsight(mechanisms, firsts, question, errors_later, as_of)
    # The trusted documents that record no mechanism yet name a change as the cause (a draft
    # postmortem), held to the same errors and times as the mechanism records.
    reports, _ = _mechanisms_of_asked_errors(_cause_reports(evidence), firsts, question)
    reports, _ = _hindsight(reports, firsts, question, errors_later, as_of)
    correlation_gaps: list[MissingEvidence] = []
    if Intent.DEPLOYMENT_CORRELATION in intent_set:
        correlation = _correlation(
            evidence,
            firsts,
            mechanisms,
            conflicts,
            as_of,
            competing_checks,
            question,
            searched=search_stopped_by is None,
            then_rollout=_rollout_taken_as_then(evidence, refs, as_of),
            reports=reports,
            known_at=known_at,
        )
        verdict, confounders = correlation.verdict, correlation.confounders
        claims.extend(correlation.claims)
        correlation_gaps = correlation.missing
    if Intent.ROOT_CAUSE in intent_set:
        if unbound_mechanism_gap is not None and not mechanisms:
            text_gaps = [*text_gaps, unbound_mechanism_gap]
        for ev in mechanisms:
            claims.append(
                _claim(
                    f"Mechanism: {ev.content}",
                    EpistemicStatus.INFERENCE,
                    0.8,
                    [ev],
                    Intent.ROOT_CAUSE.value,
                )
            )
        if Intent.DEPLOYMENT_CORRELATION not in intent_set:
            causes = _candidate_causes(
                evidence, firsts, mechanisms, competing_checks, as_of, search_stopped_by, reports
            )
            claims.extend(causes.claims)
            confounders = causes.confounders
            correlation_gaps = causes.missing
    if Intent.CHANGE_HISTORY in intent_set and not intent_set & {
        Intent.DEPLOYMENT_CORRELATION,
        Intent.ROOT_CAUSE,
    }:
        changes = _changes_before(
            evidence,
            firsts,
            mechanisms,
            competing_checks,
            as_of,
            search_stopped_by,
            event_period.named()
            if event_period is not None
            else time_references(question or "", as_of).period,
            releases_unread,
            names_an_error=_names_an_error(question),
            then_rollout=_rollout_taken_as_then(evidence, refs, as_of),
            reports=reports,
        )
        if event_period is not None and event_period.last_only:
            # "What changed before the release?": the last changes before it.
            changes = _last_changes_before(
                evidence, event_period, as_of, search_stopped_by, services_read
            )
        claims.extend(changes.claims)
        confounders = changes.confounders
        correlation_gaps = changes.missing
    supported = supported_evidence_types(evidence)
    missing = missing_evidence(sorted(i.value for i in intent_set), supported)
    missing += correlation_gaps
    missing += text_gaps
    if Intent.ROOT_CAUSE in intent_set:
        missing = [_with_change_records(m, evidence) for m in missing]
        if hindsight_gap is not None:
            missing = [
                m for m in missing if not (m.evidence_type == "error_first_seen" and m.required)
            ]
            missing.append(hindsight_gap)
    if Intent.OWNERSHIP_AT_TIME in intent_set and ownership_period is not None:
        # A history cut by the row cap is no complete answer: the gap says where, and how
        # to ask for the rest.
        owners = _with(_owner_side(evidence), "ownership")
        missing += [
            MissingEvidence(
                evidence_type="ownership",
                intents=[Intent.OWNERSHIP_AT_TIME.value],
                description=history_cut_text(service, owners, ownership_period, read),
                required=True,
            )
            for service, read in ownership_cut
        ]
        missing += [
            MissingEvidence(
                evidence_type="ownership",
                intents=[Intent.OWNERSHIP_AT_TIME.value],
                description=entity_cut_text(entity, read, cut_at),
                required=True,
            )
            for entity, read, cut_at in owners_cut
        ]
        missing += _uncovered_period_gaps(owners, ownership_period, ownership_cut, owners_cut)
    if version_period is not None:
        # A read of the versions cut at its cap: versions of the period may lie past it.
        version_intents = [
            i.value
            for i in (Intent.APPLICABLE_RUNBOOK, Intent.APPLICABLE_POLICY)
            if i in intent_set
        ]
        missing += [
            MissingEvidence(
                evidence_type="runbook",
                intents=version_intents,
                description=f"the versions of the runbooks and policies of {anchor} were read "
                f"up to the read's cap, {read} rows: a version in force in the period asked "
                f"({version_period.why}) past them was not read; ask for a shorter period",
                required=True,
            )
            for anchor, read in versions_cut
        ]
        cut_anchors = {anchor for anchor, _ in versions_cut}
        missing += [
            MissingEvidence(
                evidence_type="runbook",
                intents=version_intents,
                description=f"no version of a runbook or policy of {anchor} is recorded in "
                f"force from {iso_utc(start)} to {iso_utc(end)} ({version_period.why}), in "
                "the records this subject may read: which one applied then is not known",
                required=True,
            )
            for anchor, start, end in uncovered_by_versions(
                [*_with(evidence, "runbook"), *_with(evidence, "policy")], version_period
            )
            # Its versions past the cap were not read: an apparent gap may be a cut.
            if anchor not in cut_anchors
        ]
    if Intent.OWNERSHIP_AT_TIME in intent_set and ownership_period is None:
        # A read cut before an instant asked (or as_of) may have left out its owner.
        instants = [as_of, *(r.at for r in refs)]
        for entity, read, cut_at in owners_cut:
            if cut_at is None or any(at >= cut_at for at in instants):
                missing.append(
                    MissingEvidence(
                        evidence_type="ownership",
                        intents=[Intent.OWNERSHIP_AT_TIME.value],
                        description=entity_cut_text(entity, read, cut_at),
                        required=True,
                    )
                )
    if Intent.OWNERSHIP_AT_TIME in intent_set and ownership_period is None:
        missing += _unowned_instant_gaps(
            _owner_side(evidence), refs, as_of, owners_dropped, team_side=evidence
        )
        unrecorded = _unrecorded_owned_gaps(
            evidence, owners_asked, not_valid_then, refs, as_of, owners_dropped
        )
        if unrecorded:
            # Said of the entity asked, with why: the rubric's generic line adds nothing, nor
            # does the would-strengthen line of a runbook found by its words (the same gap).
            generic = missing_evidence([Intent.OWNERSHIP_AT_TIME.value], set())[0]
            said = {generic.description, *(_text_owner_gap(e).description for e, _ in unrecorded)}
            missing = [m for m in missing if m.description not in said]
            missing += [gap for _, gap in unrecorded]
    since = SINCE_THEN.search(question or "")
    if Intent.OWNERSHIP_AT_TIME in intent_set and ownership_period is None and since:
        # Never silently one instant for a period: the owners answered are at the times
        # stated, and the period is asked for in dates.
        missing.append(
            MissingEvidence(
                evidence_type="ownership",
                intents=[Intent.OWNERSHIP_AT_TIME.value],
                description=f"the question says {since.group(0)!r}: a period that starts at an "
                "event is not placed for an owner question, so the owners over it are not "
                "answered (those stated are at the times they say): ask with 'between <date> "
                "and <date>'",
                required=True,
            )
        )
    if Intent.OWNERSHIP_AT_TIME in intent_set and team_words is not None:
        missing = _team_gaps(
            missing, listed, team_words, teams, refs, as_of, ownership_period, kinds
        )
    missing = _incident_not_recorded(missing, evidence, question, as_of)
    if Intent.INCIDENT_LOOKUP in intent_set:
        missing = _no_incident_found(
            missing, evidence, question, as_of, known_at, services_read, service_id
        )
    later = (
        ", ".join(f"{id_} starts {iso_utc(at)}" for id_, at in sorted(started_later.items()))
        if started_later
        else None
    )
    if not firsts and service_id is None and names_no_errors(question):
        # "What changed before the errors?" alone: whose errors is the one thing it lacks.
        unnamed = (
            NO_ERRORS_NAMED
            if later is None
            else STARTED_LATER.format(as_of=iso_utc(as_of), later=later, what="error")
        )
        missing = [
            m.model_copy(update={"description": unnamed})
            if m.evidence_type == "error_first_seen" and m.required
            else m
            for m in missing
        ]
    if (
        service_id is None
        and team_words is None  # a team asked about from its side is named (its own gap)
        and names_no_errors(question)
        and not any(_SUBJECT_ID.search(ev.element_id) for ev in evidence)
        # A service the question's words found ("errors on checkout") is named: its
        # mechanism was sought, none known at as_of (nothing ties its errors by then).
        and not services_read
    ):
        missing = [
            m.model_copy(
                update={
                    "description": NOTHING_NAMED.format(
                        what=NOTHING_NAMED_GAPS[m.evidence_type][0],
                        example=NOTHING_NAMED_GAPS[m.evidence_type][1],
                    )
                    if later is None
                    else STARTED_LATER.format(
                        as_of=iso_utc(as_of),
                        later=later,
                        what=NOTHING_NAMED_GAPS[m.evidence_type][0],
                    )
                }
            )
            if m.evidence_type in NOTHING_NAMED_GAPS and m.required
            else m
            for m in missing
        ]
    # A question from a team's side reads the team by its name: its gaps say what is known of
    # the team ("no team named ...", "no OWNS record of team:X holds at ..."), not a name.
    if unresolved_names and team_words is None and not firsts and not services_read:
        missing = _unresolved_name_gaps(missing, unresolved_names)
    if Intent.OWNERSHIP_AT_TIME in intent_set:
        missing += _unread_owner_gaps(evidence, owners_unread)
        missing += _alert_unfound_gaps(alerts_unfound, as_of)
    if search_stopped_by is not None:
        missing = _not_searched_to_the_end(missing, search_stopped_by)
    if intent_set & {Intent.CHANGE_HISTORY, Intent.RELEASE_LOOKUP}:
        # A list cut at a read's row cap is no complete answer, whether or not the search
        # finished: said, with how to narrow it.
        missing += [
            MissingEvidence(
                evidence_type="deployment_time"
                if cut.template_id
                in (RELEASES_TEMPLATE, ROLLOUTS_TEMPLATE, TENANT_ROLLOUTS_TEMPLATE)
                else "change_event",
                intents=sorted(
                    i.value for i in intent_set & {Intent.CHANGE_HISTORY, Intent.RELEASE_LOOKUP}
                ),
                description=cut.description(),
                required=True,
            )
            for cut in window_cuts
        ]
    if Intent.OWNERSHIP_AT_TIME in intent_set and team_words is not None:
        # A team's list cut at a read's row cap is no complete answer either.
        missing += [
            MissingEvidence(
                evidence_type="ownership",
                intents=[Intent.OWNERSHIP_AT_TIME.value],
                description=cut.description(),
                required=True,
            )
            for cut in team_cuts
        ]
    # What the KG has no record of (who was on call, whether the runbook was followed) is
    # said, never skipped: the run is `partial`.
    # A dependency list cut at its walk's row cap is no whole blast radius: said, a gap.
    missing += _capped_walk_gaps(intent_set, walks_capped)
    missing += unrecorded_evidence(unrecorded_asks(question or ""))
    if "runbook_followed" in unrecorded_asks(question or ""):
        rollbacks = _rollbacks_recorded(evidence)
        claims += rollbacks
        if rollbacks:
            # The record says one action was taken: what is still unknown is the rest.
            missing = [
                m.model_copy(update={"description": ROLLBACK_ONLY_RECORDED})
                if m.evidence_type == "runbook_followed"
                else m
                for m in missing
            ]
    unread = unread_words(question or "", [Intent(i) for i in intents])
    if unread is not None:
        # Read as nothing but its names: a name read back is no answer to it (`partial`).
        missing.append(
            unread_question_gap(unread, other_language=asked_in_another_language(question or ""))
        )
    if Intent.APPLICABLE_RUNBOOK in intent_set and version_period is None:
        missing += _no_runbook_at_as_of_gaps(
            _with(evidence, "runbook"), refs, as_of, known_at, search_stopped_by
        )
    for at in sorted({at for _, at in unknown_then}):
        # The question asks what applied at that time and the KG cannot say: the run does not
        # answer it as asked, so it is `partial` (docs/runbooks.md).
        ids = sorted({element_id for element_id, t in unknown_then if t == at})
        missing.append(
            MissingEvidence(
                evidence_type="runbook",
                intents=[Intent.APPLICABLE_RUNBOOK.value],
                description=f"no version of {', '.join(ids)} was recorded by {iso_utc(at)}: "
                "what it said then is not known",
                required=True,
            )
        )
    if (
        Intent.DEPLOYMENT_CORRELATION in intent_set
        and not mechanisms
        and not any(m.evidence_type == "mechanism" for m in missing)
    ):
        missing.append(
            MissingEvidence(
                evidence_type="mechanism",
                intents=[Intent.DEPLOYMENT_CORRELATION.value],
                description="no mechanism evidence (rollback or controlled comparison, "
                "config diff): the correlation is in time only",
                required=False,
            )
        )
    if (
        Intent.DEPLOYMENT_CORRELATION in intent_set
        and verdict in (Verdict.CONFIRMED, Verdict.LIKELY)
        and not (competing_checks is not None and competing_checks.complete)
    ):
        # No verdict stronger than its search: the competing causes were not all checked.
        verdict = Verdict.UNCERTAIN
        not_run = competing_checks.not_run if competing_checks is not None else []
        missing.append(
            MissingEvidence(
                evidence_type="change_event",
                intents=[Intent.DEPLOYMENT_CORRELATION.value],
                description="competing-cause checks did not all run for the window before the "
                "first error"
                + (f" ({'; '.join(not_run)})" if not_run else "")
                + ": the verdict stays uncertain",
                required=False,
            )
        )
    if cause_cuts:
        # Candidates past a read's row cap were never weighed: the list is not all of them,
        # so no verdict is drawn between those read.
        cause_intents = sorted(
            i.value
            for i in intent_set
            & {Intent.DEPLOYMENT_CORRELATION, Intent.ROOT_CAUSE, Intent.CHANGE_HISTORY}
        ) or sorted(i.value for i in intent_set)
        missing += [
            MissingEvidence(
                evidence_type="change_event"
                if cut.template_id == CHANGES_TEMPLATE
                else "deployment_time",
                intents=cause_intents,
                description=cut.description(),
                required=True,
            )
            for cut in cause_cuts
        ]
        if verdict in (Verdict.CONFIRMED, Verdict.LIKELY) and any(
            cut.purpose == "causes" for cut in cause_cuts
        ):
            verdict = Verdict.UNCERTAIN
    if causes_dropped:
        # Competing causes read but left out of the pack were never weighed either.
        missing += [
            MissingEvidence(
                evidence_type=dropped.evidence_type,
                intents=sorted(
                    i.value
                    for i in intent_set
                    & {Intent.DEPLOYMENT_CORRELATION, Intent.ROOT_CAUSE, Intent.CHANGE_HISTORY}
                )
                or sorted(i.value for i in intent_set),
                description=dropped.description(),
                required=True,
            )
            for dropped in causes_dropped
        ]
        if verdict in (Verdict.CONFIRMED, Verdict.LIKELY):
            verdict = Verdict.UNCERTAIN
    if period_was_read:
        # "What changed in the last 24 hours?": the period was read itself, no first error
        # is needed to answer it.
        missing = [
            m
            for m in missing
            if not (
                m.evidence_type == "error_first_seen"
                and set(m.intents) <= {Intent.CHANGE_HISTORY.value, Intent.RELEASE_LOOKUP.value}
            )
        ]
    unique = {c.claim_id: c for c in claims}
    # Readable and deterministic: per intent, facts first, then inferences, then hypotheses.
    rank = {EpistemicStatus.FACT: 0, EpistemicStatus.INFERENCE: 1, EpistemicStatus.HYPOTHESIS: 2}
    # Releases and change events read as a timeline, in every answer: by when each happened,
    # then its id, ahead of the untimed claims of their intent and status (those by their
    # text). Before (h29-claims), only a period's answer did; any other sorted its releases
    # by their text, `crowd-10` before `crowd-2`. Claims are not in the pack: its hash holds.
    change_times = _change_times(evidence)
    ordered = sorted(
        unique.values(),
        key=lambda c: (
            c.intent,
            rank[c.epistemic_status],
            *_claim_time_key(c, change_times),
            c.statement,
            c.claim_id,
        ),
    )
    confounders = sorted(confounders, key=lambda c: (c.at, c.element_id))
    return ClaimSet(
        claims=ordered, verdict=verdict, confounders=confounders, missing_evidence=missing
    )


def _change_times(evidence: Sequence[Evidence]) -> dict[str, tuple[datetime, str]]:
    """(when it happened, element id) of each release and change event (and incident an
    incident list read: its start), by evidence id."""
    times: dict[str, tuple[datetime, str]] = {}
    for ev in evidence:
        if ev.type == "Incident" and (ev.template or "").startswith("incidents_in_period@"):
            # An incident list reads in start order too.
            started = instant_of(ev.context.get("started_at")) or ev.valid_from
            if started is not None:
                times[ev.evidence_id] = (started, ev.element_id)
            continue
        if ev.type not in ("Deployment", "ChangeEvent"):
            continue
        at = instant(ev, DEPLOY_TIME_KEYS if ev.type == "Deployment" else CHANGE_TIME_KEYS)
        if at is not None:
            times[ev.evidence_id] = (at, ev.element_id)
    return times


def _claim_time_key(
    claim: Claim, timed: Mapping[str, tuple[datetime, str]]
) -> tuple[int, datetime, str]:
    """A claim's place on a timeline: its earliest release or change event (untimed last)."""
    held = sorted(timed[i] for i in claim.evidence_ids if i in timed)
    if not held:
        return (1, datetime.min.replace(tzinfo=UTC), "")
    return (0, *held[0])


def names_no_errors(question: str | None) -> bool:
    """Whether the question names nothing whose errors could be looked up (no id, error
    code, release, alert or name): "What changed before the errors?"."""
    return not extract_mentions(question or "").texts()


def _holds_text(
    ev: Evidence,
    refs: Sequence[ReferenceTime],
    as_of: datetime,
    successor: Evidence | None = None,
) -> str:
    """`At <label>, <time> (<why>) and at as_of, <time>` for the instants a record holds at
    (less those where its successor, also admitted, holds instead)."""

    def holds(at: datetime) -> bool:
        return holds_at(ev, at) and not (successor is not None and holds_at(successor, at))

    parts = [f"{r.describe()} ({r.why})" for r in refs if holds(r.at)]
    if holds(as_of):
        parts.append(f"as_of, {iso_utc(as_of)}")
    if not parts:
        parts.append(f"as_of, {iso_utc(as_of)}")
    return "At " + " and at ".join(parts)


def _span_text(ev: Evidence, as_of: datetime) -> str:
    """`From A to B`, or `From A, still at as_of, <as_of>`, of a record's valid interval."""
    start = f"From {iso_utc(ev.valid_from)}" if ev.valid_from else "From the first record"
    if ev.valid_to is None:
        return f"{start}, still at as_of, {iso_utc(as_of)}"
    return f"{start} to {iso_utc(ev.valid_to)}"


def _was(ev: Evidence) -> str:
    """`is` of a version still in force (no end), else `was`."""
    return "is" if ev.valid_to is None else "was"


def _dated_in(ev: Evidence, period: OwnershipPeriod) -> bool:
    """Whether a version with a stated start holds at some instant of the period (an undated
    one is placed by its record times, record_time.py)."""
    return ev.valid_from is not None and period.overlaps(ev)


def _owners_in_period(
    owners: Sequence[Evidence],
    period: OwnershipPeriod,
    as_of: datetime,
    held_at: Callable[[Evidence], str],
) -> list[Claim]:
    """Each owner of the period asked, by its valid interval: `From A to B (the question says
    '...'): team OWNS service` (statements sort by their start, so the claims read in order);
    the owner at as_of after the period as at any time (`held_at`: `At as_of, ...`)."""
    out = []
    for ev in owners:
        held = as_held(ev)  # a team's record of a runbook version: no longer than it
        if not period.overlaps(held):
            statement = f"{held_at(held)}: {ev.content} ({_valid_text(ev)}{_version_end(ev)})"
            claim = _claim(
                statement, EpistemicStatus.FACT, 0.95, [ev], Intent.OWNERSHIP_AT_TIME.value
            )
            out.append(claim)
            continue
        out.append(
            _claim(
                f"{_span_text(held, as_of)} ({period.why}): {ev.content}",
                EpistemicStatus.FACT,
                0.95,
                [ev],
                Intent.OWNERSHIP_AT_TIME.value,
            )
        )
    return out


def _correction_claims(
    owners: Sequence[Evidence], older: Sequence[Evidence], period: OwnershipPeriod
) -> list[Claim]:
    """One claim per span of the period whose owner a later record corrected: who was
    recorded before the correction and who since, bound to the current records of the
    edges concerned (the older records are in the run's `version_history` calls)."""
    out = []
    for c in ownership_corrections([*owners, *older], period):
        start = f"From {iso_utc(c.start)}" if c.start else "Until"
        claim = _correction_claim(f"{start} to {iso_utc(c.end)}", c, owners)
        out += [claim] if claim is not None else []
    return out


def _correction_claim(
    when: str, c: OwnershipCorrection, owners: Sequence[Evidence]
) -> Claim | None:
    """`<when> the owner of X was corrected at T: recorded as A until then, B since (...)`,
    bound to the current records of the edges concerned (None when none is admitted)."""
    evs = [ev for ev in owners if ev.element_id in c.keys]
    if not evs:
        return None
    # Read from a team's side (its own records only), no team before or since says only
    # that the team did not own it then: another team may have.
    team_side = all(ev.context.get("asked_team") for ev in evs)
    was = ", ".join(c.before) if c.before else f"not {', '.join(c.after)}"
    since = ", ".join(c.after) if c.after else (f"not {was}" if team_side else "no owner")
    return _claim(
        f"{when} the owner of {c.owned} was corrected at "
        f"{iso_utc(c.corrected_at)}: recorded as {was} until then, {since} since "
        f"(asked with --known-at before the correction, the answer is {was})",
        EpistemicStatus.FACT,
        0.95,
        evs,
        Intent.OWNERSHIP_AT_TIME.value,
    )


def _period_retraction_claims(
    evidence: Sequence[Evidence], records: Sequence[Evidence], period: OwnershipPeriod
) -> list[Claim]:
    """One claim per retracted OWNS record whose interval holds some instant of the period:
    it was recorded, and the record was retracted (when, why), citing its tombstone (in the
    pack). A fact about the records, never that the team owned it: in time order with the
    owners (`From A to B (...)`)."""
    in_pack = {ev.evidence_id for ev in evidence}
    out = []
    for r in retractions_in(records, period):
        if r.tombstone.evidence_id not in in_pack:
            continue
        start = f"From {iso_utc(r.start)}" if r.start else "From the first record"
        span = f"{start} to {iso_utc(r.end)}" if r.end else f"{start}, open-ended"
        out.append(
            _claim(
                f"{span} ({period.why}): {retraction_text(r, span=False)}",
                EpistemicStatus.FACT,
                0.95,
                [r.tombstone],
                Intent.OWNERSHIP_AT_TIME.value,
            )
        )
    return out


def _split_kinds(
    owners: Sequence[Evidence], kinds: frozenset[str] | None
) -> tuple[list[Evidence], list[Evidence]]:
    """(records stated one by one, records of a team of another kind than the question asks
    for): "Which services did X own?" lists X's services and counts the rest."""
    if kinds is None:
        return list(owners), []
    other = [
        ev
        for ev in owners
        if ev.context.get("asked_team") and ev.context.get("owned_kind") not in (None, *kinds)
    ]
    return [ev for ev in owners if ev not in other], other


_KIND_NAMES = {"service": "service", "alert": "alert", "runbook": "runbook version"}


def _other_kinds_claims(
    others: Sequence[Evidence], kinds: frozenset[str] | None, when: Callable[[Evidence], str]
) -> list[Claim]:
    """One claim per team and time: `<when>: team:x also owned 1 alert and 2 runbook
    versions, not services, which the question asks for: <ids>`, bound to their records."""
    groups: dict[tuple[str, str], list[Evidence]] = {}
    for ev in others:
        groups.setdefault((str(ev.context.get("asked_team")), when(ev)), []).append(ev)
    asked = " or ".join(_KIND_NAMES[k] + "s" for k in sorted(kinds or ()))
    out = []
    for (team, said), records in sorted(groups.items()):
        counted = []
        for kind in ("service", "alert", "runbook"):
            n = len(
                {
                    str(ev.context.get("owned"))
                    for ev in records
                    if ev.context.get("owned_kind") == kind
                }
            )
            if n:
                counted.append(f"{n} {_KIND_NAMES[kind]}{'' if n == 1 else 's'}")
        owned = ", ".join(sorted({str(ev.context.get("owned")) for ev in records}))
        out.append(
            _claim(
                f"{said}: {team} also owned {' and '.join(counted)}, not {asked}, which the "
                f"question asks for: {owned}",
                EpistemicStatus.FACT,
                0.95,
                sorted(records, key=lambda ev: ev.evidence_id),
                Intent.OWNERSHIP_AT_TIME.value,
            )
        )
    return out


def _version_end(ev: Evidence) -> str:
    """`; runbook:x@v3 in force until T` of a team's record of a runbook version that ended
    before the record did (its owner is stated no later than that)."""
    held = as_held(ev)
    if held is ev or held.valid_to is None:
        return ""
    return f"; {ev.context.get('owned')} in force until {iso_utc(held.valid_to)}"


def _owner_side(evidence: Sequence[Evidence]) -> list[Evidence]:
    """The evidence less what a team owned, read from the team's side (`owned_by_team`): a
    team's records say nothing of who owned the rest of the time (another team may have)."""
    return [ev for ev in evidence if not ev.context.get("asked_team")]


def _team_gaps(
    missing: list[MissingEvidence],
    evidence: Sequence[Evidence],
    team_words: str,
    teams: Sequence[str],
    refs: Sequence[ReferenceTime],
    as_of: datetime,
    period: OwnershipPeriod | None,
    kinds: frozenset[str] | None = None,
) -> list[MissingEvidence]:
    """A question from a team's side: no team linked (none by that name or id that the
    subject may read, said alike whether it exists or not), or a team with no OWNS record
    (of the kinds asked, `kinds`) at the times asked, replaces the rubric's generic line."""
    generic = missing_evidence([Intent.OWNERSHIP_AT_TIME.value], set())[0].description
    named = [r.at for r in refs if r.kind != "as_of"] if period is None else []
    # A record stated: one holding at a time the question names (any, over a period or at as_of),
    # read from the team's side or, the same record, from a service's (--service).
    owned = {
        str(ev.context.get("asked_team") or ev.context.get("team"))
        for ev in _with(evidence, "ownership")
        if not named or any(holds_at(as_held(ev), at) for at in named)
    } & set(teams)
    when = (
        f"in the period asked ({period.why})"
        if period is not None
        else "at "
        + " or ".join(dict.fromkeys(f"{r.describe()} ({r.why})" for r in refs if r.kind != "as_of"))
        if any(r.kind != "as_of" for r in refs)
        else f"at as_of, {iso_utc(as_of)}"
    )
    said = []
    if not teams:
        said.append(
            f"no team named {team_words!r} is recorded in the records this subject may read: "
            "what it owned is not known"
        )
    of_kind = " of " + " or ".join(f"a {_KIND_NAMES[k]}" for k in sorted(kinds)) if kinds else ""
    for team in sorted(set(teams) - owned):
        said.append(
            f"no OWNS record of {team}{of_kind} holds {when} in the records this subject may "
            "read: what it owned then is not known"
        )
    if not said:
        return missing
    return [m for m in missing if m.description != generic] + [
        MissingEvidence(
            evidence_type="ownership",
            intents=[Intent.OWNERSHIP_AT_TIME.value],
            description=text,
            required=True,
        )
        for text in said
    ]


def _uncovered_period_gaps(
    owners: Sequence[Evidence],
    period: OwnershipPeriod,
    ownership_cut: Sequence[tuple[str, int]],
    owners_cut: Sequence[tuple[str, int, datetime | None]],
) -> list[MissingEvidence]:
    """A required `ownership` gap for each stretch of the period asked at which no owner of a
    service, alert or runbook version is recorded in what the subject may read (before its
    first record, between two, after the last); not where a read's row cap cut the history,
    whose own gap says so."""
    known_from: dict[str, datetime] = {}
    for service, read in ownership_cut:
        cut_at = history_cut_at(service, owners, period, read)
        if cut_at is not None:
            known_from[service] = cut_at
    cut_entities = {entity for entity, _, _ in owners_cut}
    gaps = []
    for owned, start, end in uncovered_in_period(owners, period, known_from):
        if owned in cut_entities:
            continue  # its newest records were not read: an apparent gap may be a cut
        since = iso_utc(start) if start is not None else "the first record"
        gaps.append(
            MissingEvidence(
                evidence_type="ownership",
                intents=[Intent.OWNERSHIP_AT_TIME.value],
                description=f"no owner of {owned} is recorded from {since} to {iso_utc(end)} "
                f"({period.why}), in the records this subject may read: who owned it then is "
                "not known",
                required=True,
            )
        )
    return gaps


def _unowned_instant_gaps(
    evidence: Sequence[Evidence],
    refs: Sequence[ReferenceTime],
    as_of: datetime,
    owners_dropped: Sequence[Evidence] = (),
    team_side: Sequence[Evidence] = (),
) -> list[MissingEvidence]:
    """A required `ownership` gap for each instant a single-time owner question names (not
    as_of) at which no owner of a service is recorded in what the subject may read: the owner
    stated at as_of answers another time than the one asked (a retraction, when readable, is
    stated as a claim beside it; the gap reads the same either way). A record read from a
    team's side (`team_side`) that holds at the instant is its owner there too: the same
    record read from the service's side was a duplicate of it."""
    owners = _with(evidence, "ownership")
    teams_held = [
        ev
        for ev in _with(team_side, "ownership")
        if ev.context.get("asked_team") and ev.status == "active"
    ]
    asked = {r.at: f"{r.describe()} ({r.why})" for r in reversed(refs) if r.kind != "as_of"}
    unowned_now = {service for service, _ in unowned_at(owners, [as_of])}
    gaps = []
    for service, at in unowned_at(owners, asked):
        if any(
            ev.context.get("owned") == service and holds_at(as_held(ev), at) for ev in teams_held
        ):
            continue
        now = service not in unowned_now
        cut = _cut_for_budget(owners_dropped, service, [at])
        gaps.append(
            MissingEvidence(
                evidence_type="ownership",
                intents=[Intent.OWNERSHIP_AT_TIME.value],
                description=(
                    f"the owner of {service} at {asked[at]} is not in the answer: {cut}"
                    if cut
                    else f"no owner of {service} is recorded at {asked[at]}, in the records "
                    "this subject may read: who owned it then is not known"
                )
                + (" (the owner stated is the owner at as_of, not then)" if now else ""),
                required=True,
            )
        )
    return gaps


def _unrecorded_owned_gaps(
    evidence: Sequence[Evidence],
    owners_asked: Sequence[str],
    not_valid_then: Sequence[str],
    refs: Sequence[ReferenceTime],
    as_of: datetime,
    owners_dropped: Sequence[Evidence] = (),
) -> list[tuple[str, MissingEvidence]]:
    """A required `ownership` gap for each alert or runbook version whose own owner was
    asked and read but none of whose OWNS records was admitted, with the entity: at as_of and
    every time asked it had no owner recorded (often it was not recorded itself yet: an alert
    added later), so the owner of a service it fires on is no answer (`_unowned_instant_gaps`
    covers one with a record that holds at some other instant asked). A runbook page whose
    front matter names a contact in words (`owner_slack`) says so in its gap, as what it is."""
    owned = {
        str(ev.context.get("owned"))
        for ev in _with(evidence, "ownership")
        if ev.status == "active" and ev.context.get("owned") is not None
    }
    asked = {r.at: f"{r.describe()} ({r.why})" for r in reversed(refs) if r.at <= as_of}
    asked.setdefault(as_of, f"as_of, {iso_utc(as_of)}")
    when = " and at ".join(label for _, label in sorted(asked.items()))
    gaps = []
    for entity in sorted(set(owners_asked) - owned):
        cut = _cut_for_budget(owners_dropped, entity, list(asked))
        if cut:
            gaps.append(
                (
                    entity,
                    MissingEvidence(
                        evidence_type="ownership",
                        intents=[Intent.OWNERSHIP_AT_TIME.value],
                        description=f"the owner of {entity} at {when} is not in the answer: {cut} "
                        "(the owner of another entity is not its owner)",
                        required=True,
                    ),
                )
            )
            continue
        why = (
            f"{entity} itself is not recorded then (its record is valid only at other "
            "times), so no owner of it is"
            if entity in not_valid_then
            else "no OWNS record of it this subject may read holds then"
        )
        gaps.append(
            (
                entity,
                MissingEvidence(
                    evidence_type="ownership",
                    intents=[Intent.OWNERSHIP_AT_TIME.value],
                    description=f"no owner of {entity} is recorded at {when}: {why}; who owned "
                    "it then is not known (the owner of another entity is not its owner)"
                    + _page_contact_words(evidence, entity),
                    required=True,
                ),
            )
        )
    return gaps


def _page_contact_words(evidence: Sequence[Evidence], entity: str) -> str:
    """`; its page names a contact: #team (from front matter owner_slack, not a team
    record)` for a runbook in the pack whose front matter names one (what its card shows as
    Contact), else "": words on the page, never an owner of record."""
    contacts = sorted(
        {
            contact
            for ev in _with(evidence, "runbook")
            if ev.element_id == entity and (contact := front_matter_contact(ev.props))
        }
    )
    return f"; its page names a contact: {'; '.join(contacts)}" if contacts else ""


def _cut_for_budget(
    owners_dropped: Sequence[Evidence], owned: str, instants: Sequence[datetime]
) -> str:
    """Why no owner of `owned` is in the answer when the pack dropped an OWNS record of it
    holding at one of `instants` for the budget (worded as a runbook dropped so), else ""."""
    ids = sorted(
        {
            ev.element_id
            for ev in owners_dropped
            if ev.context.get("service", ev.context.get("owned")) == owned
            and any(holds_at(ev, at) for at in instants)
        }
    )
    if not ids:
        return ""
    return (
        f"its OWNS record {', '.join(ids)} was read, then dropped for the evidence budget "
        "(budget_exceeded); a larger --budget-tokens reads it"
    )


def _unresolved_name_gaps(
    missing: list[MissingEvidence], names: Sequence[str]
) -> list[MissingEvidence]:
    """The required gaps of what is read for a service, and those saying the question names
    none, said as not looked for: the service named resolved to nothing visible."""
    said = ", ".join(repr(n) for n in names)
    named_none = ("the question names no service", NO_ERRORS_NAMED)
    out = []
    for m in missing:
        what = _UNRESOLVED_GAPS.get(m.evidence_type)
        if what is None and m.description.startswith(named_none):
            what = NOTHING_NAMED_GAPS.get(m.evidence_type, (m.evidence_type,))[0]
        if what is not None and m.required:
            m = m.model_copy(update={"description": NAME_UNRESOLVED.format(names=said, what=what)})
        out.append(m)
    return out


def _unread_owner_gaps(
    evidence: Sequence[Evidence], owners_unread: Sequence[str]
) -> list[MissingEvidence]:
    """A required `ownership` gap for each entity whose own owners' read failed and none of
    whose OWNS records was admitted otherwise: its owner is unknown, not absent."""
    owned = {str(ev.context.get("owned")) for ev in _with(evidence, "ownership")}
    return [
        MissingEvidence(
            evidence_type="ownership",
            intents=[Intent.OWNERSHIP_AT_TIME.value],
            description=f"{UNKNOWN_NOT_ABSENT}who owned {entity}: the read of its owners "
            "(owners_of) failed (see its tool calls: a query timed out or Neo4j refused it); "
            "ask again (the owner of another entity is not its owner)",
            required=True,
        )
        for entity in sorted(set(owners_unread) - owned)
    ]


def _alert_unfound_gaps(
    alerts_unfound: Sequence[tuple[str, bool]], as_of: datetime
) -> list[MissingEvidence]:
    """A required `ownership` gap for each service whose alerts were read for an alert's
    owner and none was found (or the read failed): the owner asked is an alert's."""
    return [
        MissingEvidence(
            evidence_type="ownership",
            intents=[Intent.OWNERSHIP_AT_TIME.value],
            description=(
                f"{UNKNOWN_NOT_ABSENT}which alert fired on {service}: the read of the alerts "
                "that fired on it failed (see its tool calls); ask again"
                if failed
                else f"no alert is recorded as firing on {service} by as_of {iso_utc(as_of)} "
                "in the records this subject may read"
            )
            + ", so no alert's owner is stated (the owner of the service is not the alert's "
            "owner)",
            required=True,
        )
        for service, failed in alerts_unfound
    ]


def _instant_retraction_claims(
    evidence: Sequence[Evidence],
    records: Sequence[Evidence],
    refs: Sequence[ReferenceTime],
    as_of: datetime,
) -> list[Claim]:
    """For each instant a single-time owner question names (and as_of) at which no owner of
    a service is recorded, the retracted OWNS records that held then: no owner is recorded,
    and why (the retraction), citing the tombstone (in the pack)."""
    in_pack = {ev.evidence_id for ev in evidence}
    owners = [ev for ev in _with(evidence, "ownership") if ev.status == "active"]
    instants = {r.at: f"{r.describe()} ({r.why})" for r in reversed(refs)}
    instants.setdefault(as_of, f"as_of, {iso_utc(as_of)}")
    named: dict[str, tuple[OwnershipRetraction, list[str]]] = {}
    for at, label in sorted(instants.items()):
        for r in retractions_unowned_at(records, owners, at):
            if r.tombstone.evidence_id in in_pack:
                named.setdefault(r.tombstone.evidence_id, (r, []))[1].append(label)
    return [
        _claim(
            f"At {' and at '.join(labels)}: no owner of {r.owned} is recorded: "
            f"{retraction_text(r)}",
            EpistemicStatus.FACT,
            0.95,
            [r.tombstone],
            Intent.OWNERSHIP_AT_TIME.value,
        )
        for r, labels in named.values()
    ]


def _team_retraction_claims(
    evidence: Sequence[Evidence],
    records: Sequence[Evidence],
    refs: Sequence[ReferenceTime],
    as_of: datetime,
) -> list[Claim]:
    """For a question from a team's side, each retracted OWNS record of the team that held
    at an instant its answer states (those named, else as_of): `At <when>: team:a was
    recorded as the owner of svc:b ...; that record was retracted at R: <reason>`, citing
    the tombstone (in the pack). Who else owned it then was not read: nothing is said of it."""
    in_pack = {ev.evidence_id for ev in evidence}
    named = [r for r in refs if r.kind != "as_of"]
    labels = {r.at: f"{r.describe()} ({r.why})" for r in reversed(named)}
    labels.setdefault(as_of, f"as_of, {iso_utc(as_of)}")
    told: dict[str, tuple[OwnershipRetraction, list[str]]] = {}
    for at in team_side_instants(as_of, (r.at for r in named)):
        for r in team_retractions_at(records, at):
            if r.tombstone.evidence_id in in_pack:
                told.setdefault(r.tombstone.evidence_id, (r, []))[1].append(labels[at])
    return [
        _claim(
            f"At {' and at '.join(said)}: {retraction_text(r)}",
            EpistemicStatus.FACT,
            0.95,
            [r.tombstone],
            Intent.OWNERSHIP_AT_TIME.value,
        )
        for r, said in told.values()
    ]


def _instant_correction_claims(
    owners: Sequence[Evidence],
    records: Sequence[Evidence],
    refs: Sequence[ReferenceTime],
    as_of: datetime,
) -> list[Claim]:
    """For each instant a single-time owner question names (and as_of), each correction of
    who was recorded as the owner then: what an earlier --known-at answered, and since when
    the records say otherwise; bound to the current records of the edges concerned. The
    admitted records (`owners`) and, when read, every record of the service's OWNS edges (the
    run's `ownership_records` call)."""
    records = [*owners, *records]
    instants = {r.at: f"{r.describe()} ({r.why})" for r in reversed(refs)}
    instants.setdefault(as_of, f"as_of, {iso_utc(as_of)}")
    # One claim per correction, naming every instant asked that it corrected.
    labels: dict[tuple[str, datetime, datetime], tuple[OwnershipCorrection, list[str]]] = {}
    for at, label in sorted(instants.items()):
        for c in corrections_at(records, at):
            labels.setdefault((c.owned, c.corrected_at, c.end), (c, []))[1].append(label)
    claims = [
        _correction_claim(f"At {' and at '.join(named)}:", c, owners)
        for c, named in labels.values()
    ]
    return [claim for claim in claims if claim is not None]


# How the gap of no runbook version in force at as_of begins (a stale --known-at).
NO_RUNBOOK_AT_AS_OF = "no runbook version is recorded in force at as_of"


def runbook_in_force(ev: Evidence, at: datetime) -> bool:
    """Whether a runbook version is the one in force at `at`: by its valid interval, or for
    an undated one by its record times (recorded by then, not yet replaced)."""
    return _undated_holds(ev, at) if undated(ev) else holds_at(ev, at)


def states_at_as_of(
    intents: Sequence[str], claims: Sequence[Claim], evidence: Sequence[Evidence], as_of: datetime
) -> bool:
    """Whether the answer states, for each owner, runbook or policy question it asks, a record
    in force at `as_of` (beside what held "then"): only then may the answer be said to hold at
    as_of too. A release or an error is an event; a version that ended before as_of (a stale
    --known-at that holds no later one) holds only then."""
    by_id = {ev.evidence_id: ev for ev in evidence}
    state_intents = {
        Intent.OWNERSHIP_AT_TIME.value: "ownership",
        Intent.APPLICABLE_RUNBOOK.value: "runbook",
        Intent.APPLICABLE_POLICY.value: "policy",
    }

    def holds(claim: Claim, etype: str) -> bool:
        for ev in (by_id[i] for i in claim.evidence_ids if i in by_id):
            if etype not in ev.evidence_types:
                continue
            if runbook_in_force(ev, as_of) if etype == "runbook" else holds_at(as_held(ev), as_of):
                return True
        return False

    asked = [i for i in state_intents if i in intents]
    return bool(asked) and all(
        any(claim.intent == i and holds(claim, state_intents[i]) for claim in claims) for i in asked
    )


def _served_over(ev: Evidence, runbooks: Sequence[Evidence], as_of: datetime) -> Evidence | None:
    """For an alert's or error code's own page that is weak (untrusted, or recorded after
    as_of: runbook_fallback.own_runbooks_weak), the trusted runbook reached through a service
    that is in force at as_of and served before it, as on the card (e29-qa finding 3); else
    None. Of several, the first by id."""
    if ev.context.get("anchor_type") not in ("alert", "error_code"):
        return None
    if not own_runbooks_weak([ev], as_of):
        return None
    late = recorded_after(ev, as_of)
    served = sorted(
        (
            o
            for o in runbooks
            if o.element_id != ev.element_id
            and o.context.get("anchor_type") == "service"
            and not recorded_after(o, as_of)
            and runbook_in_force(o, as_of)
            and (o.trust == "trusted" or late)
            and pointed_at(o, list(runbooks)) is None
        ),
        key=lambda o: o.element_id,
    )
    return served[0] if served else None


def _set_aside_text(ev: Evidence, over: Evidence | None) -> str:
    """What a claim of a set-aside page adds: why the other runbook is the one to follow."""
    if over is None:
        return ""
    untrusted = "it is untrusted imported text, and " if ev.trust != "trusted" else ""
    trusted = "trusted " if over.trust == "trusted" else ""
    of = f" of {over.context['anchor']}" if isinstance(over.context.get("anchor"), str) else ""
    return (
        f"; {untrusted}{over.element_id}, the {trusted}runbook{of} in force at as_of, comes first"
    )


def _no_runbook_at_as_of_gaps(
    runbooks: Sequence[Evidence],
    refs: Sequence[ReferenceTime],
    as_of: datetime,
    known_at: datetime | None,
    search_stopped_by: str | None,
) -> list[MissingEvidence]:
    """A required gap when the question asks about another time ("then") and the versions
    the run admitted are in force there but none at as_of: each ended by then, and no later
    version was in what the KG knew at `known_at` (a stale --known-at with a later --as-of).
    The answer says what applied then, never that it still applies at as_of."""
    if search_stopped_by is not None or not any(r.kind != "as_of" for r in refs):
        return []  # a search cut short says so itself; no other time asked: as_of's own gaps
    versions = [ev for ev in runbooks if pointed_at(ev, list(runbooks)) is None]
    if not versions or any(runbook_in_force(ev, as_of) for ev in versions):
        return []
    ended = sorted(
        {
            (ev.valid_to, ev.element_id)
            for ev in versions
            if not undated(ev) and ev.valid_to is not None and ev.valid_to <= as_of
        }
    )
    if not ended:
        return []
    known = f" in what the KG knew at {iso_utc(known_at)}" if known_at is not None else ""
    endings = "; ".join(f"{element_id} ended at {iso_utc(end)}" for end, element_id in ended)
    return [
        MissingEvidence(
            evidence_type="runbook",
            intents=[Intent.APPLICABLE_RUNBOOK.value],
            description=f"{NO_RUNBOOK_AT_AS_OF}, {iso_utc(as_of)},"
            f"{known}, in the records this subject may read: {endings}, and no later version "
            "was recorded; which runbook applies at as_of is not known",
            required=True,
        )
    ]


def _when(value: datetime | None) -> str:
    return iso_utc(value) if value is not None else "an unknown time"


def _undated_in_force(ev: Evidence, asked: datetime) -> str | None:
    """For an undated version a re-import replaced: the one instant it is claimed at, and
    its record times (it held from its import until the re-import, not at as_of)."""
    replaced = ev.context.get("superseded_at")
    if not undated(ev) or replaced is None:
        return None
    until = iso_utc(replaced) if isinstance(replaced, datetime) else str(replaced)
    return (
        f"at {iso_utc(asked)} (it states no validity: recorded {_when(ev.recorded_at)}, "
        f"replaced by a re-import at {until})"
    )


def _undated_holds(ev: Evidence, at: datetime) -> bool:
    """Whether an undated version was the one in force at `at`: recorded by then, and not
    yet replaced by a re-import (record_time.py)."""
    replaced = instant_of(ev.context.get("superseded_at"))
    return (ev.recorded_at is None or ev.recorded_at <= at) and (replaced is None or at < replaced)


def _undated_then(
    ev: Evidence,
    refs: Sequence[ReferenceTime],
    as_of: datetime,
    runbooks: Sequence[Evidence],
    tie: str,
    where: str,
) -> tuple[list[Claim], list[datetime]] | None:
    """The claims of an undated runbook version asked about at a time the question refers to
    ("then": the anchor event; or a time written in it) and at as_of: a fact at the instants
    it was in force, by its record times, and, for the earliest version the run holds of it,
    an inference at an instant before it was recorded (what it said then is not known), with
    those instants. None when neither applies."""
    instants = [(f"{r.describe()} ({r.why})", r.at) for r in refs]
    instants.append((f"as_of, {iso_utc(as_of)}", as_of))
    held = [text for text, at in instants if _undated_holds(ev, at)]
    same = [v for v in runbooks if v.element_id == ev.element_id]
    earliest = all(v.version >= ev.version for v in same)
    unknown = sorted(
        at
        for _, at in instants
        if earliest and recorded_after(ev, at) and not any(_undated_holds(v, at) for v in same)
    )
    claims: list[Claim] = []
    if held:
        replaced = ev.context.get("superseded_at")
        record = f"recorded {_when(ev.recorded_at)}"
        if replaced is not None:
            record += f", replaced by a re-import at {_instant_text(replaced)}"
        why = f" (it states no validity: {record})" if replaced or len(held) < len(instants) else ""
        claims.append(
            _claim(
                f"Runbook {_title(ev)} ({_versioned(ev)}){tie} is the version in force at "
                f"{' and at '.join(held)}{why}{where}",
                EpistemicStatus.FACT,
                0.95,
                [ev],
                Intent.APPLICABLE_RUNBOOK.value,
            )
        )
    if unknown:
        at = unknown[0]
        claims.append(
            _claim(
                f"Runbook {_title(ev)} ({_versioned(ev)}){tie} states no validity and its "
                f"earliest version was recorded at {_when(ev.recorded_at)}, after "
                f"{iso_utc(at)}: this is that version; what it said at {iso_utc(at)} is not "
                f"known{where}",
                EpistemicStatus.INFERENCE,
                0.5,
                [ev],
                Intent.APPLICABLE_RUNBOOK.value,
            )
        )
    return (claims, unknown[:1]) if claims else None


def _instant_text(raw: object) -> str:
    return iso_utc(raw) if isinstance(raw, datetime) else str(raw)


def _in_force(
    ev: Evidence,
    refs: Sequence[ReferenceTime],
    as_of: datetime,
    versions: Sequence[Evidence] = (),
) -> str:
    """`at <as_of>` (no reference in the question) or the labelled instants it holds at,
    where the version of `versions` that supersedes it does not."""
    if not refs:
        return f"at {iso_utc(as_of)}"
    successor = next((v for v in versions if ev.replacement == v.element_id), None)
    return "a" + _holds_text(ev, refs, as_of, successor)[1:]


def _release_of(ev: Evidence) -> str | None:
    """The release a deployment-time record is about: itself, or its fact slot's subject."""
    return release_of(ev)


def _rollout_claims(
    timed: Sequence[Evidence], refs: Sequence[ReferenceTime], as_of: datetime
) -> tuple[list[Claim], list[Evidence]]:
    """A fact per release whose rollout had started and not finished at as_of or at an
    instant the question names ("then", a time written): which release, since when, that it
    was not finished then, and the latest release of the service finished by then. Also the
    records of those releases (their finish lies after as_of, so no claim states it)."""
    claims: list[Claim] = []
    rolling: list[Evidence] = []
    instants = [(r.at, f"{r.describe()} ({r.why})", r.element_id) for r in refs if r.at <= as_of]
    instants.append((as_of, f"as_of, {iso_utc(as_of)}", None))
    for ev in sorted(timed, key=lambda e: e.element_id):
        # "Then" taken as this rollout's own start is not an instant it is said at: that it
        # had started then is what the moment is (the claims at it say "the start of the
        # rollout of release ...").
        at_words = [
            (at, words, span)
            for at, words, record in instants
            if record != ev.element_id and (span := rollout_under_way(ev, at)) is not None
        ]
        if not at_words:
            continue
        rolling.append(ev)
        started = at_words[0][2][0]
        service = ev.context.get("service", ev.props.get("service"))
        to = f" to {service}" if isinstance(service, str) else ""
        of = f" of {service}" if isinstance(service, str) else ""
        latest = at_words[-1][0]
        # The release finished by then: what "the release" means at that moment.
        done = [
            (t, other)
            for other in timed
            if other is not ev
            and other.type == "Deployment"
            and other.context.get("service", other.props.get("service")) in (None, service)
            and (t := instant(other, DEPLOY_TIME_KEYS)) is not None
            and t <= min(at for at, _, _ in at_words)
        ]
        before = max(done, key=lambda d: (d[0], d[1].element_id), default=None)
        finished = (
            f"; the latest release{of} finished by then is {_label(before[1])} "
            f"({before[1].element_id}, finished at {iso_utc(before[0])})"
            if before is not None
            else ""
        )
        when = " and at ".join(words for _, words, _ in at_words)
        claims.append(
            _claim(
                f"At {when}: the rollout of release {_label(ev)} ({ev.element_id}){to} was "
                f"under way, started at {iso_utc(started)} and not finished by "
                f"{iso_utc(latest)}, so it was not yet the release in force{finished}",
                EpistemicStatus.FACT,
                0.9,
                [ev, *([before[1]] if before is not None else [])],
                Intent.RELEASE_LOOKUP.value,
            )
        )
    return claims, rolling


def _firings_kept(
    rows: list[tuple[datetime, str, str, Evidence]],
    keep: Callable[[datetime], bool],
    outside: str,
) -> tuple[list[tuple[datetime, str, str, Evidence]], list[MissingEvidence]]:
    """The firings whose instant `keep` holds, and a required gap (`outside` says when was
    asked) when firings were read but none is kept."""
    kept = [row for row in rows if keep(row[0])]
    if kept or not rows:
        return kept, []
    return kept, [
        MissingEvidence(
            evidence_type="alert_firing",
            intents=[Intent.ALERT_FIRING.value],
            description=f"no alert the subject may read fired on what was asked {outside}",
        )
    ]


def _alert_firing_claims(
    fired: Sequence[Evidence],
    question: str,
    as_of: datetime,
    period: tuple[NamedTime, NamedTime] | None,
    before: datetime | None = None,
) -> tuple[list[Claim], list[MissingEvidence]]:
    """One fact per alert firing (a FIRED_ON record) by as_of, in time order: which alert,
    on which service, when, and until when (or that it was still firing at as_of). An alert
    the question names keeps only its own firings; a period asked keeps those in it, and an
    instant its "before X" words name (`before`) those by it, with a gap when none is."""
    mentions = extract_mentions(question)
    named = {n.lower() for n in mentions.alerts}
    named |= {i.lower() for i in mentions.ids if i.startswith("alert:")}
    rows: list[tuple[datetime, str, str, Evidence]] = []
    for ev in fired:
        parts = ev.element_id.split("|")
        alert = parts[1] if len(parts) > 2 else str(ev.context.get("start", ""))
        service = parts[2] if len(parts) > 2 else str(ev.context.get("neighbour", ""))
        at = _instant(ev, ALERT_TIME_KEYS)
        if at is None or at > as_of:
            continue
        if named and not ({alert.lower(), alert.removeprefix("alert:").lower()} & named):
            continue
        rows.append((at, alert, service, ev))
    gaps: list[MissingEvidence] = []
    if period is not None and period[0].at <= as_of:
        start, end = period[0].at, min(period[1].at, as_of)
        rows, gaps = _firings_kept(
            rows,
            lambda t: start <= t <= end,
            f"from {iso_utc(start)} to {iso_utc(end)} ({period[0].words!r}); the firings read "
            "are all outside it",
        )
    if before is not None:
        rows, later = _firings_kept(
            rows,
            lambda t: t <= before,
            f"by {iso_utc(before)}, the time the question's words name; the firings read are "
            "all later",
        )
        gaps += later
    out: list[Claim] = []
    for at, alert, service, ev in sorted(rows, key=lambda r: (r[0], r[1], r[3].element_id)):
        if ev.valid_to is None:
            until = "no end recorded by as_of"
        elif ev.valid_to > as_of:
            until = "still firing at as_of"
        else:
            until = f"until {iso_utc(ev.valid_to)}"
        out.append(
            _claim(
                f"Alert {alert} fired on {service} at {iso_utc(at)} ({until})",
                EpistemicStatus.FACT,
                0.95,
                [ev],
                Intent.ALERT_FIRING.value,
            )
        )
    return out, gaps


def cut_incident_lists(calls: Sequence[ToolCallRecord]) -> list[tuple[str, str, int]]:
    """(from, to, row limit) of each `incidents_in_period` read its limit cut."""
    return sorted(
        {
            (str(c.params.get("from")), str(c.params.get("to")), c.limit or 0)
            for c in calls
            if c.template_id == "incidents_in_period" and c.truncated
        }
    )


def _incident_list_claims(
    evidence: Sequence[Evidence],
    question: str,
    as_of: datetime,
    cuts: Sequence[tuple[str, str, int]],
) -> tuple[list[Claim], list[MissingEvidence]]:
    """For "list all incidents in July 2026": one fact per incident the `incidents_in_period`
    read admitted (open at some time in the period, up to as_of), in start order, with its
    start, its resolution by as_of (or that it was open at as_of), how long it lasted, and
    the services it affected that the subject may read; a required gap when none is, or when
    the read's row limit cut the list."""
    period = time_references(question, as_of).period
    now_only = period is None and asks_open_incidents_anywhere(question)
    if period is not None:
        span = (
            f"from {iso_utc(period[0].at)} to {iso_utc(min(period[1].at, as_of))} "
            f"({period[0].words!r})"
        )
    else:
        span = f"at as_of {iso_utc(as_of)}" if now_only else f"by as_of {iso_utc(as_of)}"
    rows: list[tuple[datetime, str, Evidence]] = []
    for ev in evidence:
        if ev.type != "Incident" or not (ev.template or "").startswith("incidents_in_period@"):
            continue
        started = instant_of(ev.context.get("started_at")) or ev.valid_from
        if started is None or started > as_of:
            continue
        rows.append((started, ev.element_id, ev))
    claims: list[Claim] = []
    for started, _, ev in sorted(rows, key=lambda r: (r[0], r[1])):
        resolved = instant_of(ev.context.get("resolved_at"))
        if resolved is not None and resolved <= as_of:
            until = f"resolved {iso_utc(resolved)} (lasted {_human(resolved - started)})"
        else:
            until = f"open at as_of (not resolved by as_of; {_human(as_of - started)} so far)"
        services = ev.context.get("services")
        names = (
            ", ".join(str(s) for s in services)
            if isinstance(services, list) and services
            else "none the subject may read"
        )
        claims.append(
            _claim(
                f"Incident {ev.element_id} ({_label(ev)}): started {iso_utc(started)}, {until}; "
                f"services affected: {names}",
                EpistemicStatus.FACT,
                0.95,
                [ev],
                Intent.INCIDENT_LIST.value,
            )
        )
    gaps: list[MissingEvidence] = []
    if period is not None and period[0].at > as_of:
        gaps.append(
            MissingEvidence(
                evidence_type="incident_report",
                intents=[Intent.INCIDENT_LIST.value],
                description=f"the period asked ({period[0].words!r}) starts after as_of "
                f"{iso_utc(as_of)}: no incident in it can be recorded by then",
            )
        )
    elif not claims:
        gaps.append(
            MissingEvidence(
                evidence_type="incident_report",
                intents=[Intent.INCIDENT_LIST.value],
                description=f"no incident the subject may read was open {span} "
                "(as recorded by known_at)",
            )
        )
    gaps += [
        MissingEvidence(
            evidence_type="incident_report",
            intents=[Intent.INCIDENT_LIST.value],
            description=f"the incident read from {low} to {high} stopped at its cap of "
            f"{limit} incidents (oldest first): later incidents of the period are not listed",
        )
        for low, high, limit in cuts
    ]
    return claims, gaps


# The KG records incidents, alert firings and releases, no health check or metric: silence
# about a service is not health, and the answer says so (a gap that is never required).
NO_HEALTH_RECORD = (
    "no health check, probe or metric record: the KG has no such type, so whether {services} "
    "is healthy cannot be answered; no incident open and no alert firing is what is recorded, "
    "not a sign of health"
)


def _status_services(evidence: Sequence[Evidence], service_id: str | None) -> list[str]:
    """The services a status question asks about: the Service records resolved as its
    entities (and --service)."""
    found = {
        ev.element_id
        for ev in _with(evidence, "entity")
        if ev.kind == "node" and ev.type == "Service"
    }
    if service_id:
        found.add(service_id)
    return sorted(found)


def _open_at(start: datetime | None, end: datetime | None, as_of: datetime) -> bool:
    return start is not None and start <= as_of and (end is None or end > as_of)


def _service_status_claims(
    evidence: Sequence[Evidence],
    service_id: str | None,
    as_of: datetime,
    known_at: datetime | None,
    services_read: Sequence[str] = (),
) -> tuple[list[Claim], list[MissingEvidence]]:
    """For "is payment-api healthy now?": per service asked about, what the KG records of
    it at as_of: each incident open then that affected it (the incident's start and no
    resolution by as_of), each alert firing on it then (a FIRED_ON record started by as_of
    and not ended), each release of it rolling out then (started, not finished), and one
    summary fact that says "no incident open, no alert firing, no release rolling out" when
    none is. Never "healthy": the KG records no health check (a gap, not required)."""
    services = _status_services(evidence, service_id) or sorted(services_read)[:3]
    entity = {ev.element_id: ev for ev in _with(evidence, "entity") if ev.type == "Service"}
    incidents = {ev.element_id: ev for ev in _with(evidence, "incident_report")
                 if ev.type == "Incident"}  # fmt: skip
    known = "what the subject may read, as recorded by " + (
        f"known_at {iso_utc(known_at)}" if known_at else "known_at"
    )
    claims: list[Claim] = []
    for svc in services:
        said = f"{svc} at as_of {iso_utc(as_of)}"
        open_incidents: list[tuple[str, list[Evidence]]] = []
        # The AFFECTED_BY record, read as the incident's (affected_service) or as the
        # service's way to its incidents (entity).
        for link in sorted(
            (ev for ev in evidence if ev.type == "AFFECTED_BY"), key=lambda e: e.element_id
        ):
            parts = link.element_id.split("|")
            if len(parts) != 3 or parts[1] != svc or parts[2] not in incidents:
                continue
            inc = incidents[parts[2]]
            start = instant_of(inc.props.get("started_at")) or inc.valid_from
            resolved = instant_of(inc.props.get("resolved_at"))
            end = resolved if resolved is not None else inc.valid_to
            if _open_at(start, end, as_of) and start is not None:
                open_incidents.append(
                    (
                        f"{said}: incident {inc.element_id} open ({_label(inc)}, started "
                        f"{iso_utc(start)}, not resolved by as_of)",
                        [inc, link],
                    )
                )
        firing: list[tuple[str, list[Evidence]]] = []
        for ev in _with(evidence, "alert_firing"):
            parts = ev.element_id.split("|")
            if len(parts) < 3 or parts[2] != svc:
                continue
            at = _instant(ev, ALERT_TIME_KEYS)
            if _open_at(at, ev.valid_to, as_of) and at is not None:
                firing.append((f"{said}: alert {parts[1]} firing (since {iso_utc(at)})", [ev]))
        rolling: list[tuple[str, list[Evidence]]] = []
        for ev in _with(evidence, "deployment_time"):
            if svc not in (ev.context.get("service"), ev.props.get("service")):
                continue
            under_way = rollout_under_way(ev, as_of)
            if under_way is not None:
                rolling.append(
                    (
                        f"{said}: release {_label(ev)} rolling out (started "
                        f"{iso_utc(under_way[0])}, not finished by as_of)",
                        [ev],
                    )
                )
        found = [*sorted(open_incidents, key=_first), *sorted(firing, key=_first),
                 *sorted(rolling, key=_first)]  # fmt: skip
        counts = [
            _counted(len(open_incidents), "incident open", "incidents open", "no incident open"),
            _counted(len(firing), "alert firing", "alerts firing", "no alert firing"),
            _counted(len(rolling), "release rolling out", "releases rolling out",
                     "no release rolling out"),
        ]  # fmt: skip
        cited = [ev for _, evs in found for ev in evs]
        if svc in entity:
            cited = [entity[svc], *cited]
        if cited:
            claims.append(
                _claim(
                    f"{said} ({known}): {', '.join(counts)}",
                    EpistemicStatus.FACT,
                    0.9,
                    list({ev.evidence_id: ev for ev in cited}.values()),
                    Intent.SERVICE_STATUS.value,
                )
            )
        for statement, evs in found:
            claims.append(
                _claim(statement, EpistemicStatus.FACT, 0.95, evs, Intent.SERVICE_STATUS.value)
            )
    gaps = []
    if not claims and _with(evidence, "entity"):
        # Nothing read of any service: no state to say (a record found is not the service).
        gaps.append(
            MissingEvidence(
                evidence_type="entity",
                intents=[Intent.SERVICE_STATUS.value],
                description="no service the subject may read was found for the question: "
                "name one (e.g. 'is payment-api ok?') or pass --service",
            )
        )
    gaps += [
        MissingEvidence(
            evidence_type="health_check",
            intents=[Intent.SERVICE_STATUS.value],
            description=NO_HEALTH_RECORD.format(services=", ".join(services) or "it"),
            required=False,
        )
    ]
    return claims, gaps


def _first(item: tuple[str, list[Evidence]]) -> str:
    return item[0]


def _counted(n: int, one: str, many: str, none: str) -> str:
    return none if n == 0 else f"1 {one}" if n == 1 else f"{n} {many}"


def _releases_in_period(
    timed: Sequence[Evidence], period: tuple[NamedTime, NamedTime], as_of: datetime
) -> tuple[list[Evidence], list[MissingEvidence]]:
    """The release records finished in the period asked (its end at as_of at the latest),
    and a gap saying so when none is."""
    start, end = period[0].at, min(period[1].at, as_of)
    inside = [ev for ev in timed if (t := _instant(ev, _DEPLOY_TIME_KEYS)) and start <= t <= end]
    if inside:
        return inside, []
    return [], [
        MissingEvidence(
            evidence_type="deployment_time",
            intents=[Intent.RELEASE_LOOKUP.value],
            description=f"no release of the services asked about that the subject may read "
            f"finished from {iso_utc(start)} to {iso_utc(end)} ({period[0].words!r})",
            required=False,
        )
    ]


def _release_claims(timed: Sequence[Evidence]) -> list[Claim]:
    """One fact per release: its finish time from its own record, else from the most
    authoritative document that states it, citing every record about that release."""
    groups: dict[str, list[Evidence]] = {}
    for ev in timed:
        release = _release_of(ev)
        if release is not None:
            groups.setdefault(release, []).append(ev)
    out: list[Claim] = []
    for release, evs in sorted(groups.items()):
        own = [ev for ev in evs if ev.type == "Deployment"]
        source = own[0] if own else max(evs, key=lambda ev: (authority(ev), ev.evidence_id))
        at = _instant(source, _DEPLOY_TIME_KEYS)
        if at is None:
            continue
        name = _label(own[0]) if own else release.removeprefix("deploy:")
        basis = "" if own else f" (according to {_label(source)})"
        # The rollout's start, from the release's own record: "when did it start?" too.
        began = instant_of(own[0].props.get("started_at")) if own else None
        started = f"started at {iso_utc(began)} and " if began and began <= at else ""
        out.append(
            _claim(
                f"Release {name} ({release}) {started}finished at {iso_utc(at)}{basis}",
                EpistemicStatus.FACT,
                0.95,
                evs,
                Intent.RELEASE_LOOKUP.value,
            )
        )
    return out


class _Candidate(BaseModel):
    """A change that could have started the errors: a release or another change event."""

    evidence: Evidence
    at: datetime
    kind: str  # "release" | "change"
    # When it began to take effect: a release's rollout start (its record's `started_at`),
    # else `at`. An error first seen at or after it can be about the change; before, never.
    began: datetime

    def began_by(self, at: datetime) -> bool:
        """Whether the change had begun by `at` (an error first seen then can be its effect;
        the start instant itself counts, as a rollout is under way from its start)."""
        return self.began <= at

    def in_window_before(self, first_at: datetime, window: timedelta) -> bool:
        """Whether it had begun by the first error and finished no more than `window`
        before it: finished within the window, or still rolling out when the error came."""
        return self.began_by(first_at) and first_at - window <= self.at

    def rolling_at(self, at: datetime) -> bool:
        """Whether `at` lies inside its rollout (started, not finished)."""
        return self.began <= at < self.at


# A sentence that rules a change out ("was investigated and ruled out", "not the cause").
_CLEARING = re.compile(
    r"\b(ruled? out|rules out|not (?:the |a )?(?:root )?cause|did not cause|didn't cause|"
    r"not related|unrelated|(?:was|were|is|been) (?:cleared|excluded|exonerated)|cleared of|"
    r"had no (?:impact|effect))\b|排除|无关",
    re.IGNORECASE,
)
# Sentences end at a full stop (hard-wrapped lines are one sentence) or a blank line.
# ... unless it says the opposite ("could not rule out the release").
_NOT_CLEARING = re.compile(
    r"\b(?:not|cannot|can't|couldn't|never) (?:be )?ruled? out\b|\bnot been ruled out\b",
    re.IGNORECASE,
)


def _rules_out(sentence: str) -> bool:
    """Whether a sentence says the change it names was ruled out."""
    return bool(_CLEARING.search(sentence)) and not _NOT_CLEARING.search(sentence)


_SENTENCE_END = re.compile(r"(?<=[.!?。])\s+|\n\s*\n")
# A release or change identifier in free text ("release 2026.07.23.1", "deploy:r-7").
_CHANGE_REFERENCE = re.compile(
    r"\b(deploy|change):\S+|\brelease[- ]v?\d+(\.\d+)+\b|\b\d{4}\.\d{2}\.\d{2}\.\d+\b",
    re.IGNORECASE,
)
# Shorter words of a name are too common to identify a change ("rule", "v3").
_MIN_NAME_TOKEN = 6


def _names_of(ev: Evidence) -> list[str]:
    """The texts that identify a change: its id (with and without prefix), its name, its
    release number, and the name's words that carry a number ("RR-2026-07-23a")."""
    out = [ev.element_id, ev.element_id.split(":", 1)[-1]]
    if ev.name:
        out.append(ev.name)
        out += [
            w.strip(".,;:()")
            for w in ev.name.split()
            if any(ch.isdigit() for ch in w) and len(w.strip(".,;:()")) >= _MIN_NAME_TOKEN
        ]
    release = ev.props.get("release")
    if isinstance(release, str):
        out.append(release)
    return [n for n in dict.fromkeys(out) if len(n) >= 4]


def _name_position(text: str, ev: Evidence) -> int | None:
    """Where `text` first names the change `ev` (a whole token, any case), else None."""
    hits = [
        m.start()
        for name in _names_of(ev)
        if (m := re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-]|\.\w)", text, re.IGNORECASE))
    ]
    return min(hits) if hits else None


def _sentences_naming(ev: Evidence, text: str) -> list[str]:
    sentences = [" ".join(s.split()) for s in _SENTENCE_END.split(text)]
    return [s for s in sentences if _name_position(s, ev) is not None]


def _clearing_sentence(mechanism: Evidence, cand: Evidence) -> str | None:
    """The sentence of a mechanism record that rules `cand` out, if any."""
    return next((s for s in _sentences_naming(cand, mechanism.content) if _rules_out(s)), None)


def _names_as_cause(mechanism: Evidence, cand: Evidence) -> bool:
    """Whether a mechanism record is about `cand` (linked to it, or names it in a sentence
    that does not rule it out)."""
    if _about(mechanism, _change_id(cand)):
        return True
    # "Could not rule out X" neither clears nor implicates X.
    return any(not _CLEARING.search(s) for s in _sentences_naming(cand, mechanism.content))


# A sentence that names a change as the cause ("X caused PAY-4097", "the root cause was X",
# "X broke payments"): how a report that records no mechanism blames one.
_CAUSAL = LazyPattern(
    r"\b(?:caus(?:ed|es|ing)|cause of|root[- ]cause|broke|blamed?|responsible for|"
    r"triggered|led to|resulted in|due to)\b|导致|根因",
    re.IGNORECASE,
)


def _cause_reports(evidence: Sequence[Evidence]) -> list[Evidence]:
    """The trusted documents of the pack that are no mechanism record yet may name a change
    as the cause (a draft postmortem: "Draft: the risk rule publication RR-2026-07-23a
    caused PAY-4097", confidence 0.3, `incident_report` only): what was recorded of a change
    then, said as such; never a mechanism, so it neither confirms nor refutes a verdict."""
    return [
        ev
        for ev in evidence
        if ev.type == "Document"
        and ev.status == "active"
        and ev.trust == "trusted"
        and "mechanism" not in ev.evidence_types
        and _CAUSAL.search(ev.content)
    ]


def _report_sentence(report: Evidence, cand: Evidence) -> str | None:
    """The sentence of a report that names `cand` as the cause: it names the change with a
    word of causing, and neither rules it out nor says it could not be ruled out."""
    return next(
        (
            s
            for s in _sentences_naming(cand, report.content)
            if _CAUSAL.search(s) and not _CLEARING.search(s) and not _NOT_CLEARING.search(s)
        ),
        None,
    )


_DRAFT = LazyPattern(r"\bdraft\b", re.IGNORECASE)


def _record_notes(ev: Evidence) -> list[str]:
    """`a draft`, `confidence 0.3`: what a record says of its own standing."""
    notes = []
    marks = (ev.title, ev.props.get("kind"), ev.source_version, ev.element_id)
    if any(isinstance(m, str) and _DRAFT.search(m) for m in marks):
        notes.append("a draft")
    confidence = ev.props.get("confidence")
    if isinstance(confidence, int | float) and not isinstance(confidence, bool):
        notes.append(f"confidence {confidence:g}")
    return notes


def _report_short(report: Evidence) -> str:
    """`DRAFT postmortem: risk rules broke payments (a draft, confidence 0.3)`."""
    notes = _record_notes(report)
    return _label(report) + (f" ({', '.join(notes)})" if notes else "")


def _report_claims(
    cand: _Candidate,
    reports: Sequence[Evidence],
    first_ev: Evidence,
    intent: str,
    elsewhere: Sequence[tuple[Evidence, _Candidate]] = (),
    clearing: Sequence[Evidence] = (),
) -> list[Claim]:
    """A `fact` per report that names `cand` as the cause, quoting its sentence, with its
    standing (a draft, its confidence, when it was recorded) and, where the mechanism
    records of the pack say otherwise (`elsewhere`: another change they name as the cause;
    `clearing`: they rule this one out), that the records disagree."""
    out: list[Claim] = []
    for report in sorted(reports, key=lambda r: r.element_id):
        sentence = _report_sentence(report, cand.evidence)
        if sentence is None:
            continue
        notes = [report.element_id, *_record_notes(report)]
        if report.recorded_at is not None:
            notes.append(f"recorded {iso_utc(report.recorded_at)}")
        against = [
            f"{_label(m)} ({', '.join(['mechanism evidence', *_record_notes(m)])}) names "
            f"{_what(other)} as the cause"
            for m, other in elsewhere
        ] + [
            f"{_label(m)} ({', '.join(['mechanism evidence', *_record_notes(m)])}) rules it out"
            for m in clearing
        ]
        out.append(
            _claim(
                f"{_label(report)} ({', '.join(notes)}) names {_what(cand)} as the cause of "
                f'{_label(first_ev)}: "{_quote(sentence)}"; it records no mechanism'
                + (f"; the records read disagree: {'; '.join(against)}" if against else ""),
                EpistemicStatus.FACT,
                0.9,
                [cand.evidence, first_ev, report, *(m for m, _ in elsewhere), *clearing],
                intent,
            )
        )
    return out


def _reported_hypothesis(cand: _Candidate, reports: Sequence[Evidence]) -> str | None:
    """`named as the cause by <report> (a draft, confidence 0.3), which records no
    mechanism`, for a change no mechanism record is about; None when no report names it."""
    naming = sorted(
        (r for r in reports if _report_sentence(r, cand.evidence)), key=lambda r: r.element_id
    )
    if not naming:
        return None
    which = "which records" if len(naming) == 1 else "which record"
    return (
        f"named as the cause by {', '.join(_report_short(r) for r in naming)}, {which} no mechanism"
    )


# A step of a runbook that says to roll back ("2. ... roll back the release with ...").
_ROLLBACK_STEP = re.compile(r"\broll(?:ing)?[- ]?back\b|\brevert", re.IGNORECASE)


def _rollback_step(ev: Evidence, question: str) -> str:
    """`: its step "2. If the pool is exhausted after a release, roll back the release ..."`
    when the question asks about rolling back (or whether the runbook was followed) and the
    runbook's text has a step that says to; else nothing. Quoted as data, never followed."""
    if not asks_about_rollback(question):
        return ""
    lines = [" ".join(line.split()) for line in (ev.content or "").splitlines()]
    step = next((line for line in lines if _ROLLBACK_STEP.search(line)), None)
    return f': its rollback step, "{_quote(step)}"' if step else ""


ROLLBACK_ONLY_RECORDED = (
    "whether the runbook's other steps were taken is not recorded: the rollback is the only "
    "action on record (the claim above), and the KG has no response-action type for the rest"
)


def _rollbacks_recorded(evidence: Sequence[Evidence]) -> list[Claim]:
    """Asked whether the runbook was followed: each sentence of an incident report or
    postmortem admitted that records a rollback ("Fix: rollback at 10:41."), beside the
    rollback step of each runbook admitted. An inference: what the record says was done,
    set against the step; the `runbook_followed` gap stays (no record of every action)."""
    runbooks = [ev for ev in _with(evidence, "runbook") if _ROLLBACK_STEP.search(ev.content or "")]
    out: list[Claim] = []
    for doc in sorted(_with(evidence, "incident_report"), key=lambda e: e.element_id):
        if doc.type == "Runbook":
            continue
        sentences = [" ".join(s.split()) for s in _SENTENCE_END.split(doc.content or "")]
        done = [s for s in sentences if _ROLLBACK_STEP.search(s)]
        if not done:
            continue
        steps = [
            f"{_versioned(rb)} says to roll back ({_rollback_step(rb, 'roll back').lstrip(': ')})"
            for rb in runbooks
        ]
        said = "; ".join(steps) if steps else "no runbook admitted has a rollback step"
        out.append(
            _claim(
                f"{_label(doc)} records a rollback: "
                + " ".join(f'"{_quote(s)}"' for s in done)
                + f"; {said}. Only that action is on record, not whether every step was taken",
                EpistemicStatus.INFERENCE,
                0.6,
                [doc, *runbooks],
                Intent.APPLICABLE_RUNBOOK.value,
            )
        )
    return out


def _quote(sentence: str, limit: int = 200) -> str:
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


def _change_id(ev: Evidence) -> str:
    """The change a record stands for: the release a release-time document is about, else
    the record itself."""
    return _release_of(ev) or ev.element_id


def _rollout_start(ev: Evidence, finished: datetime) -> datetime:
    """A release's rollout start from its own record (`started_at`, no later than its
    finish), else its finish: from then on, errors can be its effect."""
    if ev.type != "Deployment":
        return finished
    started = instant_of(ev.context.get("started_at", ev.props.get("started_at")))
    return started if started is not None and started <= finished else finished


def _candidates(evidence: Sequence[Evidence]) -> list[_Candidate]:
    """Releases and other change events with their instants, one per change (sorted)."""
    timed = _with(evidence, "deployment_time")
    deployments = [ev for ev in timed if ev.type == "Deployment"]
    # Without Deployment records, the documents stating a release time stand for it: per
    # release, the most authoritative one.
    releases = deployments or [ev for ev in timed if _release_of(ev) is not None] or timed
    best: dict[str, Evidence] = {}
    for ev in sorted(releases, key=lambda e: (authority(e), e.evidence_id), reverse=True):
        best.setdefault(_change_id(ev), ev)
    out = [
        _Candidate(evidence=ev, at=t, kind="release", began=_rollout_start(ev, t))
        for ev in best.values()
        if (t := _instant(ev, _DEPLOY_TIME_KEYS))
    ]
    for ev in _with(evidence, "change_event"):
        if ev in releases or _release_of(ev) is not None:
            continue  # a record of a release's time (CI/CD document), not another change
        if any(_about(ev, r) for r in best):
            continue
        if (t := _instant(ev, _CHANGE_TIME_KEYS)) is not None:
            out.append(_Candidate(evidence=ev, at=t, kind="change", began=t))
    return sorted(out, key=lambda c: (c.at, c.evidence.element_id))


def _named_in_question(
    question: str | None, candidates: Sequence[_Candidate]
) -> tuple[_Candidate | None, list[str]]:
    """The change the question names (the first one named), and the named releases that
    are not among the candidates (no deployment-time evidence for them)."""
    if not question:
        return None, []
    positions = [
        (pos, c.evidence.element_id, c)
        for c in candidates
        if (pos := _name_position(question, c.evidence)) is not None
    ]
    named = min(positions, key=lambda p: (p[0], p[1]))[2] if positions else None
    absent = [
        name
        for name in extract_mentions(question).release_names()
        if not any(name.lower() in {n.lower() for n in _names_of(c.evidence)} for c in candidates)
    ]
    return named, absent


def _what(cand: _Candidate) -> str:
    ev = cand.evidence
    if cand.kind == "release":
        return f"release {_change_id(ev)}"
    return f"change {_label(ev)} ({ev.element_id})"


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def _finished(cand: _Candidate) -> str:
    return "finished" if cand.kind == "release" else "happened"


def _finish_words(cand: _Candidate, as_of: datetime) -> str:
    """`finished at F`, or, for a rollout still under way at as_of, that it had not (its
    finish, after as_of, is not stated)."""
    if cand.at <= as_of:
        return f"{_finished(cand)} at {iso_utc(cand.at)}"
    return f"not {_finished(cand)} by as_of {iso_utc(as_of)}"


def _during_rollout(cand: _Candidate, first_at: datetime, as_of: datetime) -> str:
    """`N after release X started at S, during its rollout (finished at F)`: an error first
    seen while the release was rolling out."""
    return (
        f"{_human(first_at - cand.began)} after {_what(cand)} started at "
        f"{iso_utc(cand.began)}, during its rollout ({_finish_words(cand, as_of)})"
    )


def _before_first_error(
    cand: _Candidate, first_ev: Evidence, first_at: datetime, as_of: datetime
) -> str:
    """When a change came before the first error: `finished at F, N before E was first
    seen`, or, for a release still rolling out then, since when and that it was."""
    if not cand.rolling_at(first_at):
        return (
            f"{_finished(cand)} at {iso_utc(cand.at)}, {_human(first_at - cand.at)} before "
            f"{_label(first_ev)} was first seen"
        )
    return (
        f"started at {iso_utc(cand.began)}, {_human(first_at - cand.began)} before "
        f"{_label(first_ev)} was first seen, and was still rolling out then "
        f"({_finish_words(cand, as_of)})"
    )


class _Correlation(BaseModel):
    """What the correlation rules concluded."""

    verdict: Verdict
    claims: list[Claim] = Field(default_factory=list)
    confounders: list[Confounder] = Field(default_factory=list)
    missing: list[MissingEvidence] = Field(default_factory=list)


def _sightings(firsts: Sequence[Evidence]) -> list[tuple[datetime, Evidence]]:
    """The first-seen instants the evidence states, each with its record: error-code
    first-seen records (with an explicit instant) beat documents that mention it."""
    explicit = [ev for ev in firsts if "first_seen" in ev.context] or list(firsts)
    return [(t, ev) for ev in explicit if (t := _instant(ev, _FIRST_SEEN_KEYS))]


def _first_error(seen: Sequence[tuple[datetime, Evidence]]) -> tuple[datetime, Evidence]:
    """The earliest sighting (ties: by element id)."""
    return min(seen, key=lambda p: (p[0], p[1].element_id))


def _confounder(
    cand: _Candidate, mechanisms: Sequence[Evidence], reports: Sequence[Evidence] = ()
) -> Confounder:
    """A competing or candidate cause, with what the mechanism evidence says of it (and
    which reports that record no mechanism name it as the cause)."""
    ev = cand.evidence
    clearing = sorted(m.evidence_id for m in mechanisms if _clearing_sentence(m, ev))
    naming = sorted(
        m.evidence_id
        for m in mechanisms
        if m.evidence_id not in clearing and _names_as_cause(m, ev)
    )
    reported = sorted(r.evidence_id for r in reports if _report_sentence(r, ev))
    if clearing and naming:
        assessment = CauseAssessment.DISPUTED
    elif clearing:
        assessment = CauseAssessment.RULED_OUT
    elif naming:
        assessment = CauseAssessment.NAMED_AS_CAUSE
    elif reported:
        assessment = CauseAssessment.REPORTED_AS_CAUSE
    else:
        assessment = CauseAssessment.NO_MECHANISM_EVIDENCE
    return Confounder(
        evidence_id=ev.evidence_id,
        element_id=ev.element_id,
        at=cand.at,
        started_at=cand.began if cand.began < cand.at else None,
        description=f"{_label(ev)} at {iso_utc(cand.at)}: {ev.content}",
        assessment=assessment,
        ruled_out_by=clearing,
        named_by=naming,
        reported_by=reported,
    )


def _rollout_taken_as_then(
    evidence: Sequence[Evidence], refs: Sequence[ReferenceTime], as_of: datetime
) -> str | None:
    """The record of the release whose rollout, under way at `as_of`, the question's "then"
    is taken as (its start): at as_of 10:00, release-2026.07.23.1, rolling out since
    09:55:12. A change question asked "then" is about it, not about the latest release
    finished by as_of (before h29-then2, release-2026.07.20.2 of three days before, with "no
    time correlation can be drawn yet")."""
    for cand in _candidates(evidence):
        if cand.kind == "release" and cand.rolling_at(as_of):
            record = cand.evidence.element_id
            if any(
                r.kind == "event" and r.element_id == record and r.at == cand.began for r in refs
            ):
                return record
    return None


def _candidate_of(candidates: Sequence[_Candidate], record: str | None) -> _Candidate | None:
    """The candidate read from `record`, if any."""
    return next((c for c in candidates if record and c.evidence.element_id == record), None)


def _correlation(
    evidence: Sequence[Evidence],
    firsts: Sequence[Evidence],
    mechanisms: Sequence[Evidence],
    conflicts: Sequence[Conflict],
    as_of: datetime,
    checks: CompetingCauseChecks | None = None,
    question: str | None = None,
    searched: bool = True,
    then_rollout: str | None = None,
    *,
    reports: Sequence[Evidence] = (),
    known_at: datetime | None = None,
) -> _Correlation:
    """The verdict on the change the question names (else the release closest before the
    first error), with the other changes of the window as competing causes. `searched`:
    the loop ran every read it planned (else no first error is said to be not known).
    `then_rollout`: the record of the release whose rollout start the question's "then" is
    taken as (`_rollout_taken_as_then`): the release asked about, as if named. `reports`:
    the trusted documents that record no mechanism (`_cause_reports`): a change one names as
    the cause is said to be so named, with the records that disagree, never "no mechanism
    evidence about it"; they do not move the verdict. `known_at`: before as_of, "no error is
    known" is said of what was recorded by then."""
    intent = Intent.DEPLOYMENT_CORRELATION.value
    upstream = set(checks.upstream) if checks is not None else set()
    candidates = _candidates(evidence)
    seen = _sightings(firsts)
    # The link between the error and a service: the incident's AFFECTED_BY records, else an
    # EMITTED record (a subject who may not read the incident, or no --service).
    affected = _with(evidence, "affected_service") or [
        ev for ev in evidence if ev.kind == "relationship" and ev.type == "EMITTED"
    ]
    named, absent = _named_in_question(question, candidates)
    if named is None and absent:
        return _named_release_missing(
            absent, seen, candidates, mechanisms, intent, as_of, reports=reports
        )
    named = named or _candidate_of(candidates, then_rollout)
    # Deployments of upstream services are competing causes, never the release asked about.
    own_releases = [
        c
        for c in candidates
        if c.kind == "release" and c.evidence.context.get("service") not in upstream
    ]
    if not seen:
        return _no_first_error_yet(
            named,
            own_releases,
            as_of,
            question,
            evidence,
            intent,
            searched=searched,
            known_at=known_at,
        )
    if question is not None and not _names_an_error(question):
        # Without a question, the errors handed in are the ones asked about.
        reference, later = _errors_after_release_asked_about(named, own_releases, seen, as_of)
        if reference is not None:
            if not later:
                return _only_errors_before(
                    reference, seen, as_of, evidence, intent, searched=searched
                )
            seen = later
    first_at, first_ev = _first_error(seen)
    # Begun by the first error: finished before it, or rolling out when it came.
    before = [c for c in own_releases if c.began_by(first_at)]
    # The release closest before the first error: the default subject, and the one a
    # mechanism record that names no change is read as being about.
    closest = max(before, key=lambda c: (c.began, c.at, c.evidence.element_id)) if before else None
    subject = named or closest
    if subject is None:
        if not own_releases:
            return _Correlation(verdict=Verdict.UNCERTAIN)
        after = min(own_releases, key=lambda c: (c.began, c.evidence.element_id))
        return _Correlation(
            verdict=Verdict.REFUTED,
            claims=[_after_first_error(after, first_ev, first_at, intent)],
        )
    subject_ev = subject.evidence
    claims: list[Claim] = [_change_fact(subject, evidence, intent, as_of)]
    if not subject.began_by(first_at):
        claims.append(_after_first_error(subject, first_ev, first_at, intent))
        return _Correlation(verdict=Verdict.REFUTED, claims=claims)
    gap = first_at - subject.at
    basis = [subject_ev, first_ev, *affected]
    if subject.rolling_at(first_at):
        claims.append(
            _claim(
                f"{_label(first_ev)} was first seen {_during_rollout(subject, first_at, as_of)}"
                ": a time correlation, not by itself a root cause",
                EpistemicStatus.INFERENCE,
                0.85,
                basis,
                intent,
            )
        )
        verdict = Verdict.LIKELY
    elif gap > CORRELATION_WINDOW:
        claims.append(
            _claim(
                f"{_label(first_ev)} was first seen {_human(gap)} after {_what(subject)} "
                f"{_finished(subject)}, outside the {_human(CORRELATION_WINDOW)} "
                "correlation window",
                EpistemicStatus.INFERENCE,
                0.7,
                basis,
                intent,
            )
        )
        verdict = Verdict.UNCERTAIN
    else:
        claims.append(
            _claim(
                f"{_label(first_ev)} was first seen {_human(gap)} after {_what(subject)} "
                f"{_finished(subject)} ({iso_utc(subject.at)} -> {iso_utc(first_at)}): "
                "a time correlation, not by itself a root cause",
                EpistemicStatus.INFERENCE,
                0.85,
                basis,
                intent,
            )
        )
        verdict = Verdict.LIKELY
    others = [c for c in candidates if _change_id(c.evidence) != _change_id(subject_ev)]
    # A mechanism record names the changes it is about; one naming none is read, as before,
    # as being about the release closest before the first error.
    names_none = [
        m
        for m in mechanisms
        if not _CHANGE_REFERENCE.search(m.content)
        and not any(_names_as_cause(m, c.evidence) for c in candidates)
    ]
    implicating = [
        m
        for m in mechanisms
        if _clearing_sentence(m, subject_ev) is None
        and (_names_as_cause(m, subject_ev) or (subject is closest and m in names_none))
    ]
    clearing = [(m, s) for m in mechanisms if (s := _clearing_sentence(m, subject_ev))]

    def elsewhere(cand: _Candidate) -> list[tuple[Evidence, _Candidate]]:
        """The mechanism records that name another change than `cand` as the cause."""
        return [
            (m, c)
            for c in [subject, *others]
            if _change_id(c.evidence) != _change_id(cand.evidence)
            for m in mechanisms
            if _clearing_sentence(m, c.evidence) is None
            and (_names_as_cause(m, c.evidence) or (c is closest and m in names_none))
        ]

    if implicating:
        claims.append(
            _claim(
                f"{_upper_first(_what(subject))} caused {_label(first_ev)}, according to "
                "mechanism evidence from " + ", ".join(sorted(_label(ev) for ev in implicating)),
                EpistemicStatus.INFERENCE,
                0.8,
                [subject_ev, first_ev, *implicating],
                intent,
            )
        )
        if verdict is Verdict.LIKELY:
            verdict = Verdict.CONFIRMED
    for mechanism, sentence in clearing:
        claims.append(
            _claim(
                f'{_label(mechanism)} rules out {_what(subject)}: "{_quote(sentence)}"',
                EpistemicStatus.INFERENCE,
                0.8,
                [subject_ev, mechanism],
                intent,
            )
        )
    reported = _reported_hypothesis(subject, reports)
    if not implicating and not clearing:
        # A report naming it (a draft postmortem) is what was recorded of it: said so, never
        # "no mechanism evidence about it" beside it (before h30-draft it was).
        naming_reports = [r for r in reports if _report_sentence(r, subject_ev)]
        claims.append(
            _claim(
                f"{_upper_first(_what(subject))} may have caused {_label(first_ev)} "
                + (f"({reported})" if reported else "(no mechanism evidence about it)"),
                EpistemicStatus.HYPOTHESIS,
                0.5,
                [subject_ev, first_ev, *naming_reports],
                intent,
            )
        )
    claims += _report_claims(
        subject, reports, first_ev, intent, elsewhere(subject), [m for m, _ in clearing]
    )
    confounders: list[Confounder] = []
    unexplained: list[Evidence] = []  # competing causes no mechanism record rules out
    for other in others:
        ev = other.evidence
        if _about(ev, _change_id(subject_ev)):
            continue
        if not other.in_window_before(first_at, CONFOUNDER_WINDOW):
            continue
        confounders.append(_confounder(other, mechanisms, reports))
        if confounders[-1].assessment is not CauseAssessment.RULED_OUT:
            unexplained.append(ev)
        claims.append(
            _claim(
                f"Another change, {_label(ev)} ({ev.element_id}), "
                + (
                    _before_first_error(other, first_ev, first_at, as_of)
                    if other.rolling_at(first_at)
                    else f"happened at {iso_utc(other.at)}, within {_human(CONFOUNDER_WINDOW)} "
                    f"before {_label(first_ev)} was first seen"
                )
                + ": it could explain the errors as well",
                EpistemicStatus.FACT,
                0.9,
                [ev],
                intent,
            )
        )
        for mechanism in mechanisms:
            if (ruled_out := _clearing_sentence(mechanism, ev)) is not None:
                claims.append(
                    _claim(
                        f'{_label(mechanism)} rules out {_what(other)}: "{_quote(ruled_out)}"',
                        EpistemicStatus.INFERENCE,
                        0.8,
                        [ev, mechanism],
                        intent,
                    )
                )
        claims += _report_claims(
            other,
            reports,
            first_ev,
            intent,
            elsewhere(other),
            [m for m in mechanisms if m.evidence_id in confounders[-1].ruled_out_by],
        )
    if subject is not closest or named is not None:
        # The question asked about one change: say where the mechanism evidence points instead.
        for other in others:
            pointing = [
                m
                for m in mechanisms
                if m not in implicating
                and _clearing_sentence(m, other.evidence) is None
                and (_names_as_cause(m, other.evidence) or (other is closest and m in names_none))
            ]
            if pointing:
                claims.append(
                    _claim(
                        "Mechanism evidence from "
                        + ", ".join(sorted(_label(ev) for ev in pointing))
                        + f" points to {_what(other)} ({_finished(other)} at "
                        f"{iso_utc(other.at)}) as the cause of {_label(first_ev)}",
                        EpistemicStatus.INFERENCE,
                        0.75,
                        [other.evidence, *pointing],
                        intent,
                    )
                )
    if clearing and not implicating:
        verdict = Verdict.REFUTED
    elif clearing:
        # Mechanism records disagree about this change.
        verdict = _LOWER[verdict]
    if not affected:
        verdict = _LOWER[verdict]
    if confounders and verdict is not Verdict.REFUTED:
        verdict = _LOWER[verdict]
    # Two or more competing causes that no mechanism record rules out lower the verdict one
    # step more than any confounder does: mechanism evidence naming the subject (`confirmed`,
    # one step down for the confounders) then leaves `uncertain`, as a time correlation
    # alone (`likely`) does. One such beside ruled-out ones keeps `likely`.
    if len(unexplained) >= UNEXPLAINED_CAUSES and verdict is not Verdict.REFUTED:
        claims.append(
            _claim(
                f"{len(unexplained)} other changes in the {_human(CONFOUNDER_WINDOW)} before "
                f"{_label(first_ev)} was first seen are not ruled out by any mechanism "
                "evidence: each could explain the errors as well, so the verdict is no "
                "stronger than uncertain",
                EpistemicStatus.INFERENCE,
                0.8,
                [subject_ev, first_ev, *unexplained],
                intent,
            )
        )
        verdict = Verdict.UNCERTAIN
    relevant_ids = {subject_ev.evidence_id, first_ev.evidence_id}
    if any(c.resolution == "unresolved" and relevant_ids & set(c.evidence_ids) for c in conflicts):
        verdict = _LOWER[verdict]
    return _Correlation(verdict=verdict, claims=claims, confounders=confounders)


class _Causes(BaseModel):
    """An open root-cause question's candidate causes."""

    claims: list[Claim] = Field(default_factory=list)
    confounders: list[Confounder] = Field(default_factory=list)
    missing: list[MissingEvidence] = Field(default_factory=list)


def _window_before_first_error(
    evidence: Sequence[Evidence],
    firsts: Sequence[Evidence],
    checks: CompetingCauseChecks | None,
    mechanisms: Sequence[Evidence],
    intent: str,
    out: _Causes,
    unfinished_by: str | None = None,
    reports: Sequence[Evidence] = (),
) -> tuple[datetime, Evidence, list[tuple[_Candidate, Confounder]]] | None:
    """The first error and the releases and changes recorded in the lookback before it,
    each with what the mechanism evidence says of it, also added to `out.confounders` (None
    without a first error). Says, in `out`, when the checks of the window did not all run,
    or, when they did and found nothing, that nothing changed; `unfinished_by` (a read of
    the run failed, or the loop stopped early): that nothing changed is unknown, a gap."""
    seen = _sightings(firsts)
    if not seen:
        return None
    first_at, first_ev = _first_error(seen)
    checked = checks is not None and checks.complete
    if not checked:
        not_run = checks.not_run if checks is not None else []
        out.missing.append(
            MissingEvidence(
                evidence_type="change_event",
                intents=[intent],
                description="competing-cause checks did not all run for the window before the "
                "first error"
                + (f" ({'; '.join(not_run)})" if not_run else "")
                + ": other changes may be missing from the list",
                required=False,
            )
        )
    # Begun by the first error (a rollout under way then too), finished within the lookback.
    before = [c for c in _candidates(evidence) if c.in_window_before(first_at, DEPLOY_LOOKBACK)]
    window = (
        f"in the {DEPLOY_LOOKBACK // timedelta(hours=1)} h, and no other change in the "
        f"{_human(CHANGE_LOOKBACK)}, before {_label(first_ev)} was first seen at "
        f"{iso_utc(first_at)}"
    )
    if not before and checked and unfinished_by is not None:
        # An absence never rests on a run whose reads did not all answer: the failed one
        # may be the read that holds the release.
        out.missing.append(
            MissingEvidence(
                evidence_type="change_event",
                intents=[intent],
                description=f"{UNKNOWN_NOT_ABSENT}whether no release is recorded {window}: "
                f"{_unfinished_why(unfinished_by)}",
                required=True,
            )
        )
    elif not before and checked:
        out.claims.append(
            _claim(
                f"No release is recorded {window}",
                EpistemicStatus.FACT,
                0.8,
                [first_ev],
                intent,
            )
        )
    assessed = [(cand, _confounder(cand, mechanisms, reports)) for cand in before]
    out.confounders += [confounder for _, confounder in assessed]
    return first_at, first_ev, assessed


def _clearing_claims(cand: _Candidate, mechanisms: Sequence[Evidence], intent: str) -> list[Claim]:
    """An inference per mechanism record that rules `cand` out, quoting its sentence."""
    ev = cand.evidence
    return [
        _claim(
            f'{_label(m)} rules out {_what(cand)}: "{_quote(sentence)}"',
            EpistemicStatus.INFERENCE,
            0.8,
            [ev, m],
            intent,
        )
        for m in mechanisms
        if (sentence := _clearing_sentence(m, ev))
    ]


def _changes_before(
    evidence: Sequence[Evidence],
    firsts: Sequence[Evidence],
    mechanisms: Sequence[Evidence],
    checks: CompetingCauseChecks | None,
    as_of: datetime,
    unfinished_by: str | None = None,
    period: tuple[NamedTime, NamedTime] | None = None,
    releases_unread: bool = False,
    *,
    names_an_error: bool = True,
    then_rollout: str | None = None,
    reports: Sequence[Evidence] = (),
) -> _Causes:
    """Answers "what changed before the errors?": each release and other change recorded in
    the lookback before the first error (a release rolling out then too), as a fact with its
    time, and what the mechanism evidence says of it (an inference when a record names it as
    the cause or rules it out). Nothing is called the cause by its time alone.

    A period asked ("in the last hour", "between 09:30 and 10:03") keeps the changes inside
    it; when the searched lookback does not cover it, a required gap says which part was not
    searched (never a list from another window answering for it). `names_an_error`: the
    question names an error; when it does not, an error first seen before every release read
    is not "the errors" (`_errors_after_release_asked_about`). `then_rollout`: the release
    whose rollout start "then" is taken as, the release asked about (as for a correlation)."""
    intent = Intent.CHANGE_HISTORY.value
    if period is not None and period[0].at <= as_of:
        # The period was read itself (`period_change_steps`): no first error is needed.
        return _changes_in_period(evidence, period, as_of, unfinished_by, releases_unread)
    seen = _sightings(firsts)
    if not names_an_error and seen:
        # "The errors" are those after the release asked about, as for a correlation: an
        # error its service emitted long before every release is no evidence of them.
        upstream = set(checks.upstream) if checks is not None else set()
        releases = [
            c
            for c in _candidates(evidence)
            if c.kind == "release" and c.evidence.context.get("service") not in upstream
        ]
        reference, later = _errors_after_release_asked_about(
            _candidate_of(releases, then_rollout), releases, seen, as_of
        )
        if reference is not None and not later:
            only = _only_errors_before(
                reference, seen, as_of, evidence, intent, searched=unfinished_by is None
            )
            return _Causes(claims=only.claims)
        if reference is not None:
            kept = {ev.element_id for _, ev in later}
            firsts = [ev for ev in firsts if ev.element_id in kept]
    out = _Causes()
    window = _window_before_first_error(
        evidence, firsts, checks, mechanisms, intent, out, unfinished_by, reports
    )
    if window is None:
        return out
    first_at, first_ev, before = window
    if period is not None:
        start, end = period[0].at, period[1].at
        before = [(c, f) for c, f in before if start <= c.at <= end]
        kept = {f.element_id for _, f in before}
        out.confounders = [f for f in out.confounders if f.element_id in kept]
        searched_from = first_at - CHANGE_LOOKBACK
        if start < searched_from or end > first_at:
            out.missing.append(
                MissingEvidence(
                    evidence_type="change_event",
                    intents=[intent],
                    description=f"the question asks for changes from {iso_utc(start)} to "
                    f"{iso_utc(end)} ({period[0].words!r}); changes were searched only before "
                    f"{_label(first_ev)} was first seen at {iso_utc(first_at)} (releases in "
                    f"the {DEPLOY_LOOKBACK // timedelta(hours=1)} h, other changes in the "
                    f"{_human(CHANGE_LOOKBACK)} before it): the rest of the period was not "
                    "searched"
                    + (
                        f"; of those found, {len(before)} fall in the period and are listed"
                        if before
                        else "; none of those found falls in the period"
                    ),
                    required=True,
                )
            )
    for cand, confounder in before:
        ev = cand.evidence
        out.claims.append(
            _claim(
                f"{_upper_first(_what(cand))} "
                f"{_before_first_error(cand, first_ev, first_at, as_of)}",
                EpistemicStatus.FACT,
                0.9,
                [ev, first_ev],
                intent,
            )
        )
        out.claims += _clearing_claims(cand, mechanisms, intent)
        out.claims += _window_report_claims(
            cand, confounder, before, mechanisms, reports, first_ev, intent
        )
        if confounder.named_by:
            naming = [m for m in mechanisms if m.evidence_id in confounder.named_by]
            out.claims.append(
                _claim(
                    f"Mechanism evidence from {', '.join(sorted(_label(m) for m in naming))} "
                    f"names {_what(cand)} as the cause of {_label(first_ev)}",
                    EpistemicStatus.INFERENCE,
                    0.75,
                    [ev, first_ev, *naming],
                    intent,
                )
            )
    if period is None and first_at < as_of - EPISODE:
        out.claims += _changes_since_old_error(evidence, first_at, first_ev, as_of, intent)
    return out


def _changes_in_period(
    evidence: Sequence[Evidence],
    period: tuple[NamedTime, NamedTime],
    as_of: datetime,
    unfinished_by: str | None,
    releases_unread: bool = False,
) -> _Causes:
    """Answers "what changed in the last hour" ("in July 2026", "since March"): each release
    of the focus services and each other change recorded in the period asked (its end at
    as_of at the latest), as a fact with its time. None found is said, as what was searched,
    unless the search did not finish (then unknown, not absent). With no service named the
    releases of every service the subject may read are read; when no release read ran
    (`releases_unread`: the run stopped first) a required gap says so, never a list of change
    events passed off as every change."""
    intent = Intent.CHANGE_HISTORY.value
    out = _Causes()
    start, end = period[0].at, min(period[1].at, as_of)
    # Both ends' words ("between July 1 and July 10"), said once for a month ("in July").
    words = " ".join(dict.fromkeys((period[0].words, period[1].words)))
    span = f"from {iso_utc(start)} to {iso_utc(end)} ({words!r})"
    inside = [c for c in _candidates(evidence) if start <= c.at <= end]
    out.claims = [
        _claim(
            f"{_upper_first(_what(cand))} {_finished(cand)} at {iso_utc(cand.at)}, in the "
            f"period asked, {span}",
            EpistemicStatus.FACT,
            0.9,
            [cand.evidence],
            intent,
        )
        for cand in inside
    ]
    # A release started in the period and rolling out at its end: its finish lies after the
    # period, so the window above misses it; said as under way, never as finished in it.
    rolling = [
        c for c in _candidates(evidence) if c.kind == "release" and start <= c.began <= end < c.at
    ]
    out.claims += [
        _claim(
            f"{_upper_first(_what(cand))} started at {iso_utc(cand.began)}, in the period "
            f"asked, {span}, and had not finished by {_period_end_words(end, as_of)}: under "
            f"way"
            + (f" (finished at {iso_utc(cand.at)}, after the period)" if cand.at <= as_of else ""),
            EpistemicStatus.FACT,
            0.9,
            [cand.evidence],
            intent,
        )
        for cand in rolling
    ]
    if not inside and not rolling:
        description = (
            f"unknown, not absent: the run stopped ({unfinished_by}) before its search of "
            f"the period {span} finished"
            if unfinished_by
            else f"no release of the services asked about and no other change the subject "
            f"may read is recorded {span}"
        )
        out.missing.append(
            MissingEvidence(
                evidence_type="change_event",
                intents=[intent],
                description=description,
                required=unfinished_by is not None,
            )
        )
    if releases_unread:
        out.missing.append(
            MissingEvidence(
                evidence_type="deployment_time",
                intents=[intent],
                description=f"the releases of the period were not read: the changes listed "
                f"{span} are change events, not releases; ask again, or name the service "
                "(--service svc:<name>, or 'what changed on <name> ...') to read its releases "
                "in the period",
                required=True,
            )
        )
    return out


def _release_service(ev: Evidence) -> str | None:
    service = ev.context.get("service", ev.props.get("service"))
    return service if isinstance(service, str) else None


def _last_releases(
    timed: Sequence[Evidence], end: datetime, services: Sequence[str]
) -> list[Evidence]:
    """The records of the last release of each service (of `services`, when any) finished
    by `end` ("what was deployed before release X?"), with the documents of its time."""
    last: dict[str, tuple[datetime, str]] = {}
    for ev in timed:
        if ev.type != "Deployment" or (t := _instant(ev, _DEPLOY_TIME_KEYS)) is None or t > end:
            continue
        service = _release_service(ev) or ""
        if services and service not in services:
            continue
        if service not in last or (t, ev.element_id) > last[service]:
            last[service] = (t, ev.element_id)
    kept = {element_id for _, element_id in last.values()}
    return [ev for ev in timed if ev.element_id in kept or (_release_of(ev) or "") in kept]


def _last_changes_before(
    evidence: Sequence[Evidence],
    period: EventPeriod,
    as_of: datetime,
    unfinished_by: str | None,
    services: Sequence[str],
) -> _Causes:
    """Answers "what changed before the release?" (`EventPeriod.last_only`): the last
    release of each service asked about finished by the period's end (1 s before the
    release's start), one rolling out then, and every other change of the tenant in the
    period (the day before), each a fact with its time; none after the end. None found is
    said, as what was searched, unless the search did not finish (unknown, not absent)."""
    intent = Intent.CHANGE_HISTORY.value
    out = _Causes()
    end = period.end
    point = f"{iso_utc(end)} ({period.words!r})"
    candidates = _candidates(evidence)
    last: dict[str, _Candidate] = {}
    for cand in candidates:
        service = _release_service(cand.evidence) or ""
        if cand.kind != "release" or cand.at > end or (services and service not in services):
            continue
        last[service] = cand  # sorted by time: the last one stays
    for service, cand in sorted(last.items()):
        of = f" of {service}" if service else ""
        out.claims.append(
            _claim(
                f"{_upper_first(_what(cand))} finished at {iso_utc(cand.at)}, "
                f"{_human(end - cand.at)} before {point}: the last release{of} by then",
                EpistemicStatus.FACT,
                0.9,
                [cand.evidence],
                intent,
            )
        )
    rolling = [c for c in candidates if c.kind == "release" and c.began <= end < c.at]
    out.claims += [
        _claim(
            f"{_upper_first(_what(cand))} started at {iso_utc(cand.began)} and had not "
            f"finished by {point}: under way then"
            + (f" (finished at {iso_utc(cand.at)}, after it)" if cand.at <= as_of else ""),
            EpistemicStatus.FACT,
            0.9,
            [cand.evidence],
            intent,
        )
        for cand in rolling
        if not services or (_release_service(cand.evidence) or "") in services
    ]
    span = f"from {iso_utc(period.start)} to {point}"
    changes = [c for c in candidates if c.kind == "change" and period.start <= c.at <= end]
    out.claims += [
        _claim(
            f"{_upper_first(_what(cand))} happened at {iso_utc(cand.at)}, "
            f"{_human(end - cand.at)} before {point}",
            EpistemicStatus.FACT,
            0.9,
            [cand.evidence],
            intent,
        )
        for cand in changes
    ]
    if not last:
        out.missing.append(
            MissingEvidence(
                evidence_type="deployment_time",
                intents=[intent],
                description=(
                    f"unknown, not absent: the run stopped ({unfinished_by}) before its "
                    f"search of the releases by {point} finished"
                    if unfinished_by
                    else f"no release of the services asked about that the subject may read "
                    f"finished by {point}"
                ),
                required=unfinished_by is not None,
            )
        )
    if not changes:
        out.missing.append(
            MissingEvidence(
                evidence_type="change_event",
                intents=[intent],
                description=(
                    f"unknown, not absent: the run stopped ({unfinished_by}) before its "
                    f"search of the other changes {span} finished"
                    if unfinished_by
                    else f"no other change the subject may read is recorded {span}"
                ),
                required=unfinished_by is not None,
            )
        )
    return out


def _period_end_words(end: datetime, as_of: datetime) -> str:
    """`as_of T` when the period asked is read up to as_of, else `the period's end T`."""
    return f"as_of {iso_utc(as_of)}" if end == as_of else f"the period's end {iso_utc(end)}"


def _changes_since_old_error(
    evidence: Sequence[Evidence],
    first_at: datetime,
    first_ev: Evidence,
    as_of: datetime,
    intent: str,
) -> list[Claim]:
    """The only first error known is of no episode by `as_of` (a day or more before it): the
    releases and changes that finished in the day before `as_of` are said with it, so an old
    error never stands alone for "the errors" (a rollout still under way at `as_of` is said
    by the rollout fact)."""
    recent = [c for c in _candidates(evidence) if as_of - EPISODE <= c.at <= as_of]
    return [
        _claim(
            f"{_upper_first(_what(cand))} {_finished(cand)} at {iso_utc(cand.at)}, "
            f"{_human(as_of - cand.at)} before as_of {iso_utc(as_of)}: no error first seen "
            f"after it is known at as_of ({_label(first_ev)}, first seen at "
            f"{iso_utc(first_at)}, predates it)",
            EpistemicStatus.FACT,
            0.9,
            [cand.evidence, first_ev],
            intent,
        )
        for cand in recent
    ]


def _candidate_causes(
    evidence: Sequence[Evidence],
    firsts: Sequence[Evidence],
    mechanisms: Sequence[Evidence],
    checks: CompetingCauseChecks | None,
    as_of: datetime,
    unfinished_by: str | None = None,
    reports: Sequence[Evidence] = (),
) -> _Causes:
    """Every release and other change recorded in the lookback before the first error (a
    release rolling out then too), each a candidate cause with what the mechanism evidence
    says of it (or a report that records no mechanism, `_cause_reports`). An open question
    names no change, so none is picked by its time alone."""
    intent = Intent.ROOT_CAUSE.value
    out = _Causes()
    window = _window_before_first_error(
        evidence, firsts, checks, mechanisms, intent, out, unfinished_by, reports
    )
    if window is None:
        return out
    first_at, first_ev, before = window
    for cand, confounder in before:
        ev = cand.evidence
        when = _before_first_error(cand, first_ev, first_at, as_of)
        clearing = _clearing_claims(cand, mechanisms, intent)
        out.claims += clearing
        naming = [m for m in mechanisms if m.evidence_id in confounder.named_by]
        if naming:
            out.claims.append(
                _claim(
                    f"Candidate cause: {_what(cand)} ({when}); mechanism evidence from "
                    + ", ".join(sorted(_label(m) for m in naming))
                    + " names it",
                    EpistemicStatus.INFERENCE,
                    0.75,
                    [ev, first_ev, *naming],
                    intent,
                )
            )
        elif not clearing:
            reported = _reported_hypothesis(cand, reports)
            naming_reports = [r for r in reports if r.evidence_id in confounder.reported_by]
            out.claims.append(
                _claim(
                    f"Candidate cause: {_what(cand)} ({when}); "
                    + (reported or "no mechanism evidence about it"),
                    EpistemicStatus.HYPOTHESIS,
                    0.5,
                    [ev, first_ev, *naming_reports],
                    intent,
                )
            )
        out.claims += _window_report_claims(
            cand, confounder, before, mechanisms, reports, first_ev, intent
        )
    return out


def _window_report_claims(
    cand: _Candidate,
    confounder: Confounder,
    before: Sequence[tuple[_Candidate, Confounder]],
    mechanisms: Sequence[Evidence],
    reports: Sequence[Evidence],
    first_ev: Evidence,
    intent: str,
) -> list[Claim]:
    """The report claims of a candidate cause of the window (`_report_claims`): the other
    candidates the mechanism records name as the cause, and those that rule it out, are
    what disagrees with a report naming it."""
    if not confounder.reported_by:
        return []
    elsewhere = [
        (m, other)
        for other, assessed in before
        if other is not cand
        for m in mechanisms
        if m.evidence_id in assessed.named_by
    ]
    clearing = [m for m in mechanisms if m.evidence_id in confounder.ruled_out_by]
    return _report_claims(cand, reports, first_ev, intent, elsewhere, clearing)


def _after_first_error(
    cand: _Candidate, first_ev: Evidence, first_at: datetime, intent: str
) -> Claim:
    kind = "release" if cand.kind == "release" else "change"
    # Judged on its start: an error first seen during a rollout is not "before" the release.
    when = (
        f"started at {iso_utc(cand.began)}"
        if cand.began < cand.at
        else f"{_finished(cand)} at {iso_utc(cand.at)}"
    )
    return _claim(
        f"{_label(first_ev)} was first seen at {iso_utc(first_at)}, before {_what(cand)} "
        f"{when}: the {kind} cannot have started it",
        EpistemicStatus.INFERENCE,
        0.9,
        [cand.evidence, first_ev],
        intent,
    )


def _change_fact(
    subject: _Candidate, evidence: Sequence[Evidence], intent: str, as_of: datetime | None = None
) -> Claim:
    """`Release X (id) finished at T`, bound to its record and every other record of it; a
    rollout under way at `as_of`: since when, and that it had not finished by then."""
    subject_ev = subject.evidence
    corroborating = [
        o
        for o in _with(evidence, "deployment_time")
        if o is not subject_ev and _about(o, _change_id(subject_ev))
    ]
    # A release's own record states its rollout's start: said as the release lookup says it.
    began = (
        instant_of(subject_ev.props.get("started_at"))
        if subject.kind == "release" and subject_ev.type == "Deployment"
        else None
    )
    started = f"started at {iso_utc(began)} and " if began and began <= subject.at else ""
    # A rollout under way at as_of: its finish (after as_of) is not stated.
    rolling = as_of is not None and subject.rolling_at(as_of)
    finish = _finish_words(subject, as_of) if as_of is not None and rolling else None
    return _claim(
        f"{'Release' if subject.kind == 'release' else 'Change'} {_label(subject_ev)} "
        f"({subject_ev.element_id}) {started}"
        + (finish or f"{_finished(subject)} at {iso_utc(subject.at)}"),
        EpistemicStatus.FACT,
        0.95,
        [subject_ev, *corroborating],
        intent,
    )


def _no_first_error_yet(
    named: _Candidate | None,
    releases: Sequence[_Candidate],
    as_of: datetime,
    question: str | None,
    evidence: Sequence[Evidence],
    intent: str,
    *,
    searched: bool = True,
    known_at: datetime | None = None,
) -> _Correlation:
    """No first error is known at `as_of`: state the release, and that nothing correlates yet.
    With a `known_at` before as_of, it is what was recorded by known_at that has none (the
    error may have happened by as_of and been recorded after known_at).

    Not `searched` (the loop stopped before its reads were done): the release alone; that no
    error is known would state what the run never looked for (the required gap says so)."""
    by_as_of = [c for c in releases if c.at <= as_of]
    subject = named or (
        max(by_as_of, key=lambda c: (c.at, c.evidence.element_id)) if by_as_of else None
    )
    if subject is None:
        return _Correlation(verdict=Verdict.UNCERTAIN)
    # A rollout under way at as_of: its finish, after as_of, is not stated (the rollout fact
    # says it was under way; before h29-then2, this claim said when it finished).
    facts = [_change_fact(subject, evidence, intent)] if subject.at <= as_of else []
    if not searched:
        return _Correlation(verdict=Verdict.UNCERTAIN, claims=facts)
    subject_ev = subject.evidence
    codes = extract_mentions(question or "").error_codes
    errors = f"{' / '.join(codes)} error" if codes else "error"
    if subject.at <= as_of:
        when = f"{_human(as_of - subject.at)} after {_what(subject)} {_finished(subject)}"
    elif subject.rolling_at(as_of):
        when = (
            f"{_human(as_of - subject.began)} after the rollout of {_what(subject)} started; "
            "it had not finished by then"
        )
    else:
        when = f"before {_what(subject)} {_finished(subject)}"
    if known_at is not None and known_at < as_of:
        # "Known at as_of" read as "had not happened by then" (e29-qa m1: 10:02:38's error,
        # recorded at 10:02:45, asked with --known-at 10:02:40).
        said = (
            f"No first-seen {errors} had been recorded by known_at {iso_utc(known_at)} "
            f"(as_of {iso_utc(as_of)}, {when}): no time correlation can be drawn from what "
            "was recorded by then"
        )
    else:
        said = (
            f"No first-seen {errors} is known at as_of {iso_utc(as_of)} ({when}): "
            "no time correlation can be drawn yet"
        )
    return _Correlation(
        verdict=Verdict.UNCERTAIN,
        claims=[
            *facts,
            _claim(
                said,
                EpistemicStatus.INFERENCE,
                0.6,
                [subject_ev],
                intent,
            ),
        ],
    )


def _with_change_records(gap: MissingEvidence, evidence: Sequence[Evidence]) -> MissingEvidence:
    """A missing-mechanism gap of a root-cause question, naming the change documents read
    (a pipeline run, its config diff): they say what changed, and what would decide it is
    a record of how that change made the errors."""
    docs = sorted(
        {
            ev.element_id
            for ev in _with(evidence, "change_event")
            if ev.type == "Document" and "mechanism" not in ev.evidence_types
        }
    )
    if gap.evidence_type != "mechanism" or not gap.required or not docs:
        return gap
    return gap.model_copy(
        update={
            "description": f"{gap.description}; the change records read ({', '.join(docs)}) "
            "say what changed (e.g. a config diff), not that it caused the errors: a record "
            "of how it did would decide between the candidate causes"
        }
    )


def _asked_error_codes(question: str | None) -> list[str]:
    """The error codes the question names (`PAY-1002`, `err:PAY-1002`), as written in codes."""
    mentions = extract_mentions(question or "")
    ids = [i.removeprefix("err:") for i in mentions.ids if i.startswith("err:")]
    return sorted({*mentions.error_codes, *ids})


def _hindsight(
    mechanisms: Sequence[Evidence],
    firsts: Sequence[Evidence],
    question: str | None,
    errors_later: Mapping[str, datetime] | None,
    as_of: datetime,
) -> tuple[list[Evidence], MissingEvidence | None]:
    """The mechanism records that explain errors known at `as_of`, and, when some were held
    back, the required `error_first_seen` gap that says why.

    A record in force at as_of (the postmortem, valid from the release's finish at 10:02:00)
    may be about errors that had not happened then (PAY-4097, first seen 10:02:38): the
    errors it concerns (those the question names, else the codes its text names) are each
    first seen after as_of (`errors_later`) and none of them is known at as_of. Claimed, it
    answered "what caused the PAY-4097 errors?" at 10:02:00 complete with what was only
    written after them."""
    if not errors_later or not mechanisms:
        return list(mechanisms), None
    known = {_label(ev) for t, ev in _sightings(firsts) if t <= as_of}
    later = {
        code_id.removeprefix("err:"): at
        for code_id, at in errors_later.items()
        if code_id.removeprefix("err:") not in known
    }
    asked = _asked_error_codes(question)

    def concerns(m: Evidence) -> set[str]:
        if asked:
            return set(asked)
        return {c for c in {*known, *later} if re.search(rf"\b{re.escape(c)}\b", m.content)}

    held = [m for m in mechanisms if (about := concerns(m)) and about <= later.keys()]
    if not held:
        return list(mechanisms), None
    codes = sorted(set().union(*(concerns(m) for m in held)))
    starts = ", ".join(f"{c} first seen {iso_utc(later[c])}" for c in codes)
    records = ", ".join(sorted({m.element_id for m in held}))
    gap = MissingEvidence(
        evidence_type="error_first_seen",
        intents=[Intent.ROOT_CAUSE.value],
        description=f"no {' / '.join(codes)} error is known at as_of {iso_utc(as_of)}: "
        f"its first sighting on record is after as_of ({starts}: recorded later, not "
        f"followed), so no cause of it is claimed ({records} explains errors that had not "
        "happened by then): ask at a later --as-of",
        required=True,
    )
    return [m for m in mechanisms if m not in held], gap


def _mechanisms_of_asked_errors(
    mechanisms: Sequence[Evidence], firsts: Sequence[Evidence], question: str | None
) -> tuple[list[Evidence], MissingEvidence | None]:
    """The mechanism records bound to the errors the question names, and, when some were
    read but none is bound, the required gap that says so.

    Bound: its time (valid_from, else observed_at) lies within `EPISODE` of a first sighting
    of a named code, or, when no sighting of one is known, its text names the code. A
    question naming no error keeps every mechanism (its errors are the incident's)."""
    codes = _asked_error_codes(question)
    if not codes or not mechanisms:
        return list(mechanisms), None
    seen = [(t, ev) for t, ev in _sightings(firsts) if _label(ev) in codes]

    def bound(m: Evidence) -> bool:
        at = m.valid_from or m.observed_at
        if seen:
            return at is not None and any(abs(at - t) <= EPISODE for t, _ in seen)
        return any(re.search(rf"\b{re.escape(c)}\b", m.content) for c in codes)

    kept = [m for m in mechanisms if bound(m)]
    if kept:
        return kept, None
    asked = ", ".join(codes)
    read = sorted(mechanisms, key=lambda m: m.element_id)
    if seen:
        first_at, first_ev = _first_error(seen)
        dated = ", ".join(
            f"{m.element_id} of {iso_utc(at)}"
            if (at := m.valid_from or m.observed_at)
            else f"{m.element_id}, undated"
            for m in read
        )
        why = (
            f"{_label(first_ev)} (first seen at {iso_utc(first_at)}): the mechanism records "
            f"read ({dated}) are not within {_human(EPISODE)} of it, so they are about another "
            "error or incident"
        )
    else:
        names = ", ".join(m.element_id for m in read)
        why = (
            f"{asked}: the mechanism records read ({names}) do not name it, and no first "
            "sighting of it is known to place them"
        )
    return kept, MissingEvidence(
        evidence_type="mechanism",
        intents=[Intent.ROOT_CAUSE.value],
        description=f"no mechanism evidence about {why}; none is stated as its mechanism",
        required=True,
    )


def _names_an_error(question: str | None) -> bool:
    """Whether the question names an error (a code, or an `err:` id)."""
    mentions = extract_mentions(question or "")
    return bool(mentions.error_codes) or any(i.startswith("err:") for i in mentions.ids)


def _errors_after_release_asked_about(
    named: _Candidate | None,
    releases: Sequence[_Candidate],
    seen: Sequence[tuple[datetime, Evidence]],
    as_of: datetime,
) -> tuple[_Candidate | None, list[tuple[datetime, Evidence]]]:
    """For a question naming no error ("did the deploy cause it?", "what changed before the
    errors?"): "the errors" are those that followed the release asked about, so one first
    seen before every release (an error the service has emitted for years) is no evidence
    of them. (the release asked about, the sightings begun after it) when the first error
    predates it; (None, all) when it does not."""
    first_at = _first_error(seen)[0]
    # An error first seen during a rollout is after the release began: it can be its effect.
    predates = (
        not named.began_by(first_at) if named else not any(c.began_by(first_at) for c in releases)
    )
    reference = _release_asked_about(named, releases, as_of) if predates else None
    if reference is None:
        return None, list(seen)
    return reference, [(t, ev) for t, ev in seen if reference.began_by(t)]


def _release_asked_about(
    named: _Candidate | None, releases: Sequence[_Candidate], as_of: datetime
) -> _Candidate | None:
    """The release a question naming no error is about: the one it names, else the latest
    finished by `as_of`, else the first after it (a rollout under way)."""
    if named is not None:
        return named
    by_as_of = [c for c in releases if c.at <= as_of]
    if by_as_of:
        return max(by_as_of, key=lambda c: (c.at, c.evidence.element_id))
    return min(releases, key=lambda c: (c.at, c.evidence.element_id)) if releases else None


def _only_errors_before(
    release: _Candidate,
    seen: Sequence[tuple[datetime, Evidence]],
    as_of: datetime,
    evidence: Sequence[Evidence],
    intent: str,
    *,
    searched: bool = True,
) -> _Correlation:
    """Every error known at `as_of` was first seen before the release asked about: neither
    for nor against it (`uncertain`), and no error after it is known yet. Not `searched` (a
    read failed, or the loop stopped early): the release alone, as `_no_first_error_yet`."""
    last_at, last_ev = max(seen, key=lambda p: (p[0], p[1].element_id))
    what, finished = _what(release), _finished(release)
    claims: list[Claim] = []
    if release.at <= as_of:
        claims.append(_change_fact(release, evidence, intent))
    if not searched:
        return _Correlation(verdict=Verdict.UNCERTAIN, claims=claims)
    if release.at <= as_of:
        after = f"{what} {finished} at {iso_utc(release.at)} is known at as_of {iso_utc(as_of)}"
        after += f" ({_human(as_of - release.at)} later)" if as_of > release.at else ""
    else:
        # Its finish lies after as_of: not stated (the rollout fact says it was under way).
        after = f"{what} is known at as_of {iso_utc(as_of)} (it had not {finished} by then)"
    claims.append(
        _claim(
            f"No error first seen after {after}: {_label(last_ev)}, first seen at "
            f"{iso_utc(last_at)}, predates it and is no evidence for or against it; no "
            "time correlation can be drawn yet",
            EpistemicStatus.INFERENCE,
            0.6,
            [release.evidence, last_ev],
            intent,
        )
    )
    return _Correlation(verdict=Verdict.UNCERTAIN, claims=claims)


def _named_release_missing(
    absent: Sequence[str],
    seen: Sequence[tuple[datetime, Evidence]],
    candidates: Sequence[_Candidate],
    mechanisms: Sequence[Evidence],
    intent: str,
    as_of: datetime,
    *,
    reports: Sequence[Evidence] = (),
) -> _Correlation:
    """The question names a release the evidence has no time for: no verdict about another
    release in its place; the changes of the window are listed as candidates."""
    names = ", ".join(absent)
    result = _Correlation(
        verdict=Verdict.UNCERTAIN,
        missing=[
            MissingEvidence(
                evidence_type="deployment_time",
                intents=[intent],
                description=f"no deployment time for {names}, named in the question (not "
                "found, not visible to the subject, or not valid at as_of): its correlation "
                "with the errors cannot be judged",
            )
        ],
    )
    if not seen:
        return result
    first_at, first_ev = _first_error(seen)
    for cand in candidates:
        if not cand.in_window_before(first_at, CONFOUNDER_WINDOW):
            continue
        ev = cand.evidence
        result.confounders.append(_confounder(cand, mechanisms, reports))
        result.claims.append(
            _claim(
                f"{_upper_first(_what(cand))} "
                + (
                    _before_first_error(cand, first_ev, first_at, as_of)
                    if cand.rolling_at(first_at)
                    else f"{_finished(cand)} at {iso_utc(cand.at)}, within "
                    f"{_human(CONFOUNDER_WINDOW)} before {_label(first_ev)} was first seen"
                )
                + f": it could explain the errors (the question asked about {names})",
                EpistemicStatus.FACT,
                0.9,
                [ev],
                intent,
            )
        )
    return result


def _not_searched_to_the_end(
    missing: Sequence[MissingEvidence], stopped_by: str
) -> list[MissingEvidence]:
    """Each required gap said as what it is when the loop stopped with reads still planned:
    not found yet, which is not the same as none (a gap, never a negative finding)."""
    why = _unfinished_why(stopped_by)
    return [
        m.model_copy(update={"description": f"{UNKNOWN_NOT_ABSENT}{why}"})
        # A gap already worded so names what is unknown: kept.
        if m.required and not m.description.startswith(UNKNOWN_NOT_ABSENT)
        else m
        for m in missing
    ]


def _unfinished_why(stopped_by: str) -> str:
    """Why a search did not finish (`search_stopped_by`), and how to ask again."""
    if stopped_by == READ_FAILED:
        return (
            "a read of the run failed (see its tool calls: a query timed out or Neo4j refused "
            "it), so its search for this did not finish; ask again"
        )
    again = _LONGER_SEARCH.get(stopped_by)
    hint = f"; ask again with {again}" if again else ""
    return (
        f"the run stopped ({stopped_by}) with reads still planned, before its search "
        f"for this finished{hint}"
    )


def _incident_not_recorded(
    missing: Sequence[MissingEvidence],
    evidence: Sequence[Evidence],
    question: str | None,
    as_of: datetime,
) -> list[MissingEvidence]:
    """The missing first-seen time of a question placed at the incident's start ("when the
    incident started") said as what it is when no incident is in the evidence: none was
    known then (or none this subject may read), not that no error was seen."""
    if not question or any(ev.type == "Incident" for ev in evidence):
        return list(missing)
    asked = time_references(question, as_of)
    if asked.event is not AnchorEvent.INCIDENT_START:
        return list(missing)
    words = asked.event_words or "the incident"
    description = (
        "no incident of the service that the subject may read is known at as_of and "
        f"known_at, so {words!r} cannot be placed, and no first-seen time was read through "
        "it; the errors themselves are asked about with 'then' or 'when <error code> started'"
    )
    return [
        m.model_copy(update={"description": description})
        if m.evidence_type == "error_first_seen"
        else m
        for m in missing
    ]


def _no_incident_found(
    missing: Sequence[MissingEvidence],
    evidence: Sequence[Evidence],
    question: str | None,
    as_of: datetime,
    known_at: datetime | None,
    places: Sequence[str],
    service_id: str | None,
) -> list[MissingEvidence]:
    """A question asking which incident (or outage) hit a place, answered with no incident
    in the evidence ("which incident affected ledger?"): never `complete` with no claim. A
    document found by the word "incident" is no incident of the place: the required gap
    says none the subject may read is recorded for the place read (never a claim about the
    whole graph: a hidden incident reads the same as none), or that the question names no
    place the subject may read."""
    if not question or not asks_an_incident(question):
        return list(missing)
    if any(ev.type == "Incident" for ev in evidence):
        return list(missing)
    # The places the question names itself, or `--service`: a service its other words found
    # by text ("the wombat service" finds svc:ledger's description) is not what it asks about.
    said = question.lower()
    named = [
        p
        for p in places
        if re.search(rf"(?<![\w-]){re.escape(p.split(':', 1)[-1].lower())}(?![\w-])", said)
    ]
    mentions = extract_mentions(question)
    others = [*mentions.error_codes, *mentions.alerts, *(i for i in mentions.ids if ":" in i)]
    named = list(dict.fromkeys([*([service_id] if service_id else []), *named, *others]))
    known = f" (known at {iso_utc(known_at)})" if known_at is not None else ""
    if named:
        description = (
            f"no incident of {', '.join(named)} that the subject may read is recorded "
            f"by as_of {iso_utc(as_of)}{known}: none is claimed"
        )
    else:
        description = (
            "no incident the subject may read was found for what the question names: "
            f"{_place_words(question)} (ask e.g. which incident affected payment-api?)"
        )
    gap = MissingEvidence(
        evidence_type="incident_report",
        intents=[Intent.INCIDENT_LOOKUP.value],
        description=description,
        required=True,
    )
    return [m for m in missing if m.evidence_type != "incident_report"] + [gap]


def dependency_depth_notes(
    evidence: Sequence[Evidence],
    intents: Sequence[str],
    calls: Sequence[ToolCallRecord] = (),
) -> list[str]:
    """How far DEPENDS_ON was walked from the service asked about, either way: up to
    `DEPENDS_ON_HOPS` hops (the template's bound). A walk that reached its last hop says
    what lies beyond was not read, so the list may not be the whole chain ("What depends on
    payment-db?" names api-gateway 3 hops in, not what depends on api-gateway); a walk whose
    chains all ended before says within how many hops; a walk its row cap cut (`calls`)
    says so (its gap, `_capped_walk_gaps`, says what is left out). A note (the answer
    holds for the hops read), not a gap."""
    notes = []
    walks = (
        (Intent.DEPENDENTS, "dependent", "into", "what depends on {}"),
        (Intent.DEPENDENCIES, "dependency", "out of", "what {} depend(s) on in turn"),
    )
    hops = DEPENDS_ON_HOPS
    for intent, etype, way, beyond in walks:
        if intent.value not in intents:
            continue
        paths = [
            [str(p) for p in path]
            for ev in _with(evidence, etype)
            if isinstance(path := ev.context.get("path"), list) and len(path) >= 2
        ]
        if not paths:
            continue
        starts = ", ".join(sorted({p[0] for p in paths}))
        read = f"DEPENDS_ON was read up to {hops} hops {way} {starts}"
        capped = [limit for kind, _, limit in capped_walks(calls) if kind == etype]
        edge = sorted({p[-1] for p in paths if len(p) == hops + 1})
        longest = max(len(p) for p in paths) - 1
        if capped:
            # Its gap says what the cap left out (`_capped_walk_gaps`).
            notes.append(f"{read}; the read stopped at its cap of {max(capped)} paths")
        elif edge:
            notes.append(
                f"{read}; {_verb(beyond, edge)} was not read, so services further along "
                "the chain are not listed"
            )
        else:
            unit = "hop" if longest == 1 else "hops"
            notes.append(f"{read}; every chain read ended within {longest} {unit}")
    return notes


def capped_walks(calls: Sequence[ToolCallRecord]) -> list[tuple[str, str, int]]:
    """(evidence type, start, row cap) of each DEPENDS_ON walk of a dependency question
    (`dependent` into the service, `dependency` out of it), and of each FIRED_ON read of an
    alert question (`alert_firing`), that its row cap cut."""
    return sorted(
        {
            (str(c.evidence_type), str(c.params.get("start_id")), c.limit or 0)
            for c in calls
            if c.template_id == "dependency_neighbourhood"
            and (
                (
                    c.evidence_type in ("dependent", "dependency")
                    and c.options.get("rel_type") == "DEPENDS_ON"
                )
                or (c.evidence_type == "alert_firing" and c.options.get("rel_type") == "FIRED_ON")
            )
            and c.truncated
        }
    )


def _capped_walk_gaps(
    intents: set[Intent], cuts: Sequence[tuple[str, str, int]]
) -> list[MissingEvidence]:
    """A required gap for each walk of `cuts` (`capped_walks`) the question asked
    for: the walk lists the nearest services first, so those past its cap are unknown."""
    asked = {
        "dependent": Intent.DEPENDENTS,
        "dependency": Intent.DEPENDENCIES,
        "alert_firing": Intent.ALERT_FIRING,
    }
    way = {"dependent": "into", "dependency": "out of"}
    return [
        MissingEvidence(
            evidence_type=etype,
            intents=[asked[etype].value],
            description=(
                f"the FIRED_ON read of {start} stopped at its cap of {limit} firings: "
                "firings past the cap are not listed"
                if etype == "alert_firing"
                else f"the DEPENDS_ON walk {way[etype]} {start} stopped at its cap of {limit} "
                "paths (nearest first): services past the cap are not listed"
            ),
            required=True,
        )
        for etype, start, limit in cuts
        if etype in asked and asked[etype] in intents
    ]


def _verb(words: str, names: Sequence[str]) -> str:
    """`words` with `names` in its `{}` and its "depend(s)" agreeing with them."""
    said = words.format(", ".join(names))
    return said.replace("depend(s)", "depends" if len(names) == 1 else "depend")


# A place said as a word before "service" ("the wombat service", "wombat svc").
_SERVICE_WORD = re.compile(r"\b([a-z][\w-]*)\s+(?:service|svc)\b", re.IGNORECASE)


def _place_words(question: str) -> str:
    """What the question names said as matching nothing: the name said before "service"
    ("'wombat' matched no service the subject may read"), else that it names none."""
    found = [m for m in _SERVICE_WORD.findall(question) if m.lower() not in {"the", "a", "our"}]
    if not found:
        return "it names no service, alert or error code the subject may read"
    return f"{found[0]!r} matched no service the subject may read"


def _human(delta: timedelta) -> str:
    """`38 s`, `4 min 10 s`, `2 d 20 h 2 min 38 s`."""
    seconds = int(delta.total_seconds())
    if seconds < 120:
        return f"{seconds} s"
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if not days and not hours:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    parts = [(days, "d"), (hours, "h"), (minutes, "min"), (secs, "s")]
    return " ".join(f"{n} {unit}" for n, unit in parts if n)


def keep_claims_in_pack(claims: Sequence[Claim], pack_ids: Sequence[str]) -> list[Claim]:
    """Drop any claim that cites evidence outside the pack (validation before output)."""
    allowed = set(pack_ids)
    return [c for c in claims if c.evidence_ids and set(c.evidence_ids) <= allowed]
