"""Replay end to end: real investigations over the demo KG, recorded, then re-executed.

Covers the issue's list: complete lineage, replay verifies, a later KG correction does not
break replay (known_at), a purge is drift, tampering/deletion fail with the place named,
idempotency, an interrupted run, and the label separation between KG and Context Graph.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import neo4j
import pytest
from test_context_graph_support import tool_call

from cypher_templates.executor import _PRINCIPAL_QUERY
from cypher_templates.registry import TemplateRegistry
from graph_schema.bundle import load_bundle
from graph_schema.schema_ddl import apply_schema
from graph_schema.writer import ingest_bundle
from investigator.context_graph import CtxKind, RunRecorder, RunRequest, load_lineage
from investigator.context_graph.replay import replay_run
from investigator.errors import BadInput
from investigator.investigation import InvestigationRequest, InvestigationResult, investigate

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO / "datasets" / "payments-incident"

QUESTION = (
    "Why did payment authorization fail with no database connection available on payment-api?"
)
AS_OF = datetime(2026, 7, 23, 10, 30, tzinfo=UTC)
PURGED_DOC = "doc:postmortem-2026-07-23-payments"
CORRECTED = "change:risk-rules-RR-2026-07-23a"

CORRECTION = """
tenant: acme
nodes:
  - id: change:risk-rules-RR-2026-07-23a
    label: ChangeEvent
    name: risk rule publication RR-2026-07-23a
    acl: [internal]
    source_id: src:risk-console
    source_version: "publication-5531-corrected"
    observed_at: "2026-07-23T10:02:21Z"
    valid_from: "2026-07-23T10:02:21Z"
    method: change_feed
    confidence: 1.0
    props: {change_type: risk_rule_publication, at: "2026-07-23T10:02:21Z", actor: risk-ops,
            summary: "CORRECTED: rule set RR-2026-07-23a was published to staging only"}
"""


@pytest.fixture()
def demo_kg(clean_db: neo4j.Driver) -> neo4j.Driver:
    """The payments-incident demo KG, freshly loaded (tests here change it)."""
    apply_schema(clean_db)
    ingest_bundle(clean_db, load_bundle(DATASET))
    return clean_db


def _investigate(driver: neo4j.Driver, **kw: object) -> InvestigationResult:
    fields: dict[str, object] = {
        "question": QUESTION,
        "service_id": "svc:payment-api",
        "subject_id": "user:alice",
        "purpose": "incident_investigation",
        "as_of": AS_OF,
    }
    fields.update(kw)
    return investigate(
        InvestigationRequest.model_validate(fields), driver=driver, recorder=RunRecorder(driver)
    )


def _replay_json(invoke, run_id: str) -> tuple[int, dict, str]:  # type: ignore[no-untyped-def]
    res = invoke("replay", run_id, "--json")
    return res.code, json.loads(res.out), res.err


def test_an_investigation_has_a_complete_lineage(demo_kg: neo4j.Driver) -> None:
    result = _investigate(demo_kg)
    assert result.claims and result.evidence
    lineage = load_lineage(demo_kg, result.run_id)
    kinds = {n.kind for n in lineage.nodes}
    assert {
        "run",
        "agent",
        "goal",
        "plan",
        "tool_call",
        "evidence",
        "pack",
        "claim",
        "outcome",
    } <= kinds
    # Every claim reaches each of its evidence, which reaches its tool call, the plan, the goal.
    records, _, _ = demo_kg.execute_query(
        """
        MATCH (c:CtxClaim {run_id: $r}) UNWIND c.evidence_ids AS eid
        OPTIONAL MATCH path = (c)-[:WAS_DERIVED_FROM]->(:CtxEvidence {evidence_id: eid})
            -[:WAS_GENERATED_BY]->(:CtxToolCall)-[:USED]->(:CtxPlan)
            -[:WAS_DERIVED_FROM]->(:CtxGoal)-[:WAS_GENERATED_BY]->(:CtxRun {run_id: $r})
        RETURN eid, path IS NOT NULL AS reached
        """,
        r=result.run_id,
    )
    assert records and all(r["reached"] for r in records), records
    # Every evidence and every tool call is anchored, and the claims cite only pack evidence.
    records, _, _ = demo_kg.execute_query(
        """
        MATCH (n:CtxEvent {run_id: $r}) WHERE n:CtxEvidence OR n:CtxToolCall
        OPTIONAL MATCH (n)-[:WAS_GENERATED_BY|USED]->(up)
        RETURN n.kind AS kind, count(up) AS ups
        """,
        r=result.run_id,
    )
    assert all(r["ups"] >= 1 for r in records), records
    pack = lineage.of_kind(CtxKind.PACK)[-1]
    assert pack.properties["pack_hash"] == result.pack_hash
    cited = {e for c in result.claims for e in c.evidence_ids}
    assert cited <= set(pack.properties["evidence_ids"])
    assert lineage.run_properties is not None
    assert lineage.run_properties["status"] == result.status.value


def test_replay_verifies(demo_kg: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    result = _investigate(demo_kg)
    code, doc, err = _replay_json(invoke, result.run_id)
    assert code == 0, (doc, err)
    assert doc["run_id"] == result.run_id
    assert (doc["verified"], doc["pack_hash_match"], doc["chain_valid"], doc["drift"]) == (
        True,
        True,
        True,
        [],
    )
    assert doc["tool_calls"] >= 1 and doc["tool_calls_matched"] == doc["tool_calls"]
    assert doc["evidence"] == doc["evidence_matched"] == len(result.evidence)
    assert doc["replayed_pack_hash"] == result.pack_hash
    text = invoke("replay", result.run_id)
    assert text.code == 0 and "verified:        true" in text.out


def test_replay_after_a_kg_correction_still_verifies(  # type: ignore[no-untyped-def]
    demo_kg: neo4j.Driver, cli_env, invoke, tmp_path: Path
) -> None:
    result = _investigate(demo_kg)
    assert CORRECTED in {e.element_id for e in result.evidence}
    (tmp_path / "correction.yaml").write_text(CORRECTION)
    ingest_bundle(
        demo_kg,
        load_bundle(tmp_path / "correction.yaml"),
        now=datetime.now(UTC) + timedelta(seconds=1),
    )
    records, _, _ = demo_kg.execute_query(
        "MATCH (n:KG {id: $id}) "
        "RETURN count(n) AS c, sum(CASE WHEN n.superseded_at IS NULL THEN 1 ELSE 0 END) AS cur",
        id=CORRECTED,
    )
    assert (records[0]["c"], records[0]["cur"]) == (2, 1)  # the old record is superseded, kept
    code, doc, err = _replay_json(invoke, result.run_id)
    assert code == 0, (doc, err)
    assert doc["verified"] and doc["pack_hash_match"] and doc["drift"] == []
    # A new run sees the correction, so the correction did touch what the first run used.
    later = _investigate(demo_kg)
    assert later.pack_hash != result.pack_hash


def test_a_purge_is_reported_as_drift(demo_kg: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    result = _investigate(demo_kg)
    assert PURGED_DOC in {e.element_id for e in result.evidence}
    # A legal purge as docs/contracts.md defines it: content removed in place, marker left.
    demo_kg.execute_query(
        "MATCH (n:KG {id: $id}) "
        "SET n.content = null, n.redacted_content = null, n.purged_at = datetime()",
        id=PURGED_DOC,
    )
    code, doc, err = _replay_json(invoke, result.run_id)
    assert code == 1
    assert doc["verified"] is False and doc["chain_valid"] is True
    purged = [d for d in doc["drift"] if d["kind"] == "data_purged"]
    assert purged and PURGED_DOC in purged[0]["detail"] and purged[0]["tool_call_id"]
    assert err.startswith("error: replay not verified:") and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("label", "change"),
    [
        ("CtxEvidence", "SET n.content_hash = 'sha256:forged'"),
        ("CtxToolCall", "SET n.rows_hash = 'sha256:forged'"),
        ("CtxClaim", "SET n.statement = 'the release certainly caused it'"),
        ("CtxPack", "SET n.payload = '{}'"),
        ("CtxRun", "SET n.known_at = '2099-01-01T00:00:00Z'"),
    ],
)
def test_tampering_makes_replay_fail_naming_the_place(  # type: ignore[no-untyped-def]
    demo_kg: neo4j.Driver, cli_env, invoke, label: str, change: str
) -> None:
    result = _investigate(demo_kg)
    # The test plays the attacker with a fixed statement from the table above.
    records, _, _ = demo_kg.execute_query(
        "MATCH (n:CtxEvent {run_id: $r}) WHERE $label IN labels(n) "
        "WITH n ORDER BY n.seq LIMIT 1 " + change + " RETURN n.seq AS seq, n.kind AS kind",
        r=result.run_id,
        label=label,
    )
    seq, kind = records[0]["seq"], records[0]["kind"]
    code, doc, err = _replay_json(invoke, result.run_id)
    assert code == 1 and doc["verified"] is False and doc["chain_valid"] is False
    place = f"run {result.run_id} seq {seq} ({kind})"
    assert any(p.startswith(place) for p in doc["problems"]), doc["problems"]
    assert place in err


def test_deleting_a_recorded_node_makes_replay_fail_naming_it(  # type: ignore[no-untyped-def]
    demo_kg: neo4j.Driver, cli_env, invoke
) -> None:
    result = _investigate(demo_kg)
    records, _, _ = demo_kg.execute_query(
        "MATCH (n:CtxToolCall {run_id: $r}) WITH n ORDER BY n.seq DESC LIMIT 1 "
        "WITH n, n.seq AS seq DETACH DELETE n RETURN seq",
        r=result.run_id,
    )
    seq = records[0]["seq"]
    code, doc, err = _replay_json(invoke, result.run_id)
    assert code == 1 and doc["chain_valid"] is False
    assert f"run {result.run_id} seq {seq} (tool_call)" in err
    assert (
        f"run {result.run_id} seq {seq} (tool_call): recorded node is missing (deleted)"
        in doc["problems"]
    )


def test_idempotency_key(demo_kg: neo4j.Driver) -> None:
    first = _investigate(demo_kg, idempotency_key="INC-4097-review")
    again = _investigate(demo_kg, idempotency_key="INC-4097-review")
    assert again.run_id == first.run_id and again.pack_hash == first.pack_hash
    assert again.reused_run and not first.reused_run
    with pytest.raises(BadInput, match="different request"):
        _investigate(demo_kg, idempotency_key="INC-4097-review", question="Who owned payment-api?")
    records, _, _ = demo_kg.execute_query("MATCH (r:CtxRun) RETURN count(r) AS c")
    assert records[0]["c"] == 1


def test_an_interrupted_run_does_not_verify(demo_kg: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    rec = RunRecorder(demo_kg)
    start = rec.start_run(
        RunRequest(
            question=QUESTION,
            subject_id="user:alice",
            purpose="incident_investigation",
            as_of=AS_OF,
        )
    )
    rec.record_tool_call(start.run_id, tool_call("tc-1", []))
    code, doc, err = _replay_json(invoke, start.run_id)
    assert code == 1 and doc["verified"] is False and doc["chain_valid"] is True
    assert "run_incomplete" in err
    assert doc["status"] == "incomplete"
    assert any(d["kind"] == "run_incomplete" for d in doc["drift"])


def test_template_missing_or_changed_is_drift(demo_kg: neo4j.Driver) -> None:
    registry = TemplateRegistry.load()
    spec = registry.specs()[0]
    rendered = registry.render(spec, {})
    rec = RunRecorder(demo_kg)
    start = rec.start_run(
        RunRequest(
            question=QUESTION,
            subject_id="user:alice",
            purpose="incident_investigation",
            as_of=AS_OF,
        )
    )
    gone = tool_call("tc-gone", []).model_copy(
        update={
            "template_id": spec.id,
            "template_version": 999,
            "template_hash": rendered.template_hash,
        }
    )
    changed = tool_call("tc-changed", []).model_copy(
        update={
            "template_id": spec.id,
            "template_version": spec.version,
            "template_hash": "sha256:" + "0" * 64,
            "options": {},
        }
    )
    rec.record_tool_call(start.run_id, gone)
    rec.record_tool_call(start.run_id, changed)
    rec.finish_run(start.run_id, "complete", "evidence_sufficient")
    report = replay_run(demo_kg, start.run_id)
    kinds = {(d.tool_call_id, d.kind) for d in report.drift}
    assert ("tc-gone", "template_missing") in kinds
    assert ("tc-changed", "template_changed") in kinds
    assert report.chain_valid and not report.verified


@pytest.mark.parametrize("run_id", ["run-unknown", "z" * 300, "run-\n2", ""])
def test_replay_of_an_unknown_or_malformed_run_is_exit_2(cli_env, invoke, run_id: str) -> None:  # type: ignore[no-untyped-def]
    for args in (("replay", run_id), ("replay", run_id, "--json")):
        res = invoke(*args)
        assert res.code == 2, res
        assert res.out == "" and len(res.err.strip().splitlines()) == 1


def test_kg_templates_never_read_ctx_labels() -> None:
    registry = TemplateRegistry.load()
    for spec in registry.specs():
        for variant in spec.variants():
            text = registry.render(spec, variant).text
            assert "Ctx" not in text, spec.ref
    assert "Ctx" not in _PRINCIPAL_QUERY


def test_idempotency_key_through_the_cli(demo_kg: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    args = [
        "investigate",
        QUESTION,
        "--service",
        "svc:payment-api",
        "--as-of",
        "2026-07-23T10:30:00Z",
        "--subject",
        "user:alice",
        "--idempotency-key",
        "ticket-PAY-4097",
        "--json",
    ]
    first = invoke(*args)
    assert first.code == 0, first
    again = invoke(*args)
    assert again.code == 0, again
    assert json.loads(again.out)["run_id"] == json.loads(first.out)["run_id"]
    changed = invoke(*[a if a != QUESTION else "Who owned payment-api then?" for a in args])
    assert changed.code == 2 and changed.out == ""
    assert len(changed.err.strip().splitlines()) == 1 and "different request" in changed.err
    runs = json.loads(invoke("runs", "--json").out)["runs"]
    assert len(runs) == 1
    # The recorded run of a real investigation traces as a tree and replays as verified.
    run_id = runs[0]["run_id"]
    tree = invoke("trace", run_id).out
    assert "tool_call tc-" in tree and "chain: valid" in tree
    assert invoke("replay", run_id).code == 0


def test_a_refused_run_replays_as_refused(demo_kg: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    res = invoke(
        "investigate",
        QUESTION,
        "--as-of",
        "2026-07-23T10:30:00Z",
        "--subject",
        "user:carol",
        "--purpose",
        "audit",
        "--json",
    )
    assert res.code == 3, res
    (run,) = json.loads(invoke("runs", "--json").out)["runs"]
    assert (run["status"], run["stop_reason"]) == ("refused", "not_authorized")
    code, doc, err = _replay_json(invoke, run["run_id"])
    assert code == 0 and doc["verified"], (doc, err)
    # Granting the purpose afterwards (in place, for the test) makes the refusal drift.
    demo_kg.execute_query(
        "MATCH (p:KG:Principal {id: 'user:carol'}) SET p.purposes = p.purposes + ['audit']"
    )
    code, doc, err = _replay_json(invoke, run["run_id"])
    assert code == 1 and [d["kind"] for d in doc["drift"]] == ["refusal_not_reproduced"]


def test_a_consistently_rewritten_chain_is_still_caught_by_re_execution(  # type: ignore[no-untyped-def]
    demo_kg: neo4j.Driver,
) -> None:
    from investigator.context_graph.chain import node_hash

    result = _investigate(demo_kg)
    lineage = load_lineage(demo_kg, result.run_id)
    claim = lineage.of_kind(CtxKind.CLAIM)[0]
    # The attacker rewrites a claim and re-hashes every node after it, so the chain holds.
    forged = dict(claim.properties)
    payload = json.loads(forged["payload"])
    payload["statement"] = forged["statement"] = "The release certainly caused the outage."
    forged["payload"] = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    rewritten = {claim.seq: forged}
    prev_hash = None
    for node in lineage.nodes:
        props = dict(rewritten.get(node.seq, node.properties))
        if node.seq > claim.seq:
            props["prev_hash"] = prev_hash
        if node.seq >= claim.seq:
            props["hash"] = node_hash(props, node.kind)
            rewritten[node.seq] = props
        prev_hash = props["hash"]
    for seq, props in rewritten.items():
        demo_kg.execute_query(
            "MATCH (n:CtxEvent {run_id: $r, seq: $s}) SET n = $p", r=result.run_id, s=seq, p=props
        )
    demo_kg.execute_query(
        "MATCH (n:CtxRun {run_id: $r}) SET n.head_hash = $h", r=result.run_id, h=prev_hash
    )
    report = replay_run(demo_kg, result.run_id)
    assert report.chain_valid, report.problems
    assert not report.verified
    assert "claims_changed" in {d.kind for d in report.drift}
