"""Session 33's answers swept against failed reads (h34-failed-reads): a read that failed (a
template timed out on a loaded server) leaves what it was to read unknown, never absent.

Each test fails the reads of one template with a real Neo4j error (a division by zero the
server raises, as tests/test_failed_read_not_absent.py does) and checks what a user reads:
no sentence says the thing is absent, a gap names the read that failed, and the run is not
`complete`. Before: "what happened yesterday?" with its change events read failed said
"Missing evidence: none"; "what changed since the incident?" with its incident read failed
said "no incident resolution is found by as_of"; the time to detect said "no alert firing
... is recorded" when the firings read failed; the severity history said "no change of
severity is recorded"; "the release" note said "no service with a release read emitted an
error after its release"; a runbook's owner gap said "no OWNS record of it" when the owners
read failed; a question answered by nothing said "the records listed under Evidence were
read and answer none of it"."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import neo4j

from cypher_templates.compiler import CompiledQuery
from cypher_templates.executor import TemplateExecutor
from investigator.context_graph.models import RunStatus
from investigator.investigation import InvestigationRequest, InvestigationResult, investigate
from investigator.time_word_lines import unplaced_time_lines

BOB = "acme/user:bob"
UNKNOWN = "unknown, not absent: "


class _ReadsFail(TemplateExecutor):
    """Every read of the templates named meets a real Neo4j error, as a timeout ends it."""

    def __init__(self, driver: neo4j.Driver, *templates: str) -> None:
        super().__init__(driver)
        self._templates = set(templates)

    def _read_template(
        self, compiled: CompiledQuery, parameters: dict[str, Any], fetch: int
    ) -> list[neo4j.Record]:
        if compiled.template_id in self._templates:
            self._read("RETURN 1 / 0 AS x", {}, 5.0, 1)
        return super()._read_template(compiled, parameters, fetch)

    def run_together(self, steps, subject, known_at, *, plan=None, raise_on_error=True):  # type: ignore[no-untyped-def]
        return [
            self.run(s, subject, known_at, plan=plan, raise_on_error=raise_on_error) for s in steps
        ]


def _ask(driver: neo4j.Driver, question: str, at: str, *fails: str) -> InvestigationResult:
    executor = _ReadsFail(driver, *fails) if fails else TemplateExecutor(driver)
    request = InvestigationRequest(
        question=question,
        subject_id=BOB,
        as_of=datetime.fromisoformat(at).replace(tzinfo=UTC),
        deadline_s=600,
    )
    result = investigate(request, driver=driver, executor=executor, recorder=None)
    failed = {tc.template_id for tc in result.tool_calls if tc.error}
    assert failed == set(fails), result.tool_calls
    return result


def _gaps(result: InvestigationResult, *, required: bool = True) -> list[str]:
    return [m.description for m in result.missing_evidence if m.required or not required]


def _named_gap(result: InvestigationResult, template: str) -> None:
    """The run is not complete and a required gap names the read that failed (its own, or
    a change period's unfinished-search gap naming it: "... failed before its search of the
    period ... finished: change_events_in_window@3 ...")."""
    assert result.status is RunStatus.PARTIAL
    assert any(
        g.startswith(f"{UNKNOWN}a read of the run failed") and f" {template}@" in g
        for g in _gaps(result)
    ), result.missing_evidence


def test_a_period_timeline_names_its_failed_read(demo_graph: neo4j.Driver) -> None:
    at = "2026-07-24T09:00:00"
    whole = _ask(demo_graph, "what happened yesterday?", at)
    assert whole.status is RunStatus.COMPLETE and not whole.missing_evidence
    # The change events read fails: the rest is listed, and the gap says what was not read
    # (before: "Missing evidence: none" beside a `partial` status).
    result = _ask(demo_graph, "what happened yesterday?", at, "change_events_in_window")
    assert not any("risk rule publication" in c.statement for c in result.claims)
    _named_gap(result, "change_events_in_window")
    assert all(g.startswith(UNKNOWN) for g in _gaps(result, required=False)), _gaps(result)


def test_a_failed_incident_read_never_says_no_incident_resolution(
    demo_graph: neo4j.Driver,
) -> None:
    at = "2026-07-26T12:00:00"
    question = "what changed since the incident?"
    whole = _ask(demo_graph, question, at)
    assert not unplaced_time_lines(whole)
    result = _ask(demo_graph, question, at, "incidents_at")
    lines = unplaced_time_lines(result)
    assert not any("no incident resolution is found" in line for line in lines), lines
    assert (
        "not resolved: 'since the incident'; the answer is at as_of. Not for its wording: a "
        "read of the run failed (see its tool calls: a query timed out or Neo4j refused it) "
        "before the incident resolution was found: unknown, not absent. Ask again"
    ) in lines, lines
    _named_gap(result, "incidents_at")


def test_escalation_after_the_fact_with_its_incident_unread(demo_graph: neo4j.Driver) -> None:
    at = "2026-07-26T12:00:00"
    question = "who should we have escalated PAY-4097 to?"
    result = _ask(demo_graph, question, at, "incident_context")
    lines = unplaced_time_lines(result)
    assert not any("no incident start is found" in line for line in lines), lines
    assert any("before the incident start was found: unknown, not absent" in x for x in lines)
    _named_gap(result, "incident_context")


def test_time_to_detect_with_the_firings_unread(demo_graph: neo4j.Driver) -> None:
    at = "2026-07-26T12:00:00"
    question = "how long did it take to detect the incident?"
    whole = _ask(demo_graph, question, at)
    assert any(c.statement.startswith("Time to detect") for c in whole.claims)
    result = _ask(demo_graph, question, at, "dependency_neighbourhood")
    assert not any("no alert firing" in c.statement for c in result.claims), result.claims
    assert any(
        g.startswith(
            f"{UNKNOWN}time to detect of incident inc:2026-07-23-payments: the first "
            "alert firing on svc:checkout, svc:payment-api after the first error"
        )
        for g in _gaps(result)
    ), result.missing_evidence
    _named_gap(result, "dependency_neighbourhood")


def test_severity_history_with_the_older_records_unread(demo_graph: neo4j.Driver) -> None:
    at = "2026-07-26T12:00:00"
    question = "when was the incident upgraded to SEV1?"
    whole = _ask(demo_graph, question, at)
    assert any("changed SEV2 -> SEV1" in c.statement for c in whole.claims)
    result = _ask(demo_graph, question, at, "version_history")
    severity = [c.statement for c in result.claims if c.statement.startswith("Severity of")]
    assert severity and not any("no change of severity" in s for s in severity), severity
    _named_gap(result, "version_history")


def test_the_release_choice_with_the_errors_unread(demo_graph: neo4j.Driver) -> None:
    at = "2026-07-23T10:30:00"
    question = "did the release cause it?"
    result = _ask(demo_graph, question, at, "dependency_neighbourhood")
    notes = [n for n in result.search_notes if n.startswith("the question names no service")]
    assert notes, result.search_notes
    assert not any("no service with a release read emitted an error" in n for n in notes)
    # The incident placed the choice (h34-release-weigh): what its affected services depend
    # on was unread too, so no release is said to be off its error path.
    assert "neither a service the incident affected nor on its error path" not in notes[0]
    assert (
        "svc:risk-engine is not a service the incident affected; whether it is on its error "
        "path is unknown, not absent: the read of what svc:checkout, svc:payment-api depend "
        "on failed"
    ) in notes[0], notes
    assert result.verdict is not None and result.verdict.value == "uncertain"
    _named_gap(result, "dependency_neighbourhood")


def test_an_owner_gap_with_the_owners_read_failed(demo_graph: neo4j.Driver) -> None:
    at = "2026-07-23T10:30:00"
    question = "should we fail over payment-db?"
    result = _ask(demo_graph, question, at, "owners_of")
    owner = [m.description for m in result.missing_evidence if m.evidence_type == "ownership"]
    assert owner and not any(g.startswith("no owner of") for g in owner), owner
    assert all(g.startswith(UNKNOWN) for g in owner), owner
    assert result.status is RunStatus.PARTIAL


def test_nothing_answered_with_a_read_failed(demo_graph: neo4j.Driver) -> None:
    at = "2026-07-26T12:00:00"
    result = _ask(
        demo_graph, "how many PAY-4097 errors were there?", at, "dependency_neighbourhood"
    )
    assert not result.claims
    assert not any(
        "were read and answer none of it" in g and not g.startswith(UNKNOWN) for g in _gaps(result)
    ), result.missing_evidence
    _named_gap(result, "dependency_neighbourhood")


def test_response_times_with_the_incident_read_failed(demo_graph: neo4j.Driver) -> None:
    # The incident read fails while the incident is open: before, the run crashed (an
    # assertion in the response-time rule: services affected read, no incident record).
    at = "2026-07-23T10:30:00"
    question = "what were the time to detect and the time to resolve?"
    result = _ask(demo_graph, question, at, "incident_context")
    assert not any(c.statement.startswith("Time to") for c in result.claims), result.claims
    assert all(g.startswith(UNKNOWN) for g in _gaps(result, required=False)), _gaps(result)
    _named_gap(result, "incident_context")


def test_deploy_safety_with_the_incident_read_failed(demo_graph: neo4j.Driver) -> None:
    # During the incident: every read answered, the open incident is stated; its read
    # failed, "no incident open" was stated as a fact under "is it safe to deploy?".
    at = "2026-07-23T10:30:00"
    question = "is it safe to deploy payment-api now?"
    whole = _ask(demo_graph, question, at)
    assert any("1 incident open" in c.statement for c in whole.claims), whole.claims
    result = _ask(demo_graph, question, at, "incident_context")
    summary = [c.statement for c in result.claims if "(what the subject may read" in c.statement]
    assert summary and not any("no incident open" in s for s in summary), summary
    assert "open incidents: unknown, not absent (a read of the run failed)" in summary[0]
    assert all(g.startswith(UNKNOWN) for g in _gaps(result, required=False)), _gaps(result)
    _named_gap(result, "incident_context")
