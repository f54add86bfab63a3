"""Per-template latency (p50/p95) of the allowlisted templates through the executor.

Usage (against whatever graph NEO4J_* or the local server points at, already ingested):
    .venv/bin/python benchmarks/template_latency.py --subject acme/user:alice \
        --purpose incident_investigation --runs 30 [--label "demo graph"]

Parameters for each template are discovered from the graph (the first visible element of
the right type), so the same script runs on the demo dataset and on a generated graph.
Prints a Markdown table for docs/benchmarks.md. A measurement tool, not a test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

import neo4j

from cypher_templates.executor import TemplateExecutor
from cypher_templates.plan import PlanStep
from cypher_templates.subject import Subject, load_subject
from investigator.connection import open_driver
from investigator.settings import resolve_connection


def _first(ex: TemplateExecutor, subject: Subject, label: str, known_at: datetime) -> str | None:
    """The id of one visible element with `label`, found through the allowlisted resolver."""
    step = PlanStep(
        template_id="fulltext_search",
        evidence_type="entity",
        params={"query": label.lower()},
        options={"label": label},
        limit=1,
    )
    rows = ex.run(step, subject, known_at).rows
    if rows:
        return rows[0].element.element_id
    return None


def _steps(
    ex: TemplateExecutor,
    subject: Subject,
    known_at: datetime,
    service: str | None,
    incident: str | None,
) -> list[PlanStep]:
    svc = service or _first(ex, subject, "Service", known_at) or "svc:none"
    inc = incident or _first(ex, subject, "Incident", known_at) or "incident:none"
    window = {
        "from": (known_at - timedelta(days=365)).isoformat(),
        "to": known_at.isoformat(),
    }
    specs: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = [
        ("entity_resolution", "entity", {"text": svc}, {}),
        ("entity_resolution", "entity", {"text": "Payment-API"}, {}),
        ("fulltext_search", "document", {"query": "payment errors"}, {}),
        ("ownership_over_time", "ownership", {"service_id": svc}, {}),
        ("deployments_in_window", "deployment_time", {"service_id": svc, **window}, {}),
        ("incident_context", "affected_service", {"incident_id": inc}, {}),
        ("runbooks_for", "runbook", {"anchor_id": svc}, {"anchor": "service"}),
        ("change_events_in_window", "change_event", window, {}),
        (
            "change_events_in_window",
            "change_event",
            {**window, "service_id": svc},
            {"scope": "service"},
        ),
        ("dependency_neighbourhood", "dependency", {"start_id": svc}, {"hops": 1}),
        ("dependency_neighbourhood", "dependency", {"start_id": svc}, {"hops": 3}),
        ("documents_about", "document", {"entity_id": svc}, {}),
        ("version_history", "entity", {"element_id": svc}, {}),
    ]
    return [
        PlanStep(template_id=t, evidence_type=e, params=p, options=o)  # type: ignore[arg-type]
        for t, e, p, o in specs
    ]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def main(argv: list[str] | None = None) -> int:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subject", required=True)
    parser.add_argument("--purpose", default="incident_investigation")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--label", default="graph")
    parser.add_argument("--service", help="service id to anchor on (default: discovered)")
    parser.add_argument("--incident", help="incident id (default: discovered)")
    args = parser.parse_args(argv)
    driver = open_driver(resolve_connection())
    try:
        nodes = driver.execute_query(
            "MATCH (n:KG) RETURN count(n) AS n", routing_=neo4j.RoutingControl.READ
        ).records[0]["n"]
        rels = driver.execute_query(
            "MATCH (:KG)-[r]->(:KG) RETURN count(r) AS n", routing_=neo4j.RoutingControl.READ
        ).records[0]["n"]
        ex = TemplateExecutor(driver)
        known_at = datetime.now(UTC)
        subject = load_subject(ex, args.subject, args.purpose, known_at)
        print(f"### {args.label}: {nodes} KG node records, {rels} edge records\n")
        print(f"subject `{args.subject}`, purpose `{args.purpose}`, {args.runs} runs each\n")
        print("| template | options | rows | p50 ms | p95 ms |")
        print("| --- | --- | ---: | ---: | ---: |")
        for step in _steps(ex, subject, known_at, args.service, args.incident):
            ex.run(step, subject, known_at)  # warm the plan cache and the read-only proof
            timings, rows = [], 0
            for _ in range(args.runs):
                result = ex.run(step, subject, known_at)
                timings.append(result.duration_ms)
                rows = result.row_count
            opts = ", ".join(f"{k}={v}" for k, v in sorted(step.options.items()))
            if step.template_id == "entity_resolution":
                opts = f"text={step.params['text']}"
            opts = opts or "-"
            print(
                f"| {step.template_id} | {opts} | {rows} | "
                f"{statistics.median(timings):.1f} | {_percentile(timings, 0.95):.1f} |"
            )
    finally:
        driver.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
