"""`investigator mcp --transport http`: one caller cannot exhaust the server for the others.
A connection that never finishes its request head is closed, so nobody without a token can
hold the server's connections; a principal has at most `[mcp] max_calls_per_principal`
requests in flight (429 beyond), so its flood does not queue everyone else's calls behind
it. Real server process, real Neo4j.

Found by attacking the served surface (session 35): uvicorn sets no limit on the time to
send a request's head, so a client with no token kept a connection open for ever by sending
nothing, or a header a byte at a time; enough of them take every file descriptor the
server has, and then nobody is served. And one token's 40 concurrent calls took every
worker thread: alice's 2 s lookup waited 49 s behind them.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from test_serving_mcp import (
    ALICE_TOKEN,
    AS_OF,
    BOB_TOKEN,
    INITIALIZE,
    TIMEOUT,
    _http_serving,
    bob_and_alice_config,
    ctx_runs,
    server_environ,
)

from investigator.serving.mcp_server import REQUEST_HEAD_SECONDS, TOO_MANY_CALLS

# Room for a loaded machine past the limit; before the fix these stayed open for good.
GRACE = 20.0


def _serving(config: Path, node: pytest.Item) -> contextlib.AbstractContextManager[tuple[str, str]]:
    """The server with `config` and the test run's read timeout (a loaded machine)."""
    env = server_environ(("INVESTIGATOR_", "OTEL_"))
    env["INVESTIGATOR_CONFIG"] = str(config)
    return _http_serving(env, node)


@pytest.fixture()
def served_port(demo_graph, cli_env, tmp_path: Path, request) -> Iterator[int]:  # type: ignore[no-untyped-def]
    path = bob_and_alice_config(tmp_path / "config.toml", "")
    with _serving(path, request.node) as (url, _):
        yield int(url.rsplit(":", 1)[1].split("/", 1)[0])


def _held_for(port: int, first: bytes, drip: bool, said: dict[str, float | None]) -> None:
    """Open a connection, send `first` (and a byte a second while `drip`), and note how long
    the server kept it open (None: still open after the limit and GRACE)."""
    key = f"{first[:20]!r} drip={drip}"
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        if first:
            sock.sendall(first)
        opened = time.monotonic()
        sock.settimeout(1.0)
        while time.monotonic() - opened < REQUEST_HEAD_SECONDS + GRACE:
            try:
                if sock.recv(1024) == b"":
                    said[key] = time.monotonic() - opened
                    return
            except TimeoutError:
                if drip:
                    try:
                        sock.sendall(b"a")
                    except OSError:
                        said[key] = time.monotonic() - opened
                        return
            except OSError:  # reset by the server
                said[key] = time.monotonic() - opened
                return
        said[key] = None


def test_a_connection_that_never_finishes_its_request_head_is_closed(served_port: int) -> None:
    said: dict[str, float | None] = {}
    slow = [
        (b"", False),  # connects and says nothing
        (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n", False),  # half a head, then nothing
        (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ", True),  # a header, a byte a second
    ]
    threads = [
        threading.Thread(target=_held_for, args=(served_port, first, drip, said))
        for first, drip in slow
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(said) == len(slow), said
    still_open = [key for key, held in said.items() if held is None]
    assert not still_open, f"held open past {REQUEST_HEAD_SECONDS + GRACE} s: {still_open}"
    for key, held in said.items():
        assert held is not None and held >= REQUEST_HEAD_SECONDS - 1, (key, held)

    # A client that takes a few seconds to start, then sends its request, is served.
    body = json.dumps(INITIALIZE).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{served_port}\r\n"  # the SDK checks the port
        f"Authorization: Bearer {BOB_TOKEN}\r\n"
        "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", served_port), timeout=120) as sock:
        time.sleep(2)
        sock.sendall(head[:20])
        time.sleep(2)
        sock.sendall(head[20:] + body)
        assert sock.recv(64).startswith(b"HTTP/1.1 200"), "a complete request was not served"


CALLS = 2  # the cap of the server below
LOOKUP = {"target": "service", "value": "svc:payment-api", "as_of": AS_OF}


@pytest.fixture()
def call_capped_server(demo_graph, cli_env, tmp_path: Path, request) -> Iterator[str]:  # type: ignore[no-untyped-def]
    path = bob_and_alice_config(tmp_path / "config.toml", f"max_calls_per_principal = {CALLS}\n")
    with _serving(path, request.node) as (url, _):
        yield url


def _session(url: str, token: str) -> dict[str, str]:
    """Headers of a new session of `token`'s principal (opened and initialized)."""
    headers = {
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {token}",
    }
    opened = httpx2.post(url, json=INITIALIZE, headers=headers, timeout=TIMEOUT)
    assert opened.status_code == 200, opened.text
    headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
    headers["MCP-Protocol-Version"] = "2025-06-18"
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert httpx2.post(url, json=note, headers=headers, timeout=TIMEOUT).status_code == 202
    return headers


def _lookup(url: str, headers: dict[str, str], request_id: int) -> httpx2.Response:
    call = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "runbook_lookup", "arguments": LOOKUP},
    }
    return httpx2.post(url, json=call, headers=headers, timeout=TIMEOUT)


def _served(response: httpx2.Response) -> bool:
    """A tool result that is no error (the SDK answers a call as one server-sent event)."""
    data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
    result = json.loads(data[-1]).get("result") if data else None
    return response.status_code == 200 and isinstance(result, dict) and not result.get("isError")


def test_a_principal_has_at_most_its_cap_of_calls_in_flight_and_others_are_served(  # type: ignore[no-untyped-def]
    demo_graph, call_capped_server: str
) -> None:
    url = call_capped_server
    bob, alice = _session(url, BOB_TOKEN), _session(url, ALICE_TOKEN)
    before = ctx_runs(demo_graph)
    answers: list[httpx2.Response] = []
    flood = [
        threading.Thread(target=lambda i=i: answers.append(_lookup(url, bob, 100 + i)))
        for i in range(3 * CALLS)
    ]
    for thread in flood:
        thread.start()
    alices = _lookup(url, alice, 7)
    for thread in flood:
        thread.join()

    assert _served(alices), alices.text
    refused = [r for r in answers if r.status_code == 429]
    assert refused, [r.status_code for r in answers]
    for response in refused:
        error = response.json()["error"]
        assert error["code"] == TOO_MANY_CALLS
        assert error["data"] == {"max_calls_per_principal": CALLS}
        assert "max_calls_per_principal" in error["message"], error
        assert "acme/user:bob" in error["message"], error
        assert response.headers["retry-after"] == "1"
    served = [r for r in answers if r.status_code != 429]
    assert all(_served(r) for r in served), [r.text[:200] for r in served]
    # A refused call ran nothing: only the served ones were recorded.
    assert ctx_runs(demo_graph) - before == len(served) + 1
    # Its calls answered, bob has its room back.
    assert _served(_lookup(url, bob, 200))
