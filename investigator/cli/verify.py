"""`investigator verify [RUN_ID] --subject T/ID [--purpose audit] [--json]`: chains and anchors.

With RUN_ID: that run's hash chain and its anchor in the tenant's ledger (a run deleted,
truncated, re-statused or rewritten after it finished is caught). Without: the whole ledger
of the subject's tenant (needs `--purpose audit`): every anchor, its HMAC, the ledger head,
and every run of the tenant against its anchor. Prints ids, sequence numbers, hashes and
problem places only, never recorded content.

Exit codes: 0 verified; 1 not verified (the report is still printed; one line on stderr
names the first problem); 2 malformed or unknown RUN_ID; 3 the subject may not read it;
4 Neo4j unavailable.
"""

from __future__ import annotations

import sys

import click

from investigator.cli.subject import (
    checked_purpose,
    load_run_reader,
    purpose_option,
    subject_options,
    subject_ref_from,
)
from investigator.connection import open_driver
from investigator.context_graph.audit import AUDIT_PURPOSE, check_run_readable
from investigator.context_graph.ledger import (
    KEY_ENV,
    LedgerError,
    VerifyReport,
    chain_key_path,
    load_chain_key,
    run_owner_in_tx,
    verify_run_in_tx,
    verify_tenant_in_tx,
)
from investigator.context_graph.lineage import UnknownRun, validate_run_id
from investigator.context_graph.recorder import ctx_database_from_env
from investigator.context_graph.runs import unknown_run
from investigator.errors import NotAuthorized
from investigator.settings import resolve_connection
from investigator.terminal import printable

NOT_VERIFIED_EXIT = 1


def _render_text(report: VerifyReport) -> str:
    scope = f"run {report.run_id}" if report.run_id else f"tenant {report.tenant}"
    lines = [
        f"{scope}",
        f"verified:          {str(report.verified).lower()}",
        f"hmac key:          {report.key}",
        f"anchors:           {report.anchors}",
        f"runs checked:      {report.runs_checked}",
    ]
    for title, runs in (
        ("unanchored runs", report.unanchored_runs),
        ("incomplete runs", report.incomplete_runs),
        ("purged runs", report.purged_runs),
    ):
        if runs:
            more = " ..." if len(runs) > 5 else ""
            named = printable(", ".join(runs[:5]))
            lines.append(f"{title + ':':<18} {len(runs)} ({named}{more})")
    if report.problems:
        lines.append("problems:")
        # Run ids and details come from the database an auditor is checking: shown inert.
        lines.extend(f"  {printable(p.line())}" for p in report.problems)
    return "\n".join(lines)


@click.command(name="verify")
@click.argument("run_id", required=False)
@subject_options
@purpose_option
@click.option("--json", "json_out", is_flag=True, help="Print one JSON document.")
def verify_command(
    run_id: str | None,
    subject: str | None,
    tenant: str | None,
    purpose: str | None,
    json_out: bool,
) -> None:
    """Verify run RUN_ID against its anchor, or (no RUN_ID) the tenant's whole ledger.

    Your own runs, or your tenant's with --purpose audit (the whole ledger needs it).

    Exit codes: 0 verified; 1 not verified (the report is still printed; a deleted run is
    still known by its anchor), or a chain key it cannot read (missing while anchors are
    signed, empty, not a regular file, not UTF-8, over 4096 bytes); 2 a malformed RUN_ID, an
    unknown run, or another tenant's (answered alike); 3 another subject's run you may not
    read, or the whole ledger without --purpose audit; 4 Neo4j unavailable.

    \b
    Examples:
      investigator runs --subject acme/user:alice     # the run ids (run-0123abcd below)
      investigator verify run-0123abcd --subject acme/user:alice
      investigator verify --subject acme/user:auditor --purpose audit --json
    """
    if run_id is not None:
        validate_run_id(run_id)
    ref = subject_ref_from(subject, tenant)
    purpose = checked_purpose(purpose)  # bad input before any connection, as runs/trace do
    try:
        key = load_chain_key(create=False)
    except OSError as exc:  # unreadable or empty: checking under no key would mislead
        raise LedgerError(f"cannot read the chain key: {exc}") from exc
    settings = resolve_connection()
    driver = open_driver(settings)
    ctx_database = ctx_database_from_env(settings.database)
    try:
        reader = load_run_reader(driver, settings.database, ref, purpose)
        with driver.session(database=ctx_database) as session:
            if run_id is None:
                tenant = reader.principal.tenant
                if not reader.audits:
                    # Worded by whether the subject holds audit, as trace and replay word it.
                    how = (
                        f"needs --purpose {AUDIT_PURPOSE}"
                        if AUDIT_PURPOSE in reader.principal.purposes
                        else f"is not allowed to {ref} (it needs purpose {AUDIT_PURPOSE})"
                    )
                    raise NotAuthorized(f"verifying tenant {tenant}'s ledger {how}")
                report = session.execute_read(lambda tx: verify_tenant_in_tx(tx, tenant, key))
            else:
                rid = run_id
                owner = session.execute_read(lambda tx: run_owner_in_tx(tx, rid))
                try:
                    if owner is None:
                        raise UnknownRun(rid)
                    check_run_readable(reader, rid, owner)
                except UnknownRun:
                    # As trace and replay say it (context_graph/readable.py).
                    raise unknown_run(driver, reader, rid, ctx_database) from None
                report = session.execute_read(
                    lambda tx: verify_run_in_tx(tx, rid, reader.principal.tenant, key)
                )
    finally:
        driver.close()
    if key is None and report.anchors:
        # No HMAC is checked without the key: a forged anchor would read as verified.
        raise LedgerError(
            f"cannot read the chain key: no {chain_key_path()} and no {KEY_ENV}, and the "
            f"anchors checked ({report.anchors}) are signed; restore the key to verify them"
        )
    click.echo(report.model_dump_json() if json_out else _render_text(report))
    if not report.verified:
        sys.stderr.write(f"error: not verified: {printable(report.problems[0].line())}\n")
        raise click.exceptions.Exit(NOT_VERIFIED_EXIT)


def register(cli: click.Group) -> None:
    cli.add_command(verify_command)
