"""`complete` answers that did not answer (e32-qa M, K, L, N, G), on the demo data through the CLI
against a real Neo4j.

Before (h32-complete): "are there still errors?", "did the errors stop?", "what errors?" at
10:30 were `complete` with NO claim and "Missing evidence: none" (read as "no"); "is PAY-4097
still happening?" gave only its first sighting, never that the record runs past as_of (nor,
asked after, its last sighting 10:47:52); "should we roll back payment-api?" asked after the
incident was resolved was `complete`, verdict `likely`, the rollback step first and nothing
about the resolution at 10:48, the errors' end at 10:47:52 or the postmortem's rollback.
Now a run with no claim is never `complete` (a required gap says nothing read answers it);
the errors' first and last sighting by as_of answer the error-state questions (a sighting
after as_of is never stated); a rollback asked once the records say it is over leads with
that, gives no verdict on rolling back, and a required gap says whether the release is still
deployed is not recorded. "Who do I call / escalate to about PAY-4097?" (was: the first
sighting alone) names the owner at as_of and the runbook's escalation step; "did the 10:02
release really affect the payment service?" (was: the release's finish time) and "did the
risk rule change cause PAY-4097?" (was: the first sighting, the change rejected) name every
candidate with the postmortem's ruling."""

from __future__ import annotations

import pytest
from conftest import investigate_json

BOB = ["--subject", "acme/user:bob", "--deadline-seconds", "600"]
CAROL = ["--subject", "acme/user:carol", "--deadline-seconds", "600"]
DURING = ["--as-of", "2026-07-23T10:30:00Z"]
AFTER = ["--as-of", "2026-07-26T12:00:00Z"]
PAY4097 = "PAY-4097 (svc:payment-api EMITTED err:PAY-4097, first seen 2026-07-23T10:02:38Z)"
STILL = (
    f"{PAY4097} still emitted at as_of 2026-07-23T10:30:00Z: the record's sightings run past "
    "as_of (its last sighting is after as_of)"
)
STOPPED = (
    f"{PAY4097} last seen at 2026-07-23T10:47:52Z: no later sighting is recorded by as_of "
    "2026-07-26T12:00:00Z (the record ends 2026-07-23T10:48:00Z)"
)


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


def _required(doc: dict) -> list[dict]:  # type: ignore[type-arg]
    return [m for m in doc["missing_evidence"] if m["required"]]


def test_a_run_with_no_claim_is_never_complete(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = investigate_json(invoke, "what errors?", *BOB, *DURING)
    assert doc["claims"] == [], _statements(doc)
    assert doc["status"] == "partial", doc["missing_evidence"]
    assert doc["stop_reason"] == "no_progress", doc["stop_reason"]
    [gap] = [m for m in _required(doc) if m["description"].startswith("no claim could be drawn")]
    assert gap["description"].startswith(
        "no claim could be drawn: no record the run read states what the question asks "
        "(incident_lookup) by as_of 2026-07-23T10:30:00Z as known at "
    ), gap
    assert gap["description"].endswith(
        "; the records listed under Evidence were read and answer none of it"
    ), gap
    # The CLI says it: never "Missing evidence: none" beside no claim.
    out = invoke("investigate", "what errors?", *BOB, *DURING).out
    assert "Status     partial" in out, out
    assert "(required): no claim could be drawn" in out, out


@pytest.mark.parametrize(
    "question",
    ["are there still errors?", "did the errors stop?", "is PAY-4097 still happening?"],
)
def test_errors_still_emitted_during_the_incident(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, question: str
) -> None:
    doc = investigate_json(invoke, question, *BOB, *DURING)
    assert STILL in _statements(doc), _statements(doc)
    assert "error_timeline" in doc["intents"], doc["intents"]
    # The last sighting (10:47:52) was not known at 10:30: never stated.
    assert not any("10:47:52" in s for s in _statements(doc)), _statements(doc)
    assert doc["status"] == "complete", doc["missing_evidence"]


@pytest.mark.parametrize(
    "question",
    ["when did the errors stop?", "did the errors stop?", "when did PAY-4097 stop?"],
)
def test_errors_last_seen_after_the_incident(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, question: str
) -> None:
    doc = investigate_json(invoke, question, *BOB, *AFTER)
    assert STOPPED in _statements(doc), _statements(doc)
    assert not any("still emitted" in s for s in _statements(doc)), _statements(doc)


def test_errors_asked_at_their_last_sighting_and_before_the_first(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    at_last = investigate_json(
        invoke, "is PAY-4097 still happening?", *BOB, "--as-of", "2026-07-23T10:47:52Z"
    )
    assert (
        f"{PAY4097} last seen at 2026-07-23T10:47:52Z: no later sighting is recorded by as_of "
        "2026-07-23T10:47:52Z"
    ) in _statements(at_last), _statements(at_last)
    before = investigate_json(
        invoke, "is PAY-4097 still happening?", *BOB, "--as-of", "2026-07-23T10:02:00Z"
    )
    # Not seen yet: no state claimed, and no `complete` with nothing said.
    assert not any(PAY4097 in s for s in _statements(before)), _statements(before)
    assert before["status"] == "partial", before["missing_evidence"]
    assert _required(before), before["missing_evidence"]


def test_carol_reads_the_error_record_not_the_incident(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    named = investigate_json(invoke, "is PAY-4097 still happening?", *CAROL, *AFTER)
    assert STOPPED in _statements(named), _statements(named)
    # No incident she may read places "the errors": a required gap, never `complete`.
    unnamed = investigate_json(invoke, "are there still errors?", *CAROL, *AFTER)
    assert unnamed["status"] == "partial", unnamed["missing_evidence"]
    assert not any("inc:2026-07-23-payments" in s for s in _statements(unnamed))


ROLLBACK = "should we roll back payment-api?"


def test_should_we_roll_back_during_the_incident_is_unchanged(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = investigate_json(invoke, ROLLBACK, *BOB, *DURING)
    assert doc["verdict"] == "likely", doc["verdict"]
    assert not any(s.startswith("By as_of") for s in _statements(doc)), _statements(doc)
    assert not any(m["evidence_type"] == "deployment_state" for m in doc["missing_evidence"])


@pytest.mark.parametrize(
    "as_of", ["2026-07-23T11:30:00Z", "2026-07-26T12:00:00Z"], ids=["same-day", "days-later"]
)
def test_should_we_roll_back_after_resolution_says_it_is_over(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, as_of: str
) -> None:
    doc = investigate_json(invoke, ROLLBACK, *BOB, "--as-of", as_of)
    lead = doc["claims"][0]["statement"]
    assert lead == (
        f"By as_of {as_of}: Payments authorization failures 2026-07-23 "
        "(inc:2026-07-23-payments) is recorded resolved at 2026-07-23T10:48:00Z; PAY-4097 was "
        "last seen at 2026-07-23T10:47:52Z (svc:payment-api EMITTED err:PAY-4097); Postmortem: "
        'PAY-4097 after payment-api release 2026.07.23.1 states "Fix: rollback at 10:41." (its '
        "words, its time read as 2026-07-23T10:41:00Z). The incident is over as recorded: the "
        "runbook's rollback step below is what to do during an open incident, and rolling back "
        "now would act on whatever is deployed today; no verdict on rolling back is given"
    ), lead
    assert doc["verdict"] is None, doc["verdict"]
    assert doc["status"] == "partial", doc["missing_evidence"]
    [gap] = [m for m in doc["missing_evidence"] if m["evidence_type"] == "deployment_state"]
    assert gap["required"] is True, gap
    assert gap["description"].startswith(
        f"whether deploy:release-2026.07.23.1 is still deployed at as_of {as_of}"
    ), gap


def test_carol_should_we_roll_back_reads_the_errors_end(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = investigate_json(invoke, ROLLBACK, *CAROL, *AFTER)
    lead = doc["claims"][0]["statement"]
    assert lead.startswith(
        "By as_of 2026-07-26T12:00:00Z: PAY-4097 was last seen at 2026-07-23T10:47:52Z "
        "(svc:payment-api EMITTED err:PAY-4097). The errors stopped as recorded"
    ), lead
    # She may read neither the incident nor the postmortem: neither is quoted.
    assert "inc:2026-07-23-payments" not in lead and "Postmortem" not in lead, lead
    assert doc["verdict"] is None and doc["status"] == "partial", doc["missing_evidence"]


V3_ESCALATION = (
    "Runbook Payment recovery runbook v3 (runbook:payment-recovery@v3) is the version in force "
    "at 2026-07-23T10:30:00Z (valid 2026-07-01T00:00:00Z to 2026-07-25T00:00:00Z) "
    '[wiki/runbooks/payment-recovery.md@v3#recovery]: its escalation step, "Escalate to '
    '#payments-core."'
)


@pytest.mark.parametrize(
    ("question", "subject"),
    [
        ("who do I call about PAY-4097", BOB),
        ("who should I escalate PAY-4097 to?", BOB),
        ("who should I escalate PAY-4097 to?", CAROL),
    ],
)
def test_whom_to_call_names_the_owner_and_the_escalation_step(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, question: str, subject: list[str]
) -> None:
    # Before: `complete` with only "PAY-4097 first seen at 10:02:38", no owner at all.
    doc = investigate_json(invoke, question, *subject, *DURING)
    assert V3_ESCALATION in _statements(doc), _statements(doc)
    assert (
        "At 2026-07-23T10:30:00Z: team:payments-core OWNS svc:payment-api (valid "
        "2025-01-01T00:00:00Z to 2026-07-24T00:00:00Z)"
    ) in _statements(doc), _statements(doc)
    assert doc["status"] == "complete", doc["missing_evidence"]


def test_whom_to_call_after_the_handover(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = investigate_json(invoke, "who do I call about PAY-4097", *BOB, *AFTER)
    statements = _statements(doc)
    assert any(
        s.startswith("At 2026-07-26T12:00:00Z: team:payments-platform OWNS svc:payment-api")
        for s in statements
    ), statements
    assert any(
        "runbook:payment-recovery@v4" in s
        and s.endswith(
            ': its escalation step, "2. Roll back with `deployctl rollback payment-api` and '
            'page #payments-platform (owner since 2026-07-24)."'
        )
        for s in statements
    ), statements


@pytest.mark.parametrize(
    "question",
    [
        "10:02 的发布是否真的影响了支付服务？",
        "did the 10:02 release really affect the payment service?",
    ],
)
def test_did_the_release_affect_it_weighs_every_candidate(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, question: str
) -> None:
    # The seed question. Before: `complete` with one fact, the release's finish time.
    doc = investigate_json(invoke, question, *BOB, *DURING)
    assert "deployment_correlation" in doc["intents"], doc["intents"]
    statements = _statements(doc)
    assert (
        "PAY-4097 was first seen 38 s after release deploy:release-2026.07.23.1 finished "
        "(2026-07-23T10:02:00Z -> 2026-07-23T10:02:38Z): a time correlation, not by itself a "
        "root cause"
    ) in statements, statements
    # The other candidate named beside it, and the postmortem's ruling in its words.
    assert any(
        s.startswith("Another change, risk rule publication RR-2026-07-23a") for s in statements
    ), statements
    assert any(
        "rules out change risk rule publication RR-2026-07-23a" in s
        and '"The risk rule publication RR-2026-07-23a at 10:02:21Z was investigated and ruled '
        'out: risk-engine latency stayed at baseline."'
        in s
        for s in statements
    ), statements
    assert doc["verdict"] == "likely", doc["verdict"]


def test_did_the_risk_rule_change_cause_it_names_every_candidate(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # The confounder question. Before: `complete`, one first-seen fact, the change rejected
    # `low_relevance`, "Missing evidence: none".
    doc = investigate_json(invoke, "did the risk rule change cause PAY-4097?", *BOB, *DURING)
    assert "root_cause" in doc["intents"], doc["intents"]
    candidates = {c["element_id"]: c for c in doc["confounders"]}
    assert set(candidates) == {
        "deploy:release-2026.07.23.1",
        "change:risk-rules-RR-2026-07-23a",
    }, candidates
    statements = _statements(doc)
    assert any(
        s.startswith(
            "Postmortem: PAY-4097 after payment-api release 2026.07.23.1 rules out change risk "
            'rule publication RR-2026-07-23a (change:risk-rules-RR-2026-07-23a): "The risk rule '
            "publication RR-2026-07-23a at 10:02:21Z was investigated and ruled out"
        )
        for s in statements
    ), statements
    assert any(
        s.startswith("Candidate cause: release deploy:release-2026.07.23.1 (finished at ")
        for s in statements
    ), statements
    assert "change:risk-rules-RR-2026-07-23a" not in {r["element_id"] for r in doc["rejected"]}, (
        doc["rejected"]
    )
