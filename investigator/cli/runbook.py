"""`investigator runbook`: which runbook version applies, who owns it, at a given time.

Light at import (click and the standard library): click parses the options, the callback
checks the target, the times and the subject, and only then imports the lookup, its models
and the driver (investigator/cli/runbook_card.py). A hurried usage error is answered without
them.
"""

from __future__ import annotations

import click

from investigator.cli.subject import subject_id_from, subject_options
from investigator.cli.times import parse_known_at, parse_zoned_time
from investigator.errors import BadInput
from investigator.terminal import one_line

# (target as the user types it, the lookup's target, what to give, an example), in the
# order the command checks them.
_TARGETS = (
    ("--service", "service", "the service's id or name", "--service svc:checkout"),
    ("--alert", "alert", "the alert's name", "--alert KubePodCrashLooping"),
    ("--error-code", "error_code", "the error code", "--error-code PAY-4097"),
)


def runbook_target_problem(
    service: str | None, alert: str | None, error_code: str | None, text: str | None
) -> str | None:
    """Why `investigator runbook` was not given exactly one target, or None."""
    for (flag, _, what, example), value in zip(_TARGETS, (service, alert, error_code), strict=True):
        if value is not None and value.startswith("--"):
            # `--alert --subject x`: click gave the next option's name to --alert as its value.
            return f"{flag} took {value!r} as its value: give {what} right after {flag} ({example})"
    given = [("--service", service), ("--alert", alert), ("--error-code", error_code)]
    given.append(("TEXT", text))
    chosen = [(flag, value) for flag, value in given if value is not None]
    if len(chosen) == 1:
        return None
    # Name what was given: TEXT may be words left over after an option's value.
    got = " and ".join(f"{flag} {one_line(value, 40)!r}" for flag, value in chosen)
    return (
        "give exactly one of --service, --alert, --error-code or TEXT "
        f"(got {got or 'none'}; see `investigator runbook --help`)"
    )


@click.command(name="runbook")
# Unquoted words are one text: a hurried `runbook etcd no leader` is `runbook "etcd no leader"`.
@click.argument("text", nargs=-1)
@click.option("--service", "service", metavar="ID", help="A service id or name (svc:checkout).")
@click.option("--alert", "alert", metavar="NAME", help="An alert name (KubePodCrashLooping).")
@click.option("--error-code", "error_code", metavar="CODE", help="An error code (PAY-4097).")
@click.option(
    "--as-of",
    "as_of",
    metavar="T",
    help=(
        "ISO-8601 time with a zone; the version valid then (default: one time written in "
        "TEXT, else the start of an incident TEXT names, else now)."
    ),
)
@click.option(
    "--known-at",
    "known_at",
    metavar="T",
    help=(
        "ISO-8601 with zone, not later than now: see the KG as it was known then, what "
        "on-call could have found (default: the lookup's start time)."
    ),
)
@subject_options
@click.option(
    "--purpose",
    "purpose",
    metavar="P",
    help="Purpose to look up under (default: runbook_lookup, else incident_investigation).",
)
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document.")
def runbook_command(
    text: tuple[str, ...],
    service: str | None,
    alert: str | None,
    error_code: str | None,
    as_of: str | None,
    known_at: str | None,
    subject: str | None,
    tenant: str | None,
    purpose: str | None,
    json_out: bool,
) -> None:
    """Find the runbook version that applies, its owner and the versions rejected.

    Give exactly one of --service, --alert, --error-code or free TEXT (searched with the
    fulltext index; unquoted words are one text). The lookup is recorded as a run you can
    trace and replay. Without --as-of, one time written in TEXT ("... on 2026-07-23T10:05:00Z",
    "before 2026-07-25") is the lookup's as-of, and the card says so; text naming an incident
    ("during the PAY-4097 incident") is at its start, as investigate reads it, when the
    subject may read it; a time it cannot place ("yesterday", a "then" asked about) is said
    not used (--json: as_of_from, time_note).

    \b
    Examples:
      investigator runbook --alert KubePodCrashLooping --subject acme/user:oncall
      investigator runbook --service svc:payment-api --as-of 2026-07-23T10:03:00Z \\
          --subject acme/user:bob
      investigator runbook --error-code PAY-4097 --as-of 2026-07-26T00:00:00Z \\
          --subject acme/user:oncall --json
      investigator runbook "payment recovery" --subject acme/user:bob
      investigator runbook etcd no leader --subject acme/user:oncall
      investigator runbook --service svc:payment-api --as-of 2026-07-23T10:03:00Z \\
          --known-at 2026-07-23T10:03:00Z --subject acme/user:bob
    """
    words = " ".join(text) if text else None
    problem = runbook_target_problem(service, alert, error_code, words)
    if problem is not None:
        raise BadInput(problem)
    values = (service, alert, error_code)
    given = [(name, v) for (_, name, _, _), v in zip(_TARGETS, values, strict=True)]
    target, value = next((name, v) for name, v in [*given, ("text", words)] if v is not None)
    asked = parse_zoned_time("--as-of", as_of)
    known = parse_known_at("--known-at", known_at)
    subject_id = subject_id_from(subject, tenant)
    # Checked without the driver or the lookup's models: they are imported from here on.
    from investigator.cli.runbook_card import run_lookup

    run_lookup(target, value, asked, known, subject_id, purpose, json_out)


def register(cli: click.Group) -> None:
    cli.add_command(runbook_command)
