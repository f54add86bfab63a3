"""Three everyday on-call questions: how long it lasted, is the service ok now, and which
incidents a period had.

Found as a hurried on-call engineer asks them (session 31, brief h31-status):
"how long did the incident last?" answered with the start and the resolution and no
duration; "is payment-api healthy now?" was an entity lookup, `partial` with "the words
'healthy' ask something it does not read"; "list all incidents in July 2026" listed the
incident a text search found (with its errors), "what incidents did we have in June 2026?"
too (a July incident, `complete`), with no period read. The demo records
inc:2026-07-23-payments from 10:02:38 to 10:48 (ACL `incident`: carol may not read it),
PaymentApiHighErrorRate firing on payment-api from 10:03:10 to 10:50, and release
2026.07.23.1 of payment-api rolling out from 09:55:12 to 10:02:00.
"""

from __future__ import annotations

import json

import pytest

BOB = ("--subject", "acme/user:bob", "--json")
CAROL = ("--subject", "acme/user:carol", "--json")
NOON = ("--as-of", "2026-07-23T12:00:00Z")
DURING = ("--as-of", "2026-07-23T10:30:00Z")
LATER = ("--as-of", "2026-07-30T00:00:00Z")
INCIDENT = "inc:2026-07-23-payments"


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


def _required(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [m["description"] for m in doc["missing_evidence"] if m["required"]]


def _run(invoke, question: str, *args: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("investigate", question, *args, "--deadline-seconds", "120")
    assert result.code in (0, 3), result
    return json.loads(result.out)  # type: ignore[no-any-return]


def test_how_long_the_incident_lasted_and_so_far(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    done = _run(invoke, "how long did the incident last?", *BOB, *NOON)
    assert done["status"] == "complete", done["missing_evidence"]
    assert (
        f"Incident {INCIDENT} lasted 45 min 22 s: started 2026-07-23T10:02:38Z, "
        "resolved 2026-07-23T10:48:00Z"
    ) in _statements(done), done["claims"]

    # Not resolved by as_of: how long it has been open, said as "so far".
    open_ = _run(invoke, "what was the duration of the outage?", *BOB, *DURING)
    assert (
        f"Incident {INCIDENT} open for 27 min 22 s so far: started 2026-07-23T10:02:38Z, "
        "not resolved by as_of 2026-07-23T10:30:00Z"
    ) in _statements(open_), open_["claims"]
    assert not any("lasted" in s for s in _statements(open_))

    # Carol may not read the incident: no duration, no start, nothing of it.
    carol = _run(invoke, "how long did the incident last?", *CAROL, *NOON)
    assert INCIDENT not in json.dumps(carol["claims"]) + json.dumps(carol["evidence"])
    assert carol["status"] == "partial", carol


def test_is_the_service_ok_now_says_what_is_open_and_firing(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    during = _run(invoke, "is payment-api healthy now?", *BOB, *DURING)
    assert during["intents"] == ["service_status"], during
    assert during["status"] == "complete", during["missing_evidence"]
    said = _statements(during)
    assert any(
        s.startswith("svc:payment-api at as_of 2026-07-23T10:30:00Z (what the subject may read")
        and s.endswith("1 incident open, 1 alert firing, no release rolling out")
        for s in said
    ), said
    assert (
        "svc:payment-api at as_of 2026-07-23T10:30:00Z: alert alert:PaymentApiHighErrorRate "
        "firing (since 2026-07-23T10:03:10Z)"
    ) in said
    assert any(
        s.startswith(f"svc:payment-api at as_of 2026-07-23T10:30:00Z: incident {INCIDENT} open")
        for s in said
    ), said
    # Never "healthy": the KG has no health record, a gap that is named but not required.
    health = [m for m in during["missing_evidence"] if m["evidence_type"] == "health_check"]
    assert health and not health[0]["required"], during["missing_evidence"]
    assert not any("healthy" in s for s in said)

    after = _run(invoke, "what's the status of payment-api?", *BOB, *NOON)
    assert after["status"] == "complete", after["missing_evidence"]
    assert any(
        s.endswith("no incident open, no alert firing, no release rolling out")
        for s in _statements(after)
    ), after["claims"]

    # The release rolling out at 10:00 (started 09:55:12, finished 10:02:00).
    rolling = _run(invoke, "is payment-api ok?", *BOB, "--as-of", "2026-07-23T10:00:00Z")
    assert any(
        "release" in s and "rolling out (started 2026-07-23T09:55:12Z, not finished by as_of)" in s
        for s in _statements(rolling)
    ), rolling["claims"]

    # Checkout (a one-word name) during the incident; carol may not read the incident.
    checkout = _run(invoke, "any ongoing incidents on checkout?", *BOB, *DURING)
    assert any(
        s.startswith(f"svc:checkout at as_of 2026-07-23T10:30:00Z: incident {INCIDENT} open")
        for s in _statements(checkout)
    ), checkout["claims"]
    carol = _run(invoke, "is payment-api healthy now?", *CAROL, *DURING)
    assert INCIDENT not in json.dumps(carol["claims"]) + json.dumps(carol["evidence"])


def test_any_ongoing_incidents_naming_no_service(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    now = _run(invoke, "any ongoing incidents?", *BOB, *DURING)
    assert now["intents"] == ["incident_list"], now
    assert _statements(now) == [
        f"Incident {INCIDENT} (Payments authorization failures 2026-07-23): started "
        "2026-07-23T10:02:38Z, open at as_of (not resolved by as_of; 27 min 22 s so far); "
        "services affected: svc:checkout, svc:payment-api"
    ], now["claims"]
    none = _run(invoke, "any ongoing incidents?", *BOB, *NOON)
    assert none["status"] == "partial" and _statements(none) == [], none
    assert any("no incident the subject may read was open at as_of" in g for g in _required(none))


def _incidents_bundle() -> str:
    """Two incidents carol may read (ACL internal): one starting at June's last second and
    resolved in July, one starting at July's first instant; svc:ledger-batch affected."""
    record = 'acl: [internal], source_id: src:incident-reports, source_version: "t@1"'
    nodes = [
        f'  - {{id: "svc:ledger-batch", label: Service, name: "ledger-batch", locator: '
        f'"c#svc:ledger-batch", {record}, valid_from: "2025-01-01T00:00:00Z", '
        f'recorded_at: "2026-06-01T00:00:00Z"}}',
    ]
    edges = []
    for inc, start, end in (
        ("inc:june-edge", "2026-06-30T23:59:59Z", "2026-07-01T00:30:00Z"),
        ("inc:july-first", "2026-07-01T00:00:00Z", "2026-07-01T01:00:00Z"),
    ):
        nodes.append(
            f'  - {{id: "{inc}", label: Incident, name: "{inc} batch lag", locator: "i#{inc}", '
            f'{record}, valid_from: "{start}", valid_to: "{end}", recorded_at: "{end}", '
            f'props: {{started_at: "{start}", resolved_at: "{end}"}}}}'
        )
        key = f"AFFECTED_BY|svc:ledger-batch|{inc}"
        edges.append(
            f'  - {{type: AFFECTED_BY, from: "svc:ledger-batch", to: "{inc}", key: "{key}", '
            f'{record}, locator: "i#{key}", valid_from: "{start}", valid_to: "{end}", '
            f'recorded_at: "{end}"}}'
        )
    return "\n".join(["tenant: acme", "nodes:", *nodes, "edges:", *edges]) + "\n"


@pytest.fixture(scope="module")
def more_incidents(demo_graph, tmp_path_factory):  # type: ignore[no-untyped-def]
    from graph_schema.bundle import load_bundle
    from graph_schema.writer import ingest_bundle

    path = tmp_path_factory.mktemp("incidents") / "incidents.yaml"
    path.write_text(_incidents_bundle(), encoding="utf-8")
    ingest_bundle(demo_graph, load_bundle(path))
    return demo_graph


def test_the_incidents_of_a_month_each_with_its_services(  # type: ignore[no-untyped-def]
    more_incidents, cli_env, invoke
) -> None:
    july = _run(invoke, "list all incidents in July 2026", *BOB, *LATER)
    assert july["intents"] == ["incident_list"] and july["status"] == "complete", july
    assert _statements(july) == [
        "Incident inc:june-edge (inc:june-edge batch lag): started 2026-06-30T23:59:59Z, "
        "resolved 2026-07-01T00:30:00Z (lasted 30 min 1 s); services affected: svc:ledger-batch",
        "Incident inc:july-first (inc:july-first batch lag): started 2026-07-01T00:00:00Z, "
        "resolved 2026-07-01T01:00:00Z (lasted 1 h); services affected: svc:ledger-batch",
        f"Incident {INCIDENT} (Payments authorization failures 2026-07-23): started "
        "2026-07-23T10:02:38Z, resolved 2026-07-23T10:48:00Z (lasted 45 min 22 s); services "
        "affected: svc:checkout, svc:payment-api",
    ], july["claims"]
    # The JSON document: one incident_report evidence item per incident, in the pack.
    listed = {e["element_id"] for e in july["evidence"] if e["type"] == "Incident"}
    assert listed == {"inc:june-edge", "inc:july-first", INCIDENT}, july["evidence"]
    assert all(c["intent"] == "incident_list" for c in july["claims"]), july["claims"]

    # An incident starting at the period's last second is in it; one an instant later is not.
    june = _run(invoke, "what incidents did we have in June 2026?", *BOB, *LATER)
    assert [s.split(" (")[0] for s in _statements(june)] == ["Incident inc:june-edge"], june

    # Carol may not read the payments incident: never listed, nor its id anywhere.
    carol = _run(invoke, "list all incidents in July 2026", *CAROL, *LATER)
    assert [s.split(" (")[0] for s in _statements(carol)] == [
        "Incident inc:june-edge",
        "Incident inc:july-first",
    ], carol["claims"]
    assert INCIDENT not in json.dumps(carol)

    # A month with none: partial, the period named.
    may = _run(invoke, "what incidents did we have in May 2026?", *BOB, *LATER)
    assert may["status"] == "partial" and _statements(may) == [], may
    assert any(
        "no incident the subject may read was open from 2026-05-01T00:00:00Z to "
        "2026-05-31T23:59:59Z" in g
        for g in _required(may)
    ), may["missing_evidence"]
