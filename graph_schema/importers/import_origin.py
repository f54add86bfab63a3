"""Which folder (or file) an import source was read from, so that another folder of the same
name is not taken for it.

The default source id of an import is `src:runbooks:<folder name>` (`default_source_id`), so
two folders both named `docs` would be one source: the second would write new versions of
the first's runbooks and list its other files as removed. After each import, the tenant gets
one `:ImportOrigin` node per source (its own label, never `:KG`, so no template reads it and
no ingest mark counts it) with

- `path`: the resolved path of the folder or file last imported as that source;
- `git`: when it lies in a git work tree with an `origin` remote, that remote (host and
  repository, no scheme, user or password) and the path inside the repository, so a fresh
  clone of the same repository in another directory (a CI job's) is the same source.

An import under the default source id is refused when the source has an origin and neither
the path nor the git location matches. An explicit `--source-id` names the source on
purpose: it is never refused here, and it records the new origin (a folder that moved).
A source imported before origins were recorded has none: its next import records one.

One origin per source, also when two first imports of it run at once: the `(tenant,
source_id)` uniqueness constraint (`graph_schema.schema_ddl`, created by `schema apply` and
by every ingest first) makes their MERGEs one node. An import under the default source id
claims the origin (`claim_origin`) just before it writes any record: the first claim
records its folder, and an import of another folder of that name claiming after it is
refused as above, nothing written, even when both checked before either wrote. The claim
of an import then refused before writing (a takeover, a backdated record) is released
(`release_claim`); a successful import records its origin (`record_origin`), which ends the
claim, and an import stopped part way keeps it (its records stand).
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path

import neo4j
from pydantic import BaseModel, ConfigDict

from graph_schema.importers.common import slug
from graph_schema.importers.source_version import git_output

ORIGIN_LABEL = "ImportOrigin"

_READ = (
    "MATCH (o:ImportOrigin {tenant: $tenant, source_id: $source_id}) "
    "RETURN o.path AS path, o.git AS git ORDER BY o.path LIMIT 1"
)
_RECORD = (
    "MERGE (o:ImportOrigin {tenant: $tenant, source_id: $source_id}) "
    "SET o.path = $path, o.git = $git REMOVE o.claim"
)
# Under the constraint, a second MERGE waits for the first's commit and then matches it.
_CLAIM = (
    "MERGE (o:ImportOrigin {tenant: $tenant, source_id: $source_id}) "
    "ON CREATE SET o.path = $path, o.git = $git, o.claim = $claim "
    "RETURN o.path AS path, o.git AS git, coalesce(o.claim = $claim, false) AS claimed"
)
_RELEASE = "MATCH (o:ImportOrigin {tenant: $tenant, source_id: $source_id, claim: $claim}) DELETE o"
# `https://user:token@host:443/group/repo.git`, `ssh://git@host/group/repo`: host, path.
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/]*@)?([^/:]+)(?::\d+)?(/.*)?$")
# scp-like `git@host:group/repo.git`.
_SCP = re.compile(r"^(?:[^@/]+@)?([^:/]+):(.+)$")


class ImportOrigin(BaseModel):
    """Where an import was read from: its resolved path, and its git location if any."""

    model_config = ConfigDict(frozen=True)

    path: str
    git: str | None = None

    def same_as(self, other: ImportOrigin) -> bool:
        """The same folder: the same path, or the same place in the same git repository."""
        return self.path == other.path or (self.git is not None and self.git == other.git)


def _remote_key(url: str) -> str | None:
    """`host/group/repo` of a git remote URL: one key for its https and ssh spellings, and
    never its user or password (the key is stored)."""
    text = url.strip()
    match = _URL.match(text) or _SCP.match(text)
    if match is None:
        return None  # a local path remote: the path identifies the folder well enough
    rest = (match.group(2) or "").strip("/").removesuffix(".git")
    return f"{match.group(1).lower()}/{rest}" if rest else None


def origin_of(path: Path) -> ImportOrigin:
    """The origin of an import of `path` (a folder or a file)."""
    resolved = path.resolve()
    folder = resolved if resolved.is_dir() else resolved.parent
    remote = git_output(["remote", "get-url", "origin"], folder)
    prefix = git_output(["rev-parse", "--show-prefix"], folder)
    key = _remote_key(remote) if remote else None
    if key is None or prefix is None:
        return ImportOrigin(path=str(resolved))
    inside = prefix.strip() + ("" if resolved.is_dir() else resolved.name)
    return ImportOrigin(path=str(resolved), git=f"{key}:{inside.rstrip('/')}")


def recorded_origin(
    driver: neo4j.Driver, tenant: str, source_id: str, database: str | None = None
) -> ImportOrigin | None:
    """The origin the last import of `source_id` in `tenant` recorded, if any."""
    records, _, _ = driver.execute_query(
        _READ,
        tenant=tenant,
        source_id=source_id,
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    if not records:
        return None
    return ImportOrigin(path=str(records[0]["path"]), git=records[0]["git"])


def record_origin(
    driver: neo4j.Driver,
    tenant: str,
    source_id: str,
    origin: ImportOrigin,
    database: str | None = None,
) -> None:
    """Remember `origin` as the folder `source_id` of `tenant` is imported from."""
    driver.execute_query(
        _RECORD,
        tenant=tenant,
        source_id=source_id,
        path=origin.path,
        git=origin.git,
        database_=database,
    )


def claim_origin(
    driver: neo4j.Driver,
    tenant: str,
    source_id: str,
    origin: ImportOrigin,
    database: str | None = None,
) -> str | None:
    """Claim `source_id` of `tenant` for `origin` before an import under its default id
    writes: the claim's token when this import made the origin (hand it to
    `release_claim` if the import is refused before writing), None when the source already
    had one of the same folder. Raises `OtherFolder` when its origin is another folder's."""
    claim = secrets.token_hex(16)
    records, _, _ = driver.execute_query(
        _CLAIM,
        tenant=tenant,
        source_id=source_id,
        path=origin.path,
        git=origin.git,
        claim=claim,
        database_=database,
    )
    recorded = ImportOrigin(path=str(records[0]["path"]), git=records[0]["git"])
    if records[0]["claimed"]:
        return claim
    if not recorded.same_as(origin):
        raise OtherFolder(source_id, recorded, origin)
    return None


def release_claim(
    driver: neo4j.Driver, tenant: str, source_id: str, claim: str, database: str | None = None
) -> None:
    """Remove the origin `claim_origin` made for an import refused before it wrote (unless
    a successful import of the same folder recorded it meanwhile)."""
    driver.execute_query(
        _RELEASE, tenant=tenant, source_id=source_id, claim=claim, database_=database
    )


class OtherFolder(ValueError):
    """An import under a default source id whose source was imported from another folder."""

    def __init__(self, source_id: str, recorded: ImportOrigin, incoming: ImportOrigin) -> None:
        self.source_id = source_id
        self.recorded = recorded
        self.incoming = incoming
        super().__init__(self.line())

    def line(self) -> str:
        """The refusal in one line, with both ways on."""
        kind, _, name = self.source_id.rpartition(":")
        parent = Path(self.incoming.path).parent.name
        own = f"{kind}:{slug(f'{parent}-{name}' if parent else f'{name}-2')}"
        return (
            f"ingest refused: {self.source_id} was imported from {self.recorded.path}, not "
            f"{self.incoming.path} (only the name is alike), nothing written; pass "
            f"--source-id {own} to import this one as a source of its own, or --source-id "
            f"{self.source_id} if it is the same source moved here"
        )


def check_origin(
    driver: neo4j.Driver,
    tenant: str,
    source_id: str,
    path: Path,
    database: str | None = None,
) -> None:
    """Raise `OtherFolder` when `source_id` was last imported from another folder."""
    recorded = recorded_origin(driver, tenant, source_id, database)
    if recorded is None:
        return  # a first import, or a source imported before origins were recorded
    incoming = origin_of(path)
    if not recorded.same_as(incoming):
        raise OtherFolder(source_id, recorded, incoming)
