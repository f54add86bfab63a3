"""Hostile files an importer is handed, through the real CLI against a real Neo4j: a FIFO
named like a page, YAML whose refusal used to quote the file's text, and nesting refused at
one documented depth (`MAX_YAML_DEPTH`) now that libyaml composes the nodes and
`safe_yaml._plain_data` checks them (aliases, tags, keys) instead of PyYAML's own composer."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import neo4j
import pytest
import yaml
from test_ingest import counts, small_bundle
from test_ingest_boundaries import refused

import graph_schema.safe_yaml as safe_yaml

MD_ARGS = ("--format", "markdown-runbooks", "--tenant", "t1")


# -- a FIFO, socket or device among the files: named and refused, not left out silently ---------


def test_a_fifo_named_like_a_page_is_refused_not_skipped(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    # Before: the folder was imported without b.md and nothing said so (exit 0).
    folder = tmp_path / "runbooks"
    folder.mkdir()
    (folder / "a.md").write_text("---\ntitle: A\n---\n# A\n\nSteps.\n", encoding="utf-8")
    os.mkfifo(folder / "b.md")
    lines = refused(
        invoke("ingest", str(folder), *MD_ARGS),
        f"{folder / 'b.md'}: file: not a regular file (a FIFO): refused",
        "nothing written",
    )
    assert len(lines) == 2, lines
    # Named as the path itself: not "no Markdown (.md) runbooks".
    refused(
        invoke("ingest", str(folder / "b.md"), *MD_ARGS),
        f"{folder / 'b.md'}: path: not a regular file (a FIFO): refused",
    )
    assert counts(clean_db) == (0, 0)


def test_a_fifo_named_like_a_bundle_or_rule_file_is_refused(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    folder = tmp_path / "bundles"
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps(small_bundle()), encoding="utf-8")
    os.mkfifo(folder / "b.yaml")
    refused(
        invoke("ingest", str(folder)),
        f"{folder / 'b.yaml'}: file: not a regular file (a FIFO): refused",
    )
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "a.yaml").write_text(
        "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up == 0\n",
        encoding="utf-8",
    )
    os.mkfifo(rules / "b.yml")
    refused(
        invoke("ingest", str(rules), "--format", "prometheus-rules", "--tenant", "t1"),
        f"{rules / 'b.yml'}: file: not a regular file (a FIFO): refused",
    )
    assert counts(clean_db) == (0, 0)


# -- a refusal gives a position, never the file's text --------------------------------------


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # Before: "found duplicate anchor 'SECRET...'", and int()'s "invalid literal ... 'SECRET'".
        ("tenant: acme\na: &SECRET_A 1\nb: &SECRET_A 2\n", "line 3, column 4: second occurrence"),
        ("tenant: !!int SECRET_VALUE\n", "line 1, column 9: not a YAML int"),
    ],
)
def test_a_refused_bundle_does_not_quote_its_text(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path, text: str, said: str
) -> None:
    bundle = tmp_path / "b.yaml"
    bundle.write_text(text, encoding="utf-8")
    result = invoke("ingest", str(bundle))
    lines = refused(result, f"{bundle}: file: not parseable: {said}")
    assert len(lines) == 2, lines
    assert "SECRET" not in result.err
    assert counts(clean_db) == (0, 0)


def test_nesting_is_refused_at_one_depth_in_bundles_and_front_matter(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    # Before: refused wherever Python's recursion ran out (about 300 levels, fewer the deeper
    # the caller), as "nested too deeply" without a number; 257 levels were read.
    # 256 lists in a map: 257 levels.
    deep = "[" * safe_yaml.MAX_YAML_DEPTH + "]" * safe_yaml.MAX_YAML_DEPTH
    said = "nested too deeply (more than 256 levels)"
    bundle = tmp_path / "deep.yaml"
    bundle.write_text(f"tenant: acme\nx: {deep}\n", encoding="utf-8")
    refused(invoke("ingest", str(bundle)), f"{bundle}: file: not parseable: {said}")
    blocks = tmp_path / "blocks.yaml"  # indented, not bracketed: the same bound
    blocks.write_text(
        "tenant: acme\nx:\n" + "".join(" " * n + "- \n" for n in range(1, 300)), encoding="utf-8"
    )
    refused(invoke("ingest", str(blocks)), f"{blocks}: file: not parseable: {said}")
    page = tmp_path / "md" / "a.md"
    page.parent.mkdir()
    page.write_text(f"---\ntitle: A\nx: {deep}\n---\n# A\n", encoding="utf-8")
    refused(invoke("ingest", str(page.parent), *MD_ARGS), f"{page}: front matter:", said)
    assert counts(clean_db) == (0, 0)


# -- the checks `_plain_data` makes on libyaml's nodes (PyYAML's composer made them before) --


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: *x\n", "line 1, column 4: YAML aliases are not allowed"),  # no anchor at all
        ("a: &x [1, *x]\n", "line 1, column 11: YAML aliases are not allowed"),  # a cycle
        ("a: &x 1\nb: [*x]\n", "line 2, column 5: YAML aliases are not allowed"),
        ("<<: {a: 1}\n", "YAML tag 'tag:yaml.org,2002:merge' is not allowed"),
        ("a: !!str [1]\n", "YAML tag 'tag:yaml.org,2002:str' is not allowed on a list or map"),
        ("a: !!map x\n", "YAML tag 'tag:yaml.org,2002:map' is not allowed on text"),
        ("a: !!set {x}\n", "YAML tag 'tag:yaml.org,2002:set' is not allowed"),
        ("a: [!x 1]\nb: !y 2\n", "line 1, column 5: YAML tag '!x'"),  # the first in the file
        ("a:\n  b: 1\n  c: {d: 1, d: 2}\n", "line 3, column 13: duplicate key 'd'"),
        ("1: a\n1.0: b\n", "duplicate key 1.0"),
        ("a: {? {b: 1} : c}\n", "a key must be text or a number, not a list or map"),
        ('a: "\\ud800"\n', "lone UTF-16 surrogate"),
        ("a: \ud800\n", "lone UTF-16 surrogate"),  # in the text itself, not an escape
        ("[" * 2000 + "]" * 2000, "nested too deeply (more than 256 levels)"),
    ],
)
def test_safe_yaml_checks_on_composed_nodes(text: str, message: str) -> None:
    with pytest.raises(yaml.YAMLError, match=re.escape(message)) as raised:
        safe_yaml.safe_yaml_load(text)
    assert "\n" not in str(raised.value)


def test_safe_yaml_reads_plain_data_as_pyyaml_did() -> None:
    # Every scalar rule is PyYAML's YAML 1.1 one (timestamps stay text), in the file's order.
    text = (
        "a: 0x1f\nb: 1_000\nc: 1:30\nd: .inf\ne: yes\nf: ~\ng: 1.5e3\nh: ''\ni:\n"
        "j: [1, {k: [x, {l: m}]}, [], {}]\nat: 2026-07-23T10:03:00Z\nn: !!float 1\n"
    )
    data = safe_yaml.safe_yaml_load(text)
    plain = yaml.load(text, Loader=yaml.SafeLoader)
    plain["at"] = "2026-07-23T10:03:00Z"
    assert json.dumps(data) == json.dumps(plain)
    assert safe_yaml.safe_yaml_load("# nothing\n") is None
    depth = safe_yaml.MAX_YAML_DEPTH
    assert safe_yaml.safe_yaml_load("[" * depth + "]" * depth) is not None
