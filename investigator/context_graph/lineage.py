"""Reading one run's recorded lineage back (nodes and relationships), for replay and trace.

Reads match `CtxEvent` and `CtxRun` only: the Context Graph's read side never touches a
Knowledge Graph label.
"""

from __future__ import annotations

from collections.abc import Sequence

import neo4j

from investigator.context_graph.models import CtxEdgeRecord, CtxNodeRecord, RunLineage
from investigator.errors import BadInput

# Batched over `$run_ids` (`runs --purpose audit` checks up to 100 runs in these two reads).
_NODES = (
    "UNWIND $run_ids AS run_id MATCH (n:CtxEvent {run_id: run_id}) "
    "RETURN run_id, labels(n) AS labels, properties(n) AS props ORDER BY run_id, n.seq"
)
# A relationship from or to a node outside the run (or outside the Context Graph) is kept
# with seq -1 on the foreign end, so verification reports it.
_EDGES = (
    "UNWIND $run_ids AS run_id MATCH (a:CtxEvent {run_id: run_id})-[r]->(b) "
    "RETURN run_id, a.seq AS from_seq, type(r) AS type, "
    "CASE WHEN b:CtxEvent AND b.run_id = run_id THEN b.seq ELSE -1 END AS to_seq "
    "UNION ALL "
    "UNWIND $run_ids AS run_id MATCH (a)-[r]->(b:CtxEvent {run_id: run_id}) "
    "WHERE NOT (a:CtxEvent AND a.run_id = run_id) "
    "RETURN run_id, -1 AS from_seq, type(r) AS type, b.seq AS to_seq"
)

RUN_ID_MAX = 200


class UnknownRun(BadInput):
    """No run of that id for the reader: never recorded, or another tenant's (answered
    alike: whether a tenant has a run is that tenant's to know). Exit 2. A reader is told
    which of its own runs a partial id starts with (`context_graph.runs.unknown_run`)."""

    def __init__(self, run_id: str, hint: str = "") -> None:
        super().__init__(f"unknown run {run_id}{hint}")
        self.run_id = run_id


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
    return read_lineages(tx, [run_id])[run_id]


def read_lineages(
    tx: neo4j.ManagedTransaction | neo4j.Transaction, run_ids: Sequence[str]
) -> dict[str, RunLineage | None]:
    """Each of `run_ids` as `read_lineage` reads it, in two reads for them all."""
    wanted = list(dict.fromkeys(run_ids))
    nodes: dict[str, list[CtxNodeRecord]] = {run_id: [] for run_id in wanted}
    for r in tx.run(_NODES, run_ids=wanted):
        nodes[r["run_id"]].append(
            CtxNodeRecord(labels=list(r["labels"]), properties=dict(r["props"]))
        )
    found = [run_id for run_id in wanted if nodes[run_id]]
    edges: dict[str, list[CtxEdgeRecord]] = {run_id: [] for run_id in found}
    for r in tx.run(_EDGES, run_ids=found) if found else []:
        edges[r["run_id"]].append(
            CtxEdgeRecord(from_seq=r["from_seq"], type=r["type"], to_seq=r["to_seq"])
        )
    lineages: dict[str, RunLineage | None] = dict.fromkeys(wanted)
    for run_id in found:
        run_nodes = [n for n in nodes[run_id] if "CtxRun" in n.labels]
        lineages[run_id] = RunLineage(
            run_id=run_id,
            nodes=nodes[run_id],
            edges=edges[run_id],
            run_properties=run_nodes[0].properties if run_nodes else None,
        )
    return lineages


def load_lineage(driver: neo4j.Driver, run_id: str, database: str | None = None) -> RunLineage:
    """Everything recorded for `run_id`; BadInput (exit 2) if nothing was ever recorded."""
    validate_run_id(run_id)
    with driver.session(database=database, default_access_mode=neo4j.READ_ACCESS) as session:
        lineage: RunLineage | None = session.execute_read(read_lineage, run_id)
    if lineage is None:
        raise UnknownRun(run_id)
    return lineage
