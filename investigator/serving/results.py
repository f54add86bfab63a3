"""What a served tool returns besides its document: the output schema it declares, and the
short text that stands for the document in the result's first content block.

MCP (2025-06-18) lets a tool declare `outputSchema` and return its document as
`structuredContent`; the serialized JSON in a text block is a SHOULD, for clients without
structured support. Sending both sent every result twice (about 85 KB for the seed
investigation), so the document is sent once, as `structuredContent`, and the text block
says what an agent answers from: the claims and their evidence ids, the runbook and its
owner, whether a run verifies. Untrusted text is never in it: a quoting tool's untrusted
text is in the fenced second block (untrusted_text.py), as before. The schemas come from
the pydantic models the documents are dumped from (json_documents.py).
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Mapping
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel

from investigator.failed_reads import failed_reads_line
from investigator.serving.served_words import served
from investigator.terminal import one_line

# The CLI command whose `--json` document is the structured content, named in each summary
# as the CLI's (a served caller calls the tool; served_words.CLI_FLAG finds no command here).
_COMMANDS = {
    "investigate": "`investigate --json`",
    "runbook_lookup": "`runbook --json`",
    "trace": "`trace` in format json or prov-json",
    "replay": "`replay --json`",
}
_MAX_LINE = 600  # a summary line is cut here (a claim statement, a note)


def _investigation_model() -> type[BaseModel]:
    """`investigate --json` (json_documents.investigation_json): the result, its claims
    with their trust, the names that did not resolve (and no `timings`, dropped below)."""
    from pydantic import Field

    from investigator.claims import Claim
    from investigator.investigation import InvestigationResult
    from investigator.name_hints import UnresolvedName

    class ServedClaim(Claim):
        """A claim as `investigate --json` prints it: with the trust of its evidence."""

        trust: Literal["trusted", "untrusted"]
        untrusted_evidence_ids: list[str]

    class InvestigationDocument(InvestigationResult):
        """The document `investigate --json` prints."""

        claims: list[ServedClaim]  # type: ignore[assignment]
        unresolved_names: list[UnresolvedName]
        as_of_from: Literal["given", "now"] = Field(
            description=(
                "Where as_of came from: given (the as_of argument) or now (none given); "
                "as the run records it"
            )
        )

    return InvestigationDocument


def _runbook_model() -> type[BaseModel]:
    """`runbook --json` (json_documents.runbook_json): the answer, and where its as_of came
    from (the asker's, not recorded with the answer)."""
    from pydantic import Field

    from investigator.runbook_lookup import RunbookAnswer

    class RunbookDocument(RunbookAnswer):
        """The document `runbook --json` prints."""

        as_of_from: Literal["given", "text", "now"] = Field(
            description=(
                "Where as_of came from: given (the as_of argument), one time written in a "
                "text lookup's value, or now (none given); as the run records it"
            )
        )
        time_note: str | None = Field(
            description=(
                "What became of time words in a text lookup's value: used as as_of, or not "
                "used and why; null when it has none"
            )
        )

    return RunbookDocument


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema(mode="serialization")


def _without_timings(schema: dict[str, Any]) -> dict[str, Any]:
    schema["properties"].pop("timings", None)
    schema.get("$defs", {}).pop("StageTimings", None)
    return schema


def _trace_schema() -> dict[str, Any]:
    """`trace`'s two formats: the trace document (json) or a W3C PROV-JSON document."""
    from investigator.context_graph.trace import TraceDocument

    trace = _schema(TraceDocument)
    defs = trace.pop("$defs", {})
    prov = {
        "type": "object",
        "title": "PROV-JSON",
        "description": "format prov-json: the run as a W3C PROV-JSON document",
        "required": ["prefix"],
        "properties": {"prefix": {"type": "object"}},
    }
    return {"type": "object", "anyOf": [trace, prov], "$defs": defs}


@cache
def output_schemas() -> dict[str, dict[str, Any]]:
    """Each tool's `outputSchema` (JSON Schema of its structured content), by tool name.
    Built at the first `tools/list` (`mcp token` imports this module and none of them)."""
    from investigator.replay import ReplayReport

    return {
        "investigate": _without_timings(_schema(_investigation_model())),
        "runbook_lookup": _schema(_runbook_model()),
        "trace": _trace_schema(),
        "replay": _schema(ReplayReport),
    }


def output_schema(tool: str) -> dict[str, Any] | None:
    """A copy of `tool`'s output schema (None for a tool without one)."""
    found = output_schemas().get(tool)
    return copy.deepcopy(found) if found is not None else None


# -- the text block -------------------------------------------------------------------------


def _line(value: object, limit: int = _MAX_LINE) -> str:
    return one_line(str(value), limit)


def _items(value: object) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _reasons(rejected: object) -> str:
    """`rejected_temporal x2, duplicate x1`: reason codes only (a detail may say more)."""
    counts = Counter(str(r.get("reason")) for r in _items(rejected))
    return ", ".join(f"{reason} x{n}" for reason, n in sorted(counts.items()))


def _investigation(doc: Mapping[str, Any]) -> list[str]:
    verdict = doc.get("verdict")
    lines = [
        f"run {doc.get('run_id')}: status {doc.get('status')}"
        + (f", verdict {verdict}" if verdict else "")
        + f" (rounds {doc.get('rounds')}, stop: {doc.get('stop_reason')})",
        f"as_of {doc.get('as_of')}{_as_of_source(doc)}, known_at {doc.get('known_at')}"
        + (f", service {doc.get('service_id')}" if doc.get("service_id") else ""),
    ]
    claims = _items(doc.get("claims"))
    lines.append(f"Claims ({len(claims)}):" if claims else "Claims: none")
    for claim in claims:
        untrusted = ", untrusted evidence" if claim.get("trust") == "untrusted" else ""
        ids = ", ".join(str(e) for e in claim.get("evidence_ids") or [])
        lines.append(
            f"- [{claim.get('epistemic_status')}{untrusted}] {_line(claim.get('statement'))} "
            f"(evidence: {ids})"
        )
    for key, title in (("confounders", "Confounders"), ("conflicts", "Conflicts")):
        if items := _items(doc.get(key)):
            lines.append(f"{title}: {len(items)} (in the structured content)")
    missing = _items(doc.get("missing_evidence"))
    lines.append("Missing evidence:" if missing else "Missing evidence: none")
    for gap in missing:
        flag = "required" if gap.get("required", True) else "would strengthen"
        lines.append(f"- {gap.get('evidence_type')} ({flag}): {_line(gap.get('description'))}")
    if reasons := _reasons(doc.get("rejected")):
        lines.append(f"Rejected: {reasons}")
    for unresolved in _items(doc.get("unresolved_names")):
        lines.append(f"Unresolved name: {_line(unresolved.get('note'))}")
    # The CLI card's Service, Time and Note lines: the notes are in served words already
    # (served_document); the time words' reasons are said here as the card says them.
    for note in doc.get("service_notes") or []:
        lines.append(f"Service: {_line(note)}")
    failed = failed_reads_line(
        (str(tc.get("template")), tc.get("error")) for tc in _items(doc.get("tool_calls"))
    )
    if failed is not None:
        lines.append(f"Note: {_line(failed)}")
    lines += [f"Time: {served(_line(line))}" for line in _time_word_lines(doc)]
    notes = ("time_notes", "rule_notes", "search_notes")
    for note in [n for key in notes for n in (doc.get(key) or [])]:
        lines.append(f"Note: {_line(note)}")
    lines += _untrusted_rules(doc)
    if doc.get("search_cut_short"):
        lines.append("Note: the search was cut short: what is missing was not searched to the end")
    lines.append(f"Evidence: {len(_items(doc.get('evidence')))} items (ids, text, provenance)")
    return lines


def _untrusted_rules(doc: Mapping[str, Any]) -> list[str]:
    """The untrusted rules a note names, by id: their words are in the fenced block only."""
    ids = [str(r.get("id")) for r in _items(doc.get("untrusted_rules"))]
    if not ids:
        return []
    return [
        f"Untrusted rules: {', '.join(ids)} (file, group and summary quoted in the <evidence> "
        "block that follows)"
    ]


def _time_word_lines(doc: Mapping[str, Any]) -> list[str]:
    """Why each of the question's time words was not used, as the card's Time lines say it
    (time_word_lines.py); the words alone for a document that is no investigation result."""
    words = [str(w) for w in doc.get("unresolved_time_words") or []]
    if not words and not doc.get("unresolved_time_reasons"):
        return []
    from pydantic import ValidationError

    from investigator.investigation import InvestigationResult
    from investigator.time_word_lines import unplaced_time_lines

    try:
        result = InvestigationResult.model_validate(doc)
    except ValidationError:
        return [f"not used: {_line(w, 80)!r}" for w in words]
    return unplaced_time_lines(result)


def _version(version: Mapping[str, Any]) -> str:
    """Its id, its title when trusted (an untrusted page's title is its text too), its trust."""
    trusted = version.get("trust", "trusted") == "trusted"
    title = f' "{_line(version.get("title"), 120)}"' if trusted and version.get("title") else ""
    return f"{version.get('id')}{title} (trust {version.get('trust', 'trusted')})"


def _as_of_source(doc: Mapping[str, Any]) -> str:
    """` (given)`, ` (now: none given)`, ` (from the text)`: where a run's as_of came from,
    as the run records it and `trace` says it (the `Time:` line quotes the text's words)."""
    from investigator.context_graph.run_times import as_of_source

    said = doc.get("as_of_from")
    if said not in ("given", "text", "now"):
        return ""
    return f" ({as_of_source(said, None, doc.get('time_note'))})"


def _runbook(doc: Mapping[str, Any]) -> list[str]:
    lines = [
        f"run {doc.get('run_id')}: runbook lookup of {doc.get('target')} "
        f"{_line(doc.get('query'), 120)!r}",
        f"as_of {doc.get('as_of')}{_as_of_source(doc)}, known_at {doc.get('known_at')}",
    ]
    if doc.get("time_note"):
        # What became of a time in the text: as_of from it, or why it was not used.
        lines.append(f"Time: {_line(doc.get('time_note'))}")
    runbook = doc.get("runbook")
    if isinstance(runbook, Mapping):
        lines.append(f"Runbook: {_version(runbook)}")
        if runbook.get("trust", "trusted") == "trusted":
            lines += [f"  {_line(step)}" for step in runbook.get("steps") or []]
        else:  # its steps are quoted in the fenced block only
            lines.append("  steps: untrusted, quoted in the <evidence> block that follows")
    else:
        lines.append("Runbook: none")
    owner = doc.get("owner")
    lines.append(f"Owner: {owner}" if owner else "Owner: none found")
    # The runbook's own owner, when another team (the steps may name it: "Escalate to ...").
    own = doc.get("runbook_owner")
    if isinstance(own, Mapping) and own.get("team") and own.get("team") != owner:
        lines.append(f"Runbook's own owner: {own.get('team')} (through {own.get('basis')})")
    for key, title in (("policies", "Policy"), ("alternatives", "Alternative")):
        lines += [f"{title}: {_version(v)}" for v in _items(doc.get(key))]
    if reasons := _reasons(doc.get("rejected")):
        lines.append(f"Rejected: {reasons}")
    if matches := _items(doc.get("text_matches")):
        lines.append(f"Text matches: {len(matches)} (in the structured content)")
    if doc.get("note"):
        lines.append(f"Note: {_line(doc.get('note'))}")
    lines += _untrusted_rules(doc)
    if doc.get("suggestions"):
        lines.append(f"Did you mean: {', '.join(str(s) for s in doc['suggestions'])}")
    return lines


def _trace(doc: Mapping[str, Any]) -> list[str]:
    if "nodes" not in doc:  # prov-json
        kinds = {k: len(v) for k, v in doc.items() if isinstance(v, dict) and k != "prefix"}
        return [f"PROV-JSON document: {', '.join(f'{k} {n}' for k, n in kinds.items())}"]
    kinds = Counter(str(n.get("kind")) for n in _items(doc.get("nodes")))
    lines = [
        f"run {doc.get('run_id')}: status {doc.get('status')}, verified {doc.get('verified')}, "
        f"chain_valid {doc.get('chain_valid')}",
        f"Nodes: {', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}; "
        f"edges: {len(_items(doc.get('edges')))}",
    ]
    problems = [*(doc.get("verify_problems") or []), *(doc.get("problems") or [])]
    lines += [f"Problem: {_line(p)}" for p in problems]
    marked = [n.get("seq") for n in _items(doc.get("nodes")) if n.get("trust") == "untrusted"]
    if marked or doc.get("untrusted_fields"):
        # The recorded words (a question may be another subject's) are in the fence only.
        lines.append(
            f"Recorded text: {len(marked)} nodes (trust untrusted, their untrusted_fields: a "
            "question, plan words, evidence, rejections, statements), quoted as data in the "
            "<evidence> block that follows"
        )
    return lines


def _replay(doc: Mapping[str, Any]) -> list[str]:
    lines = [
        f"run {doc.get('run_id')}: verified {doc.get('verified')}, pack_hash_match "
        f"{doc.get('pack_hash_match')}, chain_valid {doc.get('chain_valid')}",
        f"tool calls matched {doc.get('tool_calls_matched')}/{doc.get('tool_calls')}, "
        f"evidence matched {doc.get('evidence_matched')}/{doc.get('evidence')}",
    ]
    lines += [f"Drift: {d.get('kind')}: {_line(d.get('detail'))}" for d in _items(doc.get("drift"))]
    lines += [f"Problem: {_line(p)}" for p in doc.get("problems") or []]
    if doc.get("pack_hash_note"):
        lines.append(f"Note: {_line(doc.get('pack_hash_note'))}")
    return lines


_SUMMARIES = {
    "investigate": _investigation,
    "runbook_lookup": _runbook,
    "trace": _trace,
    "replay": _replay,
}


def summary_text(tool: str, document: Mapping[str, Any]) -> str:
    """The text block of `tool`'s result: what its document says, in a few lines, and
    where the whole document is (the result's structured content)."""
    lines = _SUMMARIES[tool](document) if tool in _SUMMARIES else []
    lines.append(
        f"The whole answer is this result's structured content (the JSON document of the "
        f"CLI's {_COMMANDS.get(tool, tool)}), valid against the tool's outputSchema."
    )
    return "\n".join(lines)
