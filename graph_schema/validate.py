"""Whole-bundle checks that span elements and files (docs/design.md section 10).

`validate_bundle` finds every problem before anything is written: duplicate ids and keys,
dangling references (edges, `supersedes`, `applies_to`, `source_id`, retraction targets),
times in the future, edge keys that do not name their type. References may point to
elements of the same bundle or to current records already in the graph (`ExistingElements`,
looked up by `graph_schema.writer.find_existing`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

from graph_schema.bundle import (
    Bundle,
    BundleProblem,
    DocumentSpec,
    LoadedBundle,
    PrincipalSpec,
)
from graph_schema.kg_types import RelType
from graph_schema.look_alikes import look_alike_readings

TenantId = tuple[str, str]


@dataclass
class ExistingElements:
    """What the graph already holds that a bundle may refer to (current records only)."""

    ids: set[TenantId] = field(default_factory=set)
    edge_keys: set[TenantId] = field(default_factory=set)
    sources: set[TenantId] = field(default_factory=set)
    # Every principal id each tenant holds (any version): a new one must not look like them.
    principal_ids: dict[str, set[str]] = field(default_factory=dict)
    # The principal ids of each tenant whose current record is a retraction's tombstone.
    retracted_principals: dict[str, set[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class ElementRef:
    """Where an element is: file, section index and a printable name."""

    origin: str
    element: str


# (origin, section, index, name): an element's place, made an ElementRef only for a problem
# (building one per element costs more than the checks themselves).
Where = tuple[str, str, int, str]


def _ref(where: Where | ElementRef) -> ElementRef:
    if isinstance(where, ElementRef):
        return where
    origin, section, index, name = where
    return ElementRef(origin, f"{section}[{index}] {name}")


def principal_tenant(bundle: Bundle, principal: PrincipalSpec) -> str:
    """The tenant a principal record is written in: always the bundle's own. A principal that
    names another tenant is refused by `validate_bundle` (issue 17: an ingest for one tenant
    must not change how another tenant's subjects resolve)."""
    del principal  # its `tenant`, if given, may only repeat the bundle's
    return bundle.tenant


def rel_type_of_key(key: str) -> RelType | None:
    """The relationship type a key starts with (`TYPE|...`), or None."""
    head = key.split("|", 1)[0]
    try:
        return RelType(head)
    except ValueError:
        return None


def _nodeish(bundle: Bundle) -> Iterator[tuple[str, int, str, datetime | None]]:
    """(section, index, id, recorded_at) for everything stored as a node record."""
    for i, s in enumerate(bundle.sources):
        yield "sources", i, s.source_id, s.recorded_at
    for i, n in enumerate(bundle.nodes):
        yield "nodes", i, n.id, n.recorded_at
    for i, d in enumerate(bundle.documents):
        yield "documents", i, d.id, d.recorded_at


def _history_ok(entries: list[tuple[Where, datetime | None]]) -> bool:
    # Several entries of one id are a history only if each says when it was recorded.
    stamps = [recorded for _, recorded in entries]
    return all(s is not None for s in stamps) and len(set(stamps)) == len(stamps)


def _look_alike_principals(
    principals: dict[TenantId, list[Where]],
    existing: ExistingElements,
    problem: Callable[[Where, str], None],
) -> None:
    """Refuse a new principal id that reads like another principal id of its tenant (a
    Cyrillic а for a Latin a, a fullwidth letter): runs, traces and the ledger name their
    subject by id, and an auditor must be able to tell whose run it was. An id already in
    the graph is not refused again (refusing it would remove nothing)."""
    by_tenant: dict[str, set[str]] = defaultdict(set)
    for tenant, ident in principals:
        by_tenant[tenant].add(ident)
    for tenant, new_ids in sorted(by_tenant.items()):
        held = existing.principal_ids.get(tenant, set())
        readers: dict[str, set[str]] = defaultdict(set)
        for ident in held | new_ids:
            for reading in look_alike_readings(ident):
                readers[reading].add(ident)
        for ident in sorted(new_ids - held):
            alike = sorted(
                {other for r in look_alike_readings(ident) for other in readers[r]} - {ident}
            )
            if alike:
                problem(
                    principals[(tenant, ident)][0],
                    f"principal id {ident!a} looks like principal {alike[0]!a} of tenant "
                    f"{tenant!r} (letters of another script or width): give it an id that "
                    "cannot be mistaken for it",
                )


def case_look_alike_principals(
    loaded: LoadedBundle, existing: ExistingElements | None = None
) -> list[str]:
    """One line per principal id of `loaded` that differs from another principal id of its
    tenant (in the bundle, or in `existing`) only in letter case (`user:Bob` beside
    `user:bob`): ids are case sensitive, so they are two subjects with their own grants and
    runs, and the operator should hear of it, as of runbook ids (a warning: both are
    written). Each pair is said once."""
    where: dict[TenantId, str] = {}
    for part in loaded.parts:
        for principal in part.bundle.principals:
            where.setdefault((principal_tenant(part.bundle, principal), principal.id), part.origin)
    lines = []
    for tenant in sorted({t for t, _ in where}):
        new_ids = {ident for t, ident in where if t == tenant}
        held = (existing.principal_ids.get(tenant, set()) if existing else set()) - new_ids
        folded: dict[str, set[str]] = defaultdict(set)
        for ident in new_ids | held:
            folded[ident.casefold()].add(ident)
        for ident in sorted(new_ids):
            # Each pair once: from the first id of the bundle, or against the tenant's.
            others = [
                o for o in sorted(folded[ident.casefold()] - {ident}) if o > ident or o in held
            ]
            if not others:
                continue
            named = ", ".join(
                f"{o} ({where[(tenant, o)]})" if o in new_ids else f"{o} (in the tenant)"
                for o in others
            )
            lines.append(
                f"principal id {ident} ({where[(tenant, ident)]}) differs from {named} only in "
                f"letter case in tenant {tenant}: ids are case sensitive, so they are separate "
                "subjects, each with its own grants and runs (--subject names one exactly)"
            )
    return lines


def recreated_principals(loaded: LoadedBundle, existing: ExistingElements) -> list[str]:
    """One line per principal id of `loaded` whose current record in its tenant is a
    retraction: written again, it is a new principal (a new incarnation), which does not read
    the earlier one's runs (a warning: it is written)."""
    lines = []
    seen: set[TenantId] = set()
    for part in loaded.parts:
        for principal in part.bundle.principals:
            tenant = principal_tenant(part.bundle, principal)
            if (tenant, principal.id) in seen:
                continue
            seen.add((tenant, principal.id))
            if principal.id in existing.retracted_principals.get(tenant, set()):
                lines.append(
                    f"principal id {principal.id} ({part.origin}) was retracted in tenant "
                    f"{tenant} and is written again: a new principal of that id, which does "
                    "not read the earlier one's runs (an auditor reads them, marked as an "
                    "earlier principal of this id)"
                )
    return lines


def validate_bundle(
    loaded: LoadedBundle,
    existing: ExistingElements | None = None,
    *,
    now: datetime,
) -> list[BundleProblem]:
    """Every cross-element problem of `loaded`, as `file: element: reason` problems."""
    existing = existing or ExistingElements()
    problems: list[BundleProblem] = []

    def problem(where: Where | ElementRef, reason: str) -> None:
        ref = _ref(where)
        problems.append(BundleProblem(origin=ref.origin, element=ref.element, reason=reason))

    node_entries: dict[TenantId, list[tuple[Where, datetime | None]]] = defaultdict(list)
    node_kind: dict[TenantId, str] = {}
    edge_entries: dict[TenantId, list[tuple[Where, datetime | None]]] = defaultdict(list)
    sources: set[TenantId] = set(existing.sources)
    principals: dict[TenantId, list[Where]] = defaultdict(list)

    for part in loaded.parts:
        b = part.bundle
        origin = part.origin
        for section, index, ident, recorded in _nodeish(b):
            where = (origin, section, index, ident)
            node_entries[(b.tenant, ident)].append((where, recorded))
            previous = node_kind.setdefault((b.tenant, ident), section)
            if previous != section:
                problem(where, f"id {ident!r} is already used in {previous}")
        for source in b.sources:
            sources.add((b.tenant, source.source_id))
        for index, principal in enumerate(b.principals):
            where = (origin, "principals", index, principal.id)
            principals[(principal_tenant(b, principal), principal.id)].append(where)
        for index, edge in enumerate(b.edges):
            key = edge.edge_key
            edge_entries[(b.tenant, key)].append(((origin, "edges", index, key), edge.recorded_at))
        for doc_index, doc in enumerate(b.documents):
            where = (origin, "documents", doc_index, doc.id)
            for key in _document_edge_keys(doc):
                edge_entries[(b.tenant, key)].append((where, doc.recorded_at))

    for (tenant, ident), entries in node_entries.items():
        if len(entries) > 1 and not _history_ok(entries):
            for ref, _ in entries[1:]:
                problem(
                    ref,
                    f"duplicate id {ident!r} in tenant {tenant!r} (repeat an id only as a "
                    "history: every entry with its own explicit recorded_at)",
                )
    for (tenant, ident), refs in principals.items():
        for ref in refs[1:]:
            problem(ref, f"duplicate principal {ident!r} in tenant {tenant!r}")
        if (tenant, ident) in node_entries:
            problem(refs[0], f"principal id {ident!r} is also used by another element")
    _look_alike_principals(principals, existing, problem)
    for (tenant, key), entries in edge_entries.items():
        if len(entries) > 1 and not _history_ok(entries):
            for ref, _ in entries[1:]:
                problem(ref, f"duplicate relationship key {key!r} in tenant {tenant!r}")

    known_ids = set(existing.ids) | set(node_entries) | set(principals)
    known_keys = set(existing.edge_keys) | set(edge_entries)

    def check_time(ref: Where, what: str, value: datetime | None) -> None:
        if value is not None and value > now:
            problem(ref, f"{what} {value.isoformat()} is in the future (the KG cannot know it yet)")

    def check_source(ref: Where, tenant: str, source_id: str | None) -> None:
        if source_id is None:
            problem(ref, "source_id is missing (give one, or --source-id)")
        elif (tenant, source_id) not in sources:
            problem(ref, f"source {source_id!r} is not defined in tenant {tenant!r}")

    def check_ref(ref: Where, tenant: str, what: str, target: str) -> None:
        if (tenant, target) not in known_ids:
            problem(ref, f"{what} {target!r} does not exist in tenant {tenant!r}")

    for part in loaded.parts:
        b, origin = part.bundle, part.origin
        tenant = b.tenant
        for index, source in enumerate(b.sources):
            ref = (origin, "sources", index, source.source_id)
            check_time(ref, "recorded_at", source.recorded_at)
        for index, principal in enumerate(b.principals):
            ref = (origin, "principals", index, principal.id)
            if principal.tenant is not None and principal.tenant != tenant:
                problem(
                    ref,
                    f"tenant {principal.tenant!r} is not the bundle's tenant {tenant!r}: a "
                    "bundle writes only its own tenant (give that tenant's principals a bundle "
                    "of their own)",
                )
            check_time(ref, "recorded_at", principal.recorded_at)
            if principal.source_id is not None:
                check_source(ref, principal_tenant(b, principal), principal.source_id)
        for index, node in enumerate(b.nodes):
            # The common case (a known source, times in the past) costs no call.
            if (tenant, node.source_id) in sources and not (
                (node.recorded_at is not None and node.recorded_at > now)
                or (node.observed_at is not None and node.observed_at > now)
            ):
                continue
            ref = (origin, "nodes", index, node.id)
            check_source(ref, b.tenant, node.source_id)
            check_time(ref, "recorded_at", node.recorded_at)
            check_time(ref, "observed_at", node.observed_at)
        for index, doc in enumerate(b.documents):
            ref = (origin, "documents", index, doc.id)
            check_source(ref, b.tenant, doc.source_id)
            check_time(ref, "recorded_at", doc.recorded_at)
            check_time(ref, "observed_at", doc.observed_at)
            if doc.supersedes is not None:
                if doc.supersedes == doc.id:
                    problem(ref, "a document cannot supersede itself")
                else:
                    check_ref(ref, b.tenant, "supersedes", doc.supersedes)
            for target in doc.applies_to:
                check_ref(ref, b.tenant, "applies_to", target)
        for index, edge in enumerate(b.edges):
            if (
                (tenant, edge.source_id) in sources
                and (tenant, edge.from_) in known_ids
                and (tenant, edge.to) in known_ids
                and (edge.recorded_at is None or edge.recorded_at <= now)
                and (edge.observed_at is None or edge.observed_at <= now)
                and (edge.key is None or rel_type_of_key(edge.key) is edge.type)
            ):
                continue  # the common case, checked without a call
            ref = (origin, "edges", index, edge.edge_key)
            check_source(ref, b.tenant, edge.source_id)
            check_time(ref, "recorded_at", edge.recorded_at)
            check_time(ref, "observed_at", edge.observed_at)
            check_ref(ref, b.tenant, "from", edge.from_)
            check_ref(ref, b.tenant, "to", edge.to)
            if edge.key is not None and rel_type_of_key(edge.key) is not edge.type:
                problem(ref, f"key {edge.key!r} must start with {edge.type.value + '|'!r}")
        for index, retraction in enumerate(b.retractions):
            ref = (origin, "retractions", index, retraction.target)
            check_time(ref, "at", retraction.at)
            if retraction.id is not None:
                check_ref(ref, b.tenant, "retracted id", retraction.id)
            else:
                key = str(retraction.key)
                if rel_type_of_key(key) is None:
                    problem(ref, f"key {key!r} does not start with a relationship type")
                elif (b.tenant, key) not in known_keys:
                    problem(ref, f"retracted key {key!r} does not exist in tenant {b.tenant!r}")
    return problems


def _document_edge_keys(doc: DocumentSpec) -> list[str]:
    keys = [f"{RelType.APPLIES_TO.value}|{doc.id}|{target}" for target in doc.applies_to]
    if doc.supersedes is not None:
        keys.append(f"{RelType.SUPERSEDES.value}|{doc.id}|{doc.supersedes}")
    return keys


def document_edge_keys(doc: DocumentSpec) -> list[str]:
    """Keys of the APPLIES_TO / SUPERSEDES relationships a document produces."""
    return _document_edge_keys(doc)


def referenced_ids(loaded: LoadedBundle) -> set[TenantId]:
    """Every (tenant, id) the bundle refers to (to look up in the graph)."""
    refs: set[TenantId] = set()
    for part in loaded.parts:
        b = part.bundle
        for edge in b.edges:
            refs.add((b.tenant, edge.from_))
            refs.add((b.tenant, edge.to))
        for doc in b.documents:
            refs.update((b.tenant, t) for t in doc.applies_to)
            if doc.supersedes:
                refs.add((b.tenant, doc.supersedes))
        for retraction in b.retractions:
            if retraction.id is not None:
                refs.add((b.tenant, retraction.id))
    return refs


def defined_ids(loaded: LoadedBundle) -> set[TenantId]:
    """Every (tenant, id) the bundle itself defines (sources, principals, nodes, documents)."""
    ids: set[TenantId] = set()
    for part in loaded.parts:
        b = part.bundle
        ids.update((b.tenant, ident) for _, _, ident, _ in _nodeish(b))
        ids.update((principal_tenant(b, p), p.id) for p in b.principals)
    return ids


def referenced_sources(loaded: LoadedBundle) -> set[TenantId]:
    """Every (tenant, source_id) the bundle's elements name."""
    refs: set[TenantId] = set()
    for part in loaded.parts:
        b = part.bundle
        for spec in (*b.nodes, *b.edges, *b.documents):
            if spec.source_id:
                refs.add((b.tenant, spec.source_id))
        for principal in b.principals:
            if principal.source_id:
                refs.add((principal_tenant(b, principal), principal.source_id))
    return refs


def referenced_keys(loaded: LoadedBundle) -> set[TenantId]:
    """Every (tenant, key) a retraction names."""
    return {
        (part.bundle.tenant, str(r.key))
        for part in loaded.parts
        for r in part.bundle.retractions
        if r.key is not None
    }


__all__ = [
    "ExistingElements",
    "case_look_alike_principals",
    "defined_ids",
    "document_edge_keys",
    "principal_tenant",
    "referenced_ids",
    "referenced_keys",
    "referenced_sources",
    "rel_type_of_key",
    "validate_bundle",
]
