"""A hurried question's slips read as the words it asks with (h33-typos; e32-qa H). Through
the CLI on a real Neo4j with the demo dataset, at as_of 2026-07-23T10:30:00Z (the incident
open).

Before: "whos the ownr of payment api" was answered with the runbook its words found,
`complete`, no owner stated; "what casued the incidnet" and "should we rolback" said "no
matching entity"; "is it the db" was answered with a runbook (`complete`) where "is it the
db?" said its words were not read (`partial`). Now the slips are read as the words ("'ownr'
read as 'owner'", said once in a Note) and each question gets the answer of its clean form;
a trailing question mark changes nothing; words that are no slip ("known", "down",
"deployer", a name as typed) stay as typed, with no Note.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import investigate_json

BOB = ["--subject", "acme/user:bob", "--as-of", "2026-07-23T10:30:00Z"]
CAROL = ["--subject", "acme/user:carol", "--as-of", "2026-07-23T10:30:00Z"]
DEADLINE = ["--deadline-seconds", "600"]


def _ask(invoke: Any, question: str, *flags: str) -> dict[str, Any]:
    return investigate_json(invoke, question, *flags, *DEADLINE)


def _said(doc: dict[str, Any]) -> tuple[Any, ...]:
    """What a user reads of an answer: intents, status, verdict, claims, required gaps (a gap
    that would only strengthen it may say a read did not finish on a busy machine)."""
    return (
        doc["intents"],
        doc["status"],
        doc.get("verdict"),
        [c["statement"] for c in doc["claims"]],
        [(g["evidence_type"], g["description"]) for g in doc["missing_evidence"] if g["required"]],
    )


@pytest.mark.parametrize(
    ("hurried", "clean", "note"),
    [
        (
            "whos the ownr of payment api",
            "who's the owner of payment api",
            "'ownr' read as 'owner'",
        ),
        (
            "what casued the incidnet",
            "what caused the incident",
            "'casued' read as 'caused', 'incidnet' read as 'incident'",
        ),
        ("should we rolback", "should we rollback", "'rolback' read as 'rollback'"),
    ],
)
def test_slips_are_answered_as_the_clean_question(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, hurried: str, clean: str, note: str
) -> None:
    doc = _ask(invoke, hurried, *BOB)
    want = _ask(invoke, clean, *BOB)
    assert _said(doc) == _said(want), (doc["claims"], want["claims"])
    assert doc["question"] == hurried  # the answer keeps the question as typed
    assert doc["search_notes"].count(note) == 1, doc["search_notes"]
    # No slip noted for the clean words (other notes may say "is read as the one asked about").
    assert not any("' read as '" in n for n in want["search_notes"]), want["search_notes"]


def test_the_owner_is_named_for_a_hurried_owner_question(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    out = invoke("investigate", "whos the ownr of payment api", *BOB, *DEADLINE)
    assert out.code == 0, out
    assert "Note       'ownr' read as 'owner'" in out.out, out.out
    assert (
        "At 2026-07-23T10:30:00Z: team:payments-core OWNS svc:payment-api "
        "(valid 2025-01-01T00:00:00Z to 2026-07-24T00:00:00Z)"
    ) in out.out, out.out


def test_a_slip_reads_nothing_the_subject_may_not_read(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # carol gets for the slip what she gets for the clean words: the reading links nothing.
    doc = _ask(invoke, "whos the ownr of payment api", *CAROL)
    want = _ask(invoke, "who's the owner of payment api", *CAROL)
    assert _said(doc) == _said(want), (doc["claims"], want["claims"])


def test_a_trailing_question_mark_changes_nothing(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    bare = _ask(invoke, "is it the db", *BOB)
    asked = _ask(invoke, "is it the db?", *BOB)
    assert _said(bare) == _said(asked), (bare["claims"], asked["claims"])
    # Neither is answered with a runbook found by its words, `complete`: its words are said
    # not read.
    assert bare["status"] == "partial"
    assert bare["intents"] == ["entity_lookup"]
    assert any(
        g["evidence_type"] == "question" and "'db'" in g["description"]
        for g in bare["missing_evidence"]
    ), bare["missing_evidence"]


def test_words_that_are_no_slip_stay_as_typed(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # "known" is no "owner", "down" no "owns": read as typed, no Note.
    doc = _ask(invoke, "is payment-api down? whats known", *BOB)
    assert not any("read as" in n for n in doc["search_notes"]), doc["search_notes"]
    assert "ownership_at_time" not in doc["intents"], doc["intents"]
