"""`investigator purge ID --tenant T --reason TEXT --subject ID [--json]`: a legal purge.

Removes the text of every record of ID in tenant T from the Knowledge Graph
(graph_schema/purge.py) and from the Context Graph's recorded lineage
(context_graph/purge.py), and records the purge as its own run (command `purge`, purpose
`legal`), anchored like every finished run. Chains still verify; replay reports the purged
runs as drift `data_purged`.

Who may purge: a principal of tenant T holding the purpose `legal` (read as of now), and
only an id whose every record in T its labels cover (the ACL of every version); a Principal
or Source id is never purged. Anyone else: exit 3, nothing written. An id the purger may not
see answers exactly like an id without records. Exit codes: 0 purged; 2 bad input (malformed
ID or reason: nothing written; no record ID in T the purger may see: only the refused
attempt is recorded, as a `refused` purge run alike for both); 3 not authorized; 4 Neo4j
unavailable.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import click
from pydantic import BaseModel

from graph_schema import ctrl_c
from graph_schema.purge import purge_content, record_count
from investigator.cli.subject import load_run_reader, subject_options, subject_ref_from
from investigator.connection import open_driver
from investigator.context_graph.audit import PURGE_QUESTION
from investigator.context_graph.models import RunRequest
from investigator.context_graph.purge import purge_lineage
from investigator.context_graph.recorder import RunRecorder, ctx_database_from_env
from investigator.errors import BadInput
from investigator.settings import resolve_connection

LEGAL_PURPOSE = "legal"
ID_MAX = 200
REASON_MAX = 500
# The outcome of a refused purge attempt (no record the purger may purge).
REFUSED_STOP = "no_record"


class PurgeOutcome(BaseModel):
    """What one purge did (printed, and kept as the purge run's recorded result)."""

    purge_run_id: str
    tenant: str
    element_id: str
    reason: str
    purged_at: datetime
    kg_records_purged: int
    ctx_runs: list[str]
    ctx_ids: list[str]


def _checked(flag: str, value: str, limit: int) -> str:
    if not value or len(value) > limit or not value.isprintable() or value.strip() != value:
        raise BadInput(f"{flag} must be 1..{limit} printable characters without surrounding spaces")
    return value


@click.command(name="purge")
@click.argument("element_id")
@click.option(
    "--reason",
    required=True,
    metavar="TEXT",
    help="Why (kept in the audit record, read by every auditor of the tenant: name the "
    "request, not the person).",
)
@subject_options
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document.")
def purge_command(
    element_id: str, reason: str, subject: str | None, tenant: str | None, json_out: bool
) -> None:
    """Legally purge the text of ELEMENT_ID in the subject's tenant, KG and lineage.

    Needs a subject of that tenant allowed the purpose `legal` whose labels cover the ACL
    of every record of ELEMENT_ID (an id it may not see is "no record", exit 2). Records
    stay (with their hashes); their text goes. The purge is recorded as its own run.

    Exit codes: 0 purged (or nothing left to purge); 2 bad input (a malformed ELEMENT_ID or
    reason, a --subject of another tenant than --tenant), or no record ELEMENT_ID you may
    see; 3 a subject not allowed the purpose `legal` in the tenant; 4 Neo4j unavailable.

    \b
    Example:
      investigator purge doc:postmortem-2026-07-23-payments --tenant acme \\
          --subject user:counsel --reason "GDPR erasure request 2026-118"
    """
    _checked("ELEMENT_ID", element_id, ID_MAX)
    _checked("--reason", reason, REASON_MAX)
    ref = subject_ref_from(subject, tenant)
    settings = resolve_connection()
    driver = open_driver(settings)
    ctx_database = ctx_database_from_env(settings.database)
    try:
        # Authorize and check before writing anything. An id the purger's labels do not
        # cover (or a Principal or Source id) answers exactly like an id with no record.
        purger = load_run_reader(driver, settings.database, ref, LEGAL_PURPOSE)
        granted = purger.principal.labels
        recorder = RunRecorder(driver, database=ctx_database)
        at = datetime.now(UTC)
        request = RunRequest(
            command="purge",
            question=PURGE_QUESTION + element_id,
            subject_id=str(ref),
            purpose=LEGAL_PURPOSE,
            as_of=at,
            as_of_from="now",  # a purge acts now: no time is asked of it
            known_at=at,
            options={"element_id": element_id, "reason": reason},
        )
        if record_count(driver, ref.tenant, element_id, settings.database, granted=granted) == 0:
            # A refused attempt is recorded too, so that probing ids with purge is seen by
            # the tenant's auditors. The run is the same whether the id has no record or
            # one the purger may not see: it holds only what was typed.
            refused = recorder.start_run(request, purger.principal.incarnation)
            recorder.finish_run(refused.run_id, "refused", REFUSED_STOP)
            raise BadInput(
                f"no record {element_id} in tenant {ref.tenant} "
                f"(the attempt is recorded: run {refused.run_id})"
            )
        # A Ctrl-C whose KeyboardInterrupt a finalizer swallowed stops the purge before its
        # next write, as a press that raised would: nothing written yet, or (once the purge
        # run has started) the run stays `incomplete` and the same purge finishes it.
        ctrl_c.stop_if_pressed()
        start = recorder.start_run(request, purger.principal.incarnation)
        ctrl_c.stop_if_pressed()
        kg = purge_content(
            driver, ref.tenant, element_id, granted=granted, at=at, database=settings.database
        )
        ctrl_c.stop_if_pressed()
        lineage = purge_lineage(
            driver, ref.tenant, element_id, start.run_id, at, database=ctx_database
        )
        outcome = PurgeOutcome(
            purge_run_id=start.run_id,
            tenant=ref.tenant,
            element_id=element_id,
            reason=reason,
            purged_at=at,
            kg_records_purged=kg.records_purged,
            ctx_runs=lineage.runs,
            ctx_ids=lineage.ctx_ids,
        )
        ctrl_c.stop_if_pressed()
        recorder.finish_run(start.run_id, "complete", "purged", result=outcome)
    finally:
        driver.close()
    if json_out:
        click.echo(json.dumps(outcome.model_dump(mode="json"), sort_keys=True))
        return
    if outcome.kg_records_purged or outcome.ctx_ids:
        click.echo(f"purged {element_id} in tenant {outcome.tenant} (purge run {start.run_id})")
    else:
        # A record without text (a service, a relationship), or one purged before.
        click.echo(
            f"nothing to purge: {element_id} has no text left in tenant {outcome.tenant}'s "
            f"records or runs (purge run {start.run_id})"
        )
    click.echo(f"KG records:           {outcome.kg_records_purged}")
    click.echo(f"Context Graph nodes:  {len(outcome.ctx_ids)} in {len(outcome.ctx_runs)} runs")


def register(cli: click.Group) -> None:
    cli.add_command(purge_command)
