"""Traces asked for ("show me the traces for PAY-4097", "any traces of the pool exhaustion?"):
the Trace records the subject may read that are linked to the error (MENTIONS), to the
incident or to the services that emitted it in the period (OBSERVED_IN), read by
`traces_linked`, or found by the question's own words. Each is listed with its start and id,
its recorded finding quoted as the record's words (an untrusted trace's text never); none
read is a gap saying what was read, never a claim that none is recorded.

A trace here is listed, never weighed: its evidence type is `trace`, never `mechanism`, so
a cause question's evidence gate is what it was (docs/investigation.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from investigator.claims.model import Claim, EpistemicStatus
from investigator.claims.wording import _claim, _quote
from investigator.context_graph.models import ToolCallRecord
from investigator.evidence import Evidence, iso_utc
from investigator.planner import asks_traces
from investigator.rubric import UNREAD_QUESTION, Intent, MissingEvidence

TRACE = "trace"

# The words of an unread-records gap that a trace read answers.
_TRACE_WORDS = frozenset({"trace", "traces", "span", "spans"})

_LINK_WORDS = {"MENTIONS": "mentions", "OBSERVED_IN": "observed in"}


class TraceRead(NamedTuple):
    """One `traces_linked` read: the element its traces link to, its period, cut, failed."""

    anchor: str
    since: str | None
    to: str
    cut: bool
    failed: bool


def trace_reads(calls: Sequence[ToolCallRecord]) -> list[TraceRead]:
    """Each `traces_linked` read of a run, in call order."""
    return [
        TraceRead(
            str(c.params.get("anchor_id")),
            str(c.params["from"]) if c.params.get("from") else None,
            str(c.params.get("to")),
            c.truncated,
            bool(c.error),
        )
        for c in calls
        if c.template_id == "traces_linked"
    ]


def _started(ev: Evidence) -> datetime | None:
    return ev.valid_from or ev.observed_at


def _listed(evidence: Sequence[Evidence]) -> list[Evidence]:
    """The Trace records of the pack, earliest first (ties by id)."""
    traces = [ev for ev in evidence if ev.type == "Trace" and ev.status == "active"]
    return sorted(traces, key=lambda ev: (_started(ev) or datetime.max, ev.element_id))


def _finding(ev: Evidence) -> str:
    """What the trace's record states, quoted as its words; an untrusted one not quoted."""
    if ev.trust != "trusted":
        return "its text is from an untrusted source and is not quoted"
    finding = ev.props.get("finding") or ev.props.get("summary")
    if not isinstance(finding, str) or not finding.strip():
        return "its record states no finding"
    return f'its record states: "{_quote(" ".join(finding.split()), 300)}"'


def _linked(ev: Evidence) -> str:
    """How the trace was found: the link the read followed, or the question's words."""
    anchor = ev.context.get("anchor")
    link = _LINK_WORDS.get(str(ev.context.get("link")))
    if isinstance(anchor, str) and link is not None:
        return f"{link} {anchor}"
    return "found by the question's words (no link to the error, service or incident read)"


def trace_list_claims(
    evidence: Sequence[Evidence], question: str, intents: Sequence[str]
) -> list[Claim]:
    """One fact per trace of the pack when the question asks for traces: its id, name,
    start, how it was found and what its record states (the record's words, quoted)."""
    if not asks_traces(question):
        return []
    intent = sorted(intents)[0] if intents else Intent.ENTITY_LOOKUP.value
    out = []
    for ev in _listed(evidence):
        started = _started(ev)
        when = f"started {iso_utc(started)}" if started is not None else "start not recorded"
        out.append(
            _claim(
                f"Trace {ev.element_id} ({ev.name or ev.element_id}), {when}, {_linked(ev)}; "
                f"{_finding(ev)}",
                EpistemicStatus.FACT,
                0.9,
                [ev],
                intent,
            )
        )
    return out


def _period(read: TraceRead) -> str:
    if read.since is not None:
        return f"{read.anchor} from {read.since} to {read.to}"
    return f"{read.anchor} by {read.to}"


def trace_gaps(
    evidence: Sequence[Evidence],
    question: str,
    intents: Sequence[str],
    reads: Sequence[TraceRead],
) -> list[MissingEvidence]:
    """The gaps of a question asking for traces: a read that failed or was cut; none listed
    is a required gap naming what was read (read and empty: no trace linked to those that
    the subject may read), or, with nothing to read them from, that no error, service or
    incident was found to read them for."""
    if not asks_traces(question):
        return []
    gaps = []
    for read in reads:
        if read.failed:
            gaps.append(
                MissingEvidence(
                    evidence_type=TRACE,
                    intents=sorted(intents),
                    description=f"unknown, not absent: the read of the traces linked to "
                    f"{_period(read)} failed: its traces are not known",
                )
            )
        elif read.cut:
            gaps.append(
                MissingEvidence(
                    evidence_type=TRACE,
                    intents=sorted(intents),
                    description=f"more traces are linked to {_period(read)} than one read "
                    "returns: the earliest are listed",
                    required=False,
                )
            )
    if _listed(evidence):
        return gaps
    ok = [read for read in reads if not read.failed]
    if ok:
        read_of = "; ".join(_period(read) for read in ok)
        description = (
            f"traces read, none found: no trace this subject may read is linked to {read_of} "
            "(a trace that mentions the error, or was observed in the incident or the service, "
            "started in that period)"
        )
    elif not reads:
        description = (
            "no error code, service or incident was found to read traces for, and the "
            "question's words found no trace the subject may read: name the error or service "
            "(show me the traces for <error code>)"
        )
    else:
        return gaps
    gaps.append(
        MissingEvidence(evidence_type=TRACE, intents=sorted(intents), description=description)
    )
    return gaps


def words_left_by_traces(words: str, evidence: Sequence[Evidence], question: str) -> str | None:
    """The words of an unread-records gap ("traces logs") that traces listed or read do not
    answer: the trace words go once the question's traces were looked for (`trace_gaps`
    says what was found); None when no word is left."""
    if not asks_traces(question):
        return words
    left = [w for w in words.split() if w not in _TRACE_WORDS]
    return " ".join(left) or None


def answered_by_traces(gap: MissingEvidence, evidence: Sequence[Evidence], question: str) -> bool:
    """Whether a gap of an entity lookup asking for traces ("any traces of the pool
    exhaustion?") is answered by the traces listed: the unread-question gap and the entity
    gap go when a trace its words found is listed."""
    if not asks_traces(question) or not _listed(evidence):
        return False
    return gap.evidence_type in (UNREAD_QUESTION, "entity") and gap.intents == [
        Intent.ENTITY_LOOKUP.value
    ]
