"""`investigator db ...` against a second, throwaway local server."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import neo4j
import pytest

from investigator.local_neo4j import _default_cache_dir
from investigator.settings import ConnectionSettings


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "investigator", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def _start_in_background(env: dict[str, str]) -> subprocess.Popen[str]:
    """`db start --no-warm-plans --json` as another terminal would run it, not waited for."""
    return subprocess.Popen(
        [sys.executable, "-m", "investigator", "db", "start", "--no-warm-plans", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _alive(pid: int) -> bool:
    """True while `pid` runs (a zombie awaiting its reaper counts as gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return False
    return fields[0] != "Z"


@pytest.fixture()
def db_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}
    env["INVESTIGATOR_STATE_DIR"] = str(tmp_path / "state")
    env["INVESTIGATOR_CACHE_DIR"] = str(_default_cache_dir())
    env["INVESTIGATOR_NEO4J_HEAP"] = "256m"
    env["INVESTIGATOR_NEO4J_PAGECACHE"] = "32m"
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    return env


def test_start_status_env_stop_lifecycle(db_env: dict[str, str], tmp_path: Path) -> None:
    started = _cli("db", "start", "--json", env=db_env)
    assert started.returncode == 0, started.stderr
    first = json.loads(started.stdout)
    try:
        assert first["already_running"] is False
        assert first["uri"].startswith("neo4j://127.0.0.1:")
        # A store this start created holds no runs: nothing is planned, nothing said of it.
        log = tmp_path / "state" / "warm-plans.log"
        assert "warm-plans.log" not in started.stderr, started.stderr
        assert not log.exists()
        # Started again, the store exists: the last runs' templates are planned in the
        # background (none here yet).
        assert _cli("db", "stop", env=db_env).returncode == 0
        restarted = _cli("db", "start", "--json", env=db_env)
        assert restarted.returncode == 0, restarted.stderr
        first = json.loads(restarted.stdout)
        assert first["already_running"] is False
        assert f"(log: {log})" in restarted.stderr
        deadline = time.monotonic() + 120
        while "planned" not in (log.read_text() if log.exists() else ""):
            assert time.monotonic() < deadline, log.read_text() if log.exists() else "no log"
            time.sleep(1)
        assert log.read_text().startswith("planned 0 of 0 steps of the last 20 runs in ")

        again = _cli("db", "start", env=db_env)
        assert again.returncode == 0
        assert again.stdout.startswith("already running")

        status = json.loads(_cli("db", "status", "--json", env=db_env).stdout)
        assert status == {
            "running": True,
            "uri": first["uri"],
            "pid": first["pid"],
            "version": status["version"],
        }
        assert status["version"].startswith("5.26.")

        state_file = tmp_path / "state" / "state.json"
        assert stat.S_IMODE(state_file.stat().st_mode) == 0o600

        exports = _cli("db", "env", env=db_env).stdout.splitlines()
        assert exports[0] == f"export NEO4J_URI={first['uri']}"
        assert any(line.startswith("export NEO4J_PASSWORD=") for line in exports)
        assert exports[-1] == f"export INVESTIGATOR_STATE_DIR={tmp_path / 'state'}"
    finally:
        stopped = _cli("db", "stop", env=db_env)
    assert stopped.returncode == 0
    assert stopped.stdout.strip() == "stopped"
    assert not _alive(first["pid"])
    assert json.loads(_cli("db", "status", "--json", env=db_env).stdout)["running"] is False
    not_running = _cli("db", "env", env=db_env)
    assert not_running.returncode == 4
    assert not_running.stdout == ""
    assert len(not_running.stderr.strip().splitlines()) == 1


def test_missing_java_is_one_line_exit_2(db_env: dict[str, str]) -> None:
    db_env["JAVA_HOME"] = "/nonexistent/java"
    proc = _cli("db", "start", env=db_env)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert "Java 17 or 21" in proc.stderr


def test_starts_at_once_take_turns_and_leave_one_server(db_env: dict[str, str]) -> None:
    """Two terminals (or `make demo` and a script) starting the same state folder at once:
    one starts the server, the others wait for it and find it running."""
    procs = [_start_in_background(db_env) for _ in range(3)]
    results = [(proc.wait(timeout=300), *proc.communicate()) for proc in procs]
    try:
        assert [code for code, _, _ in results] == [0, 0, 0], results
        docs = [json.loads(out) for _, out, _ in results]
        assert sorted(doc["already_running"] for doc in docs) == [False, True, True]
        assert len({(doc["uri"], doc["pid"]) for doc in docs}) == 1
        status = json.loads(_cli("db", "status", "--json", env=db_env).stdout)
        assert status["running"] is True and status["pid"] == docs[0]["pid"]
    finally:
        stopped = _cli("db", "stop", env=db_env)
    assert stopped.stdout.strip() == "stopped"
    assert not _alive(docs[0]["pid"])


def test_a_stop_during_a_start_waits_for_it_then_stops_the_server(
    db_env: dict[str, str],
) -> None:
    start = _start_in_background(db_env)
    try:
        assert start.stderr is not None
        assert start.stderr.readline().startswith("waiting for Bolt")  # it holds the lock
        stopped = _cli("db", "stop", env=db_env)
        assert stopped.stderr.startswith("a `db start` of this server is in progress")
        assert stopped.returncode == 0 and stopped.stdout.strip() == "stopped"
        assert start.wait(timeout=300) == 0
        pid = json.loads(start.communicate()[0])["pid"]
        assert not _alive(pid)
        assert json.loads(_cli("db", "status", "--json", env=db_env).stdout)["running"] is False
    finally:
        _cli("db", "stop", env=db_env)


def test_an_unusable_state_folder_is_one_line_exit_1(db_env: dict[str, str]) -> None:
    db_env["INVESTIGATOR_STATE_DIR"] = "/dev/null/state"  # under a file: cannot be made
    proc = _cli("db", "start", "--no-warm-plans", env=db_env)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == "error: cannot use the state folder /dev/null/state: Not a directory\n"


def test_missing_maven_is_one_line_exit_2(db_env: dict[str, str], tmp_path: Path) -> None:
    real_java = subprocess.run(
        ["bash", "-c", "readlink -f $(command -v java)"], capture_output=True, text=True
    ).stdout.strip()
    db_env["JAVA_HOME"] = str(Path(real_java).parents[1])
    db_env["INVESTIGATOR_CACHE_DIR"] = str(tmp_path / "empty-cache")
    db_env["PATH"] = str(Path(sys.executable).parent)
    proc = _cli("db", "start", env=db_env)
    assert proc.returncode == 2, proc.stderr
    assert "Maven" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "empty-cache" / "neo4j-5.26.30" / ".complete").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--runs", "x"], "error: --runs must be a whole number (digits 0-9), got 'x'"),
        (["--runs", "0"], "error: --runs must be between 1 and 1000, got 0"),
        (["--deadline-seconds", "1e9"], "error: --deadline-seconds must be a whole number"),
        (["--deadline-seconds", "99999"], "error: --deadline-seconds must be between 1 and 3600"),
    ],
)
def test_warm_plans_bad_input_is_one_line_exit_2(
    db_env: dict[str, str], args: list[str], message: str
) -> None:
    refused = _cli("db", "warm-plans", *args, env=db_env)
    assert refused.returncode == 2
    assert refused.stdout == ""
    assert len(refused.stderr.strip().splitlines()) == 1
    assert refused.stderr.startswith(message)


def test_unknown_db_subcommand_is_usage_error(db_env: dict[str, str]) -> None:
    proc = _cli("db", "launch", env=db_env)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ")
    assert len(proc.stderr.strip().splitlines()) == 1


def test_the_server_keeps_a_query_plan_ten_minutes(
    driver: neo4j.Driver, neo4j_settings: ConnectionSettings
) -> None:
    # Without it a young store replanned the templates every few runs (docs/local-neo4j.md).
    if neo4j_settings.origin not in ("local test server", "testcontainers"):
        pytest.skip("a server this suite did not configure")
    records, _, _ = driver.execute_query(
        "SHOW SETTINGS YIELD name, value WHERE name = 'dbms.cypher.min_replan_interval' "
        "RETURN value"
    )
    assert [r["value"] for r in records] == ["10m"]
