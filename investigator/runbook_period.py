"""Runbook and policy versions over a period.

"Which runbook applied to X between A and B?" asks for every version in force at some instant
of the period, each with its valid interval, not for the versions at its two ends (the one in
force for two months in the middle is the answer too); "Which runbook versions applied over
time?" asks the same of the page's whole history up to as_of. The gate admits every dated
version valid in the period beside its successor (`GatePolicy.version_period`) and the claims
state each by its interval, in time order.

The versions are those the run read of the page's SUPERSEDES chain (`runbooks_for`, bounded by
its row cap; tenant, ACL and purpose in Cypher like any read): a read cut at its cap may have
left versions of the period unread, and the answer says which read, as a required gap.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from investigator.context_graph.models import ToolCallRecord
from investigator.evidence import Evidence
from investigator.ownership_history import OwnershipPeriod, asked_named_period

# Words that ask for a page's versions over its history rather than the one at one time.
VERSION_HISTORY_WORDS = re.compile(
    r"\bover\s+time\b"
    r"|\bversion\s+history\b"
    r"|\bhistory\s+of\s+(?:the\s+)?(?:runbook|polic(?:y|ies)|versions?)\b"
    r"|\b(?:runbook|policy)(?:'s)?\s+history\b"
    r"|\b(?:all|every|previous|past|former|earlier)\s+(?:the\s+)?versions\b",
    re.IGNORECASE,
)

# The read of a page's versions (its SUPERSEDES chain) a runbook or policy question makes.
VERSIONS_TEMPLATE = "runbooks_for"


def asked_version_period(question: str, as_of: datetime) -> OwnershipPeriod | None:
    """The period a runbook or policy question asks the versions over: a period it names
    ("between A and B"), else the whole history up to as_of when it asks for one ("over
    time", "version history", "all versions"), else None."""
    named = asked_named_period(question, as_of)
    if named is not None:
        return named
    asked = VERSION_HISTORY_WORDS.search(question)
    if asked is None:
        return None
    return OwnershipPeriod(start=None, end=as_of, words=asked.group(0))


def cut_version_reads(calls: Sequence[ToolCallRecord]) -> list[tuple[str, int]]:
    """(anchor, rows read) of each versions read cut at its row cap: versions of the period
    past the cap were not read."""
    cut = {
        str(call.params.get("anchor_id")): call.row_count
        for call in calls
        if call.template_id == VERSIONS_TEMPLATE and call.truncated and not call.error
    }
    return sorted(cut.items())


def uncovered_by_versions(
    versions: Sequence[Evidence], period: OwnershipPeriod
) -> list[tuple[str, datetime, datetime]]:
    """(anchor, start, end) of each stretch [start, end) of the period at which no dated
    version read of a runbook or policy of the anchor (what the question names: a service,
    an alert) holds, by anchor and start. A version hidden from the subject counts as absent,
    as if it never existed. A whole history starts at the first version read."""
    by_anchor: dict[str, list[Evidence]] = {}
    for ev in versions:
        if ev.valid_from is not None:
            by_anchor.setdefault(str(ev.context.get("anchor", "the question")), [])
            if period.overlaps(ev):
                by_anchor[str(ev.context.get("anchor", "the question"))].append(ev)
    out: list[tuple[str, datetime, datetime]] = []
    for anchor, inside in sorted(by_anchor.items()):
        starts = sorted(ev.valid_from for ev in inside if ev.valid_from is not None)
        cursor = period.start if period.start is not None else starts[0] if starts else None
        if cursor is None:
            continue  # a whole history with no version in it: the rubric's gap says so
        for ev in sorted(inside, key=lambda e: (e.valid_from or cursor, e.element_id)):
            if ev.valid_from is not None and ev.valid_from > cursor:
                out.append((anchor, cursor, ev.valid_from))
            if ev.valid_to is None:
                cursor = period.end
                break
            cursor = max(cursor, ev.valid_to)
        if cursor < period.end:
            out.append((anchor, cursor, period.end))
    return out
