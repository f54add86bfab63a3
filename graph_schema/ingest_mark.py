"""The ingest mark: re-ingesting an unchanged bundle without the full comparison (issue 12).

A no-op re-ingest used to validate, draft and hash every element before comparing the hashes
with the stored ones. After a successful ingest, each tenant of the bundle gets one
`:IngestMark` node (its own label, never `:KG`, so no template can read it) holding

- `digest`: `bundle_digest` of the loaded bundle (each part's `model_dump_json()` in load
  order, which props hold times, and a digest of the code that decides what is written).
  `begin` computes it only to compare it with a mark; otherwise it is left for later
  (`WriteScope.settle_digest`): a tenant's first ingest computes it in the thread that
  built its batches, while the last ones are written, and `commit` computes it otherwise,
  so a rejected ingest, or one that is never marked, does not compute it at all;
- `records`: `tenant_fingerprint` at that moment (the tenant's node and relationship
  records, all and current, and their type labels), read in the same transaction, before
  its lock;
- `at_us`: the ingest time the bundle was validated at (times after it are "in the future");
- `generation`: bumped, with `digest` cleared, by every write transaction of the writer
  (`bump_generations`, in the same transaction as the records) and by a legal purge;
- `writer`: the ingest whose transaction bumped it last (null after a purge). Each write
  transaction of an ingest checks, under the mark's lock, that the bump before its own was
  the ingest's, or for its first that nothing bumped since `begin`; otherwise it rolls back
  with `IngestInterrupted` (`WriteScope.bump`): two writers of one tenant never both write
  from what they read (no second current record of an id or key).

A re-ingest takes the fast path when every tenant of the bundle has exactly one mark with
the same digest, an `at_us` not later than the ingest's time, and an unchanged fingerprint:
it then reports the no-op the full path would give, without validating, drafting or hashing.
The mark is only written when the ingest's result is a fixed point of the same bundle: the
ingest wrote nothing, or every id and key has one entry in the bundle (histories of one id
are replanned against the graph on each ingest, so only a confirmed no-op marks them). It is
written in its own transaction after the last write, and only if no other write transaction
touched the tenants since the ingest read the marks (the generation moved by exactly the
ingest's own transactions) and no mark was deleted meanwhile (a tenant deleted by hand). A
tenant of more than `TENANT_RATIO` node records per bundle element is not marked (reading its
fingerprint would cost more than the comparison saves): ten runbooks into a tenant of a
million records take the full path, at its old cost.

What the fingerprint cannot see: a record changed in place by hand in Cypher (a property,
`content_hash` or `status` edited, a label swapped for another) and, in the same hand edit, a
record deleted and another added. `investigator ingest --full` (`full=True`) always compares.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import neo4j

from graph_schema.bundle import Bundle, LoadedBundle
from graph_schema.canonical import epoch_micros
from graph_schema.errors import InvestigatorError
from graph_schema.kg_types import RelType, for_rel_types

MARK_LABEL = "IngestMark"
# Bump when what the writer stores, or how it decides no-op, changes in a way the source
# digest below would not show (it covers the graph_schema modules of the write path).
MARK_FORMAT = "ingest-mark 1"
_CODE_MODULES = (
    "bundle.py",
    "canonical.py",
    "hashing.py",
    "ingest_mark.py",
    "kg_types.py",
    "records.py",
    "schema_ddl.py",
    "validate.py",
    "writer.py",
)

# Every write transaction of the writer runs this for the bundle's tenants (sorted, so two
# ingests lock marks in the same order). MERGE: an ingest that started without a mark must
# still see another writer's transactions. A purge runs it too: `writer` becomes null.
BUMP_GENERATIONS = (
    "UNWIND $tenants AS tenant MERGE (m:IngestMark {tenant: tenant}) "
    "SET m.generation = coalesce(m.generation, 0) + 1, m.digest = null, m.writer = null"
)
# The writer's bump (`WriteScope.bump`): the first SET takes the mark's write lock, so the
# `writer` read after it is the last committed bump's, which the ingest checks.
_CHECKED_BUMP = (
    "UNWIND $tenants AS tenant MERGE (m:IngestMark {tenant: tenant}) "
    "SET m.generation = coalesce(m.generation, 0) + 1, m.digest = null "
    "WITH tenant, m, m.writer AS before SET m.writer = $writer "
    "RETURN tenant, before, m.generation AS generation"
)
_READ_MARKS = (
    "UNWIND $tenants AS tenant OPTIONAL MATCH (m:IngestMark {tenant: tenant}) "
    "RETURN tenant, count(m) AS marks, max(m.generation) AS generation, "
    "collect(m.digest)[0] AS digest, collect(m.records)[0] AS records, "
    "collect(m.at_us)[0] AS at_us, "
    # The fingerprint's first count, as far as `> 0` (cheap: its first record).
    "EXISTS { MATCH (n:KG) WHERE n.tenant = tenant AND n.id IS NOT NULL } AS has_records"
)
# The same relationship counts as the writer's reads see them: by type, tenant and key.
# `[r:A|B|...]` is planned as a union of each type's (tenant, key) index seeks: a plan of
# 0.3-0.7 s against 1.3-3.5 s for a UNION ALL of one subquery per type (after any index
# comes online), for about 3 us a relationship more (docs/benchmarks.md).
_REL_COUNTS = for_rel_types(
    "MATCH ()-[r:REL_TYPE]->() WHERE r.tenant = tenant AND r.key IS NOT NULL "
    "RETURN count(r) AS rels, count(r.superseded_at) AS old_rels",
    RelType,
)
_FINGERPRINT = (
    "UNWIND $tenants AS tenant "
    "CALL (tenant) { MATCH (n:KG) WHERE n.tenant = tenant AND n.id IS NOT NULL "
    "RETURN count(n) AS nodes, count(n.superseded_at) AS old_nodes, "
    "sum(size(labels(n))) AS labels } "
    "CALL (tenant) { " + _REL_COUNTS + " } "
    "RETURN tenant, [nodes, old_nodes, labels, rels, old_rels] AS records"
)
# The mark transaction: bump (which takes each mark's write lock) and read the result.
_LOCK_MARKS = (
    BUMP_GENERATIONS + " RETURN tenant, count(m) AS marks, max(m.generation) AS generation"
)
# A tenant of more than this many node records per bundle element is not marked: reading
# its fingerprint (about 4 us a record) would cost more than the comparison it saves.
TENANT_RATIO = 20
_TENANT_NODES_UP_TO = (
    "UNWIND $tenants AS tenant CALL (tenant) { MATCH (n:KG) "
    "WHERE n.tenant = tenant AND n.id IS NOT NULL WITH n LIMIT $cap RETURN count(n) AS nodes } "
    "RETURN tenant, nodes"
)
_DROP_MARKS = "UNWIND $tenants AS tenant MATCH (m:IngestMark {tenant: tenant}) DELETE m"
_WRITE_MARKS = (
    "UNWIND $rows AS row MATCH (m:IngestMark {tenant: row.tenant}) "
    "SET m.digest = $digest, m.records = row.records, m.at_us = $at_us"
)


@lru_cache(maxsize=1)
def code_digest() -> str:
    """A digest of the modules that decide what an ingest writes: any change to them makes
    every stored mark stale (the next ingest takes the full path)."""
    h = hashlib.sha256(MARK_FORMAT.encode("utf-8"))
    here = Path(__file__).resolve().parent
    for name in _CODE_MODULES:
        try:
            h.update(name.encode("utf-8") + b"\0" + (here / name).read_bytes() + b"\0")
        except OSError:
            h.update(name.encode("utf-8") + b"\0?\0")
    return h.hexdigest()


def _time_props(bundle: Bundle) -> list[list[Any]]:
    # `model_dump_json` writes a datetime in a free-form prop as the same text as an ISO
    # string: which props hold times goes into the digest separately.
    found: list[list[Any]] = []
    sections: Iterable[tuple[str, Sequence[Any]]] = (
        ("nodes", bundle.nodes),
        ("edges", bundle.edges),
        ("documents", bundle.documents),
    )
    for section, specs in sections:
        for index, spec in enumerate(specs):
            props = spec.props
            if not props:
                continue
            for name, value in props.items():
                # A list holds one type (the bundle refuses mixed lists).
                if isinstance(value, datetime) or (
                    type(value) is list and value and isinstance(value[0], datetime)
                ):
                    found.append([section, index, name])
    return found


def bundle_digest(loaded: LoadedBundle) -> str:
    """The digest of what an ingest of `loaded` would write (its parts in load order, not
    where they were read from), and of the code that writes it."""
    h = hashlib.sha256(code_digest().encode("ascii"))
    for part in loaded.parts:
        h.update(b"\npart\n")
        # The bytes of `model_dump_json()`, without decoding and encoding them again.
        h.update(part.bundle.__pydantic_serializer__.to_json(part.bundle))
        h.update(b"\n")
        h.update(json.dumps(_time_props(part.bundle)).encode("utf-8"))
    return h.hexdigest()


class IngestInterrupted(InvestigatorError):
    """Another writer changed the bundle's tenants while the ingest wrote them (another
    ingest, a purge, records deleted by hand); exit 1. The transaction that found it rolled
    back, the ones before it stay whole, and running the ingest again completes the store."""

    def __init__(self, tenants: Iterable[str], what: str) -> None:
        self.tenants = sorted(set(tenants))
        named = ", ".join(self.tenants)
        super().__init__(
            "ingest stopped: "
            + what.format(tenants=named)
            + "; the batches written before are whole: run this ingest again once nothing "
            f"else writes tenant {named} (it completes the store)"
        )


@dataclass(slots=True)
class _Mark:
    marks: int
    generation: int
    digest: str | None
    records: list[int] | None
    at_us: int | None
    has_records: bool


def _read_marks(
    driver: neo4j.Driver, tenants: Sequence[str], database: str | None
) -> dict[str, _Mark]:
    records, _, _ = driver.execute_query(
        _READ_MARKS, tenants=list(tenants), database_=database, routing_=neo4j.RoutingControl.READ
    )
    return {
        str(r["tenant"]): _Mark(
            int(r["marks"]),
            int(r["generation"] or 0),
            r["digest"],
            [int(x) for x in r["records"]] if r["records"] is not None else None,
            int(r["at_us"]) if r["at_us"] is not None else None,
            bool(r["has_records"]),
        )
        for r in records
    }


def tenant_fingerprint(
    runner: neo4j.Driver | neo4j.ManagedTransaction,
    tenants: Sequence[str],
    database: str | None = None,
) -> dict[str, list[int]]:
    """Per tenant: node records, superseded node records, their labels, relationship records,
    superseded relationship records (one read over the tenant's indexes)."""
    if isinstance(runner, neo4j.Driver):
        result = runner.execute_query(
            _FINGERPRINT,
            tenants=list(tenants),
            database_=database,
            routing_=neo4j.RoutingControl.READ,
        ).records
    else:
        result = list(runner.run(_FINGERPRINT, tenants=list(tenants)))
    return {str(r["tenant"]): [int(x) for x in r["records"]] for r in result}


@dataclass
class WriteScope:
    """The tenants an ingest writes, the generations it started from, and how many write
    transactions it ran (each bumps every tenant's generation once)."""

    tenants: list[str]
    elements: int = 0
    # Set on the marks by each of the ingest's write transactions (`bump`); random, and
    # never part of any hashed content.
    writer: str = field(default_factory=lambda: uuid.uuid4().hex)
    digest: str | None = None
    started: dict[str, int] = field(default_factory=dict)
    writes: int = 0
    # Records (node and relationship records, tombstones) the ingest's committed write
    # transactions hold, and how many it planned to write (None: not planned yet); what an
    # ingest stopped by Ctrl-C says (writer.ingest_bundle).
    records_written: int = 0
    records_planned: int | None = None
    # The bundle whose digest `begin` left for later (no mark to compare it with: only
    # `commit` needs it), and the error computing it raised (`commit` raises it).
    undigested: LoadedBundle | None = None
    digest_error: BaseException | None = None
    # Run inside the ingest's first write transaction (which runs alone), so what it writes
    # (the `ingest --backdate` marker) commits with the first records or not at all.
    first_write: Callable[[neo4j.ManagedTransaction], None] | None = None

    def bump(self, tx: neo4j.ManagedTransaction) -> None:
        """Inside a write transaction: move the tenants' generations, clear their digests,
        and check that no other writer moved them since `begin`.

        The bumps of one tenant's mark are serialized by its lock, so the ingest's own form
        one unbroken run from the generation `begin` read: its first committed one moves it
        to `started + 1`, and each later one follows one of its own (`writer`). Anything
        else is another ingest's (or a purge's) transaction in between: its reads may be
        stale, so this transaction raises `IngestInterrupted` and rolls back, whichever of
        the ingest's batches are in flight.
        """
        if self.writes == 0 and self.first_write is not None:
            self.first_write(tx)
        if not self.tenants:
            return
        moved = []
        for r in tx.run(_CHECKED_BUMP, tenants=self.tenants, writer=self.writer):
            tenant = str(r["tenant"])
            start = self.started.get(tenant, -1)
            # The ingest's first transaction runs alone (`writes` counts the committed ones);
            # without a generation read (`write_bundle`), it starts the run wherever it is.
            first = self.writes == 0 and (start < 0 or int(r["generation"]) == start + 1)
            if r["before"] != self.writer and not first:
                moved.append(tenant)
        if moved:
            raise IngestInterrupted(
                moved,
                "another ingest or a purge of tenant {tenants} wrote to it meanwhile (or its "
                "ingest mark was deleted)",
            )

    def settle_digest(self) -> None:
        """Compute the digest `begin` left for later, once. A tenant's first ingest calls it
        from the thread that built its batches, while the last ones are written; `commit`
        calls it otherwise (after the thread was joined). An error is kept for `commit`,
        which raises it after the ingest's writes, instead of writing the mark."""
        loaded, self.undigested = self.undigested, None
        if loaded is None:
            return
        try:
            self.digest = bundle_digest(loaded)
        except BaseException as exc:  # raised by `commit`, in the ingest's thread
            self.digest_error = exc


def begin(
    driver: neo4j.Driver,
    loaded: LoadedBundle,
    tenants: Iterable[str],
    now: datetime,
    database: str | None,
    *,
    full: bool,
) -> tuple[WriteScope, bool]:
    """Read the tenants' marks before anything else of the ingest reads the graph.

    Returns the ingest's write scope and whether the bundle is unchanged since its last
    ingest (never when `full`).
    """
    scope = WriteScope(sorted(set(tenants)), elements=loaded.element_count())
    if not scope.tenants:
        return scope, False
    marks = _read_marks(driver, scope.tenants, database)
    # -1: two marks of one tenant (see `commit`); no mark yet is generation 0.
    scope.started = {t: marks[t].generation if marks[t].marks <= 1 else -1 for t in scope.tenants}
    candidate = not full and all(
        m.marks == 1
        and m.digest is not None
        and m.records is not None
        and m.records[0] <= scope.elements * TENANT_RATIO
        and m.at_us is not None
        and m.at_us <= epoch_micros(now)
        # Node records in the mark and none now (deleted by hand), or the other way round:
        # the fingerprint differs, so neither it nor the digest is needed to say so.
        and (m.records[0] > 0) == m.has_records
        for m in marks.values()
    )
    if not candidate:
        # Nothing to compare the digest with: it is computed off the critical path
        # (`WriteScope.settle_digest`), and not at all for an ingest that is never marked.
        scope.undigested = loaded
        return scope, False
    # The fingerprint is read (after the marks: a write in between either cleared a digest
    # or changed a count) while the digest is computed.
    with ThreadPoolExecutor(max_workers=1) as pool:
        reading = pool.submit(tenant_fingerprint, driver, scope.tenants, database)
        scope.digest = bundle_digest(loaded)
        current = reading.result()
    return scope, all(
        marks[t].digest == scope.digest and current.get(t) == marks[t].records
        for t in scope.tenants
    )


def commit(driver: neo4j.Driver, scope: WriteScope, now: datetime, database: str | None) -> bool:
    """Write the marks of a finished ingest, in one transaction; False when another write
    transaction touched a tenant since `begin` (then no mark is written). Raises the error
    of computing the bundle's digest, if that failed (then no mark is written either)."""
    if not scope.tenants:
        return False
    scope.settle_digest()
    if scope.digest_error is not None:
        raise scope.digest_error
    if scope.digest is None:
        return False
    cap = scope.elements * TENANT_RATIO
    records, _, _ = driver.execute_query(
        _TENANT_NODES_UP_TO,
        tenants=scope.tenants,
        cap=cap,
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    if any(int(r["nodes"]) >= cap for r in records):
        return False  # the fingerprint would cost more than the comparison it saves

    def work(tx: neo4j.ManagedTransaction) -> bool:
        # Read before the lock, while the transaction has written nothing: Neo4j plans a
        # statement again after a write in its transaction, and this is `begin`'s plan
        # (seconds on a loaded server). A writer committing after this read moves the
        # generation checked under the lock below, so the mark is not written then.
        prints = tenant_fingerprint(tx, scope.tenants)
        locked = {str(r["tenant"]): r for r in tx.run(_LOCK_MARKS, tenants=scope.tenants)}
        if any(locked[t]["generation"] is None for t in scope.tenants):
            # The MERGE found a mark that another transaction deleted before this one got
            # its lock (a tenant deleted by hand meanwhile): nothing left to mark.
            return False
        doubled = [t for t in scope.tenants if int(locked[t]["marks"]) != 1]
        if doubled:
            # Two marks of one tenant (concurrent first ingests without a constraint): drop
            # them, the next ingest starts a new one.
            tx.run(_DROP_MARKS, tenants=doubled).consume()
            return False
        expected = scope.writes + 1
        for tenant in scope.tenants:
            start = scope.started.get(tenant, -1)
            if start < 0 or int(locked[tenant]["generation"]) != start + expected:
                return False
        rows = [{"tenant": t, "records": prints[t]} for t in scope.tenants]
        tx.run(_WRITE_MARKS, rows=rows, digest=scope.digest, at_us=epoch_micros(now)).consume()
        return True

    with driver.session(database=database) as session:
        return bool(session.execute_write(work))
