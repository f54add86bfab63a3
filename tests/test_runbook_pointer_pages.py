"""A page is only a pointer when it has nothing of its own to do beyond the link, two pages
that point at each other are neither followed, and free text that follows a pointer says
so, on a real Neo4j.

The layout is a gateway's runbooks for two database engines (our own text): the queue
engine's page opens with a paragraph that links its ledger twin ("the full design lives in
[ledger/pods.md](../ledger/pods.md)") and then has sections of its own; the two pages on
secrets are stubs that link each other. Before, the opening paragraph, read as the card's
steps, made the queue page "only a pointer": an alert whose runbook_url is the queue page
got the ledger page, free text for the queue page's own title got it with no note, and
each secrets stub was answered with the other.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import import_runbook_folder

BASE = "https://git.example.com/gateway/blob/main/docs"
QUEUE = "runbook:queue/pods"
LEDGER = "runbook:ledger/pods"
SUBJECT = ("--subject", "user:oncall")


def _write_corpus(root: Path) -> Path:
    """The two engines' pages, a moved stub, and the rules that link the queue's pages."""
    queue, ledger = root / "rb" / "queue", root / "rb" / "ledger"
    for folder in (queue, ledger):
        folder.mkdir(parents=True)
    (queue / "pods.md").write_text(
        "# Pods Gateway (pods/*) for the queue engine\n\n"
        "`pods/list` and `pods/delete` show and recycle the pods backing this namespace's\n"
        "queue instance. This is not the same script the ledger gateway serves, but the\n"
        "result codes are the same. The full design lives in\n"
        "[docs/ledger/pods.md](../ledger/pods.md); this page covers what differs.\n\n"
        "## What differs on the queue engine\n\n"
        "The queue instance is resolved from its custom resource first, then from a\n"
        "StatefulSet of the same name; an ambiguous match fails closed.\n\n"
        "## Usage scenario: recycle a stuck queue replica\n\n"
        "1. List the pods of queue-1 with `pods/list`.\n"
        "2. Delete the replica that is not ready with `pods/delete`.\n"
        "3. Wait for the queue to report the replica back in sync.\n",
        encoding="utf-8",
    )
    (ledger / "pods.md").write_text(
        "# Pods Gateway (pods/*) for the ledger engine\n\n"
        "`pods/list` and `pods/delete` show and recycle the ledger StatefulSet's pods.\n\n"
        "## Procedure\n\n"
        "1. List the ledger StatefulSet's pods with `pods/list`.\n"
        "2. Delete the pod that is stuck terminating with `pods/delete`.\n",
        encoding="utf-8",
    )
    (queue / "secrets.md").write_text(
        "# Secrets gateway for the queue engine\n\n"
        "Served verbatim by the ledger gateway: see\n"
        "[docs/ledger/secrets.md](../ledger/secrets.md).\n",
        encoding="utf-8",
    )
    (ledger / "secrets.md").write_text(
        "# Secrets gateway for the ledger engine\n\n"
        "Served verbatim by the queue gateway: see\n"
        "[docs/queue/secrets.md](../queue/secrets.md).\n",
        encoding="utf-8",
    )
    (queue / "drain.md").write_text(
        "# Drain the queue consumers\n\n"
        "This page has been moved to [queue/consumers.md](./consumers.md).\n",
        encoding="utf-8",
    )
    (queue / "consumers.md").write_text(
        "# Queue consumers\n\n## Mitigation\n\n"
        "1. Scale the consumer deployment to zero.\n"
        "2. Wait for in-flight messages to be acknowledged, then scale it back.\n",
        encoding="utf-8",
    )
    rules = root / "rules.yaml"
    rules.write_text(
        "groups:\n- name: gateway\n  rules:\n"
        '  - alert: QueuePodNotReady\n    expr: kube_pod_status_ready{pod=~"queue-.*"} == 0\n'
        "    annotations:\n      summary: A queue pod is not ready.\n"
        f"      runbook_url: {BASE}/queue/pods.md\n"
        '  - alert: QueueSecretMissing\n    expr: absent(kube_secret_info{secret="queue"})\n'
        "    annotations:\n      summary: The queue secret is missing.\n"
        f"      runbook_url: {BASE}/queue/secrets.md\n",
        encoding="utf-8",
    )
    return rules


@pytest.fixture()
def gateway(driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    rules = _write_corpus(tmp_path)
    import_runbook_folder(driver, invoke, tmp_path / "rb")
    result = invoke(
        "ingest", str(rules), "--format", "prometheus-rules", "--tenant", "acme",
        "--acl", "internal",
    )  # fmt: skip
    assert result.code == 0, result
    return driver


def _card(invoke, *args: str) -> dict:  # type: ignore[no-untyped-def, type-arg]
    result = invoke("runbook", *args, *SUBJECT, "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def test_a_page_whose_opening_links_its_twin_is_its_own_answer(gateway, invoke) -> None:  # type: ignore[no-untyped-def]
    # Before: the ledger page, "runbook:queue/pods only points at runbook:ledger/pods".
    card = invoke("runbook", "--alert", "QueuePodNotReady", *SUBJECT)
    assert card.code == 0, card
    lines = card.out.splitlines()
    assert lines[0].startswith(f"Runbook   Pods Gateway (pods/*) for the queue engine  [{QUEUE}, ")
    assert "only points at" not in card.out
    # Its own title typed as words: the queue page, not the ledger page with no note.
    doc = _card(invoke, "Pods Gateway (pods/*) for the queue engine")
    assert doc["runbook"]["id"] == QUEUE
    assert "only points at" not in (doc["note"] or "")
    # An investigation of the queue engine's pods claims the queue page.
    result = invoke(
        "investigate", "Which runbook applies to recycling a stuck queue replica pod?",
        *SUBJECT, "--json",
    )  # fmt: skip
    assert result.code == 0, result
    statements = [c["statement"] for c in json.loads(result.out)["claims"]]
    assert any(f"({QUEUE}, " in s for s in statements), statements
    assert not any(f"({LEDGER}, " in s for s in statements), statements


def test_two_pages_that_point_at_each_other_are_neither_followed(gateway, invoke) -> None:  # type: ignore[no-untyped-def]
    # Before: each stub was answered with the other, "... only points at ..." either way.
    alert = _card(invoke, "--alert", "QueueSecretMissing")
    assert alert["runbook"]["id"] == "runbook:queue/secrets"
    assert "only points at" not in (alert["note"] or "")
    words = _card(invoke, "Secrets gateway for the ledger engine")
    assert words["runbook"]["id"] == "runbook:ledger/secrets"
    assert "only points at" not in (words["note"] or "")


def test_free_text_that_follows_a_pointer_says_so(gateway, invoke) -> None:  # type: ignore[no-untyped-def]
    # The stub is the words' best match; the card shows the page it points at, and now
    # says why (before: no note at all).
    doc = _card(invoke, "drain the queue consumers")
    assert doc["text_matches"][0]["id"] == "runbook:drain", doc["text_matches"]
    assert doc["runbook"]["id"] == "runbook:consumers"
    assert doc["note"] == (
        "runbook:drain, the best match of the words, only points at runbook:consumers, "
        "so the card shows that runbook"
    )
    card = invoke("runbook", "drain", "the", "queue", "consumers", *SUBJECT)
    assert "Note      runbook:drain, the best match of the words, only points at" in card.out
