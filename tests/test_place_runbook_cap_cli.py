"""Which runbooks of a place survive the per-type cap when the question's words fit one of
them: the demo data and seventeen Markdown pages of our own, "Zork variant 1-9" and "Gronk
variant 1-8", all attached to svc:ledger, each about its own queue (`1. Check the zork8
queue.`), imported untrusted as a folder dropped by another team would be, through the CLI
on a real Neo4j (helper h29-topk2, from explorer e29-qa finding 5).

Before: "How do I fix the zork8 queue on ledger?" claimed up to five pages of ledger as
`fact`s, pages about other queues (Gronk variant 1-4), since each shares the word "queue"
with the symptom, and whether the page the runbook search chose for the words (runbook:zork-8)
was among them or `top_k_reached` depended on the order the cap met them in (the explorer's
run cut it). "Which runbook covers the zork8 queue?" asked the search for "covers" too, a
word no runbook uses, so it chose none and zork-8 was rejected `low_relevance`, while the
card (`runbook "zork8 queue"`) serves zork-8. Now the search's page is weighed first and
never cut by the cap, and a page of the place that is not about every word of the symptom
the search's page is about is not claimed."""

from __future__ import annotations

import re
from pathlib import Path

import neo4j
import pytest
from conftest import investigate_json

BOB = ["--subject", "acme/user:bob", "--deadline-seconds", "600"]
ZORK = "runbook:zork-8"


def _page(kind: str, n: int) -> str:
    return (
        f"---\ntitle: {kind} variant {n}\nservices: [svc:ledger]\n---\n"
        f"# {kind} variant {n}\n\n"
        f"1. Check the {kind.lower()}{n} queue.\n"
        f"2. Drain the {kind.lower()}{n} dead letters.\n"
        f"3. Restart {kind.lower()}{n}.\n"
    )


@pytest.fixture()
def loaded(demo_graph: neo4j.Driver, tmp_path: Path, cli_env, invoke) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    """The demo data and the seventeen pages imported through the CLI, once per module."""
    if not demo_graph.execute_query(f"MATCH (r:KG {{id: '{ZORK}'}}) RETURN r").records:
        root = tmp_path / "pages"
        root.mkdir()
        for kind, count in (("Zork", 9), ("Gronk", 8)):
            for n in range(1, count + 1):
                (root / f"{kind.lower()}-{n}.md").write_text(_page(kind, n), encoding="utf-8")
        result = invoke(
            "ingest", str(root), "--format", "markdown-runbooks",
            "--tenant", "acme", "--acl", "internal", "--source-id", "src:zork",
        )  # fmt: skip
        assert result.code == 0, result
        demo_graph.execute_query("CALL db.awaitIndexes(300)")
    return demo_graph


def _claimed(doc: dict) -> list[str]:  # type: ignore[type-arg]
    """The runbooks claimed in force, by id without version."""
    return sorted(
        found.group(1)
        for c in doc["claims"]
        if c["statement"].startswith("Runbook ")
        and (found := re.search(r"\((runbook:[^,)@]+)", c["statement"])) is not None
    )


def _rejected(doc: dict) -> dict[str, dict]:  # type: ignore[type-arg]
    return {r["element_id"]: r for r in doc["rejected"]}


@pytest.mark.parametrize(
    "flags", [[], ["--service", "svc:ledger"]], ids=["in-words", "with-service"]
)
def test_the_page_the_words_fit_is_the_one_claimed(loaded, invoke, flags: list[str]) -> None:  # type: ignore[no-untyped-def]
    doc = investigate_json(invoke, "How do I fix the zork8 queue on ledger?", *BOB, *flags)
    # Before: runbook:gronk-1 ... gronk-4 (and zork-8, or not: `top_k_reached`), each a fact.
    assert _claimed(doc) == [ZORK], doc["claims"]
    rejected = _rejected(doc)
    assert ZORK not in rejected, rejected[ZORK]
    # With `--service` the place's runbooks are read in the first round, before the search
    # chose: those the cap took then are withdrawn once it has, the rest stay cut by it.
    unfit = range(1, 9) if not flags else range(1, 5)
    for n in unfit:
        gronk = rejected[f"runbook:gronk-{n}"]
        assert gronk["reason"] == "low_relevance", gronk
        assert gronk["detail"] == (
            "a runbook linked to svc:ledger that names no alert: the runbook search's best "
            f"fit for the question's words, {ZORK}, is linked to svc:ledger too, and this one "
            "is not about 'zork8'"
        ), gronk
    if not flags:
        # No other page of ledger is weighed against the cap: none is about the zork8 queue.
        assert not [r for r in doc["rejected"] if r["reason"] == "top_k_reached"], doc["rejected"]
    assert doc["status"] == "complete", doc["missing_evidence"]
    assert not [m for m in doc["missing_evidence"] if m["required"]], doc["missing_evidence"]


def test_which_runbook_covers_asks_the_search_for_the_words_after_it(loaded, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = investigate_json(invoke, "Which runbook covers the zork8 queue?", *BOB)
    # Before: no claim, `runbook:zork-8: low_relevance`, a required runbook gap.
    assert _claimed(doc) == [ZORK], (doc["claims"], doc["missing_evidence"])
    assert doc["status"] == "complete", doc["missing_evidence"]
    # Every word of the question counts still: a queue no page is about is no answer.
    other = investigate_json(invoke, "Which runbook covers the blip queue?", *BOB)
    assert _claimed(other) == [], other["claims"]
    assert other["status"] == "partial", other["missing_evidence"]


def test_the_place_alone_still_answers_with_its_runbooks(loaded, invoke) -> None:  # type: ignore[no-untyped-def]
    # No symptom said: the place's runbooks answer, five of them (the cap), as before.
    doc = investigate_json(invoke, "what is the runbook for ledger?", *BOB)
    assert len(_claimed(doc)) == 5, doc["claims"]
