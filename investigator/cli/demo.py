"""`investigator demo`: the bundled payments incident, end to end, through the real commands.

Each step is an ordinary CLI command, run in-process and printed as a user would type it,
so the demo shows exactly what the tool does and stops at the first failing step.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from pathlib import Path

import click

from investigator.errors import BadInput
from investigator.local_neo4j import LocalNeo4j
from investigator.settings import config_file_path

DATASET = Path(__file__).resolve().parents[2] / "datasets" / "payments-incident"
QUESTION = (
    "Was the 10:02 release of payment-api related to the PAY-4097 errors? "
    "Who owned payment-api at that moment? Which runbook version applied?"
)
# Subjects are named within their tenant (TENANT/ID): the demo's alice is acme's.
DEMO_INVESTIGATOR = "acme/user:alice"


def _progress(message: str) -> None:
    sys.stderr.write(message + "\n")


def _step(number: int, total: int, args: list[str], why: str | None = None) -> int:
    from investigator.cli import run

    shown = " ".join(f'"{a}"' if " " in a else a for a in args)
    click.echo(f"\n[{number}/{total}] $ investigator {shown}")
    if why:
        click.echo(f"      ({why})")
    return run(args)


# A user copies the demo's commands: the one flag their own data should not carry says why.
_BACKDATE_WHY = (
    "--backdate: this dataset is history recorded in 2026-07; ingesting your own data needs "
    "no flag, and an old recorded_at is refused without it"
)


def _investigation_run_id() -> str:
    """The newest recorded run of the demo question (the one step 4 just made)."""
    from investigator.cli import run

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = run(["runs", "--subject", DEMO_INVESTIGATOR, "--limit", "20", "--json"])
    if code != 0:
        raise click.ClickException("could not list the runs just recorded")
    for recorded in json.loads(buffer.getvalue())["runs"]:
        if recorded.get("command") == "investigate" and recorded.get("question") == QUESTION:
            return str(recorded["run_id"])
    raise click.ClickException("the demo investigation was not recorded")


@click.command(name="demo")
@click.option(
    "--dataset",
    type=click.Path(path_type=Path, file_okay=False),
    default=DATASET,
    show_default=False,
    help="The demo bundle folder (default: datasets/payments-incident of this checkout).",
)
def demo_command(dataset: Path) -> None:
    """Start Neo4j, load the payments incident, investigate it, look up a runbook, replay it.

    Without NEO4J_URI (or a config file) a local Neo4j is started from Maven jars first.

    \b
    Example:
      investigator demo
    """
    if not dataset.is_dir():
        raise BadInput(f"demo dataset not found at {dataset} (use --dataset PATH)")
    total = 6
    configured = bool(os.environ.get("NEO4J_URI")) or config_file_path().is_file()
    if configured:
        click.echo(f"[1/{total}] using the configured Neo4j")
    else:
        server = LocalNeo4j.default()
        result = server.start(progress=_progress)
        word = "already running" if result.already_running else "started"
        status = server.status()
        click.echo(
            f"[1/{total}] local Neo4j {status.version} {word}: {result.state.uri} "
            f"(pid {result.state.pid})"
        )
    steps: list[list[str]] = [
        ["schema", "apply"],
        # The demo's incident is curated history (recorded in 2026-07): loaded as such even
        # into a store where earlier demos recorded runs (graph_schema/backdating.py).
        ["ingest", str(dataset), "--backdate"],
        [
            "investigate",
            QUESTION,
            "--service",
            "svc:payment-api",
            "--as-of",
            "2026-07-23T10:30:00Z",
            "--subject",
            DEMO_INVESTIGATOR,
        ],
        [
            "runbook",
            "--service",
            "svc:payment-api",
            "--as-of",
            "2026-07-23T10:03:00Z",
            "--subject",
            "acme/user:bob",
        ],
    ]
    for number, args in enumerate(steps, start=2):
        code = _step(number, total, args, _BACKDATE_WHY if "--backdate" in args else None)
        if code != 0:
            raise click.exceptions.Exit(code)
    run_id = _investigation_run_id()
    code = _step(total, total, ["replay", run_id, "--subject", DEMO_INVESTIGATOR])
    if code != 0:
        raise click.exceptions.Exit(code)
    click.echo(
        f"\nNext: investigator trace {run_id} --subject {DEMO_INVESTIGATOR} --format mermaid | "
        f"investigator runs --subject {DEMO_INVESTIGATOR} | "
        "investigator eval"
    )
    if not configured:
        click.echo("The local Neo4j keeps running; stop it with: investigator db stop")


def register(cli: click.Group) -> None:
    cli.add_command(demo_command)
