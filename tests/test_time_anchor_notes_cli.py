"""What the answer says about the moments a question's time words are taken as (real Neo4j,
the demo dataset plus a later incident of payment-api): a "then" far from as_of is said
plainly, a Chinese day without its year is placed, "the PAY-4097 incident" is that incident
(an id nobody sees is no incident at all), and an incident's affected services are a
claim."""

from __future__ import annotations

import json
import re
from pathlib import Path

import neo4j
import pytest

from graph_schema.bundle import load_bundle
from graph_schema.writer import ingest_bundle

BOB = ["--service", "svc:payment-api", "--subject", "acme/user:bob"]
AS_OF = "2026-12-01T00:00:00Z"

# A later incident of payment-api, with no error code of its own: "the incident" is now it,
# "the PAY-4097 incident" still the 2026-07-23 one.
LATER_INCIDENT = """
tenant: acme
nodes:
  - {id: inc:2026-09-10-ledger-lag, label: Incident, name: "Ledger lag 2026-09-10",
     acl: [internal, incident], source_id: src:incident-reports,
     source_version: "incidents@2026-09-10",
     locator: "incidents/2026-09-10-ledger-lag#inc:2026-09-10-ledger-lag",
     valid_from: "2026-09-10T08:00:00Z", valid_to: "2026-09-10T09:00:00Z",
     recorded_at: "2026-09-10T12:00:00Z",
     props: {severity: SEV3, started_at: "2026-09-10T08:00:00Z",
             resolved_at: "2026-09-10T09:00:00Z", summary: "payment-api ledger writes lagged"}}
edges:
  - {type: AFFECTED_BY, from: svc:payment-api, to: inc:2026-09-10-ledger-lag,
     acl: [internal, incident], source_id: src:incident-reports,
     source_version: "incidents@2026-09-10",
     locator: "incidents/2026-09-10-ledger-lag#AFFECTED_BY|svc:payment-api|inc:ledger-lag",
     valid_from: "2026-09-10T08:00:00Z", valid_to: "2026-09-10T09:00:00Z",
     recorded_at: "2026-09-10T12:00:00Z"}
"""


@pytest.fixture(scope="module")
def later_incident(demo_graph: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = tmp_path_factory.mktemp("later-incident")
    (folder / "40-acme-later.yaml").write_text(LATER_INCIDENT, encoding="utf-8")
    ingest_bundle(demo_graph, load_bundle(Path(folder)))


def test_a_then_far_from_as_of_is_said_plainly(later_incident, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # The latest incident by as_of is the ledger lag of 2026-09-10 (as "the incident" is):
    # "then" is its start, and the PAY-4097 episode is named as found and not taken, its
    # incident too (before h28-then, "then" was the first PAY-4097 error, 130 d before, and
    # the later incident was not mentioned; before h29-then2, the incident of 2026-07-23 was
    # not named, only the latest incident's start was looked at).
    note = (
        "'then' is taken as the start of incident Ledger lag 2026-09-10, 2026-09-10T08:00:00Z, "
        "81 d 16 h before as_of 2026-12-01T00:00:00Z (also found, not taken: the first PAY-4097 "
        "error, 2026-07-23T10:02:38Z, earlier; the release release-2026.07.23.1, "
        "2026-07-23T10:02:00Z, earlier; the start of incident Payments authorization failures "
        "2026-07-23, 2026-07-23T10:02:38Z, earlier); the answer holds at that moment (and at "
        "as_of)"
    )
    report = invoke("investigate", "Who owned payment-api then?", *BOB, "--as-of", AS_OF)
    assert report.code == 0, report
    assert f"Time       {note}" in report.out, report.out
    doc = json.loads(
        invoke("investigate", "Who owned payment-api then?", *BOB, "--as-of", AS_OF, "--json").out
    )
    assert [n[: len(note)] for n in doc["time_notes"]] == [note], doc["time_notes"]
    # The PAY-4097 error was read only to place "then" and not taken: no claim states it
    # (before h29-then2, "PAY-4097 first seen at 2026-07-23T10:02:38Z" was said beside it).
    assert not any("PAY-4097" in c["statement"] for c in doc["claims"]), doc["claims"]
    # Within a day of as_of: the claims say it, no note.
    near = json.loads(
        invoke("investigate", "Who owned payment-api then?", *BOB,
               "--as-of", "2026-07-23T11:00:00Z", "--json").out
    )  # fmt: skip
    assert near["time_notes"] == []
    assert any("At the first PAY-4097 error" in c["statement"] for c in near["claims"])


@pytest.mark.parametrize(
    "question", ["7月23日谁负责payment-api?", "Who owned payment-api on 7月23日?"]
)
def test_a_chinese_day_without_its_year_takes_the_year_of_as_of(  # type: ignore[no-untyped-def]
    later_incident, cli_env, invoke, question: str
) -> None:
    doc = json.loads(invoke("investigate", question, *BOB, "--as-of", AS_OF, "--json").out)
    assert doc["unresolved_time_words"] == [], doc["unresolved_time_words"]
    assert doc["status"] == "complete"
    texts = " ".join(c["statement"] for c in doc["claims"])
    assert (
        "At the time named in the question, 2026-07-23T00:00:00Z (explicit, a day: its start, "
        "00:00 UTC; no year given: the year of as_of, 2026): team:payments-core OWNS "
        "svc:payment-api"
    ) in texts, texts


def test_the_incident_of_an_error_code_is_that_incident(later_incident, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    report = invoke("investigate", "Who owned payment-api during the PAY-4097 incident?", *BOB,
                    "--as-of", AS_OF)  # fmt: skip
    assert report.code == 0, report
    assert (
        "At the start of incident Payments authorization failures 2026-07-23, "
        "2026-07-23T10:02:38Z (the question says 'during the PAY-4097 incident')"
    ) in report.out, report.out
    assert "At the start of incident Ledger lag" not in report.out
    # Unnamed, "the incident" is still the latest one.
    latest = invoke("investigate", "Who owned payment-api during the incident?", *BOB,
                    "--as-of", AS_OF)  # fmt: skip
    assert "At the start of incident Ledger lag 2026-09-10" in latest.out, latest.out


def _normalised(out: str, word: str) -> str:
    """A report with its run/pack ids, hashes, known_at and the id asked about blanked."""
    out = out.replace(word, "<ID>")
    out = re.sub(r"(run|pack:run)-[0-9a-f]{32}", "<RUN>", out)
    out = re.sub(r"sha256:[0-9a-f]{64}", "<HASH>", out)
    return re.sub(r"known at [0-9T:.Z-]+", "known at <NOW>", out)


@pytest.mark.parametrize(
    ("subject", "seen", "unknown"),
    [
        # an error code no incident of bob's has, and one that exists nowhere
        ("acme/user:bob", "PAY-1002", "PAY-9999"),
        # another tenant's incident and error code are as unknown to mallory as a made-up id
        ("globex/user:mallory", "inc:2026-07-23-payments", "inc:2026-07-24-payments"),
    ],
)
def test_an_incident_id_nobody_sees_is_not_the_latest_incident(  # type: ignore[no-untyped-def]
    later_incident, cli_env, invoke, subject: str, seen: str, unknown: str
) -> None:
    outs = []
    for word in (seen, unknown):
        question = f"Who owned payment-api during the {word} incident?"
        report = invoke("investigate", question, "--service", "svc:payment-api",
                        "--subject", subject, "--as-of", AS_OF)  # fmt: skip
        assert report.code == 0, report
        assert "At the start of incident" not in report.out, report.out
        assert (
            f"Time       not resolved: 'during the {word} incident'; the answer is at as_of"
        ) in report.out, report.out
        assert "Status     partial" in report.out
        outs.append(report.out)
    if subject.startswith("globex"):
        # Nothing in the answer tells an id of another tenant from one that does not exist.
        assert _normalised(outs[0], seen) == _normalised(outs[1], unknown)


def test_what_an_incident_affected_is_a_claim(later_incident, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(
        invoke("investigate", "What did the payments incident affect?", "--subject",
               "acme/user:bob", "--as-of", "2026-07-24T00:00:00Z", "--json").out
    )  # fmt: skip
    affected = {
        ev["element_id"]: ev["evidence_id"]
        for ev in doc["evidence"]
        if "affected_service" in ev["evidence_types"]
    }
    ids = sorted(
        affected[k]
        for k in (
            "AFFECTED_BY|svc:checkout|inc:2026-07-23-payments",
            "AFFECTED_BY|svc:payment-api|inc:2026-07-23-payments",
        )
    )
    claims = [c for c in doc["claims"] if "affected" in c["statement"]]
    named = [
        c
        for c in claims
        if c["statement"].startswith(
            "Services affected by incident inc:2026-07-23-payments: svc:checkout (valid "
        )
    ]
    assert len(named) == 1, claims
    assert (
        "svc:payment-api (valid 2026-07-23T10:02:38Z to 2026-07-23T10:48:00Z)"
        in (named[0]["statement"])
    )
    assert named[0]["evidence_ids"] == ids


def test_the_release_taken_as_then_is_evidence_and_replays(later_incident, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # At 10:02:37 "then" is the release of 10:02:00: its record was low_relevance, so the
    # answer relied on a moment nothing in its evidence showed.
    asked = ["investigate", "Who owned payment-api then?", *BOB,
             "--as-of", "2026-07-23T10:02:37Z", "--known-at", "2026-07-23T10:03:00Z"]  # fmt: skip
    doc = json.loads(invoke(*asked, "--json").out)
    assert any(
        c["statement"].startswith("At the release release-2026.07.23.1, 2026-07-23T10:02:00Z")
        for c in doc["claims"]
    ), doc["claims"]
    evidence = {ev["element_id"]: ev["evidence_id"] for ev in doc["evidence"]}
    assert "deploy:release-2026.07.23.1" in evidence, sorted(evidence)
    # The same answer again (deterministic), and its replay re-executes it identically.
    again = json.loads(invoke(*asked, "--json").out)
    assert [ev["evidence_id"] for ev in again["evidence"]] == [
        ev["evidence_id"] for ev in doc["evidence"]
    ]
    replay = invoke("replay", doc["run_id"], "--subject", "acme/user:bob")
    assert replay.code == 0, replay
    assert "pack_hash_match: true" in replay.out, replay.out
    trace = invoke("trace", doc["run_id"], "--subject", "acme/user:bob")
    assert f"evidence {evidence['deploy:release-2026.07.23.1']} from src:cicd" in trace.out
