"""Anchors for finished runs: a per-tenant ledger chain of run heads, with an HMAC.

A run's own hash chain proves each node against the one before it, but not that the chain
is whole: cut the tail, reset the run's head and status `incomplete`, or delete the whole
run, and what is left still verifies. So when a run finishes, in the same transaction, its
head (seq, hash, status) is appended to its tenant's ledger as a `CtxAnchor` node:

- anchors are numbered 0, 1, 2, ... per tenant and hash-chained (`prev_hash`), like runs;
- each anchor carries `mac` = HMAC-SHA256 over its hash with a key kept outside the database
  (`INVESTIGATOR_CHAIN_KEY`, else the file `chain.key` in `INVESTIGATOR_CHAIN_DIR`, else in
  the state dir, created on first use), so someone with write access to the database alone
  cannot forge or re-anchor a rewritten run;
- the tenant's `CtxLedgerHead` names the last anchor (with its own HMAC), and the key's
  directory keeps `chain-heads/`, the last anchor this machine wrote per database and
  tenant (one small file each), so a ledger rolled back to an earlier head is caught there.

`verify_run` and `verify_tenant` then report every run deleted, truncated, changed or
re-statused after it was anchored, every break in the ledger and every bad HMAC.
"""

from __future__ import annotations

import contextlib
import fcntl
import hmac
import json
import os
import secrets
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from hashlib import sha256
from pathlib import Path
from typing import Any

import neo4j
from neo4j.exceptions import ConstraintError
from pydantic import BaseModel

from graph_schema.canonical import canonical_json_offset_kept, iso_utc_fixed, sha256_text
from graph_schema.local_files import InputTooLarge, read_local_file
from investigator.context_graph.chain import verify_chain
from investigator.context_graph.lineage import read_lineage, read_lineages
from investigator.context_graph.models import GENESIS_HASH, CtxKind, RunLineage, RunStatus
from investigator.context_graph.schema import apply_missing
from investigator.errors import InvestigatorError

KEY_ENV = "INVESTIGATOR_CHAIN_KEY"
KEY_DIR_ENV = "INVESTIGATOR_CHAIN_DIR"
KEY_FILE = "chain.key"
# This machine's last anchor per database and tenant: one file each in HEADS_DIR (before,
# all of them in HEADS_FILE, rewritten whole at every finish; still read, never written).
HEADS_DIR = "chain-heads"
HEADS_FILE = "chain-heads.json"
# A key is 64 hex digits and a head entry under 200 bytes: anything far larger is not ours.
KEY_FILE_MAX_BYTES = 4096
HEADS_ENTRY_MAX_BYTES = 65536
LEGACY_HEADS_MAX_BYTES = 64_000_000
HEADS_LOCK = "chain-heads.lock"
MAC_PREFIX = "hmac-sha256:"
# A managed (execute_read/write) or explicit transaction: tests tamper and roll back in one.
Tx = neo4j.ManagedTransaction | neo4j.Transaction
# Runs recorded without a tenant (before runs carried one) anchor under this name.
NO_TENANT = "(none)"

LEDGER_CONSTRAINTS = (
    "CREATE CONSTRAINT ctx_anchor_seq IF NOT EXISTS "
    "FOR (a:CtxAnchor) REQUIRE (a.tenant, a.seq) IS UNIQUE",
    "CREATE CONSTRAINT ctx_anchor_run IF NOT EXISTS FOR (a:CtxAnchor) REQUIRE a.run_id IS UNIQUE",
    "CREATE CONSTRAINT ctx_ledger_head IF NOT EXISTS "
    "FOR (h:CtxLedgerHead) REQUIRE h.tenant IS UNIQUE",
)

# The anchor's hash covers every property but these two.
_UNHASHED = frozenset({"hash", "mac"})

_RUN_HEAD = (
    "MATCH (r:CtxRun {run_id: $run_id}) "
    "RETURN r.tenant AS tenant, r.subject_id AS subject_id, r.head_seq AS head_seq, "
    "r.head_hash AS head_hash, r.status AS status, "
    "r.subject_incarnation AS subject_incarnation, r.started_at AS started_at"
)
# MERGE takes the write lock on the tenant's head, so concurrent anchors queue up.
_LOCK_HEAD = (
    "MERGE (h:CtxLedgerHead {tenant: $tenant}) "
    "ON CREATE SET h.seq = -1, h.hash = $genesis "
    "SET h.locked_at = $at "
    "RETURN h.seq AS seq, h.hash AS hash"
)
_ANCHOR_OF = "MATCH (a:CtxAnchor {run_id: $run_id}) RETURN properties(a) AS p"
_CREATE_ANCHOR = (
    "CREATE (a:CtxAnchor) SET a = $props "
    "WITH a MATCH (h:CtxLedgerHead {tenant: $tenant}) "
    "SET h.seq = $seq, h.hash = $hash, h.mac = $head_mac REMOVE h.locked_at"
)
_LEDGER = (
    "MATCH (a:CtxAnchor {tenant: $tenant}) RETURN properties(a) AS p ORDER BY a.seq LIMIT $max"
)
_HEAD = "MATCH (h:CtxLedgerHead {tenant: $tenant}) RETURN properties(h) AS p"
_TENANT_RUNS = (
    "MATCH (r:CtxRun) WHERE coalesce(r.tenant, $none) = $tenant "
    "RETURN r.run_id AS run_id, r.status AS status ORDER BY r.run_id LIMIT $max"
)
LEDGER_MAX = 100_000
# Runs whose lineages `verify` of a whole ledger reads at once (about 14 nodes each).
VERIFY_BATCH = 500


class LedgerError(InvestigatorError):
    """Anchoring refused: the run is unknown, unfinished, or its chain is already broken."""


class ChainKey:
    """The HMAC key kept outside the database, and where this machine keeps ledger heads."""

    def __init__(self, secret: bytes, directory: Path | None) -> None:
        self.secret = secret
        self.directory = directory

    @property
    def key_id(self) -> str:
        """A short name of the key (a digest of a digest: reveals nothing about it)."""
        return "key:" + sha256(sha256(self.secret).digest()).hexdigest()[:12]

    def mac(self, message: str) -> str:
        """`hmac-sha256:` + hex HMAC of `message` under this key."""
        return MAC_PREFIX + hmac.new(self.secret, message.encode("utf-8"), sha256).hexdigest()

    def check(self, message: str, mac: Any) -> bool:
        """Whether `mac` is this key's HMAC of `message` (constant-time compare)."""
        return isinstance(mac, str) and hmac.compare_digest(self.mac(message), mac)


def _state_dir() -> Path:
    env = os.environ.get(KEY_DIR_ENV) or os.environ.get("INVESTIGATOR_STATE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "investigator" / "neo4j"


def chain_key_path() -> Path:
    """Where `load_chain_key` looks for the key file when `INVESTIGATOR_CHAIN_KEY` is unset."""
    return _state_dir() / KEY_FILE


def load_chain_key(create: bool = True) -> ChainKey | None:
    """`INVESTIGATOR_CHAIN_KEY`, else `chain.key` in the key directory (made when `create`).

    Raises OSError for a key file that holds no key: signing under an empty key would make
    every anchor look forged to the next `verify`.
    """
    directory = _state_dir()
    env = os.environ.get(KEY_ENV)
    if env:
        return ChainKey(env.encode("utf-8"), directory)
    path = chain_key_path()
    if path.exists() or path.is_symlink():
        try:
            secret = _read_small_file(path, KEY_FILE_MAX_BYTES).decode("utf-8").strip()
        except UnicodeDecodeError:
            raise OSError(f"the chain key file {path} is not UTF-8 text") from None
        if not secret:
            raise OSError(f"the chain key file {path} is empty")
        return ChainKey(secret.encode("utf-8"), directory)
    if not create:
        return None
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    secret = secrets.token_hex(32)
    # Written whole under a private name, then linked into place: a reader never sees a
    # half-written key, and of two first anchors racing, the loser reads the winner's key.
    draft = directory / f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(secret + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(draft, path)
        except FileExistsError:
            return load_chain_key(create=False)
        except OSError:
            return _create_key_in_place(path, secret, directory)  # no hard links here
    finally:
        draft.unlink(missing_ok=True)
    return ChainKey(secret.encode("utf-8"), directory)


def _read_small_file(path: Path, max_bytes: int) -> bytes:
    """`read_local_file` following a link (a key mounted as one), a huge file as OSError."""
    try:
        return read_local_file(path, max_bytes, follow_links=True)
    except InputTooLarge:
        raise OSError(f"{path} is more than {max_bytes} bytes") from None


def _create_key_in_place(path: Path, secret: str, directory: Path) -> ChainKey | None:
    """The key file created and written in place, for a file system without hard links: a
    racing reader may then find it empty, and refuses it (no anchor) rather than sign."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return load_chain_key(create=False)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(secret + "\n")
    return ChainKey(secret.encode("utf-8"), directory)


def _anchor_hash(props: dict[str, Any]) -> str:
    hashed = {k: v for k, v in props.items() if k not in _UNHASHED}
    return sha256_text(canonical_json_offset_kept(hashed))


def _head_message(tenant: str, seq: int, hash_: str) -> str:
    return f"ledger-head|{tenant}|{seq}|{hash_}"


class Anchor(BaseModel):
    """One finished run's head as anchored in its tenant's ledger."""

    tenant: str
    seq: int
    run_id: str
    subject_id: str | None = None
    # Which holder of the id (`CtxRun.subject_incarnation`): a deleted run's anchor still
    # tells whose run it was. None on runs that recorded none (anchored before, or refused).
    subject_incarnation: int | None = None
    run_head_seq: int
    run_head_hash: str
    run_status: str
    anchored_at: str
    key_id: str | None = None
    prev_hash: str
    hash: str
    mac: str | None = None


def new_anchor(
    *,
    tenant: str,
    ledger_seq: int,
    ledger_hash: str,
    run_id: str,
    subject_id: str | None,
    run_head_seq: int,
    run_head_hash: str,
    run_status: str,
    key: ChainKey | None,
    anchored_at: str,
    subject_incarnation: int | None = None,
) -> tuple[Anchor, str | None]:
    """The anchor that follows ledger head (`ledger_seq`, `ledger_hash`), and the new head's
    HMAC: what `anchor_in_tx` and a run's finish transaction write (no I/O here)."""
    props: dict[str, Any] = {
        "tenant": tenant,
        "seq": ledger_seq + 1,
        "run_id": run_id,
        "subject_id": subject_id,
        "subject_incarnation": subject_incarnation,
        "run_head_seq": run_head_seq,
        "run_head_hash": run_head_hash,
        "run_status": run_status,
        "anchored_at": anchored_at,
        "key_id": key.key_id if key else None,
        "prev_hash": ledger_hash,
    }
    props = {k: v for k, v in props.items() if v is not None}
    props["hash"] = _anchor_hash(props)
    if key is not None:
        props["mac"] = key.mac(props["hash"])
    head_mac = key.mac(_head_message(tenant, props["seq"], props["hash"])) if key else None
    return Anchor.model_validate(props), head_mac


def anchor_in_tx(
    tx: Tx,
    run_id: str,
    key: ChainKey | None,
    at: datetime | None = None,
) -> Anchor:
    """Append run `run_id`'s head to its tenant's ledger, in the caller's transaction.

    Idempotent: a run anchored before returns its anchor. The run must be finished.
    """
    existing = tx.run(_ANCHOR_OF, run_id=run_id).single()
    if existing is not None:
        return Anchor.model_validate(existing["p"])
    run = tx.run(_RUN_HEAD, run_id=run_id).single()
    if run is None:
        raise LedgerError(f"unknown run {run_id}")
    status = run["status"]
    if status not in {s.value for s in RunStatus} - {RunStatus.INCOMPLETE.value}:
        raise LedgerError(f"run {run_id} is not finished (status {status!r})")
    tenant = run["tenant"] or NO_TENANT
    when = iso_utc_fixed(at or datetime.now(UTC))
    head = tx.run(_LOCK_HEAD, tenant=tenant, genesis=GENESIS_HASH, at=when).single()
    assert head is not None  # MERGE always returns the head
    anchor, head_mac = new_anchor(
        tenant=tenant,
        ledger_seq=int(head["seq"]),
        ledger_hash=head["hash"],
        run_id=run_id,
        subject_id=run["subject_id"],
        subject_incarnation=run["subject_incarnation"],
        run_head_seq=run["head_seq"],
        run_head_hash=run["head_hash"],
        run_status=status,
        key=key,
        anchored_at=when,
    )
    tx.run(
        _CREATE_ANCHOR,
        props=anchor_properties(anchor),
        tenant=tenant,
        seq=anchor.seq,
        hash=anchor.hash,
        head_mac=head_mac,
    ).consume()
    return anchor


def anchor_properties(anchor: Anchor) -> dict[str, Any]:
    """The anchor node's properties (absent fields are not stored)."""
    return anchor.model_dump(exclude_none=True)


def anchor_run(
    driver: neo4j.Driver,
    run_id: str,
    database: str | None = None,
    key: ChainKey | None = None,
) -> Anchor:
    """Anchor a finished run in its own write transaction (see `anchor_in_tx`)."""
    ensure_ledger_schema(driver, database)
    key = key or load_chain_key()
    with driver.session(database=database) as session:
        for attempt in range(3):
            try:
                anchor: Anchor = session.execute_write(lambda tx: anchor_in_tx(tx, run_id, key))
                break
            except ConstraintError:
                # Two anchors of one tenant raced for the same seq: the loser reads again.
                if attempt == 2:
                    raise
        store = session.execute_read(store_id)
    remember_anchor(key, store, anchor)  # after the commit: never an anchor rolled back
    return anchor


def store_id(tx: Tx) -> str:
    """The database's own id: heads are remembered per database, not per tenant name only."""
    rec = tx.run("CALL db.info() YIELD id RETURN id").single()
    return str(rec["id"]) if rec else "?"


_SCHEMA_READY: set[tuple[int, str | None]] = set()


def ensure_ledger_schema(driver: neo4j.Driver, database: str | None = None) -> None:
    """The ledger's uniqueness constraints (checked once per driver and database; created
    when missing). A recorder checks them with its own schema, in the same read."""
    if (id(driver), database) in _SCHEMA_READY:
        return
    apply_missing(driver, LEDGER_CONSTRAINTS, database)
    _SCHEMA_READY.add((id(driver), database))


# -- the machine's own record of ledger heads ---------------------------------------------


def _head_path(directory: Path, name: str) -> Path:
    return directory / HEADS_DIR / (sha256(name.encode("utf-8")).hexdigest()[:32] + ".json")


def _read_entry(path: Path, name: str, strict: bool = False) -> dict[str, Any]:
    """The entry for `name` in `path`; none when the file is absent. When `strict` (verify),
    a file there that is not such an entry raises OSError: unknown is not "no entry"."""
    try:
        entry = json.loads(_read_small_file(path, HEADS_ENTRY_MAX_BYTES))
    except FileNotFoundError:
        return {}
    except OSError:
        entry, reason = None, "is not a small regular file"
    except (ValueError, RecursionError):
        entry, reason = None, "is not JSON"
    else:
        reason = "does not name this tenant's last anchor"
    if isinstance(entry, dict) and entry.get("name") == name and isinstance(entry.get("seq"), int):
        return entry
    if strict:
        raise OSError(f"{HEADS_DIR}/{path.name} {reason}")
    return {}


@contextlib.contextmanager
def _locked_head(key: ChainKey, name: str) -> Iterator[dict[str, Any]]:
    """This machine's entry for `name` (database/tenant), read and rewritten under the lock
    that `chain-heads.json` was written under: one small file, so a finish's cost does not
    grow with every database and tenant the machine has anchored for."""
    assert key.directory is not None
    path = _head_path(key.directory, name)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(key.directory / HEADS_LOCK, "a", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        entry = _read_entry(path, name)
        before = dict(entry)
        yield entry
        if entry != before:
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(entry, sort_keys=True) + "\n", encoding="utf-8")
            os.replace(tmp, path)


def remember_anchor(key: ChainKey | None, store: str, anchor: Anchor) -> None:
    """Keep `anchor` as this machine's last anchor of its tenant (call after the commit)."""
    if key is None or key.directory is None or anchor.key_id != key.key_id:
        return
    name = f"{store}/{anchor.tenant}"
    try:
        with _locked_head(key, name) as known:
            if int(known.get("seq", -1)) < anchor.seq:
                known.update(name=name, seq=anchor.seq, hash=anchor.hash)
    except OSError:
        pass  # the database anchor stands; only the rollback check loses this entry


def remembered_head(
    key: ChainKey | None, store: str, tenant: str, strict: bool = False
) -> tuple[int, str] | None:
    """The last anchor this machine wrote for `tenant`, if it kept one: the later of its
    own file and the entry `chain-heads.json` kept before (written by earlier versions).
    `strict`: its own file, when there, must be such an entry (else OSError)."""
    if key is None or key.directory is None:
        return None
    name = f"{store}/{tenant}"
    found = [_read_entry(_head_path(key.directory, name), name, strict)]
    with contextlib.suppress(OSError, ValueError, AttributeError, RecursionError):
        old_heads = _read_small_file(key.directory / HEADS_FILE, LEGACY_HEADS_MAX_BYTES)
        found.append(json.loads(old_heads).get(name))
    heads = [
        (int(k["seq"]), str(k.get("hash")))
        for k in found
        if isinstance(k, dict) and isinstance(k.get("seq"), int)
    ]
    return max(heads, key=lambda head: head[0]) if heads else None


# -- verification -----------------------------------------------------------------------------


class VerifyProblem(BaseModel):
    """One thing that differs from what was anchored, placed by run and/or ledger seq."""

    kind: str
    run_id: str | None = None
    ledger_seq: int | None = None
    detail: str

    def line(self) -> str:
        """The problem as one line: where, what."""
        where = [f"run {self.run_id}"] if self.run_id else []
        if self.ledger_seq is not None:
            where.append(f"ledger seq {self.ledger_seq}")
        return f"{', '.join(where) or 'ledger'}: {self.kind}: {self.detail}"


class VerifyReport(BaseModel):
    """`investigator verify`: the chains, the ledger and the anchors of one run or tenant."""

    tenant: str
    run_id: str | None = None
    verified: bool
    key: str
    anchors: int
    runs_checked: int
    unanchored_runs: list[str]
    incomplete_runs: list[str]
    purged_runs: list[str]
    problems: list[VerifyProblem]


def _check_anchor_props(
    props: dict[str, Any], key: ChainKey | None, problems: list[VerifyProblem]
) -> None:
    seq, run_id = props.get("seq"), props.get("run_id")

    def add(kind: str, detail: str) -> None:
        problems.append(
            VerifyProblem(
                kind=kind,
                run_id=run_id if isinstance(run_id, str) else None,
                ledger_seq=seq if isinstance(seq, int) else None,
                detail=detail,
            )
        )

    if props.get("hash") != _anchor_hash(props):
        add("anchor_changed", "anchor does not match its hash (an anchored property changed)")
    if key is not None and not key.check(str(props.get("hash")), props.get("mac")):
        add("anchor_mac_invalid", f"HMAC does not verify under {key.key_id}")


def _check_run(
    anchor: dict[str, Any] | None,
    lineage: RunLineage | None,
    run_id: str,
    problems: list[VerifyProblem],
    ledger_began: str | None = None,
) -> str:
    """Compare one run with its anchor; returns `ok`, `unanchored`, `incomplete` or `bad`."""
    before = len(problems)
    seq = anchor.get("seq") if anchor else None
    ledger_seq = seq if isinstance(seq, int) else None

    def add(kind: str, detail: str) -> None:
        problems.append(
            VerifyProblem(kind=kind, run_id=run_id, ledger_seq=ledger_seq, detail=detail)
        )

    if lineage is None:
        if anchor is not None:
            add("run_deleted", "the anchored run is gone from the Context Graph")
        return "bad"
    chain = verify_chain(lineage)
    for p in chain.problems:
        add("chain_invalid", f"seq {p.seq} ({p.kind}): {p.problem}")
    nodes = sorted(lineage.nodes, key=lambda n: n.seq)
    last = nodes[-1]
    run_props = lineage.run_properties or {}
    if anchor is None:
        if run_props.get("status") in (None, RunStatus.INCOMPLETE.value) and not any(
            n.kind == CtxKind.OUTCOME.value for n in nodes
        ):
            return "incomplete" if len(problems) == before else "bad"
        finished = next(
            (n.properties.get("finished_at") for n in nodes if n.kind == CtxKind.OUTCOME.value),
            None,
        )
        if ledger_began is not None and isinstance(finished, str) and finished >= ledger_began:
            add("run_unanchored", "finished after the ledger began, but has no anchor")
        return "unanchored" if len(problems) == before else "bad"
    if run_props.get("tenant") != anchor.get("tenant"):
        # Neither tenant is named: the reader may be of the tenant the run now claims.
        add("tenant_changed", "the run names another tenant than the one it was anchored in")
    anchored_seq, anchored_hash = anchor.get("run_head_seq"), anchor.get("run_head_hash")
    if isinstance(anchored_seq, int) and last.seq < anchored_seq:
        add(
            "run_truncated",
            f"the run ends at seq {last.seq}; it was anchored with {anchored_seq + 1} nodes",
        )
    elif last.properties.get("hash") != anchored_hash or last.seq != anchored_seq:
        add("run_changed", f"the run's last node seq {last.seq} is not the anchored head")
    if run_props.get("status") != anchor.get("run_status"):
        add(
            "status_changed",
            f"status {run_props.get('status')!r}, anchored as {anchor.get('run_status')!r}",
        )
    return "ok" if len(problems) == before else "bad"


def _is_purged(lineage: RunLineage | None) -> bool:
    return lineage is not None and any("purged" in n.properties for n in lineage.nodes)


_PURGE_RUNS = (
    "UNWIND $run_ids AS run_id MATCH (r:CtxRun {run_id: run_id}) "
    "OPTIONAL MATCH (o:CtxOutcome {run_id: run_id}) "
    "RETURN run_id, r.command AS command, o.result AS result"
)


def _purge_ids(lineages: Iterable[RunLineage | None]) -> set[str]:
    return {
        str(node.properties.get("purge_id"))
        for lineage in lineages
        if lineage is not None
        for node in lineage.nodes
        if "purged" in node.properties
    }


def _purged_lists(tx: Tx, purge_ids: Iterable[str]) -> dict[str, set[str]]:
    """Per purge run id, the Context Graph ids its recorded result says it removed (empty
    when it is no purge run or lists none): one read for them all."""
    wanted = sorted(set(purge_ids))
    listed: dict[str, set[str]] = {purge_id: set() for purge_id in wanted}
    seen: set[str] = set()
    for rec in tx.run(_PURGE_RUNS, run_ids=wanted) if wanted else []:
        purge_id = rec["run_id"]
        if purge_id in seen:
            continue  # the first outcome only, as one run's read took it
        seen.add(purge_id)
        if rec["command"] == "purge" and isinstance(rec["result"], str):
            with contextlib.suppress(ValueError, AttributeError):
                listed[purge_id] = set(json.loads(rec["result"]).get("ctx_ids") or [])
    return listed


def _check_purges(
    lineage: RunLineage | None, listed: dict[str, set[str]], problems: list[VerifyProblem]
) -> None:
    """Text may be missing only where a recorded purge run says it removed it (`listed`:
    `_purged_lists` of the lineage's purge ids)."""
    if lineage is None:
        return
    for node in lineage.nodes:
        if "purged" not in node.properties:
            continue
        purge_id = str(node.properties.get("purge_id"))
        if node.properties.get("ctx_id") not in listed.get(purge_id, set()):
            problems.append(
                VerifyProblem(
                    kind="purge_unaccounted",
                    run_id=lineage.run_id,
                    detail=f"seq {node.seq} ({node.kind}): text removed, but no recorded "
                    f"purge run lists it (purge_id {purge_id[:80]!r})",
                )
            )


def verify_tenant_in_tx(tx: Tx, tenant: str, key: ChainKey | None) -> VerifyReport:
    """Every anchor of `tenant` (the ledger chain, HMACs, head) and every run of the tenant."""
    problems: list[VerifyProblem] = []
    anchors = [dict(r["p"]) for r in tx.run(_LEDGER, tenant=tenant, max=LEDGER_MAX)]
    previous_hash = GENESIS_HASH
    for expected_seq, props in enumerate(anchors):
        seq = props.get("seq")
        if seq != expected_seq:
            problems.append(
                VerifyProblem(
                    kind="ledger_broken",
                    ledger_seq=expected_seq,
                    detail=f"anchor {expected_seq} is missing (deleted); next is {seq}",
                )
            )
            previous_hash = ""  # one gap is one problem: resynchronise on the next anchor
        elif previous_hash and props.get("prev_hash") != previous_hash:
            problems.append(
                VerifyProblem(
                    kind="ledger_broken",
                    run_id=props.get("run_id"),
                    ledger_seq=expected_seq,
                    detail=f"prev_hash does not match the hash of ledger seq {expected_seq - 1}",
                )
            )
        _check_anchor_props(props, key, problems)
        previous_hash = str(props.get("hash"))
        if seq != expected_seq:
            break
    head_rec = tx.run(_HEAD, tenant=tenant).single()
    head = dict(head_rec["p"]) if head_rec else None
    last = anchors[-1] if anchors else None
    if head is not None or last is not None:
        head_seq = head.get("seq") if head else None
        if (
            last is None
            or head is None
            or head_seq != last.get("seq")
            or head.get("hash") != last.get("hash")
        ):
            problems.append(
                VerifyProblem(
                    kind="ledger_truncated",
                    ledger_seq=head_seq if isinstance(head_seq, int) else None,
                    detail="the ledger head does not name the last anchor",
                )
            )
        elif key is not None and not key.check(
            _head_message(tenant, int(str(head_seq)), str(head.get("hash"))), head.get("mac")
        ):
            problems.append(
                VerifyProblem(
                    kind="ledger_head_mac_invalid",
                    ledger_seq=head_seq,
                    detail=f"the ledger head's HMAC does not verify under {key.key_id}",
                )
            )
    try:
        remembered = remembered_head(key, store_id(tx), tenant, strict=True)
    except OSError as exc:
        remembered = None
        problems.append(
            VerifyProblem(
                kind="ledger_head_unreadable",
                detail=f"this machine's record of the ledger head {exc}; a ledger rolled "
                "back to an earlier head would not be caught",
            )
        )
    if remembered is not None:
        last_seq = int(last["seq"]) if last and isinstance(last.get("seq"), int) else -1
        mine = next((a for a in anchors if a.get("seq") == remembered[0]), None)
        if last_seq < remembered[0] or mine is None or mine.get("hash") != remembered[1]:
            problems.append(
                VerifyProblem(
                    kind="ledger_truncated",
                    ledger_seq=remembered[0],
                    detail=f"this machine anchored ledger seq {remembered[0]}; the ledger "
                    f"{'ends at ' + str(last_seq) if last_seq < remembered[0] else 'differs'}",
                )
            )

    by_run = {str(a.get("run_id")): a for a in anchors}
    began = str(anchors[0].get("anchored_at")) if anchors else None
    run_rows = list(tx.run(_TENANT_RUNS, tenant=tenant, none=NO_TENANT, max=LEDGER_MAX))
    run_ids = sorted({str(r["run_id"]) for r in run_rows} | set(by_run))
    unanchored: list[str] = []
    incomplete: list[str] = []
    purged: list[str] = []
    # A batch of runs at a time: two reads for their lineages and one for the purge runs
    # they name, instead of two or three a run; a batch's lineages are all that is held.
    for start in range(0, len(run_ids), VERIFY_BATCH):
        batch = run_ids[start : start + VERIFY_BATCH]
        lineages = read_lineages(tx, batch)
        purged_lists = _purged_lists(tx, _purge_ids(lineages.values()))
        for run_id in batch:
            lineage = lineages[run_id]
            outcome = _check_run(by_run.get(run_id), lineage, run_id, problems, began)
            _check_purges(lineage, purged_lists, problems)
            if outcome == "unanchored":
                unanchored.append(run_id)
            elif outcome == "incomplete":
                incomplete.append(run_id)
            if _is_purged(lineage):
                purged.append(run_id)
    return VerifyReport(
        tenant=tenant,
        verified=not problems,
        key=key.key_id if key else "absent",
        anchors=len(anchors),
        runs_checked=len(run_ids),
        unanchored_runs=unanchored,
        incomplete_runs=incomplete,
        purged_runs=purged,
        problems=problems,
    )


def verify_run_in_tx(tx: Tx, run_id: str, tenant: str, key: ChainKey | None) -> VerifyReport:
    """One run: its chain and its anchor (run deleted, truncated, changed, re-statused)."""
    return check_lineage_in_tx(tx, run_id, read_lineage(tx, run_id), tenant, key)


def verify_runs_in_tx(
    tx: Tx, run_ids: Sequence[str], tenant: str, key: ChainKey | None
) -> dict[str, VerifyReport]:
    """Each of `run_ids` as `verify_run_in_tx` checks it, in about four reads for them all
    (lineages, anchors, purge runs) instead of about four a run."""
    return check_lineages_in_tx(tx, read_lineages(tx, run_ids), tenant, key)


def check_lineage_in_tx(
    tx: Tx, run_id: str, lineage: RunLineage | None, tenant: str, key: ChainKey | None
) -> VerifyReport:
    """`verify_run_in_tx` of a lineage the caller already read (`trace` reads it once)."""
    return check_lineages_in_tx(tx, {run_id: lineage}, tenant, key)[run_id]


_ANCHORS_OF = (
    "UNWIND $run_ids AS run_id MATCH (a:CtxAnchor {run_id: run_id}) "
    "RETURN run_id, properties(a) AS p"
)


def check_lineages_in_tx(
    tx: Tx, lineages: dict[str, RunLineage | None], tenant: str, key: ChainKey | None
) -> dict[str, VerifyReport]:
    """`check_lineage_in_tx` of each run id and the lineage the caller read of it: its
    anchor and the purge runs it names read once for them all."""
    anchors = {rec["run_id"]: dict(rec["p"]) for rec in tx.run(_ANCHORS_OF, run_ids=list(lineages))}
    purged_lists = _purged_lists(tx, _purge_ids(lineages.values()))
    reports: dict[str, VerifyReport] = {}
    for run_id, lineage in lineages.items():
        problems: list[VerifyProblem] = []
        anchor = anchors.get(run_id)
        if anchor is not None:
            _check_anchor_props(anchor, key, problems)
        outcome = _check_run(anchor, lineage, run_id, problems)
        _check_purges(lineage, purged_lists, problems)
        reports[run_id] = VerifyReport(
            tenant=tenant,
            run_id=run_id,
            verified=not problems,
            key=key.key_id if key else "absent",
            anchors=1 if anchor else 0,
            runs_checked=1,
            unanchored_runs=[run_id] if outcome == "unanchored" else [],
            incomplete_runs=[run_id] if outcome == "incomplete" else [],
            purged_runs=[run_id] if _is_purged(lineage) else [],
            problems=problems,
        )
    return reports


def chain_key_for_reading() -> ChainKey | None:
    """The chain key for a reader that marks what does not verify (`trace`, `runs`): an
    unreadable or empty key file checks no HMAC (None), as an absent one does; `verify`
    refuses it instead."""
    try:
        return load_chain_key(create=False)
    except OSError:
        return None


def run_owner_in_tx(tx: Tx, run_id: str) -> dict[str, Any] | None:
    """The tenant and subject of run `run_id`: from the run (with its subject's incarnation
    and start), else from its anchor (deleted: its incarnation when anchored with one; else
    none, so only an id never retracted reads it as its own)."""
    rec = tx.run(_RUN_HEAD, run_id=run_id).single()
    if rec is not None:
        # Its incarnation and start tell which holder of the id it is (incarnation.py).
        return {
            key: rec[key] for key in ("tenant", "subject_id", "subject_incarnation", "started_at")
        }
    anchored = tx.run(_ANCHOR_OF, run_id=run_id).single()
    if anchored is not None:
        p = anchored["p"]
        return {key: p.get(key) for key in ("tenant", "subject_id", "subject_incarnation")}
    return None
