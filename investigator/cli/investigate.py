"""`investigator investigate`: claims bound to evidence, rejected candidates, missing evidence.

Light at import (click and the standard library): click parses the options, the callback
checks the times and the subject, and only then imports the investigation core, its models
and the driver (investigator/cli/investigate_report.py).
"""

from __future__ import annotations

import click

from investigator.cli.numbers import DecimalNumber, WholeNumber
from investigator.cli.subject import subject_id_from, subject_options
from investigator.cli.times import parse_known_at, parse_zoned_time
from investigator.defaults import (
    DEFAULT_BUDGET_TOKENS,
    DEFAULT_DEADLINE_S,
    DEFAULT_MAX_ROUNDS,
    DEFAULT_PURPOSE,
)


@click.command(name="investigate")
# Unquoted words are one question, as `runbook` reads them.
@click.argument("question", nargs=-1, required=True)
@click.option("--service", "service", metavar="ID", help="The service in question (svc:...).")
@click.option(
    "--as-of",
    "as_of",
    metavar="T",
    help="ISO-8601 with zone: the moment asked about (default: now).",
)
@click.option(
    "--known-at",
    "known_at",
    metavar="T",
    help=(
        "ISO-8601 with zone, not later than now: see the KG as it was known then "
        "(default: the run's start time)."
    ),
)
@subject_options
@click.option(
    "--purpose",
    "purpose",
    metavar="P",
    default=DEFAULT_PURPOSE,
    show_default=True,
    help="Purpose of the investigation (must be allowed for the subject).",
)
@click.option(
    "--max-rounds",
    "max_rounds",
    type=WholeNumber(),
    default=DEFAULT_MAX_ROUNDS,
    show_default=True,
    help="Retrieval rounds at most (1..10).",
)
@click.option(
    "--budget-tokens",
    "budget_tokens",
    type=WholeNumber(),
    default=DEFAULT_BUDGET_TOKENS,
    show_default=True,
    help="Context Pack token budget (256..1000000).",
)
@click.option(
    "--deadline-seconds",
    "deadline_s",
    type=DecimalNumber(),
    default=DEFAULT_DEADLINE_S,
    show_default=True,
    help="Stop retrieving after this long (0..600).",
)
@click.option(
    "--idempotency-key",
    "idempotency_key",
    metavar="K",
    help=(
        "Retrying with the same key and request returns the original run (a left-out "
        "--as-of or --known-at stays the same request: the original run's times); a run "
        "that ended without an answer (Ctrl-C, an error) is asked again, once."
    ),
)
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document.")
def investigate_command(
    question: tuple[str, ...],
    service: str | None,
    as_of: str | None,
    known_at: str | None,
    subject: str | None,
    tenant: str | None,
    purpose: str,
    max_rounds: int,
    budget_tokens: int,
    deadline_s: float,
    idempotency_key: str | None,
    json_out: bool,
) -> None:
    """Investigate a question: claims (fact / inference / hypothesis) bound to evidence.

    The run is recorded in the Context Graph (trace it, replay it). Unquoted words are one
    question.

    \b
    Examples:
      investigator investigate "Was release-2026.07.23.1 related to PAY-4097? Who owned \\
          payment-api then? Which runbook applied?" --service svc:payment-api \\
          --as-of 2026-07-23T10:03:00Z --subject acme/user:alice
      investigator investigate "Who owned svc:payment-api?" --subject acme/user:bob --json
    """
    asked = parse_zoned_time("--as-of", as_of)
    known = parse_known_at("--known-at", known_at)
    subject_id = subject_id_from(subject, tenant)
    # Checked without the driver or the core's models: they are imported from here on.
    from investigator.cli.investigate_report import run_investigation

    run_investigation(
        question,
        service,
        asked,
        known,
        subject_id,
        purpose,
        max_rounds,
        budget_tokens,
        deadline_s,
        idempotency_key,
        json_out,
    )


def register(cli: click.Group) -> None:
    """Add `investigate` to the CLI."""
    cli.add_command(investigate_command)
