"""One run of any command: the `RunSession` that `investigate`, `runbook` and replay drive.

subject and grants (loaded and authorized first) -> run start, or the original run of an
idempotency key scoped to (tenant, subject) -> rounds of tool calls (`call_round(steps)`: the
steps of a round do not depend on each other, so they read together, in a few groups of one
read transaction each; each gives the executor's `ToolResult`, its `ToolCallRecord` and its
rows as candidate `Evidence`, in plan order, as if run one by one) -> the evidence gate
(`admit`) -> finish (pack, claims, outcome). Recording goes through a `RunLog`: the run is
written when it starts (without an idempotency key, by a background thread while the first
round reads; the log waits for that write before its own), its nodes are then chained in
memory and written at the end of a round once `FLUSH_INTERVAL_S` has passed since the last
write, and at the finish. So a quick run costs two write transactions, a long one loses at
most about that interval of lineage when killed, and a killed run stays `incomplete` with a
chain that verifies. Without a recorder nothing is written (replay's re-runs, the eval).
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from types import TracebackType
from typing import Literal, TypeVar

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from cypher_templates.executor import TemplateExecutor, ToolResult, reads_until
from cypher_templates.plan import PlanStep, QueryPlan
from cypher_templates.subject import (
    PrincipalRecord,
    Subject,
    SubjectRef,
    first_allowed_purpose,
    load_subject,
    qualified_ref,
)
from graph_schema import ctrl_c
from graph_schema.canonical import from_epoch_micros
from investigator.context_graph.audit import ContentFilter, RunReader
from investigator.context_graph.chain import rows_hash
from investigator.context_graph.lineage import load_lineage
from investigator.context_graph.models import (
    INTERRUPTED,
    CtxKind,
    RunRequest,
    RunStart,
    RunStatus,
    ToolCallRecord,
    tool_call_hits,
)
from investigator.context_graph.recorder import RunLog, RunRecorder
from investigator.errors import BadInput, NotAuthorized
from investigator.evidence import Evidence, normalise_rows
from investigator.gate import EvidenceGate, GateDecision, GatePolicy
from investigator.telemetry import RunSpan, ToolSpan, run_span, tool_span

ResultT = TypeVar("ResultT", bound=BaseModel)


def caused_by_interrupt(exc: BaseException) -> bool:
    """Whether `exc` is Ctrl-C (KeyboardInterrupt), or an error raised while handling it."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


class RunSpec(BaseModel):
    """What a command asks for: recorded as the run's request (and its idempotency key)."""

    model_config = ConfigDict(frozen=True)

    command: str = Field(min_length=1, max_length=40)
    question: str = Field(min_length=1, max_length=4000)
    subject: SubjectRef | str  # `tenant/id`; a bare id is the older, id-only form
    purposes: tuple[str, ...] = Field(min_length=1)  # the first one the subject may use
    as_of: AwareDatetime
    as_of_given: bool | None = None  # False: `as_of` is the default, now (RunRequest)
    # Where as_of came from (`given`, `text`, `now`), the text's words it was read from and
    # the note on the text's time words: recorded on the run (RunRequest), None: not said.
    as_of_from: Literal["given", "text", "now"] | None = None
    as_of_words: str | None = None
    time_note: str | None = None
    known_at: AwareDatetime | None = None
    service: str | None = None
    max_rounds: int | None = None
    budget_tokens: int | None = None
    options: dict[str, str | int | float | bool | None] = Field(default_factory=dict)
    idempotency_key: str | None = None


def tool_call_record(
    result: ToolResult,
    tool_call_id: str,
    *,
    round: int = 1,
    as_of: datetime | None = None,
    digest: str | None = None,
) -> ToolCallRecord:
    """The record of one executed template call (what the Context Graph keeps); `digest` is
    `rows_hash(result.rows)` when the caller already has it."""
    return ToolCallRecord(
        tool_call_id=tool_call_id,
        template_id=result.template_id,
        template_version=result.template_version,
        template_hash=result.template_hash,
        options=dict(result.options),
        params=dict(result.params),
        evidence_type=result.evidence_type,
        limit=result.limit,
        as_of=as_of,
        known_at=result.known_at,
        row_count=result.row_count,
        rows_hash=digest if digest is not None else rows_hash(result.rows),
        truncated=result.truncated,
        duration_ms=result.duration_ms,
        started_at=(
            from_epoch_micros(result.started_ns // 1000) if result.started_ns is not None else None
        ),
        error=result.error,
        round=round,
    )


def read_key(step: PlanStep) -> str:
    """What a step asks the KG: two steps of one run with the same key read the same rows."""
    return json.dumps(
        [step.template_id, step.template_version, step.params, step.options, step.limit],
        sort_keys=True,
        default=str,
    )


_POOL: tuple[int, ThreadPoolExecutor] | None = None
_POOL_LOCK = threading.Lock()


def _read_pool() -> ThreadPoolExecutor:
    """The process's pool for a round's grouped reads (threads are not started per round).

    Its tasks never submit to it, so runs sharing it only queue; a forked child (the warm
    process) makes its own.
    """
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL[0] != os.getpid():
            _POOL = (os.getpid(), ThreadPoolExecutor(max_workers=16, thread_name_prefix="reads"))
        return _POOL[1]


def close_read_pool() -> None:
    """Stop the read pool's threads without waiting for them (on Ctrl-C: see the CLI).

    Shutting the pool down wakes every thread waiting on its queue, also one that Ctrl-C
    interrupted before the pool registered it for the interpreter's exit handler."""
    global _POOL
    with _POOL_LOCK:
        pool, _POOL = _POOL, None
    if pool is not None and pool[0] == os.getpid():
        pool[1].shutdown(wait=False, cancel_futures=True)


def tool_call_id_for(round_no: int, index: int) -> str:
    """Tool call ids are unique inside a run and stable across replays of it."""
    return f"tc-{round_no:02d}-{index:03d}"


class ToolCall(BaseModel):
    """One template call of a run: what ran, what it returned, its rows as candidates."""

    model_config = ConfigDict(frozen=True)

    record: ToolCallRecord
    result: ToolResult
    candidates: list[Evidence]


def load_subject_for(
    executor: TemplateExecutor, subject: SubjectRef | str, purposes: Sequence[str]
) -> Subject:
    """The subject under the first of `purposes` its current Principal allows."""
    if len(purposes) == 1:
        return load_subject(executor, subject, purposes[0])
    ref = qualified_ref(subject)
    if ref is None:  # a bare id: its one tenant (refused when ambiguous)
        ref = load_subject_ref(executor, str(subject))
    return first_allowed_purpose(executor, ref, purposes)


def load_subject_ref(executor: TemplateExecutor, subject_id: str) -> SubjectRef:
    """The tenant of a bare subject id, when exactly one tenant has it."""
    records = executor.read_principals(subject_id)
    if not records:
        raise NotAuthorized(f"unknown subject {subject_id!r}")
    if len({r.tenant for r in records}) > 1:
        raise NotAuthorized(
            f"subject {subject_id!r} exists in several tenants: name it as TENANT/ID"
        )
    return SubjectRef(tenant=records[0].tenant, id=records[0].id)


class RunSession:
    """One run in progress. Use as a context manager: an error finishes the run `failed`."""

    # Write a round's lineage when this long has passed since the last write (seconds).
    FLUSH_INTERVAL_S = 1.0
    # A round's reads are independent: this many groups at once (each its own session,
    # connection and read transaction) overlap Neo4j's work with ours.
    READ_CONCURRENCY = 4

    def __init__(
        self,
        spec: RunSpec,
        *,
        executor: TemplateExecutor,
        subject: Subject,
        run_id: str,
        known_at: datetime,
        log: RunLog | None,
        reused: RunStart | None = None,
        recorder: RunRecorder | None = None,
    ) -> None:
        self.spec = spec
        self.executor = executor
        self.subject = subject
        self.run_id = run_id
        self.known_at = known_at
        self.as_of = spec.as_of.astimezone(UTC)
        self.log = log
        self.reused = reused
        self.recorder = recorder
        self.gate: EvidenceGate | None = None
        # The run's wall-clock deadline (a `time.monotonic()` instant): no read waits for
        # Neo4j past it (`TemplateExecutor.run`); None: each read's own bound only.
        self.read_deadline: float | None = None
        # The run of the same idempotency key this one answers in place of (it ended
        # without an answer: interrupted, or failed).
        self.retry_of: str | None = None
        self.round = 0
        self.tool_calls: list[ToolCallRecord] = []
        self.record_ms = 0.0
        self.subject_ms = 0.0
        self.finished = False
        self._index = 0
        # This run's successful reads by `read_key`, with their rows_hash.
        self._reads: dict[str, tuple[ToolResult, str]] = {}
        self._last_write = time.monotonic()
        self._span_cm: contextlib.AbstractContextManager[RunSpan] | None = None
        self._span: RunSpan = RunSpan()

    # -- opening ------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        spec: RunSpec,
        *,
        executor: TemplateExecutor,
        recorder: RunRecorder | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> RunSession:
        """Load and authorize the subject, then start the run (or find the keyed one).

        A subject that is unknown or not allowed the purpose is NotAuthorized (exit 3); with
        a recorder the refusal is recorded as a run of its own (never a reused one).
        """
        started = time.perf_counter()
        try:
            subject = load_subject_for(executor, spec.subject, spec.purposes)
        except NotAuthorized:
            if recorder is not None:
                cls._record_refusal(spec, recorder)
            raise
        subject_ms = (time.perf_counter() - started) * 1000.0
        t0 = time.perf_counter()
        if recorder is None:
            now = (clock or (lambda: datetime.now(UTC)))().astimezone(UTC)
            session = cls(
                spec,
                executor=executor,
                subject=subject,
                run_id="run-" + uuid.uuid4().hex,
                known_at=(spec.known_at or now).astimezone(UTC),
                log=None,
            )
        else:
            # The run's own write goes on while the first round reads the KG; the log waits
            # for it before the run's next write.
            start, written = recorder.begin_run(
                cls._request(spec, str(subject.ref), subject.purpose), subject.incarnation
            )
            session = cls(
                spec,
                executor=executor,
                subject=subject,
                run_id=start.run_id,
                known_at=start.known_at,
                log=recorder.open_log(start, written) if start.created else None,
                reused=None if start.created else start,
                recorder=recorder,
            )
            session.retry_of = start.retry_of
            session.record_ms += (time.perf_counter() - t0) * 1000.0
        session.subject_ms = subject_ms
        return session

    @staticmethod
    def _request(spec: RunSpec, subject_id: str, purpose: str, keyed: bool = True) -> RunRequest:
        return RunRequest(
            command=spec.command,
            question=spec.question,
            subject_id=subject_id,
            purpose=purpose,
            as_of=spec.as_of,
            as_of_given=spec.as_of_given,
            as_of_from=spec.as_of_from,
            as_of_words=spec.as_of_words,
            time_note=spec.time_note,
            known_at=spec.known_at,
            service=spec.service,
            max_rounds=spec.max_rounds,
            budget_tokens=spec.budget_tokens,
            options=dict(spec.options),
            idempotency_key=spec.idempotency_key if keyed else None,
        )

    @classmethod
    def _record_refusal(cls, spec: RunSpec, recorder: RunRecorder) -> None:
        subject_id = str(spec.subject)
        start = recorder.start_run(cls._request(spec, subject_id, spec.purposes[0], keyed=False))
        recorder.open_log(start).finish(RunStatus.REFUSED, "not_authorized")

    def reused_result(self, model: type[ResultT]) -> ResultT:
        """The answer an idempotent retry gets: the original run's recorded result, only when
        the subject may still read all of it (docs/context-graph.md, "Idempotency").

        A retry never widens access: when the subject's grants of now withhold any evidence
        of the run (the same re-filtering `trace` applies), the retry is NotAuthorized (exit
        3). A run without its answer (not finished, failed, or its answer removed by a legal
        purge) is BadInput (exit 2), each with a message that says which.
        """
        assert self.recorder is not None and self.reused is not None
        run_id = self.reused.run_id
        lineage = load_lineage(self.recorder.driver, run_id, database=self.recorder.database)
        outcomes = lineage.of_kind(CtxKind.OUTCOME)
        if not outcomes:
            # An interrupted run is finished (`interrupted`) and runs again; this one is
            # running now (a retry at once: it answers there), or its process was killed.
            raise BadInput(
                f"idempotency key names run {run_id}, which has not finished (still running, "
                "or its process was killed): wait for it, or ask again with a new idempotency key"
            )
        outcome = outcomes[-1].properties
        raw = outcome.get("result")
        if not isinstance(raw, str):
            status = outcome.get("status")
            if outcome.get("purged"):
                raise BadInput(
                    f"idempotency key names run {run_id}, which finished {status}, but its "
                    f"recorded answer was removed by a legal purge (purge run "
                    f"{outcome.get('purge_id')}): ask again with a new idempotency key"
                )
            raise BadInput(
                f"idempotency key names run {run_id}, which finished {status} without an "
                "answer: ask again with a new idempotency key"
            )
        reader = RunReader(
            principal=PrincipalRecord(
                id=self.subject.id,
                tenant=self.subject.tenant,
                labels=self.subject.labels,
                purposes=self.subject.purposes,
                incarnation=self.subject.incarnation,
            ),
            purpose=self.subject.purpose,
        )
        content = ContentFilter(self.executor.driver, reader, lineage, self.executor.database)
        withheld = {**content.withheld, **content.withheld_candidates}
        if withheld:
            # The recorded answer is built on (or rejected) records the subject may no longer
            # read: refusing keeps the retry from showing more than a new run would.
            reasons = ", ".join(sorted(set(withheld.values())))
            raise NotAuthorized(
                f"idempotency key names run {run_id}, whose answer holds evidence "
                f"{self.subject.ref} may no longer read ({reasons}): ask again with a new "
                "idempotency key"
            )
        return model.model_validate_json(raw)

    # -- the run's span -----------------------------------------------------------------

    def __enter__(self) -> RunSession:
        self._span_cm = run_span(
            self.spec.command,
            run_id=self.run_id,
            # A run without a recorder (a replay's re-run) has an id no record holds.
            recorded=self.log is not None or self.reused is not None,
            tenant=self.subject.tenant,
            subject_id=self.subject.id,
            purpose=self.subject.purpose,
            question=self.spec.question,
            as_of_from=self.spec.as_of_from,
        )
        self._span = self._span_cm.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is not None and not self.finished and self.log is not None:
            # The original error is the one to report. Ctrl-C is recorded as what the user
            # saw (`interrupted`), also when it surfaces as an error raised while the driver
            # cleaned up after it; the same key may then run again (`reused_result`).
            reason = INTERRUPTED if caused_by_interrupt(exc) else "error"
            with contextlib.suppress(Exception):
                self._finish_log(RunStatus.FAILED, reason, None)
        if self._span_cm is not None:
            self._span_cm.__exit__(exc_type, exc, tb)

    # -- rounds, tool calls, the gate ---------------------------------------------------

    def use_gate(self, policy: GatePolicy) -> EvidenceGate:
        """The run's evidence gate (one per run)."""
        self.gate = EvidenceGate(policy)
        return self.gate

    def begin_round(self, plan: QueryPlan) -> int:
        """Start the next round: record the plan its tool calls use; returns its number."""
        self.round += 1
        self._index = 0
        if self.log is not None:
            self._timed(lambda: self.log.add_plan(plan) if self.log else None)
        return self.round

    def call(
        self, step: PlanStep, *, plan: QueryPlan | None = None, raise_on_error: bool = True
    ) -> ToolCall:
        """Run one template for the run's subject at its known_at, and record it."""
        return self.call_round([step], plan=plan, raise_on_error=raise_on_error)[0]

    def call_round(
        self,
        steps: Sequence[PlanStep],
        *,
        plan: QueryPlan | None = None,
        raise_on_error: bool = True,
        keep_hits: bool = False,
    ) -> list[ToolCall]:
        """Run steps that do not depend on each other and record them in the order given,
        with the ids, rows and hashes they would have one by one.

        `keep_hits`: a fulltext call also records the records its rows name (id, version,
        score: `tool_call_hits`), for reads whose rows the run keeps as neither evidence nor
        rejection (a runbook search), so replay can tell a re-ranking from other changes.

        The steps are split into at most `READ_CONCURRENCY` groups that read at the same
        time, each group in one read transaction (`TemplateExecutor.run_together`). A step
        that asks exactly what an earlier call of this run asked (template, version,
        parameters, options, limit) is not read again: every call of a run reads at the
        same `known_at`, where the KG's answer cannot have changed, so it is recorded as
        its own tool call with the rows of that read and a duration of 0.
        """
        first = self._index
        self._index += len(steps)
        round_no = max(self.round, 1)
        ids = [tool_call_id_for(round_no, first + i + 1) for i in range(len(steps))]
        keys = [read_key(step) for step in steps]
        fresh: dict[str, int] = {}
        for i, key in enumerate(keys):
            if key not in self._reads and key not in fresh:
                fresh[key] = i
        if len(fresh) <= 1:
            # One read: its span is live around it, so a call that raises ends it as an error.
            read = {
                i: self._run_step(steps[i], ids[i], plan, raise_on_error) for i in fresh.values()
            }
        else:
            read = self._read_together(
                [(i, steps[i], ids[i]) for i in fresh.values()], plan, raise_on_error
            )
        calls = []
        for i, (step, tc_id, key) in enumerate(zip(steps, ids, keys, strict=True)):
            if i in read:
                result, record = read[i]
                if result.error is None:
                    self._reads[key] = (result, record.rows_hash)
            elif key in self._reads:
                result, record = self._reused_read(step, tc_id, self._reads[key])
            else:  # the same call earlier in this round failed: this one reads again
                result, record = self._run_step(step, tc_id, plan, raise_on_error)
            calls.append(self._recorded(result, record, keep_hits))
        return calls

    def _read_together(
        self,
        indexed: Sequence[tuple[int, PlanStep, str]],
        plan: QueryPlan | None,
        raise_on_error: bool,
    ) -> dict[int, tuple[ToolResult, ToolCallRecord]]:
        count = min(self.READ_CONCURRENCY, len(indexed))
        bounds = [len(indexed) * g // count for g in range(count + 1)]
        groups = [[step for _, step, _ in indexed[lo:hi]] for lo, hi in itertools.pairwise(bounds)]
        # Each group reads in a pool thread within a copy of this thread's context: the run's
        # deadline and what its caller bound (a served call's token holder) hold there too.
        with reads_until(self.read_deadline):
            futures = [
                _read_pool().submit(
                    contextvars.copy_context().run,
                    self.executor.run_together,
                    group,
                    self.subject,
                    self.known_at,
                    plan=plan,
                    raise_on_error=raise_on_error,
                )
                for group in groups
            ]
        results = [result for future in futures for result in future.result()]
        read = {}
        for (i, step, tc_id), result in zip(indexed, results, strict=True):
            record = tool_call_record(result, tc_id, round=self.round, as_of=self.as_of)
            began = result.started_ns if result.started_ns is not None else time.time_ns()
            interval = (began, began + int(result.duration_ms * 1_000_000))
            with self._tool_span(step, tc_id, interval) as span:
                span.record_result(result, rows_hash=record.rows_hash)
            read[i] = (result, record)
        return read

    def _reused_read(
        self, step: PlanStep, tc_id: str, earlier: tuple[ToolResult, str]
    ) -> tuple[ToolResult, ToolCallRecord]:
        """The call `step` asks for, answered by this run's earlier read of the same call."""
        first_read, digest = earlier
        now = time.time_ns()
        result = first_read.model_copy(
            update={"evidence_type": step.evidence_type, "duration_ms": 0.0, "started_ns": now}
        )
        record = tool_call_record(result, tc_id, round=self.round, as_of=self.as_of, digest=digest)
        with self._tool_span(step, tc_id, (now, now)) as span:
            span.record_result(result, rows_hash=digest)
        return result, record

    def _tool_span(
        self, step: PlanStep, tc_id: str, interval_ns: tuple[int, int] | None = None
    ) -> contextlib.AbstractContextManager[ToolSpan]:
        return tool_span(
            tc_id,
            step.template_id,
            step.template_version,
            round=self.round,
            evidence_type=step.evidence_type,
            interval_ns=interval_ns,
        )

    def _run_step(
        self, step: PlanStep, tc_id: str, plan: QueryPlan | None, raise_on_error: bool
    ) -> tuple[ToolResult, ToolCallRecord]:
        with self._tool_span(step, tc_id) as span:
            with reads_until(self.read_deadline):
                result = self.executor.run(
                    step, self.subject, self.known_at, plan=plan, raise_on_error=raise_on_error
                )
            record = tool_call_record(result, tc_id, round=self.round, as_of=self.as_of)
            span.record_result(result, rows_hash=record.rows_hash)
        return result, record

    def _recorded(
        self, result: ToolResult, record: ToolCallRecord, keep_hits: bool = False
    ) -> ToolCall:
        self.tool_calls.append(record)
        if self.log is not None:
            hits = tool_call_hits(result.rows) if keep_hits and result.error is None else None
            self._timed(lambda: self.log.add_tool_call(record, hits) if self.log else None)
        candidates = normalise_rows(
            result.rows,
            channel=result.template_id,
            tool_call_id=record.tool_call_id,
            template=result.ref,
        )
        return ToolCall(record=record, result=result, candidates=candidates)

    def admit(self, candidates: Iterable[Evidence]) -> GateDecision:
        """Pass candidates through the gate and record every decision."""
        if self.gate is None:
            raise RuntimeError("use_gate() before admit()")
        decision = self.gate.admit(candidates, max(self.round, 1))
        if decision.admitted:
            self._span.gate_decision("admitted", len(decision.admitted))
        for rejection in decision.rejected:
            self._span.gate_decision(rejection.reason.value)
        log = self.log
        if log is not None:

            def add() -> None:
                for ev in decision.admitted:
                    log.add_evidence(ev, ev.tool_call_id or "")
                for rejection in decision.rejected:
                    log.add_rejection(rejection)

            self._timed(add)
        return decision

    def record_cited(self, evidence: Iterable[Evidence]) -> None:
        """Record evidence an answer cites that the gate never admits (the tombstone of a
        retracted OWNS record, ownership_history.py), tied to the read that returned it."""
        log = self.log
        if log is None:
            return
        items = list(evidence)

        def add() -> None:
            for ev in items:
                log.add_evidence(ev, ev.tool_call_id or "")

        self._timed(add)

    def flush(self, *, force: bool = False) -> None:
        """Write what the run has recorded so far (one transaction), when `force` (before
        returning) or when `FLUSH_INTERVAL_S` has passed since the last write (from the
        recorder's writer thread, while the next round reads: `RunLog.flush_in_background`)."""
        if self.log is None:
            return
        if force:
            self._timed(self.log.flush)
        elif time.monotonic() - self._last_write >= self.FLUSH_INTERVAL_S:
            self._timed(self.log.flush_in_background)
        else:
            return
        self._last_write = time.monotonic()

    def record_goal(self, goal: BaseModel) -> None:
        """Record the goal the run pursues (before its first plan)."""
        if self.log is not None:
            self._timed(lambda: self.log.add_goal(goal) if self.log else None)

    # -- finishing ----------------------------------------------------------------------

    def finish(
        self,
        status: RunStatus,
        stop_reason: str,
        result: BaseModel | None,
        *,
        pack: BaseModel | None = None,
        claims: Sequence[BaseModel] = (),
        pack_hash: str | None = None,
    ) -> None:
        """Record the pack, the claims and the outcome (one transaction); status is final.
        A Ctrl-C pressed meanwhile whose KeyboardInterrupt was swallowed (in a finalizer)
        stops the run here, before its answer is written: it is recorded `interrupted`."""
        ctrl_c.stop_if_pressed()
        log = self.log
        if log is not None:

            def add() -> None:
                if pack is not None:
                    log.add_pack(pack)
                if claims:
                    log.add_claims(claims)

            self._timed(add)
            self._timed(lambda: self._finish_log(status, stop_reason, result))
        self.finished = True
        self._span.finish(
            status=status.value,
            stop_reason=stop_reason,
            pack_hash=pack_hash,
            rounds=self.round,
            reused_run=False,
        )

    def _finish_log(self, status: RunStatus, stop_reason: str, result: BaseModel | None) -> None:
        if self.log is not None:
            self.log.finish(status, stop_reason, result)
        self.finished = True

    def _timed(self, fn: Callable[[], object]) -> None:
        started = time.perf_counter()
        fn()
        self.record_ms += (time.perf_counter() - started) * 1000.0
