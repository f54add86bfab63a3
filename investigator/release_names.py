"""A release as people name it: its version alone ("2026.07.23.4", "v2026.07.23.4"), "release
2026.07.23.4", "the 2026.07.23.4 release", "release-2026.07.23.4", or its `deploy:` id.

The planner's mentions carry every one of those but the id as the canonical name
`release-<version>`; a release record is the one named when its id or name is the name, or
when its version is: its `release` property (what a bundle's Deployment calls its version),
else the version ending its id or name (`deploy:risk-engine-2026.07.22.3`,
`globex payment-api 2026.07.23.7`). Before, a release was found only when its name was
`release-<version>`: a bare version named none, and "release 2026.07.22.3" of a service whose
releases are named `risk-engine-2026.07.22.3` none either.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from investigator.lazy_pattern import LazyPattern

# A release version as the KG's releases carry it (date-shaped, four parts).
_VERSION = r"\d{4}\.\d{2}\.\d{2}\.\d+"
# Typed alone ("did 2026.07.23.4 follow the change policy?"), with a `v` or not: not a part of
# a longer dotted number, an id or a hyphenated name (those are read as what they are).
BARE_VERSION = LazyPattern(rf"(?<![\w.:/@-])v?({_VERSION})(?![\w-]|\.\w)", re.IGNORECASE)
_CANONICAL = LazyPattern(rf"(?:release-)?v?({_VERSION})", re.IGNORECASE)


def release_version(name: str) -> str | None:
    """The version a release mention names (`release-2026.07.23.1` or `2026.07.23.1` ->
    `2026.07.23.1`); None for a `deploy:` id or any other text (an id names one record)."""
    found = _CANONICAL.fullmatch(name.strip())
    return found.group(1) if found else None


def _ends_with_version(text: str, version: str) -> bool:
    """Whether `text` ends with `version` as its own word (`risk-engine-2026.07.22.3`)."""
    head = text.removesuffix(version)
    return head != text and (head == "" or head[-1] in " _:-")


def release_named(
    names: Iterable[str], element_id: str, name: str | None, version: str | None
) -> bool:
    """Whether the release record (`element_id`, its `name`, its `release` version) is one of
    the releases the question names (`Mentions.release_names()`)."""
    tail = element_id.split(":", 1)[-1].lower()
    own = {element_id.lower(), tail, (name or "").lower()}
    for named in names:
        lowered = named.strip().lower()
        if lowered in own:
            return True
        asked = release_version(lowered)
        if asked is None:
            continue
        if isinstance(version, str) and version.strip().lower().removeprefix("v") == asked:
            return True
        if _ends_with_version(tail, asked) or _ends_with_version((name or "").lower(), asked):
            return True
    return False


# A version already written with its noun ("release 2026.07.23.1", "the 2026.07.23.1 deploy").
_WITH_NOUN_BEFORE = LazyPattern(r"\b(?:release|deploy\w*|rollout)[\s_]+$", re.IGNORECASE)
_WITH_NOUN_AFTER = LazyPattern(r"^\s+(?:release|deploy\w*|rollout)\b", re.IGNORECASE)


def with_release_word(question: str) -> str:
    """`question` with each version typed alone read as "release <version>" ("what changed in
    2026.07.23.1?" -> "what changed in release 2026.07.23.1?"), so that the words that ask
    about a release ("what changed in", "when did ... finish") read it as one; a version
    already beside its noun, and the rest of the text, as typed."""
    out: list[str] = []
    last = 0
    for found in BARE_VERSION.finditer(question):
        before, after = question[: found.start()], question[found.end() :]
        if _WITH_NOUN_BEFORE.search(before) or _WITH_NOUN_AFTER.search(after):
            continue
        out += [question[last : found.start()], f"release {found.group(1)}"]
        last = found.end()
    return "".join(out) + question[last:] if out else question
