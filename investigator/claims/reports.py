"""What reports (postmortems, analyses) and rollback records say about a candidate cause."""

from __future__ import annotations

import re
from collections.abc import Sequence

from investigator.claims.candidates import _Candidate, _what
from investigator.claims.mechanisms import _CAUSAL, _SENTENCE_END, _report_sentence
from investigator.claims.model import Claim, Confounder, EpistemicStatus
from investigator.claims.wording import _claim, _label, _quote, _versioned, _with
from investigator.evidence import Evidence, iso_utc
from investigator.lazy_pattern import LazyPattern
from investigator.planner import asks_about_rollback
from investigator.rubric import Intent


def _cause_reports(evidence: Sequence[Evidence]) -> list[Evidence]:
    """The trusted documents of the pack that are no mechanism record yet may name a change
    as the cause (a draft postmortem: "Draft: the risk rule publication RR-2026-07-23a
    caused PAY-4097", confidence 0.3, `incident_report` only): what was recorded of a change
    then, said as such; never a mechanism, so it neither confirms nor refutes a verdict."""
    return [
        ev
        for ev in evidence
        if ev.type == "Document"
        and ev.status == "active"
        and ev.trust == "trusted"
        and "mechanism" not in ev.evidence_types
        and _CAUSAL.search(ev.content)
    ]


_DRAFT = LazyPattern(r"\bdraft\b", re.IGNORECASE)


def _record_notes(ev: Evidence) -> list[str]:
    """`a draft`, `confidence 0.3`: what a record says of its own standing."""
    notes = []
    marks = (ev.title, ev.props.get("kind"), ev.source_version, ev.element_id)
    if any(isinstance(m, str) and _DRAFT.search(m) for m in marks):
        notes.append("a draft")
    confidence = ev.props.get("confidence")
    if isinstance(confidence, int | float) and not isinstance(confidence, bool):
        notes.append(f"confidence {confidence:g}")
    return notes


def _report_short(report: Evidence) -> str:
    """`DRAFT postmortem: risk rules broke payments (a draft, confidence 0.3)`."""
    notes = _record_notes(report)
    return _label(report) + (f" ({', '.join(notes)})" if notes else "")


def _report_claims(
    cand: _Candidate,
    reports: Sequence[Evidence],
    first_ev: Evidence,
    intent: str,
    elsewhere: Sequence[tuple[Evidence, _Candidate]] = (),
    clearing: Sequence[Evidence] = (),
) -> list[Claim]:
    """A `fact` per report that names `cand` as the cause, quoting its sentence, with its
    standing (a draft, its confidence, when it was recorded) and, where the mechanism
    records of the pack say otherwise (`elsewhere`: another change they name as the cause;
    `clearing`: they rule this one out), that the records disagree."""
    out: list[Claim] = []
    for report in sorted(reports, key=lambda r: r.element_id):
        sentence = _report_sentence(report, cand.evidence)
        if sentence is None:
            continue
        notes = [report.element_id, *_record_notes(report)]
        if report.recorded_at is not None:
            notes.append(f"recorded {iso_utc(report.recorded_at)}")
        against = [
            f"{_label(m)} ({', '.join(['mechanism evidence', *_record_notes(m)])}) names "
            f"{_what(other)} as the cause"
            for m, other in elsewhere
        ] + [
            f"{_label(m)} ({', '.join(['mechanism evidence', *_record_notes(m)])}) rules it out"
            for m in clearing
        ]
        out.append(
            _claim(
                f"{_label(report)} ({', '.join(notes)}) names {_what(cand)} as the cause of "
                f'{_label(first_ev)}: "{_quote(sentence)}"; it records no mechanism'
                + (f"; the records read disagree: {'; '.join(against)}" if against else ""),
                EpistemicStatus.FACT,
                0.9,
                [cand.evidence, first_ev, report, *(m for m, _ in elsewhere), *clearing],
                intent,
            )
        )
    return out


def _reported_hypothesis(cand: _Candidate, reports: Sequence[Evidence]) -> str | None:
    """`named as the cause by <report> (a draft, confidence 0.3), which records no
    mechanism`, for a change no mechanism record is about; None when no report names it."""
    naming = sorted(
        (r for r in reports if _report_sentence(r, cand.evidence)), key=lambda r: r.element_id
    )
    if not naming:
        return None
    which = "which records" if len(naming) == 1 else "which record"
    return (
        f"named as the cause by {', '.join(_report_short(r) for r in naming)}, {which} no mechanism"
    )


# A step of a runbook that says to roll back ("2. ... roll back the release with ...").
_ROLLBACK_STEP = re.compile(r"\broll(?:ing)?[- ]?back\b|\brevert", re.IGNORECASE)


def _rollback_step(ev: Evidence, question: str) -> str:
    """`: its step "2. If the pool is exhausted after a release, roll back the release ..."`
    when the question asks about rolling back (or whether the runbook was followed) and the
    runbook's text has a step that says to; else nothing. Quoted as data, never followed."""
    if not asks_about_rollback(question):
        return ""
    lines = [" ".join(line.split()) for line in (ev.content or "").splitlines()]
    step = next((line for line in lines if _ROLLBACK_STEP.search(line)), None)
    return f': its rollback step, "{_quote(step)}"' if step else ""


ROLLBACK_ONLY_RECORDED = (
    "whether the runbook's other steps were taken is not recorded: the rollback is the only "
    "action on record (the claim above), and the KG has no response-action type for the rest"
)


def _rollbacks_recorded(evidence: Sequence[Evidence]) -> list[Claim]:
    """Asked whether the runbook was followed: each sentence of an incident report or
    postmortem admitted that records a rollback ("Fix: rollback at 10:41."), beside the
    rollback step of each runbook admitted. An inference: what the record says was done,
    set against the step; the `runbook_followed` gap stays (no record of every action)."""
    runbooks = [ev for ev in _with(evidence, "runbook") if _ROLLBACK_STEP.search(ev.content or "")]
    out: list[Claim] = []
    for doc in sorted(_with(evidence, "incident_report"), key=lambda e: e.element_id):
        if doc.type == "Runbook":
            continue
        sentences = [" ".join(s.split()) for s in _SENTENCE_END.split(doc.content or "")]
        done = [s for s in sentences if _ROLLBACK_STEP.search(s)]
        if not done:
            continue
        steps = [
            f"{_versioned(rb)} says to roll back ({_rollback_step(rb, 'roll back').lstrip(': ')})"
            for rb in runbooks
        ]
        said = "; ".join(steps) if steps else "no runbook admitted has a rollback step"
        out.append(
            _claim(
                f"{_label(doc)} records a rollback: "
                + " ".join(f'"{_quote(s)}"' for s in done)
                + f"; {said}. Only that action is on record, not whether every step was taken",
                EpistemicStatus.INFERENCE,
                0.6,
                [doc, *runbooks],
                Intent.APPLICABLE_RUNBOOK.value,
            )
        )
    return out


def _window_report_claims(
    cand: _Candidate,
    confounder: Confounder,
    before: Sequence[tuple[_Candidate, Confounder]],
    mechanisms: Sequence[Evidence],
    reports: Sequence[Evidence],
    first_ev: Evidence,
    intent: str,
) -> list[Claim]:
    """The report claims of a candidate cause of the window (`_report_claims`): the other
    candidates the mechanism records name as the cause, and those that rule it out, are
    what disagrees with a report naming it."""
    if not confounder.reported_by:
        return []
    elsewhere = [
        (m, other)
        for other, assessed in before
        if other is not cand
        for m in mechanisms
        if m.evidence_id in assessed.named_by
    ]
    clearing = [m for m in mechanisms if m.evidence_id in confounder.ruled_out_by]
    return _report_claims(cand, reports, first_ev, intent, elsewhere, clearing)
