"""End-to-end investigation latency on the demo graph, per stage (p50 / p95).

Usage (against a scratch server that NEO4J_* or the local server points at; it ingests the
demo dataset idempotently and, with --record, adds Ctx runs to that database):
    .venv/bin/python benchmarks/investigate_latency.py --runs 20 --record

Each question runs once cold (a fresh TemplateExecutor: the read-only EXPLAIN check of every
template variant and the server's query planning are paid) and then --runs times warm, with
the questions interleaved so that neighbours' load hits them alike. Stage figures come from
`InvestigationResult.timings` (milliseconds). Prints Markdown for docs/benchmarks.md.
A measurement tool, not a test.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

import neo4j

from cypher_templates.executor import TemplateExecutor
from cypher_templates.plan import PlanStep
from cypher_templates.subject import load_subject
from graph_schema.bundle import load_bundle
from graph_schema.schema_ddl import apply_schema
from graph_schema.writer import ingest_bundle
from investigator.connection import open_driver
from investigator.investigation import InvestigationRequest, InvestigationResult, investigate
from investigator.settings import resolve_connection

DATASET = Path(__file__).resolve().parents[1] / "datasets" / "payments-incident"
AS_OF = datetime(2026, 7, 23, 10, 3, tzinfo=UTC)
KNOWN_AT = datetime(2026, 8, 1, tzinfo=UTC)

QUESTIONS: dict[str, InvestigationRequest] = {
    "seed (correlation + owner + runbook)": InvestigationRequest(
        question="Was the 10:02 release of payment-api related to the PAY-4097 errors? "
        "Who owned the service at that moment? Which runbook version applied?",
        service_id="svc:payment-api",
        subject_id="acme/user:alice",
        as_of=AS_OF,
        known_at=KNOWN_AT,
    ),
    "owner only": InvestigationRequest(
        question="Who owned svc:payment-api at that moment?",
        subject_id="acme/user:bob",
        as_of=AS_OF,
        known_at=KNOWN_AT,
    ),
    "absent entity (partial)": InvestigationRequest(
        question="Who owned svc:inventory-service at that moment?",
        subject_id="acme/user:bob",
        as_of=AS_OF,
        known_at=KNOWN_AT,
    ),
}
STAGES = (
    "subject_ms",
    "executor_ms",
    "retrieval_ms",
    "gate_ms",
    "pack_ms",
    "claims_ms",
    "record_ms",
    "total_ms",
)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _direct_ms(
    driver: neo4j.Driver,
    executor: TemplateExecutor,
    request: InvestigationRequest,
    result: InvestigationResult,
) -> float:
    """The same template queries the run made, sent straight through the driver (ms).

    The reference of issue 12: the compiled text and the exact parameters of each tool call,
    one `execute_query` each, no allowlist check, no typing, no gate, no recording.
    """
    subject = load_subject(executor, request.subject_id, result.purpose)
    began = time.perf_counter()
    for call in result.tool_calls:
        step = PlanStep.model_validate(
            {
                "template_id": call.template_id,
                "template_version": call.template_version,
                "params": call.params,
                "options": call.options,
                "evidence_type": call.evidence_type or "entity",
                "limit": call.limit,
            }
        )
        compiled = executor.compile(step)
        parameters = executor.cypher_parameters(compiled, subject, call.known_at)
        driver.execute_query(
            compiled.text,
            parameters,
            database_=executor.database,
            routing_=neo4j.RoutingControl.READ,
        )
    return (time.perf_counter() - began) * 1000.0


def main() -> None:
    """Run the measurement and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--record", action="store_true", help="Record runs (RunRecorder).")
    args = parser.parse_args()
    # The direct reference runs through the driver's defaults, which log every notification.
    logging.getLogger("neo4j").setLevel(logging.ERROR)
    settings = resolve_connection()
    driver = open_driver(settings)
    apply_schema(driver, settings.database)
    ingest_bundle(driver, load_bundle(DATASET), database=settings.database)
    recorder = None
    if args.record:
        from investigator.context_graph import RunRecorder

        recorder = RunRecorder(driver)

    def once(request: InvestigationRequest, executor: TemplateExecutor) -> InvestigationResult:
        return investigate(request, driver=driver, executor=executor, recorder=recorder)

    cold: dict[str, InvestigationResult] = {}
    for name, request in QUESTIONS.items():
        cold[name] = once(request, TemplateExecutor(driver))
    warm: dict[str, list[InvestigationResult]] = {name: [] for name in QUESTIONS}
    executor = TemplateExecutor(driver)
    for request in QUESTIONS.values():
        once(request, executor)  # warm this executor's read-only checks
    started = time.perf_counter()
    for _ in range(args.runs):
        for name, request in QUESTIONS.items():
            warm[name].append(once(request, executor))
    elapsed = time.perf_counter() - started
    direct: dict[str, list[float]] = {name: [] for name in QUESTIONS}
    for _ in range(args.runs):
        for name, results in warm.items():
            direct[name].append(_direct_ms(driver, executor, QUESTIONS[name], results[0]))
    driver.close()

    print(
        f"{args.runs} warm runs per question, recorder {'on' if recorder else 'off'}, "
        f"{elapsed:.1f} s in all\n"
    )
    header = "| question | stage | cold ms | warm p50 ms | warm p95 ms |"
    print(header)
    print("| --- | --- | ---: | ---: | ---: |")
    for name, results in warm.items():
        first = results[0]
        print(
            f"| {name} | (status {first.status.value}, {first.rounds} rounds, "
            f"{len(first.tool_calls)} tool calls, {len(first.evidence)} evidence) | | | |"
        )
        for stage in STAGES:
            values = [getattr(r.timings, stage) for r in results]
            print(
                f"| | {stage.removesuffix('_ms')} | {getattr(cold[name].timings, stage):.1f} | "
                f"{statistics.median(values):.1f} | {_pct(values, 0.95):.1f} |"
            )
        print(
            f"| | reference: the same {len(first.tool_calls)} queries, driver only | | "
            f"{statistics.median(direct[name]):.1f} | {_pct(direct[name], 0.95):.1f} |"
        )
    print()
    print("| question | (total - record) p50 / reference p50 (target <= 2) | record share |")
    print("| --- | ---: | ---: |")
    for name, results in warm.items():
        total = statistics.median(r.timings.total_ms for r in results)
        record = statistics.median(r.timings.record_ms for r in results)
        reference = statistics.median(direct[name])
        print(f"| {name} | {(total - record) / reference:.2f} | {record / total:.0%} |")


if __name__ == "__main__":
    main()
