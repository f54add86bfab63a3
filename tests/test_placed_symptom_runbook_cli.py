"""A symptom said at a service ("5xx errors on checkout") and the runbooks linked to that
service, through the CLI against a real Neo4j.

Before: every runbook attached to the place answered: "5xx errors on checkout" claimed the
KubePodCrashLooping runbook (linked to the alert and to checkout) as the runbook in force.
Now a runbook of the place that belongs to an alert counts only when the symptom's words
fit that alert; when no runbook of the place fits, the runbook gap says so and names the
runbooks the place has that the subject may read."""

from __future__ import annotations

from pathlib import Path

import neo4j
from conftest import ingest_text, investigate_json, wipe

from graph_schema.schema_ddl import apply_schema

ALICE = ["--subject", "acme/user:alice", "--deadline-seconds", "600"]
AT_10_05 = ["--as-of", "2026-07-23T10:05:00Z"]

_REC = 'recorded_at: "2026-01-05T09:00:00Z"'
_FROM = 'valid_from: "2025-01-01T00:00:00Z"'
_PURPOSES = "[incident_investigation, runbook_lookup]"
_SOURCE = (
    "classification: internal, trust: trusted, authority: 80, "
    f"allowed_purposes: {_PURPOSES}, {_REC}"
)
_RECORD = f"acl: [internal], source_id: src:cat, source_version: c1, {_FROM}, {_REC}"

# One service, an alert's runbook linked to it and the alert, and a restricted runbook
# linked to it that only `user:ops` may read. No incident: nothing else links a runbook.
SHOP = f"""tenant: shop
sources:
  - {{source_id: src:cat, source_type: service_catalog, owner_team: team:web, {_SOURCE}}}
  - {{source_id: src:wiki, source_type: wiki, owner_team: team:web, {_SOURCE}}}
principals:
  - {{id: user:dev, name: Dev, labels: [internal], purposes: {_PURPOSES},
     source_id: src:cat, {_REC}}}
  - {{id: user:ops, name: Ops, labels: [internal, restricted], purposes: {_PURPOSES},
     source_id: src:cat, {_REC}}}
nodes:
  - {{id: svc:storefront, label: Service, name: storefront, locator: "cat#sf", {_RECORD}}}
  - {{id: alert:StorefrontDiskFull, label: Alert, name: StorefrontDiskFull,
     locator: "rules#StorefrontDiskFull", {_RECORD},
     props: {{alertname: StorefrontDiskFull, summary: "Disk almost full"}}}}
documents:
  - id: runbook:disk-full@v1
    kind: runbook
    title: "StorefrontDiskFull runbook"
    locator: "wiki/disk-full.md#steps"
    acl: [internal]
    source_id: src:wiki
    source_version: "v1"
    {_FROM}
    {_REC}
    applies_to: [alert:StorefrontDiskFull, svc:storefront]
    supports: [runbook]
    content: |
      StorefrontDiskFull: the data volume is almost full.
      1. Delete old logs; an Error in step 2 means the volume is read-only.
  - id: runbook:vault-keys@v1
    kind: runbook
    title: "StorefrontVaultSealed runbook"
    locator: "wiki/vault-keys.md#steps"
    acl: [restricted]
    source_id: src:wiki
    source_version: "v1"
    {_FROM}
    {_REC}
    applies_to: [svc:storefront]
    supports: [runbook]
    content: |
      StorefrontVaultSealed: unseal with the break-glass keys.
"""


def _runbook_claims(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"] if c["statement"].startswith("Runbook ")]


def _runbook_gaps(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [m["description"] for m in doc["missing_evidence"] if m["evidence_type"] == "runbook"]


def test_an_alerts_runbook_of_the_place_is_no_answer_to_another_symptom(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    for at in ([], AT_10_05):
        doc = investigate_json(invoke, "5xx errors on checkout", *ALICE, *at)
        # Before: "Runbook KubePodCrashLooping runbook (runbook:pod-crashloop@v1) is the
        # version in force", by checkout's link alone.
        assert not [s for s in _runbook_claims(doc) if "pod-crashloop" in s], (at, doc["claims"])
        (rejected,) = [r for r in doc["rejected"] if r["element_id"] == "runbook:pod-crashloop@v1"]
        assert rejected["reason"] == "low_relevance", rejected
        assert any(
            "no runbook of svc:checkout is about '5xx errors on checkout'" in g
            and "runbook:pod-crashloop@v1 (alert KubePodCrashLooping)" in g
            for g in _runbook_gaps(doc)
        ), (at, doc["missing_evidence"])


def test_a_symptom_that_fits_the_alert_keeps_its_runbook(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    for question in ("checkout pods crash looping", "KubePodCrashLooping on checkout"):
        doc = investigate_json(invoke, question, *ALICE, *AT_10_05)
        assert any("runbook:pod-crashloop@v1" in s for s in _runbook_claims(doc)), (
            question,
            doc["claims"],
        )
    # A runbook linked to the service and its error code names no alert: it stays.
    doc = investigate_json(invoke, "5xx on payment-api", *ALICE, *AT_10_05)
    assert any("runbook:payment-recovery@v3" in s for s in _runbook_claims(doc)), doc["claims"]
    assert doc["status"] == "complete", doc["missing_evidence"]


def test_no_fitting_runbook_is_a_gap_naming_only_what_the_subject_may_read(  # type: ignore[no-untyped-def]
    driver: neo4j.Driver, cli_env, invoke, tmp_path: Path
) -> None:
    wipe(driver)
    apply_schema(driver)
    ingest_text(invoke, tmp_path / "shop.yaml", SHOP)
    driver.execute_query("CALL db.awaitIndexes(300)")
    doc = investigate_json(invoke, "5xx errors on storefront", "--subject", "shop/user:dev")
    # Before: "Runbook StorefrontDiskFull runbook (runbook:disk-full@v1) is the version in
    # force", complete.
    assert not _runbook_claims(doc), doc["claims"]
    assert doc["status"] == "partial", doc
    (gap,) = [m for m in doc["missing_evidence"] if m["evidence_type"] == "runbook"]
    assert gap["required"] is True
    assert gap["description"].startswith(
        "no runbook of svc:storefront is about '5xx errors on storefront'; runbooks attached "
        "to svc:storefront: runbook:disk-full@v1 (alert StorefrontDiskFull)"
    ), gap
    # The runbook dev may not read is never named, nor its alert-like name.
    assert "vault" not in str(doc).lower(), doc
    # Who may read it is told of it too: the gap is the subject's view, not the place's.
    ops = investigate_json(invoke, "5xx errors on storefront", "--subject", "shop/user:ops")
    assert "runbook:vault-keys@v1 (alert StorefrontVaultSealed)" in str(ops["missing_evidence"])
    # Words that fit the alert ("disk"; never an "Error" in its steps) keep its runbook.
    fits = investigate_json(invoke, "disk errors on storefront", "--subject", "shop/user:dev")
    assert any("runbook:disk-full@v1" in s for s in _runbook_claims(fits)), fits["claims"]
