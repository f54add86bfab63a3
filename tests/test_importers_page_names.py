"""Markdown runbooks of a static site (GOV.UK's developer manual, Middleman): a page file
`alerts/X.html.md` is the runbook `X`, found by its alert's name; a `.html.md.erb` template is
imported as Markdown with its template tags as written, and a page that is not Markdown is
named as skipped; front matter `owner_slack` is warned about and shown as the page's contact,
never as an owner of record. On a real Neo4j.

Before: ids and names kept `.html` (`runbook --alert X` found nothing), `.md.erb` pages were
dropped without a word, and `owner_slack` was neither read nor warned about.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import ingest_as

CATALOG = Path(__file__).parent / "fixtures" / "runbooks" / "catalogs" / "acme.yaml"

PAGE = """---
owner_slack: "#queue-team"
title: Queue backlog growing
section: Alerts
layout: manual_layout
---

The queue grows faster than workers drain it.

## Drain it

Scale the workers up.
"""

TEMPLATE = """---
owner_slack: "#publishing-team"
title: Scheduled publishing stuck
---

Some scheduled editions were not published.

## Requeue them

<%= RakeTask.links("publisher", "publishing:requeue_all") %>
"""


def _ingest(invoke, folder: Path):  # type: ignore[no-untyped-def]
    return ingest_as(invoke, folder, "markdown-runbooks", "acme", acl="internal")


@pytest.fixture()
def site(tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke) -> Path:  # type: ignore[no-untyped-def]
    assert invoke("ingest", str(CATALOG)).code == 0
    folder = tmp_path / "manual"
    (folder / "alerts").mkdir(parents=True)
    (folder / "alerts" / "QueueBacklogGrowing.html.md").write_text(PAGE)
    (folder / "alerts" / "publishing-stuck.html.md.erb").write_text(TEMPLATE)
    (folder / "glossary.html.erb").write_text("<h1>Glossary</h1>\n<%= partial 'words' %>\n")
    return folder


def test_a_page_file_is_found_by_its_alert_name(site: Path, invoke) -> None:  # type: ignore[no-untyped-def]
    result = _ingest(invoke, site)
    # The page that is not Markdown is named, counted, as skipped.
    assert "ingest: skipped: 1 file not Markdown (.md), not imported: glossary.html.erb" in (
        result.err
    )
    card = invoke("runbook", "--alert", "QueueBacklogGrowing", "--subject", "acme/user:oncall")
    assert card.code == 0, card
    assert card.out.startswith(
        "Runbook   Queue backlog growing  [runbook:QueueBacklogGrowing, sha256:"
    ), card.out
    assert "Locator   alerts/QueueBacklogGrowing.html.md" in card.out
    assert ".html" not in card.out.splitlines()[0]


def test_a_markdown_template_is_imported_with_its_tags_as_written(site: Path, invoke) -> None:  # type: ignore[no-untyped-def]
    # A template whose front matter repeats a key (Ruby's YAML, the site's, takes the last):
    # skipped and named, the other pages imported (not the whole import refused).
    repeated = site / "alerts" / "repeated.html.md.erb"
    repeated.write_text(TEMPLATE.replace("---\n\n", "title: Again\n---\n\n", 1))
    result = _ingest(invoke, site)
    assert (
        f"ingest: skipped: {repeated}: front matter: front matter is not valid YAML: line 4, "
        "column 1: duplicate key 'title' (template page)"
    ) in result.err.splitlines()
    card = invoke("runbook", "--alert", "publishing-stuck", "--subject", "acme/user:oncall")
    assert card.code == 0, card
    assert "[runbook:publishing-stuck, " in card.out
    # The tag is the step (which task to run): kept, not stripped.
    assert '<%= RakeTask.links("publisher", "publishing:requeue_all") %>' in card.out


def test_owner_slack_is_warned_about_and_shown_as_a_contact_only(  # type: ignore[no-untyped-def]
    site: Path, invoke
) -> None:
    result = _ingest(invoke, site)
    first = site / "alerts" / "QueueBacklogGrowing.html.md"
    assert (
        f"warning: {first} (and 1 more file): front matter 'owner_slack' not taken: only front "
        "matter owner: team:<id> (a team of the tenant) makes an owner; the card shows it as "
        "the page's contact"
    ) in result.err.splitlines()
    args = ("runbook", "--alert", "QueueBacklogGrowing", "--subject", "acme/user:oncall")
    card = invoke(*args)
    assert "Owner     unknown: found by its name alone, no record names an owner" in card.out
    assert "Contact   #queue-team (from front matter owner_slack, not a team record)" in card.out
    doc = json.loads(invoke(*args, "--json").out)
    assert doc["owner"] is None  # no ownership fact invented from the words
    assert doc["runbook"]["contact"] == (
        "#queue-team (from front matter owner_slack, not a team record)"
    )
    replay = invoke("replay", doc["run_id"], "--subject", "acme/user:oncall", "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["verified"] is True


def test_a_page_imported_under_its_old_id_is_renamed_and_superseded(  # type: ignore[no-untyped-def]
    site: Path, invoke
) -> None:
    page = site / "alerts" / "QueueBacklogGrowing.html.md"
    # What an import before page names were read wrote: the same file as runbook:X.html.
    page.write_text(PAGE.replace("---\n", "---\nid: QueueBacklogGrowing.html\n", 1))
    _ingest(invoke, site)
    page.write_text(PAGE)
    again = _ingest(invoke, site)
    assert (
        "ingest: renamed: runbook:QueueBacklogGrowing.html -> runbook:QueueBacklogGrowing "
        "(same file, new id: the new record supersedes the old)"
    ) in again.err.splitlines()
    assert "removed:" not in again.err and "new:" not in again.err
    card = invoke("runbook", "--alert", "QueueBacklogGrowing", "--subject", "acme/user:oncall")
    assert "[runbook:QueueBacklogGrowing, " in card.out
    assert (
        "Rejected  runbook:QueueBacklogGrowing.html (v1): rejected_superseded -> "
        "runbook:QueueBacklogGrowing"
    ) in card.out
    # Imported again unchanged: nothing renamed, nothing removed.
    third = _ingest(invoke, site)
    assert "renamed:" not in third.err and "removed:" not in third.err


def test_a_page_unreadable_on_reimport_is_said_as_read_and_not_gone(  # type: ignore[no-untyped-def]
    site: Path, invoke
) -> None:
    """Before: a page skipped on re-import for its front matter kept its old record and the
    card said "its file was not in ...'s import" (as if deleted). Now it says the file was
    in that import but could not be read, why, and when the version shown was recorded."""
    _ingest(invoke, site)
    page = site / "alerts" / "publishing-stuck.html.md.erb"
    args = ("runbook", "--alert", "publishing-stuck", "--subject", "acme/user:oncall", "--json")
    assert "its file" not in json.loads(invoke(*args).out)["note"]
    page.write_text(TEMPLATE.replace("---\n\n", "title: Again\n---\n\nNewer steps.\n", 1))
    again = _ingest(invoke, site)
    # Not said removed: it is in PATH.
    assert "removed: alerts/publishing-stuck.html.md.erb" not in again.err, again.err
    assert (
        "ingest: not read: alerts/publishing-stuck.html.md.erb (see skipped: the records "
        "imported before stay current)"
    ) in again.err.splitlines(), again.err

    card = json.loads(invoke(*args).out)
    note = card["note"] or ""
    assert "its file was not in" not in note, note
    assert "its file was in src:runbooks:manual's import of 20" in note, note
    assert (
        "but could not be read (front matter: front matter is not valid YAML: line 4, column "
        "1: duplicate key 'title'): this is the version recorded at 20"
    ) in note, note
    # The file read again closes it.
    page.write_text(TEMPLATE)
    _ingest(invoke, site)
    assert "could not be read" not in (json.loads(invoke(*args).out)["note"] or "")
