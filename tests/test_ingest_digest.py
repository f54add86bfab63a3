"""The ingest mark's bundle digest is off a first ingest's critical path (issue 12).

A tenant's first ingest has no mark to compare the digest with: it is computed by the thread
that builds the batches, after the last one, while the last batches are written; any other
ingest that will be marked computes it in `ingest_mark.commit`; an ingest that is rejected or
never marked does not compute it. On a real Neo4j: the mark is still written (the next
ingest of the bundle is the fast no-op), a digest error is raised after the writes and
leaves no mark, and no thread outlives the ingest.
"""

from __future__ import annotations

import copy
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import neo4j
import pytest

import graph_schema.ingest_mark as ingest_mark
import graph_schema.writer as writer
from graph_schema.bundle import Bundle, LoadedBundle, apply_overrides, load_bundle
from graph_schema.synthetic import generate_bundle
from graph_schema.validate import document_edge_keys, principal_tenant
from graph_schema.writer import BundleRejected, ingest_bundle

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "datasets" / "payments-incident"
NOW = datetime.now(UTC)


@pytest.fixture()
def graph(clean_db: neo4j.Driver) -> neo4j.Driver:
    return clean_db


def _generated(tenant: str, services: int = 12) -> LoadedBundle:
    loaded = LoadedBundle.from_bundles([("gen", generate_bundle(services, 7, tenant="gen"))])
    return apply_overrides(loaded, tenant=tenant)


def _until(done: Callable[[], bool], timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def _worker_alive() -> bool:
    return any(t.name == "ingest-records" and t.is_alive() for t in threading.enumerate())


def _marks(driver: neo4j.Driver, tenant: str) -> list[Any]:
    return driver.execute_query(
        "MATCH (m:IngestMark {tenant: $tenant}) RETURN m.digest AS digest", tenant=tenant
    ).records


def _counts(driver: neo4j.Driver, tenant: str) -> tuple[int, int]:
    record = driver.execute_query(
        "MATCH (n:KG {tenant: $tenant}) WITH count(n) AS nodes "
        "OPTIONAL MATCH (:KG {tenant: $tenant})-[r]->() RETURN nodes, count(r) AS edges",
        tenant=tenant,
    ).records[0]
    return int(record["nodes"]), int(record["edges"])


def _digests(monkeypatch: pytest.MonkeyPatch, events: list[str]) -> list[str]:
    """Record (in `events`) each digest computed, and return the threads that computed it."""
    digest = ingest_mark.bundle_digest
    threads: list[str] = []

    def recording(loaded: LoadedBundle) -> str:
        threads.append(threading.current_thread().name)
        events.append("digest")
        return digest(loaded)

    monkeypatch.setattr(ingest_mark, "bundle_digest", recording)
    return threads


def _logging_writes(monkeypatch: pytest.MonkeyPatch, events: list[str]) -> None:
    create_nodes, create_edges = writer._create_nodes, writer._create_fresh_edges

    def nodes(tx: neo4j.ManagedTransaction, rows: list[dict[str, Any]]) -> None:
        events.append("write nodes")
        create_nodes(tx, rows)

    def edges(tx: neo4j.ManagedTransaction, rows: list[dict[str, Any]]) -> None:
        events.append("write edges")
        create_edges(tx, rows)

    monkeypatch.setattr(writer, "_create_nodes", nodes)
    monkeypatch.setattr(writer, "_create_fresh_edges", edges)


def test_a_first_ingest_digests_after_its_last_batch_and_is_marked(
    graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    threads = _digests(monkeypatch, events)
    _logging_writes(monkeypatch, events)
    build, validate = writer._fresh_batches, writer.validate_bundle

    def slow_build(*args: Any, **kwargs: Any) -> Iterator[tuple[bool, list[dict[str, Any]]]]:
        for index, item in enumerate(build(*args, **kwargs)):
            yield item
            if index == 0:  # the next batches only once the first one is being written
                assert _until(lambda: "write nodes" in events)
        events.append("built all")

    def validating(*args: Any, **kwargs: Any) -> Any:
        problems = validate(*args, **kwargs)
        events.append("validated")
        return problems

    monkeypatch.setattr(writer, "_fresh_batches", slow_build)
    monkeypatch.setattr(writer, "validate_bundle", validating)
    first = ingest_bundle(graph, _generated("fresh"), now=NOW, batch_size=40)
    assert first.node_records_created > 80 and not first.unchanged_since_last_ingest
    # Once, by the build thread, after the last batch was built: not before the first write.
    assert threads == ["ingest-records"]
    writes = [i for i, e in enumerate(events) if e.startswith("write")]
    assert len(writes) > 4
    assert events.index("validated") < writes[0] < events.index("built all")
    assert events.index("built all") < events.index("digest")
    assert not _worker_alive()
    [mark] = _marks(graph, "fresh")
    assert mark["digest"] == ingest_mark.bundle_digest(_generated("fresh"))
    # The mark vouches for the bundle: the next ingest of it is the fast no-op.
    again = ingest_bundle(graph, _generated("fresh"), now=NOW, batch_size=40)
    assert again.unchanged_since_last_ingest and not again.changed


def test_a_tenant_deleted_by_hand_is_a_first_ingest_again(
    graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its mark survives the delete and still holds a digest, but it counts node records the
    # tenant no longer has: no digest is needed to see that it is not unchanged.
    ingest_bundle(graph, _generated("fresh"), now=NOW, batch_size=40)
    graph.execute_query("MATCH (n:KG {tenant: 'fresh'}) DETACH DELETE n")
    [mark] = _marks(graph, "fresh")
    assert mark["digest"] is not None
    threads = _digests(monkeypatch, [])
    again = ingest_bundle(graph, _generated("fresh"), now=NOW, batch_size=40)
    assert again.node_records_created > 80 and threads == ["ingest-records"]
    assert not _worker_alive()
    assert ingest_bundle(graph, _generated("fresh"), now=NOW).unchanged_since_last_ingest
    assert threads == ["ingest-records", "MainThread"]  # the fast path compares a digest


def test_a_digest_error_is_raised_after_the_writes_and_leaves_no_mark(
    graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(_loaded: LoadedBundle) -> str:
        raise ValueError("cannot digest the bundle")

    monkeypatch.setattr(ingest_mark, "bundle_digest", failing)
    with pytest.raises(ValueError, match="cannot digest the bundle"):
        ingest_bundle(graph, _generated("fresh"), now=NOW, batch_size=40)
    monkeypatch.undo()
    assert not _worker_alive()
    # Every record was written (the error came after the writes), and no mark vouches for
    # them: the next ingest compares, finds nothing to write, and marks.
    whole = ingest_bundle(graph, _generated("whole"), now=NOW, batch_size=40)
    assert _counts(graph, "fresh") == _counts(graph, "whole")
    assert [m["digest"] for m in _marks(graph, "fresh")] == [None]
    again = ingest_bundle(graph, _generated("fresh"), now=NOW, batch_size=40)
    assert not again.unchanged_since_last_ingest and not again.changed
    assert again.nodes_unchanged == whole.node_records_created
    assert ingest_bundle(graph, _generated("fresh"), now=NOW).unchanged_since_last_ingest


def test_a_digest_error_of_a_later_ingest_is_raised_after_its_writes(
    graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not a first ingest, and no mark to compare with (`full=True` does not compare):
    # `commit` computes the digest, and raises its error, once the records are written.
    ingest_bundle(graph, _generated("kept", services=6), now=NOW, batch_size=40)
    monkeypatch.setattr(ingest_mark, "bundle_digest", lambda _loaded: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        ingest_bundle(graph, _generated("kept"), now=NOW, batch_size=40, full=True)
    monkeypatch.undo()
    assert [m["digest"] for m in _marks(graph, "kept")] == [None]
    whole = ingest_bundle(graph, _generated("whole"), now=NOW, batch_size=40)
    assert _counts(graph, "kept")[0] >= whole.node_records_created
    again = ingest_bundle(graph, _generated("kept"), now=NOW, batch_size=40)
    assert not again.unchanged_since_last_ingest and not again.changed


def test_a_rejected_first_ingest_computes_no_digest_and_writes_no_mark(
    graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = generate_bundle(12, 7, tenant="fresh")
    broken = bundle.model_copy(
        update={"edges": [*bundle.edges, bundle.edges[0].model_copy(update={"to": "svc:none"})]}
    )
    threads = _digests(monkeypatch, [])
    enter = writer._Ahead.__enter__

    def late(self: Any) -> Any:
        # The ingest's thread is slow to validate once the builder exists (a loaded machine):
        # the builder must not have built the whole small bundle, and digested it, meanwhile.
        time.sleep(0.5)
        return enter(self)

    monkeypatch.setattr(writer._Ahead, "__enter__", late)
    with pytest.raises(BundleRejected):
        ingest_bundle(graph, LoadedBundle.from_bundles([("gen", broken)]), batch_size=40)
    assert threads == []
    assert not _worker_alive()
    count = graph.execute_query("MATCH (n {tenant: 'fresh'}) RETURN count(n) AS n")
    assert count.records[0]["n"] == 0  # no record, no ingest mark


def test_an_ingest_that_is_never_marked_computes_no_digest(
    graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The demo has histories: its first ingest writes them and is not marked.
    threads = _digests(monkeypatch, [])
    first = ingest_bundle(graph, load_bundle(DEMO))
    assert first.changed and threads == []
    # Its first re-ingest is a confirmed no-op: marked, so the digest is computed then.
    again = ingest_bundle(graph, load_bundle(DEMO))
    assert not again.changed and threads == ["MainThread"]
    assert ingest_bundle(graph, load_bundle(DEMO)).unchanged_since_last_ingest


def test_a_fresh_ingest_refers_only_to_its_own_tenants(graph: neo4j.Driver) -> None:
    # A first ingest looks nothing up: a record of another tenant with the referenced id
    # does not make a reference valid (nor did it before: references stay in a tenant).
    other = generate_bundle(2, 7, tenant="other")
    ingest_bundle(graph, LoadedBundle.from_bundles([("other", other)]))
    bundle = generate_bundle(2, 7, tenant="fresh")
    target = other.nodes[0].id
    dangling = bundle.edges[0].model_copy(update={"to": target, "key": None})
    broken = bundle.model_copy(update={"edges": [*bundle.edges, dangling]})
    with pytest.raises(BundleRejected) as rejected:
        ingest_bundle(graph, LoadedBundle.from_bundles([("gen", broken)]))
    assert any(target in p.line() for p in rejected.value.problems)
    assert _counts(graph, "fresh") == (0, 0)


def _one_entry_each_reference(loaded: LoadedBundle) -> bool:
    """The definition: no (tenant, id) and no (tenant, key) twice."""
    seen: list[tuple[str, str, str]] = []
    for part in loaded.parts:
        b = part.bundle
        t = b.tenant
        seen += [("id", t, s.source_id) for s in b.sources]
        seen += [("id", principal_tenant(b, p), p.id) for p in b.principals]
        seen += [("id", t, n.id) for n in b.nodes]
        seen += [("id", t, d.id) for d in b.documents]
        seen += [("key", t, e.edge_key) for e in b.edges]
        seen += [("key", t, k) for d in b.documents for k in document_edge_keys(d)]
    return len(seen) == len(set(seen))


def test_one_entry_each_is_the_definition() -> None:
    base = generate_bundle(3, 7, tenant="acme").model_dump(by_alias=True)
    cases: dict[str, list[dict[str, Any]]] = defaultdict(list)
    cases["generated"] = [base]
    node = base["nodes"][0]
    doc = next(d for d in base["documents"] if d.get("applies_to"))
    edge = base["edges"][0]
    principal = {"id": "user:zed", "name": "Zed"}

    def variant(name: str, *edits: Any) -> None:
        data = copy.deepcopy(base)
        for edit in edits:
            edit(data)
        cases[name] = [data]

    variant("node twice", lambda d: d["nodes"].append(copy.deepcopy(node)))
    variant("document id of a node", lambda d: d["documents"].append({**doc, "id": node["id"]}))
    variant("edge twice", lambda d: d["edges"].append(copy.deepcopy(edge)))
    variant(
        "document applies twice",
        lambda d: d["documents"].append({**doc, "id": "runbook:again"}),
    )
    variant(
        "source id of a node",
        lambda d: d["sources"].append({**d["sources"][0], "source_id": node["id"]}),
    )
    variant("principal", lambda d: d.setdefault("principals", []).append(principal))
    variant(
        "principal twice in another tenant",
        lambda d: d.setdefault("principals", []).extend(
            [{**principal, "tenant": "other"}, {**principal, "tenant": "other"}]
        ),
    )
    variant(
        "principal elsewhere, node here",
        lambda d: d.setdefault("principals", []).append(
            {**principal, "id": node["id"], "tenant": "other"}
        ),
    )
    other = copy.deepcopy(base)
    other["tenant"] = "globex"
    cases["two tenants"] = [base, other]
    cases["one tenant twice"] = [base, copy.deepcopy(base)]
    results = {}
    for name, bundles in cases.items():
        loaded = LoadedBundle.from_bundles(
            (f"{name}[{i}]", Bundle.model_validate(b)) for i, b in enumerate(bundles)
        )
        results[name] = writer._one_entry_each(loaded)
        assert results[name] == _one_entry_each_reference(loaded), name
    assert results["generated"] and results["two tenants"] and results["principal"]
    # A principal is always written in its bundle's tenant (one naming another is refused by
    # validation), so its id repeats the node's.
    assert not results["principal elsewhere, node here"]
    assert not results["node twice"] and not results["edge twice"]
    assert not results["one tenant twice"] and not results["principal twice in another tenant"]
