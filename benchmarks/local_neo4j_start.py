"""Cold and warm start times of the local Neo4j (a benchmark: prints figures, asserts nothing).

    python benchmarks/local_neo4j_start.py [--cold-jars]

- jars: resolving org.neo4j:neo4j with Maven into an empty cache folder (with --cold-jars
  also into an empty Maven repository, i.e. downloading from Maven Central);
- cold start: first start of a new server home (store creation, initial password);
- warm start: restart of an existing home with the jars cached (median of 3).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from investigator.local_neo4j import LocalNeo4j


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cold-jars", action="store_true", help="download into an empty repo")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if args.cold_jars:
            os.environ["INVESTIGATOR_MAVEN_REPO"] = str(root / "m2")
        server = LocalNeo4j(root / "state", root / "cache")
        began = time.monotonic()
        server.ensure_jars()
        jars = time.monotonic() - began
        cold = server.start().seconds
        server.stop()
        warm = []
        for _ in range(3):
            warm.append(server.start().seconds)
            server.stop()
    where = "Maven Central (empty local repo)" if args.cold_jars else "the local Maven repo"
    print(f"jar resolution from {where}: {jars:.1f} s")
    print(f"cold start (new home):          {cold:.1f} s")
    print(f"warm start (median of 3):       {statistics.median(warm):.1f} s  {warm}")


if __name__ == "__main__":
    main()
