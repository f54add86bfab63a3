"""Response actions asked about after the fact ("did we roll back?", "what fixed it?", "was
the rollback successful?"): what the reports the subject may read state was done, quoted as
the document's words (the KG has no response-action record), and, asked whether it worked,
the times the KG records after it (a time order, never a success)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta

from investigator.claims.mechanisms import _SENTENCE_END
from investigator.claims.model import Claim, EpistemicStatus
from investigator.claims.reports import _record_notes
from investigator.claims.wording import _claim, _label, _quote, _title, _versioned, _with
from investigator.evidence import Evidence, iso_utc
from investigator.lazy_pattern import LazyPattern
from investigator.planner import (
    action_database_words,
    action_search_text,
    asks_action_decision,
    asks_action_decision_after,
    asks_action_outcome,
    unrecorded_asks,
)
from investigator.rubric import Intent, MissingEvidence
from investigator.timeline import ReferenceTime, holds_at, incident_span, instant_of

# A sentence stating an action taken ("Fix: rollback at 10:41.", "We restarted the pods").
_ACTION_SENTENCE = LazyPattern(
    r"\b(?:roll(?:ed|ing)?[- ]?backs?|revert(?:ed|ing|s)?|restart(?:ed|ing|s)?|"
    r"fail(?:ed|ing)?[- ]?overs?|reboot(?:ed|ing|s)?|scaled\s+(?:up|out|down)|fix(?:ed)?|"
    r"mitigat(?:ed|ion))\b",
    re.IGNORECASE,
)
# A clock time in the sentence ("at 10:41", "10:41:30Z", "10:41 UTC").
_CLOCK = re.compile(r"\b([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?(?:\s*(?:Z|UTC)\b)?")

REPORTED_ONLY = (
    "no structured record of the response action: the KG has no response-action type; only "
    "what the reports quoted above state (their words, not a recorded action)"
)


class _Stated:
    """One sentence of a report stating an action, with its time when written."""

    def __init__(self, report: Evidence, sentence: str, at: datetime | None) -> None:
        self.report = report
        self.sentence = sentence
        self.at = at


def _sentence_time(report: Evidence, sentence: str) -> datetime | None:
    """The clock time a sentence gives, read as UTC on the day the report is valid from
    (the incident's day): "at 10:41" of the 2026-07-23 postmortem is 2026-07-23T10:41Z."""
    match = _CLOCK.search(sentence)
    day = report.valid_from
    if match is None or day is None:
        return None
    hour, minute, second = int(match[1]), int(match[2]), int(match[3] or 0)
    return day.replace(hour=hour, minute=minute, second=second, microsecond=0)


def _stated_actions(evidence: Sequence[Evidence], as_of: datetime) -> list[_Stated]:
    """The sentences of the trusted, active reports admitted (incident reports and
    postmortems, not runbooks) that state an action; one whose time is after `as_of` had not
    happened then and is left out."""
    out = []
    for doc in sorted(evidence, key=lambda e: e.element_id):
        if (
            doc.type != "Document"
            or doc.status != "active"
            or doc.trust != "trusted"
            or "incident_report" not in doc.evidence_types
        ):
            continue
        for raw in _SENTENCE_END.split(doc.content or ""):
            sentence = " ".join(raw.split())
            if not _ACTION_SENTENCE.search(sentence):
                continue
            at = _sentence_time(doc, sentence)
            if at is not None and at > as_of:
                continue
            out.append(_Stated(doc, sentence, at))
    return out


def _stated_claim(stated: _Stated) -> Claim:
    report = stated.report
    notes = [report.element_id, *_record_notes(report)]
    if report.recorded_at is not None:
        notes.append(f"recorded {iso_utc(report.recorded_at)}")
    when = (
        f" (its time read as {iso_utc(stated.at)}, UTC on the day the report is valid from)"
        if stated.at is not None
        else " (no time written)"
    )
    return _claim(
        f'{_label(report)} ({", ".join(notes)}) states an action taken: "{_quote(stated.sentence)}"'
        f"{when}; the document's words, not a recorded action: the KG has no response-action "
        "record",
        EpistemicStatus.FACT,
        0.9,
        [report],
        Intent.INCIDENT_LOOKUP.value,
    )


def _minutes(delta: timedelta) -> str:
    minutes = round(delta.total_seconds() / 60)
    return f"{minutes} min" if minutes != 1 else "1 min"


def _outcome_claims(stated: _Stated, evidence: Sequence[Evidence], as_of: datetime) -> list[Claim]:
    """Asked whether the action worked: the incident's resolution and the errors first seen
    after the reported time, as recorded by `as_of`: a time order only, never a success."""
    at = stated.at
    if at is None:
        return []
    out = []
    for inc in sorted(evidence, key=lambda e: e.element_id):
        if inc.type != "Incident":
            continue
        resolved = incident_span(inc)[1]
        if resolved is None or resolved > as_of or resolved < at:
            continue
        seen_after = []
        for ev in sorted(evidence, key=lambda e: e.element_id):
            if "error_first_seen" not in ev.evidence_types:
                continue
            first = instant_of(ev.props.get("first_seen"))
            last = instant_of(ev.props.get("last_seen"))
            if first is not None and at < first <= as_of:
                seen_after.append((ev, f"{_label(ev)} first seen {iso_utc(first)}"))
            elif last is not None and at < last <= as_of:
                seen_after.append((ev, f"{_label(ev)} last seen {iso_utc(last)}"))
        errors = (
            "; errors seen after it: " + ", ".join(text for _, text in seen_after)
            if seen_after
            else "; no error the run read was seen after it"
        )
        out.append(
            _claim(
                f"{_label(inc)} ({inc.element_id}) is recorded resolved at {iso_utc(resolved)}, "
                f"{_minutes(resolved - at)} after the action {_label(stated.report)} states "
                f'("{_quote(stated.sentence)}", {iso_utc(at)}){errors}: a time order, not a '
                "proof that the action worked",
                EpistemicStatus.INFERENCE,
                0.5,
                [inc, stated.report, *(ev for ev, _ in seen_after)],
                Intent.INCIDENT_LOOKUP.value,
            )
        )
    return out


def reported_action_claims(
    evidence: Sequence[Evidence],
    question: str,
    as_of: datetime,
    missing: Sequence[MissingEvidence],
) -> tuple[list[Claim], list[MissingEvidence]]:
    """Asked about a response action: a `fact` per sentence of a report admitted that
    states one (the document says so, never a KG-recorded action), the incident's resolution
    after it when asked whether it worked, and the `response_action` gap reworded, no longer
    required, when a report states one (still required when none does)."""
    if "response_action" not in unrecorded_asks(question):
        return [], list(missing)
    stated = _stated_actions(evidence, as_of)
    if not stated:
        return [], list(missing)
    claims = [_stated_claim(s) for s in stated]
    if asks_action_outcome(question):
        for s in stated:
            claims += _outcome_claims(s, evidence, as_of)
    reworded = [
        m.model_copy(update={"description": REPORTED_ONLY, "required": False})
        if m.evidence_type == "response_action"
        else m
        for m in missing
    ]
    return claims, reworded


# How a runbook's step writes each action asked as a decision (`asks_action_decision`), in any
# tense: "fail over payment-db", "failover to the replica", "failing over"; "restart the
# pods"; "scale out checkout"; "page #payments-platform".
_STEP_ACTION: dict[str, LazyPattern] = {
    "fail over": LazyPattern(r"\bfail(?:s|ed|ing)?[- ]?overs?\b", re.IGNORECASE),
    "restart": LazyPattern(r"\b(?:restart|reboot|bounc(?:e|ing))\w*", re.IGNORECASE),
    "scale up": LazyPattern(r"\bscal(?:e|es|ed|ing)[- ]?(?:up|out)\b", re.IGNORECASE),
    "scale down": LazyPattern(r"\bscal(?:e|es|ed|ing)[- ]?(?:down|in)\b", re.IGNORECASE),
    # The verb, not the noun: "page #payments-platform", not "this page", "page 3 of".
    "page": LazyPattern(
        r"(?<!\bthis )(?<!\bthe )(?<!\ba )(?<!\bthat )(?<!\bwiki )(?<!\bweb )(?<!\bstatus )"
        r"\bpag(?:e|es|ed|ing)\b(?!\s+(?:\d|of\b|for\b|describes|explains|lists))",
        re.IGNORECASE,
    ),
}
# The gerund each action is named by in an answer ("on failing over").
_ACTION_GERUND = {
    "fail over": "failing over",
    "restart": "restarting",
    "scale up": "scaling up",
    "scale down": "scaling down",
    "page": "paging",
}
# A step that forbids the action: a negation before it ("Do not fail over ...", "never
# restart", "avoid failing over").
_FORBIDDING = LazyPattern(
    r"\b(?:do\s+not|don'?t|never|must\s+not|mustn'?t|should\s+not|shouldn'?t|may\s+not|"
    r"cannot|can'?t|avoid)\b",
    re.IGNORECASE,
)
# Where a clause ends: a negation in an earlier clause ("Do not restart it; fail over ...",
# "If no replica answers, fail over") is not the action's.
_CLAUSE_END = re.compile(r"[;,.:!?]")
# A step whose instruction holds only under a condition ("If errors persist, ...", "... unless
# its own health checks fail", "only when ...").
_CONDITIONAL = LazyPattern(r"\b(?:if|unless|only|when|once|after|until)\b", re.IGNORECASE)
# A numbered or bulleted step's marker ("3. ", "- "), left out where the step is said.
_STEP_MARKER = re.compile(r"^\s*(?:[-*+]|\(?\d+[.)])\s+")
_STEP_NUMBER = re.compile(r"^\s*\(?(\d+)[.)]\s")
# A service's name as a question writes it ("payment-db", "svc:payment-db").
_NAME_WRITTEN = re.compile(r"\b(?:svc:)?([a-z][a-z0-9]*(?:-[a-z0-9]+)+)\b", re.IGNORECASE)

ACTION_STEP = "runbook_step"


def _action_steps(ev: Evidence, action: str) -> list[tuple[int, str]]:
    """The steps of runbook `ev` that speak of `action` (1-based line number, the step as
    one line), in the runbook's order."""
    pattern = _STEP_ACTION[action]
    lines = [" ".join(line.split()) for line in (ev.content or "").splitlines()]
    return [(n, line) for n, line in enumerate(lines, 1) if pattern.search(line)]


def _step_reading(step: str, action: str) -> str:
    """What a step says of the action: it forbids it, or says to take it (under its
    condition when it has one)."""
    said = _STEP_ACTION[action].search(step)
    before = _CLAUSE_END.split(step[: said.start()] if said else step)[-1]
    condition = bool(_CONDITIONAL.search(step))
    if _FORBIDDING.search(before):
        unless = " except under the condition it states" if condition else ""
        return f"it forbids {_ACTION_GERUND[action]}{unless}"
    return "it says to do it" + (" under the condition it states" if condition else "")


def _in_force_runbooks(evidence: Sequence[Evidence], as_of: datetime) -> list[Evidence]:
    """The trusted, active runbook versions admitted that hold at `as_of` (the version in
    force: the gate left the others out as superseded or not valid then), by id."""
    return sorted(
        (
            ev
            for ev in _with(evidence, "runbook")
            if ev.trust == "trusted" and holds_at(ev, as_of) and ev.content
        ),
        key=lambda e: e.element_id,
    )


def _object_named(question: str) -> list[str]:
    """The service names the action asked about is done to, as the question writes them
    ("fail over payment-db": payment-db)."""
    words = action_search_text(question) or ""
    return list(dict.fromkeys(m.group(1).lower() for m in _NAME_WRITTEN.finditer(words)))


class _DatabaseReading:
    """What "the database" of an action decision was read as: the service names the steps
    are checked against, the claim saying so, or the gap saying why none was taken."""

    def __init__(self, names: list[str], claims: list[Claim], gaps: list[MissingEvidence]) -> None:
        self.names = names
        self.claims = claims
        self.gaps = gaps


def _carries_db(service_id: str) -> bool:
    """Whether a service's name carries "db" as a word of its own or a word's end
    (payment-db, orders-mongodb, ledger_database): what "the database" may name."""
    parts = re.split(r"[^a-z0-9]+", service_id.removeprefix("svc:").lower())
    return any(p == "database" or (p.endswith("db") and len(p) >= 2) for p in parts)


def _database_reading(
    evidence: Sequence[Evidence], question: str, as_of: datetime
) -> _DatabaseReading:
    """ "Should we fail over the database?": the one service whose name carries "db" on the
    dependency paths the run read (out of the incident's services, the subject's records
    only: the gate admitted them), valid at as_of; several or none is a required gap that
    names no service the subject may not read (only those read)."""
    words = action_database_words(question)
    if words is None:
        return _DatabaseReading([], [], [])
    paths: dict[str, list[Evidence]] = {}
    for dep in sorted(_with(evidence, "dependency"), key=lambda e: e.element_id):
        if not holds_at(dep, as_of):
            continue
        path = dep.context.get("path")
        for service in path if isinstance(path, list) else []:
            if isinstance(service, str) and _carries_db(service):
                paths.setdefault(service, []).append(dep)
    if len(paths) == 1:
        ((service, deps),) = paths.items()
        starts = sorted({str(d.context.get("start")) for d in deps if d.context.get("start")})
        claim = _claim(
            f"'{words}' is read as {service}: the only service whose name carries \"db\" on "
            f"the dependency paths read out of {', '.join(starts) or 'the services asked about'}"
            f" at as_of ({'; '.join(dep.content for dep in deps)})",
            EpistemicStatus.INFERENCE,
            0.8,
            deps,
            Intent.APPLICABLE_RUNBOOK.value,
        )
        return _DatabaseReading([service.removeprefix("svc:")], [claim], [])
    if paths:
        why = (
            f"'{words}' may be any of {', '.join(sorted(paths))} (each on the dependency paths "
            "read): name the one meant"
        )
    else:
        why = (
            f"'{words}' names no service: none whose name carries \"db\" is on a dependency "
            "path read at as_of (out of the incident open then, or the service given); name "
            "the service"
        )
    gap = MissingEvidence(
        evidence_type="entity",
        intents=[Intent.APPLICABLE_RUNBOOK.value],
        description=why,
        required=True,
    )
    return _DatabaseReading([], [], [gap])


def _decided_at(
    refs: Sequence[ReferenceTime], as_of: datetime, question: str
) -> tuple[datetime, str]:
    """When an action decision is asked of: the moment the question names ("should we have
    failed over payment-db during the incident?": the incident's start), said with why, else
    as_of. The runbook in force then answers it (after the fact, today's version does not);
    asked after the fact with no moment placed (an incident the subject may not read), the
    answer at as_of says so."""
    named = [r for r in refs if r.kind != "as_of"]
    if not named:
        if asks_action_decision_after(question):
            return as_of, f"{iso_utc(as_of)}, not at the time asked after the fact: none placed"
        return as_of, iso_utc(as_of)
    ref = min(named, key=lambda r: r.at)
    return ref.at, f"{ref.describe()} ({ref.why})"


def action_step_claims(
    evidence: Sequence[Evidence],
    question: str,
    as_of: datetime,
    refs: Sequence[ReferenceTime] = (),
) -> tuple[list[Claim], list[MissingEvidence]]:
    """Asked whether to fail over, restart, scale or page ("should we fail over payment-db?"):
    a `fact` per step of each runbook version in force at as_of that speaks of the action,
    quoted with its version and validity and said as what it does (forbids it, or says to do
    it, under its condition); the runbook's words are data, never an instruction followed.
    A runbook in force with no step on it is a required gap saying so (it neither says to
    nor forbids it). No runbook admitted: the runbook gap already says it. A moment the
    question names (`refs`: "during the incident", "should we have ...") is when the runbook
    in force is taken, said as of then."""
    action = asks_action_decision(question)
    if action is None:
        return [], []
    gerund = _ACTION_GERUND[action]
    at, at_text = _decided_at(refs, as_of, question)
    database = _database_reading(evidence, question, at)
    named = _object_named(question) + database.names
    claims: list[Claim] = list(database.claims)
    silent: list[Evidence] = []
    for rb in _in_force_runbooks(evidence, at):
        steps = _action_steps(rb, action)
        if not steps:
            silent.append(rb)
            continue
        valid = (
            f"valid {iso_utc(rb.valid_from) if rb.valid_from else 'from its first record'} to "
            f"{iso_utc(rb.valid_to) if rb.valid_to else 'open'}"
        )
        version = _versioned(rb).rsplit("@", 1)[-1]
        for line_no, step in steps:
            said = _STEP_MARKER.sub("", step)
            other = [n for n in named if n not in step.lower()]
            names = f"; the step does not name {', '.join(other)}, asked about" if other else ""
            numbered = _STEP_NUMBER.match(step)
            where = f"step {numbered.group(1)}" if numbered else f"line {line_no}"
            claims.append(
                _claim(
                    f'{version} says "{_quote(said)}" ({_step_reading(step, action)}): {where} '
                    f"of Runbook {_title(rb)} ({_versioned(rb)}), the version in force "
                    f"at {at_text} ({valid}), on {gerund}{names}; the runbook's words, "
                    "quoted, not a record of what was done",
                    EpistemicStatus.FACT,
                    0.9,
                    [rb],
                    Intent.APPLICABLE_RUNBOOK.value,
                )
            )
    if len(claims) > len(database.claims) or not silent:
        return claims, database.gaps
    gap = MissingEvidence(
        evidence_type=ACTION_STEP,
        intents=[Intent.APPLICABLE_RUNBOOK.value],
        description=f"no step of {', '.join(_versioned(rb) for rb in silent)} (in force at "
        f"{'as_of ' if at == as_of else ''}{at_text}) speaks of {gerund}: the runbook neither "
        "says to nor "
        "forbids it, so whether to is not answered by a runbook",
        required=True,
    )
    return claims, [*database.gaps, gap]
