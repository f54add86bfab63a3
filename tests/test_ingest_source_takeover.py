"""An ingest never writes a new version of (or retracts) a record another source holds.

The security tester's case: an untrusted Markdown runbook folder and a Prometheus rule file
named ids of the demo's trusted sources (src:wiki-runbooks, src:compliance,
src:observability) and became their new versions, with a looser ACL and wider purposes, and
`investigator runbook` then served the hijacked steps. Each ingest below goes through the
real CLI against a real Neo4j.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import neo4j
import pytest
import yaml

DATASET = Path(__file__).resolve().parents[1] / "datasets" / "payments-incident"
AS_OF = "2026-07-23T10:03:00Z"

HIJACK_RUNBOOK = """---
id: runbook:payment-recovery@v3
acl: []
valid_from: 2026-07-01T00:00:00Z
valid_to: 2026-07-25T00:00:00Z
services: [svc:payment-api]
title: Payment recovery (hijacked)
---
Step 1: the root cause of PAY-4097 is the risk-engine rule change RR-2026-07-23a.
Roll back the risk rules.
"""

HIJACK_POLICY = """---
id: policy:payments-change-management
kind: policy
---
# Payments change-management policy
Anything goes.
"""

POSTMORTEM = """---
kind: postmortem
supports: [mechanism, incident_report, deployment_time, change_event]
---
# Postmortem
The risk rules caused it.
"""

OWN_RUNBOOK = """---
id: runbook:ledger-recovery
acl: [internal]
services: [svc:ledger]
title: Ledger recovery
---
# Ledger recovery
{text}
"""

HIJACK_RULES = {
    "groups": [
        {
            "name": "payments",
            "rules": [
                {
                    "alert": "PaymentApiHighErrorRate",
                    "expr": "vector(1)",
                    "annotations": {
                        "summary": "hijacked summary",
                        "runbook_url": "https://x/runbook:payment-recovery@v3",
                    },
                }
            ],
        }
    ]
}


def counts(driver: neo4j.Driver) -> tuple[int, int]:
    """Every KG record: node records and relationship records (all versions)."""
    nodes = driver.execute_query("MATCH (n:KG) RETURN count(n) AS n").records[0]["n"]
    rels = driver.execute_query("MATCH (:KG)-[r]->(:KG) RETURN count(r) AS n").records[0]["n"]
    return int(nodes), int(rels)


def current(driver: neo4j.Driver, ident: str) -> dict[str, Any]:
    rows = driver.execute_query(
        "MATCH (n:KG {tenant: 'acme', id: $id}) WHERE n.superseded_at IS NULL "
        "RETURN properties(n) AS p",
        id=ident,
    ).records
    assert len(rows) == 1, rows
    return dict(rows[0]["p"])


def folder(tmp_path: Path, name: str, files: dict[str, str]) -> Path:
    path = tmp_path / name
    path.mkdir(exist_ok=True)
    for file, text in files.items():
        (path / file).write_text(text, encoding="utf-8")
    return path


def runbook_answer(invoke: Any, *target: str) -> dict[str, Any]:
    result = invoke(
        "runbook", *target, "--as-of", AS_OF, "--subject", "acme/user:bob", "--json"
    )  # fmt: skip
    assert result.code == 0, result
    answer = json.loads(result.out)
    # What differs between two lookups of the same graph: the run and the time it ran.
    return {k: v for k, v in answer.items() if k not in ("run_id", "known_at")}


def refused_line(result: Any) -> str:
    """Exit 2, nothing on stdout, exactly one line on stderr."""
    assert result.code == 2, result
    assert result.out == "", result
    lines = result.err.rstrip().splitlines()
    assert len(lines) == 1, result.err
    return str(lines[0])


@pytest.fixture()
def demo(clean_db: neo4j.Driver, cli_env: Any, invoke: Any) -> neo4j.Driver:
    result = invoke("ingest", str(DATASET))
    assert result.code == 0, result
    return clean_db


def test_markdown_runbook_cannot_take_over_a_trusted_runbook(
    demo: neo4j.Driver, invoke: Any, tmp_path: Path
) -> None:
    before = counts(demo)
    answer = runbook_answer(invoke, "--error-code", "PAY-4097")
    assert answer["runbook"]["title"] == "Payment recovery runbook v3"

    rb1 = folder(tmp_path, "rb1", {"a.md": HIJACK_RUNBOOK})
    result = invoke("ingest", str(rb1), "--format", "markdown-runbooks", "--tenant", "acme")
    line = refused_line(result)
    assert line.startswith(
        "error: ingest refused: runbook:payment-recovery@v3 is held by source "
        "src:wiki-runbooks; src:runbooks:rb1 may not write a new version of it"
    ), line

    assert counts(demo) == before
    v3 = current(demo, "runbook:payment-recovery@v3")
    assert v3["source_id"] == "src:wiki-runbooks" and v3["acl"] == ["internal"]
    assert v3["version"] == 1
    assert runbook_answer(invoke, "--error-code", "PAY-4097") == answer


def test_markdown_policy_cannot_take_over_a_compliance_policy(
    demo: neo4j.Driver, invoke: Any, tmp_path: Path
) -> None:
    before = counts(demo)
    policy = current(demo, "policy:payments-change-management")
    rb1 = folder(tmp_path, "rb1", {"a.md": HIJACK_RUNBOOK, "b.md": HIJACK_POLICY})
    result = invoke("ingest", str(rb1), "--format", "markdown-runbooks", "--tenant", "acme")
    line = refused_line(result)
    # Every held id is named: the first in full, the others after it.
    assert "policy:payments-change-management is held by source src:compliance" in line, line
    assert "runbook:payment-recovery@v3" in line, line
    assert counts(demo) == before
    assert current(demo, "policy:payments-change-management") == policy


def test_prometheus_rules_cannot_take_over_an_alert(
    demo: neo4j.Driver, invoke: Any, tmp_path: Path
) -> None:
    before = counts(demo)
    alert = current(demo, "alert:PaymentApiHighErrorRate")
    rules = tmp_path / "prom" / "rules.yaml"
    rules.parent.mkdir()
    rules.write_text(yaml.safe_dump(HIJACK_RULES), encoding="utf-8")
    result = invoke("ingest", str(rules), "--format", "prometheus-rules", "--tenant", "acme")
    assert result.code == 2, result
    errors = [line for line in result.err.splitlines() if not line.startswith("ingest: ")]
    assert errors == [
        "error: ingest refused: alert:PaymentApiHighErrorRate is held by source "
        "src:observability; src:prometheus:rules may not write a new version of it"
    ], result.err
    assert counts(demo) == before
    assert current(demo, "alert:PaymentApiHighErrorRate") == alert


def test_a_bundle_cannot_redefine_or_retract_another_sources_records(
    demo: neo4j.Driver, invoke: Any, tmp_path: Path
) -> None:
    before = counts(demo)
    service = current(demo, "svc:payment-api")
    source = {
        "source_id": "src:mallory",
        "source_type": "wiki",
        "trust": "untrusted",
        "allowed_purposes": ["incident_investigation", "runbook_lookup", "audit"],
    }
    redefine = {
        "tenant": "acme",
        "sources": [source],
        "nodes": [
            {
                "id": "svc:payment-api",
                "label": "Service",
                "name": "payment-api",
                "acl": [],
                "source_id": "src:mallory",
            }
        ],
    }
    path = tmp_path / "redefine.yaml"
    path.write_text(yaml.safe_dump(redefine), encoding="utf-8")
    line = refused_line(invoke("ingest", str(path)))
    assert line == (
        "error: ingest refused: svc:payment-api is held by source src:service-catalog; "
        "src:mallory may not write a new version of it"
    )
    # A relationship too: neither end is src:mallory's.
    owns = {
        "tenant": "acme",
        "sources": [source],
        "edges": [
            {
                "type": "OWNS",
                "from": "team:payments-core",
                "to": "runbook:payment-recovery@v3",
                "acl": [],
                "source_id": "src:mallory",
            }
        ],
    }
    path = tmp_path / "owns.yaml"
    path.write_text(yaml.safe_dump(owns), encoding="utf-8")
    line = refused_line(invoke("ingest", str(path)))
    assert line == (
        "error: ingest refused: OWNS|team:payments-core|runbook:payment-recovery@v3 is held by "
        "source src:wiki-runbooks; src:mallory may not write a new version of it"
    )
    retract = {
        "tenant": "acme",
        "sources": [source],
        "retractions": [
            {
                "id": "runbook:payment-recovery@v3",
                "reason": "mine now",
                "at": "2026-07-23T00:00:00Z",
            }
        ],
    }
    path = tmp_path / "retract.yaml"
    path.write_text(yaml.safe_dump(retract), encoding="utf-8")
    line = refused_line(invoke("ingest", str(path)))
    assert line == (
        "error: ingest refused: runbook:payment-recovery@v3 is held by source "
        "src:wiki-runbooks; a bundle of source(s) src:mallory may not retract it"
    )
    assert counts(demo) == before
    assert current(demo, "svc:payment-api") == service


def test_the_same_folder_reimported_after_an_edit_writes_a_new_version(
    demo: neo4j.Driver, invoke: Any, tmp_path: Path
) -> None:
    args = ("--format", "markdown-runbooks", "--tenant", "acme")
    rb = folder(tmp_path, "ledger", {"a.md": OWN_RUNBOOK.format(text="Replicas catch up.")})
    first = invoke("ingest", str(rb), *args)
    assert first.code == 0, first
    assert current(demo, "runbook:ledger-recovery")["version"] == 1
    folder(tmp_path, "ledger", {"a.md": OWN_RUNBOOK.format(text="Replicas catch up soon.")})
    second = invoke("ingest", str(rb), *args)
    assert second.code == 0, second
    assert "created 1 node and 1 relationship records" in second.out, second.out
    record = current(demo, "runbook:ledger-recovery")
    assert record["version"] == 2 and record["source_id"] == "src:runbooks:ledger"
    assert "Replicas catch up soon." in record["content"]
    # Unchanged since: a no-op (the tenant is too large for this one file to be marked).
    again = invoke("ingest", str(rb), *args)
    assert again.code == 0, again
    assert "created 0 node and 0 relationship records, 0 tombstones" in again.out, again.out
    assert current(demo, "runbook:ledger-recovery")["version"] == 2


def test_reingesting_the_dataset_is_still_the_fast_no_op(
    demo: neo4j.Driver, invoke: Any, tmp_path: Path
) -> None:
    # The dataset's histories are replanned on its first ingest: its confirmed no-op (the
    # second ingest) leaves the mark that makes the next one fast.
    confirmed = invoke("ingest", str(DATASET))
    assert confirmed.code == 0, confirmed
    assert "created 0 node and 0 relationship records, 0 tombstones" in confirmed.out
    before = counts(demo)
    # A refused takeover writes nothing, so it leaves the dataset's ingest mark valid.
    rb1 = folder(tmp_path, "rb1", {"a.md": HIJACK_RUNBOOK})
    refused = invoke("ingest", str(rb1), "--format", "markdown-runbooks", "--tenant", "acme")
    assert refused.code == 2, refused
    again = invoke("ingest", str(DATASET))
    assert again.code == 0, again
    assert "unchanged since the last ingest of this bundle: nothing written" in again.out
    full = invoke("ingest", str(DATASET), "--full")
    assert full.code == 0, full
    assert "created 0 node and 0 relationship records, 0 tombstones" in full.out, full.out
    assert counts(demo) == before


def test_markdown_kind_other_than_runbook_or_policy_is_refused(
    demo: neo4j.Driver, invoke: Any, tmp_path: Path
) -> None:
    before = counts(demo)
    rb = folder(tmp_path, "pm", {"c.md": POSTMORTEM})
    result = invoke("ingest", str(rb), "--format", "markdown-runbooks", "--tenant", "acme")
    assert result.code == 2, result
    assert result.out == ""
    assert (
        f"{rb / 'c.md'}: front matter: front matter kind 'postmortem' is not runbook or policy"
        in result.err.splitlines()
    ), result.err
    assert counts(demo) == before
    # The documented kinds, in any case, still import.
    ok = folder(tmp_path, "ok", {"p.md": "---\nkind: Policy\nid: policy:ledger\n---\nText.\n"})
    done = invoke("ingest", str(ok), "--format", "markdown-runbooks", "--tenant", "acme")
    assert done.code == 0, done
    assert current(demo, "policy:ledger")["kind"] == "policy"


def test_runbook_answer_shows_trust(demo: neo4j.Driver, invoke: Any, tmp_path: Path) -> None:
    answer = runbook_answer(invoke, "--error-code", "PAY-4097")
    assert answer["runbook"]["trust"] == "trusted"
    assert answer["runbook"]["source_id"] == "src:wiki-runbooks"  # existing fields stay
    rb = folder(tmp_path, "ledger", {"a.md": OWN_RUNBOOK.format(text="Replicas catch up.")})
    result = invoke("ingest", str(rb), "--format", "markdown-runbooks", "--tenant", "acme")
    assert result.code == 0, result
    imported = runbook_answer(invoke, "--service", "svc:ledger")
    assert imported["runbook"]["id"] == "runbook:ledger-recovery"
    assert imported["runbook"]["trust"] == "untrusted"
    card = invoke(
        "runbook", "--service", "svc:ledger", "--as-of", AS_OF, "--subject", "acme/user:bob"
    )
    assert card.code == 0, card
    first = card.out.splitlines()[0]
    assert first.startswith("Runbook   Ledger recovery  [runbook:ledger-recovery, ")
    assert first.endswith(", untrusted]"), first


def test_the_ids_own_source_repairs_what_an_older_writer_let_another_source_write(
    demo: neo4j.Driver, invoke: Any
) -> None:
    original = current(demo, "runbook:pod-crashloop@v1")
    # The graph an older writer left behind: the runbook replaced by an import's record.
    demo.execute_query(
        "MATCH (d:KG {tenant: 'acme', id: 'runbook:pod-crashloop@v1'}) "
        "WHERE d.superseded_at IS NULL SET d.superseded_at = datetime() "
        "CREATE (e:KG:Document:Runbook) SET e = d {.*, version: d.version + 1, "
        "recorded_at: datetime(), source_id: 'src:runbooks:md', content: 'hijacked', "
        "content_hash: 'h', superseded_at: null}"
    )
    assert current(demo, "runbook:pod-crashloop@v1")["source_id"] == "src:runbooks:md"
    # src:wiki-runbooks wrote the id's first record: it may write its next version.
    repaired = invoke("ingest", str(DATASET))
    assert repaired.code == 0, repaired
    record = current(demo, "runbook:pod-crashloop@v1")
    assert record["source_id"] == "src:wiki-runbooks" and record["version"] == 3
    assert record["content"] == original["content"]
