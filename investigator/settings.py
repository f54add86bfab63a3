"""Connection settings: flag > environment > config file > the local server's state file."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr

from investigator.errors import BadInput, Neo4jUnavailable


class ConnectionSettings(BaseModel):
    """Where the Knowledge Graph lives and how to log in."""

    uri: str
    user: str = "neo4j"
    password: SecretStr
    database: str | None = None
    origin: str = "environment"


def config_file_path() -> Path:
    """The optional TOML config file (`INVESTIGATOR_CONFIG`, else ~/.config/investigator).

    A file `INVESTIGATOR_CONFIG` names must exist (BadInput, exit 2, if it does not or is a
    folder); the default file may be absent (no settings from a file)."""
    explicit = os.environ.get("INVESTIGATOR_CONFIG")
    if explicit:
        # Named on purpose: a typo must not quietly run without it (the default may be absent).
        path = Path(explicit)
        if path.is_dir():
            raise BadInput(f"INVESTIGATOR_CONFIG names {explicit!a}, a folder, not a config file")
        if not path.is_file():
            raise BadInput(f"INVESTIGATOR_CONFIG names {explicit!a}, which does not exist")
        return path
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "investigator" / "config.toml"


def read_config_section(name: str, path: Path | None = None) -> dict[str, Any]:
    """The `[name]` table of the config file as TOML parsed it ({} when there is no file).

    `path` defaults to `config_file_path()`. Nested tables and arrays of tables (such as
    `[[mcp.tokens]]`) are kept as parsed, for a Pydantic model to validate.
    """
    path = config_file_path() if path is None else path
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BadInput(f"config file {path} cannot be read: {exc.strerror or exc}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BadInput(f"config file {path} is not valid TOML: {exc}") from exc
    section = data.get(name, {})
    if not isinstance(section, dict):
        raise BadInput(f"config file {path}: [{name}] must be a table")
    return section


def read_config_table(name: str) -> dict[str, str]:
    """The `[name]` table of the config file as strings ({} when there is no file)."""
    return {str(k): str(v) for k, v in read_config_section(name).items()}


def _read_config_file() -> dict[str, str]:
    return read_config_table("neo4j")


def resolve_connection(
    uri: str | None = None,
    user: str | None = None,
    password: str | None = None,
    database: str | None = None,
) -> ConnectionSettings:
    """Resolve connection settings with the documented precedence.

    Flags (the arguments) win over `NEO4J_*` environment variables, which win over the
    `[neo4j]` table of the config file, which wins over the local server started by
    `investigator db start`.
    """
    file_cfg = _read_config_file()
    env = os.environ
    chosen_uri = uri or env.get("NEO4J_URI") or file_cfg.get("uri")
    if chosen_uri:
        origin = "flag" if uri else ("environment" if env.get("NEO4J_URI") else "config file")
        chosen_password = password or env.get("NEO4J_PASSWORD") or file_cfg.get("password") or ""
        return ConnectionSettings(
            uri=chosen_uri,
            user=user or env.get("NEO4J_USER") or file_cfg.get("user") or "neo4j",
            password=SecretStr(chosen_password),
            database=database or env.get("NEO4J_DATABASE") or file_cfg.get("database"),
            origin=origin,
        )
    from investigator.local_neo4j import LocalNeo4j

    local = LocalNeo4j.default()
    state = local.read_state()
    if state is not None and state.pid is None:
        # `db stop` leaves the state file with no pid: configured, only stopped (e31-qa m7).
        raise Neo4jUnavailable(
            f"the local Neo4j of state folder {local.state_dir} is stopped: run "
            "`investigator db start`, or set NEO4J_URI"
        )
    if state is None:
        raise Neo4jUnavailable(
            "no Neo4j configured: set NEO4J_URI, or run `investigator db start` for a local server"
        )
    return ConnectionSettings(
        uri=state.uri,
        user=state.user,
        password=state.password,
        database=database or env.get("NEO4J_DATABASE"),
        origin="local server",
    )
