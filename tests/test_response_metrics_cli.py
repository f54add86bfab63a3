"""Postmortem metrics and the incident's state, read from the records (session 33, brief
h33-metrics; explorer e32-qa finding R and minors m4, m12, m13).

Asked after the fact, "how long did it take to detect the incident?" answered the incident's
duration (45 min 22 s), `complete`; "how long until the alert fired?" said no alert firing is
found (PaymentApiHighErrorRate FIRED_ON payment-api from 10:03:10 is readable by bob); "when
was the incident upgraded to SEV1?" gave no time (SEV2 recorded 10:05, corrected to SEV1 at
10:20: two records of the incident); "how many PAY-4097 errors were there?" never stated the
EMITTED record's count 18734; the status gap said "no incident open and no alert firing" under
"1 incident open"; "is it safe to deploy payment-api now?" during the incident listed releases
and said nothing of the open incident. The demo: first PAY-4097 error 10:02:38 (last seen
10:47:52, count 18734), the alert fired 10:03:10, the incident resolved 10:48:00.
"""

from __future__ import annotations

import json

BOB = ("--subject", "acme/user:bob", "--json")
CAROL = ("--subject", "acme/user:carol", "--json")
AFTER = ("--as-of", "2026-07-26T12:00:00Z")
INCIDENT = "inc:2026-07-23-payments"
DETECT = (
    "(detect = first error -> first alert firing on a service the incident affected): "
    "PAY-4097 first seen on svc:payment-api at 2026-07-23T10:02:38Z"
)


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


def _gaps(doc: dict, etype: str) -> list[dict]:  # type: ignore[type-arg]
    return [m for m in doc["missing_evidence"] if m["evidence_type"] == etype]


def _run(invoke, question: str, *args: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("investigate", question, *args, "--deadline-seconds", "180")
    assert result.code in (0, 3), result
    return json.loads(result.out)  # type: ignore[no-any-return]


def test_time_to_detect_is_first_error_to_alert_not_the_incident_duration(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    done = _run(invoke, "how long did it take to detect the incident?", *BOB, *AFTER)
    said = _statements(done)
    assert (
        f"Time to detect of incident {INCIDENT}: 32 s {DETECT}, alert PaymentApiHighErrorRate "
        "fired on svc:payment-api at 2026-07-23T10:03:10Z"
    ) in said, said
    assert not any("45 min 22 s" in s or "lasted" in s for s in said), said
    assert done["status"] == "complete", done["missing_evidence"]
    # Each end bound to its record: the EMITTED record and the FIRED_ON record.
    by_id = {e["evidence_id"]: e["element_id"] for e in done["evidence"]}
    claim = next(c for c in done["claims"] if c["statement"].startswith("Time to detect"))
    cited = sorted(by_id[i] for i in claim["evidence_ids"])
    assert cited[0] == "EMITTED|svc:payment-api|err:PAY-4097", cited
    assert cited[1].startswith("FIRED_ON|alert:PaymentApiHighErrorRate|svc:payment-api|"), cited

    # "The alert" is the one that fired on the incident's service: no "no alert firing".
    alert = _run(invoke, "how long until the alert fired?", *BOB, *AFTER)
    assert any(
        s.startswith(f"Time to detect of incident {INCIDENT}: 32 s ") for s in _statements(alert)
    ), alert["claims"]
    assert "no alert firing is found" not in json.dumps(alert), alert
    assert alert["status"] == "complete", alert["missing_evidence"]


def test_response_times_as_of_before_at_and_after_each_instant(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    question = "what were the time to detect and the time to resolve?"
    # Before the first error: nothing to measure, never a made-up time.
    before = _run(invoke, question, *BOB, "--as-of", "2026-07-23T10:02:00Z")
    assert not any(s.startswith("Time to") for s in _statements(before)), before["claims"]
    assert before["status"] == "partial", before
    # After the first error, before the alert: not detected yet, 22 s so far.
    early = _run(invoke, question, *BOB, "--as-of", "2026-07-23T10:03:00Z")
    said = _statements(early)
    assert any(
        s.startswith(f"Time to detect of incident {INCIDENT}: no alert firing on svc:payment-api")
        and "not detected by an alert 22 s after it" in s
        for s in said
    ), said
    assert not any("10:03:10" in s for s in said), said
    # At the firing: 32 s; the incident still open (27 min 22 s so far at 10:30).
    at = _run(invoke, question, *BOB, "--as-of", "2026-07-23T10:03:10Z")
    assert any(
        s.startswith(f"Time to detect of incident {INCIDENT}: 32 s ") for s in _statements(at)
    )
    during = _run(invoke, question, *BOB, "--as-of", "2026-07-23T10:30:00Z")
    assert (
        f"Time to resolve of incident {INCIDENT}: not resolved by as_of 2026-07-23T10:30:00Z: "
        "open 27 min 22 s so far since the first error (PAY-4097 first seen on svc:payment-api "
        "at 2026-07-23T10:02:38Z) (resolve = first error -> the incident record's resolution)"
    ) in _statements(during), during["claims"]
    assert not any("10:48" in s for s in _statements(during)), during["claims"]
    # After the resolution: both measured.
    after = _run(invoke, question, *BOB, *AFTER)
    assert (
        f"Time to resolve of incident {INCIDENT}: 45 min 22 s (resolve = first error -> the "
        "incident record's resolution): PAY-4097 first seen on svc:payment-api at "
        "2026-07-23T10:02:38Z, incident resolved at 2026-07-23T10:48:00Z"
    ) in _statements(after), after["claims"]
    assert after["status"] == "complete", after["missing_evidence"]
    # No acknowledgement record exists: asked, a required gap, never a time.
    ack = _run(invoke, "how long did it take to acknowledge the incident?", *BOB, *AFTER)
    gap = _gaps(ack, "acknowledgement")
    assert gap and gap[0]["required"], ack["missing_evidence"]
    assert ack["status"] == "partial", ack


def test_carol_gets_time_to_detect_without_the_incident(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # Carol may not read the incident (ACL incident): the errors and the firing she may read.
    carol = _run(invoke, "how long did it take to detect PAY-4097?", *CAROL, *AFTER)
    assert INCIDENT not in json.dumps(carol["claims"]), carol["claims"]
    said = _statements(carol)
    assert (
        "Time to detect: 32 s (detect = first error -> first alert firing on the service that "
        "emitted it): PAY-4097 first seen on svc:payment-api at 2026-07-23T10:02:38Z, alert "
        "PaymentApiHighErrorRate fired on svc:payment-api at 2026-07-23T10:03:10Z"
    ) in said, said


def test_severity_history_compares_the_incident_records(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    upgraded = _run(invoke, "when was the incident upgraded to SEV1?", *BOB, *AFTER)
    assert (
        f"Severity of incident {INCIDENT} as recorded: SEV2 (record version 1, recorded "
        "2026-07-23T10:05:00Z), then SEV1 (record version 2, recorded 2026-07-23T10:20:00Z); "
        "changed SEV2 -> SEV1 at 2026-07-23T10:20:00Z (when the record stating it was made: the "
        "records state no time of the decision itself)"
    ) in _statements(upgraded), upgraded["claims"]
    # Known at 10:10, before the correction: SEV2 only, no upgrade recorded then.
    known = _run(
        invoke,
        "when was severity raised to SEV1?",
        *BOB,
        "--as-of",
        "2026-07-23T10:10:00Z",
        "--known-at",
        "2026-07-23T10:10:00Z",
    )
    assert (
        f"Severity of incident {INCIDENT} as recorded: SEV2 (record version 1, recorded "
        "2026-07-23T10:05:00Z); no change of severity is recorded by known_at "
        "2026-07-23T10:10:00Z; no record of it states SEV1 by known_at 2026-07-23T10:10:00Z"
    ) in _statements(known), known["claims"]
    assert not _gaps(known, "alert_firing"), known["missing_evidence"]


def test_error_count_is_stated_with_its_record(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    after = _run(invoke, "how many PAY-4097 errors were there?", *BOB, *AFTER)
    assert (
        "PAY-4097 (svc:payment-api EMITTED err:PAY-4097, first seen 2026-07-23T10:02:38Z): 18734 "
        "errors counted by the record, from its first sighting to its last at "
        "2026-07-23T10:47:52Z"
    ) in _statements(after), after["claims"]
    # During the incident the record's count runs past as_of: not stated as the count then.
    during = _run(
        invoke, "how many PAY-4097 errors were there?", *BOB, "--as-of", "2026-07-23T10:30:00Z"
    )
    assert "18734" not in json.dumps(during["claims"]), during["claims"]
    assert any("how many there were by as_of is not recorded" in s for s in _statements(during)), (
        during["claims"]
    )


def test_status_gap_and_deploy_question_agree_with_the_claims(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    opened = _run(
        invoke, "any ongoing incidents on payment-api?", *BOB, "--as-of", "2026-07-23T10:02:50Z"
    )
    assert any(s.endswith(": 1 incident open, no alert firing, no release rolling out")
               for s in _statements(opened)), opened["claims"]  # fmt: skip
    health = _gaps(opened, "health_check")
    assert health, opened["missing_evidence"]
    assert "no incident open" not in health[0]["description"], health
    assert "svc:payment-api: 1 incident open" in health[0]["description"], health

    deploy = _run(
        invoke, "is it safe to deploy payment-api now?", *BOB, "--as-of", "2026-07-23T10:30:00Z"
    )
    said = _statements(deploy)
    assert (
        f"svc:payment-api at as_of 2026-07-23T10:30:00Z: incident {INCIDENT} open (Payments "
        "authorization failures 2026-07-23, started 2026-07-23T10:02:38Z, not resolved by as_of)"
    ) in said, said
    assert any("alert alert:PaymentApiHighErrorRate firing" in s for s in said), said
    safety = _gaps(deploy, "deploy_safety")
    assert safety and not safety[0]["required"], deploy["missing_evidence"]
    assert "no verdict is given" in safety[0]["description"], safety
    assert not any("safe" in s for s in said), said


def test_question_readings() -> None:
    """Which words ask a response time, a severity change, a deploy's safety (pure)."""
    from investigator.planner import asks_deploy_safety, asks_severity_change, detect_intents
    from investigator.timeline import ResponseMetric, response_metrics, time_references

    assert response_metrics("how long did it take to detect the incident?") == [
        ResponseMetric.DETECT
    ]
    assert response_metrics("TTD and MTTR for the payments incident?") == [
        ResponseMetric.DETECT,
        ResponseMetric.RESOLVE,
    ]
    assert response_metrics("how long after the first error did the alert fire?")
    assert not response_metrics("how long did the incident last?")
    # The words name a span's ends, not an instant the answer is held at.
    assert time_references("how long until the alert fired?").event is None
    assert time_references("who owned payment-api before the alert fired?").event is not None
    assert detect_intents("how long until the alert fired?") == ["timeline"]
    assert asks_severity_change("when did the incident become SEV1?")
    assert detect_intents("when was severity raised to SEV1?") == ["incident_lookup"]
    assert not asks_severity_change("what is the severity of the incident?")
    assert asks_deploy_safety("is it safe to deploy payment-api now?")
    assert not asks_deploy_safety("when was payment-api deployed?")
