"""A real rules folder imports, and rules of one name in several files are told apart.

Before: `ingest --format prometheus-rules <folder>` refused the whole folder (exit 2) for the
promtool unit-test files beside the rules (`*_tests.yaml`: `rule_files:` + `tests:`) and for
alert names that are not metric-style ("Database backup failed"), though Prometheus takes any
label value. And `runbook --alert High5xxRate`, of three rules of that name in three files,
answered with the one rule's runbook that was linked, silently; a pasted Smart Answers
notification got the Chat AI page too. On a real Neo4j, through the CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
from conftest import ingest_as, ingest_oncall_principals

BACKUP_RULES = """groups:
  - name: Backups & syncs
    rules:
      - alert: Database backup failed
        expr: backup_failed > 0
        labels: {severity: warning}
        annotations: {summary: A backup failed., runbook_url: 'https://docs.example.com/backups.html'}
      - alert: CronjobFailed => CronjobSuccessThreshold
        expr: cron_ok < 1
        labels: {severity: warning}
      - alert: DiskAlmostFull
        expr: disk_free_ratio < 0.1
        labels: {severity: warning}
"""
# promtool's unit tests of the rules, kept beside them (`promtool test rules *_tests.yaml`).
BACKUP_TESTS = """rule_files:
  - backups.yaml
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: backup_failed
        values: 1x5
    alert_rule_test:
      - eval_time: 2m
        alertname: Database backup failed
"""
BACKUP_PAGE = "# Backups\n\n## When a backup fails\n\nRe-run the backup job by hand.\n"


def _card(invoke, tenant: str, *args: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("runbook", *args, "--subject", f"{tenant}/user:oncall", "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def test_a_rules_folder_with_promtool_tests_and_named_alerts_imports(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    ingest_oncall_principals(invoke, tmp_path, "rrf")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "backups.md").write_text(BACKUP_PAGE, encoding="utf-8")
    ingest_as(invoke, tmp_path / "docs", "markdown-runbooks", "rrf")
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "backups.yaml").write_text(BACKUP_RULES, encoding="utf-8")
    (rules / "backups_tests.yaml").write_text(BACKUP_TESTS, encoding="utf-8")
    (rules / "disk_tests.yaml").write_text(BACKUP_TESTS, encoding="utf-8")

    done = ingest_as(invoke, rules, "prometheus-rules", "rrf")
    assert "2 promtool test files, not rules: backups_tests.yaml, disk_tests.yaml" in done.err
    assert "runbook:backups APPLIES_TO alert:Database-backup-failed" in done.err, done.err

    # The name as the rule spells it finds the alert and its linked runbook.
    card = _card(invoke, "rrf", "--alert", "Database backup failed")
    assert card["resolved"] == ["alert:Database-backup-failed"], card
    assert card["runbook"]["id"] == "runbook:backups", card["note"]
    # So does the id the ingest printed, and a name with punctuation.
    assert _card(invoke, "rrf", "--alert", "alert:Database-backup-failed")["runbook"]
    arrow = _card(invoke, "rrf", "--alert", "CronjobFailed => CronjobSuccessThreshold")
    assert arrow["resolved"] == ["alert:CronjobFailed-CronjobSuccessThreshold"], arrow


def test_alert_names_that_cannot_name_an_alert_are_refused(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    for name, text in {
        "empty": "''",
        "control": '"Backup\\u0007failed"',
        "punctuation": "'=> !!'",
    }.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(
            f"groups:\n  - name: g\n    rules:\n      - alert: {text}\n        expr: up == 0\n"
            "      - alert: TargetDown\n        expr: up == 0\n",
            encoding="utf-8",
        )
        result = invoke("ingest", str(path), "--format", "prometheus-rules", "--tenant", "rrx")
        assert result.code == 2, (name, result)
        assert "`alert`" in result.err and "nothing written" in result.err, (name, result.err)
    count = clean_db.execute_query("MATCH (n:KG {tenant: 'rrx'}) RETURN count(n) AS n")
    assert count.records[0]["n"] == 0


def _high5xx(group: str, severity: str, summary: str, url: str | None) -> str:
    link = f", runbook_url: '{url}'" if url else ""
    return (
        f"groups:\n  - name: {group}\n    rules:\n      - alert: High5xxRate\n"
        f"        expr: rate(http_5xx[5m]) > 0.1\n        labels: {{severity: {severity}}}\n"
        f"        annotations: {{summary: '{summary}'{link}}}\n"
    )


SAME_NAMED = {
    "chat_ai.yaml": _high5xx(
        "ChatAI", "page", "Elevated rate of 5xx return codes for Chat AI",
        "https://docs.example.com/alerts/chat-ai-alerts.html#high5xxrate",
    ),
    "fastly.yaml": _high5xx(
        "Fastly", "warning", "Fastly CDN service is receiving elevated numbers of 5xx responses",
        "https://docs.google.com/document/d/abc/",
    ),
    "smart_answers.yaml": _high5xx(
        "SmartAnswers", "warning", "Elevated rate of 5xx return codes for Smart Answers", None
    ),
}  # fmt: skip
# The first words of a notification of each rule (Alertmanager's default title).
FIRING, RATE = "[FIRING:1] High5xxRate", "Elevated rate of 5xx return codes for"
CHAT_PAGE = (
    "# Chat alerts\n\n## High5xxRate\n\nDisable the chat service if 5xx persist.\n\n"
    "## HighLatency\n\nScale the chat workers.\n"
)


def test_rules_of_one_name_in_several_files_are_told_apart(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    ingest_oncall_principals(invoke, tmp_path, "rrs")
    (tmp_path / "alerts").mkdir()
    (tmp_path / "alerts" / "chat-ai-alerts.md").write_text(CHAT_PAGE, encoding="utf-8")
    ingest_as(invoke, tmp_path / "alerts", "markdown-runbooks", "rrs")
    rules = tmp_path / "rules"
    rules.mkdir()
    for name, text in SAME_NAMED.items():
        (rules / name).write_text(text, encoding="utf-8")
    # Trusted: an untrusted rule is named by id only (tests/test_untrusted_rule_notes.py).
    ingest_as(invoke, rules, "prometheus-rules", "rrs", "--trusted")

    # The bare name: no rule's runbook is passed off as the others'; the card says which is
    # which and how to ask for one.
    bare = _card(invoke, "rrs", "--alert", "High5xxRate")
    assert bare["runbook"] is None, bare["runbook"]
    note = bare["note"]
    assert "3 alert rules are named High5xxRate" in note, note
    assert "High5xxRate@page (chat_ai.yaml, group ChatAI, page:" in note, note
    assert "-> runbook runbook:chat-ai-alerts" in note, note
    assert "High5xxRate@3 (smart_answers.yaml, group SmartAnswers, warning:" in note, note
    assert "no runbook imported (runbook_url https://docs.google.com/document/d/abc/)" in note
    assert sorted(bare["suggestions"]) == ["High5xxRate@2", "High5xxRate@3", "High5xxRate@page"]

    # A pasted Smart Answers notification picks its own rule, which has no runbook: not the
    # Chat AI page (neither by its link nor by its section headed High5xxRate).
    smart = _card(invoke, "rrs", f"{FIRING} (warning) {RATE} Smart Answers")
    assert smart["runbook"] is None, smart["runbook"]
    assert "pick High5xxRate@3 (smart_answers.yaml" in smart["note"], smart["note"]
    # The Chat AI one picks the Chat AI rule, and its page's section.
    chat = _card(invoke, "rrs", f"{FIRING} (page) {RATE} Chat AI")
    assert chat["resolved"] == ["alert:High5xxRate@page"], chat
    assert chat["runbook"]["id"] == "runbook:chat-ai-alerts", chat["note"]
    assert "pick High5xxRate@page (chat_ai.yaml" in chat["note"], chat["note"]

    # A severity two rules share: the suggestions say which is which.
    warning = _card(invoke, "rrs", "--alert", "High5xxRate@warning")
    assert warning["runbook"] is None
    assert "High5xxRate@2 (fastly.yaml, group Fastly, warning:" in warning["note"], warning
    assert "High5xxRate@3 (smart_answers.yaml" in warning["note"], warning
    # The id names one rule, as before.
    assert _card(invoke, "rrs", "--alert", "High5xxRate@page")["runbook"]["id"] == (
        "runbook:chat-ai-alerts"
    )


ROUTER_RULES = """groups:
  - name: RouterAlerts
    rules:
      - alert: RouterErrorRatioTooHigh
        expr: router_5xx_ratio > 0.05
        labels: {severity: warning}
        annotations: {summary: Router error ratio too high.}
"""
ROUTER_HYPHENED = "router-error-ratio-too-high"
ROUTER_PAGE = "# Router error ratio too high\n\n## Steps\n\nCheck the router's backends.\n"


def test_an_alert_named_after_its_file_in_any_spelling_and_import_order(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    # Runbooks then rules (the page has no link, the rule no runbook_url), and the reverse.
    for tenant, order in (("rro", ("runbooks", "rules")), ("rrr", ("rules", "runbooks"))):
        home = tmp_path / tenant
        (home / "runbooks").mkdir(parents=True)
        (home / "runbooks" / "RouterErrorRatioTooHigh.md").write_text(ROUTER_PAGE, "utf-8")
        (home / "rules.yaml").write_text(ROUTER_RULES, encoding="utf-8")
        ingest_oncall_principals(invoke, home, tenant)
        for step in order:
            if step == "runbooks":
                ingest_as(invoke, home / "runbooks", "markdown-runbooks", tenant)
            else:
                ingest_as(invoke, home / "rules.yaml", "prometheus-rules", tenant)
        for typed in ("RouterErrorRatioTooHigh", "routererrorratiotoohigh", ROUTER_HYPHENED):
            card = _card(invoke, tenant, "--alert", typed)
            assert card["resolved"] == ["alert:RouterErrorRatioTooHigh"], (tenant, typed, card)
            assert card["runbook"] is not None, (tenant, typed, card["note"])
            assert card["runbook"]["id"] == "runbook:RouterErrorRatioTooHigh", (tenant, typed)


def _investigation(invoke, tenant: str, question: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("investigate", question, "--subject", f"{tenant}/user:oncall", "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def test_investigate_tells_rules_of_one_name_apart(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    """Before: "Smart Answers High5xxRate is firing, what is the runbook?" stated the Chat AI
    page as a fact, with nothing missing. Now the question's words pick the rule as the card's
    do, and another rule's runbook is never this alert's."""
    ingest_oncall_principals(invoke, tmp_path, "rri")
    (tmp_path / "alerts").mkdir()
    (tmp_path / "alerts" / "chat-ai-alerts.md").write_text(CHAT_PAGE, encoding="utf-8")
    ingest_as(invoke, tmp_path / "alerts", "markdown-runbooks", "rri")
    rules = tmp_path / "rules"
    rules.mkdir()
    for name, text in SAME_NAMED.items():
        (rules / name).write_text(text, encoding="utf-8")
    # Trusted: an untrusted rule is named by id only (tests/test_untrusted_rule_notes.py).
    ingest_as(invoke, rules, "prometheus-rules", "rri", "--trusted")

    smart = _investigation(
        invoke, "rri", "Smart Answers High5xxRate is firing, what is the runbook?"
    )
    assert not any("chat-ai-alerts" in json.dumps(c) for c in smart["claims"]), smart["claims"]
    assert not smart["evidence"], smart["evidence"]
    notes = " ".join(smart["rule_notes"])
    assert "the text's words ('answers', 'smart') pick High5xxRate@3 (smart_answers.yaml" in notes
    gap = " ".join(m["description"] for m in smart["missing_evidence"])
    assert "runbook:chat-ai-alerts (another rule's runbook: linked to High5xxRate@page" in gap, gap
    assert smart["status"] == "partial", smart["status"]

    # The bare name: ambiguous, said with which rule is which; no runbook stated.
    bare = _investigation(invoke, "rri", "High5xxRate is firing, what is the runbook?")
    assert not bare["evidence"], bare["evidence"]
    notes = " ".join(bare["rule_notes"])
    assert "3 alert rules are named High5xxRate, with different runbooks" in notes, notes
    assert "High5xxRate@page (chat_ai.yaml, group ChatAI, page:" in notes, notes

    # The Chat AI question still gets its page's section, as a fact.
    chat = _investigation(invoke, "rri", "Chat AI High5xxRate is firing, what is the runbook?")
    assert "pick High5xxRate@page (chat_ai.yaml" in " ".join(chat["rule_notes"])
    cited = [e["element_id"] for e in chat["evidence"]]
    assert "runbook:chat-ai-alerts" in cited, cited
    assert any(c["epistemic_status"] == "fact" for c in chat["claims"]), chat["claims"]
