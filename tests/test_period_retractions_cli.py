"""What changed over a period includes what was retracted in it and what began in it, in
time order, through the CLI against a real Neo4j (session 34; h33-changes' notes).

Before: "what changed between 2026-07-01 and 2026-07-15?" never listed the dependency
payment-api -> legacy-fraud retracted on 07-10 (the period reads saw current records only);
"what changed on payment-api in January 2025?" never said payment-api began then; a period
answer listed its owner handovers and runbook versions after every release, by their text
(runbook v3 of 07-01 after the handover of 07-24); and a failed read left the changes found
with no gap saying the list may be incomplete (only the Reads line)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import neo4j
import pytest
from conftest import investigate_json

from cypher_templates.compiler import CompiledQuery
from cypher_templates.executor import TemplateExecutor
from investigator.context_graph.models import RunStatus
from investigator.investigation import InvestigationRequest, investigate

# Two more records of acme, each retracted in July: a dependency only subjects with the
# `incident` label may read (bob, not carol), and an owner record any `internal` reader may.
EXTRA_RECORDS = """\
tenant: acme
edges:
  - {type: DEPENDS_ON, from: svc:checkout, to: svc:risk-engine, acl: [incident],
     source_id: src:service-catalog,
     locator: "catalog/acme.yaml#DEPENDS_ON|svc:checkout|svc:risk-engine",
     valid_from: "2026-06-01T00:00:00Z", recorded_at: "2026-06-01T09:00:00Z"}
  - {type: OWNS, from: team:risk, to: svc:ledger, key: "OWNS|team:risk|svc:ledger|2026-07-01",
     acl: [internal], source_id: src:service-catalog,
     locator: "catalog/acme.yaml#OWNS|team:risk|svc:ledger|2026-07-01",
     valid_from: "2026-07-01T00:00:00Z", recorded_at: "2026-06-20T09:00:00Z"}
"""
EXTRA_RETRACTIONS = """\
tenant: acme
retractions:
  - {key: "DEPENDS_ON|svc:checkout|svc:risk-engine",
     reason: "checkout calls risk-engine through payment-api", at: "2026-07-05T12:00:00Z"}
  - {key: "OWNS|team:risk|svc:ledger|2026-07-01",
     reason: "entered against the wrong service", at: "2026-07-12T09:00:00Z"}
"""

SPAN = "from 2026-07-01T00:00:00Z to 2026-07-15T23:59:59Z ('between 2026-07-01 and 2026-07-15')"
LEGACY = (
    "Dependency record retracted at 2026-07-10T08:00:00Z, in the period asked, {span}: "
    "svc:payment-api DEPENDS_ON svc:legacy-fraud (valid 2024-01-01T00:00:00Z to open) was "
    "retracted (recorded in error: payment-api never called legacy-fraud); it is no dependency "
    "(no later record of it is known at known_at)"
)
CHECKOUT = (
    "Dependency record retracted at 2026-07-05T12:00:00Z, in the period asked, {span}: "
    "svc:checkout DEPENDS_ON svc:risk-engine (valid 2026-06-01T00:00:00Z to open) was "
    "retracted (checkout calls risk-engine through payment-api); it is no dependency (no later "
    "record of it is known at known_at)"
)
LEDGER = (
    "Owner record retracted at 2026-07-12T09:00:00Z, in the period asked, {span}: team:risk "
    "OWNS svc:ledger (valid 2026-07-01T00:00:00Z to open) was retracted (entered against the "
    "wrong service); it is no owner (no later record of it is known at known_at)"
)
LATER = ["--as-of", "2026-07-26T12:00:00Z"]


@pytest.fixture(scope="module")
def graph(demo_graph: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> neo4j.Driver:
    """The demo dataset and EXTRA_RECORDS, then EXTRA_RETRACTIONS, before any run."""
    from graph_schema.bundle import load_bundle
    from graph_schema.writer import ingest_bundle

    folder: Path = tmp_path_factory.mktemp("retractions")
    for name, text in (("records.yaml", EXTRA_RECORDS), ("retractions.yaml", EXTRA_RETRACTIONS)):
        (folder / name).write_text(text, encoding="utf-8")
        ingest_bundle(demo_graph, load_bundle(folder / name))
    return demo_graph


def _ask(invoke, question: str, *flags: str, subject: str = "acme/user:bob") -> dict:  # type: ignore[no-untyped-def,type-arg]
    return investigate_json(
        invoke, question, "--subject", subject, "--deadline-seconds", "300", *flags
    )


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


def _cited(doc: dict, statement: str) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    """(element id, status) of the evidence a claim cites."""
    claim = next(c for c in doc["claims"] if c["statement"] == statement)
    by_id = {ev["evidence_id"]: ev for ev in doc["evidence"]}
    return [(by_id[e]["element_id"], by_id[e]["status"]) for e in claim["evidence_ids"]]


QUESTION = "what changed between 2026-07-01 and 2026-07-15?"


def test_retractions_of_the_period_are_listed_in_time_order(  # type: ignore[no-untyped-def]
    graph, cli_env, invoke
) -> None:
    doc = _ask(invoke, QUESTION, *LATER)
    statements = [s for s in _statements(doc) if "retracted" in s]
    assert statements == [
        CHECKOUT.format(span=SPAN),
        LEGACY.format(span=SPAN),
        LEDGER.format(span=SPAN),
    ], _statements(doc)
    # The tombstone is the evidence: the retraction's own record.
    assert _cited(doc, LEGACY.format(span=SPAN)) == [
        ("DEPENDS_ON|svc:payment-api|svc:legacy-fraud", "retracted")
    ]


def test_periods_before_and_after_the_retraction_do_not_list_it(  # type: ignore[no-untyped-def]
    graph, cli_env, invoke
) -> None:
    for question in (
        "what changed between 2026-07-06 and 2026-07-09?",
        "what changed between 2026-07-13 and 2026-07-20?",
    ):
        doc = _ask(invoke, question, *LATER)
        assert not [s for s in _statements(doc) if "legacy-fraud" in s], (question, doc["claims"])
    # The day it was recorded lists it.
    doc = _ask(invoke, "what changed on 2026-07-10?", *LATER)
    span = "from 2026-07-10T00:00:00Z to 2026-07-10T23:59:59Z ('on 2026-07-10')"
    assert LEGACY.format(span=span) in _statements(doc), _statements(doc)


def test_a_known_at_before_the_retraction_does_not_list_it(  # type: ignore[no-untyped-def]
    graph, cli_env, invoke
) -> None:
    # Known on 07-08: checkout's retraction (07-05) was recorded, payment-api's (07-10) not.
    doc = _ask(invoke, QUESTION, *LATER, "--known-at", "2026-07-08T00:00:00Z")
    statements = [s for s in _statements(doc) if "retracted" in s]
    assert statements == [CHECKOUT.format(span=SPAN)], _statements(doc)


def test_a_subject_sees_only_the_retractions_it_may_read(  # type: ignore[no-untyped-def]
    graph, cli_env, invoke
) -> None:
    # carol (internal only) may not read checkout -> risk-engine (acl incident): never shown.
    doc = _ask(invoke, QUESTION, *LATER, subject="acme/user:carol")
    statements = [s for s in _statements(doc) if "retracted" in s]
    assert statements == [LEGACY.format(span=SPAN), LEDGER.format(span=SPAN)], _statements(doc)
    text = repr(doc["claims"]) + repr(doc["evidence"])
    assert "DEPENDS_ON|svc:checkout|svc:risk-engine" not in text, text
    # mallory (globex) reads nothing of acme's.
    doc = _ask(invoke, QUESTION, *LATER, subject="globex/user:mallory")
    text = repr(doc["claims"]) + repr(doc["evidence"])
    assert "legacy-fraud" not in text and "retracted" not in text, text


V3 = (
    "Runbook version runbook:payment-recovery@v3 (Payment recovery runbook v3) in force from "
    "2026-07-01T00:00:00Z, in the period asked, {span}; it replaced runbook:payment-recovery@v2 "
    "(valid 2026-02-01T00:00:00Z to 2026-07-01T00:00:00Z)"
)


def test_a_services_changes_are_one_timeline(  # type: ignore[no-untyped-def]
    graph, cli_env, invoke
) -> None:
    doc = _ask(invoke, "what changed on payment-api between 2026-07-01 and 2026-07-26?", *LATER)
    span = "from 2026-07-01T00:00:00Z to 2026-07-26T12:00:00Z ('between 2026-07-01 and 2026-07-26')"
    statements = _statements(doc)
    # Only payment-api's edges: not checkout's nor ledger's retraction.
    assert statements[:2] == [V3.format(span=span), LEGACY.format(span=span)], statements
    heads = [s.split(" at ")[0].split(" in force")[0] for s in statements]
    assert heads == [
        "Runbook version runbook:payment-recovery@v3 (Payment recovery runbook v3)",
        "Dependency record retracted",
        "Release deploy:release-2026.07.20.2 finished",
        "Release deploy:release-2026.07.23.1 finished",
        "Change risk rule publication RR-2026-07-23a (change:risk-rules-RR-2026-07-23a) happened",
        "Owner handover of svc:payment-api",
        "Runbook version runbook:payment-recovery@v4 (Payment recovery runbook v4)",
    ], statements


def test_a_service_that_began_in_the_period_is_listed(  # type: ignore[no-untyped-def]
    graph, cli_env, invoke
) -> None:
    span = "from 2025-01-01T00:00:00Z to 2025-01-31T23:59:59Z ('in January 2025')"
    began = (
        f"Service svc:payment-api began at 2025-01-01T00:00:00Z, in the period asked, {span}: "
        "its first record is valid 2025-01-01T00:00:00Z to open"
    )
    doc = _ask(invoke, "what changed on payment-api in January 2025?", *LATER)
    assert _statements(doc)[0] == began, _statements(doc)
    assert _cited(doc, began) == [("svc:payment-api", "active")]
    # Its start is not in February: not listed.
    doc = _ask(invoke, "what changed on payment-api in February 2025?", *LATER)
    assert not [s for s in _statements(doc) if " began at " in s], _statements(doc)


class _ChangeEventsFail(TemplateExecutor):
    """The period's change event read meets a real Neo4j error (a division by zero), as a
    timeout would end it; the other reads are answered."""

    def _read_template(
        self, compiled: CompiledQuery, parameters: dict[str, Any], fetch: int
    ) -> list[neo4j.Record]:
        if compiled.template_id == "change_events_in_window":
            self._read("RETURN 1 / 0 AS x", {}, 5.0, 1)
        return super()._read_template(compiled, parameters, fetch)

    def run_together(self, steps, subject, known_at, *, plan=None, raise_on_error=True):  # type: ignore[no-untyped-def]
        return [
            self.run(s, subject, known_at, plan=plan, raise_on_error=raise_on_error) for s in steps
        ]


def test_a_failed_period_read_says_the_changes_listed_may_be_incomplete(
    graph: neo4j.Driver,
) -> None:
    request = InvestigationRequest(
        question="what changed on payment-api between 2026-07-01 and 2026-07-26?",
        subject_id="acme/user:bob",
        as_of=datetime(2026, 7, 26, 12, 0, tzinfo=UTC),
        deadline_s=600,
    )
    result = investigate(request, driver=graph, executor=_ChangeEventsFail(graph), recorder=None)
    assert {tc.template_id for tc in result.tool_calls if tc.error} == {"change_events_in_window"}
    # What the other reads found is listed ...
    assert any(c.statement.startswith("Owner handover of svc:payment-api") for c in result.claims)
    # ... and said to be possibly incomplete (before: no gap, only the Reads line).
    span = "from 2026-07-01T00:00:00Z to 2026-07-26T12:00:00Z ('between 2026-07-01 and 2026-07-26')"
    gaps = [m.description for m in result.missing_evidence if m.evidence_type == "change_event"]
    assert (
        "unknown, not absent: a read of the run failed before its search of the period "
        f"{span} finished: change_events_in_window@3 (Change events (CHANGED edge at, else "
        "event at, else valid_from) in [from, to], for the tenant or linked to one service) "
        "did not answer (see its tool calls: a query timed out or Neo4j refused it), so the "
        "changes listed may be incomplete (what the unfinished reads were to find is not "
        "known); ask again"
    ) in gaps, gaps
    # The one gap of the failed read (h35: before, a second gap named it beside this one).
    named = [m for m in result.missing_evidence if "change_events_in_window" in m.description]
    assert len(named) == 1, result.missing_evidence
    assert result.status is RunStatus.PARTIAL
