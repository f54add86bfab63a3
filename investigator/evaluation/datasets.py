"""Preparing the graph the golden set runs over, through the real CLI.

`schema apply`, `ingest` and the purge of what a dataset names are idempotent, so
`investigator eval` can run against a fresh database (CI) or one that already holds the demo
data. The subjects' documented grants are read from the bundles' `principals`, to check ACL
violations independently of the product.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import neo4j
import yaml

from graph_schema.purge import purge_content
from graph_schema.safe_yaml import safe_yaml_load
from investigator.errors import BadInput, InvestigatorError
from investigator.evaluation.cases import REPO_ROOT, DatasetSpec
from investigator.evaluation.cli_runner import CliCall, call_cli
from investigator.evaluation.metrics import SubjectGrants


class SetupFailed(InvestigatorError):
    """Preparing the evaluation graph failed; carries the failing command's exit code."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def dataset_path(spec: DatasetSpec) -> Path:
    """The bundle path of a path dataset, relative paths taken from the repository root."""
    assert spec.path is not None
    path = Path(spec.path)
    return path if path.is_absolute() else REPO_ROOT / path


def _check(call: CliCall, what: str) -> None:
    if call.exit_code != 0:
        why = call.error_line() or "no message"
        raise SetupFailed(
            f"eval setup: {what} failed (exit {call.exit_code}): {why}",
            call.exit_code,
        )


def bundle_paths(specs: list[DatasetSpec], work_dir: Path) -> dict[str, Path]:
    """Dataset name -> its bundle path; generated datasets are generated into `work_dir`.

    Generating is deterministic and cheap, so it happens even when nothing is ingested (the
    documented grants of a generated dataset are read from the generated bundle).
    """
    paths: dict[str, Path] = {}
    for spec in specs:
        if spec.path is not None:
            path = dataset_path(spec)
            if not path.exists():
                raise BadInput(f"dataset {spec.name}: {path} does not exist")
        else:
            path = work_dir / f"{spec.name}.json"
            argv = ["generate", "--services", str(spec.generate_services), "--out", str(path)]
            if spec.generate_seed is not None:
                argv += ["--seed", str(spec.generate_seed)]
            _check(call_cli(argv), f"investigator {' '.join(argv)}")
        paths[spec.name] = path
    return paths


def prepare(
    specs: list[DatasetSpec],
    paths: dict[str, Path],
    driver: neo4j.Driver,
    database: str | None = None,
) -> None:
    """Apply the schema, ingest every dataset's bundle, then purge what a dataset names.

    All three are idempotent: a purged record keeps its content_hash, so re-ingesting the
    same bundle does not bring the text back, and purging again changes nothing.
    """
    _check(call_cli(["schema", "apply"]), "investigator schema apply")
    for path in paths.values():
        # Curated history, loaded as such even where earlier evals recorded runs.
        _check(call_cli(["ingest", str(path), "--backdate"]), f"investigator ingest {path}")
    for spec in specs:
        for target in spec.purge:
            purge_content(driver, target.tenant, target.id, database=database)


def _bundle_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.suffix in {".yaml", ".yml", ".json"})


def _load(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else safe_yaml_load(text)


def documented_grants(paths: dict[str, Path]) -> dict[str, SubjectGrants]:
    """`tenant/id` of each principal -> the tenant, labels and purposes its bundle documents."""
    grants: dict[str, SubjectGrants] = {}
    for path in paths.values():
        for file in _bundle_files(path):
            try:
                doc = _load(file)
            except (OSError, ValueError, yaml.YAMLError):
                continue
            if not isinstance(doc, dict):
                continue
            for p in doc.get("principals") or []:
                if isinstance(p, dict) and p.get("id"):
                    tenant = p.get("tenant") or doc.get("tenant")
                    # Keyed by the qualified subject (`tenant/id`), as golden cases name it.
                    grants[f"{tenant}/{p['id']}"] = SubjectGrants(
                        tenant=tenant,
                        labels=frozenset(str(x) for x in p.get("labels") or []),
                        purposes=frozenset(str(x) for x in p.get("purposes") or []),
                    )
    return grants
