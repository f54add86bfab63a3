"""What a hurried on-call engineer types at `investigator runbook` / `investigate`: unquoted
words are one text, and refused input is one line naming the argument as typed and what to
give instead (exit 2), on a real Neo4j.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import import_runbook_folder

FIXTURES = Path(__file__).parent / "fixtures"
UNREACHABLE = "neo4j://127.0.0.1:1"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["runbook", "x " * 1700],
            "error: TEXT is 3399 characters, more than the 2000 a lookup reads: paste the "
            "alert name or its summary, or use --alert NAME",
        ),
        (
            ["runbook", ""],
            "error: TEXT is empty: paste the alert name or its summary, or use --alert NAME",
        ),
        (
            ["runbook", "--alert", "K" * 201],
            "error: --alert is 201 characters, more than the 200 a lookup reads: give the "
            "alert's name (--alert KubePodCrashLooping)",
        ),
        (
            ["investigate", "why " * 1001],
            "error: QUESTION is 4004 characters, more than the 4000 an investigation reads: "
            "ask about the alert, service or error code in a sentence, not the whole payload",
        ),
        (
            ["runbook", "--alert", "--subject", "acme/user:oncall"],
            "error: --alert took '--subject' as its value: give the alert's name right after "
            "--alert (--alert KubePodCrashLooping)",
        ),
        (
            ["runbook", "--alert", "KubeAPIDown", "is", "down"],
            "error: give exactly one of --service, --alert, --error-code or TEXT (got --alert "
            "'KubeAPIDown' and TEXT 'is down'; see `investigator runbook --help`)",
        ),
    ],
    ids=[
        "text too long",
        "text empty",
        "alert too long",
        "question too long",
        "option as value",
        "alert and words",
    ],
)
def test_refused_input_says_which_argument_and_what_to_do(  # type: ignore[no-untyped-def]
    args: list[str], expected: str, invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Refused before any database is asked: point at nothing to prove it.
    monkeypatch.setenv("NEO4J_URI", UNREACHABLE)
    result = invoke(*args, "--subject", "acme/user:oncall")
    assert result.code == 2, result
    assert result.err == expected + "\n", result
    assert result.out == ""


@pytest.fixture()
def runbooks(driver: neo4j.Driver, cli_env: object, invoke) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    import_runbook_folder(driver, invoke, FIXTURES / "runbooks" / "acme", "--trusted")
    return driver


def test_unquoted_words_are_one_text(runbooks: neo4j.Driver, invoke) -> None:  # type: ignore[no-untyped-def]
    # A hurried `runbook etcd no leader`: "Got unexpected extra arguments (no leader)", exit 2.
    words = ["pods", "crash", "looping"]
    unquoted = invoke("runbook", *words, "--subject", "user:oncall", "--json")
    assert unquoted.code == 0, unquoted
    quoted = invoke("runbook", " ".join(words), "--subject", "user:oncall", "--json")
    first, second = json.loads(unquoted.out), json.loads(quoted.out)
    assert first["query"] == "pods crash looping"
    assert first["runbook"]["id"] == second["runbook"]["id"] == "runbook:KubePodCrashLooping"
    asked = invoke(
        "investigate", "Which", "runbook", "applies", "to", "KubePodCrashLooping?",
        "--subject", "user:oncall", "--json",
    )  # fmt: skip
    assert asked.code == 0, asked
    doc = json.loads(asked.out)
    assert doc["question"] == "Which runbook applies to KubePodCrashLooping?"
    assert doc["status"] == "complete", doc["missing_evidence"]
