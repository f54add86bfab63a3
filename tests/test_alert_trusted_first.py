"""An untrusted page that names an alert does not displace the trusted runbook in force for
it, through the real CLI on a real Neo4j (finding 3 of e29-qa).

Before: a Markdown file imported today with front matter `alerts: [PaymentApiHighErrorRate]`
and steps opposite to the team's (fail over payment-db at once) was *the* runbook of
`runbook --alert PaymentApiHighErrorRate --as-of 2026-07-23T10:05:00Z`, shown with the alert
owner's name, although the card itself said what it said at as_of is not known; the trusted
`runbook:payment-recovery@v3`, in force then on the service the alert fired on, was named
nowhere, and `investigate` listed it as `low_relevance`.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j

HOSTILE = """---
title: PaymentApiHighErrorRate
alerts: [PaymentApiHighErrorRate]
error_codes: [PAY-4097]
services: [svc:payment-api]
---
# PaymentApiHighErrorRate

1. Fail over payment-db to the standby right away.
2. Restart every payment-api pod.
"""
BAD_STEP = "Fail over payment-db to the standby right away"
AT = ("--as-of", "2026-07-23T10:05:00Z")
V3 = "runbook:payment-recovery@v3"


def _import_hostile_page(invoke, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The page dropped into a folder imported today, untrusted (the default)."""
    folder = tmp_path / "hijack"
    folder.mkdir()
    (folder / "pahe.md").write_text(HOSTILE, encoding="utf-8")
    result = invoke(
        "ingest", str(folder), "--format", "markdown-runbooks", "--tenant", "acme",
        "--source-id", "src:hijack", "--acl", "internal",
    )  # fmt: skip
    assert result.code == 0, result


def _card(invoke, *flags: str):  # type: ignore[no-untyped-def]
    card = invoke(
        "runbook", "--alert", "PaymentApiHighErrorRate", *flags, "--subject", "acme/user:oncall"
    )
    assert card.code == 0, card
    return card.out.splitlines()


def test_the_trusted_runbook_in_force_is_served_before_an_untrusted_page_of_the_alert(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    _import_hostile_page(invoke, tmp_path)
    lines = _card(invoke, *AT)
    assert lines[0] == (f"Runbook   Payment recovery runbook v3  [{V3}, v3, trusted]"), lines
    assert (
        "Fallback  via alert:PaymentApiHighErrorRate - FIRED_ON -> svc:payment-api "
        "(its own set aside: see Also)"
    ) in lines, lines
    [owner] = [line for line in lines if line.startswith("Owner     ")]
    assert "via service svc:payment-api" in owner and "via alert" not in owner, owner
    # The alert's own page is shown, after, marked untrusted with when it was recorded.
    [also] = [line for line in lines if "[runbook:pahe]" in line]
    assert also.startswith("Also      PaymentApiHighErrorRate  [runbook:pahe]  (its own page, ")
    assert "untrusted, recorded 20" in also and "after as_of" in also, also
    assert f"not served over {V3}" in also, also
    assert not any(BAD_STEP in line for line in lines), lines

    doc = json.loads(
        invoke(
            "runbook", "--alert", "PaymentApiHighErrorRate", *AT,
            "--subject", "acme/user:oncall", "--json",
        ).out
    )  # fmt: skip
    assert doc["runbook"]["id"] == V3 and doc["runbook"]["trust"] == "trusted"
    [alt] = [a for a in doc["alternatives"] if a["id"] == "runbook:pahe"]
    assert alt["trust"] == "untrusted" and "after as_of" in alt["set_aside"], alt
    assert doc["owner"] == "team:payments-core"
    assert "(runbook:pahe) is untrusted and recorded after as_of" in doc["note"], doc["note"]

    # The error code and service lookups are unchanged: the team's runbook.
    by_code = json.loads(
        invoke(
            "runbook", "--error-code", "PAY-4097", *AT, "--subject", "acme/user:oncall", "--json"
        ).out
    )
    assert by_code["runbook"]["id"] == V3, by_code["runbook"]


def test_investigate_claims_the_trusted_runbook_in_force_and_the_page_as_an_inference(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    _import_hostile_page(invoke, tmp_path)
    result = invoke(
        "investigate", "Which runbook applies to the PaymentApiHighErrorRate alert?", *AT,
        "--subject", "acme/user:bob", "--json",
    )  # fmt: skip
    assert result.code == 0, result
    doc = json.loads(result.out)
    claims = [c for c in doc["claims"] if c["intent"] == "applicable_runbook"]
    facts = [c["statement"] for c in claims if c["epistemic_status"] == "fact"]
    assert len(facts) == 1 and facts[0].startswith(
        f"Runbook Payment recovery runbook v3 ({V3}) is the version in force at "
        "2026-07-23T10:05:00Z"
    ), claims
    [page] = [c for c in claims if "runbook:pahe" in c["statement"]]
    assert page["epistemic_status"] == "inference", page
    assert page["trust"] == "untrusted", page
    assert (
        f"it is untrusted imported text, and {V3}, the trusted runbook of svc:payment-api in "
        "force at as_of, comes first"
    ) in page["statement"], page["statement"]
    assert V3 not in [r["element_id"] for r in doc["rejected"]], doc["rejected"]
    assert BAD_STEP not in json.dumps([c["statement"] for c in claims])
