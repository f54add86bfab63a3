"""Safe YAML: plain data only, and errors that never quote the file's text.

Kept apart from `graph_schema.canonical` so that importing the hashing and time helpers does
not import PyYAML: a new CLI process that reads no YAML (the template registry reads its
compiled file) never loads it.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

# The tags plain YAML data resolves to; an explicit `!tag` or `!!python/...` is refused.
_PLAIN_TAGS = frozenset(
    "tag:yaml.org,2002:" + name for name in ("str", "int", "float", "bool", "null", "seq", "map")
)


# How much of a file's own text (a key, a tag) a parse error may quote.
_QUOTED_CHARS = 60


def _quoted(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _QUOTED_CHARS else text[: _QUOTED_CHARS - 3] + "..."


class YamlNotParseable(yaml.MarkedYAMLError):
    """A YAML error told as `line L, column C: problem`, without the file's text.

    PyYAML's own message quotes the lines around the error; a file that is not YAML at all
    (a secret, a key file) would then be echoed into an error message."""

    def __str__(self) -> str:
        text = f"{_position(self.problem_mark)}{self.problem or 'not YAML'}"
        if self.context:
            text += f" ({self.context}{_position(self.context_mark, ' at ')})"
        return text


def _position(mark: yaml.Mark | None, prefix: str = "") -> str:
    if mark is None:
        return ""
    where = f"line {mark.line + 1}, column {mark.column + 1}"
    return f"{prefix}{where}" if prefix else f"{where}: "


def _without_text(exc: yaml.MarkedYAMLError, lines_before: int = 0) -> YamlNotParseable:
    # Marks keep the position and drop the buffer (the text a snippet would quote); their
    # lines are counted from the file's first line (`lines_before` the parsed text).
    def bare(mark: yaml.Mark | None) -> yaml.Mark | None:
        if mark is None:
            return None
        return yaml.Mark(mark.name, mark.index, mark.line + lines_before, mark.column, None, 0)

    return YamlNotParseable(
        context=exc.context,
        context_mark=bare(exc.context_mark),
        problem=exc.problem,
        problem_mark=bare(exc.problem_mark),
    )


class _SafeDataLoader(yaml.SafeLoader):
    """Plain data only: no aliases (no "billion laughs"), no tags beyond the plain ones, no
    silently repeated keys, no keys that are lists or maps, and no implicit timestamps (times
    stay text, checked for a zone by whoever reads them)."""

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.check_event(yaml.events.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "YAML aliases are not allowed", event.start_mark
            )
        node = super().compose_node(parent, index)
        if node is not None and node.tag not in _PLAIN_TAGS:
            raise yaml.constructor.ConstructorError(
                None, None, f"YAML tag {_quoted(node.tag)} is not allowed", node.start_mark
            )
        return node

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                # `? [a, b]` or `? {a: 1}`: no bundle, front matter or rule file has one.
                raise yaml.constructor.ConstructorError(
                    None, None, "a key must be text or a number, not a list or map",
                    key_node.start_mark,
                )  # fmt: skip
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {_quoted(key)}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


_SafeDataLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class NestedTooDeeply(yaml.YAMLError):
    """YAML nested deeper than the parser's recursion allows (a hostile file, not a bundle)."""


class LoneSurrogate(yaml.YAMLError, ValueError):
    """A `\\ud800`-style escape that decodes to half of a UTF-16 pair: no text at all (it
    cannot be written as UTF-8, so it failed deep in the ingest with exit 1)."""

    def __str__(self) -> str:
        return "holds a lone UTF-16 surrogate escape (such as \\ud800), which is no text"


# The only way a surrogate gets into text decoded from UTF-8: an escape the parser decodes.
_SURROGATE_ESCAPE = re.compile(r"\\u0*[dD][89a-fA-F][0-9a-fA-F]{2}")


def refuse_lone_surrogates(text: str, data: Any) -> Any:
    """`data` parsed from `text`, or `LoneSurrogate` when an escape in `text` left half of a
    UTF-16 pair in it (a well-formed JSON pair decodes to one character and passes)."""
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(data, ensure_ascii=False, default=str).encode("utf-8")
        except UnicodeEncodeError:
            raise LoneSurrogate() from None
    return data


def safe_yaml_load(text: str, first_line: int = 1) -> Any:
    """Parse YAML as plain data (see `_SafeDataLoader`); errors are `yaml.YAMLError`, and
    their message gives a line and column, never the text around it (`YamlNotParseable`).

    `first_line`: the line of its file `text` starts on (front matter: 2, after `---`), so
    that an error's lines are the file's, as a reader opening it counts them."""
    try:
        return refuse_lone_surrogates(text, yaml.load(text, Loader=_SafeDataLoader))  # noqa: S506
    except RecursionError:
        raise NestedTooDeeply("nested too deeply") from None
    except yaml.MarkedYAMLError as exc:
        raise _without_text(exc, first_line - 1) from None
