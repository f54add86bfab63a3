"""What an auditor needs to tell who did what (e21-audit findings 2, 4, 5 and 7), through the
real CLI on the real server.

- A principal id that reads like another of its tenant (a Cyrillic а, a fullwidth ａ) or
  holds a character no one can see (a zero-width space) is refused at ingest: one line per
  problem, exit 2, nothing written. Audit views print a non-ASCII subject id escaped.
- A refused purge is recorded in the purger's tenant, alike for an id without a record and
  an id the purger may not see; the purger reads the id it typed in its own purge runs, and
  every reader of a purge run reads its `--reason` in the tree.
- A config file named by INVESTIGATOR_CONFIG that is missing or a folder is one line, exit 2;
  `verify` tells a subject without `audit` it is not allowed; a runbook lookup at an early
  `--known-at` says nothing was recorded by then; a bundle document's text is bounded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import neo4j
import pytest
import yaml

TENANT = "t21"
SOURCE = {
    "source_id": "src:iam",
    "source_type": "identity",
    "trust": "trusted",
    "allowed_purposes": ["incident_investigation", "runbook_lookup", "audit", "legal"],
    "recorded_at": "2026-01-01T00:00:00Z",
}


def _principal(pid: str, labels: list[str], purposes: list[str]) -> dict[str, Any]:
    return {"id": pid, "labels": labels, "purposes": purposes, "source_id": "src:iam"}


WORLD = {
    "tenant": TENANT,
    "sources": [SOURCE],
    "principals": [
        _principal("user:alice", ["internal", "secret"], ["audit", "runbook_lookup"]),
        _principal("user:bob", ["internal"], ["runbook_lookup"]),
        _principal("user:zoë", ["internal"], ["runbook_lookup"]),
        _principal("user:counsel", ["internal"], ["legal"]),
    ],
    "nodes": [
        {
            "id": "svc:hidden", "label": "Service", "name": "hidden-codename",
            "acl": ["internal", "secret"], "source_id": "src:iam",
            "valid_from": "2025-01-01T00:00:00Z", "recorded_at": "2026-01-01T00:00:00Z",
        },
        {
            "id": "svc:open", "label": "Service", "name": "open-service", "acl": ["internal"],
            "source_id": "src:iam", "valid_from": "2025-01-01T00:00:00Z",
            "recorded_at": "2026-01-01T00:00:00Z",
        },
    ],
    "documents": [
        {
            "id": "doc:report", "kind": "incident_report", "title": "Report",
            "content": "customer Jane Roe called", "locator": "r#1", "source_id": "src:iam",
            "acl": ["internal"], "recorded_at": "2026-01-01T00:00:00Z",
        }
    ],
}  # fmt: skip


def _write(tmp_path: Path, name: str, bundle: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(bundle, allow_unicode=True), encoding="utf-8")
    return path


@pytest.fixture()
def world(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env, invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> neo4j.Driver:
    monkeypatch.setenv("INVESTIGATOR_CHAIN_DIR", str(tmp_path / "chain"))
    assert invoke("schema", "apply").code == 0
    res = invoke("ingest", str(_write(tmp_path, "world.yaml", WORLD)))
    assert res.code == 0, res
    return clean_db


def _kg_snapshot(driver: neo4j.Driver) -> list[str]:
    records, _, _ = driver.execute_query(
        "MATCH (n:KG {tenant: $t}) RETURN properties(n) AS p", t=TENANT
    )
    return sorted(json.dumps(dict(r["p"]), sort_keys=True, default=str) for r in records)


def _runs(invoke: Any, *who: str) -> list[dict[str, Any]]:
    res = invoke("runs", "--subject", *who, "--json")
    assert res.code == 0, res
    runs: list[dict[str, Any]] = json.loads(res.out)["runs"]
    return runs


# -- finding 2: look-alike and invisible principal ids -------------------------------------


@pytest.mark.parametrize(
    ("principal_id", "said"),
    [
        ("user:\u0430lice", "looks like principal 'user:alice'"),  # Cyrillic а
        ("user:\uff41lice", "looks like principal 'user:alice'"),  # fullwidth ａ
        ("user:\u0430lic\u0435", "looks like principal 'user:alice'"),  # two of them
        ("user:alice\u200b", "cannot see (U+200B)"),  # zero-width space
        ("user:bo\u202eb", "cannot see (U+202E)"),  # a bidi override
    ],
)
def test_a_principal_id_that_reads_like_another_or_hides_characters_is_refused(  # type: ignore[no-untyped-def]
    world: neo4j.Driver, invoke, tmp_path: Path, principal_id: str, said: str
) -> None:
    before = _kg_snapshot(world)
    bundle = {
        "tenant": TENANT,
        "principals": [_principal(principal_id, ["internal", "secret"], ["audit"])],
    }
    res = invoke("ingest", str(_write(tmp_path, "alike.yaml", bundle)))
    assert res.code == 2 and res.out == "", res
    problem, summary = res.err.splitlines()
    assert said in problem and ascii(principal_id) in problem, problem
    assert summary == "error: bundle rejected: 1 problem(s), nothing written"
    assert _kg_snapshot(world) == before


def test_principal_ids_differing_only_in_case_are_warned_about(  # type: ignore[no-untyped-def]
    world: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    """`user:Bob` beside `user:bob` is two subjects (ids are case sensitive), each with its
    own grants and runs: written, as runbook ids differing in case are, with a warning (before,
    nothing was said). In one bundle, and against the tenant's principals."""
    bundle = {
        "tenant": TENANT,
        "principals": [
            _principal("user:Carol", ["internal"], ["runbook_lookup"]),
            _principal("user:carol", ["internal"], ["runbook_lookup"]),
            _principal("user:BOB", ["internal", "secret"], ["audit"]),
        ],
    }
    res = invoke("ingest", str(_write(tmp_path, "case.yaml", bundle)))
    assert res.code == 0, res
    warnings = [line for line in res.err.splitlines() if line.startswith("warning:")]
    origin = str(tmp_path / "case.yaml")
    assert warnings == [
        f"warning: principal id user:BOB ({origin}) differs from user:bob (in the tenant) only "
        f"in letter case in tenant {TENANT}: ids are case sensitive, so they are separate "
        "subjects, each with its own grants and runs (--subject names one exactly)",
        f"warning: principal id user:Carol ({origin}) differs from user:carol ({origin}) only "
        f"in letter case in tenant {TENANT}: ids are case sensitive, so they are separate "
        "subjects, each with its own grants and runs (--subject names one exactly)",
    ]
    records, _, _ = world.execute_query(
        "MATCH (p:KG:Principal {tenant: $t}) WHERE p.superseded_at IS NULL RETURN p.id AS id",
        t=TENANT,
    )
    assert {"user:BOB", "user:Carol", "user:carol", "user:bob"} <= {r["id"] for r in records}


def test_audit_views_print_a_non_ascii_subject_id_escaped(  # type: ignore[no-untyped-def]
    world: neo4j.Driver, invoke
) -> None:
    asked = invoke(
        "runbook", "--service", "svc:open", "--as-of", "2026-07-01T00:00:00Z",
        "--subject", f"{TENANT}/user:zoë",
    )  # fmt: skip
    assert asked.code == 0, asked
    listed = invoke("runs", "--subject", f"{TENANT}/user:alice", "--purpose", "audit")
    assert listed.code == 0, listed
    assert f"{TENANT}/user:zo\\xeb " in listed.out and "zoë" not in listed.out
    run_id = _runs(invoke, f"{TENANT}/user:zoë")[0]["run_id"]
    tree = invoke("trace", run_id, "--subject", f"{TENANT}/user:alice", "--purpose", "audit")
    assert tree.code == 0, tree
    assert f"on behalf of {TENANT}/user:zo\\xeb\n" in tree.out and "zoë" not in tree.out
    assert f"(subject {TENANT}/user:zo\\xeb," in tree.out


# -- findings 4 and 5: purge attempts and purge runs ----------------------------------------

_VARYING = {"run_id", "question", "started_at", "as_of", "known_at", "payload", "hash"}
_VARYING |= {"head_hash", "request_fingerprint", "prev_hash", "finished_at", "ctx_id"}


def _recorded(driver: neo4j.Driver, run_id: str) -> list[dict[str, Any]]:
    """The run's recorded nodes, without what differs between two runs of the same shape."""
    records, _, _ = driver.execute_query(
        "MATCH (n:CtxEvent {run_id: $r}) RETURN labels(n) AS l, properties(n) AS p ORDER BY n.seq",
        r=run_id,
    )
    return [
        {"labels": sorted(r["l"]), **{k: v for k, v in r["p"].items() if k not in _VARYING}}
        for r in records
    ]


def test_a_refused_purge_is_recorded_alike_for_a_hidden_and_a_missing_id(  # type: ignore[no-untyped-def]
    world: neo4j.Driver, invoke
) -> None:
    before = _kg_snapshot(world)
    run_ids = []
    for element_id in ("svc:hidden", "svc:nothing"):
        res = invoke(
            "purge", element_id, "--subject", f"{TENANT}/user:counsel", "--reason", "probe 7"
        )
        assert res.code == 2 and res.out == "" and res.err.count("\n") == 1, res
        assert res.err.startswith(f"error: no record {element_id} in tenant {TENANT} (the ")
        run_ids.append(res.err.split("run ")[-1].rstrip(")\n"))
    assert _kg_snapshot(world) == before
    hidden, missing = run_ids
    # The same record either way: only what was typed and when differ.
    assert _recorded(world, hidden) == _recorded(world, missing)

    # The tenant's auditor sees both attempts, refused, with who and the reason.
    audit = _runs(invoke, f"{TENANT}/user:alice", "--purpose", "audit")
    attempts = {r["run_id"]: r for r in audit if r["command"] == "purge"}
    assert set(attempts) == {hidden, missing}
    for run in attempts.values():
        assert run["status"] == "refused" and run["stop_reason"] == "no_record"
        assert run["subject_id"] == "user:counsel" and run["purpose"] == "legal"
    # alice may read svc:hidden; svc:nothing reads as withheld, as an id she may not read would.
    assert attempts[hidden]["question"] == "legal purge of svc:hidden"
    assert attempts[missing]["question"] == "legal purge of [withheld]"
    tree = invoke("trace", missing, "--subject", f"{TENANT}/user:alice", "--purpose", "audit")
    assert tree.code == 0, tree
    assert (
        'legal purge of [withheld] (subject t21/user:counsel, purpose legal, reason "probe 7"'
        in (tree.out)
    )
    assert "outcome refused (no_record)" in tree.out and "svc:nothing" not in tree.out
    shown = invoke(
        "trace", missing, "--subject", f"{TENANT}/user:alice", "--purpose", "audit", "--json"
    )
    options = json.loads(shown.out)["nodes"][0]["content"]["options"]
    assert options == {"withheld": "no record you may read", "reason": "probe 7"}

    # bob holds no audit: he reads neither attempt, the same answer for both.
    for run_id in run_ids:
        res = invoke("trace", run_id, "--subject", f"{TENANT}/user:bob")
        assert res.code == 3 and res.out == "", res


def test_the_purger_reads_its_own_purge_and_every_reader_its_reason(  # type: ignore[no-untyped-def]
    world: neo4j.Driver, invoke
) -> None:
    res = invoke(
        "purge", "doc:report", "--subject", f"{TENANT}/user:counsel", "--reason", "GDPR request 1"
    )
    assert res.code == 0, res
    own = _runs(invoke, f"{TENANT}/user:counsel")
    assert [r["question"] for r in own] == ["legal purge of doc:report"]
    run_id = own[0]["run_id"]
    for reader in (["--subject", f"{TENANT}/user:counsel"],
                   ["--subject", f"{TENANT}/user:alice", "--purpose", "audit"]):  # fmt: skip
        tree = invoke("trace", run_id, *reader)
        assert tree.code == 0, tree
        first = tree.out.splitlines()[0]
        assert "legal purge of doc:report (subject t21/user:counsel" in first, first
        assert 'purpose legal, reason "GDPR request 1", as_of' in first, first


# -- finding 7 -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["missing", "folder"])
def test_a_config_file_named_but_missing_or_a_folder_is_one_line(  # type: ignore[no-untyped-def]
    cli_env, invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    path = tmp_path / "nowhere.toml" if kind == "missing" else tmp_path
    monkeypatch.setenv("INVESTIGATOR_CONFIG", str(path))
    monkeypatch.delenv("INVESTIGATOR_SUBJECT", raising=False)
    res = invoke("runs")
    assert res.code == 2 and res.out == "" and res.err.count("\n") == 1, res
    said = "which does not exist" if kind == "missing" else "a folder, not a config file"
    assert res.err == f"error: INVESTIGATOR_CONFIG names {str(path)!a}, {said}\n"


def test_verify_tells_a_subject_without_audit_it_is_not_allowed(  # type: ignore[no-untyped-def]
    world: neo4j.Driver, invoke
) -> None:
    res = invoke("verify", "--subject", f"{TENANT}/user:bob")
    assert (res.code, res.out) == (3, ""), res
    assert res.err == (
        f"error: verifying tenant {TENANT}'s ledger is not allowed to {TENANT}/user:bob "
        "(it needs purpose audit)\n"
    )
    held = invoke("verify", "--subject", f"{TENANT}/user:alice")
    assert held.code == 3 and "ledger needs --purpose audit" in held.err, held


def test_a_runbook_lookup_before_anything_was_recorded_says_so(  # type: ignore[no-untyped-def]
    world: neo4j.Driver, invoke
) -> None:
    asked = ["--as-of", "2026-07-01T00:00:00Z", "--subject", f"{TENANT}/user:bob"]
    early = invoke("runbook", "--service", "svc:open", *asked, "--known-at", "1970-01-01T00:00:00Z")
    assert early.code == 0, early
    assert (
        f"no service matching 'svc:open' that {TENANT}/user:bob may read was recorded by known_at "
        "1970-01-01T00:00:00Z (a record made later is not read then)"
    ) in early.out
    assert "is visible to" not in early.out
    # A record bob may not read says the same at that instant, and as before today.
    hidden = invoke(
        "runbook", "--service", "svc:hidden", *asked, "--known-at", "1970-01-01T00:00:00Z"
    )
    assert f"'svc:hidden' that {TENANT}/user:bob may read was recorded by known_at" in hidden.out
    today = invoke("runbook", "--service", "svc:hidden", *asked)
    assert f"no service matching 'svc:hidden' is visible to {TENANT}/user:bob" in today.out
    # Replay always gives the run's known_at: each note is reproduced as the asker got it.
    for known in (["--known-at", "1970-01-01T00:00:00Z"], []):
        card = json.loads(
            invoke("runbook", "--service", "svc:hidden", *asked, *known, "--json").out
        )
        replay = invoke("replay", card["run_id"], "--subject", f"{TENANT}/user:bob", "--json")
        assert replay.code == 0 and json.loads(replay.out)["verified"] is True, replay


@pytest.mark.parametrize("field", ["content", "redacted_content"])
def test_a_bundle_documents_text_is_bounded_like_a_markdown_runbook(  # type: ignore[no-untyped-def]
    world: neo4j.Driver, invoke, tmp_path: Path, field: str
) -> None:
    from graph_schema.bundle import MAX_DOCUMENT_BYTES

    before = _kg_snapshot(world)
    doc = {**WORLD["documents"][0], "id": "doc:big", field: "é" * (MAX_DOCUMENT_BYTES // 2 + 1)}  # type: ignore[dict-item]
    res = invoke(
        "ingest", str(_write(tmp_path, "big.yaml", {"tenant": TENANT, "documents": [doc]}))
    )
    assert res.code == 2 and res.out == "", res
    problem, summary = res.err.splitlines()
    assert problem.endswith(
        f"{field} is {MAX_DOCUMENT_BYTES + 2} bytes long (UTF-8); a document holds at most "
        f"{MAX_DOCUMENT_BYTES}"
    ), problem
    assert summary == "error: bundle rejected: 1 problem(s), nothing written"
    assert _kg_snapshot(world) == before
