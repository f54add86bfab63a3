"""A change question's words before or after an event name a period (h30-before), through the
CLI against a real Neo4j. Before, "What changed on payment-api before the release?" had no
Time line and claimed the 10:02 changes (after the release started) with a cause verdict,
release 2026.07.20.2 (the one change on payment-api before it) admitted but unclaimed; "What
was deployed to payment-api before release 2026.07.23.1?" judged that release's correlation
instead; "the day before the incident" was taken as one instant while its claims were the
changes before the first error; "in the week before the incident" was not placed ("a period,
not an instant", `partial`)."""

from __future__ import annotations

from datetime import datetime

from conftest import investigate_json

OLD = "deploy:release-2026.07.20.2"
NEW = "deploy:release-2026.07.23.1"
RULES = "change:risk-rules-RR-2026-07-23a"


def _ask(invoke, question: str, as_of: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    return investigate_json(
        invoke,
        question,
        "--subject",
        "acme/user:bob",
        "--as-of",
        as_of,
        "--deadline-seconds",
        "120",
    )


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


def _claimed_ids(doc: dict) -> set[str]:  # type: ignore[type-arg]
    """The element ids the claims cite."""
    cited = {e["evidence_id"]: e["element_id"] for e in doc["evidence"]}
    return {cited[i] for c in doc["claims"] for i in c["evidence_ids"]}


def test_what_changed_before_the_release_is_the_last_change_before_it(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = _ask(invoke, "What changed on payment-api before the release?", "2026-07-23T10:03:00Z")
    assert doc["time_notes"] == [
        "'before the release' is taken as up to 2026-07-23T09:55:11Z, 1 s before the start of "
        "the release release-2026.07.23.1 (2026-07-23T09:55:12Z): the answer lists the last "
        "release of each service asked about by then, and the other changes from "
        "2026-07-22T09:55:11Z to 2026-07-23T09:55:11Z (the 1 d before it); none after it"
    ], doc["time_notes"]
    assert _statements(doc) == [
        f"Release {OLD} finished at 2026-07-20T14:00:00Z, 2 d 19 h 55 min 11 s before "
        "2026-07-23T09:55:11Z ('before the release'): the last release of svc:payment-api by "
        "then"
    ], doc["claims"]
    # Nothing after the release's start is offered as "before the release": not the
    # risk-rule change of 10:02:21, nor the errors, nor a verdict on the release itself.
    assert _claimed_ids(doc) == {OLD}, doc["claims"]
    assert doc["verdict"] is None
    assert doc["status"] == "complete", doc["missing_evidence"]
    assert doc["unresolved_time_words"] == []


def test_what_was_deployed_before_a_named_release(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = _ask(
        invoke,
        "What was deployed to payment-api before release 2026.07.23.1?",
        "2026-07-23T11:00:00Z",
    )
    assert doc["time_notes"] == [
        "'before release 2026.07.23.1' is taken as up to 2026-07-23T09:55:11Z, 1 s before the "
        "start of the release release-2026.07.23.1 (2026-07-23T09:55:12Z): the answer lists "
        "the last release of each service asked about by then; none after it"
    ], doc["time_notes"]
    assert _statements(doc) == [
        f"Release release-2026.07.20.2 ({OLD}) started at 2026-07-20T13:51:00Z and finished "
        "at 2026-07-20T14:00:00Z"
    ], doc["claims"]
    assert doc["verdict"] is None
    assert doc["status"] == "complete"
    # Over a period its event words name: the releases in it, not the errors read to place it.
    doc = _ask(
        invoke,
        "What was deployed to payment-api the day before the incident?",
        "2026-07-23T11:00:00Z",
    )
    assert doc["time_notes"][0].endswith("the answer lists the releases in it, none outside it")
    assert _claimed_ids(doc) == {NEW, "doc:cicd-release-2026.07.23.1"}, doc["claims"]


def test_the_day_and_the_week_before_the_incident_are_periods(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    incident = "the start of incident Payments authorization failures 2026-07-23"
    for words, start, amount, expected in (
        ("the day before the incident", "2026-07-22T10:02:38Z", "1 d", {NEW, RULES}),
        ("in the week before the incident", "2026-07-16T10:02:38Z", "7 d", {OLD, NEW, RULES}),
    ):
        doc = _ask(invoke, f"What changed on payment-api {words}?", "2026-07-23T11:00:00Z")
        span = f"from {start} to 2026-07-23T10:02:37Z"
        assert doc["time_notes"] == [
            f"{words!r} is taken as the period {span}, the {amount} before {incident} "
            "(2026-07-23T10:02:38Z): the answer lists the changes in it, none outside it"
        ], doc["time_notes"]
        assert doc["unresolved_time_words"] == [], words
        assert doc["status"] == "complete", (words, doc["missing_evidence"])
        assert _claimed_ids(doc) == expected, (words, doc["claims"])
        # Each claim is of a change in the period, said so; none names the errors.
        for statement in _statements(doc):
            assert statement.endswith(f", in the period asked, {span} ({words!r})"), statement
        assert doc["verdict"] is None


def test_after_a_named_release_runs_to_as_of_without_it(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = _ask(
        invoke, "What changed on payment-api after release 2026.07.20.2?", "2026-07-23T11:00:00Z"
    )
    assert doc["time_notes"] == [
        "'after release 2026.07.20.2' is taken as the period from 2026-07-20T14:00:01Z to "
        "2026-07-23T11:00:00Z, from 1 s after the release release-2026.07.20.2 "
        "(2026-07-20T14:00:00Z) to as_of 2026-07-23T11:00:00Z: the answer lists the changes "
        "in it, none outside it"
    ], doc["time_notes"]
    assert _claimed_ids(doc) == {NEW, RULES}, doc["claims"]
    assert all(
        datetime.fromisoformat(s.split(" at ", 1)[1].split(",", 1)[0])
        > datetime.fromisoformat("2026-07-20T14:00:00+00:00")
        for s in _statements(doc)
    ), doc["claims"]


def test_a_period_after_an_event_running_past_as_of_is_read_up_to_it(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # Before, "not used: ... after as_of", `partial`, and the changes before the first error.
    doc = _ask(
        invoke,
        "What changed on payment-api in the 2 hours after the release?",
        "2026-07-23T11:00:00Z",
    )
    assert doc["time_notes"] == [
        "'in the 2 hours after the release' is taken as the period from 2026-07-23T10:02:01Z "
        "to 2026-07-23T11:00:00Z, the 2 h after the release release-2026.07.23.1 "
        "(2026-07-23T10:02:00Z): the answer lists the changes in it, none outside it; it runs "
        "to 2026-07-23T12:02:00Z, after as_of 2026-07-23T11:00:00Z, so it is read up to "
        "as_of, which bounds what the answer may know. Give a later --as-of to read all of it"
    ], doc["time_notes"]
    assert doc["unresolved_time_words"] == []
    assert doc["status"] == "complete"
    assert _claimed_ids(doc) == {RULES}, doc["claims"]
