"""The JSON documents of `--json` (and `trace --format json|prov-json`), one function each.

The CLI prints them and the MCP server returns them (`investigator.serving.backend`), so a
served tool answers exactly what the matching command prints. The models are imported only
for typing: building a document costs no import.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from investigator.context_graph.audit import ContentFilter
    from investigator.context_graph.models import RunLineage
    from investigator.investigation import InvestigationResult
    from investigator.replay import ReplayReport
    from investigator.runbook_lookup import RunbookAnswer

TRACE_JSON_FORMATS = ("json", "prov-json")


def investigation_json(result: InvestigationResult) -> str:
    """`investigate --json`: the result without its timings (they differ on every run)."""
    payload = result.model_dump(mode="json", exclude={"timings"})
    return json.dumps(payload, ensure_ascii=False, sort_keys=False)


def runbook_json(answer: RunbookAnswer) -> str:
    """`runbook --json`: the answer card."""
    return answer.model_dump_json()


def trace_json(lineage: RunLineage, shown: RunLineage, fmt: str = "json") -> str:
    """`trace --format json|prov-json`: `shown` is `lineage` re-filtered for the reader."""
    if fmt not in TRACE_JSON_FORMATS:
        raise ValueError(f"not a JSON trace format: {fmt!r}")  # callers check their input
    if fmt == "prov-json":
        from investigator.context_graph.prov import prov_json

        return prov_json(shown)
    from investigator.context_graph.trace import trace_document

    return trace_document(lineage, shown).model_dump_json()


def readable_replay_report(report: ReplayReport, content: ContentFilter) -> ReplayReport:
    """The replay report re-filtered for the reader: drift details can quote recorded text."""
    from investigator.replay import ReplayReport

    return ReplayReport.model_validate(content.scrub(report.model_dump(mode="json")))


def replay_json(report: ReplayReport) -> str:
    """`replay --json` of a report already re-filtered (`readable_replay_report`)."""
    return report.model_dump_json()
