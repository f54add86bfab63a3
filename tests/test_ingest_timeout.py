"""A first ingest's batch that hits Neo4j's transaction timeout (a busy server, or another
transaction holding a lock it needs): the batch rolled back whole, so it is written again in
halves; past `writer.TIMEOUT_SPLITS` halvings the ingest stops with one line and exit 4, and
running it again completes the store.

The server's timeout is 120 s; these tests give the writes a client timeout of a few seconds
(`writer.WRITE_TIMEOUT_S`) and hold the lock of every record the bundle creates with an
uncommitted transaction that creates the same (tenant, id, version 1) records first.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import neo4j
import neo4j.time
import pytest
from conftest import wipe
from test_ingest_paths import stored_records

import graph_schema.writer as writer
from graph_schema.schema_ddl import apply_schema
from graph_schema.synthetic import generate_bundle, write_bundle_file

TIMEOUT_S = 2.0


@pytest.fixture()
def graph(clean_db: neo4j.Driver) -> neo4j.Driver:
    apply_schema(clean_db, tenants=())
    return clean_db


@contextmanager
def _records_locked(
    driver: neo4j.Driver, tenant: str, ids: list[str], seconds: float
) -> Iterator[None]:
    """Hold the uniqueness lock of each (tenant, id, version 1) for `seconds` (or until the
    block ends), then roll back: a write of the same records waits meanwhile."""
    session = driver.session()
    tx = session.begin_transaction()
    tx.run(
        "UNWIND $ids AS id CREATE (:KG {tenant: $tenant, id: id, version: 1})",
        ids=ids,
        tenant=tenant,
    ).consume()
    released = threading.Event()

    def release() -> None:
        if not released.is_set():
            released.set()
            tx.rollback()
            session.close()

    timer = threading.Timer(seconds, release)
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        release()


def _records(driver: neo4j.Driver, tenant: str) -> tuple[list[Any], list[Any]]:
    """`stored_records` without times (the two tenants' ingests ran at different times)."""

    def timeless(records: list[Any]) -> list[Any]:
        return sorted(
            (rest, [(k, v) for k, v in props if not isinstance(v, neo4j.time.DateTime)])
            for rest, props in records
        )

    nodes, edges = stored_records(driver, tenant)
    return timeless(nodes), timeless(edges)


def _ingested_alone(graph: neo4j.Driver, invoke: Any, path: Path) -> tuple[list[Any], list[Any]]:
    """The records an ingest of `path` into an empty store writes (the store is emptied
    again after)."""
    assert invoke("ingest", str(path)).code == 0
    records = _records(graph, "acme")
    wipe(graph)
    apply_schema(graph, tenants=())
    return records


def _bundle(tmp_path: Path, tenant: str) -> tuple[Path, list[str]]:
    """A generated bundle of `tenant` in a file, and the ids of its nodes."""
    bundle = generate_bundle(12, 7, tenant=tenant)
    path = tmp_path / f"{tenant}.json"
    write_bundle_file(bundle, path)
    return path, [n.id for n in bundle.nodes]


def test_a_batch_that_timed_out_is_written_again_in_halves(
    graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cli_env: Any, invoke: Any
) -> None:
    path, ids = _bundle(tmp_path, "acme")
    clean = _ingested_alone(graph, invoke, path)
    monkeypatch.setattr(writer, "WRITE_TIMEOUT_S", TIMEOUT_S, raising=False)
    # Held past the whole batch's timeout, released while its first half waits.
    with _records_locked(graph, "acme", ids, TIMEOUT_S * 1.5):
        result = invoke("ingest", str(path))
    assert result.code == 0, result
    assert _records(graph, "acme") == clean


def test_a_batch_that_keeps_timing_out_stops_in_one_line_with_exit_4_and_a_rerun_completes(
    graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cli_env: Any, invoke: Any
) -> None:
    path, ids = _bundle(tmp_path, "acme")
    clean = _ingested_alone(graph, invoke, path)
    monkeypatch.setattr(writer, "WRITE_TIMEOUT_S", TIMEOUT_S, raising=False)
    # Held longer than the batch and its two halvings wait (a writer without a timeout waits
    # for the release and then succeeds: a user of a busy server saw that ingest fail with a
    # raw driver error and exit 1 at the server's 120 s instead).
    with _records_locked(graph, "acme", ids, TIMEOUT_S * 10):
        result = invoke("ingest", str(path))
    assert result.code == 4, result
    assert result.err.startswith("error: ingest stopped: Neo4j ended a write of "), result
    assert "records of tenant acme at its transaction timeout" in result.err
    assert result.err.count("\n") == 1 and "Error:" not in result.err
    # Every node record is in the first batch, whose first part timed out: nothing is written.
    assert _records(graph, "acme") == ([], [])
    rerun = invoke("ingest", str(path))
    assert rerun.code == 0, rerun
    assert _records(graph, "acme") == clean
