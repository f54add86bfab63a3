"""Written times and events as periods for change, release and alert-firing questions, as
an on-call engineer types them: "what changed on payment-api since <T>?", "after <T>", "on
<day>", "until <T>", "since the incident", "what else changed around the release?",
"what alerts fired since 10:30?"; against the real Neo4j with the demo dataset, through
the CLI (text and --json) and the MCP tool's summary.

Before (h31-periods), each was answered `complete` with the changes before the first error
(10:02, whatever the time written), with no Time line; "on 2026-07-22" listed the 07-23
changes, "releases on 2026-07-20" listed 07-20 and 07-23, "since the incident" was not
resolved, "around the release" listed the two releases of payment-api and missed the
risk-rule change 21 s after it, and "since 10:30" listed the 10:03 firing without saying it
was begun before the period.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from investigator.change_period import written_change_period
from investigator.planner import detect_intents
from investigator.serving.results import summary_text
from investigator.timeline import time_references

ALICE = ("--subject", "acme/user:alice", "--deadline-seconds", "300")
CAROL = ("--subject", "acme/user:carol", "--deadline-seconds", "300")
RELEASE = "Release deploy:release-2026.07.23.1 finished at 2026-07-23T10:02:00Z, in the period"
RULES = "RR-2026-07-23a (change:risk-rules-RR-2026-07-23a) happened at 2026-07-23T10:02:21Z"
BEFORE_ERROR = "before PAY-4097 was first seen"


def _ask(invoke, question: str, as_of: str, *extra: str) -> tuple[str, dict[str, Any]]:  # type: ignore[no-untyped-def]
    who = extra or ALICE
    report = invoke("investigate", question, *who, "--as-of", as_of)
    assert report.code == 0, report
    doc = json.loads(invoke("investigate", question, *who, "--as-of", as_of, "--json").out)
    return report.out, doc


def _claims(out: str) -> str:
    return out.split("\nClaims\n", 1)[1].split("\nEvidence\n", 1)[0]


def _gaps(doc: dict[str, Any]) -> list[str]:
    return [f"{m['evidence_type']}: {m['description']}" for m in doc["missing_evidence"]]


def test_since_a_time_is_that_time_to_as_of_and_an_empty_period_says_so(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    out, doc = _ask(
        invoke, "what changed on payment-api since 2026-07-23T12:00:00Z?", "2026-07-24T12:00:00Z"
    )
    note = (
        "'since 2026-07-23T12:00:00Z' is taken as the period from 2026-07-23T12:00:00Z to "
        "2026-07-24T12:00:00Z, from that time, itself included, to as_of 2026-07-24T12:00:00Z: "
        "the answer lists the changes in it, none outside it"
    )
    assert f"Time       {note}" in out, out
    assert note in doc["time_notes"], doc["time_notes"]
    # The MCP tool's summary says it too.
    assert f"Note: {note}" in summary_text("investigate", doc), summary_text("investigate", doc)
    # Never another period's changes: the 10:02 release and the 10:02:21 rule are before it.
    claims = _claims(out)
    assert "2026-07-23T10:02" not in claims and BEFORE_ERROR not in out, out
    # Its one change is payment-api's owner handover at 07-24T00:00 (h33-changes: before,
    # a gap said no change was recorded in it; tests/test_changes_over_time_cli.py).
    assert [c["statement"][:89] for c in doc["claims"]] == [
        "Owner handover of svc:payment-api at 2026-07-24T00:00:00Z, in the period asked, from 2026"
    ], doc["claims"]
    assert (
        "from 2026-07-23T12:00:00Z to 2026-07-24T12:00:00Z ('since 2026-07-23T12:00:00Z')"
        in doc["claims"][0]["statement"]
    )
    assert doc["unresolved_time_words"] == []


@pytest.mark.parametrize(
    ("question", "release", "rules"),
    [
        # "since T" holds T itself, "after T" starts 1 s after it.
        ("what changed since 2026-07-23T10:02:00Z?", True, True),
        ("what changed after 2026-07-23T10:02:00Z?", False, True),
        ("what changed since 2026-07-23T10:02:21Z?", False, True),
        ("what changed after 2026-07-23T10:02:21Z?", False, False),
        ("what changed since 2026-07-23T10:02:22Z?", False, False),
        # a time without its zone: UTC, said
        ("what changed after 2026-07-23T10:02:20?", False, True),
    ],
)
def test_since_and_after_boundaries(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, question: str, release: bool, rules: bool
) -> None:
    report = invoke("investigate", question, *ALICE, "--as-of", "2026-07-24T12:00:00Z")
    assert report.code == 0, report
    out = report.out
    claims = _claims(out)
    assert (RELEASE in claims) is release, out
    assert (RULES in claims) is rules, out
    assert BEFORE_ERROR not in out, out
    side = "since" if "since" in question else "after"
    assert f"Time       '{side} 2026-07-23T10:02:" in out, out
    if question.endswith("20?"):
        assert "(no zone given: read as UTC)" in out, out
    if not (release or rules):
        # The period's one change: payment-api's owner handover at 07-24T00:00 (h33-changes).
        assert "Owner handover of svc:payment-api at 2026-07-24T00:00:00Z" in claims, out


def test_on_a_day_is_that_utc_day(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    out, doc = _ask(invoke, "what changed on payment-api on 2026-07-22?", "2026-07-24T12:00:00Z")
    note = (
        "'on 2026-07-22' is taken as the period from 2026-07-22T00:00:00Z to "
        "2026-07-22T23:59:59Z, that UTC day, from its 00:00:00 to its 23:59:59"
    )
    assert f"Time       {note}" in out, out
    assert "2026-07-23" not in _claims(out), out  # the 07-23 changes are another day's
    assert any(
        "from 2026-07-22T00:00:00Z to 2026-07-22T23:59:59Z ('on 2026-07-22')" in g
        for g in _gaps(doc)
    ), _gaps(doc)
    # With no service named, that day's risk-engine release is listed (16:30).
    report = invoke(
        "investigate", "what changed on 2026-07-22?", *ALICE, "--as-of", "2026-07-24T12:00:00Z"
    )
    claims = _claims(report.out)
    assert "deploy:risk-engine-2026.07.22.3 finished at 2026-07-22T16:30:00Z" in claims, report
    assert "2026-07-23" not in claims, report


def test_releases_on_a_day(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    out, doc = _ask(
        invoke, "which releases of payment-api went out on 2026-07-20?", "2026-07-24T12:00:00Z"
    )
    assert (
        "Time       'on 2026-07-20' is taken as the period from 2026-07-20T00:00:00Z to "
        "2026-07-20T23:59:59Z, that UTC day, from its 00:00:00 to its 23:59:59: the answer "
        "lists the releases in it, none outside it"
    ) in out, out
    claims = _claims(out)
    assert "release-2026.07.20.2" in claims and "2026.07.23.1" not in claims, out
    assert doc["status"] == "complete"


def test_until_a_time_is_the_last_changes_by_then(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    report = invoke(
        "investigate",
        "what changed on payment-api until 2026-07-23T10:02:10Z?",
        *ALICE,
        "--as-of",
        "2026-07-24T12:00:00Z",
    )
    out = report.out
    assert (
        "Time       'until 2026-07-23T10:02:10Z' is taken as up to 2026-07-23T10:02:10Z, the "
        "time written: the answer lists the last release of each service asked about by then"
    ) in out, out
    claims = _claims(out)
    assert "the last release of svc:payment-api by then" in claims, out
    assert "2026.07.23.1" in claims and "RR-2026-07-23a" not in claims, out  # 10:02:21: after


@pytest.mark.parametrize(
    ("since", "listed"),
    [
        # begun at 10:03:10, ended at 10:50:00: firing in a period that starts before its end
        ("2026-07-23T10:30:00Z", True),
        ("2026-07-23T10:49:59Z", True),
        ("2026-07-23T10:50:00Z", False),
    ],
)
def test_alerts_since_a_time_list_those_still_firing(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, since: str, listed: bool
) -> None:
    out, doc = _ask(
        invoke, f"what alerts fired on payment-api since {since}?", "2026-07-23T11:00:00Z"
    )
    assert (
        f"Time       'since {since}' is taken as the period from {since} to "
        "2026-07-23T11:00:00Z (from that time, itself included, to as_of 2026-07-23T11:00:00Z): "
        "the answer lists the alert firings in it, and those begun before it still firing in it "
        '("firing since" their start); none outside it'
    ) in out, out
    claims = _claims(out)
    if listed:
        assert (
            "Alert alert:PaymentApiHighErrorRate on svc:payment-api: firing since "
            f"2026-07-23T10:03:10Z, before the period asked ({since} to 2026-07-23T11:00:00Z), "
            "and still firing in it (until 2026-07-23T10:50:00Z)"
        ) in claims, out
    else:
        assert "PaymentApiHighErrorRate" not in claims, out
        assert any(g.startswith("alert_firing: ") for g in _gaps(doc)), _gaps(doc)
    # A firing begun in the period is said as before, with no "firing since".
    report = invoke(
        "investigate",
        "what alerts fired on payment-api since 2026-07-23T10:03:10Z?",
        *ALICE,
        "--as-of",
        "2026-07-23T11:00:00Z",
    )
    assert (
        "Alert alert:PaymentApiHighErrorRate fired on svc:payment-api at 2026-07-23T10:03:10Z "
        "(until 2026-07-23T10:50:00Z)"
    ) in report.out, report


def test_since_the_incident_is_after_its_resolution(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    out, doc = _ask(
        invoke,
        "what changed since the incident?",
        "2026-07-24T12:00:00Z",
        *ALICE,
        "--service",
        "svc:payment-api",
    )
    assert (
        "Time       'since the incident' is taken as the period from 2026-07-23T10:48:01Z to "
        "2026-07-24T12:00:00Z, from 1 s after the resolution of incident"
    ) in out, out
    assert "not resolved" not in out and BEFORE_ERROR not in out, out
    assert doc["unresolved_time_words"] == []
    # Its one change: payment-api's owner handover at 07-24T00:00 (h33-changes).
    assert [c["statement"][:60] for c in doc["claims"]] == [
        "Owner handover of svc:payment-api at 2026-07-24T00:00:00Z, i"
    ], doc["claims"]
    # carol may not read the incident: not placed, said; never another period's changes.
    out, doc = _ask(
        invoke,
        "what changed since the incident?",
        "2026-07-24T12:00:00Z",
        *CAROL,
        "--service",
        "svc:payment-api",
    )
    assert doc["status"] == "partial"
    assert "not resolved: 'since the incident'" in out, out
    assert "no incident resolution is found by as_of" in out, out
    assert "2026-07-23T10:02" not in _claims(out), out


def test_what_else_changed_around_the_release(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    out, doc = _ask(
        invoke,
        "what else changed around the release?",
        "2026-07-23T10:10:00Z",
        *ALICE,
        "--service",
        "svc:payment-api",
    )
    assert (
        "Time       'around the release' is taken as the period from 2026-07-23T09:32:00Z to "
        "2026-07-23T10:10:00Z, the 30 min on either side of the release release-2026.07.23.1 "
        "(2026-07-23T10:02:00Z), the window other changes are read in as competing causes"
    ) in out, out
    assert "it runs to 2026-07-23T10:32:00Z, after as_of 2026-07-23T10:10:00Z" in out, out
    claims = _claims(out)
    assert RULES in claims, out  # the risk-rule change 21 s after it
    assert "2026.07.20.2" not in claims, out  # three days before: not around it
    assert "change_history" in doc["intents"]
    # carol reads the same records (internal): the same period and changes.
    report = invoke(
        "investigate",
        "anything else change at the same time as release 2026.07.23.1?",
        *CAROL,
        "--as-of",
        "2026-07-23T12:00:00Z",
    )
    assert "Time       'at the same time as release 2026.07.23.1' is taken as the period" in (
        report.out
    ), report
    claims = _claims(report.out)
    assert RULES in claims and "2026.07.20.2" not in claims, report


def test_config_changes_is_a_change_question() -> None:
    assert "change_history" in [
        str(i) for i in detect_intents("any config changes on payment-api?")
    ]
    assert "change_history" in [
        str(i) for i in detect_intents("did anything else change at the same time as the release?")
    ]


def test_periods_read_from_written_times() -> None:
    as_of = datetime(2026, 7, 24, 12, tzinfo=UTC)

    def period(question: str) -> tuple[str, str, bool] | None:
        found = written_change_period(time_references(question, as_of, spans=True), as_of)
        if found is None:
            return None
        return found.start.isoformat(), found.end.isoformat(), found.last_only

    assert period("what changed after 2026-07-22?") == (
        "2026-07-23T00:00:00+00:00",
        "2026-07-24T12:00:00+00:00",
        False,
    )
    assert period("what changed before 2026-07-23?") == (
        "2026-07-21T23:59:59+00:00",
        "2026-07-22T23:59:59+00:00",
        True,
    )
    # the day holding as_of: read up to as_of
    assert period("what changed on 2026-07-24?") == (
        "2026-07-24T00:00:00+00:00",
        "2026-07-24T12:00:00+00:00",
        False,
    )
    # after as_of, a period written, or two times: none here (said elsewhere)
    assert period("what changed since 2026-07-25T00:00:00Z?") is None
    assert period("what changed between 2026-07-22 and 2026-07-23?") is None
    assert period("what changed at 2026-07-23T10:00:00Z?") is None
