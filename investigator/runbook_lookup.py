"""SRE runbook lookup: which runbook version applies to a service, alert or error code at a
time, who owns it then, and which other versions were rejected and why (DESIGN.md sections 1
and 9).

The lookup uses the same machinery as an investigation, only a fixed, small plan:

1. resolve the target inside the subject's tenant (`entity_resolution`, or the fulltext
   channel for free text),
2. read the runbooks and policies linked to it with their SUPERSEDES chain (`runbooks_for`),
3. pass every version through the evidence gate at `as_of`: superseded versions are
   `rejected_superseded` with their replacement, future ones `rejected_temporal`,
4. name the owner team valid at `as_of` (the alert's or the runbook's OWNS edge, else the
   service's ownership),
5. record all of it as a Context Graph run (command `runbook`), so an auditor can replay it.

Every KG read goes through `cypher_templates.executor.TemplateExecutor` (allowlisted
templates, tenant/ACL/purpose enforced inside Cypher); the subject's grants come from its
Principal record, never from a flag.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import neo4j
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from cypher_templates.executor import TemplateExecutor, ToolResult
from cypher_templates.plan import PlanStep
from cypher_templates.subject import Subject, load_subject
from investigator.context_graph.models import RunRequest, RunStatus, ToolCallRecord
from investigator.context_graph.recorder import RunRecorder
from investigator.errors import NotAuthorized
from investigator.evidence import Evidence, Rejection, RejectionReason, normalise_rows
from investigator.gate import EvidenceGate, GatePolicy

# Purposes a lookup may run under, most specific first; the first one the subject's
# Principal allows is used unless the caller names one.
LOOKUP_PURPOSES = ("runbook_lookup", "incident_investigation")
MAX_TARGET_LENGTH = 200
MAX_STEP_LINES = 5
_ALERT_LIMIT = 5  # alert rules sharing one name (per severity)
_STEPS_TITLE = re.compile(
    r"step|mitigat|remediat|procedure|recover|resolution|action|fix", re.IGNORECASE
)
_RELEVANT_TYPES = ["alert_definition", "entity", "ownership", "policy", "runbook"]


class LookupTarget(StrEnum):
    """What the user looks a runbook up by."""

    SERVICE = "service"
    ALERT = "alert"
    ERROR_CODE = "error_code"
    TEXT = "text"


_ENTITY_LABEL = {
    LookupTarget.SERVICE: "Service",
    LookupTarget.ALERT: "Alert",
    LookupTarget.ERROR_CODE: "ErrorCode",
}
_ANCHOR_OF_LABEL = {"Service": "service", "Alert": "alert", "ErrorCode": "error_code"}


class RunbookQuery(BaseModel):
    """One lookup request: the target, who asks, and the time it is asked about."""

    model_config = ConfigDict(frozen=True)

    target: LookupTarget
    value: str
    subject_id: str = Field(min_length=1, max_length=200)
    as_of: AwareDatetime
    purpose: str | None = Field(default=None, min_length=1, max_length=100)

    @field_validator("value")
    @classmethod
    def _printable(cls, value: str) -> str:
        text = value.strip()
        if not text:
            raise ValueError("the lookup target is empty")
        if len(text) > MAX_TARGET_LENGTH:
            raise ValueError(f"the lookup target is longer than {MAX_TARGET_LENGTH} characters")
        if any(not ch.isprintable() for ch in text):
            raise ValueError("the lookup target contains control characters")
        return text

    def question(self) -> str:
        """The request as one line, for the recorded run."""
        words = {
            LookupTarget.SERVICE: "runbook for service",
            LookupTarget.ALERT: "runbook for alert",
            LookupTarget.ERROR_CODE: "runbook for error code",
            LookupTarget.TEXT: "runbook search",
        }
        return f"{words[self.target]}: {self.value}"


class RunbookVersion(BaseModel):
    """A runbook (or policy) version as the card and `--json` show it."""

    id: str
    version: int | str | None  # the document's own version label (v3 -> 3), else its record version
    record_version: int
    type: str
    title: str | None
    locator: str | None
    steps_locator: str | None = None
    valid_from: datetime | None
    valid_to: datetime | None
    evidence_id: str
    source_id: str | None
    source_version: str | None
    content_hash: str | None = None  # of the KG record, for integrity and provenance
    steps: list[str] = Field(default_factory=list)
    applies_via: str | None = None  # the anchor id the version was found through


class OwnerAnswer(BaseModel):
    """The team that owned the thing at `as_of`, and what that was read from."""

    team: str
    team_name: str | None = None
    basis: str  # "service svc:x", "alert alert:y" or "runbook runbook:z"
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    evidence_id: str


class RejectedVersion(BaseModel):
    """A version the gate (or the chain rule) refused, with the reason code."""

    candidate_id: str
    element_id: str
    version: int | str | None
    reason: RejectionReason
    replacement: str | None = None
    detail: str = ""


class RunbookAnswer(BaseModel):
    """The lookup's answer: `--json` prints exactly this."""

    run_id: str
    target: LookupTarget
    query: str
    subject: str
    purpose: str
    as_of: datetime
    known_at: datetime
    resolved: list[str] = Field(default_factory=list)
    runbook: RunbookVersion | None = None
    owner: str | None = None  # the owning team's id valid at as_of (DESIGN.md section 9)
    owner_detail: OwnerAnswer | None = None  # its name, what it was read from, validity
    rejected: list[RejectedVersion] = Field(default_factory=list)
    policies: list[RunbookVersion] = Field(default_factory=list)
    alternatives: list[RunbookVersion] = Field(default_factory=list)
    note: str | None = None


def _version_label(ev: Evidence) -> int | str | None:
    raw = ev.props.get("runbook_version")
    if raw is None:
        match = re.search(r"@v(\d+)$", ev.element_id)
        raw = match.group(1) if match else None
    if raw is None:
        return ev.version
    text = str(raw).strip().removeprefix("v").removeprefix("V")
    return int(text) if text.isdigit() else text


def _steps(ev: Evidence) -> tuple[list[str], str | None]:
    """The first lines of the steps: the steps-like section if the text has headings."""
    content = ev.content or ""
    lines = content.splitlines()
    titles = ev.props.get("section_titles")
    locators = ev.props.get("section_locators")
    chosen: list[str] = []
    locator: str | None = None
    if isinstance(titles, list) and isinstance(locators, list):
        for title, loc in zip(titles, locators, strict=False):
            if _STEPS_TITLE.search(str(title)):
                heading = re.compile(r"^#{1,6}\s+" + re.escape(str(title)) + r"\s*#*\s*$")
                start = next((i for i, line in enumerate(lines) if heading.match(line)), None)
                if start is None:
                    continue
                body = []
                for line in lines[start + 1 :]:
                    if re.match(r"^#{1,6}\s", line):
                        break
                    body.append(line)
                if any(line.strip() for line in body):
                    chosen = body
                    locator = str(loc)
                    break
    if not chosen:
        chosen = [line for line in lines if not re.match(r"^#{1,6}\s", line)]
    text = [line.rstrip() for line in chosen if line.strip()]
    return text[:MAX_STEP_LINES], locator


def _as_version(ev: Evidence) -> RunbookVersion:
    steps, steps_locator = _steps(ev)
    return RunbookVersion(
        id=ev.element_id,
        version=_version_label(ev),
        record_version=ev.version,
        type=ev.type or "Document",
        title=ev.title,
        locator=ev.locator,
        steps_locator=steps_locator,
        valid_from=ev.valid_from,
        valid_to=ev.valid_to,
        evidence_id=ev.evidence_id,
        source_id=ev.source_id,
        source_version=ev.source_version,
        content_hash=ev.content_hash,
        steps=steps,
        applies_via=str(ev.context.get("anchor")) if ev.context.get("anchor") else None,
    )


class _Run:
    """One lookup in progress: its executor calls, recording and gate."""

    def __init__(
        self,
        executor: TemplateExecutor,
        recorder: RunRecorder,
        run_id: str,
        subject: Subject,
        known_at: datetime,
        as_of: datetime,
    ) -> None:
        self.executor = executor
        self.recorder = recorder
        self.run_id = run_id
        self.subject = subject
        self.known_at = known_at
        self.as_of = as_of
        self.calls = 0
        self.text_hits: list[Evidence] = []
        self.gate = EvidenceGate(
            GatePolicy(
                as_of=as_of,
                known_at=known_at,
                purpose=subject.purpose,
                granted_labels=list(subject.labels),
                relevant_types=_RELEVANT_TYPES,
                top_k_per_type=50,
                evidence_token_budget=1_000_000,
            )
        )

    def call(
        self,
        template_id: str,
        params: dict[str, Any],
        evidence_type: str,
        options: dict[str, str | int] | None = None,
        limit: int | None = None,
    ) -> tuple[ToolResult, list[Evidence]]:
        """Run one template, record it as a ToolCall, return its rows as candidates."""
        self.calls += 1
        tool_call_id = f"{self.run_id}:tc{self.calls:02d}"
        step = PlanStep(
            template_id=template_id,
            params=params,
            options=options or {},
            evidence_type=evidence_type,
            limit=limit,
        )
        result = self.executor.run(step, self.subject, self.known_at)
        self.recorder.record_tool_call(
            self.run_id, ToolCallRecord.from_result(result, tool_call_id, as_of=self.as_of)
        )
        candidates = normalise_rows(
            result.rows, channel="graph", tool_call_id=tool_call_id, template=result.ref
        )
        return result, candidates

    def admit(self, candidates: list[Evidence]) -> tuple[list[Evidence], list[Rejection]]:
        """Gate candidates (deduplicated by record) and record every decision."""
        seen: set[tuple[str, int]] = set()
        unique = []
        for cand in sorted(candidates, key=lambda c: (c.element_id, c.version, c.evidence_id)):
            if cand.identity not in seen and cand.identity not in {
                ev.identity for ev in self.gate.admitted
            }:
                seen.add(cand.identity)
                unique.append(cand)
        decision = self.gate.admit(unique)
        for ev in decision.admitted:
            self.recorder.record_evidence(self.run_id, ev, ev.tool_call_id or "")
        for rejection in decision.rejected:
            self.recorder.record_rejection(self.run_id, rejection)
        return decision.admitted, decision.rejected


def _chains(candidates: list[Evidence]) -> list[list[Evidence]]:
    """Group document versions into SUPERSEDES chains (linked by `replacement`)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for ev in candidates:
        find(ev.element_id)
        if ev.replacement:
            parent[find(ev.element_id)] = find(ev.replacement)
    groups: dict[str, list[Evidence]] = {}
    for ev in candidates:
        groups.setdefault(find(ev.element_id), []).append(ev)
    return [sorted(g, key=lambda e: (e.element_id, e.version)) for _, g in sorted(groups.items())]


def _newest(admitted: list[Evidence]) -> tuple[Evidence, list[Evidence]]:
    """The admitted version no other admitted version replaces; the rest are older."""
    ids = {ev.element_id for ev in admitted}
    heads = [ev for ev in admitted if not ev.replacement or ev.replacement not in ids]
    heads.sort(
        key=lambda e: (e.valid_from or datetime.min.replace(tzinfo=UTC), e.element_id),
        reverse=True,
    )
    head = heads[0]
    return head, [ev for ev in admitted if ev is not head]


def _replacement_of(ev: Evidence, chain: list[Evidence], newest: Evidence) -> str:
    return ev.replacement if ev.replacement else newest.element_id


class RunbookLookup:
    """Answers `investigator runbook` queries for one driver (reusable across lookups)."""

    def __init__(
        self,
        driver: neo4j.Driver,
        database: str | None = None,
        executor: TemplateExecutor | None = None,
        recorder: RunRecorder | None = None,
    ) -> None:
        self.executor = executor or TemplateExecutor(driver, database=database)
        self.recorder = recorder or RunRecorder(driver)

    # -- the subject ----------------------------------------------------------------------

    def _subject(self, query: RunbookQuery, known_at: datetime) -> Subject:
        if query.purpose is not None:
            return load_subject(self.executor, query.subject_id, query.purpose, known_at)
        records = self.executor.read_principals(query.subject_id, known_at)
        if not records:
            raise NotAuthorized(f"unknown subject {query.subject_id!r}")
        allowed = set(records[0].purposes)
        purpose = next((p for p in LOOKUP_PURPOSES if p in allowed), None)
        if purpose is None:
            raise NotAuthorized(
                f"subject {query.subject_id!r} is allowed none of the purposes "
                f"{', '.join(LOOKUP_PURPOSES)}"
            )
        return load_subject(self.executor, query.subject_id, purpose, known_at)

    # -- the lookup -----------------------------------------------------------------------

    def lookup(self, query: RunbookQuery) -> RunbookAnswer:
        """Run one lookup and record it; the answer is what the CLI prints."""
        now = datetime.now(UTC)
        subject = self._subject(query, now)
        start = self.recorder.start_run(
            RunRequest(
                command="runbook",
                question=query.question(),
                subject_id=subject.id,
                purpose=subject.purpose,
                as_of=query.as_of,
                service=query.value if query.target is LookupTarget.SERVICE else None,
                options={"target": query.target.value, "value": query.value},
            )
        )
        run = _Run(
            self.executor,
            self.recorder,
            start.run_id,
            subject,
            start.known_at,
            query.as_of.astimezone(UTC),
        )
        try:
            answer = self._answer(run, query)
        except BaseException:
            self.recorder.finish_run(start.run_id, RunStatus.FAILED, "error")
            raise
        status = RunStatus.COMPLETE if answer.runbook is not None else RunStatus.PARTIAL
        stop = "evidence_sufficient" if answer.runbook is not None else "no_runbook"
        self.recorder.finish_run(start.run_id, status, stop, result=answer)
        return answer

    def _answer(self, run: _Run, query: RunbookQuery) -> RunbookAnswer:
        answer = RunbookAnswer(
            run_id=run.run_id,
            target=query.target,
            query=query.value,
            subject=run.subject.id,
            purpose=run.subject.purpose,
            as_of=run.as_of,
            known_at=run.known_at,
        )
        anchors = self._anchors(run, query)
        answer.resolved = [anchor_id for anchor_id, _ in anchors]
        if not anchors and not run.text_hits:
            what = query.target.value.replace("_", " ")
            answer.note = f"no {what} matching {query.value!r} is visible to {run.subject.id}"
            return answer
        documents: list[Evidence] = []
        for anchor_id, anchor in anchors:
            _, rows = run.call(
                "runbooks_for", {"anchor_id": anchor_id}, "runbook", options={"anchor": anchor}
            )
            documents.extend(rows)
        if run.text_hits:
            # Free text: only the version chain of the best fulltext hit; a runbook that
            # applies to nothing is its own chain.
            best = run.text_hits[0].element_id
            chain = next(
                (c for c in _chains(documents) if best in {ev.element_id for ev in c}), None
            )
            documents = chain if chain is not None else [run.text_hits[0]]
        admitted, rejected = run.admit(documents)
        rejected_by_id = list(rejected)
        heads: list[tuple[Evidence, list[Evidence]]] = []
        admitted_ids = {ev.element_id for ev in admitted}
        for chain in _chains(documents):
            in_chain = [ev for ev in chain if ev.element_id in admitted_ids and ev in admitted]
            if not in_chain:
                continue
            newest, older = _newest(in_chain)
            heads.append((newest, chain))
            for ev in older:
                replacement = _replacement_of(ev, chain, newest)
                rejection = Rejection(
                    candidate_id=ev.evidence_id,
                    element_id=ev.element_id,
                    version=ev.version,
                    reason=RejectionReason.REJECTED_SUPERSEDED,
                    replacement=replacement,
                    detail=f"also valid at as_of, but superseded by {replacement}",
                    tool_call_id=ev.tool_call_id,
                )
                run.recorder.record_rejection(run.run_id, rejection)
                rejected_by_id.append(rejection)
        by_identity = {(ev.element_id, ev.version): ev for ev in documents}
        answer.rejected = sorted(
            (
                RejectedVersion(
                    candidate_id=r.candidate_id,
                    element_id=r.element_id,
                    version=_version_label(by_identity[(r.element_id, r.version)])
                    if (r.element_id, r.version) in by_identity
                    else r.version,
                    reason=r.reason,
                    replacement=r.replacement,
                    detail=r.detail,
                )
                for r in rejected_by_id
            ),
            key=lambda r: (r.element_id, str(r.version), r.reason.value),
        )
        runbooks = [h for h in heads if h[0].type != "Policy"]
        policies = [h for h in heads if h[0].type == "Policy"]
        runbooks.sort(
            key=lambda h: (
                h[0].valid_from or datetime.min.replace(tzinfo=UTC),
                h[0].element_id,
            ),
            reverse=True,
        )
        answer.policies = [_as_version(h[0]) for h in policies]
        if runbooks:
            chosen = runbooks[0][0]
            answer.runbook = _as_version(chosen)
            answer.alternatives = [_as_version(h[0]) for h in runbooks[1:]]
            answer.owner_detail = self._owner(run, query, anchors, chosen)
        else:
            answer.note = "no runbook version is valid at as_of for this subject"
            answer.owner_detail = self._owner(run, query, anchors, None)
        answer.owner = answer.owner_detail.team if answer.owner_detail else None
        return answer

    # -- resolving the target -------------------------------------------------------------

    def _anchors(self, run: _Run, query: RunbookQuery) -> list[tuple[str, str]]:
        """(anchor id, runbooks_for anchor option) pairs the target resolves to."""
        if query.target is LookupTarget.TEXT:
            return self._text_anchors(run, query.value)
        label = _ENTITY_LABEL[query.target]
        _, rows = run.call(
            "entity_resolution",
            {"text": query.value},
            "entity",
            options={"label": label},
            limit=_ALERT_LIMIT if query.target is LookupTarget.ALERT else 5,
        )
        anchor = _ANCHOR_OF_LABEL[label]
        ids = sorted({ev.element_id for ev in rows})
        return [(i, anchor) for i in ids]

    def _text_anchors(self, run: _Run, text: str) -> list[tuple[str, str]]:
        _, hits = run.call(
            "fulltext_search", {"query": text}, "runbook", options={"label": "Runbook"}, limit=10
        )
        if not hits:
            return []
        best = hits[0]  # ranked by fulltext score (ties by id): deterministic
        run.text_hits = hits
        _, links = run.call(
            "dependency_neighbourhood",
            {"start_id": best.element_id},
            "entity",
            options={"rel_type": "APPLIES_TO", "direction": "out", "hops": 1},
            limit=10,
        )
        anchors: list[tuple[str, str]] = []
        for neighbour in sorted({str(ev.context.get("neighbour")) for ev in links}):
            _, found = run.call(
                "entity_resolution",
                {"text": neighbour},
                "entity",
                options={"label": "any"},
                limit=1,
            )
            for ev in found:
                if ev.element_id == neighbour and ev.type in _ANCHOR_OF_LABEL:
                    anchors.append((neighbour, _ANCHOR_OF_LABEL[ev.type]))
            if anchors:
                break  # one anchor carries the whole chain
        return anchors

    # -- the owner ------------------------------------------------------------------------

    def _owner(
        self,
        run: _Run,
        query: RunbookQuery,
        anchors: list[tuple[str, str]],
        chosen: Evidence | None,
    ) -> OwnerAnswer | None:
        services = [a for a, kind in anchors if kind == "service"]
        if query.target is LookupTarget.SERVICE:
            return self._service_owner(run, services)
        for anchor_id, kind in anchors:
            if kind == "alert":
                owner = self._owns_in(run, anchor_id, "alert")
                if owner:
                    return owner
        if chosen is not None:
            owner = self._owns_in(run, chosen.element_id, "runbook")
            if owner:
                return owner
            _, links = run.call(
                "dependency_neighbourhood",
                {"start_id": chosen.element_id},
                "entity",
                options={"rel_type": "APPLIES_TO", "direction": "out", "hops": 1},
                limit=20,
            )
            applied = sorted({str(ev.context.get("neighbour")) for ev in links})
            services = [s for s in applied if s.startswith("svc:")] or services
        return self._service_owner(run, services)

    def _owns_in(self, run: _Run, element_id: str, what: str) -> OwnerAnswer | None:
        _, rows = run.call(
            "dependency_neighbourhood",
            {"start_id": element_id},
            "entity",
            options={"rel_type": "OWNS", "direction": "in", "hops": 1},
            limit=20,
        )
        admitted, _ = run.admit(rows)
        if not admitted:
            return None
        best = max(
            admitted, key=lambda e: (e.valid_from or datetime.min.replace(tzinfo=UTC), e.element_id)
        )
        return OwnerAnswer(
            team=str(best.context.get("neighbour")),
            basis=f"{what} {element_id}",
            valid_from=best.valid_from,
            valid_to=best.valid_to,
            evidence_id=best.evidence_id,
        )

    def _service_owner(self, run: _Run, services: list[str]) -> OwnerAnswer | None:
        for service in services[:3]:
            _, rows = run.call("ownership_over_time", {"service_id": service}, "ownership")
            admitted, _ = run.admit(rows)
            if admitted:
                best = max(
                    admitted,
                    key=lambda e: (e.valid_from or datetime.min.replace(tzinfo=UTC), e.element_id),
                )
                return OwnerAnswer(
                    team=str(best.context.get("team")),
                    team_name=best.context.get("team_name"),
                    basis=f"service {service}",
                    valid_from=best.valid_from,
                    valid_to=best.valid_to,
                    evidence_id=best.evidence_id,
                )
        return None
