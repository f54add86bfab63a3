"""OpenTelemetry spans of a run (the SDK's in-memory exporter) and the PROV export of its
lineage (read back with the `prov` package), on the demo dataset in the real Neo4j."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import neo4j
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prov.model import (
    ProvActivity,
    ProvAgent,
    ProvAssociation,
    ProvCommunication,
    ProvDerivation,
    ProvDocument,
    ProvEntity,
    ProvGeneration,
    ProvUsage,
)

from cypher_templates.subject import SubjectRef
from graph_schema.bundle import load_bundle
from graph_schema.schema_ddl import apply_schema
from graph_schema.writer import ingest_bundle
from investigator import telemetry
from investigator.context_graph import load_lineage
from investigator.context_graph.prov import record_id, record_kind, subject_agent_id
from investigator.serving.backend import InvestigateInput, RunbookInput, ServingBackend
from investigator.settings import ConnectionSettings

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO / "datasets" / "payments-incident"
QUESTION = (
    "Was the 10:02 release of payment-api related to the PAY-4097 errors? "
    "Who owned the service at that moment? Which runbook version applied?"
)
BOB = SubjectRef(tenant="acme", id="user:bob")
AS_OF = "2026-07-23T10:03:00Z"
ALICE = SubjectRef(tenant="acme", id="user:alice")
# An XML NCName in ASCII: what a QName's local part may be (PROV-XML writes ids as xsd:QName).
NCNAME = re.compile(r"[A-Za-z_][A-Za-z0-9._-]*")


@pytest.fixture(scope="module")
def backend(driver: neo4j.Driver, neo4j_settings: ConnectionSettings) -> Iterator[ServingBackend]:
    with driver.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()
    apply_schema(driver)
    ingest_bundle(driver, load_bundle(DATASET))
    driver.execute_query("CALL db.awaitIndexes(300)")
    yield ServingBackend(neo4j_settings, driver=driver)


@pytest.fixture()
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.use_tracer_provider(provider)
    yield exporter
    telemetry.use_tracer_provider(None)


def _investigate(backend: ServingBackend, subject: SubjectRef = ALICE) -> dict[str, Any]:
    doc = json.loads(
        backend.investigate(
            subject,
            InvestigateInput(
                question=QUESTION,
                service="svc:payment-api",
                as_of="2026-07-23T10:03:00Z",
                known_at="2026-08-01T00:00:00Z",
                deadline_seconds=600,
            ),
        )
    )
    assert isinstance(doc, dict)
    return doc


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_telemetry_is_off_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in telemetry._ENABLING_ENV:
        monkeypatch.delenv(name, raising=False)
    assert not telemetry.env_requests_traces()
    assert telemetry.env_requests_traces({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"})
    assert not telemetry.env_requests_traces(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}
    )
    assert not telemetry.env_requests_traces({"OTEL_TRACES_EXPORTER": "none"})
    with telemetry.run_span("investigate", question="secret") as span:
        assert not span.recording


def test_one_invoke_agent_span_per_run_and_one_execute_tool_span_per_template_call(
    backend: ServingBackend, spans: InMemorySpanExporter
) -> None:
    doc = _investigate(backend)
    finished = spans.get_finished_spans()
    agents = [s for s in finished if s.attributes["gen_ai.operation.name"] == "invoke_agent"]
    tools = [s for s in finished if s.attributes["gen_ai.operation.name"] == "execute_tool"]
    assert len(agents) == 1
    run = agents[0]
    assert run.name == "invoke_agent investigator"
    assert run.attributes["gen_ai.agent.name"] == "investigator"
    assert run.attributes["gen_ai.conversation.id"] == doc["run_id"]
    assert run.attributes["investigator.pack_hash"] == doc["pack_hash"]
    assert run.attributes["investigator.status"] == doc["status"]
    assert run.attributes["investigator.tenant"] == "acme"
    assert run.attributes["investigator.as_of_from"] == "given"  # as the run records it
    assert run.attributes["investigator.gate.admitted"] >= len(doc["evidence"])
    rejected = sum(
        v for k, v in run.attributes.items() if k.startswith("investigator.gate.rejected.")
    )
    assert rejected == run.attributes["investigator.gate.rejected"] >= len(doc["rejected"])

    # One execute_tool span per recorded template call, children of the run's span.
    assert len(tools) == len(doc["tool_calls"])
    by_call = {s.attributes["gen_ai.tool.call.id"]: s for s in tools}
    for call in doc["tool_calls"]:
        span = by_call[call["tool_call_id"]]
        template_id, _, version = call["template"].partition("@")
        assert span.name == f"execute_tool {template_id}"
        assert span.attributes["gen_ai.tool.name"] == template_id
        assert span.attributes["investigator.template.version"] == int(version)
        assert span.attributes["investigator.rows"] == call["row_count"]
        assert span.attributes["investigator.truncated"] == call["truncated"]
        assert span.parent is not None and span.parent.span_id == run.context.span_id
        assert span.context.trace_id == run.context.trace_id

    # Ids, counts and hashes only: no question, no evidence text, no claim statement.
    texts = [QUESTION] + [ev["content"] for ev in doc["evidence"]]
    texts += [c["statement"] for c in doc["claims"]]
    values = [str(v) for s in finished for v in (s.attributes or {}).values()]
    for text in texts:
        for value in values:
            assert text not in value and (len(value) < 24 or value not in text), value


def test_runbook_lookup_emits_its_own_trace(
    backend: ServingBackend, spans: InMemorySpanExporter
) -> None:
    card = json.loads(
        backend.runbook(BOB, RunbookInput(target="alert", value="PaymentApiErrorsHigh"))
    )
    finished = spans.get_finished_spans()
    agents = [s for s in finished if s.attributes["gen_ai.operation.name"] == "invoke_agent"]
    assert [s.attributes["gen_ai.conversation.id"] for s in agents] == [card["run_id"]]
    assert agents[0].attributes["investigator.command"] == "runbook"
    assert agents[0].attributes["investigator.as_of_from"] == "now"  # none given, no text
    tools = [s for s in finished if s.attributes["gen_ai.operation.name"] == "execute_tool"]
    assert tools and {s.context.trace_id for s in tools} == {agents[0].context.trace_id}


def test_a_replays_rerun_span_names_the_replayed_run_not_an_id_no_record_holds(
    backend: ServingBackend, spans: InMemorySpanExporter
) -> None:
    # Before: the re-run's `invoke_agent` span carried the fresh id of an unrecorded
    # session as `gen_ai.conversation.id`: an auditor who traced that id got "unknown run".
    card = json.loads(backend.runbook(BOB, RunbookInput(target="service", value="svc:payment-api")))
    spans.clear()
    report = json.loads(backend.replay(BOB, card["run_id"]))
    assert report["verified"] is True
    agents = [
        s
        for s in spans.get_finished_spans()
        if s.attributes["gen_ai.operation.name"] == "invoke_agent"
    ]
    assert len(agents) == 1
    rerun = agents[0].attributes
    assert rerun["gen_ai.conversation.id"] == card["run_id"]
    assert rerun["investigator.replay_of"] == card["run_id"]
    assert rerun["investigator.recorded"] is False
    assert "investigator.run_id" not in rerun


def test_prov_json_types_the_runs_times_as_xsd_datetime(backend: ServingBackend) -> None:
    # Before: `inv:as_of` and `inv:known_at` were plain strings, which a PROV or RDF reader
    # cannot compare as times (an auditor's "runs answered as of before T").
    card = json.loads(
        backend.runbook(BOB, RunbookInput(target="service", value="svc:payment-api", as_of=AS_OF))
    )
    exported = json.loads(backend.trace(BOB, card["run_id"], "prov-json"))
    run = exported["activity"]["ctx:run-0"]
    assert run["inv:as_of"] == {"$": "2026-07-23T10:03:00+00:00", "type": "xsd:dateTime"}
    assert run["inv:known_at"]["type"] == "xsd:dateTime"
    calls = [a for a in exported["activity"].values() if a["inv:kind"] == "tool_call"]
    assert calls and all(c["inv:as_of"]["type"] == "xsd:dateTime" for c in calls)
    read = ProvDocument.deserialize(content=json.dumps(exported), format="json")
    times = {
        str(k): v
        for r in read.get_records(ProvActivity)
        for k, v in r.attributes
        if str(k) == "inv:as_of"
    }
    assert times["inv:as_of"] == datetime(2026, 7, 23, 10, 3, tzinfo=UTC)


def test_prov_json_reads_back_as_the_context_graph(  # type: ignore[no-untyped-def]
    backend: ServingBackend, driver: neo4j.Driver, cli_env, invoke
) -> None:
    doc = _investigate(backend, ALICE)
    run_id = doc["run_id"]
    result = invoke("trace", run_id, "--subject", "acme/user:alice", "--format", "prov-json")
    assert result.code == 0, result
    prov = ProvDocument.deserialize(content=result.out, format="json")
    lineage = load_lineage(driver, run_id)

    records = {
        str(r.identifier): r for r in prov.get_records((ProvEntity, ProvActivity, ProvAgent))
    }
    kinds = {"entity": ProvEntity, "activity": ProvActivity, "agent": ProvAgent}
    for node in lineage.nodes:
        record = records[record_id(node)]
        assert isinstance(record, kinds[record_kind(node.kind)]), node.kind
        attrs = {str(k): v for k, v in record.attributes}
        assert attrs["inv:hash"] == node.properties["hash"]
        assert attrs["inv:seq"] == node.seq
    # The subject the software agent acted for is an agent too; nothing else is.
    assert set(records) == {record_id(n) for n in lineage.nodes} | {"subject:acme_2Fuser_3Aalice"}
    # The principal id as written rides on the agent; every id is a valid QName (an NCName
    # local part: PROV-XML writes ids as xsd:QName), so strict PROV tools read the export.
    subject_attrs = {str(k): v for k, v in records["subject:acme_2Fuser_3Aalice"].attributes}
    assert subject_attrs["inv:subject"] == "acme/user:alice"
    assert all(NCNAME.fullmatch(name.partition(":")[2]) for name in records), sorted(records)
    provn = prov.serialize(format="provn")
    assert "agent(subject:acme_2Fuser_3Aalice" in provn and "subject:acme/user" not in provn

    names = {
        ProvUsage: "USED",
        ProvGeneration: "WAS_GENERATED_BY",
        ProvDerivation: "WAS_DERIVED_FROM",
        ProvCommunication: "WAS_INFORMED_BY",
        ProvAssociation: "WAS_ASSOCIATED_WITH",
    }
    relations = set()
    for relation in prov.get_records(tuple(names)):
        formal = [str(value) for _, value in relation.formal_attributes[:2]]
        relations.add((names[type(relation)], formal[0], formal[1]))
    seq = {n.seq: record_id(n) for n in lineage.nodes}
    expected = {(e.type, seq[e.from_seq], seq[e.to_seq]) for e in lineage.edges}
    assert relations == expected
    assert {k for k, _, _ in expected} >= {"USED", "WAS_GENERATED_BY", "WAS_DERIVED_FROM"}

    # Ids and hashes only: no recorded text leaves through PROV.
    for text in [QUESTION] + [c["statement"] for c in doc["claims"]]:
        assert text not in result.out
    for value in _strings(json.loads(result.out)):
        for ev in doc["evidence"]:
            assert len(value) < 24 or value not in ev["content"]


def test_a_failing_run_and_tool_call_end_as_errors_without_their_message(
    spans: InMemorySpanExporter,
) -> None:
    from opentelemetry.trace import StatusCode

    secret = "the question text that must not leave"
    with (
        pytest.raises(ValueError),
        telemetry.run_span("investigate", tenant="acme", purpose="audit", run_id="run-1") as run,
    ):
        run.gate_decision("admitted", 2)
        run.gate_decision("acl")
        with telemetry.tool_span("tc-1", "ownership_over_time", 1, round=2) as tool:
            tool.set("rows", 3)
            raise ValueError(secret)
    by_kind = {s.attributes["gen_ai.operation.name"]: s for s in spans.get_finished_spans()}
    run_span, tool_span = by_kind["invoke_agent"], by_kind["execute_tool"]
    assert dict(tool_span.attributes) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "ownership_over_time",
        "gen_ai.tool.call.id": "tc-1",
        "gen_ai.tool.type": "datastore",
        "gen_ai.agent.name": "investigator",
        "investigator.template.id": "ownership_over_time",
        "investigator.template.version": 1,
        "investigator.round": 2,
        "investigator.rows": 3,
        "error.type": "ValueError",
    }
    assert dict(run_span.attributes) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "investigator",
        "investigator.command": "investigate",
        "investigator.tenant": "acme",
        "investigator.purpose": "audit",
        "gen_ai.conversation.id": "run-1",
        "investigator.run_id": "run-1",
        "investigator.gate.admitted": 2,
        "investigator.gate.rejected": 1,
        "investigator.gate.rejected.acl": 1,
        "error.type": "ValueError",
    }
    for span in (run_span, tool_span):
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description == "ValueError"
        assert not span.events  # no recorded exception: its message could quote data
    assert tool_span.parent is not None and tool_span.parent.span_id == run_span.context.span_id
    assert telemetry.current_run_span().recording is False  # the run's handle is gone


def test_a_principal_id_with_odd_characters_is_a_valid_prov_name() -> None:
    # Found by an attacker: `evil/user:q"<&>#{}` became the raw local name (prov warned that
    # its next release rejects it, on stderr of `trace --format prov-json`). Found by an
    # auditor (e22): `acme/user:bob` itself, `/` and `:` in the local part, is no QName, so
    # PROV-XML and PROV-N tools that validate reject the export.
    import warnings

    from prov.model import ProvDocument

    assert subject_agent_id("acme/user:bob") == "subject:acme_2Fuser_3Abob"
    odd_ids = ['evil/user:q"<&>#{}', "acme/user:a b", "acme/user:ü", "9lives/user:x_y@corp"]
    doc = ProvDocument()
    doc.add_namespace("subject", "urn:investigator:subject:")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for odd in ["acme/user:bob", *odd_ids]:
            doc.agent(subject_agent_id(odd), {"prov:label": odd})
    assert subject_agent_id('evil/user:q"<&>#{}') == "subject:evil_2Fuser_3Aq_22_3C_26_3E_23_7B_7D"
    names = [subject_agent_id(odd) for odd in ["acme/user:bob", *odd_ids]]
    assert len(set(names)) == len(names)  # distinct ids stay distinct
    for name in names:
        assert NCNAME.fullmatch(name.removeprefix("subject:")), name
    provn = doc.serialize(format="provn")
    for name in names:
        assert f"agent({name}" in provn, provn
    try:
        import lxml  # noqa: F401  (the `prov[xml]` extra)
    except ImportError:
        return
    xml = doc.serialize(format="xml")
    assert 'prov:id="subject:acme_2Fuser_3Abob"' in xml
