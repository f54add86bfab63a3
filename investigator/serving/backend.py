"""The one adapter between the served tools and the investigator's public entry points.

Everything the MCP server (and the serving benchmark) needs from the run session, the
subject rules and the Context Graph goes through `ServingBackend`, so a change of those
APIs is re-wired here and nowhere else. Each method returns exactly the JSON document the
matching CLI command prints with `--json` (`trace --format json|prov-json`): both build it
with `investigator.json_documents`.

One backend per process keeps the driver, the template executor (its registry and the
templates already proven read-only), the recorder and the runbook lookup: a served call is
the warm path. Every object here is safe to share between the server's worker threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from functools import partial
from typing import TypeVar

import neo4j
from neo4j.exceptions import DriverError, Neo4jError, ServiceUnavailable, SessionExpired
from pydantic import BaseModel, ConfigDict, ValidationError

from cypher_templates.executor import TemplateExecutor
from cypher_templates.subject import PrincipalRecord, SubjectRef
from investigator.connection import open_driver
from investigator.context_graph.lineage import validate_run_id
from investigator.context_graph.recorder import RunRecorder, ctx_database_from_env
from investigator.errors import BadInput, InvestigatorError, Neo4jUnavailable, NotAuthorized
from investigator.json_documents import (
    TRACE_JSON_FORMATS,
    investigation_json,
    readable_replay_report,
    replay_json,
    runbook_json,
    trace_json,
)
from investigator.serving.served_words import served
from investigator.settings import ConnectionSettings
from investigator.zoned_times import zoned_time as shared_zoned_time

T = TypeVar("T")

RUNBOOK_TARGETS = ("service", "alert", "error_code", "text")
# The purposes the KG's current principals hold, all tenants: what a server's purpose may be.
_HELD_PURPOSES = (
    "MATCH (p:KG:Principal) WHERE p.status = 'active' AND p.superseded_at IS NULL "
    "WITH count(p) AS principals, collect(coalesce(p.purposes, [])) AS held "
    "RETURN principals, reduce(acc = [], one IN held | acc + one) AS purposes"
)
DEFAULT_MAX_CONCURRENT = 4


class InvestigateInput(BaseModel):
    """What a served `investigate` call may set (never the subject, Cypher or templates)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    question: str
    service: str | None = None
    as_of: str | None = None
    known_at: str | None = None
    max_rounds: int | None = None
    budget_tokens: int | None = None
    deadline_seconds: float | None = None
    idempotency_key: str | None = None


class RunbookInput(BaseModel):
    """What a served `runbook_lookup` call may set."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    target: str
    value: str
    as_of: str | None = None
    known_at: str | None = None


def zoned_time(field: str, value: str | None) -> datetime | None:
    """An ISO-8601 time with a zone, in UTC, or `now` (None: the default), by the CLI's
    rule for its time flags (`investigator.zoned_times`)."""
    if value is None:
        return None
    parsed = shared_zoned_time(field, value)
    if isinstance(parsed, str):
        raise BadInput(parsed)
    return parsed


def first_error(exc: ValidationError, names: dict[str, str] | None = None) -> str:
    """One line naming the first invalid field, in the caller's vocabulary."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ())) or "input"
    where = (names or {}).get(where, where)
    message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    return f"{where}: {message}"


def _served_refusal(exc: NotAuthorized) -> NotAuthorized:
    """A refusal in words a served caller can act on: the purpose is the server's
    (served_words.py, the one mapping of the CLI's words for served callers)."""
    text = str(exc)
    return exc if served(text) == text else NotAuthorized(served(text))


def _neo4j_down(exc: BaseException) -> Neo4jUnavailable:
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return Neo4jUnavailable(f"Neo4j is unavailable: {first}")


class HolderChanged(InvestigatorError):
    """A served principal's id now names a later holder than the one this server serves.

    Not a NotAuthorized inside a call: a refused run is recorded for the id's current
    holder, and nothing may be recorded for him; `ServingBackend._guard` says it as one.
    """

    exit_code = 3  # a refusal, as NotAuthorized's


# The holder (incarnation) the bearer token of the call in progress was issued for, when its
# entry records one (`investigator mcp token` writes it): checked instead of the first seen.
_TOKEN_HOLDER: ContextVar[int | None] = ContextVar("token_holder", default=None)


@contextmanager
def token_holder(holder: int | None) -> Iterator[None]:
    """Within it, the principal reads of this call expect holder `holder` (None: the one
    this server first served), also on the read pool's threads (they run in a copy of the
    call's context: session.py)."""
    bound = _TOKEN_HOLDER.set(holder)
    try:
        yield
    finally:
        _TOKEN_HOLDER.reset(bound)


class HolderCheckedExecutor(TemplateExecutor):
    """The backend's executor: every principal read of a call (its subject load) is checked
    against the holder (incarnation) of that id this server first served, in that same read,
    so an id retracted and written again between a check and the load cannot slip through."""

    def __init__(self, driver: neo4j.Driver, *, database: str | None) -> None:
        super().__init__(driver, database=database)
        # Each principal served -> the holder of its id this server first saw: the
        # operator's subject or token was given to that holder, not to a later one.
        self._holders: dict[str, int] = {}
        self._holders_lock = threading.Lock()

    def read_principals(
        self, subject: SubjectRef | str, known_at: datetime | None = None
    ) -> list[PrincipalRecord]:
        """The principal's current record; HolderChanged when it is a later holder of its
        id than the one served (none: left to the caller, which refuses an unknown one)."""
        records = super().read_principals(subject, known_at)
        if records:
            ref = f"{records[0].tenant}/{records[0].id}"
            now = records[0].incarnation
            issued_for = _TOKEN_HOLDER.get()
            if issued_for is not None and now != issued_for:
                raise HolderChanged(
                    f"{ref} was retracted and written again since this call's token was "
                    f"issued: a new principal of this id (incarnation {now}; the token was "
                    f"issued for incarnation {issued_for}), for whom its operator gave no "
                    "token; the operator gives the new principal a new token (investigator "
                    "mcp token)"
                )
            with self._holders_lock:
                served = self._holders.setdefault(ref, now)
            if issued_for is None and now != served:
                raise HolderChanged(
                    f"{ref} was retracted and written again since this server began serving "
                    f"it: a new principal of this id (incarnation {now}; this server serves "
                    f"incarnation {served}), for whom its operator gave no subject or token; "
                    "the operator restarts the server for the new principal (over HTTP with a "
                    "new token: investigator mcp token)"
                )
        return records


class ServingBackend:
    """Runs the CLI's commands in-process for a subject fixed by the operator."""

    def __init__(
        self,
        settings: ConnectionSettings,
        *,
        purpose: str | None = None,
        driver: neo4j.Driver | None = None,
        max_concurrent: int = DEFAULT_MAX_CONCURRENT,
    ) -> None:
        self.settings = settings
        self.purpose = purpose
        # Calls beyond this wait for a slot instead of all slowing down together until
        # template timeouts cut runs short (a run cut short does not replay as recorded).
        self._slots = threading.BoundedSemaphore(max(1, max_concurrent))
        self._owns_driver = driver is None
        # Not verified here: a server may start before its database; calls report exit-4 errors.
        self.driver = driver or open_driver(settings, verify=False)
        self.kg_database = settings.database
        self.ctx_database = ctx_database_from_env(settings.database)
        self.executor: TemplateExecutor = HolderCheckedExecutor(
            self.driver, database=self.kg_database
        )
        self.recorder = RunRecorder(self.driver, self.ctx_database)
        from investigator.runbook_lookup import RunbookLookup

        self.lookup = RunbookLookup(
            self.driver, database=self.kg_database, executor=self.executor, recorder=self.recorder
        )

    def close(self) -> None:
        """Close the driver (if this backend opened it)."""
        if self._owns_driver:
            self.driver.close()

    def warm_up(self) -> bool:
        """Import every entry point, compile the patterns a question uses (compiled on first use
        otherwise: the first call would pay for them) and reach the database once; False if it
        did not answer."""
        from investigator.lazy_pattern import compile_all

        compile_all()
        try:
            self.driver.verify_connectivity()
        except (ServiceUnavailable, SessionExpired, DriverError, Neo4jError, OSError):
            return False
        return True

    def check_purpose(self, purpose: str, named_by: str) -> None:
        """BadInput when no current principal of any tenant holds `purpose` (every call
        would be refused); not checked while the KG has no principal or does not answer."""
        try:
            records, _, _ = self.driver.execute_query(
                _HELD_PURPOSES, database_=self.kg_database, routing_=neo4j.RoutingControl.READ
            )
        except (ServiceUnavailable, SessionExpired, DriverError, Neo4jError, OSError):
            return
        if not records or not records[0]["principals"]:
            return
        held = sorted({str(p) for p in records[0]["purposes"] or []})
        if purpose not in held:
            raise BadInput(
                f"{named_by} {purpose[:60]!r} is held by no principal in the KG: every call "
                f"would be refused (purposes held: {', '.join(held) or 'none'})"
            )

    def principal_problem(self, ref: SubjectRef) -> str | None:
        """Why every call of `ref` would be refused (no current principal, or one without
        the server's purpose), None when it would not or Neo4j does not answer."""
        try:
            records = self.executor.read_principals(ref)
        except (ServiceUnavailable, SessionExpired, DriverError, Neo4jError, OSError):
            return None
        if not records:
            return "is no principal in the KG (yet): its calls are refused until it is ingested"
        if self.purpose is not None and self.purpose not in records[0].purposes:
            return f"does not hold purpose {self.purpose!r}: its calls are refused"
        return None

    # -- the tools -------------------------------------------------------------------------

    def investigate(self, subject: SubjectRef, given: InvestigateInput) -> str:
        """`investigator investigate ... --json` for `subject`."""
        from investigator.investigation import (
            DEFAULT_BUDGET_TOKENS,
            DEFAULT_DEADLINE_S,
            DEFAULT_PURPOSE,
            InvestigationRequest,
            investigate,
        )
        from investigator.name_hints import unresolved_names
        from investigator.planner import DEFAULT_MAX_ROUNDS
        from investigator.timeline import refuse_future_known_at

        known_at = zoned_time("known_at", given.known_at)
        refuse_future_known_at("known_at", known_at, datetime.now(UTC))  # as the CLI's --known-at
        try:
            request = InvestigationRequest(
                question=given.question,
                subject_id=str(subject),
                purpose=self.purpose or DEFAULT_PURPOSE,
                service_id=given.service,
                as_of=zoned_time("as_of", given.as_of),
                known_at=known_at,
                max_rounds=given.max_rounds or DEFAULT_MAX_ROUNDS,
                budget_tokens=given.budget_tokens or DEFAULT_BUDGET_TOKENS,
                idempotency_key=given.idempotency_key,
                deadline_s=(
                    DEFAULT_DEADLINE_S if given.deadline_seconds is None else given.deadline_seconds
                ),
            )
        except ValidationError as exc:
            raise BadInput(
                first_error(exc, {"service_id": "service", "deadline_s": "deadline_seconds"})
            ) from None
        result = self._guard(
            lambda: investigate(
                request, driver=self.driver, executor=self.executor, recorder=self.recorder
            )
        )
        # What the CLI says in its Service and Name lines, in the document: an agent must not
        # read "no owner found" when the name it passed matched nothing.
        unresolved = self._guard(
            lambda: unresolved_names(
                self.driver, self.kg_database, str(subject), result, self.executor
            )
        )
        # Where as_of came from, as the CLI's --json and the run's record say it.
        return investigation_json(
            result, unresolved, "given" if request.as_of is not None else "now"
        )

    def runbook(self, subject: SubjectRef, given: RunbookInput) -> str:
        """`investigator runbook ... --json` for `subject`: for target `text` without
        `as_of`, one time written in the text is the lookup's as_of, as on the CLI's card
        (`as_of_from`, `time_note` say what became of it)."""
        from investigator.runbook_lookup import (
            LookupTarget,
            RunbookQuery,
            incident_time_note,
            with_text_time,
        )

        if given.target not in RUNBOOK_TARGETS:
            raise BadInput(f"target must be one of {', '.join(RUNBOOK_TARGETS)}")
        from investigator.runbook_text_time import SERVED_AS_OF, lookup_time
        from investigator.timeline import refuse_future_known_at

        asked = zoned_time("as_of", given.as_of)
        text = given.value if given.target == "text" else None
        timed = lookup_time(text, asked, SERVED_AS_OF)
        when = asked or timed.at or datetime.now(UTC)
        known_at = zoned_time("known_at", given.known_at)
        refuse_future_known_at("known_at", known_at, datetime.now(UTC))  # as the CLI's --known-at
        try:
            query = RunbookQuery(
                target=LookupTarget(given.target),
                value=given.value,
                subject_id=str(subject),
                as_of=when,
                known_at=known_at,
                purpose=self.purpose,
                # Recorded on the run, as the CLI's lookup records it.
                as_of_from=timed.as_of_from,
                as_of_words=timed.words,
                time_note=timed.note,
            )
        except ValidationError as exc:
            raise BadInput(first_error(exc)) from None
        # "during the PAY-4097 incident" with no as_of: at its start, as on the CLI's card.
        words = query.value if text is not None else None
        timed = self._guard(
            lambda: self.lookup.incident_time(
                timed, words, str(subject), self.purpose, known_at, SERVED_AS_OF
            )
        )
        query = with_text_time(query, timed)
        answer = self._guard(lambda: self.lookup.lookup(query))
        return runbook_json(answer, timed.as_of_from, incident_time_note(answer, timed))

    def trace(self, subject: SubjectRef, run_id: str, fmt: str = "json") -> str:
        """`investigator trace RUN --format json|prov-json` for a run `subject` may read,
        checked against its chain and anchor as the CLI checks it (`verified`,
        `verify_problems`; a run that does not verify is returned marked, not refused)."""
        from investigator.context_graph.audit import filtered_lineage
        from investigator.context_graph.readable import checked_readable_run, verify_problem_lines

        if fmt not in TRACE_JSON_FORMATS:
            raise BadInput(f"format must be one of {', '.join(TRACE_JSON_FORMATS)}")
        lineage, content, report = self._readable(checked_readable_run, subject, run_id)
        shown = filtered_lineage(lineage, content)
        return trace_json(lineage, shown, fmt, verify_problem_lines(report))

    def replay(self, subject: SubjectRef, run_id: str) -> str:
        """`investigator replay RUN --json` for a run `subject` may read."""
        from investigator.context_graph.readable import readable_run
        from investigator.replay import replay_reader, replay_run

        _, content = self._readable(partial(readable_run, replaying=True), subject, run_id)
        report = self._guard(
            lambda: replay_run(
                self.driver,
                run_id,
                ctx_database=self.ctx_database,
                kg_database=self.kg_database,
                reader=replay_reader(content),
                asker=str(subject),
            )
        )
        return replay_json(readable_replay_report(report, content))

    # -- the rules around them -------------------------------------------------------------

    def _readable(self, read: Callable[..., T], subject: SubjectRef, run_id: str) -> T:
        """Issue 11, as trace and replay apply it (context_graph/readable.py): `read`
        (`readable_run`, or `checked_readable_run` for trace) of run `run_id` by `subject`:
        the reader loaded as of now, its own runs (its tenant's under `audit`), content
        re-filtered by its grants of now."""
        validate_run_id(run_id)
        return self._guard(
            lambda: read(
                self.driver,
                subject,
                self.purpose,
                run_id,
                ctx_database=self.ctx_database,
                kg_database=self.kg_database,
                executor=self.executor,
            )
        )

    def _guard(self, call: Callable[[], T]) -> T:
        """Run `call` in one of the backend's slots, driver failures as the exit-4 error."""
        try:
            with self._slots:
                return call()
        except NotAuthorized as exc:
            raise _served_refusal(exc) from None
        except HolderChanged as exc:
            raise NotAuthorized(str(exc)) from None
        except InvestigatorError:
            raise
        except (ServiceUnavailable, SessionExpired, DriverError, OSError) as exc:
            raise _neo4j_down(exc) from exc
