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
