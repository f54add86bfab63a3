"""The warm process: the CLI imported once, one forked child per command (issue 12).

`investigator.launcher` (the entry point) connects to this process's Unix socket, in a
directory only the user may enter, and sends its arguments, environment and working
directory with its stdin, stdout and stderr attached. The process checks the peer is the
same user and that the code on disk is still the code it loaded, then forks: the child
takes the client's descriptors, environment and directory and runs the command exactly as
`investigator.cli.run` would in a new process. Nothing but imports happens before the
fork (no driver, no connection, no thread), so every child starts as clean as a new
process, without the second of imports.

`investigator warm status` and `investigator warm stop` inspect and stop it.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import importlib
import os
import pkgutil
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import click

from investigator.warm_protocol import (
    EXITED,
    PROTOCOL,
    REFUSED,
    STARTED,
    code_fingerprint,
    idle_seconds,
    peer_uid,
    private_dir,
    receive_message,
    send_message,
    socket_path,
    state_dir,
    state_note,
    warm_status_text,
    warm_stop_text,
)

# What the warm process does not preload: the MCP server and OpenTelemetry pull in libraries
# that may start threads, and forking a process with threads is unsafe.
# What one connection ended in.
FORKED, SERVED, STOP = "forked", "served", "stop"

_NOT_PRELOADED = ("investigator.serving", "investigator.telemetry", "investigator.cli.mcp")


def _preload() -> None:
    from cypher_templates.registry import TemplateRegistry
    from investigator import cli as cli_module
    from investigator.lazy_pattern import compile_all

    cli_module._register()
    for package in ("graph_schema", "cypher_templates", "investigator"):
        module = importlib.import_module(package)
        for info in pkgutil.walk_packages(module.__path__, prefix=f"{package}."):
            if info.name.startswith(_NOT_PRELOADED) or info.name.endswith("__main__"):
                continue
            with contextlib.suppress(Exception):
                importlib.import_module(info.name)
    TemplateRegistry.packaged().warm_up()
    compile_all()  # the patterns a new process compiles on first use: once, before forking


def serve(socket_file: str | None = None, state_folder: str | None = None) -> None:
    """Run the warm process on `socket_file` (the state folder's socket, named by the client that
    resolved it in its own directory) until idle for INVESTIGATOR_WARM_IDLE seconds, noting
    beside it the `state_folder` it serves (so that `db stop` there finds it)."""
    path = Path(socket_file) if socket_file else socket_path()
    if not private_dir(path.parent, create=True):
        return
    lock = open(path.with_suffix(".lock"), "a+")  # noqa: SIM115 (held for the process's life)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another warm process serves this checkout
    fingerprint = code_fingerprint()  # before importing: an edit during the import shows
    _preload()
    if threading.active_count() != 1:
        return  # something started a thread: forking would not be safe
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    os.chmod(path, 0o600)
    note = state_note(path)
    with contextlib.suppress(OSError):
        note.write_text(state_folder or state_dir(), encoding="utf-8")
        os.chmod(note, 0o600)
    listener.listen(32)
    listener.settimeout(2.0)
    inode = path.stat().st_ino
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    gc.freeze()  # fewer copy-on-write pages in every child
    started = time.time()
    served = [0]  # commands forked so far (shown by `warm status`)
    last_used = time.monotonic()
    idle = idle_seconds()

    def retire() -> None:
        # Socket and lock go first, so that a new warm process can start at once.
        listener.close()
        if _still_ours(path, inode):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            with contextlib.suppress(FileNotFoundError):
                note.unlink()
        with contextlib.suppress(OSError):
            fcntl.flock(lock, fcntl.LOCK_UN)

    try:
        while time.monotonic() - last_used <= idle and _still_ours(path, inode):
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                outcome = _handle(conn, listener, lock, fingerprint, started, served, retire)
            if outcome == FORKED:  # a status request does not keep the process alive
                served[0] += 1
                last_used = time.monotonic()
            elif outcome == STOP:
                return
    finally:
        retire()


def _still_ours(path: Path, inode: int) -> bool:
    try:
        return path.stat().st_ino == inode
    except OSError:
        return False


def _handle(
    conn: socket.socket,
    listener: socket.socket,
    lock: IO[str],
    fingerprint: str,
    started: float,
    served: list[int],
    retire: Callable[[], None],
) -> str:
    """Serve one connection: FORKED a command, SERVED a reply, or STOP the process."""
    conn.settimeout(10.0)
    fds: list[int] = []
    try:
        if peer_uid(conn) != os.getuid():
            return SERVED
        request, fds = receive_message(conn, max_fds=3)
        control = request.get("control")
        if control in {"status", "stop"}:
            current = code_fingerprint() == fingerprint
            if control == "stop":
                retire()
            send_message(
                conn,
                {
                    "reply": str(control),
                    "pid": os.getpid(),
                    "since": started,
                    "current": current,
                    "served": served[0],
                },
            )
            return STOP if control == "stop" else SERVED
        if request.get("protocol") != PROTOCOL or len(fds) != 3:
            send_message(conn, {"reply": REFUSED, "why": "protocol"})
            return SERVED
        if code_fingerprint() != fingerprint:
            retire()
            send_message(conn, {"reply": REFUSED, "why": "stale"})
            return STOP  # the code changed on disk: the next command starts a new process
        if os.fork() == 0:
            _run_child(conn, listener, lock, request, fds)  # never returns
        return FORKED
    except (OSError, EOFError, ValueError):
        return SERVED
    finally:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def _run_child(
    conn: socket.socket,
    listener: socket.socket,
    lock: IO[str],
    request: dict[str, Any],
    fds: list[int],
) -> None:
    code = 1
    try:
        listener.close()
        lock.close()  # closing (not unlocking) leaves the parent's lock held
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        conn.settimeout(None)
        _adopt(request, fds)
        send_message(conn, {"reply": STARTED, "pid": os.getpid()})
        code = _run_command([str(arg) for arg in request.get("argv", [])])
    except BaseException:
        code = 1
        # Never lose an error: what escaped the command reaches the client's stderr, as a
        # new interpreter would print it.
        with contextlib.suppress(BaseException):
            traceback.print_exc(file=sys.stderr)
            sys.stderr.flush()
    finally:
        with contextlib.suppress(BaseException):
            send_message(conn, {"reply": EXITED, "code": code})
        os._exit(code)


def _adopt(request: dict[str, Any], fds: list[int]) -> None:
    """Become the client: its terminal, environment and working directory."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    fds.clear()
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in dict(request.get("env", {})).items()})
    os.chdir(str(request.get("cwd", "/")))
    time.tzset()  # a new interpreter reads TZ at start
    umask = request.get("umask")
    if isinstance(umask, int) and 0 <= umask <= 0o777:
        os.umask(umask)
    encodings = dict(request.get("stdio", {}))

    def stream(fd: int, name: str, mode: str, buffering: int) -> IO[str]:
        encoding, _, errors = str(encodings.get(name, "utf-8:strict")).partition(":")
        return open(
            fd, mode, buffering=buffering, encoding=encoding, errors=errors or None, closefd=False
        )

    # As a new interpreter would: stdout line-buffered on a terminal, stderr always.
    for name, fd, mode, buffering in (
        ("stdin", 0, "r", -1),
        ("stdout", 1, "w", 1 if os.isatty(1) else -1),
        ("stderr", 2, "w", 1),
    ):
        text_stream = stream(fd, name, mode, buffering)
        setattr(sys, name, text_stream)
        setattr(sys, f"__{name}__", text_stream)


def _run_command(argv: list[str]) -> int:
    from investigator import cli as cli_module

    sys.argv = ["investigator", *argv]
    try:
        code = cli_module.run(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    cli_module.finish_like_interpreter()  # as a new process's `main` does before `os._exit`
    return code


# -- `investigator warm status | stop` ---------------------------------------------------------


@click.group(name="warm")
def warm_group() -> None:
    """The warm process that saves every command its start-up (on by default).

    \b
    The first on-call read (investigate, runbook, runs, trace, replay,
    verify) starts it in the background, one per state folder; `db stop`
    stops that folder's. It exits after INVESTIGATOR_WARM_IDLE seconds
    without a command (default 900), and INVESTIGATOR_WARM=0 turns it off.

    \b
    Examples:
      investigator warm status
      investigator warm stop
    """


@warm_group.command(name="status")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status_command(as_json: bool) -> None:
    """Show whether a warm process serves this installation and state folder.

    \b
    Examples:
      investigator warm status
      investigator warm status --json
    """
    click.echo(warm_status_text(as_json))


@warm_group.command(name="stop")
def stop_command() -> None:
    """Stop this state folder's warm process (the next on-call read starts a new one).

    \b
    Examples:
      investigator warm stop
      INVESTIGATOR_WARM=0 investigator runbook --alert KubePodCrashLooping \\
          --subject acme/user:oncall
    """
    click.echo(warm_stop_text())


def register(cli: click.Group) -> None:
    """Attach `investigator warm` to the root group."""
    cli.add_command(warm_group)
