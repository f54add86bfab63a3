"""What happened in a period, naming nothing: "what happened yesterday?", "what went on on
2026-07-23?", "timeline of yesterday", 昨天发生了什么？ (brief h33b-period).

Before, each was `partial`: an entity lookup of the words, "no matching entity" and "the
question's words 'happened yesterday' ask something it does not read", though "which
incidents were open yesterday?", "what alerts fired yesterday?" and "what changed
yesterday?" each answered alone. Now the three reads are made together (the planner's
incident list, firings anywhere and period changes) and the answer is the tenant's events of
the period the subject may read, in time order, each bound to its evidence.

The demo records on 2026-07-23: KubePodCrashLooping on checkout at 03:12, release
2026.07.23.1 of payment-api finished at 10:02:00, the risk rule publication at 10:02:21, the
incident from 10:02:38 to 10:48 and PaymentApiHighErrorRate on payment-api at 10:03:10.
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


def _run(invoke, question: str, *args: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("investigate", question, *args, "--deadline-seconds", "200")
    assert result.code in (0, 3), result
    return json.loads(result.out)  # type: ignore[no-any-return]


def _events(doc: dict) -> list[str]:  # type: ignore[type-arg]
    """The day's events the claims state, in the answer's order."""
    out = []
    for claim in doc["claims"]:
        assert claim["evidence_ids"], claim  # bound to its evidence
        out += [e for e in DAY if claim["statement"].startswith(e)]
    return out


def _required(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [m["description"] for m in doc["missing_evidence"] if m["required"]]


def test_yesterday_is_the_periods_events_in_time_order(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    bob = _run(invoke, "what happened yesterday?", *BOB, *AS_OF)
    assert sorted(bob["intents"]) == EVENTS, bob["intents"]
    assert bob["status"] == "complete", (bob["stop_reason"], bob["missing_evidence"])
    assert _events(bob) == DAY, [c["statement"] for c in bob["claims"]]
    assert any(
        n.startswith("'yesterday' read as 2026-07-23 (UTC), the day before as_of's day: "
                     "2026-07-23T00:00:00Z to 2026-07-23T23:59:59Z")
        for n in bob["time_notes"]
    ), bob["time_notes"]  # fmt: skip
    assert "no matching entity" not in json.dumps(bob)
    reads = {c["template_id"]: c["params"] for c in bob["tool_calls"]}
    day = {"from": "2026-07-23T00:00:00Z", "to": "2026-07-23T23:59:59Z"}
    assert reads["incidents_in_period"] == day and reads["alert_firings_in_period"] == day

    # The same day written, in Chinese, or asked as a timeline: the same events.
    for asked in ("what went on on 2026-07-23?", "昨天发生了什么？", "timeline of yesterday"):
        doc = _run(invoke, asked, *BOB, *AS_OF)
        assert sorted(doc["intents"]) == EVENTS, (asked, doc["intents"])
        assert _events(doc) == DAY, (asked, [c["statement"] for c in doc["claims"]])

    # Recorded and replayed: the same reads give the same answer.
    replay = invoke("replay", bob["run_id"], "--subject", "acme/user:bob", "--json")
    assert replay.code == 0 and json.loads(replay.out)["verified"], replay


def test_a_period_before_and_after_the_incident_says_it_is_empty(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    week = _run(invoke, "what happened last week?", *BOB, *AS_OF)
    assert sorted(week["intents"]) == EVENTS, week["intents"]
    assert week["status"] == "partial" and week["claims"] == [], week["claims"]
    span = "from 2026-07-13T00:00:00Z to 2026-07-19T23:59:59Z ('last week')"
    gaps = _required(week)
    assert any("no incident the subject may read was open " + span in g for g in gaps), gaps
    assert any("no firing recorded " + span in g for g in gaps), gaps
    assert any(span in m["description"] and "change" in m["description"]
               for m in week["missing_evidence"]), week["missing_evidence"]  # fmt: skip

    # The day before, written: its incidents and firings read over that day, and said so.
    before = _run(invoke, "what happened on 2026-07-22?", *BOB, *AS_OF)
    assert not set(_events(before)) & set(DAY), before["claims"]
    day = "from 2026-07-22T00:00:00Z to 2026-07-22T23:59:59Z"
    assert any(
        g.startswith(f"no incident the subject may read was open {day} ('on 2026-07-22')")
        for g in _required(before)
    ), before["missing_evidence"]

    # After: the day after the incident, up to as_of, holds none of its events.
    today = _run(invoke, "what happened today?", *BOB, *AS_OF)
    assert sorted(today["intents"]) == EVENTS, today["intents"]
    assert today["status"] == "partial" and _events(today) == [], today["claims"]
    assert any("2026-07-24T00:00:00Z to 2026-07-24T09:00:00Z" in g for g in _required(today))

    # Asked in the morning of the incident's day, before it: the checkout firing alone.
    morning = _run(invoke, "what happened today?", *BOB, "--as-of", "2026-07-23T10:00:00Z")
    assert _events(morning) == [CHECKOUT], morning["claims"]
    assert any("no incident the subject may read was open" in g for g in _required(morning))


def test_known_at_before_the_records_and_other_subjects(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # Known at 10:02:10: the release is recorded (10:02:05), the change (10:02:30), the
    # incident and the payment-api firing not yet.
    early = _run(
        invoke, "what happened yesterday?", *BOB, *AS_OF, "--known-at", "2026-07-23T10:02:10Z"
    )
    assert INCIDENT not in _events(early) and PAYMENT not in _events(early), early["claims"]
    assert RELEASE in _events(early) and CHANGE not in _events(early), early["claims"]

    carol = _run(invoke, "what happened yesterday?", *CAROL, *AS_OF)
    assert sorted(carol["intents"]) == EVENTS, carol["intents"]
    assert set(_events(carol)) <= set(DAY)
    assert "no matching entity" not in json.dumps(carol)

    # Another tenant: globex's own release of that day, none of acme's events or names.
    mallory = _run(invoke, "what happened yesterday?", *MALLORY, *AS_OF)
    assert [c["statement"].split(",")[0] for c in mallory["claims"]] == [
        "Release deploy:globex-payment-api-2026.07.23.7 finished at 2026-07-23T10:01:00Z"
    ], mallory["claims"]
    whole = json.dumps(mallory)
    assert not re.search(r"svc:payment-api|svc:checkout|PaymentApiHighErrorRate|risk-rules", whole)


def test_a_period_naming_a_service_reads_that_service(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # Session 34 (h34-period-service): the service's events of the period, not the
    # tenant's (tests/test_period_service_cli.py); before, an entity lookup of the service.
    named = _run(invoke, "what happened to payment-api yesterday?", *BOB, *AS_OF)
    assert sorted(named["intents"]) == EVENTS, named["intents"]
    assert not any(c["template_id"] == "alert_firings_in_period" for c in named["tool_calls"])
