"""Alerts whose `runbook_url` anchor a re-import of their runbook leaves pointing at nothing.

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

from graph_schema.bundle import Bundle
from graph_schema.importers.markdown_sections import close_headings, names_section
from graph_schema.kg_types import RecordStatus

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
    lost = []
    for record in records:
        anchor = unquote(urlsplit(str(record["url"]).strip()).fragment).strip()
        before = [str(t) for t in record["titles"] or []]
        if not anchor or not names_section(anchor, before, _anchors_of(record["locators"])):
            continue  # it named no section before this import either
        document = documents[str(record["runbook"])]
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


def _alert_name(alert_id: Any) -> list[str]:
    """The alert's name from its id (`alert:MimirX@critical` -> MimirX): a heading may be
    spelled like the name rather than the anchor."""
    return [str(alert_id).split(":", 1)[-1].split("@", 1)[0]]
