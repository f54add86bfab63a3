"""The line that names a run's failed reads, before any other reason it stopped.

A read that failed (a template that timed out on a cold or loaded server, Neo4j refusing it)
leaves what it was to read unknown, not absent. The Status line's stop reason (max_rounds,
evidence_sufficient) says nothing of it, so the CLI report (`Reads` line) and the served
summary (`Note:`) name the failed reads first, with their error, and say to ask again.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from investigator.context_graph.models import ToolCallRecord
    from investigator.rubric import MissingEvidence

# The reads of releases and change events: one that failed may have held a competing cause.
CAUSE_READ_TYPES = frozenset({"deployment_time", "change_event"})


def failed_reads_line(calls: Iterable[tuple[str, str | None]]) -> str | None:
    """`unknown, not absent: 2 of 24 reads timed out (entity_resolution@5, fulltext_search@4:
    query timed out after 5 s and was cancelled); ask again`, from (template, error) pairs
    of a run's tool calls in order; None when none failed. Reads the run's own deadline
    stopped are said as such (the Stopped line says to give it more time)."""
    from cypher_templates.executor import DEADLINE_CUT  # not at import: the served summary's

    pairs = list(calls)
    failed = [(template, error) for template, error in pairs if error]
    if not failed:
        return None
    by_error: dict[str, list[str]] = {}
    for template, error in failed:
        templates = by_error.setdefault(str(error).splitlines()[0][:200], [])
        if template not in templates:
            templates.append(template)
    own = [e for e in by_error if e != DEADLINE_CUT]
    verb = (
        "timed out"
        if own and all("timed out" in e for e in own)
        else "stopped at the run's deadline"
        if not own
        else "failed"
    )
    count = f"{len(failed)} of {len(pairs)} reads"
    details = "; ".join(f"{', '.join(t)}: {e}" for e, t in by_error.items())
    return f"unknown, not absent: {count} {verb} ({details}); ask again"


def failed_read_gaps(
    calls: Sequence[ToolCallRecord], missing: Sequence[MissingEvidence]
) -> list[MissingEvidence]:
    """The gaps of a run one of whose reads failed (`calls`: its tool calls, in order), said
    as what they are: unknown, never absent.

    Each gap not yet worded so is: a required one says the search did not finish (as the
    claim rules word it), one that would strengthen the answer keeps its words after
    "unknown, not absent: a read of the run failed, so whether this holds is not known"
    (an owner, a tie, a mechanism the failed read may have held). Then each failed read no
    gap names yet gets a required gap of its own, naming it and what it reads, so "Missing
    evidence: none" is never said beside a read that failed (before, "what happened
    yesterday?" whose change events read failed listed the rest and no gap at all)."""
    from investigator.claims.wording import READ_FAILED, UNKNOWN_NOT_ABSENT, _unfinished_why
    from investigator.rubric import MissingEvidence

    failed = [c for c in calls if c.error]
    if not failed:
        return list(missing)
    why = _unfinished_why(READ_FAILED)
    out = [
        m
        if m.description.startswith(UNKNOWN_NOT_ABSENT)
        else m.model_copy(update={"description": f"{UNKNOWN_NOT_ABSENT}{why}"})
        if m.required
        else m.model_copy(
            update={
                "description": f"{UNKNOWN_NOT_ABSENT}a read of the run failed, so whether "
                f"this holds is not known: {m.description}"
            }
        )
        for m in missing
    ]
    intents = sorted({i for m in missing for i in m.intents})
    said: set[str] = set()
    for call in failed:
        if call.template_id in said or any(
            re.search(rf"\b{re.escape(call.template_id)}\b", m.description) for m in out
        ):
            continue
        said.add(call.template_id)
        out.append(
            MissingEvidence(
                evidence_type=call.evidence_type or "entity",
                intents=intents,
                description=f"{UNKNOWN_NOT_ABSENT}a read of the run failed: "
                f"{failed_read_words(call)} did not answer (see its tool calls: a query timed "
                "out or Neo4j refused it), so nothing it was to read is said absent; ask again",
                required=True,
            )
        )
    return out


def failed_read_words(call: ToolCallRecord) -> str:
    """A read named in plain words: `change_events_in_window@3 (Change events ...)`."""
    from cypher_templates.registry import TemplateRegistry, UnknownTemplate

    try:
        reads = TemplateRegistry.packaged().get(call.template_id, call.template_version)
    except UnknownTemplate:
        return f"{call.template_id}@{call.template_version} (a read of the knowledge graph)"
    return f"{call.template_id}@{call.template_version} ({reads.description.rstrip('.')})"


def failed_reads_named(
    calls: Sequence[ToolCallRecord], evidence_types: Collection[str] | None = None
) -> list[str]:
    """Each template whose read failed in the run, once, in plain words (`failed_read_words`):
    a gap naming them is the one gap of those reads (`failed_read_gaps` adds none). Only the
    reads for `evidence_types` when given (`CAUSE_READ_TYPES`: those that read causes)."""
    named: dict[str, str] = {}
    for call in calls:
        if evidence_types is not None and call.evidence_type not in evidence_types:
            continue
        if call.error and call.template_id not in named:
            named[call.template_id] = failed_read_words(call)
    return [named[t] for t in sorted(named)]
