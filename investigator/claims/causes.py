"""The correlation verdict for the change asked about, and the competing causes in the
window before the first error.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from investigator.claims.candidates import (
    CONFOUNDER_WINDOW,
    CORRELATION_WINDOW,
    UNEXPLAINED_CAUSES,
    _before_first_error,
    _Candidate,
    _candidate_of,
    _candidates,
    _Causes,
    _confounder,
    _Correlation,
    _during_rollout,
    _finished,
    _first_error,
    _named_in_question,
    _sightings,
    _what,
)
from investigator.claims.errors import (
    _change_fact,
    _errors_after_release_asked_about,
    _named_release_missing,
    _names_an_error,
    _no_first_error_yet,
    _only_errors_before,
)
from investigator.claims.mechanisms import (
    _CHANGE_REFERENCE,
    _clearing_sentence,
    _names_as_cause,
    _report_sentence,
)
from investigator.claims.model import (
    _LOWER,
    CauseAssessment,
    Claim,
    Confounder,
    EpistemicStatus,
    Verdict,
)
from investigator.claims.reports import _report_claims, _reported_hypothesis, _window_report_claims
from investigator.claims.wording import (
    READ_FAILED,
    UNKNOWN_NOT_ABSENT,
    _about,
    _change_id,
    _claim,
    _human,
    _label,
    _quote,
    _stopped_words,
    _unfinished_why,
    _upper_first,
    _with,
    checks_not_run_words,
)
from investigator.evidence import Evidence, iso_utc
from investigator.gate import Conflict
from investigator.planner import CHANGE_LOOKBACK, DEPLOY_LOOKBACK, CompetingCauseChecks
from investigator.rubric import Intent, MissingEvidence


def _erring_services(firsts: Sequence[Evidence]) -> frozenset[str]:
    """The services the first-seen records say emitted the errors (`svc|EMITTED|err`); empty
    when none says (documents only, or no EMITTED record this subject may read)."""
    out = set()
    for ev in firsts:
        if ev.kind != "relationship" or ev.type != "EMITTED":
            continue
        service = ev.context.get("service") or (
            ev.element_id.split("|")[1] if ev.element_id.count("|") == 2 else None
        )
        if isinstance(service, str) and service:
            out.add(service)
    return frozenset(out)


def _releases_of_the_errors(
    candidates: Sequence[_Candidate],
    upstream: set[str],
    erring: frozenset[str],
    named: _Candidate | None,
) -> list[_Candidate]:
    """`candidates` without the releases of services that are neither among `erring` (the
    services that emitted the errors) nor `upstream`, when a release of an erring service
    is among them: such a release is neither the release asked about nor a cause of
    another service's errors. The release the question names stays; with no release of an
    erring service (a dependent's question: "did the release break checkout?") all stay."""

    def service(c: _Candidate) -> object:
        return c.evidence.context.get("service")

    releases = [c for c in candidates if c.kind == "release" and service(c) not in upstream]
    if not any(service(c) in erring for c in releases):
        return list(candidates)
    stray = {id(c) for c in releases if service(c) is not None and service(c) not in erring}
    return [c for c in candidates if id(c) not in stray or c is named]


def _taken_release_facts(
    claims: Sequence[Claim],
    evidence: Sequence[Evidence],
    taken: Sequence[str],
    as_of: datetime,
) -> list[Claim]:
    """Each release a correlation question naming no service was read as asking about
    (`taken`: several when no error told them apart, or each service's emitted errors after
    its own; `RetrievalLoop._take_release`) stated, when no claim states it yet: the verdict
    weighs one release, and the others are listed beside it, never dropped silently."""
    if len(taken) < 2:
        return []
    stated = " ".join(c.statement for c in claims)
    return [
        _change_fact(c, evidence, Intent.DEPLOYMENT_CORRELATION.value, as_of)
        for c in _candidates(evidence)
        if c.kind == "release"
        and c.evidence.element_id in taken
        and f"({c.evidence.element_id})" not in stated
    ]


def _correlation(
    evidence: Sequence[Evidence],
    firsts: Sequence[Evidence],
    mechanisms: Sequence[Evidence],
    conflicts: Sequence[Conflict],
    as_of: datetime,
    checks: CompetingCauseChecks | None = None,
    question: str | None = None,
    searched: bool = True,
    then_rollout: str | None = None,
    *,
    reports: Sequence[Evidence] = (),
    known_at: datetime | None = None,
    asked: Sequence[str] = (),
    cause_reads_failed: Sequence[str] = (),
) -> _Correlation:
    """The verdict on the change the question names (else the release closest before the
    first error), with the other changes of the window as competing causes. `searched`:
    the loop ran every read it planned (else no first error is said to be not known).
    `then_rollout`: the record of the release whose rollout start the question's "then" is
    taken as (`_rollout_taken_as_then`): the release asked about, as if named. `reports`:
    the trusted documents that record no mechanism (`_cause_reports`): a change one names as
    the cause is said to be so named, with the records that disagree, never "no mechanism
    evidence about it"; they do not move the verdict. `known_at`: before as_of, "no error is
    known" is said of what was recorded by then. `asked`: the services the run read as asked
    about; with no release of theirs, one of a service they depend on is said to be so
    (`_upstream_release_only`), never the release asked about. `cause_reads_failed`: the
    run's failed reads of releases or changes, in plain words: a release or change they were
    to read may be another cause, so the verdict is no stronger than uncertain (a gap names
    them, `_unread_causes_gap`)."""
    intent = Intent.DEPLOYMENT_CORRELATION.value
    upstream = set(checks.upstream) if checks is not None else set()
    candidates = _candidates(evidence)
    seen = _sightings(firsts)
    # The link between the error and a service: the incident's AFFECTED_BY records, else an
    # EMITTED record (a subject who may not read the incident, or no --service).
    affected = _with(evidence, "affected_service") or [
        ev for ev in evidence if ev.kind == "relationship" and ev.type == "EMITTED"
    ]
    named, absent = _named_in_question(question, candidates)
    if named is None and absent:
        return _named_release_missing(
            absent, seen, candidates, mechanisms, intent, as_of, reports=reports
        )
    named = named or _candidate_of(candidates, then_rollout)
    # A release of a service that emitted none of the errors nor is upstream (a `--service`
    # left from an earlier command) is not counted beside the erring services' own.
    candidates = _releases_of_the_errors(candidates, upstream, _erring_services(firsts), named)
    # Deployments of upstream services are competing causes, never the release asked about.
    own_releases = [
        c
        for c in candidates
        if c.kind == "release" and c.evidence.context.get("service") not in upstream
    ]
    if not seen:
        return _no_first_error_yet(
            named,
            own_releases,
            as_of,
            question,
            evidence,
            intent,
            searched=searched,
            known_at=known_at,
        )
    if question is not None and not _names_an_error(question):
        # Without a question, the errors handed in are the ones asked about.
        reference, later = _errors_after_release_asked_about(named, own_releases, seen, as_of)
        if reference is not None:
            if not later:
                return _only_errors_before(
                    reference, seen, as_of, evidence, intent, searched=searched
                )
            seen = later
    first_at, first_ev = _first_error(seen)
    # Begun by the first error: finished before it, or rolling out when it came.
    before = [c for c in own_releases if c.began_by(first_at)]
    # The release closest before the first error: the default subject, and the one a
    # mechanism record that names no change is read as being about.
    closest = max(before, key=lambda c: (c.began, c.at, c.evidence.element_id)) if before else None
    subject = named or closest
    if subject is None:
        if not own_releases:
            return _upstream_release_only(
                candidates, upstream, asked, first_ev, first_at, evidence, intent, as_of
            )
        after = min(own_releases, key=lambda c: (c.began, c.evidence.element_id))
        return _Correlation(
            verdict=Verdict.REFUTED,
            claims=[_after_first_error(after, first_ev, first_at, intent)],
        )
    subject_ev = subject.evidence
    claims: list[Claim] = [_change_fact(subject, evidence, intent, as_of)]
    if not subject.began_by(first_at):
        claims.append(_after_first_error(subject, first_ev, first_at, intent))
        return _Correlation(verdict=Verdict.REFUTED, claims=claims)
    gap = first_at - subject.at
    basis = [subject_ev, first_ev, *affected]
    if subject.rolling_at(first_at):
        claims.append(
            _claim(
                f"{_label(first_ev)} was first seen {_during_rollout(subject, first_at, as_of)}"
                ": a time correlation, not by itself a root cause",
                EpistemicStatus.INFERENCE,
                0.85,
                basis,
                intent,
            )
        )
        verdict = Verdict.LIKELY
    elif gap > CORRELATION_WINDOW:
        claims.append(
            _claim(
                f"{_label(first_ev)} was first seen {_human(gap)} after {_what(subject)} "
                f"{_finished(subject)}, outside the {_human(CORRELATION_WINDOW)} "
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
                f"{_label(first_ev)} was first seen {_human(gap)} after {_what(subject)} "
                f"{_finished(subject)} ({iso_utc(subject.at)} -> {iso_utc(first_at)}): "
                "a time correlation, not by itself a root cause",
                EpistemicStatus.INFERENCE,
                0.85,
                basis,
                intent,
            )
        )
        verdict = Verdict.LIKELY
    others = [c for c in candidates if _change_id(c.evidence) != _change_id(subject_ev)]
    # A mechanism record names the changes it is about; one naming none is read, as before,
    # as being about the release closest before the first error.
    names_none = [
        m
        for m in mechanisms
        if not _CHANGE_REFERENCE.search(m.content)
        and not any(_names_as_cause(m, c.evidence) for c in candidates)
    ]
    implicating = [
        m
        for m in mechanisms
        if _clearing_sentence(m, subject_ev) is None
        and (_names_as_cause(m, subject_ev) or (subject is closest and m in names_none))
    ]
    clearing = [(m, s) for m in mechanisms if (s := _clearing_sentence(m, subject_ev))]

    def elsewhere(cand: _Candidate) -> list[tuple[Evidence, _Candidate]]:
        """The mechanism records that name another change than `cand` as the cause."""
        return [
            (m, c)
            for c in [subject, *others]
            if _change_id(c.evidence) != _change_id(cand.evidence)
            for m in mechanisms
            if _clearing_sentence(m, c.evidence) is None
            and (_names_as_cause(m, c.evidence) or (c is closest and m in names_none))
        ]

    if implicating:
        claims.append(
            _claim(
                f"{_upper_first(_what(subject))} caused {_label(first_ev)}, according to "
                "mechanism evidence from " + ", ".join(sorted(_label(ev) for ev in implicating)),
                EpistemicStatus.INFERENCE,
                0.8,
                [subject_ev, first_ev, *implicating],
                intent,
            )
        )
        if verdict is Verdict.LIKELY:
            verdict = Verdict.CONFIRMED
    for mechanism, sentence in clearing:
        claims.append(
            _claim(
                f'{_label(mechanism)} rules out {_what(subject)}: "{_quote(sentence)}"',
                EpistemicStatus.INFERENCE,
                0.8,
                [subject_ev, mechanism],
                intent,
            )
        )
    reported = _reported_hypothesis(subject, reports)
    if not implicating and not clearing:
        # A report naming it (a draft postmortem) is what was recorded of it: said so, never
        # "no mechanism evidence about it" beside it (before h30-draft it was).
        naming_reports = [r for r in reports if _report_sentence(r, subject_ev)]
        claims.append(
            _claim(
                f"{_upper_first(_what(subject))} may have caused {_label(first_ev)} "
                + (f"({reported})" if reported else "(no mechanism evidence about it)"),
                EpistemicStatus.HYPOTHESIS,
                0.5,
                [subject_ev, first_ev, *naming_reports],
                intent,
            )
        )
    claims += _report_claims(
        subject, reports, first_ev, intent, elsewhere(subject), [m for m, _ in clearing]
    )
    confounders: list[Confounder] = []
    unexplained: list[Evidence] = []  # competing causes no mechanism record rules out
    for other in others:
        ev = other.evidence
        if _about(ev, _change_id(subject_ev)):
            continue
        if not other.in_window_before(first_at, CONFOUNDER_WINDOW):
            continue
        confounders.append(_confounder(other, mechanisms, reports))
        if confounders[-1].assessment is not CauseAssessment.RULED_OUT:
            unexplained.append(ev)
        claims.append(
            _claim(
                f"Another change, {_label(ev)} ({ev.element_id}), "
                + (
                    _before_first_error(other, first_ev, first_at, as_of)
                    if other.rolling_at(first_at)
                    else f"happened at {iso_utc(other.at)}, within {_human(CONFOUNDER_WINDOW)} "
                    f"before {_label(first_ev)} was first seen"
                )
                + ": it could explain the errors as well",
                EpistemicStatus.FACT,
                0.9,
                [ev],
                intent,
            )
        )
        for mechanism in mechanisms:
            if (ruled_out := _clearing_sentence(mechanism, ev)) is not None:
                claims.append(
                    _claim(
                        f'{_label(mechanism)} rules out {_what(other)}: "{_quote(ruled_out)}"',
                        EpistemicStatus.INFERENCE,
                        0.8,
                        [ev, mechanism],
                        intent,
                    )
                )
        claims += _report_claims(
            other,
            reports,
            first_ev,
            intent,
            elsewhere(other),
            [m for m in mechanisms if m.evidence_id in confounders[-1].ruled_out_by],
        )
    if subject is not closest or named is not None:
        # The question asked about one change: say where the mechanism evidence points instead.
        for other in others:
            pointing = [
                m
                for m in mechanisms
                if m not in implicating
                and _clearing_sentence(m, other.evidence) is None
                and (_names_as_cause(m, other.evidence) or (other is closest and m in names_none))
            ]
            if pointing:
                claims.append(
                    _claim(
                        "Mechanism evidence from "
                        + ", ".join(sorted(_label(ev) for ev in pointing))
                        + f" points to {_what(other)} ({_finished(other)} at "
                        f"{iso_utc(other.at)}) as the cause of {_label(first_ev)}",
                        EpistemicStatus.INFERENCE,
                        0.75,
                        [other.evidence, *pointing],
                        intent,
                    )
                )
    if clearing and not implicating:
        verdict = Verdict.REFUTED
    elif clearing:
        # Mechanism records disagree about this change.
        verdict = _LOWER[verdict]
    if not affected:
        verdict = _LOWER[verdict]
    if confounders and verdict is not Verdict.REFUTED:
        verdict = _LOWER[verdict]
    # Two or more competing causes that no mechanism record rules out lower the verdict one
    # step more than any confounder does: mechanism evidence naming the subject (`confirmed`,
    # one step down for the confounders) then leaves `uncertain`, as a time correlation
    # alone (`likely`) does. One such beside ruled-out ones keeps `likely`.
    if len(unexplained) >= UNEXPLAINED_CAUSES and verdict is not Verdict.REFUTED:
        claims.append(
            _claim(
                f"{len(unexplained)} other changes in the {_human(CONFOUNDER_WINDOW)} before "
                f"{_label(first_ev)} was first seen are not ruled out by any mechanism "
                "evidence: each could explain the errors as well, so the verdict is no "
                "stronger than uncertain",
                EpistemicStatus.INFERENCE,
                0.8,
                [subject_ev, first_ev, *unexplained],
                intent,
            )
        )
        verdict = Verdict.UNCERTAIN
    relevant_ids = {subject_ev.evidence_id, first_ev.evidence_id}
    if any(c.resolution == "unresolved" and relevant_ids & set(c.evidence_ids) for c in conflicts):
        verdict = _LOWER[verdict]
    missing: list[MissingEvidence] = []
    # A failed read of releases or changes caps it here, with the gap naming the read (checks
    # incomplete for other reasons cap it where it is drawn, derive, with their own gap).
    if cause_reads_failed and verdict in (Verdict.CONFIRMED, Verdict.LIKELY):
        verdict = Verdict.UNCERTAIN
        missing.append(_unread_causes_gap(cause_reads_failed, subject, first_ev, first_at, intent))
    return _Correlation(verdict=verdict, claims=claims, confounders=confounders, missing=missing)


def _unread_causes_gap(
    failed: Sequence[str], subject: _Candidate, first_ev: Evidence, first_at: datetime, intent: str
) -> MissingEvidence:
    """A read of releases or changes failed: another cause (or the release asked about) may
    be among what it was to read, so the verdict on `subject` is no stronger than uncertain
    until it is read (before, `likely` rested on it, only a gap naming the read said so)."""
    searched = _causes_searched(first_ev, first_at)
    return MissingEvidence(
        evidence_type="change_event",
        intents=[intent],
        description=f"{UNKNOWN_NOT_ABSENT}{_stopped_words(READ_FAILED, failed, searched)}: a "
        f"release or change it was to read may explain {_label(first_ev)} as well, so whether "
        f"{_what(subject)} caused it is unknown until the read answers; the verdict stays "
        "uncertain; ask again",
        required=True,
    )


def _causes_searched(first_ev: Evidence, first_at: datetime) -> str:
    return f"the releases and changes before {_label(first_ev)} (first seen at {iso_utc(first_at)})"


def _unread_candidates_gap(
    failed: Sequence[str], first_ev: Evidence, first_at: datetime, intent: str
) -> MissingEvidence:
    """A read of the window's releases or changes failed: what it was to read may have
    caused the errors, so the candidate causes are unknown until it answers (before, an
    open cause question listed none, or some, and only an optional gap said "other changes
    may be missing from the list")."""
    it = "they were" if len(failed) > 1 else "it was"
    until = "the reads answer" if len(failed) > 1 else "the read answers"
    return MissingEvidence(
        evidence_type="change_event",
        intents=[intent],
        description=f"{UNKNOWN_NOT_ABSENT}"
        f"{_stopped_words(READ_FAILED, failed, _causes_searched(first_ev, first_at))}: a "
        f"release or change {it} to read may have caused {_label(first_ev)}, so which "
        f"releases and changes are its candidate causes is unknown until {until} (any said "
        "here may not be all of them); ask again",
        required=True,
    )


def _upstream_release_only(
    candidates: Sequence[_Candidate],
    upstream: set[str],
    asked: Sequence[str],
    first_ev: Evidence,
    first_at: datetime,
    evidence: Sequence[Evidence],
    intent: str,
    as_of: datetime,
) -> _Correlation:
    """No release of the service asked about, but one of a service it depends on began by the
    first error ("did the release break checkout?", the release being payment-api's): the
    release is stated, and a required gap says whose it is and how it stands to the errors
    (e31-qa finding 8: before, one claim, "Missing evidence: none"). The dependency itself
    (read by the upstream check, ACL-filtered) is no pack record, so no claim rests on it and
    the verdict stays uncertain."""
    theirs = [
        c
        for c in candidates
        if c.kind == "release"
        and c.evidence.context.get("service") in upstream
        and c.began_by(first_at)
    ]
    mine = [s for s in asked if s not in upstream]
    if not theirs or not mine:
        return _Correlation(verdict=Verdict.UNCERTAIN)
    closest = max(theirs, key=lambda c: (c.began, c.at, c.evidence.element_id))
    service = str(closest.evidence.context.get("service"))
    names = " and ".join(mine)
    depend = "depends" if len(mine) == 1 else "depend"
    when = (
        f"was rolling out when {_label(first_ev)} was first seen: "
        f"{_during_rollout(closest, first_at, as_of)}"
        if closest.rolling_at(first_at)
        else f"{_finished(closest)} at {iso_utc(closest.at)}, {_human(first_at - closest.at)} "
        f"before {_label(first_ev)} was first seen at {iso_utc(first_at)}"
    )
    return _Correlation(
        verdict=Verdict.UNCERTAIN,
        claims=[_change_fact(closest, evidence, intent, as_of)],
        missing=[
            MissingEvidence(
                evidence_type="deployment_time",
                intents=[intent],
                description=f"no release of {names} is recorded in the window read; {names} "
                f"{depend} on {service}, whose {_what(closest)} {when}: a time correlation "
                f"through the dependency only, not a release of {names}; ask about {service} "
                "for its correlation",
                required=True,
            )
        ],
    )


def _window_before_first_error(
    evidence: Sequence[Evidence],
    firsts: Sequence[Evidence],
    checks: CompetingCauseChecks | None,
    mechanisms: Sequence[Evidence],
    intent: str,
    out: _Causes,
    unfinished_by: str | None = None,
    reports: Sequence[Evidence] = (),
    failed_reads: Sequence[str] = (),
    cause_reads_failed: Sequence[str] = (),
) -> tuple[datetime, Evidence, list[tuple[_Candidate, Confounder]]] | None:
    """The first error and the releases and changes recorded in the lookback before it,
    each with what the mechanism evidence says of it, also added to `out.confounders` (None
    without a first error). Says, in `out`, when the checks of the window did not all run,
    or, when they did and found nothing, that nothing changed; `unfinished_by` (a read of
    the run failed, or the loop stopped early): that nothing changed is unknown, a gap,
    which names the `failed_reads` (`_stopped_words`), so it is their one gap.
    `cause_reads_failed`: the failed reads of releases or changes; with the checks not all
    run, a required gap names them (`_unread_candidates_gap`), never the optional one."""
    seen = _sightings(firsts)
    if not seen:
        return None
    first_at, first_ev = _first_error(seen)
    checked = checks is not None and checks.complete
    if not checked and cause_reads_failed:
        out.missing.append(_unread_candidates_gap(cause_reads_failed, first_ev, first_at, intent))
    elif not checked:
        not_run = checks.not_run if checks is not None else []
        out.missing.append(
            MissingEvidence(
                evidence_type="change_event",
                intents=[intent],
                description=checks_not_run_words(not_run)
                + ": other changes may be missing from the list",
                required=False,
            )
        )
    # Begun by the first error (a rollout under way then too), finished within the lookback.
    before = [c for c in _candidates(evidence) if c.in_window_before(first_at, DEPLOY_LOOKBACK)]
    window = (
        f"in the {DEPLOY_LOOKBACK // timedelta(hours=1)} h, and no other change in the "
        f"{_human(CHANGE_LOOKBACK)}, before {_label(first_ev)} was first seen at "
        f"{iso_utc(first_at)}"
    )
    if not before and checked and unfinished_by is not None:
        # An absence never rests on a run whose reads did not all answer: the failed one
        # may be the read that holds the release.
        out.missing.append(
            MissingEvidence(
                evidence_type="change_event",
                intents=[intent],
                description=f"{UNKNOWN_NOT_ABSENT}whether no release is recorded {window}: "
                + (
                    _stopped_words(unfinished_by, failed_reads, "this window") + "; ask again"
                    if unfinished_by == READ_FAILED and failed_reads
                    else _unfinished_why(unfinished_by)
                ),
                required=True,
            )
        )
    elif not before and checked:
        out.claims.append(
            _claim(
                f"No release is recorded {window}",
                EpistemicStatus.FACT,
                0.8,
                [first_ev],
                intent,
            )
        )
    assessed = [(cand, _confounder(cand, mechanisms, reports)) for cand in before]
    out.confounders += [confounder for _, confounder in assessed]
    return first_at, first_ev, assessed


def _clearing_claims(cand: _Candidate, mechanisms: Sequence[Evidence], intent: str) -> list[Claim]:
    """An inference per mechanism record that rules `cand` out, quoting its sentence."""
    ev = cand.evidence
    return [
        _claim(
            f'{_label(m)} rules out {_what(cand)}: "{_quote(sentence)}"',
            EpistemicStatus.INFERENCE,
            0.8,
            [ev, m],
            intent,
        )
        for m in mechanisms
        if (sentence := _clearing_sentence(m, ev))
    ]


def _candidate_causes(
    evidence: Sequence[Evidence],
    firsts: Sequence[Evidence],
    mechanisms: Sequence[Evidence],
    checks: CompetingCauseChecks | None,
    as_of: datetime,
    unfinished_by: str | None = None,
    reports: Sequence[Evidence] = (),
    failed_reads: Sequence[str] = (),
    cause_reads_failed: Sequence[str] = (),
) -> _Causes:
    """Every release and other change recorded in the lookback before the first error (a
    release rolling out then too), each a candidate cause with what the mechanism evidence
    says of it (or a report that records no mechanism, `_cause_reports`). An open question
    names no change, so none is picked by its time alone. `failed_reads`: the run's failed
    reads in plain words, named in the window's gap when it found nothing;
    `cause_reads_failed` those of releases or changes, named in a required gap when the
    window's checks did not all run."""
    intent = Intent.ROOT_CAUSE.value
    out = _Causes()
    window = _window_before_first_error(
        evidence,
        firsts,
        checks,
        mechanisms,
        intent,
        out,
        unfinished_by,
        reports,
        failed_reads,
        cause_reads_failed,
    )
    if window is None:
        return out
    first_at, first_ev, before = window
    for cand, confounder in before:
        ev = cand.evidence
        when = _before_first_error(cand, first_ev, first_at, as_of)
        clearing = _clearing_claims(cand, mechanisms, intent)
        out.claims += clearing
        naming = [m for m in mechanisms if m.evidence_id in confounder.named_by]
        if naming:
            out.claims.append(
                _claim(
                    f"Candidate cause: {_what(cand)} ({when}); mechanism evidence from "
                    + ", ".join(sorted(_label(m) for m in naming))
                    + " names it",
                    EpistemicStatus.INFERENCE,
                    0.75,
                    [ev, first_ev, *naming],
                    intent,
                )
            )
        elif not clearing:
            reported = _reported_hypothesis(cand, reports)
            naming_reports = [r for r in reports if r.evidence_id in confounder.reported_by]
            out.claims.append(
                _claim(
                    f"Candidate cause: {_what(cand)} ({when}); "
                    + (reported or "no mechanism evidence about it"),
                    EpistemicStatus.HYPOTHESIS,
                    0.5,
                    [ev, first_ev, *naming_reports],
                    intent,
                )
            )
        out.claims += _window_report_claims(
            cand, confounder, before, mechanisms, reports, first_ev, intent
        )
    return out


def _after_first_error(
    cand: _Candidate, first_ev: Evidence, first_at: datetime, intent: str
) -> Claim:
    kind = "release" if cand.kind == "release" else "change"
    # Judged on its start: an error first seen during a rollout is not "before" the release.
    when = (
        f"started at {iso_utc(cand.began)}"
        if cand.began < cand.at
        else f"{_finished(cand)} at {iso_utc(cand.at)}"
    )
    return _claim(
        f"{_label(first_ev)} was first seen at {iso_utc(first_at)}, before {_what(cand)} "
        f"{when}: the {kind} cannot have started it",
        EpistemicStatus.INFERENCE,
        0.9,
        [cand.evidence, first_ev],
        intent,
    )
