"""The words a hurried user types for a thing, through the CLI on a real Neo4j: the demo
dataset plus one service (`secret-vault`) readable with the `incident` label only (bob reads
it, carol not).

Before (session 35): "who owns payment_api" and "PaymentAPI status" linked nothing ("no owner
was looked for: name one"); "who owns paymentapi?" said the same and never named the service
`--service svc:paymentapi` suggests; "crash-loop" typed alone got the not-a-service gap and
no runbook search ("crash loop" got the crash-loop runbook); "payments-core" (a team) got the
not-a-service gap instead of what the team owns.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import neo4j
import pytest
from conftest import investigate_json

BOB = ["--subject", "acme/user:bob", "--deadline-seconds", "600"]
CAROL = ["--subject", "acme/user:carol", "--deadline-seconds", "600"]
MALLORY = ["--subject", "globex/user:mallory", "--deadline-seconds", "600"]
DURING = ["--as-of", "2026-07-23T10:30:00Z"]
CORE_OWNS_API = (
    "At 2026-07-23T10:30:00Z: team:payments-core OWNS svc:payment-api (valid "
    "2025-01-01T00:00:00Z to 2026-07-24T00:00:00Z)"
)

SECRET_VAULT = (
    "tenant: acme\nnodes:\n"
    '  - {id: "svc:secret-vault", label: Service, name: "secret-vault", '
    "acl: [internal, incident], "
    'locator: "catalog/acme.yaml#svc:secret-vault", source_id: src:service-catalog, '
    'source_version: "catalog@2026-01-05", valid_from: "2025-01-01T00:00:00Z", '
    'recorded_at: "2026-01-05T09:00:00Z"}\n'
)


@pytest.fixture(scope="module")
def names_graph(demo_graph: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> neo4j.Driver:
    """The demo dataset plus svc:secret-vault (label `incident`: bob reads it, carol not)."""
    from graph_schema.bundle import load_bundle
    from graph_schema.writer import ingest_bundle

    path: Path = tmp_path_factory.mktemp("names") / "secret-vault.yaml"
    path.write_text(SECRET_VAULT, encoding="utf-8")
    ingest_bundle(demo_graph, load_bundle(path))
    demo_graph.execute_query("CALL db.awaitIndexes(300)")
    return demo_graph


def _statements(doc: dict[str, Any]) -> list[str]:
    return [c["statement"] for c in doc["claims"]]


@pytest.mark.parametrize(
    "question", ["who owns payment_api?", "PaymentAPI status", "who owned PaymentApi then?"]
)
def test_a_name_typed_with_underscore_or_case_steps_is_the_service(  # type: ignore[no-untyped-def]
    names_graph, cli_env, invoke, question: str
) -> None:
    doc = investigate_json(invoke, question, *BOB, *DURING)
    # ("then": the first error's moment and as_of, in one statement)
    owned = CORE_OWNS_API.split(": ", 1)[1]
    assert any(s.endswith(owned) for s in _statements(doc)), _statements(doc)
    assert doc["status"] == "complete", doc["missing_evidence"]
    # Another tenant's service of the same name is never linked (globex's payment-api).
    assert "globex" not in json.dumps(doc)


def test_a_joined_name_is_said_with_the_service_meant(  # type: ignore[no-untyped-def]
    names_graph, cli_env, invoke
) -> None:
    for question in ("who owns paymentapi?", "paymentapi owner"):
        doc = investigate_json(invoke, question, *BOB, *DURING)
        said = {u["text"]: u for u in doc["unresolved_names"]}
        assert said["paymentapi"]["suggestions"] == ["svc:payment-api"], doc["unresolved_names"]
        assert "did you mean svc:payment-api?" in said["paymentapi"]["note"]
        report = invoke("investigate", question, *BOB, *DURING)
        assert "did you mean svc:payment-api?" in report.out, report.out


def test_a_hidden_service_is_neither_linked_nor_suggested(  # type: ignore[no-untyped-def]
    names_graph, cli_env, invoke
) -> None:
    bob = investigate_json(invoke, "who owns secretvault?", *BOB, *DURING)
    assert ["svc:secret-vault"] in [u["suggestions"] for u in bob["unresolved_names"]]
    for question in ("who owns secretvault?", "who owns secret_vault?", "SecretVault status"):
        doc = investigate_json(invoke, question, *CAROL, *DURING)
        assert "svc:secret-vault" not in json.dumps(doc), question
        assert doc["claims"] == [], question


def test_another_tenant_links_its_own_service_of_that_name(  # type: ignore[no-untyped-def]
    names_graph, cli_env, invoke
) -> None:
    doc = investigate_json(invoke, "who owns payment_api?", *MALLORY, *DURING)
    owned = [s for s in _statements(doc) if " OWNS " in s]
    assert owned and all("svc:globex-payment-api" in s for s in owned), _statements(doc)
    assert "svc:payment-api " not in json.dumps(doc) and "acme" not in json.dumps(doc["claims"])


def test_another_tenant_is_told_its_own_joined_name_by_the_name_it_has(  # type: ignore[no-untyped-def]
    names_graph, cli_env, invoke
) -> None:
    # h36-attack-identity: mallory's "paymentapi" was compared with her service's id
    # (svc:globex-payment-api), never its name (payment-api): no suggestion, where bob got
    # his. Now by name too, from her own tenant only.
    doc = investigate_json(invoke, "who owns paymentapi?", *MALLORY, *DURING)
    said = {u["text"]: u for u in doc["unresolved_names"]}
    assert said["paymentapi"]["suggestions"] == ["svc:globex-payment-api"], doc
    assert "ask with the name as it is written (e.g. 'payment-api')" in said["paymentapi"]["note"]
    assert "svc:payment-api" not in json.dumps(doc) and "acme" not in json.dumps(doc)


@pytest.mark.parametrize("typed", ["crash-loop", "crash_loop"])
def test_a_hyphenated_symptom_typed_alone_is_searched_as_words(  # type: ignore[no-untyped-def]
    names_graph, cli_env, invoke, typed: str
) -> None:
    spaced = investigate_json(invoke, "crash loop", *BOB, *DURING)
    doc = investigate_json(invoke, typed, *BOB, *DURING)
    runbook = "runbook:pod-crashloop@v1"
    assert any(runbook in s for s in _statements(spaced))
    assert [c["statement"] for c in doc["claims"]] == _statements(spaced), doc
    assert doc["unresolved_names"] == []
    assert not any("names no service" in m["description"] for m in doc["missing_evidence"])


def test_a_name_still_answers_its_state_and_an_unknown_one_its_gap(  # type: ignore[no-untyped-def]
    names_graph, cli_env, invoke
) -> None:
    for question in ("payment-api", "payment-api down", "svc:payment-api status"):
        doc = investigate_json(invoke, question, *BOB, *DURING)
        assert doc["intents"] == ["ownership_at_time", "service_status"], question
        assert CORE_OWNS_API in _statements(doc), question
    doc = investigate_json(invoke, "paymnet-api", *BOB, *DURING)
    assert doc["claims"] == []
    assert any("names no service" in m["description"] for m in doc["missing_evidence"])
    assert doc["unresolved_names"][0]["suggestions"] == ["svc:payment-api"]


@pytest.mark.parametrize("typed", ["payments-core", "payments-core?"])
def test_a_team_typed_alone_says_what_it_owned_then(  # type: ignore[no-untyped-def]
    names_graph, cli_env, invoke, typed: str
) -> None:
    doc = investigate_json(invoke, typed, *BOB, *DURING)
    said = _statements(doc)
    assert CORE_OWNS_API in said, doc["missing_evidence"]
    assert any(
        s.endswith("team:payments-core OWNS svc:ledger (valid 2025-01-01T00:00:00Z to open)")
        for s in said
    )
    assert doc["status"] == "complete", doc["missing_evidence"]
    # After the handover, payment-api is no longer the team's.
    after = investigate_json(invoke, typed, *BOB, "--as-of", "2026-08-01T00:00:00Z")
    assert not any("OWNS svc:payment-api" in s for s in _statements(after)), _statements(after)
    assert any("OWNS svc:ledger" in s for s in _statements(after))


def test_a_one_word_service_typed_with_a_slip_is_told_to_name_it_with_service(  # type: ignore[no-untyped-def]
    names_graph, cli_env, invoke
) -> None:
    # Session 36: "why did checkot fail" was told "ask with the name as it is written (e.g.
    # 'checkout')", which reads as a word too: a one-word name links only by --service.
    doc = investigate_json(invoke, "why did checkot fail", *BOB, *DURING)
    said = {u["text"]: u for u in doc["unresolved_names"]}
    assert said["checkot"]["suggestions"] == ["svc:checkout"], doc["unresolved_names"]
    assert said["checkot"]["note"].endswith(
        "The answer does not cover it: name it with --service svc:checkout."
    ), said["checkot"]["note"]
