"""What a team owned, asked from the team's side (`owned_by_team`), off the golden path, as an
investigator and as an attacker (real Neo4j, our own small bundles written here).

Tenant initech: team:shelving-ops owns svc:shelf, alert:ShelfFull, alert:ShelfHidden (its
OWNS record readable with `incident` only), runbook:shelf@v1 (in force 2025-01-01 to
2026-01-01, its OWNS record with no end) and runbook:shelf@v2 (from 2026-01-01);
team:shelving-secret (a team only `incident` readers see) owns svc:rack. Tenant initrode:
team:shelving-core, a team of a like name. user:ivy reads `internal` and `incident`,
user:eve `internal` only. The principals are recorded on 2025-12-01, everything else on
2026-02-01.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import ingest_only

IVY = ["--subject", "initech/user:ivy"]
EVE = ["--subject", "initech/user:eve"]
EVE_INITRODE = ["--subject", "initrode/user:eve"]
RECORDED = "2026-02-01T09:00:00Z"
_PURPOSES = ["incident_investigation", "runbook_lookup", "audit"]


def _source(source_id: str, source_type: str) -> dict:  # type: ignore[type-arg]
    return {
        "source_id": source_id,
        "source_type": source_type,
        "owner_team": "team:shelving-ops",
        "classification": "internal",
        "trust": "trusted",
        "authority": 80,
        "allowed_purposes": _PURPOSES,
        "recorded_at": "2025-12-01T09:00:00Z",
    }


def _principal(user: str, labels: list[str]) -> dict:  # type: ignore[type-arg]
    return {
        "id": user,
        "name": user,
        "labels": labels,
        "purposes": _PURPOSES,
        "source_id": "src:iam",
        "recorded_at": "2025-12-01T09:00:00Z",
    }


def _node(node_id: str, label: str, name: str, acl: list[str]) -> dict:  # type: ignore[type-arg]
    return {
        "id": node_id,
        "label": label,
        "name": name,
        "acl": acl,
        "source_id": "src:catalog",
        "source_version": "cat@1",
        "locator": f"catalog#{node_id}",
        "valid_from": "2025-01-01T00:00:00Z",
        "recorded_at": RECORDED,
    }


def _owns(team: str, owned: str, start: str, acl: list[str]) -> dict:  # type: ignore[type-arg]
    return {
        "type": "OWNS",
        "from": team,
        "to": owned,
        "key": f"OWNS|{team}|{owned}|{start[:10]}",
        "acl": acl,
        "source_id": "src:catalog",
        "source_version": "cat@1",
        "locator": f"catalog#{team}-{owned}",
        "valid_from": start,
        "recorded_at": RECORDED,
    }


def _runbook(version: int, start: str, end: str | None) -> dict:  # type: ignore[type-arg]
    doc = {
        "id": f"runbook:shelf@v{version}",
        "kind": "runbook",
        "title": f"Shelf runbook v{version}",
        "locator": f"wiki/shelf.md@v{version}#steps",
        "acl": ["internal"],
        "source_id": "src:wiki",
        "source_version": f"v{version}",
        "valid_from": start,
        "recorded_at": RECORDED,
        "applies_to": ["svc:shelf"],
        "content": f"Shelf full (version {version}).\n1. Empty the shelf.\n",
    }
    if end is not None:
        doc["valid_to"] = end
    if version > 1:
        doc["supersedes"] = f"runbook:shelf@v{version - 1}"
    return doc


def _bundles(folder: Path) -> list[Path]:
    internal, incident = ["internal"], ["internal", "incident"]
    initech = {
        "tenant": "initech",
        "sources": [
            _source("src:catalog", "service_catalog"),
            _source("src:wiki", "wiki"),
            _source("src:iam", "identity"),
        ],
        "principals": [
            _principal("user:ivy", ["internal", "incident"]),
            _principal("user:eve", ["internal"]),
        ],
        "nodes": [
            _node("team:shelving-ops", "Team", "Shelving Ops", internal),
            _node("team:shelving-secret", "Team", "Shelving Secret", incident),
            _node("svc:shelf", "Service", "shelf", internal),
            _node("svc:rack", "Service", "rack", internal),
            _node("alert:ShelfFull", "Alert", "ShelfFull", internal),
            _node("alert:ShelfHidden", "Alert", "ShelfHidden", internal),
        ],
        "documents": [
            _runbook(1, "2025-01-01T00:00:00Z", "2026-01-01T00:00:00Z"),
            _runbook(2, "2026-01-01T00:00:00Z", None),
        ],
        "edges": [
            _owns("team:shelving-ops", "svc:shelf", "2025-01-01T00:00:00Z", internal),
            _owns("team:shelving-ops", "alert:ShelfFull", "2025-01-01T00:00:00Z", internal),
            _owns("team:shelving-ops", "alert:ShelfHidden", "2025-01-01T00:00:00Z", incident),
            # No end recorded: the version's own end (2026-01-01) bounds it.
            _owns("team:shelving-ops", "runbook:shelf@v1", "2025-01-01T00:00:00Z", internal),
            _owns("team:shelving-ops", "runbook:shelf@v2", "2026-01-01T00:00:00Z", internal),
            _owns("team:shelving-secret", "svc:rack", "2025-01-01T00:00:00Z", incident),
        ],
    }
    initrode = {
        "tenant": "initrode",
        "sources": [_source("src:catalog", "service_catalog"), _source("src:iam", "identity")],
        "principals": [_principal("user:eve", ["internal"])],
        "nodes": [
            _node("team:shelving-core", "Team", "Shelving Core", internal),
            _node("svc:shelf", "Service", "shelf", internal),
        ],
        "edges": [_owns("team:shelving-core", "svc:shelf", "2025-01-01T00:00:00Z", internal)],
    }
    paths = []
    for name, bundle in (("initech.yaml", initech), ("initrode.yaml", initrode)):
        path = folder / name
        path.write_text(json.dumps(bundle))
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def shelves(driver: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> neo4j.Driver:
    return ingest_only(driver, _bundles(tmp_path_factory.mktemp("shelves")))


def _ask(invoke, question: str, *flags: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("investigate", question, *flags, "--json")
    assert result.code == 0, result
    doc = json.loads(result.out)
    doc["_out"] = result.out
    return doc  # type: ignore[no-any-return]


def _claims(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


def _owned(doc: dict, team: str = "team:shelving-ops") -> list[str]:  # type: ignore[type-arg]
    return sorted(
        c.rsplit(" OWNS ", 1)[1].split(" ", 1)[0] for c in _claims(doc) if f"{team} OWNS " in c
    )


def _gaps(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [m["description"] for m in doc["missing_evidence"]]


def _as_of(doc: dict) -> str:  # type: ignore[type-arg]
    return str(doc["as_of"]).replace("+00:00", "Z")


# 1. "Which services did X own?" lists services. Before, X's alerts and runbook versions were
# listed among them, one OWNS claim each.
@pytest.mark.parametrize(
    ("flags", "others"),
    [
        (IVY, "2 alerts and 1 runbook version"),
        # The alert whose record eve may not read is neither named nor counted.
        (EVE, "1 alert and 1 runbook version"),
    ],
)
def test_which_services_lists_services_and_counts_the_rest(  # type: ignore[no-untyped-def]
    shelves: neo4j.Driver, cli_env, invoke, flags: list[str], others: str
) -> None:
    doc = _ask(invoke, "Which services did Shelving Ops own?", *flags)
    assert _owned(doc) == ["svc:shelf"], _claims(doc)
    hidden = ", alert:ShelfHidden" if flags == IVY else ""
    said = (
        f"At {_as_of(doc)}: team:shelving-ops also owned {others}, not services, which the "
        f"question asks for: alert:ShelfFull{hidden}, runbook:shelf@v2"
    )
    assert said in _claims(doc), _claims(doc)
    assert doc["status"] == "complete", _gaps(doc)
    if flags == EVE:
        assert "ShelfHidden" not in doc["_out"]
    # Asked for everything, everything is listed, one claim each.
    doc = _ask(invoke, "What did team:shelving-ops own?", *flags)
    listed = ["alert:ShelfFull", "alert:ShelfHidden", "runbook:shelf@v2", "svc:shelf"]
    assert _owned(doc) == [o for o in listed if hidden or o != "alert:ShelfHidden"], _claims(doc)


def test_which_services_over_a_period(shelves: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _ask(
        invoke, "Which services did Shelving Ops own between 2025-06-01 and 2026-06-01?", *IVY
    )
    assert _owned(doc) == ["svc:shelf"], _claims(doc)
    says = (
        "(the question says 'between 2025-06-01 and 2026-06-01': 2025-06-01T00:00:00Z to "
        "2026-06-01T23:59:59Z)"
    )
    assert (
        f"In the period asked {says}: team:shelving-ops also owned 2 alerts and 2 runbook "
        "versions, not services, which the question asks for: alert:ShelfFull, "
        "alert:ShelfHidden, runbook:shelf@v1, runbook:shelf@v2"
    ) in _claims(doc), _claims(doc)


def test_which_alerts_lists_alerts(shelves: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _ask(invoke, "Which alerts did team:shelving-ops own?", *EVE)
    assert _owned(doc) == ["alert:ShelfFull"], _claims(doc)
    assert any("also owned 1 service and 1 runbook version, not alerts" in c for c in _claims(doc))


# 2. A runbook version's OWNS record with no end holds no longer than the version. Before,
# "team:shelving-ops OWNS runbook:shelf@v1 (valid 2025-01-01T00:00:00Z to open)" was stated
# at as_of, a year after v2 superseded v1.
def test_a_superseded_runbook_version_is_not_owned_at_as_of(  # type: ignore[no-untyped-def]
    shelves: neo4j.Driver, cli_env, invoke
) -> None:
    doc = _ask(invoke, "What did team:shelving-ops own?", *IVY)
    assert "runbook:shelf@v1" not in _owned(doc), _claims(doc)
    assert "runbook:shelf@v2" in _owned(doc), _claims(doc)


def test_a_runbook_version_owned_while_it_was_in_force(  # type: ignore[no-untyped-def]
    shelves: neo4j.Driver, cli_env, invoke
) -> None:
    doc = _ask(invoke, "What did team:shelving-ops own on 2025-06-01?", *IVY)
    said = (
        "At the time named in the question, 2025-06-01T00:00:00Z (explicit, a day: its start, "
        "00:00 UTC): team:shelving-ops OWNS runbook:shelf@v1 (valid 2025-01-01T00:00:00Z to "
        "open; runbook:shelf@v1 in force until 2026-01-01T00:00:00Z)"
    )
    assert said in _claims(doc), _claims(doc)
    assert "runbook:shelf@v2" not in _owned(doc), _claims(doc)
    # Over a period: v1 from its start to the version's end, v2 from then.
    doc = _ask(invoke, "Show what team:shelving-ops owned between 2025-06-01 and 2026-06-01", *IVY)
    says = (
        "(the question says 'between 2025-06-01 and 2026-06-01': 2025-06-01T00:00:00Z to "
        "2026-06-01T23:59:59Z)"
    )
    assert (
        f"From 2025-01-01T00:00:00Z to 2026-01-01T00:00:00Z {says}: team:shelving-ops OWNS "
        "runbook:shelf@v1"
    ) in _claims(doc), _claims(doc)
    assert (
        f"From 2026-01-01T00:00:00Z, still at as_of, {_as_of(doc)} {says}: team:shelving-ops "
        "OWNS runbook:shelf@v2"
    ) in _claims(doc), _claims(doc)
    # A period after v1 ended names it not.
    doc = _ask(invoke, "Show what team:shelving-ops owned between 2026-03-01 and 2026-06-01", *IVY)
    assert "runbook:shelf@v1" not in doc["_out"], _claims(doc)


# 5. A team named by part of its name gets visible teams suggested. Before, "What did the
# shelving team own?" said only that no team named 'shelving' is recorded.
def _suggested(doc: dict) -> list[list[str]]:  # type: ignore[type-arg]
    return [n["suggestions"] for n in doc.get("unresolved_names", [])]


@pytest.mark.parametrize(
    ("flags", "suggested"),
    [
        (IVY, [["team:shelving-ops", "team:shelving-secret"]]),
        # The team eve may not read, and the other tenant's team of a like name, are not.
        (EVE, [["team:shelving-ops"]]),
        (EVE_INITRODE, [["team:shelving-core"]]),
        # Before the teams were recorded: none.
        ([*EVE, "--known-at", "2026-01-15T00:00:00Z"], [[]]),
    ],
)
def test_a_near_team_name_is_suggested_from_visible_teams_only(  # type: ignore[no-untyped-def]
    shelves: neo4j.Driver, cli_env, invoke, flags: list[str], suggested: list[list[str]]
) -> None:
    doc = _ask(invoke, "What did the shelving team own?", *flags)
    assert _suggested(doc) == suggested, doc.get("unresolved_names")
    assert doc["status"] == "partial"
    assert _gaps(doc) == [
        "no team named 'shelving' is recorded in the records this subject may read: what it "
        "owned is not known"
    ], _gaps(doc)
    if flags != IVY:
        assert "secret" not in doc["_out"].lower()
    text = invoke("investigate", "What did the shelving team own?", *flags)
    if suggested[0]:
        assert f"did you mean {' or '.join(suggested[0])}?" in text.out, text.out


def test_a_hidden_team_is_told_as_a_team_that_does_not_exist(  # type: ignore[no-untyped-def]
    shelves: neo4j.Driver, cli_env, invoke
) -> None:
    told = []
    for flags in (EVE, EVE_INITRODE):
        doc = _ask(invoke, "Which services did Shelving Secret own?", *flags)
        # Only the plan's own link of the words as an id names it (what was typed).
        assert "svc:rack" not in doc["_out"] and "OWNS|team:shelving-secret" not in doc["_out"]
        assert [s for n in doc.get("unresolved_names", []) for s in n["suggestions"]] == []
        told.append((_claims(doc), _gaps(doc), len(doc["evidence"])))
    assert told[0] == told[1], told
