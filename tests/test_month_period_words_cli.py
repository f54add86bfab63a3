"""A month asked about ("in July", "in July 2026"), as a user of the CLI reads the claims'
why, against the real Neo4j with the demo dataset: the question's words are quoted once and
the month's reading is said once (it was "the question says 'in July in July': ...; the
month's first instant, no year written: ...; the month's last second, no year written: ...")."""

from __future__ import annotations

AS_OF = "2026-12-01T00:00:00Z"
BOB = ["--subject", "acme/user:bob", "--as-of", AS_OF]
JULY = "2026-07-01T00:00:00Z to 2026-07-31T23:59:59Z"


def test_a_month_is_quoted_once_with_one_reading(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    for question, why in (
        (
            "Which runbook applied to payment-api in July?",
            f"(the question says 'in July': {JULY}; the whole month, no year written: "
            "the latest July begun by as_of, UTC)",
        ),
        (
            "Who owned payment-api in July 2026?",
            f"(the question says 'in July 2026': {JULY}; the whole month, UTC)",
        ),
    ):
        report = invoke("investigate", question, *BOB)
        assert report.code == 0, report
        claims = [line for line in report.out.splitlines() if line.startswith("  [fact")]
        assert len(claims) == 2, report.out
        assert all(why in line for line in claims), report.out
        assert "in July in July" not in report.out
        assert "the month's first instant" not in report.out


def test_a_period_of_two_days_keeps_both_ends_words(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    report = invoke("investigate", "Who owned payment-api between July 20 and July 25?", *BOB)
    assert report.code == 0, report
    assert (
        "(the question says 'between July 20 and July 25': 2026-07-20T00:00:00Z to "
        "2026-07-25T23:59:59Z; no year given: the year of as_of, 2026)"
    ) in report.out
