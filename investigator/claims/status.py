"""A service's state at as_of (incidents open, alerts firing, releases rolling out: never
"healthy"), and the incidents of a period (`incidents_in_period`) listed in start order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from investigator.change_period import written_change_period
from investigator.claims.model import Claim, EpistemicStatus
from investigator.claims.wording import _claim, _human, _instant, _label, _with
from investigator.context_graph.models import ToolCallRecord
from investigator.evidence import Evidence, instant_of, iso_utc
from investigator.planner import (
    asks_deploy_safety,
    asks_open_incidents_anywhere,
    period_events_asked,
    written_list_period,
)
from investigator.rubric import Intent, MissingEvidence
from investigator.timeline import (
    ALERT_TIME_KEYS,
    incident_span,
    rollout_under_way,
    time_references,
)


def cut_incident_lists(calls: Sequence[ToolCallRecord]) -> list[tuple[str, str, int]]:
    """(from, to, row limit) of each `incidents_in_period` read its limit cut."""
    return sorted(
        {
            (str(c.params.get("from")), str(c.params.get("to")), c.limit or 0)
            for c in calls
            if c.template_id == "incidents_in_period" and c.truncated
        }
    )


def _written_list_span(question: str, as_of: datetime) -> str | None:
    """The day a "what happened on 2026-07-22?" question writes, as its incidents were read
    (`planner.period_events_incident_step`, `planner.written_list_period` for "which
    incidents were open on 2026-07-22?"): "from <start> to <end> ('on 2026-07-22')"; None
    when its words write no such time."""
    if period_events_asked(question):
        written = written_change_period(
            time_references(question, as_of, spans=True), as_of, releases_only=False
        )
    else:
        written = written_list_period(question, as_of)  # as `incident_list_step` read it
    if written is None or written.start > as_of:
        return None
    return (
        f"from {iso_utc(written.start)} to {iso_utc(min(written.end, as_of))} ({written.words!r})"
    )


def _incident_list_claims(
    evidence: Sequence[Evidence],
    question: str,
    as_of: datetime,
    cuts: Sequence[tuple[str, str, int]],
    affecting: Sequence[str] = (),
) -> tuple[list[Claim], list[MissingEvidence]]:
    """For "list all incidents in July 2026": one fact per incident the `incidents_in_period`
    read admitted (open at some time in the period, up to as_of), in start order, with its
    start, its resolution by as_of (or that it was open at as_of), how long it lasted, and
    the services it affected that the subject may read; a required gap when none is, or when
    the read's row limit cut the list. `affecting` ("what happened to payment-api
    yesterday?"): only the incidents that affected one of them (`affected_one_of`)."""
    period = time_references(question, as_of).period
    now_only = period is None and asks_open_incidents_anywhere(question)
    if period is not None:
        span = (
            f"from {iso_utc(period[0].at)} to {iso_utc(min(period[1].at, as_of))} "
            f"({period[0].words!r})"
        )
    else:
        span = f"at as_of {iso_utc(as_of)}" if now_only else f"by as_of {iso_utc(as_of)}"
        span = _written_list_span(question, as_of) or span
    rows: list[tuple[datetime, str, Evidence]] = []
    for ev in evidence:
        if ev.type != "Incident" or not (ev.template or "").startswith("incidents_in_period@"):
            continue
        started = incident_span(ev)[0]
        if started is None or started > as_of or not affected_one_of(ev, affecting):
            continue
        rows.append((started, ev.element_id, ev))
    claims: list[Claim] = []
    for started, _, ev in sorted(rows, key=lambda r: (r[0], r[1])):
        resolved = incident_span(ev)[1]
        if resolved is not None and resolved <= as_of:
            until = f"resolved {iso_utc(resolved)} (lasted {_human(resolved - started)})"
        else:
            until = f"open at as_of (not resolved by as_of; {_human(as_of - started)} so far)"
        services = ev.context.get("services")
        names = (
            ", ".join(str(s) for s in services)
            if isinstance(services, list) and services
            else "none the subject may read"
        )
        claims.append(
            _claim(
                f"Incident {ev.element_id} ({_label(ev)}): started {iso_utc(started)}, {until}; "
                f"services affected: {names}",
                EpistemicStatus.FACT,
                0.95,
                [ev],
                Intent.INCIDENT_LIST.value,
            )
        )
    gaps: list[MissingEvidence] = []
    if period is not None and period[0].at > as_of:
        gaps.append(
            MissingEvidence(
                evidence_type="incident_report",
                intents=[Intent.INCIDENT_LIST.value],
                description=f"the period asked ({period[0].words!r}) starts after as_of "
                f"{iso_utc(as_of)}: no incident in it can be recorded by then",
            )
        )
    elif not claims:
        gaps.append(
            MissingEvidence(
                evidence_type="incident_report",
                intents=[Intent.INCIDENT_LIST.value],
                description=f"no incident {_affecting_words(affecting)}the subject may read "
                f"was open {span} (as recorded by known_at)",
            )
        )
    gaps += [
        MissingEvidence(
            evidence_type="incident_report",
            intents=[Intent.INCIDENT_LIST.value],
            description=f"the incident read from {low} to {high} stopped at its cap of "
            f"{limit} incidents (oldest first): later incidents of the period are not listed",
        )
        for low, high, limit in cuts
    ]
    return claims, gaps


def affected_one_of(incident: Evidence, services: Sequence[str]) -> bool:
    """Whether an `incidents_in_period` row names one of `services` among the services it
    affected (those the subject may read); True when no service is asked about."""
    if not services:
        return True
    affected = incident.context.get("services")
    return isinstance(affected, list) and bool(set(map(str, affected)) & set(services))


def _affecting_words(services: Sequence[str]) -> str:
    """ "affecting svc:payment-api " in an incident list's none-found gap; "" for none."""
    return f"affecting {', '.join(services)} " if services else ""


# The KG records incidents, alert firings and releases, no health check or metric: silence
# about a service is not health, and the answer says so (a gap that is never required).
NO_HEALTH_RECORD = (
    "no health check, probe or metric record: the KG has no such type, so whether {services} "
    "is healthy cannot be answered; no incident open and no alert firing is what is recorded, "
    "not a sign of health"
)


class StatusReads(BaseModel):
    """The services whose state reads at as_of ran without error, one list per part of the
    state (`status_reads`): a part not read for a service is unknown, never "none" (before,
    "checkout?" read with its lookup beside it said "no incident open" during the incident,
    whose record the status took only under one evidence type)."""

    model_config = ConfigDict(frozen=True)

    # The incidents it was affected by (its AFFECTED_BY records walked).
    incidents: tuple[str, ...] = ()
    # The alerts that fired on it (its FIRED_ON records walked, into it).
    firings: tuple[str, ...] = ()
    # Its releases up to as_of, one rolling out then among them (latest_deployments,
    # rollouts_under_way at as_of).
    releases: tuple[str, ...] = ()


def status_reads(calls: Sequence[ToolCallRecord], as_of: datetime) -> StatusReads:
    """Which services each part of a state at as_of was read for, from the run's tool calls
    (a failed read reads nothing)."""

    def ran(picks: Callable[[ToolCallRecord], bool], key: str) -> tuple[str, ...]:
        return tuple(sorted({str(c.params.get(key)) for c in calls if not c.error and picks(c)}))

    def walked(rel_type: str, directions: tuple[str, ...]) -> Callable[[ToolCallRecord], bool]:
        return lambda c: (
            c.template_id == "dependency_neighbourhood"
            and c.options.get("rel_type") == rel_type
            and c.options.get("direction") in directions
        )

    def releases_to_as_of(c: ToolCallRecord) -> bool:
        at = {"latest_deployments": "to", "rollouts_under_way": "at"}.get(c.template_id)
        return at is not None and instant_of(c.params.get(at)) == as_of

    return StatusReads(
        incidents=ran(walked("AFFECTED_BY", ("out", "both")), "start_id"),
        firings=ran(walked("FIRED_ON", ("in", "both")), "start_id"),
        releases=ran(releases_to_as_of, "service_id"),
    )


def _status_services(evidence: Sequence[Evidence], service_id: str | None) -> list[str]:
    """The services a status question asks about: the Service records resolved as its
    entities (and --service)."""
    found = {
        ev.element_id
        for ev in _with(evidence, "entity")
        if ev.kind == "node" and ev.type == "Service"
    }
    if service_id:
        found.add(service_id)
    return sorted(found)


def _open_at(start: datetime | None, end: datetime | None, as_of: datetime) -> bool:
    return start is not None and start <= as_of and (end is None or end > as_of)


def _incident_records(evidence: Sequence[Evidence]) -> dict[str, Evidence]:
    """Each Incident record read, by id, whatever evidence type the gate admitted it under:
    a text hit on it is a `document`, its start and resolution the same (before, only one
    typed `incident_report` was looked at, and "no incident open" said beside it)."""
    ranked = sorted(evidence, key=lambda ev: "incident_report" in ev.evidence_types)
    return {ev.element_id: ev for ev in ranked if ev.type == "Incident" and ev.status == "active"}


def _unread_parts(
    evidence: Sequence[Evidence], incidents: Mapping[str, Evidence], reads: StatusReads, svc: str
) -> set[str]:
    """The parts of `svc`'s state not read at as_of: "incidents" when its AFFECTED_BY
    records were not walked, or one it links to has no record read (its start and
    resolution unknown); "firings", "releases" when their reads did not run for it."""
    linked = {
        parts[2]
        for ev in evidence
        if ev.type == "AFFECTED_BY"
        and len(parts := ev.element_id.split("|")) == 3
        and parts[1] == svc
    }
    unread = set() if svc in reads.incidents and linked <= set(incidents) else {"incidents"}
    unread |= set() if svc in reads.firings else {"firings"}
    return unread | (set() if svc in reads.releases else {"releases"})


def _open_and_firing(
    evidence: Sequence[Evidence], incidents: Mapping[str, Evidence], svc: str, as_of: datetime
) -> tuple[list[tuple[str, list[Evidence]]], list[tuple[str, list[Evidence]]]]:
    """What is open and firing on `svc` at as_of, each as (what, its records): each incident
    open then that affected it (its start, no resolution by as_of), each alert firing on it
    then (a FIRED_ON record started by as_of and not ended)."""
    open_incidents: list[tuple[str, list[Evidence]]] = []
    # The AFFECTED_BY record, read as the incident's (affected_service) or as the service's
    # way to its incidents (entity).
    for link in sorted(
        (ev for ev in evidence if ev.type == "AFFECTED_BY"), key=lambda e: e.element_id
    ):
        parts = link.element_id.split("|")
        if len(parts) != 3 or parts[1] != svc or parts[2] not in incidents:
            continue
        inc = incidents[parts[2]]
        start, end = incident_span(inc)
        if _open_at(start, end, as_of) and start is not None:
            open_incidents.append(
                (
                    f"incident {inc.element_id} open ({_label(inc)}, started {iso_utc(start)}, "
                    "not resolved by as_of)",
                    [inc, link],
                )
            )
    firing: list[tuple[str, list[Evidence]]] = []
    for ev in evidence:  # whatever type it was admitted under, as the incidents above
        parts = ev.element_id.split("|")
        if ev.type != "FIRED_ON" or ev.status != "active" or len(parts) < 3 or parts[2] != svc:
            continue
        at = _instant(ev, ALERT_TIME_KEYS)
        if _open_at(at, ev.valid_to, as_of) and at is not None:
            firing.append((f"alert {parts[1]} firing (since {iso_utc(at)})", [ev]))
    return open_incidents, firing


def _service_status_claims(
    evidence: Sequence[Evidence],
    service_id: str | None,
    as_of: datetime,
    known_at: datetime | None,
    services_read: Sequence[str] = (),
    unread: bool = False,
    reads: StatusReads | None = None,
) -> tuple[list[Claim], list[MissingEvidence]]:
    """For "is payment-api healthy now?": per service asked about, what the KG records of
    it at as_of: each incident open then that affected it (the incident's start and no
    resolution by as_of), each alert firing on it then (a FIRED_ON record started by as_of
    and not ended), each release of it rolling out then (started, not finished), and one
    summary fact that says "no incident open, no alert firing, no release rolling out" when
    none is. Never "healthy": the KG records no health check (a gap, not required).
    `reads`: the services each part was read for (`status_reads`); a part not read for a
    service is "open incidents: unknown, not read", never "no incident open". `unread`: a
    read of the run failed (a timeout), or the run stopped: such a part is "unknown, not
    absent (a read of the run failed)" (before, "is it safe to deploy payment-api now?" with
    its incident read failed during the incident said "no incident open")."""
    services = _status_services(evidence, service_id) or sorted(services_read)[:3]
    entity = {ev.element_id: ev for ev in _with(evidence, "entity") if ev.type == "Service"}
    incidents = _incident_records(evidence)
    known = "what the subject may read, as recorded by " + (
        f"known_at {iso_utc(known_at)}" if known_at else "known_at"
    )
    claims: list[Claim] = []
    recorded: list[str] = []  # what is open or firing, said in the health gap
    unknown: set[str] = set()  # what was not read of some service, said there too
    for svc in services:
        said = f"{svc} at as_of {iso_utc(as_of)}"
        open_incidents, firing = _open_and_firing(evidence, incidents, svc, as_of)
        open_incidents = [(f"{said}: {what}", evs) for what, evs in open_incidents]
        firing = [(f"{said}: {what}", evs) for what, evs in firing]
        rolling: list[tuple[str, list[Evidence]]] = []
        for ev in _with(evidence, "deployment_time"):
            if svc not in (ev.context.get("service"), ev.props.get("service")):
                continue
            under_way = rollout_under_way(ev, as_of)
            if under_way is not None:
                rolling.append(
                    (
                        f"{said}: release {_label(ev)} rolling out (started "
                        f"{iso_utc(under_way[0])}, not finished by as_of)",
                        [ev],
                    )
                )
        found = [*sorted(open_incidents, key=_first), *sorted(firing, key=_first),
                 *sorted(rolling, key=_first)]  # fmt: skip
        not_read = _unread_parts(evidence, incidents, reads or StatusReads(), svc)
        unknown |= not_read
        counts = [
            _counted(len(open_incidents), "incident open", "incidents open",
                     _none_or_unread("no incident open", "open incidents",
                                     unread, "incidents" in not_read)),
            _counted(len(firing), "alert firing", "alerts firing",
                     _none_or_unread("no alert firing", "alerts firing",
                                     unread, "firings" in not_read)),
            _counted(len(rolling), "release rolling out", "releases rolling out",
                     _none_or_unread("no release rolling out", "releases rolling out",
                                     unread, "releases" in not_read)),
        ]  # fmt: skip
        if opened := [c for c in counts[:2] if c[:1].isdigit()]:
            recorded.append(f"{svc}: {', '.join(opened)}")
        cited = [ev for _, evs in found for ev in evs]
        if svc in entity:
            cited = [entity[svc], *cited]
        if cited:
            claims.append(
                _claim(
                    f"{said} ({known}): {', '.join(counts)}",
                    EpistemicStatus.FACT,
                    0.9,
                    list({ev.evidence_id: ev for ev in cited}.values()),
                    Intent.SERVICE_STATUS.value,
                )
            )
        for statement, evs in found:
            claims.append(
                _claim(statement, EpistemicStatus.FACT, 0.95, evs, Intent.SERVICE_STATUS.value)
            )
    gaps = []
    if not claims and _with(evidence, "entity"):
        # Nothing read of any service: no state to say (a record found is not the service).
        gaps.append(
            MissingEvidence(
                evidence_type="entity",
                intents=[Intent.SERVICE_STATUS.value],
                description="no service the subject may read was found for the question: "
                "name one (e.g. 'is X ok?') or pass --service",
            )
        )
    gaps += [
        MissingEvidence(
            evidence_type="health_check",
            intents=[Intent.SERVICE_STATUS.value],
            description=_health_gap_text(
                ", ".join(services) or "it", recorded, bool({"incidents", "firings"} & unknown)
            ),
            required=False,
        )
    ]
    return claims, gaps


def _first(item: tuple[str, list[Evidence]]) -> str:
    return item[0]


def _none_or_unread(none: str, what: str, unread: bool, not_read: bool) -> str:
    """A status count of zero: `none` ("no incident open") when its read ran for the service;
    else that it is unknown: not read, or, a read of the run having failed, not absent."""
    if not not_read:
        return none
    return (
        f"{what}: unknown, not absent (a read of the run failed)"
        if unread
        else (f"{what}: unknown, not read")
    )


def _counted(n: int, one: str, many: str, none: str) -> str:
    return none if n == 0 else f"1 {one}" if n == 1 else f"{n} {many}"


def _health_gap_text(services: str, recorded: Sequence[str], unknown: bool = False) -> str:
    """The `health_check` gap under the status claims: with an incident open or an alert
    firing, what the claims say is not contradicted ("no incident open and no alert firing"
    was said under "1 incident open"); with none, that silence is no sign of health; with
    its incidents or firings not read (`unknown`), that none is not said either."""
    if not recorded and unknown:
        return (
            f"no health check, probe or metric record: the KG has no such type, so whether "
            f"{services} is healthy cannot be answered; whether an incident is open or an "
            "alert firing is not known either (not read), and none would be no sign of health"
        )
    if not recorded:
        return NO_HEALTH_RECORD.format(services=services)
    return (
        f"no health check, probe or metric record: the KG has no such type, so whether "
        f"{services} is healthy is not answered beyond what is recorded ({'; '.join(recorded)})"
    )


def deploy_safety_gaps(
    question: str,
    evidence: Sequence[Evidence],
    service_id: str | None,
    as_of: datetime,
    services_read: Sequence[str] = (),
    reads: StatusReads | None = None,
) -> list[MissingEvidence]:
    """Asked "is it safe to deploy payment-api now?": no record says so, and no verdict is
    given (a gap that is never required); the incidents open and alerts firing on it at as_of
    (the records the status claims state, read from them, not from the claims' text) are
    named as what the records do say (before, the releases were listed and an open incident
    went unsaid); none found is said only when both were read (`reads`)."""
    if not asks_deploy_safety(question):
        return []
    incidents = _incident_records(evidence)
    said = []
    not_read = False
    for svc in _status_services(evidence, service_id) or sorted(services_read)[:3]:
        open_incidents, firing = _open_and_firing(evidence, incidents, svc, as_of)
        said += sorted(what for what, _ in open_incidents)
        said += sorted(what for what, _ in firing)
        unread = _unread_parts(evidence, incidents, reads or StatusReads(), svc)
        not_read = not_read or bool(unread & {"incidents", "firings"})
    open_now = (
        f"; recorded at as_of: {'; '.join(said)}: deploying during an open incident or a "
        "firing alert is a call for whoever runs the incident, which no record makes"
        if said
        else "; whether an incident is open or an alert firing at as_of is unknown (not "
        "read), and none would be no sign that deploying is safe"
        if not_read
        else "; no incident open and no alert firing is recorded at as_of, which is no "
        "sign that deploying is safe"
    )
    return [
        MissingEvidence(
            evidence_type="deploy_safety",
            intents=[Intent.SERVICE_STATUS.value],
            description="whether deploying now is safe is not recorded (no change freeze, "
            f"approval or readiness record): no verdict is given{open_now}",
            required=False,
        )
    ]
