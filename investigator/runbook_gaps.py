"""Why no runbook was claimed, said in the Missing lines of an investigation.

The claims give a required runbook gap the plain words "no runbook applies"
(`rubric.MISSING_DESCRIPTIONS`). That is often untrue: a runbook was found and withheld, the
question's words fit two alike, the runbook search chose none, the place's runbooks are about
something else, the budget dropped the version in force, or a tie was too wide to read. Each
pass below rewrites the gap (or adds one) for what the run knows; `say_runbook_gaps` applies
them in one order, so the most specific reason, the last that applies, is what is said.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime

from investigator.context_graph.models import ToolCallRecord
from investigator.evidence import Evidence, Rejection, RejectionReason, iso_utc
from investigator.gate import EvidenceGate, withheld_as
from investigator.pack import Omission
from investigator.rubric import MISSING_DESCRIPTIONS, Intent, MissingEvidence
from investigator.runbook_search import wide_tie_said

# Whose runbooks a place's gap weighs and names: only those the subject may read.
SUBJECTS_VIEW = "only runbooks the subject may read are weighed"

# How a runbook set aside as another same-named rule's begins its rejection detail (the
# Missing line says that, not "found by text only").
OTHER_RULE = "another rule's runbook: "


def _required_runbook_gap_said(
    missing: list[MissingEvidence], description: str
) -> list[MissingEvidence]:
    """`missing` with its required runbook gap said as `description` (the others as they
    are): each runbook gap function below says why no runbook was claimed in its own words."""
    return [
        m.model_copy(update={"description": description})
        if m.evidence_type == "runbook" and m.required
        else m
        for m in missing
    ]


def _plain_runbook_gap_said(
    missing: list[MissingEvidence], description: str
) -> list[MissingEvidence]:
    """`missing` with its plain "no runbook applies" gap said as `description`: a gap that
    says more (what applied at a time before any version was recorded) is already what the
    run knows, and stays."""
    return [
        m.model_copy(update={"description": description})
        if m.evidence_type == "runbook"
        and m.required
        and m.description == MISSING_DESCRIPTIONS["runbook"]
        else m
        for m in missing
    ]


def tied_runbook_gaps(missing: list[MissingEvidence], tied: Sequence[str]) -> list[MissingEvidence]:
    """`missing` with a missing runbook said as a tie when the runbook search found the
    question's words fit two or more runbooks alike (`RetrievalOutcome.runbook_tie`): which
    ones, and how to choose, not "no runbook applies"."""
    if len(tied) < 2:
        return missing
    shown = ", ".join(tied[:_UNUSED_NAMED]) + (
        f" and {len(tied) - _UNUSED_NAMED} more" if len(tied) > _UNUSED_NAMED else ""
    )
    description = (
        f"the question's words fit {len(tied)} runbooks alike ({shown}): a tie, none is cited "
        "as the answer; add a word that tells them apart, or name the alert"
    )
    return _required_runbook_gap_said(missing, description)


def wide_tie_gaps(
    missing: list[MissingEvidence], wide_ties: Mapping[str, int]
) -> list[MissingEvidence]:
    """`missing` and, for each search whose rows stopped above a tie too wide to order
    (`RetrievalOutcome.wide_ties`), a gap saying so: which words, how many records the
    subject can see match them equally at least, and how to narrow it."""
    return [
        *missing,
        *(
            MissingEvidence(
                evidence_type="document",
                intents=[],
                description=wide_tie_said(count, words, "records"),
                required=False,
            )
            for words, count in sorted(wide_ties.items())
        ),
    ]


def searched_runbook_gaps(
    missing: list[MissingEvidence], note: str | None, *, cut_short: bool = False
) -> list[MissingEvidence]:
    """`missing` with a missing runbook said as the runbook search's answer when a symptom
    said with where it shows ("5xx on payment-api") was asked of it and it chose none
    (`RetrievalOutcome.runbook_search_note`): which search, and why none fits. Not in a run
    cut short: the reads it skipped (`runbooks_for` the service) may hold the runbook, so
    its gap stays "unknown, not absent" and says the search was cut."""
    if note is None or cut_short:
        return missing
    return _required_runbook_gap_said(missing, note)


def _runbooks_named(runbooks: Mapping[str, str | None]) -> str:
    """A place's runbooks as its gap names them: each with the alert it belongs to, if any
    ("runbook:pod-crashloop@v1 (alert KubePodCrashLooping)", "runbook:payment-recovery@v4")."""
    return ", ".join(
        rb if alert is None else f"{rb} (alert {alert})" for rb, alert in sorted(runbooks.items())
    )


def unfit_place_runbook_gaps(
    missing: list[MissingEvidence],
    symptom: str | None,
    unfit: Mapping[str, Mapping[str, str | None]],
    note: str | None,
    *,
    cut_short: bool = False,
    withheld_found: bool = False,
    answered: Collection[str] = (),
    by_text: bool = False,
) -> list[MissingEvidence]:
    """`missing` with a missing runbook said as the place's gap when a symptom said at a
    service ("5xx errors on checkout") found only runbooks of that service's alerts that its
    words do not fit (`EvidenceGate.unfit_place_runbooks`): no runbook of the place is about
    it, and which the place has (the subject's view: the gate saw no other). The search's
    own answer (`note`) follows. When a runbook was claimed through another record, the
    same is said beside it, not required. Not in a run cut short: its gap says the search
    did not finish (the place may have runbooks it did not read). Nor when a runbook was
    found and withheld (`withheld_found`): that is the gap (`withheld_place_runbook_gaps`),
    not "no runbook of the place is about it". Nor of a place one of whose runbooks about it
    was claimed or withheld (`answered`, `place_runbooks_said`): one of its runbooks is.
    `by_text`: the runbook claimed is the runbook search's best fit for the question's words
    ("ssh brute force on svc:payment-api": the SSHBruteForce page), not one another record
    links."""
    unfit = {place: rbs for place, rbs in unfit.items() if place not in answered}
    if symptom is None or not unfit or cut_short:
        return missing
    required = any(m.evidence_type == "runbook" and m.required for m in missing)
    if withheld_found and required:
        return missing
    # The subject's view: a runbook of the place another subject may read (or one this
    # subject may not) is neither weighed nor named, so the sentence says whose view it is.
    places = "; ".join(
        f"no runbook of {place} is about {symptom!r}; runbooks attached to {place}: "
        + _runbooks_named(runbooks)
        + f"; {SUBJECTS_VIEW}"
        for place, runbooks in sorted(unfit.items())
    )
    if not required:
        # A runbook was claimed through another record (the incident's error code): it
        # stands, and the place's own runbooks are said not to be about the symptom.
        claimed = (
            "the runbook claimed is the runbook search's best fit for the question's words"
            if by_text
            else "the runbook claimed is linked to another record the run read"
        )
        said = MissingEvidence(
            evidence_type="runbook",
            intents=[Intent.APPLICABLE_RUNBOOK.value],
            description=f"{places}; {claimed}",
            required=False,
        )
        return [*missing, said]
    description = places if note is None else f"{places}; {note}"
    return _required_runbook_gap_said(missing, description)


def withheld_place_runbook_gaps(
    missing: list[MissingEvidence],
    symptom: str | None,
    withheld: Mapping[str, Mapping[str, str | None]],
    rejected: Sequence[Rejection],
    unfit: Mapping[str, Mapping[str, str | None]],
    *,
    text_only: Collection[str] = (),
    cut_short: bool = False,
) -> list[MissingEvidence]:
    """`missing` with a missing runbook of a symptom said at a service ("5xx errors on
    storefront") said as the runbook found and withheld as untrusted instruction-like text,
    when the run found one it did not find by text only (`text_only_withheld`): one of the
    place that would count there (its alert fits the words, or it names none;
    `EvidenceGate.withheld_place_runbooks`) is said as the place's runbook, else the one the
    runbook search chose. The way out is the importer's (`--trusted`), as for a chosen page;
    never "no runbook of the place is about it" (`unfit_place_runbook_gaps` leaves such a
    gap to this pass), nor "found by text only". The place's runbooks that are not about it
    follow. The gate saw only what the subject may read: another subject is told nothing of
    a page it may not read."""
    if symptom is None or cut_short:
        return missing
    required = any(m.evidence_type == "runbook" and m.required for m in missing)
    found = _withheld_found(rejected, text_only)
    if not found:
        return missing
    tied = {rb: (place, alert) for place, rbs in withheld.items() for rb, alert in rbs.items()}
    if not required and not any(rb in tied for rb in found):
        return missing
    named = sorted(rb for rb in found if rb in tied) or sorted(found)
    details = [
        r.detail
        for r in rejected
        if r.reason is RejectionReason.REJECTED_UNTRUSTED_INSTRUCTION and r.element_id in named
    ]
    one = len(named) == 1
    places = sorted({tied[rb][0] for rb in named if rb in tied})
    if places:
        shown = ", ".join(
            rb if tied[rb][1] is None else f"{rb} (alert {tied[rb][1]})" for rb in named
        )
        found_said = (
            f"the runbook{'' if one else 's'} of {', '.join(places)} for {symptom!r}, {shown}, "
            f"{'was' if one else 'were'} found"
        )
    else:
        found_said = (
            f"a runbook was found ({named[0]})"
            if one
            else f"runbooks were found ({', '.join(named)})"
        )
    description = (
        f"{found_said} but withheld as untrusted text with {withheld_as(details)} (see "
        f"Rejected); whoever owns the import re-ingests {'it' if one else 'them'} with "
        "--trusted if that source is trusted (docs/security.md)"
    )
    for place, runbooks in sorted(unfit.items()):
        description += (
            f"; the runbooks attached to {place} that are not about it: "
            + _runbooks_named(runbooks)
            + f"; {SUBJECTS_VIEW}"
        )
    if not required:
        # Another record answered (the incident, or another runbook of the place): the
        # place's own page withheld is said beside it, not required.
        said = MissingEvidence(
            evidence_type="runbook",
            intents=[Intent.APPLICABLE_RUNBOOK.value],
            description=description,
            required=False,
        )
        return [*missing, said]
    return _required_runbook_gap_said(missing, description)


def place_runbooks_said(
    pack_evidence: Sequence[Evidence],
    runbook_services: Iterable[tuple[str, str]],
    withheld: Mapping[str, Mapping[str, str | None]],
    rejected: Sequence[Rejection],
    text_only: Collection[str] = (),
) -> set[str]:
    """The places of a placed symptom one of whose runbooks about it the run claimed (read
    through the place, or chosen by the runbook search and attached to it:
    `Known.runbook_services`) or found and withheld (`EvidenceGate.withheld_place_runbooks`):
    their gap never says that no runbook of theirs is about it."""
    claimed = {
        ev.element_id.split("@", 1)[0]: ev for ev in pack_evidence if "runbook" in ev.evidence_types
    }
    places = {
        str(ev.context["anchor"])
        for ev in claimed.values()
        if ev.context.get("anchor_type") == "service" and isinstance(ev.context.get("anchor"), str)
    }
    places |= {svc for rb, svc in runbook_services if rb.split("@", 1)[0] in claimed}
    found = _withheld_found(rejected, text_only)
    places |= {place for place, rbs in withheld.items() if any(rb in found for rb in rbs)}
    return places


def claimed_by_text(pack_evidence: Sequence[Evidence], by_text: Collection[str]) -> bool:
    """Whether the pack holds runbooks and every one of them is a runbook the loop chose by
    the question's words alone (`Known.runbooks_by_text`), read as the one the question
    names: no other record the run read links it."""
    anchors = [ev.context.get("anchor") for ev in pack_evidence if "runbook" in ev.evidence_types]
    return bool(anchors) and all(anchor in by_text for anchor in anchors)


def _withheld_found(rejected: Sequence[Rejection], text_only: Collection[str]) -> set[str]:
    """The runbooks withheld as untrusted instruction-like text that the run did not find by
    text only: found, and withheld."""
    return {
        r.element_id
        for r in rejected
        if r.reason is RejectionReason.REJECTED_UNTRUSTED_INSTRUCTION
        and r.element_id.startswith("runbook:")
        and r.element_id not in text_only
    }


def text_only_withheld(
    rejected: Sequence[Rejection],
    tool_calls: Iterable[ToolCallRecord],
    chosen: Collection[str],
    placed: Mapping[str, Mapping[str, str | None]] | None = None,
) -> set[str]:
    """The runbooks withheld as untrusted instruction-like text that the run found by text
    only: every one of their rejections came from a fulltext hit, and neither the question
    named them nor did the runbook search choose them for its words (`chosen`: the runbooks
    the run knows as asked for, `Known.runbooks`), nor is it a runbook of the place a
    symptom was said at that would count there (`placed`,
    `EvidenceGate.withheld_place_runbooks`: a record ties it to the place). Had their text
    been clean they were set aside as `low_relevance`: a page sharing one word ("ssh") is
    no "runbook found"."""
    text_calls = {tc.tool_call_id for tc in tool_calls if tc.template_id == "fulltext_search"}
    asked = {rb.split("@", 1)[0] for rb in chosen}
    asked |= {rb.split("@", 1)[0] for runbooks in (placed or {}).values() for rb in runbooks}
    withheld: dict[str, bool] = {}
    for r in rejected:
        if r.reason is not RejectionReason.REJECTED_UNTRUSTED_INSTRUCTION:
            continue
        if not r.element_id.startswith("runbook:"):
            continue
        by_text = r.tool_call_id in text_calls and r.element_id.split("@", 1)[0] not in asked
        withheld[r.element_id] = withheld.get(r.element_id, True) and by_text
    return {rb for rb, by_text in withheld.items() if by_text}


def withheld_runbook_gaps(
    missing: list[MissingEvidence],
    rejected: Sequence[Rejection],
    *,
    cut_short: bool = False,
    text_only: Collection[str] = (),
) -> list[MissingEvidence]:
    """`missing` with a missing runbook said as what it is when runbooks were found but
    withheld as untrusted instruction-like text: "no runbook valid at as_of" is untrue then,
    and the way out is the importer's (`--trusted`), not another question. A withheld page
    the run found by text only (`text_only`, `text_only_withheld`) is no runbook found: it
    is listed among those retrieved and not used, as withheld, never with advice to trust
    it. Else, in a run that was not cut short, the runbooks retrieved and not used, and why."""
    withheld_rejections = [
        r
        for r in rejected
        if r.reason is RejectionReason.REJECTED_UNTRUSTED_INSTRUCTION
        and r.element_id.startswith("runbook:")
        and r.element_id not in text_only
    ]
    withheld = sorted({r.element_id for r in withheld_rejections})
    if not withheld:
        # Cut short, the gap already says the search did not finish: not that it chose none.
        return missing if cut_short else _unused_runbook_gaps(missing, rejected, text_only)
    names = ", ".join(withheld)
    one = len(withheld) == 1
    found = f"a runbook was found ({names})" if one else f"runbooks were found ({names})"
    description = (
        f"{found} but withheld as untrusted text with "
        f"{withheld_as(r.detail for r in withheld_rejections)} (see "
        f"Rejected); whoever owns the import re-ingests {'it' if one else 'them'} with "
        "--trusted if that source is trusted (docs/security.md)"
    )
    return _plain_runbook_gap_said(missing, description)


# Why a runbook the run retrieved was not used, in the words of a Missing line.
_NOT_USED = {
    RejectionReason.LOW_RELEVANCE: "found by text only: no record ties it to what the question "
    "names, and the runbook search did not answer the question's words with it (no fit, or no "
    "one section of it)",
    RejectionReason.REJECTED_TEMPORAL: "not valid at as_of",
    RejectionReason.REJECTED_SUPERSEDED: "superseded by a later version",
    RejectionReason.REJECTED_NOT_YET_KNOWN: "recorded after known_at",
}
# A page withheld that the run found by text only (`text_only_withheld`): not the answer.
_WITHHELD_BY_TEXT = (
    "withheld as untrusted text with an instruction-like fragment, and found by text only: "
    "not a runbook for the question's words"
)
_UNUSED_NAMED = 3


def _unused_runbook_gaps(
    missing: list[MissingEvidence],
    rejected: Sequence[Rejection],
    text_only: Collection[str] = (),
) -> list[MissingEvidence]:
    """`missing` with a missing runbook said with the runbooks retrieved and not used, and
    why: "no runbook applies" is untrue when the right one was found and rejected."""
    why: dict[str, str] = {}
    for r in sorted(rejected, key=lambda r: (r.element_id, r.round, r.reason.value)):
        # Only a reason it was not used: a `duplicate` is the same runbook used in another form.
        if r.element_id.startswith("runbook:") and r.detail.startswith(OTHER_RULE):
            why[r.element_id] = r.detail
        elif r.element_id.startswith("runbook:") and r.reason in _NOT_USED:
            why.setdefault(r.element_id, _NOT_USED[r.reason])
        elif r.element_id in text_only:
            why[r.element_id] = _WITHHELD_BY_TEXT
    if not why:
        return missing
    shown = [f"{rb} ({reason})" for rb, reason in sorted(why.items())[:_UNUSED_NAMED]]
    more = len(why) - len(shown)
    description = (
        "no runbook was used: retrieved and not used, "
        + "; ".join(shown)
        + (f"; and {more} more (see Rejected)" if more else "")
    )
    return _plain_runbook_gap_said(missing, description)


def budget_dropped_runbooks(
    gate: EvidenceGate, omissions: Sequence[Omission]
) -> dict[str, list[datetime]]:
    """The runbook versions dropped for the budget, by the gate or by the pack, with the
    instants asked about (as_of, the question's earlier times) each was valid at."""
    dropped = dict(gate.budget_dropped_runbooks)
    policy = gate.policy
    instants = [policy.as_of, *(t for t in policy.reference_times if t <= policy.as_of)]
    admitted = {ev.evidence_id: ev for ev in gate.admitted}
    for omission in omissions:
        ev = admitted.get(omission.candidate_id)
        if omission.reason is not RejectionReason.BUDGET_EXCEEDED or ev is None:
            continue
        held = [t for t in instants if _held_at(ev, t)]
        if "runbook" in ev.evidence_types and held:
            dropped[ev.element_id] = sorted(set(held))
    return dropped


def _held_at(ev: Evidence, at: datetime) -> bool:
    """Whether a record's valid interval holds the instant (an open end holds)."""
    return (ev.valid_from is None or ev.valid_from <= at) and (
        ev.valid_to is None or at < ev.valid_to
    )


def budget_dropped_runbook_gaps(
    missing: list[MissingEvidence],
    dropped: Mapping[str, Sequence[datetime]],
    pack_evidence: Sequence[Evidence],
    *,
    as_of: datetime,
) -> list[MissingEvidence]:
    """`missing` with a required runbook gap for each runbook version valid at an instant the
    run asks about (as_of, a time the question names) that was dropped for the evidence
    budget while the pack holds no version of that page valid then: the version in force
    then is missing, not "none"."""
    gaps: list[MissingEvidence] = []
    for element_id, instants in sorted(dropped.items()):
        page = element_id.split("@", 1)[0]
        unread = [
            at
            for at in instants
            if not any(
                ev.element_id.split("@", 1)[0] == page and _held_at(ev, at) for ev in pack_evidence
            )
        ]
        if not unread:
            continue
        when = ", ".join("as_of" if at == as_of else iso_utc(at) for at in unread)
        gaps.append(
            MissingEvidence(
                evidence_type="runbook",
                intents=[Intent.APPLICABLE_RUNBOOK.value],
                description=(
                    f"the version of {page} in force at {when}, {element_id}, was dropped for "
                    "the evidence budget (budget_exceeded); a larger --budget-tokens reads it"
                ),
            )
        )
    return [*missing, *gaps]


def say_runbook_gaps(
    missing: list[MissingEvidence],
    *,
    rejected: Sequence[Rejection],
    text_only: Collection[str],
    tied: Sequence[str],
    search_note: str | None,
    placed_symptom: str | None,
    unfit_place: Mapping[str, Mapping[str, str | None]],
    wide_ties: Mapping[str, int],
    cut_short: bool,
    withheld_place: Mapping[str, Mapping[str, str | None]] | None = None,
    answered_places: Collection[str] = (),
    claimed_by_text: bool = False,
) -> list[MissingEvidence]:
    """`missing` with the runbook gap said for what the run knows: the passes above in order
    (withheld, tie, the search's answer, the place's runbooks, the place's runbook withheld,
    wide ties); a later pass that
    applies says the required gap over an earlier one. `cut_short`: the run did not finish,
    so its gap says the search was cut, not what it would have found. `claimed_by_text`:
    every runbook claimed is the runbook search's best fit for the question's words."""
    passes: list[Callable[[list[MissingEvidence]], list[MissingEvidence]]] = [
        lambda m: withheld_runbook_gaps(m, rejected, cut_short=cut_short, text_only=text_only),
        lambda m: tied_runbook_gaps(m, tied),
        lambda m: searched_runbook_gaps(m, search_note, cut_short=cut_short),
        lambda m: unfit_place_runbook_gaps(
            m,
            placed_symptom,
            unfit_place,
            search_note,
            cut_short=cut_short,
            withheld_found=bool(_withheld_found(rejected, text_only)),
            answered=answered_places,
            by_text=claimed_by_text,
        ),
        lambda m: withheld_place_runbook_gaps(
            m,
            placed_symptom,
            withheld_place or {},
            rejected,
            unfit_place,
            text_only=text_only,
            cut_short=cut_short,
        ),
        lambda m: wide_tie_gaps(m, wide_ties),
    ]
    for say in passes:
        missing = say(missing)
    return missing
