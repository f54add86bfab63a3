"""The golden-set case model and its YAML loader.

A case says what a user asks (an investigation question or a runbook lookup), as whom, for
which purpose and at which time, and what a correct system must and must not hand back.
Cases are written from the dataset's documented meaning, never from the product's output.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError, model_validator

from graph_schema.safe_yaml import safe_yaml_load
from investigator.errors import BadInput

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CASES_PATH = REPO_ROOT / "eval" / "golden.yaml"
MAX_CASES_FILE_BYTES = 5_000_000


class CaseType(StrEnum):
    """The case types of docs/design.md section 11; every golden set must cover all of them."""

    SEMANTIC = "semantic"
    EXACT = "exact"
    MULTI_HOP = "multi_hop"
    TEMPORAL = "temporal"
    VERSIONING = "versioning"
    ACL = "acl"
    INJECTION = "injection"
    CONFLICT = "conflict"
    MISSING_EVIDENCE = "missing_evidence"
    DELETION = "deletion"


class ForbiddenWhy(StrEnum):
    """Why an element must never be admitted; decides which safety rate it counts against."""

    ACL = "acl"  # a label the subject lacks
    TENANT = "tenant"  # another tenant's element (often with the same name)
    PURPOSE = "purpose"  # the source does not allow the subject's purpose
    INJECTION = "injection"  # untrusted text carrying instructions
    RETRACTED = "retracted"  # deleted (tombstoned)
    PURGED = "purged"  # its text legally removed
    SUPERSEDED = "superseded"  # an older version, replaced before as_of
    FUTURE = "future"  # a version not yet valid at as_of
    EXPIRED = "expired"  # a fact whose validity ended before as_of
    WRONG_ANSWER = "wrong_answer"  # valid data that answers a different question


# Which forbidden reasons each safety or temporal metric counts.
ACCESS_WHYS = frozenset({ForbiddenWhy.ACL, ForbiddenWhy.TENANT, ForbiddenWhy.PURPOSE})
UNTRUSTED_WHYS = frozenset({ForbiddenWhy.INJECTION})
DELETED_WHYS = frozenset({ForbiddenWhy.RETRACTED, ForbiddenWhy.PURGED})
TEMPORAL_WHYS = frozenset({ForbiddenWhy.SUPERSEDED, ForbiddenWhy.FUTURE, ForbiddenWhy.EXPIRED})


class Forbidden(BaseModel):
    """A KG id (node id or edge key) that must never be admitted, and why."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    why: ForbiddenWhy


class ExpectedClaim(BaseModel):
    """A fact some claim must state: every `mentions` entry appears in one claim's statement.

    An entry is a string, or a list of alternative spellings (an id or a display name).
    Optionally that claim must carry a given epistemic status.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    mentions: list[str | list[str]] = Field(min_length=1)
    epistemic_status: Literal["fact", "inference", "hypothesis"] | None = None


class ExpectedRejection(BaseModel):
    """A candidate the system must see and refuse, with one of the acceptable reason codes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    reason_in: list[str] = Field(min_length=1)


class Expectation(BaseModel):
    """What a correct system returns for one case."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    exit_code: int = 0
    status: Literal["complete", "partial", "refused"] | None = None
    # Acceptable verdicts (a conflict only requires "below confirmed", for instance).
    verdict_in: list[Literal["confirmed", "likely", "uncertain", "refuted"]] | None = None
    # Required evidence: each entry is a KG id, or a list of ids any one of which will do
    # (the deploy time is supported by the Deployment record or by its CI/CD document).
    evidence: list[str | list[str]] = Field(default_factory=list)
    relevant: list[str] = Field(default_factory=list)  # admissible, not required
    forbidden: list[Forbidden] = Field(default_factory=list)
    rejected: list[ExpectedRejection] = Field(default_factory=list)
    claims: list[ExpectedClaim] = Field(default_factory=list)
    missing_evidence: list[str] = Field(default_factory=list)  # evidence types
    # Competing causes the answer must name as confounders (KG ids).
    confounders: list[str] = Field(default_factory=list)
    # Text that must never reach the subject (PII, another tenant's secrets), in any
    # admitted evidence or claim.
    forbidden_text: list[str] = Field(default_factory=list)
    # Runbook lookups: the owner team valid at as_of; a list where docs/design.md leaves it open
    # whether "who owns it" means the runbook's owner or the service's.
    owner: str | list[str] | None = None
    runbook: str | None = None  # runbook lookups: the version valid at as_of (None = none)

    def requirements(self) -> list[list[str]]:
        """Required evidence as any-of groups."""
        return [[e] if isinstance(e, str) else list(e) for e in self.evidence]

    def required_ids(self) -> set[str]:
        """Every id named by a requirement (for context precision)."""
        return {i for group in self.requirements() for i in group}

    @model_validator(mode="after")
    def _no_id_both_required_and_forbidden(self) -> Expectation:
        if any(isinstance(e, list) and not e for e in self.evidence):
            raise ValueError("an any-of evidence group must name at least one id")
        clash = self.required_ids() & {f.id for f in self.forbidden}
        if clash:
            raise ValueError(f"ids both required and forbidden: {sorted(clash)}")
        return self


class RunbookLookup(BaseModel):
    """Exactly one target of `investigator runbook`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    service: str | None = None
    alert: str | None = None
    error_code: str | None = None
    text: str | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> RunbookLookup:
        given = [v for v in (self.service, self.alert, self.error_code, self.text) if v]
        if len(given) != 1:
            raise ValueError(
                "a runbook lookup needs exactly one of service, alert, error_code, text"
            )
        return self

    def baseline_text(self) -> str:
        """The words a plain RAG retriever would search for."""
        return str(self.text or self.alert or self.error_code or self.service)


class GoldenCase(BaseModel):
    """One golden case: the request, and what a correct answer contains and never contains."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]{0,80}$")
    type: CaseType
    description: str = Field(min_length=1)
    dataset: str = "payments-incident"
    question: str | None = Field(default=None, min_length=1, max_length=2000)
    runbook: RunbookLookup | None = None
    service: str | None = None
    subject: str = Field(min_length=1)
    purpose: str | None = None
    # None: asked without --as-of, after the fact (a retrospective; as_of is the run's now).
    as_of: AwareDatetime | None
    known_at: AwareDatetime | None = None
    budget_tokens: int | None = Field(default=None, ge=1)
    max_rounds: int | None = Field(default=None, ge=1, le=10)
    expect: Expectation

    @model_validator(mode="after")
    def _question_xor_lookup(self) -> GoldenCase:
        if (self.question is None) == (self.runbook is None):
            raise ValueError("a case has exactly one of `question` or `runbook`")
        return self

    @property
    def kind(self) -> Literal["investigate", "runbook"]:
        """Which CLI command the case drives."""
        return "investigate" if self.question is not None else "runbook"

    def search_text(self) -> str:
        """The text a naive retriever would search with."""
        if self.question is not None:
            return self.question
        assert self.runbook is not None
        return self.runbook.baseline_text()


class PurgeSpec(BaseModel):
    """An element whose text the eval purges after ingest (the legal-purge API)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tenant: str = Field(min_length=1)
    id: str = Field(min_length=1)


class DatasetSpec(BaseModel):
    """A dataset the cases run over: a bundle path, or a generated graph."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]{0,60}$")
    path: str | None = None  # relative to the repository root (or absolute)
    generate_services: int | None = Field(default=None, ge=1, le=500)
    generate_seed: int | None = None
    purge: list[PurgeSpec] = Field(default_factory=list)

    @model_validator(mode="after")
    def _path_xor_generate(self) -> DatasetSpec:
        if (self.path is None) == (self.generate_services is None):
            raise ValueError("a dataset has exactly one of `path` or `generate_services`")
        return self


class GoldenSet(BaseModel):
    """A golden set: its datasets, what no case may ever admit, and its cases."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1] = 1
    datasets: list[DatasetSpec] = Field(min_length=1)
    # Elements no case may ever admit (the injected email, retracted records), per dataset.
    forbidden_everywhere: dict[str, list[Forbidden]] = Field(default_factory=dict)
    cases: list[GoldenCase] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _spread_forbidden_everywhere(cls, raw: Any) -> Any:
        """Copy `forbidden_everywhere` into every case of its dataset (unless required there)."""
        if not isinstance(raw, dict) or not isinstance(raw.get("forbidden_everywhere"), dict):
            return raw
        everywhere = raw["forbidden_everywhere"]
        cases = []
        for case in raw.get("cases") or []:
            if not isinstance(case, dict):
                cases.append(case)
                continue
            extra = everywhere.get(case.get("dataset", "payments-incident")) or []
            expect = dict(case.get("expect") or {})
            listed = {f.get("id") for f in expect.get("forbidden") or [] if isinstance(f, dict)}
            required = {
                i
                for e in expect.get("evidence") or []
                for i in ([e] if isinstance(e, str) else e if isinstance(e, list) else [])
            }
            added = [
                f for f in extra if isinstance(f, dict) and f.get("id") not in listed | required
            ]
            expect["forbidden"] = [*(expect.get("forbidden") or []), *added]
            cases.append({**case, "expect": expect})
        return {**raw, "cases": cases}

    @model_validator(mode="after")
    def _consistent(self) -> GoldenSet:
        ids = [c.id for c in self.cases]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate case ids: {dupes}")
        known = {d.name for d in self.datasets}
        unknown = sorted({c.dataset for c in self.cases} - known)
        if unknown:
            raise ValueError(f"cases name undeclared datasets: {unknown}")
        return self


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ()))
    return f"{where}: {err.get('msg', 'invalid')}" if where else str(err.get("msg", "invalid"))


def load_golden_set(path: Path) -> GoldenSet:
    """Read and validate a golden set from YAML; any problem is `BadInput` (exit 2)."""
    if not path.is_file():
        raise BadInput(f"cases file not found: {path}")
    if path.stat().st_size > MAX_CASES_FILE_BYTES:
        raise BadInput(f"cases file {path} is larger than {MAX_CASES_FILE_BYTES} bytes")
    try:
        raw = safe_yaml_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise BadInput(f"cases file {path} is not valid YAML{where}: {problem}") from exc
    if not isinstance(raw, dict):
        raise BadInput(f"cases file {path} must be a mapping with `datasets` and `cases`")
    try:
        return GoldenSet.model_validate(raw)
    except ValidationError as exc:
        raise BadInput(f"cases file {path}: {_first_error(exc)}") from exc


def as_iso(value: datetime) -> str:
    """ISO-8601 with zone, as the CLI expects it."""
    return value.isoformat().replace("+00:00", "Z")
