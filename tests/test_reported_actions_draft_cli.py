"""A draft report stating an action, and its retraction (real Neo4j, the demo dataset plus a
draft status note about the payments incident: "Draft: we restarted the payment-api pods at
10:20, errors continued.", recorded 10:30, retracted 2026-07-24T09:00Z). Known before its
retraction, the answer quotes it as the draft's words ("a draft", its confidence); known after,
the retracted note states nothing, as the rest of the product treats a retracted record."""

from __future__ import annotations

from pathlib import Path

import neo4j
import pytest
from conftest import investigate_json

ALICE = ["--subject", "acme/user:alice", "--deadline-seconds", "600"]
AS_OF = ["--as-of", "2026-07-24T00:00:00Z"]
NOTE = """tenant: acme
documents:
  - id: doc:status-note-2026-07-23-payments
    kind: incident_report
    title: "DRAFT status note: payments incident mitigation"
    locator: "incidents/2026-07-23-payments/status-draft.md"
    acl: [internal, incident]
    source_id: src:incident-reports
    source_version: "draft-status-1"
    observed_at: "2026-07-23T10:30:00Z"
    valid_from: "2026-07-23T10:25:00Z"
    recorded_at: "2026-07-23T10:30:00Z"
    confidence: 0.4
    applies_to: [inc:2026-07-23-payments]
    supports: [incident_report]
    content: |
      Draft: we restarted the payment-api pods at 10:20, errors continued.
retractions:
  - {id: doc:status-note-2026-07-23-payments, reason: "withdrawn", at: "2026-07-24T09:00:00Z"}
"""
DRAFT_STATED = (
    "DRAFT status note: payments incident mitigation (doc:status-note-2026-07-23-payments, "
    "a draft, confidence 0.4, recorded 2026-07-23T10:30:00Z) states an action taken: "
    '"Draft: we restarted the payment-api pods at 10:20, errors continued." (its time read as '
    "2026-07-23T10:20:00Z, UTC on the day the report is valid from); the document's words, "
    "not a recorded action: the KG has no response-action record"
)


@pytest.fixture(scope="module")
def with_note(demo_graph: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> neo4j.Driver:
    """The demo dataset plus NOTE, ingested once for the module."""
    from graph_schema.bundle import load_bundle
    from graph_schema.writer import ingest_bundle

    path: Path = tmp_path_factory.mktemp("note") / "note.yaml"
    path.write_text(NOTE, encoding="utf-8")
    ingest_bundle(demo_graph, load_bundle(path))
    demo_graph.execute_query("CALL db.awaitIndexes(300)")
    return demo_graph


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


def test_a_draft_stating_an_action_is_quoted_as_a_draft(  # type: ignore[no-untyped-def]
    with_note, cli_env, invoke
) -> None:
    doc = investigate_json(
        invoke, "did we restart payment-api?", *ALICE, *AS_OF, "--known-at", "2026-07-24T08:00:00Z"
    )
    assert DRAFT_STATED in _statements(doc), _statements(doc)
    assert doc["verdict"] is None, doc["verdict"]


def test_a_retracted_report_states_no_action(  # type: ignore[no-untyped-def]
    with_note, cli_env, invoke
) -> None:
    doc = investigate_json(invoke, "did we restart payment-api?", *ALICE, *AS_OF)
    assert not any("status-note" in s for s in _statements(doc)), _statements(doc)
    # The postmortem (recorded 2026-07-24T15:30Z, not retracted) still states its rollback.
    assert any(
        s.startswith("Postmortem: PAY-4097") and '"Fix: rollback at 10:41."' in s
        for s in _statements(doc)
    ), _statements(doc)
