"""Test fixtures: always a real Neo4j (never a mock or in-memory stand-in).

Order (docs/design.md section 4): `NEO4J_URI` if set (refused when its database holds data
the tests did not write, unless INVESTIGATOR_TEST_WIPE=1: they wipe it); else testcontainers
when a Docker engine answers; else a local server from Maven Central jars in its own state
folder, started here and stopped at the end of the session if this session started it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import neo4j
import pytest
from pydantic import SecretStr

from investigator.cli import run as run_cli
from investigator.connection import open_driver
from investigator.local_neo4j import LocalNeo4j, _default_cache_dir
from investigator.settings import ConnectionSettings, resolve_connection

REPO = Path(__file__).resolve().parents[1]
# Tests that run `investigator` as a new process must not leave warm processes behind;
# tests/test_launcher.py turns it on for its own isolated copies.
os.environ.setdefault("INVESTIGATOR_WARM", "0")
# A shell runs a background job (`make test &`) with SIGINT ignored, and its children inherit
# that: the Ctrl-C tests' `investigator` processes would then never see their SIGINT and
# finish instead. The tests play a user at a terminal, so Ctrl-C is delivered as there.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config: pytest.Config) -> None:
    """End a parallel session (pytest-xdist) at once when NEO4J_URI names the one database
    every worker would use: each test wipes the database it uses, under the others' feet."""
    workers = getattr(config.option, "numprocesses", None)
    if os.environ.get("NEO4J_URI") and workers and not os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.exit(
            f"NEO4J_URI names one database and the tests wipe the database they use: run them "
            f"in one process, not {workers} (`pytest -n 0`, or `make test TEST_WORKERS=0`)",
            returncode=2,
        )


def _docker_answers() -> bool:
    if not shutil.which("docker"):
        return False
    try:
        proc = subprocess.run(["docker", "info"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def test_server() -> LocalNeo4j:
    """The local server the test session uses: its own state folder, the shared jar cache.

    Under pytest-xdist (`make test` runs two workers) each worker after the first gets its own
    server in `<state folder>-gwN`: tests wipe the database they use, so workers never share
    one."""
    state_dir = os.environ.get("INVESTIGATOR_TEST_STATE_DIR") or str(
        REPO / ".investigator" / "test-neo4j"
    )
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    if worker != "gw0":
        state_dir = f"{state_dir}-{worker}"
    return LocalNeo4j(Path(state_dir), _default_cache_dir())


test_server.__test__ = False  # type: ignore[attr-defined]


# The databases (by store id) the tests were let use: their data is the tests' own (and the
# evaluation's, which `make test` runs next on the same server).
TEST_DATABASES = REPO / ".investigator" / "test-databases.json"


def _refuse_a_database_with_data(settings: ConnectionSettings) -> None:
    """End the session before any test when `NEO4J_URI` names a database holding data the
    tests did not write: they delete everything in the database they use, and `eval
    "$(investigator db env)"` (README) leaves NEO4J_URI pointing at the server holding real
    investigations and their recorded runs. A database the tests found empty, or were let
    use with INVESTIGATOR_TEST_WIPE=1, is remembered by its store id."""
    with open_driver(settings) as drv:
        records, _, _ = drv.execute_query(
            "MATCH (n) RETURN count(n) AS nodes", database_=settings.database
        )
        info, _, _ = drv.execute_query("CALL db.info() YIELD id", database_=settings.database)
    nodes, store = int(records[0]["nodes"]), str(info[0]["id"])
    known: list[str] = json.loads(TEST_DATABASES.read_text()) if TEST_DATABASES.exists() else []
    if nodes and store not in known and os.environ.get("INVESTIGATOR_TEST_WIPE") != "1":
        pytest.exit(
            f"NEO4J_URI ({settings.uri}) names a database holding {nodes} nodes the tests did "
            "not write, and they delete everything in the database they use: unset NEO4J_URI "
            "(the tests start their own server) or set INVESTIGATOR_TEST_WIPE=1 to let them",
            returncode=2,
        )
    if store not in known:
        TEST_DATABASES.parent.mkdir(parents=True, exist_ok=True)
        TEST_DATABASES.write_text(json.dumps(sorted({*known, store})), encoding="utf-8")


@pytest.fixture(scope="session")
def neo4j_settings() -> Iterator[ConnectionSettings]:
    """Connection settings for the real Neo4j every test talks to."""
    if os.environ.get("NEO4J_URI"):
        settings = resolve_connection()
        _refuse_a_database_with_data(settings)
        yield settings
        return
    if os.environ.get("INVESTIGATOR_TEST_DOCKER", "auto") != "off" and _docker_answers():
        from testcontainers.neo4j import Neo4jContainer

        container = Neo4jContainer("neo4j:5.26-community", password="test-password-1")
        # The local server's and compose.yaml's plan interval (docs/local-neo4j.md).
        container.with_env("NEO4J_dbms_cypher_min__replan__interval", "10m")
        with container:
            yield ConnectionSettings(
                uri=container.get_connection_url(),
                user="neo4j",
                password=SecretStr("test-password-1"),
                origin="testcontainers",
            )
        return
    server = test_server()
    result = server.start()
    try:
        yield ConnectionSettings(
            uri=result.state.uri,
            user=result.state.user,
            password=result.state.password,
            origin="local test server",
        )
    finally:
        if not result.already_running and os.environ.get("INVESTIGATOR_TEST_KEEP_SERVER") != "1":
            server.stop()


@pytest.fixture(scope="session")
def driver(neo4j_settings: ConnectionSettings) -> Iterator[neo4j.Driver]:
    """One driver for the session (tests that write use `clean_db`). The session leaves the
    database empty: `make test` runs the evaluation next on the same server, and the last
    test's records (another source holding svc:checkout) refused its ingest."""
    drv = open_driver(neo4j_settings)
    yield drv
    try:
        wipe(drv)
    finally:
        drv.close()


def wipe(drv: neo4j.Driver) -> None:
    """Delete every node and relationship (schema stays), in batches."""
    # CALL {} IN TRANSACTIONS needs an auto-commit (implicit) transaction, hence session.run.
    with drv.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()


@pytest.fixture()
def clean_db(driver: neo4j.Driver) -> neo4j.Driver:
    """A driver over an empty graph, so tests cannot see each other's data."""
    wipe(driver)
    return driver


# acme's principals and services, for the tests that import a folder of Markdown runbooks.
ACME_CATALOG = REPO / "tests" / "fixtures" / "runbooks" / "catalogs" / "acme.yaml"


def import_runbook_folder(drv: neo4j.Driver, invoke, folder: Path, *flags: str) -> None:  # type: ignore[no-untyped-def]
    """A graph holding only acme's catalog and `folder` imported as Markdown runbooks (tenant
    acme, `--acl internal`, then `flags`), through the CLI as a user imports it."""
    wipe(drv)
    assert invoke("ingest", str(ACME_CATALOG)).code == 0
    result = invoke(
        "ingest", str(folder), "--format", "markdown-runbooks", "--tenant", "acme",
        "--acl", "internal", *flags,
    )  # fmt: skip
    assert result.code == 0, result


def import_runbook_pages(drv: neo4j.Driver, invoke, folder: Path, pages: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    """`pages` (file name -> Markdown) written to a new `folder`, imported as
    `import_runbook_folder` imports it."""
    folder.mkdir()
    for name, text in pages.items():
        (folder / name).write_text(text, encoding="utf-8")
    import_runbook_folder(drv, invoke, folder)


# A tenant's on-call principal (user:oncall, labels [sre]) and its identity source: what a
# test of imported runbooks ingests first (`.format(tenant=...)`).
ONCALL_PRINCIPALS = """tenant: {tenant}
sources:
  - source_id: src:iam
    source_type: identity
    owner_team: team:sre
    classification: internal
    trust: trusted
    authority: 100
    allowed_purposes: [incident_investigation, runbook_lookup, audit]
    recorded_at: "2026-01-05T09:00:00Z"
principals:
  - id: user:oncall
    name: On-call
    labels: [sre]
    purposes: [incident_investigation, runbook_lookup]
    source_id: src:iam
    recorded_at: "2026-01-05T09:00:00Z"
"""


def ingest_oncall_principals(invoke, tmp_path: Path, tenant: str) -> None:  # type: ignore[no-untyped-def]
    """`tenant`'s on-call principal (ONCALL_PRINCIPALS) written to tmp_path/<tenant>.yaml and
    ingested through the CLI."""
    ingest_text(invoke, tmp_path / f"{tenant}.yaml", ONCALL_PRINCIPALS.format(tenant=tenant))


def ingest_text(invoke, path: Path, text: str, *flags: str) -> CliResult:  # type: ignore[no-untyped-def]
    """`text` written to `path` (a bundle, by default) and `ingest PATH FLAGS...` run through
    the CLI, exit 0."""
    path.write_text(text, encoding="utf-8")
    result = invoke("ingest", str(path), *flags)
    assert result.code == 0, result
    return result


def git(repo: Path, *args: str, when: str | None = None) -> str:
    """`git ARGS...` in `repo` as a fixed author, dated `when` (author and committer) if
    given; its output."""
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com")
    env.update(GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    if when:
        env.update(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    proc = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return proc.stdout.strip()


def git_repository(root: Path) -> Path:
    """A new, empty git repository at `root`."""
    root.mkdir(parents=True)
    git(root, "init", "-q")
    return root


def git_commit(repo: Path, path: str, text: str, when: str) -> str:
    """`path` in `repo` written with `text` and committed at `when`; the commit's sha."""
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"edit {path}", when=when)
    return git(repo, "rev-parse", "HEAD")


def ingest_as(  # type: ignore[no-untyped-def]
    invoke, path: Path, fmt: str, tenant: str, *flags: str, acl: str = "sre"
) -> CliResult:
    """`ingest PATH --format FMT --tenant TENANT --acl ACL FLAGS...` through the CLI, exit 0."""
    result = invoke("ingest", str(path), "--format", fmt, "--tenant", tenant, "--acl", acl, *flags)
    assert result.code == 0, result
    return result


def import_runbooks_and_rules(  # type: ignore[no-untyped-def]
    invoke,
    tmp_path: Path,
    tenant: str,
    *,
    runbooks: dict[str, str],
    rules: str | None = None,
    folder: str = "runbooks",
) -> CliResult:
    """What a test of imported runbooks sets up, through the CLI: `tenant`'s on-call
    principal, `runbooks` ({path in the folder: text}) written to tmp_path/`folder` and
    imported as Markdown runbooks, then `rules` (if any) written to tmp_path/rules.yaml and
    imported as Prometheus rules, both with `--acl sre`. Returns the last ingest's result."""
    ingest_oncall_principals(invoke, tmp_path, tenant)
    root = tmp_path / folder
    root.mkdir(parents=True)
    for name, text in runbooks.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    result = ingest_as(invoke, root, "markdown-runbooks", tenant)
    if rules is not None:
        (tmp_path / "rules.yaml").write_text(rules, encoding="utf-8")
        result = ingest_as(invoke, tmp_path / "rules.yaml", "prometheus-rules", tenant)
    return result


def ingest_fixture_bundle(drv: neo4j.Driver, name: str) -> neo4j.Driver:
    """A graph holding only the bundle `tests/fixtures/<name>`, its indexes online."""
    return ingest_only(drv, [REPO / "tests" / "fixtures" / name])


def ingest_only(drv: neo4j.Driver, paths: list[Path]) -> neo4j.Driver:
    """A graph holding only the bundles at `paths`, ingested in order, its indexes online."""
    from graph_schema.bundle import load_bundle
    from graph_schema.schema_ddl import apply_schema
    from graph_schema.writer import ingest_bundle

    wipe(drv)
    apply_schema(drv)
    for path in paths:
        ingest_bundle(drv, load_bundle(path))
    drv.execute_query("CALL db.awaitIndexes(300)")
    return drv


def alices_run_beside(  # type: ignore[no-untyped-def]
    drv: neo4j.Driver,
    invoke,
    folder: Path,
    principals: str,
    question: str,
    service: str = "svc:payment-api",
) -> str:
    """A wiped graph holding the demo dataset and the bundle `principals` (YAML, written to
    `folder`), and alice's recorded run of `question` about `service`: its run id."""
    wipe(drv)
    (folder / "principals.yaml").write_text(principals)
    demo = REPO / "datasets" / "payments-incident"
    for args in (["schema", "apply"], ["ingest", str(demo)], ["ingest", str(folder)]):
        result = invoke(*args)
        assert result.code == 0, (args, result)
    return str(
        investigate_json(
            invoke, question, "--service", service,
            "--subject", "acme/user:alice", "--deadline-seconds", "600",
        )["run_id"]
    )  # fmt: skip


def investigate_json(invoke, question: str, *flags: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """`investigate QUESTION FLAGS... --json` through the CLI, exit 0, as one document."""
    result = invoke("investigate", question, *flags, "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def runbook_json(invoke, *args: str, subject: str = "user:oncall") -> dict:  # type: ignore[no-untyped-def,type-arg]
    """`runbook ARGS... --subject SUBJECT --json` through the CLI, exit 0, as one document."""
    result = invoke("runbook", *args, "--subject", subject, "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def claim_lines(out: str) -> list[str]:
    """The claim lines of a printed report ("[fact      ] ..."), each stripped."""
    lines = out.split("\nClaims\n", 1)[1].split("\nEvidence\n", 1)[0].splitlines()
    return [line.strip() for line in lines if line.strip().startswith("[")]


@pytest.fixture()
def patient_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reads that may take 300 s: on a loaded machine a read cut at 20 s answers `partial`
    (a gap of its own) for no reason the test is about. Use with
    `pytestmark = pytest.mark.usefixtures("patient_reads")`."""
    monkeypatch.setenv("INVESTIGATOR_READ_TIMEOUT", "300")


@pytest.fixture(scope="module")
def demo_graph(driver: neo4j.Driver) -> neo4j.Driver:
    """The demo dataset in an otherwise empty graph, ingested once per test module."""
    from graph_schema.bundle import load_bundle
    from graph_schema.schema_ddl import apply_schema
    from graph_schema.writer import ingest_bundle

    wipe(driver)
    apply_schema(driver)
    ingest_bundle(driver, load_bundle(REPO / "datasets" / "payments-incident"))
    # A tenant's fulltext index is created by the ingest: runs must not race its population.
    driver.execute_query("CALL db.awaitIndexes(300)")
    return driver


class CliResult:
    """What one CLI invocation produced."""

    def __init__(self, code: int, out: str, err: str) -> None:
        self.code = code
        self.out = out
        self.err = err

    def __repr__(self) -> str:
        return f"CliResult(code={self.code}, out={self.out[:300]!r}, err={self.err[:300]!r})"


@pytest.fixture()
def cli_env(
    neo4j_settings: ConnectionSettings, monkeypatch: pytest.MonkeyPatch
) -> ConnectionSettings:
    """Point the CLI at the test server through the environment, as a user would."""
    monkeypatch.setenv("NEO4J_URI", neo4j_settings.uri)
    monkeypatch.setenv("NEO4J_USER", neo4j_settings.user)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j_settings.password.get_secret_value())
    # The bundled dataset's subjects are acme's: a bare `--subject user:bob` means acme/user:bob
    # (tests of tenant resolution unset or override it).
    monkeypatch.setenv("INVESTIGATOR_TENANT", "acme")
    monkeypatch.delenv("INVESTIGATOR_SUBJECT", raising=False)
    return neo4j_settings


@pytest.fixture()
def invoke(capfd: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """Run `investigator ARGS...` in-process and capture exit code, stdout and stderr."""

    def _invoke(*args: str) -> CliResult:
        capfd.readouterr()
        code = run_cli(list(args))
        out, err = capfd.readouterr()
        return CliResult(code, out, err)

    return _invoke


# The logs of servers a test or module started (attach_server_log), by node.
SERVER_LOGS = pytest.StashKey[list[tuple[str, Callable[[], str]]]]()


def attach_server_log(
    node: pytest.Item | pytest.Collector, name: str, read: Callable[[], str]
) -> None:
    """Show what `read()` returns, under `name`, in the report of every test of `node` (a
    test, or the module of a module-scoped fixture) that fails."""
    node.stash.setdefault(SERVER_LOGS, []).append((name, read))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.when == "call" and report.failed:
        for node in item.listchain():
            for name, read in node.stash.get(SERVER_LOGS, []):
                report.sections.append((name, read()))


def invoke_process(*args: str, timeout: float = 60) -> CliResult:
    """`investigator ARGS...` in a process of its own, in this test's environment, killed
    after `timeout` seconds: for commands that would serve forever if a check regressed
    (the test then fails with TimeoutExpired instead of hanging the suite)."""
    done = subprocess.run(
        [sys.executable, "-m", "investigator", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=os.environ.copy(),
        check=False,
    )
    return CliResult(done.returncode, done.stdout, done.stderr)


def json_error(result: CliResult) -> dict[str, object]:
    """What a command given `--json` prints on stdout when it fails (docs/contracts.md,
    "Errors with --json"): one line, `{"error": {"code", "exit_code", "message"}}`, its
    message the stderr line's and its exit code the command's. The error object."""
    from investigator.terminal import printable

    lines = result.out.splitlines()
    assert len(lines) == 1 and result.out.endswith("\n"), result
    doc = json.loads(lines[0])
    assert list(doc) == ["error"], result
    error = doc["error"]
    assert error["exit_code"] == result.code, result
    assert f"error: {printable(error['message'])}" in result.err.splitlines(), result
    return error  # type: ignore[no-any-return]


def release_line(key: str, n: int, at: str, acl: str = "internal", started: str = "") -> str:
    """One bundle line (YAML flow style): release `deploy:<key>-<n>` of payment-api finished
    at `at` (rolling out from `started` when given), under `acl`."""
    props = f'started_at: "{started}", ' if started else ""
    return (
        f"  - {{id: deploy:{key}-{n}, label: Deployment, name: {key}-{n}, acl: [{acl}], "
        f'source_id: src:cicd, locator: "cicd/{key}/{n}", valid_from: "{started or at}", '
        f'props: {{service: svc:payment-api, {props}finished_at: "{at}"}}}}\n'
    )


def change_line(key: str, n: int, at: str) -> str:
    """One bundle line (YAML flow style): change event `change:<key>-<n>` at `at`."""
    return (
        f"  - {{id: change:{key}-{n}, label: ChangeEvent, name: {key} change {n}, "
        f'acl: [internal], source_id: src:risk-console, locator: "risk-console/{key}/{n}", '
        f'valid_from: "{at}", props: {{at: "{at}"}}}}\n'
    )


def wiki_bundle(  # type: ignore[no-untyped-def]
    tenant: str, t0, documents: list, principals: dict[str, list[str]], purposes: list[str]
):
    """A bundle of one trusted wiki source (`src:wiki`, recorded a day before `t0`), its
    documents, and principals (id -> labels) holding `purposes`: the tie tenants' shape."""
    from datetime import timedelta

    from graph_schema.bundle import Bundle, PrincipalSpec, SourceSpec
    from graph_schema.kg_types import Trust

    before = t0 - timedelta(days=1)
    return Bundle(
        tenant=tenant,
        sources=[
            SourceSpec(
                source_id="src:wiki",
                source_type="wiki",
                owner_team="team:ops",
                trust=Trust.TRUSTED,
                authority=70,
                allowed_purposes=purposes,
                recorded_at=before,
            )
        ],
        principals=[
            PrincipalSpec(id=pid, labels=labels, purposes=purposes, recorded_at=before)
            for pid, labels in principals.items()
        ],
        documents=documents,
    )


def load_only(drv: neo4j.Driver, tenant: str, bundle) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    """A graph of `bundle` alone (wiped, schema applied, its indexes online)."""
    from graph_schema.bundle import LoadedBundle
    from graph_schema.schema_ddl import apply_schema
    from graph_schema.writer import ingest_bundle

    wipe(drv)
    apply_schema(drv)
    ingest_bundle(drv, LoadedBundle.from_bundles([(tenant, bundle)]))
    drv.execute_query("CALL db.awaitIndexes(300)")
    return drv
