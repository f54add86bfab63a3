"""Ownership: owners over a period, corrections, retractions, team-side owners, and the
gaps for uncovered periods, unowned instants and unread owners.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from datetime import datetime

from graph_schema.front_matter_contact import front_matter_contact
from investigator.claims.model import Claim, EpistemicStatus
from investigator.claims.wording import UNKNOWN_NOT_ABSENT, _claim, _span_text, _valid_text, _with
from investigator.evidence import Evidence, as_held, iso_utc
from investigator.ownership_history import (
    OwnershipCorrection,
    OwnershipPeriod,
    OwnershipRetraction,
    corrections_at,
    history_cut_at,
    ownership_corrections,
    retraction_text,
    retractions_in,
    retractions_unowned_at,
    team_retractions_at,
    team_side_instants,
    uncovered_in_period,
    unowned_at,
)
from investigator.rubric import Intent, MissingEvidence, missing_evidence
from investigator.timeline import ReferenceTime, holds_at


def _dated_in(ev: Evidence, period: OwnershipPeriod) -> bool:
    """Whether a version with a stated start holds at some instant of the period (an undated
    one is placed by its record times, record_time.py)."""
    return ev.valid_from is not None and period.overlaps(ev)


def _owners_in_period(
    owners: Sequence[Evidence],
    period: OwnershipPeriod,
    as_of: datetime,
    held_at: Callable[[Evidence], str],
) -> list[Claim]:
    """Each owner of the period asked, by its valid interval: `From A to B (the question says
    '...'): team OWNS service` (statements sort by their start, so the claims read in order);
    the owner at as_of after the period as at any time (`held_at`: `At as_of, ...`)."""
    out = []
    for ev in owners:
        held = as_held(ev)  # a team's record of a runbook version: no longer than it
        if not period.overlaps(held):
            statement = f"{held_at(held)}: {ev.content} ({_valid_text(ev)}{_version_end(ev)})"
            claim = _claim(
                statement, EpistemicStatus.FACT, 0.95, [ev], Intent.OWNERSHIP_AT_TIME.value
            )
            out.append(claim)
            continue
        out.append(
            _claim(
                f"{_span_text(held, as_of)} ({period.why}): {ev.content}",
                EpistemicStatus.FACT,
                0.95,
                [ev],
                Intent.OWNERSHIP_AT_TIME.value,
            )
        )
    return out


def _correction_claims(
    owners: Sequence[Evidence], older: Sequence[Evidence], period: OwnershipPeriod
) -> list[Claim]:
    """One claim per span of the period whose owner a later record corrected: who was
    recorded before the correction and who since, bound to the current records of the
    edges concerned (the older records are in the run's `version_history` calls)."""
    out = []
    for c in ownership_corrections([*owners, *older], period):
        start = f"From {iso_utc(c.start)}" if c.start else "Until"
        claim = _correction_claim(f"{start} to {iso_utc(c.end)}", c, owners)
        out += [claim] if claim is not None else []
    return out


def _correction_claim(
    when: str, c: OwnershipCorrection, owners: Sequence[Evidence]
) -> Claim | None:
    """`<when> the owner of X was corrected at T: recorded as A until then, B since (...)`,
    bound to the current records of the edges concerned (None when none is admitted)."""
    evs = [ev for ev in owners if ev.element_id in c.keys]
    if not evs:
        return None
    # Read from a team's side (its own records only), no team before or since says only
    # that the team did not own it then: another team may have.
    team_side = all(ev.context.get("asked_team") for ev in evs)
    return _claim(
        f"{when} {c.sentence(team_side=team_side)}",
        EpistemicStatus.FACT,
        0.95,
        evs,
        Intent.OWNERSHIP_AT_TIME.value,
    )


def _period_retraction_claims(
    evidence: Sequence[Evidence], records: Sequence[Evidence], period: OwnershipPeriod
) -> list[Claim]:
    """One claim per retracted OWNS record whose interval holds some instant of the period:
    it was recorded, and the record was retracted (when, why), citing its tombstone (in the
    pack). A fact about the records, never that the team owned it: in time order with the
    owners (`From A to B (...)`)."""
    in_pack = {ev.evidence_id for ev in evidence}
    out = []
    for r in retractions_in(records, period):
        if r.tombstone.evidence_id not in in_pack:
            continue
        start = f"From {iso_utc(r.start)}" if r.start else "From the first record"
        span = f"{start} to {iso_utc(r.end)}" if r.end else f"{start}, open-ended"
        out.append(
            _claim(
                f"{span} ({period.why}): {retraction_text(r, span=False)}",
                EpistemicStatus.FACT,
                0.95,
                [r.tombstone],
                Intent.OWNERSHIP_AT_TIME.value,
            )
        )
    return out


def _split_kinds(
    owners: Sequence[Evidence], kinds: frozenset[str] | None
) -> tuple[list[Evidence], list[Evidence]]:
    """(records stated one by one, records of a team of another kind than the question asks
    for): "Which services did X own?" lists X's services and counts the rest."""
    if kinds is None:
        return list(owners), []
    other = [
        ev
        for ev in owners
        if ev.context.get("asked_team") and ev.context.get("owned_kind") not in (None, *kinds)
    ]
    return [ev for ev in owners if ev not in other], other


_KIND_NAMES = {"service": "service", "alert": "alert", "runbook": "runbook version"}


def _other_kinds_claims(
    others: Sequence[Evidence], kinds: frozenset[str] | None, when: Callable[[Evidence], str]
) -> list[Claim]:
    """One claim per team and time: `<when>: team:x also owned 1 alert and 2 runbook
    versions, not services, which the question asks for: <ids>`, bound to their records."""
    groups: dict[tuple[str, str], list[Evidence]] = {}
    for ev in others:
        groups.setdefault((str(ev.context.get("asked_team")), when(ev)), []).append(ev)
    asked = " or ".join(_KIND_NAMES[k] + "s" for k in sorted(kinds or ()))
    out = []
    for (team, said), records in sorted(groups.items()):
        counted = []
        for kind in ("service", "alert", "runbook"):
            n = len(
                {
                    str(ev.context.get("owned"))
                    for ev in records
                    if ev.context.get("owned_kind") == kind
                }
            )
            if n:
                counted.append(f"{n} {_KIND_NAMES[kind]}{'' if n == 1 else 's'}")
        owned = ", ".join(sorted({str(ev.context.get("owned")) for ev in records}))
        out.append(
            _claim(
                f"{said}: {team} also owned {' and '.join(counted)}, not {asked}, which the "
                f"question asks for: {owned}",
                EpistemicStatus.FACT,
                0.95,
                sorted(records, key=lambda ev: ev.evidence_id),
                Intent.OWNERSHIP_AT_TIME.value,
            )
        )
    return out


def _version_end(ev: Evidence) -> str:
    """`; runbook:x@v3 in force until T` of a team's record of a runbook version that ended
    before the record did (its owner is stated no later than that)."""
    held = as_held(ev)
    if held is ev or held.valid_to is None:
        return ""
    return f"; {ev.context.get('owned')} in force until {iso_utc(held.valid_to)}"


def _owner_side(evidence: Sequence[Evidence]) -> list[Evidence]:
    """The evidence less what a team owned, read from the team's side (`owned_by_team`): a
    team's records say nothing of who owned the rest of the time (another team may have)."""
    return [ev for ev in evidence if not ev.context.get("asked_team")]


def _team_gaps(
    missing: list[MissingEvidence],
    evidence: Sequence[Evidence],
    team_words: str,
    teams: Sequence[str],
    refs: Sequence[ReferenceTime],
    as_of: datetime,
    period: OwnershipPeriod | None,
    kinds: frozenset[str] | None = None,
) -> list[MissingEvidence]:
    """A question from a team's side: no team linked (none by that name or id that the
    subject may read, said alike whether it exists or not), or a team with no OWNS record
    (of the kinds asked, `kinds`) at the times asked, replaces the rubric's generic line."""
    generic = missing_evidence([Intent.OWNERSHIP_AT_TIME.value], set())[0].description
    named = [r.at for r in refs if r.kind != "as_of"] if period is None else []
    # A record stated: one holding at a time the question names (any, over a period or at as_of),
    # read from the team's side or, the same record, from a service's (--service).
    owned = {
        str(ev.context.get("asked_team") or ev.context.get("team"))
        for ev in _with(evidence, "ownership")
        if not named or any(holds_at(as_held(ev), at) for at in named)
    } & set(teams)
    when = (
        f"in the period asked ({period.why})"
        if period is not None
        else "at "
        + " or ".join(dict.fromkeys(f"{r.describe()} ({r.why})" for r in refs if r.kind != "as_of"))
        if any(r.kind != "as_of" for r in refs)
        else f"at as_of, {iso_utc(as_of)}"
    )
    said = []
    if not teams:
        said.append(
            f"no team named {team_words!r} is recorded in the records this subject may read: "
            "what it owned is not known"
        )
    of_kind = " of " + " or ".join(f"a {_KIND_NAMES[k]}" for k in sorted(kinds)) if kinds else ""
    for team in sorted(set(teams) - owned):
        said.append(
            f"no OWNS record of {team}{of_kind} holds {when} in the records this subject may "
            "read: what it owned then is not known"
        )
    if not said:
        return missing
    return [m for m in missing if m.description != generic] + [
        MissingEvidence(
            evidence_type="ownership",
            intents=[Intent.OWNERSHIP_AT_TIME.value],
            description=text,
            required=True,
        )
        for text in said
    ]


def _uncovered_period_gaps(
    owners: Sequence[Evidence],
    period: OwnershipPeriod,
    ownership_cut: Sequence[tuple[str, int]],
    owners_cut: Sequence[tuple[str, int, datetime | None]],
) -> list[MissingEvidence]:
    """A required `ownership` gap for each stretch of the period asked at which no owner of a
    service, alert or runbook version is recorded in what the subject may read (before its
    first record, between two, after the last); not where a read's row cap cut the history,
    whose own gap says so."""
    known_from: dict[str, datetime] = {}
    for service, read in ownership_cut:
        cut_at = history_cut_at(service, owners, period, read)
        if cut_at is not None:
            known_from[service] = cut_at
    cut_entities = {entity for entity, _, _ in owners_cut}
    gaps = []
    for owned, start, end in uncovered_in_period(owners, period, known_from):
        if owned in cut_entities:
            continue  # its newest records were not read: an apparent gap may be a cut
        since = iso_utc(start) if start is not None else "the first record"
        gaps.append(
            MissingEvidence(
                evidence_type="ownership",
                intents=[Intent.OWNERSHIP_AT_TIME.value],
                description=f"no owner of {owned} is recorded from {since} to {iso_utc(end)} "
                f"({period.why}), in the records this subject may read: who owned it then is "
                "not known",
                required=True,
            )
        )
    return gaps


def _unowned_instant_gaps(
    evidence: Sequence[Evidence],
    refs: Sequence[ReferenceTime],
    as_of: datetime,
    owners_dropped: Sequence[Evidence] = (),
    team_side: Sequence[Evidence] = (),
) -> list[MissingEvidence]:
    """A required `ownership` gap for each instant a single-time owner question names (not
    as_of) at which no owner of a service is recorded in what the subject may read: the owner
    stated at as_of answers another time than the one asked (a retraction, when readable, is
    stated as a claim beside it; the gap reads the same either way). A record read from a
    team's side (`team_side`) that holds at the instant is its owner there too: the same
    record read from the service's side was a duplicate of it."""
    owners = _with(evidence, "ownership")
    teams_held = [
        ev
        for ev in _with(team_side, "ownership")
        if ev.context.get("asked_team") and ev.status == "active"
    ]
    asked = {r.at: f"{r.describe()} ({r.why})" for r in reversed(refs) if r.kind != "as_of"}
    unowned_now = {service for service, _ in unowned_at(owners, [as_of])}
    gaps = []
    for service, at in unowned_at(owners, asked):
        if any(
            ev.context.get("owned") == service and holds_at(as_held(ev), at) for ev in teams_held
        ):
            continue
        now = service not in unowned_now
        cut = _cut_for_budget(owners_dropped, service, [at])
        gaps.append(
            MissingEvidence(
                evidence_type="ownership",
                intents=[Intent.OWNERSHIP_AT_TIME.value],
                description=(
                    f"the owner of {service} at {asked[at]} is not in the answer: {cut}"
                    if cut
                    else f"no owner of {service} is recorded at {asked[at]}, in the records "
                    "this subject may read: who owned it then is not known"
                )
                + (" (the owner stated is the owner at as_of, not then)" if now else ""),
                required=True,
            )
        )
    return gaps


def _unrecorded_owned_gaps(
    evidence: Sequence[Evidence],
    owners_asked: Sequence[str],
    not_valid_then: Sequence[str],
    refs: Sequence[ReferenceTime],
    as_of: datetime,
    owners_dropped: Sequence[Evidence] = (),
) -> list[tuple[str, MissingEvidence]]:
    """A required `ownership` gap for each alert or runbook version whose own owner was
    asked and read but none of whose OWNS records was admitted, with the entity: at as_of and
    every time asked it had no owner recorded (often it was not recorded itself yet: an alert
    added later), so the owner of a service it fires on is no answer (`_unowned_instant_gaps`
    covers one with a record that holds at some other instant asked). A runbook page whose
    front matter names a contact in words (`owner_slack`) says so in its gap, as what it is."""
    owned = {
        str(ev.context.get("owned"))
        for ev in _with(evidence, "ownership")
        if ev.status == "active" and ev.context.get("owned") is not None
    }
    asked = {r.at: f"{r.describe()} ({r.why})" for r in reversed(refs) if r.at <= as_of}
    asked.setdefault(as_of, f"as_of, {iso_utc(as_of)}")
    when = " and at ".join(label for _, label in sorted(asked.items()))
    gaps = []
    for entity in sorted(set(owners_asked) - owned):
        cut = _cut_for_budget(owners_dropped, entity, list(asked))
        if cut:
            gaps.append(
                (
                    entity,
                    MissingEvidence(
                        evidence_type="ownership",
                        intents=[Intent.OWNERSHIP_AT_TIME.value],
                        description=f"the owner of {entity} at {when} is not in the answer: {cut} "
                        "(the owner of another entity is not its owner)",
                        required=True,
                    ),
                )
            )
            continue
        other = _owned_version_of(entity, owned) if entity in not_valid_then else None
        if other is not None:
            # "Who owns the payment recovery runbook?" on 07-26: the words found v3, whose
            # owner held until 07-25; v4 is in force and its owner is stated (before, this
            # gap was required: `partial` with the answer in it).
            gaps.append(
                (
                    entity,
                    MissingEvidence(
                        evidence_type="ownership",
                        intents=[Intent.OWNERSHIP_AT_TIME.value],
                        description=f"{entity} is not the version in force at {when} (its "
                        f"record is valid only at other times): the owner of {other}, the "
                        "version in force, is stated instead",
                        required=False,
                    ),
                )
            )
            continue
        why = (
            f"{entity} itself is not recorded then (its record is valid only at other "
            "times), so no owner of it is"
            if entity in not_valid_then
            else "no OWNS record of it this subject may read holds then"
        )
        gaps.append(
            (
                entity,
                MissingEvidence(
                    evidence_type="ownership",
                    intents=[Intent.OWNERSHIP_AT_TIME.value],
                    description=f"no owner of {entity} is recorded at {when}: {why}; who owned "
                    "it then is not known (the owner of another entity is not its owner)"
                    + _page_contact_words(evidence, entity),
                    required=True,
                ),
            )
        )
    return gaps


def _owned_version_of(entity: str, owned: Collection[str]) -> str | None:
    """Another version of the runbook `entity` (`runbook:x@v3` -> `runbook:x@v4`) whose own
    owner is stated, the first by id; None for an entity of no version or none owned."""
    if "@" not in entity:
        return None
    base = entity.split("@", 1)[0]
    versions = sorted(o for o in owned if o != entity and o.split("@", 1)[0] == base and "@" in o)
    return versions[0] if versions else None


def _page_contact_words(evidence: Sequence[Evidence], entity: str) -> str:
    """`; its page names a contact: #team (from front matter owner_slack, not a team
    record)` for a runbook in the pack whose front matter names one (what its card shows as
    Contact), else "": words on the page, never an owner of record."""
    contacts = sorted(
        {
            contact
            for ev in _with(evidence, "runbook")
            if ev.element_id == entity and (contact := front_matter_contact(ev.props))
        }
    )
    return f"; its page names a contact: {'; '.join(contacts)}" if contacts else ""


def _cut_for_budget(
    owners_dropped: Sequence[Evidence], owned: str, instants: Sequence[datetime]
) -> str:
    """Why no owner of `owned` is in the answer when the pack dropped an OWNS record of it
    holding at one of `instants` for the budget (worded as a runbook dropped so), else ""."""
    ids = sorted(
        {
            ev.element_id
            for ev in owners_dropped
            if ev.context.get("service", ev.context.get("owned")) == owned
            and any(holds_at(ev, at) for at in instants)
        }
    )
    if not ids:
        return ""
    return (
        f"its OWNS record {', '.join(ids)} was read, then dropped for the evidence budget "
        "(budget_exceeded); a larger --budget-tokens reads it"
    )


def _unread_owner_gaps(
    evidence: Sequence[Evidence], owners_unread: Sequence[str]
) -> list[MissingEvidence]:
    """A required `ownership` gap for each entity whose own owners' read failed and none of
    whose OWNS records was admitted otherwise: its owner is unknown, not absent."""
    owned = {str(ev.context.get("owned")) for ev in _with(evidence, "ownership")}
    return [
        MissingEvidence(
            evidence_type="ownership",
            intents=[Intent.OWNERSHIP_AT_TIME.value],
            description=f"{UNKNOWN_NOT_ABSENT}who owned {entity}: the read of its owners "
            "(owners_of) failed (see its tool calls: a query timed out or Neo4j refused it); "
            "ask again (the owner of another entity is not its owner)",
            required=True,
        )
        for entity in sorted(set(owners_unread) - owned)
    ]


def _instant_retraction_claims(
    evidence: Sequence[Evidence],
    records: Sequence[Evidence],
    refs: Sequence[ReferenceTime],
    as_of: datetime,
) -> list[Claim]:
    """For each instant a single-time owner question names (and as_of) at which no owner of
    a service is recorded, the retracted OWNS records that held then: no owner is recorded,
    and why (the retraction), citing the tombstone (in the pack)."""
    in_pack = {ev.evidence_id for ev in evidence}
    owners = [ev for ev in _with(evidence, "ownership") if ev.status == "active"]
    instants = {r.at: f"{r.describe()} ({r.why})" for r in reversed(refs)}
    instants.setdefault(as_of, f"as_of, {iso_utc(as_of)}")
    named: dict[str, tuple[OwnershipRetraction, list[str]]] = {}
    for at, label in sorted(instants.items()):
        for r in retractions_unowned_at(records, owners, at):
            if r.tombstone.evidence_id in in_pack:
                named.setdefault(r.tombstone.evidence_id, (r, []))[1].append(label)
    return [
        _claim(
            f"At {' and at '.join(labels)}: no owner of {r.owned} is recorded: "
            f"{retraction_text(r)}",
            EpistemicStatus.FACT,
            0.95,
            [r.tombstone],
            Intent.OWNERSHIP_AT_TIME.value,
        )
        for r, labels in named.values()
    ]


def _team_retraction_claims(
    evidence: Sequence[Evidence],
    records: Sequence[Evidence],
    refs: Sequence[ReferenceTime],
    as_of: datetime,
) -> list[Claim]:
    """For a question from a team's side, each retracted OWNS record of the team that held
    at an instant its answer states (those named, else as_of): `At <when>: team:a was
    recorded as the owner of svc:b ...; that record was retracted at R: <reason>`, citing
    the tombstone (in the pack). Who else owned it then was not read: nothing is said of it."""
    in_pack = {ev.evidence_id for ev in evidence}
    named = [r for r in refs if r.kind != "as_of"]
    labels = {r.at: f"{r.describe()} ({r.why})" for r in reversed(named)}
    labels.setdefault(as_of, f"as_of, {iso_utc(as_of)}")
    told: dict[str, tuple[OwnershipRetraction, list[str]]] = {}
    for at in team_side_instants(as_of, (r.at for r in named)):
        for r in team_retractions_at(records, at):
            if r.tombstone.evidence_id in in_pack:
                told.setdefault(r.tombstone.evidence_id, (r, []))[1].append(labels[at])
    return [
        _claim(
            f"At {' and at '.join(said)}: {retraction_text(r)}",
            EpistemicStatus.FACT,
            0.95,
            [r.tombstone],
            Intent.OWNERSHIP_AT_TIME.value,
        )
        for r, said in told.values()
    ]


def _instant_correction_claims(
    owners: Sequence[Evidence],
    records: Sequence[Evidence],
    refs: Sequence[ReferenceTime],
    as_of: datetime,
) -> list[Claim]:
    """For each instant a single-time owner question names (and as_of), each correction of
    who was recorded as the owner then: what an earlier --known-at answered, and since when
    the records say otherwise; bound to the current records of the edges concerned. The
    admitted records (`owners`) and, when read, every record of the service's OWNS edges (the
    run's `ownership_records` call)."""
    records = [*owners, *records]
    instants = {r.at: f"{r.describe()} ({r.why})" for r in reversed(refs)}
    instants.setdefault(as_of, f"as_of, {iso_utc(as_of)}")
    # One claim per correction, naming every instant asked that it corrected.
    labels: dict[tuple[str, datetime, datetime], tuple[OwnershipCorrection, list[str]]] = {}
    for at, label in sorted(instants.items()):
        for c in corrections_at(records, at):
            labels.setdefault((c.owned, c.corrected_at, c.end), (c, []))[1].append(label)
    claims = [
        _correction_claim(f"At {' and at '.join(named)}:", c, owners)
        for c, named in labels.values()
    ]
    return [claim for claim in claims if claim is not None]


def _ended_record_gaps(
    missing: list[MissingEvidence],
    ended: Sequence[Evidence],
    evidence: Sequence[Evidence],
    as_of: datetime,
    known_at: datetime | None,
) -> list[MissingEvidence]:
    """The generic "no OWNS relationship valid at as_of" gap of a single-time owner question,
    said with why when the gate set aside records only as ended before as_of
    (`EvidenceGate.ended_before`): the service itself ended (decommissioned), so it has no
    owner then; or the last owner of a service recorded by known_at ended, and no later
    owner of it is recorded by known_at (a record made later is not read then)."""
    generic = missing_evidence([Intent.OWNERSHIP_AT_TIME.value], set())[0].description
    owned = {str(ev.context.get("service")) for ev in _with(evidence, "ownership")}
    parts = []
    for ev in sorted(ended, key=lambda e: e.element_id):
        if ev.type != "Service" or ev.valid_to is None:
            continue
        how = " (decommissioned)" if ev.props.get("decommissioned") is True else ""
        parts.append(
            f"{ev.element_id} itself ended at {iso_utc(ev.valid_to)}{how}, before as_of "
            f"{iso_utc(as_of)} (its record: {_valid_text(ev)}), so no owner of it holds at "
            "as_of; ask with an --as-of before its end for its owner then"
        )
    last: dict[str, Evidence] = {}
    for ev in ended:
        service = ev.context.get("service")
        if ev.type != "OWNS" or not isinstance(service, str) or service in owned:
            continue
        if ev.valid_to is not None and (
            service not in last or ev.valid_to > (last[service].valid_to or ev.valid_to)
        ):
            last[service] = ev
    by = f" by known_at {iso_utc(known_at)}" if known_at is not None else ""
    for service, ev in sorted(last.items()):
        parts.append(
            f"the last owner of {service} recorded{by}, {ev.content} ({_valid_text(ev)}), "
            f"ended before as_of {iso_utc(as_of)}; no later owner of {service} is recorded"
            f"{by} (a record made later is not read then)"
        )
    if not parts:
        return missing
    said = f"{generic}: {'; '.join(parts)}"
    return [
        m.model_copy(update={"description": said}) if m.description == generic else m
        for m in missing
    ]
