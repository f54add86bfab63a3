"""Generating, writing, loading and ingesting a bundle run with Python's cyclic collector
paused (its full collections were 2.5-3.5 s of a 101k-element ingest, docs/benchmarks.md),
and give it back as it was: enabled after, disabled if the caller had disabled it, whatever
the outcome. An ingest collects only the young generation, after each write, so that the rows
the driver holds in reference cycles go as they are written.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path

import neo4j
import pytest

from graph_schema.bundle import LoadedBundle, apply_overrides, load_bundle
from graph_schema.collector import cyclic_gc_paused
from graph_schema.synthetic import generate_bundle, write_bundle_file
from graph_schema.writer import BundleRejected, ingest_bundle


@pytest.fixture()
def gc_runs() -> Iterator[list[int]]:
    """The generation of every collection that starts while the test runs; the collector is
    enabled again after it. The first allocation after a pause may start one young
    collection (the allocations the pause counted are past the threshold): tests allow it."""
    started: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.callbacks.append(count)
    yield started
    gc.callbacks.remove(count)
    gc.enable()


def _generated(tenant: str, services: int = 30) -> LoadedBundle:
    loaded = LoadedBundle.from_bundles([("gen", generate_bundle(services, 7, tenant="gen"))])
    return apply_overrides(loaded, tenant=tenant)


def test_no_collection_runs_while_a_bundle_loads(tmp_path: Path, gc_runs: list[int]) -> None:
    path = tmp_path / "bundle.json"
    write_bundle_file(generate_bundle(30, 7, tenant="gen"), path)
    gc.collect()
    gc_runs.clear()
    loaded = load_bundle(path)
    assert loaded.problems == [] and loaded.element_count() > 500
    assert len(gc_runs) <= 1 and 2 not in gc_runs and gc.isenabled()


def test_no_collection_runs_while_a_bundle_is_generated_or_written(
    tmp_path: Path, gc_runs: list[int]
) -> None:
    gc.collect()
    gc_runs.clear()
    bundle = generate_bundle(30, 7, tenant="gen")
    assert len(gc_runs) <= 1 and 2 not in gc_runs and gc.isenabled()
    gc.collect()
    gc_runs.clear()
    write_bundle_file(bundle, tmp_path / "bundle.json")
    assert len(gc_runs) <= 1 and 2 not in gc_runs and gc.isenabled()


def test_only_young_collections_run_while_a_bundle_is_ingested(
    clean_db: neo4j.Driver, gc_runs: list[int]
) -> None:
    during: list[bool] = []
    loaded = _generated("gc-paused")
    gc.collect()
    gc_runs.clear()
    report = ingest_bundle(
        clean_db, loaded, batch_size=500, progress=lambda _: during.append(gc.isenabled())
    )
    assert report.node_records_created > 300 and during and not any(during)
    # The writes' young collections, none that walks older generations (the loaded bundle).
    assert 1 not in gc_runs and 2 not in gc_runs and gc.isenabled()
    assert gc.collect() < 1000


def _rows_alive() -> int:
    # The writer's rows: {"labels", "props", "t"} for nodes, {..., "from_id", "t"} for edges.
    return sum(isinstance(o, dict) and "props" in o and "t" in o for o in gc.get_objects())


def test_written_batches_do_not_pile_up_while_the_collector_is_paused(
    clean_db: neo4j.Driver, gc_runs: list[int]
) -> None:
    """The driver keeps each statement's parameters (a batch's rows) in a reference cycle with
    its result; the rows must go as the batches are written, not when the ingest ends. A
    result's cycle can outlive its batch (two batches are written at once, and the young
    collection after a write promotes the other one's), its rows may not."""
    loaded = _generated("gc-rows", services=12)
    gc.collect()
    # With the collector off, only the writer itself can free a written batch's rows.
    gc.disable()
    try:
        report = ingest_bundle(clean_db, loaded, batch_size=20)
        left = _rows_alive()
    finally:
        gc.enable()
    assert report.node_records_created + report.edge_records_created > 200
    assert left == 0, left


def test_a_rejected_bundle_gives_the_collector_back(clean_db: neo4j.Driver) -> None:
    bundle = _generated("gc-rejected", services=2).parts[0].bundle
    dangling = bundle.edges[0].model_copy(update={"to": "svc:nowhere"})
    rejected = bundle.model_copy(update={"edges": [dangling, *bundle.edges[1:]]})
    with pytest.raises(BundleRejected):
        ingest_bundle(clean_db, LoadedBundle.from_bundles([("rejected", rejected)]))
    assert gc.isenabled()


def test_a_caller_who_disabled_the_collector_keeps_it_disabled(
    clean_db: neo4j.Driver, gc_runs: list[int]
) -> None:
    gc.disable()
    ingest_bundle(clean_db, _generated("gc-caller", services=2))
    assert not gc.isenabled()


def test_overlapping_pauses_give_the_collector_back_when_the_last_ends(
    gc_runs: list[int],
) -> None:
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def first() -> None:
        with cyclic_gc_paused():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second() -> None:
        first_in.wait(5)
        with cyclic_gc_paused():
            second_in.set()
            first_out.wait(5)
            seen["after the first ended"] = gc.isenabled()
        seen["after both ended"] = gc.isenabled()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == {"after the first ended": False, "after both ended": True}
