"""Cause questions answer about the error asked, through the CLI against a real Neo4j (h26
causes, e25-words/e25-qa PAY-1002 findings).

Demo dataset: PAY-4097 first seen 2026-07-23T10:02:38Z (the incident; its postmortem names
release 2026.07.23.1); PAY-1002 (card declined) emitted by payment-api since 2025-03-01. Before:
"What caused PAY-1002?" stated the PAY-4097 postmortem as its mechanism; carol's root cause of
PAY-4097 said "no mechanism evidence (e.g. ... config diff)" beside a CI/CD record she reads
that holds the config diff; "checkout errors 5xx whats going on" listed PAY-1002 beside the
incident as if it were of it."""

from __future__ import annotations

import neo4j
from conftest import investigate_json

LONG = ["--deadline-seconds", "600"]


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


def test_another_errors_postmortem_is_not_the_mechanism_of_the_error_asked(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    doc = investigate_json(invoke, "What caused PAY-1002?", "--subject", "acme/user:alice", *LONG)
    statements = _statements(doc)
    assert not any(s.startswith("Mechanism:") for s in statements), statements
    assert not any("PAY-4097" in s for s in statements), statements
    gaps = [g for g in doc["missing_evidence"] if g["evidence_type"] == "mechanism"]
    assert len(gaps) == 1 and gaps[0]["required"], doc["missing_evidence"]
    assert gaps[0]["description"].startswith(
        "no mechanism evidence about PAY-1002 (first seen at 2025-03-01T08:11:00Z)"
    ), gaps
    assert "doc:postmortem-2026-07-23-payments of 2026-07-23T10:02:00Z" in gaps[0]["description"]
    assert doc["status"] == "partial"
    # The error it is about keeps its mechanism.
    own = investigate_json(invoke, "What caused PAY-4097?", "--subject", "acme/user:alice", *LONG)
    assert any(
        s.startswith("Mechanism: Root cause: release 2026.07.23.1") for s in _statements(own)
    ), _statements(own)
    assert not any(g["evidence_type"] == "mechanism" for g in own["missing_evidence"])


def test_a_missing_mechanism_does_not_deny_the_change_records_read(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    doc = investigate_json(invoke, "root cause of PAY-4097", "--subject", "acme/user:carol", *LONG)
    gaps = [g for g in doc["missing_evidence"] if g["evidence_type"] == "mechanism"]
    assert len(gaps) == 1, doc["missing_evidence"]
    text = gaps[0]["description"]
    # carol reads the pipeline record (its config diff) but not the postmortem: the gap says
    # what she read and what would decide it, never that no config diff exists.
    assert "rollback or controlled comparison, config diff" not in text, text
    assert "the change records read (doc:cicd-release-2026.07.23.1) say what changed" in text
    assert "a record of how it did would decide between the candidate causes" in text
    assert not any(s.startswith("Mechanism:") for s in _statements(doc))


def test_an_error_older_than_the_incidents_episode_is_labelled(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    flags = ["--subject", "acme/user:alice", "--as-of", "2026-07-23T10:10:00Z", *LONG]
    doc = investigate_json(invoke, "checkout errors 5xx whats going on", *flags)
    statements = _statements(doc)
    old = [s for s in statements if s.startswith("PAY-1002 first seen")]
    assert old == [
        "PAY-1002 first seen at 2025-03-01T08:11:00Z (509 d 1 h 51 min 38 s before PAY-4097 "
        "was first seen at 2026-07-23T10:02:38Z: an older error, not of that episode): "
        "svc:payment-api EMITTED err:PAY-1002"
    ], statements
    assert any(s.startswith("PAY-4097 first seen at 2026-07-23T10:02:38Z: ") for s in statements)
    # Asked about by its code, the old error is stated as it is.
    since = investigate_json(
        invoke, "Since when does payment-api emit PAY-1002?", "--subject", "acme/user:alice", *LONG
    )
    assert any(
        s.startswith("PAY-1002 first seen at 2025-03-01T08:11:00Z: ") for s in _statements(since)
    ), _statements(since)


def test_the_errors_before_a_rollout_are_not_an_error_of_years_before(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    # 10:00, during the rollout of release 2026.07.23.1: PAY-4097 has not come yet, and the
    # only error payment-api emitted by then is PAY-1002 of 2025.
    flags = ["--service", "svc:payment-api", "--as-of", "2026-07-23T10:00:00Z", *LONG]
    doc = investigate_json(
        invoke, "What changed before the errors?", "--subject", "acme/user:carol", *flags
    )
    statements = _statements(doc)
    assert not any("before PAY-1002 was first seen" in s for s in statements), statements
    assert not any("PAY-1002 error" in note for note in doc.get("time_notes", [])), doc
    assert (
        "No error first seen after release deploy:release-2026.07.20.2 finished at "
        "2026-07-20T14:00:00Z is known at as_of 2026-07-23T10:00:00Z (2 d 20 h later): PAY-1002, "
        "first seen at 2025-03-01T08:11:00Z, predates it and is no evidence for or against it; "
        "no time correlation can be drawn yet"
    ) in statements
    assert any("the rollout of release release-2026.07.23.1" in s for s in statements)
    assert doc["status"] == "partial"
    # Once PAY-4097 came, "the errors" are it, asked that morning or months later.
    for as_of in ("2026-07-23T10:10:00Z", "2026-12-01T00:00:00Z"):
        later = investigate_json(
            invoke,
            "What changed before the errors?",
            "--subject",
            "acme/user:carol",
            "--service",
            "svc:payment-api",
            "--as-of",
            as_of,
            *LONG,
        )
        assert (
            "Release deploy:release-2026.07.23.1 finished at 2026-07-23T10:02:00Z, 38 s before "
            "PAY-4097 was first seen"
        ) in _statements(later), _statements(later)
