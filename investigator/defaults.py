"""Defaults and bounds that the commands' `--help` shows, importing nothing: the CLI declares
its options without loading the modules that use the same values (issue 12)."""

from __future__ import annotations

# An investigation (investigator/investigation.py, planner.py).
DEFAULT_PURPOSE = "incident_investigation"
DEFAULT_BUDGET_TOKENS = 8000
DEFAULT_DEADLINE_S = 60.0
DEFAULT_MAX_ROUNDS = 5
# `runs`: how many recent runs one listing returns at most (context_graph/runs.py).
RUNS_MAX_LIMIT = 1000
# `runs --purpose audit`: how many of the listed runs (the newest) are checked against their
# chain and anchor; 100 cost about 1-2 s on the loaded 2-core machine (docs/benchmarks.md).
RUNS_AUDIT_CHECKED = 100
