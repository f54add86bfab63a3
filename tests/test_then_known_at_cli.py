"""Where "then" and "during <incident>" are placed when the question or the run bounds what is
known (real Neo4j, the demo dataset): with `--known-at` just after the release was recorded,
"then" is that release, as with `--as-of` at that moment; an incident named by its id places
"during" at its start, and an id the subject cannot see answers exactly as one that does not
exist."""

from __future__ import annotations

import json
import re

import neo4j
import pytest

BOB = ["--subject", "acme/user:bob"]
THEN = "Who owned payment-api then?"
RELEASE_CLAIM = (
    "At the release release-2026.07.23.1, 2026-07-23T10:02:00Z (the question says 'then')"
)
OWNER = "team:payments-core OWNS svc:payment-api"


def _claims(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


def test_then_is_the_release_known_at_known_at(demo_graph: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # At 10:02:10 the release (10:02:00) is recorded, the first PAY-4097 error not yet: "then"
    # is the release whether the moment is given as --as-of or as --known-at (before, a later
    # as_of made it the PAY-1002 error of 2025-03-01).
    by_as_of = json.loads(
        invoke("investigate", THEN, *BOB, "--as-of", "2026-07-23T10:02:10Z", "--json").out
    )
    assert any(c.startswith(RELEASE_CLAIM) and OWNER in c for c in _claims(by_as_of)), _claims(
        by_as_of
    )
    report = invoke("investigate", THEN, *BOB, "--as-of", "2026-07-25T00:00:00Z",
                    "--known-at", "2026-07-23T10:02:10Z", "--json")  # fmt: skip
    assert report.code == 0, report
    doc = json.loads(report.out)
    assert any(c.startswith(RELEASE_CLAIM) and OWNER in c for c in _claims(doc)), _claims(doc)
    assert not any("At the first PAY-1002 error" in c for c in _claims(doc)), _claims(doc)
    assert "deploy:release-2026.07.23.1" in {ev["element_id"] for ev in doc["evidence"]}
    assert doc["time_notes"][0].startswith(
        "'then' is taken as the release release-2026.07.23.1, 2026-07-23T10:02:00Z, 1 d 13 h "
        "58 min before as_of 2026-07-25T00:00:00Z"
    ), doc["time_notes"]


def test_a_nearer_release_is_then_and_the_old_error_is_named(
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:  # type: ignore[no-untyped-def]
    # Before the rollout of 09:55: the latest error by as_of is the PAY-1002 error of 2025,
    # first seen before every release (no incident of its own). The release of 2026-07-20 is
    # "then" (before h28-then, the error of 509 days before was); the Time line says how old
    # it is and names the error passed over, with why.
    report = invoke("investigate", THEN, *BOB, "--as-of", "2026-07-23T09:50:00Z")
    assert report.code == 0, report
    assert (
        "Time       'then' is taken as the release release-2026.07.20.2, 2026-07-20T14:00:00Z, "
        "2 d 19 h 50 min before as_of 2026-07-23T09:50:00Z (also found, not taken: the first "
        "PAY-1002 error, 2025-03-01T08:11:00Z, first seen before every release read); the "
        "answer holds at that moment"
    ) in report.out, report.out
    assert "At the first PAY-1002 error" not in report.out, report.out


def test_during_an_incident_named_by_its_id(demo_graph: neo4j.Driver, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    report = invoke("investigate", "Who owned payment-api during inc:2026-07-23-payments?", *BOB,
                    "--as-of", "2026-07-25T00:00:00Z", "--json")  # fmt: skip
    assert report.code == 0, report
    doc = json.loads(report.out)
    assert any(
        c.startswith(
            "At the start of incident Payments authorization failures 2026-07-23, "
            "2026-07-23T10:02:38Z (the question says 'during inc:2026-07-23-payments'): "
            "team:payments-core OWNS svc:payment-api"
        )
        for c in _claims(doc)
    ), _claims(doc)
    assert "inc:2026-07-23-payments" in {ev["element_id"] for ev in doc["evidence"]}


@pytest.mark.parametrize(
    ("side", "label", "at"),
    [
        ("before", "1 s before the start of incident", "2026-07-23T10:02:37Z"),
        ("after", "the resolution of incident", "2026-07-23T10:48:00Z"),
    ],
)
def test_before_and_after_an_incident_named_by_its_id(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, side: str, label: str, at: str
) -> None:
    # As "before/after the incident" (before, the id made these no time words: at as_of).
    word = f"{side} inc:2026-07-23-payments"
    report = invoke("investigate", f"Who owned payment-api {word}?", *BOB,
                    "--as-of", "2026-07-25T00:00:00Z", "--json")  # fmt: skip
    assert report.code == 0, report
    doc = json.loads(report.out)
    assert doc["status"] == "complete", doc["unresolved_time_words"]
    assert any(
        c.startswith(
            f"At {label} Payments authorization failures 2026-07-23, {at} "
            f"(the question says {word!r}): {OWNER}"
        )
        for c in _claims(doc)
    ), _claims(doc)


def _normalised(out: str, word: str) -> str:
    """A report with its run/pack ids, hashes, known_at and the id asked about blanked."""
    out = out.replace(word, "<ID>")
    out = re.sub(r"(run|pack:run)-[0-9a-f]{32}", "<RUN>", out)
    out = re.sub(r"sha256:[0-9a-f]{64}", "<HASH>", out)
    return re.sub(r"known at [0-9T:.Z-]+", "known at <NOW>", out)


def test_an_incident_id_of_another_tenant_is_as_unknown_as_none(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    outs = []
    for word in ("inc:2026-07-23-payments", "inc:2026-07-24-payments"):
        report = invoke("investigate", f"Who owned payment-api during {word}?", "--subject",
                        "globex/user:mallory", "--as-of", "2026-07-25T00:00:00Z")  # fmt: skip
        assert report.code == 0, report
        assert "At the start of incident" not in report.out, report.out
        assert f"Time       not resolved: 'during {word}'; the answer is at as_of" in report.out
        outs.append(_normalised(report.out, word))
    assert outs[0] == outs[1]


@pytest.mark.parametrize("side", ["before", "after"])
def test_before_or_after_an_unseen_incident_id_is_not_resolved(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, side: str
) -> None:
    # Another tenant's id answers exactly as one that does not exist: `partial`, not resolved.
    outs = []
    for word in ("inc:2026-07-23-payments", "inc:2026-07-24-payments"):
        report = invoke("investigate", f"Who owned payment-api {side} {word}?", "--subject",
                        "globex/user:mallory", "--as-of", "2026-07-25T00:00:00Z")  # fmt: skip
        assert report.code == 0, report
        assert f"Time       not resolved: '{side} {word}'; the answer is at as_of" in report.out
        assert "partial" in report.out, report.out
        outs.append(_normalised(report.out, word))
    assert outs[0] == outs[1]


def test_the_alert_firing_taken_as_the_moment_is_evidence(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    # "when the alert fired": its FIRED_ON record is evidence of the answer (before, it was
    # read to place the moment, then judged low_relevance and left out), and it replays.
    asked = ["investigate", "Who owned payment-api when the alert fired?", *BOB,
             "--as-of", "2026-07-25T00:00:00Z", "--known-at", "2026-07-24T00:00:00Z"]  # fmt: skip
    doc = json.loads(invoke(*asked, "--json").out)
    assert any(
        c.startswith("At the PaymentApiHighErrorRate alert, 2026-07-23T10:03:10Z")
        for c in _claims(doc)
    ), _claims(doc)
    fired = [ev for ev in doc["evidence"] if ev["element_id"].startswith("FIRED_ON|alert:")]
    assert [ev["element_id"].split("|")[1:3] for ev in fired] == [
        ["alert:PaymentApiHighErrorRate", "svc:payment-api"]
    ], doc["evidence"]
    replay = invoke("replay", doc["run_id"], "--subject", "acme/user:bob")
    assert replay.code == 0, replay
    assert "pack_hash_match: true" in replay.out, replay.out
