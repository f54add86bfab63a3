"""Text from the KG as the terminal shows it: one line, nothing that acts on the terminal.

Retrieved text (a runbook's steps, claims, evidence) may carry control characters (an
escape sequence that clears the screen or rewrites a line), format characters (zero-width
ones that hide a word's break, bidi overrides that reorder it) or line breaks. Every command
that prints such text renders it with `one_line` (a runbook's step with `step_line`, which
keeps its indentation); the stored, hashed and JSON text stay exactly as they are.
"""

from __future__ import annotations


def _escaped(ch: str) -> str:
    """A character the terminal would not show as itself, spelled as its code point."""
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: object) -> str:
    """`text` with every character the terminal would act on or not show as itself (line
    breaks, tabs, escapes, zero-width and bidi characters) spelled as its code point, nothing
    shortened: for lines that quote what a file or a bundle says (its name, an element id),
    so that an error about a hostile file cannot retitle the window or clear the screen."""
    flat = str(text)
    if flat.isprintable():
        return flat
    return "".join(ch if ch.isprintable() else _escaped(ch) for ch in flat)


def shown_id(text: object) -> str:
    """An id (a subject's, a tenant's) as audit views print it: printable ASCII as itself,
    every other character spelled as its code point (`user:\\u0430lice`), so that an id with
    a look-alike letter of another script never reads as the ASCII id it imitates."""
    flat = str(text)
    if flat.isascii() and flat.isprintable():
        return flat
    return "".join(ch if ch.isascii() and ch.isprintable() else _escaped(ch) for ch in flat)


def one_line(text: object, limit: int) -> str:
    """`text` on one line of at most about `limit` characters, shortened with "…".

    Whitespace (line breaks, tabs, other spaces) reads as one space; any other character
    that is not printable (C0/C1 controls, category Cf: zero-width, bidi overrides U+202A-
    U+202E and isolates U+2066-U+2069, unassigned, private use) is shown escaped, `\\u200b`,
    so that it can neither hide nor reorder the words around it nor drive the terminal.
    """
    flat = " ".join(str(text).split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    if flat.isprintable():
        return flat
    return "".join(ch if ch.isprintable() else _escaped(ch) for ch in flat)


def step_line(text: object, limit: int) -> str:
    """One line of a runbook's steps as the card prints it: like `one_line`, but its
    indentation and the spaces inside it kept, one for one (a tab as the spaces to the next
    stop of 4): the YAML or shell copied from the card must be what the runbook says
    (`replicaCount: 4` under `find:` under `datagovukHelmValues:`, not flush left)."""
    # Any whitespace (a line break too: a step is one line) reads as a space, one for one.
    spaced = "".join(" " if ch.isspace() and ch != "\t" else ch for ch in str(text))
    line = spaced.expandtabs(4).rstrip()
    if len(line) > limit:
        line = line[: limit - 1] + "…"
    if line.isprintable():
        return line
    return "".join(ch if ch.isprintable() else _escaped(ch) for ch in line)
