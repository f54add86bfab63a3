"""Which moment the plain "then" means, asked with --as-of around the 2026-07-23 payments
incident (real Neo4j, the demo dataset): the rollout going out since 09:55:12, the release
finished at 10:02:00, the first PAY-4097 error at 10:02:38 and, before the rollout, the
release of 2026-07-20; never the PAY-1002 error of 2025-03-01 (first seen before every
release) while a nearer moment is found. The Time line names the moment taken, how far it
lies from as_of when over a day, and the moment passed over, with why.

Before (h28-then), at as_of 09:50, 09:55:12 and 10:00 "then" was the PAY-1002 error of 509
days before, and at 10:02:00-10:02:37 the release was taken with no word of the error.
"""

from __future__ import annotations

import json
from datetime import datetime

import neo4j
import pytest

ASKED = ["--subject", "acme/user:bob", "--service", "svc:payment-api"]
ROLLOUT = "the start of the rollout of release release-2026.07.23.1, 2026-07-23T09:55:12Z"
RELEASE = "the release release-2026.07.23.1, 2026-07-23T10:02:00Z"
PASSED_OVER = (
    "(also found, not taken: the first PAY-1002 error, 2025-03-01T08:11:00Z, first seen before "
    "every release read)"
)
HOLDS = "; the answer holds at that moment (and at as_of)"


def _ask(invoke, question: str, as_of: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    report = invoke("investigate", question, *ASKED, "--as-of", as_of, "--json")
    assert report.code == 0, report
    return json.loads(report.out)  # type: ignore[no-any-return]


def _claims(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


THEN_AT_ROLLOUT = (
    f"'then' is taken as {ROLLOUT} {PASSED_OVER}{HOLDS}. Name the moment in the question, "
    "or give --as-of, to ask about another one"
)


@pytest.mark.parametrize(
    ("question", "notes"),
    [
        ("who owned payment-api then?", [THEN_AT_ROLLOUT]),
        ("which runbook applied then?", [THEN_AT_ROLLOUT]),
        # These read no PAY-1002 error at 10:00 (since h28-future, not through the incident
        # that starts at 10:02:38), so no other moment was found to pass over: no note.
        ("what changed then?", []),
        ("was the release related to the errors then?", []),
    ],
)
def test_then_during_a_rollout_is_its_start(
    demo_graph: neo4j.Driver, cli_env, invoke, question: str, notes: list[str]
) -> None:  # type: ignore[no-untyped-def]
    # At 10:00 the release has been rolling out since 09:55:12; its errors come at 10:02:38.
    doc = _ask(invoke, question, "2026-07-23T10:00:00Z")
    assert doc["time_notes"] == notes, doc["time_notes"]
    # No claim is read at the PAY-1002 error of 2025 (before, the owner and the runbook were).
    old = "the first PAY-1002 error, 2025-03-01T08:11:00Z (the question says 'then')"
    assert not any(old in c for c in _claims(doc)), _claims(doc)
    assert any("rollout of release release-2026.07.23.1" in c for c in _claims(doc)), _claims(doc)


def test_the_owner_and_the_runbook_then_are_read_at_the_rollout_start(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    owner = _ask(invoke, "who owned payment-api then?", "2026-07-23T09:55:12Z")
    assert (
        f"At {ROLLOUT} (the question says 'then') and at as_of, 2026-07-23T09:55:12Z: "
        "team:payments-core OWNS svc:payment-api (valid 2025-01-01T00:00:00Z to "
        "2026-07-24T00:00:00Z)"
    ) in _claims(owner), _claims(owner)
    runbook = _ask(invoke, "which runbook applied then?", "2026-07-23T10:00:00Z")
    assert any(
        c.startswith(
            "Runbook Payment recovery runbook v3 (runbook:payment-recovery@v3) is the version in "
            f"force at {ROLLOUT} (the question says 'then') and at as_of, 2026-07-23T10:00:00Z"
        )
        for c in _claims(runbook)
    ), _claims(runbook)


@pytest.mark.parametrize("as_of", ["2026-07-23T10:02:00Z", "2026-07-23T10:02:30Z"])
def test_then_after_the_release_names_the_error_passed_over(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, as_of: str
) -> None:
    # The release just finished, its errors not yet seen: "then" is the release, as before,
    # and now the Time line says the PAY-1002 error of 2025 was the other moment found.
    doc = _ask(invoke, "who owned payment-api then?", as_of)
    assert doc["time_notes"] == [
        f"'then' is taken as {RELEASE} {PASSED_OVER}{HOLDS}. Name the moment in the question, "
        "or give --as-of, to ask about another one"
    ], doc["time_notes"]
    assert any(c.startswith(f"At {RELEASE} (the question says 'then')") for c in _claims(doc))


@pytest.mark.parametrize(
    ("as_of", "far"),
    [
        ("2026-07-23T10:05:00Z", None),
        ("2026-07-23T10:48:00Z", None),
        ("2026-07-24T10:00:00Z", None),
        ("2026-08-23T10:00:00Z", "30 d 23 h 57 min"),
        ("2027-07-23T10:00:00Z", "364 d 23 h 57 min"),
    ],
)
def test_then_once_the_errors_are_seen_stays_the_first_error(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, as_of: str, far: str | None
) -> None:
    # The release, the first error, the incident and its alert are one episode: "then" is its
    # first error, from the incident to a year later; none of them is named as passed over,
    # and only a far one is said to be far.
    doc = _ask(invoke, "who owned payment-api then?", as_of)
    first = "the first PAY-4097 error, 2026-07-23T10:02:38Z"
    assert any(c.startswith(f"At {first} (the question says 'then')") for c in _claims(doc))
    notes = doc["time_notes"]
    if datetime.fromisoformat(as_of) > datetime.fromisoformat(doc["known_at"]):
        # An as_of after the run's known_at (now) is said first (h31-words), until that day.
        future, *notes = notes
        assert future.startswith(f"as_of {as_of} is after known_at "), future
    if far is None:
        assert notes == [], notes
    else:
        assert notes == [
            f"'then' is taken as {first}, {far} before as_of {as_of}{HOLDS}. Name the moment "
            "in the question, or give --as-of, to ask about another one"
        ], notes


def test_the_first_error_while_a_rollout_goes_out_is_not_an_error_of_a_year_before(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    # The words name the error: no other moment stands in for it. At 10:00, with the release
    # rolling out and its errors not yet seen, the first error is not placed, as at 10:02:30
    # after the release (before h28-then, it was the PAY-1002 error of 509 days before).
    doc = _ask(
        invoke, "who owned payment-api when the first error happened?", "2026-07-23T10:00:00Z"
    )
    assert doc["unresolved_time_words"] == ["when the first error happened"], doc
    assert doc["status"] == "partial", doc["status"]
    assert not any("At the first PAY-1002 error" in c for c in _claims(doc)), _claims(doc)


@pytest.mark.parametrize(
    "question", ["was the release related to the errors then?", "what changed then?"]
)
def test_a_change_asked_then_during_a_rollout_is_that_rollout(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, question: str
) -> None:
    # "Then" is the start of the rollout (09:55:12): the change asked about is that release,
    # not release-2026.07.20.2 of three days before (before h29-then2, the correlation stated
    # that release, "finished at 2026-07-20T14:00:00Z", and "no time correlation" after it).
    doc = _ask(invoke, question, "2026-07-23T10:00:00Z")
    claims = _claims(doc)
    assert not any(c.startswith("Release release-2026.07.20.2") for c in claims), claims
    assert not any("after release deploy:release-2026.07.20.2" in c for c in claims), claims
    # Its finish (10:02:00, after as_of) is never stated.
    assert not any("2026-07-23T10:02:00Z" in c for c in claims), claims
    if "related" in question:
        assert (
            "No first-seen error is known at as_of 2026-07-23T10:00:00Z (4 min 48 s after the "
            "rollout of release deploy:release-2026.07.23.1 started; it had not finished by "
            "then): no time correlation can be drawn yet"
        ) in claims, claims
    assert any("the rollout of release release-2026.07.23.1" in c for c in claims), claims


def test_a_change_asked_then_before_the_rollout_is_the_release_before(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    # At 09:50 "then" is release-2026.07.20.2 (the rollout has not started): that release.
    doc = _ask(invoke, "was the release related to the errors then?", "2026-07-23T09:50:00Z")
    claims = _claims(doc)
    assert any(c.startswith("Release release-2026.07.20.2") for c in claims), claims
    assert not any("release-2026.07.23.1" in c for c in claims), claims
