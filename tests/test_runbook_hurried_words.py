"""A hurried on-call engineer's words around the ones that matter ("i think virt api is down
again, please help") do not sink a free-text lookup, and a question that says nothing but
"down" once they are dropped is not answered as if the first page were *the* runbook, on a
real Neo4j.

The runbooks (tests/fixtures/runbooks/hurried, in the style of KubeVirt's and GOV.UK's,
written for these tests) are three sibling "component is down" pages and one unrelated page
that is also about something "down".
"""

from __future__ import annotations

from pathlib import Path

import neo4j
import pytest
from conftest import import_runbook_folder, runbook_json

from investigator.runbook_search import search_terms

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def hurried(driver: neo4j.Driver, cli_env: object, invoke) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    import_runbook_folder(driver, invoke, FIXTURES / "runbooks" / "hurried")
    return driver


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("virt api down", "runbook:VirtAPIDown"),
        ("i think virt api is down", "runbook:VirtAPIDown"),
        ("virt handler seems down again, please help", "runbook:VirtHandlerDown"),
        ("hey, i guess virt controller is still down now?", "runbook:VirtControllerDown"),
        ("looks like virt-api is probably down, can someone help", "runbook:VirtAPIDown"),
    ],
)
def test_filler_words_do_not_sink_a_lookup(hurried, invoke, text: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    doc = runbook_json(invoke, text)
    assert doc["runbook"] is not None, doc["note"]
    assert doc["runbook"]["id"] == expected


@pytest.mark.parametrize("text", ["i think it is down", "down", "seems down again?"])
def test_a_vague_question_says_it_chose_nothing(hurried, invoke, text: str) -> None:  # type: ignore[no-untyped-def]
    # Once "i think it is" is dropped, "down" is left: every page here has it. The card says
    # so (as for "etcd" over many etcd runbooks), not that the first page is *the* runbook.
    doc = runbook_json(invoke, text)
    assert "4 runbooks fit" in (doc["note"] or ""), doc["note"]
    assert "add words, or use --alert NAME" in doc["note"]


def test_nothing_but_filler_chooses_no_runbook(hurried, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = runbook_json(invoke, "please help, anyone?")
    assert doc["runbook"] is None
    assert "no informative words" in doc["note"]


def test_filler_is_not_searched_for() -> None:
    assert search_terms("i think virt api is down again, please help") == ["virt", "api", "down"]
    assert search_terms("hey, seems like etcd has no leader?") == ["etcd", "leader"]
