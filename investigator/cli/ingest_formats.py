"""The real-world formats of `investigator ingest --format ...` (Markdown runbooks,
Prometheus rules): loaders from a path to a `LoadedBundle`, for `cli/ingest.py`'s dispatch.

Each loader reads the tenant's current runbooks, alerts, services, error codes and teams
(to resolve links such as `runbook_url`), runs the importer, prints what it linked, skipped
and could not resolve on stderr (so `--json` stdout stays one document), and returns the
bundle for the one writer. `--tenant` names the tenant (a runbook folder does not); without
it, the tenant of `$INVESTIGATOR_SUBJECT` is used, else the ingest is refused (exit 2).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import neo4j

from graph_schema.bundle import LoadedBundle
from graph_schema.importers.common import ImportOptions
from graph_schema.importers.dispatch import FORMATS, import_source
from investigator.connection import open_driver
from investigator.errors import BadInput
from investigator.settings import resolve_connection

# The tenant of a current Principal record (ingest-side bookkeeping, like the writer's reads).
_SUBJECT_TENANT = (
    "MATCH (p:KG:Principal {id: $subject_id}) "
    "WHERE p.status = 'active' AND p.superseded_at IS NULL "
    "RETURN DISTINCT p.tenant AS tenant LIMIT 2"
)


def _subject_tenant(driver: neo4j.Driver, database: str | None, subject_id: str) -> str:
    records, _, _ = driver.execute_query(
        _SUBJECT_TENANT,
        subject_id=subject_id,
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    if len(records) != 1:
        raise BadInput(
            f"no --tenant given and INVESTIGATOR_SUBJECT {subject_id!r} names no single tenant"
        )
    return str(records[0]["tenant"])


class _Options(Protocol):
    tenant: str | None
    source_id: str | None
    acl: list[str] | None


def _loader(fmt: str) -> Callable[[Path, _Options], LoadedBundle]:
    def load(path: Path, options: _Options) -> LoadedBundle:
        subject = os.environ.get("INVESTIGATOR_SUBJECT")
        if not options.tenant and not subject:
            raise BadInput(
                f"--format {fmt} needs --tenant (the files do not name one; "
                "or set INVESTIGATOR_SUBJECT to use that subject's tenant)"
            )
        settings = resolve_connection()
        driver = open_driver(settings)
        try:
            tenant = options.tenant or _subject_tenant(driver, settings.database, str(subject))
            try:
                import_options = ImportOptions(
                    tenant=tenant, source_id=options.source_id, acl=options.acl or []
                )
            except ValueError as exc:
                raise BadInput(f"bad ingest option: {exc}") from None
            result = import_source(fmt, path, import_options, driver, settings.database)
        finally:
            driver.close()
        for line in result.report_lines():
            sys.stderr.write(f"ingest: {line}\n")
        loaded = result.loaded()
        loaded.problems.extend(result.problems)
        return loaded

    return load


IMPORT_FORMATS: dict[str, Callable[[Path, _Options], LoadedBundle]] = {
    fmt: _loader(fmt) for fmt in FORMATS
}
