"""An IC naming a release but no service ("did release X break payments?"), and an on-call
engineer asking how to fix a symptom, through the CLI against a real Neo4j (e25-words
findings 1 and 5).

Demo dataset: release 2026.07.23.1 of payment-api finished 10:02:00Z, PAY-4097 first seen
10:02:38Z; runbook payment-recovery v3 (pool exhaustion) in force on 2026-07-23. Before, the
release question said "No first-seen error is known ... no time correlation can be drawn yet"
(135 days later), and "how do I fix db pool exhausted" took svc:payment-db (one word shared)
for what it named and found no runbook, while `investigator runbook` showed v3."""

from __future__ import annotations

import neo4j
import pytest
from conftest import ingest_fixture_bundle, investigate_json

LONG = ["--deadline-seconds", "600"]
LATER = ["--as-of", "2026-12-01T00:00:00Z"]
DEMO_CORRELATION = (
    "PAY-4097 was first seen 38 s after release deploy:release-2026.07.23.1 finished "
    "(2026-07-23T10:02:00Z -> 2026-07-23T10:02:38Z): a time correlation, not by itself a "
    "root cause"
)


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


@pytest.mark.parametrize("subject", ["acme/user:bob", "acme/user:carol"])
def test_a_release_named_by_version_leads_to_its_service_errors(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, subject: str
) -> None:
    question = "did release 2026.07.23.1 break payments"
    doc = investigate_json(invoke, question, "--subject", subject, *LATER, *LONG)
    statements = _statements(doc)
    assert DEMO_CORRELATION in statements, statements
    assert not any("No first-seen" in s for s in statements), statements
    gaps = {g["evidence_type"] for g in doc["missing_evidence"] if g.get("required", True)}
    assert not gaps & {"affected_service", "error_first_seen"}, doc["missing_evidence"]
    if subject == "acme/user:bob":
        # bob may read the postmortem naming the release (carol's stays a hypothesis).
        assert doc["verdict"] == "likely", doc["missing_evidence"]


def test_how_do_i_fix_a_symptom_answers_with_the_runbook_the_card_shows(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    flags = ["--subject", "acme/user:bob", "--as-of", "2026-07-23T10:05:00Z", *LONG]
    doc = investigate_json(invoke, "how do I fix db pool exhausted", *flags)
    assert doc["status"] == "complete", doc["missing_evidence"]
    statements = _statements(doc)
    assert any(
        s.startswith("Runbook Payment recovery runbook v3 (runbook:payment-recovery@v3)")
        and "is the version in force at 2026-07-23T10:05:00Z" in s
        for s in statements
    ), statements
    # payment-db shares only the word "db": not what the question names.
    assert "svc:payment-db" not in {e["id"] for e in doc.get("entities", [])}
    assert not any("payment-db" in s for s in statements), statements


def test_a_release_named_by_its_deploy_id_reads_its_service_errors(  # type: ignore[no-untyped-def]
    driver: neo4j.Driver, cli_env, invoke
) -> None:
    # lou may not read the incident: the release's service leads to the EMITTED record.
    ingest_fixture_bundle(driver, "initech-unnamed-errors")
    flags = ["--subject", "initech/user:lou", "--as-of", "2026-11-11T12:00:00Z", *LONG]
    doc = investigate_json(invoke, "did deploy:tps-2026.11.11.1 break the reports?", *flags)
    statements = _statements(doc)
    assert (
        "TPS-500 was first seen 4 min after release deploy:tps-2026.11.11.1 finished "
        "(2026-11-11T09:58:00Z -> 2026-11-11T10:02:00Z): a time correlation, not by itself a "
        "root cause"
    ) in statements, statements
    assert not any("No first-seen" in s for s in statements), statements
    assert "inc:2026-11-11-tps" not in str(doc)
