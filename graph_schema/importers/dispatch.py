"""One entry point for `investigator ingest --format markdown-runbooks|prometheus-rules`.

`import_source` reads the tenant's current link targets from the KG, runs the importer of
the format and returns its `ImportResult`; the caller hands `result.loaded()` to
`graph_schema.writer.ingest_bundle` like any bundle and prints `result.report_lines()`.
The import's Source record (`result.source`, from the options only) is dropped when the
tenant already has a source of that id: an import never rewrites a source.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import neo4j

from graph_schema.importers.common import ImportOptions
from graph_schema.importers.link_targets import LinkTarget, load_link_targets
from graph_schema.importers.markdown_runbooks import import_markdown_runbooks
from graph_schema.importers.prometheus_rules import import_prometheus_rules
from graph_schema.importers.result import ImportResult

Importer = Callable[[Path | str, ImportOptions, Iterable[LinkTarget]], ImportResult]

IMPORTERS: dict[str, Importer] = {
    "markdown-runbooks": import_markdown_runbooks,
    "prometheus-rules": import_prometheus_rules,
}
FORMATS = tuple(sorted(IMPORTERS))

_CURRENT_SOURCE = (
    "MATCH (n:KG {tenant: $tenant, id: $id}) WHERE n.superseded_at IS NULL "
    "RETURN 'Source' IN labels(n) AS is_source LIMIT 1"
)


def import_source(
    fmt: str,
    path: Path | str,
    options: ImportOptions,
    driver: neo4j.Driver | None = None,
    database: str | None = None,
) -> ImportResult:
    """Parse `path` in format `fmt` into a bundle, linking against the tenant's KG."""
    importer = IMPORTERS.get(fmt)
    if importer is None:
        raise ValueError(f"unknown import format {fmt!r} (one of {', '.join(FORMATS)})")
    known = load_link_targets(driver, options.tenant, database) if driver is not None else []
    result = importer(path, options, known)
    if driver is not None and result.source is not None:
        records, _, _ = driver.execute_query(
            _CURRENT_SOURCE,
            tenant=options.tenant,
            id=result.source.source_id,
            database_=database,
            routing_=neo4j.RoutingControl.READ,
        )
        if records and records[0]["is_source"]:
            # An existing source is used as it is: an import never rewrites a source record.
            result.source = None
    return result
