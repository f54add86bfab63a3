"""A runbook search's recorded `hits` and row count, as `trace` shows them to a reader who
may not read every hit (docs/security.md rule 6): how many rows the search read counts rows
that reader may not read, so the count is withheld with the rows hash, and the hits it may
not read are one `[withheld]` entry (before: one per hit, their number the count). A reader
holding every label the search read is shown the hits and the count as recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import import_runbook_folder

PAGE = "# {title}\n\nDisk {word} on the node: the disk is full.\n\n## Mitigation\n\n{step}\n"
READERS = """\
tenant: acme
principals:
  - {id: user:sec-oncall, labels: [internal, incident], purposes: [runbook_lookup],
     source_id: src:test-catalog}
  - {id: user:sec-audit, labels: [internal, incident], purposes: [audit],
     source_id: src:test-catalog}
"""


def _search_calls(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        n["properties"]
        for n in doc["nodes"]
        if n["kind"] == "tool_call" and isinstance(n["properties"].get("hits"), list)
    ]


def test_a_search_hit_the_reader_may_not_read_withholds_the_count(  # type: ignore[no-untyped-def]
    driver, cli_env, invoke, tmp_path: Path
) -> None:
    open_pages, secret = tmp_path / "open", tmp_path / "secret"
    open_pages.mkdir()
    secret.mkdir()
    for name in ("DiskFull", "DiskFilling"):
        (open_pages / f"{name}.md").write_text(
            PAGE.format(title=name, word="full", step="Free space."), encoding="utf-8"
        )
    (secret / "DiskFullForensics.md").write_text(
        PAGE.format(title="DiskFullForensics", word="full", step="Image the disk."),
        encoding="utf-8",
    )
    import_runbook_folder(driver, invoke, open_pages)
    flags = ("--format", "markdown-runbooks", "--tenant", "acme", "--acl", "internal,incident")
    assert invoke("ingest", str(secret), *flags).code == 0
    (tmp_path / "readers.yaml").write_text(READERS, encoding="utf-8")
    assert invoke("ingest", str(tmp_path / "readers.yaml")).code == 0

    lookup = invoke("runbook", "disk full", "--subject", "acme/user:sec-oncall", "--json")
    assert lookup.code == 0, lookup
    run = json.loads(lookup.out)["run_id"]

    def trace(who: str, *extra: str) -> Any:
        res = invoke("trace", run, "--subject", who, "--purpose", "audit", *extra)
        assert res.code == 0, res
        return res

    # The reader holding every label: every hit and the count, as recorded.
    full = _search_calls(json.loads(trace("acme/user:sec-audit", "--json").out))
    assert full and all("[withheld]" not in c["hits"] for c in full), full
    searched = [c for c in full if any("forensics" in h.lower() for h in c["hits"])]
    assert searched, full
    for call in searched:
        assert call["row_count"] == len(call["hits"]) >= 2, call
    # user:auditonly lacks `incident`: the forensics page is withheld, and with it the count.
    shown = {
        c["tool_call_id"]: c
        for c in _search_calls(json.loads(trace("acme/user:auditonly", "--json").out))
    }
    tree = trace("acme/user:auditonly").out
    for call in searched:
        seen = shown[call["tool_call_id"]]
        assert seen["row_count"] == "[withheld]" and seen["rows_hash"] == "[withheld]", seen
        readable = [h for h in call["hits"] if "forensics" not in h.lower()]
        assert seen["hits"] == [*readable, "[withheld]"], seen
        (line,) = [x for x in tree.splitlines() if f"tool_call {call['tool_call_id']} " in x]
        assert " rows=[withheld] " in line, line
    assert "forensics" not in tree.lower()
