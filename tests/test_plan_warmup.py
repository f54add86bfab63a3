"""Planning the last runs' templates after a start (investigator.plan_warmup), for real.

The warm-up must run exactly the steps recent runs made (at each template's newest version,
the one the next question runs), with parameters of their sizes, for a tenant that holds
nothing: so it reads no KG record, whatever the runs were about.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import neo4j
import pytest

from cypher_templates.executor import TemplateExecutor, ToolResult
from graph_schema.bundle import load_bundle
from graph_schema.schema_ddl import apply_schema
from graph_schema.writer import ingest_bundle
from investigator.context_graph import RunRecorder
from investigator.investigation import InvestigationRequest, investigate
from investigator.plan_warmup import (
    recent_steps,
    sentinel_labels,
    sentinel_tenant,
    suggestion_steps,
    warm_plans,
)

DATASET = Path(__file__).resolve().parents[1] / "datasets" / "payments-incident"
SEED = InvestigationRequest(
    question="Was the 10:02 release of payment-api related to the PAY-4097 errors? "
    "Who owned the service at that moment? Which runbook version applied?",
    service_id="svc:payment-api",
    subject_id="acme/user:alice",
    as_of=datetime(2026, 7, 23, 10, 3, tzinfo=UTC),
    known_at=datetime(2026, 8, 1, tzinfo=UTC),
)


class WatchedExecutor(TemplateExecutor):
    """The real executor, keeping what each call was asked and what it returned."""

    def __init__(self, driver: neo4j.Driver) -> None:
        super().__init__(driver)
        self.calls: list[tuple[Any, Any, ToolResult]] = []

    def run(self, step, subject, known_at, **kw):  # type: ignore[no-untyped-def, override]
        result = super().run(step, subject, known_at, **kw)
        self.calls.append((step, subject, result))
        return result


@pytest.fixture(scope="module")
def recorded(driver: neo4j.Driver) -> Iterator[tuple[neo4j.Driver, Any]]:
    with driver.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()
    apply_schema(driver)
    ingest_bundle(driver, load_bundle(DATASET))
    seed = investigate(SEED, driver=driver, recorder=RunRecorder(driver))
    yield driver, seed


def test_the_last_runs_steps_are_planned_for_a_tenant_that_holds_nothing(
    recorded: tuple[neo4j.Driver, Any],
) -> None:
    driver, seed = recorded
    executor = WatchedExecutor(driver)
    steps = recent_steps(executor)
    # One per distinct call of the run (it made 27 calls, 22 of them distinct), in its order.
    distinct = {
        json.dumps(
            [c.template_id, c.template_version, c.params, c.options, c.limit], sort_keys=True
        )
        for c in seed.tool_calls
    }
    assert len(steps) == len(distinct) > 10
    assert [s.step.template_id for s in steps][:3] == [c.template_id for c in seed.tool_calls][:3]
    assert {(s.tenant_length, s.purpose) for s in steps} == {(4, "incident_investigation")}
    assert steps[0].labels  # alice's current labels: the size of the `granted` list

    report = warm_plans(executor, steps)
    assert (report.steps, report.executed, report.stopped_at_deadline) == (
        len(steps),
        len(steps),
        False,
    )
    tenants = {subject.tenant for _, subject, _ in executor.calls}
    assert len(tenants) == 1 and tenants != {"acme"}
    (tenant,) = tenants
    assert len(tenant) == len("acme")
    # The same steps with the sizes a question brings, and not one row read.
    assert [step for step, _, _ in executor.calls] == [s.step for s in steps]
    assert all(result.row_count == 0 for _, _, result in executor.calls)
    assert all(len(subject.labels) == len(steps[0].labels) for _, subject, _ in executor.calls)


def test_the_did_you_mean_templates_are_planned_too(recorded: tuple[neo4j.Driver, Any]) -> None:
    # A name typed with a slip (`runbook --alert VirtApiDwn`) runs fulltext and fuzzy reads
    # for Alert and Runbook names that no recent run made: planned on first use, they made
    # the did-you-mean 16-18 s where a lookup took 2-7 s (docs/benchmarks.md).
    driver, _ = recorded
    executor = WatchedExecutor(driver)
    steps = recent_steps(executor)
    added = suggestion_steps(steps)
    asked = {(w.step.template_id, w.step.options.get("label")) for w in added}
    for label in ("Alert", "Runbook", "Service", "ErrorCode"):
        assert {("fulltext_search", label), ("name_suggestions", label)} <= asked
    # Names of several sizes: Neo4j plans again for each size bucket of a string.
    sizes = {len(w.step.params["text"]) for w in added if w.step.template_id == "name_suggestions"}
    assert len(sizes) >= 3 and min(sizes) < 10 < max(sizes)
    # For the subject shapes of the last runs, none of their own steps twice.
    assert {(w.tenant_length, w.purpose) for w in added} == {(4, "incident_investigation")}
    assert not {w.step.model_dump_json() for w in added} & {w.step.model_dump_json() for w in steps}
    report = warm_plans(executor, added)
    assert report.executed == len(added) == len(executor.calls)
    assert all(result.row_count == 0 for _, _, result in executor.calls)
    assert all(subject.tenant != "acme" for _, subject, _ in executor.calls)


def test_the_warm_up_stops_at_its_deadline(recorded: tuple[neo4j.Driver, Any]) -> None:
    driver, _ = recorded
    executor = WatchedExecutor(driver)
    steps = recent_steps(executor)
    ticks = iter([0.0, 0.0, 0.5, 2.0, 2.0])
    report = warm_plans(executor, steps, deadline_s=1.0, monotonic=lambda: next(ticks))
    assert report.stopped_at_deadline and report.executed == 2 == len(executor.calls)


def test_the_sentinel_is_never_a_tenant_with_records(driver: neo4j.Driver) -> None:
    first = sentinel_tenant(driver, 4)
    driver.execute_query("CREATE (:KG {tenant: $t, id: 'x:squatter'})", t=first)
    try:
        second = sentinel_tenant(driver, 4)
        assert second != first and len(second) == 4
    finally:
        driver.execute_query("MATCH (n:KG {tenant: $t, id: 'x:squatter'}) DELETE n", t=first)


def test_sentinel_labels_keep_count_and_lengths_and_are_no_label() -> None:
    labels = ("internal", "pii", "x")
    made = sentinel_labels(labels)
    assert [len(x) for x in made] == [8, 3, 2] and len(set(made)) == 3
    assert all(x.startswith("~") for x in made)


def test_a_call_recorded_at_an_older_version_is_planned_at_the_newest(
    recorded: tuple[neo4j.Driver, Any],
) -> None:
    # A run recorded before a template's new version (deployments_in_window_tenant 6: its
    # first planning takes seconds) names the old one; the next question runs the newest, so
    # that is the text to plan. Last in this file: it records one more run.
    driver, _ = recorded
    older = TemplateExecutor(driver).pinned({"runbooks_for": 4})
    again = investigate(SEED, driver=driver, recorder=RunRecorder(driver), executor=older)
    assert {c.template_version for c in again.tool_calls if c.template_id == "runbooks_for"} == {4}
    steps = recent_steps(WatchedExecutor(driver))
    versions = {(w.step.template_id, w.step.template_version) for w in steps}
    newest = TemplateExecutor(driver).registry.get("runbooks_for").version
    assert newest > 4 and ("runbooks_for", newest) in versions
    assert ("runbooks_for", 4) not in versions
    # The two runs' steps are then the same steps: none planned twice.
    assert len(steps) == len({w.step.model_dump_json() for w in steps})
