"""A symptom said at a service ("5xx errors on checkout") asked before anything tied the
place to it, and said in numbers ("500s on checkout"), on the demo data (payments-incident)
through the CLI against a real Neo4j (helper h28-place, findings 2 and 3 of session 27).

Before: asked at 09:00, before the 10:02 incident, "5xx errors on checkout" followed
checkout's tie to that incident (AFFECTED_BY from 10:03:30) and claimed payment-api's
payment-recovery v3 through the incident's error code, as "the version in force", with the
incident's alert and an old payment-api error; with `--service svc:checkout` it claimed the
old error and said nothing of checkout's runbooks. "500s on checkout", "HTTP 500 on
checkout" and "errors 500 on checkout" found no place ("no matching entity the subject may
read"). Now a record that starts after as_of ties nothing, and an HTTP status said as a
number is read as its family's errors: the same symptom at checkout."""

from __future__ import annotations

import neo4j
import pytest
from conftest import investigate_json

ALICE = ["--subject", "acme/user:alice", "--deadline-seconds", "600"]
BEFORE = ["--as-of", "2026-07-23T09:00:00Z"]
AT_10_05 = ["--as-of", "2026-07-23T10:05:00Z"]
PLACE_GAP = (
    "no runbook of svc:checkout is about '5xx errors on checkout'; runbooks attached to "
    "svc:checkout: runbook:pod-crashloop@v1 (alert KubePodCrashLooping)"
)


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


def _runbook_gaps(doc: dict) -> list[dict]:  # type: ignore[type-arg]
    return [m for m in doc["missing_evidence"] if m["evidence_type"] == "runbook"]


@pytest.mark.parametrize("given", [[], ["--service", "svc:checkout"]], ids=["words", "service"])
def test_before_the_incident_nothing_ties_checkouts_5xx_to_its_runbook(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, given: list[str]
) -> None:
    doc = investigate_json(invoke, "5xx errors on checkout", *ALICE, *BEFORE, *given)
    statements = _statements(doc)
    # Before: "Runbook Payment recovery runbook v3 (runbook:payment-recovery@v3) is the
    # version in force at 2026-07-23T09:00:00Z" (no --service), and "PAY-1002 first seen at
    # 2025-03-01T08:11:00Z: svc:payment-api EMITTED err:PAY-1002" (both), read through the
    # incident that started at 10:02.
    assert not [s for s in statements if "payment-recovery" in s], statements
    assert not [s for s in statements if "PAY-1002" in s or "PAY-4097" in s], statements
    read = {ev["element_id"] for ev in doc["evidence"]}
    assert "alert:PaymentApiHighErrorRate" not in read, read
    # What is known then: checkout's own runbooks, none about its 5xx.
    (gap,) = _runbook_gaps(doc)
    assert gap["required"] is True, gap
    assert gap["description"].startswith(PLACE_GAP), gap
    assert doc["status"] == "partial"


def test_after_the_incident_started_its_runbook_still_answers(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    doc = investigate_json(invoke, "5xx errors on checkout", *ALICE, *AT_10_05)
    assert any("runbook:payment-recovery@v3" in s for s in _statements(doc)), _statements(doc)


@pytest.mark.parametrize(
    "question",
    ["500s on checkout", "5xx on checkout", "HTTP 500 on checkout", "errors 500 on checkout"],
)
def test_a_status_said_as_a_number_is_the_same_symptom_at_checkout(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, question: str
) -> None:
    doc = investigate_json(invoke, question, *ALICE, *AT_10_05)
    # Before: no claim, "entity (required): no matching entity the subject may read".
    assert not [m for m in doc["missing_evidence"] if m["evidence_type"] == "entity"], doc[
        "missing_evidence"
    ]
    assert "applicable_runbook" in doc["intents"], doc["intents"]
    statements = _statements(doc)
    assert any(
        s.startswith("Runbook Payment recovery runbook v3 (runbook:payment-recovery@v3)")
        for s in statements
    ), statements
    assert not [s for s in statements if "pod-crashloop" in s], statements
    # The place's own runbook is weighed by the symptom's words, as for "5xx errors".
    (gap,) = _runbook_gaps(doc)
    assert gap["description"].startswith(PLACE_GAP), gap
    # Before the incident, what is known then (as for "5xx errors on checkout").
    early = investigate_json(invoke, question, *ALICE, *BEFORE)
    assert not [s for s in _statements(early) if "payment-recovery" in s], _statements(early)
    (gap,) = _runbook_gaps(early)
    assert gap["required"] is True and gap["description"].startswith(PLACE_GAP), gap
