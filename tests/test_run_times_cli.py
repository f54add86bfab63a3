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
import re
from datetime import UTC, datetime
from pathlib import Path
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


def _as_of_line(out: str) -> str:
    (line,) = [line for line in out.splitlines() if line.startswith("As of ")]
    return line


def _run_id(out: str) -> str:
    found = re.search(r"run-[0-9a-f]{32}", out.splitlines()[-1])
    assert found, out
    return found.group(0)


def _trace_root(invoke, run_id: str, *subject: str) -> str:  # type: ignore[no-untyped-def]
    trace = invoke("trace", run_id, *subject)
    assert trace.code == 0, trace
    return str(trace.out.splitlines()[0])


def test_the_report_and_the_card_say_where_their_as_of_came_from_as_trace_does(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    """Before session 32 the answer printed a bare `As of T` while its run, `trace` and `runs`
    said `(now: none given)`, `(given)` or `(from the text: '...')`: the answer now says it."""
    # investigate without --as-of: at now, none given, as its trace says.
    ran = invoke("investigate", QUESTION, *ALICE, "--deadline-seconds", "120")
    assert ran.code == 0, ran
    line = _as_of_line(ran.out)
    found = re.match(r"As of      (\S+) \(now: none given\)  \(known at \S+\)  subject ", line)
    assert found, line
    root = _trace_root(invoke, _run_id(ran.out), *ALICE)
    assert f"as_of {found.group(1)} (now: none given), known_at " in root, root

    given = invoke(
        "investigate", QUESTION, *ALICE, "--as-of", "2026-07-23T10:30:00Z", "--deadline-seconds",
        "120",
    )  # fmt: skip
    assert given.code == 0, given
    assert _as_of_line(given.out).startswith("As of      2026-07-23T10:30:00Z (given)  (known at ")

    # The runbook card: now, the text's time, an --as-of given (beside a time in the text).
    card = invoke("runbook", "--service", "svc:payment-api", *BOB)
    assert card.code == 0, card
    line = _as_of_line(card.out)
    found = re.match(r"As of     (\S+) \(now: none given\)  \(known at \S+\)$", line)
    assert found, line
    root = _trace_root(invoke, _run_id(card.out), *BOB)
    assert f"as_of {found.group(1)} (now: none given), known_at " in root, root

    card = invoke("runbook", ZONED, *BOB)
    assert card.code == 0, card
    assert _as_of_line(card.out).startswith(f"As of     {FROM_TEXT.removeprefix('as_of ')}  ")
    assert f"{FROM_TEXT}, known_at " in _trace_root(invoke, _run_id(card.out), *BOB)

    card = invoke("runbook", ZONED, "--as-of", "2026-07-26T00:00:00Z", *BOB)
    assert card.code == 0, card
    said = "2026-07-26T00:00:00Z (given; a time in the text not used)"
    assert _as_of_line(card.out).startswith(f"As of     {said}  (known at "), card.out
    assert f"as_of {said}, known_at " in _trace_root(invoke, _run_id(card.out), *BOB)


FUTURE = "2099-01-01T00:00:00Z"


def test_the_card_says_a_future_as_of_as_investigate_does(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    """`investigate --as-of` after known_at says what its answer is; the card said nothing
    before session 32. Same words, same condition: only when known_at is the run's now."""
    note = re.compile(
        rf"^Time +as_of {FUTURE} is after known_at (\S+): what holds then as recorded by "
        r"known_at; later records may change it$",
        re.MULTILINE,
    )
    card = invoke("runbook", "--service", "svc:payment-api", "--as-of", FUTURE, *BOB)
    assert card.code == 0, card
    found = note.search(card.out)
    assert found, card.out
    assert f"(known at {found.group(1)})" in _as_of_line(card.out)
    ran = invoke(
        "investigate", "who owned payment-api?", *BOB, "--as-of", FUTURE, "--deadline-seconds",
        "120",
    )  # fmt: skip
    assert ran.code == 0, ran
    assert note.search(ran.out), ran.out
    # A --known-at given: a stale-known_at question, not this note (as investigate).
    stale = invoke(
        "runbook", "--service", "svc:payment-api", "--as-of", FUTURE, "--known-at",
        "2026-12-01T00:00:00Z", *BOB,
    )  # fmt: skip
    assert stale.code == 0, stale
    assert "is after known_at" not in stale.out, stale.out
    # A past --as-of: no note.
    past = invoke(
        "runbook", "--service", "svc:payment-api", "--as-of", "2026-07-26T00:00:00Z", *BOB
    )
    assert past.code == 0 and "is after known_at" not in past.out, past.out


COUNSEL = """
tenant: acme
principals:
  - {id: user:counsel, name: Legal counsel, labels: [internal, incident], purposes: [legal],
     source_id: src:iam, recorded_at: "2026-01-05T09:00:00Z"}
"""


def test_a_purge_run_says_its_time_is_its_own_not_given(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, tmp_path: Path
) -> None:
    """A purge records its own time as as_of and known_at (`known_at_given` true: the purge
    sets it). Before session 32, trace said `known_at ... (given)` though nobody gives a purge
    a time; now both are said to be the purge's own."""
    from graph_schema.bundle import load_bundle
    from graph_schema.writer import ingest_bundle

    (tmp_path / "counsel.yaml").write_text(COUNSEL, encoding="utf-8")
    ingest_bundle(demo_graph, load_bundle(tmp_path / "counsel.yaml"))
    counsel = ("--subject", "acme/user:counsel", "--purpose", "legal")
    # An id with no record: refused, and recorded as a purge run (nothing is purged).
    refused = invoke(
        "purge", "doc:no-such-record", "--tenant", "acme", "--subject", "user:counsel",
        "--reason", "h32 probe",
    )  # fmt: skip
    assert refused.code == 2, refused
    run_id = re.search(r"run-[0-9a-f]{32}", refused.err)
    assert run_id, refused
    root = _trace_root(invoke, run_id.group(0), *counsel)
    assert re.search(r", as_of (\S+), known_at \1 \(now: a purge asks about no time\)\)$", root), (
        root
    )
    assert "(given)" not in root, root
    doc = _json(invoke, "trace", run_id.group(0), *counsel)
    assert (doc["as_of_from"], doc["known_at_from"]) == ("now", "now")
    assert _listed(invoke, run_id.group(0), *counsel).endswith("(now: a purge asks about no time)")


def test_the_retrieval_harness_records_its_as_of_as_given(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, tmp_path: Path
) -> None:
    """The runbook retrieval harness (benchmarks, the CI gate) asks at a fixed as_of through
    the recorded product path; before session 32 its runs said "(source not recorded)"."""
    from investigator.runbook_retrieval import CorpusQuery, QueryKind, ask, ingest_corpus

    alerts = tmp_path / "alerts" / "team"
    alerts.mkdir(parents=True)
    (alerts / "QueueStalled.md").write_text(
        "# QueueStalled\n\n## Meaning\n\nThe work queue stopped draining.\n\n"
        "## Mitigation\n\nRestart the queue consumer.\n",
        encoding="utf-8",
    )
    ingest_corpus(demo_graph, tmp_path, tenant="harness")
    query = CorpusQuery(kind=QueryKind.MEANING, text="work queue stopped draining", expected=None)
    ask(RunbookLookup(demo_graph), query, tenant="harness")
    oncall = ("--subject", "harness/user:oncall")
    (listed,) = _json(invoke, "runs", *oncall)["runs"]
    assert listed["as_of_from"] == "given", listed
    assert listed["times"] == "as_of 2026-07-01T00:00:00Z (given)", listed


def test_the_old_word_for_given_reads_as_given() -> None:
    """`runbook --json` and the served tool said `as_of_from: "as_of"` until session 32 (the
    run said `given`): anything that stored the old word reads as the run's."""
    from investigator.context_graph.run_times import run_times

    times = run_times({"as_of": "2026-07-26T00:00:00+00:00", "as_of_from": "as_of"})
    assert times.as_of_from == "given"
    assert times.as_of_phrase() == "as_of 2026-07-26T00:00:00Z (given)"
