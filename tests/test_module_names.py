"""No module binds one top-level name twice.

Two branches that each add a module-level constant of the same name merge cleanly, and the
later silently replaces the earlier (runbook_sections.py's `_SECTION_LINK`, fixed in fad6e72):
every branch's tests pass, the merged behaviour changes. Ruff flags a redefined function or
import only while unused, and nothing flags a re-assigned constant, so this test does.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("graph_schema", "cypher_templates", "investigator", "benchmarks", "eval", "tests")


def _bound_names(statement: ast.stmt) -> Iterator[str]:
    """The names a module-level statement binds: definitions and plain assignments (an
    attribute or item assignment, `X.y = ...`, binds nothing new)."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield statement.name
    elif isinstance(statement, ast.Assign):
        for target in statement.targets:
            elements = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
            yield from (e.id for e in elements if isinstance(e, ast.Name))
    elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        # `X: int` alone declares, binds nothing.
        yield from [statement.target.id] if statement.value is not None else []


def _rebindings(source: str) -> list[str]:
    first_line: dict[str, int] = {}
    found = []
    for statement in ast.parse(source).body:
        for name in _bound_names(statement):
            if name in first_line:
                found.append(f"{name} (lines {first_line[name]} and {statement.lineno})")
            first_line.setdefault(name, statement.lineno)
    return found


def test_no_module_binds_a_top_level_name_twice() -> None:
    problems = [
        f"{path.relative_to(REPO)}: {rebinding}"
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        for rebinding in _rebindings(path.read_text(encoding="utf-8"))
    ]
    assert problems == []


def test_a_second_constant_of_the_same_name_is_found() -> None:
    source = '_LINK = "a"\n\ndef f():\n    return _LINK\n\n_LINK = "b"\n'
    assert _rebindings(source) == ["_LINK (lines 1 and 6)"]


def test_attribute_assignments_and_distinct_names_are_not_rebindings() -> None:
    source = "class A:\n    pass\n\nA.x = 1\nB, C = 1, 2\nD: int = 3\nD2: int\n"
    assert _rebindings(source) == []


def test_tests_import_their_fixtures_as_pytest_puts_them_on_the_path() -> None:
    """pytest puts `tests/` on sys.path, not the repository: `from tests.conftest import` runs
    where a developer exported PYTHONPATH=. and fails to collect in a clean clone's CI."""
    offenders = [
        path.name
        for path in sorted((REPO / "tests").glob("*.py"))
        if any(
            isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "tests"
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    ]
    assert offenders == [], f"import from conftest, not tests.conftest: {offenders}"
