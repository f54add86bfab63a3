"""The Context Graph recorder against a real Neo4j: shape, chain, append-only, idempotency.

Runs here are synthetic but made of real pydantic models, recorded through the public
`RunRecorder` API; the end-to-end runs of a real investigation are in test_replay*.py.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import neo4j
import pytest
from test_context_graph_support import (
    ClaimModel,
    Goal,
    Pack,
    all_labels,
    evidence,
    record_full_run,
    request,
    tool_call,
)

from cypher_templates.subject import PrincipalRecord
from investigator.context_graph import (
    CtxKind,
    RecorderError,
    RunRecorder,
    RunStart,
    RunStatus,
    ToolCallRecord,
    list_runs,
    load_lineage,
    sha256_of,
    verify_chain,
)
from investigator.context_graph.audit import RunReader
from investigator.context_graph.models import ALL_CTX_LABELS
from investigator.context_graph.recorder import CONSTRAINTS, RunLog, ctx_database_from_env
from investigator.errors import BadInput
from investigator.settings import ConnectionSettings

REPO = Path(__file__).resolve().parents[1]

# Reads every run of tenant acme (the runs of this file are acme/user:alice's).
AUDIT_READER = RunReader(
    principal=PrincipalRecord(tenant="acme", id="user:auditor", labels=(), purposes=("audit",)),
    purpose="audit",
)


def _count(driver: neo4j.Driver, run_id: str) -> int:
    records, _, _ = driver.execute_query(
        "MATCH (n:CtxEvent {run_id: $r}) RETURN count(n) AS c", r=run_id
    )
    return int(records[0]["c"])


def test_a_recorded_run_has_a_complete_lineage(clean_db: neo4j.Driver) -> None:
    rec = RunRecorder(clean_db)
    run_id = record_full_run(rec)

    # Every claim reaches its evidence, every evidence its tool call, every tool call the
    # plan and the goal, and everything hangs off the run.
    records, _, _ = clean_db.execute_query(
        """
        MATCH (c:CtxClaim {run_id: $r})
        UNWIND c.evidence_ids AS eid
        OPTIONAL MATCH path = (c)-[:WAS_DERIVED_FROM]->(e:CtxEvidence {evidence_id: eid})
              -[:WAS_GENERATED_BY]->(t:CtxToolCall)-[:USED]->(p:CtxPlan)
              -[:WAS_DERIVED_FROM]->(g:CtxGoal)-[:WAS_GENERATED_BY]->(run:CtxRun {run_id: $r})
        RETURN c.claim_id AS claim, eid, path IS NOT NULL AS reached
        """,
        r=run_id,
    )
    assert {(r["claim"], r["eid"]) for r in records} == {
        ("c-1", "ev:1"),
        ("c-2", "ev:2"),
        ("c-2", "ev:3"),
    }
    assert all(r["reached"] for r in records), records
    # Claims also derive from the pack, the pack from each evidence it holds.
    records, _, _ = clean_db.execute_query(
        "MATCH (c:CtxClaim {run_id: $r})-[:WAS_DERIVED_FROM]->(p:CtxPack)"
        "-[:WAS_DERIVED_FROM]->(e:CtxEvidence) "
        "RETURN count(DISTINCT c) AS c, count(DISTINCT e) AS e",
        r=run_id,
    )
    assert (records[0]["c"], records[0]["e"]) == (2, 3)
    # The run is associated with its agent, which acts on behalf of the subject (by id).
    records, _, _ = clean_db.execute_query(
        "MATCH (:CtxRun {run_id: $r})-[:WAS_ASSOCIATED_WITH]->(a:CtxAgent) "
        "RETURN a.on_behalf_of AS s",
        r=run_id,
    )
    assert [r["s"] for r in records] == ["acme/user:alice"]

    lineage = load_lineage(clean_db, run_id)
    assert [n.seq for n in lineage.nodes] == list(range(14))
    assert all(n.properties["run_id"] == run_id for n in lineage.nodes)
    report = verify_chain(lineage)
    assert report.chain_valid, [p.describe() for p in report.problems]
    assert lineage.run_properties is not None
    assert lineage.run_properties["status"] == "complete"
    assert report.head_hash == lineage.run_properties["head_hash"]


def test_every_node_is_chained_to_the_one_before(clean_db: neo4j.Driver) -> None:
    run_id = record_full_run(RunRecorder(clean_db))
    nodes = load_lineage(clean_db, run_id).nodes
    assert nodes[0].properties["prev_hash"] == "sha256:" + "0" * 64
    for before, after in itertools.pairwise(nodes):
        assert after.properties["prev_hash"] == before.properties["hash"]
        assert after.properties["prev_kind"] == before.kind
    assert len({n.properties["hash"] for n in nodes}) == len(nodes)


def test_recorder_writes_only_ctx_labels_and_never_touches_kg(clean_db: neo4j.Driver) -> None:
    clean_db.execute_query(
        "CREATE (:KG:Service {id: 'svc:payment-api', tenant: 'acme', version: 1, "
        "name: 'payment-api'})"
    )
    record_full_run(RunRecorder(clean_db))
    assert all_labels(clean_db) - {"KG", "Service"} <= ALL_CTX_LABELS
    records, _, _ = clean_db.execute_query(
        "MATCH (k:KG) OPTIONAL MATCH (k)-[r]-() RETURN properties(k) AS p, count(r) AS rels"
    )
    assert records[0]["rels"] == 0
    assert records[0]["p"] == {
        "id": "svc:payment-api",
        "tenant": "acme",
        "version": 1,
        "name": "payment-api",
    }
    # No Ctx node carries a KG label, and no relationship leaves the Context Graph.
    records, _, _ = clean_db.execute_query(
        "MATCH (a:CtxEvent)-[r]-(b) WHERE NOT b:CtxEvent OR a:KG RETURN count(r) AS c"
    )
    assert records[0]["c"] == 0
    # The recorder's Cypher never names a KG label.
    source = (REPO / "investigator/context_graph/recorder.py").read_text()
    assert ":KG" not in source and "KG:" not in source


def test_schema_is_created_idempotently(clean_db: neo4j.Driver) -> None:
    RunRecorder(clean_db).ensure_schema()
    RunRecorder(clean_db).ensure_schema()
    records, _, _ = clean_db.execute_query("SHOW CONSTRAINTS YIELD name RETURN collect(name) AS n")
    names = set(records[0]["n"])
    assert {"ctx_event_seq", "ctx_event_id", "ctx_run_id", "ctx_run_idempotency_scope"} <= names
    assert "ctx_run_idempotency" not in names  # keys are unique per (tenant, subject) only
    assert len([c for c in CONSTRAINTS if c.startswith("CREATE CONSTRAINT")]) == 6


def test_a_database_without_the_ctx_schema_gets_it_before_the_first_write(
    clean_db: neo4j.Driver,
) -> None:
    from investigator.context_graph.ledger import LEDGER_CONSTRAINTS
    from investigator.context_graph.schema import schema_in_place

    every = CONSTRAINTS + LEDGER_CONSTRAINTS
    RunRecorder(clean_db).ensure_schema()
    assert schema_in_place(clean_db, every, None)  # in place: a recorder only reads
    # A fresh database (one constraint and one index missing), and the legacy per-key
    # constraint of older releases back: the check sees each, the recorder repairs them.
    for statement in (
        "DROP CONSTRAINT ctx_run_idempotency_scope IF EXISTS",
        "DROP INDEX ctx_run_started IF EXISTS",
        "DROP CONSTRAINT ctx_anchor_run IF EXISTS",
        "CREATE CONSTRAINT ctx_run_idempotency IF NOT EXISTS "
        "FOR (n:CtxRun) REQUIRE n.idempotency_key IS UNIQUE",
    ):
        clean_db.execute_query(statement)
        assert not schema_in_place(clean_db, every, None), statement
    run_id = record_full_run(RunRecorder(clean_db))
    assert schema_in_place(clean_db, every, None)
    records, _, _ = clean_db.execute_query("SHOW CONSTRAINTS YIELD name RETURN collect(name) AS n")
    assert {"ctx_run_idempotency_scope", "ctx_anchor_run"} <= set(records[0]["n"])
    assert "ctx_run_idempotency" not in records[0]["n"]
    assert verify_chain(load_lineage(clean_db, run_id)).chain_valid


def test_a_run_is_incomplete_until_finish_run(clean_db: neo4j.Driver) -> None:
    rec = RunRecorder(clean_db)
    run_id = record_full_run(rec, finish=False)
    runs = list_runs(clean_db, AUDIT_READER)
    assert [(r.run_id, r.status) for r in runs] == [(run_id, "incomplete")]
    assert verify_chain(load_lineage(clean_db, run_id)).chain_valid
    rec.finish_run(run_id, RunStatus.PARTIAL, "max_rounds")
    (summary,) = list_runs(clean_db, AUDIT_READER)
    assert (summary.status, summary.stop_reason, summary.node_count) == (
        "partial",
        "max_rounds",
        14,
    )


def test_a_finished_run_is_append_only(clean_db: neo4j.Driver) -> None:
    rec = RunRecorder(clean_db)
    run_id = record_full_run(rec)
    before = _count(clean_db, run_id)
    with pytest.raises(RecorderError, match="already complete"):
        rec.record_goal(run_id, Goal(text="late", intents=[]))
    with pytest.raises(RecorderError, match="already complete"):
        rec.finish_run(run_id, "complete", "again")
    assert _count(clean_db, run_id) == before


def test_finish_run_needs_a_final_status(clean_db: neo4j.Driver) -> None:
    rec = RunRecorder(clean_db)
    run_id = rec.start_run(request()).run_id
    with pytest.raises(RecorderError, match="final status"):
        rec.finish_run(run_id, "incomplete", None)
    with pytest.raises(ValueError):
        rec.finish_run(run_id, "done-ish", None)


def test_lineage_gaps_are_refused_and_nothing_is_half_written(clean_db: neo4j.Driver) -> None:
    rec = RunRecorder(clean_db)
    run_id = rec.start_run(request()).run_id
    rec.record_tool_call(run_id, tool_call("tc-1", []))
    before = _count(clean_db, run_id)
    with pytest.raises(RecorderError, match="tool call tc-9"):
        rec.record_evidence(run_id, evidence(1), "tc-9")
    with pytest.raises(RecorderError, match="already recorded"):
        rec.record_tool_call(run_id, tool_call("tc-1", []))
    rec.record_evidence(run_id, evidence(1), "tc-1")
    with pytest.raises(RecorderError, match="already recorded"):
        rec.record_evidence(run_id, evidence(1), "tc-1")
    with pytest.raises(RecorderError, match="not recorded"):
        rec.record_pack(
            run_id, Pack(pack_id="p", pack_hash="sha256:x", evidence=[evidence(1), evidence(7)])
        )
    with pytest.raises(RecorderError, match="not recorded"):
        rec.record_claims(
            run_id,
            [
                ClaimModel(
                    claim_id="ok",
                    statement="s",
                    epistemic_status="fact",
                    confidence=1,
                    evidence_ids=["ev:1"],
                ),
                ClaimModel(
                    claim_id="bad",
                    statement="s",
                    epistemic_status="fact",
                    confidence=1,
                    evidence_ids=["ev:8"],
                ),
            ],
        )
    # Only the one good evidence was added; the refused batch of claims left nothing behind.
    assert _count(clean_db, run_id) == before + 1
    with pytest.raises(RecorderError, match="not recorded"):
        rec.record_goal("run-does-not-exist", Goal(text="x", intents=[]))
    assert verify_chain(load_lineage(clean_db, run_id)).chain_valid


def test_same_idempotency_key_and_request_returns_the_original_run(clean_db: neo4j.Driver) -> None:
    rec = RunRecorder(clean_db)
    first = rec.start_run(request(idempotency_key="ticket-4097"))
    assert first.created
    again = RunRecorder(clean_db).start_run(request(idempotency_key="ticket-4097"))
    assert (again.run_id, again.created, again.known_at) == (first.run_id, False, first.known_at)
    with pytest.raises(BadInput, match="different request"):
        rec.start_run(request(question="Something else entirely?", idempotency_key="ticket-4097"))
    with pytest.raises(BadInput, match="different request"):
        rec.start_run(request(purpose="audit", idempotency_key="ticket-4097"))
    other = rec.start_run(request(idempotency_key="ticket-4098"))
    assert other.created and other.run_id != first.run_id
    assert len(list_runs(clean_db, AUDIT_READER)) == 2


def test_known_at_defaults_to_the_start_time_and_is_recorded(clean_db: neo4j.Driver) -> None:
    rec = RunRecorder(clean_db)
    start = rec.start_run(request(known_at=None))
    assert start.known_at == start.started_at
    (summary,) = list_runs(clean_db, AUDIT_READER)
    assert summary.known_at == summary.started_at
    assert summary.known_at is not None and summary.known_at.endswith("Z")


def test_runs_lists_newest_first_with_a_limit(clean_db: neo4j.Driver) -> None:
    rec = RunRecorder(clean_db)
    ids = [rec.start_run(request(question=f"question {i}")).run_id for i in range(3)]
    runs = list_runs(clean_db, AUDIT_READER, limit=2)
    assert [r.run_id for r in runs] == [ids[2], ids[1]]
    assert runs[0].question == "question 2" and runs[0].subject_id == "user:alice"
    for bad in (0, -1, 1001):
        with pytest.raises(BadInput):
            list_runs(clean_db, AUDIT_READER, limit=bad)


def test_ctx_database_is_configurable(
    monkeypatch: pytest.MonkeyPatch, clean_db: neo4j.Driver
) -> None:
    monkeypatch.setenv("INVESTIGATOR_CTX_DATABASE", "neo4j")
    assert ctx_database_from_env() == "neo4j"
    rec = RunRecorder(clean_db)
    assert rec.database == "neo4j"
    run_id = rec.start_run(request()).run_id
    assert load_lineage(clean_db, run_id, database="neo4j").nodes
    monkeypatch.setenv("INVESTIGATOR_CTX_DATABASE", "ctxdb-that-does-not-exist")
    with pytest.raises(neo4j.exceptions.Neo4jError):
        RunRecorder(clean_db).start_run(request())
    monkeypatch.delenv("INVESTIGATOR_CTX_DATABASE")
    assert ctx_database_from_env("fallback") == "fallback"


# -- tampering and deletion ------------------------------------------------------------

TAMPERS = [
    (0, "run", "SET n.question = 'a different question'"),
    (0, "run", "SET n.status = 'incomplete'"),
    (0, "run", "SET n.known_at = '2030-01-01T00:00:00Z'"),
    (2, "goal", "SET n.payload = '{}'"),
    (4, "tool_call", "SET n.rows_hash = 'sha256:00'"),
    (4, "tool_call", "SET n.template_version = 2"),
    (5, "evidence", "SET n.content_hash = 'sha256:forged'"),
    (5, "evidence", "SET n.extra = 'added'"),
    (9, "rejection", "SET n.reason = 'duplicate'"),
    (10, "pack", "SET n.pack_hash = 'sha256:forged'"),
    (11, "claim", "SET n.statement = 'release caused the outage'"),
    (12, "claim", "REMOVE n.confidence"),
    (13, "outcome", "SET n.stop_reason = 'budget'"),
    (6, "evidence", "SET n.prev_hash = 'sha256:1'"),
]


@pytest.mark.parametrize(
    ("seq", "kind", "change"), TAMPERS, ids=[f"{k}-{c.split()[1]}" for _, k, c in TAMPERS]
)
def test_tampering_with_any_property_is_detected_and_placed(
    clean_db: neo4j.Driver, seq: int, kind: str, change: str
) -> None:
    run_id = record_full_run(RunRecorder(clean_db))
    # The test plays the attacker; the change is a fixed literal from the table above.
    clean_db.execute_query("MATCH (n:CtxEvent {run_id: $r, seq: $s}) " + change, r=run_id, s=seq)
    report = verify_chain(load_lineage(clean_db, run_id))
    assert not report.chain_valid
    places = {(p.run_id, p.seq, p.kind) for p in report.problems}
    assert (run_id, seq, kind) in places, [p.describe() for p in report.problems]


@pytest.mark.parametrize(
    ("seq", "kind"), [(5, "evidence"), (7, "tool_call"), (11, "claim"), (13, "outcome")]
)
def test_deleting_a_recorded_node_is_detected_and_placed(
    clean_db: neo4j.Driver, seq: int, kind: str
) -> None:
    run_id = record_full_run(RunRecorder(clean_db))
    clean_db.execute_query(
        "MATCH (n:CtxEvent {run_id: $r, seq: $s}) DETACH DELETE n", r=run_id, s=seq
    )
    report = verify_chain(load_lineage(clean_db, run_id))
    assert not report.chain_valid
    missing = [p for p in report.problems if p.seq == seq and "missing (deleted)" in p.problem]
    assert [(p.kind, p.run_id) for p in missing] == [(kind, run_id)], [
        p.describe() for p in report.problems
    ]


def test_deleting_the_run_node_or_a_relationship_is_detected(clean_db: neo4j.Driver) -> None:
    run_id = record_full_run(RunRecorder(clean_db))
    clean_db.execute_query(
        "MATCH (:CtxClaim {run_id: $r, seq: 12})-[x:WAS_DERIVED_FROM]->(:CtxEvidence {seq: 8}) "
        "DELETE x",
        r=run_id,
    )
    report = verify_chain(load_lineage(clean_db, run_id))
    assert any(
        p.seq == 12 and p.kind == "claim" and "WAS_DERIVED_FROM to seq 8" in p.problem
        for p in report.problems
    )
    clean_db.execute_query("MATCH (n:CtxRun {run_id: $r}) DETACH DELETE n", r=run_id)
    report = verify_chain(load_lineage(clean_db, run_id))
    assert any(p.seq == 0 and p.kind == "run" and "missing" in p.problem for p in report.problems)


def test_a_relationship_to_a_kg_node_is_reported(clean_db: neo4j.Driver) -> None:
    run_id = record_full_run(RunRecorder(clean_db))
    clean_db.execute_query(
        "MATCH (e:CtxEvidence {run_id: $r, seq: 5}) "
        "CREATE (e)-[:USED]->(:KG:Service {id: 'svc:x'})",
        r=run_id,
    )
    report = verify_chain(load_lineage(clean_db, run_id))
    assert any(p.seq == 5 and "unexpected relationship USED" in p.problem for p in report.problems)


# -- a crash between two steps ---------------------------------------------------------

_CHILD = textwrap.dedent(
    """
    import sys
    from pydantic import SecretStr
    from investigator.connection import open_driver
    from investigator.settings import ConnectionSettings
    from investigator.context_graph import RunRecorder
    from test_context_graph_support import Goal, Plan, evidence, request, tool_call

    settings = ConnectionSettings(
        uri=sys.argv[1], user=sys.argv[2], password=SecretStr(sys.argv[3])
    )
    rec = RunRecorder(open_driver(settings))
    run_id = rec.start_run(request()).run_id
    rec.record_goal(run_id, Goal(text="g", intents=[]))
    rec.record_plan(run_id, Plan(plan_id="p", steps=[]))
    rec.record_tool_call(run_id, tool_call("tc-1", []))
    print(run_id, flush=True)
    sys.stdin.readline()  # the parent kills us here, between two steps
    rec.record_evidence(run_id, evidence(1), "tc-1")
    rec.finish_run(run_id, "complete", "evidence_sufficient")
    print("finished", flush=True)
    """
)


def test_a_run_killed_between_two_steps_stays_incomplete(
    clean_db: neo4j.Driver, neo4j_settings: ConnectionSettings
) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(REPO / "tests")]))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _CHILD,
            neo4j_settings.uri,
            neo4j_settings.user,
            neo4j_settings.password.get_secret_value(),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        run_id = proc.stdout.readline().strip()
        assert run_id.startswith("run-"), proc.stderr.read() if proc.stderr else ""
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    (summary,) = list_runs(clean_db, AUDIT_READER)
    assert (summary.run_id, summary.status, summary.node_count) == (run_id, "incomplete", 5)
    lineage = load_lineage(clean_db, run_id)
    assert [n.kind for n in lineage.nodes] == ["run", "agent", "goal", "plan", "tool_call"]
    assert verify_chain(lineage).chain_valid  # a valid prefix, never a half-shaped lineage


def test_hashes_are_canonical() -> None:
    assert sha256_of({"b": 1, "a": [1, 2]}) == sha256_of({"a": [1, 2], "b": 1})
    assert sha256_of({"a": 1}) != sha256_of({"a": 1.5})


def test_the_original_answer_is_kept_for_idempotent_retries(clean_db: neo4j.Driver) -> None:
    rec = RunRecorder(clean_db)
    start = rec.start_run(request(idempotency_key="k-1"))
    rec.finish_run(
        start.run_id, "complete", "evidence_sufficient", result=Goal(text="a", intents=["b"])
    )
    again = rec.start_run(request(idempotency_key="k-1"))
    assert (again.run_id, again.created, again.status) == (start.run_id, False, RunStatus.COMPLETE)
    outcome = load_lineage(clean_db, again.run_id).of_kind(CtxKind.OUTCOME)[-1]
    assert json.loads(outcome.properties["result"]) == {"text": "a", "intents": ["b"]}


def test_idempotency_keys_are_scoped_per_tenant_and_subject(clean_db: neo4j.Driver) -> None:
    rec = RunRecorder(clean_db)
    alice = rec.start_run(request(idempotency_key="ticket-1"))
    bob = rec.start_run(request(subject_id="acme/user:bob", idempotency_key="ticket-1"))
    globex = request(subject_id="globex/user:alice", idempotency_key="ticket-1")
    other_tenant = rec.start_run(globex)
    assert alice.created and bob.created and other_tenant.created
    assert len({alice.run_id, bob.run_id, other_tenant.run_id}) == 3
    assert rec.start_run(request(idempotency_key="ticket-1")).run_id == alice.run_id


def test_a_run_log_writes_a_whole_run_in_few_transactions(clean_db: neo4j.Driver) -> None:
    rec = RunRecorder(clean_db)
    start = rec.start_run(request())
    log = rec.open_log(start)
    log.add_goal(Goal(text="g", intents=["i"]))
    log.add_plan(Goal(text="plan", intents=[]))
    log.add_tool_call(tool_call("tc-01-001", [{"a": 1}]))
    evs = [evidence(1), evidence(2)]
    for ev in evs:
        log.add_evidence(ev, "tc-01-001")
    # Nothing pending is visible: a process killed now leaves the started run, incomplete.
    killed = load_lineage(clean_db, start.run_id)
    assert [n.kind for n in killed.nodes] == ["run", "agent"]
    assert verify_chain(killed).chain_valid
    log.flush()
    flushed = load_lineage(clean_db, start.run_id)
    assert flushed.run_properties and flushed.run_properties["status"] == "incomplete"
    assert verify_chain(flushed).chain_valid and len(flushed.nodes) == 7
    log.add_pack(Pack(pack_id="p", pack_hash=sha256_of([e.evidence_id for e in evs]), evidence=evs))
    log.finish(RunStatus.COMPLETE, "evidence_sufficient")
    done = load_lineage(clean_db, start.run_id)
    assert verify_chain(done).chain_valid and log.transactions == 2
    assert done.run_properties and done.run_properties["status"] == "complete"
    with pytest.raises(RecorderError, match="not recorded"):
        rec.open_log(rec.start_run(request())).add_evidence(evidence(3), "tc-09-009")


def _started_log_with_a_goal(driver: neo4j.Driver) -> tuple[RunRecorder, RunStart, RunLog]:
    rec = RunRecorder(driver)
    start = rec.start_run(request())
    log = rec.open_log(start)
    log.add_goal(Goal(text="g", intents=["i"]))
    return rec, start, log


def test_a_background_flush_overlaps_the_run_and_the_finish_waits_for_it(
    clean_db: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A round's due write goes to the recorder's writer thread: the run goes on (its next
    # tool call is added while the write has not committed) and the lineage stays one chain.
    rec, start, log = _started_log_with_a_goal(clean_db)
    log.add_plan(Goal(text="plan", intents=[]))
    commit, added, writers = rec._commit, threading.Event(), []

    def held(*args: Any, **kwargs: Any) -> Any:
        writers.append(threading.current_thread())
        if len(writers) == 1:
            assert added.wait(60), "the caller waited for the flush"
        return commit(*args, **kwargs)

    monkeypatch.setattr(rec, "_commit", held)
    log.flush_in_background()
    log.add_tool_call(tool_call("tc-01-001", [{"a": 1}]))
    added.set()
    log.finish(RunStatus.COMPLETE, "evidence_sufficient")
    done = load_lineage(clean_db, start.run_id)
    assert [n.kind for n in done.nodes] == ["run", "agent", "goal", "plan", "tool_call", "outcome"]
    assert verify_chain(done).chain_valid and log.transactions == 2
    assert writers[0] is not threading.main_thread() and writers[1] is threading.main_thread()


def test_a_failed_background_flush_fails_the_run_with_nothing_lost(
    clean_db: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The flush's error reaches the run at its next write, as a flush's did before; its nodes
    # are pending again, so the `failed` finish that follows writes the whole chain.
    rec, start, log = _started_log_with_a_goal(clean_db)
    commit, calls = rec._commit, []

    def first_fails(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise neo4j.exceptions.ServiceUnavailable("gone for a moment")
        return commit(*args, **kwargs)

    monkeypatch.setattr(rec, "_commit", first_fails)
    log.flush_in_background()
    log.add_plan(Goal(text="plan", intents=[]))
    with pytest.raises(neo4j.exceptions.ServiceUnavailable):
        log.finish(RunStatus.COMPLETE, "evidence_sufficient")
    log.finish(RunStatus.FAILED, "error")
    done = load_lineage(clean_db, start.run_id)
    assert [n.kind for n in done.nodes] == ["run", "agent", "goal", "plan", "outcome"]
    assert verify_chain(done).chain_valid
    assert done.run_properties and done.run_properties["status"] == "failed"


def test_a_finish_cut_off_before_its_write_leaves_one_outcome(
    clean_db: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ctrl-C while the finish waits on the database: nothing of it is written, and the
    # `failed` finish that follows is the run's one outcome. Before, the cut-off outcome stayed
    # pending and was written first (a run with `evidence_sufficient` then `error`, listed
    # twice by `runs`).
    rec = RunRecorder(clean_db)
    start = rec.start_run(request())
    log = rec.open_log(start)
    log.add_goal(Goal(text="g", intents=["i"]))
    commit = rec._commit
    calls = 0

    def cut_off(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise KeyboardInterrupt
        return commit(*args, **kwargs)

    monkeypatch.setattr(rec, "_commit", cut_off)
    with pytest.raises(KeyboardInterrupt):
        log.finish(RunStatus.COMPLETE, "evidence_sufficient")
    log.finish(RunStatus.FAILED, "error")
    done = load_lineage(clean_db, start.run_id)
    outcomes = done.of_kind(CtxKind.OUTCOME)
    assert [o.properties["stop_reason"] for o in outcomes] == ["error"]
    assert [n.kind for n in done.nodes] == ["run", "agent", "goal", "outcome"]
    assert verify_chain(done).chain_valid
    assert done.run_properties and done.run_properties["status"] == "failed"
    # A run recorded that way before holds two outcomes: `runs` still lists it once, with its
    # last outcome.
    clean_db.execute_query(
        "CREATE (:CtxEvent:CtxOutcome {run_id: $run, seq: 99, stop_reason: 'evidence_sufficient'})",
        run=start.run_id,
    )
    (listed,) = list_runs(clean_db, AUDIT_READER)
    assert (listed.run_id, listed.stop_reason) == (start.run_id, "evidence_sufficient")


def test_ctx_database_follows_the_kg_database_unless_configured(
    monkeypatch: pytest.MonkeyPatch, driver: neo4j.Driver
) -> None:
    monkeypatch.delenv("INVESTIGATOR_CTX_DATABASE", raising=False)
    monkeypatch.setenv("NEO4J_DATABASE", "kgdb")
    assert RunRecorder(driver).database == "kgdb"
    monkeypatch.setenv("INVESTIGATOR_CTX_DATABASE", "ctxdb")
    assert RunRecorder(driver).database == "ctxdb"
    assert RunRecorder(driver, database="explicit").database == "explicit"
    monkeypatch.delenv("NEO4J_DATABASE")
    monkeypatch.delenv("INVESTIGATOR_CTX_DATABASE")
    assert RunRecorder(driver).database is None


def test_tool_call_record_accepts_the_nested_params_shape() -> None:
    nested = tool_call("tc-1", []).model_dump()
    nested["params"] = {"params": {"service_id": "svc:x"}, "options": {"hops": 2}}
    nested["options"] = {}
    nested["template_version"] = "3"
    record = ToolCallRecord.model_validate(nested)
    assert (record.params, record.options, record.template_version) == (
        {"service_id": "svc:x"},
        {"hops": 2},
        3,
    )


def test_concurrent_appends_to_one_run_keep_one_chain(clean_db: neo4j.Driver) -> None:
    from concurrent.futures import ThreadPoolExecutor

    run_id = RunRecorder(clean_db).start_run(request()).run_id

    def append(worker: int) -> None:
        rec = RunRecorder(clean_db)  # each worker its own recorder, like two processes
        for i in range(8):
            rec.record_goal(run_id, Goal(text=f"worker {worker} goal {i}", intents=[]))

    with ThreadPoolExecutor(max_workers=3) as pool:
        list(pool.map(append, range(3)))
    lineage = load_lineage(clean_db, run_id)
    assert [n.seq for n in lineage.nodes] == list(range(2 + 3 * 8))
    report = verify_chain(lineage)
    assert report.chain_valid, [p.describe() for p in report.problems]


def test_concurrent_starts_with_one_idempotency_key_make_one_run(clean_db: neo4j.Driver) -> None:
    from concurrent.futures import ThreadPoolExecutor

    RunRecorder(clean_db).ensure_schema()

    def start(_: int) -> str:
        return RunRecorder(clean_db).start_run(request(idempotency_key="race-1")).run_id

    with ThreadPoolExecutor(max_workers=4) as pool:
        ids = set(pool.map(start, range(4)))
    assert len(ids) == 1
    assert [r.run_id for r in list_runs(clean_db, AUDIT_READER)] == list(ids)


def test_runs_sort_by_start_time_even_on_a_whole_second(clean_db: neo4j.Driver) -> None:
    from datetime import UTC, datetime

    # Whole-second and fractional instants in the same second: the classic string-sort trap.
    instants = iter(
        [
            datetime(2026, 7, 23, 10, 0, 1, tzinfo=UTC),
            datetime(2026, 7, 23, 10, 0, 1, 500000, tzinfo=UTC),
        ]
    )
    rec = RunRecorder(clean_db, clock=lambda: next(instants))
    earlier = rec.start_run(request(question="first")).run_id
    later = rec.start_run(request(question="second")).run_id
    assert [r.run_id for r in list_runs(clean_db, AUDIT_READER)] == [later, earlier]


def test_the_batch_statement_labels_every_kind_and_links_every_relation() -> None:
    # The write statement spells out labels and types (no text built from values); a new
    # CtxKind or ProvRelation must be added to it, or its nodes would lose their label.
    from investigator.context_graph.models import KIND_LABELS, ProvRelation
    from investigator.context_graph.recorder import _WRITE_BATCH

    for kind, label in KIND_LABELS.items():
        assert f"row.kind = '{kind.value}' THEN [1] ELSE [] END | SET n:{label})" in _WRITE_BATCH
    for rel in ProvRelation:
        assert f"edge[0] = '{rel.value}' THEN [1] ELSE [] END | " in _WRITE_BATCH
        assert f"CREATE (a)-[:{rel.value}]->(b))" in _WRITE_BATCH
    assert _WRITE_BATCH.count("FOREACH") == len(KIND_LABELS) + len(ProvRelation) + 1
