"""Which holder of a principal id a run belongs to (its incarnation).

An id can name several people over time: `user:frank` retracted, then written again for
someone else. Each holder is an incarnation of the id: 1, then one more each time the id is
written again after a retraction (a new version for changed grants is the same holder). A run
records its subject's incarnation (`CtxRun.subject_incarnation`); a run recorded before runs
did has none, and belongs to the holder whose first record was recorded at or before the run
started (so one that started before the id's latest retraction is an earlier holder's).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import neo4j
from pydantic import BaseModel, ConfigDict

from cypher_templates.subject import PrincipalRecord
from investigator.timeline import instant_of

# Every record of each id, oldest first: its incarnations follow from the tombstones.
_PRINCIPAL_RECORDS = (
    "UNWIND $ids AS id MATCH (p:KG:Principal {tenant: $tenant, id: id}) "
    "RETURN p.id AS id, p.version AS version, p.status AS status, "
    "p.recorded_at AS recorded_at, p.retracted_at AS retracted_at ORDER BY id, version"
)


class Incarnation(BaseModel):
    """One holder of a principal id: its number, when its first record was recorded (None
    for the first holder), and when it was retracted (None while it holds the id)."""

    model_config = ConfigDict(frozen=True)

    number: int
    began: datetime | None = None
    retracted_at: datetime | None = None


def _instant(value: Any) -> datetime | None:
    native = value.to_native() if hasattr(value, "to_native") else value
    return native if isinstance(native, datetime) else instant_of(native)


def read_incarnations(
    driver: neo4j.Driver, tenant: str, ids: Iterable[str], database: str | None = None
) -> dict[str, list[Incarnation]]:
    """Per principal id of `tenant`, its incarnations, oldest first (one read)."""
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    records, _, _ = driver.execute_query(
        _PRINCIPAL_RECORDS,
        tenant=tenant,
        ids=wanted,
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    found: dict[str, list[Incarnation]] = {}
    tombstone_at: dict[str, datetime | None] = {}
    for row in records:
        pid, recorded = str(row["id"]), _instant(row["recorded_at"])
        held = found.setdefault(pid, [])
        if row["status"] == "retracted":
            if held and held[-1].retracted_at is None:
                at = _instant(row["retracted_at"]) or recorded
                held[-1] = held[-1].model_copy(update={"retracted_at": at})
            tombstone_at[pid] = recorded
        elif not held or held[-1].retracted_at is not None:
            # A new holder: written after a retraction (or the first record of the id).
            times = [t for t in (recorded, tombstone_at.get(pid)) if t is not None]
            began = max(times) if held and times else None
            held.append(Incarnation(number=len(held) + 1, began=began))
    return found


def run_incarnation(run: Mapping[str, Any], incarnations: list[Incarnation]) -> int | None:
    """The incarnation `run` belongs to: the one it recorded, else the last that began at or
    before the run started (the first when it never was retracted); None when unknown."""
    recorded = run.get("subject_incarnation")
    if isinstance(recorded, int) and not isinstance(recorded, bool):
        return recorded
    started = instant_of(run.get("started_at"))
    number = None
    for inc in incarnations:
        if inc.began is None or (started is not None and started >= inc.began):
            number = inc.number
    return number


def belongs_to(principal: PrincipalRecord, run: Mapping[str, Any]) -> bool:
    """Whether `run` was recorded for `principal` as it is now: its tenant, its id and its
    incarnation (a run without one: started once this holder's first record was recorded)."""
    if run.get("tenant") != principal.tenant or run.get("subject_id") != principal.id:
        return False
    recorded = run.get("subject_incarnation")
    if isinstance(recorded, int) and not isinstance(recorded, bool):
        return recorded == principal.incarnation
    if principal.incarnation_began is None:
        return True
    started = instant_of(run.get("started_at"))
    return started is not None and started >= principal.incarnation_began


def _shown(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def holder_note(run: Mapping[str, Any], incarnations: list[Incarnation]) -> str | None:
    """For an auditor: which holder of its id a run's subject was, when that holder was
    retracted (`retracted 2026-12-05T06:40:00Z; an earlier principal of this id`); None for
    the id's current holder."""
    number = run_incarnation(run, incarnations)
    held = {inc.number: inc for inc in incarnations}
    inc = held.get(number) if number is not None else None
    if inc is None:
        return "an earlier principal of this id" if len(incarnations) > 1 else None
    if inc.retracted_at is None:
        return None
    later = "; an earlier principal of this id" if number != incarnations[-1].number else ""
    return f"retracted {_shown(inc.retracted_at)}{later}"
