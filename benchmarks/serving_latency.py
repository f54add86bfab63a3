"""Served vs CLI latency: runbook lookup and the seed investigation, in the same run.

Usage (against the server NEO4J_* or the local server points at; it applies the schema and
ingests the demo dataset, idempotently, and adds Ctx runs):
    .venv/bin/python benchmarks/serving_latency.py --rounds 30 --cli-rounds 5
    .venv/bin/python benchmarks/serving_latency.py --rounds 30 --http

"Served" is `investigator mcp` over stdio (and, with --http, over streamable HTTP with a
bearer token), driven by the official MCP SDK client: one server process keeps its driver,
proven templates and imports, so after three warm-up calls each call is the warm path.
Each measured call is what the MCP client waits for: the JSON-RPC round trip, subject
load, every template call, the gate and the Context Graph recording. "CLI" is one
`investigator ... --json` process per call (imports, driver, first-use template proofs).
Goals (issue 14): served runbook lookup p50 <= 50 ms, served seed investigation p50 <= 150 ms.
Prints a Markdown table for docs/benchmarks.md. A measurement tool, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from graph_schema.bundle import load_bundle
from graph_schema.schema_ddl import apply_schema
from graph_schema.writer import ingest_bundle
from investigator.connection import open_driver
from investigator.serving.mcp_server import token_sha256
from investigator.settings import resolve_connection

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO / "datasets" / "payments-incident"
INVESTIGATOR = str(Path(sys.executable).parent / "investigator")
SUBJECT = "acme/user:bob"
AS_OF = "2026-07-23T10:03:00Z"
QUESTION = (
    "Was the 10:02 release of payment-api related to the PAY-4097 errors? "
    "Who owned payment-api at that moment? Which runbook version applied?"
)
RUNBOOK_ARGS = {"target": "service", "value": "svc:payment-api", "as_of": AS_OF}
INVESTIGATE_ARGS = {"question": QUESTION, "service": "svc:payment-api", "as_of": AS_OF}
CLI_RUNBOOK = ["runbook", "--service", "svc:payment-api", "--as-of", AS_OF]
CLI_INVESTIGATE = ["investigate", QUESTION, "--service", "svc:payment-api", "--as-of", AS_OF]
GOALS_MS = {"runbook_lookup": 50.0, "investigate": 150.0}
TOKEN = "bench-token-" + os.urandom(8).hex()


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _connection_env() -> dict[str, str]:
    settings = resolve_connection()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "OTEL_"))}
    env.update(
        NEO4J_URI=settings.uri,
        NEO4J_USER=settings.user,
        NEO4J_PASSWORD=settings.password.get_secret_value(),
    )
    if settings.database:
        env["NEO4J_DATABASE"] = settings.database
    env.pop("INVESTIGATOR_SUBJECT", None)
    return env


async def _measure(client: Client, name: str, args: dict[str, Any], rounds: int) -> list[float]:
    timings: list[float] = []
    for i in range(3 + rounds):
        started = time.perf_counter()
        result = await client.call_tool(name, args)
        elapsed = (time.perf_counter() - started) * 1000.0
        if result.is_error:
            raise SystemExit(f"{name} failed: {getattr(result.content[0], 'text', '')}")
        if i >= 3:  # three warm-up calls
            timings.append(elapsed)
    return timings


def _served(connect: Callable[[], Client], rounds: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}

    async def main() -> None:
        async with connect() as client:
            out["runbook_lookup"] = await _measure(client, "runbook_lookup", RUNBOOK_ARGS, rounds)
            out["investigate"] = await _measure(client, "investigate", INVESTIGATE_ARGS, rounds)

    run: Callable[[], Awaitable[None]] = main
    anyio.run(run)
    return out


def _stdio_client(env: dict[str, str]) -> Callable[[], Client]:
    params = StdioServerParameters(
        command=INVESTIGATOR, args=["mcp", "--subject", SUBJECT], env=env, cwd=REPO
    )
    return lambda: Client(params, read_timeout_seconds=600)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _http_server(env: dict[str, str], config_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    config = config_dir / "config.toml"
    config.write_text(
        f'[mcp]\n[[mcp.tokens]]\nsha256 = "{token_sha256(TOKEN)}"\nsubject = "{SUBJECT}"\n',
        encoding="utf-8",
    )
    port = _free_port()
    proc = subprocess.Popen(
        [INVESTIGATOR, "mcp", "--transport", "http", "--port", str(port)],
        env={**env, "INVESTIGATOR_CONFIG": str(config)},
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the MCP HTTP server did not start") from None
            time.sleep(0.2)
    return proc, f"http://127.0.0.1:{port}/mcp"


def _http_client(url: str) -> Callable[[], Client]:
    def connect() -> Client:
        http = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {TOKEN}"}, timeout=httpx2.Timeout(30, read=600)
        )
        return Client(streamable_http_client(url, http_client=http), read_timeout_seconds=600)

    return connect


def _in_process(rounds: int) -> dict[str, list[float]]:
    """The same calls on the server's adapter directly: what MCP itself adds is the gap."""
    from cypher_templates.subject import SubjectRef
    from investigator.serving.backend import InvestigateInput, RunbookInput, ServingBackend

    backend = ServingBackend(resolve_connection())
    subject = SubjectRef.parse(SUBJECT)
    calls: dict[str, Callable[[], str]] = {
        "runbook_lookup": lambda: backend.runbook(subject, RunbookInput(**RUNBOOK_ARGS)),
        "investigate": lambda: backend.investigate(subject, InvestigateInput(**INVESTIGATE_ARGS)),
    }
    out: dict[str, list[float]] = {}
    try:
        for name, call in calls.items():
            timings = []
            for i in range(3 + rounds):
                started = time.perf_counter()
                call()
                if i >= 3:
                    timings.append((time.perf_counter() - started) * 1000.0)
            out[name] = timings
    finally:
        backend.close()
    return out


def _cli(env: dict[str, str], args: list[str], rounds: int) -> list[float]:
    timings = []
    for _ in range(rounds):
        started = time.perf_counter()
        proc = subprocess.run(
            [INVESTIGATOR, *args, "--subject", SUBJECT, "--json"],
            env=env,
            capture_output=True,
            check=False,
        )
        timings.append((time.perf_counter() - started) * 1000.0)
        if proc.returncode != 0:
            raise SystemExit(f"CLI {args[0]} failed: {proc.stderr.decode()[:300]}")
        json.loads(proc.stdout)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="measured served calls per tool")
    parser.add_argument("--cli-rounds", type=int, default=5, help="CLI processes per command")
    parser.add_argument("--http", action="store_true", help="also measure streamable HTTP")
    parser.add_argument("--no-ingest", action="store_true", help="the demo data is loaded")
    args = parser.parse_args()

    if not args.no_ingest:
        driver = open_driver(resolve_connection())
        try:
            apply_schema(driver)
            ingest_bundle(driver, load_bundle(DATASET))
            driver.execute_query("CALL db.awaitIndexes(300)")
        finally:
            driver.close()
    env = _connection_env()

    rows: list[tuple[str, str, list[float]]] = []
    stdio = _served(_stdio_client(env), args.rounds)
    rows += [("MCP stdio (warm)", tool, stdio[tool]) for tool in ("runbook_lookup", "investigate")]
    if args.http:
        with tempfile.TemporaryDirectory() as tmp:
            proc, url = _http_server(env, Path(tmp))
            try:
                http = _served(_http_client(url), args.rounds)
            finally:
                proc.terminate()
                proc.wait(timeout=30)
        rows += [
            ("MCP HTTP (warm)", tool, http[tool]) for tool in ("runbook_lookup", "investigate")
        ]
    local = _in_process(args.rounds)
    rows += [("in-process adapter (warm)", tool, local[tool]) for tool in local]
    rows.append(("CLI process", "runbook_lookup", _cli(env, CLI_RUNBOOK, args.cli_rounds)))
    rows.append(("CLI process", "investigate", _cli(env, CLI_INVESTIGATE, args.cli_rounds)))

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"serving latency, demo dataset, {platform.python_implementation()} "
        f"{platform.python_version()}, {os.cpu_count()} CPUs, load average {load:.1f}"
    )
    print()
    print("| way in | call | n | p50 ms | p95 ms | mean ms | goal p50 |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for way, tool, values in rows:
        goal = f"<= {GOALS_MS[tool]:.0f} ms" if way.startswith("MCP") else "-"
        print(
            f"| {way} | {tool} | {len(values)} | {_pct(values, 0.5):.1f} | "
            f"{_pct(values, 0.95):.1f} | {statistics.fmean(values):.1f} | {goal} |"
        )


if __name__ == "__main__":
    main()
