"""Replay names the backdated ingest that explains a difference, however many came before.

A month of runs sees many `ingest --backdate`s after a run. Before, replay looked only at
the 3 oldest recorded after the run: with a 4th that dated the record the call now returns,
the auditor read three ingests that changed nothing the call returns, and not the one that
did, nor that there were more. Now the ingests that explain the difference come first, and
the line says how many others it does not show; the ids it names are only those the reader
may read (checked in Cypher), the counts are the same for every reader. Real CLI, real Neo4j.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import wipe

from graph_schema.bundle import load_bundle
from graph_schema.schema_ddl import apply_schema
from graph_schema.writer import ingest_bundle

DATASET = Path(__file__).resolve().parents[1] / "datasets" / "payments-incident"
QUESTION = "Was release-2026.07.23.1 related to the PAY-4097 errors?"
SEED = ("--service", "svc:payment-api", "--as-of", "2026-07-23T10:30:00Z",
        "--subject", "acme/user:bob")  # fmt: skip
# A record dated into the run's time that no call of the run returns.
QUIET = """\
tenant: acme
nodes:
  - {{id: person:late-{n}, label: Person, name: Quiet Archivist {n}, acl: [internal],
     source_id: src:service-catalog, recorded_at: "2026-07-23T10:01:0{n}Z"}}
"""
# The one that explains the difference: a change the seed run's calls return now.
TELLING = """\
tenant: acme
principals:
  - {id: user:audit-lite, labels: [internal], purposes: [audit], source_id: src:iam}
nodes:
  - {id: change:late-telling, label: ChangeEvent, name: a late incident change,
     acl: [internal, incident], source_id: src:risk-console, valid_from: "2026-07-23T10:01:00Z",
     recorded_at: "2026-07-23T10:01:05Z", props: {change_type: config, at: "2026-07-23T10:01:00Z"}}
"""


@pytest.fixture()
def four_backdated(driver: neo4j.Driver, cli_env, invoke, tmp_path: Path) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """Bob's seed run, then 3 backdated ingests of quiet records and a 4th that explains."""
    wipe(driver)
    apply_schema(driver)
    ingest_bundle(driver, load_bundle(DATASET))
    made = invoke("investigate", QUESTION, *SEED, "--json")
    assert made.code == 0, made
    for n in (1, 2, 3):
        quiet = tmp_path / f"quiet-{n}.yaml"
        quiet.write_text(QUIET.format(n=n), encoding="utf-8")
        assert invoke("ingest", str(quiet), "--backdate").code == 0
    telling = tmp_path / "telling.yaml"
    telling.write_text(TELLING, encoding="utf-8")
    assert invoke("ingest", str(telling), "--backdate").code == 0
    return json.loads(made.out)["run_id"], str(telling)


def _changed(invoke, run: str, *reader: str) -> tuple[list[str], str]:  # type: ignore[no-untyped-def]
    replay = invoke("replay", run, *reader, "--json")
    assert replay.code == 1, replay
    drift = json.loads(replay.out)["drift"]
    return [d["detail"] for d in drift if d["kind"] == "hash_mismatch"], replay.out + replay.err


def test_the_fourth_backdated_ingest_that_explains_is_named(  # type: ignore[no-untyped-def]
    four_backdated, invoke
) -> None:
    run, telling = four_backdated
    details, _ = _changed(invoke, run, "--subject", "acme/user:bob")
    telling_lines = [d for d in details if "change:late-telling" in d]
    # Before: the 3 quiet ingests were shown, the telling one was not, nor that it existed.
    assert telling_lines, details
    for detail in telling_lines:
        assert f"`ingest --backdate` of {telling} at " in detail, detail
        assert "the call returns now: change:late-telling)" in detail, detail
        assert "quiet-" not in detail, detail
        assert detail.endswith(
            "; 3 other backdated ingests into the time it saw not shown (none of them dated "
            "a record the call returns now or retracted one)"
        ), detail
    # A reader that may not read the record sees the same ingest and the same counts,
    # and no id it may not read.
    audited, printed = _changed(
        invoke, run, "--subject", "acme/user:audit-lite", "--purpose", "audit"
    )
    told = [d for d in audited if f"`ingest --backdate` of {telling} at " in d]
    assert told and len(told) == len(telling_lines), audited
    for detail in told:
        assert "dated 1 record at or before the run's known_at" in detail, detail
        assert detail.endswith(
            "; 3 other backdated ingests into the time it saw not shown (none of them dated "
            "a record the call returns now or retracted one)"
        ), detail
    assert "change:late-telling" not in printed
