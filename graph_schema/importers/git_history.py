"""A file's committed versions from git, oldest first (for `ingest --git-history`).

Each commit that touched the file gives one `FileVersion`: its sha, its committer time (the
moment the change took effect in the repository) and the file's bytes at that commit, or
`data=None` when the commit deleted the file. Renames are not followed: a file's history
starts at the commit that created it under its current path.

Every version is bounded before git is asked for its bytes (`git cat-file -s`), as the ingest
bounds the files it reads: one over `--max-bytes`, or versions together over it, raise
`InputTooLarge` (one line, exit 2) before any of the import is parsed or written.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from graph_schema.local_files import InputTooLarge

_GIT_TIMEOUT_S = 30


class FileVersion(BaseModel):
    """One commit of one file."""

    model_config = ConfigDict(frozen=True)

    sha: str
    committed_at: datetime
    data: bytes | None  # None: this commit deleted the file


def _git(args: list[str], cwd: Path) -> bytes | None:
    git = shutil.which("git")
    if git is None:
        return None
    try:
        proc = subprocess.run(
            [git, *args], cwd=cwd, capture_output=True, timeout=_GIT_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout if proc.returncode == 0 else None


class HistoryBudget:
    """The bytes one `--git-history` import may still read from git: every committed
    version counts against `limit` (the ingest's `--max-bytes`), like the work tree's files."""

    def __init__(self, root: Path, limit: int) -> None:
        self.root = root
        self.limit = limit
        self.read = 0

    def take(self, path: Path, sha: str, size: int) -> None:
        """Count `size` bytes of `path` at `sha`, or raise `InputTooLarge` before they are read."""
        if size > self.limit:
            raise InputTooLarge(path, size, self.limit, commit=sha)
        self.read += size
        if self.read > self.limit:
            raise InputTooLarge(self.root, self.read, self.limit, history=True)


def _blob_size(folder: Path, sha: str, name: str) -> int | None:
    # The size git stores, asked before the bytes: a 2 GB blob is never held in memory.
    out = _git(["cat-file", "-s", f"{sha}:./{name}"], folder)
    text = out.strip() if out is not None else b""
    return int(text) if text.isdigit() else None


def in_work_tree(path: Path) -> bool:
    """Whether `path` (a file or folder) is inside a git work tree."""
    folder = path if path.is_dir() else path.parent
    out = _git(["rev-parse", "--is-inside-work-tree"], folder)
    return out is not None and out.strip() == b"true"


def is_uncommitted(path: Path) -> bool:
    """Whether the work tree copy of `path` differs from its last commit."""
    out = _git(["status", "--porcelain", "--", path.name], path.parent)
    return bool(out and out.strip())


class NotTaken(BaseModel):
    """A commit of a file that is no version: a later commit is dated at or before it."""

    model_config = ConfigDict(frozen=True)

    commit: FileVersion
    replaced_by: FileVersion

    def line(self, file: Path) -> str:
        """Which commit was not taken, and why, in one line."""
        when = self.commit.committed_at.isoformat().replace("+00:00", "Z")
        then = self.replaced_by.committed_at.isoformat().replace("+00:00", "Z")
        why = (
            "replaced within the same second"
            if self.commit.committed_at == self.replaced_by.committed_at
            else "its date is out of order (clock skew or a forged date)"
        )
        return (
            f"{file}: commit {self.commit.sha[:12]} (dated {when}) not imported as a "
            f"version: the later commit {self.replaced_by.sha[:12]} is dated {then}, "
            f"{why}; its text is in git only (--git-history)"
        )


def file_history(
    path: Path, budget: HistoryBudget, not_taken: list[NotTaken] | None = None
) -> list[FileVersion]:
    """Every committed version of `path`, oldest first; [] when git does not track it.
    Each version's size is taken from `budget` before its bytes are read (`InputTooLarge`).

    Versions follow commit order; a commit a later one is dated at or before cannot be
    placed in time and is no version: it is appended to `not_taken` (said, never silent)."""
    folder, name = path.parent, path.name
    log = _git(["log", "--no-renames", "--format=%H%x09%ct", "--", name], folder)
    if not log:
        return []
    versions: list[FileVersion] = []
    for line in reversed(log.decode("ascii", "replace").splitlines()):
        sha, _, stamp = line.partition("\t")
        if not sha or not stamp.strip().isdigit():
            continue
        size = _blob_size(folder, sha, name)
        if size is not None:
            budget.take(path, sha, size)
        data = _git(["show", f"{sha}:./{name}"], folder) if size is not None else None
        at = datetime.fromtimestamp(int(stamp), tz=UTC)
        if versions and data is not None and versions[-1].data == data:
            continue  # a commit that did not change the bytes (mode, merge) is no new version
        version = FileVersion(sha=sha, committed_at=at, data=data)
        while versions and versions[-1].committed_at >= at:
            # Replaced within the same second (or clock skew): never in force.
            dropped = versions.pop()
            if not_taken is not None:
                not_taken.append(NotTaken(commit=dropped, replaced_by=version))
        versions.append(version)
    return versions


_SHA = re.compile(r"^[0-9a-f]{7,64}$")


def file_at(folder: Path, sha: str, rel: str, max_bytes: int) -> bytes | None:
    """The bytes of `rel` (relative to `folder`) at commit `sha`, or None (no such commit or
    file, not a work tree, no git, or more than `max_bytes`: never read). `sha` comes from a
    stored `git:` source_version: only a hex commit id is passed to git."""
    if not _SHA.match(sha):
        return None
    size = _blob_size(folder, sha, rel)
    if size is None or size > max_bytes:
        return None
    return _git(["show", f"{sha}:./{rel}"], folder)
