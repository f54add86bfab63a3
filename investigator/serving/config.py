"""The `[mcp]` table of the config file: bearer tokens and the principals they act as.

```toml
[mcp]
host = "127.0.0.1"         # optional; loopback unless the operator says otherwise
port = 8765                # optional
purpose = "incident_investigation"   # optional; the purpose every served call runs under

[[mcp.tokens]]
sha256 = "<sha256 hex of the token>"  # `investigator mcp token` prints a new token and this
subject = "acme/user:bob"             # tenant-qualified principal (or `subject` + `tenant`)
```

Only the token's hash is stored, so the config file does not hold a usable secret.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from cypher_templates.subject import SubjectRef
from investigator.errors import BadInput
from investigator.settings import read_config_section

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
_SHA256 = re.compile(r"[0-9a-fA-F]{64}")


class TokenEntry(BaseModel):
    """One `[[mcp.tokens]]` entry."""

    model_config = ConfigDict(extra="forbid")

    sha256: str
    subject: str = Field(min_length=1, max_length=300)
    tenant: str | None = None
    name: str | None = Field(default=None, max_length=100)  # a note for the operator

    @field_validator("sha256")
    @classmethod
    def _hex(cls, value: str) -> str:
        if not _SHA256.fullmatch(value):
            raise ValueError("must be the 64 hex digits of the token's sha256")
        return value.lower()

    def principal(self) -> SubjectRef:
        return SubjectRef.parse(self.subject, self.tenant)


class McpConfig(BaseModel):
    """The `[mcp]` table."""

    model_config = ConfigDict(extra="forbid")

    host: str = DEFAULT_HOST
    port: int = Field(default=DEFAULT_PORT, ge=1, le=65535)
    purpose: str | None = Field(default=None, min_length=1, max_length=100)
    tokens: list[TokenEntry] = Field(default_factory=list)

    def token_principals(self) -> dict[str, SubjectRef]:
        """sha256 -> principal; a hash listed twice is refused (which one would it be?)."""
        table: dict[str, SubjectRef] = {}
        for entry in self.tokens:
            if entry.sha256 in table:
                raise BadInput(f"[mcp] token {entry.sha256[:12]}... is listed twice")
            table[entry.sha256] = entry.principal()
        return table


def load_mcp_config(path: Path) -> McpConfig:
    """The `[mcp]` table of `path` (defaults when the file or the table is absent)."""
    section = read_config_section("mcp", path)
    try:
        return McpConfig.model_validate(section)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err.get("loc", ())) or "mcp"
        message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        raise BadInput(f"config file {path}: [mcp] {where}: {message}") from None
