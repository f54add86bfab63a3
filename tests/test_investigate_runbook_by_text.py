"""A runbook question that names no record ("Queue Consumer Is Stuck, what do I do?", the
alert's title in words over a folder of Markdown runbooks imported without alert rules) is
answered with the runbook the card's free-text search chooses, saying that the question's
words are the only tie; text no runbook fits stays an honest partial. On a real Neo4j.

Before, `runbook "Queue Consumer Is Stuck"` found the runbook but `investigate` ended
partial with no claim: its text hit was rejected as low relevance, nothing linked it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import neo4j
import pytest
from conftest import ingest_as

CATALOGS = Path(__file__).parent / "fixtures" / "runbooks" / "catalogs"

# Files named in kebab case, titles in words, no alert rules: the layout of
# stolostron/managed-service-runbooks (written here, not copied from it).
RUNBOOKS = {
    "queue-consumer-stuck.md": (
        "# Queue Consumer Is Stuck\n\n## Meaning\n\nThe queue consumer has not taken a "
        "message from the work queue for fifteen minutes while messages are waiting.\n\n"
        "## Mitigation\n\n1. Check the consumer pod logs for a deadlock.\n"
        "2. Restart the consumer deployment.\n"
    ),
    "queue-consumer-high-error-rate.md": (
        "# Queue Consumer Has a High Error Rate\n\n## Meaning\n\nMore than five percent of "
        "the messages the queue consumer handles end in an error.\n\n## Mitigation\n\n"
        "1. Read the consumer logs for the failing message type.\n"
        "2. Roll back the last consumer release.\n"
    ),
    "cache-warmer-stuck.md": (
        "# Cache Warmer Is Stuck\n\n## Meaning\n\nThe cache warmer has not refreshed the "
        "product cache for an hour.\n\n## Mitigation\n\n1. Restart the cache warmer job.\n"
    ),
}


@pytest.fixture()
def titled_runbooks(driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    from test_runbook_lookup import wipe

    wipe(driver)
    for catalog in ("acme.yaml", "globex.yaml"):
        assert invoke("ingest", str(CATALOGS / catalog)).code == 0
    folder = tmp_path / "runbooks"
    folder.mkdir()
    for name, text in RUNBOOKS.items():
        (folder / name).write_text(text, encoding="utf-8")
    ingest_as(invoke, folder, "markdown-runbooks", "acme", acl="internal")
    return folder


def _investigate(invoke, question: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("investigate", question, "--subject", "user:oncall", "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("question", "runbook"),
    [
        ("Queue Consumer Is Stuck, what do I do?", "queue-consumer-stuck"),
        ("Which runbook applies to Queue Consumer Has a High Error Rate?",
         "queue-consumer-high-error-rate"),
        ("Cache Warmer Is Stuck is firing, how do I fix it?", "cache-warmer-stuck"),
    ],
)  # fmt: skip
def test_investigate_claims_the_runbook_the_card_finds_by_its_words(  # type: ignore[no-untyped-def]
    titled_runbooks: Path, invoke, question: str, runbook: str
) -> None:
    title = question.split(",")[0].removeprefix("Which runbook applies to ").rstrip("?")
    title = title.removesuffix(" is firing")
    card = json.loads(invoke("runbook", title, "--subject", "user:oncall", "--json").out)
    assert card["runbook"]["id"] == f"runbook:{runbook}"  # what the card chooses

    doc = _investigate(invoke, question)
    assert doc["status"] == "complete", doc["missing_evidence"]
    (claim,) = doc["claims"]
    # Its title and version as the card names them (the file's content hash), and an inference: only
    # its words tie it to the question.
    assert re.match(
        rf"Runbook {re.escape(title)} \(runbook:{runbook}, sha256:[0-9a-f]{{12}}\), found by "
        r"the words of the question alone \(the runbook search's best fit; no service, alert "
        r"or error code it names links to it\), is the version in force at ",
        claim["statement"],
    ), claim["statement"]
    assert claim["epistemic_status"] == "inference"
    [evidence] = [ev for ev in doc["evidence"] if ev["evidence_id"] in claim["evidence_ids"]]
    assert evidence["element_id"] == f"runbook:{runbook}"
    # The search's reads are recorded tool calls, and the run replays.
    searched = {tc["options"].get("label") for tc in doc["tool_calls"]}
    assert {"Runbook", "Alert"} <= searched, searched  # runbooks and alert rules, by its words
    replay = invoke("replay", doc["run_id"], "--subject", "user:oncall", "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["verified"] is True


def test_text_no_runbook_fits_stays_partial_without_a_runbook_claim(  # type: ignore[no-untyped-def]
    titled_runbooks: Path, invoke
) -> None:
    doc = _investigate(invoke, "The coffee machine is broken, which runbook applies?")
    assert doc["status"] == "partial"
    assert not [c for c in doc["claims"] if "runbook:" in c["statement"]]
    assert "runbook" in [m["evidence_type"] for m in doc["missing_evidence"]]
    # Another tenant's subject is never given acme's runbook by its words.
    other = invoke(
        "investigate", "Queue Consumer Is Stuck, what do I do?",
        "--subject", "globex/user:mallory", "--json",
    )  # fmt: skip
    assert other.code == 0, other
    assert "runbook:queue-consumer-stuck" not in other.out
