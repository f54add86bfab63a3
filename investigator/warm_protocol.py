"""The warm process's socket and protocol, shared by its client and the process itself.

Standard library only: the client (`investigator.launcher`) imports this on every command.
One warm process per interpreter, checkout and state folder listens on a Unix socket in a
directory only its user may enter; messages are length-prefixed JSON, the first request
carries the caller's stdin, stdout and stderr as file descriptors.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import struct
import sys
import tempfile
from pathlib import Path

WARM_ENV = "INVESTIGATOR_WARM"
IDLE_ENV = "INVESTIGATOR_WARM_IDLE"
DEFAULT_IDLE_SECONDS = 900.0
PROTOCOL = 1
MAX_MESSAGE_BYTES = 8 * 1024 * 1024  # arguments and environment; anything larger is refused
_SOURCE_ROOTS = ("investigator", "cypher_templates", "graph_schema")

# Replies of the warm process (one line of JSON each, length-prefixed).
REFUSED = "refused"  # nothing ran: run the command here instead
STARTED = "started"  # a child runs it; its pid follows
EXITED = "exited"  # the child's exit code follows


def warm_enabled(environ: os._Environ[str] | dict[str, str] | None = None) -> bool:
    """Whether commands may use (and start) the warm process."""
    env = os.environ if environ is None else environ
    value = env.get(WARM_ENV, "1").strip().lower()
    can = hasattr(os, "fork") and hasattr(socket, "send_fds") and hasattr(socket, "AF_UNIX")
    return can and value not in {"0", "off", "false", "no"}


def idle_seconds() -> float:
    """How long the warm process waits for a command before it exits."""
    try:
        return max(1.0, float(os.environ.get(IDLE_ENV, DEFAULT_IDLE_SECONDS)))
    except ValueError:
        return DEFAULT_IDLE_SECONDS


def package_root() -> Path:
    """The directory holding the three packages (the code the warm process has loaded)."""
    return Path(__file__).resolve().parents[1]


# A Unix socket's path holds at most 107 bytes (sun_path, 108 with its NUL): the directory
# leaves room for "/warm-<16 hex>.sock" (26 bytes).
_SOCKET_DIR_MAX = 107 - len("/warm-0123456789abcdef.sock")


def socket_dir() -> Path:
    """A directory only this user may enter: $XDG_RUNTIME_DIR/investigator, else the temp
    directory's, else /tmp's: the first whose socket paths fit a Unix socket's 107 bytes (a
    deep $XDG_RUNTIME_DIR or $TMPDIR meant no warm process, silently, every command cold).

    Under /tmp anyone could create the name first; `private_dir` refuses a directory that is
    not this user's alone, and both ends check the other's user id on the socket.
    """
    own = f"investigator-{os.getuid()}"
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    candidates = [Path(runtime) / "investigator"] if runtime else []
    # /tmp's name may be taken first by anyone: `private_dir` refuses it then (as above).
    candidates += [Path(tempfile.gettempdir()) / own, Path("/tmp") / own]  # noqa: S108
    for folder in candidates:
        if len(os.fsencode(folder)) <= _SOCKET_DIR_MAX:
            return folder
    return candidates[-1]


def state_dir() -> str:
    """The local server's state folder this command uses, absolute (the rule of
    `investigator.local_neo4j`: INVESTIGATOR_STATE_DIR, else investigator/neo4j under
    $XDG_STATE_HOME or ~/.local/state)."""
    folder = os.environ.get("INVESTIGATOR_STATE_DIR")
    if not folder:
        base = os.environ.get("XDG_STATE_HOME") or os.path.join(
            os.path.expanduser("~"), ".local", "state"
        )
        folder = os.path.join(base, "investigator", "neo4j")
    return os.path.realpath(folder)


def socket_path() -> Path:
    """One warm process per interpreter, code location (a venv and a checkout) and state
    folder, so that `db stop` of one folder stops its warm process and leaves the others'."""
    interpreter = os.path.realpath(sys.executable)  # python and python3 of one venv are one
    key = f"{interpreter}\0{sys.prefix}\0{package_root()}\0{state_dir()}\0{PROTOCOL}".encode()
    return socket_dir() / f"warm-{hashlib.sha256(key).hexdigest()[:16]}.sock"


def state_note(socket_file: Path) -> Path:
    """Beside a warm process's socket, the state folder it serves: `db stop` of that folder
    finds it from any checkout or interpreter (the socket's name hashes those too)."""
    return socket_file.with_suffix(".state")


def sockets_serving(folder: str) -> list[Path]:
    """The sockets of every warm process serving state folder `folder`, this command's own
    first: one per interpreter and checkout that asked there."""
    own = socket_path()
    found = [own]
    if not private_dir(own.parent, create=False):
        return found
    for note in sorted(own.parent.glob("warm-*.state")):
        try:
            served = note.read_text(encoding="utf-8")
        except OSError:
            continue
        if served == folder and note.with_suffix(".sock") != own:
            found.append(note.with_suffix(".sock"))
    return found


def private_dir(path: Path, create: bool) -> bool:
    """True when `path` is a directory owned by this user that nobody else may enter."""
    if create:
        try:
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            return False
    try:
        info = path.lstat()
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.getuid()
        and not info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
    )


def code_fingerprint() -> str:
    """Sizes and modification times of our source files and of the installed packages.

    The warm process compares it on every command and refuses when it changed, so an edit
    or an upgrade never runs against code loaded before it.
    """
    digest = hashlib.sha256()
    root = package_root()
    for name in _SOURCE_ROOTS:
        for directory, dirs, files in os.walk(root / name):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for file in sorted(files):
                try:
                    info = os.stat(os.path.join(directory, file))
                except OSError:
                    continue
                digest.update(f"{directory}/{file}:{info.st_size}:{info.st_mtime_ns}\n".encode())
    for site_dir in sorted({p for p in sys.path if p.endswith("site-packages")}):
        try:
            digest.update(f"{site_dir}:{os.stat(site_dir).st_mtime_ns}\n".encode())
        except OSError:
            continue
    return digest.hexdigest()


def send_message(
    conn: socket.socket, message: dict[str, object], fds: list[int] | None = None
) -> None:
    """One length-prefixed JSON message, with file descriptors attached to its first bytes."""
    body = json.dumps(message).encode()
    data = struct.pack("!I", len(body)) + body
    if fds:
        sent = socket.send_fds(conn, [data], fds)
        data = data[sent:]
    if data:
        conn.sendall(data)


def receive_message(
    conn: socket.socket, max_fds: int = 0, pending: bytearray | None = None
) -> tuple[dict[str, object], list[int]]:
    """The next message and the descriptors that came with it; raises EOFError at the end.

    Without `pending` the message must be all the connection holds (one request, one reply).
    With it, bytes that arrive after the message are kept there for the next call, and read
    first: a command that ends at once makes its child send STARTED and EXITED back to back,
    and a client descheduled between its request and its read receives both in one read."""
    fds: list[int] = []
    if pending:
        buffer = bytearray(pending)
        pending.clear()
    else:
        if max_fds:
            data, fds, _flags, _addr = socket.recv_fds(conn, 65536, max_fds)
        else:
            data = conn.recv(65536)
        buffer = bytearray(data)
    if not buffer:
        raise EOFError("connection closed")
    while len(buffer) < 4:
        chunk = conn.recv(65536)
        if not chunk:
            raise EOFError("connection closed")
        buffer += chunk
    (size,) = struct.unpack("!I", bytes(buffer[:4]))
    if size > MAX_MESSAGE_BYTES:
        raise EOFError("message too large")
    while len(buffer) < 4 + size:
        chunk = conn.recv(65536)
        if not chunk:
            raise EOFError("connection closed")
        buffer += chunk
    if len(buffer) > 4 + size:
        if pending is None:  # one request, one reply at a time: nothing may follow
            raise EOFError("unexpected data")
        pending += buffer[4 + size :]
    message = json.loads(bytes(buffer[4 : 4 + size]))
    if not isinstance(message, dict):
        raise EOFError("malformed message")
    return message, fds


def peer_uid(conn: socket.socket) -> int:
    """The user id of the process at the other end of a Unix socket (Linux SO_PEERCRED)."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid


def ask_warm(control: str, path: Path | None = None) -> dict[str, object] | None:
    """Send a control request ("status" or "stop") to this state folder's warm process (or
    the one at `path`); None when none answers."""
    path = socket_path() if path is None else path
    if not private_dir(path.parent, create=False):
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(5.0)
    try:
        conn.connect(str(path))
        if peer_uid(conn) != os.getuid():
            return None
        send_message(conn, {"protocol": PROTOCOL, "control": control})
        reply, _ = receive_message(conn)
        return reply
    except (OSError, EOFError, ValueError):
        return None
    finally:
        conn.close()


def warm_status_text(as_json: bool) -> str:
    """What `investigator warm status [--json]` prints."""
    reply = ask_warm("status")
    info = {
        "running": reply is not None,
        "pid": reply.get("pid") if reply else None,
        "current": reply.get("current") if reply else None,
        "served": reply.get("served") if reply else None,
        "socket": str(socket_path()),
        "state_dir": state_dir(),
    }
    # Those other checkouts or interpreters started for this folder (`db stop` stops them too).
    others = []
    for path in sockets_serving(state_dir())[1:]:
        answer = ask_warm("status", path)
        if answer is not None:
            others.append({"pid": answer.get("pid"), "socket": str(path)})
    info["others"] = others
    if as_json:
        return json.dumps(info, sort_keys=True)
    lines = []
    if reply is None:
        lines.append(f"no warm process of this checkout ({info['socket']})")
    else:
        state = "current" if info["current"] else "stale, restarts on the next command"
        lines.append(f"warm process {info['pid']} at {info['socket']} ({state})")
    lines += [
        f"warm process {o['pid']} at {o['socket']} (another checkout's or interpreter's, "
        "same state folder)"
        for o in others
    ]
    return "\n".join(lines)


def stop_warm_processes() -> list[int]:
    """Stop every warm process serving this state folder, whichever checkout or interpreter
    started it; their pids, this command's own first."""
    stopped = []
    for path in sockets_serving(state_dir()):
        reply = ask_warm("stop", path)
        pid = reply.get("pid") if reply else None
        if isinstance(pid, int):
            stopped.append(pid)
    return stopped


def warm_stop_text() -> str:
    """What `investigator warm stop` prints (after stopping the state folder's processes)."""
    pids = stop_warm_processes()
    if not pids:
        return "no warm process"
    return "\n".join(f"stopped warm process {pid}" for pid in pids)
