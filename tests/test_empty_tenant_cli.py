"""A question asked in a tenant that holds no record gets a note saying so (e31-qa m8).

A tenant id typed wrong at ingest leaves the principals' tenant without the records: every
question there found nothing, with no word why. Only the subject's own tenant is said."""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
from conftest import ingest_oncall_principals

QUESTION = "Who owned payment-api?"


def test_an_empty_tenant_is_named_in_cli_and_served_answers(
    demo_graph: neo4j.Driver, cli_env, invoke, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    ingest_oncall_principals(invoke, tmp_path, "emptyco")
    flags = ("--service", "svc:payment-api", "--subject", "emptyco/user:oncall")
    result = invoke("investigate", QUESTION, *flags)
    assert result.code == 0, result
    notes = [line for line in result.out.splitlines() if line.startswith("Note ")]
    assert len(notes) == 1, result.out
    assert notes[0].startswith(
        "Note       tenant emptyco has no records (its principals and their sources aside) "
        "known at "
    ), notes
    assert "nothing was ingested into it" in notes[0]
    assert "acme" not in result.out  # never a word of another tenant

    doc = json.loads(invoke("investigate", QUESTION, *flags, "--json").out)
    assert any(n.startswith("tenant emptyco has no records") for n in doc["search_notes"])
    from investigator.serving.results import summary_text

    assert "Note: tenant emptyco has no records" in summary_text("investigate", doc)

    # The runbook card says it first, for a service and for free text alike.
    for args in (("--service", "svc:payment-api"), ("payment errors",)):
        card = invoke("runbook", *args, "--subject", "emptyco/user:oncall")
        assert card.code == 0, card
        assert card.out.startswith("No runbook: tenant emptyco has no records"), card.out
        assert "acme" not in card.out
    doc = json.loads(
        invoke("runbook", "payment errors", "--subject", "emptyco/user:oncall", "--json").out
    )
    assert doc["note"].startswith("tenant emptyco has no records"), doc["note"]
    assert "tenant emptyco has no records" in summary_text("runbook_lookup", doc)


def test_a_tenant_with_records_gets_no_such_note(demo_graph: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # carol of acme reads little, bob much; neither's tenant is empty. A question that
    # finds nothing there (a name no record has) says no such thing either.
    for subject, question in (
        ("acme/user:bob", QUESTION),
        ("acme/user:carol", "Who owned svc:no-such-service?"),
    ):
        result = invoke("investigate", question, "--subject", subject, "--json")
        assert result.code == 0, result
        doc = json.loads(result.out)
        assert not [n for n in doc["search_notes"] if "has no records" in n], doc["search_notes"]
        card = invoke("runbook", "zzqx nothing matches", "--subject", subject, "--json")
        assert card.code == 0, card
        assert "has no records" not in (json.loads(card.out)["note"] or "")
