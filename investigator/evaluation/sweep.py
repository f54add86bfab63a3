"""The timeline sweep: every golden request at many points of its dataset's timeline.

Points (issue 16): before all data; each event's instant and one second either side; each
`valid_from` / `valid_to` boundary; after everything; and `known_at` one second before and
after each correction (a record recorded again, a retraction). Each run goes through the
library (`investigate`, `RunbookLookup`) without recording, so the sweep is a fast path; the
CLI maps the same exceptions to the same exit codes.

Checked per run: no crash (exit 1: anything but a clear bad-input, not-authorized or
unavailable answer); temporal accuracy (an admitted state record holds at `as_of` or at an
instant the question refers to; an event happened by `as_of`; a runbook returned is in force
at `as_of`); and, per request, verdict stability (the same admitted evidence never gives two
verdicts).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import neo4j
from pydantic import BaseModel, Field

from investigator.evaluation.cases import GoldenCase, GoldenSet
from investigator.evaluation.datasets import _bundle_files, _load
from investigator.evaluation.metrics import Ratio

SECOND = timedelta(seconds=1)
MARGIN = timedelta(days=1)
# Default number of sweep runs in `investigator eval` (a deterministic spread over every
# request and every point); `full` runs every request at every point.
SAMPLE_RUNS = 120
_EVENT_PROPS = ("at", "first_seen", "started_at", "finished_at", "resolved_at", "fired_at")


class SweepPoint(BaseModel):
    """One instant of the timeline to ask at (and the transaction time, for corrections)."""

    as_of: datetime
    known_at: datetime | None = None
    why: str


class SweepRun(BaseModel):
    """One request at one point."""

    case_id: str
    point: SweepPoint
    exit_code: int
    error: str | None = None
    verdict: str | None = None
    admitted: list[str] = Field(default_factory=list)
    timely: int = 0
    untimely: list[str] = Field(default_factory=list)


class SweepReport(BaseModel):
    """The sweep's figures: crashes, temporal accuracy, verdict stability."""

    mode: str
    points: int
    runs: int
    crashes: list[str] = Field(default_factory=list)
    temporal_accuracy: Ratio = Field(default_factory=Ratio)
    verdict_stability: Ratio = Field(default_factory=Ratio)
    problems: list[str] = Field(default_factory=list)
    duration_s: float = 0.0

    @property
    def passed(self) -> bool:
        """Crashes 0 and temporal accuracy >= 0.95 (nothing measured counts as held)."""
        value = self.temporal_accuracy.value
        return not self.crashes and (value is None or value >= 0.95)


def _instant(raw: Any) -> datetime | None:
    if isinstance(raw, datetime):
        return raw if raw.tzinfo else raw.replace(tzinfo=UTC)
    if not isinstance(raw, str) or len(raw) < 10 or raw[4:5] != "-":
        return None
    try:
        value = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else None


def timeline_points(dataset_dir: Path) -> list[SweepPoint]:
    """The sweep points of one dataset's bundle files (sorted, deduplicated)."""
    events: set[datetime] = set()
    bounds: set[datetime] = set()
    corrections: set[datetime] = set()
    seen_ids: set[str] = set()
    everything: set[datetime] = set()
    for file in _bundle_files(dataset_dir):
        try:
            doc = _load(file)
        except (OSError, ValueError):
            continue
        if not isinstance(doc, dict):
            continue
        records = [
            r
            for key in ("nodes", "edges", "documents")
            for r in doc.get(key) or []
            if isinstance(r, dict)
        ]
        for rec in records:
            for key in ("valid_from", "valid_to"):
                if (t := _instant(rec.get(key))) is not None:
                    bounds.add(t)
            if (t := _instant(rec.get("observed_at"))) is not None:
                events.add(t)
            raw_props = rec.get("props")
            props: dict[str, Any] = raw_props if isinstance(raw_props, dict) else {}
            for key in _EVENT_PROPS:
                if (t := _instant(props.get(key))) is not None:
                    events.add(t)
            ident = str(rec.get("key") or rec.get("id") or "")
            recorded = _instant(rec.get("recorded_at"))
            if ident and ident in seen_ids and recorded is not None:
                corrections.add(recorded)  # a second record of the same element
            seen_ids.add(ident)
            if recorded is not None:
                everything.add(recorded)
        for retraction in doc.get("retractions") or []:
            if isinstance(retraction, dict) and (t := _instant(retraction.get("at"))):
                corrections.add(t)
    everything |= events | bounds | corrections
    if not everything:
        return []
    first, last = min(everything), max(everything)
    points: dict[tuple[datetime, datetime | None], SweepPoint] = {}

    def add(as_of: datetime, why: str, known_at: datetime | None = None) -> None:
        points.setdefault((as_of, known_at), SweepPoint(as_of=as_of, known_at=known_at, why=why))

    add(first - MARGIN, "before all data")
    for t in sorted(events):
        add(t - SECOND, "event - 1 s")
        add(t, "event")
        add(t + SECOND, "event + 1 s")
    for t in sorted(bounds):
        add(t, "validity boundary")
    add(last + MARGIN, "after everything")
    for t in sorted(corrections):
        add(last + MARGIN, "known_at before a correction", t - SECOND)
        add(last + MARGIN, "known_at after a correction", t + SECOND)
    return sorted(points.values(), key=lambda p: (p.as_of, p.known_at or p.as_of))


def plan_runs(
    cases: Sequence[GoldenCase], points: dict[str, list[SweepPoint]], *, full: bool, budget: int
) -> list[tuple[GoldenCase, SweepPoint]]:
    """Which (request, point) pairs to run: all of them, or a deterministic spread."""
    pairs = [(c, p) for c in cases for p in points.get(c.dataset, [])]
    if full or len(pairs) <= budget:
        return pairs
    # Per dataset, a share of the budget in proportion to its requests; the k-th run takes
    # request k (round robin) and the point k/share along the timeline, so together the runs
    # cover the timeline from before all data to the known_at corrections.
    out: list[tuple[GoldenCase, SweepPoint]] = []
    datasets = sorted({c.dataset for c in cases})
    for name in datasets:
        group = [c for c in cases if c.dataset == name]
        pts = points.get(name, [])
        if not pts:
            continue
        share = max(len(group), round(budget * len(group) / len(cases)))
        out.extend(
            (group[k % len(group)], pts[(k * len(pts)) // share % len(pts)]) for k in range(share)
        )
    return out


def _state_ok(
    valid_from: datetime | None,
    valid_to: datetime | None,
    at: Iterable[datetime],
) -> bool:
    return any(
        (valid_from is None or valid_from <= t) and (valid_to is None or valid_to > t) for t in at
    )


def run_point(
    case: GoldenCase, point: SweepPoint, driver: neo4j.Driver, database: str | None
) -> SweepRun:
    """One request at one point through the library; exceptions become exit codes."""
    from graph_schema.errors import InvestigatorError
    from investigator.gate import EVENT_TYPES
    from investigator.investigation import InvestigationRequest, investigate
    from investigator.runbook_lookup import LookupTarget, RunbookLookup, RunbookQuery
    from investigator.timeline import reference_times, time_references

    known_at = point.known_at or case.known_at
    run = SweepRun(case_id=case.id, point=point, exit_code=0)
    try:
        if case.question is not None:
            result = investigate(
                InvestigationRequest(
                    question=case.question,
                    subject_id=case.subject,
                    purpose=case.purpose or "incident_investigation",
                    service_id=case.service,
                    as_of=point.as_of,
                    known_at=known_at,
                    budget_tokens=case.budget_tokens or 8000,
                    max_rounds=case.max_rounds or 5,
                ),
                driver=driver,
            )
            refs = [
                r.at
                for r in reference_times(
                    time_references(case.question), result.evidence, as_of=point.as_of
                )
            ]
            run.verdict = result.verdict.value if result.verdict else None
            for ev in result.evidence:
                run.admitted.append(ev.element_id)
                is_event = bool(ev.evidence_types) and set(ev.evidence_types) <= EVENT_TYPES
                happened = ev.supports_from is None or ev.supports_from <= point.as_of
                ok = happened and (
                    is_event or _state_ok(ev.valid_from, ev.valid_to, [point.as_of, *refs])
                )
                if ok:
                    run.timely += 1
                else:
                    run.untimely.append(ev.element_id)
        else:
            lookup = case.runbook
            assert lookup is not None
            target, value = next(
                (t, v)
                for t, v in (
                    (LookupTarget.SERVICE, lookup.service),
                    (LookupTarget.ALERT, lookup.alert),
                    (LookupTarget.ERROR_CODE, lookup.error_code),
                    (LookupTarget.TEXT, lookup.text),
                )
                if v
            )
            answer = RunbookLookup(driver, database=database, record=False).lookup(
                RunbookQuery(
                    target=target,
                    value=str(value),
                    subject_id=case.subject,
                    as_of=point.as_of,
                    purpose=case.purpose,
                    known_at=known_at,
                )
            )
            if answer.runbook is not None:
                rb = answer.runbook
                run.admitted.append(rb.id)
                if _state_ok(rb.valid_from, rb.valid_to, [point.as_of]):
                    run.timely += 1
                else:
                    run.untimely.append(rb.id)
    except InvestigatorError as exc:
        run.exit_code = int(getattr(exc, "exit_code", 1))
        run.error = str(exc)[:300]
    except Exception as exc:
        run.exit_code = 1
        run.error = f"{type(exc).__name__}: {str(exc)[:300]}"
    return run


def run_sweep(
    golden: GoldenSet,
    dataset_dirs: dict[str, Path],
    driver: neo4j.Driver,
    database: str | None = None,
    *,
    mode: str = "sample",
    budget: int = SAMPLE_RUNS,
    progress: Callable[[str], None] | None = None,
) -> SweepReport:
    """Run the sweep (`mode`: `sample` or `full`) and score it."""
    started = time.monotonic()
    points = {name: timeline_points(path) for name, path in dataset_dirs.items()}
    # One run per distinct request: cases differing only in as_of ask the same thing.
    requests: dict[tuple[Any, ...], GoldenCase] = {}
    for case in golden.cases:
        key = (case.dataset, case.question, case.runbook, case.service, case.subject, case.purpose)
        requests.setdefault(key, case)
    pairs = plan_runs(list(requests.values()), points, full=mode == "full", budget=budget)
    report = SweepReport(mode=mode, points=sum(len(p) for p in points.values()), runs=len(pairs))
    by_request: dict[str, dict[frozenset[str], set[str | None]]] = {}
    for n, (case, point) in enumerate(pairs, start=1):
        run = run_point(case, point, driver, database)
        if run.exit_code == 1:
            report.crashes.append(
                f"{case.id} at as_of {point.as_of.isoformat()} "
                f"known_at {point.known_at.isoformat() if point.known_at else '-'}: {run.error}"
            )
        report.temporal_accuracy = report.temporal_accuracy + Ratio(
            num=run.timely, den=run.timely + len(run.untimely)
        )
        report.problems.extend(
            f"temporal: {case.id} at {point.as_of.isoformat()} admitted {u}" for u in run.untimely
        )
        if case.question is not None and run.exit_code == 0:
            by_request.setdefault(case.id, {}).setdefault(frozenset(run.admitted), set()).add(
                run.verdict
            )
        if progress and n % 20 == 0:
            progress(f"sweep [{n}/{len(pairs)}]")
    stable = sum(1 for groups in by_request.values() for v in groups.values() if len(v) == 1)
    total = sum(len(groups) for groups in by_request.values())
    report.verdict_stability = Ratio(num=stable, den=total)
    report.problems.extend(
        f"verdict: {cid} gave {sorted(str(x) for x in v)} on the same evidence"
        for cid, groups in by_request.items()
        for v in groups.values()
        if len(v) > 1
    )
    report.duration_s = round(time.monotonic() - started, 2)
    return report
