"""End-to-end investigations on the demo dataset, against the real Neo4j (no mocks).

The graph is loaded once for the module; every test asks a question a user would ask and
checks what the user would notice: the right release, owner and runbook version at as_of,
the reasons candidates were rejected, the verdict, PII and injection handling, gaps, the
pack hash, and the loop's bounds.
"""

from __future__ import annotations

import threading
from datetime import datetime
from pathlib import Path
from typing import Any

import neo4j
import pytest

from cypher_templates.executor import TemplateExecutor, ToolResult
from investigator.claims import EpistemicStatus, Verdict
from investigator.errors import NotAuthorized
from investigator.investigation import (
    InvestigationRequest,
    InvestigationResult,
    RunStatus,
    investigate,
)
from investigator.retrieval import StopReason
from investigator.session import RunSession

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO / "datasets" / "payments-incident"
SEED_QUESTION = (
    "Was the 10:02 release of payment-api related to the PAY-4097 errors? "
    "Who owned the service at that moment? Which runbook version applied?"
)
INCIDENT_AS_OF = "2026-07-23T10:03:00Z"
KNOWN_AT = "2026-08-01T00:00:00Z"  # fixed, so results do not depend on the wall clock


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.fixture(scope="module")
def demo(demo_graph: neo4j.Driver) -> TemplateExecutor:
    """The demo dataset in an otherwise empty graph, and one executor for the module."""
    return TemplateExecutor(demo_graph)


def ask(
    driver: neo4j.Driver,
    executor: TemplateExecutor,
    question: str = SEED_QUESTION,
    subject: str = "acme/user:alice",
    **kw: object,
) -> InvestigationResult:
    fields: dict[str, object] = {
        "question": question,
        "subject_id": subject,
        "service_id": "svc:payment-api",
        "as_of": at(INCIDENT_AS_OF),
        "known_at": at(KNOWN_AT),
    }
    fields.update(kw)
    return investigate(
        InvestigationRequest.model_validate(fields), driver=driver, executor=executor
    )


def by_element(result: InvestigationResult) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for rej in result.rejected:
        out.setdefault(rej.element_id, []).append(rej.reason)
    return out


def evidence_of(result: InvestigationResult, element_id: str) -> list[str]:
    return [ev.evidence_id for ev in result.evidence if ev.element_id == element_id]


def test_seed_question_release_owner_runbook_and_verdict(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    result = ask(driver, demo)
    assert result.status is RunStatus.COMPLETE
    assert result.stop_reason == StopReason.EVIDENCE_SUFFICIENT.value

    # The right release: the time correlation is drawn from release 2026.07.23.1, not the
    # older release of the same service.
    release_ev = evidence_of(result, "deploy:release-2026.07.23.1")
    correlation = [
        c
        for c in result.claims
        if c.epistemic_status is EpistemicStatus.INFERENCE and "38 s after" in c.statement
    ]
    assert len(correlation) == 1 and release_ev[0] in correlation[0].evidence_ids
    assert "deploy:release-2026.07.20.2" not in correlation[0].statement

    # Owner at as_of (payments-core until 2026-07-24), not today's owner.
    owners = [c.statement for c in result.claims if c.intent == "ownership_at_time"]
    assert owners and all("team:payments-core" in s for s in owners)
    rejected = by_element(result)
    assert rejected["OWNS|team:payments-platform|svc:payment-api|2026-07-24"] == [
        "rejected_temporal"
    ]

    # Runbook v3 in force; v2 superseded naming v3; v4 only valid later.
    runbooks = [c.statement for c in result.claims if c.intent == "applicable_runbook"]
    assert len(runbooks) == 1 and "runbook:payment-recovery@v3" in runbooks[0]
    v2 = next(r for r in result.rejected if r.element_id == "runbook:payment-recovery@v2")
    assert (v2.reason, v2.replacement) == ("rejected_superseded", "runbook:payment-recovery@v3")
    assert rejected["runbook:payment-recovery@v4"] == ["rejected_temporal"]

    # The confounding risk-rule change in the same minute keeps the verdict below confirmed.
    assert result.verdict is Verdict.LIKELY
    assert [c.element_id for c in result.confounders] == ["change:risk-rules-RR-2026-07-23a"]

    # Every claim is bound to evidence inside the pack.
    inside = {ev.evidence_id for ev in result.evidence}
    assert result.claims and all(set(c.evidence_ids) <= inside for c in result.claims)


def test_today_owner_differs_from_the_owner_at_the_incident(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    result = ask(
        driver, demo, "Who owned the service?", as_of=at("2026-08-01T00:00:00Z"), known_at=None
    )
    owners = [c.statement for c in result.claims if c.intent == "ownership_at_time"]
    assert owners and all("team:payments-platform" in s for s in owners)
    assert (
        "rejected_temporal"
        in by_element(result)["OWNS|team:payments-core|svc:payment-api|2025-01-01"]
    )
    assert result.status is RunStatus.COMPLETE


def test_injection_email_never_becomes_evidence(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    result = ask(
        driver,
        demo,
        "Why did PAY-4097 happen? Root cause and the incident reports please.",
        as_of=at("2026-07-23T11:00:00Z"),
    )
    email = "doc:email-2026-07-23-vendor-escalation"
    assert not evidence_of(result, email)
    assert by_element(result)[email] == ["rejected_untrusted_instruction"]
    assert "DETACH DELETE" not in result.model_dump_json()


def test_pii_never_reaches_a_subject_without_pii(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    report = "doc:incident-report-2026-07-23-payments"
    bob = ask(driver, demo, subject="acme/user:bob")
    (bob_report,) = [ev for ev in bob.evidence if ev.element_id == report]
    assert bob_report.transformations == ["pii_redaction"]
    assert "[REDACTED NAME]" in bob_report.content
    dumped = bob.model_dump_json()
    assert "maria.schneider" not in dumped and "Maria Schneider" not in dumped

    alice = ask(driver, demo, subject="acme/user:alice")
    (alice_report,) = [ev for ev in alice.evidence if ev.element_id == report]
    assert "Maria Schneider" in alice_report.content and alice_report.transformations == []

    carol = ask(driver, demo, subject="acme/user:carol")  # internal only: no incident label
    assert not evidence_of(carol, report)
    assert "Maria" not in carol.model_dump_json()


def test_question_about_something_absent_ends_partial_with_missing_evidence(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    result = ask(driver, demo, "Who owned svc:inventory-service at that moment?", service_id=None)
    assert result.status is RunStatus.PARTIAL
    # "At that moment" needs the event it refers to (issue 16): neither is in the graph.
    assert [m.evidence_type for m in result.missing_evidence if m.required] == [
        "error_first_seen",
        "ownership",
    ]
    assert result.claims == []
    assert result.stop_reason in (StopReason.NO_PROGRESS.value, StopReason.MAX_ROUNDS.value)


def test_identical_inputs_give_identical_pack_hash_and_known_at_changes_it(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    first = ask(driver, demo, subject="acme/user:bob")
    second = ask(driver, demo, subject="acme/user:bob")
    assert first.run_id != second.run_id
    assert first.pack_hash == second.pack_hash
    assert [c.claim_id for c in first.claims] == [c.claim_id for c in second.claims]

    # Known at 10:10 on the day: the postmortem and the report were not written yet, so the
    # mechanism is unknown and the verdict is weaker; the pack differs.
    early = ask(driver, demo, subject="acme/user:bob", known_at=at("2026-07-23T10:10:00Z"))
    assert early.pack_hash != first.pack_hash
    assert not evidence_of(early, "doc:postmortem-2026-07-23-payments")
    assert early.verdict is Verdict.UNCERTAIN
    assert any(m.evidence_type == "mechanism" for m in early.missing_evidence)


class _CountingExecutor(TemplateExecutor):
    """The real executor, counting how many groups of template calls are in flight at once."""

    def __init__(self, driver: neo4j.Driver) -> None:
        super().__init__(driver)
        self._lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0

    def run_together(self, *args: Any, **kwargs: Any) -> list[ToolResult]:
        with self._lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            return super().run_together(*args, **kwargs)
        finally:
            with self._lock:
                self.in_flight -= 1


def test_a_rounds_reads_run_together_and_the_run_is_the_one_made_one_by_one(
    driver: neo4j.Driver, demo: TemplateExecutor, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(RunSession, "READ_CONCURRENCY", 1)
    one_by_one = ask(driver, demo)
    monkeypatch.setattr(RunSession, "READ_CONCURRENCY", 4)
    counting = _CountingExecutor(driver)
    together = ask(driver, counting)
    assert counting.most_in_flight > 1  # the reads of a round did overlap

    # Same calls in the same order with the same ids and rows: the lineage and every hash
    # are those of a run made one call at a time.
    def calls(result: InvestigationResult) -> list[dict[str, object]]:
        return [tc.model_dump(exclude={"duration_ms", "started_at"}) for tc in result.tool_calls]

    assert calls(together) == calls(one_by_one)
    assert together.pack_hash == one_by_one.pack_hash
    assert [c.claim_id for c in together.claims] == [c.claim_id for c in one_by_one.claims]
    assert [e.evidence_id for e in together.evidence] == [
        e.evidence_id for e in one_by_one.evidence
    ]


class _ReadCountingExecutor(TemplateExecutor):
    """The real executor, counting the template calls it is asked to send to Neo4j."""

    def __init__(self, driver: neo4j.Driver) -> None:
        super().__init__(driver)
        self._lock = threading.Lock()
        self._inside = threading.local()  # a group of one runs its step through `run`
        self.reads = 0

    def _count(self, n: int) -> None:
        if not getattr(self._inside, "group", False):
            with self._lock:
                self.reads += n

    def run(self, *args: Any, **kwargs: Any) -> ToolResult:
        self._count(1)
        return super().run(*args, **kwargs)

    def run_together(self, steps: Any, *args: Any, **kwargs: Any) -> list[ToolResult]:
        self._count(len(steps))
        self._inside.group = True
        try:
            return super().run_together(steps, *args, **kwargs)
        finally:
            self._inside.group = False


def test_a_call_the_run_already_made_is_recorded_again_but_not_read_again(
    driver: neo4j.Driver, demo: TemplateExecutor, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A generous deadline: on a just-started server a run can pass the default one, and a
    # run cut short by it would not be the same run twice.
    reusing = _ReadCountingExecutor(driver)
    reused = ask(driver, reusing, deadline_s=600)
    # The seed run asks the owner and the service's runbooks in every round.
    keys = [
        (
            tc.template_id,
            tc.template_version,
            repr(sorted(tc.params.items())),
            repr(sorted(tc.options.items())),
            tc.limit,
        )
        for tc in reused.tool_calls
    ]
    assert len(set(keys)) < len(keys)
    assert reusing.reads == len(set(keys))
    first: dict[object, Any] = {}
    for key, tc in zip(keys, reused.tool_calls, strict=True):
        if key in first:
            assert tc.rows_hash == first[key].rows_hash and tc.row_count == first[key].row_count
            assert tc.duration_ms == 0.0 and tc.tool_call_id != first[key].tool_call_id
        else:
            first[key] = tc

    # Reading every call again gives the same run: same calls, rows, evidence, pack, claims.
    monkeypatch.setattr("investigator.session.read_key", lambda step: object())
    rereading = _ReadCountingExecutor(driver)
    reread = ask(driver, rereading, deadline_s=600)
    assert reread.stop_reason == reused.stop_reason
    assert rereading.reads == len(reread.tool_calls) == len(keys)

    def calls(result: InvestigationResult) -> list[dict[str, object]]:
        return [tc.model_dump(exclude={"duration_ms", "started_at"}) for tc in result.tool_calls]

    assert calls(reused) == calls(reread)
    assert reused.pack_hash == reread.pack_hash
    assert [c.claim_id for c in reused.claims] == [c.claim_id for c in reread.claims]
    assert [r.model_dump() for r in reused.rejected] == [r.model_dump() for r in reread.rejected]


def test_a_call_repeated_in_one_round_reads_once_and_a_failed_one_reads_again(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    from cypher_templates.plan import PlanStep
    from cypher_templates.subject import Subject
    from investigator.session import RunSpec

    def session(executor: TemplateExecutor, tenant: str) -> RunSession:
        spec = RunSpec(
            command="investigate",
            question="q",
            subject=f"{tenant}/user:alice",
            purposes=("incident_investigation",),
            as_of=at(INCIDENT_AS_OF),
        )
        subject = Subject(
            tenant=tenant, id="user:alice", labels=("internal",), purpose="incident_investigation"
        )
        return RunSession(
            spec,
            executor=executor,
            subject=subject,
            run_id="run-t",
            known_at=at(KNOWN_AT),
            log=None,
        )

    owner = PlanStep(
        template_id="ownership_over_time",
        evidence_type="ownership",
        params={"service_id": "svc:payment-api"},
    )
    counting = _ReadCountingExecutor(driver)
    calls = session(counting, "acme").call_round([owner, owner], raise_on_error=False)
    assert counting.reads == 1
    assert [c.record.tool_call_id for c in calls] == ["tc-01-001", "tc-01-002"]
    assert calls[0].record.rows_hash == calls[1].record.rows_hash and calls[0].record.row_count

    # A tenant without a fulltext index: the read fails, so its twin reads (and fails) again.
    text = PlanStep(
        template_id="fulltext_search",
        evidence_type="document",
        params={"query": "payment"},
        options={"label": "any"},
    )
    counting = _ReadCountingExecutor(driver)
    failed = session(counting, "no-such-tenant").call_round([text, text], raise_on_error=False)
    assert counting.reads == 2
    assert all(c.record.error for c in failed)


def test_conflicting_deploy_time_from_a_weaker_source_loses(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    result = ask(driver, demo, as_of=at("2026-07-24T00:00:00Z"))
    chat = next(r for r in result.rejected if r.element_id == "doc:chat-payments-2026-07-23-1012")
    assert chat.reason == "conflict_loser"
    assert chat.winner in evidence_of(result, "doc:cicd-release-2026.07.23.1")


def test_max_rounds_and_deadline_bound_the_loop(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    one = ask(driver, demo, max_rounds=1)
    assert one.rounds == 1
    assert one.stop_reason == StopReason.MAX_ROUNDS.value
    assert one.status is RunStatus.PARTIAL  # the first error was not reached in one round
    assert {tc.round for tc in one.tool_calls} == {1}

    ticks = iter(range(1000))
    stopped = investigate(
        InvestigationRequest(
            question=SEED_QUESTION,
            subject_id="acme/user:alice",
            service_id="svc:payment-api",
            as_of=at(INCIDENT_AS_OF),
            known_at=at(KNOWN_AT),
            deadline_s=3,
        ),
        driver=driver,
        executor=demo,
        monotonic=lambda: float(next(ticks)),  # one "second" per check: the deadline hits
    )
    assert stopped.stop_reason == StopReason.DEADLINE.value
    assert len(stopped.tool_calls) <= 2 and stopped.rounds <= 1


def test_unknown_subject_and_disallowed_purpose_are_refused(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    with pytest.raises(NotAuthorized):
        ask(driver, demo, subject="acme/user:nobody")
    with pytest.raises(NotAuthorized):
        ask(driver, demo, subject="acme/user:carol", purpose="audit")


def test_tenants_never_see_each_other(driver: neo4j.Driver, demo: TemplateExecutor) -> None:
    mallory = ask(driver, demo, subject="globex/user:mallory", service_id=None)
    assert mallory.evidence and all("globex" in ev.element_id for ev in mallory.evidence)
    assert all("globex" in r.element_id for r in mallory.rejected)
    alice = ask(driver, demo, subject="acme/user:alice", service_id=None)
    assert "globex" not in alice.model_dump_json()


def test_sre_runbook_question_links_alert_and_service_by_name(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    result = ask(
        driver,
        demo,
        "Alert KubePodCrashLooping fired on checkout at 03:12: which runbook applies, "
        "which version, and who owns it?",
        subject="acme/user:bob",
        service_id=None,
        as_of=at("2026-07-23T03:12:00Z"),
    )
    # Nothing required is missing; "at 03:12" has no date, so it is listed and the answer is
    # at as_of: partial for that alone.
    assert not [m for m in result.missing_evidence if m.required]
    assert result.unresolved_time_words == ["at 03:12"]
    assert result.status is RunStatus.PARTIAL
    statements = " | ".join(c.statement for c in result.claims)
    assert "runbook:pod-crashloop@v1" in statements
    assert "team:sre-platform OWNS svc:checkout" in statements
    assert "payment-recovery" not in statements


def test_subject_without_incident_label_still_gets_the_error_timeline(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    # Carol may not see the incident or its reports, but the error code's own EMITTED record
    # (first seen 10:02:38) is hers to read: the correlation is drawn without the incident.
    result = ask(
        driver,
        demo,
        "Was release-2026.07.23.1 related to the PAY-4097 errors on payment-api?",
        subject="acme/user:carol",
        as_of=at("2026-07-23T10:30:00Z"),
    )
    assert evidence_of(result, "EMITTED|svc:payment-api|err:PAY-4097")
    assert any("38 s after" in c.statement for c in result.claims)
    dumped = result.model_dump_json()
    assert "inc:2026-07-23-payments" not in dumped and "trace:" not in dumped
    assert result.verdict in (Verdict.LIKELY, Verdict.UNCERTAIN)


def test_unnamed_incident_is_linked_by_fulltext_and_leads_to_its_owners(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    result = ask(
        driver,
        demo,
        "Who owned the service affected by the 2026-07-23 payments incident at that time?",
        service_id=None,
        as_of=at("2026-07-23T10:30:00Z"),
    )
    owners = " | ".join(c.statement for c in result.claims)
    assert "team:payments-core OWNS svc:payment-api" in owners
    assert "team:payments-platform" not in owners and "svc:ledger" not in owners


def test_release_time_lookup_prefers_the_authoritative_record(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    result = ask(
        driver,
        demo,
        "When did release-2026.07.23.1 finish deploying?",
        service_id=None,
        as_of=at("2026-07-23T10:30:00Z"),
    )
    assert result.intents == ["release_lookup"]
    (claim,) = [c for c in result.claims if c.intent == "release_lookup"]
    assert "2026-07-23T10:02:00Z" in claim.statement  # CI/CD, not the chat's "around 10:07"
    assert evidence_of(result, "doc:cicd-release-2026.07.23.1")[0] in claim.evidence_ids


def test_policy_reaches_the_auditor_but_not_an_incident_investigation(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    question = "Which change-management policy governs payment-api?"
    audit = ask(driver, demo, question, subject="acme/user:auditor", purpose="audit")
    assert any("policy:payments-change-management" in c.statement for c in audit.claims)
    bob = ask(driver, demo, question, subject="acme/user:bob")  # the source allows only audit
    assert "policy:payments-change-management" not in bob.model_dump_json()
    assert bob.status is RunStatus.PARTIAL
