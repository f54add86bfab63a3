"""Anchoring finished runs (issue 11, "Hash chain: truncation and deletion detected").

Runs are recorded by the real recorder into the real Neo4j, anchored at finish; then each
kind of tampering is tried on them, one at a time, inside a transaction that is rolled back
after `verify` has looked (so every attempt starts from the same recorded runs): every
single-node deletion, every tail truncation (head and status reset, the strongest form),
every edit of every recorded property, whole-run deletions with and without their anchor,
a consistently re-hashed rewrite, and a forged anchor. The target is 100% detected.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import neo4j
import pytest
from test_context_graph_support import record_full_run, request

from graph_schema.bundle import load_bundle
from graph_schema.schema_ddl import apply_schema
from graph_schema.writer import ingest_bundle
from investigator.context_graph import RunRecorder
from investigator.context_graph.chain import node_hash
from investigator.context_graph.ledger import (
    VerifyReport,
    load_chain_key,
    verify_run_in_tx,
    verify_tenant_in_tx,
)

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO / "datasets" / "payments-incident"
TENANT = "acme"


@pytest.fixture()
def chain_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The HMAC key and remembered ledger heads of this test, outside the database."""
    monkeypatch.setenv("INVESTIGATOR_CHAIN_DIR", str(tmp_path))
    monkeypatch.delenv("INVESTIGATOR_CHAIN_KEY", raising=False)
    return tmp_path


@pytest.fixture()
def three_runs(clean_db: neo4j.Driver, chain_dir: Path) -> list[str]:
    recorder = RunRecorder(clean_db)
    return [
        record_full_run(recorder, request(f"question {n} about release-2026.07.23.1"))
        for n in range(3)
    ]


def _tampered(
    driver: neo4j.Driver,
    statements: list[tuple[str, dict[str, Any]]],
    check: Callable[[neo4j.Transaction], VerifyReport],
) -> VerifyReport:
    """Apply `statements`, verify in the same transaction, roll everything back."""
    with driver.session() as session:
        tx = session.begin_transaction()
        try:
            for query, params in statements:
                tx.run(query, **params).consume()
            return check(tx)
        finally:
            tx.rollback()


def _run_nodes(driver: neo4j.Driver, run_id: str) -> list[dict[str, Any]]:
    records, _, _ = driver.execute_query(
        "MATCH (n:CtxEvent {run_id: $r}) RETURN properties(n) AS p ORDER BY n.seq", r=run_id
    )
    return [dict(r["p"]) for r in records]


def _verify_run(run_id: str) -> Callable[[neo4j.Transaction], VerifyReport]:
    key = load_chain_key(create=False)
    return lambda tx: verify_run_in_tx(tx, run_id, TENANT, key)


def _verify_tenant() -> Callable[[neo4j.Transaction], VerifyReport]:
    key = load_chain_key(create=False)
    return lambda tx: verify_tenant_in_tx(tx, TENANT, key)


def test_finished_runs_are_anchored_and_verify(
    clean_db: neo4j.Driver, three_runs: list[str], chain_dir: Path
) -> None:
    report = _tampered(clean_db, [], _verify_tenant())
    assert report.verified, report.problems
    assert report.anchors == 3 and report.runs_checked == 3
    assert report.unanchored_runs == [] and report.key.startswith("key:")
    assert (chain_dir / "chain.key").stat().st_mode & 0o777 == 0o600
    # A run still in progress is listed, not anchored and not a problem.
    open_run = record_full_run(RunRecorder(clean_db), request("still running"), finish=False)
    report = _tampered(clean_db, [], _verify_tenant())
    assert report.verified and report.incomplete_runs == [open_run]


def test_every_single_node_deletion_is_detected(
    clean_db: neo4j.Driver, three_runs: list[str]
) -> None:
    run_id = three_runs[1]
    nodes = _run_nodes(clean_db, run_id)
    missed = []
    for node in nodes:
        delete = (
            "MATCH (n:CtxEvent {run_id: $r, seq: $s}) DETACH DELETE n",
            {"r": run_id, "s": node["seq"]},
        )
        if _tampered(clean_db, [delete], _verify_run(run_id)).verified:
            missed.append(node["seq"])
        if _tampered(clean_db, [delete], _verify_tenant()).verified:
            missed.append(("tenant", node["seq"]))
    assert len(nodes) >= 12 and missed == []


def test_every_tail_truncation_is_detected_even_with_head_and_status_reset(
    clean_db: neo4j.Driver, three_runs: list[str]
) -> None:
    run_id = three_runs[1]
    nodes = _run_nodes(clean_db, run_id)
    missed = []
    for keep in range(1, len(nodes)):
        last = nodes[keep - 1]
        cut = [
            (
                "MATCH (n:CtxEvent {run_id: $r}) WHERE n.seq >= $k DETACH DELETE n",
                {"r": run_id, "k": keep},
            ),
            (
                "MATCH (r:CtxRun {run_id: $r}) SET r.head_seq = $s, r.head_hash = $h, "
                "r.head_kind = $kind, r.status = 'incomplete'",
                {"r": run_id, "s": last["seq"], "h": last["hash"], "kind": last["kind"]},
            ),
        ]
        report = _tampered(clean_db, cut, _verify_run(run_id))
        if report.verified or "run_truncated" not in {p.kind for p in report.problems}:
            missed.append(keep)
    assert missed == []


def _edited(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, list):
        return [*value, 999] if value and isinstance(value[0], int) else [*value, "forged"]
    return f"{value}x"


def test_every_field_edit_is_detected(clean_db: neo4j.Driver, three_runs: list[str]) -> None:
    run_id = three_runs[1]
    tried, prevented, missed = 0, 0, []
    # Every recorded property of one node of each kind (the kinds share no hashing rule).
    one_of_each = {n["kind"]: n for n in reversed(_run_nodes(clean_db, run_id))}
    for node in sorted(one_of_each.values(), key=lambda n: n["seq"]):
        for name, value in sorted(node.items()):
            if name == "run_id":
                continue  # moving a node to another run is the deletion case above
            edit = (
                "MATCH (n:CtxEvent {run_id: $r, seq: $s}) SET n += $change",
                {"r": run_id, "s": node["seq"], "change": {name: _edited(value)}},
            )
            tried += 1
            try:
                if _tampered(clean_db, [edit], _verify_run(run_id)).verified:
                    missed.append((node["seq"], name))
            except neo4j.exceptions.ConstraintError:
                prevented += 1  # e.g. a seq or ctx_id another node holds: refused outright
        added = (
            "MATCH (n:CtxEvent {run_id: $r, seq: $s}) SET n.added = 'forged'",
            {"r": run_id, "s": node["seq"]},
        )
        tried += 1
        if _tampered(clean_db, [added], _verify_run(run_id)).verified:
            missed.append((node["seq"], "added"))
    assert len(one_of_each) == 10 and tried > 100 and prevented < tried // 10 and missed == []


def test_whole_run_deletion_is_detected_with_or_without_its_anchor(
    clean_db: neo4j.Driver, three_runs: list[str]
) -> None:
    first, middle, last = three_runs
    delete_run = "MATCH (n:CtxEvent {run_id: $r}) DETACH DELETE n"
    delete_anchor = "MATCH (a:CtxAnchor {run_id: $r}) DELETE a"
    kinds = []
    for run_id in three_runs:
        report = _tampered(clean_db, [(delete_run, {"r": run_id})], _verify_tenant())
        kinds.append({p.kind for p in report.problems})
    assert all("run_deleted" in k for k in kinds), kinds
    # The run and its anchor: the ledger chain breaks (first, middle) or its head does (last).
    for run_id, expected in ((first, "ledger_broken"), (middle, "ledger_broken")):
        report = _tampered(
            clean_db,
            [(delete_run, {"r": run_id}), (delete_anchor, {"r": run_id})],
            _verify_tenant(),
        )
        assert expected in {p.kind for p in report.problems}, report.problems
    # The last run, its anchor, and the ledger head rolled back to the anchor before: the
    # machine that anchored remembers the head it wrote.
    previous = clean_db.execute_query(
        "MATCH (a:CtxAnchor {run_id: $r}) RETURN a.seq AS seq, a.hash AS hash", r=middle
    ).records[0]
    rollback = (
        "MATCH (h:CtxLedgerHead {tenant: $t}) SET h.seq = $s, h.hash = $h",
        {"t": TENANT, "s": previous["seq"], "h": previous["hash"]},
    )
    report = _tampered(
        clean_db,
        [(delete_run, {"r": last}), (delete_anchor, {"r": last}), rollback],
        _verify_tenant(),
    )
    assert "ledger_truncated" in {p.kind for p in report.problems}, report.problems


def test_a_consistently_rehashed_run_and_a_forged_anchor_are_detected(
    clean_db: neo4j.Driver, three_runs: list[str]
) -> None:
    run_id = three_runs[0]
    nodes = _run_nodes(clean_db, run_id)
    # Rewrite a claim and re-hash the chain from there on, head included: the run's own
    # chain verifies again, but its head is no longer the anchored one.
    statements: list[tuple[str, dict[str, Any]]] = []
    previous_hash = None
    for node in nodes:
        props = dict(node)
        if props["kind"] == "claim" and previous_hash is None:
            props["statement"] = "the release certainly caused it"
        elif previous_hash is None:
            continue
        else:
            props["prev_hash"] = previous_hash
        props["hash"] = node_hash(props, props["kind"])
        previous_hash = props["hash"]
        statements.append(
            (
                "MATCH (n:CtxEvent {run_id: $r, seq: $s}) SET n = $p",
                {"r": run_id, "s": props["seq"], "p": props},
            )
        )
    statements.append(
        ("MATCH (r:CtxRun {run_id: $r}) SET r.head_hash = $h", {"r": run_id, "h": previous_hash})
    )
    report = _tampered(clean_db, statements, _verify_run(run_id))
    assert {p.kind for p in report.problems} == {"run_changed"}, report.problems
    # Re-anchoring it without the key: the anchor's hash can be recomputed, its HMAC not.
    from investigator.context_graph.ledger import _anchor_hash

    anchor = clean_db.execute_query(
        "MATCH (a:CtxAnchor {run_id: $r}) RETURN properties(a) AS p", r=run_id
    ).records[0]["p"]
    forged = dict(anchor, run_head_hash=previous_hash)
    forged["hash"] = _anchor_hash(forged)
    statements.append(("MATCH (a:CtxAnchor {run_id: $r}) SET a = $p", {"r": run_id, "p": forged}))
    report = _tampered(clean_db, statements, _verify_run(run_id))
    assert "anchor_mac_invalid" in {p.kind for p in report.problems}, report.problems


# -- the CLI -----------------------------------------------------------------------------------


@pytest.fixture()
def demo_runs(clean_db: neo4j.Driver, chain_dir: Path) -> Iterator[list[str]]:
    apply_schema(clean_db)
    ingest_bundle(clean_db, load_bundle(DATASET))
    recorder = RunRecorder(clean_db)
    yield [
        record_full_run(recorder, request("alice's question")),
        record_full_run(recorder, request("bob's question", subject_id="acme/user:bob")),
        record_full_run(recorder, request("mallory's question", subject_id="globex/user:mallory")),
    ]


def test_verify_cli(clean_db: neo4j.Driver, demo_runs: list[str], cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    alice, bob, _mallory = demo_runs
    res = invoke("verify", alice, "--subject", "acme/user:alice")
    assert res.code == 0, res
    assert "verified:          true" in res.out
    res = invoke("verify", "--subject", "acme/user:auditor", "--purpose", "audit", "--json")
    assert res.code == 0, res
    doc = json.loads(res.out)
    assert doc["verified"] is True and doc["anchors"] == 2 and doc["runs_checked"] == 2
    # Tampering: exit 1, the report on stdout, one line on stderr naming the place.
    clean_db.execute_query(
        "MATCH (n:CtxEvent {run_id: $r}) WHERE n.seq >= 5 DETACH DELETE n", r=bob
    )
    res = invoke("verify", bob, "--subject", "acme/user:bob", "--json")
    assert res.code == 1 and json.loads(res.out)["verified"] is False
    assert res.err.startswith(f"error: not verified: run {bob}") and res.err.count("\n") == 1
    res = invoke("verify", "--subject", "acme/user:auditor", "--purpose", "audit")
    assert res.code == 1 and f"run {bob}" in res.out
    # A deleted run is still known by its anchor: not "unknown", not verified.
    clean_db.execute_query("MATCH (n:CtxEvent {run_id: $r}) DETACH DELETE n", r=bob)
    res = invoke("verify", bob, "--subject", "acme/user:bob")
    assert res.code == 1 and "run_deleted" in res.err


def test_verify_shows_ids_a_tampered_database_holds_inert(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, demo_runs: list[str], cli_env, invoke
) -> None:
    """An auditor verifies the database that may have been tampered with: a run id edited to
    carry escape sequences is listed spelled out, never sent to the terminal."""
    bob = demo_runs[1]
    evil = bob + "\x1b]0;PWNED\x07\x1b[2J"
    clean_db.execute_query("MATCH (n:CtxEvent {run_id: $r}) SET n.run_id = $e", r=bob, e=evil)
    res = invoke("verify", "--subject", "acme/user:auditor", "--purpose", "audit")
    assert res.code == 1, res
    assert "\x1b" not in res.out + res.err and "\x07" not in res.out + res.err, res
    assert bob + "\\x1b]0;PWNED\\x07\\x1b[2J" in res.out, res


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["verify", "run-nope", "--subject", "acme/user:alice"], 2, "unknown run run-nope"),
        (["verify", "", "--subject", "acme/user:alice"], 2, "not a run id"),
        (["verify", "run-\x1b[31m", "--subject", "acme/user:alice"], 2, "not a run id"),
        (["verify", "r" * 500, "--subject", "acme/user:alice"], 2, "not a run id"),
        (["verify", "--subject", "acme/user:alice"], 3, "needs --purpose audit"),
        (["verify", "--subject", "acme/user:alice", "--purpose", "legal"], 3, "not allowed"),
        (["verify", "--subject", "acme/user:nobody", "--purpose", "audit"], 3, "unknown subject"),
        (["verify", "--subject", "acme/user:alice", "--purpose", " audit"], 2, "--purpose"),
        (["verify", "run-nope", "--subject", "acme/user:alice", "--purpose", ""], 2, "--purpose"),
    ],
)
def test_verify_cli_refuses_bad_input_with_one_line(  # type: ignore[no-untyped-def]
    demo_runs: list[str], cli_env, invoke, args: list[str], code: int, message: str
) -> None:
    res = invoke(*args)
    assert res.code == code, res
    assert res.out == "" and message in res.err and res.err.count("\n") == 1


def test_a_key_directory_without_hard_links_still_gets_one_key(
    chain_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    def no_links(*_: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    key = load_chain_key()
    assert key is not None and len(key.secret) == 64
    assert sorted(p.name for p in chain_dir.iterdir()) == ["chain.key"]
    again = load_chain_key()
    assert again is not None and again.secret == key.secret


def test_an_empty_key_file_is_refused_not_used_to_sign(  # type: ignore[no-untyped-def]
    demo_runs: list[str], chain_dir: Path, clean_db: neo4j.Driver, cli_env, invoke
) -> None:
    (chain_dir / "chain.key").write_text("\n", encoding="utf-8")
    with pytest.raises(OSError, match="is empty"):
        load_chain_key()
    # A run still finishes, unanchored: nothing is signed under an empty key.
    run_id = record_full_run(RunRecorder(clean_db), request("key file emptied"))
    anchors, _, _ = clean_db.execute_query(
        "MATCH (x:CtxAnchor {run_id: $r}) RETURN count(x) AS n", r=run_id
    )
    assert anchors[0]["n"] == 0 and _run_nodes(clean_db, run_id)[-1]["kind"] == "outcome"
    # verify says so in one line instead of calling every anchor forged.
    res = invoke("verify", demo_runs[0], "--subject", "acme/user:alice")
    assert res.code == 1 and res.out == "", res
    assert res.err.startswith("error: cannot read the chain key:") and "is empty" in res.err
    assert res.err.count("\n") == 1


def test_verify_cli_never_crosses_tenants(demo_runs: list[str], cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    _alice, bob, mallory = demo_runs
    res = invoke("verify", mallory, "--subject", "acme/user:auditor", "--purpose", "audit")
    # Answered like a run never recorded: whether globex has such a run is globex's.
    assert res.code == 2 and res.out == "" and res.err == f"error: unknown run {mallory}\n"
    res = invoke("verify", bob, "--subject", "acme/user:alice")
    assert res.code == 3 and "--purpose audit" in res.err
    res = invoke("verify", "--subject", "globex/user:mallory", "--purpose", "audit", "--json")
    assert res.code == 0 and json.loads(res.out)["runs_checked"] == 1


def test_runs_finishing_at_once_get_one_ledger_seq_each(
    clean_db: neo4j.Driver, chain_dir: Path
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    recorder = RunRecorder(clean_db)
    runs = [record_full_run(recorder, request(f"concurrent {n}"), finish=False) for n in range(4)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda r: recorder.finish_run(r, "complete", "done"), runs))
    report = _tampered(clean_db, [], _verify_tenant())
    assert report.verified, report.problems
    assert report.anchors == 4 and report.unanchored_runs == []


def test_first_anchors_racing_all_sign_with_the_one_key_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Concurrent finishes on a machine without a key each load the key: none may read the
    winner's file half-written (an empty key signs anchors `verify` then calls forged)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.delenv("INVESTIGATOR_CHAIN_KEY", raising=False)
    for attempt in range(40):
        directory = tmp_path / f"machine-{attempt}"
        monkeypatch.setenv("INVESTIGATOR_CHAIN_DIR", str(directory))
        start = threading.Barrier(8)

        def first_anchor(start: threading.Barrier) -> bytes:
            start.wait()
            key = load_chain_key()
            assert key is not None
            return key.secret

        with ThreadPoolExecutor(max_workers=8) as pool:
            secrets_seen = set(pool.map(first_anchor, [start] * 8))
        kept = (directory / "chain.key").read_text(encoding="utf-8").strip().encode()
        assert secrets_seen == {kept} and len(kept) == 64
        assert sorted(p.name for p in directory.iterdir()) == ["chain.key"]


def test_a_finish_that_dies_in_its_transaction_leaves_the_run_incomplete_and_unanchored(
    clean_db: neo4j.Driver, chain_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from investigator.context_graph import recorder as recorder_module

    recorder = RunRecorder(clean_db)
    anchored = record_full_run(recorder, request("anchored before"))
    run_id = record_full_run(recorder, request("dies while finishing"), finish=False)
    head_before = clean_db.execute_query(
        "MATCH (h:CtxLedgerHead {tenant: $t}) RETURN properties(h) AS p", t=TENANT
    ).records[0]["p"]
    store = recorder_module._store

    def dying_store(*args: Any, **kwargs: Any) -> None:
        # The run's head and the tenant's ledger head are locked: the process dies here.
        raise SystemExit("killed inside the finishing transaction")

    monkeypatch.setattr(recorder_module, "_store", dying_store)
    with pytest.raises(SystemExit):
        recorder.finish_run(run_id, "complete", "done")
    monkeypatch.setattr(recorder_module, "_store", store)

    # Nothing of the finish stays: no outcome, no status, no anchor, the ledger head as it was.
    report = _tampered(clean_db, [], _verify_tenant())
    assert report.verified, report.problems
    assert report.incomplete_runs == [run_id] and report.anchors == 1
    head_after = clean_db.execute_query(
        "MATCH (h:CtxLedgerHead {tenant: $t}) RETURN properties(h) AS p", t=TENANT
    ).records[0]["p"]
    assert head_after == head_before and "locked_at" not in head_after
    # Finished again, it is anchored as the tenant's next ledger seq, and the ledger verifies.
    recorder.finish_run(run_id, "complete", "done")
    report = _tampered(clean_db, [], _verify_tenant())
    assert report.verified and report.anchors == 2 and report.incomplete_runs == []
    assert _tampered(clean_db, [], _verify_run(anchored)).verified


def test_a_finish_remembers_its_ledger_head_in_a_file_of_its_own(chain_dir: Path) -> None:
    from investigator.context_graph.ledger import Anchor, remember_anchor, remembered_head

    key = load_chain_key()
    assert key is not None

    def anchor(tenant: str, seq: int) -> Anchor:
        return Anchor(
            tenant=tenant,
            seq=seq,
            run_id=f"run-{tenant}-{seq}",
            run_head_seq=5,
            run_head_hash="sha256:run",
            run_status="complete",
            anchored_at="2026-12-04T00:00:00.000000Z",
            key_id=key.key_id,
            prev_hash="sha256:prev",
            hash=f"sha256:{tenant}-{seq}",
        )

    # A machine that anchored for many databases before (the one file earlier versions kept,
    # rewritten whole at every finish): a finish no longer reads or rewrites it.
    legacy = {f"store-{i}/acme": {"seq": 3, "hash": f"sha256:old-{i}"} for i in range(500)}
    legacy["store-a/globex"] = {"seq": 9, "hash": "sha256:globex-9"}
    heads_file = chain_dir / "chain-heads.json"
    heads_file.write_text(json.dumps(legacy), encoding="utf-8")
    before = heads_file.stat().st_mtime_ns
    remember_anchor(key, "store-a", anchor("acme", 0))
    remember_anchor(key, "store-a", anchor("acme", 1))
    remember_anchor(key, "store-a", anchor("acme", 0))  # a later finish never moves it back
    remember_anchor(key, "store-a", anchor("globex", 4))
    assert heads_file.stat().st_mtime_ns == before
    assert json.loads(heads_file.read_text(encoding="utf-8")) == legacy
    assert len(list((chain_dir / "chain-heads").glob("*.json"))) == 2
    assert remembered_head(key, "store-a", "acme") == (1, "sha256:acme-1")
    # The old file's entry still counts when it names a later anchor than the new one.
    assert remembered_head(key, "store-a", "globex") == (9, "sha256:globex-9")
    assert remembered_head(key, "store-0", "acme") == (3, "sha256:old-0")
    assert remembered_head(key, "store-b", "acme") is None


class _CountingTx:
    """A real transaction that counts the statements sent through it."""

    def __init__(self, tx: neo4j.Transaction) -> None:
        self.tx = tx
        self.statements = 0

    def run(self, query: str, **params: Any) -> neo4j.Result:
        self.statements += 1
        return self.tx.run(query, **params)


def _verify_counted(
    driver: neo4j.Driver, statements: Sequence[tuple[str, dict[str, Any]]] = ()
) -> tuple[VerifyReport, int]:
    """`verify` of the tenant's ledger after `statements` (rolled back), and how many
    statements it sent."""
    counted: list[_CountingTx] = []

    def check(tx: neo4j.Transaction) -> VerifyReport:
        counting = _CountingTx(tx)
        counted.append(counting)
        return verify_tenant_in_tx(counting, TENANT, load_chain_key(create=False))  # type: ignore[arg-type]

    report = _tampered(driver, list(statements), check)
    return report, counted[0].statements


def test_verify_of_a_whole_ledger_reads_its_runs_in_a_few_statements(
    clean_db: neo4j.Driver, three_runs: list[str]
) -> None:
    # Before: two or three statements a run (its lineage, then the purge runs it names): an
    # auditor's ledger of thousands of runs took thousands of round trips. Now a batch of
    # runs at a time: as many statements for 12 runs as for 3, with the same verdicts.
    small, statements_for_3 = _verify_counted(clean_db)
    assert small.verified and small.runs_checked == 3
    recorder = RunRecorder(clean_db)
    more = [record_full_run(recorder, request(f"more {n}")) for n in range(9)]
    open_run = record_full_run(recorder, request("still running"), finish=False)
    report, statements = _verify_counted(clean_db)
    assert statements == statements_for_3, (statements_for_3, statements)
    assert report.verified and report.runs_checked == 13
    assert report.incomplete_runs == [open_run]
    # A run changed in the middle of a batch is the one named, as before.
    victim = more[4]
    tampered, _ = _verify_counted(
        clean_db,
        [("MATCH (n:CtxEvent {run_id: $r, seq: 3}) DETACH DELETE n", {"r": victim})],
    )
    assert not tampered.verified
    assert {p.run_id for p in tampered.problems} == {victim}, tampered.problems
