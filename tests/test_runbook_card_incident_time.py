"""A runbook card whose TEXT names an incident, with no --as-of, is at the incident's start, as
`investigate` reads the same words (explorer e32-qa C), against the real Neo4j with the demo
dataset.

Before: `runbook "runbook we used during the PAY-4097 incident"` (or "rollback steps for the
payments incident") was answered at now: v4, in force from 07-25, whose step pages
#payments-platform, the team that took over after the incident, with a Time line saying the
incident's words were not used. An investigator reconstructing what the responders should
have done read the later procedure (v3 says "Escalate to #payments-core").
"""

from __future__ import annotations

import json
from typing import Any

BOB = ("--subject", "acme/user:bob")
CAROL = ("--subject", "acme/user:carol")  # may not read the incident (no `incident` label)
MALLORY = ("--subject", "globex/user:mallory")  # another tenant
DURING = "runbook we used during the PAY-4097 incident"
START = "2026-07-23T10:02:38Z"
IN_FORCE_NOW = "in force now: v4 (runbook:payment-recovery@v4, since 2026-07-25T00:00:00Z)"
LATE = "2026-07-26T00:00:00Z"  # v4 in force


def _doc(invoke, *args: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    result = invoke("runbook", *args, "--json")
    assert result.code == 0, result
    doc = json.loads(result.out)
    assert isinstance(doc, dict)
    return doc


def test_text_naming_the_incident_is_at_its_start_and_says_so(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    card = invoke("runbook", DURING, *BOB)
    assert card.code == 0, card
    lines = card.out.splitlines()
    assert lines[0] == (
        "Runbook   Payment recovery runbook v3  [runbook:payment-recovery@v3, v3, trusted]"
    ), card.out
    assert any(
        line.startswith(
            f"As of     {START} (from the text: 'during the PAY-4097 incident', the "
            "incident's start)  (known at "
        )
        for line in lines
    ), card.out
    assert (
        f"Time      'during the PAY-4097 incident' read as {START}, the incident's start "
        f"(inc:2026-07-23-payments); {IN_FORCE_NOW}; --as-of sets another time"
    ) in lines, card.out
    # The incident is read under the purpose incident records are for, said so.
    assert any(
        line.startswith("Purpose   incident_investigation: the text names an incident")
        for line in lines
    ), card.out
    assert any(line.startswith("Owner     team:payments-core  via ") for line in lines), card.out
    assert "Escalate to #payments-core." in card.out and "#payments-platform" not in card.out


def test_the_json_and_other_incident_words_alike(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _doc(invoke, "rollback steps for the payments incident", *BOB)
    assert doc["as_of"] == START
    assert doc["runbook"]["id"] == "runbook:payment-recovery@v3"
    assert doc["as_of_from"] == "text"
    assert doc["time_note"] == (
        f"'for the payments incident' read as {START}, the incident's start "
        f"(inc:2026-07-23-payments); {IN_FORCE_NOW}; --as-of sets another time"
    )
    assert doc["purpose"] == "incident_investigation"
    supposed = _doc(invoke, "what runbook were we supposed to follow for PAY-4097?", *BOB)
    assert (supposed["as_of"], supposed["runbook"]["id"]) == (START, "runbook:payment-recovery@v3")
    named = _doc(invoke, "payment recovery during inc:2026-07-23-payments", *BOB)
    assert (named["as_of"], named["as_of_from"]) == (START, "text")


def test_such_a_run_replays_verified_and_its_trace_says_where_as_of_came_from(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = _doc(invoke, DURING, *BOB)
    replay = invoke("replay", doc["run_id"], *BOB)
    assert replay.code == 0, replay
    assert "verified:        true" in replay.out, replay.out
    assert "pack_hash_match: true" in replay.out, replay.out
    trace = invoke("trace", doc["run_id"], *BOB)
    assert trace.code == 0, trace
    assert (
        f"as_of {START} (from the text: 'during the PAY-4097 incident', the incident's start)"
    ) in trace.out.splitlines()[0], trace.out
    # The incident read the time came from is a tool call of the run.
    assert "tool_call tc-01-001 incidents_at@" in trace.out, trace.out


def test_a_subject_who_cannot_read_the_incident_gets_now_and_a_time_line(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    not_placed = (
        "not placed: 'during the PAY-4097 incident' in the text names no incident this subject "
        "may read that started by now; the card is at now. Give --as-of T (ISO-8601 with a "
        "zone) for the version in force then"
    )
    for subject in (CAROL, MALLORY):
        doc = _doc(invoke, DURING, *subject)
        assert doc["as_of_from"] == "now", doc
        assert doc["time_note"] == not_placed, doc
        assert not doc["as_of"].startswith("2026-07-23"), doc
        card = invoke("runbook", DURING, *subject)
        assert f"Time      {not_placed}" in card.out.splitlines(), card.out
        # Nothing of the incident it may not read: not its id, not its start.
        assert "inc:2026-07-23-payments" not in card.out and START not in card.out, card.out
        assert "inc:2026-07-23-payments" not in json.dumps(doc)
    assert _doc(invoke, DURING, *CAROL)["runbook"]["id"] == "runbook:payment-recovery@v4"


def test_an_as_of_given_is_unchanged(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _doc(invoke, DURING, *BOB, "--as-of", LATE)
    assert (doc["as_of"], doc["as_of_from"]) == (LATE, "given")
    assert doc["runbook"]["id"] == "runbook:payment-recovery@v4"
    assert doc["time_note"] == (
        "not used: 'during the PAY-4097 incident' in the text: --as-of was given, and is this "
        "card's time"
    )
    assert doc["purpose"] == "runbook_lookup"
    # A purpose asked is kept: the incident is read under it, or not at all.
    asked = _doc(invoke, DURING, *BOB, "--purpose", "runbook_lookup")
    assert (asked["as_of_from"], asked["purpose"]) == ("now", "runbook_lookup")
    assert asked["time_note"].startswith("not placed: 'during the PAY-4097 incident'")
