"""Invisible marks pasted with a question: zero-width spaces, byte-order marks, direction marks.

Chat tools and web pages carry them inside words ("pay\u200bment-api"); they print as nothing,
so the user cannot see why a name was not found. They are taken out of what a user types before
it is read. A direction override (U+202D, U+202E) makes a line read in another order than it is
stored: free text holding one is refused instead (`refused_character`), with C1 controls and
the tag characters.
Joiners (U+200C, U+200D) stay: Persian, Indic scripts and emoji spell words with them.
"""

from __future__ import annotations

import re
import unicodedata

# ZWSP, LRM, RLM, the embeddings and their pop (LRE, RLE, PDF), word joiner, the isolates
# (LRI..PDI), the BOM / zero-width no-break space. Not the overrides LRO and RLO (U+202D,
# U+202E): they show the characters after them in another order than they are stored ("who
# owns \u202eipa-tnemyap" reads "who owns payment-api" and is not), so text holding one is
# refused (`refused_character`), never read as something other than what was seen.
_INVISIBLE = re.compile("[\u200b\u200e\u200f\u202a-\u202c\u2060\u2066-\u2069\ufeff]")
# Kept in free text: Persian, Indic scripts and emoji spell words with the joiners.
JOINERS = frozenset("\u200c\u200d")


def without_invisible_marks(text: str) -> str:
    """`text` without the invisible marks a paste carries (joiners kept)."""
    return _INVISIBLE.sub("", text)


def refused_character(text: str) -> str | None:
    """The first character free text (a question, a lookup's text) may not hold, as `U+XXXX`;
    None when it holds none. Refused: controls (C0 but newline and tab, DEL, C1 such as CSI
    U+009B) and format characters (category Cf: the bidi overrides, the tag characters
    U+E0000-U+E007F that spell words no one sees), but the joiners. Called after
    `without_invisible_marks`, which takes the pasted marks out first."""
    for ch in text:
        if ch in "\n\t" or ch in JOINERS:
            continue
        if unicodedata.category(ch) in ("Cc", "Cf"):
            return f"U+{ord(ch):04X}"
    return None
