"""A release of a service the question is not about is never taken as the release asked about.

The correlation counted every release read that was not of a known upstream as the asked
service's own: with a `--service svc:h32-search` left from an earlier command (an unrelated
service, no DEPENDS_ON to or from payment-api, whose release finished between payment-api's
release and PAY-4097's first sighting), "did the release cause the payment-api errors?"
took h32-search's release as the release asked about (the closest before the first error)
and payment-api's as another change. Now when a release of a service that emitted the errors
was read, only those are the asked service's own; an upstream's (DEPENDS_ON in the pack)
stays a competing cause, and an unrelated service's is neither (unless the question names
it). Demo dataset plus one release of svc:h32-search, through the CLI
against a real Neo4j.
"""

from __future__ import annotations

from pathlib import Path

import neo4j
from conftest import ingest_text, investigate_json

BOB = ["--subject", "acme/user:bob", "--deadline-seconds", "600"]
AT_1030 = ["--as-of", "2026-07-23T10:30:00Z"]
CORRELATION = (
    "PAY-4097 was first seen 38 s after release deploy:release-2026.07.23.1 finished "
    "(2026-07-23T10:02:00Z -> 2026-07-23T10:02:38Z): a time correlation, not by itself a "
    "root cause"
)
# svc:h32-search: its own service, its release finished at 10:02:20, 18 s before PAY-4097
# was first seen (20 s after payment-api's release finished).
SEARCH = """tenant: acme
nodes:
  - {id: svc:h32-search, label: Service, name: h32-search, acl: [internal],
     source_id: src:service-catalog, locator: "catalog/acme.yaml#svc:h32-search",
     valid_from: "2025-01-01T00:00:00Z"}
  - {id: deploy:h32-search-2026.07.23.4, label: Deployment, name: h32-search-2026.07.23.4,
     acl: [internal], source_id: src:cicd,
     locator: "cicd/pipelines/h32-search/runs/501#summary",
     valid_from: "2026-07-23T10:02:20Z", method: ci_cd_webhook,
     props: {service: svc:h32-search, release: "2026.07.23.4",
             started_at: "2026-07-23T10:00:00Z", finished_at: "2026-07-23T10:02:20Z",
             outcome: succeeded}}
edges:
  - {type: DEPLOYED_TO, from: deploy:h32-search-2026.07.23.4, to: svc:h32-search,
     acl: [internal], source_id: src:cicd,
     locator: "cicd/pipelines/h32-search/runs/501#DEPLOYED_TO",
     valid_from: "2026-07-23T10:02:20Z"}
"""


def test_a_release_of_an_unrelated_service_is_not_the_release_asked_about(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, tmp_path: Path
) -> None:
    ingest_text(invoke, tmp_path / "search.yaml", SEARCH)
    question = "did the release cause the payment-api errors?"
    plain = investigate_json(invoke, question, *BOB, *AT_1030)
    # A --service left from an earlier command: both services are read, the question's first.
    doc = investigate_json(invoke, question, "--service", "svc:h32-search", *BOB, *AT_1030)
    assert any("--service is svc:h32-search" in n for n in doc["service_notes"]), doc
    statements = [c["statement"] for c in doc["claims"]]
    # Before: "PAY-4097 was first seen 18 s after release deploy:h32-search-2026.07.23.4
    # finished ...", "... may have caused PAY-4097", payment-api's release "another change".
    assert CORRELATION in statements, statements
    assert not any("h32-search" in s for s in statements), statements
    assert (
        (doc["verdict"], doc["status"])
        == (plain["verdict"], plain["status"])
        == (
            "likely",
            "complete",
        )
    ), doc["missing_evidence"]
    card = invoke("investigate", question, "--service", "svc:h32-search", *BOB, *AT_1030)
    assert card.code == 0, card
    assert CORRELATION in card.out, card.out
    # Still read (listed under the evidence), never correlated with the errors.
    assert "18 s after" not in card.out and "(deploy:h32-search" not in card.out, card.out
