"""One page of alert sections (cortex-jsonnet's `playbooks.md`, Mimir's runbooks page):
free text with a slip finds the alert's section, and the retrieval measurement scores
such a page by the section the card shows, on a real Neo4j.

The fixture (tests/fixtures/playbooks-page) is that page's shape in this repository's own
words; like the real page, one section writes the slip "unhealth" once.
"""

from __future__ import annotations

from pathlib import Path

import neo4j
import pytest
from conftest import runbook_json

from graph_schema.schema_ddl import apply_schema
from investigator.runbook_lookup import RunbookLookup
from investigator.runbook_retrieval import (
    CorpusQuery,
    QueryKind,
    QueryOutcome,
    ask,
    ingest_corpus,
    score,
)

PAGE = Path(__file__).parent / "fixtures" / "playbooks-page"
CATALOG = Path(__file__).parent / "fixtures" / "runbooks" / "catalogs" / "acme.yaml"


@pytest.fixture()
def playbooks(driver: neo4j.Driver, cli_env: object, invoke) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    from test_runbook_lookup import wipe
    from test_runbook_sections import _ingest

    wipe(driver)
    assert invoke("ingest", str(CATALOG)).code == 0
    _ingest(invoke, PAGE / "alerts", PAGE / "rules")
    return driver


def test_a_slip_is_read_as_the_word_the_page_writes_most_and_finds_its_section(  # type: ignore[no-untyped-def]
    playbooks: neo4j.Driver, invoke
) -> None:
    # "unhealty" is one letter off both "unhealth" (the page's own slip, once) and
    # "unhealthy" (more often). Before, the tie went to "unhealth" by the alphabet: asked
    # again as "ingester unhealth", no heading had two of its words and the card showed
    # the page's opening text.
    doc = runbook_json(invoke, "ingster unhealty")
    runbook = doc["runbook"]
    assert runbook["id"] == "runbook:alerts"
    assert runbook["steps_locator"] == "playbooks.md#ledgeringesterunhealthy"
    assert runbook["steps"][:2] == [
        "How to fix:",
        "- Read the logs of the unhealthy ingester: `kubectl logs ingester-2 --namespace=ledger`.",
    ]
    card = invoke("runbook", "ingster unhealty", "--subject", "user:oncall")
    assert card.code == 0, card
    assert "'unhealty' as 'unhealthy'" in card.out
    assert "Locator   playbooks.md#ledgeringesterunhealthy\n" in card.out


def test_the_measurement_scores_a_page_of_sections_by_the_section_shown(
    driver: neo4j.Driver,
) -> None:
    apply_schema(driver)
    ingest_corpus(driver, PAGE, "ledgerpage")
    lookup = RunbookLookup(driver, record=False)

    def asked(text: str, expected: str | None) -> QueryOutcome:
        kind = QueryKind.ONCALL if expected else QueryKind.NO_FIT
        query = CorpusQuery(kind=kind, text=text, expected=expected)
        return ask(lookup, query, "ledgerpage", sections=True)

    ring = asked("LedgerRulerFailedRingCheck what do I do", "runbook:LedgerRulerFailedRingCheck")
    # The page is one runbook; its section is the answer measured.
    assert ring.answer == "runbook:alerts#ledgerrulerfailedringcheck"
    assert ring.top1
    wrong = asked("LedgerRulerFailedRingCheck what do I do", "runbook:LedgerIngesterUnhealthy")
    assert not wrong.top1
    # The page found, no section chosen: its opening text is no steps, an abstention.
    none = asked("postgres disk full on the ingester volume", None)
    assert none.section is None
    assert none.abstained
    (oncall, no_fit) = score([ring, wrong, none])
    assert (oncall.top1, oncall.top3) == (0.5, None)  # one section shown: no top-3
    assert no_fit.abstention == 1.0
