"""A page imported with its git history, of more versions than `runbooks_for`'s row cap (50),
linked to one alert by its rule's runbook_url: the card shows the version in force at any
time, cites its section, names the page by its file when its title is only "Runbook", says
the other versions in one line, and the rules import names the page's current version only;
unlinked, the page is found by its heading, by `--alert` or free text, at the version in force.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from conftest import git_commit, git_repository, ingest_as, ingest_oncall_principals

PAGE = "tempo/runbook.md"
VERSIONS = 55
SECTION_FROM = 3  # the version that adds `## TempoDown`
CAP = 50  # runbooks_for's row_cap (cypher_templates/manifest.yaml)
RULES = """groups:
  - name: tempo
    rules:
      - alert: TempoDown
        expr: up == 0
        annotations: {summary: Tempo is down., runbook_url: 'https://git.example.org/tempo/runbook.md#tempodown'}
"""


def _day(n: int) -> datetime:
    """When version `n` (from 1) was committed."""
    return datetime(2026, 1, 1, 10, tzinfo=UTC) + timedelta(days=n - 1)


def _iso(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def _history(tmp_path: Path) -> tuple[Path, list[str]]:
    """`PAGE` titled "Runbook" in `VERSIONS` commits, a day apart, `## TempoDown` added in
    version `SECTION_FROM`; the repository and the version ids, oldest first."""
    root = git_repository(tmp_path / "tempo-mixin")
    text, ids = "# Runbook\n\n## Overview\n\nThe store keeps traces.\n", []
    for n in range(1, VERSIONS + 1):
        if n == SECTION_FROM:
            text += "\n## TempoDown\n\nRestart the tempo pods.\n"
        text += f"\nNote {n}: look at panel {n}.\n"
        ids.append(f"runbook:tempo@{git_commit(root, PAGE, text, _iso(_day(n)))[:12]}")
    return root, ids


def test_the_version_in_force_of_a_page_past_the_row_cap_is_the_card(  # type: ignore[no-untyped-def]
    cli_env: object, invoke, tmp_path: Path
) -> None:
    # Before: the alert's read stopped at 50 rows (by id), so at a time whose version sorts
    # past them the card said "no version of the runbook ... is valid at as_of"; the title
    # read "Runbook   Runbook", every other version was its own Rejected line, and the rules
    # import's linked: line listed all 55 version ids.
    tenant = f"tmv{tmp_path.parent.name[-6:].replace('-', '')}".lower()
    ingest_oncall_principals(invoke, tmp_path, tenant)
    root, ids = _history(tmp_path)
    ingest_as(invoke, root, "markdown-runbooks", tenant, "--git-history")
    (tmp_path / "rules.yaml").write_text(RULES, encoding="utf-8")
    rules = ingest_as(invoke, tmp_path / "rules.yaml", "prometheus-rules", tenant)
    # Each item is checked, and what failed said together: one wrong item hides no other.
    wrong: list[str] = []
    linked = [line for line in rules.err.splitlines() if line.startswith("ingest: linked:")]
    if linked != [
        f"ingest: linked: {ids[-1]} (+{VERSIONS - 1} older versions of the page) APPLIES_TO "
        "alert:TempoDown (runbook_url; runbook --alert TempoDown --as-of T shows the version in "
        "force at T)"
    ]:
        wrong.append(f"linked: {len(rules.err)} characters: {rules.err[:300]}")

    past_cap = [n for n in range(SECTION_FROM, VERSIONS) if ids[n - 1] in sorted(ids)[CAP:]]
    assert past_cap, "no version with the section sorts past the cap"
    asked = ["runbook", "--alert", "TempoDown", "--subject", f"{tenant}/user:oncall"]
    times = {
        "past the cap": (past_cap[0], ["--as-of", _iso(_day(past_cap[0]) + timedelta(hours=2))]),
        "at a commit": (10, ["--as-of", _iso(_day(10))]),
        "between commits": (20, ["--as-of", _iso(_day(20) + timedelta(hours=5))]),
        "after the last": (VERSIONS, ["--as-of", _iso(_day(VERSIONS) + timedelta(days=30))]),
        "now": (VERSIONS, []),
    }
    for when, (n, as_of) in times.items():
        answer = json.loads(invoke(*asked, *as_of, "--json").out)
        shown = (answer["runbook"] or {}).get("id")
        if shown != ids[n - 1]:
            wrong.append(f"{when}: shown {shown}, not {ids[n - 1]}: {answer['note']}")
            continue
        if not answer["runbook"]["steps_locator"].endswith("#tempodown"):
            wrong.append(f"{when}: cites {answer['runbook']['steps_locator']}")
        card = invoke(*asked, *as_of).out
        if not card.startswith(f"Runbook   {PAGE}  [{ids[n - 1]}, git:"):
            wrong.append(f"{when}: title line {card.splitlines()[0]!r}")
        # The JSON lists each version refused; the card says them in one line.
        rejected = card.split("\nRejected  ", 1)[-1].split("\nRun ", 1)[0]
        # (Without --as-of, each call is at its own now.)
        at = as_of[1] if as_of else ""
        if not (
            rejected.startswith(
                f"{len(answer['rejected'])} other versions of this page, not in force at {at}"
            )
            and rejected.endswith(" (--json lists each)")
            and "\n" not in rejected
        ):
            wrong.append(f"{when}: Rejected {len(rejected)} characters: {rejected[:200]!r}")
    assert wrong == [], "\n".join(wrong)

    before = invoke(*asked, "--as-of", "2025-12-01T00:00:00Z", "--json")
    assert json.loads(before.out)["runbook"] is None
    assert "no version of the runbook of alert:TempoDown is valid at as_of" in before.out


def test_a_version_in_force_without_the_heading_is_not_said_to_have_it(  # type: ignore[no-untyped-def]
    cli_env: object, invoke, tmp_path: Path
) -> None:
    # Before: no rule links the page, which is found by later versions' `## TempoDown`; the
    # version in force on day 1 has no such section, yet the note said it "has a section
    # headed by its name".
    tenant = f"tmh{tmp_path.parent.name[-6:].replace('-', '')}".lower()
    ingest_oncall_principals(invoke, tmp_path, tenant)
    root, ids = _history(tmp_path)
    ingest_as(invoke, root, "markdown-runbooks", tenant, "--git-history")
    asked = ["runbook", "--alert", "TempoDown", "--subject", f"{tenant}/user:oncall"]
    early = json.loads(invoke(*asked, "--as-of", _iso(_day(1) + timedelta(hours=1)), "--json").out)
    assert early["runbook"]["id"] == ids[0]
    assert early["runbook"]["steps_locator"] is None or "#" not in early["runbook"]["steps_locator"]
    assert "has a section headed by its name, and that heading" not in early["note"]
    assert (
        f"{ids[0]} is the version in force at as_of of a page other versions of which have a "
        "section headed by its name (this one has none)" in early["note"]
    ), early["note"]
    later = json.loads(invoke(*asked, "--as-of", _iso(_day(SECTION_FROM)), "--json").out)
    assert later["runbook"]["id"] == ids[SECTION_FROM - 1]
    assert f"{ids[SECTION_FROM - 1]} has a section headed by its name" in later["note"]
    # Free text, with a time and without: the hits' four SUPERSEDES steps did not reach the
    # version in force (before: "no version of the runbook of runbook:tempo@... is valid").
    for text, n in ((f"TempoDown on {_iso(_day(40) + timedelta(hours=1))}", 40), ("TempoDown", 55)):
        card = json.loads(invoke("runbook", text, *asked[3:], "--json").out)
        assert (card["runbook"] or {}).get("id") == ids[n - 1], (text, card["note"])
        assert card["runbook"]["steps_locator"].endswith("#tempodown"), text
