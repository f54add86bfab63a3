"""Who owns an alert or a runbook version: its own OWNS records (team -> alert | runbook).

Found after the fact: "Who owns alert:PaymentApiHighErrorRate?" answered `partial` with "no
OWNS relationship valid at as_of" although the dataset records payments-core as its owner
(the card's `runbook --alert` shows it): only a service's owners were read.
"""

from __future__ import annotations

import json

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
