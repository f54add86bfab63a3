"""Letters of other scripts that look like ASCII ones (Unicode's confusables data).

One folding for every check that must not be fooled by a look-alike letter: the evidence
gate reads untrusted text through it ("ignоre" with a Cyrillic о is "ignore"), and an ingest
refuses a principal id that reads like another principal id of its tenant ("user:аlice"
beside "user:alice"), so that an auditor can never put a run down to the wrong person.
"""

from __future__ import annotations

import functools
import unicodedata


@functools.cache
def latin_look_alikes() -> tuple[dict[int, str], ...]:
    """Letters of other scripts that look like one ASCII letter: "ignоre" with a Cyrillic о
    reads as "ignore" (one letter for one, so a match's span is the same in the text shown).
    Unicode reads I-like letters as `l`: a second table reads them as `i`, as leetspeak
    reads 1."""
    # Loaded on first use only (about 40 ms).
    from confusable_homoglyphs.confusables import confusables_data

    table: dict[int, str] = {}
    for char, glyphs in confusables_data.items():
        if len(char) != 1 or char.isascii() or not unicodedata.category(char).startswith("L"):
            continue
        latin = [g["c"] for g in glyphs if len(g["c"]) == 1 and g["c"].isascii()]
        if latin and latin[0].isalpha():
            table[ord(char)] = latin[0]
    as_i = {code: "i" if letter == "l" else letter for code, letter in table.items()}
    return table, as_i


def look_alike_readings(text: str) -> frozenset[str]:
    """How `text` may read to a person: itself, NFKC-folded (fullwidth and compatibility
    forms), and with look-alike letters read as the ASCII ones. Two ids whose readings meet
    cannot be told apart on a screen. An ASCII text reads only as itself."""
    if text.isascii():
        return frozenset({text})
    folded = unicodedata.normalize("NFKC", text)
    readings = {text, folded}
    readings.update(folded.translate(table) for table in latin_look_alikes())
    return frozenset(readings)


def invisible_characters(text: str) -> list[str]:
    """The characters of `text` a reader cannot see or that act on the terminal (controls,
    format characters such as zero-width spaces and bidi overrides, unassigned code points),
    spelled as code points (`U+200B`); [] when every character is printable."""
    return [f"U+{ord(ch):04X}" for ch in dict.fromkeys(text) if not ch.isprintable()]
