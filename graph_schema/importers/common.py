"""Options every importer shares: the tenant, source, ACL and purposes of what it imports."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from graph_schema.bundle import MAX_INPUT_BYTES, SourceSpec
from graph_schema.kg_types import Trust

# The purposes of the demo catalog's runbook sources: investigations, lookups and audit.
DEFAULT_PURPOSES = ("audit", "incident_investigation", "runbook_lookup")


class ImportOptions(BaseModel):
    """`--tenant`, `--source-id`, `--acl`, `--trusted`, `--git-history` and the source's
    allowed purposes."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    source_id: str | None = None
    acl: list[str] = Field(default_factory=list)
    purposes: list[str] = Field(default_factory=lambda: list(DEFAULT_PURPOSES))
    owner_team: str | None = None
    # Only the ingest command raises trust; nothing in an imported file can.
    trusted: bool = False
    # Every commit of each file becomes a version (markdown-runbooks only).
    git_history: bool = False
    # The bytes the import may read (`--max-bytes`): with git_history, its committed versions.
    max_bytes: int = MAX_INPUT_BYTES

    @property
    def trust(self) -> Trust:
        """The trust of what this import writes."""
        return Trust.TRUSTED if self.trusted else Trust.UNTRUSTED


def import_source_spec(options: ImportOptions, source_id: str, source_type: str) -> SourceSpec:
    """The Source record of an import, from the ingest command's options only (never from
    file content): written only when the tenant has no record of that id yet."""
    return SourceSpec(
        source_id=source_id,
        source_type=source_type,
        owner_team=options.owner_team,
        trust=options.trust,
        allowed_purposes=options.purposes,
        acl=options.acl or None,
    )


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


def listed_names(names: list[str], shown: int = 3, sep: str = ", ") -> str:
    """The first `shown` of `names` and a count of the rest (`a, b, c and 2 more`); one
    left over is named, not counted ("and 1 more" hid the one name it stood for)."""
    if len(names) <= shown + 1:
        return sep.join(names)
    return sep.join(names[:shown]) + f" and {len(names) - shown} more"
