"""The Context Pack: required-first budget, fail closed, canonical hash, fenced prompt."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from investigator.evidence import Evidence, RejectionReason, evidence_id_for, sha256_text
from investigator.gate import EvidenceGate, GatePolicy
from investigator.pack import (
    MAX_BUDGET_TOKENS,
    PackBudgetError,
    PackRequest,
    budget_for,
    build_pack,
    evidence_token_budget,
    pack_hash,
    too_small_hint,
)

AS_OF = datetime(2026, 7, 23, 10, 3, tzinfo=UTC)


def ev(element_id: str, types: list[str], content: str = "text", **kw: Any) -> Evidence:
    return Evidence(
        evidence_id=evidence_id_for(element_id, 1, sha256_text(content), []),
        element_id=element_id,
        content=content,
        evidence_types=types,
        **kw,
    )


def request(**kw: Any) -> PackRequest:
    base: dict[str, Any] = {
        "run_id": "run-a",
        "goal": "Which runbook applied?",
        "as_of": AS_OF,
        "known_at": AS_OF,
        "subject_id": "user:bob",
        "purpose": "incident_investigation",
        "intents": ["applicable_runbook"],
        "required_types": ["runbook"],
        "tools": ["runbooks_for@1"],
    }
    base.update(kw)
    return PackRequest(**base)


def test_pack_hash_ignores_run_identity_timestamps_and_retrieval_bookkeeping() -> None:
    a = ev(
        "runbook:x@v3",
        ["runbook"],
        "steps",
        tool_call_id="tc-01-001",
        ranks={"x": 1},
        scores={"fulltext_search": 3.2},
        rrf_score=0.1,
    )
    b = a.model_copy(update={"tool_call_id": "tc-09-009", "scores": {"fulltext_search": 1.0}})
    p1 = build_pack(request(run_id="run-a", created_at=datetime(2026, 9, 1, tzinfo=UTC)), [a])
    p2 = build_pack(request(run_id="run-b", created_at=datetime(2027, 1, 1, tzinfo=UTC)), [b])
    assert p1.pack_id != p2.pack_id
    assert p1.pack_hash == p2.pack_hash == pack_hash(p1)
    assert p1.pack_hash.startswith("sha256:")


def test_pack_hash_changes_with_what_the_run_saw() -> None:
    a = ev("runbook:x@v3", ["runbook"], "steps")
    base = build_pack(request(), [a]).pack_hash
    assert build_pack(request(known_at=datetime(2026, 8, 1, tzinfo=UTC)), [a]).pack_hash != base
    assert build_pack(request(), [ev("runbook:x@v3", ["runbook"], "other")]).pack_hash != base
    assert build_pack(request(subject_id="user:alice"), [a]).pack_hash != base


def test_evidence_order_is_canonical_not_arrival_order() -> None:
    items = [ev("doc:b", ["document"]), ev("runbook:z", ["runbook"]), ev("doc:a", ["document"])]
    forward = build_pack(request(), items)
    backward = build_pack(request(), list(reversed(items)))
    assert forward.evidence_ids() == backward.evidence_ids()
    assert forward.evidence[0].element_id == "runbook:z"  # required types first
    assert forward.pack_hash == backward.pack_hash


def test_optional_evidence_that_does_not_fit_is_omitted_whole_never_truncated() -> None:
    required = ev("runbook:x", ["runbook"], "r" * 400)
    optional = [ev(f"doc:{i}", ["document"], "d" * 800) for i in range(5)]
    pack = build_pack(request(budget_tokens=900), [required, *optional])
    assert "runbook:x" in [e.element_id for e in pack.evidence]
    kept = {e.element_id for e in pack.evidence}
    omitted = {o.element_id for o in pack.omissions if o.reason is RejectionReason.BUDGET_EXCEEDED}
    assert omitted and kept.isdisjoint(omitted)
    assert all(e.content == "d" * 800 for e in pack.evidence if e.element_id.startswith("doc:"))
    evidence_slot = next(s for s in pack.slots if s.name == "evidence")
    assert evidence_slot.used <= evidence_slot.allocated


def test_required_evidence_that_does_not_fit_fails_closed() -> None:
    runbook = ev("runbook:x", ["runbook"], "r" * 4000)
    with pytest.raises(PackBudgetError, match="too small") as refused:
        build_pack(request(budget_tokens=300), [runbook])
    # The message names a budget that holds it, and that budget does.
    suggested = int(str(refused.value).split("--budget-tokens ")[-1].split()[0])
    assert [
        e.element_id for e in build_pack(request(budget_tokens=suggested), [runbook]).evidence
    ] == ["runbook:x"]


def test_the_suggested_budget_holds_the_evidence_it_was_asked_for() -> None:
    for tokens in (1, 599, 4_321, 63_500, 700_000):
        budget = budget_for(tokens)
        # The least hundred that holds them (h29-claims; before, the least thousand: 1100
        # too small was told 2000 where 1200 holds it).
        assert budget % 100 == 0
        assert evidence_token_budget(budget) >= tokens
        # (Any budget's evidence room is at least 1 token.)
        assert evidence_token_budget(budget - 100) < tokens or tokens == 1
    assert budget_for(900_000) == MAX_BUDGET_TOKENS
    assert "more than the largest budget" in too_small_hint(900_000)


def test_rejections_become_omissions_with_reason_and_replacement() -> None:
    gate = EvidenceGate(
        GatePolicy(
            as_of=AS_OF, known_at=AS_OF, purpose="p", granted_labels=[], relevant_types=["runbook"]
        )
    )
    old = ev(
        "runbook:x@v2",
        ["runbook"],
        "old",
        valid_to=datetime(2026, 7, 1, tzinfo=UTC),
        replacement="runbook:x@v3",
    )
    gate.admit([old])
    pack = build_pack(request(), gate.admitted, gate.rejected)
    assert pack.evidence == []
    assert [(o.element_id, o.reason, o.replacement) for o in pack.omissions] == [
        ("runbook:x@v2", RejectionReason.REJECTED_SUPERSEDED, "runbook:x@v3")
    ]


def test_pack_hash_survives_a_json_round_trip_as_recorded() -> None:
    # The Context Graph stores the pack as JSON; replay parses it and must get the same hash.
    item = ev(
        "EMITTED|svc:a|err:E-1",
        ["error_first_seen"],
        "svc:a EMITTED err:E-1",
        valid_from=datetime(2026, 7, 23, 10, 2, 38, 123456, tzinfo=UTC),
        context={"first_seen": "2026-07-23T10:02:38Z", "path": ["svc:a", "err:E-1"]},
        props={"count": 18734, "ratio": 0.25, "tags": ["a", "b"]},
        transformations=["pii_redaction"],
    )
    pack = build_pack(request(created_at=datetime(2026, 9, 1, tzinfo=UTC)), [item])
    again = type(pack).model_validate_json(pack.model_dump_json())
    assert pack_hash(again) == pack.pack_hash


def test_competing_causes_that_do_not_fit_are_the_farthest_from_the_first_error() -> None:
    # Ten change events 10 min (change:c-01) to 1 min (change:c-10) before the first error
    # (10:00Z), ~200 tokens each, and the first error's record: room for about half of them.
    first = datetime(2026, 7, 23, 10, 0, tzinfo=UTC)
    error = ev("err:E-1", ["error_first_seen"], "first seen 10:00")
    changes = [
        ev(
            f"change:c-{n:02d}",
            ["change_event"],
            "c" * 800,
            type="ChangeEvent",
            context={"at": f"2026-07-23T09:{49 + n:02d}:00Z"},
        )
        for n in range(1, 11)
    ]
    req = request(
        intents=["deployment_correlation"],
        required_types=["error_first_seen"],
        budget_tokens=2000,
        cause_window=(datetime(2026, 7, 22, 10, 0, tzinfo=UTC), first),
    )
    pack = build_pack(req, [error, *changes])
    kept = sorted(e.element_id for e in pack.evidence if e.element_id.startswith("change:"))
    left = sorted(o.element_id for o in pack.omissions)
    assert kept and left
    # Before: the first ids kept whatever their time (change:c-01, the farthest, ...).
    assert kept == [f"change:c-{n:02d}" for n in range(11 - len(kept), 11)], kept
    assert "err:E-1" in {e.element_id for e in pack.evidence}
    # The order the evidence is handed in does not matter, nor does the window change the hash
    # of a pack that holds everything.
    assert build_pack(req, [*reversed(changes), error]).pack_hash == pack.pack_hash
    roomy = request(intents=["deployment_correlation"], required_types=["error_first_seen"])
    assert (
        build_pack(roomy.model_copy(update={"cause_window": req.cause_window}), changes).pack_hash
        == build_pack(roomy, changes).pack_hash
    )
