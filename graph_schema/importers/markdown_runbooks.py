"""Import a folder of Markdown runbooks (one file per alert or topic) as runbook documents.

Layout: any folder of `*.md` files, e.g. `runbooks/kubernetes/KubePodCrashLooping.md`, or of
a static site's pages, `alerts/X.html.md` and templates `alerts/X.html.md.erb` (named `X`:
page and template extensions are not part of the name; template tags are kept as written).
Each file becomes one `DocumentSpec` (kind `runbook` unless the front matter says
`kind: policy`, in any case) with its title (front matter `title`, else the first `#` heading,
else the one heading of the top level present, else the file name), its Markdown body as
`content`, the file path as `locator`, and a locator per section (`path#anchor`) in
`props.section_locators` beside `props.section_titles`. The
`source_version` is the git commit of a clean tracked file, else the sha256 of its bytes.
Folder indexes (`README.md` ...) are skipped, in one counted line, unless one is a runbooks
page of several alerts' sections, or one in a subfolder is more than a list of links: that is
its folder's runbook, `runbook:<folder>` (its path, `runbook:<folder>/README`, when another
file has that id). So is a file of a generic name (`mixin/runbook.md`: `runbook:mixin`).

Optional YAML front matter (all keys optional):

```yaml
---
id: runbook:payment-recovery@v3      # default: runbook:<name>[@v<version>]; an id without
                                     #   `runbook:` / `policy:` gets `runbook:` in front
name: payment-recovery               # default: the file name without .md
title: Payment recovery
version: 3                           # kept as props.runbook_version
kind: runbook                        # or policy
services: [svc:payment-api]          # APPLIES_TO targets; `service`, `alerts`, `alert`,
alerts: [PaymentErrorsHigh]          #   `error_codes`, `error_code`, `applies_to` too
supersedes: runbook:payment-recovery@v2   # or just `v2` / `2`
owner: team:payments-core            # OWNS edge from the team
valid_from: 2026-07-01T00:00:00Z     # times need a zone
valid_to: 2026-08-01T00:00:00Z
trust: untrusted                     # can only lower trust (see below)
acl: [internal]                      # added to --acl
---
```

Trust and identity: imported text is `untrusted` unless the ingest command says `--trusted`;
front matter `trust: untrusted` lowers it, `trust: trusted` is ignored (and reported). The
importer writes documents and OWNS edges only: never a Source or Principal record (the
import's Source record comes from the command's options, `ImportResult.source`), and every id
it creates starts with `runbook:` or `policy:`, so front matter cannot name another record.

With `ImportOptions.git_history` (`ingest --git-history`), every commit that changed a tracked
file becomes one version of it: id `<id>@<commit[:12]>`, locator `path@commit`, valid from
the commit time until the next change (`valid_from`/`valid_to` of the front matter are then
ignored), each version SUPERSEDES the one before. Untracked files are imported as they are.

Other front matter keys are kept verbatim as `props.front_matter_json`; one that names what
the ingest sets (`tenant`, `trusted`, `status` ...) or an owner in words (`owner_slack` ...,
shown as the runbook's contact, see `front_matter_contact`) is reported in
`ImportResult.ignored`. The
values of the keys above (times aside) are the text written: `version: 1.10` is "1.10".
References are resolved against the import and the tenant's KG (by id, name, alias or
path); a file whose name matches a known alert applies to it even without front matter.
Whatever cannot be resolved is reported in `ImportResult.unresolved`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from posixpath import basename
from typing import Any

from pydantic import ValidationError

from graph_schema.alert_names import is_alert_name
from graph_schema.bundle import (
    MAX_DOCUMENT_BYTES,
    Bundle,
    BundleProblem,
    DocumentSpec,
    EdgeSpec,
    local_files,
    path_problem,
)
from graph_schema.front_matter_contact import CONTACT_KEYS
from graph_schema.importers.common import (
    ImportOptions,
    default_source_id,
    import_source_spec,
    listed_names,
    slug,
    validation_text,
)
from graph_schema.importers.git_history import (
    FileVersion,
    HistoryBudget,
    NotTaken,
    file_at,
    file_history,
    in_work_tree,
    is_uncommitted,
)
from graph_schema.importers.link_targets import (
    MARKDOWN_SUFFIXES,
    PAGE_SUFFIXES,
    TEMPLATE_SUFFIXES,
    LinkIndex,
    LinkTarget,
    page_stem,
)
from graph_schema.importers.markdown_sections import (
    FenceReader,
    FrontMatterError,
    heading_text,
    legacy_anchors,
    sections_of,
    split_front_matter,
)
from graph_schema.importers.result import ImportResult, LinkStatement, UnresolvedLink
from graph_schema.importers.source_version import content_version, file_source_version
from graph_schema.kg_types import (
    RESERVED_PROPERTIES,
    DocumentKind,
    EvidenceType,
    NodeLabel,
    RelType,
    Trust,
)
from graph_schema.local_files import InputTooLarge, read_local_file

# Markdown files, and Markdown templates (Middleman's `page.html.md.erb`): imported as
# Markdown with their template tags as written (a `<%= RunRakeTask.links(...) %>` is the step).
IMPORTED_SUFFIXES = MARKDOWN_SUFFIXES + tuple(
    m + t for m in MARKDOWN_SUFFIXES for t in TEMPLATE_SUFFIXES
)
# Files that look like pages but are not Markdown (`dictionary.html.erb`): named as skipped.
_OTHER_PAGE_SUFFIXES = (*PAGE_SUFFIXES, *TEMPLATE_SUFFIXES, ".txt", ".rst", ".adoc")
# Folder indexes, not runbooks: unless one holds sections for several alerts (a docs site's
# runbooks page, Mimir's `mimir-runbooks/_index.md`), or one in a subfolder is more than a
# list of links (`_is_link_list`): then it is the folder's runbook.
_SKIPPED_NAMES = frozenset({"readme.md", "_index.md", "index.md", "summary.md"})
_INDEX_STEMS = frozenset(name.removesuffix(".md") for name in _SKIPPED_NAMES)
# File names that say only what every file of the import is (Thanos' `mixin/runbook.md`,
# Tempo's `tempo-mixin/runbook.md`): such a file is named after its folder, as an index
# page is (`runbook:tempo-mixin`, not `runbook:runbook`).
_GENERIC_STEMS = frozenset({"runbook", "runbooks", "playbook", "playbooks"})

_KNOWN_KEYS = frozenset(
    {
        "id",
        "name",
        "title",
        "version",
        "kind",
        "service",
        "services",
        "alert",
        "alerts",
        "error_code",
        "error_codes",
        "applies_to",
        "supersedes",
        "owner",
        "valid_from",
        "valid_to",
        "observed_at",
        "trust",
        "acl",
        "supports",
    }
)

_CONTACT_KEYS = frozenset(CONTACT_KEYS)
_CONTACT_NOTE = (
    "only front matter owner: team:<id> (a team of the tenant) makes an owner; the card shows "
    "it as the page's contact"
)

# Keys whose values are text, however they look: `version: 1.10` is "1.10", not 1.1.
_TEXT_KEYS = _KNOWN_KEYS - {"valid_from", "valid_to", "observed_at"}

# Front matter keys that name what the ingest sets, not the file: -> what sets it instead.
# They are kept verbatim in props.front_matter_json like any other key, and take no effect.
_SET_ELSEWHERE = {
    "trusted": "--trusted sets trust",
    "tenant": "--tenant sets the tenant",
    "source_id": "--source-id sets the source",
    "source": "--source-id sets the source",
    "recorded_at": "the ingest records it at its own time",
    "status": "a retraction in a bundle retracts a record",
    "retracted_at": "a retraction in a bundle retracts a record",
    "retraction_reason": "a retraction in a bundle retracts a record",
    "superseded_at": "the ingest supersedes a record when it writes a new version",
    "purposes": "the import's source sets them",
    "allowed_purposes": "the import's source sets them",
    "source_version": "the file's git commit or sha256 sets it",
    "locator": "the file's path sets it",
    "content": "the Markdown body is the content",
    "method": "the importer sets it",
    "type": "front matter kind sets the kind (runbook or policy)",
    "labels": "--acl (or front matter acl) sets who may read it",
}


def _ignored_keys(parsed_files: Iterable[_Parsed]) -> list[str]:
    """One warning per front matter key the import does not take but the ingest sets
    (`tenant`, `trusted`, `status` ...): the first file that has it, and how many more."""
    files: dict[str, list[str]] = {}
    for parsed in parsed_files:
        for key in parsed.front:
            if key in _KNOWN_KEYS or not (
                key in _SET_ELSEWHERE or key in RESERVED_PROPERTIES or key in _CONTACT_KEYS
            ):
                continue
            paths = files.setdefault(key, [])
            if str(parsed.path) not in paths:
                paths.append(str(parsed.path))
    lines = []
    for key, paths in sorted(files.items()):
        others = len(paths) - 1
        more = f" (and {others} more file{'s' if others > 1 else ''})" if others else ""
        instead = _SET_ELSEWHERE.get(key, _CONTACT_NOTE if key in _CONTACT_KEYS else "")
        instead = instead or "the ingest sets it"
        lines.append(f"{paths[0]}{more}: front matter {key!r} not taken: {instead}")
    return lines


# Front matter key -> (label of the target, prefix of the conventional id).
_LINK_KEYS: tuple[tuple[str, NodeLabel, str], ...] = (
    ("service", NodeLabel.SERVICE, "svc:"),
    ("services", NodeLabel.SERVICE, "svc:"),
    ("alert", NodeLabel.ALERT, "alert:"),
    ("alerts", NodeLabel.ALERT, "alert:"),
    ("error_code", NodeLabel.ERROR_CODE, "err:"),
    ("error_codes", NodeLabel.ERROR_CODE, "err:"),
)
_ANY_TARGET = (NodeLabel.SERVICE, NodeLabel.ALERT, NodeLabel.ERROR_CODE)

MAX_FILE_BYTES = MAX_DOCUMENT_BYTES  # a bundle document's text has the same bound
# Every id this importer creates starts with one of these (front matter cannot name a
# principal, a source or another tenant's kind of record).
ID_PREFIXES = ("runbook:", "policy:")


def markdown_files(root: Path) -> tuple[list[Path], list[BundleProblem]]:
    """The Markdown files under `root` (or `root` itself), hidden ones skipped, sorted by
    path; and the links, FIFOs, sockets and devices among them (refused, see
    `local_files`)."""
    return local_files(root, IMPORTED_SUFFIXES, skip_hidden=True)


def _text_list(value: Any, key: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return [str(value)]
    if isinstance(value, list) and all(
        isinstance(v, str | int | float) and not isinstance(v, bool) for v in value
    ):
        return [str(v) for v in value]
    raise ValueError(f"front matter {key!r} must be text or a list of texts")


def _version_label(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError("front matter 'version' must be a number or text")
    text = str(value).strip()
    return text.removeprefix("v").removeprefix("V") or None


def importer_id(explicit: Any) -> str:
    """An id from front matter, with the importer's prefix if it lacks one."""
    text = str(explicit).strip()
    return text if text.startswith(ID_PREFIXES) else "runbook:" + text


# The kinds a Markdown runbook folder holds: an imported file never claims to be a
# postmortem, an incident report or a change record (evidence of another standing).
IMPORTED_KINDS = (DocumentKind.RUNBOOK, DocumentKind.POLICY)


def _kind(value: Any) -> DocumentKind:
    if value is None:
        return DocumentKind.RUNBOOK
    text = str(value).strip().lower().replace("-", "_").replace(" ", "_")
    for kind in IMPORTED_KINDS:
        if text == kind.value:
            return kind
    kinds = " or ".join(k.value for k in IMPORTED_KINDS)
    raise ValueError(f"front matter kind {value!r} is not {kinds}")


class _Parsed:
    """One file's (or one committed version's) parsed parts before references are resolved."""

    def __init__(
        self,
        path: Path,
        rel: str,
        front: dict[str, Any],
        body: str,
        version: str,
        commit: FileVersion | None = None,
        data: bytes | None = None,
    ) -> None:
        self.path = path
        self.rel = rel
        self.front = front
        self.body = body
        self.source_version = version
        # The file's line the stored content (the body, stripped) starts on: after the
        # front matter and the blank lines around it (a body is the end of the file's text).
        self.content_first_line = 1
        self.digest = content_version(data) if data is not None else None  # the bytes read
        self.kind = _kind(front.get("kind"))
        # The page's name: `alerts/X.html.md` is X, as its alert and its URL name it.
        stem = PurePosixPath(page_stem(rel)).name
        generic = stem.lower() in _GENERIC_STEMS and bool(path.parent.name)
        # A folder's index page imported as its runbook (see `_is_link_list`), or a file of a
        # generic name: named after its folder, unless that is another file's id.
        self.index = generic or (
            stem.lower() in _INDEX_STEMS and PurePosixPath(rel).parent.name != ""
        )
        self.page_path = False  # `as_page_path` gave it its path as its id
        if stem.lower() in _INDEX_STEMS or generic:
            stem = path.parent.name or stem  # a runbooks page is named after its folder
        self.name = slug(str(front.get("name") or stem))
        self.version_label = _version_label(front.get("version"))
        self.version_suffix = (
            f"@v{self.version_label}" if self.version_label and commit is None else ""
        )
        self.default_id = f"runbook:{self.name}{self.version_suffix}"
        self.explicit_id = bool(front.get("id"))
        # An explicit id keeps its text behind the importer's prefix (the bundle model
        # refuses a malformed one).
        self.id = importer_id(front["id"]) if front.get("id") else self.default_id
        self.id_base = f"runbook:{self.name}"  # what a `supersedes: v2` is read against
        self.commit = commit
        self.previous_id: str | None = None
        self.valid_to: Any = None
        if commit is not None:
            self.id = f"{self.id}@{commit.sha[:12]}"
        self.stem = stem
        # The name the importer gave before it read page extensions (`X.html`), if another.
        old = slug(Path(rel).stem)
        named = front.get("name") or self.explicit_id or commit is not None
        self.old_name = old if not named and old != self.name else None

    def old_id(self) -> str | None:
        """The id an import before page names were read gave this file (`runbook:X.html`)."""
        if self.old_name is None:
            return None
        return self.id_base.removesuffix(self.name) + self.old_name + self.version_suffix

    def as_page_path(self) -> None:
        """The id of an index page whose folder's name is another file's id: its path,
        `runbook:gitaly/README` (the other file keeps the id it always had)."""
        self.page_path = True
        self.id_base = f"runbook:{slug(PurePosixPath(page_stem(self.rel)).as_posix())}"
        self.id = self.id_base + self.version_suffix
        if self.commit is not None:
            self.id = f"{self.id}@{self.commit.sha[:12]}"

    def qualify(self, folder: str) -> None:
        """Put `folder` before the name of a default id (another file has the same name)."""
        self.id_base = f"runbook:{folder}/{self.name}"
        self.id = self.id_base + self.version_suffix
        if self.commit is not None:
            self.id = f"{self.id}@{self.commit.sha[:12]}"


def _index_pages_yield(parsed_files: list[_Parsed], result: ImportResult) -> None:
    """An index page (`gitaly/README.md`, `runbook:gitaly`) whose default id is also another
    file's (`gitaly.md` anywhere in the folder) takes its path as its id instead, so the ids
    files had before index pages were imported never change."""
    files = [p for p in parsed_files if not p.index]
    taken = {p.id for p in files} | {p.default_id for p in files if not p.explicit_id}
    renamed: dict[str, str] = {}
    for parsed in parsed_files:
        if parsed.index and not parsed.explicit_id and parsed.default_id in taken:
            old = parsed.id
            parsed.as_page_path()
            renamed[old] = parsed.id
            if parsed.commit is None or parsed.previous_id is None:
                result.renamed.append(
                    f"{parsed.rel} -> {parsed.id} ({parsed.default_id} is another file's)"
                )
    for parsed in parsed_files:
        if parsed.previous_id in renamed:
            parsed.previous_id = renamed[parsed.previous_id]


def _case_look_alikes(parsed_files: list[_Parsed], known: Iterable[LinkTarget]) -> list[str]:
    """One line per id of this import that differs from another id only in letter case
    (`Alpha.md` beside `alpha.md`, or a runbook already in the tenant): ids are case
    sensitive, so they are two records, and a reader who expects one should hear of it."""
    where = {p.id: p.rel for p in parsed_files}
    known_ids = {t.id for t in known}
    folded: dict[str, set[str]] = {}
    for ident in sorted(set(where) | known_ids):
        folded.setdefault(ident.casefold(), set()).add(ident)
    lines = []
    for ident in sorted(where):
        others = sorted(folded[ident.casefold()] - {ident})
        # Each pair once: said from the first id of the import, or against the tenant's.
        others = [o for o in others if o not in where or o > ident]
        if not others:
            continue
        named = ", ".join(
            f"{o} ({where[o]})" if o in where else f"{o} (in the tenant)" for o in others
        )
        lines.append(
            f"{ident} ({where[ident]}) differs from {named} only in letter case: ids are "
            "case sensitive, so they are separate records (a front matter id names one)"
        )
    return lines


def _qualify_same_names(parsed_files: list[_Parsed], result: ImportResult) -> None:
    """Files with one default id in different folders (openshift/runbooks has KubeAPIDown.md
    under two operators) get the shortest tail of their folder path that tells them apart in
    front of the name: `runbook:cluster-monitoring-operator/KubeAPIDown`. A file at the root
    keeps its id; explicit front matter ids are never changed (a repeat stays an error)."""
    groups: dict[str, list[_Parsed]] = {}
    for parsed in parsed_files:
        if not parsed.explicit_id and not parsed.page_path:
            groups.setdefault(parsed.default_id, []).append(parsed)
    renamed: dict[str, str] = {}
    for default_id, members in sorted(groups.items()):
        folders = sorted({PurePosixPath(p.rel).parent.parts for p in members})
        if len(folders) < 2:
            continue  # one file (with its versions), or one folder: nothing tells them apart
        deepest = max(len(parts) for parts in folders)
        tails: dict[tuple[str, ...], str] = {}
        for depth in range(1, deepest + 1):
            tails = {parts: "/".join(slug(part) for part in parts[-depth:]) for parts in folders}
            if len(set(tails.values())) == len(folders):
                break
        for parsed in members:
            tail = tails[PurePosixPath(parsed.rel).parent.parts]
            if tail:
                old = parsed.id
                parsed.qualify(tail)
                renamed[old] = parsed.id
        shown = sorted({p.rel: p.id for p in members}.items())
        result.renamed.append(
            f"{len(shown)} files are named like {default_id}: "
            + ", ".join(f"{rel} -> {new_id}" for rel, new_id in shown)
            + " (a front matter id pins one)"
        )
    for parsed in parsed_files:
        if parsed.previous_id in renamed:
            parsed.previous_id = renamed[parsed.previous_id]


def _holds_alert_sections(file: Path) -> bool:
    """Whether an index page has headings of two or more alerts' names (read leniently:
    whatever cannot be read is an index, skipped as before)."""
    try:
        _, body = split_front_matter(read_local_file(file, MAX_FILE_BYTES).decode("utf-8"))
    except (OSError, InputTooLarge, UnicodeDecodeError, FrontMatterError):
        return False
    alerts = [s for s in sections_of(body) if is_alert_name(heading_text(s.title))]
    return len(alerts) >= 2


# Text outside links, headings, code and comments that makes an index page a page: GitLab's
# generated service READMEs (a dashboard, an alerts filter, a label and link lists) have about
# 70 characters; a README with a paragraph of its own (`praefect/README.md`) has more.
MIN_INDEX_TEXT = 200
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)|<https?://[^>]*>|https?://\S+")
_LIST_MARK = re.compile(r"^([*+-]|\d+[.)])\s+")


def _is_link_list(file: Path) -> bool:
    """Whether a subfolder's index page is a list of links (skipped) rather than a page of
    its folder (imported as `runbook:<folder>`): under `MIN_INDEX_TEXT` characters of text
    outside headings, code, HTML comments and lines that are mostly links. Read leniently:
    what cannot be read is a list (skipped as before)."""
    try:
        _, body = split_front_matter(read_local_file(file, MAX_FILE_BYTES).decode("utf-8"))
    except (OSError, InputTooLarge, UnicodeDecodeError, FrontMatterError):
        return True
    text = 0
    fences = FenceReader(indent=None)
    for line in body.splitlines():
        stripped = line.strip()
        if fences.fence_line(line) or fences.inside:
            continue
        if not stripped or stripped.startswith(("#", "<!--", "[[", "|")):
            continue
        rest = re.sub(r"[*_`:|>\-\s]", "", _LIST_MARK.sub("", _LINK.sub("", stripped)))
        if _LINK.search(stripped) and len(rest) <= 40:
            continue  # a link with a few words around it: an entry of the list
        text += len(rest)
        if text >= MIN_INDEX_TEXT:
            return False
    return True


def _parse_file(
    path: Path, root: Path, data: bytes | None = None, commit: FileVersion | None = None
) -> tuple[_Parsed | None, BundleProblem | None]:
    rel = path.name if root.is_file() else path.relative_to(root).as_posix()
    origin = str(path) if commit is None else f"{path}@{commit.sha[:12]}"
    if data is None:
        try:
            data = read_local_file(path, MAX_FILE_BYTES)
        except InputTooLarge:
            data = None
        except OSError as exc:
            reason = f"unreadable: {exc}"
            return None, BundleProblem(origin=origin, element="file", reason=reason)
    if data is None or len(data) > MAX_FILE_BYTES:
        return None, BundleProblem(
            origin=origin, element="file", reason=f"larger than {MAX_FILE_BYTES} bytes"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, BundleProblem(origin=origin, element="file", reason="not UTF-8 text")
    if "\x00" in text:
        return None, BundleProblem(origin=origin, element="file", reason="contains NUL bytes")
    try:
        front, body = split_front_matter(text, _TEXT_KEYS)
    except FrontMatterError as exc:
        return None, BundleProblem(origin=origin, element="front matter", reason=str(exc))
    try:
        version = f"git:{commit.sha}" if commit else file_source_version(path, data)
        parsed = _Parsed(path, rel, front, body, version, commit, data)
        content_start = len(text) - len(body.lstrip())
        parsed.content_first_line = text.count("\n", 0, content_start) + 1
    except ValueError as exc:
        return None, BundleProblem(origin=origin, element="front matter", reason=str(exc))
    return parsed, None


def _title(parsed: _Parsed) -> str:
    explicit = parsed.front.get("title")
    if isinstance(explicit, str) and explicit.strip():
        return explicit.strip()
    sections = sections_of(parsed.body)
    for section in sections:
        if section.level == 1:
            return section.title
    # No level-1 heading: the one heading at the top level present ("## KubePodCrashLooping"
    # over its "### Mitigation") names the document better than its file name does.
    top = [s for s in sections if s.level == min((s.level for s in sections), default=0)]
    return top[0].title if len(top) == 1 else parsed.stem


class _AlertHolders:
    """Who holds each alert already, so a file named after it only ignoring letter case
    (`carthigherrorrate.md` for CartHighErrorRate) does not take it over: the runbooks linked
    to it by its rule's runbook_url, and the runbooks (of the tenant or this import) named
    exactly after it."""

    def __init__(self, known: list[LinkTarget], parsed_files: list[_Parsed]) -> None:
        self._alerts = {t.id: t for t in known if t.label is NodeLabel.ALERT}
        self._by_stem: dict[str, set[str]] = {}
        for t in known:
            if t.label is NodeLabel.RUNBOOK and t.path:
                self._by_stem.setdefault(basename(page_stem(t.path)), set()).add(t.id)
        for p in parsed_files:
            self._by_stem.setdefault(p.stem, set()).add(p.id)

    def names(self, alert_id: str) -> set[str]:
        """The alert's names, exactly as spelled (its alertname, name and id's tail)."""
        target = self._alerts.get(alert_id)
        spelled = {alert_id.removeprefix("alert:")}
        if target is not None:
            spelled.update(k for k in (target.name, *target.keys) if k)
        return spelled

    def holders(self, alert_id: str, runbook_id: str) -> list[str]:
        """Other runbooks that hold `alert_id`: its runbook_url's, or named exactly after it."""
        target = self._alerts.get(alert_id)
        held = set(target.applied_by) if target is not None else set()
        for name in self.names(alert_id):
            held |= self._by_stem.get(name, set())
        return sorted(held - {runbook_id})


def _resolve_links(
    parsed: _Parsed, index: LinkIndex, result: ImportResult, holders: _AlertHolders
) -> tuple[list[str], str | None, list[str]]:
    """APPLIES_TO targets, the SUPERSEDES target and owning teams of one runbook."""
    origin = str(parsed.path)
    applies: set[str] = set()

    def unresolved(field: str, target: str, reason: str) -> None:
        result.unresolved.append(
            UnresolvedLink(
                origin=origin, element=parsed.id, field=field, target=target, reason=reason
            )
        )

    explicit_alert = False
    for key, label, prefix in _LINK_KEYS:
        for ref in _text_list(parsed.front.get(key), key):
            found = index.resolve(label, ref) or index.resolve(label, prefix + ref)
            if label is NodeLabel.ALERT:
                explicit_alert = True
            if found:
                applies.update(found)
            else:
                unresolved(key, ref, f"no {label.value} with that id or name in the tenant")
    for ref in _text_list(parsed.front.get("applies_to"), "applies_to"):
        found = sorted({i for label in _ANY_TARGET for i in index.resolve(label, ref)})
        if found:
            applies.update(found)
        else:
            unresolved("applies_to", ref, "no service, alert or error code with that id")
    if not explicit_alert:
        # The common layout: one file per alert, named after the alert.
        by_name = []
        for alert in index.resolve(NodeLabel.ALERT, parsed.stem):
            held = holders.holders(alert, parsed.id)
            if parsed.stem in holders.names(alert) or not held:
                by_name.append(alert)
                continue
            # Matched only ignoring letter case, and another runbook has the alert: a
            # look-alike file must not take the alert's card from it.
            name = alert.removeprefix("alert:")
            result.skipped.append(
                f"{parsed.path}: not linked to {alert}: the file name {parsed.stem!r} matches "
                f"it only ignoring letter case, and {', '.join(held)} already has it (by the "
                f"rule's runbook_url, or named exactly after it); add `alerts: [{name}]` to the "
                "front matter to link this one too"
            )
        if by_name:
            applies.update(by_name)
            result.linked.append(
                LinkStatement(runbooks=(parsed.id,), targets=tuple(by_name), via="file name")
            )

    supersedes: str | None = parsed.previous_id
    raw_sup = parsed.front.get("supersedes")
    if raw_sup is not None and parsed.commit is None:
        ref = (_text_list(raw_sup, "supersedes") or [""])[0]
        candidates = [ref, f"{parsed.id_base}@v{ref.removeprefix('v').removeprefix('V')}"]
        for candidate in candidates:
            found = index.resolve(NodeLabel.RUNBOOK, candidate)
            found = [f for f in found if f != parsed.id]
            if len(found) == 1:
                supersedes = found[0]
                break
        if supersedes is None:
            unresolved("supersedes", ref, "no other runbook with that id or version")

    owners: list[str] = []
    for ref in _text_list(parsed.front.get("owner"), "owner"):
        found = index.resolve(NodeLabel.TEAM, ref) or index.resolve(NodeLabel.TEAM, "team:" + ref)
        if found:
            owners.extend(found)
        else:
            unresolved("owner", ref, "no team with that id or name in the tenant")
    return sorted(applies), supersedes, sorted(set(owners))


def _document(
    parsed: _Parsed,
    options: ImportOptions,
    source_id: str,
    links: tuple[list[str], str | None, list[str]],
    recorded: list[str],
) -> DocumentSpec:
    """The runbook record of one parsed file; `recorded` are the section locators of the
    tenant's current record of its id (kept when only the anchor rule changed since)."""
    front = parsed.front
    applies, supersedes, _ = links
    sections = sections_of(parsed.body)
    kind = parsed.kind
    default_supports = (
        [EvidenceType.POLICY.value] if kind is DocumentKind.POLICY else [EvidenceType.RUNBOOK.value]
    )
    extra = {k: v for k, v in sorted(front.items()) if k not in _KNOWN_KEYS}
    locator = parsed.rel if parsed.commit is None else f"{parsed.rel}@{parsed.commit.sha}"
    props: dict[str, Any] = {
        "path": parsed.rel,
        "format": "markdown",
        "section_titles": [s.title for s in sections],
        "section_locators": [f"{locator}#{s.anchor}" for s in sections],
    }
    titles = [s.title for s in sections]
    if recorded == [f"{locator}#{a}" for a in legacy_anchors(titles)]:
        # Written before `_` was kept in anchors (`#osddown` of OSD_DOWN): the same headings
        # keep their recorded anchors, so an unchanged file stays one version (fragments match
        # either spelling: `names_section` compares the headings too).
        props["section_locators"] = list(recorded)
    if not sections:
        del props["section_titles"], props["section_locators"]
    if parsed.version_label:
        label = parsed.version_label
        props["runbook_version"] = int(label) if label.isdigit() else label
    if extra:
        props["front_matter_json"] = json.dumps(extra, sort_keys=True, default=str)
    if parsed.content_first_line > 1:
        # So that the gate names the file's line of a withheld fragment, not the content's.
        props["content_first_line"] = parsed.content_first_line
    if parsed.commit is not None:
        props["commit"] = parsed.commit.sha
    acl = sorted(set(options.acl) | set(_text_list(front.get("acl"), "acl")))
    valid_from: Any
    valid_to: Any
    if parsed.commit is not None:
        valid_from, valid_to = parsed.commit.committed_at, parsed.valid_to
    else:
        valid_from, valid_to = front.get("valid_from"), front.get("valid_to")
    return DocumentSpec.model_validate(
        {
            "id": parsed.id,
            "kind": kind,
            "name": parsed.name,
            "title": _title(parsed),
            "content": parsed.body.strip(),
            "locator": locator,
            "source_id": source_id,
            "source_version": parsed.source_version,
            "acl": acl,
            "valid_from": valid_from,
            "valid_to": valid_to,
            "observed_at": front.get("observed_at"),
            "supersedes": supersedes,
            "applies_to": applies,
            "supports": _text_list(front.get("supports"), "supports") or default_supports,
            "trust": _trust(front.get("trust"), options),
            "method": "markdown-runbooks",
            "props": props,
        }
    )


def _trust(value: Any, options: ImportOptions) -> Trust:
    # File content may lower trust, never raise it (only the ingest command's --trusted).
    if value is None:
        return options.trust
    text = str(value).strip().lower()
    if text not in (Trust.TRUSTED.value, Trust.UNTRUSTED.value):
        raise ValueError(f"front matter trust {value!r} is not trusted or untrusted")
    return Trust.UNTRUSTED if text == Trust.UNTRUSTED.value else options.trust


def _file_versions(
    file: Path, root: Path, options: ImportOptions, result: ImportResult, budget: HistoryBudget
) -> list[_Parsed]:
    """One parsed file, or with `git_history` one per commit that changed it (each counted
    against `budget` before it is read)."""
    not_taken: list[NotTaken] = []
    history = file_history(file, budget, not_taken) if options.git_history else None
    # A commit no version holds is named (docs/runbooks.md: every commit is one version).
    result.skipped.extend(n.line(file) for n in not_taken)
    if history and history[-1].committed_at > datetime.now(UTC):
        # A commit dated ahead of now (a forged or skewed date) holds the file's latest text,
        # which no lookup before that date serves: said (the line is not hashed).
        when = history[-1].committed_at.isoformat().replace("+00:00", "Z")
        result.ignored.append(
            f"{file}: commit {history[-1].sha[:12]} is dated {when}, in the future: its "
            "version is not in force before then, the one before it is (--git-history)"
        )
    if not history:
        if options.git_history:
            result.skipped.append(f"{file}: not committed in git, imported as it is (no history)")
        parsed, problem = _parse_file(file, root)
        if problem is not None and file.name.lower().endswith(TEMPLATE_SUFFIXES):
            # A template page its site reads leniently (Ruby YAML takes a repeated key): it
            # is skipped and named, not a refusal of the pages that were always imported.
            result.skipped.append(f"{file}: {problem.element}: {problem.reason} (template page)")
            rel = file.name if root.is_file() else file.relative_to(root).as_posix()
            result.unreadable[rel] = f"{problem.element}: {problem.reason}"[:200]
        elif problem is not None:
            result.problems.append(problem)
        return [parsed] if parsed is not None else []
    if is_uncommitted(file):
        result.skipped.append(f"{file}: uncommitted changes not imported (--git-history)")
    versions: list[_Parsed] = []
    for commit in history:
        if versions and versions[-1].valid_to is None:
            versions[-1].valid_to = commit.committed_at  # in force until the next change
        if commit.data is None:
            continue  # deleted here; a later commit may bring it back
        parsed, problem = _parse_file(file, root, commit.data, commit)
        if problem is not None:
            result.problems.append(problem)
            continue
        if parsed is None:
            continue
        if versions:
            parsed.previous_id = versions[-1].id
        versions.append(parsed)
    return versions


def _skip_other_pages(root: Path, result: ImportResult) -> str | None:
    """One counted line for the files that look like pages but are not Markdown
    (`dictionary.html.erb`): not imported, and the user hears so; the line, or None."""
    if root.is_file():
        return None
    found, _ = local_files(root, _OTHER_PAGE_SUFFIXES, skip_hidden=True)
    others = [f for f in found if not f.name.lower().endswith(IMPORTED_SUFFIXES)]
    if not others:
        return None
    names = [f.relative_to(root).as_posix() for f in others]
    listed = listed_names(names)
    s = "s" if len(names) > 1 else ""
    line = f"{len(names)} file{s} not Markdown (.md), not imported: {listed}"
    if any(f.name.lower().endswith(".rst") for f in others):
        line += f"; {_RST_HINT}"
    result.skipped.append(line)
    return line


def _skip_hidden_pages(root: Path, result: ImportResult) -> None:
    """One counted line for the Markdown files whose name starts with `.` (`.md`, a page
    written with no name; `.draft.md`): hidden files are not imported, and the user hears so
    (before, nothing was said). Hidden folders (`.git`, `.github`) are not looked into."""
    if root.is_file():
        return
    hidden: list[str] = []
    for folder, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        here = Path(folder)
        hidden += [
            (here / name).relative_to(root).as_posix()
            for name in filenames
            if name.startswith(".") and name.lower().endswith(IMPORTED_SUFFIXES)
        ]
    if not hidden:
        return
    names = sorted(hidden)
    s = "s" if len(names) > 1 else ""
    result.skipped.append(
        f"{len(names)} hidden file{s} (name starting with '.'), not imported: "
        f"{listed_names(names)}; rename a page without the leading '.' to import it"
    )


# What a Sphinx or ReadTheDocs shop is told of its `.rst` pages.
_RST_HINT = (
    "reStructuredText (.rst) is not read as Markdown: convert it first "
    "(pandoc -f rst -t gfm PAGE.rst -o PAGE.md) and import the .md"
)


def _not_markdown(path: Path) -> BundleProblem | None:
    """The refusal of a single file that is not Markdown (`health-checks.rst`, a rules
    YAML given the wrong --format): as a folder's such files are left out, never stored as
    a garbled runbook."""
    if not path.is_file() or path.name.lower().endswith(IMPORTED_SUFFIXES):
        return None
    name = path.name.lower()
    hint = (
        _RST_HINT
        if name.endswith(".rst")
        else "a rules file is imported with --format prometheus-rules"
        if name.endswith((".yml", ".yaml"))
        else "import a .md file, or a folder of them"
    )
    return BundleProblem(
        origin=str(path), element="path", reason=f"{path.name} is not Markdown (.md): {hint}"
    )


def _skip_indexes(indexes: list[str], result: ImportResult) -> None:
    """One counted line for the folder indexes skipped (a docs repository has one README per
    folder: 80 lines of absolute paths buried the rest of the output)."""
    if not indexes:
        return
    listed = listed_names(indexes)
    s = "es" if len(indexes) > 1 else ""
    result.skipped.append(f"{len(indexes)} folder index{s}, not runbooks: {listed}")


def _supersede_old_ids(parsed_files: list[_Parsed], known: Iterable[LinkTarget]) -> None:
    """A file the tenant holds under the id an older import gave it (`runbook:X.html` of
    `X.html.md`, before page extensions were read) supersedes that record with its new id
    (the ingest reports it as renamed), so the old name drops out of the answers."""
    held = {t.id: t.path for t in known if t.label is NodeLabel.RUNBOOK}
    ids = {p.id for p in parsed_files}
    for parsed in parsed_files:
        old = parsed.old_id()
        if old is None or old in ids or held.get(old) != parsed.rel:
            continue
        if parsed.front.get("supersedes") is None:
            parsed.previous_id = old  # on every re-import alike: the record stays unchanged


def _old_digest(target: LinkTarget, root: Path) -> str | None:
    """The `sha256:` of the bytes a gone file's record was imported from: its
    source_version, or for a clean file of a git work tree (`git:<sha>`) the bytes of its
    path at that commit."""
    version = target.version or ""
    if version.startswith("sha256:"):
        return version
    if version.startswith("git:") and target.path and root.is_dir():
        # Bounded as the import bounds a file: a larger one was never imported.
        data = file_at(root, version.removeprefix("git:"), target.path, MAX_FILE_BYTES)
        return content_version(data) if data is not None else None
    return None


def _supersede_moved_files(
    parsed_files: list[_Parsed], known: Iterable[LinkTarget], source_id: str, root: Path
) -> None:
    """A file moved with its bytes unchanged (`mv a.md b.md`, `git mv`: a path of the
    source gone, a new path with the same bytes) supersedes the record of its old path with
    its new id (the ingest reports it as renamed), so the old name and its dead locator drop
    out of the answers. Once paired, the pair holds on every re-import (an edit of the new
    file too); a file moved with edits is a new file and a removed one, as before."""
    rels = {p.rel for p in parsed_files}
    ids = {p.id for p in parsed_files}
    gone = [
        t
        for t in known
        if t.label is NodeLabel.RUNBOOK
        and t.source_id == source_id
        and t.path is not None
        and t.path not in rels
        and t.id not in ids
    ]
    free = [
        p
        for p in parsed_files
        if p.commit is None and p.previous_id is None and p.front.get("supersedes") is None
    ]
    paired: set[str] = set()
    for parsed in free:  # paired by an earlier import: the edge stays
        earlier = [t for t in gone if parsed.id in t.superseded_by]
        if len(earlier) == 1:
            parsed.previous_id = earlier[0].id
            paired.add(earlier[0].id)
    # Same bytes on both sides, one file each (two copies of one page name no rename). Only
    # a file with no record yet is a rename (a copy of a gone file that was always there is
    # not).
    held = {t.id for t in known}
    files: dict[str, list[_Parsed]] = {}
    for parsed in free:
        if parsed.previous_id is None and parsed.digest is not None and parsed.id not in held:
            files.setdefault(parsed.digest, []).append(parsed)
    by_digest: dict[str, list[LinkTarget]] = {}
    for target in gone:
        digest = _old_digest(target, root) if files and target.id not in paired else None
        if digest is not None:
            by_digest.setdefault(digest, []).append(target)
    for digest, targets in by_digest.items():
        moved = files.get(digest, [])
        if len(targets) == 1 and len(moved) == 1:
            moved[0].previous_id = targets[0].id


def import_markdown_runbooks(
    root: Path | str, options: ImportOptions, known: Iterable[LinkTarget] = ()
) -> ImportResult:
    """Parse the Markdown runbooks under `root` into a bundle for `options.tenant`.

    `known` are link targets already in the tenant's KG (see `load_link_targets`). Fatal
    problems (unreadable file, bad front matter, duplicate ids, times without a zone) are in
    `result.problems` and `result.bundle` is then None.
    """
    path = Path(root)
    result = ImportResult(origin=str(path), source_type="markdown_runbooks")
    refused = path_problem(path)
    if refused is not None:
        result.problems.append(refused)
        return result
    if options.git_history and not in_work_tree(path):
        result.problems.append(
            BundleProblem(
                origin=str(path),
                element="path",
                reason="--git-history needs a folder inside a git work tree (clone it first)",
            )
        )
        return result
    if (other := _not_markdown(path)) is not None:
        result.problems.append(other)
        return result
    source_id = options.source_id or default_source_id("runbooks", path)
    parsed_files: list[_Parsed] = []
    files, not_read = markdown_files(path)
    if not_read:
        result.problems.extend(not_read)
        return result
    indexes: list[str] = []
    budget = HistoryBudget(path, options.max_bytes)
    for file in files:
        is_index = file.name.lower() in _SKIPPED_NAMES and not path.is_file()
        if (
            is_index
            and not _holds_alert_sections(file)
            and (file.parent == path or _is_link_list(file))
        ):
            indexes.append(file.relative_to(path).as_posix())
            continue
        parsed_files.extend(_file_versions(file, path, options, result, budget))
    _skip_indexes(indexes, result)
    _skip_hidden_pages(path, result)
    others = _skip_other_pages(path, result)
    if not parsed_files and not result.problems:
        # The refusal names what it saw: the skipped line is not printed when nothing is.
        reason = "no Markdown (.md) runbooks" + (f" ({others})" if others else "")
        result.problems.append(BundleProblem(origin=str(path), element="path", reason=reason))
    _index_pages_yield(parsed_files, result)
    _qualify_same_names(parsed_files, result)
    seen: dict[str, str] = {}
    for parsed in parsed_files:
        if parsed.id in seen:
            result.problems.append(
                BundleProblem(
                    origin=str(parsed.path),
                    element=parsed.id,
                    reason=f"duplicate id (also in {seen[parsed.id]})",
                )
            )
        seen.setdefault(parsed.id, str(parsed.path))
    if result.problems:
        return result

    result.ignored.extend(_ignored_keys(parsed_files))
    known = list(known)  # read twice
    result.ignored.extend(_case_look_alikes(parsed_files, known))
    _supersede_old_ids(parsed_files, known)
    _supersede_moved_files(parsed_files, known, source_id, path)
    index = LinkIndex(known)
    holders = _AlertHolders(known, parsed_files)
    recorded = {t.id: t.section_locators for t in known if t.label is NodeLabel.RUNBOOK}
    for parsed in parsed_files:
        index.add(
            LinkTarget(id=parsed.id, label=NodeLabel.RUNBOOK, name=parsed.name, path=parsed.rel)
        )
    documents: list[DocumentSpec] = []
    edges: list[EdgeSpec] = []
    for parsed in parsed_files:
        if str(parsed.front.get("trust", "")).strip().lower() == "trusted" and not options.trusted:
            # The page is imported (untrusted): said as such, not under `skipped:`, which
            # read as "not imported" (explorer e29, m5). Once per file (--git-history).
            line = (
                f"{parsed.path}: imported; front matter trust: trusted ignored (imported text "
                "is untrusted unless the ingest command says --trusted)"
            )
            if line not in result.imported_notes:
                result.imported_notes.append(line)
        try:
            links = _resolve_links(parsed, index, result, holders)
            document = _document(parsed, options, source_id, links, recorded.get(parsed.id, []))
            for team in links[2]:
                edges.append(
                    EdgeSpec.model_validate(
                        {
                            "type": RelType.OWNS,
                            "from": team,
                            "to": parsed.id,
                            "acl": document.acl,
                            "source_id": source_id,
                            "source_version": parsed.source_version,
                            "valid_from": document.valid_from,
                            "valid_to": document.valid_to,
                            "method": "markdown-runbooks",
                        }
                    )
                )
        except ValidationError as exc:
            result.problems.append(
                BundleProblem(
                    origin=str(parsed.path), element=parsed.id, reason=validation_text(exc)
                )
            )
            continue
        except ValueError as exc:
            result.problems.append(
                BundleProblem(origin=str(parsed.path), element=parsed.id, reason=str(exc))
            )
            continue
        documents.append(document)
    if result.problems:
        return result
    try:
        result.source = import_source_spec(options, source_id, "markdown_runbooks")
        result.bundle = Bundle(tenant=options.tenant, documents=documents, edges=edges)
    except ValidationError as exc:
        result.problems.append(
            BundleProblem(origin=str(path), element="options", reason=validation_text(exc))
        )
    return result
