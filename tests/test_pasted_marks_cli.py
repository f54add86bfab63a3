"""What a hurried user pastes: invisible marks inside words, and refusals in plain words.
Through the CLI, on a real Neo4j with the demo dataset (subject acme/user:bob).

Before (e32-qa m1, m2): `investigate "who owns pay\\u200bment-api?"` said "'ment-api' resolved to
nothing this subject may see" (a zero-width space, invisible on screen, split the name);
`runbook` refused a text starting with a byte-order mark as "contains control characters";
a question of spaces said "QUESTION: Value error, the question is empty" and one with a
control character "QUESTION: Value error, the question contains control characters".
"""

from __future__ import annotations

import json

import neo4j
import pytest

BOB = ["--subject", "acme/user:bob", "--deadline-seconds", "600"]
DURING = ["--as-of", "2026-07-23T10:30:00Z"]


@pytest.mark.parametrize(
    "question",
    [
        "who owns pay\u200bment-api?",
        "\ufeffwho owns payment-api?",
        "who owns \u2066payment-api\u2069?",
        "who owns payment-api?\u200e",
    ],
)
def test_invisible_marks_in_a_question_are_not_read(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, question: str
) -> None:
    done = invoke("investigate", question, *DURING, *BOB, "--json")
    assert done.code == 0, done.err
    answer = json.loads(done.out)
    assert answer["question"] == "who owns payment-api?"
    assert answer["status"] == "complete", answer["missing_evidence"]
    assert any(
        "team:payments-core OWNS svc:payment-api" in c["statement"] for c in answer["claims"]
    ), answer["claims"]


def test_invisible_marks_in_a_service_id_and_a_runbook_text(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    who = ["--subject", "acme/user:bob"]
    by_id = invoke("runbook", "--service", "svc:payment\u200b-api", *DURING, *who, "--json")
    assert by_id.code == 0, by_id.err
    assert json.loads(by_id.out)["runbook"]["id"] == "runbook:payment-recovery@v3"
    text = invoke("runbook", "\ufeffpayment-api errors", *DURING, *who)
    assert "control characters" not in text.err
    assert text.code in (0, 1), text.err


@pytest.mark.parametrize(
    ("question", "line"),
    [
        ("   ", 'error: QUESTION is empty: ask it in words ("Was the 10:02 release related'),
        ("\u200b", 'error: QUESTION is empty: ask it in words ("Was the 10:02 release related'),
        ("who\x01 owns payment-api?", "error: QUESTION contains control characters: type it as"),
    ],
)
def test_a_refused_question_is_said_in_one_plain_line(  # type: ignore[no-untyped-def]
    cli_env, invoke, question: str, line: str
) -> None:
    done = invoke("investigate", question, *BOB)
    assert done.code == 2
    assert done.out == ""
    assert done.err.startswith(line), done.err
    assert "Value error" not in done.err
    assert len(done.err.strip().splitlines()) == 1
