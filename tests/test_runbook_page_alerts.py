"""A page naming several alerts, and free text, answer with what they are about, on a real
Neo4j: the first-named alert's section (the others named in a note with the command that
shows theirs), and `resolved` / `applies_via` naming the alert the answer used, never the
first of a runbook's alerts by id.

Before, "[FIRING:2] StoragePollsFailing, StorageCompactionsFailing" showed the section of
StorageCompactionsFailing (first by id) with no note, and "storage bucket polls are failing"
was `applies_via` alert:StorageCompactionsFailing while its card showed the polls section.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import import_runbook_folder, ingest_as, runbook_json

FIXTURES = Path(__file__).parent / "fixtures"
SECTIONED = FIXTURES / "sectioned-runbooks"


@pytest.fixture()
def sectioned(driver: neo4j.Driver, cli_env: object, invoke) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    import_runbook_folder(driver, invoke, SECTIONED / "runbooks", "--trusted")
    ingest_as(invoke, SECTIONED / "rules", "prometheus-rules", "acme", "--trusted", acl="internal")
    return driver


def test_a_page_naming_two_alerts_shows_the_first_named_and_says_the_other(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke
) -> None:
    page = "[FIRING:2] StoragePollsFailing, StorageCompactionsFailing (storage-prod)"
    doc = runbook_json(invoke, page)
    runbook = doc["runbook"]
    # StoragePollsFailing is named first: its section, though its id sorts after the other.
    assert runbook["steps_locator"] == "storage.md#how-to-fix"
    assert runbook["steps"][0] == "1. Check the bucket's error rate in the cloud console."
    assert runbook["applies_via"] == "alert:StoragePollsFailing"
    assert doc["resolved"] == ["alert:StoragePollsFailing", "alert:StorageCompactionsFailing"]
    assert doc["note"] == (
        "the text names 2 alerts (StoragePollsFailing, StorageCompactionsFailing): the card "
        "shows the runbook of StoragePollsFailing (named first); for "
        "StorageCompactionsFailing: investigator runbook --alert StorageCompactionsFailing"
    )
    # Typed the other way round, the other section.
    swapped = runbook_json(invoke, "[FIRING:2] StorageCompactionsFailing, StoragePollsFailing")
    assert swapped["runbook"]["steps_locator"] == "storage.md#storagecompactionsfailing"
    see = "for StoragePollsFailing: investigator runbook --alert StoragePollsFailing"
    assert see in swapped["note"]
    card = invoke("runbook", page, "--subject", "user:oncall")
    assert card.code == 0, card
    assert "Note      the text names 2 alerts" in card.out
    assert "Locator   storage.md#how-to-fix\n" in card.out
    # One alert named: no such note.
    assert runbook_json(invoke, "[FIRING:1] StoragePollsFailing")["note"] is None


def test_free_text_resolves_to_the_alert_it_matched_not_the_first_by_id(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke
) -> None:
    doc = runbook_json(invoke, "storage bucket polls are failing")
    assert doc["text_matches"][0]["matched_alert"] == "alert:StoragePollsFailing"
    assert doc["runbook"]["steps_locator"] == "storage.md#how-to-fix"
    assert doc["resolved"] == ["alert:StoragePollsFailing"]
    assert doc["runbook"]["applies_via"] == "alert:StoragePollsFailing"
    replay = invoke("replay", doc["run_id"], "--subject", "user:oncall", "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["verified"] is True


def test_free_text_matching_no_one_alert_names_no_alert(  # type: ignore[no-untyped-def]
    sectioned: neo4j.Driver, invoke
) -> None:
    # A word every alert of the file shares: the runbook, about none of its alerts.
    doc = runbook_json(invoke, "storage")
    assert doc["runbook"]["id"] == "runbook:storage"
    assert doc["resolved"] == []
    assert not (doc["runbook"]["applies_via"] or "").startswith("alert:")


_ERRORS_RUNBOOK = """# Storage errors

Errors the storage service returns. Each section below is one error.

## StorageWritesFailing

1. Check the write path dashboard.

## StorageReadsFailing

1. Check the read path dashboard.

## Errors

### err-storage-sample-too-old

This error occurs when a sample is older than the accepted window.

1. Raise `-storage.window` for the tenant, or fix the client's clock.
"""


def test_a_section_heading_spelled_out_is_found_like_an_alerts(  # type: ignore[no-untyped-def]
    driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    folder = tmp_path / "runbooks"
    folder.mkdir()
    (folder / "storage-errors.md").write_text(_ERRORS_RUNBOOK, encoding="utf-8")
    import_runbook_folder(driver, invoke, folder, "--trusted")
    # No ErrorCode record: the section headed by the code, and the note says that is the tie.
    by_code = runbook_json(invoke, "--error-code", "err-storage-sample-too-old")
    assert by_code["runbook"]["steps_locator"] == "storage-errors.md#err-storage-sample-too-old"
    assert by_code["runbook"]["steps"][0].startswith("This error occurs when a sample is older")
    assert by_code["note"] == (
        "no error code matching 'err-storage-sample-too-old' is visible to acme/user:oncall; "
        "runbook:storage-errors has a section headed by it, and that heading is the only tie"
    )
    # The heading typed as text: that section too, not the file's opening text.
    by_text = runbook_json(invoke, "err-storage-sample-too-old")
    assert by_text["runbook"]["steps_locator"] == "storage-errors.md#err-storage-sample-too-old"
    assert by_text["runbook"]["steps_note"] is None
    # A code no heading spells out still finds nothing.
    none = invoke(
        "runbook", "--error-code", "err-storage-other", "--subject", "user:oncall", "--json"
    )
    assert json.loads(none.out)["runbook"] is None
