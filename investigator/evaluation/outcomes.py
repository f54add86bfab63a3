"""What a system handed back for one case, normalised so both systems are scored alike.

The product's JSON (`investigate --json`, `runbook --json`, `replay --json`) and the naive
baseline's fulltext hits both become a `CaseOutcome`; the metrics read nothing else.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SystemName = Literal["product", "baseline"]


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate (4 characters a token), used when a system reports none."""
    return math.ceil(len(text) / 4) if text else 0


class EvidenceView(BaseModel):
    """One admitted piece of evidence: which KG elements it is about and its provenance."""

    model_config = ConfigDict(frozen=True)

    evidence_id: str
    kg_ids: list[str] = Field(default_factory=list)  # node ids / edge keys it stands for
    source_id: str | None = None
    source_version: str | None = None
    locator: str | None = None
    content_hash: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    acl: list[str] = Field(default_factory=list)
    tenant: str | None = None  # when the system reports it
    status: str | None = None  # `retracted` marks a tombstone record
    content: str = ""  # the text handed to the model
    tokens: int = 0


class RejectionView(BaseModel):
    """A candidate the system saw and refused, with its reason."""

    model_config = ConfigDict(frozen=True)

    candidate_id: str
    kg_ids: list[str] = Field(default_factory=list)
    reason: str
    replacement: str | None = None


class ClaimView(BaseModel):
    """A claim as printed by `investigate --json`."""

    model_config = ConfigDict(frozen=True)

    claim_id: str
    statement: str
    epistemic_status: str
    evidence_ids: list[str] = Field(default_factory=list)


class ReplayView(BaseModel):
    """What `replay --json` said about a run."""

    model_config = ConfigDict(frozen=True)

    exit_code: int
    verified: bool = False
    pack_hash_match: bool = False
    chain_valid: bool = False
    drift: list[str] = Field(default_factory=list)
    error: str | None = None


class CaseOutcome(BaseModel):
    """Everything the metrics need about one system's answer to one case."""

    model_config = ConfigDict(frozen=True)

    case_id: str
    system: SystemName
    exit_code: int
    error: str | None = None  # the one stderr line, when the command failed
    status: str | None = None
    verdict: str | None = None
    stop_reason: str | None = None
    run_id: str | None = None
    pack_hash: str | None = None
    admitted: list[EvidenceView] = Field(default_factory=list)
    rejected: list[RejectionView] = Field(default_factory=list)
    claims: list[ClaimView] = Field(default_factory=list)
    missing_evidence: list[str] = Field(default_factory=list)
    confounders: list[str] = Field(default_factory=list)  # KG ids named as confounders
    runbook_id: str | None = None  # runbook lookups
    owner: str | None = None  # runbook lookups
    tokens_used: int | None = None  # what the pack spent on evidence, if known
    replay: ReplayView | None = None
    has_answer_layer: bool = True  # the baseline produces no claims, status or run record

    def candidate_kg_ids(self) -> set[str]:
        """Every KG id the system retrieved, whether admitted or rejected afterwards."""
        ids = {i for ev in self.admitted for i in ev.kg_ids}
        ids.update(i for rej in self.rejected for i in rej.kg_ids)
        return ids

    def admitted_kg_ids(self) -> set[str]:
        """Every KG id behind admitted evidence (and a runbook lookup's answer)."""
        return {i for ev in self.admitted for i in ev.kg_ids}
