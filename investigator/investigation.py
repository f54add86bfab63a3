"""The orchestrator: `investigate(request, ...) -> InvestigationResult`.

question + subject + purpose + as_of (+ known_at) -> planner -> retrieval loop over a
`RunSession` (tool calls, candidates, RRF, gate, gaps) -> Context Pack -> claims. The
session records the run into the Context Graph when a `RunRecorder` is given
(docs/contracts.md section 3 order); with `recorder=None` nothing is written (a local run id).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import UTC, datetime

import neo4j
from pydantic import BaseModel, Field, ValidationInfo, field_validator

from cypher_templates.executor import DEADLINE_CUT, TemplateExecutor
from investigator.alert_rules import (
    alert_name_of,
    ambiguous_rules_note,
    lead_apart,
    picked_by_words,
    picked_rules_note,
    rule_label,
    same_named_rules,
)
from investigator.change_period import (
    CausesDropped,
    asked_change_period,
    asks_changes,
    causes_dropped,
    cut_cause_reads,
    cut_first_release_reads,
    cut_team_reads,
    cut_timeline_reads,
    cut_window_reads,
    event_change_period,
    failed_period_rollouts,
    lists_record_changes,
    period_read,
    releases_read,
)
from investigator.claims import (
    NO_RUNBOOK_AT_AS_OF,
    READ_FAILED,
    Claim,
    ClaimSet,
    Confounder,
    Verdict,
    capped_walks,
    cut_incident_lists,
    dependency_depth_notes,
    dependency_retractions,
    derive_claims,
    fired_on_reads,
    firing_list_notes,
    firing_list_reads,
    keep_claims_in_pack,
    states_at_as_of,
    status_reads,
)
from investigator.claims.traces import trace_reads
from investigator.context_graph.models import RunStatus, ToolCallRecord
from investigator.context_graph.recorder import RunRecorder
from investigator.defaults import (
    DEFAULT_BUDGET_TOKENS,
    DEFAULT_DEADLINE_S,
    DEFAULT_PURPOSE,
)
from investigator.evidence import Evidence, Rejection, RejectionReason, iso_utc
from investigator.failed_reads import CAUSE_READ_TYPES, failed_read_gaps, failed_reads_named
from investigator.gate import Conflict, EvidenceGate, GatePolicy
from investigator.incident_reference import IncidentReading
from investigator.invisible_marks import refused_character, without_invisible_marks
from investigator.ownership_history import (
    asked_ownership_period,
    asked_team,
    asks_team_firings,
    cut_entity_reads,
    cut_histories,
    stated_tombstones,
    team_side_instants,
    unplaced_team_gaps,
)
from investigator.pack import (
    MAX_BUDGET_TOKENS,
    MIN_BUDGET_TOKENS,
    ContextPack,
    Omission,
    PackBudgetError,
    PackRequest,
    build_pack,
    evidence_token_budget,
    too_small_hint,
)
from investigator.planner import (
    CHANGE_LOOKBACK,
    DEFAULT_MAX_ROUNDS,
    DeterministicPlanner,
    PlanInput,
    competing_cause_status,
    extract_mentions,
    focus_services,
    missing_required,
    team_firing_ownership_period,
    types_wanted,
    unread_record_words,
    unread_words,
    unrecorded_asks,
)
from investigator.record_time import missing_rule_note
from investigator.retrieval import RetrievalLoop, RetrievalOutcome, StopReason
from investigator.rubric import (
    UNREAD_QUESTION,
    Intent,
    MissingEvidence,
    listed_types,
    required_types,
)
from investigator.rule_texts import RuleText, untrusted_rule_texts
from investigator.runbook_gaps import (
    OTHER_RULE,
    budget_dropped_runbook_gaps,
    budget_dropped_runbooks,
    claimed_by_text,
    place_runbooks_said,
    say_runbook_gaps,
    text_only_withheld,
)
from investigator.runbook_period import asked_version_period, cut_version_reads
from investigator.runbook_sections import question_focus
from investigator.session import RunSession, RunSpec
from investigator.spelling import ReadQuestion, read_question
from investigator.tenant_records import notes_when_nothing_read
from investigator.timeline import (
    AnchorEvent,
    ReferenceTime,
    RelativeTime,
    UnplacedReason,
    UnplacedTime,
    cause_kind,
    change_instant,
    counted_cause,
    far_anchor_notes,
    first_error,
    future_as_of_notes,
    period_notes,
    relative_notes,
    time_references,
    unplaced_times,
)
from investigator.untrusted_text import FOUND_BY_TEXT_ONLY


class InvestigationRequest(BaseModel):
    """What the user asked (CLI flags map one to one)."""

    question: str = Field(min_length=1, max_length=4000)
    subject_id: str = Field(min_length=1, max_length=200)
    purpose: str = Field(default=DEFAULT_PURPOSE, min_length=1, max_length=100)
    service_id: str | None = Field(default=None, min_length=1, max_length=200)
    as_of: datetime | None = None
    known_at: datetime | None = None
    max_rounds: int = Field(default=DEFAULT_MAX_ROUNDS, ge=1, le=10)
    budget_tokens: int = Field(
        default=DEFAULT_BUDGET_TOKENS, ge=MIN_BUDGET_TOKENS, le=MAX_BUDGET_TOKENS
    )
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=200)
    deadline_s: float = Field(default=DEFAULT_DEADLINE_S, ge=0.0, le=600.0, allow_inf_nan=False)
    # Replay only: a run that stopped at its deadline is re-run to the same number of tool
    # calls, so the wall clock of the original machine does not decide what replay rebuilds.
    deadline_after_calls: int | None = Field(default=None, ge=0, le=10_000)
    # Replay only: False reads no clock, for a run its deadline did not stop (a re-run on a
    # slower or busier server is not cut where the run was not).
    wall_clock_deadline: bool = True

    @field_validator("as_of", "known_at")
    @classmethod
    def _zoned(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.utcoffset() is None:
            raise ValueError("times must be ISO-8601 with a zone (Z or an offset)")
        return value.astimezone(UTC) if value is not None else None

    @field_validator("subject_id", "purpose", "service_id", "idempotency_key")
    @classmethod
    def _printable_id(cls, value: str | None) -> str | None:
        # Checked before a run is opened, so hostile ids never leave a failed run behind.
        if value is not None and (not value.isprintable() or value.strip() != value):
            raise ValueError("must be printable, without surrounding spaces")
        return value

    @field_validator("question", "service_id", mode="before")
    @classmethod
    def _visible(cls, value: object) -> object:
        # A question or id pasted from chat: "pay\u200bment-api" is payment-api.
        return without_invisible_marks(value) if isinstance(value, str) else value

    @field_validator("question")
    @classmethod
    def _printable(cls, value: str, info: ValidationInfo) -> str:
        if not value.strip():
            raise ValueError("the question is empty")
        # C0, C1, bidi overrides, tag characters. A recorded question replay re-asks was
        # checked when asked (before session 34 C0 only): it replays as recorded.
        recorded = bool(info.context and info.context.get("recorded"))
        if any(ord(c) < 32 and c not in "\n\t" for c in value) or (
            not recorded and refused_character(value) is not None
        ):
            raise ValueError("the question contains control characters")
        return value


class Goal(BaseModel):
    """The goal the run pursues (recorded first)."""

    question: str
    service_id: str | None
    subject_id: str
    purpose: str
    as_of: datetime
    known_at: datetime
    intents: list[str]
    required_evidence: list[str]
    planner: str


class StageTimings(BaseModel):
    """Wall time per stage in milliseconds (not part of any hash)."""

    subject_ms: float = 0.0
    plan_ms: float = 0.0
    retrieval_ms: float = 0.0
    executor_ms: float = 0.0
    gate_ms: float = 0.0
    pack_ms: float = 0.0
    claims_ms: float = 0.0
    record_ms: float = 0.0
    total_ms: float = 0.0


class InvestigationResult(BaseModel):
    """The answer: claims bound to evidence, what was rejected and why, what is missing."""

    run_id: str
    pack_id: str
    pack_hash: str
    status: RunStatus
    stop_reason: str
    rounds: int
    verdict: Verdict | None
    claims: list[Claim]
    evidence: list[Evidence]
    rejected: list[Rejection]
    missing_evidence: list[MissingEvidence]
    confounders: list[Confounder] = Field(default_factory=list)
    conflicts: list[Conflict] = Field(default_factory=list)
    question: str
    subject_id: str
    # The subject's tenant: `subject_id` is unique only within it (runs recorded before this
    # field was kept return None on an idempotent retry).
    tenant: str | None = None
    purpose: str
    service_id: str | None = None
    as_of: datetime
    known_at: datetime
    intents: list[str]
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    omissions: int = 0
    # Relative time words of the question the planner does not resolve ("yesterday"): the
    # answer is at `as_of`, and says so.
    unresolved_time_words: list[str] = Field(default_factory=list)
    # Why each of them is not used: words not read as a time, an amount it cannot apply, an
    # event not found by as_of as known at known_at, a time after as_of, the run's deadline.
    unresolved_time_reasons: list[UnplacedTime] = Field(default_factory=list)
    # The event taken as "then" when it lies more than a day before `as_of`, said plainly
    # (the claims name its date, which is easy to miss).
    time_notes: list[str] = Field(default_factory=list)
    # The question's relative words read against `as_of`, in UTC ("yesterday": the day
    # before as_of's day, "2 hours ago": as_of minus 2 h), each with its period (`start` to
    # `end`) or instant (`start` == `end`) and how it was read (a `Time` line says it too).
    relative_times: list[RelativeTime] = Field(default_factory=list)
    # The loop stopped (deadline, max_rounds, budget) with reads still planned: what the
    # answer lists as missing was not searched for to the end.
    search_cut_short: bool = False
    # A run stopped by its deadline: the number of tool calls it had made when the deadline
    # was found passed; its replay is cut after as many calls, never by a clock (replay.py).
    deadline_cut_after_calls: int | None = None
    # The alerts the question asks about whose rule is no longer in their rule file (a
    # `:MissingFile` mark), said as `runbook --alert` says it (record_time.missing_rule_note).
    rule_notes: list[str] = Field(default_factory=list)
    # The untrusted rules `rule_notes` name by id, with their own words (file, group,
    # summary): data, quoted only here (fenced by the MCP server, `[untrusted]` lines).
    untrusted_rules: list[RuleText] = Field(default_factory=list)
    # What the runbook search set aside, said as the card says it: the pages of other
    # database engines than the one the question names or pastes an error of.
    search_notes: list[str] = Field(default_factory=list)
    # The services the question's words name apart from `--service` (both read, the words'
    # first): one line, so a `--service` left from an earlier command is seen.
    service_notes: list[str] = Field(default_factory=list)
    # How "the incident" of a question naming no incident and no service was read: the one
    # incident it means, or the several it could mean (none taken) (incident_reference.py).
    incident_reading: IncidentReading | None = None
    timings: StageTimings = Field(default_factory=StageTimings)
    reused_run: bool = False
    # A retry with an idempotency key whose run ended without an answer (interrupted by
    # Ctrl-C, or failed): that run's id. This run asked again, at its own known_at.
    retry_of: str | None = None


def removed_rule_notes(
    outcome: RetrievalOutcome, evidence: Sequence[Evidence], as_of: datetime
) -> list[str]:
    """What the answer says of the alerts the question asks about (its anchors) or that are
    evidence, whose rule the last import of their rule file no longer had by `as_of`: the
    record stays current and answered, as on the card."""
    asked = set(outcome.known.alerts) | {ev.element_id for ev in evidence}
    note = missing_rule_note([ev for ev in outcome.removed_rules if ev.element_id in asked], as_of)
    return [note] if note else []


def rules_apart(outcome: RetrievalOutcome) -> list[list[Evidence]]:
    """The rules of one name that lead to different runbooks, by name (the rule notes name
    each of them)."""
    reached = {a: frozenset(ids) for a, ids in outcome.runbooks_through.items()}
    return [r for r in same_named_rules(outcome.alert_rows) if lead_apart(r, reached)]


def set_apart_other_rules(
    gate: EvidenceGate, outcome: RetrievalOutcome, question: str
) -> list[str]:
    """Rules of one name in several files that lead to different runbooks (GOV.UK's three
    `High5xxRate`): the question's words pick one, and the runbooks only the others lead to
    are set aside; none picked, every runbook of that name is set aside (it is ambiguous).
    One rule's runbook is never stated as another's. The notes say which is which."""
    reached = {a: frozenset(ids) for a, ids in outcome.runbooks_through.items()}
    apart = rules_apart(outcome)
    notes: list[str] = []
    unused: dict[str, str] = {}
    # A runbook another alert (of another name) leads to stays that alert's.
    grouped = {r.element_id for rules in apart for r in rules}
    others = {rb for a, ids in reached.items() if a not in grouped for rb in ids}
    for rules in apart:
        pick = picked_by_words(rules, question)
        chosen = {pick.alert_id} if pick is not None else set()
        kept = others | {
            rb for r in rules if r.element_id in chosen for rb in reached.get(r.element_id, ())
        }
        name = alert_name_of(rules[0])
        for rule in rules:
            for runbook in sorted(reached.get(rule.element_id, frozenset()) - kept):
                unused.setdefault(
                    runbook,
                    f"{OTHER_RULE}linked to {rule_label(rule)}, "
                    f"one of {len(rules)} rules named {name}, "
                    + (
                        "not the one the question's words pick"
                        if pick
                        else "and the question's words pick none"
                    ),
                )
        notes.append(
            picked_rules_note([rules], [pick])
            if pick is not None
            else ambiguous_rules_note([rules], reached)
        )
    for ev in sorted(gate.admitted, key=lambda ev: ev.evidence_id):
        detail = unused.get(ev.element_id.split("@", 1)[0])
        if ev.type == "Runbook" and detail is not None:
            gate.set_aside(ev, RejectionReason.LOW_RELEVANCE, outcome.rounds, detail)
    return notes


def unresolved_services(
    service_id: str | None, question: str, tool_calls: Sequence[ToolCallRecord]
) -> list[str]:
    """The `--service` and the services the question names (`svc:` ids, service names) whose
    every linking call returned no row (none failed): nothing the subject may see, so
    nothing was read for them."""
    mentions = extract_mentions(question)
    named = [i for i in mentions.ids if i.startswith("svc:")] + mentions.names
    texts = list(dict.fromkeys(([service_id] if service_id else []) + named))
    out = []
    for text in texts:
        calls = [
            tc
            for tc in tool_calls
            if tc.template_id == "entity_resolution" and tc.params.get("text") == text[:200]
        ]
        if calls and all(tc.row_count == 0 and not tc.error for tc in calls):
            out.append(text)
    return out


def _named_but_later(question: str, started_later: Mapping[str, datetime]) -> set[str]:
    """The records the question names by their own name ("the PaymentApiHighErrorRate alert")
    whose record starts after as_of: not followed, so no owner of theirs was read, but their
    owner then was asked: the gap says none is recorded, the record itself not yet."""
    words = question.lower()
    return {
        id_
        for id_ in started_later
        if "|" not in id_ and id_.split(":", 1)[-1].split("@", 1)[0].lower() in words
    }


def _blame_unresolved(reasons: list[UnplacedTime], names: Sequence[str]) -> list[UnplacedTime]:
    """An event the run never looked for ("then" with no service read) is not "not found":
    the service named resolved to nothing visible, and the reason says so."""
    said = ", ".join(repr(n) for n in names)
    return [
        u.model_copy(
            update={
                "reason": UnplacedReason.NAME_UNRESOLVED,
                "detail": u.detail.split(" is found by as_of", 1)[0]
                + f" is looked for: {said} resolved to nothing this subject may see",
            }
        )
        if u.reason is UnplacedReason.EVENT_NOT_FOUND
        else u
        for u in reasons
    ]


def _causes_left_out(
    gate: EvidenceGate, pack: ContextPack, change_period: tuple[datetime, datetime] | None
) -> list[CausesDropped]:
    """The competing causes of the window before the first error left out for the budget:
    by the gate (`cause_dropped`) or by the pack (admitted, not in it). A period's answer
    is not that window (its cuts are the period's own)."""
    window = gate.policy.cause_window if change_period is None else None
    packed = {ev.evidence_id for ev in pack.evidence}
    dropped = {i: (kind, gate.cause_dropped_at.get(i)) for i, kind in gate.cause_dropped.items()}
    # A record of a release's time (the CI/CD document of the release) is no change of its
    # own: counted neither shown nor left out (`counted_cause`).
    for ev in gate.admitted:
        if ev.evidence_id not in packed and counted_cause(ev, window):
            dropped[ev.element_id] = (cause_kind(ev), change_instant(ev))
    shown = [
        (ev.element_id, cause_kind(ev), change_instant(ev))
        for ev in pack.evidence
        if counted_cause(ev, window)
    ]
    # Change events are read for the 30 min before the first error, releases for its 24 h.
    changes = (window[1] - CHANGE_LOOKBACK, window[1]) if window is not None else None
    return causes_dropped(window, shown, dropped, gate.named_release_ids(), changes)


def _alerts_unfound(
    calls: Sequence[ToolCallRecord], fired_on: Sequence[tuple[str, str]]
) -> list[tuple[str, bool]]:
    """(service, read failed) of each service whose alerts (FIRED_ON into it) were read for
    a question asking an unnamed alert's owner (`planner.alert_owner_steps`) and that found
    none the subject may read firing on it by as_of (`fired_on`), or whose every such read
    failed."""
    found = {service for service, _ in fired_on}
    reads: dict[str, list[ToolCallRecord]] = {}
    for call in calls:
        if (
            call.template_id == "dependency_neighbourhood"
            and call.options.get("rel_type") == "FIRED_ON"
            and call.options.get("direction") == "in"
        ):
            reads.setdefault(str(call.params.get("start_id")), []).append(call)
    out = []
    for service, read in sorted(reads.items()):
        if service in found:
            continue
        out.append((service, all(c.error is not None for c in read)))
    return out


def _budget_dropped_owners(gate: EvidenceGate, omissions: Sequence[Omission]) -> list[Evidence]:
    """The OWNS records the gate admitted and the pack dropped for the budget: read, so
    not absent (claims/ownership.py words the owner gaps they would fill so)."""
    cut = {o.candidate_id for o in omissions if o.reason is RejectionReason.BUDGET_EXCEEDED}
    return [ev for ev in gate.admitted if ev.evidence_id in cut and ev.type == "OWNS"]


def final_rejections(
    rejections: list[Rejection],
    admitted_ids: list[str],
    admitted_records: Iterable[tuple[str, int]] = (),
    anchors: Iterable[str] = (),
    text_only: Collection[str] = (),
) -> list[Rejection]:
    """Rejections as the user sees them: the latest decision per candidate (a later graph
    channel knows more than an earlier text hit), none for candidates that another tool call
    brought into the pack, and no `low_relevance` for a record (element id, version) the
    pack holds in another form (a runbook's section, admitted through the alert it applies
    to, beside its whole text found by the fulltext channel before the plan needed runbooks)
    nor for a record the admitted evidence was reached through (`anchors`: the alert whose
    runbook the answer is, a text hit before the plan needed runbooks). The Context Graph
    keeps every decision. A runbook withheld as untrusted text that the run found by text
    only (`text_only`) says so at the end of its detail (`FOUND_BY_TEXT_ONLY`)."""
    inside = set(admitted_ids)
    records = set(admitted_records)
    through = set(anchors)
    latest: dict[str, Rejection] = {}
    for rej in rejections:
        if rej.candidate_id in inside:
            continue
        if rej.reason == RejectionReason.LOW_RELEVANCE and (
            (rej.element_id, rej.version) in records or rej.element_id in through
        ):
            continue
        withheld = rej.reason is RejectionReason.REJECTED_UNTRUSTED_INSTRUCTION
        if withheld and rej.element_id in text_only:
            rej = rej.model_copy(update={"detail": rej.detail + FOUND_BY_TEXT_ONLY})
        latest[rej.candidate_id] = rej
    return list(latest.values())


def read_through(tool_calls: Iterable[ToolCallRecord], evidence: Iterable[Evidence]) -> list[str]:
    """The records the answer's runbooks were read through: the anchor each admitted
    runbook came by, and each anchor whose runbooks a call returned (an alert's two rules,
    `@critical` and `@warning`, link the one runbook, admitted once)."""
    anchors = {str(a) for ev in evidence if (a := ev.context.get("anchor"))}
    for tc in tool_calls:
        anchor = tc.params.get("anchor_id")
        if tc.template_id == "runbooks_for" and tc.row_count > 0 and isinstance(anchor, str):
            anchors.add(anchor)
    return sorted(anchors)


def searched_references(
    question: str,
    references: list[ReferenceTime],
    admitted: Iterable[Evidence],
    *,
    as_of: datetime,
    first_seen: datetime | None,
    cut_short: bool,
) -> list[ReferenceTime]:
    """The instants the answer is about: `references`, less a stand-in for the plain "then"
    when the loop stopped before it had looked for the first error that "then" means.

    The release (or incident, alert) stands in for "then" only once the errors were searched
    and none was found; a run cut by its deadline never searched, so "then" stays unplaced
    (the answer is at as_of) rather than moved to the release while the error is known."""
    asked = time_references(question, as_of)
    plain_then = asked.event is AnchorEvent.FIRST_ERROR and asked.side is None
    if not cut_short or not plain_then:
        return references
    if first_error(list(admitted), as_of, first_seen, asked.codes) is not None:
        return references
    return [r for r in references if r.kind != "event"]


def search_unfinished_by(outcome: RetrievalOutcome) -> str | None:
    """Why the search did not finish, else None: the loop's stop reason when it stopped
    with reads still planned; `READ_FAILED` when a read failed (a template timed out on a
    loaded server): what it was to read is unknown, never absent.

    A failed read comes first: a loop that then stopped at max_rounds was told "ask again
    with a larger --max-rounds" when a read had timed out. Only reads the run's own deadline
    stopped (`DEADLINE_CUT`) leave it to the deadline to say why."""
    errors = [call.error for call in outcome.tool_calls if call.error]
    if any(error != DEADLINE_CUT for error in errors):
        return READ_FAILED
    if outcome.cut_short:
        return outcome.stop_reason.value
    return READ_FAILED if errors else None


def _status(
    missing: list[MissingEvidence], unplaced_time_words: list[str], *, cut_short: bool
) -> RunStatus:
    # A time the question names that the answer is not about leaves the question unanswered
    # as asked: the answer is at as_of instead, so it is not complete. A search stopped
    # with reads still planned is not complete either: what they were to read (the owner at
    # a time the question names, a competing cause) may be what the answer lacks.
    if cut_short or unplaced_time_words or any(m.required for m in missing):
        return RunStatus.PARTIAL
    return RunStatus.COMPLETE


def no_claim_gaps(
    claims: Sequence[Claim],
    missing: list[MissingEvidence],
    intents: Sequence[Intent],
    as_of: datetime,
    known_at: datetime,
) -> list[MissingEvidence]:
    """A run that says nothing is never `complete`: with no claim and no gap at all, a
    required gap is added saying that nothing read answers the question (before, "are there
    still errors?" was `complete` with no claim and "Missing evidence: none", read as "no").
    A gap said without a claim is an answer of its own ("no change is recorded in the last
    hour": the period was read and is empty), left as it is."""
    if claims or missing:
        return missing
    types = required_types(intents) or ["entity"]
    return [
        *missing,
        MissingEvidence(
            evidence_type=types[0],
            intents=sorted(i.value for i in intents),
            description=f"no claim could be drawn: no record the run read states what the "
            f"question asks ({', '.join(sorted(i.value for i in intents))}) by as_of "
            f"{iso_utc(as_of)} as known at {iso_utc(known_at)}; the records listed under "
            "Evidence were read and answer none of it",
            required=True,
        ),
    ]


def _stop_reason(stop_reason: StopReason, missing: list[MissingEvidence]) -> StopReason:
    """The run's stop reason as the answer bears it out: a loop that stopped with every
    required evidence type supported (`evidence_sufficient`) but whose answer still lacks
    required evidence found from what it admitted (an owner at a time asked, an incident
    not recorded) had no step left that could read it: `no_progress`, as DESIGN.md says."""
    if stop_reason is StopReason.EVIDENCE_SUFFICIENT and any(m.required for m in missing):
        return StopReason.NO_PROGRESS
    return stop_reason


def investigate(
    request: InvestigationRequest,
    *,
    driver: neo4j.Driver,
    executor: TemplateExecutor | None = None,
    recorder: RunRecorder | None = None,
    planner: DeterministicPlanner | None = None,
    clock: Callable[[], datetime] | None = None,
    monotonic: Callable[[], float] = time.monotonic,
) -> InvestigationResult:
    """Run one investigation end to end and return its result.

    `known_at` defaults to the run's start time (the recorder's, when recording) and
    `as_of` to now. Raises NotAuthorized (exit 3) for an unknown subject or purpose,
    BadInput (exit 2) when the pack's required slots do not fit `budget_tokens`.
    """
    t_start = time.perf_counter()
    timings = StageTimings()
    now = (clock or (lambda: datetime.now(UTC)))().astimezone(UTC)
    as_of = request.as_of or now
    deadline = monotonic() + request.deadline_s if request.wall_clock_deadline else None
    executor = executor or TemplateExecutor(driver)
    planner = planner or DeterministicPlanner()
    # Read as the planner reads it ("whos the ownr" as "who is the owner"); the run records the
    # question as typed (replay reads it again the same way), and its answer says so.
    read = read_question(request.question)
    request = request.model_copy(update={"question": read.text})
    intents = planner.intents(
        PlanInput(
            question=request.question,
            service_id=request.service_id,
            as_of=as_of,
            known_at=request.known_at or now,
        )
    )

    session = RunSession.open(
        RunSpec(
            command="investigate",
            question=read.typed,
            subject=request.subject_id,
            purposes=(request.purpose,),
            as_of=as_of,
            as_of_given=request.as_of is not None,
            # An investigation's as_of is given or now: its question's time words are read
            # against it (the plan's steps keep the instants they give), never taken for it.
            as_of_from="given" if request.as_of is not None else "now",
            known_at=request.known_at,
            service=request.service_id,
            max_rounds=request.max_rounds,
            budget_tokens=request.budget_tokens,
            options={"deadline_s": request.deadline_s},
            idempotency_key=request.idempotency_key,
        ),
        executor=executor,
        recorder=recorder,
        clock=lambda: now,
    )
    if session.reused is not None:
        result = session.reused_result(InvestigationResult)
        return result.model_copy(update={"reused_run": True})
    timings.subject_ms = session.subject_ms
    if monotonic is time.monotonic:  # a test's own clock is not the executor's
        session.read_deadline = deadline
    with session:
        result = _investigate(
            request,
            session=session,
            planner=planner,
            intents=intents,
            read=read,
            as_of=as_of,
            now=now,
            deadline=deadline,
            monotonic=monotonic,
            timings=timings,
            t_start=t_start,
        )
    if session.retry_of is not None:
        # Said beside the answer, not recorded in it (the run records it: `CtxRun.retry_of`).
        result = result.model_copy(update={"retry_of": session.retry_of})
    return result


def _investigate(
    request: InvestigationRequest,
    *,
    session: RunSession,
    planner: DeterministicPlanner,
    intents: list[Intent],
    read: ReadQuestion,
    as_of: datetime,
    now: datetime,
    deadline: float | None,
    monotonic: Callable[[], float],
    timings: StageTimings,
    t_start: float,
) -> InvestigationResult:
    subject, run_id, known_at = session.subject, session.run_id, session.known_at
    t0 = time.perf_counter()
    goal = Goal(
        question=read.typed,
        service_id=request.service_id,
        subject_id=subject.id,
        purpose=subject.purpose,
        as_of=as_of,
        known_at=known_at,
        intents=[i.value for i in intents],
        required_evidence=required_types(intents),
        planner=planner.name,
    )
    timings.plan_ms = (time.perf_counter() - t0) * 1000.0
    session.record_goal(goal)

    mentions = extract_mentions(request.question)
    # Codes as written: a tenant's error code id need not be `err:<code>` (the loop resolves
    # the ids whose `code` they are).
    focus_codes = sorted(set(mentions.error_codes))
    focus_ids = sorted({i for i in mentions.ids if i.startswith("err:")})
    # "Who owned it between A and B?", "the ownership history": every owner in the period.
    period = (
        asked_ownership_period(request.question, as_of)
        or team_firing_ownership_period(request.question, as_of, intents)
        if Intent.OWNERSHIP_AT_TIME in intents
        else None
    )
    # "Which runbook applied between A and B?", "over time": every version in the period.
    version_period = (
        asked_version_period(request.question, as_of)
        if {Intent.APPLICABLE_RUNBOOK, Intent.APPLICABLE_POLICY} & set(intents)
        else None
    )
    # "What changed since March?", "which releases of X in July 2026?": every change read.
    change_period = asked_change_period(intents, request.question, as_of)
    gate = session.use_gate(
        GatePolicy(
            as_of=as_of,
            known_at=known_at,
            purpose=subject.purpose,
            granted_labels=list(subject.labels),
            relevant_types=types_wanted(intents, request.question),
            focus_error_codes=focus_codes,
            focus_error_ids=focus_ids,
            section_names=list(question_focus(request.question).names),
            section_question=request.question,
            evidence_token_budget=evidence_token_budget(request.budget_tokens),
            ownership_period=period.bounds if period is not None else None,
            version_period=version_period.bounds if version_period is not None else None,
            change_period=change_period,
            record_changes=lists_record_changes(intents),
            listed_types=listed_types(intents),
            named_releases=extract_mentions(request.question).release_names(),
            required_types=required_types(intents),
        )
    )
    loop = RetrievalLoop(
        session=session,
        plan_input=PlanInput(
            question=request.question,
            service_id=request.service_id,
            as_of=as_of,
            known_at=known_at,
            max_rounds=request.max_rounds,
            ownership_period=(period.start, period.end) if period is not None else None,
        ),
        intents=intents,
        planner=planner,
        deadline=deadline,
        deadline_after_calls=request.deadline_after_calls,
        monotonic=monotonic,
    )
    t0 = time.perf_counter()
    recorded_before = session.record_ms
    outcome = loop.run()
    # The loop's own time: recorder writes made during it are counted under record_ms.
    loop_ms = (time.perf_counter() - t0) * 1000.0
    timings.retrieval_ms = loop_ms - (session.record_ms - recorded_before)
    timings.executor_ms = outcome.executor_ms
    timings.gate_ms = outcome.gate_ms
    # The intents answered: the goal's, or read again once the question turned out to type
    # an alert's name in another form ("help with paymentapihigherrorrate").
    intents = outcome.intents or intents
    reading = outcome.reading or request.question
    rule_notes = set_apart_other_rules(gate, outcome, request.question)

    t0 = time.perf_counter()
    supported = gate.supported_types()
    starved = sorted(set(missing_required(intents, supported)) & gate.budget_starved_types)
    if starved:
        # Required evidence exists but does not fit: fail closed rather than answer without it.
        raise PackBudgetError(
            f"--budget-tokens {request.budget_tokens} is too small: required evidence "
            f"({', '.join(starved)}) does not fit; "
            # What the answer needs of what was admitted (not the optional records nor the
            # competing causes that may be left out), plus the smallest candidate of each
            # type that did not fit, each once. Before (h29-claims), everything admitted and
            # a record of two such types twice: 1100 was told 2000 where 1200 answers.
            + too_small_hint(gate.required_tokens() + gate.starved_tokens(starved))
        )
    # A loop cut short, or a read that failed, leaves what it was to read unknown, not absent.
    stopped_by = search_unfinished_by(outcome)
    unfinished = stopped_by is not None
    references = searched_references(
        request.question,
        outcome.known.references,
        gate.admitted,
        as_of=as_of,
        first_seen=outcome.known.first_seen,
        cut_short=unfinished,
    )
    # The tombstones of retracted OWNS records the answer cites join the evidence
    # (ownership_history.py); the gate admits only current records.
    tombstones = stated_tombstones(
        outcome.ownership_records,
        gate.admitted,
        period,
        [as_of, *(r.at for r in references if r.at <= as_of)],
        team_side_instants(as_of, (r.at for r in references if r.kind != "as_of")),
    )
    # And those of retracted DEPENDS_ON records between the services a dependency question
    # names (claims/dependencies.py).
    tombstones = [*tombstones, *dependency_retractions(outcome.dependency_records)]
    # "What changed the day before the incident?": the period its words name once the
    # incident was placed (the gate's `change_period` was set to it during the loop).
    event_period = event_change_period(
        intents, request.question, as_of, references, outcome.known.late_references
    )
    # And those of DEPENDS_ON and OWNS records retracted in a change question's period
    # (claims/changes.py), unless it asks for the last changes before an event.
    period_retractions = (
        [] if event_period is not None and event_period.last_only else outcome.period_retractions
    )
    tombstones = [
        *tombstones,
        *(
            ev
            for ev in period_retractions
            if (ev.element_id, ev.version) not in {(t.element_id, t.version) for t in tombstones}
        ),
    ]
    session.record_cited(tombstones)
    if event_period is not None:
        change_period = event_period.bounds
    # "Which alerts fired the day before the incident?": the period its words name, read
    # as a release question's (its firings in it are the answer, the Time line says it).
    firing_period = (
        event_change_period(
            [Intent.RELEASE_LOOKUP],
            request.question,
            as_of,
            references,
            outcome.known.late_references,
        )
        if Intent.ALERT_FIRING in intents and event_period is None
        else None
    )
    if firing_period is not None and firing_period.last_only:
        firing_period = None  # "fired before 10:00": those by then (`_alert_firing_claims`)
    pack = build_pack(
        PackRequest(
            run_id=run_id,
            goal=request.question,
            as_of=as_of,
            known_at=known_at,
            subject_id=subject.id,
            purpose=subject.purpose,
            intents=[i.value for i in intents],
            required_types=required_types(intents),
            tools=sorted({tc.template for tc in outcome.tool_calls}),
            # Asks the KG has no record type for are missing too (`UNRECORDED_ASKS`).
            missing_types=missing_required(intents, supported)
            + unrecorded_asks(request.question)
            + (
                [UNREAD_QUESTION]
                if unread_words(reading, intents) is not None
                or unread_record_words(reading, intents) is not None
                else []
            ),
            budget_tokens=request.budget_tokens,
            created_at=now,
            cause_window=gate.policy.cause_window,
            named_ids=gate.named_release_ids(),
        ),
        [*gate.admitted, *tombstones],
        gate.rejected,
    )
    timings.pack_ms = (time.perf_counter() - t0) * 1000.0

    t0 = time.perf_counter()
    # Names given that resolved to nothing visible: never "none found" for what was not read.
    unresolved = unresolved_services(request.service_id, request.question, outcome.tool_calls)
    claim_set: ClaimSet = derive_claims(
        [i.value for i in intents],
        pack.evidence,
        as_of=as_of,
        conflicts=gate.conflicts,
        service_id=outcome.service_id,
        question=reading,
        references=references,
        found_by_text=outcome.known.runbooks_by_text,
        runbook_services=outcome.known.runbook_services,
        search_stopped_by=stopped_by,
        ownership_period=period,
        version_period=version_period,
        versions_cut=cut_version_reads(outcome.tool_calls) if version_period else (),
        event_period=event_period,
        firing_period=firing_period,
        window_cuts=[
            *cut_window_reads(outcome.tool_calls, change_period),
            *failed_period_rollouts(outcome.tool_calls, change_period),
            *(cut_timeline_reads(outcome.tool_calls) if Intent.TIMELINE in intents else []),
        ],
        releases_unread=not releases_read(outcome.tool_calls),
        # A period's answer is not the window before the first error: its cuts are the
        # period's own (window_cuts).
        cause_cuts=[
            *(
                cut_cause_reads(outcome.tool_calls, outcome.known.first_seen)
                if change_period is None
                else []
            ),
            *cut_first_release_reads(outcome.tool_calls),
        ],
        causes_dropped=_causes_left_out(gate, pack, change_period),
        period_was_read=period_read(outcome.tool_calls, change_period),
        team_cuts=cut_team_reads(outcome.tool_calls),
        ownership_records=outcome.ownership_records,
        incident_records=outcome.incident_records,
        ownership_cut=cut_histories(outcome.tool_calls),
        owners_cut=cut_entity_reads(outcome.tool_calls, outcome.owners_cut_at),
        team_words=asked_team(reading) if Intent.OWNERSHIP_AT_TIME in intents else None,
        teams=outcome.known.teams,
        services_read=outcome.known.services,
        unresolved_names=unresolved,
        started_later=outcome.started_later,
        errors_later=outcome.errors_later,
        known_at=known_at,
        walks_capped=capped_walks(outcome.tool_calls),
        incident_lists_cut=cut_incident_lists(outcome.tool_calls),
        status_reads=status_reads(outcome.tool_calls, as_of),
        failed_reads=failed_reads_named(outcome.tool_calls),
        cause_reads_failed=failed_reads_named(outcome.tool_calls, CAUSE_READ_TYPES),
        firing_lists=firing_list_reads(outcome.tool_calls),
        firings_read_of=fired_on_reads(outcome.tool_calls),
        trace_reads=trace_reads(outcome.tool_calls),
        releases_taken=outcome.releases_taken,
        ended_before=[gate.ended_before[k] for k in sorted(gate.ended_before)],
        dependency_tombstones=dependency_retractions(outcome.dependency_records),
        period_retractions=period_retractions,
        owners_asked=sorted(
            {
                str(call.params["entity_id"])
                for call in outcome.tool_calls
                if call.template_id == "owners_of" and not call.error
            }
            | (
                _named_but_later(request.question, outcome.started_later)
                if Intent.OWNERSHIP_AT_TIME in intents
                else set()
            )
        ),
        owners_dropped=_budget_dropped_owners(gate, pack.omissions),
        # Their owners' read failed (and was not answered by another): unknown, not absent.
        owners_unread=sorted(
            {
                str(call.params["entity_id"])
                for call in outcome.tool_calls
                if call.template_id == "owners_of" and call.error
            }
            - {
                str(call.params["entity_id"])
                for call in outcome.tool_calls
                if call.template_id == "owners_of" and not call.error
            }
        ),
        # A team's firings are not an alert's owner asked (h33b-firings): none on a service
        # of the team is said by the firing answer.
        alerts_unfound=[]
        if asks_team_firings(request.question, intents)
        else _alerts_unfound(outcome.tool_calls, outcome.known.alerts_fired_on),
        # The gate refused their own record as not valid then: said so in the gap.
        not_valid_then=sorted(
            {r.element_id for r in gate.rejected if r.reason is RejectionReason.REJECTED_TEMPORAL}
        ),
        competing_checks=competing_cause_status(
            intents,
            outcome.known,
            outcome.tool_calls,
            as_of=as_of,
            focus=focus_services(outcome.known, outcome.service_id),
        ),
    )
    claims = keep_claims_in_pack(claim_set.claims, pack.evidence_ids())
    timings.claims_ms = (time.perf_counter() - t0) * 1000.0

    # Unresolved time words, and explicit times after as_of: the answer is at as_of for both.
    stop_reason = outcome.stop_reason
    reasons = unplaced_times(
        request.question,
        as_of,
        references,
        late=outcome.known.late_references,
        cut_short_by=(
            str(stop_reason)
            if stop_reason is StopReason.DEADLINE or outcome.cut_short
            # A failed read: the event it would have found is unknown, not absent.
            else READ_FAILED
            if stopped_by == READ_FAILED
            else None
        ),
        spans=asks_changes(intents),
    )
    if event_period is not None and event_period.runs_to is not None:
        # "In the 2 hours after the release" begun by as_of: read up to it (its Time line).
        reasons = [u for u in reasons if u.words != event_period.words]
    if unresolved and not outcome.known.services and outcome.known.first_seen is None:
        reasons = _blame_unresolved(reasons, unresolved)
    unplaced = [u.words for u in reasons]
    dropped_runbooks = budget_dropped_runbooks(gate, pack.omissions)
    missing = budget_dropped_runbook_gaps(
        claim_set.missing_evidence, dropped_runbooks, pack.evidence, as_of=as_of
    )
    if any(as_of in instants for instants in dropped_runbooks.values()):
        # A version in force at as_of was read and dropped for the budget (its own gap says
        # so): none being recorded in force there is not what the KG holds.
        missing = [m for m in missing if not m.description.startswith(NO_RUNBOOK_AT_AS_OF)]
    missing = unplaced_team_gaps(
        missing,
        reasons,
        asked_team(reading) if Intent.OWNERSHIP_AT_TIME in intents else None,
        outcome.known.teams,
        as_of,
    )
    missing = no_claim_gaps(claims, missing, intents, as_of, known_at)
    if stopped_by == READ_FAILED:
        # A read failed: every gap said as unknown, and each failed read named in one.
        missing = failed_read_gaps(outcome.tool_calls, missing)
    status = _status(missing, unplaced, cut_short=unfinished)
    # Withheld pages no record ties to the question and the runbook search did not choose.
    text_only = text_only_withheld(
        gate.rejected, outcome.tool_calls, outcome.known.runbooks, gate.withheld_place_runbooks
    )
    stop_reason = _stop_reason(stop_reason, missing)
    result = InvestigationResult(
        run_id=run_id,
        pack_id=pack.pack_id,
        pack_hash=pack.pack_hash,
        status=status,
        stop_reason=stop_reason.value,
        rounds=outcome.rounds,
        verdict=claim_set.verdict,
        claims=claims,
        evidence=pack.evidence,
        rejected=final_rejections(
            gate.rejected,
            pack.evidence_ids(),
            [(ev.element_id, ev.version) for ev in pack.evidence],
            read_through(outcome.tool_calls, pack.evidence),
            text_only,
        ),
        missing_evidence=say_runbook_gaps(
            missing,
            rejected=gate.rejected,
            # A page of the place withheld that is not about the symptom is no runbook found
            # for it: the place's gap names it among those that are not about it.
            text_only={
                *text_only,
                *(rb for rbs in gate.unfit_place_runbooks.values() for rb in rbs),
            },
            tied=outcome.runbook_tie,
            search_note=outcome.runbook_search_note,
            placed_symptom=gate.policy.placed_symptom,
            unfit_place=gate.unfit_place_runbooks,
            withheld_place=gate.withheld_place_runbooks,
            answered_places=place_runbooks_said(
                pack.evidence,
                outcome.known.runbook_services,
                gate.withheld_place_runbooks,
                gate.rejected,
                text_only,
            ),
            claimed_by_text=claimed_by_text(pack.evidence, outcome.known.runbooks_by_text),
            wide_ties=outcome.wide_ties,
            cut_short=unfinished,
        ),
        confounders=claim_set.confounders,
        conflicts=gate.conflicts,
        question=read.typed,
        subject_id=subject.id,
        tenant=subject.tenant,
        purpose=subject.purpose,
        service_id=request.service_id,
        as_of=as_of,
        known_at=known_at,
        intents=[i.value for i in intents],
        tool_calls=outcome.tool_calls,
        omissions=len(pack.omissions),
        unresolved_time_words=unplaced,
        unresolved_time_reasons=reasons,
        relative_times=time_references(request.question, as_of).relative,
        time_notes=[
            # A future as_of is what today's records say of then, not a record of then
            # (an as_of left out is the run's now: no note; a --known-at given earlier than
            # as_of is a stale-known_at question, whose own notes say so).
            *(
                future_as_of_notes(as_of, known_at)
                if request.as_of is not None and request.known_at is None
                else []
            ),
            # How relative words ("yesterday", "2 hours ago") were read against as_of.
            *relative_notes(request.question, as_of),
            # Said only where an owner, version or change read covers the period asked.
            *(
                period_notes(request.question, as_of)
                if (period, version_period, change_period) != (None, None, None)
                else []
            ),
            # A change question's event period says what it was taken as, in full.
            *(
                [event_period.note(as_of)]
                if event_period is not None
                else [firing_period.firing_note()]
                if firing_period is not None
                # "Any alerts firing now?", "what fired during the incident?" naming no
                # service: the instant or window every firing was read for.
                else firing_list_notes(
                    firing_list_reads(outcome.tool_calls), request.question, as_of
                )
                if firing_list_reads(outcome.tool_calls)
                else far_anchor_notes(
                    request.question,
                    as_of,
                    references,
                    also_as_of=states_at_as_of(
                        [i.value for i in intents], claims, pack.evidence, as_of
                    ),
                )
            ),
        ],
        search_cut_short=outcome.cut_short,
        deadline_cut_after_calls=outcome.deadline_cut_after_calls,
        rule_notes=[*rule_notes, *removed_rule_notes(outcome, pack.evidence, as_of)],
        untrusted_rules=untrusted_rule_texts(r for rules in rules_apart(outcome) for r in rules),
        service_notes=outcome.service_notes,
        search_notes=list(
            dict.fromkeys(
                [
                    # The words read as others ("'ownr' read as 'owner'").
                    *read.notes(),
                    # Nothing read at all: said when the subject's own tenant holds no record.
                    *notes_when_nothing_read(
                        session.executor,
                        session.subject.tenant,
                        session.known_at,
                        outcome.tool_calls,
                    ),
                    *outcome.search_notes,
                    # How far DEPENDS_ON was walked from the service asked about.
                    *dependency_depth_notes(
                        pack.evidence, [i.value for i in intents], outcome.tool_calls
                    ),
                ]
            )
        ),
        incident_reading=outcome.incident_reading,
        timings=timings,
    )
    # The stored result is what an idempotent retry prints again (timings left out).
    session.finish(
        result.status,
        result.stop_reason,
        result,
        pack=pack,
        claims=claims,
        pack_hash=pack.pack_hash,
    )
    timings.record_ms = session.record_ms
    timings.total_ms = (time.perf_counter() - t_start) * 1000.0
    return result.model_copy(update={"timings": timings})


__all__ = [
    "DEFAULT_PURPOSE",
    "Goal",
    "InvestigationRequest",
    "InvestigationResult",
    "RunStatus",
    "StageTimings",
    "StopReason",
    "investigate",
]
