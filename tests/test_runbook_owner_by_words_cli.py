"""A runbook named by its words, asked whose it is, on the demo data through the CLI against a
real Neo4j (session 34): "who owns the payment recovery runbook?" on 07-26 states
team:payments-platform's OWNS record of v4, the version in force, and is `complete`.

Before: the words found v3 (its text fits best); v3's own OWNS record was read and, v3 no
longer in force, rejected; v4's record was never read, and the answer was `partial` with the
required gap "no owner of runbook:payment-recovery@v3 is recorded at as_of ...", beside the
owner of payment-api (another entity), though a record of v4's owner exists.
"""

from __future__ import annotations

import neo4j
import pytest
from conftest import claim_lines

BOB = ["--subject", "acme/user:bob"]
DEADLINE = ["--deadline-seconds", "600"]
QUESTION = "who owns the payment recovery runbook?"


pytestmark = pytest.mark.usefixtures("patient_reads")


@pytest.mark.parametrize(
    ("flags", "owner"),
    [
        (
            [*BOB, "--as-of", "2026-07-26T00:00:00Z"],  # v4 in force (since 07-25)
            "At 2026-07-26T00:00:00Z: team:payments-platform OWNS runbook:payment-recovery@v4 "
            "(valid 2026-07-25T00:00:00Z to open)",
        ),
        (
            [*BOB],  # no --as-of: now
            "team:payments-platform OWNS runbook:payment-recovery@v4 (valid "
            "2026-07-25T00:00:00Z to open)",
        ),
        (
            [*BOB, "--as-of", "2026-07-10T00:00:00Z"],  # v3 in force then
            "At 2026-07-10T00:00:00Z: team:payments-core OWNS runbook:payment-recovery@v3",
        ),
        (
            ["--subject", "acme/user:carol", "--as-of", "2026-07-26T00:00:00Z"],  # internal
            "team:payments-platform OWNS runbook:payment-recovery@v4",
        ),
    ],
)
def test_the_runbook_its_words_find_has_its_own_owner_read(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, flags: list[str], owner: str
) -> None:
    report = invoke("investigate", QUESTION, *flags, *DEADLINE)
    assert report.code == 0, report
    assert any(owner in line for line in claim_lines(report.out)), report.out
    assert "no OWNS record of it" not in report.out, report.out
    assert "ownership (required)" not in report.out, report.out
    assert "Status     complete" in report.out, report.out


def test_known_at_before_the_records_and_mallory_name_no_owner(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    for flags in (
        [*BOB, "--as-of", "2026-07-26T00:00:00Z", "--known-at", "2026-06-01T00:00:00Z"],
        ["--subject", "globex/user:mallory"],
    ):
        report = invoke("investigate", QUESTION, *flags, *DEADLINE)
        assert report.code == 0, report
        body = report.out.split("\nClaims\n", 1)[1]
        assert "OWNS runbook:payment-recovery@v4" not in body, report.out
        assert "Status     partial" in report.out, report.out


def test_owner_words_are_not_searched_for() -> None:
    from investigator.planner import runbook_search_text

    assert "owns" not in runbook_search_text("who owns the etcd runbook?")
    assert "owner" not in runbook_search_text("owner of the payment recovery runbook")


def test_the_etcd_runbook_names_the_tie_not_one_page(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    # Last in the module: the OpenShift fixture goes into its own tenant of the module's graph.
    from investigator.runbook_retrieval import CORPUS_SUBJECT, CORPUS_TENANT, ingest_corpus

    ingest_corpus(demo_graph)
    report = invoke(
        "investigate",
        "who owns the etcd runbook?",
        "--subject",
        f"{CORPUS_TENANT}/{CORPUS_SUBJECT}",
        "--purpose",
        "runbook_lookup",
        *DEADLINE,
    )
    assert report.code == 0, report
    # Before: "owns" was searched for too and tipped the tie to one page, said "retrieved
    # and not used" (runbook:etcdHighNumberOfFailedGRPCRequests), no tie named.
    assert "the question's words fit 10 runbooks alike" in report.out, report.out
    assert "Status     partial" in report.out, report.out
