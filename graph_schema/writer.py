"""Writing a validated bundle as immutable, versioned KG records (docs/contracts.md section 1).

Public API:

- `ingest_bundle(driver, loaded, ...) -> IngestReport`: look up what the bundle refers to,
  validate everything (raising `BundleRejected` with every problem, writing nothing), then
  write. This is what `investigator ingest` and importers call.
- `write_bundle(driver, loaded, ...) -> IngestReport`: the write step alone, for a bundle
  that `validate_bundle` already accepted (identity problems still raise `BundleRejected`).
- `find_existing(driver, loaded)`: the graph's current records a bundle refers to.

How a write goes: the current state of every id and key is read first, and each element is
decided as unchanged (same `content_hash`), new, or a new version. An id never changes what
it is: a record whose type labels or document kind differ from the id's current record is a
bundle problem, and a source never writes a new version of (or retracts) what another
source holds (`SourceTakeover`, see `_plan`, `_without_endpoint_holders` and
`_retraction_takeovers`; the current record's `source_id` comes with the history read).
Then, in batched `UNWIND` transactions: node records (the previous record
gets `superseded_at`, and its current edge records move onto the new record: copied there,
their copies on the old record superseded with it),
relationship records (previous copies superseded), and retractions (tombstone records, all in
one transaction, a run of node retractions with a few statements). A re-ingest asks Neo4j
which ids and keys have a current record with another content hash (or type labels), one
read per batch, and reads the history of those only. A tenant's first ingest with no
repeated id or key (`_one_entry_each`) needs no history and no lookup: its drafts and hashes
are built in a thread (`_Ahead`) while its version 1 records are written batch by batch
(`_apply_fresh`), so the Python work overlaps Neo4j's; the thread waits while the bundle is
validated, which every write waits for, and computes the bundle's digest for the ingest
mark after the last batch.
Re-ingesting an unchanged bundle skips all of that: `graph_schema.ingest_mark` compares a
digest of the loaded bundle and a fingerprint of its tenants with the mark the last ingest
left (`full=True` always compares); every write transaction bumps the tenants' marks.
Labels and relationship types only ever come from the enums in `graph_schema.kg_types`;
values are always parameters. Times travel as integers (epoch seconds and nanoseconds) and
become DateTime values in Cypher: the driver's packing of Python datetimes costs more than
the writes themselves.
"""

from __future__ import annotations

import contextlib
import itertools
import queue
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache, partial
from typing import Any, TypeVar

import neo4j
from pydantic import BaseModel

from graph_schema import ctrl_c, ingest_mark
from graph_schema.backdating import (
    BackdatedRecords,
    BackdateMarker,
    RecordFloor,
    backdated,
    explicit_times,
    record_backdated_ingest_in_tx,
)
from graph_schema.bundle import BundleProblem, LoadedBundle, and_more
from graph_schema.canonical import epoch_micros
from graph_schema.collector import collect_young, cyclic_gc_paused
from graph_schema.errors import InterruptedPartWay, Neo4jUnavailable
from graph_schema.hashing import content_hash
from graph_schema.import_sources import check_bundle_writes
from graph_schema.ingest_mark import IngestInterrupted
from graph_schema.kg_types import (
    KG_LABEL,
    NodeLabel,
    RecordStatus,
    RelType,
    RelTypeStatement,
    Trust,
    per_rel_type,
)
from graph_schema.omitted_acl import keep_current_acls
from graph_schema.records import (
    EdgeDraft,
    NodeDraft,
    SourceInfo,
    build_drafts,
    bundle_sources,
    document_draft,
    document_edge_drafts,
    edge_draft,
    node_draft,
    principal_draft,
    source_draft,
)
from graph_schema.schema_ddl import apply_tenant_schema, is_tenant_label, tenant_label
from graph_schema.validate import (
    ExistingElements,
    case_look_alike_principals,
    defined_ids,
    document_edge_keys,
    principal_tenant,
    recreated_principals,
    referenced_ids,
    referenced_keys,
    referenced_sources,
    rel_type_of_key,
    validate_bundle,
)

Progress = Callable[[str], None]
T = TypeVar("T")
DEFAULT_BATCH_SIZE = 5000
# Write transactions a tenant's first ingest keeps in flight. Neo4j writes two batches at
# once faster than one after the other: the 101k bundle's first ingest took 22-23 s against
# 33-37 s on the 2-core machine; three were no faster (docs/benchmarks.md).
FRESH_WRITERS = 2
# How often a wait on the writer pool looks for a Ctrl-C the handler recorded (seconds).
CTRL_C_POLL_S = 0.05
_READ_BATCH = 10000
# A write transaction may run this long (seconds); None leaves it to the server's
# `db.transaction.timeout` (120 s on a server `investigator db start` runs).
WRITE_TIMEOUT_S: float | None = None
# How many times a first ingest's batch that hit the transaction timeout is halved and
# written again: a 5,000-row batch ends as parts of 1,250 at the least (docs/benchmarks.md).
TIMEOUT_SPLITS = 2
_TIMED_OUT = (
    "Neo.ClientError.Transaction.TransactionTimedOut",
    "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
    # What a transaction the timeout ended while it waited for a lock hears.
    "Neo.ClientError.Transaction.LockClientStopped",
)
_TYPE_LABELS = frozenset(label.value for label in NodeLabel)


class BundleRejected(Exception):
    """The bundle has problems; nothing was written."""

    def __init__(self, problems: Sequence[BundleProblem]) -> None:
        self.problems = list(problems)
        super().__init__(f"bundle rejected: {len(self.problems)} problem(s), nothing written")


class IngestTimedOut(Neo4jUnavailable):
    """A write transaction of the ingest hit Neo4j's transaction timeout (exit 4). It rolled
    back; the transactions before it stay whole, and running the ingest again completes the
    store."""

    def __init__(self, tenants: Iterable[str], rows: int) -> None:
        named = ", ".join(sorted(set(tenants)))
        super().__init__(
            f"ingest stopped: Neo4j ended a write of {rows} records of tenant {named} at its "
            "transaction timeout (db.transaction.timeout; the server is too busy or another "
            "transaction held a lock); the batches written before are whole: run this ingest "
            "again (it completes the store)"
        )


@dataclass(frozen=True, slots=True)
class Takeover:
    """A write the ingest may not do: a new record (or a tombstone) of an id or key whose
    current record comes from another source."""

    tenant: str
    target: str  # the id or relationship key
    held_by: str | None  # source_id of the current record
    incoming: str | None  # source_id of the new record; None for a retraction
    retracting_sources: tuple[str, ...] = ()  # a retraction: the bundle's sources there
    endpoints: tuple[str, str] | None = None  # a relationship's from and to ids
    superseded_by: str | None = None  # an untrusted document declaring it supersedes target

    def text(self) -> str:
        held = self.held_by or "(none)"
        if self.superseded_by is not None:
            return (
                f"{self.target} is held by source {held}; untrusted {self.superseded_by} of "
                f"source {self.incoming} may not supersede it"
            )
        if self.incoming is None and self.retracting_sources:
            by = ", ".join(self.retracting_sources)
            return (
                f"{self.target} is held by source {held}; a bundle of source(s) {by} "
                "may not retract it"
            )
        return (
            f"{self.target} is held by source {held}; {self.incoming or '(none)'} "
            "may not write a new version of it"
        )


class SourceTakeover(BundleRejected):
    """The ingest would write a new version of (or retract) records another source holds;
    nothing was written. `line()` is the one line for the user."""

    def __init__(self, takeovers: Sequence[Takeover]) -> None:
        self.takeovers = list(takeovers)  # nodes, relationships, retractions (each sorted)
        super().__init__(
            [
                BundleProblem(origin="graph", element=t.target, reason=t.text())
                for t in self.takeovers
            ]
        )

    def line(self) -> str:
        """`ingest refused: ID is held by source A; B may not write a new version of it`."""
        first, *others = self.takeovers
        return f"ingest refused: {first.text()}{and_more([t.target for t in others])}"


class IngestReport(BaseModel):
    """What one ingest did, in records (a re-ingest of the same bundle creates nothing)."""

    elements: int
    node_records_created: int = 0
    edge_records_created: int = 0
    nodes_unchanged: int = 0
    edges_unchanged: int = 0
    records_superseded: int = 0
    edges_copied: int = 0
    tombstones_created: int = 0
    retractions_unchanged: int = 0
    seconds: float = 0.0
    # The bundle and its tenants' records are as the last ingest of it left them: nothing
    # was validated, drafted or compared (the counts are those of the full comparison).
    unchanged_since_last_ingest: bool = False
    # Written, but worth the operator's eye: principal ids differing only in letter case.
    warnings: list[str] = []
    # Per tenant, the records an `--backdate` ingest wrote into the time recorded runs saw
    # (its `:BackdatedIngest` rows: tenant, targets, retracted, earliest, latest).
    backdated: list[dict[str, Any]] = []

    @property
    def changed(self) -> bool:
        """Whether anything was written."""
        return bool(
            self.node_records_created or self.edge_records_created or self.tombstones_created
        )


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def wire_time(value: datetime) -> list[int]:
    """A zoned datetime as `[epoch seconds, nanosecond]` for `datetime({epochSeconds: ...})`."""
    # A timedelta is normalised like divmod (seconds and microseconds never negative).
    since = value - _EPOCH
    return [since.days * 86400 + since.seconds, since.microseconds * 1000]


def wire_props(props: dict[str, Any]) -> tuple[dict[str, Any], list[list[Any]]]:
    """Split a record's properties into plain values and `[name, seconds, nanos]` times."""
    plain: dict[str, Any] = {}
    times: list[list[Any]] = []
    for name, value in props.items():
        if isinstance(value, datetime):
            since = value - _EPOCH
            times.append([name, since.days * 86400 + since.seconds, since.microseconds * 1000])
        else:
            plain[name] = value
    return plain, times


# The Cypher half of `wire_props`: sets each `[name, seconds, nanos]` of `row.t` on VAR.
SET_WIRE_TIMES = (
    "FOREACH (t IN row.t | SET VAR[t[0]] = datetime({epochSeconds: t[1], nanosecond: t[2]}))"
)
_ROW_TIME = "datetime({epochSeconds: row.at[0], nanosecond: row.at[1]})"


@lru_cache(maxsize=1024)
def _tenant_label(tenant: str) -> str:
    return tenant_label(tenant)


def stored_labels(draft: NodeDraft) -> list[str]:
    """The labels a node record is created with besides `:KG`: its type labels and its
    tenant's label (per-tenant fulltext index, issue 18)."""
    return [*draft.labels, _tenant_label(draft.tenant)]


@dataclass(slots=True)
class _RecordState:
    version: int
    content_hash: str
    status: str
    recorded_us: int
    source: str | None = None  # the record's source_id


@dataclass(slots=True)
class _Identity:
    """What an id is: its type labels (never `:KG` or a tenant label) and document kind."""

    labels: tuple[str, ...]
    kind: str | None

    def text(self) -> str:
        shown = "/".join(self.labels) or "record"
        return f"{shown} (kind {self.kind})" if self.kind else shown


@dataclass
class _History:
    current: _RecordState | None = None
    seen: set[tuple[str, int]] = field(default_factory=set)
    identity: _Identity | None = None  # of the current record
    first_identity: _Identity | None = None  # of the lowest version
    first_version: int = 0
    # The source of the lowest version: the id's own source, which may always write it
    # (that is how a re-ingest repairs a record an older writer let another source replace).
    first_source: str | None = None
    first_source_version: int | None = None


@dataclass(slots=True)
class _NodeWrite:
    draft: NodeDraft
    version: int
    recorded_at: datetime
    supersede: bool


@dataclass(slots=True)
class _EdgeWrite:
    draft: EdgeDraft
    version: int
    recorded_at: datetime
    supersede: bool


@dataclass(slots=True)
class _Retraction:
    tenant: str
    target: str
    is_key: bool
    reason: str
    at: datetime


def _chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _native(value: Any) -> Any:
    to_native = getattr(value, "to_native", None)
    return to_native() if to_native is not None and not isinstance(value, datetime) else value


# Statements by relationship type (`RelTypeStatement`): each key lookup seeks its type's
# (tenant, key) index; a few keys of any types take one statement (one plan), many per type.
# `recorded_us` is `epochMillis * 1000 + microsecond % 1000`, as `canonical.epoch_micros`:
# `epochSeconds` rounds toward zero before 1970 (1969-12-31T23:59:59.5Z gives 0).
_EDGE_HISTORY = RelTypeStatement(
    "UNWIND $rows AS row MATCH ()-[r:REL_TYPE]->() "
    "WHERE r.tenant = row.tenant AND r.key = row.key "
    "RETURN DISTINCT row.tenant AS tenant, row.key AS key, r.version AS version, "
    "r.content_hash AS hash, r.status AS status, r.superseded_at IS NULL AS current, "
    "r.recorded_at.epochMillis * 1000 + r.recorded_at.microsecond % 1000 AS recorded_us, "
    "r.source_id AS source"
)
# A copy on an older endpoint record, superseded with that record after `at` (a record
# recorded back in time), is superseded at `at` too; only current copies are counted.
_EDGE_SUPERSEDE = RelTypeStatement(
    "UNWIND $rows AS row WITH row, " + _ROW_TIME + " AS at MATCH ()-[r:REL_TYPE]->() "
    "WHERE r.tenant = row.tenant AND r.key = row.key "
    "AND (r.superseded_at IS NULL OR r.superseded_at > at) "
    "WITH r, at, r.superseded_at IS NULL AS was_current SET r.superseded_at = at "
    "RETURN count(CASE WHEN was_current THEN 1 END) AS n"
)
_EDGE_LATER_COPIES = per_rel_type(
    "MATCH ()-[r:REL_TYPE]->() "
    "WHERE r.tenant = $tenant AND r.key = $key AND r.superseded_at > $at "
    "SET r.superseded_at = $at"
)
_EDGE_CURRENT_COPIES = per_rel_type(
    "MATCH (a)-[r:REL_TYPE]->(b) "
    "WHERE r.tenant = $tenant AND r.key = $key AND r.superseded_at IS NULL "
    "RETURN elementId(r) AS eid, properties(r) AS props, a.id AS from_id, b.id AS to_id"
)

# A re-ingest compares content hashes in Neo4j: only the ids and keys whose current record
# differs (or is missing, retracted, or of other type labels) come back for a history read.
_NODE_CHANGED = (
    "UNWIND $rows AS row "
    "OPTIONAL MATCH (n:KG {tenant: row.tenant, id: row.id}) WHERE n.superseded_at IS NULL "
    "WITH row, collect(n) AS current "
    "WHERE NOT (size(current) = 1 AND current[0].content_hash = row.hash "
    "AND current[0].status = 'active' "
    "AND size([x IN labels(current[0]) WHERE x IN $types]) = size(row.labels) "
    "AND all(x IN row.labels WHERE x IN labels(current[0]))) "
    "RETURN row.tenant AS tenant, row.id AS id"
)
_EDGE_CHANGED = RelTypeStatement(
    "UNWIND $rows AS row "
    "OPTIONAL MATCH ()-[r:REL_TYPE]->() "
    "WHERE r.tenant = row.tenant AND r.key = row.key AND r.superseded_at IS NULL "
    "WITH row, collect(r) AS current "
    "WHERE NOT (size(current) > 0 "
    "AND all(r IN current WHERE r.content_hash = row.hash AND r.status = 'active')) "
    "RETURN row.tenant AS tenant, row.key AS key"
)

# Whether a tenant has any KG record: a first ingest into an empty tenant needs no history.
_TENANT_HAS_RECORDS = (
    "UNWIND $tenants AS tenant CALL (tenant) { "
    "MATCH (n:KG) WHERE n.tenant = tenant AND n.id IS NOT NULL RETURN n.id AS id LIMIT 1 } "
    "RETURN DISTINCT tenant"
)
_NODE_HISTORY = (
    "UNWIND $rows AS row MATCH (n:KG {tenant: row.tenant, id: row.id}) "
    "RETURN row.tenant AS tenant, row.id AS id, n.version AS version, n.content_hash AS hash, "
    "n.status AS status, n.superseded_at IS NULL AS current, "
    "n.recorded_at.epochMillis * 1000 + n.recorded_at.microsecond % 1000 AS recorded_us, "
    "n.source_id AS source, labels(n) AS labels, n.kind AS kind"
)
# Superseding and creating are separate statements: a CREATE that reads nothing needs no
# Eager barriers, which roughly halves the cost of a batch.
_NODE_SUPERSEDE = (
    "UNWIND $rows AS row "
    "MATCH (old:KG {tenant: row.tenant, id: row.id}) WHERE old.superseded_at IS NULL "
    f"SET old.superseded_at = {_ROW_TIME} "
    "RETURN elementId(old) AS old_eid"
)
_NODE_CREATE = "UNWIND $rows AS row CREATE (n:KG:$(row.labels)) SET n = row.props " + (
    SET_WIRE_TIMES.replace("VAR", "n")
)
_INCIDENT_EDGES = (
    "UNWIND $olds AS oid MATCH (o) WHERE elementId(o) = oid "
    "MATCH (o)-[r]-() WHERE r.superseded_at IS NULL "
    "RETURN DISTINCT type(r) AS type, properties(r) AS props, "
    "startNode(r).tenant AS tenant, startNode(r).id AS from_id, endNode(r).id AS to_id"
)
# The edge records still current on node records just superseded (after `_EDGE_COPY` put
# them on the current records): each copy ends when its first endpoint record ended, so an
# edge record has one current copy, and `known_at` reads before then still find the old one.
_SUPERSEDE_OLD_COPIES = (
    "UNWIND $olds AS oid MATCH (o) WHERE elementId(o) = oid "
    "MATCH (o)-[r]-() WHERE r.superseded_at IS NULL AND o.superseded_at IS NOT NULL "
    "WITH r, min(o.superseded_at) AS at SET r.superseded_at = at"
)
# Copies of an existing edge record onto the current records of its endpoints.
_EDGE_COPY = (
    "UNWIND $rows AS row "
    "MATCH (a:KG {tenant: row.tenant, id: row.from_id}) WHERE a.superseded_at IS NULL "
    "MATCH (b:KG {tenant: row.tenant, id: row.to_id}) WHERE b.superseded_at IS NULL "
    "WITH row, a, b WHERE NOT EXISTS { MATCH (a)-[x]->(b) WHERE x.key = row.props.key "
    "AND x.version = row.props.version AND x.superseded_at IS NULL } "
    "CREATE (a)-[r:$(row.type)]->(b) SET r = row.props "
    "RETURN count(r) AS n, count(DISTINCT row.idx) AS rows_written"
)
# A new edge record is attached to every pair of endpoint records that are current together
# at some time after the edge was recorded, so that a history recorded in one bundle
# (a node's v1 and v2 with their own recorded_at) keeps its paths at every known_at.
_EDGE_CREATE = (
    "UNWIND $rows AS row "
    f"WITH row, {_ROW_TIME} AS at "
    "MATCH (a:KG {tenant: row.tenant, id: row.from_id}) "
    "WHERE a.superseded_at IS NULL OR a.superseded_at > at "
    "MATCH (b:KG {tenant: row.tenant, id: row.to_id}) "
    "WHERE b.superseded_at IS NULL OR b.superseded_at > at "
    "WITH row, a, b WHERE (a.superseded_at IS NULL OR b.recorded_at < a.superseded_at) "
    "AND (b.superseded_at IS NULL OR a.recorded_at < b.superseded_at) "
    "CREATE (a)-[r:$(row.type)]->(b) SET r = row.props "
    + SET_WIRE_TIMES.replace("VAR", "r")
    # A copy on an older record is current only while both its endpoint records are.
    + " SET r.superseded_at = CASE WHEN a.superseded_at IS NULL THEN b.superseded_at "
    "WHEN b.superseded_at IS NULL OR a.superseded_at < b.superseded_at THEN a.superseded_at "
    "ELSE b.superseded_at END"
    " RETURN count(r) AS n, count(DISTINCT row.idx) AS rows_written"
)
# A tenant's first records: every endpoint is the version 1 record of its id (found through
# the (tenant, id, version) uniqueness index, like a raw writer would).
_EDGE_CREATE_FRESH = (
    "UNWIND $rows AS row "
    "MATCH (a:KG {tenant: row.tenant, id: row.from_id, version: 1}) "
    "MATCH (b:KG {tenant: row.tenant, id: row.to_id, version: 1}) "
    "CREATE (a)-[r:$(row.type)]->(b) SET r = row.props "
    + SET_WIRE_TIMES.replace("VAR", "r")
    + " RETURN count(r) AS n"
)
_CURRENT_NODE = (
    "MATCH (n:KG {tenant: $tenant, id: $id}) WHERE n.superseded_at IS NULL "
    "RETURN elementId(n) AS eid, labels(n) AS labels, properties(n) AS props"
)
_TOMBSTONE_NODE = (
    "MATCH (o) WHERE elementId(o) = $eid "
    "CREATE (t:KG:$($labels)) SET t = $props SET o.superseded_at = $props.recorded_at "
    "RETURN elementId(t) AS eid"
)
_CURRENT_NODES = (
    "UNWIND $rows AS row MATCH (n:KG {tenant: row.tenant, id: row.id}) "
    "WHERE n.superseded_at IS NULL "
    "RETURN row.tenant AS tenant, row.id AS id, elementId(n) AS eid, labels(n) AS labels, "
    "properties(n) AS props"
)
_TOMBSTONE_NODES = (
    "UNWIND $rows AS row MATCH (o) WHERE elementId(o) = row.eid "
    "CREATE (t:KG:$(row.labels)) SET t = row.props SET o.superseded_at = row.props.recorded_at"
)
_SUPERSEDE_BY_EID = (
    "UNWIND $eids AS eid MATCH ()-[r]->() WHERE elementId(r) = eid "
    "SET r.superseded_at = $at RETURN count(r) AS n"
)


def find_existing(
    driver: neo4j.Driver, loaded: LoadedBundle, database: str | None = None
) -> tuple[ExistingElements, dict[tuple[str, str], SourceInfo]]:
    """Current records the bundle refers to but does not define, and their sources."""
    existing = ExistingElements()
    # Only what the bundle does not define itself needs a lookup.
    ids = sorted((referenced_ids(loaded) | referenced_sources(loaded)) - defined_ids(loaded))
    rows = [{"tenant": t, "id": i} for t, i in ids]
    sources: dict[tuple[str, str], SourceInfo] = {}
    for chunk in _chunks(rows, _READ_BATCH):
        records, _, _ = driver.execute_query(
            "UNWIND $rows AS row MATCH (n:KG {tenant: row.tenant, id: row.id}) "
            "WHERE n.superseded_at IS NULL "
            "RETURN row.tenant AS tenant, row.id AS id, 'Source' IN labels(n) AS is_source, "
            "n.allowed_purposes AS purposes, n.trust AS trust, n.authority AS authority",
            rows=list(chunk),
            database_=database,
            routing_=neo4j.RoutingControl.READ,
        )
        for r in records:
            existing.ids.add((r["tenant"], r["id"]))
            if r["is_source"]:
                existing.sources.add((r["tenant"], r["id"]))
                sources[(r["tenant"], r["id"])] = SourceInfo(
                    purposes=list(r["purposes"] or []),
                    trust=r["trust"] or Trust.UNTRUSTED.value,
                    authority=r["authority"],
                )
    # A new principal id must not look like one its tenant holds (validate.py): their ids.
    principal_tenants = sorted({p.bundle.tenant for p in loaded.parts if p.bundle.principals})
    if principal_tenants:
        records, _, _ = driver.execute_query(
            "UNWIND $tenants AS t MATCH (p:Principal:KG {tenant: t}) "
            "RETURN t AS tenant, collect(DISTINCT p.id) AS ids, "
            # Ids whose current record is a tombstone: written again, they name someone new.
            "collect(CASE WHEN p.status = 'retracted' AND p.superseded_at IS NULL "
            "THEN p.id END) AS retracted",
            tenants=principal_tenants,
            database_=database,
            routing_=neo4j.RoutingControl.READ,
        )
        for r in records:
            existing.principal_ids[str(r["tenant"])] = {str(i) for i in r["ids"]}
            existing.retracted_principals[str(r["tenant"])] = {str(i) for i in r["retracted"]}
    keys_by_type: dict[RelType, list[dict[str, str]]] = defaultdict(list)
    for tenant, key in sorted(referenced_keys(loaded)):
        rel_type = rel_type_of_key(key)
        if rel_type is not None:
            keys_by_type[rel_type].append({"tenant": tenant, "key": key})
    for statement, key_rows in _EDGE_HISTORY.batches(keys_by_type):
        records, _, _ = driver.execute_query(
            statement,
            rows=key_rows,
            database_=database,
            routing_=neo4j.RoutingControl.READ,
        )
        existing.edge_keys.update((r["tenant"], r["key"]) for r in records if r["current"])
    return existing, sources


@dataclass
class _Prepared:
    """A bundle turned into drafts, with the graph's history of every id and key."""

    node_drafts: list[NodeDraft]
    edge_drafts: list[EdgeDraft]
    node_history: dict[tuple[str, str], _History]
    edge_history: dict[tuple[str, str], _History]
    retractions: list[_Retraction]


@cyclic_gc_paused()
def ingest_bundle(
    driver: neo4j.Driver,
    loaded: LoadedBundle,
    *,
    database: str | None = None,
    now: datetime | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: Progress | None = None,
    full: bool = False,
    recorded_after: Mapping[str, RecordFloor] | None = None,
    backdate_marker: BackdateMarker | None = None,
) -> IngestReport:
    """Validate `loaded` against itself and the graph, then write it.

    Raises `BundleRejected` (with every problem) before writing anything if the bundle has
    any problem, including the load problems already collected in `loaded.problems` and
    records that would change what an existing id is. Raises `ImportSourceInBundle`, before
    anything is written, for a bundle (not an import's, `loaded.import_source_type`) that
    writes under or retracts records of an import's source (graph_schema/import_sources.py).
    `recorded_after` names, per tenant,
    the latest known_at of its recorded runs: a record the ingest would date at or before it
    raises `BackdatedRecords`, before anything is written (graph_schema/backdating.py).
    `backdate_marker` (`ingest --backdate`): the `:BackdatedIngest` of the records it dates
    into recorded runs' time is written in the ingest's first write transaction.

    A bundle unchanged since its last ingest, into tenants whose records have not changed
    since, is reported as the no-op it is without that work
    (`IngestReport.unchanged_since_last_ingest`); `full=True` always compares.

    Ctrl-C raises `InterruptedPartWay` saying how many of the records the ingest planned to
    write its committed transactions hold (a transaction in flight ends first), and that
    running the same ingest again finishes it.
    """
    scopes: list[ingest_mark.WriteScope] = []
    try:
        with ctrl_c.held():
            return _ingest_bundle(
                driver,
                loaded,
                scopes,
                database=database,
                now=now,
                batch_size=batch_size,
                progress=progress,
                full=full,
                recorded_after=recorded_after,
                backdate_marker=backdate_marker,
            )
    except KeyboardInterrupt as exc:
        if isinstance(exc, InterruptedPartWay):
            raise
        raise InterruptedPartWay(_interrupted_line(scopes[0] if scopes else None)) from exc


def _interrupted_line(scope: ingest_mark.WriteScope | None) -> str:
    """What an ingest stopped by Ctrl-C says: what its committed transactions wrote."""
    written = scope.records_written if scope is not None else 0
    planned = scope.records_planned if scope is not None else None
    if written == 0:
        return "interrupted (Ctrl-C) before any record was written: nothing written"
    of = f" of {planned}" if planned is not None and planned >= written else ""
    return (
        f"interrupted (Ctrl-C) after {written}{of} records were written (node and relationship "
        "records, tombstones); run the same ingest again to finish"
    )


def _ingest_bundle(
    driver: neo4j.Driver,
    loaded: LoadedBundle,
    scopes: list[ingest_mark.WriteScope],
    *,
    database: str | None,
    now: datetime | None,
    batch_size: int,
    progress: Progress | None,
    full: bool,
    recorded_after: Mapping[str, RecordFloor] | None,
    backdate_marker: BackdateMarker | None,
) -> IngestReport:
    """`ingest_bundle`; the write scope, once there is one, is put in `scopes`."""
    started = time.monotonic()
    now = now or datetime.now(UTC)
    tenants = _bundle_tenants(loaded)
    if loaded.problems:
        scope = ingest_mark.WriteScope(sorted(tenants))  # rejected below: never marked
    else:
        # A bundle stays off an import's source, whoever calls the writer (import_sources.py).
        check_bundle_writes(driver, loaded, database)
        # First, before anything else reads the graph: the generations to commit against.
        scope, unchanged = ingest_mark.begin(driver, loaded, tenants, now, database, full=full)
        scopes.append(scope)
        if unchanged:
            if progress is not None:
                progress("unchanged since the last ingest of this bundle")
            return _unchanged_report(loaded, started)
    fresh = (
        not loaded.problems
        and not tenants_with_records(driver, tenants, database)
        and _one_entry_each(loaded)
    )
    if fresh:
        # Records of tenants without any: their sources are the bundle's own, and nothing it
        # refers to can be in the graph (every reference stays in the bundle's tenants), so
        # there is nothing to look up. The drafts are built in a thread while the first
        # batches are written; validation, which every write waits for, has the interpreter
        # to itself (the thread is held until it ends). A rejection stops the thread before
        # its first draft: nothing is built or written. After the last batch, the thread
        # computes the digest for the mark.
        build = partial(_fresh_batches, loaded, bundle_sources(loaded), now, batch_size)
        with _Ahead(build, then=scope.settle_digest, held=True) as ahead:
            problems = validate_bundle(loaded, ExistingElements(), now=now)
            if problems:
                raise BundleRejected(problems)
            # Every record is new here: each explicit time is the one it would get. Without a
            # floor in the bundle's tenants (no recorded run), none can be backdated.
            floors = {t: f for t, f in (recorded_after or {}).items() if t in tenants}
            retracted = {
                (p.bundle.tenant, str(r.target)) for p in loaded.parts for r in p.bundle.retractions
            }
            found = backdated(explicit_times(loaded), floors, retracted) if floors else []
            if found:
                raise BackdatedRecords(found)
            # Every record is new: the marker names each one the bundle dates.
            rows = backdate_marker.rows(loaded) if backdate_marker is not None else None
            marker_rows = _mark_backdated(scope, backdate_marker, rows)
            ahead.release()
            report = _apply_fresh(driver, loaded, database, ahead, progress, started, scope)
            report.backdated = marker_rows
        report.warnings = case_look_alike_principals(loaded)
    else:
        # An element without `acl` keeps its current record's labels: leaving the field
        # out of a changed bundle must not make a restricted record public (omitted_acl.py).
        loaded = keep_current_acls(driver, loaded, database)
        existing, db_sources = find_existing(driver, loaded, database)
        problems = list(loaded.problems) + validate_bundle(loaded, existing, now=now)
        sources = dict(db_sources)
        sources.update(bundle_sources(loaded))
        prepared = _prepare(driver, loaded, database, sources)
        problems += identity_problems(prepared)
        if problems:
            raise BundleRejected(problems)
        report = _apply(
            driver,
            prepared,
            loaded,
            database,
            now,
            batch_size,
            progress,
            started,
            scope,
            recorded_after or {},
            backdate_marker,
        )
        report.warnings = case_look_alike_principals(loaded, existing)
        report.warnings += recreated_principals(loaded, existing)
    # A bundle is marked only where its result is a fixed point: nothing was written, or no
    # id or key repeats (a history is replanned against the graph each time).
    if not report.changed or fresh or _one_entry_each(loaded):
        ingest_mark.commit(driver, scope, now, database)
        report.seconds = round(time.monotonic() - started, 3)
    return report


def _mark_backdated(
    scope: ingest_mark.WriteScope,
    marker: BackdateMarker | None,
    rows: list[dict[str, Any]] | None,
) -> list[dict[str, Any]]:
    """Have the ingest's first write transaction record `marker` with `rows` (the records it
    writes into the time recorded runs saw), when there are any; the rows."""
    if marker is None or not rows:
        return []
    # With the first records, never after them: a crash between two transactions would
    # leave backdated records that no marker names (replay could not say why).
    scope.first_write = partial(record_backdated_ingest_in_tx, rows=rows, marker=marker)
    return rows


def _unchanged_report(loaded: LoadedBundle, started: float) -> IngestReport:
    """The report of the full comparison of a bundle whose every element is unchanged:
    every node and edge draft and every retraction counted as unchanged."""
    nodes, edges, retractions = _element_records(loaded)
    return IngestReport(
        elements=loaded.element_count(),
        nodes_unchanged=nodes,
        edges_unchanged=edges,
        retractions_unchanged=retractions,
        seconds=round(time.monotonic() - started, 3),
        unchanged_since_last_ingest=True,
    )


def _element_records(loaded: LoadedBundle) -> tuple[int, int, int]:
    """The node records, relationship records and retractions of `loaded`'s elements (each
    one record: what a first ingest writes)."""
    nodes = edges = retractions = 0
    for part in loaded.parts:
        b = part.bundle
        nodes += len(b.sources) + len(b.principals) + len(b.nodes) + len(b.documents)
        edges += len(b.edges) + sum(len(document_edge_keys(d)) for d in b.documents)
        retractions += len(b.retractions)
    return nodes, edges, retractions


@cyclic_gc_paused()
def write_bundle(
    driver: neo4j.Driver,
    loaded: LoadedBundle,
    *,
    database: str | None = None,
    now: datetime | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: Progress | None = None,
    known_sources: dict[tuple[str, str], SourceInfo] | None = None,
) -> IngestReport:
    """Write an already validated bundle; unchanged elements are left alone. A bundle that
    writes under or retracts records of an import's source raises `ImportSourceInBundle`,
    as in `ingest_bundle`: validation does not decide it (graph_schema/import_sources.py)."""
    with ctrl_c.held():
        return _write_bundle(driver, loaded, database, now, batch_size, progress, known_sources)


def _write_bundle(
    driver: neo4j.Driver,
    loaded: LoadedBundle,
    database: str | None,
    now: datetime | None,
    batch_size: int,
    progress: Progress | None,
    known_sources: dict[tuple[str, str], SourceInfo] | None,
) -> IngestReport:
    started = time.monotonic()
    now = now or datetime.now(UTC)
    check_bundle_writes(driver, loaded, database)
    sources = dict(known_sources or {})
    if not known_sources:
        sources.update(find_existing(driver, loaded, database)[1])
    sources.update(bundle_sources(loaded))
    tenants = _bundle_tenants(loaded)
    scope = ingest_mark.WriteScope(sorted(tenants))  # bumps generations, never marks
    if _one_entry_each(loaded) and not tenants_with_records(driver, tenants, database):
        with _Ahead(partial(_fresh_batches, loaded, sources, now, batch_size)) as ahead:
            return _apply_fresh(driver, loaded, database, ahead, progress, started, scope)
    prepared = _prepare(driver, loaded, database, sources)
    problems = identity_problems(prepared)
    if problems:
        raise BundleRejected(problems)
    # No run floors here: `ingest_bundle` is the checked path (graph_schema/backdating.py).
    return _apply(driver, prepared, loaded, database, now, batch_size, progress, started, scope, {})


# Principal and Source records are read by the subject loader and the ingest, as of now,
# never by a template at a run's known_at: their record time changes nothing a run saw.
_GRANT_LABELS = frozenset({NodeLabel.PRINCIPAL.value, NodeLabel.SOURCE.value})


def _prepare(
    driver: neo4j.Driver,
    loaded: LoadedBundle,
    database: str | None,
    sources: dict[tuple[str, str], SourceInfo],
) -> _Prepared:
    node_drafts, edge_drafts = build_drafts(loaded, sources)
    tenants = {d.tenant for d in node_drafts} | {d.tenant for d in edge_drafts}
    tenants |= {part.bundle.tenant for part in loaded.parts if part.bundle.retractions}
    populated = tenants_with_records(driver, tenants, database)
    retractions = [
        _Retraction(part.bundle.tenant, r.target, r.key is not None, r.reason, r.at)
        for part in loaded.parts
        for r in part.bundle.retractions
    ]
    # Retraction targets are read with the drafts, so a retraction already applied costs
    # no write transaction on a re-ingest.
    node_keys = {(d.tenant, d.id) for d in node_drafts}
    node_keys.update((r.tenant, r.target) for r in retractions if not r.is_key)
    edge_keys = {(d.type, d.tenant, d.key) for d in edge_drafts}
    for r in retractions:
        rel_type = rel_type_of_key(r.target) if r.is_key else None
        if rel_type is not None:
            edge_keys.add((rel_type, r.tenant, r.target))
    retracted = {(r.tenant, r.target) for r in retractions}
    # Two independent reads: Neo4j answers them side by side.
    with ThreadPoolExecutor(max_workers=1) as pool:
        edges_read = pool.submit(
            _unchanged_edges, driver, edge_drafts, populated, retracted, database
        )
        same_nodes = _unchanged_nodes(driver, node_drafts, populated, retracted, database)
        same_edges = edges_read.result()
    node_history = _read_node_history(
        driver, {k for k in node_keys if k not in same_nodes}, populated, database
    )
    edge_history = _read_edge_history(
        driver, {k for k in edge_keys if (k[1], k[2]) not in same_edges}, populated, database
    )
    # An id or key whose one bundle entry equals its current record: all the planner and the
    # identity check need to know of its history (its version is never used).
    for key, draft in same_nodes.items():
        identity = _identity_of(draft.labels, draft.props.get("kind"))
        node_history[key] = _History(
            current=_RecordState(
                0, draft.content_hash, RecordStatus.ACTIVE, 0, draft.props.get("source_id")
            ),
            identity=identity,
            first_identity=identity,
        )
    for key, edge in same_edges.items():
        edge_history[key] = _History(
            current=_RecordState(
                0, edge.content_hash, RecordStatus.ACTIVE, 0, edge.props.get("source_id")
            )
        )
    return _Prepared(
        node_drafts=node_drafts,
        edge_drafts=edge_drafts,
        node_history=node_history,
        edge_history=edge_history,
        retractions=retractions,
    )


def _single_entries(
    drafts: Iterable[D], ident: Callable[[D], tuple[str, str]], populated: set[str]
) -> dict[tuple[str, str], D]:
    """Drafts of populated tenants that are the only bundle entry of their id or key."""
    single: dict[tuple[str, str], D] = {}
    repeated: set[tuple[str, str]] = set()
    for draft in drafts:
        key = ident(draft)
        if key[0] not in populated:
            continue
        if key in single:
            repeated.add(key)
        single[key] = draft
    for key in repeated:
        del single[key]
    return single


# A read of changed records: its statement, its rows, and its other parameters.
_ChangedRead = tuple[str, list[dict[str, Any]], dict[str, Any]]


def _unchanged(
    driver: neo4j.Driver,
    drafts: list[D],
    ident: Callable[[D], tuple[str, str]],
    reads: Callable[[dict[tuple[str, str], D]], list[_ChangedRead]],
    populated: set[str],
    retracted: set[tuple[str, str]],
    database: str | None,
) -> dict[tuple[str, str], D]:
    """Single-entry drafts, not retracted, whose current record no read reports as changed.

    `reads` turns those drafts into statements and rows; each statement returns the tenant and
    the id or key (its first two columns) of every row whose record changed.
    """
    single = _single_entries(drafts, ident, populated)
    for key in retracted:
        single.pop(key, None)
    for statement, rows, params in reads(single):
        for chunk in _chunks(rows, _READ_BATCH):
            records, _, _ = driver.execute_query(
                statement,
                rows=list(chunk),
                **params,
                database_=database,
                routing_=neo4j.RoutingControl.READ,
            )
            for r in records:
                single.pop((r[0], r[1]), None)
    return single


def _unchanged_nodes(
    driver: neo4j.Driver,
    drafts: list[NodeDraft],
    populated: set[str],
    retracted: set[tuple[str, str]],
    database: str | None,
) -> dict[tuple[str, str], NodeDraft]:
    """Single-entry ids whose current record is active, of the same type labels and hash."""

    def reads(single: dict[tuple[str, str], NodeDraft]) -> list[_ChangedRead]:
        rows: list[dict[str, Any]] = [
            {"tenant": t, "id": i, "hash": d.content_hash, "labels": d.labels}
            for (t, i), d in single.items()
        ]
        return [(_NODE_CHANGED, rows, {"types": sorted(_TYPE_LABELS)})]

    return _unchanged(
        driver, drafts, lambda d: (d.tenant, d.id), reads, populated, retracted, database
    )


def _unchanged_edges(
    driver: neo4j.Driver,
    drafts: list[EdgeDraft],
    populated: set[str],
    retracted: set[tuple[str, str]],
    database: str | None,
) -> dict[tuple[str, str], EdgeDraft]:
    """Single-entry keys whose current copies are all active with the same hash."""

    def reads(single: dict[tuple[str, str], EdgeDraft]) -> list[_ChangedRead]:
        by_type: dict[RelType, list[dict[str, Any]]] = defaultdict(list)
        for (tenant, name), draft in single.items():
            by_type[draft.type].append({"tenant": tenant, "key": name, "hash": draft.content_hash})
        return [(statement, rows, {}) for statement, rows in _EDGE_CHANGED.batches(by_type)]

    return _unchanged(
        driver, drafts, lambda d: (d.tenant, d.key), reads, populated, retracted, database
    )


def _identity_of(labels: Iterable[str], kind: Any) -> _Identity:
    types = tuple(sorted(x for x in labels if x in _TYPE_LABELS))
    return _Identity(types, str(kind) if kind is not None else None)


def identity_problems(prepared: _Prepared) -> list[BundleProblem]:
    """Records that would change what an id is (its type labels or document kind).

    A record may restore the identity of the id's first record: that repairs a graph an
    older version of the writer let a bad ingest change.
    """
    problems: list[BundleProblem] = []
    first_in_bundle: dict[tuple[str, str], _Identity] = {}
    for draft in prepared.node_drafts:
        wanted = _identity_of(draft.labels, draft.props.get("kind"))
        earlier = first_in_bundle.setdefault((draft.tenant, draft.id), wanted)
        if earlier != wanted:
            problems.append(
                BundleProblem(
                    origin=draft.origin or "bundle",
                    element=draft.element or draft.id,
                    reason=f"id {draft.id!r} is a {earlier.text()} earlier in this bundle; "
                    f"a later entry cannot make it a {wanted.text()}",
                )
            )
            continue
        history = prepared.node_history.get((draft.tenant, draft.id))
        if history is None or history.identity is None:
            continue
        if wanted == history.identity or wanted == history.first_identity:
            continue
        problems.append(
            BundleProblem(
                origin=draft.origin or "bundle",
                element=draft.element or draft.id,
                reason=(
                    f"id {draft.id!r} is a {history.identity.text()} in tenant "
                    f"{draft.tenant!r}; a new record cannot make it a {wanted.text()} "
                    "(use another id)"
                ),
            )
        )
    return problems


def _apply(
    driver: neo4j.Driver,
    prepared: _Prepared,
    loaded: LoadedBundle,
    database: str | None,
    now: datetime,
    batch_size: int,
    progress: Progress | None,
    started: float,
    scope: ingest_mark.WriteScope,
    floors: Mapping[str, RecordFloor],
    marker: BackdateMarker | None = None,
) -> IngestReport:
    say = progress or (lambda _message: None)
    node_drafts, edge_drafts = prepared.node_drafts, prepared.edge_drafts
    retractions = prepared.retractions
    retracted = {(r.tenant, r.target) for r in retractions}
    report = IngestReport(elements=loaded.element_count())

    say(f"planning {len(node_drafts)} node and {len(edge_drafts)} edge records")
    takeovers: list[Takeover] = []
    node_rounds, report.nodes_unchanged = _plan(
        node_drafts, lambda d: (d.tenant, d.id), prepared.node_history, retracted, now, takeovers
    )
    edge_rounds, report.edges_unchanged = _plan(
        edge_drafts, lambda d: (d.tenant, d.key), prepared.edge_history, retracted, now, takeovers
    )
    written = {(d.tenant, d.id) for r in node_rounds for d, *_ in r}
    written.update((d.tenant, d.key) for r in edge_rounds for d, *_ in r)
    pending = [r for r in retractions if not _already_retracted(prepared, r, written)]
    if any(t.endpoints is not None for t in takeovers):
        takeovers = _without_endpoint_holders(driver, database, prepared, takeovers)
    takeovers += _retraction_takeovers(prepared, pending, written, _speaks_as(loaded))
    takeovers += _untrusted_supersessions(driver, database, prepared, edge_rounds)
    if takeovers:
        raise SourceTakeover(takeovers)  # before anything is written
    # The times the new records would get: an explicit one was kept (else: now). Unchanged
    # elements and retractions of what is retracted already write nothing, so are not here.
    times = [
        (d.tenant, d.id, at)
        for r in node_rounds
        for d, _, at, _ in r
        if at != now and not _GRANT_LABELS & set(d.labels)
    ]
    times += [(d.tenant, d.key, at) for r in edge_rounds for d, _, at, _ in r if at != now]
    times += [(r.tenant, r.target, r.at) for r in pending]
    if floors:
        found = backdated(times, floors, {(r.tenant, r.target) for r in pending})
        if found:
            raise BackdatedRecords(found)  # before anything is written
    if marker is not None:
        retracting = {(r.tenant, r.target) for r in pending}
        report.backdated = _mark_backdated(scope, marker, marker.written_rows(times, retracting))
    report.retractions_unchanged = len(retractions) - len(pending)
    if node_rounds or edge_rounds or pending:
        # Each tenant's own fulltext index exists before its records do (tenant-local ranking).
        apply_tenant_schema(driver, {d.tenant for d in node_drafts}, database)

    total = sum(len(r) for r in node_rounds)
    scope.records_planned = total + sum(len(r) for r in edge_rounds) + len(pending)
    ctrl_c.at_safe_points()
    done = 0
    for round_writes in node_rounds:
        writes = [_NodeWrite(d, v, at, sup) for d, v, at, sup in round_writes]
        for chunk in _chunks(writes, batch_size):
            superseded, copied = _execute(driver, database, scope, _write_nodes, chunk)
            report.node_records_created += len(chunk)
            report.records_superseded += superseded
            report.edges_copied += copied
            done += len(chunk)
            say(f"node records: {done}/{total}")

    total = sum(len(r) for r in edge_rounds)
    done = 0
    for edge_round in edge_rounds:
        edge_writes = [_EdgeWrite(d, v, at, sup) for d, v, at, sup in edge_round]
        for echunk in _chunks(edge_writes, batch_size):
            superseded = _execute(driver, database, scope, _write_edges, echunk)
            report.edge_records_created += len(echunk)
            report.records_superseded += superseded
            done += len(echunk)
            say(f"edge records: {done}/{total}")

    _apply_retractions(driver, database, scope, pending, report)
    if retractions:
        say(f"retractions: {report.tombstones_created} applied of {len(retractions)}")
    report.seconds = round(time.monotonic() - started, 3)
    return report


_CURRENT_SOURCES = (
    "UNWIND $rows AS row MATCH (n:KG {tenant: row.tenant, id: row.id}) "
    "WHERE n.superseded_at IS NULL RETURN row.tenant AS tenant, row.id AS id, "
    "n.source_id AS source"
)


def _current_sources(
    driver: neo4j.Driver, database: str | None, ids: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], str | None]:
    """The source of the current record of each (tenant, id) in the graph (absent: none)."""
    holders: dict[tuple[str, str], str | None] = {}
    for chunk in _chunks(list(ids), _READ_BATCH):
        records, _, _ = driver.execute_query(
            _CURRENT_SOURCES,
            rows=[{"tenant": t, "id": i} for t, i in chunk],
            database_=database,
            routing_=neo4j.RoutingControl.READ,
        )
        for r in records:
            holders[(r["tenant"], r["id"])] = r["source"]
    return holders


def _without_endpoint_holders(
    driver: neo4j.Driver,
    database: str | None,
    prepared: _Prepared,
    takeovers: list[Takeover],
) -> list[Takeover]:
    """Drop the relationship takeovers whose incoming source holds one of the endpoints.

    A relationship is stated by both of its ends' sources: a runbook folder links its runbook
    to an alert (`alerts:`, or the file name) while the rule file links the same alert to it
    (`runbook_url`), under one key. Either may restate it; a source holding neither end may
    not. An endpoint is held by the source of the bundle's entry of it (a takeover of that
    entry is refused on its own), else of its current record: one read, of the endpoints of
    those relationships only (none on an ingest without such a relationship)."""
    holders: dict[tuple[str, str], str | None] = {}
    for draft in prepared.node_drafts:
        holders[(draft.tenant, draft.id)] = draft.props.get("source_id")
    missing = sorted(
        {
            (t.tenant, end)
            for t in takeovers
            if t.endpoints is not None
            for end in t.endpoints
            if (t.tenant, end) not in holders
        }
    )
    holders.update(_current_sources(driver, database, missing))
    return [
        t
        for t in takeovers
        if t.endpoints is None
        or all(holders.get((t.tenant, end)) != t.incoming for end in t.endpoints)
    ]


def _untrusted_supersessions(
    driver: neo4j.Driver,
    database: str | None,
    prepared: _Prepared,
    edge_rounds: Sequence[Sequence[tuple[EdgeDraft, int, datetime, bool]]],
) -> list[Takeover]:
    """The new SUPERSEDES relationships by which an untrusted document would retire a record
    another source holds. A `supersedes:` line in an imported file is text like any other: it
    must not make the team's runbook `rejected_superseded` (a trusted source may, as the
    operator declared it). Only records already in the graph count, as on a tenant's first
    ingest (a bundle's own documents are its author's). One read, of those targets only."""
    docs = {(d.tenant, d.id): d for d in prepared.node_drafts}
    wanted = [
        d
        for r in edge_rounds
        for d, *_ in r
        if d.type is RelType.SUPERSEDES
        and (doc := docs.get((d.tenant, d.from_id))) is not None
        and doc.props.get("trust") != Trust.TRUSTED.value
    ]
    holders = _current_sources(driver, database, sorted({(d.tenant, d.to_id) for d in wanted}))
    refused = []
    for d in wanted:
        held, incoming = holders.get((d.tenant, d.to_id)), d.props.get("source_id")
        if held is not None and held != incoming:
            refused.append(Takeover(d.tenant, d.to_id, held, incoming, superseded_by=d.from_id))
    return sorted(set(refused), key=lambda t: (t.tenant, t.target, t.superseded_by or ""))


def _speaks_as(loaded: LoadedBundle) -> str | None:
    """The source a bundle of retractions only speaks for: the caller's `--source-id`
    (`source_override`); None for any other bundle, or without one."""
    retractions_only = all(
        not (b.sources or b.principals or b.nodes or b.edges or b.documents)
        for b in (part.bundle for part in loaded.parts)
    )
    return loaded.source_override if retractions_only else None


def _retraction_takeovers(
    prepared: _Prepared,
    pending: Sequence[_Retraction],
    written: set[tuple[str, str]],
    speaks_as: str | None = None,
) -> list[Takeover]:
    """Retractions of records held by a source none of the bundle's records in that tenant
    come from (nor the id's first record's source). A bundle with no record in the tenant
    (retractions only) states no source: its retractions are the operator's, as before,
    unless the caller names its source (`speaks_as`, `--source-id`): then it retracts only
    that source's records (the flag never lends its authority to another source's)."""
    speaks_for: dict[str, set[str | None]] = defaultdict(set)
    for node in prepared.node_drafts:
        speaks_for[node.tenant].add(node.props.get("source_id"))
    for edge in prepared.edge_drafts:
        speaks_for[edge.tenant].add(edge.props.get("source_id"))
    out: list[Takeover] = []
    for r in pending:
        sources = speaks_for.get(r.tenant) or ({speaks_as} if speaks_as else None)
        if not sources or (r.tenant, r.target) in written:
            continue  # retractions only; or a record this bundle writes first
        history = (prepared.edge_history if r.is_key else prepared.node_history).get(
            (r.tenant, r.target)
        )
        state = history.current if history is not None else None
        if state is None or state.source in sources:
            continue
        if history is not None and history.first_source in sources:
            continue  # the id's own source (its first record's)
        named = tuple(sorted(s for s in sources if s is not None))
        out.append(Takeover(r.tenant, r.target, state.source, None, named or ("(none)",)))
    return out


def _apply_retractions(
    driver: neo4j.Driver,
    database: str | None,
    scope: ingest_mark.WriteScope,
    pending: list[_Retraction],
    report: IngestReport,
) -> None:
    # One write transaction for all of them (each was its own commit before).
    if not pending:
        return
    done = _execute(driver, database, scope, _retract_all, pending)
    created = sum(c for c, _ in done)
    report.tombstones_created += created
    report.retractions_unchanged += len(pending) - created
    report.records_superseded += created
    report.edges_copied += sum(copied for _, copied in done)


def _retract_all(
    tx: neo4j.ManagedTransaction, pending: Sequence[_Retraction]
) -> list[tuple[int, int]]:
    """(records created, edges copied) of each run of node retractions and of each edge
    retraction, in bundle order."""
    done: list[tuple[int, int]] = []
    nodes: list[_Retraction] = []
    for r in pending:
        if r.is_key:
            done.append(_retract_nodes(tx, nodes))
            nodes = []
            done.append(_retract(tx, r))
        else:
            nodes.append(r)
    done.append(_retract_nodes(tx, nodes))
    return done


def _retract_nodes(tx: neo4j.ManagedTransaction, run: Sequence[_Retraction]) -> tuple[int, int]:
    """Tombstone the current records of a run of node retractions with a few statements for
    the whole run. It stores what retracting them one after another stores; when that could
    differ (an id retracted twice, or an edge between two of the retracted records, whose
    copies then depend on the order), they are retracted one after another."""
    if len(run) < 2 or len({(r.tenant, r.target) for r in run}) < len(run):
        return _retract_each(tx, run)
    current: dict[tuple[str, str], neo4j.Record] = {}
    rows = [{"tenant": r.tenant, "id": r.target} for r in run]
    for record in tx.run(_CURRENT_NODES, rows=rows):
        current.setdefault((record["tenant"], record["id"]), record)
    tombstones: list[dict[str, Any]] = []
    for r in run:
        found = current.get((r.tenant, r.target))
        if found is None or found["props"].get("status") == RecordStatus.RETRACTED:
            continue
        tombstones.append(_node_tombstone(found, r))
    if not tombstones:
        return 0, 0
    old_eids = [t["eid"] for t in tombstones]
    copies = _incident_edge_rows(tx, old_eids)
    targets = {(t["tenant"], t["id"]) for t in tombstones}
    if any(
        row["from_id"] != row["to_id"]
        and (row["tenant"], row["from_id"]) in targets
        and (row["tenant"], row["to_id"]) in targets
        for row in copies
    ):
        return _retract_each(tx, run)  # nothing written yet
    tx.run(_TOMBSTONE_NODES, rows=tombstones).consume()
    copied = _copy_edges(tx, copies)
    _supersede_old_copies(tx, old_eids)
    return len(tombstones), copied


def _retract_each(tx: neo4j.ManagedTransaction, run: Sequence[_Retraction]) -> tuple[int, int]:
    done = [_retract(tx, r) for r in run]
    return sum(c for c, _ in done), sum(copied for _, copied in done)


def _node_tombstone(current: neo4j.Record, r: _Retraction) -> dict[str, Any]:
    """The tombstone row of a node record (`_TOMBSTONE_NODE(S)`): its old record's element
    id, labels and properties."""
    previous = _native(current["props"]["recorded_at"])
    props = _tombstone_props(current["props"], r, max(r.at, previous))
    labels = [
        NodeLabel(x).value for x in current["labels"] if x != KG_LABEL and not is_tenant_label(x)
    ]
    labels.append(_tenant_label(r.tenant))
    return {
        "eid": current["eid"],
        "labels": labels,
        "props": props,
        "tenant": r.tenant,
        "id": r.target,
    }


def _bundle_tenants(loaded: LoadedBundle) -> set[str]:
    tenants: set[str] = set()
    for part in loaded.parts:
        b = part.bundle
        tenants.add(b.tenant)
        tenants.update(principal_tenant(b, p) for p in b.principals)
    return tenants


def _one_entry_each(loaded: LoadedBundle) -> bool:
    """Whether no id or key repeats in the bundle. In a tenant without records, every element
    is then a version 1 record and nothing needs history, planning or identity checks; and
    after any successful ingest, a re-ingest of the bundle is a no-op."""
    # Per tenant, sets of plain strings: no tuple per element (this walks the whole bundle).
    ids: defaultdict[str, set[str]] = defaultdict(set)
    keys: defaultdict[str, set[str]] = defaultdict(set)
    count = 0
    for part in loaded.parts:
        b = part.bundle
        own_ids, own_keys = ids[b.tenant], keys[b.tenant]
        own_ids.update([s.source_id for s in b.sources])
        for p in b.principals:
            ids[principal_tenant(b, p)].add(p.id)
        own_ids.update([n.id for n in b.nodes])
        own_ids.update([d.id for d in b.documents])
        own_keys.update([e.edge_key for e in b.edges])
        count += len(b.sources) + len(b.principals) + len(b.nodes) + len(b.documents)
        count += len(b.edges)
        for doc in b.documents:
            if doc.applies_to or doc.supersedes is not None:
                doc_keys = document_edge_keys(doc)
                own_keys.update(doc_keys)
                count += len(doc_keys)
    # Otherwise a history of some id or key: the general planner orders it.
    return sum(map(len, ids.values())) + sum(map(len, keys.values())) == count


_DONE = object()


class _Rows(list[dict[str, Any]]):
    """A batch of rows whose `repr` is short. The neo4j driver formats every statement's
    parameters for its debug log before it knows whether that log is on: for a batch of 5,000
    rows that cost more client CPU than packing it (docs/benchmarks.md)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<{len(self)} rows>"


def _fresh_batches(
    loaded: LoadedBundle,
    sources: dict[tuple[str, str], SourceInfo],
    now: datetime,
    batch_size: int,
    checkpoint: Callable[[], None] = lambda: None,
) -> Iterator[tuple[bool, list[dict[str, Any]]]]:
    """(is_edge, rows) batches of a fresh bundle's records: all nodes, then all edges.
    `checkpoint` is called before each element's record is built (`_Ahead.checkpoint`)."""
    unknown = SourceInfo(purposes=[], trust=Trust.UNTRUSTED.value)
    now_wire = wire_time(now)
    rows = _Rows()

    def node_row(draft: NodeDraft) -> dict[str, Any]:
        plain, times = wire_props(draft.props)
        plain["version"] = 1
        at = draft.explicit_recorded_at
        times.append(["recorded_at", *(wire_time(at) if at is not None else now_wire)])
        return {"labels": stored_labels(draft), "props": plain, "t": times}

    def edge_row(draft: EdgeDraft) -> dict[str, Any]:
        plain, times = wire_props(draft.props)
        plain["version"] = 1
        at = draft.explicit_recorded_at
        times.append(["recorded_at", *(wire_time(at) if at is not None else now_wire)])
        return {
            "tenant": draft.tenant,
            "from_id": draft.from_id,
            "to_id": draft.to_id,
            "type": draft.type.value,
            "props": plain,
            "t": times,
        }

    for part in loaded.parts:
        b = part.bundle
        t = b.tenant
        node_drafts: Iterable[NodeDraft] = (
            *(source_draft(t, spec) for spec in b.sources),
            *(principal_draft(b, spec) for spec in b.principals),
        )
        for draft in node_drafts:
            rows.append(node_row(draft))
        for spec in b.nodes:
            checkpoint()
            rows.append(
                node_row(node_draft(t, spec, sources.get((t, str(spec.source_id)), unknown)))
            )
            if len(rows) >= batch_size:
                yield False, rows
                rows = _Rows()
        for doc in b.documents:
            checkpoint()
            info = sources.get((t, str(doc.source_id)), unknown)
            rows.append(node_row(document_draft(t, doc, info)))
            if len(rows) >= batch_size:
                yield False, rows
                rows = _Rows()
    if rows:
        yield False, rows
        rows = _Rows()
    for part in loaded.parts:
        b = part.bundle
        t = b.tenant
        for doc in b.documents:
            checkpoint()
            info = sources.get((t, str(doc.source_id)), unknown)
            rows.extend(edge_row(e) for e in document_edge_drafts(t, doc, info))
            if len(rows) >= batch_size:
                yield True, rows
                rows = _Rows()
        for edge in b.edges:
            checkpoint()
            rows.append(
                edge_row(edge_draft(t, edge, sources.get((t, str(edge.source_id)), unknown)))
            )
            if len(rows) >= batch_size:
                yield True, rows
                rows = _Rows()
    if rows:
        yield True, rows


class _Stopped(Exception):
    """The consumer left: the producer stops building."""


class _Ahead:
    """Builds the items of `build(checkpoint)` in a thread, while the caller writes the first
    batches: the Python work overlaps Neo4j's (a thread waiting on a socket releases the
    interpreter lock).

    The builder calls `checkpoint` before each element: it waits while it is held, and leaves
    once the caller is done. `held=True` starts it held until `release()`: a caller that
    validates first (validation must finish before the first write, so it is on the critical
    path) keeps the interpreter to itself, and a small bundle cannot be built, and its `then`
    run, before a rejection. An error of the
    builder is raised by the iteration, where its item would have been: the batches before
    it are written, as when a write transaction fails mid-ingest.

    `then`, if given, runs in the thread after the last item was handed over (while the
    caller writes the last batches), unless the caller has left; leaving (`__exit__`) waits
    for it. It must keep its own errors (`WriteScope.settle_digest` does): the iteration has
    ended by then.
    """

    def __init__(
        self,
        build: Callable[[Callable[[], None]], Iterator[Any]],
        then: Callable[[], None] | None = None,
        *,
        held: bool = False,
    ) -> None:
        self._handoff: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._running = threading.Event()
        if not held:
            self._running.set()
        self._worker = threading.Thread(
            target=self._produce, args=(build, then), name="ingest-records", daemon=True
        )
        self._worker.start()

    def checkpoint(self) -> None:
        """In the builder, before each element: wait while held back; stop once abandoned."""
        if not self._running.is_set():
            self._running.wait()
        if self._stop.is_set():
            raise _Stopped

    def release(self) -> None:
        """Let a builder started held go on."""
        self._running.set()

    def _produce(
        self,
        build: Callable[[Callable[[], None]], Iterator[Any]],
        then: Callable[[], None] | None,
    ) -> None:
        try:
            for item in build(self.checkpoint):
                self._handoff.put(item)
            self._handoff.put(_DONE)
            if then is not None:
                self.checkpoint()  # not while held back, nor once the consumer has left
                then()  # keeps its own errors: nothing would raise them here
        except _Stopped:
            return
        except BaseException as exc:  # handed over; the consumer raises it
            self._handoff.put(exc)

    def __iter__(self) -> Iterator[Any]:
        while (item := self._handoff.get()) is not _DONE:
            if isinstance(item, BaseException):
                raise item
            yield item

    def __enter__(self) -> _Ahead:
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._running.set()
        self._worker.join()


def _apply_fresh(
    driver: neo4j.Driver,
    loaded: LoadedBundle,
    database: str | None,
    batches: _Ahead,
    progress: Progress | None,
    started: float,
    scope: ingest_mark.WriteScope,
) -> IngestReport:
    """Write a validated bundle into tenants without records: every record is version 1,
    written batch by batch from `batches` (drafts and hashes built in a thread meanwhile)."""
    say = progress or (lambda _message: None)
    report = IngestReport(elements=loaded.element_count())
    retractions = [
        _Retraction(part.bundle.tenant, r.target, r.key is not None, r.reason, r.at)
        for part in loaded.parts
        for r in part.bundle.retractions
    ]
    nodes, edges, _ = _element_records(loaded)
    scope.records_planned = nodes + edges + len(retractions)
    ctrl_c.at_safe_points()
    node_tenants = {
        p.bundle.tenant
        for p in loaded.parts
        if p.bundle.sources or p.bundle.nodes or p.bundle.documents
    }
    node_tenants.update(
        principal_tenant(p.bundle, x) for p in loaded.parts for x in p.bundle.principals
    )
    if node_tenants:
        # Each tenant's own fulltext index exists before its records do (tenant-local
        # ranking); the batches are being built meanwhile. These tenants had no records
        # (`tenants_with_records`), so there are none to label: that pass would only cost
        # Neo4j a plan (about 0.5 s on a loaded server, after the new index emptied its
        # plan cache), and every record this ingest writes carries the label.
        apply_tenant_schema(driver, node_tenants, database, without_records=True)
    # Each batch is written as soon as it is built (the next ones are built meanwhile), with
    # up to FRESH_WRITERS write transactions in flight.
    in_flight: deque[tuple[bool, int, Future[None]]] = deque()
    counted = threading.Lock()

    def settle(keep: int) -> None:
        # Oldest first, so progress reads in order; an error is raised once its batch is
        # reached (leaving the pool below waits for the batches still in flight).
        while len(in_flight) > keep:
            is_edge, count, future = in_flight.popleft()
            # A Ctrl-C is seen while waiting, without leaving the batch uncounted: its
            # transactions count themselves (`_write_rows`), and the pool waits for them.
            while not wait([future], timeout=CTRL_C_POLL_S).done:
                ctrl_c.stop_if_pressed()
            future.result()
            if is_edge:
                report.edge_records_created += count
                say(f"edge records: {report.edge_records_created}")
            else:
                report.node_records_created += count
                say(f"node records: {report.node_records_created}")

    with _writer_pool() as pool:
        nodes_done = False
        for is_edge, rows in batches:
            ctrl_c.stop_if_pressed()  # before another batch is sent
            if is_edge and not nodes_done:
                settle(0)  # a relationship is written once both its ends are
                nodes_done = True
            work = _create_fresh_edges if is_edge else _create_nodes
            in_flight.append(
                (
                    is_edge,
                    len(rows),
                    pool.submit(_write_rows, driver, database, scope, work, rows, counted),
                )
            )
            # The first batch alone: its transaction makes the tenants' ingest marks, which
            # two transactions' MERGEs at once would make twice.
            settle(0 if scope.writes == 0 else FRESH_WRITERS - 1)
        settle(0)
    _apply_retractions(driver, database, scope, retractions, report)
    if retractions:
        say(f"retractions: {report.tombstones_created} applied of {len(retractions)}")
    report.seconds = round(time.monotonic() - started, 3)
    return report


@contextlib.contextmanager
def _writer_pool() -> Iterator[ThreadPoolExecutor]:
    """A first ingest's writer threads, every one of them ended when this exits.

    Leaving the pool waits only for the threads it knows: a Ctrl-C landing in `submit` while
    the pool starts a worker (`Thread.start` waits for it) leaves that worker, and the batch
    it writes, unknown to the pool, and an interrupted ingest would count its records before
    that batch commits (it said 9 written where the graph held 10)."""
    prefix = f"ingest-write-{next(_writer_pools)}"
    try:
        with ThreadPoolExecutor(FRESH_WRITERS, thread_name_prefix=prefix) as pool:
            yield pool
    finally:
        for thread in threading.enumerate():
            if thread.name.startswith(f"{prefix}_") and thread is not threading.current_thread():
                thread.join()


_writer_pools = itertools.count(1)


def _write_rows(
    driver: neo4j.Driver,
    database: str | None,
    scope: ingest_mark.WriteScope,
    work: Callable[[neo4j.ManagedTransaction, list[dict[str, Any]]], None],
    rows: list[dict[str, Any]],
    counted: threading.Lock,
) -> None:
    """Write one batch of a first ingest, then empty its list of rows.

    A batch that hits the transaction timeout rolled back whole, and its rows are all new
    records (none is in the graph), so it is written again in two halves (`TIMEOUT_SPLITS`
    times at most), each its own transaction; past that it raises `IngestTimedOut`. Each
    committed transaction counts itself in `scope.writes` (under `counted`), so the next
    one's mark bump and the ingest mark see every one.

    The driver keeps a statement's parameters in a reference cycle, which other writes free
    with a young collection (`collect_young`). Here emptying the list frees the rows
    instead, and the cycle left holds a few small objects; a young collection would walk
    every container built since the last one, the next batches' rows included (about 5% of
    the client CPU of the 101k bundle's first ingest, docs/benchmarks.md).
    """

    def write(part: list[dict[str, Any]], splits: int) -> None:
        try:
            _write(driver, database, scope, work, part, collect=False)
        except IngestTimedOut:
            if splits == 0 or len(part) < 2:
                raise
            half = len(part) // 2
            write(part[:half], splits - 1)
            write(part[half:], splits - 1)
            return
        with counted:
            scope.writes += 1
            scope.records_written += len(part)

    try:
        write(rows, TIMEOUT_SPLITS)
    finally:
        rows.clear()


def _create_nodes(tx: neo4j.ManagedTransaction, rows: list[dict[str, Any]]) -> None:
    tx.run(_NODE_CREATE, rows=rows).consume()


def _create_fresh_edges(tx: neo4j.ManagedTransaction, rows: list[dict[str, Any]]) -> None:
    record = tx.run(_EDGE_CREATE_FRESH, rows=rows).single()
    created = int(record["n"]) if record else 0
    if created != len(rows):
        # Validation proved every endpoint exists; a miss means a concurrent change.
        raise _endpoints_gone(rows, created)


def _endpoints_gone(rows: Sequence[Mapping[str, Any]], created: int) -> IngestInterrupted:
    """The error of a batch of relationships some of whose endpoints are no longer there."""
    return IngestInterrupted(
        {str(row["tenant"]) for row in rows},
        f"{len(rows) - created} of {len(rows)} relationships found no endpoint: records of "
        "tenant {tenants} were deleted while this ingest wrote it",
    )


# What a write transaction hits when the tenant changes under it (not a problem of the
# bundle: validation and planning ruled those out against the graph they read).
_DELETED = "Neo.ClientError.Statement.EntityNotFound"


def _already_retracted(prepared: _Prepared, r: _Retraction, written: set[tuple[str, str]]) -> bool:
    if (r.tenant, r.target) in written:
        return False  # this ingest writes a new record of it first
    history = (prepared.edge_history if r.is_key else prepared.node_history).get(
        (r.tenant, r.target)
    )
    state = history.current if history is not None else None
    return state is not None and state.status == RecordStatus.RETRACTED


def _execute(
    driver: neo4j.Driver,
    database: str | None,
    scope: ingest_mark.WriteScope,
    work: Callable[..., T],
    arg: Any,
) -> T:
    """Run one write transaction of an ingest, writing the records `arg` lists; it also
    bumps the generation of every tenant of the ingest (graph_schema.ingest_mark), so a mark
    never outlives a write."""
    result = _write(driver, database, scope, work, arg, count=True)
    scope.writes += 1
    return result


def _write(
    driver: neo4j.Driver,
    database: str | None,
    scope: ingest_mark.WriteScope,
    work: Callable[..., T],
    arg: Any,
    *,
    collect: bool = True,
    count: bool = False,
) -> T:
    """`_execute` without counting the write: the caller counts it (from any thread).
    `collect=False`: no young collection after it (the caller frees what it sent).
    `count`: once committed, add the records `arg` lists to `scope.records_written` (before
    a Ctrl-C held back during the transaction lands)."""

    @neo4j.unit_of_work(timeout=WRITE_TIMEOUT_S)
    def unit(tx: neo4j.ManagedTransaction, value: Any) -> T:
        result = work(tx, value)
        scope.bump(tx)
        return result

    try:
        with driver.session(database=database) as session, ctrl_c.held():
            result = session.execute_write(unit, arg)
            if count:
                scope.records_written += len(arg) if isinstance(arg, Sized) else 1
    except neo4j.exceptions.ConstraintError:
        # A record this ingest planned as new was written by another ingest meanwhile.
        raise IngestInterrupted(
            scope.tenants, "another ingest of tenant {tenants} wrote the same records at once"
        ) from None
    except neo4j.exceptions.ClientError as exc:
        if exc.code in _TIMED_OUT:
            raise IngestTimedOut(scope.tenants, len(arg) if isinstance(arg, Sized) else 1) from None
        if exc.code != _DELETED:
            raise
        raise IngestInterrupted(
            scope.tenants, "records of tenant {tenants} were deleted while this ingest wrote it"
        ) from None
    if collect:
        collect_young()  # the driver holds the written rows in a reference cycle
    return result


def tenants_with_records(
    driver: neo4j.Driver, tenants: set[str], database: str | None = None
) -> set[str]:
    """Which of `tenants` hold any KG record (one seek per tenant on its (tenant, id) index)."""
    if not tenants:
        return set()
    records, _, _ = driver.execute_query(
        _TENANT_HAS_RECORDS,
        tenants=sorted(tenants),
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    return {str(r["tenant"]) for r in records}


def _read_history(
    driver: neo4j.Driver,
    query: str,
    rows: list[dict[str, str]],
    database: str | None,
    into: dict[tuple[str, str], _History],
) -> None:
    for chunk in _chunks(rows, _READ_BATCH):
        records, _, _ = driver.execute_query(
            query, rows=list(chunk), database_=database, routing_=neo4j.RoutingControl.READ
        )
        # The history queries return the same first columns in the same order; unpacking
        # values is much cheaper than looking each column up by name.
        for values in (r.values() for r in records):
            tenant, name, version, digest, status, current, recorded_us = values[:7]
            if version is None or recorded_us is None:
                # A record deleted between its match and the read of its properties.
                raise IngestInterrupted(
                    [tenant], "records of tenant {tenants} were deleted while this ingest read it"
                )
            history = into.get((tenant, name))
            if history is None:
                history = into[(tenant, name)] = _History()
            history.seen.add((digest, int(recorded_us)))
            source = values[7]
            if history.first_source_version is None or int(version) < history.first_source_version:
                history.first_source, history.first_source_version = source, int(version)
            identity = _identity_of(values[8], values[9]) if len(values) > 8 else None
            if identity is not None and (
                history.first_identity is None or int(version) < history.first_version
            ):
                history.first_identity, history.first_version = identity, int(version)
            if current:
                state = _RecordState(int(version), digest, status, int(recorded_us), source)
                # Several current copies of one edge record share one version: keep the max.
                if history.current is None or state.version > history.current.version:
                    history.current = state
                    history.identity = identity


def _read_node_history(
    driver: neo4j.Driver,
    node_keys: set[tuple[str, str]],
    populated: set[str],
    database: str | None,
) -> dict[tuple[str, str], _History]:
    keys = sorted(k for k in node_keys if k[0] in populated)
    out: dict[tuple[str, str], _History] = {}
    _read_history(driver, _NODE_HISTORY, [{"tenant": t, "id": i} for t, i in keys], database, out)
    return out


def _read_edge_history(
    driver: neo4j.Driver,
    edge_keys: set[tuple[RelType, str, str]],
    populated: set[str],
    database: str | None,
) -> dict[tuple[str, str], _History]:
    by_type: dict[RelType, set[tuple[str, str]]] = defaultdict(set)
    for rel_type, tenant, key in edge_keys:
        if tenant in populated:
            by_type[rel_type].add((tenant, key))
    out: dict[tuple[str, str], _History] = {}
    rows = {
        rel_type: [{"tenant": t, "key": k} for t, k in sorted(keys)]
        for rel_type, keys in by_type.items()
    }
    for statement, typed_rows in _EDGE_HISTORY.batches(rows):
        _read_history(driver, statement, typed_rows, database, out)
    return out


D = TypeVar("D", NodeDraft, EdgeDraft)


def _plan(
    drafts: Iterable[D],
    ident: Callable[[D], tuple[str, str]],
    histories: dict[tuple[str, str], _History],
    retracted: set[tuple[str, str]],
    now: datetime,
    takeovers: list[Takeover],
) -> tuple[list[list[tuple[D, int, datetime, bool]]], int]:
    """Decide each draft: unchanged, or a new record (version, recorded_at) in some round.

    Round k holds the k-th new record of each id, so one UNWIND never writes two versions of
    one id (each needs the previous one to be current). The bundle's last entry of an id is
    what the id must be after the ingest: if the current record differs (a later ingest
    changed it), a new record restores it, even when that exact record was written before.

    A new record that would replace a record of another source (the graph's current one,
    or the bundle's own previous entry of the id) is added to `takeovers`, unless it comes
    from the source of the id's first record: the caller refuses the ingest before writing
    anything.
    """

    def check(key: tuple[str, str], held_by: str | None, first: str | None, draft: D) -> None:
        incoming = draft.props.get("source_id")
        if held_by != incoming and first != incoming:
            ends = (draft.from_id, draft.to_id) if isinstance(draft, EdgeDraft) else None
            takeovers.append(Takeover(key[0], key[1], held_by, incoming, endpoints=ends))

    grouped: dict[tuple[str, str], list[D]] = defaultdict(list)
    for draft in drafts:
        grouped[ident(draft)].append(draft)
    far_future = datetime.max.replace(tzinfo=UTC)
    rounds: list[list[tuple[D, int, datetime, bool]]] = []
    unchanged = 0
    for key in sorted(grouped):
        history = histories.get(key)
        if history is None:
            # Nothing recorded yet (the common first ingest): every entry is a new record.
            entries = grouped[key]
            if len(entries) > 1:
                entries = sorted(entries, key=lambda d: d.explicit_recorded_at or far_future)
            previous_hash = None
            previous: D | None = None
            position = 0
            for draft in entries:
                if draft.content_hash == previous_hash:
                    unchanged += 1  # the same content again: one record says it
                    continue
                if previous is not None:
                    first = entries[0].props.get("source_id")
                    check(key, previous.props.get("source_id"), first, draft)
                previous = draft
                if len(rounds) <= position:
                    rounds.append([])
                recorded_at = draft.explicit_recorded_at or now
                rounds[position].append((draft, position + 1, recorded_at, position > 0))
                position += 1
                previous_hash = draft.content_hash
            continue
        state = history.current
        entries = sorted(grouped[key], key=lambda d: d.explicit_recorded_at or far_future)
        position = 0
        for index, draft in enumerate(entries):
            last = index == len(entries) - 1
            explicit = draft.explicit_recorded_at
            if state is not None and state.status == RecordStatus.RETRACTED and key in retracted:
                unchanged += 1  # still retracted by this very bundle
                continue
            if (
                state is not None
                and state.status == RecordStatus.ACTIVE
                and state.content_hash == draft.content_hash
            ):
                unchanged += 1
                continue
            if (
                not last
                and explicit is not None
                and (draft.content_hash, epoch_micros(explicit)) in history.seen
            ):
                unchanged += 1  # an earlier record of this history, already written
                continue
            # A record cannot be learned before the record it replaces: then we learn it now.
            if explicit is not None and (
                state is None or epoch_micros(explicit) > state.recorded_us
            ):
                recorded_at = explicit
            else:
                recorded_at = now
            version = 1 if state is None else state.version + 1
            if state is not None:
                check(key, state.source, history.first_source, draft)
            if len(rounds) <= position:
                rounds.append([])
            rounds[position].append((draft, version, recorded_at, state is not None))
            position += 1
            state = _RecordState(
                version,
                draft.content_hash,
                RecordStatus.ACTIVE,
                epoch_micros(recorded_at),
                draft.props.get("source_id"),
            )
    return rounds, unchanged


def _copy_incident_edges(tx: neo4j.ManagedTransaction, old_eids: list[str]) -> int:
    """Move current edge records of superseded node records onto the current records: copy
    them there, then supersede the copies left on the old records."""
    copied = _copy_edges(tx, _incident_edge_rows(tx, old_eids))
    _supersede_old_copies(tx, old_eids)
    return copied


def _supersede_old_copies(tx: neo4j.ManagedTransaction, old_eids: list[str]) -> None:
    """Supersede the edge copies still current on superseded node records (by element id)."""
    if old_eids:
        tx.run(_SUPERSEDE_OLD_COPIES, olds=old_eids).consume()


def _incident_edge_rows(tx: neo4j.ManagedTransaction, old_eids: list[str]) -> list[dict[str, Any]]:
    """`_EDGE_COPY` rows of the current edge records of node records (by element id)."""
    if not old_eids:
        return []
    wanted: dict[tuple[str, str, int, str, str], dict[str, Any]] = {}
    for r in tx.run(_INCIDENT_EDGES, olds=old_eids):
        rel_type = RelType(r["type"])  # only enum types are ever written
        props = dict(r["props"])
        ident = (r["tenant"], str(props["key"]), int(props["version"]), r["from_id"], r["to_id"])
        wanted[ident] = {
            "tenant": r["tenant"],
            "from_id": r["from_id"],
            "to_id": r["to_id"],
            "type": rel_type.value,
            "props": props,
        }
    return [dict(wanted[k], idx=i) for i, k in enumerate(sorted(wanted))]


def _copy_edges(tx: neo4j.ManagedTransaction, rows: list[dict[str, Any]]) -> int:
    if not rows:
        return 0
    record = tx.run(_EDGE_COPY, rows=rows).single()
    return int(record["n"]) if record else 0


def _write_nodes(tx: neo4j.ManagedTransaction, writes: Sequence[_NodeWrite]) -> tuple[int, int]:
    superseding = [
        {"tenant": w.draft.tenant, "id": w.draft.id, "at": wire_time(w.recorded_at)}
        for w in writes
        if w.supersede
    ]
    old_eids: list[str] = []
    if superseding:
        old_eids = [r["old_eid"] for r in tx.run(_NODE_SUPERSEDE, rows=superseding)]
    rows = []
    for w in writes:
        plain, times = wire_props(w.draft.props)
        plain["version"] = w.version
        times.append(["recorded_at", *wire_time(w.recorded_at)])
        rows.append({"labels": stored_labels(w.draft), "props": plain, "t": times})
    tx.run(_NODE_CREATE, rows=rows).consume()
    return len(old_eids), _copy_incident_edges(tx, old_eids)


def _write_edges(tx: neo4j.ManagedTransaction, writes: Sequence[_EdgeWrite]) -> int:
    superseded = 0
    by_type: dict[RelType, list[dict[str, Any]]] = defaultdict(list)
    for w in writes:
        if w.supersede:
            by_type[w.draft.type].append(
                {"tenant": w.draft.tenant, "key": w.draft.key, "at": wire_time(w.recorded_at)}
            )
    for statement, rows in _EDGE_SUPERSEDE.batches(by_type):
        record = tx.run(statement, rows=rows).single()
        superseded += int(record["n"]) if record else 0
    rows = []
    for idx, w in enumerate(writes):
        plain, times = wire_props(w.draft.props)
        plain["version"] = w.version
        at = wire_time(w.recorded_at)
        times.append(["recorded_at", *at])
        rows.append(
            {
                "idx": idx,
                "tenant": w.draft.tenant,
                "from_id": w.draft.from_id,
                "to_id": w.draft.to_id,
                "type": w.draft.type.value,
                "props": plain,
                "t": times,
                "at": at,
            }
        )
    record = tx.run(_EDGE_CREATE, rows=rows).single()
    created = int(record["rows_written"]) if record else 0
    if created != len(rows):
        # Validation proved every endpoint exists; a miss means a concurrent change.
        raise _endpoints_gone(rows, created)
    return superseded


def _tombstone_props(
    props: dict[str, Any], r: _Retraction, recorded_at: datetime
) -> dict[str, Any]:
    out = {k: _native(v) for k, v in props.items() if k not in ("superseded_at", "content_hash")}
    out["status"] = RecordStatus.RETRACTED.value
    out["retraction_reason"] = r.reason
    out["retracted_at"] = r.at
    out["version"] = int(props["version"]) + 1
    out["recorded_at"] = recorded_at
    out["content_hash"] = content_hash(out)
    return out


def _retract(tx: neo4j.ManagedTransaction, r: _Retraction) -> tuple[int, int]:
    """Tombstone the current record of an id or key; (records created, edges copied)."""
    if not r.is_key:
        current = tx.run(_CURRENT_NODE, tenant=r.tenant, id=r.target).single()
        if current is None or current["props"].get("status") == RecordStatus.RETRACTED:
            return 0, 0
        row = _node_tombstone(current, r)
        tx.run(_TOMBSTONE_NODE, eid=row["eid"], labels=row["labels"], props=row["props"]).consume()
        return 1, _copy_incident_edges(tx, [row["eid"]])
    rel_type = rel_type_of_key(r.target)
    if rel_type is None:
        return 0, 0
    copies = list(tx.run(_EDGE_CURRENT_COPIES[rel_type], tenant=r.tenant, key=r.target))
    if not copies or copies[0]["props"].get("status") == RecordStatus.RETRACTED:
        return 0, 0
    first = copies[0]
    previous = max(_native(c["props"]["recorded_at"]) for c in copies)
    at = max(r.at, previous)
    props = _tombstone_props(first["props"], r, at)
    tx.run(_SUPERSEDE_BY_EID, eids=[c["eid"] for c in copies], at=at).consume()
    # Copies on older endpoint records that ended after a retraction dated back end with it.
    tx.run(_EDGE_LATER_COPIES[rel_type], tenant=r.tenant, key=r.target, at=at).consume()
    row = {
        "idx": 0,
        "tenant": r.tenant,
        "from_id": first["from_id"],
        "to_id": first["to_id"],
        "type": rel_type.value,
        "props": props,
    }
    record = tx.run(_EDGE_COPY, rows=[row]).single()
    return (int(record["rows_written"]) if record else 0), 0
