"""A read that failed (a template timed out on a loaded server) is not an absence: what it
was to read is unknown, so the answer says so in its gaps and is never `complete`.

Before, a timed-out deployment read left "deployment_time (required): no release/deployment
time for the service" as if the KG held none (e24-qa, load 23-30)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import neo4j

from cypher_templates.compiler import CompiledQuery
from cypher_templates.executor import TemplateExecutor
from investigator.context_graph.models import RunStatus
from investigator.investigation import InvestigationRequest, investigate

DEPLOYMENT_READS = {"deployments_in_window", "latest_deployments", "rollouts_under_way"}


class _DeploymentReadsFail(TemplateExecutor):
    """Every deployment read meets a real error from Neo4j (a division by zero the server
    raises), as a timeout would end it."""

    def _read_template(
        self, compiled: CompiledQuery, parameters: dict[str, Any], fetch: int
    ) -> list[neo4j.Record]:
        if compiled.template_id in DEPLOYMENT_READS:
            self._read("RETURN 1 / 0 AS x", {}, 5.0, 1)
        return super()._read_template(compiled, parameters, fetch)

    def run_together(self, steps, subject, known_at, *, plan=None, raise_on_error=True):  # type: ignore[no-untyped-def]
        return [
            self.run(s, subject, known_at, plan=plan, raise_on_error=raise_on_error) for s in steps
        ]


def _ask(driver: neo4j.Driver, executor: TemplateExecutor):  # type: ignore[no-untyped-def]
    request = InvestigationRequest(
        question="Did the deploy cause the PAY-4097 errors on payment-api?",
        subject_id="acme/user:bob",
        service_id="svc:payment-api",
        as_of=datetime(2026, 7, 23, 10, 30, tzinfo=UTC),
        deadline_s=600,
    )
    return investigate(request, driver=driver, executor=executor, recorder=None)


def test_a_failed_deployment_read_is_unknown_not_absent(demo_graph: neo4j.Driver) -> None:
    failing = _DeploymentReadsFail(demo_graph)
    result = _ask(demo_graph, failing)
    failed = {tc.template_id for tc in result.tool_calls if tc.error}
    assert failed and failed <= DEPLOYMENT_READS, result.tool_calls
    assert result.status is RunStatus.PARTIAL
    required = [m for m in result.missing_evidence if m.required]
    assert required, result.missing_evidence
    assert all(
        m.description.startswith("unknown, not absent: a read of the run failed") for m in required
    ), required
    assert not any("no release/deployment time" in m.description for m in required), required
    assert result.verdict.value == "uncertain", result.verdict
    # The same question with every read answered: the release is found and correlated.
    whole = _ask(demo_graph, TemplateExecutor(demo_graph))
    assert not any(tc.error for tc in whole.tool_calls)
    assert whole.verdict.value != "uncertain", whole.verdict
