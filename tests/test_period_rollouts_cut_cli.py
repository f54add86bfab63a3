"""A period's releases rolling out at its end, through the CLI against a real Neo4j
(h28-crowd2 item 4). "What changed on payment-api in the last 24 hours?" reads, beside the
period's releases and change events, the releases rolling out at its end
(`rollouts_under_way`, 10 rows at most): one cut there is a required gap, as a cut window
read is. Before, the 11 releases rolling out at 12:00 gave 10 "under way" claims, no gap and
a `complete` answer."""

from __future__ import annotations

from pathlib import Path

import neo4j
import pytest
from conftest import ingest_text, investigate_json, release_line

ROLLING = 11
ASK = [
    "--subject",
    "acme/user:alice",
    "--as-of",
    "2026-07-24T12:00:00Z",
    "--deadline-seconds",
    "600",
    "--budget-tokens",
    "20000",
]
QUESTION = "what changed on payment-api in the last 24 hours?"


@pytest.fixture(scope="module")
def rolling_graph(demo_graph: neo4j.Driver) -> neo4j.Driver:
    return demo_graph


@pytest.fixture()
def rolling(rolling_graph, cli_env, invoke, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """11 releases of payment-api started 10:00 to 10:10 on 2026-07-24, finished at 18:00."""
    bundle = "tenant: acme\nnodes:\n" + "".join(
        release_line("roll", n, "2026-07-24T18:00:00Z", started=f"2026-07-24T10:{n:02d}:00Z")
        for n in range(ROLLING)
    )
    ingest_text(invoke, tmp_path / "rolling.yaml", bundle)


def _gaps(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [m["description"] for m in doc["missing_evidence"] if m["required"]]


def test_a_cut_rollout_read_of_a_period_is_said(rolling, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = investigate_json(invoke, QUESTION, *ASK)
    under_way = [c["statement"] for c in doc["claims"] if c["statement"].endswith("under way")]
    assert len(under_way) == 10, doc["claims"]
    # Before: no gap, `complete`.
    assert (
        "more than 10 releases of svc:payment-api rolling out at the end of the period "
        "(2026-07-24T12:00:00Z): one read holds 10, the rest were not read, so the releases "
        "said under way are not all of them; narrow the period or ask at an earlier time"
    ) in _gaps(doc), doc["missing_evidence"]
    assert doc["status"] == "partial"
