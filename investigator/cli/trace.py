"""`investigator trace RUN_ID [--format tree|json|mermaid|prov-json] [--json]`: one run's
recorded lineage (`--json` is `--format json`, as every other command takes it)."""

from __future__ import annotations

import sys
from typing import Any

import click
import neo4j

from investigator.cli.subject import purpose_option, reader_inputs, subject_options
from investigator.connection import open_driver
from investigator.context_graph.audit import AUDIT_PURPOSE, filtered_lineage
from investigator.context_graph.incarnation import holder_note, read_incarnations
from investigator.context_graph.lineage import validate_run_id
from investigator.context_graph.readable import checked_readable_run, verify_problem_lines
from investigator.context_graph.recorder import ctx_database_from_env
from investigator.context_graph.trace import TRACE_FORMATS, render_mermaid, render_tree
from investigator.errors import BadInput
from investigator.json_documents import TRACE_JSON_FORMATS, trace_json
from investigator.settings import resolve_connection
from investigator.terminal import shown_id

# docs/design.md section 9: the run does not verify (as `verify` and `replay` exit).
NOT_VERIFIED_EXIT = 1


@click.command(name="trace")
@click.argument("run_id")
@click.option(
    "--format",
    "fmt",
    metavar="tree|json|mermaid|prov-json",
    default=None,
    help="tree (terminal; the default), json, mermaid (a flowchart to paste into a ticket), "
    "or prov-json (W3C PROV-JSON: ids and hashes, no recorded text).",
)
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document (--format json).")
@subject_options
@purpose_option
def trace_command(
    run_id: str,
    fmt: str | None,
    json_out: bool,
    subject: str | None,
    tenant: str | None,
    purpose: str | None,
) -> None:
    """Show the lineage of run RUN_ID: goal, plan, tool calls, evidence, pack, claims.

    Your own runs, or your tenant's with --purpose audit. Evidence you may not read today
    (ACL, purpose, PII, a record tightened or retracted since) is shown as withheld. A run
    whose chain or anchor does not verify is said so first, marked, and exits 1.

    Exit codes: 0 shown; 1 shown, but the run's chain or anchor does not verify; 2 bad
    input (a malformed RUN_ID or --format), an unknown run, or another tenant's (answered
    alike); 3 another subject's run you may not read (your tenant's need --purpose audit);
    4 Neo4j unavailable.

    \b
    Examples:
      investigator runs --subject acme/user:alice     # the run ids (run-0123abcd below)
      investigator trace run-0123abcd --subject acme/user:alice
      investigator trace run-0123abcd --subject acme/user:auditor --purpose audit \\
          --format mermaid > lineage.mmd
      investigator trace run-0123abcd --subject acme/user:alice --format prov-json
      investigator trace run-0123abcd --subject acme/user:alice --json   # = --format json
    """
    formats = (*TRACE_FORMATS, "prov-json")
    # `--json` as on every other command; a --format that says otherwise is a contradiction.
    if json_out and fmt not in (None, "json"):
        raise BadInput(f"--json prints --format json; drop one of --json and --format {fmt[:40]}")
    fmt = "json" if json_out else fmt or "tree"
    if fmt not in formats:
        raise BadInput(f"--format must be one of {', '.join(formats)}, got {fmt[:40]!r}")
    validate_run_id(run_id)
    ref, purpose = reader_inputs(subject, tenant, purpose)
    settings = resolve_connection()
    driver = open_driver(settings)
    try:
        lineage, content, report = checked_readable_run(
            driver,
            ref,
            purpose,
            run_id,
            ctx_database=ctx_database_from_env(settings.database),
            kg_database=settings.database,
        )
        shown = filtered_lineage(lineage, content)
        note = _holder_note(driver, purpose, lineage.run_properties, settings.database)
    finally:
        driver.close()
    problems = verify_problem_lines(report)
    if problems:
        # Said first, before any content: an auditor must not read a tampered run as sound.
        sys.stderr.write(f"error: not verified: {problems[0]}\n")
    if fmt in TRACE_JSON_FORMATS:
        click.echo(trace_json(lineage, shown, fmt, problems, note))
    else:
        if problems:
            mark = f"NOT VERIFIED ({len(problems)} problems, first: {problems[0]}); shown as stored"
            click.echo(f"%% {mark}" if fmt == "mermaid" else mark)
        if note is not None:  # an earlier holder of the id: told apart from the current one
            run = lineage.run_properties or {}
            who = shown_id(f"{run.get('tenant')}/{run.get('subject_id')}")
            said = f"subject {who} ({note})"
            click.echo(f"%% {said}" if fmt == "mermaid" else said)
        click.echo(render_mermaid(shown) if fmt == "mermaid" else render_tree(lineage, shown))
    if problems:
        raise click.exceptions.Exit(NOT_VERIFIED_EXIT)


def _holder_note(
    driver: neo4j.Driver, purpose: str | None, run: dict[str, Any] | None, database: str | None
) -> str | None:
    """Under `audit`, which holder of its id the run's subject was when not the current one
    (a reader without it reads only its own runs: always the current holder's)."""
    if purpose != AUDIT_PURPOSE or not run or not isinstance(run.get("tenant"), str):
        return None
    subject_id = str(run.get("subject_id"))
    holders = read_incarnations(driver, str(run["tenant"]), [subject_id], database)
    return holder_note(run, holders.get(subject_id, []))


def register(cli: click.Group) -> None:
    cli.add_command(trace_command)
