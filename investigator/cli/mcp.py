"""`investigator mcp`: serve investigate / runbook_lookup / trace / replay to MCP clients."""

from __future__ import annotations

import ipaddress
import json
import re
import secrets
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from investigator.cli.numbers import WholeNumber
from investigator.errors import BadInput, InvestigatorError

if TYPE_CHECKING:
    from cypher_templates.subject import SubjectRef
    from investigator.serving.backend import ServingBackend
    from investigator.settings import ConnectionSettings

TRANSPORTS = ("stdio", "http")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.group(name="mcp", invoke_without_command=True)
@click.option(
    "--transport",
    type=click.Choice(TRANSPORTS),
    default="stdio",
    show_default=True,
    help="stdio (a client starts this process) or http (streamable HTTP on --host:--port).",
)
@click.option("--host", metavar="HOST", help="HTTP: address to bind (default 127.0.0.1).")
@click.option(
    "--port",
    type=WholeNumber(1, 65535),
    metavar="PORT",
    help="HTTP: port, 1-65535 (default 8765).",
)
@click.option(
    "--subject",
    "subject",
    metavar="TENANT/ID",
    help="stdio: who every call runs as (default: $INVESTIGATOR_SUBJECT, else the config "
    "file). Over HTTP the subject is the principal of the bearer token.",
)
@click.option("--tenant", "tenant", metavar="TENANT", help="The subject's tenant.")
@click.option(
    "--purpose",
    metavar="P",
    help="The purpose every call runs under (default: the [mcp] purpose, else per command).",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Config file with the [mcp] table (default: $INVESTIGATOR_CONFIG or "
    "~/.config/investigator/config.toml).",
)
@click.option(
    "--max-concurrent",
    type=WholeNumber(1, 64),
    default=4,
    show_default=True,
    help="Calls run at once; more wait for a slot (protects Neo4j and keeps runs whole).",
)
@click.option(
    "--otel",
    is_flag=True,
    help="Export OpenTelemetry traces (OTLP/HTTP; endpoint from OTEL_EXPORTER_OTLP_ENDPOINT, "
    "default http://localhost:4318). The standard OTEL_* environment also turns this on.",
)
@click.pass_context
def mcp_command(
    ctx: click.Context,
    transport: str,
    host: str | None,
    port: int | None,
    subject: str | None,
    tenant: str | None,
    purpose: str | None,
    config_path: Path | None,
    max_concurrent: int,
    otel: bool,
) -> None:
    """Serve the investigator to MCP clients (Claude Desktop, IDEs, agents).

    Tools: investigate, runbook_lookup, trace, replay; each answers with the JSON of the
    matching CLI command's --json. The subject is fixed here, never by the model.

    \b
    Examples:
      investigator mcp --subject acme/user:bob                 # stdio
      investigator mcp --transport http --port 8765            # tokens from [mcp]
      investigator mcp token --subject acme/user:bob           # a new bearer token
    """
    if ctx.invoked_subcommand is not None:
        return
    _require_mcp_sdk()
    from investigator.serving.config import load_mcp_config
    from investigator.settings import config_file_path, resolve_connection

    cfg_file = config_path or config_file_path()
    cfg = load_mcp_config(cfg_file)
    from investigator.telemetry import enable_telemetry, env_requests_traces

    if otel or env_requests_traces():
        # Now, not at the first run: the SDK's span of the first request (`tools/call ...`,
        # the parent of its run's span) was made before a provider existed, and was lost.
        enable_telemetry()
    settings = resolve_connection()
    from investigator.cli.subject import checked_purpose

    chosen_purpose = checked_purpose(purpose) or cfg.purpose
    purpose_from = "--purpose" if purpose else f"config file {cfg_file}: [mcp] purpose"

    if transport == "stdio":
        if host is not None or port is not None:
            raise BadInput("--host and --port apply to --transport http only")
        from investigator.cli.subject import subject_ref_from

        fixed = subject_ref_from(subject, tenant)
        backend = _backend(
            settings, chosen_purpose, purpose_from, max_concurrent, [(str(fixed), fixed)]
        )
        try:
            from investigator.serving.mcp_server import run_stdio

            run_stdio(backend, fixed)
        finally:
            backend.close()
        return

    if subject is not None or tenant is not None:
        raise BadInput(
            "over HTTP the subject is the principal of each bearer token: "
            f"list tokens in the [mcp] table of {cfg_file} (see `investigator mcp token`)"
        )
    principals = cfg.token_principals()
    if not principals:
        raise BadInput(
            f"no bearer tokens in the [mcp] table of {cfg_file}: "
            "add one with `investigator mcp token --subject TENANT/ID`"
        )
    now = datetime.now(UTC)
    expired = [(i, e) for i, e in enumerate(cfg.tokens) if e.expired(now)]
    if len(expired) == len(cfg.tokens):
        raise BadInput(
            f"every bearer token in the [mcp] table of {cfg_file} has expired: "
            "add one with `investigator mcp token --subject TENANT/ID`"
        )
    for index, entry in expired:
        sys.stderr.write(
            f"investigator mcp: warning: {entry.label(index)} for {entry.principal()} expired "
            f"at {_rfc3339(entry.expires_at)} and is refused\n"
        )
    bind = host or cfg.host
    from investigator.serving.mcp_server import TokenTable, listening_socket, run_http

    sock = listening_socket(bind, port if port is not None else cfg.port)
    if not _is_loopback(bind):
        sys.stderr.write(
            f"investigator mcp: warning: binding {bind}, not loopback; put TLS in front of it\n"
        )
    with sock:
        named = [
            (f"{e.label(i)}: {e.principal()}", e.principal())
            for i, e in enumerate(cfg.tokens)
            if not e.expired(now)
        ]
        backend = _backend(settings, chosen_purpose, purpose_from, max_concurrent, named)
        try:
            run_http(
                backend,
                TokenTable(principals, holders=cfg.token_holders()),
                sock,
                host=bind,
                max_sessions_per_principal=cfg.max_sessions_per_principal,
                session_idle_seconds=cfg.session_idle_seconds,
                max_calls_per_principal=cfg.max_calls_per_principal,
            )
        finally:
            backend.close()


def _require_mcp_sdk() -> None:
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        raise InvestigatorError(
            "the MCP server needs the mcp extra: pip install 'graph-investigator[mcp]'"
        ) from None


def _backend(
    settings: ConnectionSettings,
    purpose: str | None,
    purpose_from: str,
    max_concurrent: int,
    principals: list[tuple[str, SubjectRef]],
) -> ServingBackend:
    """The backend, its purpose checked and `principals` (shown, ref) warned about, when
    Neo4j answers."""
    from investigator.serving.backend import ServingBackend

    backend = ServingBackend(settings, purpose=purpose, max_concurrent=max_concurrent)
    if not backend.warm_up():
        sys.stderr.write(
            f"investigator mcp: warning: Neo4j at {settings.uri} does not answer yet; "
            "calls will report it until it does\n"
        )
        return backend
    if purpose is not None:
        try:
            # A purpose nobody holds refuses every call: refuse the start instead.
            backend.check_purpose(purpose, purpose_from)
        except BadInput:
            backend.close()
            raise
    for shown, ref in principals:
        # A warning, not a refusal: the principal may be ingested while the server runs.
        problem = backend.principal_problem(ref)
        if problem is not None:
            sys.stderr.write(f"investigator mcp: warning: {shown} {problem}\n")
    return backend


_DURATION = re.compile(r"([0-9]{1,6})([dhm])")
_UNITS = {"d": "days", "h": "hours", "m": "minutes"}
MAX_EXPIRY = timedelta(days=3650)


class Duration(click.ParamType):
    """A duration written `30d`, `12h` or `90m` (days, hours, minutes; 1 minute..3650 days)."""

    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, timedelta):
            return value
        found = _DURATION.fullmatch(str(value))
        length = timedelta(**{_UNITS[found[2]]: int(found[1])}) if found else None
        if length is None or not timedelta(minutes=1) <= length <= MAX_EXPIRY:
            self.fail(
                f"{str(value)[:40]!r} is not a duration such as 30d, 12h or 90m "
                "(1 minute to 3650 days)",
                param,
                ctx,
            )
        return length


def _rfc3339(when: datetime | None) -> str:
    """`when` in UTC to the second, as the config file writes it (`2027-01-03T08:00:00Z`)."""
    assert when is not None
    return when.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@mcp_command.command(name="token")
@click.option("--subject", "subject", metavar="TENANT/ID", required=True, help="The principal.")
@click.option("--tenant", "tenant", metavar="TENANT", help="The subject's tenant.")
@click.option(
    "--expires-in",
    "expires_in",
    type=Duration(),
    metavar="DURATION",
    help="Refuse the token after this long: 30d, 12h or 90m (default: it does not expire).",
)
def token_command(subject: str, tenant: str | None, expires_in: timedelta | None) -> None:
    """Print a new bearer token and the [[mcp.tokens]] entry that maps it to SUBJECT.

    Only the token's sha256 goes into the config file; give the token to the client.
    A subject that is no principal in the KG (yet) is warned about on stderr: the token
    is printed, and its calls are refused until that principal is ingested. For one
    that is, the entry records its holder (`incarnation`): the token is refused once the
    id is retracted and written again for someone new.

    \b
    Example:
      investigator mcp token --subject acme/user:bob   # then paste the entry into config.toml
      investigator mcp token --subject acme/user:ci --expires-in 30d
    """
    from cypher_templates.subject import SubjectRef
    from investigator.serving.mcp_server import token_sha256

    ref = SubjectRef.parse(subject, tenant)
    holder = _holder_or_warning(ref)
    token = "inv_" + secrets.token_urlsafe(32)
    click.echo(f"token: {token}")
    click.echo("")
    click.echo("[[mcp.tokens]]")
    click.echo(f'sha256 = "{token_sha256(token)}"')
    # A TOML basic string, escaped (a JSON string is one): `user:bob"#` printed raw read
    # back as `user:bob`, a token for another principal.
    click.echo(f"subject = {json.dumps(str(ref))}")
    if holder is not None:
        # Bound to this holder of the id: refused once the id is written again for another.
        click.echo(f"incarnation = {holder}")
    if expires_in is not None:
        # A TOML date-time, to the second (the entry reads it back as itself).
        click.echo(f"expires_at = {_rfc3339(datetime.now(UTC) + expires_in)}")


def _holder_or_warning(ref: SubjectRef) -> int | None:
    """The holder (incarnation) of `ref`'s id now; None with one stderr line when `ref` is no
    current principal in the KG, or cannot be checked."""
    from cypher_templates.executor import TemplateExecutor
    from investigator.connection import open_driver
    from investigator.settings import resolve_connection

    try:
        settings = resolve_connection()
        driver = open_driver(settings)
    except InvestigatorError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        sys.stderr.write(f"investigator mcp: warning: not checked that {ref} exists ({first})\n")
        return None
    try:
        known = TemplateExecutor(driver, database=settings.database).read_principals(ref)
    except Exception as exc:  # a check only: the token is printed whatever it says
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        sys.stderr.write(f"investigator mcp: warning: not checked that {ref} exists ({first})\n")
        return None
    finally:
        driver.close()
    if not known:
        sys.stderr.write(
            f"investigator mcp: warning: {ref} is no principal in the KG (yet): the token's "
            "calls are refused until it is ingested\n"
        )
        return None
    return known[0].incarnation


def register(cli: click.Group) -> None:
    cli.add_command(mcp_command)
