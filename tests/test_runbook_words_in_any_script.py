"""Words with accents, umlauts, Cyrillic or CJK are searched whole: `runbook Zählerstand`
finds the page titled "Zählerstand fehlt", `runbook réplication` the French one, and
`investigate` answers with them. On a real Neo4j, through the CLI.

Before, the runbook search read only `a-z` and `0-9` as letters: "Zählerstand" was searched
as "hlerstand" and "réplication" as "plication" (words no page has: "no runbook mentions any
of: hlerstand"), "gehörte" was "geh" and "rte", and a Cyrillic or Chinese text had "no
informative words" at all. The fulltext index keeps such words whole (Lucene's standard
analyzer; Han one character a word), so the search now asks it the words it holds: a part
cut off a word ("geh" of "gehörte") still finds nothing.

The pages are written here; no public corpus text.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import import_runbook_folder, investigate_json

PAGES = {
    "zaehler.md": "---\ntitle: Zählerstand fehlt\n---\n# Zählerstand fehlt\n\n"
    "Der Zählerstand gehörte zum nächtlichen Abrechnungslauf.\n\n"
    "1. Prüfe den Import der Messwerte.\n2. Starte den Abrechnungslauf neu.\n",
    "replication.md": "---\ntitle: Retard de réplication\n---\n# Retard de réplication\n\n"
    "La base secondaire accuse un retard important.\n\n"
    "1. Vérifier le débit du réseau.\n2. Redémarrer le processus.\n",
    "queue.md": "---\ntitle: Очередь платежей переполнена\n---\n"
    "# Очередь платежей переполнена\n\n1. Проверьте потребителей очереди.\n",
    "gateway.md": "---\ntitle: 支付失败处理\n---\n# 支付失败处理\n\n"
    "当网关返回错误时，检查证书。\n\n1. 重启服务。\n",
    "database.md": "---\ntitle: データベース接続エラー\n---\n# データベース接続エラー\n\n"
    "1. コネクションプールを確認する。\n",
    "billing-errors.md": "---\ntitle: Billing errors\n---\n# Billing errors\n\n"
    "1. Check the billing queue depth.\n2. Retry the failed invoices.\n",
}


@pytest.fixture
def pages(driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    folder = tmp_path / "scripts"
    folder.mkdir()
    for name, text in PAGES.items():
        (folder / name).write_text(text, encoding="utf-8")
    import_runbook_folder(driver, invoke, folder)
    return driver


def _card(invoke, text: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("runbook", text, "--subject", "user:oncall", "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Zählerstand", "runbook:zaehler"),
        ("zählerstand", "runbook:zaehler"),
        ("ZÄHLERSTAND FEHLT", "runbook:zaehler"),
        ("gehörte", "runbook:zaehler"),
        ("réplication", "runbook:replication"),
        ("retard de réplication", "runbook:replication"),
        ("очередь платежей", "runbook:queue"),
        ("支付失败", "runbook:gateway"),
        ("支付失败怎么办", "runbook:gateway"),
        ("データベース接続", "runbook:database"),
    ],
)
def test_a_word_in_any_script_finds_its_runbook(pages, invoke, text: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    doc = _card(invoke, text)
    assert doc["runbook"] is not None, doc["note"]
    assert doc["runbook"]["id"] == expected


def test_the_terminal_card_names_the_page(pages, invoke) -> None:  # type: ignore[no-untyped-def]
    result = invoke("runbook", "Zählerstand", "--subject", "user:oncall")
    assert result.code == 0, result
    assert result.out.startswith("Runbook   Zählerstand fehlt  [runbook:zaehler"), result.out


@pytest.mark.parametrize(("text", "said"), [("geh", "geh"), ("geh rte", "geh, rte")])
def test_a_part_cut_off_a_word_finds_nothing(pages, invoke, text: str, said: str) -> None:  # type: ignore[no-untyped-def]
    # "geh" and "rte" are what "gehörte" was cut into: no page has them as words.
    doc = _card(invoke, text)
    assert doc["runbook"] is None
    assert doc["text_matches"] == []
    assert doc["note"] == f"no runbook mentions any of: {said}"


def test_a_word_no_page_has_is_named_whole(pages, invoke) -> None:  # type: ignore[no-untyped-def]
    # Before: "no runbook mentions any of: hlerstandsmeldung" (the word cut at its ä).
    doc = _card(invoke, "Zählerstandsmeldung")
    assert doc["runbook"] is None
    assert doc["note"] == "no runbook mentions any of: zählerstandsmeldung"


def test_investigate_cites_the_runbook_a_word_with_an_umlaut_names(pages, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = investigate_json(
        invoke, "what do I do about the Zählerstand?", "--subject", "user:oncall"
    )
    assert doc["status"] == "complete", doc["missing_evidence"]
    [claim] = [c for c in doc["claims"] if c["statement"].startswith("Runbook ")]
    assert "Runbook Zählerstand fehlt (runbook:zaehler" in claim["statement"]
