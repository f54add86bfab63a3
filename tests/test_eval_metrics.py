"""The eval's metrics and gates on hand-built outcomes (pure functions, no database)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from investigator.evaluation.cases import DEFAULT_CASES_PATH, CaseType, GoldenCase, load_golden_set
from investigator.evaluation.metrics import SubjectGrants, score_case
from investigator.evaluation.outcomes import (
    CaseOutcome,
    ClaimView,
    EvidenceView,
    RejectionView,
    ReplayView,
)
from investigator.evaluation.report import GATES, system_report

AS_OF = datetime(2026, 7, 23, 10, 30, tzinfo=UTC)
BOB = SubjectGrants(tenant="acme", labels=frozenset({"internal", "incident"}))


def _case(**expect: object) -> GoldenCase:
    return GoldenCase.model_validate(
        {
            "id": "c1",
            "type": "temporal",
            "description": "hand-built",
            "question": "Who owned payment-api?",
            "subject": "user:bob",
            "as_of": AS_OF,
            "expect": expect,
        }
    )


def _ev(kg_id: str, **kw: object) -> EvidenceView:
    fields: dict[str, object] = {
        "evidence_id": f"ev:{kg_id}",
        "kg_ids": [kg_id],
        "source_id": "src:x",
        "source_version": "1",
        "locator": "x#1",
        "content_hash": f"sha256:{kg_id}",
        "valid_from": datetime(2025, 1, 1, tzinfo=UTC),
        "acl": ["internal"],
    }
    fields.update(kw)
    return EvidenceView.model_validate(fields)


def _out(admitted: list[EvidenceView], **kw: object) -> CaseOutcome:
    fields: dict[str, object] = {
        "case_id": "c1",
        "system": "product",
        "exit_code": 0,
        "status": "complete",
        "admitted": admitted,
        "run_id": "run:1",
        "replay": ReplayView(exit_code=0, verified=True, pack_hash_match=True, chain_valid=True),
    }
    fields.update(kw)
    return CaseOutcome.model_validate(fields)


def test_a_clean_answer_scores_perfectly() -> None:
    case = _case(evidence=["own:core"], claims=[{"mentions": [["payments-core", "Core"]]}])
    claim = ClaimView(
        claim_id="c",
        statement="team:payments-core owned it",
        epistemic_status="fact",
        evidence_ids=["ev:own:core"],
    )
    score = score_case(case, _out([_ev("own:core")], claims=[claim]), BOB)
    m = {k: v.value for k, v in score.metrics.items()}
    assert m["required_evidence_recall"] == 1.0
    assert m["temporal_accuracy"] == 1.0
    assert m["acl_violation_rate"] == 0.0
    assert m["claim_evidence_coverage"] == 1.0
    assert m["claim_fact_recall"] == 1.0
    assert m["deterministic_replay_rate"] == 1.0
    assert score.problems == []


def test_any_of_requirement_is_met_by_either_record_and_rejected_counts_for_recall() -> None:
    case = _case(evidence=[["deploy:r1", "doc:cicd-r1"], "own:core"])
    rejected = [RejectionView(candidate_id="x", kg_ids=["own:core"], reason="budget_exceeded")]
    score = score_case(case, _out([_ev("doc:cicd-r1")], rejected=rejected), BOB)
    assert score.metrics["required_evidence_recall"].value == 1.0
    # Retrieved but dropped by the pack: the retriever is fine, the pack is not.
    assert score.metrics["pack_required_recall"].value == 0.5
    assert "pack_required_recall: pack dropped required own:core" in score.problems


def test_forbidden_admissions_count_against_their_own_rate() -> None:
    case = _case(
        forbidden=[
            {"id": "svc:globex", "why": "tenant"},
            {"id": "doc:email", "why": "injection"},
            {"id": "doc:draft", "why": "retracted"},
            {"id": "doc:purged", "why": "purged"},
            {"id": "rb:v4", "why": "future"},
        ]
    )
    admitted = [
        _ev("svc:globex"),
        _ev("doc:email"),
        _ev("doc:draft"),
        _ev("doc:purged"),
        _ev("rb:v4"),
        _ev("ok"),
    ]
    m = score_case(case, _out(admitted), BOB).metrics
    assert (m["acl_violation_rate"].num, m["acl_violation_rate"].den) == (1, 6)
    assert m["untrusted_admission_rate"].num == 1
    assert m["deleted_admission_rate"].num == 2  # the retracted and the purged document
    assert m["temporal_accuracy"].num == 5  # only the future runbook is out of time


def test_structural_checks_need_no_forbidden_list() -> None:
    case = _case(forbidden_text=["maria.schneider@example.com"])
    admitted = [
        _ev("a", acl=["internal", "pii"]),  # bob lacks pii
        _ev("b", tenant="globex"),  # another tenant
        _ev("c", content="contact maria.schneider@example.com"),
        _ev("d", valid_from=datetime(2026, 7, 25, tzinfo=UTC)),  # not yet valid
        _ev("e", valid_to=AS_OF),  # history (ended at as_of): fine unless declared stale
        _ev("f", source_version=None),  # incomplete provenance
        _ev("g", content_hash="sha256:a"),  # same content as `a`
    ]
    score = score_case(case, _out(admitted), BOB)
    m = score.metrics
    assert m["acl_violation_rate"].num == 3
    assert m["temporal_accuracy"].num == 6
    assert m["provenance_completeness"].num == 6
    assert m["duplicate_context_rate"].num == 1


def test_refused_request_expected_but_items_returned_is_an_access_violation() -> None:
    case = _case(exit_code=3, status="refused")
    leaked = score_case(case, _out([_ev("svc:x")], run_id=None), BOB)
    assert leaked.metrics["acl_violation_rate"].value == 1.0
    assert leaked.metrics["status_accuracy"].value == 0.0
    refused = score_case(
        case, _out([], exit_code=3, status="refused", run_id=None, replay=None), BOB
    )
    assert refused.metrics["status_accuracy"].value == 1.0
    assert refused.metrics["deterministic_replay_rate"].den == 0  # no run, nothing to replay


def test_claims_outside_the_pack_and_unverified_replay_are_caught() -> None:
    case = _case(verdict_in=["likely", "uncertain"], missing_evidence=["mechanism"])
    claims = [
        ClaimView(claim_id="ok", statement="s", epistemic_status="fact", evidence_ids=["ev:a"]),
        ClaimView(claim_id="out", statement="s", epistemic_status="fact", evidence_ids=["ev:zz"]),
        ClaimView(claim_id="none", statement="s", epistemic_status="hypothesis"),
    ]
    bad_replay = ReplayView(exit_code=0, verified=False, pack_hash_match=False, drift=["x"])
    out = _out([_ev("a")], claims=claims, verdict="confirmed", replay=bad_replay)
    m = score_case(case, out, BOB).metrics
    assert (m["claim_evidence_coverage"].num, m["claim_evidence_coverage"].den) == (1, 3)
    assert m["verdict_accuracy"].value == 0.0
    assert m["missing_evidence_recall"].value == 0.0
    assert m["deterministic_replay_rate"].value == 0.0


def test_budget_violation_uses_reported_tokens_else_the_estimate() -> None:
    case = GoldenCase.model_validate({**_case().model_dump(), "budget_tokens": 100})
    assert (
        score_case(case, _out([_ev("a", tokens=150)]), BOB).metrics["budget_violation_rate"].value
        == 1.0
    )
    assert (
        score_case(case, _out([_ev("a", tokens=150)], tokens_used=90), BOB)
        .metrics["budget_violation_rate"]
        .value
        == 0.0
    )


def test_gates_fail_and_name_the_cases() -> None:
    claim = ClaimView(claim_id="k", statement="s", epistemic_status="fact", evidence_ids=["ev:a"])
    good = score_case(_case(evidence=["a"]), _out([_ev("a")], claims=[claim]), BOB)
    bad_case = GoldenCase.model_validate(
        {
            **_case(evidence=["a"]).model_dump(),
            "id": "c2",
            "expect": {"evidence": ["a"], "forbidden": [{"id": "x", "why": "acl"}]},
        }
    )
    bad = score_case(bad_case, _out([_ev("x")], case_id="c2"), BOB)
    report = system_report("product", [good, bad], gated=True)
    assert report.passed is False
    failed = {g.metric: g for g in report.gates if not g.passed}
    assert failed["acl_violation_rate"].failing_cases == ["c2"]
    assert failed["required_evidence_recall"].failing_cases == ["c2"]
    assert "c1" not in failed["acl_violation_rate"].failing_cases
    ok = system_report("product", [good], gated=True)
    assert ok.passed is True
    assert {g.metric for g in ok.gates} == {g.metric for g in GATES}


def test_safety_rates_are_never_averaged_away() -> None:
    # Forty clean cases and one leak: the rate is small but the gate still fails.
    scores = [
        score_case(_case(evidence=["a"]), _out([_ev("a")], case_id=f"c{i}"), BOB) for i in range(40)
    ]
    leak_case = _case(evidence=["a"], forbidden_text=["secret"])
    scores.append(score_case(leak_case, _out([_ev("a", content="a secret")]), BOB))
    report = system_report("product", scores, gated=True)
    gate = next(g for g in report.gates if g.metric == "acl_violation_rate")
    assert gate.value is not None and 0 < gate.value < 0.05
    assert gate.passed is False


def test_the_golden_set_covers_every_case_type_with_at_least_40_cases() -> None:
    golden = load_golden_set(DEFAULT_CASES_PATH)
    assert len(golden.cases) >= 40
    assert {c.type for c in golden.cases} == set(CaseType)
    for case in golden.cases:
        assert case.description.strip()
        assert (
            case.expect.evidence
            or case.expect.forbidden
            or case.expect.exit_code != 0
            or (case.kind == "runbook")
        ), case.id


@pytest.mark.parametrize(
    ("patch", "needle"),
    [
        ({"question": None}, "exactly one of `question` or `runbook`"),
        ({"as_of": "2026-07-23T10:30:00"}, "timezone"),
        ({"expect": {"evidence": ["a"], "forbidden": [{"id": "a", "why": "acl"}]}}, "both"),
        ({"expect": {"forbidden": [{"id": "a", "why": "because"}]}}, "why"),
        ({"id": "Bad Id; DROP"}, "id"),
    ],
)
def test_malformed_cases_are_refused(patch: dict[str, object], needle: str) -> None:
    raw = {**_case().model_dump(mode="json"), **patch}
    with pytest.raises(ValueError, match=needle):
        GoldenCase.model_validate(raw)


def test_forbidden_everywhere_reaches_every_case_of_its_dataset() -> None:
    golden = load_golden_set(DEFAULT_CASES_PATH)
    for case in golden.cases:
        ids = {f.id for f in case.expect.forbidden}
        if case.dataset == "payments-incident":
            assert "doc:email-2026-07-23-vendor-escalation" in ids, case.id
            assert "doc:postmortem-draft-2026-07-23-payments" in ids, case.id
        else:
            assert "doc:mail-s00000" in ids, case.id
    assert {c.dataset for c in golden.cases} == {d.name for d in golden.datasets}


def test_a_tombstone_is_a_deleted_admission_even_when_no_case_names_it() -> None:
    m = score_case(_case(), _out([_ev("doc:x", status="retracted")]), BOB).metrics
    assert m["deleted_admission_rate"].value == 1.0


def test_runbook_lookup_accepts_any_listed_owner() -> None:
    case = GoldenCase.model_validate(
        {
            "id": "rb",
            "type": "versioning",
            "description": "d",
            "runbook": {"error_code": "PAY-4097"},
            "subject": "user:bob",
            "as_of": AS_OF,
            "expect": {"runbook": "rb:v3", "owner": ["team:a", "team:b"]},
        }
    )
    ok = _out([_ev("rb:v3")], runbook_id="rb:v3", owner="team:b")
    assert score_case(case, ok, BOB).metrics["lookup_accuracy"].value == 1.0
    wrong = _out([_ev("rb:v3")], runbook_id="rb:v3", owner="team:c")
    assert score_case(case, wrong, BOB).metrics["lookup_accuracy"].value == 0.0


def test_cases_meeting_every_gate_are_counted_per_type() -> None:
    clean = score_case(_case(evidence=["a"]), _out([_ev("a")]), BOB)
    leaky_case = _case(evidence=["a"], forbidden=[{"id": "x", "why": "tenant"}])
    leaky = score_case(leaky_case, _out([_ev("a"), _ev("x")]), BOB)
    report = system_report("baseline", [clean, leaky], gated=False)
    assert report.gate_clean_by_type["temporal"].num == 1
    assert report.gate_clean_by_type["temporal"].den == 2


def test_anything_handed_back_for_a_purpose_the_subject_lacks_is_a_violation() -> None:
    auditor = SubjectGrants(
        tenant="acme", labels=frozenset({"internal"}), purposes=frozenset({"audit"})
    )
    case = GoldenCase.model_validate({**_case().model_dump(), "purpose": "incident_investigation"})
    m = score_case(case, _out([_ev("a")]), auditor).metrics
    assert m["acl_violation_rate"].value == 1.0
