"""Run one command of the real `investigator` CLI in-process and capture what it printed.

The eval drives the product exactly as a user does (same argument parsing, same exit codes,
same `--json` documents); running in-process only saves the interpreter start-up per case.
"""

from __future__ import annotations

import contextlib
import io
import json
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


def call_cli(argv: list[str]) -> CliCall:
    """Invoke `investigator ARGV...` through `investigator.cli.run`, capturing its output."""
    # Imported here: the CLI package imports this module's package for `investigator eval`.
    from investigator.cli import _state, run

    saved = dict(_state)  # the nested run resets `--debug`; the outer command keeps its own
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run(list(argv))
    finally:
        _state.update(saved)
    return CliCall(argv=list(argv), exit_code=code, stdout=out.getvalue(), stderr=err.getvalue())
