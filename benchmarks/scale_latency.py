"""Template latency as a tenant grows, and with another large tenant beside it (issue 12).

Usage (a dedicated server: `--wipe` empties it first; give the server a bigger heap with
INVESTIGATOR_NEO4J_HEAP for the full size):
    .venv/bin/python benchmarks/scale_latency.py --wipe --base-services 420 \\
        --large-services 41700 --other-services 41700

About 24 elements per service: 420 services is about 10k elements, 41,700 about 1M. Three
measurements of the same template calls for the same subject of tenant `scale`:
  1. tenant `scale` at `--base-services` (alone in the database);
  2. the same tenant grown to `--large-services` (alone);
  3. the same, after tenant `other` of `--other-services` was ingested beside it.
Targets: (2)/(1) at most 1.3 per template, (3)/(2) at most 1.2. Also prints the Neo4j
heap in use, the page cache configured and the store size, and this client's peak RSS.
A measurement tool, not a test.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from typing import Any

import neo4j

from cypher_templates.executor import TemplateExecutor
from cypher_templates.plan import PlanStep
from cypher_templates.subject import Subject, load_subject
from graph_schema.bundle import LoadedBundle
from graph_schema.schema_ddl import apply_schema
from graph_schema.synthetic import generate_bundle
from graph_schema.writer import ingest_bundle
from investigator.connection import open_driver
from investigator.settings import resolve_connection

TENANT, OTHER = "scale", "other"
SUBJECT = "user:synth-reader"
KNOWN_AT = datetime(2026, 9, 1, tzinfo=UTC)
SERVICE = "svc:s00001"
WIDE = {"from": "2026-05-01T00:00:00Z", "to": "2026-08-01T00:00:00Z"}
DAY = {"from": "2026-06-10T00:00:00Z", "to": "2026-06-11T00:00:00Z"}
CALLS: list[tuple[str, str, dict[str, Any], dict[str, str | int]]] = [
    ("entity_resolution", "entity", {"text": SERVICE}, {"label": "any"}),
    ("fulltext_search", "document", {"query": "service-00001 recovery"}, {"label": "any"}),
    ("ownership_over_time", "ownership", {"service_id": SERVICE}, {}),
    ("deployments_in_window", "deployment_time", {"service_id": SERVICE, **WIDE}, {}),
    # "What changed?" naming no service over a wide window: the tenant's releases (`@4`: that
    # version, which linked every release of the window before its one sort).
    ("deployments_in_window_tenant", "deployment_time", WIDE, {}),
    ("deployments_in_window_tenant@4", "deployment_time", WIDE, {}),
    # The release anchor asked long after: the tenant's newest releases by a time.
    ("latest_deployments_tenant", "deployment_time", {"to": WIDE["to"]}, {}),
    ("runbooks_for", "runbook", {"anchor_id": SERVICE}, {"anchor": "service"}),
    ("change_events_in_window", "change_event", DAY, {"scope": "all"}),
    ("change_events_in_window", "change_event", {"service_id": SERVICE, **WIDE},
     {"scope": "service"}),
    ("dependency_neighbourhood", "dependency", {"start_id": SERVICE}, {}),
    ("documents_about", "document", {"entity_id": SERVICE}, {}),
    ("version_history", "entity", {"element_id": SERVICE}, {}),
]  # fmt: skip


def _label(template: str, options: dict[str, str | int]) -> str:
    extra = ",".join(f"{k}={v}" for k, v in sorted(options.items()))
    return f"{template}({extra})" if extra else template


def _ingest(driver: neo4j.Driver, database: str | None, services: int, tenant: str) -> None:
    began = time.monotonic()
    bundle = generate_bundle(services=services, seed=7, tenant=tenant)
    count = bundle.element_count()
    report = ingest_bundle(
        driver, LoadedBundle.from_bundles([(f"{tenant}-{services}", bundle)]), database=database
    )
    del bundle
    # Measure a settled database: a new tenant's fulltext index fills in the background.
    driver.execute_query("CALL db.awaitIndexes(600)", database_=database)
    elapsed = time.monotonic() - began
    print(
        f"ingested {tenant}: {count} elements ({services} services) in {elapsed:.0f} s; "
        f"{report.node_records_created} node records created",
        file=sys.stderr,
    )


def _measure(executor: TemplateExecutor, subject: Subject, rounds: int) -> dict[str, float]:
    compiled = [
        (_label(t, o), executor.compile(PlanStep.model_validate(
            {"template_id": t.partition("@")[0], "evidence_type": e, "params": p, "options": o,
             "template_version": int(t.partition("@")[2]) if "@" in t else None})))
        for t, e, p, o in CALLS
    ]  # fmt: skip
    working = []
    for label, query in compiled:  # warm-up: proof, plan, page cache
        try:
            for _ in range(3):
                executor.run(query, subject, KNOWN_AT)
        except Exception as exc:  # a broken template is reported, the others still measured
            print(f"{label}: failed, not measured: {str(exc).splitlines()[0]}", file=sys.stderr)
            continue
        working.append((label, query))
    out: dict[str, list[float]] = {label: [] for label, _ in compiled}
    for _ in range(rounds):  # interleaved, so load drifts hit every template alike
        for label, query in working:
            began = time.perf_counter()
            executor.run(query, subject, KNOWN_AT)
            out[label].append((time.perf_counter() - began) * 1000.0)
    return {
        label: statistics.median(values) if values else float("nan")
        for label, values in out.items()
    }


def _memory(driver: neo4j.Driver, database: str | None) -> str:
    parts = []
    try:
        records, _, _ = driver.execute_query(
            "CALL dbms.queryJmx('java.lang:type=Memory') YIELD attributes "
            "RETURN attributes.HeapMemoryUsage.value.properties AS heap",
            database_=database,
        )
        heap = records[0]["heap"]
        parts.append(
            f"Neo4j heap used {heap['used'] / 2**20:.0f} MiB of {heap['max'] / 2**20:.0f} MiB"
        )
    except (neo4j.exceptions.Neo4jError, IndexError, KeyError, TypeError):
        parts.append("Neo4j heap: not readable over JMX")
    try:
        records, _, _ = driver.execute_query(
            "CALL dbms.listConfig('server.memory.pagecache.size') YIELD value RETURN value",
            database_=database,
        )
        parts.append(f"page cache configured {records[0]['value']}")
    except (neo4j.exceptions.Neo4jError, IndexError):
        pass
    home = os.environ.get("INVESTIGATOR_STATE_DIR")
    if home:
        du = subprocess.run(
            ["du", "-sh", os.path.join(home, "home", "data", "databases", "neo4j")],
            capture_output=True,
            text=True,
        )
        if du.returncode == 0:
            parts.append(f"store on disk {du.stdout.split()[0]} (what the page cache can hold)")
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    parts.append(f"client peak RSS {peak_kib / 1024:.0f} MiB")
    return "; ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base-services", type=int, default=420)
    parser.add_argument("--large-services", type=int, default=41_700)
    parser.add_argument("--other-services", type=int, default=41_700)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--wipe", action="store_true", help="empty the database first")
    args = parser.parse_args()
    settings = resolve_connection()
    driver = open_driver(settings)
    db = settings.database
    try:
        if args.wipe:
            with driver.session(database=db) as session:
                # No timeout: emptying a store of millions takes longer than the server's 120 s.
                wipe = "MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS"
                session.run(neo4j.Query(wipe, timeout=0)).consume()
        apply_schema(driver, db)
        executor = TemplateExecutor(driver, database=db)
        _ingest(driver, db, args.base_services, TENANT)
        subject = load_subject(executor, f"{TENANT}/{SUBJECT}", "incident_investigation")
        base = _measure(executor, subject, args.rounds)
        _ingest(driver, db, args.large_services, TENANT)
        large = _measure(executor, subject, args.rounds)
        _ingest(driver, db, args.other_services, OTHER)
        beside = _measure(executor, subject, args.rounds)
        memory = _memory(driver, db)
    finally:
        driver.close()
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"uptime: {uptime}")
    print(
        f"tenant `{TENANT}`: {args.base_services} -> {args.large_services} services; "
        f"tenant `{OTHER}`: {args.other_services} services; p50 of {args.rounds} runs, ms"
    )
    print(memory)
    print()
    print(
        f"| template | p50 at {args.base_services} svc | p50 at {args.large_services} svc "
        f"| ratio (<= 1.3) | with `{OTHER}` | ratio (<= 1.2) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for label in base:
        print(
            f"| {label} | {base[label]:.1f} | {large[label]:.1f} | "
            f"{large[label] / base[label]:.2f} | {beside[label]:.1f} | "
            f"{beside[label] / large[label]:.2f} |"
        )


if __name__ == "__main__":
    main()
