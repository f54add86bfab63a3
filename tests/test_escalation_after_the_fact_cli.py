"""Whom we should have escalated to, asked after the fact, on the demo data through the CLI
against a real Neo4j (session 33, the thirty-second session's "escalate to back then").

Before: "who should we have escalated PAY-4097 to?" asked on 07-26 was `complete` with the
incident and its first error only (no owner, no runbook step), and "who did the runbook say to
escalate to back then?" named today's owner (payments-platform, since 07-24) without the
owner then or v3's escalation step: the question's past tense was not read as a question of
whom to reach, so an investigator writing the postmortem read nothing of "Escalate to
#payments-core". Now both name the runbook in force at the incident's start with its
escalation step and the owner then, beside the owner at as_of.
"""

from __future__ import annotations

import pytest
from conftest import investigate_json

BOB = ["--subject", "acme/user:bob", "--deadline-seconds", "600"]
AFTER = ["--as-of", "2026-07-26T12:00:00Z"]
V3_STEP = ': its escalation step, "Escalate to #payments-core."'
OWNER_THEN = (
    "team:payments-core OWNS svc:payment-api (valid 2025-01-01T00:00:00Z to 2026-07-24T00:00:00Z)"
)


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


@pytest.mark.parametrize(
    "question",
    [
        "who should we have escalated PAY-4097 to?",
        "who did the runbook say to escalate to back then?",
        "who were we supposed to page for PAY-4097?",
    ],
)
def test_whom_we_should_have_escalated_to_is_the_runbook_and_owner_then(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, question: str
) -> None:
    doc = investigate_json(invoke, question, *BOB, *AFTER)
    statements = _statements(doc)
    assert any(
        "runbook:payment-recovery@v3" in s and "2026-07-23T10:02:38Z" in s and s.endswith(V3_STEP)
        for s in statements
    ), statements
    assert any(s.endswith(OWNER_THEN) and "2026-07-23T10:02:38Z" in s for s in statements), (
        statements
    )
    # Today's owner is said as today's, never as the answer for then.
    assert not any(
        "payments-platform OWNS svc:payment-api" in s and "2026-07-23" in s.split(":", 1)[0]
        for s in statements
    ), statements
