"""The runbook card and `investigate` answer the same words alike, through the CLI on a real
Neo4j (pages written here, in the shapes of a GuardDuty findings corpus and a DBA corpus).

Before:
- `runbook "ssh brute force on svc:payment-api"` answered "no runbook fits", while
  `investigate` found the SSHBruteForce page by asking again without the service;
- `investigate "ERROR 1040 (HY000): Too many connections, which runbook applies?"` cited no
  runbook (it required "many", which no MariaDB page has), while the card answered with the
  MariaDB page;
- `investigate` set the other engines' pages aside and said nothing of it;
- the card's tie note for a pair of finding pages ended "use --alert NAME", not naming the
  two finding types to choose from.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import import_runbooks_and_rules
from test_finding_names_in_words import BOB, INSIDE, OUTSIDE, PAGES, SSH, findings, folder

__all__ = ["findings", "folder"]  # the fixtures, reused

SEC = ["--subject", "sec/user:oncall"]


def _card(invoke, *args: str, subject: list[str]) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("runbook", *args, *subject, "--json")
    assert result.code in (0, 3), result
    return json.loads(result.out)  # type: ignore[no-any-return]


@pytest.fixture()
def guardduty(tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke) -> Path:  # type: ignore[no-untyped-def]
    """A security team's tenant holding only the finding pages (no page names a service)."""
    import_runbooks_and_rules(invoke, tmp_path, "sec", runbooks=PAGES, folder="guardduty")
    return tmp_path


def test_the_card_asks_again_without_the_place_of_a_finding(  # type: ignore[no-untyped-def]
    guardduty: Path, invoke
) -> None:
    question = "ssh brute force on svc:payment-api"
    card = _card(invoke, question, subject=SEC)
    # Before: no runbook, "no runbook fits: the closest, ...-sshbruteforce, covers 75% of the
    # query (not counting 'svc', 'payment', which no runbook uses) ...".
    assert card["runbook"] is not None, card["note"]
    assert card["runbook"]["id"] == SSH, card["note"]
    assert card["note"].startswith(
        "no runbook fits every word of 'ssh brute force on svc:payment-api': asked again "
        "without the place (svc:payment-api), as 'ssh brute force on'"
    ), card["note"]
    shown = invoke("runbook", question, *SEC)
    assert shown.code == 0, shown
    assert shown.out.startswith("Runbook   UnauthorizedAccess:EC2/SSHBruteForce  ["), shown.out
    # The place is set aside only when nothing fits every word: a page that does is answered.
    plain = _card(invoke, "ssh brute force", subject=SEC)
    assert plain["runbook"]["id"] == SSH, plain["note"]
    assert "asked again" not in (plain["note"] or ""), plain["note"]
    # A text whose other words fit nothing still finds nothing.
    none = _card(invoke, "banana on svc:payment-api", subject=SEC)
    assert none["runbook"] is None, none["note"]


def test_a_pair_of_findings_names_the_two_types_to_choose_from(  # type: ignore[no-untyped-def]
    findings: Path, invoke
) -> None:
    card = _card(invoke, "instance credential exfiltration", subject=BOB)
    # Before: "... add a word that tells them apart, or use --alert NAME".
    assert card["note"].endswith(
        "add a word that tells them apart, or use "
        "--alert UnauthorizedAccess:IAMUser/InstanceCredentialExfiltration.InsideAWS or "
        "--alert UnauthorizedAccess:IAMUser/InstanceCredentialExfiltration.OutsideAWS"
    ), card["note"]
    # The way given finds the page it names.
    for finding, page in (("InsideAWS", INSIDE), ("OutsideAWS", OUTSIDE)):
        name = f"UnauthorizedAccess:IAMUser/InstanceCredentialExfiltration.{finding}"
        one = _card(invoke, "--alert", name, subject=BOB)
        assert one["runbook"]["id"] == page, one["note"]


TENANT = "dbas"
ONCALL = ["--subject", f"{TENANT}/user:oncall"]

# The MariaDB page says what the error means without the words "too many".
MARIADB_LIMITS = """# MariaDB connection limits

Who holds the connections of a MariaDB server, and how to raise max_connections while it runs.

## Steps

1. List the connections of each account with the connection-usage task.
2. When clients are refused a connection, raise max_connections with set-runtime-param.
"""

POSTGRES_CONNECTIONS = """# Too many connections

PostgreSQL turns a new session away with "sorry, too many clients already" once every
connection slot is taken. Too many connections nearly always means a client pool that leaks.

## Steps

1. Count the sessions of each role in pg_stat_activity.
2. End the idle sessions of the role that leaks.
"""

PASTED = "ERROR 1040 (HY000): Too many connections"
ERROR_1040 = f"{PASTED}, which runbook applies?"


@pytest.fixture()
def dbas(tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke) -> Path:  # type: ignore[no-untyped-def]
    runbooks = {
        "docs/postgresql/too-many-connections.md": POSTGRES_CONNECTIONS,
        "docs/mariadb/connection-limits.md": MARIADB_LIMITS,
    }
    import_runbooks_and_rules(invoke, tmp_path, TENANT, runbooks=runbooks, folder="db-runbooks")
    return tmp_path


def test_investigate_reads_a_pasted_engine_error_as_the_card_does(  # type: ignore[no-untyped-def]
    dbas: Path, invoke
) -> None:
    card = _card(invoke, PASTED, subject=ONCALL)
    assert card["runbook"]["id"] == "runbook:connection-limits", card["note"]
    result = invoke("investigate", ERROR_1040, *ONCALL, "--deadline-seconds", "600", "--json")
    assert result.code == 0, result
    doc = json.loads(result.out)
    claims = [c["statement"] for c in doc["claims"] if c["statement"].startswith("Runbook ")]
    # Before: no runbook claimed, status partial (no MariaDB page has "many").
    assert any("(runbook:connection-limits," in s for s in claims), (claims, doc["rejected"])
    assert not any("runbook:too-many-connections" in s for s in claims), claims
    assert doc["status"] == "complete", doc["missing_evidence"]
    # The other engine's page set aside is said, as the card says it.
    said = (
        "the text names MariaDB/MySQL (its error 'ERROR 1040 (HY000)'): runbooks of other "
        "engines are set aside (runbook:too-many-connections (PostgreSQL))"
    )
    assert said in card["note"], card["note"]
    assert doc["search_notes"] == [said], doc["search_notes"]
    text = invoke("investigate", ERROR_1040, *ONCALL, "--deadline-seconds", "600")
    assert f"Note       {said}" in text.out, text.out


def test_investigate_says_the_engine_set_aside_for_a_named_engine(  # type: ignore[no-untyped-def]
    dbas: Path, invoke
) -> None:
    question = "mariadb max_connections, which runbook applies?"
    result = invoke("investigate", question, *ONCALL, "--deadline-seconds", "600", "--json")
    assert result.code == 0, result
    doc = json.loads(result.out)
    claims = [c["statement"] for c in doc["claims"] if c["statement"].startswith("Runbook ")]
    assert any("(runbook:connection-limits," in s for s in claims), (claims, doc["rejected"])
    assert doc["search_notes"] == [
        "the text names MariaDB/MySQL (its name): runbooks of other engines are set aside "
        "(runbook:too-many-connections (PostgreSQL))"
    ], doc["search_notes"]
