"""`investigator ingest PATH`: load a bundle (docs/design.md section 10) into the Knowledge Graph.

Formats are loaders from a path to a `LoadedBundle`; all of them go through the same
validation and the same writer (`graph_schema.writer.ingest_bundle`). To add a format,
add a loader to `INGEST_FORMATS`.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import NoReturn

import click
import neo4j
from pydantic import BaseModel

from graph_schema import ctrl_c
from graph_schema.backdating import (
    BackdatedRecords,
    BackdateMarker,
)
from graph_schema.bundle import (
    LINK_REFUSED,
    MAX_INPUT_BYTES,
    BundlePart,
    BundleProblem,
    LoadedBundle,
    and_more,
    apply_overrides,
    bundle_files,
    load_bundle,
    path_problem,
)
from graph_schema.bundle_memory import absent_since_last_ingest
from graph_schema.canonical import iso_utc
from graph_schema.errors import InterruptedPartWay
from graph_schema.import_sources import ImportSourceInBundle
from graph_schema.importers.dispatch import (
    ForeignSource,
    check_source_writable,
    import_source_id,
)
from graph_schema.importers.import_origin import (
    ImportOrigin,
    OtherFolder,
    claim_origin,
    origin_of,
    record_origin,
    release_claim,
)
from graph_schema.importers.markdown_runbooks import markdown_files
from graph_schema.importers.missing_files import mark_missing_files
from graph_schema.importers.prometheus_rules import rule_files
from graph_schema.local_files import InputTooLarge, check_input_size
from graph_schema.new_tenants import first_records_of, new_tenant_line
from graph_schema.omitted_acl import AclOptionChange, acl_option_changes
from graph_schema.schema_ddl import apply_schema
from graph_schema.writer import (
    DEFAULT_BATCH_SIZE,
    BundleRejected,
    IngestReport,
    SourceTakeover,
    ingest_bundle,
)
from investigator.cli.ingest_formats import IMPORT_FORMATS
from investigator.cli.numbers import WholeNumber
from investigator.connection import open_driver
from investigator.context_graph.incarnation import runs_a_new_holder_would_take
from investigator.context_graph.recorder import ctx_database_from_env
from investigator.context_graph.runs import run_floors, runs_known_since
from investigator.errors import BadInput
from investigator.settings import resolve_connection
from investigator.terminal import printable

MAX_PROBLEM_LINES = 200
PROGRESS_THRESHOLD = 2000  # elements; smaller ingests finish before progress would help


class IngestOptions(BaseModel):
    """The command line's overrides, handed to every format's loader."""

    tenant: str | None = None
    source_id: str | None = None
    acl: list[str] | None = None
    # Imported formats: let an explicit --acl change the ACL of records already imported.
    acl_change: bool = False
    trusted: bool = False
    git_history: bool = False
    # Allow records dated at or before the known_at of runs already recorded in the tenant.
    backdate: bool = False
    # With --tenant: let a file that says another tenant write its principals into --tenant.
    move_principals: bool = False
    # The bytes PATH (a file, or a folder's files of the format together) may hold.
    max_bytes: int = MAX_INPUT_BYTES


def _load_bundle_format(path: Path, options: IngestOptions) -> LoadedBundle:
    if options.trusted:
        raise BadInput("--trusted is for imported formats; a bundle's sources state their trust")
    if options.git_history:
        raise BadInput("--git-history is for --format markdown-runbooks only")
    return load_bundle(path, options.max_bytes)


# The files each format reads at PATH, to bound their size before any is read.
_FORMAT_FILES: dict[str, Callable[[Path], tuple[list[Path], list[BundleProblem]]]] = {
    "bundle": bundle_files,
    "markdown-runbooks": markdown_files,
    "prometheus-rules": rule_files,
}

# What each format's PATH holds, and what is refused when it has problems, in its own words.
_FORMAT_NOUNS = {
    "bundle": "bundle",
    "markdown-runbooks": "Markdown runbooks",
    "prometheus-rules": "Prometheus rules",
}
_FORMAT_REJECTED = {
    "bundle": "bundle",
    "markdown-runbooks": "Markdown runbook import",
    "prometheus-rules": "Prometheus rules import",
}
# The default source id of an import format (`src:runbooks:<folder>`, graph_schema/importers/
# common.py): a record held by such a source was written by an import of that format.
_IMPORT_SOURCE_PREFIXES = {
    "markdown-runbooks": "src:runbooks:",
    "prometheus-rules": "src:prometheus:",
}

# Format name -> loader. Importers (Markdown runbooks, Prometheus rules) register here.
INGEST_FORMATS: dict[str, Callable[[Path, IngestOptions], LoadedBundle]] = {
    "bundle": _load_bundle_format,
    **IMPORT_FORMATS,  # markdown-runbooks, prometheus-rules (investigator/cli/ingest_formats.py)
}


def _progress(message: str) -> None:
    sys.stderr.write(f"ingest: {printable(message)}\n")
    sys.stderr.flush()


def _tenant_replaced(loaded: LoadedBundle, options: IngestOptions) -> list[str]:
    """What `--tenant T` does to files that say another tenant: one line per tenant they say
    ("FILE says tenant globex; written as acme (--tenant)"). A file's principals (their
    labels and purposes: `pii`, `audit`) would become T's principals: refused (BadInput,
    nothing written) unless `--move-principals`, and then said on the line."""
    tenant = options.tenant
    if tenant is None:
        return []
    said: dict[str, list[BundlePart]] = {}
    for part in loaded.parts:
        if part.bundle.tenant != tenant:
            said.setdefault(part.bundle.tenant, []).append(part)
    lines = []
    for other, parts in said.items():
        files = (
            parts[0].origin if len(parts) == 1 else f"{len(parts)} files ({parts[0].origin}, ...)"
        )
        verb = "says" if len(parts) == 1 else "say"
        moved = [p for part in parts for p in part.bundle.principals if p.tenant in (None, other)]
        line = f"{files} {verb} tenant {other}; written as {tenant} (--tenant)"
        if moved and not options.move_principals:
            first = moved[0]
            grants = ", ".join([*first.labels, *first.purposes]) or "no labels or purposes"
            holds = "holds" if len(parts) == 1 else "hold"
            raise BadInput(
                f"{line[: line.index(';')]} and {holds} {_principals(len(moved))} ({first.id}: "
                f"{grants}{', ...' if len(moved) > 1 else ''}): --tenant {tenant} would make "
                f"{'it a principal' if len(moved) == 1 else 'them principals'} of {tenant}; "
                "nothing written. Ingest the file without "
                f"--tenant, or give --move-principals to write them into {tenant}"
            )
        if moved:
            ids = ", ".join(p.id for p in moved[:5]) + (", ..." if len(moved) > 5 else "")
            line += f", its {_principals(len(moved))} too (--move-principals): {ids}"
        _refuse_moved_retractions(line[: line.index(";")], parts, tenant)
        lines.append(line)
    return lines


def _written_targets(parts: list[BundlePart]) -> set[str]:
    """The ids and relationship keys `parts` (the files saying one tenant) write."""
    out: set[str] = set()
    for bundle in (part.bundle for part in parts):
        out.update(p.id for p in bundle.principals)
        out.update(n.id for n in bundle.nodes)
        out.update(d.id for d in bundle.documents)
        out.update(e.edge_key for e in bundle.edges)
    return out


def _refuse_moved_retractions(said: str, parts: list[BundlePart], tenant: str) -> None:
    """Files that say another tenant retract, under `--tenant T`, only what they write
    themselves: a retraction of any other id or key would tombstone T's own record (a
    principal, a service, an owner; or one a file saying T writes in the same ingest) on the
    word of files that never spoke for T. Refused (BadInput, nothing written): a retraction
    of T's records is a file that says T."""
    own = _written_targets(parts)
    foreign = [r.target for part in parts for r in part.bundle.retractions if r.target not in own]
    if not foreign:
        return
    n = len(foreign)
    shown = ", ".join(foreign[:3]) + (", ..." if n > 3 else "")
    raise BadInput(
        f"{said} and {'retracts' if ' says ' in said else 'retract'} {n} record"
        f"{'' if n == 1 else 's'} {'it does' if ' says ' in said else 'they do'} not write "
        f"({shown}): --tenant {tenant} would retract {tenant}'s; nothing written. A "
        f"retraction of {tenant}'s records is a file that says tenant {tenant}"
    )


def _principals(n: int) -> str:
    return f"{n} principal" + ("" if n == 1 else "s")


def _parse_acl(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [label.strip() for label in value.split(",") if label.strip()]


def run_ingest(
    path: Path,
    fmt: str,
    options: IngestOptions,
    batch_size: int = DEFAULT_BATCH_SIZE,
    *,
    full: bool = False,
) -> IngestReport:
    """Load, validate and write `path`; problems go to stderr and raise BadInput (exit 2).

    `full`: compare every element even when the bundle is unchanged since its last ingest.
    Ctrl-C says what was written: nothing while the files are read and checked; the
    writer's count while it writes (writer.py); after it, that the records stand.
    """
    written: list[IngestReport] = []
    try:
        report = _run_ingest(path, fmt, options, batch_size, full=full, written=written)
        # A Ctrl-C whose KeyboardInterrupt a finalizer swallowed is said as any other.
        ctrl_c.stop_if_pressed()
        return report
    except KeyboardInterrupt as exc:
        if isinstance(exc, InterruptedPartWay):
            raise
        if not written:
            line = (
                "interrupted (Ctrl-C) while the import's files were read and checked, before "
                "any record was written: nothing was written"
            )
        else:
            line = (
                "interrupted (Ctrl-C) after the import's records were written, while it "
                "noted which files it read: run the same ingest again to finish"
            )
        raise InterruptedPartWay(line) from exc


def _run_ingest(
    path: Path,
    fmt: str,
    options: IngestOptions,
    batch_size: int,
    *,
    full: bool,
    written: list[IngestReport],
) -> IngestReport:
    if options.git_history and fmt != "markdown-runbooks":
        raise BadInput("--git-history is for --format markdown-runbooks only")
    if options.acl_change and options.acl is None:
        raise BadInput("--acl-change needs --acl (the labels to give the records; '' for none)")
    if fmt == "bundle" and options.acl == []:
        # Almost surely a script's empty variable: it would open every element that gives
        # no acl, restricted records included; a bundle opens one with `acl: []`.
        raise BadInput(
            "--acl is empty: it would make every element of the bundle that gives no acl "
            "readable by the whole tenant; leave --acl out (those elements keep their "
            "current labels) or write acl: [] on the elements to open"
        )
    if "\0" not in str(path) and not os.path.lexists(path):
        # One line in the format's words (a Markdown import is no "bundle").
        raise BadInput(f"{path} does not exist: no {_FORMAT_NOUNS[fmt]} to import, nothing written")
    try:
        if path_problem(path) is None:
            # Before the database is opened or a byte read: a 2 GB file is one line, not
            # a process holding it in memory (each format's reader bounds its files again).
            check_input_size(path, _FORMAT_FILES[fmt](path)[0], options.max_bytes)
        loaded = INGEST_FORMATS[fmt](path, options)
    except InputTooLarge as exc:
        raise BadInput(exc.line()) from None
    if options.move_principals and options.tenant is None:
        raise BadInput("--move-principals is for --tenant only (the tenant to write them into)")
    said_tenants = loaded  # the files' own tenants, before --tenant replaces them
    # A bundle's --acl is applied once the records it would relabel are known (below).
    bundle_acl = fmt == "bundle" and options.acl is not None
    try:
        loaded = apply_overrides(
            loaded,
            tenant=options.tenant,
            source_id=options.source_id,
            acl=None if bundle_acl else options.acl,
        )
        if bundle_acl:
            # Checked here: a bad label is one line before the database is opened.
            apply_overrides(loaded, acl=options.acl)
    except ValueError as exc:
        raise BadInput(str(exc)) from exc
    # What --tenant replaced, said (and a file's principals moved only when asked).
    tenant_lines = _tenant_replaced(said_tenants, options)
    if loaded.problems:
        _report_problems(loaded.problems, fmt, path)
    settings = resolve_connection()
    driver = open_driver(settings)
    try:
        if bundle_acl and options.acl is not None:
            if not options.acl_change:
                _refuse_acl_change(
                    acl_option_changes(driver, loaded, options.acl, settings.database)
                )
            loaded = apply_overrides(loaded, acl=options.acl)
        # tenants=(): the writer creates the bundle's own tenant indexes; finding every
        # tenant in the graph would read the whole (tenant, id) index on each ingest.
        apply_schema(driver, settings.database, tenants=())
        big = loaded.element_count() >= PROGRESS_THRESHOLD
        ctx_database = ctx_database_from_env(settings.database)
        # Read with --backdate too: the records it dates into what runs saw are recorded.
        floors = run_floors(driver, {part.bundle.tenant for part in loaded.parts}, ctx_database)
        _refuse_taking_earlier_runs(driver, loaded, settings.database, ctx_database)
        # A typo'd --tenant starts a new tenant: said once the records are written.
        fresh = first_records_of(
            driver, [part.bundle.tenant for part in loaded.parts], settings.database
        )
        imported: tuple[str, str, ImportOrigin] | None = None
        claim: str | None = None
        if fmt in _IMPORT_SOURCE_PREFIXES and loaded.parts:
            tenant = loaded.parts[0].bundle.tenant
            source_id = import_source_id(fmt, path, options.source_id)
            imported = (tenant, source_id, origin_of(path))
            if options.source_id is None:
                # Claimed before anything is written: of two first imports of one source
                # name at once, another folder's is refused here (import_origin.py).
                try:
                    claim = claim_origin(driver, *imported, settings.database)
                except OtherFolder as exc:
                    raise BadInput(exc.line()) from None
        try:
            report = ingest_bundle(
                driver,
                loaded,
                database=settings.database,
                batch_size=batch_size,
                progress=_progress if big else None,
                full=full,
                recorded_after={} if options.backdate else floors,
                backdate_marker=(
                    BackdateMarker(floors=floors, origin=str(path), at=datetime.now(UTC))
                    if options.backdate and floors
                    else None
                ),
            )
        except (BundleRejected, BackdatedRecords):
            if imported is not None and claim is not None:
                # Refused before anything was written: the folder did not become the source
                # (an import stopped part way keeps its claim: its records stand).
                release_claim(driver, imported[0], imported[1], claim, settings.database)
            raise
        written.append(report)
        for line in report.warnings:
            # Ids come from the bundle: shown inert, as an import's warnings are.
            sys.stderr.write(f"warning: {printable(line)}\n")
        for line in loaded.written_notes:
            # File names and ids come from the imported folder: shown inert (_progress).
            _progress(line)
        for line in tenant_lines:
            _progress(line)
        for tenant in fresh:
            _progress(new_tenant_line(tenant))
        if fmt == "bundle":
            # Elements deleted from the file stay current: said, as an import's `removed:`.
            for line in absent_since_last_ingest(driver, path, loaded, settings.database):
                _progress(line)
        if report.backdated:
            _say_backdated(driver, report, ctx_database)
        if imported is not None:
            # Written: the folder this source is now imported from (another folder of the
            # same name is refused under the default source id, import_origin.py).
            tenant, source_id, origin = imported
            record_origin(driver, tenant, source_id, origin, settings.database)
            at = datetime.now(UTC)
            if fmt == "markdown-runbooks":
                # Records whose file this import did not have stay current: the card says so.
                ids = [d.id for part in loaded.parts for d in part.bundle.documents]
                mark_missing_files(
                    driver,
                    tenant,
                    source_id,
                    ids,
                    at,
                    settings.database,
                    unreadable=loaded.unreadable,
                )
            else:
                # So do alerts whose rule the file no longer has (`runbook --alert` says so).
                ids = [n.id for part in loaded.parts for n in part.bundle.nodes]
                mark_missing_files(
                    driver, tenant, source_id, ids, at, settings.database, kind="alert"
                )
        return report
    except ImportSourceInBundle as exc:
        # A bundle on an import's source (import_sources.py): before any write.
        raise BadInput(exc.line()) from None
    except (SourceTakeover, BackdatedRecords) as exc:
        # One line: the id, and the source that holds it (or the run that saw it).
        raise BadInput(
            exc.line() + _takeover_fix(exc, fmt, driver, options, settings.database)
        ) from None
    except BundleRejected as exc:
        _report_problems(exc.problems, fmt)
    finally:
        driver.close()


def _say_backdated(driver: neo4j.Driver, report: IngestReport, ctx_database: str | None) -> None:
    """After an `--backdate` ingest (whose first write transaction recorded the records it
    wrote into the time recorded runs saw, for replay to name): say per tenant how many
    records and how many runs saw that time. Records it left unchanged are not counted."""
    for row in report.backdated:
        tenant, dated, earliest = str(row["tenant"]), len(row["targets"]), row["earliest"]
        runs = runs_known_since(driver, tenant, earliest, ctx_database)
        noun = "record" if dated == 1 else "records"
        run_noun = "run" if runs == 1 else "runs"
        _progress(
            f"--backdate dated {dated} {noun} into the time {runs} recorded {run_noun} of "
            f"tenant {tenant} saw (known_at at or after {iso_utc(earliest)}): their replays "
            "will report drift and name this ingest"
        )


def _labels(labels: Sequence[str]) -> str:
    return "[" + ", ".join(labels) + "]"


def _refuse_taking_earlier_runs(
    driver: neo4j.Driver, loaded: LoadedBundle, kg_database: str | None, ctx_database: str | None
) -> None:
    """BadInput (exit 2, nothing written) when a retracted principal id written again with an
    explicit recorded_at would begin before a run of an earlier holder that recorded no
    incarnation (`--backdate` or not): the new holder would read that run."""
    dated: dict[str, dict[str, datetime]] = {}
    for part in loaded.parts:
        for principal in part.bundle.principals:
            if principal.recorded_at is not None:
                dated.setdefault(part.bundle.tenant, {})[principal.id] = principal.recorded_at
    found = [
        found
        for tenant in sorted(dated)
        for found in runs_a_new_holder_would_take(
            driver, tenant, dated[tenant], kg_database, ctx_database
        )
    ]
    if found:
        others = [printable(pid) for pid, _ in found[1:]]
        raise BadInput(
            f"ingest refused: {printable(found[0][1])}; omit its recorded_at to record it "
            f"now (--backdate does not lift this){and_more(others)}"
        )


def _refuse_acl_change(changes: Sequence[AclOptionChange]) -> None:
    """Refuse (exit 2, nothing written) a bundle's `--acl` that would relabel existing
    records, as a re-import's is refused: who may read them changes only with --acl-change."""
    if not changes:
        return
    first = changes[0]
    raise BadInput(
        f"ingest refused: --acl would change who may read {len(changes)} existing records "
        f"of tenant {first.tenant} whose element gives no acl (e.g. {first.id}: "
        f"{_labels(first.before)} -> {_labels(first.after)}); pass --acl-change to change "
        "them, or give those elements their own acl"
    )


def _takeover_fix(
    exc: Exception, fmt: str, driver: neo4j.Driver, options: IngestOptions, database: str | None
) -> str:
    """How to update records another import of the same format holds (a parent folder's, a
    folder imported under another name): its source id, which the refusal names, when this
    import may write under it (same format, same trust: dispatch.check_source_writable)."""
    prefix = _IMPORT_SOURCE_PREFIXES.get(fmt)
    if prefix is None or not isinstance(exc, SourceTakeover):
        return ""
    held = {t.held_by for t in exc.takeovers}
    plain = all(t.incoming is not None and t.superseded_by is None for t in exc.takeovers)
    source = held.pop() if len(held) == 1 else None
    if not plain or source is None:
        return ""
    tenant = exc.takeovers[0].tenant
    try:
        if not check_source_writable(driver, fmt, tenant, source, options.trusted, database):
            return ""
    except ForeignSource:
        return ""  # another writer's source, or of the other trust: not this import's
    # From a subfolder the locators change (`moved:`), so the folder it came from is first.
    return (
        f"; re-import the folder or file it came from, or pass --source-id {source} to "
        "update it from this path"
    )


def _report_problems(
    problems: Sequence[BundleProblem], fmt: str = "bundle", path: Path | None = None
) -> NoReturn:
    for problem in problems[:MAX_PROBLEM_LINES]:
        # A problem names the file and the element as the bundle wrote them: shown inert.
        sys.stderr.write(printable(problem.line()) + "\n")
    if len(problems) > MAX_PROBLEM_LINES:
        sys.stderr.write(f"... and {len(problems) - MAX_PROBLEM_LINES} more problems\n")
    what = _FORMAT_REJECTED[fmt]
    way_on = _past_links(problems, fmt, path)
    raise BadInput(f"{what} rejected: {len(problems)} problem(s), nothing written{way_on}")


def _past_links(problems: Sequence[BundleProblem], fmt: str, path: Path | None) -> str:
    """What to do about a folder refused for its symbolic links (a jsonnet mixin's `vendor/`):
    links stay refused, never followed out of the folder; its own files can be imported one by
    one. Empty when no problem is a link, or PATH is no folder of its own (a link to one: its
    files are reached through the link, no way on)."""
    if path is None or path.is_symlink() or not path.is_dir():
        return ""
    if not any(p.reason == LINK_REFUSED for p in problems):
        return ""
    files = _FORMAT_FILES[fmt](path)[0]
    if not files:
        return "; links are never followed: copy the linked files into the folder"
    example = printable(shlex.quote(str(files[0])))
    return (
        "; links are never followed: import the file(s) directly, e.g. "
        f"investigator ingest {example} --format {fmt} (with the same options), "
        "or a folder without links"
    )


@click.command(name="ingest")
# Plain text: click.Path would stat it and crash on a NUL byte; load_bundle reports instead.
@click.argument("path_text", metavar="PATH")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(sorted(INGEST_FORMATS)),
    default="bundle",
    show_default=True,
    help="What PATH holds.",
)
@click.option(
    "--tenant",
    help="Tenant for every element (replaces the files' tenant, said in one line per tenant "
    "a file says; a file of another tenant that holds principals is refused unless "
    "--move-principals).",
)
@click.option(
    "--move-principals",
    is_flag=True,
    help="With --tenant: write the principals of files that say another tenant into "
    "--tenant (their labels and purposes become grants there).",
)
@click.option("--source-id", help="Source for elements that do not name one.")
@click.option(
    "--acl",
    help="Comma-separated ACL labels for elements that give none (empty: refused for a "
    "bundle, whose elements open with acl: []). Without it, a re-ingest keeps the ACL its "
    "records have (a first ingest: no labels); an --acl that would change the ACL of records "
    "already written (imported formats: from the source) is refused unless --acl-change is "
    "given. Imported formats: a label no principal of the tenant holds is warned about.",
)
@click.option(
    "--acl-change",
    is_flag=True,
    help="Let --acl change who may read records already written (a bundle: those whose "
    "element gives no acl).",
)
@click.option(
    "--trusted",
    is_flag=True,
    help="Imported formats: treat the imported text as trusted (default untrusted; "
    "nothing in the files can raise it).",
)
@click.option(
    "--git-history",
    is_flag=True,
    help="markdown-runbooks: every commit of each file becomes a version (valid from the "
    "commit time, SUPERSEDES the one before, locator path@commit).",
)
@click.option(
    "--backdate",
    is_flag=True,
    help="Load curated history: allow recorded_at (and retraction) times at or before the "
    "known_at of runs already recorded in the tenant (refused otherwise: it would change "
    "what those runs saw, and their replays will report drift).",
)
@click.option(
    "--max-bytes",
    type=WholeNumber(1, 10**12),
    default=MAX_INPUT_BYTES,
    show_default=True,
    help="Bytes PATH may hold (a file, or a folder's files of the format together); a larger "
    "one is refused before it is read (the generated 101k-element bundle is 28 MB).",
)
@click.option(
    "--batch-size",
    type=WholeNumber(1, 50_000),
    default=DEFAULT_BATCH_SIZE,
    show_default=True,
    help="Records per write transaction.",
)
@click.option(
    "--full",
    is_flag=True,
    help="Validate and compare every element even when the bundle and its tenants' records "
    "are unchanged since the last ingest of this bundle (that re-ingest is otherwise "
    "reported at once).",
)
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document.")
def ingest_command(
    path_text: str,
    fmt: str,
    tenant: str | None,
    source_id: str | None,
    acl: str | None,
    acl_change: bool,
    trusted: bool,
    git_history: bool,
    backdate: bool,
    move_principals: bool,
    max_bytes: int,
    batch_size: int,
    full: bool,
    json_out: bool,
) -> None:
    """Load a bundle (YAML or JSON file, or a folder of them) into the Knowledge Graph.

    The whole bundle is validated first; any problem is reported as `file: element: reason`
    and nothing is written (exit 2). Re-ingesting the same bundle changes nothing; a changed
    element becomes a new version; `retractions` write tombstones. A bundle unchanged since
    its last ingest, into tenants whose records have not changed since, is reported as
    "unchanged since the last ingest of this bundle" without the comparison (--full makes it).

    \b
    Example:
      investigator ingest datasets/payments-incident
    """
    path = Path(path_text)
    options = IngestOptions(
        tenant=tenant,
        source_id=source_id,
        acl=_parse_acl(acl),
        acl_change=acl_change,
        trusted=trusted,
        git_history=git_history,
        backdate=backdate,
        move_principals=move_principals,
        max_bytes=max_bytes,
    )
    report = run_ingest(path, fmt, options, batch_size, full=full)
    if json_out:
        click.echo(json.dumps(report.model_dump()))
        return
    if report.unchanged_since_last_ingest:
        click.echo(
            f"ingested {path}: {report.elements} elements; unchanged since the last ingest of "
            f"this bundle: nothing written, {report.nodes_unchanged} nodes and "
            f"{report.edges_unchanged} relationships unchanged (--full compares every element) "
            f"({report.seconds:.2f}s)"
        )
        return
    click.echo(
        f"ingested {path}: {report.elements} elements; "
        f"created {report.node_records_created} node and {report.edge_records_created} "
        f"relationship records, {report.tombstones_created} tombstones; "
        f"unchanged {report.nodes_unchanged} nodes, {report.edges_unchanged} relationships; "
        f"superseded {report.records_superseded}, copied {report.edges_copied} relationships "
        f"({report.seconds:.2f}s)"
    )


def register(cli: click.Group) -> None:
    cli.add_command(ingest_command)
