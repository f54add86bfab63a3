"""`investigator db start|stop|status|env`: the local Neo4j server (docs/design.md section 4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import click

from investigator.cli.numbers import parse_whole
from investigator.errors import BadInput
from investigator.local_neo4j import LocalNeo4j, LocalState
from investigator.warm_protocol import stop_warm_processes

WARM_PLANS_LOG = "warm-plans.log"

json_option = click.option("--json", "json_out", is_flag=True, help="Print one JSON document.")


def _progress(message: str) -> None:
    sys.stderr.write(message + "\n")


@click.group(name="db")
def db_group() -> None:
    """Run a local Neo4j 5.26 from Maven Central jars (for machines without Docker).

    \b
    Examples:
      investigator db start
      investigator db status --json
      eval "$(investigator db env)"
      investigator db stop
    """


def _warm_plans_in_background(server: LocalNeo4j, state: LocalState) -> None:
    """`db warm-plans` for the server just started, detached, its output in the state dir."""
    env = dict(os.environ)
    env.update(
        NEO4J_URI=state.uri,
        NEO4J_USER=state.user,
        NEO4J_PASSWORD=state.password.get_secret_value(),
        INVESTIGATOR_WARM="0",
    )
    log_path = server.state_dir / WARM_PLANS_LOG
    with open(log_path, "ab") as log:
        subprocess.Popen(
            [sys.executable, "-m", "investigator", "db", "warm-plans"],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
    _progress(f"planning the last runs' templates in the background (log: {log_path})")


@db_group.command()
@click.option(
    "--no-warm-plans",
    is_flag=True,
    help="Do not plan the last runs' templates in the background after the start.",
)
@json_option
def start(no_warm_plans: bool, json_out: bool) -> None:
    """Start the local server in the background (downloads the jars on first use).

    A server that was not running plans the templates of the last recorded runs in the
    background (`db warm-plans`), so the next question does not wait for those plans; a
    store this start created holds no runs, so nothing is planned then.

    \b
    Example:
      investigator db start && eval "$(investigator db env)"
    """
    server = LocalNeo4j.default()
    result = server.start(progress=_progress)
    if json_out:
        payload = {
            "already_running": result.already_running,
            "uri": result.state.uri,
            "pid": result.state.pid,
            "seconds": result.seconds,
        }
        click.echo(json.dumps(payload))
    elif result.already_running:
        click.echo(f"already running: {result.state.uri} (pid {result.state.pid})")
    else:
        click.echo(
            f"started Neo4j {result.state.version} at {result.state.uri} "
            f"(pid {result.state.pid}) in {result.seconds:.1f}s"
        )
    if not (result.already_running or result.new_store or no_warm_plans):
        _warm_plans_in_background(server, result.state)


@db_group.command()
@json_option
def stop(json_out: bool) -> None:
    """Stop the server that `db start` started (exactly its recorded pid), and this state
    folder's warm process.

    \b
    Example:
      investigator db stop
    """
    # First, so that an error stopping the server still leaves no warm process behind.
    # Every checkout's and interpreter's warm process of this folder, not only this one's.
    warm_pids = stop_warm_processes()
    for pid in warm_pids:
        _progress(f"stopped warm process {pid}")
    warm_pid = warm_pids[0] if warm_pids else None
    stopped = LocalNeo4j.default().stop(progress=_progress)
    if json_out:
        click.echo(json.dumps({"stopped": stopped, "warm_process_stopped": warm_pid}))
    else:
        click.echo("stopped" if stopped else "not running")


@db_group.command()
@json_option
def status(json_out: bool) -> None:
    """Show whether the local server runs, with its URI, pid and version.

    \b
    Example:
      investigator db status --json
    """
    st = LocalNeo4j.default().status()
    if json_out:
        click.echo(json.dumps(st.model_dump()))
    elif st.running:
        click.echo(f"running: Neo4j {st.version} at {st.uri} (pid {st.pid})")
    else:
        click.echo("not running")


@db_group.command()
def env() -> None:
    """Print `export NEO4J_URI=...` lines for the local server (and its state folder).

    \b
    Example:
      eval "$(investigator db env)"
    """
    for line in LocalNeo4j.default().env_lines():
        click.echo(line)


@db_group.command(name="warm-plans")
@click.option(
    "--runs",
    type=str,
    metavar="N",
    default="20",
    show_default=True,
    help="How many recent runs (1..1000).",
)
@click.option(
    "--deadline-seconds",
    type=str,
    metavar="SECONDS",
    default="300",
    show_default=True,
    help="Stop after this long (1..3600).",
)
@json_option
def warm_plans_command(runs: str, deadline_seconds: str, json_out: bool) -> None:
    """Plan the templates the last runs used, for a subject that reads nothing.

    Neo4j plans each template text again after a start, slowly on a just-started server.
    This runs every distinct step of the last runs once more, with parameters of the same
    sizes, for a tenant name that holds no record: the plans are the ones the next question
    reuses, and no KG record is read. Then the steps of a did-you-mean (a name typed with a
    slip), which recent runs rarely made. `db start` runs it in the background.

    \b
    Example:
      investigator db warm-plans --runs 5 --json
    """
    from investigator.connection import open_driver
    from investigator.context_graph.recorder import ctx_database_from_env
    from investigator.plan_warmup import recent_steps, suggestion_steps, warm_plans
    from investigator.settings import resolve_connection

    count = _whole(runs, "--runs", 1, 1000)
    deadline = _whole(deadline_seconds, "--deadline-seconds", 1, 3600)
    settings = resolve_connection()
    driver = open_driver(settings)
    try:
        from cypher_templates.executor import TemplateExecutor

        executor = TemplateExecutor(driver, database=settings.database)
        steps = recent_steps(
            executor, runs=count, ctx_database=ctx_database_from_env(settings.database)
        )
        # Then the did-you-mean of a name typed with a slip, rare among the last runs.
        steps += suggestion_steps(steps)
        report = warm_plans(executor, steps, deadline_s=float(deadline))
    finally:
        driver.close()
    if json_out:
        click.echo(report.model_dump_json())
    else:
        click.echo(
            f"planned {report.executed} of {report.steps} steps of the last {count} runs "
            f"in {report.seconds:.1f}s"
            + (" (stopped at the deadline)" if report.stopped_at_deadline else "")
        )


def _whole(text: str, name: str, low: int, high: int) -> int:
    value = parse_whole(text)
    if value is None:
        raise BadInput(f"{name} must be a whole number (digits 0-9), got {text[:40]!r}")
    if not low <= value <= high:
        raise BadInput(f"{name} must be between {low} and {high}, got {value}")
    return value


def register(cli: click.Group) -> None:
    cli.add_command(db_group)
