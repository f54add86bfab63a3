"""The Context Graph: an append-only, hash-chained lineage of every investigation run.

`RunRecorder` writes it (its own write path, `Ctx*` labels only); `load_lineage`,
`verify_chain`, `list_runs` and the trace renderers read it; `investigator.replay` re-runs it.
See docs/context-graph.md.
"""

from investigator.context_graph.chain import (
    canonical_json,
    request_fingerprint,
    rows_hash,
    sha256_of,
    verify_chain,
)
from investigator.context_graph.lineage import load_lineage
from investigator.context_graph.models import (
    ChainProblem,
    ChainReport,
    CtxKind,
    ProvRelation,
    RunLineage,
    RunRequest,
    RunStart,
    RunStatus,
    RunSummary,
    ToolCallRecord,
)
from investigator.context_graph.recorder import (
    CTX_DATABASE_ENV,
    RecorderError,
    RunRecorder,
    ctx_database_from_env,
)
from investigator.context_graph.runs import list_runs

__all__ = [
    "CTX_DATABASE_ENV",
    "ChainProblem",
    "ChainReport",
    "CtxKind",
    "ProvRelation",
    "RecorderError",
    "RunLineage",
    "RunRecorder",
    "RunRequest",
    "RunStart",
    "RunStatus",
    "RunSummary",
    "ToolCallRecord",
    "canonical_json",
    "ctx_database_from_env",
    "list_runs",
    "load_lineage",
    "request_fingerprint",
    "rows_hash",
    "sha256_of",
    "verify_chain",
]
