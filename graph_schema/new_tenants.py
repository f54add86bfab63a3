"""Which tenants an ingest is about to write its first records to, in a graph that holds
other tenants: a typo'd `--tenant acmee` starts a new tenant without a word otherwise.

Said as a note, never a refusal (every tenant starts this way), and only when the graph
already holds another tenant's ingests (their `:IngestMark`, one per tenant): the first
ingest into an empty graph is no surprise. Other tenants are never named.
"""

from __future__ import annotations

from collections.abc import Sequence

import neo4j

_READ = (
    "UNWIND $tenants AS tenant "
    "RETURN tenant, EXISTS { MATCH (n:KG) WHERE n.tenant = tenant AND n.id IS NOT NULL } "
    "AS has_records, "
    "EXISTS { MATCH (m:IngestMark) WHERE NOT m.tenant IN $tenants } AS others"
)


def first_records_of(
    driver: neo4j.Driver, tenants: Sequence[str], database: str | None
) -> list[str]:
    """The tenants of `tenants` with no record yet, when the graph holds other tenants'."""
    if not tenants:
        return []
    records, _, _ = driver.execute_query(
        _READ,
        tenants=sorted(set(tenants)),
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    return [str(r["tenant"]) for r in records if r["others"] and not r["has_records"]]


def new_tenant_line(tenant: str) -> str:
    return (
        f"new tenant {tenant}: no records of it before this ingest (its records are written "
        "under that name: check it is the tenant you meant)"
    )
