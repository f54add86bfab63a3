"""The orchestrator: `investigate(request, ...) -> InvestigationResult`.

question + subject + purpose + as_of (+ known_at) -> planner -> retrieval loop (executor,
candidates, RRF, gate, gaps) -> Context Pack -> claims, recorded step by step into the
Context Graph when a `RunRecorder` is given (docs/contracts.md section 3 order). Works with
`recorder=None` (no audit trail; a local run id).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import neo4j
from pydantic import BaseModel, Field, field_validator

from cypher_templates.executor import TemplateExecutor, ToolResult
from cypher_templates.plan import QueryPlan
from cypher_templates.subject import Subject, load_subject
from investigator.claims import (
    Claim,
    ClaimSet,
    Confounder,
    Verdict,
    derive_claims,
    keep_claims_in_pack,
)
from investigator.errors import BadInput, NotAuthorized
from investigator.evidence import Evidence, Rejection
from investigator.gate import Conflict, EvidenceGate, GatePolicy
from investigator.pack import (
    MAX_BUDGET_TOKENS,
    MIN_BUDGET_TOKENS,
    RESPONSE_RESERVE_SHARE,
    ContextPack,
    PackBudgetError,
    PackRequest,
    build_pack,
)
from investigator.planner import (
    DEFAULT_MAX_ROUNDS,
    DeterministicPlanner,
    PlanInput,
    extract_mentions,
    missing_required,
)
from investigator.retrieval import RetrievalLoop, StopReason, ToolCallSummary
from investigator.rubric import Intent, MissingEvidence, required_types, useful_types

DEFAULT_PURPOSE = "incident_investigation"
DEFAULT_BUDGET_TOKENS = 8000
DEFAULT_DEADLINE_S = 60.0


class RunOutcome(StrEnum):
    """The run's status in `investigate --json`."""

    COMPLETE = "complete"
    PARTIAL = "partial"
    REFUSED = "refused"


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
    deadline_s: float = Field(default=DEFAULT_DEADLINE_S, ge=0.0, le=600.0)

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

    @field_validator("question")
    @classmethod
    def _printable(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the question is empty")
        if any(ord(c) < 32 and c not in "\n\t" for c in value):
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


class RejectedItem(BaseModel):
    """A rejected candidate as `investigate --json` shows it."""

    candidate_id: str
    element_id: str
    reason: str
    replacement: str | None = None
    winner: str | None = None
    detail: str = ""
    round: int = 1


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
    status: RunOutcome
    stop_reason: str
    rounds: int
    verdict: Verdict | None
    claims: list[Claim]
    evidence: list[Evidence]
    rejected: list[RejectedItem]
    missing_evidence: list[MissingEvidence]
    confounders: list[Confounder] = Field(default_factory=list)
    conflicts: list[Conflict] = Field(default_factory=list)
    question: str
    subject_id: str
    purpose: str
    service_id: str | None = None
    as_of: datetime
    known_at: datetime
    intents: list[str]
    tool_calls: list[ToolCallSummary] = Field(default_factory=list)
    omissions: int = 0
    timings: StageTimings = Field(default_factory=StageTimings)
    reused_run: bool = False


class _RecordingHooks:
    """Bridges the loop to the Context Graph recorder (and times the writes)."""

    def __init__(self, recorder: Any, run_id: str, as_of: datetime) -> None:
        self.recorder = recorder
        self.run_id = run_id
        self.as_of = as_of
        self.ms = 0.0

    def _timed(self, fn: Callable[[], Any]) -> None:
        started = time.perf_counter()
        fn()
        self.ms += (time.perf_counter() - started) * 1000.0

    def on_plan(self, plan: QueryPlan) -> None:
        if self.recorder is not None:
            self._timed(lambda: self.recorder.record_plan(self.run_id, plan))

    def on_tool_call(self, summary: ToolCallSummary, result: ToolResult) -> None:
        if self.recorder is None:
            return
        from investigator.context_graph import ToolCallRecord

        record = ToolCallRecord.from_result(
            result, summary.tool_call_id, round=summary.round, as_of=self.as_of
        )
        self._timed(lambda: self.recorder.record_tool_call(self.run_id, record))

    def on_admitted(self, evidence: Evidence) -> None:
        if self.recorder is not None and evidence.tool_call_id:
            tc = evidence.tool_call_id
            self._timed(lambda: self.recorder.record_evidence(self.run_id, evidence, tc))

    def on_rejected(self, rejection: Rejection) -> None:
        if self.recorder is not None:
            self._timed(lambda: self.recorder.record_rejection(self.run_id, rejection))


def final_rejections(rejections: list[Rejection], admitted_ids: list[str]) -> list[Rejection]:
    """Rejections as the user sees them: the latest decision per candidate (a later graph
    channel knows more than an earlier text hit), none for candidates that another tool call
    brought into the pack. The Context Graph keeps every decision."""
    inside = set(admitted_ids)
    latest: dict[str, Rejection] = {}
    for rej in rejections:
        if rej.candidate_id not in inside:
            latest[rej.candidate_id] = rej
    return list(latest.values())


def _status(missing: list[MissingEvidence]) -> RunOutcome:
    return RunOutcome.PARTIAL if any(m.required for m in missing) else RunOutcome.COMPLETE


def _reused_result(driver: neo4j.Driver, recorder: Any, run_id: str) -> InvestigationResult:
    """The answer an idempotent retry gets: the original run's recorded result."""
    from investigator.context_graph import CtxKind, load_lineage

    lineage = load_lineage(driver, run_id, database=getattr(recorder, "database", None))
    for node in reversed(lineage.of_kind(CtxKind.OUTCOME)):
        raw = node.properties.get("result")
        if isinstance(raw, str):
            result = InvestigationResult.model_validate_json(raw)
            return result.model_copy(update={"reused_run": True})
    raise BadInput(f"idempotency key names run {run_id}, which has not finished")


def investigate(
    request: InvestigationRequest,
    *,
    driver: neo4j.Driver,
    executor: TemplateExecutor | None = None,
    recorder: Any = None,
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
    deadline = monotonic() + request.deadline_s
    executor = executor or TemplateExecutor(driver)
    planner = planner or DeterministicPlanner()
    intents = planner.intents(
        PlanInput(
            question=request.question,
            service_id=request.service_id,
            as_of=as_of,
            known_at=request.known_at or now,
        )
    )

    run_id: str
    known_at: datetime
    if recorder is not None:
        from investigator.context_graph import RunRequest

        t0 = time.perf_counter()
        start = recorder.start_run(
            RunRequest(
                command="investigate",
                question=request.question,
                subject_id=request.subject_id,
                purpose=request.purpose,
                as_of=as_of,
                known_at=request.known_at,
                service=request.service_id,
                max_rounds=request.max_rounds,
                budget_tokens=request.budget_tokens,
                options={"deadline_s": request.deadline_s},
                idempotency_key=request.idempotency_key,
            )
        )
        timings.record_ms += (time.perf_counter() - t0) * 1000.0
        if not start.created:
            return _reused_result(driver, recorder, start.run_id)
        run_id, known_at = start.run_id, start.known_at
    else:
        run_id, known_at = "run-" + uuid.uuid4().hex, (request.known_at or now)

    t0 = time.perf_counter()
    try:
        subject: Subject = load_subject(executor, request.subject_id, request.purpose, known_at)
    except NotAuthorized:
        if recorder is not None:
            recorder.finish_run(run_id, RunOutcome.REFUSED.value, "not_authorized")
        raise
    except Exception:
        if recorder is not None:
            recorder.finish_run(run_id, "failed", "error")
        raise
    timings.subject_ms = (time.perf_counter() - t0) * 1000.0

    try:
        return _investigate(
            request,
            driver=driver,
            executor=executor,
            recorder=recorder,
            planner=planner,
            subject=subject,
            intents=intents,
            run_id=run_id,
            as_of=as_of,
            known_at=known_at,
            now=now,
            deadline=deadline,
            monotonic=monotonic,
            timings=timings,
            t_start=t_start,
        )
    except Exception:
        if recorder is not None:
            # The original error is the one to report.
            with contextlib.suppress(Exception):
                recorder.finish_run(run_id, "failed", "error")
        raise


def _investigate(
    request: InvestigationRequest,
    *,
    driver: neo4j.Driver,
    executor: TemplateExecutor,
    recorder: Any,
    planner: DeterministicPlanner,
    subject: Subject,
    intents: list[Intent],
    run_id: str,
    as_of: datetime,
    known_at: datetime,
    now: datetime,
    deadline: float,
    monotonic: Callable[[], float],
    timings: StageTimings,
    t_start: float,
) -> InvestigationResult:
    del driver
    hooks = _RecordingHooks(recorder, run_id, as_of)
    t0 = time.perf_counter()
    goal = Goal(
        question=request.question,
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
    if recorder is not None:
        hooks._timed(lambda: recorder.record_goal(run_id, goal))

    mentions = extract_mentions(request.question)
    focus_codes = sorted(
        {f"err:{c}" for c in mentions.error_codes}
        | {i for i in mentions.ids if i.startswith("err:")}
    )
    evidence_budget = request.budget_tokens - int(request.budget_tokens * RESPONSE_RESERVE_SHARE)
    gate = EvidenceGate(
        GatePolicy(
            as_of=as_of,
            known_at=known_at,
            purpose=subject.purpose,
            granted_labels=list(subject.labels),
            relevant_types=useful_types(intents),
            focus_error_codes=focus_codes,
            evidence_token_budget=max(evidence_budget - 600, 1),
        )
    )
    loop = RetrievalLoop(
        executor=executor,
        subject=subject,
        gate=gate,
        plan_input=PlanInput(
            question=request.question,
            service_id=request.service_id,
            as_of=as_of,
            known_at=known_at,
            max_rounds=request.max_rounds,
        ),
        intents=intents,
        planner=planner,
        hooks=hooks,
        deadline=deadline,
        monotonic=monotonic,
    )
    t0 = time.perf_counter()
    recorded_before = hooks.ms
    outcome = loop.run()
    # The loop's own time: recorder writes made during it are counted under record_ms.
    loop_ms = (time.perf_counter() - t0) * 1000.0
    timings.retrieval_ms = loop_ms - (hooks.ms - recorded_before)
    timings.executor_ms = outcome.executor_ms
    timings.gate_ms = outcome.gate_ms

    t0 = time.perf_counter()
    supported = gate.supported_types()
    starved = sorted(set(missing_required(intents, supported)) & gate.budget_starved_types)
    if starved:
        # Required evidence exists but does not fit: fail closed rather than answer without it.
        raise PackBudgetError(
            f"--budget-tokens {request.budget_tokens} is too small: required evidence "
            f"({', '.join(starved)}) does not fit"
        )
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
            missing_types=missing_required(intents, supported),
            budget_tokens=request.budget_tokens,
            created_at=now,
        ),
        gate.admitted,
        gate.rejected,
    )
    timings.pack_ms = (time.perf_counter() - t0) * 1000.0

    t0 = time.perf_counter()
    claim_set: ClaimSet = derive_claims(
        [i.value for i in intents],
        pack.evidence,
        as_of=as_of,
        conflicts=gate.conflicts,
        service_id=request.service_id,
    )
    claims = keep_claims_in_pack(claim_set.claims, pack.evidence_ids())
    timings.claims_ms = (time.perf_counter() - t0) * 1000.0

    status = _status(claim_set.missing_evidence)
    stop_reason = outcome.stop_reason
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
        rejected=[
            RejectedItem(
                candidate_id=r.candidate_id,
                element_id=r.element_id,
                reason=r.reason.value,
                replacement=r.replacement,
                winner=r.winner,
                detail=r.detail,
                round=r.round,
            )
            for r in final_rejections(gate.rejected, pack.evidence_ids())
        ],
        missing_evidence=claim_set.missing_evidence,
        confounders=claim_set.confounders,
        conflicts=gate.conflicts,
        question=request.question,
        subject_id=subject.id,
        purpose=subject.purpose,
        service_id=request.service_id,
        as_of=as_of,
        known_at=known_at,
        intents=[i.value for i in intents],
        tool_calls=outcome.tool_calls,
        omissions=len(pack.omissions),
        timings=timings,
    )
    if recorder is not None:
        _record_tail(recorder, hooks, run_id, pack, claims, result)
    timings.record_ms += hooks.ms
    timings.total_ms = (time.perf_counter() - t_start) * 1000.0
    return result.model_copy(update={"timings": timings})


def _record_tail(
    recorder: Any,
    hooks: _RecordingHooks,
    run_id: str,
    pack: ContextPack,
    claims: list[Claim],
    result: InvestigationResult,
) -> None:
    hooks._timed(lambda: recorder.record_pack(run_id, pack))
    if claims:
        hooks._timed(lambda: recorder.record_claims(run_id, list(claims)))
    # The stored result is what an idempotent retry prints again (timings left out).
    stored = result.model_copy(update={"timings": StageTimings()})
    hooks._timed(
        lambda: recorder.finish_run(run_id, result.status.value, result.stop_reason, stored)
    )


__all__ = [
    "DEFAULT_PURPOSE",
    "Goal",
    "InvestigationRequest",
    "InvestigationResult",
    "RejectedItem",
    "RunOutcome",
    "StageTimings",
    "StopReason",
    "investigate",
]
