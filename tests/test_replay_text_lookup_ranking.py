"""Replay of a free-text runbook lookup (and an investigation whose runbook is found by its
words) after other pages of the same tenant were imported.

The other pages are recorded after the run, so its `known_at` hides them, but they change
the tenant index's BM25 statistics: the text search's ~30 best hits are other ones now,
though every record the run read is still there, unchanged. Before, the lookup kept no record
of its hits, so replay said `hash_mismatch` on `fulltext_search` (read as tampering) and
`answer_changed` (`text_matches`). Now the call keeps its hits (ids, versions, scores) as a
property of its recorded tool call, and replay says `ranking_changed`; since session 29 the
re-run is given those hits (the same records, unchanged, as the run ranked them), reproduces
the run, and replay verifies it with notes (before: exit 1).
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest

from graph_schema.schema_ddl import apply_schema

ONCALL = ("--subject", "tl/user:oncall")
AUDITOR = ("--subject", "tl/user:auditor", "--purpose", "audit")
WORDS = "widget queue backlog"
QUESTION = "The widget queue backlog keeps growing, what do I do?"

PRINCIPALS = """\
tenant: tl
sources:
  - {source_id: src:iam, source_type: identity, owner_team: team:sre, classification: internal,
     trust: trusted, authority: 100, allowed_purposes: [incident_investigation, audit],
     recorded_at: "2026-01-05T09:00:00Z"}
principals:
  - {id: user:oncall, labels: [sre], purposes: [incident_investigation, audit],
     source_id: src:iam, recorded_at: "2026-01-05T09:00:00Z"}
  - {id: user:auditor, labels: [], purposes: [audit],
     source_id: src:iam, recorded_at: "2026-01-05T09:00:00Z"}
"""


def _first_pages() -> dict[str, str]:
    """The page the words name, and 40 that share one of its words: more hits than the
    search's 30, so which make its top rows depends on each word's weight in the index."""
    pages = {
        "widget-backlog.md": (
            "# Widget queue backlog\n\nThe widget queue backlog grows when the workers "
            "stall.\n\n## Steps\n\n1. Restart the widget workers.\n"
        )
    }
    for i in range(20):
        pages[f"widget-{i}.md"] = (
            f"# Widget page {i}\n\nThe widget dashboard {i}{' and its panels' * (i % 4)}.\n"
        )
        pages[f"queue-{i}.md"] = (
            f"# Queue page {i}\n\nThe queue of shard {i} drains{' very slowly' * (i % 3)}.\n"
        )
    return pages


def _other_pages() -> dict[str, str]:
    """Pages imported after the run: `widget` becomes a common word of the tenant's index."""
    return {
        f"gadget-{i}.md": f"# Gadget note {i}\n\nThe widget widget gadget note {i}.\n"
        for i in range(40)
    }


def _import(invoke, folder: Path, driver: neo4j.Driver, pages: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    folder.mkdir()
    for name, text in pages.items():
        (folder / name).write_text(text, encoding="utf-8")
    done = invoke(
        "ingest", str(folder), "--format", "markdown-runbooks", "--tenant", "tl", "--acl", "sre",
        "--source-id", f"src:{folder.name}",
    )  # fmt: skip
    assert done.code == 0, done
    driver.execute_query("CALL db.awaitIndexes(300)")


@pytest.fixture()
def recorded(clean_db: neo4j.Driver, cli_env: object, invoke, tmp_path: Path) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """A free-text lookup and an investigation recorded over the first pages, then other
    pages imported."""
    apply_schema(clean_db)
    (tmp_path / "principals.yaml").write_text(PRINCIPALS, encoding="utf-8")
    assert invoke("ingest", str(tmp_path / "principals.yaml")).code == 0
    _import(invoke, tmp_path / "pages", clean_db, _first_pages())
    lookup = invoke("runbook", WORDS, *ONCALL, "--json")
    assert lookup.code == 0, lookup
    card = json.loads(lookup.out)
    assert card["runbook"]["id"] == "runbook:widget-backlog", card
    asked = invoke("investigate", QUESTION, *ONCALL, "--json")
    assert asked.code == 0, asked
    run = json.loads(asked.out)
    assert any("widget-backlog" in str(c["statement"]) for c in run["claims"]), run["claims"]
    _import(invoke, tmp_path / "later", clean_db, _other_pages())
    return {"lookup": card, "investigation": run}


def _replay(invoke, run_id: str) -> tuple[int, dict, str]:  # type: ignore[no-untyped-def,type-arg]
    done = invoke("replay", run_id, *ONCALL, "--json")
    return done.code, json.loads(done.out), done.err


def test_a_reranked_lookup_verifies_from_its_recorded_ranking(  # type: ignore[no-untyped-def]
    recorded: dict,  # type: ignore[type-arg]
    invoke,
) -> None:
    card = recorded["lookup"]
    # Asked again at the run's own known_at: same runbook, but the matches rank otherwise.
    again = invoke(
        "runbook", WORDS, *ONCALL, "--as-of", card["as_of"], "--known-at", card["known_at"],
        "--json",
    )  # fmt: skip
    assert again.code == 0, again
    now = json.loads(again.out)
    assert now["runbook"]["id"] == card["runbook"]["id"]
    ids = [[m["id"], m["fit"]] for m in card["text_matches"]]
    assert ids != [[m["id"], m["fit"]] for m in now["text_matches"]], "the ranking did not move"

    # The re-run is given the search's recorded hits (the same records, unchanged), so it
    # answers as recorded, text matches included: verified, with a note. Before: exit 1,
    # `ranking_changed` on the search and on the answer's text_matches.
    code, report, err = _replay(invoke, card["run_id"])
    assert code == 0, report
    assert report["verified"] is True
    assert report["drift"] == []
    assert err == ""
    notes = report["notes"]
    assert notes[0].startswith("fulltext scores moved because of later records"), notes
    assert "(40 of them the reader may read;" in notes[0], notes
    ranked = [n for n in notes if "fulltext_search@" in n]
    assert ranked, notes
    assert "the 30 the run read are still returned to tl/user:oncall" in ranked[0]
    assert "recorded scores moved" in ranked[0]


def test_a_reranked_investigation_runbook_search_verifies(  # type: ignore[no-untyped-def]
    recorded: dict,  # type: ignore[type-arg]
    invoke,
) -> None:
    code, report, _ = _replay(invoke, recorded["investigation"]["run_id"])
    assert code == 0, report
    assert report["drift"] == []
    assert any(n.startswith("fulltext scores moved") for n in report["notes"]), report


def test_the_runbook_changed_in_place_after_a_reranking_is_not_verified(  # type: ignore[no-untyped-def]
    recorded: dict,  # type: ignore[type-arg]
    invoke,
    clean_db: neo4j.Driver,
) -> None:
    # The runbook the lookup answered with reads other text now, same id and version (no
    # purge recorded): no re-ranking explains that; the run is not verified.
    clean_db.execute_query(
        "MATCH (n:KG {tenant: 'tl', id: 'runbook:widget-backlog'}) "
        "SET n.content = n.content + ' Then delete the queue.'"
    )
    for run_id in (recorded["lookup"]["run_id"], recorded["investigation"]["run_id"]):
        code, report, _ = _replay(invoke, run_id)
        assert code == 1, report
        assert report["verified"] is False
        assert report["notes"] == []
        kinds = [d["kind"] for d in report["drift"]]
        assert "ranking_changed" not in kinds or set(kinds) - {"ranking_changed"}, kinds


def test_a_record_no_longer_read_is_no_ranking_change(  # type: ignore[no-untyped-def]
    recorded: dict,  # type: ignore[type-arg]
    invoke,
    clean_db: neo4j.Driver,
) -> None:
    # A record among the search's hits (not the answer) is relabelled for everyone: the
    # records the run read are not all returned, so that is no re-ranking.
    clean_db.execute_query(
        "MATCH (n:KG {tenant: 'tl'}) WHERE n.id STARTS WITH 'runbook:queue-' SET n.acl = ['secret']"
    )
    code, report, _ = _replay(invoke, recorded["lookup"]["run_id"])
    assert code != 0
    assert report["verified"] is False
    calls = [d for d in report["drift"] if d["detail"].startswith("fulltext_search@")]
    assert calls and calls[0]["kind"] == "hash_mismatch", report["drift"]
    assert "not returned now" in calls[0]["detail"], calls
    assert "ranking_changed" not in [d["kind"] for d in report["drift"]], report["drift"]


def test_an_auditor_sees_no_hit_it_may_not_read(  # type: ignore[no-untyped-def]
    recorded: dict,  # type: ignore[type-arg]
    invoke,
) -> None:
    # The hits name records: an auditor without their label is shown none of them.
    done = invoke("trace", recorded["lookup"]["run_id"], *AUDITOR, "--format", "json")
    assert done.code == 0, done
    assert "runbook:widget-" not in done.out and "runbook:queue-" not in done.out
    mine = invoke("trace", recorded["lookup"]["run_id"], *ONCALL, "--format", "json")
    assert mine.code == 0, mine
    assert "runbook:queue-" in mine.out  # its subject reads them (the hits are recorded)
    # Its replay's notes name no record and count none the auditor may not read.
    done = invoke("replay", recorded["lookup"]["run_id"], *AUDITOR, "--json")
    assert done.code == 0, done
    report = json.loads(done.out)
    assert "(0 of them the reader may read;" in report["notes"][0], report["notes"]
    assert "runbook:widget-" not in done.out and "runbook:queue-" not in done.out
    assert "the 30 the run read" not in done.out
