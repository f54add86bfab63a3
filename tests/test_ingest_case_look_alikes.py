"""Runbook ids that differ only in letter case (`Alpha.md` beside `alpha.md`) stay two
records, and the import says so, through the real CLI on a real Neo4j."""

from __future__ import annotations

from pathlib import Path

import neo4j


def test_ids_differing_only_in_letter_case_are_named_at_ingest(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    folder = tmp_path / "case"
    folder.mkdir()
    (folder / "Alpha.md").write_text("# Alpha\n\nStep A.\n")
    (folder / "alpha.md").write_text("# alpha\n\nStep a.\n")
    args = ["--format", "markdown-runbooks", "--tenant", "acme"]
    result = invoke("ingest", str(folder), *args)
    assert result.code == 0, result
    assert (
        "warning: runbook:Alpha (Alpha.md) differs from runbook:alpha (alpha.md) only in "
        "letter case: ids are case sensitive, so they are separate records (a front matter id "
        "names one)"
    ) in result.err.splitlines(), result.err
    # Against the tenant's records too: a later folder's `ALPHA.md`.
    other = tmp_path / "other"
    other.mkdir()
    (other / "ALPHA.md").write_text("# ALPHA\n\nStep.\n")
    later = invoke("ingest", str(other), *args)
    assert later.code == 0, later
    assert (
        "warning: runbook:ALPHA (ALPHA.md) differs from runbook:Alpha (in the tenant), "
        "runbook:alpha (in the tenant) only in letter case"
    ) in later.err, later.err
