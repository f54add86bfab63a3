"""What a served caller reads (`investigator mcp`, the SDK's real client over stdio and HTTP,
the real Neo4j of the test session, the demo dataset):

- the summary carries the notes the CLI card prints: the question naming another service
  than the `service` argument, and why a time the question names was not used (after as_of);
  the runbook's own owner when another team than the service's owner;
- no served text tells the caller to type a CLI flag: every note, gap, time line and error
  template of the package goes through one mapping (served_words.served) that puts the tool's
  argument (`as_of`, `deadline_seconds`, target/value) in the flag's place; a template walk
  checks each one, so a new note with a flag fails here until the mapping covers it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mcp.types import CallToolResult
from test_serving_mcp import (
    BOB_TOKEN,
    DEADLINE,
    REPO,
    http,
    http_server,
    ok,
    run_async,
    server_env,
    stdio,
    text,
)

from investigator.serving.served_words import CLI_FLAG, served

__all__ = ["http_server", "server_env"]  # module fixtures, used by name

CLASH = {
    "question": "who owned svc:payment-api?",
    "service": "svc:checkout",
    "as_of": "2026-07-23T10:30:00Z",
    "deadline_seconds": DEADLINE,
}
LATE_TIME = {
    "question": "who owned payment-api on 2026-07-25?",
    "as_of": "2026-07-20T00:00:00Z",
    "deadline_seconds": DEADLINE,
}


def _served_texts(doc: dict[str, Any]) -> list[str]:
    """The generated texts of an investigate document: notes, gaps, names, time reasons."""
    texts = [
        str(n)
        for key in ("time_notes", "rule_notes", "search_notes", "service_notes")
        for n in doc.get(key) or []
    ]
    texts += [str(g["description"]) for g in doc.get("missing_evidence") or []]
    texts += [str(u["note"]) for u in doc.get("unresolved_names") or []]
    texts += [str(u["detail"]) for u in doc.get("unresolved_time_reasons") or []]
    return texts


def _no_cli_flag(result: CallToolResult, doc: dict[str, Any]) -> str:
    summary = text(result)
    for said in [summary, *_served_texts(doc)]:
        assert not CLI_FLAG.search(said), said
    return summary


def _check_clash(result: CallToolResult) -> None:
    doc = ok(result)
    summary = _no_cli_flag(result, doc)
    # The card's Service line: the argument left from an earlier call is seen.
    assert doc["service_notes"], doc
    line = next(s for s in summary.splitlines() if s.startswith("Service: "))
    assert "the question names svc:payment-api while `service` is svc:checkout" in line, line
    assert "an earlier call's `service`? drop or change it" in line, line


def test_stdio_summary_says_the_service_clash_and_why_a_time_was_not_used(  # type: ignore[no-untyped-def]
    demo_graph, server_env
) -> None:
    async def main() -> None:
        async with stdio(server_env, "--subject", "acme/user:bob") as client:
            _check_clash(await client.call_tool("investigate", CLASH))

            late = await client.call_tool("investigate", LATE_TIME)
            summary = _no_cli_flag(late, ok(late))
            line = next(s for s in summary.splitlines() if "on 2026-07-25" in s)
            # Why, as the card says it, with the argument to give instead of the flag.
            assert line.startswith("Time: not used: 'on 2026-07-25' is after as_of"), line
            assert "Give a later `as_of` to ask about that time" in line, line

            # The runbook's own owner (its steps say whom to escalate to) beside the owner.
            card = await client.call_tool(
                "runbook_lookup",
                {"target": "service", "value": "svc:payment-api", "as_of": "2026-07-24T12:00:00Z"},
            )
            answer = ok(card)
            assert answer["owner"] == "team:payments-platform", answer["owner"]
            assert "Runbook's own owner: team:payments-core" in text(card), text(card)

    run_async(main)


def test_http_summary_says_the_service_clash_in_argument_words(  # type: ignore[no-untyped-def]
    demo_graph, http_server
) -> None:
    async def main() -> None:
        async with http(http_server, BOB_TOKEN) as client:
            _check_clash(await client.call_tool("investigate", CLASH))

    run_async(main)


# -- every template ---------------------------------------------------------------------------

# Not served: the CLI's own modules, the evaluation harness, and the mapping itself.
_NOT_SERVED = ("cli", "evaluation")


def _literals(path: Path) -> Iterator[tuple[int, str]]:
    """Each string literal of `path` but docstrings, an f-string with its values as `X`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skip.add(id(first.value))
        if isinstance(node, ast.JoinedStr):
            skip.update(id(v) for v in node.values)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value
        elif isinstance(node, ast.JoinedStr):
            parts = (v.value if isinstance(v, ast.Constant) else "X" for v in node.values)
            yield node.lineno, "".join(str(p) for p in parts)


def test_every_note_template_naming_a_cli_flag_is_served_in_argument_words() -> None:
    package = REPO / "investigator"
    walked = []
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package).parts
        if parts[0] in _NOT_SERVED or path.name == "served_words.py":
            continue
        for line, literal in _literals(path):
            if CLI_FLAG.search(literal):
                walked.append(literal)
                said = served(literal)
                assert not CLI_FLAG.search(said), f"{path.name}:{line}: {said!r}"
    # The walk sees the notes of the finding: the deadline gap, an alert rule's id, as_of.
    assert {"a longer --deadline-seconds", "investigator runbook --alert"} <= set(walked)
    assert any("ask with --as-of inside that interval" in w for w in walked)
    assert len(walked) > 40, len(walked)


def test_the_mapping_reads_as_the_served_arguments() -> None:
    assert served("ask again with a longer --deadline-seconds") == (
        "ask again with a longer `deadline_seconds`"
    )
    assert served("ask for it by id (investigator runbook --alert Zork@page), or paste") == (
        'ask for it by id (`runbook_lookup` with target "alert", value Zork@page), or paste'
    )
    assert served("`investigator trace run-1 --subject acme/user:bob` shows it") == (
        "the `trace` tool with run_id run-1 shows it"
    )
    # An operator's step stays the operator's: re-importing is no served call.
    kept = "re-import it with --trusted if that source is trusted"
    assert served(kept) == kept
