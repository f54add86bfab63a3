"""Who owns a runbook found by the question's words, when no owner record of it exists: one
required `ownership` gap (not the same gap twice, once "would strengthen" and once
"required"), and the contact its page's front matter names (`owner_slack`, what the card
shows as Contact) said in that gap as what it is: words on the page, not a team record.
Through the CLI, on a real Neo4j.

Before, `investigate "Who owns the runbook for ledger sync lag?"` listed "no owner of
runbook:ledger-sync-lag at as_of the subject may read" (would strengthen) and "no owner of
runbook:ledger-sync-lag is recorded at as_of" (required), and never named the page's contact.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import ingest_as

CATALOGS = Path(__file__).parent / "fixtures" / "runbooks" / "catalogs"
CONTACT = "#ledger-oncall (from front matter owner_slack, not a team record)"

# Pages written here: one with a contact in its front matter (GOV.UK's layout), one without.
PAGES = {
    "ledger-sync-lag.html.md": (
        '---\nowner_slack: "#ledger-oncall"\ntitle: Ledger sync lag\n---\n\n'
        "# Ledger sync lag\n\nThe ledger replica is behind its primary by more than a minute.\n\n"
        "## Possible fixes\n\n1. Check the replica's disk throughput.\n"
        "2. Restart the sync worker.\n"
    ),
    "badge-printer-jam.md": (
        "# Badge printer jam\n\nThe badge printer in the lobby reports a paper jam.\n\n"
        "## Possible fixes\n\n1. Open the printer tray and remove the jammed card.\n"
    ),
}


@pytest.fixture()
def pages(driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    from test_runbook_lookup import wipe

    wipe(driver)
    assert invoke("ingest", str(CATALOGS / "acme.yaml")).code == 0
    folder = tmp_path / "alerts"
    folder.mkdir()
    for name, text in PAGES.items():
        (folder / name).write_text(text, encoding="utf-8")
    ingest_as(invoke, folder, "markdown-runbooks", "acme", acl="internal")
    return folder


def _investigate(invoke, question: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("investigate", question, "--subject", "user:oncall", "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def test_unowned_runbook_gap_once_required_naming_the_page_contact(  # type: ignore[no-untyped-def]
    pages: Path, invoke
) -> None:
    doc = _investigate(invoke, "Who owns the runbook for ledger sync lag?")
    assert doc["status"] == "partial"  # a contact is no owner of record
    gaps = [
        m
        for m in doc["missing_evidence"]
        if m["evidence_type"] == "ownership" and "runbook:ledger-sync-lag" in m["description"]
    ]
    assert len(gaps) == 1, gaps
    (gap,) = gaps
    assert gap["required"] is True
    assert gap["description"].startswith("no owner of runbook:ledger-sync-lag is recorded at as_of")
    assert gap["description"].endswith(f"; its page names a contact: {CONTACT}")
    # No claim makes the contact an owner.
    assert not [c for c in doc["claims"] if "ledger-oncall" in c["statement"]]
    # The text report says it once too.
    text = invoke("investigate", "Who owns the runbook for ledger sync lag?", "--subject",
                  "user:oncall").out  # fmt: skip
    missing = text.split("Missing evidence")[1].split("\nPack")[0]
    assert missing.count("no owner of runbook:ledger-sync-lag") == 1, missing
    assert "ownership (required): no owner of runbook:ledger-sync-lag" in missing
    assert CONTACT in missing
    # The gap's words are no part of the pack hash or the claims: the run replays.
    replay = invoke("replay", doc["run_id"], "--subject", "user:oncall", "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["verified"] is True


def test_page_without_contact_gets_the_gap_alone(pages: Path, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _investigate(invoke, "Who owns the runbook for badge printer jam?")
    gaps = [m for m in doc["missing_evidence"] if m["evidence_type"] == "ownership"]
    assert [g["required"] for g in gaps] == [True], gaps
    assert "runbook:badge-printer-jam" in gaps[0]["description"]
    assert "contact" not in gaps[0]["description"]


def test_runbook_question_not_about_its_owner_keeps_the_would_strengthen_gap(  # type: ignore[no-untyped-def]
    pages: Path, invoke
) -> None:
    doc = _investigate(invoke, "Ledger sync lag, what do I do?")
    gaps = [m for m in doc["missing_evidence"] if m["evidence_type"] == "ownership"]
    # Not asked who owns it: the gap that would strengthen the answer stays, alone.
    assert [g["required"] for g in gaps] == [False], gaps
    assert gaps[0]["description"].startswith(
        "no owner of runbook:ledger-sync-lag at as_of the subject may read"
    )
