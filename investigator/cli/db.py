"""`investigator db start|stop|status|env`: the local Neo4j server (docs/design.md section 4)."""

from __future__ import annotations

import json
import sys

import click

from investigator.local_neo4j import LocalNeo4j

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


@db_group.command()
@json_option
def start(json_out: bool) -> None:
    """Start the local server in the background (downloads the jars on first use).

    \b
    Example:
      investigator db start && eval "$(investigator db env)"
    """
    result = LocalNeo4j.default().start(progress=_progress)
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


@db_group.command()
@json_option
def stop(json_out: bool) -> None:
    """Stop the server that `db start` started (exactly its recorded pid).

    \b
    Example:
      investigator db stop
    """
    stopped = LocalNeo4j.default().stop()
    if json_out:
        click.echo(json.dumps({"stopped": stopped}))
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
    """Print `export NEO4J_URI=...` lines for the local server.

    \b
    Example:
      eval "$(investigator db env)"
    """
    for line in LocalNeo4j.default().env_lines():
        click.echo(line)


def register(cli: click.Group) -> None:
    cli.add_command(db_group)
