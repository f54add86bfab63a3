"""A slow run's round is written while its next round reads (h38's wiring, RunSession.flush).

When a round's lineage write is due (`RunSession.FLUSH_INTERVAL_S` passed: a slow run), the
session hands it to the recorder's writer thread (`RunLog.flush_in_background`) and goes on to
the next round's reads; the finish waits for it. tests/test_context_graph.py proves the log's
part; this proves a real investigation uses it, against a real Neo4j: each round's write runs
on a `ctx-write` thread, the next round's reads start while it has not committed, and the
lineage holds what one write at the end would have held (same nodes, chain valid, replays to
the same pack).
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

import neo4j
import pytest

from cypher_templates.executor import TemplateExecutor
from investigator.context_graph import RunRecorder, load_lineage, verify_chain
from investigator.context_graph.recorder import RunLog
from investigator.investigation import InvestigationRequest, InvestigationResult, investigate
from investigator.replay import replay_run
from investigator.session import RunSession

QUESTION = (
    "Why did payment authorization fail with no database connection available on payment-api?"
)
REQUEST = InvestigationRequest(
    question=QUESTION,
    service_id="svc:payment-api",
    subject_id="acme/user:alice",
    as_of=datetime(2026, 7, 23, 10, 30, tzinfo=UTC),
    known_at=datetime(2026, 8, 1, tzinfo=UTC),  # not now: the same pack each time
    deadline_s=600,
)


def _investigate(driver: neo4j.Driver) -> InvestigationResult:
    return investigate(REQUEST, driver=driver, recorder=RunRecorder(driver))


def _kinds(driver: neo4j.Driver, run_id: str) -> list[str]:
    return [n.kind for n in load_lineage(driver, run_id).nodes]


def test_a_due_round_write_runs_on_the_writer_thread_while_the_next_round_reads(
    demo_graph: neo4j.Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Written once at the end (no round is ever due): what the lineage must hold.
    monkeypatch.setattr(RunSession, "FLUSH_INTERVAL_S", 3600.0)
    once = _investigate(demo_graph)
    assert once.rounds >= 2, once.rounds  # a next round to overlap

    # Every round due, as in a run slower than FLUSH_INTERVAL_S. Each round's write waits,
    # on whichever thread runs it, until a read starts after it began (or the run finishes):
    # a write the caller made itself would hold the run up, so it does not wait there.
    monkeypatch.setattr(RunSession, "FLUSH_INTERVAL_S", 0.0)
    reads, writes, finishing = [0], [], threading.Event()
    read_started = threading.Condition()
    in_read, write, finish = (
        TemplateExecutor._in_read_transaction,
        RunLog._write_snapshot,
        RunLog.finish,
    )

    def counted_read(self: TemplateExecutor, *args: Any, **kwargs: Any) -> Any:
        with read_started:
            reads[0] += 1
            read_started.notify_all()
        return in_read(self, *args, **kwargs)

    def held_write(self: RunLog, snapshot: Any, final_status: Any = None) -> None:
        thread = threading.current_thread()
        if final_status is None and thread is not threading.main_thread():
            with read_started:
                before = reads[0]
                read_started.wait_for(lambda: reads[0] > before or finishing.is_set(), 120)
            writes.append((thread.name, reads[0] > before))
        elif final_status is None:
            writes.append((thread.name, False))
        write(self, snapshot, final_status)

    def finishing_log(self: RunLog, *args: Any, **kwargs: Any) -> int:
        with read_started:
            finishing.set()
            read_started.notify_all()
        return finish(self, *args, **kwargs)

    monkeypatch.setattr(TemplateExecutor, "_in_read_transaction", counted_read)
    monkeypatch.setattr(RunLog, "_write_snapshot", held_write)
    monkeypatch.setattr(RunLog, "finish", finishing_log)
    overlapped = _investigate(demo_graph)

    # Every round's write was the writer thread's, and the next round read while it waited.
    assert len(writes) == overlapped.rounds, writes
    assert all(name.startswith("ctx-write") for name, _ in writes), writes
    assert any(read_meanwhile for _, read_meanwhile in writes), writes
    # Nothing lost: the same answer and the same lineage as one write at the end.
    assert overlapped.pack_hash == once.pack_hash
    assert _kinds(demo_graph, overlapped.run_id) == _kinds(demo_graph, once.run_id)
    lineage = load_lineage(demo_graph, overlapped.run_id)
    assert verify_chain(lineage).chain_valid
    assert lineage.run_properties and lineage.run_properties["status"] == "complete"
    report = replay_run(demo_graph, overlapped.run_id)
    assert report.verified and report.pack_hash_match, report.drift
