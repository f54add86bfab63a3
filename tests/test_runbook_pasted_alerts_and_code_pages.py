"""What a paged on-call engineer pastes, on pages of one file per health code (Ceph's split
layout): an alert's notification whose alert no runbook is linked to, a code two pages are
headed by, a runbook named like another in letter case only, the hint of a rule linking its
page by `annotations.documentation`, and a page an older import anchored differently. On a
real Neo4j, through the CLI, with small fixtures written here.

Before: the pasted "[FIRING:1] CephOSDDown ... An OSD has been marked down" answered "No
runbook" while its words alone found OSD_DOWN; `runbook POOL_FULL` showed POOL_FULL_2.md, and
`--error-code POOL_FULL` said its heading was "the only tie" beside the other page under Also;
free text "alpha" showed runbook:Alpha with no `Also` line for runbook:alpha; the ingest hint
of a `documentation` link told to fix `runbook_url`; re-importing an unchanged page whose
headings have `_` wrote a new version (its anchors respelled).
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
from conftest import import_runbooks_and_rules, ingest_as

from graph_schema.hashing import content_hash

SUBJECT = "cephs/user:oncall"

PAGES = {
    "health/OSD_DOWN.md": (
        "# OSD_DOWN\n\nOne or more OSDs are marked down. The ceph-osd daemon may have been "
        "stopped.\n\nRestart the daemon with `systemctl restart ceph-osd@ID`.\n"
    ),
    "health/POOL_FULL.md": (
        "# POOL_FULL\n\nOne or more pools has reached its quota.\n\n"
        "Raise the quota with `ceph osd pool set-quota POOL max_bytes 0`.\n"
    ),
    "health/POOL_FULL_2.md": (
        "# POOL_FULL\n\nOne or more pools is full: the cluster reached its full ratio.\n\n"
        "Add storage, then check `ceph df` for POOL_FULL again.\n"
    ),
    "relays/Alpha.md": "# Alpha\n\nRestart the alpha relay with `relayctl restart alpha`.\n",
    "relays/alpha.md": "# alpha\n\nDrain the alpha queue with `queuectl drain alpha`.\n",
}

# The rule links its page as Ceph's mixin does: `documentation`, at a page not imported.
RULES = """groups:
- name: osd
  rules:
  - alert: CephOSDDown
    expr: ceph_osd_up == 0
    annotations:
      summary: An OSD has been marked down
      documentation: https://docs.example.org/rados/operations/health-checks#osd-down
"""


def _import(invoke, tmp_path: Path):  # type: ignore[no-untyped-def]
    return import_runbooks_and_rules(invoke, tmp_path, "cephs", runbooks=PAGES, rules=RULES)


def _card(invoke, *args: str) -> tuple[str, dict]:  # type: ignore[no-untyped-def,type-arg]
    """The card as printed and as --json."""
    shown = invoke("runbook", *args, "--subject", SUBJECT)
    assert shown.code == 0, shown
    result = invoke("runbook", *args, "--subject", SUBJECT, "--json")
    assert result.code == 0, result
    return shown.out, json.loads(result.out)


def test_a_pasted_notification_whose_alert_has_no_runbook_is_answered_from_its_words(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    _import(invoke, tmp_path)
    card, answer = _card(invoke, "[FIRING:1] CephOSDDown (ceph-prod) An OSD has been marked down")
    assert card.startswith("Runbook   OSD_DOWN  [runbook:OSD_DOWN"), card
    assert answer["runbook"]["id"] == "runbook:OSD_DOWN"
    # Said first: the alert has no runbook linked, and the runbook shown is the words'.
    assert answer["note"].startswith("no runbook is linked to alert:CephOSDDown"), answer["note"]
    assert "found by the text's words instead" in answer["note"], answer["note"]
    # The link the rule has is named by the key it came from.
    assert "its annotations.documentation names the page 'health-checks'" in answer["note"]
    assert "runbook_url" not in answer["note"], answer["note"]
    # The same words without the alert's name find the same runbook.
    _, plain = _card(invoke, "An OSD has been marked down")
    assert plain["runbook"]["id"] == "runbook:OSD_DOWN"
    replay = invoke("replay", answer["run_id"], "--subject", SUBJECT)
    assert replay.code == 0, replay
    assert "verified:        true" in replay.out, replay.out


def test_the_page_named_exactly_after_a_code_wins_over_one_headed_alike(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    _import(invoke, tmp_path)
    for args in (("POOL_FULL",), ("--error-code", "POOL_FULL")):
        card, answer = _card(invoke, *args)
        assert answer["runbook"]["id"] == "runbook:POOL_FULL", (args, answer["note"])
        assert [a["id"] for a in answer["alternatives"]] == ["runbook:POOL_FULL_2"], args
        assert "Raise the quota" in card, card
        # The note names the other page headed alike; no "only tie" beside it.
        assert "only tie" not in answer["note"], answer["note"]
        assert (
            "is named exactly after it and is shown; runbook:POOL_FULL_2 has "
            "one headed alike (under Also)"
        ) in answer["note"], answer["note"]
    # A code one page only is headed by keeps its note.
    _, single = _card(invoke, "--error-code", "OSD_DOWN")
    assert single["runbook"]["id"] == "runbook:OSD_DOWN"
    assert "that heading is the only tie" in single["note"], single["note"]


def test_a_runbook_named_alike_in_letter_case_only_is_listed_under_also(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    _import(invoke, tmp_path)
    card, answer = _card(invoke, "alpha")
    assert answer["runbook"]["id"] == "runbook:Alpha"
    assert "Also      alpha  [runbook:alpha]" in card, card
    # Words that fit one of them better: that one is shown, the other is still under Also.
    card, answer = _card(invoke, "drain the alpha queue")
    assert answer["runbook"]["id"] == "runbook:alpha", answer["note"]
    assert "Also      Alpha  [runbook:Alpha]" in card, card


def test_the_unresolved_link_hint_names_the_annotation_the_link_came_from(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    result = _import(invoke, tmp_path)
    hint = next(line for line in result.err.splitlines() if line.startswith("ingest: hint:"))
    assert hint.startswith(
        "ingest: hint: an annotations.documentation links the runbook whose id, name or file path"
    ), hint
    assert "or make annotations.documentation end with the page's imported path" in hint, hint
    assert "runbook_url" not in hint, hint


DISK = (
    "# Disk health\n\n## OSD_DOWN\n\nRestart the daemon with `systemctl restart ceph-osd@ID`."
    "\n\n## check_disk_space\n\nFree space with `journalctl --vacuum-size=1G`.\n"
)

# The anchors an import before 2026-12-05 wrote for DISK (`_` dropped).
LEGACY = ["disk-health.md#disk-health", "disk-health.md#osddown", "disk-health.md#checkdiskspace"]


def test_a_page_anchored_by_an_older_import_is_unchanged_on_reimport(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    import_runbooks_and_rules(invoke, tmp_path, "cephs", runbooks={"disk-health.md": DISK})
    # The record as an import before 2026-12-05 wrote it: the same text, the old anchors.
    records, _, _ = clean_db.execute_query(
        "MATCH (r:Runbook {tenant: 'cephs', id: 'runbook:disk-health'}) RETURN r"
    )
    props = {k: getattr(v, "to_native", lambda v=v: v)() for k, v in dict(records[0]["r"]).items()}
    assert props["section_locators"] != LEGACY  # the import of now keeps `_`
    props["section_locators"] = LEGACY
    clean_db.execute_query(
        "MATCH (r:Runbook {tenant: 'cephs', id: 'runbook:disk-health'}) "
        "SET r.section_locators = $locators, r.content_hash = $hash",
        locators=LEGACY,
        hash=content_hash(props),
    )
    again = ingest_as(invoke, tmp_path / "runbooks", "markdown-runbooks", "cephs", "--full")
    assert "created 0 node" in again.out, again.out
    assert "unchanged 1 nodes" in again.out, again.out
    versions, _, _ = clean_db.execute_query(
        "MATCH (r:Runbook {tenant: 'cephs', id: 'runbook:disk-health'}) RETURN count(r) AS n"
    )
    assert versions[0]["n"] == 1
    # The section is still found by its heading, and shown at its recorded anchor.
    card, answer = _card(invoke, "--error-code", "OSD_DOWN")
    assert answer["runbook"]["id"] == "runbook:disk-health"
    assert "Locator   disk-health.md#osddown" in card, card
    # An edit is a new version, with the anchors of now.
    (tmp_path / "runbooks" / "disk-health.md").write_text(DISK + "\n## new_check\n\nText.\n")
    edited = ingest_as(invoke, tmp_path / "runbooks", "markdown-runbooks", "cephs")
    assert "created 1 node" in edited.out, edited.out
    card, _ = _card(invoke, "--error-code", "OSD_DOWN")
    assert "Locator   disk-health.md#osd_down" in card, card
