"""What an on-call engineer types for a runbook's subject finds it, on a real Neo4j: a run of
the runbook's name words written as one ("daemonset"), its initials ("pv", "vmis"), the
plural of a short name word ("vms"), a verb in -ic ("panicked"), words of quantity ("lots
of REST errors") and negations typed without their apostrophe ("cant").

Measured on kubevirt/monitoring's runbooks with hand-written on-call questions
(benchmarks/questions/kubevirt-monitoring.yaml, docs/benchmarks.md); the runbooks here
(tests/fixtures/runbooks/oncall-words) are an invented "tarn" platform, written for these
tests: sibling pages that share most of their words, so only the right reading chooses.
"""

from __future__ import annotations

from pathlib import Path

import neo4j
import pytest
from conftest import import_runbook_folder, runbook_json

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def oncall_words(driver: neo4j.Driver, cli_env: object, invoke) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    import_runbook_folder(driver, invoke, FIXTURES / "runbooks" / "oncall-words")
    return driver


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # "daemonset" writes the name's Daemon Set as one word (before: no runbook fits,
        # TarnRelayDaemonSetRolloutFailing closest at half the query).
        ("tarn-relay daemonset rollout stuck", "runbook:TarnRelayDaemonSetRolloutFailing"),
        # "pv": the initials of PersistentVolume; the other page says PV in passing (before:
        # no runbook fits).
        ("pv filling up", "runbook:PersistentVolumeFillingUp"),
        # "vms", the plural of the name's VM (three letters: not stemmed), "panicked" of
        # panic (before: no runbook fits).
        ("vms panicked across the cluster", "runbook:ClusterVMPanicDetected"),
        # "lots" says how much, not what: on kubevirt's runbooks the rare word kept the page
        # the other four words name from fitting (no runbook fits); on these few pages it
        # fits either way (it passed before too): the filler's own test is the last one.
        ("lots of REST errors from tarn-indexer", "runbook:TarnIndexerRESTErrorsBurst"),
        # "cant", "can't" typed without its apostrophe, is a function word as "can" and
        # "not" are: on cortex-jsonnet's playbooks "ruler cant push samples to ingesters"
        # and "alertmanager cant load configs ..." abstained with the right page first; on
        # these few pages it fits either way: the stop words' own test is below.
        ("tarn-ruler cant push samples", "runbook:TarnRulerFailedPushes"),
        # An acronym's plural is one name word, `RunVMs` run, vms (before: v, ms, which the
        # joined-run reading covered here): the split's own test is the last one.
        ("no nodes to run vms", "runbook:TarnNoNodesToRunVMs"),
    ],
)
def test_what_an_oncall_types_finds_the_runbook(
    oncall_words, invoke, text: str, expected: str
) -> None:  # type: ignore[no-untyped-def]
    doc = runbook_json(invoke, text)
    assert doc["runbook"] is not None, doc["note"]
    assert doc["runbook"]["id"] == expected


def test_words_of_quantity_are_not_searched_for() -> None:
    from investigator.runbook_search import search_terms

    assert search_terms("lots of REST errors from tarn-indexer") == [
        "rest",
        "errors",
        "tarn",
        "indexer",
    ]
    assert search_terms("vm keeps restarting") == ["vm", "restarting"]


def test_negations_typed_without_apostrophe_are_not_searched_for() -> None:
    from investigator.runbook_search import search_terms

    assert search_terms("tarn-ruler cant push samples") == ["tarn", "ruler", "push", "samples"]
    assert search_terms("alertmanager doesnt load configs") == ["alertmanager", "load", "configs"]


def test_an_acronyms_plural_is_one_name_word() -> None:
    from graph_schema.alert_names import identifier_words

    assert identifier_words("KubeVirtNoAvailableNodesToRunVMs")[-2:] == ["run", "vms"]
    assert identifier_words("CephOSDsDown") == ["ceph", "osds", "down"]
    # An acronym before a capitalised word keeps its own shape (HTTP, Server).
    assert identifier_words("HTTPServerDown") == ["http", "server", "down"]
