"""Competing causes no mechanism evidence rules out, through the CLI against a real Neo4j
(h28-budget item 2). The demo's postmortem names release-2026.07.23.1 as the cause of
PAY-4097 (first seen 2026-07-23T10:02:38Z) and rules out the risk rule change 17 s before
it: `likely` (the competing cause lowers `confirmed` one step). One more change in the
30 minutes before the error that nothing rules out keeps `likely`; with a second one the
verdict is no stronger than `uncertain`, and a claim says why. Before, any number of them
left `likely` (nine unexplained change events in the 30 min before the error)."""

from __future__ import annotations

from pathlib import Path

from conftest import change_line, ingest_text, investigate_json

ALICE = ["--subject", "acme/user:alice", "--as-of", "2026-07-23T11:00:00Z"]
CORRELATION = "Did release-2026.07.23.1 cause the PAY-4097 errors on payment-api?"
WHY = "not ruled out by any mechanism evidence"


def _why(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"] if WHY in c["statement"]]


def test_a_second_unexplained_change_lowers_the_verdict(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, tmp_path: Path
) -> None:
    bundle = "tenant: acme\nnodes:\n" + change_line("lone", 0, "2026-07-23T09:50:00Z")
    ingest_text(invoke, tmp_path / "one.yaml", bundle)
    doc = investigate_json(invoke, CORRELATION, *ALICE)
    assert [c["assessment"] for c in doc["confounders"]] == [
        "no_mechanism_evidence",
        "ruled_out",
    ], doc["confounders"]
    assert doc["verdict"] == "likely", doc["verdict"]
    assert _why(doc) == [], doc["claims"]

    bundle = "tenant: acme\nnodes:\n" + change_line("lone", 1, "2026-07-23T09:55:00Z")
    ingest_text(invoke, tmp_path / "two.yaml", bundle)
    doc = investigate_json(invoke, CORRELATION, *ALICE)
    # Before: `likely`.
    assert doc["verdict"] == "uncertain", doc["verdict"]
    assert _why(doc) == [
        "2 other changes in the 30 min before PAY-4097 was first seen are not ruled out by any "
        "mechanism evidence: each could explain the errors as well, so the verdict is no "
        "stronger than uncertain"
    ], doc["claims"]
    claim = next(c for c in doc["claims"] if WHY in c["statement"])
    cited = {e["evidence_id"]: e["element_id"] for e in doc["evidence"]}
    assert {cited[i] for i in claim["evidence_ids"]} >= {"change:lone-0", "change:lone-1"}
    assert doc["status"] == "complete"
    # The terminal report says it too.
    report = invoke("investigate", CORRELATION, *ALICE)
    assert "verdict: uncertain" in report.out
    assert "2 other changes in the 30 min before PAY-4097 was first seen" in report.out
