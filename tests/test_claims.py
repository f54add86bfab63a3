"""Claim rules on evidence built in the test: statuses, verdicts, confounders, gaps."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from investigator.claims import (
    EpistemicStatus,
    Verdict,
    derive_claims,
    keep_claims_in_pack,
)
from investigator.evidence import Evidence, evidence_id_for, sha256_text
from investigator.gate import Conflict
from investigator.planner import CompetingCauseChecks

AS_OF = datetime(2026, 7, 23, 10, 3, tzinfo=UTC)
CORRELATION = ["deployment_correlation"]
# The competing-cause checks ran for the window (what the retrieval loop reports).
CHECKED = CompetingCauseChecks(
    anchor=datetime(2026, 7, 23, 10, 2, 38, tzinfo=UTC),
    window_from=datetime(2026, 7, 23, 9, 32, 38, tzinfo=UTC),
    ran=["change_events_in_window(...)", "deployments_in_window(...)"],
)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def ev(element_id: str, types: list[str], content: str = "text", **kw: Any) -> Evidence:
    return Evidence(
        evidence_id=evidence_id_for(element_id, 1, sha256_text(content), []),
        element_id=element_id,
        content=content,
        evidence_types=types,
        **kw,
    )


DEPLOY = ev(
    "deploy:r1",
    ["deployment_time"],
    "release r1",
    name="release-r1",
    valid_from=at("2026-07-23T10:02:00Z"),
    props={"finished_at": "2026-07-23T10:02:00Z"},
)
FIRST = ev(
    "EMITTED|svc:a|err:E-1",
    ["error_first_seen"],
    "svc:a EMITTED err:E-1",
    context={"error_code": "err:E-1", "first_seen": "2026-07-23T10:02:38Z"},
)
AFFECTED = ev("AFFECTED_BY|svc:a|inc:1", ["affected_service"], "inc:1 AFFECTED svc:a")
MECHANISM = ev("doc:pm", ["mechanism"], "the release lowered the pool from 50 to 10")
CHANGE = ev(
    "change:rr",
    ["change_event"],
    "risk rules",
    name="risk rules",
    props={"at": "2026-07-23T10:02:21Z"},
)


def test_time_correlation_alone_is_likely_with_a_hypothesis_and_missing_mechanism() -> None:
    result = derive_claims(
        CORRELATION, [DEPLOY, FIRST, AFFECTED], as_of=AS_OF, competing_checks=CHECKED
    )
    assert result.verdict is Verdict.LIKELY
    statuses = {c.epistemic_status for c in result.claims}
    assert statuses == {EpistemicStatus.FACT, EpistemicStatus.INFERENCE, EpistemicStatus.HYPOTHESIS}
    inference = next(c for c in result.claims if c.epistemic_status is EpistemicStatus.INFERENCE)
    assert (
        "38 s after" in inference.statement and "not by itself a root cause" in inference.statement
    )
    missing = {m.evidence_type: m.required for m in result.missing_evidence}
    assert missing == {"mechanism": False}


def test_mechanism_confirms_and_a_confounder_lowers_the_verdict() -> None:
    confirmed = derive_claims(
        CORRELATION, [DEPLOY, FIRST, AFFECTED, MECHANISM], as_of=AS_OF, competing_checks=CHECKED
    )
    assert confirmed.verdict is Verdict.CONFIRMED
    lowered = derive_claims(
        CORRELATION,
        [DEPLOY, FIRST, AFFECTED, MECHANISM, CHANGE],
        as_of=AS_OF,
        competing_checks=CHECKED,
    )
    assert lowered.verdict is Verdict.LIKELY
    assert [c.element_id for c in lowered.confounders] == ["change:rr"]
    assert any("change:rr" in c.statement for c in lowered.claims)


def test_unresolved_conflict_on_the_deploy_time_lowers_the_verdict() -> None:
    conflict = Conflict(
        conflict_key="k", evidence_ids=[DEPLOY.evidence_id, "ev:other"], resolution="unresolved"
    )
    result = derive_claims(
        CORRELATION, [DEPLOY, FIRST, AFFECTED], as_of=AS_OF, conflicts=[conflict]
    )
    assert result.verdict is Verdict.UNCERTAIN


def test_errors_before_the_release_refute_it() -> None:
    early = ev(
        "EMITTED|svc:a|err:E-1",
        ["error_first_seen"],
        "x",
        context={"first_seen": "2026-07-23T09:00:00Z"},
    )
    result = derive_claims(
        CORRELATION, [DEPLOY, early, AFFECTED], as_of=AS_OF, competing_checks=CHECKED
    )
    assert result.verdict is Verdict.REFUTED


def test_missing_required_evidence_is_listed_and_no_claim_lacks_evidence() -> None:
    result = derive_claims(
        ["ownership_at_time", "deployment_correlation"],
        [DEPLOY],
        as_of=AS_OF,
        competing_checks=CHECKED,
    )
    required = sorted(m.evidence_type for m in result.missing_evidence if m.required)
    assert required == ["affected_service", "error_first_seen", "ownership"]
    assert result.verdict is Verdict.UNCERTAIN
    assert all(c.evidence_ids for c in result.claims)


def test_the_emitted_record_is_the_link_between_error_and_service() -> None:
    # Carol may not read the incident's AFFECTED_BY; the answer stated "svc:a EMITTED
    # err:E-1" and listed "no link between the error/incident and the service" as missing.
    emitted = FIRST.model_copy(update={"kind": "relationship", "type": "EMITTED"})
    result = derive_claims(CORRELATION, [DEPLOY, emitted], as_of=AS_OF, competing_checks=CHECKED)
    assert "affected_service" not in {m.evidence_type for m in result.missing_evidence}
    assert any("EMITTED" in c.statement for c in result.claims)
    # ...and the verdict is not lowered for a link it has: "Was the release related to
    # PAY-4097?" was `uncertain` without --service (no AFFECTED_BY read), `likely` with it.
    linked = derive_claims(
        CORRELATION, [DEPLOY, FIRST, AFFECTED], as_of=AS_OF, competing_checks=CHECKED
    )
    assert result.verdict is linked.verdict is Verdict.LIKELY


def test_claims_citing_evidence_outside_the_pack_are_dropped() -> None:
    result = derive_claims(
        CORRELATION, [DEPLOY, FIRST, AFFECTED], as_of=AS_OF, competing_checks=CHECKED
    )
    kept = keep_claims_in_pack(result.claims, [DEPLOY.evidence_id])
    assert kept and all(c.evidence_ids == [DEPLOY.evidence_id] for c in kept)


def test_claims_are_deterministic() -> None:
    a = derive_claims(
        CORRELATION, [DEPLOY, FIRST, AFFECTED, CHANGE], as_of=AS_OF, competing_checks=CHECKED
    )
    b = derive_claims(
        CORRELATION, [CHANGE, AFFECTED, FIRST, DEPLOY], as_of=AS_OF, competing_checks=CHECKED
    )
    assert a == b


def test_without_the_competing_cause_checks_the_verdict_stays_uncertain() -> None:
    for checks in (None, CHECKED.model_copy(update={"not_run": ["change_events_in_window"]})):
        result = derive_claims(
            CORRELATION, [DEPLOY, FIRST, AFFECTED, MECHANISM], as_of=AS_OF, competing_checks=checks
        )
        assert result.verdict is Verdict.UNCERTAIN
        gap = [m for m in result.missing_evidence if "competing-cause" in m.description]
        assert gap and not gap[0].required


def test_an_upstream_deployment_in_the_window_is_a_confounder_not_the_release() -> None:
    upstream = ev(
        "deploy:risk-1",
        ["deployment_time"],
        "risk-engine release",
        type="Deployment",
        name="risk-1",
        context={"service": "svc:risk"},
        props={"finished_at": "2026-07-23T10:02:30Z"},
    )
    checks = CHECKED.model_copy(update={"upstream": ["svc:risk"]})
    own = DEPLOY.model_copy(update={"type": "Deployment"})
    result = derive_claims(
        CORRELATION,
        [own, upstream, FIRST, AFFECTED, MECHANISM],
        as_of=AS_OF,
        competing_checks=checks,
    )
    assert [c.element_id for c in result.confounders] == ["deploy:risk-1"]
    assert result.verdict is Verdict.LIKELY
    assert any("deploy:r1" in c.statement and "finished at" in c.statement for c in result.claims)


OLD_OWNER = ev(
    "OWNS|team:core|svc:a|2025",
    ["ownership"],
    "team:core OWNS svc:a",
    valid_from=at("2025-01-01T00:00:00Z"),
    valid_to=at("2026-07-24T00:00:00Z"),
)
NEW_OWNER = ev(
    "OWNS|team:platform|svc:a|2026",
    ["ownership"],
    "team:platform OWNS svc:a",
    valid_from=at("2026-07-24T00:00:00Z"),
)


def test_owner_then_and_owner_now_are_both_stated_and_labelled() -> None:
    now = at("2026-11-30T00:00:00Z")
    result = derive_claims(
        ["ownership_at_time"],
        [OLD_OWNER, NEW_OWNER, FIRST],
        as_of=now,
        question="Who owned svc:a then?",
    )
    text = {c.evidence_ids[0]: c.statement for c in result.claims}
    then = text[OLD_OWNER.evidence_id]
    assert then.startswith(
        "At the first E-1 error, 2026-07-23T10:02:38Z (the question says 'then')"
    )
    assert "team:core" in then and "as_of" not in then
    assert text[NEW_OWNER.evidence_id].startswith("At as_of, 2026-11-30T00:00:00Z")


def test_a_question_without_time_words_keeps_the_as_of_statement() -> None:
    result = derive_claims(
        ["ownership_at_time"], [OLD_OWNER], as_of=AS_OF, question="Who owned svc:a?"
    )
    assert result.claims[0].statement.startswith("At 2026-07-23T10:03:00Z: team:core OWNS")


def test_an_owns_record_cut_for_the_budget_is_not_said_to_be_absent() -> None:
    # The alert's owners were read (`owners_of`) and its OWNS record admitted, then the pack
    # dropped it for the budget: before, the gap said "no OWNS record of it this subject may
    # read holds then", as if none existed.
    alert_owner = ev(
        "OWNS|team:core|alert:A",
        ["ownership"],
        "team:core OWNS alert:A",
        type="OWNS",
        valid_from=at("2025-06-01T00:00:00Z"),
        context={"owned": "alert:A"},
    )
    asked = {"owners_asked": ["alert:A"], "question": "Who owned alert A?"}
    result = derive_claims(
        ["ownership_at_time"], [OLD_OWNER], as_of=AS_OF, owners_dropped=[alert_owner], **asked
    )
    gaps = [m.description for m in result.missing_evidence if m.required]
    assert gaps == [
        "the owner of alert:A at as_of, 2026-07-23T10:03:00Z is not in the answer: its OWNS "
        "record OWNS|team:core|alert:A was read, then dropped for the evidence budget "
        "(budget_exceeded); a larger --budget-tokens reads it (the owner of another entity is "
        "not its owner)"
    ], gaps
    # Not read at all, it is not recorded: the gap says so, as before.
    unread = derive_claims(["ownership_at_time"], [OLD_OWNER], as_of=AS_OF, **asked)
    assert "no OWNS record of it this subject may read holds then" in " ".join(
        m.description for m in unread.missing_evidence
    )


def test_a_report_naming_a_change_is_said_and_moves_no_verdict() -> None:
    # A trusted document that records no mechanism (a draft postmortem) naming the risk rules
    # as the cause: said as what it records, beside the mechanism record naming the release;
    # the verdict and the release's confirmation are the mechanism records' alone.
    def draft(content: str, **kw: Any) -> Evidence:
        return ev("doc:draft", ["incident_report"], content, type="Document", **kw)

    base = [DEPLOY, FIRST, AFFECTED, MECHANISM, CHANGE]
    blamed = draft("Draft: the risk rules caused E-1.", props={"confidence": 0.3})
    result = derive_claims(CORRELATION, [*base, blamed], as_of=AS_OF, competing_checks=CHECKED)
    assert result.verdict is Verdict.LIKELY
    (rules,) = result.confounders
    assert rules.assessment == "reported_as_cause" and rules.reported_by == [blamed.evidence_id]
    assert (
        "doc:draft (doc:draft, a draft, confidence 0.3) names change risk rules (change:rr) as "
        'the cause of E-1: "Draft: the risk rules caused E-1."; it records no mechanism; the '
        "records read disagree: doc:pm (mechanism evidence) names release deploy:r1 as the cause"
    ) in [c.statement for c in result.claims]
    # Untrusted, or a sentence that rules the change out: no report of it as the cause.
    for other in (
        draft("Draft: the risk rules caused E-1.", trust="untrusted"),
        draft("The risk rules caused nothing: they were ruled out."),
    ):
        result = derive_claims(CORRELATION, [*base, other], as_of=AS_OF, competing_checks=CHECKED)
        (rules,) = result.confounders
        assert rules.assessment == "no_mechanism_evidence" and rules.reported_by == []
        assert not any("doc:draft" in c.statement for c in result.claims)


def test_a_policy_read_for_a_release_finish_alone_is_never_said_in_force_at_as_of() -> None:
    # Admitted for the 09:58 release's finish (the gate's `release_finishes`), reached by
    # APPLIES_TO, not GOVERNED_BY: no governing fact states it. Before: "is in force at
    # 10:03" though it ended at 10:00.
    freeze = ev(
        "policy:ledger-freeze",
        ["policy"],
        "No ledger change may ship during the month-end freeze.",
        type="Policy",
        name="Ledger change freeze",
        valid_from=at("2026-07-20T00:00:00Z"),
        valid_to=at("2026-07-23T10:00:00Z"),
        context={"anchor": "svc:ledger", "linked_via": ["APPLIES_TO"]},
    )
    release = ev(
        "deploy:ledger-1",
        ["deployment_time"],
        "release ledger-1",
        type="Deployment",
        name="ledger-1",
        valid_from=at("2026-07-23T09:58:00Z"),
        props={"service": "svc:ledger", "finished_at": "2026-07-23T09:58:00Z"},
    )
    result = derive_claims(
        ["release_lookup", "applicable_policy"],
        [freeze, release],
        as_of=AS_OF,
        question="did the 9:58 release follow the change policy?",
    )
    said = [c.statement for c in result.claims if "policy:ledger-freeze" in c.statement]
    assert said, [c.statement for c in result.claims]
    assert not any("is in force" in s for s in said), said
    assert any(
        "(policy:ledger-freeze) is not in force at 2026-07-23T10:03:00Z" in s
        and s.endswith("it ended at 2026-07-23T10:00:00Z")
        for s in said
    ), said
