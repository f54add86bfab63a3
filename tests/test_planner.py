"""The deterministic planner's intent detection, mention extraction and step building."""

from __future__ import annotations

from datetime import UTC, datetime

from cypher_templates.compiler import compile_step
from cypher_templates.registry import TemplateRegistry
from investigator.planner import (
    DeterministicPlanner,
    Known,
    PlanInput,
    detect_intents,
    extract_mentions,
    steps_for,
)
from investigator.rubric import Intent, useful_types

AS_OF = datetime(2026, 7, 23, 10, 3, tzinfo=UTC)
SEED = (
    "Was the 10:02 release of payment-api related to the PAY-4097 errors? "
    "Who owned the service at that moment? Which runbook version applied?"
)


def test_seed_question_has_three_intents() -> None:
    assert detect_intents(SEED) == [
        Intent.APPLICABLE_RUNBOOK,
        Intent.DEPLOYMENT_CORRELATION,
        Intent.OWNERSHIP_AT_TIME,
    ]
    assert Intent.ROOT_CAUSE in detect_intents("What was the root cause of PAY-4097?")
    assert detect_intents("PAY-4097") == [Intent.INCIDENT_LOOKUP]
    assert detect_intents("谁负责 payment-api？") == [Intent.OWNERSHIP_AT_TIME]
    assert detect_intents("tell me about svc:ledger") == [Intent.ENTITY_LOOKUP]
    assert detect_intents("When did release-2026.07.23.1 finish deploying?") == [
        Intent.RELEASE_LOOKUP
    ]
    assert detect_intents("When was PAY-4097 first seen?") == [Intent.ERROR_TIMELINE]
    assert detect_intents("Which policy governs payment-api?") == [Intent.APPLICABLE_POLICY]


def test_mentions_pick_ids_codes_releases_alerts_and_names() -> None:
    m = extract_mentions(
        "Did release-2026.07.23.1 on svc:payment-api cause PAY-4097 and KubePodCrashLooping "
        "on checkout-web?"
    )
    assert m.ids == ["svc:payment-api"]
    assert m.error_codes == ["PAY-4097"]
    assert m.releases == ["release-2026.07.23.1"]
    assert m.alerts == ["KubePodCrashLooping"]
    assert "checkout-web" in m.names


def test_every_planned_step_compiles_against_the_allowlist() -> None:
    registry = TemplateRegistry.load()
    known = Known(
        services=["svc:a"],
        error_codes=["err:E-1"],
        incidents=["inc:1"],
        deployments=["deploy:r"],
        alerts=["alert:A"],
        first_seen=datetime(2026, 7, 23, 10, 2, 38, tzinfo=UTC),
    )
    all_types = useful_types(list(Intent))
    steps = steps_for(all_types, known, as_of=AS_OF)
    planner = DeterministicPlanner()
    inp = PlanInput(question=SEED, service_id="svc:payment-api", as_of=AS_OF, known_at=AS_OF)
    steps += planner.initial_plan(inp, planner.intents(inp)).steps
    assert {s.template_id for s in steps} >= {
        "ownership_over_time",
        "runbooks_for",
        "deployments_in_window",
        "incident_context",
        "change_events_in_window",
        "documents_about",
        "entity_resolution",
        "fulltext_search",
    }
    for step in steps:
        compile_step(registry, step)  # raises on anything not allowlisted


def test_deployment_window_is_anchored_on_the_first_error_once_known() -> None:
    known = Known(services=["svc:a"], first_seen=datetime(2026, 7, 23, 10, 2, 38, tzinfo=UTC))
    (step,) = [
        s
        for s in steps_for(["deployment_time"], known, as_of=datetime(2026, 11, 1, tzinfo=UTC))
        if s.template_id == "deployments_in_window"
    ]
    assert step.params["to"] == "2026-07-23T10:02:38+00:00"
