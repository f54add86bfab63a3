"""Sequence numbers, canonical hashes and the per-run hash chain of the Context Graph.

Every recorded node has `seq` (0, 1, 2, ... within its run), `prev_hash` (the hash of the
node before it, `GENESIS_HASH` for seq 0) and `hash` = sha256 over the canonical JSON of
all its other properties. Changing any recorded property, deleting a node or a relationship
breaks the chain at a place `verify_chain` names (run, seq, kind).

The chain hash covers what was recorded, timestamps included, because those are part of
what must be tamper-evident. The *deterministic* hashes (`rows_hash`,
`request_fingerprint`) never contain wall-clock values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from graph_schema.canonical import (
    canonical_json_offset_kept,
    plain_canonical_json,
    plain_offset_kept,
    sha256_text,
)
from investigator.context_graph.models import (
    EVENT_LABEL,
    FINISHED_STATUSES,
    GENESIS_HASH,
    KIND_LABELS,
    ChainProblem,
    ChainReport,
    CtxEdgeRecord,
    CtxKind,
    CtxNodeRecord,
    ProvRelation,
    RunLineage,
    RunRequest,
    RunStatus,
)

# The CtxRun node's bookkeeping: the only properties that change after they are written,
# kept out of the hash and checked against the chain instead.
RUN_BOOKKEEPING = frozenset({"status", "head_seq", "head_hash", "head_kind"})


def _jsonable(value: Any) -> Any:
    """Plain JSON values in the Context Graph form (offset kept, models as pydantic JSON)."""
    return plain_offset_kept(value)


# The Context Graph form of graph_schema/canonical.py: every chain hash, `rows_hash` and the
# request fingerprint read it, so runs recorded before that module still verify.
canonical_json = canonical_json_offset_kept


def sha256_of(value: Any) -> str:
    """`sha256:` + hex digest of the canonical JSON of `value`."""
    return sha256_text(canonical_json_offset_kept(value))


# Left out of the rows hash, because they change after the run without the KG as known at
# the run's `known_at` changing:
# - `score`: fulltext scores depend on index-wide statistics, which later records change;
# - `element.superseded_at`: a row is only visible while `known_at < superseded_at`, so at
#   `known_at` it is always "not yet superseded"; a later correction fills it in.
_ROW_FIELDS_NOT_HASHED = frozenset({"score"})
_ELEMENT_FIELDS_NOT_HASHED = frozenset({"superseded_at"})


def _row_for_hash(row: Any) -> Any:
    if not isinstance(row, Mapping):
        return row
    kept = {k: v for k, v in row.items() if k not in _ROW_FIELDS_NOT_HASHED}
    element = kept.get("element")
    if isinstance(element, Mapping):
        kept["element"] = {k: v for k, v in element.items() if k not in _ELEMENT_FIELDS_NOT_HASHED}
    return kept


def rows_hash(rows: Iterable[Any]) -> str:
    """The hash of a result's rows as known at the call's `known_at` (order-independent).

    Replay re-executes the call and compares this hash; see `_ROW_FIELDS_NOT_HASHED`.
    """
    # `_jsonable` leaves plain JSON data, which `canonical_json` would only walk again.
    serialised = sorted(plain_canonical_json(_row_for_hash(_jsonable(r))) for r in rows)
    return sha256_text("\n".join(serialised))


def evidence_digest(nodes: Iterable[CtxNodeRecord]) -> str:
    """What replay compares for a run without a pack: its evidence ids and content hashes."""
    return sha256_of(
        sorted(
            [str(n.properties.get("evidence_id")), str(n.properties.get("content_hash"))]
            for n in nodes
        )
    )


def payload_json(value: BaseModel | dict[str, Any]) -> str:
    """`canonical_json` of a model, or of its JSON-mode dump, written from that dump alone:
    the same text (JSON mode leaves only plain JSON data), one walk over it fewer."""
    return plain_canonical_json(
        value.model_dump(mode="json") if isinstance(value, BaseModel) else value
    )


_NOT_FINGERPRINTED = frozenset(
    {"idempotency_key", "as_of_given", "as_of_from", "as_of_words", "time_note"}
)


def request_fingerprint(request: RunRequest) -> str:
    """The canonical hash of a request as the asker gave it, without its idempotency key.

    An `as_of` left out (taken as now) is hashed as "default", so retrying the same command
    is the same request; a given `as_of` hashes as before (runs recorded earlier still match).
    """
    # Where as_of came from (and the note on the text's time) follows from what was given:
    # left out, so requests hash as they did before they were recorded.
    asked = request.model_dump(mode="json", exclude=set(_NOT_FINGERPRINTED))
    if request.as_of_given is False:
        asked["as_of"] = "default"
    return sha256_of(asked)


# Envelope versions. 1 (no `envelope` property): the hash covers every property as stored.
# 2: the hash covers the sha256 of each content field instead of its text, so a legal purge
# can remove the text (keeping its digest in `purged`) and the chain still verifies.
ENVELOPE = "envelope"
ENVELOPE_CONTENT_HASHED = 2
CONTENT_FIELDS = frozenset({"payload", "result", "statement", "question"})
# What a purge adds to a node: `purged` = ["field=sha256:...", ...], when, and by which run.
PURGE_BOOKKEEPING = frozenset({"purged", "purged_at", "purge_id"})


def purged_digests(properties: Mapping[str, Any]) -> dict[str, str]:
    """The digests a purge kept of the content fields it removed from a node."""
    kept: dict[str, str] = {}
    for entry in properties.get("purged") or []:
        field, sep, digest = str(entry).partition("=")
        if sep and field in CONTENT_FIELDS:
            kept[field] = digest
    return kept


def node_hash(properties: Mapping[str, Any], kind: str) -> str:
    """The chain hash of one node: every property except `hash` (and run bookkeeping).

    Envelope 2 hashes the digest of each content field (the text itself, or the digest a
    purge kept), and leaves the purge's own bookkeeping out.
    """
    skip = {"hash"} | (RUN_BOOKKEEPING if kind == CtxKind.RUN.value else set())
    if properties.get(ENVELOPE) != ENVELOPE_CONTENT_HASHED:
        return sha256_of({k: v for k, v in properties.items() if k not in skip})
    hashed = {k: v for k, v in properties.items() if k not in skip | PURGE_BOOKKEEPING}
    digests = purged_digests(properties)
    for field in CONTENT_FIELDS:
        value = properties.get(field)
        if isinstance(value, str):
            hashed[field] = sha256_text(value)
        elif value is None and field in digests:
            hashed[field] = digests[field]
    if _plain_map(hashed):
        # What the recorder writes: `canonical_json` would walk it only to copy it.
        return sha256_text(plain_canonical_json(hashed))
    return sha256_of(hashed)


_PLAIN_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain_map(values: Mapping[str, Any]) -> bool:
    """Whether `values` is a dict of string keys whose values are exact JSON scalars or lists
    of them: `canonical_json` leaves such a map as it is (same text from `plain_canonical_json`)."""
    if type(values) is not dict:
        return False
    scalars = _PLAIN_SCALARS
    for key, value in values.items():
        if type(key) is not str:
            return False
        kind = type(value)
        if kind in scalars:
            continue
        if kind is not list:
            return False
        for item in value:
            if type(item) not in scalars:
                return False
    return True


def purged_v1(properties: Mapping[str, Any]) -> bool:
    """A node recorded before envelope 2 whose text a purge removed: its own hash covered
    that text, so it can no longer be recomputed (its links to the next node still are)."""
    return properties.get(ENVELOPE) != ENVELOPE_CONTENT_HASHED and bool(properties.get("purged"))


def _seq_list(value: Any) -> list[int]:
    return [v for v in value if isinstance(v, int)] if isinstance(value, list) else []


def expected_edges(nodes: Iterable[CtxNodeRecord]) -> set[CtxEdgeRecord]:
    """The relationships a run must have, derived from the recorded (hashed) references."""
    return {
        CtxEdgeRecord(from_seq=src, type=rel, to_seq=dst)
        for rel, src, dst in edge_triples((n.seq, n.kind, n.properties) for n in nodes)
    }


def edge_triples(nodes: Iterable[tuple[int, str, Mapping[str, Any]]]) -> set[tuple[str, int, int]]:
    """`expected_edges` as (type, from seq, to seq), from each node's (seq, kind, properties):
    what the recorder writes, with no model built per node and per relationship."""
    edges: set[tuple[str, int, int]] = set()

    def add(src: int, rel: ProvRelation, dst: Any) -> None:
        if isinstance(dst, int):
            edges.add((rel.value, src, dst))

    for seq, kind, p in nodes:
        if kind == CtxKind.AGENT:
            add(0, ProvRelation.WAS_ASSOCIATED_WITH, seq)
        elif kind in (CtxKind.GOAL, CtxKind.OUTCOME):
            add(seq, ProvRelation.WAS_GENERATED_BY, 0)
        elif kind == CtxKind.PLAN:
            add(seq, ProvRelation.WAS_GENERATED_BY, 0)
            add(seq, ProvRelation.WAS_DERIVED_FROM, p.get("goal_seq"))
        elif kind == CtxKind.TOOL_CALL:
            add(seq, ProvRelation.WAS_INFORMED_BY, 0)
            add(seq, ProvRelation.USED, p.get("plan_seq"))
        elif kind == CtxKind.EVIDENCE:
            add(seq, ProvRelation.WAS_GENERATED_BY, p.get("tool_call_seq"))
        elif kind == CtxKind.REJECTION:
            add(seq, ProvRelation.WAS_GENERATED_BY, p.get("tool_call_seq", 0))
        elif kind == CtxKind.PACK:
            add(seq, ProvRelation.WAS_GENERATED_BY, 0)
            for ev in _seq_list(p.get("evidence_seqs")):
                add(seq, ProvRelation.WAS_DERIVED_FROM, ev)
        elif kind == CtxKind.CLAIM:
            add(seq, ProvRelation.WAS_GENERATED_BY, 0)
            add(seq, ProvRelation.WAS_DERIVED_FROM, p.get("pack_seq"))
            for ev in _seq_list(p.get("evidence_seqs")):
                add(seq, ProvRelation.WAS_DERIVED_FROM, ev)
    return edges


def verify_chain(lineage: RunLineage) -> ChainReport:
    """Check one run: contiguous seqs, every hash, every link, labels, edges, bookkeeping.

    Each problem names the place (run, seq, node kind), so an auditor can go straight to it.
    """
    run_id = lineage.run_id
    problems: list[ChainProblem] = []

    def problem(seq: int, kind: str, text: str) -> None:
        problems.append(ChainProblem(run_id=run_id, seq=seq, kind=kind, problem=text))

    nodes = sorted(lineage.nodes, key=lambda n: n.seq)
    by_seq: dict[int, CtxNodeRecord] = {}
    for each in nodes:
        if each.seq in by_seq:
            problem(each.seq, each.kind, "two nodes share this sequence number")
        by_seq[each.seq] = each

    run_props = lineage.run_properties
    head_seq = run_props.get("head_seq") if run_props else None
    last_seq = max([*by_seq, head_seq if isinstance(head_seq, int) else -1])

    previous: CtxNodeRecord | None = None
    for seq in range(last_seq + 1):
        node = by_seq.get(seq)
        if node is None:
            # The next node remembers the kind of the one before it, so a deletion is named.
            follower = by_seq.get(seq + 1)
            if follower is not None:
                kind = str(follower.properties.get("prev_kind", "?"))
            elif seq == head_seq and run_props:
                kind = str(run_props.get("head_kind", "?"))
            else:
                kind = "?"
            problem(seq, kind, "recorded node is missing (deleted)")
            previous = None
            continue
        p = node.properties
        kind = node.kind
        if kind not in {k.value for k in CtxKind}:
            problem(seq, kind, f"unknown node kind {kind!r}")
        elif set(node.labels) != {EVENT_LABEL, KIND_LABELS[CtxKind(kind)]}:
            problem(seq, kind, f"labels changed: {sorted(node.labels)}")
        if p.get("run_id") != run_id:
            problem(seq, kind, "run_id changed")
        if p.get("hash") != node_hash(p, kind) and not purged_v1(p):
            problem(seq, kind, "content does not match its hash (a recorded property changed)")
        if seq == 0:
            if kind != CtxKind.RUN.value:
                problem(seq, kind, "the first node of a run must be the run")
            if p.get("prev_hash") != GENESIS_HASH:
                problem(seq, kind, "prev_hash of the first node changed")
        elif previous is not None:
            if p.get("prev_hash") != previous.properties.get("hash"):
                problem(seq, kind, f"prev_hash does not match the hash of seq {seq - 1}")
            if p.get("prev_kind") != previous.kind:
                problem(seq, kind, f"prev_kind does not match the kind of seq {seq - 1}")
        previous = node

    if run_props is None:
        if 0 not in by_seq:
            pass  # already reported as a missing seq 0
    else:
        _check_bookkeeping(run_id, run_props, nodes, problem)

    expected = expected_edges(nodes)
    actual = set(lineage.edges)
    for edge in sorted(expected - actual, key=lambda e: (e.from_seq, e.type, e.to_seq)):
        src = by_seq.get(edge.from_seq)
        problem(
            edge.from_seq,
            src.kind if src else "?",
            f"relationship {edge.type} to seq {edge.to_seq} is missing",
        )
    for edge in sorted(actual - expected, key=lambda e: (e.from_seq, e.type, e.to_seq)):
        src = by_seq.get(edge.from_seq)
        problem(
            edge.from_seq,
            src.kind if src else "?",
            f"unexpected relationship {edge.type} to seq {edge.to_seq}",
        )

    problems.sort(key=lambda pr: (pr.seq, pr.problem))
    head = nodes[-1].properties.get("hash") if nodes else None
    return ChainReport(
        run_id=run_id,
        chain_valid=not problems,
        node_count=len(nodes),
        head_hash=head if isinstance(head, str) else None,
        problems=problems,
    )


def _check_bookkeeping(
    run_id: str, run_props: Mapping[str, Any], nodes: list[CtxNodeRecord], problem: Any
) -> None:
    """The CtxRun node's mutable fields must agree with the chain they summarise."""
    if not nodes:
        return
    last = nodes[-1]
    if run_props.get("head_seq") != last.seq or run_props.get("head_hash") != last.properties.get(
        "hash"
    ):
        problem(0, CtxKind.RUN.value, "run head does not match the last recorded node")
    elif run_props.get("head_kind") != last.kind:
        problem(0, CtxKind.RUN.value, "run head_kind does not match the last recorded node")
    outcomes = [n for n in nodes if n.kind == CtxKind.OUTCOME.value]
    status = run_props.get("status")
    if outcomes:
        recorded = outcomes[-1].properties.get("status")
        if status != recorded:
            problem(
                0, CtxKind.RUN.value, f"status {status!r} differs from the outcome {recorded!r}"
            )
        if outcomes[-1] is not last:
            problem(last.seq, last.kind, "node recorded after the run finished")
    elif status != RunStatus.INCOMPLETE.value:
        problem(0, CtxKind.RUN.value, f"status {status!r} but the run has no recorded outcome")
    if status is not None and status not in {s.value for s in FINISHED_STATUSES} | {
        RunStatus.INCOMPLETE.value
    }:
        problem(0, CtxKind.RUN.value, f"unknown status {status!r}")
