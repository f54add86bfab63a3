"""The `investigator` entry point: hand the command to a warm, preloaded process when one runs.

A new Python process pays about a second before it can ask Neo4j anything: the interpreter,
the driver, pydantic's model classes (issue 12). The warm process (`investigator.cli.warm`)
has paid that once; for each command it forks a child that adopts this process's arguments,
environment, working directory and terminal (stdin, stdout and stderr are passed as file
descriptors), so the command behaves exactly as if run here, minus the imports.

This module is the client. It imports only the standard library, so that the fast path
stays fast, and it falls back to running the command in this process whenever the warm
process is absent, stale (its code changed on disk), or not ours (another user's socket).
The first on-call read (`WARM_STARTERS`) with a Neo4j to ask (`server_configured`: none after
`db stop`) therefore starts a warm process in the background, one per state folder; it exits
after `INVESTIGATOR_WARM_IDLE` seconds without a command (default 900), or at that folder's
`db stop`. `INVESTIGATOR_WARM=0` turns the whole mechanism off.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys

from investigator.warm_protocol import (
    EXITED,
    PROTOCOL,
    STARTED,
    package_root,
    peer_uid,
    private_dir,
    receive_message,
    send_message,
    socket_dir,
    socket_path,
    state_dir,
    warm_enabled,
    warm_status_text,
    warm_stop_text,
)

# Long-running or self-managing commands keep their own process.
NOT_FORWARDED = frozenset({"mcp", "warm"})
# The commands worth a warm process: the on-call reads, asked again within minutes. Any
# command is served by one that runs, but the others (`db`, `schema`, `ingest`, `--help`, ...)
# start none: a user who ran `db stop` must find nothing of ours left running.
WARM_STARTERS = frozenset({"investigate", "runbook", "runs", "trace", "replay", "verify"})
_HELP_OR_VERSION = frozenset({"-h", "--help", "--version"})


def _stdio_encodings() -> dict[str, str]:
    out: dict[str, str] = {}
    for name in ("stdin", "stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and getattr(stream, "encoding", None):
            out[name] = f"{stream.encoding}:{stream.errors}"
    return out


def _umask() -> int:
    mask = os.umask(0o077)  # reading the mask means setting it: put it straight back
    os.umask(mask)
    return mask


def forward(args: list[str]) -> int | None:
    """Run `args` in a child of the warm process; None when it must run here instead."""
    path = socket_path()
    if not private_dir(path.parent, create=False):
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            conn.connect(str(path))
            if peer_uid(conn) != os.getuid():
                return None
            send_message(
                conn,
                {
                    "protocol": PROTOCOL,
                    "argv": args,
                    "env": dict(os.environ),
                    "cwd": os.getcwd(),
                    "stdio": _stdio_encodings(),
                    "umask": _umask(),
                },
                fds=[0, 1, 2],
            )
            pending = bytearray()  # the child's EXITED may come in the same read as STARTED
            reply, _ = receive_message(conn, pending=pending)
        except (OSError, EOFError, ValueError):
            return None  # nothing started: absent, stale socket, closed stdio, ...
        if reply.get("reply") != STARTED or not isinstance(reply.get("pid"), int):
            return None
        child = int(reply["pid"])  # type: ignore[call-overload]
        return _wait_for_exit(conn, child, pending)
    finally:
        conn.close()


def _wait_for_exit(conn: socket.socket, child: int, pending: bytearray) -> int:
    # The terminal's Ctrl-C reaches this process; the command runs in the child.
    def relay(signum: int, _frame: object) -> None:
        with contextlib.suppress(OSError):
            os.kill(child, signum)

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, relay)
    while True:
        try:
            reply, _ = receive_message(conn, pending=pending)
        except InterruptedError:
            continue
        except (OSError, EOFError, ValueError):
            # The command started but its process ended without an exit code: never re-run it.
            sys.stderr.write("error: the warm investigator process ended unexpectedly\n")
            return 1
        if reply.get("reply") == EXITED:
            code = reply.get("code")
            return code if isinstance(code, int) else 1


# The warm process imports the same checkout as this client, wherever it was started from.
_SERVE = (
    "import sys; sys.path.insert(0, {root!r}); from investigator.cli.warm import serve; "
    "serve({socket!r}, {state!r})"
)


def command_name(args: list[str]) -> str | None:
    """The command word of an argument list (the first argument that is not an option)."""
    return next((arg for arg in args if not arg.startswith("-")), None)


def starts_warm(args: list[str]) -> bool:
    """Whether this command, finding no warm process, starts one (an on-call read, not help,
    with a Neo4j to ask: `server_configured`)."""
    return (
        command_name(args) in WARM_STARTERS
        and not _HELP_OR_VERSION.intersection(args)
        and server_configured()
    )


def _config_names_uri() -> bool:
    """Whether the config file (`INVESTIGATOR_CONFIG`, else $XDG_CONFIG_HOME or ~/.config
    investigator/config.toml) names a `[neo4j] uri`; True when it cannot be read (the
    command then says what is wrong with it)."""
    explicit = os.environ.get("INVESTIGATOR_CONFIG")
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    path = explicit or os.path.join(base, "investigator", "config.toml")
    if not os.path.isfile(path):
        return bool(explicit)
    import tomllib

    try:
        with open(path, "rb") as fh:
            section = tomllib.load(fh).get("neo4j")
    except (OSError, ValueError):
        return True
    return not isinstance(section, dict) or bool(section.get("uri"))


def _local_server_runs() -> bool:
    """Whether this state folder's local server runs: its state file records a pid (`db
    stop` clears it) of a live process."""
    try:
        with open(os.path.join(state_dir(), "state.json"), encoding="utf-8") as fh:
            pid = json.load(fh).get("pid")
    except (OSError, ValueError, AttributeError):
        return False
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def server_configured() -> bool:
    """Whether a command here has a Neo4j to ask, as `investigator.settings` finds one:
    `NEO4J_URI`, the config file's `[neo4j] uri`, or this state folder's running local
    server. Without one a command fails at once ("no Neo4j configured", "the local Neo4j
    ... is stopped"), and a warm process started for it would only linger (found after
    `db stop`, e31-qa m7)."""
    return bool(os.environ.get("NEO4J_URI")) or _config_names_uri() or _local_server_runs()


def spawn_server() -> None:
    """Start a warm process in the background (it exits by itself when idle or not needed)."""
    if not private_dir(socket_dir(), create=True):
        return
    # The socket is named here: the process runs in / and a relative state folder is ours.
    code = _SERVE.format(root=str(package_root()), socket=str(socket_path()), state=state_dir())
    with contextlib.suppress(OSError):
        subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            start_new_session=True,
            cwd="/",
        )


def main() -> None:
    """Console-script entry point: the warm process when it serves, this process otherwise."""
    args = sys.argv[1:]
    # The control commands answer without loading the CLI (their click versions print the same).
    if args in (["warm", "status"], ["warm", "status", "--json"]):
        print(warm_status_text(as_json=len(args) == 3))
        sys.exit(0)
    if args == ["warm", "stop"]:
        print(warm_stop_text())
        sys.exit(0)
    command = command_name(args)
    use_warm = warm_enabled() and command is not None and command not in NOT_FORWARDED
    if use_warm:
        code = forward(args)
        if code is not None:
            sys.exit(code)
        if starts_warm(args):
            spawn_server()
    from investigator.cli import main as run_here

    run_here()
