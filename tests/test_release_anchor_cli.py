""" "The release" as a change question's anchor, naming no service and asked long after it,
through the CLI against a real Neo4j (h36-release-anchor). Before, "what changed an hour
before the release?" and "what happened just after the deploy?" asked months after the
release (as without --as-of) were not placed: the releases weighed for "the release" were
only those of the day before as_of, and the change question read none ("the question names
no errors to look for"). Now, none being in that day, the newest releases the subject may
read by as_of (as known at known_at) are weighed, whenever they were.
"""

from __future__ import annotations

from conftest import investigate_json

# Months after the release: what a question asked without --as-of meets.
LATER = "2026-11-01T00:00:00Z"
HOUR_BEFORE = "What changed an hour before the release?"
TAKEN_PAYMENT = (
    "the question names no service: svc:payment-api is read as the one asked about, the "
    "service of deploy:release-2026.07.23.1, the last release found by as_of "
    "(2026-07-23T10:02:00Z)"
)


def _ask(invoke, question: str, *flags: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    return investigate_json(invoke, question, "--deadline-seconds", "300", *flags)


def test_an_hour_before_the_release_asked_months_later_is_placed(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = _ask(invoke, HOUR_BEFORE, "--subject", "acme/user:bob", "--as-of", LATER)
    assert doc["time_notes"] == [
        "'an hour before the release' is taken as the period from 2026-07-23T08:55:12Z to "
        "2026-07-23T09:55:11Z, the 1 h before the start of the release release-2026.07.23.1 "
        "(2026-07-23T09:55:12Z): the answer lists the changes in it, none outside it"
    ], doc["time_notes"]
    assert doc["unresolved_time_words"] == []
    assert any(n.startswith(TAKEN_PAYMENT) for n in doc["search_notes"]), doc["search_notes"]
    # The period was read: nothing in it is said as such, not "no errors named".
    assert [m["description"] for m in doc["missing_evidence"]] == [
        "no release of the services asked about and no other change the subject may read is "
        "recorded from 2026-07-23T08:55:12Z to 2026-07-23T09:55:11Z ('an hour before the "
        "release'); nor an owner handover, a runbook version or a dependency of "
        "svc:payment-api beginning or ending in it"
    ], doc["missing_evidence"]
    assert doc["status"] == "complete"


def test_just_after_the_deploy_asked_months_later_is_the_release(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = _ask(
        invoke,
        "What happened just after the deploy?",
        "--subject",
        "acme/user:bob",
        "--as-of",
        LATER,
    )
    assert doc["unresolved_time_words"] == []
    assert doc["time_notes"][0].startswith(
        "'just after the deploy' is taken as the release release-2026.07.23.1, "
        "2026-07-23T10:02:00Z, "
    ), doc["time_notes"]
    assert any(n.startswith(TAKEN_PAYMENT) for n in doc["search_notes"]), doc["search_notes"]
    statements = [c["statement"] for c in doc["claims"]]
    assert (
        "PAY-4097 was first seen 38 s after release deploy:release-2026.07.23.1 finished "
        "(2026-07-23T10:02:00Z -> 2026-07-23T10:02:38Z): a time correlation, not by itself a "
        "root cause"
    ) in statements, statements


def test_known_at_before_the_release_was_recorded_takes_the_one_known(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    """Known at 10:00, before release 2026.07.23.1 was recorded (10:02): the release known
    then (risk-engine's of the day before) is the anchor, said so, never the later one."""
    doc = _ask(
        invoke,
        HOUR_BEFORE,
        "--subject",
        "acme/user:bob",
        "--as-of",
        LATER,
        "--known-at",
        "2026-07-23T10:00:00Z",
    )
    assert doc["time_notes"] == [
        "'an hour before the release' is taken as the period from 2026-07-22T15:21:00Z to "
        "2026-07-22T16:20:59Z, the 1 h before the start of the release "
        "risk-engine-2026.07.22.3 (2026-07-22T16:21:00Z): the answer lists the changes in it, "
        "none outside it"
    ], doc["time_notes"]
    assert any(
        n.startswith(
            "the question names no service: svc:risk-engine is read as the one asked about, "
            "the service of deploy:risk-engine-2026.07.22.3, the last release found by as_of "
            "(2026-07-22T16:30:00Z)"
        )
        for n in doc["search_notes"]
    ), doc["search_notes"]
    assert "release-2026.07.23.1" not in str(doc["time_notes"] + doc["search_notes"])


def test_another_tenant_takes_its_own_latest_release(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = _ask(invoke, HOUR_BEFORE, "--subject", "globex/user:mallory", "--as-of", LATER)
    assert doc["time_notes"] == [
        "'an hour before the release' is taken as the period from 2026-07-23T09:01:00Z to "
        "2026-07-23T10:00:59Z, the 1 h before the release globex payment-api 2026.07.23.7 "
        "(2026-07-23T10:01:00Z): the answer lists the changes in it, none outside it"
    ], doc["time_notes"]
    assert "acme" not in str(doc["search_notes"]) and "svc:payment-api" not in str(doc)


AUDITOR = ["--subject", "acme/user:auditor", "--purpose", "audit", "--as-of", LATER]
GOVERNED = (
    "Policy Payments change-management policy (policy:payments-change-management) governed "
    "svc:payment-api when release release-2026.07.23.1 (deploy:release-2026.07.23.1) "
    "finished at 2026-07-23T10:02:00Z"
)


def test_an_approval_question_months_later_reads_the_release_policy(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    """Before, no release of the day before as_of: no service, so "no policy valid at as_of
    that the subject may read" while one governed payment-api all along."""
    doc = _ask(invoke, "Did the 10:02 release follow the change policy?", *AUDITOR)
    statements = [c["statement"] for c in doc["claims"]]
    assert any(s.startswith(GOVERNED) for s in statements), statements
    assert not any(m["evidence_type"] == "policy" for m in doc["missing_evidence"])


def test_the_policy_governing_the_release_is_not_repeated_at_as_of(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    """The same policy record in force at the release's finish and at as_of: one fact, the
    release-time one (before, a second "is in force at <as_of>" fact repeated it)."""
    doc = _ask(invoke, "Was the last payment-api release approved?", *AUDITOR)
    policy = [c["statement"] for c in doc["claims"] if c["statement"].startswith("Policy ")]
    assert len(policy) == 1 and policy[0].startswith(GOVERNED), policy
