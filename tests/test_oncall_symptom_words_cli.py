"""On-call symptoms said with where they show ("5xx errors on frontend", "5xx on
payment-api"), on the demo data (payments-incident), through the CLI against a real Neo4j.

Before (e25-words finding 5, h26 item 1), "5xx errors on frontend" took the incident path
alone (no claim, `complete`) and "5xx on payment-api" stated the service, `complete`: neither
asked the runbook search, though `investigator runbook "<words>"` is what the on-call would
have typed next."""

from __future__ import annotations

import pytest
from conftest import investigate_json

BOB = ["--subject", "acme/user:bob", "--deadline-seconds", "600"]


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


def test_a_symptom_on_a_service_names_the_runbook_in_force(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = investigate_json(invoke, "5xx on payment-api", *BOB, "--as-of", "2026-07-23T10:05:00Z")
    statements = _statements(doc)
    assert any(
        s.startswith(
            "Runbook Payment recovery runbook v3 (runbook:payment-recovery@v3) is the "
            "version in force"
        )
        for s in statements
    ), statements
    assert "applicable_runbook" in doc["intents"], doc["intents"]


def test_a_symptom_no_runbook_fits_says_the_search_found_none(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = investigate_json(
        invoke, "5xx errors on frontend", *BOB, "--as-of", "2026-07-23T10:05:00Z"
    )
    gaps = [m["description"] for m in doc["missing_evidence"] if m["evidence_type"] == "runbook"]
    assert any(
        g.startswith("the runbook search for '5xx errors on frontend' found none: no runbook fits")
        for g in gaps
    ), doc["missing_evidence"]
    assert doc["status"] == "partial"


def test_a_bare_service_name_asks_its_state_not_a_runbook(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # Session 34: a service typed alone is its state and owner (tests/test_name_alone_cli.py),
    # never a runbook search for its name as a symptom.
    doc = investigate_json(invoke, "payment-api", *BOB, "--as-of", "2026-07-23T10:05:00Z")
    assert doc["intents"] == ["ownership_at_time", "service_status"], doc["intents"]
    assert any(
        s.endswith("1 incident open, 1 alert firing, no release rolling out")
        for s in _statements(doc)
    ), _statements(doc)


# -- "in the last hour", "in July 2026", "since March": the period asked is searched ---------

PAY = ["--service", "svc:payment-api"]
RELEASE_IN = (
    "Release deploy:release-2026.07.23.1 finished at 2026-07-23T10:02:00Z, in the period asked, "
)
RULES_IN = (
    "Change risk rule publication RR-2026-07-23a (change:risk-rules-RR-2026-07-23a) happened "
    "at 2026-07-23T10:02:21Z, in the period asked, "
)


def test_the_last_half_hour_lists_the_changes_inside_it(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    flags = [*PAY, *BOB, "--as-of", "2026-07-23T10:30:00Z"]
    doc = investigate_json(invoke, "what changed in the last 30 minutes", *flags)
    window = "from 2026-07-23T10:00:00Z to 2026-07-23T10:30:00Z ('in the last 30 minutes')"
    statements = _statements(doc)
    assert RELEASE_IN + window in statements, statements
    assert RULES_IN + window in statements, statements
    assert doc["unresolved_time_words"] == [], doc["unresolved_time_words"]


def test_a_month_is_placed_as_a_period(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = investigate_json(
        invoke, "what changed in July 2026", *PAY, *BOB, "--as-of", "2026-08-01T00:00:00Z"
    )
    window = "from 2026-07-01T00:00:00Z to 2026-07-31T23:59:59Z ('in July 2026')"
    statements = _statements(doc)
    assert RELEASE_IN + window in statements, statements
    assert doc["unresolved_time_words"] == [], doc["unresolved_time_words"]


def test_since_a_month_runs_to_as_of(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = investigate_json(
        invoke, "what changed since March", *PAY, *BOB, "--as-of", "2026-07-23T10:30:00Z"
    )
    window = "from 2026-03-01T00:00:00Z to 2026-07-23T10:30:00Z ('since March')"
    statements = _statements(doc)
    assert RELEASE_IN + window in statements, statements
    # The earlier release of the same service is in the period too.
    assert any(s.startswith("Release deploy:release-2026.07.20.2 finished") for s in statements)
    assert doc["unresolved_time_words"] == [], doc["unresolved_time_words"]


# -- a service said in words is a subject; a team read is a visible name -----------------


def test_a_service_said_in_words_is_the_subject(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    flags = ["--subject", "acme/user:alice", "--deadline-seconds", "600"]
    doc = investigate_json(
        invoke, "hikari pool exhausted payment api fix", *flags, "--as-of", "2026-07-23T10:05:00Z"
    )
    gaps = [m["description"] for m in doc["missing_evidence"]]
    assert "no matching entity the subject may read" not in gaps, gaps
    statements = _statements(doc)
    assert "Service svc:payment-api: payment-api" in statements, statements
    # What to fix it with: the service's runbook in force then.
    assert any(s.startswith("Runbook Payment recovery runbook v3") for s in statements), statements


@pytest.mark.parametrize(
    ("subject", "visible"), [("acme/user:alice", True), ("globex/user:mallory", False)]
)
def test_a_team_the_subject_reads_is_no_unresolved_name(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, subject: str, visible: bool
) -> None:
    doc = investigate_json(
        invoke,
        "what does payments-platform own?",
        "--subject",
        subject,
        "--deadline-seconds",
        "600",
    )
    unresolved = [n["text"] for n in doc["unresolved_names"]]
    if visible:
        assert unresolved == [], doc["unresolved_names"]
        assert any("team:payments-platform OWNS" in s for s in _statements(doc))
    else:
        assert unresolved == ["payments-platform"], doc["unresolved_names"]
        assert "payments-platform" not in str(doc["claims"])


# -- rollback: the runbook's step quoted; the postmortem's rollback cited ------------------

ROLLBACK_STEP = (
    '"2. If the pool is exhausted after a release, roll back the release with '
    '`deployctl rollback payment-api`."'
)


def test_should_we_roll_back_quotes_the_runbook_step(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    flags = [*PAY, *BOB, "--as-of", "2026-07-23T10:05:00Z"]
    doc = investigate_json(invoke, "should we roll back", *flags)
    [runbook] = [s for s in _statements(doc) if s.startswith("Runbook Payment recovery runbook v3")]
    assert runbook.endswith(
        f"[wiki/runbooks/payment-recovery.md@v3#recovery]: its rollback step, {ROLLBACK_STEP}"
    ), runbook


def test_was_the_runbook_followed_cites_the_rollback_on_record(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    flags = [*PAY, *BOB, "--as-of", "2026-07-23T11:00:00Z"]
    doc = investigate_json(invoke, "was the runbook followed", *flags)
    recorded = [c for c in doc["claims"] if "records a rollback" in c["statement"]]
    assert len(recorded) == 1, doc["claims"]
    assert '"Fix: rollback at 10:41."' in recorded[0]["statement"], recorded
    assert recorded[0]["epistemic_status"] == "inference", recorded
    # What the responders did beyond it is still not on record: the gap stays.
    gaps = {m["evidence_type"] for m in doc["missing_evidence"] if m["required"]}
    assert "runbook_followed" in gaps, doc["missing_evidence"]
    assert doc["status"] == "partial"
