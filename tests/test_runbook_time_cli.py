"""Where a runbook lookup's time came from, as `investigator runbook` says it (the card and
`--json`), against the real Neo4j with the demo dataset (explorer e29, finding 17 and m2).

Before: the card's `Time      from the text: ...` line had no counterpart in `--json`, so a
script could not tell that `as_of` came from the text rather than `--as-of` or now; and a
bare "then" asked about ("payment recovery then") was silently dropped, the card at now,
while "yesterday" or "back then" got a `Time      not used: ...` line.
"""

from __future__ import annotations

import json
from typing import Any

from investigator.runbook_lookup import RunbookAnswer

BOB = ("--subject", "acme/user:bob")
ZONED = "payment recovery on 2026-07-25 01:00 +0200"  # 2026-07-24T23:00:00Z: v3 in force
FROM_TEXT = "from the text: '2026-07-25 01:00 +0200'; --as-of sets another time"
LATE = "2026-07-26T00:00:00Z"  # v4 in force


def _doc(invoke, *args: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    result = invoke("runbook", *args, *BOB, "--json")
    assert result.code == 0, result
    doc = json.loads(result.out)
    assert isinstance(doc, dict)
    return doc


def test_json_says_the_time_came_from_the_text_as_the_card_does(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = _doc(invoke, ZONED)
    assert doc["as_of"] == "2026-07-24T23:00:00Z"  # the zone read: 23:00Z the day before
    assert doc["runbook"]["id"] == "runbook:payment-recovery@v3"
    assert doc["as_of_from"] == "text"
    assert doc["time_note"] == FROM_TEXT
    card = invoke("runbook", ZONED, *BOB)
    assert f"Time      {doc['time_note']}" in card.out, card.out
    # The existing fields stay as they were, in their order; the two are added after them.
    assert list(doc) == [*RunbookAnswer.model_fields, "as_of_from", "time_note"]


def test_an_as_of_given_wins_over_the_texts_time_and_json_says_so(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = _doc(invoke, ZONED, "--as-of", LATE)
    assert doc["as_of"] == LATE and doc["runbook"]["id"] == "runbook:payment-recovery@v4"
    assert doc["as_of_from"] == "given"  # the run's word (was "as_of" before session 32)
    assert doc["time_note"] == (
        "not used: '2026-07-25 01:00 +0200' in the text: --as-of was given, and is this card's time"
    )
    # A target that is no text: no note; as_of is the one given, else now.
    service = _doc(invoke, "--service", "svc:payment-api", "--as-of", LATE)
    assert (service["as_of_from"], service["time_note"]) == ("given", None)
    now = _doc(invoke, "--service", "svc:payment-api")
    assert (now["as_of_from"], now["time_note"]) == ("now", None)
    plain = _doc(invoke, "payment recovery")
    assert (plain["as_of_from"], plain["time_note"]) == ("now", None)


def test_then_asked_about_is_said_not_used(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    card = invoke("runbook", "payment recovery then", *BOB)
    assert card.code == 0, card
    assert (
        "Time      not used: 'then' in the text (a runbook lookup has no incident to place it "
        "at; only one date or date-time with its year is used); the card is at now. Give "
        "--as-of T (ISO-8601 with a zone) for the version in force then"
    ) in card.out, card.out
    doc = _doc(invoke, "what did the payment recovery runbook say then?")
    assert doc["as_of_from"] == "now"
    assert doc["time_note"].startswith("not used: 'then' in the text"), doc["time_note"]
    # With --as-of, that is the time: the "then" is said not used for it.
    given = _doc(invoke, "payment recovery then", "--as-of", LATE)
    assert given["time_note"] == (
        "not used: 'then' in the text: --as-of was given, and is this card's time"
    )
    # "then" as a next step, or beside a time the text places, is still no time word.
    for text in ("PAY-4097 pool exhausted, then what?", "if the pool is exhausted then roll back"):
        step = _doc(invoke, text)
        assert (step["as_of_from"], step["time_note"]) == ("now", None), (text, step)
    dated = _doc(invoke, "payment recovery on 2026-07-23T10:05:00Z, then?")
    assert (dated["as_of"], dated["as_of_from"]) == ("2026-07-23T10:05:00Z", "text")
