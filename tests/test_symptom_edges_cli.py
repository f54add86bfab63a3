"""Edges of on-call symptoms and incident questions on the demo data (payments-incident),
through the CLI against a real Neo4j (e26-qa findings 3, 4, 8).

Before: a deadline-cut "5xx on payment-api" said the runbook search "found none: no runbook
fits" though the reads it skipped hold v3; "5xx on payment-api?" said the words 'xx' ask
something unread; "was the runbook followed
for the payments incident?" did not cite the postmortem's rollback."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import neo4j
from conftest import investigate_json

from investigator.context_graph import RunRecorder
from investigator.investigation import InvestigationRequest, investigate

ALICE = ["--subject", "acme/user:alice", "--deadline-seconds", "600"]
AT_10_05 = ["--as-of", "2026-07-23T10:05:00Z"]


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


def _runbook_gaps(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [m["description"] for m in doc["missing_evidence"] if m["evidence_type"] == "runbook"]


def test_a_deadline_cut_symptom_says_the_search_was_cut_not_that_none_fits(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    def ask(**kw: object):  # type: ignore[no-untyped-def]
        request = InvestigationRequest(
            question="5xx on payment-api",
            subject_id="acme/user:alice",
            as_of=datetime(2026, 7, 23, 10, 5, tzinfo=UTC),
            deadline_s=600,
            **kw,  # type: ignore[arg-type]
        )
        return investigate(request, driver=demo_graph, recorder=RunRecorder(demo_graph))

    full = ask()
    assert "runbook:payment-recovery@v3" in {ev.element_id for ev in full.evidence}
    reads = [tc.template_id for tc in full.tool_calls]
    # Cut before the service's runbooks are read (as a 1 s deadline did on a busy server).
    cut = ask(deadline_after_calls=reads.index("runbooks_for"))
    assert (cut.stop_reason, cut.search_cut_short) == ("deadline", True)
    replay = invoke("replay", cut.run_id, "--subject", "acme/user:alice", "--json")
    assert replay.code == 0 and json.loads(replay.out)["verified"] is True, replay
    # What the user reads: the run's gaps as the CLI's trace shows them are the run's own.
    (gap,) = [m.description for m in cut.missing_evidence if m.evidence_type == "runbook"]
    # Before: "the runbook search for '5xx on payment-api' found none: no runbook fits: ...".
    assert "no runbook fits" not in gap, gap
    assert gap.startswith("unknown, not absent: the run stopped (deadline)"), gap


def test_a_trailing_question_mark_keeps_a_placed_symptom(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = investigate_json(invoke, "5xx on payment-api?", *ALICE, *AT_10_05)
    # Before: partial, "the question's words 'xx' ask something it does not read".
    assert not [m for m in doc["missing_evidence"] if m["evidence_type"] == "question"], doc[
        "missing_evidence"
    ]
    assert any(s.startswith("Runbook Payment recovery runbook v3") for s in _statements(doc))
    assert doc["status"] == "complete", doc["missing_evidence"]


def test_a_word_with_digits_is_one_unread_word(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = investigate_json(invoke, "why 5xx for payment-api?", *ALICE, *AT_10_05)
    gaps = [m["description"] for m in doc["missing_evidence"] if m["evidence_type"] == "question"]
    assert gaps and "'xx'" not in gaps[0] and "5xx" in gaps[0], gaps


def test_a_symptom_on_a_one_word_service_gets_no_runbook_by_the_place_alone(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # checkout's linked runbook is KubePodCrashLooping's: nothing in "500s on checkout" asks
    # for it, so it is never claimed as the runbook of those errors.
    for question in ("500s on checkout",):
        doc = investigate_json(invoke, question, *ALICE, *AT_10_05)
        cited = [c["statement"] for c in doc["claims"] if "pod-crashloop" in c["statement"]]
        assert not cited, (question, cited)


def test_was_the_runbook_followed_for_an_incident_in_words_cites_the_rollback(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = investigate_json(
        invoke,
        "was the runbook followed for the payments incident?",
        *ALICE,
        "--as-of",
        "2026-07-24T12:00:00Z",
    )
    # Before: cited only when the question named PAY-4097.
    assert any('records a rollback: "Fix: rollback at 10:41."' in s for s in _statements(doc)), (
        _statements(doc)
    )
