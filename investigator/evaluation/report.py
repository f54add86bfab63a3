"""Gates over the per-layer metrics, and the report printed by `investigator eval`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from investigator.evaluation.metrics import LAYERS, CaseScore, Ratio, aggregate
from investigator.evaluation.sweep import SweepReport


class Gate(BaseModel):
    """A threshold a metric must meet; `none_passes` says whether "nothing measured" is fine."""

    model_config = ConfigDict(frozen=True)

    metric: str
    op: Literal[">=", "=="]
    threshold: float
    none_passes: bool = False

    def holds(self, ratio: Ratio | None) -> bool:
        """Whether the aggregate `ratio` meets the gate."""
        if ratio is None or ratio.value is None:
            return self.none_passes
        exact = ratio.num / ratio.den
        return exact >= self.threshold if self.op == ">=" else exact == self.threshold

    def case_fails(self, ratio: Ratio | None) -> bool:
        """Whether one case's ratio falls short (these cases are named when the gate fails)."""
        if ratio is None or not ratio.den:
            return False
        exact = ratio.num / ratio.den
        if self.op == "==":
            return exact != self.threshold
        return exact < 1.0 if self.threshold > 0 else False


# The thresholds of issue 8: recall and temporal accuracy >= 0.95, every safety rate exactly
# 0, claim coverage and replay exactly 1.0.
GATES: tuple[Gate, ...] = (
    Gate(metric="required_evidence_recall", op=">=", threshold=0.95),
    Gate(metric="temporal_accuracy", op=">=", threshold=0.95, none_passes=True),
    Gate(metric="acl_violation_rate", op="==", threshold=0.0, none_passes=True),
    Gate(metric="untrusted_admission_rate", op="==", threshold=0.0, none_passes=True),
    Gate(metric="deleted_admission_rate", op="==", threshold=0.0, none_passes=True),
    Gate(metric="duplicate_context_rate", op="==", threshold=0.0, none_passes=True),
    Gate(metric="budget_violation_rate", op="==", threshold=0.0, none_passes=True),
    # A run set without claims (only lookups, or only refusals) has no coverage to measure;
    # silence on answerable questions shows in claim_fact_recall and status_accuracy.
    Gate(metric="claim_evidence_coverage", op="==", threshold=1.0, none_passes=True),
    Gate(metric="deterministic_replay_rate", op="==", threshold=1.0),
)


class GateResult(BaseModel):
    """One gate's outcome and, when it failed, the cases that made it fail."""

    model_config = ConfigDict(frozen=True)

    metric: str
    op: str
    threshold: float
    value: float | None
    passed: bool
    failing_cases: list[str] = Field(default_factory=list)


class SystemReport(BaseModel):
    """One system's metrics per layer, its gates, and the per-case detail."""

    model_config = ConfigDict(frozen=True)

    system: str
    layers: dict[str, dict[str, Ratio]]
    # Per case type: cases none of whose gated metrics falls short / cases of that type.
    gate_clean_by_type: dict[str, Ratio] = Field(default_factory=dict)
    gates: list[GateResult] = Field(default_factory=list)
    passed: bool | None = None  # None for the baseline: it is a reference, not gated
    cases: list[CaseScore]


class EvalReport(BaseModel):
    """The document `investigator eval --json` prints."""

    model_config = ConfigDict(frozen=True)

    cases_path: str
    case_count: int
    cases_by_type: dict[str, int]
    passed: bool
    failing_gates: list[str]
    failing_cases: list[str]
    product: SystemReport
    baseline: SystemReport | None = None
    # The timeline sweep (issue 16): crashes 0 and temporal accuracy >= 0.95 are gates.
    sweep: SweepReport | None = None
    duration_s: float


def _metric_of(layers: dict[str, dict[str, Ratio]], name: str) -> Ratio | None:
    for metrics in layers.values():
        if name in metrics:
            return metrics[name]
    return None


def evaluate_gates(
    scores: list[CaseScore], layers: dict[str, dict[str, Ratio]]
) -> list[GateResult]:
    """Check every gate against the aggregate; name the cases behind each failure."""
    results = []
    for gate in GATES:
        ratio = _metric_of(layers, gate.metric)
        passed = gate.holds(ratio)
        failing = (
            []
            if passed
            else sorted(s.case_id for s in scores if gate.case_fails(s.metrics.get(gate.metric)))
        )
        results.append(
            GateResult(
                metric=gate.metric,
                op=gate.op,
                threshold=gate.threshold,
                value=ratio.value if ratio else None,
                passed=passed,
                failing_cases=failing,
            )
        )
    return results


def gate_clean_by_type(scores: list[CaseScore]) -> dict[str, Ratio]:
    """Per case type, how many cases meet every gate on their own (same rules for both systems)."""
    totals: dict[str, Ratio] = {}
    for score in scores:
        clean = not any(g.case_fails(score.metrics.get(g.metric)) for g in GATES)
        prev = totals.get(score.case_type, Ratio())
        totals[score.case_type] = prev + Ratio(num=int(clean), den=1)
    return dict(sorted(totals.items()))


def system_report(system: str, scores: list[CaseScore], *, gated: bool) -> SystemReport:
    """Aggregate one system's case scores; gate them if `gated`."""
    layers = aggregate(scores)
    gates = evaluate_gates(scores, layers) if gated else []
    return SystemReport(
        system=system,
        layers=layers,
        gate_clean_by_type=gate_clean_by_type(scores),
        gates=gates,
        passed=all(g.passed for g in gates) if gated else None,
        cases=scores,
    )


def _fmt(ratio: Ratio | None) -> str:
    if ratio is None:
        return "n/a"
    if ratio.value is None:
        return "- (0/0)"
    return f"{ratio.value:.3f} ({ratio.num}/{ratio.den})"


def render_table(report: EvalReport) -> str:
    """A Markdown table: every metric per layer, product and baseline side by side, gates."""
    gate_of = {g.metric: g for g in report.product.gates}
    lines = [
        "| layer | metric | product | naive baseline | gate |",
        "| --- | --- | --- | --- | --- |",
    ]
    for layer, names in LAYERS.items():
        for name in names:
            prod = report.product.layers.get(layer, {}).get(name)
            base = report.baseline.layers.get(layer, {}).get(name) if report.baseline else None
            gate = gate_of.get(name)
            gate_txt = ""
            if gate is not None:
                gate_txt = f"{gate.op} {gate.threshold:g} {'pass' if gate.passed else 'FAIL'}"
            lines.append(f"| {layer} | {name} | {_fmt(prod)} | {_fmt(base)} | {gate_txt} |")
    return "\n".join(lines)


def render_type_table(report: EvalReport) -> str:
    """Per case type: cases meeting every gate on their own, product and baseline."""
    lines = [
        "| case type | product: cases meeting every gate | naive baseline |",
        "| --- | --- | --- |",
    ]
    for case_type, ratio in report.product.gate_clean_by_type.items():
        base = report.baseline.gate_clean_by_type.get(case_type) if report.baseline else None
        lines.append(f"| {case_type} | {ratio.num}/{ratio.den} | {_frac(base)} |")
    return "\n".join(lines)


def _frac(ratio: Ratio | None) -> str:
    return "n/a" if ratio is None else f"{ratio.num}/{ratio.den}"


def render_text(report: EvalReport) -> str:
    """The terminal report: counts, the table, failing gates and the problems per case."""
    by_type = ", ".join(f"{t} {n}" for t, n in sorted(report.cases_by_type.items()))
    out = [
        f"golden set: {report.cases_path} ({report.case_count} cases: {by_type})",
        "",
        render_table(report),
        "",
        render_type_table(report),
        "",
    ]
    if report.sweep is not None:
        sw = report.sweep
        out += [
            f"timeline sweep ({sw.mode}): {sw.runs} runs over {sw.points} points in "
            f"{sw.duration_s:.1f}s: crashes {len(sw.crashes)} (gate == 0), temporal_accuracy "
            f"{_fmt(sw.temporal_accuracy)} (gate >= 0.95), verdict_stability "
            f"{_fmt(sw.verdict_stability)}",
            *(f"  crash: {c}" for c in sw.crashes[:10]),
            *(f"  {p}" for p in sw.problems[:10]),
            "",
        ]
    if report.passed:
        out.append(f"all gates passed in {report.duration_s:.1f}s")
    else:
        out.append(f"FAILED gates: {', '.join(report.failing_gates)}")
        for gate in report.product.gates:
            if not gate.passed:
                out.append(f"  {gate.metric} = {gate.value}: {', '.join(gate.failing_cases)}")
        # Per failing case, the problems behind the failing gates (and a failed command);
        # every other problem of every case is in the per-case detail of `--json`.
        out.append("problems behind the failing gates:")
        shown = {*report.failing_gates, "status_accuracy"}
        by_id = {s.case_id: s for s in report.product.cases}
        for case_id in report.failing_cases:
            for problem in by_id[case_id].problems:
                if problem.split(":", 1)[0] in shown:
                    out.append(f"  {case_id}: {problem}")
        out.append("(every problem of every case: `investigator eval --json`, cases[].problems)")
    return "\n".join(out)
