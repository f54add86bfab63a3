"""`investigator verify` of a whole ledger: wall time and statements for N recorded runs.

Usage (against a scratch server that NEO4J_* points at; it records full runs of
acme/user:alice, each anchored, until the tenant has `--runs` of them, then only reads):
    INVESTIGATOR_CHAIN_DIR=/tmp/x .venv/bin/python benchmarks/verify_ledger.py --runs 300

Times `verify_tenant_in_tx` (one read transaction, as `investigator verify --tenant acme`
runs it) after one warm-up call, and counts the statements it sends (a figure the machine's
load does not change). Run it from two checkouts (PYTHONPATH) to compare code versions on
the same ledger. Prints one Markdown table row for docs/benchmarks.md. A measurement tool,
not a test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import neo4j

from investigator.connection import open_driver
from investigator.context_graph import RunRecorder
from investigator.context_graph.ledger import load_chain_key, verify_tenant_in_tx
from investigator.settings import resolve_connection

REPO = Path(__file__).resolve().parents[1]
TENANT = "acme"


class _CountingTx:
    """The read transaction, counting the statements sent through it."""

    def __init__(self, tx: neo4j.ManagedTransaction) -> None:
        self.tx = tx
        self.statements = 0

    def run(self, query: str, **params: Any) -> neo4j.Result:
        self.statements += 1
        return self.tx.run(query, **params)


def _record(driver: neo4j.Driver, wanted: int) -> int:
    """Record full runs (14 nodes each, anchored) until the tenant has `wanted`."""
    # The tests' recorded run (goal, plan, tool calls, evidence, rejection, pack, claims).
    sys.path.insert(0, str(REPO / "tests"))
    from test_context_graph_support import record_full_run, request

    records, _, _ = driver.execute_query(
        "MATCH (r:CtxRun {tenant: $t}) RETURN count(r) AS n", t=TENANT
    )
    have = int(records[0]["n"])
    recorder = RunRecorder(driver)
    for n in range(have, wanted):
        record_full_run(recorder, request(f"question {n} about release-2026.07.23.1"))
    return max(have, wanted)


def main() -> None:
    """Record the runs, then time `verify` of the tenant's whole ledger."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    driver = open_driver(resolve_connection())
    try:
        runs = _record(driver, args.runs)
        key = load_chain_key(create=False)
        times: list[float] = []
        statements = 0
        verdict = None
        counting: list[_CountingTx] = []

        def check(tx: neo4j.ManagedTransaction) -> Any:
            counting.append(_CountingTx(tx))
            return verify_tenant_in_tx(counting[-1], TENANT, key)  # type: ignore[arg-type]

        for attempt in range(args.repeat + 1):
            with driver.session(default_access_mode=neo4j.READ_ACCESS) as session:
                started = time.perf_counter()
                report = session.execute_read(check)
                elapsed = (time.perf_counter() - started) * 1000
            if attempt:  # the first call warms the server's caches and plans
                times.append(elapsed)
            statements = counting[-1].statements
            verdict = (report.verified, report.runs_checked, len(report.problems))
    finally:
        driver.close()
    print(
        f"| {runs} runs | {statistics.median(times):,.0f} ms ({min(times):,.0f}-"
        f"{max(times):,.0f}) | {statements} statements | verified, checked, problems: "
        f"{verdict} |"
    )


if __name__ == "__main__":
    main()
