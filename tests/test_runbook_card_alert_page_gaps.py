"""Cards (and `investigate`) on a page of one section per alert (Tempo's `runbook.md`
layout) where the section asked about is missing, empty, or split into a diagnosis and a
fix. On a real Neo4j, through the CLI, with a small page of our own.

Before: an alert whose section was renamed got, as "opening text", the intro plus the whole
first non-alert section (another procedure's remedies as its steps), and `investigate` of it
exited 2 ("required evidence (runbook) does not fit") on a long page; a card started at
"How to fix" with no word of the "How to investigate" above it; an empty section gave a card
with no steps and no note, even when its heading sat right above a section whose text is
for both.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import import_runbooks_and_rules, investigate_json

# A long section of its own: the whole page does not fit the default evidence budget.
_LONG = "\n".join(f"{n}. Check shard {n} of the archive for stale blocks." for n in range(1, 700))

PAGE = f"""# Store runbook

This page helps the on-call engineer with the store's alerts.

## Lookup Failures

If lookups fail with `queue is full`, the queriers cannot check every block.

1. Add queriers to the read path.
2. Raise the queue depth of each querier.

## StoreArchiveBehind

{_LONG}

## StoreCompactionsFailing
## StoreFlushesFailing

Check the writer logs for flushes and the compactor logs for compactions.

## StoreLagHigh

### How to investigate

1. Find the pod that owns the lagging partition, and whether it restarted.

### How to fix

- Stuck pod: restart it.
- Busy node: move a few pods to quieter nodes.

## StoreDiskFull
"""


def _rule(alert: str, anchor: str) -> str:
    return (
        f"  - alert: {alert}\n    expr: store_{alert.lower()} > 0\n    annotations:\n"
        f"      summary: The store fires {alert}.\n"
        f"      runbook_url: https://git.example.org/store/runbook.md#{anchor}\n"
    )


RULES = "groups:\n- name: store\n  rules:\n" + "".join(
    _rule(alert, anchor)
    for alert, anchor in (
        ("StoreRenamedAlert", "StoreRenamedAlert"),  # its heading was renamed away
        ("StoreArchiveBehind", "StoreArchiveBehind"),
        ("StoreCompactionsFailing", "StoreCompactionsFailing"),
        ("StoreFlushesFailing", "StoreFlushesFailing"),
        ("StoreLagHigh", "StoreLagHigh"),
        ("StoreDiskFull", "StoreDiskFull"),
    )
)


@pytest.fixture
def store(tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke) -> None:  # type: ignore[no-untyped-def]
    import_runbooks_and_rules(
        invoke, tmp_path, "stor", runbooks={"runbook.md": PAGE}, rules=RULES, folder="store"
    )


def _card(invoke, alert: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("runbook", "--alert", alert, "--subject", "stor/user:oncall", "--json")
    assert result.code == 0, result
    return json.loads(result.out)["runbook"]  # type: ignore[no-any-return]


def test_opening_text_is_the_intro_not_the_first_other_section(store, invoke) -> None:  # type: ignore[no-untyped-def]
    card = _card(invoke, "StoreRenamedAlert")
    assert card["steps"] == ["This page helps the on-call engineer with the store's alerts."]
    assert "none is about StoreRenamedAlert" in card["steps_note"], card["steps_note"]
    assert "the steps shown are its opening text" in card["steps_note"], card["steps_note"]


def test_investigate_of_an_alert_without_section_answers_with_the_opening_text(  # type: ignore[no-untyped-def]
    store, invoke
) -> None:
    question = "Which runbook applies to StoreRenamedAlert?"
    run = investigate_json(invoke, question, "--subject", "stor/user:oncall")
    assert run["status"] == "complete", run["missing"]
    [claim] = [c for c in run["claims"] if "runbook:" in c["statement"]]
    assert (
        "[runbook.md: its opening text; none of its sections is about StoreRenamedAlert]"
        in claim["statement"]
    ), claim["statement"]
    [evidence] = [e for e in run["evidence"] if e["evidence_id"] in claim["evidence_ids"]]
    assert "This page helps the on-call engineer" in evidence["content"]
    assert "Add queriers" not in evidence["content"]  # another procedure's steps
    assert "Check shard" not in evidence["content"]  # another alert's section
    replayed = invoke("replay", run["run_id"], "--subject", "stor/user:oncall")
    assert replayed.code == 0, replayed
    assert "pack_hash_match: true" in replayed.out, replayed.out


def test_a_fix_shown_without_its_diagnosis_says_where_the_diagnosis_is(store, invoke) -> None:  # type: ignore[no-untyped-def]
    card = _card(invoke, "StoreLagHigh")
    assert card["steps"][0] == "- Stuck pod: restart it."
    assert card["steps_note"] == (
        "the steps shown are the section's How to fix; its How to investigate, which comes "
        "first and says which of them applies, is not shown: read it first at "
        "runbook.md#how-to-investigate"
    )


def test_an_empty_section_says_so_and_shows_the_stacked_heading_below(store, invoke) -> None:  # type: ignore[no-untyped-def]
    stacked = _card(invoke, "StoreCompactionsFailing")
    assert stacked["steps"] == [
        "Check the writer logs for flushes and the compactor logs for compactions."
    ]
    assert stacked["steps_note"] == (
        "the section StoreCompactionsFailing is empty: its heading sits right above "
        "StoreFlushesFailing's, with nothing between, so the text below both headings is for "
        "both: the steps shown are those of StoreFlushesFailing"
    )
    last = _card(invoke, "StoreDiskFull")
    assert last["steps"] == []
    assert last["steps_note"] == (
        "the section StoreDiskFull is empty: the runbook gives no steps for it"
    )
