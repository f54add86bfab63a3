"""When each tool call ran, in the Context Graph and its PROV export: a run records every
call's start (the executor's), so `trace --format prov-json` gives every tool-call activity
`prov:startTime`/`prov:endTime` and every generation `prov:time`; a run recorded before the
start was kept still verifies and exports without them. On the demo dataset, real Neo4j."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import neo4j
import pytest
from prov.model import ProvActivity, ProvDocument, ProvGeneration
from test_canonical import RECORDED_RUN_V1, load_recorded_run

from graph_schema.bundle import load_bundle
from graph_schema.schema_ddl import apply_schema
from graph_schema.writer import ingest_bundle
from investigator.context_graph import RunRecorder, load_lineage, verify_chain
from investigator.context_graph.models import CtxKind
from investigator.context_graph.prov import prov_json, record_id
from investigator.context_graph.trace import render_tree
from investigator.investigation import InvestigationRequest, InvestigationResult, investigate

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO / "datasets" / "payments-incident"
QUESTION = (
    "Was the 10:02 release of payment-api related to the PAY-4097 errors? "
    "Who owned the service at that moment? Which runbook version applied?"
)
ALICE = "acme/user:alice"


@pytest.fixture(scope="module")
def demo_run(driver: neo4j.Driver) -> Iterator[InvestigationResult]:
    with driver.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()
    apply_schema(driver)
    ingest_bundle(driver, load_bundle(DATASET))
    driver.execute_query("CALL db.awaitIndexes(300)")
    request = InvestigationRequest.model_validate(
        {
            "question": QUESTION,
            "service_id": "svc:payment-api",
            "subject_id": ALICE,
            "purpose": "incident_investigation",
            "as_of": "2026-07-23T10:03:00Z",
            "known_at": "2026-08-01T00:00:00Z",
            "deadline_s": 600,
        }
    )
    yield investigate(request, driver=driver, recorder=RunRecorder(driver))


def _times(record: Any) -> dict[str, datetime]:
    return {str(k): v for k, v in record.attributes if isinstance(v, datetime)}


def _prov(text: str) -> tuple[dict[str, ProvActivity], list[ProvGeneration]]:
    doc = ProvDocument.deserialize(content=text, format="json")
    activities = {str(r.identifier): r for r in doc.get_records(ProvActivity)}
    return activities, list(doc.get_records(ProvGeneration))


def _interval(activity: ProvActivity) -> tuple[datetime, datetime]:
    start, end = activity.get_startTime(), activity.get_endTime()
    assert start is not None and end is not None, activity
    return start, end


def test_every_tool_call_of_a_run_has_its_times_in_prov(  # type: ignore[no-untyped-def]
    demo_run: InvestigationResult, driver: neo4j.Driver, cli_env, invoke
) -> None:
    result = invoke("trace", demo_run.run_id, "--subject", ALICE, "--format", "prov-json")
    assert result.code == 0, result
    activities, generations = _prov(result.out)
    lineage = load_lineage(driver, demo_run.run_id)
    calls = lineage.of_kind(CtxKind.TOOL_CALL)
    assert len(calls) == len(demo_run.tool_calls) > 5

    run_start, run_end = _interval(activities["ctx:run-0"])
    intervals = []
    for node in calls:
        start, end = _interval(activities[record_id(node)])
        # End = start + the call's duration, within the run; UTC, to the microsecond.
        duration = timedelta(milliseconds=node.properties["duration_ms"])
        assert abs(end - start - duration) <= timedelta(microseconds=1), node.properties
        assert run_start <= start <= end <= run_end
        assert start.utcoffset() == timedelta(0)
        intervals.append((node.properties["round"], start, end, node))
    # Recorded in the order they were made (seq); a round's reads may overlap one another,
    # but every call of a round starts after every call of the round before it ended.
    assert [n.seq for *_, n in intervals] == sorted(n.seq for *_, n in intervals)
    rounds = sorted({r for r, *_ in intervals})
    assert rounds == list(range(1, demo_run.rounds + 1)) and len(rounds) > 1
    for earlier, later in itertools.pairwise(rounds):
        ended = max(end for r, _, end, _ in intervals if r == earlier)
        assert min(start for r, start, _, _ in intervals if r == later) >= ended

    # A call answered by an earlier read of the run (duration 0) has a time of its own.
    first_read: dict[str, datetime] = {}
    reused = 0
    for _, start, end, node in intervals:
        call = node.payload()
        asked = json.dumps([node.properties["template_id"], call["params"], call["options"]])
        if asked in first_read and node.properties["duration_ms"] == 0.0:
            reused += 1
            assert start == end and start > first_read[asked], node.properties
        first_read.setdefault(asked, start)
    assert reused > 0

    # Every generation has a time, inside the interval of the activity that generated it.
    assert generations
    for generation in generations:
        entity, activity = (v for _, v in generation.formal_attributes[:2])
        at = generation.get_attribute("prov:time")
        assert at, (entity, activity)
        start, end = _interval(activities[str(activity)])
        assert start <= next(iter(at)) <= end, (entity, activity)

    # The run still verifies: the start times are part of the hashed, anchored chain.
    assert verify_chain(lineage).chain_valid
    assert invoke("verify", demo_run.run_id, "--subject", ALICE).code == 0


def test_trace_shows_when_each_call_started(  # type: ignore[no-untyped-def]
    demo_run: InvestigationResult, cli_env, invoke
) -> None:
    started = {tc.tool_call_id: tc.started_at for tc in demo_run.tool_calls}
    assert all(started.values())
    listed = invoke("trace", demo_run.run_id, "--subject", ALICE, "--json")
    assert listed.code == 0, listed
    nodes = json.loads(listed.out)["nodes"]
    recorded = {
        n["properties"]["tool_call_id"]: n["properties"]["started_at"]
        for n in nodes
        if n["kind"] == "tool_call"
    }
    # Stored as the run's own times are: UTC, always six fraction digits.
    assert recorded == {k: v.strftime("%Y-%m-%dT%H:%M:%S.%fZ") for k, v in started.items()}
    tree = invoke("trace", demo_run.run_id, "--subject", ALICE)
    assert tree.code == 0, tree
    first = demo_run.tool_calls[0].tool_call_id
    line = next(x for x in tree.out.splitlines() if f"tool_call {first} " in x)
    assert f"ms, started {started[first].isoformat().replace('+00:00', 'Z')})" in line


def test_the_run_replays_with_its_call_times_recorded(  # type: ignore[no-untyped-def]
    demo_run: InvestigationResult, cli_env, invoke
) -> None:
    replayed = invoke("replay", demo_run.run_id, "--subject", ALICE)
    assert replayed.code == 0, replayed


def test_a_run_recorded_before_call_times_verifies_and_exports_without_them(
    clean_db: neo4j.Driver,
) -> None:
    run_id = load_recorded_run(clean_db, RECORDED_RUN_V1)
    lineage = load_lineage(clean_db, run_id)
    assert verify_chain(lineage).chain_valid
    activities, generations = _prov(prov_json(lineage))
    # The run keeps its recorded start and end; its tool calls have none to show.
    run = activities.pop("ctx:run-0")
    assert _interval(run)[0] < _interval(run)[1]
    assert len(activities) == 6
    assert all(a.get_startTime() is None and a.get_endTime() is None for a in activities.values())
    # Only the outcome's generation has a time (its recorded finished_at).
    timed = [g for g in generations if g.get_attribute("prov:time")]
    assert [str(next(v for _, v in g.formal_attributes[:1])) for g in timed] == ["ctx:outcome-25"]
    assert len(generations) > 1
    tree = render_tree(lineage)
    assert "ms)" in tree and "started" not in tree
