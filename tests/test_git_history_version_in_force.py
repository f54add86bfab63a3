"""`investigator runbook --alert NAME --as-of T` on a page of many git-history versions, found
by a section headed by the alert's name (no alert rule links it): the version in force at T,
however far along its chain it lies from the versions the heading search returned.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
from conftest import git_commit, git_repository, ingest_as, ingest_oncall_principals
from test_ingest_git_history import DEMO

PAGE = "ops/runbook.md"
VERSIONS = 20


def test_the_version_in_force_is_found_among_many_versions_of_one_page(  # type: ignore[no-untyped-def]
    driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    # Before: the heading search's 10 hits were all versions of this page (the shorter,
    # older ones score highest) and SUPERSEDES four steps from them did not reach the
    # version in force: "no version of the runbook ... is valid at as_of".
    shas = _many_versions(driver, invoke, tmp_path)
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
    root = git_repository(tmp_path / "gw-runbooks")
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


def _many_versions(driver: neo4j.Driver, invoke, tmp_path: Path) -> list[str]:  # type: ignore[no-untyped-def]
    """The demo, and `ops/runbook.md` with `VERSIONS` git-history versions, each headed
    `## CardGatewayTimeouts` (no alert rule links it); the commit shas, oldest first."""
    with driver.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()
    assert invoke("ingest", str(DEMO)).code == 0
    root = git_repository(tmp_path / "ops-runbooks")
    shas, text = [], "# Operations\n\n## CardGatewayTimeouts\n\nCheck the gateway pods.\n"
    for day in range(1, VERSIONS + 1):
        text += f"\nStep added on day {day}: look at the gateway dashboard panel {day}.\n"
        shas.append(git_commit(root, PAGE, text, f"2026-03-{day:02d}T10:00:00Z"))
    args = ["ingest", str(root), "--format", "markdown-runbooks", "--tenant", "acme"]
    assert invoke(*args, "--git-history").code == 0
    return shas


def test_investigate_answers_with_the_version_in_force_the_card_shows(  # type: ignore[no-untyped-def]
    driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    # Before: the question's runbook search never reached the version in force, so the
    # run said "'CardGatewayTimeouts' in the question matched nothing visible" and no runbook.
    shas = _many_versions(driver, invoke, tmp_path)
    at = f"2026-03-{VERSIONS - 1:02d}T12:00:00Z"
    card = invoke(
        "runbook",
        "--alert",
        "CardGatewayTimeouts",
        "--subject",
        "acme/user:bob",
        "--as-of",
        at,
        "--json",
    )
    assert card.code == 0, card
    in_force = json.loads(card.out)["runbook"]["id"]
    assert in_force == f"runbook:ops@{shas[VERSIONS - 2][:12]}"
    question = "Which runbook applied to CardGatewayTimeouts?"
    asked = ["investigate", question, "--subject", "acme/user:bob", "--as-of", at]
    result = invoke(*asked, "--json")
    assert result.code == 0, result
    report = json.loads(result.out)
    cited = {c for claim in report["claims"] for c in claim.get("evidence_ids", [])}
    pack = {ev["evidence_id"]: ev["element_id"] for ev in report["evidence"]}
    assert in_force in {pack[c] for c in cited if c in pack}, result.out
    shown = invoke(*asked)
    assert "matched nothing visible" not in shown.out + shown.err, shown.out
    assert in_force in shown.out, shown.out


def test_a_version_in_force_dropped_for_the_budget_is_named_as_missing(  # type: ignore[no-untyped-def]
    driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    # Before: the version in force at the time asked was dropped (`budget_exceeded`) while the
    # one at as_of fitted, and "Missing evidence" said none: the run read as complete.
    _many_versions(driver, invoke, tmp_path)
    question = "Which runbook applied to CardGatewayTimeouts on 2026-03-10T12:00:00Z?"
    asked = ["investigate", question, "--subject", "acme/user:bob"]
    dropped_runs = 0
    for budget in ("1100", "1200", "1300"):
        result = invoke(
            *asked, "--as-of", "2026-03-19T12:00:00Z", "--budget-tokens", budget, "--json"
        )
        assert result.code == 0, result
        report = json.loads(result.out)
        dropped = {
            r["element_id"]
            for r in report["rejected"]
            if r["reason"] == "budget_exceeded" and r["element_id"].startswith("runbook:ops@")
        }
        if not dropped:
            continue
        dropped_runs += 1
        gaps = [m for m in report["missing_evidence"] if m["evidence_type"] == "runbook"]
        assert [m["required"] for m in gaps] == [True], report["missing_evidence"]
        assert any(d in gaps[0]["description"] for d in dropped), gaps
        assert "dropped for the evidence budget" in gaps[0]["description"], gaps
        assert report["status"] == "partial"
    assert dropped_runs, "no budget tried dropped a version of the page"
    shown = invoke(*asked, "--as-of", "2026-03-19T12:00:00Z", "--budget-tokens", "1200")
    missing = shown.out.split("Missing evidence", 1)[1]
    assert "runbook (required): the version of runbook:ops in force at " in missing, shown.out


def test_a_section_renamed_in_an_imported_commit_is_said_as_a_lost_anchor(  # type: ignore[no-untyped-def]
    cli_env: object, invoke, tmp_path: Path
) -> None:
    # Before: the commit's version is a new id superseding the linked one, so the rename
    # went unsaid (a plain re-import of the same file says "... names no section ... any more").
    tenant = f"gwr{tmp_path.parent.name[-6:].replace('-', '')}".lower()
    ingest_oncall_principals(invoke, tmp_path, tenant)
    root = git_repository(tmp_path / "gw-runbooks")
    text = "# Gateway\n\n## GatewayDown\n\nRestart it.\n"
    git_commit(root, PAGE, text, "2026-03-01T10:00:00Z")
    git_commit(root, PAGE, text + "\nAsk the gateway team.\n", "2026-03-02T10:00:00Z")
    ingest_as(invoke, root, "markdown-runbooks", tenant, "--git-history")
    rules = RULE.format(name="GatewayDown", anchor="gatewaydown")
    (tmp_path / "rules.yaml").write_text(RULES.format(rules=rules), encoding="utf-8")
    ingest_as(invoke, tmp_path / "rules.yaml", "prometheus-rules", tenant)
    renamed = text.replace("## GatewayDown", "## GatewayIsDown")
    sha = git_commit(root, PAGE, renamed, "2026-03-03T10:00:00Z")
    result = ingest_as(invoke, root, "markdown-runbooks", tenant, "--git-history")
    anchors = [line for line in result.err.splitlines() if line.startswith("ingest: anchor:")]
    assert anchors == [
        "ingest: anchor: alert:GatewayDown: runbook_url anchor '#gatewaydown' names no section "
        f"of {PAGE}@{sha} any more (did you mean GatewayIsDown?)",
        "ingest: anchor: 1 alert is still linked to the page, and runbook --alert shows its "
        "opening text for it: restore the heading, or fix the rules' runbook_url and re-ingest "
        "them",
    ], result.err
    # The same history again adds no version: nothing new to say.
    again = ingest_as(invoke, root, "markdown-runbooks", tenant, "--git-history")
    assert "ingest: anchor:" not in again.err, again.err
