"""Free text -> the runbook it is about, or "nothing fits" (issue 15).

An on-call engineer types the alert's summary, a sentence of the runbook, or what they see
("card payments failing, how do we recover payments"). The text becomes a fulltext query of
its informative words only (English and alert boilerplate stop words, numbers, times and
template noise dropped; words with digits such as 5xx, k8s or probe1 kept), which brings
back a generous set of candidates from the tenant's own index with the visibility predicate
applied in Cypher. The candidates are then re-ranked here, with
nothing but what they return. Words are compared by a light stem (recover, recovery,
recovering and recovered meet; so do restart/restarts/restarting, fail/failing/failure and
an agent noun and its verb, compactor/compact, ingester/ingest, querier/query):

- the fulltext score, normalised by the best one;
- how much of the query the runbook's *name and title* cover: `CephMonQuorumLost` is split
  into `ceph mon quorum lost`, which the Lucene analyzer cannot do, so a runbook named after
  the alert wins over its siblings that only mention the words;
- how much of the query its whole text covers;
- how many of the query's word pairs (adjacent informative words) its text has in the same
  order: a sentence taken from a runbook finds that runbook, not a sibling that has the same
  words apart ("The number of monitors in the storage cluster are not enough" is
  CephMonQuorumLost's, not CephMonLowNumber's);
- the share of the name's own words the query has;
- numbers of the query its text has (70 vs 90 between sibling thresholds), a small nudge.

The tenant's alert rules are searched with the same words too: an engineer often pastes the
alert's summary, and an alert whose own text (summary, description, annotations) covers the
query points at the runbook that applies to it, which then ranks first and fits.

Shares of the query weigh each word by its rarity among the candidates (`_rarity`: an IDF
counted as if there were at least `CANDIDATES` of them, so three candidates that all have a
word do not make it common; a word none of them uses weighs nothing while such words are
fewer than the others: it tells no runbook apart). Whether the best candidate *fits* (else
the lookup abstains: "no runbook fits") is decided on those shares, in one of three ways
(`RankedRunbook.fits_by`); the answer is the best ranked of the first `SHOWN` candidates
that fits, so a page that fits is not passed over for a better scored sibling that only
shares most of the words:

- `text`: its text has nearly all of the query (`QUOTE_FIT`) and, unless the query is a few
  keywords (`KEYWORDS`), half of its word pairs (`QUOTE_PAIRS`): a sentence quoted or
  closely paraphrased from the runbook;
- `alert`: an alert rule that applies to it has `ALERT_MATCH` of the query in its own text;
- `name`: the query names it (`NAME_FIT` of its name's or title's words are in the query, at
  least two) and its text has at least `FIT_THRESHOLD` of the query;
- `about`: its text has nearly all of the query (`QUOTE_FIT`), not together, and its lead
  (name, title, headings, first lines: `_lead`) has `ABOUT_LEAD` of it, two of its words
  together as the query has them: the page is about those words (a query of `ABOUT_WORDS`
  words at most: a sentence must be quoted). A page that fits by `text` with the words only
  deeper in its text gives way to the best ranked page about them ("oplog window too small":
  the oplog page, not the health check's table that mentions it);
- `words`: none of the above, but its text has every word of the query (two at least, words no
  runbook uses counted) and no other document's text has more than 40% of the query
  (`WORDS_FIT_APART`; "docker dangling images jenkins": the next page has 32%): the one page
  that could be meant, shown with a note that only its words found it.
  The other three ways come first among the candidates shown.

A query word that writes a run of a runbook's name words as one counts as those words for
that runbook (`_name_runs_written`): joined ("daemonset" of `VirtHandlerDaemonSetRollout...`,
"dataimportcron") or by their initials ("pv" of `PersistentVolumeFillingUp`, "vmis" of
`...VirtualMachineInstances`): what an on-call types for the component the name spells out.

Anything else, e.g. a query that shares many general words ("node", "storage", "class") with
a runbook but neither quotes it, pastes its alert, nor names it, abstains.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from cypher_templates.compiler import CONFIG_KEY_SUFFIX_TERMS, config_keys, is_config_key
from cypher_templates.plan import PlanStep
from graph_schema.alert_names import (
    finding_types,
    identifier_words,
    is_alert_name,
    is_camel_case,
)
from graph_schema.words import is_ideograph, is_written_apart
from graph_schema.words import words as text_words
from investigator.alert_rules import page_texts
from investigator.db_engines import (
    engine_word,
    engines_named,
    of_another_engine,
    page_engines,
    without_errors,
)
from investigator.evidence import Evidence
from investigator.runbook_fallback import LookupSteps
from investigator.stop_words import (
    APOSTROPHE_LESS_NEGATIONS,
    CHINESE_ACTION_PHRASES,
    CHINESE_FUNCTION_CHARACTERS,
    ENGLISH_STOP_WORDS,
    GENERIC_ACTION_WORDS,
    HURRIED_FILLER,
    QUANTITY_FILLER,
)

CANDIDATES = 30  # fulltext hits re-ranked (the template's row cap is 50)
SHOWN = 5  # the candidates a card lists under text matches: the answer is one of them
MAX_TERMS = 32
MAX_QUERY_CHARS = 500  # the fulltext_search template's `query` max_length
TITLE_WEIGHT = 1.0
TEXT_WEIGHT = 1.0
TITLE_PRECISION_WEIGHT = 0.5
PHRASE_WEIGHT = 1.0
NUMBER_WEIGHT = 0.25
# A title of the query's words and the number it names ("Quux variant 1" of a series of
# variants): a nudge over the titles of those words numbered otherwise, which never fit.
TITLE_NUMBER_WEIGHT = 0.25
# Fit rules (see the module docstring): shares of the query's distinct word stems.
FIT_THRESHOLD = 0.5  # the least share of the query a runbook named by it must cover
QUOTE_FIT = 0.9
QUOTE_PAIRS = 0.5
KEYWORDS = 3  # a query of at most this many words is keywords, not a sentence: no pairs needed
NAME_FIT = 0.6
WORDS_FIT_SIZE = 2  # the least words of a query a page fits by having them all
WORDS_FIT_APART = 0.6  # ... when no other page has more than 1 - this share of the query
ABOUT_LEAD = 0.5  # the least share of the query a page's lead has for it to be about it
ABOUT_WORDS = KEYWORDS + 1  # ... of at most this many words (a subject, not a sentence)
ALERT_CANDIDATES = 10
# The best ranked candidates found through an alert's link alone (no fulltext row to say it)
# checked for a newer record under another id (a renamed file): those the card lists, and
# one more to take the place of one left out.
RENAMES_CHECKED = SHOWN + 1
RENAMES_READ = 5  # records superseding one runbook read (one, unless imported twice)
# An alert rule whose own text (name, summary, description, annotations) covers this share of
# the query is taken to be the alert the user pasted: the runbooks applying to it get
# ALERT_WEIGHT times that share added, and fit at least as well as the alert does.
ALERT_MATCH = 0.8
ALERT_WEIGHT = 2.0
_ALERT_TEXT_PROPS = ("summary", "description", "message", "annotations_json")
# The annotations a page shows (`page_texts`; Alertmanager fills their `{{ $labels.x }}` in):
# an alert one of whose own texts has at least ALERT_OWN_MATCH of its words in the query, and
# ALERT_OWN_WORDS words at least, was pasted, whatever label values the page added.
ALERT_OWN_MATCH = 0.9
ALERT_OWN_WORDS = 2

# Words that say nothing about which runbook fits: English function words, the phrasing
# every alert description shares ("this alert fires when ...") and a hurried user's filler
# ("i think ... seems ... please help").
_ALERT_PHRASING = "alert alerts fire fires fired firing trigger triggers triggered triggering"
# What asks about the runbook itself ("... what did the runbook say then?"): every page is
# a runbook that says something, so the words name none; kept, rare ones, they sank the share
# the page asked about covered (a page's own title plus them abstained).
_ASKING_ABOUT_RUNBOOK = "runbook runbooks say says said"
STOP_WORDS = (
    ENGLISH_STOP_WORDS
    | frozenset(_ALERT_PHRASING.split())
    | HURRIED_FILLER
    | frozenset(_ASKING_ABOUT_RUNBOOK.split())
    | CHINESE_FUNCTION_CHARACTERS
    | GENERIC_ACTION_WORDS
    | QUANTITY_FILLER
    | APOSTROPHE_LESS_NEGATIONS
)
# Chinese filler of two characters or more (`CHINESE_ACTION_PHRASES`), taken out of a query
# before its words are read: its characters alone are often words of their own.
_CHINESE_FILLER = re.compile("|".join(map(re.escape, CHINESE_ACTION_PHRASES)))
# Words a runbook's title adds to its name without naming anything ("Payment recovery
# runbook v3"): left out when asking whether the query names the runbook.
_TITLE_FILLER = frozenset({"runbook", "runbooks", "playbook", "procedure", "alert"})
_TEMPLATE = re.compile(r"\{\{.*?\}\}", re.DOTALL)
_NUMBER = re.compile(r"[0-9]+")
_PLURAL_ES = ("sses", "xes", "ches", "shes", "zes")
# Derivational endings, longest first: utilization/utilize, failure/fail, recovery/recover.
_DERIVED = (("ation", ""), ("ion", ""), ("ure", ""), ("ery", "er"), ("ly", ""))
# An agent noun meets its verb (compactor/compact, ingester/ingest, scheduler/schedule,
# querier/query: components named after what they do) when at least this much is left: a
# shorter base is mostly a word of its own (header/head, number, leader/lead, error/err).
_AGENT_BASE = 5
# Nouns that only look like agent nouns of a common word: a container does not contain.
_NOT_AGENT = frozenset({"container", "counter", "customer", "descriptor", "pointer"})
# Agent nouns of a shorter verb that still name what they do (a worker works, a server
# serves): components an on-call names, unlike header/head or leader/lead.
_SHORT_AGENTS = frozenset({"server", "worker"})
# The root a noun in -ica keeps to meet its -ication noun (replica: replic).
_ICA_BASE = 4
# The least length of an -ick stem left by -ed/-ing that is a verb in -ic (panick: panic).
_IC_VERB = 6
# A stem this long ending in a doubled `l` meets its verb (controller and controlling read
# `controll`: control); shorter ones (poll, fill, kill) keep it.
_DOUBLE_L_STEM = 6


def _stem(word: str) -> str:
    """A light, fixed suffix stripper: enough for recover/recovery/recovering/recovered,
    restart/restarts/restarting, fail/failing/failure, mirrored/mirroring/mirrors and an
    agent noun and its verb (compactor/compact) to meet. Not a full stemmer: it only has to
    be the same on both sides of a comparison."""
    w = word
    if len(w) <= 3 or w.isdigit():
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(_PLURAL_ES):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            # stopped -> stop, running -> run (but pulling, missing keep their ll/ss)
            # panicked -> panic, trafficking -> traffic (a verb in -ic takes a k before
            # -ed/-ing; shorter ones are words in -ick: clicked, kicked, stuck)
            doubled = len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "lsz"
            if doubled or (w.endswith("ick") and len(w) >= _IC_VERB):
                w = w[:-1]
            break
    for suffix, replacement in _DERIVED:
        if w.endswith(suffix) and len(w) - len(suffix) >= 4:
            w = w[: -len(suffix)] + replacement
            break
    # A replica is what replication makes (replic): an alert about replicas reaches a
    # heading about replication. Not -ate verbs: saturated/saturation meeting tied pages.
    if w.endswith("ica") and len(w) - 3 >= _ICA_BASE:
        w = w[:-1]
    w = _agent_base(w)
    if w.endswith("ll") and len(w) >= _DOUBLE_L_STEM:
        w = w[:-1]
    if w.endswith("e") and len(w) >= 4:
        w = w[:-1]
    return w


def _agent_base(word: str) -> str:
    """The verb an agent noun is named after (querier -> query, compactor -> compact,
    shipper -> ship), else `word`: scheduler and schedule, ingester and ingestion meet."""
    if word in _NOT_AGENT:
        return word
    if word.endswith("ier") and len(word) - 3 >= 4:
        return word[:-3] + "y"
    if word.endswith(("er", "or")) and (len(word) - 2 >= _AGENT_BASE or word in _SHORT_AGENTS):
        base = word[:-2]
        # shipper -> ship, planner -> plan (controller keeps its ll here, like controlling)
        if base[-1] == base[-2] and base[-1] not in "lsz":
            base = base[:-1]
        return base
    return word


def _words(text: str) -> list[str]:
    """The words of `text` as the fulltext index has them, in any script (`graph_schema.words`:
    "gehörte" is one word, not "geh" and "rte"; "支付" is 支 and 付)."""
    return text_words(text)


# A number, with what only measures or places it: a one-letter unit (`120s`, `5m`, `1h30m`),
# a longer one (`500ms`, `10gb`), an ordinal (`2nd`), a clock's `am`/`pm` or an ISO time's
# `T`/`Z` (`23t10` and `00z` of `2026-07-23T10:04:00Z`), or a version (`v3`: the version in
# force is chosen by time, not by words). A word that names something with digits (5xx, 4xx,
# k8s, ipv6, http2, oom2, probe1) is none of these: it is searched for.
_NUMBER_WORD = re.compile(
    r"[0-9]+(?:[a-z][0-9]+)*[a-z]?|v[0-9]+"
    r"|[0-9]+(?:st|nd|rd|th|am|pm|ms|us|ns|sec|secs|min|mins|hr|hrs|kb|mb|gb|tb|kib|mib|gib"
    r"|tib|rps|qps)"
)


def _informative(word: str) -> bool:
    """A word that says which page is meant: no stop word, no number, two characters at
    least, or one Han ideograph (a word of its own to the index; not a function character)."""
    return (
        word not in STOP_WORDS
        and (len(word) >= 2 or is_ideograph(word))
        and not _NUMBER_WORD.fullmatch(word)
    )


def _query_text(text: str) -> str:
    """A query's text as its words are read: `{{ ... }}` template leftovers and Chinese
    filler phrases (处理, 解决, ...: `CHINESE_ACTION_PHRASES`) taken out."""
    return _CHINESE_FILLER.sub(" ", _TEMPLATE.sub(" ", text))


def search_terms(text: str) -> list[str]:
    """The informative words of `text`, in order, each once: what the fulltext query asks."""
    terms: list[str] = []
    for word in _words(_query_text(text)):
        if _informative(word) and word not in terms:
            terms.append(word)
    return terms[:MAX_TERMS]


# The longest run of adjacent query words joined into one term (`tor ip caller` ->
# `toripcaller`): a finding type's CamelCase name (`TorIPCaller`,
# `InstanceCredentialExfiltration`) is one token to the fulltext analyzer, in a page's title
# and in its file name and id (`unauthorizedaccess-iamuser-toripcaller`).
JOINED_WORDS = 4


def joined_terms(terms: list[str], limit: int) -> list[str]:
    """The runs of 2 to `JOINED_WORDS` adjacent `terms` joined into one word, each once and
    none a term already, as many as fit in the `limit` characters the terms leave: the query
    also finds the page whose title or file name writes those words as one CamelCase name.
    They only bring candidates (and a fulltext score): the ranking weighs the terms. Words
    of a script the analyzer cuts apart (Han, kana: `graph_schema.words`) are never joined:
    the index holds them apart, and no CamelCase name writes them."""
    room = limit - len(" ".join(terms))
    joined: list[str] = []
    for size in range(2, JOINED_WORDS + 1):
        for start in range(len(terms) - size + 1):
            run = terms[start : start + size]
            word = "".join(run)
            if word in terms or word in joined or any(is_written_apart(t) for t in run):
                continue
            if room - (1 + len(word)) < 0:
                return joined
            joined.append(word)
            room -= 1 + len(word)
    return joined


def fulltext_query(terms: list[str], keys: Sequence[str] = ()) -> str:
    """The fulltext query of the search's `terms`: the terms, their joined runs, then the
    config keys the text names (`max_size`: the compiler asks for the tokens ending with it,
    `db.pool.max_size`; the terms alone, `max` and `size`, are no token of it)."""
    kept = _within(list(keys), MAX_QUERY_CHARS - len(" ".join(terms)) - 1)
    room = MAX_QUERY_CHARS - (len(" ".join(kept)) + 1 if kept else 0)
    return " ".join(terms + joined_terms(terms, room) + kept)


def searched_words(query: str) -> str:
    """The words a fulltext query of `fulltext_query` asked, its joined runs left out (what
    a note names: "zebrafrost stalls", not "... zebrafroststalls"); any other query as it is."""
    tokens = query.split()
    # The config keys come last; no term or joined run has a `_` or `.` (`search_terms`).
    keys: list[str] = []
    while tokens and is_config_key(tokens[-1]):
        keys.insert(0, tokens.pop())
    room = MAX_QUERY_CHARS - (len(" ".join(keys)) + 1 if keys else 0)
    for k in range(len(tokens), 0, -1):
        if k < len(tokens) and tokens[k:] == joined_terms(tokens[:k], room):
            return " ".join(tokens[:k] + keys)
    return query


def search_keys(text: str) -> list[str]:
    """The config keys of `text` a search asks for besides its terms (`fulltext_query`)."""
    return config_keys(_query_text(text))[:CONFIG_KEY_SUFFIX_TERMS]


def _within(terms: list[str], limit: int) -> list[str]:
    """The first terms whose query (joined by spaces) is at most `limit` characters."""
    kept: list[str] = []
    length = -1
    for term in terms:
        if length + 1 + len(term) > limit:
            break
        kept.append(term)
        length += 1 + len(term)
    return kept


def _stem_sequence(words: list[str]) -> list[str]:
    """The stems of the informative words, in order (for word pairs)."""
    return [_stem(w) for w in words if _informative(w)]


def _pairs(sequence: list[str]) -> set[tuple[str, str]]:
    return set(itertools.pairwise(sequence))


def _numbers(text: str) -> set[str]:
    return set(_NUMBER.findall(text))


def _numbers_named(text: str) -> set[str]:
    """The numbers `text` writes as words of their own ("Quux variant 1": 1; not the 2 of
    `v2`, `2.8`, `10:05` or `2026-07-23`): what numbers one of a series."""
    tokens = (token.strip(".,;:!?()[]\"'") for token in text.split())
    return {str(int(token)) for token in tokens if token.isdigit() and token.isascii()}


# Candidates scoring within this share of the best one fit free text alike ("etcd": 3.08-3.20
# for 18 etcd runbooks; "etcd has no leader": 4.5, the next 2.4).
ALIKE_SCORE = 0.95


class RankedRunbook(BaseModel):
    """One candidate after re-ranking: its score and how much of the query it covers."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: str | None
    score: float
    fit: float  # the share of the query's word stems its name, title and text cover
    fulltext_score: float | None
    matched_alert: str | None = None  # the alert rule whose text the query matched
    # How it fits the query: "text" (quoted), "alert" (its alert pasted), "name" (named by
    # the query), "about" (its lead has the words), "words", or None: it does not fit.
    fits_by: str | None = None
    # The share of the query's numbers (`500` of CART-500) its text has; not in the output.
    number_fit: float = Field(default=0.0, exclude=True)
    # The share of the query its lead has (`_lead`: what the page is about), 0 when the lead
    # has none of the query's word pairs; not in the output.
    lead_fit: float = Field(default=0.0, exclude=True)
    # Titled with every word of the query's title words but another number than the one the
    # query names ("Quux variant 2" for "Quux variant 1"): another of a series, no fit.
    numbered_otherwise: bool = Field(default=False, exclude=True)
    # Whether its title may be quoted in a note (a trusted page's); not in the output.
    trusted: bool = Field(default=True, exclude=True)

    def named(self) -> str:
        """How a note names it: its id and a trusted page's title (an untrusted title is its
        page's text, read outside the untrusted fence in a note: the id alone)."""
        return f"{self.id} {self.title!r}" if self.trusted else self.id


class TextRanking(BaseModel):
    """The re-ranked candidates of one free-text query and whether any of them fits."""

    terms: list[str]
    ranked: list[RankedRunbook]
    # The `runbook_url` of each alert rule the query was matched against, by alert id: it
    # points at the alert's own section of a runbook that has several.
    runbook_urls: dict[str, str] = {}
    # The config keys the query also asked for (`search_keys`): with `terms`, its
    # fulltext query (`fulltext_query`).
    keys: list[str] = []
    # The query words no candidate uses (`_rarity`): the card and the abstention name them.
    unknown: list[str] = []
    # Whether those words weighed nothing (`_rarity` set them aside): a share of the query
    # is then a share of the other words, and the abstention says so.
    unknown_set_aside: bool = False
    # The one database engine the text names (by word or a pasted error, the error as typed)
    # and the pages of other engines set aside for it (`investigator/db_engines.py`).
    engine: str | None = None
    engine_error: str | None = None
    engine_set_aside: list[str] = []
    # The numbers the query names as words of their own ("Quux variant 1": 1).
    numbers_named: list[str] = []
    # The words no runbook uses read as words the runbooks use (`word_fixes`), when the query
    # so read fits nothing either: the abstention says so.
    read_again: str | None = None
    # The alert whose own text covers `ALERT_MATCH` of the query better than any other alert
    # (one alert name), whether or not a runbook found applies to it: the text may be about
    # that alert when no runbook's words fit ("runbook for the 5xx alert": the summary
    # "payment-api 5xx ratio above 5%"). None when none does, or two match alike.
    alert_matched: str | None = None

    def engine_said(self) -> str | None:
        """What the card says of the pages set aside for the engine the text names."""
        if self.engine is None or not self.engine_set_aside:
            return None
        how = f"its error {self.engine_error!r}" if self.engine_error else "its name"
        aside = self.engine_set_aside
        more = f" and {len(aside) - 3} more" if len(aside) > 3 else ""
        shown = ", ".join(aside[:3])
        return (
            f"the text names {self.engine} ({how}): runbooks of other engines are set aside "
            f"({shown}{more})"
        )

    @property
    def best(self) -> RankedRunbook | None:
        """The best ranked of the first `SHOWN` candidates that fits the query, else None
        (abstain)."""
        # A candidate that fits is not passed over for a better scored one that does not
        # ("postgres replication lag": the page that has the words beats a sibling that
        # shares most of them); only those shown, so the answer is among the text matches.
        # A fit by its words alone is the loosest: any other way comes first.
        shown = self.ranked[:SHOWN]
        fitting = [r for r in shown if r.fits_by not in (None, "words")]
        loose = [r for r in fitting if r.fits_by in ("text", "about")]
        if fitting and fitting[0] in loose and not _about(fitting[0], self.terms):
            # The page about the words (its name, title, headings or first lines have them)
            # before one that has them deeper in its text ("oplog window too small": the
            # oplog page, not the health check's threshold table that mentions it).
            about = next((r for r in loose if _about(r, self.terms)), None)
            if about is not None:
                return about
        return next(iter(fitting), None) or next((r for r in shown if r.fits_by == "words"), None)

    def alike(self, text: str) -> list[RankedRunbook]:
        """The candidates that fit `text` as well as the best one (itself first): the same
        way, the same share of its words, a score within ALIKE_SCORE of it (one word: any
        score, but not without a number it has; an alert's text fits it no better than a
        runbook's). A fit by name is never a tie. Empty when nothing fits. The versions of
        one runbook are each listed."""
        best = self.best
        if best is None or best.fits_by in ("name", "words"):
            return []  # a fit by words is one document's alone: no tie
        # One word ("down", all that is left of "i think it is down") chooses nothing,
        # however its candidates' scores differ: every one it fits as well is alike.
        one_word = len(query_stems(text)) < 2
        # An alert whose text has that one word ("All SSP operator pods are down.") fits it
        # no better than a runbook whose text has it: alike too.
        ways = {"text", "alert"} if one_word else {best.fits_by}
        return [
            r
            for r in self.ranked
            if r.fits_by in ways
            and r.fit == best.fit
            and (one_word or r.score >= ALIKE_SCORE * best.score)
            # One word and a number ("CART-500" is "cart" and 500): a page without the
            # number does not tie with the one that has it (the code's own page wins).
            and (not one_word or r.number_fit >= best.number_fit)
        ]

    def note(self) -> str:
        """Why nothing was chosen, in one line."""
        note = self._engine_note()
        return note if self.read_again is None else f"{note}; read {self.read_again}"

    def _engine_note(self) -> str:
        said = self.engine_said()
        if said is None:
            return self._note()
        if not self.ranked:
            return f"no runbook of {self.engine} mentions any of: {', '.join(self.terms)}; {said}"
        return f"{self._note()}; {said}"

    def _note(self) -> str:
        if not self.terms:
            return "the text has no informative words to search for"
        if not self.ranked:
            return "no runbook mentions any of: " + ", ".join(self.terms)
        top = self.ranked[0]
        if top.numbered_otherwise:
            # Pages of a numbered series ("Quux variant 2", ...), none numbered as asked: the
            # words fit another one of them, which is no answer to the one asked about.
            others = [r for r in self.ranked if r.numbered_otherwise]
            shown = ", ".join(r.named() for r in others[:3])
            more = f" and {len(others) - 3} more" if len(others) > 3 else ""
            asked = " or ".join(self.numbers_named)
            return (
                f"no runbook fits: the runbooks titled with the query's words are numbered "
                f"otherwise ({shown}{more}), not {asked} as asked"
            )
        covered = f"{top.fit:.0%}"
        # Versions of one page (a git history's) are one runbook: the version in force at
        # as_of is chosen by time, not by these words, so the page is named, once.
        pages = [_document(r.id) for r in self.ranked[:SHOWN]]
        closest = _document(top.id) if pages.count(_document(top.id)) > 1 else top.id
        listed = ", ".join(map(repr, self.unknown))
        if self.unknown and self.unknown_set_aside:
            # "covers 100% of the query (no runbook uses 'found')" contradicted itself: the
            # share is of the words runbooks use, the others weighed nothing.
            unused = f" (not counting {listed}, which no runbook uses)"
        else:
            unused = f" (no runbook uses {listed})" if self.unknown else ""
        # Nearly all the words, yet no fit: they are not together as the query has them.
        apart = top.fit >= QUOTE_FIT and len(self.terms) > KEYWORDS
        tied = list(
            dict.fromkeys(
                _document(r.id) if pages.count(_document(r.id)) > 1 else r.id
                for r in self.ranked[:SHOWN]
                if f"{r.fit:.0%}" == covered
            )
        )
        if len(tied) >= 2 and covered == "0%":
            return self._common_words_note(tied)
        if len(tied) >= 2:
            # One of several alike is no "closest": they tie, and the note names them all.
            quotes = "has the words together as the query has them" if apart else "quotes it"
            return (
                f"no runbook fits: {len(tied)} runbooks tie, each covering {covered} of the "
                f"query{unused} ({', '.join(tied)}), but none {quotes}, is named by it, or has "
                "an alert whose text matches it: add words, or use --alert NAME"
            )
        if apart:
            return (
                f"no runbook fits: the closest, {closest}, covers {covered} of the query{unused}, "
                "but not with its words together as the query has them (half of its word "
                "pairs), and is neither named by it nor has an alert whose text matches it"
            )
        return (
            f"no runbook fits: the closest, {closest}, covers {covered} of the query{unused} "
            "but neither quotes it, nor is named by it, nor has an alert whose text matches it"
        )

    def _common_words_note(self, tied: list[str]) -> str:
        """A "tie" at 0% of the query: the words no runbook uses outweigh the others, which
        the runbooks found have in common (`recovery` of every generated runbook). Said as
        what it is, the runbooks that have them named; before, "3 runbooks tie, each covering
        0% of the query" (explorer e32-qa m7)."""
        unknown = [t for t in self.terms if t in self.unknown]
        used = [t for t in self.terms if t not in self.unknown]
        if not unknown or not used:
            return "no runbook mentions any of: " + ", ".join(self.terms)
        said = ", ".join(map(repr, used))
        are = "is" if len(used) == 1 else "are"
        return (
            f"no runbook mentions any of: {', '.join(unknown)}; {said} {are} common to the "
            f"runbooks found and tell{'s' if len(used) == 1 else ''} none apart "
            f"({', '.join(tied)}): add words, or use --alert NAME"
        )


def _about(r: RankedRunbook, terms: list[str]) -> bool:
    """Whether a candidate's lead (name, title, headings, first lines) has `ABOUT_LEAD` of a
    query of at most `ABOUT_WORDS` words: the page is about it, not one that mentions it."""
    return len({_stem(t) for t in terms}) <= ABOUT_WORDS and r.lead_fit >= ABOUT_LEAD


def _fulltext_score(hit: Evidence) -> float | None:
    # The channel is named after the template (or "graph" in older callers): one score only.
    return next(iter(hit.scores.values()), None)


def _name(hit: Evidence) -> str:
    return hit.element_id.split(":", 1)[-1].split("@", 1)[0]


def text_stems(text: str) -> set[str]:
    """The stems of a title's words, identifiers split too (`CephMonQuorumLost`)."""
    words = _words(text) + [w for token in text.split() for w in identifier_words(token)]
    return {_stem(w) for w in words}


@functools.lru_cache(maxsize=1024)
def query_stems(text: str) -> frozenset[str]:
    """The stems of the informative words of a free-text query (kept: the gate asks again
    for the same question and section titles with each runbook candidate, each round)."""
    return frozenset(_stem(term) for term in search_terms(text))


def spelled_out(text: str, names: Sequence[str]) -> list[int]:
    """The indexes of the alert names `text` spells out in words: every informative word of
    the name is in it, in any form the stemmer joins ("tempo polls are failing":
    `TempoPollsFailing`). A name whose words another spelled-out name holds is left out
    (`KubePodCrash` beside `KubePodCrashLooping`); two with the same words are both kept."""
    said = query_stems(text)
    spelled: list[tuple[frozenset[str], int]] = []
    for i, name in enumerate(names):
        if not is_alert_name(name.strip()):
            continue
        words = query_stems(" ".join(identifier_words(name)))
        if len(words) >= 2 and words <= said:
            spelled.append((words, i))
    return [i for words, i in spelled if not any(words < other for other, _ in spelled)]


def without_words(text: str, forms: Sequence[str]) -> str:
    """`text` without each of `forms` where it stands as a whole word or id (any case),
    its whitespace read as one space: a symptom's words without the place it shows on."""
    for form in forms:
        text = re.sub(
            r"(?<![\w:@/.-])" + re.escape(form) + r"(?![\w:@/-])", " ", text, flags=re.IGNORECASE
        )
    return " ".join(text.split())


def _title_sequence(title: str) -> list[str]:
    """A title's words in order, a CamelCase name split into its words
    (`UnauthorizedAccess:IAMUser/TorIPCaller` -> unauthorized access iam user tor ip caller),
    other words as they are (`5xx`, `k8s`)."""
    words: list[str] = []
    for token in title.split():
        if is_camel_case(token):
            words += identifier_words(token)
        else:
            words += _words(token)
    return words


def name_parts(name: str, title: str | None) -> list[str]:
    """A runbook's name's words, a part that writes a run of its title's words as one
    (`toripcaller` of `recon-iamuser-toripcaller`, titled `Recon:IAMUser/TorIPCaller`, as AWS
    files a finding's page) split into them: recon iam user tor ip caller."""
    title_words = _title_sequence(title or "")
    spans = {
        "".join(title_words[i:j]): title_words[i:j]
        for i in range(len(title_words))
        for j in range(i + 2, len(title_words) + 1)
    }
    parts: list[str] = []
    for part in identifier_words(name):
        parts += spans.get(part, [part])
    return parts


# The longest word `_stem` leaves as it is: the plural of a name word this short ("vms" of
# VM) is read as it; a longer one is stemmed ("postgress" is no plural of postgres).
_UNSTEMMED = 3
# The fewest and most letters of a query word read as initials of a runbook's name words.
INITIALS_MIN = 2
INITIALS_MAX = 5


def _name_runs_written(terms: Sequence[str], parts: Sequence[str]) -> dict[str, set[str]]:
    """The query `terms` that write a run of a runbook's name `parts` (two or more adjacent
    words, `name_parts`) as one word, by stem, each with the stems of the run it stands for:
    the run joined ("daemonset": daemon, set; "dataimportcron": data, import, cron) or its
    initials ("pv": persistent, volume; "vmis", a plural: virtual, machine, instance; a final
    s is read as a plural, never as an initial). A term that is itself one of the name's words
    stands for nothing more; the plural of one of them stands for it ("vms" of
    `ClusterVMPanicDetected`: a word of three letters is not stemmed)."""
    own = set(parts)
    written: dict[str, set[str]] = {}
    for term in terms:
        if term in own or not term.isascii() or not term.isalpha():
            continue
        letters = term[:-1] if term.endswith("s") and len(term) > INITIALS_MIN else term
        if letters != term and letters in own and len(letters) <= _UNSTEMMED:
            # The plural of one of its words too short to stem ("vms": `ClusterVMPanic...`).
            written.setdefault(_stem(term), set()).add(_stem(letters))
        for size in range(2, len(parts) + 1):
            for start in range(len(parts) - size + 1):
                run = parts[start : start + size]
                joined = "".join(run) == term
                # A final s is a plural ("vmis"), never an initial: "vms" is not
                # `VirtualMachineStuck...`'s v, m, s.
                initials = INITIALS_MIN <= len(term) <= INITIALS_MAX and (
                    "".join(p[0] for p in run) == letters
                )
                if joined or initials:
                    written.setdefault(_stem(term), set()).update(_stem(p) for p in run)
    return written


def _title_words(hit: Evidence) -> set[str]:
    """The stems of a runbook's name and title, identifiers split (`CephMonQuorumLost`)."""
    return {_stem(w) for w in identifier_words(_name(hit))} | text_stems(hit.title or "")


# The opening text a page's lead reads: its first lines, up to its second heading.
LEAD_CHARS = 600


def _lead(hit: Evidence) -> tuple[set[str], set[tuple[str, str]]]:
    """The stems of what a page is about, and their word pairs: its name, title, headings
    and first lines (up to its second heading, `LEAD_CHARS` at most). A page that only
    mentions the words has them deeper in its text."""
    titles = hit.props.get("section_titles")
    headings = [str(t) for t in titles] if isinstance(titles, list) else []
    opening: list[str] = []
    seen_heading = False
    for line in (hit.content or "").splitlines():
        if line.startswith("#"):
            if seen_heading or opening:
                break
            seen_heading = True
            continue
        opening.append(line)
    pieces = [hit.title or "", *headings, " ".join(opening)[:LEAD_CHARS]]
    stems = _title_words(hit) | {_stem(w) for piece in pieces for w in _words(piece)}
    pairs = {p for piece in pieces for p in _pairs(_stem_sequence(_words(piece)))}
    # A title's CamelCase names as their words (`TorIPCaller`: tor ip, ip caller), as the
    # score reads them: a finding's page is about its own name's words.
    pairs |= _pairs(_stem_sequence(_title_sequence(hit.title or "")))
    return stems, pairs


def _runbook_words(hit: Evidence) -> set[str]:
    return {_stem(w) for w in _words(hit.content or "")} | _title_words(hit)


def _rarity(
    stems: list[str],
    documents: list[set[str]],
    known: frozenset[str] = frozenset(),
    *,
    set_aside: bool = True,
) -> dict[str, float]:
    """Each query stem's weight: its inverse document frequency among the candidates, as if
    there were at least `CANDIDATES` of them (a word in every one of three candidates is not
    common, just found), so rare words count more and few candidates move nothing.

    A stem in none of the candidates (nor in `known`, the other texts the search returned)
    weighs nothing while such stems are fewer than the others: "many" in "many virt-launcher
    pods failed", a word no runbook uses, tells no runbook apart, and at the highest weight
    it sank the share of the runbook the other words name (20%, "no runbook fits"). When
    they are as many as the others, or all there is, they keep their weight: the query is
    as much about what no runbook covers, and abstains. `set_aside=False`: they keep it
    always (what a fit by name alone is measured on)."""
    count = max(len(documents), CANDIDATES)
    weight = {}
    for stem in stems:
        df = sum(1 for words in documents if stem in words)
        weight[stem] = math.log(1 + (count - df + 0.5) / (df + 0.5))
    unknown = unknown_stems(stems, documents, known)
    if set_aside and len(unknown) < len(stems) - len(unknown):
        weight.update(dict.fromkeys(unknown, 0.0))
    return weight


def unknown_stems(
    stems: list[str], documents: list[set[str]], known: frozenset[str] = frozenset()
) -> list[str]:
    """The query stems that none of `documents` has, nor `known`: words no candidate uses."""
    return [s for s in stems if s not in known and not any(s in words for words in documents)]


def _fits_by(
    text_fit: float,
    pair_fit: float,
    keywords: bool,
    name_fit: float,
    name_size: int,
    alert_fit: float,
    strict_fit: float,
    query_size: int,
    lead_fit: float = 0.0,
) -> str | None:
    if alert_fit >= ALERT_MATCH:
        return "alert"
    if text_fit >= QUOTE_FIT and (keywords or pair_fit >= QUOTE_PAIRS):
        return "text"
    if name_size >= 2 and name_fit >= NAME_FIT and strict_fit >= FIT_THRESHOLD:
        return "name"
    if query_size <= ABOUT_WORDS and text_fit >= QUOTE_FIT and lead_fit >= ABOUT_LEAD:
        # Not quoted, but the page is about the few words asked: they are in its name,
        # title, headings or first lines ("set max_connections online": the page that says
        # so). A sentence is no subject: it must be quoted.
        return "about"
    if query_size >= WORDS_FIT_SIZE and strict_fit >= 1.0 - 1e-9:
        return "words"  # kept only when no other page comes near (rank_runbooks)
    return None


def rank_runbooks(
    terms: list[str],
    hits: list[Evidence],
    alert_links: dict[str, tuple[float, str | None]] | None = None,
    text: str | None = None,
    known: frozenset[str] = frozenset(),
    *,
    set_aside_unknown: bool = True,
) -> TextRanking:
    """Re-rank fulltext hits for the query `terms` (see the module docstring).

    `alert_links` maps a runbook id to (how well an alert it applies to matched the query,
    that alert's id). `text` is the query as typed (for word pairs and numbers); without it,
    the terms in their order stand for it. `known`: stems the search's other candidates (the
    alert rules) have, which are no unknown words (`_rarity`)."""
    alert_links = alert_links or {}
    stems = list(dict.fromkeys(_stem(t) for t in terms))
    if not stems or not hits:
        return TextRanking(terms=terms, ranked=[])
    query_text = _query_text(text) if text is not None else " ".join(terms)
    query_pairs = _pairs(_stem_sequence(_words(query_text)))
    query_numbers = _numbers(query_text)
    numbers_named = _numbers_named(query_text)
    features = []
    for hit in hits:
        name = _name(hit)
        in_title = _title_words(hit)
        body = _words(hit.content or "")
        in_text = {_stem(w) for w in body} | in_title
        # The name's own words, for precision: CephClusterCriticallyFull has a word that
        # "cluster is nearing full" lacks, CephClusterNearFull does not.
        name_words = {_stem(w) for w in name_parts(name, hit.title) if _informative(w)}
        title_only = {
            _stem(w)
            for token in (hit.title or "").split()
            for w in identifier_words(token)
            if _informative(w.lower()) and w.lower() not in _TITLE_FILLER
        }
        # A finding type's own name, its threat and resource left out: "instance credential
        # exfiltration outside aws" names UnauthorizedAccess:IAMUser/InstanceCredential...
        finding = {
            _stem(w)
            for found in finding_types(hit.title or "")
            for w in identifier_words(found.rsplit("/", 1)[-1])
            if _informative(w)
        }
        pairs = _pairs(_stem_sequence(_words(hit.title or "") + body))
        # The title's CamelCase names split too (`TorIPCaller`: tor ip, ip caller) for the
        # score: sibling findings of one name rank alike. Not for a fit by `text`, which is
        # a sentence of the page quoted.
        title_pairs = pairs | _pairs(_stem_sequence(_title_sequence(hit.title or "")))
        numbers = _numbers(hit.content or "")
        lead = _lead(hit)
        # The query's words that write a run of its name's words as one ("daemonset", "pv"):
        # the page has them, in its name, and the query names those words.
        written = _name_runs_written(terms, name_parts(name, hit.title))
        if written:
            in_title = in_title | written.keys()
            in_text = in_text | written.keys()
            lead = (lead[0] | written.keys(), lead[1])
        features.append(
            (
                hit,
                in_title,
                in_text,
                name_words,
                (title_only, finding),
                pairs,
                title_pairs,
                numbers,
                lead,
                set().union(*written.values()),
            )
        )
    weight = _rarity(stems, [f[2] for f in features], known, set_aside=set_aside_unknown)
    total = sum(weight.values())
    # A fit by name alone is the loosest: the words no runbook uses still count against it
    # ("(SSP) Operator pods are down" is not KubeSchedulerDown's for "scheduling ... down").
    strict = _rarity(stems, [f[2] for f in features], known, set_aside=False)
    strict_total = sum(strict.values())
    best_score = max((_fulltext_score(hit) or 0.0) for hit in hits) or 1.0
    ranked = []
    query = set(stems)
    # A runbook's name typed as one word ("CephClusterNearFull is firing") names it too.
    named = query | {
        _stem(part) for token in query_text.split() for part in identifier_words(token)
    }
    for feature in features:
        hit, in_title, in_text, name_words, titled, pairs, title_pairs, numbers, lead = feature[:9]
        page_named = named | feature[9]
        titled_words = titled[0]
        fulltext = _fulltext_score(hit)
        title_cover = sum(weight[s] for s in stems if s in in_title) / total
        text_cover = sum(weight[s] for s in stems if s in in_text) / total
        precision = len(name_words & page_named) / len(name_words) if name_words else 0.0
        pair_fit = len(query_pairs & pairs) / len(query_pairs) if query_pairs else 0.0
        pair_score = len(query_pairs & title_pairs) / len(query_pairs) if query_pairs else 0.0
        number_fit = len(query_numbers & numbers) / len(query_numbers) if query_numbers else 0.0
        score = (fulltext or 0.0) / best_score + TITLE_WEIGHT * title_cover
        score += TEXT_WEIGHT * text_cover + TITLE_PRECISION_WEIGHT * precision
        score += PHRASE_WEIGHT * pair_score + NUMBER_WEIGHT * number_fit
        alert_fit, alert_id = alert_links.get(hit.element_id, (0.0, None))
        score += ALERT_WEIGHT * alert_fit
        # A title of the query's words and a number of its own ("Quux variant 2"): as named,
        # a nudge; numbered otherwise, no fit (below).
        numbered = _numbers_named(hit.title or "") if numbers_named else set()
        series = bool(numbered) and bool(titled_words) and titled_words <= page_named
        otherwise = series and not numbered & numbers_named
        if series and not otherwise:
            score += TITLE_NUMBER_WEIGHT
        text_fit = text_cover
        # About the words: its lead has half of them, two of them together as the query has
        # them ("oplog window" in a heading; not "storage ... cluster ... class" strewn apart).
        lead_words, lead_pairs = lead
        lead_fit = sum(weight[s] for s in stems if s in lead_words) / total
        if not query_pairs & lead_pairs:
            lead_fit = 0.0
        strict_fit = sum(strict[s] for s in stems if s in in_text) / strict_total
        # Named by the query: by its name's words or by its title's (whichever it has more of).
        name_fit, name_size = max(
            (len(words & page_named) / len(words), len(words))
            for words in (name_words, *titled)
            if words
        ) if (name_words or any(titled)) else (0.0, 0)  # fmt: skip
        ranked.append(
            RankedRunbook(
                id=hit.element_id,
                title=hit.title,
                trusted=hit.trust == "trusted",
                score=round(score, 6),
                fit=round(max(text_fit, alert_fit), 6),
                fulltext_score=fulltext,
                matched_alert=alert_id,
                number_fit=number_fit,
                lead_fit=lead_fit,
                numbered_otherwise=otherwise,
                fits_by=None
                if otherwise
                else _fits_by(
                    text_fit,
                    pair_fit,
                    len(stems) <= KEYWORDS,
                    name_fit,
                    name_size,
                    alert_fit,
                    strict_fit,
                    len(stems),
                    lead_fit,
                ),
            )
        )
    ranked.sort(key=lambda r: (-r.score, r.id))
    for r in [r for r in ranked if r.fits_by == "words"]:
        # Only a page that stands apart: another page with more than 40% of the query (all
        # of it, or "the storage class of a cluster node": a sibling has 45%) and the words
        # choose none (the note names the closest).
        if any(o.fit > 1.0 - WORDS_FIT_APART for o in ranked if _document(o.id) != _document(r.id)):
            ranked = [o.model_copy(update={"fits_by": None}) if o is r else o for o in ranked]
    unknown = unknown_stems(stems, [f[2] for f in features], known)
    return TextRanking(
        terms=terms,
        ranked=ranked,
        numbers_named=sorted(numbers_named, key=int),
        unknown=[t for t in terms if _stem(t) in unknown],
        unknown_set_aside=bool(unknown) and all(weight[s] == 0.0 for s in unknown),
    )


def _alert_words(alert: Evidence) -> set[str]:
    name = alert.element_id.split(":", 1)[-1].split("@", 1)[0]
    words = identifier_words(name) + _words(alert.content or "")
    for key in _ALERT_TEXT_PROPS:
        value = alert.props.get(key)
        if isinstance(value, str):
            words += _words(value)
    return {_stem(w) for w in words}


def _own_cover(alert: Evidence, query: set[str]) -> tuple[float, int]:
    """How much of one of the alert's own page texts (`message`, `summary`, `description`,
    `title`, templates left out) the query has, and how many words that text has: the best such
    text with at least ALERT_OWN_WORDS words, else (0.0, 0)."""
    return _own_cover_of(alert.props, query)


def pasted_alert_text(text: str, props: Mapping[str, object]) -> int:
    """How many words the alert's own page text that `text` pastes has (its `message`,
    `summary` or `description` with the label values Alertmanager filled in, as the card
    reads a pasted page: `ALERT_OWN_MATCH` of its words at least), else 0."""
    query = {_stem(t) for t in search_terms(text)}
    own, size = _own_cover_of(props, query)
    return size if own >= ALERT_OWN_MATCH else 0


def _own_cover_of(props: Mapping[str, object], query: set[str]) -> tuple[float, int]:
    best = (0.0, 0)
    for value in page_texts(props).values():
        own = {_stem(w) for w in search_terms(value)}
        if len(own) >= ALERT_OWN_WORDS:
            best = max(best, (len(own & query) / len(own), len(own)))
    return best


def search_runbooks(
    run: LookupSteps, text: str, *, set_aside_unknown: bool = True
) -> tuple[TextRanking, list[Evidence]]:
    """Free text -> re-ranked runbook candidates (and the hits they came from).

    `set_aside_unknown=False`: words no candidate uses keep their weight (`_rarity`), as an
    investigation asks: a runbook it cites must answer the question's words, "slow" in "the
    kube pod is slow" included; the card shows its best fit and names such words. A text
    pasting a database engine's error (`ERROR 1040 (HY000): Too many connections`) sets them
    aside either way: the message is the engine's words, which its page may say otherwise.

    Besides the runbooks themselves, the alert rules of the tenant are searched with the same
    words: an on-call engineer often pastes the alert's summary, and an alert whose own text
    covers the query (`ALERT_MATCH`) points at its runbook through `APPLIES_TO`."""
    # A text naming one database engine (or pasting its error) is answered from that
    # engine's pages and pages of none: another engine's page of the same words is set aside.
    # A pasted error's code names the engine; its words are the message after it.
    engines, error = engines_named(text)
    engine = next(iter(engines)) if len(engines) == 1 else None
    if error is not None:
        text = without_errors(text)
        # The message after a pasted error's code is the engine's words, not the asker's:
        # its page may say it otherwise ("refused a connection" for "Too many connections").
        # Words of it no candidate uses are set aside as the card sets them aside, an
        # investigation's search too (before, it required "many" of a MariaDB page).
        set_aside_unknown = True
    terms = _within(search_terms(text), MAX_QUERY_CHARS)
    if not terms:
        return TextRanking(terms=terms, ranked=[]), []
    keys = search_keys(text)
    query = fulltext_query(terms, keys)
    hits = run.call(
        "fulltext_search", {"query": query}, "runbook", options={"label": "Runbook"},
        limit=CANDIDATES,
    )  # fmt: skip
    aside: list[str] = []
    if engine is not None:
        if any(of_another_engine(hit, engine) for hit in hits):
            # Said when one of them would have been among the candidates shown: the pages of
            # the same words that the text's engine kept from the answer.
            unfiltered = rank_runbooks(terms, hits, text=text)
            by_id = {hit.element_id: hit for hit in hits}
            aside = [
                f"{r.id} ({', '.join(sorted(page_engines(by_id[r.id])))})"
                for r in unfiltered.ranked[:SHOWN]
                if of_another_engine(by_id[r.id], engine)
            ]
            hits = [hit for hit in hits if not of_another_engine(hit, engine)]
        # The engine a pasted error names counts as typed, by the word its pages use.
        word = engine_word(hits, engine) if error is not None else None
        if word is not None and word not in terms:
            terms = [*terms, word]
    engine_said = {"engine": engine, "engine_error": error, "engine_set_aside": aside}
    alerts = run.call(
        "fulltext_search", {"query": query}, "entity", options={"label": "Alert"},
        limit=ALERT_CANDIDATES,
    )  # fmt: skip
    stems = list(dict.fromkeys(_stem(t) for t in terms))
    # The alert's share of the query, each word weighted as in the runbooks' ranking: the
    # label values a pasted summary carries (namespace, cluster) are in many runbooks.
    alert_words = {alert.element_id: _alert_words(alert) for alert in alerts}
    # A word an alert rule has is no unknown word: it may tell the pasted alert apart.
    known = frozenset().union(*alert_words.values())
    weight = _rarity(stems, [_runbook_words(hit) for hit in hits], known)
    total = sum(weight.values())
    query_set = set(stems)
    query_numbers = _numbers(_query_text(text))
    scored = []
    for alert in alerts:
        share = sum(weight[s] for s in stems if s in alert_words[alert.element_id]) / total
        own, size = _own_cover(alert, query_set)
        # A pasted page: the alert's own words are all there, beside the label values
        # Alertmanager filled in (cluster, pod), which no alert's text has. Of two alerts
        # whose text the page holds, the longer text is the more specific one.
        pasted = own >= ALERT_OWN_MATCH
        # Of alerts alike by words, the one with the query's numbers ("crossed 75% ... at
        # 85%": CephClusterNearFull's, not CephClusterReadOnly's "crossed 85%") comes first.
        numbers = _alert_number_share(alert, query_numbers)
        fit = max(share, own) if pasted else share
        scored.append((fit, size if pasted else 0, numbers, alert))
    scored.sort(key=lambda m: (-m[0], -m[1], -m[2], m[3].element_id))
    # One per alert name: the rules of one alert (one per severity) are one alert, not two
    # that match alike.
    by_name: dict[str, tuple[float, int, float, str]] = {}
    for fit, size, numbers, alert in scored:
        name = str(alert.props.get("alertname") or alert.name or alert.element_id)
        by_name.setdefault(name, (fit, size, numbers, alert.element_id))
    matched = list(by_name.values())
    # The one alert the text is about by its own words, when one matches best.
    alert_matched = (
        matched[0][3]
        if matched
        and matched[0][0] >= ALERT_MATCH
        and (len(matched) == 1 or matched[1][:3] != matched[0][:3])
        else None
    )
    links: dict[str, tuple[float, str | None]] = {}
    # The two best-matching alerts (summaries of sibling alerts often differ by one word),
    # and any matching as well as the second (`_linked_alerts`).
    best_size = matched[0][1] if matched else 0
    for alert_fit, size, _, alert_id in _linked_alerts(matched):
        if alert_fit < ALERT_MATCH or size < best_size:
            break  # matches less, or only a shorter text of the page than the best one
        rows = run.call(
            "dependency_neighbourhood",
            {"start_id": alert_id},
            "entity",
            options={"rel_type": "APPLIES_TO", "direction": "in", "hops": 1},
            limit=10,
        )
        for row in rows:
            runbook = str(row.context.get("neighbour"))
            fit, first = links.setdefault(runbook, (alert_fit, alert_id))
            if first != alert_id and fit == alert_fit:
                # Two alerts of one runbook match alike ("tempo": every Tempo alert): the
                # query is about neither one, so it picks no alert's section.
                links[runbook] = (fit, None)
    urls = {
        alert.element_id: str(alert.props["runbook_url"])
        for alert in alerts
        if alert.props.get("runbook_url")
    }
    ranking = rank_runbooks(terms, hits, links, text, known, set_aside_unknown=set_aside_unknown)
    # A record the KG (as known at known_at) replaced under another id (a file renamed or
    # moved): the fulltext index still holds it, but it is no current runbook. Its fulltext
    # row says so (`renamed_to`); only a runbook ranked through an alert's link alone is read.
    renamed = {hit.element_id for hit in hits if hit.context.get("renamed_to")}
    searched = {hit.element_id for hit in hits}
    renamed |= _renamed(
        run, [r.id for r in ranking.ranked[:RENAMES_CHECKED] if r.id not in searched]
    )
    if renamed:
        hits = [hit for hit in hits if hit.element_id not in renamed]
        links = {rb: link for rb, link in links.items() if rb not in renamed}
        ranking = rank_runbooks(
            terms, hits, links, text, known, set_aside_unknown=set_aside_unknown
        )
    update = {"runbook_urls": urls, "alert_matched": alert_matched, "keys": keys, **engine_said}
    return ranking.model_copy(update=update), hits


# The best-matching alerts whose runbooks a text's match is credited to: two (summaries of
# sibling alerts often differ by one word), more only when they match as well as the second.
ALERTS_LINKED = 2


def _linked_alerts(
    matched: list[tuple[float, int, float, str]],
) -> list[tuple[float, int, float, str]]:
    """Of the alerts matched (best first: share of the query, size of the pasted text, share
    of the query's numbers, id), the first `ALERTS_LINKED` and those after them that match
    exactly as well as the best one: a tie is not cut by id. Before, "ceph is read only"
    matched CephClusterReadOnly, CephClusterNearFull and CephClusterCriticallyFull alike
    (ceph, read: 100%), and only the first two by id were credited: the page of the alert
    that says "read-only now" ranked below the two "will become read-only" pages and was
    left out of their tie."""
    kept = matched[:ALERTS_LINKED]
    if len(kept) < ALERTS_LINKED:
        return kept
    best = kept[0][:3]
    return kept + [m for m in matched[ALERTS_LINKED:] if m[:3] == best]


def _alert_number_share(alert: Evidence, query_numbers: set[str]) -> float:
    """The share of the query's numbers (`75`, `85`) an alert's own texts have (its content,
    summary, description, message, annotations); 0.0 for a query without numbers."""
    if not query_numbers:
        return 0.0
    texts = [alert.content or ""] + [
        value for key in _ALERT_TEXT_PROPS if isinstance(value := alert.props.get(key), str)
    ]
    return len(query_numbers & _numbers(" ".join(texts))) / len(query_numbers)


def _document(runbook_id: str) -> str:
    """A runbook id without its version (`runbook:x@v2` -> `runbook:x`)."""
    return runbook_id.split("@", 1)[0]


def _renamed(run: LookupSteps, ids: list[str]) -> set[str]:
    """Of the runbooks `ids` (found through an alert's link, not by the text: a fulltext row
    says it itself), those a visible record of another document supersedes (a file renamed
    or moved, re-imported: `ingest: renamed: a.md -> b/c.md`); one stage, a `SUPERSEDES`
    read per id, none when `ids` is empty. A version superseded by a later version of its
    own document stays: which one holds is decided by time."""
    if not ids:
        return set()
    steps = [
        PlanStep(
            template_id="dependency_neighbourhood",
            params={"start_id": runbook_id},
            options={"rel_type": "SUPERSEDES", "direction": "in", "hops": 1},
            evidence_type="entity",
            limit=RENAMES_READ,
        )
        for runbook_id in ids
    ]
    return {
        runbook_id
        for runbook_id, rows in zip(ids, run.stage(steps), strict=True)
        if any(
            _document(str(row.context.get("neighbour"))) != _document(runbook_id) for row in rows
        )
    }


# Words any runbook's title has: no sign of what it is about.
_RUNBOOK_TITLE_WORDS = frozenset({"runbook", "playbook", "procedure", "guide"})


def runbook_alert(hit: Evidence) -> str | None:
    """The alert a runbook belongs to by its own words, else None: an alert-shaped name
    (`KubePodCrashLooping`) in its title or heading its text's first line, as an alert's
    runbook is written ("KubePodCrashLooping runbook"; "KubePodCrashLooping: a pod ...")."""
    first_line = (hit.content or "").lstrip().split("\n", 1)[0]
    for text in (hit.title or "", first_line):
        for token in re.findall(r"[A-Za-z][A-Za-z0-9_]*", text):
            if is_alert_name(token):
                return token
    return None


# An error code as a question or a page writes one ("PAY-4097"; as the planner reads one).
_ERROR_CODE = re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d{2,6}\b(?![-\w]|\.\w)")


def error_codes_in(text: str) -> list[str]:
    """The error codes `text` writes ("PAY-4097 怎么处理": PAY-4097), as typed, each once."""
    return list(dict.fromkeys(_ERROR_CODE.findall(text)))


def symptom_words(symptom: str, place: str) -> frozenset[str]:
    """The stems of the informative words of a symptom said at a place ("ssh brute force on
    svc:payment-api" -> ssh, brute, force), the place's own words (its id, `svc` too, and
    the name it holds) aside: what a runbook of the place must be about."""
    written = " ".join([place, *identifier_words(place.split(":", 1)[-1])])
    return query_stems(symptom) - query_stems(written) - {_stem(place.split(":", 1)[0])}


def symptom_fits_runbook(symptom: str, place: str, hit: Evidence) -> bool:
    """Whether a symptom said at a place ("5xx errors on checkout") is what a runbook of the
    place is about: one of its informative words, the place's own words aside
    (`symptom_words`), is a word of what the runbook is about.

    A runbook that belongs to an alert (`runbook_alert`) is about that alert: its alert
    name, title and first line (its summary). Its steps are not read: a crash-loop runbook
    that says "Error" in step 1 is still no 5xx runbook. One that names no alert
    (payment-recovery, linked to payment-api and PAY-4097) is about what its name, title,
    headings and opening lines say (`_lead`), and about errors when those name an error code
    ("When payment-api returns PAY-4097"). A symptom with no word beyond its place says
    nothing such a runbook could miss: it fits."""
    if runbook_alert(hit) is None and not symptom_words(symptom, place):
        return True
    return bool(symptom_words_about(symptom, place, hit))


def symptom_words_about(symptom: str, place: str, hit: Evidence) -> frozenset[str]:
    """The stems of the symptom's informative words (`symptom_words`) that are words of what
    the runbook `hit` is about, as `symptom_fits_runbook` reads it: its alert's name, title
    and first line when it belongs to one, else its name, title, headings and opening lines
    (`_lead`), errors too when those name an error code."""
    said = symptom_words(symptom, place)
    if runbook_alert(hit) is not None:
        first_line = (hit.content or "").lstrip().split("\n", 1)[0]
        about = _title_words(hit) | text_stems(first_line)
    else:
        about, _ = _lead(hit)
        lead = " ".join([hit.title or "", (hit.content or "")[:LEAD_CHARS]])
        if _ERROR_CODE.search(lead):
            about = about | {_stem("error")}
    return frozenset(said & (about - {_stem(w) for w in _RUNBOOK_TITLE_WORDS}))


def wide_tie_said(count: int, words: str, records: str) -> str:
    """What a search whose rows stopped above a tie too wide to order says (the executor's
    `tie_at_cut`): how many `records` ("runbooks", "records") the subject can see match the
    words equally at least, that none was read, and how to narrow it. One wording for the
    investigation's gap and the runbook card's note."""
    return (
        f"{count:,}+ {records} you can see match the words {words!r} equally: too many to "
        "rank, none of them was read; name a service, alert or error code to narrow it"
    )


# A hurried user's word no candidate uses, read as words the runbooks found do use: two of
# their words written as one ("bruteforce": brute force), one of their words written as two
# ("crash loop": crashloop), or one letter off one of their words ("postgress": postgres).
# The words come from rows the subject may read (the candidates, then the `name_suggestions`
# template's fuzzy terms over the tenant's own index, the word a parameter): never spliced
# into Cypher, never another tenant's or a hidden record's.
# The least letters of a word read as a one-letter slip of another: shorter English words
# are mostly a letter off other words (found/round, light/night, state/stage).
SLIP_MIN = 6
SLIP_ROWS = 10  # rows of the fuzzy read per word
WORDS_READ_AGAIN = 3  # the unknown words of a query read otherwise, at most


class WordFix(BaseModel):
    """One word of a query read as words the runbooks use (`typed` as typed, lower case)."""

    model_config = ConfigDict(frozen=True)

    typed: str
    read_as: str

    def said(self) -> str:
        return f"{self.typed!r} as {self.read_as!r}"


def _sequences(hit: Evidence) -> list[list[str]]:
    """A page's words in order: its text, its title (CamelCase names as their words) and its
    name's words (`postgres/restart`: postgres restart)."""
    return [
        _words(hit.content or ""),
        _title_sequence(hit.title or ""),
        name_parts(_name(hit), hit.title),
    ]


def _run_of(word: str, sequences: list[list[str]]) -> str | None:
    """The adjacent words of the pages (two to `JOINED_WORDS`, each of two letters at least,
    one informative) that `word` writes as one ("bruteforce": brute force), the run most pages
    have (then the first alphabetically), else None."""
    runs: dict[str, int] = {}
    for sequence in sequences:
        seen: set[str] = set()
        for i, first in enumerate(sequence):
            if len(first) < 2 or len(first) >= len(word) or not word.startswith(first):
                continue
            for size in range(2, JOINED_WORDS + 1):
                parts = sequence[i : i + size]
                joined = "".join(parts)
                if len(parts) < size or not word.startswith(joined):
                    break
                if joined == word:
                    if all(len(p) >= 2 for p in parts) and any(map(_informative, parts)):
                        seen.add(" ".join(parts))
                    break
        for run in seen:
            runs[run] = runs.get(run, 0) + 1
    if not runs:
        return None
    return min(runs, key=lambda run: (-runs[run], run))


def _one_slip(typed: str, word: str) -> bool:
    """Whether `word` is `typed` with one letter added, dropped, changed, or two adjacent
    letters swapped."""
    if typed == word or abs(len(typed) - len(word)) > 1:
        return False
    if len(typed) == len(word):
        diff = [i for i, (a, b) in enumerate(zip(typed, word, strict=True)) if a != b]
        if len(diff) == 1:
            return True
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and typed[diff[0]] == word[diff[1]]
            and typed[diff[1]] == word[diff[0]]
        )
    short, long_ = sorted((typed, word), key=len)
    i = next((k for k, (a, b) in enumerate(zip(short, long_, strict=False)) if a != b), len(short))
    return short[i:] == long_[i + 1 :]


def _slip_of(typed: str, pages: list[Counter[str]]) -> str | None:
    """The word of the pages' words (each page's words with how often it writes them) that
    `typed` is one slip off (`_one_slip`), of the same kind (letters, informative, not the
    same stem): the one most pages have, then the one they write most often, then the first
    alphabetically; else None. A page's own slip loses to the word it means: Cortex's one
    page of alert sections writes "unhealth" once and "unhealthy" more often, and
    "unhealty" is one slip off both."""
    found: Counter[str] = Counter()
    written: Counter[str] = Counter()
    for words in pages:
        for word, times in words.items():
            if (
                word.isalpha()
                and _informative(word)
                and _one_slip(typed, word)
                and _stem(word) != _stem(typed)
            ):
                found[word] += 1
                written[word] += times
    if not found:
        return None
    return min(found, key=lambda word: (-found[word], -written[word], word))


def _page_words(hit: Evidence) -> Counter[str]:
    """A page's words (`_sequences`), each with how often the page writes it."""
    return Counter(w for s in _sequences(hit) for w in s)


def _joined_with(word: str, terms: list[str], words: set[str]) -> WordFix | None:
    """`word` and the query word beside it, which the pages write as one word ("crash loop":
    crashloop), the one before it first."""
    i = terms.index(word) if word in terms else -1
    for pair in (terms[i - 1 : i + 1] if i > 0 else [], terms[i : i + 2] if i >= 0 else []):
        if len(pair) == 2 and "".join(pair) in words:
            return WordFix(typed=" ".join(pair), read_as="".join(pair))
    return None


def word_fixes(
    run: LookupSteps,
    ranking: TextRanking,
    hits: list[Evidence],
    names: Sequence[str] = (),
) -> list[WordFix]:
    """The query words no runbook found uses (all of them when none was found), read as words
    the runbooks do use: a run of their words it writes as one ("bruteforce": brute force),
    one of their words a letter off ("postgress": postgres), or with the query word beside it
    one of their words ("crash loop": crashloop), in that order, the candidates' words first;
    then, for a word of `SLIP_MIN` letters or more still unread, one `name_suggestions` read
    (label Runbook, its fuzzy terms) for all of them, one stage. Empty when none reads
    otherwise (no read when no word is left). A word typed as one of `names` (an alert's
    name, `VirtHandlerDwon`) is left as typed: the card suggests the names it could be, as
    `--alert` does."""
    typed_names = {name.lower() for name in names}
    unknown = list(ranking.unknown) if ranking.ranked else list(ranking.terms)
    unknown = [word for word in unknown if word not in typed_names][:WORDS_READ_AGAIN]
    if not unknown:
        return []
    sequences = [s for hit in hits for s in _sequences(hit)]
    pages = [_page_words(hit) for hit in hits]
    vocabulary: set[str] = set().union(*pages)
    fixes: list[WordFix] = []
    slips: list[str] = []
    for word in unknown:
        if any(word in fix.typed.split() for fix in fixes):
            continue
        sliding = len(word) >= SLIP_MIN and word.isalpha()
        run_of = _run_of(word, sequences)
        slip = _slip_of(word, pages) if sliding and run_of is None else None
        joined = _joined_with(word, ranking.terms, vocabulary)
        fix = WordFix(typed=word, read_as=run_of or slip or "") if run_of or slip else joined
        if fix is not None:
            fixes.append(fix)
        elif sliding:
            slips.append(word)
    if slips:
        steps = [
            PlanStep(
                template_id="name_suggestions",
                params={"text": word},
                options={"label": "Runbook"},
                evidence_type="entity",
                limit=SLIP_ROWS,
            )
            for word in slips
        ]
        for word, rows in zip(slips, run.stage(steps), strict=True):
            slip = _slip_of(word, [_page_words(row) for row in rows])
            if slip is not None:
                fixes.append(WordFix(typed=word, read_as=slip))
    order = {word: i for i, word in enumerate(ranking.terms)}
    return sorted(fixes, key=lambda fix: order.get(fix.typed.split()[0], len(order)))


def seen_fixes(words: Sequence[str], hits: list[Evidence]) -> dict[str, str]:
    """Of `words` (no runbook found uses them), those that read as words of the runbooks
    found (`hits`, no read): a run of their words written as one, else one of their words a
    letter off; by word typed. What a card that fits the other words suggests."""
    sequences = [s for hit in hits for s in _sequences(hit)]
    pages = [_page_words(hit) for hit in hits]
    fixes: dict[str, str] = {}
    for word in words:
        sliding = len(word) >= SLIP_MIN and word.isalpha()
        read_as = _run_of(word, sequences) or (_slip_of(word, pages) if sliding else None)
        if read_as is not None:
            fixes[word] = read_as
    return fixes


def with_fixes(text: str, fixes: Sequence[WordFix]) -> str:
    """`text` with each fixed word (or pair of words) replaced where it stands as a whole
    word (any case), its whitespace read as one space."""
    for fix in fixes:
        typed = r"\W+".join(re.escape(w) for w in fix.typed.split())
        text = re.sub(
            r"(?<![a-z0-9])" + typed + r"(?![a-z0-9])", fix.read_as, text, flags=re.IGNORECASE
        )
    return " ".join(text.split())
