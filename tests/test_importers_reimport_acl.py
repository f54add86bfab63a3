"""Re-importing runbooks must not change who may read them by accident: without `--acl` a
re-import keeps the records' ACL, an `--acl` that changes it is refused unless
`--acl-change` says so, and a label no principal holds is warned about.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
import yaml

TENANT = {
    "tenant": "acm",
    "sources": [
        {
            "source_id": "src:iam",
            "source_type": "identity",
            "trust": "trusted",
            "allowed_purposes": ["incident_investigation", "runbook_lookup", "audit"],
            "recorded_at": "2026-01-05T09:00:00Z",
        }
    ],
    "principals": [
        {
            "id": "user:oncall",
            "labels": ["oncall"],
            "purposes": ["incident_investigation", "runbook_lookup"],
            "source_id": "src:iam",
            "recorded_at": "2026-01-05T09:00:00Z",
        },
        {
            "id": "user:intern",
            "labels": [],
            "purposes": ["incident_investigation", "runbook_lookup"],
            "source_id": "src:iam",
            "recorded_at": "2026-01-05T09:00:00Z",
        },
    ],
}
RUNBOOKS = {
    "disk-pressure.md": "# Disk pressure\n\n## Steps\n\nFree space on the volume.\n",
    "queue-backlog.md": "# Queue backlog\n\n## Steps\n\nScale the consumers.\n",
    "cert-expiry.md": "# Certificate expiry\n\n## Steps\n\nRenew the certificate.\n",
}


@pytest.fixture()
def corpus(tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke) -> Path:  # type: ignore[no-untyped-def]
    """Tenant acm with user:oncall [oncall] and user:intern [], and a runbook folder."""
    (tmp_path / "tenant.yaml").write_text(yaml.safe_dump(TENANT))
    assert invoke("ingest", str(tmp_path / "tenant.yaml")).code == 0
    folder = tmp_path / "runbooks"
    folder.mkdir()
    for name, text in RUNBOOKS.items():
        (folder / name).write_text(text)
    return folder


def _import(invoke, folder: Path, *args: str):  # type: ignore[no-untyped-def]
    return invoke(
        "ingest", str(folder), "--format", "markdown-runbooks", "--tenant", "acm", *args
    )  # fmt: skip


def _acls(driver: neo4j.Driver) -> dict[str, list[str]]:
    """Every runbook record of acm (current and superseded): id@version -> acl."""
    records, _, _ = driver.execute_query(
        "MATCH (r:KG:Runbook {tenant: 'acm'}) RETURN r.id + '@' + r.version AS v, r.acl AS acl"
    )
    return {r["v"]: r["acl"] for r in records}


def _readable(invoke, subject: str) -> bool:  # type: ignore[no-untyped-def]
    """Whether `subject` of acm finds the disk pressure runbook."""
    result = invoke("runbook", "disk pressure", "--subject", f"acm/{subject}", "--json")
    assert result.code == 0, result
    return "runbook:disk-pressure" in json.dumps(json.loads(result.out))


def test_reimport_without_acl_keeps_who_may_read(  # type: ignore[no-untyped-def]
    corpus: Path, clean_db: neo4j.Driver, invoke
) -> None:
    first = _import(invoke, corpus, "--acl", "oncall")
    assert first.code == 0, first
    again = _import(invoke, corpus)
    assert again.code == 0, again
    assert "superseded 0" in again.out or "unchanged since the last ingest" in again.out
    # A runbook added to the folder gets the folder's ACL too, not none.
    (corpus / "dns-failure.md").write_text("# DNS failure\n\nFlush the resolver cache.\n")
    added = _import(invoke, corpus)
    assert added.code == 0, added
    assert "superseded 0" in added.out
    acls = _acls(clean_db)
    assert len(acls) == 4  # one version each: nothing re-versioned
    assert all(acl == ["oncall"] for acl in acls.values()), acls
    assert _readable(invoke, "user:oncall")
    assert not _readable(invoke, "user:intern")


def test_first_import_without_acl_is_readable_by_all(  # type: ignore[no-untyped-def]
    corpus: Path, clean_db: neo4j.Driver, invoke
) -> None:
    result = _import(invoke, corpus)
    assert result.code == 0, result
    assert "warning" not in result.err
    assert all(acl == [] for acl in _acls(clean_db).values())
    assert _readable(invoke, "user:intern")


def test_acl_typo_is_refused_and_nothing_changes(  # type: ignore[no-untyped-def]
    corpus: Path, clean_db: neo4j.Driver, invoke
) -> None:
    assert _import(invoke, corpus, "--acl", "oncall").code == 0
    before = _acls(clean_db)
    typo = _import(invoke, corpus, "--acl", "oncal")
    assert typo.code == 2, typo
    assert typo.out == ""
    assert typo.err.strip() == (
        "error: ingest refused: 3 records of src:runbooks:runbooks would change acl [oncall] -> "
        "[oncal]; pass --acl-change to change who may read them"
    )
    assert _acls(clean_db) == before
    assert _readable(invoke, "user:oncall")
    # Making them public is a change too.
    public = _import(invoke, corpus, "--acl", "")
    assert public.code == 2, public
    assert "[oncall] -> []" in public.err
    assert not _readable(invoke, "user:intern")


def test_acl_change_changes_it_deliberately(  # type: ignore[no-untyped-def]
    corpus: Path, clean_db: neo4j.Driver, invoke
) -> None:
    assert _import(invoke, corpus, "--acl", "oncall").code == 0
    opened = _import(invoke, corpus, "--acl", "", "--acl-change")
    assert opened.code == 0, opened
    assert "superseded 3" in opened.out
    assert _readable(invoke, "user:intern")
    # The ACL now kept by a re-import without --acl is the new one.
    again = _import(invoke, corpus)
    assert again.code == 0, again
    assert _readable(invoke, "user:intern")
    lone = _import(invoke, corpus, "--acl-change")
    assert lone.code == 2, lone
    assert "--acl-change needs --acl" in lone.err


def test_label_nobody_holds_is_warned(  # type: ignore[no-untyped-def]
    corpus: Path, clean_db: neo4j.Driver, invoke
) -> None:
    result = _import(invoke, corpus, "--acl", "oncal")
    assert result.code == 0, result
    warnings = [line for line in result.err.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: no principal of tenant acm holds label 'oncal': 3 records with it can be "
        "read by no one until one does"
    ]
    assert not _readable(invoke, "user:oncall")
    held = _import(invoke, corpus, "--acl", "oncall", "--acl-change")
    assert held.code == 0, held
    assert "warning" not in held.err
    assert _readable(invoke, "user:oncall")


def _current_acl(driver: neo4j.Driver, record_id: str) -> list[str]:
    """The ACL of the current record of `record_id` in acm."""
    records, _, _ = driver.execute_query(
        "MATCH (r:KG {tenant: 'acm', id: $id}) WHERE r.superseded_at IS NULL RETURN r.acl AS acl",
        id=record_id,
    )
    assert len(records) == 1, records
    return list(records[0]["acl"])


def _replace_files(folder: Path, files: dict[str, str]) -> None:
    """The folder holds `files` and nothing else (the old files removed or renamed)."""
    for old in folder.glob("*.md"):
        old.unlink()
    for name, text in files.items():
        (folder / name).write_text(text)


def test_new_files_of_a_restricted_source_keep_its_acl(  # type: ignore[no-untyped-def]
    corpus: Path, clean_db: neo4j.Driver, invoke
) -> None:
    assert _import(invoke, corpus, "--acl", "oncall", "--source-id", "src:rb").code == 0
    # Every file renamed: no id the re-import writes has a record yet (same bytes: the new id
    # supersedes the old).
    _replace_files(corpus, {"disk-pressure-v2.md": RUNBOOKS["disk-pressure.md"]})
    renamed = _import(invoke, corpus, "--source-id", "src:rb")
    assert renamed.code == 0, renamed
    assert "ingest: renamed: disk-pressure.md -> disk-pressure-v2.md" in renamed.err
    assert _current_acl(clean_db, "runbook:disk-pressure-v2") == ["oncall"]
    found = invoke("runbook", "disk pressure", "--subject", "acm/user:intern", "--json")
    assert found.code == 0, found
    assert "runbook:disk-pressure-v2" not in found.out


def test_new_files_of_a_retracted_source_keep_its_acl(  # type: ignore[no-untyped-def]
    corpus: Path, clean_db: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    assert _import(invoke, corpus, "--acl", "oncall", "--source-id", "src:rb").code == 0
    retractions = [
        {"id": f"runbook:{Path(name).stem}", "reason": "rewritten", "at": "2026-07-24T09:00:00Z"}
        for name in RUNBOOKS
    ]
    (tmp_path / "retract.yaml").write_text(
        yaml.safe_dump({"tenant": "acm", "retractions": retractions})
    )
    # The operator retracts an import's records by naming its source (import_sources.py).
    retracted = invoke("ingest", str(tmp_path / "retract.yaml"), "--source-id", "src:rb")
    assert retracted.code == 0, retracted
    # Only tombstones are current now: they carry the labels of what they retracted.
    _replace_files(corpus, {"dns-failure.md": "# DNS failure\n\nFlush the resolver cache.\n"})
    added = _import(invoke, corpus, "--source-id", "src:rb")
    assert added.code == 0, added
    assert "ingest: new: dns-failure.md" in added.err  # a re-import, not a first one
    assert _current_acl(clean_db, "runbook:dns-failure") == ["oncall"]


def test_new_files_of_a_source_with_mixed_acls_are_refused(  # type: ignore[no-untyped-def]
    corpus: Path, clean_db: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    assert _import(invoke, corpus, "--acl", "oncall", "--source-id", "src:rb").code == 0
    # One runbook of the source made readable by all, the others still [oncall].
    part = tmp_path / "part"
    part.mkdir()
    (part / "cert-expiry.md").write_text(RUNBOOKS["cert-expiry.md"])
    opened = _import(invoke, part, "--acl", "", "--acl-change", "--source-id", "src:rb")
    assert opened.code == 0, opened
    before = _acls(clean_db)
    _replace_files(corpus, {"dns-failure.md": "# DNS failure\n\nFlush the resolver cache.\n"})
    mixed = _import(invoke, corpus, "--source-id", "src:rb")
    assert mixed.code == 2, mixed
    assert mixed.out == ""
    assert mixed.err.strip().splitlines()[-1] == (
        "error: ingest refused: the records of src:rb carry different acls ([], [oncall]) and "
        "1 record is new; pass --acl to say who may read them"
    )
    assert _acls(clean_db) == before
    # Saying it imports the file as told.
    told = _import(invoke, corpus, "--source-id", "src:rb", "--acl", "oncall")
    assert told.code == 0, told
    assert _current_acl(clean_db, "runbook:dns-failure") == ["oncall"]
