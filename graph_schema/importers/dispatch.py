"""One entry point for `investigator ingest --format markdown-runbooks|prometheus-rules`.

`import_source` reads the tenant's current link targets from the KG, runs the importer of
the format and returns its `ImportResult`; the caller hands `result.loaded()` to
`graph_schema.writer.ingest_bundle` like any bundle and prints `result.report_lines()`.
A re-imported alert rule whose content is unchanged keeps the `source_version` of its current
record (`rule_versions.py`), so only the rules that changed become new versions.
The import's Source record (`result.source`, from the options only) is dropped when the
tenant already has a source of that id: an import never rewrites a source. An import writes
only under a source of its own kind whose trust is the import's (`ForeignSource`, refused
before any file is read): a source a bundle declared (`src:wiki-runbooks`), another format's,
or a trusted one without `--trusted` (and an untrusted one with it) is never written by an
import, whatever `--source-id` says (docs/security.md, rule 8). An import under
the default source id of a source last imported from another folder is refused
(`graph_schema.importers.import_origin.OtherFolder`) before any file is read. A link another
source already holds is left to it (`shared_links.py`): a runbook folder and a rule file that
state one runbook-to-alert link no longer write each other's versions of it.
The rule holds the other way too (`graph_schema.import_sources`, which the writer checks for
every bundle before it writes anything): a bundle never declares a source of an import's
type, writes under (or redeclares) a source an import wrote, nor retracts its records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import neo4j

from graph_schema.bundle import path_problem
from graph_schema.importers.common import ImportOptions, default_source_id
from graph_schema.importers.import_origin import check_origin
from graph_schema.importers.link_targets import LinkTarget, load_link_targets
from graph_schema.importers.markdown_runbooks import import_markdown_runbooks
from graph_schema.importers.prometheus_rules import import_prometheus_rules
from graph_schema.importers.result import ImportResult
from graph_schema.importers.rule_versions import current_rules, keep_unchanged_versions
from graph_schema.importers.shared_links import settle_shared_links
from graph_schema.kg_types import Trust

Importer = Callable[[Path | str, ImportOptions, Iterable[LinkTarget]], ImportResult]

IMPORTERS: dict[str, Importer] = {
    "markdown-runbooks": import_markdown_runbooks,
    "prometheus-rules": import_prometheus_rules,
}
FORMATS = tuple(sorted(IMPORTERS))
# The kind in each format's default source id, `src:<kind>:<folder or file name>`.
_SOURCE_KINDS = {"markdown-runbooks": "runbooks", "prometheus-rules": "prometheus"}
# The `source_type` of the Source record each format's import writes (`import_source_spec`).
SOURCE_TYPES = {"markdown-runbooks": "markdown_runbooks", "prometheus-rules": "prometheus_rules"}

_CURRENT_SOURCE = (
    "MATCH (n:KG {tenant: $tenant, id: $id}) WHERE n.superseded_at IS NULL "
    "RETURN 'Source' IN labels(n) AS is_source, n.source_type AS source_type, "
    "n.trust AS trust LIMIT 1"
)


class ForeignSource(ValueError):
    """An import naming a source it may not write under: another writer's (a bundle's, another
    format's) or one whose trust is not the import's. Nothing was read or written."""

    def __init__(self, fmt: str, source_id: str, source_type: str, trust: str, trusted: bool):
        self.fmt = fmt
        self.source_id = source_id
        self.source_type = source_type
        self.trust = trust
        self.trusted = trusted
        super().__init__(self.line())

    def line(self) -> str:
        """The refusal in one line, and the way on (a source of the import's own)."""
        article = "an" if self.trust[:1] in "aeiou" else "a"
        head = (
            f"ingest refused: source {self.source_id} is {article} {self.trust} "
            f"{self.source_type} source"
        )
        if self.source_type != SOURCE_TYPES[self.fmt]:
            why = (
                f", not a {self.fmt} import's: an import never writes under another writer's source"
            )
        elif self.trusted:
            why = ": a --trusted import may not write under it (its records would be trusted)"
        else:
            why = ": only a --trusted import may write under it"
        return (
            f"{head}{why}; nothing written; pass a --source-id of its own "
            f"(e.g. src:{_SOURCE_KINDS[self.fmt]}:<name>)"
        )


def check_source_writable(
    driver: neo4j.Driver,
    fmt: str,
    tenant: str,
    source_id: str,
    trusted: bool,
    database: str | None = None,
) -> bool:
    """Raise `ForeignSource` unless an import in `fmt` (`trusted` or not) may write under
    `source_id` of `tenant`: no record of that id yet, or a Source record an import of the
    same format wrote with the same trust. True when the Source record exists."""
    records, _, _ = driver.execute_query(
        _CURRENT_SOURCE,
        tenant=tenant,
        id=source_id,
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    if not records or not records[0]["is_source"]:
        return False  # a new source, or an id of another kind (validation names it)
    source_type = str(records[0]["source_type"])
    trust = str(records[0]["trust"] or Trust.TRUSTED.value)
    wanted = (Trust.TRUSTED if trusted else Trust.UNTRUSTED).value
    if source_type != SOURCE_TYPES[fmt] or trust != wanted:
        raise ForeignSource(fmt, source_id, source_type, trust, trusted)
    return True


def import_source(
    fmt: str,
    path: Path | str,
    options: ImportOptions,
    driver: neo4j.Driver | None = None,
    database: str | None = None,
    *,
    settle_links: bool = True,
) -> ImportResult:
    """Parse `path` in format `fmt` into a bundle, linking against the tenant's KG.

    `settle_links=False`: the caller changes the bundle's ACL afterwards (a re-import that
    keeps its records' labels) and calls `settle_shared_links` itself once it is final.
    """
    importer = IMPORTERS.get(fmt)
    if importer is None:
        raise ValueError(f"unknown import format {fmt!r} (one of {', '.join(FORMATS)})")
    exists = False
    if driver is not None and path_problem(Path(path)) is None:
        # Explicit or default: a source id is never a way into another writer's records.
        source_id = import_source_id(fmt, path, options.source_id)
        exists = check_source_writable(
            driver, fmt, options.tenant, source_id, options.trusted, database
        )
    if driver is not None and options.source_id is None and path_problem(Path(path)) is None:
        # Only the folder's name is in a default source id: another folder of that name
        # must not become this source (an explicit --source-id says so on purpose).
        source_id = import_source_id(fmt, path, None)
        check_origin(driver, options.tenant, source_id, Path(path), database)
    known = load_link_targets(driver, options.tenant, database) if driver is not None else []
    result = importer(path, options, known)
    if driver is not None and fmt == "prometheus-rules" and result.bundle is not None:
        # The file's version on every rule would make each one a new version on any edit.
        current = current_rules(driver, result.bundle, database)
        result.bundle = keep_unchanged_versions(result.bundle, current)
    if driver is not None and result.source is not None and exists:
        # An existing source is used as it is: an import never rewrites a source record.
        result.source = None
    if driver is not None and settle_links:
        settle_shared_links(driver, database, result)
    return result


def import_source_id(fmt: str, path: Path | str, source_id: str | None) -> str:
    """The source id an import of `path` writes: `--source-id`, else the format's default."""
    return source_id or default_source_id(_SOURCE_KINDS[fmt], Path(path))
