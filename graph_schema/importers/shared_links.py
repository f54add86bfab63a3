"""Who holds a runbook-to-alert link that both importers state.

A runbook folder links `runbook:X` to `alert:X` (the file name, front matter `alerts:`) and a
rule file links `alert:X` to `runbook:X` (`runbook_url`): one relationship, one key
(`APPLIES_TO|runbook:X|alert:X`). Its holder is the source of its current record, the first
import that wrote it. The other import's statement of it is a no-op when it agrees (the same
ACL, the same purposes, the same relationship properties: who may read the link and what it
says; where each source says it, its version and locator, is provenance and not compared),
and a conflict reported on stderr when it does not; either way the holder's record stands and
nothing of it is written. Before, each import wrote its own version over the other's, so a
cron importing the runbooks and then the rules wrote two versions of every link per run and
the link's `source_id` flipped (docs/kg-model.md, "A source writes only its own records").

This is for a link whose holder holds one of its ends and the import the other (the runbook
and the alert): a restatement by a source holding neither end, or naming a record another
source holds, is left to the writer's own check (refused). A link with no current record, or
one whose current record is a retraction, is written as the import states it; a link the same
source holds goes to the writer as before (unchanged, or a new version when it changed). The
ingest's `linked:` lines name only links with no active record yet: a re-import of unchanged
files says none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import neo4j
from pydantic import BaseModel, ConfigDict

from graph_schema.bundle import Bundle
from graph_schema.importers.common import listed_names
from graph_schema.importers.result import ImportResult
from graph_schema.kg_types import RecordStatus, RelType

_READ_BATCH = 5000
# The current record(s) of each link key (a node's new version copies its links: several
# current copies share one version, one source, one content).
_CURRENT_LINKS = (
    "UNWIND $keys AS key MATCH ()-[r:APPLIES_TO {key: key}]->() "
    "WHERE r.tenant = $tenant AND r.superseded_at IS NULL "
    "RETURN key, r.source_id AS source, r.status AS status, r.acl AS acl, "
    "r.purposes AS purposes, properties(r) AS props ORDER BY r.version DESC"
)
_END_SOURCES = (
    "UNWIND $ids AS id MATCH (n:KG {tenant: $tenant, id: id}) WHERE n.superseded_at IS NULL "
    "RETURN DISTINCT id, n.source_id AS source"
)
_SOURCE_PURPOSES = (
    "MATCH (s:KG:Source {tenant: $tenant, id: $id}) WHERE s.superseded_at IS NULL "
    "RETURN s.allowed_purposes AS purposes LIMIT 1"
)
# Links named in one conflict line; the rest are counted.
_NAMED = 3


class _Statement(BaseModel):
    """One APPLIES_TO link as this import states it."""

    model_config = ConfigDict(frozen=True)

    key: str
    ends: tuple[str, str]
    source: str | None
    acl: tuple[str, ...]
    props: tuple[tuple[str, Any], ...]


class _Held(BaseModel):
    """The current record of a link key."""

    model_config = ConfigDict(frozen=True)

    source: str | None
    active: bool
    acl: tuple[str, ...]
    purposes: tuple[str, ...]
    props: Mapping[str, Any]


def _statements(bundle: Bundle) -> list[_Statement]:
    out = []
    for doc in bundle.documents:
        for target in doc.applies_to:
            out.append(
                _Statement(
                    key=f"{RelType.APPLIES_TO.value}|{doc.id}|{target}",
                    ends=(doc.id, target),
                    source=doc.source_id,
                    acl=tuple(sorted(doc.acl or [])),
                    props=(),
                )
            )
    for edge in bundle.edges:
        if edge.type is RelType.APPLIES_TO:
            out.append(
                _Statement(
                    key=edge.edge_key,
                    ends=(edge.from_, edge.to),
                    source=edge.source_id,
                    acl=tuple(sorted(edge.acl or [])),
                    props=tuple(sorted(edge.props.items())),
                )
            )
    return out


def _current(
    driver: neo4j.Driver, database: str | None, tenant: str, keys: Sequence[str]
) -> dict[str, _Held]:
    held: dict[str, _Held] = {}
    for start in range(0, len(keys), _READ_BATCH):
        records, _, _ = driver.execute_query(
            _CURRENT_LINKS,
            keys=list(keys[start : start + _READ_BATCH]),
            tenant=tenant,
            database_=database,
            routing_=neo4j.RoutingControl.READ,
        )
        for r in records:
            held.setdefault(
                r["key"],
                _Held(
                    source=r["source"],
                    active=r["status"] == RecordStatus.ACTIVE.value,
                    acl=tuple(sorted(r["acl"] or [])),
                    purposes=tuple(sorted(r["purposes"] or [])),
                    props=dict(r["props"]),
                ),
            )
    return held


def _end_holders(
    driver: neo4j.Driver, database: str | None, bundle: Bundle, ids: set[str]
) -> dict[str, str | None]:
    """The source of each id's current record, else of the bundle's entry of it (new)."""
    holders: dict[str, str | None] = {}
    entries = [(n.id, n.source_id) for n in bundle.nodes]
    entries += [(d.id, d.source_id) for d in bundle.documents]
    for element_id, source in entries:
        if element_id in ids:
            holders[element_id] = source
    records, _, _ = driver.execute_query(
        _END_SOURCES,
        ids=sorted(ids),
        tenant=bundle.tenant,
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    holders.update({r["id"]: r["source"] for r in records})
    return holders


def _purposes(
    driver: neo4j.Driver, database: str | None, result: ImportResult, tenant: str, source: str
) -> tuple[str, ...]:
    """The purposes the import's records get: its source's (the tenant's record of it, else
    the one the import would write)."""
    records, _, _ = driver.execute_query(
        _SOURCE_PURPOSES,
        tenant=tenant,
        id=source,
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    if records and records[0]["purposes"] is not None:
        return tuple(sorted(records[0]["purposes"]))
    if result.source is not None and result.source.source_id == source:
        return tuple(sorted(result.source.allowed_purposes))
    return ()


def _labels(labels: Iterable[str]) -> str:
    return "[" + ", ".join(labels) + "]"


def _differences(
    statement: _Statement, purposes: tuple[str, ...], held: _Held
) -> tuple[str, str] | None:
    """How the holder's record and the statement differ, each side in words; None if alike."""
    mine: list[str] = []
    theirs: list[str] = []
    if statement.acl != held.acl:
        theirs.append(f"acl {_labels(held.acl)}")
        mine.append(f"acl {_labels(statement.acl)}")
    if purposes and purposes != held.purposes:
        theirs.append(f"purposes {_labels(held.purposes)}")
        mine.append(f"purposes {_labels(purposes)}")
    for name, value in statement.props:
        if held.props.get(name) != value:
            theirs.append(f"{name} {held.props.get(name)!r}")
            mine.append(f"{name} {value!r}")
    if not mine:
        return None
    return ", ".join(theirs), ", ".join(mine)


def _link_text(key: str) -> str:
    _, start, end = key.split("|", 2)
    return f"{start} APPLIES_TO {end}"


def _conflict_lines(conflicts: Sequence[tuple[_Statement, _Held, tuple[str, str]]]) -> list[str]:
    groups: dict[tuple[str | None, str | None, str, str], list[str]] = {}
    for statement, held, (theirs, mine) in conflicts:
        groups.setdefault((held.source, statement.source, theirs, mine), []).append(statement.key)
    lines = []
    for (holder, incoming, theirs, mine), keys in groups.items():
        if len(keys) == 1:
            subject = f"{_link_text(keys[0])} is held by {holder}"
            pronoun, verb = "it", "its record stands"
        else:
            named = listed_names([_link_text(k) for k in keys], _NAMED, sep="; ")
            subject = f"{len(keys)} links ({named}) are held by {holder}"
            pronoun, verb = "them", "their records stand"
        lines.append(
            f"{subject} with {theirs}; {incoming} states {pronoun} with {mine}: {verb}, "
            f"this import leaves {pronoun} alone (a link has one holder: change it by "
            f"re-importing {holder})"
        )
    return lines


def settle_shared_links(
    driver: neo4j.Driver, database: str | None, result: ImportResult
) -> ImportResult:
    """Leave out of `result`'s bundle the APPLIES_TO links another source holds (a conflict
    line when this import states one otherwise), and out of its `linked:` report every link
    already recorded. Call it once the bundle's ACL is final (after a re-import's ACL is
    settled); it changes `result` in place and returns it."""
    bundle = result.bundle
    if bundle is None or result.problems:
        return result
    statements = _statements(bundle)
    if not statements:
        return result
    held = _current(driver, database, bundle.tenant, sorted({s.key for s in statements}))
    others = [
        s
        for s in statements
        if (record := held.get(s.key)) is not None and record.active and record.source != s.source
    ]
    ends = (
        _end_holders(driver, database, bundle, {e for s in others for e in s.ends})
        if others
        else {}
    )
    purposes: dict[str, tuple[str, ...]] = {}
    dropped: set[str] = set()
    conflicts: list[tuple[_Statement, _Held, tuple[str, str]]] = []
    for statement in sorted(others, key=lambda s: s.key):
        record = held[statement.key]
        holders = {ends.get(end) for end in statement.ends}
        if holders != {record.source, statement.source}:
            # Not the two ends' sources each stating the link (an import naming a runbook
            # another source holds): the writer's own check decides (a takeover is refused).
            continue
        source = statement.source or ""
        if source not in purposes:
            purposes[source] = _purposes(driver, database, result, bundle.tenant, source)
        dropped.add(statement.key)
        difference = _differences(statement, purposes[source], record)
        if difference is not None:
            conflicts.append((statement, record, difference))
    new = {s.key for s in statements if s.key not in held or not held[s.key].active}
    result.linked = [link for s in result.linked if (link := s.only(new)) is not None]
    result.conflicts = _conflict_lines(conflicts)
    if dropped:
        result.bundle = _without(bundle, dropped)
    return result


def _without(bundle: Bundle, keys: set[str]) -> Bundle:
    """`bundle` without the APPLIES_TO links of `keys`."""
    documents = [
        doc.model_copy(
            update={
                "applies_to": [
                    t
                    for t in doc.applies_to
                    if f"{RelType.APPLIES_TO.value}|{doc.id}|{t}" not in keys
                ]
            }
        )
        for doc in bundle.documents
    ]
    edges = [e for e in bundle.edges if not (e.type is RelType.APPLIES_TO and e.edge_key in keys)]
    return bundle.model_copy(update={"documents": documents, "edges": edges})
