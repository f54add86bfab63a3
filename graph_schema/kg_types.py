"""The Knowledge Graph's type vocabulary: node labels, relationship types, typed properties.

Everything that may become a label or a relationship type in Neo4j is an entry of an enum
here; the bundle validator refuses anything else, so no text from a bundle ever reaches
Cypher structure. Per-type property models type the properties templates filter on (times
become Neo4j DateTime values); other properties are allowed but must be scalars or lists of
scalars.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any, TypeVar

from pydantic import AwareDatetime, BaseModel, ConfigDict


class NodeLabel(StrEnum):
    """Type labels of KG node records (every record also carries `:KG`)."""

    SERVICE = "Service"
    TEAM = "Team"
    PERSON = "Person"
    DEPLOYMENT = "Deployment"
    INCIDENT = "Incident"
    ALERT = "Alert"
    ERROR_CODE = "ErrorCode"
    CHANGE_EVENT = "ChangeEvent"
    TRACE = "Trace"
    # Written from the bundle's `documents`, `sources` and `principals` sections only.
    DOCUMENT = "Document"
    RUNBOOK = "Runbook"
    POLICY = "Policy"
    SOURCE = "Source"
    PRINCIPAL = "Principal"


# Labels a bundle's `nodes` section may use; the others have their own sections.
ENTITY_LABELS: frozenset[NodeLabel] = frozenset(
    {
        NodeLabel.SERVICE,
        NodeLabel.TEAM,
        NodeLabel.PERSON,
        NodeLabel.DEPLOYMENT,
        NodeLabel.INCIDENT,
        NodeLabel.ALERT,
        NodeLabel.ERROR_CODE,
        NodeLabel.CHANGE_EVENT,
        NodeLabel.TRACE,
    }
)

KG_LABEL = "KG"


class RelType(StrEnum):
    """Relationship types of KG edge records, with their usual direction."""

    DEPENDS_ON = "DEPENDS_ON"  # Service -> Service
    DEPLOYED_AS = "DEPLOYED_AS"  # Service -> Deployment
    DEPLOYED_TO = "DEPLOYED_TO"  # Deployment -> Service
    AFFECTED_BY = "AFFECTED_BY"  # Service -> Incident
    OWNS = "OWNS"  # Team -> Service | Runbook | Alert
    GOVERNED_BY = "GOVERNED_BY"  # Service -> Policy
    SUPERSEDES = "SUPERSEDES"  # Document(new) -> Document(old)
    APPLIES_TO = "APPLIES_TO"  # Runbook | Policy -> Service | Alert | ErrorCode
    TRIGGERED = "TRIGGERED"  # Alert -> Incident
    MENTIONS = "MENTIONS"  # Document -> any entity
    MEMBER_OF = "MEMBER_OF"  # Person -> Team
    EMITTED = "EMITTED"  # Service -> ErrorCode (first_seen, last_seen)
    CHANGED = "CHANGED"  # ChangeEvent -> Service (a config or rule change)
    OBSERVED_IN = "OBSERVED_IN"  # Trace -> Service | Incident
    FIRED_ON = "FIRED_ON"  # Alert -> Service (fired_at)


def per_rel_type(statement: str) -> dict[RelType, str]:
    """`statement` once per relationship type, its `REL_TYPE` placeholder replaced by the
    type's name: structure taken from this enum, never a value. A statement naming its type
    can use that type's (tenant, key) range index; a dynamic type cannot."""
    return {t: statement.replace("REL_TYPE", t.value) for t in RelType}


def for_rel_types(statement: str, types: Iterable[RelType]) -> str:
    """`statement` with its `REL_TYPE` placeholder replaced by `A|B|...` of `types` (sorted):
    Neo4j plans `[r:A|B]` with a (tenant, key) predicate as a union of each type's index
    seeks, one plan for all of them."""
    return statement.replace("REL_TYPE", "|".join(sorted(t.value for t in types)))


# Up to this many rows in all, a `RelTypeStatement` is sent once, naming every type of its
# rows: one plan instead of one per type (a plan costs 0.05-1 s after any index comes
# online, which empties Neo4j's plan cache). Each row then seeks every type it names (17k
# keys of 12 types: 2.0 s against 0.7 s per type), so more rows go per type.
ONE_STATEMENT_ROWS = 1000


Row = TypeVar("Row", bound=Mapping[str, Any])


class RelTypeStatement:
    """A statement with a `REL_TYPE` placeholder whose rows are grouped by type.

    The keys it looks up start with their type (`TYPE|...`; the bundle validator has always
    refused any other key, and only the writer writes them), so a key finds only records of
    its own type whichever types the statement names: both forms return the same records."""

    def __init__(self, statement: str) -> None:
        self.statement = statement
        self.per_type = per_rel_type(statement)

    def batches(self, rows_by_type: Mapping[RelType, Sequence[Row]]) -> list[tuple[str, list[Row]]]:
        """(statement, rows) pairs to send, types in order: one naming every type with rows
        when there are at most `ONE_STATEMENT_ROWS` rows in all, else one per type."""
        grouped = [(t, list(rows)) for t, rows in sorted(rows_by_type.items()) if rows]
        if len(grouped) > 1 and sum(len(rows) for _, rows in grouped) <= ONE_STATEMENT_ROWS:
            statement = for_rel_types(self.statement, (t for t, _ in grouped))
            return [(statement, [row for _, rows in grouped for row in rows])]
        return [(self.per_type[t], rows) for t, rows in grouped]


class DocumentKind(StrEnum):
    """Kinds of documents; `runbook` and `policy` also get the `:Runbook` / `:Policy` label."""

    RUNBOOK = "runbook"
    POLICY = "policy"
    INCIDENT_REPORT = "incident_report"
    POSTMORTEM = "postmortem"
    EMAIL = "email"
    TICKET = "ticket"
    CHAT = "chat"
    CHANGE_RECORD = "change_record"
    NOTE = "note"


DOCUMENT_KIND_LABELS: dict[DocumentKind, NodeLabel] = {
    DocumentKind.RUNBOOK: NodeLabel.RUNBOOK,
    DocumentKind.POLICY: NodeLabel.POLICY,
}


class EvidenceType(StrEnum):
    """The evidence types a record can support (docs/contracts.md section 2)."""

    ENTITY = "entity"
    DEPLOYMENT_TIME = "deployment_time"
    ERROR_FIRST_SEEN = "error_first_seen"
    AFFECTED_SERVICE = "affected_service"
    OWNERSHIP = "ownership"
    RUNBOOK = "runbook"
    MECHANISM = "mechanism"
    CHANGE_EVENT = "change_event"
    DEPENDENCY = "dependency"
    DEPENDENT = "dependent"  # a DEPENDS_ON record read into the service asked about
    INCIDENT_REPORT = "incident_report"
    ALERT_DEFINITION = "alert_definition"
    ALERT_FIRING = "alert_firing"  # a FIRED_ON record read for "which alerts fired?"
    TRACE = "trace"  # a Trace linked to an error, service or incident (traces_linked)
    POLICY = "policy"
    DOCUMENT = "document"


class Trust(StrEnum):
    """Whether a source's text may be treated as instructions-free fact (`trusted`)."""

    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"


# The entity records whose text an import writes from a file: they carry its trust (a record
# of such a method without one was written before trust was recorded: unknown, untrusted).
TRUST_RECORDING_METHODS = frozenset({"prometheus-rules"})


class RecordStatus(StrEnum):
    """`active` records are facts; `retracted` records are tombstones."""

    ACTIVE = "active"
    RETRACTED = "retracted"


# Property names every record carries itself; bundle `props` may not use them.
RESERVED_PROPERTIES: frozenset[str] = frozenset(
    {
        "id",
        "key",
        "version",
        "tenant",
        "acl",
        "purposes",
        "valid_from",
        "valid_to",
        "recorded_at",
        "superseded_at",
        "source_id",
        "source_version",
        "observed_at",
        "method",
        "confidence",
        "status",
        "content_hash",
        "text_hash",
        "redacted_text_hash",
        "search_text",
        "purged_at",
        "kind",
        "title",
        "content",
        "redacted_content",
        "locator",
        "trust",
        "supports",
        "labels",
        "retraction_reason",
        "retracted_at",
        "source_authority",
        "type",
    }
)

# Record fields an entity node (not a document) does not carry: its bundle `props` may use
# them as they are (an Incident's `title`).
DOCUMENT_ONLY_PROPERTIES: frozenset[str] = frozenset({"title"})

# Domain properties with a natural home among the typed properties of a label.
DOMAIN_ALIASES: dict[NodeLabel, dict[str, str]] = {
    NodeLabel.DEPLOYMENT: {"version": "release"},
}


def label_prefix(name: str) -> str:
    """`ChangeEvent` -> `change_event`, `DEPENDS_ON` -> `depends_on` (for mapped props)."""
    if name.isupper():
        return name.lower()
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def domain_property_name(owner: str, name: str, label: NodeLabel | None = None) -> str:
    """Where a domain property named `name` of a `owner` (label or relationship type) is
    stored: as it is, unless the record itself uses that name; then an alias of the label
    (a Deployment's `version` is its `release`), else `<owner>_<name>` (an Incident's
    `status` is `incident_status`)."""
    if name not in RESERVED_PROPERTIES:
        return name
    if label is not None and label is not NodeLabel.DOCUMENT and name in DOCUMENT_ONLY_PROPERTIES:
        return name
    if label is not None and name in DOMAIN_ALIASES.get(label, {}):
        return DOMAIN_ALIASES[label][name]
    return f"{label_prefix(owner)}_{name}"


# ACL labels, purposes, prop names: identifiers, never free text.
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
PROPERTY_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


class _Props(BaseModel):
    """Typed properties; extra properties are allowed (checked for scalar values elsewhere)."""

    # `tier: 1` means the text "1": numbers are taken where text is typed.
    model_config = ConfigDict(extra="allow", frozen=True, coerce_numbers_to_str=True)


class ServiceProps(_Props):
    """A running service (its `name` is the display name, never its identity)."""

    tier: str | None = None
    aliases: list[str] | None = None


class TeamProps(_Props):
    """An engineering team."""

    channel: str | None = None


class PersonProps(_Props):
    """A person (an engineer); a `Principal` is the person's access identity."""

    email: str | None = None


class DeploymentProps(_Props):
    """A release of a service; `finished_at` is the deployment_time evidence."""

    service: str | None = None
    release: str | None = None
    started_at: AwareDatetime | None = None
    finished_at: AwareDatetime | None = None
    outcome: str | None = None


class IncidentProps(_Props):
    """An incident with its time window."""

    severity: str | None = None
    started_at: AwareDatetime | None = None
    resolved_at: AwareDatetime | None = None
    summary: str | None = None


class AlertProps(_Props):
    """An alert rule (what fires), not one firing."""

    alertname: str | None = None
    severity: str | None = None
    expr: str | None = None
    summary: str | None = None


class ErrorCodeProps(_Props):
    """An application error code such as PAY-4097."""

    code: str | None = None
    description: str | None = None


class ChangeEventProps(_Props):
    """A change that is not a deployment: a config push, a rule publication, a flag flip."""

    change_type: str | None = None
    at: AwareDatetime | None = None
    actor: str | None = None
    summary: str | None = None


class TraceProps(_Props):
    """A distributed-trace finding (span evidence for a mechanism)."""

    trace_id: str | None = None
    started_at: AwareDatetime | None = None
    finding: str | None = None


NODE_PROPS_MODELS: dict[NodeLabel, type[_Props]] = {
    NodeLabel.SERVICE: ServiceProps,
    NodeLabel.TEAM: TeamProps,
    NodeLabel.PERSON: PersonProps,
    NodeLabel.DEPLOYMENT: DeploymentProps,
    NodeLabel.INCIDENT: IncidentProps,
    NodeLabel.ALERT: AlertProps,
    NodeLabel.ERROR_CODE: ErrorCodeProps,
    NodeLabel.CHANGE_EVENT: ChangeEventProps,
    NodeLabel.TRACE: TraceProps,
}


class EmittedProps(_Props):
    """A service emitted an error code: when first and last seen."""

    first_seen: AwareDatetime | None = None
    last_seen: AwareDatetime | None = None
    count: int | None = None


class FiredOnProps(_Props):
    """An alert fired on a service at `fired_at`."""

    fired_at: AwareDatetime | None = None


class ChangedProps(_Props):
    """A change event changed a service at `at`."""

    at: AwareDatetime | None = None


class AffectedByProps(_Props):
    """A service was affected by an incident from `since`."""

    since: AwareDatetime | None = None


REL_PROPS_MODELS: dict[RelType, type[_Props]] = {
    RelType.EMITTED: EmittedProps,
    RelType.FIRED_ON: FiredOnProps,
    RelType.CHANGED: ChangedProps,
    RelType.AFFECTED_BY: AffectedByProps,
}


def props_model_for_node(label: NodeLabel) -> type[_Props]:
    """The property model of a node label (a permissive one when the label has none)."""
    return NODE_PROPS_MODELS.get(label, _Props)


def props_model_for_rel(rel_type: RelType) -> type[_Props]:
    """The property model of a relationship type (a permissive one when it has none)."""
    return REL_PROPS_MODELS.get(rel_type, _Props)
