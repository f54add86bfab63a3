"""A tenant's first ingest builds its records in a thread while it writes (graph_schema.writer
`_Ahead`), keeps two write transactions in flight, and retracts a run of nodes with a few
statements: on a real Neo4j, the order of the writes, the errors and the stored records are
those of the sequential writer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import neo4j
import pytest
from test_ingest_paths import stored_records

import graph_schema.writer as writer
from graph_schema.bundle import Bundle, LoadedBundle, apply_overrides
from graph_schema.synthetic import generate_bundle
from graph_schema.writer import BundleRejected, IngestReport, ingest_bundle

NOW = datetime.now(UTC)  # one ingest time for every tenant of a test


@pytest.fixture()
def graph(clean_db: neo4j.Driver) -> neo4j.Driver:
    return clean_db


def _stored(driver: neo4j.Driver, tenant: str) -> tuple[list[Any], list[Any]]:
    return stored_records(driver, tenant, skip_id="src:unrelated")


def _generated(tenant: str, services: int = 12) -> LoadedBundle:
    loaded = LoadedBundle.from_bundles([("gen", generate_bundle(services, 7, tenant="gen"))])
    return apply_overrides(loaded, tenant=tenant)


def _sequential(driver: neo4j.Driver, tenant: str, batch_size: int) -> IngestReport:
    """The same bundle through the general writer (history, planning): the tenant has an
    unrelated record first (left out by `_stored`), so it is not a first ingest."""
    seed = Bundle.model_validate(
        {
            "tenant": tenant,
            "sources": [
                {
                    "source_id": "src:unrelated",
                    "source_type": "wiki",
                    "owner_team": "team:x",
                    "classification": "internal",
                    "allowed_purposes": ["audit"],
                }
            ],
        }
    )
    ingest_bundle(driver, LoadedBundle.from_bundles([("seed", seed)]), now=NOW)
    return ingest_bundle(driver, _generated(tenant), now=NOW, batch_size=batch_size)


def _worker_alive() -> bool:
    return any(t.name == "ingest-records" and t.is_alive() for t in threading.enumerate())


def test_writes_start_while_later_batches_are_built(
    graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The builder may not finish before the first batch is written: writing overlaps
    # building. Validation still ends before the first write, every node batch is written
    # before the first edge batch, and the store is the sequential writer's.
    events: list[str] = []
    first_write = threading.Event()
    build = writer._fresh_batches
    validate = writer.validate_bundle
    create_nodes, create_edges = writer._create_nodes, writer._create_fresh_edges

    def slow_build(*args: Any, **kwargs: Any) -> Iterator[tuple[bool, list[dict[str, Any]]]]:
        for index, item in enumerate(build(*args, **kwargs)):
            events.append("built edges" if item[0] else "built nodes")
            yield item
            if index == 0:
                # The next batch is built only once the first one is being written.
                assert first_write.wait(timeout=30)
        events.append("built all")

    def validating(*args: Any, **kwargs: Any) -> Any:
        problems = validate(*args, **kwargs)
        events.append("validated")
        return problems

    def writing_nodes(tx: neo4j.ManagedTransaction, rows: list[dict[str, Any]]) -> None:
        events.append("write nodes")
        first_write.set()
        create_nodes(tx, rows)

    def writing_edges(tx: neo4j.ManagedTransaction, rows: list[dict[str, Any]]) -> None:
        events.append("write edges")
        create_edges(tx, rows)

    monkeypatch.setattr(writer, "_fresh_batches", slow_build)
    monkeypatch.setattr(writer, "validate_bundle", validating)
    monkeypatch.setattr(writer, "_create_nodes", writing_nodes)
    monkeypatch.setattr(writer, "_create_fresh_edges", writing_edges)
    fresh = ingest_bundle(graph, _generated("fresh"), now=NOW, batch_size=40)
    monkeypatch.undo()

    writes = [e for e in events if e.startswith("write")]
    assert events.index("validated") < events.index(writes[0])
    assert events.index(writes[0]) < events.index("built all")
    assert writes == sorted(writes, key=lambda e: e != "write nodes")  # nodes, then edges
    assert writes.count("write nodes") == events.count("built nodes") > 2
    assert writes.count("write edges") == events.count("built edges") > 2
    assert not _worker_alive()

    kept = _sequential(graph, "kept", batch_size=40)
    assert fresh.model_dump(exclude={"seconds"}) == kept.model_dump(exclude={"seconds"})
    assert fresh.tombstones_created > 0
    assert _stored(graph, "fresh") == _stored(graph, "kept")


def test_a_first_ingest_keeps_two_writes_in_flight_and_one_ingest_mark(
    graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Batches are written FRESH_WRITERS at a time (never more), relationships only once every
    # node batch has committed, and the first batch alone: its transaction makes the tenant's
    # ingest mark, which two MERGEs at once would make twice. So the next ingest of the same
    # bundle is still the no-op fast path, and the store is the sequential writer's.
    lock = threading.Lock()
    running: list[str] = []
    most = 0
    log: list[tuple[str, str]] = []
    create_nodes, create_edges = writer._create_nodes, writer._create_fresh_edges

    def tracked(kind: str, create: Any) -> Any:
        def write(tx: neo4j.ManagedTransaction, rows: list[dict[str, Any]]) -> None:
            nonlocal most
            with lock:
                running.append(kind)
                most = max(most, len(running))
                log.append(("start", kind))
            try:
                time.sleep(0.05)  # long enough for the next batch to start beside it
                create(tx, rows)
            finally:
                with lock:
                    running.remove(kind)
                    log.append(("end", kind))

        return write

    monkeypatch.setattr(writer, "_create_nodes", tracked("nodes", create_nodes))
    monkeypatch.setattr(writer, "_create_fresh_edges", tracked("edges", create_edges))
    fresh = ingest_bundle(graph, _generated("fresh"), now=NOW, batch_size=40)
    monkeypatch.undo()

    assert most == writer.FRESH_WRITERS == 2
    assert log[:2] == [("start", "nodes"), ("end", "nodes")]  # the first batch alone
    first_edge = log.index(("start", "edges"))
    assert ("start", "nodes") not in log[first_edge:] and ("end", "nodes") not in log[first_edge:]
    marks = graph.execute_query("MATCH (m:IngestMark {tenant: 'fresh'}) RETURN count(m) AS n")
    assert marks.records[0]["n"] == 1
    again = ingest_bundle(graph, _generated("fresh"), now=NOW, batch_size=40)
    assert again.unchanged_since_last_ingest, again
    kept = _sequential(graph, "kept", batch_size=40)
    assert fresh.model_dump(exclude={"seconds"}) == kept.model_dump(exclude={"seconds"})
    assert _stored(graph, "fresh") == _stored(graph, "kept")


def test_error_while_building_a_later_batch_is_reported(
    graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A draft that fails after the first batches were written: the ingest raises that very
    # error, the batches before it stay whole (as after a failed write transaction), and
    # re-running the ingest completes the store.
    edge_draft = writer.edge_draft
    calls = 0

    def failing(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 100:
            raise ValueError("cannot draft edge 100")
        return edge_draft(*args, **kwargs)

    monkeypatch.setattr(writer, "edge_draft", failing)
    with pytest.raises(ValueError, match="cannot draft edge 100"):
        ingest_bundle(graph, _generated("fresh"), now=NOW, batch_size=40)
    monkeypatch.undo()
    assert not _worker_alive()
    written = graph.execute_query(
        "MATCH (n:KG {tenant: 'fresh'}) WITH count(n) AS nodes "
        "OPTIONAL MATCH (:KG {tenant: 'fresh'})-[r]->() RETURN nodes, count(r) AS edges"
    ).records[0]
    whole = ingest_bundle(graph, _generated("whole"), now=NOW, batch_size=40)
    assert written["nodes"] == whole.node_records_created  # every node batch came first
    assert 0 < written["edges"] < whole.edge_records_created
    assert written["edges"] % 40 == 0  # whole batches only

    again = ingest_bundle(graph, _generated("fresh"), now=NOW, batch_size=40)
    assert again.nodes_unchanged == whole.node_records_created
    assert again.edge_records_created == whole.edge_records_created - written["edges"]
    assert _stored(graph, "fresh") == _stored(graph, "whole")


def test_error_while_building_the_first_batch_writes_nothing(
    graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(*_args: Any, **_kwargs: Any) -> Any:
        raise ValueError("cannot draft a node")

    monkeypatch.setattr(writer, "node_draft", failing)
    with pytest.raises(ValueError, match="cannot draft a node"):
        ingest_bundle(graph, _generated("fresh"), now=NOW, batch_size=40)
    assert not _worker_alive()
    count = graph.execute_query("MATCH (n:KG {tenant: 'fresh'}) RETURN count(n) AS n")
    assert count.records[0]["n"] == 0


def test_a_failed_write_stops_the_builder(
    graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_nodes = writer._create_nodes
    calls = 0
    lock = threading.Lock()

    def failing(tx: neo4j.ManagedTransaction, rows: list[dict[str, Any]]) -> None:
        nonlocal calls
        with lock:  # two batches are written at once
            calls += 1
            this_call = calls
        create_nodes(tx, rows)
        if this_call == 2:
            raise RuntimeError("write failed")

    monkeypatch.setattr(writer, "_create_nodes", failing)
    with pytest.raises(RuntimeError, match="write failed"):
        ingest_bundle(graph, _generated("fresh"), now=NOW, batch_size=40)
    assert not _worker_alive()
    count = graph.execute_query("MATCH (n:KG {tenant: 'fresh'}) RETURN count(n) AS n")
    # The first batch (written alone) and at most the batches in flight beside the failed
    # one when its failure was reached (whole batches: the failed one rolled back); never
    # the rest of the bundle.
    written = count.records[0]["n"]
    assert 40 <= written <= 40 * (1 + writer.FRESH_WRITERS), written
    whole = ingest_bundle(graph, _generated("whole"), now=NOW, batch_size=40)
    assert written < whole.node_records_created


def test_an_ingest_stopped_by_a_failed_write_is_completed_by_running_it_again(
    graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch's transaction can fail midway (at 1M elements, once, the server's transaction
    timeout: docs/benchmarks.md). The batches before it stay, and the same ingest run again
    stores exactly what one whole ingest stores."""
    create_edges = writer._create_fresh_edges
    calls = 0
    lock = threading.Lock()

    def failing(tx: neo4j.ManagedTransaction, rows: list[dict[str, Any]]) -> None:
        nonlocal calls
        with lock:  # two batches are written at once
            calls += 1
            this_call = calls
        if this_call == 2:
            raise RuntimeError("the transaction timed out")
        create_edges(tx, rows)

    monkeypatch.setattr(writer, "_create_fresh_edges", failing)
    with pytest.raises(RuntimeError, match="timed out"):
        ingest_bundle(graph, _generated("stopped"), now=NOW, batch_size=40)
    stopped_nodes, stopped_edges = _stored(graph, "stopped")
    monkeypatch.setattr(writer, "_create_fresh_edges", create_edges)
    again = ingest_bundle(graph, _generated("stopped"), now=NOW, batch_size=40)
    ingest_bundle(graph, _generated("whole"), now=NOW, batch_size=40)
    whole_nodes, whole_edges = _stored(graph, "whole")
    assert stopped_nodes and 0 < len(stopped_edges) < len(whole_edges)
    assert again.edge_records_created > 0
    assert _stored(graph, "stopped") == (whole_nodes, whole_edges)


def test_rejected_bundle_writes_nothing_while_records_are_built(graph: neo4j.Driver) -> None:
    bundle = generate_bundle(12, 7, tenant="fresh")
    broken = bundle.model_copy(
        update={"edges": [*bundle.edges, bundle.edges[0].model_copy(update={"to": "svc:none"})]}
    )
    with pytest.raises(BundleRejected) as rejected:
        ingest_bundle(graph, LoadedBundle.from_bundles([("gen", broken)]), batch_size=40)
    assert any("svc:none" in p.line() for p in rejected.value.problems)
    assert not _worker_alive()
    count = graph.execute_query("MATCH (n {tenant: 'fresh'}) RETURN count(n) AS n")
    assert count.records[0]["n"] == 0  # no record, no ingest mark


def _retracting(tenant: str, targets: list[dict[str, str]]) -> LoadedBundle:
    source = "src:catalog"
    nodes = [
        {"id": f"svc:{name}", "label": "Service", "name": name, "source_id": source}
        for name in "abcde"
    ]
    nodes.append({"id": "team:x", "label": "Team", "name": "x", "source_id": source})
    edges = [
        {"type": "DEPENDS_ON", "from": "svc:a", "to": "svc:b", "source_id": source},
        {"type": "DEPENDS_ON", "from": "svc:c", "to": "svc:d", "source_id": source},
        {"type": "OWNS", "from": "team:x", "to": "svc:a", "source_id": source},
        {"type": "OWNS", "from": "team:x", "to": "svc:c", "source_id": source},
        {"type": "OWNS", "from": "team:x", "to": "svc:e", "source_id": source},
    ]
    first = {
        "tenant": tenant,
        "sources": [
            {
                "source_id": source,
                "source_type": "service_catalog",
                "owner_team": "team:x",
                "classification": "internal",
                "allowed_purposes": ["audit"],
            }
        ],
        "nodes": nodes,
        "edges": edges,
    }
    retractions = [
        {"reason": f"gone {i}", "at": f"2026-01-0{i + 1}T00:00:00Z", **target}
        for i, target in enumerate(targets)
    ]
    return LoadedBundle.from_bundles(
        [
            ("catalog", Bundle.model_validate(first)),
            ("retract", Bundle.model_validate({"tenant": tenant, "retractions": retractions})),
        ]
    )


@pytest.mark.parametrize(
    "targets",
    [
        # Not adjacent: one statement per step for the whole run.
        [{"id": "svc:a"}, {"id": "svc:c"}, {"id": "svc:e"}],
        # svc:a and svc:b share an edge: retracted one after another.
        [{"id": "svc:a"}, {"id": "svc:b"}, {"id": "team:x"}],
        # An edge retraction between two runs of nodes; one id twice in the second run.
        [
            {"id": "svc:e"},
            {"id": "svc:a"},
            {"key": "DEPENDS_ON|svc:c|svc:d"},
            {"id": "svc:c"},
            {"id": "svc:b"},
            {"id": "svc:c"},
        ],
    ],
    ids=["apart", "adjacent", "mixed"],
)
def test_a_run_of_retractions_stores_what_one_after_another_stores(
    graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch, targets: list[dict[str, str]]
) -> None:
    # Both tenants take the same path (first ingest, then the same retractions); one of
    # them retracts one record at a time, as the writer did before runs were batched.
    batched = ingest_bundle(graph, _retracting("batched", targets), now=NOW)
    monkeypatch.setattr(writer, "_retract_nodes", writer._retract_each)
    single = ingest_bundle(graph, _retracting("single", targets), now=NOW)
    monkeypatch.undo()
    assert batched.model_dump(exclude={"seconds"}) == single.model_dump(exclude={"seconds"})
    assert batched.tombstones_created == len({str(t) for t in targets})
    assert batched.edges_copied > 0
    assert _stored(graph, "batched") == _stored(graph, "single")
    # A re-ingest is a no-op: nothing is resurrected.
    again = ingest_bundle(graph, _retracting("batched", targets), full=True)
    assert not again.changed
