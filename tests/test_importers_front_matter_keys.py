"""Markdown front matter: a key the ingest sets (`tenant`, `trusted`, `status` ...) is
warned about, once per key, naming the file and what sets it instead; and a value stored as
text keeps the text written (`version: 1.10` is "1.10", not YAML's float 1.1).
"""

from __future__ import annotations

from pathlib import Path

import neo4j

FRONT = """---
title: Vault sealed
version: 1.10
error_code: 0404
trusted: true
tenant: globex
recorded_at: 2026-01-01T00:00:00Z
status: retracted
source_id: src:elsewhere
owner_note: ask the security team
---
# Vault sealed

Unseal it with the key shares.
"""


def _runbooks(driver: neo4j.Driver) -> list[dict[str, object]]:
    records, _, _ = driver.execute_query(
        "MATCH (r:KG:Runbook) WHERE r.superseded_at IS NULL "
        "RETURN r.id AS id, r.tenant AS tenant, r.trust AS trust, r.status AS status, "
        "r.source_id AS source, r.runbook_version AS version ORDER BY id"
    )
    return [dict(r) for r in records]


def test_keys_the_ingest_sets_are_warned_about_once_each(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    folder = tmp_path / "rb"
    folder.mkdir()
    (folder / "vault.md").write_text(FRONT)
    (folder / "vault-sealed.md").write_text(FRONT.replace("title: Vault", "name: v2\ntitle: V"))
    result = invoke("ingest", str(folder), "--format", "markdown-runbooks", "--tenant", "acm")
    assert result.code == 0, result
    warnings = [line for line in result.err.splitlines() if line.startswith("warning:")]
    first = folder / "vault-sealed.md"
    assert warnings == [
        f"warning: {first} (and 1 more file): front matter 'recorded_at' not taken: "
        "the ingest records it at its own time",
        f"warning: {first} (and 1 more file): front matter 'source_id' not taken: "
        "--source-id sets the source",
        f"warning: {first} (and 1 more file): front matter 'status' not taken: "
        "a retraction in a bundle retracts a record",
        f"warning: {first} (and 1 more file): front matter 'tenant' not taken: "
        "--tenant sets the tenant",
        f"warning: {first} (and 1 more file): front matter 'trusted' not taken: "
        "--trusted sets trust",
    ]
    # Not taken indeed: the command's tenant, trust and source; an active record.
    assert {(r["tenant"], r["trust"], r["status"], r["source"]) for r in _runbooks(clean_db)} == {
        ("acm", "untrusted", "active", "src:runbooks:rb")
    }


def test_numbers_in_text_fields_keep_the_text_written(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    folder = tmp_path / "rb"
    folder.mkdir()
    (folder / "vault.md").write_text(FRONT)
    result = invoke("ingest", str(folder), "--format", "markdown-runbooks", "--tenant", "acm")
    assert result.code == 0, result
    [runbook] = _runbooks(clean_db)
    assert runbook["id"] == "runbook:vault@v1.10"
    assert runbook["version"] == "1.10"
    # A reference keeps its leading zero too: the error code as written, not the number 404.
    assert "error_code '0404' not linked" in result.err
