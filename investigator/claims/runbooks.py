"""Runbooks in force: which version held at as_of or at an instant, undated versions, the
no-runbook gap, and owners read from a runbook's text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime

from pydantic import BaseModel, Field

from investigator.claims.model import Claim, EpistemicStatus
from investigator.claims.wording import (
    _claim,
    _holds_text,
    _quote,
    _title,
    _valid_text,
    _versioned,
    _when,
    _with,
)
from investigator.evidence import Evidence, as_held, iso_utc
from investigator.planner import asks_whom_to_reach
from investigator.record_time import recorded_after, undated
from investigator.rubric import Intent, MissingEvidence
from investigator.runbook_fallback import own_runbooks_weak
from investigator.runbook_search import without_words
from investigator.runbook_sections import pointed_at
from investigator.timeline import ReferenceTime, holds_at, instant_of


class _TextOwners(BaseModel):
    """The owner claims of runbooks chosen by the question's words, and what is not known."""

    claims: list[Claim] = Field(default_factory=list)
    missing: list[MissingEvidence] = Field(default_factory=list)


def _places_named(evidence: Sequence[Evidence], question: str) -> list[str]:
    """The services the run read that the question writes, by id or by the name its id
    holds ("ssh brute force on svc:payment-api": svc:payment-api): where a symptom shows."""
    said = " ".join(question.split())
    return sorted(
        {
            ev.element_id
            for ev in evidence
            if ev.type == "Service"
            and "entity" in ev.evidence_types
            and any(
                without_words(question, [form]) != said
                for form in (ev.element_id, ev.element_id.split(":", 1)[-1])
            )
        }
    )


def _text_runbook_owners(
    runbooks: Sequence[Evidence],
    evidence: Sequence[Evidence],
    found_by_text: Sequence[str],
    runbook_services: Sequence[tuple[str, str]],
    held_at: Callable[[Evidence], str],
    question: str = "",
) -> _TextOwners:
    """For each runbook chosen by the question's words alone: its owner at as_of as the card
    reads it (its own OWNS record, else the owner of a service it applies to), each a `fact`
    bound to that OWNS record; and, said as gaps that would strengthen the answer, that no
    service, alert or error code record ties it to the question, and an owner not found.
    A question that names a service (the place of a symptom) is not said to name none: the
    gap says that no record ties the runbook to it."""
    out = _TextOwners()
    owners = _with(evidence, "ownership")
    places = _places_named(evidence, question)
    for rb in sorted({str(ev.context.get("anchor")) for ev in runbooks} & set(found_by_text)):
        services = {svc for runbook, svc in runbook_services if runbook == rb}
        own = [ev for ev in owners if ev.context.get("owned") == rb]
        through = [ev for ev in owners if ev.context.get("service") in services]
        own_ids = {ev.evidence_id for ev in own}
        # The search's best hit may be a version not in force at as_of (v4 from 07-25 asked
        # at 07-23): the route names the versions the gate admitted for it (e31-qa finding 4).
        named = _admitted_versions(runbooks, rb)
        for ev in own or through:
            via = (
                f", the owner of {rb}"
                if ev.evidence_id in own_ids
                else f", through service {ev.context.get('service')}, which {named} "
                + ("applies" if " and " not in named else "apply")
                + " to"
            )
            out.claims.append(
                _claim(
                    f"{held_at(ev)}: {ev.content} ({_valid_text(ev)}){via}",
                    EpistemicStatus.FACT,
                    0.9,
                    [ev],
                    Intent.APPLICABLE_RUNBOOK.value,
                )
            )
        unnamed = (
            f"no service, alert or error code record the subject may read is named by the "
            f"question: {named} is tied to it"
        )
        if places:
            unnamed = (
                f"no record the subject may read ties {named} to {', '.join(places)}, which "
                f"the question names: {named} is tied to the question"
            )
        if not services & set(places):
            out.missing.append(
                MissingEvidence(
                    evidence_type="entity",
                    intents=[Intent.APPLICABLE_RUNBOOK.value],
                    description=f"{unnamed} by the runbook search's best fit for its words alone",
                    required=False,
                )
            )
        if not (own or through):
            out.missing.append(_text_owner_gap(named))
    return out


def _admitted_versions(runbooks: Sequence[Evidence], anchor: str) -> str:
    """The runbook versions admitted for a runbook the search found by the question's words
    (those in force at as_of or a time asked), by id: the anchor itself when none is."""
    ids = sorted({ev.element_id for ev in runbooks if ev.context.get("anchor") == anchor})
    return " and ".join(ids) if ids else anchor


def _text_owner_gap(rb: str) -> MissingEvidence:
    """The gap that would strengthen a runbook found by the question's words: no owner of it
    (nor of a service it applies to) at as_of."""
    return MissingEvidence(
        evidence_type="ownership",
        intents=[Intent.APPLICABLE_RUNBOOK.value],
        description=f"no owner of {rb} at as_of the subject may read: no OWNS "
        "record of it, nor of a service it applies to",
        required=False,
    )


# How the gap of no runbook version in force at as_of begins (a stale --known-at).
NO_RUNBOOK_AT_AS_OF = "no runbook version is recorded in force at as_of"


def runbook_in_force(ev: Evidence, at: datetime) -> bool:
    """Whether a runbook version is the one in force at `at`: by its valid interval, or for
    an undated one by its record times (recorded by then, not yet replaced)."""
    return _undated_holds(ev, at) if undated(ev) else holds_at(ev, at)


def states_at_as_of(
    intents: Sequence[str], claims: Sequence[Claim], evidence: Sequence[Evidence], as_of: datetime
) -> bool:
    """Whether the answer states, for each owner, runbook or policy question it asks, a record
    in force at `as_of` (beside what held "then"): only then may the answer be said to hold at
    as_of too. A release or an error is an event; a version that ended before as_of (a stale
    --known-at that holds no later one) holds only then."""
    by_id = {ev.evidence_id: ev for ev in evidence}
    state_intents = {
        Intent.OWNERSHIP_AT_TIME.value: "ownership",
        Intent.APPLICABLE_RUNBOOK.value: "runbook",
        Intent.APPLICABLE_POLICY.value: "policy",
    }

    def holds(claim: Claim, etype: str) -> bool:
        for ev in (by_id[i] for i in claim.evidence_ids if i in by_id):
            if etype not in ev.evidence_types:
                continue
            if runbook_in_force(ev, as_of) if etype == "runbook" else holds_at(as_held(ev), as_of):
                return True
        return False

    asked = [i for i in state_intents if i in intents]
    return bool(asked) and all(
        any(claim.intent == i and holds(claim, state_intents[i]) for claim in claims) for i in asked
    )


def _served_over(ev: Evidence, runbooks: Sequence[Evidence], as_of: datetime) -> Evidence | None:
    """For an alert's or error code's own page that is weak (untrusted, or recorded after
    as_of: runbook_fallback.own_runbooks_weak), the trusted runbook reached through a service
    that is in force at as_of and served before it, as on the card (e29-qa finding 3); else
    None. Of several, the first by id."""
    if ev.context.get("anchor_type") not in ("alert", "error_code"):
        return None
    if not own_runbooks_weak([ev], as_of):
        return None
    late = recorded_after(ev, as_of)
    served = sorted(
        (
            o
            for o in runbooks
            if o.element_id != ev.element_id
            and o.context.get("anchor_type") == "service"
            and not recorded_after(o, as_of)
            and runbook_in_force(o, as_of)
            and (o.trust == "trusted" or late)
            and pointed_at(o, list(runbooks)) is None
        ),
        key=lambda o: o.element_id,
    )
    return served[0] if served else None


def _set_aside_text(ev: Evidence, over: Evidence | None) -> str:
    """What a claim of a set-aside page adds: why the other runbook is the one to follow."""
    if over is None:
        return ""
    untrusted = "it is untrusted imported text, and " if ev.trust != "trusted" else ""
    trusted = "trusted " if over.trust == "trusted" else ""
    of = f" of {over.context['anchor']}" if isinstance(over.context.get("anchor"), str) else ""
    return (
        f"; {untrusted}{over.element_id}, the {trusted}runbook{of} in force at as_of, comes first"
    )


def _no_runbook_at_as_of_gaps(
    runbooks: Sequence[Evidence],
    refs: Sequence[ReferenceTime],
    as_of: datetime,
    known_at: datetime | None,
    search_stopped_by: str | None,
) -> list[MissingEvidence]:
    """A required gap when the question asks about another time ("then") and the versions
    the run admitted are in force there but none at as_of: each ended by then, and no later
    version was in what the KG knew at `known_at` (a stale --known-at with a later --as-of).
    The answer says what applied then, never that it still applies at as_of."""
    if search_stopped_by is not None or not any(r.kind != "as_of" for r in refs):
        return []  # a search cut short says so itself; no other time asked: as_of's own gaps
    versions = [ev for ev in runbooks if pointed_at(ev, list(runbooks)) is None]
    if not versions or any(runbook_in_force(ev, as_of) for ev in versions):
        return []
    ended = sorted(
        {
            (ev.valid_to, ev.element_id)
            for ev in versions
            if not undated(ev) and ev.valid_to is not None and ev.valid_to <= as_of
        }
    )
    if not ended:
        return []
    known = f" in what the KG knew at {iso_utc(known_at)}" if known_at is not None else ""
    endings = "; ".join(f"{element_id} ended at {iso_utc(end)}" for end, element_id in ended)
    return [
        MissingEvidence(
            evidence_type="runbook",
            intents=[Intent.APPLICABLE_RUNBOOK.value],
            description=f"{NO_RUNBOOK_AT_AS_OF}, {iso_utc(as_of)},"
            f"{known}, in the records this subject may read: {endings}, and no later version "
            "was recorded; which runbook applies at as_of is not known",
            required=True,
        )
    ]


def _undated_in_force(ev: Evidence, asked: datetime) -> str | None:
    """For an undated version a re-import replaced: the one instant it is claimed at, and
    its record times (it held from its import until the re-import, not at as_of)."""
    replaced = ev.context.get("superseded_at")
    if not undated(ev) or replaced is None:
        return None
    until = iso_utc(replaced) if isinstance(replaced, datetime) else str(replaced)
    return (
        f"at {iso_utc(asked)} (it states no validity: recorded {_when(ev.recorded_at)}, "
        f"replaced by a re-import at {until})"
    )


def _undated_holds(ev: Evidence, at: datetime) -> bool:
    """Whether an undated version was the one in force at `at`: recorded by then, and not
    yet replaced by a re-import (record_time.py)."""
    replaced = instant_of(ev.context.get("superseded_at"))
    return (ev.recorded_at is None or ev.recorded_at <= at) and (replaced is None or at < replaced)


def _undated_then(
    ev: Evidence,
    refs: Sequence[ReferenceTime],
    as_of: datetime,
    runbooks: Sequence[Evidence],
    tie: str,
    where: str,
) -> tuple[list[Claim], list[datetime]] | None:
    """The claims of an undated runbook version asked about at a time the question refers to
    ("then": the anchor event; or a time written in it) and at as_of: a fact at the instants
    it was in force, by its record times, and, for the earliest version the run holds of it,
    an inference at an instant before it was recorded (what it said then is not known), with
    those instants. None when neither applies."""
    instants = [(f"{r.describe()} ({r.why})", r.at) for r in refs]
    instants.append((f"as_of, {iso_utc(as_of)}", as_of))
    held = [text for text, at in instants if _undated_holds(ev, at)]
    same = [v for v in runbooks if v.element_id == ev.element_id]
    earliest = all(v.version >= ev.version for v in same)
    unknown = sorted(
        at
        for _, at in instants
        if earliest and recorded_after(ev, at) and not any(_undated_holds(v, at) for v in same)
    )
    claims: list[Claim] = []
    if held:
        replaced = ev.context.get("superseded_at")
        record = f"recorded {_when(ev.recorded_at)}"
        if replaced is not None:
            record += f", replaced by a re-import at {_instant_text(replaced)}"
        why = f" (it states no validity: {record})" if replaced or len(held) < len(instants) else ""
        claims.append(
            _claim(
                f"Runbook {_title(ev)} ({_versioned(ev)}){tie} is the version in force at "
                f"{' and at '.join(held)}{why}{where}",
                EpistemicStatus.FACT,
                0.95,
                [ev],
                Intent.APPLICABLE_RUNBOOK.value,
            )
        )
    if unknown:
        at = unknown[0]
        claims.append(
            _claim(
                f"Runbook {_title(ev)} ({_versioned(ev)}){tie} states no validity and its "
                f"earliest version was recorded at {_when(ev.recorded_at)}, after "
                f"{iso_utc(at)}: this is that version; what it said at {iso_utc(at)} is not "
                f"known{where}",
                EpistemicStatus.INFERENCE,
                0.5,
                [ev],
                Intent.APPLICABLE_RUNBOOK.value,
            )
        )
    return (claims, unknown[:1]) if claims else None


def _instant_text(raw: object) -> str:
    return iso_utc(raw) if isinstance(raw, datetime) else str(raw)


def _in_force(
    ev: Evidence,
    refs: Sequence[ReferenceTime],
    as_of: datetime,
    versions: Sequence[Evidence] = (),
) -> str:
    """`at <as_of>` (no reference in the question) or the labelled instants it holds at,
    where the version of `versions` that supersedes it does not."""
    if not refs:
        return f"at {iso_utc(as_of)}"
    successor = next((v for v in versions if ev.replacement == v.element_id), None)
    return "a" + _holds_text(ev, refs, as_of, successor)[1:]


# A line of a runbook saying whom to reach ("Escalate to #payments-core.", "page
# #payments-platform", "contact the DBA on call").
_ESCALATION_LINE = re.compile(
    r"\bescalat\w*|\bpage\s+(?:#|@|the\b)|\b(?:contact|notify|call)\s+(?:#|@|the\b)",
    re.IGNORECASE,
)


def _escalation_step(ev: Evidence, question: str) -> str:
    """`: its escalation step, "Escalate to #payments-core."` when the question asks whom to
    call or escalate to and the runbook's text has a line saying whom to reach; else nothing.
    Quoted as data, never followed."""
    if not asks_whom_to_reach(question):
        return ""
    lines = [" ".join(line.split()) for line in (ev.content or "").splitlines()]
    step = next((line for line in lines if _ESCALATION_LINE.search(line)), None)
    return f': its escalation step, "{_quote(step)}"' if step else ""
