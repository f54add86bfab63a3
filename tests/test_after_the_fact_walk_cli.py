"""An investigator after the fact (h39-walk-time), on the demo graph over Bolt: a day written
in Chinese with its year is the asked time, and a Chinese "before" / "after" written after a
day (之前, 以后) puts the asked time on that side of it, as "before 2026-07-24" does; a day
written with dots is said not read, never dropped; a runbook text lookup searches without
the words of the time it is at.

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


@pytest.mark.parametrize(
    ("text", "runbook", "as_of"),
    [
        # before, "no runbook fits": 'midnight' and 'july' were searched for as page words
        (
            "payment recovery at midnight on July 25, 2026",
            "runbook:payment-recovery@v4",
            "2026-07-25T00:00:00Z",
        ),
        ("payment recovery at noon on 2026-07-24", "runbook:payment-recovery@v3", None),
        # a relative time: as_of is now minus 2 h (before, 'hours' and 'ago' sank the page)
        ("payment recovery 2 hours ago", "runbook:payment-recovery@v4", None),
        ("payment recovery yesterday at noon", "runbook:payment-recovery@v4", None),
    ],
)
def test_a_runbook_text_lookup_searches_without_the_words_of_its_time(  # type: ignore[no-untyped-def]
    cli_env, invoke, text: str, runbook: str, as_of: str | None
) -> None:
    result = invoke("runbook", text, "--subject", "acme/user:oncall", "--json")
    assert result.code == 0, result
    doc = json.loads(result.out)
    assert doc["as_of_from"] == "text", doc["time_note"]
    if as_of is not None:
        assert doc["as_of"] == as_of
    assert doc["runbook"] is not None, doc["note"]
    assert doc["runbook"]["id"] == runbook
    # No word of the time is said to be missing from every runbook.
    assert doc["note"] is None, doc["note"]


def test_a_day_written_with_dots_is_said_not_read(cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # Before, 24.07.2026 was dropped without a word: `complete`, the owner at now the answer
    # to a question about another day. Which part is the month is not guessed (as for
    # 07/23/2026): the run is `partial` and names the words.
    result = invoke("investigate", "who owned payment-api on 24.07.2026?", *ALICE)
    assert result.code == 0, result
    doc = json.loads(result.out)
    assert doc["unresolved_time_words"] == ["24.07.2026"]
    assert doc["status"] == "partial"


def test_the_day_of_the_incident_is_its_start(cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # Before, "on the day of the incident" was dropped without a word: `complete`, the owner
    # at now (payments-platform, since 07-24) the only answer.
    result = invoke("investigate", "who owned payment-api on the day of the incident?", *ALICE)
    assert result.code == 0, result
    doc = json.loads(result.out)
    assert doc["status"] == "complete" and doc["unresolved_time_words"] == []
    texts = [c["statement"] for c in doc["claims"]]
    assert any(
        t.startswith(
            "At the start of incident Payments authorization failures 2026-07-23, "
            "2026-07-23T10:02:38Z (the question says 'on the day of the incident'): "
        )
        and CORE in t
        for t in texts
    ), texts


def test_a_part_of_the_day_of_an_event_is_said_not_read(cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # Which hours "the night of the incident" means is not guessed: listed, `partial` (before,
    # dropped without a word and `complete` at now).
    result = invoke("investigate", "who owned payment-api the night of the incident?", *ALICE)
    assert result.code == 0, result
    doc = json.loads(result.out)
    assert doc["unresolved_time_words"] == ["the night of the incident"]
    assert doc["status"] == "partial"
