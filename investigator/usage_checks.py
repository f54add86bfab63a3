"""Usage checks that need nothing but the arguments: answered before any heavy import.

A usage error (`investigator runbook` with no target, a bad `--as-of`) should come back at
once, not after the driver, pydantic's models and the warm process have been loaded: the
launcher asks `early_usage_problem` first, with the standard library only. The command
itself runs the same checks (`runbook_target_problem`, `zoned_time`), so both paths say the
same line; any argument list this plain reading is unsure of is left to click.
"""

from __future__ import annotations

from datetime import UTC, datetime

from investigator.terminal import one_line

# `investigator runbook`'s options, as click declares them (investigator/cli/runbook.py).
_RUNBOOK_VALUE_OPTIONS = frozenset(
    {"--service", "--alert", "--error-code", "--as-of", "--known-at", "--subject", "--tenant",
     "--purpose"}
)  # fmt: skip
_RUNBOOK_FLAGS = frozenset({"--json"})
# (target as the user types it, what to give, an example), in the order the command checks.
_TARGETS = (
    ("--service", "the service's id or name", "--service svc:checkout"),
    ("--alert", "the alert's name", "--alert KubePodCrashLooping"),
    ("--error-code", "the error code", "--error-code PAY-4097"),
)


def zoned_time(flag: str, value: str) -> datetime | str:
    """`value` as a UTC datetime, or the one-line reason it is not an ISO-8601 time with a
    zone (`investigator.cli.times.parse_zoned_time` raises it as BadInput)."""
    raw = value.strip()
    shown = repr(value[:60])
    try:
        parsed = datetime.fromisoformat(raw)
    except ValueError:
        return f"{flag} {shown} is not an ISO-8601 time (e.g. 2026-07-23T10:03:00Z)"
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        if "T" not in raw.upper() and " " not in raw:
            # A day alone: which instant of it is not guessed (nor which zone's day).
            return (
                f"{flag} {shown} is a day without a time: write its instant with a zone, "
                f"e.g. {raw[:10]}T00:00:00Z"
            )
        return f"{flag} {shown} has no zone: add Z or an offset like +02:00"
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        return f"{flag} {shown} is out of range in UTC"


def runbook_target_problem(
    service: str | None, alert: str | None, error_code: str | None, text: str | None
) -> str | None:
    """Why `investigator runbook` was not given exactly one target, or None."""
    for (flag, what, example), value in zip(_TARGETS, (service, alert, error_code), strict=True):
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


def _runbook_problem(args: list[str]) -> str | None:
    values: dict[str, str] = {}
    words: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, inline = arg.partition("=")
        if arg.startswith("-") and (name in _RUNBOOK_VALUE_OPTIONS and (eq or i + 1 < len(args))):
            # click takes the next argument as the value, whatever it is (`--alert --json`).
            values[name] = inline if eq else args[i + 1]
            i += 1 if eq else 2
        elif arg in _RUNBOOK_FLAGS:
            i += 1
        elif arg.startswith("-"):
            return None  # --help, an unknown option, a missing value, `--`: click's to say
        else:
            words.append(arg)
            i += 1
    problem = runbook_target_problem(
        values.get("--service"),
        values.get("--alert"),
        values.get("--error-code"),
        " ".join(words) if words else None,
    )
    if problem is None and "--as-of" in values:
        parsed = zoned_time("--as-of", values["--as-of"])
        problem = parsed if isinstance(parsed, str) else None
    return problem


def early_usage_problem(args: list[str]) -> str | None:
    """The one-line usage error the command would give for `args`, when it is plain from the
    arguments alone (the command's first checks, in its order); None to run the command."""
    if args[:1] == ["runbook"]:
        return _runbook_problem(args[1:])
    return None
