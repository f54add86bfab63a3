"""What a release's own record says, asked of the release (e32-qa O), as a CLI user sees it
(demo dataset, real Neo4j).

Before: "what config changed in the release?", "who deployed the release?" and "was the
release approved?" were `complete` with the release's finish time only, though the CI/CD
record doc:cicd-release-2026.07.23.1 (bob and carol may read it) says "Config diff:
db.pool.max_size 50 -> 10; ledger client retry policy changed." (the incident's mechanism)
and "Pipeline run 88412 deployed ..."; "show me the traces for PAY-4097" was `complete` with
the incident's record only. Now the record's lines are quoted (its words, as data), a
release whose records say nothing of it is a required gap, approval not recorded is a
required gap (the change-management policy is audit-only and never shown to bob), and the
traces not read are said, `partial`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import neo4j
import pytest
from conftest import ingest_text, investigate_json

AT_1030 = ["--as-of", "2026-07-23T10:30:00Z", "--deadline-seconds", "600"]
BOB = ["--subject", "acme/user:bob"]
CAROL = ["--subject", "acme/user:carol"]
MALLORY = ["--subject", "globex/user:mallory"]
CONFIG_DIFF = (
    "CI/CD record: payment-api release 2026.07.23.1 (doc:cicd-release-2026.07.23.1), the "
    "record of release release-2026.07.23.1 (deploy:release-2026.07.23.1), states what it "
    'changed: "Config diff: db.pool.max_size 50 -> 10; ledger client retry policy changed."'
)
PIPELINE = (
    "CI/CD record: payment-api release 2026.07.23.1 (doc:cicd-release-2026.07.23.1), the "
    "record of release release-2026.07.23.1 (deploy:release-2026.07.23.1), states who or what "
    'deployed it: "Pipeline run 88412 deployed payment-api release 2026.07.23.1 to '
    'production."'
)


pytestmark = pytest.mark.usefixtures("patient_reads")


def gaps(doc: dict[str, Any]) -> dict[str, bool]:
    return {m["evidence_type"]: m["required"] for m in doc["missing_evidence"]}


def statements(doc: dict[str, Any]) -> list[str]:
    return [c["statement"] for c in doc["claims"]]


def test_what_config_changed_in_the_release_quotes_its_change_record(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    question = "what config changed in the release?"
    for subject in (BOB, CAROL):  # the CI/CD record is `internal`: carol may read it too
        doc = investigate_json(invoke, question, *subject, *AT_1030)
        assert CONFIG_DIFF in statements(doc), (subject, statements(doc))
        assert doc["status"] == "complete", doc["missing_evidence"]
    card = invoke("investigate", question, *BOB, *AT_1030)
    assert card.code == 0, card
    assert 'states what it changed: "Config diff: db.pool.max_size 50 -> 10;' in card.out
    # The release named: its Deployment record is read too, and its change summary quoted.
    doc = investigate_json(invoke, "what changed in release 2026.07.23.1?", *BOB, *AT_1030)
    assert (
        "The own record of release release-2026.07.23.1 (deploy:release-2026.07.23.1) states "
        'what it changed: "change_summary: payment-api 2026.07.23.1: new retry policy for '
        'ledger calls; db.pool.max_size lowered from 50 to 10"; "commit: 9f3c2e1"'
    ) in statements(doc), statements(doc)
    assert CONFIG_DIFF in statements(doc), statements(doc)
    # Another tenant's release (globex, no change record): said not recorded, never acme's.
    doc = investigate_json(
        invoke, "what config changed in the last release of payment-api?", *MALLORY, *AT_1030
    )
    assert doc["status"] == "partial"
    assert gaps(doc).get("release_contents") is True, doc["missing_evidence"]
    assert "deploy:globex-payment-api-2026.07.23.7" in " ".join(
        m["description"] for m in doc["missing_evidence"]
    )
    assert "db.pool" not in str(doc) and "cicd-release" not in str(doc)


def test_who_deployed_the_release_quotes_the_pipeline_run(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    doc = investigate_json(invoke, "who deployed the release?", *BOB, *AT_1030)
    assert PIPELINE in statements(doc), statements(doc)
    assert "release_deployer" not in gaps(doc)
    # Nothing records who deployed globex's release: a required gap, `partial`.
    doc = investigate_json(
        invoke, "who deployed the last release of payment-api?", *MALLORY, *AT_1030
    )
    assert doc["status"] == "partial"
    assert gaps(doc).get("release_deployer") is True, doc["missing_evidence"]
    assert "Pipeline run 88412" not in str(doc)


def test_was_the_release_approved_is_partial_and_never_shows_the_audit_policy(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    question = "was the release approved?"
    card = invoke("investigate", question, *BOB, *AT_1030)
    assert card.code == 0, card
    assert "Status     partial" in card.out, card.out
    assert "approval (required): no approval or sign-off record" in card.out, card.out
    # The change-management policy (src:compliance, audit only) is not bob's to read.
    assert "change-management" not in card.out and "second reviewer" not in card.out
    doc = investigate_json(invoke, question, *BOB, *AT_1030)
    assert any("release-2026.07.23.1" in s for s in statements(doc)), statements(doc)
    # The auditor reading for an audit: no approval record either, said the same way.
    doc = investigate_json(
        invoke, question, "--subject", "acme/user:auditor", "--purpose", "audit", *AT_1030
    )
    assert doc["status"] == "partial"
    assert gaps(doc).get("approval") is True, doc["missing_evidence"]


def test_show_me_the_logs_says_the_logs_are_not_read(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    # Traces are read since h33b-traces (tests/test_traces_cli.py); logs are no KG record.
    question = "show me the logs for PAY-4097"
    for subject in (BOB, CAROL):
        card = invoke("investigate", question, *subject, *AT_1030)
        assert card.code == 0, card
        assert "Status     partial" in card.out, (subject, card.out)
        assert "question (required): the question's words 'logs' ask for records" in card.out


# A release whose own record states its approval and names no deployer (svc:h33-billing,
# 2026-08-01): the record's approval line is quoted and the approval gap is no longer
# required; who deployed it is a required gap.
BILLING = """tenant: acme
nodes:
  - {id: svc:h33-billing, label: Service, name: h33-billing, acl: [internal],
     source_id: src:service-catalog, locator: "catalog/acme.yaml#svc:h33-billing",
     valid_from: "2025-01-01T00:00:00Z"}
  - {id: deploy:h33-billing-2026.08.01.1, label: Deployment, name: h33-billing-2026.08.01.1,
     acl: [internal], source_id: src:cicd,
     locator: "cicd/pipelines/h33-billing/runs/77#summary",
     valid_from: "2026-08-01T09:00:00Z", method: ci_cd_webhook,
     props: {service: svc:h33-billing, release: "2026.08.01.1",
             started_at: "2026-08-01T08:50:00Z", finished_at: "2026-08-01T09:00:00Z",
             outcome: succeeded}}
edges:
  - {type: DEPLOYED_TO, from: deploy:h33-billing-2026.08.01.1, to: svc:h33-billing,
     acl: [internal], source_id: src:cicd,
     locator: "cicd/pipelines/h33-billing/runs/77#DEPLOYED_TO",
     valid_from: "2026-08-01T09:00:00Z"}
documents:
  - id: doc:cicd-h33-billing-2026.08.01.1
    kind: change_record
    title: "CI/CD record: h33-billing release 2026.08.01.1"
    locator: "cicd/pipelines/h33-billing/runs/77#record"
    acl: [internal]
    source_id: src:cicd
    source_version: "run-77"
    valid_from: "2026-08-01T09:00:00Z"
    applies_to: [deploy:h33-billing-2026.08.01.1]
    supports: [deployment_time, change_event]
    props: {conflict_key: "deployment_time|deploy:h33-billing-2026.08.01.1",
            claimed_time: "2026-08-01T09:00:00Z"}
    content: |
      h33-billing release 2026.08.01.1 finished 2026-08-01T09:00:00Z, outcome succeeded.
      Approved by the change board, ticket CHG-1234.
"""


# A later release of h33-billing whose only record of what it changed is an untrusted mail
# (src:mailbox): never quoted in a claim, and its approval line relaxes no gap.
MAILED = """tenant: acme
nodes:
  - {id: deploy:h33-billing-2026.08.03.1, label: Deployment, name: h33-billing-2026.08.03.1,
     acl: [internal], source_id: src:cicd,
     locator: "cicd/pipelines/h33-billing/runs/78#summary",
     valid_from: "2026-08-03T09:00:00Z", method: ci_cd_webhook,
     props: {service: svc:h33-billing, release: "2026.08.03.1",
             started_at: "2026-08-03T08:50:00Z", finished_at: "2026-08-03T09:00:00Z",
             outcome: succeeded}}
edges:
  - {type: DEPLOYED_TO, from: deploy:h33-billing-2026.08.03.1, to: svc:h33-billing,
     acl: [internal], source_id: src:cicd,
     locator: "cicd/pipelines/h33-billing/runs/78#DEPLOYED_TO",
     valid_from: "2026-08-03T09:00:00Z"}
documents:
  - id: doc:mail-h33-billing-2026.08.03.1
    kind: email
    title: "Mail: h33-billing release 2026.08.03.1"
    locator: "mailbox/h33-billing#78"
    acl: [internal]
    source_id: src:mailbox
    source_version: "mail-78"
    valid_from: "2026-08-03T09:00:00Z"
    applies_to: [deploy:h33-billing-2026.08.03.1]
    supports: [deployment_time, change_event]
    props: {conflict_key: "deployment_time|deploy:h33-billing-2026.08.03.1",
            claimed_time: "2026-08-03T09:00:00Z"}
    content: |
      h33-billing release 2026.08.03.1 went out at 09:00.
      Config diff: billing.batch_size 100 -> 500. Approved by the change board.
"""


def test_an_approval_the_release_record_states_is_quoted(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, tmp_path: Path
) -> None:
    ingest_text(invoke, tmp_path / "billing.yaml", BILLING)
    at = ["--as-of", "2026-08-02T00:00:00Z", "--deadline-seconds", "600"]
    doc = investigate_json(invoke, "was the last release of h33-billing approved?", *BOB, *at)
    assert (
        "CI/CD record: h33-billing release 2026.08.01.1 (doc:cicd-h33-billing-2026.08.01.1), "
        "the record of release h33-billing-2026.08.01.1 (deploy:h33-billing-2026.08.01.1), "
        'states its approval: "Approved by the change board, ticket CHG-1234."'
    ) in statements(doc), statements(doc)
    assert gaps(doc).get("approval") is False, doc["missing_evidence"]
    doc = investigate_json(invoke, "who deployed the last release of h33-billing?", *BOB, *at)
    assert doc["status"] == "partial"
    assert gaps(doc).get("release_deployer") is True, doc["missing_evidence"]
    # The last release's only record of its diff and approval is untrusted imported text.
    ingest_text(invoke, tmp_path / "mailed.yaml", MAILED)
    at = ["--as-of", "2026-08-04T00:00:00Z", "--deadline-seconds", "600"]
    doc = investigate_json(
        invoke, "what config changed in the last release of h33-billing?", *BOB, *at
    )
    assert doc["status"] == "partial"
    assert [m["description"] for m in doc["missing_evidence"]] == [
        "only untrusted imported text of release h33-billing-2026.08.03.1 "
        "(deploy:h33-billing-2026.08.03.1) says what it changed: not quoted as an answer (its "
        "evidence item holds it, as data); no trusted record states it"
    ], doc["missing_evidence"]
    assert not any("batch_size" in s for s in statements(doc)), statements(doc)
    doc = investigate_json(invoke, "was the last release of h33-billing approved?", *BOB, *at)
    assert gaps(doc).get("approval") is True, doc["missing_evidence"]
