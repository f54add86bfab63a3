"""What a row cap cuts is what a user counts, the same every run: the latest firings of an
alert that fired more often than the cap, and as many distinct services as the cap of a
dependency walk. Through the CLI, on a real Neo4j: the demo dataset plus the bundle below.

Before (h31-walks): `dependency_neighbourhood` ordered a FIRED_ON read by alert id and path
only, and every firing of one alert on one service has the same path, so which 100 of 150
firings survived the cut was up to the server (here: not the latest ones); a DEPENDS_ON walk
counted paths, so a hub whose dependents share middle hops had 100 paths naming 56 services,
and the gap spoke of "paths" the user never saw.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import neo4j
import pytest
from conftest import invoke_process

NOON = ["--as-of", "2026-07-23T12:00:00Z", "--deadline-seconds", "600"]
BOB = ["--subject", "acme/user:bob", *NOON]
CAROL = ["--subject", "acme/user:carol", *NOON]
# Same inputs: the question, the subject, as_of and known_at (its default is the run's start).
KNOWN = "2026-12-01T00:00:00Z"
FIRINGS = 150
_RECORD = (
    'source_id: src:service-catalog, source_version: "catalog@2026-01-05", '
    'valid_from: "2025-01-01T00:00:00Z", recorded_at: "2026-01-05T09:00:00Z"'
)


def _at(minute: int) -> str:
    return f"2026-07-20T{minute // 60:02d}:{minute % 60:02d}:00Z"


def _node(node_id: str, label: str = "Service", acl: str = "[internal]") -> str:
    name = node_id.split(":", 1)[1]
    return (
        f'  - {{id: "{node_id}", label: {label}, name: "{name}", acl: {acl}, '
        f'locator: "catalog/acme.yaml#{node_id}", {_RECORD}}}'
    )


def _depends(start: str, end: str) -> str:
    key = f"DEPENDS_ON|svc:{start}|svc:{end}"
    return (
        f'  - {{type: DEPENDS_ON, from: "svc:{start}", to: "svc:{end}", acl: [internal], '
        f'locator: "catalog/acme.yaml#{key}", {_RECORD}}}'
    )


def _firing(minute: int) -> str:
    at = _at(minute)
    key = f"FIRED_ON|alert:BeaconFlap|svc:beacon|{at}"
    return (
        f'  - {{type: FIRED_ON, from: "alert:BeaconFlap", to: "svc:beacon", key: "{key}", '
        f'acl: [internal], source_id: src:observability, source_version: "obs@2026-07-20", '
        f'locator: "observability/acme#{key}", valid_from: "{at}", valid_to: "{at[:-4]}:30Z", '
        f'recorded_at: "2026-07-21T00:00:00Z", props: {{fired_at: "{at}"}}}}'
    )


# alert:BeaconFlap fired 150 times on svc:beacon, a minute apart (written in a scrambled order,
# so the store's order is not the time order). svc:mesh: mesh-mid-0..9 depend on it, and
# mesh-leaf-000..109 each on two of them (leaf j on mid j % 10 and mid (j + 1) % 10), so 120
# services share middle hops; mesh-secret (readable with the `incident` label only: bob has
# it, carol not) depends on it too, and mesh-hidden-leaf on mesh-secret alone.
BUNDLE = "\n".join(
    [
        "tenant: acme",
        "nodes:",
        _node("svc:beacon"),
        _node("alert:BeaconFlap", "Alert"),
        _node("svc:mesh"),
        _node("svc:mesh-secret", acl="[internal, incident]"),
        _node("svc:mesh-hidden-leaf"),
        *(_node(f"svc:mesh-mid-{m}") for m in range(10)),
        *(_node(f"svc:mesh-leaf-{j:03d}") for j in range(110)),
        "edges:",
        *(_firing(60 + (37 * i) % FIRINGS) for i in range(FIRINGS)),
        *(_depends(f"mesh-mid-{m}", "mesh") for m in range(10)),
        _depends("mesh-secret", "mesh"),
        _depends("mesh-hidden-leaf", "mesh-secret"),
        *(_depends(f"mesh-leaf-{j:03d}", f"mesh-mid-{j % 10}") for j in range(110)),
        *(_depends(f"mesh-leaf-{j:03d}", f"mesh-mid-{(j + 1) % 10}") for j in range(110)),
    ]
)


@pytest.fixture(scope="module")
def capped(demo_graph: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> neo4j.Driver:
    """The demo dataset plus BUNDLE, ingested once for the module."""
    from graph_schema.bundle import load_bundle
    from graph_schema.writer import ingest_bundle

    path: Path = tmp_path_factory.mktemp("capped") / "capped.yaml"
    path.write_text(BUNDLE + "\n", encoding="utf-8")
    ingest_bundle(demo_graph, load_bundle(path))
    demo_graph.execute_query("CALL db.awaitIndexes(300)")
    return demo_graph


def _firings(doc: dict[str, Any]) -> list[str]:
    return [c["statement"] for c in doc["claims"] if c["statement"].startswith("Alert ")]


def _required_gaps(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (m["evidence_type"], m["description"]) for m in doc["missing_evidence"] if m["required"]
    ]


def test_the_latest_firings_survive_the_cap_the_same_in_every_process(  # type: ignore[no-untyped-def]
    capped, cli_env
) -> None:
    latest = [
        f"Alert alert:BeaconFlap fired on svc:beacon at {at} (until {at[:-4]}:30Z)"
        for at in (_at(60 + m) for m in range(FIRINGS - 100, FIRINGS))
    ]
    for question, start in (
        ("Which alerts fired on beacon?", "svc:beacon"),
        ("When did BeaconFlap fire?", "alert:BeaconFlap"),
    ):
        runs = []
        for _ in range(2):
            done = invoke_process(
                "investigate", question, *BOB, "--known-at", KNOWN, "--json", timeout=600
            )
            assert done.code == 0, done
            runs.append(json.loads(done.out))
        first, second = runs
        # The 100 latest of the 150 firings by as_of, listed in time order, in both processes.
        assert _firings(first) == latest, (question, _firings(first)[:3])
        assert first["pack_hash"] == second["pack_hash"], question
        assert first["status"] == "partial"
        assert [g for g in _required_gaps(first) if g[0] == "alert_firing"] == [
            (
                "alert_firing",
                f"the FIRED_ON read of {start} kept the latest 100 firings (by firing time): "
                "earlier firings are not listed",
            )
        ]


def _dependents(doc: dict[str, Any]) -> list[str]:
    """The service each claim names as depending (its record's start), in claim order."""
    return [c["statement"].split(": ", 1)[1].split(" ", 1)[0] for c in doc["claims"]]


def test_a_hub_walk_lists_100_distinct_services_and_says_more_depend_on_it(  # type: ignore[no-untyped-def]
    capped, cli_env, invoke
) -> None:
    gap = (
        "the DEPENDS_ON walk into svc:mesh read at most 100 services (nearest first) and more "
        "depend on it: those are not listed"
    )
    doc = invoke("investigate", "What depends on mesh?", *BOB, "--json")
    assert doc.code == 0, doc
    answer = json.loads(doc.out)
    named = _dependents(answer)
    # 100 claims, 100 services: the 11 one hop in, then the nearest by id two hops in (of
    # each leaf, its path through the least middle service).
    assert len(named) == 100 and len(set(named)) == 100, sorted(set(named))
    assert set(named) == {
        "svc:mesh-secret",
        "svc:mesh-hidden-leaf",
        *(f"svc:mesh-mid-{m}" for m in range(10)),
        *(f"svc:mesh-leaf-{j:03d}" for j in range(88)),
    }
    statements = [c["statement"] for c in answer["claims"]]
    assert any(
        s.endswith(
            "svc:mesh-leaf-009 DEPENDS_ON svc:mesh-mid-0 (valid 2025-01-01T00:00:00Z to open), "
            "so svc:mesh-leaf-009 depends on svc:mesh through svc:mesh-mid-0"
        )
        for s in statements
    ), statements
    assert answer["status"] == "partial"
    assert _required_gaps(answer) == [("dependent", gap)]
    assert (
        "DEPENDS_ON was read up to 3 hops into svc:mesh; the read stopped at its cap of 100 "
        "services"
    ) in answer["search_notes"]
    report = invoke("investigate", "What depends on mesh?", *BOB)
    assert report.code == 0, report
    assert f"dependent (required): {gap}" in report.out
    # carol may not read mesh-secret: neither it nor what depends on mesh through it (the
    # hidden leaf, which she may read by itself) is hers; the 100 are the other services.
    doc = invoke("investigate", "What depends on mesh?", *CAROL, "--json")
    assert doc.code == 0, doc
    named = _dependents(json.loads(doc.out))
    assert set(named) == {
        *(f"svc:mesh-mid-{m}" for m in range(10)),
        *(f"svc:mesh-leaf-{j:03d}" for j in range(90)),
    }
    assert len(named) == 100
    assert "mesh-secret" not in doc.out
    assert "depends on svc:mesh through svc:mesh-secret" not in doc.out
