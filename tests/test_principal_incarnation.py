"""A principal id retracted and then written again names someone new (e24-identity finding 2),
through the real CLI on the real server.

Runs belong to the principal as it was when they ran (its incarnation), not only to its id: the
id's new holder reads none of the earlier holder's runs (`runs`, `trace`, `verify`, `replay`,
an idempotency key's retry), an auditor reads both, told apart; runs recorded before runs
carried an incarnation belong to the holder whose first record preceded their start; the
ingest that writes the id again says so in one line.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import neo4j
import pytest
import yaml
from conftest import json_error

from investigator.context_graph.models import RunRequest, RunStatus
from investigator.context_graph.recorder import RunRecorder

TENANT = "t24"
FRANK = f"{TENANT}/user:frank"
AUDITOR = [f"{TENANT}/user:auditor", "--purpose", "audit"]
SOURCE = {
    "source_id": "src:iam",
    "source_type": "identity",
    "trust": "trusted",
    "allowed_purposes": ["incident_investigation", "audit"],
    "recorded_at": "2026-01-01T00:00:00Z",
}
WORLD = {
    "tenant": TENANT,
    "sources": [SOURCE],
    "principals": [
        {"id": "user:frank", "name": "Frank Old", "labels": ["internal"],
         "purposes": ["incident_investigation"], "source_id": "src:iam",
         "recorded_at": "2026-01-01T00:00:00Z"},
        {"id": "user:auditor", "labels": ["internal"], "purposes": ["audit"],
         "source_id": "src:iam", "recorded_at": "2026-01-01T00:00:00Z"},
    ],
    "nodes": [
        {"id": "svc:b", "label": "Service", "name": "bravo-service", "acl": ["internal"],
         "source_id": "src:iam", "locator": "c#b", "valid_from": "2025-01-01T00:00:00Z",
         "recorded_at": "2026-01-01T00:00:00Z"},
    ],
}  # fmt: skip
# The same id, for a different person (no recorded_at: recorded at the ingest).
FRANK_NEW = {
    "tenant": TENANT,
    "principals": [
        {"id": "user:frank", "name": "Frank New", "labels": ["internal"],
         "purposes": ["incident_investigation"], "source_id": "src:iam"}
    ],
}  # fmt: skip
OLD_QUESTION = "Which customer did Frank Old call about svc:b?"
ASKED = ["--service", "svc:b", "--as-of", "2026-07-01T00:00:00Z"]


def _ingest(invoke: Any, tmp_path: Path, name: str, bundle: dict[str, Any]) -> Any:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(bundle), encoding="utf-8")
    res = invoke("ingest", str(path))
    assert res.code == 0, res
    return res


def _retract_frank(invoke: Any, tmp_path: Path) -> None:
    at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    retraction = {"id": "user:frank", "reason": "Frank Old left", "at": at}
    _ingest(invoke, tmp_path, "retract.yaml", {"tenant": TENANT, "retractions": [retraction]})


def _runs(invoke: Any, *who: str) -> list[dict[str, Any]]:
    res = invoke("runs", "--subject", *who, "--json")
    assert res.code == 0, res
    runs: list[dict[str, Any]] = json.loads(res.out)["runs"]
    return runs


@pytest.fixture()
def world(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env, invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> neo4j.Driver:
    monkeypatch.setenv("INVESTIGATOR_CHAIN_DIR", str(tmp_path / "chain"))
    assert invoke("schema", "apply").code == 0
    _ingest(invoke, tmp_path, "world.yaml", WORLD)
    return clean_db


def test_a_principal_id_written_again_reads_none_of_its_earlier_holders_runs(  # type: ignore[no-untyped-def]
    world: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    first = invoke("investigate", OLD_QUESTION, *ASKED, "--subject", FRANK,
                   "--idempotency-key", "k-1", "--json")  # fmt: skip
    assert first.code == 0, first
    old_run = json.loads(first.out)["run_id"]
    _retract_frank(invoke, tmp_path)

    again = _ingest(invoke, tmp_path, "frank-new.yaml", FRANK_NEW)
    warned = [line for line in again.err.splitlines() if "user:frank" in line]
    assert len(warned) == 1, again.err
    assert "was retracted in tenant t24 and is written again" in warned[0]

    # The new holder: none of the earlier holder's runs, by listing, id or key.
    assert _runs(invoke, FRANK) == []
    for command in ("trace", "verify", "replay"):
        res = invoke(command, old_run, "--subject", FRANK)
        assert res.code == 3 and res.out == "", (command, res)
        assert "another subject's run (an earlier principal of this id)" in res.err, res
        assert OLD_QUESTION not in res.err
    retry = invoke("investigate", "What is svc:b?", *ASKED, "--subject", FRANK,
                   "--idempotency-key", "k-1", "--json")  # fmt: skip
    assert retry.code == 0, retry
    new_run = json.loads(retry.out)["run_id"]
    assert new_run != old_run and OLD_QUESTION not in retry.out
    assert [r["run_id"] for r in _runs(invoke, FRANK)] == [new_run]
    assert invoke("trace", new_run, "--subject", FRANK).code == 0

    # An auditor reads both, the earlier holder's marked as such.
    listed = {r["run_id"]: r for r in _runs(invoke, *AUDITOR)}
    note = listed[old_run]["subject_note"]
    assert note.startswith("retracted 2026-") and note.endswith("an earlier principal of this id")
    assert listed[new_run]["subject_note"] is None
    text = invoke("runs", "--subject", *AUDITOR).out
    assert f"{FRANK} ({note})  {OLD_QUESTION[:40]}" in text, text
    tree = invoke("trace", old_run, "--subject", *AUDITOR)
    assert tree.code == 0 and tree.out.startswith(f"subject {FRANK} ({note})\n"), tree
    assert invoke("trace", new_run, "--subject", *AUDITOR).out.startswith("run ")


def _legacy_run(driver: neo4j.Driver, question: str, at: datetime | None = None) -> str:
    """A run as recorded before runs carried their subject's incarnation (the recorder
    called without one, as every caller did), started at `at` (else now)."""
    recorder = RunRecorder(driver, clock=(lambda: at) if at is not None else None)
    request = RunRequest(
        question=question,
        subject_id=FRANK,
        purpose="incident_investigation",
        as_of=datetime(2026, 7, 1, tzinfo=UTC),
    )
    run_id = recorder.start_run(request).run_id
    recorder.finish_run(run_id, RunStatus.COMPLETE, "evidence_sufficient")
    return run_id


def test_a_run_without_an_incarnation_belongs_to_the_holder_whose_record_preceded_it(  # type: ignore[no-untyped-def]
    world: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    before = _legacy_run(world, OLD_QUESTION, datetime(2026, 3, 1, tzinfo=UTC))
    _retract_frank(invoke, tmp_path)
    _ingest(invoke, tmp_path, "frank-new.yaml", FRANK_NEW)
    after = _legacy_run(world, "What is svc:b?")

    assert [r["run_id"] for r in _runs(invoke, FRANK)] == [after]
    assert invoke("trace", before, "--subject", FRANK).code == 3
    assert invoke("trace", after, "--subject", FRANK).code == 0
    listed = {r["run_id"]: r["subject_note"] for r in _runs(invoke, *AUDITOR)}
    assert listed[after] is None
    assert listed[before].endswith("; an earlier principal of this id"), listed


def test_an_auditors_replay_of_an_earlier_holders_run_is_refused_in_one_line(  # type: ignore[no-untyped-def]
    world: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    """Replay re-executes a run with its subject's grants of now: the id's new holder's
    grants would compare someone else's reads (before: `verified: true`, exit 0)."""
    first = invoke("investigate", OLD_QUESTION, *ASKED, "--subject", FRANK, "--json")
    assert first.code == 0, first
    old_run = json.loads(first.out)["run_id"]
    _retract_frank(invoke, tmp_path)
    _ingest(invoke, tmp_path, "frank-new.yaml", FRANK_NEW)
    second = invoke("investigate", "What is svc:b?", *ASKED, "--subject", FRANK, "--json")
    new_run = json.loads(second.out)["run_id"]

    for extra in ((), ("--json",)):
        res = invoke("replay", old_run, "--subject", *AUDITOR, *extra)
        assert res.code == 3 and (json_error(res) if extra else res.out == ""), res
        lines = res.err.strip().splitlines()
        assert len(lines) == 1, res.err
        assert lines[0].startswith(f"error: run {old_run} is an earlier principal's run: "
                                   f"{FRANK} (retracted 2026-"), lines  # fmt: skip
        assert "grants of now" in lines[0] and OLD_QUESTION not in lines[0]
    # The current holder's run replays as before, for the auditor and for its subject.
    assert invoke("replay", new_run, "--subject", *AUDITOR).code == 0
    assert invoke("replay", new_run, "--subject", FRANK).code == 0


def test_a_backdated_re_creation_cannot_hand_an_earlier_holders_run_to_the_new_one(  # type: ignore[no-untyped-def]
    world: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    """A run without an incarnation belongs by its start: a re-created record (and its
    retraction) dated before that start, even with --backdate, would give it to the new
    holder (before: written, and the new frank read it); refused, nothing written."""
    before = _legacy_run(world, OLD_QUESTION, datetime(2026, 3, 1, tzinfo=UTC))
    retraction = {"id": "user:frank", "reason": "Frank Old left", "at": "2026-02-01T00:00:00Z"}
    path = tmp_path / "retract.yaml"
    path.write_text(yaml.safe_dump({"tenant": TENANT, "retractions": [retraction]}), "utf-8")
    assert invoke("ingest", str(path), "--backdate").code == 0
    dated = {"tenant": TENANT, "principals": [
        {**FRANK_NEW["principals"][0], "recorded_at": "2026-02-02T00:00:00Z"}]}  # fmt: skip
    path = tmp_path / "frank-new.yaml"
    path.write_text(yaml.safe_dump(dated), encoding="utf-8")
    for extra in ((), ("--backdate",)):
        res = invoke("ingest", str(path), *extra)
        assert res.code == 2 and res.out == "", res
        assert res.err == (
            "error: ingest refused: principal user:frank would be written again recorded at "
            f"2026-02-02T00:00:00Z, at or before run {before} of an earlier principal of this "
            "id (started 2026-03-01T00:00:00Z, recorded before runs carried their subject's "
            "incarnation): the new principal would read that run; omit its recorded_at to "
            "record it now (--backdate does not lift this)\n"
        ), res.err
    # Nothing was written: frank is still retracted; then written now, he reads none of it.
    assert "unknown subject" in invoke("runs", "--subject", FRANK).err
    _ingest(invoke, tmp_path, "frank-now.yaml", FRANK_NEW)
    assert _runs(invoke, FRANK) == []
    assert invoke("trace", before, "--subject", FRANK).code == 3


def test_a_refused_run_of_an_unknown_subject_does_not_fence_a_later_ingest(  # type: ignore[no-untyped-def]
    world: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    """A run refused before any read (its subject unknown) read nothing of the KG: records
    dated before it are still written without --backdate (before: refused, 'not after run
    R ... which saw the KG as known at ...')."""
    refused = invoke("investigate", "What is svc:b?", *ASKED, "--subject", f"{TENANT}/user:newbie")
    assert refused.code == 3 and "unknown subject" in refused.err, refused
    listed = _runs(invoke, *AUDITOR)
    assert [r["status"] for r in listed] == ["refused"], listed
    newbie = {"tenant": TENANT, "principals": [
        {"id": "user:newbie", "labels": ["internal"], "purposes": ["incident_investigation"],
         "source_id": "src:iam", "recorded_at": "2026-01-02T00:00:00Z"}],
        "nodes": [{"id": "svc:n", "label": "Service", "name": "newbie-service",
                   "acl": ["internal"], "source_id": "src:iam", "locator": "c#n",
                   "valid_from": "2025-01-01T00:00:00Z", "recorded_at": "2026-01-02T00:00:00Z"}],
    }  # fmt: skip
    res = _ingest(invoke, tmp_path, "newbie.yaml", newbie)
    assert "--backdate" not in res.err, res
    asked = invoke("investigate", "What is svc:n?", "--service", "svc:n", *ASKED[2:],
                   "--subject", f"{TENANT}/user:newbie", "--json")  # fmt: skip
    assert asked.code == 0, asked


def _principal_agent(invoke: Any, run_id: str) -> dict[str, Any]:
    res = invoke("trace", run_id, "--subject", *AUDITOR, "--format", "prov-json")
    assert res.code == 0, res
    agents = json.loads(res.out)["agent"]
    [agent] = [a for a in agents.values() if "inv:subject" in a]
    return dict(agent)


def test_anchors_and_prov_json_say_which_holder_of_the_id_a_run_was(  # type: ignore[no-untyped-def]
    world: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    """Each run's anchor and its PROV-JSON principal carry its subject's incarnation, so a
    run known only by its anchor (deleted) is still its own holder's (before: no holder of a
    retracted id could verify its own deleted run, exit 3) and never the earlier one's."""
    first = invoke("investigate", OLD_QUESTION, *ASKED, "--subject", FRANK, "--json")
    old_run = json.loads(first.out)["run_id"]
    _retract_frank(invoke, tmp_path)
    _ingest(invoke, tmp_path, "frank-new.yaml", FRANK_NEW)
    second = invoke("investigate", "What is svc:b?", *ASKED, "--subject", FRANK, "--json")
    new_run = json.loads(second.out)["run_id"]

    anchored = dict(world.execute_query(
        "MATCH (a:CtxAnchor) WHERE a.run_id IN $runs "
        "RETURN a.run_id AS run, a.subject_incarnation AS incarnation",
        runs=[old_run, new_run]).records)  # fmt: skip
    assert anchored == {old_run: 1, new_run: 2}, anchored
    for run_id, number in ((old_run, "1"), (new_run, "2")):
        incarnation = _principal_agent(invoke, run_id)["inv:incarnation"]
        assert incarnation == {"$": number, "type": "xsd:int"}, incarnation

    for run_id in (old_run, new_run):
        world.execute_query("MATCH (n:CtxEvent {run_id: $r}) DETACH DELETE n", r=run_id)
    own = invoke("verify", new_run, "--subject", FRANK)
    assert own.code == 1 and "run_deleted" in own.out, own
    earlier = invoke("verify", old_run, "--subject", FRANK)
    assert earlier.code == 3 and "an earlier principal of this id" in earlier.err, earlier


def test_an_id_retracted_twice_is_one_earlier_holder_for_the_executor_and_the_audit(  # type: ignore[no-untyped-def]
    world: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    """The executor numbers the subject's holder by the tombstones before its record;
    `read_incarnations` (trace, replay, runs) by the retractions of a holding record. A
    second retraction of a retracted id writes no tombstone (a no-op), so both say the id
    written again is its second holder, and `trace`, `replay` and `investigate` agree."""
    from investigator.context_graph.incarnation import read_incarnations

    first = invoke("investigate", OLD_QUESTION, *ASKED, "--subject", FRANK, "--json")
    old_run = json.loads(first.out)["run_id"]
    _retract_frank(invoke, tmp_path)
    at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    again = {"tenant": TENANT, "retractions": [
        {"id": "user:frank", "reason": "retracted again", "at": at}]}  # fmt: skip
    _ingest(invoke, tmp_path, "retract-again.yaml", again)
    statuses = [status for (status,) in world.execute_query(
        "MATCH (p:KG:Principal {tenant: $t, id: 'user:frank'}) RETURN p.status ORDER BY "
        "p.version", t=TENANT).records]  # fmt: skip
    assert statuses == ["active", "retracted"], statuses
    _ingest(invoke, tmp_path, "frank-new.yaml", FRANK_NEW)
    second = invoke("investigate", "What is svc:b?", *ASKED, "--subject", FRANK, "--json")
    assert second.code == 0, second
    new_run = json.loads(second.out)["run_id"]

    recorded = dict(world.execute_query(
        "MATCH (r:CtxRun) WHERE r.run_id IN $runs RETURN r.run_id, r.subject_incarnation",
        runs=[old_run, new_run]).records)  # fmt: skip
    assert recorded == {old_run: 1, new_run: 2}, recorded
    held = read_incarnations(world, TENANT, ["user:frank"])["user:frank"]
    assert [inc.number for inc in held] == [1, 2] and held[0].retracted_at is not None
    assert invoke("trace", new_run, "--subject", FRANK).code == 0
    assert invoke("replay", new_run, "--subject", FRANK).code == 0
    assert invoke("trace", old_run, "--subject", FRANK).code == 3
    tree = invoke("trace", old_run, "--subject", *AUDITOR)
    assert tree.code == 0 and "an earlier principal of this id" in tree.out.splitlines()[0]
    assert _principal_agent(invoke, new_run)["inv:incarnation"]["$"] == "2"


def test_a_new_holders_empty_listing_says_an_earlier_holders_runs_are_not_shown(  # type: ignore[no-untyped-def]
    world: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    """An explorer's finding: `runs` for the id's new holder said "no runs recorded", as if
    the id had never run anything, while the earlier holder's runs exist (shown to an
    auditor). The line now says they are not shown, and says it the same whether the earlier
    holder ran anything or not (grace never did), so it tells nothing of those runs."""
    old_grace = {**json.loads(json.dumps(WORLD["principals"][0])), "id": "user:grace"}
    _ingest(invoke, tmp_path, "grace.yaml", {"tenant": TENANT, "principals": [old_grace]})
    first = invoke("investigate", OLD_QUESTION, *ASKED, "--subject", FRANK, "--json")
    assert first.code == 0, first
    old_run = json.loads(first.out)["run_id"]
    # A first holder with no runs: as before.
    assert invoke("runs", "--subject", f"{TENANT}/user:grace").out == "no runs recorded\n"
    at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    retractions = [{"id": f"user:{who}", "reason": "left", "at": at} for who in ("frank", "grace")]
    _ingest(invoke, tmp_path, "retract.yaml", {"tenant": TENANT, "retractions": retractions})
    new = json.loads(json.dumps(FRANK_NEW))  # copies: the YAML dump may hold no aliases
    new["principals"].append({**json.loads(json.dumps(new["principals"][0])), "id": "user:grace"})
    _ingest(invoke, tmp_path, "new.yaml", new)

    lines = {}
    for who in ("frank", "grace"):
        res = invoke("runs", "--subject", f"{TENANT}/user:{who}")
        assert res.code == 0 and res.err == "", res
        (lines[who],) = res.out.splitlines()
    said = lines["frank"]
    assert said.startswith(f"no runs recorded by {FRANK} since it was written again (20"), said
    assert said.endswith(
        "): a new principal of this id; runs of an earlier principal of this id are not shown "
        "(they are not yours; an auditor reads them with --purpose audit)"
    ), said
    assert old_run not in said and OLD_QUESTION not in said
    # The same words for an id whose earlier holder never ran anything: no oracle.
    shapes = {
        re.sub(r"user:\w+ since it was written again \([^)]*\)", "ID (AT)", line)
        for line in lines.values()
    }
    assert len(shapes) == 1, lines
    assert _runs(invoke, FRANK) == []  # --json unchanged
    # The auditor still lists the earlier holder's run, and its own empty listing is not this.
    assert [r["run_id"] for r in _runs(invoke, *AUDITOR)] == [old_run]
