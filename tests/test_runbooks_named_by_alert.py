"""A folder of Markdown runbooks imported without the alert rules (one file named after each
alert, the layout of public runbook repositories) answers `runbook --alert NAME` and "Which
runbook applies to NAME?", saying that the name is the only tie, on a real Neo4j.

Before, both answered nothing: no Alert record exists to link the runbook through, and the
fulltext channel cannot vouch that a text hit is *the* runbook.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import neo4j
import pytest

FIXTURES = Path(__file__).parent / "fixtures"
RUNBOOKS = FIXTURES / "runbooks" / "acme"
CATALOGS = FIXTURES / "runbooks" / "catalogs"


@pytest.fixture()
def markdown_only(driver: neo4j.Driver, cli_env: object, invoke) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    from test_runbook_lookup import wipe

    wipe(driver)
    for catalog in ("acme.yaml", "globex.yaml"):
        assert invoke("ingest", str(CATALOGS / catalog)).code == 0
    md = invoke(
        "ingest", str(RUNBOOKS), "--format", "markdown-runbooks", "--tenant", "acme",
        "--acl", "internal", "--trusted",
    )  # fmt: skip
    assert md.code == 0, md
    return driver


def test_runbook_alert_finds_the_runbook_named_after_it(  # type: ignore[no-untyped-def]
    markdown_only: neo4j.Driver, invoke
) -> None:
    card = invoke("runbook", "--alert", "KubePodCrashLooping", "--subject", "user:oncall")
    assert card.code == 0, card
    lines = card.out.splitlines()
    # The file states no version: the card names its commit or content hash, not the record
    # version (before: `v1`, read as the runbook's version 1).
    assert re.fullmatch(
        r"Runbook   KubePodCrashLooping  \[runbook:KubePodCrashLooping, "
        r"(git|sha256):[0-9a-f]{12}, trusted\]",
        lines[0],
    ), lines[0]
    # No validity in the file: no `Valid` line (before: "(no start recorded) -> open" on
    # every imported runbook's card).
    assert not [line for line in lines if line.startswith("Valid")]
    assert lines[1].startswith(
        "Note      no alert matching 'KubePodCrashLooping' is visible to acme/user:oncall; "
        "runbook:KubePodCrashLooping is named after it, and that name is the only tie"
    )
    assert "kubernetes/KubePodCrashLooping.md#mitigation" in card.out
    # Under a runbook it found, "the target did not resolve" read as if nothing was found.
    assert "Owner     unknown: found by its name alone, no record names an owner" in card.out

    doc = json.loads(
        invoke(
            "runbook", "--alert", "kubepodcrashlooping", "--subject", "user:oncall", "--json"
        ).out
    )
    assert doc["runbook"]["id"] == "runbook:KubePodCrashLooping"  # the name as typed, any case
    # `--json` stays as it was (replay compares it): the record version, and the file's
    # commit or hash, which the card shows shortened.
    assert doc["runbook"]["version"] == 1
    assert doc["runbook"]["source_version"].startswith(lines[0].split(", ")[1])
    assert doc["resolved"] == []  # no alert record: nothing is claimed to have resolved
    replay = invoke("replay", doc["run_id"], "--subject", "user:oncall", "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["verified"] is True


def test_pasted_text_naming_the_alert_finds_the_runbook_named_after_it(  # type: ignore[no-untyped-def]
    markdown_only: neo4j.Driver, invoke
) -> None:
    pasted = "[FIRING:2] KubePodCrashLooping (payments/api-7f9c on ip-10-0-3-17)"
    doc = json.loads(invoke("runbook", pasted, "--subject", "user:oncall", "--json").out)
    assert doc["runbook"]["id"] == "runbook:KubePodCrashLooping"
    assert doc["resolved"] == ["runbook:KubePodCrashLooping"]
    # Another tenant's subject gets nothing of acme's.
    other = invoke("runbook", pasted, "--subject", "globex/user:mallory", "--json")
    assert other.code == 0, other
    assert "runbook:KubePodCrashLooping" not in other.out


def test_investigate_names_the_runbook_and_how_it_was_tied(  # type: ignore[no-untyped-def]
    markdown_only: neo4j.Driver, invoke
) -> None:
    result = invoke(
        "investigate", "Which runbook applies to KubePodCrashLooping?",
        "--subject", "user:oncall", "--json",
    )  # fmt: skip
    assert result.code == 0, result
    doc = json.loads(result.out)
    assert doc["status"] == "complete", doc["missing_evidence"]
    (claim,) = doc["claims"]
    assert re.match(
        r"Runbook KubePodCrashLooping \(runbook:KubePodCrashLooping, (git|sha256):[0-9a-f]{12}\), "
        r"found by its name alone \(no service, alert or error code record links to it\), is "
        r"the version in force at ",
        claim["statement"],
    ), claim["statement"]
    # No validity recorded: nothing said about it (before: "(valid to open, no start
    # recorded)" in every runbook claim of an import).
    assert "no start recorded" not in claim["statement"]
    assert "valid" not in claim["statement"].split(" is the version in force ")[1]
    [evidence] = [ev for ev in doc["evidence"] if ev["evidence_id"] in claim["evidence_ids"]]
    assert evidence["element_id"] == "runbook:KubePodCrashLooping"
    replay = invoke("replay", doc["run_id"], "--subject", "user:oncall", "--json")
    assert json.loads(replay.out)["verified"] is True


def test_a_subject_who_may_not_read_it_and_another_tenant_get_nothing(  # type: ignore[no-untyped-def]
    markdown_only: neo4j.Driver, invoke
) -> None:
    # Imported with --acl internal: user:nolabel holds no label.
    hidden = invoke("runbook", "--alert", "KubePodCrashLooping", "--subject", "user:nolabel")
    assert hidden.code == 0, hidden
    assert hidden.out.startswith("No runbook: no alert matching 'KubePodCrashLooping'")
    assert "runbook:KubePodCrashLooping" not in hidden.out
    other = invoke(
        "runbook", "--alert", "KubePodCrashLooping", "--subject", "globex/user:mallory", "--json"
    )
    assert other.code == 0, other
    assert json.loads(other.out)["runbook"] is None
    asked = invoke(
        "investigate", "Which runbook applies to KubePodCrashLooping?",
        "--subject", "globex/user:mallory", "--json",
    )  # fmt: skip
    assert asked.code == 0, asked
    assert "runbook:KubePodCrashLooping" not in asked.out


def test_an_alert_with_no_runbook_linked_gets_the_one_named_after_it(  # type: ignore[no-untyped-def]
    markdown_only: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # The alert is imported after its runbook, and its rule names no runbook_url.
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "groups:\n- name: k\n  rules:\n"
        "  - {alert: KubePodCrashLooping, expr: up == 0, annotations: {summary: Pod restarts.}}\n",
        encoding="utf-8",
    )
    assert invoke(
        "ingest", str(rules), "--format", "prometheus-rules", "--tenant", "acme",
        "--acl", "internal",
    ).code == 0  # fmt: skip
    linked, _, _ = markdown_only.execute_query(
        "MATCH (:KG:Runbook)-[l:APPLIES_TO]->(:KG:Alert {id: 'alert:KubePodCrashLooping'}) "
        "RETURN count(l) AS n"
    )
    assert linked[0]["n"] == 0  # the setup this test is about
    doc = json.loads(
        invoke(
            "runbook", "--alert", "KubePodCrashLooping", "--subject", "user:oncall", "--json"
        ).out
    )
    assert doc["resolved"] == ["alert:KubePodCrashLooping"]
    assert doc["runbook"]["id"] == "runbook:KubePodCrashLooping"
    assert doc["note"].startswith(
        "no runbook is linked to alert:KubePodCrashLooping (none APPLIES_TO it); "
        "runbook:KubePodCrashLooping is named after it"
    )
    # Pasted text that names the alert gets what --alert gets: the runbook named after it.
    pasted = json.loads(
        invoke(
            "runbook", "[FIRING:1] KubePodCrashLooping on node ip-10-0-3-17",
            "--subject", "user:oncall", "--json",
        ).out
    )  # fmt: skip
    assert pasted["resolved"] == ["alert:KubePodCrashLooping"]
    assert pasted["runbook"]["id"] == "runbook:KubePodCrashLooping"
    assert pasted["note"] == doc["note"]


def test_a_file_spelling_the_alert_name_in_words_is_named_after_it(  # type: ignore[no-untyped-def]
    markdown_only: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    # stolostron/managed-service-runbooks names its files in words
    # (policy-propagator-high-error-rate.md): `--alert PolicyPropagatorHighErrorRate` said
    # "no visible id is close to it", and the name typed as text matched nothing
    # ("no runbook mentions any of: policypropagatorhigherrorrate").
    (tmp_path / "ledger-sync-high-error-rate.md").write_text(
        "# Ledger sync high error rate\n\n## Mitigation\n\n1. Restart the ledger sync worker.\n",
        encoding="utf-8",
    )
    assert invoke(
        "ingest", str(tmp_path), "--format", "markdown-runbooks", "--tenant", "acme",
        "--acl", "internal",
    ).code == 0  # fmt: skip
    for args in (("--alert", "LedgerSyncHighErrorRate"), ("LedgerSyncHighErrorRate",)):
        doc = json.loads(invoke("runbook", *args, "--subject", "user:oncall", "--json").out)
        assert doc["runbook"]["id"] == "runbook:ledger-sync-high-error-rate", (args, doc["note"])
        assert doc["runbook"]["steps"] == ["1. Restart the ledger sync worker."]
    card = invoke("runbook", "--alert", "LedgerSyncHighErrorRate", "--subject", "user:oncall")
    assert "runbook:ledger-sync-high-error-rate is named after it" in card.out, card.out
    # A slip in the name: the runbook named after it is offered ("no visible id is close"
    # before: only alerts were looked at, and the name was not split into its words).
    for slip in ("LedgerSyncHighErorRate", "ledger-sync-high-eror-rate"):
        typo = invoke("runbook", "--alert", slip, "--subject", "user:oncall")
        assert typo.code == 0, typo
        assert "did you mean runbook:ledger-sync-high-error-rate?" in typo.out, typo.out


def test_a_page_line_pasted_after_alert_is_its_alert(  # type: ignore[no-untyped-def]
    markdown_only: neo4j.Driver, invoke
) -> None:
    # A hurried user pasted the page's line after --alert: "no alert matching '[FIRING:1]
    # ...' is visible ... no visible id is close to it", while the same text as TEXT worked.
    pasted = "[FIRING:1] KubePodCrashLooping (checkout payments critical)"
    doc = json.loads(invoke("runbook", "--alert", pasted, "--subject", "user:oncall", "--json").out)
    assert doc["runbook"]["id"] == "runbook:KubePodCrashLooping", doc["note"]
    # Two names in one line choose nothing: said as before.
    two = invoke("runbook", "--alert", "KubePodCrashLooping or KubeAPIDown", "--subject",
                 "user:oncall")  # fmt: skip
    assert two.code == 0 and two.out.startswith("No runbook"), two.out
