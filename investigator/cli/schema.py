"""`investigator schema apply`: the Knowledge Graph's constraints and indexes (idempotent)."""

from __future__ import annotations

import json

import click

from graph_schema.schema_ddl import apply_schema, schema_items
from graph_schema.unrecorded_trust import unrecorded_trust
from investigator.connection import open_driver
from investigator.settings import resolve_connection


@click.group(name="schema")
def schema_group() -> None:
    """Manage the Knowledge Graph schema (constraints and indexes).

    \b
    Example:
      investigator schema apply
    """


@schema_group.command(name="apply")
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document.")
def apply_command(json_out: bool) -> None:
    """Create missing constraints and indexes, drop retired ones; print what changed.

    \b
    Example:
      investigator schema apply
    """
    settings = resolve_connection()
    driver = open_driver(settings)
    try:
        report = apply_schema(driver, settings.database)
        # Rules imported before their import's trust was stored: said, never rewritten.
        unrecorded = unrecorded_trust(driver, settings.database)
    finally:
        driver.close()
    if json_out:
        doc = report.model_dump()
        doc["unrecorded_trust"] = [u.model_dump() for u in unrecorded]
        click.echo(json.dumps(doc))
        return
    kinds = {item.name: item.kind for item in schema_items()}
    for name in report.dropped:
        click.echo(f"dropped index {name} (an older schema's; nothing reads it)")
    for name in report.created:
        # Names not in schema_items() are per-tenant fulltext indexes.
        click.echo(f"created {kinds.get(name, 'fulltext index')} {name}")
    if report.created or report.dropped:
        dropped = f", {len(report.dropped)} dropped" if report.dropped else ""
        click.echo(f"{len(report.created)} created, {len(report.present)} already present{dropped}")
    else:
        click.echo(f"schema up to date: {len(report.present)} constraints and indexes present")
    for u in unrecorded:
        click.echo(u.line())


def register(cli: click.Group) -> None:
    cli.add_command(schema_group)
