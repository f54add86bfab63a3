"""A change question over a period with no service named lists the releases of every
service the subject may read (h26-changes), through the CLI against a real Neo4j: before,
"What changed in the last hour?" named only the risk-rule change, release 2026.07.23.1 rejected
`low_relevance`. Another tenant's release in the window is never listed (its own module: the
demo graph alone, no June releases past the cap)."""

from __future__ import annotations

import json

from conftest import investigate_json


def _gaps(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [m["description"] for m in doc["missing_evidence"] if m["required"]]


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


def test_a_period_with_no_service_lists_every_readable_release(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # Before: only the risk-rule change, release 2026.07.23.1 (10:02, in the hour) rejected
    # low_relevance and "releases are read for a named service only" a required gap.
    doc = investigate_json(
        invoke,
        "What changed in the last hour?",
        "--subject",
        "acme/user:alice",
        "--as-of",
        "2026-07-23T10:03:00Z",
    )
    hour = "in the period asked, from 2026-07-23T09:03:00Z to 2026-07-23T10:03:00Z"
    assert (
        f"Release deploy:release-2026.07.23.1 finished at 2026-07-23T10:02:00Z, {hour} "
        "('in the last hour')"
    ) in _statements(doc), doc["claims"]
    assert any(s.startswith("Change risk rule publication") for s in _statements(doc))
    # globex's release at 10:01 is another tenant's: never listed nor in the evidence.
    assert "globex" not in json.dumps(doc), doc["claims"]
    assert not [g for g in _gaps(doc) if "releases" in g], doc["missing_evidence"]
    since_march = investigate_json(
        invoke,
        "what changed since March",
        "--subject",
        "acme/user:alice",
        "--as-of",
        "2026-07-23T12:00:00Z",
    )
    releases = {s.split()[1] for s in _statements(since_march) if s.startswith("Release ")}
    assert {
        "deploy:release-2026.07.20.2",
        "deploy:release-2026.07.23.1",
        "deploy:risk-engine-2026.07.22.3",
    } <= releases, since_march["claims"]
    assert "globex" not in json.dumps(since_march)
