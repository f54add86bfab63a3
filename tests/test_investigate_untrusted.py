"""`investigate` on imported (untrusted) runbooks, on a real Neo4j (explorer e1's findings on
GitLab's runbooks, reproduced with small files of our own):

- a runbook's SQL and HTTP steps ("DROP INDEX CONCURRENTLY ...", "a POST request to
  /oauth/token") and "You are now responsible for ..." are steps, served, not withheld;
- what rests on untrusted evidence says so in the report, as the runbook card does;
- a page addressed to the assistant reading it ("Note for the automated investigation
  assistant reading this page: ... tell the engineer ...") is withheld, and the report says
  where the instruction is (never its words), that the runbook was found but withheld, and
  names `--trusted`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import neo4j
import pytest
from conftest import import_runbook_folder

FIXTURES = Path(__file__).parent / "fixtures"
FOLDER = FIXTURES / "investigate-untrusted"


@pytest.fixture()
def imported(driver: neo4j.Driver, cli_env: object, invoke) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    import_runbook_folder(driver, invoke, FOLDER)  # untrusted, an imported folder's default
    return driver


def _investigate(invoke, question: str, *extra: str) -> str:  # type: ignore[no-untyped-def]
    result = invoke("investigate", question, "--subject", "user:oncall", *extra)
    assert result.code == 0, result
    return result.out  # type: ignore[no-any-return]


def test_sql_and_http_steps_are_served_and_marked_untrusted(imported, invoke) -> None:  # type: ignore[no-untyped-def]
    report = _investigate(invoke, "demo sentry is down, what do I do?")
    assert "runbook:demo-sentry-is-down: rejected" not in report
    claim = next(line for line in report.splitlines() if "runbook:demo-sentry-is-down" in line)
    # Found by its words alone: an inference (tests/test_investigate_bare_symptom.py).
    assert claim.lstrip().startswith("[inference")
    # The claim's own line says it rests on untrusted evidence, as `--json` does with the
    # claim's `trust` (before, only the evidence line below did: explorer e29, m8).
    assert claim.lstrip().startswith("[inference ] [untrusted] "), claim
    lines = report.splitlines()
    # The claim's evidence line and the evidence itself say untrusted.
    evidence_line = lines[lines.index(claim) + 1]
    assert evidence_line.strip().startswith("evidence: ev:")
    assert evidence_line.endswith("(untrusted)")
    shown = next(
        line for line in lines if line.lstrip().startswith("ev:") and "demo-sentry" in line
    )
    assert shown.endswith("(runbook)  untrusted")
    document = json.loads(_investigate(invoke, "demo sentry is down, what do I do?", "--json"))
    [ev] = [e for e in document["evidence"] if e["element_id"] == "runbook:demo-sentry-is-down"]
    assert ev["trust"] == "untrusted"


def test_a_page_addressed_to_the_assistant_is_withheld_and_the_report_says_why(  # type: ignore[no-untyped-def]
    imported, invoke
) -> None:
    report = _investigate(invoke, "demo gitaly is slow, how do I fix it?")
    assert "delete the repository storage" not in report
    assert "[fact" not in report
    lines = report.splitlines()
    rejected = lines.index("  runbook:demo-gitaly-slow-fix: rejected_untrusted_instruction")
    hint = lines[rejected + 1]
    # Where the instruction is, never its words: quoted, they were the instruction again.
    assert re.search(r"instruction-like text in line \d+ of its text, not quoted", hint), hint
    assert "automated investigation assistant" not in report
    assert "--trusted" in hint
    [missing] = [line for line in lines if line.startswith("  runbook (required): ")]
    assert "valid at as_of" not in missing
    assert "found (runbook:demo-gitaly-slow-fix) but withheld as untrusted" in missing
    assert "--trusted" in missing
    document = json.loads(_investigate(invoke, "demo gitaly is slow, how do I fix it?", "--json"))
    [rejected] = [
        r for r in document["rejected"] if r["reason"] == "rejected_untrusted_instruction"
    ]
    assert rejected["detail"].endswith("of its text (not quoted)"), rejected
    assert "automated investigation assistant" not in json.dumps(document)
    [gap] = [m for m in document["missing_evidence"] if m["evidence_type"] == "runbook"]
    assert "withheld as untrusted" in gap["description"]
    card = invoke("runbook", "demo gitaly slow fix", "--subject", "user:oncall")
    assert card.out.startswith("No runbook: "), card


def test_a_run_recorded_quoting_the_words_is_traced_naming_the_place(  # type: ignore[no-untyped-def]
    imported, invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run recorded by the gate of before, which quoted the instruction-like words in the
    # rejection's detail. Before: `trace` (and the served `trace` tool, the same filter)
    # showed them as recorded: the instruction again, in front of the agent the gate kept
    # it from. Now the display says `(not quoted)`; the stored record still verifies.
    from investigator import gate

    question = "demo gitaly is slow, how do I fix it? (recorded by the gate of before)"
    with monkeypatch.context() as patch:
        patch.setattr(
            gate,
            "instruction_detail",
            lambda text, fragment, first_line=None, kind=None: (
                f"untrusted source contains instruction-like text: {fragment!r}"
            ),
        )
        document = json.loads(_investigate(invoke, question, "--json"))
    run_id = document["run_id"]
    for fmt in ((), ("--json",)):
        shown = invoke("trace", run_id, "--subject", "acme/user:oncall", *fmt)
        assert shown.code == 0, shown  # verifies: the stored record is unchanged
        assert "automated investigation assistant" not in shown.out.lower(), shown.out
    traced = invoke("trace", run_id, "--subject", "acme/user:oncall", "--json")
    nodes = json.loads(traced.out)["nodes"]
    details = [(n.get("content") or {}).get("detail") for n in nodes if n["kind"] == "rejection"]
    assert "untrusted source contains instruction-like text (not quoted)" in details, details
    # Replay and the run list never printed the detail: checked, so that none starts to.
    for args in (("replay", run_id), ("runs",)):
        said = invoke(*args, "--subject", "acme/user:oncall", "--json")
        assert said.out and "automated investigation assistant" not in said.out.lower(), said
