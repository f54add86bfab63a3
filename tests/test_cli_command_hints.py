"""A hurried user's first line: the question typed where a command goes, a command called by
another name, a near miss. Each gets one line naming what to run, exit 2, nothing on stdout;
and the line it names, run as given, answers (before: "No such command 'who'.")."""

from __future__ import annotations

import re

import neo4j
import pytest

SUGGESTED = re.compile(r'to ask a question, run: investigator investigate "([^"]+)" \(see')


@pytest.mark.parametrize(
    ("args", "question"),
    [
        (["who", "owns", "payment-api?"], "who owns payment-api?"),
        (["who owns payment-api"], "who owns payment-api"),
        (["ask", "who owns payment-api"], "who owns payment-api"),
        (["What caused PAY-4097"], "What caused PAY-4097"),
        (["why", "did", "checkout", "fail"], "why did checkout fail"),
    ],
)
def test_a_question_typed_as_the_command_names_the_investigate_line(  # type: ignore[no-untyped-def]
    invoke, args: list[str], question: str
) -> None:
    result = invoke(*args)
    assert result.code == 2 and result.out == "", result
    lines = result.err.splitlines()
    assert len(lines) == 1, result.err
    found = SUGGESTED.search(lines[0])
    assert found is not None and found.group(1) == question, lines[0]


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["investgate", "x"], "did you mean `investigator investigate`?"),
        (["runbok"], "did you mean `investigator runbook`?"),
        (["replya", "run-1"], "did you mean `investigator replay`?"),
        (["serve"], "the command is `investigator mcp`"),
        (["start"], "the command is `investigator db start`"),
        (["import", "datasets/payments-incident"], "the command is `investigator ingest`"),
        (["ask"], "the command is `investigator investigate`"),
        # `help COMMAND`, as git takes it (before: "No such command 'help'.", no command named)
        (["help", "runbook"], "the command is `investigator runbook --help`"),
        (["help", "investigate"], "the command is `investigator investigate --help`"),
    ],
)
def test_a_near_or_other_name_says_the_command(  # type: ignore[no-untyped-def]
    invoke, args: list[str], named: str
) -> None:
    result = invoke(*args)
    assert result.code == 2 and result.out == "", result
    assert result.err.splitlines() == [
        f"error: no such command {args[0]!r}: {named} (see `investigator --help`)"
    ], result.err


def test_a_long_or_hostile_question_is_shortened_and_made_printable(  # type: ignore[no-untyped-def]
    invoke,
) -> None:
    result = invoke("who " + "owns " * 40 + '"x"\x1b[31m?')
    assert result.code == 2 and result.out == "", result
    line = result.err.splitlines()
    assert len(line) == 1 and "\x1b" not in result.err, result.err
    found = SUGGESTED.search(line[0])
    assert found is not None and len(found.group(1)) <= 80 and found.group(1).endswith("…")


def test_other_unknown_words_keep_clicks_line(invoke) -> None:  # type: ignore[no-untyped-def]
    result = invoke("zzz")
    assert (result.code, result.out) == (2, "")
    assert result.err == "error: No such command 'zzz'. (see `investigator --help`)\n"
    result = invoke("--bogus")
    assert result.code == 2 and "No such option '--bogus'" in result.err


def test_the_suggested_line_answers_the_question(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    hint = invoke("who", "owned", "payment-api", "then?")
    question = SUGGESTED.search(hint.err)
    assert question is not None, hint.err
    answer = invoke(
        "investigate",
        question.group(1),
        "--subject",
        "acme/user:bob",
        "--as-of",
        "2026-07-23T10:30:00Z",
    )
    assert answer.code == 0, answer
    assert "team:payments-core OWNS svc:payment-api" in answer.out, answer.out
