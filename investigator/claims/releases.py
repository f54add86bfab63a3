"""Releases, rollouts and alert firings in the answer, the last releases before a time, and
the gap for an alert asked about but not found.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from investigator.claims.model import Claim, EpistemicStatus
from investigator.claims.wording import (
    _DEPLOY_TIME_KEYS,
    UNKNOWN_NOT_ABSENT,
    _claim,
    _instant,
    _label,
    _quote,
    _release_of,
    _title,
    _until,
    _valid_text,
)
from investigator.context_graph.models import ToolCallRecord
from investigator.evidence import Evidence, as_held, iso_utc
from investigator.gate import authority
from investigator.planner import (
    MAX_FOCUS_SERVICES,
    extract_mentions,
    release_record_asks,
    unrecorded_asks,
)
from investigator.release_clock import ReleaseClock, at_clock, release_clock
from investigator.release_names import release_named, release_version
from investigator.rubric import Intent, MissingEvidence
from investigator.timeline import (
    ALERT_TIME_KEYS,
    DEPLOY_TIME_KEYS,
    EARLIEST,
    NamedTime,
    ReferenceTime,
    TimeReferences,
    instant,
    instant_of,
    rollout_under_way,
    time_references,
)


def _alert_unfound_gaps(
    alerts_unfound: Sequence[tuple[str, bool]], as_of: datetime
) -> list[MissingEvidence]:
    """A required `ownership` gap for each service whose alerts were read for an alert's
    owner and none was found (or the read failed): the owner asked is an alert's."""
    return [
        MissingEvidence(
            evidence_type="ownership",
            intents=[Intent.OWNERSHIP_AT_TIME.value],
            description=(
                f"{UNKNOWN_NOT_ABSENT}which alert fired on {service}: the read of the alerts "
                "that fired on it failed (see its tool calls); ask again"
                if failed
                else f"no alert is recorded as firing on {service} by as_of {iso_utc(as_of)} "
                "in the records this subject may read"
            )
            + ", so no alert's owner is stated (the owner of the service is not the alert's "
            "owner)",
            required=True,
        )
        for service, failed in alerts_unfound
    ]


def _rollout_claims(
    timed: Sequence[Evidence], refs: Sequence[ReferenceTime], as_of: datetime
) -> tuple[list[Claim], list[Evidence]]:
    """A fact per release whose rollout had started and not finished at as_of or at an
    instant the question names ("then", a time written): which release, since when, that it
    was not finished then, and the latest release of the service finished by then. Also the
    records of those releases (their finish lies after as_of, so no claim states it)."""
    claims: list[Claim] = []
    rolling: list[Evidence] = []
    instants = [(r.at, f"{r.describe()} ({r.why})", r.element_id) for r in refs if r.at <= as_of]
    instants.append((as_of, f"as_of, {iso_utc(as_of)}", None))
    for ev in sorted(timed, key=lambda e: e.element_id):
        # "Then" taken as this rollout's own start is not an instant it is said at: that it
        # had started then is what the moment is (the claims at it say "the start of the
        # rollout of release ...").
        at_words = [
            (at, words, span)
            for at, words, record in instants
            if record != ev.element_id and (span := rollout_under_way(ev, at)) is not None
        ]
        if not at_words:
            continue
        rolling.append(ev)
        started = at_words[0][2][0]
        service = ev.context.get("service", ev.props.get("service"))
        to = f" to {service}" if isinstance(service, str) else ""
        of = f" of {service}" if isinstance(service, str) else ""
        latest = at_words[-1][0]
        # The release finished by then: what "the release" means at that moment.
        done = [
            (t, other)
            for other in timed
            if other is not ev
            and other.type == "Deployment"
            and other.context.get("service", other.props.get("service")) in (None, service)
            and (t := instant(other, DEPLOY_TIME_KEYS)) is not None
            and t <= min(at for at, _, _ in at_words)
        ]
        before = max(done, key=lambda d: (d[0], d[1].element_id), default=None)
        finished = (
            f"; the latest release{of} finished by then is {_label(before[1])} "
            f"({before[1].element_id}, finished at {iso_utc(before[0])})"
            if before is not None
            else ""
        )
        when = " and at ".join(words for _, words, _ in at_words)
        claims.append(
            _claim(
                f"At {when}: the rollout of release {_label(ev)} ({ev.element_id}){to} was "
                f"under way, started at {iso_utc(started)} and not finished by "
                f"{iso_utc(latest)}, so it was not yet the release in force{finished}",
                EpistemicStatus.FACT,
                0.9,
                [ev, *([before[1]] if before is not None else [])],
                Intent.RELEASE_LOOKUP.value,
            )
        )
    return claims, rolling


def _still_firing(
    rows: Sequence[tuple[datetime, str, str, Evidence]], start: datetime, end: datetime
) -> dict[str, tuple[datetime, datetime]]:
    """The firings begun before the period `start`..`end` and still firing at its start
    (no end recorded, or one after it), by element id, each with the period: an alert
    firing since before "since 10:30" is firing in it, listed "firing since <start>"."""
    return {
        ev.element_id: (start, end)
        for at, _, _, ev in rows
        if at < start and (ev.valid_to is None or ev.valid_to > start)
    }


def _firings_kept(
    rows: list[tuple[datetime, str, str, Evidence]],
    keep: Callable[[datetime], bool],
    outside: str,
    also: Mapping[str, object] | None = None,
) -> tuple[list[tuple[datetime, str, str, Evidence]], list[MissingEvidence]]:
    """The firings whose instant `keep` holds (or whose record is in `also`), and a required
    gap (`outside` says when was asked) when firings were read but none is kept."""
    kept = [row for row in rows if keep(row[0]) or row[3].element_id in (also or {})]
    if kept or not rows:
        return kept, []
    return kept, [
        MissingEvidence(
            evidence_type="alert_firing",
            intents=[Intent.ALERT_FIRING.value],
            description=f"no alert the subject may read fired on what was asked {outside}",
        )
    ]


def _alert_firing_claims(
    fired: Sequence[Evidence],
    question: str,
    as_of: datetime,
    period: tuple[NamedTime, NamedTime] | None,
    before: datetime | None = None,
) -> tuple[list[Claim], list[MissingEvidence]]:
    """One fact per alert firing (a FIRED_ON record) by as_of, in time order: which alert,
    on which service, when, and until when (or that it was still firing at as_of). An alert
    the question names keeps only its own firings; a period asked keeps those in it, and an
    instant its "before X" words name (`before`) those by it, with a gap when none is."""
    mentions = extract_mentions(question)
    named = {n.lower() for n in mentions.alerts}
    named |= {i.lower() for i in mentions.ids if i.startswith("alert:")}
    rows: list[tuple[datetime, str, str, Evidence]] = []
    for ev in fired:
        parts = ev.element_id.split("|")
        alert = parts[1] if len(parts) > 2 else str(ev.context.get("start", ""))
        service = parts[2] if len(parts) > 2 else str(ev.context.get("neighbour", ""))
        at = _instant(ev, ALERT_TIME_KEYS)
        if at is None or at > as_of:
            continue
        if named and not ({alert.lower(), alert.removeprefix("alert:").lower()} & named):
            continue
        rows.append((at, alert, service, ev))
    gaps: list[MissingEvidence] = []
    # A firing begun before the period asked and still firing in it (`_still_firing`).
    since: dict[str, tuple[datetime, datetime]] = {}
    if period is not None and period[0].at <= as_of:
        start, end = period[0].at, min(period[1].at, as_of)
        since = _still_firing(rows, start, end)
        rows, gaps = _firings_kept(
            rows,
            lambda t: start <= t <= end,
            f"from {iso_utc(start)} to {iso_utc(end)} ({period[0].words!r}); the firings read "
            "are all outside it",
            also=since,
        )
    if before is not None:
        rows, later = _firings_kept(
            rows,
            lambda t: t <= before,
            f"by {iso_utc(before)}, the time the question's words name; the firings read are "
            "all later",
        )
        gaps += later
    out: list[Claim] = []
    for at, alert, service, ev in sorted(rows, key=lambda r: (r[0], r[1], r[3].element_id)):
        until = _until(ev, as_of, "still firing")
        text = f"Alert {alert} fired on {service} at {iso_utc(at)} ({until})"
        if ev.element_id in since:
            text = (
                f"Alert {alert} on {service}: firing since {iso_utc(at)}, before the period "
                f"asked ({iso_utc(since[ev.element_id][0])} to "
                f"{iso_utc(since[ev.element_id][1])}), and still firing in it ({until})"
            )
        out.append(
            _claim(
                text,
                EpistemicStatus.FACT,
                0.95,
                [ev],
                Intent.ALERT_FIRING.value,
            )
        )
    return out, gaps


def _releases_in_period(
    timed: Sequence[Evidence], period: tuple[NamedTime, NamedTime], as_of: datetime
) -> tuple[list[Evidence], list[MissingEvidence]]:
    """The release records finished in the period asked (its end at as_of at the latest),
    and a gap saying so when none is."""
    start, end = period[0].at, min(period[1].at, as_of)
    inside = [ev for ev in timed if (t := _instant(ev, _DEPLOY_TIME_KEYS)) and start <= t <= end]
    if inside:
        return inside, []
    return [], [
        MissingEvidence(
            evidence_type="deployment_time",
            intents=[Intent.RELEASE_LOOKUP.value],
            description=f"no release of the services asked about that the subject may read "
            f"finished from {iso_utc(start)} to {iso_utc(end)} ({period[0].words!r})",
            required=False,
        )
    ]


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
        # The rollout's start, from the release's own record: "when did it start?" too.
        began = instant_of(own[0].props.get("started_at")) if own else None
        started = f"started at {iso_utc(began)} and " if began and began <= at else ""
        out.append(
            _claim(
                f"Release {name} ({release}) {started}finished at {iso_utc(at)}{basis}",
                EpistemicStatus.FACT,
                0.95,
                evs,
                Intent.RELEASE_LOOKUP.value,
            )
        )
    return out


def _release_service(ev: Evidence) -> str | None:
    service = ev.context.get("service", ev.props.get("service"))
    return service if isinstance(service, str) else None


def _last_releases(
    timed: Sequence[Evidence], end: datetime, services: Sequence[str]
) -> list[Evidence]:
    """The records of the last release of each service (of `services`, when any) finished
    by `end` ("what was deployed before release X?"), with the documents of its time."""
    last: dict[str, tuple[datetime, str]] = {}
    for ev in timed:
        if ev.type != "Deployment" or (t := _instant(ev, _DEPLOY_TIME_KEYS)) is None or t > end:
            continue
        service = _release_service(ev) or ""
        if services and service not in services:
            continue
        if service not in last or (t, ev.element_id) > last[service]:
            last[service] = (t, ev.element_id)
    kept = {element_id for _, element_id in last.values()}
    return [ev for ev in timed if ev.element_id in kept or (_release_of(ev) or "") in kept]


# "Last deploy of payment-api?", "the latest release", "most recent rollout": one release
# asked for, the last finished by as_of (not "the last 3 deploys", nor a period's words).
_LAST_RELEASE_ASKED = re.compile(
    r"\b(?:last|latest|most\s+recent|newest)\s+(?:deploy(?:ment)?|release|rollout)\b(?!s)",
    re.IGNORECASE,
)


def _last_release_claims(
    released: Sequence[Evidence], as_of: datetime, services: Sequence[str], question: str
) -> list[Claim]:
    """For a question asking for the last release ("last deploy of payment-api?"): which of
    the releases listed is the last each service finished by as_of, a fact each (e31-qa m4:
    both releases were listed and neither was named the last)."""
    if not _LAST_RELEASE_ASKED.search(question):
        return []
    out: list[Claim] = []
    last = [ev for ev in _last_releases(released, as_of, services) if ev.type == "Deployment"]
    for ev in sorted(last, key=lambda e: (_release_service(e) or "", e.element_id)):
        at = _instant(ev, _DEPLOY_TIME_KEYS)
        if at is None:
            continue
        service = _release_service(ev)
        of = f" of {service}" if service else ""
        out.append(
            _claim(
                f"The last release{of} finished by as_of {iso_utc(as_of)} is {_label(ev)} "
                f"({ev.element_id}), finished at {iso_utc(at)}",
                EpistemicStatus.FACT,
                0.95,
                [ev],
                Intent.RELEASE_LOOKUP.value,
            )
        )
    return out


def firing_times(evidence: Sequence[Evidence]) -> dict[str, tuple[datetime, str]]:
    """(when it fired, element id) of each alert firing (a FIRED_ON record), by evidence id:
    a list of firings reads in time order, ties by alert id (the record id leads with it),
    not by its statements (grouped by alert: 06:00 listed before 05:00)."""
    return {
        ev.evidence_id: (at, ev.element_id)
        for ev in evidence
        if ev.element_id.startswith("FIRED_ON|")
        and (at := _instant(ev, ALERT_TIME_KEYS)) is not None
    }


def team_firing_claims(
    fired: Sequence[Claim],
    evidence: Sequence[Evidence],
    teams: Sequence[str],
    services: Sequence[str],
    as_of: datetime,
) -> tuple[list[Claim], list[MissingEvidence]]:
    """For "which alerts fired for the payments team?" (h33b-firings): of the firing facts
    `fired`, those on a service a team asked about (`teams`, linked by the question's
    words) owned at the firing's time, each citing that OWNS record beside the firing
    ("...; team:payments-core owned svc:payment-api then (valid ... to ...)"); any other
    firing read (a text hit's service, a firing after the team handed the service over) is
    not the team's. `services`: the team's services whose firings were read (the planner's
    cap); a required gap names the team's services not read, and says when none fired on
    theirs. No team linked: no firing (the ownership gap says no team was found)."""
    if not teams:
        return [], []
    by_id = {ev.evidence_id: ev for ev in evidence}
    owns = [
        ev
        for ev in evidence
        if ev.type == "OWNS" and ev.context.get("team") in teams and ev.status == "active"
    ]
    out: list[Claim] = []
    for claim in fired:
        firing = next(
            (by_id[i] for i in claim.evidence_ids if by_id.get(i) is not None
             and by_id[i].element_id.startswith("FIRED_ON|")),
            None,
        )  # fmt: skip
        at = _instant(firing, ALERT_TIME_KEYS) if firing is not None else None
        if firing is None or at is None:
            continue
        service = firing.element_id.split("|")[2] if firing.element_id.count("|") >= 2 else ""
        held = [ev for ev in owns if ev.context.get("owned") == service and _held_at(ev, at)]
        if not held:
            continue
        owner = min(held, key=lambda ev: (str(ev.context.get("team")), ev.element_id))
        out.append(
            _claim(
                f"{claim.statement}; {owner.context.get('team')} owned {service} then "
                f"({_valid_text(owner)})",
                claim.epistemic_status,
                claim.confidence,
                [firing, owner],
                claim.intent,
            )
        )
    owned = sorted(
        {
            str(ev.context.get("owned"))
            for ev in owns
            if ev.context.get("owned_kind") == "service"
            or str(ev.context.get("owned", "")).startswith("svc:")
        }
    )
    unread = [svc for svc in owned if svc not in services]
    read_of = [svc for svc in owned if svc in services]
    names = ", ".join(sorted(teams))
    gaps: list[MissingEvidence] = []
    if unread:
        gaps.append(
            MissingEvidence(
                evidence_type="alert_firing",
                intents=[Intent.ALERT_FIRING.value],
                description=f"the firings of {len(unread)} more service(s) {names} owned in "
                f"the period asked were not read ({', '.join(unread)}; at most "
                f"{MAX_FOCUS_SERVICES} services' firings are read for a team): ask for each "
                f'("which alerts fired on {unread[0]}?")',
                required=True,
            )
        )
    if not out:
        read = f" (the firings of {', '.join(read_of)} read)" if read_of else ""
        gaps.append(
            MissingEvidence(
                evidence_type="alert_firing",
                intents=[Intent.ALERT_FIRING.value],
                description=f"no firing recorded by as_of {iso_utc(as_of)} of an alert the "
                f"subject may read on a service {names} owned at the firing's time, in the "
                f"period asked{read}",
                required=True,
            )
        )
    return out, gaps


def _held_at(ev: Evidence, at: datetime) -> bool:
    """Whether a record (an OWNS record: as it holds, `as_held`) holds at `at`."""
    held = as_held(ev)
    return (held.valid_from is None or held.valid_from <= at) and (
        held.valid_to is None or held.valid_to > at
    )


def fired_on_reads(calls: Sequence[ToolCallRecord]) -> list[str]:
    """The services whose firings (FIRED_ON into them, `alert_firing`) a read returned
    without error, sorted: a team's services read for its firings (`team_firing_claims`)."""
    return sorted(
        {
            str(c.params.get("start_id"))
            for c in calls
            if c.template_id == "dependency_neighbourhood"
            and c.options.get("rel_type") == "FIRED_ON"
            and c.options.get("direction") == "in"
            and c.error is None
        }
    )


# One `alert_firings_in_period` read, as the claims need it: its [from, to], its row limit,
# whether the limit cut it, and whether it failed.
FiringListRead = tuple[str, str, int, bool, bool]


def firing_list_reads(calls: Sequence[ToolCallRecord]) -> list[FiringListRead]:
    """(from, to, row limit, cut, failed) of each `alert_firings_in_period` read, in call
    order: an alert question naming no service read every firing of its period."""
    return [
        (
            str(c.params.get("from")),
            str(c.params.get("to")),
            c.limit or 0,
            c.truncated,
            bool(c.error),
        )
        for c in calls
        if c.template_id == "alert_firings_in_period"
    ]


def _firing_list_span(
    start: datetime, end: datetime, as_of: datetime, period: tuple[NamedTime, NamedTime] | None
) -> str:
    """The period a tenant's firing list covers, as the claims and gaps say it."""
    if start == EARLIEST:
        return f"by as_of {iso_utc(as_of)}" if end >= as_of else f"by {iso_utc(end)}"
    if start == end:
        return f"at as_of {iso_utc(as_of)}" if end == as_of else f"at {iso_utc(end)}"
    words = f" ({period[0].words!r})" if period is not None else ""
    return f"from {iso_utc(start)} to {iso_utc(end)}{words}"


def _firing_at_claims(fired: Sequence[Evidence], at: datetime, as_of: datetime) -> list[Claim]:
    """For "any alerts firing now?" (or at an instant named): one fact per firing begun by
    `at` and not ended by then, which alert on which service, since when, and its end as
    known at as_of (or that it was still firing at as_of)."""
    rows = []
    for ev in fired:
        parts = ev.element_id.split("|")
        started = _instant(ev, ALERT_TIME_KEYS)
        if len(parts) < 3 or started is None or started > at:
            continue
        if ev.valid_to is not None and ev.valid_to <= at:
            continue
        rows.append((started, parts[1], parts[2], ev))
    when = f"as_of {iso_utc(as_of)}" if at == as_of else iso_utc(at)
    out = []
    for started, alert, service, ev in sorted(rows, key=lambda r: (r[0], r[1], r[3].element_id)):
        until = _until(ev, as_of, "still firing")
        out.append(
            _claim(
                f"Alert {alert} firing on {service} at {when}: since {iso_utc(started)} ({until})",
                EpistemicStatus.FACT,
                0.95,
                [ev],
                Intent.ALERT_FIRING.value,
            )
        )
    return out


def _firing_list_claims(
    fired: Sequence[Evidence],
    question: str,
    as_of: datetime,
    reads: Sequence[FiringListRead],
    period: tuple[NamedTime, NamedTime] | None,
) -> tuple[list[Claim], list[MissingEvidence]]:
    """For an alert question naming no service ("what alerts fired yesterday?", "any alerts
    firing now?"): one fact per firing the last `alert_firings_in_period` read covers, as
    `_alert_firing_claims` states them (at an instant: `_firing_at_claims`); a required gap
    when none is recorded then (none the subject may read: not said to be none at all), when
    the read failed, or when its row limit cut the list (the latest kept)."""
    low, high, limit, cut, failed = reads[-1]
    start, end = instant_of(low), instant_of(high)
    if start is None or end is None:
        return [], []
    asked = period if period is not None and period[0].at == start else None
    span = _firing_list_span(start, end, as_of, asked)
    if start == end:
        claims = _firing_at_claims(fired, end, as_of)
    else:
        named = (
            None
            if start == EARLIEST
            else (
                NamedTime(at=start, words=asked[0].words if asked else span, period_end="start"),
                NamedTime(at=end, words=asked[0].words if asked else span, period_end="end"),
            )
        )
        before = end if start == EARLIEST and end < as_of else None
        claims, _ = _alert_firing_claims(fired, question, as_of, named, before)
    gaps: list[MissingEvidence] = []
    if failed:
        gaps.append(
            MissingEvidence(
                evidence_type="alert_firing",
                intents=[Intent.ALERT_FIRING.value],
                description=f"{UNKNOWN_NOT_ABSENT}which alerts fired {span}: the read of the "
                "firings failed (see its tool calls); ask again",
                required=True,
            )
        )
    elif not claims:
        gaps.append(
            MissingEvidence(
                evidence_type="alert_firing",
                intents=[Intent.ALERT_FIRING.value],
                description=f"no firing recorded {span} of an alert the subject may read on "
                "a service it may read (as recorded by known_at)",
                required=True,
            )
        )
    if cut and not failed:
        gaps.append(
            MissingEvidence(
                evidence_type="alert_firing",
                intents=[Intent.ALERT_FIRING.value],
                description=f"more than {limit} firings {span}: the read kept the latest "
                f"{limit} (by firing time), earlier firings are not listed; ask for a shorter "
                "period",
                required=True,
            )
        )
    return claims, gaps


def _firing_list_gaps(
    missing: Sequence[MissingEvidence], gaps: Sequence[MissingEvidence]
) -> list[MissingEvidence]:
    """The answer's gaps with those of a tenant's firing list in place of every other
    `alert_firing` gap (none asks for a service to be named: every firing was read)."""
    return [*(m for m in missing if m.evidence_type != "alert_firing"), *gaps]


def firing_list_notes(reads: Sequence[FiringListRead], question: str, as_of: datetime) -> list[str]:
    """The Time line of an alert question naming no service whose time no other line says:
    an instant ("now": as_of), the incident's window ("during the incident"), or no time
    named (every firing by as_of). Written and relative periods have their own lines."""
    if not reads:
        return []
    start, end = instant_of(reads[-1][0]), instant_of(reads[-1][1])
    said = time_references(question, as_of)
    if start is None or end is None or said.period is not None or said.relative:
        return []
    every = "of every service the subject may read"
    if start == EARLIEST:
        if said.event is not None or said.unresolved:
            return []  # "before the incident", "last night": their own lines
        return [
            f"no time named: the answer lists the alert firings by as_of {iso_utc(as_of)}, "
            f"{every}, latest first up to the read's cap"
        ]
    if start == end:
        return [
            f"{_firing_instant_words(said, end, as_of)}: the answer lists the alert firings "
            f"firing then (begun by it, not ended by it), {every}"
        ]
    if said.event_words is None:
        return []
    return [
        f"{said.event_words!r} is taken as the period from {iso_utc(start)} to "
        f"{iso_utc(end)}: the answer lists the alert firings in it, and those begun before "
        f'it still firing in it ("firing since" their start), {every}'
    ]


def _firing_instant_words(said: TimeReferences, at: datetime, as_of: datetime) -> str:
    """How the Time line of a firing list at one instant says it: "'now' is taken as as_of
    ...", "'10:30 UTC' is taken as ...", and a time written as the answer writes it once
    ("2026-07-23T10:30:00Z (the time written)"; before, "'2026-07-23T10:30:00Z' is taken as
    2026-07-23T10:30:00Z")."""
    if at == as_of:
        return f"'now' is taken as as_of {iso_utc(at)}"
    words = next((n.words for n in said.named if n.at == at), iso_utc(at)).strip()
    if words.removeprefix("at ").strip() in (iso_utc(at), iso_utc(at).removesuffix("Z")):
        return f"{iso_utc(at)} (the time written)"
    return f"{words!r} is taken as {iso_utc(at)}"


def _firing_list_unread(question: str, as_of: datetime) -> list[MissingEvidence]:
    """The gap of an alert question naming no service whose firings were not read: its
    period starts after as_of, or the event its words name was not placed (none the subject
    may read by as_of); not "names no service" (every service's firings were to be read)."""
    said = time_references(question, as_of)
    later = said.after(as_of)
    if said.period is not None and said.period[0].at > as_of:
        why = f"the period asked ({said.period[0].words!r}) starts after as_of {iso_utc(as_of)}"
    elif later:
        why = f"the time asked ({later[0]!r}) is after as_of {iso_utc(as_of)}"
    elif said.event_words:
        return [
            MissingEvidence(
                evidence_type="alert_firing",
                intents=[Intent.ALERT_FIRING.value],
                description=f"the time its words name ({said.event_words!r}) was not placed: "
                f"no such event the subject may read by as_of {iso_utc(as_of)}, so no alert "
                'firing was looked for: ask with a period ("which alerts fired on '
                '2026-07-23?") or name a service',
                required=True,
            )
        ]
    else:
        return []
    return [
        MissingEvidence(
            evidence_type="alert_firing",
            intents=[Intent.ALERT_FIRING.value],
            description=f"{why}: no firing in it can be recorded by then",
            required=True,
        )
    ]


# The lines of a release's own record that answer what a question asks of it (e32-qa O):
# what it changed, who or what deployed it, its approval. Its record is the release's
# Deployment node (the props below) and each document the gate typed a change record of it
# (`change_event` and `deployment_time`: the CI/CD record; not a postmortem nor a chat note).
_RECORD_LINES: dict[str, re.Pattern[str]] = {
    "contents": re.compile(
        r"\b(?:config\w*|diffs?|changes|changed|change[- ]?logs?|settings?|flags?|lowered|"
        r"raised|increased|decreased|bumped|upgraded|downgraded|migrations?)\b|->|→",
        re.IGNORECASE,
    ),
    "deployer": re.compile(
        r"\b(?:pipelines?|(?:deployed|triggered|started|initiated|run|released|rolled out|"
        r"approved and deployed)\s+by|actor|author|deployer|operator)\b",
        re.IGNORECASE,
    ),
    "approval": re.compile(
        r"\b(?:approv\w*|sign(?:ed)?[- ]?offs?|reviewed\s+by|reviewers?)\b", re.IGNORECASE
    ),
}
_RECORD_PROPS: dict[str, tuple[str, ...]] = {
    "contents": ("change_summary", "config_diff", "diff", "changes", "summary", "commit"),
    "deployer": ("actor", "deployed_by", "triggered_by", "author", "pipeline", "pipeline_run"),
    "approval": ("approved_by", "approver", "approvers", "approval", "approvals"),
}
_RECORD_ASKED = {
    "contents": "what it changed",
    "deployer": "who or what deployed it",
    "approval": "its approval",
}
# The approval gap when the release's record states it: the KG has still no approval type.
APPROVAL_STATED = (
    "no approval record type: the KG holds no sign-off of its own; what the release's record "
    "says of its approval is quoted above (its words, not a verified sign-off)"
)


class ReleaseRecordAnswer:
    """What a release question asked of the releases' own records: the claims quoting the
    lines that answer it, a required gap per release whose records state nothing of it,
    and whether a record states an approval (`reword_approval`)."""

    def __init__(
        self,
        claims: Sequence[Claim] = (),
        gaps: Sequence[MissingEvidence] = (),
        approval_stated: bool = False,
    ) -> None:
        self.claims = list(claims)
        self.gaps = list(gaps)
        self.approval_stated = approval_stated

    def reword_approval(self, missing: Sequence[MissingEvidence]) -> list[MissingEvidence]:
        """The answer's gaps with the `approval` gap no longer required once a release's
        record states its approval (quoted): the KG still has no approval type."""
        if not self.approval_stated:
            return list(missing)
        return [
            m.model_copy(update={"description": APPROVAL_STATED, "required": False})
            if m.evidence_type == "approval"
            else m
            for m in missing
        ]


def _record_lines(ev: Evidence, ask: str) -> list[str]:
    """The lines of one record of a release that answer `ask`: its props named so (a
    Deployment's), then the lines of its text that say so, whitespace joined, each once."""
    out: list[str] = []
    if ev.type == "Deployment":
        for key in _RECORD_PROPS[ask]:
            value = ev.props.get(key)
            if isinstance(value, str | int | float) and str(value).strip():
                out.append(f"{key}: {' '.join(str(value).split())}")
    for line in (ev.content or "").splitlines():
        text = " ".join(line.split())
        if text and _RECORD_LINES[ask].search(text):
            out.append(text)
    return list(dict.fromkeys(out))


def _release_records(released: Sequence[Evidence]) -> dict[str, list[Evidence]]:
    """The own records of each release among `released`, by release: its Deployment node
    and the change records about it (`change_event` typed), by element id."""
    out: dict[str, list[Evidence]] = {}
    for ev in released:
        release = _release_of(ev)
        if release is None or ev.status != "active":
            continue
        if ev.type == "Deployment" or "change_event" in ev.evidence_types:
            out.setdefault(release, []).append(ev)
    return {r: sorted(evs, key=lambda e: (e.element_id, e.evidence_id)) for r, evs in out.items()}


def _record_gap(ask: str, release: str, name: str, untrusted: bool) -> MissingEvidence:
    """The required gap of a release whose trusted records say nothing of `ask`; `untrusted`:
    an untrusted record of it has lines about it, not quoted (its evidence item holds them)."""
    what = {
        "contents": f"no record the subject may read states what release {name} ({release}) "
        "changed (no change summary, diff or config change in its own record): only when it "
        "ran is recorded",
        "deployer": f"no deployer is recorded for release {name} ({release}) in the records "
        "the subject may read: its own record states when it ran, not who or what deployed it",
    }[ask]
    if untrusted:
        what = (
            f"only untrusted imported text of release {name} ({release}) says "
            f"{_RECORD_ASKED[ask]}: not quoted as an answer (its evidence item holds it, as "
            "data); no trusted record states it"
        )
    return MissingEvidence(
        evidence_type=f"release_{ask}",
        intents=[Intent.RELEASE_LOOKUP.value],
        description=what,
        required=True,
    )


def release_record_answer(
    released: Sequence[Evidence],
    question: str,
    as_of: datetime,
    services: Sequence[str] = (),
) -> ReleaseRecordAnswer:
    """For a release question asking what the release changed, who deployed it or whether it
    was approved (`release_record_asks`, the `approval` unrecorded ask): per release stated
    (`released`, the deployment-time records kept), one fact per trusted record of it quoting
    the lines that answer each ask, as the record's words (data, never followed; untrusted
    text is never quoted, nor does it relax the approval gap); a required gap
    per release whose records state nothing of what was changed or who deployed it (an
    approval not stated keeps the `approval` gap). Asked of the last release ("what changed in
    the last release of X?"), only the last of each service (of `services`) finished by as_of
    is asked about. Sorted by release, record and ask."""
    asks = release_record_asks(question)
    if "approval" in unrecorded_asks(question):
        # What it changed is what a change rule speaks of (h35): said beside its approval.
        asks = [*dict.fromkeys([*asks, "contents"]), "approval"]
    if not asks:
        return ReleaseRecordAnswer()
    gaps: list[MissingEvidence] = _clock_release_gaps(released, question, as_of)
    released = asked_releases(released, question, as_of, services)
    claims: list[Claim] = _clock_releases_claims(released, question)
    # Approval stated by a trusted record of every release stated (one of several is not
    # the approval of the others).
    approvals: list[bool] = []
    for release, records in sorted(_release_records(released).items()):
        own = [ev for ev in records if ev.type == "Deployment"]
        name = _label(own[0]) if own else release.removeprefix("deploy:")
        for ask in asks:
            stated = untrusted = False
            for ev in records:
                lines = _record_lines(ev, ask)
                if not lines:
                    continue
                if ev.trust != "trusted":
                    # Untrusted imported text is never quoted in a claim (its evidence item
                    # holds it, fenced as data): it states nothing here.
                    untrusted = True
                    continue
                stated = True
                record = (
                    f"The own record of release {name} ({release})"
                    if ev.type == "Deployment"
                    else f"{_label(ev)} ({ev.element_id}), the record of release {name} "
                    f"({release}),"
                )
                claims.append(
                    _claim(
                        f"{record} states {_RECORD_ASKED[ask]}: "
                        + "; ".join(f'"{_quote(line)}"' for line in lines),
                        EpistemicStatus.FACT,
                        0.9,
                        [ev],
                        Intent.RELEASE_LOOKUP.value,
                    )
                )
            if ask == "approval":
                approvals.append(stated)
            elif not stated:
                gaps.append(_record_gap(ask, release, name, untrusted))
    return ReleaseRecordAnswer(claims, gaps, bool(approvals) and all(approvals))


def asked_releases(
    released: Sequence[Evidence], question: str, as_of: datetime, services: Sequence[str] = ()
) -> list[Evidence]:
    """The records of the releases a question about a release's own record asks of: those
    it names (by id, name or version); else the last of each service finished by as_of when
    it asks for the last one, or asks whether "the release" was approved naming none (h35:
    its record is the chosen release's, not an older one's read beside it); else all of
    `released`."""
    approval = "approval" in unrecorded_asks(question)
    names = extract_mentions(question).release_names()
    if names:
        # "Was release 2026.07.23.1 reviewed?", "did 2026.07.23.1 follow the change policy?",
        # "what changed in 2026.07.23.4?" (h39: before, with --service, every release of the
        # service read beside it was quoted too): that one, not the others read beside it; a
        # record of its time (the CI/CD document) goes with it.
        named = {
            ev.element_id
            for ev in released
            if ev.type == "Deployment"
            and release_named(
                names,
                ev.element_id,
                ev.name,
                ev.props["release"] if isinstance(ev.props.get("release"), str) else None,
            )
        }
        return [
            ev
            for ev in released
            if (release := _release_of(ev) or "") in named
            or release_named(names, release, None, None)
        ]
    clock = release_clock(question) if approval else None
    if clock is not None:
        # "Did the 10:02 release follow the policy?": the release of that minute, or none.
        return _clock_releases(released, clock, as_of)
    if _LAST_RELEASE_ASKED.search(question) or approval:
        return _last_releases(released, as_of, services)
    return list(released)


def _clock_releases(
    released: Sequence[Evidence], clock: ReleaseClock, as_of: datetime
) -> list[Evidence]:
    """The records of the releases by as_of that finished (else started) in the minute the
    question names, with the documents of their time."""
    own = [
        ev
        for ev in released
        if ev.type == "Deployment"
        and (t := _instant(ev, _DEPLOY_TIME_KEYS)) is not None
        and t <= as_of
    ]
    times = [
        (_instant(ev, _DEPLOY_TIME_KEYS), instant_of(ev.props.get("started_at"))) for ev in own
    ]
    kept = {own[i].element_id for i in at_clock(clock, times)}
    return [ev for ev in released if ev.element_id in kept or (_release_of(ev) or "") in kept]


def _clock_releases_claims(asked: Sequence[Evidence], question: str) -> list[Claim]:
    """Asked about "the 10:02 release" when several ran in that minute (`_clock_releases`):
    a fact saying so, naming each, so the auditor hears that each is judged, not one."""
    clock = release_clock(question)
    own = sorted(
        (ev for ev in asked if ev.type == "Deployment"),
        key=lambda ev: (_instant(ev, _DEPLOY_TIME_KEYS) or EARLIEST, ev.element_id),
    )
    if clock is None or len(own) < 2 or "approval" not in unrecorded_asks(question):
        return []
    said = "; ".join(
        f"{_label(ev)} ({ev.element_id}) of {_release_service(ev) or 'an unknown service'}, "
        + _clock_time_said(ev, clock)
        for ev in own
    )
    return [
        _claim(
            f"{len(own)} releases ran at {clock.text()}, the minute the question names: {said}; "
            "each is judged by the rule that governed its own service then",
            EpistemicStatus.FACT,
            0.9,
            own,
            Intent.RELEASE_LOOKUP.value,
        )
    ]


def _clock_time_said(ev: Evidence, clock: ReleaseClock) -> str:
    """When a release picked by the clock ran in its minute: its finish, else its start."""
    finish = _instant(ev, _DEPLOY_TIME_KEYS)
    if finish is not None and clock.matches(finish):
        return f"finished at {iso_utc(finish)}"
    start = instant_of(ev.props.get("started_at"))
    return f"started at {iso_utc(start)}" if start is not None else "its time unknown"


def named_release_gaps(released: Sequence[Evidence], question: str) -> list[MissingEvidence]:
    """A release the question names ("did 2026.07.23.4 follow the change policy?", "when did
    release 2026.07.19.9 finish?") of which no record was kept: said by its name, a required
    gap, and no other release is judged in its place (before, the rubric's "no release time
    for the service", or, named by its version alone, the last release's judgement). Never
    why: a release of another tenant, hidden by its ACL, recorded after known_at or never
    recorded reads the same."""
    names = extract_mentions(question).release_names()
    kept = [
        (_release_of(ev) or "", ev)
        for ev in released
        if "deployment_time" in ev.evidence_types and _release_of(ev) is not None
    ]
    absent = [
        name
        for name in names
        if not any(
            release_named(
                [name],
                release,
                ev.name if ev.type == "Deployment" else None,
                _version_of(ev) if ev.type == "Deployment" else None,
            )
            for release, ev in kept
        )
    ]
    if not absent:
        return []
    said = ", ".join(f"release {version}" if (version := release_version(n)) else n for n in absent)
    return [
        MissingEvidence(
            evidence_type="deployment_time",
            intents=[Intent.RELEASE_LOOKUP.value],
            description=f"no record of {said}, named in the question, that the subject may "
            "read (not found, not visible to the subject, not recorded by known_at, or not "
            "valid at as_of): no other release is judged in its place",
            required=True,
        )
    ]


def _version_of(ev: Evidence) -> str | None:
    """A release record's version (its `release`)."""
    release = ev.props.get("release")
    return release if isinstance(release, str) else None


def _clock_release_gaps(
    released: Sequence[Evidence], question: str, as_of: datetime
) -> list[MissingEvidence]:
    """Asked whether "the 10:02 release" was approved and no release read finished or
    started in that minute: said, a required gap; no other release is judged in its place."""
    clock = release_clock(question)
    if (
        clock is None
        or "approval" not in unrecorded_asks(question)
        or extract_mentions(question).release_names()
        or asked_releases(released, question, as_of)
    ):
        return []
    return [
        MissingEvidence(
            evidence_type="deployment_time",
            intents=[Intent.RELEASE_LOOKUP.value],
            description=f"no release finished or started at {clock.text()} among the "
            f"releases the subject may read by as_of {iso_utc(as_of)}: no other release is "
            "judged in its place",
            required=True,
        )
    ]


# A record's line lowering a setting ("db.pool.max_size 50 -> 10", "db.pool.max_size lowered
# from 50 to 10"): the setting's name and both values.
_LOWERED_SETTING = re.compile(
    r"(?P<name>[A-Za-z][\w.-]*\w)\s+(?:(?:was\s+)?(?:lowered|reduced|decreased|cut)\s+from\s+"
    r"(?P<was>\d+(?:\.\d+)?)\s+to\s+(?P<now>\d+(?:\.\d+)?)|(?P<was2>\d+(?:\.\d+)?)\s*(?:->|→)\s*"
    r"(?P<now2>\d+(?:\.\d+)?))"
)
# A rule speaking of lowering something ("may not lower capacity settings (connection pools,
# replicas) without a load test").
_LOWERING_RULE = re.compile(r"\b(?:lower|reduc|decreas)\w*", re.IGNORECASE)


def _word_stems(text: str) -> set[str]:
    """The words of `text` of four letters or more, a plural's `s` dropped."""
    words = re.findall(r"[a-z]{4,}", text.lower())
    return {w[:-1] if w.endswith("s") and not w.endswith("ss") else w for w in words}


def _lowered_settings(lines: Sequence[str]) -> list[tuple[str, str, str, str]]:
    """(setting, was, now, line) for each setting a record's lines say was lowered."""
    out: list[tuple[str, str, str, str]] = []
    for line in lines:
        for m in _LOWERED_SETTING.finditer(line):
            was, now = m.group("was") or m.group("was2"), m.group("now") or m.group("now2")
            if float(now) < float(was):
                out.append((m.group("name"), was, now, line))
    return list(dict.fromkeys(out))


def _governs(policy: Evidence, service: str, at: datetime) -> bool:
    """Whether `policy` was read as governing `service` (its GOVERNED_BY link) and was valid
    at `at` (the release's finish)."""
    linked = policy.context.get("linked_via")
    return (
        policy.context.get("anchor") == service
        and isinstance(linked, list)
        and "GOVERNED_BY" in linked
        and (policy.valid_from is None or policy.valid_from <= at)
        and (policy.valid_to is None or at < policy.valid_to)
    )


def _in_force_since(
    policy: Evidence, policies: Sequence[Evidence], service: str, as_of: datetime
) -> str:
    """What governs `service` at as_of when `policy`, in force at the release, no longer
    does (ended, or replaced by a version read): the auditor judges by the release's rule
    and is told the rule changed since."""
    now = sorted(p.element_id for p in policies if p is not policy and _governs(p, service, as_of))
    if _governs(policy, service, as_of) and policy.replacement not in now:
        return ""
    if not now:
        return f"; it no longer holds at as_of {iso_utc(as_of)}"
    return f"; a newer policy is in force at as_of {iso_utc(as_of)}: {', '.join(now)}"


def policy_ended_by(policy: Evidence, policies: Sequence[Evidence], as_of: datetime) -> str:
    """Why `policy` does not hold at as_of ("it ended at ...", "... replaced it"), or "" when
    it does: a policy admitted for a release's finish alone (the gate's `release_finishes`)
    is never said to be in force at as_of."""
    if policy.valid_to is not None and policy.valid_to <= as_of:
        return f"it ended at {iso_utc(policy.valid_to)}"
    if policy.valid_from is not None and policy.valid_from > as_of:
        return f"it begins at {iso_utc(policy.valid_from)}"
    newer = sorted(
        p.element_id
        for p in policies
        if p.element_id == policy.replacement and (p.valid_from is None or p.valid_from <= as_of)
    )
    return f"{', '.join(newer)} replaced it" if newer else ""


def release_policy_claims(
    released: Sequence[Evidence],
    policies: Sequence[Evidence],
    question: str,
    as_of: datetime,
    services: Sequence[str] = (),
) -> list[Claim]:
    """For a question whether a release was approved or followed its change rule (h35): per
    release asked about and policy read governing its service when it finished, a fact
    quoting the policy's rule; and, per setting the release's own trusted record says it
    lowered whose name the rule speaks of as a thing not to lower, an inference that the
    change falls under the rule. Never a verdict: what the rule asks for (a review, a load
    test) is no record type, and the `approval` gap says so. Only policies the subject may
    read reach here (the gate admitted them)."""
    if "approval" not in unrecorded_asks(question) or not policies:
        return []
    claims: list[Claim] = []
    for release, records in sorted(
        _release_records(asked_releases(released, question, as_of, services)).items()
    ):
        own = [ev for ev in records if ev.type == "Deployment"]
        if not own:
            continue
        service, at = _release_service(own[0]), _instant(own[0], _DEPLOY_TIME_KEYS)
        if service is None or at is None:
            continue
        name = _label(own[0])
        # Each setting lowered, with every trusted record of the release saying so.
        lowered: dict[tuple[str, str, str], list[tuple[Evidence, str]]] = {}
        for ev in records:
            if ev.trust == "trusted":
                for setting, was, now, line in _lowered_settings(_record_lines(ev, "contents")):
                    lowered.setdefault((setting, was, now), []).append((ev, line))
        for policy in sorted(policies, key=lambda ev: ev.evidence_id):
            if not _governs(policy, service, at):
                continue
            rule = " ".join((policy.content or "").split())
            claims.append(
                _claim(
                    f"Policy {_title(policy)} ({policy.element_id}) governed {service} when "
                    f"release {name} ({release}) finished at {iso_utc(at)} "
                    f'({_valid_text(policy)}); its rule: "{_quote(rule, 400)}"'
                    f"{_in_force_since(policy, policies, service, as_of)}",
                    EpistemicStatus.FACT,
                    0.95,
                    [policy, own[0]],
                    Intent.APPLICABLE_POLICY.value,
                )
            )
            if not _LOWERING_RULE.search(rule):
                continue
            rule_words = _word_stems(rule)
            for (setting, was, now), said in sorted(lowered.items()):
                named = sorted(_word_stems(setting) & rule_words)
                if not named:
                    continue
                quoted = "; ".join(f'{ev.element_id}: "{_quote(line)}"' for ev, line in said)
                claims.append(
                    _claim(
                        f"Release {name} ({release}) lowered {setting} from {was} to {now} "
                        f"(its records: {quoted}), and the rule of "
                        f"{policy.element_id} speaks of lowering such settings "
                        f"({', '.join(repr(w) for w in named)}): the change falls under that "
                        "rule; whether what the rule asks for before such a change was done "
                        "is unknown: none of it is recorded",
                        EpistemicStatus.INFERENCE,
                        0.7,
                        [policy, *(ev for ev, _ in said)],
                        Intent.APPLICABLE_POLICY.value,
                    )
                )
    return claims


# A change question asking what configuration changed (`listed_release_contents`).
_CONFIG_ASKED = re.compile(r"\bconfig\w*|\bsettings?\b|\bdiffs?\b|配置", re.IGNORECASE)


def listed_release_contents(
    claims: Sequence[Claim],
    evidence: Sequence[Evidence],
    question: str,
    as_of: datetime,
    services: Sequence[str] = (),
) -> list[Claim]:
    """A change list asking what was changed ("any config changes on payment-api?",
    `release_record_asks` `contents`): for each release the list's `claims` state (so bounded
    as the list is: before the first error, the period asked, or by as_of), what its own
    records say it changed, quoted as `release_record_answer` quotes them ("Config diff:
    db.pool.max_size 50 -> 10; ..."). A release whose records state nothing of it adds no
    claim (the list answers the question; no gap is added). Only when the words ask for
    config, settings or a diff ("what changed in July?" lists the changes alone)."""
    if "contents" not in release_record_asks(question) or not _CONFIG_ASKED.search(question):
        return []
    by_id = {ev.evidence_id: ev for ev in evidence}
    listed = {
        release
        for claim in claims
        for evidence_id in claim.evidence_ids
        if (ev := by_id.get(evidence_id)) is not None
        and ev.type == "Deployment"
        and (release := _release_of(ev)) is not None
    }
    if not listed:
        return []
    released = [
        ev
        for ev in evidence
        if "deployment_time" in ev.evidence_types and _release_of(ev) in listed
    ]
    answer = release_record_answer(released, "what config changed in it?", as_of, services)
    return [
        claim.model_copy(update={"intent": Intent.CHANGE_HISTORY.value}) for claim in answer.claims
    ]
