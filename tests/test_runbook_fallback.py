"""Fallback runbooks against the real Neo4j (issue 15): an error code or alert with no runbook
of its own gets the runbook of the service that emitted it / it fired on at as_of, named as
a fallback with its path, the owner through the same path, and several services ranked.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import neo4j
import pytest

from graph_schema.bundle import Bundle, LoadedBundle
from graph_schema.schema_ddl import apply_schema
from graph_schema.writer import ingest_bundle
from investigator.runbook_lookup import LookupTarget, RunbookAnswer, RunbookLookup, RunbookQuery

TENANT = "fallbacktest"
_SRC = "src:fallback-test"


def _edge(kind: str, src: str, dst: str, start: str, end: str | None = None) -> dict[str, object]:
    edge: dict[str, object] = {
        "type": kind,
        "from": src,
        "to": dst,
        "key": f"{kind}|{src}|{dst}|{start}",
        "source_id": _SRC,
        "valid_from": start,
    }
    if end:
        edge["valid_to"] = end
    return edge


def _world() -> Bundle:
    node = {"source_id": _SRC, "valid_from": "2025-01-01T00:00:00Z"}
    return Bundle.model_validate(
        {
            "tenant": TENANT,
            "sources": [
                {
                    "source_id": _SRC,
                    "source_type": "service_catalog",
                    "allowed_purposes": ["runbook_lookup"],
                }
            ],
            "principals": [
                {"id": "user:oncall", "purposes": ["runbook_lookup"], "source_id": _SRC}
            ],
            "nodes": [
                {"id": "svc:api", "label": "Service", "name": "api", **node},
                {"id": "svc:worker", "label": "Service", "name": "worker", **node},
                {"id": "team:core", "label": "Team", "name": "Core", **node},
                {
                    "id": "err:E1",
                    "label": "ErrorCode",
                    "name": "E1",
                    "props": {"code": "E1"},
                    **node,
                },
                {
                    "id": "err:E2",
                    "label": "ErrorCode",
                    "name": "E2",
                    "props": {"code": "E2"},
                    **node,
                },
                {"id": "alert:QueueStuck", "label": "Alert", "name": "QueueStuck", **node},
            ],
            "documents": [
                {
                    "id": f"runbook:{name}",
                    "kind": "runbook",
                    "title": f"{name} recovery",
                    "content": f"Restart {name}.",
                    "locator": f"runbooks/{name}.md",
                    "supports": ["runbook"],
                    "applies_to": [f"svc:{name}"],
                    "source_id": _SRC,
                    "valid_from": "2025-01-01T00:00:00Z",
                }
                for name in ("api", "worker")
            ],
            "edges": [
                _edge("OWNS", "team:core", "svc:api", "2025-01-01T00:00:00Z"),
                # E1 comes from both services; api emitted it twice, worker once.
                _edge("EMITTED", "svc:api", "err:E1", "2026-01-01T00:00:00Z"),
                _edge("EMITTED", "svc:api", "err:E1", "2026-02-01T00:00:00Z"),
                _edge("EMITTED", "svc:worker", "err:E1", "2026-03-01T00:00:00Z"),
                # E2 was emitted by api only until March.
                _edge(
                    "EMITTED", "svc:api", "err:E2", "2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z"
                ),
                _edge("FIRED_ON", "alert:QueueStuck", "svc:worker", "2026-04-01T00:00:00Z"),
            ],
        }
    )


@pytest.fixture(scope="module")
def lookup(driver: neo4j.Driver) -> Iterator[RunbookLookup]:
    apply_schema(driver)
    ingest_bundle(driver, LoadedBundle.from_bundles([("fallback world", _world())]))
    yield RunbookLookup(driver)


def _ask(lookup: RunbookLookup, target: LookupTarget, value: str, as_of: str) -> RunbookAnswer:
    return lookup.lookup(
        RunbookQuery(
            target=target,
            value=value,
            subject_id=f"{TENANT}/user:oncall",
            as_of=datetime.fromisoformat(as_of).replace(tzinfo=UTC),
        )
    )


def test_error_code_falls_back_to_both_emitting_services_ranked(lookup: RunbookLookup) -> None:
    answer = _ask(lookup, LookupTarget.ERROR_CODE, "E1", "2026-06-01T00:00:00")
    assert answer.runbook is not None and answer.runbook.id == "runbook:api"
    assert answer.runbook.fallback_via == "err:E1 <- EMITTED - svc:api"
    assert [v.fallback_via for v in answer.alternatives] == ["err:E1 <- EMITTED - svc:worker"]
    assert answer.note is not None and answer.note.startswith("fallback:")
    assert "2 services, ranked" in answer.note
    # The owner through the same path: api's owner, saying how it was reached.
    assert answer.owner == "team:core"
    assert answer.owner_detail is not None
    assert (
        answer.owner_detail.basis == "service svc:api (fallback path err:E1 <- EMITTED - svc:api)"
    )


def test_fallback_only_through_edges_valid_at_as_of(lookup: RunbookLookup) -> None:
    during = _ask(lookup, LookupTarget.ERROR_CODE, "E2", "2026-02-01T00:00:00")
    assert during.runbook is not None and during.runbook.id == "runbook:api"
    after = _ask(lookup, LookupTarget.ERROR_CODE, "E2", "2026-06-01T00:00:00")
    assert after.runbook is None
    # The note says what is true (issue 13): no runbook of its own, and the edge has ended.
    assert after.note == (
        "no runbook is linked to err:E2 (none APPLIES_TO it); it was emitted by no service at "
        "as_of (it was emitted by svc:api 2026-01-01T00:00:00Z -> 2026-03-01T00:00:00Z; ask "
        "with --as-of inside that interval for that service's runbook)"
    )


def test_alert_falls_back_to_the_service_it_fired_on(lookup: RunbookLookup) -> None:
    answer = _ask(lookup, LookupTarget.ALERT, "QueueStuck", "2026-05-01T00:00:00")
    assert answer.runbook is not None and answer.runbook.id == "runbook:worker"
    assert answer.runbook.fallback_via == "alert:QueueStuck - FIRED_ON -> svc:worker"
    assert answer.owner is None  # worker has no owner: none is invented


def test_a_service_with_its_own_runbook_is_no_fallback(lookup: RunbookLookup) -> None:
    answer = _ask(lookup, LookupTarget.SERVICE, "svc:api", "2026-05-01T00:00:00")
    assert answer.runbook is not None and answer.runbook.fallback_via is None, answer.rejected
    assert answer.note is None
