"""An error id asked alone, two runbooks alike, a renamed runbook file and the preview of a
runbook cited at a section: said as they are. On a real Neo4j, through the CLI, with the
user's words.

Before: `investigate "BILL-2002"` was `partial` (the runbook of its section rejected as
`low_relevance`) while `runbook "BILL-2002"` showed the section, and a question whose other
words found other pages missed the section; "virt down" showed VirtControllerDown, first by
id, with no note, and `investigate` cited it as the answer; a runbook re-imported under a new
file name still listed its old id under text matches; the Evidence preview of a whole runbook
cited at `X.md#mitigation` started at the top of the file; `investigate` still listed the
renamed file's old id under Rejected.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import neo4j
import pytest

SUBJECT = "acme/user:bob"

ERRORS = """# Billing errors

## BILL-1001
Restart the invoice worker with `svcctl restart invoice`.

## BILL-2002
Rotate the API key with `keyctl rotate billing`.
"""

# Pages whose words a question about BILL-2002 shares: they fill its own text hits.
INVOICE = """# Invoice queue {n}

The invoice queue worker {n} keeps failing. Restart the invoice queue worker {n}; if the
invoice queue keeps failing, drain the invoice queue worker.
"""

VIRT = """# Virt{part}Down

## Meaning
No running virt-{lower} pod has been detected for 10 minutes.

## Mitigation
Check the virt-{lower} pods with `kubectl -n kubevirt get pods -l kubevirt.io=virt-{lower}`.
"""

RULES = """groups:
- name: kubevirt
  rules:
  - alert: VirtHandlerDown
    expr: kubevirt_virt_handler_up == 0
    annotations:
      summary: No running virt-handler pod has been detected for 10 minutes.
      runbook_url: https://runbooks.example.org/kubevirt/VirtHandlerDown
  - alert: VirtControllerDown
    expr: kubevirt_virt_controller_up == 0
    annotations:
      summary: No running virt-controller pod has been detected for 10 minutes.
      runbook_url: https://runbooks.example.org/kubevirt/VirtControllerDown
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The module's folders: a re-import of the same path writes nothing new."""
    root = tmp_path_factory.mktemp("ids-and-ties")
    (root / "billing").mkdir()
    (root / "billing" / "Errors.md").write_text(ERRORS)
    (root / "invoices").mkdir()
    for n in range(1, 13):
        (root / "invoices" / f"invoice-{n}.md").write_text(INVOICE.format(n=n))
    (root / "kubevirt").mkdir()
    for part in ("Handler", "Controller"):
        text = VIRT.format(part=part, lower=part.lower())
        (root / "kubevirt" / f"Virt{part}Down.md").write_text(text)
    (root / "kubevirt-rules.yaml").write_text(RULES)
    return root


def _ingest(invoke, path: Path, fmt: str = "markdown-runbooks") -> None:  # type: ignore[no-untyped-def]
    result = invoke("ingest", str(path), "--format", fmt, "--tenant", "acme", "--acl", "internal")
    assert result.code == 0, result


@pytest.fixture()
def imported(files: Path, demo_graph: neo4j.Driver, cli_env: object, invoke) -> Path:  # type: ignore[no-untyped-def]
    """The demo dataset, the page of codes, twelve invoice pages and two kubevirt runbooks
    with their alert rules, in tenant acme."""
    for folder in ("billing", "invoices", "kubevirt"):
        _ingest(invoke, files / folder)
    _ingest(invoke, files / "kubevirt-rules.yaml", "prometheus-rules")
    return files


def _investigate(invoke, question: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("investigate", question, "--subject", SUBJECT, "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def _card(invoke, *args: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("runbook", *args, "--subject", SUBJECT, "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def _runbook_claims(answer: dict) -> list[dict]:  # type: ignore[type-arg]
    return [c for c in answer["claims"] if c["statement"].startswith("Runbook ")]


def test_an_error_id_alone_is_answered_with_its_section_as_the_card_does(  # type: ignore[no-untyped-def]
    imported: Path, invoke
) -> None:
    assert _card(invoke, "BILL-2002")["runbook"]["steps_locator"] == "Errors.md#bill-2002"
    answer = _investigate(invoke, "BILL-2002")
    # Before: partial, no claim, runbook:Errors rejected as low_relevance.
    assert answer["status"] == "complete", answer["missing_evidence"]
    [claim] = _runbook_claims(answer)
    assert claim["statement"].endswith("[Errors.md#bill-2002]"), claim
    [runbook] = [ev for ev in answer["evidence"] if ev["element_id"] == "runbook:Errors"]
    assert "keyctl rotate billing" in runbook["content"]
    assert "BILL-1001" not in runbook["content"]
    assert all(r["element_id"] != "runbook:Errors" for r in answer["rejected"])
    replay = invoke("replay", answer["run_id"], "--subject", SUBJECT, "--json")
    assert replay.code == 0 and json.loads(replay.out)["verified"] is True, replay


def test_an_error_id_beside_words_other_pages_have_is_found_as_the_card_finds_it(  # type: ignore[no-untyped-def]
    imported: Path, invoke
) -> None:
    question = (
        "What do I do about BILL-2002? The invoice queue worker keeps failing and restarting."
    )
    card = _card(invoke, question)
    assert card["runbook"]["steps_locator"] == "Errors.md#bill-2002"
    answer = _investigate(invoke, question)
    # Before: an invoice page, found by the other words, was the answer (an inference).
    [claim] = _runbook_claims(answer)
    assert "runbook:Errors" in claim["statement"], claim
    assert claim["statement"].endswith("[Errors.md#bill-2002]"), claim
    assert not any(ev["element_id"].startswith("runbook:invoice-") for ev in answer["evidence"])


def test_two_runbooks_alike_are_a_tie_said_on_the_card_and_cited_by_no_answer(  # type: ignore[no-untyped-def]
    imported: Path, invoke
) -> None:
    pair = ["runbook:VirtControllerDown", "runbook:VirtHandlerDown"]
    card = _card(invoke, "virt", "down")
    assert card["tied"] == pair
    text = invoke("runbook", "virt", "down", "--subject", SUBJECT)
    assert (
        "\nNote      2 runbooks fit 'virt down' alike (runbook:VirtControllerDown, "
        "runbook:VirtHandlerDown): a tie, the words do not choose; the card shows "
        "runbook:VirtControllerDown, first by id only: add a word that tells them apart, or "
        "use --alert VirtControllerDown or --alert VirtHandlerDown\n"
    ) in text.out, text.out
    # A word that tells them apart chooses, and no tie is said.
    handler = _card(invoke, "virt", "handler", "down")
    assert handler["runbook"]["id"] == "runbook:VirtHandlerDown"
    assert handler["tied"] == []
    assert "alike" not in (handler["note"] or "")
    # investigate cites neither as the answer, and says why.
    for question in ("virt down", "Which runbook applies to virt down?"):
        answer = _investigate(invoke, question)
        assert _runbook_claims(answer) == [], answer["claims"]
        [gap] = [m for m in answer["missing_evidence"] if m["evidence_type"] == "runbook"]
        assert gap["required"] is True
        assert gap["description"].startswith(
            "the question's words fit 2 runbooks alike (runbook:VirtControllerDown, "
            "runbook:VirtHandlerDown): a tie, none is cited as the answer"
        ), gap
    assert _runbook_claims(_investigate(invoke, "virt handler down"))


def test_a_renamed_runbook_file_lists_only_its_current_id_in_text_matches(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    folder = tmp_path / "ledger"
    folder.mkdir()
    text = "# Ledger drain\n\nWhen the ledger reconciler stalls, run `ledgerctl drain`.\n"
    (folder / "ledger-drain.md").write_text(text)
    _ingest(invoke, folder)
    time.sleep(0.05)
    before = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    time.sleep(0.05)
    (folder / "reconciler").mkdir()
    (folder / "ledger-drain.md").rename(folder / "reconciler" / "reconciler-stalled.md")
    _ingest(invoke, folder)
    card = _card(invoke, "ledger", "reconciler", "stalls")
    assert card["runbook"]["id"] == "runbook:reconciler-stalled"
    # Before: runbook:ledger-drain, the record it replaced, was listed beside it.
    assert [m["id"] for m in card["text_matches"]] == ["runbook:reconciler-stalled"]
    # As known before the rename: the old id only.
    then = _card(invoke, "ledger", "reconciler", "stalls", "--known-at", before)
    assert then["runbook"]["id"] == "runbook:ledger-drain"
    assert [m["id"] for m in then["text_matches"]] == ["runbook:ledger-drain"]
    answer = _investigate(invoke, "What do I do when the ledger reconciler stalls?")
    # Before: the question's own text hits listed runbook:ledger-drain under Rejected
    # (low_relevance), a record no longer current under that id.
    assert all(r["element_id"] != "runbook:ledger-drain" for r in answer["rejected"]), answer[
        "rejected"
    ]
    assert "runbook:ledger-drain" not in {ev["element_id"] for ev in answer["evidence"]}
    replay = invoke("replay", answer["run_id"], "--subject", SUBJECT, "--json")
    assert replay.code == 0 and json.loads(replay.out)["verified"] is True, replay


def test_the_preview_of_a_runbook_cited_at_a_section_starts_at_that_section(  # type: ignore[no-untyped-def]
    imported: Path, invoke
) -> None:
    result = invoke(
        "investigate", "Which runbook applies to VirtHandlerDown?", "--subject", SUBJECT
    )
    assert result.code == 0, result
    assert "is the version in force at " in result.out
    lines = result.out.splitlines()
    [claim] = [line for line in lines if "Runbook VirtHandlerDown (runbook:" in line]
    assert claim.endswith("[VirtHandlerDown.md#mitigation]"), claim
    [at] = [i for i, line in enumerate(lines) if "  runbook:VirtHandlerDown  (runbook)" in line]
    # Before: "VirtHandlerDown: Meaning: No running virt-handler pod ...".
    assert (
        lines[at + 1].strip().startswith("Mitigation: Check the virt-handler pods with `kubectl")
    ), lines[at + 1]
