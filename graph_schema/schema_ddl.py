"""Constraints and indexes of the Knowledge Graph, applied idempotently.

Every statement is a constant (labels and relationship types come from the enums of
`graph_schema.kg_types`), so nothing from a user or a bundle reaches schema DDL. The one
exception, the per-tenant fulltext index, is named from a tenant that passed the identifier
check, reduced to `[A-Za-z0-9_]` and suffixed with a digest of the exact tenant.

Fulltext ranking is tenant-local (issue 18): every KG record also carries its tenant's label
(`tenant_label`), and each tenant has its own Lucene index over that label
(`tenant_fulltext_index`). Term and document frequencies, hence scores and order, then come
from that tenant's records only: another tenant's data can neither move them nor show
through them.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Collection

import neo4j
from pydantic import BaseModel

from graph_schema.kg_types import IDENTIFIER, NodeLabel, RelType

# The tenant-free fulltext index of older schemas; the naive evaluation baseline now creates
# it for its own run (investigator/evaluation/baseline.py), so ingests never pay for it.
FULLTEXT_INDEX = "kg_fulltext"
TENANT_LABEL_PREFIX = "KGTenant_"
TENANT_FULLTEXT_PREFIX = "kg_fulltext_t_"
FULLTEXT_PROPERTIES = ("search_text", "name", "title")
_NOT_NAME_CHAR = re.compile(r"[^A-Za-z0-9_]")
INDEX_ONLINE_TIMEOUT_S = 300


def _tenant_slug(tenant: str) -> str:
    # Readable part plus a digest of the exact text: `a.b` and `a_b` stay distinct.
    if not IDENTIFIER.match(tenant):
        raise ValueError(f"tenant {tenant[:80]!r} is not an identifier")
    digest = hashlib.sha256(tenant.encode("utf-8")).hexdigest()[:12]
    return f"{_NOT_NAME_CHAR.sub('_', tenant)[:40]}_{digest}"


def tenant_label(tenant: str) -> str:
    """The label every KG record of `tenant` carries, e.g. `KGTenant_acme_6e0ee4b1c9f1`."""
    return TENANT_LABEL_PREFIX + _tenant_slug(tenant)


def tenant_fulltext_index(tenant: str) -> str:
    """The name of `tenant`'s own fulltext index (the templates' `$fulltext_index`)."""
    return TENANT_FULLTEXT_PREFIX + _tenant_slug(tenant)


def is_tenant_label(label: str) -> bool:
    """True for a per-tenant label (not a KG type): code reading `labels(n)` skips these."""
    return label.startswith(TENANT_LABEL_PREFIX)


class SchemaItem(BaseModel):
    """One named constraint or index and the statement that creates it."""

    name: str
    kind: str  # "constraint" | "range index" | "fulltext index"
    statement: str
    # The label or relationship type and the properties a range index (or the constraint's
    # index) keys on: their values must fit Neo4j's index key size (`range_indexed`).
    target: str = ""
    properties: tuple[str, ...] = ()


class SchemaReport(BaseModel):
    """What `apply_schema` did: the names it created, those already present, and the retired
    indexes it dropped."""

    created: list[str]
    present: list[str]
    dropped: list[str] = []


# Schema DDL cannot take parameters, so its text is assembled here; every name, label and
# property below is a module constant or a NodeLabel/RelType member, never user input.
def _node_range(name: str, label: str, props: tuple[str, ...]) -> SchemaItem:
    on = ", ".join(f"n.{p}" for p in props)
    return SchemaItem(
        name=name,
        kind="range index",
        statement=f"CREATE RANGE INDEX {name} IF NOT EXISTS FOR (n:{label}) ON ({on})",
        target=label,
        properties=props,
    )


def _rel_range(name: str, rel_type: RelType, props: tuple[str, ...]) -> SchemaItem:
    on = ", ".join(f"r.{p}" for p in props)
    return SchemaItem(
        name=name,
        kind="range index",
        statement=(
            f"CREATE RANGE INDEX {name} IF NOT EXISTS FOR ()-[r:{rel_type.value}]-() ON ({on})"
        ),
        target=rel_type.value,
        properties=props,
    )


def schema_items() -> list[SchemaItem]:
    """All constraints and indexes, in the order they are applied."""
    items = [
        SchemaItem(
            name="kg_record_identity",
            kind="constraint",
            statement=(
                "CREATE CONSTRAINT kg_record_identity IF NOT EXISTS "
                "FOR (n:KG) REQUIRE (n.tenant, n.id, n.version) IS UNIQUE"
            ),
            target="KG",
            properties=("tenant", "id", "version"),
        ),
        # One ingest mark per tenant (graph_schema/ingest_mark.py), also when two first
        # ingests of a tenant MERGE it at once: their conflict check reads that one mark.
        SchemaItem(
            name="ingest_mark_tenant",
            kind="constraint",
            statement=(
                "CREATE CONSTRAINT ingest_mark_tenant IF NOT EXISTS "
                "FOR (n:IngestMark) REQUIRE (n.tenant) IS UNIQUE"
            ),
            target="IngestMark",
            properties=("tenant",),
        ),
        # Lookups of an id's current record (ingest, planner entity resolution).
        _node_range("kg_tenant_id", "KG", ("tenant", "id")),
        _node_range("kg_id", "KG", ("id",)),
        _node_range("kg_name", "KG", ("name",)),
        # Exact lookups by business codes.
        _node_range("kg_error_code", NodeLabel.ERROR_CODE.value, ("code",)),
        _node_range("kg_alertname", NodeLabel.ALERT.value, ("alertname",)),
        # Tenant first, so a template's cost follows its tenant's data, not the database's.
        _node_range(
            "kg_deployment_tenant_service", NodeLabel.DEPLOYMENT.value, ("tenant", "service")
        ),
        # deployments_in_window_tenant (version 4): a range seek of the window within the
        # tenant on each field of the deployment time (finished_at, else started_at, else
        # valid_from).
        _node_range(
            "kg_deployment_tenant_finished_at",
            NodeLabel.DEPLOYMENT.value,
            ("tenant", "finished_at"),
        ),
        _node_range(
            "kg_deployment_tenant_started_at", NodeLabel.DEPLOYMENT.value, ("tenant", "started_at")
        ),
        _node_range(
            "kg_deployment_tenant_valid_from", NodeLabel.DEPLOYMENT.value, ("tenant", "valid_from")
        ),
        # change_events_in_window(scope=all): a range seek of the window within the tenant,
        # on `at`, and on `valid_from` for the events that have no `at`.
        _node_range("kg_change_event_tenant_at", NodeLabel.CHANGE_EVENT.value, ("tenant", "at")),
        _node_range(
            "kg_change_event_tenant_valid_from",
            NodeLabel.CHANGE_EVENT.value,
            ("tenant", "valid_from"),
        ),
        _node_range("kg_principal", NodeLabel.PRINCIPAL.value, ("tenant", "id")),
        # Bookkeeping beside the KG, read by tenant first: the folder a source was imported
        # from (graph_schema/importers/import_origin.py; one per source, also when two first
        # imports of it MERGE it at once) and a runbook's file missing from its source's last
        # import (missing_files.py, read by runbooks_for version 4).
        SchemaItem(
            name="import_origin_identity",
            kind="constraint",
            statement=(
                "CREATE CONSTRAINT import_origin_identity IF NOT EXISTS "
                "FOR (n:ImportOrigin) REQUIRE (n.tenant, n.source_id) IS UNIQUE"
            ),
            target="ImportOrigin",
            properties=("tenant", "source_id"),
        ),
        _node_range("missing_file_tenant_id", "MissingFile", ("tenant", "id")),
    ]
    for rel_type in RelType:
        lower = rel_type.value.lower()
        items.append(_rel_range(f"kg_rel_{lower}_key", rel_type, ("tenant", "key")))
    return items


def retired_index_names() -> list[str]:
    """Indexes older schemas created that nothing reads any more, dropped by `apply_schema`.

    Every index is written on each write of its label, so an index no query uses only slows
    ingest (issue 12). None was read by the golden-set evaluation, the demo or the scale
    benchmark (`SHOW INDEXES` readCount 0), and no template variant plans on one but versions 1
    and 2 of `version_history` (a `recorded_at` range seek over every tenant's records).
    `kg_fulltext` belongs to the evaluation's naive baseline, which creates it for its run.
    `import_origin_tenant_source` is replaced by the index of the `import_origin_identity`
    constraint (on the same properties: Neo4j creates neither beside the other).
    """
    names = [
        "kg_source_id",
        "kg_recorded_at",
        "kg_superseded_at",
        "kg_valid_from",
        "kg_valid_to",
        "kg_status",
        "kg_deployment_finished_at",
        "kg_change_event_at",
        "kg_change_event_tenant",
        "kg_document_kind",
        "kg_rel_emitted_first_seen",
        "kg_rel_fired_on_fired_at",
        FULLTEXT_INDEX,
        "import_origin_tenant_source",
    ]
    names += [f"kg_rel_{rel_type.value.lower()}_valid_from" for rel_type in RelType]
    return names


@functools.cache
def range_indexed() -> dict[str, frozenset[str]]:
    """Label or relationship type -> the properties a range index keys on (`KG` for every
    record). Neo4j 5 refuses to write a value whose index key is over about 8 KB
    ("Property value is too large to index"), so bundle validation bounds these."""
    found: dict[str, set[str]] = {}
    for item in schema_items():
        if item.kind != "fulltext index":
            found.setdefault(item.target, set()).update(item.properties)
    return {target: frozenset(props) for target, props in found.items()}


def tenant_fulltext_item(tenant: str) -> SchemaItem:
    """The fulltext index over one tenant's records (same fields and analyzer as the old one)."""
    name = tenant_fulltext_index(tenant)
    on = ", ".join(f"n.{p}" for p in FULLTEXT_PROPERTIES)
    return SchemaItem(
        name=name,
        kind="fulltext index",
        statement=(
            f"CREATE FULLTEXT INDEX {name} IF NOT EXISTS "
            f"FOR (n:{tenant_label(tenant)}) ON EACH [{on}]"
        ),
    )


def _existing_names(driver: neo4j.Driver, database: str | None) -> set[str]:
    names: set[str] = set()
    for query in ("SHOW CONSTRAINTS YIELD name", "SHOW INDEXES YIELD name"):
        records, _, _ = driver.execute_query(query, database_=database)
        names.update(str(r["name"]) for r in records)
    return names


def tenants_in_graph(driver: neo4j.Driver, database: str | None = None) -> list[str]:
    """Every tenant that has KG records (read from the (tenant, id) index)."""
    records, _, _ = driver.execute_query(
        "MATCH (n:KG) WHERE n.tenant IS NOT NULL RETURN DISTINCT n.tenant AS tenant",
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    return sorted(str(r["tenant"]) for r in records)


def _label_tenant_records(driver: neo4j.Driver, tenant: str, database: str | None) -> None:
    # Records written before per-tenant labels existed get theirs here (batched, so a large
    # tenant does not need one huge transaction). The label is a parameter, never text.
    with driver.session(database=database) as session:
        session.run(
            "MATCH (n:KG {tenant: $tenant}) WHERE NOT $label IN labels(n) "
            "CALL (n) { SET n:$($label) } IN TRANSACTIONS OF 10000 ROWS",
            tenant=tenant,
            label=tenant_label(tenant),
        ).consume()


# `IF NOT EXISTS` between two transactions creating the same index at once.
_ALREADY_EXISTS = "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists"


def _create(driver: neo4j.Driver, statement: str, database: str | None) -> bool:
    """Run one `CREATE ... IF NOT EXISTS`; False when another transaction created the same
    item meanwhile (two ingests into a new store or tenant at once)."""
    try:
        driver.execute_query(statement, database_=database)
    except neo4j.exceptions.ClientError as exc:
        if exc.code != _ALREADY_EXISTS:
            raise
        return False
    return True


def apply_tenant_schema(
    driver: neo4j.Driver,
    tenants: Collection[str],
    database: str | None = None,
    *,
    without_records: bool = False,
) -> list[str]:
    """Create the fulltext index of each tenant that lacks one; return the names created.

    A tenant whose index is new also gets its label on the records it already has (a graph
    written before this index existed), unless the caller has read that `tenants` have no
    records (`without_records`). Waits until every created index is online.
    """
    if not tenants:
        return []
    existing = _existing_names(driver, database)
    created: list[str] = []
    racing: list[str] = []
    for tenant in sorted(set(tenants)):
        item = tenant_fulltext_item(tenant)
        if item.name in existing:
            continue
        if not _create(driver, item.statement, database):
            # Another ingest of the tenant created it just now (and labels the records).
            racing.append(item.name)
            continue
        if not without_records:
            _label_tenant_records(driver, tenant, database)
        created.append(item.name)
    for name in created + racing:
        driver.execute_query(
            "CALL db.awaitIndex($name, $timeout)",
            name=name,
            timeout=INDEX_ONLINE_TIMEOUT_S,
            database_=database,
        )
    return created


def apply_schema(
    driver: neo4j.Driver, database: str | None = None, tenants: Collection[str] | None = None
) -> SchemaReport:
    """Create every missing constraint and index, wait for them to come online, and drop
    the retired indexes of older schemas (`retired_index_names`).

    The per-tenant fulltext indexes are created for `tenants` (every tenant with records in
    the graph when None). Idempotent: a second call creates nothing and reports every item
    as present.
    """
    before = _existing_names(driver, database)
    dropped = [name for name in retired_index_names() if name in before]
    for name in dropped:
        # A constant from retired_index_names(), never input.
        driver.execute_query(f"DROP INDEX {name} IF EXISTS", database_=database)
    if "ingest_mark_tenant" not in before:
        # Two marks of one tenant (concurrent first ingests before the constraint) are
        # dropped: a mark is only a shortcut, the next ingest of the tenant compares.
        driver.execute_query(
            "MATCH (m:IngestMark) WITH m.tenant AS tenant, collect(m) AS marks "
            "WHERE size(marks) > 1 UNWIND marks AS m DELETE m",
            database_=database,
        )
    if "import_origin_identity" not in before:
        # Two origins of one source (concurrent first imports before the constraint): the
        # one imports read (`import_origin._READ`: the first by path) is kept.
        driver.execute_query(
            "MATCH (o:ImportOrigin) WITH o ORDER BY o.path "
            "WITH o.tenant AS tenant, o.source_id AS source_id, collect(o) AS origins "
            "WHERE size(origins) > 1 UNWIND origins[1..] AS o DELETE o",
            database_=database,
        )
    for item in schema_items():
        if item.name not in before:
            _create(driver, item.statement, database)
    driver.execute_query(
        "CALL db.awaitIndexes($timeout)", timeout=INDEX_ONLINE_TIMEOUT_S, database_=database
    )
    wanted = tenants_in_graph(driver, database) if tenants is None else sorted(set(tenants))
    apply_tenant_schema(driver, wanted, database)
    after = _existing_names(driver, database)
    names = [item.name for item in schema_items()]
    names += [tenant_fulltext_index(t) for t in wanted]
    created = [n for n in names if n not in before and n in after]
    # An equivalent index under another name makes IF NOT EXISTS a no-op: still "present".
    present = [n for n in names if n not in created]
    return SchemaReport(created=created, present=present, dropped=dropped)
