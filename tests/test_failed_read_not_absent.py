"""A read that failed (a template timed out on a loaded server) is not an absence: what it
was to read is unknown, so the answer says so in its gaps and is never `complete`.

Before, a timed-out deployment read left "deployment_time (required): no release/deployment
time for the service" as if the KG held none (e24-qa, load 23-30); a failed deployment read
still let "No release is recorded in the 24 h ..." be stated, and a failed read of an
alert's owners left the service's owner as the only owner, with no gap (h25)."""

from __future__ import annotations

from collections.abc import Callable
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


class _ReadsFail(TemplateExecutor):
    """Each read `fails` picks meets a real Neo4j error (a division by zero), as a timeout
    would end it; the others are answered."""

    def __init__(self, driver: neo4j.Driver, fails: Callable[[str, dict[str, Any]], bool]) -> None:
        super().__init__(driver)
        self._fails = fails

    def _read_template(
        self, compiled: CompiledQuery, parameters: dict[str, Any], fetch: int
    ) -> list[neo4j.Record]:
        if self._fails(compiled.template_id, parameters):
            self._read("RETURN 1 / 0 AS x", {}, 5.0, 1)
        return super()._read_template(compiled, parameters, fetch)

    def run_together(self, steps, subject, known_at, *, plan=None, raise_on_error=True):  # type: ignore[no-untyped-def]
        return [
            self.run(s, subject, known_at, plan=plan, raise_on_error=raise_on_error) for s in steps
        ]


LATER = datetime(2026, 9, 1, tzinfo=UTC)
NO_RELEASE = (
    "No release is recorded in the 24 h, and no other change in the 30 min, before PAY-1002 "
    "was first seen at 2025-03-01T08:11:00Z"
)


def _changes_before_pay_1002(driver: neo4j.Driver, executor: TemplateExecutor):  # type: ignore[no-untyped-def]
    request = InvestigationRequest(
        question="What changed before PAY-1002 on payment-api?",
        subject_id="acme/user:bob",
        service_id="svc:payment-api",
        as_of=LATER,
        known_at=LATER,
        deadline_s=600,
    )
    return investigate(request, driver=driver, executor=executor, recorder=None)


def test_no_release_is_never_stated_when_a_release_read_failed(demo_graph: neo4j.Driver) -> None:
    # PAY-1002 (first seen 2025-03-01) has no release or change before it: every read
    # answered, that absence is a fact.
    whole = _changes_before_pay_1002(demo_graph, TemplateExecutor(demo_graph))
    assert NO_RELEASE in [c.statement for c in whole.claims], whole.claims
    # The release read of the week before as_of fails: the absence is unknown, said in a
    # required gap; before, the fact was stated beside a `partial` status.
    failing = _ReadsFail(
        demo_graph,
        lambda template, params: template == "deployments_in_window" and params["to"] == LATER,
    )
    result = _changes_before_pay_1002(demo_graph, failing)
    assert [tc.template_id for tc in result.tool_calls if tc.error] == ["deployments_in_window"]
    assert result.status is RunStatus.PARTIAL
    assert not any(c.statement.startswith("No release") for c in result.claims), result.claims
    gaps = [m.description for m in result.missing_evidence if m.required]
    assert (
        "unknown, not absent: whether no release is recorded in the 24 h, and no other change "
        "in the 30 min, before PAY-1002 was first seen at 2025-03-01T08:11:00Z: a read of the "
        "run failed"
    ) in " ".join(gaps), gaps


def test_a_failed_owners_read_leaves_that_owner_unknown(demo_graph: neo4j.Driver) -> None:
    def ask(executor: TemplateExecutor):  # type: ignore[no-untyped-def]
        request = InvestigationRequest(
            question="Who owned the PaymentApiHighErrorRate alert then?",
            subject_id="acme/user:bob",
            as_of=datetime(2026, 7, 23, 10, 30, tzinfo=UTC),
            deadline_s=600,
        )
        return investigate(request, driver=demo_graph, executor=executor, recorder=None)

    whole = ask(TemplateExecutor(demo_graph))
    assert any(
        "team:payments-core OWNS alert:PaymentApiHighErrorRate" in c.statement for c in whole.claims
    ), whole.claims
    # The alert's owners read fails: before, the service's owner was the only owner stated
    # and no gap named the alert (a user read payment-api's owner as the alert's).
    result = ask(_ReadsFail(demo_graph, lambda template, _: template == "owners_of"))
    assert [tc.template_id for tc in result.tool_calls if tc.error] == ["owners_of"]
    assert result.status is RunStatus.PARTIAL
    assert not any("OWNS alert:" in c.statement for c in result.claims), result.claims
    gaps = [m.description for m in result.missing_evidence if m.required]
    assert (
        "unknown, not absent: who owned alert:PaymentApiHighErrorRate: the read of its owners "
        "(owners_of) failed (see its tool calls: a query timed out or Neo4j refused it); ask "
        "again (the owner of another entity is not its owner)"
    ) in gaps, gaps
    assert not any(g.startswith("no owner of alert:") for g in gaps), gaps


class _OneGroupedReadFails(TemplateExecutor):
    """The real executor, a round's reads together; `template`'s read carries a LIMIT Neo4j
    refuses (-1), so it fails for real inside its group's shared read transaction."""

    def __init__(self, driver: neo4j.Driver, template: str) -> None:
        super().__init__(driver)
        self._template = template
        self.group_sizes: list[int] = []

    def cypher_parameters(self, compiled, subject, known_at):  # type: ignore[no-untyped-def,override]
        parameters = super().cypher_parameters(compiled, subject, known_at)
        if compiled.template_id == self._template:
            parameters["limit"] = -1
        return parameters

    def run_together(self, steps, subject, known_at, *, plan=None, raise_on_error=True):  # type: ignore[no-untyped-def]
        if any(step.template_id == self._template for step in steps):
            self.group_sizes.append(len(steps))
        return super().run_together(
            steps, subject, known_at, plan=plan, raise_on_error=raise_on_error
        )


def test_a_read_failing_inside_its_groups_transaction_costs_only_that_read(
    demo_graph: neo4j.Driver,
) -> None:
    """A round's reads run in groups, each group in one read transaction: one read's failure
    (a timeout, a refused query) fails the transaction; each read of the group then runs
    alone, so the others keep their rows and only the failed read's gap says so (a real
    timeout inside a group: test_executor.py, test_timeout_is_neo4j_unavailable)."""
    whole = _ask(demo_graph, TemplateExecutor(demo_graph))
    failing = _OneGroupedReadFails(demo_graph, "deployments_in_window")
    result = _ask(demo_graph, failing)
    assert any(n > 1 for n in failing.group_sizes), failing.group_sizes  # read in a group
    failed = [tc for tc in result.tool_calls if tc.error]
    assert {tc.template_id for tc in failed} == {"deployments_in_window"}, failed

    def key(tc):  # type: ignore[no-untyped-def]
        return tc.template_id, repr(sorted(tc.params.items())), repr(sorted(tc.options.items()))

    answered = {key(tc): tc.rows_hash for tc in whole.tool_calls}
    # The other reads (its group's among them) have the rows of a run where all answered.
    others = [tc for tc in result.tool_calls if not tc.error and key(tc) in answered]
    assert others and all(answered[key(tc)] == tc.rows_hash for tc in others)
    assert result.status is RunStatus.PARTIAL
    required = [m.description for m in result.missing_evidence if m.required]
    assert required and all(
        d.startswith("unknown, not absent: a read of the run failed") for d in required
    ), required


def _changes_in_period(
    driver: neo4j.Driver, executor: TemplateExecutor, question: str, at: datetime
):  # type: ignore[no-untyped-def]
    request = InvestigationRequest(
        question=question, subject_id="acme/user:bob", as_of=at, deadline_s=600
    )
    return investigate(request, driver=driver, executor=executor, recorder=None)


def _rollouts_fail(driver: neo4j.Driver) -> _ReadsFail:
    return _ReadsFail(driver, lambda template, _: template.startswith("rollouts_under_way"))


def test_a_failed_rollout_read_of_a_period_is_unknown_not_absent(demo_graph: neo4j.Driver) -> None:
    # h28-crowd2 item 4: the period's window reads answer (the release finished at 10:02 and
    # the risk rule change are listed), the read of the releases rolling out at its end
    # fails. Before: the changes listed, no gap naming the rollouts read.
    at = datetime(2026, 7, 23, 11, 0, tzinfo=UTC)
    question = "What changed on payment-api in the last 24 hours?"
    result = _changes_in_period(demo_graph, _rollouts_fail(demo_graph), question, at)
    assert {tc.template_id for tc in result.tool_calls if tc.error} == {"rollouts_under_way"}
    assert any(
        c.statement.startswith("Release deploy:release-2026.07.23.1 finished at")
        for c in result.claims
    ), result.claims
    gaps = [m.description for m in result.missing_evidence if m.required]
    assert (
        "unknown, not absent: which releases of svc:payment-api were rolling out at the end of "
        "the period (2026-07-23T11:00:00Z): the read of them (rollouts_under_way) failed (see "
        "its tool calls: a query timed out or Neo4j refused it), so none is said under way; "
        "ask again"
    ) in gaps, gaps
    assert result.status is RunStatus.PARTIAL
    # A period with nothing in it (and no service named: the tenant's rollouts read) is
    # never said to hold nothing.
    early = datetime(2026, 7, 20, 10, 0, tzinfo=UTC)
    result = _changes_in_period(
        demo_graph, _rollouts_fail(demo_graph), "What changed in the last hour?", early
    )
    assert {tc.template_id for tc in result.tool_calls if tc.error} == {"rollouts_under_way_tenant"}
    descriptions = [m.description for m in result.missing_evidence]
    assert not any(d.startswith("no release of the services") for d in descriptions), descriptions
    assert any(
        d.startswith(
            "unknown, not absent: which releases were rolling out at the end of the period"
        )
        for d in descriptions
    ), descriptions
    assert result.status is RunStatus.PARTIAL
