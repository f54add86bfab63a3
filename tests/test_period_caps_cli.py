"""Reads over a long period that hit a template's row cap, through the CLI against a real
Neo4j (h26-periods item 1), a period's releases with no service named (item 2), and the
`runbook_followed` gap beside a rollback on record (item 3).

Before, "what changed on payment-api in June 2026?" over 120 releases listed the 100 the
`deployments_in_window` read returned as if complete; now a required gap says "more than
100 releases ... narrow the period". A subject who may read only 100 of them gets no such
gap: the cap counts only rows the subject may read (LIMIT cap + 1 in Cypher)."""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import change_line, ingest_text, investigate_json, release_line

VISIBLE = 100  # the read's row cap: bob reads exactly these, alice 20 more (acl pii)
HIDDEN_FROM_BOB = 20
JUNE = "what changed on payment-api in June 2026?"
AS_OF = ["--as-of", "2026-07-01T00:00:00Z", "--deadline-seconds", "600"]


def _release(n: int, acl: str) -> str:
    return release_line("june", n, f"2026-06-{1 + n // 8:02d}T{(n % 8) * 3:02d}:00:00Z", acl)


def _change(n: int) -> str:
    return change_line("june", n, f"2026-06-{1 + n // 8:02d}T{(n % 8) * 3 + 1:02d}:00:00Z")


@pytest.fixture(scope="module")
def june_graph(demo_graph: neo4j.Driver) -> neo4j.Driver:
    return demo_graph


@pytest.fixture()
def june_releases(june_graph, cli_env, invoke, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """120 June releases of payment-api (20 only alice may read) and 101 June change
    events, recorded now (a second ingest of the same bundle changes nothing)."""
    bundle = "tenant: acme\nnodes:\n"
    bundle += "".join(_release(n, "internal") for n in range(VISIBLE))
    bundle += "".join(_release(VISIBLE + n, "pii") for n in range(HIDDEN_FROM_BOB))
    bundle += "".join(_change(n) for n in range(VISIBLE + 1))
    ingest_text(invoke, tmp_path / "june.yaml", bundle)


def _gaps(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [m["description"] for m in doc["missing_evidence"] if m["required"]]


def test_releases_past_the_cap_are_said_cut(june_releases, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = investigate_json(invoke, JUNE, "--subject", "acme/user:alice", *AS_OF)
    cut = [g for g in _gaps(doc) if g.startswith("more than 100 releases of svc:payment-api")]
    assert cut == [
        "more than 100 releases of svc:payment-api from 2026-06-01T00:00:00Z to "
        "2026-06-30T23:59:59Z: one read holds 100, the rest were not read, so the list is "
        "not all of them; narrow the period (e.g. 'in the last 24 hours', 'between A and "
        "B') or ask for the latest releases of svc:payment-api"
    ], doc["missing_evidence"]
    assert doc["status"] == "partial"


def test_a_release_question_over_a_period_reads_the_period(june_releases, invoke) -> None:  # type: ignore[no-untyped-def]
    # Before: the 10 latest releases by as_of (latest_deployments), June's 120 unseen, no gap.
    doc = investigate_json(
        invoke,
        "which releases of payment-api in June 2026?",
        "--subject",
        "acme/user:alice",
        *AS_OF,
    )
    listed = [c for c in doc["claims"] if c["statement"].startswith("Release june-")]
    assert len(listed) > 10, doc["claims"]
    assert any(g.startswith("more than 100 releases of svc:payment-api") for g in _gaps(doc))
    assert doc["status"] == "partial"
    july = investigate_json(
        invoke,
        "which releases of payment-api in July 2026?",
        "--subject",
        "acme/user:alice",
        "--as-of",
        "2026-08-05T00:00:00Z",
    )
    statements = [c["statement"] for c in july["claims"]]
    assert not [s for s in statements if "june-" in s], statements
    assert any("deploy:release-2026.07.23.1" in s for s in statements), statements


def test_change_events_past_the_cap_are_said_cut(june_releases, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = investigate_json(invoke, JUNE, "--subject", "acme/user:bob", *AS_OF)
    assert any(
        g.startswith("more than 100 change events from 2026-06-01T00:00:00Z") for g in _gaps(doc)
    ), doc["missing_evidence"]


def test_rows_the_subject_may_not_read_are_not_counted(june_releases, invoke) -> None:  # type: ignore[no-untyped-def]
    # Bob reads exactly the cap's 100 releases: the 20 he may not read make no "more than".
    doc = investigate_json(invoke, JUNE, "--subject", "acme/user:bob", *AS_OF)
    assert not [g for g in _gaps(doc) if "releases of svc:payment-api" in g], doc[
        "missing_evidence"
    ]
    assert not any("120" in g or "pii" in g for g in _gaps(doc)), doc["missing_evidence"]


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


def test_a_release_the_subject_may_not_read_is_never_listed(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, tmp_path: Path
) -> None:
    ingest_text(
        invoke,
        tmp_path / "may.yaml",
        "tenant: acme\nnodes:\n"
        "  - {id: deploy:may-secret, label: Deployment, name: may-secret, acl: [pii], "
        'source_id: src:cicd, locator: "cicd/may/secret", valid_from: "2026-05-10T10:00:00Z", '
        'props: {service: svc:payment-api, finished_at: "2026-05-10T10:00:00Z"}}\n',
    )
    may = ["what changed in May 2026?", "--as-of", "2026-07-01T00:00:00Z"]
    alice = investigate_json(invoke, may[0], "--subject", "acme/user:alice", *may[1:])
    assert any(s.startswith("Release deploy:may-secret ") for s in _statements(alice))
    bob = investigate_json(invoke, may[0], "--subject", "acme/user:bob", *may[1:])
    assert "may-secret" not in json.dumps(bob), bob["claims"]


def test_a_period_with_no_service_says_its_releases_cut_counting_readable_ones(  # type: ignore[no-untyped-def]
    june_releases, invoke
) -> None:
    june = "what changed in June 2026?"
    alice = investigate_json(invoke, june, "--subject", "acme/user:alice", *AS_OF)
    assert (
        "more than 100 releases from 2026-06-01T00:00:00Z to 2026-06-30T23:59:59Z: one read "
        "holds 100, the rest were not read, so the list is not all of them; narrow the period "
        "(e.g. 'in the last 24 hours', 'between A and B') or name the service ('what changed "
        "on <name> ...')"
    ) in _gaps(alice), alice["missing_evidence"]
    # Bob may read exactly 100 of the 120: the 20 pii ones make no "more than".
    bob = investigate_json(invoke, june, "--subject", "acme/user:bob", *AS_OF)
    assert not [g for g in _gaps(bob) if "releases" in g], bob["missing_evidence"]
    hidden = {f"deploy:june-{VISIBLE + n}" for n in range(HIDDEN_FROM_BOB)}
    assert not [s for s in _statements(bob) if s.split()[1] in hidden], bob["claims"]


def test_runbook_followed_gap_says_what_is_still_unknown(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = investigate_json(
        invoke,
        "was the runbook followed",
        "--service",
        "svc:payment-api",
        "--subject",
        "acme/user:bob",
        "--as-of",
        "2026-07-23T11:00:00Z",
    )
    [gap] = [
        m["description"]
        for m in doc["missing_evidence"]
        if m["evidence_type"] == "runbook_followed"
    ]
    assert gap.startswith("whether the runbook's other steps were taken is not recorded"), gap
    assert "no record of what the responders did" not in gap
