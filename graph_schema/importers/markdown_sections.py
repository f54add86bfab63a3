"""Markdown structure an importer keeps: front matter, title, sections with anchors.

Anchors follow the GitHub rule (lower-case, punctuation dropped, spaces to hyphens,
duplicates numbered `-1`, `-2` ...), so `path#anchor` locators open the right place in the
repository viewers people already use. Headings inside fenced code blocks are not headings.
Headings are read as CommonMark writes them: `#` headings and setext ones (a line underlined
with `===` or `---`, as AWS's GuardDuty pages title a finding); a line of backticks whose
info string holds a backtick (```` ```sudo iotop``` ````) is inline code, not a fence; a
note heading (`###### Note`) deeper than the section it is in is part of that section.
Titles are kept as written (`heading_text` reads one without its code spans' backticks).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    import yaml

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})(.*)$")
# A setext heading's underline (`===` level 1, `---` level 2) under a one-line paragraph.
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
# Lines that are no paragraph a setext underline can make a heading of.
_NOT_PARAGRAPH = re.compile(r"^(?: {4,}|\t|\s*(?:[-*+]\s|\d+[.)]\s|>|\||<!--|#{1,6}(?:\s|$)))")
# An aside's heading (AWS's `###### Note` inside a finding's text): part of its section.
_ASIDE_TITLE = re.compile(
    r"^(?:notes?|warnings?|important|tips?|cautions?|info)\W*$", re.IGNORECASE
)
# A code span in a heading (``## `KubeContainersWaitingInError` ``): its text is the title.
_CODE_SPAN = re.compile(r"(`+)(.+?)\1(?!`)")
_ANCHOR_DROP = re.compile(r"[^\w\- ]", re.UNICODE)


class FrontMatterError(ValueError):
    """The front matter block is present but not a YAML mapping."""


class Section(BaseModel):
    """One heading of a Markdown document and the text under it."""

    model_config = ConfigDict(frozen=True)

    level: int
    title: str
    anchor: str
    body: str
    line: int = 0  # the heading's line in the text, from 0


def load_yaml(text: str) -> Any:
    """Parse YAML as plain data, keeping times as text (no aliases, tags, repeated keys)."""
    # Imported here: a runbook lookup that meets no front matter never loads PyYAML.
    from graph_schema.safe_yaml import safe_yaml_load

    return safe_yaml_load(text)


# Plain scalars YAML reads as numbers or booleans: `version: 1.10` is the float 1.1.
_TYPED_SCALAR_TAGS = frozenset(
    {"tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool"}
)


def _written(node: yaml.Node) -> Any:
    """The text a plain number or boolean was written as (a list: each item's); None for
    anything else."""
    import yaml

    if isinstance(node, yaml.ScalarNode) and node.tag in _TYPED_SCALAR_TAGS:
        return node.value
    if isinstance(node, yaml.SequenceNode) and any(
        isinstance(item, yaml.ScalarNode) and item.tag in _TYPED_SCALAR_TAGS for item in node.value
    ):
        return [_written(item) if item.tag in _TYPED_SCALAR_TAGS else None for item in node.value]
    return None


def _as_written(block: str, data: dict[str, Any], text_keys: frozenset[str]) -> dict[str, Any]:
    """`data` with the values of `text_keys` that YAML read as numbers or booleans replaced
    by the text written (`version: 1.10` stays "1.10", `error_code: 0404` "0404")."""
    import yaml

    # The node tree of a block `load_yaml` already accepted (no aliases, tags or deep nesting).
    root = yaml.compose(block, Loader=yaml.SafeLoader)
    if not isinstance(root, yaml.MappingNode):
        return data
    out = dict(data)
    for key_node, value_node in root.value:
        key = str(key_node.value)
        if key not in text_keys or key not in out:
            continue
        written = _written(value_node)
        if isinstance(written, list):
            out[key] = [w if w is not None else v for w, v in zip(written, out[key], strict=True)]
        elif written is not None:
            out[key] = written
    return out


def split_front_matter(
    text: str, text_keys: frozenset[str] = frozenset()
) -> tuple[dict[str, Any], str]:
    """Split `---`-delimited YAML front matter from the body; no block -> ({}, text).

    `text_keys`: keys whose values are text however they look (a plain number or boolean
    keeps the text written, not YAML's reading of it)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n") != "---":
        return {}, text
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r\n") in ("---", "..."):
            block = "".join(lines[1:index])
            body = "".join(lines[index + 1 :])
            import yaml  # only a text with front matter needs it

            try:
                data = load_yaml(block) if block.strip() else {}
            except yaml.YAMLError as exc:
                raise FrontMatterError(
                    "front matter is not valid YAML: " + " ".join(str(exc).split())
                ) from exc
            if not isinstance(data, dict):
                raise FrontMatterError("front matter is not a YAML mapping")
            front = {str(k): v for k, v in data.items()}
            return (_as_written(block, front, text_keys) if text_keys else front), body
    raise FrontMatterError("front matter starts with `---` but is never closed")


def fence_marker(line: str, indent: int | None = 3) -> str | None:
    """The backticks or tildes of a code fence's line (None when `line` is none): at most
    `indent` spaces before it (None: any, a fence in a list item); after backticks, no
    backtick (CommonMark: ```` ```sudo iotop -P -a``` ```` is inline code)."""
    match = _FENCE.match(line.lstrip(" ")) if indent is None else _FENCE.match(line)
    if match is None or (indent is not None and len(line) - len(line.lstrip(" ")) > indent):
        return None
    marker, info = match.group(1), match.group(2)
    return None if marker[0] == "`" and "`" in info else marker


def heading_text(title: str) -> str:
    """A heading's text as a reader sees it: code spans without their backticks."""
    return _CODE_SPAN.sub(lambda m: m.group(2).strip(), title).strip()


def anchor_for(title: str) -> str:
    """The GitHub-style anchor of a heading text."""
    text = re.sub(r"[`*_~]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", title)
    text = _ANCHOR_DROP.sub("", text.strip().lower())
    return text.replace(" ", "-")


def _setext_level(lines: list[str], index: int, previous_heading: int) -> int | None:
    """The level of the setext heading whose underline is `lines[index]` (None if it is
    none): the line above is a one-line paragraph (the one before it blank, a heading's or
    the start), not a list item, a quote, a table row or code."""
    match = _SETEXT.match(lines[index])
    if match is None or index == 0:
        return None
    text = lines[index - 1]
    if not text.strip() or _NOT_PARAGRAPH.match(text) or _SETEXT.match(text):
        return None
    if index >= 2 and lines[index - 2].strip() and previous_heading != index - 2:
        return None  # a paragraph of several lines: left as it was read before
    return 1 if match.group(1).startswith("=") else 2


def sections_of(body: str) -> list[Section]:
    """The headings of `body` in order, each with its anchor and the text up to the next."""
    found: list[tuple[int, str, int, int]] = []  # level, title, line index, body's first line
    lines = body.splitlines()
    fence: str | None = None
    last_heading = -1  # the line of the last heading (an ATX one, for setext's rule)
    for index, line in enumerate(lines):
        marker = fence_marker(line)
        if marker is not None:
            if fence is None:
                fence = marker[0] * 3
            elif marker.startswith(fence):
                fence = None
            continue
        if fence is not None:
            continue
        match = _HEADING.match(line)
        if match:
            level, title = len(match.group(1)), match.group(2).strip()
            last_heading = index
            if found and level > found[-1][0] and _ASIDE_TITLE.match(heading_text(title)):
                continue  # "###### Note" deep in a section: its text is the section's
            found.append((level, title, index, index + 1))
            continue
        setext = _setext_level(lines, index, last_heading)
        if setext is not None:
            found.append((setext, lines[index - 1].strip(), index - 1, index + 1))
            last_heading = index
    seen: dict[str, int] = {}
    sections = []
    for position, (level, title, start, first) in enumerate(found):
        end = found[position + 1][2] if position + 1 < len(found) else len(lines)
        base = anchor_for(title)
        count = seen.get(base, 0)
        seen[base] = count + 1
        anchor = base if count == 0 else f"{base}-{count}"
        text = "\n".join(lines[first:end]).strip()
        sections.append(Section(level=level, title=title, anchor=anchor, body=text, line=start))
    return sections
