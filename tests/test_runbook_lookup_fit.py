"""A free-text lookup answers with a runbook that fits even when a better scored one does
not, on a long page of many procedures shows the section whose heading has the words asked
about, and `investigate` claims the runbook the card shows for the same words, on a real
Neo4j.

The runbooks (tests/fixtures/runbooks/lookup-fit, written for these tests) are a short page
about one queue's replication lag, titled with most of the words an engineer types about
another system's, and a long troubleshooting page of that other system with one section per
situation (scaling, replication lag, failing backups). tests/fixtures/runbooks/lookup-pointer
holds a page that only points at another for incident response, and that other page:
`investigate` and the card answer with the same one.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import import_runbook_folder, runbook_json

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fit_corpus(driver: neo4j.Driver, cli_env: object, invoke) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    import_runbook_folder(driver, invoke, FIXTURES / "runbooks" / "lookup-fit")
    return driver


def test_a_runbook_that_fits_is_not_passed_over(fit_corpus, invoke) -> None:  # type: ignore[no-untyped-def]
    # The queue page ranks first on "replication lag" but has no "warehouse": it does not
    # fit. The warehouse page has every word: it is the answer, not "no runbook fits".
    doc = runbook_json(invoke, "warehouse replication lag")
    ranked = [m["id"] for m in doc["text_matches"]]
    assert ranked[0] == "runbook:queue-replication", ranked
    assert doc["runbook"] is not None, doc["note"]
    assert doc["runbook"]["id"] == "runbook:warehouse-troubleshooting"


def test_the_section_headed_by_the_words_asked_leads(fit_corpus, invoke) -> None:  # type: ignore[no-untyped-def]
    # Not the page's opening (About, then "Scaling the cluster up"'s first step).
    doc = runbook_json(invoke, "warehouse replication lag")
    assert doc["runbook"] is not None, doc["note"]
    steps = doc["runbook"]["steps"]
    assert steps[0].startswith("Replicas replay the primary's write-ahead log"), steps
    assert "1. Compare the replay delay of each replica on the replicas dashboard." in steps
    assert not any("Increase the node count" in line for line in steps)


def test_the_section_of_a_page_that_ranks_first(fit_corpus, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = runbook_json(invoke, "warehouse backups failing")
    assert doc["runbook"]["id"] == "runbook:warehouse-troubleshooting"
    assert doc["runbook"]["steps"][0] == "1. Read the last backup job's log in the scheduler."


def test_words_in_no_heading_keep_the_page_opening(fit_corpus, invoke) -> None:  # type: ignore[no-untyped-def]
    # One asked word in a heading ("connection") is no section asked about.
    doc = runbook_json(invoke, "warehouse refuses connections")
    assert doc["runbook"]["id"] == "runbook:warehouse-troubleshooting"
    assert not any("Clients that open more" in line for line in doc["runbook"]["steps"])


def test_words_asking_about_the_runbook_do_not_sink_a_lookup(fit_corpus, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = runbook_json(invoke, "warehouse backups failing, what did the runbook say then?")
    assert doc["runbook"] is not None, doc["note"]
    assert doc["runbook"]["id"] == "runbook:warehouse-troubleshooting"


@pytest.fixture
def pointer_corpus(driver: neo4j.Driver, cli_env: object, invoke) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    import_runbook_folder(driver, invoke, FIXTURES / "runbooks" / "lookup-pointer")
    return driver


def test_investigate_and_the_card_follow_the_same_pointer(pointer_corpus, invoke) -> None:  # type: ignore[no-untyped-def]
    # The page that ranks first only points at the incident runbook: the card answers with
    # that one, and an investigation of the same words claims the same runbook.
    card = runbook_json(invoke, "ledger saturation")
    assert card["text_matches"][0]["id"] == "runbook:ledger-connections", card["text_matches"]
    assert card["runbook"]["id"] == "runbook:ledger-saturation"
    result = invoke(
        "investigate", "ledger saturation, what do I do?", "--subject", "user:oncall", "--json"
    )
    assert result.code == 0, result
    doc = json.loads(result.out)
    (claim,) = doc["claims"]
    # Named with its version as the card names it (the file's commit, in a git checkout).
    version = card["runbook"]["source_version"].split(":")
    assert claim["statement"].startswith(
        f"Runbook Ledger is saturated (runbook:ledger-saturation, {version[0]}:{version[1][:12]})"
    ), claim["statement"]
