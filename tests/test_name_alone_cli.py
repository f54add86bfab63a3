"""A service typed alone, as on-call types it first ("payment-api", "payment-api down",
"svc:payment-db status", "checkout?"): its state at as_of (incidents open, alerts firing, a
release rolling out) and its owner then, each bound to evidence. Through the CLI on a real
Neo4j with the demo dataset. Before (session 34): "payment-api" at 10:30, mid-incident,
answered `complete` with "Service svc:payment-api: payment-api" alone; "payment-api status"
was `partial`, asking for a runbook about 'status'. One plain word with other words ("checkout
down", "virt down") or without its question mark ("banana") stays a symptom searched as words.

A name that is no service the subject reads (another tenant's team, an unknown word, a service
it may not read) gets one gap saying so, alike for each, and no claim (a service the subject
may not read answers as an unknown name: tests/test_hurried_words_cli.py, carol and
svc:vault); a team of its own is asked what it owns (tests/test_typed_names_cli.py)."""

from __future__ import annotations

import json
from typing import Any

import neo4j
import pytest

BOB = ["--subject", "acme/user:bob", "--deadline-seconds", "600"]


def _ask(invoke: Any, question: str, *args: str) -> dict[str, Any]:
    result = invoke("investigate", question, *args, "--json")
    assert result.code == 0, result
    return json.loads(result.out)


def _statements(doc: dict[str, Any]) -> list[str]:
    return [c["statement"] for c in doc["claims"]]


@pytest.mark.parametrize("question", ["payment-api", "payment-api status", "svc:payment-api?"])
def test_a_service_typed_alone_mid_incident_says_what_is_open_and_who_owns_it(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, question: str
) -> None:
    doc = _ask(invoke, question, *BOB, "--as-of", "2026-07-23T10:30:00Z")
    assert doc["intents"] == ["ownership_at_time", "service_status"], doc["intents"]
    assert doc["status"] == "complete", doc["missing_evidence"]
    said = _statements(doc)
    assert (
        "At 2026-07-23T10:30:00Z: team:payments-core OWNS svc:payment-api (valid "
        "2025-01-01T00:00:00Z to 2026-07-24T00:00:00Z)"
    ) in said
    assert any(
        s.startswith("svc:payment-api at as_of 2026-07-23T10:30:00Z (")
        and s.endswith("1 incident open, 1 alert firing, no release rolling out")
        for s in said
    ), said
    assert (
        "svc:payment-api at as_of 2026-07-23T10:30:00Z: alert alert:PaymentApiHighErrorRate "
        "firing (since 2026-07-23T10:03:10Z)"
    ) in said
    assert not any(s.startswith("Service svc:payment-api:") for s in said)
    assert all(c["evidence_ids"] for c in doc["claims"])


def test_before_and_after_the_incident_the_state_and_owner_of_then(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    # 10:01: the release rolls out (09:55:12-10:02:00), no error yet.
    before = _ask(invoke, "payment-api", *BOB, "--as-of", "2026-07-23T10:01:00Z")
    said = _statements(before)
    assert any(
        s.endswith("no incident open, no alert firing, 1 release rolling out") for s in said
    ), said
    assert (
        "svc:payment-api at as_of 2026-07-23T10:01:00Z: release release-2026.07.23.1 rolling "
        "out (started 2026-07-23T09:55:12Z, not finished by as_of)"
    ) in said
    assert any(s.startswith("At 2026-07-23T10:01:00Z: team:payments-core OWNS") for s in said)
    # After the handover (07-24) and the incident's end: the new owner, nothing open.
    after = _ask(invoke, "payment-api", *BOB, "--as-of", "2026-07-26T00:00:00Z")
    said = _statements(after)
    assert any(s.startswith("At 2026-07-26T00:00:00Z: team:payments-platform OWNS") for s in said)
    assert any(
        s.endswith("no incident open, no alert firing, no release rolling out") for s in said
    ), said


def test_a_one_word_service_asked_alone_and_a_state_word(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    doc = _ask(invoke, "checkout?", *BOB, "--as-of", "2026-07-23T10:30:00Z")
    assert doc["status"] == "complete", doc["missing_evidence"]
    said = _statements(doc)
    assert any(
        s.startswith("At 2026-07-23T10:30:00Z: team:sre-platform OWNS svc:checkout") for s in said
    )
    assert any(s.endswith("1 incident open, no alert firing, no release rolling out") for s in said)
    doc = _ask(invoke, "payment-api down", *BOB, "--as-of", "2026-07-23T10:30:00Z")
    assert doc["intents"] == ["ownership_at_time", "service_status"], doc["intents"]
    # One plain word with other words is a symptom typed ("virt down", "banana"): searched
    # as words, as before.
    doc = _ask(invoke, "checkout down", *BOB, "--as-of", "2026-07-23T10:30:00Z")
    assert doc["intents"] == ["entity_lookup"], doc["intents"]


def test_a_name_that_is_no_readable_service_gets_one_gap_alike(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    at = ["--as-of", "2026-07-23T10:30:00Z"]
    # Another tenant's team (a team of bob's own is asked what it owns:
    # tests/test_typed_names_cli.py).
    team = _ask(invoke, "globex-payments", *BOB, *at)
    unknown = _ask(invoke, "qzxv-lmno", *BOB, *at)
    for doc, name in ((team, "globex-payments"), (unknown, "qzxv-lmno")):
        assert (doc["status"], doc["claims"]) == ("partial", []), doc
        gaps = [m["description"] for m in doc["missing_evidence"] if m["required"]]
        assert gaps == [
            f"'{name}' names no service the subject may read: a service typed alone is "
            "answered with its incidents open, alerts firing and owner at as_of; ask about "
            "anything else in words (e.g. 'what did team X own then?', 'what is X?')"
        ], doc["missing_evidence"]
