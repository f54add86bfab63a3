"""Template version 2 (`row_times: epoch_micros`) reads exactly the rows of version 1.

Version 2 of every template returns times as integers (cypher_templates/templates/_element.j2),
so the driver hydrates no DateTime; the executor turns them back into aware datetimes. Over
the real demo dataset, every template and option variant gives the same parsed rows and the
same `rows_hash` at both versions; so do records with times before 1970, at the ends of
Python's range, with nanoseconds, zones other than UTC, or values that are not times at all
(another tenant, written here as raw records). Version 1's texts are pinned in
tests/test_registry.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import neo4j
import pytest
from test_canonical import (
    PINNED_DEMO_CLAIM_IDS,
    PINNED_DEMO_EVIDENCE_IDS,
    PINNED_DEMO_PACK_HASH,
    PINNED_DEMO_PACK_HASH_V1,
    PINNED_DEMO_PACK_HASH_V2,
    PINNED_DEMO_PACK_HASH_V3,
    demo_request,
)
from test_templates_graph import edge, node, principal, wipe_graph, write_graph

from cypher_templates.executor import TemplateExecutor, TemplateRow, ToolResult
from cypher_templates.plan import PlanStep
from cypher_templates.registry import Manifest, TemplateRefused, TemplateRegistry, TemplateSpec
from cypher_templates.subject import Subject, load_subject
from graph_schema.bundle import load_bundle
from graph_schema.canonical import epoch_micros
from graph_schema.schema_ddl import apply_schema
from graph_schema.writer import ingest_bundle
from investigator.context_graph import RunRecorder
from investigator.context_graph.chain import rows_hash
from investigator.investigation import InvestigationRequest, investigate
from investigator.replay import replay_run

DATASET = Path(__file__).resolve().parents[1] / "datasets" / "payments-incident"
AFTER = datetime(2026, 8, 1, tzinfo=UTC)
DURING = datetime(2026, 7, 23, 12, 0, tzinfo=UTC)
WIDE = {"from": "1900-01-01T00:00:00Z", "to": "9999-12-31T00:00:00Z"}
JULY = {"from": "2026-07-01T00:00:00Z", "to": "2026-08-01T00:00:00Z"}

# The edge-case tenant: raw records (tests/test_templates_graph.py), not the writer's.
E = "epoch"
YEAR_ONE = datetime(1, 1, 1, tzinfo=UTC)
BEFORE_1970 = datetime(1969, 12, 31, 23, 59, 59, 500_000, tzinfo=UTC)
JUST_BEFORE = datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)
LAST = datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)
PLUS_TWO = timezone(timedelta(hours=2))


def epoch_records() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Times at the edges, in other zones, with nanoseconds (set below) and not times."""
    nodes = [
        principal(E, "user:tester", ["internal"], ["incident_investigation"]),
        node(
            E,
            "svc:old",
            ["Service"],
            name="old",
            recorded_at=BEFORE_1970,
            valid_from=YEAR_ONE,
            valid_to=LAST,
            # props: zoned UTC, another offset, a named zone at offset 0 and not, a date, a
            # list of times, a number and a text that looks like a time
            started_at=BEFORE_1970,
            ended_at=JUST_BEFORE,
            moved_at=datetime(2026, 7, 23, 12, 0, tzinfo=PLUS_TWO),
            day=date(1960, 2, 29),
            seen=[BEFORE_1970, LAST],
            count=7,
            note="2026-07-23T10:00:00Z",
        ),
        node(
            E,
            "svc:hist",
            ["Service"],
            name="hist v1",
            recorded_at=datetime(1950, 1, 1, tzinfo=UTC),
            superseded_at=datetime(1960, 1, 1, tzinfo=UTC),
        ),
        node(
            E,
            "svc:hist",
            ["Service"],
            version=2,
            name="hist v2",
            recorded_at=datetime(1960, 1, 1, tzinfo=UTC),
            superseded_at=LAST,
        ),
        node(E, "inc:x", ["Incident"], name="x", valid_from=BEFORE_1970),
        node(E, "alert:text", ["Alert"], name="text fired"),
        node(E, "alert:zoned", ["Alert"], name="zoned fired"),
        node(E, "alert:none", ["Alert"], name="never fired"),
        node(E, "err:x", ["ErrorCode"], name="x", code="X-1"),
        node(E, "deploy:early", ["Deployment"], service="svc:old", finished_at=BEFORE_1970),
        node(E, "deploy:late", ["Deployment"], service="svc:old", finished_at=LAST),
        node(
            E,
            "deploy:zoned",
            ["Deployment"],
            service="svc:old",
            started_at=datetime(2026, 7, 23, 12, 0, tzinfo=PLUS_TWO),
        ),
        node(E, "change:early", ["ChangeEvent"], at=BEFORE_1970),
        node(E, "change:late", ["ChangeEvent"], valid_from=LAST),
    ]
    edges = [
        edge(E, "AFFECTED_BY", "svc:old", "inc:x", valid_from=BEFORE_1970),
        edge(E, "TRIGGERED", "alert:text", "inc:x", fired_at="2026-07-23T10:00:00Z"),
        edge(
            E,
            "TRIGGERED",
            "alert:zoned",
            "inc:x",
            fired_at=datetime(2026, 7, 23, 12, 0, tzinfo=PLUS_TWO),
        ),
        edge(E, "TRIGGERED", "alert:none", "inc:x"),
        edge(E, "EMITTED", "svc:old", "err:x", first_seen=YEAR_ONE, valid_to=LAST),
        edge(E, "DEPENDS_ON", "svc:old", "svc:hist", dst_version=2, valid_from=BEFORE_1970),
    ]
    return nodes, edges


# Nanoseconds Python cannot hold (both versions keep the microseconds, truncated) and a
# named zone at offset 0 and not, as Cypher stores them.
NANOS = (
    "MATCH (n:KG {tenant: 'epoch', id: 'svc:old'}) "
    "SET n.observed_at = datetime('1969-07-20T20:17:40.123456789Z'), "
    "n.nanos = datetime('1969-07-20T20:17:40.123456789Z'), "
    "n.winter_at = datetime('2026-01-15T10:00:00[Europe/London]'), "
    "n.summer_at = datetime('2026-07-15T10:00:00[Europe/London]')"
)


@pytest.fixture(scope="module")
def ex(driver: neo4j.Driver) -> Iterator[TemplateExecutor]:
    wipe_graph(driver)
    apply_schema(driver)
    ingest_bundle(driver, load_bundle(DATASET))
    write_graph(driver, *epoch_records())
    driver.execute_query(NANOS)
    yield TemplateExecutor(driver)


@pytest.fixture(scope="module")
def alice(ex: TemplateExecutor) -> Subject:
    return load_subject(ex, "acme/user:alice", "incident_investigation")


@pytest.fixture(scope="module")
def tester(ex: TemplateExecutor) -> Subject:
    return load_subject(ex, "epoch/user:tester", "incident_investigation")


def both(
    ex: TemplateExecutor,
    subject: Subject,
    spec: TemplateSpec,
    options: dict[str, str | int],
    params: dict[str, Any],
    known_at: datetime,
) -> list[TemplateRow]:
    """Run one call at versions 1, 2 and 3; assert they read the same; the rows.

    Version 3 differs from version 2 only by its ACL ceiling (the latest record of an element
    decides, for relationships too): on data where no ACL was tightened later it reads the
    same rows (tests/test_visibility_ceiling.py covers the data where it must not)."""
    results: list[ToolResult] = []
    for version in (1, 2, 3):
        step = PlanStep(
            template_id=spec.id,
            template_version=version,
            options=options,
            params=params,
            evidence_type=spec.evidence_types[0],
        )
        results.append(ex.run(step, subject, known_at))
    v1, v2, v3 = results
    where = f"{spec.id} {options} {params} at {known_at.isoformat()}"
    assert (v1.ref, v2.ref, v3.ref) == (f"{spec.id}@1", f"{spec.id}@2", f"{spec.id}@3")
    assert len({v1.template_hash, v2.template_hash, v3.template_hash}) == 3
    assert v3.rows == v2.rows and rows_hash(v3.rows) == rows_hash(v2.rows), where
    assert v2.rows == v1.rows, where
    assert [r.model_dump(mode="json") for r in v2.rows] == [
        r.model_dump(mode="json") for r in v1.rows
    ], where
    assert rows_hash(v2.rows) == rows_hash(v1.rows), where
    assert (v2.truncated, v2.row_count) == (v1.truncated, v1.row_count), where
    return v2.rows


def _anchor(options: dict[str, str | int]) -> list[dict[str, Any]]:
    return {
        "service": [{"anchor_id": "svc:payment-api"}, {"anchor_id": "svc:checkout"}],
        "alert": [
            {"anchor_id": "alert:PaymentApiHighErrorRate"},
            {"anchor_id": "alert:KubePodCrashLooping"},
        ],
        "error_code": [{"anchor_id": "err:PAY-4097"}],
        "runbook": [{"anchor_id": "runbook:payment-recovery@v3"}],
    }[str(options["anchor"])]


def _kind(options: dict[str, str | int]) -> list[dict[str, Any]]:
    if options["kind"] == "node":
        ids = ["inc:2026-07-23-payments", "doc:postmortem-draft-2026-07-23-payments"]
    else:
        ids = [
            "DEPENDS_ON|svc:payment-api|svc:legacy-fraud",
            "OWNS|team:payments-core|svc:payment-api|2025-01-01",
        ]
    return [{"element_id": i} for i in ids]


# The demo dataset's calls per template (parameters may depend on the variant's options).
DEMO_CALLS: dict[str, Callable[[dict[str, str | int]], list[dict[str, Any]]]] = {
    "entity_resolution": lambda _: [
        {"text": t}
        for t in (
            "svc:payment-api",
            "PAY-4097",
            "payment-api",
            "PaymentApiHighErrorRate",
            "2026.07.23.1",  # a release by its version (version 6)
        )
    ],
    "fulltext_search": lambda _: [{"query": "payment"}, {"query": "runbook recovery"}],
    "name_suggestions": lambda _: [{"text": "paymnet"}, {"text": "PaymentApiHighErrrorRate"}],
    "name_prefixes": lambda _: [{"text": "pay"}, {"text": "PaymentApi"}],
    "latest_deployments": lambda _: [
        {"service_id": "svc:payment-api", "to": "2026-12-01T00:00:00Z"},
        {"service_id": "svc:payment-api", "to": "2026-07-21T00:00:00Z"},
    ],
    "latest_deployments_tenant": lambda _: [
        {"to": "2026-12-01T00:00:00Z"},
        {"to": "2026-07-21T00:00:00Z"},
    ],
    "rollouts_under_way": lambda _: [
        {"service_id": "svc:payment-api", "at": "2026-07-23T10:00:00Z"},
        {"service_id": "svc:payment-api", "at": "2026-07-23T10:05:00Z"},
    ],
    "rollouts_under_way_tenant": lambda _: [
        {"at": "2026-07-23T10:00:00Z"},
        {"at": "2026-07-23T10:05:00Z"},
    ],
    "ownership_over_time": lambda _: [
        {"service_id": "svc:payment-api"},
        {"service_id": "svc:payment-db"},
    ],
    "ownership_in_period": lambda _: [
        {"service_id": "svc:payment-api", "to": "2026-12-01T00:00:00Z"},
        {
            "service_id": "svc:payment-api",
            "from": "2026-07-23T00:00:00Z",
            "to": "2026-07-24T12:00:00Z",
        },
    ],
    "ownership_records": lambda _: [
        {"service_id": "svc:payment-api"},
        {"service_id": "svc:payment-db"},
    ],
    "owners_of": lambda _: [
        {"entity_id": "alert:PaymentApiHighErrorRate"},
        {"entity_id": "runbook:payment-recovery@v3"},
    ],
    "owners_of_records": lambda _: [
        {"entity_id": "alert:PaymentApiHighErrorRate"},
        {"entity_id": "runbook:payment-recovery@v3"},
    ],
    "owned_by_team": lambda _: [
        {"team_id": "team:payments-core", "to": "2026-07-23T11:00:00Z"},
        {"team_id": "team:payments-platform", "from": "2026-01-01T00:00:00Z"},
    ],
    "owned_by_team_records": lambda _: [
        {"team_id": "team:payments-core"},
        {"team_id": "team:payments-platform"},
    ],
    "deployments_in_window": lambda _: [
        {"service_id": s, **JULY} for s in ("svc:payment-api", "svc:risk-engine")
    ],
    "deployments_in_window_tenant": lambda _: [JULY],
    "incident_context": lambda _: [{"incident_id": "inc:2026-07-23-payments"}],
    "incidents_at": lambda _: [{"at": "2026-07-23T11:00:00Z"}, {"at": "2026-12-01T00:00:00Z"}],
    "incidents_in_period": lambda _: [
        JULY,
        {"from": "2026-07-23T10:30:00Z", "to": "2026-07-23T10:30:00Z"},
    ],
    "alert_firings_in_period": lambda _: [
        JULY,
        {"from": "2026-07-23T10:30:00Z", "to": "2026-07-23T10:30:00Z"},
    ],
    "traces_linked": lambda _: [
        {"anchor_id": "err:PAY-4097", "to": "2026-07-23T11:00:00Z"},
        {"anchor_id": "svc:payment-api", **JULY},
    ],
    "runbooks_for": _anchor,
    "runbook_version_at": lambda _: [
        {"runbook_id": "runbook:payment-recovery@v3", "at": "2026-07-23T11:00:00Z"},
        {"runbook_id": "runbook:payment-recovery@v4", "at": "2026-12-01T00:00:00Z"},
    ],
    "change_events_in_window": lambda o: [
        {**JULY, "service_id": "svc:risk-engine"} if o["scope"] == "service" else JULY
    ],
    "dependency_neighbourhood": lambda _: [
        {"start_id": i} for i in ("svc:payment-api", "inc:2026-07-23-payments")
    ],
    "documents_about": lambda _: [
        {"entity_id": i}
        for i in ("svc:payment-api", "inc:2026-07-23-payments", "deploy:release-2026.07.23.1")
    ],
    "version_history": _kind,
    "retractions_in_period": lambda o: [
        {**JULY, "service_id": "svc:payment-api"} if o["scope"] == "service" else JULY
    ],
}


def test_every_template_has_demo_calls(ex: TemplateExecutor) -> None:
    assert set(DEMO_CALLS) == {s.id for s in ex.registry.specs()}
    # 4: runbooks_for and entity_resolution (the time a runbook's file, or an alert's rule,
    # went missing from its source's import), latest_deployments (a release in progress) and
    # version_history (a relationship record's latest-ending copy), fulltext_search (which
    # newer record of another id replaced a hit: a renamed runbook file), owned_by_team and
    # owners_of (the kind owned and the owned node's end), deployments_in_window (one order
    # and one limit over both ways to a service's releases), deployments_in_window_tenant (the
    # window sought within the tenant on (tenant, time field)), latest_deployments_tenant (the
    # newest sought backward the same way), dependency_neighbourhood (the row cap counts
    # services reached, and keeps the latest firings).
    # 5: runbooks_for (why a file its import had could not be read), entity_resolution (the
    # rules a runbook is linked to first, the matches counted), fulltext_search (a config key's
    # suffix term), deployments_in_window_tenant (each field's seek cut in index order).
    # 6: deployments_in_window_tenant (each later field sought only up to the cut),
    # entity_resolution (a release found by its version alone, h39).
    assert {s.version for s in ex.registry.specs()} == {1, 2, 3, 4, 5, 6}
    assert {s.id for s in ex.registry.specs() if s.version == 6} == {
        "deployments_in_window_tenant",
        "entity_resolution",
    }
    assert {s.id for s in ex.registry.specs() if s.version == 5} == {
        "runbooks_for",
        "entity_resolution",
        "fulltext_search",
        "deployments_in_window_tenant",
    }
    assert {s.id for s in ex.registry.specs() if s.version == 4} == {
        "runbooks_for",
        "entity_resolution",
        "latest_deployments",
        "version_history",
        "fulltext_search",
        "owned_by_team",
        "owners_of",
        "deployments_in_window",
        "deployments_in_window_tenant",
        "latest_deployments_tenant",
        "dependency_neighbourhood",
    }
    for spec in ex.registry.specs():
        assert spec.row_times == ("datetime" if spec.version == 1 else "epoch_micros")
        assert spec.acl_ceiling == ("latest_record" if spec.version >= 3 else "active_node")


def compared_variants(spec: TemplateSpec) -> list[dict[str, str | int]]:
    """Every variant, but dependency_neighbourhood's longer hops for DEPENDS_ON only: `hops`
    bounds the path's length (`*1..hops`) and nothing else, and each text costs a plan (two,
    with its read-only proof) on a busy two-core machine."""
    return [
        options
        for options in spec.variants()
        if int(options.get("hops", 1)) == 1 or options.get("rel_type") == "DEPENDS_ON"
    ]


@pytest.mark.parametrize("template_id", sorted(DEMO_CALLS))
def test_version_2_reads_the_rows_of_version_1_on_the_demo_dataset(
    ex: TemplateExecutor, alice: Subject, template_id: str
) -> None:
    spec = ex.registry.get(template_id, 2)
    rows = 0
    for options in compared_variants(spec):
        for params in DEMO_CALLS[template_id](options):
            for known_at in (AFTER, DURING):
                rows += len(both(ex, alice, spec, options, params, known_at))
    assert rows > 0


def test_the_demo_rows_carry_every_kind_of_time(ex: TemplateExecutor, alice: Subject) -> None:
    # Not vacuous: the compared rows hold element, context and props times, and nulls.
    incident = both(
        ex,
        alice,
        ex.registry.get("incident_context"),
        {},
        {"incident_id": "inc:2026-07-23-payments"},
        AFTER,
    )
    assert any(isinstance(r.context.get("fired_at"), datetime) for r in incident)
    assert any(isinstance(r.context.get("first_seen"), datetime) for r in incident)
    assert any(r.element.valid_to is not None for r in incident)
    assert any(r.element.observed_at is None for r in incident)
    assert any(isinstance(v, datetime) for r in incident for v in r.element.props.values())
    history = both(
        ex,
        alice,
        ex.registry.get("version_history"),
        {"kind": "node"},
        {"element_id": "inc:2026-07-23-payments"},
        AFTER,
    )
    assert history[0].element.superseded_at == history[0].context["superseded_at"] is not None
    for row in incident + history:
        for value in (row.element.valid_from, row.element.recorded_at):
            assert value is not None and value.utcoffset() == timedelta(0)


def test_times_at_the_edges_and_in_other_zones_read_the_same(
    ex: TemplateExecutor, tester: Subject
) -> None:
    old = both(ex, tester, ex.registry.get("entity_resolution"), {}, {"text": "svc:old"}, AFTER)
    assert len(old) == 1
    element = old[0].element
    assert (element.valid_from, element.valid_to) == (YEAR_ONE, LAST)
    assert element.recorded_at == BEFORE_1970
    assert (
        element.observed_at
        == element.props["nanos"]
        == datetime(1969, 7, 20, 20, 17, 40, 123_456, tzinfo=UTC)
    )
    assert element.superseded_at is None
    props = element.props
    assert props["started_at"] == BEFORE_1970 and props["started_at"].utcoffset() == timedelta(0)
    assert props["ended_at"] == JUST_BEFORE
    # Times not in UTC keep their zone (returned as stored, as version 1 does).
    assert props["moved_at"].utcoffset() == timedelta(hours=2)
    assert props["summer_at"].utcoffset() == timedelta(hours=1)
    assert props["winter_at"] == datetime(2026, 1, 15, 10, 0, tzinfo=UTC)
    assert props["day"] == date(1960, 2, 29)
    assert props["seen"] == [BEFORE_1970, LAST]
    assert (props["count"], props["note"]) == (7, "2026-07-23T10:00:00Z")


def test_context_times_of_every_kind_read_the_same(ex: TemplateExecutor, tester: Subject) -> None:
    reg = ex.registry
    incident = both(ex, tester, reg.get("incident_context"), {}, {"incident_id": "inc:x"}, AFTER)
    fired = {
        r.context["alert"]: r.context.get("fired_at") for r in incident if r.context.get("alert")
    }
    # A text stays text; another zone keeps its offset; no fired_at falls back to valid_from
    # (null here).
    assert fired == {
        "alert:text": "2026-07-23T10:00:00Z",
        "alert:zoned": datetime(2026, 7, 23, 10, 0, tzinfo=UTC),
        "alert:none": None,
    }
    assert fired["alert:zoned"].utcoffset() == timedelta(hours=2)  # type: ignore[union-attr]
    assert [r.context["first_seen"] for r in incident if r.context.get("error_code")] == [YEAR_ONE]
    deployed = both(
        ex, tester, reg.get("deployments_in_window"), {}, {"service_id": "svc:old", **WIDE}, AFTER
    )
    assert [r.context["deployed_at"] for r in deployed] == [
        BEFORE_1970,
        datetime(2026, 7, 23, 10, 0, tzinfo=UTC),
    ]
    assert deployed[1].context["deployed_at"].utcoffset() == timedelta(hours=2)
    late = both(
        ex,
        tester,
        reg.get("deployments_in_window"),
        {},
        {
            "service_id": "svc:old",
            "from": "9999-01-01T00:00:00Z",
            "to": "9999-12-31T23:59:59.999999Z",
        },
        AFTER,
    )
    assert [r.context["deployed_at"] for r in late] == [LAST]
    changes = both(
        ex,
        tester,
        reg.get("change_events_in_window"),
        {"scope": "all"},
        {"from": "1900-01-01T00:00:00Z", "to": "9999-12-31T23:59:59.999999Z"},
        AFTER,
    )
    assert [r.context["at"] for r in changes] == [BEFORE_1970, LAST]
    for kind, element_id in (("node", "svc:hist"), ("relationship", "DEPENDS_ON|svc:old|svc:hist")):
        history = both(
            ex,
            tester,
            reg.get("version_history"),
            {"kind": kind},
            {"element_id": element_id},
            AFTER,
        )
        assert history
        for row in history:
            assert row.element.superseded_at == row.context.get("superseded_at")
    hist = both(
        ex, tester, reg.get("version_history"), {"kind": "node"}, {"element_id": "svc:hist"}, AFTER
    )
    assert [r.element.superseded_at for r in hist] == [datetime(1960, 1, 1, tzinfo=UTC), LAST]
    path = both(
        ex,
        tester,
        reg.get("dependency_neighbourhood"),
        {"rel_type": "DEPENDS_ON", "direction": "out", "hops": 1},
        {"start_id": "svc:old"},
        AFTER,
    )
    assert [r.element.valid_from for r in path] == [BEFORE_1970]


def test_a_run_recorded_at_version_1_replays_verified_and_reads_as_version_2(
    ex: TemplateExecutor,
) -> None:
    # Version 1 as recorded runs know it: the allowlist before version 2 existed (and
    # version 2 before version 3 did).
    only_v1 = TemplateRegistry(
        Manifest(templates=tuple(s for s in ex.registry.specs() if s.version == 1))
    )
    up_to_v2 = TemplateRegistry(
        Manifest(templates=tuple(s for s in ex.registry.specs() if s.version <= 2))
    )
    up_to_v3 = TemplateRegistry(
        Manifest(templates=tuple(s for s in ex.registry.specs() if s.version <= 3))
    )
    request = InvestigationRequest.model_validate(
        {
            "question": "Was the 10:02 release of payment-api related to the PAY-4097 errors? "
            "Who owned the service at that moment? Which runbook version applied?",
            "service_id": "svc:payment-api",
            "subject_id": "acme/user:alice",
            "purpose": "incident_investigation",
            "as_of": datetime(2026, 7, 23, 10, 3, tzinfo=UTC),
            "known_at": AFTER,
        }
    )
    runs = {
        version: investigate(
            request,
            driver=ex.driver,
            executor=TemplateExecutor(ex.driver, registry),
            recorder=RunRecorder(ex.driver),
        )
        for version, registry in ((1, only_v1), (2, up_to_v2), (3, up_to_v3), (4, ex.registry))
    }
    for version, run in runs.items():
        # 4 (the newest): entity_resolution@6 and others at 4 and 5 beside the other
        # templates' 3.
        expected = {3, 4, 5, 6} if version == 4 else {version}
        assert {tc.template_version for tc in run.tool_calls} == expected
        report = replay_run(ex.driver, run.run_id)  # the packaged allowlist, both versions
        assert report.verified and not report.drift, (version, report.drift)
    old, new = runs[1], runs[2]
    assert len(old.tool_calls) == len(new.tool_calls) > 0
    assert [tc.rows_hash for tc in new.tool_calls] == [tc.rows_hash for tc in old.tool_calls]
    assert [e.evidence_id for e in new.evidence] == [e.evidence_id for e in old.evidence]
    assert [c.claim_id for c in new.claims] == [c.claim_id for c in old.claims]
    assert new.claims and new.evidence


def test_the_demo_pack_differs_between_versions_only_by_its_tools(ex: TemplateExecutor) -> None:
    """tests/test_canonical.py's demo investigation: the same evidence and claims at every
    version; the pack names its tools `id@version`, so each version gives its own pinned
    pack."""
    registries = {
        version: TemplateRegistry(
            Manifest(templates=tuple(s for s in ex.registry.specs() if s.version <= version))
        )
        for version in (1, 2, 3)
    }
    request = demo_request()
    packs = {}
    for version, registry in (*registries.items(), (4, ex.registry)):
        result = investigate(
            request, driver=ex.driver, executor=TemplateExecutor(ex.driver, registry)
        )
        # The newest: entity_resolution@6, fulltext_search@5 and deployments_in_window@4
        # beside the other templates' 3
        # (the demo reads no runbooks_for).
        expected = {3, 4, 5, 6} if version == 4 else {version}
        assert {tc.template_version for tc in result.tool_calls} == expected
        assert sorted(e.evidence_id for e in result.evidence) == PINNED_DEMO_EVIDENCE_IDS
        assert sorted(c.claim_id for c in result.claims) == PINNED_DEMO_CLAIM_IDS
        packs[version] = result.pack_hash
    assert packs[1] == PINNED_DEMO_PACK_HASH_V1
    assert packs[2] == PINNED_DEMO_PACK_HASH_V2  # its `tools` name `@2`
    assert packs[3] == PINNED_DEMO_PACK_HASH_V3  # its `tools` name `@3`
    # `entity_resolution@6`, `deployments_in_window@4`, `dependency_neighbourhood@4`
    assert packs[4] == PINNED_DEMO_PACK_HASH


def test_a_query_reading_rows_as_another_version_is_refused(
    ex: TemplateExecutor, alice: Subject
) -> None:
    step = PlanStep(
        template_id="ownership_over_time",
        evidence_type="ownership",
        params={"service_id": "svc:payment-api"},
    )
    compiled = ex.compile(step)
    assert (compiled.template_version, compiled.row_times) == (3, "epoch_micros")
    wrong = compiled.model_copy(update={"row_times": "datetime"})
    with pytest.raises(TemplateRefused, match="does not match the allowlisted rendering"):
        ex.run(wrong, alice, AFTER)


@pytest.mark.parametrize(
    "value",
    [YEAR_ONE, BEFORE_1970, datetime(1970, 1, 1, tzinfo=UTC), LAST, datetime.now(UTC)],
)
def test_micros_are_the_inverse_of_epoch_micros(value: datetime) -> None:
    from cypher_templates.executor import _from_micros

    assert _from_micros(epoch_micros(value)) == value
    assert _from_micros(None) is None
