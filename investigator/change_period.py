"""What a change question's window reads left out: a read of releases or change events cut
at its row cap (over the period asked, the window before the first error where the competing
causes are read, or the earliest releases of "the first release"), and a period's releases
not read (the run stopped before it read them). A team's OWNS reads cut at their row caps
(what it owned, every record of it: "what did team X own?") are told the same way.

The window templates read `LIMIT row_cap + 1` rows the subject may read (tenant, ACL and
purpose in Cypher): a read cut there says "more than N", never a count of the rest, so no
row the subject may not read is counted (docs/security.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, Field

from graph_schema.canonical import iso_utc
from investigator.context_graph.models import ToolCallRecord
from investigator.ownership_history import TEAM_OWNS_TEMPLATE, TEAM_RECORDS_TEMPLATE
from investigator.rubric import Intent
from investigator.timeline import (
    AROUND_WORDS,
    BEFORE_EVENT,
    CONFOUNDER_WINDOW,
    DAY_READING,
    EARLIEST,
    EPISODE,
    AnchorEvent,
    EventSide,
    NamedTime,
    ReferenceTime,
    TimeReferences,
    amount_text,
    shift,
    time_references,
)

RELEASES_TEMPLATE = "deployments_in_window"
# With no service named: the releases of every service the subject may read in the period.
TENANT_RELEASES_TEMPLATE = "deployments_in_window_tenant"
_RELEASE_TEMPLATES = (RELEASES_TEMPLATE, TENANT_RELEASES_TEMPLATE)
CHANGES_TEMPLATE = "change_events_in_window"
# The retractions of DEPENDS_ON and OWNS records recorded in the period (session 34).
RETRACTIONS_TEMPLATE = "retractions_in_period"
ROLLOUTS_TEMPLATE = "rollouts_under_way"
# With no service named: the releases of every service the subject may read rolling out then.
TENANT_ROLLOUTS_TEMPLATE = "rollouts_under_way_tenant"
_ROLLOUT_TEMPLATES = (ROLLOUTS_TEMPLATE, TENANT_ROLLOUTS_TEMPLATE)


class WindowCut(BaseModel):
    """One window read cut at its row cap: its rows past the cap were not read."""

    template_id: str
    service_id: str | None
    start: str
    end: str
    read: int
    # What the read was for: the period asked, the window before the first error (the
    # competing causes), the earliest releases ("the first release"), or a team's OWNS
    # edges read from its side (`service_id` is then the team's id).
    purpose: Literal["period", "causes", "first_release", "team"] = "period"
    # The read failed (a query timed out, Neo4j refused it): none of its rows were read.
    failed: bool = False

    def description(self) -> str:
        """The required gap's text: what was cut, where, and how to ask for the rest."""
        if self.failed:
            scope = f" of {self.service_id}" if self.service_id else ""
            return (
                f"unknown, not absent: which releases{scope} were rolling out at the end of "
                f"the period ({self.end}): the read of them ({self.template_id}) failed (see "
                "its tool calls: a query timed out or Neo4j refused it), so none is said under "
                "way; ask again"
            )
        if self.purpose == "causes":
            return self._causes_description()
        if self.purpose == "team":
            return self._team_description()
        if self.purpose == "first_release":
            return (
                f"more than {self.read} releases of {self.service_id} by {self.end}: one read "
                f"holds {self.read}, the rest were not read, so the first release is the "
                "earliest of those read, not certainly the first recorded"
            )
        span = f"from {self.start} to {self.end}"
        if self.template_id in _ROLLOUT_TEMPLATES:
            scope = f" of {self.service_id}" if self.service_id else ""
            return (
                f"more than {self.read} releases{scope} rolling out at the end of the period "
                f"({self.end}): one read holds {self.read}, the rest were not read, so the "
                "releases said under way are not all of them; narrow the period or ask at an "
                "earlier time"
            )
        if self.template_id == TENANT_RELEASES_TEMPLATE:
            what = f"more than {self.read} releases {span}"
            ask = " or name the service ('what changed on <name> ...')"
        elif self.template_id == RELEASES_TEMPLATE:
            what = f"more than {self.read} releases of {self.service_id} {span}"
            ask = f" or ask for the latest releases of {self.service_id}"
        elif self.template_id == RETRACTIONS_TEMPLATE:
            scope = f" of the edges of {self.service_id}" if self.service_id else ""
            what = (
                f"more than {self.read} retractions of dependency and owner records{scope} "
                f"{span} (the oldest read)"
            )
            ask = ""
        else:
            scope = f" of {self.service_id}" if self.service_id else ""
            what = f"more than {self.read} change events{scope} {span}"
            ask = ""
        return (
            f"{what}: one read holds {self.read}, the rest were not read, so the list is not "
            f"all of them; narrow the period (e.g. 'in the last 24 hours', 'between A and "
            f"B'){ask}"
        )

    def _team_description(self) -> str:
        if self.template_id == TEAM_RECORDS_TEMPLATE:
            return (
                f"more than {self.read} records of the OWNS edges of {self.service_id} known "
                f"at {self.end}: one read holds {self.read}, the rest were not read, so the "
                "list is not complete: which of its records were retracted or corrected is "
                "not told"
            )
        return (
            f"more than {self.read} OWNS records of {self.service_id} up to {self.end} "
            f"(newest first): one read holds {self.read}, the rest were not read, so the list "
            "of what it owned is not complete; ask over a narrower period ('between A and "
            "B')"
        )

    def _causes_description(self) -> str:
        if self.template_id == ROLLOUTS_TEMPLATE:
            what = (
                f"more than {self.read} releases of {self.service_id} rolling out at the "
                f"first error ({self.end})"
            )
        else:
            span = _duration(datetime.fromisoformat(self.end) - datetime.fromisoformat(self.start))
            kind = (
                f"releases of {self.service_id}"
                if self.template_id == RELEASES_TEMPLATE
                else "change events"
            )
            what = (
                f"more than {self.read} {kind} in the {span} before the first error "
                f"({self.start} to {self.end})"
            )
        return (
            f"{what}: one read holds {self.read}, the rest were not read, so the candidate "
            "causes listed are not all of them; no verdict between them"
        )


class CausesDropped(BaseModel):
    """Releases or change events of the window before the first error that were read but
    left out of the answer for the evidence budget (each of them a competing cause). Those
    nearest the first error are kept (gate.EvidenceGate._fit_cause, pack.build_pack)."""

    evidence_type: Literal["deployment_time", "change_event"]
    shown: int
    dropped: int
    start: str
    end: str
    # Those left out, nearest the first error first (element ids; at most `_NAMED` are said).
    dropped_ids: list[str] = Field(default_factory=list)
    # When the nearest and the farthest of them took effect.
    nearest_at: str | None = None
    farthest_at: str | None = None
    # Every one left out is farther from the first error than every one shown (a release
    # the question names aside).
    farthest: bool = False

    def description(self) -> str:
        """The required gap's text: how many were read, how many are shown, which were left
        out, how to see all."""
        kind = "releases" if self.evidence_type == "deployment_time" else "change events"
        span = _duration(datetime.fromisoformat(self.end) - datetime.fromisoformat(self.start))
        return (
            f"{self.shown + self.dropped} {kind} read in the {span} before the first error "
            f"({self.start} to {self.end}); {self.shown} in the evidence"
            + (" (the nearest to it)" if self.farthest and self.shown else "")
            + f", the other {self.dropped}{self._which()} did not fit the evidence budget "
            "(budget_exceeded), so the candidate causes listed are not all of them; no "
            "verdict between them; a larger --budget-tokens lists them"
        )

    def _which(self) -> str:
        if not self.dropped_ids:
            return ""
        named = ", ".join(self.dropped_ids[:_NAMED])
        more = len(self.dropped_ids) - _NAMED
        named += f" and {more} more" if more > 0 else ""
        if self.nearest_at is None or self.farthest_at is None:
            when = ""
        elif self.nearest_at == self.farthest_at:
            when = f"at {self.nearest_at}: "
        else:
            when = f"from {self.farthest_at} to {self.nearest_at}: "
        farthest = "the farthest from it, " if self.farthest and self.shown else ""
        return f" ({farthest}{when}{named})"


# How many of the competing causes left out a gap names.
_NAMED = 5


def causes_dropped(
    window: tuple[datetime, datetime] | None,
    shown: Sequence[tuple[str, str, datetime | None]],
    dropped: Mapping[str, tuple[str, datetime | None]],
    named: Iterable[str] = (),
    change_window: tuple[datetime, datetime] | None = None,
) -> list[CausesDropped]:
    """Per evidence type with candidates of the cause `window` dropped for the budget
    (`dropped`: element id -> (type, when it took effect)), how many were shown (`shown`:
    (element id, type, when) of those in the answer) and which were left out, sorted by
    type. `named`: the releases the question names (kept whatever their distance).
    `change_window`: the window the change events were read in (the 30 min before the
    first error; `window` is the releases'): each kind's gap says its own span, from the
    earliest of them counted when one lies before it."""
    shown_ids = {i for i, _, _ in shown}
    # One dropped in a round and admitted in a later one is shown.
    left_out = {i: v for i, v in dropped.items() if i not in shown_ids}
    if window is None or not left_out:
        return []
    end = iso_utc(window[1])
    kept_out = set(named)

    def span_start(kind: str) -> str:
        if kind == "deployment_time" or change_window is None:
            return iso_utc(window[0])
        counted = [at for _, k, at in shown if k == kind and at is not None]
        counted += [at for k, at in left_out.values() if k == kind and at is not None]
        return iso_utc(min([change_window[0], *counted]))

    def distance(item: tuple[str, datetime | None]) -> tuple[timedelta, str]:
        return window[1] - (item[1] or window[0]), item[0]

    out: list[CausesDropped] = []
    for kind in ("change_event", "deployment_time"):
        gone = sorted(((i, at) for i, (k, at) in left_out.items() if k == kind), key=distance)
        if not gone:
            continue
        here = [(i, at) for i, k, at in shown if k == kind]
        nearest_gone = distance(gone[0])
        times = [at for _, at in gone if at is not None]
        out.append(
            CausesDropped(
                evidence_type=kind,
                shown=len({i for i, _ in here}),
                dropped=len(gone),
                start=span_start(kind),
                end=end,
                dropped_ids=[i for i, _ in gone],
                nearest_at=iso_utc(max(times)) if times else None,
                farthest_at=iso_utc(min(times)) if times else None,
                farthest=all(distance(h) < nearest_gone for h in here if h[0] not in kept_out),
            )
        )
    return out


def _duration(span: timedelta) -> str:
    minutes = int(span.total_seconds()) // 60
    return f"{minutes // 60} h" if minutes % 60 == 0 else f"{minutes} min"


def cut_window_reads(
    calls: Sequence[ToolCallRecord], period: tuple[datetime, datetime] | None
) -> list[WindowCut]:
    """Each read of releases, change events or retractions over the period asked that hit
    its row cap, and each read of the releases rolling out at its end that did, sorted
    (reads of other windows are `cut_cause_reads` and `cut_first_release_reads`)."""
    if period is None:
        return []
    return _cuts(
        call
        for call in calls
        if (
            call.template_id in (*_RELEASE_TEMPLATES, CHANGES_TEMPLATE, RETRACTIONS_TEMPLATE)
            and _window(call) == period
        )
        or (call.template_id in _ROLLOUT_TEMPLATES and _instant(call, "at") == period[1])
    )


def cut_timeline_reads(calls: Sequence[ToolCallRecord]) -> list[WindowCut]:
    """Each read of releases or change events a timeline made that hit its row cap: the
    timeline lists every event of its window, so a cut read is a gap, sorted."""
    return _cuts(
        call for call in calls if call.template_id in (*_RELEASE_TEMPLATES, CHANGES_TEMPLATE)
    )


def failed_period_rollouts(
    calls: Sequence[ToolCallRecord], period: tuple[datetime, datetime] | None
) -> list[WindowCut]:
    """Each read of the releases rolling out at the end of the period asked that failed:
    what it was to read is unknown, never absent, whatever the period's other reads found."""
    if period is None:
        return []
    return sorted(
        {
            (call.template_id, str(call.params.get("service_id") or "")): WindowCut(
                template_id=call.template_id,
                service_id=str(call.params["service_id"])
                if call.params.get("service_id")
                else None,
                start=iso_utc(period[0]),
                end=iso_utc(period[1]),
                read=0,
                failed=True,
            )
            for call in calls
            if call.template_id in _ROLLOUT_TEMPLATES
            and call.error
            and _instant(call, "at") == period[1]
        }.values(),
        key=lambda c: (c.template_id, c.service_id or ""),
    )


def cut_cause_reads(
    calls: Sequence[ToolCallRecord], first_seen: datetime | None
) -> list[WindowCut]:
    """Each read of the window before the first error (the competing causes: releases and
    change events ending at it, releases rolling out at it) that hit its row cap, sorted."""
    if first_seen is None:
        return []
    return _cuts(
        (
            call
            for call in calls
            if (
                call.template_id in (RELEASES_TEMPLATE, CHANGES_TEMPLATE)
                and (window := _window(call)) is not None
                and window[0] < window[1] == first_seen
            )
            or (call.template_id == ROLLOUTS_TEMPLATE and _instant(call, "at") == first_seen)
        ),
        "causes",
    )


def cut_first_release_reads(calls: Sequence[ToolCallRecord]) -> list[WindowCut]:
    """Each read of a service's earliest releases ("before the first release": the window
    from the earliest instant) that hit its row cap, sorted."""
    return _cuts(
        (
            call
            for call in calls
            if call.template_id == RELEASES_TEMPLATE and _instant(call, "from") == EARLIEST
        ),
        "first_release",
    )


def cut_team_reads(calls: Sequence[ToolCallRecord]) -> list[WindowCut]:
    """Each read of a team's OWNS edges from its side (what it owned, `owned_by_team`; every
    record of them, `owned_by_team_records`) that hit its row cap, sorted."""
    cuts = {
        WindowCut(
            template_id=call.template_id,
            service_id=str(call.params["team_id"]),
            start=str(call.params.get("from") or ""),
            # Up to the period's end, else as_of; every record: as known at known_at.
            end=iso_utc(
                call.known_at
                if call.template_id == TEAM_RECORDS_TEMPLATE
                else _instant(call, "to") or call.as_of or call.known_at
            ),
            read=call.row_count,
            purpose="team",
        ).model_dump_json(): None
        for call in calls
        if call.template_id in (TEAM_OWNS_TEMPLATE, TEAM_RECORDS_TEMPLATE)
        and call.truncated
        and not call.error
    }
    return sorted(
        (WindowCut.model_validate_json(c) for c in cuts),
        key=lambda c: (c.service_id or "", c.template_id),
    )


def _cuts(
    calls: Iterable[ToolCallRecord],
    purpose: Literal["period", "causes", "first_release"] = "period",
) -> list[WindowCut]:
    """The calls that hit their row cap (and did not fail), one cut per read, sorted."""
    cuts = {
        WindowCut(
            template_id=call.template_id,
            service_id=str(call.params["service_id"]) if call.params.get("service_id") else None,
            start=str(call.params.get("from", call.params.get("at"))),
            end=str(call.params.get("to", call.params.get("at"))),
            read=call.row_count,
            purpose=purpose,
        ).model_dump_json(): None
        for call in calls
        if call.truncated and not call.error
    }
    return sorted(
        (WindowCut.model_validate_json(c) for c in cuts),
        key=lambda c: (c.template_id, c.service_id or "", c.start, c.end),
    )


def _instant(call: ToolCallRecord, key: str) -> datetime | None:
    value = call.params.get(key)
    return datetime.fromisoformat(value) if isinstance(value, str) else None


def _window(call: ToolCallRecord) -> tuple[datetime, datetime] | None:
    start, end = _instant(call, "from"), _instant(call, "to")
    if start is None or end is None:
        return None
    return start, end


def period_read(calls: Sequence[ToolCallRecord], period: tuple[datetime, datetime] | None) -> bool:
    """Whether a read of the period asked ran without error (its answer needs no first
    error)."""
    return period is not None and any(
        call.template_id in (*_RELEASE_TEMPLATES, CHANGES_TEMPLATE)
        and not call.error
        and _window(call) == period
        for call in calls
    )


def releases_read(calls: Sequence[ToolCallRecord]) -> bool:
    """Whether the run read releases in a window (one service's, or every readable one's)."""
    return any(call.template_id in _RELEASE_TEMPLATES for call in calls)


def asks_changes(intents: Iterable[Intent | str]) -> bool:
    """Whether a question lists what changed, or which releases there were, over a time it
    names (not a correlation or root-cause question: their window is the one before the
    first error). Its amount before or after an event is a period's length
    (`time_references(spans=True)`). A release lookup beside an owner, runbook or policy
    question is the state's ("Who owned X 30 minutes before the release?": an instant)."""
    wanted = {str(i) for i in intents}
    if {Intent.DEPLOYMENT_CORRELATION.value, Intent.ROOT_CAUSE.value} & wanted:
        return False
    states = {
        Intent.OWNERSHIP_AT_TIME.value,
        Intent.APPLICABLE_RUNBOOK.value,
        Intent.APPLICABLE_POLICY.value,
    }
    return Intent.CHANGE_HISTORY.value in wanted or (
        Intent.RELEASE_LOOKUP.value in wanted and not states & wanted
    )


# "What changed before the release?": the last release of each service asked about before
# it, and the other changes (every change event of the tenant) of this long before it.
LAST_CHANGES_LOOKBACK = EPISODE


class EventPeriod(BaseModel):
    """The period a change question's words before or after an event name, once the event
    is placed: "the day before the incident" (the 24 h before its start), "in the week
    before the incident", "in the hour after the release" (from it), "after the release" (to
    as_of). "Before the release" with no amount (`last_only`) asks for the last changes
    before it: the last release of each service asked about by `end`, and the other changes
    from `start` (`LAST_CHANGES_LOOKBACK` before `end`)."""

    start: datetime
    end: datetime
    words: str
    # The event as the Time line names it ("the start of incident X (2026-07-23T10:02:38Z)").
    event: str
    last_only: bool = False
    # The amount written ("1 d"), None for "before/after the release" alone.
    amount: str | None = None
    side: EventSide = EventSide.BEFORE
    # A release question ("what was deployed before release X?"): releases alone are read.
    releases_only: bool = False
    # "In the 2 hours after the release" asked before they were over: where the period the
    # words name ends, after as_of (it is read up to as_of, `end`).
    runs_to: datetime | None = None
    # A time written in the question, not an event ("since 2026-07-23T12:00:00Z", "on
    # 2026-07-22", "until 10:00 on July 23"; `written_change_period`): what the words were
    # read as, for the Time line ("from that time to as_of").
    written: str | None = None

    @property
    def bounds(self) -> tuple[datetime, datetime]:
        return self.start, self.end

    def named(self) -> tuple[NamedTime, NamedTime]:
        """Its two ends as a period written in the question ("between A and B")."""
        return (
            NamedTime(at=self.start, words=self.words, period_end="start"),
            NamedTime(at=self.end, words=self.words, period_end="end"),
        )

    def firing_note(self) -> str:
        """The Time line of an alert question: the period, and that its firings are listed
        (one begun before it and still firing in it too, said "firing since")."""
        how = self.written if self.written is not None else self.event
        return (
            f"{self.words!r} is taken as the period from {iso_utc(self.start)} to "
            f"{iso_utc(self.end)} ({how}): the answer lists the alert firings in it, and "
            'those begun before it still firing in it ("firing since" their start); none '
            "outside it"
        )

    def note(self, as_of: datetime) -> str:
        """The Time line: what the words were taken as, and what the answer lists."""
        span = f"from {iso_utc(self.start)} to {iso_utc(self.end)}"
        if self.last_only:
            others = (
                ""
                if self.releases_only
                else f", and the other changes {span} (the "
                f"{amount_text(LAST_CHANGES_LOOKBACK)} before it)"
            )
            upto = self.written if self.written is not None else f"1 s before {self.event}"
            return (
                f"{self.words!r} is taken as up to {iso_utc(self.end)}, {upto}: the answer "
                f"lists the last release of each service asked about by then{others}; none "
                "after it"
            )
        if self.written is not None:
            what = self.written
        elif self.amount is None:
            what = f"from 1 s after {self.event} to as_of {iso_utc(as_of)}"
        elif self.side is EventSide.BEFORE:
            what = f"the {self.amount} before {self.event}"
        else:
            what = f"the {self.amount} after {self.event}"
        listed = "releases" if self.releases_only else "changes"
        past = (
            ""
            if self.runs_to is None
            else f"; it runs to {iso_utc(self.runs_to)}, after as_of {iso_utc(as_of)}, so it is "
            "read up to as_of, which bounds what the answer may know. Give a later --as-of to "
            "read all of it"
        )
        return (
            f"{self.words!r} is taken as the period {span}, {what}: the answer lists the "
            f"{listed} in it, none outside it{past}"
        )


def event_change_period(
    intents: Iterable[Intent | str],
    question: str,
    as_of: datetime,
    references: Sequence[ReferenceTime],
    late: Sequence[ReferenceTime] = (),
) -> EventPeriod | None:
    """The period a change question's "before/after <event>" words name, once the event is
    placed (`references`: the run's, its `event` one); None for another question, a period
    written itself ("between A and B", "in the last hour": `asked_change_period`), "before
    the errors / the incident / the alert" with no amount (the window before the first
    error, as before), or an event not placed (the Time line says why). `late`: the event
    instant placed after as_of ("in the 2 hours after the release", asked an hour after it):
    a period after an event begun by as_of is read up to as_of, and says so."""
    wanted = {str(i) for i in intents}
    if not asks_changes(wanted):
        return None
    refs = time_references(question, as_of, spans=True)
    around = refs.event_words is not None and AROUND_WORDS.match(refs.event_words)
    if refs.period is None and refs.side is None and refs.event_words and around:
        # "What else changed around the release?": a window on both sides of it.
        return _around_period(
            refs.event_words,
            next((r for r in references if r.kind == "event"), None),
            as_of,
            releases_only=Intent.CHANGE_HISTORY.value not in wanted,
        )
    if refs.period is None and refs.side is None:
        # "since 2026-07-23T12:00:00Z", "on 2026-07-22": a time written, not an event.
        return written_change_period(
            refs, as_of, releases_only=Intent.CHANGE_HISTORY.value not in wanted
        )
    if refs.period is not None or refs.side is None or not refs.event_words:
        return None
    placed = next((r for r in references if r.kind == "event"), None)
    words, offset = refs.event_words, refs.offset
    if placed is None and offset is not None and refs.side is EventSide.AFTER:
        after = next((r for r in late if r.kind == "event"), None)
        if after is None or shift(shift(after.at, -offset), BEFORE_EVENT) > as_of:
            return None
        amount = amount_text(offset)
        return EventPeriod(
            start=shift(shift(after.at, -offset), BEFORE_EVENT),
            end=as_of,
            words=words,
            event=after.label.removeprefix(f"{amount} after "),
            amount=amount,
            side=EventSide.AFTER,
            releases_only=Intent.CHANGE_HISTORY.value not in wanted,
            runs_to=after.at,
        )
    if placed is None or placed.at > as_of:
        return None
    releases_only = Intent.CHANGE_HISTORY.value not in wanted
    if offset is None:
        if refs.side is EventSide.BEFORE and refs.event is not AnchorEvent.RELEASE:
            # "What changed before the errors / the incident?" keeps its window before the
            # first error (claims.changes._changes_before): the changes that could explain them.
            return None
        if refs.side is EventSide.BEFORE:
            # "before X": `placed.at` is 1 s before it.
            event = placed.label.removeprefix(f"{amount_text(BEFORE_EVENT)} before ")
            end = placed.at
            return EventPeriod(
                start=shift(end, -LAST_CHANGES_LOOKBACK),
                end=end,
                words=words,
                event=f"{event} ({iso_utc(shift(end, BEFORE_EVENT))})",
                last_only=True,
                releases_only=releases_only,
            )
        # "after the release": from just after it (it is no change after itself) to as_of.
        return EventPeriod(
            start=shift(placed.at, BEFORE_EVENT),
            end=as_of,
            words=words,
            event=f"{placed.label} ({iso_utc(placed.at)})",
            side=EventSide.AFTER,
            releases_only=releases_only,
        )
    # "two days before the alert": `placed.at` is that far from the event, whose label and
    # instant the placed label says ("2 d before the X alert (T)").
    amount = amount_text(offset)
    event = placed.label.removeprefix(f"{amount} {refs.side.value} ")
    if refs.side is EventSide.BEFORE:
        start, end = placed.at, shift(shift(placed.at, offset), -BEFORE_EVENT)
    else:
        start, end = shift(shift(placed.at, -offset), BEFORE_EVENT), min(placed.at, as_of)
    return EventPeriod(
        start=start,
        end=end,
        words=words,
        event=event,
        amount=amount,
        side=refs.side,
        releases_only=releases_only,
    )


def _around_period(
    words: str, placed: ReferenceTime | None, as_of: datetime, *, releases_only: bool
) -> EventPeriod | None:
    """ "Around the release / the incident": the `CONFOUNDER_WINDOW` on either side of the
    event once placed (the window the competing causes of the first error are read in), up
    to as_of at the latest (said); None when it is not placed by as_of."""
    if placed is None or placed.at > as_of:
        return None
    start = shift(placed.at, -CONFOUNDER_WINDOW)
    end = shift(placed.at, CONFOUNDER_WINDOW)
    width = amount_text(CONFOUNDER_WINDOW)
    return EventPeriod(
        start=start,
        end=min(end, as_of),
        words=words.strip(),
        event=f"{placed.label} ({iso_utc(placed.at)})",
        side=EventSide.AFTER,
        releases_only=releases_only,
        runs_to=end if end > as_of else None,
        written=f"the {width} on either side of {placed.label} ({iso_utc(placed.at)}), "
        f"the window other changes are read in as competing causes",
    )


# The words before a lone written time that make a change question's period of it.
_SINCE_WORDS = frozenset({"since", "from"})
_AFTER_WORDS = frozenset({"after", "following"})
_UNTIL_WORDS = frozenset({"before", "until", "till", "by"})
_DAY_WORDS = frozenset({"on", "during", "for"})


def written_change_period(
    refs: TimeReferences, as_of: datetime, *, releases_only: bool = False
) -> EventPeriod | None:
    """The period a change, release or firing question's one lone written time names, as
    "after the release" names one (`event_change_period`): "since T" from T to as_of,
    "after T" from 1 s after it (after a day: from the next day's start) to as_of, "on
    <day>" that UTC day (up to as_of when it holds as_of), "until/before T" the last changes
    up to it (`EventPeriod.last_only`: "before T" up to 1 s before it). None when the
    question names a period itself ("between A and B"), an event, no such time or several,
    or a time after as_of (the Time line says it is not used)."""
    if refs.period is not None or refs.side is not None:
        return None
    lone = [n for n in refs.named if n.period_end is None]
    written = lone[0].lead if len(lone) == 1 else None
    if not written:
        return None
    time = lone[0]
    lead = "before" if written.endswith("prior to") else written.split()[-1]
    if time.at > as_of:
        return None
    # How the time itself was read, when the words did not say it all ("no zone given"; a
    # day's start is said by the period itself).
    notes = [
        part.strip()
        for part in (time.reading or "").split(";")
        if part.strip() and part.strip() != DAY_READING
    ]
    read = f" ({'; '.join(notes)})" if notes else ""
    # "until 2026-07-23T10:00:00Z": its word is not part of the time's words.
    words = time.words if time.words.lower().startswith(lead) else f"{lead} {time.words}"
    if lead in _UNTIL_WORDS:
        # "before T": `time.at` is already 1 s before it (its reading says so).
        return EventPeriod(
            start=shift(time.at, -LAST_CHANGES_LOOKBACK),
            end=time.at,
            words=words,
            event=iso_utc(time.at),
            last_only=True,
            releases_only=releases_only,
            written=f"the time written{read}",
        )
    day = time.reading is not None and time.reading.startswith(DAY_READING)
    if lead in _DAY_WORDS and day:
        day_end = shift(time.at, timedelta(days=1) - BEFORE_EVENT)
        return EventPeriod(
            start=time.at,
            end=min(day_end, as_of),
            words=words,
            event=iso_utc(time.at),
            side=EventSide.AFTER,
            releases_only=releases_only,
            runs_to=day_end if day_end > as_of else None,
            written=f"that UTC day, from its 00:00:00 to its 23:59:59{read}",
        )
    if lead in _SINCE_WORDS:
        start, how = time.at, f"from that time, itself included, to as_of {iso_utc(as_of)}"
    elif lead in _AFTER_WORDS and not day and time.reading and "after a day" in time.reading:
        # "after 2026-07-23": `time.at` is already the day's end (the next day's start).
        start, how = time.at, f"from the end of that day to as_of {iso_utc(as_of)}"
    elif lead in _AFTER_WORDS:
        start = shift(time.at, BEFORE_EVENT)
        how = f"from 1 s after that time to as_of {iso_utc(as_of)}"
    else:
        return None
    if start > as_of:
        return None
    return EventPeriod(
        start=start,
        end=as_of,
        words=words,
        event=iso_utc(time.at),
        side=EventSide.AFTER,
        releases_only=releases_only,
        written=how + read,
    )


def lists_record_changes(intents: Sequence[Intent | str]) -> bool:
    """Whether a question asks what changed (not which releases, not what caused it): a
    service's owner handover, runbook version and own end in its period are changes then
    (`GatePolicy.record_changes`, planner.period_change_steps)."""
    wanted = {str(i) for i in intents}
    return Intent.CHANGE_HISTORY.value in wanted and not wanted & {
        Intent.DEPLOYMENT_CORRELATION.value,
        Intent.ROOT_CAUSE.value,
    }


def asked_change_period(
    intents: Sequence[Intent], question: str, as_of: datetime
) -> tuple[datetime, datetime] | None:
    """The period a change question reads itself ("since March", "in the last 24 hours";
    planner.period_change_steps), or a release question its releases, end at as_of at the
    latest; None for another question."""
    if not {Intent.CHANGE_HISTORY, Intent.RELEASE_LOOKUP} & set(intents) or {
        Intent.DEPLOYMENT_CORRELATION,
        Intent.ROOT_CAUSE,
    } & set(intents):
        return None
    period = time_references(question, as_of).period
    if period is None or period[0].at > as_of:
        return None
    return period[0].at, min(period[1].at, as_of)
