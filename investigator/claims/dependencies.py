"""Dependency walks: depth notes and the gaps of walks cut at their cap."""

from __future__ import annotations

from collections.abc import Sequence

from investigator.claims.wording import _with
from investigator.context_graph.models import ToolCallRecord
from investigator.evidence import Evidence
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
        capped = [limit for kind, _, limit in capped_walks(calls) if kind == etype]
        edge = sorted({p[-1] for p in paths if len(p) == hops + 1})
        longest = max(len(p) for p in paths) - 1
        if capped:
            # Its gap says what the cap left out (`_capped_walk_gaps`).
            notes.append(f"{read}; the read stopped at its cap of {max(capped)} paths")
        elif edge:
            notes.append(
                f"{read}; {_verb(beyond, edge)} was not read, so services further along "
                "the chain are not listed"
            )
        else:
            unit = "hop" if longest == 1 else "hops"
            notes.append(f"{read}; every chain read ended within {longest} {unit}")
    return notes


def capped_walks(calls: Sequence[ToolCallRecord]) -> list[tuple[str, str, int]]:
    """(evidence type, start, row cap) of each DEPENDS_ON walk of a dependency question
    (`dependent` into the service, `dependency` out of it), and of each FIRED_ON read of an
    alert question (`alert_firing`), that its row cap cut."""
    return sorted(
        {
            (str(c.evidence_type), str(c.params.get("start_id")), c.limit or 0)
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
    intents: set[Intent], cuts: Sequence[tuple[str, str, int]]
) -> list[MissingEvidence]:
    """A required gap for each walk of `cuts` (`capped_walks`) the question asked
    for: the walk lists the nearest services first, so those past its cap are unknown."""
    asked = {
        "dependent": Intent.DEPENDENTS,
        "dependency": Intent.DEPENDENCIES,
        "alert_firing": Intent.ALERT_FIRING,
    }
    way = {"dependent": "into", "dependency": "out of"}
    return [
        MissingEvidence(
            evidence_type=etype,
            intents=[asked[etype].value],
            description=(
                f"the FIRED_ON read of {start} stopped at its cap of {limit} firings: "
                "firings past the cap are not listed"
                if etype == "alert_firing"
                else f"the DEPENDS_ON walk {way[etype]} {start} stopped at its cap of {limit} "
                "paths (nearest first): services past the cap are not listed"
            ),
            required=True,
        )
        for etype, start, limit in cuts
        if etype in asked and asked[etype] in intents
    ]


def _verb(words: str, names: Sequence[str]) -> str:
    """`words` with `names` in its `{}` and its "depend(s)" agreeing with them."""
    said = words.format(", ".join(names))
    return said.replace("depend(s)", "depends" if len(names) == 1 else "depend")
