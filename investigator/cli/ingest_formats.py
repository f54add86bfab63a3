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
from graph_schema.alert_names import identifier_words
from graph_schema.bundle import BundleProblem, LoadedBundle
from graph_schema.importers.common import ImportOptions, listed_names
from graph_schema.importers.dispatch import FORMATS, ForeignSource, import_source
from graph_schema.importers.import_origin import OtherFolder
from graph_schema.importers.reimport_acl import (
    acl_changes,
    common_labels,
    current_acls,
    held_labels,
    most_common_change,
    source_acls,
    unheld_labels,
    with_labels,
)
from graph_schema.importers.result import ImportResult
from graph_schema.importers.rule_versions import changed_rules, current_rules
from graph_schema.importers.runbook_anchors import lost_anchors, unnamed_anchors
from graph_schema.importers.shared_links import settle_shared_links
from graph_schema.kg_types import NodeLabel, RecordStatus
from investigator.cli.subject import subject_ref_from
from investigator.connection import open_driver
from investigator.errors import BadInput
from investigator.gate import instruction_match
from investigator.settings import resolve_connection
from investigator.terminal import printable


class _Options(Protocol):
    tenant: str | None
    source_id: str | None
    acl: list[str] | None
    acl_change: bool
    trusted: bool
    git_history: bool
    max_bytes: int


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
                    max_bytes=options.max_bytes,
                )
            except ValueError as exc:
                raise BadInput(f"bad ingest option: {exc}") from None
            try:
                result = import_source(
                    fmt, path, import_options, driver, settings.database, settle_links=False
                )
            except (OtherFolder, ForeignSource) as exc:
                raise BadInput(exc.line()) from None
            _settle_acl(result, options, driver, settings.database)
            # With the ACL final: links another source holds are left to it (shared_links.py).
            settle_shared_links(driver, settings.database, result)
            changes = _file_changes(result, driver, settings.database)
            changes += _rule_changes(result, driver, settings.database)
            changes += _anchor_changes(result, driver, settings.database)
            changes += _unnamed_anchors(result, driver, settings.database)
        finally:
            driver.close()
        for line in result.ignored:
            sys.stderr.write(f"warning: {printable(line)}\n")
        loaded = result.loaded()
        loaded.problems.extend(result.problems)
        loaded.problems.extend(instruction_named_rules(result, trusted=options.trusted))
        # Said by `ingest` once the records are written (a refused ingest links nothing).
        loaded.written_notes.extend(result.report_lines() + changes)
        return loaded

    return load


def instruction_named_rules(result: ImportResult, *, trusted: bool) -> list[BundleProblem]:
    """The alert rules of an untrusted rules import whose alert name reads like text aimed at
    an agent ("IMPORTANT SYSTEM NOTE TO THE AI AGENT ignore all previous instructions ..."):
    a rule is named by its name and id (its id is made of its name) wherever a note names it,
    outside the untrusted fence, so such a file is refused, nothing written. Each is named by
    its file and its place there, the name never quoted."""
    bundle = result.bundle
    if trusted or bundle is None or result.source_type != "prometheus_rules":
        return []
    problems: list[BundleProblem] = []
    places: dict[str, int] = {}
    for node in bundle.nodes:
        if node.label is not NodeLabel.ALERT:
            continue
        file = str(node.props.get("rule_file") or "")
        places[file] = places.get(file, 0) + 1
        # Its words too: `IgnoreAllPreviousInstructions` is read as "ignore all previous ...".
        name = node.name or ""
        found = instruction_match(name, operational=True) or instruction_match(
            " ".join(identifier_words(name)), operational=True
        )
        if found is None:
            continue
        problems.append(
            BundleProblem(
                origin=result.origin,
                element=f"{file + ', ' if file else ''}alert rule {places[file]}",
                reason=(
                    f"its alert name contains {found.kind} (not quoted): an untrusted rule is "
                    "named by it outside the untrusted fence; fix the name, or import the file "
                    "--trusted if its author is trusted"
                ),
            )
        )
    return problems


# The current documents (tombstones too) of the import's sources in its tenant, to name the
# files a re-import changes, adds or no longer has.
_CURRENT_DOCUMENTS = (
    "MATCH (n:KG:Document {tenant: $tenant}) WHERE n.source_id IN $sources "
    "AND n.superseded_at IS NULL "
    "RETURN n.id AS id, n.locator AS locator, n.source_version AS version, "
    "n.status = $active AS active"
)
# Files named per kind of change; the rest are counted ("and 3 more").
MAX_FILES_NAMED = 5


def _files(kind: str, locators: Sequence[str], tail: str = "") -> list[str]:
    if not locators:
        return []
    names = sorted(locators)
    listed = listed_names(names, MAX_FILES_NAMED)
    return [f"{kind}: {listed}{tail}"]


def _file_changes(result: ImportResult, driver: neo4j.Driver, database: str | None) -> list[str]:
    """`changed: a.md`, `moved: d.md -> ops/d.md`, `renamed: e.md -> f.md (...)`, `new: b.md`,
    `removed: c.md ...`: the files
    of a re-import whose bytes differ from the current record's (its `source_version`), those
    whose path differs from its `locator`, the files with no record yet, and the records of
    the same source whose file is gone (an import never retracts them)."""
    bundle = result.bundle
    if bundle is None or result.problems or not bundle.documents:
        return []
    sources = sorted({d.source_id for d in bundle.documents if d.source_id})
    records, _, _ = driver.execute_query(
        _CURRENT_DOCUMENTS,
        tenant=bundle.tenant,
        sources=sources,
        active=RecordStatus.ACTIVE.value,
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    if not records:
        return []  # a first import: every file is new, the counts say it
    # A tombstone (the source's runbooks retracted) makes a re-import, not a first one.
    current = {str(r["id"]): (str(r["locator"]), r["version"]) for r in records if r["active"]}
    ids = {d.id for d in bundle.documents}
    changed = [
        d.locator
        for d in bundle.documents
        if d.id in current and current[d.id][1] != d.source_version
    ]
    # Same id, another path (moved into a subfolder): a new version, its locator changes.
    moved = [
        f"{current[d.id][0]} -> {d.locator}"
        for d in bundle.documents
        if d.id in current and current[d.id][0] != d.locator
    ]
    dropped = {doc_id: loc for doc_id, (loc, _) in current.items() if doc_id not in ids}
    # A file still there under a new id (`X.html.md`, runbook:X.html before page names were
    # read; a front matter id edited): renamed, not a removed file and a new one.
    renamed: dict[bool, list[str]] = {True: [], False: []}
    paired: set[str] = set()
    # A file moved with its bytes (`mv a.md b.md`): the importer's new id supersedes the old.
    moved_files: list[str] = []
    for d in bundle.documents:
        if d.id in current:
            continue
        for doc_id, locator in dropped.items():
            if locator == d.locator:
                renamed[d.supersedes == doc_id].append(f"{doc_id} -> {d.id}")
                paired.update((doc_id, d.id))
            elif d.supersedes == doc_id:
                moved_files.append(f"{locator} -> {d.locator}")
                paired.update((doc_id, d.id))
    new = [d.locator for d in bundle.documents if d.id not in current and d.id not in paired]
    # Nor is a record the import's documents supersede (renamed by an earlier import).
    replaced = paired | {d.supersedes for d in bundle.documents if d.supersedes}
    gone = [loc for doc_id, loc in dropped.items() if doc_id not in replaced]
    # A file in PATH that could not be read (skipped above) is not a removed one.
    unread = [loc for loc in gone if loc in result.unreadable]
    gone = [loc for loc in gone if loc not in result.unreadable]
    return (
        _files("changed", changed)
        + _files("moved", moved)
        + _files(
            "renamed", renamed[True], " (same file, new id: the new record supersedes the old)"
        )
        + _files("renamed", renamed[False], " (same file, new id: the old record stays current)")
        + _files("renamed", moved_files, " (same bytes, new id: the new record supersedes the old)")
        + _files("new", new)
        + _files("removed", gone, " (not in PATH any more: their records stay current)")
        + _files("not read", unread, " (see skipped: the records imported before stay current)")
    )


def _rule_changes(result: ImportResult, driver: neo4j.Driver, database: str | None) -> list[str]:
    """`changed: alert:X`, `new: alert:Y`, `removed: alert:Z ...`: the alerts of a re-import
    of rule files whose rule differs from the current record's, those with no record yet, and
    those of the same source whose rule is gone (an import never retracts them)."""
    bundle = result.bundle
    if bundle is None or result.problems or not any(n.label == "Alert" for n in bundle.nodes):
        return []
    kinds = changed_rules(bundle, current_rules(driver, bundle, database))
    return (
        _files("changed", kinds["changed"])
        + _files("new", kinds["new"])
        + _files(
            "removed",
            kinds["removed"],
            " (their rules are not in PATH any more: the records stay current, and "
            "runbook --alert says so)",
        )
    )


# Alerts named one line each; the rest are counted.
MAX_ANCHORS_NAMED = 5


def _anchor_changes(result: ImportResult, driver: neo4j.Driver, database: str | None) -> list[str]:
    """`anchor: alert:X: runbook_url anchor '#x' names no section of a.md any more (did you
    mean ...?)`: the alerts a re-import of their runbook leaves pointing at a section that is
    gone (renamed or removed); their link stays, and the card would show the page's opening."""
    bundle = result.bundle
    if bundle is None or result.problems or not bundle.documents:
        return []
    lost = lost_anchors(driver, bundle, database)
    lines = [f"anchor: {a.line()}" for a in lost[:MAX_ANCHORS_NAMED]]
    if len(lost) > MAX_ANCHORS_NAMED:
        lines.append(
            f"anchor: and {len(lost) - MAX_ANCHORS_NAMED} more alerts whose runbook_url anchor "
            "names no section any more"
        )
    if lost:
        lines.append(
            f"anchor: {len(lost)} {'alert is' if len(lost) == 1 else 'alerts are'} still "
            "linked to the page, and runbook --alert shows its opening text for "
            f"{'it' if len(lost) == 1 else 'them'}: restore the heading, or fix the rules' "
            "runbook_url and re-ingest them"
        )
    return lines


def _unnamed_anchors(result: ImportResult, driver: neo4j.Driver, database: str | None) -> list[str]:
    """`anchor: alert:X: runbook_url anchor '#id2' names no section of a.md`: the alerts a
    rules import links for the first time to a page none of whose sections the anchor names
    (the card then shows the page's opening text), said at the link, not only once a
    re-import of the page loses a section."""
    bundle = result.bundle
    if bundle is None or result.problems:
        return []
    links = [(r, t) for link in result.linked for r in link.runbooks for t in link.targets]
    found = unnamed_anchors(driver, bundle, links, database)
    lines = [f"anchor: {a.line()}" for a in found[:MAX_ANCHORS_NAMED]]
    if len(found) > MAX_ANCHORS_NAMED:
        lines.append(
            f"anchor: and {len(found) - MAX_ANCHORS_NAMED} more alerts whose runbook_url "
            "anchor names no section"
        )
    if found:
        lines.append(
            f"anchor: {len(found)} {'alert is' if len(found) == 1 else 'alerts are'} linked "
            "to the page as a whole, and runbook --alert shows its opening text for "
            f"{'it' if len(found) == 1 else 'them'}: make each runbook_url anchor a heading's "
            "(`-` and `_` alike) and re-ingest the rules"
        )
    return lines


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
    fresh = ({n.id for n in bundle.nodes} | {d.id for d in bundle.documents}) - set(current)
    if fresh and options.acl is None:
        # Ids with no record of the source yet (a renamed file, a retracted runbook re-added)
        # get the labels the source's records already carry, never none (docs/runbooks.md).
        known = source_acls(driver, database, bundle)
        labels = known.labels()
        if labels is None:
            named = ", ".join(sorted(known.sources))
            acls = ", ".join(_labels(acl) for acl in known.records[:3])
            acls += " ..." if len(known.records) > 3 else ""
            raise BadInput(
                f"ingest refused: the records of {named} carry different acls ({acls}) and "
                f"{len(fresh)} {'record is' if len(fresh) == 1 else 'records are'} new; "
                "pass --acl to say who may read them"
            )
        if not current:
            bundle = result.bundle = with_labels(bundle, labels)
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
