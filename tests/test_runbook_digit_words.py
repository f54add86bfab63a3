"""Words with digits ("5xx", "probe1", "k8s", "ipv6") are what an on-call engineer searches
for: `runbook 5xx` finds the page titled "Frontend 5xx", and `investigate` answers with it; a
number, a time or a quantity ("10:04", "2026-07-23T10:04:00Z", "500ms") still names nothing.
On a real Neo4j, through the CLI.

Before, every word with a digit was dropped as a number: `runbook 5xx` and
`runbook "Probe1 runbook"` answered "the text has no informative words to search for" though
the pages existed, and "what do I do about 5xx?" was `partial` with no runbook.

The pages are written here; no public corpus text.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import import_runbook_folder, investigate_json

PAGES = {
    "frontend-5xx.md": "---\ntitle: Frontend 5xx\n---\n# Frontend 5xx\n\n"
    "1. Check the load balancer health.\n2. Scale the frontend deployment out.\n",
    "probe1.md": "---\ntitle: Probe1 runbook\n---\n# Probe1\n\n"
    "1. Open the synthetic check dashboard.\n2. Re-run the check from a second region.\n",
    "dns-ipv6.md": "---\ntitle: Cluster DNS over IPv6\n---\n# Cluster DNS over IPv6\n\n"
    "When k8s nodes lose their ipv6 routes, name lookups time out.\n\n"
    "1. Restart the node-local DNS cache.\n",
    "billing-errors.md": "---\ntitle: Billing errors\n---\n# Billing errors\n\n"
    "1. Check the billing queue depth.\n2. Retry the failed invoices after 10 minutes.\n",
}


@pytest.fixture
def pages(driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    folder = tmp_path / "digits"
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
        ("5xx", "runbook:frontend-5xx"),
        ("frontend 5xx", "runbook:frontend-5xx"),
        ("Probe1 runbook", "runbook:probe1"),
        ("probe1", "runbook:probe1"),
        ("k8s ipv6", "runbook:dns-ipv6"),
    ],
)
def test_a_word_with_digits_finds_its_runbook(pages, invoke, text: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    doc = _card(invoke, text)
    assert doc["runbook"] is not None, doc["note"]
    assert doc["runbook"]["id"] == expected


def test_the_terminal_card_names_the_page(pages, invoke) -> None:  # type: ignore[no-untyped-def]
    result = invoke("runbook", "5xx", "--subject", "user:oncall")
    assert result.code == 0, result
    assert result.out.startswith("Runbook   Frontend 5xx  [runbook:frontend-5xx"), result.out
    assert "no informative words" not in result.out


@pytest.mark.parametrize(
    "text",
    [
        "10:04",
        "at 2026-07-23T10:04:00Z",
        "09:55:12Z, 500ms, 120s, 5m, 1h30m, 10am",
        "the 2nd, >= 65%, 10 + 2",
        "5",
    ],
)
def test_numbers_and_times_still_name_nothing(pages, invoke, text: str) -> None:  # type: ignore[no-untyped-def]
    # "10" is in the billing page and "5" in "5xx": neither is chosen by them.
    doc = _card(invoke, text)
    assert doc["runbook"] is None
    assert "no informative words" in doc["note"], doc["note"]


def test_investigate_cites_the_runbook_a_word_with_digits_names(pages, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = investigate_json(invoke, "what do I do about 5xx?", "--subject", "user:oncall")
    assert doc["status"] == "complete", doc["missing_evidence"]
    [claim] = [c for c in doc["claims"] if c["statement"].startswith("Runbook ")]
    assert "Runbook Frontend 5xx (runbook:frontend-5xx" in claim["statement"]
