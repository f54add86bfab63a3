"""Whether the subject's own tenant holds any record: the note for an empty tenant.

A tenant id typed wrong at ingest (`ingest --tenant acmee`) leaves the principals' tenant
without the records, and every question there found nothing, with no word why (e31-qa m8).
A run that admitted nothing asks once whether its subject's tenant holds any KG record but
its principals, recorded by known_at; when none, the answer says "tenant X has no records".
Only the subject's own tenant is read (docs/security.md rule 7): nothing is said of any other.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import neo4j

from cypher_templates.executor import TemplateExecutor
from investigator.context_graph.models import ToolCallRecord

# One seek on the (tenant, id) index; principals and their sources are who may ask, not
# what an answer reads (a tenant of principals only is empty for questions).
_TENANT_HOLDS_RECORDS = (
    "MATCH (n:KG) WHERE n.tenant = $tenant AND n.id IS NOT NULL AND NOT n:Principal "
    "AND NOT n:Source AND n.recorded_at <= $known_at RETURN n.id AS id LIMIT 1"
)


def empty_tenant_note(
    driver: neo4j.Driver, tenant: str, known_at: datetime, database: str | None = None
) -> str | None:
    """`tenant acmee has no records ...` when the tenant holds no KG record but principals
    and their sources as known at `known_at`, else None. Not a question's read: it says
    one fact of the subject's own tenant, which the subject may know (it is a principal
    there)."""
    records, _, _ = driver.execute_query(
        _TENANT_HOLDS_RECORDS,
        tenant=tenant,
        known_at=known_at,
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    if records:
        return None
    return (
        f"tenant {tenant} has no records (its principals and their sources aside) known at "
        f"{known_at.isoformat().replace('+00:00', 'Z')}: nothing was ingested into it, so "
        "nothing can be found there; if the records were ingested under another tenant id, "
        "ingest them into this one"
    )


def notes_when_nothing_read(
    executor: TemplateExecutor,
    tenant: str,
    known_at: datetime,
    tool_calls: Iterable[ToolCallRecord],
) -> list[str]:
    """`empty_tenant_note` when no read of a run returned a row (and none failed): one read,
    only then, so a run that found anything pays nothing."""
    if any(tc.row_count or tc.error for tc in tool_calls):
        return []
    note = empty_tenant_note(executor.driver, tenant, known_at, executor.database)
    return [note] if note is not None else []
