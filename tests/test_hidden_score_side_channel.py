"""Fulltext scores say nothing of records the subject may not read (h39-walk-attacker).

A tenant's fulltext index counts every record of the tenant (issue 18 made it per tenant),
so Lucene's BM25 score of a page bob may read depends on how many pages of his tenant hold
the same word, those he may not read included (document frequency, document count). Bob
read the raw score in `runbook --json` (`text_matches[].fulltext_score`), in the recorded
hits of his run's `trace` and in the served `runbook_lookup`: before, his one `quasar`
runbook scored 5.989 and, once three pages labelled `pii` that mention quasar were ingested
into acme, 5.284, so he learned that pages he may not read use the word (and, from the
formula, about how many). Real Neo4j, through the CLI as bob meets it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import neo4j
import yaml

BOB = ("--subject", "acme/user:bob")


def _bundle(path: Path, documents: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump({"tenant": "acme", "documents": documents}), encoding="utf-8")
    return path


def _page(doc_id: str, title: str, content: str, acl: list[str]) -> dict[str, Any]:
    return {
        "id": doc_id,
        "kind": "runbook" if doc_id.startswith("runbook:") else "incident_report",
        "title": title,
        "content": content,
        "locator": f"wiki/{doc_id}.md#1",
        "source_id": "src:wiki-runbooks",
        "acl": acl,
        "valid_from": "2025-01-01T00:00:00Z",
    }


def _bobs_scores(invoke: Any) -> tuple[list[Any], list[str]]:
    """The scores bob is shown for `quasar`: the lookup's text matches and its trace's hits."""
    looked = invoke("runbook", "quasar", *BOB, "--json")
    assert looked.code == 0, looked
    answer = json.loads(looked.out)
    assert answer["runbook"]["id"] == "runbook:quasar@v1", answer
    matches = [(m["id"], m["score"], m["fulltext_score"]) for m in answer["text_matches"]]
    traced = invoke("trace", answer["run_id"], *BOB, "--format", "json")
    assert traced.code == 0, traced
    hits = [
        hit
        for node in json.loads(traced.out)["nodes"]
        for hit in node["properties"].get("hits") or []
    ]
    assert hits, "the lookup's fulltext call keeps its hits"
    return matches, hits


def test_pages_bob_may_not_read_do_not_move_the_scores_he_is_shown(
    demo_graph: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    visible = _bundle(
        tmp_path / "visible.yaml",
        [
            _page(
                "runbook:quasar@v1",
                "Quasar rotation",
                "Quasar rotation steps: drain the quasar pool and restart it.",
                ["internal"],
            )
        ],
    )
    done = invoke("ingest", str(visible))
    assert done.code == 0, done
    demo_graph.execute_query("CALL db.awaitIndexes(300)")
    before = _bobs_scores(invoke)

    hidden = _bundle(
        tmp_path / "hidden.yaml",
        [
            _page(f"doc:confidential-{n}", f"Confidential {n}", text, ["internal", "pii"])
            for n, text in enumerate(["quasar quasar quasar", "quasar", "quasar merger"])
        ],
    )
    done = invoke("ingest", str(hidden))
    assert done.code == 0, done
    demo_graph.execute_query("CALL db.awaitIndexes(300)")
    # alice (pii) reads them: they are in bob's tenant, only not his to read.
    looked = invoke("investigate", "what do the documents say about quasar merger?",
                    "--subject", "acme/user:alice", "--json")  # fmt: skip
    assert looked.code == 0, looked

    after = _bobs_scores(invoke)
    assert after == before, (before, after)
