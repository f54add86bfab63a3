"""A dependency answer says how far it walked DEPENDS_ON: up to 3 hops from the service asked
about, either way (the template's bound), and, when the walk reached its last hop, that what
lies beyond was not read; when every chain ended before, within how many hops (a `Note`
line; `search_notes` in `--json`). On the demo dataset (api-gateway -> checkout ->
payment-api -> payment-db, ledger, risk-engine), a real Neo4j, through the CLI.

Before session 29, nothing said where the walk stopped; in session 29 the note said "2 hops
into svc:payment-db" (api-gateway, 3 hops in, not named) and "1 hop out of svc:checkout"
(payment-db, ledger and risk-engine, 2 hops out, not named), and a walk that ended before
its last hop said nothing of its depth.
"""

from __future__ import annotations

import json

BOB = ["--subject", "acme/user:bob", "--as-of", "2026-07-23T10:30:00Z", "--deadline-seconds", "600"]


def _ask(invoke, question: str) -> tuple[dict, str]:  # type: ignore[no-untyped-def,type-arg]
    doc = invoke("investigate", question, *BOB, "--json")
    assert doc.code == 0, doc
    report = invoke("investigate", question, *BOB)
    assert report.code == 0, report
    return json.loads(doc.out), report.out


def test_dependents_say_the_three_hops_read(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc, report = _ask(invoke, "What depends on payment-db?")
    note = (
        "DEPENDS_ON was read up to 3 hops into svc:payment-db; what depends on "
        "svc:api-gateway was not read, so services further along the chain are not listed"
    )
    assert note in doc["search_notes"]
    assert f"Note       {note}" in report
    assert doc["status"] == "complete"


def test_dependencies_say_every_chain_ended(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # checkout -> payment-api -> payment-db, ledger, risk-engine: nothing further.
    doc, report = _ask(invoke, "What does checkout depend on?")
    note = (
        "DEPENDS_ON was read up to 3 hops out of svc:checkout; every chain read ended within 2 hops"
    )
    assert [n for n in doc["search_notes"] if n.startswith("DEPENDS_ON was read")] == [note]
    assert f"Note       {note}" in report


def test_a_walk_that_ended_at_once_says_one_hop(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # api-gateway depends on checkout; nothing depends on api-gateway: the walk ended itself.
    doc, report = _ask(invoke, "What depends on checkout?")
    note = "DEPENDS_ON was read up to 3 hops into svc:checkout; every chain read ended within 1 hop"
    assert [n for n in doc["search_notes"] if n.startswith("DEPENDS_ON was read")] == [note]
    assert "not read" not in report
