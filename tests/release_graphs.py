"""Release graphs for the tenant-wide release templates' seek tests, and how they compare.

`deployments_in_window_tenant` (tests/test_tenant_releases_seek.py, version 4 against 3;
tests/test_window_releases_seek.py, 5 against 4) and `latest_deployments_tenant`
(tests/test_latest_releases_seek.py, 4 against 3) are each proved on the same graph: the demo,
a generated tenant and a tenant of hand-made edge cases (`write_release_graph`), where a new
version must read the rows of the old one (`same_rows`). `invisible_releases` builds the
releases that tenant's reader never sees, one of each kind, at the minutes a test needs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import neo4j
from test_templates_graph import edge, node, principal, wipe_graph, write_graph

from cypher_templates.executor import TemplateExecutor
from cypher_templates.plan import PlanStep
from cypher_templates.subject import Subject
from graph_schema.bundle import LoadedBundle, load_bundle
from graph_schema.schema_ddl import apply_schema
from graph_schema.synthetic import generate_bundle
from graph_schema.writer import ingest_bundle

DATASET = Path(__file__).resolve().parents[1] / "datasets" / "payments-incident"
E = "edges"  # the hand-made tenant
NEIGHBOUR = "elsewhere"  # its neighbour: releases in the same windows, never a row
PURPOSE = "incident_investigation"
W0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
PLUS_TWO = timezone(timedelta(hours=2))


def minutes(n: int) -> datetime:
    """`n` minutes after W0, the edge cases' origin."""
    return W0 + timedelta(minutes=n)


# What makes each kind of release invisible to the edge tenant's reader.
_INVISIBLE: dict[str, dict[str, Any]] = {
    "secret": {"service": "svc:a", "acl": ["secret"]},  # another ACL
    "purpose": {"service": "svc:a", "purposes": ["billing"]},  # another purpose
    "retracted": {"service": "svc:a", "status": "retracted"},
    "hidden-svc": {"service": "svc:hidden"},  # its service is another ACL's
    "no-svc": {},  # no service at all
}


def invisible_releases(prefix: str, at: Mapping[str, int]) -> list[dict[str, Any]]:
    """One release of each kind named in `at` ("secret", "purpose", "retracted",
    "hidden-svc", "no-svc"), id `<prefix><kind>`, finished at its minute."""
    return [
        node(E, f"{prefix}{kind}", ["Deployment"], **_INVISIBLE[kind], finished_at=minutes(n))
        for kind, n in at.items()
    ]


def edge_case_records() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Deployments placed by each time field, and the traps of a per-field seek."""
    nodes = [
        principal(E, "user:reader", ["internal"], [PURPOSE]),
        node(E, "svc:a", ["Service"], name="a"),
        node(E, "svc:b", ["Service"], name="b"),
        node(E, "svc:hidden", ["Service"], name="hidden", acl=["secret"]),
        # Placed by finished_at, started_at, valid_from (one each minute).
        node(E, "dep:fin", ["Deployment"], service="svc:a", finished_at=minutes(10)),
        node(E, "dep:start", ["Deployment"], service="svc:a", started_at=minutes(11)),
        node(E, "dep:vf", ["Deployment"], service="svc:a", valid_from=minutes(12)),
        # A later field in the window, an earlier one outside: the earlier one decides.
        node(
            E,
            "dep:fin-out",
            ["Deployment"],
            service="svc:a",
            started_at=minutes(20),
            finished_at=minutes(6000),
            valid_from=minutes(20),
        ),
        node(
            E,
            "dep:start-out",
            ["Deployment"],
            service="svc:a",
            started_at=minutes(-6000),
            valid_from=minutes(21),
        ),
        # An earlier field in the window, a later one outside: in, at the earlier time.
        node(
            E,
            "dep:start-in",
            ["Deployment"],
            service="svc:b",
            started_at=minutes(22),
            valid_from=minutes(-600),
        ),
        # A time that is text: coalesce takes it and no window holds it.
        node(
            E,
            "dep:text",
            ["Deployment"],
            service="svc:a",
            finished_at="2026-03-01T12:30:00Z",
            started_at=minutes(30),
        ),
        # Other zones, at the bounds of the zoned window below.
        node(
            E,
            "dep:zoned",
            ["Deployment"],
            service="svc:b",
            finished_at=datetime(2026, 3, 1, 14, 40, tzinfo=PLUS_TWO),
        ),
        node(
            E,
            "dep:zoned-vf",
            ["Deployment"],
            service="svc:b",
            valid_from=datetime(2026, 3, 1, 15, 0, tzinfo=PLUS_TWO),
        ),
        # Ties on time, ordered by id; one linked by an edge only.
        node(E, "dep:tie-b", ["Deployment"], service="svc:b", finished_at=minutes(50)),
        node(E, "dep:tie-a", ["Deployment"], started_at=minutes(50)),
        # Invisible: another ACL, a retracted record, a hidden service, none.
        *invisible_releases(
            "dep:", {"secret": 51, "retracted": 52, "hidden-svc": 55, "no-svc": 56}
        ),
        # A superseded version, and the version that replaced it.
        node(
            E,
            "dep:moved",
            ["Deployment"],
            service="svc:a",
            finished_at=minutes(53),
            superseded_at=minutes(-1),
        ),
        node(
            E,
            "dep:moved",
            ["Deployment"],
            version=2,
            service="svc:a",
            recorded_at=minutes(-1),
            started_at=minutes(54),
        ),
        # Many in one hour, for the cut.
        *(
            node(
                E,
                f"dep:many-{i:02d}",
                ["Deployment"],
                service="svc:b",
                finished_at=minutes(120 + i),
            )
            for i in range(30)
        ),
        # The neighbour tenant: the same ids and times, readable by its own subject only.
        node(NEIGHBOUR, "svc:a", ["Service"], name="a"),
        node(NEIGHBOUR, "dep:fin", ["Deployment"], service="svc:a", finished_at=minutes(10)),
        node(NEIGHBOUR, "dep:other", ["Deployment"], service="svc:a", started_at=minutes(11)),
    ]
    edges = [
        edge(E, "DEPLOYED_AS", "svc:a", "dep:tie-a"),
        edge(E, "DEPLOYED_TO", "dep:start", "svc:b"),
    ]
    return nodes, edges


# Windows over every edge case, and ones that hold none.
EDGE_WINDOWS = [
    (minutes(0), minutes(60)),
    (minutes(10), minutes(10)),  # one instant
    (minutes(11), minutes(22)),
    (minutes(-700), minutes(700)),
    (minutes(100), minutes(200)),
    # 14:40+02:00 is 12:40Z, 15:00+02:00 is 13:00Z: both bounds held by zoned records.
    (
        datetime(2026, 3, 1, 12, 40, tzinfo=UTC),
        datetime(2026, 3, 1, 13, 0, tzinfo=UTC),
    ),
    (datetime(2030, 1, 1, tzinfo=UTC), datetime(2030, 2, 1, tzinfo=UTC)),
]


# The demo's and the generated tenant's windows over which versions are compared.
DEMO_WINDOWS = [
    (datetime(2026, 7, 1, tzinfo=UTC), datetime(2026, 8, 1, tzinfo=UTC)),
    (datetime(2026, 7, 23, tzinfo=UTC), datetime(2026, 7, 23, 10, tzinfo=UTC)),
    (datetime(1900, 1, 1, tzinfo=UTC), datetime(9999, 1, 1, tzinfo=UTC)),
]
DEMO_KNOWN_ATS = [datetime(2026, 8, 1, tzinfo=UTC), datetime(2026, 7, 23, 12, tzinfo=UTC)]
SYNTH_WINDOWS = [
    (datetime(2026, 1, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC)),
    (datetime(2026, 6, 1, tzinfo=UTC), datetime(2026, 6, 2, tzinfo=UTC)),
    (datetime(1900, 1, 1, tzinfo=UTC), datetime(9999, 1, 1, tzinfo=UTC)),
]


def write_release_graph(driver: neo4j.Driver, *more: dict[str, Any]) -> None:
    """The demo, a generated tenant and the edge cases (and `more` nodes), on an empty graph."""
    wipe_graph(driver)
    apply_schema(driver)
    ingest_bundle(driver, load_bundle(DATASET))
    ingest_bundle(driver, LoadedBundle.from_bundles([("synth", generate_bundle(60, seed=7))]))
    nodes, edges = edge_case_records()
    write_graph(driver, [*nodes, *more], edges)


def window_step(window: tuple[datetime, datetime], limit: int, version: int) -> PlanStep:
    """`deployments_in_window_tenant` at `version` over `window`, cut at `limit`."""
    return PlanStep(
        template_id="deployments_in_window_tenant",
        evidence_type="deployment_time",
        params={"from": window[0].isoformat(), "to": window[1].isoformat()},
        template_version=version,
        limit=limit,
    )


def window_rows(
    ex: TemplateExecutor,
    subject: Subject,
    window: tuple[datetime, datetime],
    limit: int,
    version: int,
    known_at: datetime,
) -> tuple[list[tuple[Any, ...]], bool]:
    """`window_step`'s rows and cut (as `step_rows`)."""
    return step_rows(ex, window_step(window, limit, version), subject, known_at)


def window_ids(
    ex: TemplateExecutor,
    subject: Subject,
    window: tuple[datetime, datetime],
    limit: int,
    version: int,
    known_at: datetime,
) -> list[Any]:
    """The ids of `window_step`'s rows, in order."""
    rows, _ = window_rows(ex, subject, window, limit, version, known_at)
    return [r[0] for r in rows]


def db_hits(plan: Any) -> int:
    """A profiled plan's db hits, summed over its operators."""
    return int(plan.get("dbHits", 0)) + sum(db_hits(c) for c in plan.get("children", []))


def step_rows(
    ex: TemplateExecutor, step: PlanStep, subject: Subject, known_at: datetime
) -> tuple[list[tuple[Any, ...]], bool]:
    """A step's rows as compared between versions (id, version, context), and its cut."""
    result = ex.run(step, subject, known_at)
    rows = [
        (
            r.element.element_id,
            r.element.version,
            json.dumps(r.context.model_dump(mode="json"), sort_keys=True),
        )
        for r in result.rows
    ]
    return rows, result.truncated


def same_rows(
    ex: TemplateExecutor,
    subject: Subject,
    step_of: Callable[[Any, int, int], PlanStep],
    args: Sequence[Any],
    limits: list[int],
    known_ats: list[datetime],
    versions: tuple[int, int] = (3, 4),
) -> set[str]:
    """The new version's rows equal the old one's (`versions`, by default 4 against 3) for
    every argument, limit and known_at: the ids seen."""
    seen: set[str] = set()
    for arg in args:
        for limit in limits:
            for known_at in known_ats:
                old = step_rows(ex, step_of(arg, limit, versions[0]), subject, known_at)
                new = step_rows(ex, step_of(arg, limit, versions[1]), subject, known_at)
                assert new == old, (arg, limit, known_at)
                seen.update(str(i) for i, _, _ in new[0])
    return seen


def fresh_plan(
    ex: TemplateExecutor,
    driver: neo4j.Driver,
    step: PlanStep,
    subject: Subject,
    known_at: datetime,
    how: str = "EXPLAIN",
) -> dict[str, Any]:
    """The plan of `step` (`how`: EXPLAIN, or PROFILE for one with its db hits), planned
    anew: fresh index statistics and no cached plan. In the whole suite an earlier test plans
    the same text over another graph, and one CI run got a plan with seven index scans
    (test_scale_templates does the same)."""
    compiled = ex.compile(step)
    parameters = ex.cypher_parameters(compiled, subject, known_at)
    with driver.session(
        notifications_min_severity=neo4j.NotificationMinimumSeverity.OFF
    ) as session:
        session.run("CALL db.prepareForReplanning()").consume()
        summary = session.run(f"{how} {compiled.text}", parameters).consume()
    plan = summary.profile if how == "PROFILE" else summary.plan
    assert plan is not None
    return plan


def operators(plan: dict[str, Any]) -> list[tuple[str, str]]:
    """A plan's operators, depth first: (operator type, details)."""
    own = (str(plan["operatorType"]), str(plan.get("args", {}).get("Details", "")))
    return [own] + [o for child in plan.get("children", []) for o in operators(child)]
