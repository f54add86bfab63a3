"""Run one command of the real `investigator` CLI and capture what it printed.

The eval drives the product exactly as a user does (same argument parsing, same exit codes,
same `--json` documents). `investigator eval` hands in the CLI's own entry point, which runs
each command in-process and saves the interpreter start-up per case; without one, each
command runs as a new `python -m investigator` process. This package never imports the CLI
(layers point down: the CLI sits on top of the evaluation).
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict


class CliCall(BaseModel):
    """One CLI invocation: its arguments, exit code, stdout and the first stderr line."""

    model_config = ConfigDict(frozen=True)

    argv: list[str]
    exit_code: int
    stdout: str
    stderr: str

    def error_line(self) -> str | None:
        """The one-line error, if the command printed one."""
        lines = [ln for ln in self.stderr.splitlines() if ln.strip()]
        return lines[-1] if lines else None

    def json_document(self) -> dict[str, Any] | None:
        """stdout parsed as the one JSON object `--json` promises, or None."""
        text = self.stdout.strip()
        if not text:
            return None
        try:
            doc = json.loads(text)
        except json.JSONDecodeError:
            return None
        return doc if isinstance(doc, dict) else None


CliEntry = Callable[[list[str]], int]

_entry: list[CliEntry] = []


def use_cli_entry(entry: CliEntry | None) -> None:
    """Run commands in-process through `entry` (the CLI's `run`), or in a new process (None)."""
    _entry.clear()
    if entry is not None:
        _entry.append(entry)


def call_cli(argv: list[str]) -> CliCall:
    """Invoke `investigator ARGV...` and capture its exit code and output."""
    if not _entry:
        proc = subprocess.run(
            [sys.executable, "-m", "investigator", *argv],
            capture_output=True,
            text=True,
            check=False,
        )
        return CliCall(
            argv=list(argv), exit_code=proc.returncode, stdout=proc.stdout, stderr=proc.stderr
        )
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = _entry[0](list(argv))
    return CliCall(argv=list(argv), exit_code=code, stdout=out.getvalue(), stderr=err.getvalue())
