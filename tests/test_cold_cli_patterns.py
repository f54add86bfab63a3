"""A new CLI process compiles only the regular expressions its command uses (issue 12).

Compiling the evidence gate's instruction rules, the question's time words, the planner's
intents and the ownership questions' words took about 0.1 s of CPU in every new process; a
`runbook` lookup uses none of them, and an `investigate` whose evidence is all trusted never
searches it for instructions. They are compiled on first use (`investigator.lazy_pattern`),
and all of them before the warm process forks its first command and before a served backend
(MCP, HTTP) takes its first call.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import neo4j
import pytest

from investigator.settings import ConnectionSettings

REPO = Path(__file__).resolve().parents[1]
AS_OF = "2026-07-23T10:03:00Z"
SEED = (
    "Was the 10:02 release of payment-api related to the PAY-4097 errors? "
    "Who owned the service at that moment? Which runbook version applied?"
)

# Runs `investigator ARGS` in this new process, then says which lazy patterns it compiled.
_RUN = """
import json, sys
from investigator.cli import run
code = run(json.loads(sys.argv[1]))
from investigator import gate
from investigator.lazy_pattern import _MADE
rules = [r.pattern for r in gate._AGENT_DIRECTED_RULES + gate._COMMAND_RULES]
print(json.dumps({
    "code": code,
    "made": len(_MADE),
    "compiled": [p.pattern[:60] for p in _MADE if p.is_compiled],
    "gate_rules_compiled": sum(p.is_compiled for p in rules),
    "gate_rules": len(rules),
}))
"""


def _cold(*args: str) -> tuple[str, dict[str, Any]]:
    """`investigator ARGS` in a new process without the warm process: its output and what
    it compiled."""
    done = subprocess.run(
        [sys.executable, "-c", _RUN, json.dumps(list(args))],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=REPO,
        env={**os.environ, "INVESTIGATOR_WARM": "0"},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out, _, last = done.stdout.rstrip("\n").rpartition("\n")
    return out, json.loads(last)


@pytest.fixture()
def demo(demo_graph: neo4j.Driver, cli_env: ConnectionSettings) -> neo4j.Driver:
    return demo_graph


def test_a_cold_runbook_lookup_compiles_none_of_the_question_or_gate_patterns(
    demo: neo4j.Driver,
) -> None:
    out, seen = _cold(
        "runbook", "--service", "svc:payment-api", "--as-of", AS_OF, "--subject", "user:bob"
    )
    assert seen["code"] == 0, out
    assert "Payment recovery runbook v3" in out, out
    assert "rejected_superseded" in out, out
    # The gate's rules, the time words, the planner's and the ownership words are imported
    # (the lookup's modules import them) and none is compiled.
    assert seen["made"] > 80, seen
    assert seen["compiled"] == [], seen


def test_a_cold_investigation_of_trusted_evidence_compiles_no_instruction_rule(
    demo: neo4j.Driver,
) -> None:
    out, seen = _cold(
        "investigate", SEED, "--service", "svc:payment-api", "--as-of", AS_OF,
        "--subject", "user:alice", "--json",
    )  # fmt: skip
    assert seen["code"] == 0, out
    doc = json.loads(out)
    assert doc["claims"], doc
    assert seen["gate_rules"] > 30, seen
    assert seen["gate_rules_compiled"] == 0, seen
    # The question's words are read: those patterns are compiled on their first use.
    assert seen["compiled"], seen


def test_the_warm_process_compiles_every_pattern_before_it_forks() -> None:
    code = (
        "from investigator.cli.warm import _preload\n"
        "_preload()\n"
        "from investigator.lazy_pattern import _MADE\n"
        "print(len(_MADE), sum(not p.is_compiled for p in _MADE))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=180,
        check=True,
    )  # fmt: skip
    made, left = map(int, done.stdout.split())
    assert made > 80 and left == 0, done.stdout


def test_a_served_backend_compiles_every_pattern_before_its_first_call(
    cli_env: ConnectionSettings,
) -> None:
    # An MCP or HTTP server's first question would otherwise pay for them.
    code = (
        "from investigator.serving.backend import ServingBackend\n"
        "from investigator.settings import resolve_connection\n"
        "backend = ServingBackend(resolve_connection())\n"
        "answered = backend.warm_up()\n"
        "backend.close()\n"
        "from investigator.lazy_pattern import _MADE\n"
        "print(answered, len(_MADE), sum(not p.is_compiled for p in _MADE))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=180,
        check=True,
    )  # fmt: skip
    answered, made, left = done.stdout.split()
    assert answered == "True" and int(made) > 80 and int(left) == 0, done.stdout


@pytest.mark.parametrize(
    "module",
    [
        "investigator.gate",
        "investigator.timeline",
        "investigator.planner",
        "investigator.ownership_history",
    ],
)
def test_no_pattern_of_these_modules_is_compiled_at_import(module: str) -> None:
    # A `re.compile` at module level is paid by every new process: merges brought four back in
    # the twenty-ninth session (the alert-owner, approval, runbook-covers and how-do-I words).
    import importlib
    import re

    loaded = importlib.import_module(module)
    compiled = sorted(name for name, value in vars(loaded).items() if isinstance(value, re.Pattern))
    assert compiled == [], f"{module}: make these LazyPattern: {compiled}"
