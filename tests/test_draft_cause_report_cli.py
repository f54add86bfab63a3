"""What an answer says of a change that a report recording no mechanism names as the cause
(real Neo4j, the demo dataset): the draft postmortem "Draft: the risk rule publication
RR-2026-07-23a caused PAY-4097" (confidence 0.3, `incident_report` only, recorded 07-23
11:00, retracted 07-24 09:00). Asked as known before its retraction, the answer says what it
recorded, its standing and the mechanism record that disagrees, never "no mechanism evidence
about it" (e29-qa finding 11); asked after, the retracted draft stays out. And a run whose
known_at is before as_of says no error "had been recorded by known_at", not that none "is
known at as_of" (e29-qa m1)."""

from __future__ import annotations

import json

import neo4j

BOB = ["--subject", "acme/user:bob", "--deadline-seconds", "300"]
AS_OF = ["--as-of", "2026-07-23T10:03:00Z"]
BEFORE_RETRACTION = ["--known-at", "2026-07-24T08:00:00Z"]
AFTER_RETRACTION = ["--known-at", "2026-07-24T10:00:00Z"]
RISK_RULES = "Was the risk rule change RR-2026-07-23a related to the PAY-4097 errors?"
DRAFT = "doc:postmortem-draft-2026-07-23-payments"
RULES_ID = "change:risk-rules-RR-2026-07-23a"
SEED = (
    "Was the 10:02 release of payment-api related to the PAY-4097 errors? Who owned "
    "payment-api at that moment? Which runbook version applied?"
)
REPORTED = (
    "  [hypothesis] Change risk rule publication RR-2026-07-23a "
    "(change:risk-rules-RR-2026-07-23a) may have caused PAY-4097 (named as the cause by DRAFT "
    "postmortem: risk rules broke payments (a draft, confidence 0.3), which records no "
    "mechanism)"
)
DRAFT_FACT = (
    "  [fact      ] DRAFT postmortem: risk rules broke payments "
    "(doc:postmortem-draft-2026-07-23-payments, a draft, confidence 0.3, recorded "
    "2026-07-23T11:00:00Z) names change risk rule publication RR-2026-07-23a "
    '(change:risk-rules-RR-2026-07-23a) as the cause of PAY-4097: "Draft: the risk rule '
    'publication RR-2026-07-23a caused PAY-4097 on payment-api."; it records no mechanism; '
    "the records read disagree: Incident report: payments authorization failures "
    "(2026-07-23) (mechanism evidence, confidence 0.9) names release "
    "deploy:release-2026.07.23.1 as the cause"
)


def test_the_draft_is_said_as_recorded_before_its_retraction(
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:  # type: ignore[no-untyped-def]
    report = invoke("investigate", RISK_RULES, *BOB, *AS_OF, *BEFORE_RETRACTION)
    assert report.code == 0, report
    lines = report.out.splitlines()
    assert REPORTED in lines, report.out
    assert DRAFT_FACT in lines, report.out
    # Before, beside the admitted draft: "... may have caused PAY-4097 (no mechanism
    # evidence about it)".
    assert "no mechanism evidence about it" not in report.out, report.out
    # A report is no mechanism: the verdict is what it was (the release's mechanism record
    # and the time correlation leave the risk rules `uncertain`).
    assert "verdict: uncertain" in lines[2], report.out


def test_the_retracted_draft_stays_out_after_its_retraction(
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:  # type: ignore[no-untyped-def]
    report = invoke("investigate", RISK_RULES, *BOB, *AS_OF, *AFTER_RETRACTION, "--json")
    assert report.code == 0, report
    doc = json.loads(report.out)
    assert DRAFT not in {ev["element_id"] for ev in doc["evidence"]}
    statements = [c["statement"] for c in doc["claims"]]
    assert not any("DRAFT postmortem" in s for s in statements), statements
    assert (
        "Change risk rule publication RR-2026-07-23a (change:risk-rules-RR-2026-07-23a) may "
        "have caused PAY-4097 (no mechanism evidence about it)"
    ) in statements, statements


def test_a_candidate_cause_named_by_the_draft(demo_graph: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    question = "What caused the PAY-4097 errors?"
    report = invoke("investigate", question, *BOB, *AS_OF, *BEFORE_RETRACTION, "--json")
    assert report.code == 0, report
    doc = json.loads(report.out)
    ids = {ev["element_id"]: ev["evidence_id"] for ev in doc["evidence"]}
    draft = ids[DRAFT]
    rules = next(c for c in doc["confounders"] if c["element_id"] == RULES_ID)
    assert rules["assessment"] == "reported_as_cause", rules
    assert rules["reported_by"] == [draft], rules
    assert rules["named_by"] == [] and rules["ruled_out_by"] == [], rules
    text = invoke("investigate", question, *BOB, *AS_OF, *BEFORE_RETRACTION)
    lines = text.out.splitlines()
    assert (
        f"  change:risk-rules-RR-2026-07-23a at 2026-07-23T10:02:21Z ({ids[RULES_ID]}): named "
        f"as the cause by {draft}, a report that records no mechanism"
    ) in lines, text.out
    assert (
        "  [hypothesis] Candidate cause: change risk rule publication RR-2026-07-23a "
        "(change:risk-rules-RR-2026-07-23a) (happened at 2026-07-23T10:02:21Z, 17 s before "
        "PAY-4097 was first seen); named as the cause by DRAFT postmortem: risk rules broke "
        "payments (a draft, confidence 0.3), which records no mechanism"
    ) in lines, text.out
    assert DRAFT_FACT in lines, text.out
    assert "no mechanism evidence about it" not in text.out, text.out


def test_no_error_recorded_by_an_early_known_at(demo_graph: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # The first PAY-4097 error happened at 10:02:38 and was recorded at 10:02:45: as known
    # at 10:02:40 none is recorded, which is not "none known at as_of 10:03:00".
    report = invoke("investigate", SEED, "--service", "svc:payment-api", *BOB, *AS_OF,
                    "--known-at", "2026-07-23T10:02:40Z")  # fmt: skip
    assert report.code == 0, report
    assert (
        "  [inference ] No first-seen PAY-4097 error had been recorded by known_at "
        "2026-07-23T10:02:40Z (as_of 2026-07-23T10:03:00Z, 60 s after release "
        "deploy:release-2026.07.23.1 finished): no time correlation can be drawn from what "
        "was recorded by then"
    ) in report.out.splitlines(), report.out
    assert "is known at as_of" not in report.out, report.out


def test_the_seed_reads_the_draft_of_its_incident(
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:  # type: ignore[no-untyped-def]
    # The draft is linked to the incident alone (no text hit of the seed brings it): a
    # correlation question reads its incident's documents, so the risk rules, a competing
    # cause, are said to be named by it (before, the seed listed no draft and said "no
    # mechanism evidence about it"). The release's verdict is what it was.
    report = invoke("investigate", SEED, "--service", "svc:payment-api", *BOB, *AS_OF,
                    *BEFORE_RETRACTION)  # fmt: skip
    assert report.code == 0, report
    lines = report.out.splitlines()
    rules = [line for line in lines if line.startswith(f"  {RULES_ID} at 2026-07-23T10:02:21Z")]
    assert len(rules) == 1, report.out
    assert rules[0].endswith(", a report that records no mechanism"), rules
    assert "named as the cause by ev:" in rules[0], rules
    assert DRAFT_FACT in lines, report.out
    assert "no mechanism evidence about it" not in report.out, report.out
    assert "verdict: likely" in lines[2], report.out
