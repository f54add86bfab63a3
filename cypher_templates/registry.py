"""The template registry: the manifest (the allowlist), its validation and rendering.

Templates are files (`templates/*.cypher`, Jinja2) indexed by `manifest.yaml`. Jinja2 only
chooses among allowlisted structural options (an enum value or a bounded int); values are
always Cypher parameters. Rendering uses StrictUndefined in a sandbox and every rendered
text gets a `sha256:` template hash, recorded with each tool call for replay.

One file can publish several versions of a template (manifest `versions`): they differ only
in their render settings (`row_times`: how the rows carry times; `acl_ceiling`: which record
of an element bounds what a subject may read; `missing_files`: whether a runbook row, or an
entity_resolution row, says when its file or rule went missing from its source's import;
`latest_copy`: which copy of a relationship record version_history shows; `renamed_to`:
whether a fulltext_search row names the records of another document that supersede it;
`linked_first`: whether entity_resolution reads the rules a runbook is linked to first and
counts its matches; `one_cut`: whether deployments_in_window orders and limits the rows of
both its ways to a service's releases once, so a cut keeps exactly the oldest; `time_seeks`:
whether deployments_in_window_tenant seeks the window, and latest_deployments_tenant the
newest by `to`, by (tenant, time field) indexes; `ordered_window`: whether
deployments_in_window_tenant reads each field's seek in index order and cuts it there;
`window_ceilings`: whether it also seeks each later field only up to the time of the cut the
earlier fields' rows already fill;
`ordered_cut`: whether dependency_neighbourhood's row cap counts the services a DEPENDS_ON
walk reaches and keeps the latest firings of a FIRED_ON read; `key_suffixes`: whether
fulltext_search's query also asks the tokens that end with each config key it names;
`release_versions`: whether entity_resolution finds a release by its version alone),
which Jinja2 receives beside the options, so an older version keeps rendering exactly the
text it was recorded with.

The packaged registry does not parse YAML or run Jinja2 in a new process: `compiled.json`
(checked in beside the manifest, written by `python -m cypher_templates.build`, `make
templates`) holds the manifest's data and every variant's rendered text, with a digest of the
sources it was rendered from. It is used only while that digest matches the package's
`manifest.yaml` and `templates/*` (else the registry parses and renders them as before, and a
test reports the file stale); a variant it lacks renders with Jinja2, imported then.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import re
import unicodedata
from collections.abc import Iterator, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StringConstraints,
    ValidationError,
    create_model,
    model_validator,
)

from cypher_templates.plan import EvidenceType
from graph_schema.canonical import sha256_text
from graph_schema.errors import BadInput

if TYPE_CHECKING:
    from jinja2.sandbox import ImmutableSandboxedEnvironment

PACKAGE_DIR = Path(__file__).resolve().parent
MANIFEST_PATH = PACKAGE_DIR / "manifest.yaml"
TEMPLATES_DIR = PACKAGE_DIR / "templates"
# Every variant's rendered text and the manifest's data (cypher_templates/build.py).
COMPILED_PATH = PACKAGE_DIR / "compiled.json"
COMPILED_FORMAT = 1

# Set by the executor from the subject and the call, never by a plan.
RESERVED_PARAMS: frozenset[str] = frozenset(
    {"tenant", "granted", "purpose", "known_at", "limit", "fulltext_index", "candidate_limit"}
)
# Option values are spliced into Cypher text, so they must be plain identifiers.
_OPTION_VALUE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")

ParamType = Literal["id", "text", "lucene", "int", "datetime", "id_list"]
# How a template version's rows carry times (docs/contracts.md, row contract):
# - `datetime`: as Neo4j DateTime values (the driver hydrates each one: costly);
# - `epoch_micros`: the element's five common times as integer microseconds since the epoch,
#   and the zoned UTC times of `context` and `props` as `{us: <integer>}`; the executor turns
#   them back into the same aware datetimes (cypher_templates/executor.py).
RowTimes = Literal["datetime", "epoch_micros"]
# Which record of an element bounds what a subject may read of it (templates/_visibility.j2):
# - `latest_record`: the element's record the KG knows now (any status, tombstones
#   included), for nodes (tenant, id) and relationships (tenant, type, key);
# - `active_node`: versions 1 and 2 as first published (the current ACTIVE record of a node
#   only), kept so the texts recorded runs name still render byte-identical.
AclCeiling = Literal["active_node", "latest_record"]
# What a template's text receives from its manifest entry beside its options.
RENDER_SETTINGS: frozenset[str] = frozenset(
    {
        "row_times",
        "acl_ceiling",
        "missing_files",
        "under_way",
        "latest_copy",
        "renamed_to",
        "unreadable_files",
        "owned_kind",
        "linked_first",
        "one_cut",
        "time_seeks",
        "ordered_window",
        "window_ceilings",
        "ordered_cut",
        "key_suffixes",
        "release_versions",
    }
)


class TemplateRefused(BadInput):
    """A template, version, option or parameter the allowlist does not permit (exit 2)."""


class UnknownTemplate(TemplateRefused):
    """No template with that id (or that version) is in the manifest."""


def _no_control_characters(value: str) -> str:
    # Control characters have no business in ids or search text; refusing them keeps logs and
    # recorded parameters one-line and printable.
    for char in value:
        if unicodedata.category(char) == "Cc" and char not in "\t\n":
            raise ValueError(f"control character U+{ord(char):04X} is not allowed")
    return value


class ParamSpec(BaseModel):
    """One declared template parameter with its bounds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: ParamType
    required: bool = True
    max_length: int = Field(default=200, ge=1, le=10_000)
    max_items: int = Field(default=50, ge=1, le=1_000)
    ge: int = -1_000_000
    le: int = 1_000_000

    def annotation(self) -> Any:
        """The pydantic type that validates this parameter."""
        if self.type in ("id", "text", "lucene"):
            base: Any = Annotated[
                str,
                StringConstraints(strict=True, min_length=1, max_length=self.max_length),
                AfterValidator(_no_control_characters),
            ]
        elif self.type == "id_list":
            item = Annotated[
                str,
                StringConstraints(strict=True, min_length=1, max_length=self.max_length),
                AfterValidator(_no_control_characters),
            ]
            base = Annotated[list[item], Field(min_length=1, max_length=self.max_items)]
        elif self.type == "int":
            base = Annotated[StrictInt, Field(ge=self.ge, le=self.le)]
        else:
            base = AwareDatetime
        return base if self.required else base | None


class DerivedSpec(BaseModel):
    """A parameter the compiler computes from a declared one (never given by a plan)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    source: str = Field(alias="from")
    transform: Literal["lucene_phrase", "lucene_fuzzy", "lucene_prefix"]


class OptionSpec(BaseModel):
    """One structural option: an enum of identifiers or a bounded int (e.g. hops 1..3)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    enum: tuple[str, ...] | None = None
    int_range: tuple[int, int] | None = Field(default=None, alias="int")
    default: str | int

    @model_validator(mode="after")
    def _one_kind(self) -> OptionSpec:
        if (self.enum is None) == (self.int_range is None):
            raise ValueError("an option is either an enum or an int range")
        if self.enum is not None:
            for value in self.enum:
                if not _OPTION_VALUE.match(value):
                    raise ValueError(f"option value {value!r} is not an identifier")
        self.check(self.default)
        return self

    def values(self) -> tuple[str | int, ...]:
        """Every allowed value, for testing every structural variant."""
        if self.enum is not None:
            return self.enum
        assert self.int_range is not None
        return tuple(range(self.int_range[0], self.int_range[1] + 1))

    def check(self, value: object) -> str | int:
        """Return `value` if allowed, else raise ValueError naming what is allowed."""
        if self.enum is not None:
            if isinstance(value, str) and value in self.enum:
                return value
            raise ValueError(f"must be one of {', '.join(self.enum)}")
        assert self.int_range is not None
        low, high = self.int_range
        if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
            return value
        raise ValueError(f"must be an integer in {low}..{high}")


class TemplateSpec(BaseModel):
    """One manifest entry."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=_NAME.pattern)
    version: int = Field(ge=1)
    file: str = Field(pattern=r"^[a-z][a-z0-9_]*\.cypher$")
    description: str = Field(min_length=1)
    params: dict[str, ParamSpec] = Field(default_factory=dict)
    derived: dict[str, DerivedSpec] = Field(default_factory=dict)
    options: dict[str, OptionSpec] = Field(default_factory=dict)
    evidence_types: tuple[EvidenceType, ...] = Field(min_length=1)
    row_cap: int = Field(ge=1, le=1_000)
    timeout_s: float = Field(gt=0, le=60)
    text_param: str | None = None
    history: bool = False
    row_times: RowTimes = "datetime"
    acl_ceiling: AclCeiling = "active_node"
    missing_files: bool = False  # runbooks_for 4, entity_resolution 4: file or rule missing
    under_way: bool = False  # latest_deployments 4: also a rollout started and not finished
    latest_copy: bool = False  # version_history 4: a relationship's latest-ending copy
    renamed_to: bool = False  # fulltext_search 4: the other documents superseding a hit
    unreadable_files: bool = False  # runbooks_for 5: why a file the import had was not read
    owned_kind: bool = False  # owned_by_team 4: the kind owned, a runbook version's end
    linked_first: bool = False  # entity_resolution 5: linked rules first, matches counted
    one_cut: bool = False  # deployments_in_window 4: one order and one limit over both ways
    time_seeks: bool = False  # *_tenant deployments 4: seeks per time field, not a tenant read
    ordered_window: bool = False  # deployments_in_window_tenant 5: each seek cut in index order
    window_ceilings: bool = False  # deployments_in_window_tenant 6: later seeks end at the cut
    ordered_cut: bool = False  # dependency_neighbourhood 4: one row per service, latest firing
    key_suffixes: bool = False  # fulltext_search 5: `*max_size` for a config key typed
    release_versions: bool = False  # entity_resolution 6: a release found by its version

    @model_validator(mode="after")
    def _names(self) -> TemplateSpec:
        names = list(self.params) + list(self.derived) + list(self.options)
        if len(set(names)) != len(names):
            raise ValueError("parameter, derived and option names must be distinct")
        for name in names:
            if not _NAME.match(name):
                raise ValueError(f"parameter/option name {name!r} is not lower_snake_case")
            if name in RESERVED_PARAMS:
                raise ValueError(f"{name!r} is reserved for the executor")
            if name in RENDER_SETTINGS:
                raise ValueError(f"{name!r} is a render setting of the manifest entry")
        for name, derived in self.derived.items():
            source = self.params.get(derived.source)
            if source is None or source.type not in ("id", "text", "lucene"):
                raise ValueError(f"derived {name!r} needs a declared string parameter")
            if not source.required:
                raise ValueError(f"derived {name!r} needs a required parameter")
        if self.text_param is not None and self.text_param not in self.params:
            raise ValueError(f"text_param {self.text_param!r} is not a declared parameter")
        return self

    @property
    def ref(self) -> str:
        """`id@version`, as recorded in the Context Graph."""
        return f"{self.id}@{self.version}"

    @cached_property
    def params_model(self) -> type[BaseModel]:
        """A pydantic model validating this template's parameters (unknown names refused)."""
        fields: dict[str, Any] = {
            name: (spec.annotation(), ... if spec.required else None)
            for name, spec in self.params.items()
        }
        return create_model(
            f"Params_{self.id}_v{self.version}",
            __config__=ConfigDict(extra="forbid", frozen=True),
            **fields,
        )

    def resolve_options(self, given: dict[str, str | int]) -> dict[str, str | int]:
        """Fill defaults and refuse unknown options or values outside the allowlist."""
        unknown = sorted(set(given) - set(self.options))
        if unknown:
            raise TemplateRefused(f"template {self.ref}: unknown option(s) {', '.join(unknown)}")
        resolved: dict[str, str | int] = {}
        for name, spec in sorted(self.options.items()):
            value = given.get(name, spec.default)
            try:
                resolved[name] = spec.check(value)
            except ValueError as exc:
                raise TemplateRefused(
                    f"template {self.ref}: option {name}={str(value)[:40]!r} refused: {exc}"
                ) from None
        return resolved

    def variants(self) -> Iterator[dict[str, str | int]]:
        """Every combination of structural options (for the read-only and coverage proofs)."""
        names = sorted(self.options)
        for combo in itertools.product(*(self.options[n].values() for n in names)):
            yield dict(zip(names, combo, strict=True))


class RenderedTemplate(BaseModel):
    """The Cypher text of one template variant and the hash that identifies it."""

    model_config = ConfigDict(frozen=True)

    template_id: str
    template_version: int
    options: dict[str, str | int]
    text: str
    template_hash: str
    row_times: RowTimes = "datetime"


class VersionSettings(BaseModel):
    """What one published version of a manifest entry renders with."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    row_times: RowTimes = "datetime"
    acl_ceiling: AclCeiling = "active_node"
    missing_files: bool = False
    under_way: bool = False
    latest_copy: bool = False
    renamed_to: bool = False
    unreadable_files: bool = False
    owned_kind: bool = False
    linked_first: bool = False
    one_cut: bool = False
    time_seeks: bool = False
    ordered_window: bool = False
    window_ceilings: bool = False
    ordered_cut: bool = False
    key_suffixes: bool = False
    release_versions: bool = False


class Manifest(BaseModel):
    """The whole allowlist file: one `TemplateSpec` per published (id, version)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    templates: tuple[TemplateSpec, ...] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _one_spec_per_version(cls, data: Any) -> Any:
        """An entry with `versions: {1: {...}, 2: {...}}` publishes each version of its file
        with that version's settings; an entry with `version: n` publishes one."""
        if not isinstance(data, dict) or not isinstance(data.get("templates"), list):
            return data
        specs: list[Any] = []
        for entry in data["templates"]:
            if not isinstance(entry, dict) or "versions" not in entry:
                specs.append(entry)
                continue
            versions = entry["versions"]
            if "version" in entry or set(entry) & RENDER_SETTINGS:
                raise ValueError("an entry gives either `version` or `versions`")
            if not isinstance(versions, dict) or not versions:
                raise ValueError("`versions` maps each version to its settings")
            base = {k: v for k, v in entry.items() if k != "versions"}
            for version, settings in versions.items():
                published = VersionSettings.model_validate(settings or {})
                specs.append({**base, "version": version, **published.model_dump()})
        return {**data, "templates": specs}


def text_hash(text: str) -> str:
    """`sha256:` + hex digest of the rendered Cypher text."""
    return sha256_text(text)


def _files_state(manifest: Path, templates_dir: Path) -> tuple[tuple[str, int, int], ...]:
    """Name, size and modification time of the manifest, every template file and the
    compiled file (when there is one)."""
    paths = [manifest, *sorted(templates_dir.iterdir())]
    if manifest == MANIFEST_PATH and COMPILED_PATH.exists():
        paths.append(COMPILED_PATH)
    state = []
    for path in paths:
        info = path.stat()
        state.append((str(path), info.st_size, info.st_mtime_ns))
    return tuple(state)


def source_files(manifest: Path, templates_dir: Path) -> list[tuple[str, Path]]:
    """The files a registry renders from, by their name in the package (sorted)."""
    templates = sorted(
        p for p in templates_dir.iterdir() if p.suffix in (".cypher", ".j2") and p.is_file()
    )
    return [("manifest.yaml", manifest), *((f"templates/{p.name}", p) for p in templates)]


def sources_digest(manifest: Path = MANIFEST_PATH, templates_dir: Path = TEMPLATES_DIR) -> str:
    """`sha256:` of the manifest's and the template files' names and bytes: what the compiled
    file was rendered from, checked before it is used."""
    digest = hashlib.sha256()
    for name, path in source_files(manifest, templates_dir):
        data = path.read_bytes()
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    return "sha256:" + digest.hexdigest()


def read_manifest(path: Path) -> Manifest:
    """Parse (safe YAML) and validate a manifest file; ValueError names what is wrong."""
    # Imported here: a process with a current compiled file never parses YAML.
    import yaml

    from graph_schema.safe_yaml import safe_yaml_load

    try:
        return Manifest.model_validate(safe_yaml_load(path.read_text(encoding="utf-8")))
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise ValueError(f"template manifest {path} is invalid: {exc}") from exc


VariantKey = tuple[str, int, tuple[tuple[str, str | int], ...]]


def variant_key(spec: TemplateSpec, resolved: Mapping[str, str | int]) -> VariantKey:
    """What a rendering is kept by: id, version and the resolved options, sorted."""
    return (spec.id, spec.version, tuple(sorted(resolved.items())))


class CompiledTemplates:
    """`compiled.json` as read: the manifest's data and each variant's rendered lines.

    The file stores each distinct line once (`lines`) and a variant as the indices of its
    lines: the 547 variants' 2.2 MB of text share 595 distinct lines (runbooks_for v4's day).
    """

    def __init__(self, manifest: Any, lines: list[str], variants: list[Any]) -> None:
        self.manifest = manifest
        self._lines = lines
        self._variants: dict[VariantKey, list[int]] = {
            (template_id, version, tuple(sorted(options.items()))): indices
            for template_id, version, options, indices in variants
        }

    @classmethod
    def read(cls, path: Path, sources: str) -> CompiledTemplates | None:
        """The compiled file, or None when it is absent, damaged, of another format or was
        rendered from other sources than `sources` (then the registry renders itself)."""
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            if raw["format"] != COMPILED_FORMAT or raw["sources"] != sources:
                return None
            return cls(raw["manifest"], raw["lines"], raw["variants"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def text(self, key: VariantKey) -> str | None:
        """The variant's rendered text, None when the file does not hold it."""
        indices = self._variants.get(key)
        if indices is None:
            return None
        try:
            return "\n".join(self._lines[i] for i in indices)
        except (IndexError, TypeError):
            return None


class TemplateRegistry:
    """The loaded, validated manifest; texts from the compiled file, else a sandboxed
    StrictUndefined Jinja2 environment (created on first use)."""

    def __init__(
        self,
        manifest: Manifest,
        templates_dir: Path = TEMPLATES_DIR,
        compiled: CompiledTemplates | None = None,
    ) -> None:
        self.manifest = manifest
        self._by_ref: dict[tuple[str, int], TemplateSpec] = {}
        for spec in manifest.templates:
            key = (spec.id, spec.version)
            if key in self._by_ref:
                raise ValueError(f"manifest lists {spec.ref} twice")
            if not (templates_dir / spec.file).is_file():
                raise ValueError(f"manifest entry {spec.ref}: no file {spec.file}")
            self._by_ref[key] = spec
        self._templates_dir = templates_dir
        self._compiled = compiled
        # Shared with `pinned` views: the environment, once one of them needed it.
        self._jinja: dict[str, ImmutableSandboxedEnvironment] = {}
        self._rendered: dict[VariantKey, RenderedTemplate] = {}
        # The version a step without one gets, per template id (`pinned`); else the highest.
        self._defaults: dict[str, int] = {}

    @classmethod
    def load(
        cls,
        path: Path = MANIFEST_PATH,
        templates_dir: Path | None = None,
        *,
        compiled: bool = True,
    ) -> TemplateRegistry:
        """Load and validate a manifest (the packaged one by default). The packaged one comes
        from `compiled.json` while that file is current (`compiled=False`: never)."""
        templates_dir = templates_dir or path.parent / "templates"
        if compiled and path == MANIFEST_PATH and templates_dir == TEMPLATES_DIR:
            try:
                ready = CompiledTemplates.read(COMPILED_PATH, sources_digest(path, templates_dir))
                if ready is not None:
                    return cls(Manifest.model_validate(ready.manifest), templates_dir, ready)
            except (OSError, ValueError):
                pass  # the sources decide: parse and render them below
        return cls(read_manifest(path), templates_dir)

    @classmethod
    def packaged(cls) -> TemplateRegistry:
        """The packaged manifest's registry, shared in a process while its files are unchanged.

        Loading validates the manifest and builds each template's parameter model, and each
        variant is rendered (or read from the compiled file) once: work every executor of a
        long-lived process (the MCP server, the warm CLI process) would otherwise repeat.
        """
        key = _files_state(MANIFEST_PATH, TEMPLATES_DIR)
        registry = _PACKAGED.get(key)
        if registry is None:
            _PACKAGED.clear()
            registry = _PACKAGED[key] = cls.load()
        return registry

    @property
    def compiled(self) -> bool:
        """Whether texts come from the compiled file (else every one renders with Jinja2)."""
        return self._compiled is not None

    def warm_up(self) -> None:
        """Build every parameter model and render every variant now (a preloading process)."""
        for spec in self.specs():
            _ = spec.params_model
            for options in spec.variants():
                self.render(spec, options)

    def specs(self) -> list[TemplateSpec]:
        """Every manifest entry, sorted by id then version."""
        return [self._by_ref[k] for k in sorted(self._by_ref)]

    def get(self, template_id: str, version: int | None = None) -> TemplateSpec:
        """The entry for `template_id` at `version` (when None: the highest, or the version
        `pinned` gave it)."""
        versions = sorted(v for (i, v) in self._by_ref if i == template_id)
        if not versions:
            raise UnknownTemplate(f"unknown template {template_id[:64]!r}: not in the allowlist")
        if version is None:
            return self._by_ref[(template_id, self._defaults.get(template_id, versions[-1]))]
        if version not in versions:
            known = ", ".join(str(v) for v in versions)
            raise UnknownTemplate(
                f"unknown version {version} of template {template_id!r} (known: {known})"
            )
        return self._by_ref[(template_id, version)]

    def pinned(self, versions: Mapping[str, int]) -> TemplateRegistry:
        """This registry, but a step without a version gets the one a recorded run used.

        `versions` maps template ids to the versions the run called; a template it did not
        call gets its highest version not above the highest of those. Replay re-runs a
        recorded investigation with it, so the re-run reads (and its pack names) the same
        template versions as the run did. Specs, environment and renderings are shared.
        """
        view = copy.copy(self)
        cap = max(versions.values(), default=None)
        view._defaults = {}
        for template_id in {i for i, _ in self._by_ref}:
            known = sorted(v for (i, v) in self._by_ref if i == template_id)
            wanted = versions.get(template_id)
            below = [v for v in known if cap is not None and v <= cap]
            if wanted in known:
                view._defaults[template_id] = wanted
            elif below:
                view._defaults[template_id] = below[-1]
        return view

    def render(self, spec: TemplateSpec, options: dict[str, str | int]) -> RenderedTemplate:
        """Render one structural variant (options already resolved) and hash its text."""
        resolved = spec.resolve_options(options)
        key = variant_key(spec, resolved)
        cached = self._rendered.get(key)
        if cached is not None:
            return cached
        text = self._compiled.text(key) if self._compiled is not None else None
        if text is None:
            text = self._render_source(spec, resolved)
        rendered = RenderedTemplate(
            template_id=spec.id,
            template_version=spec.version,
            options=resolved,
            text=text,
            template_hash=text_hash(text),
            row_times=spec.row_times,
        )
        self._rendered[key] = rendered
        return rendered

    def _render_source(self, spec: TemplateSpec, resolved: dict[str, str | int]) -> str:
        """The variant's text rendered by Jinja2 from its template file."""
        from jinja2 import TemplateError

        try:
            # Option names never collide with the settings (TemplateSpec refuses them).
            raw = (
                self._environment()
                .get_template(spec.file)
                .render(
                    row_times=spec.row_times,
                    acl_ceiling=spec.acl_ceiling,
                    missing_files=spec.missing_files,
                    under_way=spec.under_way,
                    latest_copy=spec.latest_copy,
                    renamed_to=spec.renamed_to,
                    unreadable_files=spec.unreadable_files,
                    owned_kind=spec.owned_kind,
                    linked_first=spec.linked_first,
                    one_cut=spec.one_cut,
                    time_seeks=spec.time_seeks,
                    ordered_window=spec.ordered_window,
                    window_ceilings=spec.window_ceilings,
                    ordered_cut=spec.ordered_cut,
                    key_suffixes=spec.key_suffixes,
                    release_versions=spec.release_versions,
                    **resolved,
                )
            )
        except TemplateError as exc:
            raise ValueError(f"template {spec.ref} failed to render: {exc}") from exc
        # Normalise whitespace-only lines and trailing blanks so the hash is stable under
        # harmless editor differences; the Cypher meaning is unchanged.
        return "\n".join(line.rstrip() for line in raw.strip().splitlines() if line.strip())

    def _environment(self) -> ImmutableSandboxedEnvironment:
        env = self._jinja.get("env")
        if env is None:
            # Imported on first use: a process served by the compiled file never needs it.
            from jinja2 import FileSystemLoader, StrictUndefined
            from jinja2.sandbox import ImmutableSandboxedEnvironment

            env = self._jinja["env"] = ImmutableSandboxedEnvironment(
                loader=FileSystemLoader(str(self._templates_dir)),
                undefined=StrictUndefined,
                # Cypher, not HTML: no value ever reaches the text, so escaping has nothing to do.
                autoescape=False,
                keep_trailing_newline=False,
                trim_blocks=False,
            )
        return env


_PACKAGED: dict[tuple[tuple[str, int, int], ...], TemplateRegistry] = {}
