"""The runbook card's Owner line states an owner correction as investigate does (real Neo4j,
our own fixture `tests/fixtures/ownership-history`, tenant initech: svc:tps-report's owner
from 2026-11-10 to 2026-11-12 was recorded as team:beta, corrected on 2026-12-01 to
team:alpha).

Before (e32-qa finding D), the card named team:alpha "since ..." with no word that this was
learned after the time asked: investigate said the correction, the card did not.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import wipe

FIXTURE = Path(__file__).parent / "fixtures" / "ownership-history"
IVY = ["--subject", "initech/user:ivy"]
CARD = ["runbook", "--service", "svc:tps-report", *IVY]
CORRECTED = (
    "the owner of svc:tps-report was corrected at 2026-12-01T09:00:00Z: recorded as team:beta "
    "until then, team:alpha since (asked with a known_at before the correction, the answer is "
    "team:beta)"
)


@pytest.fixture(scope="module")
def initech(driver: neo4j.Driver) -> neo4j.Driver:
    from graph_schema.bundle import load_bundle
    from graph_schema.schema_ddl import apply_schema
    from graph_schema.writer import ingest_bundle

    wipe(driver)
    apply_schema(driver)
    for name in ("10-catalog.yaml", "20-handover.yaml", "30-correction.yaml"):
        ingest_bundle(driver, load_bundle(FIXTURE / name))
    driver.execute_query("CALL db.awaitIndexes(300)")
    return driver


def test_the_card_says_the_owner_was_corrected(initech: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    card = invoke(*CARD, "--as-of", "2026-11-11T10:00:00Z")
    assert card.code == 0, card
    assert "Owner     team:alpha" in card.out, card.out
    assert f"          {CORRECTED}" in card.out, card.out
    doc = json.loads(invoke(*CARD, "--as-of", "2026-11-11T10:00:00Z", "--json").out)
    assert doc["owner_detail"]["team"] == "team:alpha"
    assert doc["owner_detail"]["corrected"] == CORRECTED
    # Investigate says the same of the same instant.
    asked = invoke(
        "investigate",
        "Who owned tps-report at 2026-11-11T10:00Z?",
        "--service",
        "svc:tps-report",
        *IVY,
        "--json",
    )
    assert any(CORRECTED in c["statement"] for c in json.loads(asked.out)["claims"])


def test_no_correction_no_line(initech: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # Known before the correction: team:beta, nothing corrected yet. After the corrected span
    # (a later instant): nothing to say either.
    before = invoke(
        *CARD, "--as-of", "2026-11-11T10:00:00Z", "--known-at", "2026-11-30T00:00:00Z", "--json"
    )
    doc = json.loads(before.out)
    assert doc["owner_detail"]["team"] == "team:beta"
    assert doc["owner_detail"]["corrected"] is None
    later = json.loads(invoke(*CARD, "--as-of", "2026-11-15T00:00:00Z", "--json").out)
    assert later["owner_detail"]["corrected"] is None
