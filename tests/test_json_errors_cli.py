"""`--json` and an error: the error as one JSON document on stdout (e32 finding m9).

Before, a command given `--json` that failed printed nothing on stdout (its one line was on
stderr), so `investigator investigate ... --json | jq .` printed nothing and jq exited 0.
Now stdout holds `{"error": {"code", "exit_code", "message"}}`, stderr keeps its line, and
the exit code is the one it was (docs/contracts.md, "Errors with --json").
"""

from __future__ import annotations

import json
import subprocess
import sys

import click
import neo4j
import pytest
from conftest import json_error

from investigator.cli import cli as root_cli

UNREACHABLE = "neo4j://127.0.0.1:1"
AS_OF = "2026-07-23T10:03:00Z"
RUN = "run-0123456789abcdef0123456789abcdef"


def _json_commands() -> list[list[str]]:
    """Every command (and subcommand) that takes `--json`, by its path."""
    from investigator.cli import _register

    _register()
    found: list[list[str]] = []

    def walk(cmd: click.Command, path: list[str]) -> None:
        if isinstance(cmd, click.Group):
            for name, sub in sorted(cmd.commands.items()):
                walk(sub, [*path, name])
        elif any("--json" in p.opts for p in cmd.params):
            found.append(path)

    walk(root_cli, [])
    return found


def test_every_json_command_is_covered() -> None:
    # A command that gains --json is listed here and below (bad input, exit 2, JSON error).
    assert {" ".join(p) for p in _json_commands()} >= {
        "investigate", "runbook", "replay", "trace", "verify", "runs", "ingest", "purge",
        "eval", "schema apply", "db status", "warm status",
    }  # fmt: skip


@pytest.mark.parametrize("path", _json_commands(), ids=" ".join)
def test_a_usage_error_with_json_prints_the_error_as_json(path: list[str], invoke) -> None:  # type: ignore[no-untyped-def]
    result = invoke(*path, "--json", "--no-such-option")
    assert result.code == 2, result
    error = json_error(result)
    assert error["code"] == "bad_input" and "--no-such-option" in str(error["message"]), error


@pytest.mark.parametrize(
    ("args", "code", "kind"),
    [
        (["investigate", "why?", "--as-of", "yesterday"], 2, "bad_input"),
        (["investigate", "who owns payment-api?", "--subject", "acme/user:nobody"], 3,
         "not_authorized"),
        (["runbook", "--alert", "KubePodCrashLooping", "--subject", "acme/user:nobody"], 3,
         "not_authorized"),
        (["replay", RUN, "--subject", "acme/user:bob"], 2, "bad_input"),
        (["verify", RUN, "--subject", "acme/user:bob"], 2, "bad_input"),
        (["runs", "--subject", "acme/user:nobody"], 3, "not_authorized"),
        (["runs", "--subject", "acme/user:bob", "--limit", "x"], 2, "bad_input"),
        (["ingest", "h33-no-such-file.yaml"], 2, "bad_input"),
        (["purge", "svc:no-such", "--subject", "acme/user:bob", "--reason", "erasure"], 3,
         "not_authorized"),
    ],
    ids=lambda v: " ".join(v[:2]) if isinstance(v, list) else str(v),
)  # fmt: skip
def test_bad_input_with_json_prints_the_error_as_json(  # type: ignore[no-untyped-def]
    args: list[str], code: int, kind: str, demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    result = invoke(*args, "--json")
    assert result.code == code, result
    assert json_error(result)["code"] == kind
    # Without --json: nothing on stdout, as before.
    plain = invoke(*args)
    assert plain.code == code and plain.out == "" and plain.err == result.err, plain


def test_trace_in_a_json_format_prints_the_error_as_json(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    for fmt in (["--format", "json"], ["--format=prov-json"], ["--json"]):
        result = invoke("trace", RUN, *fmt, "--subject", "acme/user:bob")
        assert result.code == 2 and json_error(result)["code"] == "bad_input", (fmt, result)
    tree = invoke("trace", RUN, "--subject", "acme/user:bob")
    assert tree.code == 2 and tree.out == "", tree


def test_an_unreachable_database_with_json_is_exit_4_as_json(  # type: ignore[no-untyped-def]
    invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEO4J_URI", UNREACHABLE)
    monkeypatch.setenv("NEO4J_PASSWORD", "irrelevant")
    for args in (
        ["investigate", "why?", "--subject", "acme/user:bob", "--json"],
        ["schema", "apply", "--json"],
    ):
        result = invoke(*args)
        assert result.code == 4, result
        assert json_error(result)["code"] == "neo4j_unavailable", result


def test_a_script_piping_json_reads_the_error(cli_env) -> None:  # type: ignore[no-untyped-def]
    """The console script as `... --json | jq .` runs it: stdout is one JSON document."""
    done = subprocess.run(
        [sys.executable, "-m", "investigator", "investigate", "why?", "--as-of", "yesterday",
         "--subject", "acme/user:bob", "--json"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done
    error = json.loads(done.stdout)["error"]
    assert error == {
        "code": "bad_input",
        "exit_code": 2,
        "message": error["message"],
    } and error["message"].startswith("--as-of 'yesterday' is not an ISO-8601 time"), done
    assert done.stderr == f"error: {error['message']}\n", done
