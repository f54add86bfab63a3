"""`investigator trace RUN --format prov-json`: one run's lineage as a W3C PROV document.

The Context Graph already is PROV-shaped (docs/context-graph.md, "W3C PROV mapping"): the
run and each tool call are activities, the investigator software is an agent acting on
behalf of the subject, and goal, plan, evidence, rejections, pack, claims and outcome are
entities. Each recorded relationship becomes the PROV relation of the same name
(`USED` -> `used`, `WAS_GENERATED_BY` -> `wasGeneratedBy`, `WAS_DERIVED_FROM` ->
`wasDerivedFrom`, `WAS_INFORMED_BY` -> `wasInformedBy`, `WAS_ASSOCIATED_WITH` ->
`wasAssociatedWith`), plus `actedOnBehalfOf` from the agent's `on_behalf_of`.

Records carry ids, hashes, counts and times (`inv:` attributes), never recorded text: the
question, evidence content and claim statements stay in `trace --format json`, where the
reader's grants re-filter them. Identifiers are `ctx:<kind>-<seq>` in a namespace of the
run, so the same lineage always gives the same document. Activities have `prov:startTime`
and `prov:endTime` and generations `prov:time` where the run recorded them (a run recorded
before tool calls kept their start has times on the run activity and outcome only).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from prov.constants import PROV as _PROV

from investigator.context_graph.models import CtxKind, CtxNodeRecord, ProvRelation, RunLineage

if TYPE_CHECKING:
    from prov.model import ProvDocument

INV_NAMESPACE = "https://graph-investigator.dev/ns/context-graph#"
RUN_NAMESPACE = "urn:investigator:run:"

ACTIVITY_KINDS = frozenset({CtxKind.RUN.value, CtxKind.TOOL_CALL.value})
AGENT_KINDS = frozenset({CtxKind.AGENT.value})

# Per kind, the recorded properties that are ids, hashes, counts or times (never text).
_COMMON = ("run_id", "hash", "prev_hash", "withheld", "hashes_withheld_from")
_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    CtxKind.RUN.value: (
        "command",
        "status",
        "tenant",
        "subject_id",
        "subject_incarnation",
        "purpose",
        "service",
        "as_of",
        # Where as_of and known_at came from (`given`, `text`, `now`; booleans): not text.
        # The text's words and the time note are: they quote the question, which PROV
        # never carries (`trace --format json` has them).
        "as_of_from",
        "as_of_given",
        "known_at",
        "known_at_given",
        "request_fingerprint",
        "agent",
        "decision_code",
    ),
    CtxKind.AGENT.value: ("agent_id", "agent_type", "on_behalf_of"),
    CtxKind.GOAL.value: ("model",),
    CtxKind.PLAN.value: ("model", "plan_id"),
    CtxKind.TOOL_CALL.value: (
        "tool_call_id",
        "template_id",
        "template_version",
        "template_hash",
        "evidence_type",
        "round",
        "limit",
        "row_count",
        "rows_hash",
        "truncated",
        "duration_ms",
        "as_of",
        "known_at",
        "error",
    ),
    CtxKind.EVIDENCE.value: (
        "evidence_id",
        "element_ids",
        "source_id",
        "source_version",
        "content_hash",
        "locator",
        "tool_call_id",
    ),
    CtxKind.REJECTION.value: ("candidate_id", "reason", "replacement", "tool_call_id"),
    CtxKind.PACK.value: ("pack_id", "pack_hash", "evidence_ids"),
    CtxKind.CLAIM.value: ("claim_id", "epistemic_status", "confidence", "evidence_ids"),
    CtxKind.OUTCOME.value: ("status", "stop_reason", "finished_at"),
}

_RELATIONS = {
    ProvRelation.USED.value: "used",
    ProvRelation.WAS_GENERATED_BY.value: "wasGeneratedBy",
    ProvRelation.WAS_DERIVED_FROM.value: "wasDerivedFrom",
    ProvRelation.WAS_INFORMED_BY.value: "wasInformedBy",
    ProvRelation.WAS_ASSOCIATED_WITH.value: "wasAssociatedWith",
}


def record_id(node: CtxNodeRecord) -> str:
    """The PROV identifier of a recorded node: `ctx:<kind>-<seq>`."""
    return f"ctx:{node.kind}-{node.seq}"


# What a local name keeps as written: an XML NCName's ASCII characters (PROV-XML writes ids
# as xsd:QName; PROV-N would need `/`, `:` and `@` escaped). `_` is the escape character.
_NCNAME_KEPT = re.compile(r"[A-Za-z0-9.-]")


def qname_local(text: str) -> str:
    """`text` as a local name valid in every PROV serialisation (an NCName): letters,
    digits, `.` and `-` kept, every other character (`/`, `:`, `@`, `_` itself, non-ASCII)
    `_` and its UTF-8 bytes in hex, and a first character that may not open a name (a digit,
    `.`, `-`) encoded too: `acme/user:bob` -> `acme_2Fuser_3Abob`. Deterministic, reversible."""
    out: list[str] = []
    for i, char in enumerate(text):
        if _NCNAME_KEPT.fullmatch(char) and not (i == 0 and not char.isalpha()):
            out.append(char)
        else:
            out.extend(f"_{byte:02X}" for byte in char.encode("utf-8"))
    return "".join(out) or "_"


def subject_agent_id(on_behalf_of: str) -> str:
    """The PROV identifier of the subject the software agent acted for, `subject:` and the
    principal id as a valid local name (`qname_local`): `acme/user:bob` has `/` and `:`,
    which no QName local part may hold. The id as written is the agent's `inv:subject`."""
    return "subject:" + qname_local(on_behalf_of)


def _instant(value: Any) -> datetime | None:
    """A recorded time (`...Z`) as a datetime; None when absent or not a time."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def activity_times(
    node: CtxNodeRecord, outcome_end: Any
) -> tuple[datetime | None, datetime | None]:
    """An activity's (start, end): the run's `started_at` and its outcome's `finished_at`; a
    tool call's `started_at` and that plus `duration_ms`. (None, None) when not recorded (a
    tool call recorded before its start time was kept)."""
    props = node.properties
    if node.kind == CtxKind.RUN.value:
        return _instant(props.get("started_at")), _instant(outcome_end)
    start = _instant(props.get("started_at"))
    duration = props.get("duration_ms")
    if start is None or not isinstance(duration, int | float):
        return None, None
    return start, start + timedelta(milliseconds=float(duration))


def generation_time(
    entity: CtxNodeRecord, activity: CtxNodeRecord, ends: dict[int, datetime | None]
) -> datetime | None:
    """When `activity` generated `entity`: a tool call's end (its rows were back), the
    outcome's `finished_at`, else the entity's recorded `generated_at` (None if not kept)."""
    if activity.kind == CtxKind.TOOL_CALL.value:
        return ends.get(activity.seq)
    if entity.kind == CtxKind.OUTCOME.value:
        return _instant(entity.properties.get("finished_at"))
    return _instant(entity.properties.get("generated_at"))


def record_kind(kind: str) -> str:
    """`activity`, `agent` or `entity`: what a Context Graph kind is in PROV."""
    if kind in ACTIVITY_KINDS:
        return "activity"
    if kind in AGENT_KINDS:
        return "agent"
    return "entity"


def _value(value: Any) -> str | int | float | bool | None:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


# Recorded instants: typed `xsd:dateTime`, so a PROV or RDF reader compares them as times
# (they were plain strings; a value that is no time, `[withheld]`, stays a string).
_INSTANTS = frozenset({"as_of", "known_at", "finished_at"})


def _attributes(node: CtxNodeRecord) -> dict[str, Any]:
    props = node.properties
    attrs: dict[str, Any] = {"inv:kind": node.kind, "inv:seq": node.seq}
    for key in (*_COMMON, *_ATTRIBUTES.get(node.kind, ())):
        value = _value(props.get(key))
        if value is not None and value != "":
            instant = _instant(value) if key in _INSTANTS else None
            attrs["inv:" + key] = instant if instant is not None else value
    label = props.get("template_id") or props.get("evidence_id") or props.get("claim_id")
    attrs["prov:label"] = f"{node.kind} {label}" if label else node.kind
    # prov:type values are qualified names (PROV-JSON `prov:QUALIFIED_NAME`), not strings.
    if node.kind == CtxKind.PLAN.value:
        attrs["prov:type"] = _PROV["Plan"]
    if node.kind == CtxKind.AGENT.value:
        attrs["prov:type"] = _PROV["SoftwareAgent"]
    return attrs


def prov_document(lineage: RunLineage, verify_problems: list[str] | None = None) -> ProvDocument:
    """The run's lineage as a `prov.model.ProvDocument`; `verify_problems` (the run checked
    against its chain and anchor, when made) marks the run's activity `inv:verified`."""
    from prov.model import ProvDocument

    doc = ProvDocument()
    inv = doc.add_namespace("inv", INV_NAMESPACE)
    doc.add_namespace("ctx", f"{RUN_NAMESPACE}{lineage.run_id}/")
    doc.add_namespace("subject", "urn:investigator:subject:")
    by_seq: dict[int, CtxNodeRecord] = {}
    ends: dict[int, datetime | None] = {}
    outcome_end = None
    for node in lineage.of_kind(CtxKind.OUTCOME):
        outcome_end = node.properties.get("finished_at")
    # Which holder of the principal id it acted for: one id can name several people in turn.
    incarnation = (lineage.run_properties or {}).get("subject_incarnation")
    for node in sorted(lineage.nodes, key=lambda n: n.seq):
        by_seq[node.seq] = node
        attrs = _attributes(node)
        if node.kind == CtxKind.RUN.value and verify_problems is not None:
            attrs["inv:verified"] = not verify_problems
            if verify_problems:
                attrs["inv:verify_problem"] = verify_problems[0]
        kind = record_kind(node.kind)
        if kind == "activity":
            start, end = activity_times(node, outcome_end)
            ends[node.seq] = end
            doc.activity(record_id(node), start, end, attrs)
        elif kind == "agent":
            doc.agent(record_id(node), attrs)
            on_behalf_of = node.properties.get("on_behalf_of")
            if isinstance(on_behalf_of, str) and on_behalf_of:
                principal: dict[str, Any] = {
                    "prov:type": inv["Principal"],
                    "inv:subject": on_behalf_of,
                }
                if isinstance(incarnation, int):
                    principal["inv:incarnation"] = incarnation
                subject = doc.agent(subject_agent_id(on_behalf_of), principal)
                doc.actedOnBehalfOf(record_id(node), subject)
        else:
            doc.entity(record_id(node), attrs)
    for edge in sorted(lineage.edges, key=lambda e: (e.from_seq, e.type, e.to_seq)):
        relation = _RELATIONS.get(edge.type)
        source, target = by_seq.get(edge.from_seq), by_seq.get(edge.to_seq)
        if relation is None or source is None or target is None:
            continue  # a foreign or unknown edge: trace --format json reports it
        a, b = record_id(source), record_id(target)
        if relation == "used":
            doc.used(a, b)
        elif relation == "wasGeneratedBy":
            doc.wasGeneratedBy(a, b, generation_time(source, target, ends))
        elif relation == "wasDerivedFrom":
            doc.wasDerivedFrom(a, b)
        elif relation == "wasInformedBy":
            doc.wasInformedBy(a, b)
        else:
            doc.wasAssociatedWith(a, b)
    return doc


def prov_json(lineage: RunLineage, verify_problems: list[str] | None = None) -> str:
    """PROV-JSON (https://www.w3.org/submissions/prov-json/) of the run's lineage."""
    return str(prov_document(lineage, verify_problems).serialize(format="json", indent=None))
