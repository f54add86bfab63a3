"""The typed vocabulary of the Context Graph: node kinds, labels, relationships and the
pydantic models that cross its boundary (what the investigation hands the recorder, and
what the read side hands replay, trace and `runs`).

Relationship names follow W3C PROV in Neo4j style; docs/context-graph.md has the mapping.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    computed_field,
    field_validator,
    model_validator,
)

# Every Context Graph node carries this label plus the label of its kind, never `:KG`.
EVENT_LABEL = "CtxEvent"

# The `prev_hash` of the first node of a run.
GENESIS_HASH = "sha256:" + "0" * 64


# The tool-call property naming the records a fulltext call's rows were (`tool_call_hits`):
# kept for a runbook search, whose rows become no evidence or rejection, so replay can show
# that a re-ranked call still read the same records (`ranking_changed`). One string per row,
# `element_id version score` (one atomic value each, so an auditor's filter masks it whole).
TOOL_CALL_HITS = "hits"


def tool_call_hits(rows: Any) -> list[str] | None:
    """The `hits` entries of a fulltext call's rows (each row's element id, version and
    fulltext score, best first), or None when the rows are not ranked by a score or there
    are none (`row_count` 0 says all of it)."""
    entries = []
    for row in rows:
        element, score = getattr(row, "element", None), getattr(row, "score", None)
        if element is None or not isinstance(score, int | float):
            return None
        entries.append(f"{element.element_id} {int(element.version)} {float(score):.6g}")
    return entries or None


def parse_hit(entry: Any) -> tuple[str, int, float] | None:
    """(element id, version, score) of one `hits` entry; None when it is not one."""
    parts = entry.rsplit(" ", 2) if isinstance(entry, str) else []
    if len(parts) != 3:
        return None
    try:
        return parts[0], int(parts[1]), float(parts[2])
    except ValueError:
        return None


class CtxKind(StrEnum):
    """What a recorded node is; each kind has exactly one label."""

    RUN = "run"
    AGENT = "agent"
    GOAL = "goal"
    PLAN = "plan"
    TOOL_CALL = "tool_call"
    EVIDENCE = "evidence"
    REJECTION = "rejection"
    PACK = "pack"
    CLAIM = "claim"
    OUTCOME = "outcome"

    @property
    def label(self) -> str:
        """The Neo4j label of this kind (`CtxRun`, `CtxToolCall`, ...)."""
        return KIND_LABELS[self]


KIND_LABELS: dict[CtxKind, str] = {
    CtxKind.RUN: "CtxRun",
    CtxKind.AGENT: "CtxAgent",
    CtxKind.GOAL: "CtxGoal",
    CtxKind.PLAN: "CtxPlan",
    CtxKind.TOOL_CALL: "CtxToolCall",
    CtxKind.EVIDENCE: "CtxEvidence",
    CtxKind.REJECTION: "CtxRejection",
    CtxKind.PACK: "CtxPack",
    CtxKind.CLAIM: "CtxClaim",
    CtxKind.OUTCOME: "CtxOutcome",
}

# The per-tenant ledger of finished runs' heads (context_graph/ledger.py): not run events.
LEDGER_LABELS: frozenset[str] = frozenset({"CtxAnchor", "CtxLedgerHead"})
ALL_CTX_LABELS: frozenset[str] = frozenset({EVENT_LABEL, *KIND_LABELS.values(), *LEDGER_LABELS})


class ProvRelation(StrEnum):
    """Relationship types, named after the W3C PROV-O properties they stand for."""

    USED = "USED"  # prov:used (Activity -> Entity)
    WAS_GENERATED_BY = "WAS_GENERATED_BY"  # prov:wasGeneratedBy (Entity -> Activity)
    WAS_DERIVED_FROM = "WAS_DERIVED_FROM"  # prov:wasDerivedFrom (Entity -> Entity)
    WAS_INFORMED_BY = "WAS_INFORMED_BY"  # prov:wasInformedBy (Activity -> Activity)
    WAS_ASSOCIATED_WITH = "WAS_ASSOCIATED_WITH"  # prov:wasAssociatedWith (Activity -> Agent)


class RunStatus(StrEnum):
    """A run is `incomplete` until `finish_run`; a crash leaves it so."""

    INCOMPLETE = "incomplete"
    COMPLETE = "complete"
    PARTIAL = "partial"
    REFUSED = "refused"
    FAILED = "failed"


# The stop reason of a run Ctrl-C (SIGINT) ended: status `failed`, no answer; its
# idempotency key runs again (RunStart.answerless).
INTERRUPTED = "interrupted"

FINISHED_STATUSES = frozenset(
    {RunStatus.COMPLETE, RunStatus.PARTIAL, RunStatus.REFUSED, RunStatus.FAILED}
)


class RunRequest(BaseModel):
    """What was asked: the request an idempotency key is bound to.

    `known_at` may be left out; the recorder then fixes it to the run's start time and
    records it, so replay sees the Knowledge Graph as the run saw it. `as_of_given` False:
    `as_of` is the default (now), which the request fingerprint records as "default".
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: str = Field(default="investigate", min_length=1, max_length=40)
    question: str = Field(min_length=1, max_length=4000)
    subject_id: str = Field(min_length=1, max_length=200)
    purpose: str = Field(min_length=1, max_length=100)
    as_of: datetime
    # False when the asker left `as_of` out (it was taken as now): a retry of the same
    # command under the same idempotency key is then the same request. None: not said (a
    # command without keys); hashed as a given `as_of`, as runs recorded before it were.
    as_of_given: bool | None = None
    known_at: datetime | None = None
    # Where `as_of` came from, recorded on the run for an auditor (run_times.py): `given`
    # (`--as-of`, a served `as_of`), `text` (one time written in a runbook lookup's text),
    # `now` (none given). `as_of_words`: the text's words it was read from (`text` only);
    # `time_note`: what the answer said of the time words in the text. None: not said (the
    # run records nothing, as runs recorded before them). Not part of the fingerprint: they
    # follow from what was given.
    as_of_from: Literal["given", "text", "now"] | None = None
    as_of_words: str | None = Field(default=None, max_length=400)
    time_note: str | None = Field(default=None, max_length=2000)
    service: str | None = Field(default=None, max_length=200)
    max_rounds: int | None = Field(default=None, ge=1, le=100)
    budget_tokens: int | None = Field(default=None, ge=1, le=10_000_000)
    # Further request options that change the answer (scalars only, so they hash cleanly).
    options: dict[str, str | int | float | bool | None] = Field(default_factory=dict)
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=200)

    @field_validator("as_of", "known_at")
    @classmethod
    def _zoned(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.utcoffset() is None:
            raise ValueError("times must carry a zone (ISO-8601 with Z or an offset)")
        return value

    @field_validator("idempotency_key")
    @classmethod
    def _printable_key(cls, value: str | None) -> str | None:
        if value is not None and (not value.isprintable() or value.strip() != value):
            raise ValueError("idempotency key must be printable, without surrounding spaces")
        return value


class RunStart(BaseModel):
    """What `start_run` answers: the run to record into, or the original one of a key."""

    run_id: str
    created: bool  # False: the idempotency key named an existing run with the same request
    status: RunStatus
    started_at: datetime
    known_at: datetime
    # The chain's head after the start (a started run only): where its RunLog appends.
    head_seq: int | None = None
    head_hash: str | None = None
    head_kind: str | None = None
    # A run of an idempotency key: which run of it (1 the first; one more per retry of a
    # run that ended without an answer), and the run a retry answers in place of.
    attempt: int = 1
    retry_of: str | None = None

    @property
    def answerless(self) -> bool:
        """A key's run that ended without an answer (interrupted by Ctrl-C, or failed):
        the same key runs again. A run that answered, or is still running, never does."""
        return not self.created and self.status == RunStatus.FAILED


class ToolCallRecord(BaseModel):
    """One executed template call: what the Context Graph keeps, what `--json` shows
    (`tool_calls[]`) and what replay re-executes (docs/design.md section 8).

    Enough to re-execute it exactly: template id@version, the hash of the rendered text,
    the structural options, the plan's parameters, the row limit, and `known_at`.
    `rows_hash` is `chain.rows_hash` of the rows the executor returned; replay
    re-executes the call and compares it. Build one from the executor's `ToolResult` with
    `investigator.session.tool_call_record`.
    """

    model_config = ConfigDict(extra="forbid")

    tool_call_id: str = Field(min_length=1, max_length=200)
    template_id: str = Field(min_length=1, max_length=200)
    template_version: int = Field(ge=1)
    template_hash: str = Field(min_length=1, max_length=200)
    options: dict[str, str | int] = Field(default_factory=dict)
    params: dict[str, JsonValue] = Field(default_factory=dict)
    evidence_type: str | None = None
    limit: int | None = Field(default=None, ge=1)
    as_of: datetime | None = None
    known_at: datetime
    row_count: int = Field(ge=0)
    rows_hash: str
    truncated: bool = False
    duration_ms: float = Field(ge=0)
    # When the call began (UTC): the PROV export's start and end of the call. None in runs
    # recorded before it was kept. Wall-clock: never part of a pack, claim or rows hash.
    started_at: datetime | None = None
    error: str | None = None
    round: int = Field(default=1, ge=0)

    @field_validator("started_at")
    @classmethod
    def _zoned_start(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.utcoffset() is None:
            raise ValueError("started_at must carry a zone")
        return value

    @computed_field  # type: ignore[prop-decorator]
    @property
    def template(self) -> str:
        """`id@version`, as the report prints it."""
        return f"{self.template_id}@{self.template_version}"

    @model_validator(mode="before")
    @classmethod
    def _older_shapes(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = {k: v for k, v in data.items() if k != "template"}  # computed, not input
        # An earlier shape passed {"params": {...}, "options": {...}} as `params`.
        if not data.get("options"):
            params = data.get("params")
            if isinstance(params, dict) and set(params) == {"params", "options"}:
                data = {**data, "params": params["params"], "options": params["options"]}
        return data


class CtxNodeRecord(BaseModel):
    """One stored Context Graph node as read back: its labels and every property."""

    labels: list[str]
    properties: dict[str, Any]

    @property
    def seq(self) -> int:
        """The node's position in its run's chain (-1 if the property is missing)."""
        value = self.properties.get("seq")
        return value if isinstance(value, int) else -1

    @property
    def kind(self) -> str:
        """The kind the node says it is (`?` if missing)."""
        return str(self.properties.get("kind", "?"))

    def payload(self) -> Any:
        """The recorded object (the canonical JSON kept in `payload`), or None."""
        import json

        raw = self.properties.get("payload")
        if not isinstance(raw, str):
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return None


class CtxEdgeRecord(BaseModel):
    """One stored relationship between two nodes of the same run, by their seq numbers."""

    model_config = ConfigDict(frozen=True)

    from_seq: int
    type: str
    to_seq: int


class RunLineage(BaseModel):
    """Everything recorded for one run, in sequence order."""

    run_id: str
    nodes: list[CtxNodeRecord]
    edges: list[CtxEdgeRecord]
    run_properties: dict[str, Any] | None  # the CtxRun node's properties, None if deleted

    def of_kind(self, kind: CtxKind) -> list[CtxNodeRecord]:
        """The nodes of one kind, in sequence order."""
        return [n for n in self.nodes if n.kind == kind.value]


class ChainProblem(BaseModel):
    """One place where the recorded chain is not what was written."""

    run_id: str
    seq: int
    kind: str
    problem: str

    def describe(self) -> str:
        """One line naming the place: run, seq and node kind."""
        return f"run {self.run_id} seq {self.seq} ({self.kind}): {self.problem}"


class ChainReport(BaseModel):
    """The result of verifying one run's hash chain and lineage shape."""

    run_id: str
    chain_valid: bool
    node_count: int
    head_hash: str | None
    problems: list[ChainProblem]


class RunSummary(BaseModel):
    """One line of `investigator runs`."""

    run_id: str
    status: str
    command: str | None
    question: str | None
    tenant: str | None = None
    subject_id: str | None
    purpose: str | None
    service: str | None
    started_at: str | None
    as_of: str | None
    known_at: str | None
    # Where as_of and known_at came from (`given`, `text`, `now`; None: not recorded, a run
    # recorded before it was), the text's words as_of was read from, the answer's note on
    # the text's time words, and the one phrase `runs` prints (context_graph/run_times.py).
    as_of_from: str | None = None
    as_of_words: str | None = None
    known_at_from: str | None = None
    time_note: str | None = None
    times: str | None = None
    stop_reason: str | None
    node_count: int
    # No head hash: it chains over every node, and `runs` does not re-filter each run for
    # its reader, so it could confirm a guess of what `trace` withholds (docs/security.md).
    # Listed under `audit`: the run checked against its chain and anchor as `verify` checks
    # it, and the first problem when it does not verify (None: not checked).
    verified: bool | None = None
    verify_problem: str | None = None
    # Listed under `audit`: which holder of its id the subject was, when not the current one
    # (`retracted 2026-12-05T06:40:00Z; an earlier principal of this id`).
    subject_note: str | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def untrusted_fields(self) -> list[str]:
        """The fields quoting the asker's own words (the question, its time words, the note
        on them), as JSON Pointers into this run: data, never instructions, for a script that
        hands `runs --json` to an agent (as `trace` and `replay` documents mark theirs)."""
        said = [f"/{k}" for k in ("question", "as_of_words", "time_note") if getattr(self, k)]
        return [*said, "/times"] if self.as_of_words and self.as_of_from == "text" else said

    @computed_field  # type: ignore[prop-decorator]
    @property
    def trust(self) -> Literal["trusted", "untrusted"]:
        """`untrusted` when the run holds recorded free text (`untrusted_fields`)."""
        return "untrusted" if self.untrusted_fields else "trusted"
