"""Which alerts fired, and when: the FIRED_ON records (alert -> service) are the answer.

Found by the lead as an on-call engineer asks it: "which alerts fired on payment-api?" and
"when did PaymentApiHighErrorRate fire?" were read as incident lookups and answered
`complete` with the incident, its errors and its affected services, "Missing evidence: none",
and no alert or firing time at all; "what alert fired on checkout?" also took "alert fired" as
a time to place. The demo records PaymentApiHighErrorRate on payment-api from 10:03:10 to
10:50 (recorded 10:03:12) and KubePodCrashLooping on checkout from 03:12 to 03:40.
"""

from __future__ import annotations

import json

BOB = ("--subject", "acme/user:bob", "--json")
NOON = ("--as-of", "2026-07-23T12:00:00Z")
PAYMENT_ALERT = (
    "Alert alert:PaymentApiHighErrorRate fired on svc:payment-api at 2026-07-23T10:03:10Z"
)


def _firings(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"] if c["statement"].startswith("Alert ")]


def _required_gaps(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [m["description"] for m in doc["missing_evidence"] if m["required"]]


def test_the_alerts_that_fired_on_a_service_and_when_a_named_alert_fired(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    fired = json.loads(invoke("investigate", "which alerts fired on payment-api?", *BOB, *NOON).out)
    assert fired["status"] == "complete", fired["missing_evidence"]
    assert _firings(fired) == [f"{PAYMENT_ALERT} (until 2026-07-23T10:50:00Z)"], fired["claims"]
    assert fired["intents"] == ["alert_firing"]
    replay = invoke("replay", fired["run_id"], "--subject", "acme/user:bob", "--json")
    assert replay.code == 0 and json.loads(replay.out)["verified"], replay

    # "what alert fired on X?" asks for the alert: no time to place, the other service's alert.
    checkout = json.loads(invoke("investigate", "What alert fired on checkout?", *BOB, *NOON).out)
    assert _firings(checkout) == [
        "Alert alert:KubePodCrashLooping fired on svc:checkout at 2026-07-23T03:12:00Z "
        "(until 2026-07-23T03:40:00Z)"
    ], checkout["claims"]
    assert checkout["time_notes"] == [] and checkout["unresolved_time_words"] == [], checkout

    named = json.loads(
        invoke("investigate", "When did PaymentApiHighErrorRate fire?", *BOB, *NOON).out
    )
    assert _firings(named) == [f"{PAYMENT_ALERT} (until 2026-07-23T10:50:00Z)"], named["claims"]
    # The incident and its errors are not the answer to "which alerts fired".
    assert not any("Incident " in c["statement"] for c in fired["claims"] + named["claims"])


def test_before_during_and_after_a_firing_and_as_known_then(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    question = "Did any alert fire on payment-api?"
    before = json.loads(
        invoke("investigate", question, *BOB, "--as-of", "2026-07-23T10:03:00Z").out
    )
    assert before["status"] == "partial" and _firings(before) == [], before["claims"]
    assert any("no alert recorded as firing" in g for g in _required_gaps(before)), before

    during = json.loads(
        invoke("investigate", question, *BOB, "--as-of", "2026-07-23T10:20:00Z").out
    )
    assert _firings(during) == [f"{PAYMENT_ALERT} (still firing at as_of)"], during["claims"]

    # Recorded at 10:03:12: as known at 10:03:11, nothing had been recorded yet.
    unknown = json.loads(
        invoke("investigate", question, *BOB, "--as-of", "2026-07-23T10:20:00Z",
               "--known-at", "2026-07-23T10:03:11Z").out
    )  # fmt: skip
    assert unknown["status"] == "partial" and _firings(unknown) == [], unknown["claims"]


def test_a_period_with_no_firing_another_tenant_and_no_service_named(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    june = json.loads(
        invoke("investigate", "Which alerts fired on payment-api in June 2026?", *BOB, *NOON).out
    )
    assert june["status"] == "partial" and _firings(june) == [], june["claims"]
    assert any("2026-06-01T00:00:00Z to 2026-06-30T23:59:59Z" in g for g in _required_gaps(june))

    mallory = invoke("investigate", "Which alerts fired on payment-api?", "--subject",
                     "globex/user:mallory", "--json", *NOON)  # fmt: skip
    assert "PaymentApiHighErrorRate" not in mallory.out + mallory.err
    assert json.loads(mallory.out)["status"] == "partial"

    # No service named: every firing the subject may read by as_of (alert_firings_in_period;
    # before session 32, a "names no service" gap and no firing).
    unnamed = json.loads(invoke("investigate", "Which alerts fired?", *BOB, *NOON).out)
    assert unnamed["status"] == "complete", unnamed["missing_evidence"]
    assert _firings(unnamed) == [
        "Alert alert:KubePodCrashLooping fired on svc:checkout at 2026-07-23T03:12:00Z "
        "(until 2026-07-23T03:40:00Z)",
        f"{PAYMENT_ALERT} (until 2026-07-23T10:50:00Z)",
    ], unnamed["claims"]
    # The owner of the alert that fired is still an ownership question.
    owner = json.loads(
        invoke("investigate", "Who owns the alert that fired on checkout?", *BOB, *NOON).out
    )
    assert any(
        "team:sre-platform OWNS alert:KubePodCrashLooping" in c["statement"]
        for c in owner["claims"]
    ), owner["claims"]
    assert _firings(owner) == []


def _firing(alert: str, service: str, minute: int) -> str:
    at = f"2026-07-20T{minute // 60:02d}:{minute % 60:02d}:00Z"
    end = f"2026-07-20T{minute // 60:02d}:{minute % 60:02d}:30Z"
    key = f"FIRED_ON|alert:{alert}|svc:{service}|{at}"
    return (
        f'  - {{type: FIRED_ON, from: "alert:{alert}", to: "svc:{service}", key: "{key}", '
        f'acl: [internal], source_id: src:observability, source_version: "obs@2026-07-20", '
        f'locator: "observability/acme#{key}", valid_from: "{at}", valid_to: "{end}", '
        f'recorded_at: "2026-07-21T00:00:00Z", props: {{fired_at: "{at}"}}}}'
    )


def _noisy_bundle() -> str:
    """svc:noisy with 7 firings of alert:NoisyFlap; svc:flood with 120 of alert:FloodFlap."""
    record = (
        'acl: [internal], source_id: src:observability, source_version: "obs@2026-07-20", '
        'valid_from: "2025-01-01T00:00:00Z", recorded_at: "2026-07-01T00:00:00Z"'
    )
    nodes = [
        f'  - {{id: "svc:{n}", label: Service, name: "{n}", locator: "c#svc:{n}", {record}}}'
        for n in ("noisy", "flood")
    ] + [
        f'  - {{id: "alert:{a}", label: Alert, name: "{a}", locator: "r#{a}", {record}}}'
        for a in ("NoisyFlap", "FloodFlap")
    ]
    edges = [_firing("NoisyFlap", "noisy", 60 + 5 * i) for i in range(7)]
    edges += [_firing("FloodFlap", "flood", 120 + i) for i in range(120)]
    return "\n".join(["tenant: acme", "nodes:", *nodes, "edges:", *edges]) + "\n"


def test_every_firing_is_listed_and_a_read_cut_at_its_cap_says_so(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, tmp_path
) -> None:
    from graph_schema.bundle import load_bundle
    from graph_schema.writer import ingest_bundle

    path = tmp_path / "noisy.yaml"
    path.write_text(_noisy_bundle(), encoding="utf-8")
    ingest_bundle(demo_graph, load_bundle(path))
    # Seven firings of one alert: all seven, in time order (before, five: the gate's top_k).
    noisy = json.loads(invoke("investigate", "Which alerts fired on noisy?", *BOB, *NOON).out)
    assert noisy["status"] == "complete", noisy["missing_evidence"]
    times = [s.split(" at ")[1][:20] for s in _firings(noisy)]
    assert times == [f"2026-07-20T01:{5 * i:02d}:00Z" for i in range(7)], _firings(noisy)
    # 120 firings: the read keeps the latest 100 (dependency_neighbourhood 4), and says so.
    flood = json.loads(invoke("investigate", "Which alerts fired on flood?", *BOB, *NOON).out)
    assert flood["status"] == "partial", flood["missing_evidence"]
    assert (
        "the FIRED_ON read of svc:flood kept the latest 100 firings (by firing time): earlier "
        "firings are not listed"
    ) in _required_gaps(flood), flood


def test_time_words_before_or_after_an_event_bound_the_firings(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # Before: every firing by as_of was listed whatever the words said (the 10:03:10 firing
    # as "the day before the incident"), "after the release" was a cause question with a
    # verdict, and the first error read to place the incident was claimed beside them.
    day = json.loads(
        invoke("investigate", "Which alerts fired on payment-api the day before the incident?",
               *BOB).out
    )  # fmt: skip
    assert day["status"] == "partial" and day["claims"] == [], day["claims"]
    assert "2026-07-22T10:02:38Z to 2026-07-23T10:02:37Z" in " ".join(day["time_notes"])
    assert any("2026-07-22T10:02:38Z to 2026-07-23T10:02:37Z" in g for g in _required_gaps(day))

    before = json.loads(
        invoke("investigate", "Which alerts fired on checkout before the incident?", *BOB).out
    )
    assert [c["statement"] for c in before["claims"]] == [
        "Alert alert:KubePodCrashLooping fired on svc:checkout at 2026-07-23T03:12:00Z "
        "(until 2026-07-23T03:40:00Z)"
    ], before["claims"]
    none_before = json.loads(
        invoke("investigate", "Which alerts fired on payment-api before the incident?", *BOB).out
    )
    assert none_before["status"] == "partial" and none_before["claims"] == []

    after = json.loads(
        invoke(
            "investigate", "Which alerts fired on payment-api after the release?", *BOB, *NOON
        ).out
    )
    assert after["intents"] == ["alert_firing", "error_timeline"] and after["verdict"] is None
    assert [c["statement"] for c in after["claims"]] == [
        f"{PAYMENT_ALERT} (until 2026-07-23T10:50:00Z)"
    ], after["claims"]
