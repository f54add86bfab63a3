"""`latest_deployments_tenant` version 4 seeks the tenant's newest releases (h37-anchor-seek).

Version 3 (the release anchor asked long after: "what changed an hour before the release?"
with none in the day before as_of) read every deployment of the tenant up to `to`, ran the
service-visibility subquery for each, then sorted and cut. Version 4 seeks backward from `to`
on `(tenant, <time field>)`: the newest candidates of each index, checked, give a floor,
then each field is read from that floor to `to` (every deployment up to `to` when too few
candidates pass). Against a real Neo4j: the plan seeks the three indexes and scans
no label, and the rows equal version 3's (ids, versions, services, times, order, cut) on the
demo dataset, a generated tenant and hand-made edge cases, newer invisible releases (another
ACL, retracted, superseded, a hidden service, none) and one known only after known_at among
them.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import neo4j
import pytest
from release_graphs import (
    PURPOSE,
    W0,
    E,
    fresh_plan,
    minutes,
    operators,
    same_rows,
    step_rows,
    write_release_graph,
)
from test_templates_graph import node

from cypher_templates.executor import TemplateExecutor
from cypher_templates.plan import PlanStep
from cypher_templates.subject import Subject, load_subject

NOW = datetime(2027, 1, 1, tzinfo=UTC)
# The newest release of all, recorded late: never the anchor known before it was recorded.
LATE = node(
    E,
    "dep:recorded-late",
    ["Deployment"],
    service="svc:b",
    finished_at=minutes(59),
    recorded_at=minutes(300),
)
# Ends of the edge cases' times: before all, at a tie, among the invisible ones, after all.
EDGE_TOS = [minutes(-7000), minutes(10), minutes(50), minutes(56), minutes(60), minutes(700)]
LIMITS = [1, 2, 3, 10]


@pytest.fixture(scope="module")
def ex(driver: neo4j.Driver) -> Iterator[TemplateExecutor]:
    write_release_graph(driver, LATE)
    yield TemplateExecutor(driver)


def _step(to: datetime, limit: int, version: int) -> PlanStep:
    return PlanStep(
        template_id="latest_deployments_tenant",
        evidence_type="deployment_time",
        params={"to": to.isoformat()},
        template_version=version,
        limit=limit,
    )


def _rows(
    ex: TemplateExecutor,
    subject: Subject,
    to: datetime,
    limit: int,
    version: int,
    known_at: datetime,
) -> tuple[list[tuple[Any, ...]], bool]:
    return step_rows(ex, _step(to, limit, version), subject, known_at)


def _same_rows(
    ex: TemplateExecutor, subject: Subject, tos: list[datetime], known_ats: list[datetime]
) -> set[str]:
    return same_rows(ex, subject, _step, tos, LIMITS, known_ats)


def test_version_4_reads_the_rows_of_version_3_on_the_edge_cases(ex: TemplateExecutor) -> None:
    reader = load_subject(ex, f"{E}/user:reader", PURPOSE)
    seen = _same_rows(ex, reader, EDGE_TOS, [NOW, minutes(100), W0])
    assert {"dep:fin", "dep:start", "dep:vf", "dep:tie-a", "dep:tie-b", "dep:moved"} <= seen
    assert {"dep:recorded-late", "dep:many-29", "dep:zoned", "dep:start-out"} <= seen
    assert not seen & {"dep:fin-out", "dep:text", "dep:other"}
    assert not seen & {"dep:secret", "dep:retracted", "dep:hidden-svc", "dep:no-svc"}
    # Up to minute 58 the four newest are invisible: the anchor is still the newest visible.
    rows, _ = _rows(ex, reader, minutes(58), 2, 4, NOW)
    assert [r[0] for r in rows] == ["dep:moved", "dep:tie-a"]
    # Known before it was recorded, the late release is never the anchor.
    rows, _ = _rows(ex, reader, minutes(60), 1, 4, minutes(100))
    assert [r[0] for r in rows] == ["dep:moved"]
    rows, _ = _rows(ex, reader, minutes(60), 1, 4, NOW)
    assert [r[0] for r in rows] == ["dep:recorded-late"]


def test_version_4_reads_the_rows_of_version_3_on_the_demo_and_a_generated_tenant(
    ex: TemplateExecutor,
) -> None:
    demo = _same_rows(
        ex,
        load_subject(ex, "acme/user:alice", PURPOSE),
        [
            datetime(2026, 7, 23, 10, 2, tzinfo=UTC),
            datetime(2026, 7, 23, 10, 1, tzinfo=UTC),
            datetime(2026, 11, 1, tzinfo=UTC),
            datetime(1900, 1, 1, tzinfo=UTC),
        ],
        [datetime(2026, 8, 1, tzinfo=UTC), datetime(2026, 7, 23, 10, tzinfo=UTC)],
    )
    assert demo
    synth = _same_rows(
        ex,
        load_subject(ex, "synth/user:synth-reader", PURPOSE),
        [datetime(2026, 6, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC)],
        [NOW],
    )
    assert len(synth) >= 10


def test_version_4_seeks_the_newest_in_the_tenant_and_scans_no_label(
    ex: TemplateExecutor, driver: neo4j.Driver
) -> None:
    reader = load_subject(ex, f"{E}/user:reader", PURPOSE)
    found = {}
    for version in (3, 4):
        found[version] = operators(
            fresh_plan(ex, driver, _step(minutes(60), 10, version), reader, NOW)
        )
    # The candidates are the index's newest, cut in index order (a Limit, not a sort).
    assert any(op.startswith("Limit") for op, _ in found[4]), found[4]
    scans = [(op, details) for op, details in found[4] if "Scan" in op]
    assert scans == [], scans
    seeks = " ".join(d for op, d in found[4] if op.startswith("NodeIndexSeek"))
    for field in ("finished_at", "started_at", "valid_from"):
        assert f"Deployment(tenant, {field})" in seeks, seeks
    # Version 3 sought no time: every deployment of the tenant was read.
    old_seeks = " ".join(d for op, d in found[3] if "Seek" in op)
    assert "finished_at" not in old_seeks, old_seeks
