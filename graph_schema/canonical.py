"""The one place for canonical JSON, sha256-of-text and ISO time text (safe YAML:
`graph_schema.safe_yaml`).

Every hash the product promises (a KG record's `content_hash`, evidence and claim ids,
`pack_hash`, the Context Graph chain) reads one of the serialisations below. They share the
rules: keys sorted, no spaces, UTF-8 text kept (not `\\u` escaped), pydantic models and Neo4j
temporal values turned into plain JSON. Three hashes were promised before this module
existed and differ in two rules, so each keeps its own named form (changing one would change
every stored hash of that kind):

| form | used by | `None` in a map | datetimes |
| --- | --- | --- | --- |
| `canonical_json` | evidence ids, claim ids, `pack_hash` | kept | UTC `...Z` |
| `canonical_json_without_nulls` | KG `content_hash` | dropped (Neo4j keeps none) | UTC `...Z` |
| `canonical_json_offset_kept` | Context Graph chain, `rows_hash` | kept | offset kept as written |

tests/test_canonical.py pins each form's output and the hashes built on them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime, time, timedelta
from enum import Enum
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

from pydantic import BaseModel

HASH_PREFIX = "sha256:"
_PLAIN = frozenset({str, int, float, bool})


# -- time text ---------------------------------------------------------------------------


def iso_utc(value: datetime) -> str:
    """A datetime as UTC ISO-8601 with `Z` (a naive value is taken as UTC).

    Microseconds appear only when non-zero (`2026-07-23T10:03:00Z`).
    """
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def iso_utc_strict(value: datetime) -> str:
    """`iso_utc`, but a naive datetime is refused (what a KG record hash needs)."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"datetime without a zone cannot be hashed: {value.isoformat()}")
    return iso_utc(value)


def iso_utc_fixed(value: datetime) -> str:
    """UTC with always six fraction digits, so the strings sort as the instants do."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def epoch_micros(value: datetime) -> int:
    """A zoned datetime as integer microseconds since the epoch: the writer and the ingest
    mark compare times this way (hydrating Neo4j DateTime values costs more than writing)."""
    return (value - _EPOCH) // timedelta(microseconds=1)


def from_epoch_micros(value: int) -> datetime:
    """Integer microseconds since the epoch as an aware UTC datetime (`epoch_micros` undone)."""
    return _EPOCH + timedelta(microseconds=value)


def iso_offset_kept(value: datetime) -> str:
    """ISO-8601 as the value carries it; only a `+00:00` offset is written `Z`."""
    return value.isoformat().replace("+00:00", "Z")


# -- canonical JSON ----------------------------------------------------------------------


class _Form:
    """One set of canonical rules (see the module table)."""

    def __init__(
        self,
        *,
        drop_nulls: bool,
        datetime_text: Callable[[datetime], str],
        model_mode: str,
        allow_nan: bool,
        set_key: Callable[[Any], Any] | None,
    ) -> None:
        self.drop_nulls = drop_nulls
        self.datetime_text = datetime_text
        self.model_mode = model_mode
        self.allow_nan = allow_nan
        self.set_key = set_key

    def plain(self, value: Any) -> Any:
        # Exact built-in types first: the ABC checks below cost more than the work itself
        # on the ~10^5 records an ingest hashes and the ~200 values a run's lineage hashes.
        kind = type(value)
        if kind in _PLAIN or value is None:
            return value
        if kind is dict:
            plain = self.plain
            if self.drop_nulls:
                return {
                    str(k): v if type(v) in _PLAIN else plain(v)
                    for k, v in value.items()
                    if v is not None
                }
            return {str(k): v if type(v) in _PLAIN else plain(v) for k, v in value.items()}
        if kind is list or kind is tuple:
            plain = self.plain
            return [v if type(v) in _PLAIN else plain(v) for v in value]
        if kind is datetime:
            return self.datetime_text(value)
        if isinstance(value, str | bool | int | float):
            return value.value if isinstance(value, Enum) else value
        if isinstance(value, BaseModel):
            return self.plain(value.model_dump(mode=self.model_mode))
        # Exact plain scalars skip the call (same output): ingest hashes ~10^5 records.
        if isinstance(value, Mapping):
            return {
                str(k): v if type(v) in _PLAIN else self.plain(v)
                for k, v in value.items()
                if not (self.drop_nulls and v is None)
            }
        if isinstance(value, list | tuple):
            return [v if type(v) in _PLAIN else self.plain(v) for v in value]
        if isinstance(value, set | frozenset):
            items = [self.plain(v) for v in value]
            return sorted(items, key=self.set_key) if self.set_key else sorted(items)
        if isinstance(value, Enum):
            return self.plain(value.value)
        if isinstance(value, datetime):
            return self.datetime_text(value)
        if isinstance(value, date | time):
            return value.isoformat()
        if isinstance(value, bytes):
            return value.hex()
        native = _neo4j_native(value)
        if native is not value:
            return self.plain(native)
        raise TypeError(f"cannot serialise a value of type {type(value).__name__}")

    def dumps(self, value: Any) -> str:
        return json.dumps(
            self.plain(value),
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=self.allow_nan,
        )


def _neo4j_native(value: Any) -> Any:
    """A Neo4j temporal value (`neo4j.time.DateTime` and friends) as its Python equivalent;
    its ISO text when Python cannot hold it (nanoseconds, durations). Else `value` itself."""
    to_native = getattr(value, "to_native", None)
    iso_format = getattr(value, "iso_format", None)
    if callable(to_native):
        try:
            return to_native()
        except (ValueError, OverflowError):
            if not callable(iso_format):
                raise
    if callable(iso_format):
        return str(iso_format())
    return value


# Evidence ids, claim ids and pack_hash: nulls kept, UTC, NaN written as JSON would.
_PACK_FORM = _Form(
    drop_nulls=False, datetime_text=iso_utc, model_mode="python", allow_nan=True, set_key=None
)
# KG content_hash: Neo4j stores no null property, so a record read back hashes the same.
_RECORD_FORM = _Form(
    drop_nulls=True,
    datetime_text=iso_utc_strict,
    model_mode="python",
    allow_nan=False,
    set_key=None,
)


# The canonical JSON settings as one encoder, built once: `json.dumps` with arguments builds an
# encoder, and the C encoder under it, on every call (a third of a small value's cost).
_PLAIN_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)
if c_make_encoder is not None:
    # No cycle check: a value already plain JSON data (str/int/float/bool/None, lists, maps
    # with str keys) built by our own code holds no cycle.
    _PLAIN_ITERENCODE = c_make_encoder(
        None,
        _PLAIN_ENCODER.default,
        encode_basestring,
        None,
        _PLAIN_ENCODER.key_separator,
        _PLAIN_ENCODER.item_separator,
        True,  # sort_keys
        False,  # skipkeys
        False,  # allow_nan
    )

    def plain_canonical_json(value: Any) -> str:
        """The canonical text of a value that is already plain JSON data (no datetimes,
        models, sets or enums: the forms below convert those first), in one walk; the same
        text `canonical_json` gives it."""
        return "".join(_PLAIN_ITERENCODE(value, 0))

else:  # an interpreter without the C accelerator

    def plain_canonical_json(value: Any) -> str:
        """The canonical text of a value that is already plain JSON data."""
        return str(_PLAIN_ENCODER.encode(value))


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 kept, datetimes as UTC `...Z`, nulls kept."""
    return _PACK_FORM.dumps(value)


def canonical_json_without_nulls(value: Any) -> str:
    """`canonical_json` with `None` map values dropped and naive datetimes refused."""
    return _RECORD_FORM.dumps(value)


# Context Graph: models dumped as pydantic JSON, datetimes keep their offset, sets sorted
# by their own canonical text (defined after the function it needs).
_CHAIN_FORM = _Form(
    drop_nulls=False,
    datetime_text=iso_offset_kept,
    model_mode="json",
    allow_nan=False,
    set_key=None,
)
_CHAIN_FORM.set_key = lambda item: canonical_json_offset_kept(item)


def canonical_json_offset_kept(value: Any) -> str:
    """The Context Graph form: nulls kept, datetimes with the offset they carry."""
    return _CHAIN_FORM.dumps(value)


def plain_offset_kept(value: Any) -> Any:
    """`value` as the plain JSON data `canonical_json_offset_kept` serialises."""
    return _CHAIN_FORM.plain(value)


# -- sha256 --------------------------------------------------------------------------------


def sha256_hex(text: str) -> str:
    """Hex digest of the UTF-8 bytes of `text`."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_text(text: str) -> str:
    """`sha256:` + hex digest of the UTF-8 bytes of `text` (the form of `text_hash`)."""
    return HASH_PREFIX + sha256_hex(text)


def sha256_bytes(data: bytes) -> str:
    """`sha256:` + hex digest of `data`."""
    return HASH_PREFIX + hashlib.sha256(data).hexdigest()
