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


# The ids of `$tenant` whose current record is a retraction, with its recorded_at: written
# again, the new holder begins no earlier than it.
_RETRACTED_NOW = (
    "UNWIND $ids AS id MATCH (p:KG:Principal {tenant: $tenant, id: id}) "
    "WHERE p.status = 'retracted' AND p.superseded_at IS NULL "
    "RETURN p.id AS id, p.recorded_at AS recorded_at"
)
# Per id, its latest run recorded without an incarnation (it belongs by its start).
_LATEST_RUN_WITHOUT_INCARNATION = (
    "UNWIND $ids AS id CALL (id) { MATCH (r:CtxRun {tenant: $tenant, subject_id: id}) "
    "WHERE r.subject_incarnation IS NULL AND r.started_at IS NOT NULL "
    "RETURN r ORDER BY r.started_at DESC LIMIT 1 } "
    "RETURN id, r.run_id AS run_id, r.started_at AS started_at"
)


def runs_a_new_holder_would_take(
    driver: neo4j.Driver,
    tenant: str,
    dated: Mapping[str, datetime],
    kg_database: str | None = None,
    ctx_database: str | None = None,
) -> list[tuple[str, str]]:
    """(id, one line) per principal id of `tenant` that `dated` writes again (its current record
    is a retraction) with an explicit recorded_at that would make a run recorded without an
    incarnation, which only an earlier holder can have made (every such run started before
    this write), start after the new holder began: that holder would read it (`belongs_to`).
    Checked whatever `--backdate` says: a backdate dates records, never hands runs over."""
    if not dated:
        return []
    ids = sorted(dated)
    retracted, _, _ = driver.execute_query(
        _RETRACTED_NOW,
        tenant=tenant,
        ids=ids,
        database_=kg_database,
        routing_=neo4j.RoutingControl.READ,
    )
    tombstones = {str(r["id"]): _instant(r["recorded_at"]) for r in retracted}
    if not tombstones:
        return []
    runs, _, _ = driver.execute_query(
        _LATEST_RUN_WITHOUT_INCARNATION,
        tenant=tenant,
        ids=sorted(tombstones),
        database_=ctx_database,
        routing_=neo4j.RoutingControl.READ,
    )
    lines = []
    for row in runs:
        pid, started = str(row["id"]), instant_of(row["started_at"])
        at = dated[pid]
        tombstone = tombstones.get(pid)
        began = max(at, tombstone) if tombstone is not None else at
        if started is not None and started >= began:
            lines.append(
                (
                    pid,
                    f"principal {pid} would be written again recorded at {_shown(at)}, at or "
                    f"before run {row['run_id']} of an earlier principal of this id (started "
                    f"{_shown(started)}, recorded before runs carried their subject's "
                    "incarnation): the new principal would read that run",
                )
            )
    return lines
