"""A rule file whose rules link their runbook by `annotations.documentation` (the Ceph mixin's
key), not `runbook_url`. On a real Neo4j, through the CLI.

Before: the import linked nothing and said nothing ("created N node and 0 relationship
records"), and `runbook --alert` said "no runbook is linked" of an alert whose rule names its
page.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
from conftest import import_runbooks_and_rules

PAGE = """# Store health checks

Each health code of the store has a section here.

## STORE_DISK_DOWN

One or more store disks are marked down.

- Check the disk's host is reachable, then restart the disk daemon on it.

## STORE_POOL_FULL

A pool has reached its quota.

- Raise the pool's quota or delete old snapshots.
"""

DOCS = "https://docs.example.com/store/operations/health-checks#{anchor}"

RULES = f"""groups:
  - name: store
    rules:
      - alert: StoreDiskDown
        expr: store_health_detail{{name="STORE_DISK_DOWN"}} == 1
        labels: {{severity: warning}}
        annotations:
          summary: A store disk has been marked down.
          documentation: '{DOCS.format(anchor="store-disk-down")}'
      - alert: StorePoolFull
        expr: store_health_detail{{name="STORE_POOL_FULL"}} == 1
        labels: {{severity: critical}}
        annotations:
          summary: A pool is full.
          documentation: 'https://docs.example.com/store/operations/pools#full'
      - alert: StoreSlowOps
        expr: store_slow_ops > 0
        labels: {{severity: warning}}
        annotations:
          summary: Slow operations.
          documentation: See the slow ops page of the store docs.
"""


def test_documentation_annotation_links_the_runbook_and_says_so(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    rules = import_runbooks_and_rules(
        invoke, tmp_path, "storeco", runbooks={"health-checks.md": PAGE}, rules=RULES
    )
    assert (
        "ingest: linked: runbook:health-checks APPLIES_TO alert:StoreDiskDown "
        "(annotations.documentation)"
    ) in rules.err, rules.err
    assert (
        "alert:StorePoolFull: annotations.documentation "
        "'https://docs.example.com/store/operations/pools#full' not linked"
    ) in rules.err, rules.err
    assert "StoreSlowOps" not in rules.err  # prose is no link: nothing to resolve
    assert " node and 1 relationship records" in rules.out, rules.out

    card = invoke(
        "runbook", "--alert", "StoreDiskDown", "--subject", "storeco/user:oncall", "--json"
    )
    assert card.code == 0, card
    runbook = json.loads(card.out)["runbook"]
    assert runbook["id"].startswith("runbook:health-checks"), runbook
    assert runbook["applies_via"] == "alert:StoreDiskDown", runbook
    # The link's #fragment picks the section, as a runbook_url's does.
    assert runbook["steps_locator"] == "health-checks.md#store_disk_down", runbook


def test_a_pasted_notification_finds_the_section_its_documentation_links(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    import_runbooks_and_rules(
        invoke, tmp_path, "storeco", runbooks={"health-checks.md": PAGE}, rules=RULES
    )
    pasted = "[FIRING:1] StoreDiskDown (store-prod) A store disk has been marked down"
    card = invoke("runbook", pasted, "--subject", "storeco/user:oncall", "--json")
    assert card.code == 0, card
    runbook = json.loads(card.out)["runbook"]
    assert runbook is not None, card.out  # before: "no runbook is linked to alert:StoreDiskDown"
    assert runbook["steps_locator"] == "health-checks.md#store_disk_down", runbook
