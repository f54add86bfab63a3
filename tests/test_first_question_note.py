"""The first command of its kind on a server says on the terminal why it may take a minute,
on a real Neo4j.

A hurried user's finding: the first `runbook` after `investigator db start` took 22-73 s with
no word on the terminal (the templates were being proven read-only and planned), and looked
hung. The note is one line on stderr, only when stderr is a terminal, never on stdout.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import neo4j

RUNBOOK = [
    "runbook", "--service", "svc:payment-api", "--as-of", "2026-07-23T10:03:00Z",
    "--subject", "acme/user:bob",
]  # fmt: skip
NOTE = (
    "note: first runbook lookup on this Neo4j server: it proves the templates read-only and "
    "plans them first, about 10-60 s (the next ones take about a second)"
)


def _on_a_terminal(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """`investigator ARGS` in its own process, stderr on a pseudo-terminal, stdout a pipe."""
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "investigator", *args],
            stdout=subprocess.PIPE,
            stderr=follower,
            stdin=subprocess.DEVNULL,
            env=env,
            timeout=180,
            check=False,
        )
        os.close(follower)
        follower = -1
        err = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal's other end is closed: everything was read
                break
            if not chunk:
                break
            err += chunk
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    return done.returncode, done.stdout.decode(), err.decode().replace("\r\n", "\n")


def test_the_first_lookup_on_a_server_says_why_it_waits_once(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env: object, tmp_path: Path
) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "INVESTIGATOR_WARM": "0"}
    env.pop("INVESTIGATOR_PROOF_CACHE", None)
    code, out, err = _on_a_terminal([*RUNBOOK, "--json"], env)
    assert code == 0, err
    assert err == NOTE + "\n", err
    assert json.loads(out)["runbook"]["id"] == "runbook:payment-recovery@v3"  # stdout: JSON only
    # The second lookup on the same server says nothing.
    code, out, err = _on_a_terminal(RUNBOOK, env)
    assert (code, err) == (0, ""), err
    assert out.startswith("Runbook   Payment recovery runbook v3"), out


def test_no_note_when_stderr_is_not_a_terminal(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env: object, tmp_path: Path
) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "INVESTIGATOR_WARM": "0"}
    env.pop("INVESTIGATOR_PROOF_CACHE", None)
    done = subprocess.run(
        [sys.executable, "-m", "investigator", *RUNBOOK, "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
