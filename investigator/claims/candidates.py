"""Cause candidates: the changes before the first error, their timing words, sightings of
the errors, and confounders.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from pydantic import BaseModel, Field

from investigator.claims.mechanisms import (
    _clearing_sentence,
    _name_position,
    _names_as_cause,
    _names_of,
    _report_sentence,
)
from investigator.claims.model import CauseAssessment, Claim, Confounder, Verdict
from investigator.claims.wording import (
    _CHANGE_TIME_KEYS,
    _DEPLOY_TIME_KEYS,
    _FIRST_SEEN_KEYS,
    _about,
    _change_id,
    _human,
    _instant,
    _label,
    _release_of,
    _with,
)
from investigator.evidence import Evidence, iso_utc
from investigator.gate import authority
from investigator.planner import extract_mentions
from investigator.release_names import release_named
from investigator.rubric import MissingEvidence
from investigator.timeline import CONFOUNDER_WINDOW as CONFOUNDER_WINDOW
from investigator.timeline import ReferenceTime, instant_of

# How far before the first error another change counts as a confounder (timeline.py: "what
# changed around the release?" reads that far on either side of it), and how long after a
# release an error may appear and still be called time-correlated.


CORRELATION_WINDOW = timedelta(minutes=30)


# From how many competing causes that no mechanism record rules out a correlation verdict is
# lowered one step more than for any confounder: no stronger than `uncertain`.
UNEXPLAINED_CAUSES = 2


class _Candidate(BaseModel):
    """A change that could have started the errors: a release or another change event."""

    evidence: Evidence
    at: datetime
    kind: str  # "release" | "change"
    # When it began to take effect: a release's rollout start (its record's `started_at`),
    # else `at`. An error first seen at or after it can be about the change; before, never.
    began: datetime

    def began_by(self, at: datetime) -> bool:
        """Whether the change had begun by `at` (an error first seen then can be its effect;
        the start instant itself counts, as a rollout is under way from its start)."""
        return self.began <= at

    def in_window_before(self, first_at: datetime, window: timedelta) -> bool:
        """Whether it had begun by the first error and finished no more than `window`
        before it: finished within the window, or still rolling out when the error came."""
        return self.began_by(first_at) and first_at - window <= self.at

    def rolling_at(self, at: datetime) -> bool:
        """Whether `at` lies inside its rollout (started, not finished)."""
        return self.began <= at < self.at


def _rollout_start(ev: Evidence, finished: datetime) -> datetime:
    """A release's rollout start from its own record (`started_at`, no later than its
    finish), else its finish: from then on, errors can be its effect."""
    if ev.type != "Deployment":
        return finished
    started = instant_of(ev.context.get("started_at", ev.props.get("started_at")))
    return started if started is not None and started <= finished else finished


def _candidates(evidence: Sequence[Evidence]) -> list[_Candidate]:
    """Releases and other change events with their instants, one per change (sorted)."""
    timed = _with(evidence, "deployment_time")
    deployments = [ev for ev in timed if ev.type == "Deployment"]
    # Without Deployment records, the documents stating a release time stand for it: per
    # release, the most authoritative one.
    releases = deployments or [ev for ev in timed if _release_of(ev) is not None] or timed
    best: dict[str, Evidence] = {}
    for ev in sorted(releases, key=lambda e: (authority(e), e.evidence_id), reverse=True):
        best.setdefault(_change_id(ev), ev)
    out = [
        _Candidate(evidence=ev, at=t, kind="release", began=_rollout_start(ev, t))
        for ev in best.values()
        if (t := _instant(ev, _DEPLOY_TIME_KEYS))
    ]
    for ev in _with(evidence, "change_event"):
        if ev in releases or _release_of(ev) is not None:
            continue  # a record of a release's time (CI/CD document), not another change
        if any(_about(ev, r) for r in best):
            continue
        if (t := _instant(ev, _CHANGE_TIME_KEYS)) is not None:
            out.append(_Candidate(evidence=ev, at=t, kind="change", began=t))
    return sorted(out, key=lambda c: (c.at, c.evidence.element_id))


def _version(ev: Evidence) -> str | None:
    """A release record's version (its `release`), which a question may name it by."""
    release = ev.props.get("release")
    return release if isinstance(release, str) else None


def _named_in_question(
    question: str | None, candidates: Sequence[_Candidate]
) -> tuple[_Candidate | None, list[str]]:
    """The change the question names (the first one named), and the named releases that
    are not among the candidates (no deployment-time evidence for them)."""
    if not question:
        return None, []
    positions = [
        (pos, c.evidence.element_id, c)
        for c in candidates
        if (pos := _name_position(question, c.evidence)) is not None
    ]
    named = min(positions, key=lambda p: (p[0], p[1]))[2] if positions else None
    absent = [
        name
        for name in extract_mentions(question).release_names()
        if not any(
            name.lower() in {n.lower() for n in _names_of(c.evidence)}
            or release_named([name], c.evidence.element_id, c.evidence.name, _version(c.evidence))
            for c in candidates
        )
    ]
    return named, absent


def _what(cand: _Candidate) -> str:
    ev = cand.evidence
    if cand.kind == "release":
        if ev.type == "Document" and _release_of(ev) is None:
            # A document's release time standing for a release it names by no id.
            return f"a release recorded in {_label(ev)} ({ev.element_id})"
        return f"release {_change_id(ev)}"
    return f"change {_label(ev)} ({ev.element_id})"


def _finished(cand: _Candidate) -> str:
    return "finished" if cand.kind == "release" else "happened"


def _finish_words(cand: _Candidate, as_of: datetime) -> str:
    """`finished at F`, or, for a rollout still under way at as_of, that it had not (its
    finish, after as_of, is not stated)."""
    if cand.at <= as_of:
        return f"{_finished(cand)} at {iso_utc(cand.at)}"
    return f"not {_finished(cand)} by as_of {iso_utc(as_of)}"


def _during_rollout(cand: _Candidate, first_at: datetime, as_of: datetime) -> str:
    """`N after release X started at S, during its rollout (finished at F)`: an error first
    seen while the release was rolling out."""
    return (
        f"{_human(first_at - cand.began)} after {_what(cand)} started at "
        f"{iso_utc(cand.began)}, during its rollout ({_finish_words(cand, as_of)})"
    )


def _before_first_error(
    cand: _Candidate, first_ev: Evidence, first_at: datetime, as_of: datetime
) -> str:
    """When a change came before the first error: `finished at F, N before E was first
    seen`, or, for a release still rolling out then, since when and that it was."""
    if not cand.rolling_at(first_at):
        return (
            f"{_finished(cand)} at {iso_utc(cand.at)}, {_human(first_at - cand.at)} before "
            f"{_label(first_ev)} was first seen"
        )
    return (
        f"started at {iso_utc(cand.began)}, {_human(first_at - cand.began)} before "
        f"{_label(first_ev)} was first seen, and was still rolling out then "
        f"({_finish_words(cand, as_of)})"
    )


class _Correlation(BaseModel):
    """What the correlation rules concluded."""

    verdict: Verdict
    claims: list[Claim] = Field(default_factory=list)
    confounders: list[Confounder] = Field(default_factory=list)
    missing: list[MissingEvidence] = Field(default_factory=list)
    # False when no error after the release is known: no correlation was drawn at all, so
    # the mechanism gap must not speak of one "in time only".
    drawn: bool = True


def _sightings(firsts: Sequence[Evidence]) -> list[tuple[datetime, Evidence]]:
    """The first-seen instants the evidence states, each with its record: error-code
    first-seen records (with an explicit instant) beat documents that mention it."""
    explicit = [ev for ev in firsts if "first_seen" in ev.context] or list(firsts)
    return [(t, ev) for ev in explicit if (t := _instant(ev, _FIRST_SEEN_KEYS))]


def _first_error(seen: Sequence[tuple[datetime, Evidence]]) -> tuple[datetime, Evidence]:
    """The earliest sighting (ties: by element id)."""
    return min(seen, key=lambda p: (p[0], p[1].element_id))


def _confounder(
    cand: _Candidate, mechanisms: Sequence[Evidence], reports: Sequence[Evidence] = ()
) -> Confounder:
    """A competing or candidate cause, with what the mechanism evidence says of it (and
    which reports that record no mechanism name it as the cause)."""
    ev = cand.evidence
    clearing = sorted(m.evidence_id for m in mechanisms if _clearing_sentence(m, ev))
    naming = sorted(
        m.evidence_id
        for m in mechanisms
        if m.evidence_id not in clearing and _names_as_cause(m, ev)
    )
    reported = sorted(r.evidence_id for r in reports if _report_sentence(r, ev))
    if clearing and naming:
        assessment = CauseAssessment.DISPUTED
    elif clearing:
        assessment = CauseAssessment.RULED_OUT
    elif naming:
        assessment = CauseAssessment.NAMED_AS_CAUSE
    elif reported:
        assessment = CauseAssessment.REPORTED_AS_CAUSE
    else:
        assessment = CauseAssessment.NO_MECHANISM_EVIDENCE
    return Confounder(
        evidence_id=ev.evidence_id,
        element_id=ev.element_id,
        at=cand.at,
        started_at=cand.began if cand.began < cand.at else None,
        description=f"{_label(ev)} at {iso_utc(cand.at)}: {ev.content}",
        assessment=assessment,
        ruled_out_by=clearing,
        named_by=naming,
        reported_by=reported,
    )


def _rollout_taken_as_then(
    evidence: Sequence[Evidence], refs: Sequence[ReferenceTime], as_of: datetime
) -> str | None:
    """The record of the release whose rollout, under way at `as_of`, the question's "then"
    is taken as (its start): at as_of 10:00, release-2026.07.23.1, rolling out since
    09:55:12. A change question asked "then" is about it, not about the latest release
    finished by as_of (before h29-then2, release-2026.07.20.2 of three days before, with "no
    time correlation can be drawn yet")."""
    for cand in _candidates(evidence):
        if cand.kind == "release" and cand.rolling_at(as_of):
            record = cand.evidence.element_id
            if any(
                r.kind == "event" and r.element_id == record and r.at == cand.began for r in refs
            ):
                return record
    return None


def _candidate_of(candidates: Sequence[_Candidate], record: str | None) -> _Candidate | None:
    """The candidate read from `record`, if any."""
    return next((c for c in candidates if record and c.evidence.element_id == record), None)


class _Causes(BaseModel):
    """An open root-cause question's candidate causes."""

    claims: list[Claim] = Field(default_factory=list)
    confounders: list[Confounder] = Field(default_factory=list)
    missing: list[MissingEvidence] = Field(default_factory=list)
