"""Parts of a question the KG has no record type for, as a CLI user sees them (demo dataset,
real Neo4j): who was on call or paged (no rota or pager type) and whether the responders
followed the runbook (no response-action type). The answer gives the nearest thing the KG
holds (the owner then, the runbook version in force then) and names the gap: `partial`,
never `complete` with the ask silently skipped."""

from __future__ import annotations

import json
from typing import Any

BOB = ["--subject", "acme/user:bob"]
CORE_OWNED = "team:payments-core OWNS svc:payment-api"


def ask(invoke: Any, question: str, *args: str) -> dict[str, Any]:
    result = invoke("investigate", question, *BOB, *args, "--json")
    assert result.code == 0, result
    doc: dict[str, Any] = json.loads(result.out)
    return doc


def gaps(doc: dict[str, Any]) -> dict[str, bool]:
    return {m["evidence_type"]: m["required"] for m in doc["missing_evidence"]}


def test_who_was_on_call_gives_the_owner_and_says_there_is_no_rota(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # Before: an incident lookup, `complete`, no word about on-call.
    doc = ask(
        invoke,
        "Who was on call for payment-api during the PAY-4097 incident?",
        "--as-of",
        "2026-07-23T11:00:00Z",
    )
    assert doc["status"] == "partial"
    assert gaps(doc).get("on_call") is True
    assert any(CORE_OWNED in c["statement"] for c in doc["claims"])
    report = invoke(
        "investigate",
        "Who was on call for payment-api during the PAY-4097 incident?",
        *BOB,
        "--as-of",
        "2026-07-23T11:00:00Z",
    )
    assert "on_call (required): no on-call rota or paging record" in report.out
    assert "is the owner, not who was on call or paged" in report.out


def test_who_was_paged_gives_the_owner_when_the_incident_started(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    for question in ("Who was paged for PAY-4097?", "Who should have been paged for PAY-4097?"):
        doc = ask(invoke, question, "--as-of", "2026-12-01T00:00:00Z")
        assert doc["status"] == "partial", question
        assert gaps(doc).get("on_call") is True, question
        # The owner then (payments-core until 2026-07-24), not only today's owner.
        assert any(
            "At the start of incident" in c["statement"] and CORE_OWNED in c["statement"]
            for c in doc["claims"]
        ), question


def test_was_the_runbook_followed_names_the_gap_and_the_version_in_force_then(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # Before: "v4 is the version in force at <now>", `complete`.
    doc = ask(
        invoke,
        "Did the responders follow runbook v3 for PAY-4097?",
        "--as-of",
        "2026-12-01T00:00:00Z",
    )
    assert doc["status"] == "partial"
    assert gaps(doc).get("runbook_followed") is True
    assert any(
        "(runbook:payment-recovery@v3) is the version in force at the start of incident"
        in c["statement"]
        for c in doc["claims"]
    )
    # Asking which runbook to follow is no question about what the responders did.
    doc = ask(invoke, "Which runbook should I follow for PAY-4097?")
    assert "runbook_followed" not in gaps(doc)


def test_who_approved_the_release_gives_the_release_and_says_there_is_no_approval_record(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # Before (h29-empty): `complete`, the release's start and finish its only claim, and
    # nothing said that who approved it is not recorded.
    question = "Who approved release 2026.07.23.1?"
    doc = ask(invoke, question, "--as-of", "2026-07-23T10:10:00Z")
    assert doc["status"] == "partial"
    assert gaps(doc).get("approval") is True
    assert any("release-2026.07.23.1" in c["statement"] for c in doc["claims"])
    report = invoke("investigate", question, *BOB, "--as-of", "2026-07-23T10:10:00Z")
    assert "approval (required): no approval or sign-off record" in report.out
