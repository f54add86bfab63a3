"""Warm latency of `investigator runbook` lookups (p50/p95), recorded runs included.

Usage (against the server NEO4J_* or the local server points at; it applies the schema and
ingests the demo dataset and the runbook test fixtures, idempotently, and adds Ctx runs):
    .venv/bin/python benchmarks/runbook_latency.py --rounds 30
    .venv/bin/python benchmarks/runbook_latency.py --rounds 30 --synthetic-services 4200

With `--synthetic-services N` a deterministic synthetic tenant of about 24*N elements
(`investigator generate`) is ingested first, so the lookups run on a graph of that size.

"Warm" means one process and one `RunbookLookup` (driver open, templates verified and
planned by the server) after three warm-up rounds; each lookup is the whole thing a user
waits for: subject load, every template call, the gate, and the Context Graph recording.
Also prints the wall time of one cold CLI process for comparison. Prints a Markdown table
for docs/benchmarks.md. A measurement tool, not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from graph_schema.bundle import load_bundle
from graph_schema.importers.common import ImportOptions
from graph_schema.importers.dispatch import import_source
from graph_schema.schema_ddl import apply_schema
from graph_schema.writer import ingest_bundle
from investigator.connection import open_driver
from investigator.runbook_lookup import LookupTarget, RunbookLookup, RunbookQuery
from investigator.settings import resolve_connection

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"


def _t(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# (label, target, value, as_of, subject): the demo's SRE questions and the fixtures' ones.
BOB = "acme/user:bob"
CASES = [
    ("service, demo", LookupTarget.SERVICE, "svc:payment-api", "2026-07-23T10:03:00Z", BOB),
    ("service, demo", LookupTarget.SERVICE, "svc:payment-api", "2026-07-26T00:00:00Z", BOB),
    ("alert, demo", LookupTarget.ALERT, "KubePodCrashLooping", "2026-07-23T03:12:00Z", BOB),
    ("error code, demo", LookupTarget.ERROR_CODE, "PAY-4097", "2026-07-23T10:03:00Z", BOB),
    ("free text, demo", LookupTarget.TEXT, "payment recovery", "2026-07-23T10:03:00Z", BOB),
    ("alert, imported", LookupTarget.ALERT, "CardAuthErrorsHigh", "2026-07-01T00:00:00Z",
     "acme/user:oncall"),
]  # fmt: skip


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def _prepare(driver, database: str | None, synthetic: int) -> int:  # type: ignore[no-untyped-def]
    apply_schema(driver, database)
    if synthetic:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "synth.json"
            subprocess.run(
                [sys.executable, "-m", "investigator", "generate", "--services", str(synthetic),
                 "--seed", "7", "--out", str(out)],
                check=True,
            )  # fmt: skip
            began = time.monotonic()
            ingest_bundle(driver, load_bundle(out), database=database)
            print(f"synthetic graph ingested in {time.monotonic() - began:.0f} s", file=sys.stderr)
    ingest_bundle(driver, load_bundle(REPO / "datasets" / "payments-incident"), database=database)
    for name in ("acme.yaml", "globex.yaml"):
        path = FIXTURES / "runbooks" / "catalogs" / name
        ingest_bundle(driver, load_bundle(path), database=database)
    options = ImportOptions(tenant="acme", acl=["internal"])
    for fmt, path in (
        ("markdown-runbooks", FIXTURES / "runbooks" / "acme"),
        ("prometheus-rules", FIXTURES / "prometheus" / "acme-rules.yaml"),
    ):
        result = import_source(fmt, path, options, driver, database)
        ingest_bundle(driver, result.loaded(), database=database)
    records, _, _ = driver.execute_query("MATCH (n:KG) RETURN count(n) AS c", database_=database)
    return int(records[0]["c"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=30, help="measured rounds over all cases")
    parser.add_argument("--synthetic-services", type=int, default=0)
    args = parser.parse_args()
    settings = resolve_connection()
    driver = open_driver(settings)
    try:
        kg_nodes = _prepare(driver, settings.database, args.synthetic_services)
        lookup = RunbookLookup(driver, database=settings.database)
        queries = [
            (label, RunbookQuery(target=t, value=v, subject_id=s, as_of=_t(a), as_of_from="given"))
            for label, t, v, a, s in CASES
        ]
        for _ in range(3):  # warm-up: driver pool, template verification, server plans
            for _, query in queries:
                answer = lookup.lookup(query)
                assert answer.runbook is not None, (query, answer.note)
        by_label: dict[str, list[float]] = {}
        everything: list[float] = []
        for _ in range(args.rounds):
            for label, query in queries:
                began = time.perf_counter()
                lookup.lookup(query)
                ms = (time.perf_counter() - began) * 1000.0
                by_label.setdefault(label, []).append(ms)
                everything.append(ms)
    finally:
        driver.close()
    env = {**os.environ, "INVESTIGATOR_SUBJECT": "acme/user:bob"}
    began = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "investigator", "runbook", "--alert", "KubePodCrashLooping",
         "--as-of", "2026-07-23T03:12:00Z", "--json"],
        check=True, capture_output=True, env=env,
    )  # fmt: skip
    cold_s = time.monotonic() - began

    print(f"KG nodes: {kg_nodes}; rounds: {args.rounds}; lookups: {len(everything)}")
    print()
    print("| lookup | n | p50 ms | p95 ms |")
    print("| --- | ---: | ---: | ---: |")
    for label, values in by_label.items():
        print(f"| {label} | {len(values)} | {_pct(values, 0.5):.0f} | {_pct(values, 0.95):.0f} |")
    print(
        f"| **all** | {len(everything)} | {statistics.median(everything):.0f} | "
        f"{_pct(everything, 0.95):.0f} |"
    )
    print()
    print(f"cold CLI process (`investigator runbook --alert ...`, one run): {cold_s:.1f} s")


if __name__ == "__main__":
    main()
