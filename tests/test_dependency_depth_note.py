"""A dependency answer says how far it walked DEPENDS_ON when the walk reached its last hop:
dependents are read up to 2 hops into the service asked about, dependencies 1 hop out of it,
and what lies beyond is said not to be read (a `Note` line; `search_notes` in `--json`). On the
demo dataset (api-gateway -> checkout -> payment-api -> payment-db, ledger, risk-engine), a
real Neo4j, through the CLI.

Before, "What depends on payment-db?" named payment-api and checkout, `complete`, and nothing
said the walk stopped there (api-gateway, which depends on checkout, was not named); "What
does checkout depend on?" named payment-api alone, with no depth said.
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


def test_dependents_say_the_two_hops_read(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc, report = _ask(invoke, "What depends on payment-db?")
    note = (
        "DEPENDS_ON was read up to 2 hops into svc:payment-db; what depends on svc:checkout "
        "was not read, so services further along the chain are not listed"
    )
    assert note in doc["search_notes"]
    assert f"Note       {note}" in report
    assert doc["status"] == "complete"


def test_dependencies_say_the_one_hop_read(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc, report = _ask(invoke, "What does checkout depend on?")
    note = (
        "DEPENDS_ON was read up to 1 hop out of svc:checkout; what svc:payment-api depends on "
        "in turn was not read, so services further along the chain are not listed"
    )
    assert note in doc["search_notes"]
    assert f"Note       {note}" in report


def test_a_walk_that_ended_before_its_last_hop_has_no_note(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # api-gateway depends on checkout; nothing depends on api-gateway: the walk ended itself.
    doc, report = _ask(invoke, "What depends on checkout?")
    assert not [n for n in doc["search_notes"] if n.startswith("DEPENDS_ON was read")]
    assert "DEPENDS_ON was read" not in report
