"""Ctrl-C (a real SIGINT to a real `investigator` process) on the real server (explorer
e29 finding 18).

- `ingest` stopped part way says how many of its records were written and that the same
  ingest finishes it (not only "interrupted"): the count is what the graph holds, and the
  re-ingest completes the tenant (also when it is itself interrupted, the path of a tenant
  that has records).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import neo4j

TENANT = "synthqa"
INTERRUPTED_LINE = re.compile(
    r"error: interrupted \(Ctrl-C\) after (\d+) of (\d+) records were written \(node and "
    r"relationship records, tombstones\); run the same ingest again to finish"
)


def _process(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "investigator", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "INVESTIGATOR_WARM": "0"},
    )


def _count(driver: neo4j.Driver, query: str, **params: object) -> int:
    records, _, _ = driver.execute_query(query, **params)
    return int(records[0]["c"])


def _records(driver: neo4j.Driver) -> int:
    """The tenant's node and relationship records (every version, tombstones included)."""
    nodes = _count(driver, "MATCH (n:KG {tenant: $t}) RETURN count(n) AS c", t=TENANT)
    edges = _count(driver, "MATCH (:KG {tenant: $t})-[r]->() RETURN count(r) AS c", t=TENANT)
    return nodes + edges


def _interrupt_when(
    proc: subprocess.Popen[str], ready: Callable[[], bool], after: float = 0.0
) -> tuple[int, str, str]:
    """Send SIGINT to `proc` once `ready()` (polled), `after` seconds later."""
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline:
        if ready():
            time.sleep(after)
            proc.send_signal(signal.SIGINT)
            break
        time.sleep(0.02)
    out, err = proc.communicate(timeout=300)
    return proc.returncode, out, err


# -- ingest -----------------------------------------------------------------------------------


def test_an_interrupted_ingest_says_what_it_wrote_and_the_same_ingest_finishes_it(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, tmp_path: Path
) -> None:
    driver = demo_graph
    bundle = tmp_path / "synth.json"
    made = invoke(
        "generate", "--services", "30", "--seed", "3", "--tenant", TENANT, "--out", str(bundle)
    )
    assert made.code == 0, made
    assert _records(driver) == 0

    # A first ingest of the tenant (its batches written by threads), stopped part way.
    first = _process("ingest", str(bundle), "--batch-size", "1")
    code, out, err = _interrupt_when(first, lambda: _records(driver) > 0)
    assert code == 130, (code, out, err)
    assert out == "" and "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and INTERRUPTED_LINE.fullmatch(lines[0]), err
    written, planned = (int(n) for n in INTERRUPTED_LINE.fullmatch(lines[0]).groups())  # type: ignore[union-attr]
    # What it says is what the graph holds: no more, no fewer.
    assert 0 < written < planned and _records(driver) == written, (written, planned)

    # The tenant now has records: the next ingest compares and writes the rest one
    # transaction at a time. Stopped part way too, it says what it wrote of that rest.
    second = _process("ingest", str(bundle), "--batch-size", "1")
    code, out, err = _interrupt_when(second, lambda: _records(driver) > written)
    assert code == 130, (code, out, err)
    lines = err.splitlines()
    assert len(lines) == 1 and INTERRUPTED_LINE.fullmatch(lines[0]), err
    more, rest = (int(n) for n in INTERRUPTED_LINE.fullmatch(lines[0]).groups())  # type: ignore[union-attr]
    assert rest == planned - written, (rest, planned, written)
    assert 0 < more < rest and _records(driver) == written + more, (more, rest)

    # Running the same ingest again finishes it: every record, none twice.
    done = invoke("ingest", str(bundle), "--batch-size", "1000")
    assert done.code == 0, done
    created = re.search(
        r"created (\d+) node and (\d+) relationship records, (\d+) tombstones; "
        r"unchanged (\d+) nodes, (\d+) relationships; superseded \d+, copied (\d+) ",
        done.out,
    )
    assert created is not None, done.out
    nodes, edges, tombstones, same_nodes, same_edges, copied = (int(n) for n in created.groups())
    assert nodes + edges + tombstones == planned - written - more, done.out
    assert same_nodes + same_edges == written + more, done.out
    # (a tombstone's record copies the relationships of the record it retracts)
    assert _records(driver) == planned + copied, done.out
    again = invoke("ingest", str(bundle))
    assert again.code == 0 and "unchanged since the last ingest" in again.out, again
    assert _records(driver) == planned + copied
