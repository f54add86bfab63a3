"""`investigator runbook`'s lookup and its card: imported by the command once its options
have passed the checks that need nothing heavy (investigator/cli/runbook.py)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import click
from pydantic import ValidationError

from graph_schema.canonical import iso_utc
from investigator.cli.first_question import first_question_note
from investigator.cli.trust_hint import PURGED_HINT, untrusted_hint
from investigator.connection import open_driver
from investigator.context_graph.recorder import RunRecorder, ctx_database_from_env
from investigator.context_graph.run_times import AsOfFrom, as_of_source
from investigator.errors import BadInput
from investigator.evidence import RejectionReason, purged_rejection
from investigator.gate import withheld_as
from investigator.json_documents import runbook_json
from investigator.runbook_lookup import (
    LOOKUP_PURPOSES,
    LookupTarget,
    RejectedVersion,
    RunbookAnswer,
    RunbookLookup,
    RunbookQuery,
    RunbookVersion,
    incident_purpose_note,
    incident_time_note,
    with_text_time,
)
from investigator.runbook_text_time import lookup_time
from investigator.settings import resolve_connection
from investigator.terminal import one_line, step_line
from investigator.timeline import future_as_of_notes

# The argument each target is given by, as the user types it, and what to give instead when
# it is refused (one line: what is wrong and the next step).
_ARGUMENT = {
    LookupTarget.SERVICE: "--service",
    LookupTarget.ALERT: "--alert",
    LookupTarget.ERROR_CODE: "--error-code",
    LookupTarget.TEXT: "TEXT",
}
_WANTED = {
    LookupTarget.SERVICE: ("the service's id or name", "--service svc:checkout"),
    LookupTarget.ALERT: ("the alert's name", "--alert KubePodCrashLooping"),
    LookupTarget.ERROR_CODE: ("the error code", "--error-code PAY-4097"),
}


def _next_step(target: LookupTarget) -> str:
    """What to give instead of a refused value of `target`."""
    if target is LookupTarget.TEXT:
        return "paste the alert name or its summary, or use --alert NAME"
    what, example = _WANTED[target]
    return f"give {what} ({example})"


# A step is one line of the runbook, often a command: shown whole so it can be copied (a
# line cut with "…" at 110 characters could not be), bounded against a hostile file.
STEP_MAX = 2000


def _clean(text: object, limit: int = 200) -> str:
    """One printable line: KG text may carry escape sequences meant for a terminal."""
    return one_line(text, limit)


# A note is whole on its line: its parts (the record times of the version shown, a pointer,
# the tie to an alert) each matter, and a cut at 300 characters hid the last of them. The
# bound is against a hostile record only: it leaves room for a quoted TEXT of the most a
# lookup reads.
NOTE_MAX = 3000


def _note(text: str) -> str:
    """A card's note on one line, whole; beyond `NOTE_MAX`, its whole clauses that fit
    (never cut inside one) and how much more `--json` has."""
    flat = _clean(text, len(text) + 1)
    if len(flat) <= NOTE_MAX:
        return flat
    kept = ""
    for clause in flat.split("; "):
        if len(kept) + len(clause) + 2 > NOTE_MAX - 60:
            break
        kept = f"{kept}; {clause}" if kept else clause
    if not kept:
        return _clean(flat, NOTE_MAX)  # one clause longer than the bound: nothing whole fits
    return f"{kept}; … ({len(flat) - len(kept)} more characters: --json has the whole note)"


def _iso(value: datetime | None) -> str:
    if value is None:
        return "open"
    return iso_utc(value)


# A source version an importer wrote: the file's commit or content hash.
_FILE_VERSION = re.compile(r"^(git|sha256):([0-9a-f]{12})[0-9a-f]*$")


def _version(v: RunbookVersion) -> str:
    """The version as a reader knows it: the document's own label (`v3`); for an imported
    file without one (its `version` is then the record version), the commit or content hash
    it was read from, short (`git:82bd2d9c1a2b`): `v1` read as the runbook's version 1.
    Shown on the card only: the answer replay compares stays as recorded."""
    own_label = v.version != v.record_version or re.search(r"@v\d+$", v.id)
    match = _FILE_VERSION.match(v.source_version or "")
    if match and not own_label:
        return f"{match.group(1)}:{match.group(2)}"
    return f"v{v.version}" if isinstance(v.version, int) else _clean(v.version or "?")


_UNTRUSTED = RejectionReason.REJECTED_UNTRUSTED_INSTRUCTION
_NOT_VALID = "is valid at as_of (see Rejected)"
_WITHHELD = "is served: the version found is withheld as untrusted text with {what} (see Rejected)"


def _title(v: RunbookVersion) -> str:
    """What the card names a runbook by: its title, unless the title is only the word
    "Runbook" (Tempo's `runbook.md`), which after the `Runbook` label said nothing twice:
    then its file (else its id)."""
    if v.title and v.title.strip().casefold() not in _BARE_TITLES:
        return v.title
    page = (v.locator or "").partition("@")[0].partition("#")[0]
    return page or v.title or v.id


_BARE_TITLES = {"runbook", "runbooks"}


def _rejected_lines(answer: RunbookAnswer) -> list[str]:
    """The card's Rejected lines: each refused version, except that the other versions of a
    git-history page shown (each a commit, too old or too new at as_of) are one line; the
    JSON answer lists each. With no runbook shown, the commits of a page that all start
    after as_of say when the first one starts, and are listed by time with their commit."""
    rb = answer.runbook
    page = rb.id.partition("@")[0] if rb is not None and _is_commit(rb) else None
    others = [
        r
        for r in answer.rejected
        if page is not None and r.element_id.partition("@")[0] == page and r.reason in _NOT_IN_FORCE
    ]
    lines: list[str] = []
    if others:
        count = len({r.element_id for r in others})
        noun = "version" if count == 1 else "versions"
        lines.append(
            f"{count} other {noun} of this page, not in force at {_iso(answer.as_of)} "
            "(--json lists each)"
        )
    rejected = [r for r in answer.rejected if not any(r is o for o in others)]
    if rb is None and _first_to_come(rejected, answer.as_of) is not None:
        # By time, as a page's history reads; the order of the JSON answer is unchanged.
        rejected.sort(key=lambda r: (r.valid_from or answer.as_of, r.element_id))
    for r in rejected:
        target = f" -> {_clean(r.replacement)}" if r.replacement else ""
        # A page's commit is told by its commit (`git:04bca8e3fa61`), not its record `v1`.
        version = _rejected_version(r)
        if version.startswith("git:") and r.valid_from is not None:
            version += f", from {_iso(r.valid_from)}"
        # A bare `rejected_integrity` reads as tampering: a purged record is said so.
        purged = purged_rejection(r.reason, r.detail)
        lines.append(
            f"{_clean(r.element_id)} ({version}): {'purged' if purged else r.reason.value}" + target
        )
        if r.reason is _UNTRUSTED:
            lines.append(untrusted_hint(r.detail))
        elif purged:
            lines.append(PURGED_HINT)
    return lines


def _first_to_come(rejected: list[RejectedVersion], as_of: datetime) -> RejectedVersion | None:
    """The earliest of the versions refused when every one is one page's commit that starts
    after as_of (a `--git-history` import asked before its first commit), else None."""
    pages = {r.element_id.partition("@")[0] for r in rejected}
    later = [
        r
        for r in rejected
        if r.reason is RejectionReason.REJECTED_TEMPORAL
        and r.valid_from is not None
        and r.valid_from > as_of
        and _rejected_commit(r) is not None
    ]
    if len(pages) != 1 or not later or len(later) != len(rejected):
        return None
    return min(later, key=lambda r: (r.valid_from or as_of, r.element_id))


def _rejected_commit(r: RejectedVersion) -> str | None:
    """`git:<sha12>` when the refused version is one commit of a page imported with its git
    history (its id ends with the commit), else None."""
    match = _FILE_VERSION.match(r.source_version or "")
    if match is None or match.group(1) != "git" or not r.element_id.endswith(f"@{match.group(2)}"):
        return None
    return f"git:{match.group(2)}"


def _rejected_version(r: RejectedVersion) -> str:
    commit = _rejected_commit(r) if isinstance(r.version, int) else None
    if commit is not None:
        return commit
    return f"v{r.version}" if isinstance(r.version, int) else _clean(r.version)


# Why another version of the page shown is refused when it is simply not the one in force.
_NOT_IN_FORCE = {RejectionReason.REJECTED_SUPERSEDED, RejectionReason.REJECTED_TEMPORAL}


def _is_commit(v: RunbookVersion) -> bool:
    """Whether a version is one commit of a page imported with its git history (its id ends
    with the commit, `runbook:tempo@5316d35ee02e`; not a labelled `@v2` from a git source)."""
    match = _FILE_VERSION.match(v.source_version or "")
    return match is not None and match.group(1) == "git" and v.id.endswith(f"@{match.group(2)}")


def render_card(
    answer: RunbookAnswer,
    subject: str | None = None,
    time_note: str | None = None,
    purpose_asked: str | None = None,
    as_of_from: AsOfFrom | None = None,
    as_of_words: str | None = None,
    known_at_given: bool = False,
    purpose_why: str | None = None,
) -> str:
    """The short, readable card the on-call engineer sees (`subject`: tenant-qualified;
    `time_note`: what became of a time written in the TEXT, `runbook_text_time`; `purpose_asked`:
    the `--purpose` given, None when the lookup chose it; `as_of_from`, `as_of_words`: where
    as_of came from, said after it as `trace` says it, None: not said; `known_at_given`: a
    `--known-at` was given; `purpose_why`: why the lookup chose its purpose, when for another
    reason than the subject not holding `runbook_lookup`)."""
    lines: list[str] = []
    rb = answer.runbook
    untrusted = [r for r in answer.rejected if r.reason is _UNTRUSTED]
    if rb is None:
        # The note is the whole answer here (issue 13): room for its reason and its hint.
        note = answer.note or "nothing valid at as_of"
        if untrusted and len(untrusted) == len(answer.rejected):
            # Valid, but withheld: "no version ... is valid" read as an outdated runbook.
            what = withheld_as(r.detail for r in untrusted)
            note = note.replace(_NOT_VALID, _WITHHELD.format(what=what), 1)
        if (first := _first_to_come(answer.rejected, answer.as_of)) is not None:
            # Asked before the page's first commit: when it starts, not only "not valid".
            note += (
                f"; no version yet at {_iso(answer.as_of)}: the first, "
                f"{first.element_id}, starts {_iso(first.valid_from)}"
            )
        lines.append(f"No runbook: {_note(note)}")
    else:
        lines.append(
            f"Runbook   {_clean(_title(rb))}  [{_clean(rb.id)}, {_version(rb)}, {_clean(rb.trust)}]"
        )
        # An imported runbook states no validity at all: no line for it (it is in force
        # until a new version replaces it); a start alone missing is said in words.
        if rb.valid_from is not None or rb.valid_to is not None:
            start = _iso(rb.valid_from) if rb.valid_from is not None else "(no start recorded)"
            lines.append(f"Valid     {start} -> {_iso(rb.valid_to)}")
        if rb.fallback_via:
            # Issue 15: another element's runbook, said so, with the path it was reached by.
            # Its own pages set aside (untrusted, recorded after as_of) are under Also.
            own = (
                "(its own set aside: see Also)"
                if any(alt.set_aside for alt in answer.alternatives)
                else "(none of its own)"
            )
            lines.append(f"Fallback  via {_clean(rb.fallback_via)} {own}")
            # The Fallback line says what the note's "fallback: ..." says; what comes before it
            # (the record times of a runbook that states no validity) is shown.
            before = (answer.note or "").partition("fallback: ")[0].rstrip("; ")
            if before:
                lines.append(f"Note      {_note(before)}")
        elif answer.note:
            # A runbook found by the alert's name alone: the card says what ties it.
            lines.append(f"Note      {_note(answer.note)}")
    for r in answer.untrusted_rules:
        # A rule the note names by id: its own words, marked (rule_texts.py).
        lines.append(
            f"Rule      {_clean(r.id.removeprefix('alert:'), 120)}  [untrusted]  "
            f"{_clean(r.quoted(), 400)}"
        )
    for link in answer.external_links:
        # The rule's own link, outside what was imported: shown as written, never fetched.
        lines.append(
            f"Link      {_clean(link.url, 300)}  ({_clean(link.alert)}'s {_clean(link.key)}: "
            "no imported runbook; not fetched, untrusted)"
        )
    # "(now: none given)", "(from the text: '...')": as the recorded run and `trace` say it.
    source = "" if as_of_from is None else f" ({as_of_source(as_of_from, as_of_words, time_note)})"
    lines.append(f"As of     {_iso(answer.as_of)}{source}  (known at {_iso(answer.known_at)})")
    if time_note:
        lines.append(f"Time      {_clean(time_note, 300)}")
    if as_of_from in ("given", "text") and not known_at_given:
        # A future as_of is what today's records say of then, said as `investigate` says it
        # (a --known-at given earlier than as_of is a stale-known_at question: not here).
        lines += [f"Time      {note}" for note in future_as_of_notes(answer.as_of, answer.known_at)]
    if purpose_why is not None and purpose_asked is None:
        lines.append(f"Purpose   {_clean(answer.purpose)}: {purpose_why}")
    elif purpose_asked is None and answer.purpose != LOOKUP_PURPOSES[0]:
        # The documented fallback, visible: before, only the run's trace header showed it.
        lines.append(
            f"Purpose   {_clean(answer.purpose)}: the subject is not allowed "
            f"{LOOKUP_PURPOSES[0]}, so the lookup read what {_clean(answer.purpose)} allows"
        )
    if answer.owner_detail is not None:
        o = answer.owner_detail
        name = f" ({_clean(o.team_name)})" if o.team_name else ""
        lines.append(
            f"Owner     {_clean(o.team)}{name}  via {_clean(o.basis)}, since {_iso(o.valid_from)}"
        )
        if o.corrected:
            # As investigate states it: the owner shown was learned after as_of.
            lines.append(f"          {_clean(o.corrected, 300)}")
    elif not answer.resolved and answer.target is not LookupTarget.TEXT:
        # A runbook found by the name alone (no alert record): no record names an owner.
        # A version found but none served (withheld, or not valid at as_of): it resolved.
        what = (
            "found by its name alone, no record names an owner"
            if rb is not None or answer.rejected
            else "the target did not resolve"
        )
        lines.append(f"Owner     unknown: {what}")
    else:
        lines.append("Owner     unknown at as_of")
    if rb is not None and rb.contact:
        # The page's own words about whom to ask: shown, never taken for an owner of record.
        lines.append(f"Contact   {_clean(rb.contact, 300)}")
    ro = answer.runbook_owner
    if ro is not None and (answer.owner_detail is None or ro.team != answer.owner_detail.team):
        # Issue 12: the team to page is `Owner`; the runbook's own owner, when another team.
        lines.append(
            f"          runbook's own owner: {_clean(ro.team)}  via {_clean(ro.basis)}, "
            f"since {_iso(ro.valid_from)}"
        )
    if rb is not None:
        lines.append(f"Locator   {_clean(rb.steps_locator or rb.locator or '-')}")
        for i, step in enumerate(rb.steps):
            # Indentation kept: a YAML or shell block copied from the card stays as written.
            lines.append(("Steps     " if i == 0 else "          ") + step_line(step, STEP_MAX))
        if rb.steps_more is not None:
            # Cut at the step limit: the five lines are not the whole procedure.
            more = rb.steps_more
            where = _clean(more.locator or rb.locator or "-")
            noun = "line" if more.lines == 1 else "lines"
            lines.append(f"          ... {more.lines} more {noun} at {where}")
        if rb.steps_note:
            # Why these are not the steps of the section asked about.
            lead = "          " if rb.steps else "Steps     "
            # Whole, as the Note line: it names sections, cases and the command to ask again.
            lines.append(f"{lead}({_note(rb.steps_note)})")
        width = max((len(_clean(c.title, 60)) for c in rb.section_cases), default=0)
        for i, case in enumerate(rb.section_cases):
            # The cases the section splits into: where to read each, and the one shown.
            shown = "  (shown)" if case.shown else ""
            lines.append(
                ("Cases     " if i == 0 else "          ")
                + f"{_clean(case.title, 60):<{width}}  {_clean(case.locator or '-')}{shown}"
            )
    for i, line in enumerate(_rejected_lines(answer)):
        lines.append(("Rejected  " if i == 0 else "          ") + line)
    for p in answer.policies:
        lines.append(f"Policy    {_clean(p.title or p.id)}  [{_clean(p.id)}]")
    for alt in answer.alternatives:
        via = f"  via {_clean(alt.fallback_via)}" if alt.fallback_via else ""
        # The target's own page listed after a fallback: why it is not the one served.
        aside = f"  ({_clean(alt.set_aside)})" if alt.set_aside else ""
        lines.append(f"Also      {_clean(_title(alt))}  [{_clean(alt.id)}]{via}{aside}")
    replay = f"investigator replay {answer.run_id}" + (f" --subject {subject}" if subject else "")
    lines.append(f"Run       {answer.run_id}  (replay: {replay})")
    return "\n".join(lines)


def run_lookup(
    target_name: str,
    value: str | None,
    asked: datetime | None,
    known: datetime | None,
    subject_id: str,
    purpose: str | None,
    json_out: bool,
) -> None:
    """The rest of `investigator runbook` once its target, times and subject are checked:
    the text's time, the query, the lookup (recorded) and its card or JSON."""
    target = LookupTarget(target_name)
    # One time written in TEXT is the lookup's as_of when --as-of is not given, said so
    # (runbook_text_time.py, shared with the served tool).
    text = (value or "") if target is LookupTarget.TEXT else None
    timed = lookup_time(text, asked)
    when = asked or timed.at or datetime.now(UTC)
    try:
        query = RunbookQuery(
            target=target,
            value=value or "",
            subject_id=subject_id,
            as_of=when,
            known_at=known,
            purpose=purpose,
            # Recorded on the run: trace, runs and replay say where as_of came from.
            as_of_from=timed.as_of_from,
            as_of_words=timed.words,
            time_note=timed.note,
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error.get("loc", ())) or "input"
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        if field == "value":
            # Named as the user typed it, with what to do next ("value" means nothing to them).
            problem = message.removeprefix("the lookup target ")
            raise BadInput(f"{_ARGUMENT[target]} {problem}: {_next_step(target)}") from None
        raise BadInput(f"--{field.removesuffix('_id')}: {message}") from None
    settings = resolve_connection()
    driver = open_driver(settings)
    try:
        lookup = RunbookLookup(
            driver,
            database=settings.database,
            recorder=RunRecorder(driver, ctx_database_from_env(settings.database)),
        )
        with first_question_note(driver, settings.database, "runbook lookup"):
            # "during the PAY-4097 incident" with no --as-of: at its start, as investigate
            # reads the words (runbook_lookup.RunbookLookup.incident_time).
            timed = lookup.incident_time(
                timed, query.value if text is not None else None, subject_id, purpose, known
            )
            query = with_text_time(query, timed)
            answer = lookup.lookup(query)
    finally:
        driver.close()
    note = incident_time_note(answer, timed)
    if json_out:
        click.echo(runbook_json(answer, timed.as_of_from, note))
    else:
        card = render_card(
            answer,
            subject_id,
            note,
            purpose,
            as_of_from=timed.as_of_from,
            as_of_words=timed.words,
            known_at_given=known is not None,
            purpose_why=incident_purpose_note(answer, timed),
        )
        click.echo(card)
