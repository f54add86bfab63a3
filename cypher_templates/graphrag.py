"""A neo4j-graphrag `Retriever` that runs one of our allowlisted templates for a subject.

neo4j-graphrag users can plug the safe path into a GraphRAG pipeline, or expose it as an
LLM tool with `convert_to_tool`: the model picks parameter values, never Cypher, and every
call goes through the registry, the compiler and the executor (tenant, ACL and purpose
enforced inside Cypher, read-only, bounded).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import neo4j
from neo4j_graphrag.retrievers.base import Retriever
from neo4j_graphrag.types import RawSearchResult, RetrieverResultItem

from cypher_templates.executor import TemplateExecutor, ToolResult
from cypher_templates.plan import EvidenceType, PlanStep
from cypher_templates.registry import TemplateRefused, TemplateRegistry
from cypher_templates.subject import Subject


class TemplateRetriever(Retriever):
    """Runs template `template_id` (@`template_version`) with typed parameters for `subject`.

    `search(query_text=..., parameters={...}, top_k=...)`: `query_text` fills the
    template's text parameter (e.g. `fulltext_search.query`), `parameters` the others.
    Each item's `content` is the element's readable text; `metadata` holds the element,
    context, score and the tool call's template id, version and hash.
    """

    # The base class checks for vector-index support; we use no vector index, and the
    # check would also cost a round trip outside our executor.
    VERIFY_NEO4J_VERSION = False

    def __init__(
        self,
        driver: neo4j.Driver,
        subject: Subject,
        template_id: str,
        *,
        template_version: int | None = None,
        options: dict[str, str | int] | None = None,
        evidence_type: EvidenceType | None = None,
        known_at: datetime | None = None,
        registry: TemplateRegistry | None = None,
        neo4j_database: str | None = None,
    ) -> None:
        super().__init__(driver, neo4j_database)
        self.executor = TemplateExecutor(driver, registry, neo4j_database)
        self.spec = self.executor.registry.get(template_id, template_version)
        self.subject = subject
        self.options = dict(options or {})
        self.spec.resolve_options(self.options)  # refuse bad options at construction
        self.evidence_type: EvidenceType = evidence_type or self.spec.evidence_types[0]
        self.known_at = known_at
        self.last_result: ToolResult | None = None

    def get_search_results(
        self,
        query_text: str | None = None,
        parameters: dict[str, Any] | None = None,
        top_k: int | None = None,
    ) -> RawSearchResult:
        """Run the template; rows come back as records with `element`, `context`, `score`."""
        params = dict(parameters or {})
        if query_text is not None:
            if self.spec.text_param is None:
                raise TemplateRefused(f"template {self.spec.ref} takes no query text")
            params[self.spec.text_param] = query_text
        step = PlanStep(
            template_id=self.spec.id,
            template_version=self.spec.version,
            params=params,
            options=self.options,
            evidence_type=self.evidence_type,
            limit=top_k,
        )
        known_at = self.known_at or datetime.now(UTC)
        result = self.executor.run(step, self.subject, known_at)
        self.last_result = result
        records = [
            neo4j.Record(
                {
                    "element": row.element.model_dump(mode="json"),
                    "context": _json_safe(row.context.model_dump()),
                    "score": row.score,
                }
            )
            for row in result.rows
        ]
        return RawSearchResult(
            records=records,
            metadata={
                "template_id": result.template_id,
                "template_version": result.template_version,
                "template_hash": result.template_hash,
                "truncated": result.truncated,
                "row_count": result.row_count,
            },
        )

    def default_record_formatter(self, record: neo4j.Record) -> RetrieverResultItem:
        """The element's readable text as content; element, context and score as metadata."""
        element = record["element"]
        return RetrieverResultItem(
            content=str(element.get("content") or element.get("name") or element["element_id"]),
            metadata={
                "element": element,
                "context": record["context"],
                "score": record["score"],
            },
        )


def _json_safe(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value
