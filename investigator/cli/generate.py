"""`investigator generate`: write a synthetic bundle of the demo's shape at any size."""

from __future__ import annotations

from pathlib import Path

import click

from graph_schema.kg_types import IDENTIFIER as IDENTIFIER_TEXT
from graph_schema.synthetic import generate_bundle, write_bundle_file
from investigator.cli.numbers import WholeNumber
from investigator.errors import BadInput

MAX_SERVICES = 200_000


@click.command(name="generate")
@click.option(
    "--services",
    type=WholeNumber(1, MAX_SERVICES),
    required=True,
    help="How many services (about 24 bundle elements each).",
)
@click.option("--seed", type=WholeNumber(0, 2**63 - 1), default=0, show_default=True)
@click.option("--tenant", default="synth", show_default=True, help="Tenant of every element.")
@click.option(
    "--out",
    "out_text",
    # Plain text: click.Path would stat it and crash on a NUL byte before we can answer.
    type=str,
    required=True,
    help="Bundle file to write: .json for JSON, .yaml/.yml for YAML (not a symbolic link).",
)
def generate_command(services: int, seed: int, tenant: str, out_text: str) -> None:
    """Write a deterministic synthetic bundle (same arguments, same bytes).

    \b
    Example:
      investigator generate --services 4200 --seed 7 --out /tmp/synth.json
      investigator ingest /tmp/synth.json
    """
    out = Path(out_text)
    if out.suffix.lower() not in (".json", ".yaml", ".yml"):
        raise BadInput(f"--out must end in .json, .yaml or .yml: {out}")
    if not IDENTIFIER_TEXT.match(tenant):
        raise BadInput(f"--tenant {tenant!r} is not an identifier")
    if out.is_symlink():
        # Writing through it would overwrite whatever file it points at.
        raise BadInput(f"--out {out} is a symbolic link: refused (give the file's own path)")
    bundle = generate_bundle(services=services, seed=seed, tenant=tenant)
    try:
        write_bundle_file(bundle, out)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        reason = getattr(exc, "strerror", None) or str(exc)
        raise BadInput(f"cannot write {out!r}: {reason}") from exc
    click.echo(f"wrote {out}: {bundle.element_count()} elements ({services} services, seed {seed})")


def register(cli: click.Group) -> None:
    cli.add_command(generate_command)
