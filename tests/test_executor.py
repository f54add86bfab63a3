"""The executor over a real graph: what each template returns, and what it never returns."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import neo4j
import pytest
from test_templates_graph import at, graph_fingerprint, scenario, wipe_graph, write_graph

from cypher_templates.compiler import CompiledQuery
from cypher_templates.executor import (
    RETRY_TIMEOUT_FACTOR,
    QueryTimedOut,
    TemplateExecutor,
    ToolResult,
)
from cypher_templates.plan import PlanStep
from cypher_templates.proofs import ReadOnlyProofs
from cypher_templates.registry import TemplateRefused
from cypher_templates.subject import Subject, load_subject
from investigator.errors import Neo4jUnavailable, NotAuthorized

NOW = datetime(2026, 8, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def graph(driver: neo4j.Driver) -> Iterator[neo4j.Driver]:
    wipe_graph(driver)
    write_graph(driver, *scenario())
    yield driver


@pytest.fixture(scope="module")
def ex(graph: neo4j.Driver) -> TemplateExecutor:
    return TemplateExecutor(graph)


@pytest.fixture(scope="module")
def alice(ex: TemplateExecutor) -> Subject:
    return load_subject(ex, "acme/user:alice", "incident_investigation", NOW)


@pytest.fixture(scope="module")
def bob(ex: TemplateExecutor) -> Subject:
    return load_subject(ex, "acme/user:bob", "incident_investigation", NOW)


def run(
    ex: TemplateExecutor,
    subject: Subject,
    template_id: str,
    evidence: str,
    known_at: datetime = NOW,
    **kw: Any,
) -> ToolResult:
    step = PlanStep(template_id=template_id, evidence_type=evidence, **kw)  # type: ignore[arg-type]
    return ex.run(step, subject, known_at)


def ids(result: ToolResult) -> list[str]:
    return [r.element.element_id for r in result.rows]


def test_subject_is_read_from_its_principal_record(alice: Subject) -> None:
    assert alice.tenant == "acme"
    assert alice.labels == ("internal", "pii", "restricted")
    assert alice.purpose == "incident_investigation"


def test_unknown_subject_and_disallowed_purpose_are_not_authorized(ex: TemplateExecutor) -> None:
    with pytest.raises(NotAuthorized, match="unknown subject 'user:mallory'") as unknown:
        load_subject(ex, "acme/user:mallory", "incident_investigation", NOW)
    assert unknown.value.exit_code == 3
    with pytest.raises(NotAuthorized, match="not allowed purpose 'audit'"):
        load_subject(ex, "acme/user:bob", "audit", NOW)


def test_entity_resolution_by_id_name_alias_code_alertname(
    ex: TemplateExecutor, bob: Subject
) -> None:
    for text, expected, how in [
        ("svc:payment-api", "svc:payment-api", "id"),
        ("Payment-API", "svc:payment-api", "name"),
        ("pay-api", "svc:payment-api", "alias"),
        ("PAY-4097", "err:PAY-4097", "code"),
        ("HighErrorRate", "alert:HighErrorRate", "alertname"),
    ]:
        result = run(ex, bob, "entity_resolution", "entity", params={"text": text})
        assert ids(result) == [expected], text
        assert result.rows[0].context["match"] == how
        # Never the other tenant's record of the same id.
        assert all(r.element.props.get("tenant") is None for r in result.rows)
    eve = load_subject(ex, "globex/user:eve", "incident_investigation", NOW)
    other = run(ex, eve, "entity_resolution", "entity", params={"text": "incident:INC-1"})
    assert [r.element.name for r in other.rows] == ["GLOBEX SECRET incident"]
    mine = run(ex, bob, "entity_resolution", "entity", params={"text": "incident:INC-1"})
    assert [r.element.name for r in mine.rows] == ["PAY-4097 spike"]


def test_acl_hides_elements_and_every_path_through_them(
    ex: TemplateExecutor, alice: Subject, bob: Subject
) -> None:
    deps = dict(params={"start_id": "svc:payment-api"}, options={"hops": 2})
    assert "svc:vault" in [
        r.context["neighbour"]
        for r in run(ex, alice, "dependency_neighbourhood", "dependency", **deps).rows
    ]
    bob_rows = run(ex, bob, "dependency_neighbourhood", "dependency", **deps).rows
    assert [r.context["neighbour"] for r in bob_rows] == ["svc:ledger"]
    assert run(ex, bob, "entity_resolution", "entity", params={"text": "svc:vault"}).rows == []
    # Close matches too: alice's slip finds the vault, bob's finds nothing of it.
    slip = {"text": "vaultt"}
    assert "svc:vault" in ids(run(ex, alice, "name_suggestions", "entity", params=slip))
    assert "svc:vault" not in ids(run(ex, bob, "name_suggestions", "entity", params=slip))
    # Nor another tenant's record: globex's secret incident, found by globex's eve only.
    secret = {"text": "GLOBEX SECRT"}
    eve = load_subject(ex, "globex/user:eve", "incident_investigation", NOW)
    for subject, found in ((eve, True), (bob, False)):
        names = [r.element.name for r in run(ex, subject, "name_suggestions", "entity",
                                             params=secret).rows]  # fmt: skip
        assert ("GLOBEX SECRET incident" in names) is found, (subject.id, names)


def test_known_at_picks_the_record_current_then(ex: TemplateExecutor, bob: Subject) -> None:
    before = run(
        ex,
        bob,
        "entity_resolution",
        "entity",
        known_at=at("2026-02-01T00:00:00Z"),
        params={"text": "svc:ledger"},
    )
    after = run(ex, bob, "entity_resolution", "entity", params={"text": "svc:ledger"})
    assert [(r.element.name, r.element.version) for r in before.rows] == [("ledger-old", 1)]
    assert [(r.element.name, r.element.version) for r in after.rows] == [("ledger", 2)]
    # Before the KG knew anything, nothing.
    nothing = run(
        ex,
        bob,
        "entity_resolution",
        "entity",
        known_at=at("2025-01-01T00:00:00Z"),
        params={"text": "svc:ledger"},
    )
    assert nothing.rows == []


def test_ownership_returns_every_interval_for_the_gate(ex: TemplateExecutor, bob: Subject) -> None:
    result = run(
        ex, bob, "ownership_over_time", "ownership", params={"service_id": "svc:payment-api"}
    )
    got = [(r.context["team"], r.element.valid_from, r.element.valid_to) for r in result.rows]
    assert got == [
        ("team:sre", at("2026-01-01T00:00:00Z"), at("2026-07-24T00:00:00Z")),
        ("team:payments-core", at("2026-07-24T00:00:00Z"), None),
    ]
    first = result.rows[0].element
    assert first.kind == "relationship" and first.type == "OWNS"
    assert first.element_id == "OWNS|team:sre|svc:payment-api|1"
    assert first.content == "team:sre OWNS svc:payment-api"
    assert first.conflict_key == "ownership|svc:payment-api"
    assert first.supports == ("ownership",)


def test_latest_deployments_are_newest_first_up_to_to(ex: TemplateExecutor, bob: Subject) -> None:
    def newest(to: str) -> list[str]:
        params = {"service_id": "svc:payment-api", "to": to}
        return ids(run(ex, bob, "latest_deployments", "deployment_time", params=params))

    assert newest("2026-12-01T00:00:00Z") == ["deploy:r1", "deploy:r0"]
    assert newest("2026-07-23T10:01:59Z") == ["deploy:r0"]  # r1 finished at 10:02:00
    assert newest("2026-06-01T09:59:59Z") == []
    # Another tenant's subject reads none of them.
    eve = load_subject(ex, "globex/user:eve", "incident_investigation", NOW)
    params = {"service_id": "svc:payment-api", "to": "2026-12-01T00:00:00Z"}
    assert run(ex, eve, "latest_deployments", "deployment_time", params=params).rows == []


def test_deployments_and_change_events_in_window(ex: TemplateExecutor, bob: Subject) -> None:
    window = {"from": "2026-07-23T00:00:00Z", "to": "2026-07-23T23:59:59Z"}
    deps = run(
        ex,
        bob,
        "deployments_in_window",
        "deployment_time",
        params={"service_id": "svc:payment-api", **window},
    )
    assert ids(deps) == ["deploy:r1"]
    assert deps.rows[0].context["deployed_at"] == at("2026-07-23T10:02:00Z")
    for options, params in [({}, {}), ({"scope": "service"}, {"service_id": "svc:payment-api"})]:
        changes = run(
            ex,
            bob,
            "change_events_in_window",
            "change_event",
            params={**window, **params},
            options=options,
        )
        assert ids(changes) == ["change:cfg-1"]
        assert changes.rows[0].context["at"] == at("2026-07-23T09:55:00Z")


def test_calls_read_together_give_the_rows_of_each_call_alone(
    ex: TemplateExecutor, bob: Subject
) -> None:
    window = {"from": "2026-07-23T00:00:00Z", "to": "2026-07-23T23:59:59Z"}
    steps = [
        PlanStep(
            template_id="deployments_in_window",
            evidence_type="deployment_time",
            params={"service_id": "svc:payment-api", **window},
        ),
        PlanStep(
            template_id="fulltext_search",
            evidence_type="document",
            params={"query": "payment"},
        ),
        PlanStep(
            template_id="ownership_over_time",
            evidence_type="ownership",
            params={"service_id": "svc:payment-api"},
        ),
    ]
    together = ex.run_together(steps, bob, NOW)
    alone = [ex.run(step, bob, NOW) for step in steps]

    def seen(result: ToolResult) -> dict[str, Any]:
        return result.model_dump(exclude={"duration_ms"})

    assert [seen(r) for r in together] == [seen(r) for r in alone]
    assert all(r.rows for r in together)
    assert all(r.started_ns for r in together)


def test_incident_context(ex: TemplateExecutor, bob: Subject) -> None:
    result = run(
        ex, bob, "incident_context", "affected_service", params={"incident_id": "incident:INC-1"}
    )
    parts = sorted((r.context["part"], r.element.element_id) for r in result.rows)
    assert parts == [
        ("affected_service", "AFFECTED_BY|svc:payment-api|incident:INC-1"),
        ("alert", "alert:HighErrorRate"),
        ("error_code", "EMITTED|svc:payment-api|err:PAY-4097"),
        ("incident", "incident:INC-1"),
    ]
    err = next(r for r in result.rows if r.context["part"] == "error_code")
    assert err.context["first_seen"] == at("2026-07-23T10:04:00Z")
    assert err.element.supports == ("error_first_seen",)


def test_runbooks_with_version_chain_and_replacement(ex: TemplateExecutor, bob: Subject) -> None:
    for anchor, anchor_id in [("service", "svc:payment-api"), ("alert", "alert:HighErrorRate")]:
        result = run(
            ex,
            bob,
            "runbooks_for",
            "runbook",
            params={"anchor_id": anchor_id},
            options={"anchor": anchor},
        )
        got = {r.element.element_id: r.element.replacement for r in result.rows}
        assert got == {
            "runbook:payment-recovery@v2": "runbook:payment-recovery@v3",
            "runbook:payment-recovery@v3": None,
        }, anchor
        assert all(r.element.type == "Runbook" for r in result.rows)
    # The audit-only policy governs the service but is invisible for this purpose.
    assert "policy:audit-only" not in got


def test_purpose_hides_elements_of_sources_not_allowed_for_it(ex: TemplateExecutor) -> None:
    audit = load_subject(ex, "acme/user:alice", "audit", NOW)
    result = run(ex, audit, "runbooks_for", "policy", params={"anchor_id": "svc:payment-api"})
    assert "policy:audit-only" in ids(result)
    alice = load_subject(ex, "acme/user:alice", "incident_investigation", NOW)
    result = run(ex, alice, "runbooks_for", "policy", params={"anchor_id": "svc:payment-api"})
    assert "policy:audit-only" not in ids(result)


def test_documents_are_redacted_without_pii_and_retracted_ones_vanish(
    ex: TemplateExecutor, alice: Subject, bob: Subject
) -> None:
    mine = run(ex, bob, "documents_about", "document", params={"entity_id": "svc:payment-api"})
    # doc:note is retracted; the runbook applies to the service.
    assert ids(mine) == ["doc:postmortem-1", "runbook:payment-recovery@v3"]
    doc = mine.rows[0].element
    assert doc.redacted and "[REDACTED]" in (doc.content or "")
    assert "jane.doe" not in mine.model_dump_json()
    assert "content" not in doc.props and "search_text" not in doc.props
    full = run(ex, alice, "documents_about", "document", params={"entity_id": "svc:payment-api"})
    assert not full.rows[0].element.redacted
    assert "jane.doe@example.com" in (full.rows[0].element.content or "")


def test_fulltext_search_filters_after_the_index(ex: TemplateExecutor, bob: Subject) -> None:
    result = run(ex, bob, "fulltext_search", "document", params={"query": "payment-api"})
    assert "svc:payment-api" in ids(result)
    assert all(r.score is not None and r.score > 0 for r in result.rows)
    eve = load_subject(ex, "globex/user:eve", "incident_investigation", NOW)
    theirs = run(ex, eve, "fulltext_search", "document", params={"query": "payment recovery"})
    assert all(not i.startswith("runbook:") for i in ids(theirs))
    # PII is not searchable by a subject who may only read the redacted text.
    assert run(ex, bob, "fulltext_search", "document", params={"query": "jane.doe"}).rows == []


def test_version_history_shows_superseded_and_retracted_records(
    ex: TemplateExecutor, bob: Subject
) -> None:
    result = run(ex, bob, "version_history", "entity", params={"element_id": "doc:note"})
    assert [(r.element.version, r.element.status) for r in result.rows] == [
        (1, "active"),
        (2, "retracted"),
    ]
    assert result.rows[0].element.superseded_at == at("2026-05-01T00:00:00Z")
    rels = run(
        ex,
        bob,
        "version_history",
        "entity",
        params={"element_id": "DEPENDS_ON|svc:payment-api|svc:ledger"},
        options={"kind": "relationship"},
    )
    assert [r.element.version for r in rels.rows] == [1]


def test_truncation_is_reported_never_silent(ex: TemplateExecutor, bob: Subject) -> None:
    result = run(
        ex,
        bob,
        "ownership_over_time",
        "ownership",
        params={"service_id": "svc:payment-api"},
        limit=1,
    )
    assert result.row_count == 1 and result.truncated
    exact = run(
        ex,
        bob,
        "ownership_over_time",
        "ownership",
        params={"service_id": "svc:payment-api"},
        limit=2,
    )
    assert exact.row_count == 2 and not exact.truncated


def test_tool_result_records_template_identity_and_plan_params(
    ex: TemplateExecutor, bob: Subject
) -> None:
    result = run(
        ex,
        bob,
        "deployments_in_window",
        "deployment_time",
        params={
            "service_id": "svc:payment-api",
            "from": "2026-07-23T00:00:00+02:00",
            "to": "2026-07-24T00:00:00Z",
        },
    )
    assert result.ref == "deployments_in_window@4"  # a plan without a version: the newest
    assert result.template_hash.startswith("sha256:")
    assert result.params == {
        "service_id": "svc:payment-api",
        "from": "2026-07-23T00:00:00+02:00",
        "to": "2026-07-24T00:00:00Z",
    }
    assert "tenant" not in result.params and result.duration_ms >= 0
    ToolResult.model_validate_json(result.model_dump_json())


def test_tampered_compiled_text_is_refused(ex: TemplateExecutor, bob: Subject) -> None:
    compiled = ex.compile(
        PlanStep(template_id="entity_resolution", evidence_type="entity", params={"text": "a"})
    )
    forged = CompiledQuery.model_validate(
        {
            **compiled.model_dump(),
            "text": "MATCH (n) DETACH DELETE n RETURN 1 AS element LIMIT $limit",
        }
    )
    before = graph_fingerprint(ex.driver)
    with pytest.raises(TemplateRefused, match="does not match the allowlisted rendering"):
        ex.run(forged, bob, NOW)
    assert graph_fingerprint(ex.driver) == before


@pytest.mark.parametrize(
    "value",
    [
        "x' OR 1=1 //",
        "svc:payment-api'}) DETACH DELETE n //",
        "`KG`) DETACH DELETE (n",
        "LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l",
        "CALL dbms.security.listUsers() YIELD username RETURN username",
        "svc:payment\u2010api",
        "\uff5d) DETACH DELETE n",
        "payment* OR *:* AND tenant:globex",
    ],
)
def test_hostile_values_are_inert(ex: TemplateExecutor, bob: Subject, value: str) -> None:
    before = graph_fingerprint(ex.driver)
    for template_id, evidence, name in [
        ("entity_resolution", "entity", "text"),
        ("fulltext_search", "document", "query"),
        ("documents_about", "document", "entity_id"),
        ("version_history", "entity", "element_id"),
    ]:
        result = run(ex, bob, template_id, evidence, params={name: value})
        assert all(r.element.props.get("tenant") is None for r in result.rows)
        assert all(not r.element.element_id.startswith("svc:vault") for r in result.rows)
    try:  # fuzzy terms: letters and digits only, or refused when there are none
        fuzzy = run(ex, bob, "name_suggestions", "entity", params={"text": value})
    except TemplateRefused:
        pass
    else:
        assert all(not r.element.element_id.startswith("svc:vault") for r in fuzzy.rows)
    assert graph_fingerprint(ex.driver) == before


def test_one_megabyte_string_is_refused_before_neo4j(ex: TemplateExecutor, bob: Subject) -> None:
    with pytest.raises(TemplateRefused, match="at most 500 characters"):
        run(ex, bob, "fulltext_search", "document", params={"query": "a" * 1_048_576})


def test_a_dead_database_is_each_calls_error_even_before_its_first_proof() -> None:
    # A new process whose templates are not proven yet meets a database that is down.
    dead = neo4j.GraphDatabase.driver(
        "bolt://127.0.0.1:9",
        auth=("neo4j", "unused"),
        connection_timeout=1.0,
        max_transaction_retry_time=0.5,
    )
    try:
        ex = TemplateExecutor(dead, proofs=ReadOnlyProofs(None))
        subject = Subject(id="user:bob", tenant="acme", purpose="incident_investigation")
        owner = PlanStep(
            template_id="ownership_over_time",
            evidence_type="ownership",
            params={"service_id": "svc:payment-api"},
        )
        runbooks = PlanStep(
            template_id="runbooks_for",
            evidence_type="runbook",
            params={"anchor_id": "svc:payment-api"},
            options={"anchor": "service"},
        )
        degraded = ex.run(owner, subject, NOW, raise_on_error=False)
        assert degraded.error and degraded.error.startswith("Neo4j is unavailable")
        assert degraded.rows == []
        together = ex.run_together([owner, runbooks], subject, NOW, raise_on_error=False)
        assert [r.template_id for r in together] == ["ownership_over_time", "runbooks_for"]
        assert all(r.error and r.error.startswith("Neo4j is unavailable") for r in together)
        with pytest.raises(Neo4jUnavailable) as err:
            ex.run(owner, subject, NOW)
        assert err.value.exit_code == 4
    finally:
        dead.close()


def test_timeout_is_neo4j_unavailable(
    ex: TemplateExecutor, bob: Subject, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The template's own 0.2 s, even where INVESTIGATOR_READ_TIMEOUT gives every read more
    # (the module's executor read it when it was made): else nothing here times out.
    monkeypatch.setattr(ex, "read_timeout_s", None)
    # A dense clique makes 3-hop neighbourhoods slow (~10^6 paths); the server cancels the
    # transaction at its next timeout check, well before the query would finish.
    ex.driver.execute_query(
        "UNWIND range(1, 90) AS i CREATE (:KG:Service {id: 'svc:clique-' + toString(i), "
        "tenant: 'acme', acl: [], purposes: ['incident_investigation'], status: 'active', "
        "recorded_at: datetime('2026-01-01T00:00:00Z'), version: 1})"
    )
    ex.driver.execute_query(
        "MATCH (a:Service), (b:Service) WHERE a.id STARTS WITH 'svc:clique-' "
        "AND b.id STARTS WITH 'svc:clique-' AND a <> b "
        "CREATE (a)-[:DEPENDS_ON {key: a.id + b.id, tenant: 'acme', acl: [], version: 1, "
        "purposes: ['incident_investigation'], status: 'active', "
        "recorded_at: datetime('2026-01-01T00:00:00Z')}]->(b)"
    )
    compiled = ex.compile(
        PlanStep(
            template_id="dependency_neighbourhood",
            evidence_type="dependency",
            params={"start_id": "svc:clique-1"},
            options={"hops": 3},
        )
    )
    tiny = compiled.model_copy(update={"timeout_s": 0.2})
    try:
        with pytest.raises(Neo4jUnavailable, match="timed out") as err:
            ex.run(tiny, bob, NOW)
        assert err.value.exit_code == 4
        degraded = ex.run(tiny, bob, NOW, raise_on_error=False)
        assert degraded.error and "timed out" in degraded.error and degraded.rows == []

        # Read together with quick calls, the timeout stays the slow call's own.
        quick = ex.compile(
            PlanStep(
                template_id="ownership_over_time",
                evidence_type="ownership",
                params={"service_id": "svc:payment-api"},
            )
        )
        together = ex.run_together([quick, tiny, quick], bob, NOW, raise_on_error=False)
        alone = ex.run(quick, bob, NOW)
        assert [r.error is None for r in together] == [True, False, True]
        assert together[1].error and "timed out" in together[1].error
        assert together[0].rows == together[2].rows == alone.rows and alone.rows
        with pytest.raises(Neo4jUnavailable, match="timed out"):
            ex.run_together([quick, tiny], bob, NOW)
    finally:
        ex.driver.execute_query(
            "MATCH (n:Service) WHERE n.id STARTS WITH 'svc:clique-' DETACH DELETE n"
        )


class FirstTriesTimeOut(TemplateExecutor):
    """The real executor, whose first `fail` reads are cancelled as Neo4j cancels a read
    that spent its timeout planning on a just-started server; later reads go to Neo4j."""

    def __init__(self, driver: neo4j.Driver, fail: int) -> None:
        super().__init__(driver)
        self.fail = fail
        self.timeouts: list[float] = []

    def _read(
        self, text: str, parameters: dict[str, Any], timeout_s: float, fetch: int
    ) -> list[neo4j.Record]:
        self.timeouts.append(timeout_s)
        if len(self.timeouts) <= self.fail:
            raise QueryTimedOut(f"query timed out after {timeout_s:g} s and was cancelled")
        return super()._read(text, parameters, timeout_s, fetch)


def test_the_subject_read_is_tried_again_after_a_timeout(graph: neo4j.Driver) -> None:
    # Often the first query after `db start`: it used to fail the user's first question.
    ex = FirstTriesTimeOut(graph, fail=1)
    subject = load_subject(ex, "acme/user:alice", "incident_investigation", NOW)
    assert (subject.tenant, subject.id) == ("acme", "user:alice")
    assert ex.timeouts == [5.0, 5.0 * RETRY_TIMEOUT_FACTOR]


def test_a_subject_read_that_times_out_twice_is_neo4j_unavailable(graph: neo4j.Driver) -> None:
    ex = FirstTriesTimeOut(graph, fail=2)
    with pytest.raises(Neo4jUnavailable, match="timed out after 20 s"):
        load_subject(ex, "acme/user:alice", "incident_investigation", NOW)
    assert len(ex.timeouts) == 2


def test_a_template_read_is_tried_again_with_more_time(graph: neo4j.Driver, alice: Subject) -> None:
    ex = FirstTriesTimeOut(graph, fail=1)
    step = PlanStep(
        template_id="ownership_over_time",
        evidence_type="ownership",
        params={"service_id": "svc:payment-api"},
    )
    retried = ex.run(step, alice, NOW)
    assert retried.error is None and retried.rows
    assert retried.rows == TemplateExecutor(graph).run(step, alice, NOW).rows
    assert ex.timeouts[1] == ex.timeouts[0] * RETRY_TIMEOUT_FACTOR
