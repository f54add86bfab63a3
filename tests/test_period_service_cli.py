"""What happened to one service in a period: "what happened to payment-api yesterday?",
"anything on payment-db yesterday?", "payment-api timeline for 2026-07-23" (brief
h34-period-service); and a written day as an incident list's period ("which incidents were
open on 2026-07-22?").

Before, a period naming a service was an entity lookup of the service, `partial`, with "the
question's words 'happened yesterday' ask something it does not read"; "which incidents were
open on 2026-07-22?" read every incident by as_of and listed the 07-23 incident; an empty
period's change gap said "the services asked about" when none was named; carol's period
answer showed the rubric's bare "no incident report" beside the precise incident gap.

The demo records on 2026-07-23: KubePodCrashLooping on checkout at 03:12, release
2026.07.23.1 of payment-api finished at 10:02:00, the risk rule publication at 10:02:21, the
incident (payment-api, checkout) from 10:02:38 to 10:48 and PaymentApiHighErrorRate on
payment-api at 10:03:10. Nothing is recorded of payment-db that day.
"""

from __future__ import annotations

import json
import re

AS_OF = ("--as-of", "2026-07-24T09:00:00Z")
BOB = ("--subject", "acme/user:bob", "--json")
CAROL = ("--subject", "acme/user:carol", "--json")
MALLORY = ("--subject", "globex/user:mallory", "--json")
EVENTS = ["alert_firing", "change_history", "incident_list"]
CHECKOUT = "Alert alert:KubePodCrashLooping fired on svc:checkout at 2026-07-23T03:12:00Z"
RELEASE = "Release deploy:release-2026.07.23.1 finished at 2026-07-23T10:02:00Z"
CHANGE = "Change risk rule publication RR-2026-07-23a (change:risk-rules-RR-2026-07-23a) happened"
INCIDENT = "Incident inc:2026-07-23-payments (Payments authorization failures 2026-07-23)"
PAYMENT = "Alert alert:PaymentApiHighErrorRate fired on svc:payment-api at 2026-07-23T10:03:10Z"
DAY = [CHECKOUT, RELEASE, CHANGE, INCIDENT, PAYMENT]
YESTERDAY = "from 2026-07-23T00:00:00Z to 2026-07-23T23:59:59Z ('yesterday')"


def _run(invoke, question: str, *args: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("investigate", question, *args, "--deadline-seconds", "200")
    assert result.code in (0, 3), result
    return json.loads(result.out)  # type: ignore[no-any-return]


def _events(doc: dict) -> list[str]:  # type: ignore[type-arg]
    """The day's events the claims state, in the answer's order, each bound to evidence."""
    out = []
    for claim in doc["claims"]:
        assert claim["evidence_ids"], claim
        out += [e for e in DAY if claim["statement"].startswith(e)]
    return out


def _gaps(doc: dict, etype: str) -> list[str]:  # type: ignore[type-arg]
    return [m["description"] for m in doc["missing_evidence"] if m["evidence_type"] == etype]


def test_a_services_day_is_its_own_events_in_time_order(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    bob = _run(invoke, "what happened to payment-api yesterday?", *BOB, *AS_OF)
    assert sorted(bob["intents"]) == EVENTS, bob["intents"]
    assert bob["status"] == "complete", (bob["stop_reason"], bob["missing_evidence"])
    # Checkout's 03:12 firing is another service's event.
    assert _events(bob) == [RELEASE, CHANGE, INCIDENT, PAYMENT], [
        c["statement"] for c in bob["claims"]
    ]
    assert "ask something it does not read" not in json.dumps(bob)
    # The service's own firings, not every firing of the tenant.
    assert not any(c["template_id"] == "alert_firings_in_period" for c in bob["tool_calls"])

    # The day written, as a timeline of the service: the same events.
    written = _run(invoke, "payment-api timeline for 2026-07-23", *BOB, *AS_OF)
    assert sorted(written["intents"]) == EVENTS, written["intents"]
    assert _events(written) == [RELEASE, CHANGE, INCIDENT, PAYMENT], written["claims"]

    # Checkout: its firing and the incident it was affected by; payment-api's release and
    # firing are not its events.
    checkout = _run(invoke, "what happened on checkout yesterday?", *BOB, *AS_OF)
    assert _events(checkout) == [CHECKOUT, CHANGE, INCIDENT], checkout["claims"]

    replay = invoke("replay", bob["run_id"], "--subject", "acme/user:bob", "--json")
    assert replay.code == 0 and json.loads(replay.out)["verified"], replay


def test_a_service_with_nothing_in_the_period_says_each_part_read_and_empty(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    db = _run(invoke, "anything on payment-db yesterday?", *BOB, *AS_OF)
    assert sorted(db["intents"]) == EVENTS, db["intents"]
    assert db["status"] == "partial"
    assert not {RELEASE, INCIDENT, PAYMENT, CHECKOUT} & set(_events(db)), db["claims"]
    assert _gaps(db, "incident_report") == [
        f"no incident affecting svc:payment-db the subject may read was open {YESTERDAY} "
        "(as recorded by known_at)"
    ], db["missing_evidence"]
    assert _gaps(db, "alert_firing") == [
        f"no alert the subject may read fired on svc:payment-db {YESTERDAY} (no FIRED_ON "
        "record of it, as recorded by known_at)"
    ], db["missing_evidence"]

    # Before the incident: last week holds none of payment-api's events, one gap each.
    week = _run(invoke, "what happened to payment-api last week?", *BOB, *AS_OF)
    assert week["claims"] == [] and week["status"] == "partial", week["claims"]
    span = "from 2026-07-13T00:00:00Z to 2026-07-19T23:59:59Z ('last week')"
    incident_gaps = _gaps(week, "incident_report")
    assert len(incident_gaps) == 1 and span in incident_gaps[0], incident_gaps
    assert "affecting svc:payment-api" in incident_gaps[0], incident_gaps
    assert any(span in g for g in _gaps(week, "alert_firing")), week["missing_evidence"]
    assert any(span in g for g in _gaps(week, "change_event")), week["missing_evidence"]

    # After it: today, up to as_of, none of them either.
    today = _run(invoke, "what happened to payment-api today?", *BOB, *AS_OF)
    assert _events(today) == [] and today["status"] == "partial", today["claims"]

    # Known before the incident's records: the release only (recorded 10:02:05).
    early = _run(
        invoke,
        "what happened to payment-api yesterday?",
        *BOB,
        *AS_OF,
        "--known-at",
        "2026-07-23T10:02:10Z",
    )
    assert RELEASE in _events(early), early["claims"]
    assert INCIDENT not in _events(early) and PAYMENT not in _events(early), early["claims"]


def test_other_subjects_get_one_precise_gap_and_their_own_tenant(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # Carol has no `incident` label: the release and the firing; the incident part is one
    # gap, the precise one (not beside the rubric's bare "no incident report").
    carol = _run(invoke, "what happened to payment-api yesterday?", *CAROL, *AS_OF)
    assert sorted(carol["intents"]) == EVENTS, carol["intents"]
    assert INCIDENT not in _events(carol) and RELEASE in _events(carol), carol["claims"]
    assert _gaps(carol, "incident_report") == [
        f"no incident affecting svc:payment-api the subject may read was open {YESTERDAY} "
        "(as recorded by known_at)"
    ], carol["missing_evidence"]

    # Another tenant: globex's own payment-api release, nothing of acme.
    mallory = _run(invoke, "what happened to payment-api yesterday?", *MALLORY, *AS_OF)
    assert [c["statement"].split(",")[0] for c in mallory["claims"]] == [
        "Release deploy:globex-payment-api-2026.07.23.7 finished at 2026-07-23T10:01:00Z"
    ], mallory["claims"]
    assert not re.search(
        r"svc:payment-api\b|svc:checkout|PaymentApiHighErrorRate|risk-rules|inc:2026-07-23",
        json.dumps(mallory),
    )


def test_a_written_day_is_the_period_of_an_incident_list(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    before = _run(invoke, "which incidents were open on 2026-07-22?", *BOB, *AS_OF)
    day = {"from": "2026-07-22T00:00:00Z", "to": "2026-07-22T23:59:59Z"}
    reads = [c["params"] for c in before["tool_calls"] if c["template_id"] == "incidents_in_period"]
    assert reads == [day], reads
    assert INCIDENT not in _events(before), before["claims"]
    assert _gaps(before, "incident_report") == [
        "no incident the subject may read was open from 2026-07-22T00:00:00Z to "
        "2026-07-22T23:59:59Z ('on 2026-07-22') (as recorded by known_at)"
    ], before["missing_evidence"]

    during = _run(invoke, "which incidents were open on 2026-07-23?", *BOB, *AS_OF)
    assert _events(during) == [INCIDENT], during["claims"]

    # Naming nothing, an empty period's change gap says whose releases were read.
    week = _run(invoke, "what happened last week?", *BOB, *AS_OF)
    assert _gaps(week, "change_event") == [
        "no release of any service of the tenant and no other change the subject may read is "
        "recorded from 2026-07-13T00:00:00Z to 2026-07-19T23:59:59Z ('last week')"
    ], week["missing_evidence"]
    # One incident gap, the precise one: before, the rubric's bare "no incident report" too.
    assert _gaps(week, "incident_report") == [
        "no incident the subject may read was open from 2026-07-13T00:00:00Z to "
        "2026-07-19T23:59:59Z ('last week') (as recorded by known_at)"
    ], week["missing_evidence"]
