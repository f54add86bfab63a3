"""When a node gets a new record, its relationships move onto it: one current copy each.

On a real Neo4j, our own small fixtures: a runbook folder whose runbook an alert of a rules
file links by `runbook_url` (the runbook is edited and re-imported), and a bundle whose
service gets a new version while an OWNS edge and a runbook's APPLIES_TO point at it.

Before: the writer copied each current edge record onto the new node record and left the
copy on the superseded record current too (two current copies of one record, forever; the
templates hid the old one only because its endpoint was superseded). Now the old copy is
superseded at the new node record's `recorded_at`, and a `--known-at` before the edit still
reads the old runbook through it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import neo4j
import pytest
from conftest import import_runbooks_and_rules, ingest_as, ingest_oncall_principals, ingest_text

RUNBOOK = "# Disk almost full\n\n## Mitigation\n\n{steps}\n"
RULES = """groups:
  - name: storage
    rules:
      - alert: DiskAlmostFull
        expr: disk_free_ratio < 0.1
        labels: {severity: warning}
        annotations: {summary: Disk almost full., runbook_url: 'https://rb.example.com/runbooks/disk-full.md'}
"""
LINK = "APPLIES_TO|runbook:disk-full|alert:DiskAlmostFull"

BUNDLE = """tenant: cpb
sources:
  - source_id: src:catalog
    source_type: catalog
    owner_team: team:sre
    classification: internal
    trust: trusted
    allowed_purposes: [incident_investigation, runbook_lookup]
nodes:
  - {{id: svc:disk, label: Service, props: {{name: {name}}}, acl: [sre], source_id: src:catalog}}
  - {{id: team:storage, label: Team, props: {{name: Storage}}, acl: [sre], source_id: src:catalog}}
edges:
  - {{type: OWNS, from: team:storage, to: svc:disk, acl: [sre], source_id: src:catalog,
     valid_from: "2026-01-01T00:00:00Z"}}
documents:
  - id: runbook:disk
    kind: runbook
    title: Disk runbook
    content: Delete old volume snapshots.
    locator: wiki/disk.md#mitigation
    source_id: src:catalog
    acl: [sre]
    applies_to: [svc:disk]
"""

# The service's two records and the OWNS edge, recorded between them, in one bundle.
HISTORY = """tenant: cpb
sources:
  - source_id: src:catalog
    source_type: catalog
    owner_team: team:sre
    classification: internal
    trust: trusted
    allowed_purposes: [incident_investigation, runbook_lookup]
    recorded_at: "2026-01-01T00:00:00Z"
nodes:
  - {id: svc:disk, label: Service, props: {name: Disk}, acl: [sre], source_id: src:catalog,
     recorded_at: "2026-01-01T00:00:00Z"}
  - {id: svc:disk, label: Service, props: {name: Disk service}, acl: [sre],
     source_id: src:catalog, recorded_at: "2026-03-01T00:00:00Z"}
  - {id: team:storage, label: Team, props: {name: Storage}, acl: [sre], source_id: src:catalog,
     recorded_at: "2026-01-01T00:00:00Z"}
edges:
  - {type: OWNS, from: team:storage, to: svc:disk, acl: [sre], source_id: src:catalog,
     valid_from: "2026-01-01T00:00:00Z", recorded_at: "2026-02-01T00:00:00Z"}
"""


def _copies(driver: neo4j.Driver, tenant: str, key: str) -> list[dict[str, Any]]:
    """Every copy of every record of `key`: its version, the version of its endpoint
    records, and its transaction times."""
    records, _, _ = driver.execute_query(
        "MATCH (a)-[r]->(b) WHERE r.tenant = $tenant AND r.key = $key "
        "RETURN r.version AS version, a.version AS from_version, b.version AS to_version, "
        "r.recorded_at AS recorded_at, r.superseded_at AS superseded_at "
        "ORDER BY from_version, to_version",
        tenant=tenant,
        key=key,
    )
    return [r.data() for r in records]


def _recorded(driver: neo4j.Driver, tenant: str, node_id: str) -> list[Any]:
    """`recorded_at` of each record of a node id, oldest version first."""
    records, _, _ = driver.execute_query(
        "MATCH (n:KG {tenant: $tenant, id: $id}) RETURN n.recorded_at AS at ORDER BY n.version",
        tenant=tenant,
        id=node_id,
    )
    return [r["at"] for r in records]


def _iso(value: Any) -> str:
    native: datetime = value.to_native()
    return native.isoformat().replace("+00:00", "Z")


@pytest.fixture()
def runbooks(tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke) -> Path:  # type: ignore[no-untyped-def]
    """Tenant cpy (user:oncall, label sre): the runbook folder, then the rules file."""
    runbooks = {"disk-full.md": RUNBOOK.format(steps="Delete old volume snapshots.")}
    import_runbooks_and_rules(invoke, tmp_path, "cpy", runbooks=runbooks, rules=RULES)
    return tmp_path


def _card(invoke, *flags: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    result = invoke(
        "runbook", "--alert", "DiskAlmostFull", "--subject", "cpy/user:oncall", "--json", *flags
    )
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def test_an_edited_runbook_keeps_one_current_link_and_the_old_one_as_of_before(  # type: ignore[no-untyped-def]
    runbooks: Path, clean_db: neo4j.Driver, invoke
) -> None:
    (runbooks / "runbooks" / "disk-full.md").write_text(
        RUNBOOK.format(steps="Delete old volume snapshots, then expand the volume.")
    )
    ingest_as(invoke, runbooks / "runbooks", "markdown-runbooks", "cpy")
    _, edited = _recorded(clean_db, "cpy", "runbook:disk-full")
    copies = _copies(clean_db, "cpy", LINK)
    # One record of the link, one copy on each runbook record: only the new one's is current.
    assert [(c["version"], c["from_version"], c["superseded_at"]) for c in copies] == [
        (1, 1, edited),
        (1, 2, None),
    ], copies
    # Known before the edit: the old runbook, through the link it had then.
    before = _card(invoke, "--known-at", _iso(copies[0]["recorded_at"]))
    assert before["runbook"]["version"] == 1, before
    now = _card(invoke)
    assert now["runbook"]["version"] == 2, now
    # Re-importing the same files writes nothing and leaves one current copy.
    result = ingest_as(invoke, runbooks / "runbooks", "markdown-runbooks", "cpy", "--json")
    assert json.loads(result.out)["edge_records_created"] == 0, result
    assert [c["superseded_at"] is None for c in _copies(clean_db, "cpy", LINK)] == [False, True]


def test_a_bundle_node_version_moves_the_edges_pointing_at_it(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    ingest_oncall_principals(invoke, tmp_path, "cpb")
    bundle = tmp_path / "bundle.yaml"
    for name in ("Disk", "Disk service"):
        ingest_text(invoke, bundle, BUNDLE.format(name=name))
    first, renamed = _recorded(clean_db, "cpb", "svc:disk")
    for key in ("OWNS|team:storage|svc:disk", "APPLIES_TO|runbook:disk|svc:disk"):
        copies = _copies(clean_db, "cpb", key)
        assert [(c["version"], c["to_version"], c["superseded_at"]) for c in copies] == [
            (1, 1, renamed),
            (1, 2, None),
        ], (key, copies)
    # As known before the rename, the service's owner is found through the old copy.
    doc = json.loads(
        invoke(
            "investigate", "Who owns svc:disk?", "--service", "svc:disk",
            "--subject", "cpb/user:oncall", "--known-at", _iso(first), "--json",
        ).out
    )  # fmt: skip
    assert any("team:storage OWNS svc:disk" in c["statement"] for c in doc["claims"]), doc["claims"]
    # The link's history (what ownership-history questions read) says its one record is
    # current: the row is the copy on the current records, not the one that ended.
    from cypher_templates.executor import TemplateExecutor
    from cypher_templates.plan import PlanStep
    from cypher_templates.subject import load_subject

    executor = TemplateExecutor(clean_db)
    now = datetime.now(UTC)
    subject = load_subject(executor, "cpb/user:oncall", "incident_investigation", now)
    step = PlanStep(
        template_id="version_history",
        evidence_type="entity",  # type: ignore[arg-type]
        params={"element_id": "OWNS|team:storage|svc:disk"},
        options={"kind": "relationship"},
    )
    rows = executor.run(step, subject, now).rows
    assert [(r.element.version, r.element.superseded_at) for r in rows] == [(1, None)], rows


def test_an_edge_recorded_before_a_node_history_ends_on_each_older_record(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    """One bundle holding a service's two records and an edge recorded before both ends."""
    ingest_oncall_principals(invoke, tmp_path, "cpb")
    ingest_text(invoke, tmp_path / "history.yaml", HISTORY)
    _, second = _recorded(clean_db, "cpb", "svc:disk")
    copies = _copies(clean_db, "cpb", "OWNS|team:storage|svc:disk")
    assert [(c["to_version"], c["superseded_at"]) for c in copies] == [
        (1, second),
        (2, None),
    ], copies
