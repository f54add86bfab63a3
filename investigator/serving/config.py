"""The `[mcp]` table of the config file: bearer tokens and the principals they act as.

```toml
[mcp]
host = "127.0.0.1"         # optional; loopback unless the operator says otherwise
port = 8765                # optional
purpose = "incident_investigation"   # optional; the purpose every served call runs under
max_sessions_per_principal = 32      # optional; open HTTP sessions one principal may hold
session_idle_seconds = 1800          # optional; an HTTP session idle this long is ended
max_calls_per_principal = 8          # optional; HTTP requests one principal may have in flight

[[mcp.tokens]]
sha256 = "<sha256 hex of the token>"  # `investigator mcp token` prints a new token and this
subject = "acme/user:bob"             # tenant-qualified principal (or `subject` + `tenant`)
incarnation = 1                       # optional: the holder of the id the token was issued for
expires_at = 2027-01-03T08:00:00Z     # optional (RFC 3339, with a zone): refused from then on
```

Over HTTP, a principal holds at most `max_sessions_per_principal` open sessions (a request
that would open one more gets 429), so one token cannot take the SDK's 10,000 for the whole
server; the SDK ends a session after `session_idle_seconds` without a request. It has at
most `max_calls_per_principal` requests in flight (429 beyond), so one token's flood of calls
does not make everyone else's wait behind it.

A token whose entry has `incarnation` (`investigator mcp token` writes it when the principal
exists) is refused once its id was retracted and written again for someone new, whenever the
server started; one without it serves the holder the server first saw for its id.

Only the token's hash is stored, so the config file does not hold a usable secret. Every
entry is checked when the server starts: one without a tenant (`subject = "user:bob"` and no
`tenant`) is refused there, naming the entry. The `[subject]` table and
`INVESTIGATOR_TENANT` name the CLI user and are not applied to tokens: a token's principal is
written in its entry, whoever starts the server.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError, field_validator

from cypher_templates.subject import SubjectRef
from investigator.errors import BadInput
from investigator.settings import read_config_section

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
# One principal's open sessions: enough for a few IDEs and agents, far below the SDK's
# 10,000 for the whole server, so one token cannot take every session from the others.
DEFAULT_MAX_SESSIONS_PER_PRINCIPAL = 32
DEFAULT_SESSION_IDLE_SECONDS = 1800  # the SDK's own default (30 minutes)
# One principal's requests in flight at once: room for an agent's parallel calls, while the
# others' calls wait behind at most these (the backend runs 4 at a time for everyone).
DEFAULT_MAX_CALLS_PER_PRINCIPAL = 8
_SHA256 = re.compile(r"[0-9a-fA-F]{64}")


class TokenEntry(BaseModel):
    """One `[[mcp.tokens]]` entry."""

    model_config = ConfigDict(extra="forbid")

    sha256: str
    subject: str = Field(min_length=1, max_length=300)
    tenant: str | None = None
    name: str | None = Field(default=None, max_length=100)  # a note for the operator
    expires_at: AwareDatetime | None = None  # refused from this instant on (None: never)
    # The holder of the id the token was issued for (None: the one the server first sees).
    incarnation: int | None = Field(default=None, ge=1, strict=True)

    @field_validator("sha256")
    @classmethod
    def _hex(cls, value: str) -> str:
        if not _SHA256.fullmatch(value):
            raise ValueError("must be the 64 hex digits of the token's sha256")
        return value.lower()

    @field_validator("expires_at")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return None if value is None else value.astimezone(UTC)

    def principal(self) -> SubjectRef:
        return SubjectRef.parse(self.subject, self.tenant)

    def label(self, index: int) -> str:
        """How an error names this entry: its place, its name or the start of its hash."""
        named = f"name {self.name!r}" if self.name else f"sha256 {self.sha256[:12]}..."
        return f"[[mcp.tokens]] entry {index + 1} ({named})"

    def expired(self, now: datetime) -> bool:
        """True from `expires_at` on."""
        return self.expires_at is not None and now >= self.expires_at


class McpConfig(BaseModel):
    """The `[mcp]` table."""

    model_config = ConfigDict(extra="forbid")

    host: str = DEFAULT_HOST
    port: int = Field(default=DEFAULT_PORT, ge=1, le=65535)
    purpose: str | None = Field(default=None, min_length=1, max_length=100)
    max_sessions_per_principal: int = Field(
        default=DEFAULT_MAX_SESSIONS_PER_PRINCIPAL, ge=1, le=10_000, strict=True
    )
    session_idle_seconds: int = Field(
        default=DEFAULT_SESSION_IDLE_SECONDS, ge=1, le=86_400, strict=True
    )
    max_calls_per_principal: int = Field(
        default=DEFAULT_MAX_CALLS_PER_PRINCIPAL, ge=1, le=10_000, strict=True
    )
    tokens: list[TokenEntry] = Field(default_factory=list)

    def token_principals(self) -> dict[str, tuple[SubjectRef, datetime | None]]:
        """sha256 -> (principal, expires_at); a hash listed twice is refused (which one
        would it be?)."""
        table: dict[str, tuple[SubjectRef, datetime | None]] = {}
        for entry in self.tokens:
            if entry.sha256 in table:
                raise BadInput(f"[mcp] token {entry.sha256[:12]}... is listed twice")
            table[entry.sha256] = (entry.principal(), entry.expires_at)
        return table

    def token_holders(self) -> dict[str, int]:
        """sha256 -> the holder (incarnation) the token was issued for, where recorded."""
        return {e.sha256: e.incarnation for e in self.tokens if e.incarnation is not None}


def load_mcp_config(path: Path) -> McpConfig:
    """The `[mcp]` table of `path` (defaults when the file or the table is absent)."""
    section = read_config_section("mcp", path)
    try:
        cfg = McpConfig.model_validate(section)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err.get("loc", ())) or "mcp"
        message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        raise BadInput(f"config file {path}: [mcp] {where}: {message}") from None
    _check_token_subjects(cfg, path)
    return cfg


def _check_token_subjects(cfg: McpConfig, path: Path) -> None:
    """Every entry names a principal with its tenant, or the server does not start: a token
    that names none authenticated and then had each of its calls refused."""
    for index, entry in enumerate(cfg.tokens):
        try:
            entry.principal()
        except BadInput as exc:
            reason = str(exc)
            if entry.tenant is None and " has no tenant" in reason:
                # Not "give --tenant": over HTTP the flag is refused; the entry says it.
                reason = (
                    f"subject {entry.subject[:60]!r} has no tenant: write it as TENANT/ID "
                    '(e.g. acme/user:bob) or add tenant = "..." to the entry'
                )
            raise BadInput(f"config file {path}: [mcp] {entry.label(index)}: {reason}") from None
