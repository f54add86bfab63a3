"""What an importer hands back: a bundle for the writer, plus what it could not link."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from graph_schema.bundle import Bundle, BundleProblem, LoadedBundle, SourceSpec
from graph_schema.importers.common import listed_names


class UnresolvedLink(BaseModel):
    """A reference in the source that points at nothing the KG or the import knows."""

    model_config = ConfigDict(frozen=True)

    origin: str  # file the reference was read from
    element: str  # the element that carries the reference (e.g. alert:KubePodCrashLooping)
    field: str  # where the reference sits (e.g. annotations.runbook_url, front matter alert)
    target: str  # the reference as written
    reason: str

    def line(self) -> str:
        """One line for the ingest output."""
        return (
            f"{self.origin}: {self.element}: {self.field} {self.target!r} "
            f"not linked ({self.reason})"
        )

    def page(self) -> str:
        """The target without its `#anchor`: the rules of one runbooks page share it."""
        return self.target.partition("#")[0] or self.target


class LinkStatement(BaseModel):
    """APPLIES_TO links the import states, for its `linked:` line: each of `runbooks` to
    each of `targets`, found by `via` (file name, runbook_url)."""

    model_config = ConfigDict(frozen=True)

    runbooks: tuple[str, ...]
    targets: tuple[str, ...]
    via: str
    # Those of `runbooks` a newer version supersedes (a git history's older commits): the
    # line names the page's current version and counts these.
    superseded: tuple[str, ...] = ()

    def only(self, keys: set[str]) -> LinkStatement | None:
        """The statement cut to the links whose key is in `keys`; None when none is."""
        runbooks = tuple(r for r in self.runbooks if any(_key(r, t) in keys for t in self.targets))
        targets = tuple(t for t in self.targets if any(_key(r, t) in keys for r in runbooks))
        if not runbooks or not targets:
            return None
        return self.model_copy(update={"runbooks": runbooks, "targets": targets})

    def line(self) -> str:
        """`runbook:X APPLIES_TO alert:Y, alert:Z (file name)`; a page of many versions (a
        git history's, each linked) by its current version and a count of the others."""
        pages: dict[str, list[str]] = {}
        for runbook in self.runbooks:
            pages.setdefault(runbook.partition("@")[0], []).append(runbook)
        named = []
        for versions in pages.values():
            current = [v for v in versions if v not in self.superseded]
            older = len(versions) - len(current)
            if len(current) != 1 or not older:
                named.extend(versions)
                continue
            noun = "version" if older == 1 else "versions"
            named.append(f"{current[0]} (+{older} older {noun} of the page)")
        hint = ""
        if len(named) < len(self.runbooks):
            alert = self.targets[0].removeprefix("alert:") if len(self.targets) == 1 else "NAME"
            hint = f"; runbook --alert {alert} --as-of T shows the version in force at T"
        return f"{', '.join(named)} APPLIES_TO {', '.join(self.targets)} ({self.via}{hint})"


def _key(runbook: str, target: str) -> str:
    return f"APPLIES_TO|{runbook}|{target}"


# Unresolved references of one file, field and page named one by one up to this many; more
# are one counted line (Mimir's 100 rules all point at one page). Groups shown at most
# MAX_UNRESOLVED_LINES, the rest counted.
MAX_UNRESOLVED_NAMED = 3
MAX_UNRESOLVED_LINES = 10


def unresolved_lines(links: list[UnresolvedLink]) -> list[str]:
    """The ingest's `unresolved:` lines: one per reference, or, for several references of one
    file and field to one page (its anchors aside), one counted line with the first few; past
    MAX_UNRESOLVED_LINES lines, the rest counted in one."""
    groups: dict[tuple[str, str, str, str], list[UnresolvedLink]] = {}
    for link in links:
        groups.setdefault((link.origin, link.field, link.page(), link.reason), []).append(link)
    lines = []
    for (origin, field, page, reason), group in groups.items():
        if len(group) == 1:
            lines.append(group[0].line())
            continue
        named = listed_names([link.element for link in group], MAX_UNRESOLVED_NAMED)
        lines.append(
            f"{origin}: {len(group)} elements ({named}): {field} {page!r} (anchors aside) "
            f"not linked ({reason})"
        )
    if len(lines) > MAX_UNRESOLVED_LINES:
        rest = lines[MAX_UNRESOLVED_LINES:]
        lines = lines[:MAX_UNRESOLVED_LINES]
        lines.append(f"and {len(rest)} more unresolved references")
    return lines


class ImportResult(BaseModel):
    """The bundle an importer built, and everything the user should hear about it.

    `problems` are fatal (the CLI writes nothing when there is one); `unresolved` and
    `skipped` are reported in the ingest output but do not stop the write.
    """

    origin: str
    # The `source_type` of the import's Source record (`markdown_runbooks`, ...): the writer
    # takes the bundle as this import's, not as a bundle kept off import sources.
    source_type: str
    # What the files say: documents, alerts, links. Never a Source or Principal record.
    bundle: Bundle | None = None
    # The import's Source record, built from the command's options (`import_source_spec`);
    # None when the tenant already has a record of that id (it is then used as it is).
    source: SourceSpec | None = None
    problems: list[BundleProblem] = Field(default_factory=list)
    unresolved: list[UnresolvedLink] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)
    # Files imported otherwise than their front matter asks (`trust: trusted` without
    # --trusted): said once the records are written, as `ingest: PATH: imported; ...`.
    imported_notes: list[str] = Field(default_factory=list)
    # What the import links; a re-import's links already recorded are left out before the
    # report (graph_schema/importers/shared_links.py): only new links are said.
    linked: list[LinkStatement] = Field(default_factory=list)
    # Links another source holds that this import states otherwise: the holder's stand.
    conflicts: list[str] = Field(default_factory=list)
    # Runbook links templated on what a firing sets (`docs/{{ $labels.type }}/README.md`):
    # one line per distinct template, with how many rules name it; none is linked.
    templated: list[str] = Field(default_factory=list)
    # How to resolve what is unresolved (one per kind of reference), after those lines.
    hints: list[str] = Field(default_factory=list)
    # Ids the importer chose other than its default, and why (two files of one name).
    renamed: list[str] = Field(default_factory=list)
    # What the files set that the import does not take (front matter `tenant:` ...), with
    # what sets it instead: warnings, the write goes ahead.
    ignored: list[str] = Field(default_factory=list)
    # Files of the import skipped as unreadable (a template page's front matter): their
    # path in the folder -> why. Their records stay current; the card says why they are old.
    unreadable: dict[str, str] = Field(default_factory=dict)

    def loaded(self) -> LoadedBundle:
        """The bundle wrapped for the writer (`graph_schema.writer.ingest_bundle`)."""
        if self.bundle is None:
            return LoadedBundle(import_source_type=self.source_type)
        bundle = self.bundle
        if self.source is not None:
            bundle = bundle.model_copy(update={"sources": [self.source]})
        loaded = LoadedBundle.from_bundles([(self.origin, bundle)])
        loaded.import_source_type = self.source_type
        loaded.unreadable = dict(self.unreadable)
        return loaded

    def report_lines(self) -> list[str]:
        """What the ingest output says besides the write counts: links, skips, unresolved."""
        lines = [f"linked: {link.line()}" for link in self.linked]
        lines += [f"conflict: {line}" for line in self.conflicts]
        lines += [f"id: {line}" for line in self.renamed]
        lines += [f"skipped: {line}" for line in self.skipped]
        lines += list(self.imported_notes)
        lines += [f"unresolved: {line}" for line in self.templated]
        lines += [f"unresolved: {line}" for line in unresolved_lines(self.unresolved)]
        lines += [f"hint: {hint}" for hint in self.hints]
        return lines
