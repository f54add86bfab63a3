"""Hurried words read for what they ask (h32-intents), through the CLI on a real Neo4j with the
demo dataset, at as_of 2026-07-23T10:30:00Z (the incident open).

Before: "why?" and "whats going on" with `--service svc:payment-api` were bare entity lookups
(`partial`, "the words ... ask something it does not read"); "did anything change then?" an
entity lookup (naming no service: `partial`, no claim, "name the service"); "was it the
risk rules?" an entity lookup; "was it payment-db or the release?" and "is checkout
affected by the release?" release lookups with no claim; "is ledger
affected?" the generic gap "no incident report" (while "is checkout affected?" read its
AFFECTED_BY records); "what changed on risk-engine?" (a service with no error of its own)
listed nothing, `partial` for want of a first error.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import investigate_json

BOB = ["--subject", "acme/user:bob", "--as-of", "2026-07-23T10:30:00Z"]
CAROL = ["--subject", "acme/user:carol", "--as-of", "2026-07-23T10:30:00Z"]
PAYMENT_API = ["--service", "svc:payment-api"]
DEADLINE = ["--deadline-seconds", "600"]

RELEASE = "release deploy:release-2026.07.23.1"
RULES = "change risk rule publication RR-2026-07-23a (change:risk-rules-RR-2026-07-23a)"
OPEN = (
    "incident inc:2026-07-23-payments open (Payments authorization failures 2026-07-23, "
    "started 2026-07-23T10:02:38Z, not resolved by as_of)"
)


def _ask(invoke: Any, question: str, *flags: str) -> dict[str, Any]:
    return investigate_json(invoke, question, *flags, *DEADLINE)


def _statements(doc: dict[str, Any]) -> list[str]:
    return [c["statement"] for c in doc["claims"]]


def _gaps(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return list(doc["missing_evidence"])


def test_why_beside_a_service_is_its_cause(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _ask(invoke, "why?", *BOB, *PAYMENT_API)
    assert doc["intents"] == ["root_cause"], doc["intents"]
    said = _statements(doc)
    assert any(s.startswith(f"Candidate cause: {RELEASE} (finished at") for s in said), said
    assert any(s.startswith("Postmortem: PAY-4097 after payment-api release") for s in said)
    assert doc["status"] == "complete", doc["missing_evidence"]


def test_whats_going_on_is_the_state_now(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # Beside --service: the service's state at as_of (what is open and firing on it).
    doc = _ask(invoke, "whats going on", *BOB, *PAYMENT_API)
    assert doc["intents"] == ["service_status"], doc["intents"]
    said = _statements(doc)
    assert f"svc:payment-api at as_of 2026-07-23T10:30:00Z: {OPEN}" in said, said
    assert (
        "svc:payment-api at as_of 2026-07-23T10:30:00Z: alert alert:PaymentApiHighErrorRate "
        "firing (since 2026-07-23T10:03:10Z)"
    ) in said, said
    # Naming nothing: the incidents open at as_of anywhere, as "any ongoing incidents?".
    anywhere = _ask(invoke, "what's going on?", *BOB)
    assert anywhere["intents"] == ["incident_list"], anywhere["intents"]
    assert any(
        s.startswith("Incident inc:2026-07-23-payments (Payments authorization failures")
        and "open at as_of" in s
        for s in _statements(anywhere)
    ), _statements(anywhere)
    # carol may not read the incident: none is said open, and none is claimed.
    carol = _ask(invoke, "whats going on", *CAROL)
    assert not any("inc:2026-07-23-payments" in s for s in _statements(carol)), carol["claims"]
    assert carol["status"] == "partial"


def test_did_anything_change_then_is_a_change_question(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _ask(invoke, "did anything change then?", *BOB, *PAYMENT_API)
    assert doc["intents"] == ["change_history"], doc["intents"]
    said = _statements(doc)
    assert (
        f"{RELEASE[0].upper()}{RELEASE[1:]} finished at 2026-07-23T10:02:00Z, 38 s before "
        "PAY-4097 was first seen"
    ) in said, said
    assert (
        f"Change {RULES.removeprefix('change ')} happened at 2026-07-23T10:02:21Z, 17 s before "
        "PAY-4097 was first seen"
    ) in said, said


@pytest.mark.parametrize("who", [BOB, CAROL])
def test_did_anything_change_then_naming_nothing(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, who: list[str]
) -> None:
    # No service, error or time but "then": every release and change the subject may read
    # in the 24 h before as_of (before: `partial`, no claim, "name the service").
    doc = _ask(invoke, "did anything change then?", *who)
    assert doc["intents"] == ["change_history"], doc["intents"]
    assert _statements(doc) == [
        "Release deploy:risk-engine-2026.07.22.3 finished at 2026-07-22T16:30:00Z, 18 h "
        "before as_of",
        "Release deploy:release-2026.07.23.1 finished at 2026-07-23T10:02:00Z, 28 min before as_of",
        f"{RULES[0].upper()}{RULES[1:]} happened at 2026-07-23T10:02:21Z, 27 min 39 s before as_of",
    ], _statements(doc)
    gaps = [g for g in _gaps(doc) if g["evidence_type"] == "error_first_seen"]
    assert len(gaps) == 1 and not gaps[0]["required"], gaps
    assert "in the 24 h before as_of 2026-07-23T10:30:00Z" in gaps[0]["description"], gaps
    assert doc["status"] == "complete", doc["missing_evidence"]


def test_was_it_the_risk_rules_is_a_cause_question(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _ask(invoke, "was it the risk rules?", *BOB, *PAYMENT_API)
    assert doc["intents"] == ["root_cause"], doc["intents"]
    said = _statements(doc)
    # The change named is among the candidates, and what the postmortem says of it is given.
    assert any(s.startswith("Postmortem: PAY-4097 after payment-api release") for s in said)
    assert any(f"rules out {RULES}" in s for s in said), said


def test_suspects_with_a_release(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _ask(invoke, "was it payment-db or the release?", *BOB, *PAYMENT_API)
    assert doc["intents"] == ["deployment_correlation", "root_cause"], doc["intents"]
    assert doc["verdict"] == "likely", doc["verdict"]
    said = _statements(doc)
    assert any(s.startswith(f"Release {RELEASE.split()[1]} caused PAY-4097") for s in said), said


def test_affected_by_the_release_asks_for_its_verdict(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _ask(invoke, "is checkout affected by the release?", *BOB)
    assert doc["intents"] == ["deployment_correlation"], doc["intents"]
    assert doc["verdict"] == "likely", doc["verdict"]


@pytest.mark.parametrize("who", [BOB, CAROL])
def test_is_ledger_affected_names_ledger(demo_graph, cli_env, invoke, who: list[str]) -> None:  # type: ignore[no-untyped-def]
    # svc:ledger is a service both may read, affected by no incident: the gap names it, as
    # "which incident affected ledger?" does (never the generic "no incident report").
    doc = _ask(invoke, "is ledger affected?", *who)
    assert doc["status"] == "partial"
    gaps = [g for g in _gaps(doc) if g["evidence_type"] == "incident_report"]
    assert len(gaps) == 1 and gaps[0]["required"], gaps
    assert gaps[0]["description"].startswith(
        "no incident of svc:ledger that the subject may read is recorded by as_of "
        "2026-07-23T10:30:00Z"
    ), gaps
    assert not doc["claims"], doc["claims"]


@pytest.mark.parametrize("who", [BOB, CAROL])
def test_what_changed_on_a_service_with_no_error(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, who: list[str]
) -> None:
    doc = _ask(invoke, "what changed on risk-engine?", *who)
    assert doc["intents"] == ["change_history"], doc["intents"]
    said = _statements(doc)
    assert said == [
        "Release deploy:risk-engine-2026.07.22.3 finished at 2026-07-22T16:30:00Z, 18 h "
        "before as_of",
        f"{RULES[0].upper()}{RULES[1:]} happened at 2026-07-23T10:02:21Z, 27 min 39 s before as_of",
    ], said
    gaps = [g for g in _gaps(doc) if g["evidence_type"] == "error_first_seen"]
    assert len(gaps) == 1 and not gaps[0]["required"], gaps
    assert gaps[0]["description"].startswith(
        "no error of svc:risk-engine is known by as_of 2026-07-23T10:30:00Z: the changes "
        "listed are those recorded before as_of"
    ), gaps
    assert doc["status"] == "complete", doc["missing_evidence"]
