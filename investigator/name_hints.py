"""Names an investigation could not resolve, said in one line each with visible close matches.

`--service svc:Payment-API` (issue 10), and the names the question itself writes ("Who owns
payments-api?"): each resolved to nothing the subject may see, so the answer does not cover
it, unless a claim's evidence covers it all the same (a section headed by it, a runbook that
writes it): then the line says what it matched instead. The close matches come from
allowlisted templates run through the executor as the run's subject and purpose at the run's
known_at, so a hint never names an id the subject may not see. They are hints, not evidence:
nothing here is recorded in the Context Graph. The CLI prints them as lines; `investigate
--json` and the served tool carry them as `unresolved_names` (`UnresolvedName`), so an agent
does not read "no owner found" for a typo.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

import neo4j
from pydantic import BaseModel, ConfigDict, Field

from graph_schema.importers.markdown_sections import anchor_for
from investigator.errors import InvestigatorError
from investigator.investigation import InvestigationResult
from investigator.ownership_history import asked_team
from investigator.planner import extract_mentions, name_alone, name_alone_as_words
from investigator.rubric import Intent
from investigator.runbook_sections import SECTION_EXCERPT
from investigator.spelling import INTENT_WORDS
from investigator.stop_words import ENGLISH_STOP_WORDS, HURRIED_FILLER, KIND_NOUNS

if TYPE_CHECKING:
    from cypher_templates.executor import TemplateExecutor
    from cypher_templates.subject import Subject

# The label a question's mention is looked for as, by its id prefix (labels both suggestion
# templates accept; other prefixes get the line without suggestions).
_LABEL_OF_PREFIX = {
    "svc": "Service",
    "alert": "Alert",
    "err": "ErrorCode",
    "inc": "Incident",
    "runbook": "Runbook",
}


def _clean(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _sentence(hint: str) -> str:
    """A hint as a sentence: `did you mean X?` keeps its question mark, else a full stop."""
    return hint if hint.endswith(("?", ".")) else hint + "."


def _resolved(result: InvestigationResult, text: str) -> bool:
    """Whether the run's linking calls for `text` returned a row (or could not run)."""
    calls = [
        tc
        for tc in result.tool_calls
        if tc.template_id == "entity_resolution" and tc.params.get("text") == text[:200]
    ]
    return not calls or any(tc.row_count > 0 or tc.error for tc in calls)


def service_resolved(result: InvestigationResult) -> bool:
    """Whether `--service` resolved to something the subject may see: the run's own
    linking call for it (`entity_resolution` of the given id, planner.linking_steps)
    returned a row. True when no service was given."""
    return not result.service_id or _resolved(result, result.service_id)


def failed_lookup(result: InvestigationResult, text: str) -> str | None:
    """The error of the run's linking calls for `text` when every one failed (a template
    timed out on a loaded server) and none returned a row: whether `text` names a visible
    record is unknown, not yes. None otherwise."""
    calls = [
        tc
        for tc in result.tool_calls
        if tc.template_id == "entity_resolution" and tc.params.get("text") == text[:200]
    ]
    if not calls or any(tc.row_count > 0 or not tc.error for tc in calls):
        return None
    return calls[0].error


def unresolved_mentions(result: InvestigationResult) -> list[tuple[str, str | None]]:
    """The names the question writes that resolved to nothing visible, each with the label
    to look for close matches as (None: no suggestions), in the question's order."""
    mentions = extract_mentions(result.question)
    label_of: dict[str, str | None] = {}
    for text in mentions.ids:
        label_of[text] = _LABEL_OF_PREFIX.get(text.split(":", 1)[0])
    label_of.update(dict.fromkeys(mentions.error_codes, "ErrorCode"))
    label_of.update(dict.fromkeys(mentions.alerts, "Alert"))
    label_of.update(dict.fromkeys(mentions.names, "Service"))
    read = _names_read(result)
    # "crash-loop" answered as the words it joins (the runbook search chose for them): a
    # symptom typed, not a name left unresolved.
    as_words = name_alone(result.question) if searched_as_words(result) else None
    return [
        (text, label_of.get(text))
        for text in mentions.texts()
        if text != result.service_id
        and text in label_of
        and not _resolved(result, text)
        and text.casefold() not in read
        and text != as_words
    ]


def searched_as_words(result: InvestigationResult) -> bool:
    """Whether a name typed alone joined by `-` or `_` ("crash-loop") was answered as the
    words it joins: no longer read as a name (its intents are the runbook's)."""
    name_intents = {Intent.SERVICE_STATUS.value, Intent.OWNERSHIP_AT_TIME.value}
    return name_alone_as_words(result.question) is not None and set(result.intents) != (
        name_intents
    )


def _names_read(result: InvestigationResult) -> set[str]:
    """The names (ids without their prefix and version, casefolded) of the records the run
    read, used or not: the run reads only what its subject may see, so a name written in
    the question that is one of them ("payments-platform", a team) is visible, whatever
    the service lookup of its words found."""
    ids = [ev.element_id for ev in result.evidence] + [r.element_id for r in result.rejected]
    return {
        i.split(":", 1)[1].split("@", 1)[0].casefold()
        for i in ids
        if ":" in i and "|" not in i  # a relationship's key is no record's name
    }


def unlinked_team(result: InvestigationResult) -> str | None:
    """The words of the team a question asks about from its side ("What did the payments
    team own?": payments) when its links (planner.team_link_steps) found no team the
    subject may read; None otherwise."""
    words = asked_team(result.question)
    if words is None:
        return None
    texts = [words] if ":" in words else [words, "team:" + re.sub(r"\s+", "-", words.lower())]
    linked = [
        tc
        for tc in result.tool_calls
        if tc.template_id == "entity_resolution"
        and tc.params.get("text") in [t[:200] for t in texts]
        and tc.options.get("label") == "Team"
    ]
    if not linked or any(tc.row_count > 0 or tc.error for tc in linked):
        return None
    return words


# A lower-case word that may be a name typed without its `-` ("paymentapi": payment-api),
# long enough to split in two parts of three letters (entity_suggestions._split_guesses).
_JOINED_WORD = re.compile(r"(?<![\w:@./-])[a-z]{6,}(?![\w:@/-]|\.\w)")
# The words of a question looked up so, at most (each is a few suggestion reads).
MAX_JOINED_WORDS = 2


def joined_words(result: InvestigationResult) -> list[str]:
    """The plain words of a question that read no service (and had no `--service`) that may
    type a service's name without its separator ("who owns paymentapi?"): lower case, six
    letters at least, no stop, filler, kind or intent word; in order, capped."""
    if result.service_id or any("svc:" in ev.element_id for ev in result.evidence):
        return []
    plain = ENGLISH_STOP_WORDS | HURRIED_FILLER | KIND_NOUNS | INTENT_WORDS
    words = [w for w in _JOINED_WORD.findall(result.question) if w not in plain]
    return list(dict.fromkeys(words))[:MAX_JOINED_WORDS]


def _typed_joined(word: str, suggestion: str, name: str | None) -> str | None:
    """What `word` types without its separators, or one slip from it ("paymentapi",
    "paymentapii" for svc:payment-api): the suggested id's name part, else the suggestion's
    name (globex's svc:globex-payment-api is named payment-api); None for a name that
    merely starts alike ("payment": payment-api and payment-db)."""
    from investigator.entity_suggestions import one_edit

    for written in (suggestion.split(":", 1)[-1], name or ""):
        letters = "".join(re.findall(r"[a-z0-9]+", written.lower()))
        if letters and (letters == word or one_edit(word, letters)):
            return written
    return None


class NameHints:
    """Looks up close matches for unresolved names, as the run's subject (lazily loaded)."""

    def __init__(
        self,
        driver: neo4j.Driver,
        database: str | None,
        subject_id: str,
        result: InvestigationResult,
        executor: TemplateExecutor | None = None,
    ) -> None:
        from cypher_templates.executor import TemplateExecutor

        self.subject_id = subject_id  # tenant-qualified, as the run was asked
        self.result = result
        self.executor = executor or TemplateExecutor(driver, database=database)
        self._subject: Subject | None = None
        self.read_failed = False  # a close-match read failed: "nothing close" is unknown
        self.names: dict[str, str] = {}  # each id a suggestion read -> its name

    def did_you_mean(self, text: str, label: str | None) -> str:
        """`did you mean svc:a?`, or `no visible id is close to it`."""
        from investigator.entity_suggestions import did_you_mean

        return did_you_mean(self.suggestions(text, label))

    def suggestions(self, text: str, label: str | None) -> list[str]:
        """The visible ids closest to `text` as a `label`, best first (none for no label); a
        team also by part of its name ("payments" -> team:payments-core)."""
        from cypher_templates.subject import load_subject
        from investigator.entity_suggestions import (
            Candidate,
            rank_containing,
            rank_suggestions,
            suggestion_queries,
        )

        if label is None:
            return []
        result = self.result
        candidates: list[Candidate] = []
        try:
            if self._subject is None:
                self._subject = load_subject(
                    self.executor, self.subject_id, result.purpose, result.known_at
                )
            subject = self._subject
            for q in suggestion_queries(text, label):
                step = q.step()
                rows = self.executor.run(step, subject, result.known_at, raise_on_error=False)
                self.read_failed |= rows.error is not None
                candidates += [
                    Candidate(element_id=r.element.element_id, name=r.element.name)
                    for r in rows.rows
                ]
                for r in rows.rows:
                    if r.element.name:
                        self.names.setdefault(r.element.element_id, r.element.name)
        except (InvestigatorError, ValueError):
            candidates = []  # the line still says the name did not resolve
        if label == "Team":
            return rank_containing(text, candidates)
        return rank_suggestions(text, candidates)


class UnresolvedName(BaseModel):
    """A name the investigation could not resolve to anything the subject may see: the
    `--service` given (`given_as` "service") or a name the question writes ("question"),
    with visible close matches and the line the CLI prints for it."""

    model_config = ConfigDict(frozen=True)

    text: str
    given_as: Literal["service", "question"]
    suggestions: list[str] = Field(default_factory=list)
    note: str


def unresolved_names(
    driver: neo4j.Driver,
    database: str | None,
    subject_id: str,
    result: InvestigationResult,
    executor: TemplateExecutor | None = None,
) -> list[UnresolvedName]:
    """The `--service` (first) and the question's names that did not resolve, each with its
    close matches and its note (issue 10): an unresolved name is not "nothing found"."""
    unresolved = unresolved_mentions(result)
    team = unlinked_team(result)
    if team is not None:
        # The team asked about from its side, linked to no team the subject may read.
        unresolved = [(t, label) for t, label in unresolved if t != team] + [(team, "Team")]
    service = None if service_resolved(result) else result.service_id
    # Its lookup failed (timed out under load): not resolved, not known absent either.
    failed = failed_lookup(result, result.service_id) if result.service_id else None
    joined = joined_words(result)
    if service is None and failed is None and not unresolved and not joined:
        return []
    hints = NameHints(driver, database, subject_id, result, executor)
    names: list[UnresolvedName] = []
    for word in joined:
        # "who owns paymentapi?": no name the question writes, no service read; a visible
        # service it types without its `-` is said, as `--service svc:paymentapi` says it.
        # By id or by name: a service's id need not be its name (svc:globex-payment-api).
        typed = {
            s: _typed_joined(word, s, hints.names.get(s))
            for s in hints.suggestions(word, "Service")
        }
        meant = [s for s, written in typed.items() if written is not None]
        if meant:
            written = typed[meant[0]] or ""  # (never None: `meant` keeps the typed ones)
            # A one-word name ("why did checkout fail") reads as a word however it is
            # typed: only --service names it.
            how = (
                f"name it with --service {meant[0]}"
                if re.fullmatch(r"[a-z0-9]+", written.lower())
                else f"ask with the name as it is written (e.g. {written!r})"
            )
            note = (
                f"{word!r} in the question was read as a word, not a name, and no service "
                f"was read; {_did_you_mean(meant)} The answer does not cover it: {how}."
            )
            names.append(
                UnresolvedName(text=word, given_as="question", suggestions=meant, note=note)
            )
    if service is None and failed is not None and result.service_id:
        given = result.service_id
        found = hints.suggestions(given, "Service")
        note = (
            f"--service {_clean(given)!r} could not be looked up: its read failed "
            f"({_clean(failed, 120)}), so whether it names a service visible to "
            f"{_clean(subject_id)} is unknown; {_sentence(_close(hints, found))} The answer "
            "does not cover it: ask again."
        )
        names.append(UnresolvedName(text=given, given_as="service", suggestions=found, note=note))
    if service is not None:
        found = hints.suggestions(service, "Service")
        covered = _cited_ids(result, found)
        # The answer may be about the id meant all the same (the question names it): said,
        # not "does not cover it" beside claims about it.
        cover = (
            f"The answer covers {covered[0]}, which its claims cite."
            if covered
            else "The answer does not cover it."
        )
        note = (
            f"--service {_clean(service)!r} did not resolve to a service visible to "
            f"{_clean(subject_id)}; {_sentence(_close(hints, found))} {cover}"
        )
        names.append(UnresolvedName(text=service, given_as="service", suggestions=found, note=note))
    for text, label in unresolved:
        if _run_id_shaped(text):
            # A run id pasted into a question (finding m13): no record is named so; what
            # reads a run is trace and replay. Nothing is looked up: the line says the same
            # whether such a run exists, and whose.
            names.append(
                UnresolvedName(text=text, given_as="question", note=_run_id_note(text, subject_id))
            )
            continue
        found = hints.suggestions(text, label)
        matched = _matched_in_answer(result, text)
        if matched is None:
            note = (
                f"{_clean(text)!r} in the question matched nothing visible to "
                f"{_clean(subject_id)}; {_sentence(_close(hints, found))} The answer does not "
                "cover it."
            )
        else:
            # What the words matched, not "matched nothing" beside a claim about them.
            close = f" ({_did_you_mean(found)})" if found else ""
            note = (
                f"{_clean(text)!r} in the question matched {matched}; it is the name of no "
                f"record visible to {_clean(subject_id)}{close}."
            )
        names.append(UnresolvedName(text=text, given_as="question", suggestions=found, note=note))
    return names


# What a run id starts with (`run-` and hex digits, whole or a part of one): the recorder's
# `run-` + uuid4 hex, typed in either case.
_RUN_ID_MIN_HEX = 4


def _run_id_shaped(text: str) -> bool:
    """Whether `text` is a run id or the start of one (`run-54298d42`)."""
    head, sep, rest = text.lower().partition("-")
    return (
        head == "run"
        and bool(sep)
        and len(rest) >= _RUN_ID_MIN_HEX
        and all(c in "0123456789abcdef" for c in rest)
    )


def _run_id_note(text: str, subject_id: str) -> str:
    """The line for a run id in a question: what reads a run instead. The commands name it
    in lower case, as run ids are written (`RUN-54298D42` typed: `trace run-54298d42`);
    nothing is looked up, so they name no run the text does not."""
    run = _clean(text, 40)
    typed = run.lower()
    who = _clean(subject_id)
    return (
        f"{run!r} in the question is a run id: an investigation reads the Knowledge Graph, "
        f"not recorded runs; `investigator trace {typed} --subject {who}` shows what that run "
        f"read and claimed, `investigator replay {typed} --subject {who}` checks that it "
        "reproduces (served: the `trace` and `replay` tools). The answer does not cover it."
    )


def _close(hints: NameHints, suggestions: list[str]) -> str:
    """`did you mean X?`, or that nothing visible is close, unless a close-match read failed
    (timed out): then that none could be looked up, never "no visible id is close to it"."""
    if not suggestions and hints.read_failed:
        return "close matches could not be looked up (a read failed)"
    return _did_you_mean(suggestions)


def _did_you_mean(suggestions: list[str]) -> str:
    from investigator.entity_suggestions import did_you_mean

    return did_you_mean(suggestions)


def _cited_ids(result: InvestigationResult, ids: list[str]) -> list[str]:
    """Those of `ids` a claim of the answer writes, or the evidence it cites, as a whole id."""
    cited = {eid for claim in result.claims for eid in claim.evidence_ids}
    texts = [claim.statement for claim in result.claims] + [
        f"{ev.element_id} {ev.content or ''}" for ev in result.evidence if ev.evidence_id in cited
    ]
    return [
        i
        for i in ids
        if any(re.search(r"(?<![\w:-])" + re.escape(i) + r"(?![\w-])", t) for t in texts)
    ]


def _matched_in_answer(result: InvestigationResult, text: str) -> str | None:
    """What a name that matched no record matched in the answer, said as the rest of
    "'X' in the question matched ...": the heading of a runbook section the run admitted
    (a runbook imported before its alert rules, an error id heading a section of Mimir's
    page), else the text of evidence a claim cites that writes it as a word ("virt-handler"
    in runbook:VirtHandlerDown). None when the answer does not cover it."""
    anchor = anchor_for(text)
    for ev in result.evidence:
        if SECTION_EXCERPT in ev.transformations and (ev.locator or "").endswith("#" + anchor):
            section = f"the section {ev.locator} of {ev.element_id}"
            return f"the heading of {section}, which the answer cites"
    cited = {eid for claim in result.claims for eid in claim.evidence_ids}
    # As a whole word: `virt-handler` is not `virt-handler-pod`, nor part of `virt-handlers`.
    word = re.compile(r"(?<![\w-])" + re.escape(text) + r"(?![\w-])", re.IGNORECASE)
    for ev in result.evidence:
        if ev.evidence_id in cited and word.search(ev.content or ""):
            return f"the text of {ev.element_id}, which the answer cites"
    return None
