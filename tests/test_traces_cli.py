"""Traces of an error, asked for, as a CLI user sees them (demo dataset, real Neo4j).

Before: "show me the traces for PAY-4097" was `partial` with a gap saying the traces were
not read (no template read an error's Trace records); the demo's trace:4bf92f35 (HikariCP
pool exhausted; bob may read it) reached the run only through the text search, with no
evidence type, and was set aside `low_relevance`; "any traces of the pool exhaustion?" was
`partial` with no claim. Now the traces the subject may read that mention the error, or
were observed in its incident or in the service that emitted it while it did
(`traces_linked`), are listed with their start, id and recorded finding; none visible is a
required gap worded as read and empty.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import neo4j
import pytest
from conftest import ingest_text, investigate_json

pytestmark = pytest.mark.usefixtures("patient_reads")

AT_11 = ["--as-of", "2026-07-23T11:00:00Z", "--deadline-seconds", "600"]
BOB = ["--subject", "acme/user:bob"]
CAROL = ["--subject", "acme/user:carol"]
MALLORY = ["--subject", "globex/user:mallory"]
POOL_TRACE = (
    "Trace trace:4bf92f3577b34da6a3ce929d0e0e4736 (payment-api authorize trace 4bf92f35), "
    'started 2026-07-23T10:02:41Z, mentions err:PAY-4097; its record states: "span '
    "db.pool.acquire on payment-api waited 5000 ms and failed: HikariPool-1 - Connection is "
    "not available (total=10, active=10, idle=0, waiting=212); request ended with PAY-4097 "
    'connection pool exhausted"'
)


def gaps(doc: dict[str, Any]) -> dict[str, str]:
    return {m["evidence_type"]: m["description"] for m in doc["missing_evidence"]}


def statements(doc: dict[str, Any]) -> list[str]:
    return [c["statement"] for c in doc["claims"]]


def test_show_me_the_traces_lists_the_errors_trace(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    card = invoke("investigate", "show me the traces for PAY-4097", *BOB, *AT_11)
    assert card.code == 0, card
    assert "Status     complete" in card.out, card.out
    assert POOL_TRACE in card.out, card.out
    assert "ask for records this answer does not read" not in card.out
    doc = investigate_json(invoke, "show me the traces for PAY-4097", *BOB, *AT_11)
    assert POOL_TRACE in statements(doc), statements(doc)
    # The risk-engine trace is linked to neither the error, its incident nor payment-api.
    assert "9a0c77e1" not in " ".join(statements(doc))
    assert "question" not in gaps(doc) and "trace" not in gaps(doc), doc["missing_evidence"]
    reads = {
        c["params"]["anchor_id"]: c["params"].get("from")
        for c in doc["tool_calls"]
        if c["template_id"] == "traces_linked"
    }
    # The error's and its incident's traces by as_of; payment-api's while it emitted it.
    assert reads == {
        "err:PAY-4097": None,
        "inc:2026-07-23-payments": None,
        "svc:payment-api": "2026-07-23T10:02:38Z",
    }, reads
    # The evidence is typed `trace`, never `mechanism`: it is listed, not weighed as a cause.
    types = {e["element_id"]: e["evidence_types"] for e in doc["evidence"]}
    assert types["trace:4bf92f3577b34da6a3ce929d0e0e4736"] == ["trace"], types


def test_any_traces_of_the_pool_exhaustion(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    doc = investigate_json(invoke, "any traces of the pool exhaustion?", *BOB, *AT_11)
    assert doc["status"] == "complete", doc["missing_evidence"]
    [listed] = [s for s in statements(doc) if s.startswith("Trace ")]
    assert listed.startswith(
        "Trace trace:4bf92f3577b34da6a3ce929d0e0e4736 (payment-api authorize trace 4bf92f35), "
        "started 2026-07-23T10:02:41Z, found by the question's words"
    ), listed
    assert "waiting=212" in listed


def test_subjects_who_may_not_read_the_trace_get_read_and_empty(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    # carol lacks the `incident` label the traces carry.
    card = invoke("investigate", "show me the traces for PAY-4097", *CAROL, *AT_11)
    assert card.code == 0, card
    assert "Status     partial" in card.out, card.out
    assert (
        "trace (required): traces read, none found: no trace this subject may read is linked "
        "to err:PAY-4097 by 2026-07-23T11:00:00Z; svc:payment-api from 2026-07-23T10:02:38Z "
        "to 2026-07-23T11:00:00Z"
    ) in card.out, card.out
    assert "4bf92f35" not in card.out and "HikariPool" not in card.out
    # mallory (globex) reads globex's PAY-4097 and nothing of acme's.
    doc = investigate_json(invoke, "show me the traces for PAY-4097", *MALLORY, *AT_11)
    assert doc["status"] == "partial"
    assert "err:globex-PAY-4097" in gaps(doc)["trace"], doc["missing_evidence"]
    assert "4bf92f35" not in str(doc) and "HikariPool" not in str(doc)
    doc = investigate_json(invoke, "any traces of the pool exhaustion?", *CAROL, *AT_11)
    assert doc["status"] == "partial"
    assert not [s for s in statements(doc) if s.startswith("Trace ")]
    assert "HikariPool" not in str(doc)


# Three more traces of payment-api: one mentioning PAY-4097 that only `restricted` may read
# (bob lacks it), one observed in payment-api while it emitted PAY-4097 (10:20), one
# observed there before its first error (09:00).
MORE_TRACES = """tenant: acme
nodes:
  - {id: trace:h33b-restricted, label: Trace, name: payment-api restricted trace,
     acl: [internal, incident, restricted], source_id: src:observability,
     locator: "observability/acme#trace:h33b-restricted", valid_from: "2026-07-23T10:05:00Z",
     props: {trace_id: h33b-restricted, finding: "secret span detail"}}
  - {id: trace:h33b-during, label: Trace, name: payment-api capture trace,
     acl: [internal, incident], source_id: src:observability,
     locator: "observability/acme#trace:h33b-during", valid_from: "2026-07-23T10:20:00Z",
     props: {trace_id: h33b-during, finding: "span ledger.post took 40 ms"}}
  - {id: trace:h33b-before, label: Trace, name: payment-api morning trace,
     acl: [internal, incident], source_id: src:observability,
     locator: "observability/acme#trace:h33b-before", valid_from: "2026-07-23T09:00:00Z",
     props: {trace_id: h33b-before, finding: "span authorize took 12 ms"}}
edges:
  - {type: MENTIONS, from: trace:h33b-restricted, to: err:PAY-4097,
     acl: [internal, incident, restricted], source_id: src:observability,
     locator: "observability/acme#MENTIONS|trace:h33b-restricted|err:PAY-4097",
     valid_from: "2026-07-23T10:05:00Z"}
  - {type: OBSERVED_IN, from: trace:h33b-during, to: svc:payment-api, acl: [internal, incident],
     source_id: src:observability,
     locator: "observability/acme#OBSERVED_IN|trace:h33b-during|svc:payment-api",
     valid_from: "2026-07-23T10:20:00Z"}
  - {type: OBSERVED_IN, from: trace:h33b-before, to: svc:payment-api, acl: [internal, incident],
     source_id: src:observability,
     locator: "observability/acme#OBSERVED_IN|trace:h33b-before|svc:payment-api",
     valid_from: "2026-07-23T09:00:00Z"}
"""


def test_traces_of_the_service_in_the_period_and_hidden_labels(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, tmp_path: Path
) -> None:
    ingest_text(invoke, tmp_path / "traces.yaml", MORE_TRACES)
    doc = investigate_json(invoke, "show me the traces for PAY-4097", *BOB, *AT_11)
    listed = [s for s in statements(doc) if s.startswith("Trace ")]
    assert listed == [
        POOL_TRACE,
        "Trace trace:h33b-during (payment-api capture trace), started 2026-07-23T10:20:00Z, "
        'observed in svc:payment-api; its record states: "span ledger.post took 40 ms"',
    ], listed
    # The restricted trace is neither listed nor counted; the 09:00 one is outside the period.
    assert "h33b-restricted" not in str(doc) and "secret span" not in str(doc)
    assert "h33b-before" not in " ".join(listed)
    assert doc["status"] == "complete", doc["missing_evidence"]
    # Logs asked beside traces: the logs are still said not read, the traces are listed.
    doc = investigate_json(invoke, "show me the traces and logs for PAY-4097", *BOB, *AT_11)
    assert "the question's words 'logs' ask for records" in gaps(doc)["question"]
    assert POOL_TRACE in statements(doc)
    assert doc["status"] == "partial"
