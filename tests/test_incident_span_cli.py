"""One reading of an incident's span: start `started_at`, else `valid_from`; resolution
`resolved_at`, else `valid_to` (`timeline.incident_span`), in every answer.

Found reading the code (session 31's closing note, brief h32-incident): the start and the
resolution were read by hand in eight places; the duration and the incident list took
`valid_to` when no `resolved_at` was recorded, while the timeline, the incident's own fact and
the action outcome read `resolved_at` alone. An incident whose record ended at `valid_to` with
no `resolved_at` (an import that records the incident's validity, not its fields) "lasted 1 h"
by its duration and was "still open ... the timeline stops here" a day later by its timeline.
"""

from __future__ import annotations

import json

import pytest

BOB = ("--subject", "acme/user:bob", "--json")
SERVICE = ("--service", "svc:batch-span")
DURING = ("--as-of", "2025-05-01T10:30:00Z")
LATER = ("--as-of", "2025-05-02T00:00:00Z")
INCIDENT = "inc:batch-span-lag"


def _bundle() -> str:
    """A service, its error first seen at 10:00:05 and an incident valid 10:00 to 11:00 with
    no `started_at` and no `resolved_at` (its record's validity is its span)."""
    record = 'acl: [internal], source_id: src:incident-reports, source_version: "span@1"'
    nodes = [
        f'  - {{id: "svc:batch-span", label: Service, name: "batch-span", locator: '
        f'"c#svc:batch-span", {record}, valid_from: "2025-01-01T00:00:00Z", '
        f'recorded_at: "2025-01-01T00:00:00Z"}}',
        f'  - {{id: "err:SPAN-1", label: ErrorCode, name: "SPAN-1", locator: "c#err:SPAN-1", '
        f'{record}, valid_from: "2025-01-01T00:00:00Z", recorded_at: "2025-01-01T00:00:00Z", '
        f'props: {{code: "SPAN-1"}}}}',
        f'  - {{id: "{INCIDENT}", label: Incident, name: "Batch span lag", locator: '
        f'"i#{INCIDENT}", {record}, valid_from: "2025-05-01T10:00:00Z", '
        f'valid_to: "2025-05-01T11:00:00Z", recorded_at: "2025-05-01T11:05:00Z", '
        f"props: {{severity: SEV3}}}}",
    ]
    affected = f"AFFECTED_BY|svc:batch-span|{INCIDENT}"
    emitted = "EMITTED|svc:batch-span|err:SPAN-1"
    edges = [
        f'  - {{type: AFFECTED_BY, from: "svc:batch-span", to: "{INCIDENT}", key: "{affected}", '
        f'{record}, locator: "i#{affected}", valid_from: "2025-05-01T10:00:00Z", '
        f'valid_to: "2025-05-01T11:00:00Z", recorded_at: "2025-05-01T11:05:00Z"}}',
        f'  - {{type: EMITTED, from: "svc:batch-span", to: "err:SPAN-1", key: "{emitted}", '
        f'{record}, locator: "o#{emitted}", valid_from: "2025-05-01T10:00:05Z", '
        f'recorded_at: "2025-05-01T10:00:10Z", props: {{first_seen: "2025-05-01T10:00:05Z"}}}}',
    ]
    return "\n".join(["tenant: acme", "nodes:", *nodes, "edges:", *edges]) + "\n"


@pytest.fixture(scope="module")
def span_graph(demo_graph, tmp_path_factory):  # type: ignore[no-untyped-def]
    from graph_schema.bundle import load_bundle
    from graph_schema.writer import ingest_bundle

    path = tmp_path_factory.mktemp("span") / "span.yaml"
    path.write_text(_bundle(), encoding="utf-8")
    ingest_bundle(demo_graph, load_bundle(path))
    return demo_graph


def _statements(invoke, question: str, *args: str) -> list[str]:  # type: ignore[no-untyped-def]
    result = invoke("investigate", question, *args, "--deadline-seconds", "120")
    assert result.code in (0, 3), result
    return [c["statement"] for c in json.loads(result.out)["claims"]]


def test_an_incident_ended_by_its_validity_is_resolved_in_every_answer(  # type: ignore[no-untyped-def]
    span_graph, cli_env, invoke
) -> None:
    # Its timeline: resolved at 11:00, not "still open" a day later.
    timeline = _statements(invoke, "show me the timeline of the incident", *BOB, *SERVICE, *LATER)
    assert f"2025-05-01T11:00:00Z: Incident {INCIDENT} (Batch span lag) resolved" in timeline, (
        timeline
    )
    assert not any("still open" in s for s in timeline), timeline
    # Its own fact says the resolution as the duration does.
    when = _statements(invoke, "when was the incident resolved?", *BOB, *SERVICE, *LATER)
    assert any(
        s.startswith(f"Incident {INCIDENT}: Batch span lag, severity SEV3, started ")
        and "resolved 2025-05-01T11:00:00Z" in s
        for s in when
    ), when
    long = _statements(invoke, "how long did the incident last?", *BOB, *SERVICE, *LATER)
    assert (
        f"Incident {INCIDENT} lasted 1 h: started 2025-05-01T10:00:00Z, resolved "
        "2025-05-01T11:00:00Z"
    ) in long, long


def test_an_incident_ended_by_its_validity_is_open_before_its_end(  # type: ignore[no-untyped-def]
    span_graph, cli_env, invoke
) -> None:
    # At 10:30 it was open: its timeline stops at as_of, its fact says so.
    timeline = _statements(invoke, "show me the timeline of the incident", *BOB, *SERVICE, *DURING)
    assert any(s.endswith("the timeline stops here") for s in timeline), timeline
    assert not any(s.endswith("resolved") for s in timeline), timeline
    when = _statements(invoke, "when was the incident resolved?", *BOB, *SERVICE, *DURING)
    assert any(
        s.startswith(f"Incident {INCIDENT}:") and "open at as_of 2025-05-01T10:30:00Z" in s
        for s in when
    ), when
