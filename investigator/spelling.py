"""A hurried question's words read as the words the intents hang on.

On-call types fast: "whos the ownr of payment api", "what casued the incidnet", "should we
rolback". Read as typed, no intent rule reads "ownr" and the question became a lookup of its
words (a runbook found by them, `complete`, the owner never stated). Before the planner reads a
question (`investigation.investigate`), each of its plain words is read as one of the intent
vocabulary (`INTENT_WORDS`) when it is none of them but one slip away from exactly one:

- one letter left out, added, changed, or two neighbours swapped (the optimal string alignment
  distance, `_distance`); two for a vocabulary word of nine letters or more ("dependncies");
- its first letter the vocabulary word's (a slip seldom hits the first letter; the English
  words one letter from a vocabulary word mostly differ there: "down"/"owns", "paused"/
  "caused", "known"/"owner");
- four letters at least, and for a vocabulary word of four ("owns") a swap only ("onws");
- not an English word (`NOT_SLIPS`: the words of a US English word list one slip from a
  vocabulary word, "charge", "chance", "fined", "police", and names a tenant may give a
  service, "deployer"), no form of a vocabulary word ("firings", "remediated"), no stop,
  filler or kind word;
- a word on its own: not part of a hyphenated name, an id, a code or a path ("payment-ownr",
  "svc:deploi", "runbok.md" are names as typed), lower case or capitalised only (an upper-case
  word is a name or an acronym).

A word close to two vocabulary words ("ownd": owned, owns) is left as typed. Nothing is matched
against a tenant's records: names are linked by the templates, inside the subject's tenant and
access, from the words as typed. "whos", "whats", "wheres", "hows" are read as "who is", "what
is", ...; "didnt", "isnt", ... with their apostrophe. What was read as another word is said once
(`ReadQuestion.notes`). Why our own twenty lines and no library: the distance is bounded by one
(two) against sixty words, so any edit-distance library would compute the same numbers; what
decides is which words may be read as which (the rules above and `NOT_SLIPS`), and a spelling
library's general English dictionary would read words toward English, not toward the intents,
and would move with its releases (the same question must plan the same).
"""

from __future__ import annotations

import functools
import re

from pydantic import BaseModel

from investigator.stop_words import ENGLISH_STOP_WORDS, HURRIED_FILLER, KIND_NOUNS

# The words the intent rules (planner._INTENT_RULES and the rules after them) hang on, in the
# forms they read. A typed word is read as one of these, never as any other word.
INTENT_WORDS = frozenset(
    {
        # Ownership.
        *("owner", "owners", "owned", "owns", "ownership", "responsible", "oncall"),
        # Runbooks: what to do.
        *("runbook", "runbooks", "playbook", "playbooks", "procedure", "procedures"),
        *("remediate", "remediation", "mitigate", "mitigation", "recovery", "troubleshoot"),
        *("troubleshooting",),
        # Releases and their correlation.
        *("deploy", "deploys", "deployed", "deployment", "deployments", "release", "releases"),
        *("released", "rollout", "rollouts", "rollback", "rollbacks", "revert", "reverted"),
        *("correlated", "correlation", "related", "because"),
        # Causes.
        *("cause", "caused", "causes", "causing", "root", "reason", "triggered", "happened"),
        *("culprit", "blame", "mechanism"),
        # Changes and the timeline.
        *("change", "changed", "changes", "timeline", "started", "first"),
        # Incidents, errors, alerts.
        *("incident", "incidents", "outage", "outages", "postmortem", "error", "errors"),
        *("alert", "alerts", "firing", "fired", "affected", "impacted"),
        # Dependencies.
        *("depend", "depends", "dependency", "dependencies", "dependents", "upstream"),
        *("downstream",),
        # Policies, escalation.
        *("policy", "policies", "compliance", "escalate", "escalation"),
        # The words that open the questions the rules read ("waht caused", "whcih runbook").
        *("what", "which", "where", "when", "should"),
    }
)

# English words (and names a tenant may give a service) one slip from a vocabulary word with its
# first letter: typed, they mean themselves. The words of Debian's `wamerican` list (2020.12.07)
# within `_slip` of `INTENT_WORDS`, lower case, no possessive (benchmarks/spelling_neighbours.py
# prints them again), the agent nouns of the vocabulary's verbs, and tools' names written as one
# word ("incidentio": incident.io is no "incidents").
_NOT_SLIPS_TEXT = """
    albert aleut alpert avert averts blade blake blamed blamer blames blare blaze case cased
    cases casing chance chanced chances chang chanted charge charged charges clanged clause
    clauses complaisance compliant corrected correction correlate correlates correlating
    correlations correlative corrugated corrugation culprits decedents defend defendants
    defends dependance dependant dependants dependence dependent deplored descendents
    despondency errol escalated escalates escalating escalations escalator excavation
    exhalation fared faring filed filing fined fining fire fires firmed firming firs firsts
    fist fixed fixing fred fried imparted incidence incidences incidental incidentals
    indents indigents mechanic mechanics mechanisms mechanize mitigated mitigates mitigating
    motivation mutilation outrage outrages owed playbacks playboys playrooms police polices
    polities polity postmortems procedural procure procures reasons rebated recover recovers
    rededicate relate relates relaxed relayed remediable remedial repudiate repudiation
    responsibly responsive revere revered reversed reverts revery rollicks smarted stared
    starred starter startled starved stated timelines trigger triggers troubleshooted
    troubleshooter troubleshoots troubleshot were wheres whore
    deployer deployers releaser releasers changer changers
    alerta incidentio
"""
NOT_SLIPS = frozenset(_NOT_SLIPS_TEXT.split())

# A vocabulary word with one of these endings is a form of it, not a slip ("firings",
# "remediated", "mitigations"): read as typed (the rules read the forms they read).
_FORM_ENDINGS = ("s", "es", "d", "ed", "ing", "er", "ers", "ly")

# Said without an apostrophe: read as said with it ("whos" is "who is").
_CONTRACTIONS = {
    "whos": "who is",
    "whats": "what is",
    "wheres": "where is",
    "hows": "how is",
    "whys": "why is",
    "isnt": "isn't",
    "arent": "aren't",
    "wasnt": "wasn't",
    "werent": "weren't",
    "didnt": "didn't",
    "doesnt": "doesn't",
    "dont": "don't",
    "hasnt": "hasn't",
    "havent": "haven't",
    "hadnt": "hadn't",
    "shouldnt": "shouldn't",
    "couldnt": "couldn't",
    "wouldnt": "wouldn't",
}

# A word on its own: letters, not joined to a name, id, code, path or number by `-`, `_`, `:`,
# `@`, `/`, `.` (a dot ending a sentence is no join) or a digit.
_PLAIN_WORD = re.compile(r"(?<![\w:@./-])[A-Za-z]+(?![\w:@/-]|[.'’]\w)")
_MIN_LENGTH = 4
# A vocabulary word this long may be two slips away.
_LONG = 9
# The words a note names at most (a question of slips is still read whole).
_MAX_NOTES = 8


class ReadQuestion(BaseModel):
    """A question as typed, and as the planner reads it."""

    typed: str
    text: str
    # (word as typed, word read), in the order typed, each pair once.
    read_as: list[tuple[str, str]] = []

    def notes(self) -> list[str]:
        """One line for the words read as others ("'ownr' read as 'owner'")."""
        if not self.read_as:
            return []
        return [", ".join(f"'{a}' read as '{b}'" for a, b in self.read_as[:_MAX_NOTES])]


def _distance(a: str, b: str, bound: int) -> int:
    """The optimal string alignment distance of `a` and `b` (insertions, deletions,
    substitutions and swaps of two neighbours), or `bound + 1` when it is larger than `bound`."""
    if abs(len(a) - len(b)) > bound:
        return bound + 1
    before: list[int] = []
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        now = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            now[j] = min(row[j] + 1, now[j - 1] + 1, row[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                now[j] = min(now[j], before[j - 2] + 1)
        if min(now) > bound:
            return bound + 1
        before, row = row, now
    return row[-1]


def _slip(typed: str, word: str) -> bool:
    """Whether `typed` is one slip (two, for a long vocabulary word) from vocabulary `word`
    with its first letter; from a word of four letters, a swap of two neighbours only."""
    if typed[0] != word[0] or len(typed) < _MIN_LENGTH:
        return False
    if len(word) <= _MIN_LENGTH:
        return sorted(typed) == sorted(word) and _distance(typed, word, 1) == 1
    bound = 2 if len(word) >= _LONG else 1
    return _distance(typed, word, bound) <= bound


@functools.lru_cache(maxsize=4096)
def vocabulary_word(typed: str) -> str | None:
    """The one vocabulary word a typed word (lower case) is a slip of, or None: a word of the
    vocabulary, an English word, a stop word, or one as close to two vocabulary words."""
    if (
        typed in INTENT_WORDS
        or typed in NOT_SLIPS
        or typed in ENGLISH_STOP_WORDS
        or typed in HURRIED_FILLER
        or typed in KIND_NOUNS
        or any(typed.removesuffix(e) in INTENT_WORDS for e in _FORM_ENDINGS if typed.endswith(e))
    ):
        return None
    near = sorted(w for w in INTENT_WORDS if _slip(typed, w))
    if not near:
        return None
    if len(near) > 1:
        best = min(_distance(typed, w, 2) for w in near)
        near = [w for w in near if _distance(typed, w, 2) == best]
    return near[0] if len(near) == 1 else None


def read_question(question: str) -> ReadQuestion:
    """`question` as the planner reads it: its slips read as the vocabulary's words, its
    contractions without apostrophe as said with one. The same question reads the same."""
    read_as: dict[tuple[str, str], None] = {}

    def read(found: re.Match[str]) -> str:
        typed = found.group()
        if not (typed.islower() or typed[1:].islower() or len(typed) == 1):
            return typed  # "OWNR", "DeployI": a name or an acronym, as typed
        lower = typed.lower()
        said = _CONTRACTIONS.get(lower)
        if said is not None:
            return said.capitalize() if typed[0].isupper() else said
        word = vocabulary_word(lower)
        if word is None:
            return typed
        read_as[(typed, word)] = None
        return word.capitalize() if typed[0].isupper() else word

    text = _PLAIN_WORD.sub(read, question)
    return ReadQuestion(typed=question, text=text, read_as=list(read_as))
