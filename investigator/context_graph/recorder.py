"""The Context Graph's own write path: `RunRecorder` (docs/contracts.md section 3).

Every call appends one or more hash-chained Ctx nodes, and their PROV relationships, in
its own write transaction: a crash between two calls leaves a valid prefix of the lineage
with the run still `incomplete`, never a half-written node. Only `finish_run` changes the
run's status. The recorder writes `Ctx*` labels only and never matches a KG label;
references to the Knowledge Graph are ids and hashes in properties.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from importlib import metadata
from typing import Any
from uuid import uuid4

import neo4j
from neo4j.exceptions import ConstraintError
from pydantic import BaseModel

from investigator.context_graph.chain import (
    canonical_json,
    node_hash,
    request_fingerprint,
)
from investigator.context_graph.models import (
    EVENT_LABEL,
    FINISHED_STATUSES,
    GENESIS_HASH,
    KIND_LABELS,
    CtxKind,
    ProvRelation,
    RunRequest,
    RunStart,
    RunStatus,
    ToolCallRecord,
)
from investigator.errors import BadInput, InvestigatorError

CTX_DATABASE_ENV = "INVESTIGATOR_CTX_DATABASE"

# Idempotent: `IF NOT EXISTS`. Community Edition supports (composite) uniqueness.
CONSTRAINTS: tuple[str, ...] = (
    "CREATE CONSTRAINT ctx_event_seq IF NOT EXISTS "
    "FOR (n:CtxEvent) REQUIRE (n.run_id, n.seq) IS UNIQUE",
    "CREATE CONSTRAINT ctx_event_id IF NOT EXISTS FOR (n:CtxEvent) REQUIRE n.ctx_id IS UNIQUE",
    "CREATE CONSTRAINT ctx_run_id IF NOT EXISTS FOR (n:CtxRun) REQUIRE n.run_id IS UNIQUE",
    "CREATE CONSTRAINT ctx_run_idempotency IF NOT EXISTS "
    "FOR (n:CtxRun) REQUIRE n.idempotency_key IS UNIQUE",
    "CREATE CONSTRAINT ctx_tool_call_id IF NOT EXISTS "
    "FOR (n:CtxToolCall) REQUIRE (n.run_id, n.tool_call_id) IS UNIQUE",
    "CREATE CONSTRAINT ctx_evidence_id IF NOT EXISTS "
    "FOR (n:CtxEvidence) REQUIRE (n.run_id, n.evidence_id) IS UNIQUE",
    "CREATE INDEX ctx_event_run IF NOT EXISTS FOR (n:CtxEvent) ON (n.run_id)",
    "CREATE INDEX ctx_run_started IF NOT EXISTS FOR (n:CtxRun) ON (n.started_at)",
)


# Labels and relationship types are chosen from closed enums, never from input: one
# statement per kind creates the node and its PROV relationships and moves the run's head
# (one round trip per node; every value is a parameter).
def _edge_block(rel: ProvRelation, outgoing: bool) -> str:
    pattern = "(n)-[:" + rel.value + "]->(m)" if outgoing else "(m)-[:" + rel.value + "]->(n)"
    source = "$out" if outgoing else "$into"
    return (
        "CALL (n) { UNWIND " + source + " AS e WITH e WHERE e[0] = '" + rel.value + "' "
        "MATCH (m:CtxEvent {run_id: n.run_id, seq: e[1]}) CREATE " + pattern + " } "
    )


_EDGE_BLOCKS = "".join(_edge_block(rel, out) for rel in ProvRelation for out in (True, False))
_CREATE_NODE: dict[CtxKind, str] = {
    kind: (
        "CREATE (n:"
        + EVENT_LABEL
        + ":"
        + label
        + ") SET n = $props WITH n "
        + _EDGE_BLOCKS
        + "WITH n MATCH (r:CtxRun {run_id: n.run_id}) "
        "SET r.head_seq = n.seq, r.head_hash = n.hash, r.head_kind = n.kind "
        "RETURN n.seq AS seq"
    )
    for kind, label in KIND_LABELS.items()
}
# Taking the run's head under a write lock serialises appends to one run (a real property
# write takes the node's lock until commit; setting a property to its own value does not).
_LOCK_HEAD = (
    "MATCH (r:CtxRun {run_id: $run_id}) SET r.append_lock = true REMOVE r.append_lock "
    "RETURN r.head_seq AS seq, r.head_hash AS hash, r.head_kind AS kind, r.status AS status"
)
_LATEST_OF_KIND = "MATCH (n:CtxEvent {run_id: $run_id, kind: $kind}) RETURN max(n.seq) AS seq"
_TOOL_CALL_SEQ = (
    "MATCH (n:CtxToolCall {run_id: $run_id, tool_call_id: $tool_call_id}) RETURN n.seq AS seq"
)
_EVIDENCE_SEQS = (
    "UNWIND $ids AS id MATCH (n:CtxEvidence {run_id: $run_id, evidence_id: id}) "
    "RETURN n.evidence_id AS id, n.seq AS seq"
)
_RUN_BY_KEY = (
    "MATCH (r:CtxRun {idempotency_key: $key}) "
    "RETURN r.run_id AS run_id, r.request_fingerprint AS fingerprint, r.status AS status, "
    "r.started_at AS started_at, r.known_at AS known_at"
)
_OUTCOME_RESULT = "MATCH (o:CtxOutcome {run_id: $run_id}) RETURN o.result AS result"
_RUN_STATUS = "MATCH (r:CtxRun {run_id: $run_id}) SET r.status = $status"


class RecorderError(InvestigatorError):
    """The recorder was asked to write a lineage that would not be whole (exit 1)."""


def ctx_database_from_env(default: str | None = None) -> str | None:
    """The database of the Context Graph: `INVESTIGATOR_CTX_DATABASE`, else `default`."""
    value = os.environ.get(CTX_DATABASE_ENV, "").strip()
    return value or default


def _software_agent() -> str:
    try:
        return "investigator/" + metadata.version("graph-investigator")
    except metadata.PackageNotFoundError:
        return "investigator/unknown"


def _iso(value: datetime) -> str:
    # Fixed width (always microseconds), so that the strings sort as the instants do.
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return sorted({v for v in value if isinstance(v, str)})
    return []


def _pack_evidence_ids(pack: Mapping[str, Any]) -> list[str]:
    """Evidence ids a pack holds: `evidence_ids`, or the ids of its `evidence` items."""
    ids: list[str] = list(_strings(pack.get("evidence_ids")))
    for item in pack.get("evidence") or []:
        if isinstance(item, Mapping) and isinstance(item.get("evidence_id"), str):
            ids.append(item["evidence_id"])
        elif isinstance(item, str):
            ids.append(item)
    return list(dict.fromkeys(ids))


class _Pending:
    """A node to append: its kind, its own properties and the edges it starts."""

    def __init__(
        self,
        kind: CtxKind,
        props: dict[str, Any],
        edges: Iterable[tuple[ProvRelation, int]] = (),
        edges_into: Iterable[tuple[int, ProvRelation]] = (),
    ) -> None:
        self.kind = kind
        self.props = props
        self.edges = list(edges)
        self.edges_into = list(edges_into)


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

    # -- schema -----------------------------------------------------------------------

    def ensure_schema(self) -> None:
        """Create the Ctx uniqueness constraints and indexes (idempotent, once per recorder)."""
        with self._lock:
            if self._schema_ready:
                return
            for statement in CONSTRAINTS:
                self.driver.execute_query(statement, database_=self.database)
            self._schema_ready = True

    # -- the run ------------------------------------------------------------------------

    def start_run(self, request: RunRequest) -> RunStart:
        """Open a run (status `incomplete`), or return the original run of an idempotency key.

        The same key with the same request (fingerprint = canonical hash of the request
        without the key) answers the original run with `created=False`; the same key with a
        different request is BadInput (exit 2).
        """
        self.ensure_schema()
        fingerprint = request_fingerprint(request)
        if request.idempotency_key is not None:
            existing = self._run_for_key(request.idempotency_key, fingerprint)
            if existing is not None:
                return existing
        started = self._clock().astimezone(UTC)
        known_at = (request.known_at or started).astimezone(UTC)
        run_id = "run-" + uuid4().hex
        run_props: dict[str, Any] = {
            "command": request.command,
            "question": request.question,
            "subject_id": request.subject_id,
            "purpose": request.purpose,
            "service": request.service,
            "as_of": _iso(request.as_of),
            "known_at": _iso(known_at),
            "known_at_given": request.known_at is not None,
            "started_at": _iso(started),
            "idempotency_key": request.idempotency_key,
            "request_fingerprint": fingerprint,
            "payload": canonical_json(request),
            "agent": _software_agent(),
        }
        agent_props: dict[str, Any] = {
            "agent_id": _software_agent(),
            "agent_type": "prov:SoftwareAgent",
            "on_behalf_of": request.subject_id,  # a KG principal id: a reference, not an edge
        }

        def work(tx: neo4j.ManagedTransaction) -> None:
            self._write_nodes(
                tx,
                run_id,
                head=None,
                pending=[
                    _Pending(CtxKind.RUN, run_props),
                    _Pending(
                        CtxKind.AGENT,
                        agent_props,
                        edges_into=[(0, ProvRelation.WAS_ASSOCIATED_WITH)],
                    ),
                ],
            )

        try:
            self._write(work)
        except ConstraintError:
            # Another process opened a run with the same key between our look-up and write.
            if request.idempotency_key is not None:
                existing = self._run_for_key(request.idempotency_key, fingerprint)
                if existing is not None:
                    return existing
            raise
        return RunStart(
            run_id=run_id,
            created=True,
            status=RunStatus.INCOMPLETE,
            started_at=started,
            known_at=known_at,
        )

    def _run_for_key(self, key: str, fingerprint: str) -> RunStart | None:
        records, _, _ = self.driver.execute_query(
            _RUN_BY_KEY,
            key=key,
            database_=self.database,
            routing_=neo4j.RoutingControl.READ,
        )
        if not records:
            return None
        rec = records[0]
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
        )

    # -- the steps ----------------------------------------------------------------------

    def record_goal(self, run_id: str, goal: BaseModel) -> int:
        """Record the goal the run pursues; returns its seq."""
        return self._append_one(run_id, lambda tx: self._goal(goal))

    def _goal(self, goal: BaseModel) -> _Pending:
        return _Pending(
            CtxKind.GOAL,
            {"model": type(goal).__name__, "payload": canonical_json(goal)},
            edges=[(ProvRelation.WAS_GENERATED_BY, 0)],
        )

    def record_plan(self, run_id: str, plan: BaseModel) -> int:
        """Record a query plan, derived from the latest goal; returns its seq."""

        def build(tx: neo4j.ManagedTransaction) -> _Pending:
            goal_seq = self._latest(tx, run_id, CtxKind.GOAL)
            data = _dump(plan)
            edges = [(ProvRelation.WAS_GENERATED_BY, 0)]
            if goal_seq is not None:
                edges.append((ProvRelation.WAS_DERIVED_FROM, goal_seq))
            return _Pending(
                CtxKind.PLAN,
                {
                    "model": type(plan).__name__,
                    "plan_id": _text(data.get("plan_id")),
                    "goal_seq": goal_seq,
                    "payload": canonical_json(data),
                },
                edges=edges,
            )

        return self._append_one(run_id, build)

    def record_tool_call(self, run_id: str, call: ToolCallRecord) -> int:
        """Record one executed template call, which used the latest plan; returns its seq."""

        def build(tx: neo4j.ManagedTransaction) -> _Pending:
            if self._tool_call_seq(tx, run_id, call.tool_call_id) is not None:
                raise RecorderError(f"tool call {call.tool_call_id} is already recorded")
            plan_seq = self._latest(tx, run_id, CtxKind.PLAN)
            edges = [(ProvRelation.WAS_INFORMED_BY, 0)]
            if plan_seq is not None:
                edges.append((ProvRelation.USED, plan_seq))
            return _Pending(
                CtxKind.TOOL_CALL,
                {
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
                    "error": call.error,
                    "round": call.round,
                    "evidence_type": call.evidence_type,
                    "plan_seq": plan_seq,
                    "payload": canonical_json(call),
                },
                edges=edges,
            )

        return self._append_one(run_id, build)

    def record_evidence(self, run_id: str, evidence: BaseModel, tool_call_id: str) -> int:
        """Record one admitted Evidence, generated by the recorded tool call it came from."""

        def build(tx: neo4j.ManagedTransaction) -> _Pending:
            data = _dump(evidence)
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
            element_ids = _strings(data.get("element_ids")) or _strings(data.get("element_id"))
            return _Pending(
                CtxKind.EVIDENCE,
                {
                    "model": type(evidence).__name__,
                    "evidence_id": evidence_id,
                    "tool_call_id": tool_call_id,
                    "tool_call_seq": tc_seq,
                    "content_hash": _text(data.get("content_hash")),
                    "source_id": _text(data.get("source_id")),
                    "source_version": _text(str(data["source_version"]))
                    if data.get("source_version") is not None
                    else None,
                    "locator": _text(data.get("locator")),
                    "element_ids": element_ids,
                    "payload": canonical_json(data),
                },
                edges=[(ProvRelation.WAS_GENERATED_BY, tc_seq)],
            )

        return self._append_one(run_id, build)

    def record_rejection(
        self, run_id: str, rejection: BaseModel, tool_call_id: str | None = None
    ) -> int:
        """Record a rejected candidate with its reason (and replacement), from its tool call."""

        def build(tx: neo4j.ManagedTransaction) -> _Pending:
            data = _dump(rejection)
            tc_id = tool_call_id or _text(data.get("tool_call_id"))
            tc_seq = self._tool_call_seq(tx, run_id, tc_id) if tc_id else None
            return _Pending(
                CtxKind.REJECTION,
                {
                    "model": type(rejection).__name__,
                    "candidate_id": _text(data.get("candidate_id")),
                    "reason": _text(data.get("reason")),
                    "replacement": _text(data.get("replacement")),
                    "tool_call_id": tc_id,
                    "tool_call_seq": tc_seq,
                    "payload": canonical_json(data),
                },
                edges=[(ProvRelation.WAS_GENERATED_BY, tc_seq if tc_seq is not None else 0)],
            )

        return self._append_one(run_id, build)

    def record_pack(self, run_id: str, pack: BaseModel) -> int:
        """Record the Context Pack (its canonical JSON and pack_hash), derived from its evidence."""

        def build(tx: neo4j.ManagedTransaction) -> _Pending:
            data = _dump(pack)
            pack_hash = _text(data.get("pack_hash"))
            if pack_hash is None:
                raise RecorderError("a pack without a pack_hash cannot be recorded")
            ids = _pack_evidence_ids(data)
            seqs = self._evidence_seqs(tx, run_id, ids)
            missing = [i for i in ids if i not in seqs]
            if missing:
                raise RecorderError(f"pack holds evidence this run has not recorded: {missing}")
            ev_seqs = [seqs[i] for i in ids]
            return _Pending(
                CtxKind.PACK,
                {
                    "model": type(pack).__name__,
                    "pack_id": _text(data.get("pack_id")),
                    "pack_hash": pack_hash,
                    "evidence_ids": ids,
                    "evidence_seqs": ev_seqs,
                    "payload": canonical_json(data),
                },
                edges=[(ProvRelation.WAS_GENERATED_BY, 0)]
                + [(ProvRelation.WAS_DERIVED_FROM, s) for s in ev_seqs],
            )

        return self._append_one(run_id, build)

    def record_claims(self, run_id: str, claims: list[BaseModel]) -> list[int]:
        """Record the claims (one transaction), each derived from the pack and its evidence."""

        def build(tx: neo4j.ManagedTransaction) -> list[_Pending]:
            pack_seq = self._latest(tx, run_id, CtxKind.PACK)
            pending = []
            for claim in claims:
                data = _dump(claim)
                ids = list(dict.fromkeys(_strings_in_order(data.get("evidence_ids"))))
                seqs = self._evidence_seqs(tx, run_id, ids)
                missing = [i for i in ids if i not in seqs]
                if missing:
                    raise RecorderError(
                        f"claim {data.get('claim_id')} cites evidence this run has not "
                        f"recorded: {missing}"
                    )
                ev_seqs = [seqs[i] for i in ids]
                edges = [(ProvRelation.WAS_GENERATED_BY, 0)]
                if pack_seq is not None:
                    edges.append((ProvRelation.WAS_DERIVED_FROM, pack_seq))
                edges += [(ProvRelation.WAS_DERIVED_FROM, s) for s in ev_seqs]
                confidence = data.get("confidence")
                pending.append(
                    _Pending(
                        CtxKind.CLAIM,
                        {
                            "model": type(claim).__name__,
                            "claim_id": _text(data.get("claim_id")),
                            "statement": _text(data.get("statement")),
                            "epistemic_status": _text(data.get("epistemic_status")),
                            "confidence": float(confidence)
                            if isinstance(confidence, (int, float))
                            else None,
                            "evidence_ids": ids,
                            "evidence_seqs": ev_seqs,
                            "pack_seq": pack_seq,
                            "payload": canonical_json(data),
                        },
                        edges=edges,
                    )
                )
            return pending

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
        final = RunStatus(status)
        if final not in FINISHED_STATUSES:
            raise RecorderError(f"finish_run needs a final status, not {final.value!r}")

        def build(tx: neo4j.ManagedTransaction) -> _Pending:
            return _Pending(
                CtxKind.OUTCOME,
                {
                    "status": final.value,
                    "stop_reason": stop_reason,
                    "finished_at": _iso(self._clock()),
                    "result": canonical_json(result) if result is not None else None,
                },
                edges=[(ProvRelation.WAS_GENERATED_BY, 0)],
            )

        seq = self._append_one(run_id, build, final_status=final)
        return seq

    def load_result(self, run_id: str) -> Any:
        """The `result` a finished run kept (parsed JSON), or None (unfinished, or none kept).

        For idempotent retries: the original answer is printed again, not recomputed.
        """
        records, _, _ = self.driver.execute_query(
            _OUTCOME_RESULT,
            run_id=run_id,
            database_=self.database,
            routing_=neo4j.RoutingControl.READ,
        )
        raw = records[0]["result"] if records else None
        return json.loads(raw) if isinstance(raw, str) else None

    # -- the write machinery ------------------------------------------------------------

    def _write(self, work: Callable[[neo4j.ManagedTransaction], Any]) -> Any:
        with self.driver.session(database=self.database) as session:
            return session.execute_write(work)

    def _append_one(
        self,
        run_id: str,
        build: Callable[[neo4j.ManagedTransaction], _Pending],
        final_status: RunStatus | None = None,
    ) -> int:
        return self._append(run_id, lambda tx: [build(tx)], final_status)[0]

    def _append(
        self,
        run_id: str,
        build: Callable[[neo4j.ManagedTransaction], list[_Pending]],
        final_status: RunStatus | None = None,
    ) -> list[int]:
        self.ensure_schema()

        def work(tx: neo4j.ManagedTransaction) -> list[int]:
            head = tx.run(_LOCK_HEAD, run_id=run_id).single()
            if head is None:
                raise RecorderError(f"run {run_id} is not recorded (start_run first)")
            if head["status"] != RunStatus.INCOMPLETE.value:
                raise RecorderError(f"run {run_id} is already {head['status']}; it is append-only")
            pending = build(tx)
            seqs = self._write_nodes(
                tx, run_id, head=(head["seq"], head["hash"], head["kind"]), pending=pending
            )
            if final_status is not None:
                tx.run(_RUN_STATUS, run_id=run_id, status=final_status.value).consume()
            return seqs

        result: list[int] = self._write(work)
        return result

    def _write_nodes(
        self,
        tx: neo4j.ManagedTransaction,
        run_id: str,
        head: tuple[int, str, str] | None,
        pending: list[_Pending],
    ) -> list[int]:
        seq, prev_hash, prev_kind = head if head is not None else (-1, GENESIS_HASH, None)
        seqs: list[int] = []
        for item in pending:
            seq += 1
            props = {k: v for k, v in item.props.items() if v is not None}
            props.update(
                run_id=run_id,
                seq=seq,
                kind=item.kind.value,
                ctx_id=f"{run_id}#{seq}",
                prev_hash=prev_hash,
            )
            if prev_kind is not None:
                props["prev_kind"] = prev_kind
            props["hash"] = node_hash(props, item.kind.value)
            if item.kind == CtxKind.RUN:
                props.update(status=RunStatus.INCOMPLETE.value)
            tx.run(
                _CREATE_NODE[item.kind],
                props=props,
                out=[[rel.value, target] for rel, target in item.edges],
                into=[[rel.value, source] for source, rel in item.edges_into],
            ).consume()
            prev_hash, prev_kind = props["hash"], item.kind.value
            seqs.append(seq)
        return seqs

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


def _strings_in_order(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    return [value] if isinstance(value, str) else []
