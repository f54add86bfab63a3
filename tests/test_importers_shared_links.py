"""A runbook-to-alert link both importers state: a runbook folder by file name, a rule file
by `runbook_url`. On a real Neo4j, through the CLI, as a cron imports one and then the other.

Before: each import wrote its own version of the link over the other's (source_id flipping
between `src:runbooks:...` and `src:prometheus:...`, two versions per cycle, forever) and each
re-import printed a `linked:` line per link. Now the link's holder (the first import that
wrote it) keeps it: the other import's agreeing statement writes nothing, a differing one is
reported as a conflict, and re-imports of unchanged files say no `linked:` line.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import ingest_as, ingest_oncall_principals

RUNBOOKS = {
    "DiskAlmostFull": "# DiskAlmostFull\n\n## Mitigation\n\nDelete old volume snapshots.\n",
    "QueueStuck": "# QueueStuck\n\n## Mitigation\n\nRestart the consumer deployment.\n",
}

RULES = """groups:
  - name: storage
    rules:
      - alert: DiskAlmostFull
        expr: disk_free_ratio < 0.1
        labels: {severity: warning}
        annotations: {summary: Disk almost full., runbook_url: 'https://rb.example.com/DiskAlmostFull'}
      - alert: QueueStuck
        expr: queue_age_seconds > 600
        labels: {severity: critical}
        annotations: {summary: Queue stuck., runbook_url: 'https://rb.example.com/QueueStuck'}
"""

LINKS = [f"APPLIES_TO|runbook:{name}|alert:{name}" for name in sorted(RUNBOOKS)]


@pytest.fixture()
def files(tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke) -> Path:  # type: ignore[no-untyped-def]
    """Tenants lnka and lnkb (user:oncall, label sre), a runbook folder and a rule file."""
    for tenant in ("lnka", "lnkb"):
        ingest_oncall_principals(invoke, tmp_path, tenant)
    folder = tmp_path / "runbooks"
    folder.mkdir()
    for name, text in RUNBOOKS.items():
        (folder / f"{name}.md").write_text(text)
    (tmp_path / "rules.yaml").write_text(RULES)
    return tmp_path


def _ingest(invoke, files: Path, what: str, tenant: str, *flags: str):  # type: ignore[no-untyped-def]
    path, fmt = {
        "runbooks": (files / "runbooks", "markdown-runbooks"),
        "rules": (files / "rules.yaml", "prometheus-rules"),
    }[what]
    result = ingest_as(invoke, path, fmt, tenant, "--json", *flags)
    return json.loads(result.out), result.err


def _link_records(driver: neo4j.Driver, tenant: str) -> dict[str, list[tuple[int, str, bool]]]:
    """Every record of each link key in `tenant`: (version, source_id, current). A record
    has a copy per pair of endpoint records (a runbook edited since has two): it is current
    while one of them is."""
    records, _, _ = driver.execute_query(
        "MATCH ()-[r:APPLIES_TO]->() WHERE r.tenant = $tenant "
        "WITH r.key AS key, r.version AS v, r.source_id AS source, "
        "count(CASE WHEN r.superseded_at IS NULL THEN 1 END) > 0 AS current "
        "RETURN key, v, source, current ORDER BY key, v",
        tenant=tenant,
    )
    out: dict[str, list[tuple[int, str, bool]]] = {}
    for r in records:
        out.setdefault(r["key"], []).append((r["v"], r["source"], r["current"]))
    return out


def test_alternate_reimports_of_unchanged_files_write_nothing_in_either_order(  # type: ignore[no-untyped-def]
    files: Path, clean_db: neo4j.Driver, invoke
) -> None:
    # lnka: rules first, so the runbook folder links by file name and holds the links.
    _ingest(invoke, files, "rules", "lnka")
    _, err = _ingest(invoke, files, "runbooks", "lnka")
    assert err.count("ingest: linked: ") == 2, err
    # lnkb: runbooks first (no alert yet), so the rule file links by runbook_url and holds them.
    _ingest(invoke, files, "runbooks", "lnkb")
    _, err = _ingest(invoke, files, "rules", "lnkb")
    assert err.count("ingest: linked: ") == 2, err
    # The same keys in both tenants, other holders: each tenant's holder is its own.
    for _cycle in range(3):
        for tenant in ("lnka", "lnkb"):
            for what in ("rules", "runbooks"):
                report, err = _ingest(invoke, files, what, tenant)
                assert report["edge_records_created"] == 0, (tenant, what, report)
                assert report["records_superseded"] == 0, (tenant, what, report)
                assert "ingest: linked:" not in err and "conflict" not in err, err
    for tenant, holder in (("lnka", "src:runbooks:runbooks"), ("lnkb", "src:prometheus:rules")):
        assert _link_records(clean_db, tenant) == {key: [(1, holder, True)] for key in LINKS}
        card = invoke("runbook", "--alert", "QueueStuck", "--subject", f"{tenant}/user:oncall")
        assert card.code == 0 and "QueueStuck.md#mitigation" in card.out, card


def test_a_changed_link_gets_its_version_and_a_differing_statement_is_a_conflict(  # type: ignore[no-untyped-def]
    files: Path, clean_db: neo4j.Driver, invoke
) -> None:
    _ingest(invoke, files, "rules", "lnka")
    _ingest(invoke, files, "runbooks", "lnka")  # holds both links (file name)
    # The holder's file changes: its link is restated from the new file, a new version.
    page = files / "runbooks" / "QueueStuck.md"
    page.write_text(page.read_text() + "\nThen page the queue owners.\n")
    report, err = _ingest(invoke, files, "runbooks", "lnka")
    assert report["edge_records_created"] == 1, report
    assert "ingest: changed: QueueStuck.md" in err and "ingest: linked:" not in err, err
    queue = "APPLIES_TO|runbook:QueueStuck|alert:QueueStuck"
    holder = "src:runbooks:runbooks"
    records = _link_records(clean_db, "lnka")
    assert records[queue] == [(1, holder, False), (2, holder, True)]
    # The rule file now says the links are for another audience: reported, nothing of the
    # links written, the holder's records stand (the alerts themselves change, as asked).
    report, err = _ingest(invoke, files, "rules", "lnka", "--acl", "oncall,sre", "--acl-change")
    assert report["edge_records_created"] == 0, report
    conflicts = [line for line in err.splitlines() if line.startswith("ingest: conflict: ")]
    assert conflicts == [
        "ingest: conflict: 2 links (runbook:DiskAlmostFull APPLIES_TO alert:DiskAlmostFull; "
        "runbook:QueueStuck APPLIES_TO alert:QueueStuck) are held by src:runbooks:runbooks "
        "with acl [sre]; src:prometheus:rules states them with acl [oncall, sre]: their "
        "records stand, this import leaves them alone (a link has one holder: change it by "
        "re-importing src:runbooks:runbooks)"
    ], err
    assert _link_records(clean_db, "lnka") == records
