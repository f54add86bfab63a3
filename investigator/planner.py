"""The planner: question -> intents, mentions and QueryPlan steps (never Cypher text).

The deterministic planner detects intents with keyword rules (English and Chinese), pulls
mentions out of the question (KG ids, error codes, release names, alert names, hyphenated
service names), and turns "which evidence type is still missing" plus "which entities are
known" into allowlisted template steps. Entity linking itself happens through templates
(`entity_resolution`, `dependency_neighbourhood`), so the planner stays pure.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field

from cypher_templates.plan import PlanStep, QueryPlan, ResolvedEntity, TimeScope
from graph_schema.alert_names import alert_names, identifier_words, is_alert_name
from investigator.change_period import (
    EventPeriod,
    asks_changes,
    event_change_period,
    written_change_period,
)
from investigator.defaults import DEFAULT_MAX_ROUNDS
from investigator.evidence import iso_utc
from investigator.incident_reference import the_incident_step, the_incident_words
from investigator.lazy_pattern import LazyPattern
from investigator.ownership_history import OwnershipPeriod, asked_team, asks_team_firings
from investigator.release_clock import at_clock, release_clock
from investigator.release_names import (
    BARE_VERSION,
    release_named,
    release_version,
    with_release_word,
)
from investigator.rubric import UNRECORDED_ASKS, Intent, required_types, useful_types
from investigator.spelling import read_question
from investigator.stop_words import ENGLISH_STOP_WORDS, HURRIED_FILLER, KIND_NOUNS
from investigator.timeline import (
    EARLIEST,
    EPISODE,
    RELEASE_NAME,
    AnchorEvent,
    EventSide,
    ReferenceTime,
    ReleasePick,
    SeenEvent,
    TimeReferences,
    instant_of,
    reference_times,
    release_pick,
    response_metrics,
    shift,
    time_references,
    without_event_side_words,
)

# -- intents ----------------------------------------------------------------------------

_INTENT_RULES: tuple[tuple[Intent, LazyPattern], ...] = (
    (
        Intent.DEPLOYMENT_CORRELATION,
        LazyPattern(
            # Plurals too: "recent deploys", "any deployments/releases/rollouts".
            r"\b(releas(?:es?|ed)|deploy(s|ments?|ed)?|rollouts?|rolled out|ship(ped)?|"
            r"relat(ed|ion)|correlat\w*|caused? by|because of)\b|发布|部署|上线|相关",
            re.IGNORECASE,
        ),
    ),
    (
        Intent.OWNERSHIP_AT_TIME,
        LazyPattern(
            r"\b(own(s|ed|er|ers|ership)?|team|on-?call|responsible)\b|负责|归属|团队|谁拥有",
            re.IGNORECASE,
        ),
    ),
    (
        Intent.APPLICABLE_RUNBOOK,
        # Named ("runbook", "SOP"), or asked for in the words on-call types: "how do I fix
        # it", "what should we do", "recovery steps", 怎么处理.
        LazyPattern(
            r"\b(runbooks?|playbooks?|procedures?|sop|remediat\w*|mitigat\w*)\b|手册|预案|"
            r"\bhow (?:do|can|should|would|to)(?: (?:i|we|you))? (?:best )?"
            r"(?:fix|resolve|handle|recover|respond to|deal with|troubleshoot)\b|"
            r"\bwhat (?:should|do|can|must) (?:i|we) do\b|\bwhat to do\b|"
            r"\b(?:fix|recovery|repair|troubleshooting|response) steps\b|"
            r"\bsteps to (?:fix|resolve|recover|take)\b|"
            r"怎么处理|如何处理|怎么办|怎么修复|如何修复|处理步骤|处理方法",
            re.IGNORECASE,
        ),
    ),
    (
        Intent.ROOT_CAUSE,
        # Open questions about the cause ("what caused X", "why did X fail", "what led to X");
        # "was X caused by Y" names a cause to check: a correlation, not a root-cause search.
        LazyPattern(
            # "rca", "why r/y payments failing" and "y r ..." as typed in a hurry.
            r"\b(root[- ]cause|rca|mechanism|why (did|does|do|is|are|was|were|r|re|y)|"
            r"y (?:r|are|is|did|does)|"
            r"what(?:'s| is| was)? (?:\w+ ){0,2}caus(e|es|ed|ing)|causes? of|"
            r"what (triggered|led to|broke|went wrong|happened to cause)|led to|"
            r"reason (for|behind)|how come|how did\b[^?]{0,80}\bhappen)\b|"
            # "What did the postmortem say caused X?", "what did the RCA conclude?": the
            # postmortem's account of the cause is the answer.
            r"\b(?:say|says|said|conclude[sd]?|f(?:ind|inds|ound)|blame[sd]?)\b[^?.]{0,40}?"
            r"\bcaus(?:e|es|ed|ing)\b|"
            # "What did the postmortem say / conclude (about PAY-4097)?", not "what does the
            # incident report say about customers?" (what it says of something else).
            r"\bwhat\s+(?:did|does|do)\s+the\s+(?:[\w-]+\s+)?(?:post-?mortem|incident\s+report|"
            r"rca|retro(?:spective)?|incident\s+review)\s+(?:say|conclude|find|blame)"
            r"(?:\s+about\s+(?:the\s+)?(?:[A-Za-z]{2,10}-?\d{2,6}|(?:root\s+)?cause|it|this|that|"
            r"the\s+errors?|the\s+incident|the\s+outage))?\s*[?.!]*\s*$|"
            r"根因|为什么|原因|是什么导致|什么导致|怎么回事",
            re.IGNORECASE,
        ),
    ),
    (
        Intent.CHANGE_HISTORY,
        # "What changed before the errors?", "list every change before PAY-4097", 改了什么
        LazyPattern(
            r"\bwhat (?:else )?(?:has |had |was |were )?(?:been )?changed\b|\bwhich changes\b|"
            # "what else changed around the release?", "did anything else change at the
            # same time as ...?", "any config changes on payment-api?"
            r"\b(?:anything|something) else (?:has |had )?(?:been )?changed?\b|"
            # "did anything change then?", "has anything changed on payment-api?": the
            # changes of the moment ("then": the first error, else as_of) or the service.
            r"\b(?:did|has|have|had)\s+(?:anything|something)\s+(?:been\s+)?changed?\b|"
            r"\b(?:any|every|recent|which|what) (?:config(?:uration)?|settings?|rules?|"
            r"risk[- ]rules?|(?:feature[- ])?flags?|infra(?:structure)?|schema|code|"
            r"network|dns|database|db) changes?\b|"
            r"\b(?:list|show)(?: me)?(?: (?:every|all|any|the))? (?:recent )?changes?\b|"
            r"\b(?:any|every|recent) changes?\b|\bwhat changes\b|"
            r"改了什么|变更了什么|有哪些变更|什么变更",
            re.IGNORECASE,
        ),
    ),
    (
        Intent.ERROR_TIMELINE,
        LazyPattern(
            # "when did <a release> start" asks for the release (a release lookup)
            r"\b(first seen|first appear\w*|since when|when did\b"
            r"(?:(?!\b(?:release|deploy\w*|rollout)\b)[^?]){0,60}\b(start|begin|began|"
            r"appear))\b|首次出现|什么时候开始",
            re.IGNORECASE,
        ),
    ),
    (
        Intent.APPLICABLE_POLICY,
        LazyPattern(
            r"\b(polic(y|ies)|govern(s|ed|ing)?|compliance|regulat\w*)\b|政策|规定|合规",
            re.IGNORECASE,
        ),
    ),
    (
        Intent.DEPENDENCIES,
        LazyPattern(
            r"\b(depend(s|encies|ency|ent)?|upstream|downstream|calls)\b|依赖", re.IGNORECASE
        ),
    ),
)

# Which way a dependency question reads DEPENDS_ON. Into the service (its dependents, the
# blast radius): "what depends on X", "which services call X", "who uses X", "X's
# dependents/consumers/callers", "what would break if X goes down", 哪些服务依赖 X. Out of it:
# "what does X depend on", "X's dependencies", X 依赖哪些服务. "Upstream"/"downstream" name
# either side depending on the writer's convention (request flow or dependency), so both are
# read (`_UP_OR_DOWNSTREAM`), and every claim states its direction. "Who uses X" is left to
# the entity lookup: "who uses the runbook" is no dependency question.
_AUX = (
    r"(?:does|do|did|is|are|was|were|will|would|can|could|should|has|have|had|must|might|"
    r"may|shall|to)"
)
# A service's outage supposed ("goes down", "fails", not "fails over"; `_DOWN_NOW` the
# present tense alone, for "when": "when payment-db went down" asks about a past incident),
# and what it hits ("which services are affected", "what breaks", "who is impacted").
_DOWN_NOW = (
    r"\b(?:goes (?:down|offline)|fails(?!\s+over)|is (?:down|unavailable|unreachable|offline)|"
    r"dies|crashes|becomes unavailable|stops working|has an outage)\b"
)
_DOWN = (
    r"(?:" + _DOWN_NOW + r"|\b(?:went (?:down|offline)|fail(?:ed)?(?!\s+over)|"
    r"(?:was|were) (?:down|unavailable|unreachable|offline)|died|crashed|"
    r"became unavailable|stopped working|had an outage)\b)"
)
_GOING_DOWN = r"(?:going (?:down|offline)|failing(?!\s+over)|being (?:down|unavailable)|crashing)\b"
_HIT = (
    r"\b(?:what|which|who)\b(?:\s+[\w-]+){0,3}?\s+"
    r"(?:breaks|fails|goes down|stops working|happens|"
    r"(?:is|are|gets|get|would be|will be|could be|might be) (?:affected|impacted|hit|broken|down)|"
    r"(?:would|will|could|might) (?:break|fail|go down|stop working|happen))\b"
)
_DEPENDENTS_ASKED = LazyPattern(
    # A wh-word as the subject of depend/call/use: no auxiliary before the verb ("which
    # services does X call" asks the other way).
    rf"\b(?:what|which|who)\b(?:\s+(?!{_AUX}\b)[\w-]+){{0,3}}?\s+"
    r"(?:depends?|depended|rel(?:y|ies|ied)|calls?|called|consumes?|consumed)\b|"
    r"\b(?:used|called|consumed|depended (?:up)?on|relied (?:up)?on) by"
    r"(?:\s+(?:what|which|whom|who)\b|\s*[?？]|\s*$)|"
    r"\b(?:dependents|dependants|consumers|callers|reverse dependenc(?:y|ies))\b|"
    r"\bdependent (?:services?|apps?|applications?|systems?|components?)\b|"
    r"\bblast[- ]radius\b|"
    r"\b(?:what|which|who)\b(?:\s+[\w-]+){0,3}?\s+(?:would|will|could|might)\s+"
    r"(?:break|fail|go down|stop working|be (?:affected|impacted|hit))\b[^?]{0,80}?"
    r"\b(?:if|when|should)\b|"
    # An outage supposed, then what it hits, or the other way round, in the present tense:
    # "if payment-db goes down, which services are affected?", "what breaks if payment-db
    # fails?", "who is impacted when payment-db is down?", "impact of payment-db going down".
    rf"\b(?:if|should|in case)\b[^?]{{1,60}}?{_DOWN}[^?]{{0,40}}?{_HIT}|"
    rf"\bwhen\b[^?]{{1,60}}?{_DOWN_NOW}[^?]{{0,40}}?{_HIT}|"
    rf"{_HIT}[^?]{{0,40}}?\b(?:if|should|in case)\b[^?]{{1,60}}?{_DOWN}|"
    rf"{_HIT}[^?]{{0,40}}?\bwhen\b[^?]{{1,60}}?{_DOWN_NOW}|"
    rf"\b(?:impact|effect)s? of\s+(?:(?:a|an|the)\s+)?[\w:@.-]+\s+{_GOING_DOWN}|"
    rf"{_HIT}\s+by\s+[^?]{{1,60}}?\b{_GOING_DOWN}|"
    r"如果[^?？]{0,40}(?:挂了|挂掉|宕机|故障|不可用|出问题)[^?？]{0,20}(?:哪些|什么|谁)[^?？]{0,10}"
    r"(?:受影响|受到影响|会挂|会受)|"
    r"(?:挂了|挂掉|宕机|不可用)[^?？]{0,6}(?:会)?影响(?:到)?(?:哪些|什么|谁)|"
    r"(?:哪些|哪个|什么|谁)(?:服务|系统|应用)?(?:会)?(?:依赖|调用|使用)|被[^?？]{0,20}(?:依赖|调用)",
    re.IGNORECASE,
)
_DEPENDENCIES_ASKED = LazyPattern(
    r"\bdependenc(?:y|ies)\b(?<!reverse dependency)(?<!reverse dependencies)|"
    r"\b(?:does|do|did)\s+(?!(?:i|we|you|they)\b)[^?]{1,60}?\s+"
    r"(?:depend|rely|call)\b|"
    r"\b(?:depends?|depended|rel(?:y|ies|ied)) (?:up)?on (?:what|which|whom)\b|"
    r"依赖(?:了)?(?:哪些|什么|谁)",
    re.IGNORECASE,
)

# "What is upstream of X?": both directions, but only when a dependency listing is the
# question's one ask ("did an upstream deployment cause it?" is a correlation question).
# "What was deployed to X before release Y?", "which releases ...": a list of releases asked
# for, its "before <event>" a time, not a correlation to judge.
_RELEASES_LISTED = LazyPattern(
    r"\b(?:what|which)\b[^?]{0,40}?\b(?:was|were|got|has been|have been|had been)\s+"
    r"(?:deployed|released|shipped|rolled out)\b|"
    r"\b(?:what|which)\s+(?:releases|deploy(?:ment)?s|rollouts)\b",
    re.IGNORECASE,
)


def _lists_releases_around_an_event(question: str) -> bool:
    """ "What was deployed to X before release Y?", "... the day before the incident?": a
    list of releases over the period its event words name (change_period.EventPeriod).
    "Which release was deployed shortly before the errors?" stays a correlation to judge
    (no amount, no release named as the event)."""
    if not _RELEASES_LISTED.search(question):
        return False
    refs = time_references(question, spans=True)
    return refs.side is not None and (refs.event is AnchorEvent.RELEASE or refs.offset is not None)


# A release named by its version ("before release 2026.07.23.1"): placed by its record
# alone, as a release the words pick is, with no error needed.
_RELEASE_VERSION_WORDS = LazyPattern(r"\d{4}\.\d{2}\.\d{2}\.\d+")
_UP_OR_DOWNSTREAM = LazyPattern(r"\b(?:upstream|downstream)\b|上游|下游", re.IGNORECASE)

_RUNBOOK_RULE = next(p for i, p in _INTENT_RULES if i is Intent.APPLICABLE_RUNBOOK)


# What an incident lookup asks for beside an alert's name ("which incident did X trigger?",
# "X errors"): "alert" and "fired" name the alert itself.
_INCIDENT_ASKED = LazyPattern(
    r"\b(incident|outage|errors?|failures?)\b|故障|事故|报错", re.IGNORECASE
)


# "Who owns the alert that fired on checkout?", "which team owns the checkout alerts?", "the
# owner of the alert", "the alert('s) owner": the owner asked is an alert's, not a service's.
_ALERT_OWNER_ASKED = LazyPattern(
    r"\b(?:who|which\s+team|what\s+team)\s+(?:owns?|owned|is\s+responsible\s+for)\s+"
    r"(?:the\s+|an?\s+|this\s+|that\s+)?(?:[\w.:-]+\s+)?alerts?\b|"
    r"\bowners?\s+of\s+(?:the\s+|an?\s+|this\s+|that\s+)?(?:[\w.:-]+\s+)?alerts?\b|"
    r"\balerts?(?:'s|s'|\u2019s)?\s+owners?\b",
    re.IGNORECASE,
)


# "Which alerts fired on payment-api?", "did any alert fire on checkout?", "when did
# PaymentApiHighErrorRate fire?", "what is alerting on checkout?", "what paged us?", "list the
# alerts for checkout": the firings (FIRED_ON records) are the answer, not the incident.
_FIRED = r"(?:fired|fire|fires|firing|went\s+off|go(?:es)?\s+off|triggered|paged|raised)"
_ALERT_FIRING_ASKED = LazyPattern(
    rf"\b(?:what|which|any|did|has|have|were|was|are|is)\b[^?.]{{0,40}}?\b(?:alerts?|alarms?)"
    rf"\b[^?.]{{0,30}}?\b{_FIRED}\b|"
    rf"\bwhen\s+(?:did|does|do|was|were|has|had)\b[^?.]{{0,80}}?\b(?:start\s+)?{_FIRED}\b|"
    r"\b(?:what|which|anything|something)\b[^?.]{0,20}?\b(?:is|was|are|were)\s+alerting\b|"
    r"\b(?:is|was|are|were)\s+(?:anything|something|any\s+alerts?)\s+(?:alerting|firing)\b|"
    r"\bwhat\s+paged\b|"
    r"\b(?:list|show)(?:\s+me)?(?:\s+(?:the|all|every|any))?\s+(?:alerts?|alarms?)\b|"
    r"(?:哪些|什么)告警|告警.{0,6}(?:触发|响了)",
    re.IGNORECASE,
)


# "Is PaymentApiHighErrorRate (still) firing?", "is alert:X firing now?", "X still
# firing?", "is X active?": whether an alert it names fires at as_of, which its firings
# (their ends, or "still firing at as_of") answer; not "why is X firing?" (its runbook).
_NAMED_ALERT_FIRING_NOW = LazyPattern(
    r"^\s*(?:is|are|was|were)\b[^?.]{0,80}?\b(?:still\s+)?(?:firing|alerting|active|"
    r"going\s+off|paging)\b|"
    r"\bstill\s+(?:firing|alerting|active|going\s+off|paging)\b|"
    r"\b(?:firing|alerting|going\s+off|paging)\s+(?:right\s+)?(?:now|currently|at\s+the\s+moment)\b|"
    r"\b(?:has|did)\b[^?.]{0,80}?\b(?:stopped|cleared|resolved)\s+(?:firing|alerting)?",
    re.IGNORECASE,
)


def asks_named_alert_firing_now(question: str) -> bool:
    """Whether the question asks if an alert it names (by name or `alert:` id) fires at
    as_of ("is PaymentApiHighErrorRate still firing?", "is alert:X firing now?"): the
    alert's firings answer it (`alert_firing`), not its runbook."""
    if not _NAMED_ALERT_FIRING_NOW.search(question) or _ALERT_OWNER_ASKED.search(question):
        return False
    if re.match(r"\s*(?:why|y|how come)\b", question, re.IGNORECASE):
        return False  # "why is X firing?": its runbook says what makes it fire
    return bool(alert_names(question)) or any(
        i.startswith("alert:") for i in _KG_ID.findall(question)
    )


def asks_alert_firing(question: str) -> bool:
    """Whether the question asks which alerts fired (on a service, or when a named one did),
    or whether one it names fires at as_of (`asks_named_alert_firing_now`): not the owner of
    an alert ("who owns the alert that fired on checkout?") nor why one fires ("why is X
    firing?"), which other intents read."""
    if asks_named_alert_firing_now(question):
        return True
    if not _ALERT_FIRING_ASKED.search(question) or _ALERT_OWNER_ASKED.search(question):
        return False  # most questions: no time words read for this
    # "What happened when the alert fired?": the firing names a time, not what is asked.
    words = time_references(question).event_words
    asked = question.replace(words, " ") if words else question
    return bool(_ALERT_FIRING_ASKED.search(asked))


# "What fired during the incident?", "what fired yesterday?", "what's firing now?", "anything
# firing?": "fired" asked of what, with no alert word, asks which alerts fired, as "which
# alerts fired yesterday?" does (before: an incident lookup, or a bare entity lookup).
_WHAT_FIRED = LazyPattern(
    r"^\s*(?:so\s+|and\s+)?(?:what|which|anything|something)(?:'s|\u2019s|\s+(?:has|have|had|is|"
    r"was|are|were))?\s+(?:(?:been|still)\s+)*(?:fired|firing|went\s+off|going\s+off|gone\s+off)\b",
    re.IGNORECASE,
)


# "Alerts yesterday?", "any alerts in the last 2 hours?", "alerts on checkout?", "alerts
# firing on checkout" (h33b-firings): the word "alerts" with nothing but time words, a
# place and "firing" around it asks which alerts fired.
_BARE_ALERTS_LEAD = LazyPattern(
    r"^\s*(?:(?:any|all|the|new|recent|show|me|our)\s+)*alerts\b", re.IGNORECASE
)
_BARE_ALERTS = LazyPattern(
    r"^\s*(?:(?:any|all|the|new|recent|show|me|our)\s+)*alerts\s*"
    r"(?:(?:still\s+)?(?:firing|alerting|going\s+off|paging)\s*)?"
    r"(?:(?:on|for|in|at)\s+[\w.:-]+\s*)?(?:(?:right\s+)?now\s*|currently\s*)?[?.!]*\s*$",
    re.IGNORECASE,
)


def asks_what_fired(question: str) -> bool:
    """Whether the question asks what fired (or is firing) with no alert word ("what fired
    during the incident?", "anything firing now?"), or says "alerts" with only time words
    and a place ("alerts yesterday?"): an alert-firing question."""
    if _WHAT_FIRED.search(question):
        return True
    if not _BARE_ALERTS_LEAD.search(question):
        return False  # most questions: no time words read for this
    return bool(_BARE_ALERTS.match(_without_time_words(question, time_references(question))))


def _without_time_words(question: str, said: TimeReferences) -> str:
    """The question with the time words it names blanked ("on 2026-07-23", "yesterday",
    "during the incident"): what is left names the place, if any."""
    words = {
        *(n.words for n in said.named),
        *(r.words for r in said.relative),
        *said.unresolved,
        said.event_words or "",
    }
    for w in sorted((w for w in words if w), key=len, reverse=True):
        question = question.replace(w, " ")
    return question


# "... on checkout?", "... in production yesterday?": a place named by a word, left once the
# time words are blanked (a one-word service no mention catches, which the text search finds).
_A_PLACE_NAMED = LazyPattern(
    r"\b(?:on|for|at|in|affecting|from)\s+(?!(?:the|this|that|all|any|a|an)\b)"
    r"(?!(?:moment|present|once|now|time|all)\b)[A-Za-z][\w.-]*",
    re.IGNORECASE,
)


# "When did BeaconFlap fire?", "when did the alert fire?", "did PaymentFlap fire?": one alert
# is asked about (a CamelCase name the mentions may not know; "the alert" of the incident):
# its own firings, found through its name or the incident, are the answer, not every one.
_ONE_THING_FIRED = LazyPattern(
    r"^\s*when\b|\b(?-i:[A-Z][a-z0-9]+[A-Z]\w*)\b|\bthe\s+alert\b(?!s)",
    re.IGNORECASE,
)


def asks_firings_anywhere(question: str, service_id: str | None = None) -> bool:
    """Whether an alert-firing question names no service, alert, error code, release or
    id, nor a place ("... on checkout?"), and no --service was given: every firing the
    subject may read in the period its words name is the answer (`alert_firings_in_period`),
    not the firings of the services a text search found."""
    if service_id is not None or extract_mentions(question).texts():
        return False
    if asked_team(question) is not None:
        return False  # "for the payments team": its services' firings (`team_firing_steps`)
    if _ONE_THING_FIRED.search(question):
        return False  # "when did BeaconFlap fire?", "when did the alert fire?": one alert's
    return not _A_PLACE_NAMED.search(_without_time_words(question, time_references(question)))


# "What's firing?", "which alerts are firing?", "anything (still) firing?": firing at as_of.
_FIRING_NOW = LazyPattern(
    r"(?:\b(?:is|are)|'s|\u2019s)\s+(?:\w+\s+){0,2}?(?:still\s+)?(?:firing|alerting|going\s+off|"
    r"paging)\b|^\s*(?:anything|something|(?:any\s+)?alerts?)\s+(?:still\s+)?(?:firing|alerting)\b|"
    r"\bstill\s+(?:firing|alerting)\b|\bcurrently\b",
    re.IGNORECASE,
)


def firing_list_bounds(
    question: str,
    as_of: datetime,
    refs: Sequence[ReferenceTime] = (),
    late: Sequence[ReferenceTime] = (),
    admitted: Sequence[Any] = (),
) -> tuple[datetime, datetime] | None:
    """The [from, to] an alert-firing question naming no service reads (`asks_firings_
    anywhere`): the period its words name up to as_of ("yesterday", "on 2026-07-23", "in the
    last hour"); once its event is placed, the period its words name about it ("during the
    incident", "the day before the release"; "before the incident" alone: every firing by
    then); an instant it names, or as_of for "now" (those firing then); every firing by as_of
    when it names no time. None: its period starts after as_of, or its event is not placed."""
    said = time_references(question, as_of)
    # A written day or time ("on 2026-07-23", "since 10:30") and an event's period, placed.
    placed = event_change_period([Intent.RELEASE_LOOKUP], question, as_of, refs, late)
    if placed is not None:
        start = EARLIEST if placed.last_only else placed.start
        return None if start > as_of else (start, min(placed.end, as_of))
    if said.period is not None:
        start, end = said.period[0].at, min(said.period[1].at, as_of)
        return None if start > as_of else (start, end)
    if said.event is not None:
        at = [r for r in refs if r.kind == "event" and r.at <= as_of]
        if at and said.side is EventSide.BEFORE:
            return EARLIEST, min(r.at for r in at)
        if at and said.side is None and said.event is AnchorEvent.INCIDENT_START:
            # "During the incident": from its start to its resolution (as_of, if later).
            return min(r.at for r in at), min(_incident_end(at, admitted) or as_of, as_of)
        return None
    if said.explicit:
        # An instant written ("at 10:30"); one after as_of is not read (its Time line).
        instants = [t for t in said.explicit if t <= as_of]
        return (instants[-1], instants[-1]) if instants else None
    if said.now or _FIRING_NOW.search(question):
        return as_of, as_of
    return EARLIEST, as_of


def _incident_end(at: Sequence[ReferenceTime], admitted: Sequence[Any]) -> datetime | None:
    """The resolution (resolved_at, else valid_to) of the incident records `at` was read
    from, among the evidence admitted; None when none is known."""
    ids = {r.element_id for r in at if r.element_id}
    ends = [
        end
        for ev in admitted
        if ev.element_id in ids and ev.type == "Incident"
        and (end := instant_of(ev.props.get("resolved_at")) or ev.valid_to) is not None
    ]  # fmt: skip
    return max(ends, default=None)


# "What happened yesterday?", "anything happen overnight?", "what went on on 2026-07-23?",
# "timeline of yesterday", 昨天发生了什么: once its time words are blanked, nothing but the ask
# for events is left (no place, service, incident or code named).
_PERIOD_EVENTS_ASKED = LazyPattern(
    r"^\s*(?:(?:so|and|ok|okay|hey)[,\s]+)?(?:"
    r"what(?:'s|\u2019s|\s+has|\s+have)?\s+(?:(?:else|exactly|all|really)\s+)?"
    r"(?:happened|happen|went\s+on|gone\s+on|occurred|went\s+down|been\s+happening)|"
    r"(?:did|has)?\s*(?:anything|something)\s+(?:(?:else|interesting|notable|bad)\s+)?"
    r"(?:happen(?:ed)?|go\s+on|went\s+on|occur(?:red)?|break|broke)|"
    r"(?:show\s+me\s+|give\s+me\s+)?(?:the\s+|a\s+)?"
    r"(?:time[- ]?line|events?|sequence\s+of\s+events)(?:\s+(?:of|for|from))?"
    r")\s*[?？.!]*\s*$|"
    r"^\s*(?:都|有)?(?:发生了(?:什么|啥)(?:事(?:情)?)?|出了(?:什么|啥)事)\s*[?？。!！]*\s*$",
    re.IGNORECASE,
)
# Time words are recognized the same at any as_of; one fixed instant blanks "today" too.
_ANY_AS_OF = datetime(2000, 1, 1, tzinfo=EARLIEST.tzinfo)


_AN_EVENTS_CLAUSE = LazyPattern(
    r"\s*(?:when|while|whilst|as|after|before|since|until|once)\b", re.IGNORECASE
)


def asks_period_events(question: str) -> bool:
    """Whether the question asks what happened in a period its words name, naming nothing
    else ("what happened yesterday?", "what went on on 2026-07-23?"): the tenant's events
    of the period (incidents, alert firings, releases and changes) are the answer."""
    if not _PERIOD_EVENTS_WORD.search(question):
        return False  # most questions: their time words are not parsed for this
    said = time_references(question, _ANY_AS_OF)
    if said.event is not None or said.event_words:
        return False  # "what happened then?", "... during the incident": an event's time
    if not (said.named or said.relative or said.unresolved or said.explicit):
        return False  # "what happened?": no period named
    if any(_AN_EVENTS_CLAUSE.match(w) for w in said.unresolved):
        return False  # "what happened when the release was rolled back?": an event's time
    if extract_mentions(question).texts():
        return False
    return bool(_PERIOD_EVENTS_ASKED.match(_without_time_words(question, said)))


_PERIOD_EVENTS_WORD = LazyPattern(
    r"\b(?:happen\w*|went\s+on|gone\s+on|occur\w*|went\s+down|broke|break|time[- ]?lines?|"
    r"events?)\b|发生|出了",
    re.IGNORECASE,
)


# "What happened to payment-api yesterday?", "what happened on checkout last night?",
# "anything on payment-db yesterday?", "payment-api timeline for 2026-07-23": once its time
# words are blanked, the ask for events and one service word (`{svc}`) are all that is left.
_A_SERVICE_WORD = r"(?:the\s+)?([A-Za-z][\w.:-]*)(?:\s+service)?"
_SERVICE_PERIOD_EVENTS_ASKED = LazyPattern(
    r"^\s*(?:(?:so|and|ok|okay|hey)[,\s]+)?(?:"
    r"what(?:'s|\u2019s|\s+has|\s+have)?\s+(?:(?:else|exactly|all|really)\s+)?"
    r"(?:happened|happen|went\s+on|gone\s+on|occurred|went\s+down|been\s+happening)\s+"
    rf"(?:to|on|with|at|for|in)\s+{_A_SERVICE_WORD}|"
    r"(?:did|has|was\s+there)?\s*(?:anything|something)\s+(?:(?:else|interesting|notable|bad)\s+)?"
    r"(?:(?:happen(?:ed)?|go\s+on|went\s+on|occur(?:red)?)\s+)?"
    rf"(?:to|on|with|at|for|in)\s+{_A_SERVICE_WORD}|"
    rf"(?:show\s+me\s+|give\s+me\s+)?{_A_SERVICE_WORD}(?:'s)?\s+(?:time[- ]?line|events)|"
    r"(?:show\s+me\s+|give\s+me\s+)?(?:the\s+|a\s+)?(?:time[- ]?line|events|sequence\s+of\s+events)"
    rf"\s+(?:of|for|on)\s+{_A_SERVICE_WORD}"
    r")\s*[?？.!]*\s*$",
    re.IGNORECASE,
)
# Words in a service's place that name no service: "what happened to the incident / it /
# prod yesterday?" keep their readings.
_NOT_A_SERVICE_WORD = frozenset(
    [
        "the",
        "it",
        "this",
        "that",
        "there",
        "here",
        "us",
        "me",
        "we",
        "them",
        "everything",
        "prod",
        "production",
        "staging",
        "incident",
        "incidents",
        "outage",
        "outages",
        "release",
        "releases",
        "deploy",
        "deploys",
        "deployment",
        "deployments",
        "alert",
        "alerts",
        "error",
        "errors",
        "change",
        "changes",
    ]
)


def asked_service_period(question: str) -> str | None:
    """The one service word of a question asking what happened to it in a period its words
    name ("what happened to payment-api yesterday?" -> "payment-api", "anything on checkout
    last night?" -> "checkout"): its incidents, firings, releases and changes of the period
    are the answer. None for another question (one naming an error, release or alert, an
    event's time, or no period)."""
    if not _PERIOD_EVENTS_WORD.search(question) and not _ANYTHING_ON.search(question):
        return None  # most questions: their time words are not parsed for this
    said = time_references(question, _ANY_AS_OF)
    if said.event is not None or said.event_words:
        return None  # "what happened to payment-api during the incident?": an event's time
    if not (said.named or said.relative or said.unresolved or said.explicit):
        return None  # "what happened to payment-api?": no period named
    if any(_AN_EVENTS_CLAUSE.match(w) for w in said.unresolved):
        return None
    asked = _SERVICE_PERIOD_EVENTS_ASKED.match(_without_time_words(question, said))
    word = next((g for g in asked.groups() if g), "") if asked is not None else ""
    if not word or word.lower() in _NOT_A_SERVICE_WORD:
        return None
    named = extract_mentions(question)
    if named.error_codes or named.releases or named.alerts:
        return None
    if any(i != word for i in named.ids) or any(n != word for n in named.names):
        return None  # one service asked about, no other name
    return word


_ANYTHING_ON = LazyPattern(r"\b(?:anything|something)\b", re.IGNORECASE)


def asks_service_period_events(question: str) -> bool:
    """Whether the question asks what happened to one service in a period
    (`asked_service_period`)."""
    return asked_service_period(question) is not None


def period_events_asked(question: str) -> bool:
    """Whether the question asks for a period's events, of the tenant ("what happened
    yesterday?") or of one service ("what happened to payment-api yesterday?"): its
    incidents, firings, releases and changes are one timeline, in time order."""
    return asks_period_events(question) or asks_service_period_events(question)


def service_period_focus(focus: Sequence[str], question: str) -> list[str]:
    """The focus services of "what happened to payment-api yesterday?": the one its service
    word names (`svc:<word>`), not those its reads met on the way (a dependency, the
    incident's other services); `focus` for another question, or when none is that one."""
    word = asked_service_period(question)
    if word is None:
        return list(focus)
    return [s for s in focus if s.lower() in (word.lower(), f"svc:{word.lower()}")] or list(focus)


def _service_period_events_rule(question: str, found: set[Intent]) -> None:
    """ "What happened to payment-api yesterday?": the service's incidents of the period (an
    incident list kept to those affecting it), its alert firings and its releases and
    changes, as each question alone reads them for the service. Before, it was an entity
    lookup of the service that said the words 'happened yesterday' were not read."""
    if asks_service_period_events(question):
        found.clear()
        found.update({Intent.INCIDENT_LIST, Intent.ALERT_FIRING, Intent.CHANGE_HISTORY})


# "Show me the traces for PAY-4097", "any traces of the pool exhaustion?", "which spans
# failed on payment-api?": the KG's Trace records asked for. Not "trace" as a verb ("trace
# the errors back", "trace it to the release"), a stack trace (no such record), nor the id
# of a trace asked about by name ("trace:4bf9...", an entity lookup).
_TRACES_ASKED = LazyPattern(
    r"(?<!stack )(?<!stack-)\b(?:traces\b(?!\s*:)|trace\b(?!\s*:)"
    r"(?!\s+(?:back|it|them|this|that|the|these|those|to|down)\b)|spans?\b)",
    re.IGNORECASE,
)


def _period_events_rule(question: str, found: set[Intent]) -> None:
    """ "What happened yesterday?" naming nothing: the period's incidents (an incident list),
    its alert firings anywhere and its releases and changes, each read as its own question
    reads them. Before, it was an entity lookup of the words 'happened yesterday'."""
    if asks_period_events(question):
        found.clear()
        found.update({Intent.INCIDENT_LIST, Intent.ALERT_FIRING, Intent.CHANGE_HISTORY})


def period_events_steps(inp: PlanInput, intents: Sequence[Intent]) -> list[PlanStep]:
    """Round one of a "what happened <period>?" question naming nothing: the period's
    incidents, alert firings anywhere, and releases and changes, as the later rounds would
    read them (those skip a step already run); [] for another question."""
    if not asks_period_events(inp.question):
        return []
    incidents = period_events_incident_step(inp, (), ())
    return [
        *firings_anywhere_steps(intents, inp, (), ()),
        *([incidents] if incidents is not None else []),
        *period_change_steps(
            intents,
            time_references(inp.question, inp.as_of, spans=asks_changes(intents)),
            as_of=inp.as_of,
            focus=(),
            event_period=event_change_period(intents, inp.question, inp.as_of, ()),
        ),
    ]


def period_events_incident_step(
    inp: PlanInput,
    refs: Sequence[ReferenceTime],
    late: Sequence[ReferenceTime],
    admitted: Sequence[Any] = (),
) -> PlanStep | None:
    """The incidents of a "what happened <period>?" question: those open in the same period
    its firings are read over (`firing_list_bounds`: a written day "on 2026-07-23" too);
    None when the period starts after as_of."""
    bounds = firing_list_bounds(inp.question, inp.as_of, refs, late, admitted)
    if bounds is None:
        return None
    return _step(
        "incidents_in_period",
        {"from": _iso(bounds[0]), "to": _iso(bounds[1])},
        "incident_report",
    )


def asks_traces(question: str) -> bool:
    """Whether the question asks for trace records (`traces_linked`), not a stack trace or
    "trace" as a verb."""
    return bool(_TRACES_ASKED.search(question))


def types_wanted(intents: Sequence[Intent], question: str) -> list[str]:
    """The evidence types the gate weighs a run's records for: its intents' useful types,
    and `trace` when the question asks for traces (`asks_traces`): a Trace record read for
    it is never set aside as serving no intent, nor ever mechanism evidence."""
    useful = list(useful_types(intents))
    return [*useful, "trace"] if asks_traces(question) and "trace" not in useful else useful


def trace_steps(known: Known, inp: PlanInput) -> list[PlanStep]:
    """The reads of a question asking for traces: the traces that mention each error code
    known and those observed in each incident known, by as_of; those observed in each
    service known from the first error seen to as_of (the period it emitted it), or by
    as_of when no error is known. Records found later add their reads in later rounds."""
    if not asks_traces(inp.question):
        return []
    to = _iso(inp.as_of)
    steps = [
        _step("traces_linked", {"anchor_id": anchor, "to": to}, "trace")
        for anchor in [*known.error_codes, *known.incidents]
    ]
    since = known.first_seen if known.first_seen is not None and known.error_codes else None
    for svc in known.services:
        params: dict[str, Any] = {"anchor_id": svc, "to": to}
        if since is not None and since <= inp.as_of:
            params["from"] = _iso(since)
        steps.append(_step("traces_linked", params, "trace"))
    return steps


def firings_anywhere_steps(
    intents: Sequence[Intent | str],
    inp: PlanInput,
    refs: Sequence[ReferenceTime],
    late: Sequence[ReferenceTime],
    admitted: Sequence[Any] = (),
) -> list[PlanStep]:
    """The read of an alert-firing question naming no service ("what alerts fired
    yesterday?"): every firing the subject may read in its period (`firing_list_bounds`)."""
    if Intent.ALERT_FIRING.value not in {str(i) for i in intents}:
        return []
    if not asks_firings_anywhere(inp.question, inp.service_id):
        return []
    bounds = firing_list_bounds(inp.question, inp.as_of, refs, late, admitted)
    if bounds is None:
        return []
    return [
        _step(
            "alert_firings_in_period",
            {"from": _iso(bounds[0]), "to": _iso(bounds[1])},
            "alert_firing",
        )
    ]


def team_firing_ownership_period(
    question: str, as_of: datetime, intents: Sequence[Intent | str]
) -> OwnershipPeriod | None:
    """The period a team's OWNS records are read over for "which alerts fired for the
    payments team?" (`asks_team_firings`): the period its firings are asked in (as a list
    naming no service reads it, `firing_list_bounds`), every record by as_of when that is
    every firing or not placed yet ("during the incident"): a firing is the team's when the
    team owned its service at the firing's time, not at as_of."""
    if not asks_team_firings(question, intents):
        return None
    bounds = firing_list_bounds(question, as_of)
    start = None if bounds is None or bounds[0] == EARLIEST else bounds[0]
    end = as_of if bounds is None else bounds[1]
    asked = _FIRED_FOR_TEAM_WORDS.search(question)
    words = asked.group(0) if asked is not None else "the firings asked"
    return OwnershipPeriod(start=start, end=end, words=words)


# The words of a firing question that ask for a team ("fired for the payments team"), as an
# ownership claim says why it states the team's records of the period.
_FIRED_FOR_TEAM_WORDS = LazyPattern(
    r"\b(?:fired|fires|firing|fire|paged|went\s+off)\b[^?.!]*", re.IGNORECASE
)


def team_firing_steps(
    intents: Sequence[Intent | str], inp: PlanInput, known: Known, admitted: Sequence[Any]
) -> list[PlanStep]:
    """The firings of the services a team owned in the period asked ("which alerts fired
    for the payments team?"), once its OWNS records are admitted: one FIRED_ON read per
    service, at most MAX_FOCUS_SERVICES (the claims name the services not read)."""
    if not asks_team_firings(inp.question, intents) or not known.teams:
        return []
    return [
        _one_hop_step(svc, "FIRED_ON", "in", "alert_firing")
        for svc in team_services(admitted, known.teams)[:MAX_FOCUS_SERVICES]
    ]


def team_services(admitted: Sequence[Any], teams: Sequence[str]) -> list[str]:
    """The services the admitted OWNS records of `teams` (read from the team's side) name,
    sorted."""
    return sorted(
        {
            str(ev.context.get("owned"))
            for ev in admitted
            if ev.type == "OWNS"
            and ev.context.get("team") in teams
            and (
                ev.context.get("owned_kind") == "service"
                or str(ev.context.get("owned", "")).startswith("svc:")
            )
        }
    )


# "How long did the incident last?", "how long was the outage?", "what was the duration of the
# outage?", "how long has it been open?": the incident's start and resolution, and the time
# between them (so far, when it is not resolved by as_of), are the answer.
_INCIDENT_DURATION_ASKED = LazyPattern(
    r"\bhow\s+long\s+(?:did|was|were|has|had|is|have)\b[^?.]{0,60}?\b(?:last(?:ed)?|open|down|"
    r"ongoing|going\s+on|go\s+on|unresolved|incident|outage)\b|"
    r"\b(?:duration|length)\s+of\s+(?:the\s+|this\s+|that\s+)?(?:[\w:.-]+\s+)?"
    r"(?:incident|outage)s?\b|\b(?:incident|outage)\s+duration\b|"
    r"(?:故障|事故)(?:持续了?多久|持续多长时间)",
    re.IGNORECASE,
)


# "Show me the timeline of PAY-4097", "what happened during the payments incident?", "what
# happened and when?", "the sequence of events", "walk me through the outage", 时间线: the
# dated events of the incident's window, in order, are the answer (not the incident alone).
_TIMELINE_ASKED = LazyPattern(
    r"\btime[- ]?lines?\b|\bsequence\s+of\s+events\b|\bchronolog(?:y|ical)\b|"
    r"\bwhat\s+(?:happened|went\s+on)\s+(?:and\s+)?when\b|"
    r"\bwhat\s+(?:exactly\s+)?(?:happened|went\s+on)\s+(?:during|in|throughout|over)\s+"
    r"(?:the\s+|that\s+|this\s+)?[^?.]{0,40}?\b(?:incidents?|outages?|episode)\b|"
    r"\bwalk\s+me\s+through\s+(?:the\s+|that\s+|this\s+)?[^?.]{0,40}?"
    r"\b(?:incidents?|outages?)\b|"
    r"\bevents?\s+of\s+(?:the\s+|that\s+|this\s+)?[^?.]{0,40}?\b(?:incidents?|outages?)\b|"
    r"时间线|时间轴|事件顺序",
    re.IGNORECASE,
)


# "Are there still errors?", "did the errors stop?", "when did PAY-4097 stop?", "is PAY-4097
# still happening?", "what errors are we seeing?", "which services have errors?": the state of
# the errors at as_of (their first and last sighting), not the incident's record alone.
_ERROR_WORDS = r"(?:errors?|erroring|exceptions?|5xx|[A-Z][A-Z0-9]{1,9}-\d{2,6})"
_ERROR_STATE_ASKED = LazyPattern(
    rf"\bstill\b[^?.]{{0,40}}?(?:\b{_ERROR_WORDS}|\b(?:happening|occurring|failing|emitted|"
    r"going\s+on)\b)|"
    rf"\b{_ERROR_WORDS}\b[^?.]{{0,30}}?\bstill\b|"
    rf"\b{_ERROR_WORDS}\b[^?.]{{0,30}}?\b(?:stop(?:ped)?|end(?:ed)?|ceased?|subsided?|"
    r"go(?:ne)?\s+away|died\s+down)\b|"
    rf"\blast\s+seen\b|\b(?:what|which)\s+(?:\w+\s+)?errors?\s+(?:are|is|do|were)\b|"
    r"\bwhich\s+services?\s+(?:have|has|had|are|is|were|show)\s+(?:\w+\s+)?"
    r"(?:errors?|erroring|failing)\b|\bwhere\s+(?:are|were|is)\s+(?:the\s+)?errors?\b",
    re.IGNORECASE,
)


def asks_error_state(question: str) -> bool:
    """Whether the question asks whether errors still happen, when they stopped, or which are
    seen: the errors' records are read (first and last sighting by as_of)."""
    return bool(_ERROR_STATE_ASKED.search(question)) and not asks_alert_firing(question)


def asks_incident_duration(question: str) -> bool:
    """Whether the question asks how long an incident lasted (or has been open so far)."""
    return bool(_INCIDENT_DURATION_ASKED.search(question))


# "Is payment-api healthy (now)?", "is checkout ok?", "any ongoing incidents on payment-api?",
# "what's the status of payment-api?": what the KG records of the service at as_of (its
# incidents open, alerts firing, a release rolling out) is the answer; no health check is.
_OPEN_NOW = (
    r"\b(?:any|are\s+there(?:\s+any)?)\s+(?:ongoing|open|active|current|live|unresolved)\s+"
    r"(?:incidents?|outages?|alerts?)\b|"
    r"\bis\s+there\s+(?:an?\s+)?(?:ongoing|open|active|current|live)\s+(?:incident|outage)\b"
)
_SERVICE_STATUS_ASKED = LazyPattern(
    r"^\s*(?:is|are)\s+(?!there\b)[^?.]{1,60}?\b(?:healthy|unhealthy|ok|okay|fine|up|down|"
    r"working|degraded|broken|alright|all\s+right|in\s+good\s+shape)\b(?:\s+(?:now|right\s+now|"
    r"today|currently|at\s+the\s+moment))?\s*[?.!]*\s*$|"
    # Not the status of an incident, a release or a change (those records answer it).
    r"\b(?:status|health)\s+of\s+(?!(?:the\s+|this\s+|that\s+)?(?:[\w.:-]+\s+)?(?:incidents?|"
    r"outages?|releases?|deploy\w*|rollouts?|rollbacks?|alerts?|changes?|migrations?|tickets?)\b)|"
    r"\b[\w-]+(?:'s|s')\s+(?:current\s+)?(?:status|health)\b|"
    r"\bhow\s+is\s+[\w:.-]+\s+(?:doing|looking)\b|" + _OPEN_NOW,
    re.IGNORECASE,
)
_OPEN_INCIDENTS_ASKED = LazyPattern(_OPEN_NOW, re.IGNORECASE)
# "... on checkout?": a one-word service name no mention catches (the text search finds it).
_A_PLACE_AT_THE_END = LazyPattern(
    r"\b(?:on|for|at|with|in|affecting)\s+(?!(?:the|this|that|all|any)\b)"
    r"(?!(?:moment|present|once)\b)[\w.-]+\s*[?.!]*\s*$",
    re.IGNORECASE,
)


def asks_open_incidents_anywhere(question: str) -> bool:
    """Whether the question asks which incidents are open now naming no service ("any
    ongoing incidents?"): the tenant's incidents open at as_of (an incident list)."""
    if not _OPEN_INCIDENTS_ASKED.search(question) or _A_PLACE_AT_THE_END.search(question):
        return False
    named = extract_mentions(question)
    return not (named.ids or named.error_codes or named.releases or named.alerts or named.names)


def asks_service_status(question: str) -> bool:
    """Whether the question asks a service's state now (at as_of): healthy, ok, up, its
    status, its ongoing incidents; not its owner, runbook or history ("who owns X?")."""
    return bool(_SERVICE_STATUS_ASKED.search(question))


# "List all incidents in July 2026", "what incidents did we have in July?", "how many
# incidents last month?", "show me every incident": the tenant's incidents in a period (all
# by as_of when none is named), not one incident found by the words.
_INCIDENT_LIST_WORDS = LazyPattern(
    r"\b(?:list|show|count|give)(?:\s+me)?(?:\s+(?:all|every|the|our|any|of))*\s+"
    r"(?:(?:past|previous|recent)\s+)?incidents?\b|"
    r"\b(?:all|every)\s+(?:(?:the|our|past|previous|recent)\s+)*incidents?\b",
    re.IGNORECASE,
)
_INCIDENTS_IN_A_PERIOD = LazyPattern(
    r"\b(?:what|which|any|how\s+many)\s+(?:\w+\s+){0,2}?incidents\b|"
    r"^\s*(?:(?:our|the|all)\s+)?incidents\b",
    re.IGNORECASE,
)


def asks_incident_list(question: str) -> bool:
    """Whether the question asks for the incidents of a period, or all of them, naming no
    service, incident, error code, release or alert ("which incidents hit ledger?" reads
    the service's own)."""
    if not _INCIDENT_LIST_WORDS.search(question):
        if not _INCIDENTS_IN_A_PERIOD.search(question):
            return False  # most questions: their time words are not parsed for this
        # Without as_of a month ("in July 2026") is not placed yet: its words say a time.
        said = time_references(question)
        if said.period is None and not said.unresolved and not said.explicit:
            return False
    named = extract_mentions(question)
    return not (named.ids or named.error_codes or named.releases or named.alerts or named.names)


def incident_list_step(question: str, as_of: datetime) -> PlanStep | None:
    """The read of an incident list question: the incidents open in the period its words
    name (up to as_of), every one by as_of when it names none; None when the period starts
    after as_of (nothing in it can be recorded yet)."""
    period = time_references(question, as_of).period
    start, end = (period[0].at, period[1].at) if period else (EARLIEST, as_of)
    if period is None and (asks_open_incidents_anywhere(question) or asks_whats_going_on(question)):
        start = as_of  # "any ongoing incidents?", "whats going on": those open at as_of
    elif period is None and (written := written_list_period(question, as_of)) is not None:
        start, end = written.start, written.end  # "which incidents were open on 2026-07-22?"
    if start > as_of:
        return None
    return _step(
        "incidents_in_period",
        {"from": _iso(start), "to": _iso(min(end, as_of))},
        "incident_report",
    )


def written_list_period(question: str, as_of: datetime) -> EventPeriod | None:
    """The period an incident list's one written time names ("which incidents were open on
    2026-07-22?": that UTC day, up to as_of; "since 2026-07-20": from then to as_of), as a
    change question reads it (`written_change_period`); None for none, a period its words
    name themselves, "before T" (the last changes up to T: no incident list), or a time after
    as_of. Before (session 33), a written day read every incident by as_of."""
    written = written_change_period(
        time_references(question, as_of, spans=True), as_of, releases_only=False
    )
    return None if written is None or written.last_only else written


def asks_timeline(question: str) -> bool:
    """Whether the question asks for the timeline of an incident, error or period."""
    return bool(_TIMELINE_ASKED.search(question))


def asks_unnamed_alert_owner(question: str) -> bool:
    """Whether the question asks the owner of an alert it does not name (no alert name or
    alert id in it): the alerts that fired on its services are the ones meant."""
    if not _ALERT_OWNER_ASKED.search(question) or alert_names(question):
        return False
    return not any(i.startswith("alert:") for i in _KG_ID.findall(question))


def _asks_only_about_alerts(question: str) -> bool:
    """Whether the question names alerts and asks nothing an intent rule or an incident
    lookup reads (called when no intent rule matched)."""
    names = alert_names(question)
    if not names:
        return False
    rest = question
    for name in sorted(names, key=len, reverse=True):
        rest = rest.replace(name, " ")
    return not (_INCIDENT_ASKED.search(rest) or _ERROR_CODE.search(rest))


# "What else could have caused it?", "alternative explanations", "besides the release, what
# could explain it?", "can we rule out the risk rules?", 其他原因: the competing causes are the
# answer, as for "were there other possible causes of X?" (a root-cause question).
_CAUSE_WORDS = (
    r"(?:caus\w*|explain\w*|behind|responsible|to blame|led to|lead to|trigger\w*|"
    r"contribut\w*|account for|culprits?)"
)
_OTHER_CAUSES_ASKED = LazyPattern(
    rf"\b(?:anything|something|anyone|someone|what|who)\s+else\b[^?.]{{0,50}}?\b{_CAUSE_WORDS}|"
    r"\b(?:been|be|was|is|were)\s+(?:it\s+)?(?:something|anything)\s+else\b|"
    r"\b(?:other|another|alternative|alternate|competing|different|possible|potential)\s+"
    r"(?:\w+\s+)?(?:causes?|explanations?|culprits?|suspects?|reasons?|contributors?|"
    r"contributing factors?|factors?|hypothes[ie]s)\b|"
    r"\b(?:besides|apart from|other than|aside from|except(?: for)?|excluding|beyond)\b"
    rf"[^?]{{0,80}}?\b{_CAUSE_WORDS}|"
    r"\b(?:rule|ruled|rules|ruling)\s+out\b|"
    r"其他原因|其它原因|别的原因|其他可能|其它可能|还有什么可能|排除",
    re.IGNORECASE,
)

# Who was on call or paged: no rota or pager record exists in the KG (`UNRECORDED_ASKS`).
_ON_CALL_ASKED = LazyPattern(
    r"\bon[- ]?call\b|\brotas?\b|\bpager(?:duty)?\b|\bon duty\b|"
    r"\bwho\s+(?:was|were|got|gets|is|are|will be|should (?:have )?(?:been|be)|"
    r"would (?:have )?(?:been|be))\s+paged\b|"
    r"\bwho\s+(?:did|does|do|will|would|should)\b[^?]{0,40}?\bpage\b|值班|轮值",
    re.IGNORECASE,
)
# Whether a procedure was followed: no record of the responders' actions exists. A past
# tense with the responders or the procedure as its subject only ("which runbook should I
# follow?" asks for the runbook in force; "did PAY-4097 follow the release?" for a verdict).
_FOLLOWED_ASKED = LazyPattern(
    r"\b(?:did|have|had)\s+(?:the\s+)?(?:responders?|on-?call(?:\s+engineers?)?|engineers?|"
    r"team|we|they|you|people)\s+(?:follow|adhere to|stick to|skip|deviate from)\b(?!\s+up)|"
    r"\b(?:was|were|has|had)\s+(?:the\s+|that\s+|this\s+)?(?:runbook|procedure|playbook|"
    r"sop|process|steps?|instructions?|it)\b[^?]{0,40}?\b(?:followed|adhered to|skipped)\b|"
    r"是否按照|有没有按照|是否遵循|有没有遵循",
    re.IGNORECASE,
)

_CORRELATION_WORDS = LazyPattern(
    r"\b(relat(ed|ion)|correlat\w*|caus(e|ed|es|ing)|because|due to|led to|before|after|"
    r"responsible|break|broke|behind|affect(?:s|ed|ing)?|impact(?:s|ed|ing)?)\b|相关|导致|"
    # "Did the 10:02 release really affect the payment service?", 发布是否影响了: an effect
    # of the release to judge, as "cause" (before, a release lookup: its finish time only).
    r"引起|影响|之前|之后|"
    # "Is checkout affected by the release?" / "hit by": whether the release did it.
    r"\bhit\s+by\b|"
    # "Was it the release?", "is it the deploy or the risk rules?", "could it be the
    # release?": the release is named as the suspect, a correlation to judge.
    r"(?<!\bwhen )(?<!\bwhere )\b(?:was|is)\s+it\s+(?:the|a|an|that|this|our)\b|"
    r"\b(?:could|might|can)\s+it\s+(?:be|have been)\b",
    re.IGNORECASE,
)
# "Should we roll back?", "rollback payment-api?", "revert the release?": whether the release
# caused it (the verdict) and what the runbook in force says to do (its rollback step).
_ROLLBACK_ASKED = LazyPattern(
    r"\broll[- ]?back\b|\brevert(?:ing)?\b|\bundo the (?:release|deploy\w*|rollout)\b",
    re.IGNORECASE,
)


def asks_about_rollback(question: str) -> bool:
    """Whether the question asks about rolling back ("should we roll back", "did we roll
    back?") or whether the procedure was followed: the runbook's rollback step is quoted."""
    return bool(_ROLLBACK_ASKED.search(question) or _FOLLOWED_ASKED.search(question))


# Whether an action was taken ("did they fail over payment-db?", "did we roll back?",
# "was it reverted?"): no record of what the responders did exists (`UNRECORDED_ASKS`).
_ACTION_VERB = (
    r"(?:fail(?:ed)?[- ]?over|roll(?:ed)?[- ]?back|revert(?:ed)?|restart(?:ed)?|"
    r"reboot(?:ed)?|scal(?:e|ed) (?:up|out|down))"
)
_ACTION_TAKEN_ASKED = LazyPattern(
    r"\b(?:did|have|has|had)\s+(?:the\s+)?(?:they|we|you|someone|anyone|somebody|anybody|"
    r"responders?|on-?call(?:\s+engineers?)?|engineers?|team|ops|sre)\s+(?:already\s+)?"
    + _ACTION_VERB
    + r"\b|\b(?:was|were|has|had)\s+(?:it|they|the\s+[\w-]+|[\w-]+)\s+(?:been\s+)?"
    r"(?:failed over|rolled back|reverted|restarted|rebooted)\b|"
    # "what fixed it?", "what mitigated PAY-4097?", "how was it mitigated?": the action
    # that ended it, asked after the fact.
    r"\bwhat\s+(?:(?:finally|eventually|actually)\s+)?(?:fixed|mitigated|remediated|resolved)\b|"
    r"\bhow\s+(?:was|were|did|had|has)\s+(?:it|they|this|that|we|you|the\s+[\w-]+|[\w-]+)\s+"
    r"(?:get\s+|been\s+)?(?:fixed|mitigated|remediated|resolved|fix|mitigate|remediate|resolve)\b",
    re.IGNORECASE,
)
# An action named as a noun after the fact: "when was the rollback?", "was the rollback
# successful?", "the payment-api failover"; not the time words of another ask ("who owned it
# before the rollback?"). "The fix" and "the mitigation" only as what was done ("what was the
# fix for PAY-4097?", "did the fix work?"; "what is the fix?" asks what to do).
_NOT_A_TIME = r"(?<!before )(?<!after )(?<!since )(?<!until )(?<!during )(?<!when )(?<!by )"
_DETERMINER = r"(?:the|that|this|our|their)\s+(?:[\w.-]+\s+)?"
_ACTION_NOUN_ASKED = LazyPattern(
    rf"\b{_NOT_A_TIME}{_DETERMINER}(?:roll[- ]?backs?|reverts?|restarts?|fail[- ]?overs?)\b"
    r"(?!\s+(?:steps?|commands?|procedures?|plans?|sections?|instructions?))",
    re.IGNORECASE,
)
_FIX_NOUN = r"(?:fix(?:es)?|mitigations?|remediations?)"
_FIX_NOUN_ASKED = LazyPattern(
    rf"\b(?:was|were)\s+{_DETERMINER}{_FIX_NOUN}\b|"
    rf"\b(?:did|has|had)\s+{_DETERMINER}{_FIX_NOUN}\s+(?:work|help|succeed|hold)\b",
    re.IGNORECASE,
)
# "Should we do the rollback?", "can we restart ...": a decision to take, not an action taken.
_ACTION_TO_DECIDE = LazyPattern(
    r"\b(?:should|shall|could|can|must|would|do)\s+(?:we|i|they|you)\b", re.IGNORECASE
)


def asks_action_taken(question: str) -> bool:
    """Whether the question asks about a response action taken (roll back, revert, restart,
    fail over, scale, the fix, the mitigation), as a verb or a noun: an action question, whose
    answer is what was recorded of the action, not a cause (`response_action`)."""
    if _ACTION_TAKEN_ASKED.search(question):
        return True
    if _ACTION_TO_DECIDE.search(question):
        return False
    return bool(_ACTION_NOUN_ASKED.search(question) or _FIX_NOUN_ASKED.search(question))


def action_incident_words(question: str) -> str | None:
    """The incident a response action asked about after the fact was taken in ("was the
    rollback successful?": 'the incident of the rollback'): asked with no service, incident
    or error named, it is looked up as a bare "the incident" is (`incident_reference`): the
    one open at as_of, else the only one started by then; its services are the ones read.
    Before, nothing named a service: the runbook the action words ask for was a required
    gap and the incident's resolution was never read. None when no action is asked."""
    if "response_action" not in unrecorded_asks(question):
        return None
    noun = _ACTION_NOUN_ASKED.search(question)
    if noun is not None:
        return f"the incident of {' '.join(noun.group(0).split())}"
    return "the incident the action was taken in"


def metric_incident_words(question: str) -> str | None:
    """The incident a response time or a severity change is asked of with nothing named
    ("how long until the alert fired?", "when was severity raised to SEV1?"): looked up as
    a bare "the incident" is (`incident_reference`), the one open at as_of, else the only one
    started by then. None when neither is asked."""
    metrics = response_metrics(question)
    if metrics:
        return f"the incident of the time to {' and '.join(m.value for m in metrics)}"
    if asks_severity_change(question):
        return "the incident whose severity is asked"
    return None


# "Was the rollback successful?", "did the fix work?": the outcome of the action asked.
_ACTION_OUTCOME_ASKED = LazyPattern(
    r"\b(?:success\w*|work(?:ed)?|help(?:ed)?|effective|outcome|result)\b",
    re.IGNORECASE,
)


def asks_action_outcome(question: str) -> bool:
    """Whether an action question asks whether the action worked ("was the rollback
    successful?"): the times the KG records after it are stated, never a success."""
    return asks_action_taken(question) and bool(_ACTION_OUTCOME_ASKED.search(question))


# Not the head of a longer hyphenated name ("RR-2026-07-23a" is a change, not error RR-2026).
_ERROR_CODE = LazyPattern(r"\b[A-Z][A-Z0-9]{1,9}-\d{2,6}\b(?![-\w]|\.\w)")
# An error code typed without its hyphen ("PAY4097", "pay4097"): its code-shaped spelling
# ("PAY-4097") is linked as the subject may see it, and is never said unresolved (a guess:
# "sha256" or "amd64" is no code, and no hint may name a code the subject cannot read).
UNHYPHENATED_CODE = LazyPattern(r"(?<![\w.:@/-])([A-Za-z]{2,10})(\d{2,6})(?![\w-]|\.\w)")
_KG_ID = LazyPattern(r"\b[a-z][a-z0-9_]*:[A-Za-z0-9][A-Za-z0-9._@:/-]*[A-Za-z0-9]")
_RELEASE = RELEASE_NAME
# A release as people write it: "release 2026.07.23.1", "release_…", "the 2026.07.23.1 release".
_RELEASE_WRITTEN = LazyPattern(
    r"\brelease[\s_]+v?(\d{4}\.\d{2}\.\d{2}\.\d+)\b|\b(\d{4}\.\d{2}\.\d{2}\.\d+)\s+release\b",
    re.IGNORECASE,
)
_HYPHENATED = LazyPattern(r"\b[a-z][a-z0-9]+(?:-[a-z0-9]+)+\b")
# A run id as pasted, whole or a part (`run-` and four or more hex digits), in any case
# (`RUN-54298D42`, `Run-54298d42`): a name, which the answer says is a run id (name_hints);
# `_HYPHENATED` reads only the lower-case one.
_RUN_ID = LazyPattern(r"(?<![\w.:@/-])run-[0-9a-f]{4,}(?![\w-])", re.IGNORECASE)
# Plurals too: "which incidents hit ledger?", "list incidents on payment-db".
_INCIDENT_WORDS = LazyPattern(
    r"\b(incidents?|outages?|errors?|failures?|alert|fired)\b|故障|事故|报错", re.IGNORECASE
)

MAX_MENTIONS = 8
# Intents that ask for what held at a time (an owner, the runbook or policy in force).
_STATE_INTENTS = frozenset(
    {Intent.OWNERSHIP_AT_TIME, Intent.APPLICABLE_RUNBOOK, Intent.APPLICABLE_POLICY}
)
# Intents whose evidence already locates the anchor event of "then".
_ANCHOR_INTENTS = frozenset(
    {
        Intent.DEPLOYMENT_CORRELATION,
        Intent.ERROR_TIMELINE,
        Intent.INCIDENT_LOOKUP,
        Intent.CHANGE_HISTORY,
        Intent.TIMELINE,
    }
)
# Navigation steps resolve anchors (entity linking, the incidents of a service); their rows
# are evidence only when the question itself is an entity lookup.
NAV_PREFIX = "nav-"
# The errors a focus service emitted, read to place the first error when no record names it.
EMITTED_READ = NAV_PREFIX + "emitted"
# Competing-cause checks (other changes, other deployments of the service and its upstream
# services): a correlation verdict stronger than `uncertain` needs them to have run.
CHECK_PREFIX = "check-"
# A state lookup repeated for a time the question refers to (the anchor event): the gate
# admits records valid then, so the same template runs again under its own step key.
AT_PREFIX = "at-"
UPSTREAM_CHECK = CHECK_PREFIX + "upstream"
ALERT_FIRED_CHECK = CHECK_PREFIX + "alert-fired"
# A release the question names ("was release-2026.07.20.2 related?") is the subject of the
# verdict even when it lies outside the deployment lookback: it is resolved (its service and
# deployment time, a navigation step), then fetched as deployment-time evidence at that time.
NAMED_RELEASE_LOOKUP = CHECK_PREFIX + "named-release-lookup"
NAMED_RELEASE_CHECK = CHECK_PREFIX + "named-release"
# "Before/after/at the release" with no release in the window the error anchors (or none by
# as_of): the newest releases of the focus services by then are fetched to place it.
LATEST_RELEASE_CHECK = CHECK_PREFIX + "latest-release"
# "Before the first release": the earliest releases of the focus services by as_of.
FIRST_RELEASE_CHECK = CHECK_PREFIX + "first-release"
# The release taken as "then" (or "before the release"), read again once placed so that its
# record is evidence of the answer (the gate admits it as an anchor).
THEN_RELEASE_CHECK = CHECK_PREFIX + "then-release"
# The same for the alert firing taken as "when the alert fired".
THEN_ALERT_CHECK = CHECK_PREFIX + "then-alert"
# The changes of a period the question asks about ("what changed in the last hour"): read
# over that period itself, not the lookback before the first error.
PERIOD_CHANGES_CHECK = CHECK_PREFIX + "period-changes"
# The changes of the tenant before as_of, for a change question naming nothing ("did
# anything change then?" with no service, error or time: `unnamed_change_steps`).
UNNAMED_CHANGES_CHECK = CHECK_PREFIX + "unnamed-changes"
# The services a runbook chosen by the question's words applies to (their owners are its
# owner, as `investigator runbook` reads it): navigation, never services asked about.
RUNBOOK_SERVICES = NAV_PREFIX + "runbook-services"
# "The release" of a correlation question naming no service (`RetrievalLoop._take_release`):
# every release the subject may read in the `DEPLOY_LOOKBACK` before as_of, then the errors
# the services with one emitted, read to choose among them; navigation, never evidence.
RELEASE_CHOICE_READ = NAV_PREFIX + "release-choice"
RELEASE_ERRORS_READ = NAV_PREFIX + "release-errors"
# At most this many services' releases (the newest first) are weighed for "the release".
RELEASE_CHOICE_SERVICES = 5
# The incidents begun in the `DEPLOY_LOOKBACK` before as_of, with the services each affected,
# and what those services depend on (their error path): read to prefer a release of a
# service the incident affected, or of one on its error path, before its start (h34).
RELEASE_INCIDENTS_READ = NAV_PREFIX + "release-incidents"
RELEASE_PATH_READ = NAV_PREFIX + "release-path"
# The team a question asks about from its side, linked by name or id (label Team only).
TEAM_LINK = NAV_PREFIX + "team"
# At most this many teams the words name are asked about ("payments": several may match).
MAX_TEAMS = 3
MAX_FOCUS_SERVICES = 3
# Questions that weigh causes: a correlation verdict, an open root-cause question's
# candidates, a list of what changed before the errors. Each needs every change of the
# window checked.
CAUSE_INTENTS = frozenset(
    {Intent.DEPLOYMENT_CORRELATION.value, Intent.ROOT_CAUSE.value, Intent.CHANGE_HISTORY.value}
)


def is_navigation(step: PlanStep) -> bool:
    """Whether a step only finds anchors for later steps."""
    step_id = step.step_id or ""
    return step_id.startswith(NAV_PREFIX) or step_id in (
        UPSTREAM_CHECK,
        ALERT_FIRED_CHECK,
        NAMED_RELEASE_LOOKUP,
    )


def is_check(step: PlanStep) -> bool:
    """Whether a step is a competing-cause check (its rows never become new anchors)."""
    return (step.step_id or "").startswith(CHECK_PREFIX)


# How far back from the anchor (first error, else as_of) deployments and changes are looked for.
DEPLOY_LOOKBACK = timedelta(hours=24)
WIDE_LOOKBACK = timedelta(days=7)
CHANGE_LOOKBACK = timedelta(minutes=30)
# How far DEPENDS_ON is walked from the service a dependency question names, either way:
# the template's bound (`dependency_neighbourhood` hops 1..3, a plan's `max_hops` at most 3).
# Into the service, a caller's callers break with it too ("what depends on payment-db?":
# payment-api, checkout through it, api-gateway through both); out of it, what it depends on
# fails it too. The same depth both ways; the answer says how far it read
# (`claims.dependencies.dependency_depth_notes`).
DEPENDS_ON_HOPS = 3


class Mentions(BaseModel):
    """What the question names, in order of appearance, deduplicated."""

    ids: list[str] = Field(default_factory=list)
    error_codes: list[str] = Field(default_factory=list)
    releases: list[str] = Field(default_factory=list)
    alerts: list[str] = Field(default_factory=list)
    names: list[str] = Field(default_factory=list)
    # Error codes typed without their hyphen, as `PAY-4097`: linked after the mentions (not
    # one of `texts()`: a guess, never said unresolved nor taken as naming anything).
    unhyphenated_codes: list[str] = Field(default_factory=list)
    # Names typed with `_` or a case step where a name has `-` ("payment_api", "PaymentAPI"
    # -> payment-api): linked as the unhyphenated codes are, a guess never said unresolved.
    joined_names: list[str] = Field(default_factory=list)

    def texts(self) -> list[str]:
        """Every mention as text to resolve, most specific first, capped."""
        out = [*self.ids, *self.error_codes, *self.releases, *self.alerts, *self.names]
        return list(dict.fromkeys(out))[:MAX_MENTIONS]

    def release_names(self) -> list[str]:
        """The releases the question names: `deploy:` ids and release names, capped."""
        named = [i for i in self.ids if i.startswith("deploy:")] + self.releases
        return list(dict.fromkeys(named))[:MAX_FOCUS_SERVICES]


# Who approved or signed off a release or change: no approval record exists in the KG.
_APPROVAL_ASKED = LazyPattern(
    r"\b(?:who|whom|which\s+\w+)\b[^?]{0,40}?\b(?:approv\w*|signed[- ]off|sign[- ]off)\b|"
    r"\bapprov(?:al|als|er|ers)\b|\bsign[- ]offs?\b|谁批准|审批|"
    # "Was the release approved?", "has it been signed off?" (e32-qa O: was a release lookup,
    # `complete` with its finish time only).
    r"\b(?:was|were|is|are|has|have|had|been|get|got)\s+(?:[\w.-]+\s+){0,6}?"
    r"(?:approved|signed[- ]off|(?:peer[- ])?reviewed)"
    r"(?=\s*(?:[?.!,;]|$)|\s+(?:by|or|before|for|yet|at|in)\b)|"
    # An auditor's asks of the same record (h35): "did the payment-api release comply with
    # change management?", "did the 10:02 release follow the change policy?".
    r"\bcompl(?:y|ied|ies|iant|iance)\s+with\b[^?]{0,40}?\b(?:change|polic(?:y|ies))\b|"
    r"\b(?:follow(?:ed|s)?|breach(?:ed)?|break|broke|violat\w*)\s+(?:the\s+|our\s+)?"
    r"change[- ](?:management|policy|policies|process)\b|"
    r"批准了吗|是否批准|有没有批准",
    re.IGNORECASE,
)

# Who resolved, fixed or worked on an incident: the KG has no responder record.
_RESOLVER_ASKED = LazyPattern(
    r"\bwho\s+(?:(?:has|had|have)\s+)?(?:resolved|fixed|mitigated|closed|handled|responded\s+to|"
    r"worked\s+on)\b|\b(?:resolved|fixed|mitigated|closed|handled)\b[^?]{0,60}?\bby\s+whom\b|"
    r"\band\s+by\s+whom\b|谁(?:解决|修复|处理)",
    re.IGNORECASE,
)


def unrecorded_asks(question: str) -> list[str]:
    """What the question asks that the KG has no record type for (`UNRECORDED_ASKS` keys)."""
    asks = [
        ("on_call", _ON_CALL_ASKED),
        ("runbook_followed", _FOLLOWED_ASKED),
        ("response_action", _ACTION_TAKEN_ASKED),
        ("approval", _APPROVAL_ASKED),
        ("resolver", _RESOLVER_ASKED),
    ]
    found = [
        ask
        for ask, pattern in asks
        if (asks_action_taken(question) if ask == "response_action" else pattern.search(question))
    ]
    if "runbook_followed" in found and "response_action" in found:
        found.remove("response_action")  # one gap says it: no record of what was done
    return found


# What a release question asks of the release's own record besides its times (e32-qa O):
# what it changed ("what config changed in the release?", "the diff", "what was in it") and
# who or what deployed it ("who deployed the release?", "which pipeline ran it?"). Read only
# with the release intent (`claims.releases.release_record_answer`); "what was deployed
# before X" asks for a release, not its deployer.
_RELEASE_CONTENTS_ASKED = LazyPattern(
    r"\bconfig(?:s|uration|urations)?\b|\bdiffs?\b|\bchange[- ]?logs?\b|\bcommits?\b|"
    r"\bsettings?\b|\bcontents?\b|\bwhat\s+(?:was|is|went)\s+in\b|"
    r"\bwhat\s+(?:did|does)\s+(?:the\s+|that\s+|this\s+|it\s+)?(?:[\w.-]+\s+)?change\b|"
    r"\bwhat\s+(?:\w+\s+)?changed\s+(?:in|with)\b|\bchanges?\s+(?:in|of)\s+(?:the\s+|that\s+|"
    r"this\s+)?(?:[\w.-]+\s+)?(?:release|deploy\w*|rollout)\b|配置|改了什么|变更了什么|改动",
    re.IGNORECASE,
)
_RELEASE_DEPLOYER_ASKED = LazyPattern(
    r"\bwho\s+(?:(?:has|had|have|did|actually|first|really)\s+)?(?:deployed|released|shipped|"
    r"rolled\s+(?:it\s+)?out|ran|triggered|pushed|kicked\s+off|started)\b|"
    r"\bwho\s+(?:did|does|ran|runs|made)\s+(?:the\s+|that\s+|this\s+)?(?:deploy\w*|release|"
    r"rollout)\b|\b(?:deployed|released|shipped|rolled\s+out|triggered|run|started)\s+by\s+whom\b|"
    r"\bwhich\s+(?:pipelines?|jobs?|users?|person|engineers?|accounts?)\b|\bdeployers?\b|"
    r"谁(?:发布|部署|上线)",
    re.IGNORECASE,
)


def release_record_asks(question: str) -> list[str]:
    """What a release question asks of the release's own record (`contents`: what it
    changed; `deployer`: who or what deployed it), in that order; its approval is an
    unrecorded ask (`unrecorded_asks`)."""
    question = with_release_word(question)
    return [
        ask
        for ask, pattern in (
            ("contents", _RELEASE_CONTENTS_ASKED),
            ("deployer", _RELEASE_DEPLOYER_ASKED),
        )
        if pattern.search(question)
    ]


# Words that ask which runbook to take ("Which runbook applies to ...?", "... should I
# follow"), besides those the runbook intent matches: not what the runbook is about.
_ASKS_WHICH_RUNBOOK = LazyPattern(r"\b(?:appl(?:y|ies|ied|icable)|follow|use)\b", re.IGNORECASE)


# What a runbook is said to do for its subject, right after the word ("Which runbook covers
# the zork8 queue?", "the playbook that deals with ..."): words of the asking, not of what it
# is about. Only there: "too many open file handles" is a symptom.
_RUNBOOK_COVERS = LazyPattern(
    r"\b(runbooks?|playbooks?|procedures?|sops?)\s+(?:(?:that|which)\s+)?"
    r"(?:covers?|covered|covering|handles?|deals?\s+with|(?:is|are)\s+(?:for|about))\b",
    re.IGNORECASE,
)


# Words asking whose a runbook is ("who owns the etcd runbook?", "owner of the payment recovery
# runbook"): of the asking, not of what the runbook is about ("owns" matched no runbook and
# tipped "etcd" ties to one page).
_ASKS_WHOSE = LazyPattern(
    r"\b(?:who|which\s+team)\s+(?:owns|owned|maintains|maintained)\b|"
    r"\bwho(?:'s|\s+is|\s+was)\s+the\s+owner\s+of\b|\bowner\s+of\b|\bwhose\b",
    re.IGNORECASE,
)


def runbook_search_text(question: str) -> str:
    """The question without the words that ask for a runbook ("Which runbook applies to",
    "which runbook covers", "how do I fix it", "what do I do") or whose it is ("who owns"):
    what the runbook search reads, as the card reads the text it is given."""
    question = _ASKS_WHOSE.sub(" ", question)
    question = _RUNBOOK_COVERS.sub(r"\1 ", question)
    text = dict(_INTENT_RULES)[Intent.APPLICABLE_RUNBOOK].sub(" ", question)
    return " ".join(_ASKS_WHICH_RUNBOOK.sub(" ", text).split())


# A bare symptom is short: a phrase ("pgbouncer saturation", "etcd disk latency high"), not a
# sentence that asks something no rule reads.
SYMPTOM_MAX_WORDS = 8
# Words that ask about something other than what to do: a document ("DRAFT postmortem: risk
# rules broke payments"), a question ("what happened ...", "did ..."), a person.
_NOT_A_SYMPTOM = LazyPattern(
    r"[?？]|\b(?:postmortems?|post-mortems?|reports?|emails?|e-mails?|tickets?|documents?|"
    r"docs?|notes?|who|whom|whose|what|which|when|where|why|how|did|does|do|was|were|"
    r"has|have|had)\b",
    re.IGNORECASE,
)


# A question mark at the end of a phrase ("hikaricp pool exhausted?").
_TRAILING_QUESTION_MARK = LazyPattern(r"\s*[?？]+\s*$")
# Words, and the punctuation a typed phrase has between them: no quotes, brackets, `$`, `:`.
_PLAIN_PHRASE = LazyPattern(r"[\w\s.,'’/-]+")
# A plea or a hedge first ("please help, anyone?", "seems down again?", "something else?").
_PLEA_OR_HEDGE = frozenset({"please", *HURRIED_FILLER})


def symptom_asked(question: str) -> str | None:
    """The phrase of a symptom asked with a question mark at its end ("hikaricp pool
    exhausted?", "db connections maxed out?": is it that, what now), without the mark; None
    for any other question. It is a subject and its state: two words or more that are no stop
    word or filler (one word asked is a name, "checkout?"), plain words only, opening with no
    question word ("any traces of the pool exhaustion?"), plea or hedge ("please help,
    anyone?", "seems down again?") nor word asking for a record ("say likely?")."""
    mark = _TRAILING_QUESTION_MARK.search(question)
    if mark is None:
        return None
    phrase = question[: mark.start()]
    if not _PLAIN_PHRASE.fullmatch(phrase) or _QUESTION_SHAPED.search(phrase):
        return None
    words = [w.lower() for w in re.findall(r"\w+", phrase)]
    if not words or words[0] in _PLEA_OR_HEDGE or words[0] in _LOOKUP_WORDS:
        return None
    said = [w for w in words if w not in ENGLISH_STOP_WORDS and w not in HURRIED_FILLER]
    return phrase if len(said) >= 2 else None


def reads_as_symptom(question: str) -> bool:
    """Whether the question is a bare symptom, as a hurried on-call engineer types it
    ("pgbouncer saturation", "etcd disk latency high"), or one asked with a question mark
    (`symptom_asked`): a short phrase that asks nothing an intent rule reads, names nothing
    (no id, error code, release, alert or hyphenated name), no incident, error or time, and
    no document or question word. What to do about it (the runbook) is what it asks for, once
    nothing the graph links from its words answers it (`RetrievalLoop._runbook_by_text`)."""
    question = symptom_asked(question) or question
    if detect_intents(question) != [Intent.ENTITY_LOOKUP] or extract_mentions(question).texts():
        return False
    if _INCIDENT_WORDS.search(question) or _NOT_A_SYMPTOM.search(question):
        return False
    if asked_in_another_language(question) or opens_yes_no_question(question):
        return False
    references = time_references(question)
    if references.anchored or references.unresolved or references.now:
        return False
    words = [w for w in re.findall(r"\w+", question) if w.lower() not in ENGLISH_STOP_WORDS]
    return 0 < len(words) <= SYMPTOM_MAX_WORDS


# A question opening with a verb and what it asks of ("is it the db", "can we fail over",
# "should i page someone"), its question mark typed or not. Not "can't connect to db" (a
# symptom said), "will not start", nor "may" (a month).
_OPENS_YES_NO = LazyPattern(
    r"^\s*(?:is|are|am|isn't|aren't|isn’t|aren’t|can|could|should|will|would|shall|might|must)"
    r"\s+(?!not\b)\w",
    re.IGNORECASE,
)


def opens_yes_no_question(question: str) -> bool:
    """Whether the question opens as a yes-or-no question ("is it the db"): a question with
    or without its question mark, so never a bare symptom (`reads_as_symptom`): before, "is
    it the db" was answered with the runbook its words found, `complete`, and "is it the db?"
    said its words were not read."""
    return bool(_OPENS_YES_NO.match(question))


# A question as opposed to a name or a title: a question mark or a question word first.
_QUESTION_SHAPED = LazyPattern(
    r"[?？]|^\s*(?:who|whom|whose|what|which|when|where|why|how|y|did|does|do|was|were|is|"
    r"are|can|could|should|shall|will|would|has|have|had|any)\b",
    re.IGNORECASE,
)
# Words that ask for the thing named or a document about it ("tell me about X", "what do the
# postmortems say?"): an entity lookup answers them.
# An id as typed, one character after the colon too ("What is svc:b?"): a name, not words.
_ANY_KG_ID = LazyPattern(r"\b[a-z][a-z0-9_]*:[A-Za-z0-9](?:[A-Za-z0-9._@:/-]*[A-Za-z0-9])?")
_LOOKUP_WORDS = frozenset(
    {
        *("tell", "show", "describe", "details", "detail", "info", "information", "about"),
        *("lookup", "look", "find", "get", "give", "say", "says", "said", "exist", "exists"),
        *("postmortem", "postmortems", "report", "reports", "email", "emails", "ticket"),
        *("tickets", "doc", "docs", "document", "documents", "note", "notes", "known"),
        *("write", "wrote", "written"),
    }
)


# One word and a question mark ("checkout?"): a name asked about.
_ONE_WORD_ASKED = LazyPattern(r"\s*[A-Za-z][\w.-]*\s*[?？]+\s*")


def unread_words(question: str, intents: Sequence[Intent]) -> str | None:
    """The words of a question that no rule reads, when it was read as nothing but an
    entity lookup ("should we do it for payment-api?" -> "should we do it", minus names and
    stop words): what the answer says it could not tell. None for a bare name, a title, a
    document or entity question, or any question an intent rule read."""
    if list(intents) != [Intent.ENTITY_LOOKUP] or not (
        _QUESTION_SHAPED.search(question) or asked_in_another_language(question)
    ):
        return None
    if _ONE_WORD_ASKED.fullmatch(question):
        return None  # "checkout?": its name asked about, as "payment-api?" is
    if reads_as_symptom(question):
        return None  # "hikaricp pool exhausted?": its words are searched as a symptom
    rest = question
    for text in sorted(extract_mentions(question).texts(), key=len, reverse=True):
        rest = rest.replace(text, " ")
    rest = _ANY_KG_ID.sub(" ", _HYPHENATED.sub(" ", rest))
    # A word with digits is one word ("5xx", not "xx"); a bare number is no word.
    words = re.findall(r"\w*[^\W\d_]\w*", rest)
    unread = [
        w for w in words if w.lower() not in ENGLISH_STOP_WORDS and w.lower() not in _LOOKUP_WORDS
    ]
    if not unread or any(w.lower() in _LOOKUP_WORDS for w in words):
        return None
    return " ".join(unread)


# Records a lookup of an incident, a release or an error's times does not read ("show me the
# traces for PAY-4097": e32-qa O, was `complete` with the incident's own record): said as
# words it does not read, never answered `complete`. A cause question reads traces as
# mechanism evidence, a timeline or change list its window; an entity lookup has its own
# check (`unread_words`).
_UNREAD_RECORD_WORDS = LazyPattern(
    r"\b(?:stack[- ]?traces?|traces?|spans?|logs?|log lines?|metrics?|dashboards?)\b",
    re.IGNORECASE,
)
_READS_MORE_RECORDS = frozenset(
    {
        Intent.ENTITY_LOOKUP,
        Intent.ROOT_CAUSE,
        Intent.DEPLOYMENT_CORRELATION,
        Intent.CHANGE_HISTORY,
        Intent.TIMELINE,
    }
)


def unread_record_words(question: str, intents: Sequence[Intent]) -> str | None:
    """The words of a question asking for records its intents do not read (traces, spans,
    logs, metrics, dashboards), lower-cased, in order, once each; None when it asks none or
    an intent that reads more records (a cause, a timeline, an entity lookup) is asked."""
    if not intents or set(intents) & _READS_MORE_RECORDS:
        return None
    words = [" ".join(m.group(0).lower().split()) for m in _UNREAD_RECORD_WORDS.finditer(question)]
    return " ".join(dict.fromkeys(words)) or None


# "Incident" or "outage" asks about the incident itself, not a symptom seen somewhere.
_ASKS_AN_INCIDENT = LazyPattern(r"\b(?:incidents?|outages?)\b|故障|事故", re.IGNORECASE)


def asks_an_incident(question: str) -> bool:
    """Whether the question asks about an incident or outage itself ("which incident
    affected ledger?"), not a symptom seen somewhere."""
    return bool(_ASKS_AN_INCIDENT.search(question))


# "How do I fail over payment-db?", "how can we promote the payment-db standby?": what to do
# at a place the question names, whatever the verb (the verbs the runbook rule reads, "fix",
# "resolve", ..., are read with it). The verb's words stay in the runbook search's text.
_HOW_DO_I = LazyPattern(
    r"^\s*how (?:do|can|should|would|shall|to)(?: (?:i|we|you))? (?:best )?[a-z]", re.IGNORECASE
)


# A question opening with a verb asks yes or no ("is payment-api ok?", "can checkout take
# orders?"): with its question mark dropped it is still no symptom said with its place.
# A question asked in another language than English, by its first word ("Wem gehörte
# payment-api?", "¿Quién ...?", "À qui ...?", "Chi ...?"): the planner reads English (and
# Chinese time and ownership words), so its words are said not read (`unread_words`), never
# taken for a symptom at the place it names (e29-qa m12: "Wem gehörte payment-api?" was
# answered with the runbook of payment-api). Words that are English too ("come", "was")
# are left out.
_OTHER_LANGUAGE_QUESTION = LazyPattern(
    r"\s*(?:[¿¡]|(?:wer|wem|wen|wessen|wann|warum|wieso|weshalb|welche[rsmn]?|"
    r"qui|quoi|quand|où|pourquoi|quel(?:le)?s?|à\s+qui|"
    r"quién(?:es)?|quien(?:es)?|qué|cuándo|cuando|dónde|donde|cómo|cuál(?:es)?|cual|"
    r"chi|quando|dove|perché|perche|quale|quali|quem|onde|qual|quais|porque|"
    r"wie|wat|wanneer|waarom|welk|welke)\b)",
    re.IGNORECASE,
)


def asked_in_another_language(question: str) -> bool:
    """Whether the question starts as one asked in another language than English."""
    return bool(_OTHER_LANGUAGE_QUESTION.match(question))


_YES_NO_QUESTION = LazyPattern(
    r"\s*(?:is|are|am|isn't|aren't|can|could|should|will|would|shall|may|might|must)\b",
    re.IGNORECASE,
)


# An HTTP status said as a number, as the on-call says 5xx errors too: "500s", "HTTP 500",
# "500 errors", "errors 500", "502 on" (group 1: its family's digit). A number alone that is
# no status ("500 ms on checkout", "500 orders") is not one.
_STATUS_NUMBER = LazyPattern(
    r"(?:\berrors?\s+)?(?:\bhttps?\s+)?\b([1-5])\d\d(?:s\b|\b(?=\s+errors?\b)|\b(?=\s+(?:on|at|in)\b))"
    r"(?:\s+errors?\b)?"
    r"|(?:\berrors?\s+)?\bhttps?\s+([1-5])\d\d\b(?:\s+errors?\b)?"
    r"|\berrors?\s+([1-5])\d\d\b",
    re.IGNORECASE,
)
# A status family said as such ("5xx"), and the place a symptom is said at ("on checkout").
_STATUS_FAMILY = LazyPattern(r"\b[1-5]xx\b", re.IGNORECASE)
# A family said without "errors" beside it ("5xx on checkout").
_BARE_FAMILY = LazyPattern(
    r"(?<!\berrors\s)(?<!\berror\s)\b([1-5])xx\b(?!\s+errors?\b)", re.IGNORECASE
)
_AT_A_PLACE = LazyPattern(r"\b(?:on|at|in)\s+[\w.-]+\s*$", re.IGNORECASE)


def status_symptom_reading(question: str) -> str:
    """The question with an HTTP status said as a number, or as its family alone, read as
    its family's errors, the words "5xx errors on checkout" uses: "500s on checkout", "HTTP
    500 on checkout", "errors 500 on checkout", "500 errors on checkout" and "5xx on
    checkout" all read "5xx errors on checkout". Else the question as it is."""

    def family(found: re.Match[str]) -> str:
        digit = next(g for g in found.groups() if g)
        return f"{digit}xx errors"

    if not _STATUS_NUMBER.search(question) and not _BARE_FAMILY.search(question):
        return question
    said = _BARE_FAMILY.sub(family, _STATUS_NUMBER.sub(family, question))
    return " ".join(said.split())


def says_status_at_a_place(question: str) -> bool:
    """Whether a bare phrase says an HTTP status family's errors at one place ("5xx on
    checkout", "500s on checkout"): a symptom said with where it shows, though the place is
    a one-word name no mention names (the text hits find the service)."""
    reading = status_symptom_reading(re.sub(r"[?？\s]+$", "", question))
    return bool(_STATUS_FAMILY.search(reading)) and bool(_AT_A_PLACE.search(reading))


def reads_as_placed_symptom(question: str) -> bool:
    """Whether the question is a symptom said with where it shows, as the on-call types it
    ("5xx errors on frontend", "5xx on payment-api"): short, read as nothing but an
    incident or entity lookup, naming at most services (by name or `svc:` id; no other id,
    error code, release or alert), no incident, time, document or question word. Its words
    are asked of the runbook search as well (`RetrievalLoop._runbook_by_text`) when no
    incident answers it. A question mark at its end asks nothing more ("5xx on
    payment-api?"). An HTTP status said as a number is read as its family's errors ("500s on
    checkout" as "5xx errors on checkout", `status_symptom_reading`), and a status family
    said at a one-word place ("5xx on checkout") is such a symptom, not a bare one."""
    question = status_symptom_reading(re.sub(r"[?？\s]+$", "", question))
    if reads_as_symptom(question) and not says_status_at_a_place(question):
        return False
    if not set(detect_intents(question)) <= {Intent.INCIDENT_LOOKUP, Intent.ENTITY_LOOKUP}:
        return False
    mentions = extract_mentions(question)
    # A service's id is a place as its name is ("ssh brute force on svc:payment-api").
    other_ids = [i for i in mentions.ids if not i.startswith("svc:")]
    if other_ids or mentions.error_codes or mentions.releases or mentions.alerts:
        return False
    if _ASKS_AN_INCIDENT.search(question) or _NOT_A_SYMPTOM.search(question):
        return False
    if _YES_NO_QUESTION.match(question):
        return False  # "is payment-api ok?" asks its state, not what to do about a symptom
    if asked_in_another_language(question):
        return False  # "Wem gehörte payment-api?": a question, its words not read
    references = time_references(question)
    if references.anchored or references.unresolved or references.now:
        return False
    words = [w for w in re.findall(r"\w+", question) if w.lower() not in ENGLISH_STOP_WORDS]
    rest = question
    for text in mentions.texts():
        rest = rest.replace(text, " ")
    # A bare name ("payment-api") is a lookup of it, not a symptom.
    said = [w for w in re.findall(r"\w+", rest) if w.lower() not in ENGLISH_STOP_WORDS]
    return bool(said) and len(words) <= SYMPTOM_MAX_WORDS


def symptom_intents() -> list[Intent]:
    """The intents of a bare symptom once the runbook search chose a runbook for its words:
    the runbook in force (its owner collected with it), as "<symptom>, what do I do?"."""
    return [Intent.APPLICABLE_RUNBOOK]


def pasted_alert_intents() -> list[Intent]:
    """The intents of a question that is an alert's own page text pasted and asks nothing
    else ("Mimir cluster prod-eu-1/mimir has 2 unhealthy ingester(s)."): the alert, and what
    to do about it, as for a question that is nothing but the alert's name."""
    return [Intent.APPLICABLE_RUNBOOK, Intent.ENTITY_LOOKUP]


# "Was it payment-db?", "could it be risk-engine?", "is risk-engine to blame?", "was
# svc:payment-db the culprit?": a suspect named (by id or hyphenated name) as the cause, a
# cause question about it (`asks_if_suspect_caused`). Group `x`: the suspect's words.
_SUSPECT_ASKED = LazyPattern(
    r"^\s*(?:so\s+|then\s+)?(?:was|is|could|might|can)\s+(?:it|this|that)\s+"
    r"(?:(?:have\s+)?been\s+|be\s+)?(?P<x>[^?？.!]+?)\s*[?？.!]*\s*$|"
    r"^\s*(?:so\s+|then\s+)?(?:is|was|are|were|could|might)\s+(?:it\s+)?(?:be\s+)?"
    r"(?P<y>[^?？.!]+?)\s+(?:(?:the\s+)?(?:one\s+)?to\s+blame|at\s+fault|responsible|"
    r"the\s+(?:root\s+)?cause|the\s+culprit|behind\s+(?:it|this|that))"
    # "... to blame for the outage?", "... the cause of PAY-4097?": what it caused, said.
    r"(?:\s+(?:for|of)\s+[^?？.!]{1,60}?)?\s*[?？.!]*\s*$",
    re.IGNORECASE,
)


def asks_if_suspect_caused(question: str) -> bool:
    """Whether the question names one suspect (a KG id or hyphenated name, no release) and
    asks whether it caused what happened ("was it payment-db?", "is risk-engine to
    blame?"): a cause question about it (root cause), not a lookup of its name. "Was it
    the release?" is a correlation to judge (`_CORRELATION_WORDS`); "was it fixed?" names
    no suspect."""
    found = _SUSPECT_ASKED.match(question)
    if found is None:
        return False
    words = found.group("x") or found.group("y") or ""
    mentions = extract_mentions(words)
    if mentions.releases or mentions.error_codes or mentions.alerts:
        return False
    named = [i for i in mentions.ids if not i.startswith("deploy:")] + mentions.names
    if not named:
        return False
    rest = words
    for text in sorted(named, key=len, reverse=True):
        rest = rest.replace(text, " ")
    said = [w for w in re.findall(r"\w+", rest) if w.lower() not in ENGLISH_STOP_WORDS]
    return not said


# "Is checkout affected?", "was ledger impacted?", "is payment-db hit by the outage?": whether
# a service is one the incident affected (AFFECTED_BY records), an incident lookup.
_AFFECTED_ASKED = LazyPattern(
    r"^\s*(?:so\s+)?(?:is|are|was|were|has|have|had)\s+(?:the\s+)?[\w:@./-]+(?:\s+service)?\s+"
    r"(?:been\s+)?(?:affected|impacted|hit)\b(?:\s+(?:by|in)\b[^?？]{0,60})?\s*[?？.!]*\s*$",
    re.IGNORECASE,
)


def asks_if_affected(question: str) -> bool:
    """Whether the question asks if the one service it names is affected ("is checkout
    affected (by the incident)?"): the incidents that affected it answer it."""
    return bool(_AFFECTED_ASKED.match(question))


# "Why?", "but why?", "y?", "how come?": the cause of what the question is asked about (the
# service given, or the incident), as "what caused it?" reads.
_BARE_WHY = LazyPattern(
    r"^\s*(?:(?:but|so|ok|okay|and)[,\s]+)?(?:why|y|how\s+come)"
    r"(?:\s+(?:though|tho|exactly|then|is\s+that|was\s+that))?\s*[?？!.]*\s*$|"
    r"^\s*为什么\s*[?？!.]*\s*$",
    re.IGNORECASE,
)


def asks_bare_why(question: str) -> bool:
    """Whether the question is "why?" alone (a cause question about what it is asked of)."""
    return bool(_BARE_WHY.match(question))


# "Whats going on?", "what's happening with payment-api?", "what's wrong with checkout?":
# what is open and firing now, on the service named (its state), or anywhere.
_GOING_ON = LazyPattern(
    r"^\s*(?:(?:so|hey|ok|okay)[,\s]+)?what(?:'s|’s|s|\s+is)\s+"
    r"(?:going\s+on|happening|up|wrong|the\s+matter)\b"
    r"(?:\s+(?:with|on|at|in|for|to)\s+[^?？.!]+?)?"
    r"(?:\s+(?:now|right\s+now|currently|at\s+the\s+moment))?\s*[?？!.]*\s*$|"
    # "status?", "health check?", "status update please": the same, said in one word.
    r"^\s*(?:status|health|state)(?:\s+(?:update|check|now|please))*\s*[?？!.]*\s*$",
    re.IGNORECASE,
)


def asks_whats_going_on(question: str) -> bool:
    """Whether the question asks what is going on ("whats going on", "what's wrong with
    payment-api?"): a service's state at as_of, or the incidents open then anywhere."""
    return bool(_GOING_ON.match(question))


def _names_a_place(question: str) -> bool:
    named = extract_mentions(question)
    return bool(named.ids or named.error_codes or named.alerts or named.names) or bool(
        _A_PLACE_AT_THE_END.search(question)
    )


# "Was it the risk rules?", "was it the risk rule change?", "could it be the config
# change?": a change named by its words as the suspect, a cause question about it (its
# candidates, the one named among them, ruled in or out), as "was it payment-db?" reads.
_CHANGE_NOUN = LazyPattern(
    r"\b(?:changes?|rules?|rule\s*sets?|rulesets?|config(?:uration)?s?|settings?|"
    r"(?:feature\s+)?flags?|migrations?|schema|publications?|toggles?)\b",
    re.IGNORECASE,
)


_A_RELEASE_WORD = LazyPattern(
    r"\b(?:releases?|deploy(?:s|ments?)?|rollouts?)\b|\brelease-\S+", re.IGNORECASE
)


def asks_suspects_with_a_release(question: str) -> bool:
    """Whether the question names suspects, a release among others, and asks which caused
    it ("was it payment-db or the release?"): the release's verdict and the open cause
    question's candidates, as "was release X the cause, or the risk rule change?" reads."""
    found = _SUSPECT_ASKED.match(question)
    if found is None:
        return False
    words = found.group("x") or found.group("y") or ""
    parts = [p for p in re.split(r"\s*,\s*|\s+or\s+", words) if p.strip()]
    return len(parts) > 1 and any(_A_RELEASE_WORD.search(p) for p in parts)


def asks_if_change_caused(question: str) -> bool:
    """Whether the question asks if a change it names by words ("the risk rules", "the
    config change") caused what happened: "was it the risk rules?" (a release named this
    way is a correlation to judge: `_CORRELATION_WORDS`)."""
    found = _SUSPECT_ASKED.match(question)
    if found is None:
        return False
    words = found.group("x") or found.group("y") or ""
    return bool(_CHANGE_NOUN.search(words)) and not extract_mentions(words).error_codes


# A word of a short question taken as a name to link ("checkout?", "is vault there?"):
# letters (a hyphen or digit inside), at least three; not the words that ask.
_BARE_WORD = LazyPattern(r"(?<![\w:@./-])[A-Za-z][A-Za-z0-9_]{2,}(?![\w:@/-]|\.\w)")
_ASKING_WORDS = frozenset(
    {
        *("affected", "impacted", "hit", "ok", "okay", "fine", "healthy", "up", "down"),
        *("broken", "working", "status", "state", "now", "still", "today", "currently"),
    }
)
MAX_BARE_NAMES = 3


def bare_name_words(question: str) -> list[str]:
    """The one-word names a question may mean, to link as the other intents' names are
    ("is checkout affected?", "checkout?", "is vault there?"): for a question no intent
    rule reads (an entity lookup asked yes or no, or one word asked, no document word) or
    one asking if a service is affected (`asks_if_affected`), naming nothing itself (no id,
    code, release, alert or hyphenated name), its informative words, capped. A word that
    names nothing the subject may read links nothing, as an unknown name does."""
    intents = detect_intents(question)
    alone = name_alone(question)
    asks_state = set(intents) == {Intent.SERVICE_STATUS, Intent.OWNERSHIP_AT_TIME}
    if asks_state and alone is not None and "-" not in alone and ":" not in alone:
        # "checkout", "checkout down": the one word is the name (`_name_alone_rule`).
        return [alone]
    if intents == [Intent.INCIDENT_LOOKUP]:
        if not asks_if_affected(question):
            return []
    elif intents != [Intent.ENTITY_LOOKUP] or not (
        _YES_NO_QUESTION.match(question) or _ONE_WORD_ASKED.fullmatch(question)
    ):
        # A symptom ("hikaricp pool exhausted") is searched as text, and an open question
        # ("what happened to payments?") asks more than a name: neither is linked word by word.
        return []
    if extract_mentions(question).texts() or asked_in_another_language(question):
        return []
    if any(w.lower() in _LOOKUP_WORDS for w in re.findall(r"\w+", question)):
        return []  # "what do the postmortems say?": a document lookup
    words = [
        w
        for w in _BARE_WORD.findall(question)
        if w.lower() not in ENGLISH_STOP_WORDS
        and w.lower() not in _LOOKUP_WORDS
        and w.lower() not in _ASKING_WORDS
        and not _INCIDENT_WORDS.fullmatch(w)
    ]
    return list(dict.fromkeys(words))[:MAX_BARE_NAMES]


def intents_with_service(
    intents: list[Intent], question: str, service_id: str | None
) -> list[Intent]:
    """The intents of a question asked beside `--service`: "whats going on" or "any ongoing
    incidents?" naming nothing asks the state of the service given (`service_status`), not
    the incidents open anywhere; any other question keeps its intents."""
    if (
        service_id
        and intents == [Intent.INCIDENT_LIST]
        and not _names_a_place(question)
        and (asks_whats_going_on(question) or asks_open_incidents_anywhere(question))
    ):
        return [Intent.SERVICE_STATUS]
    return intents


def detect_intents(question: str) -> list[Intent]:
    """The intents a question asks for (sorted). Nothing matched: an entity lookup."""
    found, _ = _intents_of(question)
    return sorted(found, key=lambda i: i.value)


def errors_read_only_for_then(question: str) -> bool:
    """Whether the question's error timeline is only there to place its "then" (or "when the
    alert fired"): "who owned payment-api then?" asks for no error, so a first error read
    to place the moment is no answer of its own (claims)."""
    return _intents_of(question)[1]


def _intents_of(question: str) -> tuple[set[Intent], bool]:
    """`detect_intents`, unsorted, and whether the error timeline was added only to find
    the anchor event of the question's time words. Its slips are read as the words the
    rules read ("whos the ownr": "who is the owner", `spelling.read_question`), as the
    investigation reads the whole question."""
    # A version typed alone is a release named ("what changed in 2026.07.23.1?").
    question = with_release_word(read_question(question).text)
    found = {intent for intent, pattern in _INTENT_RULES if pattern.search(question)}
    if asked_team(question) is not None:
        # "Which services belong to payments-core?": what a team owned, in other words.
        found.add(Intent.OWNERSHIP_AT_TIME)
    # "Which team owned runbook:payment-recovery@v3?": a runbook named by its id is what the
    # question is about, not a question for the runbook in force (v4 would be claimed beside
    # it); "runbook" written as a word still asks for one.
    unnamed = _KG_ID.sub(" ", question)
    if (
        Intent.APPLICABLE_RUNBOOK in found
        and not _RUNBOOK_RULE.search(unnamed)
        and found - {Intent.APPLICABLE_RUNBOOK}
    ):
        found.discard(Intent.APPLICABLE_RUNBOOK)
    # The nearest answer to an unrecorded ask (the owner then for "who was on call") is
    # looked for; the ask itself becomes a named gap (claims).
    found.update(UNRECORDED_ASKS[ask][0] for ask in unrecorded_asks(question))
    if "approval" in unrecorded_asks(question):
        # The rule a release had to meet is read with it: the policy governing its service
        # (h35: an auditor's "was the release approved?" never read it).
        found.add(Intent.APPLICABLE_POLICY)
    if "response_action" in unrecorded_asks(question):
        # "Did we roll back?", "what fixed it?": the incident is looked up too, so the reports
        # about it (a postmortem's "Fix: rollback at 10:41.") and its resolution are read.
        found.add(Intent.INCIDENT_LOOKUP)
    # "Who owned it before the release?" asks for a state at a time: its "before the release"
    # names the instant (investigator.timeline), not a correlation to judge. So does "what
    # changed before the release?" (its period) and "what was deployed before release X?"
    # (a list of releases): before, both judged the release's correlation with the errors.
    lists_changes = Intent.CHANGE_HISTORY in found or _lists_releases_around_an_event(question)
    asked = (
        without_event_side_words(question) if found & _STATE_INTENTS or lists_changes else question
    )
    if (
        Intent.CHANGE_HISTORY in found
        and Intent.DEPLOYMENT_CORRELATION in found
        and not dict(_INTENT_RULES)[Intent.DEPLOYMENT_CORRELATION].search(asked)
    ):
        # The release word was only the time's ("what changed before the release?").
        found.discard(Intent.DEPLOYMENT_CORRELATION)
    other_causes = bool(_OTHER_CAUSES_ASKED.search(question))
    if other_causes:
        # The candidates beside the one named are listed (and ruled in or out) like an open
        # root-cause question's; "besides the release" keeps the release's verdict too.
        found.add(Intent.ROOT_CAUSE)
    if asks_suspects_with_a_release(question):
        # "Was it payment-db or the release?": the release's verdict and the other suspect's.
        found |= {Intent.DEPLOYMENT_CORRELATION, Intent.ROOT_CAUSE}
        other_causes = True
    if (
        Intent.DEPLOYMENT_CORRELATION in found
        and not other_causes
        and not _CORRELATION_WORDS.search(asked)
    ):
        # "When did release X finish?" asks for the release, not for a correlation.
        found.discard(Intent.DEPLOYMENT_CORRELATION)
        found.add(Intent.RELEASE_LOOKUP)
    if _ROLLBACK_ASKED.search(question) and not asks_action_taken(question):
        # "Should we roll back?" asks whether the release caused it and what the runbook says
        # to do; "did they roll back?" asks for an action taken (an unrecorded ask above).
        found.discard(Intent.RELEASE_LOOKUP)
        found.update({Intent.DEPLOYMENT_CORRELATION, Intent.APPLICABLE_RUNBOOK})
    if _DEPENDENCIES_ASKED.search(question):
        found.add(Intent.DEPENDENCIES)
    if _DEPENDENTS_ASKED.search(question):
        found.add(Intent.DEPENDENTS)
        if not _DEPENDENCIES_ASKED.search(question):
            # "Which services depend on X?" asks for X's dependents only: listing what X
            # depends on instead would answer another question.
            found.discard(Intent.DEPENDENCIES)
    if found == {Intent.DEPENDENCIES} and _UP_OR_DOWNSTREAM.search(question):
        found.add(Intent.DEPENDENTS)
    if asks_alert_firing(question) or asks_what_fired(question):
        # The firings are the answer: not an incident lookup ("alert" and "fired" are incident
        # words), nor the first error of "when did X start firing".
        found.discard(Intent.INCIDENT_LOOKUP)
        if not _ERROR_CODE.search(question):
            found.discard(Intent.ERROR_TIMELINE)
        if not _CORRELATION_WORDS.search(without_event_side_words(question)):
            # "Which alerts fired after the release?": its release names a time, not a cause.
            found -= {Intent.DEPLOYMENT_CORRELATION, Intent.RELEASE_LOOKUP}
        found.add(Intent.ALERT_FIRING)
    if asks_incident_list(question):
        # "List all incidents in July": the tenant's incidents of the period, each listed.
        found -= {Intent.ENTITY_LOOKUP, Intent.INCIDENT_LOOKUP}
        found.add(Intent.INCIDENT_LIST)
    if asks_open_incidents_anywhere(question):
        # "Any ongoing incidents?" naming no service: the tenant's incidents open at as_of.
        found -= {Intent.ENTITY_LOOKUP, Intent.INCIDENT_LOOKUP, Intent.ALERT_FIRING}
        found.add(Intent.INCIDENT_LIST)
    elif asks_service_status(question):
        # "Is payment-api ok?": what is open and firing on it at as_of, not a lookup of its
        # name, nor its incidents' history.
        found -= {Intent.ENTITY_LOOKUP, Intent.INCIDENT_LOOKUP, Intent.ALERT_FIRING}
        found.add(Intent.SERVICE_STATUS)
    if asks_incident_duration(question):
        # "How long did the incident last?": the incident's own record is the answer.
        found.add(Intent.INCIDENT_LOOKUP)
        found.discard(Intent.ENTITY_LOOKUP)
    if asks_timeline(question) or response_metrics(question):
        # A response time ("how long did it take to detect the incident?") is measured
        # between two of the timeline's events: read as a timeline is.
        # The events are the answer: the incident, its first error, a release and a firing
        # are each one of them, not lookups of their own. A cause asked beside it ("timeline
        # and root cause", "did the release cause it") keeps its verdict.
        found -= {
            Intent.INCIDENT_LOOKUP,
            Intent.ERROR_TIMELINE,
            Intent.RELEASE_LOOKUP,
            Intent.CHANGE_HISTORY,
            Intent.ALERT_FIRING,
            Intent.ENTITY_LOOKUP,
        }
        if not _CORRELATION_WORDS.search(without_event_side_words(question)):
            found.discard(Intent.DEPLOYMENT_CORRELATION)
        found.add(Intent.TIMELINE)
    _severity_change_rule(question, found)
    _deploy_safety_rule(question, found)
    _error_state_rule(question, found)
    _escalation_rule(question, found)
    _change_cause_rule(question, found)
    # After the cause rules: a named release's contents are its record's (h34).
    _named_release_contents_rule(question, found)
    _action_decision_rule(question, found)
    _period_events_rule(question, found)
    _service_period_events_rule(question, found)
    if not found and _asks_only_about_alerts(question):
        # On-call pastes the alert that paged ("KubeAPIDown", "[FIRING:1] etcdNoLeader") or
        # names it with no other ask ("help with X", "alert X is paging me", "X what now"):
        # what to do about it is the answer, as `runbook --alert X` gives it, not the
        # alert's name read back (nor an incident report it never asked for).
        found.update({Intent.ENTITY_LOOKUP, Intent.APPLICABLE_RUNBOOK})
    if found == {Intent.ROOT_CAUSE} and alert_names(question):
        # "Why is X firing?": an alert's runbook is where what makes it fire is written.
        found.add(Intent.APPLICABLE_RUNBOOK)
    if not found and asks_if_suspect_caused(question):
        # "Was it payment-db?": whether the suspect caused it, as "what caused it?" reads.
        found.add(Intent.ROOT_CAUSE)
    if not found and asks_if_change_caused(question):
        # "Was it the risk rules?": the same, for a change named by its words.
        found.add(Intent.ROOT_CAUSE)
    if not found and asks_bare_why(question):
        # "Why?" (with --service, or of the incident): what caused it.
        found.add(Intent.ROOT_CAUSE)
    if not found and asks_if_affected(question):
        # "Is checkout affected?": the incidents that affected it, as "... by the incident?".
        found.add(Intent.INCIDENT_LOOKUP)
    if not found and asks_whats_going_on(question):
        # "What's going on with payment-api?": its state now; naming nothing, the
        # incidents open at as_of anywhere (as "any ongoing incidents?").
        found.add(Intent.SERVICE_STATUS if _names_a_place(question) else Intent.INCIDENT_LIST)
    if not found and _HOW_DO_I.search(question) and extract_mentions(question).texts():
        # "How do I fail over payment-db?": a runbook question for the place it names.
        found.add(Intent.APPLICABLE_RUNBOOK)
    if not found and (_ERROR_CODE.search(question) or _INCIDENT_WORDS.search(question)):
        found.add(Intent.INCIDENT_LOOKUP)
    if not found:
        found.add(Intent.ENTITY_LOOKUP)
    _name_alone_rule(question, found)
    references = time_references(question)
    # "Before the first / previous / most recent release" is placed by the service's releases
    # alone: the words pick one, so no error is needed (before, only "first" was; the others
    # were `partial` with no error). "The release" alone is the one before the first error.
    # "Before the ownership change" is placed by the service's OWNS records alone.
    picked_release = references.event is AnchorEvent.OWNER_CHANGE or (
        references.event is AnchorEvent.RELEASE
        and (
            release_pick(references.event_words) is not None
            or _RELEASE_VERSION_WORDS.search(references.event_words or "") is not None
        )
    )
    if references.event is not None and not found & _ANCHOR_INTENTS and not picked_release:
        # "Who owned it then?": the anchor event (the first error) must be found to know
        # when "then" is (investigator.timeline).
        found.add(Intent.ERROR_TIMELINE)
        return found, True
    return found, False


# The words beside a name typed alone that still ask only its state ("payment-api status",
# "checkout down", "is payment-db broken"): nothing else is asked.
_STATE_WORDS = frozenset(
    {
        *("status", "state", "health", "healthy", "down", "up", "broken", "ok", "okay"),
        *("is", "now", "currently", "right", "today", "still"),
    }
)
_NAME_ALONE = LazyPattern(r"(?:svc:)?[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*", re.IGNORECASE)


def name_alone(question: str) -> str | None:
    """The service name a question is made of ("payment-api", "checkout?", "svc:payment-db",
    "payment-api status", "payment-api down"), or None: one hyphenated name or id, perhaps
    with words asking its state, or one plain word asked alone ("checkout?"), and nothing else
    (no error code, release, alert or other id; no question word)."""
    words = question.strip().rstrip("?？!.。 ").split()
    rest = [w for w in words if w.lower() not in _STATE_WORDS]
    # The name first: "is firing" and "is empty" are words, not a service asked about.
    if len(rest) != 1 or rest[0] != words[0] or not _NAME_ALONE.fullmatch(rest[0]):
        return None
    name = rest[0]
    lowered = name.lower()
    named = extract_mentions(name)
    if named.error_codes or named.releases or named.alerts or _RUN_ID.fullmatch(name):
        return None
    if lowered in ENGLISH_STOP_WORDS or lowered in _LOOKUP_WORDS or _INCIDENT_WORDS.fullmatch(name):
        return None
    asked_alone = len(words) == 1 and question.strip().endswith(("?", "？"))
    typed_as_name = "-" in name or ":" in name or joined_name(name) is not None
    if not typed_as_name and (len(name) < 3 or not asked_alone):
        # One plain word is a name only asked alone with its question mark ("checkout?"):
        # "banana", "virt down", "oomkilled" are symptoms typed, searched as words.
        return None
    return name


def name_alone_as_words(question: str) -> str | None:
    """A name typed alone joined by `-` or `_` ("crash-loop", "out-of-memory", "oom_killed")
    as the words it joins ("crash loop"), when they read as a bare symptom
    (`reads_as_symptom`); None otherwise. Searched as those words once the name links no
    service or team the subject reads (`RetrievalLoop._runbook_by_text`)."""
    alone = name_alone(question)
    if alone is None or ":" in alone or not re.search(r"[-_]", alone):
        return None
    words = " ".join(re.split(r"[-_]+", alone))
    return words if reads_as_symptom(words) else None


def name_alone_team_words(question: str, intents: Sequence[Intent]) -> str | None:
    """The name of a question that is a name typed alone ("payments-core"), to link as a team
    too: a team typed alone is asked what it owns. None for any other question or an id."""
    alone = name_alone(question)
    if alone is None or ":" in alone or set(intents) != set(_NAME_ALONE_INTENTS):
        return None
    return alone


_NAME_ALONE_INTENTS = (Intent.SERVICE_STATUS, Intent.OWNERSHIP_AT_TIME)


def _name_alone_rule(question: str, found: set[Intent]) -> None:
    """A service typed alone ("payment-api", "checkout?"): the on-call's first look at it
    is its state at as_of (incidents open, alerts firing, a rollout) and its owner then, not
    its name read back. Last, over a plain entity lookup only (any other reading stands). A
    name that is no service the subject reads gets one gap saying so (claims.derive)."""
    if found != {Intent.ENTITY_LOOKUP} or name_alone(question) is None:
        return
    found.clear()
    found.update({Intent.SERVICE_STATUS, Intent.OWNERSHIP_AT_TIME})


_UNNAMED_ERRORS = LazyPattern(r"\b(?:the\s+)?errors?\b", re.IGNORECASE)


def unnamed_errors_words(question: str) -> str | None:
    """The words of errors asked about with nothing named ("are there still errors?", "did
    the errors stop?"): they are the errors of the incident open at as_of (or the one begun
    by then), looked up as "the incident" is; None when the question names an error code."""
    if not asks_error_state(question) or _ERROR_CODE.search(question):
        return None
    found = _UNNAMED_ERRORS.search(question)
    return found.group(0) if found else None


def asks_rollback_decision(question: str) -> bool:
    """Whether the question asks whether to roll back ("should we roll back payment-api?"),
    not whether a rollback was done ("did we roll back?")."""
    return bool(_ROLLBACK_ASKED.search(question)) and not asks_action_taken(question)


# The response actions besides rolling back asked as a decision, each as a runbook writes it
# (its name in the answer) and as people type it: "failover" is "fail over"; "bounce" and
# "reboot" ask about restarting. Rolling back is `asks_rollback_decision`'s (the release's
# verdict beside the step).
_DECIDED_ACTIONS: tuple[tuple[str, str], ...] = (
    ("fail over", r"fail[- ]?over"),
    ("restart", r"restart|reboot|bounce"),
    ("scale up", r"scale[- ]?(?:up|out)"),
    ("scale down", r"scale[- ]?(?:down|in)"),
    ("page", r"page"),
)
_DECIDED_VERB = "|".join(f"(?P<a{i}>{spelled})" for i, (_, spelled) in enumerate(_DECIDED_ACTIONS))
# "Should we fail over payment-db?", "can I restart payment-api?", "do we need to scale up
# checkout?", "is it safe to fail over the database?", "failover payment-db?": an action to
# decide, answered by the step of the runbook in force that speaks of it. Not "who should I
# page?" (whom to reach), "did we fail over?" (an action taken), "how do I fail over X?" (the
# runbook's steps, read as a runbook question).
_ACTION_DECISION = LazyPattern(
    r"(?:\b(?:should|shall|can|could|must|may|would)\s+(?:we|i|you|they|someone|somebody)"
    r"(?:\s+(?:now|still|just|really|safely|not))?"
    r"|\b(?:do|does)\s+(?:we|i|someone|anyone)\s+(?:need|have)\s+to"
    r"|\bis\s+it\s+(?:safe|ok|okay|time|wise|a\s+good\s+idea)\s+to"
    r"|\b(?:ok|okay|safe)\s+to"
    r"|(?P<bare>^\s*(?:please\s+)?))"
    rf"\s+(?:{_DECIDED_VERB})\b",
    re.IGNORECASE,
)
# Whom to page or call is the escalation reading's ("who should I page?").
_ASKS_WHOM = LazyPattern(r"^\s*(?:who|whom|whose)\b", re.IGNORECASE)
# The same actions in the past participle, asked after the fact ("should we have failed over
# payment-db during the incident?", "were we supposed to restart payment-api?"): the groups
# are named as `_DECIDED_VERB`'s, one per action of `_DECIDED_ACTIONS`.
_DECIDED_PAST = (
    r"failed[- ]?over",
    r"restarted|rebooted|bounced",
    r"scaled[- ]?(?:up|out)",
    r"scaled[- ]?(?:down|in)",
    r"paged",
)
_DECIDED_PAST_VERB = "|".join(f"(?P<a{i}>{spelled})" for i, spelled in enumerate(_DECIDED_PAST))
_ACTION_DECISION_AFTER = LazyPattern(
    r"(?:\b(?:should|could|would|must)\s+(?:we|i|you|they|someone|somebody|on-?call|"
    r"the\s+(?:responders?|on-?call|team))(?:\s+(?:not|really))?\s+have"
    rf"\s+(?:{_DECIDED_PAST_VERB}))\b",
    re.IGNORECASE,
)
_ACTION_DECISION_SUPPOSED = LazyPattern(
    r"\b(?:were|was)\s+(?:we|i|you|they|on-?call|the\s+(?:responders?|on-?call|team))\s+"
    rf"(?:supposed|meant|expected|allowed)\s+to\s+(?:{_DECIDED_VERB})\b",
    re.IGNORECASE,
)


def _action_decision_found(question: str) -> re.Match[str] | None:
    """Where the question asks whether to take an action: as a decision now ("should we fail
    over payment-db?"), else after the fact ("should we have failed over payment-db?")."""
    return (
        _ACTION_DECISION.search(" " + question)
        or _ACTION_DECISION_AFTER.search(" " + question)
        or _ACTION_DECISION_SUPPOSED.search(" " + question)
    )


def asks_action_decision_after(question: str) -> bool:
    """Whether an action decision is asked after the fact ("should we have failed over
    payment-db during the incident?", "were we supposed to restart payment-api?"): the
    runbook in force at the incident's start answers it, said as of then."""
    return asks_action_decision(question) is not None and bool(
        _ACTION_DECISION_AFTER.search(" " + question)
        or _ACTION_DECISION_SUPPOSED.search(" " + question)
    )


def asks_action_decision(question: str) -> str | None:
    """The response action (besides rolling back) the question asks whether to take, as a
    runbook writes it ("fail over", "restart", "scale up", "scale down", "page"), or None:
    "should we fail over payment-db?", "can we failover the database?", "is it safe to
    restart payment-api?". An action asked as taken ("did we fail over?"), whom to page, and
    a runbook question ("how do I fail over X?") are not decisions."""
    if _ASKS_WHOM.search(question) or asks_action_taken(question) or _HOW_DO_I.search(question):
        return None
    found = _action_decision_found(question)
    if found is None:
        return None
    bare = "bare" in found.re.groupindex and found.group("bare") is not None
    for i, (name, _) in enumerate(_DECIDED_ACTIONS):
        # "page 3 of the runbook": paging asked only as a decision ("should we page X?").
        if found.group(f"a{i}") and not (name == "page" and bare):
            return name
    return None


# Where the object of the action ends: its time ("... payment-db during the incident") is
# read by the time words, not searched for in runbooks.
_ACTION_TIME_WORDS = LazyPattern(
    r"\b(?:during|before|after|since|until|while|when|now|then|today|yesterday|tonight|"
    r"right\s+now)\b|,",
    re.IGNORECASE,
)


def action_search_text(question: str) -> str | None:
    """What the runbook search reads for an action decision: the action as a runbook writes
    it and the words after it ("should we failover payment-db now?" is "fail over payment-db
    now"): the step that speaks of the action names its object; "should we" and "is it
    safe to" are no words of a runbook. None when no action decision is asked."""
    action = asks_action_decision(question)
    found = _action_decision_found(question)
    if action is None or found is None:
        return None
    rest = str(_ACTION_TIME_WORDS.split((" " + question)[found.end() :], maxsplit=1)[0])
    return " ".join(f"{action} {rest}".replace("?", " ").replace("？", " ").split())


# "The database", "the db", "our DB": a database named by its kind, not its name.
_DATABASE_WORDS = LazyPattern(
    r"\b(?:(?:the|our|that|this|its|their)\s+)?(?:primary\s+)?(?:database|db)s?\b",
    re.IGNORECASE,
)


def action_database_words(question: str) -> str | None:
    """The words naming the object of an action decision as "the database" or "the db" when
    nothing else names it ("should we fail over the database?"): it is read as the one
    service whose name carries "db" among those of the incident open at as_of and their
    dependencies (the dependency path), a service the subject may read (claims); so the
    incident is looked up as a bare "the incident" is, and its services' dependencies read.
    None otherwise ("should we fail over payment-db?" names it)."""
    words = action_search_text(question)
    if words is None or extract_mentions(question).texts():
        return None
    found = _DATABASE_WORDS.search(words)
    return " ".join(found.group(0).split()) if found else None


def action_database_incident_words(question: str) -> str | None:
    """The incident an action on "the database" is asked about in ('the incident of the
    database'), looked up as a bare "the incident" is; None when the question names its
    object (or asks no action)."""
    words = action_database_words(question)
    return None if words is None else f"the incident of {words}"


def action_then_incident_words(question: str) -> str | None:
    """The incident an action decision on a named service is asked of after the fact
    ("should we have failed over payment-db during the incident?", "should we have
    restarted payment-api?"): looked up as a bare "the incident" is (the one open at as_of,
    else the only one started by then), since the service acted on (payment-db) need not be
    one the incident affected: its dependency path may name it. None when the question names
    no service (`action_database_incident_words` reads that), an error code, an incident or
    an alert (the incident is found through it), or asks no decision after the fact."""
    mentions = extract_mentions(question)
    if mentions.ids or mentions.error_codes or mentions.alerts or not mentions.names:
        return None
    if asks_action_decision(question) is None:
        return None
    if asks_action_decision_after(question) or the_incident_words(question) is not None:
        return "the incident the action was asked of"
    return None


def _action_decision_rule(question: str, found: set[Intent]) -> None:
    """Asked whether to fail over, restart, scale or page: the runbook in force is the answer
    (its step on the action, quoted with its version), as "should we roll back?" reads it,
    beside a lookup of the service named. After the escalation, change-cause and
    error-state rules (whose readings stand) and before the fallbacks for a question with
    nothing found (it finds one)."""
    action = asks_action_decision(question)
    if action is None:
        return
    found.add(Intent.APPLICABLE_RUNBOOK)
    if action != "page" and extract_mentions(question).texts():
        # The service it names is what the action is done to: looked up and said (the
        # subject may read it), as "should we roll back payment-api?" names its release.
        # Whom to page is a team or a channel the runbook names, no entity to look up.
        found.add(Intent.ENTITY_LOOKUP)
    elif action_database_words(question) is not None:
        # "The database": the dependencies of the incident's services are where it is.
        found.add(Intent.DEPENDENCIES)


# "Who do I call about PAY-4097?", "who should I escalate PAY-4097 to?", "who to contact
# about payment-api?", "escalation for payment-api": whom to reach is the owner of the service
# (with the error's emitter) and the runbook's escalation step.
_ESCALATION_ASKED = LazyPattern(
    r"\bwho\s+(?:do|should|can|must|would|could|to)\s+(?:i\s+|we\s+|you\s+)?"
    r"(?:call|ring|phone|escalate|contact|reach|ping|notify|talk\s+to|tell|page)\b|"
    # After the fact: "who should we have escalated PAY-4097 to?", "who were we supposed to
    # call?", "who did the runbook say to escalate to back then?".
    r"\bwho\s+(?:should|would|could|did|must)\s+(?:i|we|they|you|on-?call)\s+have\s+"
    r"(?:called|rung|phoned|escalated|contacted|reached|pinged|notified|paged)\b|"
    r"\bwho\s+(?:were|was)\s+(?:i|we|they|you|on-?call)\s+(?:supposed|meant|expected)\s+to\s+"
    r"(?:call|ring|phone|escalate|contact|reach|ping|notify|talk\s+to|tell|page)\b|"
    r"\bwho\b[^?.]{0,40}?\b(?:say|said|says|tell|told)\s+(?:us\s+|me\s+|them\s+)?to\s+"
    r"(?:call|escalate|contact|page|notify)\b|"
    r"\b(?:where|to\s+whom)\s+(?:do|should|can|must)\s+(?:i|we)\s+escalate\b|"
    r"\bescalate\b[^?.]{0,40}?\bto\s*\?|"
    r"\bescalation\s+(?:for|path|contacts?|point)\b|\bwho\s+is\s+the\s+(?:contact|escalation)\b|"
    r"^\s*contact\s+(?:for|about)\b|升级给谁|找谁|联系谁",
    re.IGNORECASE,
)


def asks_whom_to_reach(question: str) -> bool:
    """Whether the question asks whom to call, contact or escalate to about something."""
    return bool(_ESCALATION_ASKED.search(question))


def _escalation_rule(question: str, found: set[Intent]) -> None:
    """Asked whom to call or escalate to: the owner (OWNS) and the runbook in force (its
    escalation step), not a lookup of the error's or the service's name. Before the
    fallbacks that read a question naming an error code as an incident lookup."""
    if not asks_whom_to_reach(question):
        return
    found.update({Intent.OWNERSHIP_AT_TIME, Intent.APPLICABLE_RUNBOOK})
    found.discard(Intent.ENTITY_LOOKUP)


# "Did the risk rule change cause PAY-4097?", "could the risk-engine change have caused the
# outage?", "did RR-2026-07-23a cause it?": a change named as the suspect of errors, a cause
# question (every candidate before the first error named with its timing, the reports' ruling
# on each), not an incident lookup of the error named; not a release correlation either (its
# verdict would be the release's, read as the answer about the change named).
_CHANGE_CAUSE_ASKED = LazyPattern(
    r"\b(?:did|could|might|may|can|would|does|has)\b[^?.]{0,60}?"
    r"\b(?:changes?|publications?|rules?|config(?:uration)?s?|flags?|migrations?|updates?|"
    r"[A-Z]{2,}-\d{4}-\d{2}-\d{2}\w*)\b[^?.]{0,30}?\bcaus(?:e|ed|ing)\b",
    re.IGNORECASE,
)


def asks_if_named_change_caused(question: str) -> bool:
    """Whether the question asks whether a change it names caused the errors ("did the risk
    rule change cause PAY-4097?"; "was it the risk rules?" is `asks_if_change_caused`)."""
    return bool(_CHANGE_CAUSE_ASKED.search(question))


def _change_cause_rule(question: str, found: set[Intent]) -> None:
    """Asked whether a named change caused it: a cause question, every candidate named.
    Only where nothing but a lookup of the error or incident was read (a root-cause or
    release question keeps its reading)."""
    if asks_if_named_change_caused(question) and found <= {
        Intent.INCIDENT_LOOKUP,
        Intent.ERROR_TIMELINE,
        Intent.ENTITY_LOOKUP,
    }:
        found.clear()
        found.add(Intent.ROOT_CAUSE)


def _named_release_contents_rule(question: str, found: set[Intent]) -> None:
    """ "What changed in release 2026.07.23.1?": what a named release changed is its own
    record's to say (`claims.releases.release_record_answer`), not a change list placed by a
    first error (h34: `partial`, "no first-seen time for the error or incident", with the
    record quoted). Only when a release is named and the words ask its contents, with no
    cause asked ("what changed before release X?" keeps its change list)."""
    if (
        found >= {Intent.CHANGE_HISTORY, Intent.RELEASE_LOOKUP}
        and not found & {Intent.ROOT_CAUSE, Intent.DEPLOYMENT_CORRELATION, Intent.TIMELINE}
        and extract_mentions(question).releases
        and "contents" in release_record_asks(question)
    ):
        found.discard(Intent.CHANGE_HISTORY)


# "When was the incident upgraded to SEV1?", "was the severity changed?", "severity history of
# the incident": the incident record's versions compared (the severity each recorded, when).
_SEVERITY_CHANGE_ASKED = LazyPattern(
    r"\b(?:upgraded|downgraded|escalated|raised|lowered|bumped|changed|moved|promoted|"
    r"reclassified|corrected|re-?rated|went|go|become|became)\s+(?:up\s+|down\s+)?(?:to|from)\s+"
    r"(?:a\s+)?SEV\s?-?\d\b|\b(?:become|became|made|declared)\s+(?:a\s+)?SEV\s?-?\d\b|"
    r"\bseverity\b[^?.]{0,40}?\b(?:chang\w*|rais\w*|upgrad\w*|downgrad\w*|lower\w*|escalat\w*|"
    r"bump\w*|histor\w*|correct\w*)|"
    r"\b(?:chang\w*|rais\w*|upgrad\w*|downgrad\w*|lower\w*|bump\w*|histor\w*|correct\w*)\b"
    r"[^?.]{0,40}?\bseverity\b|严重(?:程度|级别)[^?？]{0,10}(?:变|改|升|降)",
    re.IGNORECASE,
)


def asks_severity_change(question: str) -> bool:
    """Whether the question asks how an incident's severity changed (when it was raised to
    SEV1): the records of the incident compared, not its current record alone."""
    return bool(_SEVERITY_CHANGE_ASKED.search(question))


def _severity_change_rule(question: str, found: set[Intent]) -> None:
    """Asked when the severity changed: the incident's records are the answer (`incident_lookup`,
    its versions read after the loop), not an alert firing ("raised") nor a name lookup.
    After the alert, status, duration and timeline rules (it undoes the first three; a timeline
    keeps its reading)."""
    if not asks_severity_change(question) or Intent.TIMELINE in found:
        return
    found -= {Intent.ALERT_FIRING, Intent.ENTITY_LOOKUP, Intent.ERROR_TIMELINE}
    found.add(Intent.INCIDENT_LOOKUP)


# "Is it safe to deploy payment-api now?", "ok to ship checkout?", "can we deploy payment-api
# now?": no record says so; what is open and firing on the service at as_of is what the KG
# records (before, only its releases were listed, an open incident never said).
_DEPLOY_SAFETY_ASKED = LazyPattern(
    r"\b(?:safe|ok(?:ay)?|fine|good|clear|cleared|allowed)\s+to\s+(?:deploy|release|ship|"
    r"roll\s*out|push)\b|\bcan\s+(?:we|i)\s+(?:safely\s+)?(?:deploy|release|ship|roll\s*out)\b"
    r"[^?.]{0,40}?\bnow\b|\bgood\s+time\s+to\s+(?:deploy|release|ship)\b|"
    r"(?:现在)?(?:可以|能)(?:安全)?(?:发布|部署|上线)吗",
    re.IGNORECASE,
)


def asks_deploy_safety(question: str) -> bool:
    """Whether the question asks if deploying (releasing) now is safe or allowed."""
    return bool(_DEPLOY_SAFETY_ASKED.search(question))


def _deploy_safety_rule(question: str, found: set[Intent]) -> None:
    """Asked whether it is safe to deploy: the service's state at as_of (`service_status`:
    incidents open, alerts firing, a rollout under way) beside its releases; never a verdict
    (claims.status.deploy_safety_gaps). After the status rule, which it extends."""
    if not asks_deploy_safety(question) or found & {Intent.TIMELINE, Intent.INCIDENT_LIST}:
        return
    found.add(Intent.SERVICE_STATUS)
    found.discard(Intent.ENTITY_LOOKUP)


def _error_state_rule(question: str, found: set[Intent]) -> None:
    """Asked "are there still errors?", "did PAY-4097 stop?": the error records are the answer
    (their first and last sighting by as_of), read beside the incident. After the timeline,
    alert and status rules (their answers list the errors themselves, so this adds nothing
    there) and before the fallbacks for a question with nothing found (it finds one)."""
    if not asks_error_state(question) or found & {
        Intent.TIMELINE,
        Intent.ALERT_FIRING,
        Intent.SERVICE_STATUS,
        Intent.INCIDENT_LIST,
    }:
        return
    found.add(Intent.ERROR_TIMELINE)
    found.discard(Intent.ENTITY_LOOKUP)


# A word typed as one identifier: letters and digits, perhaps joined by `_`.
_IDENTIFIER_WORD = LazyPattern(
    r"(?<![\w:@./-])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*(?![\w:@/-]|\.\w)"
)
# A name of two to four words each this long at least ("payment_api"; not "iPhone": i, phone).
_JOINED_PART_MIN = 2
_JOINED_MAX_PARTS = 4


def joined_name(word: str) -> str | None:
    """The name a word types with `_` or a case step where the name has `-` ("payment_api",
    "PaymentAPI", "riskEngine" -> payment-api, risk-engine), or None: no such join, an
    alert's CamelCase name (KubePodCrashLooping names itself), or parts too short."""
    if not _IDENTIFIER_WORD.fullmatch(word) or is_alert_name(word):
        return None
    case_step = re.search(r"[a-z][A-Z]", word) is not None
    if "_" not in word and not case_step:
        return None
    parts = identifier_words(word)
    if not 2 <= len(parts) <= _JOINED_MAX_PARTS or min(map(len, parts)) < _JOINED_PART_MIN:
        return None
    return "-".join(parts)


def joined_names(question: str) -> list[str]:
    """The names the question's words type joined (`joined_name`), in order, once each."""
    found = (joined_name(m.group()) for m in _IDENTIFIER_WORD.finditer(question))
    return list(dict.fromkeys(n for n in found if n is not None))


def extract_mentions(question: str) -> Mentions:
    """Pull KG ids, error codes, release names, alert names and service-like names."""
    ids = [m.rstrip(".,;:?!") for m in _KG_ID.findall(question)]
    id_spans = " ".join(ids)
    codes = [c for c in _ERROR_CODE.findall(question) if c not in id_spans]
    releases = [r for r in _RELEASE.findall(question) if r not in id_spans]
    # Written with a space (or after the number): the same release, named canonically.
    releases += [f"release-{a or b}" for a, b in _RELEASE_WRITTEN.findall(question)]
    # Its version alone ("did 2026.07.23.4 follow the change policy?", "v2026.07.23.4",
    # "deploy 2026.07.23.4"): the same release (release_names.release_named finds it).
    releases += [
        f"release-{v}" for v in BARE_VERSION.findall(question) if v.lower() not in id_spans.lower()
    ]
    alerts = [a for a in alert_names(question) if a not in id_spans]
    hyphenated = [(m.start(), m.group()) for m in _HYPHENATED.finditer(question)]
    run_ids = [(m.start(), m.group()) for m in _RUN_ID.finditer(question)]
    names = [
        n
        for _, n in sorted(hyphenated + run_ids)
        if n not in id_spans
        and not _RELEASE.fullmatch(n)
        and not any(n in r for r in releases)
        and n.lower() not in {c.lower() for c in codes}
    ]
    spelled = [
        f"{letters.upper()}-{digits}"
        for letters, digits in UNHYPHENATED_CODE.findall(question)
        if f"{letters}{digits}" not in id_spans
    ]
    return Mentions(
        ids=list(dict.fromkeys(ids)),
        error_codes=list(dict.fromkeys(codes)),
        unhyphenated_codes=[c for c in dict.fromkeys(spelled) if c not in codes],
        joined_names=[n for n in joined_names(question) if n not in names],
        releases=list(dict.fromkeys(releases)),
        alerts=list(dict.fromkeys(alerts)),
        names=list(dict.fromkeys(names)),
    )


# -- what the loop knows ------------------------------------------------------------------


class KnownRelease(BaseModel):
    """A release a check step returned: its service and deployment time."""

    id: str
    name: str | None = None
    service: str | None = None
    at: datetime
    # Its rollout's start, when its record says (a rollout under way may be "then").
    started: datetime | None = None
    # Its version (the record's `release`), which a question may name it by alone.
    version: str | None = None

    def named_in(self, names: Sequence[str]) -> bool:
        """Whether the question's release names (`Mentions.release_names()`) name it."""
        return release_named(names, self.id, self.name, self.version)


class Known(BaseModel):
    """Entities and instants the retrieval loop has learned so far (sorted, deduplicated)."""

    services: list[str] = Field(default_factory=list)
    error_codes: list[str] = Field(default_factory=list)
    incidents: list[str] = Field(default_factory=list)
    deployments: list[str] = Field(default_factory=list)
    alerts: list[str] = Field(default_factory=list)
    # Runbooks the question names itself (entity linking only, never a runbook a template
    # returned as evidence): their own chains are read when a runbook is wanted.
    runbooks: list[str] = Field(default_factory=list)
    # Of those, the ones no record the question names led to: the runbook search's best fit
    # for its words (runbook_search.py), as the card's free-text lookup chooses it.
    runbooks_by_text: list[str] = Field(default_factory=list)
    # (runbook, service) for each service a runbook of `runbooks_by_text` APPLIES_TO: that
    # service's owner is the runbook's, as the card reads it; never a service asked about.
    runbook_services: list[tuple[str, str]] = Field(default_factory=list)
    # The teams a question asks about from their side ("What did team:payments own?"):
    # linked by TEAM_LINK alone, never from other rows.
    teams: list[str] = Field(default_factory=list)
    other: list[str] = Field(default_factory=list)
    first_seen: datetime | None = None
    # Services the focus services depend on (found by the competing-cause check; they are
    # searched for deployments in the window, never treated as the service asked about).
    upstream: list[str] = Field(default_factory=list)
    # Services reached only by walking DEPENDS_ON from the ones asked about: never walked
    # from themselves (the dependents of a dependency are not the question's dependents).
    walked: list[str] = Field(default_factory=list)
    # When the named alerts fired (instant, alert id, FIRED_ON record id), for "when it fired".
    alerts_fired: list[tuple[datetime, str, str]] = Field(default_factory=list)
    # The instants the question's time words resolved to, with why (investigator.timeline).
    references: list[ReferenceTime] = Field(default_factory=list)
    # The event instant they resolved to when it lies after as_of (not used, said so).
    late_references: list[ReferenceTime] = Field(default_factory=list)
    # Services whose earliest releases were read ("before the first release" may be placed).
    release_histories: list[str] = Field(default_factory=list)
    # Services whose emitted errors were read (`EMITTED_READ`): none by as_of is a finding.
    errors_read: list[str] = Field(default_factory=list)
    # Releases seen by check steps, with service and deployment time (sorted by id).
    releases: list[KnownRelease] = Field(default_factory=list)
    # Each change of owner of a service whose owners were read (`note_owner_changes`):
    # (instant, service, "of <service> from <team> to <team>", the new OWNS record), sorted.
    owner_changes: list[tuple[datetime, str, str, str]] = Field(default_factory=list)
    # Other changes (change events) the competing-cause checks found (sorted).
    changes: list[str] = Field(default_factory=list)
    # The question asks the owner of an alert it does not name ("who owns the alert that
    # fired on checkout?"): the alerts that fired on the focus services are read, then their
    # own owners (`alert_owner_steps`); the service's owner is not the one asked.
    alert_owner_asked: bool = False
    # (service, alert) of each alert a read of the alerts that fired on a focus service found
    # firing on it by as_of (`alert_owner_steps`): the alerts whose owners are then read.
    alerts_fired_on: list[tuple[str, str]] = Field(default_factory=list)
    # The services the question's own words lead to (a service it names, one a named alert
    # fired on, one that emitted a named error code) when `--service` names none of them:
    # read first, `--service` after (`focus_services`), in the order the words gave them.
    worded: list[str] = Field(default_factory=list)

    def add(self, kind: str, entity_id: str) -> bool:
        """Add one entity id under `kind`; True when it is new."""
        bucket: list[str] = getattr(self, kind)
        if entity_id in bucket:
            return False
        bucket.append(entity_id)
        bucket.sort()
        return True

    def entities(self) -> list[ResolvedEntity]:
        """Everything known, as the QueryPlan's resolved entities."""
        typed = (
            ("services", "Service"),
            ("error_codes", "ErrorCode"),
            ("incidents", "Incident"),
            ("deployments", "Deployment"),
            ("alerts", "Alert"),
            ("runbooks", "Runbook"),
            ("teams", "Team"),
            ("other", None),
        )
        return [ResolvedEntity(id=i, type=t) for kind, t in typed for i in getattr(self, kind)]


_TYPE_TO_KIND = {
    "Service": "services",
    "ErrorCode": "error_codes",
    "Incident": "incidents",
    "Deployment": "deployments",
    "Alert": "alerts",
}
_PREFIX_TO_KIND = {
    "svc": "services",
    "err": "error_codes",
    "inc": "incidents",
    "deploy": "deployments",
    "alert": "alerts",
}


def kind_of(entity_id: str, type_name: str | None = None) -> str:
    """Which `Known` bucket an entity id belongs to (by type label, else by id prefix)."""
    if type_name and type_name in _TYPE_TO_KIND:
        return _TYPE_TO_KIND[type_name]
    prefix = entity_id.split(":", 1)[0]
    return _PREFIX_TO_KIND.get(prefix, "other")


# -- steps ---------------------------------------------------------------------------------


def step_key(step: PlanStep) -> str:
    """Identity of a step, so the loop never runs the same call twice."""
    parts: list[Any] = [step.template_id, step.params, step.options, step.evidence_type]
    if (step.step_id or "").startswith(AT_PREFIX):
        parts.append(step.step_id)  # the same lookup, for another reference time
    return json.dumps(parts, sort_keys=True, default=str)


def anchor_time(known: Known, as_of: datetime) -> datetime:
    """The instant windows end at: the first error when it happened by `as_of`, else `as_of`.

    A first error after `as_of` has not happened yet at `as_of`; anchoring on it would
    search a window after the moment asked about (and made the plan's time scope invalid).
    """
    if known.first_seen is not None and known.first_seen <= as_of:
        return known.first_seen
    return as_of


def _iso(value: datetime) -> str:
    return value.isoformat()


def linking_steps(mentions: Mentions, service_id: str | None, question: str) -> list[PlanStep]:
    """Round-one steps that resolve what the question names, plus one fulltext channel."""
    texts = list(dict.fromkeys(([service_id] if service_id else []) + mentions.texts()))
    # An error code typed without its hyphen ("PAY4097"), linked as the subject may see it.
    texts += [c for c in mentions.unhyphenated_codes if c not in texts][: MAX_MENTIONS - len(texts)]
    # A name typed joined ("payment_api", "PaymentAPI"), linked as the name it types.
    texts += [n for n in mentions.joined_names if n not in texts][: MAX_MENTIONS - len(texts)]
    # One-word names ("is checkout affected?"), linked as named when the question names
    # nothing else: exact names only (`entity_resolution`), so a word no record is named
    # links nothing.
    texts += [w for w in bare_name_words(question) if w not in texts][: MAX_MENTIONS - len(texts)]
    steps = [
        PlanStep(
            step_id=f"{NAV_PREFIX}link-{i}",
            template_id="entity_resolution",
            params={"text": text[:200]},
            evidence_type="entity",
            limit=10,
        )
        for i, text in enumerate(texts[:MAX_MENTIONS], start=1)
    ]
    all_words = re.findall(r"[\w.:@-]+", question)
    # Function words match every short text alike ("the", "is"): the query is the others.
    informative = [w for w in all_words if w.lower() not in ENGLISH_STOP_WORDS]
    if not texts:
        # Nothing named: the search's best anchors become the services asked about, so a
        # kind noun ("the broken service") must not be what links one.
        informative = [w for w in informative if w.lower() not in KIND_NOUNS] or informative
    words = " ".join(informative or all_words)[:500]
    # "What went on on 2026-07-23?": its words are time words only; the period's reads are
    # round one (`period_events_steps`), a text hit on the date no event of it.
    if words.strip() and not asks_period_events(question):
        steps.append(
            PlanStep(
                step_id="fulltext-1",
                template_id="fulltext_search",
                params={"query": words},
                evidence_type="document",
                limit=10,
            )
        )
    return steps


def steps_for(
    wanted: Iterable[str],
    known: Known,
    *,
    as_of: datetime,
    ownership_period: tuple[datetime | None, datetime] | None = None,
) -> list[PlanStep]:
    """Template steps that can supply the `wanted` evidence types given what is `known`
    (a service's owners over `ownership_period` when the question asks for one).

    Also returns navigation steps that discover the anchors a wanted type needs (the
    incidents of a service, the services that emit an error code).
    """
    want = set(wanted)
    steps: list[PlanStep] = []
    anchor = anchor_time(known, as_of)
    first_by_as_of = known.first_seen is not None and known.first_seen <= as_of
    lookback = DEPLOY_LOOKBACK if first_by_as_of else WIDE_LOOKBACK
    for svc in known.services:
        if "ownership" in want:
            steps.append(_owners_step(svc, ownership_period))
        if want & {"runbook", "policy"}:
            steps.append(
                _step("runbooks_for", {"anchor_id": svc}, "runbook", options={"anchor": "service"})
            )
        if "deployment_time" in want:
            steps.append(
                _step(
                    "deployments_in_window",
                    {
                        "service_id": svc,
                        "from": _iso(shift(anchor, -lookback)),
                        "to": _iso(anchor),
                    },
                    "deployment_time",
                )
            )
        if "dependency" in want and svc not in known.walked:
            # Out of the service, transitively: what a dependency depends on fails it too.
            steps.append(
                _one_hop_step(svc, "DEPENDS_ON", "out", "dependency", hops=DEPENDS_ON_HOPS)
            )
        if "dependent" in want and svc not in known.walked:
            # Into the service, transitively: what calls a caller breaks with it too.
            steps.append(_one_hop_step(svc, "DEPENDS_ON", "in", "dependent", hops=DEPENDS_ON_HOPS))
        if "alert_firing" in want:
            # The alerts that fired on it: each FIRED_ON record is one firing, dated.
            steps.append(_one_hop_step(svc, "FIRED_ON", "in", "alert_firing"))
        incident_types = {"error_first_seen", "affected_service", "incident_report", "mechanism"}
        if want & incident_types and not known.incidents:
            steps.append(
                _one_hop_step(svc, "AFFECTED_BY", "both", step_id=NAV_PREFIX + "incidents")
            )
    if "change_event" in want and (known.first_seen or known.deployments or known.services):
        steps.append(
            _step(
                "change_events_in_window",
                {"from": _iso(shift(anchor, -CHANGE_LOOKBACK)), "to": _iso(anchor)},
                "change_event",
                options={"scope": "all"},
            )
        )
    for code in known.error_codes:
        if want & {"runbook"}:
            steps.append(
                _step(
                    "runbooks_for", {"anchor_id": code}, "runbook", options={"anchor": "error_code"}
                )
            )
        if not known.services or "error_first_seen" in want:
            # The EMITTED records carry first_seen: evidence when that is wanted (a subject
            # who may not see the incident still sees the error code's own record).
            step_id = None if "error_first_seen" in want else NAV_PREFIX + "emitters"
            steps.append(_one_hop_step(code, "EMITTED", "in", step_id=step_id))
    incident_types = {"error_first_seen", "affected_service", "incident_report", "alert_definition"}
    for alert in known.alerts:
        if "ownership" in want and not known.services:
            # An alert has an owner of its own (team -> alert): the answer when no service is
            # in question ("Who owns alert:X?"); an incident's alerts are not what is asked.
            steps.append(_step("owners_of", {"entity_id": alert}, "ownership"))
        if "runbook" in want:
            steps.append(
                _step("runbooks_for", {"anchor_id": alert}, "runbook", options={"anchor": "alert"})
            )
        if "alert_firing" in want:
            steps.append(_one_hop_step(alert, "FIRED_ON", "out", "alert_firing"))
        if not known.services:
            # The services it fired on are the ones the question means (their owners and
            # runbooks, their changes), not every service its incident touched: read with
            # the incident, before its other services are (`retrieval.learn`).
            steps.append(_one_hop_step(alert, "FIRED_ON", "out", step_id=NAV_PREFIX + "fired-on"))
        if want & incident_types and not known.incidents:
            steps.append(_one_hop_step(alert, "TRIGGERED", "out", step_id=NAV_PREFIX + "triggered"))
    for team in known.teams[:MAX_TEAMS]:
        # A team is linked only when asked about from its side: what it owned is the answer
        # even when a service's owners (--service) already supplied ownership evidence.
        steps.append(_team_owns_step(team, ownership_period, as_of))
    for runbook in known.runbooks_by_text[:MAX_FOCUS_SERVICES]:
        if "ownership" in want:
            # Its own OWNS record ("who owns the payment recovery runbook?": the runbook its
            # words found; before, only a runbook named by id had it read, and the answer
            # said "no OWNS record of it" of one that had); else the owner of a service it
            # applies to, as the card's owner line reads it.
            steps.append(_step("owners_of", {"entity_id": runbook}, "ownership"))
            steps.append(
                _one_hop_step(runbook, "APPLIES_TO", "out", step_id=RUNBOOK_SERVICES, hops=1)
            )
    if "ownership" in want:
        for svc in sorted({svc for _, svc in known.runbook_services})[:MAX_FOCUS_SERVICES]:
            steps.append(_step("ownership_over_time", {"service_id": svc}, "ownership"))
    for runbook in known.runbooks[:MAX_FOCUS_SERVICES]:
        if "ownership" in want:
            steps.append(_step("owners_of", {"entity_id": runbook}, "ownership"))
        if "runbook" in want:
            steps.append(
                _step(
                    "runbooks_for", {"anchor_id": runbook}, "runbook", options={"anchor": "runbook"}
                )
            )
    for inc in known.incidents:
        if want & incident_types:
            steps.append(_step("incident_context", {"incident_id": inc}, "error_first_seen"))
        elif want & {"ownership", "runbook"} and not known.services:
            # Only to find the affected services whose owners (runbooks) are asked for.
            steps.append(
                _step(
                    "incident_context",
                    {"incident_id": inc},
                    "error_first_seen",
                    step_id=NAV_PREFIX + "affected",
                )
            )
        if want & {"mechanism", "incident_report"}:
            steps.append(_step("documents_about", {"entity_id": inc}, "mechanism"))
    for dep in known.deployments:
        if want & {"deployment_time", "mechanism", "change_event"}:
            steps.append(_step("documents_about", {"entity_id": dep}, "document"))
    return steps


def _owners_step(service_id: str, period: tuple[datetime | None, datetime] | None) -> PlanStep:
    """The owners of a service: every OWNS record, or those of a period asked (read in
    Cypher, newest first, so a history longer than the row cap is cut at its oldest)."""
    if period is None:
        return _step("ownership_over_time", {"service_id": service_id}, "ownership")
    start, end = period
    params = {"service_id": service_id, "to": _iso(end)}
    if start is not None:
        params["from"] = _iso(start)
    return _step("ownership_in_period", params, "ownership")


def _team_owns_step(
    team_id: str, period: tuple[datetime | None, datetime] | None, as_of: datetime
) -> PlanStep:
    """What a team owned: over the period asked, else every record up to as_of (the gate
    keeps those valid at as_of and at each time the question names)."""
    start, end = period if period is not None else (None, as_of)
    params: dict[str, Any] = {"team_id": team_id, "to": _iso(end)}
    if start is not None:
        params["from"] = _iso(start)
    return _step("owned_by_team", params, "ownership")


def team_link_steps(words: str) -> list[PlanStep]:
    """Round one's links of the team a question asks about from its side, by its words as
    written (an id, a name, an alias) and, words that are no id, as the id `team:<words>`
    ("the payments team" -> team:payments); Team records only: a team the subject may not
    read links to nothing, as one that does not exist."""
    texts = [words]
    if ":" not in words:
        texts.append("team:" + re.sub(r"\s+", "-", words.strip().lower()))
    return [
        PlanStep(
            step_id=TEAM_LINK,
            template_id="entity_resolution",
            params={"text": text[:200]},
            options={"label": "Team"},
            evidence_type="entity",
            limit=10,
        )
        for text in texts
    ]


def _step(
    template_id: str,
    params: dict[str, Any],
    evidence_type: str,
    options: dict[str, str | int] | None = None,
    step_id: str | None = None,
) -> PlanStep:
    return PlanStep.model_validate(
        {
            "step_id": step_id,
            "template_id": template_id,
            "params": params,
            "options": options or {},
            "evidence_type": evidence_type,
        }
    )


def _one_hop_step(
    start_id: str,
    rel_type: str,
    direction: str,
    evidence_type: str = "entity",
    step_id: str | None = None,
    hops: int = 1,
) -> PlanStep:
    """A `dependency_neighbourhood` step: the `rel_type` records up to `hops` (default one)
    hops from `start_id`."""
    return _step(
        "dependency_neighbourhood",
        {"start_id": start_id},
        evidence_type,
        options={"rel_type": rel_type, "direction": direction, "hops": hops},
        step_id=step_id,
    )


class PlanInput(BaseModel):
    """What the planner reads."""

    question: str
    service_id: str | None = None
    as_of: datetime
    known_at: datetime
    max_rounds: int = DEFAULT_MAX_ROUNDS
    # The period the question asks the owners over, (start, end) with start None for the
    # whole history (ownership_history.py): the owners are read over it, not all at once.
    ownership_period: tuple[datetime | None, datetime] | None = None


class DeterministicPlanner:
    """The default planner: keyword intents, regex mentions, rubric-driven steps."""

    name = "deterministic@1"

    def intents(self, inp: PlanInput) -> list[Intent]:
        """Intents of the question (and of the service given beside it)."""
        return intents_with_service(detect_intents(inp.question), inp.question, inp.service_id)

    def initial_plan(self, inp: PlanInput, intents: Sequence[Intent]) -> QueryPlan:
        """Round one: link the mentions and run the fulltext channel."""
        mentions = extract_mentions(inp.question)
        known = Known()
        if inp.service_id:
            known.add("services", inp.service_id)
        steps = linking_steps(mentions, inp.service_id, inp.question)
        team_words = asked_team(inp.question)
        if team_words is not None and Intent.OWNERSHIP_AT_TIME in intents:
            steps += team_link_steps(team_words)
        elif (alone := name_alone_team_words(inp.question, intents)) is not None:
            # "payments-core": a team typed alone is linked as one (its id only), and what it
            # owns is read as for "what does team payments-core own?".
            steps += team_link_steps(alone)[1:]
        bare = (
            the_incident_words(inp.question)
            or action_incident_words(inp.question)
            or unnamed_errors_words(inp.question)
            or action_database_incident_words(inp.question)
            or metric_incident_words(inp.question)
        )
        if not inp.service_id and not mentions.texts() and bare:
            # "the incident" with nothing named: which incident it means is looked up.
            steps.append(the_incident_step(inp.as_of))
        elif not inp.service_id and action_then_incident_words(inp.question):
            # "Should we have failed over payment-db during the incident?": the incident is
            # looked up alike (payment-db is on its dependency path, not one it affected).
            steps.append(the_incident_step(inp.as_of))
        steps += steps_for(
            useful_types(intents), known, as_of=inp.as_of, ownership_period=inp.ownership_period
        )
        steps += named_release_lookup_steps(intents, mentions)
        steps += unnamed_change_steps(intents, inp.question, inp.service_id, inp.as_of)
        steps += period_events_steps(inp, intents)
        return self.plan(inp, intents, known, steps)

    def plan(
        self, inp: PlanInput, intents: Sequence[Intent], known: Known, steps: list[PlanStep]
    ) -> QueryPlan:
        """A QueryPlan of `steps` (validated like any planner's output)."""
        return QueryPlan(
            intents=[i.value for i in intents],
            # A crowded window knows more releases and changes than a plan holds: the
            # first 64 (sorted by kind, then id) are recorded, as the steps are.
            entities=known.entities()[:64],
            time_scope=TimeScope(
                **{"from": shift(anchor_time(known, inp.as_of), -WIDE_LOOKBACK)},
                to=inp.as_of,
                as_of=inp.as_of,
            ),
            known_at=inp.known_at,
            steps=steps[:64],
            max_rounds=min(max(inp.max_rounds, 1), 10),
            # The dependency walks' depth (the template's and a plan's bound).
            max_hops=DEPENDS_ON_HOPS,
        )


def wanted_types(intents: Sequence[Intent], supported: Iterable[str]) -> list[str]:
    """Required and optional evidence types not yet supported, sorted."""
    have = set(supported)
    return [t for t in useful_types(intents) if t not in have]


def missing_required(intents: Sequence[Intent], supported: Iterable[str]) -> list[str]:
    """Required evidence types not yet supported, sorted."""
    have = set(supported)
    return [t for t in required_types(intents) if t not in have]


# -- competing causes and reference times ---------------------------------------------------


def emitter_steps(codes: Sequence[str]) -> list[PlanStep]:
    """The services that emitted each error code (EMITTED into it, navigation)."""
    return [_one_hop_step(code, "EMITTED", "in", step_id=NAV_PREFIX + "emitters") for code in codes]


def release_choice_steps(as_of: datetime) -> list[PlanStep]:
    """The releases of every service the subject may read in the `DEPLOY_LOOKBACK` before
    as_of, and those rolling out at as_of: the candidates for "the release" of a correlation
    question naming no service."""
    window = {"from": _iso(shift(as_of, -DEPLOY_LOOKBACK)), "to": _iso(as_of)}
    return [
        _step(
            "deployments_in_window_tenant", window, "deployment_time", step_id=RELEASE_CHOICE_READ
        ),
        _step(
            "rollouts_under_way_tenant",
            {"at": _iso(as_of)},
            "deployment_time",
            step_id=RELEASE_CHOICE_READ,
        ),
    ]


# The newest releases of every service the subject may read by as_of, whenever they were.
LATEST_TENANT_RELEASES_TEMPLATE = "latest_deployments_tenant"


def latest_release_choice_steps(as_of: datetime) -> list[PlanStep]:
    """The newest releases of every service the subject may read by as_of, whenever they
    were: the candidates for "the release" when `release_choice_steps` found none in the
    day before as_of (asked after the fact: an audit, "what changed before the release?")."""
    return [
        _step(
            LATEST_TENANT_RELEASES_TEMPLATE,
            {"to": _iso(as_of)},
            "deployment_time",
            step_id=RELEASE_CHOICE_READ,
        )
    ]


def release_incidents_steps(as_of: datetime) -> list[PlanStep]:
    """The incidents open in the `DEPLOY_LOOKBACK` before as_of, each with the services it
    affected (`incidents_in_period`): read to weigh the candidates for "the release" of a
    correlation question naming no service by the incident they may have caused."""
    window = {"from": _iso(shift(as_of, -DEPLOY_LOOKBACK)), "to": _iso(as_of)}
    return [_step("incidents_in_period", window, "incident_report", step_id=RELEASE_INCIDENTS_READ)]


def release_path_steps(services: Sequence[str]) -> list[PlanStep]:
    """What each of `services` (an incident's affected services) depends on (DEPENDS_ON out
    of it, one hop): the services on the incident's error path, whose releases are weighed
    for "the release" beside the affected services' own."""
    return [
        _one_hop_step(svc, "DEPENDS_ON", "out", "dependency", step_id=RELEASE_PATH_READ)
        for svc in services
    ]


def release_errors_steps(services: Sequence[str]) -> list[PlanStep]:
    """The errors each of `services` emitted (EMITTED out of it), read to tell which service
    with a release among the candidates for "the release" had errors after it. Typed
    `dependency`, so its key is not the focus service's own `EMITTED_READ`."""
    return [
        _one_hop_step(svc, "EMITTED", "out", "dependency", step_id=RELEASE_ERRORS_READ)
        for svc in services
    ]


def focus_services(known: Known, service_id: str | None) -> list[str]:
    """The services the question is about: the one given, else the first known ones.

    When the question's own words lead to other services than `--service` (`Known.worded`:
    "the 10:02 release of payment-api" asked with a `--service svc:checkout` left in the
    shell's history), those come first and `--service` after: what the question names is
    read and answered, never set aside for the flag."""
    if service_id:
        worded = [s for s in known.worded if s != service_id]
        return [*worded, service_id][:MAX_FOCUS_SERVICES]
    return known.services[:MAX_FOCUS_SERVICES]


def competing_cause_steps(
    intents: Sequence[Intent | str], known: Known, *, as_of: datetime, focus: Sequence[str]
) -> list[PlanStep]:
    """The checks a correlation verdict (or an open root-cause question's list of candidate
    causes) needs for the window before the first error.

    Other changes (config, rules, flags: every change event of the tenant) in the confounder
    window; other deployments of the focus services in the deployment lookback; the focus
    services' upstream dependencies (looked up as soon as a focus service is known), and
    their deployments in the confounder window. The window checks wait until the first error
    is known by `as_of` (without it the verdict is `uncertain` anyway).
    """
    if not CAUSE_INTENTS & {str(i) for i in intents}:
        return []
    steps = [_one_hop_step(svc, "DEPENDS_ON", "out", step_id=UPSTREAM_CHECK) for svc in focus]
    if known.first_seen is None or known.first_seen > as_of:
        return steps
    anchor = known.first_seen
    window_from = shift(anchor, -CHANGE_LOOKBACK)
    steps.append(
        _step(
            "change_events_in_window",
            {"from": _iso(window_from), "to": _iso(anchor)},
            "change_event",
            options={"scope": "all"},
            step_id=CHECK_PREFIX + "changes",
        )
    )
    # The focus services over the deployment lookback, then their other upstream services
    # over the confounder window.
    deployment_checks = [
        *((svc, shift(anchor, -DEPLOY_LOOKBACK), "deployments") for svc in focus),
        *((svc, window_from, "upstream-deployments") for svc in known.upstream if svc not in focus),
    ]
    for svc, since, check in deployment_checks:
        steps.append(
            _step(
                "deployments_in_window",
                {"service_id": svc, "from": _iso(since), "to": _iso(anchor)},
                "deployment_time",
                step_id=CHECK_PREFIX + check,
            )
        )
    # A focus service's rollout under way when the first error came: its deployment time
    # (the finish) is after the error, so the window above misses it, at any as_of.
    steps += [
        _step(
            "rollouts_under_way",
            {"service_id": svc, "at": _iso(anchor)},
            "deployment_time",
            step_id=CHECK_PREFIX + "rollouts",
        )
        for svc in focus
    ]
    return steps


def period_change_steps(
    intents: Sequence[Intent | str],
    asked: TimeReferences,
    *,
    as_of: datetime,
    focus: Sequence[str],
    event_period: EventPeriod | None = None,
) -> list[PlanStep]:
    """The reads of a change question over the period it names ("what changed in the last
    hour", "in July 2026", "since March", or once its event is placed "the day before the
    incident": `event_period`): every change event of the tenant, and each focus
    service's releases (with none, the releases of every service the subject may read), from
    the period's start to its end (as_of when later); a release
    question ("which releases of X in July 2026?") reads the releases alone. "Before the
    release" alone (`EventPeriod.last_only`) reads each focus service's latest releases by
    its end instead (newest first: the last one is never cut off). None for a
    correlation or root-cause question (their window is the one before the first error)."""
    wanted = {str(i) for i in intents}
    changes = Intent.CHANGE_HISTORY.value in wanted
    if not (changes or Intent.RELEASE_LOOKUP.value in wanted) or wanted & {
        Intent.DEPLOYMENT_CORRELATION.value,
        Intent.ROOT_CAUSE.value,
    }:
        return []
    period = asked.period
    if event_period is not None:
        start, end = event_period.bounds
    elif period is None or period[0].at > as_of:
        return []
    else:
        start, end = period[0].at, min(period[1].at, as_of)
    window = {"from": _iso(start), "to": _iso(end)}
    last_only = event_period is not None and event_period.last_only
    releases = (
        [
            _step(
                "latest_deployments",
                {"service_id": svc, "to": _iso(end)},
                "deployment_time",
                step_id=PERIOD_CHANGES_CHECK,
            )
            for svc in focus
        ]
        if last_only
        else [
            _step(
                "deployments_in_window",
                {"service_id": svc, **window},
                "deployment_time",
                step_id=PERIOD_CHANGES_CHECK,
            )
            for svc in focus
        ]
    )
    return [
        *(
            [
                _step(
                    "change_events_in_window",
                    window,
                    "change_event",
                    options={"scope": "all"},
                    step_id=PERIOD_CHANGES_CHECK,
                )
            ]
            if changes
            else []
        ),
        *releases,
        *_tenant_release_steps(window, focus),
        *_period_rollout_steps(end, focus),
        *(record_change_steps(start, end, focus) if changes and not last_only else []),
    ]


def record_change_steps(start: datetime, end: datetime, focus: Sequence[str]) -> list[PlanStep]:
    """The reads of what else a change question's period changed of each focus service: its
    owners (from 1 s before the start, so an owner whose record ends at the start, the side
    handed over from, is read too), its runbooks with their version chains, and its own
    dependencies (one DEPENDS_ON hop out): claims.changes._record_changes_in_period lists
    the handovers, versions and dependencies that began or ended in the period."""
    steps: list[PlanStep] = []
    for svc in focus:
        steps += [
            _step(
                "ownership_in_period",
                {
                    "service_id": svc,
                    "from": _iso(shift(start, -timedelta(seconds=1))),  # 0001-01-01: no overflow
                    "to": _iso(end),
                },
                "ownership",
                step_id=PERIOD_CHANGES_CHECK,
            ),
            _step(
                "runbooks_for",
                {"anchor_id": svc},
                "runbook",
                options={"anchor": "service"},
                step_id=PERIOD_CHANGES_CHECK,
            ),
            _one_hop_step(svc, "DEPENDS_ON", "out", "dependency", step_id=PERIOD_CHANGES_CHECK),
        ]
    return steps


# The retractions of a change question's period (`period_retraction_steps`).
PERIOD_RETRACTIONS_CHECK = CHECK_PREFIX + "period-retractions"


def period_retraction_steps(start: datetime, end: datetime, focus: Sequence[str]) -> list[PlanStep]:
    """The reads of the retractions a change question's period holds (`retractions_in_period`:
    the tombstones of DEPENDS_ON and OWNS records recorded from `start` to `end`): those of
    each focus service's edges (its dependencies, dependents and owners), else, with no
    service focused ("what changed between July 1 and July 15?"), every one of the tenant the
    subject may read (also when the run found services on the way but the question names
    none). Read after the search in a recorded round of its own (retrieval.py): the
    gate admits current records only, and a tombstone is what the answer says of them
    (claims.changes._retractions_in_period)."""
    window = {"from": _iso(start), "to": _iso(end)}
    if not focus:
        return [
            _step(
                "retractions_in_period",
                window,
                "entity",
                options={"scope": "all"},
                step_id=PERIOD_RETRACTIONS_CHECK,
            )
        ]
    return [
        _step(
            "retractions_in_period",
            {**window, "service_id": svc},
            "entity",
            options={"scope": "service"},
            step_id=PERIOD_RETRACTIONS_CHECK,
        )
        for svc in focus
    ]


def asks_changes_naming_nothing(
    intents: Sequence[Intent | str], question: str, service_id: str | None
) -> bool:
    """Whether a change question names no service (nor `--service`), error, alert, release
    or id, and no time but "then" ("did anything change then?", "what changed then?"): no
    error can date a window, so the tenant's changes before as_of are what it asks."""
    wanted = {str(i) for i in intents}
    if Intent.CHANGE_HISTORY.value not in wanted or wanted & {
        Intent.DEPLOYMENT_CORRELATION.value,
        Intent.ROOT_CAUSE.value,
    }:
        return False
    if service_id or extract_mentions(question).texts():
        return False
    return said_then_at_most(question)


def said_then_at_most(question: str) -> bool:
    """Whether the question's time words are none or a bare "then" ("at that time"): the
    moment of the first error, else as_of (no period, no other event, no instant)."""
    said = time_references(question)
    if said.explicit or said.unresolved or said.now or said.relative:
        return False
    return said.event is None or (said.event is AnchorEvent.FIRST_ERROR and said.side is None)


def unnamed_change_steps(
    intents: Sequence[Intent | str], question: str, service_id: str | None, as_of: datetime
) -> list[PlanStep]:
    """The reads of a change question naming nothing (`asks_changes_naming_nothing`): every
    change event and every release the subject may read in the `DEPLOY_LOOKBACK` before
    as_of (claims.changes._changes_by_as_of lists them and says the window)."""
    if not asks_changes_naming_nothing(intents, question, service_id):
        return []
    window = {"from": _iso(shift(as_of, -DEPLOY_LOOKBACK)), "to": _iso(as_of)}
    return [
        _step(
            "change_events_in_window",
            window,
            "change_event",
            options={"scope": "all"},
            step_id=UNNAMED_CHANGES_CHECK,
        ),
        _step(
            "deployments_in_window_tenant",
            window,
            "deployment_time",
            step_id=UNNAMED_CHANGES_CHECK,
        ),
    ]


def _period_rollout_steps(end: datetime, focus: Sequence[str]) -> list[PlanStep]:
    """The releases rolling out at the period's end (as_of when earlier): their deployment
    time, the finish, lies after the period, so no window read above holds one that started
    in it (claims/changes.py says those started in the period as under way)."""
    at = {"at": _iso(end)}
    if not focus:
        return [
            _step("rollouts_under_way_tenant", at, "deployment_time", step_id=PERIOD_CHANGES_CHECK)
        ]
    return [
        _step(
            "rollouts_under_way",
            {"service_id": svc, **at},
            "deployment_time",
            step_id=PERIOD_CHANGES_CHECK,
        )
        for svc in focus
    ]


def _tenant_release_steps(window: dict[str, str], focus: Sequence[str]) -> list[PlanStep]:
    """With no service named ("What changed in the last hour?"), the releases of every
    service the subject may read in the period: without them a list of change events would
    pass for every change, the release that finished in the window left out."""
    if focus:
        return []
    return [
        _step(
            "deployments_in_window_tenant",
            window,
            "deployment_time",
            step_id=PERIOD_CHANGES_CHECK,
        )
    ]


def cause_document_steps(
    intents: Sequence[Intent | str], known: Known, *, as_of: datetime
) -> list[PlanStep]:
    """The documents about each change the competing-cause checks found before the first
    error (a release, a change event): what mechanism evidence says of a change (names it,
    rules it out) must not depend on whether a text hit or an earlier lookup happened to
    bring its postmortem in, or two phrasings of one question rate it differently."""
    if not CAUSE_INTENTS & {str(i) for i in intents}:
        return []
    if known.first_seen is None or known.first_seen > as_of:
        return []
    window_from = shift(known.first_seen, -DEPLOY_LOOKBACK)
    changes = [
        *(r.id for r in known.releases if window_from <= r.at <= known.first_seen),
        *known.deployments,
        *known.changes,
    ]
    # The same step (evidence type "document") as a release learned as an anchor gets.
    steps = [_step("documents_about", {"entity_id": c}, "document") for c in dict.fromkeys(changes)]
    if Intent.DEPLOYMENT_CORRELATION.value in {str(i) for i in intents}:
        # A verdict weighs the window's changes against each other: the incident's documents
        # (a draft postmortem naming the risk rules, linked to the incident alone) are read
        # too, with the step an incident's mechanism gets, not only when a text hit brings
        # them (before h30-draft the seed at known_at 07-24 08:00 never read the draft).
        steps += [_step("documents_about", {"entity_id": i}, "mechanism") for i in known.incidents]
    return steps


def rollback_document_steps(known: Known, question: str) -> list[PlanStep]:
    """The documents about each incident known when the question asks whether the runbook
    was followed or about a rollback: the postmortem that records the rollback must be read
    whether the question names the incident in words ("the payments incident") or its error
    code (PAY-4097), not only when a text hit happened to bring it in."""
    if not (asks_about_rollback(question) or asks_action_taken(question)):
        return []
    # The same step (evidence type "mechanism") as an incident's mechanism gets.
    return [_step("documents_about", {"entity_id": inc}, "mechanism") for inc in known.incidents]


# Intents whose answer is about a release the question may name.
_RELEASE_INTENTS = frozenset({Intent.DEPLOYMENT_CORRELATION.value, Intent.RELEASE_LOOKUP.value})


def named_release_lookup_steps(
    intents: Sequence[Intent | str], mentions: Mentions
) -> list[PlanStep]:
    """Resolve the releases a correlation or release question names (service and
    deployment time)."""
    if not _RELEASE_INTENTS & {str(i) for i in intents}:
        return []
    return [
        _step(
            "entity_resolution",
            # A release named by its version is sought by it (entity_resolution 6 finds a
            # release of that version whatever its name); its id as it is.
            {"text": (release_version(name) or name)[:200]},
            "entity",
            options={"label": "Deployment"},
            step_id=NAMED_RELEASE_LOOKUP,
        )
        for name in mentions.release_names()
    ]


def named_release_steps(
    intents: Sequence[Intent | str], known: Known, question: str, focus: Sequence[str]
) -> list[PlanStep]:
    """Fetch each release the question names as deployment-time evidence, at its own time.

    The deployment checks look back from the first error only a day; a release named in
    the question is what the verdict (or the question: "when did release X finish?",
    "before the release X deploy") is about, wherever it lies (`named_release_lookup_steps`
    resolved its service and time).
    """
    if not _RELEASE_INTENTS & {str(i) for i in intents}:
        return []
    names = extract_mentions(question).release_names()
    steps: list[PlanStep] = []
    for release in known.releases:
        if not release.named_in(names):
            continue
        for svc in [release.service] if release.service else list(focus):
            steps.append(
                _step(
                    "deployments_in_window",
                    {"service_id": svc, "from": _iso(release.at), "to": _iso(release.at)},
                    "deployment_time",
                    step_id=NAMED_RELEASE_CHECK,
                )
            )
    return steps


def named_release_services(known: Known, question: str) -> list[str]:
    """The services of the releases the question names, as the named-release lookup
    resolved them (sorted): a release named by version or id is that service's."""
    names = extract_mentions(question).release_names()
    return sorted({r.service for r in known.releases if r.service and r.named_in(names)})


def _note_release(known: Known, el: Any) -> bool:
    """Record a Deployment record's service and deployment time (as the window templates
    read it: finished_at, else started_at, else valid_from)."""
    props = el.props or {}
    at = (
        instant_of(props.get("finished_at")) or instant_of(props.get("started_at")) or el.valid_from
    )
    if at is None or any(r.id == el.element_id for r in known.releases):
        return False
    service = props.get("service")
    known.releases.append(
        KnownRelease(
            id=el.element_id,
            name=el.name,
            service=service if isinstance(service, str) and service.startswith("svc:") else None,
            at=at,
            started=instant_of(props.get("started_at")),
            version=props["release"] if isinstance(props.get("release"), str) else None,
        )
    )
    known.releases.sort(key=lambda r: r.id)
    return True


def note_check_rows(known: Known, rows: Sequence[Any], focus: Sequence[str]) -> bool:
    """Record what a check's rows show: the services the focus services depend on, when
    a named alert fired (a FIRED_ON record: `fired_at`, else its valid_from), and the
    service and deployment time of a release."""
    changed = False
    for row in rows:
        el = row.element
        if el.kind == "node" and el.type == "Deployment":
            # Not progress by itself: the named-release fetch it enables is a must-run step.
            _note_release(known, el)
            continue
        if el.kind == "node" and el.type == "ChangeEvent":
            # Not progress by itself either: its documents are read as a must-run step.
            if el.element_id not in known.changes:
                known.changes.append(el.element_id)
                known.changes.sort()
            continue
        if el.type == "FIRED_ON":
            fired = instant_of(el.props.get("fired_at")) or el.valid_from
            alert = str(row.context.get("start") or el.element_id)
            if fired is not None and (fired, alert, el.element_id) not in known.alerts_fired:
                known.alerts_fired.append((fired, alert, el.element_id))
                known.alerts_fired.sort()
                changed = True
        neighbour = row.context.get("neighbour")
        if (
            isinstance(neighbour, str)
            and neighbour.startswith("svc:")
            and neighbour not in focus
            and neighbour not in known.upstream
        ):
            known.upstream.append(neighbour)
            known.upstream.sort()
            changed = True
    return changed


def note_owner_changes(known: Known, service: str, records: Sequence[Any]) -> bool:
    """Record each change of owner a service's OWNS records show ("before the ownership
    change"): a record that starts after another team's record started, at its start. A
    record of the same team again (a correction, a re-recording) is no change."""
    dated = sorted(
        (ev.valid_from, str(ev.context.get("team") or ""), ev.element_id)
        for ev in records
        if ev.valid_from is not None and ev.context.get("team")
    )
    changed = False
    for (before, old, _), (at, new, record) in itertools.pairwise(dated):
        change = (at, service, f"of {service} from {old} to {new}", record)
        if old != new and before < at and change not in known.owner_changes:
            known.owner_changes.append(change)
            changed = True
    known.owner_changes.sort()
    return changed


def note_runbook_services(known: Known, rows: Sequence[Any]) -> bool:
    """Record the services a runbook chosen by the question's words applies to (the rows
    of its `RUNBOOK_SERVICES` step); True when any is new."""
    changed = False
    for row in rows:
        el = row.element
        runbook, service = row.context.get("start"), row.context.get("neighbour")
        if el.type != "APPLIES_TO" or not isinstance(runbook, str):
            continue
        if not isinstance(service, str) or kind_of(service) != "services":
            continue
        if (runbook, service) not in known.runbook_services:
            known.runbook_services.append((runbook, service))
            known.runbook_services.sort()
            changed = True
    return changed


def team_reference_steps(
    known: Known, *, references: Sequence[datetime], inp: PlanInput
) -> list[PlanStep]:
    """What each team asked about from its side owned, read again for each time the question
    refers to: a read made before "then" was placed had its records of then judged against
    as_of alone (`rejected_temporal`), so what the team owned then was lost."""
    return [
        _team_owns_step(team, inp.ownership_period, inp.as_of).model_copy(
            update={"step_id": AT_PREFIX + iso_utc(at)}
        )
        for at in references
        for team in known.teams[:MAX_TEAMS]
    ]


def reference_steps(
    intents: Sequence[Intent | str],
    known: Known,
    *,
    references: Sequence[datetime],
    focus: Sequence[str],
) -> list[PlanStep]:
    """State lookups (owner, runbook) repeated for each time the question refers to.

    The gate admits a state record valid at `as_of` or at a reference time; a lookup that ran
    before the reference was known is run again, so the owner "then" is not lost.
    """
    names = {str(i) for i in intents}
    owners = Intent.OWNERSHIP_AT_TIME.value in names
    runbooks = Intent.APPLICABLE_RUNBOOK.value in names
    # Services: owner, then runbook; error codes and named runbooks: runbook only.
    anchors = [
        *((svc, "service") for svc in focus),
        *((code, "error_code") for code in known.error_codes[:MAX_FOCUS_SERVICES]),
        *((runbook, "runbook") for runbook in known.runbooks[:MAX_FOCUS_SERVICES]),
    ]
    steps: list[PlanStep] = []
    for at in references:
        tag = AT_PREFIX + iso_utc(at)
        for anchor_id, anchor in anchors:
            if owners and anchor == "service":
                steps.append(
                    _step(
                        "ownership_over_time", {"service_id": anchor_id}, "ownership", step_id=tag
                    )
                )
            elif owners and anchor == "runbook":
                steps.append(_step("owners_of", {"entity_id": anchor_id}, "ownership", step_id=tag))
            if runbooks:
                steps.append(
                    _step(
                        "runbooks_for",
                        {"anchor_id": anchor_id},
                        "runbook",
                        options={"anchor": anchor},
                        step_id=tag,
                    )
                )
    return steps


# What a rejection of a runbook version says of the version in force: only that the one read
# was not it (an older or newer version); any other reason is the gate's answer about it.
_NOT_THE_VERSION = frozenset({"rejected_temporal", "rejected_superseded"})


def _page_of(runbook_id: str) -> str:
    """A runbook id without its version (`runbook:ops@d60a242f6397` -> `runbook:ops`)."""
    return runbook_id.split("@", 1)[0]


def _valid_at(ev: Any, at: datetime) -> bool:
    """Whether evidence's valid time holds `at` (an open end holds)."""
    return (ev.valid_from is None or ev.valid_from <= at) and (
        ev.valid_to is None or at < ev.valid_to
    )


def version_in_force_steps(
    intents: Sequence[Intent | str],
    known: Known,
    gate: Any,
    *,
    as_of: datetime,
    references: Sequence[datetime],
) -> list[PlanStep]:
    """`runbook_version_at` for each runbook page the question names whose chain was read
    (`runbooks_for`, four SUPERSEDES steps) without reaching its version valid at as_of or at
    a time the question refers to: a page of many versions (a git history's) whose heading
    hits are all old versions. One read per page and time, as the card reads it."""
    if Intent.APPLICABLE_RUNBOOK.value not in {str(i) for i in intents}:
        return []
    # One version of each page stands for its chain (the versions of one page share it).
    pages = {_page_of(r): r for r in sorted(known.runbooks, reverse=True)}
    pages = {page: pages[page] for page in sorted(pages)[:MAX_FOCUS_SERVICES]}
    admitted = [ev for ev in gate.admitted if _page_of(ev.element_id) in pages]
    read = {_page_of(ev.element_id) for ev in admitted}
    judged: set[str] = set()
    for rej in gate.rejected:
        read.add(_page_of(rej.element_id))
        if str(rej.reason) not in _NOT_THE_VERSION:
            judged.add(_page_of(rej.element_id))  # a version refused on its merits
    steps: list[PlanStep] = []
    for at in [as_of, *(t for t in references if t != as_of)]:
        tag = None if at == as_of else AT_PREFIX + iso_utc(at)
        for page, runbook in pages.items():
            if page not in read or page in judged:
                continue  # its chain not read yet (runbooks_for first), or the gate's answer
            if any(_page_of(ev.element_id) == page and _valid_at(ev, at) for ev in admitted):
                continue
            params = {"runbook_id": runbook, "at": _iso(at)}
            steps.append(_step("runbook_version_at", params, "runbook", step_id=tag))
    return steps


def unique_steps(steps: Iterable[PlanStep]) -> list[PlanStep]:
    """Steps in order, the first of each step key kept."""
    seen: set[str] = set()
    out: list[PlanStep] = []
    for step in steps:
        key = step_key(step)
        if key not in seen:
            seen.add(key)
            out.append(step)
    return out


class CompetingCauseChecks(BaseModel):
    """Which competing-cause checks ran for the window before the first error."""

    anchor: datetime | None = None
    window_from: datetime | None = None
    upstream: list[str] = Field(default_factory=list)
    ran: list[str] = Field(default_factory=list)
    not_run: list[str] = Field(default_factory=list)

    @property
    def complete(self) -> bool:
        """True when every check ran without error (and there was a window to check)."""
        return self.anchor is not None and not self.not_run


def _normal(value: Any) -> Any:
    if isinstance(value, datetime):
        return iso_utc(value)
    if isinstance(value, str) and re.match(r"^\d{4}-\d{2}-\d{2}T", value):
        try:
            return iso_utc(datetime.fromisoformat(value.replace("Z", "+00:00")))
        except ValueError:
            return value
    return value


def _describe(step: PlanStep) -> str:
    params = ", ".join(f"{k}={_normal(v)}" for k, v in sorted(step.params.items()))
    return f"{step.template_id}({params})"


def competing_cause_status(
    intents: Sequence[Intent | str],
    known: Known,
    tool_calls: Sequence[Any],
    *,
    as_of: datetime,
    focus: Sequence[str],
) -> CompetingCauseChecks:
    """Match the checks the window needs against the tool calls that succeeded.

    `tool_calls` are the run's `ToolCallRecord` items (template `id@version`, params,
    options, evidence_type, error); a call that failed or timed out did not check anything.
    """
    first_by_as_of = known.first_seen is not None and known.first_seen <= as_of
    expected = (
        competing_cause_steps(intents, known, as_of=as_of, focus=focus) if first_by_as_of else []
    )
    status = CompetingCauseChecks(
        anchor=known.first_seen if expected else None,
        window_from=shift(known.first_seen, -CHANGE_LOOKBACK)
        if expected and known.first_seen
        else None,
        # A focus service is never its own competing cause (one the words name may have been
        # read as upstream of `--service` before the words led to it).
        upstream=[svc for svc in known.upstream if svc not in focus],
    )
    done = [
        tc
        for tc in tool_calls
        if getattr(tc, "error", None) is None and getattr(tc, "template", None)
    ]
    for step in expected:
        params = {k: _normal(v) for k, v in step.params.items()}
        hit = any(
            str(tc.template).split("@", 1)[0] == step.template_id
            and tc.evidence_type == step.evidence_type
            and {k: _normal(v) for k, v in dict(tc.params).items() if k in params} == params
            and all(dict(tc.options).get(k, v) == v for k, v in step.options.items())
            for tc in done
        )
        (status.ran if hit else status.not_run).append(_describe(step))
    return status


def followup_steps(
    intents: Sequence[Intent | str], known: Known, gate: Any, inp: PlanInput
) -> list[PlanStep]:
    """The steps a run must take before it may stop for sufficiency.

    Resolves the question's time references against what the gate admitted so far and hands
    them to the gate (`GatePolicy.reference_times`), then returns the lookups repeated at
    those times and the competing-cause checks of the window.
    """
    focus = service_period_focus(focus_services(known, inp.service_id), inp.question)
    # A change question's amount before an event is its period's length (`asks_changes`).
    asked = time_references(inp.question, inp.as_of, spans=asks_changes(intents))
    late: list[ReferenceTime] = []
    refs = reference_times(
        asked,
        gate.admitted,
        as_of=inp.as_of,
        first_seen=known.first_seen,
        services=focus,
        alerts_fired=known.alerts_fired,
        releases=[
            SeenEvent(r.at, r.name or r.id, r.service, r.id, r.started) for r in known.releases
        ],
        known_at=inp.known_at,
        release_history_read=bool(focus) and set(focus) <= set(known.release_histories),
        late=late,
        owner_changes=[
            (at, name, record) for at, svc, name, record in known.owner_changes if svc in focus
        ],
    )
    known.references, known.late_references = refs, late
    instants = sorted({r.at for r in refs})
    if instants != list(gate.policy.reference_times):
        gate.policy = gate.policy.model_copy(update={"reference_times": instants})
    # "What changed the day before the incident?": once the incident is placed, the period
    # its words name is read and listed, not the window before the first error.
    event_period = event_change_period(intents, inp.question, inp.as_of, refs, late)
    if event_period is not None and event_period.bounds != gate.policy.change_period:
        gate.policy = gate.policy.model_copy(update={"change_period": event_period.bounds})
    # The release a time word was placed at: its record is evidence too (trace/replay show
    # why that moment), read again when no step admitted it. "Before the release" alone:
    # the last release of each focus service by then is the answer, admitted likewise.
    admitted = {ev.element_id for ev in gate.admitted}
    anchor_ids = sorted(
        {r.element_id for r in refs if r.kind == "event" and r.element_id}
        | set(_last_releases(known, focus, event_period))
    )
    anchor_releases = [r for r in known.releases if r.service and r.id in anchor_ids]
    if anchor_ids != list(gate.policy.anchor_ids):
        gate.policy = gate.policy.model_copy(update={"anchor_ids": anchor_ids})
    finishes = _approval_release_finishes(intents, known, focus, inp)
    if finishes != list(gate.policy.release_finishes):
        gate.policy = gate.policy.model_copy(update={"release_finishes": finishes})
    # The policies read before the release was placed were judged at as_of alone (one
    # replaced since was dropped): read again at its finish when none admitted held then.
    policy_steps = [
        _step(
            "runbooks_for",
            {"anchor_id": svc},
            "runbook",
            options={"anchor": "service"},
            step_id=AT_PREFIX + iso_utc(at),
        )
        for at in finishes
        if not any("policy" in ev.evidence_types and _valid_at(ev, at) for ev in gate.admitted)
        for svc in focus
    ]
    anchor_steps = [
        _step(
            "deployments_in_window",
            {"service_id": r.service, "from": _iso(r.at), "to": _iso(r.at)},
            "deployment_time",
            step_id=THEN_RELEASE_CHECK,
        )
        for r in anchor_releases
        if r.id not in admitted
    ]
    alert_steps = [
        _one_hop_step(alert, "FIRED_ON", "out", step_id=ALERT_FIRED_CHECK)
        for alert in known.alerts[:MAX_FOCUS_SERVICES]
        if asked.event is AnchorEvent.ALERT
    ]
    # The firing taken as the moment, read again once placed (its first read was judged
    # before: `low_relevance`). Both directions: the same records, as a call of its own.
    alert_steps += [
        _one_hop_step(alert, "FIRED_ON", "both", step_id=THEN_ALERT_CHECK)
        for _, alert, record in known.alerts_fired
        if record in anchor_ids and record not in admitted
    ]
    placed = any(r.kind == "event" for r in refs)
    # "During / for the incident", "did the responders follow ...", "who was paged": its
    # start is the time, so the incidents of the focus services and their records are read
    # even when nothing else wants them (until the event is placed).
    incident_steps: list[PlanStep] = []
    if asked.event in (AnchorEvent.INCIDENT_START, AnchorEvent.INCIDENT_END) and not placed:
        incident_steps = [
            _one_hop_step(svc, "AFFECTED_BY", "both", step_id=NAV_PREFIX + "incidents")
            for svc in focus
            if not known.incidents
        ] + [
            _step("incident_context", {"incident_id": inc}, "error_first_seen")
            for inc in known.incidents[:MAX_FOCUS_SERVICES]
        ]
    # The plain "then" is the first error: until one is placed, the errors the focus services
    # emitted are read (an EMITTED record is known minutes before the incident record that
    # would lead to them), and, when no error or only one older than a day is known, their
    # newest releases by as_of (one just before as_of is the nearer event). So for a
    # correlation or "before the errors" naming no error: an incident record is not the only
    # way to them (none filed yet, or one this subject may not read).
    plain_then = asked.event is AnchorEvent.FIRST_ERROR and asked.side is None
    correlation = Intent.DEPLOYMENT_CORRELATION.value in {str(i) for i in intents}
    reads_errors = asked.event is AnchorEvent.FIRST_ERROR or correlation
    error_steps = [
        _one_hop_step(svc, "EMITTED", "out", step_id=EMITTED_READ)
        for svc in focus
        if reads_errors and not placed and known.first_seen is None
    ]
    stale = known.first_seen is None or known.first_seen < shift(inp.as_of, -EPISODE)
    # "Before the errors" asks what changed, as a correlation does: the same releases by as_of.
    before_errors = asked.event is AnchorEvent.FIRST_ERROR and asked.side is EventSide.BEFORE
    # A correlation (or "before the errors") whose errors were read and none is of an episode
    # by as_of (they came after it, or long before, or the focus services emitted none): a
    # rollout under way at as_of is the release it can be about, and its window (of
    # finishes, ending at as_of) misses it. Not before the errors are read: the first round
    # would read it for every correlation.
    correlation_at_as_of = (correlation or before_errors) and (
        not shift(inp.as_of, -EPISODE) <= known.first_seen <= inp.as_of
        if known.first_seen is not None
        else bool(focus) and set(focus) <= set(known.errors_read)
    )
    # Words that pick a release ("the most recent release") pick it among those by as_of.
    picked = release_pick(asked.event_words) is not None
    release_steps = [
        _step(
            "latest_deployments",
            {"service_id": svc, "to": _iso(inp.as_of if picked else anchor_time(known, inp.as_of))},
            "deployment_time",
            step_id=LATEST_RELEASE_CHECK,
        )
        for svc in focus
        if asked.event is AnchorEvent.RELEASE and not placed
    ] + [
        # The newest releases by as_of: one just before it may be the nearer "then"; for a
        # release question, a rollout under way at as_of (a window ending there misses it).
        _step(
            "latest_deployments",
            {"service_id": svc, "to": _iso(inp.as_of)},
            "deployment_time",
            step_id=LATEST_RELEASE_CHECK,
        )
        for svc in focus
        if (plain_then and stale)
        or Intent.RELEASE_LOOKUP.value in {str(i) for i in intents}
        or correlation_at_as_of
    ]
    if asked.event is AnchorEvent.RELEASE and release_pick(asked.event_words) is ReleasePick.FIRST:
        # "Before the first release": the earliest releases by as_of (the window template
        # returns them oldest first), read once for each focus service.
        release_steps += [
            _step(
                "deployments_in_window",
                {"service_id": svc, "from": _iso(EARLIEST), "to": _iso(inp.as_of)},
                "deployment_time",
                step_id=FIRST_RELEASE_CHECK,
            )
            for svc in focus
            if svc not in known.release_histories
        ]
    return [
        *alert_steps,
        *anchor_steps,
        *policy_steps,
        *incident_steps,
        *error_steps,
        *release_steps,
        *reference_steps(intents, known, references=instants, focus=focus),
        *team_reference_steps(known, references=instants, inp=inp),
        *version_in_force_steps(intents, known, gate, as_of=inp.as_of, references=instants),
        # A period its words name is the answer, not the window before the first error.
        *(
            competing_cause_steps(intents, known, as_of=inp.as_of, focus=focus)
            if event_period is None
            else []
        ),
        *period_change_steps(
            intents, asked, as_of=inp.as_of, focus=focus, event_period=event_period
        ),
        *(cause_document_steps(intents, known, as_of=inp.as_of) if event_period is None else []),
        *rollback_document_steps(known, inp.question),
        *named_release_steps(intents, known, inp.question, focus),
        *alert_owner_steps(known, focus),
        *service_status_steps(intents, focus, inp.as_of),
        *firings_anywhere_steps(intents, inp, refs, late, gate.admitted),
        *team_firing_steps(intents, inp, known, gate.admitted),
        *trace_steps(known, inp),
        *(
            [step]
            if Intent.INCIDENT_LIST.value in {str(i) for i in intents}
            and (
                step := period_events_incident_step(inp, refs, late, gate.admitted)
                if period_events_asked(inp.question)
                else incident_list_step(inp.question, inp.as_of)
            )
            is not None
            else []
        ),
        *timeline_steps(intents, known, as_of=inp.as_of, focus=focus),
        *incident_of_code_steps(intents, known, gate, inp.question, focus),
    ]


def incident_of_code_steps(
    intents: Sequence[Intent | str],
    known: Known,
    gate: Any,
    question: str,
    focus: Sequence[str],
) -> list[PlanStep]:
    """ "How long was PAY-4097 open?", "when was the PAY-4097 incident resolved?": an incident
    question naming an error code asks about the incident of the services that emitted it.
    Until an incident record is admitted, its records are read as a timeline's are (the
    incidents of those services, then each incident's own context). Before, a report that
    supports `incident_report` ended the search and the incident record found by text was
    set aside (`low_relevance`): "no incident of PAY-4097 recorded"."""
    said = {str(i) for i in intents}
    if Intent.INCIDENT_LOOKUP.value not in said or Intent.TIMELINE.value in said:
        return []  # a timeline reads them itself (`timeline_steps`)
    if not extract_mentions(question).error_codes:
        return []
    if any(ev.type == "Incident" for ev in gate.admitted):
        return []
    return [
        _one_hop_step(svc, "AFFECTED_BY", "both", step_id=NAV_PREFIX + "incidents")
        for svc in focus[:MAX_FOCUS_SERVICES]
        if not known.incidents
    ] + [
        _step("incident_context", {"incident_id": inc}, "error_first_seen")
        for inc in known.incidents[:MAX_FOCUS_SERVICES]
    ]


def timeline_steps(
    intents: Sequence[Intent | str], known: Known, *, as_of: datetime, focus: Sequence[str]
) -> list[PlanStep]:
    """A timeline's reads past the first error: the releases of the focus services from
    `DEPLOY_LOOKBACK` before it, and the change events from `CHANGE_LOOKBACK` before it, up
    to as_of (the other reads end at the first error; a rollback during the incident is an
    event of its timeline). Claims keep those up to the incident's resolution."""
    if Intent.TIMELINE.value not in {str(i) for i in intents}:
        return []
    # The incident's own record (its start and resolution) and its affected-service periods
    # are events too: read even when a document already supports `incident_report`.
    steps = [
        _one_hop_step(svc, "AFFECTED_BY", "both", step_id=NAV_PREFIX + "incidents")
        for svc in focus[:MAX_FOCUS_SERVICES]
        if not known.incidents
    ] + [
        _step("incident_context", {"incident_id": inc}, "error_first_seen")
        for inc in known.incidents[:MAX_FOCUS_SERVICES]
    ]
    # The reports about each incident: the actions they state with a time ("Fix: rollback at
    # 10:41.") are listed among the events as their words, whatever found the incident (a
    # text hit brought the postmortem in for "PAY-4097", none for "the payments incident").
    steps += [
        _step("documents_about", {"entity_id": inc}, "mechanism")
        for inc in known.incidents[:MAX_FOCUS_SERVICES]
    ]
    if known.first_seen is None or known.first_seen > as_of:
        return steps
    start = known.first_seen
    steps += [
        _step(
            "deployments_in_window",
            {"service_id": svc, "from": _iso(shift(start, -DEPLOY_LOOKBACK)), "to": _iso(as_of)},
            "deployment_time",
        )
        for svc in focus[:MAX_FOCUS_SERVICES]
    ]
    steps.append(
        _step(
            "change_events_in_window",
            {"from": _iso(shift(start, -CHANGE_LOOKBACK)), "to": _iso(as_of)},
            "change_event",
            options={"scope": "all"},
        )
    )
    return steps


def _last_releases(known: Known, focus: Sequence[str], period: EventPeriod | None) -> list[str]:
    """For "what changed before the release?" (`EventPeriod.last_only`), the last release
    of each focus service finished by the period's end, as read so far."""
    if period is None or not period.last_only:
        return []
    last: dict[str, KnownRelease] = {}
    for r in sorted(known.releases, key=lambda r: (r.at, r.id)):
        if r.service is not None and r.service in focus and r.at <= period.end:
            last[r.service] = r
    return sorted(r.id for r in last.values())


def _approval_release_finishes(
    intents: Sequence[Intent | str], known: Known, focus: Sequence[str], inp: PlanInput
) -> list[datetime]:
    """Asked whether a release followed its change rule: the finishes of the releases named,
    else of each focus service's last release by as_of, as read so far (the releases the
    claims judge, `claims.releases.asked_releases`): the policy in force then governs it."""
    if Intent.RELEASE_LOOKUP.value not in {
        str(i) for i in intents
    } or "approval" not in unrecorded_asks(inp.question):
        return []
    names = extract_mentions(inp.question).release_names()
    if names:
        return sorted({r.at for r in known.releases if r.named_in(names)})
    by_as_of = [r for r in known.releases if r.at <= inp.as_of]
    clock = release_clock(inp.question)
    if clock is not None:
        # "The 10:02 release": the one of that minute, whichever service shipped it.
        return sorted(
            {by_as_of[i].at for i in at_clock(clock, [(r.at, r.started) for r in by_as_of])}
        )
    last: dict[str, KnownRelease] = {}
    for r in sorted(by_as_of, key=lambda r: (r.at, r.id)):
        if r.service is not None and r.service in focus:
            last[r.service] = r
    return sorted({r.at for r in last.values()})


def service_status_steps(
    intents: Sequence[Intent | str], focus: Sequence[str], as_of: datetime
) -> list[PlanStep]:
    """For "is X healthy now?": each focus service's own record, and its latest releases by
    as_of with one whose rollout had started by then and not finished (latest_deployments),
    so the answer can say a release is under way (a window before as_of need not hold it)."""
    if Intent.SERVICE_STATUS.value not in {str(i) for i in intents}:
        return []
    steps = []
    for svc in focus[:MAX_FOCUS_SERVICES]:
        # The service's own record: what "no incident open" is said of (a name found by
        # the text search alone has none read).
        steps.append(
            _step("entity_resolution", {"text": svc}, "entity", options={"label": "Service"})
        )
        steps.append(
            _step("latest_deployments", {"service_id": svc, "to": _iso(as_of)}, "deployment_time")
        )
    return steps


ALERTS_FIRED_ON = NAV_PREFIX + "alerts-fired-on"


def alert_owner_steps(known: Known, focus: Sequence[str]) -> list[PlanStep]:
    """For a question asking the owner of an alert it does not name: the alerts that fired on
    each focus service (FIRED_ON into it, navigation), then the own owners (`owners_of`) of
    each found firing on it by as_of (`Known.alerts_fired_on`), as for an alert the question
    names; never an alert the run met otherwise (its incident's, which fired elsewhere)."""
    if not known.alert_owner_asked:
        return []
    steps = [
        _one_hop_step(svc, "FIRED_ON", "in", step_id=ALERTS_FIRED_ON)
        for svc in focus[:MAX_FOCUS_SERVICES]
    ]
    alerts = sorted({alert for _, alert in known.alerts_fired_on})
    steps += [
        _step("owners_of", {"entity_id": alert}, "ownership")
        for alert in alerts[:MAX_FOCUS_SERVICES]
    ]
    return steps
