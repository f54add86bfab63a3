"""Which code a run's decision-code fingerprint covers (investigator/decision_code.py).

Replay says `decision_code_changed` when a re-run answers differently and the fingerprint is
not the recorded one: "the changed answer may come from the code". Before, the fingerprint
hashed investigator/claims/ and the modules that plan, gate and pack, but not the modules
they import that write a claim's words or decide its status (change_period, runbook_period,
runbook_sections, record_time, ...): a change there changed answers while replay said the
code was the run's own. This test reads the source and edits nothing: every module of the
package that a decision module imports (at the top or inside a function) is in
`DECISION_MODULES`, or named in `PLUMBING` with why it decides nothing; so the next new
module imported by claims/ cannot be forgotten.
"""

from __future__ import annotations

import ast
from pathlib import Path

from investigator.decision_code import DECISION_MODULES, PLUMBING, decision_sources

PACKAGE = Path(__file__).resolve().parents[1] / "investigator"


def _files(name: str) -> list[Path]:
    """The source files of `name` (a module, or every module of a package)."""
    module = PACKAGE / f"{name}.py"
    return [module] if module.is_file() else sorted((PACKAGE / name).glob("*.py"))


def _imported(path: Path) -> set[str]:
    """The package's own modules `path` imports, by their first name under `investigator`
    (`investigator.claims.model` -> `claims`), relative imports resolved."""
    package = path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found = [alias.name.split(".") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = list(package[: len(package) - node.level + 1]) if node.level else []
            base += node.module.split(".") if node.module else []
            # `from investigator import planner` imports the module `planner`.
            found = [[*base, alias.name] for alias in node.names] if len(base) == 1 else [base]
        else:
            continue
        for parts in found:
            if parts[0] == "investigator" and len(parts) > 1:
                names.add(parts[1])
    return names


def _top_name(name: str) -> bool:
    return (PACKAGE / f"{name}.py").is_file() or (PACKAGE / name / "__init__.py").is_file()


def test_every_module_a_decision_module_imports_is_covered_or_named_plumbing() -> None:
    missing: dict[str, set[str]] = {}
    seen: set[str] = set()
    todo = list(DECISION_MODULES)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for path in _files(name):
            for imported in _imported(path):
                if not _top_name(imported) or imported in PLUMBING:
                    continue
                if imported not in DECISION_MODULES:
                    missing.setdefault(imported, set()).add(str(path.relative_to(PACKAGE)))
                todo.append(imported)
    assert not missing, (
        "modules imported by decision modules, neither in DECISION_MODULES nor PLUMBING "
        f"(investigator/decision_code.py): {missing}"
    )


def test_claims_imports_are_in_the_fingerprint() -> None:
    hashed = {label for label, _ in decision_sources()}
    # What claims/ imports that writes a claim's words or decides its status.
    for name in ("change_period", "runbook_period", "runbook_sections", "record_time"):
        assert name in hashed, name
    # A package stands for all its modules, the latest split ones included.
    assert {"claims/status.py", "claims/timeline.py", "claims/actions.py"} <= hashed
    claims_imports = set().union(*(_imported(p) for p in _files("claims")))
    assert claims_imports - {"claims"} - set(PLUMBING) <= set(DECISION_MODULES)


def test_plumbing_is_named_with_why_and_not_hashed() -> None:
    assert all(_top_name(name) and why for name, why in PLUMBING.items()), PLUMBING
    assert not set(PLUMBING) & set(DECISION_MODULES)
    assert all(_top_name(name) for name in DECISION_MODULES), DECISION_MODULES
