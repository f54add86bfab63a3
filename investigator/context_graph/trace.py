"""`investigator trace`: one run's lineage as a terminal tree, JSON, or a Mermaid flowchart.

The tree follows the lineage Goal -> Plan -> ToolCall -> Evidence/Rejection and
Pack -> Claim; JSON carries every recorded node (with its content) and relationship; the
Mermaid text pastes into a ticket. Recorded text is escaped for Mermaid and flattened to
one line for the terminal, so hostile text cannot break either format.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel

from graph_schema.canonical import iso_utc
from investigator.context_graph.audit import HASHES_WITHHELD_FROM
from investigator.context_graph.chain import verify_chain
from investigator.context_graph.models import CtxKind, CtxNodeRecord, RunLineage
from investigator.context_graph.run_times import AsOfFrom, KnownAtFrom, run_times
from investigator.evidence import purged_rejection
from investigator.terminal import one_line, shown_id

TRACE_FORMATS = ("tree", "json", "mermaid")
_TEXT_MAX = 80


class TraceNode(BaseModel):
    """One recorded node as `trace --format json` prints it."""

    seq: int
    kind: str
    labels: list[str]
    hash: str | None
    prev_hash: str | None
    properties: dict[str, Any]  # every stored property except the raw payload text
    content: Any  # the recorded object (the payload, parsed)
    # Recorded free text (a question, a plan's words, evidence, a rejection's detail, a
    # statement) is data, never instructions, whoever wrote it: `untrusted` when the node
    # holds any, and where, as JSON Pointers into this node (`/content/question`). The MCP
    # server quotes them fenced as data (untrusted_text.py), as `investigate` its evidence.
    trust: Literal["trusted", "untrusted"] = "trusted"
    untrusted_fields: list[str] = []


class TraceEdge(BaseModel):
    """One relationship (PROV) between two nodes of the run, by seq."""

    from_seq: int
    type: str
    to_seq: int


class TraceDocument(BaseModel):
    """`trace --format json`: the run, its chain status, nodes and relationships."""

    run_id: str
    # The run checked against its chain and its anchor, as `verify` checks it (None: not
    # checked); a run that does not verify is printed, marked, never as if it were sound.
    verified: bool | None = None
    verify_problems: list[str] = []
    status: str | None
    chain_valid: bool
    problems: list[str]
    nodes: list[TraceNode]
    edges: list[TraceEdge]
    # Read under `audit`: which holder of its id the run's subject was, when not the current
    # one (`retracted 2026-12-05T06:40:00Z; an earlier principal of this id`).
    subject_note: str | None = None
    # The seq from which no chain hash (nor the run's head) is shown: they chain over
    # content withheld from the reader (docs/security.md rule 6). None: all shown.
    hashes_withheld_from: int | None = None
    # Which time the run answered for, and who chose it (context_graph/run_times.py):
    # `given`, `text` (one time in a runbook lookup's text), `now`; None: not recorded.
    as_of: str | None = None
    as_of_from: AsOfFrom | None = None
    as_of_words: str | None = None
    known_at: str | None = None
    known_at_from: KnownAtFrom | None = None
    time_note: str | None = None
    times: str | None = None  # the phrase the tree prints
    # The document's own fields that quote recorded words (the question's time words), as
    # JSON Pointers; each node says its own (`TraceNode.untrusted_fields`).
    untrusted_fields: list[str] = []


def trace_document(
    lineage: RunLineage,
    shown: RunLineage | None = None,
    verify_problems: list[str] | None = None,
    subject_note: str | None = None,
) -> TraceDocument:
    """The JSON form of a run's lineage (with the chain verified, so readers know to trust it).

    The chain is verified on the stored `lineage`; `shown` (the same run re-filtered for the
    reader, `audit.filtered_lineage`) is what is printed. `verify_problems`: the run's
    check against its anchor (`ledger.check_lineage_in_tx`), when the caller made it.
    """
    report = verify_chain(lineage)
    lineage = shown or lineage
    withheld_from = hashes_withheld_from(lineage)
    nodes = []
    for node in sorted(lineage.nodes, key=lambda n: n.seq):
        props = {k: v for k, v in node.properties.items() if k not in {"payload", "result"}}
        content = node.payload()
        fields = list(recorded_text_pointers({"properties": props, "content": content}))
        nodes.append(
            TraceNode(
                seq=node.seq,
                kind=node.kind,
                labels=sorted(node.labels),
                hash=_s(node.properties.get("hash")),
                prev_hash=_s(node.properties.get("prev_hash")),
                properties=props,
                content=content,
                trust="untrusted" if fields else "trusted",
                untrusted_fields=fields,
            )
        )
    edges = [
        TraceEdge(from_seq=e.from_seq, type=e.type, to_seq=e.to_seq)
        for e in sorted(lineage.edges, key=lambda e: (e.from_seq, e.type, e.to_seq))
    ]
    status = lineage.run_properties.get("status") if lineage.run_properties else None
    root = next((n for n in lineage.nodes if n.kind == CtxKind.RUN), None)
    times = run_times(root.properties) if root is not None else None
    said = times.model_dump() if times is not None else {}
    return TraceDocument(
        **said,
        times=times.phrase() if times is not None else None,
        # The question's time words, and the phrase and note that quote them.
        untrusted_fields=times.quoting_fields() if times is not None else [],
        run_id=lineage.run_id,
        verified=None if verify_problems is None else not verify_problems,
        verify_problems=verify_problems or [],
        status=_s(status),
        chain_valid=report.chain_valid,
        problems=[p.describe() for p in report.problems],
        nodes=nodes,
        edges=edges,
        subject_note=subject_note,
        hashes_withheld_from=withheld_from,
    )


# Keys whose string values are recorded words whatever they say (a one-word query too).
_TEXT_KEYS = frozenset(
    {
        "question", "text", "query", "value", "goal", "statement", "detail", "content",
        "title", "note", "notes", "steps", "time_note", "as_of_words",
        "description", "summary", "error",
    }
)  # fmt: skip


def recorded_text_pointers(value: Any, pointer: str = "", key: str = "") -> Iterator[str]:
    """JSON Pointers (RFC 6901) to the free text in a recorded `value`: each string under a
    key of `_TEXT_KEYS`, and each other string that holds white space (ids, hashes, times,
    kinds and template names hold none). What a served trace marks and fences as data."""
    if isinstance(value, dict):
        for k, v in value.items():
            escaped = str(k).replace("~", "~0").replace("/", "~1")
            yield from recorded_text_pointers(v, f"{pointer}/{escaped}", str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from recorded_text_pointers(v, f"{pointer}/{i}", key)
    elif (
        isinstance(value, str)
        and value
        and (key in _TEXT_KEYS or not value.isprintable() or any(ch.isspace() for ch in value))
    ):
        yield pointer


def hashes_withheld_from(shown: RunLineage) -> int | None:
    """The seq from which the re-filtered run `shown` withholds every chain hash, else None."""
    run = next((n for n in shown.nodes if n.kind == CtxKind.RUN), None)
    seq = run.properties.get(HASHES_WITHHELD_FROM) if run is not None else None
    return seq if isinstance(seq, int) else None


def _s(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _one_line(value: Any, limit: int = _TEXT_MAX) -> str:
    """Printable single-line text (control characters escaped), shortened for display."""
    return one_line(value, limit)


def _shown_time(value: Any) -> Any:
    """A recorded instant as the rest of the output writes it (`...:00Z`, not the stored
    fixed `...:00.000000Z` that sorts as the instants do)."""
    if not isinstance(value, str):
        return value
    try:
        return iso_utc(datetime.fromisoformat(value))
    except ValueError:
        return value


def _purge_reason(run: CtxNodeRecord) -> str | None:
    """The `--reason` a purge run was given (its request's options), else None: every reader
    of the run reads it, as the purge command's help promises."""
    if run.properties.get("command") != "purge":
        return None
    request = run.payload()
    options = request.get("options") if isinstance(request, dict) else None
    reason = options.get("reason") if isinstance(options, dict) else None
    return reason if isinstance(reason, str) else None


def _describe(node: CtxNodeRecord) -> str:
    """A short human description of one node for the tree and the Mermaid boxes."""
    text = _describe_kind(node)
    if node.properties.get("purged"):
        # A legal purge blanked its text (context_graph/purge.py): said so, not shown empty.
        text += f" [text purged by {_one_line(node.properties.get('purge_id'), 40)}]"
    return text


def _describe_kind(node: CtxNodeRecord) -> str:
    """What one node is, by its kind."""
    p = node.properties
    kind = node.kind
    if kind == CtxKind.RUN:
        who = shown_id(
            f"{p.get('tenant')}/{p.get('subject_id')}" if p.get("tenant") else p.get("subject_id")
        )
        reason = _purge_reason(node)
        given = f', reason "{_one_line(reason)}"' if reason is not None else ""
        return (
            f"run {p.get('run_id')} [{p.get('status')}] {_one_line(p.get('question'))!s} "
            f"(subject {who}, purpose {p.get('purpose')}{given}, {run_times(p).phrase()})"
        )
    if kind == CtxKind.AGENT:
        return f"agent {p.get('agent_id')} on behalf of {shown_id(p.get('on_behalf_of'))}"
    if kind == CtxKind.GOAL:
        content = node.payload()
        text = ""
        if isinstance(content, dict):
            text = str(content.get("text") or content.get("question") or content.get("goal") or "")
        return f"goal {_one_line(text)}".rstrip()
    if kind == CtxKind.PLAN:
        plan_id = p.get("plan_id")
        return f"plan {plan_id}" if plan_id else "plan"
    if kind == CtxKind.TOOL_CALL:
        error = f" error: {_one_line(p.get('error'), 60)}" if p.get("error") else ""
        trunc = " truncated" if p.get("truncated") is True else ""
        # Runs recorded before tool calls kept their start show the duration alone.
        began = f", started {_shown_time(p['started_at'])}" if p.get("started_at") else ""
        return (
            f"tool_call {p.get('tool_call_id')} {p.get('template_id')}@"
            f"{p.get('template_version')} rows={p.get('row_count')}{trunc} "
            f"({float(p.get('duration_ms') or 0):.1f} ms{began}){error}"
        )
    if kind == CtxKind.EVIDENCE and p.get("withheld"):
        return f"evidence {p.get('evidence_id')} [withheld: {p.get('withheld')}]"
    if kind == CtxKind.EVIDENCE:
        source = p.get("source_id")
        version = p.get("source_version")
        where = f" from {source}" + (f"@{version}" if version else "") if source else ""
        return f"evidence {p.get('evidence_id')}{where}"
    if kind == CtxKind.REJECTION and p.get("withheld"):
        return f"rejected {p.get('candidate_id')} [withheld: {p.get('withheld')}]"
    if kind == CtxKind.REJECTION:
        repl = f" -> {p.get('replacement')}" if p.get("replacement") else ""
        recorded = node.payload()
        detail = recorded.get("detail") if isinstance(recorded, dict) else None
        # Its reason code alone (`rejected_integrity`) reads as tampering.
        reason = "purged" if purged_rejection(p.get("reason"), detail) else p.get("reason")
        return f"rejected {p.get('candidate_id')}: {reason}{repl}"
    if kind == CtxKind.PACK:
        count = len(p.get("evidence_ids") or [])
        return f"pack {p.get('pack_id')} {p.get('pack_hash')} ({count} evidence)"
    if kind == CtxKind.CLAIM:
        ids = ", ".join(p.get("evidence_ids") or [])
        return (
            f"claim {p.get('claim_id')} [{p.get('epistemic_status')}] "
            f"{_one_line(p.get('statement'))} <- {ids}"
        )
    if kind == CtxKind.OUTCOME:
        return f"outcome {p.get('status')} ({p.get('stop_reason')})"
    return f"{_one_line(kind, 30)}"


def _children(lineage: RunLineage) -> dict[int, list[int]]:
    """Parent seq -> child seqs for the tree, following the recorded references."""
    nodes = sorted(lineage.nodes, key=lambda n: n.seq)
    kids: dict[int, list[int]] = {}

    def attach(parent: Any, child: int) -> None:
        kids.setdefault(parent if isinstance(parent, int) else 0, []).append(child)

    for node in nodes:
        p, seq = node.properties, node.seq
        if seq == 0:
            continue
        if node.kind == CtxKind.PLAN:
            attach(p.get("goal_seq", 0), seq)
        elif node.kind == CtxKind.TOOL_CALL:
            attach(p.get("plan_seq", 0), seq)
        elif node.kind in (CtxKind.EVIDENCE, CtxKind.REJECTION):
            attach(p.get("tool_call_seq", 0), seq)
        elif node.kind == CtxKind.CLAIM:
            attach(p.get("pack_seq", 0), seq)
        else:
            attach(0, seq)
    return kids


def render_tree(lineage: RunLineage, shown: RunLineage | None = None) -> str:
    """The lineage as an indented tree for a terminal, with the chain status at the end.

    The chain status is of the stored `lineage`; the nodes printed are `shown`'s (re-filtered).
    """
    report = verify_chain(lineage)
    lineage = shown or lineage
    by_seq = {n.seq: n for n in lineage.nodes}
    kids = _children(lineage)
    lines: list[str] = []
    root = by_seq.get(0)
    lines.append(_describe(root) if root else f"run {lineage.run_id} (run node missing)")

    def walk(seq: int, prefix: str) -> None:
        children = kids.get(seq, [])
        for i, child in enumerate(children):
            last = i == len(children) - 1
            lines.append(f"{prefix}{'└── ' if last else '├── '}#{child} {_describe(by_seq[child])}")
            walk(child, prefix + ("    " if last else "│   "))

    walk(0, "")
    orphans = sorted(set(by_seq) - {0} - {c for cs in kids.values() for c in cs})
    for seq in orphans:
        lines.append(f"?── #{seq} {_describe(by_seq[seq])}")
    withheld_from = hashes_withheld_from(lineage)
    if report.chain_valid and withheld_from is not None:
        # Verified on the stored run; its hashes from there on would confirm a guess.
        lines.append(
            f"chain: valid ({report.node_count} nodes; hashes from #{withheld_from} on "
            "withheld: they chain over content withheld from you)"
        )
    elif report.chain_valid:
        lines.append(f"chain: valid ({report.node_count} nodes, head {report.head_hash})")
    else:
        lines.append(f"chain: INVALID ({len(report.problems)} problems)")
        lines.extend(f"  {p.describe()}" for p in report.problems)
    return "\n".join(lines)


_MERMAID_UNSAFE = {
    '"': "#quot;",
    "<": "#lt;",
    ">": "#gt;",
    "&": "#amp;",
    "[": "#91;",
    "]": "#93;",
    "{": "#123;",
    "}": "#125;",
    "|": "#124;",
    "`": "#96;",
    "#": "#35;",
}
_MERMAID_CLASS = {
    CtxKind.RUN: "fill:#dde7f7",
    CtxKind.TOOL_CALL: "fill:#f7ecd9",
    CtxKind.EVIDENCE: "fill:#ddf2dd",
    CtxKind.REJECTION: "fill:#f7dddd",
    CtxKind.PACK: "fill:#ece0f5",
    CtxKind.CLAIM: "fill:#fff6cc",
}


def _mermaid_text(value: str) -> str:
    return "".join(_MERMAID_UNSAFE.get(ch, ch) for ch in _one_line(value, 70))


def render_mermaid(lineage: RunLineage) -> str:
    """A Mermaid flowchart of the run: one box per node, PROV relationships as labelled arrows."""
    lines = ["flowchart TD"]
    kinds_used: set[CtxKind] = set()
    for node in sorted(lineage.nodes, key=lambda n: n.seq):
        kind_text = node.kind
        try:
            kind = CtxKind(kind_text)
        except ValueError:
            kind = None
        lines.append(f'  n{node.seq}["seq {node.seq}: {_mermaid_text(_describe(node))}"]')
        if kind in _MERMAID_CLASS:
            lines.append(f"  class n{node.seq} {kind.value}")
            kinds_used.add(kind)
    for edge in sorted(lineage.edges, key=lambda e: (e.from_seq, e.type, e.to_seq)):
        if edge.from_seq < 0 or edge.to_seq < 0:
            continue  # a relationship leaving the run: reported by the chain check instead
        lines.append(f"  n{edge.from_seq} -->|{edge.type}| n{edge.to_seq}")
    for kind in sorted(kinds_used):
        lines.append(f"  classDef {kind.value} {_MERMAID_CLASS[kind]}")
    return "\n".join(lines)
