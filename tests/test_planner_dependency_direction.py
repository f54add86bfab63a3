"""Which way a dependency question reads DEPENDS_ON: the intent, the planned steps and the
claims (pure; the CLI end to end is tests/test_dependency_direction_cli.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cypher_templates.compiler import compile_step
from cypher_templates.registry import TemplateRegistry
from investigator.claims import derive_claims
from investigator.evidence import Evidence, evidence_id_for, sha256_text
from investigator.planner import DeterministicPlanner, Known, PlanInput, detect_intents, steps_for
from investigator.rubric import Intent, missing_evidence

AS_OF = datetime(2026, 7, 23, 10, 3, tzinfo=UTC)
DEPENDENCIES = [Intent.DEPENDENCIES]
DEPENDENTS = [Intent.DEPENDENTS]
BOTH = [Intent.DEPENDENCIES, Intent.DEPENDENTS]


@pytest.mark.parametrize(
    ("question", "intents"),
    [
        # The blast radius: what depends on the service (DEPENDS_ON into it).
        ("Which services depend on payment-api?", DEPENDENTS),
        ("What depended on payment-api on 2026-07-05?", DEPENDENTS),
        ("Which other services depend on payment-api?", DEPENDENTS),
        ("Which services call payment-api?", DEPENDENTS),
        ("Who calls payment-api?", DEPENDENTS),
        ("What is payment-api used by?", DEPENDENTS),
        ("What would break if payment-api goes down?", DEPENDENTS),
        ("Which services would be affected if payment-api fails?", DEPENDENTS),
        ("What are payment-api's dependents?", DEPENDENTS),
        ("List the consumers of payment-api", DEPENDENTS),
        ("Who are the callers of payment-api?", DEPENDENTS),
        ("What is the blast radius of payment-api?", DEPENDENTS),
        ("哪些服务依赖 payment-api？", DEPENDENTS),
        # An outage supposed, in the present tense (e29-qa finding 19: the question's words
        # were refused as unread).
        ("If payment-db goes down, which services are affected?", DEPENDENTS),
        ("what breaks if payment-db fails?", DEPENDENTS),
        ("blast radius of payment-db", DEPENDENTS),
        ("Who is impacted when payment-db is down?", DEPENDENTS),
        ("What happens if payment-db goes down?", DEPENDENTS),
        ("What is the impact of payment-db going down?", DEPENDENTS),
        ("Which services are affected if payment-db crashes?", DEPENDENTS),
        ("如果 payment-db 挂了，哪些服务会受影响？", DEPENDENTS),
        ("payment-db 宕机会影响哪些服务？", DEPENDENTS),
        ("Which services are affected by payment-db going down?", DEPENDENTS),
        # What the service depends on (DEPENDS_ON out of it).
        ("Which services does payment-api depend on?", DEPENDENCIES),
        ("What did payment-api depend on?", DEPENDENCIES),
        ("What does payment-api call?", DEPENDENCIES),
        ("What are payment-api's dependencies?", DEPENDENCIES),
        ("payment-api depends on which services?", DEPENDENCIES),
        ("Does payment-api depend on ledger?", DEPENDENCIES),
        ("payment-api 依赖哪些服务？", DEPENDENCIES),
        # Both ways: asked for both, or in words used for either side.
        ("What are the dependencies of payment-api and what depends on it?", BOTH),
        ("What is downstream of payment-api?", BOTH),
        ("What is upstream of payment-api?", BOTH),
    ],
)
def test_the_direction_asked_is_the_intent(question: str, intents: list[Intent]) -> None:
    assert detect_intents(question) == intents


def test_words_that_only_look_like_dependency_questions_are_not() -> None:
    assert detect_intents("What do I use to fix payment-api?") == [Intent.ENTITY_LOOKUP]
    # "uses" names no dependency ("who uses the runbook"); "upstream" in a correlation
    # question keeps its old meaning, the services it depends on, and adds no dependents.
    assert Intent.DEPENDENTS not in detect_intents("Who uses the payments runbook?")
    assert Intent.DEPENDENTS not in detect_intents(
        "Did an upstream deployment cause the PAY-4097 errors?"
    )
    assert detect_intents("Which runbook should I use for PAY-4097?") == [Intent.APPLICABLE_RUNBOOK]
    assert detect_intents("Who may 3 teams call?") == [Intent.ENTITY_LOOKUP]
    # An outage that happened, a failover, what to do: no blast radius.
    assert Intent.DEPENDENTS not in detect_intents("What broke PAY-4097?")
    assert Intent.DEPENDENTS not in detect_intents(
        "Why did checkout fail when payment-db was down?"
    )
    assert Intent.DEPENDENTS not in detect_intents("What was the impact of the payments outage?")
    assert Intent.DEPENDENTS not in detect_intents("Which services were affected by the outage?")
    assert Intent.DEPENDENTS not in detect_intents("这次故障影响了哪些服务？")
    assert Intent.DEPENDENTS not in detect_intents("what happens if payment-db fails over?")
    assert detect_intents("If payment-db goes down, what should I do?") == [
        Intent.APPLICABLE_RUNBOOK
    ]


def _neighbourhood_steps(intents: list[Intent]) -> list[tuple[str, str, object, str]]:
    planner = DeterministicPlanner()
    inp = PlanInput(
        question="q", service_id="svc:payment-api", as_of=AS_OF, known_at=AS_OF, max_rounds=5
    )
    plan = planner.initial_plan(inp, intents)
    registry = TemplateRegistry.load()
    for step in plan.steps:
        compile_step(registry, step, plan=plan)  # within the plan's bounds (max_hops)
    return [
        (
            str(s.params["start_id"]),
            str(s.options["direction"]),
            s.options["hops"],
            s.evidence_type,
        )
        for s in plan.steps
        if s.template_id == "dependency_neighbourhood"
    ]


def test_each_direction_asked_is_read_and_no_other() -> None:
    # The same depth both ways: the template's bound, 3 hops (before, 2 in and 1 out).
    dependents = ("svc:payment-api", "in", 3, "dependent")
    dependencies = ("svc:payment-api", "out", 3, "dependency")
    assert _neighbourhood_steps(DEPENDENTS) == [dependents]
    assert _neighbourhood_steps(DEPENDENCIES) == [dependencies]
    assert _neighbourhood_steps(BOTH) == [dependencies, dependents]


def test_services_reached_by_the_walk_are_not_walked_from() -> None:
    # The dependents of a dependency are not the dependents of the service asked about.
    known = Known(services=["svc:ledger", "svc:payment-api"], walked=["svc:ledger"])
    starts = [
        (s.params["start_id"], s.options["direction"])
        for s in steps_for(["dependency", "dependent"], known, as_of=AS_OF)
    ]
    assert starts == [("svc:payment-api", "out"), ("svc:payment-api", "in")]


def _edge(start: str, end: str, etype: str, path: list[str] | None = None) -> Evidence:
    key = f"DEPENDS_ON|{start}|{end}"
    content = f"{start} DEPENDS_ON {end}"
    return Evidence(
        evidence_id=evidence_id_for(key, 1, sha256_text(content), []),
        element_id=key,
        kind="relationship",
        type="DEPENDS_ON",
        content=content,
        evidence_types=[etype],
        valid_from=datetime(2025, 1, 1, tzinfo=UTC),
        context={"path": path} if path else {},
    )


def test_claims_state_the_direction_and_the_validity() -> None:
    out = _edge("svc:payment-api", "svc:ledger", "dependency")
    caller = _edge("svc:checkout", "svc:payment-api", "dependent")
    via = _edge(
        "svc:api-gateway",
        "svc:checkout",
        "dependent",
        path=["svc:payment-api", "svc:checkout", "svc:api-gateway"],
    )
    at = "At 2026-07-23T10:03:00Z: "
    valid = " (valid 2025-01-01T00:00:00Z to open)"
    dependents = derive_claims(["dependents"], [out, caller, via], as_of=AS_OF)
    assert sorted(c.statement for c in dependents.claims) == [
        f"{at}svc:api-gateway DEPENDS_ON svc:checkout{valid}, so svc:api-gateway depends on "
        "svc:payment-api through svc:checkout",
        f"{at}svc:checkout DEPENDS_ON svc:payment-api{valid}",
    ]
    dependencies = derive_claims(["dependencies"], [out, caller, via], as_of=AS_OF)
    assert [c.statement for c in dependencies.claims] == [
        f"{at}svc:payment-api DEPENDS_ON svc:ledger{valid}"
    ]


def test_a_chain_is_named_in_its_order_either_way() -> None:
    # Three hops into payment-db, two out of checkout: who depends on whom through whom.
    at = "At 2026-07-23T10:03:00Z: "
    valid = " (valid 2025-01-01T00:00:00Z to open)"
    gateway = _edge(
        "svc:api-gateway",
        "svc:checkout",
        "dependent",
        path=["svc:payment-db", "svc:payment-api", "svc:checkout", "svc:api-gateway"],
    )
    [claim] = derive_claims(["dependents"], [gateway], as_of=AS_OF).claims
    assert claim.statement == (
        f"{at}svc:api-gateway DEPENDS_ON svc:checkout{valid}, so svc:api-gateway depends on "
        "svc:payment-db through svc:checkout, svc:payment-api"
    )
    db = _edge(
        "svc:payment-api",
        "svc:payment-db",
        "dependency",
        path=["svc:checkout", "svc:payment-api", "svc:payment-db"],
    )
    [claim] = derive_claims(["dependencies"], [db], as_of=AS_OF).claims
    assert claim.statement == (
        f"{at}svc:payment-api DEPENDS_ON svc:payment-db{valid}, so svc:checkout depends on "
        "svc:payment-db through svc:payment-api"
    )


def test_dependents_not_found_are_missing_even_with_dependencies_found() -> None:
    [gap] = missing_evidence(["dependencies", "dependents"], ["dependency"])
    assert (gap.evidence_type, gap.intents) == ("dependent", ["dependents"])
