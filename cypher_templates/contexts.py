"""The `context` shape of each template's rows, declared beside the templates.

A row's `context` holds the ids (and instants) that tie its element to the question: the
service a deployment belongs to, the team of an OWNS edge, the anchor a runbook was found
through. The executor validates every row's context against its template's model here, so
a template that returns an undeclared key fails loudly instead of reaching a reader.

Only the keys a template returned are serialised (`model_dump`): the rows hash recorded
for replay, and the evidence built from rows, stay exactly what the template returned.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_serializer

# An instant as the template returned it: a zoned datetime (or ISO text, kept as text so
# that what is hashed stays what was returned).
Instant = AwareDatetime | str


class RowContext(BaseModel):
    """The base of every context shape (frozen; undeclared keys are refused)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_serializer(mode="wrap")
    def _returned_keys_only(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        return {k: data[k] for k in sorted(data) if k in self.model_fields_set}

    def get(self, key: str, default: Any = None) -> Any:
        """A returned key by name, for readers that scan several templates' ids at once."""
        if key in type(self).model_fields and key in self.model_fields_set:
            return getattr(self, key)
        return default

    def __getitem__(self, key: str) -> Any:
        if key in type(self).model_fields and key in self.model_fields_set:
            return getattr(self, key)
        raise KeyError(key)

    def items(self) -> list[tuple[str, Any]]:
        """The returned keys and their values (as `model_dump` holds them)."""
        return list(self.model_dump().items())

    def values(self) -> list[Any]:
        """The returned values."""
        return [value for _, value in self.items()]


class EntityContext(RowContext):
    """entity_resolution: how the text matched the entity."""

    match: str | None = None
    # entity_resolution 4: when the last import of the record's source did not have its rule
    # (an alert) or file.
    file_missing_since: Instant | None = None
    # entity_resolution 5: whether a visible runbook or policy is linked to the record, how
    # many records the text matched (the row cap may keep fewer) and how many are linked.
    linked: bool | None = None
    matches: int | None = None
    linked_matches: int | None = None


class EmptyContext(RowContext):
    """name_suggestions, name_prefixes (ranked text hits carry no context)."""


class TextHitContext(RowContext):
    """fulltext_search: a hit carries no context, but from version 4 a record that visible
    records of another document supersede (a file renamed or moved, re-imported) names
    them, sorted: the index still holds a record no longer current under its id."""

    renamed_to: list[str] | None = None


class OwnershipContext(RowContext):
    """ownership_over_time, ownership_in_period: the OWNS edge's service and team."""

    service: str | None = None
    team: str | None = None
    team_name: str | None = None


class OwnershipRecordContext(OwnershipContext):
    """ownership_records: an OWNS record's service and team, and when it was superseded."""

    superseded_at: Instant | None = None


class OwnerOfContext(RowContext):
    """owners_of: the alert or runbook owned and the team."""

    owned: str | None = None
    team: str | None = None
    team_name: str | None = None
    # From version 4 of owners_of and owned_by_team: 'service', 'alert' or 'runbook', and
    # the owned node's end (read as its owner's end for a runbook version only).
    owned_kind: str | None = None
    owned_until: Instant | None = None


class OwnerOfRecordContext(OwnerOfContext):
    """owners_of_records: an OWNS record's alert or runbook and team, and when it was
    superseded."""

    superseded_at: Instant | None = None


class OwnedByTeamContext(OwnerOfContext):
    """owned_by_team: what the team owns (a service, an alert or a runbook version), the team,
    and the team the question asked about (the answer is from its side)."""

    asked_team: str | None = None


class OwnedByTeamRecordContext(OwnedByTeamContext):
    """owned_by_team_records: an OWNS record out of the team asked about, and when it was
    superseded."""

    superseded_at: Instant | None = None


class DeploymentContext(RowContext):
    """deployments_in_window (and _tenant), latest_deployments, rollouts_under_way: the
    deployment and when it was deployed."""

    service: str | None = None
    deployment: str | None = None
    deployed_at: Instant | None = None


class IncidentContext(RowContext):
    """incident_context: one part of an incident (the incident, a service, an alert, a code)."""

    incident: str | None = None
    part: str | None = None
    service: str | None = None
    alert: str | None = None
    fired_at: Instant | None = None
    error_code: str | None = None
    code: str | None = None
    first_seen: Instant | None = None


class IncidentAtContext(RowContext):
    """incidents_at: an incident started by the time asked about, and whether still open."""

    incident: str | None = None
    started_at: Instant | None = None
    resolved_at: Instant | None = None
    open: bool | None = None


class IncidentInPeriodContext(RowContext):
    """incidents_in_period: an incident open in the period, and the services it affected."""

    incident: str | None = None
    started_at: Instant | None = None
    resolved_at: Instant | None = None
    services: list[str] | None = None


class AlertFiringInPeriodContext(RowContext):
    """alert_firings_in_period: a firing in the period, its alert, service, start and end."""

    alert: str | None = None
    service: str | None = None
    fired_at: Instant | None = None
    ended_at: Instant | None = None


class TraceLinkedContext(RowContext):
    """traces_linked: the element a trace is linked to, the link's type and key, its start."""

    anchor: str | None = None
    link: str | None = None
    link_key: str | None = None
    started_at: Instant | None = None


class RunbookContext(RowContext):
    """runbooks_for: the anchor the runbook applies to and the link it was found through."""

    anchor: str | None = None
    anchor_type: str | None = None
    linked_via: list[str] = Field(default_factory=list)  # runbooks_for: collect(type(l))
    # runbooks_for 4: when the last import of the record's source did not have its file.
    file_missing_since: Instant | None = None
    # runbooks_for 5: why that import, which had the file, could not read it.
    file_unreadable: str | None = None


class ChangeEventContext(RowContext):
    """change_events_in_window: the change and when it happened."""

    service: str | None = None
    change_event: str | None = None
    at: Instant | None = None


class NeighbourhoodContext(RowContext):
    """dependency_neighbourhood: the walk from `start` to `neighbour`."""

    start: str | None = None
    neighbour: str | None = None
    hops: int | None = None
    path: list[str] | None = None


class DocumentContext(RowContext):
    """documents_about: the entity the document is about and the link."""

    entity: str | None = None
    via: list[str] | None = None


class RetractionContext(RowContext):
    """retractions_in_period: a tombstone's edge key and endpoints, when the retraction was
    recorded, and when a later record of the edge known at known_at superseded it (null:
    none)."""

    key: str | None = None
    from_id: str | None = None
    to_id: str | None = None
    retracted_at: Instant | None = None
    superseded_at: Instant | None = None


class VersionContext(RowContext):
    """version_history: the record's id and when it was superseded."""

    id: str | None = None
    superseded_at: Instant | None = None


class OpenContext(RowContext):
    """A template that declares no shape yet: any keys (kept as returned)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    @model_serializer(mode="wrap")
    def _returned_keys_only(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        return {k: data[k] for k in sorted(data)}

    def get(self, key: str, default: Any = None) -> Any:
        """A returned key by name."""
        return (self.model_extra or {}).get(key, default)

    def __getitem__(self, key: str) -> Any:
        return (self.model_extra or {})[key]


CONTEXT_SHAPES: dict[str, type[RowContext]] = {
    "entity_resolution": EntityContext,
    "fulltext_search": TextHitContext,
    "name_suggestions": EmptyContext,
    "name_prefixes": EmptyContext,
    "latest_deployments": DeploymentContext,
    "latest_deployments_tenant": DeploymentContext,
    "rollouts_under_way": DeploymentContext,
    "rollouts_under_way_tenant": DeploymentContext,
    "ownership_over_time": OwnershipContext,
    "ownership_in_period": OwnershipContext,
    "ownership_records": OwnershipRecordContext,
    "owners_of": OwnerOfContext,
    "owned_by_team": OwnedByTeamContext,
    "owned_by_team_records": OwnedByTeamRecordContext,
    "owners_of_records": OwnerOfRecordContext,
    "deployments_in_window": DeploymentContext,
    "deployments_in_window_tenant": DeploymentContext,
    "incident_context": IncidentContext,
    "incidents_at": IncidentAtContext,
    "incidents_in_period": IncidentInPeriodContext,
    "alert_firings_in_period": AlertFiringInPeriodContext,
    "traces_linked": TraceLinkedContext,
    "runbooks_for": RunbookContext,
    "runbook_version_at": RunbookContext,
    "change_events_in_window": ChangeEventContext,
    "dependency_neighbourhood": NeighbourhoodContext,
    "documents_about": DocumentContext,
    "version_history": VersionContext,
    "retractions_in_period": RetractionContext,
}


def context_shape(template_id: str) -> type[RowContext]:
    """The declared context model of a template (`OpenContext` if it declares none)."""
    return CONTEXT_SHAPES.get(template_id, OpenContext)


@cache
def instant_fields(shape: type[RowContext]) -> frozenset[str]:
    """The keys a shape declares as `Instant`: those an `epoch_micros` template version
    returns as `{us: n}` when they hold a zoned UTC time (cypher_templates/executor.py)."""
    return frozenset(
        name for name, field in shape.model_fields.items() if field.annotation == Instant | None
    )
