"""What a card or an import says about itself, on a real Neo4j through the CLI.

- An abstention whose share of the query leaves out a word no runbook uses says so: before,
  "covers 100% of the query (no runbook uses 'found')" contradicted itself.
- A folder refused for a symbolic link (a jsonnet mixin's `vendor/`) says what to do: import
  the file(s) directly, with an example; the link is still never followed.
- A subject not allowed `runbook_lookup` is answered under `incident_investigation`, as
  documented, and the card says so in a `Purpose` line (before, only the trace showed it).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import neo4j
import pytest
from conftest import ingest_as, ingest_oncall_principals, ingest_text, wipe

# The words of "traces not found in grafana, query returns 404" are all here but "found",
# none of them next to the one the query has them beside.
TRACES_PAGE = """# Trace store

Returns of the storage API are logged. Grafana dashboards list traces. Each query is slow
when the cache is cold.

## How to fix

1. Warm the cache.
"""

# A subject of acme whose grants lost `runbook_lookup`.
RESPONDER = """tenant: acme
sources:
  - source_id: src:iam-responders
    source_type: identity
    owner_team: team:sre
    classification: internal
    trust: trusted
    authority: 100
    allowed_purposes: [incident_investigation, runbook_lookup]
    recorded_at: "2026-01-05T09:00:00Z"
principals:
  - id: user:responder
    name: Responder
    labels: [sre]
    purposes: [incident_investigation]
    source_id: src:iam-responders
    recorded_at: "2026-01-05T09:00:00Z"
"""


@pytest.fixture()
def traces(driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    wipe(driver)
    ingest_oncall_principals(invoke, tmp_path, "acme")
    ingest_text(invoke, tmp_path / "responder.yaml", RESPONDER)
    root = tmp_path / "runbooks"
    root.mkdir()
    (root / "traces.md").write_text(TRACES_PAGE, encoding="utf-8")
    ingest_as(invoke, root, "markdown-runbooks", "acme")
    return root


def _card(invoke, text: str, *flags: str) -> str:  # type: ignore[no-untyped-def]
    result = invoke("runbook", text, *flags)
    assert result.code == 0, result
    return result.out  # type: ignore[no-any-return]


def test_an_abstention_does_not_count_the_word_it_names_as_covered(traces, invoke) -> None:  # type: ignore[no-untyped-def]
    text = "traces not found in grafana, query returns 404"
    card = _card(invoke, text, "--subject", "user:oncall")
    assert card.startswith(
        "No runbook: no runbook fits: the closest, runbook:traces, covers 100% of the query "
        "(not counting 'found', which no runbook uses), but not with its words together"
    ), card
    assert "(no runbook uses 'found')" not in card
    # Allowed runbook_lookup: no Purpose line.
    assert "Purpose" not in card


def test_a_lookup_under_the_fallback_purpose_says_so(traces, invoke) -> None:  # type: ignore[no-untyped-def]
    card = _card(invoke, "warm the cache", "--subject", "user:responder")
    assert card.startswith("Runbook   Trace store  [runbook:traces"), card
    assert (
        "\nPurpose   incident_investigation: the subject is not allowed runbook_lookup, so the "
        "lookup read what incident_investigation allows\n"
    ) in card
    doc = json.loads(_card(invoke, "warm the cache", "--subject", "user:responder", "--json"))
    assert doc["purpose"] == "incident_investigation"
    # Asked for by name, it is no fallback: no line.
    asked = _card(
        invoke, "warm the cache", "--subject", "user:responder",
        "--purpose", "incident_investigation",
    )  # fmt: skip
    assert "Purpose" not in asked


def test_a_folder_refused_for_a_link_says_to_import_its_files(  # type: ignore[no-untyped-def]
    driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    wipe(driver)
    ingest_oncall_principals(invoke, tmp_path, "acme")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.md").write_text("# Not to be imported\n", encoding="utf-8")
    mixin = tmp_path / "mixin"
    mixin.mkdir()
    (mixin / "runbook.md").write_text(TRACES_PAGE, encoding="utf-8")
    (mixin / "vendor").symlink_to(outside, target_is_directory=True)
    args = ("--format", "markdown-runbooks", "--tenant", "acme", "--acl", "sre")
    refused = invoke("ingest", str(mixin), *args)
    assert refused.code == 2, refused
    last = refused.err.strip().splitlines()[-1]
    file = shlex.quote(str(mixin / "runbook.md"))
    assert last == (
        "error: Markdown runbook import rejected: 1 problem(s), nothing written; links are "
        f"never followed: import the file(s) directly, e.g. investigator ingest {file} "
        "--format markdown-runbooks (with the same options), or a folder without links"
    ), refused.err
    with driver.session() as session:
        assert session.run("MATCH (r:Runbook) RETURN count(r) AS n").single()["n"] == 0  # type: ignore[index]
    # The way on works, and the link was never followed.
    done = invoke("ingest", str(mixin / "runbook.md"), *args)
    assert done.code == 0, done
    card = _card(invoke, "warm the cache", "--subject", "user:oncall")
    assert card.startswith("Runbook   Trace store"), card
    assert "secret" not in card
