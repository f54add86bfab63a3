"""Two periods in one question ("between July 1 and July 10 and between July 20 and July
30"), and the note on a period read up to as_of, as a user of the CLI reads them, against the
real Neo4j with the demo dataset (runbook payment-recovery v3 valid 2026-07-01..07-25, v4 from
07-25; payment-api owned by payments-core until 07-24, then payments-platform).

The answer reads the first period and says, on a Time line and in `--json`, that the second
was not read (it once read the second period's last second as a point in time: "v4 in force
at the time named in the question, 2026-07-30T23:59:59Z", where v3 held until July 25)."""

from __future__ import annotations

import json

AS_OF = "2026-12-01T00:00:00Z"
BOB = ["--subject", "acme/user:bob", "--as-of", AS_OF]
TWO_PERIODS = "between July 1 and July 10 and between July 20 and July 30"
SECOND_NOT_READ = (
    "Time       not used: 'between July 20 and July 30': two periods asked; the answer reads "
    "'between July 1 and July 10'; ask 'between July 20 and July 30' separately"
)
FIRST_PERIOD = (
    "(the question says 'between July 1 and July 10': 2026-07-01T00:00:00Z to "
    "2026-07-10T23:59:59Z; no year given: the year of as_of, 2026)"
)


def _claims(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("  [")]


def test_runbook_over_two_periods_reads_the_first_and_says_the_second(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    question = f"Which runbook was in force for payment-api {TWO_PERIODS}?"
    report = invoke("investigate", question, *BOB)
    assert report.code == 0, report
    assert SECOND_NOT_READ in report.out
    claims = _claims(report.out)
    assert any(FIRST_PERIOD in c and "runbook:payment-recovery@v3" in c for c in claims), claims
    # The second period's end is no point in time the answer is about.
    assert "2026-07-30T23:59:59Z" not in report.out.replace(SECOND_NOT_READ, "")
    assert "the time named in the question" not in report.out

    data = json.loads(invoke("investigate", question, *BOB, "--json").out)
    assert {
        "words": "between July 20 and July 30",
        "reason": "other_period",
        "detail": "two periods asked; the answer reads 'between July 1 and July 10'; ask "
        "'between July 20 and July 30' separately",
    } in data["unresolved_time_reasons"]


def test_owners_and_changes_over_two_periods_say_the_second_was_not_read(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    report = invoke("investigate", f"Who owned payment-api {TWO_PERIODS}?", *BOB)
    assert report.code == 0, report
    assert SECOND_NOT_READ in report.out
    claims = _claims(report.out)
    assert any(FIRST_PERIOD in c and "team:payments-core OWNS" in c for c in claims), claims
    assert "2026-07-30T23:59:59Z" not in report.out.replace(SECOND_NOT_READ, "")

    report = invoke("investigate", f"What changed on payment-api {TWO_PERIODS}?", *BOB, "--json")
    assert report.code == 0, report
    data = json.loads(report.out)
    reasons = {u["words"]: u["reason"] for u in data["unresolved_time_reasons"]}
    assert reasons == {"between July 20 and July 30": "other_period"}, data
    # The period searched is quoted whole (it was "('between July 1')"): runbook v3 in force
    # from July 1 is its change (h33-changes; before, a gap said none was recorded).
    said = [c["statement"] for c in data["claims"]]
    assert any(
        "from 2026-07-01T00:00:00Z to 2026-07-10T23:59:59Z ('between July 1 and July 10')" in s
        and s.startswith("Runbook version runbook:payment-recovery@v3 ")
        for s in said
    ), said


def test_read_up_to_as_of_is_said_only_where_a_period_is_read(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    inside_july = ["--subject", "acme/user:bob", "--as-of", "2026-07-23T12:00:00Z"]
    note = (
        "'in July' runs to 2026-07-31T23:59:59Z, after as_of 2026-07-23T12:00:00Z: the period "
        "is read from 2026-07-01T00:00:00Z up to as_of"
    )
    report = invoke("investigate", "Which runbook applied to payment-api in July?", *inside_july)
    assert report.code == 0, report
    assert note in report.out
    claims = _claims(report.out)
    # v4 begins on July 25, after as_of: only v3 is in the month read up to as_of.
    assert [c for c in claims if "runbook:payment-recovery@v" in c] == [
        c for c in claims if "runbook:payment-recovery@v3" in c and "'in July'" in c
    ], claims
    assert "runbook:payment-recovery@v4" not in "".join(claims)

    # A cause question reads no period: no word of one read up to as_of.
    report = invoke(
        "investigate", "What caused the PAY-4097 errors on payment-api in July?", *inside_july
    )
    assert report.code == 0, report
    assert "runs to 2026-07-31T23:59:59Z" not in report.out
    assert "up to as_of" not in report.out
