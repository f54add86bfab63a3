"""Issue 16 against the real Neo4j: every point of the timeline holds, "then" is the event's
time, and no verdict is stronger than its search (demo dataset, no mocks)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import neo4j
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graph_schema.errors import InvestigatorError
from investigator.claims import Verdict
from investigator.evaluation.sweep import timeline_points
from investigator.investigation import InvestigationRequest, InvestigationResult, investigate
from investigator.runbook_lookup import LookupTarget, RunbookLookup, RunbookQuery

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO / "datasets" / "payments-incident"
SEED = (
    "Was the 10:02 release of payment-api related to the PAY-4097 errors? "
    "Who owned payment-api at that moment? Which runbook version applied?"
)
BOB = "acme/user:bob"
KNOWN_AT = datetime(2026, 8, 1, tzinfo=UTC)
RR = "change:risk-rules-RR-2026-07-23a"
POINTS = timeline_points(DATASET)


@pytest.fixture(scope="module")
def demo(demo_graph: neo4j.Driver) -> neo4j.Driver:
    """The demo dataset, ingested once for this module."""
    return demo_graph


def ask(driver: neo4j.Driver, question: str, **kw: object) -> InvestigationResult:
    fields: dict[str, object] = {
        "question": question,
        "subject_id": BOB,
        "service_id": "svc:payment-api",
        "known_at": KNOWN_AT,
        "deadline_s": 600.0,
    }
    fields.update(kw)
    return investigate(InvestigationRequest.model_validate(fields), driver=driver)


@pytest.mark.parametrize("as_of", ["2026-07-01T00:00:00Z", "2020-01-01T00:00:00Z"])
def test_an_as_of_before_the_data_is_a_partial_answer(demo: neo4j.Driver, as_of: str) -> None:
    at = datetime.fromisoformat(as_of.replace("Z", "+00:00"))
    result = ask(demo, "Was the release of payment-api related to the PAY-4097 errors?", as_of=at)
    assert result.status.value == "partial"
    assert result.verdict is Verdict.UNCERTAIN
    assert all(ev.valid_from is None or ev.valid_from <= at for ev in result.evidence)


def test_the_day_after_the_confounder_is_still_found(demo: neo4j.Driver) -> None:
    result = ask(demo, SEED, as_of=datetime(2026, 7, 24, tzinfo=UTC))
    assert RR in {c.element_id for c in result.confounders}
    assert result.verdict in (Verdict.LIKELY, Verdict.UNCERTAIN)
    # The owner at that moment (the first error) and the owner at as_of, both labelled.
    owners = [c.statement for c in result.claims if c.intent == "ownership_at_time"]
    assert any(
        s.startswith("At the first PAY-4097 error, 2026-07-23T10:02:38Z") and "payments-core" in s
        for s in owners
    ), owners
    assert any(
        s.startswith("At as_of, 2026-07-24T00:00:00Z") and "payments-platform" in s for s in owners
    ), owners


def test_then_without_as_of_is_the_owner_at_the_event(demo: neo4j.Driver) -> None:
    result = ask(demo, "Who owned payment-api then?", known_at=None)
    owners = [c.statement for c in result.claims if c.intent == "ownership_at_time"]
    then = [s for s in owners if "the first PAY-4097 error" in s]
    assert then and "team:payments-core" in then[0], owners


@settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    point=st.sampled_from(POINTS),
    jitter=st.sampled_from([timedelta(0), timedelta(seconds=-1), timedelta(seconds=1)]),
    runbook=st.booleans(),
)
def test_any_point_of_the_timeline_holds(
    demo: neo4j.Driver, point: object, jitter: timedelta, runbook: bool
) -> None:
    """Never an exit-1 error; whatever is admitted happened, or holds, by as_of."""
    as_of = point.as_of + jitter  # type: ignore[attr-defined]
    known_at = point.known_at  # type: ignore[attr-defined]
    try:
        if runbook:
            answer = RunbookLookup(demo, record=False).lookup(
                RunbookQuery(
                    target=LookupTarget.SERVICE,
                    value="svc:payment-api",
                    subject_id=BOB,
                    as_of=as_of,
                    known_at=known_at,
                )
            )
            if answer.runbook is not None:
                assert answer.runbook.valid_from is None or answer.runbook.valid_from <= as_of
            return
        result = ask(demo, SEED, as_of=as_of, known_at=known_at or KNOWN_AT)
    except InvestigatorError as exc:
        assert exc.exit_code != 1, exc
        return
    assert all(ev.supports_from is None or ev.supports_from <= as_of for ev in result.evidence)
    if result.verdict in (Verdict.CONFIRMED, Verdict.LIKELY):
        assert not any("competing-cause" in m.description for m in result.missing_evidence)
