"""What a team owned, asked in the words users type, through the CLI against the demo dataset
on a real Neo4j: the team is found ("which services belong to payments-core", "payments-core
team services"), at times before, at and after each ownership change of the demo, and a
subject who may not read the team (mallory, tenant globex) is told what a team that does not
exist is, word for word.

Demo: team:payments-core owns svc:payment-api until 2026-07-24 (team:payments-platform
since), svc:ledger, alert:PaymentApiHighErrorRate from 2025-06-01, and
runbook:payment-recovery@v3 (in force 2026-07-01 to 2026-07-25; v4, payments-platform's,
since).
"""

from __future__ import annotations

import neo4j
import pytest
from conftest import investigate_json

ALICE = ["--subject", "acme/user:alice", "--deadline-seconds", "600"]
MALLORY = ["--subject", "globex/user:mallory", "--deadline-seconds", "600"]


def _owned(doc: dict, team: str = "team:payments-core") -> list[str]:  # type: ignore[type-arg]
    return sorted(
        c["statement"].rsplit(f"{team} OWNS ", 1)[1].split(" ", 1)[0]
        for c in doc["claims"]
        if f"{team} OWNS " in c["statement"]
    )


def _required(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [m["description"] for m in doc["missing_evidence"] if m["required"]]


# Before: no claim, and "no OWNS relationship valid at as_of" or "no matching entity" (the
# team's words were not read as a team), or the owner of payment-api instead.
@pytest.mark.parametrize(
    ("question", "owned"),
    [
        ("which services belong to payments-core", ["svc:ledger"]),
        ("payments-core team services", ["svc:ledger"]),
        ("what services does payments-core own", ["svc:ledger"]),
        ("what is owned by payments-core", ["alert:PaymentApiHighErrorRate", "svc:ledger"]),
        ("services of the payments core team", ["svc:ledger"]),
        ("what did team payments-core own", ["alert:PaymentApiHighErrorRate", "svc:ledger"]),
        ("which alerts belong to payments-core?", ["alert:PaymentApiHighErrorRate"]),
    ],
)
def test_the_words_users_type_find_the_team(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, question: str, owned: list[str]
) -> None:
    doc = investigate_json(invoke, question, *ALICE)
    assert _owned(doc) == owned, doc["claims"]
    assert doc["status"] == "complete", _required(doc)
    assert not any("team:payments-platform OWNS" in c["statement"] for c in doc["claims"])


@pytest.mark.parametrize(
    "question",
    ["which services belong to payments-core", "payments-core team services"],
)
def test_a_team_the_subject_may_not_read_is_told_as_none(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, question: str
) -> None:
    hidden = investigate_json(invoke, question, *MALLORY)
    absent = investigate_json(invoke, question.replace("payments-core", "payments-nil"), *MALLORY)
    assert hidden["claims"] == absent["claims"] == []
    said = [g.replace("payments-core", "X") for g in _required(hidden)]
    assert said == [g.replace("payments-nil", "X") for g in _required(absent)]
    assert said == [
        "no team named 'X' is recorded in the records this subject may read: what it owned "
        "is not known"
    ]


# Before, at and after each change: payment-api moved on 2026-07-24, runbook v3 ended on
# 2026-07-25, the alert's record starts on 2025-06-01.
@pytest.mark.parametrize(
    ("day", "core", "platform"),
    [
        ("2025-05-31", ["svc:ledger", "svc:payment-api"], []),
        (
            "2025-06-01",
            ["alert:PaymentApiHighErrorRate", "svc:ledger", "svc:payment-api"],
            [],
        ),
        (
            "2026-07-23",
            [
                "alert:PaymentApiHighErrorRate",
                "runbook:payment-recovery@v3",
                "svc:ledger",
                "svc:payment-api",
            ],
            [],
        ),
        (
            "2026-07-24",
            ["alert:PaymentApiHighErrorRate", "runbook:payment-recovery@v3", "svc:ledger"],
            ["svc:payment-api"],
        ),
        (
            "2026-07-25",
            ["alert:PaymentApiHighErrorRate", "svc:ledger"],
            ["runbook:payment-recovery@v4", "svc:payment-api"],
        ),
    ],
)
def test_what_each_team_owned_around_each_change(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, day: str, core: list[str], platform: list[str]
) -> None:
    doc = investigate_json(invoke, f"what belonged to payments-core on {day}?", *ALICE)
    assert _owned(doc) == core, doc["claims"]
    doc = investigate_json(invoke, f"what is payments-platform responsible for on {day}?", *ALICE)
    assert _owned(doc, "team:payments-platform") == platform, doc["claims"]
    if not platform:
        assert any(
            "no OWNS record of team:payments-platform holds at" in g for g in _required(doc)
        ), _required(doc)


def test_no_as_of_is_now(demo_graph: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # No --as-of: now, after payment-api moved to payments-platform.
    now = investigate_json(invoke, "payments-core team services", *ALICE)
    assert _owned(now) == ["svc:ledger"], now["claims"]
