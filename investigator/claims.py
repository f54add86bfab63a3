"""Deterministic claim rules: statements bound to pack evidence, with a verdict.

Every claim carries an epistemic status (`fact` for what a record states, `inference` for
what follows from several records, `hypothesis` for what would need more evidence) and the
ids of the pack evidence it rests on; a claim without evidence is never emitted. For a
correlation question the verdict is `confirmed`, `likely`, `uncertain` or `refuted`:
"happened after" gives at most `likely`; only mechanism evidence can confirm; another change
in the same window (a confounder) or an unresolved conflict lowers the verdict one step each.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from enum import StrEnum

from pydantic import BaseModel, Field

from graph_schema.canonical import sha256_hex
from investigator.evidence import Evidence, canonical_json, iso_utc
from investigator.gate import Conflict, authority
from investigator.planner import CompetingCauseChecks
from investigator.rubric import Intent, MissingEvidence, missing_evidence
from investigator.timeline import (
    CHANGE_TIME_KEYS,
    DEPLOY_TIME_KEYS,
    FIRST_SEEN_KEYS,
    ReferenceTime,
    holds_at,
    instant,
    reference_times,
    time_references,
)

# How far before the first error another change counts as a confounder, and how long after a
# release an error may appear and still be called time-correlated.
CONFOUNDER_WINDOW = timedelta(minutes=30)
CORRELATION_WINDOW = timedelta(minutes=30)


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


class Confounder(BaseModel):
    """Another change in the correlation window that could explain the errors too."""

    evidence_id: str
    element_id: str
    at: datetime
    description: str


class ClaimSet(BaseModel):
    """Claims, the verdict (correlation questions only), confounders and gaps."""

    claims: list[Claim]
    verdict: Verdict | None
    confounders: list[Confounder]
    missing_evidence: list[MissingEvidence]


# Property names that carry the relevant instant, most specific first (investigator.timeline).
_DEPLOY_TIME_KEYS = DEPLOY_TIME_KEYS
_FIRST_SEEN_KEYS = FIRST_SEEN_KEYS
_CHANGE_TIME_KEYS = CHANGE_TIME_KEYS
_instant = instant


def _label(ev: Evidence) -> str:
    code = ev.context.get("code") or ev.context.get("error_code")
    if "error_first_seen" in ev.evidence_types and isinstance(code, str):
        return code.removeprefix("err:")
    return ev.name or ev.title or ev.element_id


def _about(ev: Evidence, entity_id: str) -> bool:
    """Whether `ev` is a record about `entity_id` (same record, its fact slot, its documents)."""
    return (
        ev.element_id == entity_id
        or entity_id in (ev.conflict_key or "")
        or entity_id in (ev.context.get("entity"), ev.context.get("deployment"))
    )


def _claim(
    statement: str, status: EpistemicStatus, confidence: float, evs: Sequence[Evidence], intent: str
) -> Claim:
    ids = sorted({ev.evidence_id for ev in evs})
    digest = sha256_hex(canonical_json([statement, ids, status.value]))
    return Claim(
        claim_id="claim:" + digest[:16],
        statement=statement,
        epistemic_status=status,
        confidence=confidence,
        evidence_ids=ids,
        intent=intent,
    )


def _with(evidence: Sequence[Evidence], etype: str) -> list[Evidence]:
    return [ev for ev in evidence if etype in ev.evidence_types]


def _valid_text(ev: Evidence) -> str:
    start = iso_utc(ev.valid_from) if ev.valid_from else "?"
    end = iso_utc(ev.valid_to) if ev.valid_to else "open"
    return f"valid {start} to {end}"


def derive_claims(
    intents: Sequence[str],
    evidence: Sequence[Evidence],
    *,
    as_of: datetime,
    conflicts: Sequence[Conflict] = (),
    service_id: str | None = None,
    question: str | None = None,
    competing_checks: CompetingCauseChecks | None = None,
    references: Sequence[ReferenceTime] | None = None,
) -> ClaimSet:
    """Apply the claim rules of each intent to the pack evidence (pure, deterministic).

    `question` resolves time words ("then" = the anchor event; investigator.timeline): a
    state claim then names the instant it holds at and why. `competing_checks` says which
    competing-cause checks ran; without all of them a correlation verdict stays `uncertain`.
    """
    intent_set = {Intent(i) for i in intents}
    claims: list[Claim] = []
    confounders: list[Confounder] = []
    verdict: Verdict | None = None
    as_of_text = iso_utc(as_of)
    refs = (
        list(references)
        if references is not None
        else reference_times(
            time_references(question),
            evidence,
            as_of=as_of,
            services=[service_id] if service_id else (),
        )
        if question
        else []
    )

    def held_at(ev: Evidence) -> str:
        """Which instants a state record holds at: `as_of` alone, or labelled references."""
        if not refs:
            return f"At {as_of_text}"
        return _holds_text(ev, refs, as_of)

    if Intent.OWNERSHIP_AT_TIME in intent_set:
        for ev in _with(evidence, "ownership"):
            claims.append(
                _claim(
                    f"{held_at(ev)}: {ev.content} ({_valid_text(ev)})",
                    EpistemicStatus.FACT,
                    0.95,
                    [ev],
                    Intent.OWNERSHIP_AT_TIME.value,
                )
            )
    if Intent.APPLICABLE_RUNBOOK in intent_set:
        for ev in _with(evidence, "runbook"):
            where = f" [{ev.locator}]" if ev.locator else ""
            claims.append(
                _claim(
                    f"Runbook {_label(ev)} ({ev.element_id}) is the version in force "
                    f"{_in_force(ev, refs, as_of)} ({_valid_text(ev)}){where}",
                    EpistemicStatus.FACT,
                    0.95,
                    [ev],
                    Intent.APPLICABLE_RUNBOOK.value,
                )
            )
    if Intent.APPLICABLE_POLICY in intent_set:
        for ev in _with(evidence, "policy"):
            where = f" [{ev.locator}]" if ev.locator else ""
            claims.append(
                _claim(
                    f"Policy {_label(ev)} ({ev.element_id}) is in force at {as_of_text} "
                    f"({_valid_text(ev)}){where}",
                    EpistemicStatus.FACT,
                    0.95,
                    [ev],
                    Intent.APPLICABLE_POLICY.value,
                )
            )
    if Intent.RELEASE_LOOKUP in intent_set:
        claims.extend(_release_claims(_with(evidence, "deployment_time")))
    if Intent.DEPENDENCIES in intent_set:
        for ev in _with(evidence, "dependency"):
            claims.append(
                _claim(ev.content, EpistemicStatus.FACT, 0.9, [ev], Intent.DEPENDENCIES.value)
            )
    if Intent.ENTITY_LOOKUP in intent_set:
        for ev in _with(evidence, "entity"):
            claims.append(
                _claim(
                    f"{ev.type or 'Entity'} {ev.element_id}: {ev.content or _label(ev)}",
                    EpistemicStatus.FACT,
                    0.9,
                    [ev],
                    Intent.ENTITY_LOOKUP.value,
                )
            )
    if Intent.INCIDENT_LOOKUP in intent_set:
        for ev in _with(evidence, "incident_report"):
            if ev.type != "Incident":
                continue
            claims.append(
                _claim(
                    f"Incident {ev.element_id}: {_label(ev)} ({_valid_text(ev)})",
                    EpistemicStatus.FACT,
                    0.95,
                    [ev],
                    Intent.INCIDENT_LOOKUP.value,
                )
            )
    firsts = _with(evidence, "error_first_seen")
    timeline = {Intent.INCIDENT_LOOKUP, Intent.ERROR_TIMELINE, Intent.DEPLOYMENT_CORRELATION}
    if intent_set & timeline:
        for ev in firsts:
            at = _instant(ev, _FIRST_SEEN_KEYS)
            when = f" first seen at {iso_utc(at)}" if at else ""
            claims.append(
                _claim(
                    f"{_label(ev)}{when}: {ev.content}",
                    EpistemicStatus.FACT,
                    0.95,
                    [ev],
                    sorted(i.value for i in intent_set & timeline)[0],
                )
            )
    mechanisms = [ev for ev in _with(evidence, "mechanism") if ev.trust == "trusted"]
    if Intent.DEPLOYMENT_CORRELATION in intent_set:
        verdict, corr_claims, confounders = _correlation(
            evidence, firsts, mechanisms, conflicts, as_of, competing_checks
        )
        claims.extend(corr_claims)
    if Intent.ROOT_CAUSE in intent_set:
        for ev in mechanisms:
            claims.append(
                _claim(
                    f"Mechanism: {ev.content}",
                    EpistemicStatus.INFERENCE,
                    0.8,
                    [ev],
                    Intent.ROOT_CAUSE.value,
                )
            )
    supported = {t for ev in evidence for t in ev.evidence_types}
    missing = missing_evidence(sorted(i.value for i in intent_set), supported)
    if (
        Intent.DEPLOYMENT_CORRELATION in intent_set
        and not mechanisms
        and not any(m.evidence_type == "mechanism" for m in missing)
    ):
        missing.append(
            MissingEvidence(
                evidence_type="mechanism",
                intents=[Intent.DEPLOYMENT_CORRELATION.value],
                description="no mechanism evidence (rollback or controlled comparison, "
                "config diff): the correlation is in time only",
                required=False,
            )
        )
    if (
        Intent.DEPLOYMENT_CORRELATION in intent_set
        and verdict in (Verdict.CONFIRMED, Verdict.LIKELY)
        and not (competing_checks is not None and competing_checks.complete)
    ):
        # No verdict stronger than its search: the competing causes were not all checked.
        verdict = Verdict.UNCERTAIN
        not_run = competing_checks.not_run if competing_checks is not None else []
        missing.append(
            MissingEvidence(
                evidence_type="change_event",
                intents=[Intent.DEPLOYMENT_CORRELATION.value],
                description="competing-cause checks did not all run for the window before the "
                "first error"
                + (f" ({'; '.join(not_run)})" if not_run else "")
                + ": the verdict stays uncertain",
                required=False,
            )
        )
    unique = {c.claim_id: c for c in claims}
    # Readable and deterministic: per intent, facts first, then inferences, then hypotheses.
    rank = {EpistemicStatus.FACT: 0, EpistemicStatus.INFERENCE: 1, EpistemicStatus.HYPOTHESIS: 2}
    ordered = sorted(
        unique.values(), key=lambda c: (c.intent, rank[c.epistemic_status], c.statement)
    )
    confounders = sorted(confounders, key=lambda c: (c.at, c.element_id))
    return ClaimSet(
        claims=ordered, verdict=verdict, confounders=confounders, missing_evidence=missing
    )


def _holds_text(ev: Evidence, refs: Sequence[ReferenceTime], as_of: datetime) -> str:
    """`At <label>, <time> (<why>) and at as_of, <time>` for the instants a record holds at."""
    parts = [f"{r.describe()} ({r.why})" for r in refs if holds_at(ev, r.at)]
    if holds_at(ev, as_of):
        parts.append(f"as_of, {iso_utc(as_of)}")
    if not parts:
        parts.append(f"as_of, {iso_utc(as_of)}")
    return "At " + " and at ".join(parts)


def _in_force(ev: Evidence, refs: Sequence[ReferenceTime], as_of: datetime) -> str:
    """`at <as_of>` (no reference in the question) or the labelled instants it holds at."""
    if not refs:
        return f"at {iso_utc(as_of)}"
    return "a" + _holds_text(ev, refs, as_of)[1:]


def _release_of(ev: Evidence) -> str | None:
    """The release a deployment-time record is about: itself, or its fact slot's subject."""
    if ev.type == "Deployment":
        return ev.element_id
    key = ev.conflict_key or ""
    if key.startswith("deployment_time|"):
        return key.split("|", 1)[1]
    entity = ev.context.get("entity")
    return entity if isinstance(entity, str) and entity.startswith("deploy:") else None


def _release_claims(timed: Sequence[Evidence]) -> list[Claim]:
    """One fact per release: its finish time from its own record, else from the most
    authoritative document that states it, citing every record about that release."""
    groups: dict[str, list[Evidence]] = {}
    for ev in timed:
        release = _release_of(ev)
        if release is not None:
            groups.setdefault(release, []).append(ev)
    out: list[Claim] = []
    for release, evs in sorted(groups.items()):
        own = [ev for ev in evs if ev.type == "Deployment"]
        source = own[0] if own else max(evs, key=lambda ev: (authority(ev), ev.evidence_id))
        at = _instant(source, _DEPLOY_TIME_KEYS)
        if at is None:
            continue
        name = _label(own[0]) if own else release.removeprefix("deploy:")
        basis = "" if own else f" (according to {_label(source)})"
        out.append(
            _claim(
                f"Release {name} ({release}) finished at {iso_utc(at)}{basis}",
                EpistemicStatus.FACT,
                0.95,
                evs,
                Intent.RELEASE_LOOKUP.value,
            )
        )
    return out


def _correlation(
    evidence: Sequence[Evidence],
    firsts: Sequence[Evidence],
    mechanisms: Sequence[Evidence],
    conflicts: Sequence[Conflict],
    as_of: datetime,
    checks: CompetingCauseChecks | None = None,
) -> tuple[Verdict, list[Claim], list[Confounder]]:
    intent = Intent.DEPLOYMENT_CORRELATION.value
    upstream = set(checks.upstream) if checks is not None else set()
    # Deployments of upstream services are competing causes, never the release asked about.
    upstream_deploys = [
        ev
        for ev in _with(evidence, "deployment_time")
        if ev.type == "Deployment" and ev.context.get("service") in upstream
    ]
    timed = [ev for ev in _with(evidence, "deployment_time") if ev not in upstream_deploys]
    # Releases are the Deployment records; documents about a release corroborate its time.
    releases = [ev for ev in timed if ev.type == "Deployment"] or timed
    deploys = [(t, ev) for ev in releases if (t := _instant(ev, _DEPLOY_TIME_KEYS))]
    # Error-code first-seen records (with an explicit instant) beat documents that mention it.
    explicit = [ev for ev in firsts if "first_seen" in ev.context] or list(firsts)
    seen = [(t, ev) for ev in explicit if (t := _instant(ev, _FIRST_SEEN_KEYS))]
    affected = _with(evidence, "affected_service")
    claims: list[Claim] = []
    if not deploys or not seen:
        return Verdict.UNCERTAIN, claims, []
    first_at, first_ev = min(seen, key=lambda p: (p[0], p[1].element_id))
    before = [(t, ev) for t, ev in deploys if t <= first_at]
    if not before:
        t, ev = min(deploys, key=lambda p: (p[0], p[1].element_id))
        claims.append(
            _claim(
                f"{_label(first_ev)} was first seen at {iso_utc(first_at)}, before release "
                f"{ev.element_id} finished at {iso_utc(t)}: the release cannot have started it",
                EpistemicStatus.INFERENCE,
                0.9,
                [ev, first_ev],
                intent,
            )
        )
        return Verdict.REFUTED, claims, []
    deploy_at, deploy_ev = max(before, key=lambda p: (p[0], p[1].element_id))
    corroborating = [o for o in timed if o is not deploy_ev and _about(o, deploy_ev.element_id)]
    claims.append(
        _claim(
            f"Release {_label(deploy_ev)} ({deploy_ev.element_id}) finished at "
            f"{iso_utc(deploy_at)}",
            EpistemicStatus.FACT,
            0.95,
            [deploy_ev, *corroborating],
            intent,
        )
    )
    gap = first_at - deploy_at
    basis = [deploy_ev, first_ev, *affected]
    if gap > CORRELATION_WINDOW:
        claims.append(
            _claim(
                f"{_label(first_ev)} was first seen {_human(gap)} after release "
                f"{deploy_ev.element_id} finished, outside the {_human(CORRELATION_WINDOW)} "
                "correlation window",
                EpistemicStatus.INFERENCE,
                0.7,
                basis,
                intent,
            )
        )
        verdict = Verdict.UNCERTAIN
    else:
        claims.append(
            _claim(
                f"{_label(first_ev)} was first seen {_human(gap)} after release "
                f"{deploy_ev.element_id} finished ({iso_utc(deploy_at)} -> {iso_utc(first_at)}): "
                "a time correlation, not by itself a root cause",
                EpistemicStatus.INFERENCE,
                0.85,
                basis,
                intent,
            )
        )
        verdict = Verdict.CONFIRMED if mechanisms else Verdict.LIKELY
        if not affected:
            verdict = _LOWER[verdict]
    if mechanisms:
        claims.append(
            _claim(
                f"Release {deploy_ev.element_id} caused {_label(first_ev)}, according to "
                "mechanism evidence from " + ", ".join(sorted(_label(ev) for ev in mechanisms)),
                EpistemicStatus.INFERENCE,
                0.8,
                [deploy_ev, first_ev, *mechanisms],
                intent,
            )
        )
    else:
        claims.append(
            _claim(
                f"Release {deploy_ev.element_id} may have caused {_label(first_ev)} "
                "(no mechanism evidence yet)",
                EpistemicStatus.HYPOTHESIS,
                0.5,
                [deploy_ev, first_ev],
                intent,
            )
        )
    confounders: list[Confounder] = []
    other_deploys = [
        ev
        for ev in [*releases, *upstream_deploys]
        if ev.type == "Deployment" and ev.element_id != deploy_ev.element_id
    ]
    for ev in [*_with(evidence, "change_event"), *other_deploys]:
        if _about(ev, deploy_ev.element_id):
            continue
        keys = _DEPLOY_TIME_KEYS if ev.type == "Deployment" else _CHANGE_TIME_KEYS
        at = _instant(ev, keys)
        if at is None or not (first_at - CONFOUNDER_WINDOW <= at <= first_at):
            continue
        confounders.append(
            Confounder(
                evidence_id=ev.evidence_id,
                element_id=ev.element_id,
                at=at,
                description=f"{_label(ev)} at {iso_utc(at)}: {ev.content}",
            )
        )
        claims.append(
            _claim(
                f"Another change, {_label(ev)} ({ev.element_id}), happened at {iso_utc(at)}, "
                f"within {_human(CONFOUNDER_WINDOW)} before {_label(first_ev)} was first seen: "
                "it could explain the errors as well",
                EpistemicStatus.FACT,
                0.9,
                [ev],
                intent,
            )
        )
    if confounders and verdict is not Verdict.REFUTED:
        verdict = _LOWER[verdict]
    relevant_ids = {deploy_ev.evidence_id, first_ev.evidence_id}
    if any(c.resolution == "unresolved" and relevant_ids & set(c.evidence_ids) for c in conflicts):
        verdict = _LOWER[verdict]
    return verdict, claims, confounders


def _human(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    if seconds < 120:
        return f"{seconds} s"
    return f"{seconds // 60} min {seconds % 60} s" if seconds % 60 else f"{seconds // 60} min"


def keep_claims_in_pack(claims: Sequence[Claim], pack_ids: Sequence[str]) -> list[Claim]:
    """Drop any claim that cites evidence outside the pack (validation before output)."""
    allowed = set(pack_ids)
    return [c for c in claims if c.evidence_ids and set(c.evidence_ids) <= allowed]
