"""The neo4j-graphrag adapter runs our allowlisted templates, with the same guarantees."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import neo4j
import pytest
from neo4j_graphrag.retrievers.base import Retriever
from neo4j_graphrag.types import RetrieverResult
from test_templates_graph import scenario, wipe_graph, write_graph

from cypher_templates.executor import TemplateExecutor
from cypher_templates.graphrag import TemplateRetriever
from cypher_templates.registry import TemplateRefused, UnknownTemplate
from cypher_templates.subject import Subject, load_subject

NOW = datetime(2026, 8, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def graph(driver: neo4j.Driver) -> Iterator[neo4j.Driver]:
    wipe_graph(driver)
    write_graph(driver, *scenario())
    yield driver


def subject(driver: neo4j.Driver, sid: str) -> Subject:
    return load_subject(TemplateExecutor(driver), sid, "incident_investigation", NOW)


def test_retriever_is_a_graphrag_retriever_returning_its_result(graph: neo4j.Driver) -> None:
    retriever = TemplateRetriever(
        graph,
        subject(graph, "acme/user:bob"),
        "runbooks_for",
        options={"anchor": "service"},
        known_at=NOW,
    )
    assert isinstance(retriever, Retriever)
    result = retriever.search(parameters={"anchor_id": "svc:payment-api"})
    assert isinstance(result, RetrieverResult)
    by_id = {i.metadata["element"]["element_id"]: i for i in result.items}  # type: ignore[index]
    assert set(by_id) == {"runbook:payment-recovery@v2", "runbook:payment-recovery@v3"}
    v2 = by_id["runbook:payment-recovery@v2"]
    assert v2.content == "Restart the payment workers."
    assert v2.metadata["element"]["replacement"] == "runbook:payment-recovery@v3"  # type: ignore[index]
    assert result.metadata["template_id"] == "runbooks_for"  # type: ignore[index]
    assert str(result.metadata["template_hash"]).startswith("sha256:")  # type: ignore[index]


def test_query_text_fills_the_text_parameter_and_stays_in_tenant(graph: neo4j.Driver) -> None:
    eve = TemplateRetriever(
        graph, subject(graph, "globex/user:eve"), "fulltext_search", known_at=NOW
    )
    ids = [i.metadata["element"]["element_id"] for i in eve.search(query_text="payment").items]  # type: ignore[index]
    assert ids == ["svc:payment-api"]
    assert eve.last_result is not None and eve.last_result.params == {"query": "payment"}
    bob = TemplateRetriever(graph, subject(graph, "acme/user:bob"), "fulltext_search", known_at=NOW)
    result = bob.search(query_text="payment", top_k=2)
    assert len(result.items) == 2 and result.metadata["truncated"] is True  # type: ignore[index]


def test_refusals_pass_through(graph: neo4j.Driver) -> None:
    bob = subject(graph, "acme/user:bob")
    with pytest.raises(UnknownTemplate):
        TemplateRetriever(graph, bob, "text2cypher")
    with pytest.raises(TemplateRefused, match=r"must be an integer in 1\.\.3"):
        TemplateRetriever(graph, bob, "dependency_neighbourhood", options={"hops": 4})
    retriever = TemplateRetriever(graph, bob, "ownership_over_time")
    with pytest.raises(TemplateRefused, match="takes no query text"):
        retriever.search(query_text="MATCH (n) DETACH DELETE n")
    with pytest.raises(TemplateRefused, match="Extra inputs are not permitted"):
        retriever.search(parameters={"service_id": "svc:payment-api", "tenant": "globex"})


def test_retriever_converts_to_an_llm_tool(graph: neo4j.Driver) -> None:
    retriever = TemplateRetriever(graph, subject(graph, "acme/user:bob"), "fulltext_search")
    tool = retriever.convert_to_tool(name="kg_search", description="Search the KG safely.")
    assert tool.get_name() == "kg_search"
    result = tool.execute(query_text="runbook")
    assert isinstance(result, RetrieverResult)
