"""A `--service` whose lookup failed is said to be unknown, never left unsaid (session 30's
load-flaky `test_investigate_says_an_unresolved_service_did_not_resolve[svc:Payment-API]`).

Under load (20-40 on two cores, a server just started), the run's linking read for the
--service, `entity_resolution`, timed out ("query timed out after 20 s and was cancelled",
its 5 s timeout retried at 20 s); `trace` of the failing run shows it. The answer then had
no Service line at all (an errored lookup counted as resolved), and its gaps said only that
the run stopped after its last round. The note now says the lookup failed, so whether the id
names a visible service is unknown; and a close-match read that fails is never "no visible
id is close to it".

A real investigation on a real Neo4j; only its linking call's result is set to the error
the loaded server returned (a timeout cannot be caused on demand), then the notes are made
as the CLI makes them, with the suggestions read from Neo4j.
"""

from __future__ import annotations

import neo4j

from investigator.investigation import InvestigationRequest, investigate
from investigator.name_hints import unresolved_names

TIMED_OUT = "query timed out after 20 s and was cancelled"


def _run(driver: neo4j.Driver, service: str):  # type: ignore[no-untyped-def]
    request = InvestigationRequest(
        question="who owned it then?",
        subject_id="acme/user:bob",
        service_id=service,
        max_rounds=1,
        deadline_s=600,
    )
    return investigate(request, driver=driver)


def test_a_service_whose_lookup_timed_out_is_said_unknown(demo_graph: neo4j.Driver) -> None:
    result = _run(demo_graph, "svc:Payment-API")
    linking = [
        tc
        for tc in result.tool_calls
        if tc.template_id == "entity_resolution" and tc.params.get("text") == "svc:Payment-API"
    ]
    assert linking and all(tc.row_count == 0 for tc in linking)
    failed = result.model_copy(
        update={
            "tool_calls": [
                tc.model_copy(update={"error": TIMED_OUT}) if tc in linking else tc
                for tc in result.tool_calls
            ]
        }
    )
    [name] = unresolved_names(demo_graph, None, "acme/user:bob", failed)
    assert name.given_as == "service" and name.text == "svc:Payment-API"
    assert name.suggestions == ["svc:payment-api"]
    assert name.note == (
        "--service 'svc:Payment-API' could not be looked up: its read failed "
        f"({TIMED_OUT}), so whether it names a service visible to acme/user:bob is unknown; "
        "did you mean svc:payment-api? The answer does not cover it: ask again."
    )
    # The same run without the failure: the line it always was.
    [plain] = unresolved_names(demo_graph, None, "acme/user:bob", result)
    assert plain.note.startswith(
        "--service 'svc:Payment-API' did not resolve to a service visible to acme/user:bob; "
        "did you mean svc:payment-api?"
    ), plain.note
