"""Legal purge (docs/contracts.md section 1): remove a document's text from every record.

Not reachable from a bundle: a purge is an operator's act, done through this API. It
removes `content` and `redacted_content` from all records of one id in one tenant, rebuilds
`search_text` without them (so the text cannot be found again), and sets `purged_at`. The
records stay, with their `content_hash` and `text_hash`: replay and the gate's integrity
check then show that something was there and was removed. A purge also clears the tenant's
ingest mark (graph_schema.ingest_mark): the next ingest compares every element again.
"""

from __future__ import annotations

from datetime import UTC, datetime

import neo4j
from pydantic import BaseModel

from graph_schema.ingest_mark import BUMP_GENERATIONS

_PURGE = (
    "MATCH (n:KG {tenant: $tenant, id: $id}) "
    "WHERE n.content IS NOT NULL OR n.redacted_content IS NOT NULL "
    "SET n.content = null, n.redacted_content = null, n.purged_at = $at, "
    "n.search_text = coalesce(n.title, '') + '\\n' + n.id "
    "RETURN count(n) AS n"
)


_RECORDS = "MATCH (n:KG {tenant: $tenant, id: $id}) RETURN count(n) AS n"


class PurgeReport(BaseModel):
    """How many records of the id lost their text."""

    tenant: str
    id: str
    records_purged: int
    purged_at: datetime


def purge_content(
    driver: neo4j.Driver,
    tenant: str,
    element_id: str,
    *,
    at: datetime | None = None,
    database: str | None = None,
) -> PurgeReport:
    """Remove the text of every record of `element_id` in `tenant`; idempotent."""
    at = at or datetime.now(UTC)
    if at.tzinfo is None:
        raise ValueError("purge time needs a zone")

    def work(tx: neo4j.ManagedTransaction) -> int:
        record = tx.run(_PURGE, tenant=tenant, id=element_id, at=at).single()
        # The tenant's ingest mark (graph_schema.ingest_mark) no longer vouches for its
        # records: the next ingest of any bundle compares every element.
        tx.run(BUMP_GENERATIONS, tenants=[tenant]).consume()
        return int(record["n"]) if record else 0

    with driver.session(database=database) as session:
        purged = session.execute_write(work)
    return PurgeReport(tenant=tenant, id=element_id, records_purged=purged, purged_at=at)


def record_count(
    driver: neo4j.Driver, tenant: str, element_id: str, database: str | None = None
) -> int:
    """How many records (versions) `element_id` has in `tenant` (0: nothing to purge)."""
    records, _, _ = driver.execute_query(
        _RECORDS,
        tenant=tenant,
        id=element_id,
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    return int(records[0]["n"])
