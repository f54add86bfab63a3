"""Replay of an investigation whose fulltext ranking moved after a same-tenant re-import.

A fulltext score is BM25 over the tenant's whole index, whose statistics count every record
version written later, even those the run's `known_at` hides. Re-importing a folder (one
page edited, one removed, one renamed, pages added) moves which records make a call's top
rows although every record the run read is unchanged. Replay re-derives the run from the
ranking the call recorded (its `hits`) of the same, unchanged records, and verifies it with a
note when that reproduces the pack and claims; a record changed in place, purged or
relabelled is still reported (exit 1, or 3 for a relabelling).
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest

from graph_schema.schema_ddl import apply_schema

ONCALL = ("--subject", "rr/user:oncall")
QUESTION = "widget latency high what do I do"

PRINCIPALS = """\
tenant: rr
sources:
  - {source_id: src:iam, source_type: identity, owner_team: team:sre, classification: internal,
     trust: trusted, authority: 100, allowed_purposes: [incident_investigation, audit],
     recorded_at: "2026-01-05T09:00:00Z"}
principals:
  - {id: user:oncall, labels: [sre], purposes: [incident_investigation],
     source_id: src:iam, recorded_at: "2026-01-05T09:00:00Z"}
"""


def _first_pages() -> dict[str, str]:
    """Twelve pages: six about a widget, six about latency; the first call reads ten."""
    pages = {}
    for i in range(6):
        pages[f"widget-{i}.md"] = (
            f"# Widget page {i}\n\nThe widget queue {i} is slow; see the widget dashboard.\n\n"
            f"## Steps\n\n1. Restart widget worker {i}.\n"
        )
        pages[f"latency-{i}.md"] = (
            f"# Latency page {i}\n\nRequest latency of shard {i} rises when the disks fill "
            f"up with old logs and caches.\n\n## Steps\n\n1. Drain shard {i}.\n"
        )
    return pages


def _write(folder: Path, pages: dict[str, str]) -> None:
    for old in folder.glob("*.md"):
        old.unlink()
    for name, text in pages.items():
        (folder / name).write_text(text, encoding="utf-8")


def _ingest(invoke, folder: Path, driver: neo4j.Driver) -> None:  # type: ignore[no-untyped-def]
    done = invoke(
        "ingest", str(folder), "--format", "markdown-runbooks", "--tenant", "rr", "--acl", "sre"
    )  # fmt: skip
    assert done.code == 0, done
    driver.execute_query("CALL db.awaitIndexes(300)")


@pytest.fixture()
def recorded(clean_db: neo4j.Driver, cli_env: object, invoke, tmp_path: Path) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """An investigation recorded over the first pages, then the folder re-imported."""
    apply_schema(clean_db)
    (tmp_path / "principals.yaml").write_text(PRINCIPALS, encoding="utf-8")
    assert invoke("ingest", str(tmp_path / "principals.yaml")).code == 0
    folder = tmp_path / "pages"
    folder.mkdir()
    pages = _first_pages()
    _write(folder, pages)
    _ingest(invoke, folder, clean_db)
    done = invoke("investigate", QUESTION, *ONCALL, "--json")
    assert done.code == 0, done
    run = json.loads(done.out)
    # Later, same tenant: one page edited, one removed, one renamed, eight widget notes added.
    pages["widget-5.md"] += "2. Check the widget widget widget backlog.\n"
    del pages["latency-5.md"]
    pages["latency-four.md"] = pages.pop("latency-4.md")
    for i in range(8):
        pages[f"widget-extra-{i}.md"] = f"# Widget extra {i}\n\nAnother widget widget note {i}.\n"
    _write(folder, pages)
    _ingest(invoke, folder, clean_db)
    return run  # type: ignore[no-any-return]


def _replay(invoke, run_id: str) -> tuple[int, dict, str]:  # type: ignore[no-untyped-def,type-arg]
    done = invoke("replay", run_id, *ONCALL, "--json")
    return done.code, json.loads(done.out), done.err


def test_a_run_reranked_by_later_records_verifies_from_its_recorded_ranking(  # type: ignore[no-untyped-def]
    recorded: dict,  # type: ignore[type-arg]
    invoke,
) -> None:
    # Asked again at the run's own known_at, the ranking has moved: other records are judged.
    again = invoke(
        "investigate", QUESTION, *ONCALL, "--as-of", recorded["as_of"],
        "--known-at", recorded["known_at"], "--json",
    )  # fmt: skip
    assert again.code == 0, again
    before = {r["candidate_id"] for r in recorded["rejected"]}
    after = {r["candidate_id"] for r in json.loads(again.out)["rejected"]}
    assert before != after, "the re-import did not move the ranking"

    # Replay re-derives the run from the ranking it recorded (the call's hits) of the same,
    # unchanged records: what was known at known_at gives the recorded pack and claims.
    # Before, the re-run read today's ranking: `ranking_changed`, `pack_hash_mismatch`, exit 1.
    code, report, err = _replay(invoke, recorded["run_id"])
    assert code == 0, report
    assert report["verified"] is True
    assert report["pack_hash_match"] is True
    assert report["replayed_pack_hash"] == recorded["pack_hash"]
    assert report["drift"] == []
    assert err == ""
    notes = report["notes"]
    assert notes[0].startswith("fulltext scores moved because of later records"), notes
    # How many records the re-import wrote that rr/user:oncall may read (8 notes, an edited
    # page, a renamed page), never one it may not read.
    assert "(10 of them the reader may read;" in notes[0], notes
    assert "reproduced the run" in notes[0]
    ranked = [n for n in notes if n.startswith("tool call tc-01-001: fulltext_search@")]
    assert len(ranked) == 1, notes
    assert "the records the run read are unchanged" in ranked[0]
    text = invoke("replay", recorded["run_id"], *ONCALL)
    assert text.code == 0, text
    assert "verified:        true" in text.out
    assert "\nnotes:\n  fulltext scores moved because of later records" in text.out
    assert "drift:" not in text.out


def test_a_rejected_record_changed_in_place_after_a_reranking_is_not_verified(  # type: ignore[no-untyped-def]
    recorded: dict,  # type: ignore[type-arg]
    invoke,
    clean_db: neo4j.Driver,
) -> None:
    # A record the call read and the run kept only as a rejection (no text kept) reads
    # other text now: the call's rows are not the ones it read, so no re-ranking either.
    rejected = [r for r in recorded["rejected"] if r["element_id"] == "runbook:widget-0"]
    assert rejected, recorded["rejected"]
    clean_db.execute_query(
        "MATCH (n:KG {tenant: 'rr', id: 'runbook:widget-0'}) "
        "SET n.content = n.content + ' Also delete the widget queue.'"
    )
    code, report, _ = _replay(invoke, recorded["run_id"])
    assert code == 1, report
    assert report["verified"] is False
    assert report["notes"] == []
    kinds = [d["kind"] for d in report["drift"]]
    assert "ranking_changed" not in kinds, report["drift"]
    assert any(d["tool_call_id"] == "tc-01-001" for d in report["drift"]), report["drift"]


def test_a_record_relabelled_after_a_reranking_is_not_verified(  # type: ignore[no-untyped-def]
    recorded: dict,  # type: ignore[type-arg]
    invoke,
    clean_db: neo4j.Driver,
) -> None:
    # A record the run read is relabelled for everyone: no longer read by the subject, so
    # the run is not reproduced (exit 3: only what the subject may read now differs).
    clean_db.execute_query(
        "MATCH (n:KG {tenant: 'rr', id: 'runbook:widget-0'}) SET n.acl = ['secret']"
    )
    code, report, _ = _replay(invoke, recorded["run_id"])
    assert code == 3, report
    assert report["verified"] is False
    assert report["notes"] == []
    assert "ranking_changed" not in [d["kind"] for d in report["drift"]], report["drift"]
    assert "data_not_visible" in [d["kind"] for d in report["drift"]], report["drift"]


def test_a_changed_record_is_not_called_a_ranking_change(  # type: ignore[no-untyped-def]
    recorded: dict,  # type: ignore[type-arg]
    invoke,
    clean_db: neo4j.Driver,
) -> None:
    # One record the run read loses its text in place (a legal purge's shape): the rows the
    # run read are not all there any more, so replay must not call it a ranking change.
    assert "runbook:widget-0" in {r["element_id"] for r in recorded["rejected"]}
    clean_db.execute_query(
        "MATCH (n:KG {tenant: 'rr', id: 'runbook:widget-0'}) "
        "SET n.content = null, n.redacted_content = null, n.purged_at = datetime()"
    )
    code, report, _ = _replay(invoke, recorded["run_id"])
    assert code == 1
    assert report["verified"] is False
    assert "ranking_changed" not in [d["kind"] for d in report["drift"]], report["drift"]


def test_a_subject_whose_grants_changed_is_told_so(  # type: ignore[no-untyped-def]
    recorded: dict,  # type: ignore[type-arg]
    invoke,
    tmp_path: Path,
) -> None:
    # Replay reads with the grants of now: a label gained after the run could also rank
    # records the subject could not read then among the rows, so the note says so; the
    # re-run, given the recorded ranking, still reproduces the run.
    head = PRINCIPALS.split("principals:\n")[0]
    later = (
        f"{head}principals:\n  - {{id: user:oncall, labels: [sre, security], "
        f'purposes: [incident_investigation], source_id: src:iam, recorded_at: "{_now()}"}}\n'
    )
    (tmp_path / "later.yaml").write_text(later, encoding="utf-8")
    assert invoke("ingest", str(tmp_path / "later.yaml")).code == 0
    code, report, _ = _replay(invoke, recorded["run_id"])
    assert code == 0, report
    ranked = [n for n in report["notes"] if n.startswith("tool call tc-01-001")]
    assert ranked and "grants also changed since the run" in ranked[0], report
    assert "security" not in ranked[0]


def _now() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).isoformat().replace("+00:00", "Z")
