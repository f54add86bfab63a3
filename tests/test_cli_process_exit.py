"""A new CLI process ends once its command has finished, without tearing its modules down.

Tearing down what a recorded command imported (the driver, pydantic's models, the
investigation core) cost a cold `runbook` about 0.1 s of CPU after its answer was printed
(issue 12, docs/benchmarks.md "Cold CLI: where a new process waits"). `investigator.cli.main`
now ends as the warm process's children do: the command's threads joined, atexit run,
stdout and stderr flushed, then `os._exit` with the command's exit code. What the command
wrote (its answer, its recorded run) is all there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import neo4j

from investigator.settings import ConnectionSettings

REPO = Path(__file__).resolve().parents[1]
AS_OF = "2026-07-23T10:03:00Z"

# `investigator ARGS` through the console script's entry point, with an atexit callback
# and an object that says when the interpreter tears the main module down.
_ENTRY = """
import atexit, sys
class TornDown:
    def __del__(self):
        sys.__stderr__.write("modules torn down\\n")
probe = TornDown()
atexit.register(lambda: print("atexit ran", flush=True))
sys.argv = ["investigator", *sys.argv[1:]]
from investigator.launcher import main
main()
"""


def _new_process(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _ENTRY, *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=REPO,
        env={**os.environ, "INVESTIGATOR_WARM": "0"},
        check=False,
    )


def test_a_cold_recorded_lookup_ends_after_its_answer_and_its_run_verifies(
    demo_graph: neo4j.Driver, cli_env: ConnectionSettings
) -> None:
    done = _new_process(
        "runbook", "--service", "svc:payment-api", "--as-of", AS_OF, "--subject", "user:bob",
        "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer, atexit_line = done.stdout.rstrip("\n").rsplit("\n", 1)
    doc = json.loads(answer)
    assert doc["runbook"]["id"] == "runbook:payment-recovery@v3", doc["runbook"]
    assert atexit_line == "atexit ran"
    assert "modules torn down" not in done.stderr, done.stderr
    # The run was written in full before the process ended: complete, and its chain verifies.
    verified = _new_process("verify", doc["run_id"], "--subject", "user:bob", "--json")
    assert verified.returncode == 0, verified.stderr
    report = json.loads(verified.stdout.rstrip("\n").rsplit("\n", 1)[0])
    assert report["verified"] is True and report["incomplete_runs"] == [], report


def test_a_usage_error_keeps_its_exit_code_and_its_one_line() -> None:
    done = _new_process("runbook", "--bogus")
    assert done.returncode == 2, done
    assert done.stderr.splitlines() == [
        "error: No such option '--bogus'. (see `investigator runbook --help`)"
    ], done.stderr
    assert done.stdout == "atexit ran\n"
