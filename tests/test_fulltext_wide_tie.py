"""Issue 12, scale: `fulltext_search` rows that would end inside a tie too wide to order by
id stop above it and say how wide it is at least (real Neo4j).

Tenant `tied`: three runbooks match two words, and below them many documents match one word
equally (same length, same title). With a tie bound of 20 (the executor's parameter; 1,000
by default), alice's 30 visible equal hits for `recovery` are a wide tie; her 12 for `backup`
are not, and the 30 `backup` documents under an ACL she lacks must not make them one.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import neo4j
import pytest
from conftest import load_only, wiki_bundle

from cypher_templates import executor as executor_module
from cypher_templates.executor import TemplateExecutor, ToolResult
from cypher_templates.plan import PlanStep
from cypher_templates.subject import Subject, load_subject
from graph_schema.bundle import Bundle, DocumentSpec
from graph_schema.kg_types import DocumentKind

TENANT = "tied"
PURPOSE = "incident_investigation"
T0 = datetime(2026, 6, 1, tzinfo=UTC)
KNOWN_AT = T0 + timedelta(days=1)
BOUND = 20
TOP = [f"doc:top-{i}" for i in range(3)]


def _document(doc_id: str, content: str, acl: str) -> DocumentSpec:
    return DocumentSpec(
        id=doc_id,
        kind=DocumentKind.RUNBOOK,
        title="Operations note",
        content=content,
        locator=f"wiki/{doc_id}.md",
        acl=[acl],
        source_id="src:wiki",
        valid_from=T0,
        recorded_at=T0,
    )


def _bundle() -> Bundle:
    documents = [_document(doc_id, "recovery backup gateway", "internal") for doc_id in TOP]
    # Every tied document is three words long, so each scores the same for its one word.
    documents += [
        _document(f"doc:r-{i:03d}", f"recovery note n{i:03d}", "internal") for i in range(30)
    ]
    documents += [
        _document(f"doc:b-{i:03d}", f"backup note n{i:03d}", "internal") for i in range(12)
    ]
    # Another subject's documents, tied with alice's `backup` ones and first by id.
    documents += [_document(f"doc:a-{i:03d}", f"backup note s{i:03d}", "secret") for i in range(30)]
    return wiki_bundle(
        TENANT,
        T0,
        documents,
        {"user:alice": ["internal"], "user:eve": ["secret"]},
        [PURPOSE],
    )


@pytest.fixture(scope="module")
def tied(driver: neo4j.Driver) -> Iterator[TemplateExecutor]:
    load_only(driver, TENANT, _bundle())
    yield TemplateExecutor(driver, tie_bound=BOUND)


@pytest.fixture(scope="module")
def alice(tied: TemplateExecutor) -> Subject:
    return load_subject(tied, f"{TENANT}/user:alice", PURPOSE)


@pytest.fixture(params=["real", "tiny"])
def candidate_sizes(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "tiny":
        # Eleven candidates first, doubling: the tie is met at the floor of too few candidates.
        monkeypatch.setattr(executor_module, "_MIN_FIRST_CANDIDATES", 1)
        monkeypatch.setattr(executor_module, "_FIRST_CANDIDATES_PER_ROW", 1)
        monkeypatch.setattr(executor_module, "_CANDIDATE_GROWTH", 2)
        monkeypatch.setattr(executor_module, "_MAX_BOUNDED_CANDIDATES", 64)
    return str(request.param)


def _search(executor: TemplateExecutor, subject: Subject, query: str) -> ToolResult:
    step = PlanStep(
        template_id="fulltext_search",
        evidence_type="runbook",
        params={"query": query},
        options={"label": "any"},
        limit=10,
    )
    return executor.run(step, subject, KNOWN_AT)


def _ids(result: ToolResult) -> list[str]:
    return [row.element.element_id for row in result.rows]


def test_rows_stop_above_a_tie_wider_than_the_bound(
    tied: TemplateExecutor, alice: Subject, candidate_sizes: str
) -> None:
    result = _search(tied, alice, "recovery gateway")
    # Not the first seven of thirty equal documents by id: the three above them, and the tie.
    assert _ids(result) == TOP
    assert result.tie_at_cut == BOUND
    assert not result.truncated
    # Same graph, same question: the same rows and the same tie, alone or in a group.
    again = tied.run_together(
        [
            PlanStep(
                template_id="fulltext_search",
                evidence_type="runbook",
                params={"query": q},
                options={"label": "any"},
                limit=10,
            )
            for q in ("recovery gateway", "backup gateway")
        ],
        alice,
        KNOWN_AT,
    )[0]
    assert (_ids(again), again.tie_at_cut) == (TOP, BOUND)


def test_a_tie_under_the_bound_is_read_by_id_as_before(
    tied: TemplateExecutor, alice: Subject, candidate_sizes: str
) -> None:
    # Alice sees 12 equal `backup` documents (under the bound): the rows go on into the tie
    # by id. The 30 tied documents only eve may read are not counted: they would have made
    # the tie 42 wide.
    result = _search(tied, alice, "backup gateway")
    assert _ids(result) == TOP + [f"doc:b-{i:03d}" for i in range(7)]
    assert result.tie_at_cut is None
    assert result.truncated
    unbounded = TemplateExecutor(tied.driver, tie_bound=10_000).run(
        PlanStep(
            template_id="fulltext_search",
            evidence_type="runbook",
            params={"query": "backup gateway"},
            options={"label": "any"},
            limit=10,
        ),
        alice,
        KNOWN_AT,
    )
    assert [r.model_dump() for r in result.rows] == [r.model_dump() for r in unbounded.rows]


def test_the_wide_tie_of_another_subject_is_not_hers(tied: TemplateExecutor) -> None:
    # Eve reads the 30 `backup` documents under `secret`: for her that tie is wide.
    eve = load_subject(tied, f"{TENANT}/user:eve", PURPOSE)
    result = _search(tied, eve, "backup")
    assert (_ids(result), result.tie_at_cut) == ([], BOUND)


def test_an_investigation_says_the_tie_it_did_not_read(
    tied: TemplateExecutor,
    cli_env: object,
    invoke,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(executor_module, "TIE_BOUND", BOUND)
    monkeypatch.setenv("INVESTIGATOR_TENANT", TENANT)
    result = invoke(
        "investigate", "what is the recovery gateway procedure", "--subject", "user:alice"
    )
    assert result.code in (0, 1), result.err
    assert (
        "document (would strengthen): 20+ records you can see match the words "
        "'recovery gateway' equally: too many to rank, none of them was read; name a "
        "service, alert or error code to narrow it"
    ) in result.out
    # The same question for the `backup` tie alice sees 12 of: no such gap.
    result = invoke(
        "investigate", "what is the backup gateway procedure", "--subject", "user:alice"
    )
    assert "rank equally" not in result.out
