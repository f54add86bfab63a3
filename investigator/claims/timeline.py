"""A timeline's events: one fact per dated record of an incident's window, in time order.

"Show me the timeline of PAY-4097", "what happened during the payments incident?": the
incident's start (the incident record, else the latest first error by as_of) less a lookback
(`DEPLOY_LOOKBACK` for releases, `CHANGE_LOOKBACK` for change events and alert firings) to
its resolution, or as_of while it is open. Each release start and finish, change event, first
error, alert firing, the incident's start and resolution and each affected-service period is
one `fact` bound to its record, with its time. A report's own timeline text is quoted as what
that report states, apart from the records' events (never merged into them); an action a
report states with a clock time ("Fix: rollback at 10:41.") is listed in time order among
them, as the report's words, never as a recorded event.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from investigator.claims.actions import _stated_actions
from investigator.claims.model import Claim, EpistemicStatus
from investigator.claims.reports import _record_notes
from investigator.claims.wording import (
    UNKNOWN_NOT_ABSENT,
    _claim,
    _human,
    _label,
    _quote,
    _until,
    _with,
)
from investigator.evidence import Evidence, iso_utc
from investigator.planner import CHANGE_LOOKBACK, DEPLOY_LOOKBACK
from investigator.rubric import Intent, MissingEvidence
from investigator.timeline import (
    ALERT_TIME_KEYS,
    CHANGE_TIME_KEYS,
    DEPLOY_TIME_KEYS,
    FIRST_SEEN_KEYS,
    ResponseMetric,
    incident_span,
    instant,
    instant_of,
    shift,
)

# One event: (time, record id, statement, its records).
_Event = tuple[datetime, str, str, list[Evidence]]

# "Timeline (UTC): 10:02:00 payment-api release ... finished. 10:02:38 first ...": the
# report's own list of timed sentences, each starting with a clock time.
_REPORT_TIMELINE = re.compile(r"\btime\s?line\b[^:\n]{0,20}:", re.IGNORECASE)
_TIMED_SENTENCE = re.compile(r"\s*(\d{1,2}:\d{2}(?::\d{2})?Z?\b.*?\.)(?=\s|$)", re.DOTALL)
_REPORT_KINDS = ("incident_report", "postmortem")


def _incident_events(incidents: Sequence[Evidence], as_of: datetime) -> list[_Event]:
    out: list[_Event] = []
    for ev in incidents:
        name = f"Incident {ev.element_id} ({_label(ev)})"
        started, resolved = incident_span(ev)
        severity = ev.props.get("severity")
        sev = f", severity {severity}" if isinstance(severity, str) and severity else ""
        if started is not None:
            out.append((started, ev.element_id, f"{name} started{sev}", [ev]))
        if resolved is not None and resolved <= as_of:
            out.append((resolved, ev.element_id, f"{name} resolved", [ev]))
    return out


def _window(
    incidents: Sequence[Evidence], firsts: Sequence[Evidence], as_of: datetime
) -> tuple[datetime, datetime, bool] | None:
    """(start, end, open): the incident's start (the latest incident started by as_of), else
    the latest first error by as_of; its end the resolution by as_of, else as_of (open)."""
    started = [
        (t, ev) for ev in incidents if (t := incident_span(ev)[0]) is not None and t <= as_of
    ]
    if started:
        start, incident = max(started, key=lambda p: (p[0], p[1].element_id))
        resolved = incident_span(incident)[1]
        if resolved is not None and resolved <= as_of:
            return start, resolved, False
        return start, as_of, True
    seen = [t for ev in firsts if (t := instant(ev, FIRST_SEEN_KEYS)) and t <= as_of]
    if not seen:
        return None
    return max(seen), as_of, True


def _events(evidence: Sequence[Evidence], as_of: datetime) -> list[_Event]:
    out: list[_Event] = []
    for ev in _with(evidence, "deployment_time"):
        if ev.type != "Deployment":
            continue
        service = ev.context.get("service", ev.props.get("service"))
        of = f" of {service}" if isinstance(service, str) else ""
        release = ev.props.get("release")
        label = release if isinstance(release, str) and release else _label(ev)
        name = f"Release {label} ({ev.element_id}){of}"
        began = instant_of(ev.props.get("started_at"))
        finished = instant(ev, DEPLOY_TIME_KEYS)
        if began is not None and (finished is None or began < finished):
            out.append((began, ev.element_id, f"{name} started its rollout", [ev]))
        if finished is not None:
            out.append((finished, ev.element_id, f"{name} finished", [ev]))
    for ev in _with(evidence, "change_event"):
        if ev.type == "Deployment" or (at := instant(ev, CHANGE_TIME_KEYS)) is None:
            continue
        summary = ev.props.get("summary")
        what = f": {summary}" if isinstance(summary, str) and summary else ""
        out.append((at, ev.element_id, f"Change {_label(ev)} ({ev.element_id}){what}", [ev]))
    for ev in _with(evidence, "error_first_seen"):
        if ev.type != "EMITTED" or (at := instant(ev, FIRST_SEEN_KEYS)) is None:
            continue
        service = ev.element_id.split("|")[1] if ev.element_id.count("|") == 2 else None
        on = f" on {service}" if service else ""
        out.append((at, ev.element_id, f"First {_label(ev)} error seen{on}", [ev]))
    for ev in _with(evidence, "alert_firing"):
        parts = ev.element_id.split("|")
        if len(parts) < 3 or (at := instant(ev, ALERT_TIME_KEYS)) is None:
            continue
        until = _until(ev, as_of, "still firing")
        out.append((at, ev.element_id, f"Alert {parts[1]} fired on {parts[2]} ({until})", [ev]))
    for ev in _with(evidence, "affected_service"):
        if ev.type != "AFFECTED_BY" or ev.valid_from is None:
            continue
        parts = ev.element_id.split("|")
        if len(parts) != 3:
            continue
        until = _until(ev, as_of, "still affected")
        out.append(
            (
                ev.valid_from,
                ev.element_id,
                f"Service {parts[1]} affected by incident {parts[2]} ({until})",
                [ev],
            )
        )
    incidents = [ev for ev in _with(evidence, "incident_report") if ev.type == "Incident"]
    out += _incident_events(incidents, as_of)
    return out


def _stated_action_events(evidence: Sequence[Evidence], as_of: datetime) -> list[_Event]:
    """Each action a report admitted states with a clock time ("Fix: rollback at 10:41." of
    the postmortem), placed at that time among the records' events as the report's words:
    quoted, marked as stated by the report, never a recorded event (the KG has no
    response-action record). Its time is read as `actions` reads it (UTC on the day the
    report is valid from); one after as_of, or with no time written, is not listed."""
    out: list[_Event] = []
    for stated in _stated_actions(evidence, as_of):
        if stated.at is None:
            continue
        report = stated.report
        notes = ", ".join([report.element_id, *_record_notes(report)])
        out.append(
            (
                stated.at,
                report.element_id,
                f'{_label(report)} ({notes}) states an action taken: "{_quote(stated.sentence)}" '
                "(the report's words, its time read as UTC on the day the report is valid "
                "from; not a recorded event: the KG has no response-action record)",
                [report],
            )
        )
    return out


def _report_timelines(evidence: Sequence[Evidence]) -> list[Claim]:
    """What a trusted report's own timeline text states, quoted as the report's words."""
    out: list[Claim] = []
    for ev in _with(evidence, "incident_report"):
        if ev.type != "Document" or ev.trust != "trusted":
            continue
        found = _REPORT_TIMELINE.search(ev.content)
        if found is None:
            continue
        rest = ev.content[found.end() :]
        sentences: list[str] = []
        while (timed := _TIMED_SENTENCE.match(rest)) is not None:
            sentences.append(" ".join(timed.group(1).split()))
            rest = rest[timed.end() :]
        if not sentences:
            continue
        out.append(
            _claim(
                f"Report {ev.title or _label(ev)} ({ev.element_id}) states its own timeline "
                f"(the report's words, not records of the KG): "
                f"{_quote(' '.join(sentences), 400)!r}",
                EpistemicStatus.FACT,
                0.8,
                [ev],
                Intent.TIMELINE.value,
            )
        )
    return out


def _no_window_gap(as_of: datetime, so: str) -> MissingEvidence:
    """The required gap of a timeline (or a response time) with no incident started and no
    error first seen by as_of: `so` says what cannot be given."""
    return MissingEvidence(
        evidence_type="timeline",
        intents=[Intent.TIMELINE.value],
        description=f"no incident started and no error first seen by as_of "
        f"{iso_utc(as_of)} was found that the subject may read: {so} "
        "(name the incident, error code or service if one was meant)",
    )


def _detect_unread_gap(of: str, on: str, origin_words: str) -> MissingEvidence:
    """The time to detect when no firing was read and a read of the run failed: unknown."""
    return MissingEvidence(
        evidence_type="alert_firing",
        intents=[Intent.TIMELINE.value],
        description=f"{UNKNOWN_NOT_ABSENT}time to detect{of}: the first alert firing on {on} "
        f"after the first error ({origin_words}) is not among the records read, and a read of "
        "the run failed (see its tool calls: a query timed out or Neo4j refused it), so "
        "whether and when an alert fired is not known; ask again",
    )


def timeline_claims(
    evidence: Sequence[Evidence], as_of: datetime
) -> tuple[list[Claim], list[MissingEvidence]]:
    """One fact per event of the timeline's window by as_of, in time order (ties by record
    id), then what its reports' own timelines say; a required gap when no event is found."""
    incidents = [ev for ev in _with(evidence, "incident_report") if ev.type == "Incident"]
    firsts = _with(evidence, "error_first_seen")
    window = _window(incidents, firsts, as_of)
    if window is None:
        return [], [_no_window_gap(as_of, "no timeline to list")]
    start, end, still_open = window
    earliest = {
        "deployment_time": shift(start, -DEPLOY_LOOKBACK),
    }
    lookback = shift(start, -CHANGE_LOOKBACK)
    kept: list[_Event] = []
    stated = _stated_action_events(evidence, as_of)
    for event in [*_events(evidence, as_of), *stated]:
        at, _, _, evs = event
        etype = evs[0].evidence_types[0] if evs[0].evidence_types else ""
        if earliest.get(etype, lookback) <= at <= end:
            kept.append(event)
    claims = [
        _claim(
            f"{iso_utc(at)}: {statement}",
            EpistemicStatus.FACT,
            # A report's words: as sure as the action claims quoting them (`actions`).
            0.9 if (at, record, statement, evs) in stated else 0.95,
            evs,
            Intent.TIMELINE.value,
        )
        for at, record, statement, evs in sorted(kept, key=lambda e: (e[0], e[1], e[2]))
    ]
    if still_open:
        basis = [ev for ev in incidents if ev.valid_from is not None and ev.valid_from <= as_of]
        if basis:
            claims.append(
                _claim(
                    f"{iso_utc(as_of)} (as_of): the incident is still open (no resolution "
                    "recorded by as_of); the timeline stops here",
                    EpistemicStatus.FACT,
                    0.9,
                    basis,
                    Intent.TIMELINE.value,
                )
            )
    claims += _report_timelines(evidence)
    return claims, []


def _incident_of_window(incidents: Sequence[Evidence], as_of: datetime) -> Evidence | None:
    """The incident `_window` dates the timeline by: the latest started by as_of."""
    started = [
        (t, ev) for ev in incidents if (t := incident_span(ev)[0]) is not None and t <= as_of
    ]
    return max(started, key=lambda p: (p[0], p[1].element_id))[1] if started else None


def _first_error_of(
    evidence: Sequence[Evidence], services: set[str], start: datetime, end: datetime
) -> tuple[datetime, Evidence] | None:
    """The earliest error first seen on one of `services` (any, when none is known) from
    `CHANGE_LOOKBACK` before `start` to `end`: where a response time starts."""
    seen = []
    for ev in _with(evidence, "error_first_seen"):
        parts = ev.element_id.split("|")
        if ev.type != "EMITTED" or len(parts) != 3 or (at := instant(ev, FIRST_SEEN_KEYS)) is None:
            continue
        if (not services or parts[1] in services) and shift(start, -CHANGE_LOOKBACK) <= at <= end:
            seen.append((at, ev))
    return min(seen, key=lambda p: (p[0], p[1].element_id)) if seen else None


def _first_firing_of(
    evidence: Sequence[Evidence], services: set[str], start: datetime, end: datetime
) -> tuple[datetime, Evidence] | None:
    """The earliest alert firing on one of `services` (any, when none is known) from
    `CHANGE_LOOKBACK` before `start` to `end`: "the alert" of a response time."""
    fired = []
    for ev in _with(evidence, "alert_firing"):
        parts = ev.element_id.split("|")
        if len(parts) < 3 or (at := instant(ev, ALERT_TIME_KEYS)) is None:
            continue
        if (not services or parts[2] in services) and shift(start, -CHANGE_LOOKBACK) <= at <= end:
            fired.append((at, ev))
    return min(fired, key=lambda p: (p[0], p[1].element_id)) if fired else None


def _declare_claim(
    incident: Evidence | None,
    records: Sequence[Evidence],
    origin: datetime,
    origin_ev: Evidence,
    origin_words: str,
    as_of: datetime,
) -> tuple[list[Claim], list[MissingEvidence]]:
    """Time to declare: the first error -> the incident's first record (its version 1, when
    it was made: the records state no time of the declaration itself). The first record not
    read (only a later version known) is a gap, never the later record's time."""
    if incident is None:
        return [], [
            MissingEvidence(
                evidence_type="incident_report",
                intents=[Intent.TIMELINE.value],
                description=f"time to declare: no incident record the subject may read started "
                f"by as_of {iso_utc(as_of)}, so no declaration is known to measure to (the "
                f"errors: {origin_words})",
            )
        ]
    versions = {r.version: r for r in records if r.element_id == incident.element_id}
    versions.setdefault(incident.version, incident)
    first = versions[min(versions)]
    if first.version != 1 or first.recorded_at is None:
        return [], [
            MissingEvidence(
                evidence_type="incident_report",
                intents=[Intent.TIMELINE.value],
                description=f"time to declare of incident {incident.element_id}: its first "
                f"record was not read (the earliest read is version {first.version}"
                f"{', recorded ' + iso_utc(first.recorded_at) if first.recorded_at else ''}), "
                "so when it was declared is not known",
            )
        ]
    declared = first.recorded_at
    define = (
        "declare = first error -> the incident's first record, when it was made: the records "
        "state no time of the declaration itself"
    )
    if declared > as_of:
        said = (
            f"Time to declare of incident {incident.element_id}: not declared by as_of "
            f"{iso_utc(as_of)} ({define}): {origin_words}; its first record (version 1) was "
            f"made at {iso_utc(declared)}, after as_of"
        )
    else:
        took = (
            _human(declared - origin)
            if declared >= origin
            else f"none: its first record was made {_human(origin - declared)} before the first "
            "error"
        )
        said = (
            f"Time to declare of incident {incident.element_id}: {took} ({define}): "
            f"{origin_words}, incident declared (record version 1 made) at {iso_utc(declared)}"
        )
    evs = [origin_ev, incident] if origin_ev is not incident else [incident]
    return [_claim(said, EpistemicStatus.FACT, 0.95, evs, Intent.TIMELINE.value)], []


def response_metric_claims(
    evidence: Sequence[Evidence],
    as_of: datetime,
    metrics: Sequence[ResponseMetric],
    unread: bool = False,
    records: Sequence[Evidence] = (),
) -> tuple[list[Claim], list[MissingEvidence]]:
    """For "how long did it take to detect the incident?", "how long until the alert fired?",
    "time to resolve": each response time asked, the difference between two recorded
    instants, each bound to its record, its definition said: detect = the first error (the
    earliest first sighting on a service the incident affected, else the incident's recorded
    start) -> the first alert firing on such a service; resolve = the same start -> the
    incident record's resolution; declare = the same start -> the incident's first record
    (`records`: its versions read). By as_of only: not yet detected or resolved is said with
    the time so far. No acknowledgement record exists in the KG: asked, a required gap.
    `unread`: a read of the run failed, so no firing read is no firing recorded: the time to
    detect is then a required gap, unknown, never "no alert firing ... is recorded"."""
    incidents = [ev for ev in _with(evidence, "incident_report") if ev.type == "Incident"]
    window = _window(incidents, _with(evidence, "error_first_seen"), as_of)
    if window is None:
        return [], [_no_window_gap(as_of, "no response time can be measured")]
    start, end, still_open = window
    incident = _incident_of_window(incidents, as_of)
    services = {
        parts[1]
        for ev in _with(evidence, "affected_service")
        if ev.type == "AFFECTED_BY"
        and len(parts := ev.element_id.split("|")) == 3
        and (incident is None or parts[2] == incident.element_id)
        and ev.valid_from is not None
        and ev.valid_from <= as_of
    }
    first = _first_error_of(evidence, services, start, end)
    if first is None and incident is None:
        # No incident read (its read failed, or none visible) yet services affected by one
        # were: the window is a first error's, of any service (before: an assertion crashed
        # the run when the incident read had failed).
        first = _first_error_of(evidence, set(), start, end)
        if first is None:
            return [], [_no_window_gap(as_of, "no response time can be measured")]
    if first is not None:
        origin, origin_ev = first
        parts = origin_ev.element_id.split("|")
        origin_words = f"{_label(origin_ev)} first seen on {parts[1]} at {iso_utc(origin)}"
    else:
        assert incident is not None  # no incident: the window is a first error's
        origin, origin_ev = start, incident
        origin_words = f"incident {incident.element_id} recorded as started at {iso_utc(start)}"
    of = f" of incident {incident.element_id}" if incident is not None else ""
    firing_on = "a service the incident affected"
    if not services and first is not None:
        # No incident (or none the subject may read): the alert of the service that erred.
        services = {origin_ev.element_id.split("|")[1]}
        firing_on = "the service that emitted it"
    on = ", ".join(sorted(services)) if services else "its services"
    detect = f"detect = first error -> first alert firing on {firing_on}"
    claims: list[Claim] = []
    gaps: list[MissingEvidence] = []
    for metric in metrics:
        if metric is ResponseMetric.DETECT:
            fired = _first_firing_of(evidence, services, origin, min(end, as_of))
            if fired is not None:
                at, firing = fired
                fparts = firing.element_id.split("|")
                alert = fparts[1].removeprefix("alert:")
                took = (
                    _human(at - origin)
                    if at >= origin
                    else f"none: the alert fired {_human(origin - at)} before the first error"
                )
                said = (
                    f"Time to detect{of}: {took} ({detect}): {origin_words}, alert {alert} "
                    f"fired on {fparts[2]} at {iso_utc(at)}"
                )
                claims.append(
                    _claim(
                        said, EpistemicStatus.FACT, 0.95, [origin_ev, firing], Intent.TIMELINE.value
                    )
                )
                continue
            if unread:
                gaps.append(_detect_unread_gap(of, on, origin_words))
                continue
            until = (
                f"as_of {iso_utc(as_of)}: not detected by an alert {_human(as_of - origin)} "
                "after it"
                if still_open
                else f"its resolution at {iso_utc(end)}: no time to detect to measure"
            )
            claims.append(
                _claim(
                    f"Time to detect{of}: no alert firing on {on} that the subject may read is "
                    f"recorded from the first error ({origin_words}) to {until} ({detect})",
                    EpistemicStatus.FACT,
                    0.9,
                    [origin_ev],
                    Intent.TIMELINE.value,
                )
            )
        elif metric is ResponseMetric.DECLARE:
            declare_claims, declare_gaps = _declare_claim(
                incident, records, origin, origin_ev, origin_words, as_of
            )
            claims += declare_claims
            gaps += declare_gaps
        elif metric is ResponseMetric.RESOLVE:
            if incident is None:
                gaps.append(
                    MissingEvidence(
                        evidence_type="incident_report",
                        intents=[Intent.TIMELINE.value],
                        description=f"time to resolve: no incident record the subject may read "
                        f"started by as_of {iso_utc(as_of)}, so no resolution is known to "
                        f"measure to (the errors: {origin_words})",
                    )
                )
                continue
            if still_open:
                said = (
                    f"Time to resolve{of}: not resolved by as_of {iso_utc(as_of)}: open "
                    f"{_human(as_of - origin)} so far since the first error ({origin_words}) "
                    "(resolve = first error -> the incident record's resolution)"
                )
            else:
                said = (
                    f"Time to resolve{of}: {_human(end - origin)} (resolve = first error -> the "
                    f"incident record's resolution): {origin_words}, incident resolved at "
                    f"{iso_utc(end)}"
                )
            evs = [origin_ev, incident] if origin_ev is not incident else [incident]
            claims.append(_claim(said, EpistemicStatus.FACT, 0.95, evs, Intent.TIMELINE.value))
        else:
            gaps.append(
                MissingEvidence(
                    evidence_type="acknowledgement",
                    intents=[Intent.TIMELINE.value],
                    description=f"time to acknowledge{of}: no acknowledgement is recorded (the "
                    "KG has no acknowledgement record: an incident record states its severity, "
                    "start and resolution), so it is not measured; detect and resolve are "
                    "(ask 'time to detect' or 'time to resolve')",
                )
            )
    return claims, gaps
