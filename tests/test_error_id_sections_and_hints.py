"""Error ids of a page of error codes, an alert's severities, and a --service the answer
covers anyway: said as they are. On a real Neo4j, through the CLI, with the user's words.

Before (e22-qa findings 2, 4, 9): "What do I do about BILL-2002 errors?" cited the whole
page of every code where the card shows `Errors.md#bill-2002`; `--alert DiskFull@info` and
`--alert diskfull@warning` said "no visible id is close to it" of an alert with @critical and
@warning rules, naming the subject `user:bob`; `--service svc:Payment-API` beside a question
about payment-api said "The answer does not cover it." of an answer about svc:payment-api.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import ingest_as

SUBJECT = "acme/user:bob"

ERRORS = """# Billing errors

## BILL-1001
Restart the invoice worker with `svcctl restart invoice`.

## BILL-2002
Rotate the API key with `keyctl rotate billing`.
"""

RULES = """groups:
  - name: disk
    rules:
      - alert: DiskFull
        expr: node_filesystem_avail_bytes < 1e9
        labels: {severity: critical}
        annotations: {summary: Disk nearly full.}
      - alert: DiskFull
        expr: node_filesystem_avail_bytes < 5e9
        labels: {severity: warning}
        annotations: {summary: Disk filling up.}
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for the module: a re-import of the same path writes nothing new."""
    root = tmp_path_factory.mktemp("billing-files")
    (root / "billing").mkdir()
    (root / "billing" / "Errors.md").write_text(ERRORS)
    (root / "disk.yaml").write_text(RULES)
    return root


@pytest.fixture()
def billing(files: Path, demo_graph: neo4j.Driver, cli_env: object, invoke) -> Path:  # type: ignore[no-untyped-def]
    """The demo dataset, a page of error codes and two rules of one alert, in tenant acme."""
    folder, rules = files / "billing", files / "disk.yaml"
    for path, fmt in ((folder, "markdown-runbooks"), (rules, "prometheus-rules")):
        ingest_as(invoke, path, fmt, "acme", acl="internal")
    return files


def _investigate(invoke, question: str, *flags: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("investigate", question, "--subject", SUBJECT, *flags, "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def test_an_error_code_heading_a_section_of_a_page_of_codes_is_that_section(  # type: ignore[no-untyped-def]
    billing: Path, invoke
) -> None:
    card = invoke("runbook", "BILL-2002", "--subject", SUBJECT, "--json")
    assert json.loads(card.out)["runbook"]["steps_locator"] == "Errors.md#bill-2002"
    question = "What do I do about BILL-2002 errors?"
    answer = _investigate(invoke, question)
    [runbook] = [ev for ev in answer["evidence"] if ev["element_id"] == "runbook:Errors"]
    # The section the card shows, not the page of every code.
    assert runbook["locator"] == "Errors.md#bill-2002"
    assert "keyctl rotate billing" in runbook["content"]
    assert "BILL-1001" not in runbook["content"]
    [claim] = [c for c in answer["claims"] if c["statement"].startswith("Runbook ")]
    assert claim["statement"].endswith("[Errors.md#bill-2002]"), claim
    text = invoke("investigate", question, "--subject", SUBJECT)
    assert (
        "\nName       'BILL-2002' in the question matched the heading of the section "
        "Errors.md#bill-2002 of runbook:Errors, which the answer cites; it is the name of no "
        f"record visible to {SUBJECT}.\n"
    ) in text.out, text.out
    # The other code gets its own section.
    other = _investigate(invoke, "How do I fix BILL-1001?")
    [runbook] = [ev for ev in other["evidence"] if ev["element_id"] == "runbook:Errors"]
    assert runbook["locator"] == "Errors.md#bill-1001"
    replay = invoke("replay", answer["run_id"], "--subject", SUBJECT, "--json")
    assert replay.code == 0 and json.loads(replay.out)["verified"] is True, replay


# Each suggested rule says which it is: rules of one name, imported untrusted, named by id
# and severity (their file, group and summary are on the card's `Rule ... [untrusted]` lines).
CRITICAL = "DiskFull@critical (untrusted rule, critical)"
WARNING = "DiskFull@warning (untrusted rule, warning)"


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("DiskFull@info", f"{CRITICAL} or {WARNING}"),
        ("diskfull@warning", WARNING),
        ("alert:DiskFull@WARNING", WARNING),
    ],
)
def test_an_alert_severity_it_has_no_rule_of_suggests_the_rules_it_has(  # type: ignore[no-untyped-def]
    billing: Path, invoke, typed: str, meant: str
) -> None:
    card = invoke("runbook", "--alert", typed, "--subject", SUBJECT)
    assert card.code == 0, card
    asked = typed if typed.startswith("alert:") else f"alert:{typed}"
    assert card.out.splitlines()[0] == (
        f"No runbook: no alert matching {asked!r} is visible to {SUBJECT}; did you mean {meant}?"
    ), card.out
    assert "Rule      DiskFull@warning  [untrusted]  file disk.yaml; group disk" in card.out
    # What is suggested is what --alert takes.
    first = meant.split(" or ")[0].split(" (")[0]
    assert invoke("runbook", "--alert", first, "--subject", SUBJECT, "--json").code == 0
    doc = json.loads(invoke("runbook", "--alert", first, "--subject", SUBJECT, "--json").out)
    assert doc["resolved"] == [f"alert:{first}"], doc


def test_a_service_given_wrong_that_the_answer_covers_is_not_said_uncovered(  # type: ignore[no-untyped-def]
    billing: Path, invoke
) -> None:
    flags = ("--service", "svc:Payment-API")
    answer = _investigate(invoke, "Who owns payment-api?", *flags)
    assert answer["service_id"] is None
    [name] = [n for n in answer["unresolved_names"] if n["given_as"] == "service"]
    assert name["note"] == (
        f"--service 'svc:Payment-API' did not resolve to a service visible to {SUBJECT}; did "
        "you mean svc:payment-api? The answer covers svc:payment-api, which its claims cite."
    )
    # An answer about something else still says it does not cover it.
    other = _investigate(invoke, "What do I do about BILL-2002 errors?", *flags)
    [name] = [n for n in other["unresolved_names"] if n["given_as"] == "service"]
    assert name["note"].endswith("did you mean svc:payment-api? The answer does not cover it.")
