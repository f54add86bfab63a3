"""The bounded, gap-driven retrieval loop (docs/design.md section 2).

Each round: plan steps for the evidence types still missing (and the anchors they need),
run them through the run session (`RunSession.call_round`: the template executor, the only
path to the KG, and the recording; a round's reads run together, recorded in plan order),
fuse the candidates of all channels with Reciprocal Rank Fusion, pass them through the
session's evidence gate, then recompute the gaps. The loop stops with
`evidence_sufficient`, `max_rounds`, `no_progress`, `deadline` or `budget_exhausted`, and
never runs the same call twice.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, Field

from cypher_templates.executor import Element, TemplateRow
from cypher_templates.plan import PlanStep, QueryPlan
from graph_schema.alert_names import as_named, identifier_words, typed_as
from investigator.alert_rules import runbooks_reached
from investigator.change_period import asks_changes
from investigator.context_graph.models import ToolCallRecord
from investigator.evidence import Evidence, Rejection, fuse, iso_utc
from investigator.incident_reference import (
    THE_INCIDENT_LOOKUP,
    IncidentReading,
    read_the_incident,
    speaks_of_incident,
    the_incident_words,
)
from investigator.ownership_history import (
    ENTITY_OWNERS_TEMPLATE,
    asked_team,
    read_entities,
    read_services,
    read_teams,
    records_steps,
    services_to_check,
    whole_records,
)
from investigator.planner import (
    AT_PREFIX,
    CAUSE_INTENTS,
    DEPLOY_LOOKBACK,
    EMITTED_READ,
    FIRST_RELEASE_CHECK,
    LATEST_TENANT_RELEASES_TEMPLATE,
    MAX_FOCUS_SERVICES,
    NAMED_RELEASE_LOOKUP,
    NAV_PREFIX,
    RELEASE_CHOICE_READ,
    RELEASE_CHOICE_SERVICES,
    RELEASE_ERRORS_READ,
    RELEASE_INCIDENTS_READ,
    RELEASE_PATH_READ,
    RUNBOOK_SERVICES,
    TEAM_LINK,
    DeterministicPlanner,
    Known,
    PlanInput,
    action_database_incident_words,
    action_incident_words,
    action_search_text,
    action_then_incident_words,
    asks_severity_change,
    asks_unnamed_alert_owner,
    competing_cause_steps,
    emitter_steps,
    extract_mentions,
    focus_services,
    followup_steps,
    is_check,
    is_navigation,
    kind_of,
    latest_release_choice_steps,
    metric_incident_words,
    missing_required,
    name_alone_as_words,
    name_alone_team_words,
    named_release_services,
    note_check_rows,
    note_owner_changes,
    note_runbook_services,
    pasted_alert_intents,
    period_retraction_steps,
    reads_as_placed_symptom,
    reads_as_symptom,
    release_choice_steps,
    release_errors_steps,
    release_incidents_steps,
    release_path_steps,
    runbook_search_text,
    status_symptom_reading,
    step_key,
    steps_for,
    symptom_intents,
    types_wanted,
    unique_steps,
    unnamed_errors_words,
    unrecorded_asks,
    wanted_types,
)
from investigator.record_time import as_recorded_at, version_history_steps
from investigator.release_clock import clock_choice
from investigator.rubric import Intent, required_types, useful_types
from investigator.runbook_fallback import OneStepCalls, own_runbooks_weak
from investigator.runbook_search import (
    RankedRunbook,
    pasted_alert_text,
    search_runbooks,
    search_terms,
    searched_words,
    spelled_out,
    without_words,
)
from investigator.runbook_sections import (
    SectionFocus,
    alert_excerpt,
    alert_focus,
    alert_name_in,
    alert_sectioned,
    chosen_heading,
    code_headed,
    code_words,
    headed_by,
    pointed_at,
)
from investigator.session import RunSession, ToolCall
from investigator.timeline import (
    CONFOUNDER_WINDOW,
    EARLIEST,
    AnchorEvent,
    ResponseMetric,
    instant_of,
    response_metrics,
    shift,
    time_references,
)


class StopReason(StrEnum):
    """Why the loop stopped."""

    EVIDENCE_SUFFICIENT = "evidence_sufficient"
    MAX_ROUNDS = "max_rounds"
    NO_PROGRESS = "no_progress"
    DEADLINE = "deadline"
    BUDGET_EXHAUSTED = "budget_exhausted"


class RetrievalOutcome(BaseModel):
    """What the loop produced: the gate holds admitted evidence and rejections."""

    rounds: int
    stop_reason: StopReason
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    plans: list[QueryPlan] = Field(default_factory=list)
    known: Known
    candidates: int = 0
    executor_ms: float = 0.0
    gate_ms: float = 0.0
    # The id `--service` resolved to ("payment-api" -> "svc:payment-api"), else as given.
    service_id: str | None = None
    # The intents answered, and the question as read for them: with the alerts it types in
    # another form written as named (`RetrievalLoop._reread`); else the goal's.
    intents: list[Intent] = Field(default_factory=list)
    reading: str = ""
    # The loop stopped (deadline, max_rounds, budget) with reads still planned: what it did
    # not find was not looked for to the end, so it is unknown, not absent.
    cut_short: bool = False
    # A loop stopped by its deadline: the number of tool calls made when the deadline was
    # found passed; its replay is cut after as many (`deadline_after_calls`), never by a clock.
    deadline_cut_after_calls: int | None = None
    # Every record of the OWNS edges of the services asked about, retracted ones included
    # (ownership_history.py): always for a question over a period; for a single-time owner
    # question, of a service with no owner at an instant asked or a record rewritten after it.
    ownership_records: list[Evidence] = Field(default_factory=list)
    # Every record (version) of each incident admitted known at known_at, for a question
    # asking how its severity changed ("when was it upgraded to SEV1?"; `_incident_records`).
    incident_records: list[Evidence] = Field(default_factory=list)
    # Every record (retracted ones too) of the DEPENDS_ON edge between each pair of services
    # a dependency question walked from ("does payment-api depend on legacy-fraud?"):
    # a retracted record is said (claims.dependencies._retracted_dependency_claims).
    dependency_records: list[Evidence] = Field(default_factory=list)
    # The tombstones of DEPENDS_ON and OWNS records retracted in a change question's period
    # ("what changed between July 1 and July 15?"), read after the search
    # (`_period_retractions`): each is a change of the period (claims.changes).
    period_retractions: list[Evidence] = Field(default_factory=list)
    # Each alert or runbook version whose `owners_of` read (oldest first) its row cap cut:
    # the latest start it read (None: none had one); later owners may be missing.
    owners_cut_at: dict[str, datetime | None] = Field(default_factory=dict)
    # How a bare "the incident" in a question that names nothing was read (incident_reference).
    incident_reading: IncidentReading | None = None
    # The alert records read whose rule the last import of their rule file no longer had
    # (`file_missing_since`): an answer about one says so, as `runbook --alert` does.
    removed_rules: list[Evidence] = Field(default_factory=list)
    # The runbooks the runbook search found the question's words fit alike (ids without
    # version), when it chose none for that tie: no one of them is cited (investigation.py).
    runbook_tie: list[str] = Field(default_factory=list)
    # Why the runbook search chose none for a symptom said with where it shows ("5xx on
    # payment-api"), in one line: its runbook gap says that search was asked (investigation.py).
    runbook_search_note: str | None = None
    # What the runbook search says of the runbooks it set aside, as the card says it: the
    # pages of other database engines than the one the question names or pastes an error of.
    search_notes: list[str] = Field(default_factory=list)
    # The releases a correlation question naming no service was read as asking about, when
    # several were taken (`RetrievalLoop._take_release`): each is stated in the answer.
    releases_taken: list[str] = Field(default_factory=list)
    # Every alert record read, once each, and each alert id -> the runbooks (ids without
    # version) read through it: rules of one name that lead apart are told apart.
    alert_rows: list[Evidence] = Field(default_factory=list)
    runbooks_through: dict[str, list[str]] = Field(default_factory=dict)
    # Fulltext words -> at least how many visible records tie on them where the rows stopped
    # (`ToolResult.tie_at_cut`): too many equal hits to order, none of the tie was read.
    wide_ties: dict[str, int] = Field(default_factory=dict)
    # What the run read and did not follow because it starts after as_of (an incident, a
    # service, an error code, an alert or a release: id -> its valid_from): recorded later.
    started_later: dict[str, datetime] = Field(default_factory=dict)
    # Error codes whose first sighting the run read starts after as_of (code id -> that
    # start), not followed: the errors had not happened at as_of (a cause question asked
    # between a release and its first error holds back what explains them).
    errors_later: dict[str, datetime] = Field(default_factory=dict)
    # What the question's words name apart from `--service`, in one line each: both are read
    # (the words' first); said so a `--service` left from an earlier command is seen.
    service_notes: list[str] = Field(default_factory=list)


# The kinds of anchor a run that did not follow it says it found recorded later.
_LATER_ANCHORS = frozenset({"incidents", "services", "error_codes", "alerts", "deployments"})

# Link (navigation) templates: their rows name anchors; they are evidence only for lookups.
_LINK_CONTEXT_KEYS = (
    "service",
    "incident",
    "error_code",
    "deployment",
    "alert",
    "neighbour",
    "team",
    "anchor",
    "entity",
)


# Words with which a question asks about the services an incident affected (their owners are
# then wanted even when the question names a service).
_ASKS_AFFECTED = re.compile(r"\b(affect(?:ed|s)?|impact(?:ed|s)?)\b|受影响|受到影响", re.IGNORECASE)
# Records that reach a service through the incident or the error (not through the question).
_INCIDENT_LINKS = frozenset({"AFFECTED_BY", "EMITTED"})


# What may stand beside an error id in a question that asks nothing else ("BILL-2002 error").
_BESIDE_A_CODE = frozenset({"error", "errors", "code"})
# The intents a question of error ids alone is read as before its runbook is known.
_READ_FOR_A_CODE = frozenset({Intent.ENTITY_LOOKUP, Intent.INCIDENT_LOOKUP})


def _only_codes(question: str) -> bool:
    """Whether the question is nothing but error ids ("BILL-2002", "BILL-2002 errors?"): a
    complete question for a runbook, as the card reads it."""
    codes = {c.casefold() for c in code_words(question)}
    words = [w.strip("?!.,;:()'\"`").casefold() for w in question.split()]
    return bool(codes) and all(w in codes or w in _BESIDE_A_CODE for w in words if w)


class QuestionFocus(BaseModel):
    """Which error and which services a question is about, as the loop learns them.

    The error: the codes (as written, "PAY-4097") and error code ids the question names,
    matched on the ErrorCode's own `code` (ids differ between tenants); when it names none
    and needs one error as its anchor (a correlation, a root-cause question, "then"), the
    error with the latest first-seen at or before `as_of` (docs/investigation.md, "Time
    references"). The
    services: those the question names (`--service`, a linked mention); services reached
    only through the incident or the error become anchors only when it names none, or asks
    for the affected services.
    """

    codes: list[str] = Field(default_factory=list)
    ids: list[str] = Field(default_factory=list)
    latest_when_unnamed: bool = False
    asks_affected: bool = False
    named_services: list[str] = Field(default_factory=list)
    # The services the question's own words lead to, `--service` aside: a service it names
    # (linked), one a named alert fired on, one that emitted a named error code; in the
    # order read. `--service` among none of them: the words' are read first (`Known.worded`).
    worded: list[str] = Field(default_factory=list)
    # Of those, each reached through a record the words name -> that record (the error code
    # it emitted, the alert that fired on it).
    worded_via: dict[str, str] = Field(default_factory=dict)
    # error code id -> its `code` as the KG records it
    code_of: dict[str, str] = Field(default_factory=dict)
    # error code id -> the earliest first-seen instant read for it
    first_seen_of: dict[str, datetime] = Field(default_factory=dict)

    def names_error(self, error_id: str) -> bool:
        """Whether the question names this error code (by id or by its code)."""
        code = self.code_of.get(error_id, error_id.removeprefix("err:"))
        return error_id in self.ids or code in self.codes

    def anchor(self, as_of: datetime) -> tuple[datetime, str] | None:
        """(first seen, error code id) of the error the question is about, or None."""
        seen = sorted((t, i) for i, t in self.first_seen_of.items())
        if self.codes or self.ids:
            named = [(t, i) for t, i in seen if self.names_error(i)]
            return named[0] if named else None
        happened = [(t, i) for t, i in seen if t <= as_of]
        if happened:
            return happened[-1]
        return seen[0] if seen else None

    def focus_ids(self, as_of: datetime) -> list[str]:
        """The error code ids whose records the gate admits (empty: every code)."""
        if self.codes or self.ids:
            return sorted({*self.ids, *(i for i in self.code_of if self.names_error(i))})
        if not self.latest_when_unnamed:
            return []
        anchor = self.anchor(as_of)
        return [anchor[1]] if anchor else []


def _instant(raw: object) -> datetime | None:
    return raw if isinstance(raw, datetime) and raw.tzinfo is not None else instant_of(raw)


def _error_sighting(row: TemplateRow) -> tuple[str, str | None, datetime] | None:
    """(error code id, its code, first seen) a row states: an incident's error-code part,
    or an EMITTED record (its `first_seen`, else when it became valid)."""
    el = row.element
    code_id = row.context.get("error_code")
    first = _instant(row.context.get("first_seen"))
    if el.kind == "relationship" and el.type == "EMITTED":
        if not isinstance(code_id, str):
            ends = (row.context.get("start"), row.context.get("neighbour"))
            code_id = next(
                (e for e in ends if isinstance(e, str) and kind_of(e) == "error_codes"), None
            )
        first = first or _instant(el.props.get("first_seen")) or el.valid_from
    if not isinstance(code_id, str) or first is None:
        return None
    code = row.context.get("code")
    return code_id, code if isinstance(code, str) else None, first


def started_by(row: TemplateRow, at: datetime) -> bool:
    """Whether a row's record had started by `at`: its `valid_from` (none: undated, taken
    as started), or for a release whose rollout started before that, the rollout's start
    (as `Evidence.supports_from`): a rollout under way at `at` has started."""
    el = row.element
    if el.valid_from is None or el.valid_from <= at:
        return True
    if el.type != "Deployment":
        return False
    started = instant_of(row.context.get("started_at", el.props.get("started_at")))
    return started is not None and started <= at


def learn_named_runbooks(known: Known, rows: Sequence[TemplateRow]) -> bool:
    """Record the runbooks that linking the question's words resolved to (a runbook named
    by its id or name); True when any is new.

    Only linking rows count: a runbook that a template returned as evidence is an answer,
    not something the question named. A runbook imported without any APPLIES_TO link (a
    folder of Markdown files named after their alerts) is found this way.
    """
    changed = False
    for row in rows:
        el = row.element
        if el.kind == "node" and el.type == "Runbook":
            changed |= known.add("runbooks", el.element_id)
    return changed


def learn_runbook_in_force(
    known: Known, anchor_id: str, rows: Sequence[TemplateRow], as_of: datetime
) -> bool:
    """ "Who owns the payment recovery runbook?": the versions of the runbook its words found
    (`anchor_id`) that `runbooks_for` read and that hold at as_of (not superseded, valid
    then) are known runbooks too, so their own OWNS records are read (before, only the
    version the words found was: v3's owner, not valid at 07-26, and v4's went unread, the
    answer saying no owner of it). True when any is new."""
    base = anchor_id.split("@", 1)[0]
    changed = False
    for row in rows:
        el = row.element
        if (
            el.kind == "node"
            and el.type == "Runbook"
            and el.element_id != anchor_id
            and el.element_id.split("@", 1)[0] == base
            and el.superseded_at is None
            and (el.valid_from is None or el.valid_from <= as_of)
            and (el.valid_to is None or el.valid_to > as_of)
        ):
            changed |= known.add("runbooks", el.element_id)
    return changed


def learn(
    known: Known,
    rows: Sequence[TemplateRow],
    focus: QuestionFocus,
    as_of: datetime,
    *,
    worded: bool = True,
) -> bool:
    """Update `known` (and `focus`) from rows; True when anything is new.

    Element types and context ids become anchors; the first error is the one `focus`
    says the question is about (`QuestionFocus.anchor`). `worded`: a service record among
    the rows is one the question's words name (not so for the rows of `--service`'s own
    linking call).
    """
    changed = False
    # Decided before this batch: an incident's services found together stay together.
    names_a_service = bool(focus.named_services)
    # With no service named: an incident's services that emitted its errors are the ones it
    # is about ("who was paged for the payments incident?"); one it only degraded (checkout)
    # is context, unless the question asks for the affected services.
    emitting = {
        row.context.get("service")
        for row in rows
        if row.element.type == "EMITTED" and row.context.get("incident")
    }
    for row in rows:
        el = row.element
        if el.kind == "node":
            kind = kind_of(el.element_id, el.type)
            if kind != "other":
                changed |= known.add(kind, el.element_id)
            if kind == "services" and el.element_id not in focus.named_services:
                # Service records only come from linking what the question names.
                focus.named_services.append(el.element_id)
            if kind == "services" and worded and el.element_id not in focus.worded:
                focus.worded.append(el.element_id)
            if el.type == "ChangeEvent":
                # A change found by a lookup, as one found by a check: its documents are read.
                changed |= known.add("changes", el.element_id)
            if kind == "error_codes":
                code = el.props.get("code") or el.name
                if isinstance(code, str):
                    focus.code_of[el.element_id] = code
        for key in _LINK_CONTEXT_KEYS:
            value = row.context.get(key)
            if isinstance(value, str) and ":" in value:
                kind = kind_of(value)
                if kind == "other" or key == "team":
                    continue
                if kind == "error_codes" and (focus.codes or focus.ids):
                    if value not in focus.code_of and isinstance(row.context.get("code"), str):
                        focus.code_of[value] = row.context.get("code")
                    if not focus.names_error(value):
                        continue  # another code of the same service: not asked about
                start = row.context.get("start")
                if (
                    kind == "services"
                    and el.type == "EMITTED"
                    and key == "neighbour"
                    and isinstance(start, str)
                    and kind_of(start) == "error_codes"
                    and focus.names_error(start)
                    and value not in focus.worded
                ):
                    # A service that emitted an error code the question names: the words
                    # lead to it (the place asked about when `--service` is another one).
                    focus.worded.append(value)
                    focus.worded_via[value] = start
                if (
                    kind == "services"
                    and el.type in _INCIDENT_LINKS
                    and names_a_service
                    and value not in focus.named_services
                    and not focus.asks_affected
                ):
                    continue  # another service the incident touched: not asked about
                if (
                    kind == "services"
                    and el.type == "AFFECTED_BY"
                    and not names_a_service
                    and emitting
                    and value not in emitting
                    and not focus.asks_affected
                ):
                    continue  # affected only downstream of the incident's errors
                changed |= known.add(kind, value)
                fired = el.valid_from
                if (
                    kind == "alerts"
                    and el.type == "FIRED_ON"
                    and key == "neighbour"
                    and isinstance(row.context.get("start"), str)
                    and (fired is None or fired <= as_of)
                ):
                    # An alert that fired on the service asked by as_of (read for an
                    # unnamed alert's owner, `planner.alert_owner_steps`).
                    pair = (str(row.context["start"]), value)
                    if pair not in known.alerts_fired_on:
                        known.alerts_fired_on.append(pair)
                        known.alerts_fired_on.sort()
                        changed = True
                if (
                    kind == "services"
                    and el.type == "FIRED_ON"
                    and key == "neighbour"
                    and value not in focus.named_services
                ):
                    # The service an alert the question names fired on: named through it.
                    focus.named_services.append(value)
                if (
                    kind == "services"
                    and el.type == "FIRED_ON"
                    and key == "neighbour"
                    and value not in focus.worded
                ):
                    focus.worded.append(value)
                    if isinstance(row.context.get("start"), str):
                        focus.worded_via[value] = str(row.context["start"])
                if (
                    kind == "services"
                    and el.type == "DEPENDS_ON"
                    and key == "neighbour"
                    and value not in focus.named_services
                ):
                    known.add("walked", value)
        sighting = _error_sighting(row)
        if sighting is not None:
            code_id, code, first = sighting
            if code is not None:
                focus.code_of.setdefault(code_id, code)
            prior = focus.first_seen_of.get(code_id)
            if prior is None or first < prior:
                focus.first_seen_of[code_id] = first
    anchor = focus.anchor(as_of)
    first_seen = anchor[0] if anchor else None
    if first_seen != known.first_seen:
        known.first_seen = first_seen
        changed = True
    return changed


# A ranked text channel finds text; it cannot show that a runbook applies to the service, that
# a team owned it, or when a release finished. Those types only come from graph templates that
# walk the relationships; on fulltext hits they are dropped (the graph channel re-adds them
# when it finds the same record, through RRF fusion).
TEXT_CHANNEL_TYPES: dict[str, frozenset[str]] = {
    "fulltext_search": frozenset({"document", "incident_report", "mechanism", "entity"}),
}


def _reference_time(step: PlanStep) -> datetime | None:
    """The time a lookup repeated at a reference time is for (its `at-<time>` step id)."""
    step_id = step.step_id or ""
    if not step_id.startswith(AT_PREFIX):
        return None
    return instant_of(step_id.removeprefix(AT_PREFIX))


def restrict_channel_types(evidence: Evidence) -> Evidence:
    """Limit a candidate's evidence types to what its channel can vouch for."""
    allowed: frozenset[str] | None = None
    for channel in evidence.ranks:
        if channel in TEXT_CHANNEL_TYPES:
            allowed = TEXT_CHANNEL_TYPES[channel]
    if allowed is None:
        return evidence
    types = [t for t in evidence.evidence_types if t in allowed]
    return evidence.model_copy(update={"evidence_types": types})


def type_relation_row(evidence: Evidence, code_of: Mapping[str, str] | None = None) -> Evidence:
    """A neighbourhood row whose relationship states a dated fact counts as that evidence.

    An EMITTED record (service -> error code) carries `first_seen`: it is first-seen evidence
    for that code, reachable without the incident (which a subject may not be allowed to see).
    Its context names the error code id and, when known (`code_of`), the code itself, as an
    incident's error-code rows do.
    """
    if not (evidence.template or "").startswith("dependency_neighbourhood@"):
        return evidence
    if evidence.kind != "relationship" or evidence.type != "EMITTED":
        return evidence
    ends = [evidence.context.get("start"), evidence.context.get("neighbour")]
    code_id = next((e for e in ends if isinstance(e, str) and kind_of(e) == "error_codes"), None)
    context = dict(evidence.context)
    if code_id is not None:
        context["error_code"] = code_id
        code = (code_of or {}).get(code_id)
        if code is not None:
            context["code"] = code
    return evidence.model_copy(update={"evidence_types": ["error_first_seen"], "context": context})


def type_dependent_row(evidence: Evidence, step: PlanStep) -> Evidence:
    """A DEPENDS_ON record a step read into the service asked about is `dependent` evidence
    (and a FIRED_ON record an `alert_firing` step read is `alert_firing` evidence).

    The template marks every DEPENDS_ON record `dependency`; read the other way ("what
    depends on X?") the same record answers another question, and must not count as X's
    dependencies (nor they as its dependents).
    """
    if step.evidence_type == "alert_firing" and evidence.type == "FIRED_ON":
        # Read for "which alerts fired?": the firing itself is the answer (an event).
        return evidence.model_copy(update={"evidence_types": ["alert_firing"]})
    if step.evidence_type != "dependent" or evidence.type != "DEPENDS_ON":
        return evidence
    return evidence.model_copy(update={"evidence_types": ["dependent"]})


def _note_wide_ties(outcome: RetrievalOutcome, calls: Iterable[ToolCall]) -> None:
    """Keep the fulltext calls whose rows stopped above a tie too wide to order."""
    for call in calls:
        if call.result.tie_at_cut is not None:
            words = searched_words(str(call.result.params.get("query", "")))
            outcome.wide_ties[words] = call.result.tie_at_cut


def _note_alerts_read(outcome: RetrievalOutcome, candidates: Sequence[Evidence]) -> None:
    """Keep the alert records among `candidates`, those that carry a `:MissingFile` mark
    (their rule left the rule file at a later import), once each, and the runbooks read
    through each alert."""
    runbooks = [ev for ev in candidates if ev.type == "Runbook"]
    for alert_id, reached in runbooks_reached(runbooks).items():
        through = outcome.runbooks_through.setdefault(alert_id, [])
        through.extend(r for r in sorted(reached) if r not in through)
    kept = {ev.element_id for ev in outcome.removed_rules}
    read = {ev.element_id for ev in outcome.alert_rows}
    for ev in candidates:
        if ev.type == "Alert" and ev.element_id not in read:
            read.add(ev.element_id)
            outcome.alert_rows.append(ev)
        gone = ev.type == "Alert" and ev.context.get("file_missing_since") is not None
        if gone and ev.element_id not in kept:
            kept.add(ev.element_id)
            outcome.removed_rules.append(ev)


class _SearchSteps(OneStepCalls):
    """The runbook search's reads (`search_runbooks`) inside an investigation: each stage a
    round of its own recorded plan, run through the session like any step (allowlisted
    templates, recorded tool calls, replayable); its rows name a runbook, they are no
    evidence."""

    STEP_ID = f"{NAV_PREFIX}runbook-search"

    def __init__(self, loop: RetrievalLoop, known: Known, outcome: RetrievalOutcome) -> None:
        self.loop = loop
        self.known = known
        self.outcome = outcome
        self.rounds = 0

    def stage(self, steps: list[PlanStep]) -> list[list[Evidence]]:
        """Run one round of independent steps; each step's rows as candidates."""
        loop = self.loop
        plan = loop.planner.plan(loop.inp, loop.intents, self.known, steps)
        loop.session.begin_round(plan)
        self.rounds += 1
        self.outcome.plans.append(plan)
        loop.calls += len(steps)
        # Its fulltext hits are kept (its rows are no evidence), as the lookup's are, so
        # replay can tell a re-ranking from a change (`ranking_changed`).
        calls = loop.session.call_round(steps, plan=plan, raise_on_error=False, keep_hits=True)
        self.outcome.tool_calls.extend(call.record for call in calls)
        _note_wide_ties(self.outcome, calls)
        return [call.candidates for call in calls]

    def admit(self, candidates: list[Evidence]) -> tuple[list[Evidence], list[Rejection]]:
        """Not used by the search (its rows are no evidence); the session's gate decides."""
        decision = self.loop.session.admit(candidates)
        return decision.admitted, decision.rejected


def _release_when(rel: str, at: datetime, under_way: Collection[str]) -> str:
    """A release's time in a choice note: its rollout's start when it is rolling out."""
    return f"rolling out since {iso_utc(at)}" if rel in under_way else iso_utc(at)


def _taken_text(
    why: str,
    taken: Sequence[tuple[str, datetime, str]],
    under_way: Collection[str],
    whose: str,
    apart: str,
) -> str:
    """The opening of a choice note: the release taken ((service, time, release), the latest
    first), or the releases read together since none is taken alone (`apart`: why not)."""
    svc, at, rel = taken[0]
    if len(taken) == 1:
        return (
            f"{why}: {svc} is read as the one asked about, the service of {rel}, the last "
            f"release found by as_of ({_release_when(rel, at, under_way)}){whose}"
        )
    names = " and ".join(s for s, _, _ in taken)
    others = ", ".join(f"{r} of {s} ({_release_when(r, a, under_way)})" for s, a, r in taken[1:])
    return (
        f"{why}: {names} are read as the ones asked about: {rel} of {svc} is the last release "
        f"found by as_of ({_release_when(rel, at, under_way)}){whose}, and {others} within "
        f"{int(CONFOUNDER_WINDOW.total_seconds() // 60)} min before it{apart}, so neither is "
        "taken alone"
    )


def release_choice_note(
    why: str,
    taken: Sequence[tuple[str, datetime, str]],
    weighed: Sequence[tuple[str, datetime, str]],
    erring: Sequence[tuple[str, datetime, str, tuple[str, datetime]]],
    services: int,
    under_way: Collection[str] = (),
) -> str:
    """The note saying which release a correlation question naming no service was read as
    asking about (`RetrievalLoop._take_release`), why, and which releases were not taken.
    `taken`, `weighed`: (service, time, release), the latest first; `erring`: those of
    `weighed` whose service emitted an error after the release, with (error, first seen);
    `services`: how many services had a release read (only `weighed` were weighed);
    `under_way`: the releases rolling out at as_of (their time is the rollout's start)."""
    # An error is named by its code ("PAY-4097"), never its KG id, in the note's prose.
    seen = {rel: (error.removeprefix("err:"), first) for _, _, rel, (error, first) in erring}

    def when(rel: str, at: datetime) -> str:
        return _release_when(rel, at, under_way)

    svc, at, rel = taken[0]
    if erring:
        error, first = seen[rel]
        note = (
            f"{why}: {svc} is read as the one asked about, the service of {rel}, the last "
            f"release found by as_of ({when(rel, at)}) of a service that emitted an error "
            f"after it ({error} first seen {iso_utc(first)})"
        )
        also = [
            f"{r} of {s} ({when(r, a)}; {seen[r][0]} first seen {iso_utc(seen[r][1])})"
            for s, a, r in taken[1:]
        ]
        if also:
            note += (
                "; read too, since its service also emitted an error after it, so neither is "
                "taken alone: " + ", ".join(also)
            )
        reason = "no error of its service after it by as_of"
    else:
        reason = (
            "earlier, and no service with a release read emitted an error after its release by "
            "as_of"
        )
        note = _taken_text(
            why, taken, under_way, "", "; no error after either by as_of tells them apart"
        )
    chosen = {r for _, _, r in taken}
    left = [f"{r} of {s} ({when(r, a)})" for s, a, r in weighed if r not in chosen]
    if left:
        note += f"; not taken: {', '.join(left)}: {reason}"
    if services > len(weighed):
        note += (
            f"; the releases of {services - len(weighed)} more services, older, were not weighed"
        )
    return note


def incident_release_note(
    why: str,
    placed: str,
    taken: Sequence[tuple[str, datetime, str]],
    weighed: Sequence[tuple[str, datetime, str]],
    erring: Sequence[tuple[str, datetime, str, tuple[str, datetime]]] = (),
    under_way: Collection[str] = (),
    reasons: Mapping[str, str] | None = None,
) -> str:
    """The note saying which release a correlation question naming no service was read as
    asking about when an incident begun by as_of placed it (`RetrievalLoop.
    _incident_release_choice`): `placed` says whose release and why; the releases weighed
    and not taken are named, as a later release of a service off the incident is not."""

    def when(rel: str, at: datetime) -> str:
        return _release_when(rel, at, under_way)

    note = _taken_text(why, taken, under_way, f" of {placed}", "")
    chosen = {r for _, _, r in taken}
    errors = [
        f"{s} emitted {error.removeprefix('err:')} after {r} (first seen {iso_utc(first)})"
        for s, _, r, (error, first) in erring
        if r in chosen
    ]
    if errors:
        note += "; " + ", ".join(errors)
    left = [
        f"{r} of {s} ({when(r, a)}: {(reasons or {}).get(r, 'not weighed')})"
        for s, a, r in weighed
        if r not in chosen
    ]
    if left:
        note += f"; not taken: {', '.join(left)}"
    return note


def errors_unread_choice_note(
    note: str,
    weighed: Sequence[tuple[str, datetime, str]],
    erring: Sequence[tuple[str, datetime, str, tuple[str, datetime]]],
    unread: Collection[str],
) -> str:
    """`release_choice_note`'s note when the read of some weighed services' errors failed
    (a timeout on a loaded server): whether those services erred after their release is
    unknown, not absent, so the note never says "no error of its service after it" nor "no
    service ... emitted an error" of them; it says which reads failed instead."""
    failed = sorted({svc for svc, _, _ in weighed} & set(unread))
    if not failed:
        return note
    for absent, read in _ERRORS_UNREAD_WORDS:
        note = note.replace(absent, read)
    weighs = "only the errors read" if erring else "no error"
    return (
        f"{note}; unknown, not absent: whether {', '.join(failed)} emitted an error after "
        "its release: the read of its errors failed (see its tool calls: a query timed out "
        f"or Neo4j refused it), so the choice weighs {weighs}; ask again"
    )


# `release_choice_note`'s words of an absence, and what they become when an errors read failed.
_ERRORS_UNREAD_WORDS = (
    ("no error of its service after it by as_of", "no error read of its service after it"),
    (
        "earlier, and no service with a release read emitted an error after its release by as_of",
        "earlier, and no error read of a service with a release came after its release",
    ),
    ("no error after either by as_of tells them apart", "no error read tells them apart"),
)


def _words_phrase(words: Sequence[str]) -> str:
    """A pattern of `words` in a row, apart by spaces, hyphens or underscores, as whole words."""
    return r"(?<![\w-])" + r"[\s_-]+".join(map(re.escape, words)) + r"(?![\w-])"


def said_in_words(question: str, element: Element, *, within: Sequence[str] = ()) -> bool:
    """Whether the question says a record's name or one of its aliases in words of two or
    more ("payment api" for payment-api or its alias "payment api"), in any case, the words
    apart by spaces, hyphens or underscores. One word ("payments") is left to the name
    lookups: it is too common a word to be taken as a name. Words that are part of a longer
    name the question spells out (`within`: "payment api high error rate", the alert
    PaymentApiHighErrorRate) are that name's, not this record's."""
    text = question.lower()
    for longer in within:
        words = identifier_words(longer)
        if len(words) >= 2:
            text = re.sub(_words_phrase(words), " ", text)
    names = [element.name or "", *(element.props.get("aliases") or [])]
    for name in names:
        words = re.findall(r"[^\W_]+", str(name).lower())
        if len(words) < 2:
            continue
        if re.search(_words_phrase(words), text):
            return True
    return False


class RetrievalLoop:
    """One run's loop. Deterministic for a given KG slice, subject and plan input."""

    def __init__(
        self,
        *,
        session: RunSession,
        plan_input: PlanInput,
        intents: Sequence[Intent],
        planner: DeterministicPlanner | None = None,
        deadline: float | None = None,
        deadline_after_calls: int | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        if session.gate is None:
            raise ValueError("the session needs its gate before the loop runs")
        self.session = session
        self.gate = session.gate
        self.inp = plan_input
        self.intents = list(intents)
        self.planner = planner or DeterministicPlanner()
        self.deadline = deadline
        self.deadline_after_calls = deadline_after_calls
        self.calls = 0
        # The calls made when the deadline was first found passed (`_past_deadline`), and the
        # number of calls at which the clock was last read.
        self.cut_after_calls: int | None = None
        self.clock_read_at_calls: int | None = None
        self.monotonic = monotonic
        self.relevant = set(types_wanted(self.intents, plan_input.question))
        self.required = set(required_types(self.intents))
        policy = self.gate.policy
        refs = time_references(plan_input.question)
        self.focus = QuestionFocus(
            codes=list(policy.focus_error_codes),
            ids=list(policy.focus_error_ids),
            # One error anchors a correlation, a root-cause question's candidate causes and
            # "then"; a plain error list keeps every code.
            latest_when_unnamed=bool(set(self.intents) & CAUSE_INTENTS) or refs.event is not None,
            asks_affected=bool(_ASKS_AFFECTED.search(plan_input.question)),
            named_services=[plan_input.service_id] if plan_input.service_id else [],
        )
        self.text_rows: list[TemplateRow] = []
        # The current OWNS records each service's owner lookup read (ownership_history.py).
        self.owner_rows: dict[str, list[Evidence]] = {}
        # The same of each alert or runbook version whose own owners were read (`owners_of`).
        self.entity_owner_rows: dict[str, list[Evidence]] = {}
        # Alerts the question spells out in words: named, as a typed name would be.
        self.spelled_ids: set[str] = set()
        # The alerts the question names (typed, or spelled out in words), and the
        # `runbook_url` of each as its rows show it: the section of a runbook of several
        # alerts is the one its URL points at.
        self.asked_alerts = list(policy.section_names)
        self.runbook_urls: dict[str, str] = {}
        mentions = extract_mentions(plan_input.question)
        # The linking call of `--service` as written: its service is no word of the question,
        # unless the question writes it too (`QuestionFocus.worded`).
        self.given_text = (
            plan_input.service_id[:200]
            if plan_input.service_id
            and plan_input.service_id[:200] not in {t[:200] for t in mentions.texts()}
            else None
        )
        # Whether the question's own words name a record (`--service` aside).
        self.words_mention = bool(mentions.texts())
        # Whether they name error codes and nothing else ("did the release cause PAY-4097?"):
        # `_release_of_unplaced_error`.
        self.words_name_only_codes = bool(mentions.error_codes) and set(mentions.texts()) <= set(
            mentions.error_codes
        )
        self.has_mentions = self.words_mention or plan_input.service_id is not None
        self.question_words = {
            w.strip(".:-").lower() for w in re.findall(r"[\w.:@-]+", plan_input.question)
        }
        # Alerts the question types in another form than their name, as the text hits name
        # them; the question as the planner reads it once they are named (`_reread`).
        self.typed_alerts: list[str] = []
        # A team typed alone, read as asked what it owns (`_team_typed_alone`).
        self.team_reading: str | None = None
        # Alerts whose own page text (message, summary) the question pastes: named by it.
        self.pasted_alerts: list[str] = []
        self.reading = plan_input.question
        # Rounds the runbook search used: they do not count against the plan's max_rounds.
        self.search_rounds = 0
        # Anchors read that start after as_of, not followed (`_tied_at_as_of`).
        self.started_later: dict[str, datetime] = {}
        # Error sightings read that start after as_of, not followed (`_tied_at_as_of`).
        self.errors_later: dict[str, datetime] = {}
        # Release records read by a correlation question naming nothing (`_release_service`):
        # id -> (finished, else started, the service it names).
        self.unnamed_releases: dict[str, tuple[datetime, str]] = {}
        # None of them went out in the day before as_of, so the tenant's newest by as_of
        # were read (`latest_release_choice_steps`): those are weighed, whenever they were.
        self.latest_releases_read = False
        # "The incident" could mean several incidents and none was taken: the newest release
        # by as_of is then not taken for it either (it would pick one of them silently).
        self.incident_unpicked = False
        # When each of those began (its rollout's start, else its time above).
        self.release_starts: dict[str, datetime] = {}
        # The errors each service with such a release emitted by as_of, as its own read
        # (`RELEASE_ERRORS_READ`) found them: service -> (error, first seen); and whether
        # "the release" was taken (`_take_release`: once).
        self.release_errors: dict[str, list[tuple[str, datetime]]] = {}
        # The incidents begun by as_of in the lookback (`RELEASE_INCIDENTS_READ`): (start,
        # id, name, affected services), and what each affected service depends on
        # (`RELEASE_PATH_READ`): "the release" of a service the incident affected, or of one
        # on its error path, before its start is preferred (`_incident_release_choice`).
        self.release_incidents: list[tuple[datetime, str, str, tuple[str, ...]]] = []
        self.release_paths: dict[str, set[str]] = {}
        # The affected services whose path read failed: what they depend on is unknown.
        self.release_paths_unread: set[str] = set()
        # The services whose errors read failed (a timeout): whether they erred is unknown.
        self.release_errors_unread: set[str] = set()
        self.release_taken = False
        # Those rolling out at as_of (their time above is the rollout's start).
        self.releases_under_way: set[str] = set()
        # The errors whose links (dependency_neighbourhood) were read without a failure.
        self.error_links_read: set[str] = set()

    def _resolve_given_service(
        self, step: PlanStep, rows: Sequence[TemplateRow], known: Known, *, failed: bool
    ) -> None:
        """`--service` as written ("payment-api", "Payment-API") becomes the one service id
        its own linking call resolved it to, so every later lookup (the owner "then" among
        them) and the claims' focus use the id, not the text (which matches no record).

        Resolved to nothing the subject may see (`svc:payment-api` asked as globex, a typo),
        it is no focus: the later reads (the first error "then", the releases, the errors)
        are of the services the question's own words resolved to, if any, never of an id
        that reads nothing (the CLI says it did not resolve, and what it suggests)."""
        given = self.inp.service_id
        if (
            not given
            or step.template_id != "entity_resolution"
            or step.params.get("text") != given[:200]
        ):
            return
        if not rows and not failed:
            self.inp = self.inp.model_copy(update={"service_id": None})
            self.focus.named_services = [s for s in self.focus.named_services if s != given]
            if given in known.services:
                known.services.remove(given)
            return
        found = sorted(
            {
                row.element.element_id
                for row in rows
                if row.element.kind == "node"
                and kind_of(row.element.element_id, row.element.type) == "services"
            }
        )
        if len(found) != 1 or found[0] == given:
            return  # unresolved or ambiguous: the text stays, and the CLI says so
        self.inp = self.inp.model_copy(update={"service_id": found[0]})
        named = [found[0] if s == given else s for s in self.focus.named_services]
        self.focus.named_services = list(dict.fromkeys(named))

    def _past_deadline(self) -> bool:
        """Whether the run is past its deadline: a function of the number of calls made.

        The clock is read at most once per number of calls (checks between two reads see the
        same answer), and once passed the deadline stays passed; so a run the clock cut at
        the check where it had made N calls is cut at that very check by
        `deadline_after_calls=N` (its replay), not at an earlier check with N calls made."""
        if self.cut_after_calls is not None:
            return True
        if self.deadline_after_calls is not None:  # replay of a run stopped by its deadline
            past = self.calls >= self.deadline_after_calls
        elif self.deadline is None or self.calls == self.clock_read_at_calls:
            return False
        else:
            self.clock_read_at_calls = self.calls
            past = self.monotonic() >= self.deadline
        if past:
            self.cut_after_calls = self.calls
        return past

    def _cut_at_deadline(self, outcome: RetrievalOutcome) -> bool:
        """Whether the deadline has passed; if so the run stops there and says so
        (`deadline`, cut short): a read skipped for the clock is never a silent one."""
        if not self._past_deadline():
            return False
        outcome.stop_reason = StopReason.DEADLINE
        outcome.cut_short = True
        return True

    def run(self) -> RetrievalOutcome:
        """Run rounds until a stop condition holds."""
        known = Known()
        if self.inp.service_id:
            known.add("services", self.inp.service_id)
        known.alert_owner_asked = Intent.OWNERSHIP_AT_TIME in self.intents and (
            asks_unnamed_alert_owner(self.inp.question)
        )
        outcome = RetrievalOutcome(rounds=0, stop_reason=StopReason.MAX_ROUNDS, known=known)
        done: set[str] = set()
        plan = self.planner.initial_plan(self.inp, self.intents)
        max_rounds = plan.max_rounds
        round_no = 0
        while True:
            if self._cut_at_deadline(outcome):
                break
            steps = [s for s in plan.steps if step_key(s) not in done]
            if not steps:
                outcome.stop_reason = self._idle_reason()
                break
            round_no = self.session.begin_round(plan)
            outcome.rounds = round_no
            outcome.plans.append(plan)
            progressed, hit_deadline = self._round(round_no, plan, steps, known, done, outcome)
            if hit_deadline:
                outcome.stop_reason = StopReason.DEADLINE
                outcome.cut_short = True
                break
            if round_no == 1 and self._team_typed_alone(known):
                # "payments-core": a team the subject reads, no service: asked what it owns,
                # as "what does team:payments-core own?" is (its team-side answer).
                self.team_reading = f"what does {known.teams[0]} own?"
                self._reread()
            if round_no == 1 and not known.alerts:
                # No record of the alert asked about: a runbook with its section is named.
                progressed |= learn_named_runbooks(known, self._runbooks_headed_as_asked())
                progressed |= self._runbook_by_code(known, outcome)
                if outcome.cut_short:
                    break
            reading = outcome.incident_reading
            falls_back = (
                round_no == 1
                and not self.has_mentions
                # A team asked about from its side: its own records are the answer, never
                # a service its words happen to match.
                and asked_team(self.inp.question) is None
                and not known.entities()
                and not (reading is not None and reading.candidates)
                # A correlation naming nothing: "the release" is chosen among the releases
                # read by as_of (`_take_release`), never a text hit's service ("the risk
                # rules" matched risk-engine, whose release of the day before was taken).
                # A question speaking of an incident by its words ("rollback steps for the
                # payments incident") takes its text hits first: the incident found gives the
                # errors and their service, so no release is chosen blind.
                and not (
                    self._release_choice_reads(known, done)
                    and not speaks_of_incident(self.inp.question)
                )
            )
            chose_by_text = False
            # Not for a question about an incident ("the runbook for the payments incident"):
            # the incident its words find leads to the service with the errors and its runbook.
            search_first = (
                falls_back and not speaks_of_incident(self.inp.question) and self._asks_what_to_do()
            )
            # "5xx errors on frontend": a symptom no incident answers asks the runbook search
            # too, before a text hit (the incident report) is taken as what it means.
            placed = round_no == 1 and self._placed_symptom(known)
            if placed:
                asked_before = Intent.APPLICABLE_RUNBOOK in self.intents
                said = status_symptom_reading(self.reading)
                if said != self.reading:
                    # "500s on checkout" is read as "5xx errors on checkout": the same
                    # symptom, weighed (and asked of the runbook search) in the same words.
                    self.reading = said
                    question = self.inp.model_copy(update={"question": said})
                    self._answer(self.planner.intents(question))
                # The place's runbooks are read later: one of its alerts' counts only when
                # the symptom's words fit that alert (the gate weighs them).
                self.gate.policy = self.gate.policy.model_copy(
                    update={"placed_symptom": self.reading}
                )
                chose_by_text = self._runbook_by_text(known, outcome, placed=True)
                # What to do is asked now: the place's runbooks are read next, even when the
                # search chose none and nothing else was learned (`--service` gave the place).
                progressed |= chose_by_text or (
                    not asked_before and Intent.APPLICABLE_RUNBOOK in self.intents
                )
                search_first = True
                if outcome.cut_short:
                    break
            elif search_first:
                # "How do I fix db pool exhausted": the runbook the card's search chooses for
                # its words is the answer; a service sharing one word with them (payment-db)
                # is no link, and taken first it kept the search from running.
                chose_by_text = self._runbook_by_text(known, outcome)
                progressed |= chose_by_text
                if outcome.cut_short:
                    break
            if falls_back and not chose_by_text:
                # Nothing named and nothing linked: entity linking falls back to the best
                # fulltext hits that are anchors (an incident, a service, an error code); not
                # when "the incident" could mean several: words shared are no pick among them.
                progressed |= learn(
                    known, self._tied_at_as_of(self._top_text_anchors()), self.focus, self.inp.as_of
                )
            if round_no == 1 and not chose_by_text and self._symptom_of_a_service(known):
                # "hikari pool exhausted payment api fix": the search chose no runbook for
                # all its words, but the service they say is known: its runbook is the fix.
                self._answer(sorted({*self.intents, *symptom_intents()}))
            if round_no == 1 and not search_first:
                progressed |= self._runbook_by_text(known, outcome)
                if outcome.cut_short:
                    break
            if self.gate.budget_hit:
                # The question's time words placed again on what was read (the first error
                # read with the budget full is "then"), for the gate and the answer's Time
                # line; the lookups it would repeat at them are not read. Before
                # (h29-claims), they stayed as placed before the budget filled: the Time
                # line said no first error was found beside the claim of one.
                followup_steps(self.intents, known, self.gate, self.inp)
                # The competing-cause checks of the window before the first error still
                # run: a cause the budget cannot hold takes the room of one farther from the
                # error, or is left out and counted (`EvidenceGate._fit_cause`), so the
                # nearest changes are not the ones never read. Nothing else is read, and
                # nothing before the first error is known (no window to check yet).
                checks = [
                    s
                    for s in competing_cause_steps(
                        self.intents,
                        known,
                        as_of=self.inp.as_of,
                        focus=focus_services(known, self.inp.service_id),
                    )
                    if step_key(s) not in done and self.gate.policy.cause_window is not None
                ]
                # So do the reads of a required type still missing (the first error, the
                # owner, the runbook): what they find takes the room of optional evidence
                # (`EvidenceGate._room_for_required`). Before (h29-claims), the loop stopped:
                # a budget filled with documents in round one left the first error unread.
                required_missing = missing_required(self.intents, self.gate.supported_types())
                if required_missing:
                    checks = unique_steps(
                        [
                            *(
                                s
                                for s in steps_for(
                                    required_missing,
                                    known,
                                    as_of=self.inp.as_of,
                                    ownership_period=self.inp.ownership_period,
                                )
                                if step_key(s) not in done
                            ),
                            *checks,
                        ]
                    )
                if not checks or round_no - self.search_rounds >= max_rounds:
                    outcome.stop_reason = StopReason.BUDGET_EXHAUSTED
                    outcome.cut_short = True
                    break
                plan = self.planner.plan(self.inp, self.intents, known, checks)
                continue
            supported = self.gate.supported_types()
            required_missing = missing_required(self.intents, supported)
            # Competing-cause checks and lookups at the question's reference times must run
            # before any stop for sufficiency (issue 16); they follow the gap-driven steps.
            must_run = [
                s
                for s in followup_steps(self.intents, known, self.gate, self.inp)
                if step_key(s) not in done
            ]
            next_steps = unique_steps(
                [
                    *(
                        s
                        for s in steps_for(
                            self._wanted(supported),
                            known,
                            as_of=self.inp.as_of,
                            ownership_period=self.inp.ownership_period,
                        )
                        if step_key(s) not in done
                    ),
                    *must_run,
                    *self._named_reads(known, done),
                    *self._release_choice_reads(known, done),
                ]
            )
            if not required_missing and not next_steps:
                outcome.stop_reason = StopReason.EVIDENCE_SUFFICIENT
                break
            if round_no - self.search_rounds >= max_rounds:
                outcome.stop_reason = (
                    StopReason.EVIDENCE_SUFFICIENT
                    if not required_missing
                    else StopReason.MAX_ROUNDS
                )
                outcome.cut_short = bool(required_missing and next_steps)
                break
            if (not progressed and not must_run) or not next_steps:
                outcome.stop_reason = (
                    StopReason.EVIDENCE_SUFFICIENT
                    if not required_missing
                    else StopReason.NO_PROGRESS
                )
                break
            plan = self.planner.plan(self.inp, self.intents, known, next_steps)
        if outcome.stop_reason is StopReason.DEADLINE:
            pass  # cut: the ownership records are not read either
        elif self.gate.policy.ownership_period is not None:
            outcome.ownership_records = self._ownership_records(known, outcome)
        elif Intent.OWNERSHIP_AT_TIME in self.intents:
            policy = self.gate.policy
            instants = [policy.as_of, *(t for t in policy.reference_times if t <= policy.as_of)]
            services = services_to_check(self.owner_rows, instants)
            entities = services_to_check(self.entity_owner_rows, instants)
            teams = read_teams(outcome.tool_calls)
            if (services or entities or teams) and not self._cut_at_deadline(outcome):
                steps = records_steps(services, entities, teams)
                rows = self._history_stage(known, outcome)(steps)
                outcome.ownership_records = whole_records(rows, outcome.tool_calls)
        if outcome.stop_reason is not StopReason.DEADLINE and (
            asks_severity_change(self.inp.question)
            or ResponseMetric.DECLARE in response_metrics(self.inp.question)
        ):
            outcome.incident_records = self._incident_records(known, outcome)
        if (
            outcome.stop_reason is not StopReason.DEADLINE
            and {Intent.DEPENDENCIES, Intent.DEPENDENTS} & set(self.intents)
            and (pairs := dependency_record_steps(outcome.tool_calls))
            and not self._cut_at_deadline(outcome)
        ):
            rows = self._history_stage(known, outcome)(pairs)
            outcome.dependency_records = [ev for read in rows for ev in read]
        if outcome.stop_reason is not StopReason.DEADLINE:
            outcome.period_retractions = self._period_retractions(known, outcome)
        if outcome.stop_reason is StopReason.DEADLINE:
            outcome.deadline_cut_after_calls = self.cut_after_calls
        outcome.known = known
        outcome.service_id = self.inp.service_id
        outcome.intents = list(self.intents)
        outcome.reading = self.reading
        outcome.started_later = dict(sorted(self.started_later.items()))
        outcome.errors_later = dict(sorted(self.errors_later.items()))
        outcome.service_notes = self._service_notes()
        return outcome

    def _service_notes(self) -> list[str]:
        """One line when the question's words lead to other services than `--service`."""
        apart = self._worded_apart()
        if not apart:
            return []
        said = []
        for svc in apart:
            via = self.focus.worded_via.get(svc)
            if via is None:
                said.append(svc)
            else:
                how = "emitted by" if kind_of(via) == "error_codes" else "fired on"
                said.append(f"{via} ({how} {svc})")
        named = ", ".join(said)
        return [
            f"the question names {named} while --service is {self.inp.service_id}: both are "
            f"read, the question's first (an earlier command's --service? drop or change it)"
        ]

    def _as_recorded(
        self, candidates: list[Evidence], known: Known, outcome: RetrievalOutcome
    ) -> list[Evidence]:
        """Runbooks that state no validity as in force at as_of: the record recorded by then,
        read with `version_history` in a round of its own (record_time.py); it does not count
        against the plan's max_rounds, as the runbook search's rounds do not. A time the
        question names, explicit or an event, gets its own version from the lookups repeated
        at it (`_as_recorded_then`): as_of stays a reference, as for an owner."""
        return as_recorded_at(candidates, self.inp.as_of, self._history_stage(known, outcome))

    def _ownership_records(self, known: Known, outcome: RetrievalOutcome) -> list[Evidence]:
        """Every record of the OWNS edges of each service whose owners over the period were
        read, one `ownership_records` read per service (`owners_of_records` per alert or
        runbook version whose own owners were read, `owned_by_team_records` per team read
        from its side) in a recorded round of its own (not counted against max_rounds),
        whatever the number of its edges."""
        steps = records_steps(
            read_services(outcome.tool_calls),
            read_entities(outcome.tool_calls),
            read_teams(outcome.tool_calls),
        )
        if not steps or self._cut_at_deadline(outcome):
            return []
        return whole_records(self._history_stage(known, outcome)(steps), outcome.tool_calls)

    def _period_retractions(self, known: Known, outcome: RetrievalOutcome) -> list[Evidence]:
        """The retractions recorded in a change question's period (`GatePolicy.change_period`
        with `record_changes`), one `retractions_in_period` read per service whose owners the
        period's search read (planner.record_change_steps), else one of the tenant, in a
        recorded round of its own (not counted against max_rounds). Only tombstones; none
        when the question names a service of which none was read.

        A question that names nothing ("what changed between July 1 and July 15?", "since
        the incident") reads the tenant's, whatever services the run found on the way (an
        incident a text search found): what it asks is every change of the period."""
        policy = self.gate.policy
        if policy.change_period is None or not policy.record_changes:
            return []
        start, end = policy.change_period
        named = bool(self.inp.service_id) or bool(extract_mentions(self.inp.question).texts())
        services = sorted(
            {
                str(call.params["service_id"])
                for call in outcome.tool_calls
                if named
                and call.template_id == "ownership_in_period"
                and isinstance(call.params.get("to"), str)
                and datetime.fromisoformat(str(call.params["to"])) == end
            }
        )
        if (named and not services) or self._cut_at_deadline(outcome):
            # A service named but none read ("what changed on no-such-service in July?"):
            # never the tenant's retractions for it.
            return []
        steps = period_retraction_steps(start, end, services)
        rows = self._history_stage(known, outcome)(steps)
        return [ev for read in rows for ev in read if ev.status == "retracted"]

    def _incident_records(self, known: Known, outcome: RetrievalOutcome) -> list[Evidence]:
        """Every record of each incident admitted that has older ones (its version above 1),
        one `version_history` read each in a recorded round of its own (not counted against
        max_rounds): the severity each recorded, and when, compared for "when was the incident
        upgraded to SEV1?" (before, only the current record was read: "severity SEV1")."""
        ids = {
            ev.element_id for ev in self.gate.admitted if ev.type == "Incident" and ev.version > 1
        }
        if not ids or self._cut_at_deadline(outcome):
            return []
        rows = self._history_stage(known, outcome)(version_history_steps(ids, "node"))
        return [ev for read in rows for ev in read]

    def _history_stage(
        self, known: Known, outcome: RetrievalOutcome
    ) -> Callable[[list[PlanStep]], list[list[Evidence]]]:
        """A recorded round of history reads (`version_history`, record_time.py; or
        `ownership_records`), not counted against the plan's max_rounds."""

        def stage(steps: list[PlanStep]) -> list[list[Evidence]]:
            plan = self.planner.plan(self.inp, self.intents, known, steps)
            self.session.begin_round(plan)
            self.search_rounds += 1
            outcome.plans.append(plan)
            self.calls += len(steps)
            calls = self.session.call_round(steps, plan=plan, raise_on_error=False)
            outcome.tool_calls.extend(call.record for call in calls)
            _note_wide_ties(outcome, calls)
            return [call.candidates for call in calls]

        return stage

    def _as_recorded_then(
        self,
        chunks: list[tuple[datetime | None, list[Evidence]]],
        known: Known,
        outcome: RetrievalOutcome,
    ) -> list[Evidence]:
        """The round's rows in step order, those of a lookup repeated at a reference time
        ("then": the anchor event, or a time written in the question) with each undated
        runbook as in force at that time: the record recorded by it, else the earliest
        (record_time.py). Before fusing, so the version of then is not merged into the
        version of as_of the first lookup read."""
        stage = self._history_stage(known, outcome)
        out = [list(rows) for _, rows in chunks]
        for at in sorted({at for at, _ in chunks if at is not None}):
            mine = [i for i, (t, _) in enumerate(chunks) if t == at]
            recorded = iter(as_recorded_at([ev for i in mine for ev in out[i]], at, stage))
            for i in mine:
                out[i] = [next(recorded) for _ in out[i]]
        return [ev for rows in out for ev in rows]

    def _note_runbook_urls(self, rows: Sequence[TemplateRow]) -> None:
        """Keep the `runbook_url` of each alert the question names, from the rows read."""
        if not self.asked_alerts:
            return
        for row in rows:
            el = row.element
            url = el.props.get("runbook_url")
            if el.kind == "node" and el.type == "Alert" and isinstance(url, str):
                name = el.name or el.element_id.removeprefix("alert:")
                if name in self.asked_alerts:
                    self.runbook_urls.setdefault(name, url)

    def _reread(self) -> None:
        """Read the question's intents again once the text hits show that it types an
        alert's name in another form ("help with paymentapihigherrorrate"): the rules that
        read an alert by its CamelCase shape (what to do about it, why it fires) read it as
        they read the name typed as named. Before this round's candidates are admitted, so
        the gate weighs them for the intents read; later plans carry them."""
        reading = self.team_reading or as_named(self.inp.question, self.typed_alerts)
        if self.gate.policy.placed_symptom is not None:
            reading = status_symptom_reading(reading)  # as it was placed ("500s" as "5xx errors")
        intents = self.intents
        if reading != self.reading:
            self.reading = reading
            intents = self.planner.intents(self.inp.model_copy(update={"question": reading}))
        if self.pasted_alerts and intents == [Intent.ENTITY_LOOKUP]:
            # An alert's page pasted is the alert named and nothing else asked: what to do
            # about it, as for a question that is nothing but its name.
            intents = pasted_alert_intents()
        if intents == self.intents:
            return
        self._answer(intents)

    def _answer(self, intents: Sequence[Intent]) -> None:
        """Answer the question for `intents` from now on: what the next rounds want, and
        what the gate weighs candidates for (admitted evidence stays)."""
        self.intents = list(intents)
        self.relevant = set(types_wanted(self.intents, self.inp.question))
        self.required = set(required_types(self.intents))
        refs = time_references(self.reading)
        self.focus.latest_when_unnamed = (
            bool(set(self.intents) & CAUSE_INTENTS) or refs.event is not None
        )
        self.gate.retarget(types_wanted(self.intents, self.inp.question))

    def _refocus_gate(self, known: Known) -> None:
        """Hand the gate what it focuses on, as learned so far (before it admits): the error
        code ids, the sections the named alerts' `runbook_url`s point at, and the window
        before the first error whose changes a cause question lists."""
        ids = self.focus.focus_ids(self.inp.as_of)
        if ids != list(self.gate.policy.focus_error_ids):
            self.gate.policy = self.gate.policy.model_copy(update={"focus_error_ids": ids})
        urls = [self.runbook_urls[name] for name in sorted(self.runbook_urls)]
        sections = list(alert_focus(self.asked_alerts, urls).names)
        if sections != list(self.gate.policy.section_names):
            self.gate.policy = self.gate.policy.model_copy(update={"section_names": sections})
        window = self._cause_window(known)
        if window != self.gate.policy.cause_window:
            self.gate.policy = self.gate.policy.model_copy(update={"cause_window": window})

    def _cause_window(self, known: Known) -> tuple[datetime, datetime] | None:
        """The window before the first error a cause question weighs every change of (the
        releases' lookback, the wider), once the first error is known by as_of."""
        first_seen = known.first_seen
        if not set(self.intents) & CAUSE_INTENTS or first_seen is None:
            return None
        if first_seen > self.inp.as_of:
            return None
        return first_seen - DEPLOY_LOOKBACK, first_seen

    def _named_hits(self, rows: Sequence[TemplateRow]) -> list[TemplateRow]:
        """The text hits the question names: a text hit is not an identification; only a
        record whose name is a word of the question ("checkout"), or an alert whose name it
        spells out in words ("tempo polls are failing"), becomes an anchor. Notes the
        alerts spelled out (`spelled_ids`, and `asked_alerts` for their `runbook_url`)."""
        nodes = [row for row in rows if row.element.kind == "node"]
        named = [row for row in nodes if (row.element.name or "").lower() in self.question_words]
        spelled = spelled_out(self.inp.question, [row.element.name or "" for row in nodes])
        self.spelled_ids.update(nodes[i].element.element_id for i in spelled)
        # An alert typed as one word in another case ("mimiringesterunhealthy fired") is
        # asked about as if typed as named: its section, not the whole file of 100 alerts.
        for el in [nodes[i].element for i in spelled] + [row.element for row in named]:
            name = el.name or ""
            if el.type == "Alert" and name and name not in self.asked_alerts:
                self.asked_alerts.append(name)
        ids = {row.element.element_id for row in named}
        named += [nodes[i] for i in spelled if nodes[i].element.element_id not in ids]
        # A service the question says in words ("payment api", a catalogued alias) is what
        # it names, as its id would be: a subject, not a text hit.
        alert_names = [row.element.name or "" for row in nodes if row.element.type == "Alert"]
        for row in nodes:
            if row.element.type == "Service" and said_in_words(
                self.inp.question, row.element, within=alert_names
            ):
                self.spelled_ids.add(row.element.element_id)
                if row.element.element_id not in {r.element.element_id for r in named}:
                    named.append(row)
        for row in self._pasted(nodes):
            name = row.element.name or ""
            self.spelled_ids.add(row.element.element_id)
            if name not in self.asked_alerts:
                self.asked_alerts.append(name)
            if name not in self.pasted_alerts:
                self.pasted_alerts.append(name)
            if row.element.element_id not in {r.element.element_id for r in named}:
                named.append(row)
        # An alert the question types in another form (`paymentapihigherrorrate`, "payment
        # api high error rate") is the alert it names: identified (`entity`), and the
        # question is read again with its name as named (`_reread`).
        for row in named:
            name = row.element.name or ""
            if row.element.type == "Alert" and name and typed_as(self.inp.question, name):
                self.spelled_ids.add(row.element.element_id)
                if name not in self.typed_alerts:
                    self.typed_alerts.append(name)
        return named

    def _pasted(self, nodes: Sequence[TemplateRow]) -> list[TemplateRow]:
        """The alert hits whose own page text the question pastes ("Mimir cluster
        prod-eu-1/mimir has 2 unhealthy ingester(s)."), as the card reads a pasted page: of
        several, those with the longest such text (the most specific)."""
        sizes = [
            (pasted_alert_text(self.inp.question, row.element.props), row)
            for row in nodes
            if row.element.type == "Alert" and row.element.name
        ]
        longest = max((size for size, _ in sizes), default=0)
        return [row for size, row in sizes if size and size == longest]

    def _runbooks_headed_as_asked(self) -> list[TemplateRow]:
        """Text hits that are runbooks with a section headed by the alert the question types
        or spells out, when no record of that alert is visible: a runbook the question
        names (Tempo's runbook.md imported before, or without, its alert rules)."""
        return [
            row
            for row in self.text_rows
            if row.element.type == "Runbook"
            and headed_by(
                row.element.props.get("section_titles"), self.asked_alerts, self.inp.question
            )
        ]

    def _runbook_by_code(self, known: Known, outcome: RetrievalOutcome) -> bool:
        """An error id the question types that no visible ErrorCode record stands for and
        that heads a section of a runbook (`## BILL-2002` of a page of codes): that runbook is
        named, found as the card finds it (`code_headed`: a fulltext search per id, then the
        heading compared whole), not only among the question's own text hits. A question that
        is nothing but such an id ("BILL-2002") asks what to do about it (`symptom_intents`),
        as the card answers it; True when a runbook was learned."""
        recorded = {
            self.focus.code_of.get(i, i.removeprefix("err:")).casefold() for i in known.error_codes
        }
        # A hyphenated name a record of the question has (`svc:checkout-db-primary`) is no id.
        recorded |= {e.id.split(":", 1)[-1].casefold() for e in known.entities()}
        codes = [c for c in code_words(self.inp.question) if c.casefold() not in recorded]
        if not codes:
            return False
        headed = [
            row.element.element_id
            for row in self.text_rows
            if row.element.type == "Runbook"
            and headed_by(row.element.props.get("section_titles"), codes)
        ]
        if not headed and self._cut_at_deadline(outcome):
            return False  # the search not asked is a run cut short (the loop stops)
        if not headed:
            # Not among the question's hits (its other words found other pages): the card's
            # own search per id.
            search = _SearchSteps(self, known, outcome)
            found = code_headed(search, " ".join(codes))
            self.search_rounds += search.rounds
            if found is not None:
                code, headed = found
                if code not in self.asked_alerts:
                    self.asked_alerts.append(code)
        if not headed:
            return False
        if _only_codes(self.inp.question) and set(self.intents) <= _READ_FOR_A_CODE:
            # Read as an incident or entity lookup of a code no record stands for: what to do
            # about it is what it asks (an incident its words found is kept).
            kept = [Intent.INCIDENT_LOOKUP] if known.incidents else []
            self._answer(sorted({*symptom_intents(), *kept}))
        learned = False
        for runbook_id in headed:
            learned |= known.add("runbooks", runbook_id)
        return learned

    def _as_named(self, ev: Evidence) -> Evidence:
        """A hit whose name the question spells out identifies what it names (`entity`)."""
        if ev.element_id not in self.spelled_ids or "entity" in ev.evidence_types:
            return ev
        return ev.model_copy(update={"evidence_types": sorted({*ev.evidence_types, "entity"})})

    def _top_text_anchors(self, limit: int = 3) -> list[TemplateRow]:
        """The best text hits that are anchors, for a question that names nothing. Not
        alerts: an alert the question is about is one it names or spells out; one that
        shares "failing" and "index" with it would lend its runbook to another's question."""
        anchors = [
            row
            for row in self.text_rows
            if row.element.kind == "node"
            and kind_of(row.element.element_id, row.element.type) not in ("other", "alerts")
        ]
        anchors.sort(key=lambda row: (-(row.score or 0.0), row.element.element_id))
        if not anchors:
            return []
        if any(
            kind_of(r.element.element_id, r.element.type) == "incidents" for r in anchors[:limit]
        ):
            # "the payments incident": the incident leads to its services; a service whose
            # name shares a word with it (payment-db) is no link.
            anchors = [
                r for r in anchors if kind_of(r.element.element_id, r.element.type) != "services"
            ]
        # Only hits close to the best one: a weak match on a common word is no link.
        best = anchors[0].score or 0.0
        return [row for row in anchors[:limit] if (row.score or 0.0) >= best / 2]

    def _team_typed_alone(self, known: Known) -> bool:
        """Whether the question is a name typed alone that linked a team and no service."""
        alone = name_alone_team_words(self.reading, self.intents)
        return alone is not None and bool(known.teams) and not known.services

    def _asks_what_to_do(self) -> bool:
        """Whether the question asks for a runbook: the runbook intent, or a bare symptom."""
        return Intent.APPLICABLE_RUNBOOK in self.intents or (
            self.intents == [Intent.ENTITY_LOOKUP] and reads_as_symptom(self.reading)
        )

    def _symptom_of_a_service(self, known: Known) -> bool:
        """Whether a bare symptom (`reads_as_symptom`) says a service in words ("payment
        api"): a service learned from its words, the question read as nothing but a lookup."""
        return (
            self.intents == [Intent.ENTITY_LOOKUP]
            and reads_as_symptom(self.reading)
            and any(svc in self.spelled_ids for svc in known.services)
        )

    def _tied_at_as_of(
        self, rows: Sequence[TemplateRow], *, anchors: bool = True
    ) -> list[TemplateRow]:
        """`rows` the run may follow: what was in force by as_of (`started_by`). The run
        answers at as_of: a record or relationship that starts after it (checkout's
        AFFECTED_BY of the payments incident, from 10:03:30, asked at 09:00) links nothing,
        whatever the question, or the run followed it to the incident, its alert, runbook,
        services and errors, and claimed through them ("what caused the errors on checkout?"
        at 09:00 answered with payment-api's PAY-1002). Such rows stay candidates: the gate
        says them `rejected_temporal`. A release rolling out at as_of is under way: it is
        followed (its record says it started by then). The anchors left (`anchors`: rows
        read to learn what the question names, not a check's) are noted `started_later`;
        an error sighting left (any row) is noted `errors_later`."""
        as_of = self.inp.as_of
        for row in rows:
            if started_by(row, as_of) or (sighting := _error_sighting(row)) is None:
                continue
            code_id, _, first = sighting
            later = self.errors_later.get(code_id)
            if first > as_of and (later is None or first < later):
                self.errors_later[code_id] = first
        for row in rows if anchors else ():
            el = row.element
            if el.kind != "node" or el.valid_from is None or started_by(row, as_of):
                continue
            if kind_of(el.element_id, el.type) in _LATER_ANCHORS:
                prior = self.started_later.get(el.element_id)
                if prior is None or el.valid_from < prior:
                    self.started_later[el.element_id] = el.valid_from
        return [row for row in rows if started_by(row, as_of)]

    def _placed_symptom(self, known: Known) -> bool:
        """Whether the question is a symptom said with where it shows (`reads_as_placed_symptom`:
        "5xx on payment-api") that no incident the question names or reads answers. An
        incident reached only through the place `--service` gives (its neighbourhood: the
        question's words name nothing) is no such answer: asked in words, the same symptom at
        the same place reads the place's runbooks beside that incident, and so does this."""
        reading = (
            self._answering_incidents(known) or known.alerts or known.error_codes or known.runbooks
        )
        # A service named by its one-word name ("5xx on ledger") is not taken as the place:
        # its linked runbooks would answer by the place alone ("500s on checkout" got an
        # alert's runbook, KubePodCrashLooping), not by the symptom's words.
        return not reading and reads_as_placed_symptom(self.reading)

    def _answering_incidents(self, known: Known) -> list[str]:
        """The incidents known that answer the question: not one reached only through the
        place `--service` gives when the question's words name nothing (see
        `_placed_symptom`)."""
        if self.inp.service_id is not None and not self.words_mention:
            return []
        return known.incidents

    def _runbook_by_text(
        self, known: Known, outcome: RetrievalOutcome, *, placed: bool = False
    ) -> bool:
        """A runbook question that no service, alert, error code or runbook record answers
        ("Policy Spec Sync Controller Is Stuck, what do I do?"): the runbook the card's
        free-text search chooses for its words (`search_runbooks`, which abstains when none
        fits) is read as one the question names; True when one was chosen.

        A bare symptom ("pgbouncer saturation": `reads_as_symptom`) whose words link
        nothing is asked of the same search: when it chooses a runbook, the question is
        answered as "<symptom>, what do I do?" (`symptom_intents`); when it abstains
        ("banana"), it stays the entity lookup that found nothing."""
        symptom = self.intents == [Intent.ENTITY_LOOKUP] and reads_as_symptom(self.reading)
        # "crash-loop" typed alone, no service or team the subject reads: its words searched.
        # A link that failed is unknown, not "no such service": never searched as words then.
        failed = any(
            tc.template_id == "entity_resolution" and tc.error for tc in outcome.tool_calls
        )
        joined = (
            None if known.services or known.teams or failed else name_alone_as_words(self.reading)
        )
        symptom = symptom or joined is not None
        if Intent.APPLICABLE_RUNBOOK not in self.intents and not symptom and not placed:
            return False
        # "ledger slow queries, what do I do?": a symptom (its words without those that ask
        # for a runbook) said with a service, asked what to do about; weighed as the bare
        # symptom is, not answered by every runbook of the service.
        asked_symptom = self._asked_symptom() if not (placed or symptom) else None
        # A placed symptom's service is where it shows, not a record that answers it; so is
        # a service a bare symptom writes by its one-word name ("SSH brute forcing against
        # checkout"): the search answers the symptom's words.
        places = self._places_written(known) if (placed or symptom or asked_symptom) else []
        if asked_symptom and not search_terms(without_words(asked_symptom, places)):
            places = []  # "ledger runbook": the place alone, whose runbooks all answer
        # "Should we fail over payment-db?": the step on the action names its object, a
        # service whose own runbooks may say nothing of it (payment-db has none; the runbook
        # of payment-api, which depends on it, does): the search reads the action's words.
        action_words = None if placed else action_search_text(self.inp.question)
        if (known.services and not placed and not places and action_words is None) or known.alerts:
            return False
        if known.error_codes or known.runbooks:
            return False
        if known.incidents and (not placed or self._answering_incidents(known)):
            return False  # "the payments incident": its services' runbooks are the answer
        if self._cut_at_deadline(outcome):
            # The search not asked is a run cut short, not one that found nothing (and its
            # replay stops at the same call).
            return False
        if places and not placed:
            # Its place's runbooks are weighed as a placed symptom's: one of its alerts'
            # counts only when the symptom's words fit that alert (not KubePodCrashLooping's
            # for "SSH brute forcing against checkout").
            said = asked_symptom or self.reading
            self.gate.policy = self.gate.policy.model_copy(update={"placed_symptom": said})
        search = _SearchSteps(self, known, outcome)
        # A placed symptom is asked in the words it is read in ("500s" as "5xx errors").
        asked = (
            action_words
            or joined
            or runbook_search_text(
                status_symptom_reading(self.inp.question) if placed else self.inp.question
            )
        )
        # The words a relative time is read from ("last night", "2 hours ago") say when, not
        # what: not searched, as `investigator runbook TEXT` does not search them. Before,
        # "which runbook for db pool exhausted last night" cited none ("last" is a word of
        # another page) while "which runbook for db pool exhausted" cited payment-recovery.
        relative = time_references(asked, self.session.as_of).relative
        timeless = without_words(asked, [r.words for r in relative])
        if timeless != asked and search_terms(timeless):
            asked = timeless
        # A runbook an investigation cites answers every word of the question (see there).
        words = asked
        ranking, hits = search_runbooks(search, words, set_aside_unknown=False)
        # A name no alert has may still head a runbook's section ("## CardGatewayTimeouts"),
        # so it is searched first; only when nothing fits is it set aside as a guess and the
        # other words asked again. A guessed name alone is still searched (the search abstains).
        guessless = self._without_guessed_alerts(asked, outcome)
        if ranking.best is None and guessless and guessless != asked:
            words = guessless
            ranking, hits = search_runbooks(search, words, set_aside_unknown=False)
        # The place is no word of what to do there: a page about the symptom does not name
        # the service it shows on ("ssh brute force on svc:payment-api": the SSHBruteForce
        # page). Asked again without it only when nothing fits all the words.
        placeless = without_words(words, places)
        if ranking.best is None and places and placeless != words and search_terms(placeless):
            words = placeless
            ranking, hits = search_runbooks(search, words, set_aside_unknown=False)
        self.search_rounds += search.rounds
        outcome.rounds = self.session.round
        chosen = ranking.best
        aside = ranking.engine_said()
        if aside is not None and not (placed and chosen is None):
            # (A placed symptom's search that chose none says it in its gap, `note()`.)
            outcome.search_notes.append(aside)
        if placed:
            # What to do about it is asked as well, whatever the search finds: the answer
            # says which runbook it chose, or why none.
            self._answer(sorted({*self.intents, *symptom_intents()}))
        if chosen is None:
            if placed:
                outcome.runbook_search_note = (
                    f"the runbook search for {words!r} found none: {ranking.note()}"
                )
            return False
        tied = sorted({r.id.split("@", 1)[0] for r in ranking.alike(words)})
        if len(tied) >= 2:
            # "virt down": VirtHandlerDown and VirtControllerDown fit alike; the one ranked
            # first by id is no answer to cite. The tie is what the run says (a gap).
            outcome.runbook_tie = tied
            if symptom:
                self._answer(symptom_intents())
            return False
        best = next((hit for hit in hits if hit.element_id == chosen.id), None)
        # A page that only points at another for what to do ("For incident response see
        # ./x.md"): the card answers with that one, and so does the question.
        pointed = pointed_at(best, hits) if best else None
        chosen_id = pointed.element_id if pointed is not None else chosen.id
        best = pointed or best
        # A file of one section per alert is no one alert's runbook: words that spell out
        # none of its alerts answer with the section the card shows for them (the alert
        # whose text they match, else the heading with most of them: "ingesters are
        # unhealthy"); none ("the vault cache is failing": six alike) chooses nothing (its
        # whole text was required evidence: exit 2 at the default budget).
        if (
            best is not None
            and alert_sectioned(best)
            and alert_excerpt(best, (), self.inp.question) is None
        ):
            heading = chosen_heading(best, self._card_focus(chosen, ranking.runbook_urls, words))
            if heading is None:
                return False
            if heading not in self.asked_alerts:
                self.asked_alerts.append(heading)
        known.add("runbooks_by_text", chosen_id)
        # The page the words fit is weighed first and never cut by the per-type cap; a
        # runbook of its place not about what it is about is no answer beside it.
        self.gate.note_text_choice(chosen_id, best)
        # Those read before it (the place `--service` gave, read in the first round) are
        # weighed again now: the gate withdraws them (`_drop_unfit_place_runbooks`).
        self.session.admit([])
        if symptom:
            # Before the next round's candidates are weighed: they are judged as evidence
            # of the runbook (and its owner), not of an entity the words never named.
            self._answer(symptom_intents())
        return known.add("runbooks", chosen_id)

    def _asked_symptom(self) -> str | None:
        """The symptom a runbook question says, when its words without those that ask for
        a runbook (`runbook_search_text`: "ledger slow queries, what do I do?" -> "ledger
        slow queries") read as a bare symptom or one said with where it shows; else None."""
        said = runbook_search_text(self.reading).strip(" ,;:.!?")
        if not said or not (reads_as_symptom(said) or reads_as_placed_symptom(said)):
            return None
        return said

    def _places_written(self, known: Known) -> list[str]:
        """The known services as the question writes them, by id or by the name its id
        holds (`svc:payment-api`, `checkout`): where a symptom shows."""
        written = []
        for service in sorted(known.services):
            for form in (service, service.split(":", 1)[-1]):
                if without_words(self.inp.question, [form]) != " ".join(self.inp.question.split()):
                    written.append(form)
        return written

    def _without_guessed_alerts(self, words: str, outcome: RetrievalOutcome) -> str:
        """`words` without the alert names the question writes that name no alert the subject
        may see (its own linking call for the name returned no row): a guessed name
        ("PraefectReplicationLag") is said once, on the Name line, and set aside, so the
        runbook search answers the other words, as the card sets aside a word no runbook
        uses. Another tenant's alert reads the same as a name that exists nowhere."""
        for name in extract_mentions(self.inp.question).alerts:
            calls = [
                tc
                for tc in outcome.tool_calls
                if tc.template_id == "entity_resolution" and tc.params.get("text") == name[:200]
            ]
            if calls and all(tc.row_count == 0 and not tc.error for tc in calls):
                words = re.sub(r"(?<![\w:@/.-])" + re.escape(name) + r"(?![\w:@/-])", " ", words)
        return " ".join(words.split())

    @staticmethod
    def _card_focus(chosen: RankedRunbook, urls: Mapping[str, str], words: str) -> SectionFocus:
        """What `investigator runbook` focuses on for free text whose best fit is `chosen`
        (runbook_lookup.py): the alert whose text matched, by its `runbook_url`, else the
        words."""
        if chosen.matched_alert is None:
            return SectionFocus(text=words)
        url = urls.get(chosen.matched_alert)
        # The alert's name, not its rule's id (`@s1`): a section is headed by the name.
        named = alert_focus([alert_name_in(chosen.matched_alert)], [url] if url else [])
        return named.model_copy(update={"text": words})

    def _worded_apart(self) -> list[str]:
        """The services the question's own words lead to when `--service` is none of them
        ("Was the 10:02 release of payment-api related to PAY-4097?" asked with a
        `--service svc:checkout` left from an earlier command): empty otherwise."""
        given = self.inp.service_id
        if not given or given in self.focus.worded:
            return []
        return list(self.focus.worded)

    def _asks_unnamed_release(self) -> bool:
        """A correlation question naming nothing ("did the release cause it?", no --service):
        no service, error code, alert, incident or release to look errors up for. So is a
        change question whose period is set by "the release" ("what changed an hour before
        the release?"): its anchor is a release, and needs no errors."""
        # Named first: the question's words are read only for a question naming nothing.
        if self.inp.service_id or self.words_mention or self.focus.named_services:
            return False
        return (
            Intent.DEPLOYMENT_CORRELATION in self.intents
            or self._asks_approval()
            or self._asks_release_period()
        )

    def _asks_release_period(self) -> bool:
        """ "What changed an hour before the release?": a change question's period is set
        by the release its words name (change_period.event_change_period)."""
        return (
            asks_changes(self.intents)
            and time_references(self.inp.question, spans=True).event is AnchorEvent.RELEASE
        )

    def _asks_approval(self) -> bool:
        """ "Was the release approved?": "the release" is chosen as a correlation question's
        is (h35: before, a text hit's record was taken and its service's policy never read)."""
        return Intent.RELEASE_LOOKUP in self.intents and "approval" in unrecorded_asks(
            self.inp.question
        )

    def _note_unnamed_releases(self, rows: Sequence[TemplateRow]) -> None:
        """Keep the release records (with the service each names) a correlation question
        naming nothing read, finished by as_of or rolling out then: the candidates for "the
        release" (`_take_release`)."""
        if not self._asks_unnamed_release() and not self._asks_release_of_codes():
            return
        for row in rows:
            el = row.element
            if el.kind != "node" or el.type != "Deployment":
                continue
            props = el.props or {}
            service = props.get("service")
            began = instant_of(props.get("started_at"))
            at = instant_of(props.get("finished_at")) or began
            if at is not None and at > self.inp.as_of and began and began <= self.inp.as_of:
                # Rolling out at as_of: a candidate from its start (`_take_release`).
                self.releases_under_way.add(el.element_id)
                at = began
            if (
                isinstance(service, str)
                and service.startswith("svc:")
                and at is not None
                and at <= self.inp.as_of
            ):
                self.unnamed_releases[el.element_id] = (at, service)
                self.release_starts[el.element_id] = began if began and began <= at else at

    def _release_service(self, known: Known, outcome: RetrievalOutcome, done: set[str]) -> bool:
        """A correlation question naming no service ("did the release cause it?"): the
        service of "the release" (`_take_release`) is the one asked about, its errors read
        and correlated (e31-qa finding 2: before, no error was looked for and the answer said
        none was known). Said in a note, since the question did not name it."""
        if self._release_choice_why(known) is None or not self._asks_unnamed_release():
            return False
        return self._take_release(known, outcome, done)

    def _asks_release_of_codes(self) -> bool:
        """A correlation question naming error codes and nothing else, no --service ("did
        the release cause PAY-4097?"): `_release_of_unplaced_error`."""
        return (
            Intent.DEPLOYMENT_CORRELATION in self.intents
            and not self.inp.service_id
            and self.words_name_only_codes
            and not self.focus.named_services
        )

    def _release_of_unplaced_error(
        self, known: Known, outcome: RetrievalOutcome, done: set[str]
    ) -> bool:
        """ "Did the release cause PAY-4097?" asked before any service is known to have
        emitted the code (as_of just before its first error): the service of "the release"
        (`_take_release`) is the one asked about, as when nothing is named, so the release
        is read and stated and the error said as not seen yet (e32-qa finding P: before, no
        release was looked up and the gaps said none was recorded). Said in a note, since
        the question did not name that service."""
        if self._release_choice_why(known) is None or not self._asks_release_of_codes():
            return False
        return self._take_release(known, outcome, done)

    def _release_choice_why(self, known: Known) -> str | None:
        """Why a correlation question's "the release" is to be chosen among the releases
        read (the note's opening words), or None when the question or what is known gives
        the service (named, `--service`, an incident, an error's emitter)."""
        if self.release_taken:
            return None
        if self._asks_unnamed_release() and not known.incidents and not known.error_codes:
            # "Did the release cause the outage?": the incident its words were taken as (or
            # an error already known) gives the errors; no service is taken for them.
            return "the question names no service"
        if (
            self._asks_release_of_codes()
            and not known.services
            and not known.incidents
            and known.error_codes
            # The errors' links are read first: they may name the service.
            and set(known.error_codes) <= self.error_links_read
        ):
            return "no service is known to have emitted the error asked about by as_of"
        return None

    def _release_choice_reads(self, known: Known, done: set[str]) -> list[PlanStep]:
        """The reads still to run before "the release" is chosen (`_take_release`): every
        release of the tenant in the lookback before as_of, then, when they are of more than
        one service, the errors each of those services emitted."""
        if self._release_choice_why(known) is None:
            return []
        tenant = [s for s in release_choice_steps(self.inp.as_of) if step_key(s) not in done]
        if tenant:
            return tenant
        if not self._latest_releases():
            if self.incident_unpicked:
                return []
            # None in the day before as_of (asked after the fact): the newest by as_of.
            return [
                s for s in latest_release_choice_steps(self.inp.as_of) if step_key(s) not in done
            ]
        if self._clock_choice() is not None:
            return []  # the minute named picks the release: no errors to weigh
        services = [svc for svc, _, _ in self._latest_releases()[:RELEASE_CHOICE_SERVICES]]
        if len(services) < 2:
            return []
        weigh = [
            s
            for s in [*release_errors_steps(services), *release_incidents_steps(self.inp.as_of)]
            if step_key(s) not in done
        ]
        if weigh:
            return weigh
        return [s for s in release_path_steps(self._incident_services()) if step_key(s) not in done]

    def _note_release_incidents(self, rows: Sequence[TemplateRow]) -> None:
        """Keep the incidents a `RELEASE_INCIDENTS_READ` found begun by as_of, with the
        services each affected (`_incident_release_choice`)."""
        for row in rows:
            el = row.element
            begun = _instant(row.context.get("started_at")) or el.valid_from
            services = row.context.get("services")
            if el.kind != "node" or begun is None or begun > self.inp.as_of:
                continue
            if not isinstance(services, list) or not services:
                continue
            self.release_incidents.append(
                (
                    begun,
                    el.element_id,
                    el.name or el.title or el.element_id,
                    tuple(sorted(str(x) for x in services)),
                )
            )

    def _incident_services(self) -> list[str]:
        """The services the incidents read for "the release" affected, sorted, at most
        `RELEASE_CHOICE_SERVICES`: their error paths are read next."""
        services = sorted({svc for *_, affected in self.release_incidents for svc in affected})
        return services[:RELEASE_CHOICE_SERVICES]

    def _note_release_path(self, step: PlanStep, rows: Sequence[TemplateRow]) -> None:
        """Keep what an incident's affected service depends on, as its `RELEASE_PATH_READ`
        found it at as_of: the services on the incident's error path."""
        path = self.release_paths.setdefault(str(step.params["start_id"]), set())
        for row in rows:
            neighbour = row.context.get("neighbour")
            if (
                row.element.kind == "relationship"
                and isinstance(neighbour, str)
                and started_by(row, self.inp.as_of)
            ):
                path.add(neighbour)

    def _incident_release_choice(
        self,
    ) -> tuple[list[tuple[str, datetime, str]], str, dict[str, str], list[str]] | None:
        """ "The release" when an incident begun by as_of is placed (h34): the last release
        of a service it affected begun before the incident's start (and any other affected
        service's within `CONFOUNDER_WINDOW` before it), else the same among the services on
        its error path (what its affected services depend on); the latest incident with one
        first. (service, time, release) latest first, why, in words, why each other
        release read was not taken (by release), and the services the incident affected
        when the release is on its error path (their errors are read too); None when no
        incident read has such a release (the choice by errors, `_take_release`, stands)."""
        for begun, inc, name, affected in sorted(self.release_incidents, reverse=True):
            path = sorted(
                {dep for svc in affected for dep in self.release_paths.get(svc, ())} - set(affected)
            )
            unread_path = sorted(set(affected) & self.release_paths_unread)
            for services, how in ((affected, "it affected"), (path, "on its error path")):
                before: dict[str, tuple[datetime, str]] = {}
                for rel, (at, svc) in sorted(self.unnamed_releases.items()):
                    if (
                        svc in services
                        and self.release_starts.get(rel, at) <= begun
                        and (svc not in before or (at, rel) > before[svc])
                    ):
                        before[svc] = (at, rel)
                if not before:
                    continue
                ranked = sorted(
                    ((svc, at, rel) for svc, (at, rel) in before.items()),
                    key=lambda item: (item[1], item[2]),
                    reverse=True,
                )
                last_at = ranked[0][1]
                taken = [x for x in ranked if last_at - x[1] <= CONFOUNDER_WINDOW]
                verb = "depends" if len(affected) == 1 else "depend"
                whose = (
                    f'a service the incident "{name}" ({inc}) affected'
                    if how == "it affected"
                    else f'a service on the error path of the incident "{name}" ({inc}) (what '
                    f"{', '.join(affected)} {verb} on)"
                )
                why = f"{whose}, begun before the incident began ({iso_utc(begun)})"
                reasons: dict[str, str] = {}
                for rel, (at, svc) in self.unnamed_releases.items():
                    if self.release_starts.get(rel, at) > begun:
                        reasons[rel] = "begun after the incident began"
                    elif svc not in affected and svc not in path and unread_path:
                        # A failed path read: whether it is on the error path is unknown.
                        reasons[rel] = (
                            f"{svc} is not a service the incident affected; whether it is on "
                            f"its error path is unknown, not absent: the read of what "
                            f"{', '.join(unread_path)} depend on failed"
                        )
                    elif svc not in affected and svc not in path:
                        reasons[rel] = (
                            f"{svc} is neither a service the incident affected nor on its "
                            "error path"
                        )
                    elif svc in path and how == "it affected":
                        reasons[rel] = (
                            "on the incident's error path: a release of a service it affected "
                            "comes first"
                        )
                    else:
                        reasons[rel] = "an earlier release of the incident's services"
                also = [] if how == "it affected" else list(affected)[:MAX_FOCUS_SERVICES]
                return taken[:MAX_FOCUS_SERVICES], why, reasons, also
        return None

    def _note_release_errors(self, step: PlanStep, rows: Sequence[TemplateRow]) -> None:
        """Keep the errors a `RELEASE_ERRORS_READ` found its service emitted by as_of, each
        with its first sighting (`_errors_after`)."""
        sightings = self.release_errors.setdefault(str(step.params["start_id"]), [])
        for row in rows:
            got = _error_sighting(row)
            if got is None or not started_by(row, self.inp.as_of):
                continue
            code_id, code, first = got
            if first <= self.inp.as_of:
                sightings.append((code or code_id, first))

    def _latest_releases(self) -> list[tuple[str, datetime, str]]:
        """(service, time, release) of the last release of each service read by as_of
        (`unnamed_releases`), the latest first (ties by release id)."""
        latest: dict[str, tuple[datetime, str]] = {}
        # Once the tenant's newest by as_of were read (none in the day before it), every
        # release read is at most as new as those: the newest of each service is weighed.
        since = EARLIEST if self.latest_releases_read else shift(self.inp.as_of, -DEPLOY_LOOKBACK)
        for release, (at, service) in sorted(self.unnamed_releases.items()):
            if at < since and release not in self.releases_under_way:
                continue  # read by another step (a text hit): older than the choice weighs
            if service not in latest or (at, release) > latest[service]:
                latest[service] = (at, release)
        return sorted(
            ((svc, at, rel) for svc, (at, rel) in latest.items()),
            key=lambda item: (item[1], item[2]),
            reverse=True,
        )

    def _errors_after(self, service: str, release: str) -> tuple[str, datetime] | None:
        """The first error `service` emitted from when `release` began until as_of, as its
        `RELEASE_ERRORS_READ` found it (none read, or none in that span: None)."""
        began = self.release_starts.get(release, self.unnamed_releases[release][0])
        after = [
            (first, error)
            for error, first in self.release_errors.get(service, [])
            if began <= first <= self.inp.as_of
        ]
        if not after:
            return None
        first, error = min(after)
        return error, first

    def _clock_choice(self) -> tuple[list[tuple[str, datetime, str]], str] | None:
        """ "Did the 10:02 release follow the change policy?": the releases read of that
        minute and the note's words (`release_clock.clock_choice`); None if not so asked."""
        if not self._asks_approval():
            return None
        return clock_choice(self.inp.question, self.unnamed_releases, self.release_starts)

    def _take_release(self, known: Known, outcome: RetrievalOutcome, done: set[str]) -> bool:
        """Choose "the release" of a correlation question that names no service, once its
        reads are done (`_release_choice_reads`; True while they are still to run): the last
        release by as_of of a service that emitted errors from its release until as_of (h33:
        before, the last release tenant-wide, so another service's release 20 s after
        payment-api's, or risk-engine's of the day before found by the words "risk rules",
        became "the release"); else, no service having emitted any, the last release by
        as_of. Two such releases of different services (both erring, or, with no error, the
        other finished within `CORRELATION_WINDOW` before the last) are both read, never one
        picked silently. A note says which was taken and why, and which were not."""
        why = self._release_choice_why(known)
        if why is None:
            return False
        if self._release_choice_reads(known, done):
            return True  # read next round: the choice waits for them
        latest = self._latest_releases()
        if not latest:
            # No release by as_of to choose: the text hits that are anchors (an incident, a
            # service, an error code) are taken, as the first round's fallback takes them
            # when no choice is pending.
            self.release_taken = True
            reading = outcome.incident_reading
            if (
                known.entities()
                or asked_team(self.inp.question) is not None
                or (reading is not None and reading.candidates)
            ):
                return False
            return learn(
                known, self._tied_at_as_of(self._top_text_anchors()), self.focus, self.inp.as_of
            )
        self.release_taken = True
        weighed = latest[:RELEASE_CHOICE_SERVICES]
        erring = [
            (svc, at, rel, seen)
            for svc, at, rel in weighed
            if (seen := self._errors_after(svc, rel))
        ]
        clocked = self._clock_choice()
        placed = None if clocked is not None else self._incident_release_choice()
        also: list[str] = []
        if clocked is not None:
            # "The 10:02 release": that minute's, not an erring service's (h38).
            taken = clocked[0][:MAX_FOCUS_SERVICES]
            outcome.search_notes.append(f"{why}: {clocked[1]}")
        elif placed is not None:
            # An incident begun by as_of: a release of its own services (or its error path's)
            # before it began, not an unrelated service's later one (h34).
            taken, placed_why, reasons, also = placed
            outcome.search_notes.append(
                incident_release_note(
                    why, placed_why, taken, weighed, erring, self.releases_under_way, reasons
                )
            )
        else:
            if erring:
                taken = [(svc, at, rel) for svc, at, rel, _ in erring][:MAX_FOCUS_SERVICES]
            else:
                last_at = weighed[0][1]
                taken = [item for item in weighed if last_at - item[1] <= CONFOUNDER_WINDOW][
                    :MAX_FOCUS_SERVICES
                ]
            note = release_choice_note(
                why, taken, weighed, erring, len(latest), self.releases_under_way
            )
            outcome.search_notes.append(
                errors_unread_choice_note(note, weighed, erring, self.release_errors_unread)
            )
        if len(taken) > 1:
            outcome.releases_taken = [rel for _, _, rel in taken]
        learned = False
        for svc, _, _ in taken:
            self.focus.named_services.append(svc)
            learned |= known.add("services", svc)
        for svc in also:
            # A release on the incident's error path: the errors are its affected services'.
            self.focus.named_services.append(svc)
            learned |= known.add("services", svc)
        return learned

    def _read_worded(self, known: Known) -> bool:
        """Make the services the words lead to, apart from `--service`, anchors and the first
        focus services (`Known.worded`); True when any is new. Before (e29-qa finding 1),
        `--service` alone was the focus: the cause question named no release (payment-api's
        releases were upstream of checkout's, never the one asked about), the runbook
        question claimed `--service`'s pages and set aside the one of the error asked."""
        apart = self._worded_apart()
        changed = False
        for svc in apart:
            changed |= known.add("services", svc)
        if apart != known.worded:
            known.worded = apart
            changed = True
        return changed

    def _named_reads(self, known: Known, done: set[str]) -> list[PlanStep]:
        """Reads of what the question's words name that `--service`'s own records would
        otherwise stand in for: the owners of a service the words name (`_owners_of_named`);
        the services that emitted an error code it names, when its words name no service
        (whether `--service` is one of them); and, when the words lead elsewhere than
        `--service` (`_worded_apart`), the runbooks of those services and of the error codes
        named, read even when `--service`'s runbooks were found first."""
        given = self.inp.service_id
        if not given:
            return []
        steps = self._owners_of_named(known, done)
        codes = [c for c in known.error_codes if self.focus.names_error(c)][:MAX_FOCUS_SERVICES]
        if not self.focus.worded:
            steps += [s for s in emitter_steps(codes) if step_key(s) not in done]
        apart = self._worded_apart()
        useful = set(useful_types(self.intents))
        if apart and useful & {"runbook", "policy"}:
            steps += [
                s
                for s in steps_for(
                    ["runbook"],
                    Known(services=apart[:MAX_FOCUS_SERVICES], error_codes=codes),
                    as_of=self.inp.as_of,
                )
                if step_key(s) not in done and s.template_id == "runbooks_for"
            ]
        return unique_steps(steps)

    def _owners_of_named(self, known: Known, done: set[str]) -> list[PlanStep]:
        """The owner lookups of the services the question's own words name, when `--service`
        named another: with `--service` known from the start, its owner is read in round one
        and ownership counts as supported, so "Who owned payment-api?" asked with
        `--service svc:checkout` stopped at checkout's owner alone (both are named)."""
        given = self.inp.service_id
        if not given or "ownership" not in useful_types(self.intents):
            return []
        named = [s for s in self.focus.named_services if s != given and s in known.services]
        if not named:
            return []
        steps = steps_for(
            ["ownership"],
            Known(services=named[:MAX_FOCUS_SERVICES]),
            as_of=self.inp.as_of,
            ownership_period=self.inp.ownership_period,
        )
        return [s for s in steps if step_key(s) not in done]

    def _wanted(self, supported: Sequence[str]) -> list[str]:
        wanted = set(wanted_types(self.intents, supported))
        if "runbook" in supported and "runbook" in useful_types(self.intents):
            # Finding 3 of e29-qa: an alert's or error code's own pages that are all
            # untrusted, or all recorded after as_of, do not end the search for a runbook:
            # the service it fired on / that emitted it is read too, as the card's fallback
            # is, so the trusted runbook in force then is weighed beside them.
            runbooks = [
                ev
                for ev in self.gate.admitted
                if ev.type == "Runbook" and "runbook" in ev.evidence_types
            ]
            if (
                runbooks
                and all(ev.context.get("anchor_type") in ("alert", "error_code") for ev in runbooks)
                and own_runbooks_weak(runbooks, self.inp.as_of)
            ):
                wanted.add("runbook")
        if Intent.DEPLOYMENT_CORRELATION in self.intents:
            # The release time is checked against every source that states it (conflicts),
            # and the window is re-anchored on the first error once that is known.
            wanted.add("deployment_time")
        return sorted(wanted)

    def _idle_reason(self) -> StopReason:
        if missing_required(self.intents, self.gate.supported_types()):
            return StopReason.NO_PROGRESS
        return StopReason.EVIDENCE_SUFFICIENT

    def _round(
        self,
        round_no: int,
        plan: QueryPlan,
        steps: Sequence[PlanStep],
        known: Known,
        done: set[str],
        outcome: RetrievalOutcome,
    ) -> tuple[bool, bool]:
        """Run one round's steps; returns (progressed, hit_deadline)."""
        # Each step's rows, with the reference time of a lookup repeated at one.
        chunks: list[tuple[datetime | None, list[Evidence]]] = []
        learned = False
        hit_deadline = False
        # The clock is read before each step as if they ran one by one, so the steps run are
        # always a prefix of the plan (what a replay re-runs); the round's reads then run
        # together.
        runnable: list[PlanStep] = []
        if round_no > 1 and any(
            s.step_id
            in (RELEASE_CHOICE_READ, RELEASE_ERRORS_READ, RELEASE_INCIDENTS_READ, RELEASE_PATH_READ)
            for s in steps
        ):
            # The reads choosing "the release" do not count against the plan's max_rounds,
            # as the runbook search's do not.
            self.search_rounds += 1
        for step in steps:
            if self._past_deadline():
                hit_deadline = True
                break
            done.add(step_key(step))
            self.calls += 1
            runnable.append(step)
        reads_began = time.perf_counter()
        recorded_before = self.session.record_ms
        # A fulltext call keeps its hits (the records its rows were, in order, with their
        # scores): rows kept as rejections keep no rank, and replay re-derives the run from
        # the recorded ranking when later records moved today's (docs/context-graph.md).
        calls = self.session.call_round(runnable, plan=plan, raise_on_error=False, keep_hits=True)
        outcome.executor_ms += (time.perf_counter() - reads_began) * 1000.0 - (
            self.session.record_ms - recorded_before
        )
        _note_wide_ties(outcome, calls)
        for step, call in zip(runnable, calls, strict=True):
            result = call.result
            outcome.tool_calls.append(call.record)
            # A text hit that another document's record supersedes (a runbook file renamed or
            # moved, fulltext_search 4): no current record under its id, so neither an anchor
            # nor a candidate, as the runbook search drops it.
            read = [ev for ev in call.candidates if not ev.context.get("renamed_to")]
            read_rows = [row for row in result.rows if not row.context.get("renamed_to")]
            _note_alerts_read(outcome, read)
            if result.template_id == "ownership_over_time" and not result.truncated:
                service = str(step.params["service_id"])
                self.owner_rows.setdefault(service, []).extend(read)
                # "Before the ownership change": where its owner changed (planner).
                note_owner_changes(known, service, read)
            elif result.template_id == ENTITY_OWNERS_TEMPLATE and not result.truncated:
                entity = str(step.params["entity_id"])
                self.entity_owner_rows.setdefault(entity, []).extend(read)
            elif result.template_id == ENTITY_OWNERS_TEMPLATE:
                # Read oldest first and cut: its latest start read is where the history stops.
                starts = [ev.valid_from for ev in read if ev.valid_from is not None]
                outcome.owners_cut_at[str(step.params["entity_id"])] = (
                    max(starts) if starts else None
                )
            self._resolve_given_service(step, read_rows, known, failed=bool(call.record.error))
            self._note_unnamed_releases(read_rows)
            if step.step_id == RELEASE_CHOICE_READ:
                if result.template_id == LATEST_TENANT_RELEASES_TEMPLATE:
                    self.latest_releases_read = True
                continue  # candidates for "the release" (`_take_release`), never evidence
            if step.step_id == RELEASE_ERRORS_READ:
                self._note_release_errors(step, read_rows)
                if call.record.error:
                    self.release_errors_unread.add(str(step.params["start_id"]))
                continue
            if step.step_id == RELEASE_INCIDENTS_READ:
                self._note_release_incidents(read_rows)
                continue
            if step.step_id == RELEASE_PATH_READ:
                self._note_release_path(step, read_rows)
                if call.record.error:
                    self.release_paths_unread.add(str(step.params["start_id"]))
                continue
            if step.step_id == THE_INCIDENT_LOOKUP:
                # "the incident": the one incident it can mean is an anchor; several are
                # named in the report, none taken (never a silent pick).
                words = (
                    the_incident_words(self.inp.question)
                    or action_incident_words(self.inp.question)
                    or unnamed_errors_words(self.inp.question)
                    or action_database_incident_words(self.inp.question)
                    or metric_incident_words(self.inp.question)
                    or action_then_incident_words(self.inp.question)
                    or "the incident"
                )
                reading = (
                    IncidentReading(words=words, why="unread")
                    if call.record.error
                    else read_the_incident(
                        words,
                        self._tied_at_as_of(read_rows, anchors=False),
                        truncated=result.truncated,
                    )
                )
                outcome.incident_reading = reading
                self.incident_unpicked = reading.taken is None and bool(reading.candidates)
                if reading.taken is not None:
                    learned |= known.add("incidents", reading.taken)
                continue
            if (
                result.template_id == "runbooks_for"
                and step.options.get("anchor") == "runbook"
                and Intent.OWNERSHIP_AT_TIME in self.intents
                and call.record.error is None
            ):
                learned |= learn_runbook_in_force(
                    known, str(step.params["anchor_id"]), read_rows, self.inp.as_of
                )
            if step.step_id == TEAM_LINK:
                # The team asked about from its side: its own records only (a name matching
                # several teams alike names each; none, when the subject may read none).
                for row in read_rows:
                    if row.element.kind == "node" and row.element.type == "Team":
                        learned |= known.add("teams", row.element.element_id)
                continue
            if step.step_id == RUNBOOK_SERVICES:
                # Where the chosen runbook's owner is read: never an anchor, nor evidence.
                learned |= note_runbook_services(known, read_rows)
                continue
            if step.step_id == EMITTED_READ and call.record.error is None:
                known.add("errors_read", str(step.params["start_id"]))
            if (
                result.template_id == "dependency_neighbourhood"
                and call.record.error is None
                and str(step.params.get("start_id", "")).startswith("err:")
            ):
                # The error's links were read: none to a service is a finding by as_of.
                self.error_links_read.add(str(step.params["start_id"]))
            if is_check(step):
                # A competing-cause check: its rows are evidence, never new anchors.
                focus = focus_services(known, self.inp.service_id)
                learned |= note_check_rows(
                    known, self._tied_at_as_of(read_rows, anchors=False), focus
                )
                if (
                    step.step_id == NAMED_RELEASE_LOOKUP
                    and (Intent.DEPLOYMENT_CORRELATION in self.intents or self._asks_approval())
                    and not self.focus.named_services
                ):
                    # "Did release X break payments?" naming no service the KG resolves: the
                    # release's service is the one asked about (its errors are read; asked
                    # whether it was approved, its policy); not for "when did release X
                    # finish?", which asks for that release alone.
                    for svc in named_release_services(known, self.inp.question):
                        learned |= known.add("services", svc)
                        self.focus.named_services.append(svc)
                if step.step_id == FIRST_RELEASE_CHECK and call.record.error is None:
                    # Its earliest releases are read: "the first release" may be placed.
                    known.add("release_histories", str(step.params["service_id"]))
            elif result.template_id not in TEXT_CHANNEL_TYPES:
                learned |= learn(
                    known,
                    self._tied_at_as_of(read_rows),
                    self.focus,
                    self.inp.as_of,
                    worded=not (
                        result.template_id == "entity_resolution"
                        and self.given_text is not None
                        and step.params.get("text") == self.given_text
                    ),
                )
                if result.template_id == "entity_resolution":
                    learned |= learn_named_runbooks(known, read_rows)
            else:
                named = self._named_hits(read_rows)
                learned |= learn(known, self._tied_at_as_of(named), self.focus, self.inp.as_of)
                # A runbook named after an alert the question spells out (not one whose
                # one-word name, "vault", is merely a word of it).
                spelled = [row for row in named if row.element.element_id in self.spelled_ids]
                learned |= learn_named_runbooks(known, spelled)
            # After the text hits: an alert spelled out is asked about as a typed one is.
            self._note_runbook_urls(read_rows)
            if is_navigation(step) and "entity" not in self.required:
                continue  # navigation only: these rows named anchors, not evidence
            if result.template_id in TEXT_CHANNEL_TYPES:
                self.text_rows.extend(read_rows)
            rows = [
                self._as_named(
                    type_relation_row(
                        restrict_channel_types(type_dependent_row(ev, step)), self.focus.code_of
                    )
                )
                for ev in read
            ]
            chunks.append((_reference_time(step), rows))
        learned |= self._read_worded(known)
        learned |= self._release_service(known, outcome, done)
        learned |= self._release_of_unplaced_error(known, outcome, done)
        started = time.perf_counter()
        recorded_before = self.session.record_ms
        self._reread()
        self._refocus_gate(known)
        candidates = self._as_recorded_then(chunks, known, outcome)
        self.gate.note_place_runbooks(candidates)
        fused = self._as_recorded(fuse(candidates), known, outcome)
        outcome.candidates += len(fused)
        decision = self.session.admit(fused)
        # The round's lineage is written here when it is due (counted as recording).
        self.session.flush()
        elapsed = (time.perf_counter() - started) * 1000.0
        outcome.gate_ms += elapsed - (self.session.record_ms - recorded_before)
        return (bool(decision.admitted) or learned), hit_deadline


# At most this many services walked from are paired (n * (n - 1) reads of one edge key each).
DEPENDENCY_PAIRS_MAX_SERVICES = 3


def dependency_record_steps(calls: Sequence[ToolCallRecord]) -> list[PlanStep]:
    """`version_history` of the DEPENDS_ON edge key (`DEPENDS_ON|a|b`, the key an edge
    recorded without one gets) between each ordered pair of the services a dependency
    question walked from ("does payment-api depend on legacy-fraud?" walks from both): a
    record of it retracted since is what the answer says of the pair, not only the current
    edges. None for one service walked, or more than `DEPENDENCY_PAIRS_MAX_SERVICES`."""
    starts = sorted(
        {
            str(call.params["start_id"])
            for call in calls
            if call.template_id == "dependency_neighbourhood"
            and call.options.get("rel_type", "DEPENDS_ON") == "DEPENDS_ON"
            and str(call.params.get("start_id", "")).startswith("svc:")
        }
    )
    if not 2 <= len(starts) <= DEPENDENCY_PAIRS_MAX_SERVICES:
        return []
    return [
        PlanStep.model_validate(
            {
                "step_id": "check:dependency-records",
                "template_id": "version_history",
                "params": {"element_id": f"DEPENDS_ON|{a}|{b}"},
                "options": {"kind": "relationship"},
                "evidence_type": "entity",
            }
        )
        for a in starts
        for b in starts
        if a != b
    ]
