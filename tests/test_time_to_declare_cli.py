"""Postmortem metrics asked after the fact, on the demo data through the CLI against a real
Neo4j (session 34): "when was the incident declared?" and "time to declare" measure the first
error (PAY-4097 at 10:02:38) -> the incident's first record (version 1, made 10:05:00): 2 min
22 s; "when was severity raised?" no longer prints the incident report whole as a first-seen
fact.

Before: "what was the time to declare?" was `partial` ("the question's words 'time declare'
ask something it does not read"), "when was the incident declared?" listed the incident and
its errors with no declaration time, and the severity answer stated "Incident report: ...
first seen at 2026-07-23T10:02:38Z: Timeline (UTC): ..." beside the severity history.
"""

from __future__ import annotations

import neo4j
import pytest
from conftest import claim_lines

from investigator.timeline import ResponseMetric, response_metrics

BOB = ["--subject", "acme/user:bob"]
DEADLINE = ["--deadline-seconds", "600"]
DECLARED = (
    "Time to declare of incident inc:2026-07-23-payments: 2 min 22 s (declare = first error "
    "-> the incident's first record, when it was made: the records state no time of the "
    "declaration itself): PAY-4097 first seen on svc:payment-api at 2026-07-23T10:02:38Z, "
    "incident declared (record version 1 made) at 2026-07-23T10:05:00Z"
)


pytestmark = pytest.mark.usefixtures("patient_reads")


@pytest.mark.parametrize(
    "question",
    [
        "when was the incident declared?",
        "what was the time to declare?",
        "how long did it take to declare the incident?",
        "when did we declare the incident?",
    ],
)
def test_declaring_is_a_response_metric(question: str) -> None:
    assert response_metrics(question) == [ResponseMetric.DECLARE]


@pytest.mark.parametrize(
    ("question", "flags", "expected"),
    [
        ("when was the incident declared?", ["--as-of", "2026-07-26T00:00:00Z"], DECLARED),
        ("what was the time to declare?", [], DECLARED),  # no --as-of: now
        ("time to declare", ["--as-of", "2026-07-23T10:05:00Z"], DECLARED),  # at the record
        (
            "time to declare",  # the incident open, its record not made yet
            ["--as-of", "2026-07-23T10:04:00Z"],
            "Time to declare of incident inc:2026-07-23-payments: not declared by as_of "
            "2026-07-23T10:04:00Z (declare = first error",
        ),
    ],
)
def test_time_to_declare_before_at_and_after(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, question: str, flags: list[str], expected: str
) -> None:
    report = invoke("investigate", question, *BOB, *flags, *DEADLINE)
    assert report.code == 0, report
    assert any(line.startswith(f"[fact      ] {expected}") for line in claim_lines(report.out)), (
        report.out
    )
    assert "Status     complete" in report.out, report.out


def test_no_incident_known_or_readable_measures_nothing(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    for flags in (
        [*BOB, "--known-at", "2026-07-23T10:00:00Z"],  # before any record of it
        ["--subject", "acme/user:carol"],  # may not read the incident
        ["--subject", "globex/user:mallory"],  # another tenant
    ):
        report = invoke("investigate", "time to declare", *flags, *DEADLINE)
        assert report.code == 0, report
        assert "Time to declare of incident" not in report.out, report.out
        assert "inc:2026-07-23-payments" not in report.out, report.out
        assert "Status     partial" in report.out, report.out


def test_severity_raised_says_no_report_as_a_first_sighting(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    report = invoke(
        "investigate", "when was severity raised?", *BOB, "--as-of", "2026-07-26T00:00:00Z"
    )
    assert report.code == 0, report
    claims = claim_lines(report.out)
    assert any("changed SEV2 -> SEV1 at 2026-07-23T10:20:00Z" in line for line in claims), (
        report.out
    )
    assert not any(line.startswith("[fact      ] Incident report") for line in claims), report.out
    assert not any("Timeline (UTC)" in line for line in claims), report.out
