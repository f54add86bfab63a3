"""Invisible marks pasted with a question: zero-width spaces, byte-order marks, direction marks.

Chat tools and web pages carry them inside words ("pay\u200bment-api"); they print as nothing,
so the user cannot see why a name was not found, and a direction override can make a line read
in another order than it is stored. They are taken out of what a user types before it is read.
Joiners (U+200C, U+200D) stay: Persian, Indic scripts and emoji spell words with them.
"""

from __future__ import annotations

import re

# ZWSP, LRM, RLM, the embeddings and overrides (LRE..RLO), word joiner, the isolates
# (LRI..PDI), the BOM / zero-width no-break space.
_INVISIBLE = re.compile("[\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")


def without_invisible_marks(text: str) -> str:
    """`text` without the invisible marks a paste carries (joiners kept)."""
    return _INVISIBLE.sub("", text)
