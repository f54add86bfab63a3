"""Dependency questions read the whole chain the template's bound allows (3 hops, either
way), name each transitive service's path, read an on-call's outage words as "what depends
on X", list every dependent read (not five), and hide a path one hop of which the subject
may not read. Through the CLI, on a real Neo4j: the demo dataset (api-gateway -> checkout ->
payment-api -> payment-db, ledger, risk-engine) plus two small catalogs below.

Before (e29-qa finding 19): "What depends on payment-db?" named payment-api and checkout,
not api-gateway; "What does checkout depend on?" named payment-api alone; "If payment-db
goes down, which services are affected?" and "what breaks if payment-db fails?" were
`partial` with their words refused as unread; a service with 120 dependents listed five of
them, `complete`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import neo4j
import pytest

BOB = ["--subject", "acme/user:bob", "--as-of", "2026-07-23T10:30:00Z", "--deadline-seconds", "600"]
CAROL = ["--subject", "acme/user:carol", *BOB[2:]]
VALID = "(valid 2025-01-01T00:00:00Z to open)"
PAYMENT_DB_DEPENDENTS = [
    f"svc:api-gateway DEPENDS_ON svc:checkout {VALID}, so svc:api-gateway depends on "
    "svc:payment-db through svc:checkout, svc:payment-api",
    f"svc:checkout DEPENDS_ON svc:payment-api {VALID}, so svc:checkout depends on "
    "svc:payment-db through svc:payment-api",
    f"svc:payment-api DEPENDS_ON svc:payment-db {VALID}",
]

_RECORD = (
    'source_id: src:service-catalog, source_version: "catalog@2026-01-05", '
    'valid_from: "2025-01-01T00:00:00Z", recorded_at: "2026-01-05T09:00:00Z"'
)


def _service(name: str, acl: str = "[internal]") -> str:
    return (
        f'  - {{id: "svc:{name}", label: Service, name: "{name}", acl: {acl}, '
        f'locator: "catalog/acme.yaml#svc:{name}", {_RECORD}}}'
    )


def _depends(start: str, end: str, acl: str = "[internal]") -> str:
    key = f"DEPENDS_ON|svc:{start}|svc:{end}"
    return (
        f'  - {{type: DEPENDS_ON, from: "svc:{start}", to: "svc:{end}", acl: {acl}, '
        f'locator: "catalog/acme.yaml#{key}", {_RECORD}}}'
    )


# vault-edge -> vault-web -> vault-core -> vault-db, vault-core readable with the `incident`
# label only (bob has it, carol not); shop-web -> shop -> vault-db, the shop -> vault-db
# record readable with `incident` only. hubdep-000..119 -> hub.
CATALOG = "\n".join(
    [
        "tenant: acme",
        "nodes:",
        _service("vault-db"),
        _service("vault-core", "[internal, incident]"),
        _service("vault-web"),
        _service("vault-edge"),
        _service("shop"),
        _service("shop-web"),
        _service("hub"),
        *(_service(f"hubdep-{i:03d}") for i in range(120)),
        "edges:",
        _depends("vault-core", "vault-db"),
        _depends("vault-web", "vault-core"),
        _depends("vault-edge", "vault-web"),
        _depends("shop", "vault-db", "[internal, incident]"),
        _depends("shop-web", "shop"),
        *(_depends(f"hubdep-{i:03d}", "hub") for i in range(120)),
    ]
)


@pytest.fixture(scope="module")
def chains(demo_graph: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> neo4j.Driver:
    """The demo dataset plus CATALOG, ingested once for the module."""
    from graph_schema.bundle import load_bundle
    from graph_schema.writer import ingest_bundle

    path: Path = tmp_path_factory.mktemp("chains") / "catalog.yaml"
    path.write_text(CATALOG + "\n", encoding="utf-8")
    ingest_bundle(demo_graph, load_bundle(path))
    demo_graph.execute_query("CALL db.awaitIndexes(300)")
    return demo_graph


def _ask(invoke: Any, question: str, who: list[str] = BOB) -> tuple[dict[str, Any], str]:
    doc = invoke("investigate", question, *who, "--json")
    assert doc.code == 0, doc
    report = invoke("investigate", question, *who)
    assert report.code == 0, report
    return json.loads(doc.out), report.out


def _statements(doc: dict[str, Any]) -> list[str]:
    """The claims without their `At <instant>: ` prefix, sorted."""
    return sorted(c["statement"].split(": ", 1)[1] for c in doc["claims"])


def test_what_depends_on_payment_db_names_the_whole_chain(chains, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc, report = _ask(invoke, "What depends on payment-db?")
    assert (doc["status"], doc["missing_evidence"]) == ("complete", [])
    assert _statements(doc) == PAYMENT_DB_DEPENDENTS
    assert (
        "so svc:api-gateway depends on svc:payment-db through svc:checkout, svc:payment-api"
    ) in report


def test_outage_words_are_read_as_what_depends_on_it(chains, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    for question in (
        "If payment-db goes down, which services are affected?",
        "what breaks if payment-db fails?",
        "blast radius of payment-db",
    ):
        doc, report = _ask(invoke, question)
        assert doc["intents"] == ["dependents"], question
        assert (doc["status"], doc["missing_evidence"]) == ("complete", []), question
        assert _statements(doc) == PAYMENT_DB_DEPENDENTS, question
        assert "does not read" not in report, question


def test_what_checkout_depends_on_is_read_as_deep(chains, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc, report = _ask(invoke, "What does checkout depend on?")
    assert (doc["status"], doc["missing_evidence"]) == ("complete", [])
    assert _statements(doc) == [
        f"svc:checkout DEPENDS_ON svc:payment-api {VALID}",
        *(
            f"svc:payment-api DEPENDS_ON svc:{s} {VALID}, so svc:checkout depends on "
            f"svc:{s} through svc:payment-api"
            for s in ("ledger", "payment-db", "risk-engine")
        ),
    ]
    assert "so svc:checkout depends on svc:payment-db through svc:payment-api" in report


def test_a_hop_the_subject_may_not_read_hides_the_path(chains, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # bob reads every hop: the three hops in, each path named.
    doc, _ = _ask(invoke, "What depends on vault-db?")
    assert doc["status"] == "complete"
    assert _statements(doc) == [
        f"svc:shop DEPENDS_ON svc:vault-db {VALID}",
        f"svc:shop-web DEPENDS_ON svc:shop {VALID}, so svc:shop-web depends on svc:vault-db "
        "through svc:shop",
        f"svc:vault-core DEPENDS_ON svc:vault-db {VALID}",
        f"svc:vault-edge DEPENDS_ON svc:vault-web {VALID}, so svc:vault-edge depends on "
        "svc:vault-db through svc:vault-web, svc:vault-core",
        f"svc:vault-web DEPENDS_ON svc:vault-core {VALID}, so svc:vault-web depends on "
        "svc:vault-db through svc:vault-core",
    ]
    # carol may not read vault-core (a node of the path) nor shop -> vault-db (a relationship
    # of it): no path through either is hers, though vault-web, vault-edge, shop and
    # shop-web and their own DEPENDS_ON records are.
    doc, report = _ask(invoke, "What depends on vault-db?", CAROL)
    assert (doc["status"], doc["claims"]) == ("partial", [])
    assert [m["evidence_type"] for m in doc["missing_evidence"]] == ["dependent"]
    for hidden in ("vault-core", "shop"):
        assert hidden not in report
        assert hidden not in json.dumps(doc)
    # Out of vault-edge: carol reads its one hop, the rest of its chain runs through
    # vault-core (vault-db, which she may read, is found by its words alone, no claim).
    doc, report = _ask(invoke, "What does vault-edge depend on?", CAROL)
    assert _statements(doc) == [f"svc:vault-edge DEPENDS_ON svc:vault-web {VALID}"]
    assert "vault-core" not in report
    assert "depends on svc:vault-db" not in report
    doc, _ = _ask(invoke, "What does vault-edge depend on?")
    assert len(doc["claims"]) == 3


def test_every_dependent_read_is_listed_and_a_cut_walk_is_a_gap(chains, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc, report = _ask(invoke, "What depends on hub?")
    # The walk's row cap (100 services, nearest first) cut the 120; all 100 are claimed.
    assert len(doc["claims"]) == 100
    assert doc["status"] == "partial"
    gap = (
        "the DEPENDS_ON walk into svc:hub read at most 100 services (nearest first) and more "
        "depend on it: those are not listed"
    )
    assert [(m["evidence_type"], m["description"]) for m in doc["missing_evidence"]] == [
        ("dependent", gap)
    ]
    assert f"dependent (required): {gap}" in report
