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


# Deeper than any bundle, front matter or rule file nests (their deepest: 5), and shallow
# enough for every recursive reader after the parser (json.dumps, pydantic, the hashing).
MAX_YAML_DEPTH = 256


_PLAIN_DATA_RESOLVERS = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}

if hasattr(yaml, "CSafeLoader"):
    # libyaml's C parser and composer: about 6 times PyYAML's own (docs/benchmarks.md).
    class _Composer(yaml.CSafeLoader):
        """Composes the nodes only; `_plain_data` builds and checks the data from them."""

else:  # PyYAML built without libyaml: its pure-Python parser, the same checks after it

    class _Composer(yaml.SafeLoader):  # type: ignore[no-redef]
        """Composes the nodes only; `_plain_data` builds and checks the data from them."""


# No implicit timestamps: times stay text, checked for a zone by whoever reads them.
_Composer.yaml_implicit_resolvers = _PLAIN_DATA_RESOLVERS

_SCALAR_TAG = "tag:yaml.org,2002:"
_SEQ_TAG = _SCALAR_TAG + "seq"
_MAP_TAG = _SCALAR_TAG + "map"
_NUMBERS = yaml.constructor.SafeConstructor()  # its YAML 1.1 int and float rules


class _AliasFound(Exception):
    """A node reached twice while building the data: an alias (`*name`) to it."""


def _refused(problem: str, node: yaml.Node) -> yaml.constructor.ConstructorError:
    return yaml.constructor.ConstructorError(None, None, problem, node.start_mark)


def _scalar(node: yaml.Node) -> Any:
    if not isinstance(node, yaml.ScalarNode):
        raise _refused(f"YAML tag {_quoted(node.tag)} is not allowed on a list or map", node)
    kind = node.tag.removeprefix(_SCALAR_TAG)
    if kind == "str":
        return node.value
    if kind == "null":
        return None
    try:
        if kind == "bool":
            return _NUMBERS.bool_values[node.value.lower()]
        if kind == "int":
            return _NUMBERS.construct_yaml_int(node)
        return _NUMBERS.construct_yaml_float(node)
    except (KeyError, ValueError):  # an explicit `!!int x`: the text is not quoted back
        raise _refused(f"not a YAML {kind}", node) from None


def _plain_data(root: yaml.Node | None) -> Any:
    """The data of the composed nodes, built in a loop (no recursion) and refused at the
    first node that is not plain data: an alias (a node reached twice; however many, they
    cost nothing to compose), a tag beyond the plain ones, a repeated key, a key that is a
    list or map, or nesting deeper than `MAX_YAML_DEPTH`."""
    if root is None:
        return None
    seen: set[int] = set()
    opened: list[tuple[yaml.Node, Any, int]] = []  # the list or map `made` just began

    def made(node: yaml.Node, depth: int) -> Any:
        if id(node) in seen:
            raise _AliasFound()
        seen.add(id(node))
        if node.tag not in _PLAIN_TAGS:
            raise _refused(f"YAML tag {_quoted(node.tag)} is not allowed", node)
        if node.tag == _SEQ_TAG or node.tag == _MAP_TAG:
            if depth > MAX_YAML_DEPTH:
                raise NestedTooDeeply(f"nested too deeply (more than {MAX_YAML_DEPTH} levels)")
            shape = yaml.MappingNode if node.tag == _MAP_TAG else yaml.SequenceNode
            if not isinstance(node, shape):
                raise _refused(f"YAML tag {_quoted(node.tag)} is not allowed on text", node)
            collection: Any = {} if node.tag == _MAP_TAG else []
            opened.append((node, collection, depth))
            return collection
        return _scalar(node)

    data = made(root, 1)
    # Depth first in the file's order (the first refused node is the first in the file): a
    # frame per open list or map, its children taken one at a time.
    frames = []
    while opened:
        node, collection, depth = opened.pop()
        frames.append((iter(node.value), collection, depth + 1))
        while frames:
            children, collection, depth = frames[-1]
            child = next(children, None)
            if child is None:
                frames.pop()
                continue
            if isinstance(collection, list):
                collection.append(made(child, depth))
            else:
                key_node, value_node = child
                if not isinstance(key_node, yaml.ScalarNode):
                    # `? [a, b]` or `? {a: 1}`: no bundle, front matter or rule file has one.
                    raise _refused("a key must be text or a number, not a list or map", key_node)
                key = made(key_node, depth)
                if key in collection:
                    raise _refused(f"duplicate key {_quoted(key)}", key_node)
                collection[key] = made(value_node, depth)
            if opened:  # the child was a list or map: its own children come next
                node, child_collection, _ = opened.pop()
                frames.append((iter(node.value), child_collection, depth + 1))
    return data


def _first_alias(text: str) -> Any:
    # Where the first `*name` is, found again only when an alias was (an error's position).
    loader = yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.events.AliasEvent):
            return event.start_mark
    return None


class NestedTooDeeply(yaml.YAMLError):
    """YAML nested deeper than `MAX_YAML_DEPTH` or a parser allows (a hostile file)."""


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
        composer = _Composer(text)
        try:
            root = composer.get_single_node()
        finally:
            composer.dispose()
        return refuse_lone_surrogates(text, _plain_data(root))
    except RecursionError:
        raise NestedTooDeeply("nested too deeply") from None
    except UnicodeEncodeError:  # libyaml reads UTF-8: a surrogate in the text cannot be one
        raise LoneSurrogate() from None
    except _AliasFound:
        exc = yaml.composer.ComposerError(None, None, _ALIAS_REFUSED, _first_alias(text))
        raise _without_text(exc, first_line - 1) from None
    except yaml.MarkedYAMLError as exc:
        raise _without_text(_plain_problem(exc, text), first_line - 1) from None


_ALIAS_REFUSED = "YAML aliases are not allowed"


def _at_surrogate(text: str, mark: yaml.Mark | None) -> bool:
    # libyaml marks the escape's first hex digit, two characters after its backslash.
    return mark is not None and _SURROGATE_ESCAPE.match(text, max(mark.index - 2, 0)) is not None


def _plain_problem(exc: yaml.MarkedYAMLError, text: str) -> yaml.MarkedYAMLError:
    # libyaml's words for what the checks above refuse, in their words: an alias to no
    # anchor is still an alias; an escape it cannot decode is half of a UTF-16 pair.
    if exc.problem == "exceeded maximum nesting depth":
        raise NestedTooDeeply(f"nested too deeply (more than {MAX_YAML_DEPTH} levels)") from None
    if exc.problem == "found undefined alias":
        exc.problem = _ALIAS_REFUSED
    elif exc.problem == "found invalid Unicode character escape code" and _at_surrogate(
        text, exc.problem_mark
    ):
        raise LoneSurrogate() from None
    return exc
