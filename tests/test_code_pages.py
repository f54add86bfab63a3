"""Pages of one section per health code (Ceph's health-checks page: `### OSD_DOWN`,
`### PG_DEGRADED`, ...), through the CLI on a real Neo4j, with the user's words.

Before (e23-ceph findings 1-5): "osd down", "12 pgs degraded" and a pasted `ceph health`
line showed another section's text as the steps (an emphasised flag name, `*recovery_toofull*`,
was read as a "How to recover" label); `OSD_DOWN` was no id, so "OSD_DOWN on ceph-prod" with
--service found no runbook; a Sphinx anchor (`#osd-down`) selected no section, and `#id2`
was never reported; `investigate` cited that wrong section; a single `.rst` file was stored
as a garbled Markdown runbook; `--alert CephPGsDegraded` suggested CephPGsDamaged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    import_runbooks_and_rules,
    ingest_as,
    ingest_oncall_principals,
    ingest_text,
    investigate_json,
)

TENANT = "storage"
SUBJECT = f"{TENANT}/user:oncall"

# A page written for these tests in the shape of a docs site's health-checks page.
PAGE = """# Health checks

Each health check has a unique identifier, listed below by daemon.

## OSDs

### OSD_DOWN

One or more OSDs are marked down.

Check that the daemon runs with `systemctl status ceph-osd@ID`.

### OSD_<crush type>_DOWN

All OSDs below one CRUSH bucket are marked down; check that host first.

### PG_DEGRADED

Some placement groups have fewer copies than wanted.

List them with `ceph health detail`.

### POOL_FULL

A pool has reached its quota: raise it with `ceph osd pool set-quota`.

### PG_RECOVERY_FULL

One or more PGs has the
*recovery_toofull* flag set, meaning that the
cluster cannot recover data because an OSD is full.

### POOL_FULL

One or more pools is full and blocks writes: free space or add OSDs.
"""

RULES = """groups:
  - name: osd
    rules:
      - alert: CephOSDDown
        expr: ceph_health_detail{name="OSD_DOWN"} == 1
        annotations:
          summary: An OSD has been marked down
          runbook_url: https://docs.example.org/rados/health-checks#osd-down
      - alert: CephDeviceFailing
        expr: ceph_health_detail{name="DEVICE_HEALTH"} == 1
        annotations:
          summary: A device is failing
          runbook_url: https://docs.example.org/rados/health-checks#id2
      - alert: CephPGsDamaged
        expr: ceph_health_detail{name="PG_DAMAGED"} == 1
        annotations:
          summary: Scrub found inconsistent placement groups
"""

CATALOG = """tenant: {tenant}
sources:
  - {{source_id: src:catalog, source_type: service_catalog, owner_team: team:storage, classification: internal, trust: trusted, authority: 80, allowed_purposes: [incident_investigation, runbook_lookup, audit], recorded_at: "2026-01-05T09:00:00Z"}}
nodes:
  - {{id: svc:ceph-prod, label: Service, name: ceph-prod, acl: [sre], source_id: src:catalog, source_version: c1, locator: "catalog#svc", valid_from: "2025-01-01T00:00:00Z", recorded_at: "2026-01-05T09:00:00Z"}}
  - {{id: team:storage, label: Team, name: Storage, acl: [sre], source_id: src:catalog, source_version: c1, locator: "catalog#team", valid_from: "2025-01-01T00:00:00Z", recorded_at: "2026-01-05T09:00:00Z"}}
edges:
  - {{type: OWNS, from: team:storage, to: svc:ceph-prod, acl: [sre], source_id: src:catalog, source_version: c1, locator: "catalog#owns", valid_from: "2025-01-01T00:00:00Z", recorded_at: "2026-01-05T09:00:00Z"}}
"""  # noqa: E501


@pytest.fixture()
def page(tmp_path: Path, clean_db: object, cli_env: object, invoke) -> str:  # type: ignore[no-untyped-def]
    """The page of health codes and two rules linking it, in an otherwise empty tenant; the
    rules import's output."""
    result = import_runbooks_and_rules(
        invoke, tmp_path, TENANT, runbooks={"health-checks.md": PAGE}, rules=RULES
    )
    return result.out + result.err


def _card(invoke, *args: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("runbook", *args, "--subject", SUBJECT, "--json")
    assert result.code == 0, result
    return json.loads(result.out)["runbook"]  # type: ignore[no-any-return]


def test_free_text_shows_the_code_section_it_names_never_another_sections_text(  # type: ignore[no-untyped-def]
    page: str, invoke
) -> None:
    for words in ("osd down", "1 osds down", "An OSD has been marked down"):
        card = _card(invoke, words)
        assert card["steps_locator"] == "health-checks.md#osd_down", (words, card)
        assert card["steps"][0] == "One or more OSDs are marked down.", (words, card)
    card = _card(invoke, "12 pgs degraded")
    assert card["steps_locator"] == "health-checks.md#pg_degraded", card
    # Words that fit two sections alike: the page's opening, both named first.
    both = "osd down and pg degraded"
    card = _card(invoke, both)
    assert card["steps"] == ["Each health check has a unique identifier, listed below by daemon."]
    assert "closest sections: OSD_DOWN, PG_DEGRADED" in card["steps_note"], card
    # An emphasised flag name is no "How to recover" label.
    for words in ("osd down", both, "osd crush bucket"):
        assert "recovery_toofull" not in " ".join(_card(invoke, words)["steps"]), words


def test_a_sphinx_anchor_selects_its_section_and_one_naming_none_is_said_at_the_link(  # type: ignore[no-untyped-def]
    page: str, invoke
) -> None:
    assert (
        "anchor: alert:CephDeviceFailing: runbook_url anchor '#id2' names no section of "
        "health-checks.md"
    ) in page
    assert "'#osd-down'" not in page  # `-` and `_` alike: it names OSD_DOWN
    card = _card(invoke, "--alert", "CephOSDDown")
    # The anchor GitHub makes of `OSD_DOWN`.
    assert card["steps_locator"] == "health-checks.md#osd_down", card
    card = _card(invoke, "--alert", "CephDeviceFailing")
    assert card["steps"] == ["Each health check has a unique identifier, listed below by daemon."]


def test_a_code_heading_two_sections_shows_the_first_and_says_where_the_other_is(  # type: ignore[no-untyped-def]
    page: str, invoke
) -> None:
    card = _card(invoke, "POOL_FULL")
    assert card["steps_locator"] == "health-checks.md#pool_full", card
    assert (
        "the runbook has 2 sections headed POOL_FULL: shown is the one at "
        "health-checks.md#pool_full; read the other at health-checks.md#pool_full-1"
    ) in card["steps_note"], card


def test_a_did_you_mean_never_crosses_a_word_spelled_otherwise(  # type: ignore[no-untyped-def]
    page: str, invoke
) -> None:
    # Degraded (fewer copies) is not Damaged (scrub errors, `ceph pg repair`): no suggestion.
    result = invoke("runbook", "--alert", "CephPGsDegraded", "--subject", SUBJECT)
    assert "did you mean" not in result.out + result.err, result
    # A slip inside the word still is one.
    result = invoke("runbook", "--alert", "CephPGsDamagd", "--subject", SUBJECT)
    assert "did you mean alert:CephPGsDamaged" in result.out + result.err, result


def _ask_about_ceph_prod(invoke, tmp_path: Path, question: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """The tenant's catalog (svc:ceph-prod, owned by team:storage) ingested, then `investigate
    QUESTION --service svc:ceph-prod --json` as the on-call: the report."""
    ingest_text(invoke, tmp_path / "catalog.yaml", CATALOG.format(tenant=TENANT))
    return investigate_json(invoke, question, "--service", "svc:ceph-prod", "--subject", SUBJECT)


def test_an_alert_named_in_a_question_cites_the_section_its_anchor_names(  # type: ignore[no-untyped-def]
    page: str, tmp_path: Path, invoke
) -> None:
    doc = _ask_about_ceph_prod(
        invoke, tmp_path, "CephOSDDown is firing on ceph-prod. What do I do?"
    )
    [claim] = [c for c in doc["claims"] if c["statement"].startswith("Runbook ")]
    assert claim["statement"].endswith("[health-checks.md#osd_down]"), claim["statement"]


def test_an_upper_snake_health_code_is_an_id_the_question_names(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: object, cli_env: object, invoke
) -> None:
    import_runbooks_and_rules(
        invoke,
        tmp_path,
        TENANT,
        runbooks={
            "OSD_DOWN.md": "# OSD_DOWN\n\nOne or more OSDs are marked down.\n",
            "OSDMAP_FLAGS.md": "# OSDMAP_FLAGS\n\nA cluster flag is set on the OSD map.\n",
        },
    )
    question = "OSD_DOWN on ceph-prod: which runbook applies?"
    doc = _ask_about_ceph_prod(invoke, tmp_path, question)
    assert doc["status"] == "complete", doc["status"]
    [claim] = [c for c in doc["claims"] if c["statement"].startswith("Runbook ")]
    assert "(runbook:OSD_DOWN, " in claim["statement"], claim
    card = invoke("runbook", question, "--subject", SUBJECT, "--json")
    assert json.loads(card.out)["runbook"]["id"] == "runbook:OSD_DOWN", card


def test_a_single_file_that_is_not_markdown_is_refused_with_how_to_convert_it(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: object, cli_env: object, invoke
) -> None:
    ingest_oncall_principals(invoke, tmp_path, TENANT)
    page = tmp_path / "health-checks.rst"
    page.write_text("Health checks\n=============\n\nOSD_DOWN\n________\n\nMarked down.\n")
    rules = tmp_path / "rules.yml"
    rules.write_text(RULES)
    for path, hint in ((page, "pandoc -f rst -t gfm"), (rules, "--format prometheus-rules")):
        result = invoke(
            "ingest", str(path), "--format", "markdown-runbooks", "--tenant", TENANT,
            "--acl", "sre",
        )  # fmt: skip
        assert result.code == 2, result
        assert f"{path.name} is not Markdown (.md)" in result.err and hint in result.err, result
    ingest_as(invoke, tmp_path / "rules.yml", "prometheus-rules", TENANT)  # nothing was written
    card = invoke("runbook", "OSD_DOWN", "--subject", SUBJECT, "--json")
    assert "runbook:health-checks" not in card.out
