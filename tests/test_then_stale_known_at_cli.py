"""A stale `--known-at` with a later `--as-of` (real Neo4j, the demo dataset): what the KG knew
at 2026-07-23T09:58 holds runbook:payment-recovery@v3 until 2026-07-25T00:00 and no later
version (v4 was recorded after). Asked "then" at as_of 2026-07-25T12:00, the answer states v3 at
the release taken as "then" and never promises it holds at as_of: a required gap says that no
version is in force at as_of in that KG (which one ended when), and the run is `partial`. An
owner question at the same moments states an owner at as_of too, so it still says so; a
release asked about is an event, said at its moment alone."""

from __future__ import annotations

import neo4j

STALE = [
    "--service", "svc:payment-api", "--subject", "acme/user:bob",
    "--as-of", "2026-07-25T12:00:00Z", "--known-at", "2026-07-23T09:58:00Z",
]  # fmt: skip
THEN = (
    "Time       'then' is taken as the release release-2026.07.20.2, 2026-07-20T14:00:00Z, "
    "4 d 22 h before as_of 2026-07-25T12:00:00Z"
)
HOLDS_THEN = "; the answer holds at that moment. Name the moment in the question"
HOLDS_BOTH = "; the answer holds at that moment (and at as_of). Name the moment in the question"


def _line(out: str, start: str) -> str:
    return next(line for line in out.splitlines() if line.startswith(start))


def test_stale_runbook_then_says_none_is_in_force_at_as_of(
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:  # type: ignore[no-untyped-def]
    # Before h28-stale: "(and at as_of)", `complete` and "Missing evidence none".
    report = invoke("investigate", "Which runbook applied then?", *STALE)
    assert report.code == 0, report
    out = report.out
    time_line = _line(out, "Time       ")
    assert time_line.startswith(THEN) and HOLDS_THEN in time_line, time_line
    assert "(and at as_of)" not in out, out
    assert _line(out, "Status     ").startswith("Status     partial"), out
    assert (
        "runbook (required): no runbook version is recorded in force at as_of, "
        "2026-07-25T12:00:00Z, in what the KG knew at 2026-07-23T09:58:00Z, in the records this "
        "subject may read: runbook:payment-recovery@v3 ended at 2026-07-25T00:00:00Z, and no "
        "later version was recorded; which runbook applies at as_of is not known"
    ) in out, out
    assert "Missing evidence\n  none" not in out, out
    # What applied then is still stated, at "then" alone.
    assert (
        "(runbook:payment-recovery@v3) is the version in force at the release "
        "release-2026.07.20.2, 2026-07-20T14:00:00Z (the question says 'then') (valid "
        "2026-07-01T00:00:00Z to 2026-07-25T00:00:00Z)"
    ) in out, out


def test_stale_owner_then_still_holds_at_as_of(demo_graph: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # The owner record of 2026-07-24 was known at 09:58 (recorded 2026-07-20): an owner is
    # stated at as_of, so the answer does hold there too.
    report = invoke("investigate", "Who owned payment-api then?", *STALE)
    assert report.code == 0, report
    out = report.out
    time_line = _line(out, "Time       ")
    assert time_line.startswith(THEN) and HOLDS_BOTH in time_line, time_line
    assert "At as_of, 2026-07-25T12:00:00Z: team:payments-platform OWNS svc:payment-api" in out
    assert _line(out, "Status     ").startswith("Status     complete"), out
    assert "no runbook version is recorded in force at as_of" not in out, out


def test_stale_release_then_is_said_at_its_moment_alone(
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:  # type: ignore[no-untyped-def]
    # A release is an event: nothing of it holds at as_of (before h28-stale: "(and at as_of)").
    report = invoke("investigate", "Which release was deployed then?", *STALE)
    assert report.code == 0, report
    time_line = _line(report.out, "Time       ")
    assert time_line.startswith(THEN) and HOLDS_THEN in time_line, time_line


def test_stale_owner_and_runbook_then_is_not_said_to_hold_at_as_of(
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:  # type: ignore[no-untyped-def]
    # The owner holds at as_of, the runbook does not: the answer as a whole does not hold
    # there (before h28-stale: "(and at as_of)"), and the runbook gap is said.
    report = invoke("investigate", "Who owned payment-api then and which runbook applied?", *STALE)
    assert report.code == 0, report
    out = report.out
    time_line = _line(out, "Time       ")
    assert time_line.startswith(THEN) and HOLDS_THEN in time_line, time_line
    assert "At as_of, 2026-07-25T12:00:00Z: team:payments-platform OWNS svc:payment-api" in out
    assert "runbook (required): no runbook version is recorded in force at as_of" in out, out
    assert _line(out, "Status     ").startswith("Status     partial"), out
