"""Competing-cause reads cut at their row cap, through the CLI against a real Neo4j
(h26-causecaps item 1), and a period's change question naming no service (item 2).

The demo's PAY-4097 was first seen at 2026-07-23T10:02:38Z. This module adds, in the 24 h
before it, 99 releases of payment-api bob may read (with the demo's release-2026.07.23.1,
100: the `deployments_in_window` cap) and 20 more only alice may read (acl pii); 100 change
events in the 30 minutes before it (with the demo's risk rule change, 101: past the
`change_events_in_window` cap); and 11 rollouts of payment-api under way then (past the
`rollouts_under_way` cap of 10). Before, a correlation, root-cause or "what changed before
the errors" answer listed the candidates read as if they were all, and the correlation's
verdict stood; now each cut read is a required gap and no verdict is drawn between them.
Bob, who may read exactly the cap's 100 releases, gets no release gap: hidden rows are
never counted."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import neo4j
import pytest
from conftest import change_line, ingest_text, investigate_json, release_line

VISIBLE = 99  # with the demo's release-2026.07.23.1: bob reads exactly the cap's 100
HIDDEN_FROM_BOB = 20
CHANGES = 100  # with the demo's risk rule change: 101 in the 30 min before the error
ROLLOUTS = 11
LOOKBACK_START = datetime(2026, 7, 22, 10, 10, tzinfo=UTC)
AS_OF = ["--as-of", "2026-07-23T11:00:00Z", "--deadline-seconds", "600"]
ALICE = ["--subject", "acme/user:alice", *AS_OF]
BOB = ["--subject", "acme/user:bob", *AS_OF]
CORRELATION = "Did release-2026.07.23.1 cause the PAY-4097 errors on payment-api?"
ROOT_CAUSE = "What caused the PAY-4097 errors on payment-api?"
BEFORE = "What changed on payment-api before the PAY-4097 errors?"
RELEASES_CUT = (
    "more than 100 releases of svc:payment-api in the 24 h before the first error "
    "(2026-07-22T10:02:38Z to 2026-07-23T10:02:38Z)"
)
CHANGES_CUT = (
    "more than 100 change events in the 30 min before the first error "
    "(2026-07-23T09:32:38Z to 2026-07-23T10:02:38Z)"
)
ROLLOUTS_CUT = "more than 10 releases of svc:payment-api rolling out at the first error"


def _release(n: int, acl: str) -> str:
    # Every 11 minutes from 2026-07-22T10:10Z (the 119th at 2026-07-23T07:48Z).
    at = (LOOKBACK_START + timedelta(minutes=11 * n)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return release_line("lookback", n, at, acl)


def _change(n: int) -> str:
    return change_line("lookback", n, f"2026-07-23T09:{33 + n // 4:02d}:{(n % 4) * 10 + 5:02d}Z")


def _rollout(n: int) -> str:
    started, finished = f"2026-07-23T09:{40 + n:02d}:00Z", f"2026-07-23T10:{20 + n:02d}:00Z"
    return release_line("rolling", n, finished, started=started)


@pytest.fixture(scope="module")
def crowded_window(demo_graph: neo4j.Driver) -> neo4j.Driver:
    return demo_graph


@pytest.fixture()
def crowded(crowded_window, cli_env, invoke, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The releases, change events and rollouts above, recorded now (a second ingest of
    the same bundle changes nothing)."""
    bundle = "tenant: acme\nnodes:\n"
    bundle += "".join(_release(n, "internal") for n in range(VISIBLE))
    bundle += "".join(_release(VISIBLE + n, "pii") for n in range(HIDDEN_FROM_BOB))
    bundle += "".join(_change(n) for n in range(CHANGES))
    bundle += "".join(_rollout(n) for n in range(ROLLOUTS))
    ingest_text(invoke, tmp_path / "crowded.yaml", bundle)


def _gaps(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [m["description"] for m in doc["missing_evidence"] if m["required"]]


def _cut(doc: dict, start: str) -> list[str]:  # type: ignore[type-arg]
    return [g for g in _gaps(doc) if g.startswith(start)]


def test_a_correlation_over_cut_reads_gives_no_verdict(crowded, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = investigate_json(invoke, CORRELATION, *ALICE)
    assert _cut(doc, RELEASES_CUT) == [
        RELEASES_CUT + ": one read holds 100, the rest were not read, so the candidate causes "
        "listed are not all of them; no verdict between them"
    ], doc["missing_evidence"]
    assert _cut(doc, CHANGES_CUT), doc["missing_evidence"]
    assert _cut(doc, ROLLOUTS_CUT), doc["missing_evidence"]
    # Before: `likely` (the release finished 38 s before the first error), `complete`.
    assert doc["verdict"] == "uncertain", doc["verdict"]
    assert doc["status"] == "partial"


@pytest.mark.parametrize("question", [ROOT_CAUSE, BEFORE])
def test_a_cause_list_over_cut_reads_says_so(crowded, invoke, question: str) -> None:  # type: ignore[no-untyped-def]
    doc = investigate_json(invoke, question, *ALICE)
    assert _cut(doc, RELEASES_CUT), doc["missing_evidence"]
    assert _cut(doc, CHANGES_CUT), doc["missing_evidence"]
    assert doc["status"] == "partial"


def test_rows_the_subject_may_not_read_are_not_counted(crowded, invoke) -> None:  # type: ignore[no-untyped-def]
    # Bob reads exactly the cap's 100 releases: the 20 he may not read make no "more than".
    doc = investigate_json(invoke, CORRELATION, *BOB)
    assert not [g for g in _gaps(doc) if "releases of svc:payment-api in the 24 h" in g], doc[
        "missing_evidence"
    ]
    assert not any("120" in g or "pii" in g for g in _gaps(doc)), doc["missing_evidence"]
    # The change events he reads are past the cap all the same.
    assert _cut(doc, CHANGES_CUT), doc["missing_evidence"]


def test_a_period_read_needs_no_first_error(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = investigate_json(
        invoke,
        "what changed in the last 24 hours?",
        "--subject",
        "acme/user:bob",
        "--as-of",
        "2026-07-23T12:00:00Z",
    )
    # Before: "the question names no service ... so no errors were looked for", required.
    assert not [m for m in doc["missing_evidence"] if m["evidence_type"] == "error_first_seen"], (
        doc["missing_evidence"]
    )
    # Kept where the period was not read: "before the errors" names no errors to read.
    doc = investigate_json(
        invoke, "What changed before the errors?", "--subject", "acme/user:bob", *AS_OF
    )
    assert any(g.startswith("the question names no service") for g in _gaps(doc)), doc[
        "missing_evidence"
    ]


def test_a_cut_read_of_the_earliest_releases_is_said(crowded, invoke) -> None:  # type: ignore[no-untyped-def]
    # 132 releases of payment-api by as_of for alice: "the first release" is the earliest of
    # the 100 read, and the answer says so.
    doc = investigate_json(invoke, "What changed on payment-api before the first release?", *ALICE)
    assert (
        "more than 100 releases of svc:payment-api by 2026-07-23T11:00:00Z: one read holds "
        "100, the rest were not read, so the first release is the earliest of those read, not "
        "certainly the first recorded"
    ) in _gaps(doc), doc["missing_evidence"]
