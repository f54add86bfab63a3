"""How much an ingest reads, through the real CLI against a real Neo4j: a bundle file (or a
folder's files together) over the bound is refused in one line before a byte of it is read,
and nothing is written; `--max-bytes` raises the bound for a user whose bundle is larger."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import neo4j
from test_ingest import counts, small_bundle, write

# The documented bound (docs/kg-model.md), written out: a test of what users are told.
MAX_INPUT_BYTES = 100_000_000


def refused_in_one_line(result: Any) -> str:
    assert result.code == 2, result
    assert result.out == "", result
    lines: list[str] = result.err.rstrip().splitlines()
    assert len(lines) == 1, result.err
    return lines[0]


def test_a_bundle_file_over_the_bound_is_refused_unread_in_one_line(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    # Sparse: no disk or memory spent here; before, the whole file was read and parsed
    # ("not parseable") after holding it in memory.
    huge = tmp_path / "huge.json"
    with huge.open("wb") as handle:
        handle.truncate(MAX_INPUT_BYTES + 1)
    line = refused_in_one_line(invoke("ingest", str(huge)))
    assert line == (
        f"error: {huge}: it holds {MAX_INPUT_BYTES + 1:,} bytes, more than the "
        f"{MAX_INPUT_BYTES:,} an ingest reads (--max-bytes N raises the bound): nothing written"
    )
    assert counts(clean_db) == (0, 0)


def test_a_folder_is_bounded_by_its_files_together_and_max_bytes_raises_the_bound(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    folder = tmp_path / "parts"
    folder.mkdir()
    first = write(folder, small_bundle(), "a.json")
    second = write(folder, {"tenant": "acme", "principals": []}, "b.json")
    total = first.stat().st_size + second.stat().st_size
    # Each file is under the bound; the two together are over it.
    bound = max(first.stat().st_size, second.stat().st_size) + 1
    assert total > bound
    line = refused_in_one_line(invoke("ingest", str(folder), "--max-bytes", str(bound)))
    assert f"{folder}: its files hold {total:,} bytes, more than the {bound:,}" in line
    assert counts(clean_db) == (0, 0)
    result = invoke("ingest", str(folder), "--max-bytes", str(total), "--json")
    assert result.code == 0, result
    assert json.loads(result.out)["node_records_created"] > 0


def test_an_imported_folder_is_bounded_before_the_database_is_asked(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    text = "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n"
    (rules / "a.yaml").write_text(text, encoding="utf-8")
    (rules / "b.yaml").write_text(text.replace("A\n", "B\n"), encoding="utf-8")
    args = ["--format", "prometheus-rules", "--tenant", "acme", "--max-bytes", "60"]
    line = refused_in_one_line(invoke("ingest", str(rules), *args))
    assert f"{rules}: its files hold {2 * len(text):,} bytes, more than the 60" in line
    assert counts(clean_db) == (0, 0)


def test_a_rule_file_over_its_own_bound_is_refused_without_reading_it(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    from graph_schema.importers.prometheus_rules import MAX_FILE_BYTES

    rules = tmp_path / "rules"
    rules.mkdir()
    big = rules / "big.yaml"
    with big.open("wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)
    result = invoke("ingest", str(rules), "--format", "prometheus-rules", "--tenant", "acme")
    assert result.code == 2, result
    assert f"{big}: file: larger than {MAX_FILE_BYTES} bytes" in result.err
    assert counts(clean_db) == (0, 0)
