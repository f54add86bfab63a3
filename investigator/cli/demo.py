"""`investigator demo`: start a local Neo4j (unless one is configured) and show its status."""

from __future__ import annotations

import os
import sys

import click

from investigator.local_neo4j import LocalNeo4j


def _progress(message: str) -> None:
    sys.stderr.write(message + "\n")


@click.command(name="demo")
def demo_command() -> None:
    """Start, seed and investigate the bundled demo end to end.

    \b
    Example:
      investigator demo
    """
    if not os.environ.get("NEO4J_URI"):
        server = LocalNeo4j.default()
        result = server.start(progress=_progress)
        word = "already running" if result.already_running else "started"
        click.echo(f"[1/1] Neo4j {word}: {result.state.uri} (pid {result.state.pid})")
        status = server.status()
        click.echo(f"      status: running={status.running} version={status.version}")


def register(cli: click.Group) -> None:
    cli.add_command(demo_command)
