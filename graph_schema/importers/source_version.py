"""The `source_version` of an imported file: its git commit, else its content hash.

A file that is tracked by git and unmodified in the work tree is versioned by the last
commit that touched it (`git:<sha>`), so the KG can point back to the exact revision. Any
other file (untracked, modified, or outside a repository) gets `sha256:<hex>` of its bytes,
which is just as stable and needs no git.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from graph_schema.canonical import sha256_bytes

_GIT_TIMEOUT_S = 10


def content_version(data: bytes) -> str:
    """`sha256:` + hex digest of the file's bytes."""
    return sha256_bytes(data)


def git_output(args: list[str], cwd: Path) -> str | None:
    """The stdout of `git ARGS` run in `cwd`, or None (no git, a failure, a timeout)."""
    git = shutil.which("git")
    if git is None:
        return None
    try:
        proc = subprocess.run(
            [git, *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout if proc.returncode == 0 else None


def git_version(path: Path) -> str | None:
    """`git:<sha>` of the last commit touching `path`, if tracked and clean; else None."""
    folder = path.parent
    name = path.name
    tracked = git_output(["ls-files", "--error-unmatch", "--", name], folder)
    if not tracked:
        return None
    dirty = git_output(["status", "--porcelain", "--", name], folder)
    if dirty is None or dirty.strip():
        return None
    sha = git_output(["log", "-1", "--format=%H", "--", name], folder)
    if not sha or not sha.strip():
        return None
    return "git:" + sha.strip()


def file_source_version(path: Path, data: bytes) -> str:
    """The source_version of one imported file (git commit if clean, else content hash)."""
    return git_version(path) or content_version(data)
