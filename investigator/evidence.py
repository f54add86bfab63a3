"""Evidence, rejections and their fixed reason codes (docs/design.md section 7).

A template row (docs/contracts.md section 2, the row contract) becomes a *candidate* Evidence
object through `normalise_rows`; the evidence gate then admits it or rejects it with one of
the fixed `RejectionReason` codes. Both functions are pure, so replay can rebuild evidence
from re-executed tool results and compare hashes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, computed_field

from cypher_templates.plan import EVIDENCE_TYPES as PLAN_EVIDENCE_TYPES
from graph_schema.canonical import canonical_json as canonical_json  # pack, claims import it
from graph_schema.canonical import iso_utc as iso_utc
from graph_schema.canonical import sha256_hex
from graph_schema.canonical import sha256_text as sha256_text
from graph_schema.kg_types import TRUST_RECORDING_METHODS

# The vocabulary of the rubric (docs/contracts.md section 2): one definition, in the plan.
EVIDENCE_TYPES: tuple[str, ...] = PLAN_EVIDENCE_TYPES


class RejectionReason(StrEnum):
    """Why the gate refused a candidate. Fixed vocabulary: extend only by adding."""

    REJECTED_PURPOSE = "rejected_purpose"
    REJECTED_TEMPORAL = "rejected_temporal"
    REJECTED_SUPERSEDED = "rejected_superseded"
    REJECTED_RETRACTED = "rejected_retracted"
    REJECTED_NOT_YET_KNOWN = "rejected_not_yet_known"
    REJECTED_INTEGRITY = "rejected_integrity"
    REJECTED_UNTRUSTED_INSTRUCTION = "rejected_untrusted_instruction"
    DUPLICATE = "duplicate"
    CONFLICT_LOSER = "conflict_loser"
    BUDGET_EXCEEDED = "budget_exceeded"
    TOP_K_REACHED = "top_k_reached"
    LOW_RELEVANCE = "low_relevance"


# The gate's detail for a record whose text a legal purge removed (gate.py `_record_check`).
# Its reason stays `rejected_integrity`; what people read words it as purged, not tampered.
PURGED_DETAIL = "its text is gone (a legal purge keeps only the hash of what was there)"


def purged_rejection(reason: str | None, detail: str | None) -> bool:
    """Whether a rejection is of a record whose text a legal purge removed (not an edit)."""
    return reason == RejectionReason.REJECTED_INTEGRITY and (detail or "").startswith(PURGED_DETAIL)


class Evidence(BaseModel):
    """One KG record turned into decision evidence (or a candidate for it).

    `content` is exactly the text the subject may read (the redacted view for subjects
    without `pii`, recorded as a `pii_redaction` transformation).
    """

    model_config = ConfigDict(frozen=True)

    evidence_id: str
    element_id: str
    kind: str = "node"
    type: str = ""
    version: int = 1
    name: str | None = None
    title: str | None = None
    source_id: str | None = None
    source_version: str | None = None
    locator: str | None = None
    content: str = ""
    evidence_types: list[str] = Field(default_factory=list)
    observed_at: datetime | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    recorded_at: datetime | None = None
    acl: list[str] = Field(default_factory=list)
    purposes: list[str] | None = None
    trust: str = "trusted"
    status: str = "active"
    redacted: bool = False
    # The KG record has a redacted view (PII): only a `pii` subject may get the full text.
    has_redacted_view: bool = False
    transformations: list[str] = Field(default_factory=list)
    content_hash: str | None = None
    text_hash: str | None = None
    replacement: str | None = None
    conflict_key: str | None = None
    context: dict[str, Any] = Field(default_factory=dict)
    props: dict[str, Any] = Field(default_factory=dict)
    # Retrieval bookkeeping: per-channel 1-based ranks, raw scores, the fused RRF score.
    ranks: dict[str, int] = Field(default_factory=dict)
    scores: dict[str, float] = Field(default_factory=dict)
    rrf_score: float = 0.0
    tool_call_id: str | None = None
    template: str | None = None

    @property
    def identity(self) -> tuple[str, int]:
        """The KG record this evidence stands for: (element_id, version)."""
        return (self.element_id, self.version)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def supports_from(self) -> datetime | None:
        """The first instant this record is evidence of something: its `valid_from`, but
        for a release whose record says its rollout started before that, the start (from
        then it shows a rollout under way; it is the release in force only from
        `valid_from`). What "happened by as_of" is judged on. Derived from hashed fields
        (`valid_from`, the record's `started_at`), so no hash includes it again."""
        if self.valid_from is None or self.type != "Deployment":
            return self.valid_from
        # Whatever read it (an entity lookup too): the record states the rollout's start.
        started = instant_of(self.context.get("started_at", self.props.get("started_at")))
        return started if started is not None and started < self.valid_from else self.valid_from


class Rejection(BaseModel):
    """A candidate the gate refused, with its reason code (and replacement or winner)."""

    model_config = ConfigDict(frozen=True)

    candidate_id: str
    element_id: str
    version: int = 1
    reason: RejectionReason
    replacement: str | None = None
    winner: str | None = None
    detail: str = ""
    round: int = 1
    tool_call_id: str | None = None


def evidence_id_for(
    element_id: str, version: int, text_digest: str, transformations: list[str]
) -> str:
    """The deterministic evidence id of one KG record version as this subject sees it.

    Two subjects who see different text (full vs redacted) get different ids, so a pack can
    never claim it holds text the subject could not read.
    """
    payload = canonical_json(
        {
            "element_id": element_id,
            "version": version,
            "text": text_digest,
            "transformations": sorted(transformations),
        }
    )
    return "ev:" + sha256_hex(payload)[:20]


def as_datetime(value: Any) -> datetime | None:
    """A row's time (a datetime, Neo4j DateTime or ISO text) as an aware datetime."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    to_native = getattr(value, "to_native", None)  # neo4j.time.DateTime
    if callable(to_native):
        native = to_native()
        if isinstance(native, datetime):
            return native if native.tzinfo else native.replace(tzinfo=UTC)
    if isinstance(value, str):
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    raise ValueError(f"not a datetime: {value!r}")


def instant_of(raw: Any) -> datetime | None:
    """A zoned ISO-8601 text (or datetime) as a datetime; anything else None."""
    if isinstance(raw, datetime):
        return raw if raw.tzinfo is not None else None
    if not isinstance(raw, str):
        return None
    try:
        parsed = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def as_held(ev: Evidence) -> Evidence:
    """An OWNS record as it can hold: no longer than the runbook version it names (its
    context's `owned_until`, owned_by_team 4), for the checks of when it holds only; the
    record itself (and what a claim cites) keeps its own interval."""
    if ev.context.get("owned_kind") != "runbook":
        return ev  # a service's or an alert's own end is not read as its owner's
    until = instant_of(ev.context.get("owned_until"))
    if until is None or (ev.valid_to is not None and ev.valid_to <= until):
        return ev
    return ev.model_copy(update={"valid_to": until})


def version_named(question: str, ev: Evidence) -> bool:
    """Whether `question` writes the versioned id of the runbook an OWNS record names
    ("Which team owned runbook:payment-recovery@v3?"): its owner is asked of that version,
    whenever it was in force, not only at as_of."""
    owned = str(ev.context.get("owned") or "")
    if "@" not in owned:
        return False
    pattern = r"(?<![\w:@.-])" + re.escape(owned.casefold()) + r"(?![\w@-])"
    return re.search(pattern, question.casefold()) is not None


def _jsonable(value: Any) -> Any:
    """Neo4j values (temporal types) as plain JSON-able Python values."""
    kind = type(value)  # exact built-in types first: most of a row's values are these
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    if kind is dict:
        return {str(k): _jsonable(v) for k, v in value.items()}
    if kind is list:
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    try:
        dt = as_datetime(value)
    except (ValueError, TypeError):
        dt = None
    if dt is not None:
        return iso_utc(dt)
    iso = getattr(value, "iso_format", None)
    return iso() if callable(iso) else str(value)


def _row_dict(row: Any) -> dict[str, Any]:
    if isinstance(row, BaseModel):
        return dict(row.model_dump(mode="python"))
    if isinstance(row, Mapping):
        return dict(row)
    data = getattr(row, "data", None)  # neo4j.Record
    if callable(data):
        return dict(data())
    raise TypeError(f"not a template row: {type(row).__name__}")


def normalise_row(
    row: Any,
    *,
    channel: str,
    rank: int,
    tool_call_id: str | None = None,
    template: str | None = None,
) -> Evidence:
    """Turn one row of the row contract into a candidate Evidence (pure, deterministic)."""
    data = _row_dict(row)
    element = _row_dict(data.get("element") or {})
    context_raw = _jsonable(_row_dict(data.get("context") or {}))
    context = {k: v for k, v in context_raw.items() if v is not None}
    score = data.get("score")
    redacted = bool(element.get("redacted") or False)
    transformations = ["pii_redaction"] if redacted else []
    content = element.get("content")
    content = "" if content is None else str(content)
    element_id = str(element.get("element_id") or element.get("id") or "")
    version = int(element.get("version") or 1)
    text_hash = element.get("text_hash")
    props = _jsonable(_props_dict(element.get("props")))
    purposes = element.get("purposes", props.get("purposes") if isinstance(props, dict) else None)
    return Evidence(
        evidence_id=evidence_id_for(element_id, version, sha256_text(content), transformations),
        element_id=element_id,
        kind=str(element.get("kind") or "node"),
        type=str(element.get("type") or ""),
        version=version,
        name=_opt_str(element.get("name")),
        title=_opt_str(element.get("title")),
        source_id=_opt_str(element.get("source_id")),
        source_version=_opt_str(element.get("source_version")),
        locator=_opt_str(element.get("locator")),
        content=content,
        evidence_types=sorted({str(t) for t in (element.get("supports") or [])}),
        observed_at=as_datetime(element.get("observed_at")),
        valid_from=as_datetime(element.get("valid_from")),
        valid_to=as_datetime(element.get("valid_to")),
        recorded_at=as_datetime(element.get("recorded_at")),
        acl=sorted(str(a) for a in (element.get("acl") or [])),
        purposes=sorted(str(p) for p in purposes) if isinstance(purposes, list | tuple) else None,
        trust=trust_of(element, props if isinstance(props, dict) else {}),
        status=str(element.get("status") or "active"),
        redacted=redacted,
        has_redacted_view=bool(element.get("has_redacted_view") or False),
        transformations=transformations,
        content_hash=_opt_str(element.get("content_hash")),
        text_hash=_opt_str(text_hash),
        replacement=_opt_str(element.get("replacement")),
        # Templates may name the fact slot; documents can carry it as a property.
        conflict_key=_opt_str(element.get("conflict_key") or props.get("conflict_key")),
        context=context,
        props=props if isinstance(props, dict) else {},
        ranks={channel: rank},
        scores={channel: float(score)} if isinstance(score, int | float) else {},
        tool_call_id=tool_call_id,
        template=template,
    )


# The trust of an imported record written before its importer recorded trust (an alert rule
# imported before session 31's importer): unknown, so untrusted wherever it is shown.
UNRECORDED_TRUST = "unrecorded"


def trust_of(element: Mapping[str, Any], props: Mapping[str, Any]) -> str:
    """A record's trust: its own, else `unrecorded` for a node an importer that records trust
    wrote (`method` prometheus-rules: its words are a file author's, and older imports did
    not store trust), else `trusted` (a bundle's entity records carry none)."""
    trust = element.get("trust")
    if trust:
        return str(trust)
    if element.get("kind", "node") == "node" and props.get("method") in TRUST_RECORDING_METHODS:
        return UNRECORDED_TRUST
    return "trusted"


def _props_dict(raw: Any) -> dict[str, Any]:
    """Templates return `props` as a map or as a list of [key, value] pairs."""
    if raw is None:
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, list | tuple):
        return {
            str(pair[0]): pair[1]
            for pair in raw
            if isinstance(pair, list | tuple) and len(pair) == 2
        }
    return {}


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def normalise_rows(
    rows: Sequence[Any],
    *,
    channel: str,
    tool_call_id: str | None = None,
    template: str | None = None,
) -> list[Evidence]:
    """Turn the rows of one tool call into candidates, ranked in the order returned."""
    return [
        normalise_row(row, channel=channel, rank=i, tool_call_id=tool_call_id, template=template)
        for i, row in enumerate(rows, start=1)
    ]


RRF_K = 60


def fuse(candidates: Iterable[Evidence], k: int = RRF_K) -> list[Evidence]:
    """Merge candidates of one round by KG record with Reciprocal Rank Fusion.

    The same record found by several channels becomes one candidate whose `ranks` and
    `scores` hold every channel and whose `rrf_score` is sum(1 / (k + rank)). Raw scores of
    different channels are never added. The result is sorted by fused score, then identity,
    so the order is deterministic.
    """
    merged: dict[str, Evidence] = {}
    for cand in candidates:
        prior = merged.get(cand.evidence_id)
        if prior is None:
            merged[cand.evidence_id] = cand
            continue
        ranks = dict(prior.ranks)
        for channel, rank in cand.ranks.items():
            ranks[channel] = min(rank, ranks.get(channel, rank))
        scores = dict(prior.scores)
        for channel, score in cand.scores.items():
            scores[channel] = max(score, scores.get(channel, score))
        types = sorted(set(prior.evidence_types) | set(cand.evidence_types))
        context = {**cand.context, **prior.context}
        # A graph channel knows what a ranked channel cannot (the replacing version, the
        # fact slot): keep whichever channel supplied it.
        merged[cand.evidence_id] = prior.model_copy(
            update={
                "ranks": ranks,
                "scores": scores,
                "evidence_types": types,
                "context": context,
                "replacement": prior.replacement or cand.replacement,
                "conflict_key": prior.conflict_key or cand.conflict_key,
            }
        )
    fused = [
        ev.model_copy(
            update={"rrf_score": round(sum(1.0 / (k + r) for r in ev.ranks.values()), 12)}
        )
        for ev in merged.values()
    ]
    return sorted(fused, key=lambda e: (-e.rrf_score, e.element_id, e.version, e.evidence_id))


# Per-item overhead of the metadata block the pack renderer writes around each evidence
# (ids, source, locator, valid time); a fixed number keeps token estimates deterministic.
EVIDENCE_HEADER_TOKENS = 40


def estimate_tokens(text: str) -> int:
    """A deterministic token estimate: one token per 4 characters, rounded up."""
    return (len(text) + 3) // 4


def evidence_tokens(evidence: Evidence) -> int:
    """What one evidence item costs in the pack's evidence slot."""
    return EVIDENCE_HEADER_TOKENS + estimate_tokens(evidence.content)


def supported_evidence_types(evidence: Iterable[Evidence]) -> set[str]:
    """The evidence types some of `evidence` supports, as the gaps of a run count them.

    An EMITTED record (service -> error code) is itself the link between the error and the
    service (`affected_service`): a subject who may not see the incident's AFFECTED_BY still
    has it, and an answer stating it must not list that link as missing.
    """
    # A tombstone in the pack (a retraction an answer cites) is no record of what it ended.
    items = [ev for ev in evidence if ev.status == "active"]
    types = {t for ev in items for t in ev.evidence_types}
    if any(ev.kind == "relationship" and ev.type == "EMITTED" for ev in items):
        types.add("affected_service")
    return types
