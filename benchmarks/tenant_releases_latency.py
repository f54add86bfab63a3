"""`deployments_in_window_tenant` (`--window`) and `latest_deployments_tenant` (`--to`)
version 3 against version 4 (or `--versions OLD NEW`, e.g. `--versions 4 5` for the window's
version 5), alternated on one server.

Usage (against whatever graph NEO4J_* or the local server points at, already ingested, e.g.
a generated tenant and another beside it):
    .venv/bin/python benchmarks/tenant_releases_latency.py --subject synth/user:synth-reader \
        --known-at 2026-08-01T00:00:00Z --window 2026-06-20T00:00:00Z/2026-06-20T01:00:00Z \
        --window 2026-06-20T00:00:00Z/2026-06-21T00:00:00Z --to 2026-08-01T00:00:00Z \
        --rounds 21

For each window (each `to`): both versions' rows are compared (they must be equal), then the
versions run alternately (`--rounds` each, after 3 warm-ups) through the executor; prints p50
ms and the db hits of one PROFILE per version as a Markdown table. A measurement tool, not a
test.
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import datetime
from typing import Any

import neo4j

from cypher_templates.executor import TemplateExecutor
from cypher_templates.plan import PlanStep
from cypher_templates.subject import load_subject
from investigator.connection import open_driver
from investigator.settings import resolve_connection


def _step(params: dict[str, str], version: int) -> PlanStep:
    # A window is a period question's releases; `to` alone the newest by then (the anchor).
    template = "deployments_in_window_tenant" if "from" in params else "latest_deployments_tenant"
    return PlanStep(
        template_id=template,
        evidence_type="deployment_time",
        params=params,
        template_version=version,
    )


def _db_hits(plan: Any) -> int:
    """The db hits of a PROFILE plan and all its children."""
    return int(plan.get("dbHits", 0)) + sum(_db_hits(c) for c in plan.get("children", []))


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--subject", required=True)
    parser.add_argument("--purpose", default="incident_investigation")
    parser.add_argument("--known-at", required=True)
    parser.add_argument("--window", action="append", default=[], help="FROM/TO, ISO-8601")
    parser.add_argument(
        "--to", action="append", default=[], help="ISO-8601: latest_deployments_tenant's `to`"
    )
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--versions", type=int, nargs=2, default=[3, 4], metavar=("OLD", "NEW"))
    args = parser.parse_args()
    if not args.window and not args.to:
        parser.error("give at least one --window or --to")
    known_at = datetime.fromisoformat(args.known_at.replace("Z", "+00:00"))
    driver = open_driver(resolve_connection())
    ex = TemplateExecutor(driver)
    subject = load_subject(ex, args.subject, args.purpose)
    old, new = args.versions
    versions = (old, new)
    print(
        f"| window or to | rows | v{old} p50 ms | v{new} p50 ms | v{old} db hits | v{new} db hits |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    calls = [(t, {"from": t.split("/")[0], "to": t.split("/")[1]}) for t in args.window]
    calls += [(f"to {t}", {"to": t}) for t in args.to]
    for text, params in calls:
        results = [ex.run(_step(params, v), subject, known_at) for v in versions]
        keys = [
            [(r.element.element_id, r.element.version, r.context) for r in x.rows] for x in results
        ]
        if keys[0] != keys[1] or results[0].truncated != results[1].truncated:
            raise SystemExit(f"rows differ in {text}")
        times: dict[int, list[float]] = {v: [] for v in versions}
        for i in range(3 + args.rounds):
            for version in versions if i % 2 == 0 else versions[::-1]:
                began = time.perf_counter()
                ex.run(_step(params, version), subject, known_at)
                if i >= 3:
                    times[version].append((time.perf_counter() - began) * 1000)
        hits = {}
        for version in versions:
            compiled = ex.compile(_step(params, version))
            parameters = ex.cypher_parameters(compiled, subject, known_at)
            with driver.session(
                notifications_min_severity=neo4j.NotificationMinimumSeverity.OFF
            ) as session:
                profile = session.run("PROFILE " + compiled.text, parameters).consume().profile
            hits[version] = _db_hits(profile)
        p50 = {v: statistics.median(times[v]) for v in versions}
        print(
            f"| {text} | {len(results[1].rows)}{'+' if results[1].truncated else ''} "
            f"| {p50[old]:.1f} | {p50[new]:.1f} | {hits[old]:,} | {hits[new]:,} |"
        )
    driver.close()


if __name__ == "__main__":
    main()
