"""The evaluation run: prepare the graph, run every case on the product and the baseline,
score both with the same metrics, gate the product."""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import neo4j

from investigator.evaluation.baseline import NaiveFulltextBaseline
from investigator.evaluation.cases import GoldenSet
from investigator.evaluation.datasets import bundle_paths, documented_grants, prepare
from investigator.evaluation.metrics import CaseScore, score_case
from investigator.evaluation.product import run_product_case
from investigator.evaluation.report import EvalReport, system_report
from investigator.evaluation.sweep import SweepReport, run_sweep

Progress = Callable[[str], None]


def run_evaluation(
    golden: GoldenSet,
    cases_path: Path,
    driver: neo4j.Driver,
    database: str | None = None,
    *,
    setup: bool = True,
    progress: Progress | None = None,
    sweep: str = "sample",
) -> EvalReport:
    """Run the golden set end to end and return the report (the caller decides the exit)."""
    started = time.monotonic()
    say = progress or (lambda _msg: None)
    with tempfile.TemporaryDirectory(prefix="investigator-eval-") as tmp:
        paths = bundle_paths(list(golden.datasets), Path(tmp))
        if setup:
            say("setting up: schema apply + ingest of the golden set's datasets")
            prepare(list(golden.datasets), paths, driver, database)
        grants = documented_grants(paths)
        sweep_report: SweepReport | None = None
        if sweep != "off":
            say(f"timeline sweep ({sweep}): every request across its dataset's timeline")
            sweep_report = run_sweep(golden, paths, driver, database, mode=sweep, progress=say)
    baseline = NaiveFulltextBaseline(driver, database)
    product_scores: list[CaseScore] = []
    baseline_scores: list[CaseScore] = []
    total = len(golden.cases)
    with baseline.index():
        for n, case in enumerate(golden.cases, start=1):
            outcome = run_product_case(case)
            score = score_case(case, outcome, grants.get(case.subject))
            product_scores.append(score)
            naive = baseline.run_case(case)
            baseline_scores.append(score_case(case, naive, grants.get(case.subject)))
            mark = "ok" if not score.problems else f"{len(score.problems)} problem(s)"
            say(f"[{n}/{total}] {case.id}: exit {outcome.exit_code} {outcome.status or ''} {mark}")
    product = system_report("product", product_scores, gated=True)
    base = system_report("baseline", baseline_scores, gated=False)
    failing_gates = [g.metric for g in product.gates if not g.passed]
    failing_cases = sorted({c for g in product.gates for c in g.failing_cases})
    if sweep_report is not None and not sweep_report.passed:
        if sweep_report.crashes:
            failing_gates.append("sweep_crashes")
        if not (sweep_report.temporal_accuracy.value or 0.0) >= 0.95:
            failing_gates.append("sweep_temporal_accuracy")
        failing_cases = sorted(
            {*failing_cases, *(c.split(" ", 1)[0] for c in sweep_report.crashes)}
        )
    return EvalReport(
        cases_path=str(cases_path),
        case_count=total,
        cases_by_type=dict(sorted(Counter(c.type.value for c in golden.cases).items())),
        passed=bool(product.passed) and (sweep_report is None or sweep_report.passed),
        failing_gates=failing_gates,
        failing_cases=failing_cases,
        product=product,
        baseline=base,
        sweep=sweep_report,
        duration_s=round(time.monotonic() - started, 2),
    )
