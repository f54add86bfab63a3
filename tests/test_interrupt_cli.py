"""Ctrl-C (a real SIGINT to a real `investigator` process) on the real server, and what an
idempotency key does after it (explorer e29 finding 18 and m14).

- `ingest` stopped part way says how many of its records were written and that the same
  ingest finishes it (not only "interrupted"): the count is what the graph holds, and the
  re-ingest completes the tenant (also when it is itself interrupted, the path of a tenant
  that has records).
- `investigate` stopped mid-run is recorded as interrupted (status `failed`, stop reason
  `interrupted`): `runs` lists it so, `replay` says so, and its chain and anchor verify.
- The same idempotency key then runs again (once, however many retries arrive at once),
  says which run it answers in place of, and is the key's answer from then on; another
  subject's same key is its own. A run killed with SIGKILL stays `incomplete`, and its key
  is refused with a line that says why.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import neo4j

from investigator.context_graph.recorder import RunRecorder

TENANT = "synthqa"
QUESTION = "Was the 10:02 release of payment-api related to the PAY-4097 errors?"
AS_OF = ("--as-of", "2026-07-23T10:03:00Z")
BOB = ("--subject", "acme/user:bob")
AUDIT = ("--subject", "acme/user:alice", "--purpose", "audit")
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


# -- investigate, and its idempotency key -----------------------------------------------------


def _run_started(driver: neo4j.Driver, question: str, subject: str = "user:bob") -> bool:
    return (
        _count(
            driver,
            "MATCH (r:CtxRun {question: $q, subject_id: $s, status: 'incomplete'}) "
            "RETURN count(r) AS c",
            q=question,
            s=subject,
        )
        > 0
    )


def _stop_mid_run(
    driver: neo4j.Driver, question: str, *args: str, sig: signal.Signals = signal.SIGINT
) -> tuple[int, str, str]:
    """`investigate QUESTION ARGS` stopped by `sig` once its run has started.

    The tenant's ledger head is held under a write lock meanwhile, so the run cannot finish
    (its finish waits for that lock) and the signal lands mid-run, however fast the run is.
    The Context Graph's constraints are made first: made by the run, they would wait for
    the lock's transaction.
    """
    RunRecorder(driver).ensure_schema()
    with driver.session() as session, session.begin_transaction() as held:
        held.run(
            "MERGE (h:CtxLedgerHead {tenant: 'acme'}) "
            "ON CREATE SET h.seq = -1, h.created_by_test = true "
            "SET h.held_by_test = true"
        ).consume()
        proc = _process("investigate", question, *BOB, *AS_OF, *args)
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if _run_started(driver, question):
                time.sleep(0.3)  # into its finish, waiting for the ledger head
                proc.send_signal(sig)
                break
            time.sleep(0.02)
        time.sleep(0.3)  # the signal lands while the lock is still held
        held.rollback()
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


def _runs_of(invoke, question: str) -> list[dict[str, object]]:  # type: ignore[no-untyped-def]
    listed = invoke("runs", *AUDIT, "--limit", "200", "--json")
    assert listed.code == 0, listed
    return [r for r in json.loads(listed.out)["runs"] if r["question"] == question]


def test_an_interrupted_run_is_recorded_interrupted_and_its_key_asks_again(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    question = f"{QUESTION} (interrupted, key k-int)"
    key = ("--idempotency-key", "k-int")
    code, out, err = _stop_mid_run(demo_graph, question, *key)
    assert code == 130, (code, out, err)
    assert err.splitlines() == ["error: interrupted (Ctrl-C)"], repr(err)

    # Recorded as what the user saw: failed, stop reason `interrupted`, not "error".
    [run] = _runs_of(invoke, question)
    assert (run["status"], run["stop_reason"]) == ("failed", "interrupted"), run
    interrupted = str(run["run_id"])
    listed = invoke("runs", *AUDIT, "--limit", "200")
    line = next(x for x in listed.out.splitlines() if x.startswith(interrupted))
    assert re.match(rf"{interrupted}  interrupted  ", line), line
    replayed = invoke("replay", interrupted, *AUDIT)
    assert replayed.code == 1, replayed
    assert (
        "run_failed: the run was interrupted (Ctrl-C) before it finished (stop: interrupted)"
        in replayed.out
    ), replayed.out
    assert (
        "pack_hash_match: false  (not compared: the run was interrupted (Ctrl-C) before it "
        "finished" in replayed.out
    ), replayed.out
    assert "stop: error" not in replayed.out + replayed.err
    doc = json.loads(invoke("replay", interrupted, *AUDIT, "--json").out)
    assert doc["chain_valid"] is True and doc["status"] == "failed", doc
    checked = invoke("verify", interrupted, *AUDIT)
    assert checked.code == 0, checked

    # The same key and request asks again: a new run answers, and says in place of which.
    retry = invoke("investigate", question, *BOB, *AS_OF, *key, "--json")
    assert retry.code == 0, retry
    answer = json.loads(retry.out)
    assert answer["run_id"] != interrupted and answer["status"] in {"complete", "partial"}
    assert answer["retry_of"] == interrupted and answer["reused_run"] is False
    text = invoke("investigate", question, *BOB, *AS_OF, *key)
    assert text.code == 0, text
    # From then on the key's answer is that run's (never a third run).
    assert f"Run        {answer['run_id']}" in text.out
    assert f"Retry      the recorded answer of run {answer['run_id']}" in text.out
    assert [r["run_id"] for r in _runs_of(invoke, question)] == [answer["run_id"], interrupted]
    # A different request under the key is still refused.
    other = invoke("investigate", question, *BOB, *key, "--as-of", "2026-07-23T11:00:00Z")
    assert other.code == 2 and "already used for a different request" in other.err, other

    # Another subject's same key is its own first run, never bob's retry.
    alice = invoke("investigate", question, "--subject", "acme/user:alice", *AS_OF, *key, "--json")
    assert alice.code == 0, alice
    mine = json.loads(alice.out)
    assert mine["retry_of"] is None and mine["run_id"] not in {interrupted, answer["run_id"]}


def test_retries_at_once_after_an_interruption_start_one_run(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    question = f"{QUESTION} (interrupted, retried at once)"
    key = ("--idempotency-key", "k-once")
    code, _, err = _stop_mid_run(demo_graph, question, *key)
    assert code == 130, err
    [run] = _runs_of(invoke, question)
    interrupted = run["run_id"]

    procs = [_process("investigate", question, *BOB, *AS_OF, *key, "--json") for _ in range(3)]
    done = [(p.wait(timeout=300), *p.communicate()) for p in procs]
    runs = _runs_of(invoke, question)
    assert len(runs) == 2, json.dumps(runs, indent=1)  # the interrupted run and one retry
    retry_id = next(r["run_id"] for r in runs if r["run_id"] != interrupted)
    for code, out, err in done:
        if code == 0:  # the retry, or (once it finished) its recorded answer
            assert json.loads(out)["run_id"] == retry_id, out
        else:  # asked while the retry ran: told so, and what to do
            assert code == 2 and json.loads(out)["error"]["code"] == "bad_input", (code, out, err)
            assert err == (
                f"error: idempotency key names run {retry_id}, which has not finished (still "
                "running, or its process was killed): wait for it, or ask again with a new "
                "idempotency key\n"
            ), err
    assert any(code == 0 for code, _, _ in done), done


def test_a_killed_run_stays_incomplete_and_its_key_says_so(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    question = f"{QUESTION} (killed)"
    key = ("--idempotency-key", "k-killed")
    code, _, _ = _stop_mid_run(demo_graph, question, *key, sig=signal.SIGKILL)
    assert code == -signal.SIGKILL
    [run] = _runs_of(invoke, question)
    assert run["status"] == "incomplete" and run["stop_reason"] is None, run
    retry = invoke("investigate", question, *BOB, *AS_OF, *key)
    assert retry.code == 2 and retry.out == "", retry
    assert f"run {run['run_id']}, which has not finished (still running, or its process was " in (
        retry.err
    )
