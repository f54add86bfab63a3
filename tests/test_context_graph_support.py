"""Helpers for the Context Graph tests: synthetic runs made of real pydantic models.

(No tests here; the module is named so that it belongs with the Context Graph tests.)
"""

from __future__ import annotations

from datetime import UTC, datetime

import neo4j
from pydantic import BaseModel

from investigator.context_graph import RunRecorder, RunRequest, ToolCallRecord, sha256_of
from investigator.context_graph.chain import rows_hash

AS_OF = datetime(2026, 7, 23, 10, 3, tzinfo=UTC)
KNOWN_AT = datetime(2026, 7, 24, 0, 0, tzinfo=UTC)


class Goal(BaseModel):
    text: str
    intents: list[str]


class Plan(BaseModel):
    plan_id: str
    steps: list[str]


class Ev(BaseModel):
    evidence_id: str
    element_id: str
    version: int
    content: str
    content_hash: str
    source_id: str
    source_version: str
    locator: str | None = None


class Rej(BaseModel):
    candidate_id: str
    element_id: str
    reason: str
    replacement: str | None = None


class Pack(BaseModel):
    pack_id: str
    pack_hash: str
    evidence: list[Ev]


class ClaimModel(BaseModel):
    claim_id: str
    statement: str
    epistemic_status: str
    confidence: float
    evidence_ids: list[str]


def request(
    question: str = "Was release-2026.07.23.1 related to PAY-4097?", **kw: object
) -> RunRequest:
    """A typical investigation request."""
    data: dict[str, object] = {
        "question": question,
        "subject_id": "acme/user:alice",
        "purpose": "incident_investigation",
        "as_of": AS_OF,
        "known_at": KNOWN_AT,
        "service": "svc:payment-api",
    }
    data.update(kw)
    return RunRequest.model_validate(data)


def evidence(n: int) -> Ev:
    content = f"payment-api deployment {n} at 10:02"
    return Ev(
        evidence_id=f"ev:{n}",
        element_id=f"deploy:release-{n}",
        version=1,
        content=content,
        content_hash=sha256_of(content),
        source_id="src:deployments",
        source_version="v1",
        locator=f"deploys.yaml#L{n}",
    )


def tool_call(call_id: str, rows: list[dict[str, object]]) -> ToolCallRecord:
    return ToolCallRecord(
        tool_call_id=call_id,
        template_id="deployments_for_service",
        template_version=1,
        template_hash="sha256:" + "ab" * 32,
        options={"hops": 1},
        params={"service_id": "svc:payment-api", "since": "2026-07-23T09:00:00Z"},
        evidence_type="deployment_time",
        limit=50,
        as_of=AS_OF,
        known_at=KNOWN_AT,
        row_count=len(rows),
        rows_hash=rows_hash(rows),
        truncated=False,
        duration_ms=12.5,
    )


def record_full_run(
    recorder: RunRecorder, req: RunRequest | None = None, finish: bool = True
) -> str:
    """Goal, plan, two tool calls, three evidence, a rejection, the pack, two claims, outcome."""
    start = recorder.start_run(req or request())
    run_id = start.run_id
    recorder.record_goal(
        run_id, Goal(text="relate the release to the errors", intents=["correlation"])
    )
    recorder.record_plan(run_id, Plan(plan_id="plan-1", steps=["deployments", "errors"]))
    recorder.record_tool_call(run_id, tool_call("tc-1", [{"element": {"id": "deploy:1"}}]))
    recorder.record_evidence(run_id, evidence(1), "tc-1")
    recorder.record_evidence(run_id, evidence(2), "tc-1")
    recorder.record_tool_call(run_id, tool_call("tc-2", [{"element": {"id": "err:PAY-4097"}}]))
    recorder.record_evidence(run_id, evidence(3), "tc-2")
    recorder.record_rejection(
        run_id,
        Rej(
            candidate_id="ev:old",
            element_id="runbook:payment-recovery@v2",
            reason="rejected_superseded",
            replacement="runbook:payment-recovery@v3",
        ),
        "tc-2",
    )
    evs = [evidence(1), evidence(2), evidence(3)]
    recorder.record_pack(
        run_id,
        Pack(pack_id="pack-1", pack_hash=sha256_of([e.evidence_id for e in evs]), evidence=evs),
    )
    recorder.record_claims(
        run_id,
        [
            ClaimModel(
                claim_id="c-1",
                statement="release-2026.07.23.1 was deployed at 10:02",
                epistemic_status="fact",
                confidence=1.0,
                evidence_ids=["ev:1"],
            ),
            ClaimModel(
                claim_id="c-2",
                statement="PAY-4097 errors began after the release",
                epistemic_status="inference",
                confidence=0.7,
                evidence_ids=["ev:2", "ev:3"],
            ),
        ],
    )
    if finish:
        recorder.finish_run(run_id, "complete", "evidence_sufficient")
    return run_id


def all_labels(driver: neo4j.Driver) -> set[str]:
    records, _, _ = driver.execute_query("MATCH (n) UNWIND labels(n) AS l RETURN DISTINCT l")
    return {r["l"] for r in records}
