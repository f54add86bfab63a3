"""An ingest stopped by Ctrl-C says what the graph holds, wherever the Ctrl-C lands.

The CLI test (tests/test_interrupt_cli.py) sends a real SIGINT at a moment it cannot choose;
once in a few thousand runs it landed while the writer pool started its second worker
(`Thread.start` waits for the thread), and the ingest said it wrote 9 records where the graph
held 10. Here the Ctrl-C lands exactly there, on the real server.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

import neo4j
import pytest

from graph_schema.bundle import load_bundle
from graph_schema.errors import InterruptedPartWay
from graph_schema.schema_ddl import apply_schema
from graph_schema.writer import ingest_bundle

TENANT = "synthqa"
WRITTEN = re.compile(
    r"interrupted \(Ctrl-C\) after (\d+) of (\d+) records were written \(node and relationship "
    r"records, tombstones\); run the same ingest again to finish"
)


def _records(driver: neo4j.Driver) -> int:
    records, _, _ = driver.execute_query(
        "MATCH (n:KG {tenant: $t}) OPTIONAL MATCH (n)-[r]->() RETURN count(DISTINCT n) + "
        "count(r) AS c",
        t=TENANT,
    )
    return int(records[0]["c"])


def test_a_ctrl_c_while_a_writer_thread_starts_counts_what_that_writer_commits(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver = clean_db
    apply_schema(driver)
    bundle = tmp_path / "synth.json"
    made = invoke(
        "generate", "--services", "5", "--seed", "3", "--tenant", TENANT, "--out", str(bundle)
    )
    assert made.code == 0, made
    loaded = load_bundle(bundle)

    started = threading.Thread.start

    def start_then_ctrl_c(thread: threading.Thread) -> None:
        started(thread)
        if thread.name.startswith("ingest-write"):
            raise KeyboardInterrupt  # as a SIGINT landing while `start` waits for the thread

    monkeypatch.setattr(threading.Thread, "start", start_then_ctrl_c)
    with pytest.raises(InterruptedPartWay) as stopped:
        ingest_bundle(driver, loaded, batch_size=1)
    monkeypatch.undo()
    # Whatever thread was still writing has ended before the graph is counted here too.
    for thread in threading.enumerate():
        if thread.name.startswith("ingest-write"):
            thread.join(timeout=60)

    held = _records(driver)
    assert held > 0, "the first batch's writer was started: it commits its batch"
    said = WRITTEN.fullmatch(str(stopped.value))
    assert said is not None, str(stopped.value)
    written, planned = int(said.group(1)), int(said.group(2))
    assert written == held < planned, (written, held, planned)
