"""A guessed alert name in an `investigate` question: said once (the Name line), set aside,
and the runbook search answers the other words, as the runbook card does. On a real Neo4j,
through the CLI, with the words an on-call engineer types.

Before: "WidgetReplicationLag? widget replication is lagging, how do I fix it?" got the card's
runbook:widget-replication from `investigator runbook` and `partial`, no claim, every runbook
`low_relevance` from `investigate`: the guessed name, a word no runbook uses, counted against
every page's share of the question.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import import_runbooks_and_rules

SUBJECT = "acme/user:oncall"
TARGET = "runbook:widget-replication"


def _page(title: str, body: str) -> str:
    return f"# {title}\n\n## Overview\n\n{body}\n"


# Many pages share the question's words (widget, replication, lagging), so each word tells
# little apart and a word no page uses outweighs them unless it is set aside; one page has
# them all. Written for this test, in the shape of a service's runbook folder.
PAGES = {
    "widget-replication.md": "# Widget replication is lagging or has stopped\n\n"
    "## Symptoms\n\nThe widget replicas fall behind the primary: replication is lagging.\n\n"
    "## Fix\n\n- Restart the widget replication worker and watch the queue drain.\n",
    "widget.md": _page("Widget overview", "How the widget service stores data, with replication."),
    "widget-database.md": _page("Widget database", "The widget database and its replication."),
    "widget-readonly.md": _page("Widget read-only", "Widget storages go read-only; replication."),
    "widget-startup.md": _page("Widget startup", "The widget process does not start."),
    "widget-errors.md": _page("Widget errors", "Widget requests fail; clients report lagging."),
    "widget-storage.md": _page("Widget storage", "Widget disks fill; writes are lagging."),
    "widget-queue.md": _page("Widget queue", "The widget job queue is lagging behind."),
    "widget-bypass.md": _page("Widget bypass", "Send traffic around the widget proxy."),
    "widget-cache.md": _page("Widget cache", "The widget cache misses too often."),
    "widget-certs.md": _page("Widget certificates", "The widget TLS certificate expires."),
    "widget-config.md": _page("Widget config", "Roll a widget configuration change."),
    "postgres.md": _page("Postgres", "A standby whose replication is lagging behind."),
    "redis.md": _page("Redis", "Replicas whose replication is lagging reconnect."),
    "patroni.md": _page("Patroni", "Patroni manages failover and replication."),
    "consul.md": _page("Consul", "Consul agents report replication health."),
}
RULES = """groups:
  - name: widget
    rules:
      - alert: WidgetDown
        expr: up{job="widget"} == 0
        labels: {severity: critical}
        annotations: {summary: The widget service is down.}
"""
# Another tenant's alert, named as acme's on-call engineer guesses it, with its own runbook.
OTHER_PAGE = "# Globex lag\n\n## Fix\n\n- Globex only: drain the replication backlog.\n"
OTHER_RULES = """groups:
  - name: globex
    rules:
      - alert: WidgetReplicationLag
        expr: widget_replication_lag_seconds > 60
        labels: {severity: critical}
        annotations: {summary: Widget replication lag is high., runbook_url: globex-lag.md}
"""


@pytest.fixture()
def widgets(tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke) -> Path:  # type: ignore[no-untyped-def]
    """acme's on-call principal, its widget runbooks and rule; globex's rule and runbook."""
    for tenant in ("acme", "globex"):
        (tmp_path / tenant).mkdir()
    import_runbooks_and_rules(invoke, tmp_path / "acme", "acme", runbooks=PAGES, rules=RULES)
    other = tmp_path / "globex"
    import_runbooks_and_rules(
        invoke, other, "globex", runbooks={"globex-lag.md": OTHER_PAGE}, rules=OTHER_RULES
    )
    return tmp_path


def _investigate(invoke, question: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("investigate", question, "--subject", SUBJECT, "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def _cited(answer: dict) -> list[str]:  # type: ignore[type-arg]
    cited = {eid for claim in answer["claims"] for eid in claim["evidence_ids"]}
    return sorted({ev["element_id"] for ev in answer["evidence"] if ev["evidence_id"] in cited})


def test_a_guessed_alert_name_beside_words_that_fit_a_page_finds_the_card_s_page(  # type: ignore[no-untyped-def]
    widgets: Path, invoke
) -> None:
    card = invoke(
        "runbook", "WidgetReplicationStall widget replication is lagging", "--subject", SUBJECT
    )
    assert card.code == 0, card
    assert TARGET in card.out
    assert "no runbook uses 'widgetreplicationstall'" in card.out
    question = "WidgetReplicationStall? widget replication is lagging, how do I fix it?"
    answer = _investigate(invoke, question)
    # The page the card shows, cited, and the guessed name said once, as matching nothing.
    assert answer["status"] == "complete", answer["missing_evidence"]
    assert _cited(answer) == [TARGET]
    [name] = answer["unresolved_names"]
    assert name["text"] == "WidgetReplicationStall"
    assert "matched nothing visible to acme/user:oncall" in name["note"]
    assert TARGET not in {r["element_id"] for r in answer["rejected"]}
    # Without the guessed name, the same page.
    plain = _investigate(invoke, "widget replication is lagging, how do I fix it?")
    assert _cited(plain) == [TARGET]
    shown = invoke("investigate", question, "--subject", SUBJECT)
    assert shown.code == 0, shown
    assert shown.out.count("'WidgetReplicationStall' in the question matched nothing") == 1
    assert "Status     complete" in shown.out


def test_a_guessed_alert_name_alone_is_a_clear_gap(widgets: Path, invoke) -> None:  # type: ignore[no-untyped-def]
    answer = _investigate(invoke, "WidgetReplicationStall is firing, how do I fix it?")
    assert answer["status"] == "partial"
    assert answer["claims"] == []
    [name] = answer["unresolved_names"]
    assert name["text"] == "WidgetReplicationStall"
    [gap] = [m for m in answer["missing_evidence"] if m["evidence_type"] == "runbook"]
    assert gap["required"]


def test_another_tenant_s_alert_reads_as_a_name_that_exists_nowhere(  # type: ignore[no-untyped-def]
    widgets: Path, invoke
) -> None:
    def seen(name: str) -> dict:  # type: ignore[type-arg]
        answer = _investigate(invoke, f"{name}? widget replication is lagging, how do I fix it?")
        text = json.dumps(
            {
                "status": answer["status"],
                "cited": _cited(answer),
                "names": answer["unresolved_names"],
                "rejected": sorted(r["element_id"] for r in answer["rejected"]),
                "evidence": sorted(ev["element_id"] for ev in answer["evidence"]),
            }
        )
        assert "globex" not in text.lower()
        return json.loads(text.replace(name, "NAME"))  # type: ignore[no-any-return]

    # globex's alert and page never show; the answer is acme's page, as for a made-up name.
    other_tenant = seen("WidgetReplicationLag")
    assert other_tenant["cited"] == [TARGET]
    assert other_tenant == seen("WidgetReplicationStall")
    assert other_tenant["names"][0]["suggestions"] == []
