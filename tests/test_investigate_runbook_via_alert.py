"""`investigate` of a runbook reached through its alert, as on the runbook card: a folder of
one runbook per alert and the rules that link them by `runbook_url` (KubeVirt's layout).
On a real Neo4j, through the CLI, with the user's words.

Before: "vm-agent down on a node, what do I do?" printed `Name 'vm-agent' in the question
matched nothing visible ... The answer does not cover it.` beside a claim about the very
runbook of vm-agent; the alert the question names was listed under `Rejected` as
`low_relevance` (both rules of a name with two, `@critical` and `@warning`); and the claim
cited the whole file while the card's Locator names the section of the steps.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import import_runbooks_and_rules, investigate_json

RUNBOOKS = {
    "VmAgentDown": """# VmAgentDown

## Meaning

No running `vm-agent` pod has been detected for 10 minutes.

## Impact

Virtual machines on the node cannot be started, stopped or migrated.

## Diagnosis

Check the state of the `vm-agent` pods:

    kubectl get pods -n vmco -l app=vm-agent

## Mitigation

- Restart the `vm-agent` daemon set and watch its pods become ready.
""",
    "VmDiskFull": """# VmDiskFull

## Meaning

A file system inside a guest is almost full.

## Mitigation

- Grow the guest disk, or remove old logs inside the guest.
""",
    "VmClockSkew": """# VmClockSkew

## Meaning

The guest clock drifts from the node's clock.

## Mitigation

- Enable the guest time agent.
""",
}

URL = "https://vmco.example.com/runbooks/{name}"
# (alert, severity, summary): VmDiskFull twice, as an upstream rule file can have it.
RULES = [
    ("VmAgentDown", "critical", "vm-agent is down on a node."),
    ("VmDiskFull", "warning", "Guest file system almost full."),
    ("VmDiskFull", "critical", "Guest file system full."),
]
SUBJECT = "vmco/user:oncall"


@pytest.fixture()
def vmco(tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke) -> Path:  # type: ignore[no-untyped-def]
    """vmco's principal, a folder of one runbook per alert, and the rules linking them."""
    body = "".join(
        f"      - alert: {name}\n"
        f"        expr: vmco_up{{job='{name}'}} == 0\n"
        f"        labels: {{severity: {severity}}}\n"
        f"        annotations: {{summary: '{summary}', runbook_url: '{URL.format(name=name)}'}}\n"
        for name, severity, summary in RULES
    )
    linked = import_runbooks_and_rules(
        invoke, tmp_path, "vmco",
        runbooks={f"{name}.md": text for name, text in RUNBOOKS.items()},
        rules=f"groups:\n  - name: vm\n    rules:\n{body}",
    )  # fmt: skip
    assert linked.err.count("ingest: linked: runbook:") == 3, linked.err
    return tmp_path


def _card(invoke, *args: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("runbook", *args, "--subject", SUBJECT, "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def _runbook_claim(doc: dict) -> dict:  # type: ignore[type-arg]
    [claim] = [c for c in doc["claims"] if c["statement"].startswith("Runbook ")]
    return claim  # type: ignore[no-any-return]


def test_a_word_the_answers_runbook_writes_is_said_as_matched_not_as_uncovered(  # type: ignore[no-untyped-def]
    vmco: Path, invoke
) -> None:
    question = "vm-agent down on a node, what do I do?"
    doc = investigate_json(invoke, question, "--subject", SUBJECT)
    claim = _runbook_claim(doc)
    assert claim["statement"].startswith("Runbook VmAgentDown (runbook:VmAgentDown, "), claim
    note = (
        "'vm-agent' in the question matched the text of runbook:VmAgentDown, which the "
        "answer cites; it is the name of no record visible to vmco/user:oncall."
    )
    assert [n["note"] for n in doc["unresolved_names"]] == [note]
    text = invoke("investigate", question, "--subject", SUBJECT)
    assert f"\nName       {note}\n" in text.out, text.out
    assert "does not cover it" not in text.out
    # A name that nothing in the answer writes is still said as not covered.
    other = invoke("investigate", "vm-agnet down on a node, what do I do?", "--subject", SUBJECT)
    assert "'vm-agnet' in the question matched nothing visible" in other.out, other.out
    assert "The answer does not cover it." in other.out


def test_the_alert_a_question_names_is_not_a_rejected_candidate(  # type: ignore[no-untyped-def]
    vmco: Path, invoke
) -> None:
    doc = investigate_json(invoke, "VmAgentDown is firing, how do I fix it?", "--subject", SUBJECT)
    assert _runbook_claim(doc)["epistemic_status"] == "fact"
    rejected = {r["element_id"] for r in doc["rejected"]}
    assert "alert:VmAgentDown" not in rejected, doc["rejected"]
    # Both rules of a name written twice link the one runbook: neither is rejected.
    doc = investigate_json(invoke, "Which runbook applies to VmDiskFull?", "--subject", SUBJECT)
    assert _runbook_claim(doc)["statement"].startswith("Runbook VmDiskFull (runbook:VmDiskFull, ")
    rejected = {r["element_id"] for r in doc["rejected"]}
    assert not {"alert:VmDiskFull@warning", "alert:VmDiskFull@critical"} & rejected, rejected
    text = invoke("investigate", "Which runbook applies to VmDiskFull?", "--subject", SUBJECT)
    assert "alert:VmDiskFull" not in text.out.split("\nRejected\n", 1)[-1], text.out


def test_a_runbook_reached_through_its_alert_is_cited_at_the_cards_section(  # type: ignore[no-untyped-def]
    vmco: Path, invoke
) -> None:
    card = _card(invoke, "--alert", "VmAgentDown")
    assert card["runbook"]["steps_locator"] == "VmAgentDown.md#mitigation"
    asked = ("VmAgentDown is firing, how do I fix it?", "vm-agent down on a node, what do I do?")
    for question in asked:
        doc = investigate_json(invoke, question, "--subject", SUBJECT)
        claim = _runbook_claim(doc)
        # Before: "[VmAgentDown.md]", the whole file.
        assert claim["statement"].endswith("[VmAgentDown.md#mitigation]"), claim["statement"]
        # The same evidence as the card's.
        assert claim["evidence_ids"] == [card["runbook"]["evidence_id"]]
        replay = invoke("replay", doc["run_id"], "--subject", SUBJECT, "--json")
        assert replay.code == 0 and json.loads(replay.out)["verified"] is True, replay
