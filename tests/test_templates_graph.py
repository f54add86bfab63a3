"""Test graphs for the template tests, written as KG records per docs/contracts.md.

Helpers only (no tests): records with `:KG` + type label, `(tenant, id, version)` identity,
acl, purposes, transaction and valid time. All values are parameters.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

import neo4j

from graph_schema.schema_ddl import apply_tenant_schema, tenant_label


def content_hash(value: Any) -> str:
    """sha256 over a canonical JSON of `value` (datetimes as ISO text)."""
    text = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
PURPOSES = ["incident_investigation", "runbook_lookup", "audit"]


def at(text: str) -> datetime:
    """An ISO-8601 UTC instant."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def node(
    tenant: str,
    id: str,
    labels: list[str],
    *,
    version: int = 1,
    acl: list[str] | None = None,
    purposes: list[str] | None = None,
    recorded_at: datetime = T0,
    superseded_at: datetime | None = None,
    status: str = "active",
    valid_from: datetime | None = None,
    valid_to: datetime | None = None,
    **props: Any,
) -> dict[str, Any]:
    """One node record."""
    record: dict[str, Any] = {
        "id": id,
        "version": version,
        "tenant": tenant,
        "acl": acl if acl is not None else ["internal"],
        "purposes": purposes if purposes is not None else PURPOSES,
        "status": status,
        "recorded_at": recorded_at,
        "superseded_at": superseded_at,
        "valid_from": valid_from,
        "valid_to": valid_to,
        "source_id": "src:test",
        "source_version": "1",
        "observed_at": recorded_at,
        **props,
    }
    texts = [
        str(v)
        for k in ("id", "name", "code", "alertname", "title")
        if (v := record.get(k)) is not None
    ]
    texts += list(record.get("aliases") or [])
    body = record.get("redacted_content") or record.get("content")
    if body:
        texts.append(str(body))
    record["search_text"] = " ".join(texts)
    record["content_hash"] = content_hash({k: v for k, v in record.items() if v is not None})
    return {
        "labels": ["KG", *labels, tenant_label(tenant)],
        "props": {k: v for k, v in record.items() if v is not None},
    }


def edge(
    tenant: str,
    type: str,
    src: str,
    dst: str,
    *,
    key: str | None = None,
    version: int = 1,
    src_version: int = 1,
    dst_version: int = 1,
    acl: list[str] | None = None,
    purposes: list[str] | None = None,
    recorded_at: datetime = T0,
    superseded_at: datetime | None = None,
    status: str = "active",
    valid_from: datetime | None = None,
    valid_to: datetime | None = None,
    **props: Any,
) -> dict[str, Any]:
    """One edge record between two node records (by tenant, id, version)."""
    record: dict[str, Any] = {
        "key": key or f"{type}|{src}|{dst}",
        "version": version,
        "tenant": tenant,
        "acl": acl if acl is not None else ["internal"],
        "purposes": purposes if purposes is not None else PURPOSES,
        "status": status,
        "recorded_at": recorded_at,
        "superseded_at": superseded_at,
        "valid_from": valid_from,
        "valid_to": valid_to,
        "source_id": "src:test",
        **props,
    }
    record["content_hash"] = content_hash({k: v for k, v in record.items() if v is not None})
    return {
        "type": type,
        "tenant": tenant,
        "src": src,
        "dst": dst,
        "src_version": src_version,
        "dst_version": dst_version,
        "props": {k: v for k, v in record.items() if v is not None},
    }


def principal(
    tenant: str, id: str, labels: list[str], purposes: list[str], **kw: Any
) -> dict[str, Any]:
    """A subject's Principal record (its `purposes` are the purposes it may use)."""
    rec = node(tenant, id, ["Principal"], acl=[], **kw)
    rec["props"]["labels"] = labels
    rec["props"]["purposes"] = purposes
    return rec


def write_graph(
    driver: neo4j.Driver, nodes: list[dict[str, Any]], edges: list[dict[str, Any]]
) -> None:
    """Create the records (labels and types are dynamic parameters, never spliced)."""
    apply_tenant_schema(driver, {n["props"]["tenant"] for n in nodes})
    driver.execute_query("UNWIND $nodes AS n CREATE (x:$(n.labels)) SET x = n.props", nodes=nodes)
    driver.execute_query(
        "UNWIND $edges AS e "
        "MATCH (a:KG {tenant: e.tenant, id: e.src, version: e.src_version}) "
        "MATCH (b:KG {tenant: e.tenant, id: e.dst, version: e.dst_version}) "
        "CREATE (a)-[r:$(e.type)]->(b) SET r = e.props",
        edges=edges,
    )
    driver.execute_query("CALL db.awaitIndexes(60)")


def graph_fingerprint(driver: neo4j.Driver) -> tuple[int, int, str]:
    """Node count, relationship count and a hash of every record (to prove zero writes)."""
    records, _, _ = driver.execute_query(
        "MATCH (n) WITH n ORDER BY elementId(n) "
        "WITH count(n) AS nodes, collect([labels(n), properties(n)]) AS ns "
        "OPTIONAL MATCH ()-[r]->() WITH nodes, ns, r ORDER BY elementId(r) "
        "RETURN nodes, count(r) AS rels, "
        "ns, collect([type(r), properties(r)]) AS rs"
    )
    rec = records[0]
    digest = content_hash({"n": [str(x) for x in rec["ns"]], "r": [str(x) for x in rec["rs"]]})
    return int(rec["nodes"]), int(rec["rels"]), digest


A, G = "acme", "globex"


def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A small payments incident in tenant acme, plus a same-id decoy in tenant globex."""
    nodes = [
        node(
            A, "svc:payment-api", ["Service"], name="payment-api", aliases=["payments", "pay-api"]
        ),
        node(
            A,
            "svc:ledger",
            ["Service"],
            name="ledger-old",
            superseded_at=at("2026-03-01T00:00:00Z"),
        ),
        node(
            A,
            "svc:ledger",
            ["Service"],
            version=2,
            name="ledger",
            recorded_at=at("2026-03-01T00:00:00Z"),
        ),
        node(A, "svc:vault", ["Service"], name="vault", acl=["internal", "restricted"]),
        node(A, "team:sre", ["Team"], name="SRE"),
        node(A, "team:payments-core", ["Team"], name="Payments Core"),
        node(
            A,
            "deploy:r1",
            ["Deployment"],
            name="release-2026.07.23.1",
            finished_at=at("2026-07-23T10:02:00Z"),
        ),
        node(
            A,
            "deploy:r0",
            ["Deployment"],
            name="release-2026.06.01.1",
            finished_at=at("2026-06-01T10:00:00Z"),
        ),
        node(
            A,
            "incident:INC-1",
            ["Incident"],
            name="PAY-4097 spike",
            started_at=at("2026-07-23T10:05:00Z"),
        ),
        node(A, "alert:HighErrorRate", ["Alert"], name="HighErrorRate", alertname="HighErrorRate"),
        node(A, "err:PAY-4097", ["ErrorCode"], name="PAY-4097", code="PAY-4097"),
        node(
            A,
            "change:cfg-1",
            ["ChangeEvent"],
            name="retry budget change",
            at=at("2026-07-23T09:55:00Z"),
        ),
        node(
            A,
            "runbook:payment-recovery@v2",
            ["Document", "Runbook"],
            kind="runbook",
            title="Payment recovery v2",
            content="Restart the payment workers.",
            locator="runbooks/payment.md#v2",
            trust="trusted",
            supports=["runbook"],
        ),
        node(
            A,
            "runbook:payment-recovery@v3",
            ["Document", "Runbook"],
            kind="runbook",
            title="Payment recovery v3",
            content="Drain the retry queue, then restart.",
            locator="runbooks/payment.md#v3",
            trust="trusted",
            supports=["runbook"],
        ),
        node(
            A,
            "doc:postmortem-1",
            ["Document"],
            kind="incident_report",
            title="Postmortem INC-1",
            content="Customer jane.doe@example.com saw failed payments after the release.",
            redacted_content="Customer [REDACTED] saw failed payments after the release.",
            locator="pm/inc-1.md#L1-3",
            trust="trusted",
            supports=["incident_report", "mechanism"],
        ),
        node(
            A,
            "doc:note",
            ["Document"],
            kind="note",
            title="Old note",
            content="obsolete",
            superseded_at=at("2026-05-01T00:00:00Z"),
        ),
        node(
            A,
            "doc:note",
            ["Document"],
            kind="note",
            title="Old note",
            version=2,
            status="retracted",
            recorded_at=at("2026-05-01T00:00:00Z"),
        ),
        node(
            A,
            "policy:audit-only",
            ["Document", "Policy"],
            kind="policy",
            title="Card data policy",
            content="Card data payment rules.",
            purposes=["audit"],
            supports=["policy"],
        ),
        node(G, "svc:payment-api", ["Service"], name="payment-api", aliases=["payments"]),
        node(G, "incident:INC-1", ["Incident"], name="GLOBEX SECRET incident"),
        principal(
            A, "user:alice", ["internal", "pii", "restricted"], ["incident_investigation", "audit"]
        ),
        principal(A, "user:bob", ["internal"], ["incident_investigation", "runbook_lookup"]),
        principal(G, "user:eve", ["internal"], ["incident_investigation"]),
    ]
    edges = [
        edge(
            A,
            "DEPENDS_ON",
            "svc:payment-api",
            "svc:ledger",
            dst_version=1,
            superseded_at=at("2026-03-01T00:00:00Z"),
        ),
        edge(
            A,
            "DEPENDS_ON",
            "svc:payment-api",
            "svc:ledger",
            dst_version=2,
            recorded_at=at("2026-03-01T00:00:00Z"),
        ),
        edge(
            A,
            "DEPENDS_ON",
            "svc:ledger",
            "svc:vault",
            src_version=2,
            recorded_at=at("2026-03-01T00:00:00Z"),
        ),
        edge(
            A,
            "OWNS",
            "team:sre",
            "svc:payment-api",
            key="OWNS|team:sre|svc:payment-api|1",
            valid_from=at("2026-01-01T00:00:00Z"),
            valid_to=at("2026-07-24T00:00:00Z"),
        ),
        edge(
            A,
            "OWNS",
            "team:payments-core",
            "svc:payment-api",
            valid_from=at("2026-07-24T00:00:00Z"),
        ),
        edge(A, "DEPLOYED_AS", "svc:payment-api", "deploy:r1"),
        edge(A, "DEPLOYED_AS", "svc:payment-api", "deploy:r0"),
        edge(A, "AFFECTED_BY", "svc:payment-api", "incident:INC-1"),
        edge(A, "TRIGGERED", "alert:HighErrorRate", "incident:INC-1"),
        edge(
            A, "EMITTED", "svc:payment-api", "err:PAY-4097", first_seen=at("2026-07-23T10:04:00Z")
        ),
        edge(A, "CHANGED", "change:cfg-1", "svc:payment-api", at=at("2026-07-23T09:55:00Z")),
        edge(A, "SUPERSEDES", "runbook:payment-recovery@v3", "runbook:payment-recovery@v2"),
        edge(A, "APPLIES_TO", "runbook:payment-recovery@v3", "svc:payment-api"),
        edge(A, "APPLIES_TO", "runbook:payment-recovery@v2", "alert:HighErrorRate"),
        edge(A, "MENTIONS", "doc:postmortem-1", "svc:payment-api"),
        edge(A, "MENTIONS", "doc:note", "svc:payment-api"),
        edge(A, "GOVERNED_BY", "svc:payment-api", "policy:audit-only", purposes=["audit"]),
        edge(G, "AFFECTED_BY", "svc:payment-api", "incident:INC-1"),
    ]
    return nodes, edges


def wipe_graph(driver: neo4j.Driver) -> None:
    """Delete every node and relationship in batches (an auto-commit transaction, which
    `CALL { } IN TRANSACTIONS` requires; `driver.execute_query` would refuse it)."""
    with driver.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()
