"""A Markdown file whose name starts with `.` in a folder of runbooks, through the CLI on a
real Neo4j: not imported, and the import says so.

Before: dgwhited/guardduty-runbooks has a page named `.md` (a finding's page written with no
name); the import skipped it with nothing said, so whoever imported the folder could not
tell a page was left out. The pages here are written for the test."""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
from conftest import ACME_CATALOG, wipe

PAGE = (
    "Impact:EC2/DemoHiddenFinding\n----------------------------\n\n"
    "### A host answered a zebrafrost probe.\n\nQuarantine the host.\n"
)


def test_hidden_markdown_files_are_named_as_not_imported(  # type: ignore[no-untyped-def]
    driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    folder = tmp_path / "runbooks"
    (folder / "ec2").mkdir(parents=True)
    (folder / ".github").mkdir()
    (folder / "impact-ec2-shown.md").write_text(
        "Impact:EC2/Shown\n----------------\n\n### A host sent spam.\n\nIsolate it.\n",
        encoding="utf-8",
    )
    (folder / ".md").write_text(PAGE, encoding="utf-8")
    (folder / "ec2" / ".draft.md").write_text(PAGE, encoding="utf-8")
    # A hidden folder's files (a repository's templates) are not looked into, nor listed.
    (folder / ".github" / "PULL_REQUEST_TEMPLATE.md").write_text("# PR\n", encoding="utf-8")
    wipe(driver)
    assert invoke("ingest", str(ACME_CATALOG)).code == 0
    result = invoke(
        "ingest", str(folder), "--format", "markdown-runbooks", "--tenant", "acme",
        "--acl", "internal",
    )  # fmt: skip
    assert result.code == 0, result
    assert (
        "ingest: skipped: 2 hidden files (name starting with '.'), not imported: .md, "
        "ec2/.draft.md; rename a page without the leading '.' to import it\n"
    ) in result.err, result.err
    assert "PULL_REQUEST_TEMPLATE" not in result.err, result.err
    # Only the named page is a runbook; the hidden one's words find nothing.
    card = invoke("runbook", "zebrafrost probe", "--subject", "acme/user:oncall", "--json")
    assert json.loads(card.out).get("runbook") is None, card
    shown = invoke("runbook", "--alert", "Impact:EC2/Shown", "--subject", "acme/user:oncall")
    assert shown.code == 0, shown
