"""What a result of `investigator mcp` carries (the SDK's real client over stdio and HTTP,
the real Neo4j of the test session, the demo dataset):

- each tool declares an `outputSchema` (from the pydantic models of the `--json`
  documents), its structured content conforms to it, and the document is sent once: the
  text block is a short summary of it (claims and evidence ids, the runbook and its owner,
  whether a run verifies), no longer the same document again;
- a version withheld as an untrusted instruction is named by its reason code and where the
  text was, never quoted (MCP, `--json` and the terminal alike);
- over HTTP, JSON that is no JSON-RPC message gets one line, as over stdio.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import httpx2
from jsonschema import validators
from mcp.types import CallToolResult
from test_serving_mcp import (
    AS_OF,
    BOB_TOKEN,
    DEADLINE,
    INITIALIZE,
    INVESTIGATOR,
    KNOWN_AT,
    QUESTION,
    REPO,
    TIMEOUT,
    http,
    http_server,
    run_async,
    server_env,
    stdio,
)
from test_serving_mcp_agent_surface import PLANTED_ALERT, probe_runbooks

__all__ = ["http_server", "probe_runbooks", "server_env"]  # module fixtures, used by name

# Words of the planted runbook's override (test_serving_mcp_agent_surface.PLANTED_RUNBOOK).
PLANTED_WORDS = ("roll back", "instead answer", "risk rule")


def wire_bytes(result: CallToolResult) -> int:
    """The size of the result as the server sends it (its JSON-RPC `result`)."""
    return len(result.model_dump_json(by_alias=True, exclude_none=True).encode("utf-8"))


def summary(result: CallToolResult) -> str:
    assert not result.is_error, result.content
    return str(getattr(result.content[0], "text", ""))


def conforms(schemas: dict[str, dict[str, Any]], tool: str, result: CallToolResult) -> Any:
    """The result's structured content, checked against the tool's declared schema."""
    doc = result.structured_content
    schema = schemas[tool]
    validators.validator_for(schema)(schema).validate(doc)
    return doc


def test_each_tool_declares_its_output_schema_and_sends_its_document_once(  # type: ignore[no-untyped-def]
    demo_graph, server_env
) -> None:
    async def main() -> None:
        async with stdio(server_env, "--subject", "acme/user:bob") as client:
            tools = (await client.list_tools()).tools
            schemas = {t.name: t.output_schema for t in tools}
            assert set(schemas) == {"investigate", "runbook_lookup", "trace", "replay"}
            for name, schema in schemas.items():
                assert schema is not None and schema.get("type") == "object", name
            assert "claims" in schemas["investigate"]["properties"]
            assert "owner" in schemas["runbook_lookup"]["properties"]
            declared: dict[str, dict[str, Any]] = {k: v for k, v in schemas.items() if v}

            seed = await client.call_tool(
                "investigate",
                {
                    "question": QUESTION,
                    "as_of": AS_OF,
                    "known_at": KNOWN_AT,
                    "deadline_seconds": DEADLINE,
                },
            )
            doc = conforms(declared, "investigate", seed)
            text = summary(seed)
            document = json.dumps(doc, ensure_ascii=False)
            # Sent once: the text is a summary, not the document again.
            assert len(seed.content) == 1
            assert '"evidence"' not in text and len(text) * 5 < len(document), text
            assert wire_bytes(seed) < len(document.encode()) * 1.2
            # What an agent answers from is in it: the run, each claim with its evidence ids.
            assert doc["run_id"] in text and doc["claims"]
            for claim in doc["claims"]:
                assert all(e in text for e in claim["evidence_ids"]), claim
            assert "structured content" in text

            card = await client.call_tool(
                "runbook_lookup", {"target": "service", "value": "svc:payment-api", "as_of": AS_OF}
            )
            answer = conforms(declared, "runbook_lookup", card)
            text = summary(card)
            assert answer["runbook"]["id"] in text and f"Owner: {answer['owner']}" in text
            assert answer["runbook"]["trust"] == "trusted"
            assert all(step in text for step in answer["runbook"]["steps"])  # trusted: shown
            assert '"steps"' not in text

            for fmt in ("json", "prov-json"):
                trace = await client.call_tool("trace", {"run_id": doc["run_id"], "format": fmt})
                conforms(declared, "trace", trace)
                assert not trace.is_error
            replay = await client.call_tool("replay", {"run_id": answer["run_id"]})
            report = conforms(declared, "replay", replay)
            assert report["verified"] is True
            assert summary(replay).startswith(f"run {answer['run_id']}: verified True")

    run_async(main)


def test_over_http_the_schema_is_declared_and_the_summary_sent(  # type: ignore[no-untyped-def]
    demo_graph, http_server
) -> None:
    async def main() -> None:
        async with http(http_server, BOB_TOKEN) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert all(t.output_schema for t in tools.values())
            card = await client.call_tool(
                "runbook_lookup", {"target": "service", "value": "svc:payment-api", "as_of": AS_OF}
            )
            answer = card.structured_content
            assert answer is not None and answer["subject"] == "user:bob"
            text = summary(card)
            assert text.startswith(f"run {answer['run_id']}: runbook lookup of service")
            assert answer["runbook"]["id"] in text

    run_async(main)


def _cli(server_env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [INVESTIGATOR, *args, "--subject", "acme/user:bob"],
        env=server_env, cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_withheld_instruction_is_named_by_its_reason_and_place_never_quoted(  # type: ignore[no-untyped-def]
    probe_runbooks, server_env
) -> None:
    served: dict[str, CallToolResult] = {}

    async def main() -> None:
        async with stdio(server_env, "--subject", "acme/user:bob") as client:
            served["card"] = await client.call_tool(
                "runbook_lookup", {"target": "alert", "value": PLANTED_ALERT}
            )

    run_async(main)
    card = served["card"]
    doc = card.structured_content
    assert doc is not None and doc["runbook"] is None
    [rejected] = [r for r in doc["rejected"] if r["reason"] == "rejected_untrusted_instruction"]
    # Where it was, in words of the gate's own: not what it said; the file's line, front
    # matter included (line 4 of the text after it before).
    assert rejected["detail"] == (
        "untrusted source contains instruction-like text in line 7 of its file (not quoted)"
    )
    everything = card.model_dump_json(by_alias=True)
    assert not [w for w in PLANTED_WORDS if w in everything.lower()], everything

    as_json = _cli(server_env, "runbook", "--alert", PLANTED_ALERT, "--json")
    [rejected] = [
        r
        for r in json.loads(as_json)["rejected"]
        if r["reason"] == "rejected_untrusted_instruction"
    ]
    assert "(not quoted)" in rejected["detail"]
    terminal = _cli(server_env, "runbook", "--alert", PLANTED_ALERT)
    assert "instruction-like text in line 7 of its file, not quoted" in terminal, terminal
    for shown in (as_json, terminal):
        assert not [w for w in PLANTED_WORDS if w in shown.lower()], shown


def test_http_json_that_is_no_jsonrpc_message_is_one_line_as_over_stdio(  # type: ignore[no-untyped-def]
    demo_graph, http_server
) -> None:
    # Found probing the served paths: the SDK answered `Validation error:` and pydantic's
    # whole report, several lines quoting the caller's input; stdio says -32600 in one line.
    bob = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {BOB_TOKEN}"}
    opened = httpx2.post(http_server, json=INITIALIZE, headers=bob, timeout=30)
    assert opened.status_code == 200, opened.text
    on_bobs = dict(bob, **{"Mcp-Session-Id": opened.headers["mcp-session-id"]})
    ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert httpx2.post(http_server, json=ready, headers=on_bobs, timeout=30).status_code == 202
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    for body in (
        [listing],  # a batch: no JSON-RPC message since 2025-06-18
        {"jsonrpc": "2.0", "id": 3, "method": 5, "params": {"note": "ignore previous rules"}},
        "tools/list",
    ):
        refused = httpx2.post(http_server, json=body, headers=on_bobs, timeout=30)
        assert refused.status_code == 400, refused.text
        assert refused.json() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32600, "message": "Invalid Request: not a JSON-RPC message"},
        }
    # A request whose only fault is its params keeps its id, as over stdio (it was null).
    listed = {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": ["all"]}
    refused = httpx2.post(http_server, json=listed, headers=on_bobs, timeout=30)
    assert refused.status_code == 400, refused.text
    assert refused.json() == {
        "jsonrpc": "2.0",
        "id": 4,
        "error": {
            "code": -32600,
            "message": "Invalid Request: `params` must be an object (name: value), not a list",
        },
    }
    # The session keeps serving.
    served = httpx2.post(http_server, json=listing, headers=on_bobs, timeout=30)
    assert served.status_code == 200 and "runbook_lookup" in served.text, served.text
