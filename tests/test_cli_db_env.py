"""`eval "$(investigator db env)"` points later commands at the server and at its state
folder, each command a new process as in a script.

The state folder holds the chain key and this machine's ledger heads (docs/context-graph.md,
"Anchors and `verify`"). Before, `db env` exported only `NEO4J_*`: a script that took the
exports from `INVESTIGATOR_STATE_DIR=S investigator db env` and ran its commands without
that variable anchored every run's ledger head, under a key of its own, in the default state
folder, and `verify` in the server's folder could not check those anchors.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import neo4j
import pytest
from conftest import test_server

from investigator.settings import ConnectionSettings

INVESTIGATOR = f"{shlex.quote(sys.executable)} -m investigator"


def _script_env(tmp_path: Path) -> dict[str, str]:
    """A shell with no Neo4j or state settings of its own, whose default state folder is
    under `tmp_path` (never the user's)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("NEO4J_")
        and k not in {"INVESTIGATOR_STATE_DIR", "INVESTIGATOR_CHAIN_DIR", "INVESTIGATOR_CHAIN_KEY"}
    }
    env["XDG_STATE_HOME"] = str(tmp_path / "default-state")
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    env["INVESTIGATOR_TENANT"] = "acme"
    return env


def test_db_env_exports_the_state_folder_so_a_script_anchors_runs_there(
    demo_graph: neo4j.Driver, neo4j_settings: ConnectionSettings, tmp_path: Path
) -> None:
    if neo4j_settings.origin != "local test server":
        pytest.skip("needs the local test server (its state folder is what `db env` reads)")
    state_dir = test_server().state_dir.absolute()
    env = _script_env(tmp_path)
    script = (
        f'eval "$(INVESTIGATOR_STATE_DIR={shlex.quote(str(state_dir))} {INVESTIGATOR} db env)"\n'
        f"{INVESTIGATOR} runbook --service svc:payment-api --as-of 2026-07-23T10:03:00Z "
        "--subject acme/user:bob --json\n"
    )
    done = subprocess.run(
        ["bash", "-ec", script], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["run_id"]

    # The run was anchored under the server's folder, not in the script's default one.
    assert not (tmp_path / "default-state").exists(), list((tmp_path / "default-state").rglob("*"))
    assert (state_dir / "chain.key").is_file()
    # Verified where the server's state is (its key checks the anchor's HMAC).
    verify = subprocess.run(
        [sys.executable, "-m", "investigator", "verify", run_id, "--subject", "acme/user:bob",
         "--json"],
        env={**env, "INVESTIGATOR_STATE_DIR": str(state_dir), "NEO4J_URI": neo4j_settings.uri,
             "NEO4J_USER": neo4j_settings.user,
             "NEO4J_PASSWORD": neo4j_settings.password.get_secret_value()},
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert verify.returncode == 0, (verify.stdout, verify.stderr)
    assert json.loads(verify.stdout)["verified"] is True
