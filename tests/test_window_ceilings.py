"""`deployments_in_window_tenant` version 6 seeks each later field only up to the cut (issue 12).

Version 5 cut each field's seek in index order, but the `started_at` and `valid_from` seeks
still read their field's whole window to drop the releases an earlier field places (every
generated release has all three times), so a wide window cost its every release's index
entries there. Version 6 reads the fields in turn: once the rows so far hold `$limit`, no
release deployed after the `$limit`-th oldest of them can be a row, so the next field is
sought only up to that time (and a second: another zone at the same instant). Against a real
Neo4j: the rows equal version 5's (ids, versions, services, times, order, cut) on version 5's
edge cases and on new ones at the ceiling (ties there across fields and ids, another zone at
its instant, a time within the second after it, invisible later-field releases before it, a
ceiling the `finished_at` rows alone do not fill), the demo and a generated tenant; the later
seeks read about `$limit` index entries of a wide window, not all of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import neo4j
import pytest
from release_graphs import (
    PLUS_TWO,
    W0,
    E,
    db_hits,
    minutes,
    operators,
    same_rows,
    window_ids,
    window_step,
    write_release_graph,
)
from test_templates_graph import node
from test_window_releases_seek import NOW, OLDEST_HIDDEN, RECORDED
from test_window_releases_seek import WINDOWS as V5_WINDOWS

from cypher_templates.executor import TemplateExecutor
from cypher_templates.subject import Subject, load_subject

PURPOSE = "incident_investigation"
AT_CUT = minutes(901)  # the second finished release of the window from minute 900
# From minute 900: three releases placed by finished_at, and later fields' releases around
# the time of the second (the cut at a limit of 2).
AT_THE_CEILING = [
    node(E, "dep:c-f1", ["Deployment"], service="svc:a", finished_at=minutes(900)),
    node(E, "dep:c-f2", ["Deployment"], service="svc:a", finished_at=AT_CUT),
    node(E, "dep:c-f3", ["Deployment"], service="svc:a", finished_at=minutes(903)),
    # Placed by started_at: before the window, at the cut with a smaller id, the same instant
    # in another zone with the smallest id, half a second after it, after it.
    node(E, "dep:c-s-early", ["Deployment"], service="svc:b", started_at=minutes(899)),
    node(E, "dep:c-a-start", ["Deployment"], service="svc:b", started_at=AT_CUT),
    node(
        E,
        "dep:c-0-zoned",
        ["Deployment"],
        service="svc:b",
        started_at=AT_CUT.astimezone(PLUS_TWO),
    ),
    node(
        E,
        "dep:c-s-half",
        ["Deployment"],
        service="svc:b",
        started_at=AT_CUT + timedelta(milliseconds=500),
    ),
    node(E, "dep:c-s-late", ["Deployment"], service="svc:b", started_at=minutes(902)),
    # Placed by valid_from: at the cut, and between the first two.
    node(E, "dep:c-a-vf", ["Deployment"], service="svc:b", valid_from=AT_CUT),
    node(
        E,
        "dep:c-vf-early",
        ["Deployment"],
        service="svc:b",
        valid_from=minutes(900) + timedelta(seconds=30),
    ),
    # Invisible later-field releases before the cut: another ACL, a hidden service.
    node(
        E,
        "dep:c-s-secret",
        ["Deployment"],
        service="svc:b",
        acl=["secret"],
        started_at=minutes(900),
    ),
    node(E, "dep:c-vf-hidden", ["Deployment"], service="svc:hidden", valid_from=minutes(900)),
    # From minute 920: one release placed by finished_at, so the finished_at rows alone never
    # fill a limit above 1; the started_at rows fill 3, and bound the valid_from seek.
    node(E, "dep:d-f", ["Deployment"], service="svc:a", finished_at=minutes(925)),
    node(E, "dep:d-s1", ["Deployment"], service="svc:b", started_at=minutes(921)),
    node(E, "dep:d-s2", ["Deployment"], service="svc:b", started_at=minutes(922)),
    node(E, "dep:d-s3", ["Deployment"], service="svc:b", started_at=minutes(930)),
    node(E, "dep:d-v1", ["Deployment"], service="svc:a", valid_from=minutes(923)),
    node(E, "dep:d-v2", ["Deployment"], service="svc:a", valid_from=minutes(935)),
]
WINDOWS = [
    *V5_WINDOWS,
    (minutes(895), minutes(910)),
    (minutes(900), minutes(910)),
    (minutes(900), AT_CUT),  # the cut's time is the window's end
    (AT_CUT, AT_CUT),
    (minutes(920), minutes(940)),
    (minutes(890), minutes(940)),
]
LIMITS = [1, 2, 3, 5, 100]


@pytest.fixture(scope="module")
def ex(driver: neo4j.Driver) -> Iterator[TemplateExecutor]:
    write_release_graph(driver, *OLDEST_HIDDEN, *AT_THE_CEILING)
    yield TemplateExecutor(driver)


def _ids(
    ex: TemplateExecutor,
    subject: Subject,
    window: tuple[datetime, datetime],
    limit: int,
    known_at: datetime = NOW,
) -> list[Any]:
    return window_ids(ex, subject, window, limit, 6, known_at)


def _same_rows(
    ex: TemplateExecutor,
    subject: Subject,
    windows: list[tuple[datetime, datetime]],
    known_ats: list[datetime],
) -> set[str]:
    return same_rows(ex, subject, window_step, windows, LIMITS, known_ats, versions=(5, 6))


def test_version_6_reads_the_rows_of_version_5_on_the_edge_cases(ex: TemplateExecutor) -> None:
    reader = load_subject(ex, f"{E}/user:reader", PURPOSE)
    seen = _same_rows(ex, reader, WINDOWS, [NOW, RECORDED, minutes(100), W0])
    # Not vacuous: version 5's cases and the new ones each place a row.
    assert {"dep:fin", "dep:start", "dep:vf", "dep:tie-a", "dep:zoned", "dep:zoned-vf"} <= seen
    assert {"dep:w-late", "dep:w-start", "dep:w-vf", "dep:w-tie-a", "dep:w-after"} <= seen
    assert {"dep:c-f1", "dep:c-f2", "dep:c-a-start", "dep:c-0-zoned", "dep:c-s-half"} <= seen
    assert {"dep:c-a-vf", "dep:c-vf-early", "dep:c-s-early", "dep:d-s1", "dep:d-v1"} <= seen
    assert not seen & {"dep:c-s-secret", "dep:c-vf-hidden", "dep:w-secret", "dep:secret"}
    # The finished_at rows fill the cut at minute 901; the later fields' releases at that
    # instant (another zone's included) come before the finished one by id.
    window = (minutes(900), minutes(910))
    assert _ids(ex, reader, window, 2) == ["dep:c-f1", "dep:c-vf-early"]
    assert set(_ids(ex, reader, window, 6)[2:]) == {
        "dep:c-0-zoned",
        "dep:c-a-start",
        "dep:c-a-vf",
        "dep:c-f2",
    }
    assert _ids(ex, reader, window, 7)[-1] == "dep:c-s-half"
    # One finished release: the started_at rows fill 3, and the valid_from one before their
    # third is a row.
    assert _ids(ex, reader, (minutes(920), minutes(940)), 3) == [
        "dep:d-s1",
        "dep:d-s2",
        "dep:d-v1",
    ]


def test_version_6_reads_the_rows_of_version_5_on_the_demo_and_a_generated_tenant(
    ex: TemplateExecutor,
) -> None:
    demo = _same_rows(
        ex,
        load_subject(ex, "acme/user:alice", PURPOSE),
        [
            (datetime(2026, 7, 1, tzinfo=UTC), datetime(2026, 8, 1, tzinfo=UTC)),
            (datetime(2026, 7, 23, tzinfo=UTC), datetime(2026, 7, 23, 10, tzinfo=UTC)),
            (datetime(1900, 1, 1, tzinfo=UTC), datetime(9999, 1, 1, tzinfo=UTC)),
        ],
        [datetime(2026, 8, 1, tzinfo=UTC), datetime(2026, 7, 23, 12, tzinfo=UTC)],
    )
    assert demo
    synth = _same_rows(
        ex,
        load_subject(ex, "synth/user:synth-reader", PURPOSE),
        [
            (datetime(2026, 1, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC)),
            (datetime(2026, 6, 1, tzinfo=UTC), datetime(2026, 6, 2, tzinfo=UTC)),
            (datetime(1900, 1, 1, tzinfo=UTC), datetime(9999, 1, 1, tzinfo=UTC)),
        ],
        [NOW],
    )
    assert len(synth) > 10


def _seek_rows(plan: Any) -> dict[str, int]:
    """The rows each NodeIndexSeek on a Deployment time index produced, by field."""
    found: dict[str, int] = {}
    if str(plan["operatorType"]).startswith("NodeIndexSeek"):
        details = str(plan.get("args", {}).get("Details", ""))
        for field in ("finished_at", "started_at", "valid_from"):
            if f"Deployment(tenant, {field})" in details:
                found[field] = found.get(field, 0) + int(plan.get("rows", 0))
    for child in plan.get("children", []):
        for field, rows in _seek_rows(child).items():
            found[field] = found.get(field, 0) + rows
    return found


def test_version_6_seeks_the_later_fields_only_up_to_the_cut(
    ex: TemplateExecutor, driver: neo4j.Driver
) -> None:
    reader = load_subject(ex, "synth/user:synth-reader", PURPOSE)
    wide = (datetime(1900, 1, 1, tzinfo=UTC), datetime(9999, 1, 1, tzinfo=UTC))
    limit = 10
    seeks, hits, plan_operators = {}, {}, {}
    for version in (5, 6):
        compiled = ex.compile(window_step(wide, limit, version))
        parameters = ex.cypher_parameters(compiled, reader, NOW)
        with driver.session(
            notifications_min_severity=neo4j.NotificationMinimumSeverity.OFF
        ) as session:
            # Fresh statistics and no cached plan (as test_tenant_releases_seek does).
            session.run("CALL db.prepareForReplanning()").consume()
            profile = session.run("PROFILE " + compiled.text, parameters).consume().profile
        assert profile is not None
        seeks[version], hits[version] = _seek_rows(profile), db_hits(profile)
        plan_operators[version] = operators(profile)
    releases = driver.execute_query(
        "MATCH (d:KG:Deployment {tenant: 'synth'}) RETURN count(d) AS n"
    ).records[0]["n"]
    assert releases > 10 * limit
    # Version 5 read the later fields' whole window (every generated release has all three
    # times); version 6 stops them at the cut's time: about the limit each.
    assert seeks[5]["started_at"] >= releases and seeks[5]["valid_from"] >= releases, seeks
    assert seeks[6]["finished_at"] <= seeks[5]["finished_at"], seeks
    assert seeks[6]["started_at"] <= 3 * limit and seeks[6]["valid_from"] <= 3 * limit, seeks
    assert hits[6] < hits[5], hits
    # Still each branch cut over its seek's order, and no label scanned.
    cuts = [op.split("@")[0] for op, _ in plan_operators[6] if op.startswith("PartialTop")]
    assert cuts == ["PartialTop"] * 3, plan_operators[6]
    assert [(op, d) for op, d in plan_operators[6] if "Scan" in op] == []
