"""`investigator mcp` configured badly fails at start in one line, not at every call; tool
numbers are strict; bearer tokens may expire. Real Neo4j, the demo dataset, the SDK client.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest
from conftest import invoke_process
from test_serving_mcp import (
    INITIALIZE,
    TIMEOUT,
    _free_port,
    ctx_runs,
    http_server_with,
    ok,
    refused,
    run_async,
    server_environ,
    stdio,
)

from investigator.errors import BadInput
from investigator.serving.config import load_mcp_config
from investigator.serving.mcp_server import TokenTable, token_sha256

TOKEN = "test-token-config-0123456789"
OTHER = "test-token-config-other-0123"
LATER = "test-token-config-later-0123"


def _config(path: Path, body: str) -> Path:
    path.write_text(body, encoding="utf-8")
    return path


def _entry(token: str, subject: str, extra: str = "") -> str:
    return f'[[mcp.tokens]]\nsha256 = "{token_sha256(token)}"\nsubject = "{subject}"\n{extra}'


@pytest.fixture()
def use_config(tmp_path: Path, cli_env, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Write the config file the server reads (INVESTIGATOR_CONFIG)."""

    def write(body: str) -> Path:
        path = _config(tmp_path / "config.toml", body)
        monkeypatch.setenv("INVESTIGATOR_CONFIG", str(path))
        return path

    return write


def _one_line(res: Any, code: int) -> str:
    assert res.code == code and res.out == "", res
    assert res.err.startswith("error: ") and res.err.count("\n") == 1, res.err
    assert "serving" not in res.err
    return str(res.err)


# -- 1. a purpose nobody holds ---------------------------------------------------------------


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_purpose_no_principal_holds_refuses_the_start(  # type: ignore[no-untyped-def]
    demo_graph, use_config, transport: str
) -> None:
    # It started, and then every call said "not allowed purpose 'god'".
    path = use_config('[mcp]\npurpose = "god"\n' + _entry(TOKEN, "acme/user:bob"))
    args = ["--subject", "acme/user:bob"] if transport == "stdio" else ["--transport", "http"]
    if transport == "http":
        args += ["--port", str(_free_port())]
    err = _one_line(invoke_process("mcp", *args, timeout=30), 2)
    assert f"config file {path}: [mcp] purpose 'god' is held by no principal" in err, err
    assert "audit, incident_investigation, runbook_lookup" in err, err
    # The flag is checked the same way, and named as the flag.
    flag = _one_line(invoke_process("mcp", *args, "--purpose", "legal", timeout=30), 2)
    assert "--purpose 'legal' is held by no principal" in flag, flag


# -- 2. a token entry without a tenant -------------------------------------------------------


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_token_entry_without_a_tenant_refuses_the_start_naming_the_entry(  # type: ignore[no-untyped-def]
    demo_graph, use_config, transport: str
) -> None:
    # INVESTIGATOR_TENANT=acme is set (cli_env): the CLI user's tenant is not a token's.
    use_config(
        "[mcp]\n"
        + _entry(OTHER, "acme/user:alice")
        + _entry(TOKEN, "user:bob", 'name = "ci bot"\n')
    )
    args = ["--subject", "acme/user:bob"] if transport == "stdio" else ["--transport", "http"]
    err = _one_line(invoke_process("mcp", *args, timeout=30), 2)
    assert "[[mcp.tokens]] entry 2 (name 'ci bot')" in err, err
    assert "'user:bob' has no tenant" in err and 'add tenant = "..." to the entry' in err, err
    assert "--tenant" not in err, err  # over HTTP that flag is refused


def test_a_token_entry_with_its_tenant_written_apart_is_read(tmp_path: Path) -> None:
    path = _config(tmp_path / "c.toml", "[mcp]\n" + _entry(TOKEN, "user:bob", 'tenant = "acme"\n'))
    [(ref, expires)] = load_mcp_config(path).token_principals().values()
    assert str(ref) == "acme/user:bob" and expires is None


# -- 3. strict numbers -----------------------------------------------------------------------


def test_tool_numbers_are_strict(demo_graph, cli_env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    env = server_environ(("INVESTIGATOR_", "OTEL_"))
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    env["INVESTIGATOR_CONFIG"] = str(tmp_path / "empty.toml")
    q = "who owns payment-api?"
    before = ctx_runs(demo_graph)

    async def main() -> None:
        async with stdio(env, "--subject", "acme/user:bob") as client:
            for field, value in (
                ("max_rounds", True),  # read as 1 round
                ("max_rounds", 2.0),
                ("max_rounds", "3"),
                ("budget_tokens", "1000"),
                ("budget_tokens", False),
                ("budget_tokens", 1000.0),
                ("deadline_seconds", True),
                ("deadline_seconds", "5"),
            ):
                line = refused(
                    await client.call_tool("investigate", {"question": q, field: value}),
                    f"bad input: {field}",
                )
                assert "Traceback" not in line
        assert ctx_runs(demo_graph) == before  # nothing ran

        async with stdio(env, "--subject", "acme/user:bob") as client:
            # A whole number of seconds is a number of seconds.
            doc = ok(
                await client.call_tool(
                    "investigate", {"question": q, "max_rounds": 1, "deadline_seconds": 600}
                )
            )
            assert doc["run_id"].startswith("run-")

    run_async(main)


# -- 4. a token for a principal the KG does not have -----------------------------------------


def test_token_command_warns_about_an_unknown_principal(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    unknown = invoke("mcp", "token", "--subject", "acme/user:nobody")
    assert unknown.code == 0 and unknown.out.startswith("token: inv_"), unknown
    assert unknown.err.count("\n") == 1, unknown.err
    assert "acme/user:nobody is no principal in the KG" in unknown.err, unknown.err
    known = invoke("mcp", "token", "--subject", "acme/user:bob")
    assert known.code == 0 and known.err == "", known


# -- 5. tokens that expire -------------------------------------------------------------------


def test_token_command_writes_an_expiry_the_config_reads(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, tmp_path: Path
) -> None:
    made = invoke("mcp", "token", "--subject", "acme/user:bob", "--expires-in", "30d")
    assert made.code == 0, made
    lines = made.out.splitlines()
    assert lines[-1].startswith("expires_at = ") and lines[-1].endswith("Z"), lines
    path = _config(tmp_path / "c.toml", "[mcp]\n" + "\n".join(lines[2:]) + "\n")
    [(ref, expires)] = load_mcp_config(path).token_principals().values()
    assert str(ref) == "acme/user:bob" and expires is not None
    assert abs(expires - (datetime.now(UTC) + timedelta(days=30))) < timedelta(minutes=5)
    for bad in ("0d", "30", "1y", "-1d", "3651d", "1.5d"):
        refused_arg = invoke("mcp", "token", "--subject", "acme/user:bob", "--expires-in", bad)
        assert refused_arg.code == 2 and refused_arg.out == "", (bad, refused_arg)
        assert "is not a duration such as 30d" in refused_arg.err


def test_an_expiry_needs_a_zone(tmp_path: Path) -> None:
    path = _config(
        tmp_path / "c.toml",
        "[mcp]\n" + _entry(TOKEN, "acme/user:bob", "expires_at = 2027-01-01T00:00:00\n"),
    )
    with pytest.raises(
        BadInput, match=r"\[mcp\] tokens\.0\.expires_at: Input should have timezone info"
    ):
        load_mcp_config(path)


def test_a_token_is_refused_from_its_expiry_on(tmp_path: Path) -> None:
    expires = datetime(2027, 1, 1, tzinfo=UTC)
    path = _config(
        tmp_path / "c.toml",
        "[mcp]\n" + _entry(TOKEN, "acme/user:bob", 'expires_at = "2027-01-01T01:00:00+01:00"\n'),
    )
    now = [expires - timedelta(seconds=1)]
    table = TokenTable(load_mcp_config(path).token_principals(), clock=lambda: now[0])
    assert str(table.principal_for(f"Bearer {TOKEN}")) == "acme/user:bob"
    now[0] = expires  # the wall clock, at each request
    assert table.principal_for(f"Bearer {TOKEN}") is None


@pytest.fixture()
def expiring_server(demo_graph, cli_env, tmp_path: Path, request) -> Iterator[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """An HTTP server with one expired token (bob's), one that is not (alice's) and one for
    a principal the KG does not have yet."""
    path = _config(
        tmp_path / "config.toml",
        "[mcp]\n"
        + _entry(TOKEN, "acme/user:bob", "expires_at = 2026-01-01T00:00:00Z\n")
        + _entry(OTHER, "acme/user:alice", "expires_at = 2099-01-01T00:00:00Z\n")
        + _entry(LATER, "acme/user:nobody", 'name = "later"\n'),
    )
    with http_server_with(path, request.node) as served:
        yield served


def test_http_refuses_an_expired_token_as_an_unknown_one(  # type: ignore[no-untyped-def]
    demo_graph, expiring_server
) -> None:
    url, started = expiring_server
    assert "[[mcp.tokens]] entry 1" in started and "acme/user:bob" in started, started
    assert "expired at 2026-01-01T00:00:00Z" in started, started
    # Warned about, once, and served: the principal may be ingested while the server runs.
    assert (
        "warning: [[mcp.tokens]] entry 3 (name 'later'): acme/user:nobody is no principal "
        "in the KG (yet)" in started
    ), started
    assert started.count("\n") == 3, started  # two warnings, then "serving"
    accept = {"Accept": "application/json, text/event-stream"}
    before = ctx_runs(demo_graph)
    expired = httpx2.post(
        url, json=INITIALIZE, headers=dict(accept, Authorization=f"Bearer {TOKEN}"), timeout=TIMEOUT
    )
    assert expired.status_code == 401, expired.text
    assert expired.headers["www-authenticate"].startswith("Bearer")
    assert json.loads(expired.text) == {
        "error": "unauthorized",
        "detail": "a valid bearer token is required",
    }
    live = httpx2.post(
        url, json=INITIALIZE, headers=dict(accept, Authorization=f"Bearer {OTHER}"), timeout=TIMEOUT
    )
    assert live.status_code == 200, live.text
    assert ctx_runs(demo_graph) == before


def test_http_with_every_token_expired_refuses_to_start(  # type: ignore[no-untyped-def]
    demo_graph, use_config
) -> None:
    use_config("[mcp]\n" + _entry(TOKEN, "acme/user:bob", "expires_at = 2026-01-01T00:00:00Z\n"))
    port = str(_free_port())
    err = _one_line(invoke_process("mcp", "--transport", "http", "--port", port, timeout=30), 2)
    assert "every bearer token" in err and "has expired" in err, err
