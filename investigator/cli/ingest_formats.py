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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import neo4j

from cypher_templates.executor import TemplateExecutor
from graph_schema.bundle import LoadedBundle
from graph_schema.importers.common import ImportOptions
from graph_schema.importers.dispatch import FORMATS, import_source
from graph_schema.importers.reimport_acl import (
    acl_changes,
    common_labels,
    current_acls,
    held_labels,
    most_common_change,
    unheld_labels,
    with_labels,
)
from graph_schema.importers.result import ImportResult
from investigator.cli.subject import subject_ref_from
from investigator.connection import open_driver
from investigator.errors import BadInput
from investigator.settings import resolve_connection


class _Options(Protocol):
    tenant: str | None
    source_id: str | None
    acl: list[str] | None
    acl_change: bool
    trusted: bool
    git_history: bool


def _loader(fmt: str) -> Callable[[Path, _Options], LoadedBundle]:
    def load(path: Path, options: _Options) -> LoadedBundle:
        subject = os.environ.get("INVESTIGATOR_SUBJECT")
        if not options.tenant and not subject:
            raise BadInput(
                f"--format {fmt} needs --tenant (the files do not name one; "
                "or set INVESTIGATOR_SUBJECT to use that subject's tenant)"
            )
        # The subject's own tenant (issue 17: from TENANT/ID or INVESTIGATOR_TENANT, never
        # looked up by id across tenants).
        ref = None if options.tenant else subject_ref_from(None, None)
        tenant = options.tenant or (ref.tenant if ref else "")
        settings = resolve_connection()
        driver = open_driver(settings)
        try:
            if ref is not None and not TemplateExecutor(
                driver, database=settings.database
            ).read_principals(ref):
                raise BadInput(
                    f"no --tenant given and INVESTIGATOR_SUBJECT {str(ref)!r} is no principal "
                    "of that tenant"
                )
            try:
                import_options = ImportOptions(
                    tenant=tenant,
                    source_id=options.source_id,
                    acl=options.acl or [],
                    trusted=options.trusted,
                    git_history=options.git_history,
                )
            except ValueError as exc:
                raise BadInput(f"bad ingest option: {exc}") from None
            result = import_source(fmt, path, import_options, driver, settings.database)
            _settle_acl(result, options, driver, settings.database)
        finally:
            driver.close()
        for line in result.report_lines():
            sys.stderr.write(f"ingest: {line}\n")
        for line in result.ignored:
            sys.stderr.write(f"warning: {line}\n")
        loaded = result.loaded()
        loaded.problems.extend(result.problems)
        return loaded

    return load


def _labels(labels: Sequence[str]) -> str:
    return "[" + ", ".join(labels) + "]"


def _settle_acl(
    result: ImportResult, options: _Options, driver: neo4j.Driver, database: str | None
) -> None:
    """Re-imports: keep the ACL of the records when `--acl` is not given, refuse an `--acl`
    that changes it without `--acl-change`; warn of labels no principal holds."""
    bundle = result.bundle
    if bundle is None or result.problems:
        return
    current = current_acls(driver, database, bundle)
    if current:
        previous = common_labels(current.values())
        if options.acl is None:
            # Omitting --acl means "unchanged": the labels every record of the source
            # carries are the --acl it was imported with, so new files get them too.
            bundle = result.bundle = with_labels(bundle, previous)
        elif sorted(set(options.acl)) != previous and not options.acl_change:
            changes = acl_changes(bundle, current)
            if changes:
                before, after = most_common_change(changes)
                sources = sorted({s.source_id or "" for s in [*bundle.nodes, *bundle.documents]})
                example = "" if len(set((c.before, c.after) for c in changes)) == 1 else "e.g. "
                raise BadInput(
                    f"ingest refused: {len(changes)} records of {', '.join(sources)} "
                    f"would change acl {example}{_labels(before)} -> {_labels(after)}; pass "
                    "--acl-change to change who may read them"
                )
    unheld = unheld_labels(bundle, held_labels(driver, database, bundle.tenant))
    for label, count in unheld.items():
        # Visibility needs every ACL label among the reader's: these records reach no one.
        sys.stderr.write(
            f"warning: no principal of tenant {bundle.tenant} holds label {label!r}: "
            f"{count} records with it can be read by no one until one does\n"
        )


IMPORT_FORMATS: dict[str, Callable[[Path, _Options], LoadedBundle]] = {
    fmt: _loader(fmt) for fmt in FORMATS
}
