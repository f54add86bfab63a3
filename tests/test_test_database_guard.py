"""The test suite never wipes a database that holds data it did not write.

`eval "$(investigator db env)"` (README) exports NEO4J_URI for the server holding real
investigations and their recorded runs; the tests honour NEO4J_URI and delete everything in
the database they use, so `make test` in that shell used to wipe it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import neo4j
import pytest
from conftest import TEST_DATABASES

from investigator.settings import ConnectionSettings

REPO = Path(__file__).resolve().parents[1]


def _session_env(settings: ConnectionSettings, **extra: str) -> dict[str, str]:
    """A new pytest session's environment naming `settings`' database in NEO4J_URI (no test
    or xdist variables of this session: the child would take itself for a worker)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("INVESTIGATOR_TEST_", "NEO4J_", "PYTEST_"))
    }
    env.update(
        NEO4J_URI=settings.uri,
        NEO4J_USER=settings.user,
        NEO4J_PASSWORD=settings.password.get_secret_value(),
        **extra,
    )
    return env


def _nodes(driver: neo4j.Driver) -> int:
    records, _, _ = driver.execute_query("MATCH (n) RETURN count(n) AS n")
    return int(records[0]["n"])


def test_the_tests_refuse_a_database_holding_data_and_delete_nothing(
    demo_graph: neo4j.Driver, neo4j_settings: ConnectionSettings
) -> None:
    before = _nodes(demo_graph)
    assert before > 0
    store = str(demo_graph.execute_query("CALL db.info() YIELD id").records[0]["id"])
    if TEST_DATABASES.exists() and store in json.loads(TEST_DATABASES.read_text()):
        pytest.skip("this session's own NEO4J_URI database was let the tests use: it would run")
    env = _session_env(neo4j_settings)
    # A test that wipes the graph first: it must never run against this database.
    target = "tests/test_canonical.py::test_demo_hashes_are_pinned"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", target],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    said = proc.stdout + proc.stderr
    assert proc.returncode == 2, said
    assert f"NEO4J_URI ({neo4j_settings.uri}) names a database holding {before} nodes" in said
    assert "INVESTIGATOR_TEST_WIPE=1" in said
    assert "1 passed" not in said
    assert _nodes(demo_graph) == before


def test_a_parallel_session_on_one_named_database_ends_before_any_test(
    demo_graph: neo4j.Driver, neo4j_settings: ConnectionSettings
) -> None:
    """`make test` runs two workers, each on its own local server; with NEO4J_URI they would
    share one database and wipe it under each other, even one the tests may wipe."""
    before = _nodes(demo_graph)
    env = _session_env(neo4j_settings, INVESTIGATOR_TEST_WIPE="1")
    target = "tests/test_canonical.py::test_demo_hashes_are_pinned"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", target],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    said = proc.stdout + proc.stderr
    assert proc.returncode == 2, said
    assert "NEO4J_URI names one database" in said
    assert "not 2 (`pytest -n 0`, or `make test TEST_WORKERS=0`)" in said
    assert "passed" not in said
    assert _nodes(demo_graph) == before
