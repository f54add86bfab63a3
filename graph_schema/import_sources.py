"""An import's source is written by that import only (docs/security.md, rule 8).

`ingest --format markdown-runbooks|prometheus-rules` writes a Source record of its own
`source_type` and its records under it; the import's next run compares the folder or file
with those records (`removed:` for a record whose file it does not have). A bundle that
wrote under that source, or retracted one of its records, would change what the import
holds behind its back. `check_bundle_writes` refuses such a bundle before anything is
written; `graph_schema.writer.ingest_bundle` calls it for every bundle, whoever calls the
writer (the CLI, a library user, a benchmark), and not for an import's own bundle
(`LoadedBundle.import_source_type`), whose source `graph_schema.importers.dispatch` checks
before a file is read.

The one way to retract an import's records is the operator's word: a bundle of retractions
only, ingested with `--source-id` naming that import's source (`LoadedBundle.source_override`).
No element of a file can say it (a retraction carries no source).
"""

from __future__ import annotations

from collections import defaultdict

import neo4j

from graph_schema.bundle import LoadedBundle, and_more
from graph_schema.kg_types import RelType, RelTypeStatement, Trust
from graph_schema.validate import referenced_sources, rel_type_of_key

# The `source_type` of the Source record each import format writes, and that format.
IMPORT_FORMATS = {"markdown_runbooks": "markdown-runbooks", "prometheus_rules": "prometheus-rules"}

# The current Source records of an import's type among (tenant, id) pairs.
_IMPORT_SOURCES = (
    "UNWIND $refs AS ref MATCH (n:KG:Source {tenant: ref.tenant, id: ref.id}) "
    "WHERE n.superseded_at IS NULL AND n.source_type IN $types "
    "RETURN n.tenant AS tenant, n.id AS id, n.source_type AS source_type, n.trust AS trust "
    "ORDER BY n.tenant, n.id"
)
# Who holds what a retraction names: the source of its current record (a Source record is
# its own source).
_NODE_HOLDERS = (
    "UNWIND $rows AS row MATCH (n:KG {tenant: row.tenant, id: row.id}) "
    "WHERE n.superseded_at IS NULL "
    "RETURN row.tenant AS tenant, row.id AS target, "
    "CASE WHEN n:Source THEN n.id ELSE n.source_id END AS holder"
)
_EDGE_HOLDERS = RelTypeStatement(
    "UNWIND $rows AS row MATCH ()-[r:REL_TYPE]->() "
    "WHERE r.tenant = row.tenant AND r.key = row.key AND r.superseded_at IS NULL "
    "RETURN row.tenant AS tenant, row.key AS target, r.source_id AS holder"
)


class ImportSourceInBundle(ValueError):
    """A bundle declaring a source of an import's type, writing under (or redeclaring) a
    source an import wrote, or retracting a record such a source holds: only that import
    writes its source's records. Nothing written."""

    def __init__(
        self,
        source_id: str,
        source_type: str,
        trust: str | None = None,
        retracted: tuple[str, ...] = (),
    ):
        self.source_id = source_id
        self.source_type = source_type
        self.trust = trust  # None: the bundle declares it (no such source in the KG)
        self.retracted = retracted  # the ids and keys of its records the bundle retracts
        super().__init__(self.line())

    def line(self) -> str:
        """The refusal in one line, and the way on."""
        fmt = IMPORT_FORMATS[self.source_type]
        if self.trust is None:
            return (
                f"ingest refused: the bundle declares source {self.source_id} of type "
                f"{self.source_type}, an import's: only `ingest --format {fmt}` writes such a "
                "source; nothing written; give it a source_type of its own"
            )
        article = "an" if self.trust[:1] in "aeiou" else "a"
        kind = f"{article} {self.trust} {self.source_type} source"
        if self.retracted:
            first, *others = self.retracted
            return (
                f"ingest refused: {first} is held by source {self.source_id}, {kind}, an "
                "import's: a bundle never retracts its records unless the operator names that "
                f"source{and_more(others)}; nothing written; to retract them, ingest the "
                f"retractions alone with --source-id {self.source_id}"
            )
        return (
            f"ingest refused: source {self.source_id} is {kind}, an import's: a bundle never "
            "writes under it (the import's next run would list the bundle's records as "
            "removed); nothing written; give the records a source of the bundle's own, or "
            f"change them by re-importing (ingest --format {fmt})"
        )


def _retractions_only(loaded: LoadedBundle) -> bool:
    return all(
        not (b.sources or b.principals or b.nodes or b.edges or b.documents)
        for b in (part.bundle for part in loaded.parts)
    )


def _holders(
    driver: neo4j.Driver, loaded: LoadedBundle, database: str | None
) -> dict[tuple[str, str], list[str]]:
    """(tenant, holding source id) -> the targets of the bundle's retractions it holds."""
    node_rows: list[dict[str, str]] = []
    edge_rows: dict[RelType, list[dict[str, str]]] = defaultdict(list)
    for part in loaded.parts:
        tenant = part.bundle.tenant
        for r in part.bundle.retractions:
            if r.id is not None:
                node_rows.append({"tenant": tenant, "id": r.id})
                continue
            rel_type = rel_type_of_key(str(r.key))
            if rel_type is not None:  # else validation names the key
                edge_rows[rel_type].append({"tenant": tenant, "key": str(r.key)})
    statements = [(_NODE_HOLDERS, node_rows)] if node_rows else []
    statements += _EDGE_HOLDERS.batches(edge_rows)
    held: dict[tuple[str, str], list[str]] = defaultdict(list)
    for statement, rows in statements:
        records, _, _ = driver.execute_query(
            statement, rows=rows, database_=database, routing_=neo4j.RoutingControl.READ
        )
        for record in records:
            if record["holder"] is not None:
                key = (str(record["tenant"]), str(record["holder"]))
                held[key].append(str(record["target"]))
    return held


def check_bundle_writes(
    driver: neo4j.Driver, loaded: LoadedBundle, database: str | None = None
) -> None:
    """Raise `ImportSourceInBundle` when the bundle `loaded` (after the caller's overrides)
    declares a source of an import's type, declares or names as its elements' source_id a
    current Source record of an import's type, or retracts a record such a source holds
    (allowed only to a bundle of retractions only whose `source_override` names that
    source). A no-op for an import's own bundle (`loaded.import_source_type`)."""
    if loaded.import_source_type is not None:
        return
    for part in loaded.parts:
        for source in part.bundle.sources:
            if source.source_type in IMPORT_FORMATS:
                raise ImportSourceInBundle(source.source_id, source.source_type)
    refs = referenced_sources(loaded) | {
        (part.bundle.tenant, s.source_id) for part in loaded.parts for s in part.bundle.sources
    }
    retracting = any(part.bundle.retractions for part in loaded.parts)
    held = _holders(driver, loaded, database) if retracting else {}
    if not refs and not held:
        return
    records, _, _ = driver.execute_query(
        _IMPORT_SOURCES,
        refs=[{"tenant": tenant, "id": ident} for tenant, ident in sorted(refs | set(held))],
        types=sorted(IMPORT_FORMATS),
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    # Writing under an import's source first: it is refused whatever the bundle retracts.
    for record in records:
        if (record["tenant"], record["id"]) in refs:
            raise _refusal(record)
    allowed = loaded.source_override if _retractions_only(loaded) else None
    for record in records:
        targets = held.get((record["tenant"], record["id"]))
        if targets and record["id"] != allowed:
            raise _refusal(record, tuple(sorted(targets)))


def _refusal(record: neo4j.Record, retracted: tuple[str, ...] = ()) -> ImportSourceInBundle:
    trust = str(record["trust"] or Trust.TRUSTED.value)
    return ImportSourceInBundle(
        str(record["id"]), str(record["source_type"]), trust, retracted=retracted
    )


__all__ = ["IMPORT_FORMATS", "ImportSourceInBundle", "check_bundle_writes"]
