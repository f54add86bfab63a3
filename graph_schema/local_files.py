"""Reading an input file from the local disk, bounded: the ingest's files, and the machine's
ledger-head and chain-key files `verify` reads. Its own module so that a process that reads no
bundle (a CLI lookup, `verify`) does not import the bundle models (issue 12: a cold `runbook`
pays for what it uses)."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path


class InputTooLarge(Exception):
    """An ingest's input (a file, or a folder's files together) holds more than the bytes it
    may read; raised before it is read, so nothing of it is parsed or written."""

    def __init__(
        self,
        path: Path,
        size: int,
        limit: int,
        *,
        folder: bool = False,
        commit: str | None = None,
        history: bool = False,
    ) -> None:
        """`commit`: the size is of `path` as committed there (`--git-history`); `history`:
        of the committed versions read so far together."""
        super().__init__(path, size, limit)
        self.path = path
        self.size = size
        self.limit = limit
        self.folder = folder
        self.commit = commit
        self.history = history

    def line(self) -> str:
        """The refusal as one line for stderr."""
        what = "its files hold" if self.folder else "it holds"
        where = str(self.path)
        if self.commit is not None:
            where += f" at commit {self.commit[:12]}"
        if self.history:
            what = "the committed versions of its files (--git-history) hold at least"
        return (
            f"{where}: {what} {self.size:,} bytes, more than the {self.limit:,} an ingest "
            "reads (--max-bytes N raises the bound): nothing written"
        )


def read_local_file(path: Path, max_bytes: int, follow_links: bool = False) -> bytes:
    """The bytes of `path`, refusing a symbolic link even if one replaced the file since it
    was listed (`O_NOFOLLOW`, unless `follow_links`), anything but a regular file (a FIFO or
    device swapped in is never waited on or read without end), and a file over `max_bytes`
    before reading it (`InputTooLarge`; at most `max_bytes + 1` bytes are read if it grows
    meanwhile); other errors are `OSError`."""
    flags = os.O_RDONLY | os.O_NONBLOCK | (0 if follow_links else getattr(os, "O_NOFOLLOW", 0))
    descriptor = os.open(path, flags)
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        size = info.st_size
        if size > max_bytes:
            raise InputTooLarge(path, size, max_bytes)
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InputTooLarge(path, len(data), max_bytes)
    return data


def check_input_size(root: Path, files: Sequence[Path], max_bytes: int) -> None:
    """Raise `InputTooLarge` when `files` (listed at `root`) hold more than `max_bytes`
    together, by their sizes on disk: before any of them is read."""
    total = 0
    for file in files:
        try:
            total += file.lstat().st_size
        except OSError:
            continue  # reported as unreadable when it is read
    if total > max_bytes:
        raise InputTooLarge(root, total, max_bytes, folder=not root.is_file())
