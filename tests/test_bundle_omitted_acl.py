"""A bundle element that states no `acl` keeps the labels of its current record: a changed
bundle that leaves the field out must not make a restricted record public; an explicit
`acl: []` is a change the bundle states, and is written as given.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import neo4j

PURPOSES = ["incident_investigation", "runbook_lookup", "audit"]
BUNDLE: dict[str, Any] = {
    "tenant": "acme",
    "sources": [
        {
            "source_id": "src:wiki",
            "source_type": "wiki",
            "trust": "trusted",
            "allowed_purposes": PURPOSES,
            "recorded_at": "2026-01-05T09:00:00Z",
        }
    ],
    "principals": [
        {"id": "user:oncall", "labels": ["oncall"], "purposes": PURPOSES},
        {"id": "user:intern", "labels": [], "purposes": PURPOSES},
    ],
    "nodes": [
        {
            "id": "svc:vault",
            "label": "Service",
            "name": "vault",
            "acl": ["oncall"],
            "source_id": "src:wiki",
        },
        {
            "id": "team:sec",
            "label": "Team",
            "name": "sec",
            "acl": ["oncall"],
            "source_id": "src:wiki",
        },
    ],
    "edges": [
        {
            "type": "OWNS",
            "from": "team:sec",
            "to": "svc:vault",
            "acl": ["oncall"],
            "source_id": "src:wiki",
        },
    ],
    "documents": [
        {
            "id": "runbook:vault-unseal",
            "kind": "runbook",
            "title": "Vault unseal",
            "content": "Unseal the vault with the key shares from the safe.",
            "locator": "wiki/vault-unseal",
            "source_id": "src:wiki",
            "acl": ["oncall"],
            "applies_to": ["svc:vault"],
        }
    ],
}


def _write(folder: Path, bundle: dict[str, Any]) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "bundle.json").write_text(json.dumps(bundle))
    return folder


def _current_acls(driver: neo4j.Driver) -> dict[str, list[str]]:
    """The current record of every node, document and relationship of acme: id -> acl."""
    nodes, _, _ = driver.execute_query(
        "MATCH (n:KG {tenant: 'acme'}) WHERE n.superseded_at IS NULL "
        "AND NOT n:Principal AND NOT n:Source RETURN n.id AS id, n.acl AS acl"
    )
    edges, _, _ = driver.execute_query(
        "MATCH ()-[r]->() WHERE r.tenant = 'acme' AND r.superseded_at IS NULL "
        "RETURN DISTINCT r.key AS id, r.acl AS acl"
    )
    return {r["id"]: r["acl"] for r in [*nodes, *edges]}


def _intern_reads_runbook(invoke) -> bool:  # type: ignore[no-untyped-def]
    result = invoke("runbook", "vault unseal", "--subject", "acme/user:intern", "--json")
    assert result.code == 0, result
    return "runbook:vault-unseal" in json.dumps(json.loads(result.out))


def test_changed_bundle_without_acl_keeps_the_records_labels(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    assert invoke("ingest", str(_write(tmp_path / "v1", BUNDLE))).code == 0
    changed = copy.deepcopy(BUNDLE)
    for section in ("nodes", "edges", "documents"):
        for element in changed[section]:
            del element["acl"]
    changed["nodes"][0]["name"] = "vault (prod)"
    changed["documents"][0]["content"] += " Then check the audit log."
    changed["nodes"].append({"id": "svc:new", "label": "Service", "source_id": "src:wiki"})
    again = invoke("ingest", str(_write(tmp_path / "v2", changed)))
    assert again.code == 0, again
    acls = _current_acls(clean_db)
    assert acls.pop("svc:new") == []  # a new id without acl: no labels, as before
    assert acls == {
        "svc:vault": ["oncall"],
        "team:sec": ["oncall"],
        "runbook:vault-unseal": ["oncall"],
        "OWNS|team:sec|svc:vault": ["oncall"],
        "APPLIES_TO|runbook:vault-unseal|svc:vault": ["oncall"],
    }
    assert not _intern_reads_runbook(invoke)
    # The changes the bundle did state were written.
    name, _, _ = clean_db.execute_query(
        "MATCH (s:Service {tenant: 'acme', id: 'svc:vault'}) WHERE s.superseded_at IS NULL "
        "RETURN s.name AS name"
    )
    assert name[0]["name"] == "vault (prod)"


def test_explicit_empty_acl_makes_a_record_public(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    assert invoke("ingest", str(_write(tmp_path / "v1", BUNDLE))).code == 0
    opened = copy.deepcopy(BUNDLE)
    opened["documents"][0]["acl"] = []
    result = invoke("ingest", str(_write(tmp_path / "v2", opened)))
    assert result.code == 0, result
    acls = _current_acls(clean_db)
    assert acls["runbook:vault-unseal"] == []
    assert acls["svc:vault"] == ["oncall"]
    assert _intern_reads_runbook(invoke)


def _without_acls(bundle: dict[str, Any]) -> dict[str, Any]:
    changed = copy.deepcopy(bundle)
    for section in ("sources", "nodes", "edges", "documents"):
        for element in changed[section]:
            element.pop("acl", None)
    changed["documents"][0]["content"] += " Then check the audit log."
    return changed


def test_an_empty_acl_option_is_refused_for_a_bundle(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    # `--acl "$LABELS"` with LABELS unset: before, every element without acl became public.
    assert invoke("ingest", str(_write(tmp_path / "v1", BUNDLE))).code == 0
    before = _current_acls(clean_db)
    changed = _write(tmp_path / "v2", _without_acls(BUNDLE))
    for empty in ("", " , "):
        result = invoke("ingest", str(changed), "--acl", empty)
        assert result.code == 2, result
        assert result.out == ""
        assert result.err.count("\n") == 1
        assert result.err.startswith("error: --acl is empty: it would make every element")
        assert "acl: []" in result.err
    assert _current_acls(clean_db) == before
    assert not _intern_reads_runbook(invoke)


def _source_record(driver: neo4j.Driver) -> tuple[list[str], int]:
    records, _, _ = driver.execute_query(
        "MATCH (s:Source {tenant: 'acme', id: 'src:wiki'}) WHERE s.superseded_at IS NULL "
        "RETURN s.acl AS acl, s.version AS version"
    )
    return records[0]["acl"], records[0]["version"]


def test_a_source_without_acl_keeps_its_labels_or_takes_the_acl_option(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    labelled = copy.deepcopy(BUNDLE)
    labelled["sources"][0]["acl"] = ["oncall"]
    assert invoke("ingest", str(_write(tmp_path / "v1", labelled))).code == 0
    assert _source_record(clean_db) == (["oncall"], 1)
    # A changed bundle that leaves the source's acl out: before, the source got a new
    # version with no labels, where every other element kept its own.
    again = invoke("ingest", str(_write(tmp_path / "v2", _without_acls(labelled))))
    assert again.code == 0, again
    assert _source_record(clean_db) == (["oncall"], 1)
    assert _current_acls(clean_db)["runbook:vault-unseal"] == ["oncall"]


def test_the_acl_option_fills_a_source_that_gives_none(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    plain = _without_acls(BUNDLE)
    result = invoke("ingest", str(_write(tmp_path / "v1", plain)), "--acl", "oncall")
    assert result.code == 0, result
    assert _source_record(clean_db) == (["oncall"], 1)
    assert set(map(tuple, _current_acls(clean_db).values())) == {("oncall",)}


def test_a_hostile_bundle_cannot_open_a_record_with_null_or_empty_values(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    assert invoke("ingest", str(_write(tmp_path / "v1", BUNDLE))).code == 0
    before = _current_acls(clean_db)
    null = copy.deepcopy(BUNDLE)
    null["documents"][0]["acl"] = None  # `acl: null`: the same as leaving it out
    null["documents"][0]["content"] += " Then check the audit log."
    assert invoke("ingest", str(_write(tmp_path / "null", null))).code == 0
    assert _current_acls(clean_db) == before
    for empty in ("", [""], [" "]):
        hostile = copy.deepcopy(BUNDLE)
        hostile["documents"][0]["acl"] = empty
        result = invoke("ingest", str(_write(tmp_path / "empty", hostile)))
        assert result.code == 2, result
        assert "nothing written" in result.err
    assert _current_acls(clean_db) == before
    assert not _intern_reads_runbook(invoke)


def _reads_runbook(invoke, subject: str) -> bool:  # type: ignore[no-untyped-def]
    result = invoke("runbook", "vault unseal", "--subject", subject, "--json")
    assert result.code == 0, result
    return "runbook:vault-unseal" in json.dumps(json.loads(result.out))


def _labelled(labels: list[str]) -> dict[str, Any]:
    """BUNDLE with every element, its source too, restricted to `labels`."""
    bundle = copy.deepcopy(BUNDLE)
    for section in ("sources", "nodes", "edges", "documents"):
        for element in bundle[section]:
            element["acl"] = labels
    return bundle


def _refused_acl_change(result: Any, count: int, example: str) -> None:
    assert result.code == 2, result
    assert result.out == ""
    assert result.err.count("\n") == 1, result.err
    assert result.err.startswith(
        f"error: ingest refused: --acl would change who may read {count} existing records "
        "of tenant acme"
    ), result.err
    assert example in result.err
    assert "--acl-change" in result.err


def test_an_acl_option_that_would_widen_existing_records_is_refused(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    # Before: `--acl oncall` replaced [oncall, secret] on every element without acl, exit 0,
    # and user:oncall (who holds oncall only) could read the restricted runbook.
    assert invoke("ingest", str(_write(tmp_path / "v1", _labelled(["oncall", "secret"])))).code == 0
    before = _current_acls(clean_db)
    changed = _write(tmp_path / "v2", _without_acls(BUNDLE))
    result = invoke("ingest", str(changed), "--acl", "oncall")
    # 5 records: the source, two nodes, the document and OWNS (APPLIES_TO follows the document).
    _refused_acl_change(result, 5, "runbook:vault-unseal: [oncall, secret] -> [oncall]")
    assert _current_acls(clean_db) == before
    assert _source_record(clean_db) == (["oncall", "secret"], 1)
    assert not _reads_runbook(invoke, "acme/user:oncall")


def test_an_acl_option_that_would_narrow_existing_records_is_refused(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    assert invoke("ingest", str(_write(tmp_path / "v1", _labelled(["oncall"])))).code == 0
    before = _current_acls(clean_db)
    changed = _write(tmp_path / "v2", _without_acls(BUNDLE))
    result = invoke("ingest", str(changed), "--acl", "secret,oncall")
    _refused_acl_change(result, 5, "runbook:vault-unseal: [oncall] -> [oncall, secret]")
    assert _current_acls(clean_db) == before
    assert _reads_runbook(invoke, "acme/user:oncall")


def test_acl_change_lets_the_acl_option_relabel_existing_records(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    assert invoke("ingest", str(_write(tmp_path / "v1", _labelled(["oncall", "secret"])))).code == 0
    changed = _write(tmp_path / "v2", _without_acls(BUNDLE))
    result = invoke("ingest", str(changed), "--acl", "oncall", "--acl-change")
    assert result.code == 0, result
    assert set(map(tuple, _current_acls(clean_db).values())) == {("oncall",)}
    assert _source_record(clean_db) == (["oncall"], 2)
    assert _reads_runbook(invoke, "acme/user:oncall")


def test_an_acl_option_with_the_records_own_labels_is_not_refused(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    assert invoke("ingest", str(_write(tmp_path / "v1", _labelled(["oncall"])))).code == 0
    changed = _without_acls(BUNDLE)
    changed["nodes"].append({"id": "svc:new", "label": "Service", "source_id": "src:wiki"})
    result = invoke("ingest", str(_write(tmp_path / "v2", changed)), "--acl", "oncall")
    assert result.code == 0, result
    # The new id takes --acl; the changed document keeps its labels (and gets its change).
    assert set(map(tuple, _current_acls(clean_db).values())) == {("oncall",)}
    content, _, _ = clean_db.execute_query(
        "MATCH (d:Document {tenant: 'acme', id: 'runbook:vault-unseal'}) "
        "WHERE d.superseded_at IS NULL RETURN d.content AS content"
    )
    assert content[0]["content"].endswith("Then check the audit log.")


def test_an_element_that_states_its_acl_is_written_as_it_says_with_an_acl_option(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    assert invoke("ingest", str(_write(tmp_path / "v1", _labelled(["oncall"])))).code == 0
    explicit = _labelled(["oncall"])
    explicit["documents"][0]["acl"] = ["oncall", "secret"]
    result = invoke("ingest", str(_write(tmp_path / "v2", explicit)), "--acl", "audit")
    assert result.code == 0, result
    acls = _current_acls(clean_db)
    assert acls.pop("runbook:vault-unseal") == ["oncall", "secret"]
    assert acls.pop("APPLIES_TO|runbook:vault-unseal|svc:vault") == ["oncall", "secret"]
    assert set(map(tuple, acls.values())) == {("oncall",)}
    assert not _reads_runbook(invoke, "acme/user:oncall")
