"""Plan the templates of the last runs again on a just-started server (issue 12).

Neo4j keeps a plan per query text and per size bucket of each string and list parameter,
and a just-started server plans our templates slowly: the first question after `db start`
took 42-90 s on the project machine, where the same question takes 2-3 s a minute later.
Asking another question first did not help; executing the steps the last runs made did.
Each step is run at its template's newest version, the one the next question runs (a run
recorded before a new version, e.g. `deployments_in_window_tenant` 6, named the old one).

So `warm_plans` reads the tool calls of the most recent runs in the Context Graph and runs
each distinct step once more, through the executor (its read-only proof included), for a
sentinel subject: a tenant name of the same length that holds no record, labels of the same
lengths that no element carries. The parameters have the sizes a real question brings, so
the plans are the ones the next question reuses; and the tenant filter inside every template
means the reads find nothing: no KG record leaves Neo4j.

A did-you-mean (`runbook --alert VirtApiDwn`, a name that resolves to nothing) runs templates
no ordinary lookup does (fulltext and fuzzy reads for Alert and Runbook names): rarely among
the last runs, they were planned on first use, 16-18 s on a loaded machine where the lookup
beside it took 2-7 s. `suggestion_steps` adds them for each subject shape of the last runs.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

import neo4j
from pydantic import BaseModel, ValidationError

from cypher_templates.executor import TemplateExecutor
from cypher_templates.plan import PlanStep
from cypher_templates.registry import TemplateRefused
from cypher_templates.subject import Subject, SubjectRef
from graph_schema.alert_names import identifier_words
from graph_schema.writer import tenants_with_records
from investigator.context_graph.models import ToolCallRecord
from investigator.entity_suggestions import suggestion_queries
from investigator.errors import InvestigatorError

DEFAULT_RUNS = 20
DEFAULT_DEADLINE_S = 300.0

# The last finished runs' tool calls, newest run first (the started_at index orders them).
_RECENT_CALLS = (
    "MATCH (r:CtxRun) WHERE r.started_at IS NOT NULL AND r.status IN ['complete', 'partial'] "
    "WITH r ORDER BY r.started_at DESC LIMIT $runs "
    "MATCH (c:CtxEvent {run_id: r.run_id}) WHERE c.kind = 'tool_call' AND c.error IS NULL "
    "RETURN r.run_id AS run_id, r.tenant AS tenant, r.subject_id AS subject_id, "
    "r.purpose AS purpose, c.payload AS payload ORDER BY r.started_at DESC, c.seq"
)
_LETTERS = "qwzxjkvy"
# The labels a name typed to a lookup is suggested from (`runbook --alert/--service/
# --error-code`, the runbooks named after alerts; `investigate --service`), and names typed
# with a slip (their words make fuzzy terms, as a real slip's do). Neo4j plans again per size
# bucket of a string (about: under 10 characters, under 100), so names of several sizes
# (measured: a 10-character name planned anew after an 11-character one).
SUGGESTION_LABELS = ("Alert", "Runbook", "Service", "ErrorCode")
_SLIPPED_NAMES = ("EtcdDwn", "VirtApiDwn", "KubePodCrashLopingAlert")


class WarmStep(BaseModel):
    """One distinct step of a recent run, with the shape of the subject that made it."""

    step: PlanStep
    tenant_length: int
    labels: tuple[str, ...]
    purpose: str


class WarmReport(BaseModel):
    """What `warm_plans` did."""

    steps: int
    executed: int
    seconds: float
    stopped_at_deadline: bool = False


def recent_steps(
    executor: TemplateExecutor, *, runs: int = DEFAULT_RUNS, ctx_database: str | None = None
) -> list[WarmStep]:
    """The distinct steps of the last `runs` finished runs (newest first), each with the
    shape of its subject: its tenant's length, its current labels and the run's purpose.
    The runs are read from `ctx_database` (the Context Graph's), the labels from the KG."""
    records, _, _ = executor.driver.execute_query(
        _RECENT_CALLS, runs=runs, database_=ctx_database, routing_=neo4j.RoutingControl.READ
    )
    labels_of: dict[tuple[str, str], tuple[str, ...]] = {}
    seen: set[str] = set()
    steps: list[WarmStep] = []
    for record in records:
        tenant, subject_id = record["tenant"], record["subject_id"]
        if not tenant or not subject_id or not record["purpose"] or not record["payload"]:
            continue
        try:
            call = ToolCallRecord.model_validate_json(record["payload"])
            # At the version a new question runs, the newest: a call recorded before a
            # template's new version (deployments_in_window_tenant 6, whose first planning
            # takes seconds) would plan the old text, and the next question the new one cold.
            newest = executor.registry.get(call.template_id).version
            step = PlanStep(
                template_id=call.template_id,
                template_version=newest,
                evidence_type=call.evidence_type,
                params=call.params,
                options=call.options,
                limit=call.limit,
            )
        except (ValidationError, TemplateRefused):
            continue  # a call recorded by another version of this tool: not worth planning
        key = (str(tenant), str(subject_id))
        if key not in labels_of:
            principals = executor.read_principals(SubjectRef(tenant=key[0], id=key[1]))
            labels_of[key] = principals[0].labels if principals else ()
        shape = json.dumps(
            [step.model_dump(mode="json"), len(key[0]), labels_of[key], record["purpose"]],
            sort_keys=True,
        )
        if shape not in seen:
            seen.add(shape)
            steps.append(
                WarmStep(
                    step=step,
                    tenant_length=len(key[0]),
                    labels=labels_of[key],
                    purpose=str(record["purpose"]),
                )
            )
    return steps


def _shape(step: PlanStep, tenant_length: int, labels: Sequence[str], purpose: str) -> str:
    return json.dumps(
        [step.model_dump(mode="json"), tenant_length, list(labels), purpose], sort_keys=True
    )


def _unresolved_name_steps(name: str) -> list[PlanStep]:
    """What a lookup of a name that resolves to nothing reads, in the order it does: the name
    among alerts, services and error codes; as a runbook's name (also in its words joined as
    files name it) and a section's heading; then the suggestions (docs/runbooks.md)."""
    words = identifier_words(name)
    steps = [
        PlanStep(
            template_id="entity_resolution",
            params={"text": text},
            options={"label": label},
            evidence_type="entity",
            limit=5,
        )
        for label, texts in (
            *((label, [name]) for label in SUGGESTION_LABELS if label != "Runbook"),
            ("Runbook", list(dict.fromkeys([name, "-".join(words), "_".join(words)]))),
        )
        for text in texts
    ]
    steps.append(
        PlanStep(
            template_id="fulltext_search",
            params={"query": name},
            options={"label": "Runbook"},
            evidence_type="runbook",
            limit=10,
        )
    )
    for label in SUGGESTION_LABELS:
        steps += [q.step() for q in suggestion_queries(name, label)]
    return steps


def suggestion_steps(steps: Sequence[WarmStep]) -> list[WarmStep]:
    """The steps of a did-you-mean (`_unresolved_name_steps` of names of several sizes) for
    each subject shape of `steps`, those not among `steps` already."""
    seen = {_shape(w.step, w.tenant_length, w.labels, w.purpose) for w in steps}
    added: list[WarmStep] = []
    shapes = dict.fromkeys((w.tenant_length, w.labels, w.purpose) for w in steps)
    for (tenant_length, labels, purpose), name in itertools.product(shapes, _SLIPPED_NAMES):
        for step in _unresolved_name_steps(name):
            shape = _shape(step, tenant_length, labels, purpose)
            if shape not in seen:
                seen.add(shape)
                added.append(
                    WarmStep(step=step, tenant_length=tenant_length, labels=labels, purpose=purpose)
                )
    return added


def sentinel_tenant(driver: neo4j.Driver, length: int, database: str | None = None) -> str:
    """A tenant name of `length` letters that holds no KG record."""
    names = dict.fromkeys(
        ("".join(letters) * length)[:length] for letters in itertools.permutations(_LETTERS, 3)
    )
    held = tenants_with_records(driver, set(names), database)
    for name in names:
        if name not in held:
            return name
    raise InvestigatorError(f"no free tenant name of length {length} to warm plans with")


def sentinel_labels(labels: Sequence[str]) -> tuple[str, ...]:
    """As many distinct labels, of the same lengths, that no element carries (labels are
    identifiers: none holds a "~")."""
    return tuple(
        (f"~{i}" + "~" * len(label))[: max(len(label), len(f"~{i}"))]
        for i, label in enumerate(labels)
    )


def warm_plans(
    executor: TemplateExecutor,
    steps: Sequence[WarmStep],
    *,
    deadline_s: float = DEFAULT_DEADLINE_S,
    monotonic: Callable[[], float] = time.monotonic,
) -> WarmReport:
    """Run each step once, one after another, for a sentinel subject of its shape (reads
    nothing); stop at the deadline."""
    began = monotonic()
    tenants: dict[int, str] = {}
    executed = 0
    for warm in steps:
        if monotonic() - began > deadline_s:
            return WarmReport(
                steps=len(steps),
                executed=executed,
                seconds=round(monotonic() - began, 3),
                stopped_at_deadline=True,
            )
        if warm.tenant_length not in tenants:
            tenants[warm.tenant_length] = sentinel_tenant(
                executor.driver, warm.tenant_length, executor.database
            )
        subject = Subject(
            id="warm-plans",
            tenant=tenants[warm.tenant_length],
            labels=sentinel_labels(warm.labels),
            purposes=(warm.purpose,),
            purpose=warm.purpose,
        )
        executor.run(warm.step, subject, datetime.now(UTC), raise_on_error=False)
        executed += 1
    return WarmReport(steps=len(steps), executed=executed, seconds=round(monotonic() - began, 3))
