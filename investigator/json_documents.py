"""The JSON documents of `--json` (and `trace --format json|prov-json`), one function each.

The CLI prints them and the MCP server returns them (`investigator.serving.backend`), so a
served tool answers exactly what the matching command prints. The models are imported only
for typing: building a document costs no import.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from investigator.context_graph.audit import ContentFilter
    from investigator.context_graph.models import RunLineage
    from investigator.investigation import InvestigationResult
    from investigator.name_hints import UnresolvedName
    from investigator.replay import ReplayReport
    from investigator.runbook_lookup import RunbookAnswer
    from investigator.runbook_text_time import AsOfFrom

TRACE_JSON_FORMATS = ("json", "prov-json")


def investigation_json(
    result: InvestigationResult,
    unresolved: Sequence[UnresolvedName] = (),
    as_of_from: AsOfFrom | None = None,
) -> str:
    """`investigate --json`: the result without its timings (they differ on every run), each
    claim with the trust of what it rests on (`claim_trust`), and `unresolved_names`: the
    `--service` and the question's names that matched nothing visible, with close matches
    (name_hints.py). A `--service` that did not resolve is not echoed as `service_id` (the
    answer does not cover it): it is the `unresolved_names` entry given as "service".
    `as_of_from` (`given` or `now`), added last when said: where the run's as_of came from,
    as the report's `As of` line, the run's record and `trace` say it."""
    from investigator.untrusted_text import unquoted_rejections

    payload = result.model_dump(mode="json", exclude={"timings"})
    claim_trust(payload)
    unquoted_rejections(payload.get("rejected"))  # a reused run recorded the words
    if any(u.given_as == "service" for u in unresolved):
        payload["service_id"] = None
    payload["unresolved_names"] = [u.model_dump(mode="json") for u in unresolved]
    if as_of_from is not None:
        payload["as_of_from"] = as_of_from
    return json.dumps(payload, ensure_ascii=False, sort_keys=False)


def claim_trust(payload: dict[str, Any]) -> None:
    """Add to each claim of an investigation's JSON `payload` its lowest evidence trust,
    `trust` (`untrusted` when any of its evidence is: imported text not ingested with
    `--trusted`, as the text report marks its evidence ids), and `untrusted_evidence_ids`:
    so a consumer need not join `evidence_ids` to `evidence[]`. Derived from the payload's
    own evidence, so a reused run's answer says the same."""
    evidence = payload.get("evidence") or []
    untrusted = {ev.get("evidence_id") for ev in evidence if ev.get("trust") != "trusted"}
    for claim in payload.get("claims") or []:
        ids = [e for e in claim.get("evidence_ids") or [] if e in untrusted]
        claim["trust"] = "untrusted" if ids else "trusted"
        claim["untrusted_evidence_ids"] = ids


def runbook_json(answer: RunbookAnswer, as_of_from: AsOfFrom, time_note: str | None) -> str:
    """`runbook --json`: the answer card (a rejection's detail never quotes untrusted words),
    and where its `as_of` came from: `as_of_from` (`given`, one time in the `text`, or `now`,
    as the run records it and trace says it) and `time_note`, the card's `Time` line (what
    became of a time written in the text; None when it has none). Those two are the asker's,
    not the lookup's: the recorded answer (the run's result, which replay compares) does not
    hold them."""
    from investigator.untrusted_text import unquoted_detail

    rejected = [r.model_copy(update={"detail": unquoted_detail(r.detail)}) for r in answer.rejected]
    payload = answer.model_copy(update={"rejected": rejected}).model_dump(mode="json")
    payload["as_of_from"] = as_of_from
    payload["time_note"] = time_note
    # Compact, as pydantic's model_dump_json printed it before these two fields.
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def trace_json(
    lineage: RunLineage,
    shown: RunLineage,
    fmt: str = "json",
    verify_problems: list[str] | None = None,
    subject_note: str | None = None,
) -> str:
    """`trace --format json|prov-json`: `shown` is `lineage` re-filtered for the reader;
    `verify_problems` the run's check against its chain and anchor, when made (marked in
    the document: `verified`, and `inv:verified` on the run's PROV activity)."""
    if fmt not in TRACE_JSON_FORMATS:
        raise ValueError(f"not a JSON trace format: {fmt!r}")  # callers check their input
    if fmt == "prov-json":
        from investigator.context_graph.prov import prov_json

        return prov_json(shown, verify_problems)
    from investigator.context_graph.trace import trace_document

    return trace_document(lineage, shown, verify_problems, subject_note).model_dump_json()


def readable_replay_report(report: ReplayReport, content: ContentFilter) -> ReplayReport:
    """The replay report re-filtered for the reader: drift details can quote recorded text.

    A runbook run's recorded "pack hash" is a digest of its recorded answer (the outcome,
    its last node), not a hash the run stored: it is withheld with the chain hashes from
    where they are withheld on (`hashes from #N on withheld` in `trace`), since it covers
    what the answer was read from; so is the re-run's, when the same (it would say it)."""
    from investigator.context_graph.audit import WITHHELD_TEXT
    from investigator.replay import ReplayReport

    doc = report.model_dump(mode="json")
    digest = report.recorded_pack_hash
    if report.command == "runbook" and content.hashes_withheld_from is not None and digest:
        doc = _replaced(doc, digest, WITHHELD_TEXT)
    return ReplayReport.model_validate(content.scrub(doc))


def _replaced(value: Any, old: str, new: str) -> Any:
    """A copy of a JSON value with `old` replaced by `new` in every string."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [_replaced(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: _replaced(v, old, new) for k, v in value.items()}
    return value


def replay_json(report: ReplayReport) -> str:
    """`replay --json` of a report already re-filtered (`readable_replay_report`)."""
    return report.model_dump_json()
