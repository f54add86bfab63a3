"""Close matches for an id or name that did not resolve (`--service svc:Payment-API`).

Only what the subject may see: the candidates come from allowlisted templates
(`entity_resolution`, `fulltext_search`, `name_suggestions`: fuzzy terms for a slip inside a
word, `name_prefixes`: the names a part typed starts) run through the executor, which
enforces tenant, ACL and purpose inside Cypher, so a suggestion never names another tenant's
id or one the subject may not see. Building the queries and ranking the rows are pure and
deterministic: the typed text is lower-cased and split into words (`svc:Payment-API`,
`payment_api` -> payment, api), candidates are ranked by string similarity to it, ties by
id; those whose id or name starts with it (`pay`: payment-api, payment-db) come first, by
id.
"""

from __future__ import annotations

import difflib
import re

from pydantic import BaseModel, ConfigDict

from cypher_templates.compiler import has_fuzzy_terms
from cypher_templates.plan import PlanStep
from graph_schema.alert_names import identifier_words

MAX_SUGGESTIONS = 3
# Below this similarity a candidate only shares a prefix or a word ("payment-db" or
# "api-gateway" for "payments-api"); a typo or a case or separator slip stays above.
MIN_SIMILARITY = 0.8
# A word the typed text and a candidate spell differently must be that alike, or one edit
# apart (a slip: `Errror`/`Error`, `Dwon`/`Down`): `CephPGsDegraded` is not `CephPGsDamaged`
# (0.67, three edits), another incident.
MIN_WORD_SIMILARITY = 0.8
_FULLTEXT_LIMIT = 10
# A name typed in part must be this long (its words joined by `-`, no id prefix) for the
# ids that start with it to be suggested (`pay` -> svc:payment-api, svc:payment-db).
MIN_PREFIX = 3
_ID_PREFIX = re.compile(r"^[a-z][a-z0-9_-]*:")  # svc:, alert:, err:


class SuggestionQuery(BaseModel):
    """One template call that can find a close match (the caller runs it)."""

    model_config = ConfigDict(frozen=True)

    template_id: str
    params: dict[str, str]
    options: dict[str, str]
    limit: int

    def step(self) -> PlanStep:
        """The plan step that runs this query (its rows are `entity` candidates)."""
        return PlanStep(
            template_id=self.template_id,
            params=dict(self.params),
            options=dict(self.options),
            evidence_type="entity",
            limit=self.limit,
        )


class Candidate(BaseModel):
    """A visible element a suggestion query returned."""

    model_config = ConfigDict(frozen=True)

    element_id: str
    name: str | None = None


def _words(text: str) -> list[str]:
    # Case steps split too: `ManagedClusterConditonUnknown` is the words a file
    # `managed_cluster_condition_unknown.md` is named with, one letter apart.
    stripped = text.strip()
    prefix = _ID_PREFIX.match(stripped.lower())
    rest = stripped[prefix.end() :] if prefix else stripped
    return [w for w in identifier_words(rest) if w]


def suggestion_queries(text: str, label: str) -> list[SuggestionQuery]:
    """The template calls that look for elements of `label` close to `text`.

    The typed text normalised (lower case, words joined by `-`) by id and by name, then its
    words through the fulltext index, then as fuzzy terms (`name_suggestions`).
    """
    words = _words(text)
    if not words:
        return []
    joined = "-".join(words)
    texts = [joined]
    prefix = _ID_PREFIX.match(text.strip().lower())
    if prefix:
        texts.append(prefix.group(0) + joined)
    queries = [
        SuggestionQuery(
            template_id="entity_resolution",
            params={"text": t},
            options={"label": label},
            limit=5,
        )
        for t in texts
        if t != text
    ]
    spaced = " ".join(words)
    # fulltext_search takes no Team label (its manifest enum): a team by fuzzy terms only.
    searches = [] if label == "Team" else [("fulltext_search", "query")]
    if has_fuzzy_terms(spaced):
        # A slip inside one word ("PaymentApiHighErrrorRate") shares no term with the name.
        searches.append(("name_suggestions", "text"))
        # A name typed in part (`pay`, `svc:payment`): the ids that start with it.
        searches.append(("name_prefixes", "text"))
    queries += [
        SuggestionQuery(
            template_id=template_id,
            params={param: spaced},
            options={"label": label},
            limit=_FULLTEXT_LIMIT,
        )
        for template_id, param in searches
    ]
    split = _split_guesses(words)
    if split is not None:
        # `svc:paymentapi`: one word where the id has two (payment-api); neither is a
        # term of it, nor two edits from one.
        queries.append(
            SuggestionQuery(
                template_id="name_suggestions",
                params={"text": split},
                options={"label": label},
                limit=_FULLTEXT_LIMIT,
            )
        )
    return queries


# A word typed without the separator its name has (`paymentapi`): split at each place that
# leaves both parts this long, middle first, as fuzzy terms (at most `_FUZZY_MAX_TERMS`).
_SPLIT_MIN_PART = 3


def _split_guesses(words: list[str]) -> str | None:
    """The two parts of each split of a lone long word, middle splits first, as one text
    of fuzzy terms; None for several words or a short one."""
    if len(words) != 1 or len(words[0]) < 2 * _SPLIT_MIN_PART:
        return None
    word = words[0]
    middle = len(word) / 2
    cuts = sorted(
        range(_SPLIT_MIN_PART, len(word) - _SPLIT_MIN_PART + 1), key=lambda i: (abs(i - middle), i)
    )
    parts = [p for i in cuts for p in (word[:i], word[i:])]
    return " ".join(dict.fromkeys(parts))


def rank_suggestions(text: str, candidates: list[Candidate]) -> list[str]:
    """The ids of the candidates closest to `text`, best first (at most MAX_SUGGESTIONS).

    A text that several ids start with (`payment`: payment-api, payment-db; `pay`) is no slip
    of one of them: those ids come first, by id, then the ones spelled alike."""
    words = _words(text)
    typed = "-".join(words)
    best: dict[str, float] = {}
    started: set[str] = set()
    for cand in candidates:
        if cand.element_id == text:
            continue
        keys = [cand.element_id] + ([cand.name] if cand.name else [])
        if len(typed) >= MIN_PREFIX and any(
            (have := "-".join(_words(key))) != typed and have.startswith(typed) for key in keys
        ):
            started.add(cand.element_id)
        # Only keys that differ by slips: a different word is a different thing.
        alike = [key for key in keys if _no_other_word(words, _words(key))]
        ratio = max(
            (difflib.SequenceMatcher(None, typed, "-".join(_words(k))).ratio() for k in alike),
            default=0.0,
        )
        if ratio >= MIN_SIMILARITY:
            best[cand.element_id] = max(best.get(cand.element_id, 0.0), ratio)
    ranked = sorted(started) + [
        element_id
        for element_id, _ in sorted(best.items(), key=lambda item: (-item[1], item[0]))
        if element_id not in started
    ]
    return ranked[:MAX_SUGGESTIONS]


def rank_containing(text: str, candidates: list[Candidate]) -> list[str]:
    """As `rank_suggestions`, and also each candidate whose id or name has every word of
    `text` among its words (or one slip from one): a team asked about by part of its name
    ("the payments team" -> team:payments-core, team:payments-platform), closest first."""
    words = _words(text)
    typed = "-".join(words)
    best: dict[str, float] = dict.fromkeys(rank_suggestions(text, candidates), 1.0)
    for cand in candidates:
        if cand.element_id == text or not words:
            continue
        for key in [cand.element_id] + ([cand.name] if cand.name else []):
            have = _words(key)
            if all(any(w == h or one_edit(w, h) for h in have) for w in words):
                ratio = difflib.SequenceMatcher(None, typed, "-".join(have)).ratio()
                best[cand.element_id] = max(best.get(cand.element_id, 0.0), ratio)
    ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))
    return [element_id for element_id, _ in ranked[:MAX_SUGGESTIONS]]


def _no_other_word(typed: list[str], words: list[str]) -> bool:
    """Whether `words` differ from the `typed` ones only by slips: of as many words, each
    that differs is spelled alike (MIN_WORD_SIMILARITY); words split otherwise pass."""
    if len(typed) != len(words):
        return True
    return all(
        a == b
        or one_edit(a, b)
        or difflib.SequenceMatcher(None, a, b).ratio() >= MIN_WORD_SIMILARITY
        for a, b in zip(typed, words, strict=True)
    )


def one_edit(a: str, b: str) -> bool:
    """Whether `b` is `a` with one letter added, left out, changed, or two neighbours
    swapped."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long = sorted((a, b), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def did_you_mean(suggestions: list[str]) -> str:
    """`did you mean svc:a or svc:b?`, or a plain statement when there is nothing close."""
    if not suggestions:
        return "no visible id is close to it"
    return f"did you mean {' or '.join(suggestions)}?"
