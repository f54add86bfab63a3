"""Constraints and indexes of the Knowledge Graph, applied idempotently.

Every statement is a constant (labels and relationship types come from the enums of
`graph_schema.kg_types`), so nothing from a user or a bundle reaches schema DDL.
"""

from __future__ import annotations

import neo4j
from pydantic import BaseModel

from graph_schema.kg_types import NodeLabel, RelType

FULLTEXT_INDEX = "kg_fulltext"


class SchemaItem(BaseModel):
    """One named constraint or index and the statement that creates it."""

    name: str
    kind: str  # "constraint" | "range index" | "fulltext index"
    statement: str


class SchemaReport(BaseModel):
    """What `apply_schema` did: the names it created and the names already present."""

    created: list[str]
    present: list[str]


# Schema DDL cannot take parameters, so its text is assembled here; every name, label and
# property below is a module constant or a NodeLabel/RelType member, never user input.
def _node_range(name: str, label: str, props: tuple[str, ...]) -> SchemaItem:
    on = ", ".join(f"n.{p}" for p in props)
    return SchemaItem(
        name=name,
        kind="range index",
        statement=f"CREATE RANGE INDEX {name} IF NOT EXISTS FOR (n:{label}) ON ({on})",
    )


def _rel_range(name: str, rel_type: RelType, props: tuple[str, ...]) -> SchemaItem:
    on = ", ".join(f"r.{p}" for p in props)
    return SchemaItem(
        name=name,
        kind="range index",
        statement=(
            f"CREATE RANGE INDEX {name} IF NOT EXISTS FOR ()-[r:{rel_type.value}]-() ON ({on})"
        ),
    )


def schema_items() -> list[SchemaItem]:
    """All constraints and indexes, in the order they are applied."""
    items = [
        SchemaItem(
            name="kg_record_identity",
            kind="constraint",
            statement=(
                "CREATE CONSTRAINT kg_record_identity IF NOT EXISTS "
                "FOR (n:KG) REQUIRE (n.tenant, n.id, n.version) IS UNIQUE"
            ),
        ),
        # Lookups of an id's current record (ingest, planner entity resolution).
        _node_range("kg_tenant_id", "KG", ("tenant", "id")),
        _node_range("kg_id", "KG", ("id",)),
        _node_range("kg_name", "KG", ("name",)),
        _node_range("kg_source_id", "KG", ("source_id",)),
        # The visibility predicate and temporal filters of templates.
        _node_range("kg_recorded_at", "KG", ("recorded_at",)),
        _node_range("kg_superseded_at", "KG", ("superseded_at",)),
        _node_range("kg_valid_from", "KG", ("valid_from",)),
        _node_range("kg_valid_to", "KG", ("valid_to",)),
        _node_range("kg_status", "KG", ("status",)),
        # Exact lookups by business codes.
        _node_range("kg_error_code", NodeLabel.ERROR_CODE.value, ("code",)),
        _node_range("kg_alertname", NodeLabel.ALERT.value, ("alertname",)),
        _node_range("kg_deployment_finished_at", NodeLabel.DEPLOYMENT.value, ("finished_at",)),
        _node_range("kg_change_event_at", NodeLabel.CHANGE_EVENT.value, ("at",)),
        _node_range("kg_document_kind", NodeLabel.DOCUMENT.value, ("kind",)),
        _node_range("kg_principal", NodeLabel.PRINCIPAL.value, ("tenant", "id")),
    ]
    for rel_type in RelType:
        lower = rel_type.value.lower()
        items.append(_rel_range(f"kg_rel_{lower}_key", rel_type, ("tenant", "key")))
        items.append(_rel_range(f"kg_rel_{lower}_valid_from", rel_type, ("valid_from",)))
    items.append(_rel_range("kg_rel_emitted_first_seen", RelType.EMITTED, ("first_seen",)))
    items.append(_rel_range("kg_rel_fired_on_fired_at", RelType.FIRED_ON, ("fired_at",)))
    items.append(
        SchemaItem(
            name=FULLTEXT_INDEX,
            kind="fulltext index",
            statement=(
                f"CREATE FULLTEXT INDEX {FULLTEXT_INDEX} IF NOT EXISTS "
                "FOR (n:KG) ON EACH [n.search_text, n.name, n.title]"
            ),
        )
    )
    return items


def _existing_names(driver: neo4j.Driver, database: str | None) -> set[str]:
    names: set[str] = set()
    for query in ("SHOW CONSTRAINTS YIELD name", "SHOW INDEXES YIELD name"):
        records, _, _ = driver.execute_query(query, database_=database)
        names.update(str(r["name"]) for r in records)
    return names


def apply_schema(driver: neo4j.Driver, database: str | None = None) -> SchemaReport:
    """Create every missing constraint and index, wait for them to come online.

    Idempotent: a second call creates nothing and reports every item as present.
    """
    before = _existing_names(driver, database)
    for item in schema_items():
        if item.name not in before:
            driver.execute_query(item.statement, database_=database)
    driver.execute_query("CALL db.awaitIndexes(300)", database_=database)
    after = _existing_names(driver, database)
    names = [item.name for item in schema_items()]
    created = [n for n in names if n not in before and n in after]
    # An equivalent index under another name makes IF NOT EXISTS a no-op: still "present".
    present = [n for n in names if n not in created]
    return SchemaReport(created=created, present=present)
