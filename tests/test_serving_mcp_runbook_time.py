"""The served `runbook_lookup` reads a time written in its text as `investigator runbook`
does (explorer e29, finding 17): the SDK's real client, over stdio and over streamable
HTTP, against the real Neo4j of the test session and the demo dataset.

Before: `runbook_lookup {"target": "text", "value": "payment recovery on 2026-07-25 01:00
+0200"}` answered at now (v4) and said nothing of the date the agent wrote, while the CLI's
card was at 2026-07-24T23:00:00Z (v3) and said so.
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema import validators
from mcp.types import CallToolResult
from test_serving_mcp import BOB_TOKEN, http, http_server, ok, run_async, server_env, stdio

__all__ = ["http_server", "server_env"]  # module fixtures, used by name

ZONED = "payment recovery on 2026-07-25 01:00 +0200"  # 2026-07-24T23:00:00Z: v3 in force
LATE = "2026-07-26T00:00:00Z"  # v4 in force


def _checked(schema: dict[str, Any], result: CallToolResult) -> dict[str, Any]:
    doc = ok(result)
    validators.validator_for(schema)(schema).validate(doc)
    return doc


def test_stdio_runbook_lookup_reads_the_time_in_its_text_and_says_so(  # type: ignore[no-untyped-def]
    demo_graph, server_env, cli_env, invoke
) -> None:
    got: dict[str, Any] = {}

    async def main() -> None:
        async with stdio(server_env, "--subject", "acme/user:bob") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            schema = tools["runbook_lookup"].output_schema
            assert schema is not None
            assert {"as_of_from", "time_note"} <= set(schema["properties"]), schema
            assert "time written in a `text` value" in (tools["runbook_lookup"].description or "")

            result = await client.call_tool("runbook_lookup", {"target": "text", "value": ZONED})
            got["text"] = _checked(schema, result)
            got["summary"] = str(getattr(result.content[0], "text", ""))
            given = {"target": "text", "value": ZONED, "as_of": LATE}
            got["given"] = _checked(schema, await client.call_tool("runbook_lookup", given))
            then = {"target": "text", "value": "payment recovery then"}
            got["then"] = _checked(schema, await client.call_tool("runbook_lookup", then))
            service = {"target": "service", "value": "svc:payment-api"}
            got["service"] = _checked(schema, await client.call_tool("runbook_lookup", service))
            # The run recorded the text's time: it replays as recorded.
            replayed = {"run_id": got["text"]["run_id"]}
            got["replay"] = ok(await client.call_tool("replay", replayed))
            replayed = {"run_id": got["given"]["run_id"]}
            got["replay_given"] = ok(await client.call_tool("replay", replayed))

    run_async(main)
    doc = got["text"]
    assert doc["as_of"] == "2026-07-24T23:00:00Z"  # the zone read: 23:00Z the day before
    assert doc["runbook"]["id"] == "runbook:payment-recovery@v3"
    assert doc["as_of_from"] == "text"
    assert doc["time_note"] == "from the text: '2026-07-25 01:00 +0200'; as_of sets another time"
    assert f"Time: {doc['time_note']}" in got["summary"], got["summary"]
    # Where its as_of came from, in the summary too, as trace says it.
    assert "as_of 2026-07-24T23:00:00Z (from the text), known_at " in got["summary"]
    assert got["replay"]["verified"] is True, got["replay"]
    # The served lookup's run recorded where its as_of came from: replay says so (h31-asof).
    assert (got["replay"]["as_of_from"], got["replay"]["as_of_words"]) == (
        "text",
        "'2026-07-25 01:00 +0200'",
    )
    assert got["replay"]["times"].startswith(
        "as_of 2026-07-24T23:00:00Z (from the text: '2026-07-25 01:00 +0200'), known_at "
    )

    # An as_of given wins over the text's time, said so.
    given = got["given"]
    assert given["as_of"] == LATE and given["runbook"]["id"] == "runbook:payment-recovery@v4"
    # In the run's own words: the answer, the run and replay say `given` (the answer said
    # `as_of` before session 32, where the run recorded `given`).
    assert given["as_of_from"] == "given"
    assert got["replay_given"]["as_of_from"] == given["as_of_from"]
    said = f"as_of {LATE} (given; a time in the text not used), known_at "
    assert got["replay_given"]["times"].startswith(said), got["replay_given"]["times"]
    assert given["time_note"] == (
        "not used: '2026-07-25 01:00 +0200' in the text: as_of was given, and is this lookup's time"
    )
    # A time word it cannot place: at now, and said what to pass.
    then = got["then"]
    assert then["as_of_from"] == "now"
    assert then["time_note"].startswith("not used: 'then' in the text"), then["time_note"]
    assert then["time_note"].endswith(
        "the lookup is at now. Give as_of (ISO-8601 with a zone) for the version in force then"
    )
    assert (got["service"]["as_of_from"], got["service"]["time_note"]) == ("now", None)

    # The CLI answers the same text at the same time, from the same words.
    cli = invoke("runbook", ZONED, "--subject", "acme/user:bob", "--json")
    assert cli.code == 0, cli
    from_cli = json.loads(cli.out)
    assert list(from_cli) == list(doc)
    assert (from_cli["as_of"], from_cli["as_of_from"], from_cli["runbook"]["id"]) == (
        doc["as_of"],
        doc["as_of_from"],
        doc["runbook"]["id"],
    )


def test_http_runbook_lookup_reads_the_time_in_its_text(  # type: ignore[no-untyped-def]
    demo_graph, http_server
) -> None:
    got: dict[str, Any] = {}

    async def main() -> None:
        async with http(http_server, BOB_TOKEN) as client:
            call = {"target": "text", "value": ZONED}
            got["doc"] = ok(await client.call_tool("runbook_lookup", call))

    run_async(main)
    doc = got["doc"]
    assert (doc["as_of"], doc["as_of_from"]) == ("2026-07-24T23:00:00Z", "text")
    assert doc["runbook"]["id"] == "runbook:payment-recovery@v3"
    assert doc["time_note"] == "from the text: '2026-07-25 01:00 +0200'; as_of sets another time"


def test_stdio_runbook_lookup_naming_an_incident_is_at_its_start(  # type: ignore[no-untyped-def]
    demo_graph, server_env
) -> None:
    """e32-qa C: served alike. Before, a text naming the incident was at now (v4), its
    incident words said not used."""
    got: dict[str, Any] = {}
    text = "runbook we used during the PAY-4097 incident"

    async def main() -> None:
        async with stdio(server_env, "--subject", "acme/user:bob") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            schema = tools["runbook_lookup"].output_schema
            assert schema is not None
            call = {"target": "text", "value": text}
            got["doc"] = _checked(schema, await client.call_tool("runbook_lookup", call))
            replayed = {"run_id": got["doc"]["run_id"]}
            got["replay"] = ok(await client.call_tool("replay", replayed))
        async with stdio(server_env, "--subject", "acme/user:carol") as client:
            call = {"target": "text", "value": text}
            got["carol"] = ok(await client.call_tool("runbook_lookup", call))

    run_async(main)
    doc = got["doc"]
    assert (doc["as_of"], doc["as_of_from"]) == ("2026-07-23T10:02:38Z", "text")
    assert doc["runbook"]["id"] == "runbook:payment-recovery@v3"
    assert doc["time_note"] == (
        "'during the PAY-4097 incident' read as 2026-07-23T10:02:38Z, the incident's start "
        "(inc:2026-07-23-payments); in force now: v4 (runbook:payment-recovery@v4, since "
        "2026-07-25T00:00:00Z); as_of sets another time"
    )
    assert got["replay"]["verified"] is True, got["replay"]
    assert got["replay"]["as_of_words"] == "'during the PAY-4097 incident', the incident's start"
    carol = got["carol"]
    assert carol["as_of_from"] == "now" and carol["time_note"].startswith("not placed: "), carol
    assert "inc:2026-07-23-payments" not in json.dumps(carol)
