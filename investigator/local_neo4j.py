"""A real Neo4j 5.26 server on machines without Docker, run from Maven Central jars.

The jars are resolved once with Maven into a cache folder; the server's home (conf, data,
logs) and a user-only state file (pid, URI, generated password) live in a state folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import neo4j
from pydantic import BaseModel, SecretStr, field_serializer

from investigator.errors import BadInput, InvestigatorError, Neo4jUnavailable

NEO4J_VERSION = "5.26.30"
ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"
START_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 60.0
SUPPORTED_JAVA = (17, 21)

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.investigator</groupId>
  <artifactId>neo4j-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.neo4j</groupId>
      <artifactId>neo4j</artifactId>
      <version>{version}</version>
    </dependency>
  </dependencies>
</project>
"""

# Procedures from plugins are limited to what the product calls; built-ins are unaffected.
_PROCEDURE_ALLOWLIST = "db.index.fulltext.queryNodes,db.index.fulltext.queryRelationships"


def _conf(port: int, pagecache: str) -> str:
    return "\n".join(
        [
            "# Written by `investigator db start`; rewritten on every start.",
            "server.default_listen_address=127.0.0.1",
            f"server.bolt.listen_address=127.0.0.1:{port}",
            "server.bolt.advertised_address=127.0.0.1",
            "server.http.enabled=false",
            "server.https.enabled=false",
            f"server.memory.pagecache.size={pagecache}",
            "dbms.security.auth_enabled=true",
            f"dbms.security.procedures.allowlist={_PROCEDURE_ALLOWLIST}",
            "dbms.security.allow_csv_import_from_file_urls=false",
            "db.tx_log.rotation.retention_policy=2 files",
            "db.transaction.timeout=120s",
            # A young store (the demo's 130 KG nodes, about 77 Context Graph nodes more per
            # run) moves its totals fast, and Neo4j replanned our templates every few runs
            # (5-40 s on a JVM still warming up). A plan is kept at least this long.
            "dbms.cypher.min_replan_interval=10m",
            "",
        ]
    )


class LocalState(BaseModel):
    """What `db start` records about the server it runs (file mode 0600)."""

    pid: int | None
    uri: str
    user: str = "neo4j"
    password: SecretStr
    version: str
    home: str
    started_at: str | None = None

    @field_serializer("password", when_used="json")
    def _dump_password(self, value: SecretStr) -> str:
        return value.get_secret_value()


class LocalStatus(BaseModel):
    """The answer of `investigator db status --json`."""

    running: bool
    uri: str | None
    pid: int | None
    version: str | None


class StartResult(BaseModel):
    """What `start` did: whether it was already running, and how long it took."""

    already_running: bool
    state: LocalState
    seconds: float
    downloaded_jars: bool
    # The store was created by this start (no users yet): it holds no runs to plan again.
    new_store: bool = False


def _default_cache_dir() -> Path:
    env = os.environ.get("INVESTIGATOR_CACHE_DIR")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "investigator"


def _default_state_dir() -> Path:
    env = os.environ.get("INVESTIGATOR_STATE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "investigator" / "neo4j"


def java_executable() -> str:
    """The `java` to run Neo4j with, checked to be a supported version."""
    java_home = os.environ.get("JAVA_HOME")
    candidate = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if not candidate or not Path(candidate).exists():
        raise BadInput(
            "Java 17 or 21 is required to run the local Neo4j: install it "
            "(e.g. `apt-get install openjdk-17-jre-headless`) or set JAVA_HOME"
        )
    out = subprocess.run(
        [candidate, "-version"], capture_output=True, text=True, timeout=30, check=False
    )
    match = re.search(r'version "(\d+)', out.stderr + out.stdout)
    major = int(match.group(1)) if match else 0
    if major not in SUPPORTED_JAVA:
        raise BadInput(
            f"Neo4j 5.26 needs Java 17 or 21, but {candidate} is Java {major or 'unknown'}: "
            "set JAVA_HOME to a Java 17 or 21 installation"
        )
    return candidate


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _process_cmdline(pid: int) -> str | None:
    proc = Path(f"/proc/{pid}/cmdline")
    if proc.exists():
        with contextlib.suppress(OSError):
            return proc.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        return None
    out = subprocess.run(
        ["ps", "-p", str(pid), "-o", "command="], capture_output=True, text=True, check=False
    )
    return out.stdout.strip() or None


@contextlib.contextmanager
def _exclusive(lock: Path, waiting: Callable[[], None] = lambda: None) -> Iterator[None]:
    """Hold an exclusive lock on the file `lock` (made if missing); `waiting` is called
    once if another process holds it, before waiting for it."""
    with open(lock, "a", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            waiting()
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class LocalNeo4j:
    """Start, stop and inspect one local Neo4j server, identified by its state folder."""

    def __init__(
        self,
        state_dir: Path,
        cache_dir: Path,
        version: str = NEO4J_VERSION,
        heap: str | None = None,
        pagecache: str | None = None,
    ) -> None:
        self.state_dir = state_dir
        self.cache_dir = cache_dir
        self.version = version
        self.heap = heap or os.environ.get("INVESTIGATOR_NEO4J_HEAP", "1g")
        self.pagecache = pagecache or os.environ.get("INVESTIGATOR_NEO4J_PAGECACHE", "256m")

    @classmethod
    def default(cls) -> LocalNeo4j:
        """The server that CLI commands use when no NEO4J_URI is configured."""
        return cls(_default_state_dir(), _default_cache_dir())

    # -- paths ---------------------------------------------------------------------------
    @property
    def runtime_dir(self) -> Path:
        return self.cache_dir / f"neo4j-{self.version}"

    @property
    def lib_dir(self) -> Path:
        return self.runtime_dir / "lib"

    @property
    def home(self) -> Path:
        return self.state_dir / "home"

    @property
    def state_file(self) -> Path:
        return self.state_dir / "state.json"

    @property
    def console_log(self) -> Path:
        return self.home / "logs" / "console.log"

    # -- jars ----------------------------------------------------------------------------
    def jars_present(self) -> bool:
        return (self.runtime_dir / ".complete").exists()

    def ensure_jars(self, progress: Callable[[str], None] = lambda _m: None) -> bool:
        """Resolve the Neo4j jars with Maven once; return True if they were downloaded now.
        Two processes that need them at once resolve them once (the cache is per user)."""
        if self.jars_present():
            return False
        self.runtime_dir.parent.mkdir(parents=True, exist_ok=True)
        lock = self.runtime_dir.parent / f"{self.runtime_dir.name}.lock"
        with _exclusive(lock, lambda: progress("waiting for another process fetching the jars...")):
            return self._fetch_jars(progress)

    def _fetch_jars(self, progress: Callable[[str], None]) -> bool:
        if self.jars_present():
            return False
        mvn = shutil.which("mvn")
        if not mvn:
            raise BadInput(
                "Maven is required to fetch the Neo4j jars once: install it "
                "(e.g. `apt-get install maven`)"
            )
        self.runtime_dir.mkdir(parents=True, exist_ok=True)
        (self.runtime_dir / "pom.xml").write_text(_POM.format(version=self.version))
        staging = self.runtime_dir / "lib.partial"
        shutil.rmtree(staging, ignore_errors=True)
        progress(f"resolving org.neo4j:neo4j:{self.version} with Maven (once)...")
        proc = subprocess.run(
            [
                mvn,
                "-B",
                "-q",
                "-f",
                str(self.runtime_dir / "pom.xml"),
                "dependency:copy-dependencies",
                f"-DoutputDirectory={staging}",
                "-DincludeScope=runtime",
                *(
                    [f"-Dmaven.repo.local={os.environ['INVESTIGATOR_MAVEN_REPO']}"]
                    if os.environ.get("INVESTIGATOR_MAVEN_REPO")
                    else []
                ),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-1:] or ["no output"]
            raise InvestigatorError(f"Maven could not resolve the Neo4j jars: {tail[0]}")
        shutil.rmtree(self.lib_dir, ignore_errors=True)
        staging.rename(self.lib_dir)
        (self.runtime_dir / ".complete").write_text(self.version + "\n")
        return True

    # -- state ---------------------------------------------------------------------------
    def read_state(self) -> LocalState | None:
        """The recorded state, or None when this server was never started."""
        if not self.state_file.exists():
            return None
        try:
            return LocalState.model_validate_json(self.state_file.read_text())
        except ValueError as exc:
            raise InvestigatorError(f"state file {self.state_file} is corrupt: {exc}") from exc

    def _write_state(self, state: LocalState) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.state_file.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(state.model_dump_json(indent=2))
        os.chmod(tmp, 0o600)
        tmp.replace(self.state_file)

    def _is_our_process(self, pid: int | None) -> bool:
        if not pid:
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return False
        cmdline = _process_cmdline(pid) or ""
        return ENTRY_POINT in cmdline and str(self.home) in cmdline

    def _bolt_answers(self, state: LocalState, timeout: float = 3.0) -> bool:
        # A direct bolt:// probe: routing discovery would log warnings while the server boots.
        try:
            with neo4j.GraphDatabase.driver(
                state.uri.replace("neo4j://", "bolt://", 1),
                auth=(state.user, state.password.get_secret_value()),
                connection_timeout=timeout,
            ) as driver:
                driver.verify_connectivity()
            return True
        except Exception:
            return False

    def _server_version(self, state: LocalState) -> str | None:
        from investigator.server_info import server_version

        try:
            with neo4j.GraphDatabase.driver(
                state.uri,
                auth=(state.user, state.password.get_secret_value()),
                connection_timeout=3.0,
            ) as driver:
                return server_version(driver)[0]
        except Exception:
            return None

    # -- lifecycle -----------------------------------------------------------------------
    def status(self) -> LocalStatus:
        """Whether the recorded server runs and answers, with its URI, pid and version."""
        state = self.read_state()
        if state is None or not self._is_our_process(state.pid):
            return LocalStatus(
                running=False, uri=state.uri if state else None, pid=None, version=None
            )
        version = self._server_version(state)
        return LocalStatus(
            running=version is not None, uri=state.uri, pid=state.pid, version=version
        )

    def start(self, progress: Callable[[str], None] = lambda _m: None) -> StartResult:
        """Start the server in the background and wait until Bolt answers (idempotent).

        Starts of one state folder take turns: a second `db start` while the first is still
        starting waits for it, then finds the server running."""
        try:
            self.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            for sub in ("conf", "data", "logs", "plugins", "import", "run"):
                (self.home / sub).mkdir(parents=True, exist_ok=True)
            os.chmod(self.state_dir, 0o700)
        except OSError as exc:
            raise InvestigatorError(
                f"cannot use the state folder {self.state_dir}: {exc.strerror or exc}"
            ) from None

        def waiting() -> None:
            progress("another `db start` is starting this server; waiting for it...")

        with _exclusive(self.state_dir / "start.lock", waiting):
            return self._start(progress)

    def _start(self, progress: Callable[[str], None]) -> StartResult:
        began = time.monotonic()
        state = self.read_state()
        if state is not None and self._is_our_process(state.pid) and self._bolt_answers(state):
            return StartResult(
                already_running=True, state=state, seconds=0.0, downloaded_jars=False
            )
        java = java_executable()
        downloaded = self.ensure_jars(progress)
        port = _free_port()
        (self.home / "conf" / "neo4j.conf").write_text(_conf(port, self.pagecache))
        # A leading letter: a password starting with "-" would be read as an admin-tool option.
        password = (
            state.password if state is not None else SecretStr("n" + secrets.token_urlsafe(24))
        )
        new_store = not (self.home / "data" / "dbms" / "auth.ini").exists()
        if new_store:
            self._set_initial_password(java, password.get_secret_value())
        log = open(self.console_log, "ab")  # noqa: SIM115 - handed to the child process
        try:
            proc = subprocess.Popen(
                [
                    java,
                    f"-Xms{self.heap}",
                    f"-Xmx{self.heap}",
                    "-XX:+UseG1GC",
                    "-Dfile.encoding=UTF-8",
                    "-cp",
                    str(self.lib_dir / "*"),
                    ENTRY_POINT,
                    f"--home-dir={self.home}",
                    f"--config-dir={self.home / 'conf'}",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        finally:
            log.close()
        new_state = LocalState(
            pid=proc.pid,
            uri=f"neo4j://127.0.0.1:{port}",
            password=password,
            version=self.version,
            home=str(self.home),
            started_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        self._write_state(new_state)
        progress(f"waiting for Bolt on 127.0.0.1:{port} (pid {proc.pid})...")
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                self._write_state(new_state.model_copy(update={"pid": None}))
                raise Neo4jUnavailable(
                    f"Neo4j exited during start (code {proc.returncode}): {self._log_tail()}"
                )
            if self._bolt_answers(new_state, timeout=2.0):
                return StartResult(
                    already_running=False,
                    state=new_state,
                    seconds=round(time.monotonic() - began, 2),
                    downloaded_jars=downloaded,
                    new_store=new_store,
                )
            time.sleep(0.5)
        self._terminate(proc.pid)
        self._write_state(new_state.model_copy(update={"pid": None}))
        raise Neo4jUnavailable(
            f"Neo4j did not answer on Bolt within {START_TIMEOUT_S:.0f}s; see {self.console_log}"
        )

    def _set_initial_password(self, java: str, password: str) -> None:
        env = dict(os.environ, NEO4J_HOME=str(self.home), NEO4J_CONF=str(self.home / "conf"))
        proc = subprocess.run(
            [
                java,
                "-cp",
                str(self.lib_dir / "*"),
                "org.neo4j.cli.AdminTool",
                "dbms",
                "set-initial-password",
                password,
            ],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if proc.returncode != 0:
            raise InvestigatorError(
                "could not set the local Neo4j password: "
                + ((proc.stderr or proc.stdout).strip().splitlines() or ["no output"])[-1]
            )

    def _log_tail(self) -> str:
        try:
            lines = self.console_log.read_text(errors="replace").strip().splitlines()
        except OSError:
            return "no console log"
        useful = [ln for ln in lines if ln.strip()][-1:]
        return useful[0][:300] if useful else "no output"

    def _terminate(self, pid: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while time.monotonic() < deadline:
            if not self._is_our_process(pid):
                return
            # Reap it if it is our child; harmless otherwise.
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
            time.sleep(0.3)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    def stop(self, progress: Callable[[str], None] = lambda _m: None) -> bool:
        """Stop exactly the recorded server; return False when it was not running (a start
        in progress finishes first: it then has a pid to stop)."""
        if not self.state_dir.is_dir():
            return False

        def waiting() -> None:
            progress("a `db start` of this server is in progress; stopping when it is done...")

        with _exclusive(self.state_dir / "start.lock", waiting):
            return self._stop()

    def _stop(self) -> bool:
        state = self.read_state()
        if state is None or not self._is_our_process(state.pid):
            if state is not None and state.pid is not None:
                self._write_state(state.model_copy(update={"pid": None}))
            return False
        assert state.pid is not None
        self._terminate(state.pid)
        self._write_state(state.model_copy(update={"pid": None}))
        return True

    def env_lines(self) -> list[str]:
        """`export` lines pointing a shell at this server: its connection, and its state
        folder, where later commands keep the chain key and the machine's ledger heads of
        the runs they record on it (docs/local-neo4j.md)."""
        import shlex

        state = self.read_state()
        if state is None or not self._is_our_process(state.pid):
            raise Neo4jUnavailable("the local Neo4j is not running: run `investigator db start`")
        return [
            f"export NEO4J_URI={shlex.quote(state.uri)}",
            f"export NEO4J_USER={shlex.quote(state.user)}",
            f"export NEO4J_PASSWORD={shlex.quote(state.password.get_secret_value())}",
            f"export INVESTIGATOR_STATE_DIR={shlex.quote(str(self.state_dir.absolute()))}",
        ]

    def status_json(self) -> str:
        return json.dumps(self.status().model_dump())
