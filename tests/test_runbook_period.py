"""Which runbook applied over a period: every version in force in it, each by its interval.

Found by an explorer (e25-time, finding 3): "Which runbook applied ... between d1 and d2?"
answered only the versions at the two ends, and "... over time?" only today's, both
`complete`, while the version in force in the middle (at the incident) was listed as
`rejected_superseded`. Now each version valid at some instant of the period is stated with
its valid interval; a stretch of the period no version read covers is a required gap
(`partial`). Demo graph: payment-recovery v2 (02-01 to 07-01), v3 (07-01 to 07-25), v4
(from 07-25).
"""

from __future__ import annotations

import json

WHO = ["--subject", "acme/user:oncall", "--json"]
V2, V3, V4 = (f"runbook:payment-recovery@v{n}" for n in (2, 3, 4))


def _ask(invoke, question: str, *flags: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("investigate", question, *flags, *WHO)
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def _stated(doc: dict) -> dict[str, str]:  # type: ignore[type-arg]
    """Runbook version -> the claim that states it."""
    out = {}
    for claim in doc["claims"]:
        for version in (V2, V3, V4):
            if f"({version})" in claim["statement"]:
                out[version] = claim["statement"]
    return out


def _rejected(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [r["element_id"] for r in doc["rejected"] if r["element_id"] in (V2, V3, V4)]


def _gaps(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [m["description"] for m in doc["missing_evidence"] if m["required"]]


def test_a_period_states_every_version_in_it(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _ask(invoke, "Which runbook applied to payment-api between 2026-06-15 and 2026-07-30?")
    stated = _stated(doc)
    assert sorted(stated) == [V2, V3, V4], doc["claims"]
    # v3, in force in the middle of the period (and at the 2026-07-23 incident), is stated.
    assert stated[V3].startswith(
        "From 2026-07-01T00:00:00Z to 2026-07-25T00:00:00Z (the question says 'between "
        "2026-06-15 and 2026-07-30': 2026-06-15T00:00:00Z to 2026-07-30T23:59:59Z): Runbook "
        "Payment recovery runbook v3"
    ), stated[V3]
    assert "was the version in force" in stated[V3]
    assert stated[V2].startswith("From 2026-02-01T00:00:00Z to 2026-07-01T00:00:00Z ")
    assert stated[V4].startswith("From 2026-07-25T00:00:00Z, still at as_of, ")
    assert "is the version in force" in stated[V4]
    assert _rejected(doc) == [], doc["rejected"]
    assert doc["status"] == "complete" and _gaps(doc) == []


def test_a_period_with_as_of_ends_at_as_of(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _ask(
        invoke,
        "Which runbook applied to payment-api between 2026-06-15 and 2026-07-30?",
        "--as-of",
        "2026-08-15T00:00:00Z",
    )
    stated = _stated(doc)
    assert sorted(stated) == [V2, V3, V4], doc["claims"]
    assert stated[V4].startswith("From 2026-07-25T00:00:00Z, still at as_of, 2026-08-15T00:00:00Z")
    assert doc["status"] == "complete"


def test_a_period_from_a_versions_start_leaves_out_the_one_before(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # v2 ends at 2026-07-01T00:00:00Z, where v3 begins: v2 holds at no instant of the period.
    doc = _ask(invoke, "Which runbook applied to payment-api between 2026-07-01 and 2026-07-10?")
    stated = _stated(doc)
    assert stated[V3].startswith("From 2026-07-01T00:00:00Z to 2026-07-25T00:00:00Z (the ques")
    assert V2 not in stated and V2 in _rejected(doc)
    # v4 is stated at as_of only, not as in force in the period.
    assert stated[V4].startswith("Runbook Payment recovery runbook v4") and "at as_of" in stated[V4]
    assert doc["status"] == "complete"


def test_a_period_after_the_last_version_states_it_alone(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _ask(invoke, "Which runbook applied to payment-api between 2026-08-01 and 2026-08-05?")
    stated = _stated(doc)
    assert sorted(stated) == [V4], doc["claims"]
    assert stated[V4].startswith("From 2026-07-25T00:00:00Z, still at as_of, ")
    assert doc["status"] == "complete"


def test_a_stretch_before_the_first_version_is_a_gap(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _ask(invoke, "Which runbook applied to payment-api between 2026-01-15 and 2026-07-10?")
    assert sorted(_stated(doc)) == [V2, V3, V4], doc["claims"]
    assert doc["status"] == "partial"
    assert _gaps(doc) == [
        "no version of a runbook or policy of svc:payment-api is recorded in force from "
        "2026-01-15T00:00:00Z to 2026-02-01T00:00:00Z (the question says 'between 2026-01-15 "
        "and 2026-07-10': 2026-01-15T00:00:00Z to 2026-07-10T23:59:59Z), in the records this "
        "subject may read: which one applied then is not known"
    ]


def test_a_period_before_the_first_version_is_not_complete(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _ask(invoke, "Which runbook applied to payment-api between 2026-01-01 and 2026-01-20?")
    assert doc["status"] == "partial"
    [gap] = _gaps(doc)
    assert "from 2026-01-01T00:00:00Z to 2026-01-20T23:59:59Z" in gap, gap


def test_over_time_is_the_pages_history(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _ask(invoke, "Which runbook versions applied to payment-api over time?")
    stated = _stated(doc)
    assert sorted(stated) == [V2, V3, V4], doc["claims"]
    assert stated[V2].startswith(
        "From 2026-02-01T00:00:00Z to 2026-07-01T00:00:00Z (the question says 'over time'): "
    )
    assert _rejected(doc) == [] and doc["status"] == "complete"


def test_one_time_still_answers_one_version(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _ask(invoke, "Which runbook applied to payment-api on 2026-07-23?")
    stated = _stated(doc)
    assert stated[V3].startswith("Runbook Payment recovery runbook v3"), stated
    assert V2 in _rejected(doc)
