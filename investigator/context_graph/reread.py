"""A recorded tool call read again as someone else reads it now: whether a reader may read
every row a call read, when the run kept no record of some of them (docs/security.md rule 6)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cypher_templates.executor import TemplateExecutor
from cypher_templates.plan import PlanStep
from cypher_templates.registry import UnknownTemplate
from cypher_templates.subject import Subject
from graph_schema.errors import InvestigatorError
from investigator.context_graph.chain import rows_hash
from investigator.context_graph.models import CtxNodeRecord
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


def _recorded_step(executor: TemplateExecutor, node: CtxNodeRecord) -> PlanStep | None:
    """The plan step call `node` executed, as recorded; None when it cannot be rebuilt (a
    record without its row limit, a template gone from the allowlist)."""
    p = node.properties
    limit, version = p.get("limit"), p.get("template_version")
    if not isinstance(limit, int) or not isinstance(version, int):
        return None
    try:
        spec = executor.registry.get(str(p.get("template_id")), version)
        params, options = call_shape(node.payload() or {})
        return PlanStep(
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


def reads_the_same_rows(
    executor: TemplateExecutor, calls: Sequence[CtxNodeRecord], reader: Subject
) -> bool:
    """Whether `reader`, reading now under its own grants and purpose, reads exactly the
    rows each call read (at the call's known_at, same template, parameters and limit): the
    rows hash then covers nothing it may not read. One read transaction for them all; any
    call that cannot be read again so answers False."""
    steps = []
    for node in calls:
        step = _recorded_step(executor, node)
        known_at = instant_of(node.properties.get("known_at"))
        if step is None or known_at is None:
            return False
        steps.append((step, known_at))
    for known_at in {k for _, k in steps}:
        same = [(s, n) for (s, k), n in zip(steps, calls, strict=True) if k == known_at]
        try:
            results = executor.run_together(
                [s for s, _ in same], reader, known_at, raise_on_error=False
            )
        except (InvestigatorError, ValueError):
            return False
        for result, (_, node) in zip(results, same, strict=True):
            if result.error or rows_hash(result.rows) != node.properties.get("rows_hash"):
                return False
    return True
