"""The bundle format (docs/design.md section 10): pydantic models and the file/folder loader.

Public API:

- `Bundle` and its element models (`SourceSpec`, `PrincipalSpec`, `NodeSpec`, `EdgeSpec`,
  `DocumentSpec`, `RetractionSpec`): what importers build and hand to the writer.
- `load_bundle(path) -> LoadedBundle`: read a YAML/JSON file or a folder of them; every
  problem (unreadable file, bad type, time without a zone ...) is collected, not raised;
  a file or folder over `MAX_INPUT_BYTES` raises `InputTooLarge` before it is read.
- `LoadedBundle.from_bundles(...)`: wrap bundles an importer built in memory.
- `BundleProblem`: one `file: element: reason` line.

Semantic checks across files (dangling references, duplicate ids) live in
`graph_schema.validate`; writing lives in `graph_schema.writer`.
"""

from __future__ import annotations

import functools
import json
import math
import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from graph_schema.collector import cyclic_gc_paused
from graph_schema.kg_types import (
    DOCUMENT_KIND_LABELS,
    DOCUMENT_ONLY_PROPERTIES,
    ENTITY_LABELS,
    IDENTIFIER,
    PROPERTY_NAME,
    RESERVED_PROPERTIES,
    DocumentKind,
    EvidenceType,
    NodeLabel,
    RelType,
    Trust,
    domain_property_name,
    props_model_for_node,
    props_model_for_rel,
)
from graph_schema.local_files import check_input_size, read_local_file
from graph_schema.look_alikes import invisible_characters
from graph_schema.schema_ddl import range_indexed

BUNDLE_SUFFIXES = (".yaml", ".yml", ".json")
MAX_ID_LENGTH = 200
# Neo4j 5.26 refuses to index a key over 8,164 bytes ("Property value is too large to
# index", measured on the server); a composite key adds a few bytes per value and the tenant
# (at most 64). Half of it bounds every range-indexed value (schema_ddl.range_indexed).
MAX_INDEXED_BYTES = 4096
# A document's text (content, redacted_content), in UTF-8 bytes: the bound a Markdown
# runbook file has (importers/markdown_runbooks.py), so that no way in stores a larger text
# for one tenant's fulltext index and every search to carry.
MAX_DOCUMENT_BYTES = 2_000_000
# What one ingest reads whole (a bundle file, or a folder's files together), checked before a
# byte is read: 3.5 times the generated 101k-element bundle (28.1 MB of JSON, 550 MiB of peak
# memory to load and ingest); `investigator ingest --max-bytes` raises it.
MAX_INPUT_BYTES = 100_000_000


def _require_zone(value: Any) -> Any:
    # Only ISO-8601 text or datetime objects: a bare number is not a time anyone meant.
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"time without a zone: {value.isoformat()}")
        return _in_utc_range(value)
    if not isinstance(value, str):
        raise ValueError(f"expected an ISO-8601 time with a zone, got {type(value).__name__}")
    text = value.strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError as exc:
        raise ValueError(f"not an ISO-8601 time: {value!r}") from exc
    if parsed.tzinfo is None:
        raise ValueError(f"time without a zone: {value!r}")
    return _in_utc_range(parsed)


def _in_utc_range(value: datetime) -> datetime:
    # 0001-01-01T00:00+14:00 is a valid ISO time but has no UTC equivalent in Python.
    try:
        return value.astimezone(UTC)
    except OverflowError as exc:
        raise ValueError(f"time out of range once in UTC: {value.isoformat()}") from exc


def _to_utc(value: datetime) -> datetime:
    return value.astimezone(UTC)


ZonedDatetime = Annotated[datetime, BeforeValidator(_require_zone), AfterValidator(_to_utc)]
"""A timezone-aware datetime, normalised to UTC; text without a zone is refused."""


def _check_identifier(value: str, what: str) -> str:
    if not IDENTIFIER.match(value):
        raise ValueError(f"{what} {value!r} is not an identifier ([A-Za-z_][A-Za-z0-9_.-]*)")
    return value


def _check_element_id(value: str) -> str:
    if not value or len(value) > MAX_ID_LENGTH:
        raise ValueError(f"id must be 1..{MAX_ID_LENGTH} characters")
    if any(ch.isspace() or ord(ch) < 32 for ch in value):
        raise ValueError(f"id {value!r} contains whitespace or control characters")
    return value


ElementId = Annotated[str, AfterValidator(_check_element_id)]
Scalar = str | int | float | bool


def _check_labels(values: list[str] | None, what: str) -> list[str] | None:
    if values is None:
        return None
    for value in values:
        _check_identifier(value, what)
    return sorted(set(values))


_INT64 = (-(2**63), 2**63 - 1)


def _check_scalar(name: str, value: Any) -> None:
    # Values Neo4j cannot store, or canonical JSON cannot hash, are bundle problems.
    if isinstance(value, bool):
        return
    if isinstance(value, int) and not _INT64[0] <= value <= _INT64[1]:
        raise ValueError(f"property {name!r} holds an integer beyond 64 bits")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"property {name!r} holds {value!r}; numbers must be finite")


def _map_props(props: dict[str, Any], owner: str, label: NodeLabel | None = None) -> dict[str, Any]:
    """Domain property names that the record itself uses, moved out of its way."""
    if not any(isinstance(k, str) and k in RESERVED_PROPERTIES for k in props):
        return props
    out: dict[str, Any] = {}
    for name, value in props.items():
        stored = domain_property_name(owner, name, label) if isinstance(name, str) else name
        if stored in out or (stored != name and stored in props):
            raise ValueError(f"property {name!r} is stored as {stored!r}, which is also given")
        out[stored] = value
    return out


def _check_props(
    props: dict[str, Any], model: type[BaseModel], free: frozenset[str] = frozenset()
) -> dict[str, Any]:
    for name, value in props.items():
        for item in value if isinstance(value, list) else [value]:
            _check_scalar(name, item)
        if not isinstance(name, str) or not PROPERTY_NAME.match(name):
            raise ValueError(f"property name {name!r} is not a lower_snake_case identifier")
        if name in RESERVED_PROPERTIES and name not in free:
            raise ValueError(f"property name {name!r} is reserved for the record itself")
        if isinstance(value, dict):
            raise ValueError(f"property {name!r} is a map; values must be scalars or lists")
        if isinstance(value, list):
            for item in value:
                if isinstance(item, dict | list) or item is None:
                    raise ValueError(
                        f"property {name!r} holds a {type(item).__name__}; lists hold scalars"
                    )
            if len({type(item) for item in value}) > 1:
                raise ValueError(f"property {name!r} mixes types in one list (Neo4j refuses)")
        elif isinstance(value, datetime):
            # In-memory bundles (importers, the generator) may hand datetimes directly.
            if value.tzinfo is None or value.utcoffset() is None:
                raise ValueError(f"property {name!r} is a time without a zone")
        elif value is not None and not isinstance(value, Scalar):
            raise ValueError(f"property {name!r} has an unsupported {type(value).__name__}")
    typed = model.model_validate(props)
    try:
        out = {k: _to_utc(v) if isinstance(v, datetime) else v for k, v in props.items()}
    except OverflowError as exc:
        raise ValueError("a property time is out of range once in UTC") from exc
    # Typed fields replace their raw value (times become UTC datetimes).
    for field_name in type(typed).model_fields:
        if field_name in props:
            value = getattr(typed, field_name)
            out[field_name] = _in_utc_range(value) if isinstance(value, datetime) else value
    return out


def _indexed_size(value: Any) -> int:
    # UTF-8 bytes of text (a list: its items and a little per item); other values are small.
    if isinstance(value, str):
        return len(value) if len(value) * 4 <= MAX_INDEXED_BYTES else len(value.encode("utf-8"))
    if isinstance(value, list):
        return sum(_indexed_size(item) + 2 for item in value)
    return 8


@functools.cache
def _indexed_names(targets: tuple[str, ...]) -> tuple[str, ...]:
    indexed = range_indexed()
    return tuple(sorted({name for target in targets for name in indexed.get(target, ())}))


def _check_indexed(
    stored: dict[str, Any], targets: tuple[str, ...], called: dict[str, str] | None = None
) -> None:
    """Refuse a value of a range-indexed property (of any of `targets`, a record's labels or
    relationship type) that Neo4j could not index: found here, before anything is written,
    not as a database error half way through an ingest. `called`: how the bundle names a
    stored property (a document's `title` is its `name` when it has none)."""
    for name in _indexed_names(targets):
        value = stored.get(name)
        if value is None:
            continue
        size = _indexed_size(value)
        if size > MAX_INDEXED_BYTES:
            what = (called or {}).get(name, name)
            raise ValueError(
                f"{what} is {size} bytes long (UTF-8); an indexed property holds at most "
                f"{MAX_INDEXED_BYTES}"
            )


def _loose_name(value: Any) -> Any:
    # `Runbook`, `runbook`, `Incident-Report`: enum values are matched ignoring case, and
    # `-` or spaces for `_`.
    if isinstance(value, str):
        return value.strip().lower().replace("-", "_").replace(" ", "_")
    return value


class _Spec(BaseModel):
    # Numbers where text is typed (`title: 404`, `owner_team: 7`) are taken as text.
    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, frozen=True, coerce_numbers_to_str=True
    )


class _Provenance(_Spec):
    """Fields shared by nodes, edges and documents."""

    acl: list[str] | None = None
    source_id: ElementId | None = None
    source_version: str | None = None
    observed_at: ZonedDatetime | None = None
    valid_from: ZonedDatetime | None = None
    valid_to: ZonedDatetime | None = None
    recorded_at: ZonedDatetime | None = None
    method: str | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0, allow_inf_nan=False)
    # Where in the source the fact is (path#anchor or line range); required for documents.
    locator: str | None = None

    @field_validator("acl")
    @classmethod
    def _acl_identifiers(cls, value: list[str] | None) -> list[str] | None:
        return _check_labels(value, "acl label")

    @model_validator(mode="after")
    def _interval_ordered(self) -> _Provenance:
        if self.valid_from and self.valid_to and self.valid_to <= self.valid_from:
            raise ValueError("valid_to must be after valid_from")
        return self


_ProvenanceT = TypeVar("_ProvenanceT", bound=_Provenance)


class SourceSpec(_Spec):
    """A source system (CI/CD, chat, wiki, mailbox): owner team, classification, trust."""

    source_id: ElementId
    source_type: str
    owner_team: str | None = None
    classification: str = "internal"
    trust: Trust = Trust.TRUSTED
    # How much a conflict resolver should believe this source (0..100, higher wins).
    authority: int = Field(default=50, ge=0, le=100)
    allowed_purposes: list[str] = Field(min_length=1)
    acl: list[str] | None = None
    recorded_at: ZonedDatetime | None = None

    @field_validator("allowed_purposes")
    @classmethod
    def _purposes(cls, value: list[str]) -> list[str]:
        return _check_labels(value, "purpose") or []

    @field_validator("acl")
    @classmethod
    def _acl_identifiers(cls, value: list[str] | None) -> list[str] | None:
        return _check_labels(value, "acl label")


class PrincipalSpec(_Spec):
    """A subject of the bundle's tenant: its granted labels and allowed purposes.

    `tenant` is optional and, when given, must be the bundle's own (`validate_bundle`
    refuses another): a bundle writes only its own tenant's principals."""

    id: ElementId
    tenant: str | None = None
    name: str | None = None
    labels: list[str] = Field(default_factory=list)
    purposes: list[str] = Field(default_factory=list)
    source_id: ElementId | None = None
    recorded_at: ZonedDatetime | None = None

    @field_validator("id")
    @classmethod
    def _visible_id(cls, value: str) -> str:
        # The CLI names a subject in printable characters only: an id it could never name
        # would show in audit listings as the principal it hides behind.
        hidden = invisible_characters(value)
        if hidden:
            raise ValueError(
                f"principal id {value!a} holds characters a reader cannot see "
                f"({', '.join(hidden)}): no command could name it, and audit listings would "
                "show it as another principal"
            )
        return value

    @field_validator("labels")
    @classmethod
    def _labels(cls, value: list[str]) -> list[str]:
        return _check_labels(value, "label") or []

    @field_validator("purposes")
    @classmethod
    def _purposes(cls, value: list[str]) -> list[str]:
        return _check_labels(value, "purpose") or []

    @field_validator("tenant")
    @classmethod
    def _tenant(cls, value: str | None) -> str | None:
        return None if value is None else _check_identifier(value, "tenant")

    @model_validator(mode="after")
    def _indexable(self) -> PrincipalSpec:
        _check_indexed({"name": self.name}, _PRINCIPAL_TARGETS)
        return self


class NodeSpec(_Provenance):
    """An entity node (Service, Team, Deployment, ...); documents have their own section."""

    id: ElementId
    label: NodeLabel
    name: str | None = None
    props: dict[str, Any] = Field(default_factory=dict)

    @field_validator("label", mode="before")
    @classmethod
    def _known_label(cls, value: Any) -> Any:
        allowed = sorted(label.value for label in ENTITY_LABELS)
        by_loose = {_loose_name(a).replace("_", ""): a for a in allowed}
        loose = _loose_name(value)
        if not isinstance(loose, str) or loose.replace("_", "") not in by_loose:
            raise ValueError(f"label {value!r} is not one of {', '.join(allowed)}")
        return by_loose[loose.replace("_", "")]

    @model_validator(mode="after")
    def _typed_props(self) -> NodeSpec:
        props = _map_props(self.props, self.label.value, self.label)
        model = props_model_for_node(self.label)
        object.__setattr__(self, "props", _check_props(props, model, DOCUMENT_ONLY_PROPERTIES))
        # As graph_schema.records stores it: the props after id and name.
        stored = {"name": self.name, "source_id": self.source_id, **self.props}
        _check_indexed(stored, ("KG", self.label.value))
        return self


class EdgeSpec(_Provenance):
    """A relationship between two ids; `key` defaults to `TYPE|from|to`."""

    type: RelType
    from_: ElementId = Field(alias="from")
    to: ElementId
    key: str | None = None
    props: dict[str, Any] = Field(default_factory=dict)

    @field_validator("type", mode="before")
    @classmethod
    def _known_type(cls, value: Any) -> Any:
        allowed = [t.value for t in RelType]
        loose = _loose_name(value)
        if not isinstance(loose, str) or loose.upper() not in allowed:
            raise ValueError(f"relationship type {value!r} is not one of {', '.join(allowed)}")
        return loose.upper()

    @field_validator("key")
    @classmethod
    def _key(cls, value: str | None) -> str | None:
        return None if value is None else _check_element_id(value)

    @model_validator(mode="after")
    def _typed_props(self) -> EdgeSpec:
        props = _map_props(self.props, self.type.value)
        object.__setattr__(self, "props", _check_props(props, props_model_for_rel(self.type)))
        _check_indexed({"source_id": self.source_id, **self.props}, (self.type.value,))
        return self

    @property
    def edge_key(self) -> str:
        """The stable identity of this relationship."""
        return self.key or f"{self.type.value}|{self.from_}|{self.to}"


_KIND_SUPPORTS = {
    DocumentKind.RUNBOOK: EvidenceType.RUNBOOK,
    DocumentKind.POLICY: EvidenceType.POLICY,
}


class DocumentSpec(_Provenance):
    """A document: runbook, policy, incident report, postmortem, email, ticket, chat ..."""

    id: ElementId
    kind: DocumentKind
    title: str
    content: str
    locator: str
    supersedes: ElementId | None = None
    applies_to: list[ElementId] = Field(default_factory=list)
    # None (not given): a runbook supports `runbook`, a policy `policy` (`supported_types`).
    supports: list[EvidenceType] | None = None
    redacted_content: str | None = None
    trust: Trust | None = None
    name: str | None = None
    props: dict[str, Any] = Field(default_factory=dict)

    def supported_types(self) -> list[EvidenceType]:
        """What the document supports as evidence: as given, else what its kind is for (a
        runbook without `supports` was never the answer: low relevance to every question)."""
        if self.supports is not None:
            return self.supports
        return [_KIND_SUPPORTS[self.kind]] if self.kind in _KIND_SUPPORTS else []

    @field_validator("kind", mode="before")
    @classmethod
    def _kind_any_case(cls, value: Any) -> Any:
        return _loose_name(value)

    @field_validator("content", "redacted_content")
    @classmethod
    def _bounded_text(cls, value: str | None, info: ValidationInfo) -> str | None:
        # Four bytes a character at most: only a long text needs encoding to be measured.
        if value is not None and len(value) * 4 > MAX_DOCUMENT_BYTES:
            size = len(value.encode("utf-8", "surrogatepass"))
            if size > MAX_DOCUMENT_BYTES:
                raise ValueError(
                    f"{info.field_name} is {size} bytes long (UTF-8); a document holds at most "
                    f"{MAX_DOCUMENT_BYTES}"
                )
        return value

    @model_validator(mode="after")
    def _typed_props(self) -> DocumentSpec:
        props = _map_props(self.props, NodeLabel.DOCUMENT.value, NodeLabel.DOCUMENT)
        object.__setattr__(
            self, "props", _check_props(props, props_model_for_node(NodeLabel.DOCUMENT))
        )
        # As graph_schema.records stores it: the title is the name when none is given.
        stored = {"name": self.name or self.title, "source_id": self.source_id, **self.props}
        called = {"name": "name" if self.name else "title (the record's indexed name)"}
        _check_indexed(stored, _DOCUMENT_TARGETS, called)
        return self


_PRINCIPAL_TARGETS = ("KG", NodeLabel.PRINCIPAL.value)
# Every label a document record carries (graph_schema.records.document_draft).
_DOCUMENT_TARGETS = (
    "KG",
    NodeLabel.DOCUMENT.value,
    *sorted(label.value for label in DOCUMENT_KIND_LABELS.values()),
)


class RetractionSpec(_Spec):
    """Retract (tombstone) a node/document `id` or a relationship `key` at time `at`."""

    id: ElementId | None = None
    key: str | None = None
    reason: str = Field(min_length=1)
    at: ZonedDatetime

    @model_validator(mode="after")
    def _one_target(self) -> RetractionSpec:
        if (self.id is None) == (self.key is None):
            raise ValueError("a retraction names exactly one of `id` or `key`")
        return self

    @property
    def target(self) -> str:
        """The id or key this retraction tombstones."""
        return self.id if self.id is not None else str(self.key)


class Bundle(_Spec):
    """One bundle file: a tenant and its sources, principals, nodes, edges, documents."""

    tenant: str
    sources: list[SourceSpec] = Field(default_factory=list)
    principals: list[PrincipalSpec] = Field(default_factory=list)
    nodes: list[NodeSpec] = Field(default_factory=list)
    edges: list[EdgeSpec] = Field(default_factory=list)
    documents: list[DocumentSpec] = Field(default_factory=list)
    retractions: list[RetractionSpec] = Field(default_factory=list)

    @field_validator("tenant")
    @classmethod
    def _tenant(cls, value: str) -> str:
        return _check_identifier(value, "tenant")

    def element_count(self) -> int:
        """How many elements this bundle holds (all sections)."""
        return (
            len(self.sources)
            + len(self.principals)
            + len(self.nodes)
            + len(self.edges)
            + len(self.documents)
            + len(self.retractions)
        )


def and_more(targets: Sequence[str]) -> str:
    """` (and N more: a, b, c, ...)` after a one-line refusal naming its first target; empty
    when there are no others."""
    if not targets:
        return ""
    named = ", ".join(targets[:3])
    return f" (and {len(targets)} more: {named}{', ...' if len(targets) > 3 else ''})"


class BundleProblem(BaseModel):
    """One reason a bundle cannot be ingested: `file: element: reason`."""

    model_config = ConfigDict(frozen=True)

    origin: str
    element: str
    reason: str

    def line(self) -> str:
        """The problem as one line for stderr."""
        return f"{self.origin}: {self.element}: {self.reason}"


class BundlePart(BaseModel):
    """A bundle and where it came from (a file path, or an importer's description)."""

    model_config = ConfigDict(frozen=True)

    origin: str
    bundle: Bundle


class LoadedBundle(BaseModel):
    """All bundle parts read from a path, plus the problems found while reading them."""

    parts: list[BundlePart] = Field(default_factory=list)
    problems: list[BundleProblem] = Field(default_factory=list)
    # What an importer says of what the ingest writes (`linked:`, `changed:` ...): said once
    # the records are written, never before an ingest that may yet be refused.
    written_notes: list[str] = Field(default_factory=list)
    # The `source_type` of the import that built it (`ImportResult.loaded`); None for a
    # bundle, which the writer keeps off an import's source (graph_schema/import_sources.py).
    import_source_type: str | None = None
    # The caller's `--source-id`: for a bundle of retractions only, the import source whose
    # records the operator retracts (no element carries it).
    source_override: str | None = None
    # An import's files skipped as unreadable: path in the folder -> why (ImportResult).
    unreadable: dict[str, str] = Field(default_factory=dict)

    @classmethod
    def from_bundles(cls, bundles: Iterable[tuple[str, Bundle]]) -> LoadedBundle:
        """Wrap in-memory bundles (e.g. from an importer), each with its origin text."""
        return cls(parts=[BundlePart(origin=o, bundle=b) for o, b in bundles])

    def element_count(self) -> int:
        """Elements over all parts."""
        return sum(part.bundle.element_count() for part in self.parts)


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        repeated = sorted({key for key in keys if keys.count(key) > 1})
        raise ValueError(f"duplicate key {repeated[0][:60]!r}")
    return dict(pairs)


def _element_name(section: str, index: int, raw: Any) -> str:
    label = f"{section}[{index}]"
    if isinstance(raw, dict):
        if section == "edges":
            ident = raw.get("key") or f"{raw.get('type')}|{raw.get('from')}|{raw.get('to')}"
        elif section == "sources":
            ident = raw.get("source_id")
        else:
            ident = raw.get("id") or raw.get("key")
        if ident is not None:
            label += f" {str(ident)[:120]}"
    return label


# Top-level keys other graph formats use for a bundle's sections: a refusal names the key.
_SECTION_ALIASES = {
    "relationships": "edges",
    "relations": "edges",
    "rels": "edges",
    "links": "edges",
    "entities": "nodes",
    "vertices": "nodes",
    "docs": "documents",
}


def _problems_from_validation(
    origin: str, raw: dict[str, Any], exc: ValidationError
) -> list[BundleProblem]:
    problems = []
    for error in exc.errors():
        loc = list(error.get("loc", ()))
        if loc and isinstance(loc[0], str) and len(loc) >= 2 and isinstance(loc[1], int):
            section, index = loc[0], loc[1]
            items = raw.get(section)
            item = items[index] if isinstance(items, list) and index < len(items) else None
            element = _element_name(section, index, item)
            field = ".".join(str(part) for part in loc[2:])
        else:
            element = "bundle"
            field = ".".join(str(part) for part in loc)
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        reason = f"{field}: {message}" if field else message
        section_key = _SECTION_ALIASES.get(field.lower()) if element == "bundle" else None
        if section_key is not None and error.get("type") == "extra_forbidden":
            reason += f"; the key is `{section_key}`"
        problems.append(BundleProblem(origin=origin, element=element, reason=reason))
    return problems


def parse_bundle_data(origin: str, raw: Any) -> tuple[Bundle | None, list[BundleProblem]]:
    """Validate already-parsed YAML/JSON data as a Bundle, collecting every problem."""
    if not isinstance(raw, dict):
        return None, [BundleProblem(origin=origin, element="bundle", reason="not a mapping")]
    if raw and not raw.keys() & Bundle.model_fields.keys():
        # Some other file (a manifest, a config, a secret): one line, none of its content.
        return None, [
            BundleProblem(
                origin=origin,
                element="bundle",
                reason=f"not a bundle: none of its {len(raw)} top-level keys is one of "
                + ", ".join(Bundle.model_fields),
            )
        ]
    try:
        return Bundle.model_validate(raw), []
    except ValidationError as exc:
        problems = _problems_from_validation(origin, raw, exc)
        return None, _in_element_order(problems + _future_times(origin, raw, problems))


# The times of each section `validate_bundle` refuses in the future (graph_schema/validate.py).
_CHECKED_TIMES = {
    "sources": ("recorded_at",),
    "principals": ("recorded_at",),
    "nodes": ("recorded_at", "observed_at"),
    "documents": ("recorded_at", "observed_at"),
    "edges": ("recorded_at", "observed_at"),
    "retractions": ("at",),
}


def _future_times(
    origin: str, raw: dict[str, Any], found: Sequence[BundleProblem]
) -> list[BundleProblem]:
    """The times in the future of a bundle refused for other problems: `validate_bundle`
    says them only of a bundle that parses, so a bundle with several problems named every
    one but these (before, a future `recorded_at` was said only once the rest was fixed).
    Worded as `validate_bundle` words them; a time already refused for itself is left out."""
    now = datetime.now(UTC)
    told = {(p.element, p.reason.split(":", 1)[0]) for p in found}
    problems = []
    for section, fields in _CHECKED_TIMES.items():
        items = raw.get(section)
        if not isinstance(items, list):
            continue
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                continue
            element = _element_name(section, index, item)
            for name in fields:
                if item.get(name) is None or (element, name) in told:
                    continue
                try:
                    value = _require_zone(item[name])
                except ValueError:
                    continue
                if value > now:
                    reason = (
                        f"{name} {value.isoformat()} is in the future (the KG cannot know it yet)"
                    )
                    problems.append(BundleProblem(origin=origin, element=element, reason=reason))
    return problems


def _in_element_order(problems: list[BundleProblem]) -> list[BundleProblem]:
    """`problems` of one file in the order of its sections and elements (the bundle's own
    first), each element's in the order found."""
    sections = list(Bundle.model_fields)

    def key(problem: BundleProblem) -> tuple[int, int]:
        head, _, rest = problem.element.partition("[")
        index = rest.split("]", 1)[0]
        if head not in sections or not index.isdigit():
            return (-1, 0)
        return (sections.index(head), int(index))

    return sorted(problems, key=key)


LINK_REFUSED = "a symbolic link: refused (links are not followed into or inside an import)"


def path_problem(root: Path) -> BundleProblem | None:
    """Why `root`, the path an ingest names, cannot be read; None when it can.

    The path itself must not be a symbolic link (its parent folders may be): an import reads
    what is there, never a file a link elsewhere points at."""
    try:
        is_link = root.is_symlink()
        exists = root.exists()
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        return BundleProblem(origin=repr(str(root)), element="path", reason=str(exc))
    if is_link:
        return BundleProblem(origin=str(root), element="path", reason=LINK_REFUSED)
    if not exists:
        return BundleProblem(origin=str(root), element="path", reason="does not exist")
    return None


def local_files(
    root: Path, suffixes: tuple[str, ...], *, skip_hidden: bool = False
) -> tuple[list[Path], list[BundleProblem]]:
    """The regular files at `root` (a file, or a folder walked without following links) whose
    names end in one of `suffixes`, sorted; and a problem for each symbolic link among them,
    each linked folder, and each FIFO, socket or device (`root` itself too). A folder from
    elsewhere (a cloned repository) could otherwise link to any file its reader may read (a
    key, a password file) and have it imported.

    `skip_hidden`: names starting with `.` (and everything under them) are not looked at.
    """
    if root.is_file():
        return [root], []
    if not root.is_dir() and (special := _special_file(root)) is not None:
        reason = f"not a regular file ({special}): refused"
        return [], [BundleProblem(origin=str(root), element="path", reason=reason)]
    files: list[Path] = []
    problems: list[BundleProblem] = []
    for folder, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(folder)
        kept = []
        for name in sorted(dirnames):
            if skip_hidden and name.startswith("."):
                continue
            if (here / name).is_symlink():
                problems.append(
                    BundleProblem(origin=str(here / name), element="folder", reason=LINK_REFUSED)
                )
                continue
            kept.append(name)
        dirnames[:] = kept  # os.walk descends only into these
        for name in filenames:
            if skip_hidden and name.startswith("."):
                continue
            path = here / name
            if not name.lower().endswith(suffixes):
                continue
            if path.is_symlink():
                problems.append(
                    BundleProblem(origin=str(path), element="file", reason=LINK_REFUSED)
                )
            elif (special := _special_file(path)) is not None:
                # Named, as an unreadable file is: left out silently, a page would be missing
                # from the import with nothing said.
                reason = f"not a regular file ({special}): refused"
                problems.append(BundleProblem(origin=str(path), element="file", reason=reason))
            else:
                files.append(path)
    return sorted(files), sorted(problems, key=lambda p: p.origin)


def _special_file(path: Path) -> str | None:
    """What `path` is when it is not a regular file (a FIFO, socket or device); None for a
    regular file, and for one gone or unreadable since it was listed (said when read)."""
    try:
        mode = path.lstat().st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "of an unknown kind"


def _read_file(path: Path, max_bytes: int) -> tuple[Any, list[BundleProblem]]:
    # Imported here: a process that reads no bundle (a CLI lookup) never loads PyYAML.
    import yaml

    from graph_schema.safe_yaml import refuse_lone_surrogates, safe_yaml_load

    origin = str(path)
    try:
        text = read_local_file(path, max_bytes).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, [BundleProblem(origin=origin, element="file", reason=f"unreadable: {exc}")]
    try:
        if path.suffix.lower() == ".json":
            return refuse_lone_surrogates(
                text, json.loads(text, object_pairs_hook=_json_object)
            ), []
        return safe_yaml_load(text), []
    except (ValueError, yaml.YAMLError, RecursionError) as exc:  # JSONDecodeError: ValueError
        # The parsers' messages give a position, never the file's text (safe_yaml_load).
        reason = (
            "nested too deeply" if isinstance(exc, RecursionError) else " ".join(str(exc).split())
        )
        return None, [
            BundleProblem(origin=origin, element="file", reason=f"not parseable: {reason}")
        ]


def bundle_files(path: Path) -> tuple[list[Path], list[BundleProblem]]:
    """The bundle files at `path`: the file itself, or a folder's YAML/JSON files, sorted;
    and the links, FIFOs, sockets and devices found among them (refused, see
    `local_files`)."""
    return local_files(path, BUNDLE_SUFFIXES)


@cyclic_gc_paused()
def load_bundle(path: Path | str, max_bytes: int = MAX_INPUT_BYTES) -> LoadedBundle:
    """Read a bundle file or folder. Problems are collected in `LoadedBundle.problems`; a
    file or folder holding more than `max_bytes` raises `InputTooLarge` before it is read."""
    root = Path(path)
    refused = path_problem(root)
    if refused is not None:
        return LoadedBundle(problems=[refused])
    files, not_read = bundle_files(root)
    if not_read:
        return LoadedBundle(problems=not_read)
    if not files:
        return LoadedBundle(
            problems=[
                BundleProblem(
                    origin=str(root), element="path", reason="no .yaml, .yml or .json files"
                )
            ]
        )
    check_input_size(root, files, max_bytes)
    loaded = LoadedBundle()
    for file in files:
        raw, problems = _read_file(file, max_bytes)
        if problems:
            loaded.problems.extend(problems)
            continue
        bundle, problems = parse_bundle_data(str(file), raw)
        loaded.problems.extend(problems)
        if bundle is not None:
            loaded.parts.append(BundlePart(origin=str(file), bundle=bundle))
    return loaded


def iter_parts(loaded: LoadedBundle) -> Iterator[tuple[str, Bundle]]:
    """(origin, bundle) pairs in load order."""
    for part in loaded.parts:
        yield part.origin, part.bundle


def _with_defaults(
    spec: _ProvenanceT, source_id: str | None, acl: list[str] | None
) -> _ProvenanceT:
    update: dict[str, Any] = {}
    if source_id is not None and spec.source_id is None:
        update["source_id"] = source_id
    if acl is not None and spec.acl is None:
        update["acl"] = acl
    return spec.model_copy(update=update) if update else spec


def _with_acl_default(spec: SourceSpec, acl: list[str] | None) -> SourceSpec:
    if acl is None or spec.acl is not None:
        return spec
    return spec.model_copy(update={"acl": acl})


def apply_overrides(
    loaded: LoadedBundle,
    *,
    tenant: str | None = None,
    source_id: str | None = None,
    acl: list[str] | None = None,
) -> LoadedBundle:
    """Apply the CLI's `--tenant` (replaces every file's tenant, its principals' too),
    `--source-id` and `--acl` (defaults for elements that do not name their own; `--acl`
    for sources too).

    A principal that names a tenant other than its file's keeps it, and `validate_bundle`
    then refuses it unless it is the `--tenant` given: a bundle writes one tenant only."""
    if tenant is not None:
        _check_identifier(tenant, "tenant")
    if source_id is not None:
        try:
            _check_element_id(source_id)
        except ValueError as exc:
            raise ValueError(f"source id: {exc}") from None
    if acl is not None:
        acl = _check_labels(acl, "acl label")
    parts = []
    for part in loaded.parts:
        b = part.bundle
        update: dict[str, Any] = {
            # A source's own acl: the one default that applies to it (it is its own source).
            "sources": [_with_acl_default(s, acl) for s in b.sources],
            "nodes": [_with_defaults(n, source_id, acl) for n in b.nodes],
            "edges": [_with_defaults(e, source_id, acl) for e in b.edges],
            "documents": [_with_defaults(d, source_id, acl) for d in b.documents],
        }
        if tenant is not None:
            update["tenant"] = tenant
            update["principals"] = [
                p.model_copy(update={"tenant": tenant}) if p.tenant == b.tenant else p
                for p in b.principals
            ]
        parts.append(BundlePart(origin=part.origin, bundle=b.model_copy(update=update)))
    return loaded.model_copy(
        update={
            "parts": parts,
            "problems": list(loaded.problems),
            "written_notes": list(loaded.written_notes),
            "source_override": source_id if source_id is not None else loaded.source_override,
        }
    )
