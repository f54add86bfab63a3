"""An auditor asks after the fact whether a release followed its change rule, and the rule
changed between the release and as_of (demo dataset plus a second policy version, real
Neo4j, through the CLI).

Before: the gate admitted policies at as_of alone. Policy v1 (in force when release
2026.07.23.1 finished at 10:02) was `rejected_superseded` by v2 (valid from 10:02:30), v2
was said "in force at as_of", and no claim said which rule governed the release: the
auditor was shown the newer rule. Now the version in force at the release's finish is read
and quoted as the one that governed it, with the newer one in force at as_of said beside it.
"""

from __future__ import annotations

from typing import Any

import neo4j
import pytest
from conftest import REPO, ingest_only, investigate_json

pytestmark = pytest.mark.usefixtures("patient_reads")

AUDITOR = ["--subject", "acme/user:auditor", "--purpose", "audit", "--deadline-seconds", "600"]
QUESTION = "did the 10:02 release follow the change policy?"
V1 = "policy:payments-change-management"
V2 = "policy:payments-change-management@v2"
V1_RULE = "need a second reviewer and may not lower capacity settings"
V2_RULE = "two reviewers from the owning team"

# v2 supersedes v1 (which has no valid_to) 30 s after the release finished; recorded 10:02:40.
POLICY_V2 = f"""tenant: acme
documents:
  - id: "{V2}"
    kind: policy
    title: "Payments change-management policy v2"
    locator: "compliance/policies/payments-change.md@v2#freeze"
    acl: [internal]
    source_id: src:compliance
    source_version: "compliance@2026-07-23"
    valid_from: "2026-07-23T10:02:30Z"
    recorded_at: "2026-07-23T10:02:40Z"
    applies_to: [svc:payment-api]
    supports: [policy]
    supersedes: "{V1}"
    content: |
      Changes to tier-1 payment services need {V2_RULE}.
edges:
  - {{type: GOVERNED_BY, from: svc:payment-api, to: "{V2}", acl: [internal],
      source_id: src:compliance, source_version: "compliance@2026-07-23",
      locator: "compliance/policies#GOVERNED_BY|svc:payment-api|{V2}",
      valid_from: "2026-07-23T10:02:30Z", recorded_at: "2026-07-23T10:02:40Z"}}
"""


@pytest.fixture(scope="module")
def two_versions(driver: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> neo4j.Driver:
    path = tmp_path_factory.mktemp("policy") / "policy-v2.yaml"
    path.write_text(POLICY_V2, encoding="utf-8")
    return ingest_only(driver, [REPO / "datasets" / "payments-incident", path])


def facts(doc: dict[str, Any]) -> list[str]:
    return [c["statement"] for c in doc["claims"] if c["epistemic_status"] == "fact"]


def governed(doc: dict[str, Any]) -> list[str]:
    return [s for s in facts(doc) if "governed svc:payment-api when release" in s]


def test_the_rule_in_force_when_the_release_finished_is_the_one_judged(  # type: ignore[no-untyped-def]
    two_versions: neo4j.Driver, cli_env, invoke
) -> None:
    doc = investigate_json(invoke, QUESTION, *AUDITOR, "--as-of", "2026-07-23T10:03:00Z")
    said = governed(doc)
    assert len(said) == 1, doc["claims"]
    assert f"({V1}) governed" in said[0] and V1_RULE in said[0]
    assert "finished at 2026-07-23T10:02:00Z" in said[0]
    # The newer rule is said to be in force now, never as the release's.
    assert f"a newer policy is in force at as_of 2026-07-23T10:03:00Z: {V2}" in said[0]
    assert any(f"({V2}) is in force at 2026-07-23T10:03:00Z" in s for s in facts(doc))
    assert V2_RULE not in said[0]
    falls = [c for c in doc["claims"] if "falls under that rule" in c["statement"]]
    assert falls and f"the rule of {V1} speaks of lowering" in falls[0]["statement"]
    assert V1 not in {r["element_id"] for r in doc["rejected"]}, doc["rejected"]


@pytest.mark.parametrize(
    "flags",
    [
        # as_of before v2 took effect: v1 is the rule at the release and at as_of.
        ["--as-of", "2026-07-23T10:02:20Z"],
        # v2 not yet recorded (10:02:40) at known_at: v1 still answers at 10:03.
        ["--as-of", "2026-07-23T10:03:00Z", "--known-at", "2026-07-23T10:02:35Z"],
    ],
)
def test_no_newer_rule_is_said_where_none_is_seen(  # type: ignore[no-untyped-def]
    two_versions: neo4j.Driver, cli_env, invoke, flags: list[str]
) -> None:
    doc = investigate_json(invoke, QUESTION, *AUDITOR, *flags)
    said = governed(doc)
    assert len(said) == 1 and f"({V1}) governed" in said[0], doc["claims"]
    assert "a newer policy" not in said[0] and "no longer holds" not in said[0]
    assert V2 not in str(doc["claims"])


def test_a_release_named_by_its_minute_is_that_release_or_none(  # type: ignore[no-untyped-def]
    two_versions: neo4j.Driver, cli_env, invoke
) -> None:
    # Before: the clock time chose nothing; the last release by as_of was judged whatever
    # the minute. 09:55 is when release 2026.07.23.1 started (none finished then).
    at_1003 = ["--as-of", "2026-07-23T10:03:00Z"]
    doc = investigate_json(
        invoke, "did the 9:55 release follow the change policy?", *AUDITOR, *at_1003
    )
    said = governed(doc)
    assert len(said) == 1 and "release release-2026.07.23.1" in said[0], doc["claims"]
    doc = investigate_json(
        invoke, "did the 10:05 release follow the change policy?", *AUDITOR, *at_1003
    )
    assert not governed(doc), doc["claims"]
    assert not any("falls under that rule" in c["statement"] for c in doc["claims"])
    gap = [m for m in doc["missing_evidence"] if m["evidence_type"] == "deployment_time"]
    assert gap and gap[0]["required"] is True, doc["missing_evidence"]
    assert "no release finished or started at 10:05 UTC among the releases" in gap[0]["description"]
    assert doc["status"] == "partial"
