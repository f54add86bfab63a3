"""`investigator mcp` over HTTP: one principal cannot take every session. A principal holds
at most `[mcp] max_sessions_per_principal` open sessions (429 beyond it, a JSON-RPC error
naming the cap), other principals are served, and sessions the SDK ends (DELETE, idle
timeout) are forgotten, so their room comes back. Real server process, real Neo4j.

Found by exploratory testing: one token opened 10,000 sessions (the SDK's limit for the
whole server) in 148 s without closing any, and every other principal then got 503 for 30
minutes; the gate's session-owner map only shrank on DELETE.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from test_serving_mcp import (
    ALICE_TOKEN,
    BOB_TOKEN,
    INITIALIZE,
    TIMEOUT,
    bob_and_alice_config,
    ctx_runs,
    http_server_with,
    run_async,
)

from investigator.errors import BadInput
from investigator.serving.config import load_mcp_config

CAP = 3
IDLE = 10  # seconds: long enough for the steps that need bob's sessions open
ACCEPT = {"Accept": "application/json, text/event-stream"}
BOB = dict(ACCEPT, Authorization=f"Bearer {BOB_TOKEN}")
ALICE = dict(ACCEPT, Authorization=f"Bearer {ALICE_TOKEN}")
LISTING = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


@pytest.fixture()
def capped_server(demo_graph, cli_env, tmp_path: Path, request) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """An HTTP server whose principals hold at most CAP sessions, idle ones ended after IDLE s."""
    settings = f"max_sessions_per_principal = {CAP}\nsession_idle_seconds = {IDLE}\n"
    path = bob_and_alice_config(tmp_path / "config.toml", settings)
    with http_server_with(path, request.node) as (url, _):
        yield url


def legacy(url: str, token: str) -> Client:
    """The SDK's client speaking the handshake era, which opens a session (its default
    `auto` mode finds the server's sessionless revision first and opens none)."""
    client = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30.0, read=TIMEOUT)
    )
    return Client(
        streamable_http_client(url, http_client=client),
        read_timeout_seconds=TIMEOUT,
        mode="legacy",
    )


def _open(url: str, headers: dict[str, str]) -> httpx2.Response:
    return httpx2.post(url, json=INITIALIZE, headers=headers, timeout=TIMEOUT)


def _burst(url: str, headers: dict[str, str], n: int) -> list[httpx2.Response]:
    """`n` session-opening requests at once (as a client pool or a flood sends them)."""
    answers: list[httpx2.Response] = []

    async def main() -> None:
        async with httpx2.AsyncClient(timeout=TIMEOUT) as client:

            async def one() -> None:
                answers.append(await client.post(url, json=INITIALIZE, headers=headers))

            async with anyio.create_task_group() as group:
                for _ in range(n):
                    group.start_soon(one)

    run_async(main)
    return answers


def _is_cap_refusal(response: httpx2.Response) -> bool:
    if response.status_code != 429:
        return False
    body = json.loads(response.text)
    error = body["error"]
    assert body["jsonrpc"] == "2.0" and body["id"] is None, body
    assert error["code"] == -32000 and error["data"] == {"max_sessions_per_principal": CAP}
    assert "too many open sessions: acme/user:bob holds 3" in error["message"], error
    assert "max_sessions_per_principal" in error["message"], error
    assert "mcp-session-id" not in response.headers
    return True


def test_a_principal_at_its_session_cap_is_refused_and_other_principals_are_served(  # type: ignore[no-untyped-def]
    demo_graph, capped_server
) -> None:
    url = capped_server
    before = ctx_runs(demo_graph)
    # A flood of session openings from one token: CAP sessions, the rest refused, also when
    # they all arrive before the first is answered.
    flood = _burst(url, BOB, 12)
    opened = [r for r in flood if r.status_code == 200]
    assert len(opened) == CAP, [r.status_code for r in flood]
    assert all(_is_cap_refusal(r) for r in flood if r.status_code != 200)
    sessions = [r.headers["mcp-session-id"] for r in opened]
    assert _is_cap_refusal(_open(url, BOB))

    # The SDK's own client says why it cannot connect.
    async def refused_client() -> None:
        with pytest.raises(ExceptionGroup) as refused:
            async with legacy(url, BOB_TOKEN) as client:
                await client.list_tools()
        assert refused.group_contains(
            MCPError, match="too many open sessions: acme/user:bob holds 3", depth=None
        ), refused.value

    run_async(refused_client)

    # Ending one with DELETE gives its room back, and only its room.
    ended = httpx2.delete(url, headers=dict(BOB, **{"Mcp-Session-Id": sessions[0]}), timeout=30)
    assert ended.status_code == 200, ended.text
    assert _open(url, BOB).status_code == 200
    assert _is_cap_refusal(_open(url, BOB))

    # Another principal is served all the while: its own CAP sessions, a real client's too.
    for _ in range(CAP - 1):
        assert _open(url, ALICE).status_code == 200

    async def alices_client() -> None:
        async with legacy(url, ALICE_TOKEN) as client:
            assert len((await client.list_tools()).tools) == 4

    run_async(alices_client)
    # bob's sessions stay his: alice naming one is told it does not exist.
    stolen = httpx2.post(
        url, json=LISTING, headers=dict(ALICE, **{"Mcp-Session-Id": sessions[1]}), timeout=30
    )
    assert stolen.status_code == 404, stolen.text
    assert ctx_runs(demo_graph) == before


def test_sessions_the_sdk_ends_when_idle_give_their_room_back(  # type: ignore[no-untyped-def]
    demo_graph, capped_server
) -> None:
    url = capped_server
    sessions = [_open(url, BOB).headers["mcp-session-id"] for _ in range(CAP)]
    assert _is_cap_refusal(_open(url, BOB))
    # The SDK ends each after IDLE s without a request; the gate forgets them with it, so
    # bob may open CAP new ones (the gate counted the ended ones for ever before).
    deadline = time.monotonic() + IDLE + 60
    while (first := _open(url, BOB)).status_code != 200:
        assert _is_cap_refusal(first)
        assert time.monotonic() < deadline, "bob's idle sessions were never given back"
        time.sleep(0.5)
    for _ in range(CAP - 1):
        assert _open(url, BOB).status_code == 200
    assert _is_cap_refusal(_open(url, BOB))
    for session in sessions:  # the ended ones are unknown now, to their owner too
        gone = httpx2.post(
            url, json=LISTING, headers=dict(BOB, **{"Mcp-Session-Id": session}), timeout=30
        )
        assert gone.status_code == 404, gone.text


def test_session_settings_are_read_from_the_mcp_table(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    defaults = load_mcp_config(config)  # no file: the documented defaults
    assert defaults.model_dump(include={"max_sessions_per_principal", "session_idle_seconds"}) == {
        "max_sessions_per_principal": 32,
        "session_idle_seconds": 1800,
    }
    config.write_text(
        "[mcp]\nmax_sessions_per_principal = 5\nsession_idle_seconds = 600\n", encoding="utf-8"
    )
    loaded = load_mcp_config(config)
    assert (loaded.max_sessions_per_principal, loaded.session_idle_seconds) == (5, 600)
    for text, message in (
        ("max_sessions_per_principal = 0", "greater than or equal to 1"),
        ("max_sessions_per_principal = 10001", "less than or equal to 10000"),
        ("max_sessions_per_principal = true", "valid integer"),
        ('max_sessions_per_principal = "8"', "valid integer"),
        ("session_idle_seconds = 0", "greater than or equal to 1"),
        ("session_idle_seconds = 1.5", "valid integer"),
    ):
        config.write_text(f"[mcp]\n{text}\n", encoding="utf-8")
        with pytest.raises(BadInput, match=rf"\[mcp\] {text.split()[0]}: .*{message}"):
            load_mcp_config(config)
