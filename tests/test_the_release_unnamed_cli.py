""" "The release" of a correlation question that names no service, through the CLI against a
real Neo4j: the demo dataset plus one release of an unrelated service, svc:h33-search, which
finished at 10:02:20, 20 s after payment-api's release 2026.07.23.1 and 18 s before PAY-4097
was first seen (10:02:38); h33-search emitted no error.

Before (h32-intents, h32-trust): "the release" was the last release found by as_of, so
h33-search's became "the release" of "did the release cause it?", and "was it the deploy or
the risk rules?" took risk-engine's release of the day before (its text hit "risk"). Now the
last release of a service that emitted errors after it is taken; with no error yet, the
releases finished within 30 min of the last are all read; a note says which and why.
"""

from __future__ import annotations

from pathlib import Path

import neo4j
import pytest
from conftest import ingest_text, investigate_json

BOB = ["--subject", "acme/user:bob", "--deadline-seconds", "600"]
CAROL = ["--subject", "acme/user:carol", "--deadline-seconds", "600"]
MALLORY = ["--subject", "globex/user:mallory", "--deadline-seconds", "600"]
CORRELATION = (
    "PAY-4097 was first seen 38 s after release deploy:release-2026.07.23.1 finished "
    "(2026-07-23T10:02:00Z -> 2026-07-23T10:02:38Z): a time correlation, not by itself a "
    "root cause"
)
PAYMENT_RELEASE = (
    "Release release-2026.07.23.1 (deploy:release-2026.07.23.1) started at "
    "2026-07-23T09:55:12Z and finished at 2026-07-23T10:02:00Z"
)
SEARCH = """tenant: acme
nodes:
  - {id: svc:h33-search, label: Service, name: h33-search, acl: [internal],
     source_id: src:service-catalog, locator: "catalog/acme.yaml#svc:h33-search",
     valid_from: "2025-01-01T00:00:00Z"}
  - {id: deploy:h33-search-2026.07.23.4, label: Deployment,
     name: h33-search release 2026.07.23.4, acl: [internal], source_id: src:cicd,
     locator: "cicd/pipelines/h33-search/runs/501#summary",
     valid_from: "2026-07-23T10:02:20Z", method: ci_cd_webhook,
     props: {service: svc:h33-search, release: "2026.07.23.4",
             started_at: "2026-07-23T10:00:00Z", finished_at: "2026-07-23T10:02:20Z",
             outcome: succeeded}}
edges:
  - {type: DEPLOYED_TO, from: deploy:h33-search-2026.07.23.4, to: svc:h33-search,
     acl: [internal], source_id: src:cicd,
     locator: "cicd/pipelines/h33-search/runs/501#DEPLOYED_TO",
     valid_from: "2026-07-23T10:02:20Z"}
"""
# carol, who may not read the incident: by the errors after the release (since h34 the
# error is named by its code, "PAY-4097", not its id "err:PAY-4097").
TAKEN_PAYMENT = (
    "the question names no service: svc:payment-api is read as the one asked about, the "
    "service of deploy:release-2026.07.23.1, the last release found by as_of "
    "(2026-07-23T10:02:00Z) of a service that emitted an error after it (PAY-4097 first "
    "seen 2026-07-23T10:02:38Z)"
)
# bob, who reads the incident: by the incident it affected, begun before it (h34).
TAKEN_BY_INCIDENT = (
    "the question names no service: svc:payment-api is read as the one asked about, the "
    "service of deploy:release-2026.07.23.1, the last release found by as_of "
    '(2026-07-23T10:02:00Z) of a service the incident "Payments authorization failures '
    '2026-07-23" (inc:2026-07-23-payments) affected, begun before the incident began '
    "(2026-07-23T10:02:38Z); svc:payment-api emitted PAY-4097 after "
    "deploy:release-2026.07.23.1 (first seen 2026-07-23T10:02:38Z); not taken: "
    "deploy:h33-search-2026.07.23.4 of svc:h33-search (2026-07-23T10:02:20Z: svc:h33-search "
    "is neither a service the incident affected nor on its error path)"
)


@pytest.fixture(scope="module")
def search_release(demo_graph: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("h33-release") / "search.yaml"


@pytest.fixture
def with_search(search_release: Path, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    if not search_release.exists():
        ingest_text(invoke, search_release, SEARCH)


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


@pytest.mark.parametrize("subject", [BOB, CAROL], ids=["bob", "carol"])
@pytest.mark.parametrize("as_of", ["2026-07-23T10:02:38Z", "2026-07-23T10:30:00Z"])
def test_after_the_first_error_the_release_of_the_erring_service_is_taken(  # type: ignore[no-untyped-def]
    with_search, invoke, subject: list[str], as_of: str
) -> None:
    # carol may not read the incident: the errors' service is known from its EMITTED record.
    doc = investigate_json(invoke, "did the release cause it?", *subject, "--as-of", as_of)
    notes = [n for n in doc["search_notes"] if "names no service" in n]
    assert len(notes) == 1, doc["search_notes"]
    taken = TAKEN_BY_INCIDENT if subject == BOB else TAKEN_PAYMENT
    assert notes[0].startswith(taken), notes
    assert "not taken: deploy:h33-search-2026.07.23.4 of svc:h33-search" in notes[0], notes
    assert "err:" not in notes[0], notes
    statements = _statements(doc)
    assert CORRELATION in statements, statements
    assert not any("h33-search" in s for s in statements), statements
    card = invoke("investigate", "did the release cause it?", *subject, "--as-of", as_of)
    assert card.code == 0, card
    assert f"Note       {taken}" in card.out, card.out


@pytest.mark.parametrize("as_of", ["2026-07-23T10:02:20Z", "2026-07-23T10:02:37Z"])
def test_before_any_error_two_close_releases_are_both_read(  # type: ignore[no-untyped-def]
    with_search, invoke, as_of: str
) -> None:
    doc = investigate_json(invoke, "did the release cause it?", *BOB, "--as-of", as_of)
    notes = [n for n in doc["search_notes"] if "names no service" in n]
    assert notes == [
        "the question names no service: svc:h33-search and svc:payment-api are read as the "
        "ones asked about: deploy:h33-search-2026.07.23.4 of svc:h33-search is the last "
        "release found by as_of (2026-07-23T10:02:20Z), and deploy:release-2026.07.23.1 of "
        "svc:payment-api (2026-07-23T10:02:00Z) within 30 min before it; no error "
        "after either by as_of tells them apart, so neither is taken alone; not taken: "
        "deploy:risk-engine-2026.07.22.3 of svc:risk-engine (2026-07-22T16:30:00Z): earlier, "
        "and no service with a release read emitted an error after its release by as_of"
    ], doc["search_notes"]
    statements = _statements(doc)
    assert PAYMENT_RELEASE in statements, statements
    assert any(s.startswith("Release h33-search release 2026.07.23.4") for s in statements), (
        statements
    )
    assert doc["verdict"] == "uncertain", doc["verdict"]


def test_the_deploy_or_the_risk_rules_takes_the_release_of_the_erring_service(  # type: ignore[no-untyped-def]
    with_search, invoke
) -> None:
    question = "was it the deploy or the risk rules?"
    doc = investigate_json(invoke, question, *BOB, "--as-of", "2026-07-23T10:30:00Z")
    notes = [n for n in doc["search_notes"] if "names no service" in n]
    # Before: "svc:risk-engine is read as the one asked about, the service of
    # deploy:risk-engine-2026.07.22.3, the last release found by as_of (2026-07-22T16:30:00Z)".
    assert len(notes) == 1 and notes[0].startswith(TAKEN_BY_INCIDENT.split("; not taken")[0])
    assert "deploy:risk-engine-2026.07.22.3 of svc:risk-engine" in notes[0], notes
    statements = _statements(doc)
    assert CORRELATION in statements, statements
    assert not any(s.startswith("Release risk-engine") for s in statements), statements
    assert (doc["verdict"], doc["status"]) == ("likely", "complete"), doc["missing_evidence"]


def test_another_tenant_chooses_among_its_own_releases_only(  # type: ignore[no-untyped-def]
    with_search, invoke
) -> None:
    doc = investigate_json(
        invoke, "did the release cause it?", *MALLORY, "--as-of", "2026-07-23T10:30:00Z"
    )
    text = " ".join([*doc["search_notes"], *_statements(doc)])
    assert "svc:globex-payment-api is read as the one asked about" in text, text
    for acme in ("deploy:release-2026", "h33-search", "risk-engine", "svc:payment-api "):
        assert acme not in text, (acme, text)
