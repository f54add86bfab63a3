"""Markdown runbooks read as CommonMark writes them, on a real Neo4j: AWS GuardDuty's finding
pages (a setext title `Backdoor:EC2/Spambot` over a `---` line, `###### Note` asides inside
the text) and GitLab's runbooks (a one-line ```` ```cmd``` ````, a heading in backticks, an
image before the steps).

Before: the setext title was no heading (the card's title was the `###` sentence) and
`--alert Backdoor:EC2/Spambot` found nothing; the first `###### Note` ended the steps before
the action; ```` ```sudo iotop -P -a``` ```` opened a fence, so a shell comment became the
title and the later sections vanished; ``## `KubeContainersWaitingInError` `` was no alert's
section; the image was the first step.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import import_runbook_folder

FIXTURES = Path(__file__).parent / "fixtures"
RUNBOOKS = FIXTURES / "markdown-names" / "runbooks"


@pytest.fixture()
def imported(driver: neo4j.Driver, cli_env: object, invoke) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    import_runbook_folder(driver, invoke, RUNBOOKS, "--trusted")
    return driver


def _card(invoke, *args: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("runbook", *args, "--subject", "user:oncall", "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def _props(driver: neo4j.Driver, runbook_id: str) -> tuple[str, list[str]]:
    with driver.session() as session:
        row = session.run(
            "MATCH (r:Runbook {id: $id}) RETURN r.title AS title, r.section_titles AS sections",
            id=runbook_id,
        ).single()
    assert row is not None, runbook_id
    return row["title"], row["sections"]


def test_a_guardduty_finding_is_found_and_titled_by_its_name(  # type: ignore[no-untyped-def]
    imported: neo4j.Driver, invoke
) -> None:
    title, sections = _props(imported, "runbook:backdoor-ec2-spambot")
    assert title == "Backdoor:EC2/Spambot"
    assert sections[0] == "Backdoor:EC2/Spambot"

    card = _card(invoke, "--alert", "Backdoor:EC2/Spambot")["runbook"]
    assert card["id"] == "runbook:backdoor-ec2-spambot"
    assert card["title"] == "Backdoor:EC2/Spambot"
    assert any("isolate the instance" in line for line in card["steps"])
    shown = invoke("runbook", "--alert", "Backdoor:EC2/Spambot", "--subject", "user:oncall")
    assert shown.code == 0, shown
    assert "Backdoor:EC2/Spambot" in shown.out
    assert "------" not in shown.out


def test_a_note_heading_inside_a_finding_does_not_end_its_steps(  # type: ignore[no-untyped-def]
    imported: neo4j.Driver, invoke
) -> None:
    name = "UnauthorizedAccess:IAMUser/InstanceCredentialExfiltration.OutsideAWS"
    card = _card(invoke, "--alert", name)["runbook"]
    assert card["title"] == name
    assert card["steps"][0] == "Remediation recommendations:"
    assert "Note:" in card["steps"]
    assert card["steps"][-1] == (
        "If this activity is unexpected, rotate the instance role's credentials now."
    )
    assert not any(line.startswith("#") for line in card["steps"])


def test_a_one_line_code_span_of_backticks_opens_no_fence(  # type: ignore[no-untyped-def]
    imported: neo4j.Driver, invoke
) -> None:
    title, sections = _props(imported, "runbook:db-degradation")
    assert title == "Database degradation"
    assert sections == [
        "Database degradation",
        "Check IO saturation",
        "Check network",
        "Check slow queries",
    ]


def test_an_alert_heading_in_backticks_is_the_alerts_section(  # type: ignore[no-untyped-def]
    imported: neo4j.Driver, invoke
) -> None:
    card = _card(invoke, "--alert", "KubeContainersWaitingInError")["runbook"]
    assert card["id"] == "runbook:kubernetes"
    assert card["steps_locator"] == "kubernetes.md#kubecontainerswaitinginerror"
    assert card["steps"][1] == "1. Check the quota of the node pool."
    pasted = _card(invoke, "[FIRING:1] KubeContainersWaitingInError (gitlab-production)")
    assert pasted["runbook"]["id"] == "runbook:kubernetes"
    assert pasted["runbook"]["steps"] == card["steps"]


def test_an_image_is_no_step(imported: neo4j.Driver, invoke) -> None:  # type: ignore[no-untyped-def]
    card = _card(invoke, "Gitaly Queuing")["runbook"]
    assert card["id"] == "runbook:gitaly-queuing"
    assert card["steps"][0] == "* Gitaly queueing alerts"
    assert not any("![" in line for line in card["steps"])


def test_investigate_previews_a_finding_without_its_underline(  # type: ignore[no-untyped-def]
    imported: neo4j.Driver, invoke
) -> None:
    result = invoke(
        "investigate", "Backdoor:EC2/Spambot fired, what do I do?", "--subject", "user:oncall"
    )
    assert result.code == 0, result
    assert "runbook:backdoor-ec2-spambot" in result.out
    # As the card renders it: the `###` heading as its words (before: "... ### An EC2 ..."),
    # the preview starting at the section the claim cites (fix-runbook-ids-and-ties).
    assert "      An EC2 instance talks to a remote host on port 25. Default severity" in result.out
    assert "-----" not in result.out
