"""Asking "what else could have caused it?" as a CLI user sees it, against the real Neo4j with
the demo dataset: release-2026.07.23.1 caused PAY-4097 on payment-api; the risk rule change
RR-2026-07-23a, published 17 s before the first error, is the competing cause the postmortem
rules out. Every way of asking for the other causes lists it, as "Were there other possible
causes of PAY-4097?" always did."""

from __future__ import annotations

import json
from typing import Any

import pytest

BOB = ["--subject", "acme/user:bob", "--as-of", "2026-12-01T00:00:00Z"]
RISK_RULES = "change:risk-rules-RR-2026-07-23a"
POSTMORTEM_RULES_OUT = "rules out change risk rule publication RR-2026-07-23a"


def ask(invoke: Any, question: str, *args: str) -> dict[str, Any]:
    result = invoke("investigate", question, *args, "--json")
    assert result.code == 0, result
    doc: dict[str, Any] = json.loads(result.out)
    return doc


@pytest.mark.parametrize(
    "question",
    [
        "Could anything else have caused PAY-4097 on payment-api?",
        "What are the alternative explanations for PAY-4097?",
        "Besides the release, what could explain the PAY-4097 errors?",
        "Is there an alternative cause for PAY-4097?",
        "Can we rule out the risk rules for PAY-4097?",
        "Could PAY-4097 have been something else than the release?",
        # The phrasings that listed it before keep doing so.
        "Were there other possible causes of PAY-4097?",
        "除了发布，还有什么可能导致 PAY-4097？",
    ],
)
def test_asking_for_other_causes_lists_the_competing_change(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, question: str
) -> None:
    doc = ask(invoke, question, *BOB)
    assert "root_cause" in doc["intents"], question
    # Before: an incident or release lookup; the risk rule change was never mentioned.
    assert [c["assessment"] for c in doc["confounders"] if c["element_id"] == RISK_RULES] == [
        "ruled_out"
    ], question
    assert any(POSTMORTEM_RULES_OUT in c["statement"] for c in doc["claims"]), question


def test_what_else_with_a_service_lists_the_candidates(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # Before: an entity lookup answered "Service svc:payment-api: payment-api".
    report = invoke(
        "investigate",
        "What else could have caused it?",
        "--service",
        "svc:payment-api",
        "--as-of",
        "2026-07-23T11:00:00Z",
        "--subject",
        "acme/user:bob",
    )
    assert report.code == 0, report
    assert "Candidate causes" in report.out
    assert f"{RISK_RULES} at 2026-07-23T10:02:21Z" in report.out
    # Its rollout start too, as the claims weigh it (09:55:12Z-10:02:00Z).
    assert (
        "deploy:release-2026.07.23.1 started at 2026-07-23T09:55:12Z, finished at "
        "2026-07-23T10:02:00Z"
    ) in report.out
    assert "Service svc:payment-api: payment-api" not in report.out
