"""Free text on pages imported with their git history (dozens of near-identical versions):
the card shows the version in force at as_of, whichever versions the words rank best, and
another page imported later does not change a recorded answer at the same known_at; words
all versions of one page share but not together are said of that page once, not as a tie of
its versions."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from conftest import git_commit, git_repository, ingest_as, ingest_oncall_principals

DISK_VERSIONS = 36
CRAWLER_FROM = 4  # the version that adds the crawler section
SEARCH_VERSIONS = 30
QUERY = "DISK CRITICAL: /mnt/crawler_worker not found"


def _day(n: int) -> datetime:
    """When version `n` (from 1) of a page was committed."""
    return datetime(2020, 1, 1, 9, tzinfo=UTC) + timedelta(days=n - 1)


def _iso(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def _history(root: Path, page: str, versions: int, body: str, added: dict[int, str]) -> list[str]:
    """`page` in `versions` commits a day apart, each adding a note line (and the text of
    `added` at its version); the version ids, oldest first."""
    git_repository(root)
    text, ids = body, []
    for n in range(1, versions + 1):
        text += added.get(n, "")
        text += f"\nNote {n}: the fleet was checked by shift {n}.\n"
        sha = git_commit(root, page, text, _iso(_day(n)))
        ids.append(f"runbook:{Path(page).name.split('.')[0]}@{sha[:12]}")
    return ids


def _disk_page(tmp_path: Path) -> tuple[Path, list[str]]:
    body = (
        "# Low available disk space\n\nA machine runs out of disk.\n\n"
        "Jenkins agents keep docker layers; the orbit of builds grows.\n\n"
        "Old images are pruned weekly, and dangling volumes are listed by hand.\n"
    )
    crawler = (
        "\n## Low disk space on /mnt/crawler_worker\n\n"
        "DISK CRITICAL: /mnt/crawler_worker not found means the crawler volume is unmounted.\n"
        "Remount it with the mirror tooling.\n"
    )
    root = tmp_path / "disk-docs"
    return root, _history(
        root, "alerts/disk-space.md", DISK_VERSIONS, body, {CRAWLER_FROM: crawler}
    )


def _search_page(tmp_path: Path) -> Path:
    body = "# Search cluster health\n\nThe search cluster turns red when shards are lost.\n"
    root = tmp_path / "search-docs"
    _history(root, "alerts/search-health.md", SEARCH_VERSIONS, body, {})
    return root


def test_free_text_answers_the_version_in_force_and_another_import_does_not_move_it(  # type: ignore[no-untyped-def]
    cli_env: object, invoke, tmp_path: Path
) -> None:
    # Before: the words ranked early versions best (shorter, same words), the versions read
    # were four steps from them, and a time far from them answered "no version of the
    # runbook of '...' is valid at as_of"; the version in force was read only by --alert.
    tenant = f"gft{tmp_path.parent.name[-6:].replace('-', '')}".lower()
    ingest_oncall_principals(invoke, tmp_path, tenant)
    root, ids = _disk_page(tmp_path)
    ingest_as(invoke, root / "alerts/disk-space.md", "markdown-runbooks", tenant, "--git-history")
    asked = ["--subject", f"{tenant}/user:oncall"]
    wrong: list[str] = []
    for n in (CRAWLER_FROM, 20, DISK_VERSIONS - 2):
        at = _iso(_day(n) + timedelta(hours=3))
        answer = json.loads(invoke("runbook", QUERY, "--as-of", at, *asked, "--json").out)
        shown = (answer["runbook"] or {}).get("id")
        if shown != ids[n - 1]:
            wrong.append(f"at version {n}: shown {shown}, not {ids[n - 1]}: {answer['note']}")
        elif "#low-disk-space-on-mntcrawler_worker" not in str(answer["runbook"]["steps_locator"]):
            wrong.append(f"at version {n}: cites {answer['runbook']['steps_locator']}")
    assert wrong == [], "\n".join(wrong)

    at = _iso(_day(30) + timedelta(hours=3))
    first = json.loads(invoke("runbook", QUERY, "--as-of", at, *asked, "--json").out)
    assert first["runbook"]["id"] == ids[29], first["note"]
    known_at = first["known_at"]
    # Another page of many versions in the same tenant, imported after the run.
    ingest_as(invoke, _search_page(tmp_path) / "alerts/search-health.md", "markdown-runbooks",
              tenant, "--git-history")  # fmt: skip
    again = json.loads(
        invoke("runbook", QUERY, "--as-of", at, "--known-at", known_at, *asked, "--json").out
    )
    assert (again["runbook"] or {}).get("id") == ids[29], again["note"]


def test_words_apart_on_versions_of_one_page_are_said_of_the_page_not_as_a_tie(  # type: ignore[no-untyped-def]
    cli_env: object, invoke, tmp_path: Path
) -> None:
    # Before: "no runbook fits: 5 runbooks tie, each covering 100% of the query
    # (runbook:disk-space@..., runbook:disk-space@..., ...)": the versions of one page.
    # (With the `words` fit of fix-cards-real-pages the one page is shown, not refused.)
    tenant = f"gfn{tmp_path.parent.name[-6:].replace('-', '')}".lower()
    ingest_oncall_principals(invoke, tmp_path, tenant)
    root, ids = _disk_page(tmp_path)
    ingest_as(invoke, root / "alerts/disk-space.md", "markdown-runbooks", tenant, "--git-history")
    at = _iso(_day(25) + timedelta(hours=3))
    answer = json.loads(
        invoke(
            "runbook", "docker dangling jenkins images", "--as-of", at,
            "--subject", f"{tenant}/user:oncall", "--json",
        ).out
    )  # fmt: skip
    # The only page with every word is shown as found by its words alone (a `words` fit),
    # in its version in force then, and its versions are never a tie.
    assert (answer["runbook"] or {}).get("id") == ids[24], (answer["runbook"], answer["note"])
    assert "tie" not in answer["note"], answer["note"]
    assert "found by its words alone: runbook:disk-space" in answer["note"], answer["note"]
