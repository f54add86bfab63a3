"""A kind noun ("service") names no service. Through the CLI, on a real Neo4j with the demo
dataset (subject acme/user:bob, during the incident).

Before (e32-qa finding A): "who owns the broken service?" was `complete`, "team:payments-core
OWNS svc:ledger", "Missing evidence: none": nothing was named, so the fulltext search's best
anchor became the service asked about, and svc:ledger's alias "ledger-service" holds the word
"service". ledger neither broke nor was affected; a hurried on-call would page its owner.
"""

from __future__ import annotations

import json

import neo4j
import pytest

BOB = ["--subject", "acme/user:bob", "--deadline-seconds", "600"]
DURING = ["--as-of", "2026-07-23T10:30:00Z"]


def _ask(invoke, question: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    done = invoke("investigate", question, *DURING, *BOB, "--json")
    assert done.code == 0, done.err
    return json.loads(done.out)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "question",
    [
        "who owns the broken service?",
        "who owns the service?",
        "which team owned the service that broke?",
        "who owns the failing app?",
    ],
)
def test_a_kind_noun_links_no_service_and_the_owner_is_a_required_gap(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, question: str
) -> None:
    answer = _ask(invoke, question)
    assert answer["status"] == "partial"
    assert not any("svc:ledger" in c["statement"] for c in answer["claims"]), answer["claims"]
    assert "svc:ledger" not in {str(v) for t in answer["tool_calls"] for v in t["params"].values()}
    gaps = [g for g in answer["missing_evidence"] if g["evidence_type"] == "ownership"]
    assert gaps and gaps[0]["required"], answer["missing_evidence"]
    assert "names no service" in gaps[0]["description"]


@pytest.mark.parametrize(
    ("question", "owned"),
    [
        # An alias typed beside the kind noun still links its service.
        ("who owns the ledger service?", "team:payments-core OWNS svc:ledger"),
        ("who owns the fraud scoring service?", "OWNS svc:risk-engine"),
        ("who owns the checkout web service?", "OWNS svc:checkout"),
    ],
)
def test_a_name_or_alias_beside_the_kind_noun_still_links_its_service(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, question: str, owned: str
) -> None:
    answer = _ask(invoke, question)
    assert answer["status"] == "complete", answer["missing_evidence"]
    assert any(owned in c["statement"] for c in answer["claims"]), answer["claims"]
