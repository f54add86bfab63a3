"""Ingest throughput (elements per second) on a generated bundle of >= 100k elements.

Usage (against the server of `investigator db start`, or NEO4J_URI):

    .venv/bin/python benchmarks/ingest_throughput.py [--services 4200] [--seed 7]
        [--batch-size 1000] [--tenant bench]

It generates the bundle (`graph_schema.synthetic`), writes it as JSON, deletes the
tenant's previous records, then times: load + model validation, the first ingest
(lookup, whole-bundle validation, writes), and a re-ingest of the same bundle (a no-op).
A benchmark, not an assertion: it prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

from graph_schema.bundle import load_bundle
from graph_schema.schema_ddl import apply_schema
from graph_schema.synthetic import generate_bundle, write_bundle_file
from graph_schema.writer import ingest_bundle
from investigator.connection import open_driver, server_version
from investigator.settings import resolve_connection


def main() -> None:
    """Run the benchmark and print the Markdown rows."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--services", type=int, default=4200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--tenant", default="bench")
    args = parser.parse_args()

    settings = resolve_connection()
    driver = open_driver(settings)
    version, edition = server_version(driver, settings.database)
    apply_schema(driver, settings.database)
    with driver.session(database=settings.database) as session:
        session.run(
            "MATCH (n:KG {tenant: $tenant}) "
            "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS",
            tenant=args.tenant,
        ).consume()

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.json"
        started = time.monotonic()
        bundle = generate_bundle(args.services, args.seed, tenant=args.tenant)
        write_bundle_file(bundle, path)
        generate_s = time.monotonic() - started
        size_mb = path.stat().st_size / 1e6

        started = time.monotonic()
        loaded = load_bundle(path)
        load_s = time.monotonic() - started
        assert not loaded.problems, loaded.problems[:3]
        elements = loaded.element_count()

        def progress(message: str) -> None:
            if os.environ.get("BENCH_VERBOSE"):
                print(f"  {message}", flush=True)

        started = time.monotonic()
        first = ingest_bundle(
            driver,
            loaded,
            database=settings.database,
            batch_size=args.batch_size,
            progress=progress,
        )
        first_s = time.monotonic() - started
        started = time.monotonic()
        second = ingest_bundle(driver, loaded, database=settings.database)
        second_s = time.monotonic() - started
    driver.close()

    records = first.node_records_created + first.edge_records_created + first.tombstones_created
    print(
        f"Neo4j {version} {edition}; Python {platform.python_version()}; "
        f"{os.cpu_count()} CPUs; batch size {args.batch_size}"
    )
    print(
        f"bundle: {args.services} services, seed {args.seed}, {elements} elements, "
        f"{size_mb:.1f} MB JSON, generated in {generate_s:.1f}s"
    )
    print()
    print("| step | seconds | elements/s | records written |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| load + model validation (JSON) | {load_s:.1f} | {elements / load_s:,.0f} | - |")
    print(
        f"| first ingest (lookup, validate, write) | {first_s:.1f} | "
        f"{elements / first_s:,.0f} | {records:,} |"
    )
    print(
        f"| re-ingest, same bundle (no-op) | {second_s:.1f} | {elements / second_s:,.0f} | "
        f"{second.node_records_created + second.edge_records_created} |"
    )
    print(
        f"| load + first ingest | {load_s + first_s:.1f} | {elements / (load_s + first_s):,.0f} | |"
    )


if __name__ == "__main__":
    main()
