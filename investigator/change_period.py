"""What a change question's window reads left out: a read of releases or change events cut
at its row cap, and a period's releases not read (the run stopped before it read them).

The window templates read `LIMIT row_cap + 1` rows the subject may read (tenant, ACL and
purpose in Cypher): a read cut there says "more than N", never a count of the rest, so no
row the subject may not read is counted (docs/security.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel

from investigator.context_graph.models import ToolCallRecord
from investigator.rubric import Intent
from investigator.timeline import time_references

RELEASES_TEMPLATE = "deployments_in_window"
# With no service named: the releases of every service the subject may read in the period.
TENANT_RELEASES_TEMPLATE = "deployments_in_window_tenant"
_RELEASE_TEMPLATES = (RELEASES_TEMPLATE, TENANT_RELEASES_TEMPLATE)
CHANGES_TEMPLATE = "change_events_in_window"


class WindowCut(BaseModel):
    """One window read cut at its row cap: its rows past the cap were not read."""

    template_id: str
    service_id: str | None
    start: str
    end: str
    read: int

    def description(self) -> str:
        """The required gap's text: what was cut, where, and how to ask for the rest."""
        span = f"from {self.start} to {self.end}"
        if self.template_id == TENANT_RELEASES_TEMPLATE:
            what = f"more than {self.read} releases {span}"
            ask = " or name the service ('what changed on <name> ...')"
        elif self.template_id == RELEASES_TEMPLATE:
            what = f"more than {self.read} releases of {self.service_id} {span}"
            ask = f" or ask for the latest releases of {self.service_id}"
        else:
            scope = f" of {self.service_id}" if self.service_id else ""
            what = f"more than {self.read} change events{scope} {span}"
            ask = ""
        return (
            f"{what}: one read holds {self.read}, the rest were not read, so the list is not "
            f"all of them; narrow the period (e.g. 'in the last 24 hours', 'between A and "
            f"B'){ask}"
        )


def cut_window_reads(
    calls: Sequence[ToolCallRecord], period: tuple[datetime, datetime] | None
) -> list[WindowCut]:
    """Each read of releases or change events over the period asked that hit its row cap,
    sorted (reads of other windows, the earliest releases of "the first release", are not a
    list of the period)."""
    if period is None:
        return []
    cuts = {
        WindowCut(
            template_id=call.template_id,
            service_id=str(call.params["service_id"]) if call.params.get("service_id") else None,
            start=str(call.params.get("from")),
            end=str(call.params.get("to")),
            read=call.row_count,
        ).model_dump_json(): None
        for call in calls
        if call.template_id in (*_RELEASE_TEMPLATES, CHANGES_TEMPLATE)
        and call.truncated
        and not call.error
        and _window(call) == period
    }
    return sorted(
        (WindowCut.model_validate_json(c) for c in cuts),
        key=lambda c: (c.template_id, c.service_id or "", c.start, c.end),
    )


def _window(call: ToolCallRecord) -> tuple[datetime, datetime] | None:
    start, end = call.params.get("from"), call.params.get("to")
    if not isinstance(start, str) or not isinstance(end, str):
        return None
    return datetime.fromisoformat(start), datetime.fromisoformat(end)


def releases_read(calls: Sequence[ToolCallRecord]) -> bool:
    """Whether the run read releases in a window (one service's, or every readable one's)."""
    return any(call.template_id in _RELEASE_TEMPLATES for call in calls)


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
