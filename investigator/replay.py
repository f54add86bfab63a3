"""`investigator replay`: prove that re-running a recorded run gives what it recorded.

1. Verify the hash chain and lineage shape (`chain_valid`; problems name run, seq, kind).
2. Re-execute every recorded ToolCall through the KG executor (the only path to KG data)
   with the same template id@version, options, parameters, row limit, subject and the run's
   `known_at`, and compare the hash of the rows with the recorded `rows_hash`. Per call,
   drift says what changed: `template_missing` (that version is gone), `template_changed`
   (its rendered text hashes differently now), `data_purged` (a legal purge removed the
   text of a record the run saw), `data_not_visible` (a record the run saw is no longer
   returned to its subject and no purge touched it: labels, purposes or grants changed),
   `data_redacted_for_subject` / `data_unredacted_for_subject`
   (the same record version, read through its redacted view or no longer: the subject lost
   or gained `pii`), `data_changed` (the same record version reads other text, no purge
   recorded), `ranking_changed` (a fulltext call's rows differ, yet every record it read,
   named by the run's evidence and rejections or by the call's `hits`, is still returned to
   the subject at known_at, unchanged: BM25 statistics count records written after the
   run; a lookup whose re-run differs in its text matches alone says it too; step 4 is
   then given the call's recorded ranking, and a run it reproduces verifies, the lines
   becoming `notes`),
   `subject_grants_changed` (a call whose rows no kept record names differs and the
   subject's principal was re-recorded since: the likely cause), `record_labels_changed`
   (the same, when the subject's grants did not change but a record the run read is shown
   relabelled since: still known, its current record unreadable by the subject),
   `hash_mismatch` (other differences; for a call that kept no evidence, the
   line says replay cannot tell why), `execution_failed`. One cause is one
   line: evidence of a record already reported at its call adds no `evidence_changed`.
3. Recompute every recorded Evidence from the re-executed rows (same evidence_id, same
   content hash), and check the recorded pack against its own pack_hash.
4. Re-drive the command through its run session (nothing recorded) with the recorded
   question, subject, purpose, as_of and known_at, and compare its result with the
   recorded one (`pack_hash_match`): an investigation's pack_hash (and claims), a runbook
   lookup's answer. A fulltext call whose records were read again unchanged returns them
   as the run ranked them (its recorded `hits`: order and scores), not today's ranking,
   which records written after the run move (BM25 statistics are tenant-wide). Runs with
   no result to reproduce (refused) compare the hash of their admitted evidence instead.

Because every KG read is filtered by the run's `known_at`, later corrections (records
superseded after the run) do not change which records replay sees (a fulltext ranking can
move: `ranking_changed`); a purge removes content in
place and is reported as drift, honestly.
"""

from __future__ import annotations

import json
import operator
from datetime import datetime
from typing import Any

import neo4j
from pydantic import BaseModel, ConfigDict, ValidationError

from cypher_templates.executor import RecordedFailure, RecordedRanking
from graph_schema.canonical import iso_utc, sha256_text
from graph_schema.hashing import content_hash
from graph_schema.kg_types import RecordStatus
from investigator.context_graph.audit import (
    WITHHELD_TEXT,
    ReadRule,
    edge_ends,
    read_element_records,
)
from investigator.context_graph.chain import evidence_digest, rows_hash, sha256_of, verify_chain
from investigator.context_graph.incarnation import read_incarnations, run_incarnation
from investigator.context_graph.lineage import load_lineage
from investigator.context_graph.models import (
    INTERRUPTED,
    TOOL_CALL_HITS,
    CtxKind,
    CtxNodeRecord,
    RunLineage,
    RunStatus,
    parse_hit,
)
from investigator.context_graph.reread import call_shape
from investigator.context_graph.run_times import run_times
from investigator.decision_code import decision_code
from investigator.errors import InvestigatorError, NotAuthorized
from investigator.gate import PII_LABEL
from investigator.investigation import InvestigationRequest, investigate
from investigator.runbook_lookup import LookupTarget, RunbookAnswer, RunbookLookup, RunbookQuery
from investigator.runbook_sections import (
    BUDGET_CUT,
    SECTION_EXCERPT,
    budget_cut_again,
    excerpt_at,
)
from investigator.telemetry import replaying


class Drift(BaseModel):
    """One thing that is not as recorded, and where."""

    kind: str
    seq: int | None = None
    tool_call_id: str | None = None
    detail: str


class ReplayReport(BaseModel):
    """What `replay --json` prints."""

    run_id: str
    verified: bool
    pack_hash_match: bool
    chain_valid: bool
    status: str | None
    command: str | None
    recorded_pack_hash: str | None
    replayed_pack_hash: str | None
    tool_calls: int
    tool_calls_matched: int
    evidence: int
    evidence_matched: int
    drift: list[Drift]
    problems: list[str]
    # Why pack_hash_match is false without any hash comparison (a failed or incomplete run
    # has no finished result to re-run; `null` when the hashes were compared).
    pack_hash_note: str | None = None
    # Not verified only because of what the run's subject may read now: the chain verified
    # and every difference is a grant or label change (or the answer that follows from it).
    differs_by_grants_only: bool = False
    # What a report says beside its verdict that is no drift: a verified run whose fulltext
    # scores moved because of records written after it (re-derived from its recorded
    # ranking of the same, unchanged records).
    notes: list[str] = []
    # The times the run answered for, as recorded, and where each came from (`given`,
    # `text`, `now`; None: not recorded): the re-run is at these, never at a new now or a
    # time read again from its text (context_graph/run_times.py); `times` is the phrase.
    as_of: str | None = None
    as_of_from: str | None = None
    as_of_words: str | None = None
    known_at: str | None = None
    known_at_from: str | None = None
    time_note: str | None = None
    times: str | None = None
    # The fields above that quote the run's own words (its time words), as JSON Pointers:
    # data, never instructions (the MCP server fences them, untrusted_text.py).
    untrusted_fields: list[str] = []


def _backdated_left(left: int, explaining: int) -> str:
    """What a backdated-cause line says of the ingests it does not show: how many, and how
    many of them also explain the difference (counts of ingests, the same for every reader),
    so that none is silently ignored. Empty when every one is shown."""
    if left <= 0:
        return ""
    noun = "ingest" if left == 1 else "ingests"
    which = (
        f"{explaining} of them also dated records the call returns now or retracted"
        if explaining
        else "none of them dated a record the call returns now or retracted one"
    )
    return f"; {left} other backdated {noun} into the time it saw not shown ({which})"


def _recorded_result(outcome: CtxNodeRecord) -> dict[str, Any]:
    """The answer an outcome node keeps (`result`, JSON), else {} (none kept, or purged)."""
    raw = outcome.properties.get("result")
    try:
        doc = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}


def _unquoted_problem(exc: Exception) -> str:
    """What is wrong with a recorded record that does not parse, quoting none of it: a
    tampered record is hostile text, and a drift line reaches an agent through `--json` and
    the served replay. A validation error's fields and messages (pydantic's `input_value`
    left out), a JSON error's place, else the kind of error (a `ValueError` message may
    repeat the value: "'x' is not a valid LookupTarget")."""
    if isinstance(exc, ValidationError):
        said = "; ".join(
            f"{'.'.join(str(part) for part in err['loc']) or 'record'}: {err['msg']}"
            for err in exc.errors(include_url=False, include_input=False, include_context=False)
        )
        return said[:200]
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    return f"{type(exc).__name__} (the record's text not quoted)"


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def _subset(part: Any, whole: dict[str, Any]) -> bool:
    return isinstance(part, dict) and all(
        k in whole and sha256_of(v) == sha256_of(whole[k]) for k, v in part.items()
    )


def _text_digest(text: str) -> str:
    return sha256_text(text)


class ReplayReader(BaseModel):
    """Who reads a replay report: its tenant, labels and purpose of now. The backdated
    records a drift line names are checked against them inside Cypher (never in Python:
    an id the reader may not read never leaves Neo4j)."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    labels: tuple[str, ...]
    purpose: str
    # The recorded hashes withheld from the reader (`ContentFilter.hidden_hashes`): a call
    # whose rows hash is among them has its recorded row count withheld too, as `trace`
    # withholds it (docs/security.md rule 6).
    withheld_hashes: frozenset[str] = frozenset()


def replay_reader(content: ReadRule) -> ReplayReader | None:
    """The reader of a replay report as `content` (its `readable_run` filter) reads it:
    under the reader's purpose, else the run's; None when there is none (nothing named)."""
    if content.purpose is None:
        return None
    principal = content.reader.principal
    hidden = getattr(content, "hidden_hashes", None)
    return ReplayReader(
        tenant=principal.tenant,
        labels=tuple(principal.labels),
        purpose=content.purpose,
        withheld_hashes=frozenset(hidden or ()),
    )


class _Replayer:
    def __init__(
        self,
        driver: neo4j.Driver,
        lineage: RunLineage,
        kg_database: str | None,
        reader: ReplayReader | None = None,
    ) -> None:
        from cypher_templates.executor import TemplateExecutor

        self.driver = driver
        self.lineage = lineage
        self.kg_database = kg_database
        # Why the re-run's answer was not compared (its recorded answer purged), else None.
        self.not_compared: str | None = None
        self.executor = TemplateExecutor(driver, database=kg_database)
        self.drift: list[Drift] = []
        self.rows_by_call: dict[str, list[Any]] = {}
        # (tool call, element id, version) of records whose drift the call's line explains:
        # their evidence is not reported again as `evidence_changed` (one cause, one line).
        self.explained: set[tuple[str, str, int]] = set()
        self.run = lineage.run_properties or {}
        self.reader = reader
        # Calls that kept their hits, read again: (hits returned now, hits kept); and, for a
        # re-ranking shown (`ranking_changed`), how many of the hits score otherwise now.
        self.hits_now: dict[str, tuple[int, int]] = {}
        # A lookup whose re-run differs in its text matches' ranking alone (`ranking_changed`).
        self.answer_reranked = False
        self.scores_moved: dict[str, int] = {}
        # Records the run read that are no longer returned to its subject because their
        # current record (or a relationship's end's) now has labels or purposes the subject
        # lacks: a record's labels changed since the run (no purge, no retraction).
        self.relabelled: set[tuple[str, int]] = set()
        # A record the run read that is no longer returned and no longer known at all (no
        # current record: deleted from the KG), which no label change explains.
        self.record_gone = False
        # Drift lines of calls whose rows differ and that no kept record names (replay
        # cannot tell why): (index in `drift`, the line's text before its cause).
        self.unnamed: list[tuple[int, str]] = []
        # The fulltext calls whose records are read again unchanged, as the run ranked them
        # (their recorded `hits`): the re-run reads these instead of today's ranking.
        self.rankings: list[RecordedRanking] = []
        # Fulltext calls whose rows were read again unchanged but whose ranking cannot be
        # rebuilt (the run kept no order of them): tool call id -> why.
        self.unranked: dict[str, str] = {}
        # What a verified replay says beside it (`ReplayReport.notes`).
        self.notes: list[str] = []

    def add(self, kind: str, detail: str, seq: int | None = None, tc: str | None = None) -> None:
        self.drift.append(Drift(kind=kind, seq=seq, tool_call_id=tc, detail=detail))

    def reads_as_subject(self, subject: Any) -> bool:
        """Whether the reader reads every record the run's subject (its grants of now) reads:
        same tenant and purpose, and every label of the subject's."""
        return (
            self.reader is not None
            and self.reader.tenant == subject.tenant
            and self.reader.purpose == subject.purpose
            and set(subject.labels) <= set(self.reader.labels)
        )

    def count_withheld(self, node: CtxNodeRecord) -> bool:
        """Whether call `node`'s recorded row count is withheld from the reader: its rows
        hash is (some row it read is not shown readable by the reader now), and how many
        rows it read counts those rows (as `trace` shows it: `rows=[withheld]`)."""
        recorded = node.properties.get("rows_hash")
        return (
            self.reader is not None
            and isinstance(recorded, str)
            and recorded in self.reader.withheld_hashes
        )

    # -- tool calls ---------------------------------------------------------------------

    def subject_name(self) -> str:
        """The run's subject, tenant-qualified when the run records its tenant (issue 17)."""
        tenant, subject_id = self.run.get("tenant"), str(self.run.get("subject_id"))
        return f"{tenant}/{subject_id}" if isinstance(tenant, str) and tenant else subject_id

    def subject(self) -> Any:
        from cypher_templates.subject import load_subject

        known_at = _parse_time(self.run.get("known_at"))
        if known_at is None:
            raise _CannotReplay("the run's known_at is missing or malformed")
        try:
            return load_subject(
                self.executor,
                self.subject_name(),
                str(self.run.get("purpose")),
                known_at,
            )
        except InvestigatorError as exc:
            raise _CannotReplay(f"the subject cannot be loaded at known_at: {exc}") from exc

    def check_refusal(self) -> None:
        """A refused run replays only if the subject is still refused at its known_at."""
        from cypher_templates.subject import load_subject
        from investigator.errors import NotAuthorized

        known_at = _parse_time(self.run.get("known_at"))
        if known_at is None:
            self.add("refusal_not_reproduced", "the run's known_at is missing or malformed", 0)
            return
        try:
            load_subject(
                self.executor,
                self.subject_name(),
                str(self.run.get("purpose")),
                known_at,
            )
        except NotAuthorized:
            return
        self.add(
            "refusal_not_reproduced",
            f"subject {self.run.get('subject_id')} is allowed purpose "
            f"{self.run.get('purpose')} at known_at now",
            0,
        )

    def replay_tool_call(self, node: CtxNodeRecord, subject: Any) -> bool:
        from cypher_templates.plan import PlanStep
        from cypher_templates.registry import TemplateRefused, UnknownTemplate

        p = node.properties
        payload = node.payload() or {}
        tc_id = str(p.get("tool_call_id"))
        template_id = str(p.get("template_id"))
        try:
            version = int(p.get("template_version"))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            self.add(
                "template_missing", "recorded template version is not a number", node.seq, tc_id
            )
            return False
        params, options = call_shape(payload)
        known_at = _parse_time(p.get("known_at"))
        if known_at is None:
            self.add("hash_mismatch", "recorded known_at is malformed", node.seq, tc_id)
            return False
        registry = self.executor.registry
        try:
            spec = registry.get(template_id, version)
        except UnknownTemplate:
            self.add(
                "template_missing",
                f"template {template_id}@{version} is no longer in the allowlist",
                node.seq,
                tc_id,
            )
            return False
        try:
            rendered = registry.render(spec, dict(options))
        except (ValueError, TemplateRefused) as exc:
            self.add("template_changed", f"{template_id}@{version}: {exc}", node.seq, tc_id)
            return False
        if rendered.template_hash != p.get("template_hash"):
            self.add(
                "template_changed",
                f"{template_id}@{version} renders to {rendered.template_hash}, "
                f"recorded {p.get('template_hash')}",
                node.seq,
                tc_id,
            )
            return False
        if p.get("error"):
            # The call failed when recorded (a timeout on its machine, Neo4j gone): the run
            # went on without its rows, and so does replay, rather than compare what it
            # reads now with a read that never happened (the re-run fails it alike).
            self.rows_by_call[tc_id] = []
            return True
        limit = p.get("limit")
        if not isinstance(limit, int):
            limit = self._limit_from_plan(node, template_id, params, options)
        evidence_type = p.get("evidence_type") or (
            spec.evidence_types[0] if spec.evidence_types else None
        )
        try:
            step = PlanStep(
                template_id=template_id,
                template_version=version,
                params=params,
                options=options,
                evidence_type=evidence_type,
                limit=limit if isinstance(limit, int) else None,
            )
            result = self.executor.run(step, subject, known_at, raise_on_error=False)
        except (InvestigatorError, ValueError) as exc:
            self.add("execution_failed", f"{template_id}@{version}: {exc}", node.seq, tc_id)
            return False
        if result.error and result.error != p.get("error"):
            self.add(
                "execution_failed", f"{template_id}@{version}: {result.error}", node.seq, tc_id
            )
            return False
        self.rows_by_call[tc_id] = list(result.rows)
        replayed = rows_hash(result.rows)
        fulltext = _RANKED_BY_FULLTEXT in rendered.text
        if replayed == p.get("rows_hash"):
            if fulltext:
                # The same rows; their order and scores may still have moved: the re-run
                # reads them as the run ranked them when the run kept that ranking.
                self._pin_ranking(node, result.limit, result.rows, moved_only=result)
            return True
        if fulltext:
            read = self._rows_read_then(node, step, subject, known_at, spec.row_cap)
            if read is not None:
                # The run's rows, identical, only ranked otherwise: evidence is recomputed
                # from them, and the line says the ranking moved, not the records.
                self.rows_by_call[tc_id] = read
                unranked = self._pin_ranking(node, result.limit, read)
                if unranked:
                    self.unranked[tc_id] = unranked
                moved = self.scores_moved.get(tc_id)
                # How many rows the run read: withheld where its rows hash is, unless the
                # reader reads whatever the run's subject does (those rows, just shown read).
                shown = not self.count_withheld(node) or self.reads_as_subject(subject)
                then = str(len(read)) if shown else WITHHELD_TEXT
                scores = ""
                if moved is not None and then == WITHHELD_TEXT:  # a count of them too
                    scores = "; how many of their recorded scores moved is withheld with it"
                elif moved is not None:
                    scores = f"; {moved} of their {then} recorded scores moved"
                self.add(
                    "ranking_changed",
                    f"{template_id}@{version}: {_RANKING_CHANGED} ({result.row_count} rows "
                    f"now, {then} recorded; the {then} the run read are "
                    f"still returned to {self.subject_name()} at its known_at{scores}"
                    f"{self.grants_note(known_at)})" + (f"; {unranked}" if unranked else ""),
                    node.seq,
                    tc_id,
                )
                return False
        drifted = self._drifted_elements(tc_id, result.rows, known_at, subject)
        for kind, items in drifted.items():
            detail = _element_drift_detail(
                kind, f"{template_id}@{version}", items, self.subject_name()
            )
            if kind == "data_retracted":
                # The ingest that dated the retraction into the run's time, by its file.
                detail += self.backdated_cause(known_at, subject, result.rows) or ""
            self.add("data_not_visible" if kind == _DELETED else kind, detail, node.seq, tc_id)
        if not drifted:
            # Nothing recorded names the rows (an entity resolution keeps no evidence), and
            # only a count and a hash of them were kept: replay cannot tell why they differ,
            # and must not read past the subject's grants to find out (hidden rows never
            # leave Neo4j).
            cause = _UNKEPT_ROWS if self._kept_records(tc_id) else _UNNAMED_ROWS
            if tc_id in self.hits_now:
                cause = _hits_differ(*self.hits_now[tc_id], withheld=self.count_withheld(node))
            backdated = self.backdated_cause(known_at, subject, result.rows)
            kind = "hash_mismatch"
            if backdated is None and self.grants_changed(known_at):
                # The likely cause an auditor can act on; replay still cannot name the rows.
                kind, cause = "subject_grants_changed", _GRANTS_CHANGED_ROWS
            elif backdated is None and (purges := self.purges()):
                # A legal purge removed text the run read: what a search matched moves too.
                cause = _purged_rows(purges)
            head = (
                f"{template_id}@{version}: rows hash {replayed}, recorded {p.get('rows_hash')} "
                f"({result.row_count} rows now, "
                f"{WITHHELD_TEXT if self.count_withheld(node) else p.get('row_count')} recorded)"
            )
            same_hits = tc_id in self.hits_now and operator.ge(*self.hits_now[tc_id])
            if (
                kind == "hash_mismatch"
                and backdated is None
                and not same_hits
                and not self.purges()
            ):
                # Named once every call is read, if a record the run read was relabelled.
                self.unnamed.append((len(self.drift), head))
            self.add(kind, f"{head}{backdated or cause}", node.seq, tc_id)
        return False

    def name_relabelled_cause(self) -> None:
        """When a record the run read is shown relabelled since the run (its current record
        has labels or purposes the subject lacks; `_drifted_elements`), and the subject's
        own grants did not change, a call whose rows differ and that no kept record names is
        likely the same change: `record_labels_changed`, saying so (replay still cannot name
        its rows: it never reads past the subject's grants). Nothing else is read."""
        if not self.relabelled or self.record_gone:
            return
        for index, head in self.unnamed:
            line = self.drift[index]
            if line.kind != "hash_mismatch":
                continue
            self.drift[index] = line.model_copy(
                update={"kind": "record_labels_changed", "detail": head + _LABELS_CHANGED_ROWS}
            )

    def _limit_from_plan(
        self, node: CtxNodeRecord, template_id: str, params: dict[str, Any], options: dict[str, Any]
    ) -> int | None:
        """The row limit of the plan step this call executed (records that left it out).

        The call USED the plan at `plan_seq`; the step with the same template, parameters
        and options is the one it ran, and its `limit` is the one the executor applied.
        """
        plan_seq = node.properties.get("plan_seq")
        plans = [n for n in self.lineage.of_kind(CtxKind.PLAN) if n.seq == plan_seq]
        plan = plans[0].payload() if plans else None
        steps = plan.get("steps") if isinstance(plan, dict) else None
        for step in steps if isinstance(steps, list) else []:
            if not isinstance(step, dict) or step.get("template_id") != template_id:
                continue
            # The recorded (compiled) parameters and options also carry filled-in defaults.
            if not _subset(step.get("params") or {}, params):
                continue
            if not _subset(step.get("options") or {}, options):
                continue
            limit = step.get("limit")
            return limit if isinstance(limit, int) else None
        return None

    def _rows_read_then(
        self, node: CtxNodeRecord, step: Any, subject: Any, known_at: datetime, row_cap: int
    ) -> list[Any] | None:
        """The rows call `node` read, read again now, when only their fulltext ranking moved.

        The run keeps every row of a fulltext call it judged (its evidence and rejections
        name each record's id and version); when they name `row_count` records, the same call
        is read again up to the template's row cap, as the run's subject at the run's
        `known_at` (so only what the subject may read now), and the rows of those records
        must hash to the recorded `rows_hash`: the same records, same versions, same text.
        None when that is not shown (a record gone, changed or out of reach: other lines say).
        """
        tc_id = str(node.properties.get("tool_call_id"))
        hits = self._recorded_hits(node)
        keys: set[tuple[str, int]] = set()
        for kept in (
            *self.lineage.of_kind(CtxKind.EVIDENCE),
            *self.lineage.of_kind(CtxKind.REJECTION),
        ):
            if kept.properties.get("tool_call_id") != tc_id:
                continue
            if "purged" in kept.properties:
                return None  # a legal purge: its own line says so
            payload = kept.payload() or {}
            if payload.get("element_id") is None:
                if hits is None:
                    return None
                continue  # the hits name it
            keys.add((str(payload.get("element_id")), int(payload.get("version") or 1)))
        if hits is not None:
            # A runbook search keeps no evidence of its rows but names them (`hits`).
            keys |= set(hits)
        if not keys or len(keys) != node.properties.get("row_count"):
            return None  # the run did not keep every record the call read
        wider = step.model_copy(update={"limit": row_cap})
        try:
            result = self.executor.run(wider, subject, known_at, raise_on_error=False)
        except (InvestigatorError, ValueError):
            return None
        if result.error:
            return None
        read = [row for row in result.rows if (row.element.element_id, row.element.version) in keys]
        if hits is not None:
            self.hits_now[tc_id] = (len(read), len(keys))
        if len(read) != len(keys) or rows_hash(read) != node.properties.get("rows_hash"):
            return None
        if hits is not None:
            moved = sum(
                1
                for row in read
                if hits.get((row.element.element_id, row.element.version)) != _score6(row.score)
            )
            self.scores_moved[tc_id] = moved
        return read

    def _pin_ranking(
        self, node: CtxNodeRecord, limit: int, rows: list[Any], moved_only: Any = None
    ) -> str | None:
        """Keep fulltext call `node`'s recorded ranking for the re-run: `rows` (the records
        the call read, read again now and identical: their rows hash is the recorded one) in
        the order of the call's recorded `hits`, each with its recorded score (today's exact
        score where it rounds to the recorded one). None when kept, else why the ranking
        cannot be rebuilt (said on the call's line).

        `moved_only`: the call's result of now, when its rows hash matched: its ranking is
        kept only if the order or a score moved (else the re-run reads it as before), with
        the tie at its cut read now (the same rows, so the same tie)."""
        hits = self._recorded_hits(node)
        if hits is None:
            why = (
                "the run kept no order of these rows (no `hits` on the call: its rows kept as "
                "rejections keep no rank; runs recorded before every fulltext call kept its "
                "hits), so the re-run reads today's ranking and the run cannot be verified"
            )
            return why if rows else None
        by_key = {(row.element.element_id, row.element.version): row for row in rows}
        if len(by_key) != len(rows) or set(by_key) != set(hits):
            return (
                "its recorded hits do not name the rows it read, so the re-run reads today's "
                "ranking and the run cannot be verified"
            )
        ordered = []
        for key, score in hits.items():
            row = by_key[key]
            # Today's exact score where it rounds to the recorded one (`hits` keep six digits).
            same = _score6(row.score) == score
            ordered.append(row if same else row.model_copy(update={"score": score}))
        if moved_only is not None and [
            (row.element.element_id, row.element.version, row.score) for row in rows
        ] == [(row.element.element_id, row.element.version, row.score) for row in ordered]:
            return None  # nothing moved: today's read is the run's
        params, options = call_shape(node.payload() or {})
        self.rankings.append(
            RecordedRanking(
                template_id=str(node.properties.get("template_id")),
                template_version=int(node.properties.get("template_version")),  # type: ignore[arg-type]
                params=params,
                options=options,
                limit=limit,
                truncated=bool(node.properties.get("truncated")),
                rows=tuple(ordered),
                tie_at_cut=getattr(moved_only, "tie_at_cut", None),
            )
        )
        return None

    @staticmethod
    def _recorded_hits(node: CtxNodeRecord) -> dict[tuple[str, int], float] | None:
        """(id, version) -> score of the records a call's rows were (its `hits`), or None
        when it kept none (any other call, and runs recorded before they were kept)."""
        entries = node.properties.get(TOOL_CALL_HITS)
        if not isinstance(entries, list):
            return None
        hits = {}
        for entry in entries:
            parsed = parse_hit(entry)
            if parsed is None:
                return None
            hits[(parsed[0], parsed[1])] = parsed[2]
        return hits

    def grants_note(self, known_at: datetime) -> str:
        """A caveat when the subject's own Principal record changed after `known_at`.

        Replay reads with the grants of now (docs/security.md), so a label the subject gained
        since the run can also put records it could not read then among the ranked rows.
        Only the subject's own record is read, never what any record's labels are.
        """
        if not self.grants_changed(known_at):
            return ""
        return (
            "; the subject's grants also changed since the run, which can rank records it "
            "could not read then among them"
        )

    def grants_changed_since_run(self) -> bool:
        """Whether the subject's own Principal record was re-recorded after the run's
        `known_at` (False when the run keeps none)."""
        known_at = _parse_time(self.run.get("known_at"))
        return known_at is not None and self.grants_changed(known_at)

    def grants_changed(self, known_at: datetime) -> bool:
        """Whether the subject's own Principal record was re-recorded after `known_at`."""
        rows, _, _ = self.driver.execute_query(
            "MATCH (p:KG:Principal {tenant: $tenant, id: $id}) "
            "WHERE p.recorded_at > $known_at RETURN count(p) AS later",
            tenant=str(self.run.get("tenant") or ""),
            id=str(self.run.get("subject_id")),
            known_at=known_at,
            database_=self.kg_database,
            routing_=neo4j.RoutingControl.READ,
        )
        return bool(rows and rows[0]["later"])

    def backdated_cause(self, known_at: datetime, subject: Any, rows: list[Any]) -> str | None:
        """The likely cause of rows a call returns now and did not then: an `ingest
        --backdate` written after the run that dated records at or before its `known_at`
        (graph_schema/backdating.py records each). Named by its file, its time and how many
        records it dated into the run's time (the same count for every reader), and by the
        records it dated that explain the difference: those among the call's `rows` now,
        and those it retracted that the run's `subject` can read, each only when the reader
        may read it too (checked inside Cypher, so no other id leaves Neo4j, nor a count of
        them). None when there is none."""
        started = _parse_time(self.run.get("started_at"))
        if started is None:
            return None
        tenant = str(self.run.get("tenant") or "")
        reader = self.reader
        # Another tenant's reader (never allowed to read the run) names nothing.
        named = reader is not None and reader.tenant == tenant
        records, _, _ = self.driver.execute_query(
            _BACKDATED_INGESTS,
            tenant=tenant,
            started=started,
            known_at=known_at,
            named=named,
            returned=sorted({row.element.element_id for row in rows}),
            granted=list(reader.labels) if reader is not None else [],
            purpose=reader.purpose if reader is not None else "",
            subject_granted=list(subject.labels),
            subject_purpose=subject.purpose,
            shown=_BACKDATED_SHOWN,
            database_=self.kg_database,
            routing_=neo4j.RoutingControl.READ,
        )
        if not records:
            return None
        parts = []
        named_any = False
        for row in records:
            count = int(row["dated"])
            noun = "record" if count == 1 else "records"
            names = ""
            if row["returned"]:
                names += f"; the call returns now: {', '.join(sorted(row['returned']))}"
            if row["retracted"]:
                names += f"; it retracted: {', '.join(sorted(row['retracted']))}"
            named_any = named_any or bool(names)
            parts.append(
                f"`ingest --backdate` of {row['origin']} at {iso_utc(row['at'].to_native())} "
                f"dated {count} {noun} at or before the run's known_at (from "
                f"{iso_utc(row['earliest'].to_native())}{names})"
            )
        left = _backdated_left(
            int(records[0]["total"]) - len(records),
            int(records[0]["explaining"]) - len([r for r in records if r["explains"]]),
        )
        if not named_any:
            return (
                ": the call kept no record of its rows, so replay cannot name them; likely "
                "cause: " + "; ".join(parts) + ", after the run, into the time it saw" + left
            )
        return (
            ": likely cause: "
            + "; ".join(parts)
            + ", after the run, into the time it saw (of the records each dated, those that "
            "explain the difference and the reader may read are named)" + left
        )

    def purges(self) -> list[str]:
        """The purge runs that removed text this run recorded (its evidence or rejections
        marked `purged`), sorted: a known cause of reads that differ."""
        return sorted(
            {
                str(node.properties.get("purge_id") or "?")
                for kind in (CtxKind.EVIDENCE, CtxKind.REJECTION)
                for node in self.lineage.of_kind(kind)
                if "purged" in node.properties
            }
        )

    def _kept_records(self, tc_id: str) -> bool:
        """Whether the run kept a record read by call `tc_id` (as evidence or a rejection)."""
        return any(
            node.properties.get("tool_call_id") == tc_id
            for kind in (CtxKind.EVIDENCE, CtxKind.REJECTION)
            for node in self.lineage.of_kind(kind)
        )

    def _drifted_elements(
        self, tc_id: str, rows: list[Any], known_at: datetime, subject: Any
    ) -> dict[str, list[str]]:
        """The records the run saw (its evidence, and the records it kept as rejections)
        that replay no longer reads as recorded, by drift kind.

        KG records are immutable except `superseded_at` and a legal purge, which removes
        content in place and marks it (`purged_at` on the record, `purged` on the recorded
        evidence): only that is `data_purged`. A record no longer returned to the subject
        while no purge touched it is `data_retracted` when its tombstone, readable by the
        run's `subject`, was recorded at or before the run's `known_at` (a retraction written
        after the run and dated into its time: `ingest --backdate`), else `data_not_visible`
        (its labels or purposes, or the subject's grants, changed since the run; the new
        labels are never named; a record of which no record is known now is said to be
        deleted from the KG, in the same kind); the same
        version returned through its redacted view where the run read its full text is
        `data_redacted_for_subject` (the subject lost `pii`; the record did not change), the
        reverse `data_unredacted_for_subject`; the same version returned with other text and
        no purge is `data_changed`. A rejection keeps no text: whether its record version is
        still returned is compared, and, when it is, whether its stored record still hashes
        to its own `content_hash` (an edit in place by hand does not: `data_changed`).
        """
        now: dict[tuple[str, int], str] = {}
        redacted_now: set[tuple[str, int]] = set()
        for row in rows:
            element = getattr(row, "element", None)
            if element is not None:
                now[(element.element_id, element.version)] = element.content or ""
                if element.redacted:
                    redacted_now.add((element.element_id, element.version))
        # (key, returned, how, read redacted at the run)
        seen: list[tuple[tuple[str, int], bool, str, bool]] = []
        found: dict[str, list[str]] = {}
        # Records kept only as rejections (no text kept) that are still returned.
        kept_only: set[tuple[str, int]] = set()
        for node in self.lineage.of_kind(CtxKind.EVIDENCE):
            if node.properties.get("tool_call_id") != tc_id:
                continue
            if "purged" in node.properties:  # its recorded text went too (legal purge)
                ids = node.properties.get("element_ids") or ["?"]
                found.setdefault("data_purged", []).extend(
                    f"{eid} (recorded text purged too)" for eid in ids
                )
                continue
            ev = node.payload() or {}
            key = (str(ev.get("element_id")), int(ev.get("version") or 1))
            content = str(ev.get("content") or "")
            # A section the gate cut (`section_excerpt`) is part of the text, not all of it.
            cut = SECTION_EXCERPT in (ev.get("transformations") or [])
            was_redacted = bool(ev.get("redacted"))
            if key not in now:
                seen.append((key, False, "no longer returned", was_redacted))
            elif content not in now[key] if cut else now[key] != content:
                seen.append((key, True, "", was_redacted))
        for node in self.lineage.of_kind(CtxKind.REJECTION):
            # A record the run kept only as a rejection (its id and version, no text): one no
            # longer returned is named, never said to be "not among the records the run kept".
            if node.properties.get("tool_call_id") != tc_id:
                continue
            if "purged" in node.properties:
                # Its id went with the detail that quoted the record: named by its candidate
                # and purge run, never a KG id the report's reader may not be allowed to read.
                found.setdefault("data_purged", []).append(
                    f"the record of rejected candidate {node.properties.get('candidate_id')} "
                    f"(its recorded rejection purged too, purge run "
                    f"{node.properties.get('purge_id')})"
                )
                continue
            rejected = node.payload() or {}
            if rejected.get("element_id") is None:
                continue
            key = (str(rejected.get("element_id")), int(rejected.get("version") or 1))
            if key not in now and all(key != known for known, _, _, _ in seen):
                seen.append((key, False, "no longer returned", False))
            elif key in now:
                kept_only.add(key)
        ids = {key[0] for key, _, _, _ in seen}
        records = read_element_records(
            self.driver,
            str(self.run.get("tenant") or ""),
            ids | {end for eid in ids for end in edge_ends(eid)},
            self.kg_database,
        )
        for (eid, version), returned, how, was_redacted in seen:
            same = [r for r in records.get(eid, []) if r.version == version]
            label = f"{eid} v{version}"
            if any(r.purged for r in same):
                kind = "data_purged"
                label += f" ({how})" if how else ""
            elif not returned and any(
                _retracted_for(r, known_at, subject) for r in records.get(eid, [])
            ):
                kind = "data_retracted"
            elif not returned and not any(r.current for r in records.get(eid, [])):
                # No record of it is known now (deleted from the KG): no label change
                # explains it, nor do the subject's grants (`data_not_visible`, own words).
                kind = _DELETED
                self.record_gone = True
            elif not returned:
                kind = "data_not_visible"
                if _relabelled(eid, records, subject):
                    self.relabelled.add((eid, version))
            elif ((eid, version) in redacted_now) != was_redacted:
                # Same record version, another view of it: the subject's `pii` changed.
                kind = (
                    "data_unredacted_for_subject" if was_redacted else "data_redacted_for_subject"
                )
            else:
                kind = "data_changed"
            if kind != "data_purged":
                self.explained.add((tc_id, eid, version))
            found.setdefault(kind, []).append(label)
        for eid, version in sorted(self._edited_in_place(kept_only)):
            # Kept only as a rejection, so no text of it was kept to compare; but its record
            # no longer hashes to the content hash it was written with: edited in place.
            self.explained.add((tc_id, eid, version))
            found.setdefault("data_changed", []).append(
                f"{eid} v{version} (kept as a rejection, no text kept: its record no longer "
                "hashes to the content hash it was written with)"
            )
        return {kind: sorted(set(items)) for kind, items in sorted(found.items())}

    def _edited_in_place(self, keys: set[tuple[str, int]]) -> set[tuple[str, int]]:
        """The records among `keys` (id or relationship key, version) whose stored properties
        no longer hash to their own `content_hash` (graph_schema/hashing.py): changed in place
        after they were written (a purge marks itself and is not asked here). Nothing of
        them leaves this method but the keys."""
        if not keys:
            return set()
        tenant = str(self.run.get("tenant") or "")
        wanted = [{"id": eid, "version": version} for eid, version in sorted(keys)]
        rows, _, _ = self.driver.execute_query(
            "UNWIND $keys AS k "
            "CALL (k) { MATCH (n:KG {tenant: $tenant, id: k.id}) WHERE n.version = k.version "
            "RETURN properties(n) AS p "
            "UNION MATCH ()-[r {key: k.id}]->() WHERE k.id CONTAINS '|' "
            "AND r.tenant = $tenant AND r.version = k.version RETURN properties(r) AS p } "
            "RETURN k.id AS id, k.version AS version, p",
            keys=wanted,
            tenant=tenant,
            database_=self.kg_database,
            routing_=neo4j.RoutingControl.READ,
        )
        edited = set()
        for row in rows:
            props = dict(row["p"] or {})
            stored = props.get("content_hash")
            if (
                isinstance(stored, str)
                and "purged_at" not in props
                and content_hash(props) != stored
            ):
                edited.add((str(row["id"]), int(row["version"])))
        return edited

    # -- evidence -----------------------------------------------------------------------

    def replay_evidence(self) -> tuple[int, int]:
        from investigator.evidence import Evidence, normalise_rows

        matched = 0
        nodes = self.lineage.of_kind(CtxKind.EVIDENCE)
        rederived: dict[str, dict[str, Any]] = {}
        wholes: dict[tuple[str, str, int], Evidence] = {}
        for tc_id, rows in self.rows_by_call.items():
            for ev in normalise_rows(rows, channel="replay", tool_call_id=tc_id):
                rederived[ev.evidence_id] = ev.model_dump(mode="json")
                wholes[(tc_id, ev.element_id, ev.version)] = ev
        for node in nodes:
            # A section the gate cut from its record's text: cut the same one again.
            recorded = node.payload() or {}
            if SECTION_EXCERPT not in (recorded.get("transformations") or []):
                continue
            whole = wholes.get(
                (
                    str(node.properties.get("tool_call_id")),
                    str(recorded.get("element_id")),
                    int(recorded.get("version") or 1),
                )
            )
            if whole is not None and BUDGET_CUT in (recorded.get("transformations") or []):
                excerpt = budget_cut_again(whole, recorded)
            else:
                excerpt = excerpt_at(whole, str(recorded.get("locator"))) if whole else None
            if excerpt is not None:
                rederived[excerpt.evidence_id] = excerpt.model_dump(mode="json")
        for node in nodes:
            p = node.properties
            recorded = node.payload() or {}
            ev_id = str(p.get("evidence_id"))
            tc_id = str(p.get("tool_call_id"))
            if tc_id not in self.rows_by_call:
                continue  # its tool call already drifted; reported there
            if "purged" in p:
                self.add(
                    "data_purged",
                    f"evidence {ev_id}: its recorded text was purged "
                    f"(purge run {p.get('purge_id')})",
                    node.seq,
                    tc_id,
                )
                continue
            again = rederived.get(ev_id)
            key = (tc_id, str(recorded.get("element_id")), int(recorded.get("version") or 1))
            if again is None and key in self.explained:
                continue  # its record's drift is the call's line (one cause, one line)
            if again is None:
                self.add(
                    "evidence_changed",
                    f"evidence {ev_id} ({recorded.get('element_id')} v{recorded.get('version')}) "
                    "is not produced again",
                    node.seq,
                    tc_id,
                )
                continue
            same = again.get("content_hash") == p.get("content_hash") and _text_digest(
                str(again.get("content") or "")
            ) == _text_digest(str(recorded.get("content") or ""))
            if same:
                matched += 1
            elif key in self.explained:
                continue  # reported at its call (one cause, one line)
            else:
                self.add(
                    "evidence_changed",
                    f"evidence {ev_id}: content hash differs from the recorded one",
                    node.seq,
                    tc_id,
                )
        return len(nodes), matched

    # -- the pack -----------------------------------------------------------------------

    def recorded_pack(self) -> tuple[CtxNodeRecord | None, str | None]:
        packs = self.lineage.of_kind(CtxKind.PACK)
        if not packs:
            return None, None
        node = packs[-1]
        value = node.properties.get("pack_hash")
        return node, value if isinstance(value, str) else None

    def check_recorded_pack(self, node: CtxNodeRecord, recorded_hash: str | None) -> None:
        """The recorded pack's own content must hash to its recorded pack_hash."""
        from investigator.pack import ContextPack, pack_hash

        if "purged" in node.properties:  # a legal purge removed its text (context_graph/purge.py)
            purge_id = node.properties.get("purge_id")
            self.add(
                "data_purged",
                f"the recorded pack's text was purged (purge run {purge_id})",
                node.seq,
            )
            return
        payload = node.payload()
        try:
            pack = ContextPack.model_validate(payload)
        except ValueError as exc:
            self.add(
                "pack_changed", f"recorded pack does not parse: {_unquoted_problem(exc)}", node.seq
            )
            return
        if pack_hash(pack) != recorded_hash:
            self.add(
                "pack_changed",
                f"recorded pack content hashes to {pack_hash(pack)}, not {recorded_hash}",
                node.seq,
            )

    def recorded_failures(self) -> list[RecordedFailure]:
        """The run's calls that failed, as recorded, in the order it made them."""
        failures = []
        for node in self.lineage.of_kind(CtxKind.TOOL_CALL):
            error = node.properties.get("error")
            version = node.properties.get("template_version")
            if not error or not isinstance(version, int):
                continue
            params, options = call_shape(node.payload() or {})
            failures.append(
                RecordedFailure(
                    template_id=str(node.properties.get("template_id")),
                    template_version=version,
                    params=params,
                    options=options,
                    error=str(error),
                )
            )
        return failures

    def recorded_versions(self) -> dict[str, int]:
        """The template version each of the run's tool calls used, by template id."""
        versions: dict[str, int] = {}
        for node in self.lineage.of_kind(CtxKind.TOOL_CALL):
            version = node.properties.get("template_version")
            if isinstance(version, int):
                versions[str(node.properties.get("template_id"))] = version
        return versions

    def changed_answer(self) -> bool:
        """Whether the re-run answered differently from the recorded run (its text matches
        re-ranked included: today's code may rank them otherwise too)."""
        return self.answer_reranked or any(d.kind in _ANSWER_DRIFT for d in self.drift)

    def reranked(self) -> bool:
        """Whether a call was shown re-ranked and every other call, evidence and the
        recorded pack are as recorded (the only drift so far is `ranking_changed`)."""
        kinds = {d.kind for d in self.drift}
        return kinds == {"ranking_changed"}

    def ranking_note(self) -> str:
        """Why a re-run may answer differently when a fulltext ranking moved (else '')."""
        lines = [d for d in self.drift if d.kind == "ranking_changed"]
        if not lines:
            return ""
        if any(d.tool_call_id in self.unranked for d in lines):
            return (
                ": the re-run reads today's fulltext ranking (ranking_changed) where the run "
                "kept no order of its rows, so it may weigh other records than the run did; "
                "the records the run read are unchanged"
            )
        return (
            ": the re-run read the re-ranked calls' rows as the run ranked them (its "
            "recorded hits; ranking_changed), so the moved ranking does not explain this "
            "difference"
        )

    def settle_ranking(self) -> None:
        """When the only drift is fulltext calls ranked otherwise (`ranking_changed`), each
        re-derived from the run's recorded ranking of the same, unchanged records, and the
        re-run reproduced the run (its pack and claims, or its answer), the run is verified:
        the lines become notes saying that fulltext scores moved, and why (records written
        after the run: how many). A call whose ranking cannot be rebuilt keeps its line."""
        lines = [d for d in self.drift if d.kind == "ranking_changed"]
        if not lines or len(lines) != len(self.drift) or self.answer_reranked:
            return
        if any(d.tool_call_id is None or d.tool_call_id in self.unranked for d in lines):
            return
        later = self.records_written_since_run()
        counted = (
            "how many is not said (no reader)"
            if later is None
            else f"{later} of them the reader may read; records it may not read are not counted"
        )
        calls = "call" if len(lines) == 1 else "calls"
        self.notes.append(
            f"fulltext scores moved because of later records: records were written into "
            f"tenant {self.run.get('tenant')} after the run's known_at ({counted}), and BM25 "
            "statistics count every record of the tenant's index, even those known_at hides; "
            f"the {len(lines)} re-ranked {calls} read the same records, unchanged, and the "
            "re-run, given them as the run ranked them (its recorded hits), reproduced the run"
        )
        self.notes.extend(f"tool call {d.tool_call_id}: {d.detail}" for d in lines)
        self.drift = []

    def records_written_since_run(self) -> int | None:
        """How many KG records of the run's tenant written after its `known_at` the report's
        reader may read (their labels and purposes checked inside Cypher: a count of records
        the reader may not read is information too, docs/security.md rule 6); None without
        a reader of the run's tenant."""
        known_at = _parse_time(self.run.get("known_at"))
        tenant = str(self.run.get("tenant") or "")
        reader = self.reader
        if known_at is None or reader is None or reader.tenant != tenant:
            return None
        rows, _, _ = self.driver.execute_query(
            "MATCH (n:KG {tenant: $tenant}) WHERE n.recorded_at > $known_at "
            "AND NOT (n:Principal OR n:Source) AND all(_a IN n.acl WHERE _a IN $granted) "
            "AND $purpose IN n.purposes RETURN count(n) AS later",
            tenant=tenant,
            known_at=known_at,
            granted=list(reader.labels),
            purpose=reader.purpose,
            database_=self.kg_database,
            routing_=neo4j.RoutingControl.READ,
        )
        return int(rows[0]["later"]) if rows else 0

    def note_decision_code(self) -> None:
        """When the re-run answered differently, say whether today's decision code is the
        code that decided the run: if not, the difference may come from the code."""
        recorded = self.run.get("decision_code")
        now = decision_code()
        if recorded == now:
            return
        if isinstance(recorded, str):
            detail = (
                f"the run was decided by code {recorded[:19]}, the re-run by {now[:19]}: "
                "the changed answer may come from the code, not from the data"
            )
        else:
            detail = (
                "the run recorded no decision-code fingerprint (recorded before it was "
                f"kept), the re-run used {now[:19]}: the changed answer may come from the "
                "code, not from the data"
            )
        self.add("decision_code_changed", detail, 0)

    def rerun_investigation(self, recorded_hash: str | None) -> tuple[str | None, str | None]:
        """Run the recorded request again, recording nothing: (recorded, re-run) pack_hash.

        The re-run's claims must also be the recorded ones (statement, status, evidence).
        """
        try:
            request = json.loads(str(self.run.get("payload")))
        except ValueError:
            request = None
        if not isinstance(request, dict):
            self.add("rerun_failed", "the recorded request does not parse", 0)
            return recorded_hash, None
        as_of = _parse_time(self.run.get("as_of"))
        known_at = _parse_time(self.run.get("known_at"))
        fields: dict[str, Any] = {
            "question": request.get("question"),
            "subject_id": self.subject_name(),
            "purpose": request.get("purpose"),
            "as_of": as_of,
            "known_at": known_at,
            "service_id": request.get("service"),
        }
        for name in ("max_rounds", "budget_tokens"):
            if request.get(name) is not None:
                fields[name] = request[name]
        options = request.get("options") or {}
        if isinstance(options, dict) and options.get("deadline_s") is not None:
            fields["deadline_s"] = options["deadline_s"]
        outcomes = self.lineage.of_kind(CtxKind.OUTCOME)
        if outcomes and outcomes[-1].properties.get("stop_reason") == "deadline":
            # Stopped by the wall clock of its machine: re-run to the check where it stopped,
            # after the calls it had made then (recorded; runs recorded before kept only all
            # their calls).
            cut = _recorded_result(outcomes[-1]).get("deadline_cut_after_calls")
            fields["deadline_after_calls"] = (
                cut if isinstance(cut, int) else len(self.lineage.of_kind(CtxKind.TOOL_CALL))
            )
        else:
            # Not stopped by its deadline: the re-run is not either, however slow the server.
            fields["wall_clock_deadline"] = False
        result = investigate(
            InvestigationRequest.model_validate(fields, context={"recorded": True}),
            driver=self.driver,
            # The template versions the run recorded (a plan step names none: the newest),
            # so the re-run reads, and its pack names, the same ones.
            executor=self.executor.pinned(
                self.recorded_versions(), self.recorded_failures(), self.rankings
            ),
            recorder=None,
        )
        recorded = _claim_digest(n.payload() for n in self.lineage.of_kind(CtxKind.CLAIM))
        if _claim_digest(c.model_dump(mode="json") for c in result.claims) != recorded:
            seqs = [n.seq for n in self.lineage.of_kind(CtxKind.CLAIM)]
            self.add(
                "claims_changed",
                f"the re-run states other claims than the recorded ones{self.ranking_note()}",
                seqs[0] if seqs else None,
            )
        if recorded_hash is not None and result.pack_hash != recorded_hash:
            packs = self.lineage.of_kind(CtxKind.PACK)
            self.add(
                "pack_hash_mismatch",
                f"the re-run builds pack {result.pack_hash}, recorded {recorded_hash}"
                f"{self.ranking_note()}",
                packs[-1].seq if packs else None,
            )
        return recorded_hash, result.pack_hash

    def rerun_lookup(self, recorded_hash: str | None) -> tuple[str | None, str | None]:
        """Look the recorded runbook query up again, recording nothing: (recorded, re-run)
        hash of the answer (its run id and free-text matches' raw scores left out)."""
        del recorded_hash
        outcomes = self.lineage.of_kind(CtxKind.OUTCOME)
        if outcomes and "purged" in outcomes[-1].properties:
            # A legal purge removed the recorded answer (context_graph/purge.py): the re-run
            # has nothing to be compared with, and that is the purge, not a changed answer.
            purge_id = outcomes[-1].properties.get("purge_id")
            self.add(
                "data_purged",
                f"the recorded answer's text was purged (purge run {purge_id})",
                outcomes[-1].seq,
            )
            self.not_compared = (
                f"not compared: the recorded answer's text was removed by a legal purge "
                f"(purge run {purge_id})"
            )
            return None, None
        raw = outcomes[-1].properties.get("result") if outcomes else None
        try:
            request = json.loads(str(self.run.get("payload")))
            recorded = json.loads(raw) if isinstance(raw, str) else None
            options = request.get("options") or {}
            query = RunbookQuery(
                target=LookupTarget(str(options.get("target"))),
                value=str(options.get("value")),
                subject_id=self.subject_name(),
                purpose=str(self.run.get("purpose")),
                as_of=_parse_time(self.run.get("as_of")),
                known_at=_parse_time(self.run.get("known_at")),
                known_at_asked=bool(options.get("known_at_asked", False)),
                # A TEXT placed at the start of the incident it names: read again as recorded.
                incident_words=options.get("incident_words") or None,
            )
        except (ValueError, TypeError, AttributeError) as exc:
            self.add(
                "rerun_failed", f"the recorded lookup does not parse: {_unquoted_problem(exc)}", 0
            )
            return None, None
        if not isinstance(recorded, dict):
            self.add("rerun_failed", "the run kept no answer to compare", 0)
            return None, None
        # The versions the run read, as for an investigation's re-run.
        executor = self.executor.pinned(self.recorded_versions(), rankings=self.rankings)
        lookup = RunbookLookup(self.driver, executor=executor, record=False)
        answer = lookup.lookup(query).model_dump(mode="json")
        try:  # read through today's model: fields added since the run compare as defaults
            recorded = RunbookAnswer.model_validate(recorded).model_dump(mode="json")
        except ValueError as exc:
            self.add(
                "rerun_failed", f"the recorded answer does not parse: {_unquoted_problem(exc)}", 0
            )
            return None, None
        recorded_digest, replayed_digest = _answer_digest(recorded), _answer_digest(answer)
        if recorded_digest != replayed_digest:
            differing = _differing_fields(_compared(recorded), _compared(answer))
            fields = ", ".join(differing)
            if differing == ["text_matches"] and self.reranked():
                # Only the free-text matches moved, and the calls that rank them read the
                # same records: the ranking moved, not the answer (one cause, one kind).
                self.answer_reranked = True
                self.add(
                    "ranking_changed",
                    "the re-run lookup ranks its text matches otherwise (text_matches: "
                    "their order or fit): it reads today's fulltext ranking of the same "
                    "records (ranking_changed above); the runbook it answers with and the "
                    "rest of the answer are as recorded",
                    outcomes[-1].seq,
                )
                return recorded_digest, replayed_digest
            self.add(
                "answer_changed",
                f"the re-run lookup answers differently from the recorded answer: {fields}"
                f"{self.ranking_note()}",
                outcomes[-1].seq,
            )
        return recorded_digest, replayed_digest


def _score6(score: Any) -> float | None:
    """A fulltext score as its call's `hits` keep it (six significant digits)."""
    return float(f"{float(score):.6g}") if isinstance(score, int | float) else None


def _hits_differ(returned: int, kept: int, *, withheld: bool = False) -> str:
    """Why a call that kept its hits is no re-ranking: what of them is not read as then.
    `withheld`: how many hits the call kept is withheld from the reader (it counts records
    the reader is not shown to read now), and so is how many are not returned."""
    if withheld and returned < kept:
        return (
            ": some of the records the call read (its recorded hits) are not returned now, "
            "so it is not a re-ranking alone; replay cannot say why for records the run kept "
            "no text of (lines on the run's evidence name what it can)"
        )
    if withheld:
        return (
            ": the records the call read (its recorded hits) are all returned now, but not "
            "all as the call read them (other text, labels or fields), so it is not a "
            "re-ranking alone"
        )
    if returned < kept:
        return (
            f": {kept - returned} of the {kept} records the call read (its recorded hits) are "
            "not returned now, so it is not a re-ranking alone; replay cannot say why for "
            "records the run kept no text of (lines on the run's evidence name what it can)"
        )
    return (
        f": the {kept} records the call read (its recorded hits) are all returned now, but "
        "not all as the call read them (other text, labels or fields), so it is not a "
        "re-ranking alone"
    )


def _retracted_for(record: Any, known_at: datetime, subject: Any) -> bool:
    """Whether `record` is a tombstone in force at `known_at` that `subject` may read (a
    tombstone keeps the record's labels): the subject reads the record as retracted then."""
    return (
        record.status == RecordStatus.RETRACTED.value
        and record.recorded_at is not None
        and record.recorded_at <= known_at
        and all(label in subject.labels for label in record.acl)
        and subject.purpose in record.purposes
    )


def _relabelled(eid: str, records: dict[str, list[Any]], subject: Any) -> bool:
    """Whether record `eid` (a node id or a relationship key) is still known and its
    current record, or a relationship's end's, now has labels or purposes `subject` (its
    grants of now) lacks: a record the run read whose labels changed. False when the
    record is gone, which is no label change."""

    def unreadable(of: str) -> bool:
        current = [r for r in records.get(of, []) if r.current]
        return any(
            not set(r.acl) <= set(subject.labels) or subject.purpose not in r.purposes
            for r in current
        )

    if not any(r.current for r in records.get(eid, [])):
        return False
    return unreadable(eid) or any(unreadable(end) for end in edge_ends(eid))


def _purged_rows(purges: list[str]) -> str:
    """Why a call's rows may differ when a legal purge removed text the run recorded."""
    runs = ", ".join(purges[:3]) + (f" and {len(purges) - 3} more" if len(purges) > 3 else "")
    return (
        f": likely cause: a legal purge after the run (purge run {runs}) removed the text of "
        "records the run read, so what this call matches moved too; replay cannot name the "
        "rows (it never reads past the subject's grants)"
    )


def _element_drift_detail(kind: str, template: str, items: list[str], subject: str) -> str:
    """The detail of a drift kind a record the run saw can have (`_drifted_elements`).

    A record no longer visible is never described by its new labels: the reader of the
    report may lack them too.
    """
    names = ", ".join(items)
    if kind == "data_purged":
        return f"{template}: content of {names} was removed after the run (legal purge)"
    if kind == "data_retracted":
        return (
            f"{template}: {names} retracted for {subject} at the run's known_at: a retraction "
            "written after the run was dated into its time (not purged, and not a change of "
            "labels or grants)"
        )
    if kind == _DELETED:
        return (
            f"{template}: {names} no longer visible to {subject}: no record of it is known now "
            "(deleted from the KG: not purged, and not a change of labels or grants)"
        )
    if kind == "data_not_visible":
        return (
            f"{template}: {names} no longer visible to {subject} (not purged: the record's "
            "labels or purposes, or the subject's grants, changed since the run)"
        )
    if kind == "data_redacted_for_subject":
        return (
            f"{template}: {names} now reads its redacted view for {subject} (the record did "
            f"not change: the subject no longer holds `{PII_LABEL}`, which the full text needs)"
        )
    if kind == "data_unredacted_for_subject":
        return (
            f"{template}: {names} now reads its full text for {subject}, the run read its "
            f"redacted view (the record did not change: the subject holds `{PII_LABEL}` now)"
        )
    return f"{template}: {names} now reads other text than the run recorded (no purge recorded)"


# A record the run read that is no longer returned and of which no record is known now
# (deleted from the KG): reported as `data_not_visible`, in its own words.
_DELETED = "data_deleted"


# Why a call's rows differ is not known when no record it kept (evidence or rejection) names
# them (never read past the subject's grants to find out).
_UNNAMED_ROWS = (
    ": the call kept no record of its rows (no evidence, no rejection), so replay cannot name "
    "its records or say why they differ (lines on the run's evidence name what it can)"
)
_GRANTS_CHANGED_ROWS = (
    ": likely the subject's grants, which changed since the run (its principal record was "
    "re-recorded after the run's known_at; replay reads with the grants of now); the rows "
    "that differ are not among the records the run kept, so replay cannot name them or "
    "prove it"
)
_LABELS_CHANGED_ROWS = (
    ": likely the labels of a record the run read, which changed since the run (a record "
    "the run kept is now recorded with labels or purposes its subject lacks: its "
    "data_not_visible line; replay reads with the labels of now); the rows that differ are "
    "not among the records the run kept, so replay cannot name them or prove it"
)
_UNKEPT_ROWS = (
    ": the rows that differ are not among the records the run kept (its evidence and "
    "rejections), so replay cannot name them or say why (lines on the run's evidence name "
    "what it can)"
)


# Whether the current record of id or key `t` in $tenant (a relationship's key through its
# endpoints, `TYPE|from|to[|...]`, whose current records must be readable too: the key names
# them) is readable with labels `granted` for `purpose`: the templates' ACL, purpose and
# ceiling rule (cypher_templates/templates/_visibility.j2).
# Spelled out for the reader's grants ($granted, $purpose) and the run's subject's
# ($subject_granted, $subject_purpose): no Cypher is built from strings here.
_READABLE_BY_READER = (
    "(EXISTS { MATCH (x:KG {tenant: $tenant, id: t}) WHERE x.superseded_at IS NULL "
    "AND NOT (x:Principal OR x:Source) AND all(_a IN x.acl WHERE _a IN $granted) AND "
    "$purpose IN x.purposes } OR (t CONTAINS '|' AND EXISTS { MATCH (:KG {tenant: "
    "$tenant, id: split(t, '|')[1]})-[x {key: t}]->(:KG {tenant: $tenant, id: "
    "split(t, '|')[2]}) WHERE x.tenant = $tenant AND x.superseded_at IS NULL AND "
    "all(_a IN x.acl WHERE _a IN $granted) AND $purpose IN x.purposes AND NOT EXISTS "
    "{ MATCH (n:KG {tenant: $tenant}) WHERE n.id IN split(t, '|')[1..3] AND "
    "n.superseded_at IS NULL AND NOT (all(_a IN n.acl WHERE _a IN $granted) AND "
    "$purpose IN n.purposes) } }))"
)
_READABLE_BY_SUBJECT = (
    "(EXISTS { MATCH (x:KG {tenant: $tenant, id: t}) WHERE x.superseded_at IS NULL "
    "AND NOT (x:Principal OR x:Source) AND all(_a IN x.acl WHERE _a IN "
    "$subject_granted) AND $subject_purpose IN x.purposes } OR (t CONTAINS '|' AND "
    "EXISTS { MATCH (:KG {tenant: $tenant, id: split(t, '|')[1]})-[x {key: t}]->(:KG "
    "{tenant: $tenant, id: split(t, '|')[2]}) WHERE x.tenant = $tenant AND "
    "x.superseded_at IS NULL AND all(_a IN x.acl WHERE _a IN $subject_granted) AND "
    "$subject_purpose IN x.purposes AND NOT EXISTS { MATCH (n:KG {tenant: $tenant}) "
    "WHERE n.id IN split(t, '|')[1..3] AND n.superseded_at IS NULL AND NOT (all(_a IN "
    "n.acl WHERE _a IN $subject_granted) AND $subject_purpose IN n.purposes) } }))"
)


# The backdated ingests of a tenant written after a run that dated records into its time
# (graph_schema/backdating.py): at most 3, oldest first, those that explain a call's
# difference first (an ingest that dated a record among the call's rows now, $returned, read
# as the run's subject, or retracted one the run's subject can read; decided on the subject's
# view, so the same ingests and counts for every reader), else the oldest; with how many
# there are in all (`total`) and how many explain (`explaining`). Each one's records that
# explain the difference are named only when the reader may read them: every id is checked
# here, so no other leaves Neo4j; at most 10 of each are returned.
_BACKDATED_SHOWN = 3
_BACKDATED_INGESTS = (
    "MATCH (m:BackdatedIngest {tenant: $tenant}) "
    "WHERE m.at > $started AND m.earliest <= $known_at "
    "WITH m, (any(t IN m.targets WHERE t IN $returned) OR any(t IN coalesce(m.retracted, []) "
    "WHERE " + _READABLE_BY_SUBJECT + ")) AS explains ORDER BY m.at "
    "WITH collect({m: m, explains: explains}) AS ingests "
    "WITH size(ingests) AS total, [i IN ingests WHERE i.explains] AS explaining, ingests "
    "WITH total, size(explaining) AS explaining, "
    "CASE WHEN size(explaining) > 0 THEN explaining ELSE ingests END AS chosen "
    "UNWIND chosen[..$shown] AS i "
    "WITH total, explaining, i.m AS m, i.explains AS explains "
    "RETURN total, explaining, explains, m.at AS at, m.origin AS origin, m.earliest AS earliest, "
    "size(m.targets) AS dated, "
    "[t IN m.targets WHERE $named AND t IN $returned AND "
    + _READABLE_BY_READER
    + "][..10] AS returned, "
    "[t IN coalesce(m.retracted, []) WHERE $named AND "
    + _READABLE_BY_READER
    + " AND "
    + _READABLE_BY_SUBJECT
    + "][..10] AS retracted "
    "ORDER BY at"
)


# A template ranked by the tenant's fulltext index (its scores are BM25 over the whole
# index, so records written after a run move the ranking of the records the run read).
_RANKED_BY_FULLTEXT = "db.index.fulltext.queryNodes"
_RANKING_CHANGED = (
    "the same records, ranked otherwise: fulltext scores moved, because records written "
    "after the run changed the tenant index's statistics; the records the run read are "
    "unchanged"
)


def headline_drift(drift: list[Drift]) -> Drift | None:
    """The drift a one-line verdict names: the first whose cause is known, passing over a
    call's line that says replay cannot tell why its rows differ (a later line, such as the
    purge or retraction of a record the run read, names a cause); else the first."""
    unexplained = (_UNNAMED_ROWS, _UNKEPT_ROWS, _LABELS_CHANGED_ROWS)
    known = [d for d in drift if not d.detail.endswith(unexplained)]
    return known[0] if known else (drift[0] if drift else None)


# Drift kinds that say the re-run answered differently from the recorded run.
_ANSWER_DRIFT = frozenset({"pack_hash_mismatch", "claims_changed", "answer_changed"})
# Drift that says what the run's subject may read now, not that the run or a record changed.
_GRANT_DRIFT = frozenset(
    {
        "data_not_visible",
        "data_redacted_for_subject",
        "data_unredacted_for_subject",
        "subject_grants_changed",
        "record_labels_changed",
    }
)


class _CannotReplay(Exception):
    """Replay cannot re-execute anything (reported as drift, not raised to the user)."""


def _claim_digest(claims: Any) -> str:
    """What a claim says, independent of ids and order: statement, status, evidence."""
    return sha256_of(
        sorted(
            [
                str(c.get("statement")),
                str(c.get("epistemic_status")),
                sorted(str(e) for e in c.get("evidence_ids") or []),
            ]
            for c in claims
            if isinstance(c, dict)
        )
    )


# A free-text match's raw scores: BM25 over the tenant's whole index, so any record ingested
# since the run (even one the run could not see) moves them; its rank and fit do not move.
_RAW_SCORES = frozenset({"score", "fulltext_score"})


def _compared(answer: dict[str, Any]) -> dict[str, Any]:
    """What replay compares of a lookup's answer: all of it but the id of the run that gave
    it, the tenant that asked (the run's own, recorded with it; older answers do not carry
    it) and the raw scores of its free-text matches (their order, ids, fit still count)."""
    compared = {k: v for k, v in answer.items() if k not in {"run_id", "tenant"}}
    matches = compared.get("text_matches")
    if isinstance(matches, list):
        compared["text_matches"] = [
            {k: v for k, v in m.items() if k not in _RAW_SCORES} if isinstance(m, dict) else m
            for m in matches
        ]
    return compared


def _answer_digest(answer: dict[str, Any]) -> str:
    """The hash of what replay compares of a lookup's answer (`_compared`)."""
    return sha256_of(_compared(answer))


def _differing_fields(recorded: dict[str, Any], replayed: dict[str, Any]) -> list[str]:
    """The answer's fields that differ, a nested object's by `field.subfield`, sorted."""
    fields: list[str] = []
    for key in sorted(set(recorded) | set(replayed)):
        was, now = recorded.get(key), replayed.get(key)
        if sha256_of(was) == sha256_of(now):
            continue
        if isinstance(was, dict) and isinstance(now, dict):
            fields += [f"{key}.{sub}" for sub in _differing_fields(was, now)]
        else:
            fields.append(key)
    return fields


# Every command's re-run: the recorded request driven again through its run session.
_RERUNS = {
    "investigate": _Replayer.rerun_investigation,
    "runbook": _Replayer.rerun_lookup,
}


def _stop_reason(lineage: RunLineage) -> str:
    """The recorded outcome's stop reason ("error", ...), or "no outcome recorded"."""
    outcomes = lineage.of_kind(CtxKind.OUTCOME)
    reason = outcomes[-1].properties.get("stop_reason") if outcomes else None
    return f"stop: {reason}" if isinstance(reason, str) and reason else "no outcome recorded"


def _interrupted(lineage: RunLineage) -> bool:
    """A run Ctrl-C ended: recorded `failed` with the stop reason `interrupted`."""
    outcomes = lineage.of_kind(CtxKind.OUTCOME)
    return bool(outcomes) and outcomes[-1].properties.get("stop_reason") == INTERRUPTED


def _not_reproduced_note(status: Any, pack_recorded: bool, interrupted: bool = False) -> str:
    """Why a run's pack_hash is not compared: it has no finished result to re-run."""
    if status == RunStatus.FAILED.value and interrupted:
        what = "the run was interrupted (Ctrl-C) before it finished"
    elif status == RunStatus.FAILED.value:
        what = "the run failed before it finished"
    elif status == RunStatus.INCOMPLETE.value:
        what = "the run never finished (its process was killed, or it is still running)"
    else:
        what = f"the run ended {status or 'without a status'}"
    if pack_recorded:
        return f"not compared: {what}; its recorded pack is not re-run"
    return f"not compared: {what}; no pack was recorded"


def _refuse_an_earlier_holders_run(
    driver: neo4j.Driver,
    run_id: str,
    run: dict[str, Any],
    kg_database: str | None,
    asker: str | None = None,
) -> None:
    """NotAuthorized (exit 3) when the run's subject holds no grants of its own now: an
    earlier holder of its id than the one holding it now (re-executing its calls with the
    current holder's grants would compare someone else's reads), or a holder retracted and
    never written again (it may read nothing now; its old grants are never taken back up).
    `asker`: the subject that asked (`tenant/id`), named in the commands the line hints."""
    tenant, subject_id = run.get("tenant"), run.get("subject_id")
    if not isinstance(tenant, str) or not isinstance(subject_id, str):
        return
    held = read_incarnations(driver, tenant, [subject_id], kg_database).get(subject_id, [])
    if not held:
        return
    current = held[-1] if held[-1].retracted_at is None else None
    number = run_incarnation(run, held)
    if current is not None and (number is None or number == current.number):
        return
    retracted = next((i.retracted_at for i in held if i.number == number), None)
    when = f"retracted {iso_utc(retracted)}" if retracted is not None else "retracted"
    who = (
        f"is an earlier principal's run: {tenant}/{subject_id} ({when}) has been written "
        "again for someone else"
        if current is not None
        else f"is a retracted principal's run: {tenant}/{subject_id} was {when} and holds no "
        "grants now"
    )
    # The hinted commands work as pasted: with the subject that asked (none may be set).
    by = f" --subject {asker}" if asker else ""
    raise NotAuthorized(
        f"run {run_id} {who}, and replay re-executes a run with its subject's grants of now, "
        "which that principal no longer has; "
        f"`investigator trace {run_id}{by} --purpose audit` shows what it read, "
        f"`investigator verify {run_id}{by} --purpose audit` checks its chain and anchor"
    )


def replay_run(
    driver: neo4j.Driver,
    run_id: str,
    *,
    ctx_database: str | None = None,
    kg_database: str | None = None,
    reader: ReplayReader | None = None,
    asker: str | None = None,
) -> ReplayReport:
    """Replay run `run_id` (BadInput, exit 2, if it was never recorded). `reader`: who reads
    the report (`replay_reader`); drift lines name only records it may read (none without).
    `asker`: the subject that asked (`tenant/id`), named in a refusal's hinted commands.
    The re-run's span names `run_id` (telemetry.replaying), never an id no record holds."""
    with replaying(run_id):
        return _replay_run(
            driver, run_id, ctx_database=ctx_database, kg_database=kg_database, reader=reader,
            asker=asker,
        )  # fmt: skip


def _replay_run(
    driver: neo4j.Driver,
    run_id: str,
    *,
    ctx_database: str | None,
    kg_database: str | None,
    reader: ReplayReader | None,
    asker: str | None,
) -> ReplayReport:
    lineage = load_lineage(driver, run_id, database=ctx_database)
    _refuse_an_earlier_holders_run(driver, run_id, lineage.run_properties or {}, kg_database, asker)
    chain = verify_chain(lineage)
    rep = _Replayer(driver, lineage, kg_database, reader)
    status = rep.run.get("status")
    command = rep.run.get("command")
    unfinished = status in {RunStatus.INCOMPLETE.value, RunStatus.FAILED.value}
    if status == RunStatus.INCOMPLETE.value:
        rep.add(
            "run_incomplete",
            "the run never finished (its process was killed, or it is still running)",
        )
    elif status == RunStatus.FAILED.value and _interrupted(lineage):
        rep.add(
            "run_failed",
            "the run was interrupted (Ctrl-C) before it finished (stop: interrupted); "
            "no result to reproduce",
        )
    elif status == RunStatus.FAILED.value:
        rep.add("run_failed", f"the run failed ({_stop_reason(lineage)}); no result to reproduce")

    calls = lineage.of_kind(CtxKind.TOOL_CALL)
    matched_calls = 0
    if status == RunStatus.REFUSED.value and not calls:
        rep.check_refusal()
    subject = None
    if calls:
        try:
            subject = rep.subject()
        except _CannotReplay as exc:
            rep.add("subject_unavailable", str(exc), 0)
    if subject is not None:
        for node in calls:
            if rep.replay_tool_call(node, subject):
                matched_calls += 1
    if subject is not None and not rep.grants_changed_since_run():
        rep.name_relabelled_cause()
    ev_total, ev_matched = rep.replay_evidence() if subject is not None else (0, 0)

    pack_node, recorded_hash = rep.recorded_pack()
    replayed_hash: str | None = None
    pack_hash_note: str | None = None
    if pack_node is not None:
        rep.check_recorded_pack(pack_node, recorded_hash)
    rerun = _RERUNS.get(str(command)) if status in {"complete", "partial"} else None
    if rerun is not None:
        try:
            recorded_hash, replayed_hash = rerun(rep, recorded_hash)
        except InvestigatorError as exc:
            rep.add("rerun_failed", f"re-running the {command} failed: {exc}")
        except ValidationError as exc:  # a recorded request changed since: named, not quoted
            problem = _unquoted_problem(exc)
            rep.add("rerun_failed", f"the recorded request does not parse: {problem}")
        pack_match = recorded_hash is not None and replayed_hash == recorded_hash
        pack_hash_note = rep.not_compared
    elif unfinished or pack_node is not None:
        # Nothing to re-run: say why instead of comparing a hash with itself (issue 16). The
        # recorded pack_hash is kept when a pack was recorded; nothing was replayed.
        pack_match = False
        replayed_hash = None
        pack_hash_note = _not_reproduced_note(status, pack_node is not None, _interrupted(lineage))
    else:
        # No result to reproduce (a refused run): its admitted evidence is what the run
        # decided on, so the re-derived evidence must match it entirely.
        ev_nodes = lineage.of_kind(CtxKind.EVIDENCE)
        recorded_hash = evidence_digest(ev_nodes)
        reproduced = not calls or (subject is not None and ev_matched == ev_total)
        replayed_hash = recorded_hash if reproduced else None
        pack_match = replayed_hash == recorded_hash and status in {"complete", "partial", "refused"}

    if rerun is not None and pack_match and chain.chain_valid and not chain.problems:
        rep.settle_ranking()
    if rep.changed_answer():
        rep.note_decision_code()
    # Again once all re-ran: a holder's number only grows, so the run's holder both before and
    # now means every load of its subject in between was that holder, never a later one's.
    _refuse_an_earlier_holders_run(driver, run_id, lineage.run_properties or {}, kg_database, asker)
    verified = chain.chain_valid and pack_match and not rep.drift
    # The chain verified and what differs is what the run's subject may read now: its own
    # grants changed since the run, or every record it no longer reads is still known with
    # labels or purposes it lacks now (a routine ACL tightening). A record gone, changed in
    # place, purged or retracted, and a difference replay cannot name without a label change
    # shown, stay "not verified" (exit 1).
    kinds = {d.kind for d in rep.drift}
    relabelled_only = (
        bool(rep.relabelled)
        and kinds <= {"data_not_visible", "record_labels_changed"} | _ANSWER_DRIFT
    )
    by_grants = (
        chain.chain_valid
        and not chain.problems
        and not rep.record_gone
        and bool(kinds & _GRANT_DRIFT)
        and kinds <= _GRANT_DRIFT | _ANSWER_DRIFT
        and (rep.grants_changed_since_run() or relabelled_only)
    )
    return ReplayReport(
        run_id=run_id,
        verified=verified,
        pack_hash_match=pack_match,
        chain_valid=chain.chain_valid,
        status=status if isinstance(status, str) else None,
        command=command if isinstance(command, str) else None,
        recorded_pack_hash=recorded_hash,
        replayed_pack_hash=replayed_hash,
        tool_calls=len(calls),
        tool_calls_matched=matched_calls,
        evidence=ev_total,
        evidence_matched=ev_matched,
        drift=rep.drift,
        problems=[p.describe() for p in chain.problems],
        pack_hash_note=pack_hash_note,
        differs_by_grants_only=not verified and by_grants,
        notes=rep.notes,
        **_recorded_times(lineage),
    )


def _recorded_times(lineage: RunLineage) -> dict[str, Any]:
    """The report's times: the run's, as recorded (its `CtxRun` node), and their phrase."""
    root = next((n for n in lineage.nodes if n.kind == CtxKind.RUN), None)
    if root is None:
        return {}
    times = run_times(root.properties)
    quoting = times.quoting_fields()
    return {**times.model_dump(), "times": times.phrase(), "untrusted_fields": quoting}
