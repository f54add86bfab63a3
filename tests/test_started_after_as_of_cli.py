"""A run answers at as_of: a record or relationship that starts after as_of is never followed
to a claim, whatever the question (helper h28-future, session 28), on the demo data
(payments-incident) through the CLI against a real Neo4j.

The demo's day, 2026-07-23: release 2026.07.23.1 of payment-api rolls out 09:55:12-10:02:00,
PAY-4097 is first seen on payment-api at 10:02:38 (the incident starts then), the alert fires
at 10:03:10, and checkout's AFFECTED_BY tie to the incident starts at 10:03:30.

Before: only a symptom said at a place ("5xx errors on checkout", h28-place) followed no tie
that starts after as_of. Other questions still did: "what caused the errors on checkout?" at
09:00 followed checkout's 10:03:30 tie to the incident, then the incident's service and its
old error code, and claimed "No release is recorded ... before PAY-1002 was first seen at
2025-03-01"; at 10:03:20 (ten seconds before that tie) it claimed the release as the
candidate cause with the postmortem's mechanism; "was the release related to the errors?"
with `--service svc:checkout` claimed payment-api's errors; "who was paged for the payments
incident?" at 09:00, before the incident existed, claimed payments-core's ownership of
payment-api. Now such a record is only a rejected candidate (`rejected_temporal`), and the
gaps say what is known then. A release rolling out at as_of is under way and still followed.
"""

from __future__ import annotations

import neo4j
import pytest
from conftest import investigate_json

ALICE = ["--subject", "acme/user:alice", "--deadline-seconds", "600"]
AT_09_00 = "2026-07-23T09:00:00Z"
# Ten seconds before checkout's tie to the incident (10:03:30), after the errors began.
AT_10_03_20 = "2026-07-23T10:03:20Z"
AT_10_05 = "2026-07-23T10:05:00Z"
CHECKOUT = ["--service", "svc:checkout"]
TIED_LATER = "AFFECTED_BY|svc:checkout|inc:2026-07-23-payments"


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


def _read(doc: dict) -> set[str]:  # type: ignore[type-arg]
    return {ev["element_id"] for ev in doc["evidence"]}


def _gaps(doc: dict) -> dict[str, str]:  # type: ignore[type-arg]
    return {m["evidence_type"]: m["description"] for m in doc["missing_evidence"]}


def _called_with(doc: dict, entity: str) -> list[str]:  # type: ignore[type-arg]
    """The templates the run called with `entity` as a parameter (what it followed)."""
    return [
        call["template_id"]
        for call in doc["tool_calls"]
        if entity in (call.get("params") or {}).values()
    ]


@pytest.mark.parametrize("as_of", [AT_09_00, AT_10_03_20])
def test_errors_on_checkout_follow_no_tie_that_starts_later(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, as_of: str
) -> None:
    doc = investigate_json(invoke, "what caused the errors on checkout?", *ALICE, "--as-of", as_of)
    statements = _statements(doc)
    # Before: "No release is recorded in the 24 h, and no other change in the 30 min, before
    # PAY-1002 was first seen at 2025-03-01T08:11:00Z" (09:00), "Candidate cause: release
    # deploy:release-2026.07.23.1 ..." and the postmortem ruling out the risk rules (10:03:20),
    # read through the incident that checkout's tie (from 10:03:30) leads to.
    assert not [s for s in statements if "PAY-1002" in s], statements
    assert not [s for s in statements if s.startswith("Candidate cause")], statements
    assert not [s for s in statements if " rules out " in s], statements
    assert _called_with(doc, "inc:2026-07-23-payments") == [], doc["tool_calls"]
    read = _read(doc)
    assert not read & {"inc:2026-07-23-payments", "deploy:release-2026.07.23.1"}, read


def test_errors_on_checkout_at_nine_say_what_is_known_then(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    doc = investigate_json(
        invoke, "what caused the errors on checkout?", *ALICE, "--as-of", AT_09_00
    )
    assert _statements(doc) == [], _statements(doc)
    # No mechanism known then, and the question did name a service (checkout): not "the
    # question names no service ..." (said once nothing was followed to payment-api).
    mechanism = _gaps(doc)["mechanism"]
    assert mechanism.startswith("no mechanism evidence the subject may read"), mechanism
    assert doc["status"] == "partial"


@pytest.mark.parametrize("as_of", [AT_09_00, AT_10_03_20])
def test_the_release_question_at_checkout_before_its_tie(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, as_of: str
) -> None:
    doc = investigate_json(
        invoke, "was the release related to the errors?", *ALICE, *CHECKOUT, "--as-of", as_of
    )
    statements = _statements(doc)
    # Before: "PAY-1002 first seen at 2025-03-01T08:11:00Z: svc:payment-api EMITTED ..." at
    # 09:00, "PAY-4097 first seen at 2026-07-23T10:02:38Z ..." at 10:03:20, `complete`, with
    # the incident, its report and the release as evidence.
    assert not [s for s in statements if "PAY-1002" in s or "PAY-4097" in s], statements
    read = _read(doc)
    assert not read & {
        "inc:2026-07-23-payments",
        TIED_LATER,
        "EMITTED|svc:payment-api|err:PAY-4097",
    }
    assert _called_with(doc, "inc:2026-07-23-payments") == [], doc["tool_calls"]
    gaps = _gaps(doc)
    assert gaps["affected_service"] == "no link between the error/incident and the service", gaps
    assert doc["verdict"] == "uncertain"
    assert doc["status"] == "partial"


def test_after_checkouts_tie_the_release_question_follows_it(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    doc = investigate_json(
        invoke, "was the release related to the errors?", *ALICE, *CHECKOUT, "--as-of", AT_10_05
    )
    assert any(
        s.startswith("PAY-4097 first seen at 2026-07-23T10:02:38Z") for s in _statements(doc)
    )
    assert TIED_LATER in _read(doc)


def test_an_incident_asked_about_before_it_began_is_said_recorded_later(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    doc = investigate_json(
        invoke, "who was paged for the payments incident?", *ALICE, "--as-of", AT_09_00
    )
    statements = _statements(doc)
    # Before: "At 2026-07-23T09:00:00Z: team:payments-core OWNS svc:payment-api ..." and
    # "PAY-1002 first seen at 2025-03-01T08:11:00Z ...", read through the 10:02 incident.
    assert statements == [], statements
    gaps = _gaps(doc)
    later = (
        "what the question's words found had not started by as_of 2026-07-23T09:00:00Z: "
        "inc:2026-07-23-payments starts 2026-07-23T10:02:38Z (recorded later, not followed), "
        "so no owner was looked for"
    )
    assert gaps["ownership"].startswith(later), gaps
    assert "names no service" not in gaps["error_first_seen"], gaps


def test_a_rollout_under_way_at_as_of_is_still_followed(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    """Control: release 2026.07.23.1's record is valid from its finish (10:02:00); at 10:00
    it had started (09:55:12) and is under way, so it is said, as before."""
    doc = investigate_json(
        invoke,
        "was the release related to the errors?",
        *ALICE,
        "--service",
        "svc:payment-api",
        "--as-of",
        "2026-07-23T10:00:00Z",
    )
    assert any(
        s.startswith(
            "At as_of, 2026-07-23T10:00:00Z: the rollout of release release-2026.07.23.1 "
            "(deploy:release-2026.07.23.1) to svc:payment-api was under way"
        )
        for s in _statements(doc)
    ), _statements(doc)
    assert "deploy:release-2026.07.23.1" in _read(doc)
