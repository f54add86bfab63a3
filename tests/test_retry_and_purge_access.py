"""A retry and a purge never reach past the subject's grants of now (security review, issues
4, 5 and 11 of the tester's report), through the real CLI on the real server.

- An idempotent retry returns the recorded answer only while the subject may still read
  every evidence of it; after a revoked label it is refused (exit 3) and shows nothing.
- A retry of a finished run whose answer a legal purge removed says so (exit 2), instead of
  "has not finished".
- `purge` acts only on an id whose every record the purger's labels cover; an id it may not
  see, and a Principal or Source id, answer exactly like an id without records, and nothing
  changes in the Knowledge Graph or the Context Graph.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import neo4j
import pytest
import yaml
from conftest import json_error

TENANT = "t2"
SOURCE = {
    "source_id": "src:cat",
    "source_type": "catalog",
    "trust": "trusted",
    "allowed_purposes": ["incident_investigation", "runbook_lookup"],
    "recorded_at": "2026-01-01T00:00:00Z",
}


def _principal(pid: str, labels: list[str], purposes: list[str], at: str) -> dict[str, Any]:
    return {"id": pid, "labels": labels, "purposes": purposes, "recorded_at": at}


def _service(sid: str, name: str, acl: list[str]) -> dict[str, Any]:
    return {
        "id": sid, "label": "Service", "name": name, "acl": acl, "source_id": "src:cat",
        "locator": f"c#{sid}", "valid_from": "2025-01-01T00:00:00Z",
        "recorded_at": "2026-01-01T00:00:00Z",
    }  # fmt: skip


WORLD = {
    "tenant": TENANT,
    "sources": [SOURCE],
    "principals": [
        _principal("user:low", ["internal"], ["incident_investigation"], "2026-01-01T00:00:00Z"),
        _principal(
            "user:rev", ["internal", "secret"], ["incident_investigation"], "2026-01-01T00:00:00Z"
        ),
        _principal("user:counsel", ["internal"], ["legal"], "2026-01-01T00:00:00Z"),
        _principal("user:cleared", ["internal", "secret"], ["legal"], "2026-01-01T00:00:00Z"),
    ],
    "nodes": [
        _service("svc:b", "bravo-codename", ["internal"]),
        _service("svc:hidden", "hidden-codename", ["internal", "secret"]),
    ],
}
# user:rev loses its `secret` label.
REVOKE = {
    "tenant": TENANT,
    "principals": [
        _principal("user:rev", ["internal"], ["incident_investigation"], "2026-06-01T00:00:00Z")
    ],
}
HIDDEN_Q = ["What is svc:hidden?", "--service", "svc:hidden", "--as-of", "2026-07-01T00:00:00Z"]
BRAVO_Q = ["What is svc:b?", "--service", "svc:b", "--as-of", "2026-07-01T00:00:00Z"]


def _ingest(invoke: Any, tmp_path: Path, name: str, bundle: dict[str, Any]) -> None:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(bundle), encoding="utf-8")
    res = invoke("ingest", str(path))
    assert res.code == 0, res


@pytest.fixture()
def world(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env, invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> neo4j.Driver:
    monkeypatch.setenv("INVESTIGATOR_CHAIN_DIR", str(tmp_path / "chain"))
    assert invoke("schema", "apply").code == 0
    _ingest(invoke, tmp_path, "world.yaml", WORLD)
    return clean_db


def _kg_snapshot(driver: neo4j.Driver) -> list[str]:
    records, _, _ = driver.execute_query(
        "MATCH (n:KG {tenant: $t}) RETURN n.id AS id, n.version AS v, properties(n) AS p",
        t=TENANT,
    )
    return sorted(json.dumps(dict(r["p"]), sort_keys=True, default=str) for r in records)


def _ctx_snapshot(driver: neo4j.Driver) -> list[str]:
    records, _, _ = driver.execute_query("MATCH (n:CtxEvent) RETURN properties(n) AS p")
    return sorted(json.dumps(dict(r["p"]), sort_keys=True, default=str) for r in records)


def test_a_retry_never_shows_what_the_subject_may_no_longer_read(  # type: ignore[no-untyped-def]
    world: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    asked = ["investigate", *HIDDEN_Q, "--subject", "t2/user:rev", "--idempotency-key", "k-d"]
    first = invoke(*asked, "--json")
    assert first.code == 0, first
    assert "hidden-codename" in first.out
    run_id = json.loads(first.out)["run_id"]

    # While the grants are unchanged, the retry is the same run with the same answer.
    again = invoke(*asked, "--json")
    assert again.code == 0, again
    assert json.loads(again.out)["run_id"] == run_id and "hidden-codename" in again.out

    _ingest(invoke, tmp_path, "revoke.yaml", REVOKE)
    fresh = invoke("investigate", *HIDDEN_Q, "--subject", "t2/user:rev")
    assert fresh.code == 0 and "hidden-codename" not in fresh.out + fresh.err

    for extra in ([], ["--json"]):
        retry = invoke(*asked, *extra)
        assert retry.code == 3, retry
        assert (json_error(retry) if extra else retry.out == "") and retry.err.count("\n") == 1
        assert "hidden-codename" not in retry.err + retry.out
        assert run_id in retry.err and "may no longer read (acl)" in retry.err
        assert "new idempotency key" in retry.err

    # Another subject's key space is its own: user:low's key k-d is a new run of its own.
    low = invoke("investigate", *HIDDEN_Q, "--subject", "t2/user:low", "--idempotency-key", "k-d")
    assert low.code == 0 and "hidden-codename" not in low.out + low.err


def test_a_retry_of_a_run_whose_answer_was_purged_says_so(  # type: ignore[no-untyped-def]
    world: neo4j.Driver, invoke
) -> None:
    asked = ["investigate", *BRAVO_Q, "--subject", "t2/user:low", "--idempotency-key", "k-b"]
    first = invoke(*asked, "--json")
    assert first.code == 0, first
    run_id = json.loads(first.out)["run_id"]
    assert "bravo-codename" in first.out

    purged = invoke("purge", "svc:b", "--subject", "t2/user:counsel", "--reason", "erasure")
    assert purged.code == 0, purged

    retry = invoke(*asked)
    assert retry.code == 2, retry
    assert retry.out == "" and retry.err.count("\n") == 1
    assert "has not finished" not in retry.err
    assert f"run {run_id}, which finished complete" in retry.err
    assert "removed by a legal purge" in retry.err and "bravo-codename" not in retry.err


@pytest.mark.parametrize(
    "element_id",
    [
        "svc:hidden",  # its ACL needs `secret`, which the purger lacks
        "user:rev",  # a Principal
        "src:cat",  # a Source
        "svc:nothing",  # no record at all
    ],
)
def test_purge_of_an_id_the_purger_may_not_see_answers_like_no_record(  # type: ignore[no-untyped-def]
    world: neo4j.Driver, invoke, element_id: str
) -> None:
    # A run that used svc:hidden: an oracle would have counted it.
    seen = invoke("investigate", *HIDDEN_Q, "--subject", "t2/user:rev")
    assert seen.code == 0 and "hidden-codename" in seen.out
    kg_before, ctx_before = _kg_snapshot(world), _ctx_snapshot(world)

    res = invoke("purge", element_id, "--subject", "t2/user:counsel", "--reason", "probe")
    assert (res.code, res.out, res.err.count("\n")) == (2, "", 1), res
    assert res.err.startswith(f"error: no record {element_id} in tenant t2 (the attempt is ")
    assert _kg_snapshot(world) == kg_before
    # Nothing blanked: the only new nodes are the refused attempt's own run.
    attempt = res.err.split("run ")[-1].rstrip(")\n")
    added = [n for n in _ctx_snapshot(world) if n not in ctx_before]
    assert added and all(json.loads(n)["run_id"] == attempt for n in added)
    assert set(ctx_before) <= set(_ctx_snapshot(world))


def test_a_purger_whose_labels_cover_the_record_purges_it(  # type: ignore[no-untyped-def]
    world: neo4j.Driver, invoke
) -> None:
    seen = invoke("investigate", *HIDDEN_Q, "--subject", "t2/user:rev", "--json")
    assert seen.code == 0, seen
    res = invoke(
        "purge", "svc:hidden", "--subject", "t2/user:cleared", "--reason", "erasure", "--json"
    )
    assert res.code == 0, res
    assert json.loads(res.out)["ctx_runs"] == [json.loads(seen.out)["run_id"]]
