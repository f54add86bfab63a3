""" "Which incident affected X?" when X had none (or X is no name the subject may read): the
answer is never `complete` with no claim and "Missing evidence none". A required gap says no
incident of the place the question names is recorded that the subject may read by as_of, or
that what it names matched nothing. The plural ("which incidents hit ledger?") reads the same.
On the demo dataset (svc:ledger has no incident), a real Neo4j, through the CLI.

Before: the payments incident report, found by the word "incident", made the rubric's
`incident_report` supported: `complete`, no claim, no gap; the plural was read as an entity
lookup whose words 'incidents hit' it could not read, and the gap said no entity was found.
"""

from __future__ import annotations

import pytest
from conftest import investigate_json

BOB = ["--subject", "acme/user:bob", "--as-of", "2026-07-23T10:10:00Z", "--deadline-seconds", "600"]


def _gap(doc: dict) -> str:  # type: ignore[type-arg]
    gaps = [m for m in doc["missing_evidence"] if m["evidence_type"] == "incident_report"]
    assert len(gaps) == 1 and gaps[0]["required"], doc["missing_evidence"]
    return str(gaps[0]["description"])


@pytest.mark.parametrize(
    "question", ["Which incident affected ledger?", "Which incidents hit ledger?"]
)
def test_a_service_with_no_incident_is_partial_with_the_gap(
    demo_graph, cli_env, invoke, question
) -> None:  # type: ignore[no-untyped-def]
    doc = investigate_json(invoke, question, *BOB)
    assert doc["status"] == "partial"
    assert doc["stop_reason"] == "no_progress"
    assert doc["claims"] == []
    assert "incident_lookup" in doc["intents"]
    gap = _gap(doc)
    assert gap.startswith(
        "no incident of svc:ledger that the subject may read is recorded by as_of"
    )
    assert not [m for m in doc["missing_evidence"] if m["evidence_type"] in ("entity", "question")]
    report = invoke("investigate", question, *BOB)
    assert report.code == 0
    assert "Status     partial" in report.out
    assert "Missing evidence\n  none" not in report.out


def test_a_service_name_matching_nothing_is_said(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = investigate_json(invoke, "Which incident affected the wombat service?", *BOB)
    assert doc["status"] == "partial"
    gap = _gap(doc)
    assert "'wombat' matched no service the subject may read" in gap
    # A service the other words found by text is not the place asked about.
    assert "svc:ledger" not in gap
    person = investigate_json(invoke, "Which incident affected Hannah Fischer?", *BOB)
    assert person["status"] == "partial"
    assert "names no service, alert or error code the subject may read" in _gap(person)


def test_a_service_with_an_incident_is_still_complete(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = investigate_json(invoke, "Which incident affected checkout?", *BOB)
    assert doc["status"] == "complete", doc["missing_evidence"]
    assert any(c["statement"].startswith("Incident inc:2026-07-23-payments") for c in doc["claims"])
