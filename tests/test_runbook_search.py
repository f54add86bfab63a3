"""Free-text runbook search in the on-call's own words (issue 15): the demo dataset's golden
lookups answer with their runbook (a fit rule too strict turned them into "no runbook fits"),
and the fit rules and stems behave as docs/runbooks.md says.

The lookups run against the real Neo4j with the payments-incident dataset; the rules and
stems need no server.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import neo4j
import pytest
from conftest import wipe

from graph_schema.bundle import load_bundle
from graph_schema.schema_ddl import apply_schema
from graph_schema.writer import ingest_bundle
from investigator.evidence import Evidence
from investigator.runbook_lookup import LookupTarget, RunbookLookup, RunbookQuery
from investigator.runbook_search import _stem, rank_runbooks, search_terms, spelled_out

DATASET = Path(__file__).resolve().parents[1] / "datasets" / "payments-incident"
INCIDENT = datetime(2026, 7, 23, 10, 30, tzinfo=UTC)


@pytest.fixture(scope="module")
def demo(driver: neo4j.Driver) -> Iterator[RunbookLookup]:
    wipe(driver)
    apply_schema(driver)
    ingest_bundle(driver, load_bundle(DATASET))
    yield RunbookLookup(driver, record=False)


def _ask(lookup: RunbookLookup, text: str, subject: str) -> str | None:
    answer = lookup.lookup(
        RunbookQuery(target=LookupTarget.TEXT, value=text, subject_id=subject, as_of=INCIDENT)
    )
    return answer.runbook.id if answer.runbook is not None else None


@pytest.mark.parametrize(
    ("text", "subject", "expected"),
    [
        # The golden set's free-text lookups (eval/golden.yaml, type semantic).
        (
            "card payments failing, how do we recover payments",
            "acme/user:bob",
            "runbook:payment-recovery@v3",
        ),
        (
            "checkout pod keeps restarting in a crash loop",
            "acme/user:oncall",
            "runbook:pod-crashloop@v1",
        ),
        ("pods crash looping", "acme/user:bob", "runbook:pod-crashloop@v1"),
    ],
)
def test_words_of_the_on_call_find_the_runbook_in_force(
    demo: RunbookLookup, text: str, subject: str, expected: str
) -> None:
    assert _ask(demo, text, subject) == expected


def test_text_about_something_else_gets_no_runbook(demo: RunbookLookup) -> None:
    # Shares "node" and "restart" with the crash-loop runbook, names no runbook of acme's.
    assert _ask(demo, "the whole node pool needs a kernel upgrade", "acme/user:oncall") is None


def test_word_forms_meet() -> None:
    assert len({_stem(w) for w in ("recover", "recovery", "recovering", "recovered")}) == 1
    assert {_stem(w) for w in ("restart", "restarts", "restarting", "restarted")} == {"restart"}
    assert {_stem(w) for w in ("fail", "failing", "failed", "failure", "failures")} == {"fail"}
    assert len({_stem(w) for w in ("mirror", "mirrored", "mirroring", "mirrors")}) == 1
    assert _stem("ready") != _stem("read")


def _runbook(ident: str, title: str, content: str) -> Evidence:
    return Evidence.model_validate(
        {
            "evidence_id": f"ev-{ident}",
            "element_id": ident,
            "kind": "node",
            "type": "Runbook",
            "title": title,
            "content": content,
            "scores": {"fulltext_search": 1.0},
        }
    )


def test_a_runbook_fits_when_quoted_or_named_not_when_it_shares_words() -> None:
    hits = [
        _runbook(
            "runbook:CephClusterNearFull",
            "CephClusterNearFull",
            "Storage cluster utilization has crossed 75% and will become read-only at 85%.",
        ),
        _runbook(
            "runbook:NodeNotReady",
            "NodeNotReady",
            "A node of the storage cluster has not been ready for a while: check the class.",
        ),
    ]
    quoted = "Storage cluster utilization has crossed 75%"
    assert (best := rank_runbooks(search_terms(quoted), hits, text=quoted).best) is not None
    assert (best.id, best.fits_by) == ("runbook:CephClusterNearFull", "text")
    named = "ceph cluster near full, what now"
    assert (best := rank_runbooks(search_terms(named), hits, text=named).best) is not None
    assert (best.id, best.fits_by) == ("runbook:CephClusterNearFull", "name")
    # Most of its words are in a runbook, but it neither quotes nor names one: abstain.
    loose = "the storage class of a cluster node"
    ranking = rank_runbooks(search_terms(loose), hits, text=loose)
    assert ranking.ranked and ranking.best is None
    assert ranking.note().startswith("no runbook fits")


def test_an_alert_name_spelled_out_in_words_is_recognised() -> None:
    names = ["TempoPollsFailing", "TempoCompactionsFailing", "KubePodCrash", "KubePodCrashLooping"]
    assert spelled_out("Which runbook applies when tempo polls are failing?", names) == [0]
    assert spelled_out("tempo compaction failures, what do I do", names) == [1]
    # The widest of names whose words hold one another's.
    assert spelled_out("the kube pod is crash looping", names) == [3]
    # Every word of the name, not most of them; never a word that is no alert's name.
    assert spelled_out("tempo polls are slow", names) == []
    assert spelled_out("payment api is failing", ["payment-api", "Watchdog"]) == []
    # Two alerts spelled out: both, for the caller to decide.
    assert spelled_out("tempo polls and compactions are failing", names) == [0, 1]
