"""The product under test: each case through `investigate`/`runbook --json`, then `replay`.

Only the outward JSON contracts of docs/design.md section 9 are read here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from investigator.evaluation.cases import GoldenCase, as_iso
from investigator.evaluation.cli_runner import CliCall, call_cli
from investigator.evaluation.outcomes import (
    CaseOutcome,
    ClaimView,
    EvidenceView,
    RejectionView,
    ReplayView,
    estimate_tokens,
)

# Keys under which an evidence item may name the KG element it stands for.
_KG_ID_KEYS = ("element_id", "kg_id", "kg_element_id", "node_id", "key", "edge_key")


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _time(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else None


def kg_ids_of(item: dict[str, Any]) -> list[str]:
    """The KG ids (node id or edge key) an evidence or rejection item refers to."""
    ids: list[str] = []
    for key in _KG_ID_KEYS:
        value = item.get(key)
        if isinstance(value, str) and value and value not in ids:
            ids.append(value)
    for key in ("kg_ids", "element_ids"):
        for value in item.get(key) or []:
            if isinstance(value, str) and value not in ids:
                ids.append(value)
    element = item.get("element")
    if isinstance(element, dict):
        ids.extend(i for i in kg_ids_of(element) if i not in ids)
    return ids


def evidence_view(item: dict[str, Any]) -> EvidenceView:
    """Normalise one `evidence[]` item of `investigate --json`."""
    content = str(item.get("content") or "")
    return EvidenceView(
        evidence_id=str(item.get("evidence_id")),
        kg_ids=kg_ids_of(item),
        source_id=_text(item.get("source_id")),
        source_version=_text(item.get("source_version")),
        locator=_text(item.get("locator")),
        content_hash=_text(item.get("content_hash")),
        valid_from=_time(item.get("valid_from")),
        valid_to=_time(item.get("valid_to")),
        acl=[str(a) for a in item.get("acl") or []],
        tenant=_text(item.get("tenant")),
        status=_text(item.get("status")),
        content=content,
        tokens=int(item["tokens"])
        if isinstance(item.get("tokens"), int)
        else estimate_tokens(content),
    )


def rejection_view(item: dict[str, Any]) -> RejectionView:
    """Normalise one `rejected[]` item."""
    ids = kg_ids_of(item)
    cand = str(item.get("candidate_id") or "")
    if not ids and cand:
        ids = [cand]
    return RejectionView(
        candidate_id=cand,
        kg_ids=ids,
        reason=str(item.get("reason") or ""),
        replacement=_text(item.get("replacement")),
    )


def _tokens_used(doc: dict[str, Any]) -> int | None:
    for holder in (doc, doc.get("pack") if isinstance(doc.get("pack"), dict) else {}):
        for key in ("evidence_tokens", "tokens_used", "used_tokens"):
            value = holder.get(key) if isinstance(holder, dict) else None
            if isinstance(value, int):
                return value
    return None


def investigate_argv(case: GoldenCase) -> list[str]:
    """The `investigator investigate ... --json` command line for a case."""
    assert case.question is not None
    argv = ["investigate", case.question, "--subject", case.subject]
    if case.as_of is not None:
        argv += ["--as-of", as_iso(case.as_of)]
    if case.service:
        argv += ["--service", case.service]
    if case.purpose:
        argv += ["--purpose", case.purpose]
    if case.known_at:
        argv += ["--known-at", as_iso(case.known_at)]
    if case.budget_tokens:
        argv += ["--budget-tokens", str(case.budget_tokens)]
    if case.max_rounds:
        argv += ["--max-rounds", str(case.max_rounds)]
    return [*argv, "--json"]


def runbook_argv(case: GoldenCase) -> list[str]:
    """The `investigator runbook ... --json` command line for a case."""
    lookup = case.runbook
    assert lookup is not None
    argv = ["runbook"]
    if lookup.service:
        argv += ["--service", lookup.service]
    elif lookup.alert:
        argv += ["--alert", lookup.alert]
    elif lookup.error_code:
        argv += ["--error-code", lookup.error_code]
    else:
        argv.append(str(lookup.text))
    if case.as_of is not None:
        argv += ["--as-of", as_iso(case.as_of)]
    return [*argv, "--subject", case.subject, "--json"]


def replay_view(call: CliCall) -> ReplayView:
    """Normalise `replay --json`."""
    doc = call.json_document() or {}
    drift = [
        str(d) if not isinstance(d, dict) else str(sorted(d.items()))
        for d in doc.get("drift") or []
    ]
    return ReplayView(
        exit_code=call.exit_code,
        verified=doc.get("verified") is True,
        pack_hash_match=doc.get("pack_hash_match") is True,
        chain_valid=doc.get("chain_valid") is True,
        drift=drift,
        error=call.error_line() if call.exit_code else None,
    )


def outcome_from_investigate(case: GoldenCase, call: CliCall) -> CaseOutcome:
    """Turn `investigate --json` into a CaseOutcome (an error exit keeps only the code)."""
    doc = call.json_document()
    if call.exit_code != 0 or doc is None:
        return CaseOutcome(
            case_id=case.id,
            system="product",
            exit_code=call.exit_code,
            error=call.error_line() or ("no JSON on stdout" if call.exit_code == 0 else None),
            status="refused" if call.exit_code == 3 else None,
        )
    claims = [
        ClaimView(
            claim_id=str(c.get("claim_id")),
            statement=str(c.get("statement") or ""),
            epistemic_status=str(c.get("epistemic_status") or ""),
            evidence_ids=[str(e) for e in c.get("evidence_ids") or []],
        )
        for c in doc.get("claims") or []
    ]
    missing = []
    for m in doc.get("missing_evidence") or []:
        if isinstance(m, dict):
            missing.append(str(m.get("evidence_type") or m.get("type") or m.get("requirement")))
        else:
            missing.append(str(m))
    return CaseOutcome(
        case_id=case.id,
        system="product",
        exit_code=call.exit_code,
        status=_text(doc.get("status")),
        verdict=_text(doc.get("verdict")),
        stop_reason=_text(doc.get("stop_reason")),
        run_id=_text(doc.get("run_id")),
        pack_hash=_text(doc.get("pack_hash")),
        admitted=[evidence_view(e) for e in doc.get("evidence") or []],
        rejected=[rejection_view(r) for r in doc.get("rejected") or []],
        claims=claims,
        missing_evidence=missing,
        confounders=[
            str(c.get("element_id"))
            for c in doc.get("confounders") or []
            if isinstance(c, dict) and c.get("element_id")
        ],
        tokens_used=_tokens_used(doc),
    )


def outcome_from_runbook(case: GoldenCase, call: CliCall) -> CaseOutcome:
    """Turn `runbook --json` into a CaseOutcome: the runbook and owner are what it admits."""
    doc = call.json_document()
    if call.exit_code != 0 or doc is None:
        return CaseOutcome(
            case_id=case.id,
            system="product",
            exit_code=call.exit_code,
            error=call.error_line() or ("no JSON on stdout" if call.exit_code == 0 else None),
            status="refused" if call.exit_code == 3 else None,
        )
    admitted: list[EvidenceView] = []
    runbook = doc.get("runbook") if isinstance(doc.get("runbook"), dict) else None
    if runbook is not None:
        item = dict(runbook)
        item.setdefault("evidence_id", runbook.get("evidence_id") or runbook.get("id"))
        view = evidence_view(item)
        ids = [str(runbook.get("id"))] + [i for i in view.kg_ids if i != runbook.get("id")]
        admitted.append(view.model_copy(update={"kg_ids": ids}))
    owner = doc.get("owner")
    # `owner` is the team id valid at as_of; accept it bare or inside an object.
    owner_id = (owner.get("team") or owner.get("id")) if isinstance(owner, dict) else owner
    return CaseOutcome(
        case_id=case.id,
        system="product",
        exit_code=call.exit_code,
        status="complete" if runbook is not None else "partial",
        run_id=_text(doc.get("run_id")),
        admitted=admitted,
        rejected=[rejection_view(r) for r in doc.get("rejected") or []],
        runbook_id=_text(runbook.get("id")) if runbook else None,
        owner=_text(owner_id),
    )


def run_product_case(case: GoldenCase, *, replay: bool = True) -> CaseOutcome:
    """Run a case through the real CLI and, when it produced a run, replay that run."""
    if case.kind == "investigate":
        outcome = outcome_from_investigate(case, call_cli(investigate_argv(case)))
    else:
        outcome = outcome_from_runbook(case, call_cli(runbook_argv(case)))
    if replay and outcome.run_id:
        # The auditor replaying is the case's subject (replay names who asks, like any command).
        rep = replay_view(call_cli(["replay", outcome.run_id, "--subject", case.subject, "--json"]))
        outcome = outcome.model_copy(update={"replay": rep})
    return outcome
