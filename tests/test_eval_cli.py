"""`investigator eval`: bad input answers one line with its exit code, nothing half-written."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from conftest import json_error

from investigator.evaluation.cases import DEFAULT_CASES_PATH

_ONE_CASE = """
version: 1
datasets: [{name: payments-incident, path: datasets/payments-incident}]
cases:
  - id: one
    type: temporal
    description: d
    question: "Who owned payment-api?"
    subject: user:bob
    as_of: "2026-07-23T10:30:00Z"
    expect: {evidence: [x]}
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cases.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _one_line_error(res, code: int, needle: str) -> None:  # type: ignore[no-untyped-def]
    assert res.code == code, res
    # Nothing half-written on stdout: at most, with --json, the one error object.
    assert res.out == "" or json_error(res)["exit_code"] == code, res
    lines = res.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res
    assert needle in lines[0], res


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("cases: [unclosed", "not valid YAML"),
        ("- just\n- a list\n", "must be a mapping"),
        (
            _ONE_CASE.replace('as_of: "2026-07-23T10:30:00Z"', 'as_of: "2026-07-23T10:30:00"'),
            "as_of",
        ),
        (_ONE_CASE.replace("type: temporal", "type: vibes"), "type"),
        (_ONE_CASE.replace("    subject: user:bob\n", ""), "subject"),
        (_ONE_CASE.replace("id: one", 'id: "one\'; MATCH (n) DETACH DELETE n //"'), "id"),
        (_ONE_CASE.replace("name: payments-incident,", "name: other,"), "undeclared datasets"),
        (_ONE_CASE + _ONE_CASE.split("cases:\n")[1], "duplicate case ids"),
        ("\x00\x01binary", "cases file"),
        # Hostile YAML gets the product's parser: no aliases (which multiply what is
        # validated), no tags, and nesting past the parser's recursion is one line, exit 2.
        ("a: &a [x, x]\nb: [*a, *a]\n", "aliases are not allowed"),
        ("cases: !!python/object:os.system [echo]\n", "is not allowed"),
        ("a: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
        ("datasets: []\ndatasets: []\n", "duplicate key"),
    ],
)
def test_malformed_cases_files_exit_2(invoke, tmp_path: Path, text: str, needle: str) -> None:  # type: ignore[no-untyped-def]
    _one_line_error(invoke("eval", "--cases", str(_write(tmp_path, text))), 2, needle)


def test_oversized_cases_file_exits_2(invoke, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * 5_000_001)
    _one_line_error(invoke("eval", "--cases", str(big)), 2, "larger than")


def test_missing_cases_file_and_directory_exit_2(invoke, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _one_line_error(invoke("eval", "--cases", str(tmp_path / "nope.yaml")), 2, "not found")
    _one_line_error(invoke("eval", "--cases", str(tmp_path)), 2, "directory")
    _one_line_error(invoke("eval", "--bogus"), 2, "--bogus")


def test_unreachable_neo4j_exits_4_fast(invoke, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:1")
    monkeypatch.setenv("NEO4J_PASSWORD", "x")
    started = time.monotonic()
    res = invoke("eval", "--cases", str(DEFAULT_CASES_PATH), "--json")
    assert time.monotonic() - started < 10
    _one_line_error(res, 4, "unavailable")
