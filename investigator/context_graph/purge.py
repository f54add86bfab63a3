"""A legal purge reaches the lineage: the text a run recorded from a purged KG record goes too.

`purge_lineage` blanks, in the purging tenant's runs, every content field (chain.py
`CONTENT_FIELDS`: payload, result, statement, question) of the nodes that hold the purged
element's text: the evidence recorded from it, the rejections naming it (also in runs that
kept it only as a rejection), the packs and claims built on that evidence, and the run's
outcome (the printed answer). Each blanked
field leaves its digest in `purged` (`payload=sha256:...`), with `purged_at` and `purge_id`
(the purge's own recorded run). Envelope-2 nodes hash content by digest, so the chain still
verifies; nodes recorded before envelope 2 keep their links but their own hash can no longer
be recomputed (docs/context-graph.md, "Purge").
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import neo4j
from pydantic import BaseModel

from graph_schema.canonical import iso_utc_fixed, sha256_text
from investigator.context_graph.chain import CONTENT_FIELDS
from investigator.context_graph.ledger import NO_TENANT
from investigator.evidence import RejectionReason

# The nodes of `tenant`'s runs that hold text of `element_id` (and of runs recorded before
# runs carried a tenant: their tenant is unknown, so over-purging is the safe side). A run
# holds it when it kept the record as evidence or only as a rejection (an untrusted
# instruction, a conflict's loser, a superseded version): its rejection's detail and its
# outcome (the answer, with its rejected list) quote it. Tool calls keep ids, never text.
# A run that rejected it for its integrity read no text of it (a run after the purge meets
# it so): that rejection quotes none, and a second purge must find nothing left.
_AFFECTED = """
CALL () {
  MATCH (ev:CtxEvidence) WHERE $element_id IN ev.element_ids RETURN ev.run_id AS run_id
  UNION
  MATCH (rj:CtxRejection)
  WHERE rj.payload CONTAINS $quoted AND coalesce(rj.reason, '') <> $integrity
  RETURN rj.run_id AS run_id
}
MATCH (run:CtxRun {run_id: run_id}) WHERE coalesce(run.tenant, $none) IN [$tenant, $none]
CALL (run) {
  OPTIONAL MATCH (ev:CtxEvidence {run_id: run.run_id}) WHERE $element_id IN ev.element_ids
  RETURN collect(ev) AS evs, collect(ev.evidence_id) AS ev_ids
}
CALL (run, evs, ev_ids) {
  UNWIND evs AS n RETURN n
  UNION
  MATCH (n:CtxRejection {run_id: run.run_id}) WHERE n.payload CONTAINS $quoted RETURN n
  UNION
  MATCH (n:CtxPack {run_id: run.run_id})
  WHERE any(e IN coalesce(n.evidence_ids, []) WHERE e IN ev_ids) RETURN n
  UNION
  MATCH (n:CtxClaim {run_id: run.run_id})
  WHERE any(e IN coalesce(n.evidence_ids, []) WHERE e IN ev_ids) RETURN n
  UNION
  MATCH (n:CtxOutcome {run_id: run.run_id}) RETURN n
}
RETURN elementId(n) AS node, n.ctx_id AS ctx_id, n.run_id AS run_id, properties(n) AS props
ORDER BY run_id, n.seq
"""
_BLANK = """
UNWIND $rows AS row
MATCH (n) WHERE elementId(n) = row.node
SET n += row.blank, n.purged = coalesce(n.purged, []) + row.purged,
    n.purged_at = $at, n.purge_id = $purge_id
"""


class LineagePurge(BaseModel):
    """What a purge removed from the Context Graph."""

    runs: list[str]
    ctx_ids: list[str]


def purge_lineage_in_tx(
    tx: neo4j.ManagedTransaction,
    tenant: str,
    element_id: str,
    purge_id: str,
    at: datetime,
) -> LineagePurge:
    """Blank the text of `element_id` in `tenant`'s runs (idempotent: blanked stays blank)."""
    rows: list[dict[str, Any]] = []
    runs: set[str] = set()
    found = tx.run(
        _AFFECTED,
        element_id=element_id,
        quoted=f'"{element_id}"',
        tenant=tenant,
        none=NO_TENANT,
        integrity=RejectionReason.REJECTED_INTEGRITY.value,
    )
    for rec in found:
        props = dict(rec["props"])
        present = sorted(f for f in CONTENT_FIELDS if isinstance(props.get(f), str))
        if not present:
            continue
        rows.append(
            {
                "node": rec["node"],
                "blank": {f: None for f in present},
                "purged": [f"{f}={sha256_text(props[f])}" for f in present],
                "ctx_id": rec["ctx_id"],
            }
        )
        runs.add(str(rec["run_id"]))
    if rows:
        tx.run(_BLANK, rows=rows, at=iso_utc_fixed(at), purge_id=purge_id).consume()
    return LineagePurge(runs=sorted(runs), ctx_ids=[str(r["ctx_id"]) for r in rows])


def purge_lineage(
    driver: neo4j.Driver,
    tenant: str,
    element_id: str,
    purge_id: str,
    at: datetime,
    database: str | None = None,
) -> LineagePurge:
    """`purge_lineage_in_tx` in its own write transaction."""
    with driver.session(database=database) as session:
        done: LineagePurge = session.execute_write(
            lambda tx: purge_lineage_in_tx(tx, tenant, element_id, purge_id, at)
        )
    return done
