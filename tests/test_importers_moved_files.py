"""A re-import of Markdown runbooks after a file was renamed (`mv a.md b.md`, same bytes):
the ingest says `renamed:`, the new id supersedes the old record, so the on-call is served the
page under its new name and locator, the old one `rejected_superseded`. A file moved with
edits stays a new file and a removed one. A removed file's runbook is still answered, and its
card says its file was not in the source's last import (not at a known_at or as_of before).
On a real Neo4j.

Before: `new: b.md` and `removed: a.md`, and `runbook "<title>"` kept answering with the old
id and the locator of a file that no longer exists, `alternatives` empty; a removed page was
served with nothing on the card.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import neo4j
import pytest
from conftest import git, import_runbooks_and_rules, ingest_as, ingest_oncall_principals

ERROR_RATE = """# Gitaly error rate is too high

## Check the errors

Look at the Gitaly dashboard for the failing RPCs and the node they come from.
"""

DOWN = """# Gitaly is down

## Check the server

Is the Gitaly node running? Look at its systemd unit status.
"""


def _ingest(invoke, folder: Path):  # type: ignore[no-untyped-def]
    return ingest_as(invoke, folder, "markdown-runbooks", "gitlab")


def _card(invoke, *args: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("runbook", *args, "--subject", "gitlab/user:oncall", "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


@pytest.fixture()
def gitaly(tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke) -> Path:  # type: ignore[no-untyped-def]
    runbooks = {"gitaly-error-rate.md": ERROR_RATE, "gitaly-down.md": DOWN}
    import_runbooks_and_rules(invoke, tmp_path, "gitlab", runbooks=runbooks, folder="gitaly")
    return tmp_path / "gitaly"


def test_a_file_moved_with_its_bytes_is_renamed_and_supersedes_the_old_id(  # type: ignore[no-untyped-def]
    gitaly: Path, invoke
) -> None:
    (gitaly / "gitaly-error-rate.md").rename(gitaly / "gitaly-errors-too-high.md")
    again = _ingest(invoke, gitaly)
    assert (
        "ingest: renamed: gitaly-error-rate.md -> gitaly-errors-too-high.md "
        "(same bytes, new id: the new record supersedes the old)"
    ) in again.err.splitlines()
    assert "new:" not in again.err and "removed:" not in again.err
    card = _card(invoke, "Gitaly error rate is too high")
    assert card["runbook"]["id"] == "runbook:gitaly-errors-too-high"
    assert card["runbook"]["locator"] == "gitaly-errors-too-high.md"
    text = invoke("runbook", "Gitaly error rate is too high", "--subject", "gitlab/user:oncall")
    assert (
        "Rejected  runbook:gitaly-error-rate (v1): rejected_superseded -> "
        "runbook:gitaly-errors-too-high"
    ) in text.out
    # Imported again: nothing written, nothing renamed or removed; an edit keeps the pair.
    third = _ingest(invoke, gitaly)
    assert "nothing written" in third.out
    assert "renamed:" not in third.err and "removed:" not in third.err
    (gitaly / "gitaly-errors-too-high.md").write_text(ERROR_RATE + "\nThen page Gitaly.\n")
    edited = _ingest(invoke, gitaly)
    assert "ingest: changed: gitaly-errors-too-high.md" in edited.err.splitlines()
    assert "removed:" not in edited.err
    card = _card(invoke, "Gitaly error rate is too high")
    assert card["runbook"]["id"] == "runbook:gitaly-errors-too-high"


def test_a_file_moved_with_edits_is_new_and_removed(gitaly: Path, invoke) -> None:  # type: ignore[no-untyped-def]
    (gitaly / "gitaly-error-rate.md").unlink()
    (gitaly / "gitaly-errors-too-high.md").write_text(ERROR_RATE + "\nThen page Gitaly.\n")
    again = _ingest(invoke, gitaly)
    assert "renamed:" not in again.err
    assert "ingest: new: gitaly-errors-too-high.md" in again.err.splitlines()
    assert (
        "ingest: removed: gitaly-error-rate.md (not in PATH any more: their records stay current)"
    ) in again.err.splitlines()


def test_a_file_moved_with_git_mv_is_renamed(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    # A clean file of a git work tree is versioned by its commit (`git:<sha>`), not its
    # bytes: the old path's bytes at that commit are compared.
    ingest_oncall_principals(invoke, tmp_path, "gitlab")
    repo = tmp_path / "runbooks"
    folder = repo / "gitaly"
    folder.mkdir(parents=True)
    (folder / "gitaly-error-rate.md").write_text(ERROR_RATE)
    (folder / "gitaly-down.md").write_text(DOWN)
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "runbooks")
    _ingest(invoke, folder)
    git(repo, "mv", "gitaly/gitaly-error-rate.md", "gitaly/gitaly-errors-too-high.md")
    git(repo, "commit", "-q", "-m", "rename")
    again = _ingest(invoke, folder)
    assert (
        "ingest: renamed: gitaly-error-rate.md -> gitaly-errors-too-high.md "
        "(same bytes, new id: the new record supersedes the old)"
    ) in again.err.splitlines()
    card = _card(invoke, "Gitaly error rate is too high")
    assert card["runbook"]["id"] == "runbook:gitaly-errors-too-high"
    assert [r["reason"] for r in card["rejected"]] == ["rejected_superseded"]


def test_a_removed_file_is_still_answered_and_the_card_says_it_is_gone(  # type: ignore[no-untyped-def]
    gitaly: Path, invoke
) -> None:
    before = datetime.now(UTC)
    time.sleep(0.05)
    (gitaly / "gitaly-down.md").unlink()
    again = _ingest(invoke, gitaly)
    assert "ingest: removed: gitaly-down.md" in again.err
    text = invoke("runbook", "Gitaly is down", "--subject", "gitlab/user:oncall")
    assert "[runbook:gitaly-down, " in text.out  # still answered: nothing is retracted
    note = next(line for line in text.out.splitlines() if line.startswith("Note"))
    assert note.startswith("Note      its file was not in src:runbooks:gitaly's import of 20")
    assert note.endswith("; the record stays current until retracted")
    card = _card(invoke, "Gitaly is down")
    assert card["note"].startswith("its file was not in src:runbooks:gitaly's import of ")
    # investigate names it under the runbook's evidence.
    report = invoke(
        "investigate", "Which runbook for Gitaly is down?", "--subject", "gitlab/user:oncall"
    )
    assert report.code == 0, report
    evidence = report.out.split("\nEvidence\n", 1)[1]
    assert "runbook:gitaly-down" in evidence
    assert "its file was not in src:runbooks:gitaly's import of 20" in evidence
    # Known, or asked about, before that import: the file was there.
    earlier = before.isoformat().replace("+00:00", "Z")
    for flag in ("--known-at", "--as-of"):
        card = _card(invoke, "Gitaly is down", flag, earlier)
        assert card["runbook"]["id"] == "runbook:gitaly-down"
        assert "its file was not in" not in (card["note"] or "")
    # A runbook whose file is there says nothing of it; the file back, the note goes.
    assert "its file was not in" not in (_card(invoke, "Gitaly error rate")["note"] or "")
    (gitaly / "gitaly-down.md").write_text(DOWN)
    _ingest(invoke, gitaly)
    assert "its file was not in" not in (_card(invoke, "Gitaly is down")["note"] or "")
