"""Asked whether to roll back ("should we roll back payment-api?") once the records say the
incident is over: its resolution, the errors' last sighting and a rollback a report states, by
as_of, come first; the runbook's rollback step is for an open incident, and whether the
release is still deployed is a required gap (the KG records no deployment state after it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from investigator.claims.actions import _stated_actions
from investigator.claims.model import Claim, EpistemicStatus
from investigator.claims.wording import _DEPLOY_TIME_KEYS, _claim, _instant, _label, _quote, _with
from investigator.evidence import Evidence, iso_utc
from investigator.planner import asks_rollback_decision, extract_mentions
from investigator.release_names import release_named
from investigator.rubric import Intent, MissingEvidence
from investigator.timeline import instant_of

DEPLOYMENT_STATE = "deployment_state"
_ROLLBACK_WORDS = re.compile(r"\broll(?:ed|ing)?[- ]?backs?\b|\brevert", re.IGNORECASE)


class RollbackDecision:
    """What the records say of the incident by as_of, asked "should we roll back?"."""

    def __init__(self, claims: list[Claim], gaps: list[MissingEvidence]) -> None:
        self.claims = claims
        self.gaps = gaps

    @property
    def over(self) -> bool:
        """Whether the records say the incident is over by as_of (a lead claim is stated)."""
        return bool(self.claims)


def rollback_decision(
    evidence: Sequence[Evidence], question: str | None, as_of: datetime
) -> RollbackDecision:
    """Asked whether to roll back: when an incident admitted is recorded resolved by as_of
    (or, none readable, the errors' last sightings are all by as_of), one lead `inference`
    states its resolution, the last sighting of its errors by as_of and
    the rollback a trusted report states (its words), and says that the runbook's rollback
    step is for an open incident; a required `deployment_state` gap says whether the release
    is still deployed is not recorded. Otherwise nothing (the incident is open or the errors
    still seen: the correlation and the runbook step are the answer)."""
    if not asks_rollback_decision(question or ""):
        return RollbackDecision([], [])
    resolved = sorted(
        (
            (at, inc)
            for inc in evidence
            if inc.type == "Incident"
            and (at := instant_of(inc.props.get("resolved_at"))) is not None
            and at <= as_of
        ),
        key=lambda p: (p[0], p[1].element_id),
    )
    stopped: list[tuple[datetime, Evidence]] = []
    ongoing = False
    for ev in sorted(_with(evidence, "error_first_seen"), key=lambda e: e.element_id):
        last = instant_of(ev.props.get("last_seen"))
        if ev.type == "Document" or last is None:
            continue
        if last <= as_of:
            stopped.append((last, ev))
        else:
            ongoing = True
    # Over as recorded: an incident resolved, or (none the subject may read) errors whose
    # last sighting is by as_of and none still seen after it.
    if not resolved and (not stopped or ongoing):
        return RollbackDecision([], [])
    parts = [
        f"{_label(inc)} ({inc.element_id}) is recorded resolved at {iso_utc(at)}"
        for at, inc in resolved
    ]
    cited = [inc for _, inc in resolved]
    for last, ev in stopped:
        parts.append(f"{_label(ev)} was last seen at {iso_utc(last)} ({ev.content})")
        cited.append(ev)
    ended = min([at for at, _ in resolved] + [at for at, _ in stopped])
    for stated in _stated_actions(evidence, as_of):
        if not _ROLLBACK_WORDS.search(stated.sentence):
            continue
        when = f", its time read as {iso_utc(stated.at)}" if stated.at is not None else ""
        parts.append(
            f'{_label(stated.report)} states "{_quote(stated.sentence)}" (its words{when})'
        )
        cited.append(stated.report)
    # The release to roll back: the one the question names ("roll back 2026.07.23.1?"), else
    # the last one by the first incident's resolution (h39: before, the last one even when
    # the question named another).
    deployments = [ev for ev in _with(evidence, "deployment_time") if ev.type == "Deployment"]
    names = extract_mentions(question or "").release_names()
    named = sorted(
        ev.element_id
        for ev in deployments
        if names
        and release_named(
            names,
            ev.element_id,
            ev.name,
            ev.props["release"] if isinstance(ev.props.get("release"), str) else None,
        )
    )
    released = [
        (at, ev.element_id)
        for ev in deployments
        if (at := _instant(ev, _DEPLOY_TIME_KEYS)) is not None and at <= ended
    ]
    releases = named or ([max(released)[1]] if released else [])
    claim = _claim(
        "By as_of "
        + iso_utc(as_of)
        + ": "
        + "; ".join(parts)
        + ". "
        + ("The incident is over as recorded" if resolved else "The errors stopped as recorded")
        + ": the runbook's rollback step below is what to do during an open incident, and "
        "rolling back now would act on whatever is deployed today; no verdict on rolling back "
        "is given",
        EpistemicStatus.INFERENCE,
        0.8,
        cited,
        Intent.INCIDENT_LOOKUP.value,
    )
    gap = MissingEvidence(
        evidence_type=DEPLOYMENT_STATE,
        intents=[Intent.DEPLOYMENT_CORRELATION.value, Intent.INCIDENT_LOOKUP.value],
        description="whether "
        + (" or ".join(releases) if releases else "the release")
        + f" is still deployed at as_of {iso_utc(as_of)}: the KG records no deployment state "
        "after that release (a rollback a report states is its words, not a recorded one)",
        required=True,
    )
    return RollbackDecision([claim], [gap])
