"""Dependency questions as a user of the CLI sees them, against the real Neo4j with the demo
dataset (payment-api -> payment-db, risk-engine, ledger; checkout -> payment-api;
api-gateway -> checkout; payment-api -> legacy-fraud recorded in error, retracted
2026-07-10): what depends on a service is its dependents, what it depends on its
dependencies, each claim says which way and since when."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO / "datasets" / "payments-incident"
BOB = ["--subject", "acme/user:bob", "--as-of", "2026-12-01T00:00:00Z"]
VALID = "(valid 2025-01-01T00:00:00Z to open)"
CHECKOUT = f"svc:checkout DEPENDS_ON svc:payment-api {VALID}"
GATEWAY = (
    f"svc:api-gateway DEPENDS_ON svc:checkout {VALID}, so svc:api-gateway depends on "
    "svc:payment-api through svc:checkout"
)
OUT = [
    f"svc:payment-api DEPENDS_ON svc:{s} {VALID}" for s in ("ledger", "payment-db", "risk-engine")
]


def ask(invoke: Any, question: str, *args: str) -> dict[str, Any]:
    result = invoke("investigate", question, *args, "--json")
    assert result.code == 0, result
    doc: dict[str, Any] = json.loads(result.out)
    return doc


def statements(doc: dict[str, Any]) -> list[str]:
    """The claims without their `At <instant(s)>: ` prefix, sorted."""
    return sorted(c["statement"][c["statement"].index("svc:") :] for c in doc["claims"])


def test_what_depends_on_a_service_names_its_dependents(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    for question in (
        "Which services depend on payment-api?",
        "What would break if payment-api goes down?",
        "Who calls payment-api?",
        "What depended on payment-api on 2026-07-05?",
    ):
        doc = ask(invoke, question, *BOB)
        assert doc["intents"] == ["dependents"], question
        assert (doc["status"], doc["missing_evidence"]) == ("complete", []), question
        # checkout directly, api-gateway through checkout; never what payment-api calls.
        assert statements(doc) == [GATEWAY, CHECKOUT], question
    report = invoke("investigate", "Which services depend on payment-api?", *BOB)
    assert f"At 2026-12-01T00:00:00Z: {CHECKOUT}" in report.out
    assert "svc:payment-api DEPENDS_ON" not in report.out


def test_both_directions_when_both_are_asked(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = ask(invoke, "What are the dependencies of payment-api and what depends on it?", *BOB)
    assert doc["intents"] == ["dependencies", "dependents"]
    assert doc["status"] == "complete"
    assert statements(doc) == sorted([*OUT, GATEWAY, CHECKOUT])


def test_no_dependents_is_a_gap_not_an_answer_the_other_way(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # Nothing depends on api-gateway: the answer is partial, and what api-gateway depends
    # on (checkout) is not offered in place of its dependents.
    doc = ask(invoke, "What would break if api-gateway goes down?", *BOB)
    assert (doc["status"], doc["claims"]) == ("partial", [])
    assert [m["evidence_type"] for m in doc["missing_evidence"]] == ["dependent"]
    both = ask(invoke, "What does api-gateway depend on and what depends on it?", *BOB)
    assert both["status"] == "partial"
    # What it depends on, the whole chain read (3 hops out), each with its path.
    assert statements(both) == [
        f"svc:api-gateway DEPENDS_ON svc:checkout {VALID}",
        f"svc:checkout DEPENDS_ON svc:payment-api {VALID}, so svc:api-gateway depends on "
        "svc:payment-api through svc:checkout",
        *(
            f"svc:payment-api DEPENDS_ON svc:{s} {VALID}, so svc:api-gateway depends on "
            f"svc:{s} through svc:checkout, svc:payment-api"
            for s in ("ledger", "payment-db", "risk-engine")
        ),
    ]
    assert [m["evidence_type"] for m in both["missing_evidence"]] == ["dependent"]


def test_dependencies_then_carry_their_validity(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # Known on 2026-07-05 (before the retraction), payment-api -> legacy-fraud was recorded.
    then = ["--subject", "acme/user:bob", "--as-of", "2026-07-05T00:00:00Z"]
    then += ["--known-at", "2026-07-05T00:00:00Z"]
    doc = ask(invoke, "What did payment-api depend on?", *then)
    assert doc["intents"] == ["dependencies"]
    assert (
        "At 2026-07-05T00:00:00Z: svc:payment-api DEPENDS_ON svc:legacy-fraud "
        "(valid 2024-01-01T00:00:00Z to open)"
    ) in [c["statement"] for c in doc["claims"]]
    # Known now, the record made in error is gone.
    now = ask(invoke, "What did payment-api depend on?", *BOB)
    assert statements(now) == OUT
