"""Free text -> the runbook it is about, or "nothing fits" (issue 15).

An on-call engineer types the alert's summary or what they see ("Storage quorum is lost").
The text becomes a fulltext query of its informative words only (English and alert
boilerplate stop words, numbers and template noise dropped), which brings back a generous
set of candidates from the tenant's own index with the visibility predicate applied in
Cypher. The candidates are then re-ranked here, with nothing but what they return:

- the fulltext score, normalised by the best one;
- how much of the query the runbook's *name and title* cover: `CephMonQuorumLost` is split
  into `ceph mon quorum lost`, which the Lucene analyzer cannot do, so a runbook named after
  the alert wins over its siblings that only mention the words;
- how much of the query its whole text covers.

The tenant's alert rules are searched with the same words too: an engineer often pastes the
alert's summary, and an alert whose own text (summary, description, annotations) covers the
query points at the runbook that applies to it, which then ranks first and fits.

Coverage weighs each query word by its rarity among the candidates (an IDF over what the
subject can see of its own tenant, so no other tenant's data moves it). When the best
candidate covers less than `FIT_THRESHOLD` of the query, nothing fits and the lookup says so
instead of naming a runbook that merely shares a few common words.
"""

from __future__ import annotations

import math
import re

from pydantic import BaseModel, ConfigDict

from investigator.evidence import Evidence
from investigator.runbook_fallback import LookupSteps

CANDIDATES = 30  # fulltext hits re-ranked (the template's row cap is 50)
MAX_TERMS = 32
TITLE_WEIGHT = 1.0
TEXT_WEIGHT = 1.0
TITLE_PRECISION_WEIGHT = 0.5
FIT_THRESHOLD = 0.5
ALERT_CANDIDATES = 10
# An alert rule whose own text (name, summary, description, annotations) covers this share of
# the query is taken to be the alert the user pasted: the runbooks applying to it get
# ALERT_WEIGHT times that share added, and fit at least as well as the alert does.
ALERT_MATCH = 0.8
ALERT_WEIGHT = 2.0
_ALERT_TEXT_PROPS = ("summary", "description", "message", "annotations_json")

# Words that say nothing about which runbook fits: English function words and the phrasing
# every alert description shares ("this alert fires when ...").
_STOP_WORDS_TEXT = """
    a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing during each either few for
    from further had has have having he her here hers him his how i if in into is it its
    itself just may me might more most must my neither no nor not now of off on once only or
    other our ours out over own per please same shall she should so some such than that the
    their theirs them then there these they this those through to too under until upon us
    very via was we were what when whenever where whether which while who whom why will with
    within would you your
    alert alerts fire fires fired firing trigger triggers triggered triggering
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())
_TEMPLATE = re.compile(r"\{\{.*?\}\}", re.DOTALL)
_WORD = re.compile(r"[a-z0-9]+")
_IDENTIFIER_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def _stem(word: str) -> str:
    # Light suffix stripping, enough for "mirrored"/"mirroring"/"mirrors" to meet.
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def identifier_words(name: str) -> list[str]:
    """`CephMonQuorumLost` -> ceph, mon, quorum, lost; `ODFNodeMTULessThan9000` -> odf, node,
    mtu, less, than, 9000; also splits on `-`, `_`, `.` and `:`."""
    return [part.lower() for part in _IDENTIFIER_PART.findall(name)]


def search_terms(text: str) -> list[str]:
    """The informative words of `text`, in order, each once: what the fulltext query asks."""
    terms: list[str] = []
    for word in _words(_TEMPLATE.sub(" ", text)):
        if word in STOP_WORDS or len(word) < 2 or any(ch.isdigit() for ch in word):
            continue
        if word not in terms:
            terms.append(word)
    return terms[:MAX_TERMS]


class RankedRunbook(BaseModel):
    """One candidate after re-ranking: its score and how much of the query it covers."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: str | None
    score: float
    fit: float  # the share of the query (rarity-weighted) its name, title and text cover
    fulltext_score: float | None
    matched_alert: str | None = None  # the alert rule whose text the query matched


class TextRanking(BaseModel):
    """The re-ranked candidates of one free-text query and whether any of them fits."""

    terms: list[str]
    ranked: list[RankedRunbook]
    threshold: float = FIT_THRESHOLD

    @property
    def best(self) -> RankedRunbook | None:
        """The top candidate if it fits the query, else None (abstain)."""
        if self.ranked and self.ranked[0].fit >= self.threshold:
            return self.ranked[0]
        return None

    def note(self) -> str:
        """Why nothing was chosen, in one line."""
        if not self.terms:
            return "the text has no informative words to search for"
        if not self.ranked:
            return "no runbook mentions any of: " + ", ".join(self.terms)
        top = self.ranked[0]
        return (
            f"no runbook fits: the closest, {top.id}, covers {top.fit:.0%} of the query "
            f"(at least {self.threshold:.0%} needed)"
        )


def _fulltext_score(hit: Evidence) -> float | None:
    # The channel is named after the template (or "graph" in older callers): one score only.
    return next(iter(hit.scores.values()), None)


def rank_runbooks(
    terms: list[str],
    hits: list[Evidence],
    alert_links: dict[str, tuple[float, str]] | None = None,
) -> TextRanking:
    """Re-rank fulltext hits for the query `terms` (see the module docstring).

    `alert_links` maps a runbook id to (how well an alert it applies to matched the query,
    that alert's id)."""
    alert_links = alert_links or {}
    stems = list(dict.fromkeys(_stem(t) for t in terms))
    if not stems or not hits:
        return TextRanking(terms=terms, ranked=[])
    features = []
    for hit in hits:
        name = hit.element_id.split(":", 1)[-1].split("@", 1)[0]
        title_words = identifier_words(name) + _words(hit.title or "")
        title_words += [w for token in (hit.title or "").split() for w in identifier_words(token)]
        in_title = {_stem(w) for w in title_words}
        in_text = {_stem(w) for w in _words(hit.content or "")} | in_title
        # The name's own words, for precision: CephClusterCriticallyFull has a word that
        # "cluster is nearing full" lacks, CephClusterNearFull does not.
        name_words = {_stem(w) for w in identifier_words(name)}
        features.append((hit, in_title, in_text, name_words))
    count = len(features)
    weight = {}
    for stem in stems:
        df = sum(1 for _, _, in_text, _ in features if stem in in_text)
        weight[stem] = math.log(1 + (count - df + 0.5) / (df + 0.5))
    total = sum(weight.values())
    best_score = max((_fulltext_score(hit) or 0.0) for hit in hits) or 1.0
    ranked = []
    query = set(stems)
    for hit, in_title, in_text, name_words in features:
        fulltext = _fulltext_score(hit)
        title_cover = sum(weight[s] for s in stems if s in in_title) / total
        text_cover = sum(weight[s] for s in stems if s in in_text) / total
        precision = len(name_words & query) / len(name_words) if name_words else 0.0
        score = (fulltext or 0.0) / best_score + TITLE_WEIGHT * title_cover
        score += TEXT_WEIGHT * text_cover + TITLE_PRECISION_WEIGHT * precision
        alert_fit, alert_id = alert_links.get(hit.element_id, (0.0, None))
        score += ALERT_WEIGHT * alert_fit
        ranked.append(
            RankedRunbook(
                id=hit.element_id,
                title=hit.title,
                score=round(score, 6),
                fit=round(max(text_cover, alert_fit), 6),
                fulltext_score=fulltext,
                matched_alert=alert_id,
            )
        )
    ranked.sort(key=lambda r: (-r.score, r.id))
    return TextRanking(terms=terms, ranked=ranked)


def _alert_words(alert: Evidence) -> set[str]:
    name = alert.element_id.split(":", 1)[-1].split("@", 1)[0]
    words = identifier_words(name) + _words(alert.content or "")
    for key in _ALERT_TEXT_PROPS:
        value = alert.props.get(key)
        if isinstance(value, str):
            words += _words(value)
    return {_stem(w) for w in words}


def search_runbooks(run: LookupSteps, text: str) -> tuple[TextRanking, list[Evidence]]:
    """Free text -> re-ranked runbook candidates (and the hits they came from).

    Besides the runbooks themselves, the alert rules of the tenant are searched with the same
    words: an on-call engineer often pastes the alert's summary, and an alert whose own text
    covers the query (`ALERT_MATCH`) points at its runbook through `APPLIES_TO`."""
    terms = search_terms(text)
    if not terms:
        return TextRanking(terms=terms, ranked=[]), []
    query = " ".join(terms)
    hits = run.call(
        "fulltext_search", {"query": query}, "runbook", options={"label": "Runbook"},
        limit=CANDIDATES,
    )  # fmt: skip
    alerts = run.call(
        "fulltext_search", {"query": query}, "entity", options={"label": "Alert"},
        limit=ALERT_CANDIDATES,
    )  # fmt: skip
    stems = {_stem(t) for t in terms}
    matched = sorted(
        ((len(stems & _alert_words(alert)) / len(stems), alert.element_id) for alert in alerts),
        key=lambda m: (-m[0], m[1]),
    )
    links: dict[str, tuple[float, str]] = {}
    # The two best-matching alerts (summaries of sibling alerts often differ by one word).
    for alert_fit, alert_id in matched[:2]:
        if alert_fit < ALERT_MATCH:
            break
        rows = run.call(
            "dependency_neighbourhood",
            {"start_id": alert_id},
            "entity",
            options={"rel_type": "APPLIES_TO", "direction": "in", "hops": 1},
            limit=10,
        )
        for row in rows:
            runbook = str(row.context.get("neighbour"))
            links.setdefault(runbook, (alert_fit, alert_id))
    return rank_runbooks(terms, hits, links), hits
