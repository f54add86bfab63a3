"""Legal purge (docs/contracts.md section 1): remove a document's text from every record.

Not reachable from a bundle: a purge is an operator's act, done through this API. It
removes `content` and `redacted_content` from all records of one id in one tenant, rebuilds
`search_text` without them (so the text cannot be found again; its title and name still
can), and sets `purged_at`. The records stay, with their `content_hash` and `text_hash`:
replay and the gate's integrity check then show that something was there and was removed. A
purge also clears the tenant's ingest mark (graph_schema.ingest_mark): the next ingest
compares every element again.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import neo4j
from pydantic import BaseModel

from graph_schema.ingest_mark import BUMP_GENERATIONS
from graph_schema.records import document_search_text

# What a purger may purge: an id all of whose records in the tenant its labels cover (the
# ACL half of the template visibility predicate, cypher_templates/templates/_visibility.j2,
# on every version, since a purge acts on every version), and never a Principal or Source
# record. Purposes are not checked: `legal` is the grant to purge, not a reading purpose.
# An id the purger may not see answers exactly like an id without records. `$granted` null:
# an operator's purge through the API (no subject), which the ACL does not limit.
_PURGEABLE = (
    "MATCH (n:KG {tenant: $tenant, id: $id}) "
    "WITH collect(n) AS records "
    "WHERE all(r IN records WHERE NOT (r:Principal OR r:Source) "
    "AND ($granted IS NULL OR all(_acl IN r.acl WHERE _acl IN $granted))) "
)
_WITH_TEXT = (
    _PURGEABLE + "UNWIND records AS n WITH n "
    "WHERE n.content IS NOT NULL OR n.redacted_content IS NOT NULL "
)
_TITLES = _WITH_TEXT + "RETURN elementId(n) AS element, n.title AS title, n.name AS name"
# `$texts`: each record's search text without its content, as an ingest would write it.
_PURGE = (
    _WITH_TEXT + "SET n.content = null, n.redacted_content = null, n.purged_at = $at, "
    "n.search_text = $texts[elementId(n)] "
    "RETURN count(n) AS n"
)


_RECORDS = _PURGEABLE + "RETURN size(records) AS n"


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
    granted: Sequence[str] | None = None,
    at: datetime | None = None,
    database: str | None = None,
) -> PurgeReport:
    """Remove the text of every record of `element_id` in `tenant`; idempotent.

    `granted` are the purger's labels: nothing is purged unless they cover the ACL of every
    record of the id (and none is a Principal or Source record). None: an operator's purge
    through this API (the evaluation's), which any record of the id allows.
    """
    at = at or datetime.now(UTC)
    if at.tzinfo is None:
        raise ValueError("purge time needs a zone")

    scope = {"tenant": tenant, "id": element_id, "granted": _labels(granted)}

    def work(tx: neo4j.ManagedTransaction) -> int:
        texts = {
            row["element"]: document_search_text(row["title"], element_id, row["name"], None)
            for row in tx.run(_TITLES, scope)
        }
        record = tx.run(_PURGE, scope, at=at, texts=texts).single()
        # The tenant's ingest mark (graph_schema.ingest_mark) no longer vouches for its
        # records: the next ingest of any bundle compares every element.
        tx.run(BUMP_GENERATIONS, tenants=[tenant]).consume()
        return int(record["n"]) if record else 0

    with driver.session(database=database) as session:
        purged = session.execute_write(work)
    return PurgeReport(tenant=tenant, id=element_id, records_purged=purged, purged_at=at)


def _labels(granted: Sequence[str] | None) -> list[str] | None:
    return None if granted is None else sorted(set(granted))


def record_count(
    driver: neo4j.Driver,
    tenant: str,
    element_id: str,
    database: str | None = None,
    *,
    granted: Sequence[str] | None = None,
) -> int:
    """How many records (versions) of `element_id` in `tenant` a purger with labels `granted`
    may purge: all of them, or 0 (none, or one it may not see, or a Principal or Source)."""
    records, _, _ = driver.execute_query(
        _RECORDS,
        tenant=tenant,
        id=element_id,
        granted=_labels(granted),
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    return int(records[0]["n"]) if records else 0  # no row: a record the purger may not see
