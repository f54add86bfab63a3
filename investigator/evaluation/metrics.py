"""Per-layer metrics: pure functions of a case and a system's outcome.

Every metric is a ratio `num / den` kept as two integers, so per-case detail adds up to the
aggregate exactly (micro-averaging) and a metric with nothing to measure says so (`den = 0`,
value null) instead of pretending to be perfect. Safety rates are never averaged with recall.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field, computed_field

from investigator.evaluation.cases import (
    ACCESS_WHYS,
    DELETED_WHYS,
    TEMPORAL_WHYS,
    UNTRUSTED_WHYS,
    ForbiddenWhy,
    GoldenCase,
)
from investigator.evaluation.outcomes import CaseOutcome, EvidenceView

RETRIEVER_METRICS = ("required_evidence_recall",)
PACK_METRICS = (
    "pack_required_recall",
    "context_precision",
    "rejection_accuracy",
    "temporal_accuracy",
    "provenance_completeness",
    "acl_violation_rate",
    "untrusted_admission_rate",
    "deleted_admission_rate",
    "duplicate_context_rate",
    "budget_violation_rate",
)
ANSWER_METRICS = (
    "claim_evidence_coverage",
    "status_accuracy",
    "verdict_accuracy",
    "claim_fact_recall",
    "missing_evidence_recall",
    "confounder_recall",
    "lookup_accuracy",
    "deterministic_replay_rate",
)
LAYERS: dict[str, tuple[str, ...]] = {
    "retriever": RETRIEVER_METRICS,
    "pack": PACK_METRICS,
    "answer": ANSWER_METRICS,
}

# Provenance an admitted item must carry to be traceable to its source (docs/design.md section 7).
PROVENANCE_FIELDS = ("source_id", "source_version", "locator", "content_hash")


class Ratio(BaseModel):
    """`num / den`; `value` is null when there was nothing to measure."""

    model_config = ConfigDict(frozen=True)

    num: int = 0
    den: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def value(self) -> float | None:
        """The ratio, rounded for reporting; None when `den` is 0."""
        return round(self.num / self.den, 4) if self.den else None

    def __add__(self, other: Ratio) -> Ratio:
        return Ratio(num=self.num + other.num, den=self.den + other.den)


class SubjectGrants(BaseModel):
    """A principal as the dataset documents it: tenant, granted labels, allowed purposes."""

    model_config = ConfigDict(frozen=True)

    tenant: str | None = None
    labels: frozenset[str] = frozenset()
    purposes: frozenset[str] = frozenset()


class CaseScore(BaseModel):
    """One system's metrics on one case, with the reasons behind every miss."""

    model_config = ConfigDict(frozen=True)

    case_id: str
    case_type: str
    system: str
    exit_code: int
    status: str | None = None
    verdict: str | None = None
    run_id: str | None = None
    admitted: list[str] = Field(default_factory=list)  # KG ids behind the admitted evidence
    metrics: dict[str, Ratio] = Field(default_factory=dict)
    problems: list[str] = Field(default_factory=list)


def not_yet_valid(ev: EvidenceView, as_of: datetime) -> bool:
    """Whether the item only becomes true after `as_of` (a future version or event)."""
    return ev.valid_from is not None and ev.valid_from > as_of


def _forbidden_hits(case: GoldenCase, ev: EvidenceView, whys: frozenset[ForbiddenWhy]) -> list[str]:
    ids = set(ev.kg_ids)
    return [f.id for f in case.expect.forbidden if f.why in whys and f.id in ids]


def _leaked_text(case: GoldenCase, text: str) -> str | None:
    low = text.casefold()
    return next((t for t in case.expect.forbidden_text if t.casefold() in low), None)


def _access_problem(case: GoldenCase, ev: EvidenceView, grants: SubjectGrants | None) -> str | None:
    hits = _forbidden_hits(case, ev, ACCESS_WHYS)
    if hits:
        return f"admitted forbidden (access) {hits[0]}"
    leaked = _leaked_text(case, ev.content)
    if leaked:
        return f"admitted {ev.kg_ids[:1] or ev.evidence_id} containing forbidden text {leaked!r}"
    if case.expect.exit_code == 3:
        # The subject may see nothing for this request; anything handed back leaks.
        return f"admitted {ev.kg_ids[0] if ev.kg_ids else ev.evidence_id} to a refused request"
    if grants is not None:
        if case.purpose and grants.purposes and case.purpose not in grants.purposes:
            return f"admitted {ev.kg_ids[:1] or ev.evidence_id} for a purpose the subject lacks"
        lacking = sorted(set(ev.acl) - grants.labels)
        if lacking:
            return f"admitted {ev.kg_ids[:1] or ev.evidence_id} needing labels {lacking}"
        if ev.tenant is not None and grants.tenant is not None and ev.tenant != grants.tenant:
            return f"admitted {ev.kg_ids[:1] or ev.evidence_id} of tenant {ev.tenant}"
    return None


def _item_key(ev: EvidenceView) -> tuple[str, ...]:
    return (ev.content_hash or "",) if ev.content_hash else (ev.evidence_id,)


def _label(group: list[str]) -> str:
    return group[0] if len(group) == 1 else "any of " + "|".join(group)


def score_retriever(case: GoldenCase, out: CaseOutcome, problems: list[str]) -> dict[str, Ratio]:
    """required_evidence_recall: requirements met by anything retrieved (admitted or not)."""
    seen = out.candidate_kg_ids()
    groups = case.expect.requirements()
    missed = [g for g in groups if not set(g) & seen]
    problems.extend(f"required_evidence_recall: retriever missed {_label(g)}" for g in missed)
    return {"required_evidence_recall": Ratio(num=len(groups) - len(missed), den=len(groups))}


def score_pack(
    case: GoldenCase, out: CaseOutcome, grants: SubjectGrants | None, problems: list[str]
) -> dict[str, Ratio]:
    """The pack layer: what was admitted, judged item by item."""
    admitted = out.admitted
    n = len(admitted)
    admitted_ids = out.admitted_kg_ids()
    groups = case.expect.requirements()
    candidates = out.candidate_kg_ids()
    dropped = [g for g in groups if not set(g) & admitted_ids and set(g) & candidates]
    problems.extend(f"pack_required_recall: pack dropped required {_label(g)}" for g in dropped)
    pack_recall = Ratio(num=sum(1 for g in groups if set(g) & admitted_ids), den=len(groups))

    relevant = case.expect.required_ids() | set(case.expect.relevant)
    precise = sum(1 for ev in admitted if set(ev.kg_ids) & relevant)

    # Out of time: declared stale for this question (superseded, expired, future), or not
    # yet valid at as_of. An item whose validity ended before as_of is history (an incident
    # that is over), wrong only where the case declares it stale (the previous owner).
    timely = 0
    for ev in admitted:
        stale = _forbidden_hits(case, ev, TEMPORAL_WHYS)
        if stale:
            problems.append(f"temporal_accuracy: admitted out-of-time {stale[0]}")
        elif not_yet_valid(ev, case.as_of or datetime.now(UTC)):
            problems.append(
                f"temporal_accuracy: admitted {ev.kg_ids[:1] or ev.evidence_id} "
                "not yet valid at as_of"
            )
        else:
            timely += 1

    traceable = 0
    for ev in admitted:
        absent = [f for f in PROVENANCE_FIELDS if not getattr(ev, f)]
        if absent:
            problems.append(
                f"provenance_completeness: evidence {ev.evidence_id} lacks provenance {absent}"
            )
        else:
            traceable += 1

    access = 0
    for ev in admitted:
        why = _access_problem(case, ev, grants)
        if why:
            access += 1
            problems.append(f"acl_violation_rate: {why}")

    untrusted = 0
    deleted = 0
    for ev in admitted:
        bad = _forbidden_hits(case, ev, UNTRUSTED_WHYS)
        if bad:
            untrusted += 1
            problems.append(f"untrusted_admission_rate: admitted untrusted instruction {bad[0]}")
        gone = _forbidden_hits(case, ev, DELETED_WHYS)
        if gone or ev.status == "retracted":
            deleted += 1
            problems.append(
                f"deleted_admission_rate: admitted deleted {gone[0] if gone else ev.kg_ids[:1]}"
            )
    wrong = [
        h
        for ev in admitted
        for h in _forbidden_hits(case, ev, frozenset({ForbiddenWhy.WRONG_ANSWER}))
    ]
    problems.extend(f"context_precision: admitted wrong-answer {w}" for w in wrong)

    seen: set[tuple[str, ...]] = set()
    dupes = 0
    for ev in admitted:
        key = _item_key(ev)
        if key in seen:
            dupes += 1
            problems.append(f"duplicate_context_rate: duplicate evidence {ev.evidence_id}")
        seen.add(key)

    budget = Ratio()
    if case.budget_tokens is not None:
        used = out.tokens_used if out.tokens_used is not None else sum(e.tokens for e in admitted)
        over = used > case.budget_tokens
        if over:
            problems.append(
                f"budget_violation_rate: pack used {used} tokens "
                f"over the budget {case.budget_tokens}"
            )
        budget = Ratio(num=1 if over else 0, den=1)

    rejected_right = 0
    for want in case.expect.rejected:
        reasons = [r.reason for r in out.rejected if want.id in r.kg_ids]
        if any(r in want.reason_in for r in reasons):
            rejected_right += 1
        else:
            got = f"rejected as {reasons}" if reasons else "not rejected"
            problems.append(
                f"rejection_accuracy: {want.id} {got}, expected one of {want.reason_in}"
            )

    return {
        "pack_required_recall": pack_recall,
        "context_precision": Ratio(num=precise, den=n),
        "rejection_accuracy": Ratio(num=rejected_right, den=len(case.expect.rejected)),
        "temporal_accuracy": Ratio(num=timely, den=n),
        "provenance_completeness": Ratio(num=traceable, den=n),
        "acl_violation_rate": Ratio(num=access, den=n),
        "untrusted_admission_rate": Ratio(num=untrusted, den=n),
        "deleted_admission_rate": Ratio(num=deleted, den=n),
        "duplicate_context_rate": Ratio(num=dupes, den=n),
        "budget_violation_rate": budget,
    }


def _claim_states(claim_text: str, mentions: list[str | list[str]]) -> bool:
    low = claim_text.casefold()
    return all(
        any(alt.casefold() in low for alt in ([m] if isinstance(m, str) else m)) for m in mentions
    )


def score_answer(case: GoldenCase, out: CaseOutcome, problems: list[str]) -> dict[str, Ratio]:
    """The answer layer: claims bound to pack evidence, the right status, verdict and facts."""
    exp = case.expect
    in_pack = {ev.evidence_id for ev in out.admitted}
    covered = 0
    for claim in out.claims:
        leaked = _leaked_text(case, claim.statement)
        if leaked:
            problems.append(
                f"acl_violation_rate: claim {claim.claim_id} states forbidden text {leaked!r}"
            )
        outside = [e for e in claim.evidence_ids if e not in in_pack]
        if claim.evidence_ids and not outside:
            covered += 1
        else:
            problems.append(
                f"claim_evidence_coverage: claim {claim.claim_id} "
                f"cites {outside or 'no evidence'} outside the pack"
            )

    status_ok = out.exit_code == exp.exit_code and (exp.status is None or out.status == exp.status)
    if not status_ok:
        problems.append(
            f"status_accuracy: expected exit {exp.exit_code}/{exp.status}, "
            f"got exit {out.exit_code}/{out.status}"
        )

    verdict = Ratio()
    if exp.verdict_in:
        ok = out.verdict in exp.verdict_in
        if not ok:
            problems.append(f"verdict_accuracy: verdict {out.verdict} not in {exp.verdict_in}")
        verdict = Ratio(num=int(ok), den=1)

    facts = 0
    for want in exp.claims:
        found = any(
            _claim_states(c.statement, want.mentions)
            and (want.epistemic_status is None or c.epistemic_status == want.epistemic_status)
            for c in out.claims
        )
        facts += int(found)
        if not found:
            status_note = f" as {want.epistemic_status}" if want.epistemic_status else ""
            problems.append(f"claim_fact_recall: no claim states {want.mentions}{status_note}")

    listed = set(out.missing_evidence)
    missing_found = sum(1 for m in exp.missing_evidence if m in listed)
    problems.extend(
        f"missing_evidence_recall: missing_evidence lacks {m}"
        for m in exp.missing_evidence
        if m not in listed
    )

    named = set(out.confounders)
    problems.extend(
        f"confounder_recall: confounders lack {c}" for c in exp.confounders if c not in named
    )
    confounders = Ratio(num=sum(1 for c in exp.confounders if c in named), den=len(exp.confounders))

    lookup = Ratio()
    if case.kind == "runbook" and exp.exit_code == 0:
        owners = [exp.owner] if exp.owner is None or isinstance(exp.owner, str) else exp.owner
        right = out.runbook_id == exp.runbook and out.owner in owners
        if not right:
            problems.append(
                f"lookup_accuracy: lookup gave runbook {out.runbook_id}/owner {out.owner}, "
                f"expected {exp.runbook}/{exp.owner}"
            )
        lookup = Ratio(num=int(right), den=1)

    replay = Ratio()
    if out.run_id is not None:
        good = out.replay is not None and out.replay.verified and out.replay.pack_hash_match
        if not good:
            detail = out.replay.error or out.replay.drift if out.replay else "not replayed"
            problems.append(
                f"deterministic_replay_rate: replay of {out.run_id} not verified: {detail}"
            )
        replay = Ratio(num=int(good), den=1)

    return {
        "claim_evidence_coverage": Ratio(num=covered, den=len(out.claims)),
        "status_accuracy": Ratio(num=int(status_ok), den=1),
        "verdict_accuracy": verdict,
        "claim_fact_recall": Ratio(num=facts, den=len(exp.claims)),
        "missing_evidence_recall": Ratio(num=missing_found, den=len(exp.missing_evidence)),
        "confounder_recall": confounders,
        "lookup_accuracy": lookup,
        "deterministic_replay_rate": replay,
    }


def score_case(case: GoldenCase, out: CaseOutcome, grants: SubjectGrants | None) -> CaseScore:
    """All three layers for one case; the answer layer only for systems that answer."""
    problems: list[str] = []
    if out.error and out.exit_code != case.expect.exit_code:
        problems.append(f"status_accuracy: command failed (exit {out.exit_code}): {out.error}")
    metrics = score_retriever(case, out, problems)
    metrics.update(score_pack(case, out, grants, problems))
    if out.has_answer_layer:
        metrics.update(score_answer(case, out, problems))
    return CaseScore(
        case_id=case.id,
        case_type=case.type.value,
        system=out.system,
        exit_code=out.exit_code,
        status=out.status,
        verdict=out.verdict,
        run_id=out.run_id,
        admitted=sorted(out.admitted_kg_ids()),
        metrics=metrics,
        problems=problems,
    )


def aggregate(scores: list[CaseScore]) -> dict[str, dict[str, Ratio]]:
    """Micro-averaged metrics per layer (sum of numerators over sum of denominators)."""
    layers: dict[str, dict[str, Ratio]] = {}
    for layer, names in LAYERS.items():
        totals: dict[str, Ratio] = {}
        for name in names:
            present = [s.metrics[name] for s in scores if name in s.metrics]
            if present:
                total = Ratio()
                for r in present:
                    total = total + r
                totals[name] = total
        if totals:
            layers[layer] = totals
    return layers
