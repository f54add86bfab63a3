"""Fallback runbooks an SRE expects, shown as such (issue 15).

An error code or an alert often has no runbook of its own while the service that emitted it
(`svc -EMITTED-> err`) or that it fired on (`alert -FIRED_ON-> svc`) does. The lookup then
answers with that service's runbook and says so: the path it took is named
(`err:PAY-1002 <- EMITTED - svc:payment-api`), the answer's note calls it a fallback, and the
owner comes through the same path (the service's owner at as_of).

Only edges the gate admits at as_of count (the service emitted the code, or the alert fired
on it, at that time), through the same allowlisted templates and visibility predicate as
every other read. Several services give several fallbacks, ranked, never one picked
silently: most admitted edges first (fired on it most often), then the most recent edge,
then the service id.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol

from pydantic import BaseModel, ConfigDict, JsonValue

from cypher_templates.plan import EvidenceType, PlanStep
from graph_schema.canonical import iso_utc
from investigator.evidence import Evidence, Rejection, RejectionReason
from investigator.record_time import as_recorded_at, recorded_after


class LookupSteps(Protocol):
    """What a fallback needs of the lookup in progress (runbook_lookup's `_Lookup`): recorded
    template calls and the gate. A protocol, so this module does not import the lookup."""

    def call(
        self,
        template_id: str,
        params: dict[str, JsonValue],
        evidence_type: EvidenceType,
        options: dict[str, str | int] | None = None,
        limit: int | None = None,
    ) -> list[Evidence]: ...

    def stage(self, steps: list[PlanStep]) -> list[list[Evidence]]: ...

    def admit(self, candidates: list[Evidence]) -> tuple[list[Evidence], list[Rejection]]: ...


class OneStepCalls:
    """`LookupSteps.call` for a class that has `stage`: a call is a stage of one step.

    Shared by the runbook lookup and the investigation's runbook search, so both build the
    step alike; `STEP_ID` names the step where the caller's plan needs it named."""

    STEP_ID: str | None = None

    def stage(self, steps: list[PlanStep]) -> list[list[Evidence]]:
        raise NotImplementedError

    def call(
        self,
        template_id: str,
        params: dict[str, JsonValue],
        evidence_type: EvidenceType,
        options: dict[str, str | int] | None = None,
        limit: int | None = None,
    ) -> list[Evidence]:
        """A stage of one step."""
        step = PlanStep(
            step_id=self.STEP_ID,
            template_id=template_id,
            params=params,
            options=options or {},
            evidence_type=evidence_type,
            limit=limit,
        )
        return self.stage([step])[0]


MAX_SERVICES = 5
# anchor kind -> (relationship, direction from the anchor, arrow text for `via`)
_PATHS = {
    "error_code": ("EMITTED", "in", "<- EMITTED -"),
    "alert": ("FIRED_ON", "out", "- FIRED_ON ->"),
}
_EPOCH = datetime.min.replace(tzinfo=UTC)
# Gate reasons that mean "an edge of the KG, only not valid at as_of".
_NOT_VALID_THEN = frozenset(
    {RejectionReason.REJECTED_TEMPORAL, RejectionReason.REJECTED_SUPERSEDED}
)


class FallbackPath(BaseModel):
    """How a fallback runbook was reached: anchor, relationship, service, and the edge."""

    model_config = ConfigDict(frozen=True)

    anchor: str
    relationship: str
    service: str
    via: str  # e.g. "err:PAY-1002 <- EMITTED - svc:payment-api"
    edges: int  # admitted edges between the two at as_of
    edge_evidence_id: str  # the most recent of them
    edge_valid_from: datetime | None = None


class FallbackRunbook(BaseModel):
    """One service's runbook reached through a fallback path."""

    path: FallbackPath
    runbook: Evidence


class InactiveEdge(BaseModel):
    """An edge to a service that is not valid at as_of (the alert fired on it earlier):
    not a fallback, but what a "no runbook" answer can point the user to."""

    model_config = ConfigDict(frozen=True)

    anchor: str
    relationship: str
    service: str
    valid_from: datetime | None = None
    valid_to: datetime | None = None


class FallbackSearch(BaseModel):
    """The fallback paths valid at as_of, ranked, and the edges the gate found not valid
    then (`rejected_temporal`), most recent first."""

    paths: list[FallbackPath]
    inactive: list[InactiveEdge] = []


def fallback_paths(run: LookupSteps, anchors: list[tuple[str, str]]) -> list[FallbackPath]:
    """The services the anchors were emitted by / fired on at as_of, ranked."""
    return search_paths(run, anchors).paths


def search_paths(run: LookupSteps, anchors: list[tuple[str, str]]) -> FallbackSearch:
    """The services the anchors were emitted by / fired on at as_of, ranked, and the edges
    to services that were not valid at as_of."""
    paths: dict[str, list[Evidence]] = {}
    anchor_of: dict[str, str] = {}
    inactive: list[InactiveEdge] = []
    for anchor_id, kind in anchors:
        if kind not in _PATHS:
            continue
        rel_type, direction, _ = _PATHS[kind]
        rows = run.call(
            "dependency_neighbourhood",
            {"start_id": anchor_id},
            "entity",
            options={"rel_type": rel_type, "direction": direction, "hops": 1},
            limit=50,
        )
        admitted, rejected = run.admit(rows)
        by_candidate = {row.evidence_id: row for row in rows}
        for rejection in rejected:
            edge = by_candidate.get(rejection.candidate_id)
            if edge is not None and rejection.reason in _NOT_VALID_THEN:
                inactive.append(
                    InactiveEdge(
                        anchor=anchor_id,
                        relationship=rel_type,
                        service=str(edge.context.get("neighbour")),
                        valid_from=edge.valid_from,
                        valid_to=edge.valid_to,
                    )
                )
        for edge in admitted:
            service = str(edge.context.get("neighbour"))
            if service not in anchor_of:
                anchor_of[service] = anchor_id
            if anchor_of[service] == anchor_id:
                paths.setdefault(service, []).append(edge)
    ranked: list[FallbackPath] = []
    for service, edges in paths.items():
        latest = max(edges, key=lambda e: (e.valid_from or _EPOCH, e.element_id))
        anchor_id = anchor_of[service]
        kind = next(k for a, k in anchors if a == anchor_id)
        rel_type, _, arrow = _PATHS[kind]
        ranked.append(
            FallbackPath(
                anchor=anchor_id,
                relationship=rel_type,
                service=service,
                via=f"{anchor_id} {arrow} {service}",
                edges=len(edges),
                edge_evidence_id=latest.evidence_id,
                edge_valid_from=latest.valid_from,
            )
        )
    ranked.sort(key=lambda p: (-p.edges, -(p.edge_valid_from or _EPOCH).timestamp(), p.service))
    inactive.sort(key=lambda e: (-(e.valid_from or _EPOCH).timestamp(), e.service, e.anchor))
    return FallbackSearch(paths=ranked[:MAX_SERVICES], inactive=inactive)


def fallback_runbooks(
    run: LookupSteps,
    anchors: list[tuple[str, str]],
    paths: list[FallbackPath] | None = None,
    *,
    as_of: datetime | None = None,
) -> list[FallbackRunbook]:
    """The runbook valid at as_of of each service on a fallback path, in the paths' order
    (`paths`: already searched, else searched here). Given `as_of`, a runbook that states no
    validity is the version recorded by then (record_time.py), as for a runbook of its own."""
    if paths is None:
        paths = fallback_paths(run, anchors)
    if not paths:
        return []
    steps = [
        PlanStep(
            template_id="runbooks_for",
            params={"anchor_id": path.service},
            options={"anchor": "service"},
            evidence_type="runbook",
        )
        for path in paths
    ]
    found: list[FallbackRunbook] = []
    for path, rows in zip(paths, run.stage(steps), strict=True):
        runbooks = [r for r in rows if r.type != "Policy"]
        if as_of is not None:
            runbooks = as_recorded_at(runbooks, as_of, run.stage)
        # The gate keeps the newest version of each chain valid at as_of; policies are not
        # runbooks.
        admitted, _ = run.admit(runbooks)
        if not admitted:
            continue
        best = max(admitted, key=lambda e: (e.valid_from or _EPOCH, e.element_id))
        found.append(FallbackRunbook(path=path, runbook=best))
    return found


def own_runbooks_weak(own: list[Evidence], as_of: datetime) -> bool:
    """Whether none of the anchor's own runbooks is a trusted one known to be in force at
    as_of: each is untrusted (imported text) or states no validity and was recorded after
    as_of (what it said then is not known). Then a fallback may be served before them."""
    return bool(own) and not any(
        ev.trust == "trusted" and not recorded_after(ev, as_of) for ev in own
    )


def served_over_own(
    own: list[Evidence], fallbacks: list[FallbackRunbook], as_of: datetime
) -> list[FallbackRunbook]:
    """The fallbacks served before the anchor's own runbooks (finding 3 of e29-qa): an
    untrusted page that names an alert does not displace the trusted runbook in force on the
    service it fired on, and a page recorded after as_of does not hide a runbook known to be
    in force then. So, when the own runbooks are weak (`own_runbooks_weak`), a fallback
    known to be in force at as_of that is trusted, or any such fallback when every own
    runbook was recorded after as_of; none otherwise (the own runbook is served)."""
    if not own_runbooks_weak(own, as_of):
        return []
    late = all(recorded_after(ev, as_of) for ev in own)
    return [
        f
        for f in fallbacks
        if not recorded_after(f.runbook, as_of) and (late or f.runbook.trust == "trusted")
    ]


def set_aside_note(own: Evidence, served: Evidence, as_of: datetime) -> str:
    """Why the anchor's own page is listed after a fallback: untrusted and/or recorded after
    as_of, with when it was recorded."""
    recorded = iso_utc(own.recorded_at) if own.recorded_at is not None else "at an unknown time"
    said = ["untrusted"] if own.trust != "trusted" else []
    said.append(
        f"recorded {recorded}"
        + (", after as_of: what it said then is not known" if recorded_after(own, as_of) else "")
    )
    return f"its own page, {', '.join(said)}; not served over {served.element_id}"
