"""A question asked in another language than English ("Wem gehörte payment-api?", German for
"who owned payment-api?") is read for its names only, and the answer says so: `partial`, the
required `question` gap naming the words not read and that questions are read in English
(e29-qa m12: it was read as a symptom at payment-api, answered with payment-api's runbook;
before session 29, `complete` with runbook v4 in force, an answer to nothing asked). Through
the CLI on a real Neo4j with the demo data."""

from __future__ import annotations

import neo4j
import pytest

SUBJECT = ["--subject", "acme/user:bob", "--deadline-seconds", "600"]
AT = ["--as-of", "2026-07-23T10:03:00Z"]


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("Wem gehörte payment-api?", "Wem gehörte"),
        ("¿Quién era dueño de payment-api?", "Quién era dueño de"),
        ("À qui appartenait payment-api ?", "À qui appartenait"),
    ],
)
def test_the_words_not_read_are_said_and_no_runbook_is_claimed(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, question: str, words: str
) -> None:
    res = invoke("investigate", question, *AT, *SUBJECT)
    assert res.code == 0, res
    assert res.out.splitlines()[2].startswith("Status     partial"), res.out
    gap = (
        f"  question (required): the question's words {words!r} ask something it does not "
        "read (questions are read in English): only the names in it were looked up; ask e.g. "
        "who owns X"
    )
    assert gap in res.out, res.out
    # Before: read as a symptom at payment-api, its runbook weighed and its gap said.
    assert "Runbook " not in res.out, res.out
    assert "runbook (required)" not in res.out, res.out


def test_the_english_question_is_answered(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    res = invoke("investigate", "Who owned payment-api?", *AT, *SUBJECT)
    assert res.code == 0, res
    assert "team:payments-core OWNS svc:payment-api" in res.out, res.out
    assert "question (required)" not in res.out, res.out
