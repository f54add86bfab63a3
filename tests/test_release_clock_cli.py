# ruff: noqa: E501 (the bundle's records are one line each, as in datasets/)
"""An auditor names a release by its minute ("did the 10:02 release follow the change
policy?") naming no service, and other services shipped releases too (demo dataset plus a
ledger release finished 09:58:00 and a risk-engine release finished 10:02:30, each service
governed by its own policy; real Neo4j, through the CLI).

Before (h37): the service was still chosen as for any release question naming none (the
release with errors after it, payment-api's), so "the 9:58 release" (ledger's) was said not
to exist and its policy was never read; and of 10:02:00 and 10:02:30 only the later was kept.
Now the minute picks the releases, every one of that minute, and each is judged by the
policy governing its own service.
"""

from __future__ import annotations

from typing import Any

import neo4j
import pytest
from conftest import REPO, ingest_only, investigate_json

pytestmark = pytest.mark.usefixtures("patient_reads")

AUDITOR = ["--subject", "acme/user:auditor", "--purpose", "audit", "--deadline-seconds", "600"]
AT_1003 = ["--as-of", "2026-07-23T10:03:00Z"]
LEDGER = "deploy:ledger-2026.07.23.2"
RISK = "deploy:risk-engine-2026.07.23.4"
PAYMENT = "deploy:release-2026.07.23.1"

OTHER_RELEASES = """tenant: acme
nodes:
  - {id: "deploy:ledger-2026.07.23.2", label: Deployment, name: ledger-2026.07.23.2, acl: [internal], source_id: src:cicd, source_version: "pipeline-run-88405", locator: "cicd/pipelines/ledger/runs/88405#summary", valid_from: "2026-07-23T09:58:00Z", recorded_at: "2026-07-23T09:58:05Z", method: ci_cd_webhook, confidence: 1.0,
     props: {service: svc:ledger, release: "2026.07.23.2", started_at: "2026-07-23T09:50:00Z", finished_at: "2026-07-23T09:58:00Z", outcome: succeeded, change_summary: "ledger 2026.07.23.2: ledger.replicas lowered from 6 to 2"}}
  - {id: "deploy:risk-engine-2026.07.23.4", label: Deployment, name: risk-engine-2026.07.23.4, acl: [internal], source_id: src:cicd, source_version: "pipeline-run-88415", locator: "cicd/pipelines/risk-engine/runs/88415#summary", valid_from: "2026-07-23T10:02:30Z", recorded_at: "2026-07-23T10:02:35Z", method: ci_cd_webhook, confidence: 1.0,
     props: {service: svc:risk-engine, release: "2026.07.23.4", started_at: "2026-07-23T10:00:10Z", finished_at: "2026-07-23T10:02:30Z", outcome: succeeded, change_summary: "risk-engine 2026.07.23.4: new scoring model"}}
documents:
  - id: "policy:ledger-change-management"
    kind: policy
    title: "Ledger change-management policy"
    locator: "compliance/policies/ledger-change.md#rules"
    acl: [internal]
    source_id: src:compliance
    source_version: "compliance@2026-01-05"
    valid_from: "2026-01-01T00:00:00Z"
    recorded_at: "2026-01-05T09:00:00Z"
    applies_to: [svc:ledger]
    supports: [policy]
    content: |
      Ledger changes need a ledger-team reviewer and may not lower replicas without a failover drill.
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
  - {type: DEPLOYED_TO, from: "deploy:ledger-2026.07.23.2", to: svc:ledger, acl: [internal], source_id: src:cicd, source_version: "pipeline-run-88405", locator: "cicd/acme#DEPLOYED_TO|deploy:ledger-2026.07.23.2|svc:ledger", valid_from: "2026-07-23T09:58:00Z", recorded_at: "2026-07-23T09:58:05Z", method: ci_cd_webhook, confidence: 1.0}
  - {type: DEPLOYED_TO, from: "deploy:risk-engine-2026.07.23.4", to: svc:risk-engine, acl: [internal], source_id: src:cicd, source_version: "pipeline-run-88415", locator: "cicd/acme#DEPLOYED_TO|deploy:risk-engine-2026.07.23.4|svc:risk-engine", valid_from: "2026-07-23T10:02:30Z", recorded_at: "2026-07-23T10:02:35Z", method: ci_cd_webhook, confidence: 1.0}
  - {type: GOVERNED_BY, from: svc:ledger, to: "policy:ledger-change-management", acl: [internal], source_id: src:compliance, source_version: "compliance@2026-01-05", locator: "compliance/policies#GOVERNED_BY|svc:ledger|policy:ledger-change-management", valid_from: "2026-01-01T00:00:00Z", recorded_at: "2026-01-05T09:00:00Z"}
  - {type: GOVERNED_BY, from: svc:risk-engine, to: "policy:risk-change-management", acl: [internal], source_id: src:compliance, source_version: "compliance@2026-01-05", locator: "compliance/policies#GOVERNED_BY|svc:risk-engine|policy:risk-change-management", valid_from: "2026-01-01T00:00:00Z", recorded_at: "2026-01-05T09:00:00Z"}
"""


@pytest.fixture(scope="module")
def other_releases(driver: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> neo4j.Driver:
    path = tmp_path_factory.mktemp("releases") / "other-releases.yaml"
    path.write_text(OTHER_RELEASES, encoding="utf-8")
    return ingest_only(driver, [REPO / "datasets" / "payments-incident", path])


def governed(doc: dict[str, Any]) -> list[str]:
    return sorted(
        c["statement"]
        for c in doc["claims"]
        if c["epistemic_status"] == "fact" and ") governed svc:" in c["statement"]
    )


def test_the_minute_named_picks_another_services_release_and_its_rule(  # type: ignore[no-untyped-def]
    other_releases: neo4j.Driver, cli_env, invoke
) -> None:
    doc = investigate_json(
        invoke, "did the 9:58 release follow the change policy?", *AUDITOR, *AT_1003
    )
    said = governed(doc)
    assert len(said) == 1, doc["claims"]
    assert "(policy:ledger-change-management) governed svc:ledger when release" in said[0]
    assert f"({LEDGER}) finished at 2026-07-23T09:58:00Z" in said[0]
    falls = [c["statement"] for c in doc["claims"] if "falls under that rule" in c["statement"]]
    assert falls and "lowered ledger.replicas from 6 to 2" in falls[0], doc["claims"]
    # Not the erring service's release, and never "no release ran at 09:58".
    assert not any(
        "no release finished or started" in m["description"] for m in doc["missing_evidence"]
    )
    assert "payment-api" not in " ".join(said)
    assert any("09:58 UTC: " + LEDGER in n for n in doc["search_notes"]), doc["search_notes"]


# At 10:03, and with no --as-of (months later: the releases are found as the newest by then).
@pytest.mark.parametrize("as_of", [AT_1003, []])
def test_every_release_of_the_minute_is_judged_by_its_own_rule(  # type: ignore[no-untyped-def]
    other_releases: neo4j.Driver, cli_env, invoke, as_of: list[str]
) -> None:
    doc = investigate_json(
        invoke, "did the 10:02 release follow the change policy?", *AUDITOR, *as_of
    )
    said = governed(doc)
    assert len(said) == 2, doc["claims"]
    assert "(policy:payments-change-management) governed svc:payment-api" in said[0]
    assert f"({PAYMENT}) finished at 2026-07-23T10:02:00Z" in said[0]
    assert "(policy:risk-change-management) governed svc:risk-engine" in said[1]
    assert f"({RISK}) finished at 2026-07-23T10:02:30Z" in said[1]
    two = [c["statement"] for c in doc["claims"] if "releases ran at 10:02 UTC" in c["statement"]]
    assert len(two) == 1 and two[0].startswith("2 releases ran at 10:02 UTC"), doc["claims"]
    assert PAYMENT in two[0] and RISK in two[0]


def test_a_release_finished_after_as_of_is_not_of_the_minute(  # type: ignore[no-untyped-def]
    other_releases: neo4j.Driver, cli_env, invoke
) -> None:
    # At 10:02:15 risk-engine's release (started 10:00:10) had not finished: payment-api's
    # alone ran at 10:02 and is judged. Before, the releases of three services within 30 min
    # were read as "the release" and the other two services' rules said in force beside it.
    doc = investigate_json(
        invoke,
        "did the 10:02 release follow the change policy?",
        *AUDITOR,
        "--as-of",
        "2026-07-23T10:02:15Z",
    )
    said = governed(doc)
    assert len(said) == 1 and "governed svc:payment-api" in said[0], doc["claims"]
    assert RISK not in str(doc["claims"]) and RISK not in str(doc["search_notes"])
    assert not any("releases ran at" in c["statement"] for c in doc["claims"])


def test_another_tenant_hears_of_none_of_these_releases(  # type: ignore[no-untyped-def]
    other_releases: neo4j.Driver, cli_env, invoke
) -> None:
    doc = investigate_json(
        invoke,
        "did the 10:02 release follow the change policy?",
        "--subject",
        "globex/user:mallory",
        "--purpose",
        "audit",
        "--deadline-seconds",
        "600",
        *AT_1003,
    )
    text = str(doc)
    for acme in (LEDGER, RISK, PAYMENT, "policy:risk-change-management", "svc:payment-api"):
        assert acme not in text
    gap = [m for m in doc["missing_evidence"] if m["evidence_type"] == "deployment_time"]
    assert gap and "no release finished or started at 10:02 UTC" in gap[0]["description"]
