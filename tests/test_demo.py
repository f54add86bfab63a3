"""`investigator demo`, the README's first command, end to end on a real Neo4j."""

from __future__ import annotations

import neo4j

from investigator.settings import ConnectionSettings


def test_demo_runs_every_step_and_the_investigation_replays(
    clean_db: neo4j.Driver,
    cli_env: ConnectionSettings,
    invoke,  # type: ignore[no-untyped-def]
) -> None:
    result = invoke("demo")
    assert result.code == 0, result
    out = result.out
    assert "[1/6] using the configured Neo4j" in out
    # The one flag a user's own data should not carry is explained where it is shown.
    ingest = out[out.index("[3/6] $ investigator ingest") :].splitlines()
    assert ingest[0].endswith("--backdate")
    assert ingest[1].startswith("      (--backdate: this dataset is history recorded in 2026-07;")
    # The investigation names the release, today's-not-then's owner, and the runbook then.
    assert "deploy:release-2026.07.23.1" in out
    assert "team:payments-core OWNS svc:payment-api" in out
    assert "runbook:payment-recovery@v3" in out
    assert "rejected_untrusted_instruction" in out
    replay = out[out.index("[6/6] $ investigator replay run-") :]
    # The whole step on failure: pytest cuts a long string in its middle, where the status is.
    assert "(investigate, complete)" in replay, replay[:2000]
    assert "verified:        true" in replay, replay[:2000]


def test_demo_with_a_missing_dataset_is_exit_2_and_writes_nothing(
    clean_db: neo4j.Driver,
    cli_env: ConnectionSettings,
    invoke,  # type: ignore[no-untyped-def]
) -> None:
    result = invoke("demo", "--dataset", "/nonexistent/payments")
    assert result.code == 2
    assert result.out == ""
    assert result.err.startswith("error: demo dataset not found")
    assert len(result.err.strip().splitlines()) == 1
    records, _, _ = clean_db.execute_query("MATCH (n) RETURN count(n) AS c")
    assert records[0]["c"] == 0
