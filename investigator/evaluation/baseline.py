"""NaiveFulltextBaseline: what a plain RAG retriever would hand a model.

It deliberately models the unsafe path: fulltext top-k over documents through the
`kg_fulltext` index with no tenant, ACL, purpose, temporal, version, deletion or trust
filtering. It is a raw read query outside the template executor, allowed because it
exists to be measured against and no command serves its rows; it runs in a read transaction
(`execute_read`) and takes the search words as a parameter.

The baseline owns that index: `index()` creates it for the evaluation's run and drops it
after, so no ingest pays for a tenant-free index that nothing else reads (issue 12).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import neo4j

from investigator.evaluation.cases import GoldenCase
from investigator.evaluation.outcomes import CaseOutcome, EvidenceView, estimate_tokens

FULLTEXT_INDEX = "kg_fulltext"
DEFAULT_TOP_K = 8
# Lucene refuses more than 1024 clauses; a question never needs more than this many words.
MAX_TERMS = 64

# A constant: schema DDL takes no parameters.
_CREATE_INDEX = (
    "CREATE FULLTEXT INDEX kg_fulltext IF NOT EXISTS "
    "FOR (n:KG) ON EACH [n.search_text, n.name, n.title]"
)
_DROP_INDEX = "DROP INDEX kg_fulltext IF EXISTS"
_INDEX_ONLINE_TIMEOUT_S = 300

_NAIVE_QUERY = """
CALL db.index.fulltext.queryNodes('kg_fulltext', $terms, {limit: $fetch})
YIELD node, score
WHERE node:Document
RETURN node {.*} AS props, elementId(node) AS element_id, score
ORDER BY score DESC, node.id, node.version
LIMIT $k
"""

_WORD = re.compile(r"[\w][\w.\-]*", re.UNICODE)


def lucene_query(text: str) -> str:
    """OR of quoted terms: every Lucene operator in user text is inert inside the quotes."""
    terms: list[str] = []
    for word in _WORD.findall(text):
        term = word.strip(".-")
        if term and term not in terms:
            terms.append(term)
    quoted = ['"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"' for t in terms[:MAX_TERMS]]
    return " OR ".join(quoted)


def _native(value: Any) -> Any:
    return value.to_native() if hasattr(value, "to_native") else value


def _evidence_from(props: dict[str, Any], element_id: str) -> EvidenceView:
    valid_from = _native(props.get("valid_from"))
    valid_to = _native(props.get("valid_to"))
    kg_id = str(props.get("id") or element_id)
    content = str(props.get("content") or "")
    return EvidenceView(
        evidence_id=f"baseline:{props.get('tenant')}:{kg_id}@v{props.get('version')}",
        kg_ids=[kg_id],
        source_id=props.get("source_id"),
        source_version=None
        if props.get("source_version") is None
        else str(props["source_version"]),
        locator=props.get("locator"),
        content_hash=props.get("content_hash"),
        valid_from=valid_from if isinstance(valid_from, datetime) else None,
        valid_to=valid_to if isinstance(valid_to, datetime) else None,
        acl=[str(a) for a in props.get("acl") or []],
        tenant=props.get("tenant"),
        status=props.get("status"),
        content=content,
        tokens=estimate_tokens(content),
    )


class NaiveFulltextBaseline:
    """Fulltext top-k over documents with no gates at all, scored like the product."""

    def __init__(
        self, driver: neo4j.Driver, database: str | None = None, top_k: int = DEFAULT_TOP_K
    ) -> None:
        self._driver = driver
        self._database = database
        self._top_k = top_k

    @contextmanager
    def index(self) -> Iterator[None]:
        """Create the tenant-free fulltext index, wait until it is online, drop it on exit.

        An index that was already there (an older schema's, or a caller's) is left as found.
        """
        existing = self._driver.execute_query(
            "SHOW INDEXES YIELD name WHERE name = $name RETURN name",
            name=FULLTEXT_INDEX,
            database_=self._database,
        ).records
        if not existing:
            self._driver.execute_query(_CREATE_INDEX, database_=self._database)
        self._driver.execute_query(
            "CALL db.awaitIndex($name, $timeout)",
            name=FULLTEXT_INDEX,
            timeout=_INDEX_ONLINE_TIMEOUT_S,
            database_=self._database,
        )
        try:
            yield
        finally:
            if not existing:
                self._driver.execute_query(_DROP_INDEX, database_=self._database)

    def search(self, text: str) -> list[EvidenceView]:
        """The top-k documents for `text`, exactly as the index ranks them."""
        query = lucene_query(text)
        if not query:
            return []

        def work(tx: neo4j.ManagedTransaction) -> list[EvidenceView]:
            result = tx.run(_NAIVE_QUERY, terms=query, fetch=self._top_k * 8, k=self._top_k)
            return [_evidence_from(dict(r["props"]), str(r["element_id"])) for r in result]

        with self._driver.session(database=self._database) as session:
            return session.execute_read(work)

    def run_case(self, case: GoldenCase) -> CaseOutcome:
        """Hand back whatever the index ranks highest for the case's words."""
        hits = self.search(case.search_text())
        return CaseOutcome(
            case_id=case.id,
            system="baseline",
            exit_code=0,
            admitted=hits,
            tokens_used=sum(h.tokens for h in hits),
            has_answer_layer=False,
        )
