"""An incident's timeline: the dated events of its window, one fact each, in time order.

Found by the lead as a hurried on-call user asks it after the fact: "show me the timeline of
PAY-4097" (alice, as_of 2026-07-24) was `complete`, "Missing evidence: none", with one claim
(the first error seen) and the incident itself rejected `low_relevance`; "what happened during
the payments incident?" gave the incident, the first error and the affected services, but no
release, no alert firing and no change. The demo records release 2026.07.23.1 of payment-api
(09:55:12 to 10:02:00), the risk rule publication (10:02:21), the first PAY-4097 (10:02:38),
the incident (10:02:38 to 10:48), PaymentApiHighErrorRate on payment-api (10:03:10 to 10:50)
and checkout affected from 10:03:30; the incident report's text has its own "Timeline (UTC)".
"""

from __future__ import annotations

from pathlib import Path

import yaml
from conftest import change_line, ingest_text, investigate_json, release_line

from investigator.planner import detect_intents

ALICE = ("--subject", "acme/user:alice")
RELEASE_FINISHED = (
    "2026-07-23T10:02:00Z: Release 2026.07.23.1 (deploy:release-2026.07.23.1) of "
    "svc:payment-api finished"
)
FIRST_ERROR = "2026-07-23T10:02:38Z: First PAY-4097 error seen on svc:payment-api"
ALERT = "2026-07-23T10:03:10Z: Alert alert:PaymentApiHighErrorRate fired on svc:payment-api"
RESOLVED = (
    "2026-07-23T10:48:00Z: Incident inc:2026-07-23-payments (Payments authorization "
    "failures 2026-07-23) resolved"
)


def _events(doc: dict) -> list[str]:  # type: ignore[type-arg]
    """The timeline's event claims (each starts with its time), in the answer's order."""
    return [
        c["statement"]
        for c in doc["claims"]
        if c["intent"] == "timeline" and c["statement"][:4].isdigit()
    ]


def _index(events: list[str], start: str) -> int:
    return next(i for i, e in enumerate(events) if e.startswith(start))


def test_the_timeline_of_an_error_after_the_incident(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = investigate_json(
        invoke,
        "show me the timeline of PAY-4097",
        *ALICE,
        "--as-of",
        "2026-07-24T00:00:00Z",
        "--deadline-seconds",
        "300",
    )
    assert doc["intents"] == ["timeline"]
    # A timeline is no cause question: no verdict.
    assert doc["verdict"] is None
    assert doc["status"] == "complete", doc["missing_evidence"]
    events = _events(doc)
    # In time order (ties by record id: AFFECTED_BY, EMITTED, inc: at 10:02:38).
    assert [e[:20] for e in events] == sorted(e[:20] for e in events), events
    assert events[0] == (
        "2026-07-23T09:55:12Z: Release 2026.07.23.1 (deploy:release-2026.07.23.1) of "
        "svc:payment-api started its rollout"
    )
    # Release before first error before alert before resolution.
    assert (
        _index(events, RELEASE_FINISHED)
        < _index(events, FIRST_ERROR)
        < _index(events, ALERT)
        < _index(events, RESOLVED)
    ), events
    assert f"{ALERT} (until 2026-07-23T10:50:00Z)" in events
    assert any("Change risk rule publication RR-2026-07-23a" in e for e in events), events
    assert any(
        "Service svc:checkout affected by incident inc:2026-07-23-payments" in e for e in events
    )
    # The incident is an event, not rejected as irrelevant.
    assert any("Incident inc:2026-07-23-payments" in e and "started" in e for e in events)
    assert "inc:2026-07-23-payments" not in {r["element_id"] for r in doc["rejected"]}
    # Nothing after the resolution, and the 20 July release (three days before) is not listed.
    assert events[-1] == RESOLVED, events
    assert not any("2026.07.20.2" in e for e in events), events
    # The report's own timeline is quoted as what it states, apart from the events.
    quoted = [c for c in doc["claims"] if "states its own timeline" in c["statement"]]
    assert len(quoted) == 1, doc["claims"]
    assert "doc:incident-report-2026-07-23-payments" in quoted[0]["statement"]
    assert "the report's words, not records of the KG" in quoted[0]["statement"]
    assert "10:03:10 PaymentApiHighErrorRate fired." in quoted[0]["statement"]
    # The JSON shape: every timeline claim a fact bound to evidence in the answer.
    cited = {ev["evidence_id"] for ev in doc["evidence"]}
    for claim in doc["claims"]:
        assert claim["intent"] == "timeline", claim
        assert claim["epistemic_status"] == "fact", claim
        assert claim["evidence_ids"] and set(claim["evidence_ids"]) <= cited, claim


def test_the_timeline_during_the_incident_stops_at_as_of(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = investigate_json(
        invoke,
        "what happened during the payments incident?",
        *ALICE,
        "--as-of",
        "2026-07-23T10:10:00Z",
        "--deadline-seconds",
        "300",
    )
    assert doc["intents"] == ["timeline"]
    events = _events(doc)
    # The release, the change and the alert are there now (before: the incident alone).
    assert RELEASE_FINISHED in events and FIRST_ERROR in events, events
    assert f"{ALERT} (still firing at as_of)" in events
    assert not any("resolved" in e for e in events), events
    assert all(e[:20] <= "2026-07-23T10:10:00Z" for e in events), events
    assert events[-1] == (
        "2026-07-23T10:10:00Z (as_of): the incident is still open (no resolution recorded by "
        "as_of); the timeline stops here"
    )


def test_the_timeline_before_the_incident_says_there_is_none_yet(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = investigate_json(
        invoke,
        "timeline of the outage",
        *ALICE,
        "--as-of",
        "2026-07-23T09:00:00Z",
        "--deadline-seconds",
        "300",
    )
    assert doc["intents"] == ["timeline"]
    assert doc["status"] == "partial"
    assert _events(doc) == []
    gaps = [m["description"] for m in doc["missing_evidence"] if m["required"]]
    assert (
        "no incident started and no error first seen by as_of 2026-07-23T09:00:00Z was found "
        "that the subject may read: no timeline to list (name the incident, error code or "
        "service if one was meant)"
    ) in gaps, gaps


def test_carol_sees_only_the_events_she_may_read(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = investigate_json(
        invoke,
        "show me the timeline of PAY-4097",
        "--subject",
        "acme/user:carol",
        "--as-of",
        "2026-07-24T00:00:00Z",
        "--deadline-seconds",
        "300",
    )
    assert doc["intents"] == ["timeline"]
    events = _events(doc)
    assert FIRST_ERROR in events and RELEASE_FINISHED in events, events
    # The incident and its records are not hers to read: not listed, not counted, not quoted.
    text = " ".join(c["statement"] for c in doc["claims"])
    text += " ".join(m["description"] for m in doc["missing_evidence"])
    assert "inc:2026-07-23-payments" not in text
    assert "incident report" not in text.lower()
    assert "still open" not in text and "resolved" not in text
    assert not any(w in text for w in ("hidden", "withheld", "not shown"))


def test_a_release_during_the_incident_is_an_event_and_one_after_it_is_not(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, tmp_path: Path
) -> None:
    # Last of the module's graph tests: it adds records to the demo graph.
    bundle = "tenant: acme\nnodes:\n"
    bundle += release_line("rollback", 1, "2026-07-23T10:41:00Z", started="2026-07-23T10:38:00Z")
    bundle += release_line("later", 1, "2026-07-23T15:00:00Z")
    bundle += change_line("during", 1, "2026-07-23T10:20:00Z")
    ingest_text(invoke, tmp_path / "during.yaml", bundle)
    doc = investigate_json(
        invoke,
        "show me the timeline of PAY-4097",
        *ALICE,
        "--as-of",
        "2026-07-24T00:00:00Z",
        "--deadline-seconds",
        "300",
    )
    events = _events(doc)
    rollback = (
        "2026-07-23T10:41:00Z: Release rollback-1 (deploy:rollback-1) of svc:payment-api finished"
    )
    # Read past the first error (the other reads end there), in its place in time.
    assert _index(events, ALERT) < _index(events, rollback) < _index(events, RESOLVED), events
    assert any(e.startswith("2026-07-23T10:38:00Z: Release rollback-1") for e in events)
    assert any(e.startswith("2026-07-23T10:20:00Z: Change during change 1") for e in events)
    # After the resolution: not an event of the incident's timeline.
    assert not any("deploy:later-1" in e for e in events), events


def test_timeline_questions_and_the_golden_cases() -> None:
    for question in (
        "show me the timeline of PAY-4097",
        "what happened during the payments incident?",
        "what happened and when?",
        "give me the sequence of events for the payments incident",
        "timeline of the outage",
        "PAY-4097 的时间线",
    ):
        assert detect_intents(question) == ["timeline"], question
    # A cause asked beside it keeps its verdict.
    assert "deployment_correlation" in detect_intents(
        "timeline of the incident, and did the release cause it?"
    )
    # No golden case is read as a timeline (their intents stay what they were).
    golden = yaml.safe_load((Path(__file__).parents[1] / "eval" / "golden.yaml").read_text())
    cases = golden["cases"] if isinstance(golden, dict) else golden
    for case in cases:
        if case.get("question"):
            assert "timeline" not in detect_intents(case["question"]), case
