"""Replay of a free-text runbook lookup after the tenant's runbooks were edited.

A fulltext score is BM25 over the tenant's whole index: adding or editing any runbook moves
every raw score. A recorded lookup whose runbook, matches, order and ranks are unchanged must
still verify; one whose chosen runbook really changed must not, and must say what changed.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest

from graph_schema.schema_ddl import apply_schema

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO / "datasets" / "payments-incident"
ONCALL = ("--subject", "acme/user:oncall")
QUESTION = "ledger replication lag is growing on the primary"

RUNBOOKS = {
    "LedgerReplicationLag.md": (
        "# Ledger replication lag\n\n"
        "The ledger replica falls behind the primary.\n\n"
        "## Steps\n\n"
        "1. Check replication lag on the ledger primary.\n"
        "2. Pause the nightly batch that writes to the ledger.\n"
    ),
    "CacheEvictionStorm.md": (
        "# Cache eviction storm\n\n"
        "The session cache evicts faster than it fills.\n\n"
        "## Steps\n\n"
        "1. Check the cache memory limit.\n"
        "2. Raise it or shed the largest keys.\n"
    ),
    "QueueBacklogGrowing.md": (
        "# Queue backlog growing\n\n"
        "The settlement queue grows faster than consumers drain it.\n\n"
        "## Steps\n\n"
        "1. Scale the settlement consumers.\n"
        "2. Check for a poison message at the head of the queue.\n"
    ),
}


def _ingest(invoke, folder: Path) -> None:  # type: ignore[no-untyped-def]
    done = invoke(
        "ingest", str(folder), "--format", "markdown-runbooks", "--tenant", "acme",
        "--acl", "internal",
    )  # fmt: skip
    assert done.code == 0, done


@pytest.fixture()
def runbook_folder(clean_db: neo4j.Driver, cli_env: object, invoke, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    """The demo KG plus a folder of acme's Markdown runbooks, ingested through the CLI."""
    apply_schema(clean_db)
    assert invoke("ingest", str(DATASET)).code == 0
    folder = tmp_path / "runbooks"
    folder.mkdir()
    for name, text in RUNBOOKS.items():
        (folder / name).write_text(text, encoding="utf-8")
    _ingest(invoke, folder)
    clean_db.execute_query("CALL db.awaitIndexes(300)")
    return folder


def _lookup(invoke) -> dict:  # type: ignore[no-untyped-def,type-arg]
    done = invoke("runbook", QUESTION, *ONCALL, "--json")
    assert done.code == 0, done
    answer = json.loads(done.out)
    assert answer["runbook"]["id"].startswith("runbook:"), answer
    assert "ledger" in answer["runbook"]["id"].lower(), answer["runbook"]["id"]
    return answer  # type: ignore[no-any-return]


def _replay(invoke, run_id: str) -> tuple[int, dict]:  # type: ignore[no-untyped-def,type-arg]
    done = invoke("replay", run_id, *ONCALL, "--json")
    return done.code, json.loads(done.out)


def test_an_edit_of_another_runbook_leaves_a_lookup_verified(  # type: ignore[no-untyped-def]
    runbook_folder: Path, invoke, clean_db: neo4j.Driver
) -> None:
    answer = _lookup(invoke)
    before = {m["id"]: m["fulltext_score"] for m in answer["text_matches"]}
    # A routine edit of an unrelated runbook: the index's statistics now count its words.
    cache = runbook_folder / "CacheEvictionStorm.md"
    cache.write_text(
        cache.read_text(encoding="utf-8") + "3. Note the ledger primary's replication lag.\n",
        encoding="utf-8",
    )
    _ingest(invoke, runbook_folder)
    clean_db.execute_query("CALL db.awaitIndexes(300)")
    again = _lookup(invoke)
    after = {m["id"]: m["fulltext_score"] for m in again["text_matches"]}
    assert any(before.get(k) != v for k, v in after.items()), "the raw scores did not move"

    code, report = _replay(invoke, answer["run_id"])
    assert code == 0, report
    assert report["verified"] is True, report["drift"]
    assert report["pack_hash_match"] is True
    assert report["drift"] == []


def test_a_changed_runbook_still_fails_replay_and_names_what_changed(  # type: ignore[no-untyped-def]
    runbook_folder: Path, invoke, clean_db: neo4j.Driver
) -> None:
    answer = _lookup(invoke)
    # The chosen runbook's text really changes under the run: a legal purge removes it in
    # place (docs/contracts.md), so the re-run reads no steps from it.
    clean_db.execute_query(
        "MATCH (n:KG {id: $id}) "
        "SET n.content = null, n.redacted_content = null, n.purged_at = datetime()",
        id=answer["runbook"]["id"],
    )
    code, report = _replay(invoke, answer["run_id"])
    assert code != 0
    assert report["verified"] is False
    changed = [d for d in report["drift"] if d["kind"] == "answer_changed"]
    assert changed, report["drift"]
    assert "runbook" in changed[0]["detail"], changed[0]["detail"]
