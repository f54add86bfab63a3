"""Changes before the errors or in a period, and the last changes before a time."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from investigator.change_period import EventPeriod
from investigator.claims.candidates import (
    _before_first_error,
    _Candidate,
    _candidate_of,
    _candidates,
    _Causes,
    _finished,
    _sightings,
    _what,
)
from investigator.claims.causes import _clearing_claims, _window_before_first_error
from investigator.claims.errors import _errors_after_release_asked_about, _only_errors_before
from investigator.claims.model import Claim, EpistemicStatus
from investigator.claims.releases import _release_service
from investigator.claims.reports import _window_report_claims
from investigator.claims.wording import (
    _claim,
    _human,
    _label,
    _stopped_words,
    _title,
    _upper_first,
    _valid_text,
    _versioned,
    _with,
)
from investigator.evidence import Evidence, instant_of, iso_utc
from investigator.planner import (
    CHANGE_LOOKBACK,
    DEPLOY_LOOKBACK,
    WIDE_LOOKBACK,
    CompetingCauseChecks,
)
from investigator.rubric import Intent, MissingEvidence
from investigator.timeline import EPISODE, NamedTime


def _changes_before(
    evidence: Sequence[Evidence],
    firsts: Sequence[Evidence],
    mechanisms: Sequence[Evidence],
    checks: CompetingCauseChecks | None,
    as_of: datetime,
    unfinished_by: str | None = None,
    period: tuple[NamedTime, NamedTime] | None = None,
    releases_unread: bool = False,
    *,
    names_an_error: bool = True,
    then_rollout: str | None = None,
    reports: Sequence[Evidence] = (),
    services: Sequence[str] = (),
    retractions: Sequence[Evidence] = (),
    failed_reads: Sequence[str] = (),
) -> _Causes:
    """Answers "what changed before the errors?": each release and other change recorded in
    the lookback before the first error (a release rolling out then too), as a fact with its
    time, and what the mechanism evidence says of it (an inference when a record names it as
    the cause or rules it out). Nothing is called the cause by its time alone.

    A period asked ("in the last hour", "between 09:30 and 10:03") keeps the changes inside
    it; when the searched lookback does not cover it, a required gap says which part was not
    searched (never a list from another window answering for it). `names_an_error`: the
    question names an error; when it does not, an error first seen before every release read
    is not "the errors" (`_errors_after_release_asked_about`). `then_rollout`: the release
    whose rollout start "then" is taken as, the release asked about (as for a correlation).
    `services`: the focus services a period's owners and runbooks were read of.
    `retractions`: the tombstones of DEPENDS_ON and OWNS records retracted in the period
    (`_retractions_in_period`). `failed_reads`: the run's failed reads in plain words, named
    in a period's unfinished-search gap (`_stopped_words`)."""
    intent = Intent.CHANGE_HISTORY.value
    if period is not None and period[0].at <= as_of:
        # The period was read itself (`period_change_steps`): no first error is needed.
        return _changes_in_period(
            evidence,
            period,
            as_of,
            unfinished_by,
            releases_unread,
            services=services,
            retractions=retractions,
            failed_reads=failed_reads,
        )
    seen = _sightings(firsts)
    if not names_an_error and seen:
        # "The errors" are those after the release asked about, as for a correlation: an
        # error its service emitted long before every release is no evidence of them.
        upstream = set(checks.upstream) if checks is not None else set()
        releases = [
            c
            for c in _candidates(evidence)
            if c.kind == "release" and c.evidence.context.get("service") not in upstream
        ]
        reference, later = _errors_after_release_asked_about(
            _candidate_of(releases, then_rollout), releases, seen, as_of
        )
        if reference is not None and not later:
            only = _only_errors_before(
                reference, seen, as_of, evidence, intent, searched=unfinished_by is None
            )
            return _Causes(claims=only.claims)
        if reference is not None:
            kept = {ev.element_id for _, ev in later}
            firsts = [ev for ev in firsts if ev.element_id in kept]
    out = _Causes()
    window = _window_before_first_error(
        evidence, firsts, checks, mechanisms, intent, out, unfinished_by, reports, failed_reads
    )
    if window is None:
        return out
    first_at, first_ev, before = window
    if period is not None:
        start, end = period[0].at, period[1].at
        before = [(c, f) for c, f in before if start <= c.at <= end]
        kept = {f.element_id for _, f in before}
        out.confounders = [f for f in out.confounders if f.element_id in kept]
        searched_from = first_at - CHANGE_LOOKBACK
        if start < searched_from or end > first_at:
            out.missing.append(
                MissingEvidence(
                    evidence_type="change_event",
                    intents=[intent],
                    description=f"the question asks for changes from {iso_utc(start)} to "
                    f"{iso_utc(end)} ({period[0].words!r}); changes were searched only before "
                    f"{_label(first_ev)} was first seen at {iso_utc(first_at)} (releases in "
                    f"the {DEPLOY_LOOKBACK // timedelta(hours=1)} h, other changes in the "
                    f"{_human(CHANGE_LOOKBACK)} before it): the rest of the period was not "
                    "searched"
                    + (
                        f"; of those found, {len(before)} fall in the period and are listed"
                        if before
                        else "; none of those found falls in the period"
                    ),
                    required=True,
                )
            )
    for cand, confounder in before:
        ev = cand.evidence
        out.claims.append(
            _claim(
                f"{_upper_first(_what(cand))} "
                f"{_before_first_error(cand, first_ev, first_at, as_of)}",
                EpistemicStatus.FACT,
                0.9,
                [ev, first_ev],
                intent,
            )
        )
        out.claims += _clearing_claims(cand, mechanisms, intent)
        out.claims += _window_report_claims(
            cand, confounder, before, mechanisms, reports, first_ev, intent
        )
        if confounder.named_by:
            naming = [m for m in mechanisms if m.evidence_id in confounder.named_by]
            out.claims.append(
                _claim(
                    f"Mechanism evidence from {', '.join(sorted(_label(m) for m in naming))} "
                    f"names {_what(cand)} as the cause of {_label(first_ev)}",
                    EpistemicStatus.INFERENCE,
                    0.75,
                    [ev, first_ev, *naming],
                    intent,
                )
            )
    if period is None and first_at < as_of - EPISODE:
        out.claims += _changes_since_old_error(evidence, first_at, first_ev, as_of, intent)
    return out


def _changes_in_period(
    evidence: Sequence[Evidence],
    period: tuple[NamedTime, NamedTime],
    as_of: datetime,
    unfinished_by: str | None,
    releases_unread: bool = False,
    services: Sequence[str] = (),
    retractions: Sequence[Evidence] = (),
    failed_reads: Sequence[str] = (),
) -> _Causes:
    """Answers "what changed in the last hour" ("in July 2026", "since March"): each release
    of the focus services and each other change recorded in the period asked (its end at
    as_of at the latest), as a fact with its time. None found is said, as what was searched,
    unless the search did not finish (then unknown, not absent). With no service named the
    releases of every service the subject may read are read; when no release read ran
    (`releases_unread`: the run stopped first) a required gap says so, never a list of change
    events passed off as every change. A focus service's owner handover, runbook version
    and own end in the period are listed with them, in time order
    (`_record_changes_in_period`); `services`: the focus services whose owners and runbooks
    were read, named in the gap when none is found."""
    intent = Intent.CHANGE_HISTORY.value
    out = _Causes()
    start, end = period[0].at, min(period[1].at, as_of)
    # Both ends' words ("between July 1 and July 10"), said once for a month ("in July").
    words = " ".join(dict.fromkeys((period[0].words, period[1].words)))
    span = f"from {iso_utc(start)} to {iso_utc(end)} ({words!r})"
    inside = [c for c in _candidates(evidence) if start <= c.at <= end]
    timed = [
        (
            cand.at,
            _claim(
                f"{_upper_first(_what(cand))} {_finished(cand)} at {iso_utc(cand.at)}, in the "
                f"period asked, {span}",
                EpistemicStatus.FACT,
                0.9,
                [cand.evidence],
                intent,
            ),
        )
        for cand in inside
    ]
    # Owner handovers, runbook versions and services' ends in the period, in time order
    # with the releases (a stable sort: same-instant releases keep their order).
    records = _period_record_claims(evidence, start, end, span, retractions, services)
    out.claims = [claim for _, claim in sorted([*timed, *records], key=lambda t: t[0])]
    # A release started in the period and rolling out at its end: its finish lies after the
    # period, so the window above misses it; said as under way, never as finished in it.
    rolling = [
        c for c in _candidates(evidence) if c.kind == "release" and start <= c.began <= end < c.at
    ]
    out.claims += [
        _claim(
            f"{_upper_first(_what(cand))} started at {iso_utc(cand.began)}, in the period "
            f"asked, {span}, and had not finished by {_period_end_words(end, as_of)}: under "
            f"way"
            + (f" (finished at {iso_utc(cand.at)}, after the period)" if cand.at <= as_of else ""),
            EpistemicStatus.FACT,
            0.9,
            [cand.evidence],
            intent,
        )
        for cand in rolling
    ]
    if not inside and not rolling and not records:
        description = (
            "unknown, not absent: "
            + _stopped_words(unfinished_by, failed_reads, f"the period {span}")
            if unfinished_by
            else f"no release of {_period_release_owners(services)} and no other change the "
            f"subject may read is recorded {span}" + _record_reads_words(services)
        )
        out.missing.append(
            MissingEvidence(
                evidence_type="change_event",
                intents=[intent],
                description=description,
                required=unfinished_by is not None,
            )
        )
    if unfinished_by and (inside or rolling or records):
        out.missing.append(_incomplete_period_gap(span, unfinished_by, failed_reads))
    if releases_unread:
        out.missing.append(
            MissingEvidence(
                evidence_type="deployment_time",
                intents=[intent],
                description=f"the releases of the period were not read: the changes listed "
                f"{span} are change events, not releases; ask again, or name the service "
                "(--service svc:<name>, or 'what changed on <name> ...') to read its releases "
                "in the period",
                required=True,
            )
        )
    return out


def _last_changes_before(
    evidence: Sequence[Evidence],
    period: EventPeriod,
    as_of: datetime,
    unfinished_by: str | None,
    services: Sequence[str],
    failed_reads: Sequence[str] = (),
) -> _Causes:
    """Answers "what changed before the release?" (`EventPeriod.last_only`): the last
    release of each service asked about finished by the period's end (1 s before the
    release's start), one rolling out then, and every other change of the tenant in the
    period (the day before), each a fact with its time; none after the end. None found is
    said, as what was searched, unless the search did not finish (unknown, not absent)."""
    intent = Intent.CHANGE_HISTORY.value
    out = _Causes()
    end = period.end
    point = f"{iso_utc(end)} ({period.words!r})"
    candidates = _candidates(evidence)
    last: dict[str, _Candidate] = {}
    for cand in candidates:
        service = _release_service(cand.evidence) or ""
        if cand.kind != "release" or cand.at > end or (services and service not in services):
            continue
        last[service] = cand  # sorted by time: the last one stays
    for service, cand in sorted(last.items()):
        of = f" of {service}" if service else ""
        out.claims.append(
            _claim(
                f"{_upper_first(_what(cand))} finished at {iso_utc(cand.at)}, "
                f"{_human(end - cand.at)} before {point}: the last release{of} by then",
                EpistemicStatus.FACT,
                0.9,
                [cand.evidence],
                intent,
            )
        )
    rolling = [c for c in candidates if c.kind == "release" and c.began <= end < c.at]
    out.claims += [
        _claim(
            f"{_upper_first(_what(cand))} started at {iso_utc(cand.began)} and had not "
            f"finished by {point}: under way then"
            + (f" (finished at {iso_utc(cand.at)}, after it)" if cand.at <= as_of else ""),
            EpistemicStatus.FACT,
            0.9,
            [cand.evidence],
            intent,
        )
        for cand in rolling
        if not services or (_release_service(cand.evidence) or "") in services
    ]
    span = f"from {iso_utc(period.start)} to {point}"
    changes = [c for c in candidates if c.kind == "change" and period.start <= c.at <= end]
    out.claims += [
        _claim(
            f"{_upper_first(_what(cand))} happened at {iso_utc(cand.at)}, "
            f"{_human(end - cand.at)} before {point}",
            EpistemicStatus.FACT,
            0.9,
            [cand.evidence],
            intent,
        )
        for cand in changes
    ]
    if not last:
        out.missing.append(
            MissingEvidence(
                evidence_type="deployment_time",
                intents=[intent],
                description=(
                    "unknown, not absent: "
                    + _stopped_words(unfinished_by, failed_reads, f"the releases by {point}")
                    if unfinished_by
                    else f"no release of the services asked about that the subject may read "
                    f"finished by {point}"
                ),
                required=unfinished_by is not None,
            )
        )
    if not changes:
        out.missing.append(
            MissingEvidence(
                evidence_type="change_event",
                intents=[intent],
                description=(
                    "unknown, not absent: "
                    + _stopped_words(unfinished_by, failed_reads, f"the other changes {span}")
                    if unfinished_by
                    else f"no other change the subject may read is recorded {span}"
                ),
                required=unfinished_by is not None,
            )
        )
    return out


def _record_changes_in_period(
    evidence: Sequence[Evidence], start: datetime, end: datetime, span: str
) -> list[tuple[datetime, Claim]]:
    """What else the KG versions changed in the period asked, each a fact with its time and
    kind: an owner handover of a service (the OWNS record ending and the one starting at the
    same instant; a new owner or an owner's end alone said as such), a runbook version put
    in force (with the version it replaced) or ended with no successor, a dependency of the
    service added or ended, and a service's own record ending (decommissioned). Only
    records whose start or end lies in the period (`EvidenceGate._record_change_in_period`
    admits those)."""
    intent = Intent.CHANGE_HISTORY.value

    def inside(t: datetime | None) -> bool:
        return t is not None and start <= t <= end

    out: list[tuple[datetime, Claim]] = []
    owners = [ev for ev in _with(evidence, "ownership") if ev.type == "OWNS"]
    by_service: dict[str, list[Evidence]] = {}
    for ev in owners:
        by_service.setdefault(str(ev.context.get("service") or ""), []).append(ev)
    for service, records in sorted(by_service.items()):
        if not service:
            continue
        for new in sorted(records, key=lambda e: (e.valid_from or start, e.element_id)):
            if not inside(new.valid_from) or new.valid_from is None:
                continue
            at = new.valid_from
            old = [o for o in records if o is not new and o.valid_to == at]
            if old:
                said = "; ".join(f"{o.content} until then ({_valid_text(o)})" for o in old)
                text = (
                    f"Owner handover of {service} at {iso_utc(at)}, in the period asked, "
                    f"{span}: {said}; {new.content} from then ({_valid_text(new)})"
                )
            else:
                text = (
                    f"New owner of {service} from {iso_utc(at)}, in the period asked, {span}: "
                    f"{new.content} ({_valid_text(new)})"
                )
            out.append((at, _claim(text, EpistemicStatus.FACT, 0.9, [new, *old], intent)))
        for old_ev in sorted(records, key=lambda e: e.element_id):
            ends = old_ev.valid_to
            if ends is None or not inside(ends) or any(n.valid_from == ends for n in records):
                continue
            text = (
                f"Owner of {service} ended at {iso_utc(ends)}, in the period asked, {span}: "
                f"{old_ev.content} ({_valid_text(old_ev)}); no later owner of {service} the "
                "subject may read is recorded by known_at"
            )
            out.append((ends, _claim(text, EpistemicStatus.FACT, 0.9, [old_ev], intent)))
    versions = [ev for ev in _with(evidence, "runbook") if ev.type in ("Runbook", "Policy")]
    for new in sorted(versions, key=lambda e: e.element_id):
        if not inside(new.valid_from) or new.valid_from is None:
            continue
        at = new.valid_from
        replaced = [o for o in versions if o.replacement == new.element_id]
        text = (
            f"Runbook version {_versioned(new)} ({_title(new)}) in force from {iso_utc(at)}, "
            f"in the period asked, {span}"
            + "".join(f"; it replaced {_versioned(o)} ({_valid_text(o)})" for o in replaced)
        )
        out.append((at, _claim(text, EpistemicStatus.FACT, 0.9, [new, *replaced], intent)))
    for old_ev in sorted(versions, key=lambda e: e.element_id):
        ends = old_ev.valid_to
        successor = [n for n in versions if n.element_id == old_ev.replacement]
        if ends is None or not inside(ends) or any(inside(n.valid_from) for n in successor):
            continue
        text = (
            f"Runbook version {_versioned(old_ev)} ({_title(old_ev)}) out of force from "
            f"{iso_utc(ends)}, in the period asked, {span}; "
            + (
                f"replaced by {old_ev.replacement}"
                if old_ev.replacement
                else "no later version the subject may read is recorded by known_at"
            )
        )
        out.append((ends, _claim(text, EpistemicStatus.FACT, 0.9, [old_ev], intent)))
    for ev in sorted(_with(evidence, "dependency"), key=lambda e: e.element_id):
        if ev.type != "DEPENDS_ON":
            continue
        if inside(ev.valid_from) and ev.valid_from is not None:
            text = (
                f"Dependency added at {iso_utc(ev.valid_from)}, in the period asked, {span}: "
                f"{ev.content} ({_valid_text(ev)})"
            )
            out.append((ev.valid_from, _claim(text, EpistemicStatus.FACT, 0.9, [ev], intent)))
        if inside(ev.valid_to) and ev.valid_to is not None:
            text = (
                f"Dependency ended at {iso_utc(ev.valid_to)}, in the period asked, {span}: "
                f"{ev.content} ({_valid_text(ev)})"
            )
            out.append((ev.valid_to, _claim(text, EpistemicStatus.FACT, 0.9, [ev], intent)))
    for ev in sorted(evidence, key=lambda e: e.element_id):
        ends = ev.valid_to
        if ev.type != "Service" or ev.status != "active" or ends is None or not inside(ends):
            continue
        how = " (decommissioned)" if ev.props.get("decommissioned") is True else ""
        text = (
            f"Service {ev.element_id} ended at {iso_utc(ends)}{how}, in the period asked, "
            f"{span}: its record is {_valid_text(ev)}"
        )
        out.append((ends, _claim(text, EpistemicStatus.FACT, 0.9, [ev], intent)))
    return out


def _period_release_owners(services: Sequence[str]) -> str:
    """Whose releases a period's none-found gap says were read: the services asked about,
    or "any service of the tenant" when none was named ("what happened last week?" reads
    every release the subject may read; before, it said "the services asked about")."""
    return "the services asked about" if services else "any service of the tenant"


def _period_record_claims(
    evidence: Sequence[Evidence],
    start: datetime,
    end: datetime,
    span: str,
    retractions: Sequence[Evidence] = (),
    services: Sequence[str] = (),
) -> list[tuple[datetime, Claim]]:
    """The record changes of the period asked (`_record_changes_in_period`), the start of a
    focus service (`services`, `_service_starts_in_period`) and the retractions recorded in
    it (`_retractions_in_period`), each with its time."""
    return [
        *_service_starts_in_period(evidence, start, end, span, services),
        *_record_changes_in_period(evidence, start, end, span),
        *_retractions_in_period(retractions, start, end, span),
    ]


def period_change_times(
    evidence: Sequence[Evidence],
    period: tuple[NamedTime, NamedTime] | None,
    as_of: datetime,
    retractions: Sequence[Evidence] = (),
    services: Sequence[str] = (),
) -> dict[str, tuple[datetime, str]]:
    """(when it happened, "") of each record change a change question's period lists, by
    claim id: the answer's timeline places an owner handover, a runbook version, a
    dependency, a service's start or end and a retraction by its time among the releases
    (before, they came after every release, by their text). Empty with no period read."""
    if period is None or period[0].at > as_of:
        return {}
    start, end = period[0].at, min(period[1].at, as_of)
    words = " ".join(dict.fromkeys((period[0].words, period[1].words)))
    span = f"from {iso_utc(start)} to {iso_utc(end)} ({words!r})"
    # A service's start leads the changes of its instant (its first owner and dependencies
    # begin with it); the others follow by their text, before the releases of that instant.
    starts = {
        c.claim_id for _, c in _service_starts_in_period(evidence, start, end, span, services)
    }
    return {
        claim.claim_id: (at, "0" if claim.claim_id in starts else "1")
        for at, claim in _period_record_claims(evidence, start, end, span, retractions, services)
    }


def _service_starts_in_period(
    evidence: Sequence[Evidence],
    start: datetime,
    end: datetime,
    span: str,
    services: Sequence[str] = (),
) -> list[tuple[datetime, Claim]]:
    """A focus service (`services`: those whose owners and runbooks the period read; none
    when the question names none) whose life began in the period asked: its first record
    (version 1, so no earlier record of it could start it sooner) valid from an instant in
    it, a fact
    with its time ("what changed on payment-api in January 2025?": it began 2025-01-01). A
    service re-recorded since (version above 1) is not said to begin at its current record's
    start: that may be when its record changed, not when it began."""
    intent = Intent.CHANGE_HISTORY.value
    out: list[tuple[datetime, Claim]] = []
    seen: set[str] = set()
    for ev in sorted(evidence, key=lambda e: (e.element_id, e.version)):
        began = ev.valid_from
        if (
            ev.type != "Service"
            or ev.element_id not in services
            or ev.status != "active"
            or ev.version != 1
            or began is None
            or not start <= began <= end
            or ev.element_id in seen
        ):
            continue
        seen.add(ev.element_id)
        text = (
            f"Service {ev.element_id} began at {iso_utc(began)}, in the period asked, {span}: "
            f"its first record is {_valid_text(ev)}"
        )
        out.append((began, _claim(text, EpistemicStatus.FACT, 0.9, [ev], intent)))
    return out


def _retractions_in_period(
    tombstones: Sequence[Evidence], start: datetime, end: datetime, span: str
) -> list[tuple[datetime, Claim]]:
    """A DEPENDS_ON or OWNS record retracted in the period asked (its tombstone recorded in
    it, `retractions_in_period`), a fact with its time: what the record said, its interval,
    why it was retracted, and that it is no dependency (no owner) since; the tombstone, which
    keeps the retracted record's ACL and interval, is its evidence. A record of the edge
    made again after the retraction is said with it."""
    intent = Intent.CHANGE_HISTORY.value
    out: list[tuple[datetime, Claim]] = []
    for ev in sorted(tombstones, key=lambda e: (e.recorded_at or start, e.element_id)):
        at = ev.recorded_at
        if ev.status != "retracted" or at is None or not start <= at <= end:
            continue
        kind, what = (
            ("Owner record", "no owner")
            if ev.type == "OWNS"
            else ("Dependency record", "no dependency")
        )
        reason = str(ev.props.get("retraction_reason") or "no reason recorded")
        again = instant_of(ev.context.get("superseded_at"))
        text = (
            f"{kind} retracted at {iso_utc(at)}, in the period asked, {span}: {ev.content} "
            f"({_valid_text(ev)}) was retracted ({reason}); "
            + (
                f"a record of it was made again at {iso_utc(again)}"
                if again is not None
                else f"it is {what} (no later record of it is known at known_at)"
            )
        )
        out.append((at, _claim(text, EpistemicStatus.FACT, 0.9, [ev], intent)))
    return out


def _incomplete_period_gap(
    span: str, unfinished_by: str, failed_reads: Sequence[str] = ()
) -> MissingEvidence:
    """A change period whose search did not finish (a read failed, or the run stopped) while
    some changes were found: those are listed, and the list is said to be possibly
    incomplete, never passed off as every change of the period (before, only the Reads line
    said a read had failed)."""
    return MissingEvidence(
        evidence_type="change_event",
        intents=[Intent.CHANGE_HISTORY.value],
        description="unknown, not absent: "
        + _stopped_words(unfinished_by, failed_reads, f"the period {span}")
        + ", so the changes listed may be incomplete (what the unfinished reads were to find "
        "is not known); ask again",
        required=True,
    )


def _record_reads_words(services: Sequence[str]) -> str:
    """What else the period's search read, said in its "nothing found" gap: the owners and
    runbook versions of the focus services (none when the question names no service)."""
    if not services:
        return ""
    return (
        f"; nor an owner handover, a runbook version or a dependency of {', '.join(services)} "
        "beginning or ending in it"
    )


def _period_end_words(end: datetime, as_of: datetime) -> str:
    """`as_of T` when the period asked is read up to as_of, else `the period's end T`."""
    return f"as_of {iso_utc(as_of)}" if end == as_of else f"the period's end {iso_utc(end)}"


def _changes_since_old_error(
    evidence: Sequence[Evidence],
    first_at: datetime,
    first_ev: Evidence,
    as_of: datetime,
    intent: str,
) -> list[Claim]:
    """The only first error known is of no episode by `as_of` (a day or more before it): the
    releases and changes that finished in the day before `as_of` are said with it, so an old
    error never stands alone for "the errors" (a rollout still under way at `as_of` is said
    by the rollout fact)."""
    recent = [c for c in _candidates(evidence) if as_of - EPISODE <= c.at <= as_of]
    return [
        _claim(
            f"{_upper_first(_what(cand))} {_finished(cand)} at {iso_utc(cand.at)}, "
            f"{_human(as_of - cand.at)} before as_of {iso_utc(as_of)}: no error first seen "
            f"after it is known at as_of ({_label(first_ev)}, first seen at "
            f"{iso_utc(first_at)}, predates it)",
            EpistemicStatus.FACT,
            0.9,
            [cand.evidence, first_ev],
            intent,
        )
        for cand in recent
    ]


def _with_change_records(gap: MissingEvidence, evidence: Sequence[Evidence]) -> MissingEvidence:
    """A missing-mechanism gap of a root-cause question, naming the change documents read
    (a pipeline run, its config diff): they say what changed, and what would decide it is
    a record of how that change made the errors."""
    docs = sorted(
        {
            ev.element_id
            for ev in _with(evidence, "change_event")
            if ev.type == "Document" and "mechanism" not in ev.evidence_types
        }
    )
    if gap.evidence_type != "mechanism" or not gap.required or not docs:
        return gap
    return gap.model_copy(
        update={
            "description": f"{gap.description}; the change records read ({', '.join(docs)}) "
            "say what changed (e.g. a config diff), not that it caused the errors: a record "
            "of how it did would decide between the candidate causes"
        }
    )


def _changes_by_as_of(
    evidence: Sequence[Evidence],
    firsts: Sequence[Evidence],
    as_of: datetime,
    services: Sequence[str],
    *,
    unnamed: bool = False,
) -> _Causes | None:
    """Answers "what changed on risk-engine?" asked of services none of whose errors is
    known by as_of (no first error to date a window before): the releases of the services
    asked about and the other changes the run read before as_of (the windows end at as_of
    then: releases in the `WIDE_LOOKBACK`, other changes in the `CHANGE_LOOKBACK` before
    it), each a fact with its time; the gap that no error dates them is said, not required.
    `unnamed`: the question names nothing ("did anything change then?" with no service):
    every release and change of the tenant the run read in the `DEPLOY_LOOKBACK` before
    as_of (planner.unnamed_change_steps). None when an error is known (the window before it
    answers) or nothing was read."""
    if _sightings(firsts) or not (services or unnamed):
        return None
    intent = Intent.CHANGE_HISTORY.value
    found = [
        c
        for c in _candidates(evidence)
        if c.at <= as_of
        and (unnamed or c.kind != "release" or (_release_service(c.evidence) or "") in services)
    ]
    if not found:
        return None
    out = _Causes()
    for cand in found:
        out.claims.append(
            _claim(
                f"{_upper_first(_what(cand))} {_finished(cand)} at {iso_utc(cand.at)}, "
                f"{_human(as_of - cand.at)} before as_of",
                EpistemicStatus.FACT,
                0.9,
                [cand.evidence],
                intent,
            )
        )
    if unnamed:
        out.missing.append(
            MissingEvidence(
                evidence_type="error_first_seen",
                intents=[intent],
                description="the question names no service, alert or error code, so no "
                "error dates a window: the changes listed are every release and change the "
                f"subject may read in the {DEPLOY_LOOKBACK // timedelta(hours=1)} h before "
                f"as_of {iso_utc(as_of)}; name the service (--service X) or the "
                "error code for the window before its errors",
                required=False,
            )
        )
        return out
    out.missing.append(
        MissingEvidence(
            evidence_type="error_first_seen",
            intents=[intent],
            description=f"no error of {', '.join(services)} is known by as_of "
            f"{iso_utc(as_of)}: the changes listed are those recorded before as_of (releases "
            f"of {', '.join(services)} in the {WIDE_LOOKBACK // timedelta(days=1)} d, the "
            f"tenant's other changes in the {_human(CHANGE_LOOKBACK)} before it), not a window "
            "before an "
            "error; name a period ('what changed on it yesterday?') to read another",
            required=False,
        )
    )
    return out
