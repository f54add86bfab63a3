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
from importlib.resources.abc import Traversable

# The modules of this package whose code decides what a run answers, in a fixed order (a
# package stands for all its modules): those that plan, retrieve, gate, pack and claim, and
# every module they import that changes an answer's text or status (the time periods, the
# runbook sections and versions, the notes, the search words). tests/test_decision_code.py
# walks their imports: a module they import is here or in PLUMBING.
DECISION_MODULES = (
    "alert_rules",
    "change_period",
    "claims",
    "db_engines",
    "entity_suggestions",
    "evidence",
    "failed_reads",
    "gate",
    "incident_reference",
    "invisible_marks",
    "investigation",
    "ownership_history",
    "pack",
    "planner",
    "record_time",
    "release_clock",
    "release_names",
    "retrieval",
    "rubric",
    "rule_texts",
    "runbook_fallback",
    "runbook_gaps",
    "runbook_lookup",
    "runbook_period",
    "runbook_search",
    "runbook_sections",
    "runbook_text_time",
    "session",
    "spelling",
    "stop_words",
    "tenant_records",
    "terminal",
    "timeline",
    "untrusted_text",
)

# The modules the decision modules import that decide nothing of an answer, each with why:
# a change there cannot change what a run answers (its records, errors, speed), so it does
# not change the fingerprint.
PLUMBING = {
    "context_graph": "records a run and reads it back (the run's chain, lineage, ledger)",
    "decision_code": "this fingerprint",
    "defaults": "the defaults of a request's options, recorded on the run with the request",
    "errors": "error classes and exit codes (a run that fails records no answer)",
    "lazy_pattern": "compiles a pattern on first use (the pattern is the caller's)",
    "telemetry": "OpenTelemetry spans",
}


@functools.cache  # the source cannot change within a process
def decision_code() -> str:
    """`sha256:<hex>` of the decision modules' source, each prefixed by its name (a package's
    modules by `package/module.py`)."""
    digest = hashlib.sha256()
    for label, source in decision_sources():
        digest.update(label.encode() + b"\0")
        digest.update(source.read_bytes())
        digest.update(b"\0")
    return "sha256:" + digest.hexdigest()


def decision_sources() -> list[tuple[str, Traversable]]:
    """The source files the fingerprint hashes, in order, each with its label (`planner`,
    a package's modules by `package/module.py`)."""
    package = resources.files("investigator")
    out: list[tuple[str, Traversable]] = []
    for name in DECISION_MODULES:
        module = package / f"{name}.py"
        if module.is_file():
            out.append((name, module))
            continue
        # A package: its modules, by name.
        parts = (package / name).iterdir()
        named = ((f"{name}/{p.name}", p) for p in parts if p.name.endswith(".py"))
        out += sorted(named, key=lambda pair: pair[0])
    return out
