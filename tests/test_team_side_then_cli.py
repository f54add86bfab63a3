"""What a team owned "then", through the CLI against the demo dataset on a real Neo4j: with a
service given (--service) the team's own records are still read and stated (before, the
service's owners alone were, and the team side said it held nothing), each time around the
demo's ownership change, as known at --known-at; time words it cannot place ("before the
reorg", "then" with no error to place it at) are a required gap naming them; a subject who
may not read the team is told nothing of it.

Demo: team:payments-core owns svc:payment-api until 2026-07-24 (team:payments-platform
since, recorded 2026-07-20T16:00Z), svc:ledger, alert:PaymentApiHighErrorRate from 2025-06-01
and runbook:payment-recovery@v3 (in force 2026-07-01 to 2026-07-25). The first PAY-4097
error ("then") is at 2026-07-23T10:02:38Z.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import investigate_json

from graph_schema.bundle import load_bundle
from graph_schema.writer import ingest_bundle

LONG = ["--deadline-seconds", "600"]
ALICE = ["--subject", "acme/user:alice", *LONG]
BOB = ["--subject", "acme/user:bob", *LONG]
EVE = ["--subject", "acme/user:eve", *LONG]
MALLORY = ["--subject", "globex/user:mallory", *LONG]
PAYMENT_API = ["--service", "svc:payment-api"]
THEN = "which services belonged to payments-core then?"

# An acme subject with no `internal` label: the teams and their OWNS records are hidden.
EVE_PRINCIPAL = """
tenant: acme
principals:
  - {id: user:eve, name: Eve, labels: [incident], purposes: [incident_investigation],
     source_id: src:iam, recorded_at: "2026-01-05T09:00:00Z"}
"""


@pytest.fixture(scope="module")
def demo_with_eve(demo_graph: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = tmp_path_factory.mktemp("eve")
    (folder / "40-acme-eve.yaml").write_text(EVE_PRINCIPAL, encoding="utf-8")
    ingest_bundle(demo_graph, load_bundle(Path(folder)))


def _stated(doc: dict, team: str = "team:payments-core") -> list[str]:  # type: ignore[type-arg]
    """What the claims say `team` owned at the first PAY-4097 error ("then") or at the day
    asked: every claim but those said at as_of alone."""
    return sorted(
        c["statement"].rsplit(f"{team} OWNS ", 1)[1].split(" ", 1)[0]
        for c in doc["claims"]
        if f"{team} OWNS " in c["statement"] and not c["statement"].startswith("At as_of")
    )


def _required(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [m["description"] for m in doc["missing_evidence"] if m["required"]]


# Before: payment-api alone (the service side's owner then), `partial`, and the gap "no OWNS
# record of team:payments-core of a service holds at the first PAY-4097 error".
@pytest.mark.parametrize("subject", [ALICE, BOB], ids=["alice", "bob"])
def test_what_the_team_owned_then_with_a_service_given(  # type: ignore[no-untyped-def]
    demo_with_eve, cli_env, invoke, subject: list[str]
) -> None:
    doc = investigate_json(invoke, THEN, *PAYMENT_API, *subject)
    assert _stated(doc) == ["svc:ledger", "svc:payment-api"], doc["claims"]
    assert doc["status"] == "complete", _required(doc)
    assert any(
        c["statement"].startswith("At the first PAY-4097 error, 2026-07-23T10:02:38Z")
        and "team:payments-core OWNS svc:ledger" in c["statement"]
        for c in doc["claims"]
    ), doc["claims"]


def test_a_team_that_owned_no_service_then_says_so(  # type: ignore[no-untyped-def]
    demo_with_eve, cli_env, invoke
) -> None:
    doc = investigate_json(
        invoke, THEN.replace("payments-core", "payments-platform"), *PAYMENT_API, *ALICE
    )
    assert _stated(doc, "team:payments-platform") == [], doc["claims"]
    assert _required(doc) == [
        "no OWNS record of team:payments-platform of a service holds at the first PAY-4097 "
        "error, 2026-07-23T10:02:38Z (the question says 'then') in the records this subject "
        "may read: what it owned then is not known"
    ]


# Before, at and after payment-api's handover (2026-07-24): before, the team side was not
# read with --service (payments-platform's service-side claim beside a gap saying it held
# nothing, payments-core's ledger never listed).
@pytest.mark.parametrize(
    ("day", "core", "platform"),
    [
        ("2026-07-23", ["svc:ledger", "svc:payment-api"], []),
        ("2026-07-24", ["svc:ledger"], ["svc:payment-api"]),
        ("2026-07-25", ["svc:ledger"], ["svc:payment-api"]),
    ],
)
def test_each_side_of_the_handover_with_a_service_given(  # type: ignore[no-untyped-def]
    demo_with_eve, cli_env, invoke, day: str, core: list[str], platform: list[str]
) -> None:
    doc = investigate_json(
        invoke, f"which services belonged to payments-core on {day}?", *PAYMENT_API, *ALICE
    )
    assert _stated(doc) == core, doc["claims"]
    assert doc["status"] == "complete", _required(doc)
    doc = investigate_json(
        invoke, f"which services belonged to payments-platform on {day}?", *PAYMENT_API, *ALICE
    )
    assert _stated(doc, "team:payments-platform") == platform, doc["claims"]
    assert doc["status"] == ("complete" if platform else "partial"), _required(doc)


def test_known_at_before_the_handover_was_recorded(  # type: ignore[no-untyped-def]
    demo_with_eve, cli_env, invoke
) -> None:
    # payments-platform's record of payment-api was written on 2026-07-20T16:00Z.
    doc = investigate_json(
        invoke,
        "which services belonged to payments-platform on 2026-07-25?",
        *PAYMENT_API,
        *ALICE,
        "--as-of",
        "2026-07-26T00:00:00Z",
        "--known-at",
        "2026-07-20T12:00:00Z",
    )
    assert _stated(doc, "team:payments-platform") == [], doc["claims"]
    assert any("no OWNS record of team:payments-platform" in g for g in _required(doc))


@pytest.mark.parametrize("subject", [EVE, MALLORY], ids=["eve", "mallory"])
def test_an_attacker_learns_nothing_of_the_team(  # type: ignore[no-untyped-def]
    demo_with_eve, cli_env, invoke, subject: list[str]
) -> None:
    hidden = investigate_json(invoke, THEN, *PAYMENT_API, *subject)
    absent = investigate_json(
        invoke, THEN.replace("payments-core", "payments-nil"), *PAYMENT_API, *subject
    )
    shown = json.dumps([hidden["claims"], hidden["evidence"], hidden["rejected"]])
    assert "team:payments-core" not in shown
    assert "Payments Core" not in shown
    said = [g.replace("payments-core", "X") for g in _required(hidden)]
    assert said == [g.replace("payments-nil", "X") for g in _required(absent)]
    assert (
        "no team named 'X' is recorded in the records this subject may read: what it owned "
        "is not known"
    ) in said


# Before: `partial (stop: evidence_sufficient)` and no required gap, only the Time line.
@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("what did payments-core own before the reorg?", "before the reorg"),
        (THEN, "then"),
    ],
)
def test_time_words_not_placed_are_a_required_gap(  # type: ignore[no-untyped-def]
    demo_with_eve, cli_env, invoke, question: str, words: str
) -> None:
    doc = investigate_json(invoke, question, *ALICE)
    assert doc["status"] == "partial"
    assert doc["unresolved_time_words"] == [words]
    gaps = [g for g in _required(doc) if g.startswith(f"the question says {words!r}")]
    assert len(gaps) == 1, _required(doc)
    assert "which is not placed in time" in gaps[0]
    assert "what team:payments-core owned then is not known" in gaps[0]
    # The answer at as_of is stated all the same.
    assert any("team:payments-core OWNS svc:ledger" in c["statement"] for c in doc["claims"])
