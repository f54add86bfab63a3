"""The ACL ceiling of the visibility predicate (docs/security.md rule 1): the record of an
element the KG knows now (of any status, a retraction's tombstone included) decides what a
subject may read of it at every `known_at`, for relationships as for nodes.

Two leaks a tester found, reproduced here with a bundle pair
(tests/fixtures/visibility_ceiling/before.yaml, then after.yaml, learned 2026-04-01):

- an OWNS relationship whose ACL a later record tightened came back for a subject without the
  new label through `--known-at` before the change (the ceiling looked relationships up by
  `id`, which they do not have);
- a node tightened and then retracted came back the same way (the ceiling skipped the
  tombstone, the only record of now).

A subject holding the new label still reads both, and superseded or retracted records with
an unchanged ACL keep their history.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import neo4j
import pytest

from cypher_templates.executor import TemplateExecutor
from cypher_templates.plan import PlanStep
from cypher_templates.subject import Subject, SubjectRef, load_subject
from graph_schema.bundle import load_bundle
from graph_schema.schema_ddl import apply_schema
from graph_schema.writer import ingest_bundle

FIXTURES = Path(__file__).parent / "fixtures" / "visibility_ceiling"
TENANT = "ceiling"
# Before the later records (2026-04-01) and the retractions (2026-05-01).
BEFORE = "2026-03-01T00:00:00Z"
BEFORE_AT = datetime(2026, 3, 1, tzinfo=UTC)
NOW_AT = datetime(2030, 1, 1, tzinfo=UTC)
OWNS_A = "OWNS|team:blackops|svc:a"
OWNS_C = "OWNS|team:blackops|svc:c"


@pytest.fixture(scope="module")
def graph(driver: neo4j.Driver) -> Iterator[neo4j.Driver]:
    with driver.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()
    apply_schema(driver)
    ingest_bundle(driver, load_bundle(FIXTURES / "before.yaml"))
    ingest_bundle(driver, load_bundle(FIXTURES / "after.yaml"))
    yield driver


def _investigate(invoke: Any, who: str, question: str, service: str) -> dict[str, Any]:
    result = invoke(
        "investigate", question, "--service", service, "--as-of", BEFORE,
        "--known-at", BEFORE, "--subject", f"{TENANT}/{who}", "--json",
    )  # fmt: skip
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def _said(doc: dict[str, Any]) -> str:
    """Everything the run hands the asker about the KG: claims and evidence."""
    return json.dumps([doc["claims"], doc["evidence"]], sort_keys=True)


def test_a_relationship_tightened_later_is_hidden_at_an_earlier_known_at(  # type: ignore[no-untyped-def]
    graph, cli_env, invoke
) -> None:
    low = _investigate(invoke, "user:low", "Who owned svc:a?", "svc:a")
    assert OWNS_A not in _said(low) and "team:blackops OWNS svc:a" not in _said(low)
    assert low["claims"] == []
    assert any(m.get("evidence_type") == "ownership" for m in low["missing_evidence"]), low
    # Its replay re-runs the same (hiding) templates: it verifies, and shows nothing either.
    replay = invoke("replay", low["run_id"], "--subject", f"{TENANT}/user:low")
    assert replay.code == 0, replay
    assert "verified:        true" in replay.out and "blackops" not in replay.out
    # A subject holding the new label reads the ownership as known then.
    rev = _investigate(invoke, "user:rev", "Who owned svc:a?", "svc:a")
    assert [c["statement"] for c in rev["claims"]] == [
        "At 2026-03-01T00:00:00Z: team:blackops OWNS svc:a (valid 2025-01-01T00:00:00Z to open)"
    ]
    assert [e["element_id"] for e in rev["evidence"]] == [OWNS_A]


def test_a_node_tightened_then_retracted_is_hidden_at_an_earlier_known_at(  # type: ignore[no-untyped-def]
    graph, cli_env, invoke
) -> None:
    low = _investigate(invoke, "user:low", "What is svc:b?", "svc:b")
    assert "bravo-codename" not in _said(low) and "svc:b" not in _said(low)
    assert low["claims"] == []
    rev = _investigate(invoke, "user:rev", "What is svc:b?", "svc:b")
    assert "Service svc:b: bravo-codename" in [c["statement"] for c in rev["claims"]]


def _subject(graph: neo4j.Driver, who: str) -> tuple[TemplateExecutor, Subject]:
    executor = TemplateExecutor(graph)
    ref = SubjectRef(tenant=TENANT, id=who)
    return executor, load_subject(executor, ref, "incident_investigation")


def _ids(
    executor: TemplateExecutor,
    subject: Subject,
    known_at: datetime,
    template_id: str,
    params: dict[str, Any],
    **options: str | int,
) -> list[tuple[str, int, str]]:
    """(element id, version, status) of each row the template returns (its newest version)."""
    step = PlanStep(
        template_id=template_id,
        evidence_type="ownership" if template_id == "ownership_over_time" else "entity",
        params=params,
        options=options,
    )
    result = executor.run(step, subject, known_at)
    assert result.template_version >= 3
    return [(r.element.element_id, r.element.version, r.element.status) for r in result.rows]


# (template, params, options) that reach a tightened element, and what a subject holding
# `secret` reads at the earlier known_at.
REACHING_TIGHTENED = [
    ("ownership_over_time", {"service_id": "svc:a"}, {}, [(OWNS_A, 1, "active")]),
    (
        "version_history",
        {"element_id": OWNS_A},
        {"kind": "relationship"},
        [(OWNS_A, 1, "active")],
    ),
    ("version_history", {"element_id": "svc:b"}, {}, [("svc:b", 1, "active")]),
    ("entity_resolution", {"text": "svc:b"}, {}, [("svc:b", 1, "active")]),
    ("entity_resolution", {"text": "bravo-codename"}, {}, [("svc:b", 1, "active")]),
    # Paths: hops through the tightened DEPENDS_ON edge are hidden with it.
    (
        "dependency_neighbourhood",
        {"start_id": "svc:a"},
        {"rel_type": "DEPENDS_ON", "hops": 2},
        [("DEPENDS_ON|svc:a|svc:c", 1, "active"), ("DEPENDS_ON|svc:c|svc:e", 1, "active")],
    ),
    (
        "dependency_neighbourhood",
        {"start_id": "team:blackops"},
        {"rel_type": "OWNS"},
        [(OWNS_A, 1, "active"), (OWNS_C, 1, "active")],
    ),
]


@pytest.mark.parametrize(("template_id", "params", "options", "for_rev"), REACHING_TIGHTENED)
def test_every_template_hides_a_tightened_element_at_an_earlier_known_at(
    graph: neo4j.Driver,
    template_id: str,
    params: dict[str, Any],
    options: dict[str, Any],
    for_rev: list[tuple[str, int, str]],
) -> None:
    executor, rev = _subject(graph, "user:rev")
    assert sorted(_ids(executor, rev, BEFORE_AT, template_id, params, **options)) == for_rev
    executor, low = _subject(graph, "user:low")
    tightened = {OWNS_A, "svc:b", "DEPENDS_ON|svc:a|svc:c"}
    for known_at in (BEFORE_AT, NOW_AT):
        rows = _ids(executor, low, known_at, template_id, params, **options)
        assert not tightened & {element_id for element_id, _, _ in rows}, (known_at, rows)


def test_superseded_and_retracted_records_with_their_acl_keep_their_history(
    graph: neo4j.Driver,
) -> None:
    """The ceiling hides nothing whose record of now the subject may read: a changed OWNS edge
    shows its old version before the change and its new one after; a node retracted with an
    unchanged ACL is visible before its retraction, gone after, and its history lists both."""
    executor, low = _subject(graph, "user:low")
    owners = {"service_id": "svc:c"}
    assert _ids(executor, low, BEFORE_AT, "ownership_over_time", owners) == [(OWNS_C, 1, "active")]
    assert _ids(executor, low, NOW_AT, "ownership_over_time", owners) == [(OWNS_C, 2, "active")]
    resolve = {"text": "svc:d"}
    assert _ids(executor, low, BEFORE_AT, "entity_resolution", resolve) == [("svc:d", 1, "active")]
    assert _ids(executor, low, NOW_AT, "entity_resolution", resolve) == []
    history = {"element_id": "svc:d"}
    assert _ids(executor, low, NOW_AT, "version_history", history) == [
        ("svc:d", 1, "active"),
        ("svc:d", 2, "retracted"),
    ]
    untouched = _ids(executor, low, BEFORE_AT, "dependency_neighbourhood", {"start_id": "svc:c"})
    assert untouched == [("DEPENDS_ON|svc:c|svc:e", 1, "active")]
