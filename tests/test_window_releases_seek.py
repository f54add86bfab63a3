"""`deployments_in_window_tenant` version 5 stops at the window's oldest rows (h38-window-seek).

Version 4 ("what changed in the last hour?", no service named) sought the window on
`(tenant, <time field>)` but linked every deployment in it to a visible service before one
sort and one cut, so a wide window cost its every release. Version 5 checks, links and cuts
each field's seek in index order (`ORDER BY d.tenant, deployed_at, d.id LIMIT`: a PartialTop
over the seek, which stops after the branch's oldest rows and their ties). Against a real
Neo4j: the rows equal version 4's (ids, versions, services, times, order, cut) on hand-made
edge cases (the window's oldest releases invisible: another ACL, another purpose, retracted,
superseded, a hidden service, none, recorded after known_at; ties at the cut across fields
and ids; releases placed by started_at or valid_from only), the demo and a generated tenant;
the plan sorts no branch whole and scans no label; a wide window reads fewer records.
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
    db_hits,
    fresh_plan,
    invisible_releases,
    minutes,
    operators,
    same_rows,
    window_ids,
    window_step,
    write_release_graph,
)
from test_templates_graph import node

from cypher_templates.executor import TemplateExecutor
from cypher_templates.subject import Subject, load_subject

NOW = datetime(2027, 1, 1, tzinfo=UTC)
RECORDED = minutes(300)  # when the late release was recorded
# From minute 400: the window's oldest are invisible, then ties at one instant.
OLDEST_HIDDEN = [
    *invisible_releases(
        "dep:w-",
        {"secret": 400, "purpose": 401, "retracted": 402, "hidden-svc": 403, "no-svc": 404},
    ),
    node(
        E,
        "dep:w-late",
        ["Deployment"],
        service="svc:b",
        finished_at=minutes(405),
        recorded_at=RECORDED,
    ),
    # Placed by started_at, then valid_from only, among the invisible ones.
    node(E, "dep:w-start", ["Deployment"], service="svc:b", started_at=minutes(406)),
    node(E, "dep:w-vf", ["Deployment"], service="svc:b", valid_from=minutes(407)),
    # Ties at minute 410, written in reverse id order so the index order is not the id order;
    # the smallest id is placed by started_at.
    *(
        node(E, f"dep:w-tie-{c}", ["Deployment"], service="svc:a", finished_at=minutes(410))
        for c in "edcb"
    ),
    node(E, "dep:w-tie-a", ["Deployment"], service="svc:b", started_at=minutes(410)),
    node(E, "dep:w-after", ["Deployment"], service="svc:a", finished_at=minutes(411)),
]
WINDOWS = [
    *EDGE_WINDOWS,
    (minutes(51), minutes(700)),  # the edge cases' invisible ones first
    (minutes(400), minutes(420)),
    (minutes(405), minutes(410)),
    (minutes(410), minutes(410)),
    (minutes(-7000), minutes(7000)),
]
LIMITS = [1, 2, 3, 5, 100]


@pytest.fixture(scope="module")
def ex(driver: neo4j.Driver) -> Iterator[TemplateExecutor]:
    write_release_graph(driver, *OLDEST_HIDDEN)
    yield TemplateExecutor(driver)


def _ids(
    ex: TemplateExecutor,
    subject: Subject,
    window: tuple[datetime, datetime],
    limit: int,
    known_at: datetime,
) -> list[Any]:
    return window_ids(ex, subject, window, limit, 5, known_at)


def _same_rows(
    ex: TemplateExecutor,
    subject: Subject,
    windows: list[tuple[datetime, datetime]],
    known_ats: list[datetime],
) -> set[str]:
    return same_rows(ex, subject, window_step, windows, LIMITS, known_ats, versions=(4, 5))


def test_version_5_reads_the_rows_of_version_4_on_the_edge_cases(ex: TemplateExecutor) -> None:
    reader = load_subject(ex, f"{E}/user:reader", PURPOSE)
    seen = _same_rows(ex, reader, WINDOWS, [NOW, RECORDED, minutes(100), W0])
    assert {"dep:fin", "dep:start", "dep:vf", "dep:tie-a", "dep:tie-b", "dep:moved"} <= seen
    assert {"dep:w-late", "dep:w-start", "dep:w-vf", "dep:w-tie-a", "dep:w-tie-e"} <= seen
    assert {"dep:zoned", "dep:zoned-vf", "dep:many-29", "dep:w-after"} <= seen
    hidden = {"dep:w-secret", "dep:w-purpose", "dep:w-retracted", "dep:w-hidden-svc"}
    assert not seen & (hidden | {"dep:w-no-svc", "dep:secret", "dep:retracted", "dep:no-svc"})
    # The window's six oldest are invisible then: the first rows are the next ones.
    window = (minutes(400), minutes(420))
    assert _ids(ex, reader, window, 2, minutes(100)) == [
        "dep:w-start",
        "dep:w-vf",
    ]
    # Known once recorded, the late release comes first.
    assert _ids(ex, reader, window, 2, NOW) == ["dep:w-late", "dep:w-start"]
    # Ties at the ceiling: every one is read, the smallest id first whatever its field.
    assert _ids(ex, reader, (minutes(408), minutes(420)), 1, NOW) == ["dep:w-tie-a"]
    assert _ids(ex, reader, (minutes(408), minutes(420)), 3, NOW) == [
        "dep:w-tie-a",
        "dep:w-tie-b",
        "dep:w-tie-c",
    ]


def test_version_5_reads_the_rows_of_version_4_on_the_demo_and_a_generated_tenant(
    ex: TemplateExecutor,
) -> None:
    demo = _same_rows(
        ex, load_subject(ex, "acme/user:alice", PURPOSE), DEMO_WINDOWS, DEMO_KNOWN_ATS
    )
    assert demo
    synth = _same_rows(
        ex, load_subject(ex, "synth/user:synth-reader", PURPOSE), SYNTH_WINDOWS, [NOW]
    )
    assert len(synth) > 10


def test_version_5_cuts_each_seek_in_index_order_and_reads_less_of_a_wide_window(
    ex: TemplateExecutor, driver: neo4j.Driver
) -> None:
    reader = load_subject(ex, "synth/user:synth-reader", PURPOSE)
    wide = (datetime(1900, 1, 1, tzinfo=UTC), datetime(9999, 1, 1, tzinfo=UTC))
    found, hits = {}, {}
    for version in (4, 5):
        profile = fresh_plan(ex, driver, window_step(wide, 10, version), reader, NOW, "PROFILE")
        found[version], hits[version] = operators(profile), db_hits(profile)
    # Each branch is cut over its seek's order (PartialTop); the one Top orders at most
    # three branches' $limit rows, never the window.
    cuts = [op.split("@")[0] for op, _ in found[5] if "Top" in op or "Sort" in op]
    assert sorted(cuts) == ["PartialTop"] * 3 + ["Top"], found[5]
    assert [(op, d) for op, d in found[5] if "Scan" in op] == []
    seeks = " ".join(d for op, d in found[5] if op.startswith("NodeIndexSeek"))
    for field in ("finished_at", "started_at", "valid_from"):
        assert f"Deployment(tenant, {field})" in seeks, seeks
    # The generated tenant's every release is in the window: version 4 linked each of them.
    assert hits[5] * 2 < hits[4], hits
