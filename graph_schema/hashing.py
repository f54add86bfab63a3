"""The content hashes of KG records (docs/contracts.md section 1).

`content_hash` is computed over the exact property map a record is stored with, minus the
transaction-time and derived properties, so anyone who reads a record back from Neo4j can
recompute it with `content_hash(record_properties)` and detect tampering.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import datetime
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

from graph_schema.canonical import (
    HASH_PREFIX,
    canonical_json_without_nulls,
    iso_utc_strict,
    sha256_text,
)

__all__ = [
    "HASH_EXCLUDED_PROPERTIES",
    "HASH_PREFIX",
    "canonical_json",
    "content_hash",
    "sha256_text",
    "utc_iso",
]

# Properties that change without the world or our knowledge of it changing: left out.
HASH_EXCLUDED_PROPERTIES: frozenset[str] = frozenset(
    {
        "version",
        "recorded_at",
        "superseded_at",
        "content_hash",
        "text_hash",
        "redacted_text_hash",
        "search_text",
        "purged_at",
        # where a file's content starts (markdown-runbooks): derived from the file, whose
        # every change is already a new source_version; left out so that the records written
        # before it existed stay one version
        "content_first_line",
    }
)

# One canonical form for the whole product (graph_schema/canonical.py); the KG record form
# drops nulls because Neo4j stores none, so a record read back hashes like the one written.
canonical_json = canonical_json_without_nulls
utc_iso = iso_utc_strict


# `canonical_json_without_nulls`'s JSON settings, built once (ingest hashes ~10^5 records).
_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)
_ENCODE = _ENCODER.encode
if c_make_encoder is not None:
    # What `_ENCODE` runs, made once instead of on every call (with a closure and a dict for
    # cycle checks each time: a third of its cost). A payload of `_record_payload` holds only
    # plain values and lists of strings, so it has no cycle to check for.
    _C_ITERENCODE = c_make_encoder(
        None,
        _ENCODER.default,
        encode_basestring,
        None,
        _ENCODER.key_separator,
        _ENCODER.item_separator,
        True,  # sort_keys
        False,  # skipkeys
        False,  # allow_nan
    )

    def _encode_plain(payload: dict[str, Any]) -> str:
        return "".join(_C_ITERENCODE(payload, 0))

else:  # an interpreter without the C accelerator

    def _encode_plain(payload: dict[str, Any]) -> str:
        return _ENCODE(payload)


def _record_payload(properties: Mapping[str, Any]) -> dict[str, Any] | None:
    """The hashed map of a record whose values are all plain (exact str/int/float/bool,
    lists of str, UTC-offset datetimes), exactly as `canonical_json_without_nulls` would
    see it; None when any value needs the general form (enums, models, Neo4j values...)."""
    payload: dict[str, Any] = {}
    for name, value in properties.items():
        if value is None or name in HASH_EXCLUDED_PROPERTIES:
            continue
        kind = type(value)
        if kind is str or kind is int or kind is float or kind is bool:
            payload[name] = value
        elif kind is list:
            for item in value:
                if type(item) is not str:
                    return None
            payload[name] = value
        elif kind is datetime:
            # `iso_utc_strict` of a zero-offset time: its wall clock with `Z`. Its isoformat
            # ends in `+00:00` exactly when its offset is zero (a naive time has no suffix).
            text = value.isoformat()
            if not text.endswith("+00:00"):
                return None
            payload[name] = text[:-6] + "Z"
        else:
            return None
    return payload


def content_hash(properties: Mapping[str, Any]) -> str:
    """The content hash of a record: its properties minus HASH_EXCLUDED_PROPERTIES."""
    payload = _record_payload(properties) if type(properties) is dict else None
    if payload is None:
        payload = {k: v for k, v in properties.items() if k not in HASH_EXCLUDED_PROPERTIES}
        return sha256_text(canonical_json_without_nulls(payload))
    return HASH_PREFIX + hashlib.sha256(_encode_plain(payload).encode("utf-8")).hexdigest()
