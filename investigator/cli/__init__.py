"""The `investigator` command line: one click group, one module per command group.

Errors reach the user as one line on stderr with the exit code of DESIGN.md section 9;
tracebacks only with `--debug`.
"""

from __future__ import annotations

import logging
import sys

import click
from neo4j.exceptions import ServiceUnavailable, SessionExpired

from investigator.errors import InvestigatorError

_state = {"debug": False}

# The driver logs retries as warnings; users get our one-line errors instead (set up once).
logging.getLogger("neo4j").addHandler(logging.NullHandler())
logging.getLogger("neo4j").propagate = False


@click.group(
    name="investigator",
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option("--debug", is_flag=True, help="Show tracebacks for unexpected errors.")
@click.version_option(package_name="graph-investigator", prog_name="investigator")
def cli(debug: bool) -> None:
    """Investigate incidents over a Neo4j knowledge graph, with claims bound to evidence.

    \b
    Examples:
      investigator db start
      investigator investigate "Was release-2026.07.23.1 related to PAY-4097?" \\
          --service svc:payment-api --as-of 2026-07-23T10:03:00Z --subject user:alice
    """
    _state["debug"] = debug


def _register() -> None:
    # Each command group lives in its own module and adds itself to `cli`.
    from investigator.cli import db, demo, generate, ingest, schema
    from investigator.cli import eval as eval_cli
    from investigator.cli import investigate as investigate_cli
    from investigator.cli import replay as replay_cli
    from investigator.cli import runbook as runbook_cli
    from investigator.cli import runs as runs_cli
    from investigator.cli import trace as trace_cli

    for module in (
        db,
        demo,
        eval_cli,
        investigate_cli,
        runbook_cli,
        replay_cli,
        runs_cli,
        trace_cli,
        schema,
        ingest,
        generate,
    ):
        module.register(cli)


def _fail(message: str, code: int) -> int:
    first = message.strip().splitlines()[0] if message.strip() else "error"
    sys.stderr.write(f"error: {first}\n")
    return code


def run(argv: list[str] | None = None) -> int:
    """Run the CLI with `argv` and return the exit code (never raises for user errors)."""
    _register()
    args = list(sys.argv[1:] if argv is None else argv)
    _state["debug"] = "--debug" in args
    try:
        result = cli.main(args=args, prog_name="investigator", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.Abort:
        return _fail("aborted", 1)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else "")
        return 0
    except click.UsageError as exc:
        hint = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx else ""
        return _fail(f"{exc.format_message()}{hint}", 2)
    except click.ClickException as exc:
        return _fail(exc.format_message(), exc.exit_code)
    except InvestigatorError as exc:
        if _state["debug"]:
            raise
        return _fail(str(exc), exc.exit_code)
    except (ServiceUnavailable, SessionExpired) as exc:
        if _state["debug"]:
            raise
        return _fail(f"Neo4j is unavailable: {exc}", 4)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except Exception as exc:  # the last line of defence: one line, exit 1
        if _state["debug"]:
            raise
        return _fail(f"{type(exc).__name__}: {exc} (rerun with --debug for a traceback)", 1)
    return int(result) if isinstance(result, int) else 0


def main() -> None:
    """Console-script entry point."""
    sys.exit(run())
