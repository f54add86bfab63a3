"""An attacker at the surfaces a user never looks at twice (h34-attacker), through the real CLI
against a real Neo4j with the demo dataset: a hostile bundle ingested with `--tenant`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import neo4j
import yaml
from test_ingest import SOURCE

BOB = ("--subject", "acme/user:bob")
AT = "2026-07-20T00:00:00Z"
REPO = Path(__file__).resolve().parents[1]


def test_a_file_of_another_tenant_cannot_retract_the_tenant_records_under_tenant_flag(
    demo_graph: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    """Before: a file saying `tenant: globex` with three retractions, ingested with `--tenant
    acme`, tombstoned acme's principal user:bob (every command of bob: "unknown subject"),
    svc:payment-api and its OWNS record, exit 0."""
    hostile = tmp_path / "hostile.yaml"
    hostile.write_text(
        yaml.safe_dump(
            {
                "tenant": "globex",
                "retractions": [
                    {"id": "user:bob", "reason": "offboarded", "at": AT},
                    {"id": "svc:payment-api", "reason": "gone", "at": AT},
                    {"key": "OWNS|team:payments-core|svc:payment-api|2025-01-01",
                     "reason": "gone", "at": AT},
                ],
            }
        ),
        encoding="utf-8",
    )  # fmt: skip
    done = invoke("ingest", str(hostile), "--tenant", "acme")
    assert done.code == 2, done
    assert done.out == ""
    assert done.err == (
        f"error: {hostile} says tenant globex and retracts 3 records it does not write "
        "(user:bob, svc:payment-api, OWNS|team:payments-core|svc:payment-api|2025-01-01): "
        "--tenant acme would retract acme's; nothing written. A retraction of acme's records "
        "is a file that says tenant acme\n"
    ), done.err
    # bob is still a subject; no record of acme was tombstoned.
    assert invoke("runs", *BOB).code == 0
    tombstones = demo_graph.execute_query(
        "MATCH (n:KG {tenant: 'acme'}) WHERE n.status = 'retracted' RETURN n.id AS id "
        "UNION MATCH ()-[r {tenant: 'acme'}]->() WHERE r.status = 'retracted' RETURN r.key AS id"
    ).records
    assert sorted(r["id"] for r in tombstones) == [
        "DEPENDS_ON|svc:payment-api|svc:legacy-fraud",
        "doc:postmortem-draft-2026-07-23-payments",
    ]  # the demo's own two

    # A moved file retracting what it writes itself is written, as before.
    own = tmp_path / "own.yaml"
    own.write_text(
        yaml.safe_dump(
            {
                "tenant": "globex",
                "sources": [SOURCE],
                "nodes": [{"id": "svc:x", "label": "Service", "name": "x",
                           "source_id": "src:catalog"}],
                "retractions": [{"id": "svc:x", "reason": "in error", "at": AT}],
            }
        ),
        encoding="utf-8",
    )  # fmt: skip
    moved = invoke("ingest", str(own), "--tenant", "initech")
    assert moved.code == 0, moved
    assert "1 tombstones" in moved.out or "1 tombstone" in moved.out, moved
    # The demo's files retract a document and a DEPENDS_ON key they write: copied whole.
    demo = invoke(
        "ingest", str(REPO / "datasets" / "payments-incident"), "--tenant", "acme2",
        "--move-principals",
    )  # fmt: skip
    assert demo.code == 0, demo
    assert "2 tombstones" in demo.out, demo.out
