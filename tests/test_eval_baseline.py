"""The naive baseline on a real Neo4j: it hands back what plain RAG would, gates and all missing."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import neo4j

from investigator.evaluation.baseline import NaiveFulltextBaseline, lucene_query
from investigator.evaluation.cases import GoldenCase
from investigator.evaluation.metrics import SubjectGrants, score_case

_DOCS = [
    # (id, tenant, acl, status, valid_from, valid_to, content)
    (
        "runbook:rb@v3",
        "acme",
        ["internal"],
        "active",
        "2026-07-01",
        "2026-07-25",
        "payment recovery v3",
    ),
    ("runbook:rb@v4", "acme", ["internal"], "active", "2026-07-25", None, "payment recovery v4"),
    (
        "runbook:globex",
        "globex",
        ["internal"],
        "active",
        "2025-01-01",
        None,
        "payment recovery globex",
    ),
    ("doc:draft", "acme", ["internal"], "retracted", "2026-07-23", None, "payment recovery draft"),
    (
        "doc:pii",
        "acme",
        ["internal", "pii"],
        "active",
        "2026-07-23",
        None,
        "payment recovery maria@x",
    ),
]


def _seed(drv: neo4j.Driver) -> None:
    drv.execute_query(
        "CREATE FULLTEXT INDEX kg_fulltext IF NOT EXISTS "
        "FOR (n:KG) ON EACH [n.search_text, n.name, n.title]"
    )
    drv.execute_query("CALL db.awaitIndexes(60)")
    _create_documents(drv)
    _wait_searchable(drv)


def _create_documents(drv: neo4j.Driver) -> None:
    for doc_id, tenant, acl, status, vf, vt, content in _DOCS:
        drv.execute_query(
            "CREATE (d:KG:Document {id: $id, version: 1, tenant: $tenant, acl: $acl,"
            " status: $status, valid_from: datetime($vf),"
            " valid_to: CASE WHEN $vt IS NULL THEN null ELSE datetime($vt) END,"
            " source_id: 'src:wiki', source_version: 'v1', locator: $id,"
            " content_hash: 'sha256:' + $id, content: $content, search_text: $content,"
            " title: $id})",
            id=doc_id,
            tenant=tenant,
            acl=acl,
            status=status,
            vf=vf + "T00:00:00Z",
            vt=None if vt is None else vt + "T00:00:00Z",
            content=content,
        )


def _wait_searchable(drv: neo4j.Driver) -> None:
    # Fulltext indexes are eventually consistent: wait until every document is searchable.
    for _ in range(100):
        recs, _, _ = drv.execute_query(
            "CALL db.index.fulltext.queryNodes('kg_fulltext', 'recovery') YIELD node "
            "RETURN count(node) AS n"
        )
        if recs[0]["n"] >= len(_DOCS):
            return
        time.sleep(0.1)


def _case() -> GoldenCase:
    return GoldenCase.model_validate(
        {
            "id": "rb",
            "type": "versioning",
            "description": "d",
            "question": "payment recovery",
            "subject": "user:bob",
            "as_of": datetime(2026, 7, 23, 10, 30, tzinfo=UTC),
            "expect": {
                "evidence": ["runbook:rb@v3"],
                "forbidden": [
                    {"id": "runbook:rb@v4", "why": "future"},
                    {"id": "runbook:globex", "why": "tenant"},
                    {"id": "doc:draft", "why": "retracted"},
                ],
                "forbidden_text": ["maria@x"],
            },
        }
    )


def test_baseline_returns_everything_and_is_scored_as_unsafe(clean_db: neo4j.Driver) -> None:
    _seed(clean_db)
    outcome = NaiveFulltextBaseline(clean_db, top_k=10).run_case(_case())
    ids = {i for ev in outcome.admitted for i in ev.kg_ids}
    assert ids == {d[0] for d in _DOCS}  # no tenant, ACL, temporal or deletion filter
    grants = SubjectGrants(tenant="acme", labels=frozenset({"internal"}))
    score = score_case(_case(), outcome, grants)
    m = score.metrics
    assert m["required_evidence_recall"].value == 1.0
    assert m["acl_violation_rate"].num == 2  # globex's runbook and the pii document
    assert m["deleted_admission_rate"].num == 1
    assert m["temporal_accuracy"].num == 4  # v4 is not yet valid
    assert "claim_evidence_coverage" not in m  # the baseline has no answer layer


def test_baseline_top_k_and_hostile_text_are_inert(clean_db: neo4j.Driver) -> None:
    _seed(clean_db)
    baseline = NaiveFulltextBaseline(clean_db, top_k=2)
    assert len(baseline.search("payment recovery")) == 2
    hostile = 'recovery") YIELD node DETACH DELETE node // \\ "*" ~ AND OR NOT [x TO y] {'
    assert baseline.search(hostile)  # Lucene syntax inside quotes is just words
    assert baseline.search("!!! ::: ***") == []
    recs, _, _ = clean_db.execute_query("MATCH (n:KG) RETURN count(n) AS n")
    assert recs[0]["n"] == len(_DOCS)  # read-only: nothing deleted


def test_lucene_query_quotes_every_term() -> None:
    assert lucene_query('PAY-4097 "x" a\\b') == '"PAY-4097" OR "x" OR "a" OR "b"'
    assert lucene_query("") == ""
    assert len(lucene_query(" ".join(f"w{i}" for i in range(500))).split(" OR ")) == 64


def _has_index(drv: neo4j.Driver) -> bool:
    records = drv.execute_query("SHOW INDEXES YIELD name WHERE name = 'kg_fulltext' RETURN name")
    return bool(records.records)


def test_the_baseline_owns_its_index_for_the_run(clean_db: neo4j.Driver) -> None:
    """`schema apply` no longer creates the tenant-free index (ingests would pay for it); the
    baseline creates it for its run, answers through it, and drops it after."""
    clean_db.execute_query("DROP INDEX kg_fulltext IF EXISTS")
    _create_documents(clean_db)
    baseline = NaiveFulltextBaseline(clean_db, top_k=10)
    with baseline.index():
        assert _has_index(clean_db)
        _wait_searchable(clean_db)
        ids = {i for ev in baseline.search("payment recovery") for i in ev.kg_ids}
        assert ids == {d[0] for d in _DOCS}
    assert not _has_index(clean_db)
    # An index that was there before (an older schema's) is left as found.
    clean_db.execute_query(
        "CREATE FULLTEXT INDEX kg_fulltext FOR (n:KG) ON EACH [n.search_text, n.name, n.title]"
    )
    with baseline.index():
        pass
    assert _has_index(clean_db)
    clean_db.execute_query("DROP INDEX kg_fulltext IF EXISTS")
