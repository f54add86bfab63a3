"""Canonical JSON and the content hashes of KG records (docs/contracts.md section 1).

`content_hash` is computed over the exact property map a record is stored with, minus the
transaction-time and derived properties, so anyone who reads a record back from Neo4j can
recompute it with `content_hash(record_properties)` and detect tampering.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any

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
    }
)

HASH_PREFIX = "sha256:"


def utc_iso(value: datetime) -> str:
    """A zoned datetime as UTC ISO-8601 with a trailing `Z` (naive datetimes are refused)."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"datetime without a zone cannot be hashed: {value.isoformat()}")
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _json_default(value: Any) -> Any:
    # Neo4j temporal values come back as neo4j.time types; hash their native equivalent so a
    # record read from the database hashes like the one that was written.
    to_native = getattr(value, "to_native", None)
    if to_native is not None and not isinstance(value, datetime | date):
        value = to_native()
    if isinstance(value, datetime):
        return utc_iso(value)
    if isinstance(value, date):
        return value.isoformat()
    raise TypeError(f"cannot hash a value of type {type(value).__name__}")


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_drop_nulls(v) for v in value]
    return value


def canonical_json(value: Any) -> str:
    """Canonical JSON: sorted keys, no spaces, UTF-8 text, datetimes as UTC `...Z`.

    `None` values inside maps are dropped, because Neo4j does not store null properties and a
    record read back must hash like the record that was written.
    """
    return json.dumps(
        _drop_nulls(value),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        default=_json_default,
    )


def sha256_text(text: str) -> str:
    """`sha256:` + hex digest of the UTF-8 bytes of `text` (used for text_hash)."""
    return HASH_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_hash(properties: Mapping[str, Any]) -> str:
    """The content hash of a record: its properties minus HASH_EXCLUDED_PROPERTIES."""
    payload = {k: v for k, v in properties.items() if k not in HASH_EXCLUDED_PROPERTIES}
    return sha256_text(canonical_json(payload))
