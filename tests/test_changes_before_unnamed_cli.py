"""An on-call engineer asking "What changed before the errors?" on the demo dataset (real
Neo4j): named nothing, the run says in one line what it needs; with the service named, it
answers about that service's errors.

Before, the bare question read "no first-seen time for the error or incident" and a Time line
asking for a later --as-of, as if the errors might be recorded later (h25)."""

from __future__ import annotations

import neo4j
from conftest import investigate_json

QUESTION = "What changed before the errors?"
ALICE = ["--subject", "acme/user:alice", "--as-of", "2026-07-23T12:00:00Z"]
NEEDS = (
    "error_first_seen (required): the question names no service, alert or error code, so no "
    "errors were looked for: name the service (--service X) or the error code "
    '("What changed before the X errors?")'
)


def test_naming_nothing_says_what_the_question_needs(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    report = invoke("investigate", QUESTION, *ALICE, "--deadline-seconds", "600")
    assert report.code == 0, report
    assert "Status     partial" in report.out
    assert f"  {NEEDS}" in report.out.splitlines(), report.out
    # A later --as-of finds no more: the Time line does not send the user there.
    assert "give a later --as-of" not in report.out, report.out
    assert (
        "Time       not resolved: 'before the errors'; the answer is at as_of: the question "
        "names no errors to look for (see Missing evidence)"
    ) in report.out.splitlines(), report.out


def test_with_the_service_named_it_lists_the_changes_before_its_errors(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    for flags in (["--service", "payment-api"], []):
        question = QUESTION if flags else "What changed before the payment-api errors?"
        doc = investigate_json(invoke, question, *ALICE, *flags, "--deadline-seconds", "600")
        assert doc["status"] == "complete", (question, doc["missing_evidence"])
        assert {c["element_id"] for c in doc["confounders"]} == {
            "deploy:release-2026.07.23.1",
            "change:risk-rules-RR-2026-07-23a",
        }
        statements = [c["statement"] for c in doc["claims"]]
        assert (
            "Release deploy:release-2026.07.23.1 finished at 2026-07-23T10:02:00Z, 38 s before "
            "PAY-4097 was first seen"
        ) in statements, statements
