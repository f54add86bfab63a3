"""`investigator investigate`'s run and its report: imported by the command once its options
have passed the checks that need nothing heavy (investigator/cli/investigate.py)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

import click
from pydantic import ValidationError

from cypher_templates.executor import TemplateExecutor
from graph_schema.canonical import iso_utc
from investigator.claims import CauseAssessment, Claim, Confounder
from investigator.cli.first_question import first_question_note
from investigator.cli.trust_hint import PURGED_HINT, untrusted_hint
from investigator.connection import open_driver
from investigator.context_graph.recorder import RunRecorder, ctx_database_from_env
from investigator.context_graph.run_times import AsOfFrom, as_of_source
from investigator.errors import BadInput
from investigator.evidence import Evidence, RejectionReason, purged_rejection
from investigator.failed_reads import failed_reads_line
from investigator.investigation import InvestigationRequest, InvestigationResult, investigate
from investigator.json_documents import investigation_json
from investigator.name_hints import unresolved_names
from investigator.record_time import missing_file_note
from investigator.runbook_sections import excerpt_at, rendered_lines
from investigator.settings import resolve_connection
from investigator.terminal import one_line
from investigator.time_word_lines import unplaced_time_lines

# A claim is built bounded (quotes are cut where they are made); this only guards the line.
_CLAIM_LIMIT = 2000


def _clean(text: object, limit: int = 160) -> str:
    """One printable line: KG text may carry escape sequences meant for a terminal."""
    return one_line(text, limit)


# A line of only `-`, `=`, `*` or `_` (a Markdown rule, a setext heading's underline): no
# words, and `Backdoor:EC2/Spambot -------------------- ###` led a GuardDuty page's preview.
_RULE_LINE = re.compile(r"^\s*([-=*_])(?:\s*\1){2,}\s*$")


def _preview(content: object) -> str:
    """An evidence item's text as its one-line preview: its Markdown rule lines left out,
    the rest as the runbook card renders it (no emphasis marks, a heading as `Title:`)."""
    text = "\n".join(line for line in str(content or "").splitlines() if not _RULE_LINE.match(line))
    return "\n".join(rendered_lines(text))


# The locator a claim names last (`... is the version in force at T [x.md#mitigation]`).
_CITED_SECTION = re.compile(r"\[([^\[\]\s]+#[^\[\]\s]+)\]$")


def _cited_sections(claims: Sequence[Claim]) -> dict[str, str]:
    """Evidence id -> the section locator a claim citing it names (the first such claim)."""
    cited: dict[str, str] = {}
    for claim in claims:
        if (found := _CITED_SECTION.search(claim.statement)) is not None:
            for evidence_id in claim.evidence_ids:
                cited.setdefault(evidence_id, found.group(1))
    return cited


def _preview_text(ev: Evidence, cited: dict[str, str]) -> object:
    """The text an evidence item's preview starts from: of a whole runbook a claim cites at
    one of its sections, that section (the file's opening text is not what was cited)."""
    locator = cited.get(ev.evidence_id)
    if locator is None or locator == ev.locator:
        return ev.content
    part = excerpt_at(ev, locator)
    return ev.content if part is None else part.content


# Why a run stopped with reads still planned, and the option that gives it more room.
_CUT_SHORT = {
    "deadline": "at its deadline (--deadline-seconds)",
    "max_rounds": "after its last round (--max-rounds)",
    "budget_exhausted": "with its evidence budget full (--budget-tokens)",
}


def _iso(value: datetime | None) -> str:
    return "-" if value is None else iso_utc(value)


def _assessed(cause: Confounder) -> str:
    """What the mechanism evidence says of a competing or candidate cause, in a few words."""
    ruled_out = f"ruled out by {', '.join(cause.ruled_out_by)}"
    named = f"named as the cause by {', '.join(cause.named_by)}"
    # A report that records no mechanism (a draft postmortem) naming it: said beside what the
    # mechanism records say, never "no mechanism evidence about it" alone (before h30-draft).
    reported = (
        f"named as the cause by {', '.join(cause.reported_by)}, a report that records no mechanism"
    )
    if cause.assessment is CauseAssessment.REPORTED_AS_CAUSE:
        return reported
    also = f"; {reported}" if cause.reported_by else ""
    if cause.assessment is CauseAssessment.DISPUTED:
        return f"disputed: {ruled_out}; {named}{also}"
    if cause.assessment is CauseAssessment.RULED_OUT:
        return ruled_out + also
    if cause.assessment is CauseAssessment.NAMED_AS_CAUSE:
        return named + also
    return "no mechanism evidence about it"


def _cause_when(cause: Confounder, as_of: datetime) -> str:
    """`at T`, or for a release with a rollout start `started at S, finished at F` (as its
    claims weigh it by its start): a finish after as_of is not stated, as in the claims."""
    if cause.started_at is None:
        return f"at {_iso(cause.at)}"
    finish = f"finished at {_iso(cause.at)}" if cause.at <= as_of else "not finished by as_of"
    return f"started at {_iso(cause.started_at)}, {finish}"


def render_report(
    result: InvestigationResult,
    subject: str | None = None,
    service_note: str | None = None,
    name_notes: Sequence[str] = (),
    as_of_from: AsOfFrom | None = None,
) -> str:
    """The readable terminal report: verdict, claims, rejections, gaps, stop reason, run id.

    `subject` is the tenant-qualified subject, shown so the follow-up command can be pasted;
    `service_note` says that `--service` did not resolve, `name_notes` which names of the
    question did not (investigator/name_hints.py); `as_of_from` where as_of came from
    (`given`, `now`), said after it as `trace` says it (None: not said).
    """
    who = subject or result.subject_id
    # "(now: none given)", "(given)": as the recorded run, `trace` and `runs` say it.
    source = f" ({as_of_source(as_of_from)})" if as_of_from is not None else ""
    lines = [
        f"Question   {_clean(result.question, 200)}",
        f"As of      {_iso(result.as_of)}{source}  (known at {_iso(result.known_at)})  "
        f"subject {_clean(who)}  purpose {_clean(result.purpose)}",
        f"Status     {result.status.value}  (stop: {result.stop_reason}, rounds: {result.rounds})"
        + (f"  verdict: {result.verdict.value}" if result.verdict else ""),
    ]
    if result.reused_run:
        # A retry prints the recorded answer: its times are the original run's, not now.
        lines.insert(
            2,
            f"Retry      the recorded answer of run {result.run_id} (same idempotency key and "
            "request): as of and known at are that run's",
        )
    elif result.retry_of:
        lines.insert(
            2,
            f"Retry      run {result.retry_of} (same idempotency key and request) ended "
            "without an answer: this run asked again",
        )
    # A failed read first: the stop reason (max_rounds, evidence_sufficient) does not say it.
    failed = failed_reads_line((tc.template, tc.error) for tc in result.tool_calls)
    if failed is not None:
        more = " (more time for each: INVESTIGATOR_READ_TIMEOUT)" if "timed out (" in failed else ""
        lines.append(f"Reads      {failed}{more}")
    if result.search_cut_short:
        # The Status line's stop reason alone reads as a finding; what was not found may exist.
        why = _CUT_SHORT.get(result.stop_reason, result.stop_reason)
        lines.append(
            f"Stopped    {why}, with reads still planned: what the answer lists as missing, "
            "or does not place in time, was not searched for to the end"
        )
    if service_note:
        lines.append(f"Service    {service_note}")
    lines += [f"Service    {_clean(note, 1000)}" for note in result.service_notes]
    lines += [f"Name       {note}" for note in name_notes]
    # Rules of one name are told apart by file, group, severity and summary each: room for 3.
    lines += [f"Note       {_clean(note, 1000)}" for note in result.rule_notes]
    # The untrusted rules a note names by id: their own words, marked (rule_texts.py).
    lines += [
        f"Rule       {_clean(r.id.removeprefix('alert:'), 120)}  [untrusted]  "
        f"{_clean(r.quoted(), 400)}"
        for r in result.untrusted_rules
    ]
    lines += [f"Note       {_clean(note, 1000)}" for note in result.search_notes]
    if result.incident_reading is not None:
        lines.append(f"Incident   {_clean(result.incident_reading.line(), 800)}")
    lines += [f"Time       {line}" for line in unplaced_time_lines(result)]
    # A "then" names the moment taken and each one passed over (an earlier incident too):
    # room for four, and for the words that say the answer holds there.
    lines += [f"Time       {_clean(note, 800)}" for note in result.time_notes]
    # Imported text is untrusted unless ingested with --trusted: a claim resting on it says
    # so, as the runbook card's trust word does.
    untrusted = {ev.evidence_id for ev in result.evidence if ev.trust != "trusted"}
    lines += ["", "Claims"]
    if not result.claims:
        lines.append("  (none: no claim without evidence)")
    for claim in result.claims:
        # Whole: a cut claim loses its validity interval, the part an auditor reads last.
        # On the claim's own line too, as `--json` gives the claim `trust: untrusted` (before,
        # only its evidence ids said so, on the line below: explorer e29, m8).
        mark = "[untrusted] " if untrusted.intersection(claim.evidence_ids) else ""
        lines.append(
            f"  [{claim.epistemic_status.value:<10}] {mark}{_clean(claim.statement, _CLAIM_LIMIT)}"
        )
        ids = [f"{e} (untrusted)" if e in untrusted else e for e in claim.evidence_ids]
        lines.append(f"               evidence: {', '.join(ids)}")
    if result.confounders:
        # With a verdict they compete with its subject; without one (an open root-cause
        # question) they are the candidates themselves.
        heading = "Confounders" if result.verdict is not None else "Candidate causes"
        if not {"deployment_correlation", "root_cause"} & set(result.intents):
            heading = "Changes before the first error"  # "what changed before the errors?"
        lines += ["", heading]
        for c in result.confounders:
            lines.append(
                f"  {_clean(c.element_id)} {_cause_when(c, result.as_of)} ({c.evidence_id}): "
                f"{_assessed(c)}"
            )
    unresolved = [c for c in result.conflicts if c.resolution == "unresolved"]
    if unresolved:
        lines += ["", "Unresolved conflicts"]
        for conflict in unresolved:
            lines.append(f"  {_clean(conflict.conflict_key)}: {', '.join(conflict.evidence_ids)}")
    lines += ["", "Evidence"]
    cited = _cited_sections(result.claims)
    for ev in result.evidence:
        extra = f" [{', '.join(ev.transformations)}]" if ev.transformations else ""
        lines.append(
            f"  {ev.evidence_id}  {_clean(ev.element_id, 70)}  "
            f"({', '.join(ev.evidence_types)}){extra}"
            + ("  untrusted" if ev.evidence_id in untrusted else "")
            # A tombstone a claim cites (ownership_history.py): never read as a current record.
            + (f"  {_clean(ev.status, 20)}" if ev.status != "active" else "")
        )
        lines.append(f"      {_clean(_preview(_preview_text(ev, cited)), 150)}")
        if (gone := missing_file_note(ev, result.as_of)) is not None:
            lines.append(f"      {_clean(gone, 200)}")  # answered, but its page is gone
    if result.rejected:
        lines += ["", "Rejected"]
        for rej in result.rejected:
            target = f" -> {_clean(rej.replacement)}" if rej.replacement else ""
            winner = f" (winner {rej.winner})" if rej.winner and not rej.replacement else ""
            # Worded as the runbook card words it: a bare `rejected_integrity` reads as tampering.
            purged = purged_rejection(rej.reason, rej.detail)
            reason = "purged" if purged else rej.reason
            lines.append(f"  {_clean(rej.element_id, 70)}: {reason}{target}{winner}")
            if rej.reason is RejectionReason.REJECTED_UNTRUSTED_INSTRUCTION:
                lines.append(f"      {untrusted_hint(rej.detail)}")
            elif purged:
                lines.append(f"      {PURGED_HINT}")
    lines += ["", "Missing evidence"]
    if not result.missing_evidence:
        lines.append("  none")
    for m in result.missing_evidence:
        flag = "required" if m.required else "would strengthen"
        lines.append(f"  {m.evidence_type} ({flag}): {m.description}")
    lines += [
        "",
        f"Pack       {result.pack_id}  {result.pack_hash}",
        f"Run        {result.run_id}  "
        f"(trace: investigator trace {result.run_id} --subject {_clean(who)})",
    ]
    return "\n".join(lines)


def _question_problem(question: str, err: dict[str, object]) -> str:
    """A refused QUESTION in one line: what is wrong with it and what to ask instead."""
    limits = err.get("ctx")
    if err.get("type") == "string_too_long" and isinstance(limits, dict):
        return (
            f"QUESTION is {len(question)} characters, more than the {limits['max_length']} an "
            "investigation reads: ask about the alert, service or error code in a sentence, "
            "not the whole payload"
        )
    if err.get("type") == "string_too_short":
        return 'QUESTION is empty: ask it in words ("Was the 10:02 release related to PAY-4097?")'
    problem = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    if problem == "the question is empty":  # spaces only
        return _question_problem(question, {"type": "string_too_short"})
    return f"QUESTION {problem.removeprefix('the question ')}: type it as plain text"


def run_investigation(
    question: tuple[str, ...],
    service: str | None,
    as_of: datetime | None,
    known_at: datetime | None,
    subject_id: str,
    purpose: str,
    max_rounds: int,
    budget_tokens: int,
    deadline_s: float,
    idempotency_key: str | None,
    json_out: bool,
) -> None:
    """The rest of `investigator investigate` once its times and subject are checked: the
    request, the run (recorded) and its report or JSON."""
    try:
        request = InvestigationRequest(
            question=" ".join(question),
            subject_id=subject_id,
            purpose=purpose,
            service_id=service,
            as_of=as_of,
            known_at=known_at,
            max_rounds=max_rounds,
            budget_tokens=budget_tokens,
            idempotency_key=idempotency_key,
            deadline_s=deadline_s,
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err.get("loc", ())) or "input"
        flag = "--" + where.replace("_id", "").replace("_s", "-seconds").replace("_", "-")
        if where == "question":
            raise BadInput(_question_problem(" ".join(question), dict(err))) from None
        raise BadInput(f"{flag}: {err.get('msg', 'invalid')}") from None
    settings = resolve_connection()
    driver = open_driver(settings)
    try:
        # The configured databases, as `runbook` and `replay` use them.
        with first_question_note(driver, settings.database, "investigation"):
            result = investigate(
                request,
                driver=driver,
                executor=TemplateExecutor(driver, database=settings.database),
                recorder=RunRecorder(driver, ctx_database_from_env(settings.database)),
            )
        unresolved = unresolved_names(driver, settings.database, request.subject_id, result)
    finally:
        driver.close()
    service_note = next((u.note for u in unresolved if u.given_as == "service"), None)
    name_notes = [u.note for u in unresolved if u.given_as == "question"]
    # An investigation's as_of is given or now (its run records the same; a retry's
    # request, and so its as_of given or not, is the recorded run's).
    as_of_from: AsOfFrom = "given" if request.as_of is not None else "now"
    if json_out:
        click.echo(investigation_json(result, unresolved, as_of_from))
        # stdout holds the one JSON document (`unresolved_names`); the notes go to stderr too
        for note in [service_note, *result.service_notes, *name_notes]:
            if note:
                click.echo(f"note: {note}", err=True)
    else:
        click.echo(render_report(result, request.subject_id, service_note, name_notes, as_of_from))
