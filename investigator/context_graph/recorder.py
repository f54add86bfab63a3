"""The Context Graph's own write path: `RunRecorder` and its per-run `RunLog`.

A run's lineage is a hash chain of Ctx nodes (docs/contracts.md section 3). `start_run`
writes the run (status `incomplete`) in its own transaction; a `RunLog` then chains the
run's nodes in memory and writes them in a few transactions (`flush`, typically once per
round, and `finish`, which appends the outcome, sets the status and anchors the run in its
tenant's ledger in the same transaction); each write is one statement after the lock. A
process killed at any point leaves a valid prefix of the chain with the run still
`incomplete` and unanchored, never a half-written node. The `record_*` methods append one
step per transaction (tests and callers without a log). The recorder writes `Ctx*` labels
only and never matches a KG label; references to the Knowledge Graph are ids and hashes in
properties.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from importlib import metadata
from typing import Any, NamedTuple
from uuid import uuid4

import neo4j
from neo4j.exceptions import ConstraintError
from pydantic import BaseModel

from cypher_templates.subject import qualified_ref
from graph_schema.canonical import iso_utc_fixed
from investigator.context_graph.chain import (
    ENVELOPE,
    ENVELOPE_CONTENT_HASHED,
    canonical_json,
    edge_triples,
    node_hash,
    payload_json,
    request_fingerprint,
)
from investigator.context_graph.ledger import (
    LEDGER_CONSTRAINTS,
    NO_TENANT,
    Anchor,
    ChainKey,
    LedgerError,
    anchor_properties,
    anchor_run,
    load_chain_key,
    new_anchor,
    remember_anchor,
)
from investigator.context_graph.models import (
    FINISHED_STATUSES,
    GENESIS_HASH,
    TOOL_CALL_HITS,
    CtxKind,
    RunRequest,
    RunStart,
    RunStatus,
    ToolCallRecord,
)
from investigator.context_graph.schema import apply_missing
from investigator.decision_code import decision_code
from investigator.errors import BadInput, InvestigatorError

CTX_DATABASE_ENV = "INVESTIGATOR_CTX_DATABASE"
# Background writes in flight at once per recorder (runs' starts and flushes: a server's
# concurrent calls).
WRITERS = 4

# Idempotent: `IF NOT EXISTS`. Community Edition supports (composite) uniqueness.
CONSTRAINTS: tuple[str, ...] = (
    "CREATE CONSTRAINT ctx_event_seq IF NOT EXISTS "
    "FOR (n:CtxEvent) REQUIRE (n.run_id, n.seq) IS UNIQUE",
    "CREATE CONSTRAINT ctx_event_id IF NOT EXISTS FOR (n:CtxEvent) REQUIRE n.ctx_id IS UNIQUE",
    "CREATE CONSTRAINT ctx_run_id IF NOT EXISTS FOR (n:CtxRun) REQUIRE n.run_id IS UNIQUE",
    # Idempotency keys are scoped per (tenant, subject): the scope, not the key, is unique.
    "DROP CONSTRAINT ctx_run_idempotency IF EXISTS",
    "CREATE CONSTRAINT ctx_run_idempotency_scope IF NOT EXISTS "
    "FOR (n:CtxRun) REQUIRE n.idempotency_scope IS UNIQUE",
    "CREATE CONSTRAINT ctx_tool_call_id IF NOT EXISTS "
    "FOR (n:CtxToolCall) REQUIRE (n.run_id, n.tool_call_id) IS UNIQUE",
    "CREATE CONSTRAINT ctx_evidence_id IF NOT EXISTS "
    "FOR (n:CtxEvidence) REQUIRE (n.run_id, n.evidence_id) IS UNIQUE",
    "CREATE INDEX ctx_event_run IF NOT EXISTS FOR (n:CtxEvent) ON (n.run_id)",
    "CREATE INDEX ctx_run_started IF NOT EXISTS FOR (n:CtxRun) ON (n.started_at)",
    # An ingest reads each tenant's latest known_at (context_graph/runs.py `run_floors`).
    "CREATE INDEX ctx_run_tenant_known IF NOT EXISTS FOR (n:CtxRun) ON (n.tenant, n.known_at)",
)

# One statement writes a whole batch (one round trip): the nodes, each getting its kind's
# label, then their PROV relationships, then the run's head and status, and, when the run
# finishes, its ledger anchor and the tenant's new ledger head (context_graph/ledger.py).
# Labels and relationship types are written out, one per member of CtxKind and ProvRelation
# (a test holds the text to the enums); every value is a parameter.
_WRITE_BATCH = (
    "UNWIND $nodes AS row CREATE (n:CtxEvent) SET n = row "
    "FOREACH (_ IN CASE WHEN row.kind = 'run' THEN [1] ELSE [] END | SET n:CtxRun) "
    "FOREACH (_ IN CASE WHEN row.kind = 'agent' THEN [1] ELSE [] END | SET n:CtxAgent) "
    "FOREACH (_ IN CASE WHEN row.kind = 'goal' THEN [1] ELSE [] END | SET n:CtxGoal) "
    "FOREACH (_ IN CASE WHEN row.kind = 'plan' THEN [1] ELSE [] END | SET n:CtxPlan) "
    "FOREACH (_ IN CASE WHEN row.kind = 'tool_call' THEN [1] ELSE [] END | SET n:CtxToolCall) "
    "FOREACH (_ IN CASE WHEN row.kind = 'evidence' THEN [1] ELSE [] END | SET n:CtxEvidence) "
    "FOREACH (_ IN CASE WHEN row.kind = 'rejection' THEN [1] ELSE [] END | SET n:CtxRejection) "
    "FOREACH (_ IN CASE WHEN row.kind = 'pack' THEN [1] ELSE [] END | SET n:CtxPack) "
    "FOREACH (_ IN CASE WHEN row.kind = 'claim' THEN [1] ELSE [] END | SET n:CtxClaim) "
    "FOREACH (_ IN CASE WHEN row.kind = 'outcome' THEN [1] ELSE [] END | SET n:CtxOutcome) "
    "WITH count(n) AS created UNWIND $edges AS edge "
    "MATCH (a:CtxEvent {run_id: $run_id, seq: edge[1]}) "
    "MATCH (b:CtxEvent {run_id: $run_id, seq: edge[2]}) "
    "FOREACH (_ IN CASE WHEN edge[0] = 'USED' THEN [1] ELSE [] END | CREATE (a)-[:USED]->(b)) "
    "FOREACH (_ IN CASE WHEN edge[0] = 'WAS_GENERATED_BY' THEN [1] ELSE [] END | "
    "CREATE (a)-[:WAS_GENERATED_BY]->(b)) "
    "FOREACH (_ IN CASE WHEN edge[0] = 'WAS_DERIVED_FROM' THEN [1] ELSE [] END | "
    "CREATE (a)-[:WAS_DERIVED_FROM]->(b)) "
    "FOREACH (_ IN CASE WHEN edge[0] = 'WAS_INFORMED_BY' THEN [1] ELSE [] END | "
    "CREATE (a)-[:WAS_INFORMED_BY]->(b)) "
    "FOREACH (_ IN CASE WHEN edge[0] = 'WAS_ASSOCIATED_WITH' THEN [1] ELSE [] END | "
    "CREATE (a)-[:WAS_ASSOCIATED_WITH]->(b)) "
    "WITH count(*) AS linked MATCH (r:CtxRun {run_id: $run_id}) "
    "SET r.head_seq = $seq, r.head_hash = $hash, r.head_kind = $kind, "
    "r.status = coalesce($status, r.status) "
    "FOREACH (anchor IN CASE WHEN $anchor IS NULL THEN [] ELSE [$anchor] END | "
    "CREATE (x:CtxAnchor) SET x = anchor "
    "MERGE (h:CtxLedgerHead {tenant: anchor.tenant}) "
    "SET h.seq = anchor.seq, h.hash = anchor.hash, h.mac = $head_mac REMOVE h.locked_at)"
)
# Taking the run's head under a write lock serialises appends to one run (a real property
# write takes the node's lock until commit; setting a property to its own value does not).
_LOCK_HEAD = (
    "MATCH (r:CtxRun {run_id: $run_id}) SET r.append_lock = true REMOVE r.append_lock "
    "RETURN r.head_seq AS seq, r.head_hash AS hash, r.head_kind AS kind, r.status AS status"
)
# The finish also takes its tenant's ledger head (run head first, then ledger head: every
# writer locks in this order, so two finishes cannot deadlock), and the database's id,
# under which this machine remembers the ledger's head.
_LOCK_HEAD_AND_LEDGER = (
    "MATCH (r:CtxRun {run_id: $run_id}) SET r.append_lock = true REMOVE r.append_lock "
    "WITH r, coalesce(r.tenant, $no_tenant) AS tenant "
    "MERGE (h:CtxLedgerHead {tenant: tenant}) ON CREATE SET h.seq = -1, h.hash = $genesis "
    "SET h.locked_at = $at "
    "WITH r, h, tenant CALL db.info() YIELD id "
    "RETURN r.head_seq AS seq, r.head_hash AS hash, r.head_kind AS kind, r.status AS status, "
    "tenant, r.subject_id AS subject_id, r.subject_incarnation AS subject_incarnation, "
    "h.seq AS ledger_seq, h.hash AS ledger_hash, "
    "id AS store"
)
_LATEST_OF_KIND = "MATCH (n:CtxEvent {run_id: $run_id, kind: $kind}) RETURN max(n.seq) AS seq"
_TOOL_CALL_SEQ = (
    "MATCH (n:CtxToolCall {run_id: $run_id, tool_call_id: $tool_call_id}) RETURN n.seq AS seq"
)
_EVIDENCE_SEQS = (
    "UNWIND $ids AS id MATCH (n:CtxEvidence {run_id: $run_id, evidence_id: id}) "
    "RETURN n.evidence_id AS id, n.seq AS seq"
)
# The runs of one key: its first run (`$scope`) and its retries after runs that ended
# without an answer (`$scope` with `,N]` for the Nth: `retry_scope`); one seek of the
# scope's range index (the uniqueness constraint's).
_RUNS_BY_SCOPE = (
    "MATCH (r:CtxRun) WHERE r.idempotency_scope STARTS WITH $stem "
    "RETURN r.idempotency_scope AS scope, r.run_id AS run_id, "
    "r.request_fingerprint AS fingerprint, r.status AS status, "
    "r.started_at AS started_at, r.known_at AS known_at"
)


class RecorderError(InvestigatorError):
    """The recorder was asked to write a lineage that would not be whole (exit 1)."""


def ctx_database_from_env(default: str | None = None) -> str | None:
    """The database of the Context Graph: `INVESTIGATOR_CTX_DATABASE`, else `default`."""
    value = os.environ.get(CTX_DATABASE_ENV, "").strip()
    return value or default


@functools.cache  # a metadata scan costs milliseconds; the version cannot change in a process
def _software_agent() -> str:
    try:
        return "investigator/" + metadata.version("graph-investigator")
    except metadata.PackageNotFoundError:
        return "investigator/unknown"


# Fixed width (always microseconds), so that the strings sort as the instants do.
_iso = iso_utc_fixed


def idempotency_scope(
    tenant: str | None, subject_id: str, key: str, incarnation: int | None = None
) -> str:
    """The unique form of an idempotency key: the same key of two subjects names two runs,
    and so does the same key of two holders of one id (a later incarnation is in the scope;
    the first holder's scope is the one runs recorded before incarnations)."""
    if incarnation is not None and incarnation > 1:
        return canonical_json([tenant, subject_id, incarnation, key])
    return canonical_json([tenant, subject_id, key])


def retry_scope(scope: str, attempt: int) -> str:
    """The scope of the `attempt`th run of one key (the first run's is `scope` itself): a key
    whose run ended without an answer (Ctrl-C, an error) runs again under the next one, so
    the uniqueness constraint still lets only one of two retries at once start it."""
    return scope if attempt <= 1 else f"{scope[:-1]},{attempt}]"


def _attempt(scope: str, first: str) -> int | None:
    """Which run of the key whose first scope is `first` the scope `scope` names (None: the
    scope of another key that shares the prefix, which JSON's quoting rules out)."""
    if scope == first:
        return 1
    tail = scope[len(first) - 1 :]
    if scope.startswith(first[:-1]) and tail.startswith(",") and tail.endswith("]"):
        number = tail[1:-1]
        if number.isascii() and number.isdigit():
            return int(number)
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return sorted({v for v in value if isinstance(v, str)})
    return []


def _strings_in_order(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    return [value] if isinstance(value, str) else []


def _pack_evidence_ids(pack: Mapping[str, Any]) -> list[str]:
    """Evidence ids a pack holds: `evidence_ids`, or the ids of its `evidence` items."""
    ids: list[str] = list(_strings(pack.get("evidence_ids")))
    for item in pack.get("evidence") or []:
        if isinstance(item, Mapping) and isinstance(item.get("evidence_id"), str):
            ids.append(item["evidence_id"])
        elif isinstance(item, str):
            ids.append(item)
    return list(dict.fromkeys(ids))


# -- what each node kind stores (pure; the references are resolved by the caller) ---------


class _Node:
    """A node to append: its kind and its own properties (edges follow from the refs)."""

    def __init__(self, kind: CtxKind, props: dict[str, Any]) -> None:
        self.kind = kind
        self.props = props


def _goal_node(goal: BaseModel) -> _Node:
    return _Node(CtxKind.GOAL, {"model": type(goal).__name__, "payload": payload_json(goal)})


def _plan_node(plan: BaseModel, goal_seq: int | None) -> _Node:
    data = plan.model_dump(mode="json")
    return _Node(
        CtxKind.PLAN,
        {
            "model": type(plan).__name__,
            "plan_id": _text(data.get("plan_id")),
            "goal_seq": goal_seq,
            "payload": payload_json(data),
        },
    )


def _tool_call_node(
    call: ToolCallRecord, plan_seq: int | None, hits: Sequence[str] | None = None
) -> _Node:
    # `hits` (a fulltext call whose rows the run keeps no record of otherwise): one entry
    # per row, `element_id version score`; absent otherwise, so other calls record as before.
    extra: dict[str, Any] = {TOOL_CALL_HITS: list(hits)} if hits is not None else {}
    return _Node(
        CtxKind.TOOL_CALL,
        {
            **extra,
            "tool_call_id": call.tool_call_id,
            "template_id": call.template_id,
            "template_version": call.template_version,
            "template_hash": call.template_hash,
            "as_of": _iso(call.as_of) if call.as_of else None,
            "known_at": _iso(call.known_at),
            "limit": call.limit,
            "row_count": call.row_count,
            "rows_hash": call.rows_hash,
            "truncated": call.truncated,
            "duration_ms": float(call.duration_ms),
            "started_at": _iso(call.started_at) if call.started_at else None,
            "error": call.error,
            "round": call.round,
            "evidence_type": call.evidence_type,
            "plan_seq": plan_seq,
            "payload": payload_json(call),
        },
    )


def _evidence_node(data: dict[str, Any], model: str, tool_call_id: str, tc_seq: int) -> _Node:
    element_ids = _strings(data.get("element_ids")) or _strings(data.get("element_id"))
    source_version = data.get("source_version")
    return _Node(
        CtxKind.EVIDENCE,
        {
            "model": model,
            "evidence_id": _text(data.get("evidence_id")),
            "tool_call_id": tool_call_id,
            "tool_call_seq": tc_seq,
            "content_hash": _text(data.get("content_hash")),
            "source_id": _text(data.get("source_id")),
            "source_version": _text(str(source_version)) if source_version is not None else None,
            "locator": _text(data.get("locator")),
            "element_ids": element_ids,
            "payload": payload_json(data),
        },
    )


def _rejection_node(
    data: dict[str, Any], model: str, tool_call_id: str | None, tc_seq: int | None
) -> _Node:
    return _Node(
        CtxKind.REJECTION,
        {
            "model": model,
            "candidate_id": _text(data.get("candidate_id")),
            "reason": _text(data.get("reason")),
            "replacement": _text(data.get("replacement")),
            "tool_call_id": tool_call_id,
            "tool_call_seq": tc_seq,
            "payload": payload_json(data),
        },
    )


def _pack_node(data: dict[str, Any], model: str, ids: list[str], ev_seqs: list[int]) -> _Node:
    return _Node(
        CtxKind.PACK,
        {
            "model": model,
            "pack_id": _text(data.get("pack_id")),
            "pack_hash": _text(data.get("pack_hash")),
            "evidence_ids": ids,
            "evidence_seqs": ev_seqs,
            "payload": payload_json(data),
        },
    )


def _claim_node(
    data: dict[str, Any], model: str, ids: list[str], ev_seqs: list[int], pack_seq: int | None
) -> _Node:
    confidence = data.get("confidence")
    return _Node(
        CtxKind.CLAIM,
        {
            "model": model,
            "claim_id": _text(data.get("claim_id")),
            "statement": _text(data.get("statement")),
            "epistemic_status": _text(data.get("epistemic_status")),
            "confidence": float(confidence) if isinstance(confidence, (int, float)) else None,
            "evidence_ids": ids,
            "evidence_seqs": ev_seqs,
            "pack_seq": pack_seq,
            "payload": payload_json(data),
        },
    )


def _outcome_node(
    status: RunStatus, stop_reason: str | None, finished_at: datetime, result: BaseModel | None
) -> _Node:
    return _Node(
        CtxKind.OUTCOME,
        {
            "status": status.value,
            "stop_reason": stop_reason,
            "finished_at": _iso(finished_at),
            "result": payload_json(result) if result is not None else None,
        },
    )


# What the run itself generates (not a tool call) keeps when: its PROV generation time.
_GENERATED_BY_RUN = frozenset({CtxKind.GOAL, CtxKind.PLAN, CtxKind.PACK, CtxKind.CLAIM})


def _stamped(nodes: list[_Node], now: datetime) -> list[_Node]:
    """`nodes`, each entity the run generates given `generated_at` (a rejection no tool call
    names is the run's too); the outcome has `finished_at`, evidence its call's end."""
    for node in nodes:
        by_run = node.kind in _GENERATED_BY_RUN or (
            node.kind == CtxKind.REJECTION and node.props.get("tool_call_seq") is None
        )
        if by_run:
            node.props["generated_at"] = _iso(now)
    return nodes


def _final_status(status: RunStatus | str) -> RunStatus:
    final = RunStatus(status)
    if final not in FINISHED_STATUSES:
        raise RecorderError(f"finish_run needs a final status, not {final.value!r}")
    return final


class _Head:
    """The last node of a run's chain: where the next node links to."""

    def __init__(self, seq: int, hash_: str, kind: str | None) -> None:
        self.seq = seq
        self.hash = hash_
        self.kind = kind


def _chain(run_id: str, head: _Head, nodes: list[_Node]) -> list[tuple[CtxKind, dict[str, Any]]]:
    """Number and hash-chain `nodes` after `head` (which moves to the last one)."""
    chained: list[tuple[CtxKind, dict[str, Any]]] = []
    for item in nodes:
        seq = head.seq + 1
        props = {k: v for k, v in item.props.items() if v is not None}
        props.update(run_id=run_id, seq=seq, kind=item.kind.value, ctx_id=f"{run_id}#{seq}")
        props[ENVELOPE] = ENVELOPE_CONTENT_HASHED  # content fields hashed by digest: purgeable
        props["prev_hash"] = head.hash
        if head.kind is not None:
            props["prev_kind"] = head.kind
        props["hash"] = node_hash(props, item.kind.value)
        if item.kind == CtxKind.RUN:
            props.update(status=RunStatus.INCOMPLETE.value)
        chained.append((item.kind, props))
        head.seq, head.hash, head.kind = seq, props["hash"], item.kind.value
    return chained


def _store(
    tx: neo4j.ManagedTransaction,
    run_id: str,
    chained: list[tuple[CtxKind, dict[str, Any]]],
    head: _Head,
    final_status: RunStatus | None = None,
    anchor: Anchor | None = None,
    head_mac: str | None = None,
) -> None:
    """Write chained nodes, their PROV relationships (derived from their hashed references,
    as `verify_chain` derives them), the run's head and status and the ledger anchor, in
    one statement of the caller's transaction."""
    if not chained:
        return
    edges = edge_triples((props["seq"], props["kind"], props) for _, props in chained)
    tx.run(
        _WRITE_BATCH,
        run_id=run_id,
        nodes=_Batch(props for _, props in chained),
        edges=_Batch(list(edge) for edge in sorted(edges)),
        seq=head.seq,
        hash=head.hash,
        kind=head.kind,
        status=final_status.value if final_status is not None else None,
        anchor=anchor_properties(anchor) if anchor is not None else None,
        head_mac=head_mac,
    ).consume()


_Nodes = list[tuple[CtxKind, dict[str, Any]]]
_Chained = tuple[_Nodes, _Head]
# Given the run's locked head: the chained nodes to store and the head after them.
_ChainFn = Callable[[neo4j.ManagedTransaction, _Head], _Chained]


class _Batch(list[Any]):
    """A statement's list parameter whose `repr` is short. The neo4j driver formats every
    statement's parameters for its debug log before it knows whether that log is on: a
    finish's nodes (about 70,000 characters of payloads) cost more client CPU to format than
    to pack, and with the log on it would print every recorded payload (docs/benchmarks.md)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<{len(self)} rows>"


class _Locked:
    """What a write transaction found under its locks: the run's head, and at a finish the
    tenant's ledger head and the database's id."""

    def __init__(self, record: neo4j.Record | None, run_id: str) -> None:
        if record is None:
            raise RecorderError(f"run {run_id} is not recorded (start_run first)")
        if record["status"] != RunStatus.INCOMPLETE.value:
            raise RecorderError(f"run {run_id} is already {record['status']}; it is append-only")
        self.head = _Head(record["seq"], record["hash"], record["kind"])
        data = record.data()
        self.tenant: str = data.get("tenant") or NO_TENANT
        self.subject_id: str | None = data.get("subject_id")
        self.subject_incarnation: int | None = data.get("subject_incarnation")
        self.ledger_seq: int | None = data.get("ledger_seq")
        self.ledger_hash: str | None = data.get("ledger_hash")
        self.store: str = str(data.get("store") or "?")


class RunRecorder:
    """Append-only, hash-chained recording of one investigation run after another.

    `database` is where the Context Graph lives: the argument, else
    `INVESTIGATOR_CTX_DATABASE`, else `NEO4J_DATABASE` (the KG's), else the driver's default
    database (Community Edition has one user database; the `Ctx*` label namespace keeps the
    two graphs apart there).
    """

    def __init__(
        self,
        driver: neo4j.Driver,
        database: str | None = None,
        *,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.driver = driver
        # Same resolution as the CLI's readers: the KG's database unless one is configured.
        self.database = (
            database
            if database is not None
            else ctx_database_from_env(os.environ.get("NEO4J_DATABASE", "").strip() or None)
        )
        self._clock = clock or (lambda: datetime.now(UTC))
        self._schema_ready = False
        self._lock = threading.Lock()
        self._write_pool: ThreadPoolExecutor | None = None

    def now(self) -> datetime:
        """The recorder's clock (run start and finish times)."""
        return self._clock().astimezone(UTC)

    # -- schema -----------------------------------------------------------------------

    def ensure_schema(self) -> None:
        """The Ctx and ledger constraints and indexes: checked with one read the first time
        this recorder writes, created only when missing (context_graph/schema.py)."""
        with self._lock:
            if self._schema_ready:
                return
            apply_missing(self.driver, CONSTRAINTS + LEDGER_CONSTRAINTS, self.database)
            self._schema_ready = True

    # -- the run ------------------------------------------------------------------------

    def start_run(self, request: RunRequest, incarnation: int | None = None) -> RunStart:
        """Open a run (status `incomplete`), or return the original run of an idempotency key.

        `incarnation` is the subject's (`PrincipalRecord.incarnation`), recorded on the run
        when known (context_graph/incarnation.py). Keys are scoped per (tenant, subject and
        its incarnation). The same key with the same request
        (fingerprint = canonical hash of the request without the key) answers the original
        run with `created=False`; with a different request it is BadInput (exit 2).
        """
        return self._start(request, incarnation, in_background=False)[0]

    def begin_run(
        self, request: RunRequest, incarnation: int | None = None
    ) -> tuple[RunStart, Future[None] | None]:
        """`start_run`, but a run without an idempotency key (nothing to look up first) is
        written by a background thread while the caller goes on to its first reads.

        The future is that write; `open_log(start, written)` makes the log wait for it
        before the run's next write, so a run killed before it committed has no node at
        all, and one killed after is `incomplete`, as with `start_run`.
        """
        return self._start(request, incarnation, in_background=True)

    def _start(
        self, request: RunRequest, incarnation: int | None, *, in_background: bool
    ) -> tuple[RunStart, Future[None] | None]:
        self.ensure_schema()
        fingerprint = request_fingerprint(request)
        # Runs belong to a tenant and a subject (issue 11): a qualified `tenant/id` is split.
        subject_ref = qualified_ref(request.subject_id)
        tenant = subject_ref.tenant if subject_ref else None
        subject_id = subject_ref.id if subject_ref else request.subject_id
        scope = (
            idempotency_scope(tenant, subject_id, request.idempotency_key, incarnation)
            if request.idempotency_key is not None
            else None
        )
        retry_of: str | None = None
        run_scope = scope
        if scope is not None:
            existing = self._run_for_scope(scope, request.idempotency_key or "", fingerprint)
            if existing is not None and not existing.answerless:
                return existing, None
            if existing is not None:
                # Its run ended without an answer (interrupted, or failed): the key's
                # retry is a new run, under the next attempt's scope.
                retry_of, run_scope = existing.run_id, retry_scope(scope, existing.attempt + 1)
        started = self.now()
        known_at = (request.known_at or started).astimezone(UTC)
        run_id = "run-" + uuid4().hex
        run_props: dict[str, Any] = {
            "command": request.command,
            "question": request.question,
            "tenant": tenant,
            "subject_id": subject_id,
            "purpose": request.purpose,
            "service": request.service,
            "as_of": _iso(request.as_of),
            "known_at": _iso(known_at),
            "known_at_given": request.known_at is not None,
            "started_at": _iso(started),
            "idempotency_key": request.idempotency_key,
            "idempotency_scope": run_scope,
            "retry_of": retry_of,
            "request_fingerprint": fingerprint,
            "payload": payload_json(request),
            "agent": _software_agent(),
            "decision_code": decision_code(),
        }
        if incarnation is not None:
            run_props["subject_incarnation"] = incarnation
        if request.as_of_given is not None:
            run_props["as_of_given"] = request.as_of_given
        # Where as_of came from, for an auditor: recorded (and hashed) only when said, so a
        # run without them records what it did before (docs/context-graph.md).
        for name in ("as_of_from", "as_of_words", "time_note"):
            if (said := getattr(request, name)) is not None:
                run_props[name] = said
        agent_props: dict[str, Any] = {
            "agent_id": _software_agent(),
            "agent_type": "prov:SoftwareAgent",
            # A KG principal, tenant-qualified when known: a reference, not an edge.
            "on_behalf_of": str(subject_ref) if subject_ref else request.subject_id,
        }
        head = _Head(-1, GENESIS_HASH, None)
        chained = _chain(
            run_id, head, [_Node(CtxKind.RUN, run_props), _Node(CtxKind.AGENT, agent_props)]
        )
        start = RunStart(
            run_id=run_id,
            created=True,
            status=RunStatus.INCOMPLETE,
            started_at=started,
            known_at=known_at,
            head_seq=head.seq,
            head_hash=head.hash,
            head_kind=head.kind,
            retry_of=retry_of,
        )

        def write() -> None:
            self._write(lambda tx: _store(tx, run_id, chained, head))

        if in_background and scope is None:
            return start, self._writer().submit(write)
        try:
            write()
        except ConstraintError:
            # Another process opened a run with the same key (or the same retry of it)
            # between our look-up and write: that run is the key's, running or finished.
            if scope is not None:
                existing = self._run_for_scope(scope, request.idempotency_key or "", fingerprint)
                if existing is not None:
                    return existing, None
            raise
        return start, None

    def _writer(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._write_pool is None:
                self._write_pool = ThreadPoolExecutor(
                    max_workers=WRITERS, thread_name_prefix="ctx-write"
                )
            return self._write_pool

    def _run_for_scope(self, scope: str, key: str, fingerprint: str) -> RunStart | None:
        """The key's latest run (its first, or the latest retry of it), if any."""
        records, _, _ = self.driver.execute_query(
            _RUNS_BY_SCOPE,
            stem=scope[:-1],
            database_=self.database,
            routing_=neo4j.RoutingControl.READ,
        )
        runs = [(n, r) for r in records if (n := _attempt(str(r["scope"]), scope)) is not None]
        if not runs:
            return None
        attempt, rec = max(runs, key=lambda run: run[0])
        if rec["fingerprint"] != fingerprint:
            raise BadInput(
                f"idempotency key {key!r} was already used for a different request "
                f"(run {rec['run_id']})"
            )
        return RunStart(
            run_id=rec["run_id"],
            created=False,
            status=RunStatus(rec["status"]),
            started_at=datetime.fromisoformat(rec["started_at"]),
            known_at=datetime.fromisoformat(rec["known_at"]),
            attempt=attempt,
        )

    def open_log(self, start: RunStart, written: Future[None] | None = None) -> RunLog:
        """The batched writer of a run this recorder just started (`written`: the start's
        write from `begin_run`, still in flight)."""
        if not start.created or start.head_seq is None or start.head_hash is None:
            raise RecorderError(f"run {start.run_id} was not started by this recorder")
        head = _Head(start.head_seq, start.head_hash, start.head_kind)
        return RunLog(self, start.run_id, head, written)

    # -- one step per transaction --------------------------------------------------------

    def record_goal(self, run_id: str, goal: BaseModel) -> int:
        """Record the goal the run pursues; returns its seq."""
        return self._append(run_id, lambda tx: [_goal_node(goal)])[0]

    def record_plan(self, run_id: str, plan: BaseModel) -> int:
        """Record a query plan, derived from the latest goal; returns its seq."""
        return self._append(
            run_id, lambda tx: [_plan_node(plan, self._latest(tx, run_id, CtxKind.GOAL))]
        )[0]

    def record_tool_call(self, run_id: str, call: ToolCallRecord) -> int:
        """Record one executed template call, which used the latest plan; returns its seq."""

        def build(tx: neo4j.ManagedTransaction) -> list[_Node]:
            if self._tool_call_seq(tx, run_id, call.tool_call_id) is not None:
                raise RecorderError(f"tool call {call.tool_call_id} is already recorded")
            return [_tool_call_node(call, self._latest(tx, run_id, CtxKind.PLAN))]

        return self._append(run_id, build)[0]

    def record_evidence(self, run_id: str, evidence: BaseModel, tool_call_id: str) -> int:
        """Record one admitted Evidence, generated by the recorded tool call it came from."""

        def build(tx: neo4j.ManagedTransaction) -> list[_Node]:
            data = evidence.model_dump(mode="json")
            evidence_id = _text(data.get("evidence_id"))
            if evidence_id is None:
                raise RecorderError("evidence without an evidence_id cannot be recorded")
            tc_seq = self._tool_call_seq(tx, run_id, tool_call_id)
            if tc_seq is None:
                raise RecorderError(
                    f"evidence {evidence_id} names tool call {tool_call_id}, "
                    "which this run has not recorded"
                )
            if self._evidence_seqs(tx, run_id, [evidence_id]):
                raise RecorderError(f"evidence {evidence_id} is already recorded in this run")
            return [_evidence_node(data, type(evidence).__name__, tool_call_id, tc_seq)]

        return self._append(run_id, build)[0]

    def record_rejection(
        self, run_id: str, rejection: BaseModel, tool_call_id: str | None = None
    ) -> int:
        """Record a rejected candidate with its reason (and replacement), from its tool call."""

        def build(tx: neo4j.ManagedTransaction) -> list[_Node]:
            data = rejection.model_dump(mode="json")
            tc_id = tool_call_id or _text(data.get("tool_call_id"))
            tc_seq = self._tool_call_seq(tx, run_id, tc_id) if tc_id else None
            return [_rejection_node(data, type(rejection).__name__, tc_id, tc_seq)]

        return self._append(run_id, build)[0]

    def record_pack(self, run_id: str, pack: BaseModel) -> int:
        """Record the Context Pack (its canonical JSON and pack_hash), derived from its evidence."""

        def build(tx: neo4j.ManagedTransaction) -> list[_Node]:
            data = pack.model_dump(mode="json")
            ids = _pack_evidence_ids(data)
            seqs = self._evidence_seqs(tx, run_id, ids)
            return [_checked_pack(data, type(pack).__name__, ids, seqs)]

        return self._append(run_id, build)[0]

    def record_claims(self, run_id: str, claims: list[BaseModel]) -> list[int]:
        """Record the claims (one transaction), each derived from the pack and its evidence."""

        def build(tx: neo4j.ManagedTransaction) -> list[_Node]:
            pack_seq = self._latest(tx, run_id, CtxKind.PACK)
            nodes = []
            for claim in claims:
                data = claim.model_dump(mode="json")
                ids = list(dict.fromkeys(_strings_in_order(data.get("evidence_ids"))))
                seqs = self._evidence_seqs(tx, run_id, ids)
                nodes.append(_checked_claim(data, type(claim).__name__, ids, seqs, pack_seq))
            return nodes

        return self._append(run_id, build)

    def finish_run(
        self,
        run_id: str,
        status: RunStatus | str,
        stop_reason: str | None,
        result: BaseModel | None = None,
    ) -> int:
        """Close the run: append its outcome and set its status. Only this marks it finished.

        `result` (optional) is the answer as the command printed it, kept so that an
        idempotent retry can print the original answer again.
        """
        final = _final_status(status)
        node = _outcome_node(final, stop_reason, self.now(), result)
        return self._append(run_id, lambda tx: [node], final_status=final)[0]

    def anchor(self, run_id: str) -> None:
        """Anchor a finished run's head in its tenant's ledger in a transaction of its own
        (a finish anchors in its own transaction; this is for a run that was not anchored).

        The answer stands without it: a failure is logged, and `investigator verify` then
        reports the run as `run_unanchored`.
        """
        try:
            anchor_run(self.driver, run_id, database=self.database)
        except (OSError, neo4j.exceptions.Neo4jError, LedgerError) as exc:
            logging.getLogger(__name__).warning("run %s not anchored: %s", run_id, exc)

    # -- the write machinery ------------------------------------------------------------

    def _write(self, work: Callable[[neo4j.ManagedTransaction], Any]) -> Any:
        with self.driver.session(database=self.database) as session:
            return session.execute_write(work)

    def _append(
        self,
        run_id: str,
        build: Callable[[neo4j.ManagedTransaction], list[_Node]],
        final_status: RunStatus | None = None,
    ) -> list[int]:
        def chain(tx: neo4j.ManagedTransaction, locked: _Head) -> _Chained:
            return _chain(run_id, locked, _stamped(build(tx), self.now())), locked

        return [props["seq"] for _, props in self._commit(run_id, chain, final_status)]

    def _commit(self, run_id: str, chain: _ChainFn, final_status: RunStatus | None) -> _Nodes:
        """One write transaction: lock the run's head, chain and store the nodes; when
        `final_status` is given, set it and anchor the run in its tenant's ledger, all in
        the same transaction, so a run is never finished but unanchored, nor the reverse.

        A run that cannot be anchored (no chain key, repeated ledger races) still finishes,
        with a warning; `investigator verify` then reports it as `run_unanchored`.
        """
        self.ensure_schema()
        if final_status is not None:
            try:
                key = load_chain_key()
            except OSError as exc:
                logging.getLogger(__name__).warning("run %s not anchored: %s", run_id, exc)
            else:
                for attempt in range(3):
                    try:
                        return self._commit_once(run_id, chain, final_status, (key,))
                    except ConstraintError as exc:
                        # Two finishes of one tenant raced for a ledger seq: the loser retries.
                        if attempt == 2:
                            logging.getLogger(__name__).warning(
                                "run %s not anchored: %s", run_id, exc
                            )
        return self._commit_once(run_id, chain, final_status, None)

    def _commit_once(
        self,
        run_id: str,
        chain: _ChainFn,
        final_status: RunStatus | None,
        anchoring: tuple[ChainKey | None] | None,
    ) -> _Nodes:
        at = _iso(datetime.now(UTC))

        def work(tx: neo4j.ManagedTransaction) -> tuple[_Nodes, Anchor | None, str]:
            if anchoring is None:
                locked = _Locked(tx.run(_LOCK_HEAD, run_id=run_id).single(), run_id)
            else:
                record = tx.run(
                    _LOCK_HEAD_AND_LEDGER,
                    run_id=run_id,
                    no_tenant=NO_TENANT,
                    genesis=GENESIS_HASH,
                    at=at,
                ).single()
                locked = _Locked(record, run_id)
            chained, head = chain(tx, locked.head)
            anchor = head_mac = None
            if anchoring is not None and chained and final_status is not None:
                anchor, head_mac = new_anchor(
                    tenant=locked.tenant,
                    ledger_seq=int(locked.ledger_seq if locked.ledger_seq is not None else -1),
                    ledger_hash=str(locked.ledger_hash),
                    run_id=run_id,
                    subject_id=locked.subject_id,
                    subject_incarnation=locked.subject_incarnation,
                    run_head_seq=head.seq,
                    run_head_hash=head.hash,
                    run_status=final_status.value,
                    key=anchoring[0],
                    anchored_at=at,
                )
            _store(tx, run_id, chained, head, final_status, anchor, head_mac)
            return chained, anchor, locked.store

        chained, anchor, store = self._write(work)
        if anchor is not None and anchoring is not None:
            remember_anchor(anchoring[0], store, anchor)  # after the commit: never rolled back
        return chained

    # -- look-ups inside the write transaction ------------------------------------------

    @staticmethod
    def _latest(tx: neo4j.ManagedTransaction, run_id: str, kind: CtxKind) -> int | None:
        rec = tx.run(_LATEST_OF_KIND, run_id=run_id, kind=kind.value).single()
        value = rec["seq"] if rec else None
        return value if isinstance(value, int) else None

    @staticmethod
    def _tool_call_seq(tx: neo4j.ManagedTransaction, run_id: str, tool_call_id: str) -> int | None:
        rec = tx.run(_TOOL_CALL_SEQ, run_id=run_id, tool_call_id=tool_call_id).single()
        return rec["seq"] if rec else None

    @staticmethod
    def _evidence_seqs(tx: neo4j.ManagedTransaction, run_id: str, ids: list[str]) -> dict[str, int]:
        if not ids:
            return {}
        return {r["id"]: r["seq"] for r in tx.run(_EVIDENCE_SEQS, run_id=run_id, ids=ids)}


def _checked_pack(
    data: dict[str, Any], model: str, ids: list[str], seqs: Mapping[str, int]
) -> _Node:
    if _text(data.get("pack_hash")) is None:
        raise RecorderError("a pack without a pack_hash cannot be recorded")
    missing = [i for i in ids if i not in seqs]
    if missing:
        raise RecorderError(f"pack holds evidence this run has not recorded: {missing}")
    return _pack_node(data, model, ids, [seqs[i] for i in ids])


def _checked_claim(
    data: dict[str, Any],
    model: str,
    ids: list[str],
    seqs: Mapping[str, int],
    pack_seq: int | None,
) -> _Node:
    missing = [i for i in ids if i not in seqs]
    if missing:
        raise RecorderError(
            f"claim {data.get('claim_id')} cites evidence this run has not recorded: {missing}"
        )
    return _claim_node(data, model, ids, [seqs[i] for i in ids], pack_seq)


class _Snapshot(NamedTuple):
    """Pending nodes handed to a write: the nodes, the head written before them, their last."""

    nodes: list[tuple[CtxKind, dict[str, Any]]]
    written: _Head
    head: _Head


class RunLog:
    """One run's lineage, chained in memory and written in a few transactions.

    Every `add_*` checks the lineage would be whole (the same checks as the `record_*`
    methods) and returns the node's seq; nothing reaches the database until `flush` or
    `finish`. The run must not be appended to by anyone else meanwhile (checked at flush).
    """

    def __init__(
        self,
        recorder: RunRecorder,
        run_id: str,
        head: _Head,
        started: Future[None] | None = None,
    ) -> None:
        self.recorder = recorder
        self.run_id = run_id
        self._started = started  # the run's own write, when still in flight
        self._head = head  # the last node chained (written or not)
        self._written = _Head(head.seq, head.hash, head.kind)
        self._pending: list[tuple[CtxKind, dict[str, Any]]] = []
        self._latest: dict[CtxKind, int] = {}
        self._tool_calls: dict[str, int] = {}
        self._evidence: dict[str, int] = {}
        # The background flush in flight (`flush_in_background`) and what it writes.
        self._flushing: tuple[Future[None], _Snapshot] | None = None
        self.transactions = 0

    def _add(self, node: _Node) -> int:
        chained = _chain(self.run_id, self._head, _stamped([node], self.recorder.now()))
        self._pending.extend(chained)
        seq = self._head.seq
        self._latest[node.kind] = seq
        return seq

    def add_goal(self, goal: BaseModel) -> int:
        """Append the goal the run pursues."""
        return self._add(_goal_node(goal))

    def add_plan(self, plan: BaseModel) -> int:
        """Append a query plan, derived from the latest goal."""
        return self._add(_plan_node(plan, self._latest.get(CtxKind.GOAL)))

    def add_tool_call(self, call: ToolCallRecord, hits: Sequence[str] | None = None) -> int:
        """Append one executed template call, which used the latest plan; `hits`: the
        records its rows name (`tool_call_hits`), kept when the run keeps no other record
        of them (a runbook search's fulltext reads)."""
        if call.tool_call_id in self._tool_calls:
            raise RecorderError(f"tool call {call.tool_call_id} is already recorded")
        seq = self._add(_tool_call_node(call, self._latest.get(CtxKind.PLAN), hits))
        self._tool_calls[call.tool_call_id] = seq
        return seq

    def add_evidence(self, evidence: BaseModel, tool_call_id: str) -> int:
        """Append one admitted Evidence, generated by the tool call it came from."""
        data = evidence.model_dump(mode="json")
        evidence_id = _text(data.get("evidence_id"))
        if evidence_id is None:
            raise RecorderError("evidence without an evidence_id cannot be recorded")
        tc_seq = self._tool_calls.get(tool_call_id)
        if tc_seq is None:
            raise RecorderError(
                f"evidence {evidence_id} names tool call {tool_call_id}, "
                "which this run has not recorded"
            )
        if evidence_id in self._evidence:
            raise RecorderError(f"evidence {evidence_id} is already recorded in this run")
        seq = self._add(_evidence_node(data, type(evidence).__name__, tool_call_id, tc_seq))
        self._evidence[evidence_id] = seq
        return seq

    def add_rejection(self, rejection: BaseModel) -> int:
        """Append a rejected candidate with its reason, from its tool call."""
        data = rejection.model_dump(mode="json")
        tc_id = _text(data.get("tool_call_id"))
        tc_seq = self._tool_calls.get(tc_id) if tc_id else None
        return self._add(_rejection_node(data, type(rejection).__name__, tc_id, tc_seq))

    def add_pack(self, pack: BaseModel) -> int:
        """Append the Context Pack, derived from its (recorded) evidence."""
        data = pack.model_dump(mode="json")
        ids = _pack_evidence_ids(data)
        return self._add(_checked_pack(data, type(pack).__name__, ids, self._evidence))

    def add_claims(self, claims: Iterable[BaseModel]) -> list[int]:
        """Append the claims, each derived from the pack and the evidence it cites."""
        seqs = []
        for claim in claims:
            data = claim.model_dump(mode="json")
            ids = list(dict.fromkeys(_strings_in_order(data.get("evidence_ids"))))
            node = _checked_claim(
                data, type(claim).__name__, ids, self._evidence, self._latest.get(CtxKind.PACK)
            )
            seqs.append(self._add(node))
        return seqs

    def flush(self) -> None:
        """Write what is pending in one transaction (nothing pending: nothing written)."""
        self._wait_flushed()
        self._wait_started()
        self._commit(None)

    def flush_in_background(self) -> None:
        """Send what is pending to the recorder's writer thread in one transaction and return
        (the run's next reads overlap it); the next flush or the finish waits for it first,
        and if it failed, raises its error with its nodes pending again, as `flush` would."""
        self._wait_flushed()
        self._wait_started()
        if not self._pending:
            return
        snapshot = self._snapshot()
        self._pending = []
        future = self.recorder._writer().submit(self._write_snapshot, snapshot)
        self._flushing = (future, snapshot)

    def finish(
        self, status: RunStatus | str, stop_reason: str | None, result: BaseModel | None = None
    ) -> int:
        """Append the outcome and write it with everything pending, setting the status."""
        final = _final_status(status)
        self._wait_flushed()  # before the outcome: a failed flush's nodes come back first
        head = _Head(self._head.seq, self._head.hash, self._head.kind)
        pending, latest = len(self._pending), self._latest.get(CtxKind.OUTCOME)
        seq = self._add(_outcome_node(final, stop_reason, self.recorder.now(), result))
        try:
            self._wait_started()
            self._commit(final)  # anchors the run in the same transaction
        except BaseException:
            # Not written (or not known to be): the outcome is taken back, so the finish that
            # follows (a Ctrl-C's `failed`) is the run's one outcome, not a second after it.
            self._head.seq, self._head.hash, self._head.kind = head.seq, head.hash, head.kind
            del self._pending[pending:]
            if latest is None:
                self._latest.pop(CtxKind.OUTCOME, None)
            else:
                self._latest[CtxKind.OUTCOME] = latest
            raise
        return seq

    def _wait_started(self) -> None:
        """The run's nodes follow the run: its own write must have committed (or failed)."""
        started, self._started = self._started, None
        if started is not None:
            started.result()

    def _wait_flushed(self) -> None:
        """The background flush in flight, if any, has committed (its nodes are written) or
        failed (they are pending again, before the ones added since, and its error raised).
        Cut off while waiting (Ctrl-C), it stays in flight: the next write waits again."""
        if self._flushing is None:
            return
        future, snapshot = self._flushing
        try:
            future.result()
        except Exception:
            self._flushing = None
            self._pending = snapshot.nodes + self._pending
            raise
        self._flushing = None
        self._written = snapshot.head
        self.transactions += 1

    def _snapshot(self) -> _Snapshot:
        """The pending nodes and the heads they go between, copied: the writer's own."""
        head = self._head
        return _Snapshot(
            list(self._pending),
            _Head(self._written.seq, self._written.hash, self._written.kind),
            _Head(head.seq, head.hash, head.kind),
        )

    def _write_snapshot(self, snapshot: _Snapshot, final_status: RunStatus | None = None) -> None:
        run_id, written = self.run_id, snapshot.written

        def chain(tx: neo4j.ManagedTransaction, stored: _Head) -> _Chained:
            if stored.seq != written.seq or stored.hash != written.hash:
                raise RecorderError(
                    f"run {run_id} was appended to by another writer (head seq {stored.seq})"
                )
            head = snapshot.head
            return snapshot.nodes, _Head(head.seq, head.hash, head.kind)

        self.recorder._commit(run_id, chain, final_status)

    def _commit(self, final_status: RunStatus | None) -> None:
        if not self._pending:
            return
        snapshot = self._snapshot()
        self._write_snapshot(snapshot, final_status)
        self.transactions += 1
        self._pending = []
        self._written = snapshot.head
