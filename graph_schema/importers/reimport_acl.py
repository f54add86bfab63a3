"""The ACL of a re-import: what the source's records already carry, and who holds a label.

`investigator ingest --format ...` uses these so that a re-import without `--acl` keeps the
ACL of the records it re-imports (omitting the flag means "unchanged", not "public"), an
explicit `--acl` that would change it is refused unless `--acl-change` says so, and a label
no principal of the tenant holds is warned about (docs/runbooks.md, "Who may read").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import neo4j
from pydantic import BaseModel, ConfigDict

from graph_schema.bundle import Bundle, DocumentSpec, NodeSpec
from graph_schema.kg_types import RecordStatus

_READ_BATCH = 10000
_CURRENT_ACLS = (
    "UNWIND $ids AS id MATCH (n:KG {tenant: $tenant, id: id}) "
    "WHERE n.superseded_at IS NULL AND n.status = $active AND n.source_id = $source "
    "AND NOT n:Source RETURN n.id AS id, n.acl AS acl"
)
# The Source records the import names, and the ACL of every current record of those sources,
# of any status: a tombstone keeps the labels of the record it retracted.
_SOURCE_RECORDS = (
    "MATCH (s:KG:Source {tenant: $tenant}) WHERE s.id IN $sources AND s.superseded_at IS NULL "
    "RETURN s.id AS id, s.acl AS acl"
)
_SOURCE_ACLS = (
    "MATCH (n:KG {tenant: $tenant}) WHERE n.source_id IN $sources AND n.superseded_at IS NULL "
    "AND NOT n:Source RETURN DISTINCT coalesce(n.acl, []) AS acl"
)
_HELD_LABELS = (
    "MATCH (p:KG:Principal {tenant: $tenant}) "
    "WHERE p.superseded_at IS NULL AND p.status = $active "
    "UNWIND coalesce(p.labels, []) AS label RETURN DISTINCT label"
)


def _records(bundle: Bundle) -> list[NodeSpec | DocumentSpec]:
    return [*bundle.nodes, *bundle.documents]


class AclChange(BaseModel):
    """One record a re-import would give another ACL."""

    model_config = ConfigDict(frozen=True)

    id: str
    before: tuple[str, ...]
    after: tuple[str, ...]


def current_acls(
    driver: neo4j.Driver, database: str | None, bundle: Bundle
) -> dict[str, list[str]]:
    """The ACL of the current record of each node and document the bundle defines, where
    that record comes from the same source (a record of another source is the writer's
    `SourceTakeover`, not an ACL question)."""
    by_source: dict[str, list[str]] = {}
    for spec in _records(bundle):
        if spec.source_id:
            by_source.setdefault(spec.source_id, []).append(spec.id)
    acls: dict[str, list[str]] = {}
    for source, ids in sorted(by_source.items()):
        for start in range(0, len(ids), _READ_BATCH):
            records, _, _ = driver.execute_query(
                _CURRENT_ACLS,
                ids=ids[start : start + _READ_BATCH],
                tenant=bundle.tenant,
                source=source,
                active=RecordStatus.ACTIVE.value,
                database_=database,
                routing_=neo4j.RoutingControl.READ,
            )
            acls.update({r["id"]: sorted(r["acl"] or []) for r in records})
    return acls


class SourceAcls(BaseModel):
    """What the sources of a re-import already say about who may read: the distinct ACLs of
    their current records (tombstones too) and the ACL of each Source record."""

    model_config = ConfigDict(frozen=True)

    records: tuple[tuple[str, ...], ...] = ()
    sources: dict[str, tuple[str, ...]] = {}

    def labels(self) -> list[str] | None:
        """The labels a new file of the source gets without `--acl`: those every record
        carries, when some record carries exactly those (the shape one `--acl` plus front
        matter labels of some files gives) and, if the records differ, the Source record's
        labels are among them; else None (the records disagree). With no record but the
        Source record, its labels; with neither (a first import), none."""
        if not self.records:
            return sorted(set().union(*self.sources.values())) if self.sources else []
        common = common_labels(self.records)
        if tuple(common) not in self.records:
            return None
        declared = set().union(*self.sources.values()) if self.sources else set()
        if len(self.records) > 1 and not declared <= set(common):
            return None
        return common


def source_acls(driver: neo4j.Driver, database: str | None, bundle: Bundle) -> SourceAcls:
    """The ACLs the current records of the bundle's sources carry in its tenant (nothing is
    read when no Source record exists yet: a first import)."""
    sources = sorted({s.source_id for s in _records(bundle) if s.source_id})
    if not sources:
        return SourceAcls()
    params: dict[str, Any] = {"tenant": bundle.tenant, "sources": sources}
    found, _, _ = driver.execute_query(
        _SOURCE_RECORDS, params, database_=database, routing_=neo4j.RoutingControl.READ
    )
    if not found:
        return SourceAcls()
    records, _, _ = driver.execute_query(
        _SOURCE_ACLS, params, database_=database, routing_=neo4j.RoutingControl.READ
    )
    return SourceAcls(
        records=tuple(sorted({tuple(sorted(r["acl"])) for r in records})),
        sources={r["id"]: tuple(sorted(r["acl"] or [])) for r in found},
    )


def common_labels(acls: Iterable[Sequence[str]]) -> list[str]:
    """The labels every one of `acls` carries: the `--acl` the records were imported with
    (plus any label the front matter of every file names)."""
    sets = [set(acl) for acl in acls]
    return sorted(set.intersection(*sets)) if sets else []


def with_labels(bundle: Bundle, labels: Sequence[str]) -> Bundle:
    """`bundle` with `labels` added to the ACL of every node, edge and document: what the
    importer builds when given them as `--acl` (its ACL is `--acl` plus the file's own)."""
    if not labels:
        return bundle

    def add(specs: Sequence[Any]) -> list[Any]:
        return [s.model_copy(update={"acl": sorted(set(s.acl or []) | set(labels))}) for s in specs]

    return bundle.model_copy(
        update={
            "nodes": add(bundle.nodes),
            "edges": add(bundle.edges),
            "documents": add(bundle.documents),
        }
    )


def acl_changes(bundle: Bundle, current: Mapping[str, Sequence[str]]) -> list[AclChange]:
    """The records of `current` whose ACL the bundle's element of the same id changes."""
    changes = []
    for spec in _records(bundle):
        before = current.get(spec.id)
        after = sorted(spec.acl or [])
        if before is not None and sorted(before) != after:
            changes.append(AclChange(id=spec.id, before=tuple(sorted(before)), after=tuple(after)))
    return changes


def most_common_change(changes: Sequence[AclChange]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The (before, after) pair most of `changes` share (ties: the first in sorted order)."""
    counts = Counter((c.before, c.after) for c in changes)
    return min(counts, key=lambda pair: (-counts[pair], pair))


def held_labels(driver: neo4j.Driver, database: str | None, tenant: str) -> set[str]:
    """Every label some current principal of `tenant` holds."""
    records, _, _ = driver.execute_query(
        _HELD_LABELS,
        tenant=tenant,
        active=RecordStatus.ACTIVE.value,
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    return {r["label"] for r in records}


def unheld_labels(bundle: Bundle, held: set[str]) -> dict[str, int]:
    """Each ACL label of the bundle's nodes and documents that no principal holds, with how
    many of them carry it: nobody can read those records."""
    counts: Counter[str] = Counter()
    for spec in _records(bundle):
        counts.update(label for label in set(spec.acl or []) if label not in held)
    return dict(sorted(counts.items()))
