"""When a runbook's file went missing from its source's import, for the card to say so.

An import never retracts a record whose file is gone (a page deleted by accident must not
vanish from the on-call's answers; docs/runbooks.md), so the record stays current and is
answered. After each Markdown runbook import, the tenant gets one `:MissingFile` mark (its own
label, never `:KG`: not a record of the KG, no ingest mark counts it, no content hash holds its
time) per current runbook or policy of the source that the import did not have. A mark is kept
like a record so the templates' visibility predicate reads it bi-temporally: `id` the
record's, its `acl` and `purposes` (and the ceiling of the record's latest version),
`status: active`, `recorded_at` the time of that import, `superseded_at` the time of the import
that had the file again (null while missing). Marks are only added or closed, so a lookup at a
`known_at` reads what was known then: `runbooks_for` version 4 returns `file_missing_since` for
a row whose mark was current at its `known_at`. A file the import had but could not read (a
template page's repeated front matter key) gets a mark with why (`unreadable`), which
`runbooks_for` version 5 returns (`file_unreadable`): the card says it was read, not gone.
A record a file of the import supersedes (a renamed file's old id) gets no mark: it is no
longer answered.

A Prometheus rules import does the same for the alerts of its source: an alert whose rule the
file no longer has stays current and answered, with a mark (`kind="alert"`); `entity_resolution`
version 4 returns its `file_missing_since`, and `runbook --alert` says the rule is gone.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import neo4j

from graph_schema.kg_types import RecordStatus

# The source's current active documents the import did not write, not superseded by one it
# did, and with no open mark yet: each gets one (the import's time).
_OPEN_DOCUMENTS = (
    "MATCH (n:KG:Document {tenant: $tenant}) "
    "WHERE n.source_id = $source_id AND n.superseded_at IS NULL AND n.status = $active "
    "AND NOT n.id IN $ids "
    "AND NOT EXISTS { MATCH (m:KG)-[s:SUPERSEDES]->(n) WHERE m.id IN $ids "
    "AND m.superseded_at IS NULL AND s.superseded_at IS NULL } "
    "AND NOT EXISTS { MATCH (g:MissingFile {tenant: $tenant, source_id: $source_id, id: n.id}) "
    "WHERE g.superseded_at IS NULL } "
    "CREATE (:MissingFile {tenant: $tenant, source_id: $source_id, id: n.id, acl: n.acl, "
    "purposes: n.purposes, status: $active, recorded_at: $at, "
    "unreadable: $unreadable[coalesce(n.path, '')]}) "
    "RETURN count(*) AS n"
)
# The source's current active alerts the import's rule files no longer define.
_OPEN_ALERTS = (
    "MATCH (n:KG:Alert {tenant: $tenant}) "
    "WHERE n.source_id = $source_id AND n.superseded_at IS NULL AND n.status = $active "
    "AND NOT n.id IN $ids "
    "AND NOT EXISTS { MATCH (g:MissingFile {tenant: $tenant, source_id: $source_id, id: n.id}) "
    "WHERE g.superseded_at IS NULL } "
    "CREATE (:MissingFile {tenant: $tenant, source_id: $source_id, id: n.id, acl: n.acl, "
    "purposes: n.purposes, status: $active, recorded_at: $at}) "
    "RETURN count(*) AS n"
)
_OPEN = {"document": _OPEN_DOCUMENTS, "alert": _OPEN_ALERTS}
# The files (rules) the import had again: their open marks close.
_CLOSE = (
    "MATCH (g:MissingFile {tenant: $tenant, source_id: $source_id}) "
    "WHERE g.superseded_at IS NULL AND g.id IN $ids SET g.superseded_at = $at "
    "RETURN count(g) AS n"
)


def mark_missing_files(
    driver: neo4j.Driver,
    tenant: str,
    source_id: str,
    ids: list[str],
    at: datetime,
    database: str | None = None,
    kind: Literal["document", "alert"] = "document",
    unreadable: dict[str, str] | None = None,
) -> None:
    """After an import of `source_id` that wrote the documents (`kind="alert"`: the alerts)
    `ids`, all its files' (rules'): open a mark at `at` for each current record of that kind
    of the source it did not have, close the marks of those it had again. `unreadable`: the
    files the import had but could not read (path in the folder -> why), said on their mark."""
    params = {"tenant": tenant, "source_id": source_id, "ids": sorted(ids), "at": at}
    driver.execute_query(_CLOSE, params, database_=database)
    opened = {**params, "active": RecordStatus.ACTIVE.value}
    if kind == "document":
        opened["unreadable"] = dict(unreadable or {})
    driver.execute_query(_OPEN[kind], opened, database_=database)
