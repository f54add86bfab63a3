"""A table of questions -> intents: every question the project asks itself, read by the planner.

The questions are those of eval/golden.yaml's cases and every question string of tests/: the
string after an `investigate` argument in a call, the first argument of a planner function
(`detect_intents`, `asks_*`, ...), and any string constant that ends with a question mark.
Each is read as the planner reads it (no server): its intents (sorted, `+then` when the error
timeline is there only to place "then"), what it names (ids, codes, releases, alerts,
hyphenated names; `bare:` the one-word names a short question may mean) and its time words
(`event`, `side`, explicit instants, relative words, unresolved ones).

Usage:
    PYTHONPATH=$PWD .venv/bin/python benchmarks/intent_table.py > /tmp/table.tsv
    PYTHONPATH=$PWD .venv/bin/python benchmarks/intent_table.py --questions-from old.tsv
    PYTHONPATH=$PWD .venv/bin/python benchmarks/intent_table.py --diff old.tsv new.tsv

Run it on two checkouts (a `git worktree` of an older commit, with PYTHONPATH pointing at it)
and `--diff` the two tables to see which questions changed intents between them. The planner
API read here (`detect_intents`, `errors_read_only_for_then`, `extract_mentions`,
`time_references`) is old enough for any commit of the last sessions. A measurement tool,
not a test (tests/test_intent_table.py pins a representative table).
"""

from __future__ import annotations

import argparse
import ast
import itertools
import re
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
# The planner functions whose first argument is a question.
_PLANNER_CALLS = frozenset(
    {
        "detect_intents",
        "errors_read_only_for_then",
        "extract_mentions",
        "unread_words",
        "bare_name_words",
        "reads_as_symptom",
        "reads_as_placed_symptom",
        "time_references",
    }
)
AS_OF = datetime(2026, 7, 23, 11, 0, tzinfo=UTC)


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _str(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _test_questions(path: Path) -> Iterator[str]:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _call_name(node)
            if (name in _PLANNER_CALLS or name.startswith("asks_")) and node.args:
                first = _str(node.args[0])
                if first:
                    yield first
            args = list(node.args)
            for before, after in itertools.pairwise(args):
                if _str(before) == "investigate" and _str(after):
                    yield _str(after) or ""
        elif isinstance(node, (ast.List, ast.Tuple)):
            elts = list(node.elts)
            for before, after in itertools.pairwise(elts):
                if _str(before) == "investigate" and _str(after):
                    yield _str(after) or ""
        text = _str(node)
        if text and "\n" not in text and len(text) < 300 and _looks_asked(text):
            yield text


# A string that opens as a question or a request does ("what changed ...", "list all ...").
_ASKED_OPENING = re.compile(
    r"^\s*(?:who|whom|whose|what|what's|whats|which|when|where|why|how|is|are|was|were|did|"
    r"does|do|any|list|show|has|have|can|could|should|tell)\s+\S",
    re.IGNORECASE,
)


def _looks_asked(text: str) -> bool:
    return text.rstrip().endswith(("?", "？")) or bool(_ASKED_OPENING.match(text))


def questions(root: Path = ROOT) -> list[str]:
    """Every question of the golden cases and the tests, deduplicated, in a stable order."""
    found: list[str] = []
    golden = yaml.safe_load((root / "eval" / "golden.yaml").read_text(encoding="utf-8"))
    for case in golden.get("cases", []):
        if case.get("question"):
            found.append(case["question"])
    for path in sorted((root / "tests").glob("*.py")):
        found.extend(_test_questions(path))
    return [q for q in dict.fromkeys(q.strip() for q in found) if q and "\t" not in q]


def _clean(text: str) -> str:
    return " ".join(text.split())


def reading(question: str) -> tuple[str, str, str]:
    """The planner's reading of one question: intents, what it names, its time words."""
    from investigator.planner import (
        detect_intents,
        errors_read_only_for_then,
        extract_mentions,
    )
    from investigator.timeline import time_references

    try:
        intents = ",".join(str(getattr(i, "value", i)) for i in detect_intents(question))
        if errors_read_only_for_then(question):
            intents += " +then"
    except Exception as exc:  # a crash is a row too
        intents = f"CRASH {type(exc).__name__}"
    named = extract_mentions(question).texts()
    try:
        from investigator.planner import bare_name_words

        named += [f"bare:{w}" for w in bare_name_words(question)]
    except ImportError:
        pass
    refs = time_references(question, AS_OF)
    said: list[str] = []
    if refs.event is not None:
        side = refs.side.value if refs.side is not None else "at"
        said.append(f"{side} {refs.event.value}")
    if refs.now:
        said.append("now")
    said += [t.strftime("%Y-%m-%dT%H:%M:%SZ") for t in refs.explicit]
    said += [f"rel:{getattr(r, 'words', r)}" for r in getattr(refs, "relative", [])]
    said += [f"unresolved:{w}" for w in refs.unresolved]
    return intents, " ".join(named), "; ".join(_clean(s) for s in said)


def _read_table(path: Path) -> dict[str, tuple[str, ...]]:
    rows: dict[str, tuple[str, ...]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        rows[parts[0]] = tuple(parts[1:])
    return rows


def diff(old: Path, new: Path) -> int:
    """The questions whose intents differ between two tables (old first)."""
    before, after = _read_table(old), _read_table(new)
    changed = 0
    for question, row in after.items():
        was = before.get(question)
        if was is not None and was[:1] != row[:1]:
            changed += 1
            print(f"{question}\n    was: {was[0]}\n    now: {row[0]}   [{row[1]}] [{row[2]}]")
    print(f"{changed} of {len(after)} questions changed intents", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions-from", type=Path, help="a table whose questions to read")
    parser.add_argument("--diff", nargs=2, type=Path, metavar=("OLD", "NEW"))
    args = parser.parse_args(argv)
    if args.diff:
        return diff(*args.diff)
    asked = list(_read_table(args.questions_from)) if args.questions_from else questions()
    for question in dict.fromkeys(_clean(q) for q in asked):
        print("\t".join((question, *reading(question))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
