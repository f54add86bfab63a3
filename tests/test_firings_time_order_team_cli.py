"""Alert firing lists in time order, hurried firing questions, a written instant's Time line,
and the firings of a team (brief h33b-firings; session 32's closing note).

Before: a firing list was ordered by statement (by alert: ledger's 06:00 KubePodCrashLooping
before its 05:00 LedgerLagHigh); "alerts firing on checkout" (no leading word) was no alert
question (`partial`, no claim); "which alerts fired for team:payments-core?" ignored the team
and listed every firing by as_of; "what was firing at 2026-07-23T10:30:00Z?" said
"'2026-07-23T10:30:00Z' is taken as 2026-07-23T10:30:00Z".

The demo records PaymentApiHighErrorRate on payment-api from 10:03:10 to 10:50 and
KubePodCrashLooping on checkout from 03:12 to 03:40 (2026-07-23); payments-core owns
payment-api until 2026-07-24 (payments-platform from then) and ledger. This module adds two
firings on ledger: LedgerLagHigh at 05:00 (its alert ACL `incident`: carol may not read it)
and KubePodCrashLooping at 06:00.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import neo4j
import pytest

BOB = ("--subject", "acme/user:bob", "--json")
CAROL = ("--subject", "acme/user:carol", "--json")
MALLORY = ("--subject", "globex/user:mallory", "--json")
NOON = ("--as-of", "2026-07-23T12:00:00Z")
LATER = ("--as-of", "2026-07-25T12:00:00Z")
PAYMENT = (
    "Alert alert:PaymentApiHighErrorRate fired on svc:payment-api at 2026-07-23T10:03:10Z "
    "(until 2026-07-23T10:50:00Z)"
)
CHECKOUT = (
    "Alert alert:KubePodCrashLooping fired on svc:checkout at 2026-07-23T03:12:00Z "
    "(until 2026-07-23T03:40:00Z)"
)
LEDGER_LAG = (
    "Alert alert:LedgerLagHigh fired on svc:ledger at 2026-07-23T05:00:00Z "
    "(until 2026-07-23T05:30:00Z)"
)
LEDGER_CRASH = (
    "Alert alert:KubePodCrashLooping fired on svc:ledger at 2026-07-23T06:00:00Z "
    "(until 2026-07-23T06:20:00Z)"
)
CORE_API = (
    "team:payments-core owned svc:payment-api then "
    "(valid 2025-01-01T00:00:00Z to 2026-07-24T00:00:00Z)"
)
CORE_LEDGER = "team:payments-core owned svc:ledger then (valid 2025-01-01T00:00:00Z to open)"
RECORD = 'source_id: src:observability, source_version: "obs@2026-07-23"'


def _fired_on(alert: str, service: str, at: str, end: str) -> str:
    key = f"FIRED_ON|{alert}|{service}|{at}"
    return (
        f'  - {{type: FIRED_ON, from: "{alert}", to: "{service}", key: "{key}", acl: [internal], '
        f'{RECORD}, locator: "observability/acme#{key}", valid_from: "{at}", '
        f'valid_to: "{end}", recorded_at: "{at}", props: {{fired_at: "{at}"}}}}'
    )


LEDGER = "\n".join(
    [
        "tenant: acme",
        "nodes:",
        '  - {id: "alert:LedgerLagHigh", label: Alert, name: LedgerLagHigh, acl: [incident], '
        f'{RECORD}, locator: "r#LedgerLagHigh", valid_from: "2025-01-01T00:00:00Z", '
        'recorded_at: "2026-07-01T00:00:00Z"}',
        "edges:",
        _fired_on(
            "alert:LedgerLagHigh", "svc:ledger", "2026-07-23T05:00:00Z", "2026-07-23T05:30:00Z"
        ),
        _fired_on(
            "alert:KubePodCrashLooping", "svc:ledger", "2026-07-23T06:00:00Z",
            "2026-07-23T06:20:00Z",
        ),
    ]
)  # fmt: skip


@pytest.fixture(scope="module")
def graph(demo_graph: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    from graph_schema.bundle import load_bundle
    from graph_schema.writer import ingest_bundle

    path = tmp_path_factory.mktemp("firings-order") / "ledger.yaml"
    path.write_text(LEDGER + "\n", encoding="utf-8")
    ingest_bundle(demo_graph, load_bundle(path))
    yield


def _run(invoke, question: str, *args: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("investigate", question, *args, "--deadline-seconds", "120")
    assert result.code in (0, 3), result
    return json.loads(result.out)  # type: ignore[no-any-return]


def _firings(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"] if c["statement"].startswith("Alert ")]


def _required(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [m["description"] for m in doc["missing_evidence"] if m["required"]]


def test_a_firing_list_reads_in_time_order(graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    day = _run(invoke, "which alerts fired on 2026-07-23?", *BOB, *NOON)
    assert day["status"] == "complete", day["missing_evidence"]
    # By firing time (05:00 before 06:00), not by statement (KubePodCrashLooping first).
    assert _firings(day) == [CHECKOUT, LEDGER_LAG, LEDGER_CRASH, PAYMENT], day["claims"]

    # Before the ledger firings: checkout's alone; at 05:00 LedgerLagHigh joins; after
    # 06:00 both, in time order.
    early = _run(
        invoke, "which alerts fired on 2026-07-23?", *BOB, "--as-of", "2026-07-23T04:59:59Z"
    )
    assert _firings(early) == [CHECKOUT], early["claims"]
    at = _run(invoke, "which alerts fired on 2026-07-23?", *BOB, "--as-of", "2026-07-23T05:00:00Z")
    assert [s.split(" (")[0] for s in _firings(at)] == [
        CHECKOUT.split(" (")[0],
        LEDGER_LAG.split(" (")[0],
    ], at["claims"]

    # One service's list too: ledger's two in time order.
    ledger = _run(invoke, "which alerts fired on svc:ledger?", *BOB, *NOON)
    assert _firings(ledger) == [LEDGER_LAG, LEDGER_CRASH], ledger["claims"]

    # Carol may not read LedgerLagHigh: the rest, in the same order, and no hint of it.
    carol = _run(invoke, "which alerts fired on 2026-07-23?", *CAROL, *NOON)
    assert _firings(carol) == [CHECKOUT, LEDGER_CRASH, PAYMENT], carol["claims"]
    assert "LedgerLagHigh" not in json.dumps(carol)


def test_hurried_firing_questions_read_as_which_alerts_are_firing(  # type: ignore[no-untyped-def]
    graph, cli_env, invoke
) -> None:
    asked = _run(invoke, "which alerts are firing on checkout?", *BOB, *NOON)
    assert asked["intents"] == ["alert_firing"] and _firings(asked) == [CHECKOUT], asked
    for question in ("alerts firing on checkout", "anything firing on checkout?"):
        hurried = _run(invoke, question, *BOB, *NOON)
        assert hurried["intents"] == ["alert_firing"], (question, hurried["intents"])
        assert hurried["status"] == asked["status"], (question, hurried["missing_evidence"])
        assert _firings(hurried) == _firings(asked), (question, hurried["claims"])
    now = _run(invoke, "alerts on payment-api now", *BOB, *NOON)
    assert now["intents"] == ["alert_firing"] and _firings(now) == [PAYMENT], now["claims"]


def test_a_written_instant_is_said_once(graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _run(invoke, "what was firing at 2026-07-23T10:30:00Z?", *BOB, *NOON)
    assert doc["status"] == "complete", doc["missing_evidence"]
    assert _firings(doc) == [
        "Alert alert:PaymentApiHighErrorRate firing on svc:payment-api at 2026-07-23T10:30:00Z: "
        "since 2026-07-23T10:03:10Z (until 2026-07-23T10:50:00Z)"
    ], doc["claims"]
    assert doc["time_notes"] == [
        "2026-07-23T10:30:00Z (the time written): the answer lists the alert firings firing "
        "then (begun by it, not ended by it), of every service the subject may read"
    ], doc["time_notes"]


def test_a_teams_firings_are_those_on_services_it_owned_then(  # type: ignore[no-untyped-def]
    graph, cli_env, invoke
) -> None:
    question = "which alerts fired for team:payments-core?"
    core = _run(invoke, question, *BOB, *LATER)
    assert "alert_firing" in core["intents"], core["intents"]
    assert core["status"] == "complete", core["missing_evidence"]
    # payment-api's firing (payments-core owned it until 07-24) and ledger's, in time order;
    # checkout's (sre-platform) is not the team's.
    assert _firings(core) == [
        f"{LEDGER_LAG}; {CORE_LEDGER}",
        f"{LEDGER_CRASH}; {CORE_LEDGER}",
        f"{PAYMENT}; {CORE_API}",
    ], core["claims"]
    assert "svc:checkout" not in " ".join(_firings(core))

    # The team that owns payment-api at as_of did not own it when it fired: none is its.
    platform = _run(invoke, "which alerts fired for team:payments-platform?", *BOB, *LATER)
    assert platform["status"] == "partial" and _firings(platform) == [], platform["claims"]
    assert _required(platform) == [
        "no firing recorded by as_of 2026-07-25T12:00:00Z of an alert the subject may read on "
        "a service team:payments-platform owned at the firing's time, in the period asked "
        "(the firings of svc:payment-api read)"
    ], platform["missing_evidence"]

    # Before any ledger firing: none yet; the day asked keeps the day's.
    before = _run(invoke, question, *BOB, "--as-of", "2026-07-23T04:00:00Z")
    assert _firings(before) == [] and before["status"] == "partial", before["claims"]
    named = _run(invoke, "which alerts fired for the Payments Core team?", *BOB, *NOON)
    assert _firings(named) == _firings(core), named["claims"]

    # Carol: LedgerLagHigh is not hers to read; the rest is listed and it is named nowhere.
    carol = _run(invoke, question, *CAROL, *LATER)
    assert _firings(carol) == [f"{LEDGER_CRASH}; {CORE_LEDGER}", f"{PAYMENT}; {CORE_API}"]
    assert "LedgerLagHigh" not in json.dumps(carol)

    # Words matching two teams ("payments") or none: no firing listed, never every firing.
    vague = _run(invoke, "which alerts fired for the payments team?", *BOB, *LATER)
    assert vague["status"] == "partial" and _firings(vague) == [], vague["claims"]
    assert (
        "no team named 'payments' is recorded in the records this subject may read: what it "
        "owned is not known"
    ) in _required(vague), vague["missing_evidence"]

    # Mallory (globex) reads no acme team nor firing.
    mallory = _run(invoke, question, *MALLORY, *LATER)
    assert _firings(mallory) == [] and mallory["status"] == "partial", mallory["claims"]
    whole = json.dumps(mallory)
    assert "svc:payment-api" not in whole and "PaymentApiHighErrorRate" not in whole


def test_a_team_with_more_services_than_read_names_those_unread(  # type: ignore[no-untyped-def]
    graph, demo_graph, cli_env, invoke, tmp_path
) -> None:
    from graph_schema.bundle import load_bundle
    from graph_schema.writer import ingest_bundle

    # sre-platform owns checkout and api-gateway; here also ledger, payment-db, risk-engine.
    def owns(service: str) -> str:
        key = f"OWNS|team:sre-platform|{service}|test"
        return (
            f'  - {{type: OWNS, from: team:sre-platform, to: "{service}", key: "{key}", '
            'acl: [internal], source_id: src:service-catalog, source_version: "catalog@test", '
            f'locator: "catalog/acme.yaml#{key}", valid_from: "2025-01-01T00:00:00Z", '
            'recorded_at: "2026-01-05T09:00:00Z"}'
        )

    edges = [owns(s) for s in ("svc:ledger", "svc:payment-db", "svc:risk-engine")]
    path = tmp_path / "sre.yaml"
    path.write_text("\n".join(["tenant: acme", "edges:", *edges]) + "\n", encoding="utf-8")
    ingest_bundle(demo_graph, load_bundle(path))
    doc = _run(invoke, "which alerts fired for team:sre-platform?", *BOB, *NOON)
    assert doc["status"] == "partial", doc["missing_evidence"]
    # The first three services (by id) read: api-gateway, checkout, ledger; in time order.
    said = [s.split(";")[0] for s in _firings(doc)]
    assert said == [CHECKOUT, LEDGER_LAG, LEDGER_CRASH], doc["claims"]
    assert (
        "the firings of 2 more service(s) team:sre-platform owned in the period asked were not "
        "read (svc:payment-db, svc:risk-engine; at most 3 services' firings are read for a "
        'team): ask for each ("which alerts fired on svc:payment-db?")'
    ) in _required(doc), doc["missing_evidence"]
