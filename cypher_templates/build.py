"""Compile the template manifest and every variant's rendered text into `compiled.json`.

`python -m cypher_templates.build` (or `make templates`) writes the file; `--check` only says
whether the checked-in file is current (exit 1 when it is stale). Run it after editing
`manifest.yaml` or `templates/*`: until then the packaged registry ignores the stale file and
parses and renders the sources itself (slower), and `tests/test_compiled_templates.py` fails.

The file is the manifest's validated data (every published version as its own entry), each
distinct line of the rendered texts once, and each variant (id, version, resolved options) as
the indices of its lines: Jinja2 renders them here, so the texts are exactly what it renders.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from cypher_templates.registry import (
    COMPILED_FORMAT,
    COMPILED_PATH,
    MANIFEST_PATH,
    TEMPLATES_DIR,
    CompiledTemplates,
    Manifest,
    TemplateRegistry,
    sources_digest,
    variant_key,
)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def compile_templates(
    manifest_path: Path = MANIFEST_PATH, templates_dir: Path = TEMPLATES_DIR
) -> str:
    """The compiled file's text for these sources (one entry a line, so diffs stay readable)."""
    registry = TemplateRegistry.load(manifest_path, templates_dir, compiled=False)
    manifest = registry.manifest.model_dump(mode="json", by_alias=True)
    if Manifest.model_validate(json.loads(_dumps(manifest))) != registry.manifest:
        raise ValueError("the manifest's data does not survive a JSON round trip")
    lines: dict[str, int] = {}
    variants: list[Any] = []
    for spec in registry.specs():
        for options in spec.variants():
            rendered = registry.render(spec, options)
            indices = [lines.setdefault(line, len(lines)) for line in rendered.text.split("\n")]
            variants.append([spec.id, spec.version, rendered.options, indices])
    sep = ",\n"
    specs = sep.join(_dumps(spec) for spec in manifest["templates"])
    text = (
        "{\n"
        f'"format": {COMPILED_FORMAT},\n'
        f'"sources": {_dumps(sources_digest(manifest_path, templates_dir))},\n'
        f'"manifest": {{"templates": [\n{specs}\n]}},\n'
        f'"lines": [\n{sep.join(_dumps(line) for line in lines)}\n],\n'
        f'"variants": [\n{sep.join(_dumps(v) for v in variants)}\n]\n'
        "}\n"
    )
    # What the registry will read back must be what Jinja2 rendered, byte for byte.
    raw = json.loads(text)
    again = CompiledTemplates(raw["manifest"], raw["lines"], raw["variants"])
    for spec in registry.specs():
        for options in spec.variants():
            rendered = registry.render(spec, options)
            if again.text(variant_key(spec, rendered.options)) != rendered.text:
                raise ValueError(f"template {spec.ref} {options}: compiled text differs")
    return text


def main(argv: list[str] | None = None) -> int:
    """Write `compiled.json` (or with `--check`, exit 1 when it is not current)."""
    parser = argparse.ArgumentParser(prog="python -m cypher_templates.build")
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args(argv)
    text = compile_templates()
    current = COMPILED_PATH.read_text(encoding="utf-8") if COMPILED_PATH.exists() else None
    if args.check:
        if current != text:
            print(f"{COMPILED_PATH} is stale: run `make templates`", file=sys.stderr)
            return 1
        return 0
    if current != text:
        COMPILED_PATH.write_text(text, encoding="utf-8")
        print(f"wrote {COMPILED_PATH} ({len(text.encode())} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
