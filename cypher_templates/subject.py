"""The subject a query runs for: tenant, granted ACL labels, allowed purposes, chosen purpose.

A subject is always named within a tenant (`SubjectRef`: `acme/user:alice`, or `user:alice`
with tenant `acme`): principal ids are unique per tenant only, so an id alone names nobody.
Grants are read from the subject's current `:KG:Principal` record in that tenant (trusted),
never from a flag, and always **as of now**: `known_at` changes which KG facts a query sees,
never who the subject is or what it may read. An unknown subject, or a purpose it is not
allowed, is `NotAuthorized` (exit 3); a malformed reference is `BadInput` (exit 2).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, field_validator

from graph_schema.errors import BadInput, NotAuthorized

if TYPE_CHECKING:
    from cypher_templates.executor import TemplateExecutor

_TEXT_MAX = 200
# A tenant is an identifier (as in bundles), so it never contains the `/` that qualifies ids.
TENANT_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
TENANT_MAX = 100


class Subject(BaseModel):
    """Who asks, for which purpose; everything but `id`, `tenant`, `purpose` comes from the KG."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=_TEXT_MAX)
    tenant: str = Field(min_length=1, max_length=_TEXT_MAX)
    labels: tuple[str, ...] = ()
    purposes: tuple[str, ...] = ()
    purpose: str = Field(min_length=1, max_length=_TEXT_MAX)
    # Which holder of the id (PrincipalRecord.incarnation): recorded on its runs, never in
    # what it reads or hashes.
    incarnation: int = Field(default=1, ge=1, exclude=True)

    @field_validator("labels", "purposes")
    @classmethod
    def _sorted(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        # Sorted and deduplicated: these reach recorded tool calls and hashes.
        return tuple(sorted(set(value)))

    @property
    def ref(self) -> SubjectRef:
        """The tenant-qualified name of this subject."""
        return SubjectRef(tenant=self.tenant, id=self.id)


class PrincipalRecord(BaseModel):
    """What the current `:KG:Principal` record says about a subject."""

    model_config = ConfigDict(frozen=True)

    id: str
    tenant: str
    labels: tuple[str, ...]
    purposes: tuple[str, ...]
    # Which holder of the id this is: 1, then one more each time the id is written again
    # after a retraction (a new version for changed grants is the same holder).
    incarnation: int = 1
    # When this holder's first record was recorded, if an earlier holder was retracted: runs
    # that recorded no incarnation and started before it are the earlier holder's.
    incarnation_began: datetime | None = None

    @property
    def ref(self) -> SubjectRef:
        """The tenant-qualified name of this principal."""
        return SubjectRef(tenant=self.tenant, id=self.id)


def _check_tenant(value: str) -> str:
    if len(value) > TENANT_MAX or not TENANT_PATTERN.fullmatch(value):
        raise BadInput(
            f"tenant {value[:60]!r} is not a tenant name "
            f"([A-Za-z_][A-Za-z0-9_.-]*, at most {TENANT_MAX} characters)"
        )
    return value


def _check_id(value: str) -> str:
    if (
        not value
        or len(value) > _TEXT_MAX
        or not value.isprintable()
        or any(ch.isspace() for ch in value)
    ):
        raise BadInput(
            f"subject id {value[:60]!r} is not a principal id "
            f"(1..{_TEXT_MAX} printable characters, no spaces)"
        )
    return value


class SubjectRef(BaseModel):
    """A principal named within its tenant; `str(ref)` is the qualified form `tenant/id`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tenant: str
    id: str

    @field_validator("tenant")
    @classmethod
    def _tenant(cls, value: str) -> str:
        return _check_tenant(value)

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        return _check_id(value)

    def __str__(self) -> str:
        return f"{self.tenant}/{self.id}"

    @classmethod
    def parse(cls, text: str, tenant: str | None = None) -> SubjectRef:
        """`acme/user:alice`, or `user:alice` with `tenant="acme"`; anything else is BadInput.

        The text before the first `/` is a tenant when it is a tenant name (ids of the form
        `x/y` are then written qualified: `acme/x/y`). A qualified text and a differing
        `tenant` contradict each other and are refused rather than guessed.
        """
        if not isinstance(text, str) or not text:
            raise BadInput("subject is empty: give TENANT/ID, e.g. acme/user:alice")
        check_names_an_id(text)
        head, sep, rest = text.partition("/")
        if sep and TENANT_PATTERN.fullmatch(head) and rest:
            if tenant is not None and tenant != head:
                raise BadInput(
                    f"subject {text[:60]!r} names tenant {head!r} but the tenant given is "
                    f"{tenant[:60]!r}: give one of them"
                )
            return cls(tenant=_check_tenant(head), id=_check_id(rest))
        if tenant is None:
            check_tenant_written(text)
            raise BadInput(
                f"subject {text[:60]!r} has no tenant: write it as TENANT/ID "
                "(e.g. acme/user:alice) or give --tenant"
            )
        return cls(tenant=_check_tenant(tenant), id=_check_id(text))


def check_tenant_written(text: str) -> None:
    """`acme /user:bob`, `*/user:bob`: a tenant was meant before the `/` but is no tenant
    name; BadInput that says so (it said "has no tenant")."""
    head, sep, rest = text.partition("/")
    if sep and head and rest and not TENANT_PATTERN.fullmatch(head):
        raise BadInput(
            f"subject {text[:60]!r}: {head[:40]!r} before the '/' is not a tenant name "
            "(a letter or '_', then letters, digits, '_', '.', '-'): write it as TENANT/ID "
            "(e.g. acme/user:alice)"
        )


def check_names_an_id(text: str) -> None:
    """`acme/` (a tenant and nothing after the `/`) is BadInput that says the id is missing."""
    head, sep, rest = text.partition("/")
    if sep and not rest and TENANT_PATTERN.fullmatch(head):
        raise BadInput(
            f"subject {text[:60]!r} names tenant {head[:40]!r} but no id after the '/': "
            "write it as TENANT/ID (e.g. acme/user:alice)"
        )


def qualified_ref(value: SubjectRef | str) -> SubjectRef | None:
    """`value` as a SubjectRef when it is one or is written `tenant/id`; a bare id -> None."""
    if isinstance(value, SubjectRef):
        return value
    head, sep, rest = value.partition("/")
    if sep and TENANT_PATTERN.fullmatch(head) and rest:
        return SubjectRef.parse(value)
    return None


def _checked_purpose(value: str) -> str:
    if not value or len(value) > _TEXT_MAX or not value.isprintable():
        raise BadInput(f"purpose must be 1..{_TEXT_MAX} printable characters")
    return value


def read_principal(executor: TemplateExecutor, ref: SubjectRef) -> PrincipalRecord:
    """The subject's current Principal record in its tenant; unknown there -> NotAuthorized."""
    records = executor.read_principals(ref)
    if not records:
        # Only a principal that differs in case, or in the prefix of its id (`acme/bob` ->
        # acme/user:bob): its tenant and name are the ones typed, so the hint tells nothing
        # about a tenant or principal the caller did not already name.
        close = [str(r) for r in executor.principals_ignoring_case(ref) if r != ref]
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        raise NotAuthorized(f"unknown subject {ref.id!r} in tenant {ref.tenant!r}{hint}")
    return records[0]


def subject_for(record: PrincipalRecord, purpose: str) -> Subject:
    """The Subject of a principal record for `purpose`, or NotAuthorized."""
    _checked_purpose(purpose)
    if purpose not in record.purposes:
        raise NotAuthorized(
            f"subject {record.tenant}/{record.id} is not allowed purpose {purpose!r}"
        )
    return Subject(
        id=record.id,
        tenant=record.tenant,
        labels=record.labels,
        purposes=record.purposes,
        purpose=purpose,
        incarnation=record.incarnation,
    )


def first_allowed_purpose(
    executor: TemplateExecutor, ref: SubjectRef, purposes: Sequence[str]
) -> Subject:
    """The subject under the first of `purposes` it is allowed (e.g. runbook lookups)."""
    record = read_principal(executor, ref)
    for purpose in purposes:
        if purpose in record.purposes:
            return subject_for(record, purpose)
    raise NotAuthorized(f"subject {ref} is allowed none of the purposes {', '.join(purposes)}")


def load_subject(
    executor: TemplateExecutor,
    ref: SubjectRef | str,
    purpose: str,
    known_at: datetime | None = None,
) -> Subject:
    """Read the subject's current Principal record (as of now) and check `purpose`.

    `ref` is a SubjectRef or its text `tenant/id`; a bare id names nobody (BadInput: ids are
    unique per tenant only, issue 17). `known_at` is accepted for older callers and ignored on
    purpose: grants are the grants of now.
    """
    _checked_purpose(purpose)
    del known_at
    qualified = ref if isinstance(ref, SubjectRef) else SubjectRef.parse(ref)
    return subject_for(read_principal(executor, qualified), purpose)
