"""An on-call engineer asking "Did the deploy cause it?" (or "What changed before the
errors?") naming no error code, through the CLI against a real Neo4j (tenant initech,
fixture initech-unnamed-errors): the service's own errors are read, not only those an
incident record links.

tps-report: release 09:50-09:58, TPS-500 first seen 10:02 (recorded 10:02:30), its incident
recorded 10:10 under `incident` (lou may not read it, ivy may); cover-sheet: a rollout
10:00-11:00 with CS-9 first seen 10:20 and no incident; fax-gateway: a rollout 10:00-11:00 and
no error. Before, each gave no claims, or "No first-seen error is known", or "no first error
is found ... that this subject may read" (h25)."""

from __future__ import annotations

import neo4j
import pytest
from conftest import ingest_fixture_bundle, investigate_json

LOU = ["--subject", "initech/user:lou", "--deadline-seconds", "600"]
IVY = ["--subject", "initech/user:ivy", "--deadline-seconds", "600"]
TPS = ["--service", "svc:tps-report"]
# Before the incident was filed (10:10), after the error was recorded (10:02:30).
LIVE = ["--as-of", "2026-11-11T10:05:00Z", "--known-at", "2026-11-11T10:05:00Z"]
FIRST_SEEN = "TPS-500 first seen at 2026-11-11T10:02:00Z: svc:tps-report EMITTED err:TPS-500"
AFTER_RELEASE = (
    "TPS-500 was first seen 4 min after release deploy:tps-2026.11.11.1 finished "
    "(2026-11-11T09:58:00Z -> 2026-11-11T10:02:00Z): a time correlation, not by itself a "
    "root cause"
)


@pytest.fixture(scope="module")
def initech(driver: neo4j.Driver) -> neo4j.Driver:
    return ingest_fixture_bundle(driver, "initech-unnamed-errors")


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


def _gaps(doc: dict) -> set[str]:  # type: ignore[type-arg]
    return {g["evidence_type"] for g in doc["missing_evidence"] if g.get("required", True)}


def test_a_subject_who_may_not_read_the_incident_gets_the_correlation(  # type: ignore[no-untyped-def]
    initech, cli_env, invoke
) -> None:
    doc = investigate_json(
        invoke, "Did the deploy cause it?", *TPS, *LOU, "--as-of", "2026-11-11T12:00:00Z"
    )
    statements = _statements(doc)
    assert FIRST_SEEN in statements, statements
    assert AFTER_RELEASE in statements, statements
    assert doc["status"] == "complete", doc["missing_evidence"]
    assert doc["verdict"] == "likely"
    # The incident stays invisible to lou: read through the service, not the incident.
    assert "inc:2026-11-11-tps" not in str(doc)


def test_before_the_incident_is_filed_the_recorded_error_is_found(  # type: ignore[no-untyped-def]
    initech, cli_env, invoke
) -> None:
    doc = investigate_json(invoke, "Did the deploy cause it?", *TPS, *IVY, *LIVE)
    statements = _statements(doc)
    assert FIRST_SEEN in statements, statements
    assert AFTER_RELEASE in statements, statements
    assert not any("No first-seen error is known" in s for s in statements), statements
    doc = investigate_json(invoke, "What changed before the errors?", *TPS, *IVY, *LIVE)
    assert doc["status"] == "complete", doc["missing_evidence"]
    assert (
        "Release deploy:tps-2026.11.11.1 finished at 2026-11-11T09:58:00Z, 4 min before "
        "TPS-500 was first seen"
    ) in _statements(doc), _statements(doc)
    assert [c["element_id"] for c in doc["confounders"]] == ["deploy:tps-2026.11.11.1"]


def test_a_rollout_under_way_at_as_of_is_found_with_no_incident(  # type: ignore[no-untyped-def]
    initech, cli_env, invoke
) -> None:
    at = ["--as-of", "2026-11-11T10:30:00Z"]
    question = "Did the deploy cause the errors?"
    doc = investigate_json(invoke, question, "--service", "svc:cover-sheet", *LOU, *at)
    assert doc["verdict"] == "likely", doc["missing_evidence"]
    assert (
        "CS-9 was first seen 20 min after release deploy:cs-2026.11.11.1 started at "
        "2026-11-11T10:00:00Z, during its rollout (not finished by as_of 2026-11-11T10:30:00Z): "
        "a time correlation, not by itself a root cause"
    ) in _statements(doc), _statements(doc)
    # No error at all: the rollout under way is still found, never "no release time".
    doc = investigate_json(invoke, question, "--service", "svc:fax-gateway", *LOU, *at)
    assert "deployment_time" not in _gaps(doc), doc["missing_evidence"]
    assert (
        "At as_of, 2026-11-11T10:30:00Z: the rollout of release fax-2026.11.11.1 "
        "(deploy:fax-2026.11.11.1) to svc:fax-gateway was under way, started at "
        "2026-11-11T10:00:00Z and not finished by 2026-11-11T10:30:00Z, so it was not yet the "
        "release in force"
    ) in _statements(doc), _statements(doc)
    assert "error_first_seen" in _gaps(doc)
