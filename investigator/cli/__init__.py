"""The `investigator` command line: one click group, one module per command group.

Errors reach the user as one line on stderr with the exit code of docs/design.md section 9;
tracebacks only with `--debug`. Ctrl-C is one line and exit 130 (128 + SIGINT).

Start-up cost is paid by every on-call command (issue 12). The group knows each command's
name and short help (`COMMANDS`), so `investigator --help` imports no command; a command's
module is imported only when that command is invoked (click's lazy-group pattern), and
click parses and checks its options before the command's callback imports the driver,
pydantic's models and the investigation core. The driver, whoever imports it first, loads
without numpy/pandas/pyarrow.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import importlib.util
import logging
import os
import sys
import threading
from typing import TYPE_CHECKING, Any

import click

from graph_schema import ctrl_c
from investigator.errors import InvestigatorError

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec
    from types import ModuleType

# The driver's module that imports numpy, pandas and pyarrow when present, only to hydrate
# their types, which no command asks for; numpy alone costs about a second per process.
_DRIVER_OPTIONAL_DEPS = "neo4j._optional_deps"
_ARRAY_LIBRARIES = ("numpy", "pandas", "pyarrow")


# Import protocols by duck typing: `importlib.abc` itself costs about 25 ms to import.
class _ArrayLibrariesHidden:
    """Runs the driver's optional-dependency module with the array libraries hidden, then
    makes them importable again for code that does need them."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        hidden = [name for name in _ARRAY_LIBRARIES if name not in sys.modules]
        for name in hidden:
            sys.modules[name] = None  # type: ignore[assignment]
        try:
            self._loader.exec_module(module)
        finally:
            for name in hidden:
                if sys.modules.get(name, False) is None:
                    del sys.modules[name]


class _DriverWithoutArrayLibraries:
    """Finds the driver's optional-dependency module, once, with `_ArrayLibrariesHidden`:
    the driver itself is imported only by the commands that connect, when they do."""

    def find_spec(
        self, fullname: str, path: object = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != _DRIVER_OPTIONAL_DEPS:
            return None
        sys.meta_path.remove(self)  # once, and not asked again by the lookup below
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _ArrayLibrariesHidden(spec.loader)  # type: ignore[assignment]
        return spec


if "neo4j" not in sys.modules:
    sys.meta_path.insert(0, _DriverWithoutArrayLibraries())
# No pydantic plugin is used; looking for them reads every installed distribution's metadata.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

# Command name -> (the module under investigator/cli that defines it and has `register(cli)`,
# the first paragraph of its help: what `investigator --help` lists without importing it;
# tests/test_cli_surface.py checks it against the command's own help).
COMMANDS: dict[str, tuple[str, str]] = {
    "db": ("db", "Run a local Neo4j 5.26 from Maven Central jars (for machines without Docker)."),
    "demo": (
        "demo",
        "Start Neo4j, load the payments incident, investigate it, look up a runbook, replay it.",
    ),
    "eval": ("eval", "Score the golden set on three layers, against a naive fulltext baseline."),
    "generate": (
        "generate",
        "Write a deterministic synthetic bundle (same arguments, same bytes).",
    ),
    "ingest": (
        "ingest",
        "Load a bundle (YAML or JSON file, or a folder of them) into the Knowledge Graph.",
    ),
    "investigate": (
        "investigate",
        "Investigate a question: claims (fact / inference / hypothesis) bound to evidence.",
    ),
    "mcp": ("mcp", "Serve the investigator to MCP clients (Claude Desktop, IDEs, agents)."),
    "purge": (
        "purge",
        "Legally purge the text of ELEMENT_ID in the subject's tenant, KG and lineage.",
    ),
    "replay": (
        "replay",
        "Re-execute run RUN_ID's tool calls at its known_at and verify chain and pack_hash.",
    ),
    "runbook": (
        "runbook",
        "Find the runbook version that applies, its owner and the versions rejected.",
    ),
    "runs": ("runs", "List your recent runs (your tenant's with --purpose audit), newest first."),
    "schema": ("schema", "Manage the Knowledge Graph schema (constraints and indexes)."),
    "trace": (
        "trace",
        "Show the lineage of run RUN_ID: goal, plan, tool calls, evidence, pack, claims.",
    ),
    "verify": (
        "verify",
        "Verify run RUN_ID against its anchor, or (no RUN_ID) the tenant's whole ledger.",
    ),
    "warm": ("warm", "The warm process that saves every command its start-up (on by default)."),
}


class _LazyGroup(click.Group):
    """A group that imports a command's module only when that command is looked up."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module = importlib.import_module(f"investigator.cli.{COMMANDS[cmd_name][0]}")
            module.register(self)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # click's listing, from the table for a command not imported yet (same shortening).
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            cmd = self.commands.get(name) or click.Command(name, help=COMMANDS[name][1])
            if not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        # click says only "No such command 'who'": a hurried user who typed the question
        # itself, or a near name, is told the command to run.
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            hint = command_hint(args, self.list_commands(ctx)) if args else None
            if hint is None:
                raise
            raise click.UsageError(f"no such command {args[0]!r}: {hint}", ctx) from exc

    def invoke(self, ctx: click.Context) -> object:
        # click answers Ctrl-C with an empty line on stderr before its Abort; ours is one line.
        # An error raised while cleaning up after Ctrl-C (the driver closing a connection the
        # interrupt cut mid-message) is the interrupt too, not a new failure; so is an error
        # or an answer that follows a press whose KeyboardInterrupt a finalizer swallowed
        # (`run` holds Ctrl-C: graph_schema/ctrl_c.py).
        try:
            result = super().invoke(ctx)
        except (KeyboardInterrupt, Exception) as exc:
            if _caused_by_interrupt(exc) or ctrl_c.pressed():
                # (a command that chose its exit code has printed its answer)
                raise _Interrupted(answered=isinstance(exc, click.exceptions.Exit)) from exc
            raise
        if ctrl_c.pressed():  # the command finished: it has printed its answer
            raise _Interrupted(answered=True) from KeyboardInterrupt()
        return result


def _caused_by_interrupt(exc: BaseException) -> bool:
    return any(isinstance(x, KeyboardInterrupt) for x in _chain(exc))


# Words a question opens with: `investigator who owns payment-api` is that question unquoted.
_QUESTION_WORDS = frozenset(
    {
        *("who", "whom", "whose", "what", "when", "where", "which", "why", "how"),
        *("is", "was", "were", "are", "did", "does", "do", "has", "have", "any"),
        *("should", "can", "could", "would", "will", "tell"),
    }
)
# Commands users reach for by another name.
_OTHER_NAMES = {
    "ask": "investigate",
    "query": "investigate",
    "question": "investigate",
    "explain": "investigate",
    "search": "runbook",
    "find": "runbook",
    "lookup": "runbook",
    "howto": "runbook",
    "serve": "mcp",
    "server": "mcp",
    "start": "db start",
    "stop": "db stop",
    "status": "db status",
    "import": "ingest",
    "load": "ingest",
    "list": "runs",
    "history": "runs",
    "audit": "verify",
    "lineage": "trace",
}
_QUOTED_MAX = 80
_HELP_WORDS = frozenset({"help", "usage", "man"})


def command_hint(args: list[str], commands: list[str]) -> str | None:
    """What to run instead of an unknown first word: the question quoted after `investigate`,
    the command a near or other name means, or None (click's own line then)."""
    import difflib

    name = args[0]
    if name.startswith("-"):
        return None
    other = _OTHER_NAMES.get(name.lower())
    asked = next((a for a in args[1:] if a in commands), None)
    if name.lower() in _HELP_WORDS and asked is not None:
        # `investigator help runbook`, as git takes it: that command's --help (before: "No
        # such command 'help'", pointing at the list of commands). Alone, click's line says it.
        return f"the command is `investigator {asked} --help`"
    if len(name.split()) > 1 or name.endswith("?") or name.lower() in _QUESTION_WORDS:
        return _ask(" ".join(args) if len(name.split()) == 1 else name)
    if other == "investigate" and args[1:]:
        return _ask(" ".join(args[1:]))
    if other is not None:
        return f"the command is `investigator {other}`"
    close = difflib.get_close_matches(name.lower(), commands, n=1, cutoff=0.7)
    return f"did you mean `investigator {close[0]}`?" if close else None


def _ask(question: str) -> str:
    """The `investigate` command line that asks `question` (shortened, in double quotes)."""
    if len(question) > _QUOTED_MAX:
        question = question[: _QUOTED_MAX - 1] + "…"
    quoted = question.replace('"', "'")
    return f'to ask a question, run: investigator investigate "{quoted}"'


class _Interrupted(Exception):
    """Ctrl-C while a command ran (raised past click, which would print an empty line).
    `answered`: the command finished (the press was honoured at its end), so its answer is
    on stdout already, and `--json`'s stdout stays that one document."""

    def __init__(self, *, answered: bool = False) -> None:
        super().__init__("interrupted (Ctrl-C)")
        self.answered = answered


_state = {"debug": False, "json": False}
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
    for name in COMMANDS:
        cli.get_command(context, name)


def _interrupted(exc: BaseException | None = None) -> int:
    # A read thread the interrupt caught while it started is unknown to the interpreter's
    # exit handler, which would then wait for it forever: stop the pool's threads now.
    session = sys.modules.get("investigator.session")
    if session is not None:
        session.close_read_pool()
    # A command stopped part way through its writes says what it wrote (`InterruptedPartWay`:
    # an ingest's records, and how to finish).
    lines = [getattr(x, "line", None) for x in _chain(exc)]
    line = next((x for x in lines if isinstance(x, str)), "interrupted (Ctrl-C)")
    answered = exc is None or (isinstance(exc, _Interrupted) and exc.answered)
    return _fail(line, INTERRUPTED_EXIT, json_line=not answered)


def _chain(exc: BaseException | None) -> list[BaseException]:
    """`exc` and the exceptions it was raised from or while handling, once each."""
    chain: list[BaseException] = []
    while exc is not None and all(exc is not seen for seen in chain):
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    return chain


# What `{"error": {"code": ...}}` says for each exit code (docs/contracts.md section 6).
ERROR_CODES = {
    1: "error",
    2: "bad_input",
    3: "not_authorized",
    4: "neo4j_unavailable",
    INTERRUPTED_EXIT: "interrupted",
}


def _fail(message: str, code: int, *, json_line: bool = True) -> int:
    from investigator.terminal import printable

    first = message.strip().splitlines()[0] if message.strip() else "error"
    # An error may quote a file's name or an element's id: nothing in it acts on the terminal.
    sys.stderr.write(f"error: {printable(first)}\n")
    if _state["json"] and json_line:
        # A script reading stdout (`... --json | jq .`) gets the error as one JSON document,
        # not nothing: the same line, the same exit code.
        sys.stdout.write(json_error_line(first, code) + "\n")
        sys.stdout.flush()
    return code


def json_error_line(message: str, code: int) -> str:
    """`{"error": {"code": "bad_input", "exit_code": 2, "message": "..."}}` on one line."""
    import json

    kind = ERROR_CODES.get(code, "error")
    error = {"code": kind, "exit_code": code, "message": message}
    return json.dumps({"error": error}, ensure_ascii=False)


def asked_for_json(args: list[str]) -> bool:
    """True when `args` ask for a JSON document on stdout: `--json` among the options (before
    a `--` that ends them), or `trace`'s `--format json|prov-json`."""
    options = args[: args.index("--")] if "--" in args else args
    if "--json" in options:
        return True
    command = next((a for a in options if not a.startswith("-")), None)
    if command != "trace":
        return False
    formats = {f"--format={f}" for f in ("json", "prov-json")}
    pairs = zip(options, [*options[1:], ""], strict=True)
    return any(a in formats or (a == "--format" and b in ("json", "prov-json")) for a, b in pairs)


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
    outer = dict(_state)  # a nested run (the eval's commands) keeps the outer's flags
    _state["debug"] = "--debug" in args
    _state["json"] = asked_for_json(args)
    try:
        # Ctrl-C is never lost: our handler records each press (and raises it at once), so a
        # press whose KeyboardInterrupt a finalizer swallowed (printed as "Exception ignored"
        # and dropped, the command going on to exit 0) still ends the command: at a safe point
        # of its own (the writer's, a run's finish, purge's steps), else here at its end.
        with ctrl_c.held(stop_at_end=False) as hold:
            code = _run(args)
        if hold is not None and hold.pressed and code != INTERRUPTED_EXIT:
            code = _interrupted()
        return code
    finally:
        _state.update(outer)


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


def _driver_unavailable(exc: Exception) -> bool:
    """The driver's "server unavailable" errors (only possible once a command loaded it)."""
    errors = sys.modules.get("neo4j.exceptions")
    return errors is not None and isinstance(
        exc, (errors.ServiceUnavailable, errors.SessionExpired)
    )


def _run(args: list[str]) -> int:
    try:
        result = cli.main(args=args, prog_name="investigator", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.Abort as exc:
        # click turns Ctrl-C (KeyboardInterrupt) into Abort: exit 128 + SIGINT, as shells do.
        if isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt):
            return _interrupted(exc)
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
    except (KeyboardInterrupt, _Interrupted) as exc:
        return _interrupted(exc)
    except Exception as exc:  # the last line of defence: one line, exit 1
        if _driver_unavailable(exc):
            _debug_traceback()
            return _fail(f"Neo4j is unavailable: {exc}", 4)
        if _debug_traceback():
            return _fail(f"{type(exc).__name__}: {exc}", 1)
        return _fail(f"{type(exc).__name__}: {exc} (rerun with --debug for a traceback)", 1)
    return int(result) if isinstance(result, int) else 0


def finish_like_interpreter() -> None:
    """What the interpreter does at exit before it tears its modules down, in its order: wait
    for the threads still at work (a run's background start write, thread pools' queued
    calls), run the atexit callbacks, flush stdout and stderr."""
    try:
        shutdown_threads = getattr(threading, "_shutdown", None)
        if shutdown_threads is not None:
            with contextlib.suppress(Exception):
                shutdown_threads()
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()


def main() -> None:
    """Console-script entry point: ends the process once the command has finished.

    Tearing down the modules a command imported (the driver, pydantic's models, the
    investigation core) cost a new process about 0.1 s of CPU after its answer was printed
    (issue 12, docs/benchmarks.md); nothing a command writes waits for it, so the process
    ends as the warm process's children do: `finish_like_interpreter`, then `os._exit`.
    """
    code = run()
    if sys.gettrace() is not None or sys.getprofile() is not None:
        sys.exit(code)  # a debugger or profiler reports after the entry point returns
    finish_like_interpreter()
    os._exit(code)
