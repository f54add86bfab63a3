"""Re-importing Prometheus rules and their runbooks page, as a team edits them: one rule
removed or edited, a section renamed, a page saved under another name. On a real Neo4j,
through the CLI.

Before: removing one rule made every other alert (and its APPLIES_TO edge) a new version
that differed only by the file's source_version; the removed alert was served with nothing
said; a renamed section's re-import said only "changed:"; and `runbook --alert` said
"import the alert rules to link them" of rules already imported, after one `unresolved:`
line per rule.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import neo4j
import pytest
from conftest import import_runbooks_and_rules, ingest_as

PAGE = """# Ops runbooks

Every alert of the ops mixin links a section of this page.

## OpsIngesterUnhealthy

How to **fix** it:

- Restart the unhealthy ingester pod and watch the ring page.

## OpsCompactorFailing

How to **fix** it:

- Check the compactor logs for the failing block and mark it for no-compaction.

## OpsQuerierSlow

How to **fix** it:

- Scale the queriers out by two replicas.
"""

URL = "https://docs.example.com/ops/latest/ops-runbooks/#{anchor}"


def _rule(name: str, expr: str, anchor: str | None = None) -> str:
    url = URL.format(anchor=(anchor or name).lower())
    return (
        f"      - alert: {name}\n"
        f"        expr: {expr}\n"
        "        labels: {severity: critical}\n"
        f"        annotations: {{summary: {name} fired., runbook_url: '{url}'}}\n"
    )


RULES = {
    "OpsIngesterUnhealthy": "min(ops_ring_members{state='Unhealthy'}) > 0",
    "OpsCompactorFailing": "increase(ops_compactor_runs_failed_total[2h]) > 1",
    "OpsQuerierSlow": "histogram_quantile(0.99, ops_query_seconds_bucket) > 5",
}


def _rules_text(rules: dict[str, str]) -> str:
    body = "".join(_rule(name, expr) for name, expr in rules.items())
    return f"groups:\n  - name: ops\n    rules:\n{body}"


def _rules_file(path: Path, rules: dict[str, str]) -> Path:
    path.write_text(_rules_text(rules), encoding="utf-8")
    return path


def _ingest(invoke, path: Path, fmt: str):  # type: ignore[no-untyped-def]
    return ingest_as(invoke, path, fmt, "opsco")


def _card(invoke, *args: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("runbook", *args, "--subject", "opsco/user:oncall", "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


@pytest.fixture()
def ops(tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke) -> Path:  # type: ignore[no-untyped-def]
    """opsco's principal, the page in a folder named like its URL, and the rules (linked)."""
    rules = import_runbooks_and_rules(
        invoke, tmp_path, "opsco", runbooks={"ops-runbooks.md": PAGE}, rules=_rules_text(RULES),
        folder="ops-runbooks",
    )  # fmt: skip
    assert rules.err.count("ingest: linked: runbook:ops-runbooks APPLIES_TO ") == 3, rules.err
    return tmp_path


def _alert_records(driver: neo4j.Driver, alert_id: str) -> list[tuple[int, bool, str]]:
    records, _, _ = driver.execute_query(
        "MATCH (a:KG:Alert {tenant: 'opsco', id: $id}) "
        "RETURN a.version AS v, a.superseded_at IS NULL AS current, a.source_version AS sv "
        "ORDER BY v",
        id=alert_id,
    )
    return [(r["v"], r["current"], r["sv"]) for r in records]


def test_an_edit_of_one_rule_versions_that_rule_only(  # type: ignore[no-untyped-def]
    ops: Path, clean_db: neo4j.Driver, invoke
) -> None:
    [(_, _, first_version)] = _alert_records(clean_db, "alert:OpsIngesterUnhealthy")
    edited = {**RULES, "OpsQuerierSlow": RULES["OpsQuerierSlow"].replace("> 5", "> 8")}
    again = invoke(
        "ingest", str(_rules_file(ops / "rules.yaml", edited)), "--format", "prometheus-rules",
        "--tenant", "opsco", "--json",
    )  # fmt: skip
    assert again.code == 0, again
    report = json.loads(again.out)
    # One alert record and nothing else: its APPLIES_TO edge and the other rules unchanged.
    assert report["node_records_created"] == 1 and report["records_superseded"] == 1, report
    assert report["edge_records_created"] == 0, report
    assert "ingest: changed: alert:OpsQuerierSlow\n" in again.err
    assert "removed:" not in again.err and "new:" not in again.err
    # The unchanged rule keeps the version of the file it was last changed in.
    assert _alert_records(clean_db, "alert:OpsIngesterUnhealthy") == [(1, True, first_version)]
    slow = _alert_records(clean_db, "alert:OpsQuerierSlow")
    assert [(v, current) for v, current, _ in slow] == [(1, False), (2, True)]
    old, new = slow[0][2], slow[1][2]
    assert old == first_version and new.startswith("sha256:") and new != first_version


def test_a_removed_rule_is_said_at_import_and_on_its_card(  # type: ignore[no-untyped-def]
    ops: Path, clean_db: neo4j.Driver, invoke
) -> None:
    before = datetime.now(UTC)
    time.sleep(0.05)
    kept = {k: v for k, v in RULES.items() if k != "OpsCompactorFailing"}
    again = _ingest(invoke, _rules_file(ops / "rules.yaml", kept), "prometheus-rules")
    assert "created 0 node and 0 relationship records" in again.out, again.out
    assert "superseded 0" in again.out
    assert (
        "ingest: removed: alert:OpsCompactorFailing (their rules are not in PATH any more: "
        "the records stay current, and runbook --alert says so)"
    ) in again.err
    # Still answered (nothing is retracted), and said first on the card and in --json.
    card = _card(invoke, "--alert", "OpsCompactorFailing")
    assert card["resolved"] == ["alert:OpsCompactorFailing"]
    assert card["runbook"]["steps_locator"] == "ops-runbooks.md#opscompactorfailing"
    assert card["note"].startswith(
        "alert:OpsCompactorFailing: its rule was not in src:prometheus:rules's import of 20"
    )
    assert card["note"].endswith(
        "(removed from the rule file); the record stays current until retracted"
    )
    text = invoke("runbook", "--alert", "OpsCompactorFailing", "--subject", "opsco/user:oncall")
    assert "\nNote      alert:OpsCompactorFailing: its rule was not in" in text.out
    assert (_card(invoke, "--alert", "OpsQuerierSlow")["note"] or "") == ""
    # Known before that import: the rule was there.
    earlier = before.isoformat().replace("+00:00", "Z")
    assert "its rule was not" not in (
        _card(invoke, "--alert", "OpsCompactorFailing", "--known-at", earlier)["note"] or ""
    )
    replay = invoke("replay", card["run_id"], "--subject", "opsco/user:oncall", "--json")
    assert replay.code == 0 and json.loads(replay.out)["verified"] is True, replay
    # The rule back: the note goes, and the record was never re-versioned.
    back = _ingest(invoke, _rules_file(ops / "rules.yaml", RULES), "prometheus-rules")
    assert "new:" not in back.err and "removed:" not in back.err
    assert "its rule was not" not in (_card(invoke, "--alert", "OpsCompactorFailing")["note"] or "")
    assert [v for v, _, _ in _alert_records(clean_db, "alert:OpsCompactorFailing")] == [1]


def test_a_renamed_section_is_reported_and_the_card_names_it(  # type: ignore[no-untyped-def]
    ops: Path, invoke
) -> None:
    page = ops / "ops-runbooks" / "ops-runbooks.md"
    page.write_text(PAGE.replace("## OpsIngesterUnhealthy", "## OpsIngestersUnhealthy"))
    again = _ingest(invoke, ops / "ops-runbooks", "markdown-runbooks")
    assert "ingest: changed: ops-runbooks.md\n" in again.err
    assert (
        "ingest: anchor: alert:OpsIngesterUnhealthy: runbook_url anchor '#opsingesterunhealthy' "
        "names no section of ops-runbooks.md any more (did you mean OpsIngestersUnhealthy?)\n"
    ) in again.err
    assert "ingest: anchor: 1 alert is still linked to the page" in again.err
    assert "alert:OpsQuerierSlow" not in again.err  # its section is still there
    card = _card(invoke, "--alert", "OpsIngesterUnhealthy")
    assert card["runbook"]["id"] == "runbook:ops-runbooks"
    assert (
        "none is about opsingesterunhealthy, OpsIngesterUnhealthy"
        in (card["runbook"]["steps_note"])
    )
    assert "did you mean OpsIngestersUnhealthy?" in card["runbook"]["steps_note"]
    assert "--alert OpsIngestersUnhealthy shows it" in card["runbook"]["steps_note"]
    # A re-import of the same text says nothing more: the anchor was gone before it.
    page.write_text(page.read_text() + "\nLast reviewed in December.\n")
    quiet = _ingest(invoke, ops / "ops-runbooks", "markdown-runbooks")
    assert "anchor:" not in quiet.err


def test_rules_whose_url_names_no_imported_page_are_one_counted_line_and_a_hint(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    # The page saved under another name.
    rules = import_runbooks_and_rules(
        invoke, tmp_path, "opsco", runbooks={"ops.md": PAGE}, rules=_rules_text(RULES)
    )
    unresolved = [line for line in rules.err.splitlines() if line.startswith("ingest: unresolved")]
    assert unresolved == [
        f"ingest: unresolved: {tmp_path / 'rules.yaml'}: 3 elements (alert:OpsIngesterUnhealthy, "
        "alert:OpsCompactorFailing, alert:OpsQuerierSlow): runbook_url "
        "'https://docs.example.com/ops/latest/ops-runbooks/' (anchors aside) not linked (no "
        "runbook in the tenant has that path or name)"
    ]
    assert (
        "ingest: hint: a runbook_url links the runbook whose id, name or file path (in its "
        "import folder, extension aside) ends the URL's path: here 'ops-runbooks', a file "
        "ops-runbooks.md or a folder ops-runbooks/ whose index page is the runbook"
    ) in rules.err
    # The card finds the section by its heading, and says what would link them.
    card = _card(invoke, "--alert", "OpsQuerierSlow")
    assert card["runbook"]["steps_locator"] == "ops.md#opsquerierslow"
    assert "import the alert rules" not in card["note"]
    assert card["note"].endswith(
        "(its runbook_url names the page 'ops-runbooks', which no runbook's id, name or file "
        "path ends with: import the page as ops-runbooks.md (or a folder ops-runbooks/) or fix "
        "runbook_url, then re-ingest the rules)"
    )
    text = invoke("runbook", "--alert", "OpsQuerierSlow", "--subject", "opsco/user:oncall")
    assert "fix runbook_url, then re-ingest the rules)\n" in text.out  # the card's whole note
