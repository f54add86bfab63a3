"""`investigator runs --subject T/ID [--purpose audit] [--limit N] [--json]`: recent runs.

A subject lists its own runs; with `--purpose audit` its tenant's runs; never another
tenant's (exit 3 for an unknown subject or a purpose it does not hold).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from graph_schema.canonical import iso_utc
from investigator.cli.numbers import parse_whole
from investigator.cli.subject import (
    load_run_reader,
    purpose_option,
    reader_inputs,
    subject_options,
)
from investigator.defaults import RUNS_AUDIT_CHECKED
from investigator.defaults import RUNS_MAX_LIMIT as MAX_LIMIT
from investigator.errors import BadInput
from investigator.terminal import one_line, shown_id

if TYPE_CHECKING:
    from investigator.context_graph.audit import RunReader


def _one_line(text: str | None, limit: int = 60) -> str:
    return one_line(text or "", limit)


def _no_runs_line(reader: RunReader) -> str:
    """What an empty listing says. A principal id retracted and written again names a new
    holder, who reads none of an earlier holder's runs (docs/security.md rule 5): its empty
    listing says so, the same whether an earlier holder ran anything or not (so it tells
    nothing of their runs), instead of "no runs recorded", which read as if the id had none."""
    principal = reader.principal
    if reader.audits or principal.incarnation <= 1:
        return "no runs recorded"
    began = principal.incarnation_began
    since = f" since it was written again ({iso_utc(began)})" if began is not None else ""
    return (
        f"no runs recorded by {shown_id(str(principal.ref))}{since}: a new principal of this "
        "id; runs of an earlier principal of this id are not shown (they are not yours; an "
        "auditor reads them with --purpose audit)"
    )


@click.command(name="runs")
@click.option(
    "--limit",
    # Parsed below (one-line error, exit 2); the metavar says it is a whole number.
    type=str,
    metavar="N",
    default="20",
    show_default=True,
    help=f"How many, a whole number (1..{MAX_LIMIT}).",
)
@subject_options
@purpose_option
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document.")
def runs_command(
    limit: str, subject: str | None, tenant: str | None, purpose: str | None, json_out: bool
) -> None:
    """List your recent runs (your tenant's with --purpose audit), newest first.

    Exit codes: 0 listed (also when there are none); 2 bad input (--limit, a malformed
    subject); 3 an unknown subject, or a purpose it does not hold; 4 Neo4j unavailable.

    \b
    Examples:
      investigator runs --subject acme/user:alice
      investigator runs --subject acme/user:auditor --purpose audit --limit 5 --json
    """
    count = parse_whole(limit)
    if count is None:
        raise BadInput(f"--limit must be a whole number (digits 0-9), got {limit[:40]!r}")
    if not 1 <= count <= MAX_LIMIT:
        raise BadInput(f"--limit must be between 1 and {MAX_LIMIT}, got {count}")
    ref, purpose = reader_inputs(subject, tenant, purpose)
    from investigator.connection import open_driver
    from investigator.context_graph.models import INTERRUPTED
    from investigator.context_graph.recorder import ctx_database_from_env
    from investigator.context_graph.runs import list_runs
    from investigator.settings import resolve_connection

    settings = resolve_connection()
    driver = open_driver(settings)
    try:
        reader = load_run_reader(driver, settings.database, ref, purpose)
        runs = list_runs(driver, reader, count, database=ctx_database_from_env(settings.database))
    finally:
        driver.close()
    if reader.audits and len(runs) > RUNS_AUDIT_CHECKED:
        # Checking hashes every node of each run: a long listing checks its newest runs only
        # (`verified: null` for the rest, in --json too; this line is on stderr).
        click.echo(
            f"checked the newest {RUNS_AUDIT_CHECKED} of {len(runs)} runs against their chain "
            "and anchor; the rest are not checked (investigator verify for the whole ledger)",
            err=True,
        )
    if json_out:
        click.echo(json.dumps({"runs": [r.model_dump(mode="json") for r in runs]}))
        return
    if not runs:
        click.echo(_no_runs_line(reader))
        return
    for r in runs:
        who = shown_id(f"{r.tenant}/{r.subject_id}")
        if r.subject_note:  # an earlier holder of the id: told apart from the current one
            who += f" ({r.subject_note})"
        # Under audit each run is checked against its chain and anchor; one that does not
        # verify is marked before anything recorded in it.
        mark = "NOT VERIFIED  " if r.verified is False else ""
        # A run Ctrl-C ended is listed as the user saw it (--json: failed, stop interrupted).
        status = "interrupted" if r.stop_reason == INTERRUPTED else r.status
        # Which time it answered for, and who chose it (`as_of ... (now: none given)`).
        times = f"  {r.times}" if r.times else ""
        click.echo(
            f"{r.run_id}  {mark}{status:<10}  {r.started_at or '-'}  {who}  "
            f"{_one_line(r.question)}{times}"
        )
    bad = [r for r in runs if r.verified is False]
    checked = sum(r.verified is not None for r in runs)
    if bad:
        # The first problem, inert (it names places and kinds, never recorded content).
        click.echo(
            f"{len(bad)} of {checked} checked runs do not verify; first: "
            f"{one_line(bad[0].verify_problem or '', 200)} (investigator verify RUN_ID for all)",
            err=True,
        )


def register(cli: click.Group) -> None:
    cli.add_command(runs_command)
