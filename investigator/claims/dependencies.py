"""Dependency walks: depth notes and the gaps of walks cut at their cap."""

from __future__ import annotations

from collections.abc import Sequence

from investigator.claims.model import Claim, EpistemicStatus
from investigator.claims.wording import _claim, _valid_text, _with
from investigator.context_graph.models import ToolCallRecord
from investigator.evidence import Evidence, iso_utc
from investigator.planner import DEPENDS_ON_HOPS
from investigator.rubric import Intent, MissingEvidence


def dependency_depth_notes(
    evidence: Sequence[Evidence],
    intents: Sequence[str],
    calls: Sequence[ToolCallRecord] = (),
) -> list[str]:
    """How far DEPENDS_ON was walked from the service asked about, either way: up to
    `DEPENDS_ON_HOPS` hops (the template's bound). A walk that reached its last hop says
    what lies beyond was not read, so the list may not be the whole chain ("What depends on
    payment-db?" names api-gateway 3 hops in, not what depends on api-gateway); a walk whose
    chains all ended before says within how many hops; a walk its row cap cut (`calls`)
    says so (its gap, `_capped_walk_gaps`, says what is left out). A note (the answer
    holds for the hops read), not a gap."""
    notes = []
    walks = (
        (Intent.DEPENDENTS, "dependent", "into", "what depends on {}"),
        (Intent.DEPENDENCIES, "dependency", "out of", "what {} depend(s) on in turn"),
    )
    hops = DEPENDS_ON_HOPS
    for intent, etype, way, beyond in walks:
        if intent.value not in intents:
            continue
        paths = [
            [str(p) for p in path]
            for ev in _with(evidence, etype)
            if isinstance(path := ev.context.get("path"), list) and len(path) >= 2
        ]
        if not paths:
            continue
        starts = ", ".join(sorted({p[0] for p in paths}))
        read = f"DEPENDS_ON was read up to {hops} hops {way} {starts}"
        capped = [
            (limit, by_service)
            for kind, _, limit, by_service in capped_walks(calls)
            if kind == etype
        ]
        edge = sorted({p[-1] for p in paths if len(p) == hops + 1})
        longest = max(len(p) for p in paths) - 1
        if capped:
            # Its gap says what the cap left out (`_capped_walk_gaps`).
            limit, by_service = max(capped)
            unit = "services" if by_service else "paths"
            notes.append(f"{read}; the read stopped at its cap of {limit} {unit}")
        elif edge:
            notes.append(
                f"{read}; {_verb(beyond, edge)} was not read, so services further along "
                "the chain are not listed"
            )
        else:
            unit = "hop" if longest == 1 else "hops"
            notes.append(f"{read}; every chain read ended within {longest} {unit}")
    return notes


# The first dependency_neighbourhood version whose row cap counts services reached and keeps
# the latest firings (cypher_templates/manifest.yaml, `ordered_cut`).
ORDERED_CUT_VERSION = 4


def capped_walks(calls: Sequence[ToolCallRecord]) -> list[tuple[str, str, int, bool]]:
    """(evidence type, start, row cap, by service) of each DEPENDS_ON walk of a dependency
    question (`dependent` into the service, `dependency` out of it), and of each FIRED_ON
    read of an alert question (`alert_firing`), that its row cap cut. `by service`: the
    template version counts what a user counts (`dependency_neighbourhood` 4 on, manifest
    `ordered_cut`: one row per service reached, the latest firings first); before, paths
    and firings in no useful order."""
    return sorted(
        {
            (
                str(c.evidence_type),
                str(c.params.get("start_id")),
                c.limit or 0,
                c.template_version >= ORDERED_CUT_VERSION,
            )
            for c in calls
            if c.template_id == "dependency_neighbourhood"
            and (
                (
                    c.evidence_type in ("dependent", "dependency")
                    and c.options.get("rel_type") == "DEPENDS_ON"
                )
                or (c.evidence_type == "alert_firing" and c.options.get("rel_type") == "FIRED_ON")
            )
            and c.truncated
        }
    )


def _capped_walk_gaps(
    intents: set[Intent], cuts: Sequence[tuple[str, str, int, bool]]
) -> list[MissingEvidence]:
    """A required gap for each walk of `cuts` (`capped_walks`) the question asked
    for, in the user's terms: the walk read its cap of services (nearest first) and more
    exist, or the FIRED_ON read kept its cap of the latest firings (`_capped_walk_gap_text`)."""
    asked = {
        "dependent": Intent.DEPENDENTS,
        "dependency": Intent.DEPENDENCIES,
        "alert_firing": Intent.ALERT_FIRING,
    }
    # A timeline lists every firing of its window too (claims.timeline).
    timeline = {"alert_firing"} if Intent.TIMELINE in intents else set()
    return [
        MissingEvidence(
            evidence_type=etype,
            intents=[
                (asked[etype] if asked[etype] in intents else Intent.TIMELINE).value,
            ],
            description=_capped_walk_gap_text(etype, start, limit, by_service),
            required=True,
        )
        for etype, start, limit, by_service in cuts
        if etype in asked and (asked[etype] in intents or etype in timeline)
    ]


def _capped_walk_gap_text(etype: str, start: str, limit: int, by_service: bool) -> str:
    """What a walk cut at its row cap left out. `by_service` (dependency_neighbourhood 4
    on): the cap counted services reached (nearest first) and firings (the latest first);
    before, paths and firings in no useful order (runs recorded then say what they said)."""
    if etype == "alert_firing":
        if by_service:
            return (
                f"the FIRED_ON read of {start} kept the latest {limit} firings (by firing "
                "time): earlier firings are not listed"
            )
        return (
            f"the FIRED_ON read of {start} stopped at its cap of {limit} firings: firings "
            "past the cap are not listed"
        )
    way = "into" if etype == "dependent" else "out of"
    if by_service:
        more = "more depend on it" if etype == "dependent" else "it depends on more"
        return (
            f"the DEPENDS_ON walk {way} {start} read at most {limit} services (nearest "
            f"first) and {more}: those are not listed"
        )
    return (
        f"the DEPENDS_ON walk {way} {start} stopped at its cap of {limit} paths (nearest "
        "first): services past the cap are not listed"
    )


def _verb(words: str, names: Sequence[str]) -> str:
    """`words` with `names` in its `{}` and its "depend(s)" agreeing with them."""
    said = words.format(", ".join(names))
    return said.replace("depend(s)", "depends" if len(names) == 1 else "depend")


def dependency_retractions(records: Sequence[Evidence]) -> list[Evidence]:
    """The tombstones among the records of DEPENDS_ON edges read by key
    (`RetrievalOutcome.dependency_records`): each key whose latest record known at known_at
    is a retraction (one re-recorded since is not retracted), by key."""
    latest: dict[str, Evidence] = {}
    for ev in records:
        if ev.type != "DEPENDS_ON":
            continue
        if ev.element_id not in latest or ev.version > latest[ev.element_id].version:
            latest[ev.element_id] = ev
    return [ev for key, ev in sorted(latest.items()) if ev.status == "retracted"]


def _retracted_dependency_claims(tombstones: Sequence[Evidence], intent: str) -> list[Claim]:
    """A fact for each retracted DEPENDS_ON record between services the question names:
    what it said, when the retraction was recorded and why, and that it is no dependency
    (the tombstone is its evidence; it keeps the retracted record's ACL and interval)."""
    out = []
    for ev in tombstones:
        reason = str(ev.props.get("retraction_reason") or "no reason recorded")
        at = iso_utc(ev.recorded_at) if ev.recorded_at else "an unknown time"
        out.append(
            _claim(
                f"A record of {ev.content} ({_valid_text(ev)}) was retracted at {at}: {reason}; "
                "it is no dependency (no current record of this edge is read)",
                EpistemicStatus.FACT,
                0.9,
                [ev],
                intent,
            )
        )
    return out
