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
from conftest import json_error
from test_context_graph_support import tool_call

from cypher_templates.executor import _PRINCIPAL_QUERY
from cypher_templates.registry import TemplateRegistry
from graph_schema.bundle import load_bundle
from graph_schema.schema_ddl import apply_schema
from graph_schema.writer import ingest_bundle
from investigator.context_graph import CtxKind, RunRecorder, RunRequest, load_lineage
from investigator.decision_code import decision_code
from investigator.errors import BadInput
from investigator.investigation import InvestigationRequest, InvestigationResult, investigate
from investigator.replay import replay_run
from investigator.settings import ConnectionSettings

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO / "datasets" / "payments-incident"

QUESTION = (
    "Why did payment authorization fail with no database connection available on payment-api?"
)
AS_OF = datetime(2026, 7, 23, 10, 30, tzinfo=UTC)
ALICE = ("--subject", "acme/user:alice")
PURGED_DOC = "doc:postmortem-2026-07-23-payments"
REPORT_DOC = "doc:incident-report-2026-07-23-payments"
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
        "subject_id": "acme/user:alice",
        "purpose": "incident_investigation",
        "as_of": AS_OF,
    }
    fields.update(kw)
    return investigate(
        InvestigationRequest.model_validate(fields), driver=driver, recorder=RunRecorder(driver)
    )


def _replay_json(invoke, run_id: str, subject: str = "acme/user:alice") -> tuple[int, dict, str]:  # type: ignore[no-untyped-def]
    res = invoke("replay", run_id, "--json", "--subject", subject)
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
    # Every recorded evidence is matched. A record admitted in one round and later lost a
    # conflict (the chat message against the release's CI/CD record) is recorded evidence
    # but not in the answer's, so the answer holds at most as many.
    assert doc["evidence"] == doc["evidence_matched"] >= len(result.evidence)
    recorded = load_lineage(demo_kg, result.run_id).of_kind(CtxKind.EVIDENCE)
    assert {e.evidence_id for e in result.evidence} <= {
        n.properties.get("evidence_id") for n in recorded
    }
    assert doc["replayed_pack_hash"] == result.pack_hash
    text = invoke("replay", result.run_id, "--subject", "acme/user:alice")
    assert text.code == 0 and "verified:        true" in text.out
    # The run records the code that decided it; the same code re-runs it.
    run = load_lineage(demo_kg, result.run_id).run_properties or {}
    assert run["decision_code"] == decision_code()


def test_an_answer_changed_by_the_code_says_so(  # type: ignore[no-untyped-def]
    demo_kg: neo4j.Driver, cli_env, invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The run is recorded by "older code": its claim rules kept one claim fewer, and it
    # records that code's fingerprint. Replay re-runs it with today's code.
    import investigator.context_graph.recorder as recorder_module
    import investigator.investigation as investigation_module

    older = "sha256:" + "0" * 64
    keep = investigation_module.keep_claims_in_pack
    with monkeypatch.context() as patched:
        patched.setattr(recorder_module, "decision_code", lambda: older)
        patched.setattr(
            investigation_module, "keep_claims_in_pack", lambda c, ids: keep(c, ids)[:-1]
        )
        result = _investigate(demo_kg)
    code, doc, _ = _replay_json(invoke, result.run_id)
    assert code == 1, doc
    kinds = [d["kind"] for d in doc["drift"]]
    assert "claims_changed" in kinds and "decision_code_changed" in kinds, doc["drift"]
    note = next(d for d in doc["drift"] if d["kind"] == "decision_code_changed")
    assert note["detail"].startswith(f"the run was decided by code {older[:19]}, the re-run by ")
    assert "may come from the code, not from the data" in note["detail"]
    # The data did reproduce: every tool call and evidence re-executed identically.
    assert doc["tool_calls_matched"] == doc["tool_calls"]
    assert doc["evidence_matched"] == doc["evidence"]
    text = invoke("replay", result.run_id, "--subject", "acme/user:alice")
    assert "decision_code_changed: the run was decided by code" in text.out


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


def test_a_record_relabelled_after_the_run_is_not_reported_as_purged(  # type: ignore[no-untyped-def]
    demo_kg: neo4j.Driver, cli_env, invoke, tmp_path: Path
) -> None:
    """A record the run cited re-ingested with a label its subject lacks: replay says the
    record is no longer visible to the subject, never that a legal purge happened, and does
    not name the new label (the reader may lack it too)."""
    result = _investigate(demo_kg)
    assert PURGED_DOC in {e.element_id for e in result.evidence}
    documents = (DATASET / "25-acme-documents.yaml").read_text(encoding="utf-8")
    start = documents.index(f"  - id: {PURGED_DOC}")
    acl = documents.index("    acl: [internal, incident]", start)
    relabelled = documents[:acl] + "    acl: [legal-hold]" + documents[acl + 29 :]
    (tmp_path / "relabel.yaml").write_text(relabelled, encoding="utf-8")
    ingest_bundle(
        demo_kg,
        load_bundle(tmp_path / "relabel.yaml"),
        now=datetime.now(UTC) + timedelta(seconds=1),
    )
    code, doc, err = _replay_json(invoke, result.run_id)
    # A routine relabel: the chain verified, what alice may read changed (exit 3).
    assert code == 3 and doc["chain_valid"] is True, (doc, err)
    assert doc["differs_by_grants_only"] is True
    kinds = {d["kind"] for d in doc["drift"]}
    assert "data_purged" not in kinds, doc["drift"]
    gone = [d for d in doc["drift"] if d["kind"] == "data_not_visible"]
    assert gone and gone[0]["tool_call_id"], doc["drift"]
    assert "no longer visible to acme/user:alice" in gone[0]["detail"]
    assert "legal-hold" not in json.dumps(doc) and "legal-hold" not in err
    text = invoke("replay", result.run_id, *ALICE)
    assert "data_not_visible:" in text.out and "purge" not in text.out.replace("not purged", "")


def _relabel_postmortem(driver: neo4j.Driver, tmp_path: Path) -> None:
    """Re-ingest the postmortem with a label no acme principal holds (a relabel, no purge)."""
    documents = (DATASET / "25-acme-documents.yaml").read_text(encoding="utf-8")
    start = documents.index(f"  - id: {PURGED_DOC}")
    acl = documents.index("    acl: [internal, incident]", start)
    relabelled = documents[:acl] + "    acl: [legal-hold]" + documents[acl + 29 :]
    (tmp_path / "relabel.yaml").write_text(relabelled, encoding="utf-8")
    ingest_bundle(
        driver, load_bundle(tmp_path / "relabel.yaml"), now=datetime.now(UTC) + timedelta(seconds=1)
    )


def test_a_relabelled_record_is_one_drift_line_not_also_evidence_changed(  # type: ignore[no-untyped-def]
    demo_kg: neo4j.Driver, cli_env, invoke, tmp_path: Path
) -> None:
    """One cause, one line: the record's `data_not_visible` line at its call is the whole
    story of its evidence, which is not reported again as `evidence_changed`."""
    result = _investigate(demo_kg)
    _relabel_postmortem(demo_kg, tmp_path)
    code, doc, err = _replay_json(invoke, result.run_id)
    assert code == 3 and doc["verified"] is False, (doc, err)
    # One line per call that read it (alice may not read it now: its id is withheld).
    gone = [d for d in doc["drift"] if d["kind"] == "data_not_visible"]
    assert gone and all("no longer visible to acme/user:alice" in d["detail"] for d in gone)
    assert any("[withheld] v1 no longer visible" in d["detail"] for d in gone), gone
    assert len({d["tool_call_id"] for d in gone}) == len(gone), doc["drift"]
    # A call that kept no evidence of the record names the relabel as the likely cause and
    # says it cannot name its rows, never another cause (it was an unexplained hash_mismatch).
    others = [d for d in doc["drift"] if d["tool_call_id"] and d["kind"] != "data_not_visible"]
    assert all(
        d["kind"] == "record_labels_changed" and "so replay cannot name" in d["detail"]
        for d in others
    ), doc["drift"]
    assert doc["evidence_matched"] == doc["evidence"] - 1  # still counted as not reproduced


def test_an_entity_call_that_lost_a_relabelled_record_says_why_it_cannot_tell(  # type: ignore[no-untyped-def]
    demo_kg: neo4j.Driver, cli_env, invoke, tmp_path: Path
) -> None:
    """A runbook lookup's entity resolution kept no evidence, only a count and a hash of its
    rows: after its runbook is relabelled by re-import, the call's line says replay cannot
    name its records or say why they differ (it never reads past bob's grants to find out),
    and the runbook's own line says it is no longer visible, not purged; each record is one
    line and the new label is never named."""
    folder = tmp_path / "runbooks"
    folder.mkdir()
    (folder / "DiskFull.md").write_text(
        "# Disk full\n\nAlert: DiskFull\n\n## Mitigation\n\nFree space, then page storage.\n",
        encoding="utf-8",
    )
    imported = ("ingest", str(folder), "--format", "markdown-runbooks", "--tenant", "acme")
    assert invoke(*imported, "--acl", "internal").code == 0
    lookup = invoke("runbook", "--alert", "DiskFull", "--subject", "acme/user:bob", "--json")
    assert lookup.code == 0, lookup
    run_id = json.loads(lookup.out)["run_id"]
    relabel = invoke(*imported, "--acl", "legal-hold", "--acl-change")
    assert relabel.code == 0, relabel
    code, doc, err = _replay_json(invoke, run_id, "acme/user:bob")
    # A relabel by re-import: the chain verified, what bob may read changed (exit 3).
    assert code == 3 and doc["chain_valid"] is True, (doc, err)
    assert doc["differs_by_grants_only"] is True
    kinds = [d["kind"] for d in doc["drift"]]
    assert "evidence_changed" not in kinds and "data_purged" not in kinds, doc["drift"]
    first = doc["drift"][0]
    assert first["kind"] == "record_labels_changed" and "entity_resolution@" in first["detail"]
    # Its recorded rows hash is withheld from bob now (trace: rows=[withheld]): its count too.
    assert "recorded [withheld] (0 rows now, [withheld] recorded)" in first["detail"]
    assert "likely the labels of a record the run read" in first["detail"]
    assert "cannot name them or prove it" in first["detail"]
    gone = [d for d in doc["drift"] if d["kind"] == "data_not_visible"]
    assert gone and all("no longer visible to acme/user:bob" in d["detail"] for d in gone)
    assert all("not purged" in d["detail"] for d in gone)
    assert "legal-hold" not in json.dumps(doc) and "legal-hold" not in err


def test_a_call_that_kept_only_rejections_names_the_rejected_record_it_lost(  # type: ignore[no-untyped-def]
    demo_kg: neo4j.Driver, cli_env, invoke, tmp_path: Path
) -> None:
    """A runbook lookup at an as_of before any version of payment-api's runbook was valid
    keeps the versions its call read only as rejections (`rejected_temporal`). After v3 is
    relabelled, that call's line names v3 as no longer visible, not purged: the row that
    differs is one the run kept as a rejection. Before, the line said the rows that differ
    "are not among the records the run kept (its evidence and rejections)"."""
    lookup = invoke(
        "runbook", "--service", "svc:payment-api", "--as-of", "2026-01-15T00:00:00Z",
        "--subject", "acme/user:bob", "--json",
    )  # fmt: skip
    assert lookup.code == 0, lookup
    answer = json.loads(lookup.out)
    assert answer["runbook"] is None and {r["reason"] for r in answer["rejected"]} == {
        "rejected_temporal"
    }, answer
    lineage = load_lineage(demo_kg, answer["run_id"])
    calls = {
        kind: {n.properties.get("tool_call_id") for n in lineage.of_kind(kind)}
        for kind in (CtxKind.EVIDENCE, CtxKind.REJECTION)
    }
    # The case: the call that read the runbooks kept no evidence, only its rejections.
    (rejecting_call,) = {
        n.properties.get("tool_call_id")
        for n in lineage.of_kind(CtxKind.REJECTION)
        if (n.payload() or {}).get("element_id") == "runbook:payment-recovery@v3"
    }
    assert rejecting_call not in calls[CtxKind.EVIDENCE], calls
    documents = (DATASET / "25-acme-documents.yaml").read_text(encoding="utf-8")
    start = documents.index("  - id: runbook:payment-recovery@v3")
    acl = documents.index("    acl: [internal]", start)
    relabelled = documents[:acl] + "    acl: [legal-hold]" + documents[acl + 19 :]
    (tmp_path / "relabel.yaml").write_text(relabelled, encoding="utf-8")
    ingest_bundle(
        demo_kg,
        load_bundle(tmp_path / "relabel.yaml"),
        now=datetime.now(UTC) + timedelta(seconds=1),
    )

    code, doc, err = _replay_json(invoke, answer["run_id"], "acme/user:bob")
    assert code == 3 and doc["chain_valid"] is True, (doc, err)
    lines = [d for d in doc["drift"] if d["tool_call_id"] == rejecting_call]
    assert [d["kind"] for d in lines] == ["data_not_visible"], doc["drift"]
    # bob may not read v3 now: its id is withheld, as a relabelled evidence record's is.
    template = lines[0]["detail"].split(":", 1)[0]
    assert template.startswith("runbooks_for@"), lines[0]["detail"]
    assert lines[0]["detail"] == (
        f"{template}: [withheld] v1 no longer visible to acme/user:bob (not purged: the "
        "record's labels or purposes, or the subject's grants, changed since the run)"
    ), lines[0]["detail"]
    assert not any("not among the records the run kept" in d["detail"] for d in doc["drift"])
    assert "legal-hold" not in json.dumps(doc) and "legal-hold" not in err


def test_a_subject_that_lost_pii_reads_redacted_text_not_changed_data(  # type: ignore[no-untyped-def]
    demo_kg: neo4j.Driver, cli_env, invoke, tmp_path: Path
) -> None:
    """alice's run read the incident report in clear; she loses `pii`: replay says the
    record now reads its redacted view for her (the data did not change), not
    `data_changed`, once, and shows none of the PII."""
    result = _investigate(
        demo_kg,
        question="Was the 10:02 release of payment-api related to the PAY-4097 errors?",
        as_of=datetime(2026, 7, 23, 10, 3, tzinfo=UTC),
    )
    report = next(e for e in result.evidence if e.element_id == REPORT_DOC)
    assert not report.redacted and "maria.schneider@example.com" in report.content
    (tmp_path / "revoke.yaml").write_text(
        "tenant: acme\nprincipals:\n  - {id: user:alice, name: Alice, "
        "labels: [internal, incident], purposes: [incident_investigation, audit], "
        "source_id: src:iam}\n",
        encoding="utf-8",
    )
    ingest_bundle(
        demo_kg, load_bundle(tmp_path / "revoke.yaml"), now=datetime.now(UTC) + timedelta(seconds=1)
    )
    code, doc, err = _replay_json(invoke, result.run_id)
    # Her grants changed, not the run: exit 3 and a headline saying so (it was exit 1 and
    # `error: replay not verified`, as for an edited run).
    assert code == 3 and doc["chain_valid"] is True, (doc, err)
    assert doc["verified"] is False and doc["differs_by_grants_only"] is True
    # The report's call reads its redacted view; a call whose rows kept no record (the
    # incident's documents, read by a correlation since session 30) differs by her grants.
    kinds = [d["kind"] for d in doc["drift"] if d["tool_call_id"]]
    assert kinds.count("data_redacted_for_subject") == 1, doc["drift"]
    assert set(kinds) <= {"data_redacted_for_subject", "subject_grants_changed"}, doc["drift"]
    (redacted,) = [d for d in doc["drift"] if d["kind"] == "data_redacted_for_subject"]
    assert "now reads its redacted view for acme/user:alice" in redacted["detail"]
    assert "did not change" in redacted["detail"]
    assert "data_redacted_for_subject" in err
    assert err.startswith("error: replay not reproduced: the chain verified, but the run's")
    text = invoke("replay", result.run_id, *ALICE)
    assert text.code == 3 and "verified:        false (the chain verified;" in text.out
    for shown in (json.dumps(doc), err, text.out, text.err):
        assert "maria" not in shown.lower() and "7731" not in shown


def test_a_subject_that_lost_a_label_is_told_its_grants_changed_not_the_run(  # type: ignore[no-untyped-def]
    demo_kg: neo4j.Driver, cli_env, invoke, tmp_path: Path
) -> None:
    """An explorer's finding: alice loses `incident` and `pii` after her run; replay printed
    `verified: false`, exit 1 and `error: replay not verified` as for an edited run, and a
    call that kept no record of its rows as an unexplained `hash_mismatch` ("0 rows now, 1
    recorded"). Now: exit 3, the chain verified, her grants named as the likely cause."""
    result = _investigate(demo_kg)
    (tmp_path / "revoke.yaml").write_text(
        "tenant: acme\nprincipals:\n  - {id: user:alice, name: Alice, labels: [internal], "
        "purposes: [incident_investigation, audit], source_id: src:iam}\n",
        encoding="utf-8",
    )
    ingest_bundle(
        demo_kg, load_bundle(tmp_path / "revoke.yaml"), now=datetime.now(UTC) + timedelta(seconds=1)
    )
    code, doc, err = _replay_json(invoke, result.run_id)
    assert code == 3 and doc["chain_valid"] is True and doc["verified"] is False, (doc, err)
    assert doc["differs_by_grants_only"] is True
    kinds = {d["kind"] for d in doc["drift"]}
    assert "data_not_visible" in kinds and "hash_mismatch" not in kinds, doc["drift"]
    for line in (d for d in doc["drift"] if d["kind"] == "subject_grants_changed"):
        assert "likely the subject's grants, which changed since the run" in line["detail"]
    assert err.startswith("error: replay not reproduced: the chain verified"), err
    # A real mismatch still fails as before: the same run with a recorded property edited.
    demo_kg.execute_query(
        "MATCH (c:CtxClaim {run_id: $r}) WITH c LIMIT 1 SET c.confidence = 0.01",
        r=result.run_id,
    )
    code, doc, err = _replay_json(invoke, result.run_id)
    assert code == 1 and doc["chain_valid"] is False and not doc["differs_by_grants_only"]
    assert err.startswith("error: replay not verified:"), err


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
            subject_id="acme/user:alice",
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
            subject_id="acme/user:alice",
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
def test_replay_of_an_unknown_or_malformed_run_is_exit_2(
    demo_kg, cli_env, invoke, run_id: str
) -> None:  # type: ignore[no-untyped-def]
    for args in (("replay", run_id, *ALICE), ("replay", run_id, "--json", *ALICE)):
        res = invoke(*args)
        assert res.code == 2, res
        assert (json_error(res) if "--json" in args else res.out == "") and len(
            res.err.strip().splitlines()
        ) == 1


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
    assert changed.code == 2 and json_error(changed)["code"] == "bad_input"
    assert len(changed.err.strip().splitlines()) == 1 and "different request" in changed.err
    runs = json.loads(invoke("runs", "--json", "--subject", "user:alice").out)["runs"]
    assert len(runs) == 1
    # The recorded run of a real investigation traces as a tree and replays as verified.
    run_id = runs[0]["run_id"]
    tree = invoke("trace", run_id, "--subject", "user:alice").out
    assert "tool_call tc-" in tree and "chain: valid" in tree
    assert invoke("replay", run_id, "--subject", "user:alice").code == 0


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
    (run,) = json.loads(invoke("runs", "--json", "--subject", "user:carol").out)["runs"]
    assert (run["status"], run["stop_reason"]) == ("refused", "not_authorized")
    code, doc, err = _replay_json(invoke, run["run_id"], "acme/user:carol")
    assert code == 0 and doc["verified"], (doc, err)
    # Granting the purpose afterwards (in place, for the test) makes the refusal drift.
    demo_kg.execute_query(
        "MATCH (p:KG:Principal {id: 'user:carol'}) SET p.purposes = p.purposes + ['audit']"
    )
    code, doc, err = _replay_json(invoke, run["run_id"], "acme/user:carol")
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


def test_a_runbook_lookup_is_one_recorded_session_that_replay_re_runs(
    demo_kg: neo4j.Driver,
) -> None:
    from investigator.runbook_lookup import LookupTarget, RunbookLookup, RunbookQuery

    query = RunbookQuery(
        target=LookupTarget.SERVICE,
        value="svc:payment-api",
        subject_id="acme/user:bob",
        as_of=datetime(2026, 7, 23, 10, 3, tzinfo=UTC),
    )
    answer = RunbookLookup(demo_kg).lookup(query)
    assert answer.runbook is not None and answer.runbook.id == "runbook:payment-recovery@v3"
    lineage = load_lineage(demo_kg, answer.run_id)
    assert lineage.run_properties is not None
    assert (lineage.run_properties["tenant"], lineage.run_properties["subject_id"]) == (
        "acme",
        "user:bob",
    )
    # One tool-call id scheme for every command, and every call used a recorded plan.
    calls = lineage.of_kind(CtxKind.TOOL_CALL)
    assert [c.properties["tool_call_id"] for c in calls][:2] == ["tc-01-001", "tc-02-001"]
    assert all(isinstance(c.properties.get("plan_seq"), int) for c in calls)
    # The gate decided the superseded version: it is a rejection, never evidence.
    rejected = {n.properties["candidate_id"]: n for n in lineage.of_kind(CtxKind.REJECTION)}
    v2 = next(r for r in answer.rejected if r.element_id == "runbook:payment-recovery@v2")
    assert rejected[v2.candidate_id].properties["reason"] == "rejected_superseded"
    admitted = {n.properties["evidence_id"] for n in lineage.of_kind(CtxKind.EVIDENCE)}
    assert v2.candidate_id not in admitted
    report = replay_run(demo_kg, answer.run_id)
    assert report.verified and report.pack_hash_match, report.drift
    assert report.recorded_pack_hash == report.replayed_pack_hash


def test_a_reused_run_needs_the_subject_authorized_first(demo_kg: neo4j.Driver) -> None:
    from investigator.errors import NotAuthorized

    first = _investigate(demo_kg, idempotency_key="INC-1")
    # The same key of another subject names another run (keys are per tenant and subject).
    bob = _investigate(demo_kg, idempotency_key="INC-1", subject_id="acme/user:bob")
    assert bob.run_id != first.run_id and not bob.reused_run
    # A subject that may not run the request never gets a run back, whatever its key.
    with pytest.raises(NotAuthorized):
        _investigate(demo_kg, idempotency_key="INC-1", subject_id="acme/user:nobody")
    with pytest.raises(NotAuthorized):
        _investigate(demo_kg, idempotency_key="INC-1", purpose="marketing")
    again = _investigate(demo_kg, idempotency_key="INC-1")
    assert again.reused_run and again.run_id == first.run_id


_KILLED_CHILD = """
import os, sys
from datetime import UTC, datetime
import neo4j
from investigator.context_graph.recorder import RunLog, RunRecorder
from investigator.investigation import InvestigationRequest, investigate
from investigator.session import RunSession

RunSession.FLUSH_INTERVAL_S = 0.0  # every round is written: kill after each of them

after = int(sys.argv[4])
write = RunLog._write_snapshot  # every write of the log, a round's (in the background) too
seen = []

def dying_write(self, snapshot, final_status=None):
    if len(seen) == after:
        os._exit(9)  # killed: no finally, no finish
    seen.append(1)
    write(self, snapshot, final_status)

RunLog._write_snapshot = dying_write
driver = neo4j.GraphDatabase.driver(sys.argv[1], auth=(sys.argv[2], sys.argv[3]))
investigate(
    InvestigationRequest(
        question=sys.argv[5], service_id="svc:payment-api", subject_id="acme/user:alice",
        as_of=datetime(2026, 7, 23, 10, 30, tzinfo=UTC), deadline_s=600,
    ),
    driver=driver,
    recorder=RunRecorder(driver),
)
"""


def test_a_run_killed_at_any_write_is_incomplete_and_its_chain_verifies(
    demo_kg: neo4j.Driver, neo4j_settings: ConnectionSettings
) -> None:
    import os
    import subprocess
    import sys

    from cypher_templates.subject import PrincipalRecord
    from investigator.context_graph import list_runs, verify_chain
    from investigator.context_graph.audit import RunReader

    auditor = RunReader(
        principal=PrincipalRecord(tenant="acme", id="user:auditor", labels=(), purposes=("audit",)),
        purpose="audit",
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    # Killed right after the run started, then after each write of the run (a round of
    # lineage per write) until the run gets to finish.
    kills = 0
    for after in range(8):
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                _KILLED_CHILD,
                neo4j_settings.uri,
                neo4j_settings.user,
                neo4j_settings.password.get_secret_value(),
                str(after),
                QUESTION,
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if proc.returncode == 0:
            break
        assert proc.returncode == 9, proc.stderr[-2000:]
        kills += 1
    runs = list_runs(demo_kg, auditor)
    assert kills >= 2 and len(runs) == kills + 1
    assert sorted(r.status for r in runs) == ["complete"] + ["incomplete"] * kills
    sizes = []
    for summary in runs:
        lineage = load_lineage(demo_kg, summary.run_id)
        assert verify_chain(lineage).chain_valid
        sizes.append(len(lineage.nodes))
    # run + agent only, then whole rounds: every kill left a different, valid prefix.
    assert len(set(sizes)) == kills + 1 and min(sizes) == 2


def test_a_run_stopped_by_its_deadline_replays_to_the_same_point(  # type: ignore[no-untyped-def]
    demo_kg: neo4j.Driver, cli_env, invoke
) -> None:
    # A slow machine stops a run at its deadline; replay on any machine must rebuild the same
    # pack, so it re-runs as many tool calls as were recorded instead of racing the clock.
    ticks = iter(range(10_000))
    fields = {
        "question": QUESTION,
        "service_id": "svc:payment-api",
        "subject_id": "acme/user:alice",
        "purpose": "incident_investigation",
        "as_of": AS_OF,
        "deadline_s": 6.0,
    }
    result = investigate(
        InvestigationRequest.model_validate(fields),
        driver=demo_kg,
        recorder=RunRecorder(demo_kg),
        monotonic=lambda: float(next(ticks)),  # one second per look at the clock
    )
    assert result.stop_reason == "deadline"
    full = _investigate(demo_kg)
    assert full.stop_reason != "deadline" and full.pack_hash != result.pack_hash
    code, doc, err = _replay_json(invoke, result.run_id)
    assert code == 0, (doc, err)
    assert doc["verified"] is True and doc["replayed_pack_hash"] == result.pack_hash
