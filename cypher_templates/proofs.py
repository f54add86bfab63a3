"""Read-only proofs of template texts, kept across processes (issue 12).

Before a rendered template first runs, Neo4j's planner must classify its exact text as
read-only (query type `r`, from `EXPLAIN`). That classification depends only on the text and
on the server (its version and procedures), so a proof is recorded per server and
`template_hash` and reused by later processes: a new CLI process no longer pays one EXPLAIN
per template. A template whose text changes has a new hash and is proven again; a proof made
on another server or Neo4j version does not count.

The file is a cache, never an authority to widen anything: the executor still refuses any
text that is not the registry's own rendering, and a missing, unreadable or foreign file
just means "prove again". Location: `INVESTIGATOR_PROOF_CACHE` (`off` disables it), else
`$XDG_CACHE_HOME/graph-investigator/template-proofs.json`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import neo4j

PROOF_CACHE_ENV = "INVESTIGATOR_PROOF_CACHE"
_FORMAT = 1
# Bounds, so the file stays small whatever runs against it.
MAX_SERVERS = 64
MAX_PROOFS_PER_SERVER = 4096
# A server whose kept proofs a process uses is moved to the newest, so that servers coming
# and going do not push out one in use; only when it is not among this many newest, so a
# process on a recently used server rewrites nothing.
RECENT_SERVERS = 16
_HASH = re.compile(r"^sha256:[0-9a-f]{64}$")


def default_proof_path() -> Path | None:
    """Where proofs are kept (None: keep them in memory only)."""
    return cache_file_path(PROOF_CACHE_ENV, "template-proofs.json")


def cache_file_path(env_var: str, file_name: str) -> Path | None:
    """A cache file named by `env_var` (`off`, `0`, `none` or empty: None, no file), else
    `file_name` in `$XDG_CACHE_HOME/graph-investigator`."""
    explicit = os.environ.get(env_var)
    if explicit is not None:
        return None if explicit.strip().lower() in ("", "off", "0", "none") else Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "graph-investigator" / file_name


def server_key(driver: neo4j.Driver, database: str | None) -> str:
    """What a proof is kept by: the planner's verdict depends on the text and the server
    (version, procedures, database), not on the data."""
    info = driver.get_server_info()
    return f"{info.agent}|{info.address}|{database or ''}"


class ReadOnlyProofs:
    """The set of (server, template_hash) pairs proven read-only, backed by a JSON file."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._proofs: dict[str, list[str]] | None = None
        # What this process proved, by server: what a write adds for a server it marks.
        self._mine: dict[str, list[str]] = {}
        # The servers this process used (a kept proof, or one it proved) since its last
        # write, the last used last: the only ones its next write marks as the newest, so a
        # long-lived process (the warm one) does not keep moving a server it used once
        # ahead of the servers other processes use now.
        self._unmarked: dict[str, None] = {}
        # A run's concurrent reads may prove two templates at once.
        self._lock = threading.Lock()

    @classmethod
    def default(cls) -> ReadOnlyProofs:
        """Proofs at the default location (see the module docstring)."""
        return cls(default_proof_path())

    def _load(self) -> dict[str, list[str]]:
        if self._proofs is not None:
            return self._proofs
        self._proofs = {}
        if self.path is None:
            return self._proofs
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return self._proofs  # absent or damaged: prove again
        if not isinstance(raw, dict) or raw.get("format") != _FORMAT:
            return self._proofs
        servers = raw.get("proofs")
        if isinstance(servers, dict):
            for server, hashes in servers.items():
                if isinstance(server, str) and isinstance(hashes, list):
                    self._proofs[server] = [
                        h for h in hashes if isinstance(h, str) and _HASH.match(h)
                    ]
        return self._proofs

    def is_proven(self, server: str, template_hash: str) -> bool:
        """True when `template_hash` was planned read-only by `server` (a used server
        counts as recent: see `RECENT_SERVERS`)."""
        with self._lock:
            proofs = self._load()
            proven = template_hash in proofs.get(server, ())
            if proven and self.path is not None and server not in self._unmarked:
                # Once per server between writes (a failed write is not tried per call).
                self._unmarked[server] = None
                if server not in list(proofs)[-RECENT_SERVERS:]:
                    self._write()
            return proven

    def record(self, server: str, template_hash: str) -> None:
        """Remember a proof (in memory, and in the file when there is one)."""
        with self._lock:
            self._record(server, template_hash)

    def _record(self, server: str, template_hash: str) -> None:
        proofs = self._load()
        hashes = proofs.get(server, [])
        if template_hash in hashes:
            return
        mine = self._mine.pop(server, [])
        self._mine[server] = [*mine, template_hash][-MAX_PROOFS_PER_SERVER:]
        _trim(self._mine)
        # The server just used is the newest: last in the order the bound trims from.
        proofs.pop(server, None)
        proofs[server] = [*hashes, template_hash][-MAX_PROOFS_PER_SERVER:]
        _trim(proofs)
        if self.path is not None:
            self._unmarked.pop(server, None)
            self._unmarked[server] = None
            self._write()

    def _write(self) -> None:
        assert self.path is not None
        # Under a lock beside the file, what is on disk now (its order: oldest server first),
        # the servers this process used since its last write moved to the newest (with the
        # proofs it made on them), trimmed to the bound after the merge: a merge before the
        # trim re-added the servers the trim had dropped, and two writers at once each kept
        # the other's whole list (101 to 144 servers for 64).
        # A server used earlier than that stays where it is (or dropped); one used since,
        # that another writer dropped, is re-added only with proofs this process made on
        # it. Atomic replace: a reader never sees a torn file.
        with contextlib.suppress(OSError), _locked(self.path):
            merged = ReadOnlyProofs(self.path)._load()
            for server in self._unmarked:
                kept = merged.pop(server, None)
                if server in self._mine:
                    kept = kept or []
                    kept += [h for h in self._mine[server] if h not in kept]
                if kept is not None:  # used, not proven on, and dropped: not re-added
                    merged[server] = kept[-MAX_PROOFS_PER_SERVER:]
            _trim(merged)
            self._proofs = merged
            self.path.parent.mkdir(parents=True, exist_ok=True)
            body = json.dumps({"format": _FORMAT, "proofs": merged})
            fd, tmp = tempfile.mkstemp(prefix=".proofs-", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(body)
                os.replace(tmp, self.path)
                self._unmarked.clear()
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


def _trim(proofs: dict[str, list[str]]) -> None:
    """Drop the oldest servers (first in order) beyond the bound; the newest stays."""
    while len(proofs) > MAX_SERVERS:
        proofs.pop(next(iter(proofs)))


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on a file beside `path` while one process merges and writes (where
    the platform has no `fcntl`, writers are not serialized: a lost proof is proven again)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f".{path.name}.lock"), "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
