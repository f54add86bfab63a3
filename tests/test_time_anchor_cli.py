"""Which instant a question's time words are taken as, asked after the fact at any as_of /
known_at (real Neo4j, the demo dataset plus an earlier incident of payment-api): "then" in
the live window and before the first error, a period of clock times on one day, the
incident and the release a question names, ids that look like codes, and a day without its
year."""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest

from graph_schema.bundle import load_bundle
from graph_schema.writer import ingest_bundle

BOB = ["--service", "svc:payment-api", "--subject", "acme/user:bob"]
AS_OF = "2026-12-01T00:00:00Z"
CORE = "team:payments-core OWNS svc:payment-api"

# An earlier incident of payment-api: "the incident" now has two to choose from. Recorded
# after the fact (12:00), so the live window of the 2026-07-23 incident does not see it.
LEDGER_INCIDENT = """
tenant: acme
nodes:
  - {id: inc:2026-06-02-ledger-sync, label: Incident, name: "Ledger sync failures 2026-06-02",
     acl: [internal, incident], source_id: src:incident-reports,
     source_version: "incidents@2026-06-02",
     locator: "incidents/2026-06-02-ledger-sync#inc:2026-06-02-ledger-sync",
     valid_from: "2026-06-02T08:00:00Z", valid_to: "2026-06-02T09:00:00Z",
     recorded_at: "2026-07-23T12:00:00Z",
     props: {severity: SEV3, started_at: "2026-06-02T08:00:00Z",
             resolved_at: "2026-06-02T09:00:00Z", summary: "payment-api could not sync"}}
  # A release months after the incident: asked later, "then" is still the incident's error.
  - {id: deploy:release-2026.09.01.1, label: Deployment, name: release-2026.09.01.1,
     acl: [internal], source_id: src:cicd, source_version: "pipeline-run-90001",
     locator: "cicd/pipelines/payment-api/runs/90001#summary",
     valid_from: "2026-09-01T12:00:00Z", recorded_at: "2026-09-01T12:00:05Z",
     props: {service: svc:payment-api, release: "2026.09.01.1",
             started_at: "2026-09-01T11:50:00Z", finished_at: "2026-09-01T12:00:00Z"}}
edges:
  - {type: DEPLOYED_TO, from: deploy:release-2026.09.01.1, to: svc:payment-api, acl: [internal],
     source_id: src:cicd, source_version: "pipeline-run-90001",
     locator: "cicd/acme#DEPLOYED_TO|deploy:release-2026.09.01.1|svc:payment-api",
     valid_from: "2026-09-01T12:00:00Z", recorded_at: "2026-09-01T12:00:05Z"}
  - {type: AFFECTED_BY, from: svc:payment-api, to: inc:2026-06-02-ledger-sync,
     acl: [internal, incident], source_id: src:incident-reports,
     source_version: "incidents@2026-06-02",
     locator: "incidents/2026-06-02-ledger-sync#AFFECTED_BY|svc:payment-api|inc:ledger",
     valid_from: "2026-06-02T08:00:00Z", valid_to: "2026-06-02T09:00:00Z",
     recorded_at: "2026-07-23T12:00:00Z"}
"""


@pytest.fixture(scope="module")
def two_incidents(demo_graph: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = tmp_path_factory.mktemp("ledger-incident")
    (folder / "40-acme-ledger.yaml").write_text(LEDGER_INCIDENT, encoding="utf-8")
    ingest_bundle(demo_graph, load_bundle(Path(folder)))


@pytest.mark.parametrize("known_at", ["2026-07-23T10:02:45Z", "2026-07-23T10:04:59Z"])
def test_then_in_the_live_window_is_the_first_error_already_recorded(  # type: ignore[no-untyped-def]
    two_incidents, cli_env, invoke, known_at: str
) -> None:
    # The EMITTED record (10:02:45) is known before the incident record (10:05): it places
    # "then" (before, the run was partial, 'then' not resolved).
    doc = json.loads(
        invoke("investigate", "Who owned payment-api then?", *BOB, "--as-of", known_at,
               "--known-at", known_at, "--json").out
    )  # fmt: skip
    assert doc["status"] == "complete", doc["missing_evidence"]
    assert doc["unresolved_time_words"] == []
    texts = [c["statement"] for c in doc["claims"]]
    assert any(
        t.startswith("At the first PAY-4097 error, 2026-07-23T10:02:38Z (the question says 'then')")
        and CORE in t
        for t in texts
    ), texts


def test_then_before_the_first_error_is_the_release_not_last_years_error(  # type: ignore[no-untyped-def]
    two_incidents, cli_env, invoke
) -> None:
    # At 10:02:37 the release (10:02:00) is the latest event; the only error by then is a
    # PAY-1002 of 2025, another episode (before, "then" was that error, complete).
    report = invoke("investigate", "Who owned payment-api then?", *BOB, "--as-of",
                    "2026-07-23T10:02:37Z", "--known-at", "2026-07-23T10:03:00Z")  # fmt: skip
    assert report.code == 0, report
    assert (
        "At the release release-2026.07.23.1, 2026-07-23T10:02:00Z (the question says 'then')"
    ) in report.out, report.out
    assert "At the first PAY-1002 error" not in report.out
    # Once the error happened, it is "then" again; asked months later too (a release of
    # September is not "then"), and right after that release, it is.
    later = invoke("investigate", "Who owned payment-api then?", *BOB, "--as-of", AS_OF)
    assert "At the first PAY-4097 error, 2026-07-23T10:02:38Z (the question says 'then')" in (
        later.out
    ), later.out
    # The Time line names the later release as not taken, with why (before h28-then, it was
    # not mentioned), and the incident of June before the one taken (before h29-then2, it
    # was not: only the latest incident's start was looked at).
    assert (
        "130 d 13 h 57 min before as_of 2026-12-01T00:00:00Z (also found, not taken: the "
        "release release-2026.09.01.1, 2026-09-01T12:00:00Z, a change with no error, incident "
        "or alert found after it; the start of incident Ledger sync failures 2026-06-02, "
        "2026-06-02T08:00:00Z, earlier); the answer holds at that moment (and at as_of). Name "
        "the moment in the question, or give --as-of, to ask about another one"
    ) in later.out, later.out
    after = invoke("investigate", "Who owned payment-api then?", *BOB,
                   "--as-of", "2026-09-01T12:05:00Z")  # fmt: skip
    assert "At the release release-2026.09.01.1, 2026-09-01T12:00:00Z (the question says" in (
        after.out
    ), after.out


def test_a_period_of_clock_times_on_one_day_places_both_ends(
    two_incidents, cli_env, invoke
) -> None:  # type: ignore[no-untyped-def]
    for question in (
        "Who owned payment-api between 10:00 and 10:30 on 2026-07-23?",
        "Who owned payment-api on 2026-07-23 from 10:00 to 10:30?",
    ):
        doc = json.loads(invoke("investigate", question, *BOB, "--as-of", AS_OF, "--json").out)
        assert doc["unresolved_time_words"] == [], question
        texts = " ".join(c["statement"] for c in doc["claims"])
        # The owners in the period, the period as placed (both ends on that day).
        placed = "2026-07-23T10:00:00Z to 2026-07-23T10:30:00Z; no zone given: read as UTC)"
        assert "From 2025-01-01T00:00:00Z to 2026-07-24T00:00:00Z (the question says " in texts
        assert f"': {placed}: team:payments-core OWNS svc:payment-api" in texts, (question, texts)


@pytest.mark.parametrize(
    ("question", "start"),
    [
        (
            "Who owned payment-api during the payments incident?",
            "incident Payments authorization failures 2026-07-23, 2026-07-23T10:02:38Z",
        ),
        (
            "Who owned payment-api during the ledger incident?",
            "incident Ledger sync failures 2026-06-02, 2026-06-02T08:00:00Z",
        ),
        # Not named: the latest incident, not the earliest.
        (
            "Who owned payment-api during the incident?",
            "incident Payments authorization failures 2026-07-23, 2026-07-23T10:02:38Z",
        ),
    ],
)
def test_during_an_incident_is_the_incident_named(  # type: ignore[no-untyped-def]
    two_incidents, cli_env, invoke, question: str, start: str
) -> None:
    report = invoke("investigate", question, *BOB, "--as-of", AS_OF)
    assert report.code == 0, report
    assert f"At the start of {start}" in report.out, report.out


@pytest.mark.parametrize(
    "question",
    [
        "Who owned payment-api when release 2026.07.20.2 was deployed?",
        "Who owned payment-api when release-2026.07.20.2 was deployed?",
    ],
)
def test_when_a_named_release_was_deployed_is_its_deployment_time(  # type: ignore[no-untyped-def]
    two_incidents, cli_env, invoke, question: str
) -> None:
    report = invoke("investigate", question, *BOB, "--as-of", AS_OF)
    assert report.code == 0, report
    assert "At the release release-2026.07.20.2, 2026-07-20T14:00:00Z (the question says 'when" in (
        report.out
    ), report.out
    assert "At the release release-2026.07.23.1" not in report.out


def test_an_id_with_a_year_in_it_is_no_error_code(two_incidents, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # RR-2026-07-23a names a rule set: "then" is still the first PAY-4097 error, named.
    question = (
        "Was the risk rule change RR-2026-07-23a related to the errors? Who owned payment-api then?"
    )
    report = invoke("investigate", question, *BOB, "--as-of", AS_OF)
    assert report.code == 0, report
    assert "At the first PAY-4097 error, 2026-07-23T10:02:38Z (the question says 'then')" in (
        report.out
    ), report.out


def test_a_day_without_its_year_takes_the_year_of_as_of(two_incidents, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # The golden case temporal-owner-at-move-instant (it was partial: 'on July 24' unplaced).
    doc = json.loads(
        invoke("investigate", "Who owned payment-api at midnight on July 24?", *BOB,
               "--as-of", "2026-07-24T00:00:00Z", "--json").out
    )  # fmt: skip
    assert doc["status"] == "complete"
    assert doc["unresolved_time_words"] == []
    texts = " ".join(c["statement"] for c in doc["claims"])
    assert (
        "At the time named in the question, 2026-07-24T00:00:00Z (explicit, no zone given: read "
        "as UTC; no year given: the year of as_of, 2026)"
    ) in texts, texts
    assert "team:payments-platform OWNS svc:payment-api" in texts
    report = invoke("investigate", "Who owned payment-api on July 23?", *BOB, "--as-of", AS_OF)
    assert (
        "At the time named in the question, 2026-07-23T00:00:00Z (explicit, a day: its start, "
        "00:00 UTC; no year given: the year of as_of, 2026): " + CORE
    ) in report.out, report.out
    assert "Time       " not in report.out
