"""New-process latency of the on-call commands (issue 12): `runbook` and `investigate` (seed).

Usage (against the server NEO4J_* or the local server points at, with the demo dataset
ingested: `investigator schema apply && investigator ingest datasets/payments-incident`):
    .venv/bin/python benchmarks/cli_latency.py --runs 9

Each measured call is a whole new process, as a user types it, twice: served by the warm
process (the default; the script starts it and waits until it is ready), and with
INVESTIGATOR_WARM=0 (interpreter start, imports, connection, subject, templates, recording,
output, all in the new process). Every process finds its modules' bytecode cached, as an
installed package's (`--no-bytecode-cache`: compiled from source in each, as with
`PYTHONDONTWRITEBYTECODE=1` in a checkout that has no `__pycache__`, about 0.15 s more
per command on the project machine). The reference, measured in the same run
against the same server, is the floor any Python client pays: a new process that imports
the driver, connects and runs one query. Prints the machine's load (`uptime`) and a
Markdown table for docs/benchmarks.md. A measurement tool, not a test.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
INVESTIGATOR = [sys.executable, "-m", "investigator"]
SEED_QUESTION = (
    "Was the 10:02 release of payment-api related to the PAY-4097 errors? "
    "Who owned the service at that moment? Which runbook version applied?"
)
COMMANDS: list[tuple[str, list[str], float]] = [
    (
        "`runbook --service svc:payment-api`",
        [*INVESTIGATOR, "runbook", "--service", "svc:payment-api",
         "--as-of", "2026-07-23T10:03:00Z", "--subject", "acme/user:bob"],
        0.6,
    ),
    (
        "`runbook` free text",
        [*INVESTIGATOR, "runbook", "payment recovery",
         "--as-of", "2026-07-23T10:03:00Z", "--subject", "acme/user:bob"],
        0.6,
    ),
    (
        "`investigate` seed question",
        [*INVESTIGATOR, "investigate", SEED_QUESTION, "--service", "svc:payment-api",
         "--as-of", "2026-07-23T10:03:00Z", "--subject", "acme/user:alice"],
        1.0,
    ),
]  # fmt: skip
REFERENCE = (
    "import neo4j, sys\n"
    "from investigator.settings import resolve_connection\n"
    "s = resolve_connection()\n"
    "d = neo4j.GraphDatabase.driver(s.uri, auth=(s.user, s.password.get_secret_value()))\n"
    "d.execute_query('RETURN 1', database_=s.database)\n"
    "d.close()\n"
)


def _server_pid() -> int | None:
    # The local server's Java process, when NEO4J_URI does not point elsewhere: its CPU time
    # is a load-independent measure of the server's share.
    if os.environ.get("NEO4J_URI"):
        return None
    from investigator.local_neo4j import LocalNeo4j

    state = LocalNeo4j.default().read_state()
    return state.pid if state is not None else None


def _server_cpu(pid: int | None) -> float:
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


_ENV = dict(os.environ)
_CWD = [REPO]  # the tree whose code runs (`python -m` puts the working directory first)


# Each command twice: served by the warm process (the default: the first command starts it)
# and with INVESTIGATOR_WARM=0, a whole interpreter with its imports per command.
MODES = {"warm process": "1", "INVESTIGATOR_WARM=0": "0"}


def _wait_for_warm_process() -> None:
    status = [*INVESTIGATOR, "warm", "status", "--json"]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        out = subprocess.run(status, capture_output=True, text=True, cwd=_CWD[0], env=_ENV)
        if '"current": true' in out.stdout:
            return
        time.sleep(0.5)
    raise SystemExit("the warm process did not start within 120 s")


def _wall(argv: list[str], pid: int | None, warm: str = "0") -> tuple[float, float, float]:
    """(wall s, launching process's CPU s user+sys, server CPU s) of one new `argv` process.

    With the warm process the command itself runs in a child of that process, so the CPU
    column then shows only what the launching process spent (interpreter and socket).
    """
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    server_before = _server_cpu(pid)
    began = time.perf_counter()
    env = dict(_ENV, INVESTIGATOR_WARM=warm)
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=_CWD[0], env=env)
    elapsed = time.perf_counter() - began
    server = _server_cpu(pid) - server_before
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])} failed ({proc.returncode}): {proc.stderr[:300]}")
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    return elapsed, cpu, server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=9, help="measured runs per command")
    parser.add_argument(
        "--source",
        type=Path,
        help="measure another tree's code instead (e.g. `git archive HEAD | tar -x -C DIR`)",
    )
    parser.add_argument(
        "--bare-subjects", action="store_true", help="user:bob, not acme/user:bob (older code)"
    )
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="every process compiles the project's modules from source, as with "
        "PYTHONDONTWRITEBYTECODE=1 and no __pycache__ (a read-only checkout never run before)",
    )
    args = parser.parse_args()
    if args.no_bytecode_cache:
        _ENV["PYTHONDONTWRITEBYTECODE"] = "1"
        _ENV.pop("PYTHONPYCACHEPREFIX", None)
        print("bytecode: none (each process compiles the modules it imports from source)")
    else:
        # As an installed package runs: its modules' bytecode cached. Kept in a folder of
        # this run's, so the measured tree is not written to; the warm-up round fills it.
        _ENV.pop("PYTHONDONTWRITEBYTECODE", None)
        _ENV["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="cli-latency-pyc-")
        print(f"bytecode: cached in {_ENV['PYTHONPYCACHEPREFIX']} (as an installed package)")
    if args.source is not None:
        _ENV["PYTHONPATH"] = str(args.source.resolve())
        _CWD[0] = args.source.resolve()
        print(f"code measured: {args.source}")
    if args.bare_subjects:
        for _, argv, _ in COMMANDS:
            argv[:] = [a.removeprefix("acme/") for a in argv]
    pid = _server_pid()
    for _, argv, _ in COMMANDS:  # warm-up: server plans, kept read-only proofs, OS caches
        _wall(argv, pid, warm="1")  # the first also starts the warm process
    _wait_for_warm_process()
    Sample = tuple[float, float, float]
    reference: list[Sample] = []
    results: dict[str, list[Sample]] = {
        f"{label}, {mode}": [] for label, _, _ in COMMANDS for mode in MODES
    }
    load_before = os.getloadavg()[0]
    for _ in range(args.runs):  # interleaved, so load drifts hit every command alike
        reference.append(_wall([sys.executable, "-c", REFERENCE], pid))
        for label, argv, _ in COMMANDS:
            for mode, flag in MODES.items():
                results[f"{label}, {mode}"].append(_wall(argv, pid, warm=flag))
    load_after = os.getloadavg()[0]
    ref_wall = statistics.median(w for w, _, _ in reference)
    ref_cpu = statistics.median(c for _, c, _ in reference)
    ref_server = statistics.median(s for _, _, s in reference)
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"uptime: {uptime}")
    print(f"load average (1 min) before/after: {load_before:.2f} / {load_after:.2f}")
    print(
        f"runs per command: {args.runs}; client CPU = user+sys of the new process; server CPU "
        f"= the local Neo4j's CPU time meanwhile ({'pid ' + str(pid) if pid else 'not local'})"
    )
    print()
    print(
        "| new process | wall p50 s | wall min s | launching process CPU p50 s | server CPU p50 s "
        "| target s | wall p50 / reference |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    print(
        f"| reference: import driver, connect, `RETURN 1` | {ref_wall:.2f} "
        f"| {min(w for w, _, _ in reference):.2f} | {ref_cpu:.2f} | {ref_server:.2f} | | 1.0 |"
    )
    for label, _, target in COMMANDS:
        for mode in MODES:
            samples = results[f"{label}, {mode}"]
            walls = [w for w, _, _ in samples]
            p50 = statistics.median(walls)
            cpu = statistics.median(c for _, c, _ in samples)
            server = statistics.median(s for _, _, s in samples)
            print(
                f"| {label}, {mode} | {p50:.2f} | {min(walls):.2f} | {cpu:.2f} | {server:.2f} "
                f"| {target:.1f} | {p50 / ref_wall:.1f} |"
            )


if __name__ == "__main__":
    main()
