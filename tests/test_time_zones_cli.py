"""A time written with its zone after a space, as `date`, log lines and Alertmanager write
it ("2026-07-24 01:00 +0200", "2026-07-23 10:03:10 +0000 UTC"), as a user of the CLI sees
it (real Neo4j, demo dataset: payment-api owned by team:payments-core until 2026-07-24
00:00Z, then team:payments-platform; runbook v3 until 2026-07-25 00:00Z, then v4).

Before, the zone after a space was dropped: the time was read as UTC and said "no zone
given", so "01:00 +0200" on 07-24 (23:00Z on 07-23) answered the later owner as a [fact],
and a runbook text at "2026-07-25 01:00 +0200" served v4 where v3 was in force."""

from __future__ import annotations

import json
import re

AS_OF = "2026-12-01T00:00:00Z"
BOB = ["--service", "svc:payment-api", "--subject", "acme/user:bob", "--deadline-seconds", "600"]
ASKED = "At the time named in the question, {at} (explicit)"


def _owner_asked(out: str, at: str) -> str:
    """The owner the claim about the time asked names ("... (explicit) and at as_of, ...: " when
    the same owner holds at as_of too)."""
    lines = [line for line in out.splitlines() if ASKED.format(at=at) in line]
    assert len(lines) == 1, out
    found = re.search(r": (team:\S+) OWNS svc:payment-api", lines[0])
    assert found is not None, lines[0]
    return found.group(1)


def test_an_offset_after_a_space_is_read_with_the_time(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    for written, at, team in (
        ("2026-07-24 01:00 +0200", "2026-07-23T23:00:00Z", "payments-core"),
        ("2026-07-24 01:00 +02:00", "2026-07-23T23:00:00Z", "payments-core"),
        ("2026-07-23 20:00 -0500", "2026-07-24T01:00:00Z", "payments-platform"),
        # Go's time, as Alertmanager prints StartsAt: the offset, then its name
        ("2026-07-24 01:00:00 +0200 CEST", "2026-07-23T23:00:00Z", "payments-core"),
    ):
        report = invoke("investigate", f"Who owned payment-api at {written}?", *BOB,
                        "--as-of", AS_OF)  # fmt: skip
        assert report.code == 0, report
        assert _owner_asked(report.out, at) == f"team:{team}", report.out
        assert "no zone given" not in report.out
        assert "Time       " not in report.out


def test_a_zone_written_as_utc_is_not_said_missing(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    for written in ("2026-07-23 10:03:00 +0000 UTC", "2026-07-23 10:03 UTC"):
        report = invoke("investigate", f"Who owned payment-api at {written}?", *BOB,
                        "--as-of", AS_OF)  # fmt: skip
        assert report.code == 0, report
        assert _owner_asked(report.out, "2026-07-23T10:03:00Z") == "team:payments-core"
        assert "no zone given" not in report.out, report.out


def test_a_zone_name_is_never_read_as_utc(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    question = "Who owned payment-api at 2026-07-24 01:00 CEST?"
    report = invoke("investigate", question, *BOB, "--as-of", AS_OF)
    assert report.code == 0, report
    assert (
        "Time       not resolved: '2026-07-24 01:00 CEST'; the answer is at as_of. Zone CEST "
        "not understood"
    ) in report.out, report.out
    assert "give its offset instead (+02:00, -05:00), or Z for UTC" in report.out
    assert "At the time named in the question" not in report.out
    doc = json.loads(invoke("investigate", question, *BOB, "--as-of", AS_OF, "--json").out)
    assert doc["status"] == "partial"
    assert doc["unresolved_time_words"] == ["2026-07-24 01:00 CEST"]
    assert [r["reason"] for r in doc["unresolved_time_reasons"]] == ["zone_not_read"]


def test_a_runbook_text_time_with_an_offset_picks_the_version_then(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    card = invoke("runbook", "payment recovery on 2026-07-25 01:00 +0200",
                  "--subject", "acme/user:oncall")  # fmt: skip
    assert card.code == 0, card
    assert card.out.startswith("Runbook   Payment recovery runbook v3"), card.out
    assert "As of     2026-07-24T23:00:00Z" in card.out
    assert "Time      from the text: '2026-07-25 01:00 +0200'; --as-of sets another time" in (
        card.out
    )
    # A pasted Alertmanager StartsAt: its zone is written, and not said missing.
    pasted = invoke("runbook", "PaymentApiHighErrorRate StartsAt: 2026-07-23 10:03:10 +0000 UTC",
                    "--subject", "acme/user:oncall")  # fmt: skip
    assert "As of     2026-07-23T10:03:10Z" in pasted.out, pasted.out
    assert "no zone given" not in pasted.out
    # A zone name: not used, said why, the card at now.
    named = invoke("runbook", "payment recovery on 2026-07-25 01:00 CEST",
                   "--subject", "acme/user:oncall")  # fmt: skip
    assert named.code == 0, named
    assert "Time      not used: '2026-07-25 01:00 CEST': zone CEST not understood" in named.out, (
        named.out
    )
    assert "the card is at now" in named.out
