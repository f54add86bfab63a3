"""`investigator mcp` walked as its clients walk it (session 39): an agent's MCP client that
checks its arguments against each tool's `inputSchema` before calling, and an observability
stack that reads the server's OpenTelemetry spans. The real server over stdio (the SDK's
client, or JSON-RPC lines by hand), the real Neo4j, the demo dataset."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from jsonschema import validators
from test_serving_mcp import AS_OF, INVESTIGATOR, REPO, TIMEOUT, run_async, server_env, stdio

__all__ = ["server_env"]  # a module fixture, used by name

# One good call of each tool (trace and replay name a run of the first).
GOOD: dict[str, dict[str, Any]] = {
    "runbook_lookup": {"target": "service", "value": "svc:payment-api", "as_of": AS_OF},
    "investigate": {"question": "Who owns payment-api?", "as_of": AS_OF},
    "trace": {"run_id": "run-0123456789abcdef0123456789abcdef", "format": "prov-json"},
    "replay": {"run_id": "run-0123456789abcdef0123456789abcdef"},
}


def test_each_tools_input_schema_refuses_an_argument_the_tool_refuses(  # type: ignore[no-untyped-def]
    demo_graph, server_env
) -> None:
    # Before: no schema said `additionalProperties: false`, so a client that validates
    # arguments (or an LLM's strict tool mode) took `subject` or a misspelt `as-of` for a
    # valid call, which the server then refused as `bad input`.
    async def main() -> None:
        async with stdio(server_env, "--subject", "acme/user:bob") as client:
            listed = (await client.list_tools()).tools
            for tool in listed:
                # Its description as written, not indented as in the source.
                assert tool.description and "\n " not in tool.description, tool.name
            tools = {t.name: t.input_schema for t in listed}
            assert set(tools) == set(GOOD)
            for name, schema in tools.items():
                check = validators.validator_for(schema)(schema)
                assert check.is_valid(GOOD[name]), name
                extra = {**GOOD[name], "subject": "acme/user:alice"}
                assert not check.is_valid(extra), f"{name}'s schema takes `subject`"
                assert schema.get("additionalProperties") is False, name
            # ... and the server refuses what the schema refuses.
            refused = await client.call_tool(
                "runbook_lookup", {**GOOD["runbook_lookup"], "subject": "acme/user:alice"}
            )
            assert refused.is_error
            assert str(getattr(refused.content[0], "text", "")).startswith("bad input:")

    run_async(main)


def _spans(stderr: str) -> list[dict[str, Any]]:
    """The spans the console exporter wrote (one JSON object each, among other lines)."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while (start := stderr.find('{\n    "name"', at)) >= 0:
        span, at = decoder.raw_decode(stderr, start)
        found.append(span)
    return found


def test_the_first_call_of_a_traced_server_has_its_server_span(  # type: ignore[no-untyped-def]
    demo_graph, server_env
) -> None:
    # Before: with tracing asked for by the OTEL_* environment only, the provider was
    # installed at the first run, after the SDK had begun that request's `tools/call` span
    # on no provider: the first call's run span had no parent and its request no span.
    env = {**server_env, "OTEL_TRACES_EXPORTER": "console", "OTEL_SERVICE_NAME": "inv-walk"}
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "walk", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "runbook_lookup", "arguments": GOOD["runbook_lookup"]},
        },
    ]
    proc = subprocess.Popen(
        [INVESTIGATOR, "mcp", "--subject", "acme/user:bob"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )
    assert proc.stdin is not None and proc.stdout is not None
    answers: dict[int, Any] = {}
    proc.stdin.write(json.dumps(lines[0]) + "\n")
    proc.stdin.flush()
    answers[1] = json.loads(proc.stdout.readline())
    proc.stdin.write("".join(json.dumps(line) + "\n" for line in lines[1:]))
    proc.stdin.flush()
    answers[2] = json.loads(proc.stdout.readline())
    _, stderr = proc.communicate(timeout=TIMEOUT)  # stdin closed: the server ends, spans flushed
    assert answers[2]["id"] == 2 and not answers[2]["result"].get("isError"), answers[2]
    run_id = answers[2]["result"]["structuredContent"]["run_id"]

    spans = _spans(stderr)
    calls = [s for s in spans if s["name"] == "tools/call runbook_lookup"]
    runs = [s for s in spans if s["name"] == "invoke_agent investigator"]
    assert len(calls) == 1, [s["name"] for s in spans]
    assert len(runs) == 1 and runs[0]["attributes"]["gen_ai.conversation.id"] == run_id
    assert runs[0]["parent_id"] == calls[0]["context"]["span_id"]
    assert runs[0]["context"]["trace_id"] == calls[0]["context"]["trace_id"]
    assert calls[0]["resource"]["attributes"]["service.name"] == "inv-walk"
