"""Which record of a runbook or policy that states no validity was in force at a time.

An imported file states no valid time: it is in force from its import until a re-import
replaces it. A re-import writes a new record of the same id, and both records carry no valid
time, so valid time cannot tell them apart; their record time is the only evidence of when
each was in force (docs/runbooks.md, "A runbook that states no validity"). So at time T the
version in force is the record recorded at or before T (among those known at the run's
known_at); when none was recorded by T, the earliest record, and the card and the claim say
that it was recorded after T. Versions with stated validity keep their valid-time semantics.

The older records are read with `version_history` (one recorded step per runbook, through
the run session like any read: tenant, ACL and purpose in Cypher, replayable).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Literal

from cypher_templates.plan import PlanStep
from graph_schema.canonical import iso_utc
from investigator.evidence import Evidence, as_datetime

_DOCUMENT_TYPES = frozenset({"runbook", "policy"})


def undated(ev: Evidence) -> bool:
    """Whether `ev` is a runbook or policy record that states no validity at all."""
    return (
        ev.kind == "node"
        and bool(_DOCUMENT_TYPES & set(ev.evidence_types))
        and ev.valid_from is None
        and ev.valid_to is None
    )


def recorded_after(ev: Evidence, at: datetime) -> bool:
    """An undated record first recorded after `at`: nothing says it was in force then."""
    return undated(ev) and ev.recorded_at is not None and ev.recorded_at > at


def history_steps(candidates: Sequence[Evidence], at: datetime) -> list[PlanStep]:
    """One `version_history` read per undated runbook or policy whose record is newer than
    `at` (sorted by id): the records that may have been in force then."""
    # Record version 1 has no older record: it is the earliest, nothing to read.
    ids = {ev.element_id for ev in candidates if recorded_after(ev, at) and ev.version > 1}
    return version_history_steps(ids, "node")


def version_history_steps(
    element_ids: Iterable[str], kind: Literal["node", "relationship"]
) -> list[PlanStep]:
    """One `version_history` read of every record of each node id or edge key (sorted)."""
    return [
        PlanStep(
            template_id="version_history",
            params={"element_id": element_id},
            options={"kind": kind},
            evidence_type="entity",
        )
        for element_id in sorted(set(element_ids))
    ]


def in_force_records(
    candidates: Sequence[Evidence], histories: Sequence[Sequence[Evidence]], at: datetime
) -> list[Evidence]:
    """`candidates` with each undated record newer than `at` replaced by the record of the
    same id in force at `at`: the last recorded at or before it, else the earliest. The
    replacement keeps the candidate's context (how it was reached), evidence types and ranks;
    its own `superseded_at` goes into the context, so the claim can say when it was replaced."""
    by_id: dict[str, list[Evidence]] = {}
    for rows in histories:
        for ev in rows:
            if ev.status == "active" and ev.valid_from is None and ev.valid_to is None:
                by_id.setdefault(ev.element_id, []).append(ev)
    out = []
    for cand in candidates:
        records = sorted(by_id.get(cand.element_id, []), key=lambda ev: ev.version)
        if not recorded_after(cand, at) or not records:
            out.append(cand)
            continue
        by_then = [ev for ev in records if ev.recorded_at is not None and ev.recorded_at <= at]
        chosen = by_then[-1] if by_then else records[0]
        if chosen.version == cand.version:
            out.append(cand)
            continue
        context = dict(cand.context)
        if chosen.context.get("superseded_at") is not None:
            context["superseded_at"] = chosen.context["superseded_at"]
        out.append(
            chosen.model_copy(
                update={
                    "context": context,
                    "evidence_types": list(cand.evidence_types),
                    "replacement": cand.replacement,
                    "ranks": dict(cand.ranks),
                    "scores": dict(cand.scores),
                }
            )
        )
    return out


def as_recorded_at(
    candidates: list[Evidence],
    at: datetime,
    stage: Callable[[list[PlanStep]], list[list[Evidence]]],
) -> list[Evidence]:
    """`candidates` as in force at `at` (reading the histories it needs through `stage`, a
    recorded round; none when every candidate is dated or recorded by `at`)."""
    steps = history_steps(candidates, at)
    if not steps:
        return candidates
    return in_force_records(candidates, stage(steps), at)


def record_time_note(ev: Evidence, at: datetime, what: str = "as_of") -> str | None:
    """What the card says of an undated version: recorded after the time asked (the earliest
    version, not known to be in force then), or replaced by a later import (the version the
    KG had then). None for a dated version or the current record recorded by then."""
    if not undated(ev) or ev.recorded_at is None:
        return None
    if ev.recorded_at > at:
        return (
            f"recorded {iso_utc(ev.recorded_at)}, after {what}: its earliest version, which "
            f"states no validity; what it said at {what} is not known"
        )
    replaced = ev.context.get("superseded_at")
    if replaced is None:
        return None
    return (
        f"the version recorded {iso_utc(ev.recorded_at)}, in force at {what} (it states no "
        f"validity); a re-import replaced it at {_instant_text(replaced)}"
    )


def _instant_text(raw: object) -> str:
    return iso_utc(raw) if isinstance(raw, datetime) else str(raw)


def missing_file_note(ev: Evidence, at: datetime, what: str = "as_of") -> str | None:
    """What the card says of a runbook whose file the last import of its source did not have
    (`runbooks_for` 4's `file_missing_since`, known at the lookup's known_at): the record
    stays current, so it is answered, but the on-call hears that its page is gone. None when
    the file was there, or went missing after `at`."""
    raw = ev.context.get("file_missing_since")
    if raw is None:
        return None
    try:
        since = as_datetime(raw)  # the row's context is stored as text
    except ValueError:
        return None
    if since is None or since > at:
        return None
    if reason := ev.context.get("file_unreadable"):
        # The file was there but could not be read (runbooks_for 5): not a page deleted.
        recorded = iso_utc(ev.recorded_at) if ev.recorded_at is not None else "an earlier import"
        return (
            f"its file was in {ev.source_id}'s import of {iso_utc(since)} but could not be "
            f"read ({reason}): this is the version recorded at {recorded}; the record stays "
            "current until retracted"
        )
    return (
        f"its file was not in {ev.source_id}'s import of {iso_utc(since)}; the record stays "
        "current until retracted"
    )


def missing_rule_note(alerts: list[Evidence], at: datetime) -> str | None:
    """What the card says of the alerts looked up whose rule the last import of their rule
    file no longer had (`entity_resolution` 4's `file_missing_since`, known at the lookup's
    known_at): they stay current and answered, but the on-call hears that the rule is gone
    (it no longer fires from that file). None when every rule was there at `at`."""
    gone: dict[tuple[str, str], set[str]] = {}
    for ev in alerts:
        raw = ev.context.get("file_missing_since")
        try:
            since = as_datetime(raw) if raw is not None else None
        except ValueError:
            continue
        if since is not None and since <= at:
            gone.setdefault((str(ev.source_id), iso_utc(since)), set()).add(ev.element_id)
    notes = []
    for (source, when), ids in sorted(gone.items()):
        rules = "its rule was" if len(ids) == 1 else "their rules were"
        notes.append(
            f"{', '.join(sorted(ids))}: {rules} not in {source}'s import of {when} (removed "
            "from the rule file); the record stays current until retracted"
        )
    return "; ".join(notes) or None
