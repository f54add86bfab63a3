"""Which elements a bundle ingest held, so its next ingest can say which are absent now.

A record ends only by a retraction (docs/contracts.md): an element deleted from a bundle file
and the file ingested again stays current, as the Markdown and rules imports' `removed:` lines
say of theirs. A bundle said nothing. After each bundle ingest the tenant gets one
`:BundleElements` node per path ingested (its own label, never `:KG`, so no template reads
it and no ingest mark counts it) holding the ids of the nodes, documents and principals the
path's bundles held; the next ingest of the same path names those that are absent from it,
not retracted by it, and still current (and keeps them: said again at each ingest of the
path until they are retracted or back in it). Relationships are not followed (their keys are
read by type). A path of more than MAX_REMEMBERED ids is not remembered (`complete` false):
its next ingest says nothing rather than something partial.
"""

from __future__ import annotations

from pathlib import Path

import neo4j

from graph_schema.bundle import LoadedBundle

LABEL = "BundleElements"
MAX_REMEMBERED = 50_000
SHOWN = 10

_READ = (
    "MATCH (b:BundleElements {tenant: $tenant, path: $path}) "
    "RETURN b.ids AS ids, b.complete AS complete LIMIT 1"
)
_RECORD = (
    "MERGE (b:BundleElements {tenant: $tenant, path: $path}) "
    "SET b.ids = $ids, b.complete = $complete"
)
_STILL_CURRENT = (
    "UNWIND $ids AS id MATCH (n:KG {tenant: $tenant, id: id}) "
    "WHERE n.superseded_at IS NULL AND n.status = 'active' "
    "RETURN DISTINCT id ORDER BY id"
)


def _ids_by_tenant(loaded: LoadedBundle) -> dict[str, tuple[set[str], set[str]]]:
    """tenant -> (the ids the bundles hold, the ids they retract)."""
    found: dict[str, tuple[set[str], set[str]]] = {}
    for part in loaded.parts:
        bundle = part.bundle
        held, retracted = found.setdefault(bundle.tenant, (set(), set()))
        held.update(n.id for n in bundle.nodes)
        held.update(d.id for d in bundle.documents)
        held.update(p.id for p in bundle.principals)
        retracted.update(r.id for r in bundle.retractions if r.id is not None)
    return found


def absent_since_last_ingest(
    driver: neo4j.Driver, path: Path, loaded: LoadedBundle, database: str | None
) -> list[str]:
    """One line per tenant naming the ids the last ingest of `path` held that this one does
    not and that are still current; then remembers this ingest's ids."""
    where = str(path.resolve())
    lines = []
    for tenant, (held, retracted) in sorted(_ids_by_tenant(loaded).items()):
        records, _, _ = driver.execute_query(_READ, tenant=tenant, path=where, database_=database)
        still: list[str] = []
        if records and records[0]["complete"]:
            gone = sorted(set(records[0]["ids"] or []) - held - retracted)
            if gone:
                current, _, _ = driver.execute_query(
                    _STILL_CURRENT, tenant=tenant, ids=gone, database_=database
                )
                still = [str(r["id"]) for r in current]
                if still:
                    lines.append(_line(tenant, still))
        # Those absent and still current are remembered too: said again until retracted.
        kept = held | set(still)
        complete = len(kept) <= MAX_REMEMBERED
        ids = sorted(kept) if complete else []
        if records and records[0]["complete"] == complete and list(records[0]["ids"]) == ids:
            continue  # remembered as it is (a re-ingest of the same bundle writes nothing)
        driver.execute_query(
            _RECORD,
            tenant=tenant,
            path=where,
            ids=ids,
            complete=complete,
            database_=database,
        )
    return lines


def _line(tenant: str, ids: list[str]) -> str:
    shown = ", ".join(ids[:SHOWN]) + (f", and {len(ids) - SHOWN} more" if len(ids) > SHOWN else "")
    s = "s" if len(ids) > 1 else ""
    return (
        f"absent: {len(ids)} element{s} of tenant {tenant} that an earlier ingest of this "
        f"path held {'are' if s else 'is'} not in it now: {shown}; "
        f"{'they stay' if s else 'it stays'} current (only a retraction ends a record: add "
        "one to the bundle's `retractions`, docs/contracts.md)"
    )
