"""An on-call engineer asking about payment-api's releases during the demo's rollout (real
Neo4j, the bundled dataset: release 2026.07.23.1 ran 09:55:12Z-10:02:00Z, the one before it
finished 2026-07-20T14:00:00Z), in the words a release check used (e22-qa finding 1)."""

from __future__ import annotations

import neo4j
import pytest
from conftest import investigate_json

BOB = ["--service", "svc:payment-api", "--subject", "acme/user:bob"]
DURING_ROLLOUT = "2026-07-23T10:00:00Z"
ROLLOUT = (
    f"At as_of, {DURING_ROLLOUT}: the rollout of release release-2026.07.23.1 "
    "(deploy:release-2026.07.23.1) to svc:payment-api was under way, started at "
    "2026-07-23T09:55:12Z and not finished by 2026-07-23T10:00:00Z, so it was not yet the "
    "release in force; the latest release of svc:payment-api finished by then is "
    "release-2026.07.20.2 (deploy:release-2026.07.20.2, finished at 2026-07-20T14:00:00Z)"
)


def _ask(invoke, question: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """The run's JSON document at as_of during the rollout (time enough for a cold server)."""
    flags = [*BOB, "--as-of", DURING_ROLLOUT, "--deadline-seconds", "600"]
    return investigate_json(invoke, question, *flags)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "question",
    [
        # Before, each was `complete` with only the 07-20 release, the rollout rejected_temporal.
        "What is the latest release of payment-api?",
        "Was a release of payment-api in progress?",
        "Which release of payment-api was running?",
    ],
)
def test_a_release_question_during_a_rollout_names_the_rollout(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, question: str
) -> None:
    doc = _ask(invoke, question)
    claims = {c["statement"]: c for c in doc["claims"]}
    assert ROLLOUT in claims, list(claims)
    assert claims[ROLLOUT]["epistemic_status"] == "fact"
    by_id = {e["evidence_id"]: e for e in doc["evidence"]}
    cited = {by_id[i]["element_id"] for i in claims[ROLLOUT]["evidence_ids"]}
    assert cited == {"deploy:release-2026.07.23.1", "deploy:release-2026.07.20.2"}
    assert "deploy:release-2026.07.23.1" not in {r["element_id"] for r in doc["rejected"]}
    # The unfinished rollout is never "the release", nor is its finish (after as_of) stated.
    assert not any("Release release-2026.07.23.1" in s or "10:02:00" in s for s in claims)


def test_the_then_fact_names_the_latest_release_finished_by_then(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    # Before, the fact stopped at "not yet the release in force": the 07-20 release was
    # low_relevance to an ownership question, so nothing said which release was in force.
    doc = _ask(invoke, "Who owned payment-api then?")
    statements = [c["statement"] for c in doc["claims"]]
    assert ROLLOUT in statements, statements
    # Only the latest finished release is read in for it, not every older one.
    admitted = {e["element_id"] for e in doc["evidence"] if e["element_id"].startswith("deploy:")}
    assert admitted == {"deploy:release-2026.07.23.1", "deploy:release-2026.07.20.2"}
