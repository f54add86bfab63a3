"""The `investigator runbook` card shows a Markdown runbook's steps as a reader sees them
rendered, on a real Neo4j (findings of exploratory testing on KubeVirt's and GOV.UK's
runbooks, reproduced here with small files of our own):

- code in a fence keeps its indentation on the card (YAML copied from it was flush left);
- HTML comments (`<!--DS: ... -->`, `<!--USstart-->`) are no steps;
- a hard-wrapped sentence or list item is one step line, not one per source line;
- link reference definitions are no steps; the ones the shown steps use follow them;
- a page whose human steps send a key to a consumer, or whose link definitions name a
  mail repository and a password vault, is served, not withheld as an instruction;
- a version withheld as untrusted instruction-like text says so, says where (the file's line,
  never the words) and
  says how a team that trusts the source imports it, instead of "no version is valid".
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import import_runbook_folder

FIXTURES = Path(__file__).parent / "fixtures"
FOLDER = FIXTURES / "card-markdown"


@pytest.fixture()
def imported(driver: neo4j.Driver, cli_env: object, invoke) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    # Untrusted, as an explorer imports a folder: the card serves what holds no instruction.
    import_runbook_folder(driver, invoke, FOLDER)
    return driver


def _card(invoke, *args: str) -> str:  # type: ignore[no-untyped-def]
    result = invoke("runbook", *args, "--subject", "user:oncall")
    assert result.code == 0, result
    return result.out  # type: ignore[no-any-return]


def _steps(invoke, *args: str) -> list[str]:  # type: ignore[no-untyped-def]
    result = invoke("runbook", *args, "--subject", "user:oncall", "--json")
    assert result.code == 0, result
    return json.loads(result.out)["runbook"]["steps"]  # type: ignore[no-any-return]


def test_fenced_code_keeps_its_indentation_on_the_card(imported, invoke) -> None:  # type: ignore[no-untyped-def]
    card = _card(invoke, "--alert", "DemoOperatorDown")
    # The YAML as written, under the card's column: copied, it is the runbook's YAML.
    assert (
        "          demoHelmValues:\n"
        "            operator:\n"
        "              replicaCount: 4   # increased from 3\n"
    ) in card


def test_comments_and_hard_wraps_are_not_step_lines(imported, invoke) -> None:  # type: ignore[no-untyped-def]
    steps = _steps(invoke, "--alert", "DemoOperatorDown")
    assert steps == [
        "Try to identify the root cause and resolve the issue. Common causes include:",
        "- CrashLoopBackOff: the `demo-operator` container is crashing repeatedly. "
        "Check the pod logs.",
        "- Pods absent: no pods exist. Check whether the deployment has been scaled to zero.",
        "Raise the replicas in `values.yaml`:",
        "demoHelmValues:",
        "  operator:",
        "    replicaCount: 4   # increased from 3",
    ]
    card = _card(invoke, "--alert", "DemoOperatorDown")
    assert "<!--" not in card and "support case" not in card
    assert "Steps     Try to identify the root cause and resolve the issue. Common causes" in card


def test_link_definitions_are_not_steps_and_used_ones_follow_them(imported, invoke) -> None:  # type: ignore[no-untyped-def]
    steps = _steps(invoke, "demo router error ratio too high")
    assert steps == [
        "- Roll back the last deploy of the app.",
        "- Scale the app: see the following [documentation][scale-app] to do this.",
        "[scale-app]: /kubernetes/scale-app/#scaling-your-app",
    ]


def test_a_version_withheld_as_untrusted_says_so_and_where_not_the_words(imported, invoke) -> None:  # type: ignore[no-untyped-def]
    card = _card(invoke, "demo api user token expires soon")
    first = card.splitlines()[0]
    assert first.startswith("No runbook: ")
    assert "is valid at as_of" not in first
    assert "withheld as untrusted text with an instruction-like fragment" in first
    assert "rejected_untrusted_instruction" in card
    assert "post the new token" not in card  # where it is, never the words
    # The file's line (10), not the line of the text after the front matter (5).
    assert "instruction-like text in line 10 of its file, not quoted" in card, card
    assert "--trusted, see docs/security.md" in card


def test_a_human_step_sending_a_token_and_link_definitions_are_served(imported, invoke) -> None:  # type: ignore[no-untyped-def]
    # GOV.UK's token-expiry and email-alerts pages were withheld as "instruction-like": a
    # step sending the token to the consumer, and "email" inside a repository's name read
    # across a line break into the next link definition's "password".
    card = _card(invoke, "demo consumer key rotation overdue")
    assert card.startswith("Runbook   Demo consumer key rotation overdue"), card
    assert "rejected_untrusted_instruction" not in card
    assert "Securely send the key and its token to the consumer" in card


def test_where_the_content_starts_leaves_the_record_one_version() -> None:
    # A page imported before the importer kept `content_first_line` re-imports as a no-op.
    from graph_schema.hashing import content_hash

    record = {"id": "runbook:demo", "content": "# Demo", "source_version": "sha256:ab"}
    assert content_hash({**record, "content_first_line": 6}) == content_hash(record)
