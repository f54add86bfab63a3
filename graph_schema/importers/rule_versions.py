"""A re-imported alert rule keeps the `source_version` it was last changed in.

A rule file's `source_version` is the file's (its git commit, or the sha256 of its bytes), and
it is part of each record's `content_hash`: stamped on every rule of the file, an edit of one
rule (or one rule removed) made every other alert, and its APPLIES_TO edges, a new version
whose only difference was that version, burying the real change in the history. So a rule
whose own content (name and the properties the importer reads from it) equals its current
record's keeps that record's `source_version`: the writer then finds it unchanged. A changed
or new rule gets the file's. A store imported before this keeps its records: on its next
import an unchanged rule keeps the whole-file version it was written with, and only the
rules that changed get new versions.
"""

from __future__ import annotations

from typing import Any

import neo4j
from pydantic import BaseModel, ConfigDict

from graph_schema.bundle import Bundle
from graph_schema.kg_types import RecordStatus

# What an alert record holds from its rule (prometheus_rules._alert_node), beside its name.
RULE_PROPERTIES = (
    "alertname",
    "expr",
    "group",
    "rule_file",
    "labels_json",
    "annotations_json",
    "for_duration",
    "keep_firing_for",
    "severity",
    "summary",
    "description",
    "runbook_url",
    "runbook_url_annotation",
)

# The current active alerts of the import's sources in the tenant, with their rule's content.
_CURRENT_ALERTS = (
    "MATCH (n:KG:Alert {tenant: $tenant}) WHERE n.source_id IN $sources "
    "AND n.superseded_at IS NULL AND n.status = $active "
    "RETURN n.id AS id, n.source_version AS version, n.name AS name, "
    "[p IN $properties | n[p]] AS rule"
)


class CurrentRule(BaseModel):
    """An alert's current record: the version it was imported from and its rule's content."""

    model_config = ConfigDict(frozen=True)

    id: str
    source_version: str | None
    content: tuple[Any, ...]  # name, then RULE_PROPERTIES in order (None when absent)


def rule_content(name: str | None, props: dict[str, Any]) -> tuple[Any, ...]:
    """What of a record comes from its rule: its name and RULE_PROPERTIES (None if absent)."""
    return (name, *(props.get(p) for p in RULE_PROPERTIES))


def current_rules(
    driver: neo4j.Driver, bundle: Bundle, database: str | None = None
) -> dict[str, CurrentRule]:
    """The current alert records of the sources of `bundle`'s alerts, by id."""
    sources = sorted({n.source_id for n in bundle.nodes if n.source_id})
    if not sources:
        return {}
    records, _, _ = driver.execute_query(
        _CURRENT_ALERTS,
        tenant=bundle.tenant,
        sources=sources,
        active=RecordStatus.ACTIVE.value,
        properties=list(RULE_PROPERTIES),
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    return {
        str(r["id"]): CurrentRule(
            id=str(r["id"]),
            source_version=r["version"],
            content=(r["name"], *r["rule"]),
        )
        for r in records
    }


def keep_unchanged_versions(bundle: Bundle, current: dict[str, CurrentRule]) -> Bundle:
    """`bundle` with each alert whose rule is unchanged since its current record carrying that
    record's `source_version`, and so do the APPLIES_TO edges of each alert whose runbook_url
    is unchanged (the link it states is the same, whatever else of the rule changed)."""
    kept: dict[str, str] = {}
    linked: dict[str, str] = {}  # alerts whose runbook_url, so their link, is unchanged
    url = 1 + RULE_PROPERTIES.index("runbook_url")
    for node in bundle.nodes:
        record = current.get(node.id)
        if record is None or record.source_version is None:
            continue
        content = rule_content(node.name, node.props)
        if record.content == content:
            kept[node.id] = record.source_version
        if record.content[url] == content[url]:
            linked[node.id] = record.source_version
    if not linked:
        return bundle
    nodes = [
        n.model_copy(update={"source_version": kept[n.id]}) if n.id in kept else n
        for n in bundle.nodes
    ]
    edges = [
        e.model_copy(update={"source_version": linked[e.to]}) if e.to in linked else e
        for e in bundle.edges
    ]
    return bundle.model_copy(update={"nodes": nodes, "edges": edges})


def changed_rules(bundle: Bundle, current: dict[str, CurrentRule]) -> dict[str, list[str]]:
    """The alert ids of a re-import by kind: `changed` (their rule differs from the current
    record's), `new` (no current record) and `removed` (a current record of the source the
    import did not have: it stays current, nothing is retracted). Empty on a first import."""
    if not current:
        return {"changed": [], "new": [], "removed": []}
    ids = {n.id for n in bundle.nodes}
    changed = [
        n.id
        for n in bundle.nodes
        if n.id in current and current[n.id].content != rule_content(n.name, n.props)
    ]
    return {
        "changed": sorted(changed),
        "new": sorted(ids - set(current)),
        "removed": sorted(set(current) - ids),
    }
