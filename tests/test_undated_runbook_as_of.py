"""A runbook file states no validity: asked at a past time, the card and `investigate` show
the version the team had then (the record recorded by then), not a later re-import's text,
on a real Neo4j (docs/runbooks.md, "A runbook that states no validity").

Before, a re-import wrote a new record of the same id, neither record had a valid time, and
the newest record won at every as_of: `runbook --as-of T` showed text that did not exist at
T, and `investigate "What did the runbook say at T?"` claimed it `[fact]` in force then.
"""

from __future__ import annotations

import json
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path

import neo4j
import pytest

FIXTURES = Path(__file__).parent / "fixtures"
RUNBOOK = FIXTURES / "runbooks" / "acme" / "kubernetes" / "KubePodCrashLooping.md"
CATALOGS = FIXTURES / "runbooks" / "catalogs"
OLD_STEP = "Roll back the last deployment if the crash started right after it."
NEW_STEP = "Restart the node agent first, then roll back if it keeps crashing."


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


@pytest.fixture()
def reimported(driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The folder imported, its first Mitigation step edited, imported again: the times
    before the first import, between the two, and after the second."""
    from test_runbook_lookup import wipe

    wipe(driver)
    assert invoke("ingest", str(CATALOGS / "acme.yaml")).code == 0
    folder = tmp_path / "runbooks"
    folder.mkdir()
    page = folder / "KubePodCrashLooping.md"
    shutil.copy(RUNBOOK, page)
    args = ("--format", "markdown-runbooks", "--tenant", "acme", "--acl", "internal", "--trusted")
    times = {"before": _now()}
    time.sleep(0.05)
    assert invoke("ingest", str(folder), *args).code == 0
    time.sleep(0.05)
    times["between"] = _now()
    time.sleep(0.05)
    page.write_text(page.read_text().replace(OLD_STEP, NEW_STEP))
    again = invoke("ingest", str(folder), *args)
    assert again.code == 0, again
    assert "changed: KubePodCrashLooping.md" in again.err
    time.sleep(0.05)
    times["after"] = _now()
    return times


def _card(invoke, at: str, *extra: str):  # type: ignore[no-untyped-def]
    card = invoke(
        "runbook", "--alert", "KubePodCrashLooping", "--as-of", at, "--subject", "user:oncall",
        *extra,
    )  # fmt: skip
    assert card.code == 0, card
    return card


def test_card_at_a_time_between_imports_shows_the_text_imported_then(  # type: ignore[no-untyped-def]
    reimported: dict[str, str], invoke
) -> None:
    between = _card(invoke, reimported["between"])
    assert OLD_STEP in between.out and NEW_STEP not in between.out
    note = next(line for line in between.out.splitlines() if line.startswith("Note"))
    assert "the version recorded " in note and "a re-import replaced it at " in note

    after = _card(invoke, reimported["after"])
    assert NEW_STEP in after.out and OLD_STEP not in after.out
    assert "re-import replaced" not in after.out and "after as_of" not in after.out

    # --known-at caps what is known: at known_at `between` only the first import exists.
    known = _card(invoke, reimported["after"], "--known-at", reimported["between"])
    assert OLD_STEP in known.out and NEW_STEP not in known.out

    doc = json.loads(_card(invoke, reimported["between"], "--json").out)
    assert doc["runbook"]["record_version"] == 1
    replay = invoke("replay", doc["run_id"], "--subject", "user:oncall", "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["verified"] is True


def test_card_before_the_first_import_says_the_version_is_later(  # type: ignore[no-untyped-def]
    reimported: dict[str, str], invoke
) -> None:
    before = _card(invoke, reimported["before"])
    # The earliest version the KG has, and said to be recorded after as_of.
    assert OLD_STEP in before.out and NEW_STEP not in before.out
    note = next(line for line in before.out.splitlines() if line.startswith("Note"))
    assert "after as_of: its earliest version, which states no validity" in note


def test_investigate_at_a_time_names_the_version_of_then(  # type: ignore[no-untyped-def]
    reimported: dict[str, str], invoke
) -> None:
    between = reimported["between"]
    result = invoke(
        "investigate", f"What did the KubePodCrashLooping runbook say at {between}?",
        "--subject", "user:oncall", "--json",
    )  # fmt: skip
    assert result.code == 0, result
    doc = json.loads(result.out)
    claims = [c for c in doc["claims"] if "runbook:KubePodCrashLooping" in c["statement"]]
    (claim,) = [c for c in claims if "the time named in the question" in c["statement"]]
    assert claim["epistemic_status"] == "fact"
    assert "replaced by a re-import at" in claim["statement"]
    [evidence] = [ev for ev in doc["evidence"] if ev["evidence_id"] in claim["evidence_ids"]]
    assert evidence["version"] == 1
    assert NEW_STEP not in evidence["content"]
    # as_of stays a reference, as for "then" and an owner: the re-import's text is in force
    # now (before, the time written was the only one claimed).
    (now,) = [c for c in claims if c is not claim]
    assert now["epistemic_status"] == "fact" and "in force at as_of" in now["statement"]
    [current] = [ev for ev in doc["evidence"] if ev["evidence_id"] in now["evidence_ids"]]
    assert NEW_STEP in current["content"]
    replay = invoke("replay", doc["run_id"], "--subject", "user:oncall", "--json")
    assert json.loads(replay.out)["verified"] is True

    # Asked at a time before the first import: no fact that it was in force then.
    early_run = invoke(
        "investigate", "Which runbook applies to KubePodCrashLooping?",
        "--as-of", reimported["before"], "--subject", "user:oncall", "--json",
    )  # fmt: skip
    early = json.loads(early_run.out)
    (claim,) = [c for c in early["claims"] if "runbook:KubePodCrashLooping" in c["statement"]]
    assert claim["epistemic_status"] != "fact"
    assert "its earliest version was recorded at" in claim["statement"]
    assert any(m["evidence_type"] == "runbook" for m in early["missing_evidence"])

    # After the re-import: the new text, claimed as before.
    late_run = invoke(
        "investigate", "Which runbook applies to KubePodCrashLooping?", "--subject", "user:oncall",
        "--json",
    )  # fmt: skip
    late = json.loads(late_run.out)
    (claim,) = [c for c in late["claims"] if "runbook:KubePodCrashLooping" in c["statement"]]
    assert claim["epistemic_status"] == "fact" and "re-import" not in claim["statement"]
