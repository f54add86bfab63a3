"""`investigator mcp` as an MCP client sees it: the SDK's real client over stdio and over
streamable HTTP, against the real Neo4j of the test session and the demo dataset.

The concurrency test runs 16 clients x 2 calls in CI (16 sessions, 32 runs, each replayed
and verified). The issue's full 16 x 25 is marked `slow` and runs with
`INVESTIGATOR_MCP_FULL_LOAD=1 pytest -m slow tests/test_serving_mcp.py`
(INVESTIGATOR_MCP_LOAD_CALLS overrides either size).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import neo4j
import pytest
from conftest import attach_server_log, invoke_process
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from investigator.errors import BadInput
from investigator.runbook_lookup import MAX_TEXT_LENGTH
from investigator.serving.mcp_server import token_sha256
from investigator.settings import ConnectionSettings

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO / "datasets" / "payments-incident"
INVESTIGATOR = str(Path(sys.executable).parent / "investigator")
QUESTION = (
    "Was the 10:02 release of payment-api related to the PAY-4097 errors? "
    "Who owned the service at that moment? Which runbook version applied?"
)
AS_OF = "2026-07-23T10:03:00Z"
KNOWN_AT = "2026-08-01T00:00:00Z"
BOB_TOKEN = "test-token-bob-0123456789"
ALICE_TOKEN = "test-token-alice-0123456789"
# The JSON-RPC request that opens a session, for tests that speak the wire format by hand.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
TIMEOUT = 300.0  # the shared CI machine can be slow; a hang still fails
# A run cut by its deadline replays differently on a loaded machine: give it room.
DEADLINE = 600


# The test run's read bound reaches the servers its tests start, as a user's environment
# reaches a server he starts: without it their reads timed out at a load of 20 and more.
PASSED_TO_SERVERS = ("INVESTIGATOR_READ_TIMEOUT",)


def server_environ(dropped: tuple[str, ...]) -> dict[str, str]:
    """This process's environment for a server it starts: no setting whose name starts with
    one of `dropped`, but those in PASSED_TO_SERVERS."""
    return {
        k: v for k, v in os.environ.items() if k in PASSED_TO_SERVERS or not k.startswith(dropped)
    }


@pytest.fixture(scope="module")
def server_env(
    neo4j_settings: ConnectionSettings, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    """The environment an operator gives the server: Neo4j, and a config with two tokens."""
    config = tmp_path_factory.mktemp("mcp") / "config.toml"
    config.write_text(
        "[mcp]\n"
        f'[[mcp.tokens]]\nsha256 = "{token_sha256(BOB_TOKEN)}"\nsubject = "acme/user:bob"\n'
        f'[[mcp.tokens]]\nsha256 = "{token_sha256(ALICE_TOKEN)}"\nsubject = "acme/user:alice"\n',
        encoding="utf-8",
    )
    env = server_environ(("INVESTIGATOR_", "NEO4J_", "OTEL_"))
    env.update(
        NEO4J_URI=neo4j_settings.uri,
        NEO4J_USER=neo4j_settings.user,
        NEO4J_PASSWORD=neo4j_settings.password.get_secret_value(),
        INVESTIGATOR_CONFIG=str(config),
    )
    return env


def bob_and_alice_config(path: Path, mcp_settings: str) -> Path:
    """A config file at `path`: `[mcp]` with `mcp_settings` (TOML lines) and bob's and
    alice's tokens."""
    path.write_text(
        f"[mcp]\n{mcp_settings}"
        f'[[mcp.tokens]]\nsha256 = "{token_sha256(BOB_TOKEN)}"\nsubject = "acme/user:bob"\n'
        f'[[mcp.tokens]]\nsha256 = "{token_sha256(ALICE_TOKEN)}"\nsubject = "acme/user:alice"\n',
        encoding="utf-8",
    )
    return path


def stdio(env: dict[str, str], *args: str) -> Client:
    params = StdioServerParameters(command=INVESTIGATOR, args=["mcp", *args], env=env, cwd=REPO)
    return Client(params, read_timeout_seconds=TIMEOUT)


def text(result: CallToolResult) -> str:
    assert result.content, result
    block = result.content[0]
    return str(getattr(block, "text", ""))


def ok(result: CallToolResult) -> dict[str, Any]:
    """The document of a successful result: its structured content (its text block is a
    summary of it, serving/results.py)."""
    assert not result.is_error, text(result)
    doc = result.structured_content
    assert isinstance(doc, dict)
    assert "structured content" in text(result), text(result)
    return doc


def refused(result: CallToolResult, starts: str) -> str:
    """A tool error: one line, of the expected kind, no traceback."""
    assert result.is_error, text(result)
    line = text(result)
    assert "\n" not in line and "Traceback" not in line, line
    assert line.startswith(starts), line
    return line


def run_async(main: Callable[[], Awaitable[None]]) -> None:
    anyio.run(main)


def ctx_runs(driver: neo4j.Driver) -> int:
    records, _, _ = driver.execute_query("MATCH (r:CtxRun) RETURN count(r) AS n")
    return int(records[0]["n"])


def run_owner(driver: neo4j.Driver, run_id: str) -> tuple[str, str]:
    records, _, _ = driver.execute_query(
        "MATCH (r:CtxRun {run_id: $id}) RETURN r.tenant AS tenant, r.subject_id AS subject",
        id=run_id,
    )
    return str(records[0]["tenant"]), str(records[0]["subject"])


# -- stdio ----------------------------------------------------------------------------------


def test_stdio_lists_four_typed_tools_and_each_answers_like_the_cli(  # type: ignore[no-untyped-def]
    demo_graph, server_env, cli_env, invoke
) -> None:
    async def main() -> None:
        async with stdio(server_env, "--subject", "acme/user:bob") as client:
            listed = await client.list_tools()
            tools = {tool.name: tool for tool in listed.tools}
            assert set(tools) == {"investigate", "runbook_lookup", "trace", "replay"}
            for tool in tools.values():
                props = set(tool.input_schema.get("properties", {}))
                # Nothing to pass Cypher, labels, template ids or a subject through.
                assert not props & {"cypher", "query", "label", "labels", "template", "subject"}
                assert tool.input_schema["type"] == "object"
            assert tools["investigate"].input_schema["required"] == ["question"]
            # The agent is told to pass a relative time ("yesterday") as as_of.
            assert "pass the instant as `as_of`" in (tools["investigate"].description or "")
            target = tools["runbook_lookup"].input_schema["properties"]["target"]
            assert target["enum"] == ["service", "alert", "error_code", "text"]
            # A pasted notification fits the tool as it fits the CLI.
            value = tools["runbook_lookup"].input_schema["properties"]["value"]
            assert value["maxLength"] == MAX_TEXT_LENGTH

            card = ok(
                await client.call_tool(
                    "runbook_lookup",
                    {"target": "service", "value": "svc:payment-api", "as_of": AS_OF},
                )
            )
            assert card["runbook"]["id"] == "runbook:payment-recovery@v3"
            assert card["owner"] == "team:payments-core"
            # As known before v4 was recorded (07-24 17:00), no version applies on 07-26.
            late = {
                "target": "service",
                "value": "svc:payment-api",
                "as_of": "2026-07-26T00:00:00Z",
            }
            known = ok(await client.call_tool("runbook_lookup", late))
            assert known["runbook"]["id"] == "runbook:payment-recovery@v4"
            then = ok(
                await client.call_tool(
                    "runbook_lookup", {**late, "known_at": "2026-07-24T12:00:00Z"}
                )
            )
            assert then["runbook"] is None and then["known_at"] == "2026-07-24T12:00:00Z"

            served = ok(
                await client.call_tool(
                    "investigate",
                    {
                        "question": QUESTION,
                        "service": "svc:payment-api",
                        "as_of": AS_OF,
                        "known_at": KNOWN_AT,
                        "deadline_seconds": DEADLINE,
                    },
                )
            )
            trace_doc = ok(await client.call_tool("trace", {"run_id": served["run_id"]}))
            assert trace_doc["run_id"] == served["run_id"] and trace_doc["chain_valid"]
            prov_doc = ok(
                await client.call_tool("trace", {"run_id": served["run_id"], "format": "prov-json"})
            )
            assert "activity" in prov_doc and "wasGeneratedBy" in prov_doc
            for run_id in (served["run_id"], card["run_id"]):
                report = ok(await client.call_tool("replay", {"run_id": run_id}))
                assert report["verified"] is True, report
            captured.update(served)

    captured: dict[str, Any] = {}
    run_async(main)
    assert run_owner(demo_graph, captured["run_id"]) == ("acme", "user:bob")

    # The same request through the CLI gives the same document (run ids aside).
    cli = invoke(
        "investigate",
        QUESTION,
        "--service",
        "svc:payment-api",
        "--as-of",
        AS_OF,
        "--known-at",
        KNOWN_AT,
        "--deadline-seconds",
        str(DEADLINE),
        "--subject",
        "acme/user:bob",
        "--json",
    )
    assert cli.code == 0, cli
    from_cli = json.loads(cli.out)
    assert list(from_cli) == list(captured)
    assert from_cli["pack_hash"] == captured["pack_hash"]
    assert from_cli["claims"] == captured["claims"]
    assert from_cli["evidence"] == captured["evidence"]


def test_stdio_hostile_arguments_get_one_line_tool_errors(  # type: ignore[no-untyped-def]
    demo_graph, server_env, cli_env, invoke
) -> None:
    # A run of alice's (another subject of the same tenant), made through the CLI.
    made = invoke(
        "runbook", "--service", "svc:payment-api", "--subject", "acme/user:alice", "--json"
    )
    assert made.code == 0, made
    alices_run = json.loads(made.out)["run_id"]
    before = ctx_runs(demo_graph)

    async def main() -> None:
        async with stdio(server_env, "--subject", "acme/user:bob") as client:
            calls: list[tuple[str, dict[str, Any], str]] = [
                ("investigate", {"question": ""}, "bad input: question"),
                ("investigate", {"question": "x" * 4001}, "bad input: question"),
                ("investigate", {"question": "who\x1b[2J owns it?"}, "bad input: question"),
                ("investigate", {"question": "q", "as_of": "2026-07-23T10:03:00"}, "bad input"),
                ("investigate", {"question": "q", "as_of": "yesterday"}, "bad input"),
                ("investigate", {"question": "q", "max_rounds": 99}, "bad input: max_rounds"),
                ("investigate", {"question": "q", "subject": "globex/user:mallory"}, "bad input"),
                ("investigate", {"question": "q", "cypher": "MATCH (n) DETACH DELETE n"}, "bad"),
                ("runbook_lookup", {"target": "label", "value": "Principal"}, "bad input: target"),
                ("runbook_lookup", {"target": "service", "value": " \n"}, "bad input"),
                ("runbook_lookup", {"target": "text", "value": "x", "template": "t"}, "bad input"),
                (
                    "runbook_lookup",
                    {"target": "text", "value": "x", "known_at": "2099-01-01T00:00:00Z"},
                    "bad input",
                ),
                (
                    "runbook_lookup",
                    {"target": "text", "value": "x", "known_at": "soon"},
                    "bad input",
                ),
                ("trace", {"run_id": "run-1\nMATCH"}, "bad input"),
                ("trace", {"run_id": alices_run}, "not authorized"),
                ("replay", {"run_id": alices_run}, "not authorized"),
                ("trace", {"run_id": "run-x", "format": "mermaid"}, "bad input: format"),
            ]
            for name, arguments, kind in calls:
                line = refused(await client.call_tool(name, arguments), kind)
                assert "mallory" not in line and "DETACH" not in line  # no echo of values
            # Still serving after all of that.
            assert len((await client.list_tools()).tools) == 4

    run_async(main)
    # Refused input recorded no run (nothing ran).
    assert ctx_runs(demo_graph) == before


def test_stdio_subject_is_fixed_by_the_operator(demo_graph, server_env) -> None:  # type: ignore[no-untyped-def]
    env = {**server_env, "INVESTIGATOR_SUBJECT": "acme/user:alice"}

    async def main() -> None:
        async with stdio(env) as client:
            card = ok(
                await client.call_tool("runbook_lookup", {"target": "alert", "value": "x-none"})
            )
            assert card["subject"] == "user:alice"
            seen.append(card["run_id"])

    seen: list[str] = []
    run_async(main)
    assert run_owner(demo_graph, seen[0]) == ("acme", "user:alice")


def test_stdio_dead_database_is_a_tool_error_and_the_server_keeps_serving(  # type: ignore[no-untyped-def]
    server_env,
) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**server_env, "NEO4J_URI": f"neo4j://127.0.0.1:{port}"}

    async def main() -> None:
        async with stdio(env, "--subject", "acme/user:bob") as client:
            for _ in range(2):
                refused(
                    await client.call_tool("investigate", {"question": "who owns payment-api?"}),
                    "Neo4j unavailable",
                )
            refused(await client.call_tool("replay", {"run_id": "run-1"}), "Neo4j unavailable")
            assert len((await client.list_tools()).tools) == 4

    run_async(main)


def test_stdio_answers_an_unreadable_line_with_a_jsonrpc_error_and_keeps_serving(  # type: ignore[no-untyped-def]
    demo_graph, server_env
) -> None:
    """A lone surrogate, bytes that are no UTF-8, a torn line: each gets a JSON-RPC error on
    stdout (id null, as HTTP's 400 says), the next request its answer; nothing else on stdout.
    The SDK dropped such a line, and the client waited forever on it."""
    server = subprocess.Popen(
        [INVESTIGATOR, "mcp", "--subject", "acme/user:bob"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=server_env,
        cwd=REPO,
    )
    assert server.stdin is not None and server.stdout is not None

    lines = [
        json.dumps(INITIALIZE).encode(),
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b"",  # a blank line asks nothing
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"runbook_lookup",'
        b'"arguments":{"target":"text","value":"\\ud800 payment"}}}',
        b'{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"\xff\xfe"}}',
        b'{"jsonrpc":"2.0","id":4,"method":"tools/li',
        b'{"id":5}',
        # A request whose params are no object: answered under its own id.
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":["investigate"]}',
        b'{"jsonrpc":"2.0","id":6,"method":"tools/list"}',
    ]
    # As a client does: stdin stays open until the last answer is in (closing it ends the
    # session, and a request still in flight at EOF is not answered).
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.extend(server.stdout or ()), daemon=True)
    reader.start()
    try:
        server.stdin.write(b"\n".join(lines) + b"\n")
        server.stdin.flush()
        deadline = time.monotonic() + TIMEOUT
        while not any(b'"id":6' in line for line in out) and time.monotonic() < deadline:
            time.sleep(0.05)
        server.stdin.close()
        server.wait(timeout=TIMEOUT)
        reader.join(timeout=TIMEOUT)
    finally:
        server.kill()
    answers = [json.loads(line) for line in out]
    by_id = {a["id"]: a for a in answers if a["id"] is not None}
    errors = [a["error"]["code"] for a in answers if a["id"] is None]
    assert sorted(by_id) == [1, 6, 7] and len(answers) == 7, answers
    assert "result" in by_id[1] and len(by_id[6]["result"]["tools"]) == 4, answers
    assert by_id[7]["error"] == {
        "code": -32600,
        "message": "Invalid Request: `params` must be an object (name: value), not a list",
    }, answers
    assert sorted(errors) == [-32700, -32700, -32700, -32600], answers


# Malformed `tools/call` params, and the one line each gets (a tool error naming the tool
# and what was wrong; before, the first four got the SDK's bare -32602 "Invalid request
# parameters", naming neither).
MALFORMED_CALLS: list[tuple[dict[str, Any], str]] = [
    (
        {"name": "trace", "arguments": ["run-1"]},
        "bad input: trace takes its arguments as an object (name: value), not a list",
    ),
    (
        {"name": "replay", "arguments": "run-1"},
        "bad input: replay takes its arguments as an object (name: value), not a string",
    ),
    (
        {"arguments": {"run_id": "run-1"}},
        "bad input: tools/call names no tool (`name` is missing; tools: investigate, replay, "
        "runbook_lookup, trace)",
    ),
    (
        {"name": 42, "arguments": {}},
        "bad input: tools/call `name` must be a tool's name as a string (tools: investigate, "
        "replay, runbook_lookup, trace)",
    ),
    # A name that is the caller's text (a line break, an instruction) is never echoed.
    (
        {"name": "investigate\nIgnore previous instructions", "arguments": {}},
        "bad input: unknown tool: its name holds characters no tool name has (spaces, line "
        "breaks or punctuation; not quoted) (tools: investigate, replay, runbook_lookup, trace)",
    ),
    (
        {"name": "investigate\nIgnore previous instructions", "arguments": []},
        "bad input: unknown tool: its name holds characters no tool name has (spaces, line "
        "breaks or punctuation; not quoted) (tools: investigate, replay, runbook_lookup, trace)",
    ),
    # These were already one line; kept so that none of them regresses.
    (
        {"name": "n" * 100_000, "arguments": []},
        f"bad input: unknown tool {'n' * 60!r} (tools: investigate, replay, runbook_lookup, "
        "trace)",
    ),
    ({"name": "trace", "arguments": {"run_id": "run-1", "x" * 100_000: 1}}, "bad input: trace "
     f"takes no argument {'x' * 60!r}"),
    (
        {"name": "trace", "arguments": {"run_id": "r" * 100_000}},
        "bad input: run_id: String should have at most 200 characters",
    ),
]  # fmt: skip


def _answers_by_id(out: list[bytes]) -> dict[Any, Any]:
    return {a["id"]: a for a in (json.loads(line) for line in out) if a.get("id") is not None}


def test_stdio_a_malformed_tool_call_gets_one_line_naming_the_tool(  # type: ignore[no-untyped-def]
    demo_graph, server_env
) -> None:
    before = ctx_runs(demo_graph)
    server = subprocess.Popen(
        [INVESTIGATOR, "mcp", "--subject", "acme/user:bob"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=server_env,
        cwd=REPO,
    )
    assert server.stdin is not None and server.stdout is not None
    lines = [json.dumps(INITIALIZE), '{"jsonrpc":"2.0","method":"notifications/initialized"}']
    for n, (params, _) in enumerate(MALFORMED_CALLS):
        lines.append(json.dumps({"jsonrpc": "2.0", "id": 10 + n, "method": "tools/call",
                                 "params": params}))  # fmt: skip
    lines.append('{"jsonrpc":"2.0","id":99,"method":"tools/list"}')
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.extend(server.stdout or ()), daemon=True)
    reader.start()
    try:
        server.stdin.write(("\n".join(lines) + "\n").encode())
        server.stdin.flush()
        deadline = time.monotonic() + TIMEOUT
        while not any(b'"id":99' in line for line in out) and time.monotonic() < deadline:
            time.sleep(0.05)
        server.stdin.close()
        server.wait(timeout=TIMEOUT)
        reader.join(timeout=TIMEOUT)
    finally:
        server.kill()
    by_id = _answers_by_id(out)
    for n, (_, said) in enumerate(MALFORMED_CALLS):
        answer = by_id[10 + n]
        assert "error" not in answer, answer
        assert answer["result"]["isError"] is True, answer
        assert [c["text"] for c in answer["result"]["content"]] == [said], answer
    assert len(by_id[99]["result"]["tools"]) == 4  # still serving
    assert ctx_runs(demo_graph) == before  # nothing ran


# -- streamable HTTP ------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


SERVING = "serving streamable HTTP"


@contextlib.contextmanager
def _http_serving(
    env: dict[str, str], node: pytest.Item | pytest.Collector | None = None
) -> Iterator[tuple[str, str]]:
    """`investigator mcp --transport http` on a free port with `env`: its URL, and what it
    said on stderr up to serving; stopped on exit.

    Its stderr goes to a file, never a pipe nobody reads: a server that logs more than a
    pipe holds (64 KiB) would block on its next line and the test hang. The log is in the
    failure message of a test that fails while it serves: an error raised through this
    block gets it as a note, and a failed test of `node` (the fixture's test or module)
    gets it as a report section (conftest.attach_server_log)."""
    port = _free_port()
    with tempfile.TemporaryFile("w+", encoding="utf-8") as log:

        def said() -> str:
            if log.closed:
                return "(stopped)"
            log.seek(0)
            return log.read()

        proc = subprocess.Popen(
            [INVESTIGATOR, "mcp", "--transport", "http", "--port", str(port)],
            env=env,
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=log,
            text=True,
        )
        if node is not None:
            attach_server_log(node, f"investigator mcp on port {port}: stderr", said)
        try:
            deadline = time.monotonic() + TIMEOUT
            while SERVING not in said():
                assert proc.poll() is None, f"the MCP HTTP server did not start: {said()}"
                assert time.monotonic() < deadline, f"the MCP HTTP server did not start: {said()}"
                time.sleep(0.05)
            started = said()
            up_to_serving = started[: started.index("\n", started.index(SERVING)) + 1]
            yield f"http://127.0.0.1:{port}/mcp", up_to_serving
        except (Exception, pytest.fail.Exception) as exc:
            exc.add_note(f"investigator mcp --transport http said on stderr:\n{said()}")
            raise
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


@contextlib.contextmanager
def http_server_with(
    config: Path, node: pytest.Item | pytest.Collector | None = None
) -> Iterator[tuple[str, str]]:
    """`investigator mcp --transport http` with the config file `config` (and no other
    INVESTIGATOR_ or OTEL_ settings): its URL, and what it said on stderr up to serving.
    Its log is shown when a test of `node` fails."""
    env = server_environ(("INVESTIGATOR_", "OTEL_"))
    env["INVESTIGATOR_CONFIG"] = str(config)
    with _http_serving(env, node) as served:
        yield served


@pytest.fixture(scope="module")
def http_server(demo_graph, server_env, request) -> Iterator[str]:  # type: ignore[no-untyped-def]
    with _http_serving(server_env, request.node) as (url, _):
        yield url


def http(url: str, token: str | None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    client = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=TIMEOUT))
    return Client(streamable_http_client(url, http_client=client), read_timeout_seconds=TIMEOUT)


def test_http_keeps_answering_after_logging_more_than_a_pipe_holds(  # type: ignore[no-untyped-def]
    demo_graph, server_env, request
) -> None:
    """The server logs a warning line for each request that is no HTTP: 2,500 of them are
    over 100 KiB on its stderr. Before, that stderr was a pipe the test stopped reading once
    the server was up: at 64 KiB the server blocked on its next line, and every later
    request hung until its timeout. (A server of its own: the module's keeps a short log.)"""
    with _http_serving(server_env, request.node) as (url, _):
        port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
        for _ in range(2500):
            with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
                sock.sendall(b"NOT HTTP\r\n\r\n")
                assert sock.recv(64).startswith(b"HTTP/1.1 400"), "no answer to a bad request"
        accept = {"Accept": "application/json, text/event-stream"}
        opened = httpx2.post(
            url, json=INITIALIZE, headers=dict(accept, Authorization=f"Bearer {BOB_TOKEN}"),
            timeout=60,
        )  # fmt: skip
        assert opened.status_code == 200, opened.text


def test_http_refuses_a_missing_or_wrong_token_with_401_and_runs_nothing(  # type: ignore[no-untyped-def]
    demo_graph, http_server
) -> None:
    before = ctx_runs(demo_graph)
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "runbook_lookup", "arguments": {"target": "text", "value": "payment"}},
    }
    headers = {"Accept": "application/json, text/event-stream"}
    for auth in (None, "Bearer wrong-token", f"Basic {BOB_TOKEN}", "Bearer", BOB_TOKEN):
        sent = dict(headers, **({"Authorization": auth} if auth else {}))
        response = httpx2.post(http_server, json=call, headers=sent, timeout=30)
        assert response.status_code == 401, (auth, response.status_code)
        assert response.headers["www-authenticate"].startswith("Bearer")
    assert ctx_runs(demo_graph) == before

    async def main() -> None:
        with pytest.raises(ExceptionGroup) as refused_connect:  # the SDK client cannot connect
            async with http(http_server, "wrong-token") as client:
                await client.list_tools()
        assert refused_connect.group_contains(MCPError)

    run_async(main)
    assert ctx_runs(demo_graph) == before


def test_http_a_session_answers_only_the_token_that_opened_it(  # type: ignore[no-untyped-def]
    demo_graph, http_server
) -> None:
    # Found by an attacker: with bob's session id (proxies and logs leak them) another
    # principal's token, sending the same request id, received bob's answer, and could end
    # bob's session with DELETE. A session is its opener's: anyone else gets an unknown one.
    accept = {"Accept": "application/json, text/event-stream"}
    bob = dict(accept, Authorization=f"Bearer {BOB_TOKEN}")
    alice = dict(accept, Authorization=f"Bearer {ALICE_TOKEN}")

    opened = httpx2.post(http_server, json=INITIALIZE, headers=bob, timeout=30)
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert httpx2.post(http_server, json=ready, headers=dict(bob, **{"Mcp-Session-Id": session}),
                       timeout=30).status_code == 202  # fmt: skip
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    on_bobs = dict(alice, **{"Mcp-Session-Id": session})
    stolen = httpx2.post(http_server, json=listing, headers=on_bobs, timeout=30)
    assert stolen.status_code == 404, stolen.text
    assert httpx2.delete(http_server, headers=on_bobs, timeout=30).status_code == 404
    own = httpx2.post(http_server, json=listing, headers=dict(bob, **{"Mcp-Session-Id": session}),
                      timeout=30)  # fmt: skip
    assert own.status_code == 200 and "runbook_lookup" in own.text, own.text


def test_http_a_repeated_session_or_token_header_is_refused(  # type: ignore[no-untyped-def]
    demo_graph, http_server
) -> None:
    # Found by an attacker: the gate read the last Mcp-Session-Id and the SDK the first, so
    # another token with bob's id first and an unknown one last ended bob's session and
    # received his answers. A repeated header is refused before anything runs.
    accept = [("Accept", "application/json, text/event-stream")]

    bob = [*accept, ("Authorization", f"Bearer {BOB_TOKEN}")]
    opened = httpx2.post(http_server, json=INITIALIZE, headers=bob, timeout=30)
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    on_bobs = [*bob, ("Mcp-Session-Id", session)]
    ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert httpx2.post(http_server, json=ready, headers=on_bobs, timeout=30).status_code == 202
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    alice = [*accept, ("Authorization", f"Bearer {ALICE_TOKEN}")]
    twice = [*alice, ("Mcp-Session-Id", session), ("Mcp-Session-Id", "f" * 32)]
    stolen = httpx2.post(http_server, json=listing, headers=twice, timeout=30)
    assert stolen.status_code == 400, stolen.text
    assert "Mcp-Session-Id header is given more than once" in stolen.text
    assert httpx2.delete(http_server, headers=twice, timeout=30).status_code == 400
    two_tokens = [*on_bobs, ("Authorization", f"Bearer {ALICE_TOKEN}")]
    assert httpx2.post(http_server, json=listing, headers=two_tokens, timeout=30).status_code == 400
    own = httpx2.post(http_server, json=listing, headers=on_bobs, timeout=30)
    assert own.status_code == 200 and "runbook_lookup" in own.text, own.text


def test_http_token_is_the_principal(demo_graph, http_server) -> None:  # type: ignore[no-untyped-def]
    runs: dict[str, str] = {}

    async def main() -> None:
        for name, token in (("bob", BOB_TOKEN), ("alice", ALICE_TOKEN)):
            async with http(http_server, token) as client:
                assert len((await client.list_tools()).tools) == 4
                card = ok(
                    await client.call_tool(
                        "runbook_lookup",
                        {"target": "service", "value": "svc:payment-api", "as_of": AS_OF},
                    )
                )
                assert card["subject"] == f"user:{name}"
                runs[name] = card["run_id"]
        # bob cannot read alice's run, even naming it.
        async with http(http_server, BOB_TOKEN) as client:
            refused(await client.call_tool("trace", {"run_id": runs["alice"]}), "not authorized")
            assert ok(await client.call_tool("replay", {"run_id": runs["bob"]}))["verified"]

    run_async(main)
    assert run_owner(demo_graph, runs["bob"]) == ("acme", "user:bob")
    assert run_owner(demo_graph, runs["alice"]) == ("acme", "user:alice")


def test_http_an_agent_retry_without_as_of_returns_the_original_run(  # type: ignore[no-untyped-def]
    demo_graph, http_server
) -> None:
    """Found by an explorer: an agent retrying after a timeout, with the same key and no
    as_of, was told "bad input: ... already used for a different request" (the default as_of,
    now, was in the fingerprint). The retry is the original run; another token is not."""
    ask = {"question": "Who owned svc:payment-api?", "idempotency_key": "mcp-now"}
    runs: dict[str, Any] = {}

    async def main() -> None:
        async with http(http_server, BOB_TOKEN) as client:
            runs["first"] = ok(await client.call_tool("investigate", ask))
            runs["retry"] = ok(await client.call_tool("investigate", ask))
            given = dict(ask, as_of=runs["first"]["as_of"])
            refused(await client.call_tool("investigate", given), "bad input")
        async with http(http_server, ALICE_TOKEN) as client:
            runs["alice"] = ok(await client.call_tool("investigate", ask))

    run_async(main)
    first, retry = runs["first"], runs["retry"]
    assert (retry["run_id"], retry["pack_hash"], retry["as_of"]) == (
        first["run_id"],
        first["pack_hash"],
        first["as_of"],
    )
    assert runs["alice"]["run_id"] != first["run_id"]
    assert run_owner(demo_graph, runs["alice"]["run_id"]) == ("acme", "user:alice")


def test_a_served_trace_says_whether_the_run_verifies(  # type: ignore[no-untyped-def]
    demo_graph, http_server
) -> None:
    """As `trace --json` says it: a run edited in the database after it was recorded is
    served marked (`verified` false, its problems first), never as if it were sound."""
    docs: dict[str, dict[str, Any]] = {}
    lookup = {"target": "service", "value": "svc:payment-api", "as_of": AS_OF}

    async def trace(name: str, fmt: str = "json") -> None:
        async with http(http_server, BOB_TOKEN) as client:
            if "run_id" not in docs:
                docs["run_id"] = ok(await client.call_tool("runbook_lookup", lookup))
            run_id = docs["run_id"]["run_id"]
            docs[name] = ok(await client.call_tool("trace", {"run_id": run_id, "format": fmt}))

    run_async(lambda: trace("sound"))
    assert docs["sound"]["verified"] is True and docs["sound"]["verify_problems"] == []
    run_id = docs["run_id"]["run_id"]
    edited_seq = demo_graph.execute_query(
        "MATCH (n {run_id: $r}) WHERE n.payload IS NOT NULL WITH n ORDER BY n.seq LIMIT 1 "
        "SET n.payload = n.payload + ' ' RETURN n.seq AS seq",
        r=run_id,
    ).records[0]["seq"]
    run_async(lambda: trace("edited"))
    run_async(lambda: trace("edited-prov", "prov-json"))
    edited = docs["edited"]
    assert list(edited)[:3] == ["run_id", "verified", "verify_problems"]
    assert edited["verified"] is False and not edited["chain_valid"]
    assert any(f"chain_invalid: seq {edited_seq}" in p for p in edited["verify_problems"])
    run_activity = docs["edited-prov"]["activity"]["ctx:run-0"]
    assert run_activity["inv:verified"] is False


def _load(url: str, clients: int, calls_each: int) -> tuple[list[str], list[str]]:
    """`clients` concurrent MCP sessions, `calls_each` calls each; (run ids, errors)."""
    run_ids: list[str] = []
    errors: list[str] = []

    async def one_client(index: int) -> None:
        async with http(url, BOB_TOKEN if index % 2 else ALICE_TOKEN) as client:
            for call in range(calls_each):
                if (index + call) % 4 == 0:
                    name, args = (
                        "investigate",
                        {
                            "question": QUESTION,
                            "service": "svc:payment-api",
                            "as_of": AS_OF,
                            "known_at": KNOWN_AT,
                            "deadline_seconds": DEADLINE,
                        },
                    )
                else:
                    name, args = (
                        "runbook_lookup",
                        {
                            "target": "service",
                            "value": "svc:payment-api",
                            "as_of": AS_OF,
                        },
                    )
                result = await client.call_tool(name, args)
                if result.is_error:
                    errors.append(text(result))
                    continue
                run_id = ok(result)["run_id"]
                run_ids.append(run_id)
                report = await client.call_tool("replay", {"run_id": run_id})
                if report.is_error or not ok(report)["verified"]:
                    errors.append(f"{run_id} not verified: {text(report)[:300]}")

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for index in range(clients):
                group.start_soon(one_client, index)

    run_async(main)
    return run_ids, errors


def _check_load(demo_graph: neo4j.Driver, url: str, calls_each: int) -> None:
    runs, errors = _load(url, 16, calls_each)
    assert errors == []
    assert len(runs) == len(set(runs)) == 16 * calls_each
    records, _, _ = demo_graph.execute_query(
        "MATCH (r:CtxRun) WHERE r.run_id IN $ids RETURN r.status AS status, count(*) AS n",
        ids=runs,
    )
    # Finished runs only (an investigation may end `partial` when its deadline cuts a round).
    statuses = {r["status"]: r["n"] for r in records}
    assert sum(statuses.values()) == 16 * calls_each
    assert set(statuses) <= {"complete", "partial"}, statuses


def test_http_16_concurrent_clients_no_error_every_run_verified(  # type: ignore[no-untyped-def]
    demo_graph, http_server
) -> None:
    _check_load(demo_graph, http_server, int(os.environ.get("INVESTIGATOR_MCP_LOAD_CALLS", "2")))


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("INVESTIGATOR_MCP_FULL_LOAD") != "1",
    reason="the issue's full size (400 calls + 400 replays): INVESTIGATOR_MCP_FULL_LOAD=1",
)
def test_http_16_concurrent_clients_x_25(demo_graph, http_server) -> None:  # type: ignore[no-untyped-def]
    _check_load(demo_graph, http_server, int(os.environ.get("INVESTIGATOR_MCP_LOAD_CALLS", "25")))


def test_token_command_and_token_table(invoke, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from investigator.serving.config import load_mcp_config
    from investigator.serving.mcp_server import TokenTable

    result = invoke("mcp", "token", "--subject", "acme/user:carol")
    assert result.code == 0, result
    token = result.out.splitlines()[0].removeprefix("token: ")
    entry = "\n".join(result.out.splitlines()[2:])
    assert token_sha256(token) in entry and token not in entry  # only the hash is kept
    config = tmp_path / "config.toml"
    config.write_text("[mcp]\nport = 9000\n" + entry + "\n", encoding="utf-8")
    loaded = load_mcp_config(config)
    assert loaded.port == 9000 and loaded.host == "127.0.0.1"
    table = TokenTable(loaded.token_principals())
    assert str(table.principal_for(f"Bearer {token}")) == "acme/user:carol"
    assert str(table.principal_for(f"bearer  {token} ")) == "acme/user:carol"
    for refused_header in (None, "", "Bearer", f"Basic {token}", token, f"Bearer {token}x"):
        assert table.principal_for(refused_header) is None

    config.write_text(config.read_text() + entry + "\n", encoding="utf-8")
    with pytest.raises(BadInput, match="listed twice"):
        load_mcp_config(config).token_principals()
    # An id with a quote, a backslash or a hash reads back as itself (printed raw, `x"#`
    # read back as `acme/user:x`: a token for another principal; `x\y` stopped the server).
    for odd in ('acme/user:x"#', "acme/user:x\\y", "acme/user:#1"):
        printed = invoke("mcp", "token", "--subject", odd)
        assert printed.code == 0, printed
        config.write_text("[mcp]\n" + "\n".join(printed.out.splitlines()[2:]) + "\n")
        assert [str(p) for p, _ in load_mcp_config(config).token_principals().values()] == [odd]
    bad = invoke("mcp", "token", "--subject", "user:carol")
    assert bad.code == 2 and bad.err.startswith("error: ") and bad.err.count("\n") == 1


@pytest.fixture()
def tokens_config(tmp_path: Path, cli_env, monkeypatch: pytest.MonkeyPatch) -> Path:  # type: ignore[no-untyped-def]
    """A config with one bearer token, as `investigator mcp` over HTTP needs."""
    config = tmp_path / "config.toml"
    config.write_text(
        f'[mcp]\n[[mcp.tokens]]\nsha256 = "{token_sha256(BOB_TOKEN)}"\nsubject = "acme/user:bob"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("INVESTIGATOR_CONFIG", str(config))
    return config


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--transport", "pigeon"], 2, "'pigeon' is not one of"),
        (["--transport", "http", "--port", "99999"], 2, "not in the range 1<=x<=65535"),
        (["--transport", "http", "--port", "0"], 2, "not in the range 1<=x<=65535"),
        (["--transport", "http", "--port", "-1"], 2, "not in the range 1<=x<=65535"),
        (["--transport", "http", "--port", "80a"], 2, "is not a whole number (digits 0-9)"),
        (["--port", "8765"], 2, "apply to --transport http only"),
        (["--transport", "http", "--subject", "acme/user:bob"], 2, "principal of each bearer"),
        (["--transport", "http", "--host", "no-such-host.invalid"], 2, "names no address"),
        (["--transport", "http", "--host", "192.0.2.1"], 1, "cannot listen on 192.0.2.1:8765"),
        (["--transport", "http", "--max-concurrent", "0"], 2, "--max-concurrent"),
    ],
)
def test_mcp_refuses_bad_input_with_one_line_before_serving(
    tokens_config: Path, args: list[str], code: int, message: str
) -> None:
    res = invoke_process("mcp", *args)
    assert res.code == code, res
    assert res.out == "" and res.err.count("\n") == 1 and message in res.err, res.err
    assert "serving" not in res.err


@pytest.mark.parametrize(
    ("family", "host", "shown"),
    [(socket.AF_INET, "127.0.0.1", "127.0.0.1"), (socket.AF_INET6, "::1", "[::1]")],
)
def test_mcp_over_http_on_a_port_in_use_is_one_line_not_a_server_log(
    tokens_config: Path, family: socket.AddressFamily, host: str, shown: str
) -> None:
    with socket.socket(family) as taken:
        try:
            taken.bind((host, 0))
        except OSError:
            pytest.skip(f"{host} is not configured on this machine")
        taken.listen()
        port = taken.getsockname()[1]
        res = invoke_process("mcp", "--transport", "http", "--host", host, "--port", str(port))
    assert res.code == 1 and res.out == "", res
    assert res.err == f"error: cannot listen on {shown}:{port}: Address already in use\n"


def test_mcp_http_without_tokens_is_refused(  # type: ignore[no-untyped-def]
    tmp_path: Path, cli_env, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    monkeypatch.setenv("INVESTIGATOR_CONFIG", str(tmp_path / "empty.toml"))
    res = invoke_process("mcp", "--transport", "http")
    assert res.code == 2 and res.out == "" and res.err.count("\n") == 1, res
    assert "no bearer tokens" in res.err and "investigator mcp token" in res.err


def test_mcp_config_is_read_by_the_one_config_reader(tmp_path: Path) -> None:
    from investigator.serving.config import DEFAULT_PORT, load_mcp_config

    config = tmp_path / "config.toml"
    assert load_mcp_config(config).port == DEFAULT_PORT  # no file: the defaults
    config.write_text('[neo4j]\nuri = "bolt://x:7687"\n', encoding="utf-8")
    assert load_mcp_config(config).tokens == []  # no [mcp] table: the defaults
    for text, message in (
        ("[mcp\n", "is not valid TOML"),
        ('mcp = "on"\n', r"\[mcp\] must be a table"),
        ("[mcp]\nport = 0\n", r"\[mcp\] port: "),
        ('[[mcp.tokens]]\nsha256 = "abc"\nsubject = "acme/user:bob"\n', "64 hex digits"),
    ):
        config.write_text(text, encoding="utf-8")
        with pytest.raises(BadInput, match=message):
            load_mcp_config(config)


def test_served_documents_are_the_documents_the_cli_prints(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    from cypher_templates.subject import SubjectRef
    from investigator.serving.backend import RunbookInput, ServingBackend

    bob = ["--subject", "acme/user:bob"]
    backend = ServingBackend(cli_env, driver=demo_graph)
    served = json.loads(
        backend.runbook(
            SubjectRef(tenant="acme", id="user:bob"),
            RunbookInput(target="service", value="svc:payment-api", as_of=AS_OF),
        )
    )
    cli = invoke("runbook", "--service", "svc:payment-api", "--as-of", AS_OF, *bob, "--json")
    assert cli.code == 0, cli
    printed = json.loads(cli.out)
    assert list(printed) == list(served)
    # Two runs: their ids and the moment they were known at differ, nothing else.
    moving = {"run_id", "known_at"}
    assert {k: v for k, v in printed.items() if k not in moving} == {
        k: v for k, v in served.items() if k not in moving
    }

    run_id = printed["run_id"]
    ref = SubjectRef(tenant="acme", id="user:bob")
    for fmt in ("json", "prov-json"):
        cli = invoke("trace", run_id, "--format", fmt, *bob)
        assert cli.code == 0, cli
        assert cli.out == backend.trace(ref, run_id, fmt) + "\n"
    cli = invoke("replay", run_id, *bob, "--json")
    assert cli.code == 0, cli
    assert json.loads(cli.out) == json.loads(backend.replay(ref, run_id))


def test_http_a_malformed_tool_call_gets_the_same_line_as_over_stdio(  # type: ignore[no-untyped-def]
    demo_graph, http_server
) -> None:
    accept = {"Accept": "application/json, text/event-stream"}
    bob = dict(accept, Authorization=f"Bearer {BOB_TOKEN}")
    opened = httpx2.post(http_server, json=INITIALIZE, headers=bob, timeout=30)
    assert opened.status_code == 200, opened.text
    in_session = dict(bob, **{"Mcp-Session-Id": opened.headers["mcp-session-id"]})
    ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert httpx2.post(http_server, json=ready, headers=in_session, timeout=30).status_code == 202
    for n, (params, said) in enumerate(MALFORMED_CALLS[:4]):
        call = {"jsonrpc": "2.0", "id": 10 + n, "method": "tools/call", "params": params}
        response = httpx2.post(http_server, json=call, headers=in_session, timeout=30)
        assert response.status_code == 200, response.text
        data = [ln[5:] for ln in response.text.splitlines() if ln.startswith("data:")]
        answer = json.loads(data[0] if data else response.text)
        assert answer["result"]["isError"] is True, answer
        assert [c["text"] for c in answer["result"]["content"]] == [said], answer
