"""On-call questions in the words people type (e25-words findings 3, 4): rollback, "rca",
"why r", plural deploys, "was it the release", "did they fail over", and a question no rule
reads. Before, each of these became a bare name lookup reported `complete` with "Missing
evidence none", or a release listing with no verdict."""

from __future__ import annotations

from datetime import UTC, datetime

import neo4j
import pytest
from conftest import investigate_json

from investigator.planner import detect_intents, unread_words, unrecorded_asks
from investigator.rubric import Intent
from investigator.timeline import time_references

BOB_AT_1005 = ["--subject", "acme/user:bob", "--as-of", "2026-07-23T10:05:00Z"]
PAYMENT_API = ["--service", "svc:payment-api"]
DEADLINE = ["--deadline-seconds", "600"]


@pytest.mark.parametrize(
    "question",
    ["should we roll back", "rollback payment-api?", "should we revert the release?"],
)
def test_rollback_asks_for_the_verdict_and_the_runbook(question: str) -> None:
    assert detect_intents(question) == [
        Intent.APPLICABLE_RUNBOOK,
        Intent.DEPLOYMENT_CORRELATION,
    ]


@pytest.mark.parametrize(
    "question", ["rca pay-4097", "why r payments failing", "y r payments failing"]
)
def test_hurried_cause_words_ask_for_the_root_cause(question: str) -> None:
    assert detect_intents(question) == [Intent.ROOT_CAUSE]


def test_plural_deploys_and_was_it_the_release() -> None:
    assert detect_intents("recent deploys payments") == [Intent.RELEASE_LOOKUP]
    assert detect_intents("any deployments or releases?") == [Intent.RELEASE_LOOKUP]
    assert detect_intents("was it the release") == [Intent.DEPLOYMENT_CORRELATION]
    # The release and another suspect: the release's verdict and the other candidates
    # (h32-intents), as "was release X the cause, or the risk rule change?" reads.
    assert detect_intents("was it the deploy or the risk rules") == [
        Intent.DEPLOYMENT_CORRELATION,
        Intent.ROOT_CAUSE,
    ]
    # "When was it released?" still asks for the release, not a verdict.
    assert detect_intents("when was it released?") == [Intent.RELEASE_LOOKUP]


def test_an_action_taken_is_an_unrecorded_ask() -> None:
    assert unrecorded_asks("did they fail over payment-db?") == ["response_action"]
    # The runbook in force and the incident (whose reports may state what was done).
    assert detect_intents("did they fail over payment-db?") == [
        Intent.APPLICABLE_RUNBOOK,
        Intent.INCIDENT_LOOKUP,
    ]
    # Asked as done, a rollback is an action, not "should we roll back".
    assert unrecorded_asks("did we roll back?") == ["response_action"]
    assert Intent.DEPLOYMENT_CORRELATION not in detect_intents("did we roll back?")
    # Failover named as a topic is no action asked about.
    assert unrecorded_asks("which runbook covers a payment-db failover?") == []
    # The action as a noun, or "the fix", asked after the fact (h31-actions); a decision to
    # take, a time word or "what is the fix" is none.
    for asked in (
        "when was the rollback?",
        "was the rollback successful?",
        "what fixed it?",
        "how was it mitigated?",
        "what was the fix for PAY-4097?",
        "did the fix work?",
    ):
        assert unrecorded_asks(asked) == ["response_action"], asked
        assert Intent.DEPLOYMENT_CORRELATION not in detect_intents(asked), asked
    for other in (
        "should we do the rollback?",
        "who owned payment-api before the rollback?",
        "what is the fix for PAY-4097?",
        "What did the fix change?",
    ):
        assert unrecorded_asks(other) == [], other


def test_unread_words_only_for_a_question_read_as_names() -> None:
    lookup = [Intent.ENTITY_LOOKUP]
    assert unread_words("is payment-api ok?", lookup) == "ok"
    # A bare name, a title, an entity or document question: nothing left unread.
    for question in (
        "payment-api",
        "tell me about svc:ledger",
        "What do the postmortems say?",
        "DRAFT postmortem: risk rules broke payments",
        "What is svc:b?",  # an id of one character after the colon is a name too
    ):
        assert unread_words(question, lookup) is None, question
    assert unread_words("is payment-api ok?", [Intent.OWNERSHIP_AT_TIME]) is None


def test_should_we_roll_back_gives_the_verdict_and_the_rollback_step(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    doc = investigate_json(invoke, "should we roll back", *PAYMENT_API, *BOB_AT_1005, *DEADLINE)
    assert doc["intents"] == ["applicable_runbook", "deployment_correlation"], doc["intents"]
    assert doc["verdict"] == "likely", doc["verdict"]
    statements = "\n".join(c["statement"] for c in doc["claims"])
    assert "runbook:payment-recovery@v3" in statements, statements
    assert "deploy:release-2026.07.23.1" in statements, statements


def test_was_it_the_release_is_judged(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    doc = investigate_json(
        invoke,
        "was it the release",
        *PAYMENT_API,
        "--subject",
        "acme/user:carol",
        "--as-of",
        "2026-07-23T10:30:00Z",
        *DEADLINE,
    )
    assert doc["intents"] == ["deployment_correlation"], doc["intents"]
    assert doc["verdict"] in {"likely", "uncertain"}, doc["verdict"]
    assert doc["verdict"] is not None


def test_a_question_no_rule_reads_is_partial_and_says_so(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    # "is payment-api ok?" is read since session 31 (service_status, test_incident_status_cli).
    report = invoke("investigate", "does payment-api scale?", *BOB_AT_1005, *DEADLINE)
    assert report.code == 0, report
    assert "Status     partial" in report.out, report.out
    assert (
        "  question (required): the question's words 'scale' ask something it does not read: "
        "only the names in it were looked up; ask e.g. who owns X, what caused X, did the "
        "release cause X, should we roll back X, what changed before X, which runbook "
        "applies to X, what depends on X"
    ) in report.out.splitlines(), report.out


def test_did_they_fail_over_says_no_action_is_recorded(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    doc = investigate_json(
        invoke,
        "did they fail over payment-db?",
        "--subject",
        "acme/user:bob",
        "--as-of",
        "2026-07-23T11:00:00Z",
        *DEADLINE,
    )
    assert doc["status"] == "partial", doc["status"]
    gaps = {m["evidence_type"] for m in doc["missing_evidence"]}
    assert "response_action" in gaps, doc["missing_evidence"]


def test_last_hour_is_a_window_ending_at_as_of() -> None:
    as_of = datetime(2026, 7, 23, 12, 30, tzinfo=UTC)
    period = time_references("what changed in the last hour", as_of).period
    assert period is not None
    assert (period[0].at, period[1].at) == (datetime(2026, 7, 23, 11, 30, tzinfo=UTC), as_of)
    period = time_references("any deploys over the past 3 days?", as_of).period
    assert period is not None and period[0].at == datetime(2026, 7, 20, 12, 30, tzinfo=UTC)
    # "Last week" alone names a calendar week: the ISO week before as_of's (Monday to
    # Sunday, UTC), not the 7 days before as_of ("the last week" is those).
    period = time_references("what happened last week", as_of).period
    assert period is not None
    assert (period[0].at, period[1].at) == (
        datetime(2026, 7, 13, tzinfo=UTC),
        datetime(2026, 7, 19, 23, 59, 59, tzinfo=UTC),
    )


def test_what_changed_in_the_last_hour_lists_nothing_from_earlier(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    flags = [*PAYMENT_API, "--subject", "acme/user:bob", "--as-of", "2026-07-23T12:30:00Z"]
    doc = investigate_json(invoke, "what changed in the last hour", *flags, *DEADLINE)
    assert doc["confounders"] == [], doc["confounders"]
    statements = [c["statement"] for c in doc["claims"]]
    assert not [s for s in statements if "before PAY-4097 was first seen" in s], statements
    # The hour itself was searched (h26 item 2): nothing in it is what the answer says.
    gaps = [
        m["description"] for m in doc["missing_evidence"] if m["evidence_type"] == "change_event"
    ]
    assert gaps == [
        "no release of the services asked about and no other change the subject may read is "
        "recorded from 2026-07-23T11:30:00Z to 2026-07-23T12:30:00Z ('in the last hour'); "
        "nor an owner handover, a runbook version or a dependency of svc:payment-api beginning or "
        "ending in it"
    ], doc["missing_evidence"]
    assert doc["status"] == "complete", doc["missing_evidence"]


@pytest.mark.parametrize(
    ("question", "gap"),
    [
        (
            "who owned it then",
            "ownership (required): the question names no service, error code, release or "
            "incident (and no --service was given), so no owner was looked for: name one "
            '(--service X, or e.g. "who owned X then?")',
        ),
        (
            "what broke",
            "mechanism (required): the question names no service, error code, release or "
            "incident (and no --service was given), so no mechanism was looked for: name one "
            '(--service X, or e.g. "what broke X?")',
        ),
    ],
)
def test_naming_nothing_gets_no_false_reason(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, question: str, gap: str
) -> None:
    report = invoke("investigate", question, "--subject", "acme/user:bob", *DEADLINE)
    assert report.code == 0, report
    assert "Status     partial" in report.out, report.out
    assert f"  {gap}" in report.out.splitlines(), report.out


def test_a_hint_names_no_service_of_another_tenant(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    # e32-qa m6: globex (mallory) has no payment-api; its hint named it all the same.
    report = invoke(
        "investigate",
        "who owned it then",
        "--subject",
        "globex/user:mallory",
        "--as-of",
        "2026-07-23T10:30:00Z",
        *DEADLINE,
    )
    assert report.code == 0, report
    gaps = report.out.split("\nMissing evidence\n", 1)[1]
    assert 'name one (--service X, or e.g. "who owned X then?")' in gaps, report.out
    assert "payment-api" not in gaps, report.out
