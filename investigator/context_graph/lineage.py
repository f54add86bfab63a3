"""Reading one run's recorded lineage back (nodes and relationships), for replay and trace.

Reads match `CtxEvent` and `CtxRun` only: the Context Graph's read side never touches a
Knowledge Graph label.
"""

from __future__ import annotations

import neo4j

from investigator.context_graph.models import CtxEdgeRecord, CtxNodeRecord, RunLineage
from investigator.errors import BadInput

_NODES = (
    "MATCH (n:CtxEvent {run_id: $run_id}) "
    "RETURN labels(n) AS labels, properties(n) AS props ORDER BY n.seq"
)
# A relationship from or to a node outside the run (or outside the Context Graph) is kept
# with seq -1 on the foreign end, so verification reports it.
_EDGES = (
    "MATCH (a:CtxEvent {run_id: $run_id})-[r]->(b) "
    "RETURN a.seq AS from_seq, type(r) AS type, "
    "CASE WHEN b:CtxEvent AND b.run_id = $run_id THEN b.seq ELSE -1 END AS to_seq "
    "UNION ALL "
    "MATCH (a)-[r]->(b:CtxEvent {run_id: $run_id}) "
    "WHERE NOT (a:CtxEvent AND a.run_id = $run_id) "
    "RETURN -1 AS from_seq, type(r) AS type, b.seq AS to_seq"
)

RUN_ID_MAX = 200


def validate_run_id(run_id: str) -> str:
    """A run id as a user may type it: printable, bounded; else BadInput (exit 2)."""
    if (
        not run_id
        or len(run_id) > RUN_ID_MAX
        or not run_id.isprintable()
        or run_id.strip() != run_id
    ):
        raise BadInput(f"not a run id: {run_id[:60]!r}")
    return run_id


def read_lineage(
    tx: neo4j.ManagedTransaction | neo4j.Transaction, run_id: str
) -> RunLineage | None:
    """Run `run_id` as recorded (None when nothing of it is left), in the caller's transaction."""
    nodes = [
        CtxNodeRecord(labels=list(r["labels"]), properties=dict(r["props"]))
        for r in tx.run(_NODES, run_id=run_id)
    ]
    if not nodes:
        return None
    edges = [
        CtxEdgeRecord(from_seq=r["from_seq"], type=r["type"], to_seq=r["to_seq"])
        for r in tx.run(_EDGES, run_id=run_id)
    ]
    run_nodes = [n for n in nodes if "CtxRun" in n.labels]
    return RunLineage(
        run_id=run_id,
        nodes=nodes,
        edges=edges,
        run_properties=run_nodes[0].properties if run_nodes else None,
    )


def load_lineage(driver: neo4j.Driver, run_id: str, database: str | None = None) -> RunLineage:
    """Everything recorded for `run_id`; BadInput (exit 2) if nothing was ever recorded."""
    validate_run_id(run_id)
    with driver.session(database=database, default_access_mode=neo4j.READ_ACCESS) as session:
        lineage: RunLineage | None = session.execute_read(read_lineage, run_id)
    if lineage is None:
        raise BadInput(f"unknown run {run_id}")
    return lineage
