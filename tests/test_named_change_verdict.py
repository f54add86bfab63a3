"""The verdict is about the change the question asks about (demo dataset, real Neo4j).

What a user notices: "what caused X" is answered with the mechanism; a question that names a
release or a change gets a verdict about that one (the closer changes reported as competing
causes, never silently put in its place); a named release nobody knows of gets no verdict
about another release; and before the first error the release is stated with the honest
"no error yet, nothing to correlate".
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import neo4j
import pytest

from cypher_templates.executor import TemplateExecutor
from investigator.claims import CauseAssessment, EpistemicStatus, Verdict, derive_claims
from investigator.evidence import Evidence, evidence_id_for, sha256_text
from investigator.investigation import (
    InvestigationRequest,
    InvestigationResult,
    RunStatus,
    investigate,
)
from investigator.planner import CompetingCauseChecks, detect_intents
from investigator.rubric import Intent

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO / "datasets" / "payments-incident"
RELEASE = "deploy:release-2026.07.23.1"
OLD_RELEASE = "deploy:release-2026.07.20.2"
RISK_RULES = "change:risk-rules-RR-2026-07-23a"
# Weeks after the incident: the named release lies outside every lookback window of as_of.
LATER = "2026-09-01T00:00:00Z"


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.fixture(scope="module")
def demo(demo_graph: neo4j.Driver) -> TemplateExecutor:
    """The demo dataset in an otherwise empty graph, and one executor for the module."""
    return TemplateExecutor(demo_graph)


def ask(
    driver: neo4j.Driver,
    executor: TemplateExecutor,
    question: str,
    *,
    subject: str = "acme/user:bob",
    service: str | None = "svc:payment-api",
    as_of: str = LATER,
) -> InvestigationResult:
    request = InvestigationRequest.model_validate(
        {
            "question": question,
            "subject_id": subject,
            "service_id": service,
            "as_of": at(as_of),
            "known_at": at(LATER),
        }
    )
    return investigate(request, driver=driver, executor=executor)


def statements(result: InvestigationResult, status: EpistemicStatus | None = None) -> list[str]:
    return [c.statement for c in result.claims if status is None or c.epistemic_status is status]


@pytest.mark.parametrize(
    "question",
    [
        "what caused PAY-4097",
        "What is causing the PAY-4097 errors?",
        "cause of PAY-4097?",
        "What triggered PAY-4097?",
        "What led to the PAY-4097 errors?",
        "reason for the PAY-4097 errors",
        "是什么导致了 PAY-4097？",
    ],
)
def test_everyday_cause_phrasings_are_root_cause_questions(question: str) -> None:
    assert Intent.ROOT_CAUSE in detect_intents(question)


def test_other_questions_keep_their_intents() -> None:
    assert Intent.ROOT_CAUSE in detect_intents("Why did PAY-4097 happen?")
    # A named cause to check stays a correlation question; "trigger" of an alert is a lookup.
    assert detect_intents("Was PAY-4097 caused by the release?") == [Intent.DEPLOYMENT_CORRELATION]
    assert detect_intents("Which incident did PaymentApiHighErrorRate trigger?") == [
        Intent.INCIDENT_LOOKUP
    ]


def test_what_caused_is_answered_with_the_mechanism(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    result = ask(driver, demo, "what caused PAY-4097", service=None)
    assert Intent.ROOT_CAUSE.value in result.intents
    mechanisms = [c for c in result.claims if c.intent == Intent.ROOT_CAUSE.value]
    assert mechanisms, statements(result)
    assert any("2026.07.23.1" in c.statement for c in mechanisms)
    assert all(c.epistemic_status is EpistemicStatus.INFERENCE for c in mechanisms)


@pytest.mark.parametrize("question", ["What caused PAY-4097?", "Why did PAY-4097 happen?"])
def test_an_open_cause_question_lists_every_competing_cause(
    driver: neo4j.Driver, demo: TemplateExecutor, question: str
) -> None:
    # No change is named, so none is picked by time: both changes before the first error
    # (the release at 10:02:00, the risk rules at 10:02:21) are candidates, each with what the
    # mechanism evidence says of it. No correlation verdict is made up.
    result = ask(driver, demo, question, service=None)
    assert result.verdict is None
    assert sorted(c.element_id for c in result.confounders) == sorted([RELEASE, RISK_RULES])
    said = [c.statement for c in result.claims if c.intent == Intent.ROOT_CAUSE.value]
    candidates = [s for s in said if s.startswith("Candidate cause:")]
    assert len(candidates) == 1, said  # the risk rules are ruled out, not a candidate left
    assert f"release {RELEASE}" in candidates[0]
    assert "38 s before PAY-4097 was first seen" in candidates[0]
    assert any("rules out change" in s and RISK_RULES in s for s in said), said
    assert not [m for m in result.missing_evidence if m.evidence_type == "change_event"]
    # Each candidate says, in the JSON too, what the postmortem says of it.
    by_id = {c.element_id: c for c in result.confounders}
    postmortem = {ev.evidence_id for ev in result.evidence if "mechanism" in ev.evidence_types}
    assert by_id[RISK_RULES].assessment is CauseAssessment.RULED_OUT
    assert by_id[RISK_RULES].ruled_out_by and set(by_id[RISK_RULES].ruled_out_by) <= postmortem
    assert by_id[RELEASE].assessment is CauseAssessment.NAMED_AS_CAUSE
    assert by_id[RELEASE].named_by and not by_id[RELEASE].ruled_out_by


def test_an_open_cause_question_with_no_change_before_the_error_says_so(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    # PAY-1002 was first seen in 2025, with no release or change before it: once every
    # check has run, that absence is stated (a fact bound to the error's record), not
    # left as silence.
    result = ask(driver, demo, "What caused PAY-1002?", service=None)
    assert result.verdict is None and result.confounders == []
    facts = statements(result, EpistemicStatus.FACT)
    assert (
        "No release is recorded in the 24 h, and no other change in the 30 min, before "
        "PAY-1002 was first seen at 2025-03-01T08:11:00Z"
    ) in facts, statements(result)
    assert not [m for m in result.missing_evidence if m.evidence_type == "change_event"]


def test_an_open_cause_question_without_mechanism_access_keeps_every_candidate_open(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    # carol may not read incident material: no mechanism evidence reaches her, so each change
    # stays a hypothesis, and nothing she cannot read is cited.
    result = ask(driver, demo, "What caused PAY-4097?", subject="acme/user:carol", service=None)
    hypotheses = statements(result, EpistemicStatus.HYPOTHESIS)
    for change in (RELEASE, RISK_RULES):
        assert any(change in s and "no mechanism evidence about it" in s for s in hypotheses)
    assert {c.element_id: c.assessment for c in result.confounders} == {
        RELEASE: CauseAssessment.NO_MECHANISM_EVIDENCE,
        RISK_RULES: CauseAssessment.NO_MECHANISM_EVIDENCE,
    }
    visible = {ev.evidence_id for ev in result.evidence}
    assert all(set(c.evidence_ids) <= visible for c in result.claims)
    assert not any(ev.element_id.startswith("trace:") for ev in result.evidence)


def test_a_named_older_release_is_the_subject_of_the_verdict(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    result = ask(driver, demo, "Was release-2026.07.20.2 related to the PAY-4097 errors?")
    # The named release is fetched although it lies days before the first error.
    assert any(ev.element_id == OLD_RELEASE for ev in result.evidence)
    facts = statements(result, EpistemicStatus.FACT)
    assert any(OLD_RELEASE in s and "finished at 2026-07-20T14:00:00Z" in s for s in facts)
    outside = [s for s in statements(result) if "outside the 30 min correlation window" in s]
    assert len(outside) == 1 and OLD_RELEASE in outside[0] and "2 d 20 h" in outside[0]
    # Days before the errors, with closer changes in the window: no stronger than uncertain,
    # and the verdict is not about another release.
    assert result.verdict is Verdict.UNCERTAIN
    assert not any(s.startswith(f"Release {RELEASE} caused") for s in statements(result))
    assert sorted(c.element_id for c in result.confounders) == sorted([RELEASE, RISK_RULES])
    assert any(
        f"points to release {RELEASE}" in s for s in statements(result, EpistemicStatus.INFERENCE)
    )


def test_a_named_risk_rule_change_is_judged_by_the_evidence_about_it(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    question = "Was the risk rule change RR-2026-07-23a related to the PAY-4097 errors?"
    result = ask(driver, demo, question)
    said = statements(result)
    assert any("17 s after change" in s and RISK_RULES in s for s in said)
    # The postmortem rules the change out; it names the release as the cause.
    ruled_out = [s for s in said if "rules out change" in s and RISK_RULES in s]
    assert ruled_out and "ruled out" in ruled_out[0]
    assert result.verdict is Verdict.REFUTED
    assert [c.element_id for c in result.confounders] == [RELEASE]
    assert result.confounders[0].assessment is CauseAssessment.NAMED_AS_CAUSE
    assert not any("RR-2026-07-23a" in s and " caused PAY-4097" in s for s in said)

    # Without the incident label the postmortem is invisible: a time correlation with a
    # competing release in the same window, never confirmed, still about the change.
    carol = ask(driver, demo, question, subject="acme/user:carol")
    assert carol.verdict is Verdict.UNCERTAIN
    assert any("17 s after change" in s for s in statements(carol))
    assert [c.element_id for c in carol.confounders] == [RELEASE]


def test_a_named_release_that_is_not_known_gets_no_verdict_about_another(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    result = ask(driver, demo, "Was release-2026.07.19.9 related to the PAY-4097 errors?")
    assert result.verdict is Verdict.UNCERTAIN
    assert result.status is RunStatus.PARTIAL
    gap = [m for m in result.missing_evidence if "release-2026.07.19.9" in m.description]
    assert gap and gap[0].required and gap[0].evidence_type == "deployment_time"
    assert not any("caused" in s for s in statements(result))


@pytest.mark.parametrize(
    "as_of",
    [
        "2026-07-23T10:02:00Z",
        "2026-07-23T10:02:01Z",
        "2026-07-23T10:02:21Z",
        "2026-07-23T10:02:37Z",
    ],
)
def test_between_the_release_and_the_first_error_the_release_is_stated(
    driver: neo4j.Driver, demo: TemplateExecutor, as_of: str
) -> None:
    question = (
        "Was the 10:02 release of payment-api related to the PAY-4097 errors? "
        "Who owned payment-api at that moment? Which runbook version applied?"
    )
    result = ask(driver, demo, question, as_of=as_of)
    correlation = [c for c in result.claims if c.intent == Intent.DEPLOYMENT_CORRELATION.value]
    said = [c.statement for c in correlation]
    assert any(
        RELEASE in s and "finished at 2026-07-23T10:02:00Z" in s
        for s in statements(result, EpistemicStatus.FACT)
    ), said
    release_ev = {ev.evidence_id for ev in result.evidence if ev.element_id == RELEASE}
    no_error = [
        c
        for c in correlation
        if f"No first-seen PAY-4097 error is known at as_of {as_of}" in c.statement
        and "no time correlation can be drawn yet" in c.statement
    ]
    assert no_error and set(no_error[0].evidence_ids) <= release_ev
    assert result.verdict is Verdict.UNCERTAIN
    assert result.status is RunStatus.PARTIAL
    assert "error_first_seen" in {m.evidence_type for m in result.missing_evidence}


# -- the mechanism rules on evidence built in the test (pure) ---------------------------------


def _ev(element_id: str, types: list[str], content: str, **kw: object) -> Evidence:
    return Evidence.model_validate(
        {
            "evidence_id": evidence_id_for(element_id, 1, sha256_text(content), []),
            "element_id": element_id,
            "content": content,
            "evidence_types": types,
            **kw,
        }
    )


RULES = _ev(
    "change:rr-1",
    ["change_event"],
    "risk rules",
    type="ChangeEvent",
    name="risk rule publication RR-2026-07-23a",
    props={"at": "2026-07-23T10:02:21Z"},
)
FIRST = _ev(
    "EMITTED|svc:a|err:E-1",
    ["error_first_seen"],
    "svc:a EMITTED err:E-1",
    context={"error_code": "err:E-1", "first_seen": "2026-07-23T10:02:38Z"},
)
AFFECTED = _ev("AFFECTED_BY|svc:a|inc:1", ["affected_service"], "inc:1 AFFECTED svc:a")
CHECKED = CompetingCauseChecks(
    anchor=at("2026-07-23T10:02:38Z"),
    window_from=at("2026-07-23T09:32:38Z"),
    ran=["change_events_in_window(...)", "deployments_in_window(...)"],
)
ASKED = "Was RR-2026-07-23a related to the E-1 errors?"


@pytest.mark.parametrize(
    ("finding", "verdict", "says"),
    [
        ("RR-2026-07-23a was investigated and ruled out.", Verdict.REFUTED, "rules out change"),
        ("We could not rule out RR-2026-07-23a yet.", Verdict.LIKELY, "may have caused"),
        ("Publishing RR-2026-07-23a blocked every payment.", Verdict.CONFIRMED, " caused E-1"),
    ],
)
def test_mechanism_wording_about_the_named_change_sets_the_verdict(
    finding: str, verdict: Verdict, says: str
) -> None:
    mechanism = _ev("doc:pm", ["mechanism"], finding)
    result = derive_claims(
        ["deployment_correlation"],
        [RULES, FIRST, AFFECTED, mechanism],
        as_of=at("2026-07-23T11:00:00Z"),
        question=ASKED,
        competing_checks=CHECKED,
    )
    assert result.verdict is verdict
    assert any("17 s after change" in c.statement for c in result.claims)
    assert any(says in c.statement for c in result.claims)


@pytest.mark.parametrize("as_of", ["2026-07-23T10:01:59Z", "2026-07-23T10:03:00Z", LATER])
@pytest.mark.parametrize(
    "written",
    [
        "Was release 2026.07.23.1 related to the PAY-4097 errors?",
        "Was the 2026.07.23.1 release related to the PAY-4097 errors?",
    ],
)
def test_a_release_written_with_a_space_is_the_named_release(  # type: ignore[no-untyped-def]
    demo_graph, demo, written: str, as_of: str
) -> None:
    """How the dataset's README (and people) write it: the same answer as `release-…`.

    Before, at 10:01:59 the verdict was about release 2026.07.20.2, days earlier."""
    hyphen = ask(
        demo_graph, demo, "Was release-2026.07.23.1 related to the PAY-4097 errors?", as_of=as_of
    )
    spaced = ask(demo_graph, demo, written, as_of=as_of)
    assert [c.statement for c in spaced.claims] == [c.statement for c in hyphen.claims]
    assert spaced.verdict == hyphen.verdict
    assert [m.description for m in spaced.missing_evidence] == [
        m.description for m in hyphen.missing_evidence
    ]
    # The rollout under way at 10:01:59 names the release finished before it, as such only.
    assert not any(
        OLD_RELEASE in c.statement and "was under way" not in c.statement for c in spaced.claims
    )


# -- "what changed before the errors?" ------------------------------------------------------


@pytest.mark.parametrize(
    "question",
    [
        "What changed before the PAY-4097 errors?",
        "List every change before PAY-4097",
        "Were there any changes before the PAY-4097 errors?",
        "PAY-4097 之前改了什么？",
    ],
)
def test_what_changed_is_a_change_history(question: str) -> None:
    # Before, these were incident lookups: the incident and its first error, no change.
    assert detect_intents(question) == [Intent.CHANGE_HISTORY]


def test_what_changed_lists_every_change_before_the_first_error(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    result = ask(driver, demo, "What changed before the PAY-4097 errors?", service=None)
    assert result.status is RunStatus.COMPLETE and result.verdict is None
    facts = statements(result, EpistemicStatus.FACT)
    assert (
        f"Release {RELEASE} finished at 2026-07-23T10:02:00Z, 38 s before PAY-4097 was first "
        "seen" in facts
    ), facts
    assert any(
        RISK_RULES in s and "happened at 2026-07-23T10:02:21Z, 17 s before PAY-4097" in s
        for s in facts
    ), facts
    # What the postmortem says of each, as inferences; nothing called the cause by time.
    assert {c.element_id: c.assessment for c in result.confounders} == {
        RELEASE: CauseAssessment.NAMED_AS_CAUSE,
        RISK_RULES: CauseAssessment.RULED_OUT,
    }
    inferences = statements(result, EpistemicStatus.INFERENCE)
    assert any("rules out change" in s and RISK_RULES in s for s in inferences), inferences
    assert not any(" caused PAY-4097" in s for s in statements(result))
    # carol may not read the postmortem: the same two changes, stated, nothing inferred.
    carol = ask(driver, demo, "What changed before the PAY-4097 errors?", service=None,
                subject="acme/user:carol")  # fmt: skip
    assert carol.status is RunStatus.COMPLETE
    assert {c.element_id: c.assessment for c in carol.confounders} == {
        RELEASE: CauseAssessment.NO_MECHANISM_EVIDENCE,
        RISK_RULES: CauseAssessment.NO_MECHANISM_EVIDENCE,
    }
    assert not statements(carol, EpistemicStatus.INFERENCE)
    visible = {ev.evidence_id for ev in carol.evidence}
    assert all(set(c.evidence_ids) <= visible for c in carol.claims)


def test_what_changed_before_an_error_with_no_change_says_so(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    result = ask(driver, demo, "What changed before PAY-1002?", service=None)
    assert result.confounders == []
    assert (
        "No release is recorded in the 24 h, and no other change in the 30 min, before "
        "PAY-1002 was first seen at 2025-03-01T08:11:00Z"
    ) in statements(result, EpistemicStatus.FACT)


def test_what_changed_before_the_first_error_happened_is_partial(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    # Asked at 10:02:30: the release is out, the first PAY-4097 error (10:02:38) is not yet.
    result = ask(driver, demo, "What changed before the PAY-4097 errors?", service=None,
                 as_of="2026-07-23T10:02:30Z")  # fmt: skip
    assert result.status is RunStatus.PARTIAL
    assert [m.evidence_type for m in result.missing_evidence if m.required] == ["error_first_seen"]
    assert result.confounders == []
