"""`runbook --alert` takes the id the rules import printed, with or without its `alert:`.

Before: of an alert defined twice (`alert:DiskAlmostFull@critical` and `@warning`), `--alert
alert:DiskAlmostFull@critical` answered while `--alert DiskAlmostFull@critical` was "no alert
matching". On a real Neo4j, through the CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
from conftest import import_runbooks_and_rules

RULES = """groups:
  - name: storage
    rules:
      - alert: DiskAlmostFull
        expr: disk_free_ratio < 0.1
        labels: {severity: warning}
        annotations: {summary: Disk almost full., runbook_url: 'https://rb.example.com/DiskAlmostFull'}
      - alert: DiskAlmostFull
        expr: disk_free_ratio < 0.02
        labels: {severity: critical}
        annotations: {summary: Disk full now., runbook_url: 'https://rb.example.com/DiskAlmostFull'}
"""


def test_alert_id_with_or_without_its_prefix(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    runbooks = {"DiskAlmostFull.md": "# DiskAlmostFull\n\n## Mitigation\n\nPrune.\n"}
    done = import_runbooks_and_rules(invoke, tmp_path, "lnka", runbooks=runbooks, rules=RULES)
    assert "alert:DiskAlmostFull@critical" in done.err  # the id the ingest printed

    def card(value: str) -> dict:  # type: ignore[type-arg]
        result = invoke("runbook", "--alert", value, "--subject", "lnka/user:oncall", "--json")
        assert result.code == 0, result
        return json.loads(result.out)  # type: ignore[no-any-return]

    printed, typed = card("alert:DiskAlmostFull@critical"), card("DiskAlmostFull@critical")
    assert typed["runbook"] is not None, typed["note"]
    assert typed["resolved"] == printed["resolved"] == ["alert:DiskAlmostFull@critical"]
    assert typed["runbook"]["id"] == printed["runbook"]["id"] == "runbook:DiskAlmostFull"
    # A suffix no rule has is still no alert, with the name suggested.
    wrong = card("DiskAlmostFull@page")
    assert wrong["runbook"] is None and "did you mean DiskAlmostFull" in wrong["note"], wrong
