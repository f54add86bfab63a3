"""Incident facts and the gaps when no incident is recorded or found for the question."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from itertools import pairwise

from investigator.claims.model import Claim, EpistemicStatus
from investigator.claims.wording import _claim, _human, _valid_text
from investigator.evidence import Evidence, iso_utc
from investigator.planner import asks_an_incident, asks_if_affected, extract_mentions
from investigator.rubric import Intent, MissingEvidence
from investigator.runbook_sections import SECTION_EXCERPT
from investigator.timeline import AnchorEvent, incident_span, time_references


def _incident_facts(ev: Evidence, as_of: datetime) -> str:
    """What an incident record says of itself: severity, start and resolution by `as_of`, as
    recorded (the record current at the run's known_at: SEV2 at 10:10, SEV1 from 10:20).
    Not resolved by as_of, and in force past it: open at as_of (asked "when was it
    resolved?" at 10:40, before its 10:48 resolution, that is the answer then)."""
    parts = []
    severity = ev.props.get("severity")
    if isinstance(severity, str) and severity.strip():
        parts.append(f"severity {severity.strip()}")
    resolved = False
    for at, word in zip(incident_span(ev), ("started", "resolved"), strict=True):
        if at is not None and at <= as_of:
            parts.append(f"{word} {iso_utc(at)}")
            resolved = word == "resolved"
    if not resolved and (ev.valid_to is None or ev.valid_to > as_of):
        parts.append(f"open at as_of {iso_utc(as_of)} (no resolution recorded by as_of)")
    return "".join(f", {p}" for p in parts)


def _incident_duration_claims(incidents: Sequence[Evidence], as_of: datetime) -> list[Claim]:
    """For "how long did the incident last?": one fact per incident record read, the time
    from its start (started_at, else valid_from) to its resolution (resolved_at, else
    valid_to) by as_of, or, not resolved by as_of, how long it had been open then ("so far").
    An incident with no start recorded gets none (its start and end stay in its own fact)."""
    out = []
    for ev in sorted(incidents, key=lambda e: e.element_id):
        if ev.type != "Incident":
            continue
        start, end = incident_span(ev)
        if start is None or start > as_of:
            continue
        if end is not None and end <= as_of:
            said = (
                f"Incident {ev.element_id} lasted {_human(end - start)}: started "
                f"{iso_utc(start)}, resolved {iso_utc(end)}"
            )
        else:
            said = (
                f"Incident {ev.element_id} open for {_human(as_of - start)} so far: started "
                f"{iso_utc(start)}, not resolved by as_of {iso_utc(as_of)}"
            )
        out.append(_claim(said, EpistemicStatus.FACT, 0.95, [ev], Intent.INCIDENT_LOOKUP.value))
    return out


def _valid_by(ev: Evidence, as_of: datetime) -> str:
    """`_valid_text` as known at `as_of`: an end after as_of is not stated (the incident's
    10:48 end, asked at 10:40, read as when it was resolved), only that it ends later."""
    if ev.valid_to is None or ev.valid_to <= as_of:
        return _valid_text(ev)
    start = iso_utc(ev.valid_from) if ev.valid_from else "no start recorded"
    return f"valid {start}, ends after as_of"


def _affected_claims(affected: Sequence[Evidence], as_of: datetime) -> list[Claim]:
    """One claim per incident naming the services it affected, bound to those `AFFECTED_BY`
    records ("What did the payments incident affect?" listed them only as evidence); an end
    after `as_of` is not stated (`_valid_by`)."""
    by_incident: dict[str, list[Evidence]] = {}
    for ev in affected:
        parts = ev.element_id.split("|")
        incident = ev.context.get("incident") or (parts[2] if len(parts) == 3 else None)
        if isinstance(incident, str):
            by_incident.setdefault(incident, []).append(ev)
    out = []
    for incident, evs in sorted(by_incident.items()):
        services = sorted(
            (str(ev.context.get("service") or ev.element_id.split("|")[1]), ev) for ev in evs
        )
        named = ", ".join(f"{svc} ({_valid_by(ev, as_of)})" for svc, ev in services)
        out.append(
            _claim(
                f"Services affected by incident {incident}: {named}",
                EpistemicStatus.FACT,
                0.95,
                evs,
                Intent.INCIDENT_LOOKUP.value,
            )
        )
    return out


def _named_only(ev: Evidence, found_by_text: Sequence[str] = ()) -> str:
    """How a runbook read as the one the question names is tied to it: by its name, by the
    heading of the section admitted (a file of one section per alert), or by the words of
    the question (the runbook search's best fit, `found_by_text`), alone."""
    if ev.context.get("anchor_type") != "runbook":
        return ""
    if ev.context.get("anchor") in found_by_text:
        return (
            ", found by the words of the question alone (the runbook search's best fit; "
            "no service, alert or error code it names links to it),"
        )
    # A cut without an anchor is the page's opening text, which no heading names.
    cut = SECTION_EXCERPT in ev.transformations and "#" in (ev.locator or "")
    by = "the heading of its section" if cut else "its name"
    return f", found by {by} alone (no service, alert or error code record links to it),"


def _incident_not_recorded(
    missing: Sequence[MissingEvidence],
    evidence: Sequence[Evidence],
    question: str | None,
    as_of: datetime,
) -> list[MissingEvidence]:
    """The missing first-seen time of a question placed at the incident's start ("when the
    incident started") said as what it is when no incident is in the evidence: none was
    known then (or none this subject may read), not that no error was seen."""
    if not question or any(ev.type == "Incident" for ev in evidence):
        return list(missing)
    asked = time_references(question, as_of)
    if asked.event is not AnchorEvent.INCIDENT_START:
        return list(missing)
    words = asked.event_words or "the incident"
    description = (
        "no incident of the service that the subject may read is known at as_of and "
        f"known_at, so {words!r} cannot be placed, and no first-seen time was read through "
        "it; the errors themselves are asked about with 'then' or 'when <error code> started'"
    )
    return [
        m.model_copy(update={"description": description})
        if m.evidence_type == "error_first_seen"
        else m
        for m in missing
    ]


def _no_incident_found(
    missing: Sequence[MissingEvidence],
    evidence: Sequence[Evidence],
    question: str | None,
    as_of: datetime,
    known_at: datetime | None,
    places: Sequence[str],
    service_id: str | None,
) -> list[MissingEvidence]:
    """A question asking which incident (or outage) hit a place, answered with no incident
    in the evidence ("which incident affected ledger?"): never `complete` with no claim. A
    document found by the word "incident" is no incident of the place: the required gap
    says none the subject may read is recorded for the place read (never a claim about the
    whole graph: a hidden incident reads the same as none), or that the question names no
    place the subject may read."""
    if not question or not (asks_an_incident(question) or asks_if_affected(question)):
        # "Is ledger affected?" asks the same of ledger as "which incident affected ledger?".
        return list(missing)
    if any(ev.type == "Incident" for ev in evidence):
        return list(missing)
    # The places the question names itself, or `--service`: a service its other words found
    # by text ("the wombat service" finds svc:ledger's description) is not what it asks about.
    said = question.lower()
    named = [
        p
        for p in places
        if re.search(rf"(?<![\w-]){re.escape(p.split(':', 1)[-1].lower())}(?![\w-])", said)
    ]
    mentions = extract_mentions(question)
    others = [*mentions.error_codes, *mentions.alerts, *(i for i in mentions.ids if ":" in i)]
    named = list(dict.fromkeys([*([service_id] if service_id else []), *named, *others]))
    known = f" (known at {iso_utc(known_at)})" if known_at is not None else ""
    if named:
        description = (
            f"no incident of {', '.join(named)} that the subject may read is recorded "
            f"by as_of {iso_utc(as_of)}{known}: none is claimed"
        )
    else:
        description = (
            "no incident the subject may read was found for what the question names: "
            f"{_place_words(question)} (ask e.g. which incident affected X?)"
        )
    gap = MissingEvidence(
        evidence_type="incident_report",
        intents=[Intent.INCIDENT_LOOKUP.value],
        description=description,
        required=True,
    )
    return [m for m in missing if m.evidence_type != "incident_report"] + [gap]


# A place said as a word before "service" ("the wombat service", "wombat svc").
_SERVICE_WORD = re.compile(r"\b([a-z][\w-]*)\s+(?:service|svc)\b", re.IGNORECASE)


def _place_words(question: str) -> str:
    """What the question names said as matching nothing: the name said before "service"
    ("'wombat' matched no service the subject may read"), else that it names none."""
    found = [m for m in _SERVICE_WORD.findall(question) if m.lower() not in {"the", "a", "our"}]
    if not found:
        return "it names no service, alert or error code the subject may read"
    return f"{found[0]!r} matched no service the subject may read"


_SEVERITY_NAMED = re.compile(r"\bSEV\s?-?(\d)\b", re.IGNORECASE)


def severity_history_claims(
    incidents: Sequence[Evidence],
    records: Sequence[Evidence],
    question: str,
    as_of: datetime,
    known_at: datetime | None,
    unread: bool = False,
) -> list[Claim]:
    """For "when was the incident upgraded to SEV1?": per incident admitted, the severity
    each of its records (versions) known at known_at states, in the order recorded, and each
    change between two of them placed at the record time of the later one (the records state
    no time of the decision itself). A record made after as_of is said so. One record, or
    none differing: no change recorded by known_at; a severity the question names that no
    record states is said too. Bound to the current record (the older ones are in the run's
    `version_history` read, as an owner correction's are). `unread`: a read of the run
    failed (its older records may be the ones not read): the records read are listed, and
    no absence of a change or of a severity is said (the run's gaps say what is unknown)."""
    known = f"known_at {iso_utc(known_at)}" if known_at is not None else "known_at"
    named = [f"SEV{n}" for n in _SEVERITY_NAMED.findall(question)]
    out = []
    for ev in sorted(incidents, key=lambda e: e.element_id):
        if ev.type != "Incident":
            continue
        by_version = {r.version: r for r in records if r.element_id == ev.element_id}
        by_version.setdefault(ev.version, ev)
        history = []
        for version in sorted(by_version):
            record = by_version[version]
            severity = record.props.get("severity")
            if isinstance(severity, str) and severity.strip():
                history.append((record, severity.strip()))
        if not history:
            continue

        def said(record: Evidence, severity: str) -> str:
            when = _when_recorded(record, as_of)
            return f"{severity} (record version {record.version}, {when})"

        listed = ", then ".join(said(r, sev) for r, sev in history)
        changes = [
            f"changed {a} -> {b} at {_changed_at(rb, as_of)}"
            for (_, a), (rb, b) in pairwise(history)
            if a.upper() != b.upper()
        ]
        if changes:
            what = (
                f"; {'; '.join(changes)} (when the record stating it was made: the records "
                "state no time of the decision itself)"
            )
        elif not unread:
            what = f"; no change of severity is recorded by {known}"
        else:
            what = ""
        stated = {sev.upper().replace(" ", "") for _, sev in history}
        unstated = [n for n in named if n.upper() not in stated]
        if unstated and not unread:
            what += f"; no record of it states {', '.join(unstated)} by {known}"
        out.append(
            _claim(
                f"Severity of incident {ev.element_id} as recorded: {listed}{what}",
                EpistemicStatus.FACT,
                0.95,
                [ev],
                Intent.INCIDENT_LOOKUP.value,
            )
        )
    return out


def _when_recorded(record: Evidence, as_of: datetime) -> str:
    """`recorded 2026-07-23T10:20:00Z`, with "after as_of" when it was made later."""
    if record.recorded_at is None:
        return "recorded at an unknown time"
    later = " (after as_of)" if record.recorded_at > as_of else ""
    return f"recorded {iso_utc(record.recorded_at)}{later}"


def _changed_at(record: Evidence, as_of: datetime) -> str:
    """The record time a severity change is placed at, "(after as_of)" when it is later."""
    if record.recorded_at is None:
        return "an unknown time"
    later = " (after as_of)" if record.recorded_at > as_of else ""
    return f"{iso_utc(record.recorded_at)}{later}"


def incidents_outside_period_gaps(
    incidents: Sequence[Evidence], question: str | None, as_of: datetime
) -> list[MissingEvidence]:
    """The required gap of an incident question naming a period ("payments incident
    yesterday") whose incidents read were all open outside it: none of them is the one asked
    about, and the nearest is named (before, the July incident was stated `complete` for a
    December "yesterday"). [] when no period is named, it starts after as_of, or an incident
    read was open in it."""
    period = time_references(question or "", as_of).period
    spans = [(ev, *incident_span(ev)) for ev in incidents if ev.type == "Incident"]
    if period is None or period[0].at > as_of or not spans:
        return []
    start, end = period[0].at, min(period[1].at, as_of)

    def distance(span: tuple[Evidence, datetime | None, datetime | None]) -> float:
        _, began, ended = span
        if began is not None and began > end:
            return (began - end).total_seconds()
        if ended is not None and ended < start:
            return (start - ended).total_seconds()
        return 0.0  # open in the period (a span without a start is not placed outside it)

    if any(distance(span) == 0.0 for span in spans):
        return []
    nearest, began, ended = min(spans, key=lambda s: (distance(s), s[0].element_id))
    times = ", ".join(
        f"{word} {iso_utc(at)}"
        for word, at in (("started", began), ("resolved", ended))
        if at is not None and at <= as_of
    )
    said = dict.fromkeys((period[0].words, period[1].words))
    return [
        MissingEvidence(
            evidence_type="incident_report",
            intents=[Intent.INCIDENT_LOOKUP.value],
            description=f"none of the incidents read was open in {' '.join(said)!r} "
            f"({iso_utc(start)} to "
            f"{iso_utc(end)}): the nearest is {nearest.element_id} ({times}), stated above "
            "as what was found, not as the incident asked about",
            required=True,
        )
    ]
