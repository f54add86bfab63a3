"""OpenTelemetry for runs: one `invoke_agent` span per run, one `execute_tool` span per template.

Off by default, and then free: `run_span` and `tool_span` return shared no-op handles
without importing OpenTelemetry. It turns on when the standard environment asks for traces
(`OTEL_TRACES_EXPORTER`, `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
unless `OTEL_SDK_DISABLED=true`), when `enable_telemetry()` is called (`investigator mcp
--otel`), or when a test hands in its own provider with `use_tracer_provider`.

Names follow the OpenTelemetry GenAI semantic conventions (`gen_ai.operation.name`,
`gen_ai.agent.name`, `gen_ai.conversation.id` = run id, `gen_ai.tool.name`,
`gen_ai.tool.call.id`); our own attributes sit under `investigator.`. Spans carry ids,
counts and hashes only: never a question, evidence content or a row.

The run session calls (see docs in README "Ways in"):

    with run_span("investigate", tenant=..., subject_id=..., purpose=...) as run:
        run.set_run_id(run_id)                      # as soon as the recorder gave one
        with tool_span(tool_call_id, template_id, template_version, round=n) as tool:
            result = executor.run(...)
            tool.record_result(result)              # rows, truncated, rows_hash, error
        run.gate_decision("admitted") / run.gate_decision(rejection.reason)
        run.finish(status=..., stop_reason=..., pack_hash=..., rounds=...)
"""

from __future__ import annotations

import contextvars
import os
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

AGENT_NAME = "investigator"
TRACER_NAME = "investigator"
PREFIX = "investigator."
# gen_ai.tool.type: a template reads a data store (semconv values: function, extension,
# datastore).
TOOL_TYPE = "datastore"

_ENABLING_ENV = (
    "OTEL_TRACES_EXPORTER",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
)

AttributeValue = str | bool | int | float | list[str] | list[int]


class TelemetryError(RuntimeError):
    """The environment asks for an exporter this installation cannot provide."""


class _ResultLike(Protocol):
    """What `record_result` reads from the executor's `ToolResult` (duck-typed)."""

    @property
    def row_count(self) -> int: ...
    @property
    def truncated(self) -> bool: ...
    @property
    def duration_ms(self) -> float: ...
    @property
    def error(self) -> str | None: ...


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.decided = False
        self.tracer: Any = None  # an opentelemetry Tracer when on


_state = _State()
_current_run: contextvars.ContextVar[RunSpan | None] = contextvars.ContextVar(
    "investigator_run_span", default=None
)
# The recorded run a replay re-runs: the re-run is recorded under no id of its own.
_replaying: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "investigator_replaying", default=None
)


def env_requests_traces(environ: dict[str, str] | None = None) -> bool:
    """True when the standard OTEL_* environment asks for traces to be exported."""
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporter = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter == "none":
        return False
    return any(env.get(name, "").strip() for name in _ENABLING_ENV)


def _exporter_from_env() -> Any:
    exporter = os.environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() or "otlp"
    if exporter == "console":
        import sys

        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        # stderr: stdout carries `--json` documents and the MCP stdio protocol.
        return ConsoleSpanExporter(out=sys.stderr)
    if exporter != "otlp":
        raise TelemetryError(f"OTEL_TRACES_EXPORTER={exporter!r} is not supported (otlp, console)")
    protocol = (
        os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    ).strip()
    if protocol != "http/protobuf":
        raise TelemetryError(
            f"OTLP protocol {protocol!r} is not supported here: use http/protobuf (port 4318)"
        )
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError as exc:
        raise TelemetryError(
            "OTLP export needs the otel extra: pip install 'graph-investigator[otel]'"
        ) from exc
    # Endpoint, headers, timeout and compression come from the standard OTEL_* variables.
    return OTLPSpanExporter()


def _install_provider_from_env() -> Any:
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise TelemetryError(
            "tracing needs the otel extra: pip install 'graph-investigator[otel]'"
        ) from exc
    current = trace.get_tracer_provider()
    if isinstance(current, TracerProvider):
        # The host application configured OpenTelemetry already: join it.
        return current.get_tracer(TRACER_NAME)
    # OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES still apply (Resource.create reads them).
    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", AGENT_NAME)})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(_exporter_from_env()))
    trace.set_tracer_provider(provider)
    return provider.get_tracer(TRACER_NAME)


def _tracer() -> Any:
    """The tracer when telemetry is on, else None (decided once, on first use)."""
    if _state.decided:
        return _state.tracer
    with _state.lock:
        if not _state.decided:
            _state.tracer = _install_provider_from_env() if env_requests_traces() else None
            _state.decided = True
    return _state.tracer


def enable_telemetry() -> None:
    """Turn tracing on now (the `--otel` flag): the OTEL_* environment, else OTLP on :4318."""
    with _state.lock:
        _state.tracer = _install_provider_from_env()
        _state.decided = True


def use_tracer_provider(provider: Any | None) -> None:
    """Trace into `provider` (an SDK TracerProvider; tests use an in-memory exporter).

    `None` switches telemetry off again.
    """
    with _state.lock:
        _state.tracer = provider.get_tracer(TRACER_NAME) if provider is not None else None
        _state.decided = True


def telemetry_enabled() -> bool:
    """Whether runs emit spans now."""
    return _tracer() is not None


def _set(span: Any, key: str, value: AttributeValue | None) -> None:
    if span is not None and value is not None:
        span.set_attribute(key, value)


class ToolSpan:
    """One `execute_tool` span: a template call (no-op when telemetry is off)."""

    def __init__(self, span: Any = None) -> None:
        self._span = span

    def record_result(self, result: _ResultLike, rows_hash: str | None = None) -> None:
        """Rows, truncation, duration and error of the executor's `ToolResult`."""
        if self._span is None:
            return
        # The version and hash that actually ran (a plan step may leave the version open).
        version = getattr(result, "template_version", None)
        template_hash = getattr(result, "template_hash", None)
        _set(self._span, PREFIX + "template.version", version if isinstance(version, int) else None)
        _set(
            self._span,
            PREFIX + "template.hash",
            template_hash if isinstance(template_hash, str) else None,
        )
        _set(self._span, PREFIX + "rows", int(result.row_count))
        _set(self._span, PREFIX + "truncated", bool(result.truncated))
        _set(self._span, PREFIX + "duration_ms", float(result.duration_ms))
        _set(self._span, PREFIX + "rows_hash", rows_hash)
        if result.error:
            # The executor's error is a code-like line about the query, not data.
            _set(self._span, "error.type", "template_error")
            from opentelemetry.trace import StatusCode

            self._span.set_status(StatusCode.ERROR, str(result.error)[:200])

    def set(self, name: str, value: AttributeValue | None) -> None:
        """One `investigator.<name>` attribute (an id, count or hash; never text)."""
        _set(self._span, PREFIX + name, value)


class RunSpan:
    """One `invoke_agent` span: a run (no-op when telemetry is off)."""

    def __init__(self, span: Any = None) -> None:
        self._span = span
        self._gate: Counter[str] = Counter()

    @property
    def recording(self) -> bool:
        """Whether this handle writes a real span."""
        return self._span is not None

    def set_run_id(self, run_id: str) -> None:
        """The run id: `gen_ai.conversation.id` (the Context Graph run to trace or replay)."""
        _set(self._span, "gen_ai.conversation.id", run_id)
        _set(self._span, PREFIX + "run_id", run_id)

    def gate_decision(self, decision: str, count: int = 1) -> None:
        """Count one gate decision: `admitted` or a rejection reason code."""
        if self._span is not None:
            self._gate[str(decision)] += count

    def set(self, name: str, value: AttributeValue | None) -> None:
        """One `investigator.<name>` attribute (an id, count or hash; never text)."""
        _set(self._span, PREFIX + name, value)

    def finish(
        self,
        *,
        status: str | None = None,
        stop_reason: str | None = None,
        pack_hash: str | None = None,
        rounds: int | None = None,
        reused_run: bool | None = None,
    ) -> None:
        """The run's outcome, as ids and hashes."""
        _set(self._span, PREFIX + "status", status)
        _set(self._span, PREFIX + "stop_reason", stop_reason)
        _set(self._span, PREFIX + "pack_hash", pack_hash)
        _set(self._span, PREFIX + "rounds", rounds)
        _set(self._span, PREFIX + "reused_run", reused_run)

    def _close(self) -> None:
        if self._span is None:
            return
        admitted = self._gate.get("admitted", 0)
        rejected = {k: v for k, v in self._gate.items() if k != "admitted"}
        _set(self._span, PREFIX + "gate.admitted", admitted)
        _set(self._span, PREFIX + "gate.rejected", sum(rejected.values()))
        for reason, count in sorted(rejected.items()):
            _set(self._span, PREFIX + "gate.rejected." + reason, count)


_NOOP_TOOL = ToolSpan()


def current_run_span() -> RunSpan:
    """The run span of the run in progress on this thread (a no-op handle outside one)."""
    return _current_run.get() or RunSpan()


@contextmanager
def _open_span(
    tracer: Any,
    name: str,
    attributes: dict[str, AttributeValue],
    optional: dict[str, AttributeValue | None],
    interval_ns: tuple[int, int] | None = None,
) -> Iterator[Any]:
    """A current span with `attributes` and each `investigator.<key>` of `optional` given;
    with `interval_ns` (start, end), a span of something that already happened.

    An exception leaves the span with status ERROR and `error.type` (the exception's
    class), never its message or traceback (they could quote data).
    """
    from opentelemetry.trace import SpanKind, StatusCode

    given = {PREFIX + key: value for key, value in optional.items() if value is not None}
    with tracer.start_as_current_span(
        name,
        kind=SpanKind.INTERNAL,
        attributes={**attributes, **given},
        record_exception=False,
        set_status_on_exception=False,
        start_time=interval_ns[0] if interval_ns else None,
        end_on_exit=interval_ns is None,
    ) as span:
        try:
            yield span
        except BaseException as exc:
            span.set_attribute("error.type", type(exc).__qualname__)
            span.set_status(StatusCode.ERROR, type(exc).__qualname__)
            raise
        finally:
            if interval_ns is not None:
                span.end(end_time=interval_ns[1])


@contextmanager
def replaying(run_id: str) -> Iterator[None]:
    """Runs started inside re-run the recorded run `run_id` (`investigator replay`): their
    spans name it as `gen_ai.conversation.id` and `investigator.replay_of`."""
    token = _replaying.set(run_id)
    try:
        yield
    finally:
        _replaying.reset(token)


@contextmanager
def run_span(
    command: str,
    *,
    run_id: str | None = None,
    recorded: bool = True,
    tenant: str | None = None,
    subject_id: str | None = None,
    purpose: str | None = None,
    question: str | None = None,
    transport: str | None = None,
    as_of_from: str | None = None,
) -> Iterator[RunSpan]:
    """The `invoke_agent` span around one run; template calls inside become its children.

    `question` is accepted and never recorded, not even hashed: a hash in telemetry would let
    its readers confirm a guessed question. An exception leaves the span with status ERROR
    and `error.type` (the exception's class), never its message.
    """
    del question  # never recorded (see above)
    tracer = _tracer()
    if tracer is None:
        handle = RunSpan()
        token = _current_run.set(handle)
        try:
            yield handle
        finally:
            _current_run.reset(token)
        return
    with _open_span(
        tracer,
        f"invoke_agent {AGENT_NAME}",
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": AGENT_NAME,
            PREFIX + "command": command,
        },
        # `as_of_from`: where the run's as_of came from (`given`, `text`, `now`), as recorded.
        {
            "tenant": tenant,
            "subject_id": subject_id,
            "purpose": purpose,
            "transport": transport,
            "as_of_from": as_of_from,
        },
    ) as span:
        handle = RunSpan(span)
        if not recorded:
            # Its own id names no run of the Context Graph (nothing to trace or replay):
            # a replay's re-run names the run it re-runs, any other no run.
            handle.set("recorded", False)
            replayed = _replaying.get()
            if replayed is not None:
                _set(span, "gen_ai.conversation.id", replayed)
                handle.set("replay_of", replayed)
        elif run_id is not None:
            handle.set_run_id(run_id)
        token = _current_run.set(handle)
        try:
            yield handle
        finally:
            handle._close()
            _current_run.reset(token)


@contextmanager
def tool_span(
    tool_call_id: str,
    template_id: str,
    template_version: int | None = None,
    *,
    round: int | None = None,
    evidence_type: str | None = None,
    template_hash: str | None = None,
    interval_ns: tuple[int, int] | None = None,
) -> Iterator[ToolSpan]:
    """The `execute_tool` span around one template call (a child of the run's span); with
    `interval_ns` (start, end), of a call that already ran (in a round's shared read)."""
    tracer = _tracer()
    if tracer is None:
        yield _NOOP_TOOL
        return
    with _open_span(
        tracer,
        f"execute_tool {template_id}",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": template_id,
            "gen_ai.tool.call.id": tool_call_id,
            "gen_ai.tool.type": TOOL_TYPE,
            "gen_ai.agent.name": AGENT_NAME,
            PREFIX + "template.id": template_id,
        },
        {
            "template.version": template_version,
            "template.hash": template_hash,
            "round": round,
            "evidence_type": evidence_type,
        },
        interval_ns,
    ) as span:
        yield ToolSpan(span)


__all__ = [
    "AGENT_NAME",
    "RunSpan",
    "TelemetryError",
    "ToolSpan",
    "current_run_span",
    "enable_telemetry",
    "env_requests_traces",
    "run_span",
    "telemetry_enabled",
    "tool_span",
    "use_tracer_provider",
]
