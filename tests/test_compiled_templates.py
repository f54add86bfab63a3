"""The compiled templates file: current, byte-identical to Jinja2, and never a way around it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cypher_templates import registry as registry_module
from cypher_templates.build import compile_templates
from cypher_templates.registry import COMPILED_PATH, TemplateRegistry

REPO = Path(__file__).resolve().parents[1]


def test_the_checked_in_compiled_file_is_current() -> None:
    assert COMPILED_PATH.read_text(encoding="utf-8") == compile_templates(), (
        "cypher_templates/compiled.json is stale against manifest.yaml and templates/*: "
        "run `make templates` (python -m cypher_templates.build) and commit it"
    )


def test_the_packaged_registry_reads_texts_identical_to_what_jinja_renders() -> None:
    compiled = TemplateRegistry.load()
    jinja = TemplateRegistry.load(compiled=False)
    assert compiled.compiled and not jinja.compiled
    assert compiled.manifest == jinja.manifest
    count = 0
    for spec in jinja.specs():
        assert compiled.get(spec.id, spec.version) == spec
        for options in spec.variants():
            assert compiled.render(spec, options) == jinja.render(spec, options)
            count += 1
    # Every variant of every version (547 in runbooks_for version 4's day): the loop ran.
    assert count > 500


def test_a_cold_process_imports_neither_jinja_nor_yaml_to_compile_a_step() -> None:
    code = (
        "import sys\n"
        "import investigator.cli.runbook, investigator.cli.investigate\n"
        "from cypher_templates.compiler import compile_step\n"
        "from cypher_templates.plan import PlanStep\n"
        "from cypher_templates.registry import TemplateRegistry\n"
        "reg = TemplateRegistry.packaged()\n"
        "step = PlanStep(template_id='runbooks_for', evidence_type='runbook',\n"
        "                params={'anchor_id': 'svc:payment-api'})\n"
        "assert compile_step(reg, step).text\n"
        "print(sorted(m for m in ('jinja2', 'yaml') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert out.stdout.strip() == "[]"


@pytest.fixture
def package_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The packaged manifest, templates and compiled file, copied where a test may edit them
    (the registry takes the copy for the packaged one)."""
    root = tmp_path / "cypher_templates"
    shutil.copytree(registry_module.TEMPLATES_DIR, root / "templates")
    shutil.copy(registry_module.MANIFEST_PATH, root / "manifest.yaml")
    shutil.copy(COMPILED_PATH, root / "compiled.json")
    monkeypatch.setattr(registry_module, "MANIFEST_PATH", root / "manifest.yaml")
    monkeypatch.setattr(registry_module, "TEMPLATES_DIR", root / "templates")
    monkeypatch.setattr(registry_module, "COMPILED_PATH", root / "compiled.json")
    return root


def test_an_edited_template_is_rendered_from_its_source_not_the_stale_file(
    package_copy: Path,
) -> None:
    manifest, templates = package_copy / "manifest.yaml", package_copy / "templates"
    before = TemplateRegistry.load(manifest)
    spec = before.get("owners_of")
    old = before.render(spec, {})
    assert before.compiled
    source = templates / spec.file
    source.write_text(source.read_text() + "\n// edited\n", encoding="utf-8")
    # The compiled file no longer matches its sources: the text the author wrote runs, with
    # a new hash (so it is proven read-only again before it first runs).
    after = TemplateRegistry.load(manifest)
    new = after.render(after.get("owners_of"), {})
    assert not after.compiled
    assert new.text == old.text + "\n// edited" and new.template_hash != old.template_hash
    # Compiled again, the file serves the new text.
    (package_copy / "compiled.json").write_text(compile_templates(manifest, templates))
    again = TemplateRegistry.load(manifest)
    assert again.compiled and again.render(again.get("owners_of"), {}) == new


def test_a_damaged_compiled_file_falls_back_to_the_sources(package_copy: Path) -> None:
    manifest = package_copy / "manifest.yaml"
    expected = TemplateRegistry.load(manifest, compiled=False)
    spec = expected.get("runbooks_for")
    for damage in ("", "{", '{"format": 1}', "[1, 2]"):
        (package_copy / "compiled.json").write_text(damage)
        registry = TemplateRegistry.load(manifest)
        assert not registry.compiled
        assert registry.render(spec, {}) == expected.render(spec, {})
