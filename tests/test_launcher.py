"""The warm process (investigator.launcher + investigator.cli.warm), as a user meets it.

Each test runs `investigator` as a new process, the way a user types it, from a private copy
of the packages (so a warm process of the developer's own checkout is never touched, and a
test may change the copy's files) with its own socket directory (XDG_RUNTIME_DIR). The
answers must not depend on whether the warm process served the command.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import neo4j
import pytest
from conftest import wipe

from investigator.settings import ConnectionSettings

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO / "datasets" / "payments-incident"
RUNBOOK = ["runbook", "--service", "svc:payment-api", "--as-of", "2026-07-23T10:03:00Z"]


@dataclass
class Install:
    """A copy of the packages, its socket directory and the environment a user has."""

    root: Path
    runtime: Path
    env: dict[str, str]

    def run(
        self, *args: str, warm: bool = True, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        env = dict(self.env, INVESTIGATOR_WARM="1" if warm else "0")
        code = (
            f"import sys; sys.path.insert(0, {str(self.root)!r}); sys.argv[0] = 'investigator'; "
            "from investigator.launcher import main; main()"
        )
        return subprocess.run(
            [sys.executable, "-c", code, *args],
            capture_output=True, text=True, env=env, cwd=REPO, timeout=timeout, check=False,
        )  # fmt: skip

    def start(self) -> None:
        """A cheap on-call read: it starts the warm process when none runs."""
        result = self.run("runs", "--limit", "1")
        assert result.returncode == 0, result.stderr

    def status(self) -> dict[str, object]:
        result = self.run("warm", "status", "--json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    def wait_for(self, running: bool, timeout: float = 60) -> dict[str, object]:
        deadline = time.monotonic() + timeout
        while True:
            status = self.status()
            if status["running"] is running or time.monotonic() > deadline:
                return status
            time.sleep(0.3)

    def socket_dir(self) -> Path:
        return self.runtime / "investigator"

    def warm_pids(self) -> set[int]:
        """The warm processes of this copy that run, as `pgrep -f` in a new shell lists them."""
        found = set()
        for entry in Path("/proc").iterdir():
            try:
                cmdline = (entry / "cmdline").read_bytes()  # a zombie's is empty
            except OSError:
                continue
            if str(self.root).encode() in cmdline and b"serve(" in cmdline:
                found.add(int(entry.name))
        return found

    def wait_for_pids(self, expected: set[int], timeout: float = 30) -> set[int]:
        deadline = time.monotonic() + timeout
        while (pids := self.warm_pids()) != expected and time.monotonic() < deadline:
            time.sleep(0.3)
        return pids


@pytest.fixture(scope="module")
def demo_graph(driver: neo4j.Driver, neo4j_settings: ConnectionSettings) -> neo4j.Driver:
    from investigator.cli import run as run_cli

    saved = dict(os.environ)
    os.environ.update(_connection_env(neo4j_settings))
    try:
        wipe(driver)
        assert run_cli(["schema", "apply"]) == 0
        assert run_cli(["ingest", str(DATASET)]) == 0
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return driver


def _connection_env(settings: ConnectionSettings) -> dict[str, str]:
    return {
        "NEO4J_URI": settings.uri,
        "NEO4J_USER": settings.user,
        "NEO4J_PASSWORD": settings.password.get_secret_value(),
    }


@pytest.fixture()
def install(
    tmp_path: Path, demo_graph: neo4j.Driver, neo4j_settings: ConnectionSettings
) -> Iterator[Install]:
    root = tmp_path / "src"
    for package in ("investigator", "cypher_templates", "graph_schema"):
        shutil.copytree(
            REPO / package, root / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    # A short socket directory: a Unix socket's path holds at most 107 bytes, and under
    # pytest-xdist tmp_path is 10 longer (popen-gwN/): `run/investigator/warm-<16>.sock` in it
    # did not fit.
    runtime = Path(tempfile.mkdtemp(prefix="inv-run-"))
    runtime.chmod(0o700)
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("INVESTIGATOR_", "NEO4J_", "XDG_RUNTIME_DIR"))
    }
    env.update(_connection_env(neo4j_settings))
    env.update(
        XDG_RUNTIME_DIR=str(runtime),
        INVESTIGATOR_STATE_DIR=str(tmp_path / "state"),
        INVESTIGATOR_SUBJECT="acme/user:bob",
    )
    inst = Install(root, runtime, env)
    yield inst
    inst.run("warm", "stop")
    shutil.rmtree(runtime, ignore_errors=True)


def _without_run_ids(text: str) -> str:
    data = json.loads(text)
    data.pop("run_id", None)
    data.pop("known_at", None)
    return json.dumps(data, sort_keys=True)


def test_first_command_starts_it_and_later_ones_are_served_with_the_same_answer(
    install: Install,
) -> None:
    here = install.run(*RUNBOOK, "--json", warm=False)
    assert here.returncode == 0, here.stderr
    assert install.status()["running"] is False  # INVESTIGATOR_WARM=0 starts nothing

    first = install.run(*RUNBOOK, "--json")
    assert first.returncode == 0, first.stderr
    status = install.wait_for(running=True)
    assert status["running"] is True and status["current"] is True

    served = install.run(*RUNBOOK, "--json")
    assert served.returncode == 0, served.stderr
    after = install.status()
    assert after["pid"] == status["pid"]
    assert int(after["served"]) >= 1  # type: ignore[call-overload]
    assert _without_run_ids(served.stdout) == _without_run_ids(here.stdout)
    assert served.stderr == ""


def test_errors_exit_codes_and_relative_paths_are_the_users(
    install: Install, tmp_path: Path
) -> None:
    install.start()
    install.wait_for(running=True)
    served_before = int(install.status()["served"])  # type: ignore[call-overload]

    # --known-at, not --as-of: a bad --as-of is answered by the launcher, before forwarding.
    bad_time = install.run("runbook", "--service", "svc:payment-api", "--known-at", "nonsense")
    assert bad_time.returncode == 2
    assert bad_time.stdout == ""
    assert bad_time.stderr.count("\n") == 1 and "not an ISO-8601 time" in bad_time.stderr

    no_tenant = install.run(*RUNBOOK, "--subject", "user:bob")
    assert no_tenant.returncode == 2 and "has no tenant" in no_tenant.stderr

    # The working directory is the client's: a relative path names the user's file.
    missing = install.run("ingest", "no-such-bundle-here")
    assert missing.returncode == 2 and "no-such-bundle-here" in missing.stderr
    relative = install.run("ingest", "datasets/payments-incident")
    assert relative.returncode == 0, relative.stderr
    assert "unchanged 62 nodes" in relative.stdout

    # Environment variables are the client's, read at each command.
    other = install.run(*RUNBOOK, "--json")
    env_subject = json.loads(other.stdout)["subject"]
    install.env["INVESTIGATOR_SUBJECT"] = "acme/user:alice"
    alice = install.run(*RUNBOOK, "--json")
    assert (env_subject, json.loads(alice.stdout)["subject"]) == ("user:bob", "user:alice")

    assert int(install.status()["served"]) >= served_before + 6  # type: ignore[call-overload]


def test_a_command_that_ends_at_once_runs_once(install: Install) -> None:
    # A child that ends at once sends STARTED and EXITED back to back; a client descheduled
    # between its request and its read (a loaded machine) receives both in one read. It must
    # still wait for the exit code, not run the command again itself (doubled output, and a
    # command's effect twice). The copy's client sleeps there to be that client every time.
    launcher = install.root / "investigator" / "launcher.py"
    text = launcher.read_text()
    first_read = text.index("reply, _ = receive_message(conn", text.index("def forward("))
    launcher.write_text(text[:first_read] + "__import__('time').sleep(1.5); " + text[first_read:])
    install.start()
    install.wait_for(running=True)
    served_before = int(install.status()["served"])  # type: ignore[call-overload]

    for _ in range(2):
        bad = install.run("runbook", "--service", "svc:payment-api", "--known-at", "nonsense")
        assert bad.returncode == 2
        assert bad.stdout == ""
        assert bad.stderr.count("not an ISO-8601 time") == 1, bad.stderr
        assert bad.stderr.count("\n") == 1, bad.stderr

    assert int(install.status()["served"]) >= served_before + 2  # type: ignore[call-overload]


def test_changed_code_is_never_served_by_the_old_process(install: Install) -> None:
    install.start()
    old = install.wait_for(running=True)
    source = install.root / "investigator" / "pack.py"
    source.write_text(source.read_text() + "\n# edited\n")

    assert install.status()["current"] is False
    result = install.run(*RUNBOOK, "--json")  # refused by the old process: runs in-process
    assert result.returncode == 0, result.stderr
    new = install.wait_for(running=True)
    deadline = time.monotonic() + 60
    while new["pid"] == old["pid"] and time.monotonic() < deadline:
        time.sleep(0.3)
        new = install.status()
    assert new["pid"] != old["pid"] and new["current"] is True


def test_a_socket_directory_others_may_enter_is_not_used(install: Install) -> None:
    directory = install.socket_dir()
    directory.mkdir(mode=0o700)
    directory.chmod(0o755)
    result = install.run(*RUNBOOK, "--json")
    assert result.returncode == 0, result.stderr  # answered in-process
    time.sleep(2)
    assert install.status()["running"] is False
    assert list(directory.iterdir()) == []
    assert stat.S_IMODE(directory.stat().st_mode) == 0o755


def test_hostile_clients_do_not_stop_it(install: Install) -> None:
    install.start()
    status = install.wait_for(running=True)
    path = Path(str(status["socket"]))
    for payload in (b"", b"garbage", struct.pack("!I", 2**31) + b"{", struct.pack("!I", 2) + b"[]"):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(15)
            conn.connect(str(path))
            conn.sendall(payload)
            conn.shutdown(socket.SHUT_WR)
            conn.recv(1024)  # a refusal or nothing, never a command
    # A request without the terminal's descriptors is refused, nothing runs.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(15)
        conn.connect(str(path))
        body = json.dumps({"protocol": 1, "argv": ["purge", "run-x"], "env": {}, "cwd": "/"})
        conn.sendall(struct.pack("!I", len(body)) + body.encode())
        reply = conn.recv(1024)
        assert b"refused" in reply
    after = install.status()
    assert after["pid"] == status["pid"] and after["served"] == status["served"]
    assert install.run(*RUNBOOK, "--json").returncode == 0


def test_idle_process_exits_and_stop_stops_it(install: Install) -> None:
    install.env["INVESTIGATOR_WARM_IDLE"] = "1"
    install.start()
    assert install.wait_for(running=True)["running"] is True
    assert install.wait_for(running=False, timeout=30)["running"] is False

    install.env.pop("INVESTIGATOR_WARM_IDLE")
    install.start()
    install.wait_for(running=True)
    stopped = install.run("warm", "stop")
    assert stopped.returncode == 0 and stopped.stdout.startswith("stopped warm process")
    assert install.wait_for(running=False)["running"] is False
    assert install.run("warm", "stop").stdout.strip() == "no warm process"


def test_only_on_call_reads_start_it(install: Install) -> None:
    # What a user runs around the questions: none of it leaves a process behind.
    for args in (
        ["db", "status"],
        ["db", "stop"],
        ["--help"],
        ["runbook", "--help"],
        ["investigate", "-h"],
        ["--version"],
        ["schema", "apply"],
        ["ingest", str(DATASET)],
        ["warm", "status"],
    ):
        result = install.run(*args)
        assert result.returncode == 0, (args, result.stderr)
        assert install.warm_pids() == set(), args  # the client starts it before it answers
    assert install.status()["running"] is False

    asked = install.run(*RUNBOOK, "--json")
    assert asked.returncode == 0, asked.stderr
    assert install.wait_for(running=True)["running"] is True


def test_db_stop_from_another_checkout_stops_the_folders_warm_process(
    install: Install, tmp_path: Path
) -> None:
    # Found last session: the socket's name hashes the checkout too, so `db stop` from a
    # second checkout of the same state folder asked only its own (absent) warm process.
    other = Install(tmp_path / "src-two", install.runtime, install.env)
    shutil.copytree(install.root, other.root, ignore=shutil.ignore_patterns("__pycache__"))
    install.start()
    first = install.wait_for(running=True)
    seen = other.status()
    assert seen["running"] is False  # not this checkout's socket, but named beside it:
    assert [o["pid"] for o in seen["others"]] == [first["pid"]]  # type: ignore[attr-defined]
    shown = other.run("warm", "status")
    assert f"warm process {first['pid']} at" in shown.stdout, shown.stdout
    stopped = other.run("db", "stop", "--json")
    assert stopped.returncode == 0, stopped.stderr
    assert f"stopped warm process {first['pid']}" in stopped.stderr
    assert json.loads(stopped.stdout)["warm_process_stopped"] == first["pid"]
    assert install.wait_for_pids(set()) == set()
    assert list(install.socket_dir().glob("warm-*.state")) == []  # the note goes with it


def test_db_stop_stops_its_state_folders_warm_process_and_no_other(
    install: Install, tmp_path: Path
) -> None:
    first_folder = install.env["INVESTIGATOR_STATE_DIR"]
    second_folder = str(tmp_path / "state-two")
    install.start()
    first = install.wait_for(running=True)
    install.env["INVESTIGATOR_STATE_DIR"] = second_folder
    try:
        install.start()
        second = install.wait_for(running=True)
        first_pid, second_pid = int(first["pid"]), int(second["pid"])  # type: ignore[call-overload]
        assert second_pid != first_pid and second["state_dir"] == second_folder
        assert install.warm_pids() == {first_pid, second_pid}

        install.env["INVESTIGATOR_STATE_DIR"] = first_folder
        stopped = install.run("db", "stop")
        assert stopped.returncode == 0, stopped.stderr
        assert stopped.stdout == "not running\n"  # that folder has no server
        assert f"stopped warm process {first_pid}" in stopped.stderr
        assert install.wait_for_pids({second_pid}) == {second_pid}
        assert install.status()["running"] is False
        again = install.run("db", "stop", "--json")
        assert json.loads(again.stdout) == {"stopped": False, "warm_process_stopped": None}
        assert install.warm_pids() == {second_pid}  # and `db stop` started none

        install.env["INVESTIGATOR_STATE_DIR"] = second_folder
        still = install.status()
        assert still["pid"] == second_pid and still["current"] is True
        served = install.run(*RUNBOOK, "--json")
        assert served.returncode == 0, served.stderr
        assert int(install.status()["served"]) > int(second["served"])  # type: ignore[call-overload]
        assert install.run("db", "stop").returncode == 0
        assert install.wait_for_pids(set()) == set()
    finally:
        install.env["INVESTIGATOR_STATE_DIR"] = second_folder
        install.run("warm", "stop")
        install.env["INVESTIGATOR_STATE_DIR"] = first_folder


def _without_neo4j(install: Install, tmp_path: Path) -> None:
    """No NEO4J_* variable and no config file: only the state folder's local server."""
    for key in ("NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD"):
        install.env.pop(key, None)
    install.env["XDG_CONFIG_HOME"] = str(tmp_path / "no-config")


def test_no_neo4j_configured_starts_no_warm_process(install: Install, tmp_path: Path) -> None:
    # e31-qa m7: the failing command started a warm process that lingered 15 minutes.
    _without_neo4j(install, tmp_path)
    for args in (RUNBOOK, ["investigate", "Who owned payment-api?"], ["runs", "--limit", "1"]):
        asked = install.run(*args)
        assert asked.returncode == 4, (args, asked.stderr)
        assert asked.stderr == (
            "error: no Neo4j configured: set NEO4J_URI, or run `investigator db start` for a "
            "local server\n"
        ), args
        assert install.warm_pids() == set(), args  # the client starts it before it answers
    time.sleep(1.0)
    assert install.warm_pids() == set()
    assert install.status()["running"] is False


def test_after_db_stop_commands_say_it_and_leave_no_warm_process(
    install: Install, tmp_path: Path, neo4j_settings: ConnectionSettings
) -> None:
    from investigator.local_neo4j import LocalState

    install.start()  # a warm process of this state folder, serving
    assert install.wait_for(running=True)["running"] is True
    folder = Path(install.env["INVESTIGATOR_STATE_DIR"])
    folder.mkdir(exist_ok=True)
    # The folder's local server as `db stop` leaves it: its state file without a pid.
    state = LocalState(
        pid=None,
        uri=neo4j_settings.uri,
        password=neo4j_settings.password,
        version="5.26.30",
        home=str(folder / "home"),
    )
    (folder / "state.json").write_text(state.model_dump_json())
    stopped = install.run("db", "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert "stopped warm process" in stopped.stderr
    assert install.wait_for_pids(set()) == set()

    _without_neo4j(install, tmp_path)
    for args in (RUNBOOK, ["investigate", "Who owned payment-api?"], ["trace", "run-x"]):
        asked = install.run(*args)
        assert asked.returncode == 4, (args, asked.stderr)
        assert asked.stderr == (
            f"error: the local Neo4j of state folder {folder} is stopped: run "
            "`investigator db start`, or set NEO4J_URI\n"
        ), args
        assert install.warm_pids() == set(), args
    time.sleep(1.0)
    assert install.warm_pids() == set()


def test_a_deep_runtime_directory_still_gets_a_warm_process(install: Install) -> None:
    # A Unix socket's path holds 107 bytes: under a deep $XDG_RUNTIME_DIR the socket did not
    # fit and every command ran cold, silently (0.6 s instead of 0.15 s an on-call read).
    deep = Path(tempfile.mkdtemp(prefix="inv-run-")) / ("d" * 90)
    deep.mkdir(mode=0o700)
    deep.parent.chmod(0o700)
    install.env["XDG_RUNTIME_DIR"] = str(deep)
    try:
        install.start()
        status = install.wait_for(running=True)
        assert status["running"] is True, status
        sock = str(status["socket"])
        assert len(os.fsencode(sock)) <= 107 and not sock.startswith(str(deep)), sock
        served = install.run(*RUNBOOK, "--json")
        assert served.returncode == 0, served.stderr
        assert int(install.status()["served"]) >= 1  # type: ignore[call-overload]
    finally:
        install.run("warm", "stop")
        shutil.rmtree(deep.parent, ignore_errors=True)
