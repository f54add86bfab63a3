"""A recorded tool call read again as someone else reads it now: whether a reader may read
every row a call read, when the run kept no record of some of them (docs/security.md rule 6)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cypher_templates.executor import TemplateExecutor, TemplateRow
from cypher_templates.plan import PlanStep
from cypher_templates.registry import UnknownTemplate
from cypher_templates.subject import Subject
from graph_schema.errors import InvestigatorError
from investigator.context_graph.chain import rows_hash
from investigator.context_graph.models import CtxNodeRecord
from investigator.gate import PII_LABEL
from investigator.timeline import instant_of


def call_shape(payload: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(params, options) of a recorded call (also the older nested `params` shape)."""
    params = payload.get("params") or {}
    options = payload.get("options")
    if not options and isinstance(params, dict) and set(params) == {"params", "options"}:
        options, params = params.get("options") or {}, params.get("params") or {}
    return (params if isinstance(params, dict) else {}), (
        options if isinstance(options, dict) else {}
    )


def _recorded_step(executor: TemplateExecutor, node: CtxNodeRecord) -> tuple[PlanStep, int] | None:
    """The plan step call `node` executed, as recorded, and its template's row cap; None
    when it cannot be rebuilt (a record without its row limit, a template gone from the
    allowlist)."""
    p = node.properties
    limit, version = p.get("limit"), p.get("template_version")
    if not isinstance(limit, int) or not isinstance(version, int):
        return None
    try:
        spec = executor.registry.get(str(p.get("template_id")), version)
        params, options = call_shape(node.payload() or {})
        step = PlanStep(
            template_id=spec.id,
            template_version=version,
            params=params,
            options=options,
            evidence_type=p.get("evidence_type")
            or (spec.evidence_types[0] if spec.evidence_types else None),
            limit=limit,
        )
    except (UnknownTemplate, InvestigatorError, ValueError):
        return None
    return step, max(spec.row_cap, limit)


def _views(reader: Subject) -> list[Subject]:
    """The reader, and, when it holds `pii`, the reader without it: a run whose subject
    lacked `pii` read a record's redacted view, which a `pii` holder may read too (never a
    view wider than the reader's)."""
    if PII_LABEL not in reader.labels:
        return [reader]
    narrower = tuple(label for label in reader.labels if label != PII_LABEL)
    return [reader, reader.model_copy(update={"labels": narrower})]


def _as_the_run_read(
    rows: Sequence[TemplateRow], run_purpose: str | None, limit: int
) -> list[TemplateRow]:
    """Of rows a reader reads, those also open to the run's purpose (a record whose
    purposes the run's lacks was no row of the run), the first `limit` of them in the
    template's order: the rows the run read, if the reader reads every one of them."""
    kept = [
        row
        for row in rows
        if run_purpose is None
        or row.element.purposes is None
        or run_purpose in row.element.purposes
    ]
    return kept[:limit]


def reads_the_same_rows(
    executor: TemplateExecutor,
    calls: Sequence[CtxNodeRecord],
    reader: Subject,
    run_purpose: str | None = None,
) -> bool:
    """Whether `reader`, reading now under its own grants and purpose, reads every row each
    call read (at the call's known_at, same template and parameters): the rows hash
    then covers nothing it may not read.

    Only the reader's own reads are used, never a wider one: each call is read up to its
    template's row cap, as the reader and (a `pii` holder) as the reader without `pii`; of
    those rows, the ones open to the run's purpose `run_purpose` (another purpose, such as
    `audit`, may be open to records the run's was not), cut at the call's limit, must hash
    to the recorded rows hash. Any difference, or a call that cannot be read again, answers
    False: the hash is then withheld (a reader whose grants differ otherwise from the run's
    subject's may be withheld rows it could read; never shown rows it may not)."""
    steps = []
    for node in calls:
        rebuilt = _recorded_step(executor, node)
        known_at = instant_of(node.properties.get("known_at"))
        if rebuilt is None or known_at is None:
            return False
        steps.append((rebuilt, known_at, node))
    views = _views(reader)
    for known_at in {k for _, k, _ in steps}:
        same = [(s, n) for s, k, n in steps if k == known_at]
        to_cap = [step.model_copy(update={"limit": cap}) for (step, cap), _ in same]
        matched = [False] * len(same)
        for view in views:
            try:
                results = executor.run_together(to_cap, view, known_at, raise_on_error=False)
            except (InvestigatorError, ValueError):
                return False
            for i, (result, ((step, _), node)) in enumerate(zip(results, same, strict=True)):
                if matched[i] or result.error or step.limit is None:
                    continue
                rows = _as_the_run_read(result.rows, run_purpose, step.limit)
                matched[i] = rows_hash(rows) == node.properties.get("rows_hash")
            if all(matched):
                break
        if not all(matched):
            return False
    return True
