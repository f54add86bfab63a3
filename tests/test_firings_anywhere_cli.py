"""Which alerts fired, naming no service: "what alerts fired yesterday?", "any alerts firing
now?", "what fired during the incident?".

Found as an on-call engineer asks first (session 31's closing note; brief h32-firings): with
no service named, firings were read only from services a text search happened to find, so
"what alerts fired yesterday?" was `partial` with "the question names no service ... no alert
firing was looked for", "any alerts firing now?" the same, "what fired during the incident?"
an incident lookup, and "which alerts fired on 2026-07-23?" `complete` with payment-api's
firing alone (checkout's 03:12 KubePodCrashLooping left out). Now the tenant's firings of the
period are read (`alert_firings_in_period`, tenant/ACL/purpose inside the Cypher).

The demo records PaymentApiHighErrorRate on payment-api from 10:03:10 to 10:50 and
KubePodCrashLooping on checkout from 03:12 to 03:40 (both ACL `internal`). This module adds
two firings on ledger carol may not read: LedgerLagHigh (its alert ACL `incident`) at 05:00
and KubePodCrashLooping (its FIRED_ON record ACL `incident`) at 06:00, both 2026-07-23.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import neo4j
import pytest

BOB = ("--subject", "acme/user:bob", "--json")
CAROL = ("--subject", "acme/user:carol", "--json")
PAYMENT = "Alert alert:PaymentApiHighErrorRate fired on svc:payment-api at 2026-07-23T10:03:10Z"
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
RECORD = 'source_id: src:observability, source_version: "obs@2026-07-23"'


def _fired_on(alert: str, service: str, at: str, end: str, acl: str) -> str:
    key = f"FIRED_ON|{alert}|{service}|{at}"
    return (
        f'  - {{type: FIRED_ON, from: "{alert}", to: "{service}", key: "{key}", acl: [{acl}], '
        f'{RECORD}, locator: "observability/acme#{key}", valid_from: "{at}", '
        f'valid_to: "{end}", recorded_at: "{at}", props: {{fired_at: "{at}"}}}}'
    )


HIDDEN = "\n".join(
    [
        "tenant: acme",
        "nodes:",
        '  - {id: "alert:LedgerLagHigh", label: Alert, name: LedgerLagHigh, acl: [incident], '
        f'{RECORD}, locator: "r#LedgerLagHigh", valid_from: "2025-01-01T00:00:00Z", '
        'recorded_at: "2026-07-01T00:00:00Z"}',
        "edges:",
        _fired_on(
            "alert:LedgerLagHigh", "svc:ledger", "2026-07-23T05:00:00Z", "2026-07-23T05:30:00Z",
            "internal",
        ),
        _fired_on(
            "alert:KubePodCrashLooping", "svc:ledger", "2026-07-23T06:00:00Z",
            "2026-07-23T06:20:00Z", "incident",
        ),
    ]
)  # fmt: skip


@pytest.fixture(scope="module")
def graph(demo_graph: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    from graph_schema.bundle import load_bundle
    from graph_schema.writer import ingest_bundle

    path = tmp_path_factory.mktemp("firings") / "hidden.yaml"
    path.write_text(HIDDEN + "\n", encoding="utf-8")
    ingest_bundle(demo_graph, load_bundle(path))
    yield


def _run(invoke, question: str, *args: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("investigate", question, *args, "--deadline-seconds", "120")
    assert result.code in (0, 3), result
    return json.loads(result.out)  # type: ignore[no-any-return]


def _firings(doc: dict) -> list[str]:  # type: ignore[type-arg]
    # Firings are listed in time order, ties by alert id (h33b-firings).
    return [c["statement"] for c in doc["claims"] if c["statement"].startswith("Alert ")]


def _required(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [m["description"] for m in doc["missing_evidence"] if m["required"]]


def _list_reads(doc: dict) -> list[dict]:  # type: ignore[type-arg]
    return [c for c in doc["tool_calls"] if c["template_id"] == "alert_firings_in_period"]


def test_yesterday_lists_every_firing_and_carol_sees_only_hers(  # type: ignore[no-untyped-def]
    graph, cli_env, invoke
) -> None:
    asked = ("what alerts fired yesterday?", "--as-of", "2026-07-24T09:00:00Z")
    bob = _run(invoke, *asked[:1], *BOB, *asked[1:])
    assert bob["intents"] == ["alert_firing"], bob
    assert bob["status"] == "complete", bob["missing_evidence"]
    assert _firings(bob) == [
        CHECKOUT,
        LEDGER_LAG,
        LEDGER_CRASH,
        f"{PAYMENT} (until 2026-07-23T10:50:00Z)",
    ], bob["claims"]
    assert any("'yesterday' read as 2026-07-23 (UTC)" in n for n in bob["time_notes"]), bob
    assert [(c["params"], c["row_count"]) for c in _list_reads(bob)] == [
        ({"from": "2026-07-23T00:00:00Z", "to": "2026-07-23T23:59:59Z"}, 4)
    ]

    # Recorded and replayed: the same reads give the same answer.
    replay = invoke("replay", bob["run_id"], "--subject", "acme/user:bob", "--json")
    assert replay.code == 0 and json.loads(replay.out)["verified"], replay

    # Carol may read neither ledger firing (the alert's ACL, the FIRED_ON record's ACL): not
    # listed, not counted by the read, not named anywhere, and no gap hints at them.
    carol = _run(invoke, *asked[:1], *CAROL, *asked[1:])
    assert carol["status"] == "complete", carol["missing_evidence"]
    assert _firings(carol) == [CHECKOUT, f"{PAYMENT} (until 2026-07-23T10:50:00Z)"]
    assert [c["row_count"] for c in _list_reads(carol)] == [2], carol["tool_calls"]
    whole = json.dumps(carol)
    assert "LedgerLagHigh" not in whole and "svc:ledger|2026-07-23T06" not in whole
    assert _required(carol) == [], carol["missing_evidence"]

    # Hurried: "alerts yesterday?" (no verb) asks the same (before: an entity lookup).
    hurried = _run(invoke, "alerts yesterday?", *BOB, *asked[1:])
    assert hurried["intents"] == ["alert_firing"], hurried
    assert _firings(hurried) == _firings(bob), hurried["claims"]

    # No time named: every firing by as_of, and the Time line says so; a time it cannot
    # place ("the other day") keeps its own line, not "no time named".
    every = _run(invoke, "which alerts fired?", *BOB, *asked[1:])
    assert _firings(every) == _firings(bob), every["claims"]
    assert (
        "no time named: the answer lists the alert firings by as_of 2026-07-24T09:00:00Z, of "
        "every service the subject may read, latest first up to the read's cap"
    ) in every["time_notes"], every["time_notes"]
    night = _run(invoke, "what paged us the other day?", *BOB, *asked[1:])
    assert night["unresolved_time_words"] == ["the other day"], night
    assert not any(n.startswith("no time named") for n in night["time_notes"]), night

    # A service named keeps its own read: payment-api's firing alone.
    named = _run(invoke, "which alerts fired on payment-api yesterday?", *BOB, *asked[1:])
    assert _firings(named) == [f"{PAYMENT} (until 2026-07-23T10:50:00Z)"], named["claims"]
    assert _list_reads(named) == []


def test_firing_now_before_at_and_after_the_demo_firing(  # type: ignore[no-untyped-def]
    graph, cli_env, invoke
) -> None:
    question = "any alerts firing now?"
    before = _run(invoke, question, *BOB, "--as-of", "2026-07-23T10:00:00Z")
    assert before["status"] == "partial" and _firings(before) == [], before["claims"]
    assert _required(before) == [
        "no firing recorded at as_of 2026-07-23T10:00:00Z of an alert the subject may read "
        "on a service it may read (as recorded by known_at)"
    ], before["missing_evidence"]
    assert any("'now' is taken as as_of 2026-07-23T10:00:00Z" in n for n in before["time_notes"])

    at = _run(invoke, question, *BOB, "--as-of", "2026-07-23T10:03:10Z")
    assert at["status"] == "complete", at["missing_evidence"]
    assert _firings(at) == [
        "Alert alert:PaymentApiHighErrorRate firing on svc:payment-api at as_of "
        "2026-07-23T10:03:10Z: since 2026-07-23T10:03:10Z (still firing at as_of)"
    ], at["claims"]

    # At its end (10:50, valid_to) it no longer fires; the day's list names its end.
    ended = _run(invoke, "what's firing?", *BOB, "--as-of", "2026-07-23T10:50:00Z")
    assert ended["status"] == "partial" and _firings(ended) == [], ended["claims"]
    after = _run(invoke, "which alerts fired today?", *BOB, "--as-of", "2026-07-23T11:00:00Z")
    assert f"{PAYMENT} (until 2026-07-23T10:50:00Z)" in _firings(after), after["claims"]
    assert CHECKOUT in _firings(after)


def test_during_the_incident_a_written_day_and_an_empty_month(  # type: ignore[no-untyped-def]
    graph, cli_env, invoke
) -> None:
    noon = ("--as-of", "2026-07-23T12:00:00Z")
    during = _run(invoke, "what fired during the incident?", *BOB, *noon)
    assert "alert_firing" in during["intents"], during
    assert _firings(during) == [f"{PAYMENT} (until 2026-07-23T10:50:00Z)"], during["claims"]
    assert any(
        "'during the incident' is taken as the period from 2026-07-23T10:02:38Z to "
        "2026-07-23T10:48:00Z" in n
        for n in during["time_notes"]
    ), during["time_notes"]

    # Before: payment-api's firing alone (the service a text search found), `complete`.
    day = _run(invoke, "which alerts fired on 2026-07-23?", *BOB, *noon)
    assert day["status"] == "complete", day["missing_evidence"]
    assert _firings(day) == [
        CHECKOUT,
        LEDGER_LAG,
        LEDGER_CRASH,
        f"{PAYMENT} (until 2026-07-23T10:50:00Z)",
    ], day["claims"]

    # Carol may not read the incident: its window is not placed, and the gap says so
    # without naming it (before: "the question names no service ...").
    carol = _run(invoke, "what fired during the incident?", *CAROL, *noon)
    assert _firings(carol) == [] and "inc:2026-07-23-payments" not in json.dumps(carol)
    assert (
        "the time its words name ('during the incident') was not placed: no such event the "
        "subject may read by as_of 2026-07-23T12:00:00Z, so no alert firing was looked for: "
        'ask with a period ("which alerts fired on 2026-07-23?") or name a service'
    ) in _required(carol), carol["missing_evidence"]

    # A day after as_of: nothing read, and no firing of another day listed instead.
    later = _run(invoke, "which alerts fired on 2026-08-02?", *BOB, *noon)
    assert later["status"] == "partial" and _firings(later) == [], later["claims"]
    assert _required(later) == [
        "the time asked ('on 2026-08-02') is after as_of 2026-07-23T12:00:00Z: no firing in "
        "it can be recorded by then"
    ], later["missing_evidence"]

    june = _run(invoke, "which alerts fired in June 2026?", *BOB, *noon)
    assert june["status"] == "partial" and _firings(june) == [], june["claims"]
    assert _required(june) == [
        "no firing recorded from 2026-06-01T00:00:00Z to 2026-06-30T23:59:59Z ('in June "
        "2026') of an alert the subject may read on a service it may read (as recorded by "
        "known_at)"
    ], june["missing_evidence"]


def test_a_list_cut_at_its_cap_says_more_than_n(  # type: ignore[no-untyped-def]
    graph, demo_graph, cli_env, invoke, tmp_path
) -> None:
    from graph_schema.bundle import load_bundle
    from graph_schema.writer import ingest_bundle

    def at(i: int, second: str) -> str:
        return f"2026-07-20T{2 + i // 60:02d}:{i % 60:02d}:{second}Z"

    edges = [
        _fired_on("alert:KubePodCrashLooping", "svc:ledger", at(i, "00"), at(i, "30"), "internal")
        for i in range(101)
    ]
    path = tmp_path / "flood.yaml"
    path.write_text("\n".join(["tenant: acme", "edges:", *edges]) + "\n", encoding="utf-8")
    ingest_bundle(demo_graph, load_bundle(path))
    flood = _run(
        invoke, "what alerts fired on 2026-07-20?", *BOB, "--as-of", "2026-07-23T12:00:00Z"
    )
    assert flood["status"] == "partial", flood["missing_evidence"]
    assert (
        "more than 100 firings from 2026-07-20T00:00:00Z to 2026-07-20T23:59:59Z ('on "
        "2026-07-20'): the read kept the latest 100 (by firing time), earlier firings are not "
        "listed; ask for a shorter period"
    ) in _required(flood), flood["missing_evidence"]
    # The latest 100 kept: the first firing (02:00) is not listed, the last (03:40) is.
    said = _firings(flood)
    assert len(said) == 100 and "2026-07-20T02:00:00Z" not in " ".join(said)
    assert any("2026-07-20T03:40:00Z" in s for s in said)
