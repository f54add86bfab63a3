"""The executor: the ONLY code path that opens a session against Knowledge Graph data.

Every call runs one compiled, allowlisted template in a managed READ transaction
(`session.execute_read`, so the driver retries transient errors and routes to readers on a
cluster), with the template's timeout, `LIMIT row_cap + 1` to detect truncation (reported,
never silent), and the subject's tenant, grants and purpose as parameters that no plan can
set. Rows come back typed (`Element`, `TemplateRow`); a timeout is `Neo4jUnavailable`.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any, Literal

import neo4j
from neo4j.exceptions import (
    ClientError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, JsonValue

from cypher_templates.compiler import CompiledQuery, compile_step
from cypher_templates.plan import EvidenceType, PlanStep, QueryPlan
from cypher_templates.registry import RenderedTemplate, TemplateRefused, TemplateRegistry
from cypher_templates.subject import PrincipalRecord, Subject
from investigator.errors import InvestigatorError, Neo4jUnavailable

# The one query that is not a template: finding the subject's own grants. It has no subject
# yet to filter by, reads only :KG:Principal records and returns only their grants.
_PRINCIPAL_QUERY = (
    "MATCH (p:KG:Principal {id: $subject_id}) "
    "WHERE p.status = 'active' AND p.recorded_at <= $known_at "
    "AND (p.superseded_at IS NULL OR $known_at < p.superseded_at) "
    "RETURN p.id AS id, p.tenant AS tenant, coalesce(p.labels, []) AS labels, "
    "coalesce(p.purposes, []) AS purposes ORDER BY p.tenant LIMIT 3"
)
_PRINCIPAL_TIMEOUT_S = 5.0


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
    status: str
    content_hash: str | None = None
    text_hash: str | None = None
    props: dict[str, Any] = Field(default_factory=dict)
    replacement: str | None = None
    conflict_key: str | None = None


class TemplateRow(BaseModel):
    """One row of a template: the element, the ids tying it to the question, a rank score."""

    model_config = ConfigDict(frozen=True)

    element: Element
    context: dict[str, Any] = Field(default_factory=dict)
    score: float | None = None


class ToolResult(BaseModel):
    """What one template call returned, ready to be recorded as a Context Graph ToolCall."""

    model_config = ConfigDict(frozen=True)

    template_id: str
    template_version: int
    template_hash: str
    options: dict[str, str | int]
    parameters: dict[str, JsonValue]
    evidence_type: EvidenceType | None
    known_at: AwareDatetime
    rows: list[TemplateRow]
    truncated: bool
    row_count: int
    limit: int
    duration_ms: float
    error: str | None = None

    @property
    def ref(self) -> str:
        """`id@version`."""
        return f"{self.template_id}@{self.template_version}"


def _is_timeout(exc: Neo4jError) -> bool:
    code = exc.code or ""
    return "TransactionTimedOut" in code or "Terminated" in code


def _parse_row(record: neo4j.Record) -> TemplateRow:
    element = _native(record["element"])
    # props travel as [name, value] pairs (Cypher has no map-from-pairs without APOC).
    element["props"] = {str(k): v for k, v in sorted(element.get("props") or [])}
    context = {k: v for k, v in sorted(_native(record["context"] or {}).items())}
    return TemplateRow(
        element=Element.model_validate(element), context=context, score=record["score"]
    )


class TemplateExecutor:
    """Runs compiled templates for a subject, read-only, bounded and typed."""

    def __init__(
        self,
        driver: neo4j.Driver,
        registry: TemplateRegistry | None = None,
        database: str | None = None,
    ) -> None:
        self.driver = driver
        self.registry = registry or TemplateRegistry.load()
        self.database = database
        self._read_only_verified: set[str] = set()

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
        """One managed read transaction; the only place a KG session is opened."""

        @neo4j.unit_of_work(timeout=timeout_s)
        def work(tx: neo4j.ManagedTransaction) -> list[neo4j.Record]:
            result = tx.run(text, parameters)
            return list(result.fetch(fetch))

        try:
            with self._session() as session:
                return session.execute_read(work)
        except ClientError as exc:
            if _is_timeout(exc):
                raise Neo4jUnavailable(
                    f"query timed out after {timeout_s:g} s and was cancelled"
                ) from exc
            raise
        except TransientError as exc:
            if _is_timeout(exc):
                raise Neo4jUnavailable(
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
        `ToolResult.error` with no rows instead of raising.
        """
        if known_at.tzinfo is None or known_at.utcoffset() is None:
            raise ValueError("known_at must be a zoned datetime")
        compiled = (
            step_or_compiled
            if isinstance(step_or_compiled, CompiledQuery)
            else self.compile(step_or_compiled, plan)
        )
        self._check_allowlisted(compiled)
        parameters = {
            **compiled.cypher_parameters,
            "tenant": subject.tenant,
            "granted": list(subject.labels),
            "purpose": subject.purpose,
            "known_at": known_at,
            # One extra row tells "exactly limit" from "more than limit".
            "limit": compiled.limit + 1,
        }
        self._ensure_read_only(compiled)
        started = time.perf_counter()
        error: str | None = None
        records: list[neo4j.Record] = []
        try:
            records = self._read(
                compiled.text, parameters, compiled.timeout_s, compiled.limit * 4 + 4
            )
        except (InvestigatorError, Neo4jError) as exc:
            if raise_on_error:
                raise
            error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        duration_ms = (time.perf_counter() - started) * 1000.0
        rows = [_parse_row(r) for r in records]
        truncated = len(rows) > compiled.limit
        rows = rows[: compiled.limit]
        return ToolResult(
            template_id=compiled.template_id,
            template_version=compiled.template_version,
            template_hash=compiled.template_hash,
            options=compiled.options,
            parameters=compiled.parameters,
            evidence_type=compiled.evidence_type,
            known_at=known_at,
            rows=rows,
            truncated=truncated,
            row_count=len(rows),
            limit=compiled.limit,
            duration_ms=round(duration_ms, 3),
            error=error,
        )

    def read_principals(self, subject_id: str, known_at: datetime) -> list[PrincipalRecord]:
        """The current `:KG:Principal` records with id `subject_id` (for `load_subject`)."""
        records = self._read(
            _PRINCIPAL_QUERY,
            {"subject_id": subject_id, "known_at": known_at},
            _PRINCIPAL_TIMEOUT_S,
            3,
        )
        return [
            PrincipalRecord(
                id=str(r["id"]),
                tenant=str(r["tenant"]),
                labels=tuple(sorted(str(x) for x in r["labels"])),
                purposes=tuple(sorted(str(x) for x in r["purposes"])),
            )
            for r in records
        ]

    def explain(self, rendered: RenderedTemplate | CompiledQuery) -> str:
        """The query type Neo4j's planner assigns to an allowlisted text (`r` = read-only)."""
        self._check_allowlisted(rendered)
        with self._session() as session:
            summary = session.run("EXPLAIN " + rendered.text).consume()
        return str(summary.query_type)

    def _check_allowlisted(self, compiled: RenderedTemplate | CompiledQuery) -> None:
        """Refuse any text that is not exactly the registry's rendering of its variant."""
        spec = self.registry.get(compiled.template_id, compiled.template_version)
        expected = self.registry.render(spec, dict(compiled.options))
        if expected.text != compiled.text or expected.template_hash != compiled.template_hash:
            raise TemplateRefused(
                f"template {spec.ref}: text does not match the allowlisted rendering"
            )

    def _ensure_read_only(self, compiled: CompiledQuery) -> None:
        # Defence in depth: the test suite proves every variant is read-only; the first run of
        # each variant in this process proves it again against the server actually in use.
        if compiled.template_hash in self._read_only_verified:
            return
        query_type = self.explain(compiled)
        if query_type != "r":
            raise TemplateRefused(
                f"template {compiled.ref}: Neo4j plans it as query type {query_type!r}, not 'r'"
            )
        self._read_only_verified.add(compiled.template_hash)
