"""Issue 12: `deployments_in_window_tenant` version 4 seeks the window within the tenant.

Version 3 (a change question over a period, no service named) scanned every `KG&Deployment`
node of every tenant and filtered on tenant and `coalesce(finished_at, started_at,
valid_from)` after. Version 4 reads one range seek per time field on `(tenant, <field>)`
(indexes `schema apply` adds to an existing store), each branch taking only the deployments
no earlier field places. Against a real Neo4j: the plan seeks and scans no label, and the
rows equal version 3's (ids, versions, services, times, order, cut) on the demo dataset, a
generated tenant and a tenant of hand-made edge cases (a time field outside the window with
a later field inside, only `valid_from`, a time that is text, other zones at the bounds,
invisible and retracted records, another tenant's releases in the same window).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import neo4j
import pytest
from release_graphs import (
    DEMO_KNOWN_ATS,
    DEMO_WINDOWS,
    EDGE_WINDOWS,
    PURPOSE,
    SYNTH_WINDOWS,
    W0,
    E,
    fresh_plan,
    minutes,
    operators,
    same_rows,
    window_rows,
    window_step,
    write_release_graph,
)

from cypher_templates.executor import TemplateExecutor
from cypher_templates.subject import Subject, load_subject

NEW_INDEXES = (
    "kg_deployment_tenant_finished_at",
    "kg_deployment_tenant_started_at",
    "kg_deployment_tenant_valid_from",
)
LIMITS = [1, 3, 100]


@pytest.fixture(scope="module")
def ex(driver: neo4j.Driver) -> Iterator[TemplateExecutor]:
    write_release_graph(driver)
    yield TemplateExecutor(driver)


def _subject(ex: TemplateExecutor, who: str) -> Subject:
    return load_subject(ex, who, PURPOSE)


def _same_rows(
    ex: TemplateExecutor,
    subject: Subject,
    windows: list[tuple[datetime, datetime]],
    known_ats: list[datetime],
) -> set[str]:
    return same_rows(ex, subject, window_step, windows, LIMITS, known_ats)


def test_version_4_reads_the_rows_of_version_3_on_the_edge_cases(ex: TemplateExecutor) -> None:
    reader = _subject(ex, f"{E}/user:reader")
    now = datetime(2027, 1, 1, tzinfo=UTC)
    seen = _same_rows(ex, reader, EDGE_WINDOWS, [now, W0])
    # Not vacuous: every field places a row, the traps stay out, the neighbour never shows.
    assert {"dep:fin", "dep:start", "dep:vf", "dep:start-in", "dep:zoned", "dep:zoned-vf"} <= seen
    assert {"dep:tie-a", "dep:tie-b", "dep:moved", "dep:many-29"} <= seen
    assert not seen & {"dep:fin-out", "dep:start-out", "dep:text", "dep:other"}
    assert not seen & {"dep:secret", "dep:retracted", "dep:hidden-svc", "dep:no-svc"}
    rows, truncated = window_rows(ex, reader, (minutes(100), minutes(200)), 3, 4, now)
    assert [r[0] for r in rows] == ["dep:many-00", "dep:many-01", "dep:many-02"] and truncated


def test_version_4_reads_the_rows_of_version_3_on_the_demo_and_a_generated_tenant(
    ex: TemplateExecutor,
) -> None:
    alice = _subject(ex, "acme/user:alice")
    demo = _same_rows(ex, alice, DEMO_WINDOWS, DEMO_KNOWN_ATS)
    assert demo
    synth = _same_rows(
        ex,
        _subject(ex, "synth/user:synth-reader"),
        SYNTH_WINDOWS,
        [datetime(2027, 1, 1, tzinfo=UTC)],
    )
    assert len(synth) > 10


def test_version_4_seeks_the_window_in_the_tenant_and_scans_no_label(
    ex: TemplateExecutor, driver: neo4j.Driver
) -> None:
    reader = _subject(ex, f"{E}/user:reader")
    window = (minutes(0), minutes(60))
    found = {}
    for version in (3, 4):
        step = window_step(window, 100, version)
        plan = fresh_plan(ex, driver, step, reader, datetime(2027, 1, 1, tzinfo=UTC))
        found[version] = operators(plan)
    # Version 3 read every tenant's deployments by label.
    assert any("LabelScan" in op or "LabelsScan" in op for op, _ in found[3])
    scans = [(op, details) for op, details in found[4] if "Scan" in op]
    assert scans == [], scans
    seeks = " ".join(d for op, d in found[4] if op.startswith("NodeIndexSeek"))
    for field in ("finished_at", "started_at", "valid_from"):
        assert f"Deployment(tenant, {field})" in seeks, seeks


def test_schema_apply_adds_the_indexes_to_an_existing_store(
    ex: TemplateExecutor, driver: neo4j.Driver, cli_env: Any, invoke: Any
) -> None:
    # A store written before version 4: its deployments are there, the indexes are not.
    for name in NEW_INDEXES:
        driver.execute_query(f"DROP INDEX {name} IF EXISTS")
    reader = _subject(ex, f"{E}/user:reader")
    window, known_at = (minutes(10), minutes(12)), datetime(2027, 1, 1, tzinfo=UTC)
    # Until then version 4 still answers (a hint no index fulfils only costs speed).
    rows, _ = window_rows(ex, reader, window, 100, 4, known_at)
    assert [r[0] for r in rows] == ["dep:fin", "dep:start", "dep:vf"]
    result = invoke("schema", "apply")
    assert result.code == 0, result
    for name in NEW_INDEXES:
        assert f"created range index {name}" in result.out, result.out
    online = driver.execute_query(
        "SHOW RANGE INDEXES YIELD name, state, labelsOrTypes, properties "
        "WHERE name IN $names RETURN name, state, labelsOrTypes, properties",
        names=list(NEW_INDEXES),
    ).records
    assert {(r["name"], r["state"]) for r in online} == {(n, "ONLINE") for n in NEW_INDEXES}
    rows, _ = window_rows(ex, reader, window, 100, 4, known_at)
    assert [r[0] for r in rows] == ["dep:fin", "dep:start", "dep:vf"]
