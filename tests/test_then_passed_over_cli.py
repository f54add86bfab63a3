"""What an answer does with the moments its plain "then" passed over (real Neo4j, the demo
dataset plus an earlier incident of payment-api, 2026-05-14): no claim rests on one, and the
Time line names the incident before the moment taken.

Before (h29-then2): from 09:50 to 10:02:37 on 2026-07-23, "who owned payment-api then?" said
`PAY-1002 first seen at 2025-03-01T08:11:00Z` beside the owner while the Time line said that
error was "also found, not taken" (the error was read only to place "then"); and an incident
before the one taken was never named, only the latest incident's start was looked at.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest

from graph_schema.bundle import load_bundle
from graph_schema.writer import ingest_bundle

BOB = ["--subject", "acme/user:bob", "--service", "svc:payment-api"]
PAY_1002 = "the first PAY-1002 error, 2025-03-01T08:11:00Z, first seen before every release read"
EARLIER = "the start of incident Gateway timeouts 2026-05-14, 2026-05-14T07:00:00Z, earlier"
HOLDS = "; the answer holds at that moment (and at as_of). Name the moment in the question, "
HOLDS += "or give --as-of, to ask about another one"

# An incident of payment-api two months before the demo's, resolved the same morning.
EARLIER_INCIDENT = """
tenant: acme
nodes:
  - {id: inc:2026-05-14-gateway-timeouts, label: Incident, name: "Gateway timeouts 2026-05-14",
     acl: [internal, incident], source_id: src:incident-reports,
     source_version: "incidents@2026-05-14",
     locator: "incidents/2026-05-14-gateway-timeouts#inc:2026-05-14-gateway-timeouts",
     valid_from: "2026-05-14T07:00:00Z", valid_to: "2026-05-14T07:40:00Z",
     recorded_at: "2026-05-14T09:00:00Z",
     props: {severity: SEV3, started_at: "2026-05-14T07:00:00Z",
             resolved_at: "2026-05-14T07:40:00Z", summary: "payment-api calls timed out"}}
edges:
  - {type: AFFECTED_BY, from: svc:payment-api, to: inc:2026-05-14-gateway-timeouts,
     acl: [internal, incident], source_id: src:incident-reports,
     source_version: "incidents@2026-05-14",
     locator: "incidents/2026-05-14-gateway-timeouts#AFFECTED_BY|svc:payment-api|inc:gw",
     valid_from: "2026-05-14T07:00:00Z", valid_to: "2026-05-14T07:40:00Z",
     recorded_at: "2026-05-14T09:00:00Z"}
"""


@pytest.fixture(scope="module")
def earlier_incident(demo_graph: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = tmp_path_factory.mktemp("earlier-incident")
    (folder / "41-acme-earlier.yaml").write_text(EARLIER_INCIDENT, encoding="utf-8")
    ingest_bundle(demo_graph, load_bundle(Path(folder)))


def _ask(invoke, question: str, as_of: str, who: list[str] = BOB) -> dict:  # type: ignore[no-untyped-def,type-arg]
    report = invoke("investigate", question, *who, "--as-of", as_of, "--json")
    assert report.code == 0, report
    return json.loads(report.out)  # type: ignore[no-any-return]


def _claims(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


@pytest.mark.parametrize(
    ("question", "as_of"),
    [
        ("who owned payment-api then?", "2026-07-23T09:50:00Z"),
        ("who owned payment-api then?", "2026-07-23T09:55:12Z"),
        ("who owned payment-api then?", "2026-07-23T10:00:00Z"),
        ("who owned payment-api then?", "2026-07-23T10:02:10Z"),
        ("who owned payment-api then?", "2026-07-23T10:02:30Z"),
        ("who was responsible for payment-api at that time?", "2026-07-23T10:00:00Z"),
        ("which team owned payment-api back then?", "2026-07-23T10:02:21Z"),
    ],
)
def test_no_claim_rests_on_the_error_the_time_line_did_not_take(  # type: ignore[no-untyped-def]
    earlier_incident, cli_env, invoke, question: str, as_of: str
) -> None:
    doc = _ask(invoke, question, as_of)
    # The Time line says the PAY-1002 error of 2025 was found and not taken ...
    assert len(doc["time_notes"]) == 1 and PAY_1002 in doc["time_notes"][0], doc["time_notes"]
    # ... so no claim states it (it was read only to place "then"; before, one did).
    assert not any("PAY-1002" in c for c in _claims(doc)), _claims(doc)
    assert doc["status"] == "complete", doc["status"]


def test_the_error_taken_as_then_is_still_stated(earlier_incident, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _ask(invoke, "who owned payment-api then?", "2026-07-23T10:05:00Z")
    assert "PAY-4097 first seen at 2026-07-23T10:02:38Z: svc:payment-api EMITTED err:PAY-4097" in (
        _claims(doc)
    ), _claims(doc)


@pytest.mark.parametrize(
    "question",
    [
        "what changed then?",
        # A change question since h32-intents (was an entity lookup, in the list above).
        "did anything change then?",
        "was the release related to the errors then?",
    ],
)
def test_a_change_then_is_about_the_rollout_not_the_release_before(  # type: ignore[no-untyped-def]
    earlier_incident, cli_env, invoke, question: str
) -> None:
    # The PAY-1002 error is read here (through the May incident): "the errors" are those
    # after the release asked about, the rollout taken as "then" (before h29-then2, the
    # release of 2026-07-20, stated as a release and with "no time correlation" after it).
    doc = _ask(invoke, question, "2026-07-23T10:00:00Z")
    claims = _claims(doc)
    assert not any(c.startswith("Release release-2026.07.20.2") for c in claims), claims
    assert (
        "No error first seen after release deploy:release-2026.07.23.1 is known at as_of "
        "2026-07-23T10:00:00Z (it had not finished by then): PAY-1002, first seen at "
        "2025-03-01T08:11:00Z, predates it and is no evidence for or against it; no time "
        "correlation can be drawn yet"
    ) in claims, claims


def test_an_error_asked_for_is_said_not_to_be_the_moment(earlier_incident, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    # The question asks for errors itself: the PAY-1002 error is an answer, and says it is not
    # what "then" was taken as (the start of the rollout).
    doc = _ask(invoke, "which errors were first seen then?", "2026-07-23T10:00:00Z")
    assert (
        "PAY-1002 first seen at 2025-03-01T08:11:00Z (not what 'then' is taken as): "
        "svc:payment-api EMITTED err:PAY-1002"
    ) in _claims(doc), _claims(doc)


@pytest.mark.parametrize(
    ("as_of", "note"),
    [
        # The incident of the moment taken is the one asked about: the May one is named.
        (
            "2026-07-23T10:05:00Z",
            f"'then' is taken as the first PAY-4097 error, 2026-07-23T10:02:38Z (also found, "
            f"not taken: {EARLIER}){HOLDS}",
        ),
        # Before the July incident: the rollout, with the PAY-1002 error and the May incident
        # passed over.
        (
            "2026-07-23T10:00:00Z",
            "'then' is taken as the start of the rollout of release release-2026.07.23.1, "
            f"2026-07-23T09:55:12Z (also found, not taken: {PAY_1002}; {EARLIER}){HOLDS}",
        ),
    ],
)
def test_the_time_line_names_the_incident_before_the_one_taken(  # type: ignore[no-untyped-def]
    earlier_incident, cli_env, invoke, as_of: str, note: str
) -> None:
    doc = _ask(invoke, "who owned payment-api then?", as_of)
    assert doc["time_notes"] == [note], doc["time_notes"]


def test_an_incident_the_subject_may_not_read_is_never_named(  # type: ignore[no-untyped-def]
    earlier_incident, cli_env, invoke
) -> None:
    # carol holds no `incident` label: neither incident is hers to see.
    doc = _ask(
        invoke,
        "who owned payment-api then?",
        "2026-07-23T10:05:00Z",
        ["--subject", "acme/user:carol", "--service", "svc:payment-api"],
    )
    text = json.dumps(doc)
    assert "Gateway timeouts" not in text and "2026-05-14" not in text, doc["time_notes"]
