"""Which time a recorded run answered for, and who chose it, as `trace`, `runs`, `replay`
and `verify` tell an auditor after the fact: against the real Neo4j, the demo dataset and
the CLI (h31-asof).

Before: the answer's JSON said where a runbook lookup's as_of came from (`as_of_from`:
the `--as-of` given, one time in its text, or now), but the recorded run did not, so `trace`,
`runs` and `replay` showed a bare `as_of` and could not tell "at now, because nobody gave a
time" from "at the time the question's text named".
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import neo4j

from graph_schema.canonical import iso_utc
from investigator.runbook_lookup import LookupTarget, RunbookLookup, RunbookQuery

BOB = ("--subject", "acme/user:bob")
ALICE = ("--subject", "acme/user:alice")
ZONED = "payment recovery on 2026-07-25 01:00 +0200"  # 2026-07-24T23:00:00Z: v3 in force
FROM_TEXT = "as_of 2026-07-24T23:00:00Z (from the text: '2026-07-25 01:00 +0200')"
QUESTION = "Why did payment authorization fail with no database connection available?"


def _json(invoke, *args: str) -> Any:  # type: ignore[no-untyped-def]
    result = invoke(*args, "--json")
    assert result.code == 0, result
    return json.loads(result.out)


def _listed(invoke, run_id: str, *subject: str) -> str:  # type: ignore[no-untyped-def]
    runs = invoke("runs", *subject)
    assert runs.code == 0, runs
    (line,) = [line for line in runs.out.splitlines() if line.startswith(run_id)]
    return line


def test_a_lookup_whose_as_of_came_from_its_text_traces_lists_and_replays_so(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    answer = _json(invoke, "runbook", ZONED, *BOB)
    assert (answer["as_of"], answer["as_of_from"]) == ("2026-07-24T23:00:00Z", "text")
    run_id = answer["run_id"]

    trace = invoke("trace", run_id, *BOB)
    assert trace.code == 0, trace
    root = trace.out.splitlines()[0]
    assert f"{FROM_TEXT}, known_at " in root and root.endswith("(now: none given))"), root
    doc = _json(invoke, "trace", run_id, *BOB)
    assert doc["as_of_from"] == "text" and doc["known_at_from"] == "now"
    assert doc["as_of_words"] == "'2026-07-25 01:00 +0200'"
    assert doc["time_note"] == answer["time_note"]  # what the card said, as recorded
    assert doc["times"].startswith(FROM_TEXT)
    # Recorded on the run node itself, so its hash (and the run's anchor) covers it.
    run_node = doc["nodes"][0]["properties"]
    assert run_node["as_of_from"] == "text" and run_node["time_note"] == answer["time_note"]

    assert _listed(invoke, run_id, *BOB).endswith(f"  {FROM_TEXT}")
    (listed,) = [r for r in _json(invoke, "runs", *BOB)["runs"] if r["run_id"] == run_id]
    assert (listed["as_of_from"], listed["known_at_from"]) == ("text", "now")
    assert listed["times"] == FROM_TEXT

    # The re-run is at the recorded as_of (the text is not read again), and says where from.
    replay = invoke("replay", run_id, *BOB)
    assert replay.code == 0, replay
    assert f"times:           {FROM_TEXT}, known_at " in replay.out, replay.out
    replayed = _json(invoke, "replay", run_id, *BOB)
    assert replayed["verified"] is True
    assert (replayed["as_of"], replayed["as_of_from"]) == (doc["as_of"], "text")
    assert invoke("verify", run_id, *BOB).code == 0

    # An as_of given beside a time in the text: given, and the text's time said not used.
    given = _json(invoke, "runbook", ZONED, "--as-of", "2026-07-26T00:00:00Z", *BOB)
    line = _listed(invoke, given["run_id"], *BOB)
    assert line.endswith("as_of 2026-07-26T00:00:00Z (given; a time in the text not used)"), line
    # Another subject still cannot trace or replay it (its own runs only, without audit).
    assert invoke("trace", run_id, *ALICE).code == 3
    assert invoke("replay", run_id, *ALICE).code == 3


def test_an_investigation_without_as_of_is_said_to_be_at_now_none_given(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    ran = _json(invoke, "investigate", QUESTION, *ALICE, "--deadline-seconds", "120")
    run_id = ran["run_id"]
    trace = invoke("trace", run_id, *ALICE)
    assert trace.code == 0, trace
    root = trace.out.splitlines()[0]
    as_of = iso_utc(datetime.fromisoformat(ran["as_of"]))  # as trace writes instants
    assert f"as_of {as_of} (now: none given), known_at " in root, root
    doc = _json(invoke, "trace", run_id, *ALICE)
    assert (doc["as_of_from"], doc["known_at_from"], doc["time_note"]) == ("now", "now", None)
    assert _listed(invoke, run_id, *ALICE).endswith(f"as_of {as_of} (now: none given)")

    # Both times given: both said given.
    given = _json(
        invoke,
        "investigate",
        QUESTION,
        *ALICE,
        "--as-of",
        "2026-07-23T10:30:00Z",
        "--known-at",
        "2026-12-01T00:00:00Z",
        "--deadline-seconds",
        "120",
    )
    doc = _json(invoke, "trace", given["run_id"], *ALICE)
    assert doc["times"] == (
        "as_of 2026-07-23T10:30:00Z (given), known_at 2026-12-01T00:00:00Z (given)"
    )
    assert _listed(invoke, given["run_id"], *ALICE).endswith(doc["times"])


def test_a_run_recorded_without_where_its_as_of_came_from_still_lists_traces_and_verifies(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    # Recorded through the product's own write path as runs were before the field (a query
    # that does not say where its as_of came from records none, as replay's re-runs do).
    lookup = RunbookLookup(demo_graph)
    answer = lookup.lookup(
        RunbookQuery(
            target=LookupTarget.TEXT,
            value="payment recovery",
            subject_id="acme/user:bob",
            as_of=datetime(2026, 7, 24, 23, tzinfo=UTC),
        )
    )
    run_id = answer.run_id
    doc = _json(invoke, "trace", run_id, *BOB)
    assert "as_of_from" not in doc["nodes"][0]["properties"]  # as an older run
    assert (doc["as_of_from"], doc["known_at_from"]) == (None, "now")  # never guessed
    trace = invoke("trace", run_id, *BOB)
    assert trace.code == 0, trace
    assert "as_of 2026-07-24T23:00:00Z (source not recorded), known_at " in trace.out
    unsaid = "as_of 2026-07-24T23:00:00Z (source not recorded)"
    assert _listed(invoke, run_id, *BOB).endswith(unsaid)
    assert invoke("verify", run_id, *BOB).code == 0
    replay = invoke("replay", run_id, *BOB)
    assert replay.code == 0, replay
    assert "times:           as_of 2026-07-24T23:00:00Z (source not recorded)" in replay.out
    # Another subject cannot trace it (existing rule, kept).
    denied = invoke("trace", run_id, *ALICE)
    assert denied.code == 3 and not denied.out, denied
