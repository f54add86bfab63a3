"""Who may read a recorded run, and what of its content they may see (issue 11).

Runs belong to a tenant and a subject. A reader (a subject named within its tenant, loaded
as of now) sees its own runs; the other runs of its tenant only under the purpose `audit`;
never another tenant's runs. Content shown from a run is re-filtered by the reader's grants
of now: a recorded evidence the reader may not read today (ACL, purpose, tenant, a record
tightened or retracted since, or PII the reader lacks `pii` for) is shown as withheld under
a mask of its place in the run (`withheld#<seq>`), never printed, and so is every text derived
from it (claim statements, pack entries, any string that quotes it) and the id of a claim
citing it (a hash of its statement). Nothing else of a withheld
evidence is shown either: not its evidence id or any hash over its content (a guess of its text
could be tested on them), its KG element id (anywhere in the run: plan entities, tool-call
parameters, other evidence's context), locator, ACL, times, source, redacted-view flag or
scores. A rejected candidate is re-checked the same way (its record then and now): one the
reader may not read is shown as its candidate id, withheld, and its element id is hidden
like a withheld evidence's. `ContentFilter` decides all of this, for every output format and
for retries.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import neo4j
from pydantic import BaseModel, ConfigDict

from cypher_templates.executor import TemplateExecutor
from cypher_templates.subject import PrincipalRecord, SubjectRef, read_principal, subject_for
from investigator.context_graph.chain import evidence_digest
from investigator.context_graph.incarnation import belongs_to
from investigator.context_graph.lineage import UnknownRun
from investigator.context_graph.models import (
    TOOL_CALL_HITS,
    CtxKind,
    CtxNodeRecord,
    RunLineage,
    parse_hit,
)
from investigator.context_graph.reread import reads_the_same_rows
from investigator.errors import NotAuthorized
from investigator.untrusted_text import unquoted_detail

AUDIT_PURPOSE = "audit"
# Why a recorded KG record is withheld when it is not found in the run's tenant: gone, or,
# in a run whose chain or anchor does not verify, not found under what the run now claims.
RECORD_GONE = "record gone"
NOT_FOUND_UNVERIFIED = "not found (the run does not verify)"
# Why a recorded evidence is withheld when a legal purge blanked its recorded text: its KG
# record is still there (its text removed), so "record gone" would say what is not true.
TEXT_PURGED = "text purged"
WITHHELD = "withheld"
# Keys of an evidence-like dict that carry its text (or a hash a guess could be tested on).
_TEXT_KEYS = frozenset(
    {"content", "name", "title", "text", "snippet", "statement", "content_hash", "text_hash"}
)
# Shorter recorded texts are not scrubbed by substring (they would match ordinary words).
_MIN_QUOTE = 12
# What replaces a withheld text, or a withheld element's id inside a text.
WITHHELD_TEXT = "[withheld]"
# The recorded properties a withheld evidence or rejection node keeps: the chain's own
# bookkeeping, its masked evidence (or candidate) id and where it sits in the run (what
# `trace` prints for it), and the reason. Its KG element ids, version, source, locator,
# detail, replacement and every hash over its content (its chain `hash` too) are dropped.
_WITHHELD_NODE_KEYS = frozenset(
    {
        "run_id",
        "kind",
        "seq",
        "ctx_id",
        "prev_hash",
        "prev_kind",
        "envelope",
        "model",
        "evidence_id",
        "tool_call_id",
        "tool_call_seq",
        "candidate_id",
        "purged",
        "purge_id",
        WITHHELD,
    }
)
# Left out when a node's shown properties are compared with its recorded ones: its chain
# links and the run's head (hashes over nodes, withheld apart), its content (compared parsed).
_LINKS_AND_CONTENT = frozenset({"hash", "prev_hash", "head_hash", "payload", "result"})
# The run node's note of the first seq whose chain hashes a reader is not shown.
HASHES_WITHHELD_FROM = "hashes_withheld_from"
# Keys under which a recorded dict names the KG element it stands for (plan entities,
# evidence, rejections): such a dict naming a withheld element is withheld as a whole.
_ELEMENT_KEYS = ("element_id", "id")
# Characters a KG id is made of: an id found inside a text is bounded by none of them.
_ID_BEFORE = r"(?<![A-Za-z0-9_:@/.\-])"
_ID_AFTER = r"(?![A-Za-z0-9_:@/\-]|\.[A-Za-z0-9_])"


def _whole_ids_pattern(ids: Iterable[str]) -> re.Pattern[str] | None:
    """A pattern matching any of `ids` as a whole id (longest first), or None for none."""
    ordered = sorted(ids, key=len, reverse=True)
    if not ordered:
        return None
    return re.compile(_ID_BEFORE + "(?:" + "|".join(map(re.escape, ordered)) + ")" + _ID_AFTER)


# The KG records of the elements a run's evidence came from: every version of each, in the
# run's tenant only. Nodes by (tenant, id) (indexed); relationships by their key through their
# endpoints (`TYPE|from|to[|...]`), so no relationship scan. Read-only, parameters only.
_ELEMENT_RECORDS = (
    "UNWIND $ids AS eid "
    "MATCH (x:KG {tenant: $tenant, id: eid}) "
    "RETURN eid AS id, x.version AS version, coalesce(x.acl, []) AS acl, "
    "coalesce(x.purposes, []) AS purposes, x.redacted_content IS NOT NULL AS has_redacted, "
    "x.status AS status, x.superseded_at IS NULL AS current, x.purged_at IS NOT NULL AS purged, "
    "x.recorded_at AS recorded_at "
    "UNION ALL "
    "UNWIND $edges AS e "
    "MATCH (:KG {tenant: $tenant, id: e.from})-[x {key: e.key}]->(:KG {tenant: $tenant, id: e.to}) "
    "WHERE x.tenant = $tenant "
    "RETURN DISTINCT e.key AS id, x.version AS version, coalesce(x.acl, []) AS acl, "
    "coalesce(x.purposes, []) AS purposes, false AS has_redacted, "
    "x.status AS status, x.superseded_at IS NULL AS current, false AS purged, "
    "x.recorded_at AS recorded_at"
)


class RunReader(BaseModel):
    """A subject reading runs: its grants of now and the purpose it reads under (if any).

    Not a `Subject`: a reader may give no purpose (content is then read under the run's).
    """

    model_config = ConfigDict(frozen=True)

    principal: PrincipalRecord
    purpose: str | None = None

    @property
    def audits(self) -> bool:
        """Reading under `audit`: the tenant's runs, not only its own."""
        return self.purpose == AUDIT_PURPOSE


def load_reader(executor: Any, ref: SubjectRef, purpose: str | None) -> RunReader:
    """The reader's current principal record in its tenant; unknown or a purpose not held: 3."""
    record = read_principal(executor, ref)
    if purpose is not None and purpose not in record.purposes:
        raise NotAuthorized(f"subject {ref} is not allowed purpose {purpose!r}")
    return RunReader(principal=record, purpose=purpose)


def check_run_readable(
    reader: RunReader, run_id: str, run: dict[str, Any] | None, *, replaying: bool = False
) -> None:
    """Unless `reader` may read run `run_id` (its properties `run`): another tenant's run is
    answered exactly like a run never recorded (BadInput, exit 2: its existence is that
    tenant's), another subject's run of the reader's tenant is NotAuthorized (exit 3).
    `replaying`: the line's hint names what works for replay (an earlier holder's run is
    replayed by nobody: trace and verify read it under audit)."""
    tenant = run.get("tenant") if run else None
    subject_id = run.get("subject_id") if run else None
    who = reader.principal
    if tenant != who.tenant:
        raise UnknownRun(run_id)
    if not belongs_to(who, run or {}) and not reader.audits:
        # The same id's earlier holder is another subject too (docs/security.md rule 5).
        earlier = " (an earlier principal of this id)" if subject_id == who.id else ""
        how = (
            f"reads it only with --purpose {AUDIT_PURPOSE}"
            if AUDIT_PURPOSE in who.purposes
            else f"may not read it (reading another subject's run needs purpose {AUDIT_PURPOSE})"
        )
        if earlier and replaying and AUDIT_PURPOSE in who.purposes:
            # Replay refuses an earlier holder's run to every reader: hint what does work.
            how = (
                "may not replay it (replay re-executes a run with its subject's grants of "
                f"now, which that principal no longer has): `investigator trace {run_id} "
                f"--subject {who.ref} --purpose {AUDIT_PURPOSE}` shows what it read, "
                f"`investigator verify {run_id} --subject {who.ref} --purpose {AUDIT_PURPOSE}` "
                "checks its chain and anchor"
            )
        raise NotAuthorized(f"run {run_id} is another subject's run{earlier}: {who.ref} {how}")


# How a purge run's question names the record it purged (investigator/cli/purge.py).
PURGE_QUESTION = "legal purge of "
# Why a purge run's id is withheld from a reader other than the purger, when the reader's
# grants allow the run: the same whether the id has no record or one the reader may not read.
PURGED_HIDDEN = "no record you may read"


def purged_element(run: dict[str, Any]) -> str | None:
    """The KG id a purge run names in its question, else None."""
    question = run.get("question")
    if run.get("command") != "purge" or not isinstance(question, str):
        return None
    return question.removeprefix(PURGE_QUESTION) if question.startswith(PURGE_QUESTION) else None


def own_run(reader: RunReader, run: dict[str, Any]) -> bool:
    """Whether the run was recorded for `reader` itself (its tenant, id and incarnation)."""
    return belongs_to(reader.principal, run)


def unreadable_ids(
    driver: neo4j.Driver,
    reader: RunReader,
    tenant: str,
    element_ids: Iterable[str],
    database: str | None = None,
) -> set[str]:
    """Of node ids of `tenant`, those `reader` may not read now under its purpose: the rule
    `ContentFilter` applies to an id a run names alone (a purge run names the record it
    purged: an auditor without its labels must not learn the id from it)."""
    ids = sorted(set(element_ids))
    rule = ReadRule(reader, reader.purpose, tenant)
    records = read_element_records(driver, tenant, ids, database)
    return {eid for eid in ids if rule.current_reason(records.get(eid, [])) is not None}


class _ElementRecord(BaseModel):
    version: int | None
    acl: tuple[str, ...]
    purposes: tuple[str, ...]
    has_redacted: bool
    status: str | None
    current: bool
    # A legal purge removed this record's text (graph_schema/purge.py sets `purged_at`).
    purged: bool = False
    # When the record was recorded (a retraction's tombstone: when it took effect for reads).
    recorded_at: datetime | None = None


def _native_time(value: Any) -> datetime | None:
    """A Neo4j DateTime as a Python datetime (None when it is not one)."""
    native = value.to_native() if hasattr(value, "to_native") else value
    return native if isinstance(native, datetime) else None


def read_element_records(
    driver: neo4j.Driver, tenant: str, element_ids: Iterable[str], database: str | None
) -> dict[str, list[_ElementRecord]]:
    """Every record of each KG id (node id or relationship key) of `tenant`, by id."""
    ids = sorted(set(element_ids))
    if not ids or not tenant:
        return {}
    edges = []
    for key in ids:
        ends = edge_ends(key)
        if ends:
            edges.append({"key": key, "from": ends[0], "to": ends[1]})
    rows, _, _ = driver.execute_query(
        _ELEMENT_RECORDS,
        ids=ids,
        edges=edges,
        tenant=tenant,
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    out: dict[str, list[_ElementRecord]] = {}
    for row in rows:
        out.setdefault(str(row["id"]), []).append(
            _ElementRecord(
                version=row["version"] if isinstance(row["version"], int) else None,
                acl=tuple(str(x) for x in row["acl"]),
                purposes=tuple(str(x) for x in row["purposes"]),
                has_redacted=bool(row["has_redacted"]),
                status=row["status"] if isinstance(row["status"], str) else None,
                current=bool(row["current"]),
                purged=bool(row["purged"]),
                recorded_at=_native_time(row["recorded_at"]),
            )
        )
    return out


class ReadRule:
    """Whether a reader may read a run's KG records now: the grants of now (tenant, the
    purpose read under), and each record's ACL and purposes, as the templates' visibility
    predicate decides them. One statement of the rule for every audit surface."""

    def __init__(
        self,
        reader: RunReader,
        purpose: str | None,
        run_tenant: str,
        verified: bool = True,
        tenant_changed: bool = False,
    ) -> None:
        self.reader = reader
        self.purpose = purpose
        self.run_tenant = run_tenant
        # Anchored in another tenant than `run_tenant` (tampered): read as another tenant's.
        self.tenant_changed = tenant_changed
        # A run that does not verify may name records it never read (an edited id, version
        # or tenant): a record not found is then no proof that it is gone.
        self.gone = RECORD_GONE if verified else NOT_FOUND_UNVERIFIED

    def _allows(self, acl: Iterable[str], purposes: Iterable[str] | None) -> bool:
        labels = set(self.reader.principal.labels)
        if not set(acl) <= labels:
            return False
        return purposes is None or self.purpose in set(purposes)

    def _grants_reason(self) -> str | None:
        """Why nothing of the run's KG content may be shown to the reader, or None."""
        if self.run_tenant != self.reader.principal.tenant or self.tenant_changed:
            return "tenant"
        if self.purpose is None or self.purpose not in self.reader.principal.purposes:
            return "purpose"
        return None

    def current_reason(self, records: list[_ElementRecord]) -> str | None:
        """Why an element named only by id (a replacement, a purged record) is hidden now,
        or None."""
        grants = self._grants_reason()
        if grants is not None:
            return grants
        current = [r for r in records if r.current]
        if not current:
            return self.gone
        if any(not self._allows(r.acl, r.purposes) for r in current):
            return "acl"
        return None


class ContentFilter(ReadRule):
    """Decides which recorded evidence of one run a reader may see now, and scrubs the rest."""

    def __init__(
        self,
        driver: neo4j.Driver,
        reader: RunReader,
        lineage: RunLineage,
        kg_database: str | None = None,
        *,
        tenant_changed: bool = False,
        verified: bool = True,
        executor: TemplateExecutor | None = None,
    ) -> None:
        """`tenant_changed`: the run was anchored in another tenant than the one it now names
        (tampered): its KG content is withheld as another tenant's, and no record is read.
        `verified` false: the run's chain or anchor does not verify. `executor`: the KG
        executor a rows hash is checked through (a long-lived process passes its own)."""
        run = lineage.run_properties or {}
        run_purpose = run.get("purpose")
        # Content is read under the reader's purpose, else the run's; either must be held now.
        purpose = reader.purpose or (run_purpose if isinstance(run_purpose, str) else None)
        self.run_purpose = run_purpose if isinstance(run_purpose, str) else None
        super().__init__(reader, purpose, str(run.get("tenant") or ""), verified, tenant_changed)
        self.executor = executor or TemplateExecutor(driver, database=kg_database)
        self.hash_of: dict[str, str] = {}
        self.rejection_hash_of: dict[str, str] = {}
        seq_of: dict[str, int] = {}  # evidence or candidate id -> its node's seq in the run
        calls_of: dict[str, set[str]] = {}  # evidence id -> the tool calls that read it
        evidence: dict[str, dict[str, Any]] = {}
        element_ids: dict[str, set[str]] = {}  # evidence id -> the KG ids it was read from
        purged_evidence: set[str] = set()  # evidence whose recorded text a purge blanked
        for node in lineage.of_kind(CtxKind.EVIDENCE):
            payload = node.payload()
            ev_id = node.properties.get("evidence_id")
            if isinstance(ev_id, str):
                evidence[ev_id] = payload if isinstance(payload, dict) else {}
                if "purged" in node.properties and not isinstance(payload, dict):
                    purged_evidence.add(ev_id)
                self.hash_of[ev_id] = str(node.properties.get("hash") or "")
                seq_of.setdefault(ev_id, node.seq)
                call = node.properties.get("tool_call_id")
                if isinstance(call, str):
                    calls_of.setdefault(ev_id, set()).add(call)
                recorded = node.properties.get("element_ids")
                if isinstance(recorded, list):
                    element_ids.setdefault(ev_id, set()).update(
                        x for x in recorded if isinstance(x, str) and x
                    )
        for node in lineage.of_kind(CtxKind.PACK):
            payload = node.payload()
            for item in _dicts_with(payload, "evidence_id"):
                evidence.setdefault(str(item["evidence_id"]), item)
                if isinstance(item.get("element_id"), str) and item["element_id"]:
                    element_ids.setdefault(str(item["evidence_id"]), set()).add(item["element_id"])
        for ev_id, ev in evidence.items():
            if isinstance(ev.get("element_id"), str) and ev["element_id"]:
                element_ids.setdefault(ev_id, set()).add(ev["element_id"])
        # Rejected candidates name KG records too (the run's subject could read them then):
        # each is re-checked like evidence, and so is the replacement a rejection points to.
        rejections: dict[str, dict[str, Any]] = {}
        for node in lineage.of_kind(CtxKind.REJECTION):
            payload = node.payload()
            cand_id = node.properties.get("candidate_id")
            if isinstance(cand_id, str) and isinstance(payload, dict):
                rejections.setdefault(cand_id, payload)
                self.rejection_hash_of.setdefault(cand_id, str(node.properties.get("hash") or ""))
                seq_of.setdefault(cand_id, node.seq)
        replacements = {
            str(r["replacement"])
            for r in rejections.values()
            if isinstance(r.get("replacement"), str)
        }
        named = {
            str(e["element_id"])
            for e in [*evidence.values(), *rejections.values()]
            if e.get("element_id")
        }
        # A purged evidence's text is blanked: its KG ids are the ones its node still keeps.
        named |= {eid for ev_id in purged_evidence for eid in element_ids.get(ev_id, set())}
        # A relationship shows its two ends: each must be readable too, as a template reads
        # a relationship only when both its nodes are visible.
        ends = {end for eid in named for end in edge_ends(eid)}
        # A purge run names the record it purged: read with the rest, checked below.
        purged = purged_element(run)
        also = {purged} if purged is not None else set()
        # A runbook search's calls name the records their rows were (`hits`): each is
        # re-checked like a rejected candidate's, and one the reader may not read is masked.
        hit_ids = {
            parsed[0]
            for node in lineage.of_kind(CtxKind.TOOL_CALL)
            for entry in node.properties.get(TOOL_CALL_HITS) or []
            if (parsed := parse_hit(entry)) is not None
        }
        also |= hit_ids
        # Nothing of the run's KG content may be shown (another tenant's run, a purpose not
        # held): no record is read either, so a reader's grants are never widened to decide.
        records = (
            {}
            if self._grants_reason() is not None
            else read_element_records(
                driver, self.run_tenant, named | replacements | ends | also, kg_database
            )
        )
        self.withheld: dict[str, str] = {}
        quotes: set[str] = set()
        for ev_id, ev in evidence.items():
            eid = str(ev.get("element_id") or "")
            reason: str | None
            if ev_id in purged_evidence and not eid:
                reason = self._purged_reason(element_ids.get(ev_id, set()), records)
            else:
                reason = self._reason(ev, records.get(eid, [])) or self._ends_reason(eid, records)
            if reason is not None:
                self.withheld[ev_id] = reason
                for key in ("content", "title", "name"):
                    text = ev.get(key)
                    if isinstance(text, str) and len(text) >= _MIN_QUOTE:
                        quotes.add(text)
        self.quotes = sorted(quotes, key=len, reverse=True)
        # The KG ids of withheld elements, with why: never shown anywhere in the run. An id
        # also behind evidence the reader may read is readable; what the asker typed (the
        # question, the service) is the run's own metadata and stays as recorded.
        typed = {v for v in (run.get("question"), run.get("service")) if isinstance(v, str)}
        readable = {
            eid for ev_id, ids in element_ids.items() if ev_id not in self.withheld for eid in ids
        }
        self.hidden_ids: dict[str, str] = {}
        for ev_id, reason in sorted(self.withheld.items()):
            for eid in sorted(element_ids.get(ev_id, set()) - readable - typed):
                self.hidden_ids.setdefault(eid, reason)
        # A rejected candidate the reader may not read now is withheld like evidence (its
        # element id, version, detail and replacement), and so is a replacement it names.
        self.withheld_candidates: dict[str, str] = {}
        for cand_id, rejection in sorted(rejections.items()):
            eid = str(rejection.get("element_id") or "")
            reason = (
                self.withheld.get(cand_id)
                or self._rejection_reason(rejection, records.get(eid, []))
                or self._ends_reason(eid, records)
            )
            if reason is None:
                continue
            self.withheld_candidates[cand_id] = reason
            if eid and eid not in readable | typed:
                self.hidden_ids.setdefault(eid, reason)
        for eid in sorted((replacements | hit_ids) - readable - typed):
            reason = self.current_reason(records.get(eid, []))
            if reason is not None:
                self.hidden_ids.setdefault(eid, reason)
        # A purge run names the record it purged: hidden like any id the reader may not
        # read now (its question too, though it is the run's own metadata), except from the
        # purger: it typed the id, and its own run shows no more than it typed.
        if purged is not None and not own_run(reader, run):
            reason = self.current_reason(records.get(purged, []))
            if reason is not None:
                # One reason whether the id has no record or one the reader may not read: a
                # refused purge of either is recorded alike, and must read alike.
                hidden = PURGED_HIDDEN if reason in ("acl", "record gone") else reason
                self.hidden_ids.setdefault(purged, hidden)
                typed.discard(str(run.get("question")))
        # A withheld evidence or candidate id is a hash of the record's id, version and text,
        # so a guess of the text could be tested on it offline: it is shown as a mask made
        # of its node's place in the run alone. So are the hashes computed over its content:
        # its chain node's, the rows of the tool call that read it, the pack holding it.
        self.masks: dict[str, str] = {}
        for item_id in [*self.withheld, *self.withheld_candidates]:
            seq = seq_of.get(item_id)
            self.masks.setdefault(item_id, f"{WITHHELD}#{seq if seq is not None else '?'}")
        self.hidden_hashes = {
            h
            for item_id in self.masks
            for h in (self.hash_of.get(item_id), self.rejection_hash_of.get(item_id))
            if h
        }
        withheld_calls = {c for ev_id in self.withheld for c in calls_of.get(ev_id, set())}
        # A call's rows hash covers every row it read: a withheld rejection's row too.
        withheld_calls |= {
            str(node.properties.get("tool_call_id"))
            for node in lineage.of_kind(CtxKind.REJECTION)
            if node.properties.get("candidate_id") in self.withheld_candidates
        }
        for node in lineage.of_kind(CtxKind.TOOL_CALL):
            if node.properties.get("tool_call_id") in withheld_calls:
                self.hidden_hashes.add(str(node.properties.get("rows_hash") or ""))
        for node in lineage.of_kind(CtxKind.PACK):
            if set(node.properties.get("evidence_ids") or []) & set(self.withheld):
                self.hidden_hashes.add(str(node.properties.get("pack_hash") or ""))
        if self.withheld:  # replay's digest of a run without a pack covers every evidence
            self.hidden_hashes.add(evidence_digest(lineage.of_kind(CtxKind.EVIDENCE)))
        self._mask_pattern = _whole_ids_pattern(self.masks)
        self._id_pattern = _whole_ids_pattern(self.hidden_ids)
        self.typed = typed
        self._set_hash_pattern()
        self._mask_withheld_claims(lineage)
        self.hashes_withheld_from = self._withhold_chain_hashes(lineage, run)

    def rows_withheld(self, call: CtxNodeRecord) -> bool:
        """Whether tool call `call`'s rows hash is withheld from the reader: some row it
        read is not shown to be readable by the reader now (docs/security.md rule 6)."""
        rows_hash = call.properties.get("rows_hash")
        return isinstance(rows_hash, str) and rows_hash in self.hidden_hashes

    def _mask_withheld_claims(self, lineage: RunLineage) -> None:
        """Mask the id of every claim built on content withheld from the reader.

        A claim id is an unkeyed hash of its statement, status and evidence ids
        (`claims/wording.py`), so a guess of a withheld statement could be tested on it offline: a
        claim citing withheld evidence, or whose statement is shown other than as recorded,
        is shown as `withheld#<its node's seq>` wherever its id is quoted. The stored id and
        every hash over it are unchanged.
        """
        for node in lineage.of_kind(CtxKind.CLAIM):
            claim_id = node.properties.get("claim_id")
            statement = node.properties.get("statement")
            cites_withheld = any(
                i in self.withheld for i in node.properties.get("evidence_ids") or []
            )
            altered = isinstance(statement, str) and self.text(statement) != statement
            if isinstance(claim_id, str) and claim_id and (cites_withheld or altered):
                self.masks.setdefault(claim_id, f"{WITHHELD}#{node.seq}")
        self._mask_pattern = _whole_ids_pattern(self.masks)

    def _set_hash_pattern(self) -> None:
        """The pattern of every hash in `hidden_hashes`, replaced wherever it is quoted."""
        self.hidden_hashes.discard("")
        self._hash_pattern = (
            re.compile("|".join(re.escape(h) for h in sorted(self.hidden_hashes)))
            if self.hidden_hashes
            else None
        )

    def _withhold_chain_hashes(self, lineage: RunLineage, run: dict[str, Any]) -> int | None:
        """Hide every chain hash from the first node shown altered on (the run's head too):
        each covers the node before it, so one would confirm a guess of what is withheld
        there (docs/security.md rule 6). The seq hidden from, or None: nothing altered."""
        first = self._first_altered_seq(lineage)
        # A call that kept no record of some rows it read: its rows hash covers rows this
        # filter cannot check one by one. A reader shown the whole run is shown it only when
        # it reads those very rows now (a record relabelled since may be among them).
        unkept = self._calls_with_unkept_rows(lineage)
        if first is None and (not unkept or self._reads_rows_now(unkept)):
            return None
        self.hidden_hashes.update(str(node.properties.get("rows_hash") or "") for node in unkept)
        self._set_hash_pattern()
        earlier = self._first_altered_seq(lineage)  # such a call may come first
        first = earlier if earlier is not None else first
        if first is None:  # a rows hash never recorded: nothing shown differs
            return None
        self.hidden_hashes.update(
            str(node.properties.get("hash") or "") for node in lineage.nodes if node.seq >= first
        )
        if first == 0:  # the request's own hash covers what its run node masks
            self.hidden_hashes.add(str(run.get("request_fingerprint") or ""))
        self._set_hash_pattern()
        return first

    @staticmethod
    def _calls_with_unkept_rows(lineage: RunLineage) -> list[CtxNodeRecord]:
        """The tool calls that read more rows than the run kept as evidence or rejections."""
        kept: dict[str, int] = {}
        for node in [*lineage.of_kind(CtxKind.EVIDENCE), *lineage.of_kind(CtxKind.REJECTION)]:
            call_id = str(node.properties.get("tool_call_id"))
            kept[call_id] = kept.get(call_id, 0) + 1
        return [
            node
            for node in lineage.of_kind(CtxKind.TOOL_CALL)
            if isinstance(rows := node.properties.get("row_count"), int)
            and rows > kept.get(str(node.properties.get("tool_call_id")), 0)
        ]

    def _reads_rows_now(self, calls: list[CtxNodeRecord]) -> bool:
        """Whether the reader, under its grants of now, reads every row `calls` read: each
        read again as the reader (never wider: an auditor's `pii` and `audit` purpose open
        more than the run's subject read, so of its rows those the run's purpose is open to,
        in the redacted view too, are hashed as recorded; context_graph/reread.py)."""
        if self._grants_reason() is not None or self.purpose is None:
            return False
        reader = subject_for(self.reader.principal, self.purpose)
        return reads_the_same_rows(self.executor, calls, reader, self.run_purpose)

    def _first_altered_seq(self, lineage: RunLineage) -> int | None:
        """The seq of the first node the reader is shown other than as recorded (withheld,
        or a value in it masked), its chain links aside; None when every node is as stored."""
        for node in sorted(lineage.nodes, key=lambda n: n.seq):
            props = node.properties
            if props.get("evidence_id") in self.withheld:
                return node.seq
            if node.kind == CtxKind.REJECTION and props.get("candidate_id") in (
                self.withheld_candidates
            ):
                return node.seq
            if any(i in self.withheld for i in props.get("evidence_ids") or []):
                return node.seq  # a pack or claim citing withheld evidence
            compared = {k: v for k, v in props.items() if k not in _LINKS_AND_CONTENT}
            if self.scrub(compared) != compared:
                return node.seq
            for content in (node.payload(), _parsed(props.get("result"))):
                if content is not None and self.scrub(content) != content:
                    return node.seq  # the outcome's answer is hashed though never shown
        return None

    def _rejection_reason(
        self, rejection: dict[str, Any], records: list[_ElementRecord]
    ) -> str | None:
        """Why a recorded rejection is withheld from the reader now, or None.

        The rejected record version and today's record must both be readable (ACL and
        purpose). A retracted record stays shown: the retraction is what a rejection of it
        says, and it quotes no text. Only an untrusted-instruction rejection quotes the
        record's text, so only it needs `pii` when the record has a redacted view.
        """
        grants = self._grants_reason()
        if grants is not None:
            return grants
        version = rejection.get("version")
        # A rejection that names no version: every record of the element must be readable.
        same = [r for r in records if version is None or r.version == version]
        if not same:
            return self.gone
        current = [r for r in records if r.current]
        if any(not self._allows(r.acl, r.purposes) for r in same + current):
            return "acl"
        quotes_text = rejection.get("reason") == "rejected_untrusted_instruction"
        if (
            quotes_text
            and any(r.has_redacted for r in same + current)
            and "pii" not in self.reader.principal.labels
        ):
            return "pii"
        return None

    def _purged_reason(
        self, element_ids: Iterable[str], records: dict[str, list[_ElementRecord]]
    ) -> str:
        """Why an evidence whose recorded text a purge blanked is withheld: what its KG ids'
        records of now say (grants, gone, ACL) first, else `text purged` (the record is
        there; its text was removed)."""
        reason = self._grants_reason()
        if reason is not None:
            return reason
        ids = sorted(element_ids)
        if not ids or any(not records.get(eid) for eid in ids):
            return self.gone
        for eid in ids:
            reason = self.current_reason(records[eid]) or self._ends_reason(eid, records)
            if reason is not None:
                return reason
        return TEXT_PURGED

    def _ends_reason(self, element_id: str, records: dict[str, list[_ElementRecord]]) -> str | None:
        """Why a relationship is withheld for an end the reader may not read now, or None."""
        for end in edge_ends(element_id):
            current = [r for r in records.get(end, []) if r.current]
            if any(not self._allows(r.acl, r.purposes) for r in current):
                return "acl"
        return None

    def _reason(self, ev: dict[str, Any], records: list[_ElementRecord]) -> str | None:
        """Why `ev` is withheld from the reader now, or None when it may be shown."""
        grants = self._grants_reason()
        if grants is not None:
            return grants
        recorded_purposes = ev.get("purposes")
        if not self._allows(
            ev.get("acl") or [], recorded_purposes if isinstance(recorded_purposes, list) else None
        ):
            return "acl"
        version = ev.get("version")
        same = [r for r in records if r.version == version]
        current = [r for r in records if r.current]
        if not same:
            return self.gone
        # The recorded version and today's record must both be readable (a later record may
        # have tightened the ACL or purposes; a retraction withdraws the content).
        for record in same + current:
            if not self._allows(record.acl, record.purposes):
                return "acl"
            if record.status != "active":
                return "retracted"
        needs_pii = any(r.has_redacted for r in same + current)
        if needs_pii and not ev.get("redacted") and "pii" not in self.reader.principal.labels:
            return "pii"
        return None

    # -- scrubbing ------------------------------------------------------------------------

    def marker(self, ev_id: str | None, reason: str) -> dict[str, str]:
        """What is shown instead of withheld text: the reason alone (no hash of its content)."""
        return {WITHHELD: reason}

    def rejection_marker(self, candidate_id: str, reason: str) -> dict[str, str]:
        """What is shown instead of a withheld rejection: the reason alone."""
        return {WITHHELD: reason}

    def mask(self, item_id: str) -> str:
        """The id shown for a withheld evidence or candidate: `withheld#<its node's seq>`."""
        return self.masks.get(item_id, item_id)

    def text(self, value: str) -> str:
        """`value`, or a withheld line when it quotes withheld text; withheld ids masked."""
        for quote in self.quotes:
            if quote in value:
                return WITHHELD_TEXT
        return self.ids(value)

    def ids(self, value: str) -> str:
        """`value` with every KG id of a withheld element in it replaced by `[withheld]`, a
        withheld evidence or candidate id by its mask, a hash over withheld content by
        `[withheld]`.

        The asker's own typed values (question, service) are run metadata: kept as recorded.
        """
        if value in self.typed:
            return value
        if self._hash_pattern is not None:
            value = self._hash_pattern.sub(WITHHELD_TEXT, value)  # a drift line quotes them
        if self._mask_pattern is not None:
            value = self._mask_pattern.sub(lambda m: self.mask(m.group(0)), value)
        if self._id_pattern is None:
            return value
        return self._id_pattern.sub(WITHHELD_TEXT, value)

    def withheld_element(self, value: dict[str, Any]) -> str | None:
        """Why a recorded dict that names a withheld KG element is withheld, else None."""
        for key in _ELEMENT_KEYS:
            eid = value.get(key)
            if isinstance(eid, str) and eid in self.hidden_ids:
                return self.hidden_ids[eid]
        return None

    def withheld_node_properties(self, props: dict[str, Any], reason: str) -> dict[str, Any]:
        """The recorded properties of a withheld evidence node a reader sees: the chain's
        bookkeeping (not its own hash), its masked id and the reason; none of the element's
        metadata."""
        out = {k: v for k, v in props.items() if k in _WITHHELD_NODE_KEYS}
        for key in ("evidence_id", "candidate_id"):
            if isinstance(out.get(key), str):
                out[key] = self.mask(out[key])
        if out.get("prev_hash") in self.hidden_hashes:
            out["prev_hash"] = WITHHELD_TEXT  # the node before it was withheld too
        # Its own hash is withheld as every later one is: one way to say so, not a null.
        out["hash"] = WITHHELD_TEXT
        out[WITHHELD] = reason
        return out

    def scrub(self, value: Any) -> Any:
        """A copy of a recorded JSON value with everything withheld replaced by markers."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.scrub(v) for v in value]
        if not isinstance(value, dict):
            return value
        ev_id = value.get("evidence_id")
        if isinstance(ev_id, str) and ev_id in self.withheld:
            # A withheld evidence (a pack entry, say): its id and the marker, nothing else.
            return {"evidence_id": self.mask(ev_id), **self.marker(ev_id, self.withheld[ev_id])}
        cand_id = value.get("candidate_id")
        if isinstance(cand_id, str) and cand_id in self.withheld_candidates:
            # A withheld rejection: its candidate id and the marker, nothing else.
            marker = self.rejection_marker(cand_id, self.withheld_candidates[cand_id])
            return {"candidate_id": self.mask(cand_id), **marker}
        reason = self.withheld_element(value)
        if reason is not None:
            return {WITHHELD: reason}  # a plan entity, rejection or omission of one
        cited = [i for i in value.get("evidence_ids") or [] if i in self.withheld]
        if cited and isinstance(value.get("statement"), str):
            reason = self.withheld[cited[0]]
            return {
                self._key(k): (self.marker(None, reason) if k == "statement" else self.scrub(v))
                for k, v in value.items()
            }
        return {self._key(k): self.scrub(v) for k, v in value.items()}

    def _key(self, key: Any) -> Any:
        return self.ids(key) if isinstance(key, str) else key


def _parsed(text: Any) -> Any:
    """A recorded JSON text parsed, or None."""
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def edge_ends(element_id: str) -> tuple[str, ...]:
    """The two node ids of a relationship key (`TYPE|from|to|...`); () for a node id."""
    parts = element_id.split("|")
    return (parts[1], parts[2]) if len(parts) >= 3 else ()


def _dicts_with(value: Any, key: str) -> list[dict[str, Any]]:
    """Every dict inside a JSON value that has `key` (depth-first)."""
    found: list[dict[str, Any]] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get(key), str):
                found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def filtered_lineage(lineage: RunLineage, content: ContentFilter) -> RunLineage:
    """The lineage with every node's properties and payload re-filtered for the reader.

    The chain is verified on the stored lineage before this (trace does), so scrubbing here
    never hides tampering; the scrubbed copy is for display only.
    """
    nodes = []
    for node in lineage.nodes:
        props = dict(node.properties)
        ev_id = props.get("evidence_id")
        payload = node.payload()
        cand_id = props.get("candidate_id") if node.kind == CtxKind.REJECTION else None
        if isinstance(ev_id, str) and ev_id in content.withheld:
            reason = content.withheld[ev_id]
            props = content.withheld_node_properties(props, reason)
            props["payload"] = json.dumps(content.marker(ev_id, reason))
        elif isinstance(cand_id, str) and cand_id in content.withheld_candidates:
            reason = content.withheld_candidates[cand_id]
            props = content.withheld_node_properties(props, reason)
            props["payload"] = json.dumps(content.rejection_marker(cand_id, reason))
        else:
            props = {
                k: content.scrub(v) for k, v in props.items() if k not in {"payload", "result"}
            }
            counted = node.kind == CtxKind.TOOL_CALL and content.rows_withheld(node)
            if counted:
                # How many rows a call read counts rows the reader is not shown to read now
                # (its rows hash is withheld): a count is information too, so it is withheld
                # with the hash, and so is `truncated` (the count reached the limit).
                props.update({"row_count": WITHHELD_TEXT, "truncated": WITHHELD_TEXT})
            if isinstance(node.properties.get(TOOL_CALL_HITS), list):
                # A hit the reader may not read is withheld whole: its version and score too.
                hits = [
                    WITHHELD_TEXT
                    if (parsed := parse_hit(entry)) is None or parsed[0] in content.hidden_ids
                    else entry
                    for entry in node.properties[TOOL_CALL_HITS]
                ]
                if counted:  # one mark for them all: their number is the row count
                    shown_hits = [h for h in hits if h != WITHHELD_TEXT]
                    hits = shown_hits + [WITHHELD_TEXT] * (len(shown_hits) < len(hits))
                props[TOOL_CALL_HITS] = hits
            if payload is not None:
                shown = _scrubbed_payload(node, payload, content)
                if node.kind == CtxKind.REJECTION and isinstance(shown, dict):
                    # A run recorded before the gate stopped quoting keeps the untrusted
                    # words in its detail: shown, they are the instruction again. The
                    # stored record (verified above) is unchanged; only the display.
                    detail = shown.get("detail")
                    if isinstance(detail, str):
                        shown["detail"] = unquoted_detail(detail)
                if counted and isinstance(shown, dict):
                    # The call's recorded content repeats its count: withheld there too.
                    shown.update(
                        {k: WITHHELD_TEXT for k in ("row_count", "truncated") if k in shown}
                    )
                props["payload"] = json.dumps(shown)
            cited = [i for i in node.properties.get("evidence_ids") or [] if i in content.withheld]
            if node.kind == CtxKind.CLAIM and cited:
                props["statement"] = WITHHELD_TEXT
            if node.kind == CtxKind.RUN and content.hashes_withheld_from is not None:
                props[HASHES_WITHHELD_FROM] = content.hashes_withheld_from
        nodes.append(node.model_copy(update={"properties": props}))
    return lineage.model_copy(update={"nodes": nodes})


def _scrubbed_payload(node: CtxNodeRecord, payload: Any, content: ContentFilter) -> Any:
    """A node's payload as `content.scrub` leaves it; a purge run keeps its `--reason` (the
    purge command's help promises every auditor of the tenant reads it) even when the
    options naming the purged id are withheld, the reason with any withheld id masked."""
    scrubbed = content.scrub(payload)
    if node.kind != CtxKind.RUN or node.properties.get("command") != "purge":
        return scrubbed
    options = payload.get("options") if isinstance(payload, dict) else None
    reason = options.get("reason") if isinstance(options, dict) else None
    shown = scrubbed.get("options") if isinstance(scrubbed, dict) else None
    if isinstance(reason, str) and isinstance(shown, dict) and "reason" not in shown:
        scrubbed["options"] = {**shown, "reason": content.text(reason)}
    return scrubbed
