"""Cards on pages as a real alert manual writes them (GOV.UK's, e25): a page of two
procedures headed in words, not by the alerts' names; plain words only one page has all of;
a rule whose runbook_url is a Google Doc. On a real Neo4j, through the CLI, with pages of
our own.

Before: the second alert of a two-section page got the first section's steps; "docker
dangling images jenkins", every word of which one page has, got "No runbook"; an alert
whose runbook_url points at a Google Doc got "No runbook" with the URL nowhere, and the
rules import advised "a file 1x7R....md".
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import import_runbooks_and_rules

PUBLISHING = """---
title: Scheduled publishing
---

## Overdue publications in the editor

This alert means that scheduled editions passed their due date unpublished.

Publish them with the `publishing:overdue:publish` task.

## Scheduled publications in the editor not queued

This alert means that the queue holds fewer editions than the database.

Requeue them with the `publishing:scheduled:requeue_all_jobs` task.
"""

DISK = """---
title: Low available disk space
---

Clear the package cache first: `sudo apt-get clean`.

On the build machines, remove dangling docker images left by jenkins jobs:
`docker image prune`.
"""

INODES = """---
title: Low available disk inodes
---

Find the folder with most small files and remove old ones.
"""

DOC = "https://docs.google.com/document/d/1x7R2SgpdeqdExampleId/edit#heading=h.abc"

RULES = f"""groups:
- name: publishing
  rules:
  - alert: EditorScheduledPublicationsOverdue
    expr: editor_overdue_publications > 0
    annotations:
      summary: Overdue publications in the editor
      runbook_url: https://docs.example.org/manual/alerts/scheduled-publishing.html
  - alert: EditorUnenqueuedScheduledPublications
    expr: editor_unenqueued_publications > 0
    annotations:
      summary: Some scheduled editions are missing from the job queue
      runbook_url: https://docs.example.org/manual/alerts/scheduled-publishing.html
  - alert: MetricsDiskSpace
    expr: metrics_disk_free < 0.1
    annotations:
      summary: The metrics store is short of space
      runbook_url: {DOC}
"""

SUBJECT = ("--subject", "govk/user:oncall")


@pytest.fixture
def manual(tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke):  # type: ignore[no-untyped-def]
    return import_runbooks_and_rules(
        invoke,
        tmp_path,
        "govk",
        runbooks={
            "scheduled-publishing.html.md": PUBLISHING,
            "low-available-disk-space.html.md": DISK,
            "low-available-disk-inodes.html.md": INODES,
        },
        rules=RULES,
        folder="alerts",
    )


def _card(invoke, *args: str) -> str:  # type: ignore[no-untyped-def]
    result = invoke("runbook", *args, *SUBJECT)
    assert result.code == 0, result
    return result.out  # type: ignore[no-any-return]


def test_the_second_alert_of_a_page_gets_its_own_section(manual, invoke) -> None:  # type: ignore[no-untyped-def]
    card = _card(invoke, "--alert", "EditorUnenqueuedScheduledPublications")
    assert (
        "Locator   scheduled-publishing.html.md#scheduled-publications-in-the-editor-not-queued"
        in card
    ), card
    assert "Requeue them with the `publishing:scheduled:requeue_all_jobs` task." in card, card
    assert "Publish them" not in card, card
    # The first alert keeps the first section.
    first = _card(invoke, "--alert", "EditorScheduledPublicationsOverdue")
    assert "#overdue-publications-in-the-editor" in first, first
    assert "Publish them with the `publishing:overdue:publish` task." in first, first


def test_the_only_page_with_every_word_is_shown_found_by_its_words(manual, invoke) -> None:  # type: ignore[no-untyped-def]
    result = invoke("runbook", "docker dangling images jenkins", *SUBJECT, "--json")
    assert result.code == 0, result
    answer = json.loads(result.out)
    assert answer["runbook"]["id"] == "runbook:low-available-disk-space", answer["note"]
    card = _card(invoke, "docker dangling images jenkins")
    assert card.startswith("Runbook   Low available disk space"), card
    assert (
        "Note      found by its words alone: runbook:low-available-disk-space is the only "
        "runbook with every word of the query" in card
    ), card


def test_a_google_doc_runbook_url_is_shown_as_an_external_link(manual, invoke) -> None:  # type: ignore[no-untyped-def]
    assert "a file 1x7R2SgpdeqdExampleId.md" not in manual.err, manual.err
    assert (
        "a runbook_url on docs.google.com (a document service, no file of an import) links "
        "no imported runbook" in manual.err
    ), manual.err
    card = _card(invoke, "--alert", "MetricsDiskSpace")
    assert card.startswith("No runbook: no runbook is linked to alert:MetricsDiskSpace"), card
    assert (
        f"Link      {DOC}  (alert:MetricsDiskSpace's runbook_url: no imported runbook; "
        "not fetched, untrusted)" in card
    ), card
    result = invoke("runbook", "--alert", "MetricsDiskSpace", *SUBJECT, "--json")
    assert json.loads(result.out)["external_links"] == [
        {"alert": "alert:MetricsDiskSpace", "url": DOC, "key": "runbook_url", "trust": "untrusted"}
    ]
