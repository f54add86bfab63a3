"""A cause verdict never rests on a read of releases or changes that did not answer
(h36-cause-verdict): "did the release cause it?" whose tenant-wide release read failed was
`likely`, only the failed-read gap saying a read had failed; another release it was to read
could explain the errors as well. And the window gap of an open cause question names the
read that failed, so it is that read's one gap (before, a second gap named it).

Real runs on the real Neo4j, the read made to fail as a timeout ends it (`_ReadsFail`)."""

from __future__ import annotations

import neo4j
import pytest
from test_failed_reads_swept import UNKNOWN, _ask, _gaps

from investigator.claims.model import Verdict
from investigator.context_graph.models import RunStatus

AT_INCIDENT = "2026-07-23T10:30:00"
# After the fact: the day after, the incident resolved, the postmortem written.
AFTER = "2026-07-24T09:00:00"


@pytest.mark.parametrize("at", [AT_INCIDENT, AFTER])
@pytest.mark.parametrize("failed", ["deployments_in_window_tenant", "rollouts_under_way_tenant"])
def test_no_likely_release_with_the_releases_read_failed(
    demo_graph: neo4j.Driver, at: str, failed: str
) -> None:
    question = "did the release cause it?"
    whole = _ask(demo_graph, question, at)
    assert whole.verdict is Verdict.LIKELY, whole.verdict
    result = _ask(demo_graph, question, at, failed)
    # Before: `likely`, as if every release had been read.
    assert result.verdict is Verdict.UNCERTAIN, result.verdict
    assert result.status is RunStatus.PARTIAL
    # One gap for the failed read, naming it and saying the cause is unknown until it answers.
    [gap] = [g for g in _gaps(result) if f"{failed}@" in g]
    assert gap.startswith(
        f"{UNKNOWN}a read of the run failed before its search of the releases and changes "
        f"before PAY-4097 (first seen at 2026-07-23T10:02:38Z) finished: {failed}@"
    ), gap
    assert gap.endswith(
        ": a release or change it was to read may explain PAY-4097 as well, so whether "
        "release deploy:release-2026.07.23.1 caused it is unknown until the read answers; "
        "the verdict stays uncertain; ask again"
    ), gap


def test_the_window_gap_names_the_failed_read(demo_graph: neo4j.Driver) -> None:
    # PAY-1002 was first seen in 2025, before every release: the window holds nothing.
    result = _ask(demo_graph, "what caused PAY-1002?", AT_INCIDENT, "fulltext_search")
    naming = [g for g in _gaps(result) if "fulltext_search" in g]
    # Before: the window gap said "a read of the run failed" naming none, and a second gap
    # "a read of the run failed: fulltext_search@4 ..." beside it.
    assert len(naming) == 1, _gaps(result)
    assert naming[0].startswith(
        f"{UNKNOWN}whether no release is recorded in the 24 h, and no other change in the "
        "30 min, before PAY-1002 was first seen at 2025-03-01T08:11:00Z: a read of the run "
        "failed before its search of this window finished: fulltext_search@5 ("
    ), naming
    assert not any(c.statement.startswith("No release is recorded") for c in result.claims)


def test_a_release_known_only_from_a_document_is_not_named_by_the_documents_id(
    demo_graph: neo4j.Driver,
) -> None:
    # Session 36: with the service's release read failed, the postmortem's release time stood
    # for the release, said "Candidate cause: release doc:postmortem-2026-07-23-payments".
    result = _ask(demo_graph, "why did checkout fail", AFTER, "deployments_in_window")
    causes = [c.statement for c in result.claims if c.statement.startswith("Candidate cause")]
    assert causes and all(
        s.startswith(
            "Candidate cause: a release recorded in Postmortem: PAY-4097 after payment-api "
            "release 2026.07.23.1 (doc:postmortem-2026-07-23-payments) (finished at "
            "2026-07-23T10:02:00Z"
        )
        for s in causes
    ), causes


def test_one_release_gap_naming_its_failed_read(demo_graph: neo4j.Driver) -> None:
    # h37-failed-read-gap: before, two deployment_time gaps, the rubric's "a read of the run
    # failed ..., so its search for this did not finish" and one naming the read beside it.
    question = "did the payment-api release cause the errors?"
    result = _ask(demo_graph, question, AT_INCIDENT, "deployments_in_window")
    assert result.verdict is Verdict.UNCERTAIN, result.verdict
    [gap] = [m for m in result.missing_evidence if m.evidence_type == "deployment_time"]
    assert gap.required
    assert gap.description.startswith(
        f"{UNKNOWN}a read of the run failed: deployments_in_window@4 (Deployments of a service "
    ), gap.description
    assert gap.description.endswith(
        "did not answer (see its tool calls: a query timed out or Neo4j refused it), so the "
        "release/deployment time for the service is unknown until the read answers; ask again"
    ), gap.description
    assert sum("deployments_in_window@" in g for g in _gaps(result)) == 1, _gaps(result)


def test_two_failed_reads_of_one_kind_are_one_gap(demo_graph: neo4j.Driver) -> None:
    # Before: one entity gap for each (entity_resolution, dependency_neighbourhood).
    question = "did the payment-api release cause the errors?"
    fails = ("entity_resolution", "dependency_neighbourhood")
    result = _ask(demo_graph, question, AT_INCIDENT, *fails)
    naming = [g for g in _gaps(result) if any(f"{t}@" in g for t in fails)]
    assert len(naming) == 1, naming
    assert "entity_resolution@" in naming[0] and "; dependency_neighbourhood@" in naming[0]
    assert "so nothing they were to read is said absent; ask again" in naming[0], naming


@pytest.mark.parametrize("at", [AT_INCIDENT, AFTER])
@pytest.mark.parametrize("question", ["what caused PAY-4097?", "why did payment-api fail?"])
def test_an_open_cause_question_whose_release_read_failed_says_its_causes_are_unknown(
    demo_graph: neo4j.Driver, question: str, at: str
) -> None:
    # h38-cause-unknown: before, no candidate and no required gap: the postmortem met the
    # rubric's release time, only an optional gap said "other changes may be missing".
    result = _ask(demo_graph, question, at, "deployments_in_window")
    assert result.status is RunStatus.PARTIAL
    [gap] = [g for g in _gaps(result) if "deployments_in_window@" in g]
    assert gap.startswith(
        f"{UNKNOWN}a read of the run failed before its search of the releases and changes "
        "before PAY-4097 (first seen at 2026-07-23T10:02:38Z) finished: deployments_in_window@4"
    ), gap
    assert gap.endswith(
        ": a release or change it was to read may have caused PAY-4097, so which releases and "
        "changes are its candidate causes is unknown until the read answers (any said here "
        "may not be all of them); ask again"
    ), gap
    # The optional "may be missing from the list" is that gap's, said once.
    assert not [g for g in _gaps(result, required=False) if "competing-cause checks" in g]


@pytest.mark.parametrize("question", ["was it the release?", "did the release cause it?"])
def test_a_failed_change_read_is_the_correlations_one_required_gap(
    demo_graph: neo4j.Driver, question: str
) -> None:
    # Before: `uncertain` with only an optional gap, "a read of the run failed, so whether
    # this holds is not known: competing-cause checks did not all run ... (change_events_in_
    # window(from=...)): the verdict stays uncertain", no required gap naming the read.
    result = _ask(demo_graph, question, AT_INCIDENT, "change_events_in_window")
    assert result.verdict is Verdict.UNCERTAIN, result.verdict
    [gap] = [m for m in result.missing_evidence if "change_events_in_window" in m.description]
    assert gap.required
    assert gap.description.startswith(
        f"{UNKNOWN}a read of the run failed before its search of the releases and changes "
        "before PAY-4097 (first seen at 2026-07-23T10:02:38Z) finished: "
        "change_events_in_window@3 ("
    ), gap.description
    assert gap.description.endswith(
        "so whether release deploy:release-2026.07.23.1 caused it is unknown until the read "
        "answers; the verdict stays uncertain; ask again"
    ), gap.description


def test_the_changes_before_an_error_name_their_failed_read_in_a_required_gap(
    demo_graph: neo4j.Driver,
) -> None:
    result = _ask(
        demo_graph, "what changed before PAY-4097?", AT_INCIDENT, "change_events_in_window"
    )
    # Before: the read named only as a step of the optional checks gap, so no gap of its own.
    [named] = [g for g in _gaps(result) if "change_events_in_window@3 (" in g]
    assert named.endswith("so nothing it was to read is said absent; ask again"), named
    [checks] = [g for g in _gaps(result, required=False) if "competing-cause checks" in g]
    # Before: "... a read of the run failed, so whether this holds is not known: competing-..."
    assert checks.startswith(
        f"{UNKNOWN}a read of the run failed: competing-cause checks did not all run for the "
        "window before the first error (change_events_in_window(from="
    ), checks


def test_a_gap_no_failed_read_was_for_says_what_is_missing(demo_graph: neo4j.Driver) -> None:
    question = "did the payment-api release cause the errors?"
    result = _ask(demo_graph, question, AT_INCIDENT, "dependency_neighbourhood")
    gaps = {m.evidence_type: m.description for m in result.missing_evidence if m.required}
    # Before: both "unknown, not absent: a read of the run failed (see its tool calls: ...),
    # so its search for this did not finish; ask again", saying nothing of what is missing.
    assert gaps["affected_service"] == (
        f"{UNKNOWN}the link between the error/incident and the service is not in what the run "
        "read, and a read of the run failed (see the gap naming it), so it may be in what did "
        "not answer; ask again"
    ), gaps
    assert gaps["error_first_seen"].startswith(
        f"{UNKNOWN}the first-seen time for the error or incident is not in what the run read"
    ), gaps
    assert gaps["entity"].startswith(f"{UNKNOWN}a read of the run failed: dependency_neighb")


@pytest.mark.parametrize("at", [AT_INCIDENT, AFTER])
def test_a_failed_documents_read_is_one_gap_saying_what_it_was_to_tell(
    demo_graph: neo4j.Driver, at: str
) -> None:
    # documents_about is read for the documents about the incident and for the mechanism:
    # its failure is one gap naming it and both (before: a `document` and a `mechanism` gap,
    # each "documents_about@3 ... did not answer ..., so nothing it was to read is said
    # absent").
    result = _ask(demo_graph, "did the release cause it?", at, "documents_about")
    assert result.status is RunStatus.PARTIAL
    naming = [m for m in result.missing_evidence if "documents_about@" in m.description]
    assert len(naming) == 1, [(m.evidence_type, m.description) for m in naming]
    [gap] = naming
    assert gap.required and gap.evidence_type == "document", gap
    assert gap.description.startswith(
        f"{UNKNOWN}a read of the run failed: documents_about@3 (Documents that mention or "
        "apply to an entity, each naming the document that supersedes it) did not answer"
    ), gap.description
    assert gap.description.endswith(
        "so the document and the mechanism evidence the subject may read are unknown until "
        "the read answers; ask again"
    ), gap.description
