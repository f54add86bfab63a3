""" "Did the release cause PAY-4097?" asked just before its first error, on a real Neo4j with the
demo dataset (release 2026.07.23.1 finished at 10:02:00, PAY-4097 first seen at 10:02:38):
the release is read and stated, and the error said as not seen yet (docs/investigation.md).

Before (e32-qa finding P), no service was known for PAY-4097 at as_of (its EMITTED record
starts at 10:02:38), so no release was looked up: no claim at all, and a required gap said "no
release/deployment time for the service".
"""

from __future__ import annotations

import json

import pytest

QUESTION = "did the release cause PAY-4097?"
RELEASE = (
    "Release release-2026.07.23.1 (deploy:release-2026.07.23.1) started at "
    "2026-07-23T09:55:12Z and finished at 2026-07-23T10:02:00Z"
)


def _ask(invoke, as_of: str, subject: str = "acme/user:bob") -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("investigate", QUESTION, "--subject", subject, "--as-of", as_of, "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


@pytest.mark.parametrize("as_of", ["2026-07-23T10:02:37Z", "2026-07-23T10:02:00Z"])
def test_the_release_is_read_before_the_first_error(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, as_of: str
) -> None:
    doc = _ask(invoke, as_of)
    texts = _statements(doc)
    assert RELEASE in texts, texts
    assert any(
        t.startswith(f"No first-seen PAY-4097 error is known at as_of {as_of}") for t in texts
    ), texts
    gaps = {g["evidence_type"]: g["description"] for g in doc["missing_evidence"]}
    assert "deployment_time" not in gaps, gaps  # the release was read: never "no release"
    # What was looked up and not seen is said so (h33-release; before: "no first-seen time for
    # the error or incident", "no link between the error/incident and the service", and "the
    # correlation is in time only" where none was drawn).
    assert gaps["error_first_seen"] == (
        f"PAY-4097 not seen by as_of {as_of}: its first sighting on record is after as_of "
        "(PAY-4097 first seen 2026-07-23T10:02:38Z: recorded later, not followed); no time "
        "correlation can be drawn yet: ask at a later --as-of"
    ), gaps
    assert gaps["affected_service"] == (
        f"no service is recorded as emitting PAY-4097 by as_of {as_of} (PAY-4097 was not seen "
        "by then), so none is linked to its errors yet"
    ), gaps
    assert gaps["mechanism"] == (
        f"no mechanism is weighed: no correlation is drawn, PAY-4097 not being seen by as_of "
        f"{as_of}"
    ), gaps
    assert doc["status"] == "partial" and doc["verdict"] == "uncertain"
    assert any("svc:payment-api is read as the one asked about" in n for n in doc["search_notes"])


def test_after_the_first_error_the_code_gives_the_service(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # Once PAY-4097 is seen, its own service is read (no note), and the correlation drawn.
    doc = _ask(invoke, "2026-07-23T10:30:00Z")
    texts = _statements(doc)
    assert any(t.startswith("PAY-4097 was first seen 38 s after release") for t in texts), texts
    assert not any("is read as the one asked about" in n for n in doc["search_notes"])


@pytest.mark.parametrize("as_of", ["2026-07-23T10:01:00Z", "2026-07-23T10:02:00Z"])
def test_no_error_yet_draws_no_correlation_and_the_mechanism_gap_says_so(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, as_of: str
) -> None:
    # Naming no error code: before, the claims said "no time correlation can be drawn yet"
    # while the mechanism gap said "the correlation is in time only" (one not drawn).
    result = invoke(
        "investigate", "did the release cause it?", "--subject", "acme/user:bob",
        "--as-of", as_of, "--json",
    )  # fmt: skip
    assert result.code == 0, result
    doc = json.loads(result.out)
    assert any("no time correlation can be drawn yet" in s for s in _statements(doc)), doc
    [gap] = [g for g in doc["missing_evidence"] if g["evidence_type"] == "mechanism"]
    assert "in time only" not in gap["description"], gap
    assert gap["description"].startswith("no mechanism is weighed: no correlation is drawn"), gap
    assert doc["verdict"] == "uncertain"
