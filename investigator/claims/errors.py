"""Errors and hindsight: change facts, errors before or after the release asked about, the
release named but missing, and mechanisms recorded for the errors asked about.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime

from investigator.claims.candidates import (
    CONFOUNDER_WINDOW,
    _before_first_error,
    _Candidate,
    _confounder,
    _Correlation,
    _finish_words,
    _finished,
    _first_error,
    _sightings,
    _what,
)
from investigator.claims.model import Claim, EpistemicStatus, Verdict
from investigator.claims.wording import (
    UNKNOWN_NOT_ABSENT,
    _about,
    _change_id,
    _claim,
    _human,
    _label,
    _upper_first,
    _with,
)
from investigator.evidence import Evidence, iso_utc
from investigator.planner import asks_error_state, extract_mentions
from investigator.rubric import Intent, MissingEvidence
from investigator.timeline import EPISODE, instant_of


def _change_fact(
    subject: _Candidate, evidence: Sequence[Evidence], intent: str, as_of: datetime | None = None
) -> Claim:
    """`Release X (id) finished at T`, bound to its record and every other record of it; a
    rollout under way at `as_of`: since when, and that it had not finished by then."""
    subject_ev = subject.evidence
    corroborating = [
        o
        for o in _with(evidence, "deployment_time")
        if o is not subject_ev and _about(o, _change_id(subject_ev))
    ]
    # A release's own record states its rollout's start: said as the release lookup says it.
    began = (
        instant_of(subject_ev.props.get("started_at"))
        if subject.kind == "release" and subject_ev.type == "Deployment"
        else None
    )
    started = f"started at {iso_utc(began)} and " if began and began <= subject.at else ""
    # A rollout under way at as_of: its finish (after as_of) is not stated.
    rolling = as_of is not None and subject.rolling_at(as_of)
    finish = _finish_words(subject, as_of) if as_of is not None and rolling else None
    return _claim(
        f"{'Release' if subject.kind == 'release' else 'Change'} {_label(subject_ev)} "
        f"({subject_ev.element_id}) {started}"
        + (finish or f"{_finished(subject)} at {iso_utc(subject.at)}"),
        EpistemicStatus.FACT,
        0.95,
        [subject_ev, *corroborating],
        intent,
    )


def _no_first_error_yet(
    named: _Candidate | None,
    releases: Sequence[_Candidate],
    as_of: datetime,
    question: str | None,
    evidence: Sequence[Evidence],
    intent: str,
    *,
    searched: bool = True,
    known_at: datetime | None = None,
) -> _Correlation:
    """No first error is known at `as_of`: state the release, and that nothing correlates yet.
    With a `known_at` before as_of, it is what was recorded by known_at that has none (the
    error may have happened by as_of and been recorded after known_at).

    Not `searched` (the loop stopped before its reads were done): the release alone; that no
    error is known would state what the run never looked for (the required gap says so)."""
    by_as_of = [c for c in releases if c.at <= as_of]
    subject = named or (
        max(by_as_of, key=lambda c: (c.at, c.evidence.element_id)) if by_as_of else None
    )
    if subject is None:
        return _Correlation(verdict=Verdict.UNCERTAIN)
    # A rollout under way at as_of: its finish, after as_of, is not stated (the rollout fact
    # says it was under way; before h29-then2, this claim said when it finished).
    facts = [_change_fact(subject, evidence, intent)] if subject.at <= as_of else []
    if not searched:
        return _Correlation(verdict=Verdict.UNCERTAIN, claims=facts)
    subject_ev = subject.evidence
    codes = extract_mentions(question or "").error_codes
    errors = f"{' / '.join(codes)} error" if codes else "error"
    if subject.at <= as_of:
        when = f"{_human(as_of - subject.at)} after {_what(subject)} {_finished(subject)}"
    elif subject.rolling_at(as_of):
        when = (
            f"{_human(as_of - subject.began)} after the rollout of {_what(subject)} started; "
            "it had not finished by then"
        )
    else:
        when = f"before {_what(subject)} {_finished(subject)}"
    if known_at is not None and known_at < as_of:
        # "Known at as_of" read as "had not happened by then" (e29-qa m1: 10:02:38's error,
        # recorded at 10:02:45, asked with --known-at 10:02:40).
        said = (
            f"No first-seen {errors} had been recorded by known_at {iso_utc(known_at)} "
            f"(as_of {iso_utc(as_of)}, {when}): no time correlation can be drawn from what "
            "was recorded by then"
        )
    else:
        said = (
            f"No first-seen {errors} is known at as_of {iso_utc(as_of)} ({when}): "
            "no time correlation can be drawn yet"
        )
    return _Correlation(
        verdict=Verdict.UNCERTAIN,
        claims=[
            *facts,
            _claim(
                said,
                EpistemicStatus.INFERENCE,
                0.6,
                [subject_ev],
                intent,
            ),
        ],
        drawn=False,
    )


def _asked_error_codes(question: str | None) -> list[str]:
    """The error codes the question names (`PAY-1002`, `err:PAY-1002`), as written in codes."""
    mentions = extract_mentions(question or "")
    ids = [i.removeprefix("err:") for i in mentions.ids if i.startswith("err:")]
    return sorted({*mentions.error_codes, *ids})


def _hindsight(
    mechanisms: Sequence[Evidence],
    firsts: Sequence[Evidence],
    question: str | None,
    errors_later: Mapping[str, datetime] | None,
    as_of: datetime,
) -> tuple[list[Evidence], MissingEvidence | None]:
    """The mechanism records that explain errors known at `as_of`, and, when some were held
    back, the required `error_first_seen` gap that says why.

    A record in force at as_of (the postmortem, valid from the release's finish at 10:02:00)
    may be about errors that had not happened then (PAY-4097, first seen 10:02:38): the
    errors it concerns (those the question names, else the codes its text names) are each
    first seen after as_of (`errors_later`) and none of them is known at as_of. Claimed, it
    answered "what caused the PAY-4097 errors?" at 10:02:00 complete with what was only
    written after them."""
    if not errors_later or not mechanisms:
        return list(mechanisms), None
    known = {_label(ev) for t, ev in _sightings(firsts) if t <= as_of}
    later = {
        code_id.removeprefix("err:"): at
        for code_id, at in errors_later.items()
        if code_id.removeprefix("err:") not in known
    }
    asked = _asked_error_codes(question)

    def concerns(m: Evidence) -> set[str]:
        if asked:
            return set(asked)
        return {c for c in {*known, *later} if re.search(rf"\b{re.escape(c)}\b", m.content)}

    held = [m for m in mechanisms if (about := concerns(m)) and about <= later.keys()]
    if not held:
        return list(mechanisms), None
    codes = sorted(set().union(*(concerns(m) for m in held)))
    starts = ", ".join(f"{c} first seen {iso_utc(later[c])}" for c in codes)
    records = ", ".join(sorted({m.element_id for m in held}))
    gap = MissingEvidence(
        evidence_type="error_first_seen",
        intents=[Intent.ROOT_CAUSE.value],
        description=f"no {' / '.join(codes)} error is known at as_of {iso_utc(as_of)}: "
        f"its first sighting on record is after as_of ({starts}: recorded later, not "
        f"followed), so no cause of it is claimed ({records} explains errors that had not "
        "happened by then): ask at a later --as-of",
        required=True,
    )
    return [m for m in mechanisms if m not in held], gap


def _unseen_error_gaps(
    missing: Sequence[MissingEvidence],
    question: str | None,
    firsts: Sequence[Evidence],
    errors_later: Mapping[str, datetime] | None,
    as_of: datetime,
) -> list[MissingEvidence]:
    """A correlation question naming error codes none of which was seen by as_of ("did the
    release cause PAY-4097?" at 10:02:37, its first sighting 10:02:38): its gaps say that,
    not that no first-seen time or no link "for the service" exists, nor that "the
    correlation" (none is drawn) is in time only (e32-qa finding P). The search ran to its
    end (the caller's condition): the codes were looked up."""
    codes = _asked_error_codes(question)
    if not codes or any(_label(ev) in codes for t, ev in _sightings(firsts) if t <= as_of):
        return list(missing)
    at = iso_utc(as_of)
    named = " / ".join(codes)
    later = {c.removeprefix("err:"): t for c, t in (errors_later or {}).items()}
    starts = ", ".join(f"{c} first seen {iso_utc(later[c])}" for c in codes if c in later)
    seen = (
        f"its first sighting on record is after as_of ({starts}: recorded later, not followed)"
        if starts
        else "no sighting of it this subject may read is recorded by then"
    )
    said = {
        "error_first_seen": f"{named} not seen by as_of {at}: {seen}; no time correlation can "
        "be drawn yet: ask at a later --as-of",
        "affected_service": f"no service is recorded as emitting {named} by as_of {at} ({named} "
        "was not seen by then), so none is linked to its errors yet",
        "mechanism": f"no mechanism is weighed: no correlation is drawn, {named} not being seen "
        f"by as_of {at}",
    }
    return [
        m.model_copy(update={"description": said[m.evidence_type]})
        if m.evidence_type in said
        and (m.required or m.evidence_type == "mechanism")
        and not m.description.startswith(UNKNOWN_NOT_ABSENT)
        else m
        for m in missing
    ]


def _mechanisms_of_asked_errors(
    mechanisms: Sequence[Evidence], firsts: Sequence[Evidence], question: str | None
) -> tuple[list[Evidence], MissingEvidence | None]:
    """The mechanism records bound to the errors the question names, and, when some were
    read but none is bound, the required gap that says so.

    Bound: its time (valid_from, else observed_at) lies within `EPISODE` of a first sighting
    of a named code, or, when no sighting of one is known, its text names the code. A
    question naming no error keeps every mechanism (its errors are the incident's)."""
    codes = _asked_error_codes(question)
    if not codes or not mechanisms:
        return list(mechanisms), None
    seen = [(t, ev) for t, ev in _sightings(firsts) if _label(ev) in codes]

    def bound(m: Evidence) -> bool:
        at = m.valid_from or m.observed_at
        if seen:
            return at is not None and any(abs(at - t) <= EPISODE for t, _ in seen)
        return any(re.search(rf"\b{re.escape(c)}\b", m.content) for c in codes)

    kept = [m for m in mechanisms if bound(m)]
    if kept:
        return kept, None
    asked = ", ".join(codes)
    read = sorted(mechanisms, key=lambda m: m.element_id)
    if seen:
        first_at, first_ev = _first_error(seen)
        dated = ", ".join(
            f"{m.element_id} of {iso_utc(at)}"
            if (at := m.valid_from or m.observed_at)
            else f"{m.element_id}, undated"
            for m in read
        )
        why = (
            f"{_label(first_ev)} (first seen at {iso_utc(first_at)}): the mechanism records "
            f"read ({dated}) are not within {_human(EPISODE)} of it, so they are about another "
            "error or incident"
        )
    else:
        names = ", ".join(m.element_id for m in read)
        why = (
            f"{asked}: the mechanism records read ({names}) do not name it, and no first "
            "sighting of it is known to place them"
        )
    return kept, MissingEvidence(
        evidence_type="mechanism",
        intents=[Intent.ROOT_CAUSE.value],
        description=f"no mechanism evidence about {why}; none is stated as its mechanism",
        required=True,
    )


def _names_an_error(question: str | None) -> bool:
    """Whether the question names an error (a code, or an `err:` id)."""
    mentions = extract_mentions(question or "")
    return bool(mentions.error_codes) or any(i.startswith("err:") for i in mentions.ids)


def _errors_after_release_asked_about(
    named: _Candidate | None,
    releases: Sequence[_Candidate],
    seen: Sequence[tuple[datetime, Evidence]],
    as_of: datetime,
) -> tuple[_Candidate | None, list[tuple[datetime, Evidence]]]:
    """For a question naming no error ("did the deploy cause it?", "what changed before the
    errors?"): "the errors" are those that followed the release asked about, so one first
    seen before every release (an error the service has emitted for years) is no evidence
    of them. (the release asked about, the sightings begun after it) when the first error
    predates it; (None, all) when it does not."""
    first_at = _first_error(seen)[0]
    # An error first seen during a rollout is after the release began: it can be its effect.
    predates = (
        not named.began_by(first_at) if named else not any(c.began_by(first_at) for c in releases)
    )
    reference = _release_asked_about(named, releases, as_of) if predates else None
    if reference is None:
        return None, list(seen)
    return reference, [(t, ev) for t, ev in seen if reference.began_by(t)]


def _release_asked_about(
    named: _Candidate | None, releases: Sequence[_Candidate], as_of: datetime
) -> _Candidate | None:
    """The release a question naming no error is about: the one it names, else the latest
    finished by `as_of`, else the first after it (a rollout under way)."""
    if named is not None:
        return named
    by_as_of = [c for c in releases if c.at <= as_of]
    if by_as_of:
        return max(by_as_of, key=lambda c: (c.at, c.evidence.element_id))
    return min(releases, key=lambda c: (c.at, c.evidence.element_id)) if releases else None


def _only_errors_before(
    release: _Candidate,
    seen: Sequence[tuple[datetime, Evidence]],
    as_of: datetime,
    evidence: Sequence[Evidence],
    intent: str,
    *,
    searched: bool = True,
) -> _Correlation:
    """Every error known at `as_of` was first seen before the release asked about: neither
    for nor against it (`uncertain`), and no error after it is known yet. Not `searched` (a
    read failed, or the loop stopped early): the release alone, as `_no_first_error_yet`."""
    last_at, last_ev = max(seen, key=lambda p: (p[0], p[1].element_id))
    what, finished = _what(release), _finished(release)
    claims: list[Claim] = []
    if release.at <= as_of:
        claims.append(_change_fact(release, evidence, intent))
    if not searched:
        return _Correlation(verdict=Verdict.UNCERTAIN, claims=claims)
    if release.at <= as_of:
        after = f"{what} {finished} at {iso_utc(release.at)} is known at as_of {iso_utc(as_of)}"
        after += f" ({_human(as_of - release.at)} later)" if as_of > release.at else ""
    else:
        # Its finish lies after as_of: not stated (the rollout fact says it was under way).
        after = f"{what} is known at as_of {iso_utc(as_of)} (it had not {finished} by then)"
    claims.append(
        _claim(
            f"No error first seen after {after}: {_label(last_ev)}, first seen at "
            f"{iso_utc(last_at)}, predates it and is no evidence for or against it; no "
            "time correlation can be drawn yet",
            EpistemicStatus.INFERENCE,
            0.6,
            [release.evidence, last_ev],
            intent,
        )
    )
    return _Correlation(verdict=Verdict.UNCERTAIN, claims=claims, drawn=False)


def _named_release_missing(
    absent: Sequence[str],
    seen: Sequence[tuple[datetime, Evidence]],
    candidates: Sequence[_Candidate],
    mechanisms: Sequence[Evidence],
    intent: str,
    as_of: datetime,
    *,
    reports: Sequence[Evidence] = (),
) -> _Correlation:
    """The question names a release the evidence has no time for: no verdict about another
    release in its place; the changes of the window are listed as candidates."""
    names = ", ".join(absent)
    result = _Correlation(
        verdict=Verdict.UNCERTAIN,
        missing=[
            MissingEvidence(
                evidence_type="deployment_time",
                intents=[intent],
                description=f"no deployment time for {names}, named in the question (not "
                "found, not visible to the subject, or not valid at as_of): its correlation "
                "with the errors cannot be judged",
            )
        ],
    )
    if not seen:
        return result
    first_at, first_ev = _first_error(seen)
    for cand in candidates:
        if not cand.in_window_before(first_at, CONFOUNDER_WINDOW):
            continue
        ev = cand.evidence
        result.confounders.append(_confounder(cand, mechanisms, reports))
        result.claims.append(
            _claim(
                f"{_upper_first(_what(cand))} "
                + (
                    _before_first_error(cand, first_ev, first_at, as_of)
                    if cand.rolling_at(first_at)
                    else f"{_finished(cand)} at {iso_utc(cand.at)}, within "
                    f"{_human(CONFOUNDER_WINDOW)} before {_label(first_ev)} was first seen"
                )
                + f": it could explain the errors (the question asked about {names})",
                EpistemicStatus.FACT,
                0.9,
                [ev],
                intent,
            )
        )
    return result


def error_state_claims(
    evidence: Sequence[Evidence], question: str | None, as_of: datetime
) -> list[Claim]:
    """Asked whether errors still happen or when they stopped ("are there still errors?", "did
    PAY-4097 stop?"): per error record admitted (its first sighting by as_of), its last
    sighting as recorded: "last seen T; no later sighting is recorded" when T is by as_of,
    else "still emitted at as_of" (the record's sightings run past it: the later time is not
    said, it was not known at as_of). A record with no last sighting says so: whether the
    errors still occur is not recorded (never "stopped")."""
    if not asks_error_state(question or ""):
        return []
    out = []
    for ev in sorted(_with(evidence, "error_first_seen"), key=lambda e: e.element_id):
        first = instant_of(ev.props.get("first_seen")) or ev.valid_from
        if first is None or first > as_of or ev.type == "Document":
            continue
        last = instant_of(ev.props.get("last_seen"))
        ended = ev.valid_to if ev.valid_to is not None and ev.valid_to <= as_of else None
        what = f"{_label(ev)} ({ev.content}, first seen {iso_utc(first)})"
        if last is not None and last <= as_of:
            statement = (
                f"{what} last seen at {iso_utc(last)}: no later sighting is recorded by as_of "
                f"{iso_utc(as_of)}" + (f" (the record ends {iso_utc(ended)})" if ended else "")
            )
        elif last is not None or (ev.valid_to is not None and ev.valid_to > as_of):
            statement = (
                f"{what} still emitted at as_of {iso_utc(as_of)}: the record's sightings run "
                "past as_of (its last sighting is after as_of)"
            )
        elif ended is not None:
            statement = (
                f"{what}: the record ends {iso_utc(ended)}; no last sighting is recorded, so "
                "when the errors stopped is not known"
            )
        else:
            statement = (
                f"{what}: no last sighting is recorded, so whether it still occurs at as_of "
                f"{iso_utc(as_of)} is not known"
            )
        out.append(_claim(statement, EpistemicStatus.FACT, 0.95, [ev], Intent.ERROR_TIMELINE.value))
    return out


# "How many PAY-4097 errors were there?", "the error count", "number of errors", 多少个错误.
_COUNT_ASKED = re.compile(
    r"\bhow\s+many\b[^?.]{0,40}?\b(?:errors?|failures?|exceptions?|5xx|occurrences?|times?|"
    r"[A-Z][A-Z0-9]{1,9}-\d{2,6})\b|\b(?:errors?|failures?|exceptions?)\s+(?:count|volume|"
    r"total)\b|\b(?:count|number|total|volume)\s+of\s+(?:the\s+)?(?:[\w-]+\s+)?(?:errors?|"
    r"failures?|exceptions?)\b|多少(?:个|次)?(?:错误|报错|失败)",
    re.IGNORECASE,
)


def asks_error_count(question: str | None) -> bool:
    """Whether the question asks how many errors there were."""
    return bool(_COUNT_ASKED.search(question or ""))


def error_count_claims(
    evidence: Sequence[Evidence], question: str | None, as_of: datetime
) -> list[Claim]:
    """Asked how many errors there were: per error record admitted (first seen by as_of), the
    count it states, with the sightings it covers (first and last seen). Its last sighting
    after as_of: the count includes later ones, so it is not stated (how many by as_of is not
    recorded); a record with no last sighting states its count as of its record time, or, made
    after as_of, not at all. A record with no count says so (never "none")."""
    if not asks_error_count(question):
        return []
    out = []
    for ev in sorted(_with(evidence, "error_first_seen"), key=lambda e: e.element_id):
        first = instant_of(ev.props.get("first_seen")) or ev.valid_from
        if ev.type != "EMITTED" or first is None or first > as_of:
            continue
        count = ev.props.get("count")
        last = instant_of(ev.props.get("last_seen"))
        what = f"{_label(ev)} ({ev.content}, first seen {iso_utc(first)})"
        if not isinstance(count, int) or isinstance(count, bool):
            statement = f"{what}: the record states no count, so how many is not recorded"
        elif last is not None and last <= as_of:
            statement = (
                f"{what}: {count} errors counted by the record, from its first sighting to its "
                f"last at {iso_utc(last)}"
            )
        elif last is not None:
            statement = (
                f"{what}: the record's count covers sightings after as_of {iso_utc(as_of)} (its "
                "last sighting is later), so how many there were by as_of is not recorded"
            )
        elif ev.recorded_at is not None and ev.recorded_at <= as_of:
            statement = (
                f"{what}: {count} errors counted by the record as of its record time "
                f"{iso_utc(ev.recorded_at)} (no last sighting is recorded)"
            )
        else:
            statement = (
                f"{what}: the record holding its count was made after as_of {iso_utc(as_of)}, "
                "so how many there were by as_of is not recorded"
            )
        out.append(_claim(statement, EpistemicStatus.FACT, 0.95, [ev], Intent.ERROR_TIMELINE.value))
    return out
