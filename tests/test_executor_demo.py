"""The templates over the real demo dataset, written by the KG writer (graph_schema)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import neo4j
import pytest
from test_templates_graph import graph_fingerprint, wipe_graph

from cypher_templates.executor import TemplateExecutor, ToolResult
from cypher_templates.plan import PlanStep
from cypher_templates.subject import load_subject
from graph_schema.bundle import load_bundle
from graph_schema.schema_ddl import apply_schema
from graph_schema.writer import ingest_bundle

DATASET = Path(__file__).resolve().parents[1] / "datasets" / "payments-incident"
AFTER = datetime(2026, 8, 1, tzinfo=UTC)
DURING = datetime(2026, 7, 23, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def ex(driver: neo4j.Driver) -> Iterator[TemplateExecutor]:
    wipe_graph(driver)
    apply_schema(driver)
    ingest_bundle(driver, load_bundle(DATASET))
    yield TemplateExecutor(driver)


def run(ex: TemplateExecutor, who: str, known_at: datetime, step: PlanStep) -> ToolResult:
    subject = load_subject(ex, who, "incident_investigation", known_at)
    return ex.run(step, subject, known_at)


def test_runbook_chain_names_each_replacement(ex: TemplateExecutor) -> None:
    step = PlanStep(
        template_id="runbooks_for",
        evidence_type="runbook",
        params={"anchor_id": "svc:payment-api"},
        options={"anchor": "service"},
    )
    after = {
        r.element.element_id: r.element.replacement
        for r in run(ex, "acme/user:alice", AFTER, step).rows
    }
    assert after["runbook:payment-recovery@v2"] == "runbook:payment-recovery@v3"
    assert after["runbook:payment-recovery@v3"] == "runbook:payment-recovery@v4"
    assert after["runbook:payment-recovery@v4"] is None
    # On the day of the incident the KG did not know v4 yet (recorded 2026-07-24).
    during = {
        r.element.element_id: r.element.replacement
        for r in run(ex, "acme/user:alice", DURING, step).rows
    }
    assert "runbook:payment-recovery@v4" not in during
    assert during["runbook:payment-recovery@v3"] is None


def test_ownership_intervals_of_payment_api(ex: TemplateExecutor) -> None:
    step = PlanStep(
        template_id="ownership_over_time",
        evidence_type="ownership",
        params={"service_id": "svc:payment-api"},
    )
    rows = run(ex, "acme/user:alice", AFTER, step).rows
    teams = [(r.context["team"], r.element.valid_from, r.element.valid_to) for r in rows]
    assert ("team:payments-core", datetime(2025, 1, 1, tzinfo=UTC)) == teams[0][:2]
    assert teams[-1][0] == "team:payments-platform" and teams[-1][2] is None


def test_same_name_in_another_tenant_stays_there(ex: TemplateExecutor) -> None:
    step = PlanStep(
        template_id="entity_resolution",
        evidence_type="entity",
        params={"text": "payment-api"},
        options={"label": "Service"},
    )
    assert [r.element.element_id for r in run(ex, "acme/user:alice", AFTER, step).rows] == [
        "svc:payment-api"
    ]
    assert [r.element.element_id for r in run(ex, "globex/user:mallory", AFTER, step).rows] == [
        "svc:globex-payment-api"
    ]


def test_every_template_on_the_demo_graph_writes_nothing(ex: TemplateExecutor) -> None:
    before = graph_fingerprint(ex.driver)
    subject = load_subject(ex, "acme/user:alice", "incident_investigation", AFTER)
    for spec in ex.registry.specs():
        params = {
            name: ("2026-07-01T00:00:00Z" if name == "from" else "2026-08-01T00:00:00Z")
            if p.type == "datetime"
            else "svc:payment-api"
            for name, p in spec.params.items()
            if p.required
        }
        step = PlanStep(
            template_id=spec.id,
            template_version=spec.version,
            evidence_type=spec.evidence_types[0],
            params=params,
        )
        result = ex.run(step, subject, AFTER)
        assert result.error is None
        assert all(r.element.props.get("tenant") is None for r in result.rows)
    assert graph_fingerprint(ex.driver) == before
