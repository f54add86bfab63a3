"""Recording overhead: the same investigation with and without the Context Graph recorder.

Usage (against a scratch server that NEO4J_* or the local server points at; it ingests the
demo dataset, idempotently, and adds Ctx runs to that database):
    .venv/bin/python benchmarks/recording_overhead.py --runs 15

Measures, interleaved so that server warm-up and neighbours' load hit both sides alike:
- wall time of `investigate(...)` with `recorder=None` and with a `RunRecorder`;
- the recorder's own time (`StageTimings.record_ms`), its share of the recorded run (the
  run session writes a run in a few transactions: start, one per round, finish) and the
  Ctx nodes written per run;
- the Bolt requests recording adds to a run (transactions and statements, counted from the
  driver's debug log in one extra pair of runs after the timed ones): a figure the machine's
  load does not change;
- `replay_run` of one recorded run (re-executes every tool call, re-runs the pack).
Prints a Markdown table for docs/benchmarks.md. A measurement tool, not a test.
"""

from __future__ import annotations

import argparse
import collections
import logging
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from graph_schema.bundle import load_bundle
from graph_schema.schema_ddl import apply_schema
from graph_schema.writer import ingest_bundle
from investigator.connection import open_driver
from investigator.context_graph import RunRecorder, load_lineage
from investigator.investigation import InvestigationRequest, investigate
from investigator.replay import replay_run
from investigator.settings import resolve_connection

DATASET = Path(__file__).resolve().parents[1] / "datasets" / "payments-incident"


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class _BoltRequests(logging.Handler):
    """Counts the requests the driver sends (its debug log names each one `C: BEGIN` ...)."""

    KINDS = ("BEGIN", "RUN", "COMMIT")

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.counts: collections.Counter[str] = collections.Counter()

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        for kind in self.KINDS:
            if f"C: {kind}" in message:
                self.counts[kind] += 1


def _requests(run: Callable[[], object]) -> collections.Counter[str]:
    handler = _BoltRequests()
    logger = logging.getLogger("neo4j")
    level, propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    try:
        run()
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate
    return handler.counts


def main() -> None:
    """Run the measurement and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument(
        "--question",
        default="Why did payment authorization fail with no database connection "
        "available on payment-api?",
    )
    args = parser.parse_args()
    settings = resolve_connection()
    driver = open_driver(settings)
    apply_schema(driver, settings.database)
    ingest_bundle(driver, load_bundle(DATASET), database=settings.database)
    request = InvestigationRequest(
        question=args.question,
        service_id="svc:payment-api",
        subject_id="acme/user:alice",
        purpose="incident_investigation",
        as_of=datetime(2026, 7, 23, 10, 30, tzinfo=UTC),
    )
    recorder = RunRecorder(driver)
    # Warm-up: template EXPLAIN checks, schema, driver pool.
    investigate(request, driver=driver, recorder=None)
    investigate(request, driver=driver, recorder=recorder)

    plain: list[float] = []
    recorded: list[float] = []
    record_ms: list[float] = []
    run_id = ""
    for _ in range(args.runs):
        t0 = time.perf_counter()
        investigate(request, driver=driver, recorder=None)
        plain.append((time.perf_counter() - t0) * 1000.0)
        t0 = time.perf_counter()
        result = investigate(request, driver=driver, recorder=recorder)
        recorded.append((time.perf_counter() - t0) * 1000.0)
        record_ms.append(result.timings.record_ms)
        run_id = result.run_id
    nodes = len(load_lineage(driver, run_id).nodes)
    without = _requests(lambda: investigate(request, driver=driver, recorder=None))
    with_recorder = _requests(lambda: investigate(request, driver=driver, recorder=recorder))
    t0 = time.perf_counter()
    report = replay_run(driver, run_id)
    replay_ms = (time.perf_counter() - t0) * 1000.0
    driver.close()

    p50_plain, p50_rec = statistics.median(plain), statistics.median(recorded)
    print(f"runs per side: {args.runs}; Ctx nodes per run: {nodes}; question: {args.question!r}")
    print()
    print("| measure | p50 ms | p95 ms |")
    print("| --- | ---: | ---: |")
    print(f"| investigate, recorder=None | {p50_plain:.1f} | {_pct(plain, 0.95):.1f} |")
    print(f"| investigate, RunRecorder | {p50_rec:.1f} | {_pct(recorded, 0.95):.1f} |")
    print(
        f"| recorder's own time (record_ms) | {statistics.median(record_ms):.1f} | "
        f"{_pct(record_ms, 0.95):.1f} |"
    )
    print(
        f"| overhead (p50 difference) | {p50_rec - p50_plain:.1f} "
        f"({(p50_rec - p50_plain) / p50_plain * 100:.0f} %) | |"
    )
    share = [r / t for r, t in zip(record_ms, recorded, strict=True)]
    print(
        f"| recording's share of a recorded run (target <= 15 %) | "
        f"{statistics.median(share) * 100:.0f} % | {_pct(share, 0.95) * 100:.0f} % |"
    )
    print(f"| replay of one run (verified={report.verified}) | {replay_ms:.1f} | |")
    print()
    print(
        "Bolt requests recording adds to one run: "
        f"{with_recorder['BEGIN'] - without['BEGIN']} transactions, "
        f"{with_recorder['RUN'] - without['RUN']} statements "
        f"(the run: {with_recorder['BEGIN']} transactions, {with_recorder['RUN']} statements)"
    )


if __name__ == "__main__":
    main()
