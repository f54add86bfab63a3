"""Options every importer shares: the tenant, source, ACL and purposes of what it imports."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

# The purposes of the demo catalog's runbook sources: investigations, lookups and audit.
DEFAULT_PURPOSES = ("audit", "incident_investigation", "runbook_lookup")


class ImportOptions(BaseModel):
    """`--tenant`, `--source-id`, `--acl` and the source's allowed purposes."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    source_id: str | None = None
    acl: list[str] = Field(default_factory=list)
    purposes: list[str] = Field(default_factory=lambda: list(DEFAULT_PURPOSES))
    owner_team: str | None = None


def slug(text: str) -> str:
    """An id-safe form of a name: whitespace and control characters become `-`."""
    return "-".join("".join(ch if ch.isprintable() else " " for ch in text).split())


def default_source_id(kind: str, root: Path) -> str:
    """`src:<kind>:<file or folder name>`, the source id when `--source-id` is not given."""
    resolved = root.resolve()
    return f"src:{kind}:" + slug(resolved.stem if root.is_file() else resolved.name)


def validation_text(exc: ValidationError) -> str:
    """A pydantic ValidationError as one line: `field: message; field: message`."""
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error.get("loc", ()))
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)
