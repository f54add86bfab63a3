"""A change question's period names a release that started in it and was still rolling out at
its end (h27-rollout), through the CLI against a real Neo4j. Before, "what changed on
payment-api between July 22 and July 23?" at as_of 10:00 said "no release ... and no other
change ... is recorded", while release 2026.07.23.1 was rolling out (started 09:55:12Z,
finished 10:02:00Z): a period read only the releases finished in it. A release the subject may
not read is neither named nor counted."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import ingest_text, investigate_json, release_line

RELEASE = "deploy:release-2026.07.23.1"
STARTED = "started at 2026-07-23T09:55:12Z, in the period asked"


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


def _under_way(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [s for s in _statements(doc) if s.startswith(f"Release {RELEASE} started at")]


def _nothing_recorded(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [
        m["description"]
        for m in doc["missing_evidence"]
        if m["description"].startswith("no release of the services asked about")
    ]


def _ask(invoke, question: str, as_of: str, *flags: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    return investigate_json(
        invoke,
        question,
        "--subject",
        "acme/user:bob",
        "--as-of",
        as_of,
        "--deadline-seconds",
        "120",
        *flags,
    )


def test_a_release_rolling_out_at_as_of_is_listed_under_way(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    for question in (
        "what changed on payment-api between July 22 and July 23?",
        "what changed between July 22 and July 23?",
    ):
        doc = _ask(invoke, question, "2026-07-23T10:00:00Z")
        assert _under_way(doc) == [
            f"Release {RELEASE} {STARTED}, from 2026-07-22T00:00:00Z to "
            "2026-07-23T10:00:00Z ('between July 22 and July 23'), and had not finished by "
            "as_of 2026-07-23T10:00:00Z: under way"
        ], (question, doc["claims"])
        claim = next(c for c in doc["claims"] if c["statement"] in _under_way(doc))
        cited = {e["evidence_id"]: e["element_id"] for e in doc["evidence"]}
        assert [cited[e] for e in claim["evidence_ids"]] == [RELEASE], claim
        assert not _nothing_recorded(doc), doc["missing_evidence"]


def test_the_last_hour_before_and_after_the_finish(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    for question in (
        "what changed on payment-api in the last hour?",
        "What changed in the last hour?",
    ):
        rolling = _ask(invoke, question, "2026-07-23T10:00:00Z")
        assert _under_way(rolling) == [
            f"Release {RELEASE} {STARTED}, from 2026-07-23T09:00:00Z to "
            "2026-07-23T10:00:00Z ('in the last hour'), and had not finished by as_of "
            "2026-07-23T10:00:00Z: under way"
        ], (question, rolling["claims"])
        # Finished at 10:02, in the hour to 10:03: said finished, as before, never under way.
        done = _ask(invoke, question, "2026-07-23T10:03:00Z")
        assert (
            f"Release {RELEASE} finished at 2026-07-23T10:02:00Z, in the period asked, from "
            "2026-07-23T09:03:00Z to 2026-07-23T10:03:00Z ('in the last hour')"
        ) in _statements(done), (question, done["claims"])
        assert not _under_way(done), done["claims"]


def test_started_before_the_period_finished_in_it_is_said_finished(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = _ask(
        invoke,
        "what changed on payment-api between 2026-07-23T09:58:00Z and 2026-07-23T10:05:00Z?",
        "2026-07-23T12:00:00Z",
    )
    assert any(
        s.startswith(f"Release {RELEASE} finished at 2026-07-23T10:02:00Z, in the period asked")
        for s in _statements(doc)
    ), doc["claims"]
    assert not _under_way(doc), doc["claims"]


def test_started_in_the_period_finished_after_its_end(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # Read at as_of 12:00, the period ends at 10:00: the rollout ran past the period's end.
    for question in (
        "what changed on payment-api between 2026-07-23T09:00:00Z and 2026-07-23T10:00:00Z?",
        "what changed between 2026-07-23T09:00:00Z and 2026-07-23T10:00:00Z?",
    ):
        doc = _ask(invoke, question, "2026-07-23T12:00:00Z")
        assert _under_way(doc) == [
            f"Release {RELEASE} {STARTED}, from 2026-07-23T09:00:00Z to 2026-07-23T10:00:00Z "
            "('between 2026-07-23T09:00:00Z and 2026-07-23T10:00:00Z'), and had not finished by "
            "the period's end 2026-07-23T10:00:00Z: under way (finished at "
            "2026-07-23T10:02:00Z, after the period)"
        ], (question, doc["claims"])
        assert not _nothing_recorded(doc), doc["missing_evidence"]


def test_known_at_before_the_release_was_recorded(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # Recorded at 10:02:05: known at 10:01 the KG holds no record of it, so none is named.
    doc = _ask(
        invoke,
        "what changed on payment-api between July 22 and July 23?",
        "2026-07-23T10:00:00Z",
        "--known-at",
        "2026-07-23T10:01:00Z",
    )
    assert RELEASE not in json.dumps(doc["claims"]), doc["claims"]
    assert _nothing_recorded(doc), doc["missing_evidence"]


def test_a_rollout_the_subject_may_not_read_is_not_named(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, tmp_path: Path
) -> None:
    # Runs last in its module: the hidden release stays in the module's graph.
    question = "What changed in the last hour?"
    before = _ask(invoke, question, "2026-07-23T10:00:00Z")
    bundle = "tenant: acme\nnodes:\n" + release_line(
        "hidden", 1, "2026-07-23T11:00:00Z", acl="secret", started="2026-07-23T09:30:00Z"
    )
    ingest_text(invoke, tmp_path / "hidden.yaml", bundle)
    after = _ask(invoke, question, "2026-07-23T10:00:00Z")
    assert "hidden" not in json.dumps(after), after["claims"]
    assert _statements(after) == _statements(before)
    assert after["missing_evidence"] == before["missing_evidence"]
    named = _ask(
        invoke,
        "what changed on payment-api in the last hour?",
        "2026-07-23T10:00:00Z",
    )
    assert "hidden" not in json.dumps(named), named["claims"]
