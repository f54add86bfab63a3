"""Free text as a paged engineer types it, on a real Neo4j: a word no runbook uses does not
sink a lookup its other words answer; "down" with an alert rule whose summary says "down"
still says it chose nothing; and an alert name typed with a slip, or spelled in words, gets
what `--alert` gets.

The runbooks are tests/fixtures/runbooks/hurried (three sibling "component is down" pages
and one unrelated page about something "down"); the alert rules are written here.
"""

from __future__ import annotations

from pathlib import Path

import neo4j
import pytest
from conftest import import_runbook_folder, ingest_as, runbook_json

FIXTURES = Path(__file__).parent / "fixtures"
BASE = "https://runbooks.example.org/kubevirt"
# Two rules linked to the fixture's pages by runbook_url; the second one's summary says
# "down" as every page does.
RULES = f"""groups:
- name: kubevirt
  rules:
  - alert: VirtHandlerDown
    expr: kubevirt_virt_handler_up == 0
    annotations:
      summary: No running virt-handler pod has been detected for 10 minutes.
      runbook_url: {BASE}/VirtHandlerDown
  - alert: SearchDown
    expr: search_up == 0
    annotations:
      summary: All search pods are down.
      runbook_url: {BASE}/search-is-down
"""


@pytest.fixture
def hurried(driver: neo4j.Driver, cli_env: object, invoke) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    import_runbook_folder(driver, invoke, FIXTURES / "runbooks" / "hurried")
    return driver


@pytest.fixture
def hurried_with_rules(hurried: neo4j.Driver, invoke, tmp_path: Path) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    rules = tmp_path / "kubevirt-rules.yaml"
    rules.write_text(RULES, encoding="utf-8")
    ingest_as(invoke, rules, "prometheus-rules", "acme", acl="internal")
    return hurried


@pytest.mark.parametrize(
    ("text", "unknown"),
    [
        ("many virt-handler pods are down", "many"),
        # "lots" was a case here: it is now a word of quantity, never searched for
        # (tests/test_runbook_oncall_words.py), so the card has no note about it.
        ("virt-handler pods down on rack", "rack"),
        ("virt-handler pods down everywhere", "everywhere"),
    ],
)
def test_a_word_no_runbook_uses_does_not_sink_the_lookup(hurried, invoke, text, unknown) -> None:  # type: ignore[no-untyped-def]
    # Before: "no runbook fits: the closest, runbook:VirtHandlerDown, covers 1x% of the
    # query": the one word no page has weighed more than all the others together.
    doc = runbook_json(invoke, text)
    assert doc["runbook"] is not None, doc["note"]
    assert doc["runbook"]["id"] == "runbook:VirtHandlerDown"
    assert doc["note"] == f"no runbook uses {unknown!r}: the card fits the other words"


def test_the_same_words_without_it_are_answered_alike(hurried, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = runbook_json(invoke, "virt-handler pods are down")
    assert doc["runbook"]["id"] == "runbook:VirtHandlerDown"
    assert doc["note"] is None


@pytest.mark.parametrize("text", ["kubemacpool down", "kubemacpool duplicate mac down"])
def test_a_query_as_much_about_what_no_runbook_covers_abstains(hurried, invoke, text) -> None:  # type: ignore[no-untyped-def]
    # "down" is on every page, "kubemacpool" on none: no page is about this.
    doc = runbook_json(invoke, text)
    assert doc["runbook"] is None
    # The pages that mention "down" tie (fix-card-first-steps' note), none is "the closest".
    assert doc["note"].startswith("no runbook fits: 4 runbooks tie, "), doc["note"]
    assert "(no runbook uses 'kubemacpool'" in doc["note"]


def test_only_words_no_runbook_uses_abstain(hurried, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = runbook_json(invoke, "kubemacpool duplicate mac")
    assert doc["runbook"] is None
    assert doc["note"] == "no runbook mentions any of: kubemacpool, duplicate, mac"


def test_down_with_a_rule_whose_summary_says_down_still_chose_nothing(  # type: ignore[no-untyped-def]
    hurried_with_rules, invoke
) -> None:
    # Before: search-is-down, fit by the alert SearchDown ("All search pods are down."), with
    # no note, while without the rules the card says the 4 pages fit alike.
    doc = runbook_json(invoke, "i think it is down")
    assert "4 runbooks fit 'i think it is down' alike" in (doc["note"] or ""), doc["note"]


def test_a_pasted_summary_still_chooses_its_alert(hurried_with_rules, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = runbook_json(invoke, "All search pods are down.")
    assert doc["runbook"]["id"] == "runbook:search-is-down"
    assert doc["note"] is None


@pytest.mark.parametrize("text", ["VirtHandlerDwon firing", "VirtHandlerDwon"])
def test_an_alert_name_typed_with_a_slip_in_text_gets_did_you_mean(  # type: ignore[no-untyped-def]
    hurried_with_rules, invoke, text
) -> None:
    # Before: "no runbook mentions any of: virthandlerdwon", while --alert suggested.
    by_alert = runbook_json(invoke, "--alert", "VirtHandlerDwon")
    doc = runbook_json(invoke, *text.split())
    assert doc["runbook"] is None
    assert "did you mean alert:VirtHandlerDown" in doc["note"], doc["note"]
    assert doc["suggestions"] == by_alert["suggestions"]


def test_an_alert_name_typed_with_a_slip_without_rules(hurried, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = runbook_json(invoke, "VirtHandlerDwon", "firing")
    assert "runbook:VirtHandlerDown" in doc["suggestions"]
    assert doc["suggestions"] == runbook_json(invoke, "--alert", "VirtHandlerDwon")["suggestions"]
    assert doc["note"].startswith("no runbook mentions any of: virthandlerdwon; did you mean ")


@pytest.mark.parametrize("name", ["virt-handler-down", "virt_handler_down"])
def test_alert_spelled_in_words_resolves_as_in_free_text(hurried_with_rules, invoke, name) -> None:  # type: ignore[no-untyped-def]
    # Before: "no alert matching 'virt-handler-down' ...; did you mean alert:VirtHandlerDown"
    # while free text `virt-handler-down` found the runbook.
    doc = runbook_json(invoke, "--alert", name)
    assert doc["resolved"] == ["alert:VirtHandlerDown"]
    assert doc["runbook"]["id"] == "runbook:VirtHandlerDown"
    assert runbook_json(invoke, name)["runbook"]["id"] == "runbook:VirtHandlerDown"
