"""The runbook card says a tie too wide to rank, and how many fit alike as it knows it
(real Neo4j, through the CLI and the served tool).

Tenant `zebra`: identical "Zebrafrost recovery" pages, 35 under `internal` (bob and carol),
10 under `incident` (bob only) and 20 under `secret` (neither), and one "Glacier thaw" page.
With a tie bound of 40 (the executor's; 200 by default) bob's 45 visible equal hits are a
wide tie the search does not read; carol's 35 are not, and the runbook search reads 30 of
them. Before, bob's card said "no runbook mentions any of: zebrafrost, stalls" (every page
has both words) and carol's "30 runbooks fit ... alike" (35 do). The secret pages must
change neither answer: counted, they would make carol's tie 55 wide.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime

import neo4j
import pytest
from conftest import load_only, wiki_bundle

from cypher_templates import executor as executor_module
from graph_schema.bundle import Bundle, DocumentSpec
from graph_schema.kg_types import DocumentKind

TENANT = "zebra"
T0 = datetime(2026, 6, 1, tzinfo=UTC)
BOUND = 40
PAGE = "When zebrafrost stalls, restart the zebrafrost worker."
TIE_NOTE = (
    "No runbook: 40+ runbooks you can see match the words 'zebrafrost stalls' equally: too "
    "many to rank, none of them was read; name a service, alert or error code to narrow it"
)


def _page(doc_id: str, acl: str) -> DocumentSpec:
    return DocumentSpec(
        id=doc_id,
        kind=DocumentKind.RUNBOOK,
        title="Zebrafrost recovery",
        content=PAGE,
        locator=f"wiki/{doc_id.split(':', 1)[1]}.md",
        acl=[acl],
        source_id="src:wiki",
        valid_from=T0,
        recorded_at=T0,
    )


def _bundle() -> Bundle:
    pages = [_page(f"runbook:zf-a{i:03d}", "internal") for i in range(35)]
    pages += [_page(f"runbook:zf-b{i:03d}", "incident") for i in range(10)]
    pages += [_page(f"runbook:zf-s{i:03d}", "secret") for i in range(20)]
    # One page above the tie for "zebrafrost worker glacier": it has the third word.
    pages.append(
        _page("runbook:glacier", "internal").model_copy(
            update={"title": "Glacier thaw", "content": "A glacier holds the zebrafrost worker."}
        )
    )
    return wiki_bundle(
        TENANT,
        T0,
        pages,
        {"user:bob": ["internal", "incident"], "user:carol": ["internal"]},
        ["runbook_lookup", "incident_investigation"],
    )


@pytest.fixture(scope="module")
def zebra(driver: neo4j.Driver) -> Iterator[neo4j.Driver]:
    yield load_only(driver, TENANT, _bundle())


@pytest.fixture
def tie_bound(monkeypatch: pytest.MonkeyPatch, cli_env: object) -> None:
    monkeypatch.setattr(executor_module, "TIE_BOUND", BOUND)
    monkeypatch.setenv("INVESTIGATOR_TENANT", TENANT)


def test_a_wide_tie_is_said_not_denied(zebra, tie_bound, invoke) -> None:  # type: ignore[no-untyped-def]
    res = invoke("runbook", "zebrafrost stalls", "--subject", "user:bob")
    assert res.code == 0, res
    assert res.out.splitlines()[0] == TIE_NOTE, res.out
    assert "mentions" not in res.out
    doc = json.loads(invoke("runbook", "zebrafrost stalls", "--subject", "user:bob", "--json").out)
    assert doc["runbook"] is None
    assert "No runbook: " + doc["note"] == TIE_NOTE


def test_the_served_tool_says_the_same_tie(zebra, tie_bound, cli_env) -> None:  # type: ignore[no-untyped-def]
    from cypher_templates.subject import SubjectRef
    from investigator.serving.backend import RunbookInput, ServingBackend

    backend = ServingBackend(cli_env, driver=zebra)
    served = json.loads(
        backend.runbook(
            SubjectRef(tenant=TENANT, id="user:bob"),
            RunbookInput(target="text", value="zebrafrost stalls"),
        )
    )
    assert (served["runbook"], "No runbook: " + served["note"]) == (None, TIE_NOTE)


def test_alike_runbooks_past_those_read_are_counted_as_known(zebra, tie_bound, invoke) -> None:  # type: ignore[no-untyped-def]
    # Carol sees 35 (under the bound): a runbook, and "30+" alike, not "30". The 20 secret
    # pages tied with hers do not make her tie wide (35 + 20 would pass the bound).
    res = invoke("runbook", "zebrafrost stalls", "--subject", "user:carol")
    assert res.code == 0, res
    assert res.out.startswith("Runbook   Zebrafrost recovery  [runbook:zf-a000"), res.out
    assert "30+ runbooks fit 'zebrafrost stalls' alike" in res.out, res.out
    assert "too many to rank" not in res.out
    assert "zf-s" not in res.out and "zf-b" not in res.out


def test_a_page_above_a_wide_tie_is_shown_and_the_tie_said(zebra, tie_bound, invoke) -> None:  # type: ignore[no-untyped-def]
    res = invoke("runbook", "zebrafrost worker glacier", "--subject", "user:bob")
    assert res.code == 0, res
    assert res.out.startswith("Runbook   Glacier thaw  [runbook:glacier"), res.out
    assert (
        "40+ more runbooks you can see match these words equally under those read: too many "
        "to rank, none of them was read"
    ) in res.out
    # Carol's 35 are under the bound: read, and no such note.
    res = invoke("runbook", "zebrafrost worker glacier", "--subject", "user:carol")
    assert res.out.startswith("Runbook   Glacier thaw  [runbook:glacier"), res.out
    assert "too many to rank" not in res.out
