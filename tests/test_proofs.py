"""Kept read-only proofs (issue 12): once per server and template text, never widened.

Against the real server: a proof made by one executor spares the next one its EXPLAIN; a
changed template text, another server or a damaged file means proving again.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import neo4j
import pytest

from cypher_templates.executor import TemplateExecutor
from cypher_templates.plan import PlanStep
from cypher_templates.proofs import MAX_SERVERS, RECENT_SERVERS, ReadOnlyProofs
from cypher_templates.registry import MANIFEST_PATH, TEMPLATES_DIR, TemplateRegistry
from cypher_templates.subject import Subject

NOW = datetime(2026, 8, 1, tzinfo=UTC)
SUBJECT = Subject(
    tenant="proof-test", id="user:nobody", labels=("internal",), purpose="incident_investigation"
)
STEP = PlanStep(
    template_id="ownership_over_time", evidence_type="ownership", params={"service_id": "svc:x"}
)


class CountingExecutor(TemplateExecutor):
    """The real executor, counting the EXPLAINs it sends (each one still goes to Neo4j)."""

    explains = 0

    def explain(self, rendered, parameters=None):  # type: ignore[no-untyped-def]
        CountingExecutor.explains += 1
        return super().explain(rendered, parameters)


@pytest.fixture(autouse=True)
def _count_from_zero() -> None:
    CountingExecutor.explains = 0


def test_a_kept_proof_spares_the_next_process_its_explain(
    driver: neo4j.Driver, tmp_path: Path
) -> None:
    path = tmp_path / "proofs.json"
    first = CountingExecutor(driver, proofs=ReadOnlyProofs(path))
    result = first.run(STEP, SUBJECT, NOW)
    assert CountingExecutor.explains == 1
    kept = json.loads(path.read_text())["proofs"]
    assert [result.template_hash] in kept.values()

    second = CountingExecutor(driver, proofs=ReadOnlyProofs(path))  # as a new CLI process
    assert second.run(STEP, SUBJECT, NOW).rows == result.rows
    assert CountingExecutor.explains == 1


def test_a_changed_text_is_proven_again(driver: neo4j.Driver, tmp_path: Path) -> None:
    path = tmp_path / "proofs.json"
    CountingExecutor(driver, proofs=ReadOnlyProofs(path)).run(STEP, SUBJECT, NOW)
    templates = tmp_path / "templates"
    shutil.copytree(TEMPLATES_DIR, templates)
    changed = templates / "ownership_over_time.cypher"
    changed.write_text(changed.read_text() + "\n// an edited comment changes the hash\n")
    edited = TemplateRegistry.load(MANIFEST_PATH, templates)
    executor = CountingExecutor(driver, registry=edited, proofs=ReadOnlyProofs(path))
    executor.run(STEP, SUBJECT, NOW)
    assert CountingExecutor.explains == 2
    assert len(next(iter(json.loads(path.read_text())["proofs"].values()))) == 2


def test_another_server_or_a_damaged_file_means_proving_again(
    driver: neo4j.Driver, tmp_path: Path
) -> None:
    path = tmp_path / "proofs.json"
    CountingExecutor(driver, proofs=ReadOnlyProofs(path)).run(STEP, SUBJECT, NOW)
    kept = json.loads(path.read_text())
    (hashes,) = kept["proofs"].values()
    path.write_text(json.dumps({"format": 1, "proofs": {"Neo4j/9.9.9|elsewhere:7687|": hashes}}))
    CountingExecutor(driver, proofs=ReadOnlyProofs(path)).run(STEP, SUBJECT, NOW)
    assert CountingExecutor.explains == 2
    path.write_text("{not json")
    CountingExecutor(driver, proofs=ReadOnlyProofs(path)).run(STEP, SUBJECT, NOW)
    assert CountingExecutor.explains == 3
    assert json.loads(path.read_text())["format"] == 1  # rewritten whole


def test_without_a_file_proofs_last_for_the_process(driver: neo4j.Driver) -> None:
    executor = CountingExecutor(driver, proofs=ReadOnlyProofs(None))
    executor.run(STEP, SUBJECT, NOW)
    executor.run(STEP, SUBJECT, NOW)
    assert CountingExecutor.explains == 1


_WRITER = """
import sys
import time
from pathlib import Path
from cypher_templates.proofs import MAX_SERVERS, RECENT_SERVERS, ReadOnlyProofs
proofs = ReadOnlyProofs(Path(sys.argv[1]))
proofs.is_proven("-", "-")  # loaded once, as a CLI process does at its first template
Path(sys.argv[3]).touch()
while not Path(sys.argv[4]).exists():  # both loaded: now write at once
    time.sleep(0.001)
for i in range(50):
    proofs.record(f"Neo4j/5.26.0|{sys.argv[2]}-{i:02d}:7687|", "sha256:" + "a" * 64)
"""


def test_the_server_bound_holds_after_two_processes_write_at_once(
    driver: neo4j.Driver, tmp_path: Path
) -> None:
    path = tmp_path / "proofs.json"
    mine = ReadOnlyProofs(path)  # this process: it proves on the real server, first and last
    CountingExecutor(driver, proofs=mine).run(STEP, SUBJECT, NOW)
    (server,) = json.loads(path.read_text())["proofs"]
    go = tmp_path / "go"
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(path), name, str(tmp_path / name), str(go)]
        )
        for name in ("a", "b")
    ]
    deadline = time.monotonic() + 60
    while not all((tmp_path / name).exists() for name in ("a", "b")):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    go.touch()
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    kept = json.loads(path.read_text())["proofs"]
    assert len(kept) == MAX_SERVERS, len(kept)  # the merge re-added what the trims dropped
    # The newest of each writer stay; the first server, now the oldest, was dropped.
    assert {"Neo4j/5.26.0|a-49:7687|", "Neo4j/5.26.0|b-49:7687|"} <= set(kept)
    assert server not in kept
    # This process proves a second template on its server: that server is the newest again,
    # with both its proofs, and the bound still holds.
    step = PlanStep(
        template_id="owners_of", evidence_type="ownership", params={"entity_id": "alert:x"}
    )
    CountingExecutor(driver, proofs=mine).run(step, SUBJECT, NOW)
    kept = json.loads(path.read_text())["proofs"]
    assert len(kept) == MAX_SERVERS and list(kept)[-1] == server
    assert len(kept[server]) == 2
    assert CountingExecutor.explains == 2


def test_a_server_whose_proofs_are_used_is_not_pushed_out_by_servers_that_come_and_go(
    driver: neo4j.Driver, tmp_path: Path
) -> None:
    path = tmp_path / "proofs.json"
    CountingExecutor(driver, proofs=ReadOnlyProofs(path)).run(STEP, SUBJECT, NOW)
    (server,) = json.loads(path.read_text())["proofs"]
    # Test servers come and go, each proving a template in a process of its own: ours, now
    # the oldest, is the next to drop.
    for i in range(MAX_SERVERS - 1):
        ReadOnlyProofs(path).record(f"Neo4j/5.26.0|gone-{i:02d}:7687|", "sha256:" + "b" * 64)
    assert next(iter(json.loads(path.read_text())["proofs"])) == server

    # A new process uses its kept proof (no EXPLAIN): the server counts as the newest.
    CountingExecutor(driver, proofs=ReadOnlyProofs(path)).run(STEP, SUBJECT, NOW)
    assert CountingExecutor.explains == 1
    assert list(json.loads(path.read_text())["proofs"])[-1] == server
    for i in range(RECENT_SERVERS):
        ReadOnlyProofs(path).record(f"Neo4j/5.26.0|later-{i:02d}:7687|", "sha256:" + "c" * 64)
    assert server in json.loads(path.read_text())["proofs"]
    CountingExecutor(driver, proofs=ReadOnlyProofs(path)).run(STEP, SUBJECT, NOW)
    assert CountingExecutor.explains == 1  # kept, so not proven again

    # Among the newest, a use does not rewrite the file.
    before = path.stat().st_mtime_ns, path.stat().st_ino
    CountingExecutor(driver, proofs=ReadOnlyProofs(path)).run(STEP, SUBJECT, NOW)
    assert (path.stat().st_mtime_ns, path.stat().st_ino) == before


def _servers(path: Path) -> list[str]:
    return list(json.loads(path.read_text())["proofs"])


def test_a_long_lived_process_marks_only_the_servers_it_used_since_its_last_write(
    driver: neo4j.Driver, tmp_path: Path
) -> None:
    """A long-lived process (the warm one) moved every server it had ever proved on or used
    to the newest at each write, pushing out servers other processes use now."""
    path = tmp_path / "proofs.json"
    elsewhere = "sha256:" + "d" * 64
    # The long-lived process proves a template on the real server: written, the newest.
    long_lived = ReadOnlyProofs(path)
    CountingExecutor(driver, proofs=long_lived).run(STEP, SUBJECT, NOW)
    (server,) = _servers(path)
    for i in range(MAX_SERVERS - 1):
        ReadOnlyProofs(path).record(f"Neo4j/5.26.0|gone-{i:02d}:7687|", "sha256:" + "b" * 64)
    assert _servers(path)[0] == server
    # Later it proves on another server only: ours, unused since, is not moved ahead of the
    # others (before: moved to the newest, and gone-00 and gone-01 dropped for it).
    long_lived.record("Neo4j/5.26.0|other-1:7687|", elsewhere)
    kept = _servers(path)
    assert len(kept) == MAX_SERVERS and kept[-1] == "Neo4j/5.26.0|other-1:7687|"
    assert server not in kept and "Neo4j/5.26.0|gone-00:7687|" in kept

    # Another long-lived process uses the kept proof (a new process proved it again first).
    CountingExecutor(driver, proofs=ReadOnlyProofs(path)).run(STEP, SUBJECT, NOW)
    assert CountingExecutor.explains == 2
    using = ReadOnlyProofs(path)
    CountingExecutor(driver, proofs=using).run(STEP, SUBJECT, NOW)
    assert CountingExecutor.explains == 2  # the kept proof, among the newest: nothing written
    for i in range(MAX_SERVERS - 1):
        ReadOnlyProofs(path).record(f"Neo4j/5.26.0|later-{i:02d}:7687|", "sha256:" + "c" * 64)
    assert _servers(path)[0] == server
    # Its next write marks the server it used since its last write, once, with its own.
    using.record("Neo4j/5.26.0|other-2:7687|", elsewhere)
    assert _servers(path)[-2:] == [server, "Neo4j/5.26.0|other-2:7687|"]
    for i in range(MAX_SERVERS - 2):
        ReadOnlyProofs(path).record(f"Neo4j/5.26.0|again-{i:02d}:7687|", "sha256:" + "e" * 64)
    assert _servers(path)[0] == server
    # Not used since: the write after does not mark it again (before: moved to the newest).
    using.record("Neo4j/5.26.0|other-3:7687|", elsewhere)
    kept = _servers(path)
    assert kept[-1] == "Neo4j/5.26.0|other-3:7687|" and server not in kept, kept[:3]
