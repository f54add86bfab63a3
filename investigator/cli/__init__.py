"""The `investigator` command line: one click group, one module per command group.

Errors reach the user as one line on stderr with the exit code of docs/design.md section 9;
tracebacks only with `--debug`. Ctrl-C is one line and exit 130 (128 + SIGINT).

Start-up cost is paid by every on-call command (issue 12), so only the invoked command's
module is imported (`_LazyGroup`), and the driver is loaded without numpy/pandas/pyarrow.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys


def _import_driver_without_array_libraries() -> None:
    # The driver imports numpy, pandas and pyarrow when present, only to hydrate their types,
    # which no command asks for; numpy alone costs about a second per process. They are hidden
    # while the driver loads, then importable again for code that does need them.
    hidden = [name for name in ("numpy", "pandas", "pyarrow") if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        import neo4j  # noqa: F401
    finally:
        for name in hidden:
            if sys.modules.get(name, False) is None:
                del sys.modules[name]


_import_driver_without_array_libraries()
# No pydantic plugin is used; looking for them reads every installed distribution's metadata.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

import click  # noqa: E402
from neo4j.exceptions import ServiceUnavailable, SessionExpired  # noqa: E402

from investigator.errors import InvestigatorError  # noqa: E402

# Command name -> the module under investigator/cli that defines it and has `register(cli)`.
COMMAND_MODULES: dict[str, str] = {
    "db": "db",
    "demo": "demo",
    "eval": "eval",
    "generate": "generate",
    "ingest": "ingest",
    "investigate": "investigate",
    "mcp": "mcp",
    "purge": "purge",
    "replay": "replay",
    "runbook": "runbook",
    "runs": "runs",
    "schema": "schema",
    "trace": "trace",
    "verify": "verify",
    "warm": "warm",
}


class _LazyGroup(click.Group):
    """A group that imports a command's module only when that command is looked up."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMAND_MODULES))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            module = importlib.import_module(f"investigator.cli.{COMMAND_MODULES[cmd_name]}")
            module.register(self)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> object:
        # click answers Ctrl-C with an empty line on stderr before its Abort; ours is one line.
        # An error raised while cleaning up after Ctrl-C (the driver closing a connection the
        # interrupt cut mid-message) is the interrupt too, not a new failure.
        try:
            return super().invoke(ctx)
        except (KeyboardInterrupt, Exception) as exc:
            if _caused_by_interrupt(exc):
                raise _Interrupted from exc
            raise


def _caused_by_interrupt(exc: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


class _Interrupted(Exception):
    """Ctrl-C while a command ran (raised past click, which would print an empty line)."""


_state = {"debug": False}
# Ctrl-C: 128 + SIGINT, the shell convention; docs/design.md section 9 defines no code for it.
INTERRUPTED_EXIT = 130

# The driver logs retries as warnings; users get our one-line errors instead (set up once).
logging.getLogger("neo4j").addHandler(logging.NullHandler())
logging.getLogger("neo4j").propagate = False


@click.group(
    cls=_LazyGroup,
    name="investigator",
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--debug", is_flag=True, help="Also print the traceback of an error (same message, exit code)."
)
@click.version_option(package_name="graph-investigator", prog_name="investigator")
def cli(debug: bool) -> None:
    """Investigate incidents over a Neo4j knowledge graph, with claims bound to evidence.

    \b
    Examples:
      investigator db start
      investigator investigate "Was release-2026.07.23.1 related to PAY-4097?" \\
          --service svc:payment-api --as-of 2026-07-23T10:03:00Z --subject acme/user:alice
    """
    _state["debug"] = debug


def _register() -> None:
    """Import every command now (tests walking the whole tree); `run` loads them lazily."""
    context = click.Context(cli)
    for name in COMMAND_MODULES:
        cli.get_command(context, name)


def _interrupted() -> int:
    # A read thread the interrupt caught while it started is unknown to the interpreter's
    # exit handler, which would then wait for it forever: stop the pool's threads now.
    session = sys.modules.get("investigator.session")
    if session is not None:
        session.close_read_pool()
    return _fail("interrupted (Ctrl-C)", INTERRUPTED_EXIT)


def _fail(message: str, code: int) -> int:
    first = message.strip().splitlines()[0] if message.strip() else "error"
    sys.stderr.write(f"error: {first}\n")
    return code


def _debug_traceback() -> bool:
    # --debug adds the traceback to stderr; the one-line error and its exit code stay the same
    # in this process and in a warm child (which must never see the exception escape).
    if _state["debug"]:
        import traceback

        traceback.print_exc(file=sys.stderr)
    return _state["debug"]


def run(argv: list[str] | None = None) -> int:
    """Run the CLI with `argv` and return the exit code (never raises for user errors)."""
    args = list(sys.argv[1:] if argv is None else argv)
    outer_debug = _state["debug"]  # a nested run (the eval's commands) keeps the outer's flag
    _state["debug"] = "--debug" in args
    try:
        return _run(args)
    finally:
        _state["debug"] = outer_debug


# Options a hurried user gives the command that does not have them: where they belong.
_OTHER_COMMANDS_OPTIONS = {
    (
        "investigate",
        "--alert",
    ): "name the alert in the question, or use `investigator runbook --alert NAME`",
    ("investigate", "--error-code"): 'name the code in the question ("... PAY-4097 ...")',
    ("runbook", "--question"): "give the words as TEXT, or ask `investigator investigate QUESTION`",
}


def _next_step(exc: click.UsageError) -> str:
    """`; <where it belongs>` for an option another command has, else nothing."""
    if not isinstance(exc, click.NoSuchOption) or exc.ctx is None:
        return ""
    where = _OTHER_COMMANDS_OPTIONS.get((exc.ctx.info_name or "", exc.option_name))
    return f": {where}" if where else ""


def _run(args: list[str]) -> int:
    try:
        result = cli.main(args=args, prog_name="investigator", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.Abort as exc:
        # click turns Ctrl-C (KeyboardInterrupt) into Abort: exit 128 + SIGINT, as shells do.
        if isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt):
            return _interrupted()
        return _fail("aborted", 1)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else "")
        return 0
    except click.UsageError as exc:
        hint = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx else ""
        step = _next_step(exc)
        message = exc.format_message().rstrip(".") + step if step else exc.format_message()
        return _fail(f"{message}{hint}", 2)
    except click.ClickException as exc:
        return _fail(exc.format_message(), exc.exit_code)
    except InvestigatorError as exc:
        _debug_traceback()
        return _fail(str(exc), exc.exit_code)
    except (ServiceUnavailable, SessionExpired) as exc:
        _debug_traceback()
        return _fail(f"Neo4j is unavailable: {exc}", 4)
    except (KeyboardInterrupt, _Interrupted):
        return _interrupted()
    except Exception as exc:  # the last line of defence: one line, exit 1
        if _debug_traceback():
            return _fail(f"{type(exc).__name__}: {exc}", 1)
        return _fail(f"{type(exc).__name__}: {exc} (rerun with --debug for a traceback)", 1)
    return int(result) if isinstance(result, int) else 0


def main() -> None:
    """Console-script entry point."""
    sys.exit(run())
