"""One recorded run as a reader may see it: the rules of `audit`, in the order trace, replay
and the served tools apply them."""

from __future__ import annotations

import neo4j

from cypher_templates.executor import TemplateExecutor
from cypher_templates.subject import SubjectRef
from investigator.context_graph.audit import (
    ContentFilter,
    RunReader,
    check_run_readable,
    load_reader,
)
from investigator.context_graph.ledger import (
    VerifyReport,
    chain_key_for_reading,
    check_lineage_in_tx,
)
from investigator.context_graph.lineage import UnknownRun, load_lineage
from investigator.context_graph.models import RunLineage
from investigator.context_graph.runs import unknown_run
from investigator.terminal import printable


def readable_run(
    driver: neo4j.Driver,
    ref: SubjectRef,
    purpose: str | None,
    run_id: str,
    *,
    ctx_database: str | None,
    kg_database: str | None,
    executor: TemplateExecutor | None = None,
    replaying: bool = False,
) -> tuple[RunLineage, ContentFilter]:
    """The lineage of run `run_id` and the filter of what reader `ref` may see of it.

    The reader is loaded as of now through `executor` (a long-lived process passes its own;
    else one on `kg_database`; unknown, or a purpose it does not hold: NotAuthorized, exit 3);
    then the
    lineage (never recorded: BadInput, exit 2); NotAuthorized (exit 3) unless the reader may
    read the run; and the filter of the run's content by the reader's grants of now.
    `replaying`: for replay (the refusal's hint names what works for it).
    """
    reader, lineage = _reader_and_lineage(
        driver, ref, purpose, run_id, ctx_database, kg_database, executor, replaying
    )
    return lineage, ContentFilter(driver, reader, lineage, kg_database, executor=executor)


def _reader_and_lineage(
    driver: neo4j.Driver,
    ref: SubjectRef,
    purpose: str | None,
    run_id: str,
    ctx_database: str | None,
    kg_database: str | None,
    executor: TemplateExecutor | None,
    replaying: bool = False,
) -> tuple[RunReader, RunLineage]:
    """The reader, the run's lineage, and the check that the reader may read the run."""
    reader = load_reader(executor or TemplateExecutor(driver, database=kg_database), ref, purpose)
    try:
        lineage = load_lineage(driver, run_id, database=ctx_database)
        check_run_readable(reader, run_id, lineage.run_properties, replaying=replaying)
    except UnknownRun:
        # Never recorded, or another tenant's: one line either way, naming the reader's own
        # runs a partial id starts with.
        raise unknown_run(driver, reader, run_id, ctx_database) from None
    return reader, lineage


def checked_readable_run(
    driver: neo4j.Driver,
    ref: SubjectRef,
    purpose: str | None,
    run_id: str,
    *,
    ctx_database: str | None,
    kg_database: str | None,
    executor: TemplateExecutor | None = None,
) -> tuple[RunLineage, ContentFilter, VerifyReport]:
    """`readable_run`, with the run checked against its chain and anchor as `verify` checks
    it (the report), and the filter told when it does not verify: a run anchored in another
    tenant than it names shows none of its KG content, and a record it names that is not
    found is not said to be gone. `executor` as for `readable_run`."""
    reader, lineage = _reader_and_lineage(
        driver, ref, purpose, run_id, ctx_database, kg_database, executor
    )
    key = chain_key_for_reading()
    tenant = reader.principal.tenant
    with driver.session(database=ctx_database, default_access_mode=neo4j.READ_ACCESS) as session:
        report = session.execute_read(
            lambda tx: check_lineage_in_tx(tx, run_id, lineage, tenant, key)
        )
    content = ContentFilter(
        driver,
        reader,
        lineage,
        kg_database,
        tenant_changed=any(p.kind == "tenant_changed" for p in report.problems),
        verified=report.verified,
        executor=executor,
    )
    return lineage, content, report


def verify_problem_lines(report: VerifyReport) -> list[str]:
    """The report's problems as `trace` prints them and marks its documents with (CLI and
    served tool alike): places and kinds only, no recorded content, no other tenant."""
    return [printable(p.line()) for p in report.problems]
