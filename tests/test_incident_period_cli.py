"""An incident asked about in a period it was not open in ("payments incident yesterday",
asked in December of the July incident), on a real Neo4j with the demo dataset: a required
gap says none of the incidents read was open in the period and names the nearest, so the
answer is `partial`. Asked the day after it, the same words get the incident, `complete`.

Before, the July incident was stated `complete`, with no word that it was not yesterday's.
"""

from __future__ import annotations

import json

import pytest

BOB = ["--subject", "acme/user:bob"]
INCIDENT = "inc:2026-07-23-payments (started 2026-07-23T10:02:38Z, resolved 2026-07-23T10:48:00Z)"


def _ask(invoke, question: str, as_of: str) -> tuple[str, dict]:  # type: ignore[no-untyped-def,type-arg]
    text = invoke("investigate", question, *BOB, "--as-of", as_of)
    assert text.code == 0, text
    doc = invoke("investigate", question, *BOB, "--as-of", as_of, "--json")
    assert doc.code == 0, doc
    return text.out, json.loads(doc.out)


@pytest.mark.parametrize(
    ("question", "as_of", "period"),
    [
        (
            "payments incident yesterday",
            "2026-12-06T12:00:00Z",
            "'yesterday' (2026-12-05T00:00:00Z to 2026-12-05T23:59:59Z)",
        ),
        (
            "pls the payments incident last week?",
            "2026-08-20T09:00:00Z",
            "'last week' (2026-08-10T00:00:00Z to 2026-08-16T23:59:59Z)",
        ),
        (
            "payments incident between 2026-07-20 and 2026-07-22",
            "2026-08-20T09:00:00Z",
            "'between 2026-07-20 and 2026-07-22' (2026-07-20T00:00:00Z to 2026-07-22T23:59:59Z)",
        ),
    ],
)
def test_an_incident_outside_the_period_asked_is_said_to_be(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, question: str, as_of: str, period: str
) -> None:
    out, doc = _ask(invoke, question, as_of)
    assert doc["status"] == "partial", doc["missing_evidence"]
    gaps = [m for m in doc["missing_evidence"] if m["evidence_type"] == "incident_report"]
    assert [(m["required"], m["description"]) for m in gaps] == [
        (
            True,
            f"none of the incidents read was open in {period}: the nearest is {INCIDENT}, "
            "stated above as what was found, not as the incident asked about",
        )
    ]
    assert f"  incident_report (required): none of the incidents read was open in {period}" in out


def test_the_incident_in_the_period_asked_is_complete(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    _, doc = _ask(invoke, "payments incident yesterday", "2026-07-24T12:00:00Z")
    assert doc["status"] == "complete", doc["missing_evidence"]
    assert any(c["statement"].startswith("Incident inc:2026-07-23-payments") for c in doc["claims"])
    assert not [m for m in doc["missing_evidence"] if m["evidence_type"] == "incident_report"]
