"""`investigator trace RUN_ID [--format tree|json|mermaid]`: one run's recorded lineage."""

from __future__ import annotations

import click

from investigator.connection import open_driver
from investigator.context_graph.lineage import load_lineage, validate_run_id
from investigator.context_graph.recorder import ctx_database_from_env
from investigator.context_graph.trace import (
    TRACE_FORMATS,
    render_mermaid,
    render_tree,
    trace_document,
)
from investigator.errors import BadInput
from investigator.settings import resolve_connection


@click.command(name="trace")
@click.argument("run_id")
@click.option(
    "--format",
    "fmt",
    default="tree",
    show_default=True,
    help="tree (terminal), json, or mermaid (a flowchart to paste into a ticket).",
)
def trace_command(run_id: str, fmt: str) -> None:
    """Show the lineage of run RUN_ID: goal, plan, tool calls, evidence, pack, claims.

    \b
    Examples:
      investigator trace run-0123abcd
      investigator trace run-0123abcd --format mermaid > lineage.mmd
    """
    if fmt not in TRACE_FORMATS:
        raise BadInput(f"--format must be one of {', '.join(TRACE_FORMATS)}, got {fmt[:40]!r}")
    validate_run_id(run_id)
    settings = resolve_connection()
    driver = open_driver(settings)
    try:
        lineage = load_lineage(driver, run_id, database=ctx_database_from_env(settings.database))
    finally:
        driver.close()
    if fmt == "json":
        click.echo(trace_document(lineage).model_dump_json())
    elif fmt == "mermaid":
        click.echo(render_mermaid(lineage))
    else:
        click.echo(render_tree(lineage))


def register(cli: click.Group) -> None:
    cli.add_command(trace_command)
