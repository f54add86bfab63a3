"""The real-world formats of `investigator ingest --format ...` (Markdown runbooks,
Prometheus rules): loaders from a path to a `LoadedBundle`, for `cli/ingest.py`'s dispatch.

Each loader reads the tenant's current runbooks, alerts, services, error codes and teams
(to resolve links such as `runbook_url`), runs the importer, prints what it linked, skipped
and could not resolve on stderr (so `--json` stdout stays one document), and returns the
bundle for the one writer. `--tenant` is required: a runbook folder does not name one.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from graph_schema.bundle import LoadedBundle
from graph_schema.importers.common import ImportOptions
from graph_schema.importers.dispatch import FORMATS, import_source
from investigator.connection import open_driver
from investigator.errors import BadInput
from investigator.settings import resolve_connection


class _Options(Protocol):
    tenant: str | None
    source_id: str | None
    acl: list[str] | None


def _loader(fmt: str) -> Callable[[Path, _Options], LoadedBundle]:
    def load(path: Path, options: _Options) -> LoadedBundle:
        if not options.tenant:
            raise BadInput(f"--format {fmt} needs --tenant (the files do not name one)")
        try:
            import_options = ImportOptions(
                tenant=options.tenant, source_id=options.source_id, acl=options.acl or []
            )
        except ValueError as exc:
            raise BadInput(f"bad ingest option: {exc}") from None
        settings = resolve_connection()
        driver = open_driver(settings)
        try:
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
