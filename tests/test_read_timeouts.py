"""Read timeouts that hold: a read answers or fails in bounded time, on a real Neo4j.

Neo4j's transaction timeout does not cover planning: a text the server plans for longer than
its timeout answered only once planned (on a cold server, reads of 5 s templates ran 60-87 s).
The executor now stops waiting a tenth after the timeout (and at the run's deadline), closes
the connection and reports the read as timed out; `INVESTIGATOR_READ_TIMEOUT` sets every
template read's timeout; a run whose reads failed names them first, not behind max_rounds.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import neo4j
import pytest

from cypher_templates.executor import DEADLINE_CUT, TemplateExecutor, reads_until
from cypher_templates.plan import PlanStep
from cypher_templates.proofs import ReadOnlyProofs
from cypher_templates.registry import TemplateRegistry
from cypher_templates.subject import Subject

SEED = "Who owned payment-api?"


def _slow_to_plan_registry(tmp_path: Path, timeout_s: float) -> TemplateRegistry:
    """One read-only template whose text Neo4j takes long to plan: a chain of 60 pattern
    parts (join ordering), with relationship types of this test's own (no cached plan)."""
    tag = uuid.uuid4().hex[:12]
    parts = ", ".join(f"(a{i}:KG)-[:T{i}_{tag}]->(a{i + 1}:KG)" for i in range(60))
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "slow.cypher").write_text(
        f"MATCH {parts} WHERE a0.tenant = $tenant "
        "RETURN a0 AS element, {} AS context, 0.0 AS score LIMIT $limit"
    )
    (tmp_path / "manifest.yaml").write_text(
        "templates:\n  - {id: slow, version: 1, file: slow.cypher, description: d,"
        f" evidence_types: [entity], row_cap: 1, timeout_s: {timeout_s}}}\n"
    )
    return TemplateRegistry.load(tmp_path / "manifest.yaml")


def _run_slow(
    driver: neo4j.Driver, tmp_path: Path, timeout_s: float, deadline: float | None = None
) -> tuple[float, str | None]:
    driver.execute_query("CALL db.clearQueryCaches()")
    executor = TemplateExecutor(
        driver,
        _slow_to_plan_registry(tmp_path, timeout_s),
        proofs=ReadOnlyProofs(tmp_path / "proofs.json"),
    )
    subject = Subject(
        id="user:t", tenant="acme", labels=("internal",), purposes=("p",), purpose="p"
    )
    step = PlanStep(template_id="slow", params={}, evidence_type="entity", limit=1)
    began = time.monotonic()
    with reads_until(deadline):
        result = executor.run(step, subject, datetime.now(UTC), raise_on_error=False)
    return time.monotonic() - began, result.error


def test_a_read_neo4j_plans_past_its_timeout_fails_in_bounded_time(
    driver: neo4j.Driver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The environment's INVESTIGATOR_READ_TIMEOUT (a loaded machine's test runs) would
    # override the template's own 0.2 s, and nothing would time out.
    monkeypatch.delenv("INVESTIGATOR_READ_TIMEOUT", raising=False)
    # Its read-only proof (an EXPLAIN: planning) and its two tries are each bounded on the
    # client: 0.2 s x 4 (+0.08 s), 0.2 s (+0.02 s), 0.8 s (+0.08 s). Before, the EXPLAIN alone
    # waited for the whole planning (19-42 s on the project machine).
    took, error = _run_slow(driver, tmp_path, timeout_s=0.2)
    assert error is not None and "timed out after" in error, error
    assert took < 6.0, took


def test_no_read_waits_past_the_run_deadline(driver: neo4j.Driver, tmp_path: Path) -> None:
    # A 30 s template read by a run with 0.5 s left stops at the run's deadline.
    took, error = _run_slow(driver, tmp_path, timeout_s=30, deadline=time.monotonic() + 0.5)
    assert error == DEADLINE_CUT
    assert took < 3.0, took


@pytest.mark.parametrize("value", ["0", "-1", "abc", "1e9", "nan", "inf", "601", "0x10"])
def test_bad_read_timeout_answers_one_line(
    demo_graph: neo4j.Driver, cli_env, invoke, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("INVESTIGATOR_READ_TIMEOUT", value)
    for args in (
        ("investigate", SEED, "--subject", "acme/user:bob"),
        ("runbook", "--service", "svc:payment-api", "--subject", "acme/user:bob"),
    ):
        result = invoke(*args)
        assert result.code == 2, result
        assert result.out == ""
        assert result.err.strip().splitlines() == [
            "error: INVESTIGATOR_READ_TIMEOUT must be a number of seconds above 0 and at most "
            f"600, not {value!r}"
        ], result


def test_failed_reads_are_named_before_the_stop_reason(
    demo_graph: neo4j.Driver, cli_env, invoke, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    # A microsecond per read: every template read times out before Neo4j can answer.
    monkeypatch.setenv("INVESTIGATOR_READ_TIMEOUT", "0.000001")
    flags = ("--service", "svc:payment-api", "--subject", "acme/user:bob", "--max-rounds", "1")
    result = invoke("investigate", SEED, *flags)
    assert result.code == 0, result
    lines = result.out.splitlines()
    status = next(i for i, line in enumerate(lines) if line.startswith("Status "))
    assert "partial" in lines[status]
    # Right under the Status line (its stop reason is max_rounds): the reads that failed.
    assert re.fullmatch(
        r"Reads      unknown, not absent: (\d+) of \1 reads timed out \(.*entity_resolution@\d+"
        r".*: query timed out after [0-9.e-]+ s and was cancelled\); ask again "
        r"\(more time for each: INVESTIGATOR_READ_TIMEOUT\)",
        lines[status + 1],
    ), lines[status + 1]
    # The owner's gap says a read failed, not to ask with more rounds.
    gap = next(line for line in lines if line.strip().startswith("ownership (required)"))
    assert "unknown, not absent: a read of the run failed" in gap, gap
    assert "--max-rounds" not in result.out

    doc = json.loads(invoke("investigate", SEED, *flags, "--json").out)
    assert doc["tool_calls"] and all(tc["error"] for tc in doc["tool_calls"])
    from investigator.serving.results import summary_text

    summary = summary_text("investigate", doc)
    assert re.search(r"^Note: unknown, not absent: \d+ of \d+ reads timed out", summary, re.M)
    assert "INVESTIGATOR_READ_TIMEOUT" not in summary  # served callers cannot set it


def test_a_larger_read_timeout_reads_as_before(
    demo_graph: neo4j.Driver, cli_env, invoke, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("INVESTIGATOR_READ_TIMEOUT", "120")
    result = invoke("investigate", SEED, "--service", "svc:payment-api", "--subject", "user:bob")
    assert result.code == 0, result
    assert "team:payments-platform OWNS svc:payment-api" in result.out
    assert "Reads " not in result.out


def test_the_incident_is_not_said_absent_when_its_read_failed(
    demo_graph: neo4j.Driver, cli_env, invoke, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    # Before: the Incident line said "'the incident' names no incident: none you may read had
    # started by as_of" when the read of the incidents timed out (seen on a cold server), under
    # a Reads line saying the reads were unknown: the report stated an absence it never read.
    question = "how long did it take to detect the incident?"
    flags = ("--as-of", "2026-07-23T10:30:00Z", "--subject", "acme/user:bob")
    monkeypatch.setenv("INVESTIGATOR_READ_TIMEOUT", "0.000001")
    result = invoke("investigate", question, *flags)
    assert result.code == 0, result
    [line] = [line for line in result.out.splitlines() if line.startswith("Incident ")]
    assert "names no incident" not in line and "none you may read" not in line, line
    assert "unknown, not absent" in line and "did not finish" in line, line

    # With the time to read, the same words are the incident open at as_of.
    monkeypatch.setenv("INVESTIGATOR_READ_TIMEOUT", "120")
    result = invoke("investigate", question, *flags)
    assert result.code == 0, result
    assert (
        "Incident   'the incident' is taken as inc:2026-07-23-payments (Payments authorization "
        "failures 2026-07-23, 2026-07-23T10:02:38Z to "
    ) in result.out, result.out
