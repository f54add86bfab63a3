"""The words of a text as the fulltext index reads them, in any script.

Each tenant's fulltext index (`schema_ddl.tenant_fulltext_item`) uses Neo4j's default
analyzer, `standard-no-stop-words`: Lucene's StandardTokenizer (Unicode word boundaries,
UAX #29) and lower case, nothing folded or stemmed. So a word searched for must be one the
index holds:

- a run of letters, digits and the combining marks on them, in any script, is one word
  ("zählerstand", "réplication", "платежей", "हिन्दी"); `_`, `'` and other punctuation
  part words, as they always did here (`max_connections`: max, connections);
- a Han ideograph or a hiragana character is a word of its own, as the tokenizer emits
  them ("支付失败" is 支, 付, 失, 败: the index matches each);
- a run of katakana is one word ("データベース"), apart from letters beside it.

Before, only `a-z` and `0-9` made words: "gehörte" was "geh" and "rte", "Zählerstand" was
"z" and "hlerstand", words no page has, and a Cyrillic or Chinese text had none at all.
ASCII text reads exactly as it did (`[a-z0-9]+` of its lower case).
"""

from __future__ import annotations

import functools
import re
import unicodedata

_ASCII_WORD = re.compile(r"[a-z0-9]+")
_ASCII_PART = re.compile(r"[A-Za-z0-9]+")
# Letters and digits of any script (Python's `\w` less `_`): a text with no combining mark
# and no Han or kana (most text that is not ASCII: accents composed, Cyrillic) is read so.
_PLAIN_WORD = re.compile(r"[^\W_]+")
# Han ideographs (unified, extensions A to G, compatibility) and hiragana: one word each.
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_ONE_CHARACTER = _HAN + "\u3041-\u309f"
# Katakana (and its phonetic extensions, half-width forms, the prolonged sound mark): runs.
_KATAKANA = "\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9f"
_IDEOGRAPH = re.compile(f"[{_HAN}]")
_WRITTEN_APART = re.compile(f"[{_ONE_CHARACTER}{_KATAKANA}]+")


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """What tells a text that needs more than `_PLAIN_WORD` (a combining mark, Han or kana),
    and the words of such a text. Compiled on the first text that is not ASCII: the
    combining marks of the Basic Multilingual Plane are read from `unicodedata` once
    (Python's word class has no marks, so "हिन्दी" or a decomposed "é" would be cut at each)."""
    spans: list[list[int]] = []
    for c in range(0x80, 0x10000):
        if not unicodedata.category(chr(c)).startswith("M"):
            continue
        if spans and spans[-1][1] == c - 1:
            spans[-1][1] = c
        else:
            spans.append([c, c])
    marks = "".join(f"\\u{a:04x}-\\u{b:04x}" for a, b in spans)
    apart = _ONE_CHARACTER + _KATAKANA
    special = re.compile(f"[{marks}{apart}]")
    letters = f"[^\\W_{apart}]"
    word = re.compile(f"[{_ONE_CHARACTER}]|[{_KATAKANA}]+|(?:{letters}|[{marks}])+")
    return special, word


def _found(text: str) -> list[str]:
    """The words of `text`, a text that is not ASCII in NFC (composed, as the index's text
    mostly is), in its case."""
    special, word = _patterns()
    return (word if special.search(text) else _PLAIN_WORD).findall(text)


def words(text: str) -> list[str]:
    """The words of `text`, lower-cased, in order (see the module docstring)."""
    if text.isascii():
        return _ASCII_WORD.findall(text.lower())
    return _found(unicodedata.normalize("NFC", text).lower())


def word_parts(text: str) -> list[str]:
    """The words of `text` as `words` finds them, their case kept (for splitting CamelCase)."""
    if text.isascii():
        return _ASCII_PART.findall(text)
    return _found(unicodedata.normalize("NFC", text))


def is_ideograph(word: str) -> bool:
    """Whether `word` is one Han ideograph: a word of one character that names something (a
    hiragana character is mostly a particle or an ending: `の`, `を`, `する`)."""
    return _IDEOGRAPH.fullmatch(word) is not None


def is_written_apart(word: str) -> bool:
    """Whether `word` is written in a script whose words the analyzer cuts apart (Han,
    hiragana, katakana): no CamelCase, no words joined into one."""
    return _WRITTEN_APART.fullmatch(word) is not None
