"""An investigator after the fact (h39-walk-time), on the demo graph over Bolt: a day written
in Chinese with its year is the asked time, and a Chinese "before" / "after" written after a
day (之前, 以后) puts the asked time on that side of it, as "before 2026-07-24" does.

Ownership of payment-api moved from payments-core to payments-platform at 2026-07-24T00:00Z,
so each of these questions asked now has one right owner and a wrong one.
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.usefixtures("demo_graph", "patient_reads")

ALICE = ["--subject", "acme/user:alice", "--json"]
CORE = "team:payments-core OWNS svc:payment-api"
PLATFORM = "team:payments-platform OWNS svc:payment-api"


def _owner_at_asked_time(invoke, question: str) -> tuple[dict, str]:  # type: ignore[no-untyped-def]
    result = invoke("investigate", question, *ALICE)
    assert result.code == 0, result
    doc = json.loads(result.out)
    asked = [
        c["statement"] for c in doc["claims"] if "the time named in the question" in c["statement"]
    ]
    assert len(asked) == 1, doc["claims"]
    return doc, asked[0]


def test_a_chinese_day_with_its_year_is_the_time_asked(cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # Before, 2026年7月23日 was dropped without a word (neither read nor listed as not
    # resolved): `complete`, the owner at now (payments-platform) the only answer.
    doc, claim = _owner_at_asked_time(invoke, "2026年7月23日谁负责 payment-api？")
    assert doc["status"] == "complete"
    assert doc["unresolved_time_words"] == []
    assert claim.startswith(
        "At the time named in the question, 2026-07-23T00:00:00Z (explicit, a day: its start, "
        "00:00 UTC): "
    ), claim
    assert CORE in claim and PLATFORM not in claim


@pytest.mark.parametrize(
    ("question", "at", "owner"),
    [
        # before a day: its last second before it starts (before, its start: the new owner)
        ("2026年7月24日之前谁负责 payment-api？", "2026-07-23T23:59:59Z", CORE),
        ("7月24日前谁负责 payment-api？", "2026-07-23T23:59:59Z", CORE),
        # after a day: its end (before, its start)
        ("7月23日以后谁负责 payment-api？", "2026-07-24T00:00:00Z", PLATFORM),
    ],
)
def test_a_chinese_side_after_a_day_is_that_side_of_it(  # type: ignore[no-untyped-def]
    cli_env, invoke, question: str, at: str, owner: str
) -> None:
    doc, claim = _owner_at_asked_time(invoke, question)
    assert doc["status"] == "complete"
    assert claim.startswith(f"At the time named in the question, {at} (explicit, "), claim
    assert owner in claim, claim
