"""The QueryPlan: what the planner (deterministic or LLM) may ask for. Never Cypher text.

A plan names allowlisted templates by id (and optionally version), gives their typed
parameters and structural options, and says which evidence type each step serves. The
compiler (cypher_templates.compiler) validates every step against the manifest.
"""

from __future__ import annotations

from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, JsonValue, model_validator

EvidenceType = Literal[
    "entity",
    "deployment_time",
    "error_first_seen",
    "affected_service",
    "ownership",
    "runbook",
    "mechanism",
    "change_event",
    "dependency",
    "dependent",
    "incident_report",
    "alert_definition",
    "alert_firing",
    "trace",
    "policy",
    "document",
]
"""The rubric's vocabulary of evidence types (docs/contracts.md section 2)."""

EVIDENCE_TYPES: tuple[str, ...] = EvidenceType.__args__  # type: ignore[attr-defined]

_NAME = r"^[a-z][a-z0-9_]{0,63}$"
_ID_MAX = 200


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TimeScope(_Strict):
    """The question's time window and the instant it is asked about (all zoned)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    from_: AwareDatetime | None = Field(default=None, alias="from")
    to: AwareDatetime | None = None
    as_of: AwareDatetime | None = None

    @model_validator(mode="after")
    def _ordered(self) -> TimeScope:
        if self.from_ is not None and self.to is not None and self.from_ > self.to:
            raise ValueError("time scope 'from' is after 'to'")
        return self


class ResolvedEntity(_Strict):
    """An entity the planner resolved from the question (a KG id, never a display name)."""

    id: str = Field(min_length=1, max_length=_ID_MAX)
    type: str | None = Field(default=None, max_length=64)
    name: str | None = Field(default=None, max_length=_ID_MAX)


class PlanStep(_Strict):
    """One template call: id (@version), typed params, structural options, evidence served."""

    step_id: str | None = Field(default=None, max_length=64)
    template_id: str = Field(pattern=_NAME)
    template_version: int | None = Field(default=None, ge=1, le=10_000)
    params: dict[str, JsonValue] = Field(default_factory=dict, max_length=32)
    options: dict[str, str | int] = Field(default_factory=dict, max_length=16)
    evidence_type: EvidenceType
    limit: int | None = Field(default=None, ge=1, le=10_000)


class QueryPlan(_Strict):
    """A structured plan: intents, entities, time scope, known_at, steps and bounds."""

    intents: list[str] = Field(default_factory=list, max_length=16)
    entities: list[ResolvedEntity] = Field(default_factory=list, max_length=64)
    time_scope: TimeScope = Field(default_factory=TimeScope)
    known_at: AwareDatetime | None = None
    steps: list[PlanStep] = Field(default_factory=list, max_length=64)
    max_rounds: int = Field(default=3, ge=1, le=10)
    max_hops: int = Field(default=2, ge=1, le=3)

    @model_validator(mode="after")
    def _intents_are_names(self) -> QueryPlan:
        import re

        for intent in self.intents:
            if not re.fullmatch(_NAME, intent):
                raise ValueError(f"intent {intent[:64]!r} is not a lower_snake_case name")
        return self
