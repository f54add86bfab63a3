"""An element that states no `acl` keeps the labels of its current record.

A bundle element may leave `acl` out. For a new id or key that means no labels (readable
by every subject of the tenant with the purpose), as always. For an id or key that already
has a record, leaving it out used to mean `[]` too: a re-ingest of a changed bundle that
forgot the field made a restricted record public, exit 0, without a word. Omission now means
"unchanged", as it does for `ingest --format ...` without `--acl`
(graph_schema/importers/reimport_acl.py); an explicit `acl: []` (or any other list) is a
change the bundle states, and is written as given (docs/design.md section 10).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import neo4j
from pydantic import BaseModel, ConfigDict

from graph_schema.bundle import (
    BundlePart,
    DocumentSpec,
    EdgeSpec,
    LoadedBundle,
    NodeSpec,
    SourceSpec,
)
from graph_schema.kg_types import RelType, RelTypeStatement

_READ_BATCH = 10000
# The current record of an id or key, of any status: a tombstone keeps the labels it had.
_NODE_ACLS = (
    "UNWIND $rows AS row MATCH (n:KG {tenant: row.tenant, id: row.id}) "
    "WHERE n.superseded_at IS NULL AND size(coalesce(n.acl, [])) > 0 "
    "RETURN row.tenant AS tenant, row.id AS id, n.acl AS acl"
)
_EDGE_ACLS = RelTypeStatement(
    "UNWIND $rows AS row MATCH ()-[r:REL_TYPE]->() "
    "WHERE r.tenant = row.tenant AND r.key = row.key AND r.superseded_at IS NULL "
    "AND size(coalesce(r.acl, [])) > 0 "
    "RETURN row.tenant AS tenant, row.key AS key, r.acl AS acl"
)


def _read(
    driver: neo4j.Driver,
    database: str | None,
    statement: str,
    rows: list[dict[str, str]],
    ident: str,
) -> dict[tuple[str, str], list[str]]:
    found: dict[tuple[str, str], list[str]] = {}
    for start in range(0, len(rows), _READ_BATCH):
        records, _, _ = driver.execute_query(
            statement,
            rows=rows[start : start + _READ_BATCH],
            database_=database,
            routing_=neo4j.RoutingControl.READ,
        )
        found.update({(r["tenant"], r[ident]): sorted(r["acl"]) for r in records})
    return found


def _without_acl(
    loaded: LoadedBundle,
) -> tuple[set[tuple[str, str]], dict[RelType, set[tuple[str, str]]]]:
    """The (tenant, id) of every source, node and document of `loaded` that gives no `acl`,
    and the (tenant, key) of every such edge, by relationship type."""
    node_rows: set[tuple[str, str]] = set()
    edge_rows: dict[RelType, set[tuple[str, str]]] = defaultdict(set)
    for part in loaded.parts:
        b = part.bundle
        records: list[NodeSpec | DocumentSpec] = [*b.nodes, *b.documents]
        node_rows.update((b.tenant, s.id) for s in records if s.acl is None)
        # A Source record is a node of the tenant like the others (its id is its source_id).
        node_rows.update((b.tenant, s.source_id) for s in b.sources if s.acl is None)
        for edge in b.edges:
            if edge.acl is None:
                edge_rows[edge.type].add((b.tenant, edge.edge_key))
    return node_rows, edge_rows


def _key_rows(
    edge_rows: Mapping[RelType, set[tuple[str, str]]],
) -> dict[RelType, list[dict[str, str]]]:
    return {
        t: [{"tenant": tenant, "key": k} for tenant, k in sorted(keys)]
        for t, keys in edge_rows.items()
    }


def keep_current_acls(
    driver: neo4j.Driver, loaded: LoadedBundle, database: str | None = None
) -> LoadedBundle:
    """`loaded` with every source, node, edge and document that gives no `acl` given the labels of
    the current record of its id or key (when that record has any); `loaded` itself when no
    element omits it or none of those has a labelled record."""
    node_rows, edge_rows = _without_acl(loaded)
    if not node_rows and not edge_rows:
        return loaded
    rows = [{"tenant": t, "id": i} for t, i in sorted(node_rows)]
    nodes = _read(driver, database, _NODE_ACLS, rows, "id")
    edges: dict[tuple[str, str], list[str]] = {}
    for statement, typed_rows in _EDGE_ACLS.batches(_key_rows(edge_rows)):
        edges.update(_read(driver, database, statement, typed_rows, "key"))
    if not nodes and not edges:
        return loaded

    def kept(
        specs: Sequence[NodeSpec | EdgeSpec | DocumentSpec | SourceSpec],
        tenant: str,
        found: dict[tuple[str, str], list[str]],
    ) -> list[Any]:
        out: list[Any] = []
        for spec in specs:
            if isinstance(spec, EdgeSpec):
                ident = spec.edge_key
            elif isinstance(spec, SourceSpec):
                ident = spec.source_id
            else:
                ident = spec.id
            acl = found.get((tenant, ident)) if spec.acl is None else None
            out.append(spec if acl is None else spec.model_copy(update={"acl": acl}))
        return out

    parts = []
    for part in loaded.parts:
        b = part.bundle
        update = {
            "sources": kept(b.sources, b.tenant, nodes),
            "nodes": kept(b.nodes, b.tenant, nodes),
            "edges": kept(b.edges, b.tenant, edges),
            "documents": kept(b.documents, b.tenant, nodes),
        }
        parts.append(BundlePart(origin=part.origin, bundle=b.model_copy(update=update)))
    return loaded.model_copy(
        update={
            "parts": parts,
            "problems": list(loaded.problems),
            "written_notes": list(loaded.written_notes),
        }
    )


# Every current record of an id or key (a record without labels too): the ones `--acl`
# would give other labels.
_ALL_NODE_ACLS = (
    "UNWIND $rows AS row MATCH (n:KG {tenant: row.tenant, id: row.id}) "
    "WHERE n.superseded_at IS NULL AND NOT n:Principal "
    "RETURN row.tenant AS tenant, row.id AS id, coalesce(n.acl, []) AS acl"
)
_ALL_EDGE_ACLS = RelTypeStatement(
    "UNWIND $rows AS row MATCH ()-[r:REL_TYPE]->() "
    "WHERE r.tenant = row.tenant AND r.key = row.key AND r.superseded_at IS NULL "
    "RETURN row.tenant AS tenant, row.key AS key, coalesce(r.acl, []) AS acl"
)


class AclOptionChange(BaseModel):
    """One existing record whose labels an `--acl` default would change."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    id: str
    before: tuple[str, ...]
    after: tuple[str, ...]


def acl_option_changes(
    driver: neo4j.Driver, loaded: LoadedBundle, acl: Sequence[str], database: str | None = None
) -> list[AclOptionChange]:
    """The current records (of each file's own tenant) whose labels `--acl` would change:
    those of the sources, nodes, edges and documents of `loaded` (its tenant already
    overridden, `--acl` not yet applied) that give no `acl`. An element that states one is
    written as it says; an id or key without a record takes `--acl` (a first ingest)."""
    after = tuple(sorted(set(acl)))
    node_rows, edge_rows = _without_acl(loaded)
    # Nodes first: the first change is the refusal's example, an id a reader knows.
    found: dict[tuple[str, str], list[str]] = {}
    if node_rows:
        rows = [{"tenant": t, "id": i} for t, i in sorted(node_rows)]
        found.update(sorted(_read(driver, database, _ALL_NODE_ACLS, rows, "id").items()))
    edges: dict[tuple[str, str], list[str]] = {}
    for statement, typed_rows in _ALL_EDGE_ACLS.batches(_key_rows(edge_rows)):
        edges.update(_read(driver, database, statement, typed_rows, "key"))
    # By type, then tenant and key, whether read in one statement or per type.
    for _, keys in sorted(edge_rows.items()):
        found.update((key, edges[key]) for key in sorted(keys) if key in edges)
    return [
        AclOptionChange(tenant=tenant, id=ident, before=tuple(sorted(set(before))), after=after)
        for (tenant, ident), before in found.items()
        if tuple(sorted(set(before))) != after
    ]
