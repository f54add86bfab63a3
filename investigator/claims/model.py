"""The claim model: epistemic status, verdict, claim, confounder and the claim set a run
answers with; keeping claims to the pack's evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, Field

from investigator.rubric import MissingEvidence


class EpistemicStatus(StrEnum):
    """How strongly a claim is known."""

    FACT = "fact"
    INFERENCE = "inference"
    HYPOTHESIS = "hypothesis"


class Verdict(StrEnum):
    """The answer to a correlation question, strongest first."""

    CONFIRMED = "confirmed"
    LIKELY = "likely"
    UNCERTAIN = "uncertain"
    REFUTED = "refuted"


_LOWER = {
    Verdict.CONFIRMED: Verdict.LIKELY,
    Verdict.LIKELY: Verdict.UNCERTAIN,
    Verdict.UNCERTAIN: Verdict.UNCERTAIN,
    Verdict.REFUTED: Verdict.REFUTED,
}


class Claim(BaseModel):
    """One statement bound to evidence in the pack."""

    claim_id: str
    statement: str
    epistemic_status: EpistemicStatus
    confidence: float = Field(ge=0.0, le=1.0)
    evidence_ids: list[str] = Field(min_length=1)
    intent: str


class CauseAssessment(StrEnum):
    """What the trusted mechanism evidence says of a competing or candidate cause."""

    RULED_OUT = "ruled_out"  # a record clears it, none names it as the cause
    NAMED_AS_CAUSE = "named_as_cause"  # a record names it as the cause, none clears it
    DISPUTED = "disputed"  # records do both
    # No mechanism record says either, but a trusted report in the pack that records no
    # mechanism (a draft postmortem) names it as the cause (`reported_by`).
    REPORTED_AS_CAUSE = "reported_as_cause"
    NO_MECHANISM_EVIDENCE = "no_mechanism_evidence"  # no record says either


class Confounder(BaseModel):
    """Another change in the correlation window that could explain the errors too."""

    evidence_id: str
    element_id: str
    # When it took effect: a release's finish (the deployment time), a change's instant.
    at: datetime
    # A release's rollout start, when its record has one before `at`: errors are weighed
    # against it (an error first seen during the rollout can be its effect).
    started_at: datetime | None = None
    description: str
    # Evidence ids of the mechanism records that clear it / name it as the cause.
    assessment: CauseAssessment = CauseAssessment.NO_MECHANISM_EVIDENCE
    ruled_out_by: list[str] = Field(default_factory=list)
    named_by: list[str] = Field(default_factory=list)
    # Evidence ids of the reports (trusted documents that are no mechanism record, e.g. a
    # draft postmortem of confidence 0.3) that name it as the cause: what was recorded of it
    # then, not what decides it.
    reported_by: list[str] = Field(default_factory=list)


class ClaimSet(BaseModel):
    """Claims, the verdict (correlation questions only), confounders and gaps."""

    claims: list[Claim]
    verdict: Verdict | None
    confounders: list[Confounder]
    missing_evidence: list[MissingEvidence]


def keep_claims_in_pack(claims: Sequence[Claim], pack_ids: Sequence[str]) -> list[Claim]:
    """Drop any claim that cites evidence outside the pack (validation before output)."""
    allowed = set(pack_ids)
    return [c for c in claims if c.evidence_ids and set(c.evidence_ids) <= allowed]
