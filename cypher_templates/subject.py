"""The subject a query runs for: tenant, granted ACL labels, allowed purposes, chosen purpose.

Grants are read from the subject's `:KG:Principal` record (trusted), never from a flag.
An unknown subject, or a purpose it is not allowed, is `NotAuthorized` (exit 3).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, field_validator

from investigator.errors import BadInput, NotAuthorized

if TYPE_CHECKING:
    from cypher_templates.executor import TemplateExecutor

_TEXT_MAX = 200


class Subject(BaseModel):
    """Who asks, for which purpose; everything but `id` and `purpose` comes from the KG."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=_TEXT_MAX)
    tenant: str = Field(min_length=1, max_length=_TEXT_MAX)
    labels: tuple[str, ...] = ()
    purposes: tuple[str, ...] = ()
    purpose: str = Field(min_length=1, max_length=_TEXT_MAX)

    @field_validator("labels", "purposes")
    @classmethod
    def _sorted(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        # Sorted and deduplicated: these reach recorded tool calls and hashes.
        return tuple(sorted(set(value)))


class PrincipalRecord(BaseModel):
    """What the current `:KG:Principal` record says about a subject."""

    model_config = ConfigDict(frozen=True)

    id: str
    tenant: str
    labels: tuple[str, ...]
    purposes: tuple[str, ...]


def _checked_text(what: str, value: str) -> str:
    if not value or len(value) > _TEXT_MAX or any(ord(c) < 32 for c in value):
        raise BadInput(f"{what} must be 1..{_TEXT_MAX} printable characters")
    return value


def load_subject(
    executor: TemplateExecutor, subject_id: str, purpose: str, known_at: datetime
) -> Subject:
    """Read the subject's Principal record current at `known_at` and check `purpose`."""
    _checked_text("subject", subject_id)
    _checked_text("purpose", purpose)
    records = executor.read_principals(subject_id, known_at)
    if not records:
        raise NotAuthorized(f"unknown subject {subject_id!r}")
    if len({r.tenant for r in records}) > 1:
        # Ids are globally unique; two tenants claiming one principal id is not resolvable.
        raise NotAuthorized(f"subject {subject_id!r} is ambiguous across tenants")
    record = records[0]
    if purpose not in record.purposes:
        raise NotAuthorized(f"subject {subject_id!r} is not allowed purpose {purpose!r}")
    return Subject(
        id=record.id,
        tenant=record.tenant,
        labels=record.labels,
        purposes=record.purposes,
        purpose=purpose,
    )
