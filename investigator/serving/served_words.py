"""The CLI's words in a served caller's vocabulary: one mapping for every note, gap, time
line and error a served tool sends.

The investigator's notes are written once, for the terminal ("ask again with a longer
--deadline-seconds", "ask for it by id (investigator runbook --alert X@page)"). A served
caller has no flags: it has the tool's arguments (`as_of`, `deadline_seconds`, `service`,
`runbook_lookup`'s `target` and `value`) and the tools `trace` and `replay`. `served` puts
those in place of the flags and commands; what only an operator can do (`ingest --trusted`,
`investigator mcp --purpose audit`) is left as written, said to be the operator's.

Applied to generated texts only (results.py: the summary's notes and the document's note and
gap fields), never to a claim's quote or retrieved text: a runbook step's
`aws ecs update-service --service x` is the runbook's own words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from investigator.context_graph.audit import AUDIT_PURPOSE

# The CLI's way to read another subject's run; a served caller has no flags to pass.
_CLI_AUDIT_FLAG = f"reads it only with --purpose {AUDIT_PURPOSE}"
_SERVED_AUDIT = (
    f"reads it only through a server run with purpose {AUDIT_PURPOSE} (`investigator mcp "
    f'--purpose {AUDIT_PURPOSE}` or [mcp] purpose = "{AUDIT_PURPOSE}"), which its '
    "operator starts"
)

# A value as the notes write it after a flag: an id, a name, a placeholder (NAME, ID).
_VALUE = r"([^\s`'\"();,]+)"


def _run_tool(found: re.Match[str]) -> str:
    """`investigator trace RUN --subject S --purpose audit` -> the tool and its run_id."""
    tool = "trace" if found.group(1) in ("trace", "verify") else "replay"
    said = f"the `{tool}` tool with run_id {found.group(2)}"
    if found.group(1) == "verify":
        said += " (its `verified` field)"
    if found.group(3):
        said += f" on a server run with purpose {AUDIT_PURPOSE}"
    return said


# In order: whole commands first, then the flags they may leave, then bare flags.
_RULES: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    (re.compile(re.escape(_CLI_AUDIT_FLAG)), _SERVED_AUDIT),
    (
        re.compile(
            r"`?investigator (trace|replay|verify) ([^\s`]+)(?: --subject [^\s`]+)?"
            r"( --purpose \w+)?`?"
        ),
        _run_tool,
    ),
    (
        re.compile(r"`?investigator runbook --alert " + _VALUE + "`?"),
        r'`runbook_lookup` with target "alert", value \1',
    ),
    (
        re.compile(r'`?investigator runbook "([^"]*)"`?'),
        r'`runbook_lookup` with target "text", value "\1"',
    ),
    (re.compile(r"`?investigator runbook`?"), "`runbook_lookup`"),
    # No served tool lists runs: a caller has the run ids its results gave.
    (
        re.compile(r"\(investigator runs lists them\)"),
        "(no served tool lists runs: use a run_id a result gave)",
    ),
    (re.compile(r"`?investigator investigate`?"), "`investigate`"),
    (re.compile(r"(?<![\w-])--alert " + _VALUE), r'target "alert", value \1'),
    (re.compile(r"(?<![\w-])--alert\b"), 'target "alert"'),
    (re.compile(r"(?<![\w-])--error-code " + _VALUE), r'target "error_code", value \1'),
    (re.compile(r"(?<![\w-])--error-code\b"), 'target "error_code"'),
    (re.compile(r"(?<![\w-])--text\b"), 'target "text"'),
    (re.compile(r"an earlier command's --service"), "an earlier call's `service`"),
    (re.compile(r" ?(?<![\w-])--subject " + _VALUE), ""),
    (
        re.compile(
            r"(?<![\w-])--(as-of|known-at|service|deadline-seconds|max-rounds|"
            r"budget-tokens|idempotency-key|format)\b"
        ),
        lambda found: f"`{found.group(1).replace('-', '_')}`",
    ),
)

# What a served caller must not be told to type: the flags of its tools' arguments and the
# commands its tools stand for (the operator's `ingest --trusted`, `mcp --purpose` aside).
CLI_FLAG = re.compile(
    r"(?<![\w-])--(as-of|known-at|service|deadline-seconds|max-rounds|budget-tokens|"
    r"idempotency-key|format|alert|error-code|text|subject)\b"
    r"|investigator (runbook|investigate|trace|replay|verify|runs)\b"
)


def served(text: str) -> str:
    """`text` with each CLI flag and command a served caller cannot type put as the tool
    argument or tool that does the same."""
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text


def _served_list(value: object) -> object:
    return (
        [served(v) if isinstance(v, str) else v for v in value]
        if isinstance(value, list)
        else value
    )


def _served_in(items: object, key: str) -> None:
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and isinstance(item.get(key), str):
            item[key] = served(item[key])


# The generated texts of each quoting tool's document (never claims, steps or evidence).
_NOTE_LISTS = {
    "investigate": ("time_notes", "rule_notes", "search_notes", "service_notes"),
    "runbook_lookup": (),
}
_NOTE_FIELDS = {"investigate": (), "runbook_lookup": ("note", "time_note")}
_ITEM_FIELDS = {
    "investigate": (
        ("missing_evidence", "description"),
        ("unresolved_names", "note"),
        ("unresolved_time_reasons", "detail"),
        ("rejected", "detail"),
    ),
    "runbook_lookup": (("rejected", "detail"),),
}


def served_document(tool: str, document: Any) -> Any:
    """`document` (a tool's JSON document, parsed) with its notes and gaps in served words;
    trace and replay documents are records, returned as they are."""
    if not isinstance(document, dict) or tool not in _NOTE_LISTS:
        return document
    for key in _NOTE_LISTS[tool]:
        if key in document:
            document[key] = _served_list(document[key])
    for key in _NOTE_FIELDS[tool]:
        if isinstance(document.get(key), str):
            document[key] = served(document[key])
    for key, field in _ITEM_FIELDS[tool]:
        _served_in(document.get(key), field)
    runbook = document.get("runbook")
    if isinstance(runbook, Mapping) and isinstance(runbook.get("steps_note"), str):
        document["runbook"] = {**runbook, "steps_note": served(runbook["steps_note"])}
    return document
