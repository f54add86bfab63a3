"""Leak hunt over the audit surface and the templates (issue 11, docs/security.md).

Builds a two-tenant world through the real ingest: the same document and principal ids in both
tenants, random ACLs, purposes and PII. Records runs for random subjects, then changes the
world (a revoked `pii` label, a retracted principal, ACLs tightened by later records) and tries
combinations of
  - reader x purpose x run x output format of `runs` / `trace` (tree, json, mermaid), and
  - random template plans x subjects x known_at,
checking each output against an oracle computed from the generated bundles (never from the
product). A leak is a secret token a reader may not read now, another tenant's token, a
Principal/Source record, or an answer where the oracle says "not allowed".

Usage (wipes the graph NEO4J_* or the local server points at; use a scratch server):
    .venv/bin/python benchmarks/security_leaks.py --combinations 10000 [--seed 7]
Exit code 0 when no leak was found, 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import re
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import neo4j
from pydantic import BaseModel, ValidationError

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from cypher_templates.executor import TemplateExecutor  # noqa: E402
from cypher_templates.plan import PlanStep  # noqa: E402
from cypher_templates.registry import TemplateRegistry  # noqa: E402
from cypher_templates.subject import SubjectRef, load_subject  # noqa: E402
from investigator.context_graph import RunRecorder, RunRequest, ToolCallRecord  # noqa: E402
from investigator.context_graph.audit import (  # noqa: E402
    AUDIT_PURPOSE,
    filtered_lineage,
    load_reader,
)
from investigator.context_graph.readable import readable_run  # noqa: E402
from investigator.context_graph.runs import list_runs  # noqa: E402
from investigator.context_graph.trace import (  # noqa: E402
    render_mermaid,
    render_tree,
    trace_document,
)
from investigator.errors import BadInput, InvestigatorError, NotAuthorized  # noqa: E402

TENANTS = ("t1", "t2")
LABELS = ("internal", "incident", "legal")
PURPOSES = ("incident_investigation", "audit", "runbook_lookup")
SOURCES = {
    "src:ops": ["incident_investigation", "audit", "runbook_lookup"],
    "src:cases": ["incident_investigation", "audit"],
    "src:legal": ["audit"],
}
DOCS = 8
PRINCIPALS = 6
RECORDED = "2026-07-23T12:00:00Z"
TOKEN = re.compile(r"(FULL|RED)_(t\d)_(d\d+)")
FORMATS = ("tree", "json", "mermaid")


@dataclass
class Doc:
    tenant: str
    id: str
    source: str
    acl: list[str]
    pii: bool
    acl_now: list[str] = field(default_factory=list)

    @property
    def purposes(self) -> list[str]:
        return SOURCES[self.source]


@dataclass
class Principal:
    tenant: str
    id: str
    labels: list[str]
    purposes: list[str]
    labels_now: list[str] = field(default_factory=list)
    retracted: bool = False


@dataclass
class RecordedRun:
    run_id: str
    tenant: str
    subject: str
    purpose: str
    evidence: list[tuple[str, bool]]  # (doc id, recorded unredacted)


@dataclass
class World:
    docs: dict[tuple[str, str], Doc]
    principals: dict[tuple[str, str], Principal]
    runs: list[RecordedRun] = field(default_factory=list)
    before_changes: datetime = field(default_factory=lambda: datetime.now(UTC))


# -- building the world through the real CLI ingest -------------------------------------------


def _cli(*args: str) -> tuple[int, str]:
    from investigator.cli import run as run_cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run_cli(list(args))
    return code, err.getvalue()


def _ingest(bundles: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for i, bundle in enumerate(bundles):
            path = Path(tmp) / f"{i:02d}-{bundle['tenant']}.json"
            path.write_text(json.dumps(bundle))
        code, err = _cli("ingest", tmp)
        if code != 0:
            raise SystemExit(f"ingest failed (exit {code}): {err.strip()}")


def _doc_spec(doc: Doc, acl: list[str], recorded_at: str) -> dict[str, Any]:
    full = f"secret report FULL_{doc.tenant}_{doc.id}"
    spec: dict[str, Any] = {
        "id": doc.id,
        "kind": "incident_report",
        "title": f"report {doc.id}",
        "content": full,
        "locator": f"reports/{doc.id}.md",
        "acl": acl,
        "source_id": doc.source,
        "source_version": "v1",
        "valid_from": "2026-07-23T10:00:00Z",
        "recorded_at": recorded_at,
        "applies_to": ["svc:api"],
        "supports": ["incident_report"],
    }
    if doc.pii:
        spec["redacted_content"] = f"secret report RED_{doc.tenant}_{doc.id}"
    return spec


def build_world(rng: random.Random) -> World:
    docs: dict[tuple[str, str], Doc] = {}
    principals: dict[tuple[str, str], Principal] = {}
    bundles = []
    for tenant in TENANTS:
        for i in range(DOCS):
            acl = ["internal", *rng.sample(LABELS[1:], rng.randint(0, 2))]
            doc = Doc(tenant, f"d{i}", rng.choice(sorted(SOURCES)), sorted(acl), rng.random() < 0.5)
            doc.acl_now = doc.acl
            docs[(tenant, doc.id)] = doc
        for i in range(PRINCIPALS):
            labels = sorted({"internal", *rng.sample([*LABELS[1:], "pii"], rng.randint(0, 3))})
            purposes = sorted(rng.sample(PURPOSES, rng.randint(1, 3)))
            if i == 0:
                purposes = sorted({*purposes, "incident_investigation"})
            p = Principal(tenant, f"user:p{i}", labels, purposes, labels_now=labels)
            principals[(tenant, p.id)] = p
        bundles.append(
            {
                "tenant": tenant,
                "sources": [
                    {"source_id": s, "source_type": "reports", "owner_team": "team:x",
                     "classification": "internal", "trust": "trusted", "authority": 50,
                     "allowed_purposes": purposes, "recorded_at": "2026-01-01T00:00:00Z"}
                    for s, purposes in SOURCES.items()
                ],
                "principals": [
                    {"id": p.id, "labels": p.labels, "purposes": p.purposes,
                     "recorded_at": "2026-01-01T00:00:00Z"}
                    for (t, _), p in principals.items() if t == tenant
                ],
                "nodes": [
                    {"id": "svc:api", "label": "Service", "name": "api", "acl": ["internal"],
                     "source_id": "src:ops", "source_version": "v1", "locator": "catalog#api",
                     "valid_from": "2025-01-01T00:00:00Z", "recorded_at": "2026-01-01T00:00:00Z"}
                ],
                "documents": [
                    _doc_spec(d, d.acl, RECORDED) for (t, _), d in docs.items() if t == tenant
                ],
            }
        )  # fmt: skip
    _ingest(bundles)
    return World(docs, principals)


def may_read(world: World, tenant: str, labels: list[str], purpose: str, doc_id: str) -> bool:
    doc = world.docs[(tenant, doc_id)]
    return (
        set(doc.acl) <= set(labels) and set(doc.acl_now) <= set(labels) and purpose in doc.purposes
    )


def record_runs(driver: neo4j.Driver, world: World, rng: random.Random, per: int) -> None:
    """Runs recorded as the product would have: evidence the subject could read then."""
    recorder = RunRecorder(driver)
    for (tenant, pid), p in sorted(world.principals.items()):
        if "incident_investigation" not in p.purposes:
            continue
        for n in range(per):
            readable = [
                d.id
                for (t, _), d in sorted(world.docs.items())
                if t == tenant and may_read(world, tenant, p.labels, "incident_investigation", d.id)
            ]
            chosen = rng.sample(readable, min(len(readable), rng.randint(1, 4))) if readable else []
            start = recorder.start_run(
                RunRequest(
                    question=f"what happened {n}?",
                    subject_id=f"{tenant}/{pid}",
                    purpose="incident_investigation",
                    as_of=datetime(2026, 7, 23, 13, tzinfo=UTC),
                )
            )
            run_id = start.run_id
            recorder.record_tool_call(
                run_id,
                ToolCallRecord(
                    tool_call_id="tc-1", template_id="documents_about", template_version=1,
                    template_hash="sha256:x", known_at=start.known_at, row_count=len(chosen),
                    rows_hash="sha256:y", duration_ms=1.0,
                ),
            )  # fmt: skip
            evidence = []
            for doc_id in chosen:
                doc = world.docs[(tenant, doc_id)]
                full = not doc.pii or "pii" in p.labels
                token = ("FULL" if full else "RED") + f"_{tenant}_{doc_id}"
                evidence.append((doc_id, full))
                recorder.record_evidence(
                    run_id,
                    _Evidence(
                        evidence_id=f"ev:{doc_id}", element_id=doc_id, version=1,
                        content=f"secret report {token}", acl=doc.acl, purposes=doc.purposes,
                        redacted=not full, title=f"report {doc_id}",
                    ),
                    "tc-1",
                )  # fmt: skip
            pack_items = [
                _Evidence(evidence_id=f"ev:{d}", element_id=d, version=1,
                          content=f"secret report {'FULL' if f else 'RED'}_{tenant}_{d}",
                          acl=world.docs[(tenant, d)].acl, redacted=not f)
                for d, f in evidence
            ]  # fmt: skip
            recorder.record_pack(run_id, _Pack(pack_id=f"pack:{run_id}", pack_hash="sha256:p",
                                               evidence=pack_items))  # fmt: skip
            recorder.record_claims(
                run_id,
                [
                    _Claim(claim_id=f"c-{d}", statement=f"the report says {it.content}",
                           evidence_ids=[f"ev:{d}"])
                    for (d, _), it in zip(evidence, pack_items, strict=True)
                ],
            )  # fmt: skip
            recorder.finish_run(run_id, "complete", "evidence_sufficient")
            world.runs.append(RecordedRun(run_id, tenant, pid, "incident_investigation", evidence))


def change_world(world: World, rng: random.Random) -> None:
    """Revoke `pii` from one principal, retract another, tighten two ACLs, per tenant."""
    world.before_changes = datetime.now(UTC) - timedelta(seconds=1)
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    bundles = []
    for tenant in TENANTS:
        mine = [p for (t, _), p in sorted(world.principals.items()) if t == tenant]
        with_pii = [p for p in mine if "pii" in p.labels]
        changed = []
        if with_pii:
            victim = rng.choice(with_pii)
            victim.labels_now = [x for x in victim.labels if x != "pii"]
            changed.append(
                {"id": victim.id, "labels": victim.labels_now, "purposes": victim.purposes,
                 "recorded_at": now}
            )  # fmt: skip
        gone = mine[-1]
        gone.retracted = True
        tightened = rng.sample([d for (t, _), d in sorted(world.docs.items()) if t == tenant], 2)
        for doc in tightened:
            doc.acl_now = sorted({*doc.acl, "legal"})
        bundles.append(
            {
                "tenant": tenant,
                "principals": changed,
                "documents": [_doc_spec(d, d.acl_now, now) for d in tightened],
                "retractions": [{"id": gone.id, "reason": "left the company", "at": now}],
            }
        )
    _ingest(bundles)


# -- small recorded models (the recorder takes any pydantic model) ----------------------------


class _Evidence(BaseModel):
    evidence_id: str
    element_id: str
    version: int
    content: str
    title: str | None = None
    acl: list[str] = []
    purposes: list[str] | None = None
    redacted: bool = False


class _Pack(BaseModel):
    pack_id: str
    pack_hash: str
    evidence: list[_Evidence]


class _Claim(BaseModel):
    claim_id: str
    statement: str
    epistemic_status: str = "fact"
    confidence: float = 0.9
    evidence_ids: list[str]


# -- the oracle ------------------------------------------------------------------------------


@dataclass
class Tally:
    tried: int = 0
    leaks: list[str] = field(default_factory=list)
    refused: int = 0
    false_refusals: int = 0
    withheld: int = 0
    seconds: dict[str, list[Any]] = field(default_factory=dict)  # template -> [calls, seconds]
    rows: int = 0  # template rows checked
    shown: int = 0  # trace outputs checked

    def leak(self, what: str) -> None:
        self.leaks.append(what)


def _progress(message: str) -> None:
    sys.stderr.write(f"[{time.strftime('%H:%M:%S')}] {message}\n")
    sys.stderr.flush()


def token_leaks(world: World, text: str, tenant: str, labels: list[str], purpose: str) -> list[str]:
    """Tokens in `text` the reader (tenant, labels and purpose of now) may not read."""
    found = []
    for kind, t, doc_id in TOKEN.findall(text):
        if t != tenant:
            found.append(f"{kind}_{t}_{doc_id}: another tenant")
            continue
        if not may_read(world, tenant, labels, purpose, doc_id):
            found.append(f"{kind}_{t}_{doc_id}: not readable now")
        elif kind == "FULL" and world.docs[(t, doc_id)].pii and "pii" not in labels:
            found.append(f"{kind}_{t}_{doc_id}: PII without pii")
    return found


def audit_combinations(driver: neo4j.Driver, world: World, tally: Tally) -> None:
    """Every reader x purpose x run x format of `runs` and `trace`."""
    executor = TemplateExecutor(driver)
    for key in sorted(world.principals):
        for purpose in (None, AUDIT_PURPOSE, "incident_investigation", "runbook_lookup"):
            audit_one(driver, executor, world, key, purpose, world.runs, tally)
        _progress(f"audit: {tally.tried} combinations, {len(tally.leaks)} leaks")


def audit_one(
    driver: neo4j.Driver,
    executor: TemplateExecutor,
    world: World,
    key: tuple[str, str],
    purpose: str | None,
    runs: list[RecordedRun],
    tally: Tally,
) -> None:
    """One reader under one purpose: `runs`, then `trace` of each of `runs` in each format.

    Each run is read through `readable_run`, as `trace`, `replay` and the served tools read it.
    """
    tenant, pid = key
    p = world.principals[key]
    ref = SubjectRef(tenant=tenant, id=pid)
    tally.tried += 1
    allowed = not p.retracted and (purpose is None or purpose in p.purposes)
    try:
        reader = load_reader(executor, ref, purpose)
    except NotAuthorized:
        tally.refused += 1
        tally.false_refusals += int(allowed)
        return
    if not allowed:
        tally.leak(f"{ref} loaded with purpose {purpose} it does not hold now")
        return
    listed = list_runs(driver, reader, 1000)
    for summary in listed:
        if summary.tenant != tenant or (summary.subject_id != pid and purpose != AUDIT_PURPOSE):
            tally.leak(f"runs: {ref}/{purpose} listed {summary.run_id}")
    for run in runs:
        readable = run.tenant == tenant and (run.subject == pid or purpose == AUDIT_PURPOSE)
        try:
            lineage, content = readable_run(
                driver,
                ref,
                purpose,
                run.run_id,
                ctx_database=None,
                kg_database=None,
                executor=executor,
            )
        except (NotAuthorized, BadInput):
            # Another tenant's run answers like an unknown one (BadInput): a refusal too.
            tally.tried += len(FORMATS)
            tally.refused += len(FORMATS)
            tally.false_refusals += len(FORMATS) * int(readable)
            continue
        if not readable:
            tally.leak(f"{ref}/{purpose} may read {run.run_id} of {run.tenant}/{run.subject}")
        shown = filtered_lineage(lineage, content)
        eff = purpose or run.purpose
        outputs = {
            "tree": render_tree(lineage, shown),
            "json": trace_document(lineage, shown).model_dump_json(),
            "mermaid": render_mermaid(shown),
        }
        labels = p.labels_now if eff in p.purposes else []
        for fmt, text in outputs.items():
            tally.tried += 1
            tally.shown += 1
            tally.withheld += text.count('"withheld"') if fmt == "json" else 0
            for leak in token_leaks(world, text, tenant, labels, eff):
                tally.leak(f"trace {fmt} {run.run_id} for {ref}/{purpose}: {leak}")
            # A withheld evidence's id hashes its text: shown, it confirms a guess offline.
            for ev_id in sorted(set(content.withheld) | set(content.withheld_candidates)):
                if ev_id in text:
                    tally.leak(f"trace {fmt} {run.run_id} for {ref}/{purpose}: id {ev_id}")


def _random_step(rng: random.Random, registry: TemplateRegistry) -> PlanStep:
    spec = rng.choice(registry.specs())
    options = rng.choice(list(spec.variants()))
    if int(options.get("hops", 1)) > 2:
        options = {**options, "hops": 2}
    ids = [f"d{i}" for i in range(DOCS)] + ["svc:api", "user:p0", "user:p1", *SOURCES]
    params: dict[str, Any] = {}
    for name, p in spec.params.items():
        if p.type == "id":
            params[name] = rng.choice(ids)
        elif p.type == "text":
            params[name] = rng.choice([*ids, "secret report", "api"])
        elif p.type == "lucene":
            params[name] = rng.choice(["secret", "report", "FULL_t1_d1", "RED_t2_d3", "p0"])
        elif p.type == "datetime":
            params[name] = "2026-01-01T00:00:00Z" if name == "from" else "2026-12-31T00:00:00Z"
        elif p.type == "int":
            params[name] = 1
        elif p.type == "id_list":
            params[name] = rng.sample(ids, 3)
    # Every published version is drawn: each renders its own text, and each must hold.
    return PlanStep(
        template_id=spec.id,
        template_version=spec.version,
        options=options,
        params=params,
        evidence_type=spec.evidence_types[0],
    )


def template_combinations(
    driver: neo4j.Driver,
    world: World,
    rng: random.Random,
    count: int,
    tally: Tally,
    executor: TemplateExecutor | None = None,
) -> None:
    """`count` random plans x live subjects x purposes they hold x known_at."""
    executor = executor or TemplateExecutor(driver, TemplateRegistry.load())
    registry = executor.registry
    live = [p for p in world.principals.values() if not p.retracted]
    known_ats = [
        datetime(2026, 7, 23, 12, 30, tzinfo=UTC),
        world.before_changes,
        datetime.now(UTC),
    ]
    principal_ids = {p.id for p in world.principals.values()} | set(SOURCES)
    for n in range(count):
        if n and n % 250 == 0:
            _progress(f"templates: {n}/{count}, {len(tally.leaks)} leaks")
        p = rng.choice(live)
        purpose = rng.choice(p.purposes)
        subject = load_subject(executor, SubjectRef(tenant=p.tenant, id=p.id), purpose)
        step = _random_step(rng, registry)
        tally.tried += 1
        started = time.monotonic()
        try:
            result = executor.run(step, subject, rng.choice(known_ats))
        except (InvestigatorError, ValidationError):
            tally.refused += 1  # a plan the compiler refuses: nothing returned, nothing leaked
            continue
        finally:
            spent = tally.seconds.setdefault(step.template_id, [0, 0.0])
            spent[0] += 1
            spent[1] += time.monotonic() - started
        tally.rows += len(result.rows)
        for row in result.rows:
            element = row.element
            where = f"{step.template_id} for {p.tenant}/{p.id}/{purpose}: {element.element_id}"
            if element.element_id in principal_ids:
                tally.leak(f"{where}: a Principal/Source record")
            doc = world.docs.get((p.tenant, element.element_id))
            if doc is not None and not may_read(world, p.tenant, p.labels_now, purpose, doc.id):
                tally.leak(f"{where}: not readable now (acl {doc.acl_now})")
            text = " ".join(str(x) for x in (element.content, element.title, element.name))
            for leak in token_leaks(world, text, p.tenant, p.labels_now, purpose):
                tally.leak(f"{where}: {leak}")


def wipe(driver: neo4j.Driver) -> None:
    with driver.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()


@contextlib.contextmanager
def connected() -> Iterator[neo4j.Driver]:
    from investigator.connection import open_driver
    from investigator.settings import resolve_connection

    driver = open_driver(resolve_connection())
    try:
        yield driver
    finally:
        driver.close()


def run_benchmark(
    driver: neo4j.Driver, combinations: int, seed: int, runs_per_subject: int = 2
) -> Tally:
    """Build the world, record, change it, try `combinations` (at least), return the tally."""
    rng = random.Random(seed)
    wipe(driver)
    code, err = _cli("schema", "apply")
    if code != 0:
        raise SystemExit(f"schema apply failed: {err.strip()}")
    world = build_world(rng)
    _progress("world ingested")
    record_runs(driver, world, rng, runs_per_subject)
    _progress(f"{len(world.runs)} runs recorded")
    change_world(world, rng)
    _progress("world changed (revoked, retracted, tightened)")
    tally = Tally()
    audit_combinations(driver, world, tally)
    template_combinations(driver, world, rng, max(0, combinations - tally.tried), tally)
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--combinations", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--runs-per-subject", type=int, default=2)
    args = parser.parse_args()
    started = time.monotonic()
    with connected() as driver:
        tally = run_benchmark(driver, args.combinations, args.seed, args.runs_per_subject)
    elapsed = time.monotonic() - started
    print(f"combinations tried: {tally.tried}")
    print(f"refused:            {tally.refused}  (not allowed: exit 3; plans the compiler refuses)")
    print(f"trace outputs:      {tally.shown}  (checked token by token)")
    print(f"template rows:      {tally.rows}  (checked against the oracle)")
    print(f"withheld markers:   {tally.withheld}")
    print(f"false refusals:     {tally.false_refusals}")
    print(f"leaks:              {len(tally.leaks)}")
    for leak in tally.leaks[:20]:
        print(f"  {leak}")
    for template_id, (calls, seconds) in sorted(tally.seconds.items()):
        print(f"  {template_id}: {calls} plans, {1000 * seconds / max(calls, 1):.0f} ms each")
    print(f"seed {args.seed}, {elapsed:.0f} s")
    return 1 if tally.leaks else 0


if __name__ == "__main__":
    sys.exit(main())
