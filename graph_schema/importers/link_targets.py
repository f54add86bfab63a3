"""What an imported reference may point at, and how a reference is resolved to ids.

Importers link across sources: a Prometheus alert's `runbook_url` names a Markdown runbook,
a runbook's front matter names a service or an alert. Targets come from the import itself
and from the tenant's current KG records (read with one parameterized query), so the two
formats can be ingested in either order. Matching is by id, name, alias or file path,
case-insensitive; a reference that matches nothing is reported by the importer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from posixpath import basename, splitext
from urllib.parse import unquote, urlsplit

import neo4j
from pydantic import BaseModel, ConfigDict, Field

from graph_schema.alert_names import finding_types
from graph_schema.kg_types import NodeLabel

LINKABLE_LABELS = (
    NodeLabel.RUNBOOK,
    NodeLabel.ALERT,
    NodeLabel.SERVICE,
    NodeLabel.ERROR_CODE,
    NodeLabel.TEAM,
)

# Only current, active records of the tenant; labels are a fixed list, values parameters.
_TARGETS_QUERY = """
MATCH (n:KG)
WHERE n.tenant = $tenant AND n.status = 'active' AND n.superseded_at IS NULL
  AND (n:Runbook OR n:Alert OR n:Service OR n:ErrorCode OR n:Team)
RETURN n.id AS id, [l IN labels(n) WHERE l IN $labels][0] AS label, n.name AS name,
       n.path AS path, n.alertname AS alertname, n.code AS code, n.aliases AS aliases,
       n.source_id AS source_id, n.source_version AS version,
       CASE WHEN n:Runbook THEN n.section_locators END AS locators,
       [(m:KG)-[s:SUPERSEDES]->(n) WHERE s.superseded_at IS NULL AND m.superseded_at IS NULL
        | m.id] AS superseded_by,
       CASE WHEN n:Alert THEN
         [(r:KG:Runbook)-[a:APPLIES_TO]->(n) WHERE r.tenant = $tenant AND r.status = 'active'
          AND r.superseded_at IS NULL AND a.status = 'active' AND a.superseded_at IS NULL
          AND a.method = 'prometheus-rules' | r.id] END AS applied_by
ORDER BY id
"""


# What a static site generator (Middleman, Jekyll ...) adds to a page's file name around the
# page's own name: `alerts/RouterErrorRatioTooHigh.html.md.erb` is the page
# `alerts/RouterErrorRatioTooHigh` (published as `.../RouterErrorRatioTooHigh.html`).
MARKDOWN_SUFFIXES = (".md", ".markdown")
TEMPLATE_SUFFIXES = (".erb",)
PAGE_SUFFIXES = (".html", ".htm", ".xhtml", ".shtml", ".php")


def page_stem(path: str) -> str:
    """A Markdown file's path without its template, Markdown and page extensions:
    `a/X.html.md.erb`, `a/X.html.md` and `a/X.md` are all `a/X`."""
    stem = path
    for suffixes in (TEMPLATE_SUFFIXES, MARKDOWN_SUFFIXES, PAGE_SUFFIXES):
        for suffix in suffixes:
            if stem.lower().endswith(suffix) and len(stem) > len(suffix):
                stem = stem[: -len(suffix)]
                break
    return stem


class LinkTarget(BaseModel):
    """A record an imported reference may resolve to."""

    model_config = ConfigDict(frozen=True)

    id: str
    label: NodeLabel
    name: str | None = None
    path: str | None = None  # a runbook's file path relative to its import root
    keys: list[str] = Field(default_factory=list)  # extra names: alertname, code, aliases
    # Where the record came from, to tell a file moved with its bytes from a new one.
    source_id: str | None = None
    version: str | None = None  # its source_version (`sha256:...` of the file, `git:...`)
    superseded_by: list[str] = Field(default_factory=list)  # current records superseding it
    # A runbook's recorded `section_locators`: an anchor an older import wrote is kept.
    section_locators: list[str] = Field(default_factory=list)
    # An alert's: the runbooks its rule's runbook_url links (a look-alike must not take it).
    applied_by: list[str] = Field(default_factory=list)

    def match_keys(self) -> set[str]:
        """Every lower-cased text a reference may use to name this target."""
        keys = {self.id, *self.keys}
        if self.name:
            keys.add(self.name)
        if self.path:
            keys.add(self.path)
            stem = splitext(self.path)[0]
            keys.add(stem)
            keys.add(basename(stem))
            keys.add(page_stem(self.path))  # a URL or name without `.html` / `.md.erb`
            keys.add(basename(page_stem(self.path)))
        return {key.strip().lower() for key in keys if key and key.strip()}


class LinkIndex:
    """Targets by label, resolvable by any of their match keys."""

    def __init__(self, targets: Iterable[LinkTarget] = ()) -> None:
        self._by_label: dict[NodeLabel, dict[str, set[str]]] = {}
        for target in targets:
            self.add(target)

    def add(self, target: LinkTarget) -> None:
        """Make `target` resolvable."""
        keys = self._by_label.setdefault(target.label, {})
        for key in target.match_keys():
            keys.setdefault(key, set()).add(target.id)

    def resolve(self, label: NodeLabel, reference: str) -> list[str]:
        """Ids of `label` targets that `reference` names (sorted; empty when none)."""
        return sorted(self._by_label.get(label, {}).get(reference.strip().lower(), set()))

    def resolve_url(self, label: NodeLabel, url: str) -> list[str]:
        """Resolve a URL or path (e.g. a runbook_url) by its longest matching path suffix."""
        parts = urlsplit(url.strip())
        path = unquote(parts.path or "").strip("/")
        if parts.fragment and not path:
            path = parts.fragment
        if not path:
            return []
        segments = [s for s in path.split("/") if s]
        # Longest suffix first: `runbooks/kubernetes/kubepodcrashlooping` before its tail.
        for start in range(len(segments)):
            suffix = "/".join(segments[start:])
            for candidate in (suffix, splitext(suffix)[0]):
                found = self.resolve(label, candidate)
                if found:
                    return found
        return []


def url_page_name(url: str) -> str | None:
    """The name a runbook must have for `url` to link it: the last part of its path, without
    a page or Markdown extension (`.../mimir-runbooks/#anchor` -> `mimir-runbooks`)."""
    parts = urlsplit(url.strip())
    segments = [s for s in unquote(parts.path or "").split("/") if s]
    if not segments:
        return unquote(parts.fragment).strip() or None
    return page_stem(segments[-1]) or None


# Hosts of documents edited online, never files of a folder that an import reads.
_DOCUMENT_HOSTS = (
    "docs.google.com",
    "drive.google.com",
    "notion.so",
    "notion.site",
    "atlassian.net",
    "sharepoint.com",
    "quip.com",
    "dropbox.com",
)


def document_service(url: str) -> str | None:
    """The host of `url` when it is a document service (`docs.google.com`), else None."""
    host = (urlsplit(url.strip()).hostname or "").lower()
    if any(host == h or host.endswith(f".{h}") for h in _DOCUMENT_HOSTS):
        return host
    return None


def url_link_hint(url: str, key: str = "runbook_url") -> str:
    """How a rule's link annotation `key` (`runbook_url`, else the `documentation`,
    `runbook` or `playbook` it was read from) links a runbook, said for `url`: what the page
    must be named (or the URL must say) for the link to be made when the rules are ingested."""
    name = url_page_name(url)
    # Named as the import's unresolved line names the field (`annotations.documentation`).
    label = key if key == "runbook_url" or key.startswith("labels.") else f"annotations.{key}"
    link = f"{'an' if label[0] in 'aeiou' else 'a'} {label}"
    host = document_service(url)
    if host is not None:
        # A Google Doc's path ends in `edit` or its id: no file name to advise.
        return (
            f"{link} on {host} (a document service, no file of an import) links no imported "
            f"runbook: `investigator runbook --alert` shows it as the alert's external link, "
            "never fetched; for its steps on the card, import a Markdown copy of it with front "
            "matter `alerts: [<alert name>]`"
        )
    if name is None:
        return f"{link} links the runbook whose id, name or file path ends its path"
    finding = url_finding_type(url)
    if finding is not None:
        # `.../runbooks/CryptoCurrency:EC2/BitcoinTool.B!DNS`: its `/` is no folder's.
        filed = filed_finding_name(finding)
        return (
            f"{link} links the runbook whose id, name or file path (in its import folder, "
            f"extension aside) ends the URL's path: here it ends in the finding type "
            f"{finding!r}, whose `/` reads as a folder's; make {label} end with the page's "
            f"file name as AWS files it ({filed}, `:` `/` `.` `!` `&` as `-`), then re-ingest "
            f"the rules; meanwhile `investigator runbook --alert {finding}` finds the page by "
            "its heading"
        )
    return (
        f"{link} links the runbook whose id, name or file path (in its import folder, "
        f"extension aside) ends the URL's path: here {name!r}, a file {name}.md or a folder "
        f"{name}/ whose index page is the runbook; import the page under that name, or make "
        f"{label} end with the page's imported path, then re-ingest the rules"
    )


def filed_finding_name(finding: str) -> str:
    """A finding type's page name as AWS files it: `CryptoCurrency:EC2/BitcoinTool.B!DNS`
    -> `cryptocurrency-ec2-bitcointool-b-dns` (`Backdoor:EC2/C&CActivity.B`: `c-cactivity`)."""
    return re.sub(r"[^a-z0-9]+", "-", finding.casefold()).strip("-")


def url_finding_type(url: str) -> str | None:
    """The finding type that ends `url`'s path (`.../CryptoCurrency:EC2/BitcoinTool.B!DNS`),
    else None."""
    segments = [s for s in unquote(urlsplit(url.strip()).path or "").split("/") if s]
    tail = "/".join(segments[-2:])
    return tail if len(segments) >= 2 and finding_types(tail) == [tail] else None


def load_link_targets(
    driver: neo4j.Driver, tenant: str, database: str | None = None
) -> list[LinkTarget]:
    """The tenant's current runbooks, alerts, services, error codes and teams in the KG."""
    records, _, _ = driver.execute_query(
        _TARGETS_QUERY,
        tenant=tenant,
        labels=[label.value for label in LINKABLE_LABELS],
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    targets = []
    for record in records:
        if not record["id"] or not record["label"]:
            continue
        extra = [record["alertname"], record["code"], *(record["aliases"] or [])]
        targets.append(
            LinkTarget(
                id=str(record["id"]),
                label=NodeLabel(record["label"]),
                name=record["name"],
                path=record["path"],
                keys=[str(k) for k in extra if k],
                source_id=record["source_id"],
                version=record["version"],
                superseded_by=sorted(str(i) for i in record["superseded_by"] or [] if i),
                section_locators=[str(x) for x in record["locators"] or []],
                applied_by=sorted({str(i) for i in record["applied_by"] or [] if i}),
            )
        )
    return targets
