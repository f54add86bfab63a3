"""Reading mechanism and report text: sentences naming a change, as the cause or clearing
it.
"""

from __future__ import annotations

import re

from investigator.claims.wording import _about, _change_id
from investigator.evidence import Evidence
from investigator.lazy_pattern import LazyPattern

# A sentence that rules a change out ("was investigated and ruled out", "not the cause").
_CLEARING = re.compile(
    r"\b(ruled? out|rules out|not (?:the |a )?(?:root )?cause|did not cause|didn't cause|"
    r"not related|unrelated|(?:was|were|is|been) (?:cleared|excluded|exonerated)|cleared of|"
    r"had no (?:impact|effect))\b|排除|无关",
    re.IGNORECASE,
)


# Sentences end at a full stop (hard-wrapped lines are one sentence) or a blank line.
# ... unless it says the opposite ("could not rule out the release").
_NOT_CLEARING = re.compile(
    r"\b(?:not|cannot|can't|couldn't|never) (?:be )?ruled? out\b|\bnot been ruled out\b",
    re.IGNORECASE,
)


def _rules_out(sentence: str) -> bool:
    """Whether a sentence says the change it names was ruled out."""
    return bool(_CLEARING.search(sentence)) and not _NOT_CLEARING.search(sentence)


_SENTENCE_END = re.compile(r"(?<=[.!?。])\s+|\n\s*\n")


# A release or change identifier in free text ("release 2026.07.23.1", "deploy:r-7").
_CHANGE_REFERENCE = re.compile(
    r"\b(deploy|change):\S+|\brelease[- ]v?\d+(\.\d+)+\b|\b\d{4}\.\d{2}\.\d{2}\.\d+\b",
    re.IGNORECASE,
)


# Shorter words of a name are too common to identify a change ("rule", "v3").
_MIN_NAME_TOKEN = 6


def _names_of(ev: Evidence) -> list[str]:
    """The texts that identify a change: its id (with and without prefix), its name, its
    release number, and the name's words that carry a number ("RR-2026-07-23a")."""
    out = [ev.element_id, ev.element_id.split(":", 1)[-1]]
    if ev.name:
        out.append(ev.name)
        out += [
            w.strip(".,;:()")
            for w in ev.name.split()
            if any(ch.isdigit() for ch in w) and len(w.strip(".,;:()")) >= _MIN_NAME_TOKEN
        ]
    release = ev.props.get("release")
    if isinstance(release, str):
        out.append(release)
    return [n for n in dict.fromkeys(out) if len(n) >= 4]


def _name_position(text: str, ev: Evidence) -> int | None:
    """Where `text` first names the change `ev` (a whole token, any case), else None."""
    hits = [
        m.start()
        for name in _names_of(ev)
        if (m := re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-]|\.\w)", text, re.IGNORECASE))
    ]
    return min(hits) if hits else None


def _sentences_naming(ev: Evidence, text: str) -> list[str]:
    sentences = [" ".join(s.split()) for s in _SENTENCE_END.split(text)]
    return [s for s in sentences if _name_position(s, ev) is not None]


def _clearing_sentence(mechanism: Evidence, cand: Evidence) -> str | None:
    """The sentence of a mechanism record that rules `cand` out, if any."""
    return next((s for s in _sentences_naming(cand, mechanism.content) if _rules_out(s)), None)


def _names_as_cause(mechanism: Evidence, cand: Evidence) -> bool:
    """Whether a mechanism record is about `cand` (linked to it, or names it in a sentence
    that does not rule it out)."""
    if _about(mechanism, _change_id(cand)):
        return True
    # "Could not rule out X" neither clears nor implicates X.
    return any(not _CLEARING.search(s) for s in _sentences_naming(cand, mechanism.content))


# A sentence that names a change as the cause ("X caused PAY-4097", "the root cause was X",
# "X broke payments"): how a report that records no mechanism blames one.
_CAUSAL = LazyPattern(
    r"\b(?:caus(?:ed|es|ing)|cause of|root[- ]cause|broke|blamed?|responsible for|"
    r"triggered|led to|resulted in|due to)\b|导致|根因",
    re.IGNORECASE,
)


def _report_sentence(report: Evidence, cand: Evidence) -> str | None:
    """The sentence of a report that names `cand` as the cause: it names the change with a
    word of causing, and neither rules it out nor says it could not be ruled out."""
    return next(
        (
            s
            for s in _sentences_naming(cand, report.content)
            if _CAUSAL.search(s) and not _CLEARING.search(s) and not _NOT_CLEARING.search(s)
        ),
        None,
    )
