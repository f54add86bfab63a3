"""`investigator replay RUN_ID [--json]`: re-execute a recorded run and prove it matches.

Exit codes: 0 verified (also a run whose fulltext scores moved only because of records
written after it, re-derived from its recorded ranking: `notes` say so); 1 not verified (the
report is still printed, and one line on stderr
names the first place that differs whose cause is known, else the first); 2 unknown or
malformed RUN_ID; 3 the subject may not read the run (not its own, without `--purpose
audit`; another tenant's), or the run's subject was an earlier holder of its id, retracted
and written again for someone else (one line, nothing printed: its grants are gone, the new
holder's would compare someone else's reads), or the chain verified and the run's subject
may no longer read what the run read (its grants or a record's labels changed; the report
is printed); 4 Neo4j unavailable.
"""

from __future__ import annotations

import sys

import click

from investigator.cli.first_question import first_question_note
from investigator.cli.subject import purpose_option, reader_inputs, subject_options
from investigator.connection import open_driver
from investigator.context_graph.lineage import validate_run_id
from investigator.context_graph.readable import readable_run
from investigator.context_graph.recorder import ctx_database_from_env
from investigator.json_documents import readable_replay_report, replay_json
from investigator.replay import ReplayReport, headline_drift, replay_reader, replay_run
from investigator.settings import resolve_connection

NOT_VERIFIED_EXIT = 1
# The chain verified; only what the run's subject may read now differs (not authorized).
GRANTS_CHANGED_EXIT = 3


def _first_difference(report: ReplayReport) -> str:
    if report.problems:
        return report.problems[0]
    d = headline_drift(report.drift)
    if d is not None:
        where = f" seq {d.seq}" if d.seq is not None else ""
        call = f" tool call {d.tool_call_id}" if d.tool_call_id else ""
        return f"run {report.run_id}{where}{call}: {d.kind}: {d.detail}"
    return f"run {report.run_id}: pack_hash does not match"


def _pack_hash_line(report: ReplayReport) -> str:
    """The pack_hash comparison, or why none was made (never a hash next to itself)."""
    if report.pack_hash_note is not None:
        recorded = f", recorded {report.recorded_pack_hash}" if report.recorded_pack_hash else ""
        return f"  ({report.pack_hash_note}{recorded})"
    return f"  (recorded {report.recorded_pack_hash}, replayed {report.replayed_pack_hash})"


def _grants_headline(report: ReplayReport) -> str:
    """Beside `verified: false`, when the chain verified and only grants differ."""
    if not report.differs_by_grants_only:
        return ""
    return " (the chain verified; what differs is what the run's subject may read now, not the run)"


def _render_text(report: ReplayReport) -> str:
    lines = [
        f"run {report.run_id} ({report.command or '?'}, {report.status or '?'})",
        f"verified:        {str(report.verified).lower()}{_grants_headline(report)}",
        f"chain_valid:     {str(report.chain_valid).lower()}",
        f"pack_hash_match: {str(report.pack_hash_match).lower()}" + _pack_hash_line(report),
        f"tool calls:      {report.tool_calls_matched}/{report.tool_calls} re-executed identically",
        f"evidence:        {report.evidence_matched}/{report.evidence} recomputed identically",
    ]
    if report.times:
        # The re-run is at the recorded times, never at a new now or a text read again.
        lines.append(f"times:           {report.times} (as recorded; the re-run is at these)")
    if report.problems:
        lines.append("chain problems:")
        lines.extend(f"  {p}" for p in report.problems)
    if report.notes:
        lines.append("notes:")
        lines.extend(f"  {n}" for n in report.notes)
    if report.drift:
        lines.append("drift:")
        for d in report.drift:
            where = f"seq {d.seq} " if d.seq is not None else ""
            call = f"tool call {d.tool_call_id} " if d.tool_call_id else ""
            lines.append(f"  {where}{call}{d.kind}: {d.detail}")
    return "\n".join(lines)


@click.command(name="replay")
@click.argument("run_id")
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document.")
@subject_options
@purpose_option
def replay_command(
    run_id: str, json_out: bool, subject: str | None, tenant: str | None, purpose: str | None
) -> None:
    """Re-execute run RUN_ID's tool calls at its known_at and verify chain and pack_hash.

    Your own runs, or your tenant's with --purpose audit.

    Exit codes: 0 verified (notes say when fulltext scores moved because of later
    records); 1 not verified (the report is still printed); 2 a malformed
    RUN_ID, an unknown run, or another tenant's (answered alike); 3 another subject's run
    you may not read, a run whose subject holds no grants now (retracted, or an earlier
    holder of its id), or the chain verified and the run's subject may no longer read what
    the run read (its grants or a record's labels changed; the report is still printed);
    4 Neo4j unavailable.

    \b
    Examples:
      investigator runs --subject acme/user:alice     # the run ids (run-0123abcd below)
      investigator replay run-0123abcd --subject acme/user:alice
      investigator replay run-0123abcd --subject acme/user:auditor --purpose audit --json
    """
    validate_run_id(run_id)
    ref, purpose = reader_inputs(subject, tenant, purpose)
    settings = resolve_connection()
    driver = open_driver(settings)
    ctx_database = ctx_database_from_env(settings.database)
    try:
        _, content = readable_run(
            driver,
            ref,
            purpose,
            run_id,
            ctx_database=ctx_database,
            kg_database=settings.database,
            replaying=True,
        )
        with first_question_note(driver, settings.database, "replay"):
            report = replay_run(
                driver,
                run_id,
                ctx_database=ctx_database,
                kg_database=settings.database,
                reader=replay_reader(content),
                asker=str(ref),
            )
    finally:
        driver.close()
    report = readable_replay_report(report, content)
    click.echo(replay_json(report) if json_out else _render_text(report))
    if report.differs_by_grants_only:
        sys.stderr.write(
            "error: replay not reproduced: the chain verified, but the run's subject may no "
            f"longer read what the run read (its grants or a record's labels changed): "
            f"{_first_difference(report)}\n"
        )
        raise click.exceptions.Exit(GRANTS_CHANGED_EXIT)
    if not report.verified:
        sys.stderr.write(f"error: replay not verified: {_first_difference(report)}\n")
        raise click.exceptions.Exit(NOT_VERIFIED_EXIT)


def register(cli: click.Group) -> None:
    cli.add_command(replay_command)
