"""The runbook card's Note, whole: the record times of a runbook that states no validity and
the pointer that led to it, both printed, at times before, between and after two imports, on
a real Neo4j.

Before, the card cut its Note at 300 characters: with a long pointer id the record-time note
and the pointer note met past it, and the card ended "... (the pointer is und…".
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import neo4j
import pytest

CATALOG = Path(__file__).parent / "fixtures" / "runbooks" / "catalogs" / "acme.yaml"
BASE = "https://git.example.com/runbooks/blob/main/alerts"
ALERT = "PaymentsLedgerReconciliationBacklogCritical"
TARGET = "payments-ledger-reconciliation-backlog"
OLD_STEP = "Scale the reconciliation workers up by two replicas."
NEW_STEP = "Pause the producers, then scale the workers up."
SUBJECT = ("--subject", "user:oncall")
POINTER_NOTE = (
    f"runbook:{ALERT} only points at runbook:{TARGET}, so the card shows that runbook "
    "(the pointer is under Also)"
)


def _now() -> str:
    time.sleep(0.05)
    stamp = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    time.sleep(0.05)
    return stamp


@pytest.fixture()
def imported(driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """A pointer the alert's rule links to, the runbook it points at, that runbook edited and
    imported again: the times before the first import, between the two and after."""
    from test_runbook_lookup import wipe

    wipe(driver)
    assert invoke("ingest", str(CATALOG)).code == 0
    folder = tmp_path / "rb"
    (folder / "alerts" / "old-operator").mkdir(parents=True)
    (folder / "alerts" / "new-operator").mkdir(parents=True)
    (folder / "alerts" / "old-operator" / f"{ALERT}.md").write_text(
        f"# {ALERT}\n\nThis alert has been moved to [alerts/new-operator/{TARGET}.md]"
        f"({BASE}/new-operator/{TARGET}.md)\n",
        encoding="utf-8",
    )
    target = folder / "alerts" / "new-operator" / f"{TARGET}.md"
    target.write_text(
        f"# Payments ledger reconciliation backlog\n\n## Mitigation\n\n{OLD_STEP}\n",
        encoding="utf-8",
    )
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        f"groups:\n- name: q\n  rules:\n  - alert: {ALERT}\n    expr: backlog > 1000\n"
        f"    annotations:\n      runbook_url: {BASE}/old-operator/{ALERT}.md\n",
        encoding="utf-8",
    )
    args = ("--format", "markdown-runbooks", "--tenant", "acme", "--acl", "internal", "--trusted")
    times = {"before": _now()}
    assert invoke("ingest", str(folder), *args).code == 0
    ruled = invoke("ingest", str(rules), "--format", "prometheus-rules", "--tenant", "acme",
                   "--acl", "internal")  # fmt: skip
    assert ruled.code == 0, ruled
    times["between"] = _now()
    target.write_text(target.read_text().replace(OLD_STEP, NEW_STEP))
    assert invoke("ingest", str(folder), *args).code == 0
    times["after"] = _now()
    return times


def _note(invoke, at: str) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """The card's Note line at `at`, and the card."""
    card = invoke("runbook", "--alert", ALERT, "--as-of", at, *SUBJECT)
    assert card.code == 0, card
    [note] = [line for line in card.out.splitlines() if line.startswith("Note      ")]
    return note, card.out


def test_the_record_time_note_and_the_pointer_note_are_both_whole(  # type: ignore[no-untyped-def]
    imported: dict[str, str], invoke
) -> None:
    note, card = _note(invoke, imported["between"])
    assert OLD_STEP in card and NEW_STEP not in card
    # Both parts, whole, past the 300 characters the card used to cut at.
    assert len(note) > 300
    assert note.startswith("Note      the version recorded 20")
    assert "in force at as_of (it states no validity); a re-import replaced it at 20" in note
    assert note.endswith(f"; {POINTER_NOTE}"), note
    assert "…" not in note

    before, _ = _note(invoke, imported["before"])
    assert before.startswith("Note      recorded 20")
    assert "after as_of: its earliest version, which states no validity; what it said at " in (
        before
    )
    assert before.endswith(f"is not known; {POINTER_NOTE}"), before

    # After the re-import: nothing about record times, the pointer said.
    after, card = _note(invoke, imported["after"])
    assert after == f"Note      {POINTER_NOTE}"
    assert NEW_STEP in card

    # --json's note is what the card prints, and the lookup replays.
    doc = json.loads(
        invoke("runbook", "--alert", ALERT, "--as-of", imported["between"], *SUBJECT,
               "--json").out
    )  # fmt: skip
    assert f"Note      {doc['note']}" == note
    replay = invoke("replay", doc["run_id"], *SUBJECT, "--json")
    assert json.loads(replay.out)["verified"] is True
