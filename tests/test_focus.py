"""Focus: which error and which service a question is about, on the demo dataset.

Real Neo4j (no mocks). Each test asks what a user asked and checks what the user sees:
the error a correlation is anchored on (the codes the question names, matched on the error
code's own `code` in every tenant; else the latest first-seen), the release that window finds,
and whose owner is stated.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import neo4j
import pytest

from cypher_templates.executor import TemplateExecutor
from investigator.claims import Verdict
from investigator.evidence import RejectionReason
from investigator.investigation import (
    InvestigationRequest,
    InvestigationResult,
    RunStatus,
    investigate,
)

DATASET = Path(__file__).resolve().parents[1] / "datasets" / "payments-incident"
# After the incident (the ownership change and runbook v4 have happened), fixed so the
# results do not depend on the wall clock.
AFTER = "2026-08-01T00:00:00Z"


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.fixture(scope="module")
def demo(demo_graph: neo4j.Driver) -> TemplateExecutor:
    """The demo dataset in an otherwise empty graph, and one executor for the module."""
    return TemplateExecutor(demo_graph)


def ask(
    driver: neo4j.Driver, executor: TemplateExecutor, question: str, subject: str, **kw: object
) -> InvestigationResult:
    fields: dict[str, object] = {"question": question, "subject_id": subject, **kw}
    return investigate(
        InvestigationRequest.model_validate(fields), driver=driver, executor=executor
    )


def statements(result: InvestigationResult) -> list[str]:
    return [c.statement for c in result.claims]


def missing_types(result: InvestigationResult) -> set[str]:
    return {m.evidence_type for m in result.missing_evidence if m.required}


def deploy_windows(result: InvestigationResult, service: str) -> list[tuple[Any, Any]]:
    return [
        (tc.params.get("from"), tc.params.get("to"))
        for tc in result.tool_calls
        if tc.template.startswith("deployments_in_window@") and tc.params["service_id"] == service
    ]


def test_a_correlation_naming_no_code_anchors_on_the_latest_error_not_the_oldest(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    # payment-api emits PAY-1002 since 2025 and PAY-4097 since 10:02:38 on 2026-07-23: "the
    # errors" of a question about the release are the latest first seen, not the oldest.
    result = ask(
        driver,
        demo,
        "Was the release of payment-api related to the errors?",
        "acme/user:bob",
        service_id="svc:payment-api",
        as_of=at(AFTER),
        known_at=at(AFTER),
    )
    said = statements(result)
    assert result.status is RunStatus.COMPLETE, result.missing_evidence
    assert "deployment_time" not in missing_types(result)
    assert any(
        "release-2026.07.23.1" in s and "finished at 2026-07-23T10:02:00Z" in s for s in said
    ), said
    assert any("PAY-4097 was first seen 38 s after release" in s for s in said), said
    assert result.verdict in (Verdict.LIKELY, Verdict.CONFIRMED)
    # The window ends at the first PAY-4097 error, never at PAY-1002's in 2025.
    windows = deploy_windows(result, "svc:payment-api")
    assert any(str(end).startswith("2026-07-23T10:02:38") for _, end in windows), windows
    assert not any(str(end).startswith("2025") for _, end in windows), windows
    # The older code's first-seen record is named as not the question's error.
    off = [r for r in result.rejected if r.element_id == "EMITTED|svc:payment-api|err:PAY-1002"]
    assert off and off[0].reason is RejectionReason.LOW_RELEVANCE
    assert "not the error the question is about" in (off[0].detail or "")
    assert not any("PAY-1002" in s for s in said), said


def test_the_runbook_at_the_release_is_the_version_in_force_then(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    result = ask(
        driver,
        demo,
        "Which runbook applied at the release?",
        "acme/user:bob",
        service_id="svc:payment-api",
        as_of=at(AFTER),
        known_at=at(AFTER),
    )
    assert result.status is RunStatus.COMPLETE, result.missing_evidence
    then = [s for s in statements(result) if "runbook:payment-recovery@v3" in s]
    assert then and "2026-07-23T10:02" in then[0], statements(result)
    assert not any("2025-03-01" in s for s in statements(result)), statements(result)


def test_without_as_of_a_subject_without_the_incident_label_still_gets_the_release(
    cli_env: object, invoke: Any, demo: TemplateExecutor
) -> None:
    # carol may not see the incident: the first error comes from the EMITTED record alone,
    # and the deployment window must still move to it (no --as-of: as_of is now).
    run = invoke(
        "investigate",
        "Was the 10:02 release of payment-api related to the PAY-4097 errors?",
        "--service",
        "svc:payment-api",
        "--subject",
        "acme/user:carol",
        "--json",
    )
    assert run.code == 0, run.err
    doc = json.loads(run.out)
    said = [c["statement"] for c in doc["claims"]]
    missing = {m["evidence_type"] for m in doc["missing_evidence"] if m["required"]}
    assert "deployment_time" not in missing, doc["missing_evidence"]
    assert any(
        "release-2026.07.23.1" in s and "finished at 2026-07-23T10:02:00Z" in s for s in said
    ), said
    assert any("PAY-4097 was first seen 38 s after release" in s for s in said), said
    assert any("RR-2026-07-23a" in s and "could explain the errors" in s for s in said), said
    # Nothing carol may not see reached her.
    assert not any("incident" in ev["acl"] for ev in doc["evidence"])


def test_in_another_tenant_the_named_code_is_matched_on_its_code_not_its_id(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    # globex's PAY-4097 is `err:globex-PAY-4097` (code: PAY-4097), first seen 10:01:30, 30 s
    # after globex's release.
    result = ask(
        driver,
        demo,
        "Was the release related to PAY-4097? Who owned payment-api then?",
        "globex/user:mallory",
        as_of=at("2026-07-23T10:03:00Z"),
        known_at=at(AFTER),
    )
    said = statements(result)
    emitted = "EMITTED|svc:globex-payment-api|err:globex-PAY-4097"
    assert emitted in {ev.element_id for ev in result.evidence}
    assert emitted not in {r.element_id for r in result.rejected}
    assert "error_first_seen" not in missing_types(result)
    assert any(s.startswith("PAY-4097 first seen at 2026-07-23T10:01:30Z") for s in said), said
    assert any(
        "PAY-4097 was first seen 30 s after release deploy:globex-payment-api-2026.07.23.7" in s
        for s in said
    ), said
    # "then" is the first PAY-4097 error, not the release.
    owners = [s for s in said if "OWNS svc:globex-payment-api" in s]
    assert owners and "the first PAY-4097 error, 2026-07-23T10:01:30Z" in owners[0], said
    assert not any(
        ev.element_id.startswith(("svc:payment-api", "deploy:release-", "err:PAY-"))
        for ev in result.evidence
    )


def test_the_owner_asked_for_is_the_named_services_not_every_affected_one(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    # The incident also affected checkout; the question asks about payment-api.
    result = ask(
        driver,
        demo,
        "who owned payment-api then",
        "acme/user:bob",
        as_of=at(AFTER),
        known_at=at(AFTER),
    )
    said = statements(result)
    assert result.status is RunStatus.COMPLETE, result.missing_evidence
    assert any(
        "the first PAY-4097 error, 2026-07-23T10:02:38Z" in s
        and "team:payments-core OWNS svc:payment-api" in s
        for s in said
    ), said
    assert not any("svc:checkout" in s for s in said), said
    assert not any(
        tc.template.startswith("ownership_over_time@")
        and tc.params.get("service_id") == "svc:checkout"
        for tc in result.tool_calls
    )


def test_asked_for_the_affected_services_their_owners_are_stated(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    # The counterpart: a question about the incident's services (naming none) gets all of them.
    result = ask(
        driver,
        demo,
        "Who owned the services affected by the 2026-07-23 payments incident?",
        "acme/user:bob",
        as_of=at(AFTER),
        known_at=at(AFTER),
    )
    said = statements(result)
    assert any("OWNS svc:checkout" in s for s in said), said
    assert any("OWNS svc:payment-api" in s for s in said), said


def test_a_named_code_that_does_not_exist_anchors_nothing(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    # Bad input: an unknown code never falls back to another code's first error.
    result = ask(
        driver,
        demo,
        "Was the release of payment-api related to the PAY-9999 errors?",
        "acme/user:bob",
        service_id="svc:payment-api",
        as_of=at(AFTER),
        known_at=at(AFTER),
    )
    assert result.status is RunStatus.PARTIAL
    assert "error_first_seen" in missing_types(result)
    assert result.verdict is Verdict.UNCERTAIN
    assert not any("first seen" in s for s in statements(result)), statements(result)


# -- what an answer is about: the incident's other services are context (s17 h4) ----------

INCIDENT_TIME = "2026-07-23T10:30:00Z"


def owned(result: InvestigationResult) -> list[str]:
    """The entities an ownership claim is stated for."""
    return sorted(
        s.split(" OWNS ", 1)[1].split(" ", 1)[0] for s in statements(result) if " OWNS " in s
    )


def test_an_alert_question_states_the_owners_of_what_it_fired_on_not_of_checkout(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    # The alert fired on payment-api; its incident also degraded checkout. Checkout's team
    # (sre-platform) was no answer to who owned the alert.
    result = ask(
        driver,
        demo,
        "Who owned the PaymentApiHighErrorRate alert then?",
        "acme/user:bob",
        as_of=at(INCIDENT_TIME),
    )
    assert owned(result) == ["alert:PaymentApiHighErrorRate", "svc:payment-api"]
    assert not any("svc:checkout" in s for s in statements(result))


def test_who_was_paged_for_an_incident_names_the_owner_of_the_service_with_its_errors(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    # Before: the text fallback took svc:payment-db ("payment" is a word of the question) as
    # the service asked about, and data-platform was stated as the answer.
    result = ask(
        driver,
        demo,
        "Who was paged for the payments incident?",
        "acme/user:bob",
        as_of=at(INCIDENT_TIME),
    )
    assert owned(result) == ["svc:payment-api"]
    assert "team:payments-core" in " ".join(statements(result))
    # The services it affected are asked for: both.
    both = ask(
        driver,
        demo,
        "Who owned the services the payments incident affected?",
        "acme/user:bob",
        as_of=at(INCIDENT_TIME),
    )
    assert owned(both) == ["svc:checkout", "svc:payment-api"]


def test_a_runbook_named_by_its_versioned_id_is_the_one_asked_about(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    # After the incident v4 is in force; the question names v3 and asks for its owner.
    result = ask(
        driver,
        demo,
        "Which team owned runbook:payment-recovery@v3?",
        "acme/user:bob",
        as_of=at(AFTER),
    )
    assert owned(result) == ["runbook:payment-recovery@v3"]
    # v3 was superseded before as_of: its owner is said over its life, never "at as_of".
    assert any(s.startswith("While runbook:payment-recovery@v3 was in force: ") for s in
               statements(result)), statements(result)  # fmt: skip
    assert not any("is the version in force" in s for s in statements(result))
    assert not any("payment-recovery@v4" in s for s in statements(result))


@pytest.mark.parametrize(
    "question",
    [
        "What changed before PAY-4097 started?",
        "What changed right before PaymentApiHighErrorRate started firing?",
    ],
)
def test_what_changed_before_rates_the_risk_rules_the_same_whatever_the_phrasing(
    driver: neo4j.Driver, demo: TemplateExecutor, question: str
) -> None:
    # The postmortem rules the risk-rule change out. The alert's phrasing never read it (no
    # text hit brought it in) and rated the change `no_mechanism_evidence`.
    result = ask(driver, demo, question, "acme/user:bob", as_of=at(AFTER))
    assessed = {c.element_id: c.assessment for c in result.confounders}
    assert assessed["change:risk-rules-RR-2026-07-23a"] == "ruled_out"
    assert assessed["deploy:release-2026.07.23.1"] == "named_as_cause"


def test_a_pasted_notification_with_labels_asks_what_to_do_about_the_alert(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    # Its labels are part of the page, not another question: the runbook is the answer, as
    # for "[FIRING:1] PaymentApiHighErrorRate" (before, an entity lookup read the names back).
    result = ask(
        driver,
        demo,
        "[FIRING:1] PaymentApiHighErrorRate (service=payment-api severity=page)",
        "acme/user:bob",
        as_of=at(INCIDENT_TIME),
    )
    assert any("runbook:payment-recovery@v3" in s and "in force" in s for s in statements(result))


def test_the_runbook_for_an_incident_is_read_from_the_service_with_its_errors(
    driver: neo4j.Driver, demo: TemplateExecutor
) -> None:
    # Not from svc:payment-db (a text hit sharing "payment"), nor from the words alone, nor
    # checkout's crash-loop runbook: the incident's errors came from payment-api.
    result = ask(
        driver,
        demo,
        "Which runbook applied to the payments incident?",
        "acme/user:bob",
        as_of=at(INCIDENT_TIME),
    )
    anchors = [
        tc.params["anchor_id"]
        for tc in result.tool_calls
        if tc.template.startswith("runbooks_for@") and tc.options.get("anchor") == "service"
    ]
    assert anchors == ["svc:payment-api"]
    runbook_claims = [s for s in statements(result) if s.startswith("Runbook ")]
    assert len(runbook_claims) == 1
    assert "runbook:payment-recovery@v3" in runbook_claims[0]
    assert "words of the question" not in runbook_claims[0]
