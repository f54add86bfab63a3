"""Ingest never changes what an id is (issue 11, reproduction 3), on a real Neo4j.

An importer cannot take over a principal or a source, imported text is untrusted unless the
ingest command says `--trusted`, a record whose type or kind differs from the id's current
record is a bundle problem (exit 2, nothing written), and re-ingesting the source of truth
repairs what a bad ingest changed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import neo4j
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "datasets" / "payments-incident"


@pytest.fixture()
def demo(driver: neo4j.Driver, cli_env: object, invoke) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    with driver.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()
    result = invoke("ingest", str(DEMO))
    assert result.code == 0, result
    return driver


def _records(driver: neo4j.Driver, ident: str) -> list[dict[str, Any]]:
    records, _, _ = driver.execute_query(
        "MATCH (n:KG {tenant: 'acme', id: $id}) "
        "RETURN n.version AS version, n.superseded_at IS NULL AS current, "
        "[l IN labels(n) WHERE NOT l STARTS WITH 'KGTenant_' AND l <> 'KG'] AS labels, "
        "n.trust AS trust, n.content AS content, n.labels AS grants ORDER BY version",
        id=ident,
    )
    return [dict(r) for r in records]


def _current(driver: neo4j.Driver, ident: str) -> dict[str, Any]:
    current = [r for r in _records(driver, ident) if r["current"]]
    assert len(current) == 1, current
    return current[0]


def _count(driver: neo4j.Driver) -> int:
    records, _, _ = driver.execute_query("MATCH (n:KG) RETURN count(n) AS c")
    return int(records[0]["c"])


def _runbook(folder: Path, name: str, front: str, body: str = "# Do this\n\nrun rm -rf\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(f"---\n{front}---\n{body}", encoding="utf-8")
    return folder


def test_front_matter_cannot_take_over_a_principal_or_raise_trust(  # type: ignore[no-untyped-def]
    demo: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    before = _current(demo, "user:bob")
    folder = _runbook(tmp_path / "md", "takeover.md", "id: user:bob\ntrust: trusted\n")
    result = invoke("ingest", str(folder), "--format", "markdown-runbooks", "--tenant", "acme")
    assert result.code == 0, result
    # Said as imported (untrusted), not under `skipped:`, which read as "not imported"
    # (explorer e29, m5).
    assert (
        f"ingest: {folder / 'takeover.md'}: imported; front matter trust: trusted ignored "
        "(imported text is untrusted unless the ingest command says --trusted)"
    ) in result.err.splitlines(), result.err
    assert "skipped" not in result.err, result.err
    # bob is still the same principal, with the same grants: nothing superseded it.
    assert _records(demo, "user:bob") == [before]
    assert before["labels"] == ["Principal"]
    doc = _current(demo, "runbook:user:bob")  # the importer's own prefix
    assert doc["trust"] == "untrusted"
    assert doc["labels"] == ["Document", "Runbook"]
    # The import wrote a Source of its own, untrusted, from the command's options.
    assert _current(demo, "src:runbooks:md")["trust"] == "untrusted"
    # The subject still resolves and investigates as bob.
    runbook = invoke("runbook", "--service", "svc:payment-api", "--subject", "acme/user:bob")
    assert "unknown subject" not in runbook.err
    # Re-ingesting the source of truth changes nothing: bob was never touched.
    again = invoke("ingest", str(DEMO), "--json")
    assert again.code == 0 and '"node_records_created": 0' in again.out, again


def test_only_the_trusted_flag_raises_trust(  # type: ignore[no-untyped-def]
    demo: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    folder = _runbook(tmp_path / "ops", "a.md", "id: runbook:a\n")
    _runbook(folder, "b.md", "id: runbook:b\ntrust: untrusted\n")
    args = ["ingest", str(folder), "--format", "markdown-runbooks", "--tenant", "acme"]
    result = invoke(*args, "--trusted")
    assert result.code == 0, result
    assert _current(demo, "runbook:a")["trust"] == "trusted"
    assert _current(demo, "runbook:b")["trust"] == "untrusted"  # the file may lower it


def test_a_record_cannot_change_what_an_id_is(  # type: ignore[no-untyped-def]
    demo: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    total = _count(demo)
    bundle: dict[str, Any] = {
        "tenant": "acme",
        "nodes": [
            {"id": "user:bob", "label": "Service", "name": "bob", "source_id": "src:catalog"},
            {"id": "svc:payment-api", "label": "Team", "name": "x", "source_id": "src:catalog"},
        ],
        "documents": [
            {
                "id": "runbook:payment-recovery@v4",
                "kind": "postmortem",
                "title": "t",
                "content": "c",
                "locator": "x",
                "source_id": "src:catalog",
            }
        ],
    }
    # The same id twice in one bundle (a history) cannot change type between entries.
    bundle["nodes"] += [
        {"id": "x:1", "label": "Team", "source_id": "src:catalog", "recorded_at": t}
        for t in ("2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z")
    ]
    bundle["nodes"][-1]["label"] = "Person"
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bundle), encoding="utf-8")
    result = invoke("ingest", str(path))
    assert result.code == 2, result
    assert "'user:bob' is a Principal in tenant 'acme'" in result.err
    assert "'svc:payment-api' is a Service" in result.err
    assert "Document/Runbook (kind runbook)" in result.err
    assert "nodes[0] user:bob" in result.err  # file and element on each line
    assert "nodes[3] x:1: id 'x:1' is a Team earlier in this bundle" in result.err
    assert _count(demo) == total  # nothing written, not even the valid parts


def test_an_import_cannot_write_over_a_principal_as_its_source(  # type: ignore[no-untyped-def]
    demo: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    total = _count(demo)
    folder = _runbook(tmp_path / "md", "x.md", "title: x\n")
    result = invoke(
        "ingest", str(folder), "--format", "markdown-runbooks", "--tenant", "acme",
        "--source-id", "user:bob",
    )  # fmt: skip
    assert result.code == 2, result
    assert "'user:bob' is a Principal" in result.err
    assert _count(demo) == total
    # Nor can it write under a bundle's source: refused, the source and the graph as they were
    # (tests/test_ingest_source_claims.py).
    before = _records(demo, "src:wiki-runbooks")
    refused = invoke(
        "ingest", str(folder), "--format", "markdown-runbooks", "--tenant", "acme",
        "--source-id", "src:wiki-runbooks",
    )  # fmt: skip
    assert refused.code == 2, refused
    assert "source src:wiki-runbooks is a trusted wiki source" in refused.err
    assert _records(demo, "src:wiki-runbooks") == before
    assert _records(demo, "runbook:x") == []
    assert _count(demo) == total


def test_an_import_cannot_replace_the_source_of_truth(  # type: ignore[no-untyped-def]
    demo: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    """Before, the import became the runbook's next version (and a re-ingest of the source
    of truth repaired it); now it is refused and nothing changes (the repair of a graph an
    older writer left is tests/test_ingest_source_takeover.py)."""
    original = _current(demo, "runbook:pod-crashloop@v1")
    folder = _runbook(tmp_path / "md", "evil.md", "id: runbook:pod-crashloop@v1\n")
    bad = invoke("ingest", str(folder), "--format", "markdown-runbooks", "--tenant", "acme")
    assert bad.code == 2 and bad.err.count("\n") == 1, bad
    assert "runbook:pod-crashloop@v1 is held by source" in bad.err
    assert _current(demo, "runbook:pod-crashloop@v1") == original
    assert '"node_records_created": 0' in invoke("ingest", str(DEMO), "--json").out


def test_reingest_repairs_a_principal_an_older_writer_let_an_import_replace(  # type: ignore[no-untyped-def]
    demo: neo4j.Driver, invoke
) -> None:
    # The graph an older writer left behind: bob's Principal superseded by a runbook record.
    demo.execute_query(
        "MATCH (p:KG:Principal {tenant: 'acme', id: 'user:bob'}) WHERE p.superseded_at IS NULL "
        "SET p.superseded_at = datetime() "
        "CREATE (d:KG:Document:Runbook) SET d = p {.*, version: p.version + 1, "
        "recorded_at: datetime(), kind: 'runbook', content: 'x', content_hash: 'h', "
        "superseded_at: null}"
    )
    assert _current(demo, "user:bob")["labels"] == ["Document", "Runbook"]
    result = invoke("ingest", str(DEMO))
    assert result.code == 0, result
    current = _current(demo, "user:bob")
    assert current["labels"] == ["Principal"] and current["version"] == 3
    assert current["grants"] == ["incident", "internal"]


def test_new_flags_refuse_the_wrong_format(  # type: ignore[no-untyped-def]
    demo: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    total = _count(demo)
    trusted = invoke("ingest", str(DEMO), "--trusted")
    assert trusted.code == 2 and trusted.err.count("\n") == 1, trusted
    assert "--trusted" in trusted.err
    history = invoke("ingest", str(DEMO), "--git-history")
    assert history.code == 2 and history.err.count("\n") == 1, history
    rules = tmp_path / "r.yaml"
    rules.write_text("groups: []\n", encoding="utf-8")
    prom = invoke(
        "ingest", str(rules), "--format", "prometheus-rules", "--tenant", "acme", "--git-history"
    )
    assert prom.code == 2 and prom.err.count("\n") == 1 and "markdown-runbooks" in prom.err
    assert _count(demo) == total
