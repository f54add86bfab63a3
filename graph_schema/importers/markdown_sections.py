"""Markdown structure an importer keeps: front matter, title, sections with anchors.

Anchors follow the GitHub rule (lower-case, punctuation dropped, spaces to hyphens,
duplicates numbered `-1`, `-2` ...), so `path#anchor` locators open the right place in the
repository viewers people already use. Headings inside fenced code blocks are not headings.
Headings are read as CommonMark writes them: `#` headings and setext ones (a paragraph, of
one line or several, underlined with `===` or `---`, as AWS's GuardDuty pages title a
finding); a line of backticks whose info string holds a backtick (```` ```sudo iotop``` ````)
is inline code, not a fence, and a fence closes only at a bare fence at least as long as its
opening (```` ```bash ```` inside one is code); a note heading (`###### Note`) deeper than
the section it is in is part of that section.
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
# A setext heading's underline (`===` level 1, `---` level 2) under a paragraph.
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
# Lines that start no paragraph a setext underline can make a heading of.
_NOT_PARAGRAPH = re.compile(r"^(?: {4,}|\t|\s*(?:[-*+]\s|\d+[.)]\s|>|\||<!--|#{1,6}(?:\s|$)))")
# Lines that end a paragraph and start a block of their own (a list item, a quote, a table
# row, a comment); an indented line is the paragraph's next line, as is "2." (CommonMark:
# only a list starting at 1 interrupts a paragraph).
_INTERRUPTS = re.compile(r"^ {0,3}(?:[-*+]\s|1[.)]\s|>|\||<!--)")
_INDENTED = re.compile(r"^(?: {4,}|\t)")
# A thematic break (`***`, `- - -`, `___`): no paragraph's text.
_THEMATIC_BREAK = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
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


def load_yaml(text: str, first_line: int = 1) -> Any:
    """Parse YAML as plain data, keeping times as text (no aliases, tags, repeated keys);
    an error's lines counted from `first_line`, the line of the file `text` starts on."""
    # Imported here: a runbook lookup that meets no front matter never loads PyYAML.
    from graph_schema.safe_yaml import safe_yaml_load

    return safe_yaml_load(text, first_line)


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
                # Its lines counted as the file's (the block starts after the `---` line),
                # as the gate counts them: before, "line 1" was the file's line 2.
                data = load_yaml(block, first_line=2) if block.strip() else {}
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


class FenceReader:
    """Which lines open, close or sit inside a fenced code block, read line by line as
    CommonMark reads them: a fence closes only at a line of its own character, at least as
    long as its opening, with nothing after it (```` ```bash ```` inside a fence is code: it
    closes nothing, it was read as a close before and the rest of the code became text)."""

    def __init__(self, indent: int | None = 3) -> None:
        self._indent = indent  # as `fence_marker`'s
        self._open: str | None = None  # the opening fence's marker while one is open

    @property
    def inside(self) -> bool:
        """Whether a fence is open (after the lines fed so far)."""
        return self._open is not None

    def fence_line(self, line: str) -> bool:
        """Feed the next line: whether it is a fence's own line (opening or closing one)."""
        marker = fence_marker(line, self._indent)
        if self._open is None:
            self._open = marker
            return marker is not None
        closing = (
            marker is not None
            and marker[0] == self._open[0]
            and len(marker) >= len(self._open)
            and not line.strip().lstrip(marker[0]).strip()
        )
        if closing:
            self._open = None
        return closing


def heading_text(title: str) -> str:
    """A heading's text as a reader sees it: code spans without their backticks."""
    return _CODE_SPAN.sub(lambda m: m.group(2).strip(), title).strip()


def anchor_for(title: str) -> str:
    """The GitHub-style anchor of a heading text: `OSD_DOWN` is `osd_down` (a `_` inside a
    name is kept; only emphasis' `_foo_` marks go)."""
    text = _UNDERSCORE_EMPHASIS.sub(lambda m: m.group(2), title)
    text = re.sub(r"[`*~]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", text)
    text = _ANCHOR_DROP.sub("", text.strip().lower())
    return text.replace(" ", "-")


def legacy_anchors(titles: list[str]) -> list[str]:
    """The anchors imports wrote before `_` was kept (until 2026-12-05: `OSD_DOWN` was
    `osddown`), repeats numbered as `sections_of` numbers them: a record holding these for
    the same headings is unchanged on re-import (`markdown_runbooks`), not a new version."""
    seen: dict[str, int] = {}
    anchors = []
    for title in titles:
        text = re.sub(r"[`*_~]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", title)
        base = _ANCHOR_DROP.sub("", text.strip().lower()).replace(" ", "-")
        count = seen.get(base, 0)
        seen[base] = count + 1
        anchors.append(base if count == 0 else f"{base}-{count}")
    return anchors


# Emphasis with `_` (CommonMark): never inside a word (`snake_case_name` is a name).
_UNDERSCORE_EMPHASIS = re.compile(r"(?<![\w_])(_{1,3})(?![\s_])(.+?)(?<![\s_])\1(?![\w_])")


def same_anchor(anchor: str) -> str:
    """`anchor` as fragments are compared: `-` and `_` alike, any case (a Sphinx site's
    `#osd-down` and GitHub's `#osd_down` name the heading `OSD_DOWN`)."""
    return anchor.replace("_", "-").casefold()


class _Paragraphs:
    """Whether the lines read so far end in a plain paragraph (the text a setext underline
    makes a heading of), and where it starts: a paragraph of several lines is one heading
    (CommonMark); a list item's, a quote's or a table's lines (and their lazy continuation)
    and indented code are none."""

    def __init__(self) -> None:
        self.start: int | None = None  # the first line of the open plain paragraph
        self._other: str | None = None  # "block" (its lines run to a blank) or "code"

    def end(self) -> None:
        """A blank line, a heading, a fence or a rule: no paragraph is open."""
        self.start, self._other = None, None

    def read(self, index: int, line: str) -> None:
        """Read the next line, not blank, no heading, fence or setext underline."""
        if self._other == "code" and _INDENTED.match(line):
            return  # more indented code
        if _THEMATIC_BREAK.match(line):
            self.end()
        elif self._other == "block":
            return  # a list item's, a quote's or a table's (lazy) continuation
        elif self.start is None:
            if _INDENTED.match(line):
                self._other = "code"
            elif _NOT_PARAGRAPH.match(line):
                self._other = "block"
            else:
                self.start, self._other = index, None
        elif _INTERRUPTS.match(line):
            self.start, self._other = None, "block"


def sections_of(body: str) -> list[Section]:
    """The headings of `body` in order, each with its anchor and the text up to the next."""
    found: list[tuple[int, str, int, int]] = []  # level, title, line index, body's first line
    lines = body.splitlines()
    fences = FenceReader()
    paragraph = _Paragraphs()
    for index, line in enumerate(lines):
        if fences.fence_line(line) or fences.inside or not line.strip():
            paragraph.end()
            continue
        match = _HEADING.match(line)
        if match:
            paragraph.end()
            level, title = len(match.group(1)), match.group(2).strip()
            if found and level > found[-1][0] and _ASIDE_TITLE.match(heading_text(title)):
                continue  # "###### Note" deep in a section: its text is the section's
            found.append((level, title, index, index + 1))
            continue
        underline = _SETEXT.match(line)
        if underline is not None and paragraph.start is not None:
            # The paragraph's lines are the heading's text, one line as a reader sees it.
            title = " ".join(text.strip() for text in lines[paragraph.start : index])
            level = 1 if underline.group(1).startswith("=") else 2
            found.append((level, title, paragraph.start, index + 1))
            paragraph.end()
            continue
        paragraph.read(index, line)
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


# How alike (difflib's ratio of their anchors) a heading must be to a name to be offered as
# the one meant: one letter in a long alert name (`MimirIngesterUnhealthy`,
# `MimirIngestersUnhealthy`: 0.98), not another alert of the same component.
CLOSE_HEADING_RATIO = 0.85
CLOSE_HEADINGS = 3


def names_section(name: str, titles: list[str], anchors: list[str] | None = None) -> bool:
    """Whether `name` (a `runbook_url` fragment, an alert name) names one of the sections:
    its anchor (`mimiringesterunhealthy`) or its heading, in any case."""
    wanted = heading_text(name).casefold()
    anchor = same_anchor(anchor_for(name))
    known = {same_anchor(a) for a in anchors or []} | {same_anchor(anchor_for(t)) for t in titles}
    return anchor in known or any(heading_text(t).casefold() == wanted for t in titles)


def close_headings(names: list[str], titles: list[str]) -> list[str]:
    """The headings spelled almost like one of `names` (a section renamed by a letter, a typo
    in a `runbook_url`), best first, at most CLOSE_HEADINGS; none that one of them names."""
    import difflib  # only when a name heads no section

    by_anchor: dict[str, str] = {}
    for title in titles:
        by_anchor.setdefault(anchor_for(heading_text(title)), heading_text(title))
    found: list[str] = []
    for name in names:
        anchor = anchor_for(heading_text(name))
        if not anchor or anchor in by_anchor:
            continue
        close = difflib.get_close_matches(
            anchor, list(by_anchor), n=CLOSE_HEADINGS, cutoff=CLOSE_HEADING_RATIO
        )
        found.extend(by_anchor[key] for key in close)
    return list(dict.fromkeys(found))[:CLOSE_HEADINGS]
