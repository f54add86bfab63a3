"""Replay after a routine ACL tightening: the chain verified, and what differs is what the
run's subject may read now (exit 3, docs/context-graph.md "differs_by_grants_only"), not a
run or a record that changed (exit 1).

An explorer's finding: alice's investigation of the demo; then a re-ingest gives one record
it read (a node, or a relationship) a label alice lacks, in a new record version with the
same content. `replay` printed `error: replay not verified` and exit 1, as for an edited
run or a record changed in place, though nothing the run recorded, and no record's text,
changed; a call that kept no record of its rows read as an unexplained `hash_mismatch`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import neo4j
import pytest

from graph_schema.bundle import load_bundle
from graph_schema.schema_ddl import apply_schema
from graph_schema.writer import ingest_bundle
from investigator.context_graph import RunRecorder
from investigator.investigation import InvestigationRequest, investigate

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO / "datasets" / "payments-incident"
QUESTION = (
    "Why did payment authorization fail with no database connection available on payment-api?"
)
ALICE = ("--subject", "acme/user:alice")
AUDITOR = ("--subject", "acme/user:auditor", "--purpose", "audit")
INCIDENT = (DATASET / "20-acme-incident.yaml").read_text(encoding="utf-8")
DOCUMENTS = (DATASET / "25-acme-documents.yaml").read_text(encoding="utf-8")
# The release the run cites (a node), and the error it emitted (a relationship it cites).
RELEASE = INCIDENT[
    INCIDENT.index("  - id: deploy:release-2026.07.23.1") : INCIDENT.index("  # An older release")
]
EMITTED = INCIDENT[
    INCIDENT.index("  - {type: EMITTED, from: svc:payment-api, to: err:PAY-4097") : INCIDENT.index(
        "  - {type: EMITTED, from: svc:payment-api, to: err:PAY-1002"
    )
]
TIGHTER = "acl: [internal, restricted]"  # `restricted`: a label no acme principal holds
TIGHTENED = {
    "node": "tenant: acme\nnodes:\n" + RELEASE.replace("acl: [internal]", TIGHTER),
    "relationship": "tenant: acme\nedges:\n" + EMITTED.replace("acl: [internal]", TIGHTER),
}
GRANTS_LINE = (
    "error: replay not reproduced: the chain verified, but the run's subject may no longer "
    "read what the run read (its grants or a record's labels changed): "
)


@pytest.fixture()
def alices_run(clean_db: neo4j.Driver) -> tuple[neo4j.Driver, str]:
    """The demo KG and alice's recorded investigation of it (replay verifies it)."""
    apply_schema(clean_db)
    ingest_bundle(clean_db, load_bundle(DATASET))
    result = investigate(
        InvestigationRequest.model_validate(
            {
                "question": QUESTION,
                "service_id": "svc:payment-api",
                "subject_id": "acme/user:alice",
                "purpose": "incident_investigation",
                "as_of": datetime(2026, 7, 23, 10, 30, tzinfo=UTC),
            }
        ),
        driver=clean_db,
        recorder=RunRecorder(clean_db),
    )
    cited = {e.element_id for e in result.evidence}
    assert {"deploy:release-2026.07.23.1", "EMITTED|svc:payment-api|err:PAY-4097"} <= cited
    return clean_db, result.run_id


def _ctx_nodes(driver: neo4j.Driver) -> int:
    rows, _, _ = driver.execute_query("MATCH (n:CtxEvent) RETURN count(n) AS n")
    return int(rows[0]["n"])


@pytest.mark.parametrize("what", ["node", "relationship"])
def test_a_record_tightened_since_the_run_is_exit_3_not_a_changed_run(  # type: ignore[no-untyped-def]
    alices_run, cli_env, invoke, tmp_path: Path, what: str
) -> None:
    driver, run_id = alices_run
    assert invoke("replay", run_id, *ALICE).code == 0  # verified before the tightening
    (tmp_path / "tighten.yaml").write_text(TIGHTENED[what], encoding="utf-8")
    ingested = invoke("ingest", str(tmp_path / "tighten.yaml"))
    assert ingested.code == 0, ingested
    before = _ctx_nodes(driver)

    text = invoke("replay", run_id, *ALICE)
    assert text.code == 3, text
    # The report is printed, and says the chain verified.
    assert f"run {run_id} (investigate, complete)" in text.out
    assert (
        "verified:        false (the chain verified; what differs is what the run's subject "
        "may read now, not the run)"
    ) in text.out
    assert "chain_valid:     true" in text.out
    assert "data_not_visible" in text.out
    # One stderr line, naming the grants or labels (not "replay not verified").
    errors = [line for line in text.err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(GRANTS_LINE), text.err
    assert " hash_mismatch:" not in text.out  # no unexplained difference left
    # The new label is never named (the reader may lack it too).
    assert "restricted" not in text.out + text.err

    doc = json.loads(invoke("replay", run_id, *ALICE, "--json").out)
    assert (doc["verified"], doc["chain_valid"], doc["differs_by_grants_only"]) == (
        False,
        True,
        True,
    )
    kinds = {d["kind"] for d in doc["drift"]}
    assert "data_not_visible" in kinds and "hash_mismatch" not in kinds, doc["drift"]
    # An auditor reads the same verdict.
    audited = invoke("replay", run_id, *AUDITOR)
    assert audited.code == 3 and audited.err.startswith(GRANTS_LINE), audited
    # Replay writes nothing.
    assert _ctx_nodes(driver) == before


def test_a_call_that_kept_no_record_of_a_relabelled_record_names_the_labels(  # type: ignore[no-untyped-def]
    alices_run, cli_env, invoke, tmp_path: Path
) -> None:
    """The postmortem the run cites re-ingested with a label alice lacks: a call that read
    it but kept no record of its rows said `hash_mismatch` (replay cannot tell why, exit 1);
    it is now `record_labels_changed`, naming the likely cause, and the replay is exit 3."""
    _, run_id = alices_run
    start = DOCUMENTS.index("  - id: doc:postmortem-2026-07-23-payments")
    acl = DOCUMENTS.index("    acl: [internal, incident]", start)
    tightened = (
        DOCUMENTS[:acl] + "    acl: [internal, incident, restricted]" + DOCUMENTS[acl + 29 :]
    )
    (tmp_path / "tighten.yaml").write_text(tightened, encoding="utf-8")
    assert invoke("ingest", str(tmp_path / "tighten.yaml")).code == 0
    res = invoke("replay", run_id, *ALICE, "--json")
    doc = json.loads(res.out)
    assert res.code == 3 and doc["differs_by_grants_only"] is True, (doc, res.err)
    kinds = [d["kind"] for d in doc["drift"]]
    assert "hash_mismatch" not in kinds and "record_labels_changed" in kinds, doc["drift"]
    (line,) = [d for d in doc["drift"] if d["kind"] == "record_labels_changed"]
    assert (
        "likely the labels of a record the run read, which changed since the run"
        in (line["detail"])
    )
    assert "cannot name them or prove it" in line["detail"]
    # The headline names the record's own line, the known cause.
    assert res.err.startswith(GRANTS_LINE) and "data_not_visible" in res.err, res.err


@pytest.mark.parametrize(
    ("change", "kind"),
    [
        # The text of a record the run cites edited in place (same id and version).
        (
            "MATCH (d:KG {tenant: 'acme', id: 'doc:postmortem-2026-07-23-payments'}) "
            "SET d.content = '(edited) ' + d.content",
            "data_changed",
        ),
        # A record the run cites deleted from the KG: gone, not relabelled.
        (
            "MATCH (d:KG {tenant: 'acme', id: 'deploy:release-2026.07.23.1'}) DETACH DELETE d",
            "data_not_visible",
        ),
        # The 10:12 chat the run kept only as a rejection (conflict_loser: no text kept),
        # edited in place: named by its record's own content hash (before: only the call's
        # rows hash, "the rows that differ are not among the records the run kept").
        (
            "MATCH (d:KG {tenant: 'acme', id: 'doc:chat-payments-2026-07-23-1012'}) "
            "SET d.content = '(edited) ' + d.content",
            "data_changed",
        ),
        # The same chat deleted from the KG.
        (
            "MATCH (d:KG {tenant: 'acme', id: 'doc:chat-payments-2026-07-23-1012'}) "
            "DETACH DELETE d",
            "data_not_visible",
        ),
    ],
    ids=["content-changed", "record-deleted", "rejected-content-changed", "rejected-deleted"],
)
def test_a_record_changed_or_deleted_is_still_not_verified(  # type: ignore[no-untyped-def]
    alices_run, cli_env, invoke, change: str, kind: str
) -> None:
    driver, run_id = alices_run
    driver.execute_query(change)
    text = invoke("replay", run_id, *ALICE)
    assert text.code == 1, text
    assert "verified:        false\n" in text.out and "the chain verified" not in text.out
    assert text.err.startswith("error: replay not verified: "), text.err
    assert f"{kind}:" in text.err
    doc = json.loads(invoke("replay", run_id, *ALICE, "--json").out)
    assert doc["differs_by_grants_only"] is False and doc["chain_valid"] is True
    if "doc:chat-payments" in change and kind == "data_changed":
        (line,) = [d for d in doc["drift"] if d["kind"] == kind]
        assert line["detail"].endswith(
            ": doc:chat-payments-2026-07-23-1012 v1 (kept as a rejection, no text kept: its "
            "record no longer hashes to the content hash it was written with) now reads other "
            "text than the run recorded (no purge recorded)"
        ), line["detail"]
        assert not any("not among the records the run kept" in d["detail"] for d in doc["drift"])
    if kind == "data_not_visible":
        # A deleted record is said to be deleted, not relabelled (before: "the record's
        # labels or purposes, or the subject's grants, changed since the run").
        # (A deleted record's id is withheld: no one may read it now; the release's whole
        # line is, since it quotes the release's withheld text.)
        lines = [d["detail"] for d in doc["drift"] if d["kind"] == kind]
        assert "doc:chat-payments" not in change or any(
            line.endswith(
                "[withheld] v1 no longer visible to acme/user:alice: no record of it is known "
                "now (deleted from the KG: not purged, and not a change of labels or grants)"
            )
            for line in lines
        ), lines
        assert not any("labels or purposes" in line for line in lines), lines
        assert "labels or purposes" not in text.err, text.err
