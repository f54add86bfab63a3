"""An ingest stopped by Ctrl-C says what the graph holds, wherever the Ctrl-C lands.

The CLI test (tests/test_interrupt_cli.py) sends a real SIGINT at a moment it cannot choose;
once in a few thousand runs it landed while the writer pool started its second worker
(`Thread.start` waits for the thread), and the ingest said it wrote 9 records where the graph
held 10. Here the Ctrl-C lands exactly there, on the real server.

A Ctrl-C that lands while a finalizer runs (the driver's `Workspace.__del__`, which the GC
ran at that moment) was printed as "Exception ignored ... KeyboardInterrupt" and dropped: the
ingest went on to finish, exit 0 (3 in 22 stressed runs of the CLI test, session 37). Here a
finalizer the progress callback lets go of presses Ctrl-C, on both write paths.
"""

from __future__ import annotations

import re
import signal
import threading
from collections.abc import Callable
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


def _five_services(driver: neo4j.Driver, invoke, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    """The schema applied, and a generated bundle of tenant TENANT with 5 services."""
    apply_schema(driver)
    bundle = tmp_path / "synth.json"
    made = invoke(
        "generate", "--services", "5", "--seed", "3", "--tenant", TENANT, "--out", str(bundle)
    )
    assert made.code == 0, made
    return bundle


def test_a_ctrl_c_while_a_writer_thread_starts_counts_what_that_writer_commits(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver = clean_db
    loaded = load_bundle(_five_services(driver, invoke, tmp_path))

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


class _PressesCtrlCWhenFreed:
    """An object whose finalizer presses Ctrl-C: the moment the GC frees a driver object."""

    def __del__(self) -> None:
        signal.raise_signal(signal.SIGINT)


def _ctrl_c_in_a_finalizer_at_first_progress() -> Callable[[str], None]:
    said: list[str] = []

    def progress(message: str) -> None:
        if "records:" in message and not said:
            said.append(message)
            _PressesCtrlCWhenFreed()  # freed at once: its finalizer runs here

    return progress


def _stopped_by_a_ctrl_c_in_a_finalizer(driver: neo4j.Driver, bundle: Path) -> tuple[int, int]:
    """An ingest of `bundle` whose Ctrl-C lands in a finalizer once its first batch is
    written, and (written, planned) as it says them."""
    with pytest.raises(InterruptedPartWay) as stopped:  # not: the press lost, the ingest done
        ingest_bundle(
            driver,
            load_bundle(bundle),
            batch_size=1,
            progress=_ctrl_c_in_a_finalizer_at_first_progress(),
        )
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored
    said = WRITTEN.fullmatch(str(stopped.value))
    assert said is not None, str(stopped.value)
    return int(said.group(1)), int(said.group(2))


def test_a_ctrl_c_that_lands_in_a_finalizer_stops_the_ingest_and_counts_what_it_wrote(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    driver = clean_db
    bundle = _five_services(driver, invoke, tmp_path)

    # A first ingest of the tenant (batches written by the writer pool's threads).
    written, planned = _stopped_by_a_ctrl_c_in_a_finalizer(driver, bundle)
    assert 0 < written < planned and _records(driver) == written, (written, planned)

    # The tenant has records now: the ingest compares, one transaction at a time.
    more, rest = _stopped_by_a_ctrl_c_in_a_finalizer(driver, bundle)
    assert rest == planned - written and 0 < more < rest, (more, rest)
    assert _records(driver) == written + more

    # The same ingest, not interrupted, finishes it.
    done = ingest_bundle(driver, load_bundle(bundle))
    created = done.node_records_created + done.edge_records_created + done.tombstones_created
    assert created == planned - written - more, done
