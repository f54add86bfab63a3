"""The content hashes of KG records (docs/contracts.md section 1).

`content_hash` is computed over the exact property map a record is stored with, minus the
transaction-time and derived properties, so anyone who reads a record back from Neo4j can
recompute it with `content_hash(record_properties)` and detect tampering.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from graph_schema.canonical import (
    HASH_PREFIX,
    canonical_json_without_nulls,
    iso_utc_strict,
    plain_canonical_json,
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
    return HASH_PREFIX + hashlib.sha256(plain_canonical_json(payload).encode("utf-8")).hexdigest()
