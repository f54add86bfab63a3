"""A call that failed when the run was recorded (a template timed out on a loaded machine)
replays as the run made it: the re-run goes on without its rows, and the run verifies."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import neo4j

from cypher_templates.compiler import CompiledQuery
from cypher_templates.executor import TemplateExecutor
from investigator.context_graph import RunRecorder
from investigator.investigation import InvestigationRequest, investigate

BOB = "acme/user:bob"


class _FirstResolutionFails(TemplateExecutor):
    """The recording machine's executor: its first entity resolution meets a real error
    from Neo4j (a division by zero the server raises), as a timeout would end it."""

    failed = False

    def _read_template(
        self, compiled: CompiledQuery, parameters: dict[str, Any], fetch: int
    ) -> list[neo4j.Record]:
        if compiled.template_id == "entity_resolution" and not self.failed:
            self.failed = True
            self._read("RETURN 1 / 0 AS x", {}, 5.0, 1)
        return super()._read_template(compiled, parameters, fetch)

    def run_together(self, steps, subject, known_at, *, plan=None, raise_on_error=True):  # type: ignore[no-untyped-def]
        return [
            self.run(s, subject, known_at, plan=plan, raise_on_error=raise_on_error) for s in steps
        ]


def test_a_run_whose_call_failed_when_recorded_replays_verified(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    request = InvestigationRequest(
        question="Who owned payment-api before the release?",
        subject_id=BOB,
        service_id="svc:payment-api",
        as_of=datetime(2026, 12, 1, tzinfo=UTC),
        deadline_s=600,
    )
    executor = _FirstResolutionFails(demo_graph)
    result = investigate(
        request, driver=demo_graph, executor=executor, recorder=RunRecorder(demo_graph)
    )
    failed = [tc for tc in result.tool_calls if tc.error]
    assert [tc.template_id for tc in failed] == ["entity_resolution"], result.tool_calls
    # Today the same call succeeds: before, replay compared its rows with the failed read's
    # none ("1 rows now, 0 recorded") and the run did not verify.
    replayed = invoke("replay", result.run_id, "--json", "--subject", BOB)
    doc = json.loads(replayed.out)
    assert (replayed.code, doc["verified"], doc["drift"]) == (0, True, []), doc
