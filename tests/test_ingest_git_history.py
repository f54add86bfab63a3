"""`investigator ingest --format markdown-runbooks --git-history` on a real git repository
made here, into a real Neo4j: each commit of a file is a version, valid from the commit
time, SUPERSEDES the one before, located at `path@commit`; re-ingest is a no-op and a new
commit adds one version.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import neo4j
import pytest
from conftest import git_commit, git_repository

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "datasets" / "payments-incident"
FILE = "alerts/PaymentApiHighErrorRate.md"


def _commit(repo: Path, text: str, when: str, path: str = FILE) -> str:
    return git_commit(repo, path, text, when)


@pytest.fixture()
def repo(tmp_path: Path) -> tuple[Path, list[str]]:
    root = git_repository(tmp_path / "runbooks")
    shas = [
        _commit(root, "# Payment API errors\n\nRestart the pods.\n", "2026-03-01T10:00:00Z"),
        _commit(root, "# Payment API errors\n\nRoll back the release.\n", "2026-05-01T10:00:00Z"),
    ]
    _commit(root, "# Other\n", "2026-05-15T10:00:00Z", path="alerts/Other.md")
    shas.append(
        _commit(root, "# Payment API errors\n\nRoll back, then page.\n", "2026-07-01T10:00:00Z")
    )
    return root, shas


def _versions(driver: neo4j.Driver) -> list[dict[str, Any]]:
    records, _, _ = driver.execute_query(
        "MATCH (d:KG:Runbook {tenant: 'acme'}) WHERE d.superseded_at IS NULL "
        "AND d.path = $path "
        "OPTIONAL MATCH (d)-[s:SUPERSEDES]->(old) WHERE s.superseded_at IS NULL "
        "OPTIONAL MATCH (d)-[a:APPLIES_TO]->(alert:Alert) WHERE a.superseded_at IS NULL "
        "RETURN d.id AS id, d.locator AS locator, toString(d.valid_from) AS valid_from, "
        "toString(d.valid_to) AS valid_to, d.content AS content, d.trust AS trust, "
        "d.source_version AS source_version, old.id AS supersedes, "
        "collect(DISTINCT alert.id) AS alerts ORDER BY valid_from",
        path=FILE,
    )
    return [dict(r) for r in records]


def test_each_commit_is_a_version_valid_from_its_commit_time(  # type: ignore[no-untyped-def]
    driver: neo4j.Driver, cli_env: object, invoke, repo: tuple[Path, list[str]]
) -> None:
    with driver.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()
    assert invoke("ingest", str(DEMO)).code == 0
    root, shas = repo
    args = ["ingest", str(root), "--format", "markdown-runbooks", "--tenant", "acme"]
    first = invoke(*args, "--git-history", "--json")
    assert first.code == 0, first
    versions = _versions(driver)
    ids = [f"runbook:PaymentApiHighErrorRate@{sha[:12]}" for sha in shas]
    assert [v["id"] for v in versions] == ids
    assert [v["locator"] for v in versions] == [f"{FILE}@{sha}" for sha in shas]
    assert [v["source_version"] for v in versions] == [f"git:{sha}" for sha in shas]
    assert [v["valid_from"] for v in versions] == [
        "2026-03-01T10:00:00Z",
        "2026-05-01T10:00:00Z",
        "2026-07-01T10:00:00Z",
    ]
    assert [v["valid_to"] for v in versions] == [
        "2026-05-01T10:00:00Z",
        "2026-07-01T10:00:00Z",
        None,
    ]
    assert [v["supersedes"] for v in versions] == [None, ids[0], ids[1]]
    assert all(v["alerts"] == ["alert:PaymentApiHighErrorRate"] for v in versions)
    assert all(v["trust"] == "untrusted" for v in versions)
    assert "Roll back the release." in versions[1]["content"]

    again = json.loads(invoke(*args, "--git-history", "--json").out)
    assert again["node_records_created"] == 0 and again["edge_records_created"] == 0

    sha4 = _commit(
        root, "# Payment API errors\n\nCall the payments on-call.\n", "2026-08-01T10:00:00Z"
    )
    later = json.loads(invoke(*args, "--git-history", "--json").out)
    # The new version, and a new record of the old head now valid until the new commit.
    assert later["node_records_created"] == 2, later
    versions = _versions(driver)
    assert versions[-1]["id"] == f"runbook:PaymentApiHighErrorRate@{sha4[:12]}"
    assert versions[-2]["valid_to"] == "2026-08-01T10:00:00Z"
    assert versions[-1]["supersedes"] == versions[-2]["id"]


def test_git_history_needs_a_git_work_tree(  # type: ignore[no-untyped-def]
    driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    records, _, _ = driver.execute_query("MATCH (n:KG) RETURN count(n) AS c")
    before = records[0]["c"]
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n", encoding="utf-8")
    result = invoke(
        "ingest", str(folder), "--format", "markdown-runbooks", "--tenant", "acme",
        "--git-history",
    )  # fmt: skip
    assert result.code == 2, result
    assert "--git-history needs a folder inside a git work tree" in result.err
    records, _, _ = driver.execute_query("MATCH (n:KG) RETURN count(n) AS c")
    assert records[0]["c"] == before


def test_free_text_that_matches_an_older_version_answers_the_version_in_force(  # type: ignore[no-untyped-def]
    driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    # A runbook named after no alert: nothing links it, so its chain is read from itself.
    # Before, the best text hit alone was the answer: the superseded v1 ("no version valid").
    with driver.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()
    assert invoke("ingest", str(DEMO)).code == 0
    root = git_repository(tmp_path / "runbooks")
    path = "alerts/CardGatewayTimeouts.md"
    title = "# Card gateway timeouts\n\n"
    restart = "Restart the card gateway pods when timeouts rise above the threshold.\n"
    fail_over = "Fail over the card gateway to the standby region, then page the gateway team.\n"
    old = _commit(root, title + restart, "2026-03-01T10:00:00Z", path=path)
    new = _commit(root, title + fail_over, "2026-06-01T10:00:00Z", path=path)
    args = ["ingest", str(root), "--format", "markdown-runbooks", "--tenant", "acme"]
    assert invoke(*args, "--git-history", "--trusted").code == 0
    asked = ["runbook", "restart the card gateway pods when timeouts rise", "--subject",
             "acme/user:bob", "--json"]  # fmt: skip
    now = json.loads(invoke(*asked).out)
    assert now["runbook"]["id"] == f"runbook:CardGatewayTimeouts@{new[:12]}"
    assert now["note"] is None
    assert [(r["element_id"], r["reason"]) for r in now["rejected"]] == [
        (f"runbook:CardGatewayTimeouts@{old[:12]}", "rejected_superseded")
    ]
    then = json.loads(invoke(*asked, "--as-of", "2026-04-01T00:00:00Z").out)
    assert then["runbook"]["id"] == f"runbook:CardGatewayTimeouts@{old[:12]}"
    replay = invoke("replay", now["run_id"], "--subject", "acme/user:bob", "--json")
    assert json.loads(replay.out)["verified"] is True


def _kg_count(driver: neo4j.Driver) -> int:
    records, _, _ = driver.execute_query("MATCH (n) RETURN count(n) AS c")
    return int(records[0]["c"])


def test_an_old_version_over_max_bytes_is_refused_before_it_is_read(  # type: ignore[no-untyped-def]
    driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    # Before: the work tree's files were bounded by --max-bytes, but every committed version
    # was read whole from git (a 2 GB blob in history was held in memory) and imported.
    root = git_repository(tmp_path / f"big-history-{tmp_path.parent.name}")  # one source per run
    big = _commit(root, "# Payment API errors\n\n" + "x" * 5000 + "\n", "2026-03-01T10:00:00Z")
    _commit(root, "# Payment API errors\n\nRoll back.\n", "2026-05-01T10:00:00Z")
    before = _kg_count(driver)
    args = ["ingest", str(root), "--format", "markdown-runbooks", "--tenant", "acme"]
    result = invoke(*args, "--git-history", "--max-bytes", "2000")
    assert result.code == 2, result
    assert result.out == "" and result.err.count("\n") == 1, result
    assert result.err == (
        f"error: {root / FILE} at commit {big[:12]}: it holds 5,023 bytes, more than the 2,000 "
        "an ingest reads (--max-bytes N raises the bound): nothing written\n"
    ), result.err
    assert _kg_count(driver) == before  # no record, no source, no import origin
    # The same bound with a larger limit: imported.
    assert invoke(*args, "--git-history", "--max-bytes", "6000").code == 0


def test_versions_together_over_max_bytes_are_refused(  # type: ignore[no-untyped-def]
    driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    root = git_repository(tmp_path / f"long-history-{tmp_path.parent.name}")
    for month in (3, 4, 5):
        body = f"# Payment API errors\n\nStep {month}.\n" + "y" * 700 + "\n"
        _commit(root, body, f"2026-0{month}-01T10:00:00Z")
    before = _kg_count(driver)
    result = invoke(
        "ingest", str(root), "--format", "markdown-runbooks", "--tenant", "acme",
        "--git-history", "--max-bytes", "2000",
    )  # fmt: skip
    assert result.code == 2, result
    assert result.err.startswith(
        f"error: {root}: the committed versions of its files (--git-history) hold at least "
    ), result.err
    assert result.err.endswith(
        "more than the 2,000 an ingest reads (--max-bytes N raises the bound): nothing written\n"
    )
    assert _kg_count(driver) == before
