"""Response actions asked about after the fact, on the demo data (payments-incident), through
the CLI against a real Neo4j: "did we roll back payment-api?", "when was the rollback?", "was
the rollback successful?", "what fixed it?", "how was it mitigated?", "what was the fix for
PAY-4097?".

Before (h31-actions), "did we roll back payment-api?" was `partial` with "no record of what
the responders did ... cannot be answered" while the postmortem alice may read says "Fix:
rollback at 10:41."; "when was the rollback?" and "was the rollback successful?" were read as
release-verdict questions (`complete`, verdict `likely`), a cause answer nobody asked for;
"what fixed it?" was a name lookup. Now the report's sentence is a `fact` that THE DOCUMENT
STATES it (never a KG-recorded action), and asked whether it worked, the incident's
resolution after it is an `inference` of time order only."""

from __future__ import annotations

import pytest
from conftest import investigate_json

ALICE = ["--subject", "acme/user:alice", "--deadline-seconds", "600"]
AFTER = ["--as-of", "2026-07-24T00:00:00Z"]
PAY = ["--service", "svc:payment-api"]
STATED = (
    "Postmortem: PAY-4097 after payment-api release 2026.07.23.1 "
    "(doc:postmortem-2026-07-23-payments, confidence 0.95, recorded 2026-07-24T15:30:00Z) "
    'states an action taken: "Fix: rollback at 10:41." (its time read as '
    "2026-07-23T10:41:00Z, UTC on the day the report is valid from); the document's words, "
    "not a recorded action: the KG has no response-action record"
)


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


def _gap(doc: dict, kind: str) -> dict | None:  # type: ignore[type-arg]
    found = [m for m in doc["missing_evidence"] if m["evidence_type"] == kind]
    return found[0] if found else None


@pytest.mark.parametrize(
    ("question", "flags"),
    [
        ("did we roll back payment-api?", []),
        ("when was the rollback?", PAY),
        ("what fixed it?", PAY),
        ("how was it mitigated?", PAY),
        ("what was the fix for PAY-4097?", []),
    ],
)
def test_the_postmortem_states_the_action_taken(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, question: str, flags: list[str]
) -> None:
    doc = investigate_json(invoke, question, *ALICE, *AFTER, *flags)
    stated = [c for c in doc["claims"] if c["statement"] == STATED]
    assert len(stated) == 1, _statements(doc)
    assert stated[0]["epistemic_status"] == "fact", stated
    # An action question, not a cause one: no verdict, no correlation read.
    assert doc["verdict"] is None, doc["verdict"]
    assert "deployment_correlation" not in doc["intents"], doc["intents"]
    assert "root_cause" not in doc["intents"], doc["intents"]
    # The KG still has no structured record of the action: said, no longer required.
    gap = _gap(doc, "response_action")
    assert gap is not None and gap["required"] is False, doc["missing_evidence"]
    assert gap["description"].startswith("no structured record of the response action"), gap
    assert doc["status"] == "complete", doc["missing_evidence"]


def test_was_the_rollback_successful_states_a_time_order_only(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = investigate_json(invoke, "was the rollback successful?", *ALICE, *AFTER, *PAY)
    assert doc["verdict"] is None, doc["verdict"]
    assert STATED in _statements(doc), _statements(doc)
    [after] = [c for c in doc["claims"] if "a time order, not a proof" in c["statement"]]
    assert after["epistemic_status"] == "inference", after
    assert after["statement"] == (
        "Payments authorization failures 2026-07-23 (inc:2026-07-23-payments) is recorded "
        "resolved at 2026-07-23T10:48:00Z, 7 min after the action Postmortem: PAY-4097 after "
        'payment-api release 2026.07.23.1 states ("Fix: rollback at 10:41.", '
        "2026-07-23T10:41:00Z); errors seen after it: PAY-4097 last seen "
        "2026-07-23T10:47:52Z: a time order, not a proof that the action worked"
    ), after["statement"]
    assert not any("successful" in s for s in _statements(doc)), _statements(doc)


def test_carol_who_may_not_read_the_postmortem_gets_the_gap_only(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = investigate_json(
        invoke,
        "did we roll back payment-api?",
        "--subject",
        "acme/user:carol",
        "--deadline-seconds",
        "600",
        *AFTER,
    )
    gap = _gap(doc, "response_action")
    assert gap is not None and gap["required"] is True, doc["missing_evidence"]
    assert doc["status"] == "partial"
    text = str(doc)
    assert "10:41" not in text and "postmortem" not in text.lower(), text


@pytest.mark.parametrize(
    "when",
    [
        # Before the rollback: the report's action had not happened yet.
        ["--as-of", "2026-07-23T10:30:00Z"],
        # Known before the postmortem was recorded (2026-07-24T15:30Z): not known then.
        [*AFTER, "--known-at", "2026-07-24T12:00:00Z"],
    ],
)
def test_no_action_is_stated_before_it_or_before_the_report(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, when: list[str]
) -> None:
    doc = investigate_json(invoke, "did we roll back payment-api?", *ALICE, *when)
    assert not any("states an action taken" in s for s in _statements(doc)), _statements(doc)
    assert not any("10:41" in s for s in _statements(doc)), _statements(doc)
    gap = _gap(doc, "response_action")
    assert gap is not None and gap["required"] is True, doc["missing_evidence"]
    assert gap["description"].startswith("no record of what the responders did"), gap
    assert doc["status"] == "partial"
