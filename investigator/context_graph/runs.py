"""`investigator runs`: the most recent recorded runs, newest first; and the latest known_at
a tenant's runs saw, which an ingest may not date records into."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import neo4j

from graph_schema.canonical import iso_utc_fixed
from graph_schema.record_floor import RecordFloor
from investigator.context_graph.audit import (
    PURGE_QUESTION,
    WITHHELD_TEXT,
    RunReader,
    own_run,
    purged_element,
    unreadable_ids,
)
from investigator.context_graph.incarnation import holder_note, read_incarnations
from investigator.context_graph.ledger import chain_key_for_reading, verify_runs_in_tx
from investigator.context_graph.lineage import UnknownRun
from investigator.context_graph.models import RunSummary
from investigator.context_graph.run_times import run_times
from investigator.defaults import RUNS_AUDIT_CHECKED, RUNS_MAX_LIMIT
from investigator.errors import BadInput
from investigator.timeline import instant_of

MAX_LIMIT = RUNS_MAX_LIMIT

# Only the reader's tenant, and only its own runs unless it reads under `audit` ($all): of
# its id and its incarnation (a run without one: started once it began, incarnation.py).
_RECENT_RUNS = (
    "MATCH (r:CtxRun) WHERE r.tenant = $tenant AND ($all OR (r.subject_id = $subject_id "
    "AND (r.subject_incarnation = $incarnation OR (r.subject_incarnation IS NULL "
    "AND ($began IS NULL OR r.started_at >= $began))))) "
    "WITH r ORDER BY r.started_at DESC, r.run_id LIMIT $limit "
    "OPTIONAL MATCH (o:CtxOutcome {run_id: r.run_id}) "
    # One row per run, with its last outcome: runs recorded before a cut-off finish was taken
    # back can hold two (`evidence_sufficient`, then the Ctrl-C's `error`).
    "WITH r, o ORDER BY o.seq DESC "
    "WITH r, collect(o.stop_reason)[0] AS stop_reason "
    "RETURN properties(r) AS run, stop_reason "
    "ORDER BY r.started_at DESC, r.run_id"
)


# How many of the reader's runs a partial id names ("yours starting with it: ...").
STARTING_WITH_SHOWN = 3
# The reader's runs (as `runs` lists them: its own, its tenant's under audit) whose id starts
# with what was typed, newest first (the index of the ctx_run_id constraint serves the prefix).
_RUNS_STARTING_WITH = (
    "MATCH (r:CtxRun) WHERE r.run_id STARTS WITH $prefix AND r.tenant = $tenant "
    "AND ($all OR (r.subject_id = $subject_id "
    "AND (r.subject_incarnation = $incarnation OR (r.subject_incarnation IS NULL "
    "AND ($began IS NULL OR r.started_at >= $began))))) "
    "RETURN r.run_id AS run_id ORDER BY r.started_at DESC, r.run_id LIMIT $limit"
)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _times(run: dict[str, Any], question: str | None) -> dict[str, Any]:
    """A listed run's times, where each came from, and its phrase (run_times.py). A run
    whose question is withheld from the reader (a purge run's) shows no time note: the
    note quotes the question."""
    times = run_times(run)
    if question != run.get("question"):
        times = times.model_copy(update={"time_note": None, "as_of_words": None})
    fields = times.model_dump()
    # `runs` prints known_at only when it was given (else it is the start, on the line).
    phrase = times.as_of_phrase()
    if times.known_at_from != "now":
        phrase += ", " + times.known_at_phrase()
    return {**fields, "times": phrase}


def _hidden_purges(
    driver: neo4j.Driver, reader: RunReader, runs: list[dict[str, Any]], database: str | None
) -> set[str]:
    """The ids of the purge runs whose purged record `reader` may not read now: the record a
    purge names is shown only to a reader who may read it (under the reader's purpose, else
    the run's, as `trace` reads it). One read per tenant and purpose among them."""
    purges: dict[tuple[str, str | None], dict[str, str]] = {}
    for run in runs:
        purged = purged_element(run)
        # The purger typed the id: its own purge runs show it back, never more.
        if purged is not None and not own_run(reader, run):
            key = (_str(run.get("tenant")) or "", reader.purpose or _str(run.get("purpose")))
            purges.setdefault(key, {})[str(run.get("run_id"))] = purged
    hidden: set[str] = set()
    for (tenant, purpose), by_run in sorted(purges.items(), key=lambda kv: str(kv[0])):
        as_reader = reader.model_copy(update={"purpose": purpose})
        unreadable = unreadable_ids(driver, as_reader, tenant, by_run.values(), database)
        hidden.update(run_id for run_id, purged in by_run.items() if purged in unreadable)
    return hidden


def _verify_runs(
    driver: neo4j.Driver, tenant: str, run_ids: list[str], database: str | None
) -> dict[str, str | None]:
    """Each listed run checked as `verify RUN` checks it (chain and anchor): its first
    problem, or None when it verifies. About four reads for them all, in one transaction."""
    if not run_ids:
        return {}
    key = chain_key_for_reading()
    with driver.session(database=database, default_access_mode=neo4j.READ_ACCESS) as session:
        reports = session.execute_read(verify_runs_in_tx, run_ids, tenant, key)
    return {
        run_id: report.problems[0].line() if report.problems else None
        for run_id, report in reports.items()
    }


def list_runs(
    driver: neo4j.Driver,
    reader: RunReader,
    limit: int = 20,
    database: str | None = None,
) -> list[RunSummary]:
    """The `limit` most recent runs (1..1000) `reader` may see: its own, or its tenant's
    under `audit`; never another tenant's."""
    if not 1 <= limit <= MAX_LIMIT:
        raise BadInput(f"--limit must be between 1 and {MAX_LIMIT}, got {limit}")
    records, _, _ = driver.execute_query(
        _RECENT_RUNS,
        **_reader_parameters(reader),
        limit=limit,
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    runs = [dict(rec["run"]) for rec in records]
    hidden = _hidden_purges(driver, reader, runs, database)
    # Only the auditor's listing is checked (everyday `runs` of one's own stays one read), and
    # only its newest RUNS_AUDIT_CHECKED runs: the rest are `verified: None`, as unchecked.
    listed = [str(r.get("run_id")) for r in runs][:RUNS_AUDIT_CHECKED]
    tenant = reader.principal.tenant
    checked = _verify_runs(driver, tenant, listed, database) if reader.audits else {}
    # An auditor is told which holder of an id each run's subject was (one read).
    holders = (
        read_incarnations(driver, tenant, {str(r.get("subject_id")) for r in runs}, database)
        if reader.audits
        else {}
    )
    summaries = []
    for rec, run in zip(records, runs, strict=True):
        run_id = str(run.get("run_id"))
        head_seq = run.get("head_seq")
        question = _str(run.get("question"))
        if str(run.get("run_id")) in hidden:
            question = PURGE_QUESTION + WITHHELD_TEXT
        summaries.append(
            RunSummary(
                run_id=str(run.get("run_id")),
                status=str(run.get("status", "unknown")),
                command=_str(run.get("command")),
                question=question,
                tenant=_str(run.get("tenant")),
                subject_id=_str(run.get("subject_id")),
                purpose=_str(run.get("purpose")),
                service=_str(run.get("service")),
                started_at=_str(run.get("started_at")),
                **_times(run, question),
                stop_reason=_str(rec["stop_reason"]),
                node_count=head_seq + 1 if isinstance(head_seq, int) else 0,
                verified=None if run_id not in checked else checked[run_id] is None,
                verify_problem=checked.get(run_id),
                subject_note=holder_note(run, holders.get(str(run.get("subject_id")), [])),
            )
        )
    return summaries


# A refused run that made no tool call (an unknown subject, a purpose it does not hold) read
# nothing of the KG: no record dated into its known_at changes what it saw.
_READ_THE_KG = (
    "NOT (r.status = 'refused' AND NOT EXISTS { MATCH (c:CtxToolCall {run_id: r.run_id}) })"
)
# Per tenant, its recorded run with the latest known_at: an index seek each
# (`ctx_run_tenant_known`), never another tenant's runs.
_LATEST_KNOWN_AT = (
    "UNWIND $tenants AS t "
    "CALL (t) { MATCH (r:CtxRun {tenant: t}) WHERE r.known_at IS NOT NULL "
    f"AND {_READ_THE_KG} "
    "RETURN r ORDER BY r.known_at DESC LIMIT 1 } "
    "RETURN t AS tenant, r.run_id AS run_id, r.known_at AS known_at"
)


def run_floors(
    driver: neo4j.Driver, tenants: Iterable[str], database: str | None = None
) -> dict[str, RecordFloor]:
    """Per tenant, the latest known_at of its recorded runs: an ingest may not date a record
    at or before it (graph_schema/backdating.py). Tenants without runs are left out, and so
    are refused runs that made no tool call (they read nothing)."""
    wanted = sorted(set(tenants))
    if not wanted:
        return {}
    records, _, _ = driver.execute_query(
        _LATEST_KNOWN_AT, tenants=wanted, database_=database, routing_=neo4j.RoutingControl.READ
    )
    floors: dict[str, RecordFloor] = {}
    for row in records:
        at = instant_of(row["known_at"])
        if at is not None and isinstance(row["run_id"], str):
            floors[str(row["tenant"])] = RecordFloor(at=at, run_id=row["run_id"])
    return floors


_RUNS_KNOWN_SINCE = (
    "MATCH (r:CtxRun {tenant: $tenant}) WHERE r.known_at >= $since "
    f"AND {_READ_THE_KG} RETURN count(r) AS runs"
)


def runs_known_since(
    driver: neo4j.Driver, tenant: str, since: datetime, database: str | None = None
) -> int:
    """How many recorded runs of `tenant` saw the KG as known at `since` or later: the runs
    whose reads a record dated `since` (`ingest --backdate`) can change. One range seek of
    `ctx_run_tenant_known`; never another tenant's runs."""
    records, _, _ = driver.execute_query(
        _RUNS_KNOWN_SINCE,
        tenant=tenant,
        since=iso_utc_fixed(since),  # runs record known_at as this sortable text
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    return int(records[0]["runs"]) if records else 0


def is_whole_run_id(text: str) -> bool:
    """Whether `text` is shaped as a run id: `run-` and 32 hex digits (a uuid4, as the
    recorder and the session make them)."""
    return (
        len(text) == 36
        and text.startswith("run-")
        and all(c in "0123456789abcdef" for c in text[4:])
    )


def _reader_parameters(reader: RunReader) -> dict[str, Any]:
    """Whose runs `reader` lists: its tenant, its id and incarnation, or all (audit)."""
    began = reader.principal.incarnation_began
    return {
        "tenant": reader.principal.tenant,
        "subject_id": reader.principal.id,
        "incarnation": reader.principal.incarnation,
        # Runs record started_at as this sortable text.
        "began": iso_utc_fixed(began) if began is not None else None,
        "all": reader.audits,
    }


def unknown_run(
    driver: neo4j.Driver, reader: RunReader, run_id: str, database: str | None = None
) -> UnknownRun:
    """The `unknown run R` error for `reader`. An id that is not whole (`run-a06a2c1b`, a
    pasted part) says that run ids are whole and which of the reader's own runs (its tenant's
    under audit: what `runs` lists it) start with it, newest first: the line depends on the
    reader's runs and the text typed only, so another tenant's run is still answered exactly
    like an id never recorded. A whole id: the line as it was."""
    if is_whole_run_id(run_id):
        return UnknownRun(run_id)
    typed = run_id.lower()
    prefix = typed if typed.startswith("run-") else "run-" + typed
    records, _, _ = driver.execute_query(
        _RUNS_STARTING_WITH,
        prefix=prefix,
        limit=STARTING_WITH_SHOWN + 1,
        **_reader_parameters(reader),
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    found = [str(r["run_id"]) for r in records]
    yours = "your tenant's runs" if reader.audits else "your runs"
    # Typed in capitals (`RUN-54298D42`, a whole id too): the runs are named as written.
    whole = "run ids are whole (run- and 32 hex digits)"
    if typed != run_id:
        whole = "run ids are whole and lower-case (run- and 32 hex digits)"
    if not found:
        return UnknownRun(
            run_id, f": {whole}; none of {yours} starts with it (investigator runs lists them)"
        )
    shown = ", ".join(found[:STARTING_WITH_SHOWN])
    more = ", and more (investigator runs lists them)" if len(found) > STARTING_WITH_SHOWN else ""
    return UnknownRun(run_id, f": {whole}; {yours} starting with it: {shown}{more}")
