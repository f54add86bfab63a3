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
from investigator.claims.wording import _claim, _label, _quote, _until, _with
from investigator.evidence import Evidence, iso_utc
from investigator.planner import CHANGE_LOOKBACK, DEPLOY_LOOKBACK
from investigator.rubric import Intent, MissingEvidence
from investigator.timeline import (
    ALERT_TIME_KEYS,
    CHANGE_TIME_KEYS,
    DEPLOY_TIME_KEYS,
    FIRST_SEEN_KEYS,
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


def timeline_claims(
    evidence: Sequence[Evidence], as_of: datetime
) -> tuple[list[Claim], list[MissingEvidence]]:
    """One fact per event of the timeline's window by as_of, in time order (ties by record
    id), then what its reports' own timelines say; a required gap when no event is found."""
    incidents = [ev for ev in _with(evidence, "incident_report") if ev.type == "Incident"]
    firsts = _with(evidence, "error_first_seen")
    window = _window(incidents, firsts, as_of)
    if window is None:
        return [], [
            MissingEvidence(
                evidence_type="timeline",
                intents=[Intent.TIMELINE.value],
                description=f"no incident started and no error first seen by as_of "
                f"{iso_utc(as_of)} was found that the subject may read: no timeline to list "
                "(name the incident, error code or service if one was meant)",
            )
        ]
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
