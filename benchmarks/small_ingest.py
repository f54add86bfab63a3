"""Small ingests (issue 12): two tiny bundles into a new tenant, as an `investigator ingest`
of each, the way a user loads a first catalog and then an incident.

Usage (against the server of `investigator db start`, or NEO4J_URI):

    .venv/bin/python benchmarks/small_ingest.py [--rounds 3] [--checkout NAME=PATH ...]

Each round ingests `tests/fixtures/initech-time/10-initech-catalog.yaml` (18 elements: the
tenant's first ingest, which creates and awaits its fulltext index) and then
`20-initech-incident.yaml` (13 elements: a second bundle into a tenant with records) under
`--tenant` of a new name, so each round pays what a new tenant pays: the new index empties
Neo4j's plan cache (any index coming online does), and every statement after it is planned
again. Each ingest is a new process (`python -m investigator ingest`, `INVESTIGATOR_WARM=0`),
timed from outside: the seconds the ingest reports, the process's wall time and its CPU
(user + system), and the load average before it. With several `--checkout NAME=PATH`
(e.g. `main=/work/main branch=.`), each round runs them in turn, alternated on the same
server, with PATH first on `PYTHONPATH`. A benchmark, not an assertion: it prints a Markdown
table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "initech-time"
BUNDLES = (
    ("first", FIXTURES / "10-initech-catalog.yaml"),
    ("second", FIXTURES / "20-initech-incident.yaml"),
)
_SECONDS = re.compile(r"\((\d+\.\d+)s\)\s*$")


def _load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text(encoding="utf-8").split()[:3])
    except OSError:
        return "n/a"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _ingest(checkout: Path, bundle: Path, tenant: str) -> tuple[float, float, float, str]:
    """(reported s, wall s, CPU s, load before) of one `investigator ingest` process."""
    env = dict(os.environ, PYTHONPATH=str(checkout), INVESTIGATOR_WARM="0")
    load = _load_average().split()[0]
    cpu = _children_cpu()
    began = time.perf_counter()
    # The file's principals move into the new tenant: said since h33-trace (an older
    # checkout has no such flag, and moves them silently).
    ingest = (checkout / "investigator" / "cli" / "ingest.py").read_text(encoding="utf-8")
    moves = ["--move-principals"] if "--move-principals" in ingest else []
    done = subprocess.run(
        [sys.executable, "-m", "investigator", "ingest", str(bundle), "--tenant", tenant, *moves],
        env=env,
        # `-m` puts the working directory first on sys.path: run from the checkout, or every
        # checkout would run the code of the directory the benchmark was started from.
        cwd=checkout,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"ingest failed ({done.returncode}): {done.stderr.strip()}")
    found = _SECONDS.search(done.stdout.strip())
    reported = float(found.group(1)) if found else float("nan")
    return reported, wall, _children_cpu() - cpu, load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3, help="new tenants per checkout")
    parser.add_argument(
        "--checkout",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="a source tree to run (first on PYTHONPATH); repeat to alternate them",
    )
    args = parser.parse_args()
    checkouts = [tuple(c.split("=", 1)) for c in args.checkout] or [("this", str(ROOT))]
    run = uuid.uuid4().hex[:6]
    rows: dict[tuple[str, str], list[tuple[float, float, float, str]]] = {}
    print(f"load average before: {_load_average()}", file=sys.stderr)
    for round_no in range(1, args.rounds + 1):
        for name, path in checkouts:
            tenant = f"small-{run}-{name}-{round_no}"
            for which, bundle in BUNDLES:
                result = _ingest(Path(path).resolve(), bundle, tenant)
                rows.setdefault((name, which), []).append(result)
                reported, wall, cpu, load = result
                print(
                    f"round {round_no} {name} {which}: reported {reported:.2f} s, wall "
                    f"{wall:.2f} s, CPU {cpu:.2f} s, load {load}",
                    file=sys.stderr,
                )
    print(f"load average after: {_load_average()}", file=sys.stderr)
    print("| checkout | ingest | reported s (each round) | median | wall s median | CPU s median |")
    print("| --- | --- | --- | ---: | ---: | ---: |")
    for (name, which), results in rows.items():
        reported = [r[0] for r in results]
        print(
            f"| {name} | {which} | {', '.join(f'{x:.2f}' for x in reported)} | "
            f"{statistics.median(reported):.2f} | "
            f"{statistics.median(r[1] for r in results):.2f} | "
            f"{statistics.median(r[2] for r in results):.2f} |"
        )


if __name__ == "__main__":
    main()
