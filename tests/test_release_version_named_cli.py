# ruff: noqa: E501 (the bundle's records are one line each, as in datasets/)
"""A release named as people name it: its version alone ("did 2026.07.23.4 follow the change
policy?", "v2026.07.23.4"), "release 2026.07.23.4" of a service whose releases are not named
`release-<version>`, "when did 2026.07.22.3 finish?", "what changed in 2026.07.23.1?" (demo
dataset plus a risk-engine release 2026.07.23.4 governed by its own policy and a ledger
release whose record carries no `release` version; real Neo4j, through the CLI; h39).

Before: a version typed alone named no release: an auditor's "did 2026.07.23.4 follow the
change policy?" judged payment-api's release 2026.07.23.1 (the last release with errors after
it) in its place, and so did "did 2026.07.23.9 ..." of a release that does not exist; "release
2026.07.23.4" found nothing when the release's name was `risk-engine-2026.07.23.4`; "what
changed in 2026.07.23.1?" listed changes instead of quoting the release's record. Now the
version picks the release (its `release`, else the version ending its name or id:
entity_resolution 6), in the subject's tenant only, as known at known_at; a version no
visible release carries is said by its name, and no other release is judged in its place.
"""

from __future__ import annotations

from typing import Any

import neo4j
import pytest
from conftest import REPO, ingest_only, investigate_json

AUDITOR = ["--subject", "acme/user:auditor", "--purpose", "audit", "--deadline-seconds", "600"]
ALICE = ["--subject", "acme/user:alice", "--deadline-seconds", "600"]
MALLORY = ["--subject", "globex/user:mallory", "--deadline-seconds", "600"]
AT_1003 = ["--as-of", "2026-07-23T10:03:00Z"]
RISK = "deploy:risk-engine-2026.07.23.4"
LEDGER = "deploy:ledger-2026.07.23.2"
PAYMENT = "deploy:release-2026.07.23.1"

OTHER_RELEASES = """tenant: acme
nodes:
  - {id: "deploy:risk-engine-2026.07.23.4", label: Deployment, name: risk-engine-2026.07.23.4, acl: [internal], source_id: src:cicd, source_version: "pipeline-run-88415", locator: "cicd/pipelines/risk-engine/runs/88415#summary", valid_from: "2026-07-23T10:02:30Z", recorded_at: "2026-07-23T10:02:35Z", method: ci_cd_webhook, confidence: 1.0,
     props: {service: svc:risk-engine, release: "2026.07.23.4", started_at: "2026-07-23T10:00:10Z", finished_at: "2026-07-23T10:02:30Z", outcome: succeeded, change_summary: "risk-engine 2026.07.23.4: new scoring model"}}
  - {id: "deploy:ledger-2026.07.23.2", label: Deployment, name: ledger 2026.07.23.2, acl: [internal], source_id: src:cicd, source_version: "pipeline-run-88405", locator: "cicd/pipelines/ledger/runs/88405#summary", valid_from: "2026-07-23T09:58:00Z", recorded_at: "2026-07-23T09:58:05Z", method: ci_cd_webhook, confidence: 1.0,
     props: {service: svc:ledger, started_at: "2026-07-23T09:50:00Z", finished_at: "2026-07-23T09:58:00Z", outcome: succeeded}}
documents:
  - id: "policy:risk-change-management"
    kind: policy
    title: "Risk-engine change-management policy"
    locator: "compliance/policies/risk-change.md#rules"
    acl: [internal]
    source_id: src:compliance
    source_version: "compliance@2026-01-05"
    valid_from: "2026-01-01T00:00:00Z"
    recorded_at: "2026-01-05T09:00:00Z"
    applies_to: [svc:risk-engine]
    supports: [policy]
    content: |
      Scoring-model changes need sign-off from the risk team before rollout.
edges:
  - {type: DEPLOYED_TO, from: "deploy:risk-engine-2026.07.23.4", to: svc:risk-engine, acl: [internal], source_id: src:cicd, source_version: "pipeline-run-88415", locator: "cicd/acme#DEPLOYED_TO|deploy:risk-engine-2026.07.23.4|svc:risk-engine", valid_from: "2026-07-23T10:02:30Z", recorded_at: "2026-07-23T10:02:35Z", method: ci_cd_webhook, confidence: 1.0}
  - {type: DEPLOYED_TO, from: "deploy:ledger-2026.07.23.2", to: svc:ledger, acl: [internal], source_id: src:cicd, source_version: "pipeline-run-88405", locator: "cicd/acme#DEPLOYED_TO|deploy:ledger-2026.07.23.2|svc:ledger", valid_from: "2026-07-23T09:58:00Z", recorded_at: "2026-07-23T09:58:05Z", method: ci_cd_webhook, confidence: 1.0}
  - {type: GOVERNED_BY, from: svc:risk-engine, to: "policy:risk-change-management", acl: [internal], source_id: src:compliance, source_version: "compliance@2026-01-05", locator: "compliance/policies#GOVERNED_BY|svc:risk-engine|policy:risk-change-management", valid_from: "2026-01-01T00:00:00Z", recorded_at: "2026-01-05T09:00:00Z"}
"""


@pytest.fixture(scope="module")
def releases(driver: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> neo4j.Driver:
    path = tmp_path_factory.mktemp("releases") / "other-releases.yaml"
    path.write_text(OTHER_RELEASES, encoding="utf-8")
    return ingest_only(driver, [REPO / "datasets" / "payments-incident", path])


@pytest.fixture(autouse=True)
def _patient_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INVESTIGATOR_READ_TIMEOUT", "150")


def governed(doc: dict[str, Any]) -> list[str]:
    return sorted(
        c["statement"]
        for c in doc["claims"]
        if c["epistemic_status"] == "fact" and ") governed svc:" in c["statement"]
    )


def named_gaps(doc: dict[str, Any]) -> list[str]:
    return [
        m["description"]
        for m in doc["missing_evidence"]
        if m["evidence_type"] == "deployment_time" and "named in the question" in m["description"]
    ]


@pytest.mark.parametrize(
    "question",
    [
        "did 2026.07.23.4 follow the change policy?",
        "did v2026.07.23.4 follow the change policy?",
        "did release 2026.07.23.4 follow the change policy?",
    ],
)
def test_an_auditor_names_the_release_by_its_version(  # type: ignore[no-untyped-def]
    releases: neo4j.Driver, cli_env, invoke, question: str
) -> None:
    doc = investigate_json(invoke, question, *AUDITOR, *AT_1003)
    said = governed(doc)
    # Risk-engine's release, by its own rule; never payment-api's release in its place.
    assert len(said) == 1, doc["claims"]
    assert "(policy:risk-change-management) governed svc:risk-engine when release" in said[0]
    assert f"({RISK}) finished at 2026-07-23T10:02:30Z" in said[0]
    assert PAYMENT not in " ".join(c["statement"] for c in doc["claims"]), doc["claims"]
    assert any(m["evidence_type"] == "approval" and m["required"] for m in doc["missing_evidence"])
    assert not named_gaps(doc)


def test_a_version_alone_asks_of_that_release(  # type: ignore[no-untyped-def]
    releases: neo4j.Driver, cli_env, invoke
) -> None:
    # What it changed: its own record quoted, not a change list.
    doc = investigate_json(invoke, "what changed in 2026.07.23.1?", *ALICE)
    assert doc["intents"] == ["release_lookup"], doc["intents"]
    assert any(
        "states what it changed" in c["statement"] and "db.pool.max_size" in c["statement"]
        for c in doc["claims"]
    ), doc["claims"]
    # An older release by its version: that one, not the last.
    doc = investigate_json(invoke, "did 2026.07.20.2 follow the change policy?", *AUDITOR)
    said = governed(doc)
    assert len(said) == 1 and "(deploy:release-2026.07.20.2) finished at" in said[0], said
    # A record with no `release` version: the version ending its name.
    doc = investigate_json(invoke, "when did 2026.07.23.2 finish?", *ALICE, *AT_1003)
    assert any(
        f"({LEDGER}) started at 2026-07-23T09:50:00Z and finished at 2026-07-23T09:58:00Z"
        in c["statement"]
        for c in doc["claims"]
    ), doc["claims"]
    assert doc["status"] == "complete", doc["missing_evidence"]


def test_a_version_no_release_carries_is_said_and_none_judged_instead(  # type: ignore[no-untyped-def]
    releases: neo4j.Driver, cli_env, invoke
) -> None:
    doc = investigate_json(invoke, "did 2026.07.23.9 follow the change policy?", *AUDITOR)
    assert doc["status"] == "partial"
    assert not governed(doc), doc["claims"]
    assert PAYMENT not in str(doc["claims"]), doc["claims"]
    gaps = named_gaps(doc)
    assert gaps and "no record of release 2026.07.23.9" in gaps[0], doc["missing_evidence"]
    assert "no other release is judged in its place" in gaps[0]
    # The rubric's vaguer gap of the same type is not said beside it.
    assert not any(
        m["description"] == "no release/deployment time for the service"
        for m in doc["missing_evidence"]
    ), doc["missing_evidence"]


def test_a_version_is_read_in_the_subjects_tenant_only(  # type: ignore[no-untyped-def]
    releases: neo4j.Driver, cli_env, invoke
) -> None:
    # Globex's subject names acme's versions: nothing of acme, said as not found.
    for question in ("what changed in 2026.07.23.1?", "did 2026.07.23.4 follow the change policy?"):
        doc = investigate_json(invoke, question, *MALLORY)
        text = str(doc)
        assert "deploy:release-" not in text and "risk-engine" not in text, question
        assert "policy:" not in str(doc["claims"]), doc["claims"]
        assert named_gaps(doc), doc["missing_evidence"]
    # Acme's subject names globex's version: nothing of globex.
    doc = investigate_json(invoke, "what changed in 2026.07.23.7?", *ALICE)
    assert "globex" not in str(doc).lower()
    assert named_gaps(doc), doc["missing_evidence"]
    # Globex's own release, by its version, for its own subject.
    doc = investigate_json(invoke, "what changed in 2026.07.23.7?", *MALLORY)
    assert any(
        "(deploy:globex-payment-api-2026.07.23.7) finished at" in c["statement"]
        for c in doc["claims"]
    ), doc["claims"]


def test_a_version_recorded_after_known_at_is_not_yet_known(  # type: ignore[no-untyped-def]
    releases: neo4j.Driver, cli_env, invoke
) -> None:
    # Release 2026.07.23.1 was recorded at 10:02:05: at a known_at of 10:00 it is not known.
    doc = investigate_json(
        invoke, "what changed in 2026.07.23.1?", *ALICE, "--known-at", "2026-07-23T10:00:00Z"
    )
    assert doc["status"] == "partial"
    assert PAYMENT not in str(doc["claims"]), doc["claims"]
    gaps = named_gaps(doc)
    assert gaps and "not recorded by known_at" in gaps[0], doc["missing_evidence"]


def test_the_release_named_is_the_one_rolled_back_and_quoted(  # type: ignore[no-untyped-def]
    releases: neo4j.Driver, cli_env, invoke
) -> None:
    # "Roll back 2026.07.23.1?": whether that release is still deployed is the gap, not
    # whether the last release read (risk-engine's, 10:02:30) is.
    doc = investigate_json(invoke, "roll back 2026.07.23.1?", *ALICE)
    state = [m for m in doc["missing_evidence"] if m["evidence_type"] == "deployment_state"]
    assert state and state[0]["description"].startswith(f"whether {PAYMENT} is still"), state
    # Asked with --service of another service, the release named is the one quoted, not each
    # release of the service read beside it.
    doc = investigate_json(
        invoke, "what changed in 2026.07.23.4?", *ALICE, "--service", "svc:payment-api"
    )
    quoted = [c["statement"] for c in doc["claims"] if "states what it changed" in c["statement"]]
    assert quoted and all(RISK in s for s in quoted), quoted
