"""Turning bundle elements into KG record drafts (the exact properties that get stored).

A draft holds every stored property except `version`, `recorded_at` and `superseded_at`,
which the writer decides against the graph's current state. `content_hash` is computed
here over exactly those properties (graph_schema.hashing), so re-ingesting an unchanged
element produces the same hash and is a no-op.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from graph_schema.alert_names import identifier_words, is_alert_name
from graph_schema.bundle import (
    Bundle,
    DocumentSpec,
    EdgeSpec,
    LoadedBundle,
    NodeSpec,
    PrincipalSpec,
    SourceSpec,
)
from graph_schema.hashing import content_hash, sha256_text
from graph_schema.kg_types import (
    DOCUMENT_KIND_LABELS,
    TRUST_RECORDING_METHODS,
    NodeLabel,
    RecordStatus,
    RelType,
    Trust,
)
from graph_schema.validate import document_edge_keys, principal_tenant

# String properties whose text is worth finding by fulltext (never document content: that
# goes in through `redacted_content` first, so PII is not searchable).
_SEARCHABLE_PROPS = (
    "aliases",
    "code",
    "alertname",
    "release",
    "summary",
    "description",
    "finding",
    "change_summary",
    "change_type",
    "trace_id",
)


@dataclass(slots=True)
class SourceInfo:
    """What a record copies from its source: allowed purposes and trust."""

    purposes: list[str]
    trust: str
    authority: int | None = None


@dataclass(slots=True)
class NodeDraft:
    """One node record to be (maybe) written."""

    tenant: str
    id: str
    labels: list[str]
    props: dict[str, Any]
    explicit_recorded_at: datetime | None
    content_hash: str
    # Where the element is in the bundle (`file`, `section[index] id`), for problem lines.
    origin: str = ""
    element: str = ""


@dataclass(slots=True)
class EdgeDraft:
    """One relationship record to be (maybe) written between current endpoint records."""

    tenant: str
    key: str
    type: RelType
    from_id: str
    to_id: str
    props: dict[str, Any]
    explicit_recorded_at: datetime | None
    content_hash: str


def _finish(props: dict[str, Any]) -> tuple[dict[str, Any], str]:
    # Neo4j stores no nulls; dropping them keeps the hash recomputable from the record.
    clean = {k: v for k, v in props.items() if v is not None}
    digest = content_hash(clean)
    clean["content_hash"] = digest
    return clean, digest


def _search_text(parts: list[Any]) -> str:
    words: list[str] = []
    for part in parts:
        if part is None:
            continue
        if isinstance(part, list):
            words.extend(str(p) for p in part)
        else:
            words.append(str(part))
    return "\n".join(w for w in words if w)


def _name_words(names: list[Any]) -> list[str]:
    """The words of each alert-shaped name (`TempoPollsFailing` -> "tempo polls failing"):
    the fulltext analyzer keeps an identifier as one token, and on-call types the words."""
    spelled = []
    for name in names:
        if isinstance(name, str) and is_alert_name(name.strip()):
            spelled.append(" ".join(identifier_words(name.strip())))
    return list(dict.fromkeys(spelled))


def document_search_text(title: str | None, id: str, name: str | None, readable: str | None) -> str:
    """What the fulltext index finds a document by: its title, id, the words of an
    alert-shaped name or title, and its readable text (none once purged)."""
    return _search_text([title, id, *_name_words([name, title]), readable])


def _provenance(
    tenant: str,
    spec: NodeSpec | EdgeSpec | DocumentSpec,
    source: SourceInfo,
) -> dict[str, Any]:
    return {
        "tenant": tenant,
        "acl": sorted(spec.acl or []),
        "purposes": sorted(source.purposes),
        # Copied like purposes, so a conflict resolver needs no second lookup.
        "source_authority": source.authority,
        "valid_from": spec.valid_from,
        "valid_to": spec.valid_to,
        "source_id": spec.source_id,
        "source_version": spec.source_version,
        "observed_at": spec.observed_at,
        "method": spec.method,
        "confidence": spec.confidence,
        "locator": spec.locator,
        "status": RecordStatus.ACTIVE.value,
    }


def source_draft(tenant: str, spec: SourceSpec) -> NodeDraft:
    """The `:KG:Source` record of a source (its own source_id is itself)."""
    props: dict[str, Any] = {
        "id": spec.source_id,
        "tenant": tenant,
        "name": spec.source_id,
        "acl": sorted(spec.acl or []),
        "purposes": sorted(spec.allowed_purposes),
        "allowed_purposes": sorted(spec.allowed_purposes),
        "source_id": spec.source_id,
        "source_type": spec.source_type,
        "owner_team": spec.owner_team,
        "classification": spec.classification,
        "trust": spec.trust.value,
        "authority": spec.authority,
        "status": RecordStatus.ACTIVE.value,
    }
    clean, digest = _finish(props)
    clean["search_text"] = _search_text([spec.source_id, spec.source_type, spec.owner_team])
    return NodeDraft(
        tenant, spec.source_id, [NodeLabel.SOURCE.value], clean, spec.recorded_at, digest
    )


def principal_draft(bundle: Bundle, spec: PrincipalSpec) -> NodeDraft:
    """The `:KG:Principal` record of a subject: tenant, granted labels, allowed purposes."""
    tenant = principal_tenant(bundle, spec)
    props: dict[str, Any] = {
        "id": spec.id,
        "tenant": tenant,
        "name": spec.name,
        "acl": [],
        "labels": sorted(spec.labels),
        "purposes": sorted(spec.purposes),
        "source_id": spec.source_id,
        "status": RecordStatus.ACTIVE.value,
    }
    clean, digest = _finish(props)
    clean["search_text"] = _search_text([spec.id, spec.name])
    return NodeDraft(tenant, spec.id, [NodeLabel.PRINCIPAL.value], clean, spec.recorded_at, digest)


def node_draft(tenant: str, spec: NodeSpec, source: SourceInfo) -> NodeDraft:
    """The record of an entity node; bundle `props` are flattened into properties."""
    props: dict[str, Any] = {"id": spec.id, "name": spec.name}
    props.update(_provenance(tenant, spec, source))
    props.update(spec.props)
    if spec.method in TRUST_RECORDING_METHODS:
        # An imported rule's words (summary, group, file name) are its file author's, read
        # out in notes: the record carries its import's trust, as a document does.
        props["trust"] = source.trust
    clean, digest = _finish(props)
    clean["search_text"] = _search_text(
        [
            spec.name,
            spec.id,
            *(spec.props.get(p) for p in _SEARCHABLE_PROPS),
            *_name_words([spec.name, spec.props.get("alertname")]),
        ]
    )
    return NodeDraft(tenant, spec.id, [spec.label.value], clean, spec.recorded_at, digest)


def document_draft(tenant: str, spec: DocumentSpec, source: SourceInfo) -> NodeDraft:
    """The record of a document (`:Document`, plus `:Runbook` / `:Policy` by kind)."""
    labels = [NodeLabel.DOCUMENT.value]
    extra = DOCUMENT_KIND_LABELS.get(spec.kind)
    if extra is not None:
        labels.append(extra.value)
    trust = spec.trust.value if spec.trust is not None else source.trust
    props: dict[str, Any] = {"id": spec.id, "name": spec.name or spec.title}
    props.update(_provenance(tenant, spec, source))
    props.update(spec.props)
    props.update(
        {
            "kind": spec.kind.value,
            "title": spec.title,
            "content": spec.content,
            "locator": spec.locator,
            "trust": trust,
            "supports": sorted(s.value for s in spec.supported_types()),
            "redacted_content": spec.redacted_content,
        }
    )
    clean, digest = _finish(props)
    clean["text_hash"] = sha256_text(spec.content)
    if spec.redacted_content is not None:
        clean["redacted_text_hash"] = sha256_text(spec.redacted_content)
    readable = spec.redacted_content if spec.redacted_content is not None else spec.content
    clean["search_text"] = document_search_text(spec.title, spec.id, spec.name, readable)
    return NodeDraft(tenant, spec.id, labels, clean, spec.recorded_at, digest)


def edge_draft(tenant: str, spec: EdgeSpec, source: SourceInfo) -> EdgeDraft:
    """The record of a relationship; its props are flattened into properties."""
    props: dict[str, Any] = {"key": spec.edge_key}
    props.update(_provenance(tenant, spec, source))
    props.update(spec.props)
    clean, digest = _finish(props)
    return EdgeDraft(
        tenant, spec.edge_key, spec.type, spec.from_, spec.to, clean, spec.recorded_at, digest
    )


def document_edge_drafts(tenant: str, spec: DocumentSpec, source: SourceInfo) -> list[EdgeDraft]:
    """APPLIES_TO and SUPERSEDES relationships a document declares (same ACL and source)."""
    drafts = []
    keys = document_edge_keys(spec)
    targets = [(RelType.APPLIES_TO, t) for t in spec.applies_to]
    if spec.supersedes is not None:
        targets.append((RelType.SUPERSEDES, spec.supersedes))
    for key, (rel_type, target) in zip(keys, targets, strict=True):
        props: dict[str, Any] = {"key": key}
        # The relationship is stated by the document, at the document's locator.
        props.update(_provenance(tenant, spec, source))
        clean, digest = _finish(props)
        drafts.append(
            EdgeDraft(tenant, key, rel_type, spec.id, target, clean, spec.recorded_at, digest)
        )
    return drafts


def build_drafts(
    loaded: LoadedBundle, sources: dict[tuple[str, str], SourceInfo]
) -> tuple[list[NodeDraft], list[EdgeDraft]]:
    """All node and edge drafts of a validated bundle, in bundle order."""
    nodes: list[NodeDraft] = []
    edges: list[EdgeDraft] = []
    unknown = SourceInfo(purposes=[], trust=Trust.UNTRUSTED.value)
    for part in loaded.parts:
        b = part.bundle
        start = len(nodes)
        nodes.extend(source_draft(b.tenant, s) for s in b.sources)
        nodes.extend(principal_draft(b, p) for p in b.principals)
        for node in b.nodes:
            info = sources.get((b.tenant, str(node.source_id)), unknown)
            nodes.append(node_draft(b.tenant, node, info))
        for doc in b.documents:
            info = sources.get((b.tenant, str(doc.source_id)), unknown)
            nodes.append(document_draft(b.tenant, doc, info))
            edges.extend(document_edge_drafts(b.tenant, doc, info))
        sections = (
            [("sources", i) for i in range(len(b.sources))]
            + [("principals", i) for i in range(len(b.principals))]
            + [("nodes", i) for i in range(len(b.nodes))]
            + [("documents", i) for i in range(len(b.documents))]
        )
        for draft, (section, index) in zip(nodes[start:], sections, strict=True):
            draft.origin = part.origin
            draft.element = f"{section}[{index}] {draft.id}"
        for edge in b.edges:
            info = sources.get((b.tenant, str(edge.source_id)), unknown)
            edges.append(edge_draft(b.tenant, edge, info))
    return nodes, edges


def bundle_sources(loaded: LoadedBundle) -> dict[tuple[str, str], SourceInfo]:
    """Sources defined in the bundle, by (tenant, source_id)."""
    return {
        (part.bundle.tenant, s.source_id): SourceInfo(
            purposes=sorted(s.allowed_purposes), trust=s.trust.value, authority=s.authority
        )
        for part in loaded.parts
        for s in part.bundle.sources
    }
