"""`investigate` and the runbook card agree on a runbook: the section an error id in the
question heads, the version named by a claim, a rule removed from its file, and the text a
preview shows. On a real Neo4j, through the CLI, with the user's words.

Before: "What do I do about err-ops-sample-too-old on the ingester?" got the section on the
card and "no runbook was used" from `investigate`; a runbook `fact` claim named no version
(the `inference` one did); `investigate` said nothing of an alert whose rule was removed
at re-import (the card says it first); and the Evidence preview kept `**` and `###`.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import neo4j
import pytest
from conftest import import_runbooks_and_rules, ingest_as

PAGE = """# Ops runbooks

Every alert of the ops mixin links a section of this page.

## Alerts

### OpsIngesterUnhealthy

How to **fix** it:

- Restart the unhealthy ingester pod and watch the ring page.

### OpsCompactorFailing

How to **fix** it:

- Check the compactor logs for the failing block and mark it for no-compaction.

## Errors catalog

### err-ops-sample-too-old

This error occurs when **the ingester** rejects a sample whose timestamp is older than the
newest one of its series.

How to **fix** it:

- Make the client send samples in order, or widen `-ingester.out-of-order-window`.

### err-ops-series-limit

The tenant has more series than its **per-tenant** limit allows.
"""

URL = "https://docs.example.com/ops/latest/ops-runbooks/#{anchor}"
RULES = {
    "OpsIngesterUnhealthy": "min(ops_ring_members{state='Unhealthy'}) > 0",
    "OpsCompactorFailing": "increase(ops_compactor_runs_failed_total[2h]) > 1",
}
SUBJECT = "opsco/user:oncall"


def _rules_text(rules: dict[str, str]) -> str:
    body = "".join(
        f"      - alert: {name}\n"
        f"        expr: {expr}\n"
        "        labels: {severity: critical}\n"
        f"        annotations: {{summary: {name} fired., "
        f"runbook_url: '{URL.format(anchor=name.lower())}'}}\n"
        for name, expr in rules.items()
    )
    return f"groups:\n  - name: ops\n    rules:\n{body}"


def _rules_file(path: Path, rules: dict[str, str]) -> Path:
    path.write_text(_rules_text(rules), encoding="utf-8")
    return path


def _ingest(invoke, path: Path, fmt: str):  # type: ignore[no-untyped-def]
    return ingest_as(invoke, path, fmt, "opsco")


def _card(invoke, *args: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("runbook", *args, "--subject", SUBJECT, "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def _investigate(invoke, question: str, *flags: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("investigate", question, "--subject", SUBJECT, *flags, "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


@pytest.fixture()
def ops(tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke) -> Path:  # type: ignore[no-untyped-def]
    """opsco's principal, the page (alert sections and error-id sections), the rules."""
    rules = import_runbooks_and_rules(
        invoke, tmp_path, "opsco", runbooks={"ops-runbooks.md": PAGE}, rules=_rules_text(RULES),
        folder="ops-runbooks",
    )  # fmt: skip
    assert rules.err.count("ingest: linked: runbook:ops-runbooks APPLIES_TO ") == 2, rules.err
    return tmp_path


def test_an_error_id_in_the_question_gets_the_section_the_card_shows(  # type: ignore[no-untyped-def]
    ops: Path, invoke
) -> None:
    question = "What do I do about err-ops-sample-too-old on the ingester?"
    card = _card(invoke, question)
    assert card["runbook"]["steps_locator"] == "ops-runbooks.md#err-ops-sample-too-old"
    answer = _investigate(invoke, question)
    assert answer["status"] == "complete", answer["missing_evidence"]
    [runbook] = [ev for ev in answer["evidence"] if ev["element_id"] == "runbook:ops-runbooks"]
    # That section as the evidence, not the whole page of every alert and error.
    assert runbook["locator"] == card["runbook"]["steps_locator"]
    assert runbook["content"].startswith("### err-ops-sample-too-old\n")
    assert "OpsCompactorFailing" not in runbook["content"]
    [claim] = [c for c in answer["claims"] if c["statement"].startswith("Runbook ")]
    assert claim["statement"].endswith("[ops-runbooks.md#err-ops-sample-too-old]"), claim
    text = invoke("investigate", question, "--subject", SUBJECT)
    # What the id matched, not "matched nothing visible ... The answer is the section".
    assert (
        "\nName       'err-ops-sample-too-old' in the question matched the heading of the "
        "section ops-runbooks.md#err-ops-sample-too-old of runbook:ops-runbooks, which the "
        "answer cites; it is the name of no record visible to opsco/user:oncall.\n"
    ) in text.out, text.out
    replay = invoke("replay", answer["run_id"], "--subject", SUBJECT, "--json")
    assert replay.code == 0 and json.loads(replay.out)["verified"] is True, replay


def test_a_runbook_fact_names_its_version_as_the_card_does(  # type: ignore[no-untyped-def]
    ops: Path, invoke
) -> None:
    card = _card(invoke, "--alert", "OpsIngesterUnhealthy")
    label = card["runbook"]["source_version"][: len("sha256:") + 12]
    answer = _investigate(invoke, "Which runbook applies to OpsIngesterUnhealthy?")
    [claim] = [c for c in answer["claims"] if c["statement"].startswith("Runbook ")]
    assert claim["epistemic_status"] == "fact", claim
    assert f"(runbook:ops-runbooks, {label}) is the version in force" in claim["statement"]


def test_a_removed_rule_is_said_by_investigate_as_on_the_card(  # type: ignore[no-untyped-def]
    ops: Path, invoke
) -> None:
    before = datetime.now(UTC)
    time.sleep(0.05)
    kept = {k: v for k, v in RULES.items() if k != "OpsCompactorFailing"}
    _ingest(invoke, _rules_file(ops / "rules.yaml", kept), "prometheus-rules")
    note = _card(invoke, "--alert", "OpsCompactorFailing")["note"]
    assert note.startswith("alert:OpsCompactorFailing: its rule was not in"), note
    question = "What do I do about OpsCompactorFailing?"
    answer = _investigate(invoke, question)
    # Still answered (nothing is retracted), and said in the card's words.
    assert answer["rule_notes"] == [note]
    assert any(ev["element_id"] == "runbook:ops-runbooks" for ev in answer["evidence"])
    text = invoke("investigate", question, "--subject", SUBJECT)
    assert f"\nNote       {note}\n" in text.out, text.out
    assert _investigate(invoke, "What do I do about OpsIngesterUnhealthy?")["rule_notes"] == []
    # Known before that import, the rule was there.
    earlier = before.isoformat().replace("+00:00", "Z")
    assert _investigate(invoke, question, "--known-at", earlier)["rule_notes"] == []
    replay = invoke("replay", answer["run_id"], "--subject", SUBJECT, "--json")
    assert replay.code == 0 and json.loads(replay.out)["verified"] is True, replay


def test_the_evidence_preview_is_plain_text_as_on_the_card(  # type: ignore[no-untyped-def]
    ops: Path, invoke
) -> None:
    text = invoke("investigate", "What do I do about OpsIngesterUnhealthy?", "--subject", SUBJECT)
    assert text.code == 0, text
    preview = text.out.split("\nEvidence\n", 1)[1].splitlines()[1].strip()
    # Before: "### OpsIngesterUnhealthy How to **fix** it: - Restart ...".
    assert preview == (
        "OpsIngesterUnhealthy: How to fix it: - Restart the unhealthy ingester pod and watch "
        "the ring page."
    ), text.out
    card = invoke("runbook", "--alert", "OpsIngesterUnhealthy", "--subject", SUBJECT)
    assert "How to fix it:" in card.out and "**" not in card.out
