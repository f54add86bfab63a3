"""Ingest throughput (elements per second) on a generated bundle of >= 100k elements,
against a raw `UNWIND $rows ... CREATE` writer of the same records, in the same run.

Usage (against the server of `investigator db start`, or NEO4J_URI):

    .venv/bin/python benchmarks/ingest_throughput.py [--services 4200] [--seed 7]
        [--batch-size 5000] [--tenant bench] [--rounds 1]

It generates the bundle (`graph_schema.synthetic`), writes it as JSON, deletes the tenant's
previous records, then times: load + model validation, the first ingest (lookup,
whole-bundle validation, drafts and hashes, history, writes), a re-ingest of the same bundle
(a no-op: the fast path of `graph_schema.ingest_mark`, the bundle and its tenant unchanged
since the last ingest), and the same re-ingest with `full=True` (every element validated,
drafted, hashed and compared, as before the fast path). The reference is the same node and
relationship records (the writer's own drafts, built before the clock starts) written into a
second tenant with nothing but `UNWIND $rows AS row CREATE ...` in transactions of the same
size, as many in flight as the ingest keeps (`FRESH_WRITERS`), times sent as integers like
the writer does (one run with one transaction at a time is printed too, for context); it
runs before and after the ingest and the mean is used, so load changes during the run hit
both. `--rounds N` times N first ingests, each between two raw writer runs, and prints each
ratio and their median, and when each first ingest had written its first batch (the part
that nothing overlaps). The tenant is emptied by deleting its records, not its ingest mark
(the mark's counts then tell the ingest that it is not unchanged). A benchmark, not an
assertion: it prints a Markdown table for docs/benchmarks.md, with the machine's load
average.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import neo4j

from graph_schema.bundle import LoadedBundle, apply_overrides, load_bundle
from graph_schema.collector import cyclic_gc_paused
from graph_schema.records import build_drafts, bundle_sources
from graph_schema.schema_ddl import apply_schema, apply_tenant_schema
from graph_schema.synthetic import generate_bundle, write_bundle_file
from graph_schema.writer import (
    FRESH_WRITERS,
    SET_WIRE_TIMES,
    ingest_bundle,
    stored_labels,
    wire_props,
    wire_time,
)
from investigator.connection import open_driver, server_version
from investigator.settings import resolve_connection

_RAW_NODES = "UNWIND $rows AS row CREATE (n:KG:$(row.labels)) SET n = row.props " + (
    SET_WIRE_TIMES.replace("VAR", "n")
)
_RAW_EDGES = (
    "UNWIND $rows AS row "
    "MATCH (a:KG {tenant: row.tenant, id: row.from_id, version: row.from_version}) "
    "MATCH (b:KG {tenant: row.tenant, id: row.to_id, version: row.to_version}) "
    "CREATE (a)-[r:$(row.type)]->(b) SET r = row.props " + SET_WIRE_TIMES.replace("VAR", "r")
)


def _load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text(encoding="utf-8").split()[:3])
    except OSError:
        return "n/a"


def _delete_tenant(driver: neo4j.Driver, database: str | None, tenant: str) -> None:
    with driver.session(database=database) as session:
        session.run(
            "MATCH (n:KG {tenant: $tenant}) "
            "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS",
            tenant=tenant,
        ).consume()


def _raw_rows(loaded: LoadedBundle) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The writer's records as plain rows: every node version, edges on the last versions."""
    nodes, edges = build_drafts(loaded, bundle_sources(loaded))
    now = datetime.now(UTC)
    versions: dict[tuple[str, str], int] = defaultdict(int)
    node_rows = []
    for draft in nodes:
        key = (draft.tenant, draft.id)
        versions[key] += 1
        plain, times = wire_props(draft.props)
        plain["version"] = versions[key]
        times.append(["recorded_at", *wire_time(draft.explicit_recorded_at or now)])
        node_rows.append({"labels": stored_labels(draft), "props": plain, "t": times})
    edge_rows = []
    for edge in edges:
        plain, times = wire_props(edge.props)
        plain["version"] = 1
        times.append(["recorded_at", *wire_time(edge.explicit_recorded_at or now)])
        edge_rows.append(
            {
                "tenant": edge.tenant,
                "from_id": edge.from_id,
                "from_version": versions[(edge.tenant, edge.from_id)],
                "to_id": edge.to_id,
                "to_version": versions[(edge.tenant, edge.to_id)],
                "type": edge.type.value,
                "props": plain,
                "t": times,
            }
        )
    return node_rows, edge_rows


class _ShortRepr(list[dict[str, Any]]):
    """Rows the driver does not format for its debug log (see `graph_schema.writer._Rows`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<{len(self)} rows>"


def _raw_write(
    driver: neo4j.Driver,
    database: str | None,
    rows: tuple[list[dict[str, Any]], list[dict[str, Any]]],
    batch_size: int,
    writers: int = FRESH_WRITERS,
    short_repr: bool = False,
) -> float:
    """Seconds to write `rows` with `writers` transactions in flight, as a first ingest does
    (relationships once every node is written). `short_repr`: each batch in a list whose
    `repr` is short, as the ingest sends its batches."""

    def write(query: str, chunk: list[dict[str, Any]]) -> None:
        if short_repr:
            chunk = _ShortRepr(chunk)
        with driver.session(database=database) as session:
            session.execute_write(lambda tx: tx.run(query, rows=chunk).consume())

    started = time.monotonic()
    # The collector paused as the ingest pauses it: a full collection over this process's
    # bundle holds every writer thread (measured: two in flight were then no faster than one).
    with cyclic_gc_paused(), ThreadPoolExecutor(writers) as pool:
        for query, items in ((_RAW_NODES, rows[0]), (_RAW_EDGES, rows[1])):
            chunks = [items[i : i + batch_size] for i in range(0, len(items), batch_size)]
            list(pool.map(partial(write, query), chunks))
    return time.monotonic() - started


def main() -> None:
    """Run the benchmark and print the Markdown rows."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--services", type=int, default=4200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--batch-size", type=int, default=5000)
    parser.add_argument("--tenant", default="bench")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="first ingests to time, each followed by a raw writer run: on a machine whose "
        "load changes, the median ratio says more than one",
    )
    args = parser.parse_args()
    raw_tenant = f"{args.tenant}-raw"

    settings = resolve_connection()
    driver = open_driver(settings)
    db = settings.database
    version, edition = server_version(driver, db)
    apply_schema(driver, db)
    for tenant in (args.tenant, raw_tenant):
        _delete_tenant(driver, db, tenant)
    apply_tenant_schema(driver, {raw_tenant}, db)

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

        raw = _raw_rows(apply_overrides(loaded, tenant=raw_tenant))
        raw_records = len(raw[0]) + len(raw[1])
        load_before = _load_average()
        raw_before_s = _raw_write(driver, db, raw, args.batch_size)
        _delete_tenant(driver, db, raw_tenant)
        # For context: the same records one transaction at a time.
        raw_single_s = _raw_write(driver, db, raw, args.batch_size, writers=1)
        _delete_tenant(driver, db, raw_tenant)
        # For context: the same raw writer without the driver's debug formatting of its rows.
        raw_short_s = _raw_write(driver, db, raw, args.batch_size, short_repr=True)
        _delete_tenant(driver, db, raw_tenant)

        # When the first batch was written (seconds after the ingest started): what comes
        # before it (marks, validation, the first batch's drafts) is not overlapped.
        first_batch: list[float] = []

        def progress(message: str) -> None:
            if not first_batch:
                first_batch.append(time.monotonic() - started)
            if os.environ.get("BENCH_VERBOSE"):
                print(f"  {message}", flush=True)

        started, cpu = time.monotonic(), time.process_time()
        first = ingest_bundle(
            driver, loaded, database=db, batch_size=args.batch_size, progress=progress
        )
        first_s, first_cpu = time.monotonic() - started, time.process_time() - cpu
        print(
            f"round 1: first ingest {first_s:.1f}s, first batch written after "
            f"{first_batch[0]:.1f}s",
            flush=True,
        )
        started, cpu = time.monotonic(), time.process_time()
        second = ingest_bundle(driver, loaded, database=db, batch_size=args.batch_size)
        second_s, second_cpu = time.monotonic() - started, time.process_time() - cpu
        started = time.monotonic()
        full = ingest_bundle(driver, loaded, database=db, batch_size=args.batch_size, full=True)
        full_s = time.monotonic() - started
        raw_after_s = _raw_write(driver, db, raw, args.batch_size)
        _delete_tenant(driver, db, raw_tenant)
        # Further rounds: the tenant emptied again, a first ingest, then the raw writer; each
        # ingest is compared with the raw runs just before and just after it.
        ratios = [(raw_before_s + raw_after_s) / 2 / first_s]
        raw_previous_s = raw_after_s
        for _ in range(args.rounds - 1):
            _delete_tenant(driver, db, args.tenant)
            first_batch.clear()
            started = time.monotonic()
            ingest_bundle(
                driver, loaded, database=db, batch_size=args.batch_size, progress=progress
            )
            again_s = time.monotonic() - started
            raw_next_s = _raw_write(driver, db, raw, args.batch_size)
            _delete_tenant(driver, db, raw_tenant)
            ratios.append((raw_previous_s + raw_next_s) / 2 / again_s)
            print(
                f"round {len(ratios)}: first ingest {again_s:.1f}s, raw writer "
                f"{raw_previous_s:.1f}s / {raw_next_s:.1f}s: {ratios[-1]:.0%}; first batch "
                f"written after {first_batch[0]:.1f}s",
                flush=True,
            )
            raw_previous_s = raw_next_s
        load_after = _load_average()
    driver.close()

    raw_s = (raw_before_s + raw_after_s) / 2
    records = first.node_records_created + first.edge_records_created + first.tombstones_created
    print(
        f"Neo4j {version} {edition}; Python {platform.python_version()}; "
        f"{os.cpu_count()} CPUs; batch size {args.batch_size}; "
        f"load average {load_before} (start) / {load_after} (end)"
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
        f"| first ingest (lookup, validate, hash, write) | {first_s:.1f} | "
        f"{elements / first_s:,.0f} | {records:,} |"
    )
    fast = "fast path" if second.unchanged_since_last_ingest else "full comparison"
    print(
        f"| re-ingest, same bundle (no-op, {fast}) | {second_s:.2f} | "
        f"{elements / second_s:,.0f} | "
        f"{second.node_records_created + second.edge_records_created} |"
    )
    print(
        f"| re-ingest, same bundle, `full=True` (validate, hash, compare) | {full_s:.1f} | "
        f"{elements / full_s:,.0f} | {full.node_records_created + full.edge_records_created} |"
    )
    print(
        f"| reference: raw UNWIND ... CREATE of the same records, {FRESH_WRITERS} transactions "
        f"in flight like the ingest (mean of {raw_before_s:.1f}s before, {raw_after_s:.1f}s "
        f"after) | {raw_s:.1f} | {elements / raw_s:,.0f} | {raw_records:,} |"
    )
    print(
        f"| the same raw writer, one transaction at a time | {raw_single_s:.1f} | "
        f"{elements / raw_single_s:,.0f} | {raw_records:,} |"
    )
    print(
        f"| the same raw writer, batches with a short `repr` (no debug formatting) | "
        f"{raw_short_s:.1f} | {elements / raw_short_s:,.0f} | {raw_records:,} |"
    )
    print()
    print(f"first ingest / raw writer: {raw_s / first_s:.0%} of the raw writer's throughput")
    if len(ratios) > 1:
        shown = ", ".join(f"{r:.0%}" for r in ratios)
        print(f"rounds: {shown}; median {statistics.median(ratios):.0%}")
    # The client's own CPU (drafts, hashes, validation, driver): the part a loaded machine
    # starves first, and the part that does not depend on the server.
    print(
        f"client CPU: first ingest {first_cpu:.1f}s, re-ingest {second_cpu:.1f}s "
        f"({elements / second_cpu:,.0f} elements per CPU second)"
    )


if __name__ == "__main__":
    main()
