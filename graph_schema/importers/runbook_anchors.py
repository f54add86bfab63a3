"""Alerts whose `runbook_url` anchor a re-import of their runbook leaves pointing at nothing,
or names no section of it from the first link (`unnamed_anchors`).

An alert's `runbook_url` (`.../mimir-runbooks/#mimiringesterunhealthy`) links the page by its
path and the section by its anchor. A re-import of the page that renames or removes that
section (`### MimirIngesterUnhealthy` -> `### MimirIngestersUnhealthy`) keeps the link, and
the card then shows the page's opening text: the import names each such alert, with the
heading spelled like the old one when there is one, so the page or the rule gets fixed.
Only anchors that named a section of the current record and name none of the new text are
reported (an anchor that never resolved is not news on every re-import).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

import neo4j
from pydantic import BaseModel, ConfigDict

from graph_schema.bundle import Bundle, DocumentSpec
from graph_schema.importers.markdown_sections import close_headings, names_section
from graph_schema.kg_types import NodeLabel, RecordStatus

# The current runbooks of the import's sources, and the alerts linked to them whose
# runbook_url has an anchor; only current, active records and links.
_LINKED_ANCHORS = (
    "MATCH (r:KG:Document {tenant: $tenant})-[l:APPLIES_TO]->(a:KG:Alert {tenant: $tenant}) "
    "WHERE r.id IN $ids AND r.superseded_at IS NULL AND r.status = $active "
    "AND l.superseded_at IS NULL AND l.status = $active "
    "AND a.superseded_at IS NULL AND a.status = $active AND a.runbook_url CONTAINS '#' "
    "RETURN DISTINCT r.id AS runbook, r.section_titles AS titles, "
    "r.section_locators AS locators, a.id AS alert, a.runbook_url AS url "
    "ORDER BY alert, runbook"
)


class LostAnchor(BaseModel):
    """An alert whose runbook_url anchor named a section the new text no longer has."""

    model_config = ConfigDict(frozen=True)

    alert: str
    anchor: str
    locator: str  # the runbook's file
    close: list[str]  # headings spelled like the anchor, best first

    def line(self) -> str:
        """One line for the ingest output."""
        hint = f" (did you mean {' or '.join(self.close)}?)" if self.close else ""
        return (
            f"{self.alert}: runbook_url anchor '#{self.anchor}' names no section of "
            f"{self.locator} any more{hint}"
        )


def _anchors_of(locators: Any) -> list[str]:
    return [str(loc).rpartition("#")[2] for loc in locators or [] if "#" in str(loc)]


def lost_anchors(
    driver: neo4j.Driver, bundle: Bundle, database: str | None = None
) -> list[LostAnchor]:
    """The alerts linked to a runbook of `bundle` (by its current record) whose runbook_url
    anchor names a section of that record and none of the bundle's new text."""
    documents = {d.id: d for d in bundle.documents}
    if not documents:
        return []
    records, _, _ = driver.execute_query(
        _LINKED_ANCHORS,
        tenant=bundle.tenant,
        ids=sorted(documents),
        active=RecordStatus.ACTIVE.value,
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    newest = _newest_new_versions(driver, bundle, database)
    lost = []
    seen: set[tuple[str, str]] = set()
    for record in records:
        anchor = unquote(urlsplit(str(record["url"]).strip()).fragment).strip()
        before = [str(t) for t in record["titles"] or []]
        if not anchor or not names_section(anchor, before, _anchors_of(record["locators"])):
            continue  # it named no section before this import either
        # A git history's page: the new text is its newest version this import adds.
        document = newest.get(str(record["runbook"])) or documents[str(record["runbook"])]
        if (str(record["alert"]), document.id) in seen:
            continue  # an alert linked to several versions of the page is named once
        seen.add((str(record["alert"]), document.id))
        titles = [str(t) for t in document.props.get("section_titles") or []]
        if names_section(anchor, titles, _anchors_of(document.props.get("section_locators"))):
            continue
        lost.append(
            LostAnchor(
                alert=str(record["alert"]),
                anchor=anchor,
                locator=str(document.locator or document.id),
                close=close_headings([anchor, *_alert_name(record["alert"])], titles),
            )
        )
    return lost


# Which of the import's documents already have a record in the tenant.
_EXISTING_DOCUMENTS = (
    "MATCH (r:KG:Document {tenant: $tenant}) WHERE r.id IN $ids RETURN DISTINCT r.id AS id"
)


def _newest_new_versions(
    driver: neo4j.Driver, bundle: Bundle, database: str | None
) -> dict[str, DocumentSpec]:
    """For each recorded version of a page whose chain this import extends with versions of
    its own id (`--git-history`: a commit is a new id superseding the one before), the
    newest version of that chain, when the import adds it; re-importing a history already
    recorded adds none (its lost anchors were said when the commit was imported)."""
    successor = {d.supersedes: d for d in bundle.documents if d.supersedes}
    if not successor:
        return {}
    records, _, _ = driver.execute_query(
        _EXISTING_DOCUMENTS,
        tenant=bundle.tenant,
        ids=sorted(d.id for d in bundle.documents),
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    existing = {str(r["id"]) for r in records}
    newest: dict[str, DocumentSpec] = {}
    for start in sorted(existing & set(successor)):
        last, steps = successor[start], 0
        while last.id in successor and steps < len(bundle.documents):
            last, steps = successor[last.id], steps + 1
        if last.id not in existing:
            newest[start] = last
    return newest


def _alert_name(alert_id: Any) -> list[str]:
    """The alert's name from its id (`alert:MimirX@critical` -> MimirX): a heading may be
    spelled like the name rather than the anchor."""
    return [str(alert_id).split(":", 1)[-1].split("@", 1)[0]]


# The current runbooks a rules import links, with their sections.
_RUNBOOK_SECTIONS = (
    "MATCH (r:KG:Document {tenant: $tenant}) WHERE r.id IN $ids AND r.superseded_at IS NULL "
    "AND r.status = $active "
    "RETURN r.id AS id, r.locator AS locator, r.section_titles AS titles, "
    "r.section_locators AS locators, r.valid_from AS valid_from ORDER BY id"
)


class UnnamedAnchor(BaseModel):
    """An alert a rules import links to a page whose runbook_url anchor names no section of
    it (a Sphinx `#id2`, a heading renamed before the rules were written)."""

    model_config = ConfigDict(frozen=True)

    alert: str
    anchor: str
    locator: str  # the runbook's file
    close: list[str]

    def line(self) -> str:
        """One line for the ingest output."""
        hint = f" (did you mean {' or '.join(self.close)}?)" if self.close else ""
        return (
            f"{self.alert}: runbook_url anchor '#{self.anchor}' names no section of "
            f"{self.locator}{hint}"
        )


def unnamed_anchors(
    driver: neo4j.Driver,
    bundle: Bundle,
    linked: list[tuple[str, str]],
    database: str | None = None,
) -> list[UnnamedAnchor]:
    """Of the links (runbook id, alert id) an import of `bundle`'s rules makes for the first
    time, those whose alert's runbook_url anchor names no section of the runbook's current
    record (a page without sections is never asked about: its anchor is the page's)."""
    urls = {
        n.id: str(n.props.get("runbook_url") or "")
        for n in bundle.nodes
        if n.label == NodeLabel.ALERT
    }
    wanted = [
        (runbook, alert, anchor)
        for runbook, alert in linked
        if (anchor := unquote(urlsplit(urls.get(alert, "").strip()).fragment).strip())
    ]
    if not wanted:
        return []
    records, _, _ = driver.execute_query(
        _RUNBOOK_SECTIONS,
        tenant=bundle.tenant,
        ids=sorted({runbook for runbook, _, _ in wanted}),
        active=RecordStatus.ACTIVE.value,
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    pages = {str(r["id"]): r for r in records if r["titles"]}
    # Of a page's versions (a git history's), the newest is asked: an old version lacking
    # today's section is expected, and each alert is counted once, not once per version.
    newest: dict[str, tuple[bool, Any, str]] = {}
    for r in records:
        key = (r["valid_from"] is not None, r["valid_from"], str(r["id"]))
        page_id = str(r["id"]).split("@", 1)[0]
        if page_id not in newest or key > newest[page_id]:
            newest[page_id] = key
    current = {rank[2] for rank in newest.values()}
    found = []
    for runbook, alert, anchor in wanted:
        page = pages.get(runbook)
        if page is None or runbook not in current:
            continue
        titles = [str(t) for t in page["titles"]]
        if names_section(anchor, titles, _anchors_of(page["locators"])):
            continue
        found.append(
            UnnamedAnchor(
                alert=alert,
                anchor=anchor,
                locator=str(page["locator"] or runbook).partition("#")[0],
                close=close_headings([anchor, *_alert_name(alert)], titles),
            )
        )
    return found
