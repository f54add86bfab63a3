"""Who owns an alert or a runbook version: its own OWNS records (team -> alert | runbook).

Found after the fact: "Who owns alert:PaymentApiHighErrorRate?" answered `partial` with "no
OWNS relationship valid at as_of" although the dataset records payments-core as its owner
(the card's `runbook --alert` shows it): only a service's owners were read.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import investigate_json

BOB = ("--subject", "acme/user:bob", "--json")


def _owner_claims(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"] if " OWNS " in c["statement"]]


def test_an_alert_and_a_runbook_version_have_their_own_owners(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    alert = json.loads(invoke("investigate", "Who owns alert:PaymentApiHighErrorRate?", *BOB).out)
    assert alert["status"] == "complete", alert["missing_evidence"]
    owners = _owner_claims(alert)
    assert any("team:payments-core OWNS alert:PaymentApiHighErrorRate" in s for s in owners), owners
    replay = invoke("replay", alert["run_id"], "--subject", "acme/user:bob", "--json")
    assert replay.code == 0 and json.loads(replay.out)["verified"], replay

    runbook = json.loads(
        invoke("investigate", "Which team owns runbook:payment-recovery@v4?", *BOB).out
    )
    owners = _owner_claims(runbook)
    assert any("team:payments-platform OWNS runbook:payment-recovery@v4" in s for s in owners), (
        owners
    )
    # Another tenant's subject reads no acme owner.
    globex = json.loads(
        invoke("investigate", "Who owns alert:PaymentApiHighErrorRate?", "--subject",
               "globex/user:mallory", "--json").out
    )  # fmt: skip
    assert "payments-core" not in json.dumps(globex["claims"])


def _ownership_gaps(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [
        m["description"]
        for m in doc["missing_evidence"]
        if m["evidence_type"] == "ownership" and m["required"]
    ]


def test_the_owner_of_an_alert_before_it_existed_is_a_gap_not_the_services_owner(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # The alert and its OWNS record are valid from 2025-06-01. Asked "then" as of 2025-05-01,
    # the answer was `complete` with the service's owner and no gap.
    question = "Who owned the PaymentApiHighErrorRate alert then?"
    before = json.loads(
        invoke("investigate", question, "--as-of", "2025-05-01T00:00:00Z", *BOB).out
    )
    assert before["status"] == "partial", before["missing_evidence"]
    assert before["stop_reason"] == "no_progress"
    gaps = _ownership_gaps(before)
    assert len(gaps) == 1, gaps
    assert "no owner of alert:PaymentApiHighErrorRate is recorded at" in gaps[0]
    assert "alert:PaymentApiHighErrorRate itself is not recorded then" in gaps[0]
    assert "as_of, 2025-05-01T00:00:00Z" in gaps[0]
    assert not any("OWNS alert:" in s for s in _owner_claims(before))

    # A runbook version asked about before it was written: the same, one gap naming it.
    runbook = json.loads(
        invoke("investigate", "Who owned runbook:payment-recovery@v4 then?", "--as-of",
               "2026-06-15T00:00:00Z", *BOB).out
    )  # fmt: skip
    assert runbook["status"] == "partial"
    gaps = _ownership_gaps(runbook)
    assert len(gaps) == 1 and "runbook:payment-recovery@v4 itself is not recorded then" in gaps[0]

    # At its valid_from it is owned; the gap is only about 'then' (an earlier error).
    at_start = json.loads(
        invoke("investigate", question, "--as-of", "2025-06-01T00:00:00Z", *BOB).out
    )
    assert any(
        "team:payments-core OWNS alert:PaymentApiHighErrorRate" in s
        for s in _owner_claims(at_start)
    )
    assert not any("itself is not recorded" in g for g in _ownership_gaps(at_start))

    # After it existed, and without --as-of: its own owner, complete.
    for flags in (("--as-of", "2026-08-01T00:00:00Z"), ()):
        after = json.loads(invoke("investigate", question, *flags, *BOB).out)
        assert after["status"] == "complete", after["missing_evidence"]
        assert any(
            "team:payments-core OWNS alert:PaymentApiHighErrorRate" in s
            for s in _owner_claims(after)
        )


# An alert owned by another team than the service it fired on, and a service no alert fired on.
GIFTCARDS = Path(__file__).parent / "fixtures" / "alert-owners" / "giftcards.yaml"


def test_the_owner_of_the_alert_that_fired_on_a_service_is_the_alerts(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # Before (h29-claims item 1): giftcards' owner alone, `complete`, the alert not read.
    assert invoke("ingest", str(GIFTCARDS)).code == 0
    at = ("--as-of", "2026-07-23T11:00:00Z")
    doc = investigate_json(invoke, "who owns the alert that fired on giftcards?", *at, *BOB[:2])
    owners = _owner_claims(doc)
    assert any(s.endswith("team:alert-desk OWNS alert:GiftcardsLagHigh (valid "
                          "2025-01-01T00:00:00Z to open)") for s in owners), owners  # fmt: skip
    assert doc["status"] == "complete", doc["missing_evidence"]
    # No alert fired on loyalty by then (alert:LoyaltyLate fires on it from 2026-08-01): a
    # gap, never its service's owner, nor the owner of an alert that fired only later.
    doc = investigate_json(invoke, "Which team owns the alert on loyalty?", *at, *BOB[:2])
    assert doc["status"] == "partial", doc["missing_evidence"]
    assert _ownership_gaps(doc) == [
        "no alert is recorded as firing on svc:loyalty by as_of 2026-07-23T11:00:00Z in the "
        "records this subject may read, so no alert's owner is stated (the owner of the "
        "service is not the alert's owner)"
    ], doc["missing_evidence"]
    assert not any(" OWNS alert:" in s for s in _owner_claims(doc)), doc["claims"]
    # Once alert:LoyaltyLate has fired on it, its owner is the answer.
    later = ("--as-of", "2026-08-02T00:00:00Z")
    doc = investigate_json(invoke, "Which team owns the alert on loyalty?", *later, *BOB[:2])
    assert any("team:alert-desk OWNS alert:LoyaltyLate" in s for s in _owner_claims(doc)), doc
    assert doc["status"] == "complete", doc["missing_evidence"]
