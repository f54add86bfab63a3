"""Runbook retrieval quality on a real corpus: top-1, top-3 and abstention per way of asking.

The corpus is tests/fixtures/openshift-runbooks (a licensed slice of openshift/runbooks and
the PrometheusRule manifests that link to it; rebuilt by build_openshift_runbooks_fixture.py).
Every query goes through `RunbookLookup`, the code `investigator runbook` runs.

Usage (against the server NEO4J_* or the local server points at; applies the schema and
ingests the corpus into tenant `openshift`, idempotently):
    .venv/bin/python benchmarks/runbook_retrieval.py [--misses] [--kind summary]
        [--corpus DIR --tenant T]   (e.g. the unseen folders: build_openshift_unseen_corpus.py)
        [--queries FILE]   (labelled questions kept apart from a corpus not in this repository:
                            benchmarks/questions/kubevirt-monitoring.yaml)
        [--sections]       (a corpus of pages of alert sections, cortex-jsonnet's playbooks.md
                            as it is: scored by the section the card shows)

Prints a Markdown table for docs/runbooks.md. A measurement tool, not a test (the CI gate is
tests/test_runbook_retrieval.py).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

from graph_schema.schema_ddl import apply_schema
from investigator.connection import open_driver
from investigator.runbook_lookup import RunbookLookup
from investigator.runbook_retrieval import (
    CORPUS_DIR,
    CORPUS_TENANT,
    QueryKind,
    QueryOutcome,
    evaluate,
    ingest_corpus,
    load_corpus,
    score,
)
from investigator.settings import resolve_connection


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--misses", action="store_true", help="print every wrong answer")
    parser.add_argument("--kind", choices=[k.value for k in QueryKind], action="append")
    parser.add_argument(
        "--corpus",
        type=Path,
        default=CORPUS_DIR,
        help="a corpus directory (default: the fixture; see build_openshift_unseen_corpus.py)",
    )
    parser.add_argument("--tenant", default=CORPUS_TENANT, help="the tenant to ingest it into")
    parser.add_argument(
        "--queries",
        type=Path,
        help="a labelled question file (default: the corpus's queries.yaml; "
        "e.g. benchmarks/questions/kubevirt-monitoring.yaml)",
    )
    parser.add_argument(
        "--sections",
        action="store_true",
        help="score by the section of a page the card shows: right when it is headed by the "
        "expected runbook's name (runbook:CortexIngesterUnhealthy), an abstention when it "
        "shows none (no top-3: one section is shown)",
    )
    args = parser.parse_args()
    logging.getLogger("neo4j.notifications").setLevel(logging.ERROR)
    queries = load_corpus(args.corpus, args.queries)
    if args.kind:
        queries = [q for q in queries if q.kind.value in args.kind]
    settings = resolve_connection()
    with open_driver(settings) as driver:
        apply_schema(driver)
        began = time.monotonic()
        ingest_corpus(driver, args.corpus, args.tenant)
        print(f"corpus ingested in {time.monotonic() - began:.1f} s", file=sys.stderr)
        lookup = RunbookLookup(driver)

        def report(outcome: QueryOutcome) -> None:
            wrong = not outcome.top1 if outcome.query.expected else not outcome.abstained
            if args.misses and wrong:
                print(
                    f"MISS {outcome.query.kind.value}: {outcome.query.text[:90]!r} "
                    f"expected {outcome.query.expected} got {outcome.answer} "
                    f"ranked {outcome.ranked[:3]}",
                    file=sys.stderr,
                )

        began = time.monotonic()
        outcomes = evaluate(lookup, queries, args.tenant, progress=report, sections=args.sections)
        elapsed = time.monotonic() - began
    print("| asked by | queries (with runbook / without) | top-1 | top-3 | abstention |")
    print("| --- | --- | --- | --- | --- |")
    for kind_score in score(outcomes):
        print(
            f"| {kind_score.kind.value} | {kind_score.answerable} / {kind_score.unanswerable} "
            f"| {_fmt(kind_score.top1)} | {_fmt(kind_score.top3)} "
            f"| {_fmt(kind_score.abstention)} |"
        )
    print(f"\n{len(outcomes)} lookups in {elapsed:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
