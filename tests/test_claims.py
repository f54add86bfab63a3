"""Claim rules on evidence built in the test: statuses, verdicts, confounders, gaps."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from investigator.claims import (
    EpistemicStatus,
    Verdict,
    derive_claims,
    keep_claims_in_pack,
    summarize,
)
from investigator.evidence import Evidence, evidence_id_for, sha256_text
from investigator.gate import Conflict

AS_OF = datetime(2026, 7, 23, 10, 3, tzinfo=UTC)
CORRELATION = ["deployment_correlation"]


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def ev(element_id: str, types: list[str], content: str = "text", **kw: Any) -> Evidence:
    return Evidence(
        evidence_id=evidence_id_for(element_id, 1, sha256_text(content), []),
        element_id=element_id,
        content=content,
        evidence_types=types,
        **kw,
    )


DEPLOY = ev(
    "deploy:r1",
    ["deployment_time"],
    "release r1",
    name="release-r1",
    valid_from=at("2026-07-23T10:02:00Z"),
    props={"finished_at": "2026-07-23T10:02:00Z"},
)
FIRST = ev(
    "EMITTED|svc:a|err:E-1",
    ["error_first_seen"],
    "svc:a EMITTED err:E-1",
    context={"error_code": "err:E-1", "first_seen": "2026-07-23T10:02:38Z"},
)
AFFECTED = ev("AFFECTED_BY|svc:a|inc:1", ["affected_service"], "inc:1 AFFECTED svc:a")
MECHANISM = ev("doc:pm", ["mechanism"], "the release lowered the pool from 50 to 10")
CHANGE = ev(
    "change:rr",
    ["change_event"],
    "risk rules",
    name="risk rules",
    props={"at": "2026-07-23T10:02:21Z"},
)


def test_time_correlation_alone_is_likely_with_a_hypothesis_and_missing_mechanism() -> None:
    result = derive_claims(CORRELATION, [DEPLOY, FIRST, AFFECTED], as_of=AS_OF)
    assert result.verdict is Verdict.LIKELY
    statuses = {c.epistemic_status for c in result.claims}
    assert statuses == {EpistemicStatus.FACT, EpistemicStatus.INFERENCE, EpistemicStatus.HYPOTHESIS}
    inference = next(c for c in result.claims if c.epistemic_status is EpistemicStatus.INFERENCE)
    assert (
        "38 s after" in inference.statement and "not by itself a root cause" in inference.statement
    )
    missing = {m.evidence_type: m.required for m in result.missing_evidence}
    assert missing == {"mechanism": False}


def test_mechanism_confirms_and_a_confounder_lowers_the_verdict() -> None:
    confirmed = derive_claims(CORRELATION, [DEPLOY, FIRST, AFFECTED, MECHANISM], as_of=AS_OF)
    assert confirmed.verdict is Verdict.CONFIRMED
    lowered = derive_claims(CORRELATION, [DEPLOY, FIRST, AFFECTED, MECHANISM, CHANGE], as_of=AS_OF)
    assert lowered.verdict is Verdict.LIKELY
    assert [c.element_id for c in lowered.confounders] == ["change:rr"]
    assert any("change:rr" in c.statement for c in lowered.claims)


def test_unresolved_conflict_on_the_deploy_time_lowers_the_verdict() -> None:
    conflict = Conflict(
        conflict_key="k", evidence_ids=[DEPLOY.evidence_id, "ev:other"], resolution="unresolved"
    )
    result = derive_claims(
        CORRELATION, [DEPLOY, FIRST, AFFECTED], as_of=AS_OF, conflicts=[conflict]
    )
    assert result.verdict is Verdict.UNCERTAIN


def test_errors_before_the_release_refute_it() -> None:
    early = ev(
        "EMITTED|svc:a|err:E-1",
        ["error_first_seen"],
        "x",
        context={"first_seen": "2026-07-23T09:00:00Z"},
    )
    result = derive_claims(CORRELATION, [DEPLOY, early, AFFECTED], as_of=AS_OF)
    assert result.verdict is Verdict.REFUTED


def test_missing_required_evidence_is_listed_and_no_claim_lacks_evidence() -> None:
    result = derive_claims(["ownership_at_time", "deployment_correlation"], [DEPLOY], as_of=AS_OF)
    required = sorted(m.evidence_type for m in result.missing_evidence if m.required)
    assert required == ["affected_service", "error_first_seen", "ownership"]
    assert result.verdict is Verdict.UNCERTAIN
    assert all(c.evidence_ids for c in result.claims)


def test_claims_citing_evidence_outside_the_pack_are_dropped() -> None:
    result = derive_claims(CORRELATION, [DEPLOY, FIRST, AFFECTED], as_of=AS_OF)
    kept = keep_claims_in_pack(result.claims, [DEPLOY.evidence_id])
    assert kept and all(c.evidence_ids == [DEPLOY.evidence_id] for c in kept)


def test_claims_are_deterministic() -> None:
    a = derive_claims(CORRELATION, [DEPLOY, FIRST, AFFECTED, CHANGE], as_of=AS_OF)
    b = derive_claims(CORRELATION, [CHANGE, AFFECTED, FIRST, DEPLOY], as_of=AS_OF)
    assert a == b


class _Reply:
    def __init__(self, content: str) -> None:
        self.content = content


class _ScriptedLLM:
    """A scripted stand-in for a model (no network): returns fixed text."""

    def __init__(self, content: str) -> None:
        self.content = content
        self.prompts: list[str] = []

    def invoke(self, prompt: str) -> _Reply:
        self.prompts.append(prompt)
        return _Reply(self.content)


def test_llm_summary_keeps_only_sentences_citing_pack_evidence() -> None:
    result = derive_claims(CORRELATION, [DEPLOY, FIRST, AFFECTED], as_of=AS_OF)
    ids = [DEPLOY.evidence_id, FIRST.evidence_id, AFFECTED.evidence_id]
    text = (
        f"The release finished at 10:02 [{DEPLOY.evidence_id}]. "
        f"Errors began 38 s later [{FIRST.evidence_id}] [{DEPLOY.evidence_id}]. "
        "The risk engine is definitely the root cause. "
        "It was caused by cosmic rays [ev:00000000000000000000]."
    )
    llm = _ScriptedLLM(text)
    summary = summarize(llm, "# Evidence\n...", result.claims, ids)
    assert summary.sentences == [
        f"The release finished at 10:02 [{DEPLOY.evidence_id}].",
        f"Errors began 38 s later [{FIRST.evidence_id}] [{DEPLOY.evidence_id}].",
    ]
    assert summary.dropped == 2
    assert DEPLOY.evidence_id in llm.prompts[0]
