"""`investigator runs [--limit N] [--json]`: recent runs from the Context Graph."""

from __future__ import annotations

import json

import click

from investigator.connection import open_driver
from investigator.context_graph.recorder import ctx_database_from_env
from investigator.context_graph.runs import MAX_LIMIT, list_runs
from investigator.errors import BadInput
from investigator.settings import resolve_connection


def _one_line(text: str | None, limit: int = 60) -> str:
    flat = " ".join("".join(c if c.isprintable() else " " for c in (text or "")).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@click.command(name="runs")
@click.option(
    "--limit", type=str, default="20", show_default=True, help=f"How many (1..{MAX_LIMIT})."
)
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document.")
def runs_command(limit: str, json_out: bool) -> None:
    """List recent runs, newest first, with status, question, subject and time.

    \b
    Examples:
      investigator runs
      investigator runs --limit 5 --json
    """
    try:
        count = int(limit.strip())
    except ValueError:
        raise BadInput(f"--limit must be a whole number, got {limit[:40]!r}") from None
    settings = resolve_connection()
    driver = open_driver(settings)
    try:
        runs = list_runs(driver, count, database=ctx_database_from_env(settings.database))
    finally:
        driver.close()
    if json_out:
        click.echo(json.dumps({"runs": [r.model_dump(mode="json") for r in runs]}))
        return
    if not runs:
        click.echo("no runs recorded")
        return
    for r in runs:
        click.echo(
            f"{r.run_id}  {r.status:<10}  {r.started_at or '-'}  {r.subject_id or '-'}  "
            f"{_one_line(r.question)}"
        )


def register(cli: click.Group) -> None:
    cli.add_command(runs_command)
