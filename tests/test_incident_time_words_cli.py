"""A question whose time is the incident's, asked after the fact, on a real Neo4j with the
demo dataset: "for the payments incident", "who was on call", "were we supposed to", 事故发生时
(the seed question), 事故期间 are read as the start of the incident, as "during the incident"
is, with a Time line, and the owner at as_of stated beside it (docs/investigation.md, "Time
references").

Before, they were no time words: asked on 07-26 (after the 07-24 handover) the answer named
only today's owner (payments-platform), `complete`, with no Time line; "rollback steps for the
payments incident" quoted runbook v4, in force only from 07-25.
"""

from __future__ import annotations

import json

import pytest

BOB = ["--subject", "acme/user:bob"]
AFTER = "2026-07-26T12:00:00Z"  # two days after the handover (07-24T00:00)
CORE = "team:payments-core OWNS svc:payment-api"
PLATFORM = "team:payments-platform OWNS svc:payment-api"
START = "At the start of incident Payments authorization failures 2026-07-23, 2026-07-23T10:02:38Z"


def _ask(invoke, question: str, *flags: str) -> tuple[str, dict]:  # type: ignore[no-untyped-def,type-arg]
    text = invoke("investigate", question, *BOB, *flags)
    assert text.code == 0, text
    doc = invoke("investigate", question, *BOB, *flags, "--json")
    assert doc.code == 0, doc
    return text.out, json.loads(doc.out)


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("事故发生时，谁拥有 payment-api？", "事故发生时"),  # the seed question
        ("事故期间谁负责 payment-api？", "事故期间"),
        ("who owned payment-api for the payments incident?", "for the payments incident"),
        ("who was on call for the payments incident?", "for the payments incident"),
        ("what caused PAY-4097 and who was on call?", "who was on call"),
    ],
)
def test_the_owner_for_the_incident_after_the_handover(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, question: str, words: str
) -> None:
    out, doc = _ask(invoke, question, "--as-of", AFTER)
    assert (
        f"Time       {words!r} is taken as the start of incident Payments authorization "
        "failures 2026-07-23, 2026-07-23T10:02:38Z" in out
    ), out
    texts = _statements(doc)
    # The team that owned it then, and the one that owns it at as_of (since 07-24), labelled.
    assert any(t.startswith(f"{START} (the question says {words!r}): {CORE}") for t in texts), texts
    assert any(t.startswith(f"At as_of, {AFTER}: {PLATFORM}") for t in texts), texts
    assert doc["unresolved_time_words"] == []


def test_the_seed_question_before_at_and_after_the_handover(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    question, words = "事故发生时，谁拥有 payment-api？", "事故发生时"
    # Before the handover one team held it at both moments: one claim, both said.
    _, before = _ask(invoke, question, "--as-of", "2026-07-23T12:00:00Z")
    texts = _statements(before)
    assert any(
        t.startswith(f"{START} (the question says {words!r}) and at as_of, 2026-07-23T12:00:00Z: ")
        and CORE in t
        for t in texts
    ), texts
    assert not any(PLATFORM in t for t in texts), texts
    # At the handover's instant: the new team at as_of, the old one at the incident.
    _, at = _ask(invoke, question, "--as-of", "2026-07-24T00:00:00Z")
    texts = _statements(at)
    assert any(t.startswith(f"{START} (the question says {words!r}): {CORE}") for t in texts)
    assert any(t.startswith(f"At as_of, 2026-07-24T00:00:00Z: {PLATFORM}") for t in texts)


def test_carol_sees_no_incident_and_is_told(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # carol may not read the incident: the words are said as not placed, never silently
    # today's owner.
    question = "事故发生时，谁拥有 payment-api？"
    result = invoke(
        "investigate", question, "--subject", "acme/user:carol", "--as-of", AFTER, "--json"
    )
    assert result.code == 0, result
    doc = json.loads(result.out)
    assert doc["status"] == "partial"
    assert doc["unresolved_time_words"] == ["事故发生时"]
    assert not any("payments-core" in t for t in _statements(doc))


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("rollback steps for the payments incident", "for the payments incident"),
        ("what runbook were we supposed to follow for PAY-4097?", "were we supposed to"),
    ],
)
def test_the_runbook_for_the_incident_is_the_version_then(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, question: str, words: str
) -> None:
    # No --as-of: months later. v3 was in force on 07-23; v4 only from 07-25.
    out, doc = _ask(invoke, question)
    assert f"Time       {words!r} is taken as the start of incident" in out, out
    texts = _statements(doc)
    assert any(
        t.startswith(
            "Runbook Payment recovery runbook v3 (runbook:payment-recovery@v3) is the "
            "version in force at the start of incident"
        )
        and f"(the question says {words!r})" in t
        for t in texts
    ), texts
    # v4 is said as the version at as_of, never as the one the responders had.
    assert all("payment-recovery@v4" not in t or "in force at as_of" in t for t in texts), texts
