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

    Each gap not yet worded so is: a required one names the failed reads of its evidence
    type, if any ("unknown, not absent: a read of the run failed: deployments_in_window@4
    (...) did not answer (...), so the release/deployment time for the service is unknown
    until the read answers; ask again"), else says what is missing and that a failed read,
    named in its own gap, may hold it ("the link between the error/incident and the service
    is not in what the run read, and a read of the run failed (see the gap naming it), ...";
    before, "its search for this did not finish"); one that would strengthen the answer
    keeps its words after "unknown, not absent: a read of the run failed, so whether this
    holds is not known" (an owner, a tie, a mechanism the failed read may have held), the
    competing-cause checks' after "a read of the run failed: " (they say what did not run).
    Then the failed reads no gap names yet (by `template@version`: a checks gap listing
    one as a step not run names none) get a required gap, one per read (reads of the same
    evidence types share it; a read made for several, documents_about for a document and
    the mechanism, says each), naming them and what they read, so "Missing evidence: none"
    is never said beside a read that failed (before, "what happened yesterday?" whose change
    events read failed listed the rest and no gap at all). One gap per missing thing: before,
    the release's rubric gap said "a read of the run failed" and a second deployment_time gap
    named the read."""
    from investigator.claims.wording import (
        CHECKS_NOT_RUN,
        READ_FAILED,
        UNKNOWN_NOT_ABSENT,
        _unfinished_why,
    )
    from investigator.rubric import MISSING_DESCRIPTIONS, MissingEvidence

    failed = [c for c in calls if c.error]
    if not failed:
        return list(missing)
    why = _unfinished_why(READ_FAILED)
    # The failed reads no gap names yet, by what they read: each named in that type's gap.
    unnamed: dict[str, dict[str, str]] = {}
    for call in failed:
        if not any(_names(m.description, call.template_id) for m in missing):
            kind = unnamed.setdefault(call.evidence_type or "entity", {})
            kind.setdefault(call.template_id, failed_read_words(call))
    # The claim rules' own rewording of a required gap (`_not_searched_to_the_end`) names no
    # read and drops what was lacking: said again with its reads, in the rubric's words.
    generic = f"{UNKNOWN_NOT_ABSENT}{why}"
    several = len({c.template_id for c in failed}) > 1
    failed_ones = "reads of the run failed" if several else "a read of the run failed"
    their_gaps = "the gaps naming them" if several else "the gap naming it"
    out: list[MissingEvidence] = []
    for m in missing:
        worded = m.description.startswith(UNKNOWN_NOT_ABSENT) and m.description != generic
        reads = unnamed.pop(m.evidence_type, None) if m.required and not worded else None
        # What was lacking, in the rubric's "no X" (the claim rules' own words of it are
        # dropped as they were before: they may read as a finding).
        lacking = (
            m.description
            if m.description.startswith("no ")
            else MISSING_DESCRIPTIONS.get(m.evidence_type, "")
        )
        if reads:
            out.append(m.model_copy(update={"description": _read_failed_gap(lacking, reads)}))
        elif m.required and not worded and lacking.startswith("no "):
            # No read of its type failed: what is missing, and where the failed reads are
            # named (each in one gap: not again here).
            out.append(
                m.model_copy(
                    update={
                        "description": f"{UNKNOWN_NOT_ABSENT}{_lacking_words(lacking)} is not "
                        f"in what the run read, and {failed_ones} (see {their_gaps}), so it "
                        "may be in what did not answer; ask again"
                    }
                )
            )
        elif m.description.startswith(UNKNOWN_NOT_ABSENT):
            out.append(m)
        elif m.required:
            out.append(m.model_copy(update={"description": f"{UNKNOWN_NOT_ABSENT}{why}"}))
        else:
            # A gap that says which checks did not run needs no "whether this holds" before it.
            lead = (
                "a read of the run failed: "
                if m.description.startswith(CHECKS_NOT_RUN)
                else "a read of the run failed, so whether this holds is not known: "
            )
            out.append(
                m.model_copy(update={"description": f"{UNKNOWN_NOT_ABSENT}{lead}{m.description}"})
            )
    intents = sorted({i for m in missing for i in m.intents})
    # The failed reads still unnamed, each in one gap: reads of the same evidence types share
    # it (two entity reads: one gap). A read made for several types (documents_about for the
    # documents and the mechanism) is one gap saying each; before, one gap per type named it
    # again in the same words.
    types_of: dict[str, list[str]] = {}
    words: dict[str, str] = {}
    for call in failed:
        if not any(_names(m.description, call.template_id) for m in out):
            kinds = types_of.setdefault(call.template_id, [])
            if (call.evidence_type or "entity") not in kinds:
                kinds.append(call.evidence_type or "entity")
            words.setdefault(call.template_id, failed_read_words(call))
    leftover: dict[tuple[str, ...], dict[str, str]] = {}
    for template_id, kinds in types_of.items():
        leftover.setdefault(tuple(kinds), {})[template_id] = words[template_id]
    for read_kinds, unanswered in leftover.items():
        they = "they were" if len(unanswered) > 1 else "it was"
        description = (
            _read_failed_gap([MISSING_DESCRIPTIONS.get(k, "") for k in read_kinds], unanswered)
            if len(read_kinds) > 1
            else f"{UNKNOWN_NOT_ABSENT}a read of the run failed: "
            f"{'; '.join(unanswered.values())} did not answer (see its tool calls: a query "
            f"timed out or Neo4j refused it), so nothing {they} to read is said absent; "
            "ask again"
        )
        out.append(
            MissingEvidence(
                evidence_type=read_kinds[0],
                intents=intents,
                description=description,
                required=True,
            )
        )
    return out


def _lacking_words(lacking: str) -> str:
    """The rubric's "no X" said as "the X", up to its first colon."""
    return f"the {lacking[3:].split(': ')[0]}" if lacking.startswith("no ") else "what it read"


def _names(description: str, template_id: str) -> bool:
    # As `failed_read_words` names a read (`template@version`): a step listed as not run,
    # `change_events_in_window(from=...)`, is no gap of the failed read.
    return re.search(rf"\b{re.escape(template_id)}@", description) is not None


def _read_failed_gap(lacking: str | Sequence[str], reads: dict[str, str]) -> str:
    """A required gap whose reads failed, in one: which reads failed, and that what the gap
    lacks (the rubric's "no X" said as "the X", up to its first colon; each of several,
    "the X and the Y") is unknown until they answer."""
    from investigator.claims.wording import UNKNOWN_NOT_ABSENT

    lacks = [lacking] if isinstance(lacking, str) else list(lacking)
    whats = [_lacking_words(x) for x in lacks]
    what = whats[0] if len(whats) == 1 else f"{', '.join(whats[:-1])} and {whats[-1]}"
    named = "; ".join(reads[t] for t in sorted(reads))
    until = "the reads answer" if len(reads) > 1 else "the read answers"
    are = "are" if len(whats) > 1 else "is"
    return (
        f"{UNKNOWN_NOT_ABSENT}a read of the run failed: {named} did not answer (see its tool "
        f"calls: a query timed out or Neo4j refused it), so {what} {are} unknown until "
        f"{until}; ask again"
    )


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
