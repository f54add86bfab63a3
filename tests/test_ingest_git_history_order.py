"""`ingest --git-history` never drops a commit silently: one whose date a later commit is
dated before (a forged or skewed date) is named with the reason, through the real CLI on a
real git repository and a real Neo4j.
"""

from __future__ import annotations

from pathlib import Path

import neo4j
from conftest import CliResult, git_commit, git_repository

FILE = "gh.md"
TEXT = "---\nid: runbook:gh\n---\n# GH\n\n{step}\n"


def _import_history(  # type: ignore[no-untyped-def]
    invoke, tmp_path: Path, steps: dict[str, str], *flags: str
) -> tuple[Path, list[str], CliResult]:
    """A git repository with one commit of FILE per step ({step: commit date}, in that order),
    imported through the CLI with `--git-history` (tenant acme, then FLAGS): the repository,
    the commits' shas and the ingest's result (exit 0)."""
    root = git_repository(tmp_path / "runbooks")
    shas = [git_commit(root, FILE, TEXT.format(step=step), when) for step, when in steps.items()]
    result = invoke(
        "ingest", str(root), "--format", "markdown-runbooks", "--tenant", "acme", *flags,
        "--git-history",
    )  # fmt: skip
    assert result.code == 0, result
    return root, shas, result


def test_a_commit_dated_out_of_order_is_named_not_dropped_silently(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    steps = {
        "Restart.": "2026-03-01T00:00:00Z",
        "Roll back.": "2030-01-01T00:00:00Z",
        "Page.": "2026-06-01T00:00:00Z",
    }
    root, [_, v2, v3], result = _import_history(invoke, tmp_path, steps, "--acl", "internal")
    assert (
        f"skipped: {root / FILE}: commit {v2[:12]} (dated 2030-01-01T00:00:00Z) not imported "
        f"as a version: the later commit {v3[:12]} is dated 2026-06-01T00:00:00Z, its date is "
        "out of order (clock skew or a forged date); its text is in git only (--git-history)"
    ) in result.err, result.err
    records, _, _ = clean_db.execute_query(
        "MATCH (d:KG:Runbook {tenant: 'acme'}) RETURN d.content AS content ORDER BY d.valid_from"
    )
    assert [str(r["content"]).split("\n")[-1] for r in records] == ["Restart.", "Page."]


def test_a_last_commit_dated_in_the_future_is_named(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    steps = {"Restart.": "2026-03-01T00:00:00Z", "Fail over.": "2099-01-01T00:00:00Z"}
    root, [_, ahead], result = _import_history(invoke, tmp_path, steps)
    assert (
        f"warning: {root / FILE}: commit {ahead[:12]} is dated 2099-01-01T00:00:00Z, in the "
        "future: its version is not in force before then, the one before it is (--git-history)"
    ) in result.err.splitlines(), result.err
