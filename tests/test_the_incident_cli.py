"""An investigator asking "Was the deployment related to the incident?" with no `--service`:
"the incident" is the one incident the subject may read that was open at as_of, or else the
only one started by then; with several, the report names them and picks none (real Neo4j;
tenant initech's tps-report: release tps-2026.11.11.1 finished 09:58, TPS-500 first seen
10:02, incident inc:2026-11-11-tps 10:02-11:00 on 2026-11-11; a second incident on 11-15
is added for the last tests)."""

from __future__ import annotations

import json

import neo4j
import pytest
from conftest import REPO, ingest_fixture_bundle

from graph_schema.bundle import load_bundle
from graph_schema.writer import ingest_bundle

IVY = ["--subject", "initech/user:ivy", "--deadline-seconds", "600"]
QUESTION = "Was the deployment related to the incident?"
FIRST = "inc:2026-11-11-tps"
SECOND = "inc:2026-11-15-tps"


@pytest.fixture(scope="module")
def initech(driver: neo4j.Driver) -> neo4j.Driver:
    return ingest_fixture_bundle(driver, "initech-time")


@pytest.fixture(scope="module")
def two_incidents(initech: neo4j.Driver) -> neo4j.Driver:
    """The same tenant with a second incident of tps-report (used by the last tests only)."""
    fixture = REPO / "tests" / "fixtures" / "initech-second-incident"
    ingest_bundle(initech, load_bundle(fixture))
    initech.execute_query("CALL db.awaitIndexes(300)")
    return initech


def _run(invoke, question: str, *flags: str) -> tuple[dict, str]:  # type: ignore[no-untyped-def,type-arg]
    """The run's JSON document and its report, asked the same way."""
    asked = ["investigate", question, *IVY, *flags]
    doc = invoke(*asked, "--json")
    assert doc.code == 0, doc
    report = invoke(*asked)
    assert report.code == 0, report
    return json.loads(doc.out), report.out


def test_the_incident_is_the_tenants_only_incident_and_the_release_is_correlated(  # type: ignore[no-untyped-def]
    initech, cli_env, invoke
) -> None:
    # Before: no anchor was linked from "deployment" or "incident": no claim, `partial`.
    doc, report = _run(invoke, QUESTION, "--as-of", "2026-12-01T00:00:00Z")
    assert doc["status"] == "complete", doc["missing_evidence"]
    assert doc["verdict"] == "likely"
    statements = " | ".join(c["statement"] for c in doc["claims"])
    assert "TPS-500 first seen at 2026-11-11T10:02:00Z" in statements
    assert "4 min after release deploy:tps-2026.11.11.1 finished" in statements
    reading = doc["incident_reading"]
    assert (reading["words"], reading["taken"], reading["why"]) == (
        "the incident",
        FIRST,
        "only_before_as_of",
    )
    assert (
        "Incident   'the incident' is taken as inc:2026-11-11-tps (TPS reports failing "
        "2026-11-11, 2026-11-11T10:02:00Z to 2026-11-11T11:00:00Z): the only incident "
        "started by as_of"
    ) in report
    # Replay re-runs the lookup that chose the incident and gets the same pack.
    replay = invoke("replay", doc["run_id"], "--subject", "initech/user:ivy", "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["verified"] is True


def test_the_outage_while_it_is_open_and_before_it_began(  # type: ignore[no-untyped-def]
    initech, cli_env, invoke
) -> None:
    doc, report = _run(
        invoke, "Was the deployment related to the outage?", "--as-of", "2026-11-11T10:30:00Z"
    )
    assert doc["incident_reading"]["taken"] == FIRST
    assert doc["incident_reading"]["why"] == "open_at_as_of"
    # Open at as_of: its resolution at 11:00, after as_of, is not said (before: "10:02:00Z to
    # 2026-11-11T11:00:00Z): the only incident open at as_of", an end not yet happened).
    assert (
        "(TPS reports failing 2026-11-11, 2026-11-11T10:02:00Z to open): the only incident "
        "open at as_of"
    ) in report, report
    assert doc["incident_reading"]["candidates"][0]["resolved_at"] is None
    assert "11:00:00Z" not in report.split("Claims", 1)[0], report
    assert doc["verdict"] == "likely"
    # Before the incident began no incident can be meant: said, not guessed, `partial`.
    doc, report = _run(
        invoke, "Was the deployment related to the outage?", "--as-of", "2026-11-11T09:00:00Z"
    )
    assert doc["status"] == "partial"
    assert doc["incident_reading"]["taken"] is None
    assert "Incident   'the outage' names no incident: none you may read had started by as_of" in (
        report
    )


def test_two_incidents_are_named_and_neither_is_picked(  # type: ignore[no-untyped-def]
    two_incidents, cli_env, invoke
) -> None:
    doc, report = _run(invoke, QUESTION, "--as-of", "2026-12-01T00:00:00Z")
    assert doc["status"] == "partial"
    assert doc["claims"] == []
    reading = doc["incident_reading"]
    assert reading["taken"] is None and reading["why"] == "several_before"
    # The latest started first.
    assert [c["incident_id"] for c in reading["candidates"]] == [SECOND, FIRST]
    assert (
        "Incident   'the incident' could mean 2 incidents started by as_of: inc:2026-11-15-tps "
        "(TPS cover sheets blank 2026-11-15, 2026-11-15T08:00:00Z to 2026-11-15T09:00:00Z); "
        "inc:2026-11-11-tps (TPS reports failing 2026-11-11, 2026-11-11T10:02:00Z to "
        "2026-11-11T11:00:00Z); none was picked: name one (its id) or the service with --service"
    ) in report
    assert not any(ev["element_id"] in (FIRST, SECOND) for ev in doc["evidence"])


def test_with_two_incidents_the_one_open_at_as_of_is_meant(  # type: ignore[no-untyped-def]
    two_incidents, cli_env, invoke
) -> None:
    doc, report = _run(invoke, QUESTION, "--as-of", "2026-11-11T10:30:00Z")
    assert doc["incident_reading"]["taken"] == FIRST
    assert doc["verdict"] == "likely"
    assert "is taken as inc:2026-11-11-tps" in report
    assert not any(SECOND in ev["element_id"] for ev in doc["evidence"])
