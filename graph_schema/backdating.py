"""No record dated into what a recorded run saw.

A run reads the KG as known at its `known_at`: every record with `recorded_at <= known_at`.
An ingest that dates a new KG record (or a retraction) at or before the `known_at` of a run
already recorded in the tenant would change what that run saw: its replay would drift, and a
new question asked `--known-at` that moment would be told the KG knew something it did not.
So the caller names, per tenant, the latest `known_at` of its recorded runs (a `RecordFloor`),
and the writer refuses, before writing anything, every explicit `recorded_at` (or retraction
`at`) at or before it. Records without an explicit time are recorded at the ingest time, which
is after every run. Source and Principal records are not checked: they are read as of now
(grants, source policy), never at a run's known_at. The caller may pass no floors (an
operator loading curated history on purpose: `investigator ingest --backdate`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import neo4j
from pydantic import BaseModel, ConfigDict

from graph_schema.bundle import BundleProblem, LoadedBundle, and_more
from graph_schema.canonical import iso_utc
from graph_schema.record_floor import RecordFloor


class Backdated(BaseModel):
    """One record the ingest would date at or before a recorded run's known_at."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    target: str  # the id or relationship key
    at: datetime
    floor: RecordFloor
    # A retraction's `at` (it has no recorded_at, and its `at` is required): hinted otherwise.
    retraction: bool = False

    def text(self) -> str:
        return (
            f"{self.target} would be recorded at {iso_utc(self.at)}, not after run "
            f"{self.floor.run_id} of tenant {self.tenant}, which saw the KG as known at "
            f"{iso_utc(self.floor.at)}"
        )


def backdated(
    times: Iterable[tuple[str, str, datetime]],
    floors: Mapping[str, RecordFloor],
    retractions: Collection[tuple[str, str]] = (),
) -> list[Backdated]:
    """The (tenant, target, recorded_at) at or before their tenant's floor, sorted;
    `retractions`: the (tenant, target) whose time is a retraction's `at`."""
    found = {
        (tenant, target, at): Backdated(
            tenant=tenant,
            target=target,
            at=at,
            floor=floor,
            retraction=(tenant, target) in retractions,
        )
        for tenant, target, at in times
        if (floor := floors.get(tenant)) is not None and at <= floor.at
    }
    return [found[key] for key in sorted(found)]


def explicit_times(loaded: LoadedBundle) -> list[tuple[str, str, datetime]]:
    """Every explicit `recorded_at` (and retraction `at`) of a bundle's KG records (nodes,
    documents, relationships; not the sources and principals, which no run reads at its
    known_at), with its tenant and target: on a tenant's first ingest each is the time its
    new record gets."""
    out: list[tuple[str, str, datetime]] = []
    for part in loaded.parts:
        bundle = part.bundle
        tenant = bundle.tenant
        # Not sources or principals: their records are read as of now, never at a known_at.
        specs: Sequence[tuple[str, datetime | None]] = [
            *((n.id, n.recorded_at) for n in bundle.nodes),
            *((d.id, d.recorded_at) for d in bundle.documents),
            *((e.edge_key, e.recorded_at) for e in bundle.edges),
            *((r.target, r.at) for r in bundle.retractions),
        ]
        out += [(tenant, str(target), at) for target, at in specs if at is not None]
    return out


class BackdatedRecords(Exception):
    """The ingest would date records into what a recorded run saw; nothing was written.
    `line()` is the one line for the user."""

    def __init__(self, found: Sequence[Backdated]) -> None:
        self.found = list(found)
        self.problems = [
            BundleProblem(origin="graph", element=b.target, reason=b.text()) for b in self.found
        ]
        super().__init__(self.line())

    def line(self) -> str:
        """`ingest refused: ID would be recorded at T, not after run R ...: ...`."""
        first, *others = self.found
        tail = and_more([b.target for b in others])
        hint = (
            f"Give its retraction an `at` after {iso_utc(first.floor.at)} to retract it from "
            "then on"
            if first.retraction
            else "Omit its recorded_at to record it now"
        )
        return (
            f"ingest refused: {first.text()}; a record dated then would change what that run "
            f"saw. {hint}, or load curated history with --backdate{tail}"
        )


# One marker per tenant an ingest --backdate dated records into the time recorded runs saw:
# not `:KG` (no template reads it); replay names it, and the records of it the replaying
# subject may read, as the likely cause of rows a run's reads return now and did not then
# (investigator/replay.py). `retracted`: the targets that are retractions.
_RECORD_BACKDATED_INGEST = (
    "UNWIND $rows AS row CREATE (m:BackdatedIngest) "
    "SET m.tenant = row.tenant, m.at = $at, m.origin = $origin, m.targets = row.targets, "
    "m.retracted = row.retracted, m.earliest = row.earliest, m.latest = row.latest"
)


class BackdateMarker(BaseModel):
    """What an `ingest --backdate` records (one `:BackdatedIngest` per tenant) in its first
    write transaction: the records it dates at or before each tenant's `floors`, its
    `origin` (the path ingested) and `at` (when)."""

    model_config = ConfigDict(frozen=True)

    floors: dict[str, RecordFloor]
    origin: str
    at: datetime

    def rows(self, loaded: LoadedBundle) -> list[dict[str, Any]]:
        """One row per tenant of `loaded` it dates records into the time runs saw (none:
        nothing to record), every record of it taken as written (a tenant's first ingest)."""
        retractions = {
            (part.bundle.tenant, str(r.target))
            for part in loaded.parts
            for r in part.bundle.retractions
        }
        return self.written_rows(explicit_times(loaded), retractions)

    def written_rows(
        self,
        times: Sequence[tuple[str, str, datetime]],
        retractions: Collection[tuple[str, str]],
    ) -> list[dict[str, Any]]:
        """One row per tenant of the records an ingest writes, `(tenant, id or key, the time
        its new record gets)`, that it dates into the time runs saw; `retractions`: which of
        those targets it tombstones. An element left unchanged is not in `times`: the marker
        names only what changed, the records a replay's drift can come from."""
        by_tenant: dict[str, list[Backdated]] = {}
        for item in backdated(times, self.floors):
            by_tenant.setdefault(item.tenant, []).append(item)
        return [
            {
                "tenant": tenant,
                "targets": sorted({b.target for b in items}),
                "retracted": sorted({b.target for b in items if (tenant, b.target) in retractions}),
                "earliest": min(b.at for b in items),
                "latest": max(b.at for b in items),
            }
            for tenant, items in sorted(by_tenant.items())
        ]


def record_backdated_ingest_in_tx(
    tx: neo4j.ManagedTransaction, rows: Sequence[dict[str, Any]], marker: BackdateMarker
) -> None:
    """Inside the ingest's first write transaction: the `:BackdatedIngest` of each row, so
    the marker commits with the first records it names or not at all."""
    tx.run(_RECORD_BACKDATED_INGEST, rows=list(rows), at=marker.at, origin=marker.origin).consume()
