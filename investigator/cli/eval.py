"""`investigator eval [--cases PATH] [--json]`: golden-set metrics per layer, gated.

Runs every case through the real CLI (`investigate`/`runbook --json`, then `replay`), scores
the product and a naive fulltext baseline with the same metrics, and exits non-zero naming
the failing cases when a gate fails (docs/design.md section 11, issue 8).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from investigator.connection import open_driver
from investigator.errors import InvestigatorError, Neo4jUnavailable
from investigator.evaluation.cases import DEFAULT_CASES_PATH, load_golden_set
from investigator.evaluation.cli_runner import use_cli_entry
from investigator.evaluation.report import render_text
from investigator.evaluation.runner import run_evaluation
from investigator.local_neo4j import LocalNeo4j
from investigator.settings import ConnectionSettings, resolve_connection


class GatesFailed(InvestigatorError):
    """At least one evaluation gate failed (exit 1; the report names the cases)."""

    exit_code = 1


def _progress(message: str) -> None:
    sys.stderr.write(message + "\n")


def _connection() -> ConnectionSettings:
    """The configured Neo4j; with none configured at all, the local server (started if needed).

    So `investigator eval` works from nothing, like `investigator demo`.
    """
    try:
        return resolve_connection()
    except Neo4jUnavailable:
        if os.environ.get("NEO4J_URI"):
            raise
        _progress("no Neo4j configured: starting the local server (`investigator db start`)")
        LocalNeo4j.default().start(progress=_progress)
        return resolve_connection()


@click.command(name="eval")
@click.option(
    "--cases",
    "cases_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Golden-set YAML (default: eval/golden.yaml in the repository).",
)
@click.option(
    "--json", "json_out", is_flag=True, help="Print the full report as one JSON document."
)
@click.option(
    "--no-setup",
    is_flag=True,
    help="Skip `schema apply` and the ingest of the golden set's datasets.",
)
@click.option(
    "--sweep",
    type=click.Choice(["sample", "full", "off"]),
    default="sample",
    show_default=True,
    help="Timeline sweep: a spread of (request, point) runs, every pair, or none.",
)
def eval_command(cases_path: Path | None, json_out: bool, no_setup: bool, sweep: str) -> None:
    """Score the golden set on three layers, against a naive fulltext baseline.

    Sets up what it needs first (the local Neo4j when none is configured, schema apply, ingest
    of the datasets the cases name), then runs each case, replays each run, and exits 1 if a
    gate fails (recall >= 0.95, temporal accuracy >= 0.95, every safety rate 0, claim coverage
    and replay 1.0).

    \b
    Examples:
      investigator eval
      investigator eval --cases eval/golden.yaml --json > eval-report.json
    """
    path = cases_path or DEFAULT_CASES_PATH
    golden = load_golden_set(path)
    settings = _connection()
    driver = open_driver(settings)
    from investigator.cli import run

    use_cli_entry(run)  # the cases run in this process, through the same entry point as a user's
    try:
        report = run_evaluation(
            golden,
            path,
            driver,
            settings.database,
            setup=not no_setup,
            progress=None if json_out else _progress,
            sweep=sweep,
        )
    finally:
        use_cli_entry(None)
        driver.close()
    if json_out:
        click.echo(report.model_dump_json())
    else:
        click.echo(render_text(report))
    if not report.passed:
        named = ", ".join(report.failing_cases[:10]) or "no single case"
        more = (
            f" and {len(report.failing_cases) - 10} more" if len(report.failing_cases) > 10 else ""
        )
        raise GatesFailed(
            f"evaluation gates failed: {', '.join(report.failing_gates)} (cases: {named}{more})"
        )


def register(cli: click.Group) -> None:
    cli.add_command(eval_command)
