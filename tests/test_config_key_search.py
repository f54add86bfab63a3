"""A config key typed alone finds the page that names it: `runbook max_size` finds the page
that says `db.pool.max_size`, and `investigate "max_size too low?"` cites it. On a real
Neo4j, through the CLI.

The fulltext analyzer keeps `db.pool.max_size` as one token, so the words `max` and `size`
(what the search read `max_size` as) matched nothing: "no runbook mentions any of: max,
size". The compiler now also asks for the tokens that end with a config-key-shaped word
(`*max_size`); hostile text stays a normal answer, never an error from Neo4j.

The pages are written here; no public corpus text.
"""

from __future__ import annotations

from pathlib import Path

import neo4j
import pytest
from conftest import import_runbook_pages, investigate_json, runbook_json

PAGES = {
    "pool-exhausted.md": "---\ntitle: Connection pool exhausted\n---\n"
    "# Connection pool exhausted\n\n"
    "Requests wait for a connection when db.pool.max_size is set below the load.\n\n"
    "1. Compare db.pool.max_size with the active connections.\n"
    "2. Raise it back and restart the service.\n",
    "billing-errors.md": "---\ntitle: Billing errors\n---\n# Billing errors\n\n"
    "1. Check the billing queue depth.\n2. Retry the failed invoices.\n",
}


@pytest.fixture
def pages(driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    import_runbook_pages(driver, invoke, tmp_path / "keys", PAGES)
    return driver


@pytest.mark.parametrize("text", ["max_size", "pool.max_size", "db.pool.max_size", "MAX_SIZE"])
def test_a_config_key_or_its_last_part_finds_the_runbook(pages, invoke, text: str) -> None:  # type: ignore[no-untyped-def]
    # Before: "no runbook mentions any of: max, size".
    doc = runbook_json(invoke, text)
    assert doc["runbook"] is not None, doc["note"]
    assert doc["runbook"]["id"] == "runbook:pool-exhausted"


def test_the_terminal_card_names_the_page(pages, invoke) -> None:  # type: ignore[no-untyped-def]
    result = invoke("runbook", "max_size", "--subject", "user:oncall")
    assert result.code == 0, result
    assert result.out.startswith("Runbook   Connection pool exhausted"), result.out


def test_investigate_cites_the_runbook_a_config_key_names(pages, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = investigate_json(invoke, "what do I do about max_size?", "--subject", "user:oncall")
    assert doc["status"] == "complete", doc["missing_evidence"]
    [claim] = [c for c in doc["claims"] if c["statement"].startswith("Runbook ")]
    assert "runbook:pool-exhausted" in claim["statement"]


@pytest.mark.parametrize(
    "text", ["*", "_", "a.*", "max_*", "*max_size", "max_size~2", 'max_size" OR *', "x_" * 300]
)
def test_hostile_text_is_a_normal_answer(pages, invoke, text: str) -> None:  # type: ignore[no-untyped-def]
    result = invoke("runbook", text, "--subject", "user:oncall", "--json")
    # A normal card, or one line naming what to give instead: never Neo4j's error.
    assert result.code in (0, 2), result
    assert "Neo" not in result.out + result.err and "Traceback" not in result.err, result


def test_suffix_terms_only_for_key_shaped_words() -> None:
    from cypher_templates.compiler import config_keys, lucene_literal

    assert (
        lucene_literal(key_suffixes=True, text="max_size too low") == "max_size too low *max_size"
    )
    assert (
        lucene_literal(key_suffixes=True, text="db.pool.max_size.")
        == "db.pool.max_size. *db.pool.max_size"
    )
    for text in ("*", "_", "a.*", "e.g. pool", "2026.07.23.1", "payment-api", "k" * 200 + "_x"):
        assert "*" not in lucene_literal(text, key_suffixes=True).replace("\\*", "")
    # Version 4 of fulltext_search compiles as before, so its recorded runs replay alike.
    assert lucene_literal("max_size too low") == "max_size too low"
    # Each is a scan of the term dictionary: two at most.
    assert lucene_literal(key_suffixes=True, text="a_bcd e_fgh i_jkl").count("*") == 2
    assert config_keys("set `db.pool.max_size` and max_size.") == ["db.pool.max_size", "max_size"]
