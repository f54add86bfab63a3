"""An investigator asking after the fact about a moment during a rollout, and in the words
people use for "now" and for which release (real Neo4j; tenant initech's tps-report: owned
by team:alpha until 2026-11-10, team:beta until 11-20, then team:gamma; releases on 11-09
(13:50-14:00) and 11-11 (09:50-09:58), first TPS-500 error 11-11 10:02)."""

from __future__ import annotations

import json

import neo4j
import pytest
from conftest import ingest_fixture_bundle

IVY = ["--service", "svc:tps-report", "--subject", "initech/user:ivy"]
OWNS = "OWNS svc:tps-report"
DURING_ROLLOUT = "2026-11-11T09:55:00Z"
ROLLOUT = (
    "the rollout of release tps-2026.11.11.1 (deploy:tps-2026.11.11.1) to svc:tps-report was "
    "under way, started at 2026-11-11T09:50:00Z and not finished by 2026-11-11T09:55:00Z, so "
    "it was not yet the release in force; the latest release of svc:tps-report finished by "
    "then is tps-2026.11.09.1 (deploy:tps-2026.11.09.1, finished at 2026-11-09T14:00:00Z)"
)


@pytest.fixture(scope="module")
def initech(driver: neo4j.Driver) -> neo4j.Driver:
    return ingest_fixture_bundle(driver, "initech-time")


def _ask(invoke, question: str, *flags: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """The run's JSON document (time enough for a first question on a new server)."""
    res = invoke("investigate", question, *IVY, "--deadline-seconds", "600", *flags, "--json")
    assert res.code == 0, res
    return json.loads(res.out)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "question", ["Who owned tps-report then?", "Which release was running then?"]
)
def test_a_rollout_under_way_at_as_of_is_said_and_never_called_the_release(  # type: ignore[no-untyped-def]
    initech, cli_env, invoke, question: str
) -> None:
    doc = _ask(invoke, question, "--as-of", DURING_ROLLOUT)
    claims = {c["statement"]: c for c in doc["claims"]}
    # Before, nothing said a rollout was under way: its record was `rejected_temporal`.
    rollout = claims.get(f"At as_of, {DURING_ROLLOUT}: {ROLLOUT}")
    assert rollout is not None, list(claims)
    # Both times are read off the release records: a fact, bound to both records.
    assert rollout["epistemic_status"] == "fact"
    by_id = {e["evidence_id"]: e for e in doc["evidence"]}
    cited = {by_id[i]["element_id"] for i in rollout["evidence_ids"]}
    assert cited == {"deploy:tps-2026.11.11.1", "deploy:tps-2026.11.09.1"}
    assert "deploy:tps-2026.11.11.1" not in {r["element_id"] for r in doc["rejected"]}
    # The unfinished rollout is never "the release", nor is its finish (after as_of) stated.
    # "Then" may be its start, named as such ("the start of the rollout of release ...").
    started = "the start of the rollout of release tps-2026.11.11.1,"
    assert not any(
        "Release tps-2026.11.11.1" in s or "release tps-2026.11.11.1," in s.replace(started, "")
        for s in claims
    )
    assert not any("09:58" in s for s in claims)


def test_a_finished_rollout_is_no_rollout_under_way(initech, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _ask(invoke, "Which release was running then?", "--as-of", "2026-11-11T09:58:00Z")
    statements = [c["statement"] for c in doc["claims"]]
    assert not any("under way" in s for s in statements), statements
    assert any("Release tps-2026.11.11.1 (deploy:tps-2026.11.11.1)" in s for s in statements)


@pytest.mark.parametrize(
    "question",
    [
        # Before, "at the moment" was "then": the owner at the first error (team:beta).
        "Who owns tps-report at the moment?",
        "Who owns tps-report right now?",
        "Who currently owns tps-report?",
    ],
)
def test_words_for_now_mean_as_of(initech, cli_env, invoke, question: str) -> None:  # type: ignore[no-untyped-def]
    doc = _ask(invoke, question, "--as-of", "2026-12-01T00:00:00Z")
    statements = [c["statement"] for c in doc["claims"]]
    assert doc["status"] == "complete", doc["missing_evidence"]
    assert statements == [
        "At 2026-12-01T00:00:00Z: team:gamma OWNS svc:tps-report "
        "(valid 2026-11-20T00:00:00Z to open)"
    ]


@pytest.mark.parametrize(
    ("question", "taken", "owner"),
    [
        # Before, neither was a time word: the answer was today's owner (team:gamma), complete.
        ("Who owned tps-report before the very first release?",
         "1 s before the start of the release tps-2026.11.09.1, 2026-11-09T13:49:59Z",
         "team:alpha"),
        ("Who owned tps-report before the most recent release?",
         "1 s before the start of the release tps-2026.11.11.1, 2026-11-11T09:49:59Z",
         "team:beta"),
    ],
)  # fmt: skip
def test_the_very_first_and_the_most_recent_release_are_release_words(  # type: ignore[no-untyped-def]
    initech, cli_env, invoke, question: str, taken: str, owner: str
) -> None:
    doc = _ask(invoke, question, "--as-of", "2026-12-01T00:00:00Z")
    words = question.removeprefix("Who owned tps-report ").rstrip("?")
    statements = [c["statement"] for c in doc["claims"]]
    assert any(
        s.startswith(f"At {taken} (the question says '{words}')") and f"{owner} {OWNS}" in s
        for s in statements
    ), statements
    assert doc["unresolved_time_words"] == []


def test_before_the_first_release_needs_no_error(initech, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # At 10:00 no error is known yet (the first TPS-500 is at 10:02): before, the plan asked
    # for a first error and the answer was `partial` (error_first_seen missing).
    doc = _ask(
        invoke, "Who owned tps-report before the first release?", "--as-of", "2026-11-11T10:00:00Z"
    )
    assert doc["status"] == "complete", doc["missing_evidence"]
    assert doc["missing_evidence"] == []
    assert any(
        "1 s before the start of the release tps-2026.11.09.1, 2026-11-09T13:49:59Z"
        in c["statement"]
        and f"team:alpha {OWNS}" in c["statement"]
        for c in doc["claims"]
    )
