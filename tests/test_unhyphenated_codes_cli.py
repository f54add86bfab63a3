"""An error code typed in a hurry without its hyphen ("PAY4097", "pay4097"), as a user of the
CLI sees it (real Neo4j, demo dataset: acme's err:PAY-4097 and err:PAY-1002; globex's
mallory reads globex's own PAY-4097 and none of acme's).

Before, `investigate "what caused PAY4097?"` was `partial` with the gap "the question names
no service, error code, ... e.g. "what broke PAY-4097?"", and `runbook "PAY4097"` said "no
runbook mentions any of: pay4097" with no suggestion (`--error-code PAY4097` suggested
err:PAY-4097)."""

from __future__ import annotations

import json

import pytest

AT = ["--as-of", "2026-07-23T10:30:00Z", "--deadline-seconds", "600"]
BOB = ["--subject", "acme/user:bob"]
MALLORY = ["--subject", "globex/user:mallory"]
CAUSE = "Candidate cause: release deploy:release-2026.07.23.1"


def _said(doc: dict) -> str:  # type: ignore[type-arg]
    """What the answer says to its reader: all of it but the record of its lookups."""
    return json.dumps({k: v for k, v in doc.items() if k != "tool_calls"})


@pytest.mark.parametrize("typed", ["PAY4097", "pay4097"])
def test_a_code_without_its_hyphen_is_the_code(demo_graph, cli_env, invoke, typed: str) -> None:  # type: ignore[no-untyped-def]
    question = f"what caused {typed}?"
    doc = json.loads(invoke("investigate", question, *BOB, *AT, "--json").out)
    assert doc["status"] == "complete", doc["missing_evidence"]
    assert any(CAUSE in c["statement"] for c in doc["claims"]), doc["claims"]
    assert doc["unresolved_names"] == []
    report = invoke("investigate", question, *BOB, *AT)
    assert "names no service, error code" not in report.out, report.out


def test_the_runbook_text_reads_the_code_said_so(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    card = invoke("runbook", "PAY4097", "--subject", "acme/user:oncall")
    assert card.code == 0, card
    assert card.out.startswith("Runbook   Payment recovery runbook v4"), card.out
    assert (
        "Note      read 'PAY4097' as error code PAY-4097 (an error code typed without its hyphen)"
    ) in card.out


def test_a_code_the_subject_may_not_read_is_never_named(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # PAY-1002 is acme's: globex's mallory is neither answered about it nor told of it.
    card = invoke("runbook", "PAY1002", *MALLORY)
    assert card.out.startswith("No runbook"), card.out
    assert "PAY-1002" not in card.out
    question = "what caused PAY1002?"
    doc = json.loads(invoke("investigate", question, *MALLORY, *AT, "--json").out)
    # (its own lookup of the words, 0 rows, is in the run's tool calls, as any lookup is)
    assert "PAY-1002" not in _said(doc)
    assert doc["unresolved_names"] == []
    # A word shaped like a code that no record is ("sha256") is no unresolved name either.
    other = json.loads(
        invoke("investigate", "what caused the sha256 mismatch?", *BOB, *AT, "--json").out
    )
    assert other["unresolved_names"] == []
    assert "SHA-256" not in _said(other)
