"""`investigator mcp --transport http`: a connection that never finishes its request head is
closed, so nobody without a token can hold the server's connections. Real server process.

Found by attacking the served surface (session 35): uvicorn sets no limit on the time to
send a request's head, so a client with no token kept a connection open for ever by sending
nothing, or a header a byte at a time; enough of them take every file descriptor the
server has, and then nobody is served.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_serving_mcp import BOB_TOKEN, INITIALIZE, http_server_with

from investigator.serving.mcp_server import REQUEST_HEAD_SECONDS, token_sha256

# Room for a loaded machine past the limit; before the fix these stayed open for good.
GRACE = 20.0


@pytest.fixture()
def served_port(demo_graph, cli_env, tmp_path: Path, request) -> Iterator[int]:  # type: ignore[no-untyped-def]
    path = tmp_path / "config.toml"
    path.write_text(
        f'[mcp]\n[[mcp.tokens]]\nsha256 = "{token_sha256(BOB_TOKEN)}"\nsubject = "acme/user:bob"\n',
        encoding="utf-8",
    )
    with http_server_with(path, request.node) as (url, _):
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
