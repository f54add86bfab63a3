"""Which code decided an answer: a fingerprint of the modules that plan, retrieve, gate,
pack and claim.

Every run records it (`CtxRun.decision_code`). Replay re-runs a command with today's code, so
when its answer differs from the recorded one, a changed fingerprint says the difference may
come from the code rather than from the data (docs/context-graph.md, Replay). Templates are
not in it: each tool call records its template's own version and hash.
"""

from __future__ import annotations

import functools
import hashlib
from importlib import resources

# The modules of this package whose code decides what a run answers, in a fixed order (a
# package stands for all its modules).
DECISION_MODULES = (
    "claims",
    "entity_suggestions",
    "evidence",
    "gate",
    "investigation",
    "ownership_history",
    "pack",
    "planner",
    "retrieval",
    "rubric",
    "runbook_fallback",
    "runbook_gaps",
    "runbook_lookup",
    "runbook_search",
    "session",
    "timeline",
)


@functools.cache  # the source cannot change within a process
def decision_code() -> str:
    """`sha256:<hex>` of the decision modules' source, each prefixed by its name (a package's
    modules by `package/module.py`)."""
    digest = hashlib.sha256()
    package = resources.files("investigator")
    for name in DECISION_MODULES:
        module = package / f"{name}.py"
        if module.is_file():
            sources = [(name, module)]
        else:  # a package: its modules, by name
            parts = (package / name).iterdir()
            named = ((f"{name}/{p.name}", p) for p in parts if p.name.endswith(".py"))
            sources = sorted(named, key=lambda pair: pair[0])
        for label, source in sources:
            digest.update(label.encode() + b"\0")
            digest.update(source.read_bytes())
            digest.update(b"\0")
    return "sha256:" + digest.hexdigest()
