"""Markdown structure an importer keeps: front matter, title, sections with anchors.

Anchors follow the GitHub rule (lower-case, punctuation dropped, spaces to hyphens,
duplicates numbered `-1`, `-2` ...), so `path#anchor` locators open the right place in the
repository viewers people already use. Headings inside fenced code blocks are not headings.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    import yaml

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
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


def anchor_for(title: str) -> str:
    """The GitHub-style anchor of a heading text."""
    text = re.sub(r"[`*_~]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", title)
    text = _ANCHOR_DROP.sub("", text.strip().lower())
    return text.replace(" ", "-")


def sections_of(body: str) -> list[Section]:
    """The headings of `body` in order, each with its anchor and the text up to the next."""
    found: list[tuple[int, str, int]] = []  # level, title, line index
    lines = body.splitlines()
    fence: str | None = None
    for index, line in enumerate(lines):
        fence_match = _FENCE.match(line)
        if fence_match:
            marker = fence_match.group(1)
            if fence is None:
                fence = marker[0] * 3
            elif marker.startswith(fence):
                fence = None
            continue
        if fence is not None:
            continue
        match = _HEADING.match(line)
        if match:
            found.append((len(match.group(1)), match.group(2).strip(), index))
    seen: dict[str, int] = {}
    sections = []
    for position, (level, title, start) in enumerate(found):
        end = found[position + 1][2] if position + 1 < len(found) else len(lines)
        base = anchor_for(title)
        count = seen.get(base, 0)
        seen[base] = count + 1
        anchor = base if count == 0 else f"{base}-{count}"
        text = "\n".join(lines[start + 1 : end]).strip()
        sections.append(Section(level=level, title=title, anchor=anchor, body=text, line=start))
    return sections
