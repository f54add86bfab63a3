"""Owners over a period, and corrections of what was recorded about them.

"Who owned X between A and B?" and "How did ownership of X change over time?" ask for every
owner in a period (the second: the whole history up to as_of), each with its valid interval,
not for the owner at one instant. The gate admits every ownership record valid at some time
in the period (`GatePolicy.ownership_period`) and the claims state each by its interval.

A correction is a later record of OWNS edges that changed who was recorded as the owner for
a time already past when it was recorded (the owner on 2026-11-11 was team:beta as first
recorded, team:alpha after a correction of 2026-12-04): an answer given before the
correction, or with `--known-at` before it, named another owner. The older records are read
with `version_history` (one recorded step per edge key that has them, through the run
session like any read: tenant, ACL and purpose in Cypher, replayable); a record that only
closes an open interval at a time still to come when it was recorded (ownership moves on
the 20th, recorded on the 19th) corrects nothing.

A question about one instant ("Who owned tps-report then?") is told of a correction of who
was recorded at that instant too. The current records admitted show one that added an owner
(a record written later for a time already past); one that rewrote an earlier record needs
its older versions: every record of the service's OWNS edges is read with one more bounded
read (`ownership_records`), and only when a record the owner lookup read was superseded (its
version above 1), since without one no record was rewritten.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from cypher_templates.plan import PlanStep
from investigator.context_graph.models import ToolCallRecord
from investigator.evidence import Evidence, iso_utc
from investigator.record_time import version_history_steps
from investigator.timeline import EARLIEST, time_references

# Words that ask for the history of ownership rather than the owner at one time.
HISTORY_WORDS = re.compile(
    r"\bowner(?:ship|s)?\s+history\b"
    r"|\bhistory\s+of\s+(?:the\s+)?owner(?:ship|s)?\b"
    r"|\bownership\s+changes\b"
    r"|\bhow\s+(?:did|has|have)\s+(?:the\s+)?owner(?:ship|s)?\b[^?.!]*?\bchanged?\b"
    r"|\bowner(?:ship|s)?\b[^?.!]*?\bchanged\b"
    r"|\b(?:owner(?:ship|s)?|owned)\b[^?.!]*?\bover\s+time\b"
    r"|\b(?:previous|past|former|earlier|all(?:\s+the)?|every)\s+owners\b"
    r"|\b(?:who|which\s+teams?)\s+(?:has|have)\s+(?:ever\s+)?owned\b",
    re.IGNORECASE,
)


class OwnershipPeriod(BaseModel):
    """The period a question asks the owners over: [start, end], end at most as_of."""

    model_config = ConfigDict(frozen=True)

    start: datetime | None  # None: since the first record (the whole history)
    end: datetime
    words: str  # the question's words that ask for it
    # How a named period's ends were placed ("2026-07-23T10:00:00Z to ...; no zone given:
    # read as UTC"); None for a whole history.
    placed: str | None = None

    @property
    def why(self) -> str:
        """`the question says '<words>'[: <placed>]`, as a claim says why."""
        said = f"the question says {self.words!r}"
        return f"{said}: {self.placed}" if self.placed else said

    def overlaps(self, ev: Evidence) -> bool:
        """Whether a record's valid interval holds some instant of the period."""
        return (ev.valid_from is None or ev.valid_from <= self.end) and (
            ev.valid_to is None or self.start is None or ev.valid_to > self.start
        )

    @property
    def bounds(self) -> tuple[datetime, datetime]:
        """(start, end) for the gate, the start of a whole history the earliest time."""
        return (self.start or EARLIEST, self.end)


def asked_ownership_period(question: str, as_of: datetime) -> OwnershipPeriod | None:
    """The period the question asks the owners over: a period it names ("between A and B",
    its end at most as_of; none when it starts after as_of), else its whole history up to
    as_of when it asks for one ("ownership history", "how did ownership change"), else None."""
    period = time_references(question, as_of).period
    if period is not None:
        start, end = period
        if start.at > as_of:
            return None  # not yet happened: the Time line says so, the answer is at as_of
        # What the readings add to the two instants ("no zone given", whose year), once.
        notes = [
            part
            for n in (start, end)
            for part in (n.reading or "").split("; ")
            if part and not part.startswith(("the start of the period", "the end of the period"))
        ]
        placed = f"{iso_utc(start.at)} to {iso_utc(end.at)}" + "".join(
            f"; {note}" for note in dict.fromkeys(notes)
        )
        return OwnershipPeriod(
            start=start.at,
            end=min(end.at, as_of),
            words=f"{start.words} {end.words}",
            placed=placed,
        )
    asked = HISTORY_WORDS.search(question)
    if asked is None:
        return None
    return OwnershipPeriod(start=None, end=as_of, words=asked.group(0))


def _owner(ev: Evidence) -> str:
    """The team of an OWNS record (`team:a OWNS svc:b`, as the templates state it)."""
    team = ev.context.get("team")
    return team if isinstance(team, str) else ev.content.split(" ", 1)[0]


def _owned(ev: Evidence) -> str:
    """What an OWNS record says is owned (its statement's last word)."""
    return ev.content.rsplit(" ", 1)[-1]


def history_steps(admitted: Sequence[Evidence]) -> list[PlanStep]:
    """One `version_history` read per admitted OWNS edge key with older records (sorted)."""
    keys = {
        ev.element_id
        for ev in admitted
        if "ownership" in ev.evidence_types and ev.kind == "relationship" and ev.version > 1
    }
    return version_history_steps(keys, "relationship")


# One read of every record of a service's OWNS edges (a single-time owner question).
RECORDS_TEMPLATE = "ownership_records"


def revised_services(rows: Sequence[Evidence]) -> set[str]:
    """The services of the OWNS records among `rows` that were superseded (version above 1):
    those whose older records can show a correction."""
    return {
        _owned(ev)
        for ev in rows
        if "ownership" in ev.evidence_types and ev.kind == "relationship" and ev.version > 1
    }


def records_steps(services: Iterable[str]) -> list[PlanStep]:
    """One `ownership_records` read per service (sorted)."""
    return [
        PlanStep(
            template_id=RECORDS_TEMPLATE,
            params={"service_id": service},
            evidence_type="ownership",
        )
        for service in sorted(set(services))
    ]


def whole_records(
    rows: Sequence[Sequence[Evidence]], calls: Sequence[ToolCallRecord]
) -> list[Evidence]:
    """The rows of the `ownership_records` reads, less those of a service whose read its row
    cap cut: a record missing from the chain could make a correction seem to be (no
    correction is said of it, as without the read)."""
    cut = {
        str(call.params["service_id"])
        for call in calls
        if call.template_id == RECORDS_TEMPLATE and call.truncated
    }
    return [ev for read in rows for ev in read if _owned(ev) not in cut]


def corrections_at(records: Sequence[Evidence], at: datetime) -> list[OwnershipCorrection]:
    """The corrections of who was recorded as the owner at the instant `at`, by what is
    owned and then oldest first (each record of the OWNS edges known at the run's known_at)."""
    return sorted(
        (
            c
            for c in ownership_corrections(records)
            if (c.start is None or c.start <= at) and at < c.end
        ),
        key=lambda c: (c.owned, c.corrected_at),
    )


# The template that reads the owners of a period (newest first, row-capped).
PERIOD_TEMPLATE = "ownership_in_period"


def cut_histories(calls: Sequence[ToolCallRecord]) -> list[tuple[str, int]]:
    """(service, rows read) of each service whose owners over the period were more than its
    read's row limit (a truncated `ownership_in_period` call), sorted; not when a read of
    all its OWNS records (`ownership_over_time`) held them all."""
    whole = {
        str(call.params["service_id"])
        for call in calls
        if call.template_id == "ownership_over_time" and not call.truncated and not call.error
    }
    return sorted(
        {
            (str(call.params["service_id"]), call.row_count)
            for call in calls
            if call.template_id == PERIOD_TEMPLATE
            and call.truncated
            and call.params["service_id"] not in whole
        }
    )


def history_cut_text(
    service: str, owners: Sequence[Evidence], period: OwnershipPeriod, read: int
) -> str:
    """What a history cut by the row cap lacks and how to ask for it. The period's records
    are read newest first (`read` of them), so the cut is the start of the oldest one read:
    those that start before it may be missing."""
    starts = sorted(
        (
            ev.valid_from
            for ev in owners
            if _owned(ev) == service and ev.valid_from is not None and period.overlaps(ev)
        ),
        reverse=True,
    )
    if not starts:
        return (
            f"the owners of {service} in the period are more than the {read} records read at "
            "once, and none read has a start: ask for a narrower period"
        )
    cut = iso_utc(starts[min(read, len(starts)) - 1])
    ask = (
        f"the same question with --as-of {cut}"
        if period.start is None
        else f"'between {iso_utc(period.start)} and {cut}'"
    )
    return (
        f"the owners of {service} in the period are more than the {read} records read at once "
        f"(newest first): the history is cut at {cut}, and owners before then may be missing; "
        f"ask for the rest with {ask}"
    )


class OwnershipCorrection(BaseModel):
    """Who was recorded as the owner for [start, end) before `corrected_at`, and since."""

    model_config = ConfigDict(frozen=True)

    owned: str
    corrected_at: datetime
    start: datetime | None  # None: from the earliest time
    end: datetime  # at most `corrected_at`: what was still to come then was no correction
    before: list[str]
    after: list[str]
    # The edge keys whose records held in that span, before or after: the claim's evidence.
    keys: list[str]


def _live(
    records: Sequence[tuple[Evidence, datetime | None]], at: datetime, *, just_before: bool
) -> list[Evidence]:
    """The active records current at transaction time `at` (or just before it)."""
    out = []
    for ev, superseded in records:
        if ev.status != "active" or ev.recorded_at is None:
            continue
        known = ev.recorded_at < at if just_before else ev.recorded_at <= at
        current = superseded is None or (superseded >= at if just_before else superseded > at)
        if known and current:
            out.append(ev)
    return out


def _holding(records: Sequence[Evidence], at: datetime) -> list[Evidence]:
    return [
        ev
        for ev in records
        if (ev.valid_from is None or ev.valid_from <= at)
        and (ev.valid_to is None or at < ev.valid_to)
    ]


def ownership_corrections(
    records: Sequence[Evidence], period: OwnershipPeriod | None = None
) -> list[OwnershipCorrection]:
    """The corrections the records of OWNS edges show (every record of each key known at
    the run's known_at: the current ones and those `version_history` read), sorted; only
    those about a span in `period` when given.

    At each time a record was written, the owners it left recorded for each earlier valid
    time are compared with those recorded just before: a span whose owners differ, and for
    which some owner was recorded before, was corrected then (a first record corrects
    nothing; a later span is a plan, not a correction).
    """
    by_key: dict[str, dict[int, Evidence]] = {}
    for ev in records:
        if "ownership" in ev.evidence_types or ev.type == "OWNS":
            by_key.setdefault(ev.element_id, {}).setdefault(ev.version, ev)
    by_owned: dict[str, list[tuple[Evidence, datetime | None]]] = {}
    for versions in by_key.values():
        chain = [versions[v] for v in sorted(versions)]
        for ev, newer in zip(chain, [*chain[1:], None], strict=True):
            superseded = newer.recorded_at if newer is not None else None
            by_owned.setdefault(_owned(ev), []).append((ev, superseded))
    out: list[OwnershipCorrection] = []
    for owned, timed in sorted(by_owned.items()):
        written = sorted({ev.recorded_at for ev, _ in timed if ev.recorded_at is not None})
        for at in written:
            before = _live(timed, at, just_before=True)
            after = _live(timed, at, just_before=False)
            if not before:
                continue  # the first record of who owns it: learned, not corrected
            cuts = {EARLIEST, at}
            for ev in (*before, *after):
                cuts |= {t for t in (ev.valid_from, ev.valid_to) if t is not None and t < at}
            edges = sorted(cuts)
            spans: list[OwnershipCorrection] = []
            for start, end in itertools.pairwise(edges):
                was, now = _holding(before, start), _holding(after, start)
                was_teams, now_teams = (
                    sorted({_owner(e) for e in was}),
                    sorted({_owner(e) for e in now}),
                )
                if was_teams == now_teams or not was_teams:
                    continue
                keys = sorted({e.element_id for e in (*was, *now)})
                last = spans[-1] if spans else None
                # One span cut in two by the end of a record that did not change: merged.
                if last is not None and (last.end, last.before, last.after) == (
                    start,
                    was_teams,
                    now_teams,
                ):
                    merged = sorted({*last.keys, *keys})
                    spans[-1] = last.model_copy(update={"end": end, "keys": merged})
                    continue
                spans.append(
                    OwnershipCorrection(
                        owned=owned,
                        corrected_at=at,
                        start=None if start == EARLIEST else start,
                        end=end,
                        before=was_teams,
                        after=now_teams,
                        keys=keys,
                    )
                )
            out += spans
    if period is not None:
        out = [c for c in out if _span_in(c, period)]
    return sorted(out, key=lambda c: (c.owned, c.start or EARLIEST, c.corrected_at))


def _span_in(c: OwnershipCorrection, period: OwnershipPeriod) -> bool:
    return (c.start is None or c.start <= period.end) and (
        period.start is None or c.end > period.start
    )
