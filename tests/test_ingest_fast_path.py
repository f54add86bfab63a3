"""The no-op re-ingest fast path (graph_schema.ingest_mark, issue 12) against a real Neo4j.

Each test pins a case where the fast path must or must not be taken: taken only when the full
comparison would also write nothing and report the same counts.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import neo4j
import pytest
import yaml

from graph_schema import ingest_mark
from graph_schema.bundle import Bundle, LoadedBundle, load_bundle
from graph_schema.ingest_mark import MARK_LABEL, IngestInterrupted, bundle_digest
from graph_schema.purge import purge_content
from graph_schema.writer import BundleRejected, IngestReport, ingest_bundle

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "datasets" / "payments-incident"
SOURCE = {
    "source_id": "src:catalog",
    "source_type": "service_catalog",
    "trust": "trusted",
    "allowed_purposes": ["incident_investigation"],
}


@pytest.fixture()
def graph(clean_db: neo4j.Driver) -> neo4j.Driver:
    """An empty graph, marks included (`clean_db` deletes every node)."""
    return clean_db


def base(tenant: str = "acme") -> dict[str, Any]:
    """Nodes, edges and a document with one entry per id and key."""
    return {
        "tenant": tenant,
        "sources": [SOURCE],
        "nodes": [
            {"id": "svc:a", "label": "Service", "name": "a", "source_id": "src:catalog"},
            {"id": "svc:b", "label": "Service", "name": "b", "source_id": "src:catalog"},
            {"id": "team:a", "label": "Team", "name": "Team A", "source_id": "src:catalog"},
        ],
        "edges": [
            {"type": "DEPENDS_ON", "from": "svc:a", "to": "svc:b", "source_id": "src:catalog"},
            {"type": "OWNS", "from": "team:a", "to": "svc:a", "source_id": "src:catalog"},
        ],
        "documents": [
            {
                "id": "runbook:a",
                "kind": "runbook",
                "title": "Runbook A",
                "content": "Restart a.",
                "locator": "wiki/a.md",
                "source_id": "src:catalog",
                "applies_to": ["svc:a"],
            }
        ],
    }


def loaded(*bundles: dict[str, Any]) -> LoadedBundle:
    return LoadedBundle.from_bundles(
        (f"test[{i}]", Bundle.model_validate(copy.deepcopy(b))) for i, b in enumerate(bundles)
    )


def ingest(driver: neo4j.Driver, *bundles: dict[str, Any], **options: Any) -> IngestReport:
    return ingest_bundle(driver, loaded(*bundles), **options)


def counts_of(report: IngestReport) -> dict[str, Any]:
    return report.model_dump(exclude={"seconds", "unchanged_since_last_ingest"})


def kg_state(driver: neo4j.Driver) -> tuple[int, int, str]:
    """Every KG record and relationship record, in order (to prove nothing was written)."""
    rec = driver.execute_query(
        "MATCH (n:KG) WITH n ORDER BY n.tenant, n.id, n.version "
        "WITH collect([labels(n), properties(n)]) AS ns "
        "OPTIONAL MATCH (:KG)-[r]->(:KG) WITH ns, r ORDER BY r.tenant, r.key, r.version, "
        "elementId(r) RETURN ns, collect([type(r), properties(r)]) AS rs"
    ).records[0]
    return len(rec["ns"]), len(rec["rs"]), repr((rec["ns"], rec["rs"]))


def assert_fast_no_op(driver: neo4j.Driver, *bundles: dict[str, Any]) -> IngestReport:
    """The fast path is taken, writes nothing, and reports what the full comparison does."""
    before = kg_state(driver)
    fast = ingest(driver, *bundles)
    assert fast.unchanged_since_last_ingest, fast
    assert kg_state(driver) == before
    full = ingest(driver, *bundles, full=True)
    assert not full.unchanged_since_last_ingest and not full.changed
    assert counts_of(full) == counts_of(fast)
    assert kg_state(driver) == before
    return fast


def test_identical_reingest_is_fast_and_reports_the_full_no_op(graph) -> None:
    first = ingest(graph, base())
    assert first.node_records_created == 5 and not first.unchanged_since_last_ingest
    fast = assert_fast_no_op(graph, base())
    assert (fast.nodes_unchanged, fast.edges_unchanged) == (5, 3)
    # `full=True` leaves a mark too: the next re-ingest is fast again.
    assert ingest(graph, base()).unchanged_since_last_ingest


def test_demo_dataset_is_fast_from_its_confirmed_no_op(graph) -> None:
    # The demo has histories (one id several times) and retractions: its first ingest is not
    # marked, the first re-ingest compares (and marks), the next one is fast.
    demo = load_bundle(DEMO)
    first = ingest_bundle(graph, demo)
    assert first.tombstones_created == 2
    second = ingest_bundle(graph, demo)
    assert not second.unchanged_since_last_ingest and not second.changed
    before = kg_state(graph)
    third = ingest_bundle(graph, demo)
    assert third.unchanged_since_last_ingest
    assert counts_of(third) == counts_of(second)
    assert third.retractions_unchanged == 2
    assert kg_state(graph) == before


def test_a_history_replanned_on_each_ingest_is_never_fast(graph) -> None:
    # The current record was recorded after the bundle's history of the id: each ingest of
    # the history writes its two entries again (learned now). A mark after a write would
    # have called the next ingest a no-op.
    t = datetime(2026, 1, 1, tzinfo=UTC)
    later = dict(base(), nodes=[dict(base()["nodes"][0], recorded_at=t + timedelta(days=5))])
    later.update(edges=[], documents=[])
    ingest(graph, later)
    entry = base()["nodes"][0]
    history = dict(
        later,
        nodes=[
            dict(entry, recorded_at=t + timedelta(days=1), props={"tier": "tier-1"}),
            dict(entry, recorded_at=t + timedelta(days=2), props={"tier": "tier-2"}),
        ],
    )
    for _ in range(2):
        report = ingest(graph, history)
        assert not report.unchanged_since_last_ingest
        assert report.node_records_created == 2


def _changed(bundle: dict[str, Any]) -> None:
    bundle["nodes"][1]["name"] = "b2"


def _removed(bundle: dict[str, Any]) -> None:
    del bundle["edges"][1]


def _added(bundle: dict[str, Any]) -> None:
    bundle["nodes"].append({"id": "svc:c", "label": "Service", "source_id": "src:catalog"})


def _retracted(bundle: dict[str, Any]) -> None:
    bundle["retractions"] = [{"id": "svc:b", "reason": "gone", "at": "2026-01-02T00:00:00Z"}]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (_changed, {"node_records_created": 1, "nodes_unchanged": 4, "records_superseded": 1}),
        (_removed, {"node_records_created": 0, "edges_unchanged": 2}),
        (_added, {"node_records_created": 1, "nodes_unchanged": 5}),
        (_retracted, {"tombstones_created": 1, "nodes_unchanged": 5}),
    ],
    ids=["changed", "removed", "added", "retraction"],
)
def test_a_changed_bundle_takes_the_full_path(
    graph, change: Callable[[dict[str, Any]], None], expected: dict[str, int]
) -> None:
    ingest(graph, base())
    assert ingest(graph, base()).unchanged_since_last_ingest
    other = base()
    change(other)
    report = ingest(graph, other)
    assert not report.unchanged_since_last_ingest
    for name, value in expected.items():
        assert getattr(report, name) == value, (name, report)
    # And that bundle is now the marked one.
    assert_fast_no_op(graph, other)


def test_same_content_in_another_tenant_is_written_there(graph) -> None:
    ingest(graph, base("acme"))
    report = ingest(graph, base("globex"))
    assert not report.unchanged_since_last_ingest
    assert report.node_records_created == 5 and report.edge_records_created == 3
    # Each tenant keeps its own mark.
    assert_fast_no_op(graph, base("acme"))
    assert_fast_no_op(graph, base("globex"))
    assert bundle_digest(loaded(base("acme"))) != bundle_digest(loaded(base("globex")))


def test_another_bundle_in_between_makes_the_next_ingest_compare(graph) -> None:
    ingest(graph, base())
    other = base()
    _changed(other)
    assert ingest(graph, other).node_records_created == 1
    # The original bundle is the source of truth again: it restores svc:b.
    report = ingest(graph, base())
    assert not report.unchanged_since_last_ingest
    assert report.node_records_created == 1
    assert_fast_no_op(graph, base())


def test_a_write_during_the_ingest_leaves_no_mark(graph) -> None:
    # Another ingest into the tenant runs between two write transactions of this one: this
    # one's mark would vouch for a record it did not write (team:a). It stops instead (its
    # reads are stale: graph_schema.ingest_mark `WriteScope.bump`), and run again it
    # completes the store and is marked.
    ingest(graph, base())
    this = base()
    this["nodes"][0]["name"] = "a2"
    _changed(this)
    team = dict(base()["nodes"][2], name="Team B")
    other = {"tenant": "acme", "sources": [SOURCE], "nodes": [team]}
    done: list[IngestReport] = []

    def meanwhile(message: str) -> None:
        if message.startswith("node records") and not done:
            done.append(ingest(graph, other))

    with pytest.raises(IngestInterrupted, match="another ingest or a purge of tenant acme"):
        ingest(graph, this, batch_size=1, progress=meanwhile)
    assert done[0].node_records_created == 1
    report = ingest(graph, this)
    assert not report.unchanged_since_last_ingest
    # The record the first run did not get to, and team:a as this bundle says.
    assert report.node_records_created == 2
    assert_fast_no_op(graph, this)


def _wait_until_blocked(driver: neo4j.Driver) -> None:
    """Until a transaction waits for a lock (at most 30 s)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        records = driver.execute_query(
            "SHOW TRANSACTIONS YIELD status WHERE status STARTS WITH 'Blocked' RETURN count(*) AS n"
        ).records
        if records[0]["n"]:
            return
        time.sleep(0.05)
    raise AssertionError("no transaction ever waited for the mark's lock")


def test_a_tenant_deleted_while_its_mark_is_written_leaves_no_mark(graph) -> None:
    # The tenant is deleted by hand (its mark with it) while the ingest locks the mark to
    # write it: the ingest's MERGE found the mark before the delete committed, then reads no
    # generation. That ingest used to fail with `int()` of None after its writes.
    ingest(graph, base())
    now = datetime.now(UTC)
    scope, unchanged = ingest_mark.begin(graph, loaded(base()), ["acme"], now, None, full=True)
    assert not unchanged
    outcome: dict[str, Any] = {}

    def mark() -> None:
        try:
            outcome["marked"] = ingest_mark.commit(graph, scope, now, None)
        except Exception as exc:  # reported by the assertion below
            outcome["error"] = exc

    with graph.session() as session, session.begin_transaction() as tx:
        tx.run("MATCH (n) WHERE n.tenant = 'acme' DETACH DELETE n").consume()
        marking = threading.Thread(target=mark)
        marking.start()
        _wait_until_blocked(graph)  # on the mark this transaction deletes
        tx.commit()
    marking.join(60)
    assert outcome == {"marked": False}
    marks = graph.execute_query(f"MATCH (m:{MARK_LABEL}) RETURN count(m) AS n").records
    assert marks[0]["n"] == 0
    # The tenant is a first ingest again, marked as usual.
    report = ingest(graph, base())
    assert not report.unchanged_since_last_ingest and report.node_records_created == 5
    assert_fast_no_op(graph, base())


def test_a_failed_ingest_leaves_no_mark(graph) -> None:
    ingest(graph, base())
    other = base()
    _changed(other)
    _added(other)

    def fail(message: str) -> None:
        if message.startswith("node records"):
            raise RuntimeError(f"interrupted after {message}")

    with pytest.raises(RuntimeError, match="interrupted"):
        ingest(graph, other, batch_size=1, progress=fail)
    # One batch was written: neither bundle is vouched for.
    assert not ingest(graph, base()).unchanged_since_last_ingest
    report = ingest(graph, other)
    assert not report.unchanged_since_last_ingest
    assert report.changed
    assert_fast_no_op(graph, other)


def test_a_purge_makes_the_next_ingest_compare(graph) -> None:
    ingest(graph, base())
    assert purge_content(graph, "acme", "runbook:a").records_purged == 1
    report = ingest(graph, base())
    assert not report.unchanged_since_last_ingest
    assert not report.changed  # the purged text stays purged (hashes are kept)
    assert_fast_no_op(graph, base())


@pytest.mark.parametrize(
    ("edit", "written"),
    [
        ("MATCH (n:KG {tenant: 'acme', id: 'svc:b'}) DETACH DELETE n", "node_records_created"),
        (
            "MATCH (:KG)-[r:OWNS {tenant: 'acme'}]->(:KG) SET r.superseded_at = datetime()",
            "edge_records_created",
        ),
        (
            "MATCH (:KG)-[r:OWNS {tenant: 'acme'}]->(:KG) DELETE r",
            "edge_records_created",
        ),
        (
            "MATCH (a:KG {tenant: 'acme', id: 'team:a'}), (b:KG {tenant: 'acme', id: 'svc:a'}) "
            "CREATE (a)-[:OWNS {tenant: 'acme', key: 'OWNS|team:a|svc:a', version: 9, "
            "content_hash: 'sha256:0', status: 'active', recorded_at: datetime()}]->(b)",
            "edge_records_created",
        ),
        (
            "MATCH (n:KG {tenant: 'acme', id: 'svc:b'}) "
            "CREATE (:KG:Service {tenant: 'acme', id: 'svc:b', version: 9, status: 'active', "
            "content_hash: 'sha256:0', recorded_at: datetime()})",
            "node_records_created",
        ),
    ],
    ids=["node-deleted", "edge-superseded", "edge-deleted", "edge-added", "node-added"],
)
def test_records_deleted_or_added_by_hand_make_the_next_ingest_compare(
    graph, edit: str, written: str
) -> None:
    ingest(graph, base())
    assert ingest(graph, base()).unchanged_since_last_ingest
    graph.execute_query(edit)
    report = ingest(graph, base())
    assert not report.unchanged_since_last_ingest
    assert getattr(report, written) >= 1, report
    assert_fast_no_op(graph, base())


def test_a_bundle_that_became_invalid_is_rejected_not_skipped(graph) -> None:
    ingest(graph, base())
    extra = {
        "tenant": "acme",
        "edges": [
            {"type": "DEPENDS_ON", "from": "svc:b", "to": "svc:a", "source_id": "src:catalog"}
        ],
    }
    ingest(graph, extra)
    assert ingest(graph, extra).unchanged_since_last_ingest
    graph.execute_query("MATCH (n:KG {tenant: 'acme', id: 'svc:a'}) DETACH DELETE n")
    with pytest.raises(BundleRejected, match="1 problem"):
        ingest(graph, extra)


def test_an_earlier_ingest_time_is_validated_again(graph) -> None:
    t = datetime(2026, 3, 1, tzinfo=UTC)
    bundle = base()
    bundle["nodes"][0]["observed_at"] = (t - timedelta(hours=1)).isoformat()
    ingest(graph, bundle, now=t)
    assert ingest(graph, bundle, now=t + timedelta(days=1)).unchanged_since_last_ingest
    with pytest.raises(BundleRejected):
        ingest(graph, bundle, now=t - timedelta(hours=2))  # observed_at is then in the future


def test_a_time_and_its_text_are_different_bundles() -> None:
    # `model_dump_json` writes both the same way; the digest must not.
    at = datetime(2026, 1, 1, tzinfo=UTC)
    as_time, as_text = base(), base()
    as_time["nodes"][0]["props"] = {"since": at}
    as_text["nodes"][0]["props"] = {"since": "2026-01-01T00:00:00Z"}
    assert bundle_digest(loaded(as_time)) != bundle_digest(loaded(as_text))
    # Order is content (a history is written in order), where it came from is not.
    one, two = base(), base("globex")
    assert bundle_digest(loaded(one, two)) != bundle_digest(loaded(two, one))
    again = LoadedBundle.from_bundles(
        [("elsewhere", Bundle.model_validate(one)), ("x", Bundle.model_validate(two))]
    )
    assert bundle_digest(loaded(one, two)) == bundle_digest(again)


def test_the_mark_is_no_kg_record_and_no_template_names_it(graph) -> None:
    ingest(graph, base())
    marks = graph.execute_query(
        "MATCH (m:IngestMark) RETURN labels(m) AS labels, keys(m) AS keys"
    ).records
    assert [r["labels"] for r in marks] == [[MARK_LABEL]]
    assert "KG" not in marks[0]["keys"] and set(marks[0]["keys"]) >= {"tenant", "digest"}
    templates = REPO / "cypher_templates" / "templates"
    for path in templates.rglob("*"):
        if path.is_file():
            assert MARK_LABEL not in path.read_text(encoding="utf-8"), path


def _write(tmp_path: Path, data: dict[str, Any], name: str = "bundle.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_cli_says_unchanged_and_full_compares(graph, cli_env, invoke, tmp_path) -> None:
    path = _write(tmp_path, base())
    assert invoke("ingest", str(path)).code == 0
    again = invoke("ingest", str(path))
    assert again.code == 0, again
    assert "unchanged since the last ingest of this bundle" in again.out
    full = invoke("ingest", str(path), "--full", "--json")
    assert full.code == 0, full
    fast = invoke("ingest", str(path), "--json")
    assert fast.code == 0, fast
    full_report, fast_report = json.loads(full.out), json.loads(fast.out)
    assert not full_report["unchanged_since_last_ingest"]
    assert fast_report["unchanged_since_last_ingest"]
    for report in (full_report, fast_report):
        del report["seconds"], report["unchanged_since_last_ingest"]
    assert full_report == fast_report
    assert "--full" in invoke("ingest", "--help").out


def test_cli_a_hostile_folder_cannot_use_the_mark(graph, cli_env, invoke, tmp_path) -> None:
    folder = tmp_path / "bundle"
    folder.mkdir()
    _write(folder, base())
    assert invoke("ingest", str(folder)).code == 0
    assert "unchanged since" in invoke("ingest", str(folder)).out
    # The same bundle plus a file that does not parse: rejected as before, nothing written.
    (folder / "zz.yaml").write_text("tenant: [unclosed\n", encoding="utf-8")
    before = kg_state(graph)
    result = invoke("ingest", str(folder))
    assert result.code == 2, result
    assert "nothing written" in result.err
    # The library too: the parts that did load are the marked bundle, the problems are not.
    hostile = load_bundle(folder)
    assert hostile.problems and bundle_digest(hostile) == bundle_digest(
        load_bundle(folder / "bundle.yaml")
    )
    with pytest.raises(BundleRejected):
        ingest_bundle(graph, hostile)
    assert kg_state(graph) == before
