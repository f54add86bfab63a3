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
from investigator.claims.wording import _claim, _label, _quote
from investigator.evidence import Evidence, iso_utc
from investigator.lazy_pattern import LazyPattern
from investigator.planner import asks_action_outcome, unrecorded_asks
from investigator.rubric import Intent, MissingEvidence
from investigator.timeline import incident_span, instant_of

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
