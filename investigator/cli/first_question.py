"""One line on the terminal before a command waits on a server that has not run it yet.

A Neo4j that has just started plans our templates slowly, and each template is proven
read-only (`EXPLAIN`) on a server the proof cache does not know yet: the first `runbook` or
`investigate` after `investigator db start` took 22-73 s on a busy machine with no word of
why, and a hurried user took it for a hang. So before such a command connects its reads, it
says once, on stderr and only when stderr is a terminal (a script's stderr and the JSON on
stdout stay as they were), that this first question pays that cost.

"Not run yet" is known from a small file beside the proof cache
(`cypher_templates/proofs.py`): the (server, command) pairs a command has finished on. The
server is the proof cache's key (agent with its version, the resolved address, database);
`db start` picks a new port, so a restarted local server is a new one. A remote server
restarted at the same address, same version, is not noticed, and cannot be cheaply: nothing
the CLI already asks tells a restart (`db.info()`'s store id and creation date survive it;
Bolt's per-process `connection_id` counter restarts, but the driver keeps it private and a
load balancer in front of several servers makes it jump), and a start time (JMX) would be
one more round trip before every command on a terminal. With `INVESTIGATOR_PROOF_CACHE=off`
nothing is remembered, so nothing is said.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import neo4j

from cypher_templates.proofs import default_proof_path, server_key

SERVED_FILE = "served-commands.json"
# Bounded like the proof cache: the oldest pairs go first.
MAX_ENTRIES = 256
NOTE = (
    "note: first {command} on this Neo4j server: it proves the templates read-only and "
    "plans them first, about 10-60 s (the next ones take about a second)"
)


def served_path() -> Path | None:
    """Where the finished (server, command) pairs are kept (None: nowhere, say nothing)."""
    proofs = default_proof_path()
    return None if proofs is None else proofs.parent / SERVED_FILE


def _read(path: Path) -> list[str]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []  # absent or damaged: every server is new
    return [k for k in raw if isinstance(k, str)] if isinstance(raw, list) else []


def _write(path: Path, entry: str) -> None:
    # Atomic replace, merged with what another process wrote meanwhile; a failure only means
    # the note is said once more.
    with contextlib.suppress(OSError):
        entries = [k for k in _read(path) if k != entry] + [entry]
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".served-", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(entries[-MAX_ENTRIES:]))
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


@contextlib.contextmanager
def first_question_note(driver: neo4j.Driver, database: str | None, command: str) -> Iterator[None]:
    """Say on the terminal, before the body runs, when `command` has never finished on this
    server; remember it once the body has."""
    path = served_path()
    if path is None or not sys.stderr.isatty():
        yield
        return
    entry = f"{command}|{server_key(driver, database)}"
    known = entry in _read(path)
    if not known:
        sys.stderr.write(NOTE.format(command=command) + "\n")
        sys.stderr.flush()
    yield
    if not known:
        _write(path, entry)
