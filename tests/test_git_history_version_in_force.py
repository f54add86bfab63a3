"""`investigator runbook --alert NAME --as-of T` on a page of many git-history versions, found
by a section headed by the alert's name (no alert rule links it): the version in force at T,
however far along its chain it lies from the versions the heading search returned.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
from conftest import git, git_commit, ingest_as, ingest_oncall_principals
from test_ingest_git_history import DEMO

PAGE = "ops/runbook.md"
VERSIONS = 20


def test_the_version_in_force_is_found_among_many_versions_of_one_page(  # type: ignore[no-untyped-def]
    driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    # Before: the heading search's 10 hits were all versions of this page (the shorter,
    # older ones score highest) and SUPERSEDES four steps from them did not reach the
    # version in force: "no version of the runbook ... is valid at as_of".
    with driver.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()
    assert invoke("ingest", str(DEMO)).code == 0
    root = tmp_path / "ops-runbooks"
    root.mkdir()
    git(root, "init", "-q")
    shas, text = [], "# Operations\n\n## CardGatewayTimeouts\n\nCheck the gateway pods.\n"
    for day in range(1, VERSIONS + 1):
        text += f"\nStep added on day {day}: look at the gateway dashboard panel {day}.\n"
        shas.append(git_commit(root, PAGE, text, f"2026-03-{day:02d}T10:00:00Z"))
    args = ["ingest", str(root), "--format", "markdown-runbooks", "--tenant", "acme"]
    assert invoke(*args, "--git-history").code == 0
    asked = ["runbook", "--alert", "CardGatewayTimeouts", "--subject", "acme/user:bob"]
    for day in (VERSIONS - 1, 2):
        card = invoke(*asked, "--as-of", f"2026-03-{day:02d}T12:00:00Z", "--json")
        assert card.code == 0, card
        answer = json.loads(card.out)
        assert answer["runbook"] is not None, answer["note"]
        assert answer["runbook"]["id"] == f"runbook:ops@{shas[day - 1][:12]}"
        assert answer["runbook"]["steps_locator"].endswith("#cardgatewaytimeouts")
    shown = invoke(*asked, "--as-of", f"2026-03-{VERSIONS - 1:02d}T12:00:00Z")
    assert "is valid at as_of" not in shown.out, shown.out
    assert f"[runbook:ops@{shas[VERSIONS - 2][:12]}, git:" in shown.out, shown.out


RULES = """groups:
  - name: gateway
    rules:
{rules}"""
RULE = """      - alert: {name}
        expr: up == 0
        annotations: {{summary: {name} fired., runbook_url: 'https://git.example.org/ops/runbook.md#{anchor}'}}
"""


def test_rules_after_a_git_history_check_anchors_against_the_newest_version(  # type: ignore[no-untyped-def]
    cli_env: object, invoke, tmp_path: Path
) -> None:
    # Before: each alert was checked against every version it was linked to, so the two old
    # versions without today's sections made "4 alerts are linked to the page as a whole"
    # (2 alerts x 2 old versions), advice to fix anchors that are fine.
    tenant = f"gwh{tmp_path.parent.name[-6:].replace('-', '')}".lower()
    ingest_oncall_principals(invoke, tmp_path, tenant)
    root = tmp_path / "gw-runbooks"
    root.mkdir()
    git(root, "init", "-q")
    text = "# Gateway\n\n## Overview\n\nThe gateway fronts the card network.\n"
    git_commit(root, PAGE, text, "2026-03-01T10:00:00Z")
    git_commit(root, PAGE, text + "\nAsk the gateway team.\n", "2026-03-02T10:00:00Z")
    text += "\n## GatewayDown\n\nRestart it.\n\n## GatewaySlow\n\nScale it.\n"
    git_commit(root, PAGE, text, "2026-03-03T10:00:00Z")
    ingest_as(invoke, root, "markdown-runbooks", tenant, "--git-history")
    rules = "".join(
        RULE.format(name=n, anchor=a)
        for n, a in (("GatewayDown", "gatewaydown"), ("GatewaySlow", "gatewayslows"))
    )
    (tmp_path / "rules.yaml").write_text(RULES.format(rules=rules), encoding="utf-8")
    result = ingest_as(invoke, tmp_path / "rules.yaml", "prometheus-rules", tenant)
    anchors = [line for line in result.err.splitlines() if line.startswith("ingest: anchor:")]
    # Only GatewaySlow's anchor names no section of the page today, and it is counted once.
    assert len(anchors) == 2, result.err
    assert anchors[0].startswith(
        "ingest: anchor: alert:GatewaySlow: runbook_url anchor '#gatewayslows' names no section "
        "of ops/runbook.md@"
    ), anchors
    assert anchors[1].startswith("ingest: anchor: 1 alert is linked to the page as a whole")
