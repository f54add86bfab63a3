"""SRE runbook lookup: which runbook version applies to a service, alert or error code at a
time, who owns it then, and which other versions were rejected and why (docs/design.md sections 1
and 9).

The lookup uses the same machinery as an investigation, only a fixed, small plan:

1. resolve the target inside the subject's tenant (`entity_resolution`, or the fulltext
   channel for free text),
2. read the runbooks and policies linked to it with their SUPERSEDES chain (`runbooks_for`),
3. pass every version through the evidence gate at `as_of`: superseded versions are
   `rejected_superseded` with their replacement, future ones `rejected_temporal`,
4. name the owner team valid at `as_of` (the alert's or the runbook's OWNS edge, else the
   service's ownership),
5. record all of it as a Context Graph run (command `runbook`), so an auditor can replay it.

The lookup is a fixed plan driven through the same `RunSession` as an investigation: each
stage is a recorded QueryPlan whose steps run through the session (allowlisted templates,
tenant/ACL/purpose enforced inside Cypher), and the session's gate decides every version
(`one_version_per_chain`). The subject's grants come from its Principal record, never from a
flag.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Literal

import neo4j
from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
)

from cypher_templates.executor import TemplateExecutor, ToolResult
from cypher_templates.plan import PlanStep, QueryPlan
from graph_schema.alert_names import (
    alert_names,
    finding_types,
    identifier_words,
    is_alert_name,
    suffixed_alert_id,
)
from graph_schema.canonical import iso_utc
from graph_schema.front_matter_contact import front_matter_contact
from graph_schema.importers.link_targets import document_service, url_page_name
from graph_schema.importers.markdown_sections import heading_text
from investigator.alert_rules import (
    alert_name_of,
    ambiguous_rules_note,
    lead_apart,
    picked_by_words,
    picked_rules_note,
    rule_label,
    runbooks_reached,
    same_named_rules,
)
from investigator.context_graph.models import RunStatus
from investigator.context_graph.recorder import RunRecorder
from investigator.db_engines import engines_named, page_engines
from investigator.entity_suggestions import (
    MAX_SUGGESTIONS,
    Candidate,
    did_you_mean,
    rank_suggestions,
    suggestion_queries,
)
from investigator.errors import NotAuthorized
from investigator.evidence import Evidence, Rejection, RejectionReason, normalise_rows
from investigator.gate import GatePolicy, version_chains
from investigator.invisible_marks import JOINERS, refused_character, without_invisible_marks
from investigator.ownership_history import RECORDS_TEMPLATE, corrections_at, services_to_check
from investigator.planner import UNHYPHENATED_CODE, extract_mentions
from investigator.record_time import (
    as_recorded_at,
    missing_file_note,
    missing_rule_note,
    record_time_note,
    recorded_after,
)
from investigator.rule_texts import RuleText, untrusted_rule_texts
from investigator.runbook_fallback import (
    FallbackRunbook,
    FallbackSearch,
    OneStepCalls,
    fallback_runbooks,
    own_runbooks_weak,
    search_paths,
    served_over_own,
    set_aside_note,
)
from investigator.runbook_search import (
    SHOWN,
    RankedRunbook,
    TextRanking,
    error_codes_in,
    fulltext_query,
    search_runbooks,
    search_terms,
    seen_fixes,
    wide_tie_said,
    with_fixes,
    without_words,
    word_fixes,
)
from investigator.runbook_sections import (
    LINKED_FILE,
    SectionCase,
    SectionFocus,
    alert_focus,
    alert_name_in,
    code_headed,
    file_of,
    has_heading,
    headed_by,
    heading_searches,
    pointed_at,
    pointer_text,
    runbook_steps,
)
from investigator.runbook_text_time import (
    CLI_AS_OF,
    AsOfArgument,
    TextTime,
    incident_not_placed_note,
    incident_placed_note,
    incident_words,
    without_time_words,
)
from investigator.session import RunSession, RunSpec, load_subject_for
from investigator.tenant_records import notes_when_nothing_read
from investigator.timeline import incident_start_named, time_references

# Purposes a lookup may run under, most specific first; the first one the subject's
# Principal allows is used unless the caller names one.
LOOKUP_PURPOSES = ("runbook_lookup", "incident_investigation")
# A TEXT naming an incident with no purpose asked: read under the first of these the subject
# holds (incident records are for investigations; `runbook_lookup` often reads none).
INCIDENT_PURPOSES = ("incident_investigation", "runbook_lookup")
MAX_TARGET_LENGTH = 200
# Free text is what on-call pastes (an alert's description, a log line, several lines): it is
# read for at most MAX_TERMS informative words (runbook_search), so it may be longer.
MAX_TEXT_LENGTH = 2000
_ALERT_LIMIT = 5  # alert rules sharing one name (per severity)
_TEXT_ALERT_NAMES = 3  # alert names read from pasted text
# One identifier typed alone, which may be an alert's name in one case (`etcdnoleader`).
_ONE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{4,}")
_RELEVANT_TYPES = ["alert_definition", "entity", "ownership", "policy", "runbook"]


class LookupTarget(StrEnum):
    """What the user looks a runbook up by."""

    SERVICE = "service"
    ALERT = "alert"
    ERROR_CODE = "error_code"
    TEXT = "text"


_ENTITY_LABEL = {
    LookupTarget.SERVICE: "Service",
    LookupTarget.ALERT: "Alert",
    LookupTarget.ERROR_CODE: "ErrorCode",
}
_ANCHOR_OF_LABEL = {"Service": "service", "Alert": "alert", "ErrorCode": "error_code"}


# An alert name as typed: one token (`KubePodCrashLooping`, `alertname=X`, `spec-sync-stuck`).
_ONE_TOKEN = re.compile(r"\S+")


class RunbookQuery(BaseModel):
    """One lookup request: the target, who asks, and the time it is asked about."""

    model_config = ConfigDict(frozen=True)

    target: LookupTarget
    value: str
    subject_id: str = Field(min_length=1, max_length=200)
    as_of: AwareDatetime
    purpose: str | None = Field(default=None, min_length=1, max_length=100)
    # The KG as known at this instant (replay re-runs a lookup at its recorded known_at);
    # None: as known now.
    known_at: AwareDatetime | None = None
    # Whether the asker named `known_at` (`--known-at`), which the answer's words follow;
    # None: whether `known_at` is given. Replay passes what the run recorded, since it
    # always gives the run's known_at.
    known_at_asked: bool | None = None
    # Where `as_of` came from (`given`, one time in the `text`, `now`), the text's words it
    # was read from and the note on the text's time words (runbook_text_time.lookup_time):
    # recorded on the run for an auditor; None: not said (replay's re-run records nothing).
    as_of_from: Literal["given", "text", "now"] | None = None
    as_of_words: str | None = None
    time_note: str | None = None
    # The TEXT's words naming the incident whose start `as_of` is ("during the PAY-4097
    # incident", `RunbookLookup.incident_time`): the run reads that incident again, so its
    # record holds the read the time came from (recorded in the run's options; replay
    # passes it back). None: as_of is not an incident's start.
    incident_words: str | None = None

    @field_validator("value")
    @classmethod
    def _printable(cls, value: str, info: ValidationInfo) -> str:
        # Pasted from chat: "etcd\u200bno leader" is "etcdno leader" as the eye reads it.
        text = without_invisible_marks(value).strip()
        limit = MAX_TARGET_LENGTH
        free_text = info.data.get("target") is LookupTarget.TEXT
        if free_text:
            # As a question is checked, before whitespace is made one space: NEL (U+0085) is
            # whitespace to Python and a C1 control, refused in a question.
            if refused_character(text) is not None:
                raise ValueError("the lookup target contains control characters")
            # Pasted text spans lines: its whitespace is one space; an id's is a mistake.
            text = " ".join(text.split())
            limit = MAX_TEXT_LENGTH
        if not text:
            raise ValueError("the lookup target is empty")
        if len(text) > limit:
            raise ValueError(
                f"the lookup target is {len(text)} characters, more than the {limit} a lookup reads"
            )
        # Free text keeps the joiners a question keeps (Persian, Indic scripts, emoji).
        if any(not ch.isprintable() and not (free_text and ch in JOINERS) for ch in text):
            raise ValueError("the lookup target contains control characters")
        if info.data.get("target") is LookupTarget.ALERT and not _ONE_TOKEN.fullmatch(text):
            # A page's line pasted after --alert ("[FIRING:1] ManifestWorkApplyFailed (...)"):
            # the one alert name it holds is the alert (as the same text as TEXT finds it).
            named = alert_names(text)
            if len(named) == 1:
                return named[0]
        if info.data.get("target") is LookupTarget.ALERT:
            # The id the ingest printed, typed without its `alert:` (`NAME@critical`).
            return suffixed_alert_id(text)
        return text

    def question(self) -> str:
        """The request as one line, for the recorded run."""
        words = {
            LookupTarget.SERVICE: "runbook for service",
            LookupTarget.ALERT: "runbook for alert",
            LookupTarget.ERROR_CODE: "runbook for error code",
            LookupTarget.TEXT: "runbook search",
        }
        return f"{words[self.target]}: {self.value}"


class StepsMore(BaseModel):
    """What a card cut at its step limit leaves out: how many step lines, and where."""

    lines: int
    locator: str | None


class RunbookVersion(BaseModel):
    """A runbook (or policy) version as the card and `--json` show it."""

    id: str
    version: int | str | None  # the document's own version label (v3 -> 3), else its record version
    record_version: int
    type: str
    title: str | None
    locator: str | None
    steps_locator: str | None = None
    valid_from: datetime | None
    valid_to: datetime | None
    evidence_id: str
    source_id: str | None
    source_version: str | None
    content_hash: str | None = None  # of the KG record, for integrity and provenance
    steps: list[str] = Field(default_factory=list)
    # Why the steps are not the section asked about (a runbook of several alerts' sections).
    steps_note: str | None = None
    # The step lines left out of `steps` (cut at the card's limit), and where they are.
    steps_more: StepsMore | None = None
    # The cases the section asked about splits into ("Write Latency", "Read Latency"), with
    # the one whose steps are shown, if the lookup's words name one.
    section_cases: list[SectionCase] = Field(default_factory=list)
    applies_via: str | None = None  # the anchor id the version was found through
    # Set when this is a fallback, the runbook of a related service, not the target's own:
    # the path it was reached by, e.g. "err:PAY-1002 <- EMITTED - svc:payment-api".
    fallback_via: str | None = None
    # The record's trust: `untrusted` for imported text (unless ingested with --trusted) and
    # untrusted sources. A default for answers recorded before the field existed.
    trust: str = "trusted"
    # Who the page itself says to contact (front matter `owner_slack` ...), in its words:
    # not an owner of record (that is a team's OWNS edge, `owner`).
    contact: str | None = None
    # On an alternative: why the target's own page is not the one served (untrusted or
    # recorded after as_of, while a fallback is trusted / known in force then), else null.
    set_aside: str | None = None


class OwnerAnswer(BaseModel):
    """The team that owned the thing at `as_of`, and what that was read from."""

    team: str
    team_name: str | None = None
    basis: str  # "service svc:x", "alert alert:y" or "runbook runbook:z"
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    evidence_id: str
    # A later record corrected who was recorded as the owner at as_of: investigate's sentence
    # for it ("corrected at T: recorded as A until then, B since"), else None.
    corrected: str | None = None


class RejectedVersion(BaseModel):
    """A version the gate (or the chain rule) refused, with the reason code."""

    candidate_id: str
    element_id: str
    version: int | str | None
    reason: RejectionReason
    replacement: str | None = None
    detail: str = ""
    # For the card only (not in the JSON answer nor in what replay compares): when the
    # version starts and the commit or hash it was read from (`git:<sha>`), so the versions
    # of a page imported with its git history are told apart and listed by time.
    valid_from: datetime | None = Field(default=None, exclude=True)
    source_version: str | None = Field(default=None, exclude=True)


class ExternalLink(BaseModel):
    """A rule's runbook link that no imported runbook answers (a Google Doc, a wiki page):
    shown as the rule wrote it, never fetched, untrusted."""

    alert: str
    url: str
    key: str  # the annotation it was read from: `runbook_url`, `annotations.documentation`
    # Always `untrusted`, as the card says it: a URL is never fetched or followed, and an
    # alert record carries no trust of its own (its source's is not read by the lookup), so
    # an agent reading the structured content meets it marked, as an untrusted page's text.
    trust: Literal["untrusted"] = "untrusted"


class RunbookAnswer(BaseModel):
    """The lookup's answer: `--json` prints exactly this."""

    run_id: str
    target: LookupTarget
    query: str
    subject: str
    # The subject's tenant: `subject` is unique only within it.
    tenant: str | None = None
    purpose: str
    as_of: datetime
    known_at: datetime
    resolved: list[str] = Field(default_factory=list)
    runbook: RunbookVersion | None = None
    owner: str | None = None  # the owning team's id valid at as_of (docs/design.md section 9)
    owner_detail: OwnerAnswer | None = None  # its name, what it was read from, validity
    # The chosen runbook's own OWNS edge at as_of when `owner` was read from something else
    # (the service): the runbook's author may not be the team to page.
    runbook_owner: OwnerAnswer | None = None
    rejected: list[RejectedVersion] = Field(default_factory=list)
    policies: list[RunbookVersion] = Field(default_factory=list)
    alternatives: list[RunbookVersion] = Field(default_factory=list)
    # Free text only: the re-ranked fulltext candidates, best first (runbook_search.py).
    text_matches: list[RankedRunbook] = Field(default_factory=list)
    note: str | None = None
    # Free text only: the runbooks (ids without version) that fit it alike, the one shown
    # among them, when two or more do: a tie the words do not decide (the note says so).
    tied: list[str] = Field(default_factory=list)
    # A target that resolved to nothing: visible ids close to what was typed, best first.
    suggestions: list[str] = Field(default_factory=list)
    # No imported runbook is linked to the alert: its rule's own link, outside the import.
    external_links: list[ExternalLink] = Field(default_factory=list)
    # The untrusted rules `note` names by id, with their own words (file, group, summary):
    # data, quoted only here (fenced by the MCP server, `[untrusted]` lines on the card).
    untrusted_rules: list[RuleText] = Field(default_factory=list)


def _version_label(ev: Evidence) -> int | str | None:
    raw = ev.props.get("runbook_version")
    if raw is None:
        match = re.search(r"@v(\d+)$", ev.element_id)
        raw = match.group(1) if match else None
    if raw is None:
        return ev.version
    text = str(raw).strip().removeprefix("v").removeprefix("V")
    return int(text) if text.isdigit() else text


def _start(ev: Evidence | None) -> datetime | None:
    return ev.valid_from if ev is not None else None


def _source_version(ev: Evidence | None) -> str | None:
    return ev.source_version if ev is not None else None


def _when(value: datetime | None) -> str:
    return "open" if value is None else iso_utc(value)


def _as_version(ev: Evidence, focus: SectionFocus | None = None) -> RunbookVersion:
    steps = runbook_steps(ev, focus)
    return RunbookVersion(
        id=ev.element_id,
        version=_version_label(ev),
        record_version=ev.version,
        type=ev.type or "Document",
        title=ev.title,
        locator=ev.locator,
        steps_locator=steps.locator,
        valid_from=ev.valid_from,
        valid_to=ev.valid_to,
        evidence_id=ev.evidence_id,
        source_id=ev.source_id,
        source_version=ev.source_version,
        content_hash=ev.content_hash,
        steps=steps.lines + steps.links,
        steps_note=steps.note,
        steps_more=StepsMore(lines=steps.more, locator=steps.locator or ev.locator)
        if steps.more
        else None,
        section_cases=steps.cases,
        applies_via=str(ev.context.get("anchor")) if ev.context.get("anchor") else None,
        trust=ev.trust,
        contact=front_matter_contact(ev.props),
    )


def _alertname(ev: Evidence) -> str:
    return str(ev.props.get("alertname") or ev.name or "")


def _typed_order(names: list[str], ev: Evidence) -> int:
    """The position among `names` of the alert's name (past the end when it is none)."""
    name = _alertname(ev)
    return next((i for i, n in enumerate(names) if _spelled_alike(name, [n])), len(names))


def _focus_on_alerts(names: list[str], alerts: list[Evidence]) -> SectionFocus:
    """A runbook of several alerts: the section each alert's runbook_url points at, else the
    one named like the alert."""
    # In the order the names were typed: a page's first-named alert is the one it is about.
    alerts = sorted(alerts, key=lambda ev: (_typed_order(names, ev), ev.element_id))
    return alert_focus(
        [*names, *(_alertname(ev) for ev in alerts)],
        [str(ev.props["runbook_url"]) for ev in alerts if ev.props.get("runbook_url")],
    )


# Runbooks of one name read to find the file a pointer links (a git history's versions too).
_POINTED_CANDIDATES = 20


# How many runbooks fitting free text alike make the card say so (two may be versions, or a
# pair an extra word would split; more is a query too short to choose by).
_ALIKE_NOTED = 3

# Query words no runbook uses that a card's note names (a pasted page may carry many).
_UNKNOWN_NOTED = 3


def _runbook_steps(anchors: list[tuple[str, str]]) -> list[PlanStep]:
    """`runbooks_for` of each (anchor id, anchor kind): the runbooks and their chains."""
    return [
        PlanStep(
            template_id="runbooks_for",
            params={"anchor_id": anchor_id},
            options={"anchor": anchor},
            evidence_type="runbook",
        )
        for anchor_id, anchor in anchors
    ]


def _valid_at(ev: Evidence, at: datetime) -> bool:
    """Whether `ev`'s valid time holds `at` (an open end holds)."""
    return (ev.valid_from is None or ev.valid_from <= at) and (
        ev.valid_to is None or at < ev.valid_to
    )


def _version_at_steps(runbook_ids: list[str], as_of: datetime) -> list[PlanStep]:
    """`runbook_version_at` of one version of each page among `runbook_ids` (the versions
    of one page share its chain): the version valid at `as_of`."""
    pages = {_document_id(r): r for r in sorted(runbook_ids, reverse=True)}
    return [
        PlanStep(
            template_id="runbook_version_at",
            params={"runbook_id": pages[page], "at": as_of.isoformat()},
            evidence_type="runbook",
        )
        for page in sorted(pages)
    ]


# What a `runbooks_for` row's context says of the link it was found through.
_LINK_KEYS = ("anchor", "anchor_type", "linked_via")


def _file_name(runbook_id: str) -> str:
    """A runbook id's last path part, without version: `runbook:a/often-restarted@v2` ->
    `often-restarted`."""
    return runbook_id.split(":", 1)[-1].split("@", 1)[0].rsplit("/", 1)[-1]


def _pair_note(
    text: str,
    chosen: RankedRunbook,
    others: list[RankedRunbook],
    by_id: Mapping[str, Evidence] | None = None,
) -> str:
    """The card's note when two runbooks fit free text alike: both named, the one shown said
    to be first by id only, and what tells them apart (their alerts, else the finding types
    their pages are titled by, else more words)."""
    pair = [chosen, *others[:1]]
    ids = [r.id for r in pair]
    alerts = [r.matched_alert.split(":", 1)[-1] for r in pair if r.matched_alert]
    if len(alerts) != len(pair):
        # Two GuardDuty pages (`...InstanceCredentialExfiltration.InsideAWS`, `.OutsideAWS`):
        # the finding type each is titled by, which `--alert` finds.
        alerts = [
            found[0]
            for r in pair
            if by_id is not None
            and r.id in by_id
            and len(found := finding_types(by_id[r.id].title or "")) == 1
        ]
    way = (
        " or ".join(f"--alert {a}" for a in alerts) if len(alerts) == len(pair) else "--alert NAME"
    )
    return (
        f"2 runbooks fit {text[:60]!r} alike ({', '.join(ids)}): a tie, the words do not "
        f"choose; the card shows {chosen.id}, {_why_shown(chosen, pair[1:])}: add a word "
        f"that tells them apart, or use {way}"
    )


def _why_shown(chosen: RankedRunbook, others: list[RankedRunbook]) -> str:
    """Why the card shows `chosen` of runbooks that fit alike: "first by id only" when their
    scores are equal (the order of the ids decided), else the score that put it first, said
    as what it is: within `ALIKE_SCORE` of the next, no choice by the words. Before, the note
    said "first by id only" of a page shown for its higher score ("ceph is read only":
    CephClusterNearFull, 4.20 beside CephClusterCriticallyFull's 4.03, which sorts first)."""
    if all(o.score == chosen.score for o in others):
        return "first by id only"
    nearest = max(o.score for o in others)
    return (
        f"ranked first by a score only {chosen.score / nearest - 1:.0%} above the next "
        f"({chosen.score:.2f} vs {nearest:.2f})"
    )


def _engines_note(
    text: str, ranking: TextRanking, chosen: RankedRunbook, by_id: dict[str, Evidence]
) -> str | None:
    """What the card says of database engines: the pages of other engines set aside for the
    one the text names; else, when the text names none, the pages of other engines than the
    one shown that fit it too (before, one engine's page was shown with nothing said)."""
    if ranking.engine is not None:
        return ranking.engine_said()
    if engines_named(text)[0]:
        return None  # two engines named: a comparison, every page of them kept
    mine = page_engines(by_id[chosen.id])
    if not mine:
        return None
    others = [
        f"{r.id} ({', '.join(sorted(theirs))})"
        for r in ranking.ranked[:SHOWN]
        if r.id != chosen.id
        and r.fits_by is not None
        and r.id in by_id
        and (theirs := page_engines(by_id[r.id]))
        and not theirs & mine
    ]
    if not others:
        return None
    return (
        f"the text names no database engine, and runbooks of other engines fit it too "
        f"({', '.join(others)}): the card shows {chosen.id} ({', '.join(sorted(mine))}), the "
        "best ranked: name the engine to choose"
    )


def _alike_count(
    documents: list[str],
    alike: list[RankedRunbook],
    hits: list[Evidence],
    read: ToolResult | None,
) -> str:
    """How many runbooks fit alike, as known: the count, or `N+` when the read left hits
    unread (`truncated`) and an alike one scores as low as the last read (the tie goes on)."""
    scores = [s for hit in hits if (s := next(iter(hit.scores.values()), None)) is not None]
    lowest = min(scores, default=None)
    goes_on = read is not None and read.truncated and lowest is not None
    if goes_on and any(r.fulltext_score == lowest for r in alike):
        return f"{len(documents)}+"
    return str(len(documents))


def _document_id(runbook_id: str) -> str:
    """A runbook id without its version: `runbook:tps-recovery@v2` -> `runbook:tps-recovery`
    (the versions of one document share it)."""
    return runbook_id.split("@", 1)[0]


def _name_forms(name: str) -> list[str]:
    """An alert name as written, and its words joined as files name it (`-`, `_`); a
    finding's name (`Backdoor:EC2/Spambot`) also as AWS files it, its `:` `/` `.` as `-`
    (`backdoor-ec2-spambot`)."""
    words = identifier_words(name)
    parts = [p for p in _NAME_SEPARATORS.split(name.casefold()) if p]
    # Only for such a name: an alert's forms (and the lookups they plan) stay as they were.
    filed = ["-".join(parts)] if len(parts) >= 2 and _FINDING_MARK.search(name) else []
    if _runbook_path(name):
        # `mongodb/restart`: the runbook of that path, as the ingest named it (its id; the
        # folder is in it when two files share a name). Before, it was suggested to itself.
        filed.append(f"runbook:{name}")
    if len(words) < 2:
        return list(dict.fromkeys([name, *filed]))
    return list(dict.fromkeys([name, "-".join(words), "_".join(words), *filed]))


# What separates the parts of a finding's name (`UnauthorizedAccess:IAMUser/X.OutsideAWS`).
_NAME_SEPARATORS = re.compile(r"[:/.\s_-]+")
_FINDING_MARK = re.compile(r"[:/.]")


def _runbook_path(name: str) -> bool:
    """Whether an alert name is a runbook's path as its id has it (`mongodb/restart`): a `/`,
    no `:`, no space."""
    return "/" in name and ":" not in name and not any(c.isspace() for c in name)


def _finding_ends(hits: list[Evidence], names: list[str]) -> dict[str, str]:
    """Of the runbooks `hits`, those with a heading that is a finding type ending in one of
    `names` after its `/` or `:` (`SSHBruteForce`, `EC2/SSHBruteForce` of
    `UnauthorizedAccess:EC2/SSHBruteForce`): runbook id -> that heading."""
    ends = [n.casefold() for n in names if n and ":" not in n]
    found: dict[str, str] = {}
    for ev in hits:
        titles = ev.props.get("section_titles")
        for title in titles if isinstance(titles, list) else []:
            heading = heading_text(str(title))
            if finding_types(heading) != [heading]:
                continue
            folded = heading.casefold()
            if any(folded.endswith(f"/{e}") or folded.endswith(f":{e}") for e in ends):
                found.setdefault(ev.element_id, heading)
    return found


def _joined_name(name: str) -> str | None:
    """A name written in separate words (`virt-handler-down`, `virt_handler_down`) joined as
    alert names are (`VirtHandlerDown`; names resolve in any case), else None."""
    words = identifier_words(name)
    if len(words) < 2 or not _WORD_SEPARATOR.search(name):
        return None
    return "".join(word.capitalize() for word in words)


_WORD_SEPARATOR = re.compile(r"[-_\s]")


def _spelled_alike(name: str, alert_names: list[str]) -> bool:
    """Whether `name` is one of the alert names, in any case or spelling of its words."""
    words = identifier_words(name)
    return any(
        name.casefold() == alert.casefold() or (words and words == identifier_words(alert))
        for alert in alert_names
    )


# A line of a runbook saying another replaces it ("Starting from 4.14, this runbook was
# replaced by [KubemacpoolDown runbook](.../KubemacpoolDown.html)", "... will no longer be
# supported. For a supported runbook, please see [SSPDown Runbook](...)"), and its links.
_REPLACED_BY = re.compile(
    r"\b(?:replaced by|superseded by|no longer (?:be )?supported|deprecated)\b", re.IGNORECASE
)
_LINK_TARGET = re.compile(r"\]\(\s*<?([^)\s>]+)")


def _page_name(link: str) -> str:
    """The page a link names: its last path part, without anchor, query or extension."""
    path = link.partition("#")[0].partition("?")[0].rstrip("/")
    return path.rpartition("/")[2].rpartition(".")[0] or path.rpartition("/")[2]


def _runbook_name(ev: Evidence) -> str:
    """A runbook's name as its file gives it (`runbook:KubemacpoolDown@v2` -> KubemacpoolDown)."""
    stem = file_of(ev).rpartition("/")[2].removesuffix(".md")
    return stem or ev.element_id.removeprefix("runbook:").partition("@")[0]


def replaced_by(ev: Evidence, others: list[Evidence]) -> Evidence | None:
    """The one of `others`, named like runbook `ev` in case only, that `ev` says replaces it:
    a line of its text says it is replaced (deprecated, no longer supported) and links that
    runbook's page by its exact name (`KubemacpoolDown.html` names `KubemacpoolDown.md`, not
    `KubeMacPoolDown.md`). Runbooks of other names are never ordered by this."""
    own = _runbook_name(ev)
    others = [o for o in others if _runbook_name(o).casefold() == own.casefold()]
    if not others:
        return None
    pages = {
        _page_name(link)
        for line in (ev.content or "").splitlines()
        if _REPLACED_BY.search(line)
        for link in _LINK_TARGET.findall(line)
    }
    pages.discard(own)
    return next(
        (o for o in others if o.element_id != ev.element_id and _runbook_name(o) in pages), None
    )


def _has_namesake(ev: Evidence, others: list[Evidence]) -> bool:
    """Whether another of `others` is named like runbook `ev` in case only."""
    own = _runbook_name(ev)
    return any(
        o.element_id != ev.element_id
        and _runbook_name(o) != own
        and _runbook_name(o).casefold() == own.casefold()
        for o in others
    )


def _headed_alike(code: str, chosen: Evidence, others: list[Evidence]) -> str | None:
    """What the note says when runbooks besides `chosen` have a section headed by `code`
    too (Ceph's split pages POOL_FULL.md and POOL_FULL_2.md): which ones, and why `chosen`
    is shown (named exactly after the code, else first by id only); None when none does."""
    alike = sorted({o.element_id for o in others if has_heading(o, code)} - {chosen.element_id})
    if not alike:
        return None
    ones = f"{', '.join(alike)} {'has' if len(alike) == 1 else 'have'} one headed alike"
    if _runbook_name(chosen) == code:
        return f"is named exactly after it and is shown; {ones} (under Also)"
    return (
        f"is shown, first by id only: {ones} (under Also), none is named after it; "
        "read each, or name the one you mean with --alert ID"
    )


def _named_exactly(ev: Evidence, alert_names: list[str]) -> bool:
    """Whether runbook `ev`'s file is named exactly (in case too) after one of the alerts."""
    return _runbook_name(ev) in alert_names


def _resolution_steps(names: list[str], label: str, limit: int) -> list[PlanStep]:
    """`entity_resolution` of each name among the records labelled `label`."""
    return [
        PlanStep(
            template_id="entity_resolution",
            params={"text": name},
            options={"label": label},
            evidence_type="entity",
            limit=limit,
        )
        for name in names
    ]


# A page name an untrusted rule's link may have quoted: a file name's characters only.
_PLAIN_PAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,79}")


def _link_hint(run: _Lookup, anchors: list[tuple[str, str]]) -> str:
    """How the alert and its runbook get linked: by importing the rules when no alert record
    is visible; else by the runbook_url the imported rule has (or lacks)."""
    if not anchors:
        return "import the alert rules to link them"
    links = sorted(
        {
            (str(ev.props["runbook_url"]), _link_key(ev), ev.trust == "trusted")
            for ev in run.alert_rows
            if ev.props.get("runbook_url")
        }
    )
    if not links:
        return (
            "its rule has no runbook_url: add one ending with the runbook's imported path, then "
            "re-ingest the rules"
        )
    url, key, trusted = links[0]
    if (host := document_service(url)) is not None:
        return (
            f"its {key} points at {host}, a document outside the imported runbooks, never fetched"
        )
    page = url_page_name(url)
    if not trusted and page is not None and not _PLAIN_PAGE.fullmatch(page):
        # An untrusted rule's link is its file author's text: quoted only as a plain name.
        page = None
    if page is None:
        said = f"{key} {url!r}" if trusted else f"{key} (an untrusted rule's, not quoted)"
        return f"its {said} names no page: fix it, then re-ingest the rules"
    return (
        f"its {key} names the page {page!r}, which no runbook's id, name or file path "
        f"ends with: import the page as {page}.md (or a folder {page}/) or fix {key}, "
        "then re-ingest the rules"
    )


def _external_links(run: _Lookup) -> list[ExternalLink]:
    """The runbook links of the alerts asked about, none of which linked an imported runbook
    (the caller knows): each alert's own, in id order."""
    return [
        ExternalLink(
            alert=ev.element_id,
            url=str(ev.props["runbook_url"]),
            key=_link_key(ev),
        )
        for ev in sorted(run.alert_rows, key=lambda ev: ev.element_id)
        if ev.props.get("runbook_url")
    ]


def _link_key(alert: Evidence) -> str:
    """The rule's annotation its runbook link was read from, as the import names it:
    `runbook_url`, else `annotations.documentation` (`runbook`, `playbook`), or
    `labels.runbook` (GitLab's cause alerts)."""
    key = alert.props.get("runbook_url_annotation")
    if not key:
        return "runbook_url"
    return str(key) if str(key).startswith("labels.") else f"annotations.{key}"


def _names_asked(run: _Lookup) -> list[str]:
    """The alert names asked about as typed, then as the alerts they resolved to spell them
    (`router-error-ratio-too-high` -> RouterErrorRatioTooHigh): a runbook file is named
    after the rule's spelling, whichever spelling found the rule."""
    spelled = [alert_name_of(ev) for ev in run.alert_rows]
    return list(dict.fromkeys([*run.alert_names, *spelled]))


def _others_note(run: _Lookup) -> str:
    """What the card says when the text names several alerts: which one it shows, and the
    command that shows each other one's."""
    first, *others = run.alert_names
    see = "; ".join(f"investigator runbook --alert {name}" for name in others)
    return (
        f"the text names {len(run.alert_names)} alerts ({', '.join(run.alert_names)}): the "
        f"card shows the runbook of {first} (named first); for {', '.join(others)}: {see}"
    )


class _Lookup(OneStepCalls):
    """One lookup in progress: its session and the free-text hits it started from."""

    def __init__(self, session: RunSession) -> None:
        self.session = session
        self.text_hits: list[Evidence] = []
        self.text_matches: list[RankedRunbook] = []
        self.text_note: str | None = None
        # Free text that many runbooks fit alike ("etcd"), or whose words no runbook uses did
        # not count: said, so the one shown is not taken as *the* runbook of every word.
        self.text_alike: str | None = None
        self.fallbacks: FallbackSearch | None = None  # searched once, when needed
        self.focus: SectionFocus | None = None  # which section of a runbook is asked about
        # The alert names asked about: `--alert NAME`, or those pasted text names that
        # resolved to alerts. They get what an alert lookup gets (a runbook named after the
        # alert, the fired-on service's as a fallback).
        self.alert_names: list[str] = []
        # The alert ids each of `alert_names` resolved to (a page may name several).
        self.alert_ids: dict[str, list[str]] = {}
        # A section heading the target spells out exactly (a code no record stands for).
        self.heading: str | None = None
        # An error id in free text that heads a section (`... (err-mimir-x) ...`).
        self.code_word: str | None = None
        # Free text that two or more runbooks fit alike: their ids (a tie, said on the card).
        self.tied: list[str] = []
        # Runbooks read only because a pointer among the candidates links them.
        self.pointed: set[str] = set()
        # Free text: the best hit, when it only points at the runbook the card shows.
        self.text_pointer: Evidence | None = None
        # The alert records the target resolved to (their rule may have left its file).
        self.alert_rows: list[Evidence] = []
        # Pasted text whose alert has no runbook linked, read again by its words alone.
        self.words_only = False
        # The services the target resolved to whose own record ended by as_of (decommissioned
        # `svc:legacy-fraud`): the card's note says so beside "no runbook".
        self.ended_services: list[Evidence] = []
        # Free text: the ids of the chosen runbook's version chain (it leads the card).
        self.lead_chain: set[str] = set()
        # Runbooks named exactly after the alert while those linked to it are named like it
        # in letter case only (`carthigherrorrate.md`): they lead, the look-alikes under Also.
        self.exact_named: set[str] = set()
        # Anchors whose `runbooks_for` read was cut at its row cap (a page of more versions
        # linked to one alert than the cap): the version in force may be among those cut.
        self.cut_reads: set[str] = set()
        # Pages (ids without version) some version of which the heading search found headed
        # by an alert asked about: their version in force may lack that section.
        self.headed_pages: set[str] = set()
        # Of rules of one name leading apart, the one the text's words picked (said on the card).
        self.rules_note: str | None = None
        # The runbooks linked to the rules of that name not picked: never its name tie.
        self.other_rules_runbooks: set[str] = set()
        # Rules of one name suggested by id: id (without `alert:`) -> what tells it apart.
        self.rule_labels: dict[str, str] = {}
        # The rules the note names by `rule_label` (their untrusted ones' words are listed).
        self.named_rules: list[Evidence] = []
        # The rules of `rule_labels`, as read.
        self.suggested_rules: list[Evidence] = []
        # The finding type (`UnauthorizedAccess:EC2/SSHBruteForce`) heading the one page whose
        # type ends in the name asked (`SSHBruteForce`); the types ending in it, when several.
        self.finding_type: str | None = None
        self.finding_types: list[str] = []
        # The fulltext reads of runbooks, by query words: whether their rows stopped above a
        # tie too wide to order (`tie_at_cut`), or more hits were left unread (`truncated`).
        self.runbook_reads: dict[str, ToolResult] = {}
        # Free text no runbook's words fit that names an error code the subject may read
        # ("PAY-4097 ..."): answered as `--error-code` answers it (`_named_record_anchors`).
        self.text_code: str | None = None
        # What the card says first of a record free text was answered through.
        self.record_note: str | None = None

    def asks_error_code(self, query: RunbookQuery) -> bool:
        """Whether the lookup is about an error code: `--error-code`, or free text answered
        through the code it names (its emitting service a fallback, as for the flag)."""
        return query.target is LookupTarget.ERROR_CODE or self.text_code is not None

    @property
    def headed_code(self) -> str | None:
        """The error id asked about that heads the runbooks found (`--error-code` of a code
        no record stands for, or one typed in free text), else None."""
        return self.code_word or self.heading

    @property
    def subject_id(self) -> str:
        """The subject as notes name it: tenant-qualified (`acme/user:bob`), as it was asked."""
        return str(self.session.subject.ref)

    def stage(self, steps: list[PlanStep]) -> list[list[Evidence]]:
        """Run one recorded plan of independent steps (together); each step's rows as
        candidates, in step order; no steps, no round."""
        if not steps:
            return []
        plan = QueryPlan(intents=["runbook_lookup"], steps=steps)
        self.session.begin_round(plan)
        # A lookup keeps its fulltext reads' hits: its text search judges ~30 of them and
        # keeps none as evidence, and replay shows a re-ranking by them (`ranking_changed`).
        calls = self.session.call_round(steps, plan=plan, keep_hits=True)
        self.cut_reads.update(
            str(c.record.params.get("anchor_id"))
            for c in calls
            if c.result.truncated and c.record.template_id == "runbooks_for"
        )
        self.runbook_reads.update(
            (str(c.result.params.get("query")), c.result)
            for c in calls
            if c.record.template_id == "fulltext_search"
            and c.result.options.get("label") == "Runbook"
        )
        return [call.candidates for call in calls]

    def admit(self, candidates: list[Evidence]) -> tuple[list[Evidence], list[Rejection]]:
        """Gate candidates (one per record, none already admitted); the session records."""
        gate = self.session.gate
        assert gate is not None
        admitted_before = {ev.identity for ev in gate.admitted}
        seen: set[tuple[str, int]] = set()
        unique = []
        for cand in sorted(candidates, key=lambda c: (c.element_id, c.version, c.evidence_id)):
            if cand.identity not in seen and cand.identity not in admitted_before:
                seen.add(cand.identity)
                unique.append(cand)
        decision = self.session.admit(unique)
        return decision.admitted, decision.rejected


class RunbookLookup:
    """Answers `investigator runbook` queries for one driver (reusable across lookups)."""

    def __init__(
        self,
        driver: neo4j.Driver,
        database: str | None = None,
        executor: TemplateExecutor | None = None,
        recorder: RunRecorder | None = None,
        *,
        record: bool = True,
    ) -> None:
        self.executor = executor or TemplateExecutor(driver, database=database)
        self.recorder = (recorder or RunRecorder(driver)) if record else None

    # -- the lookup -----------------------------------------------------------------------

    def lookup(self, query: RunbookQuery) -> RunbookAnswer:
        """Run one lookup and record it; the answer is what the CLI prints."""
        session = RunSession.open(
            RunSpec(
                command="runbook",
                question=query.question(),
                subject=query.subject_id,
                purposes=(query.purpose,) if query.purpose is not None else LOOKUP_PURPOSES,
                as_of=query.as_of,
                as_of_from=query.as_of_from,
                as_of_words=query.as_of_words,
                time_note=query.time_note,
                known_at=query.known_at,
                service=query.value if query.target is LookupTarget.SERVICE else None,
                options={
                    "target": query.target.value,
                    "value": query.value,
                    # Recorded only when said, so a run without it records what it did before.
                    **({"known_at_asked": True} if _known_at_asked(query) else {}),
                    **({"incident_words": query.incident_words} if query.incident_words else {}),
                },
            ),
            executor=self.executor,
            recorder=self.recorder,
        )
        with session:
            session.use_gate(
                GatePolicy(
                    as_of=session.as_of,
                    known_at=session.known_at,
                    purpose=session.subject.purpose,
                    granted_labels=list(session.subject.labels),
                    relevant_types=_RELEVANT_TYPES,
                    top_k_per_type=50,
                    evidence_token_budget=1_000_000,
                    one_version_per_chain=True,
                )
            )
            run = _Lookup(session)
            unconfirmed = self._incident_unconfirmed(run, query)
            answer = self._answer(run, query)
            if unconfirmed is not None:
                answer.note = "; ".join(n for n in (answer.note, unconfirmed) if n)
            answer.untrusted_rules = untrusted_rule_texts(run.named_rules)
            found = answer.runbook is not None
            if not found:  # nothing read at all: said when the tenant holds no record
                empty = notes_when_nothing_read(
                    self.executor, session.subject.tenant, session.known_at, session.tool_calls
                )
                answer.note = "; ".join([*empty, *([answer.note] if answer.note else [])]) or None
            session.finish(
                RunStatus.COMPLETE if found else RunStatus.PARTIAL,
                "evidence_sufficient" if found else "no_runbook",
                answer,
            )
        return answer

    def incident_time(
        self,
        timed: TextTime,
        text: str | None,
        subject_id: str,
        purpose: str | None,
        known_at: datetime | None,
        argument: AsOfArgument = CLI_AS_OF,
    ) -> TextTime:
        """A TEXT lookup with no as_of whose text names an incident ("during the PAY-4097
        incident", "for the payments incident"): at that incident's start, as `investigate`
        reads the words, when the subject may read it (the read is Cypher under its
        tenant, labels and purpose; the lookup's run reads it again and records it).
        Otherwise `timed` (an incident the subject cannot read: at now, said so)."""
        words = incident_words(text) if timed.as_of_from == "now" else None
        if words is None or text is None:
            return timed
        now = datetime.now(UTC)
        try:
            purposes = (purpose,) if purpose is not None else INCIDENT_PURPOSES
            subject = load_subject_for(self.executor, subject_id, purposes)
        except NotAuthorized:
            return timed  # the lookup refuses it, and records the refusal
        result = self.executor.run(_incidents_step(now), subject, known_at or now)
        found = _incident_named(_incident_rows(result), now, words, text)
        if found is None:
            return TextTime(None, incident_not_placed_note(words, argument), "now")
        at, name, incident = found
        note = incident_placed_note(words, at, incident or name, argument)
        chosen = subject.purpose if purpose is None else None
        return TextTime(at, note, "text", f"{words!r}, the incident's start", words, chosen)

    def _incident_unconfirmed(self, run: _Lookup, query: RunbookQuery) -> str | None:
        """Read in the run the incident a TEXT's as_of was placed at (recorded, so replay
        re-reads it); what to say when it no longer starts at as_of (None: it does)."""
        words = query.incident_words
        if not words:
            return None
        candidates = run.stage([_incidents_step(query.as_of)])[0]
        found = _incident_named(candidates, query.as_of, words, query.value)
        if found is not None and found[0] == query.as_of:
            return None
        return (
            f"the incident {words!r} named is not read as starting at as_of in this run: "
            "give --as-of for the time meant"
        )

    def _answer(self, run: _Lookup, query: RunbookQuery) -> RunbookAnswer:
        session = run.session
        answer = RunbookAnswer(
            run_id=session.run_id,
            target=query.target,
            query=query.value,
            subject=session.subject.id,
            tenant=session.subject.tenant,
            purpose=session.subject.purpose,
            as_of=session.as_of,
            known_at=session.known_at,
        )
        anchors = self._anchors(run, query)
        answer.resolved = [anchor_id for anchor_id, _ in anchors]
        answer.text_matches = run.text_matches
        documents = [ev for rows in run.stage(_runbook_steps(anchors)) for ev in rows]
        # Rules of one name in several files, leading to different runbooks: the text's words
        # pick one, else the name is ambiguous and the card says which is which.
        apart = [
            r
            for r in same_named_rules(run.alert_rows)
            if lead_apart(r, runbooks_reached(documents))
        ]
        if apart:
            said = run.focus.said if run.focus is not None else None
            picks = [picked_by_words(rules, said) if said else None for rules in apart]
            if not all(picks):
                answer.suggestions = [
                    r.element_id.removeprefix("alert:") for rules in apart for r in rules
                ]
                answer.note = ambiguous_rules_note(apart, runbooks_reached(documents))
                run.named_rules += [r for rules in apart for r in rules]
                return answer
            kept = {p.alert_id for p in picks if p is not None}
            documents_before = documents
            dropped = {r.element_id for rules in apart for r in rules} - kept
            anchors = [(a, option) for a, option in anchors if a not in dropped]
            answer.resolved = [anchor_id for anchor_id, _ in anchors]
            documents = [d for d in documents if str(d.context.get("anchor")) not in dropped]
            run.alert_rows = [ev for ev in run.alert_rows if ev.element_id not in dropped]
            run.alert_ids = {
                n: [i for i in ids if i not in dropped] for n, ids in run.alert_ids.items()
            }
            run.rules_note = picked_rules_note(apart, [p for p in picks if p is not None])
            run.named_rules += [r for r in run.alert_rows if r.element_id in kept]
            run.other_rules_runbooks = {
                r
                for a, ids in runbooks_reached(documents_before).items()
                if a in dropped
                for r in ids
            }
        # An alert no record of the KG stands for, or that no runbook is linked to, may still
        # have its runbook: a folder of Markdown runbooks is named after its alerts.
        linked = [d for d in documents if d.type == "Runbook"]
        named = [] if linked else self._runbooks_named(run, _names_asked(run))
        # A runbook linked to another rule of the name is that rule's, not a name tie.
        named = [r for r in named if _document_id(r) not in run.other_rules_runbooks]
        if linked and not any(_named_exactly(d, run.alert_names) for d in linked):
            # Only look-alikes in case are linked: the page named exactly after the alert
            # is not taken over by them (another import's `carthigherrorrate.md`).
            spelled = {n.casefold() for n in run.alert_names}
            if any(_runbook_name(d).casefold() in spelled for d in linked):
                exact = [
                    r
                    for r in self._runbooks_named(run, run.alert_names)
                    if _file_name(r) in run.alert_names and r not in {d.element_id for d in linked}
                ]
                run.exact_named = {_document_id(r) for r in exact}
                named = exact
        if query.target is LookupTarget.ERROR_CODE and not anchors:
            # A code no record stands for may head a section of a runbook (Mimir's
            # `### err-mimir-sample-out-of-order`): that section, as an alert's is found.
            named = self._runbooks_headed(run, query.value)
            if named:
                run.heading = query.value
                run.focus = SectionFocus(names=(query.value,))
        if not anchors and not run.text_hits and not named:
            what = query.target.value.replace("_", " ")
            if run.text_note is not None:
                # An alert name typed in the text (`VirtHandlerDwon firing`): as `--alert`.
                answer.suggestions = self._suggestions(run, query)
                hint = did_you_mean(answer.suggestions) if answer.suggestions else None
                answer.note = "; ".join(n for n in (run.text_note, hint) if n)
                return answer
            answer.suggestions = self._suggestions(run, query)
            # Rules of one name are suggested with what tells them apart (file, severity).
            shown = [run.rule_labels.get(s, s) for s in answer.suggestions]
            run.named_rules += [
                r
                for r in run.suggested_rules
                if r.element_id.removeprefix("alert:") in answer.suggestions
            ]
            answer.note = _nothing_matches(what, query, run) + did_you_mean(shown)
            return answer
        for rows in run.stage(_runbook_steps([(runbook, "runbook") for runbook in named])):
            documents.extend(rows)
        # A page of many versions (a git history's) fills the heading search with versions,
        # and four SUPERSEDES steps from them may not reach the one in force at as_of: it is
        # read from the chain of each page found that lacks it (one read per page).
        read = {ev.identity for ev in documents}
        in_force = {_document_id(ev.element_id) for ev in documents if _valid_at(ev, session.as_of)}
        # So is a linked page whose read was cut at the row cap (its rows come by id, and
        # the version in force may be past the cut), and a page the target resolved to
        # itself (free text's hits: four steps from them).
        cut = [
            d.element_id
            for d in linked
            if str(d.context.get("anchor")) in run.cut_reads
            or str(d.context.get("anchor_type")) == "runbook"
        ]
        unreached = [r for r in [*named, *cut] if _document_id(r) not in in_force]
        # A version read for a linked page keeps the link its page's rows name: it is the
        # alert's runbook, not one found by name.
        links = {
            _document_id(d.element_id): {k: d.context[k] for k in _LINK_KEYS if k in d.context}
            for d in linked
            if d.element_id in cut
        }
        for rows in run.stage(_version_at_steps(unreached, session.as_of)):
            documents.extend(
                ev.model_copy(update={"context": {**ev.context, **link}})
                if (link := links.get(_document_id(ev.element_id)))
                else ev
                for ev in rows
                if ev.identity not in read
            )
        if run.text_hits:
            # Free text: only the version chain of the best fulltext hit. A runbook that
            # applies to nothing has its chain read from itself: the text may match an older
            # version best, and the answer is the version in force at as_of.
            # A "moved to" stub answers with the runbook it points at, when that is a hit too.
            pointed_to = pointed_at(run.text_hits[0], run.text_hits)
            run.text_pointer = run.text_hits[0] if pointed_to is not None else None
            lead = pointed_to or run.text_hits[0]
            best = lead.element_id
            chain = next(
                (c for c in version_chains(documents) if best in {ev.element_id for ev in c}),
                None,
            )
            if chain is None:
                chain = run.stage(_runbook_steps([(best, "runbook")]))[0] or [lead]
            if not any(_valid_at(ev, session.as_of) for ev in chain):
                # The hits of a page of many versions (a git history's) are those the words
                # rank best, over every version: the one in force at as_of is read from the
                # page's chain, so the answer does not hang on how the others rank.
                known = {ev.identity for ev in chain}
                for rows in run.stage(_version_at_steps([best], session.as_of)):
                    chain = [*chain, *(ev for ev in rows if ev.identity not in known)]
            run.lead_chain = {ev.element_id for ev in chain}
            # A runbook whose id differs from the lead's in letter case only (`Alpha.md`
            # beside `alpha.md`) is another record the words fit: read too, listed under Also.
            alike_ids = sorted(
                {
                    hit.element_id
                    for hit in run.text_hits
                    if _document_id(hit.element_id) != _document_id(best)
                    and _document_id(hit.element_id).casefold() == _document_id(best).casefold()
                    and hit.element_id not in run.lead_chain
                }
            )
            documents = chain + [
                ev
                for rows in run.stage(_runbook_steps([(i, "runbook") for i in alike_ids]))
                for ev in rows
                if ev.element_id not in run.lead_chain
            ]
        # A runbook that states no validity is in force from its import until a re-import:
        # at as_of, the record recorded by then (record_time.py), not a later import's text.
        documents = as_recorded_at(documents, session.as_of, run.stage)
        # The gate keeps one version per chain: the newest valid at as_of.
        admitted, rejected_by_id = run.admit(documents)
        # A pointer in force whose runbook the lookup did not reach (the rules link the
        # pointer only, when imported after the runbooks): that one is read and gated too, so
        # the import order does not change the answer.
        if pointed := self._pointed_runbooks(run, admitted, documents):
            # The runbook pointed at states no validity either: the version recorded by then.
            pointed = as_recorded_at(pointed, session.as_of, run.stage)
            more, more_rejected = run.admit(pointed)
            documents = [*documents, *pointed]
            admitted, rejected_by_id = [*admitted, *more], [*rejected_by_id, *more_rejected]
        admitted_ids = {id(ev) for ev in admitted}
        heads = [
            ev for chain in version_chains(documents) for ev in chain if id(ev) in admitted_ids
        ]
        by_identity = {(ev.element_id, ev.version): ev for ev in documents}
        answer.rejected = sorted(
            (
                RejectedVersion(
                    candidate_id=r.candidate_id,
                    element_id=r.element_id,
                    version=_version_label(by_identity[(r.element_id, r.version)])
                    if (r.element_id, r.version) in by_identity
                    else r.version,
                    reason=r.reason,
                    replacement=r.replacement,
                    detail=r.detail,
                    valid_from=_start(by_identity.get((r.element_id, r.version))),
                    source_version=_source_version(by_identity.get((r.element_id, r.version))),
                )
                for r in rejected_by_id
            ),
            key=lambda r: (r.element_id, str(r.version), r.reason.value),
        )
        runbooks = [h for h in heads if h.type != "Policy"]
        policies = [h for h in heads if h.type == "Policy"]
        # Newest first; of runbooks valid alike, one that only points at another comes after
        # it (openshift/runbooks keeps a "moved to" stub under the old operator's folder).
        alike = list(runbooks)  # a list being sorted reads as empty
        # A page naming several alerts is about the first one named: its runbook first.
        first_ids = set(run.alert_ids.get(run.alert_names[0], [])) if run.alert_names else set()
        reached = {
            (ev.element_id, ev.version, str(ev.context.get("anchor")))
            for ev in documents
            if str(ev.context.get("anchor")) in first_ids
        }
        via_first = {(e, v) for e, v, _ in reached}
        runbooks.sort(
            key=lambda h: (
                pointed_at(h, alike) is None,
                # Of runbooks named alike, one that says another replaced it gives way to it,
                # and one named exactly after the alert (in case too) comes first.
                replaced_by(h, alike) is None,
                # Free text: the runbook its words chose leads its case-only look-alikes.
                h.element_id in run.lead_chain,
                _document_id(h.element_id) in run.exact_named,
                (h.element_id, h.version) in via_first,
                _named_exactly(h, run.alert_names) and _has_namesake(h, alike),
                # Of pages headed alike by the code asked (Ceph's POOL_FULL.md and
                # POOL_FULL_2.md), the one named exactly after it, not the last by id.
                run.headed_code is not None and _runbook_name(h) == run.headed_code,
                h.valid_from or datetime.min.replace(tzinfo=UTC),
                h.element_id,
            ),
            reverse=True,
        )
        answer.policies = [_as_version(h, run.focus) for h in policies]
        # Issue 15: an alert or error code with no runbook of its own valid at as_of gets
        # the emitting / fired-on service's, named as a fallback. Finding 3 of e29-qa: own
        # pages that are all untrusted, or all recorded after as_of, do not hide the trusted
        # (or known) runbook in force on that service: it is served first, they follow.
        fallbacks: list[FallbackRunbook] = []
        if run.asks_error_code(query) or run.alert_names:
            if not runbooks:
                fallbacks = fallback_runbooks(
                    run, anchors, self._fallbacks(run, anchors).paths, as_of=session.as_of
                )
            elif own_runbooks_weak(runbooks, session.as_of):
                found = fallback_runbooks(
                    run, anchors, self._fallbacks(run, anchors).paths, as_of=session.as_of
                )
                fallbacks = served_over_own(runbooks, found, session.as_of)
        if runbooks and not fallbacks:
            chosen = runbooks[0]
            answer.runbook = _as_version(chosen, run.focus)
            answer.alternatives = [_as_version(h, run.focus) for h in runbooks[1:]]
            answer.owner_detail = self._owner(run, query, anchors, chosen)
            anchor_first = sorted(
                a for e, v, a in reached if (e, v) == (chosen.element_id, chosen.version)
            )
            if anchor_first:
                # Reached through several alerts: it is named by the first one's link.
                answer.runbook.applies_via = anchor_first[0]
            answer.note = self._chosen_note(run, query, anchors, chosen, runbooks[1:])
            if run.rules_note is not None:
                answer.note = "; ".join(n for n in (run.rules_note, answer.note) if n)
            if len(run.alert_names) > 1:
                answer.note = "; ".join(n for n in (answer.note, _others_note(run)) if n)
            if run.text_alike is not None:
                answer.note = "; ".join(n for n in (run.text_alike, answer.note) if n)
            answer.tied = run.tied
            if (recorded := record_time_note(chosen, session.as_of)) is not None:
                # First: the card cuts a long note, and this one answers "at that time".
                answer.note = "; ".join(n for n in (recorded, answer.note) if n)
            if (missing := missing_file_note(chosen, session.as_of)) is not None:
                # First of all: the page the on-call would open is gone from its source.
                answer.note = "; ".join(n for n in (missing, answer.note) if n)
        elif fallbacks:
            versions = [
                _as_version(f.runbook, run.focus).model_copy(update={"fallback_via": f.path.via})
                for f in fallbacks
            ]
            served = fallbacks[0].runbook
            # The anchor's own pages set aside (never dropped): after the fallbacks, each
            # saying why (untrusted, when it was recorded).
            own = [
                _as_version(h, run.focus).model_copy(
                    update={"set_aside": set_aside_note(h, served, session.as_of)}
                )
                for h in runbooks
            ]
            answer.runbook, answer.alternatives = versions[0], [*versions[1:], *own]
            first = fallbacks[0].path
            why = (
                f"no runbook of {first.anchor} itself is valid at as_of"
                if not runbooks
                else self._set_aside_why(first.anchor, runbooks, served, session.as_of)
            )
            answer.note = (
                f"fallback: {why}; this is the runbook of {first.service}, reached via "
                f"{first.via}"
                + (f" ({len(fallbacks)} services, ranked)" if len(fallbacks) > 1 else "")
            )
            if (recorded := record_time_note(fallbacks[0].runbook, session.as_of)) is not None:
                answer.note = f"{recorded}; {answer.note}"  # first, as for a runbook of its own
            if (missing := missing_file_note(fallbacks[0].runbook, session.as_of)) is not None:
                answer.note = f"{missing}; {answer.note}"
            owner = self._service_owner(run, [first.service])
            answer.owner_detail = (
                owner.model_copy(update={"basis": f"{owner.basis} (fallback path {first.via})"})
                if owner
                else None
            )
        else:
            answer.note = self._no_runbook_note(run, query, anchors, documents, answer)
            if run.rules_note is not None:
                answer.note = "; ".join(n for n in (run.rules_note, answer.note) if n)
            if not any(d.type != "Policy" for d in documents):
                # For on-call that URL is the runbook: said, not fetched (finding 7 of e25).
                answer.external_links = _external_links(run)
            if (words := self._from_words(run, query, anchors, documents, answer)) is not None:
                if run.rules_note is not None:
                    words.note = "; ".join(n for n in (run.rules_note, words.note) if n)
                return words
            answer.owner_detail = self._owner(run, query, anchors, None)
        if run.record_note is not None:
            # Free text answered through the record it names, not its words: said first.
            answer.note = "; ".join(n for n in (run.record_note, answer.note) if n)
        if (gone := missing_rule_note(run.alert_rows, session.as_of)) is not None:
            # First: the alert asked about no longer has its rule in the rule file.
            answer.note = "; ".join(n for n in (gone, answer.note) if n)
        answer.owner = answer.owner_detail.team if answer.owner_detail else None
        if answer.runbook is not None and answer.runbook.fallback_via is None:
            answer.runbook_owner = self._runbook_owner(run, answer)
        return answer

    @staticmethod
    def _set_aside_why(anchor: str, own: list[Evidence], served: Evidence, as_of: datetime) -> str:
        """Why the fallback is served before `anchor`'s own runbooks (listed under Also)."""
        ids = ", ".join(h.element_id for h in own[:3]) + (" ..." if len(own) > 3 else "")
        untrusted = all(h.trust != "trusted" for h in own)
        late = all(recorded_after(h, as_of) for h in own)
        what = " and ".join(
            w for w, on in (("untrusted", untrusted), ("recorded after as_of", late)) if on
        )
        kind = "trusted " if served.trust == "trusted" else ""
        return (
            f"{anchor}'s own runbook ({ids}) is {what}, so the {kind}runbook in force at as_of "
            "comes first (its own under Also)"
        )

    def _from_words(
        self,
        run: _Lookup,
        query: RunbookQuery,
        anchors: list[tuple[str, str]],
        documents: list[Evidence],
        answer: RunbookAnswer,
    ) -> RunbookAnswer | None:
        """Pasted text naming an alert no runbook is linked to (`[FIRING:1] CephOSDDown ...
        An OSD has been marked down`): the answer its words find, as free text without the
        alert's name finds it, labelled so; None when the text names no alert, a runbook is
        linked (then its versions are the answer, valid or not) or the words find none."""
        if (
            query.target is not LookupTarget.TEXT
            or not run.alert_names
            or run.words_only
            or any(d.type != "Policy" for d in documents)
        ):
            return None
        by_words = _Lookup(run.session)
        by_words.words_only = True
        words = self._answer(by_words, query)
        if words.runbook is None:
            return None
        alerts = ", ".join(a for a, _ in anchors)
        label = (
            f"no runbook is linked to {alerts} (none APPLIES_TO it; {_link_hint(run, anchors)}): "
            "this runbook is found by the text's words instead, as free text without the alert's "
            "name finds it"
        )
        # First: the card cuts a long note, and this one says how the runbook was found.
        words.note = "; ".join(
            n for n in (missing_rule_note(run.alert_rows, words.as_of), label, words.note) if n
        )
        words.resolved = list(dict.fromkeys([*answer.resolved, *words.resolved]))
        return words

    @staticmethod
    def _runbooks_headed(run: _Lookup, heading: str) -> list[str]:
        """Runbooks with a section headed exactly `heading` (in any case); one stage."""
        hits = run.stage(heading_searches([heading]))[0]
        return sorted({ev.element_id for ev in hits if has_heading(ev, heading)})

    @staticmethod
    def _runbooks_named(run: _Lookup, names: list[str]) -> list[str]:
        """Runbooks whose id or name is one of the alert `names`, else that have a section
        headed by one (a file of one section per alert, Tempo's `runbook.md`). One stage
        each; no names, no read."""
        # A file may spell the name in words (`PolicyPropagatorHighErrorRate`:
        # policy-propagator-high-error-rate.md, as stolostron's runbooks are named).
        forms = list(dict.fromkeys(form for name in names for form in _name_forms(name)))
        steps = _resolution_steps(forms, "Runbook", limit=5)
        named = sorted({ev.element_id for rows in run.stage(steps) for ev in rows})
        if named or not names:
            return named
        hits = [ev for rows in run.stage(heading_searches(names)) for ev in rows]
        headed = {ev.element_id for ev in hits if headed_by(ev.props.get("section_titles"), names)}
        if not headed:
            # A finding's name without its prefix (`SSHBruteForce`, `EC2/SSHBruteForce`):
            # the one visible finding type ending in it, else those types to choose from.
            ends = _finding_ends(hits, names)
            pages = {_document_id(ev_id) for ev_id in ends}
            if len(pages) == 1:
                headed = set(ends)
                run.finding_type = next(iter(ends.values()))
            else:
                run.finding_types = sorted(set(ends.values()))
        run.headed_pages.update(_document_id(h) for h in headed)
        return sorted(headed)

    @staticmethod
    def _pointed_runbooks(
        run: _Lookup, admitted: list[Evidence], documents: list[Evidence]
    ) -> list[Evidence]:
        """The runbooks, with their version chains, that pointers among the `admitted`
        versions link and that are not among `documents`: runbooks named like the linked file,
        visible to the subject, whose file it is (two stages; none when no admitted runbook is
        such a pointer)."""
        runbooks = [d for d in admitted if d.type != "Policy"]
        texts = [pointer_text(d) for d in runbooks if pointed_at(d, runbooks) is None]
        names = sorted({m.group(1) for text in texts for m in LINKED_FILE.finditer(text)})
        if not names:
            return []
        steps = _resolution_steps(names, "Runbook", limit=_POINTED_CANDIDATES)
        found = [ev for rows in run.stage(steps) for ev in rows]
        files = {file_of(target) for d in runbooks if (target := pointed_at(d, found)) is not None}
        # Every version of the file found (a git history's), as a runbook named after an
        # alert is read: the chain from each reaches the version in force at as_of.
        known = {d.element_id for d in documents}
        targets = sorted(
            {f.element_id for f in found if file_of(f) in files and f.element_id not in known}
        )
        chains: dict[tuple[str, int], Evidence] = {}
        read = {d.identity for d in documents}
        for rows in run.stage(_runbook_steps([(t, "runbook") for t in targets])):
            for ev in rows:
                if ev.identity not in read:
                    chains.setdefault(ev.identity, ev)
        run.pointed.update(ev.element_id for ev in chains.values())
        return list(chains.values())

    def _chosen_note(
        self,
        run: _Lookup,
        query: RunbookQuery,
        anchors: list[tuple[str, str]],
        chosen: Evidence,
        others: list[Evidence],
    ) -> str | None:
        """What the card says of the runbook it shows: that a pointer among the others
        points at it, and what ties it to the alert when only a name does."""
        alike = [chosen, *others]
        pointer = next(
            (
                h
                for h in others
                if (target := pointed_at(h, alike)) is not None
                and target.element_id == chosen.element_id
            ),
            None,
        )
        # A runbook named exactly after the alert that says the chosen one replaced it.
        replaced = next(
            (
                h
                for h in others
                if (target := replaced_by(h, alike)) is not None
                and target.element_id == chosen.element_id
                and _named_exactly(h, run.alert_names)
            ),
            None,
        )
        # Reached through a pointer: what ties the alert to the answer is the pointer's tie.
        tied = pointer if chosen.element_id in run.pointed else chosen
        notes = []
        # Linked to the alert and named like the chosen page in letter case only.
        look_alikes = sorted(
            {
                _document_id(h.element_id)
                for h in others
                if h.context.get("anchor_type") == "alert"
                and _runbook_name(h) != _runbook_name(chosen)
                and _runbook_name(h).casefold() == _runbook_name(chosen).casefold()
            }
        )
        if look_alikes and _named_exactly(chosen, run.alert_names):
            alerts = ", ".join(a for a, _ in anchors)
            notes.append(
                f"{chosen.element_id} is named exactly after {alerts} and is shown; "
                f"{', '.join(look_alikes)}, linked to it, "
                f"{'is' if len(look_alikes) == 1 else 'are'} named like it in letter case "
                "only (under Also): read both, or link the one you mean with a runbook_url"
            )
        elif run.alert_names and tied is not None and tied.context.get("anchor_type") == "runbook":
            exact_other = any(_named_exactly(h, run.alert_names) for h in others)
            # Other runbooks named after it too (`restart`: one per engine's folder).
            namesakes = sorted(
                {
                    _document_id(h.element_id)
                    for h in others
                    if h.context.get("anchor_type") == "runbook"
                    and _document_id(h.element_id) != _document_id(tied.element_id)
                    # The same file name in another folder (names alike in case only are
                    # look-alikes, said otherwise).
                    and _runbook_name(h) == _runbook_name(tied)
                    and _spelled_alike(h.name or "", run.alert_names)
                }
            )
            notes.append(self._named_note(run, query, anchors, tied, exact_other, namesakes))
        elif run.heading is not None and query.target is LookupTarget.ERROR_CODE:
            headed = _headed_alike(run.heading, chosen, others)
            notes.append(
                f"no error code matching {query.value!r} is visible to {run.subject_id}; "
                + (
                    f"{chosen.element_id} has a section headed by it, and that heading is the "
                    "only tie"
                    if headed is None
                    else f"{chosen.element_id} {headed}"
                )
            )
        elif run.code_word is not None:
            headed = _headed_alike(run.code_word, chosen, others)
            notes.append(
                f"{run.code_word!r} in the text heads a section of {chosen.element_id}: that "
                "section is shown (the heading is the only tie)"
                if headed is None
                else f"{run.code_word!r} in the text heads a section of {chosen.element_id}, "
                f"which {headed}"
            )
        if replaced is not None:
            notes.append(
                f"{replaced.element_id}, named exactly after it, says it was replaced by "
                f"{chosen.element_id}, so the card shows that runbook (the replaced one is "
                "under Also)"
            )
        if pointer is not None:
            notes.append(
                f"{pointer.element_id} only points at {chosen.element_id}, so the card "
                "shows that runbook (the pointer is under Also)"
            )
        elif (
            run.text_pointer is not None
            and (target := pointed_at(run.text_pointer, alike)) is not None
            and _document_id(target.element_id) == _document_id(chosen.element_id)
        ):
            # Followed silently before: the words' best match was not the runbook shown.
            notes.append(
                f"{run.text_pointer.element_id}, the best match of the words, only points at "
                f"{chosen.element_id}, so the card shows that runbook"
            )
        return "; ".join(notes) or None

    @staticmethod
    def _named_note(
        run: _Lookup,
        query: RunbookQuery,
        anchors: list[tuple[str, str]],
        chosen: Evidence,
        exact_other: bool = False,
        namesakes: list[str] | None = None,
    ) -> str:
        """Why a runbook no record links to is the answer: it is named after the alert (named
        like it, when `exact_other`: another runbook is named exactly after it), or has a
        section headed by its name."""
        if anchors:
            alerts = ", ".join(a for a, _ in anchors)
            why = f"no runbook is linked to {alerts} (none APPLIES_TO it)"
        else:
            why = _nothing_matches("alert", query, run).removesuffix("; ")
        named = _spelled_alike(chosen.name or "", run.alert_names)
        by_path = any(
            _runbook_path(n) and _document_id(chosen.element_id) == f"runbook:{n}"
            for n in run.alert_names
        )
        if by_path:
            tie = "has that path as its id, and that id"
        elif named and exact_other and not _named_exactly(chosen, run.alert_names):
            # `KubemacpoolDown` for KubeMacPoolDown, beside a KubeMacPoolDown.md: alike in
            # case only; the one named after it is another.
            tie = f"is named like it ({_runbook_name(chosen)}), and that name"
        elif named and namesakes:
            # Not "the only tie": as many runbooks are named so, and the card shows one.
            ids = sorted({_document_id(chosen.element_id), *namesakes})
            paths = [i.removeprefix("runbook:") for i in ids if "/" in i]
            way = (
                " or ".join(f"--alert {p}" for p in paths)
                if len(paths) == len(ids)
                else "--alert RUNBOOK_ID"
            )
            return (
                f"{why}; {len(ids)} runbooks are named after it ({', '.join(ids)}), and that "
                f"name is their only tie: the card shows {chosen.element_id}, the other"
                f"{'s' if len(ids) > 2 else ''} under Also; name the one you mean ({way}), or "
                f"{_link_hint(run, anchors)}"
            )
        elif named:
            tie = "is named after it, and that name"
        elif run.finding_type is not None:
            tie = (
                f"has a section headed {run.finding_type}, the one finding type visible that "
                "ends in it, and that heading"
            )
        elif headed_by(chosen.props.get("section_titles"), run.alert_names) or (
            _document_id(chosen.element_id) not in run.headed_pages
        ):
            tie = "has a section headed by its name, and that heading"
        else:
            # The version in force at as_of of a page found by another version's heading: it
            # has no such section itself (added later, or removed by then).
            tie = (
                "is the version in force at as_of of a page other versions of which have a "
                "section headed by its name (this one has none), and that heading"
            )
        return f"{why}; {chosen.element_id} {tie} is the only tie ({_link_hint(run, anchors)})"

    def _fallbacks(self, run: _Lookup, anchors: list[tuple[str, str]]) -> FallbackSearch:
        """The services the anchors were emitted by / fired on at as_of (searched once)."""
        if run.fallbacks is None:
            run.fallbacks = search_paths(run, anchors)
        return run.fallbacks

    def _no_runbook_note(
        self,
        run: _Lookup,
        query: RunbookQuery,
        anchors: list[tuple[str, str]],
        documents: list[Evidence],
        answer: RunbookAnswer,
    ) -> str:
        """Why there is no runbook, as it is (issue 13): none linked at all, or no version
        valid at as_of; for an alert or error code also what the fallback found."""
        names = ", ".join(a for a, _ in anchors) or repr(query.value)
        if not any(d.type != "Policy" for d in documents):
            reason = f"no runbook is linked to {names} (none APPLIES_TO it)"
        elif answer.rejected:
            reason = f"no version of the runbook of {names} is valid at as_of (see Rejected)"
        else:
            reason = f"no runbook version of {names} is valid at as_of for this subject"
        reason += "".join(f"; {_ended_words(ev)}" for ev in run.ended_services)
        if not run.asks_error_code(query) and not run.alert_rows:
            # No alert record (a runbook found by its name or heading): nothing fired.
            return reason
        search = self._fallbacks(run, anchors)
        verb = "fired on" if run.alert_names else "was emitted by"
        if search.paths:
            services = ", ".join(p.service for p in search.paths)
            return f"{reason}; it {verb} {services} at as_of, which has no runbook valid then"
        if search.inactive:
            last = search.inactive[0]
            span = f"{_when(last.valid_from)} -> {_when(last.valid_to)}"
            return (
                f"{reason}; it {verb} no service at as_of (it {verb} {last.service} "
                f"{span}; ask with --as-of inside that interval for that service's runbook)"
            )
        # Not yet recorded reads like hidden: say both, with the instant the KG is read at.
        return (
            f"{reason}; it {verb} no service that {run.subject_id} may read, as recorded by "
            f"known_at {iso_utc(run.session.known_at)}"
        )

    def _suggestions(self, run: _Lookup, query: RunbookQuery) -> list[str]:
        """Visible ids close to a target that resolved to nothing (recorded, one stage); for
        free text, close to the alert names it types (`VirtHandlerDwon firing`), as for
        `--alert` (none when it types none)."""
        target, typed = query.target, query.value
        if run.finding_types:
            # `--alert TorIPCaller`: the finding types it ends, not names spelled alike.
            return run.finding_types[:MAX_SUGGESTIONS]
        if target is LookupTarget.TEXT:
            names = alert_names(query.value)[:1]
            if not names:
                return []
            target, typed = LookupTarget.ALERT, names[0]
        severity = None
        if target is LookupTarget.ALERT and "@" in typed:
            # `--alert DiskFull@info`: the name is looked for alone; its rules' severities
            # are what is suggested (`_severities`).
            typed, _, severity = typed.removeprefix("alert:").partition("@")
        queries = suggestion_queries(typed, _ENTITY_LABEL[target])
        if target is LookupTarget.ALERT:
            # A runbook folder imported without its rules is named after the alerts.
            queries += suggestion_queries(typed, "Runbook")
        if not queries:
            return []
        steps = [q.step() for q in queries]
        rows = [ev for found in run.stage(steps) for ev in found]
        if severity is not None and (same := _severities(rows, typed, severity)):
            run.rule_labels = {
                ev.element_id.removeprefix("alert:"): rule_label(ev)
                for ev in rows
                if ev.type == "Alert"
            }
            run.suggested_rules = [ev for ev in rows if ev.type == "Alert"]
            return same
        candidates: dict[str, Candidate] = {}
        for ev in rows:
            # The rules of one alert (one per severity, `alert:X@1`, `alert:X@2`) are one
            # suggestion, by the name `--alert` takes, not three ids of one name.
            name = _alertname(ev) if ev.type == "Alert" else ev.element_id
            shown = name if ev.type == "Alert" and "@" in ev.element_id else ev.element_id
            candidates.setdefault(name.casefold(), Candidate(element_id=shown, name=ev.name))
        if target is LookupTarget.ALERT:
            # A section headed by an alert's name answers `--alert NAME` too (Mimir's
            # runbooks page): its heading, of a runbook the subject may read, is a suggestion.
            for ev in rows:
                titles = ev.props.get("section_titles") if ev.type == "Runbook" else None
                for title in titles if isinstance(titles, list) else []:
                    heading = str(title).strip()
                    if is_alert_name(heading):
                        candidates.setdefault(heading.casefold(), Candidate(element_id=heading))
        # Never the input itself (`--alert mongodb/restart`: "did you mean
        # runbook:mongodb/restart?" when that runbook was not found by it); an id in
        # another case is a correction (`svc:Payment-API`: svc:payment-api).
        itself = {typed, f"runbook:{typed}", f"alert:{typed}"}
        return [s for s in rank_suggestions(typed, list(candidates.values())) if s not in itself]

    # -- resolving the target -------------------------------------------------------------

    def _anchors(self, run: _Lookup, query: RunbookQuery) -> list[tuple[str, str]]:
        """(anchor id, runbooks_for anchor option) pairs the target resolves to."""
        if query.target is LookupTarget.TEXT:
            return (
                # A second pass by the words alone skips the alert names (`_from_words`).
                ([] if run.words_only else self._named_in_text(run, query.value))
                or self._code_headed(run, query.value)
                or self._text_anchors(run, query.value)
            )
        label = _ENTITY_LABEL[query.target]
        limit = _ALERT_LIMIT if query.target is LookupTarget.ALERT else 5
        rows = run.call(
            "entity_resolution", {"text": query.value}, "entity", options={"label": label},
            limit=limit,
        )  # fmt: skip
        joined = _joined_name(query.value)
        if not rows and query.target is LookupTarget.ALERT and joined is not None:
            # `virt-handler-down`: the alert's name in words, as free text finds it.
            rows = run.call(
                "entity_resolution", {"text": joined}, "entity", options={"label": label},
                limit=limit,
            )  # fmt: skip
        anchor = _ANCHOR_OF_LABEL[label]
        run.ended_services = _ended_services(rows, run.session.as_of)
        ids = sorted({ev.element_id for ev in rows})
        if query.target is LookupTarget.ALERT:
            run.alert_names = [query.value]
            run.focus = _focus_on_alerts(run.alert_names, rows)
            run.alert_rows = [ev for ev in rows if ev.type == "Alert"]
        return [(i, anchor) for i in ids]

    def _named_in_text(self, run: _Lookup, text: str) -> list[tuple[str, str]]:
        """Pasted text that names an alert (`[FIRING:1] KubePodCrashLooping ...`): that alert's
        anchors, as `--alert` would give; else a runbook named after it; else nothing."""
        names = alert_names(text)[:_TEXT_ALERT_NAMES]
        if names:
            steps = _resolution_steps(names, "Alert", limit=_ALERT_LIMIT)
            found = dict(zip(names, run.stage(steps), strict=True))
        elif _ONE_NAME.fullmatch(text):
            # An alert's name typed alone in one case (`etcdnoleader`, `KUBEPODCRASHLOOPING`),
            # not shaped like one: that alert, as `--alert` resolves it in any case. Before,
            # the words were searched and the card said a page that merely mentions the
            # alert tied with the alert's own ("a score only 357% above the next").
            (rows,) = run.stage(_resolution_steps([text], "Alert", limit=_ALERT_LIMIT))
            rows = [
                ev
                for ev in rows
                if ev.type == "Alert" and _alertname(ev).casefold() == text.casefold()
            ]
            if not rows:
                return []
            names = [_alertname(rows[0])]
            found = {names[0]: rows}
        else:
            return []
        alerts = [ev for rows in found.values() for ev in rows if ev.type == "Alert"]
        if alerts:
            run.alert_rows = alerts
            run.alert_names = [name for name, rows in found.items() if rows]
            run.alert_ids = {
                name: sorted({ev.element_id for ev in rows if ev.type == "Alert"})
                for name, rows in found.items()
                if rows
            }
            focus = _focus_on_alerts(run.alert_names, alerts)
            run.focus = focus.model_copy(update={"said": text})
            # In the order typed: the owner paged is the first-named alert's.
            typed = [a for name in run.alert_names for a in run.alert_ids[name]]
            return [(alert_id, "alert") for alert_id in dict.fromkeys(typed)]
        run.focus = alert_focus(names, []).model_copy(update={"said": text})
        return [(runbook, "runbook") for runbook in self._runbooks_named(run, names)]

    def _code_headed(self, run: _Lookup, text: str) -> list[tuple[str, str]]:
        """Free text holding an error id that heads a section of a runbook (a log line's
        `(err-mimir-sample-out-of-order)`, "what do I do about err-mimir-..."): the runbooks
        so headed, and that section asked about, as an alert name typed selects its own.
        The first id typed that heads one; one stage (a fulltext search per id)."""
        found = code_headed(run, text)
        if found is None:
            return []
        run.code_word, headed = found
        run.focus = SectionFocus(names=(run.code_word,), said=text)
        return [(runbook, "runbook") for runbook in headed]

    def _hyphenated_codes(self, run: _Lookup, text: str) -> tuple[str, str | None]:
        """The text with each error code typed without its hyphen ("PAY4097", "pay4097")
        written as the code (`PAY-4097`) when that code is one the subject may see (one
        stage: a lookup per code, as the subject), and what was read so; else the text
        as typed (a code the subject may not read is never named)."""
        typed = {
            m.group(0): f"{m.group(1).upper()}-{m.group(2)}"
            for m in UNHYPHENATED_CODE.finditer(text)
        }
        if not typed:
            return text, None
        steps = _resolution_steps(list(dict.fromkeys(typed.values())), "ErrorCode", limit=5)
        visible = {
            name.casefold()
            for rows in run.stage(steps)
            for ev in rows
            if ev.type == "ErrorCode"
            for name in (ev.element_id.removeprefix("err:"), ev.name or "")
        }
        read = {word: code for word, code in typed.items() if code.casefold() in visible}
        if not read:
            return text, None
        for word, code in read.items():
            text = re.sub(rf"(?<![\w.:@/-]){re.escape(word)}(?![\w-])", code, text)
        said = ", ".join(f"{word!r} as error code {code}" for word, code in read.items())
        return text, f"read {said} (an error code typed without its hyphen)"

    def _text_anchors(self, run: _Lookup, text: str) -> list[tuple[str, str]]:
        # Informative words only, re-ranked by name/title and coverage; abstains when none
        # of the first candidates fits (investigator/runbook_search.py, issue 15).
        text, respelled = self._hyphenated_codes(run, text)
        # The words of a time the text places choose the version, not the page (h39-walk-time),
        # unless they are a pasted alert's own ("... uploaded no block in the last 4 hours."):
        # its rule's text says them too, and the page fits by that alert.
        timeless = without_time_words(text, run.session.as_of)
        ranking, hits = search_runbooks(run, text)
        if timeless != text and (ranking.best is None or ranking.best.fits_by != "alert"):
            text = timeless
            ranking, hits = search_runbooks(run, text)
        # The place a symptom is said on is no word of what to do there: a page about the
        # symptom does not name the service ("ssh brute force on svc:payment-api": the
        # SSHBruteForce page). Asked again without it only when nothing fits every word, as
        # `investigate` asks (`RetrievalLoop._runbook_by_text`); said.
        placed_note = respelled
        places = [i for i in extract_mentions(text).ids if i.startswith("svc:")]
        placeless = without_words(text, places)
        if ranking.best is None and places and placeless != text and search_terms(placeless):
            again, again_hits = search_runbooks(run, placeless)
            if again.best is not None:
                again_note = (
                    f"no runbook fits every word of {text[:60]!r}: asked again without the "
                    f"place ({', '.join(places)}), as {placeless[:60]!r}"
                )
                placed_note = "; ".join(n for n in (respelled, again_note) if n)
                ranking, hits, text = again, again_hits, placeless
        # A word no runbook uses, typed in a hurry ("ssh bruteforce", "postgress restart"):
        # read as the words the runbooks found use and asked again, only when nothing fits.
        fixed_note = None
        read = run.runbook_reads.get(fulltext_query(ranking.terms, ranking.keys))
        wide = read is not None and read.tie_at_cut is not None
        if (
            ranking.best is None
            and not wide
            and (fixes := word_fixes(run, ranking, hits, alert_names(text)))
        ):
            fixed = with_fixes(text, fixes)
            again, again_hits = search_runbooks(run, fixed) if fixed != text else (ranking, hits)
            said = ", ".join(fix.said() for fix in fixes)
            if again.best is not None:
                typed = {w for fix in fixes for w in fix.typed.split()}
                unknown = ranking.unknown or ranking.terms
                unused = ", ".join(repr(t) for t in unknown if t in typed)
                fixed_note = (
                    f"no runbook uses {unused}: read {said}, words of the runbooks you can "
                    f"see, and asked again as {fixed[:60]!r}"
                )
                ranking, hits, text = again, again_hits, fixed
            else:
                either = f"{said}: no runbook fits either"
                ranking = ranking.model_copy(update={"read_again": either})
        run.text_matches = ranking.ranked[:SHOWN]
        read = run.runbook_reads.get(fulltext_query(ranking.terms, ranking.keys))
        chosen = ranking.best
        if chosen is None and (record := self._named_record_anchors(run, text, ranking)):
            return record
        if chosen is None:
            # Rows stopped above a wide tie: the runbooks of the tie were never read, so
            # "none mentions" or "the closest" would be false; the tie is said instead.
            tie = read.tie_at_cut if read is not None else None
            run.text_note = (
                ranking.note()
                if tie is None
                else wide_tie_said(tie, " ".join(ranking.terms), "runbooks")
            )
            return []
        by_id = {hit.element_id: hit for hit in hits}
        best = by_id[chosen.id]
        alike = ranking.alike(text)
        # Versions of one runbook (`@v1`, `@v2`) are one document: the version in force is
        # chosen by time, not by this tie, so they count once.
        documents = sorted({_document_id(r.id) for r in alike})
        if len(documents) >= 2:
            run.tied = documents
        namesakes = [d for d in documents if _file_name(d) == _file_name(chosen.id)]
        if len(namesakes) >= 2 and len(documents) < _ALIKE_NOTED:
            # Files of one name in two folders fit the same words: a coin toss by id, said.
            run.text_alike = (
                f"{len(namesakes)} runbooks named {_file_name(chosen.id)!r} fit "
                f"{text[:60]!r} alike ({', '.join(namesakes)}); the card shows the first: "
                "name the one you mean with --alert ID"
            )
        elif len(documents) == 2:
            # Two alike ("virt down": VirtHandlerDown, VirtControllerDown): the words do not
            # choose, and the id order that put one first is no answer: said, with the way on.
            others = [r for r in alike if r.id != chosen.id]
            run.text_alike = _pair_note(text, chosen, others, by_id)
        elif len(documents) >= _ALIKE_NOTED:
            run.text_alike = (
                f"{_alike_count(documents, alike, hits, read)} runbooks fit {text[:60]!r} "
                "alike (the first 5 under text "
                "matches); the card shows the best ranked: add words, or use --alert NAME"
            )
        engines = _engines_note(text, ranking, chosen, by_id)
        if engines is not None:
            run.text_alike = "; ".join(n for n in (run.text_alike, engines) if n)
        if chosen.fits_by == "words":
            # Shown, not a quote, a name or a pasted alert: the one page with every word.
            run.text_alike = (
                f"found by its words alone: {chosen.id} is the only runbook with every word of "
                "the query, but neither quotes it, is named by it, nor has an alert whose text "
                "matches it"
            )
        if read is not None and read.tie_at_cut is not None:
            # The rows above a wide tie had one that fits; the tie under it was not read.
            run.text_alike = "; ".join(
                n
                for n in (
                    run.text_alike,
                    f"{read.tie_at_cut}+ more runbooks you can see match these words equally "
                    "under those read: too many to rank, none of them was read",
                )
                if n
            )
        if ranking.unknown:
            # Words no runbook uses did not count ("many", a typo's "contrller"): said, with
            # the runbooks' words a slip reads as ("anonymus": did you mean 'anonymous'?).
            typed_names = {name.lower() for name in alert_names(text)}
            noted = [t for t in ranking.unknown[:_UNKNOWN_NOTED] if t not in typed_names]
            seen = seen_fixes(noted, hits)
            unused = ", ".join(
                f"{t!r} (did you mean {seen[t]!r}?)" if t in seen else repr(t)
                for t in ranking.unknown[:_UNKNOWN_NOTED]
            )
            run.text_alike = "; ".join(
                n
                for n in (
                    run.text_alike,
                    f"no runbook uses {unused}: the card fits the other words",
                )
                if n
            )
        if placed_note is not None:
            run.text_alike = "; ".join(n for n in (placed_note, run.text_alike) if n)
        if fixed_note is not None:
            run.text_alike = "; ".join(n for n in (fixed_note, run.text_alike) if n)
        if chosen.matched_alert:
            # The alert whose text the query matched: its section (runbook_url, else name),
            # chosen as `--alert` chooses it: as free text, the pasted words also name its
            # group's heading ("Thanos Compact ... halted": `## thanos-compact`), whose whole
            # table is not the card of the one alert.
            url = ranking.runbook_urls.get(chosen.matched_alert)
            named = alert_focus([alert_name_in(chosen.matched_alert)], [url] if url else [])
            # The words still choose among the cases of that section (`said`).
            run.focus = named.model_copy(update={"said": text})
        elif has_heading(best, text):
            # The text is a section's heading, spelled out: that section, as an alert's.
            run.heading = text
            run.focus = SectionFocus(names=(text,), text=text, said=text)
        else:
            run.focus = SectionFocus(text=text, said=text)
        # The chosen one leads (it may be ranked below a candidate that does not fit).
        run.text_hits = [best, *(by_id[r.id] for r in ranking.ranked if r.id != chosen.id)]
        links = run.call(
            "dependency_neighbourhood",
            {"start_id": best.element_id},
            "entity",
            options={"rel_type": "APPLIES_TO", "direction": "out", "hops": 1},
            limit=10,
        )
        neighbours = sorted({str(ev.context.get("neighbour")) for ev in links})
        if chosen.matched_alert:
            # The alert whose text the query matched (one that applies to the runbook, maybe
            # past the neighbours read) is what the answer used.
            neighbours = [chosen.matched_alert]
        elif len(neighbours) > 1:
            # A runbook of many alerts: the first by id is none the query is about (it named
            # an unrelated alert); the chain is read from the runbook itself.
            return []
        anchors: list[tuple[str, str]] = []
        for neighbour in neighbours:
            found = run.call(
                "entity_resolution",
                {"text": neighbour},
                "entity",
                options={"label": "any"},
                limit=1,
            )
            for ev in found:
                if ev.element_id == neighbour and ev.type in _ANCHOR_OF_LABEL:
                    anchors.append((neighbour, _ANCHOR_OF_LABEL[ev.type]))
                    if ev.type == "Alert":
                        run.alert_rows.append(ev)
            if anchors:
                break  # one anchor carries the whole chain
        return anchors

    def _named_record_anchors(
        self, run: _Lookup, text: str, ranking: TextRanking
    ) -> list[tuple[str, str]]:
        """Free text no runbook's words fit that names a record the subject may read: an
        error code it writes ("rollback PAY-4097 now"), else the one alert whose own text has
        its words ("runbook for the 5xx alert": the summary "payment-api 5xx ratio above
        5%"). That record's anchors, as `--error-code` / `--alert` give them (its own runbook,
        else its emitting / fired-on service's as a fallback), the card saying so first.
        Empty when it names none: text that names no record the subject may read (unrelated,
        hostile, another tenant's) still abstains. One stage for the codes."""
        if run.words_only:
            return []  # a second pass by the words alone (`_from_words`)
        why = ranking.note()
        codes = error_codes_in(text)[:_TEXT_ALERT_NAMES]
        if codes:
            steps = _resolution_steps(codes, "ErrorCode", limit=5)
            for code, rows in zip(codes, run.stage(steps), strict=True):
                ids = sorted(
                    ev.element_id
                    for ev in rows
                    if ev.type == "ErrorCode"
                    and code.casefold()
                    in {ev.element_id.removeprefix("err:").casefold(), (ev.name or "").casefold()}
                )
                if ids:
                    run.text_code = code
                    run.record_note = (
                        f"the words alone fit no runbook ({why}); the text names error code "
                        f"{code}: answered as --error-code {code} answers it"
                    )
                    return [(ids[0], "error_code")]
        if ranking.alert_matched is None:
            return []
        name = alert_name_in(ranking.alert_matched)
        anchors = self._named_in_text(run, name)
        if anchors:
            run.record_note = (
                f"the words alone fit no runbook ({why}); the text has the words of alert "
                f"{ranking.alert_matched}'s own text: answered as --alert {name} answers it"
            )
        return anchors

    # -- the owner ------------------------------------------------------------------------

    def _owner(
        self,
        run: _Lookup,
        query: RunbookQuery,
        anchors: list[tuple[str, str]],
        chosen: Evidence | None,
    ) -> OwnerAnswer | None:
        services = [a for a, kind in anchors if kind == "service"]
        if query.target is LookupTarget.SERVICE:
            return self._service_owner(run, services)
        if run.asks_error_code(query):
            # An error code has no owner of its own: page the owner at as_of of the service
            # that emitted it then, else of the service its runbook applies to (issue 12).
            emitters = [p.service for p in self._fallbacks(run, anchors).paths]
            owner = self._service_owner(run, emitters, note="emitted it at as_of")
            if owner is None and chosen is not None:
                owner = self._service_owner(
                    run,
                    self._applies_to_services(run, chosen),
                    note=f"{chosen.element_id} applies to it",
                )
            if owner is not None:
                return owner
        for anchor_id, kind in anchors:
            if kind == "alert":
                owner = self._owns_in(run, anchor_id, "alert")
                if owner:
                    return owner
        if chosen is not None:
            owner = self._owns_in(run, chosen.element_id, "runbook")
            if owner:
                return owner
            services = self._applies_to_services(run, chosen) or services
        return self._service_owner(run, services)

    def _applies_to_services(self, run: _Lookup, chosen: Evidence) -> list[str]:
        """The services a runbook APPLIES_TO, by id."""
        links = run.call(
            "dependency_neighbourhood",
            {"start_id": chosen.element_id},
            "entity",
            options={"rel_type": "APPLIES_TO", "direction": "out", "hops": 1},
            limit=20,
        )
        applied = sorted({str(ev.context.get("neighbour")) for ev in links})
        return [s for s in applied if s.startswith("svc:")]

    def _runbook_owner(self, run: _Lookup, answer: RunbookAnswer) -> OwnerAnswer | None:
        """The runbook's own OWNS edge at as_of, when `owner` was read from something else."""
        rb, owner = answer.runbook, answer.owner_detail
        assert rb is not None
        if owner is not None and owner.basis == f"runbook {rb.id}":
            return None
        return self._owns_in(run, rb.id, "runbook")

    def _owns_in(self, run: _Lookup, element_id: str, what: str) -> OwnerAnswer | None:
        rows = run.call(
            "dependency_neighbourhood",
            {"start_id": element_id},
            "entity",
            options={"rel_type": "OWNS", "direction": "in", "hops": 1},
            limit=20,
        )
        admitted, _ = run.admit(rows)
        if not admitted:
            return None
        best = max(
            admitted, key=lambda e: (e.valid_from or datetime.min.replace(tzinfo=UTC), e.element_id)
        )
        return OwnerAnswer(
            team=str(best.context.get("neighbour")),
            basis=f"{what} {element_id}",
            valid_from=best.valid_from,
            valid_to=best.valid_to,
            evidence_id=best.evidence_id,
        )

    def _service_owner(
        self, run: _Lookup, services: list[str], note: str | None = None
    ) -> OwnerAnswer | None:
        """The owner at as_of of the first of `services` that has one (`note`: why that
        service, shown in the basis)."""
        for service in services[:3]:
            rows = run.call("ownership_over_time", {"service_id": service}, "ownership")
            admitted, _ = run.admit(rows)
            if admitted:
                best = max(
                    admitted,
                    key=lambda e: (e.valid_from or datetime.min.replace(tzinfo=UTC), e.element_id),
                )
                return OwnerAnswer(
                    team=str(best.context.get("team")),
                    team_name=best.context.get("team_name"),
                    basis=f"service {service}" + (f" ({note})" if note else ""),
                    valid_from=best.valid_from,
                    valid_to=best.valid_to,
                    evidence_id=best.evidence_id,
                    corrected=self._owner_correction(run, service, admitted),
                )
        return None

    def _owner_correction(self, run: _Lookup, service: str, admitted: list[Evidence]) -> str | None:
        """The correction of who was recorded as the service's owner at as_of, worded as
        investigate words it (claims/ownership._correction_claim), read by the same rule
        and the same read (ownership_history: `services_to_check`, `ownership_records`):
        one reading of ownership for both (e32-qa finding D: before, the card named the
        corrected owner with no word that this was learned later). None when no current
        record was rewritten after as_of, or the read was cut by its row cap."""
        as_of = run.session.as_of
        if not services_to_check({service: admitted}, [as_of]):
            return None
        step = PlanStep(
            template_id=RECORDS_TEMPLATE, params={"service_id": service}, evidence_type="ownership"
        )
        plan = QueryPlan(intents=["runbook_lookup"], steps=[step])
        run.session.begin_round(plan)
        calls = run.session.call_round([step], plan=plan)
        if not calls or calls[0].result.truncated or calls[0].record.error is not None:
            return None
        found = corrections_at(calls[0].candidates, as_of)
        if not found:
            return None
        return found[0].sentence()


# The incidents a TEXT naming one is placed among (`incidents_at`'s row cap).
_INCIDENT_READ_LIMIT = 10


def _incidents_step(at: datetime) -> PlanStep:
    """The read of the incidents started by `at` a TEXT naming one is placed by."""
    return PlanStep.model_validate(
        {
            "step_id": "text-incident",
            "template_id": "incidents_at",
            "params": {"at": at.isoformat()},
            "evidence_type": "incident_report",
            "limit": _INCIDENT_READ_LIMIT,
        }
    )


def _incident_rows(result: ToolResult) -> list[Evidence]:
    return normalise_rows(
        result.rows, channel=result.template_id, tool_call_id="text-incident", template=result.ref
    )


def _incident_named(
    evidence: list[Evidence], at: datetime, words: str, text: str
) -> tuple[datetime, str, str | None] | None:
    """The incident a TEXT's incident words name, started by `at`: the one they name, else
    the one of the error code the text names ("were we supposed to follow for PAY-4097"),
    else the latest (as `investigate` reads "during the incident")."""
    codes = time_references(text).codes
    if codes and not any(c.casefold() in words.casefold() for c in codes):
        words = f"{words} the {codes[0]} incident"  # the code names the incident meant
    return incident_start_named(evidence, at, words)


def with_text_time(query: RunbookQuery, timed: TextTime) -> RunbookQuery:
    """`query` at the time `RunbookLookup.incident_time` placed it (as it was when that
    did not move it)."""
    if timed.incident_words is None and timed.note == query.time_note:
        return query
    return query.model_copy(
        update={
            "as_of": timed.at or query.as_of,
            "as_of_from": timed.as_of_from,
            "as_of_words": timed.words,
            "time_note": timed.note,
            "incident_words": timed.incident_words,
            "purpose": timed.purpose or query.purpose,
        }
    )


def incident_purpose_note(answer: RunbookAnswer, timed: TextTime) -> str | None:
    """Why a lookup placed at an incident's start runs under another purpose than
    `runbook_lookup` (None: it does not, or not for that)."""
    if timed.purpose is None or answer.purpose == LOOKUP_PURPOSES[0]:
        return None
    return (
        f"the text names an incident, read under {answer.purpose} (incident records are "
        f"for it); give --purpose {LOOKUP_PURPOSES[0]} for a lookup at now without it"
    )


def incident_time_note(answer: RunbookAnswer, timed: TextTime) -> str | None:
    """The card's Time line (and `--json`'s `time_note`): what became of the text's time
    words, and beside an incident's start the version in force now when another."""
    now = in_force_now_note(answer) if timed.incident_words else None
    if now is None or timed.note is None:
        return timed.note
    # Before "; --as-of sets another time", which ends the note.
    head, sep, tail = timed.note.rpartition("; ")
    return f"{head}; {now}{sep}{tail}" if sep else f"{timed.note}; {now}"


def in_force_now_note(answer: RunbookAnswer) -> str | None:
    """Beside a card placed at an incident's start: the version of its runbook in force at
    the lookup's known_at (now) when another than the one shown, read from the versions it
    rejected as not yet valid at as_of; None when none is."""
    rb = answer.runbook
    if rb is None:
        return None
    later = [
        (r.valid_from, r)
        for r in answer.rejected
        if r.reason is RejectionReason.REJECTED_TEMPORAL
        and r.element_id.partition("@")[0] == rb.id.partition("@")[0]
        and r.valid_from is not None
        and answer.as_of < r.valid_from <= answer.known_at
    ]
    if not later:
        return None
    since, now = max(later, key=lambda pair: pair[0])
    version = f"v{now.version}" if isinstance(now.version, int) else str(now.version or "")
    return f"in force now: {version} ({now.element_id}, since {iso_utc(since)})"


def _severities(rows: list[Evidence], name: str, severity: str) -> list[str]:
    """Of the alert rules among `rows` named `name` in any case, what `--alert` takes for
    each (`DiskFull@warning`): the one of `severity` in another case alone, else all of
    them by id (a severity the alert has no rule of: those it has)."""
    rules = sorted(
        {
            ev.element_id.removeprefix("alert:")
            for ev in rows
            if ev.type == "Alert"
            and "@" in ev.element_id
            and _alertname(ev).casefold() == name.casefold()
        }
    )
    same = [r for r in rules if r.partition("@")[2].casefold() == severity.casefold()]
    return same or rules[:MAX_SUGGESTIONS]


def _nothing_matches(what: str, query: RunbookQuery, run: _Lookup) -> str:
    """The first words of a note for a target that resolved to nothing, ending in "; ".

    Under `--known-at` the KG is read as it was known then: a record made later is not
    hidden from the subject, it was not recorded yet, and the note says so (about what the
    subject may read only, so it tells nothing of records it may not see)."""
    if not _known_at_asked(query):
        return f"no {what} matching {query.value!r} is visible to {run.subject_id}; "
    return (
        f"no {what} matching {query.value!r} that {run.subject_id} may read was recorded by "
        f"known_at {iso_utc(run.session.known_at)} (a record made later is not read then); "
    )


def _ended_services(rows: Sequence[Evidence], as_of: datetime) -> list[Evidence]:
    """The Service records among `rows` whose own record ended by `as_of`, by id."""
    return sorted(
        (
            ev
            for ev in rows
            if ev.type == "Service" and ev.valid_to is not None and ev.valid_to <= as_of
        ),
        key=lambda ev: ev.element_id,
    )


def _ended_words(ev: Evidence) -> str:
    """`svc:x itself ended at T (decommissioned), before as_of (its record: valid A to B)`."""
    how = " (decommissioned)" if ev.props.get("decommissioned") is True else ""
    start = iso_utc(ev.valid_from) if ev.valid_from else "no start recorded"
    end = iso_utc(ev.valid_to) if ev.valid_to else "open"
    return (
        f"{ev.element_id} itself ended at {end}{how}, before as_of (its record: valid {start} "
        f"to {end})"
    )


def _known_at_asked(query: RunbookQuery) -> bool:
    """Whether the asker named the KG's time (`--known-at`), not the lookup's own now."""
    return query.known_at is not None if query.known_at_asked is None else query.known_at_asked
