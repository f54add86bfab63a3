""" "Before the ownership change" is placed at the service's latest change of owner (h30-before,
explorer finding m11), through the CLI against a real Neo4j. Before, "Who owned payment-api
before the ownership change?" (as_of 07-25) was `Time not resolved`, today's owner alone,
`partial`, though the KG holds the change (payments-core's OWNS ends and payments-platform's
starts at 2026-07-24T00:00:00Z)."""

from __future__ import annotations

from conftest import investigate_json

CHANGE = "the change of owner of svc:payment-api from team:payments-core to team:payments-platform"


def _ask(invoke, question: str, as_of: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    return investigate_json(
        invoke,
        question,
        "--subject",
        "acme/user:bob",
        "--as-of",
        as_of,
        "--deadline-seconds",
        "120",
    )


def test_before_and_after_the_ownership_change(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    for words in ("before the ownership change", "before the handover"):
        doc = _ask(invoke, f"Who owned payment-api {words}?", "2026-07-25T00:00:00Z")
        assert doc["status"] == "complete", (doc["unresolved_time_words"], doc["missing_evidence"])
        assert doc["unresolved_time_words"] == []
        statements = [c["statement"] for c in doc["claims"]]
        assert (
            f"At 1 s before {CHANGE}, 2026-07-23T23:59:59Z (the question says '{words}'): "
            "team:payments-core OWNS svc:payment-api (valid 2025-01-01T00:00:00Z to "
            "2026-07-24T00:00:00Z)"
        ) in statements, statements
        assert doc["time_notes"][0].startswith(
            f"'{words}' is taken as 1 s before {CHANGE}, 2026-07-23T23:59:59Z"
        ), doc["time_notes"]
    doc = _ask(invoke, "Who owned payment-api after the ownership change?", "2026-07-25T00:00:00Z")
    assert any(
        s.startswith(f"At {CHANGE}, 2026-07-24T00:00:00Z (the question says 'after the ownership")
        and "team:payments-platform OWNS svc:payment-api" in s
        for s in (c["statement"] for c in doc["claims"])
    ), doc["claims"]


def test_no_change_by_as_of_is_said(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = _ask(invoke, "Who owned payment-api before the ownership change?", "2026-07-23T11:00:00Z")
    assert doc["status"] == "partial"
    assert doc["unresolved_time_reasons"] == [
        {
            "words": "before the ownership change",
            "reason": "event_not_found",
            "detail": "no change of owner of the service asked about is found by as_of "
            "2026-07-23T11:00:00Z",
        }
    ], doc["unresolved_time_reasons"]
