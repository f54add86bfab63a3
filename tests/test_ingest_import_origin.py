"""A folder that only shares a name with an imported one does not become its source.

The explorer's case: `ingest teamb/docs --format markdown-runbooks` after `ingest gitlab/docs`
took the default source id `src:runbooks:docs` of the first, wrote TEAM-B's step as the new
version of GitLab's runbook (with GitLab's ACL), listed its 330 other files as removed, and
exited 0. Each ingest below goes through the real CLI against a real Neo4j.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import neo4j
import pytest
from conftest import invoke_process

ARGS = ("--format", "markdown-runbooks", "--tenant", "gl")

GITALY = "# Gitaly latency high\n\n## Steps\n\n1. {step}\n"
DISK = "# Disk full\n\n1. {step}\n"


def docs(root: Path, step: str) -> Path:
    """`root/docs` holding two runbooks whose steps say `step`."""
    path = root / "docs"
    (path / "gitaly").mkdir(parents=True, exist_ok=True)
    (path / "gitaly" / "gitaly-latency.md").write_text(GITALY.format(step=step), encoding="utf-8")
    (path / "disk-full.md").write_text(DISK.format(step=step), encoding="utf-8")
    return path


def contents(driver: neo4j.Driver) -> dict[str, tuple[str, str, list[str]]]:
    """Current runbooks of tenant gl: id -> (source, content, acl)."""
    rows = driver.execute_query(
        "MATCH (n:KG:Document {tenant: 'gl'}) WHERE n.superseded_at IS NULL "
        "RETURN n.id AS id, n.source_id AS source, n.content AS content, n.acl AS acl"
    ).records
    return {r["id"]: (r["source"], r["content"], list(r["acl"] or [])) for r in rows}


def counts(driver: neo4j.Driver) -> int:
    return int(driver.execute_query("MATCH (n) RETURN count(n) AS n").records[0]["n"])


def refused_line(result: Any) -> str:
    """Exit 2, nothing on stdout, exactly one line on stderr."""
    assert result.code == 2, result
    assert result.out == "", result
    lines = result.err.rstrip().splitlines()
    assert len(lines) == 1, result.err
    return lines[0]


def test_another_folder_of_the_same_name_is_refused(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    gitlab = docs(tmp_path / "gitlab", "Restart gitaly on the node.")
    teamb = docs(tmp_path / "teamb", "TEAM-B TEXT: delete the repository storage.")
    first = invoke("ingest", str(gitlab), *ARGS, "--acl", "sre")
    assert first.code == 0, first
    before, nodes = contents(clean_db), counts(clean_db)

    line = refused_line(invoke("ingest", str(teamb), *ARGS))
    assert line == (
        f"error: ingest refused: src:runbooks:docs was imported from {gitlab.resolve()}, not "
        f"{teamb.resolve()} (only the name is alike), nothing written; pass --source-id "
        "src:runbooks:teamb-docs to import this one as a source of its own, or --source-id "
        "src:runbooks:docs if it is the same source moved here"
    )
    assert contents(clean_db) == before and counts(clean_db) == nodes

    # The first way out: a source of its own, beside GitLab's (its ids are the same, so the
    # takeover rule refuses it; its own ids would import).
    own = invoke("ingest", str(teamb), *ARGS, "--source-id", "src:runbooks:teamb-docs")
    assert own.code == 2 and "is held by source src:runbooks:docs" in own.err, own
    assert contents(clean_db) == before

    # Re-importing the folder it came from is still the no-op it was.
    again = invoke("ingest", str(gitlab), *ARGS)
    assert again.code == 0, again
    assert "created 0 node and 0 relationship records" in again.out, again.out
    assert contents(clean_db) == before


def test_the_same_source_moved_is_said_with_its_source_id(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    old = docs(tmp_path / "old", "Restart gitaly on the node.")
    assert invoke("ingest", str(old), *ARGS).code == 0
    moved = tmp_path / "new" / "docs"
    moved.parent.mkdir()
    shutil.move(str(old), str(moved))

    assert refused_line(invoke("ingest", str(moved), *ARGS)).startswith("error: ingest refused")
    said = invoke("ingest", str(moved), *ARGS, "--source-id", "src:runbooks:docs")
    assert said.code == 0, said
    assert "created 0 node" in said.out, said.out
    # From now on the source is imported from the new place, without the option.
    plain = invoke("ingest", str(moved), *ARGS)
    assert plain.code == 0, plain


def test_a_fresh_clone_of_the_same_repository_is_the_same_source(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")

    def repo(where: Path, remote: str, step: str) -> Path:
        docs(where, step)
        for args in (
            ["init", "-q"],
            ["remote", "add", "origin", remote],
            ["add", "."],
            ["-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "runbooks"],
        ):
            subprocess.run(["git", *args], cwd=where, check=True, capture_output=True)
        return where / "docs"

    ci1 = repo(tmp_path / "ci-1", "https://bot:token@gitlab.example/sre/runbooks.git", "Ok.")
    assert invoke("ingest", str(ci1), *ARGS).code == 0
    # The next CI job clones over ssh into another temporary directory: the same source.
    ci2 = repo(tmp_path / "ci-2", "git@gitlab.example:sre/runbooks.git", "Ok.")
    again = invoke("ingest", str(ci2), *ARGS)
    assert again.code == 0, again
    # The token in a remote URL is never stored.
    stored = clean_db.execute_query("MATCH (o:ImportOrigin) RETURN o.git AS git").records
    assert [r["git"] for r in stored] == ["gitlab.example/sre/runbooks:docs"]
    # Another repository's `docs` folder is not.
    other = repo(tmp_path / "ci-3", "https://gitlab.example/teamb/runbooks.git", "TEAM-B")
    assert refused_line(invoke("ingest", str(other), *ARGS)).startswith("error: ingest refused")


def test_a_source_imported_before_origins_were_recorded_keeps_reimporting(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    gitlab = docs(tmp_path / "gitlab", "Restart gitaly on the node.")
    assert invoke("ingest", str(gitlab), *ARGS).code == 0
    clean_db.execute_query("MATCH (o:ImportOrigin) DELETE o")  # a store of an older version
    again = invoke("ingest", str(gitlab), *ARGS)
    assert again.code == 0, again
    # ... and the re-import recorded where it came from.
    teamb = docs(tmp_path / "teamb", "TEAM-B TEXT")
    assert refused_line(invoke("ingest", str(teamb), *ARGS)).startswith("error: ingest refused")


def origins(driver: neo4j.Driver) -> list[tuple[str, str]]:
    """(source id, path) of every ImportOrigin of tenant gl."""
    rows = driver.execute_query(
        "MATCH (o:ImportOrigin {tenant: 'gl'}) RETURN o.source_id AS s, o.path AS p ORDER BY s, p"
    ).records
    return [(r["s"], r["p"]) for r in rows]


def _meanwhile(monkeypatch: pytest.MonkeyPatch, other: Path) -> list[Any]:
    """The first import's write waits while `other` is imported by another process, from
    start to end: both checked the source's origin before either wrote (a race, replayed
    the same way on every run)."""
    import graph_schema.writer
    import investigator.cli.ingest as ingest_cli

    original = graph_schema.writer.ingest_bundle
    seen: list[Any] = []

    def writing(*args: Any, **kwargs: Any) -> Any:
        if not seen:
            seen.append(invoke_process("ingest", str(other), *ARGS, timeout=300))
        return original(*args, **kwargs)

    monkeypatch.setattr(ingest_cli, "ingest_bundle", writing)
    return seen


def test_two_first_imports_of_one_source_name_at_once_leave_one_origin(
    clean_db: neo4j.Driver,
    cli_env: Any,
    invoke: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gitlab = docs(tmp_path / "gitlab", "Restart gitaly on the node.")
    teamb = docs(tmp_path / "teamb", "TEAM-B TEXT: delete the repository storage.")
    # Another folder of the same name, imported while the first is about to write: refused
    # in one line. Before, both were written (TEAM-B's text became the runbooks' current
    # version, then GitLab's a version after it) and the origin named the last one.
    second = _meanwhile(monkeypatch, teamb)
    first = invoke("ingest", str(gitlab), *ARGS)
    assert first.code == 0, first
    assert refused_line(second[0]) == (
        f"error: ingest refused: src:runbooks:docs was imported from {gitlab.resolve()}, not "
        f"{teamb.resolve()} (only the name is alike), nothing written; pass --source-id "
        "src:runbooks:teamb-docs to import this one as a source of its own, or --source-id "
        "src:runbooks:docs if it is the same source moved here"
    )
    assert origins(clean_db) == [("src:runbooks:docs", str(gitlab.resolve()))]
    stored = contents(clean_db)
    assert stored and all("Restart gitaly" in content for _, content, _ in stored.values())
    versions = clean_db.execute_query(
        "MATCH (n:KG:Document {tenant: 'gl'}) RETURN count(n) AS n"
    ).records[0]["n"]
    assert versions == len(stored)  # one version each: nothing of TEAM-B's was written

    # The same folder imported at once is the same source: both succeed, one origin.
    wipe_gl = "MATCH (n) WHERE n.tenant = 'gl' DETACH DELETE n"
    clean_db.execute_query(wipe_gl)
    second = _meanwhile(monkeypatch, gitlab)
    first = invoke("ingest", str(gitlab), *ARGS)
    assert first.code == 0 and second[0].code == 0, (first, second)
    assert origins(clean_db) == [("src:runbooks:docs", str(gitlab.resolve()))]


def test_an_import_that_checked_before_another_folder_wrote_is_refused_at_its_claim(
    clean_db: neo4j.Driver,
    cli_env: Any,
    invoke: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The other order: this import checked the origin (none yet), then another folder of
    that name was imported whole, before this one claimed it: refused at its claim, in
    the same one line, nothing of it written."""
    import investigator.cli.ingest as ingest_cli
    from graph_schema.importers.import_origin import claim_origin

    gitlab = docs(tmp_path / "gitlab", "Restart gitaly on the node.")
    teamb = docs(tmp_path / "teamb", "TEAM-B TEXT: delete the repository storage.")
    other: list[Any] = []

    def claiming(*args: Any) -> Any:
        other.append(invoke_process("ingest", str(gitlab), *ARGS, timeout=300))
        return claim_origin(*args)

    monkeypatch.setattr(ingest_cli, "claim_origin", claiming)
    line = refused_line(invoke("ingest", str(teamb), *ARGS))
    assert other[0].code == 0, other
    assert line.startswith(
        f"error: ingest refused: src:runbooks:docs was imported from {gitlab.resolve()}, not "
        f"{teamb.resolve()} (only the name is alike), nothing written"
    ), line
    assert origins(clean_db) == [("src:runbooks:docs", str(gitlab.resolve()))]
    assert all("Restart gitaly" in content for _, content, _ in contents(clean_db).values())


def test_two_origins_merged_in_overlapping_transactions_are_one(clean_db: neo4j.Driver) -> None:
    """The schema's constraint: a second import's MERGE of the origin waits for the first's
    commit and finds its node (before, with a range index only, it wrote a second one)."""
    from graph_schema.importers import import_origin
    from graph_schema.schema_ddl import apply_schema

    apply_schema(clean_db, tenants=())
    origin = import_origin.ImportOrigin(path="/srv/gitlab/docs")
    with clean_db.session() as session:
        first = session.begin_transaction()
        first.run(
            import_origin._RECORD, tenant="gl", source_id="src:runbooks:docs",
            path=origin.path, git=None,
        ).consume()  # fmt: skip
        failed: list[BaseException] = []

        def second_import() -> None:
            try:
                import_origin.record_origin(clean_db, "gl", "src:runbooks:docs", origin)
            except BaseException as exc:  # asserted below
                failed.append(exc)

        racing = threading.Thread(target=second_import)
        racing.start()
        # Until the second MERGE waits on the first transaction, or has written without it.
        deadline = time.monotonic() + 120
        while racing.is_alive() and not _blocked(clean_db):
            assert time.monotonic() < deadline, "the second MERGE neither waited nor ended"
            time.sleep(0.05)
        first.commit()
    racing.join(timeout=120)
    assert not racing.is_alive() and failed == []
    assert origins(clean_db) == [("src:runbooks:docs", "/srv/gitlab/docs")]


def _blocked(driver: neo4j.Driver) -> bool:
    """Whether a transaction writing an ImportOrigin waits on a lock."""
    rows = driver.execute_query(
        "SHOW TRANSACTIONS YIELD currentQuery, status "
        "WHERE currentQuery CONTAINS 'MERGE (o:ImportOrigin' RETURN status"
    ).records
    return any(str(r["status"]).startswith("Blocked") for r in rows)


def test_an_import_refused_before_writing_does_not_keep_the_source_name(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    """Its claim of the origin is released: the next folder of that name is not refused as
    if the refused one had been imported."""
    gitlab = docs(tmp_path / "gitlab", "Restart gitaly on the node.")
    assert invoke("ingest", str(gitlab), *ARGS, "--source-id", "src:runbooks:gitlab").code == 0
    # The same files under the default id src:runbooks:docs: their ids are gitlab's.
    teamb = docs(tmp_path / "teamb", "TEAM-B TEXT")
    held = invoke("ingest", str(teamb), *ARGS)
    assert held.code == 2 and "is held by source src:runbooks:gitlab" in held.err, held
    assert origins(clean_db) == [("src:runbooks:gitlab", str(gitlab.resolve()))]


def test_schema_apply_keeps_one_origin_of_a_source_that_has_two(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any
) -> None:
    """A store written before the constraint (its range index, and two origins of a source
    from two first imports at once) gets the constraint and keeps the origin imports read."""
    assert invoke("schema", "apply").code == 0
    clean_db.execute_query("DROP CONSTRAINT import_origin_identity IF EXISTS")
    clean_db.execute_query(
        "CREATE RANGE INDEX import_origin_tenant_source IF NOT EXISTS "
        "FOR (n:ImportOrigin) ON (n.tenant, n.source_id)"
    )
    for path in ("/srv/teamb/docs", "/srv/gitlab/docs"):
        clean_db.execute_query(
            "CREATE (:ImportOrigin {tenant: 'gl', source_id: 'src:runbooks:docs', path: $p})",
            p=path,
        )
    applied = invoke("schema", "apply")
    assert applied.code == 0, applied
    assert "created constraint import_origin_identity" in applied.out, applied.out
    assert "dropped index import_origin_tenant_source" in applied.out, applied.out
    assert origins(clean_db) == [("src:runbooks:docs", "/srv/gitlab/docs")]
    with pytest.raises(neo4j.exceptions.ConstraintError):
        clean_db.execute_query(
            "CREATE (:ImportOrigin {tenant: 'gl', source_id: 'src:runbooks:docs', path: '/x'})"
        )
