"""What an answer at as_of may say of what came after it (helper h29-hindsight, session 29;
e29-qa findings 7 and 9), on the demo data through the CLI against a real Neo4j.

The demo's day, 2026-07-23: release 2026.07.23.1 of payment-api finishes at 10:02:00,
PAY-4097 is first seen at 10:02:38 (the incident starts then), the release is rolled back at
10:41 and the incident resolved at 10:48. The postmortem is in force from 10:02:00.

Before: "What caused the PAY-4097 errors on payment-api?" asked at 10:02:00 or 10:02:30,
before any PAY-4097 error, was `complete` with "Missing evidence: none" and the postmortem's
"Root cause ... Fix: rollback at 10:41" as its mechanism claim, while the same run rejected
the errors themselves as after as_of. "When was the payments incident resolved?" at 10:40
was `complete` and printed the incident's interval "valid 10:02:38 to 10:48": a reader takes
10:48 as the answer, at a time it had not happened.
"""

from __future__ import annotations

import neo4j
import pytest
from conftest import investigate_json

BOB = ["--subject", "acme/user:bob", "--deadline-seconds", "600"]
CAUSE = "What caused the PAY-4097 errors on payment-api?"
RESOLVED = "When was the payments incident resolved?"
INCIDENT = "Incident inc:2026-07-23-payments: "


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


def _required(doc: dict) -> dict[str, str]:  # type: ignore[type-arg]
    return {m["evidence_type"]: m["description"] for m in doc["missing_evidence"] if m["required"]}


@pytest.mark.parametrize("as_of", ["2026-07-23T10:02:00Z", "2026-07-23T10:02:30Z"])
def test_no_cause_claimed_for_errors_not_yet_seen(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, as_of: str
) -> None:
    doc = investigate_json(invoke, CAUSE, *BOB, "--as-of", as_of)
    statements = _statements(doc)
    # Before: one claim, "Mechanism: Root cause: release 2026.07.23.1 ... Fix: rollback at
    # 10:41.", status complete, no gap.
    assert not [s for s in statements if "rollback" in s or "Root cause" in s], statements
    assert not [s for s in statements if s.startswith(("Mechanism", "Candidate cause"))]
    assert doc["status"] == "partial", doc["status"]
    gap = _required(doc).get("error_first_seen", "")
    assert gap.startswith(f"no PAY-4097 error is known at as_of {as_of}: "), doc["missing_evidence"]
    assert "after as_of" in gap and "doc:postmortem-2026-07-23-payments" in gap, gap
    # The errors are still a rejected candidate, as before.
    rejected = {r["element_id"]: r["reason"] for r in doc["rejected"]}
    assert rejected.get("EMITTED|svc:payment-api|err:PAY-4097") == "rejected_temporal"


def test_cause_claimed_once_the_errors_are_seen(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    # At the first PAY-4097 error the postmortem explains errors known then: claimed.
    doc = investigate_json(invoke, CAUSE, *BOB, "--as-of", "2026-07-23T10:02:38Z")
    statements = _statements(doc)
    assert [s for s in statements if s.startswith("Mechanism: Root cause")], statements
    assert doc["status"] == "complete"
    assert "error_first_seen" not in _required(doc)


@pytest.mark.parametrize(
    ("question", "flags"),
    [
        (RESOLVED, ["--service", "svc:payment-api"]),
        (RESOLVED, ["--service", "svc:payment-api", "--known-at", "2026-07-23T10:40:00Z"]),
        ("Is the payments incident still ongoing?", []),
    ],
)
def test_incident_open_at_as_of_says_so_not_its_later_end(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, question: str, flags: list[str]
) -> None:
    doc = investigate_json(invoke, question, *BOB, *flags, "--as-of", "2026-07-23T10:40:00Z")
    statements = _statements(doc)
    incident = [s for s in statements if s.startswith(INCIDENT)]
    assert len(incident) == 1, statements
    # Before: "... started 2026-07-23T10:02:38Z (valid 2026-07-23T10:02:38Z to
    # 2026-07-23T10:48:00Z)", nothing said of it being open at 10:40.
    assert (
        "started 2026-07-23T10:02:38Z, open at as_of 2026-07-23T10:40:00Z (no resolution "
        "recorded by as_of) (valid 2026-07-23T10:02:38Z, ends after as_of)"
    ) in incident[0], incident
    # No claim prints the end after as_of (the affected services' intervals neither).
    assert not [s for s in statements if "10:48" in s], statements


def test_incident_resolved_by_as_of_keeps_its_end(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    doc = investigate_json(
        invoke, RESOLVED, *BOB, "--service", "svc:payment-api", "--as-of", "2026-07-23T10:50:00Z"
    )
    incident = [s for s in _statements(doc) if s.startswith(INCIDENT)]
    assert len(incident) == 1, _statements(doc)
    assert "resolved 2026-07-23T10:48:00Z" in incident[0], incident
    assert "(valid 2026-07-23T10:02:38Z to 2026-07-23T10:48:00Z)" in incident[0], incident
    assert "open at as_of" not in incident[0], incident
