"""The moments investigators name in their own words, asked after the fact, on a real Neo4j
with the demo dataset: "when the first error happened" and its siblings place the anchor
event "then" would (before, at and after it), and words naming a moment the KG cannot place
are listed as not used, never dropped (docs/investigation.md, "Time references").

Before, "when the first error happened", "when PAY-4097 was first seen", "at the first
error", "when the alert went off" were no time words: the answer was today's owner alone,
`complete`, and nothing said the words were not used; "at the time of the migration" was
taken as "then" (the first error), an anchor the question never named.
"""

from __future__ import annotations

import json

import pytest

ALICE = ["--service", "svc:payment-api", "--subject", "acme/user:alice"]
AS_OF = "2026-12-01T00:00:00Z"
CORE = "team:payments-core OWNS svc:payment-api"
PLATFORM = "team:payments-platform OWNS svc:payment-api"
FIRST_ERROR = "At the first PAY-4097 error, 2026-07-23T10:02:38Z (the question says {words!r})"


def _investigate(invoke, question: str, as_of: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("investigate", question, *ALICE, "--as-of", as_of, "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


@pytest.mark.parametrize(
    "words", ["when the first error happened", "when PAY-4097 was first seen", "at the first error"]
)
def test_when_the_first_error_happened_is_answered_like_then(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, words: str
) -> None:
    doc = _investigate(invoke, f"Who owned payment-api {words}?", AS_OF)
    assert doc["status"] == "complete" and doc["unresolved_time_words"] == []
    texts = _statements(doc)
    # The owner at the first error, and today's (the owner moved on July 24), labelled.
    assert any(t.startswith(FIRST_ERROR.format(words=words)) and CORE in t for t in texts), (
        doc["stop_reason"],
        texts,
    )
    assert any(t.startswith(f"At as_of, {AS_OF}") and PLATFORM in t for t in texts), texts
    if words == "when the first error happened":
        then = _investigate(invoke, "Who owned payment-api then?", AS_OF)
        # The same claims as "then", but for the words quoted.
        assert sorted(s.replace("'then'", repr(words)) for s in _statements(then)) == sorted(texts)
        replay = invoke("replay", doc["run_id"], "--subject", "acme/user:alice", "--json")
        assert replay.code == 0, replay
        assert json.loads(replay.out)["verified"] is True


def test_when_the_first_error_happened_before_at_and_after_it(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    question = "Who owned payment-api when the first error happened?"
    words = "when the first error happened"
    # Before it (the release finished at 10:02:00, the error came at 10:02:38): no first
    # error yet, and the release that just went out does not stand in for it ("then" would
    # be the release). Said, answered at as_of, partial.
    report = invoke("investigate", question, *ALICE, "--as-of", "2026-07-23T10:02:30Z")
    assert report.code == 0, report
    assert f"Time       not resolved: {words!r}; the answer is at as_of." in report.out
    assert f"At 2026-07-23T10:02:30Z: {CORE}" in report.out, report.out
    assert "At the release" not in report.out
    before = _investigate(invoke, question, "2026-07-23T10:02:30Z")
    assert before["status"] == "partial" and before["unresolved_time_words"] == [words]

    at = _investigate(invoke, question, "2026-07-23T10:02:38Z")
    assert at["status"] == "complete" and at["unresolved_time_words"] == []
    assert any(
        t.startswith(
            FIRST_ERROR.format(words=words) + " and at as_of, 2026-07-23T10:02:38Z: " + CORE
        )
        for t in _statements(at)
    ), _statements(at)

    # After the ownership moved: the owner then and the owner at as_of.
    after = _investigate(invoke, question, "2026-07-24T00:00:00Z")
    texts = _statements(after)
    assert any(t.startswith(FIRST_ERROR.format(words=words)) and CORE in t for t in texts), texts
    assert any(t.startswith("At as_of, 2026-07-24T00:00:00Z") and PLATFORM in t for t in texts), (
        texts
    )
    replay = invoke("replay", after["run_id"], "--subject", "acme/user:alice", "--json")
    assert json.loads(replay.out)["verified"] is True


@pytest.mark.parametrize(
    ("words", "event"),
    [
        ("when the alert went off", "At the PaymentApiHighErrorRate alert, 2026-07-23T10:03:10Z"),
        ("at the time of the release", "At the release release-2026.07.23.1, 2026-07-23T10:02:00Z"),
    ],
)
def test_the_alert_and_the_release_in_other_words_are_their_events(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, words: str, event: str
) -> None:
    doc = _investigate(invoke, f"Who owned payment-api {words}?", AS_OF)
    assert doc["unresolved_time_words"] == []
    assert any(
        t.startswith(f"{event} (the question says {words!r})") and CORE in t
        for t in _statements(doc)
    ), _statements(doc)


@pytest.mark.parametrize(
    "words", ["when the first timeout happened", "at the time of the migration"]
)
def test_a_moment_the_kg_cannot_place_is_listed_not_dropped(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, words: str
) -> None:
    question = f"Who owned payment-api {words}?"
    report = invoke("investigate", question, *ALICE, "--as-of", AS_OF)
    assert report.code == 0, report
    assert f"Time       not resolved: {words!r}; the answer is at as_of." in report.out
    doc = _investigate(invoke, question, AS_OF)
    assert doc["unresolved_time_words"] == [words] and doc["status"] == "partial"
    # No anchor is made up for it: the owner at as_of only.
    texts = _statements(doc)
    assert [t for t in texts if "OWNS svc:payment-api" in t] == [
        t for t in texts if t.startswith(f"At {AS_OF}: {PLATFORM}")
    ], texts
    assert not any("the question says" in t for t in texts), texts
