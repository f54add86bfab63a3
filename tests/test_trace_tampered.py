"""An auditor's view of a tampered Context Graph: `trace` and `runs --purpose audit` of runs
edited with the database credentials (tenant moved, a payload edited, a node deleted), read
by an auditor of each tenant, through the real CLI and a real Neo4j."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_context_graph_support import record_full_run, request

from investigator.context_graph import RunRecorder

IDENTITY = Path(__file__).parent / "fixtures" / "identity"
ACME_AUDIT = ("--subject", "acme/user:auditor", "--purpose", "audit")
GLOBEX_AUDIT = ("--subject", "globex/user:gaudit", "--purpose", "audit")
GLOBEX = """tenant: globex
principals:
  - {id: user:gaudit, name: Globex audit, labels: [internal, incident, pii],
     purposes: [audit], recorded_at: "2026-01-05T09:00:00Z"}
"""


@pytest.fixture()
def two_tenants(clean_db, cli_env, invoke, tmp_path):  # type: ignore[no-untyped-def]
    """acme's principals and records (the runs are acme/user:alice's), a globex auditor, and
    two finished, anchored acme runs."""
    (tmp_path / "globex.yaml").write_text(GLOBEX, encoding="utf-8")
    for path in (
        IDENTITY / "acme-principals.yaml",
        IDENTITY / "acme-trace-elements.yaml",
        tmp_path / "globex.yaml",
    ):
        result = invoke("ingest", str(path))
        assert result.code == 0, result
    recorder = RunRecorder(clean_db)
    return clean_db, record_full_run(recorder), record_full_run(recorder)


def _runs(invoke, who):  # type: ignore[no-untyped-def]
    res = invoke("runs", *who, "--json")
    assert res.code == 0, res
    return {r["run_id"]: r for r in json.loads(res.out)["runs"]}


def test_a_run_moved_to_another_tenant_is_marked_and_shows_none_of_its_evidence(
    two_tenants, invoke
) -> None:  # type: ignore[no-untyped-def]
    db, moved, sound = two_tenants
    db.execute_query("MATCH (r:CtxRun {run_id: $r}) SET r.tenant = 'globex'", r=moved)

    listed = _runs(invoke, GLOBEX_AUDIT)
    assert listed[moved]["verified"] is False
    assert "chain_invalid: seq 0 (run)" in listed[moved]["verify_problem"]
    text = invoke("runs", *GLOBEX_AUDIT)
    assert text.code == 0
    assert f"{moved}  NOT VERIFIED  complete" in text.out
    assert "1 of 1 checked runs do not verify" in text.err
    assert _runs(invoke, ACME_AUDIT)[sound]["verified"] is True

    res = invoke("trace", moved, *GLOBEX_AUDIT)
    assert res.code == 1, res
    first = res.out.splitlines()[0]
    assert first.startswith("NOT VERIFIED (") and "shown as stored" in first
    assert res.err.startswith(f"error: not verified: run {moved}")
    # Withheld as another tenant's (never read in acme for a globex reader), not "gone".
    assert "withheld: tenant" in res.out or "[withheld: tenant]" in res.out, res.out
    assert "record gone" not in res.out and "payment-api deployment" not in res.out
    # Neither tenant is named by the problem lines.
    assert "acme" not in first

    doc = json.loads(invoke("trace", moved, *GLOBEX_AUDIT, "--json").out)
    assert doc["verified"] is False
    assert any("tenant_changed" in p for p in doc["verify_problems"])
    assert list(doc)[:3] == ["run_id", "verified", "verify_problems"]
    withheld = {n["properties"].get("withheld") for n in doc["nodes"] if n["kind"] == "evidence"}
    assert withheld == {"tenant"}
    prov = invoke("trace", moved, *GLOBEX_AUDIT, "--format", "prov-json")
    assert prov.code == 1
    run_activity = json.loads(prov.out)["activity"]["ctx:run-0"]
    assert run_activity["inv:verified"] is False


@pytest.mark.parametrize(
    "tamper",
    [
        "MATCH (n:CtxEvidence {run_id: $r, seq: 5}) SET n.payload = n.payload + ' '",
        "MATCH (n:CtxEvent {run_id: $r, seq: 6}) DETACH DELETE n",
    ],
    ids=["payload-edited", "node-deleted"],
)
def test_an_edited_or_cut_run_is_marked_in_runs_and_trace_exits_1(
    two_tenants, invoke, tamper: str
) -> None:  # type: ignore[no-untyped-def]
    db, tampered, sound = two_tenants
    db.execute_query(tamper, r=tampered)

    listed = _runs(invoke, ACME_AUDIT)
    assert listed[tampered]["verified"] is False and listed[sound]["verified"] is True
    assert "chain_invalid" in listed[tampered]["verify_problem"]
    text = invoke("runs", *ACME_AUDIT).out
    assert f"{tampered}  NOT VERIFIED" in text and f"{sound}  NOT VERIFIED" not in text

    res = invoke("trace", tampered, *ACME_AUDIT)
    assert res.code == 1, res
    assert res.out.splitlines()[0].startswith("NOT VERIFIED (")
    assert "chain: INVALID" in res.out
    assert "record gone" not in res.out
    for fmt in ("json", "prov-json", "mermaid"):
        assert invoke("trace", tampered, *ACME_AUDIT, "--format", fmt).code == 1, fmt
    assert json.loads(invoke("trace", tampered, *ACME_AUDIT, "--json").out)["verified"] is False

    ok = invoke("trace", sound, *ACME_AUDIT)
    assert ok.code == 0 and ok.out.startswith(f"run {sound}") and ok.err == ""
    assert json.loads(invoke("trace", sound, *ACME_AUDIT, "--json").out)["verified"] is True
    # A globex auditor still knows neither run.
    assert invoke("trace", tampered, *GLOBEX_AUDIT).code == 2
    assert tampered not in _runs(invoke, GLOBEX_AUDIT)


def test_a_long_audit_listing_checks_its_newest_runs_and_says_so(two_tenants, invoke) -> None:  # type: ignore[no-untyped-def]
    """Checking has a cost (docs/benchmarks.md): of a listing longer than 100 runs, the
    newest 100 are checked; the older are listed unchecked (`verified: null`, never marked
    sound, nor NOT VERIFIED) and a line on stderr says so."""
    db, older, newer = two_tenants
    db.execute_query("MATCH (n:CtxEvidence {run_id: $r, seq: 5}) SET n.payload = 'x'", r=older)
    recorder = RunRecorder(db)
    for n in range(100):  # the smallest finished runs: started and finished, anchored
        run_id = recorder.start_run(request(f"question {n}")).run_id
        recorder.finish_run(run_id, "complete", "evidence_sufficient")

    doc = invoke("runs", *ACME_AUDIT, "--limit", "200", "--json")
    assert doc.code == 0, doc
    listed = {r["run_id"]: r for r in json.loads(doc.out)["runs"]}
    assert len(listed) == 102
    assert sum(r["verified"] is True for r in listed.values()) == 100
    assert listed[older]["verified"] is None and listed[older]["verify_problem"] is None
    assert listed[newer]["verified"] is None
    assert "checked the newest 100 of 102 runs against their chain and anchor" in doc.err
    text = invoke("runs", *ACME_AUDIT, "--limit", "200")
    assert text.code == 0 and "NOT VERIFIED" not in text.out
    assert "checked the newest 100 of 102 runs" in text.err
    assert "do not verify" not in text.err
    # The run itself is still caught where it is read; a listing of 100 checks them all.
    assert invoke("trace", older, *ACME_AUDIT).code == 1
    assert "checked the newest" not in invoke("runs", *ACME_AUDIT, "--limit", "100").err
