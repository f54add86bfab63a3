"""The content hashes of KG records (docs/contracts.md section 1).

`content_hash` is computed over the exact property map a record is stored with, minus the
transaction-time and derived properties, so anyone who reads a record back from Neo4j can
recompute it with `content_hash(record_properties)` and detect tampering.
"""

from __future__ import annotations

from collections.abc import Mapping
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
    }
)

# One canonical form for the whole product (graph_schema/canonical.py); the KG record form
# drops nulls because Neo4j stores none, so a record read back hashes like the one written.
canonical_json = canonical_json_without_nulls
utc_iso = iso_utc_strict


def content_hash(properties: Mapping[str, Any]) -> str:
    """The content hash of a record: its properties minus HASH_EXCLUDED_PROPERTIES."""
    payload = {k: v for k, v in properties.items() if k not in HASH_EXCLUDED_PROPERTIES}
    return sha256_text(canonical_json_without_nulls(payload))
