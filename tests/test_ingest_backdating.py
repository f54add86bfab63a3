"""An ingest may not date records into what a recorded run saw (graph_schema/backdating.py).

Before, a bundle could give a new record (or a retraction) a `recorded_at` before the
`known_at` of runs already recorded in the tenant: the KG then "had known" it when those runs
ran. Their replays drifted, and a question asked `--known-at` that moment was answered with
it. Now such an ingest is refused in one line, nothing written, unless the operator loads
curated history on purpose (`--backdate`); records without an explicit time are recorded
now, as before. Through the real CLI on the demo dataset.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import wipe

from graph_schema.backdating import BackdatedRecords, RecordFloor, backdated, explicit_times
from graph_schema.bundle import load_bundle
from graph_schema.schema_ddl import apply_schema
from graph_schema.writer import ingest_bundle
from investigator.context_graph.runs import run_floors

DATASET = Path(__file__).resolve().parents[1] / "datasets" / "payments-incident"
QUESTION = "Was release-2026.07.23.1 related to the PAY-4097 errors?"
SEED = ("--service", "svc:payment-api", "--as-of", "2026-07-23T10:30:00Z",
        "--subject", "acme/user:bob")  # fmt: skip
LATE_CHANGE = """\
tenant: acme
nodes:
  - {{id: change:late-import, label: ChangeEvent, name: a change imported late, acl: [internal],
     source_id: src:risk-console, valid_from: "2026-07-23T10:01:00Z",{recorded}
     props: {{change_type: config, at: "2026-07-23T10:01:00Z"}}}}
"""
BACK_DATED = ' recorded_at: "2026-07-23T10:01:05Z",'
LATE_RETRACTION = """\
tenant: acme
retractions:
  - {id: doc:chat-payments-2026-07-23-1012, reason: imported late, at: "2026-07-23T11:00:00Z"}
"""

_STATE: dict[str, str] = {}


@pytest.fixture()
def seed_run(driver: neo4j.Driver, cli_env, invoke) -> str:  # type: ignore[no-untyped-def]
    """The demo graph and bob's recorded seed run (set up once for the module)."""
    if "run" not in _STATE:
        wipe(driver)
        apply_schema(driver)
        ingest_bundle(driver, load_bundle(DATASET))
        result = invoke("investigate", QUESTION, *SEED, "--json")
        assert result.code == 0, result
        _STATE["run"] = json.loads(result.out)["run_id"]
    return _STATE["run"]


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _count(driver: neo4j.Driver, query: str) -> int:
    records, _, _ = driver.execute_query(query)
    return int(records[0][0])


def test_a_record_dated_before_a_recorded_run_is_refused(  # type: ignore[no-untyped-def]
    seed_run, driver, invoke, tmp_path: Path
) -> None:
    before = _count(driver, "MATCH (n:KG {tenant: 'acme'}) RETURN count(n)")
    late = _write(tmp_path, "late.yaml", LATE_CHANGE.format(recorded=BACK_DATED))
    result = invoke("ingest", late)
    assert result.code == 2, result
    assert result.out == "" and result.err.count("\n") == 1, result
    line = result.err
    assert line.startswith(
        "error: ingest refused: change:late-import would be recorded at "
        f"2026-07-23T10:01:05Z, not after run {seed_run} of tenant acme"
    ), line
    assert "--backdate" in line
    assert _count(driver, "MATCH (n:KG {tenant: 'acme'}) RETURN count(n)") == before
    # A back-dated retraction would hide a record from what the run saw: refused too.
    retract = invoke("ingest", _write(tmp_path, "retract.yaml", LATE_RETRACTION))
    assert retract.code == 2 and "doc:chat-payments-2026-07-23-1012 would be" in retract.err
    # A retraction has no recorded_at and needs its `at`: the hint says what to change.
    assert "Omit its recorded_at" not in retract.err, retract.err
    assert "Give its retraction an `at` after " in retract.err, retract.err
    assert (
        _count(
            driver,
            "MATCH (d:KG {tenant: 'acme', id: 'doc:chat-payments-2026-07-23-1012'}) "
            "WHERE d.status <> 'active' RETURN count(d)",
        )
        == 0
    )
    # Without the explicit time it is recorded now, after every run: accepted.
    now = invoke("ingest", _write(tmp_path, "now.yaml", LATE_CHANGE.format(recorded="")))
    assert now.code == 0, now
    # The run still replays as it was.
    replay = invoke("replay", seed_run, "--subject", "acme/user:bob", "--json")
    assert replay.code == 0 and json.loads(replay.out)["verified"] is True, replay


def test_backdate_loads_history_and_the_runs_replay_says_what_changed(  # type: ignore[no-untyped-def]
    seed_run, driver, invoke, tmp_path: Path
) -> None:
    late = LATE_CHANGE.format(recorded=BACK_DATED).replace("late-import", "late-import-2")
    late_path = _write(tmp_path, "late2.yaml", late)
    result = invoke("ingest", late_path, "--backdate")
    assert result.code == 0, result
    # Said at the ingest: how many recorded runs saw the time it writes into (count only).
    assert (
        "ingest: --backdate dated 1 record into the time 1 recorded run of tenant acme saw "
        "(known_at at or after 2026-07-23T10:01:05Z)"
    ) in result.err, result.err
    # The operator chose it: the run now sees a change it did not, and its replay says so,
    # naming the backdated ingest as the likely cause (before: "the call kept no record of
    # its rows ... replay cannot name its records or say why").
    replay = invoke("replay", seed_run, "--subject", "acme/user:bob", "--json")
    assert replay.code == 1, replay
    report = json.loads(replay.out)
    assert report["verified"] is False
    changed = [d["detail"] for d in report["drift"] if d["kind"] == "hash_mismatch"]
    assert changed, report["drift"]
    for detail in changed:
        assert f"likely cause: `ingest --backdate` of {late_path} at " in detail, detail
        assert "dated 1 record at or before the run's known_at (from 2026-07-23T10:01:05Z" in (
            detail
        )
    # And the record itself, where the call returns it now (the reader, bob, may read it).
    assert any(
        "(from 2026-07-23T10:01:05Z; the call returns now: change:late-import-2)" in detail
        for detail in changed
    ), changed


SCOPED_LATE = """\
tenant: acme
principals:
  - {id: user:audit-lite, labels: [internal], purposes: [audit], source_id: src:iam}
nodes:
  - {id: change:late-open, label: ChangeEvent, name: a late change, acl: [internal],
     source_id: src:risk-console, valid_from: "2026-07-23T10:01:00Z",
     recorded_at: "2026-07-23T10:01:05Z", props: {change_type: config, at: "2026-07-23T10:01:00Z"}}
  - {id: change:late-incident, label: ChangeEvent, name: a late incident change,
     acl: [internal, incident], source_id: src:risk-console, valid_from: "2026-07-23T10:01:00Z",
     recorded_at: "2026-07-23T10:01:05Z", props: {change_type: config, at: "2026-07-23T10:01:00Z"}}
"""


def _backdate_details(invoke, run: str, *reader: str) -> tuple[list[str], str]:  # type: ignore[no-untyped-def]
    """The hash_mismatch lines of `run`'s replay read by `reader`, and all it printed."""
    replay = invoke("replay", run, *reader, "--json")
    assert replay.code == 1, replay
    drift = json.loads(replay.out)["drift"]
    details = [d["detail"] for d in drift if d["kind"] == "hash_mismatch"]
    return [d for d in details if "change:late-open" in d], replay.out + replay.err


def test_replay_names_the_backdated_records_the_reader_may_read(  # type: ignore[no-untyped-def]
    seed_run, driver, invoke, tmp_path: Path
) -> None:
    # Before: replay named the backdated ingest but none of its records ("the call kept no
    # record of its rows, so replay cannot name them"): an auditor had to hunt for them.
    late = _write(tmp_path, "scoped-late.yaml", SCOPED_LATE)
    assert invoke("ingest", late, "--backdate").code == 0
    # The run's own subject reads both records the call returns now.
    named, _ = _backdate_details(invoke, seed_run, "--subject", "acme/user:bob")
    assert named, "no drift line names the backdated records"
    for detail in named:
        assert (f"`ingest --backdate` of {late} at ") in detail and (
            "dated 2 records at or before the run's known_at (from 2026-07-23T10:01:05Z; the "
            "call returns now: change:late-incident, change:late-open)"
        ) in detail, detail
    # An auditor without `incident` reads the same line with only the record it may read:
    # the other id appears nowhere, and the count it sees is the ingest's, as bob's.
    audited, printed = _backdate_details(
        invoke, seed_run, "--subject", "acme/user:audit-lite", "--purpose", "audit"
    )
    assert audited, printed
    for detail in audited:
        assert (
            "dated 2 records at or before the run's known_at (from 2026-07-23T10:01:05Z; the "
            "call returns now: change:late-open)"
        ) in detail, detail
    assert "change:late-incident" not in printed


def test_a_back_dated_principal_is_not_a_record_a_run_saw(  # type: ignore[no-untyped-def]
    seed_run, driver, invoke, tmp_path: Path
) -> None:
    # Grants are read as of now, never at a run's known_at: a principal's record time
    # changes nothing the run saw, so an identity feed may date it.
    del seed_run
    bundle = (
        "tenant: acme\nprincipals:\n  - {id: user:dave, labels: [internal], purposes: "
        '[incident_investigation], source_id: src:iam, recorded_at: "2026-01-05T09:00:00Z"}\n'
    )
    result = invoke("ingest", _write(tmp_path, "dave.yaml", bundle))
    assert result.code == 0, result


TWO_BACK_DATED = """\
tenant: acme
nodes:
  - {id: change:late-a, label: ChangeEvent, name: a late change, acl: [internal],
     source_id: src:risk-console, valid_from: "2026-07-23T10:01:00Z",
     recorded_at: "2026-07-23T10:01:05Z", props: {change_type: config, at: "2026-07-23T10:01:00Z"}}
  - {id: change:late-b, label: ChangeEvent, name: another late change, acl: [internal],
     source_id: src:risk-console, valid_from: "2026-07-23T10:01:00Z",
     recorded_at: "2026-07-23T10:01:06Z", props: {change_type: config, at: "2026-07-23T10:01:00Z"}}
"""
OTHER_WRITER = """\
tenant: acme
nodes:
  - {{id: change:meanwhile-{n}, label: ChangeEvent, name: written meanwhile, acl: [internal],
     source_id: src:risk-console, valid_from: "2026-07-23T10:01:00Z",
     props: {{change_type: config, at: "2026-07-23T10:01:00Z"}}}}
"""


def _another_writer_before_write(
    patch: pytest.MonkeyPatch, driver: neo4j.Driver, tmp_path: Path, write: int
) -> None:
    """Another ingest of tenant acme commits just before the ingest's `write`-th node write
    transaction runs: that transaction then really fails (the writer's mark check, rolled
    back by Neo4j), the ones before it stay committed: an ingest stopped part way."""
    from graph_schema import writer

    real = writer._write_nodes
    calls = {"n": 0, "busy": False}

    def write_nodes(tx, writes):  # type: ignore[no-untyped-def]
        if not calls["busy"]:
            calls["n"] += 1
            if calls["n"] == write:
                calls["busy"] = True
                other = _write(tmp_path, f"other-{write}.yaml", OTHER_WRITER.format(n=write))
                ingest_bundle(driver, load_bundle(other))
                calls["busy"] = False
        return real(tx, writes)

    patch.setattr(writer, "_write_nodes", write_nodes)


def _late_records_and_markers(driver: neo4j.Driver) -> tuple[int, int]:
    records = _count(
        driver, "MATCH (n:KG {tenant: 'acme'}) WHERE n.id IN ['change:late-a', 'change:late-b'] "
        "RETURN count(n)",
    )  # fmt: skip
    markers = _count(
        driver, "MATCH (m:BackdatedIngest {tenant: 'acme'}) WHERE 'change:late-a' IN m.targets "
        "RETURN count(m)",
    )  # fmt: skip
    return records, markers


def test_the_backdate_marker_commits_with_the_first_records_or_not_at_all(  # type: ignore[no-untyped-def]
    seed_run, driver, invoke, tmp_path: Path
) -> None:
    # Before: the `:BackdatedIngest` marker was written in a transaction of its own after
    # the records: an ingest stopped between them left backdated records no marker named,
    # and replay could not say why the run's reads changed.
    del seed_run
    late = _write(tmp_path, "two-late.yaml", TWO_BACK_DATED)
    args = ("ingest", late, "--backdate", "--batch-size", "1")
    # Stopped at its first write transaction: neither the records nor the marker.
    with pytest.MonkeyPatch.context() as patch:
        _another_writer_before_write(patch, driver, tmp_path, write=1)
        stopped = invoke(*args)
    assert stopped.code == 1 and "wrote to it meanwhile" in stopped.err, stopped
    assert _late_records_and_markers(driver) == (0, 0)
    # Stopped at its second: the first record stands, and so does the marker naming both.
    with pytest.MonkeyPatch.context() as patch:
        _another_writer_before_write(patch, driver, tmp_path, write=2)
        stopped = invoke(*args)
    assert stopped.code == 1 and "wrote to it meanwhile" in stopped.err, stopped
    assert _late_records_and_markers(driver) == (1, 1)
    records, _, _ = driver.execute_query(
        "MATCH (m:BackdatedIngest {tenant: 'acme'}) WHERE 'change:late-a' IN m.targets "
        "RETURN m.targets AS targets, m.origin AS origin"
    )
    assert records[0]["targets"] == ["change:late-a", "change:late-b"]
    assert records[0]["origin"] == late


def test_the_backdate_marker_names_only_the_records_the_ingest_wrote(  # type: ignore[no-untyped-def]
    seed_run, driver, invoke, tmp_path: Path
) -> None:
    # Before: the marker (and the ingest's count) named every backdated element of the
    # bundle, the ones it left unchanged too, so a replay blamed this ingest for records an
    # earlier one wrote ("dated 2 records" where it wrote 1).
    del seed_run
    kept = LATE_CHANGE.format(recorded=BACK_DATED).replace("late-import", "late-kept")
    assert invoke("ingest", _write(tmp_path, "kept.yaml", kept), "--backdate").code == 0
    added = LATE_CHANGE.format(recorded=BACK_DATED).replace("late-import", "late-added")
    both = _write(tmp_path, "both.yaml", kept + added.split("nodes:\n", 1)[1])
    result = invoke("ingest", both, "--backdate")
    assert result.code == 0, result
    assert (
        "ingest: --backdate dated 1 record into the time 1 recorded run of tenant acme saw"
    ) in result.err, result.err
    records, _, _ = driver.execute_query(
        "MATCH (m:BackdatedIngest {tenant: 'acme', origin: $origin}) RETURN m.targets AS t",
        origin=both,
    )
    assert [r["t"] for r in records] == [["change:late-added"]]


def test_other_tenants_runs_do_not_count(  # type: ignore[no-untyped-def]
    seed_run, driver, invoke
) -> None:
    del seed_run  # acme has runs, globex has none
    floors = run_floors(driver, ["acme", "globex"])
    assert set(floors) == {"acme"}
    records, _, _ = driver.execute_query(
        "MATCH (r:CtxRun {tenant: 'acme'}) RETURN max(r.known_at) AS k"
    )
    assert floors["acme"].at.isoformat().replace("+00:00", "Z")[:19] == records[0]["k"][:19]


def test_replay_names_a_backdated_retraction_as_a_retraction(  # type: ignore[no-untyped-def]
    seed_run, driver, invoke, tmp_path: Path
) -> None:
    # Before: the call that read the retracted record said `data_not_visible ... (not
    # purged: the record's labels or purposes, or the subject's grants, changed since the
    # run)`, and that was the line the verdict named, though none of those changed.
    path = _write(tmp_path, "retract-late.yaml", LATE_RETRACTION)
    assert invoke("ingest", path, "--backdate").code == 0
    replay = invoke("replay", seed_run, "--subject", "acme/user:bob", "--json")
    assert replay.code == 1, replay
    drift = json.loads(replay.out)["drift"]
    # Each call that read the record says so (a retracted record is no longer readable
    # now: its id is withheld, as every record the reader may not read).
    named = [d for d in drift if d["kind"] == "data_retracted"]
    assert named and "data_not_visible" not in {d["kind"] for d in drift}, drift
    for d in named:
        assert "retracted for acme/user:bob at the run's known_at" in d["detail"], d
        assert f"likely cause: `ingest --backdate` of {path} at " in d["detail"], d
        assert "labels or purposes" not in d["detail"], d
    # The one-line verdict names a known cause (the earlier tests' backdated ingests come
    # first), never a change of labels or grants.
    text = invoke("replay", seed_run, "--subject", "acme/user:bob")
    assert text.code == 1 and text.err.count("\n") == 1, text
    assert text.err.startswith("error: replay not verified: run "), text.err
    assert "likely cause: `ingest --backdate` of " in text.err, text.err
    assert "labels or purposes" not in text.out + text.err, text


def test_a_tenants_first_ingest_is_checked_too(driver, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # The first ingest of a tenant (no records yet) takes another path through the writer.
    wipe(driver)
    apply_schema(driver)
    text = LATE_CHANGE.format(recorded=BACK_DATED).replace(
        "nodes:\n",
        "sources:\n  - {source_id: src:risk-console, source_type: change_feed,\n"
        "     owner_team: team:x, classification: internal, trust: trusted, authority: 80,\n"
        "     allowed_purposes: [incident_investigation]}\nnodes:\n",
    )
    path = Path(_write(tmp_path, "first.yaml", text))
    loaded = load_bundle(path)
    floor = RecordFloor.model_validate({"at": "2026-08-01T00:00:00Z", "run_id": "run-x"})
    with pytest.raises(BackdatedRecords) as refused:
        ingest_bundle(driver, loaded, recorded_after={"acme": floor})
    assert [b.target for b in refused.value.found] == ["change:late-import"]
    assert _count(driver, "MATCH (n:KG) RETURN count(n)") == 0
    # A floor before the record's time: nothing to refuse.
    early = RecordFloor.model_validate({"at": "2026-07-01T00:00:00Z", "run_id": "run-y"})
    assert backdated(explicit_times(loaded), {"acme": early}) == []
