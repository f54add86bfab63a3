"""What a recorded run's writes cost the client, against a real Neo4j (docs/benchmarks.md,
"Recording: the client's share of a finish").

The neo4j driver formats every statement's parameters for its debug log before it knows
whether that log is on. A run's writes carry every recorded payload (about 70,000
characters for the seed question), so the recorder hands the driver lists whose text is a
count: less client CPU per write, and a debug log that never prints recorded payloads.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path

import neo4j
import pytest
from test_context_graph_support import ClaimModel, Goal, Pack, evidence, request, tool_call

from graph_schema.canonical import sha256_text
from investigator.context_graph import (
    RunRecorder,
    RunStatus,
    load_lineage,
    sha256_of,
    verify_chain,
)
from investigator.context_graph.chain import ENVELOPE, ENVELOPE_CONTENT_HASHED, node_hash
from investigator.context_graph.ledger import chain_key_for_reading, verify_tenant_in_tx

MARKER = "payload-text-h34-recording"


class _Messages(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def driver_debug_log() -> Iterator[list[str]]:
    """The driver's debug log of the test, as a user gets it with `neo4j.debug.watch`."""
    handler = _Messages()
    logger = logging.getLogger("neo4j")
    level, propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    try:
        yield handler.messages
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate


def test_a_recorded_run_reaches_the_driver_log_by_counts_not_payloads(
    clean_db: neo4j.Driver,
    driver_debug_log: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A key and ledger heads of this test's own: the machine's remember earlier (wiped) runs.
    monkeypatch.setenv("INVESTIGATOR_CHAIN_DIR", str(tmp_path))
    rec = RunRecorder(clean_db)
    start = rec.start_run(request())
    log = rec.open_log(start)
    log.add_goal(Goal(text=f"relate the release to the errors {MARKER}", intents=["i"]))
    log.add_plan(Goal(text="plan", intents=[]))
    log.add_tool_call(tool_call("tc-01-001", [{"a": 1}]))
    evs = [evidence(1), evidence(2)]
    for ev in evs:
        log.add_evidence(ev, "tc-01-001")
    log.add_pack(Pack(pack_id="p", pack_hash=sha256_of([e.evidence_id for e in evs]), evidence=evs))
    log.add_claims(
        [
            ClaimModel(
                claim_id="c-1",
                statement=f"deployed at 10:02 {MARKER}",
                epistemic_status="fact",
                confidence=1.0,
                evidence_ids=["ev:1"],
            )
        ]
    )
    log.finish(RunStatus.COMPLETE, "evidence_sufficient")

    writes = [m for m in driver_debug_log if "C: RUN" in m and "UNWIND $nodes" in m]
    # The start's write (run, agent) and the finish's (goal ... outcome: 8 nodes, 14 links).
    assert len(writes) == 2, writes
    assert "'nodes': <2 rows>" in writes[0] and "'edges': <1 rows>" in writes[0]
    assert "'nodes': <8 rows>" in writes[1] and "'edges': <14 rows>" in writes[1]
    assert not [m for m in driver_debug_log if MARKER in m]
    # What was written is the whole run, chained and anchored as before.
    lineage = load_lineage(clean_db, start.run_id)
    assert verify_chain(lineage).chain_valid and len(lineage.nodes) == 10
    assert sum(1 for n in lineage.nodes if MARKER in str(n.properties.get("payload"))) == 2
    key = chain_key_for_reading()
    with clean_db.session() as session:
        report = session.execute_read(lambda tx: verify_tenant_in_tx(tx, "acme", key))
    assert report.verified and report.anchors == 1 and not report.unanchored_runs, report


class _Color(StrEnum):
    RED = "red"


def test_a_node_hash_is_the_canonical_hash_of_its_properties() -> None:
    # The recorder's maps hold only JSON scalars and lists of them; they are serialised
    # without a walk, and must hash exactly as the canonical form (runs recorded earlier
    # verify, and a node read back from Neo4j hashes as written).
    props: dict[str, object] = {
        ENVELOPE: ENVELOPE_CONTENT_HASHED,
        "kind": "tool_call",
        "seq": 3,
        "payload": '{"é":"☃\u2028"}',
        "duration_ms": 1e16,
        "score": -0.0,
        "ratio": 0.1,
        "truncated": True,
        "error": None,
        "element_ids": ["b", "a", "é"],
        "evidence_seqs": [4, 2],
        "mixed": [1, "x", None, 2.5, False],
    }
    hashed = {k: v for k, v in props.items()}
    hashed["payload"] = sha256_text(str(props["payload"]))
    assert node_hash(props, "tool_call") == sha256_of(hashed)
    # A value the canonical form has to convert (an enum, a tuple) hashes as it always did.
    other = {**props, "kind": _Color.RED, "element_ids": ("b", "a")}
    other_hashed = {**hashed, "kind": "red", "element_ids": ["b", "a"]}
    assert node_hash(other, "tool_call") == sha256_of(other_hashed)
