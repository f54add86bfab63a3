"""A relationship found as an entity is claimed in its own words, on the real Neo4j.

Explorer e29 (m9): "What happened then?" about payment-api at the first error printed
`[fact] AFFECTED_BY AFFECTED_BY|svc:payment-api|inc:2026-07-23-payments: svc:payment-api
AFFECTED_BY inc:2026-07-23-payments`, the relation type twice and the key between."""

from __future__ import annotations

import json


def test_a_relationship_is_claimed_once_in_its_own_words(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    args = (
        "investigate",
        "What happened then?",
        "--service",
        "svc:payment-api",
        "--as-of",
        "2026-07-23T10:02:38Z",
        "--subject",
        "acme/user:bob",
        "--deadline-seconds",
        "120",
    )
    report = invoke(*args)
    assert report.code == 0, report
    claims = [line for line in report.out.splitlines() if line.startswith("  [fact")]
    assert "  [fact      ] svc:payment-api AFFECTED_BY inc:2026-07-23-payments" in claims, claims
    assert not any("AFFECTED_BY|" in line for line in claims), claims
    # A node found as an entity keeps its kind and id.
    assert "  [fact      ] Service svc:payment-api: payment-api" in claims, claims
    document = json.loads(invoke(*args, "--json").out)
    statements = [c["statement"] for c in document["claims"]]
    assert "svc:payment-api AFFECTED_BY inc:2026-07-23-payments" in statements, statements
