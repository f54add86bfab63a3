"""The executor: the only path by which a question reaches Knowledge Graph data.

Other KG reads are not questions and are named in docs/security.md: the subject's own
principal record (here), the audit re-check of recorded evidence, what importers link to,
the purge, and the evaluation's naive baseline.

Every call runs one compiled, allowlisted template in a managed READ transaction
(`session.execute_read`, so the driver retries transient errors and routes to readers on a
cluster; calls that do not depend on each other may share one, `run_together`), with the
template's timeout, `LIMIT row_cap + 1` to detect truncation (reported,
never silent), and the subject's tenant, grants and purpose as parameters that no plan can
set. Rows come back typed (`Element`, `TemplateRow`); a timeout is `Neo4jUnavailable`.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from datetime import datetime
from typing import Any, Literal, TypeVar

import neo4j
from neo4j.exceptions import (
    ClientError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)
from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    SerializeAsAny,
    field_validator,
)

from cypher_templates.compiler import CompiledQuery, compile_step
from cypher_templates.contexts import (
    EmptyContext,
    OpenContext,
    RowContext,
    context_shape,
    instant_fields,
)
from cypher_templates.plan import EvidenceType, PlanStep, QueryPlan
from cypher_templates.proofs import ReadOnlyProofs, server_key
from cypher_templates.registry import RenderedTemplate, TemplateRefused, TemplateRegistry
from cypher_templates.subject import PrincipalRecord, Subject, SubjectRef
from graph_schema.canonical import from_epoch_micros
from graph_schema.errors import BadInput, InvestigatorError, Neo4jUnavailable
from graph_schema.schema_ddl import tenant_fulltext_index

# The one query that is not a template: finding the subject's own grants. It has no subject
# yet to filter by, reads only the current :KG:Principal record of one (tenant, id) (grants
# are the grants of now, never of a known_at) and returns only its grants.
_PRINCIPAL_QUERY = (
    "MATCH (p:KG:Principal {tenant: $tenant, id: $subject_id}) "
    "WHERE p.status = 'active' AND p.superseded_at IS NULL "
    "WITH p LIMIT 1 "
    # Its incarnation: one more per tombstone before it (the id was retracted, then written
    # again for someone); it began with the record after the latest tombstone.
    "OPTIONAL MATCH (t:KG:Principal {tenant: $tenant, id: $subject_id}) "
    "WHERE t.status = 'retracted' AND t.version < p.version "
    "WITH p, count(t) AS retractions, max(t.version) AS last "
    "OPTIONAL MATCH (t:KG:Principal {tenant: $tenant, id: $subject_id, version: last}) "
    "OPTIONAL MATCH (b:KG:Principal {tenant: $tenant, id: $subject_id, version: last + 1}) "
    "RETURN p.id AS id, p.tenant AS tenant, coalesce(p.labels, []) AS labels, "
    "coalesce(p.purposes, []) AS purposes, retractions + 1 AS incarnation, "
    "CASE WHEN b IS NULL THEN null WHEN t.recorded_at > b.recorded_at THEN t.recorded_at "
    "ELSE b.recorded_at END AS incarnation_began LIMIT 1"
)
_PRINCIPAL_TIMEOUT_S = 5.0
# The principals whose tenant and id are the ones given but for case (a hint for an unknown
# subject: `ACME/User:Oncall` -> acme/user:oncall), or whose id is the name given after a
# prefix it left out or mistyped (`acme/bob`, `acme/usr:bob` -> acme/user:bob). Only read when
# the exact lookup failed; only the tenant typed (but for case), and only ids whose name the
# caller has already spelled out: no near-miss search that would list a tenant's principals.
_PRINCIPAL_CASE_QUERY = (
    "MATCH (p:KG:Principal) WHERE toLower(p.tenant) = $tenant "
    "AND (toLower(p.id) IN [$subject_id, $name] OR (p.id CONTAINS ':' "
    "AND toLower(substring(p.id, size(split(p.id, ':')[0]) + 1)) = $name)) "
    "AND p.status = 'active' AND p.superseded_at IS NULL "
    "RETURN DISTINCT p.tenant AS tenant, p.id AS id ORDER BY tenant, id LIMIT 3"
)
# A read that timed out is tried once more with this many times its timeout: the first try
# may have gone on planning. Still bounded (20 s for a 5 s template).
RETRY_TIMEOUT_FACTOR = 4
# Neo4j's transaction timeout does not cover planning: a text a cold server plans for a
# minute answered "timed out" after that minute, not after its 5 s. So the client waits for
# an answer at most a tenth longer than the timeout it gave the server (at most 1 s longer:
# room for the server's own timeout error while it executes), then closes the connection
# (which cancels the read on the server) and reports the read as timed out.
CLIENT_GRACE_FRACTION = 0.1
CLIENT_GRACE_MAX_S = 1.0
# `INVESTIGATOR_READ_TIMEOUT`: seconds every template read is given instead of its template's
# own timeout (5 s or 10 s in the manifest), for a loaded machine or a test; the retry after a
# timeout has RETRY_TIMEOUT_FACTOR times it. Above 0, at most MAX_READ_TIMEOUT_S. The
# subject's own principal read (not a template) keeps its 5 s.
READ_TIMEOUT_ENV = "INVESTIGATOR_READ_TIMEOUT"
# The error of a read the run's own deadline stopped (`run(deadline=...)`): its rows are
# unknown, and the run stops at its deadline (docs/investigation.md).
DEADLINE_CUT = "query stopped at the run's deadline and was cancelled"
MAX_READ_TIMEOUT_S = 600.0

T = TypeVar("T")

# Bounded fulltext candidates (issue 12): a template reading `$candidate_limit` gets Lucene's
# best hits only, first this many per wanted row (at least the minimum), then growing tenfold
# until the rows provably equal those of every hit; past the maximum, every hit (null).
_FIRST_CANDIDATES_PER_ROW = 20
_MIN_FIRST_CANDIDATES = 200
_CANDIDATE_GROWTH = 10
_MAX_BOUNDED_CANDIDATES = 200_000
# A tie at the cut wider than this many hits the subject can see is not read to its end
# (`TemplateExecutor.tie_bound`): the rows stop above it and the result says so.
TIE_BOUND = 200
# The templates whose rows may stop above such a tie (name_suggestions' rows are only hints).
_TIE_CUT_TEMPLATES = frozenset({"fulltext_search"})


def _native(value: Any) -> Any:
    """Neo4j temporal values -> Python (aware datetimes); containers recursively."""
    to_native = getattr(value, "to_native", None)
    if to_native is not None:
        return to_native()
    if isinstance(value, list):
        return [_native(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _native(v) for k, v in value.items()}
    return value


# The element's common times: integer microseconds since the epoch in `epoch_micros` rows.
_ELEMENT_TIMES = ("valid_from", "valid_to", "observed_at", "recorded_at", "superseded_at")


def _from_micros(value: int | None) -> datetime | None:
    """Integer microseconds since the epoch -> the aware UTC datetime `to_native` gives
    (graph_schema.canonical.epoch_micros is the inverse); null stays null."""
    return None if value is None else from_epoch_micros(value)


def _untagged(value: Any) -> Any:
    """A `context`/`props` value of an `epoch_micros` row: `{us: n}` is a zoned UTC time
    (no stored property is a map), anything else is as `datetime` rows return it."""
    if type(value) is dict:
        return from_epoch_micros(value["us"])
    return _native(value)


class Element(BaseModel):
    """One KG record a row offers as candidate evidence (docs/contracts.md, row contract).

    `element_id` is the business identity (`id` of a node, `key` of an edge), never
    Neo4j's internal element id, so it is stable across databases and replays.
    """

    model_config = ConfigDict(frozen=True)

    element_id: str
    kind: Literal["node", "relationship"]
    type: str
    version: int
    name: str | None = None
    title: str | None = None
    content: str | None = None
    redacted: bool = False
    locator: str | None = None
    trust: str | None = None
    supports: tuple[str, ...] = ()
    valid_from: AwareDatetime | None = None
    valid_to: AwareDatetime | None = None
    observed_at: AwareDatetime | None = None
    recorded_at: AwareDatetime
    superseded_at: AwareDatetime | None = None
    source_id: str | None = None
    source_version: str | None = None
    acl: tuple[str, ...] = ()
    # The record's allowed purposes and whether it has a redacted view: the gate's backstops.
    purposes: tuple[str, ...] | None = None
    has_redacted_view: bool = False
    status: str
    content_hash: str | None = None
    text_hash: str | None = None
    props: dict[str, Any] = Field(default_factory=dict)
    replacement: str | None = None
    conflict_key: str | None = None


class TemplateRow(BaseModel):
    """One row of a template: the element, the ids tying it to the question (typed by the
    template's declared context shape, cypher_templates/contexts.py), a rank score."""

    model_config = ConfigDict(frozen=True)

    element: Element
    context: SerializeAsAny[RowContext] = Field(default_factory=EmptyContext)
    score: float | None = None

    @field_validator("context", mode="before")
    @classmethod
    def _context_from_data(cls, value: Any) -> Any:
        # A row read back from JSON no longer knows its template: keep its keys as returned.
        return OpenContext.model_validate(value) if isinstance(value, dict) else value


class ToolResult(BaseModel):
    """What one template call returned, ready to be recorded as a Context Graph ToolCall."""

    model_config = ConfigDict(frozen=True)

    template_id: str
    template_version: int
    template_hash: str
    options: dict[str, str | int]
    params: dict[str, JsonValue]  # the plan's parameters (what the call was asked)
    evidence_type: EvidenceType | None
    known_at: AwareDatetime
    rows: list[TemplateRow]
    truncated: bool
    row_count: int
    limit: int
    duration_ms: float
    error: str | None = None
    # At least this many records the subject can see tie at the score where the rows stop
    # (the rows are those scoring above it): a fulltext tie too wide to order by id.
    tie_at_cut: int | None = None
    # When the call began (ns since the epoch), for its trace span; never serialised.
    started_ns: int | None = Field(default=None, exclude=True, repr=False)

    @property
    def ref(self) -> str:
        """`id@version`."""
        return f"{self.template_id}@{self.template_version}"


class QueryTimedOut(Neo4jUnavailable):
    """A template ran past its timeout and Neo4j cancelled it (exit 4)."""


# The run's deadline (a `time.monotonic()` instant) while its reads run (`reads_until`).
_RUN_DEADLINE: ContextVar[float | None] = ContextVar("run_deadline", default=None)


@contextlib.contextmanager
def reads_until(deadline: float | None) -> Iterator[None]:
    """Within it, no read of this thread waits for Neo4j past `deadline` (a
    `time.monotonic()` instant; None: each read's own bound only): a read still waiting
    then fails with `DEADLINE_CUT`, and a read begun after it fails at once."""
    token = _RUN_DEADLINE.set(deadline)
    try:
        yield
    finally:
        _RUN_DEADLINE.reset(token)


class _NoAnswerInTime(Exception):
    """Raised inside a read transaction when the client stopped waiting for Neo4j: not a
    driver error, so the driver does not retry the transaction."""


def read_timeout_setting(environ: Mapping[str, str] | None = None) -> float | None:
    """`INVESTIGATOR_READ_TIMEOUT` in seconds, or None when unset (each template's own).

    BadInput (exit 2, one line) unless a number above 0 and at most MAX_READ_TIMEOUT_S."""
    raw = (os.environ if environ is None else environ).get(READ_TIMEOUT_ENV, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not (0.0 < value <= MAX_READ_TIMEOUT_S):  # nan and inf fail too
        raise BadInput(
            f"{READ_TIMEOUT_ENV} must be a number of seconds above 0 and at most "
            f"{MAX_READ_TIMEOUT_S:g}, not {raw[:40]!a}"
        )
    return value


def _bolt_socket(tx: neo4j.ManagedTransaction) -> Any:
    """The socket of the connection `tx` runs on, when this driver exposes one whose reads
    take a deadline (neo4j 5.x and 6.x do; tests/test_read_timeouts.py pins it), else None."""
    sock = getattr(getattr(tx, "_connection", None), "socket", None)
    return sock if callable(getattr(sock, "set_read_deadline", None)) else None


def _is_timeout(exc: Neo4jError) -> bool:
    code = exc.code or ""
    return "TransactionTimedOut" in code or "Terminated" in code


def _parse_row(record: neo4j.Record, shape: type[RowContext]) -> TemplateRow:
    element = _native(record["element"])
    # props travel as [name, value] pairs (Cypher has no map-from-pairs without APOC).
    element["props"] = {str(k): v for k, v in sorted(element.get("props") or [])}
    context = shape.model_validate(_native(record["context"] or {}))
    return TemplateRow(
        element=Element.model_validate(element), context=context, score=record["score"]
    )


def _parse_row_micros(record: neo4j.Record, shape: type[RowContext]) -> TemplateRow:
    """`_parse_row` for `epoch_micros` rows: the same TemplateRow, no DateTime to hydrate.

    The integers become datetimes here, before the models validate (pydantic would read an
    integer as seconds). The element's other fields are strings, numbers and lists of
    strings, so only `props` and `context` may still hold a temporal value to convert.
    """
    element = dict(record["element"])
    for key in _ELEMENT_TIMES:
        element[key] = _from_micros(element[key])
    element["props"] = {str(k): _untagged(v) for k, v in sorted(element.get("props") or [])}
    context = record["context"] or {}
    instants = instant_fields(shape)
    context = {str(k): _untagged(v) if k in instants else _native(v) for k, v in context.items()}
    return TemplateRow(
        element=Element.model_validate(element),
        context=shape.model_validate(context),
        score=record["score"],
    )


# How each `row_times` setting's rows are read (cypher_templates/registry.py, RowTimes).
_ROW_PARSERS = {"datetime": _parse_row, "epoch_micros": _parse_row_micros}


def _fetch_size(compiled: CompiledQuery, parameters: dict[str, Any] | None = None) -> int:
    # A tie probe asks for more rows than the template's limit (`_rows_above_wide_tie`).
    wanted = int(parameters["limit"]) if parameters else 0
    return max(compiled.limit * 4 + 4, wanted)


def _fetch(
    tx: neo4j.ManagedTransaction, text: str, parameters: dict[str, Any], fetch: int
) -> list[neo4j.Record]:
    """The first `fetch` rows of `text` in `tx` (the rest are discarded with the result)."""
    return list(tx.run(text, parameters).fetch(fetch))


def _reader(
    tx: neo4j.ManagedTransaction, compiled: CompiledQuery
) -> Callable[[dict[str, Any]], list[neo4j.Record]]:
    """Reads `compiled` with given parameters inside `tx`."""
    return lambda parameters: _fetch(
        tx, compiled.text, parameters, _fetch_size(compiled, parameters)
    )


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def first_candidate_limit(limit: int) -> int:
    """How many fulltext hits the first round asks Lucene for, for `limit` wanted rows."""
    return max(_MIN_FIRST_CANDIDATES, _FIRST_CANDIDATES_PER_ROW * limit)


def relative_scores(rows: list[TemplateRow]) -> list[TemplateRow]:
    """The rows with each score divided by the best score among them (the first row's: 1.0).

    A fulltext score is Lucene's BM25 over the subject's tenant's index, whose statistics
    (how many records hold each word, how many records, their mean length) count every
    record of the tenant, those the subject may not read too: the raw score of a page bob
    reads moved when pages labelled `pii` that use its words were written (5.99 -> 5.28 for
    one word in three such pages), so it told him they exist and about how many. Divided
    by the best visible row's, the scale those statistics set is gone; the order and every
    use of the scores (the runbook re-ranker weighs a hit against the best one, ties compare
    equal scores) are unchanged. What stays is how the visible rows' scores compare, as their
    order does (docs/security.md, rule 2)."""
    best = max((row.score for row in rows if row.score is not None), default=None)
    if best is None or best <= 0.0:
        return rows
    return [
        row if row.score is None else row.model_copy(update={"score": row.score / best})
        for row in rows
    ]


def candidates_suffice(
    records: list[neo4j.Record], wanted: int, candidate_limit: int | None
) -> bool:
    """True when rows read from Lucene's best `candidate_limit` hits are the rows of all hits.

    Every row carries `candidates` (hits handed over) and `floor` (the lowest of their
    scores). Hits left out score at most `floor`, so they can change nothing when Lucene had
    no more, or when `wanted` rows came back all scoring above `floor` (a row tied at the
    floor could lose to a left-out hit with a smaller id). No row: nothing proves it.
    """
    if candidate_limit is None:
        return True
    if not records:
        return False
    if int(records[0]["candidates"]) < candidate_limit:
        return True
    floor = float(records[0]["floor"])
    return len(records) >= wanted and min(float(r["score"]) for r in records) > floor


def next_candidate_limit(records: list[neo4j.Record], candidate_limit: int) -> int | None:
    """The next round's candidates: tenfold, or every hit when no row was visible or past
    the maximum (a round with no row says nothing about how many more it would take)."""
    grown = candidate_limit * _CANDIDATE_GROWTH
    if not records or grown > _MAX_BOUNDED_CANDIDATES:
        return None
    return grown


class RecordedFailure(BaseModel):
    """A call a recorded run made that failed, as its tool call recorded it."""

    model_config = ConfigDict(frozen=True)

    template_id: str
    template_version: int
    params: dict[str, Any]
    options: dict[str, Any]
    error: str

    def key(self) -> str:
        return self.key_of(self.template_id, self.template_version, self.params, self.options)

    @staticmethod
    def key_of(
        template_id: str, version: int, params: dict[str, Any], options: dict[str, Any]
    ) -> str:
        """One call's identity: template, version, parameters and options as recorded."""
        return json.dumps(
            [template_id, version, params, options], sort_keys=True, separators=(",", ":")
        )


class RecordedRanking(BaseModel):
    """A fulltext call a recorded run made, with its rows as the run ranked them: the same
    records read again now (identical: replay proved their rows hash), in the recorded order
    with the recorded scores. Replay re-runs the run with them, so records written after the
    run (which move BM25 statistics, tenant-wide) do not change what the re-run weighs."""

    model_config = ConfigDict(frozen=True)

    template_id: str
    template_version: int
    params: dict[str, Any]
    options: dict[str, Any]
    limit: int | None
    truncated: bool
    rows: tuple[TemplateRow, ...]
    # The tie at the rows' cut (`ToolResult.tie_at_cut`), when known (the same rows read now).
    tie_at_cut: int | None = None

    def key(self) -> str:
        return RecordedFailure.key_of(
            self.template_id, self.template_version, self.params, self.options
        )


class TemplateExecutor:
    """Runs compiled templates for a subject, read-only, bounded and typed."""

    def __init__(
        self,
        driver: neo4j.Driver,
        registry: TemplateRegistry | None = None,
        database: str | None = None,
        proofs: ReadOnlyProofs | None = None,
        tie_bound: int | None = None,
    ) -> None:
        self.driver = driver
        self.tie_bound = TIE_BOUND if tie_bound is None else tie_bound
        self.registry = registry or TemplateRegistry.packaged()
        self.database = database
        self.proofs = proofs if proofs is not None else ReadOnlyProofs.default()
        self._server: str | None = None
        self._read_only_verified: set[str] = set()
        self._recorded_failures: dict[str, list[str]] = {}
        self._failures_lock = threading.Lock()
        self._recorded_rankings: dict[str, RecordedRanking] = {}
        # Every read's timeout when `INVESTIGATOR_READ_TIMEOUT` is set (BadInput if invalid).
        self.read_timeout_s = read_timeout_setting()

    def timeout_of(self, template_timeout_s: float) -> float:
        """A read's timeout: `INVESTIGATOR_READ_TIMEOUT` when set, else its template's."""
        return self.read_timeout_s if self.read_timeout_s is not None else template_timeout_s

    def pinned(
        self,
        versions: dict[str, int],
        failures: Iterable[RecordedFailure] = (),
        rankings: Iterable[RecordedRanking] = (),
    ) -> TemplateExecutor:
        """An executor on the same server whose steps without a version run at the versions
        a recorded run used (`TemplateRegistry.pinned`): what replay re-runs a run with.

        `failures`: the run's calls that failed (a timeout on its machine, Neo4j gone): the
        same calls, in the same order, fail again with the recorded error instead of
        reading, so the re-run goes on without their rows as the run did.
        `rankings`: the run's fulltext calls whose records replay read again unchanged: the
        same calls (template, version, parameters, options and limit) return those rows in
        the recorded order with the recorded scores instead of today's ranking."""
        executor = TemplateExecutor(
            self.driver, self.registry.pinned(versions), self.database, self.proofs, self.tie_bound
        )
        for failure in failures:
            executor._recorded_failures.setdefault(failure.key(), []).append(failure.error)
        for ranking in rankings:
            executor._recorded_rankings[ranking.key()] = ranking
        return executor

    def _recorded_ranking(self, compiled: CompiledQuery) -> RecordedRanking | None:
        """The recorded ranking of a call asked exactly as `compiled`, or None."""
        if not self._recorded_rankings:
            return None
        key = RecordedFailure.key_of(
            compiled.template_id, compiled.template_version, compiled.parameters, compiled.options
        )
        ranking = self._recorded_rankings.get(key)
        if ranking is None or ranking.limit != compiled.limit:
            return None
        return ranking

    def _recorded_failure(self, compiled: CompiledQuery) -> str | None:
        """The error a recorded run's next call of `compiled` failed with, or None."""
        if not self._recorded_failures:
            return None
        key = RecordedFailure.key_of(
            compiled.template_id, compiled.template_version, compiled.parameters, compiled.options
        )
        with self._failures_lock:
            errors = self._recorded_failures.get(key)
            return errors.pop(0) if errors else None

    def compile(self, step: PlanStep, plan: QueryPlan | None = None) -> CompiledQuery:
        """Compile a plan step against this executor's registry (refusals are BadInput)."""
        return compile_step(self.registry, step, plan)

    def _session(self) -> neo4j.Session:
        # Notifications (e.g. "property key does not exist" on a sparse graph) are about the
        # data, not about the user's question; they would only flood logs.
        return self.driver.session(
            database=self.database,
            default_access_mode=neo4j.READ_ACCESS,
            notifications_min_severity=neo4j.NotificationMinimumSeverity.OFF,
        )

    def _read(
        self, text: str, parameters: dict[str, Any], timeout_s: float, fetch: int
    ) -> list[neo4j.Record]:
        """One query in its own managed read transaction."""
        return self._in_read_transaction(lambda tx: _fetch(tx, text, parameters, fetch), timeout_s)

    def _in_read_transaction(
        self, work: Callable[[neo4j.ManagedTransaction], T], timeout_s: float
    ) -> T:
        """One managed read transaction; the only place a KG session is opened.

        Neo4j cancels the transaction after `timeout_s` while it executes, but not while it
        plans; so the client waits for its answers a tenth longer than `timeout_s` at most
        (or until the run's deadline, `reads_until`, if sooner), then closes the connection
        and raises QueryTimedOut: a read answers or fails in bounded time."""
        deadline = _RUN_DEADLINE.get()
        grace = min(CLIENT_GRACE_MAX_S, timeout_s * CLIENT_GRACE_FRACTION)
        waits_until = time.monotonic() + timeout_s + grace
        run_deadline = deadline is not None and deadline < waits_until
        if deadline is not None:
            waits_until = min(waits_until, deadline)

        def bounded(tx: neo4j.ManagedTransaction) -> T:
            left = waits_until - time.monotonic()
            if left <= 0:
                raise _NoAnswerInTime  # an attempt the driver would retry after the bound
            sock = _bolt_socket(tx)
            if sock is not None:
                sock.set_read_deadline(left)
            try:
                return work(tx)
            except (DriverError, Neo4jError):
                if time.monotonic() >= waits_until:
                    raise _NoAnswerInTime from None  # its socket's deadline passed: no retry
                raise
            finally:
                if sock is not None:
                    sock.set_read_deadline(None)

        try:
            with self._session() as session:
                return session.execute_read(neo4j.unit_of_work(timeout=timeout_s)(bounded))
        except _NoAnswerInTime:
            said = f"query timed out after {timeout_s:g} s and was cancelled"
            raise QueryTimedOut(DEADLINE_CUT if run_deadline else said) from None
        except ClientError as exc:
            if _is_timeout(exc):
                raise QueryTimedOut(
                    f"query timed out after {timeout_s:g} s and was cancelled"
                ) from exc
            if "no such fulltext schema index" in (exc.message or ""):
                raise InvestigatorError(
                    "this tenant has no fulltext index yet: run `investigator schema apply`"
                ) from exc
            raise
        except TransientError as exc:
            if _is_timeout(exc):
                raise QueryTimedOut(
                    f"query timed out after {timeout_s:g} s and was cancelled"
                ) from exc
            raise Neo4jUnavailable(f"Neo4j kept failing transiently: {exc.code}") from exc
        except (ServiceUnavailable, SessionExpired, DriverError, OSError) as exc:
            first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise Neo4jUnavailable(f"Neo4j is unavailable: {first_line}") from exc

    def run(
        self,
        step_or_compiled: PlanStep | CompiledQuery,
        subject: Subject,
        known_at: datetime,
        *,
        plan: QueryPlan | None = None,
        raise_on_error: bool = True,
    ) -> ToolResult:
        """Run one template for `subject` as the KG was known at `known_at`.

        A plan step is compiled first (refusals raise `BadInput`). With
        `raise_on_error=False`, a database failure or timeout is reported in
        `ToolResult.error` with no rows instead of raising. Inside `reads_until(deadline)`
        no wait for Neo4j goes past the deadline (the read times out there).
        """
        compiled, parameters = self._bind(step_or_compiled, subject, known_at, plan)
        started_ns = time.time_ns()
        started = time.perf_counter()
        error: str | None = self._recorded_failure(compiled)
        if error is not None:
            if raise_on_error:
                raise Neo4jUnavailable(error)
            return self._result(compiled, known_at, [], 0.0, started_ns, error)
        ranking = self._recorded_ranking(compiled)
        if ranking is not None:
            # Bound and re-checked above like any call; its rows are the recorded ranking's.
            result = self._result(compiled, known_at, [], 0.0, started_ns, None)
            rows = list(ranking.rows)
            return result.model_copy(
                update={
                    "rows": rows,
                    "row_count": len(rows),
                    "truncated": ranking.truncated,
                    "tie_at_cut": ranking.tie_at_cut,
                }
            )
        records: list[neo4j.Record] = []
        tie: int | None = None
        try:
            self._ensure_read_only(compiled, parameters)
            records, tie = self._enough_candidates(
                compiled,
                lambda p: self._read_template(compiled, p, _fetch_size(compiled, p)),
                parameters,
            )
        except TemplateRefused:
            raise  # a text Neo4j would not plan read-only never runs, whatever the caller asked
        except (InvestigatorError, Neo4jError) as exc:
            if raise_on_error:
                raise
            error = _first_line(exc)
        duration_ms = (time.perf_counter() - started) * 1000.0
        return self._result(compiled, known_at, records, duration_ms, started_ns, error, tie)

    def run_together(
        self,
        steps: Sequence[PlanStep | CompiledQuery],
        subject: Subject,
        known_at: datetime,
        *,
        plan: QueryPlan | None = None,
        raise_on_error: bool = True,
    ) -> list[ToolResult]:
        """Run templates that do not depend on each other in one managed read transaction:
        one snapshot, and one BEGIN and COMMIT for all of them instead of one each.

        Each result is the one `run` would give. When the shared transaction fails for any
        reason but Neo4j being unavailable (a timeout, a refused or failing query), every
        step runs again on its own, so a failure stays the one call's own.
        """
        prepared: list[tuple[CompiledQuery, dict[str, Any]]] = []
        # A re-run with recorded failures or rankings runs its calls one by one, each
        # meeting its own.
        if len(steps) > 1 and not self._recorded_failures and not self._recorded_rankings:
            try:
                for step in steps:
                    compiled, parameters = self._bind(step, subject, known_at, plan)
                    self._ensure_read_only(compiled, parameters)
                    prepared.append((compiled, parameters))
                return self._read_together(prepared, known_at)
            except QueryTimedOut:
                pass  # whose timeout it was is for each call alone to find out
            except Neo4jUnavailable as exc:
                if raise_on_error:
                    raise
                if len(prepared) == len(steps):  # every call would fail alike: say so once
                    return [
                        self._result(compiled, known_at, [], 0.0, None, _first_line(exc))
                        for compiled, _ in prepared
                    ]
            except (InvestigatorError, Neo4jError, DriverError):
                pass
        return [
            self.run(step, subject, known_at, plan=plan, raise_on_error=raise_on_error)
            for step in steps
        ]

    def _read_together(
        self, prepared: list[tuple[CompiledQuery, dict[str, Any]]], known_at: datetime
    ) -> list[ToolResult]:
        Timed = tuple[list[neo4j.Record], int | None, float, int]

        def work(tx: neo4j.ManagedTransaction) -> list[Timed]:
            timed = []
            for compiled, parameters in prepared:
                started_ns = time.time_ns()
                started = time.perf_counter()
                records, tie = self._enough_candidates(compiled, _reader(tx, compiled), parameters)
                timed.append((records, tie, (time.perf_counter() - started) * 1000.0, started_ns))
            return timed

        # The calls run one after another in the group's transaction, so it has the sum of
        # their timeouts (room for a cold server to plan them all); a call that is too slow
        # fails the group, then runs alone with its own timeout.
        timeout_s = sum(self.timeout_of(compiled.timeout_s) for compiled, _ in prepared)
        timed = self._in_read_transaction(work, timeout_s)
        return [
            self._result(compiled, known_at, records, duration_ms, started_ns, None, tie)
            for (compiled, _), (records, tie, duration_ms, started_ns) in zip(
                prepared, timed, strict=True
            )
        ]

    def _bind(
        self,
        step_or_compiled: PlanStep | CompiledQuery,
        subject: Subject,
        known_at: datetime,
        plan: QueryPlan | None,
    ) -> tuple[CompiledQuery, dict[str, Any]]:
        """Compile, re-check against the allowlist, bind the subject's parameters."""
        if known_at.tzinfo is None or known_at.utcoffset() is None:
            raise ValueError("known_at must be a zoned datetime")
        compiled = (
            step_or_compiled
            if isinstance(step_or_compiled, CompiledQuery)
            else self.compile(step_or_compiled, plan)
        )
        self._check_allowlisted(compiled)
        return compiled, self.cypher_parameters(compiled, subject, known_at)

    def _enough_candidates(
        self,
        compiled: CompiledQuery,
        read: Callable[[dict[str, Any]], list[neo4j.Record]],
        parameters: dict[str, Any],
    ) -> tuple[list[neo4j.Record], int | None]:
        """The rows of every hit, read from as few candidates as prove them; and, when the
        rows would end inside a tie of at least `tie_bound` visible hits, only the rows above
        it, with the bound (the tie at the cut, `ToolResult.tie_at_cut`)."""
        records = read(parameters)
        while True:
            sufficient = candidates_suffice(
                records, parameters["limit"], parameters.get("candidate_limit")
            )
            if compiled.template_id in _TIE_CUT_TEMPLATES:
                above = self._rows_above_wide_tie(read, parameters, records, sufficient)
                if above is not None:
                    return above, self.tie_bound
            if sufficient:
                return records, None
            # Too few candidates to be sure: ask again with more (same text, same proof).
            parameters = {
                **parameters,
                "candidate_limit": next_candidate_limit(records, parameters["candidate_limit"]),
            }
            records = read(parameters)

    def _rows_above_wide_tie(
        self,
        read: Callable[[dict[str, Any]], list[neo4j.Record]],
        parameters: dict[str, Any],
        records: list[neo4j.Record],
        sufficient: bool,
    ) -> list[neo4j.Record] | None:
        """The rows scoring above the last wanted row's score when at least `tie_bound`
        visible hits share that score, else None (the rows stand, or need more candidates).

        The last wanted row's score is where the rows are cut. Every hit of that score is
        among the candidates when they suffice; when they do not, the cut is at the floor
        and the candidates hold part of the tie, which is enough to see it reach the bound.
        Only hits the visibility predicate passed are counted (a probe of the same text,
        `tie_bound` rows further), so records the subject cannot see never decide the cut.
        """
        wanted = int(parameters["limit"])
        if len(records) < wanted:
            return None  # every visible hit is a row: no cut
        if int(records[0]["candidates"]) < self.tie_bound:
            return None  # fewer hits were read than the bound: no tie among them reaches it
        level = float(records[wanted - 1]["score"])
        if sufficient and float(records[wanted - 2]["score"]) != level:
            return None  # the cut falls between two scores: nothing tied to order by id
        probe = read({**parameters, "limit": wanted + self.tie_bound})
        if sum(1 for r in probe if float(r["score"]) == level) < self.tie_bound:
            return None
        return [r for r in records if float(r["score"]) > level]

    @staticmethod
    def _result(
        compiled: CompiledQuery,
        known_at: datetime,
        records: list[neo4j.Record],
        duration_ms: float,
        started_ns: int | None,
        error: str | None,
        tie_at_cut: int | None = None,
    ) -> ToolResult:
        shape = context_shape(compiled.template_id)
        parse = _ROW_PARSERS[compiled.row_times]
        rows = [parse(r, shape) for r in records]
        truncated = len(rows) > compiled.limit
        rows = relative_scores(rows[: compiled.limit])
        return ToolResult(
            template_id=compiled.template_id,
            template_version=compiled.template_version,
            template_hash=compiled.template_hash,
            options=compiled.options,
            params=compiled.parameters,
            evidence_type=compiled.evidence_type,
            known_at=known_at,
            rows=rows,
            truncated=truncated,
            row_count=len(rows),
            limit=compiled.limit,
            duration_ms=round(duration_ms, 3),
            error=error,
            tie_at_cut=tie_at_cut,
            started_ns=started_ns,
        )

    def _read_template(
        self, compiled: CompiledQuery, parameters: dict[str, Any], fetch: int
    ) -> list[neo4j.Record]:
        return self._read_retrying(
            compiled.text, parameters, self.timeout_of(compiled.timeout_s), fetch
        )

    def _read_retrying(
        self, text: str, parameters: dict[str, Any], timeout_s: float, fetch: int
    ) -> list[neo4j.Record]:
        try:
            return self._read(text, parameters, timeout_s, fetch)
        except QueryTimedOut:
            deadline = _RUN_DEADLINE.get()
            if deadline is not None and time.monotonic() >= deadline:
                raise  # the run's deadline passed: no retry waits past it
            # The timeout may have gone on planning, not on the data (a cold JVM, a replan
            # after the statistics moved, a busy machine): the one retry has room to plan.
            # (An EXPLAIN would not help: its plan is not the one an execution reuses.)
            return self._read(text, parameters, timeout_s * RETRY_TIMEOUT_FACTOR, fetch)

    @staticmethod
    def cypher_parameters(
        compiled: CompiledQuery, subject: Subject, known_at: datetime
    ) -> dict[str, Any]:
        """Every parameter the text receives: the plan's, then the subject's and the call's."""
        parameters = {
            **compiled.cypher_parameters,
            "tenant": subject.tenant,
            "granted": list(subject.labels),
            "purpose": subject.purpose,
            "known_at": known_at,
            # One extra row tells "exactly limit" from "more than limit".
            "limit": compiled.limit + 1,
        }
        if "$fulltext_index" in compiled.text:
            # The subject's tenant's own index: ranking that no other tenant can move.
            parameters["fulltext_index"] = tenant_fulltext_index(subject.tenant)
        if "$candidate_limit" in compiled.text:
            # Lucene's best hits only; `run` asks again with more when they may not suffice.
            parameters["candidate_limit"] = first_candidate_limit(parameters["limit"])
        return parameters

    def read_principals(
        self, subject: SubjectRef | str, known_at: datetime | None = None
    ) -> list[PrincipalRecord]:
        """The current `:KG:Principal` record of `subject` in its tenant (for `load_subject`).

        `subject` is a SubjectRef or `tenant/id` (a bare id is BadInput: never looked up
        across tenants). Read as of now: `known_at` is ignored on purpose.
        """
        del known_at
        ref = subject if isinstance(subject, SubjectRef) else SubjectRef.parse(subject)
        # Often the first query after Neo4j starts: it may take longer than 5 s to plan.
        records = self._read_retrying(
            _PRINCIPAL_QUERY,
            {"tenant": ref.tenant, "subject_id": ref.id},
            _PRINCIPAL_TIMEOUT_S,
            1,
        )
        return [
            PrincipalRecord(
                id=str(r["id"]),
                tenant=str(r["tenant"]),
                labels=tuple(sorted(str(x) for x in r["labels"])),
                purposes=tuple(sorted(str(x) for x in r["purposes"])),
                incarnation=int(r["incarnation"]),
                incarnation_began=_native(r["incarnation_began"]),
            )
            for r in records
        ]

    def principals_ignoring_case(self, ref: SubjectRef) -> list[SubjectRef]:
        """The active principals named `ref` but for case, or but for the prefix of its id
        (`bob`, `usr:bob` -> user:bob), at most 3, for a "did you mean" after an unknown
        subject: only names the caller has already spelled out, in the tenant typed."""
        subject_id = ref.id.lower()
        name = subject_id.split(":", 1)[1] if ":" in subject_id else subject_id
        records = self._read_retrying(
            _PRINCIPAL_CASE_QUERY,
            {"tenant": ref.tenant.lower(), "subject_id": subject_id, "name": name},
            _PRINCIPAL_TIMEOUT_S,
            3,
        )
        return [SubjectRef(tenant=str(r["tenant"]), id=str(r["id"])) for r in records]

    def explain(
        self,
        rendered: RenderedTemplate | CompiledQuery,
        parameters: dict[str, Any] | None = None,
    ) -> str:
        """The query type Neo4j's planner assigns to an allowlisted text (`r` = read-only).

        Neo4j plans the text to answer (seconds on a cold server) but does not keep that
        plan for executions of the same text: the first execution plans again (measured on
        5.26, docs/benchmarks.md), which is why a timed-out read's retry has more time.
        Bounded like a read's retry (RETRY_TIMEOUT_FACTOR times its timeout; QueryTimedOut).
        An EXPLAIN runs nothing, so a read transaction answers for a write text too.
        """
        self._check_allowlisted(rendered)
        spec = self.registry.get(rendered.template_id, rendered.template_version)
        text, params = "EXPLAIN " + rendered.text, parameters or {}
        return self._in_read_transaction(
            lambda tx: str(tx.run(text, params).consume().query_type),
            self.timeout_of(spec.timeout_s) * RETRY_TIMEOUT_FACTOR,
        )

    def _server_key(self) -> str:
        # The planner's verdict depends on the text and the server (version, procedures,
        # database), not on the data: that is what a kept proof is keyed by.
        if self._server is None:
            self._server = server_key(self.driver, self.database)
        return self._server

    def _check_allowlisted(self, compiled: RenderedTemplate | CompiledQuery) -> None:
        """Refuse any text that is not exactly the registry's rendering of its variant (or
        that would read its rows with another version's time format)."""
        spec = self.registry.get(compiled.template_id, compiled.template_version)
        expected = self.registry.render(spec, dict(compiled.options))
        if (
            expected.text != compiled.text
            or expected.template_hash != compiled.template_hash
            or expected.row_times != compiled.row_times
        ):
            raise TemplateRefused(
                f"template {spec.ref}: text does not match the allowlisted rendering"
            )

    def _ensure_read_only(
        self, compiled: CompiledQuery, parameters: dict[str, Any] | None = None
    ) -> None:
        # Defence in depth: the test suite proves every variant is read-only; the first run of
        # each text against a server proves it again there, and the proof is kept (per server
        # and template hash, cypher_templates/proofs.py) so later processes skip the EXPLAIN.
        if compiled.template_hash in self._read_only_verified:
            return
        try:
            server = self._server_key()
            proven = self.proofs.is_proven(server, compiled.template_hash)
            query_type = "r" if proven else self.explain(compiled, parameters)
        except (ServiceUnavailable, SessionExpired, DriverError, OSError) as exc:
            raise Neo4jUnavailable(f"Neo4j is unavailable: {_first_line(exc)}") from exc
        if query_type != "r":
            raise TemplateRefused(
                f"template {compiled.ref}: Neo4j plans it as query type {query_type!r}, not 'r'"
            )
        if not proven:
            self.proofs.record(server, compiled.template_hash)
        self._read_only_verified.add(compiled.template_hash)
