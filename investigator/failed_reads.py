"""The line that names a run's failed reads, before any other reason it stopped.

A read that failed (a template that timed out on a cold or loaded server, Neo4j refusing it)
leaves what it was to read unknown, not absent. The Status line's stop reason (max_rounds,
evidence_sufficient) says nothing of it, so the CLI report (`Reads` line) and the served
summary (`Note:`) name the failed reads first, with their error, and say to ask again.
"""

from __future__ import annotations

from collections.abc import Iterable


def failed_reads_line(calls: Iterable[tuple[str, str | None]]) -> str | None:
    """`unknown, not absent: 2 of 24 reads timed out (entity_resolution@5, fulltext_search@4:
    query timed out after 5 s and was cancelled); ask again`, from (template, error) pairs
    of a run's tool calls in order; None when none failed. Reads the run's own deadline
    stopped are said as such (the Stopped line says to give it more time)."""
    from cypher_templates.executor import DEADLINE_CUT  # not at import: the served summary's

    pairs = list(calls)
    failed = [(template, error) for template, error in pairs if error]
    if not failed:
        return None
    by_error: dict[str, list[str]] = {}
    for template, error in failed:
        templates = by_error.setdefault(str(error).splitlines()[0][:200], [])
        if template not in templates:
            templates.append(template)
    own = [e for e in by_error if e != DEADLINE_CUT]
    verb = (
        "timed out"
        if own and all("timed out" in e for e in own)
        else "stopped at the run's deadline"
        if not own
        else "failed"
    )
    count = f"{len(failed)} of {len(pairs)} reads"
    details = "; ".join(f"{', '.join(t)}: {e}" for e, t in by_error.items())
    return f"unknown, not absent: {count} {verb} ({details}); ask again"
