"""The subject of a command, always within a tenant, checked before any query.

Precedence, field by field: flag (`--subject`, `--tenant`) > environment
(`INVESTIGATOR_SUBJECT`, `INVESTIGATOR_TENANT`) > the `[subject]` table of the config file
(`id`, `tenant`). The subject may be written qualified, `acme/user:alice`; a qualified subject
ignores a tenant from a lower-precedence source and refuses a contradicting one from the same
or a higher source. An `INVESTIGATOR_TENANT` that replaces another `[subject] tenant` is
said on stderr, once per command. A missing or malformed subject or tenant is bad input
(exit 2); a well-formed one that names no principal in that tenant is decided later, in the
KG (exit 3).

Only click at import: the options are declared with the command, whose module stays light
(pydantic and the subject model are imported when a subject is read).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from investigator.errors import BadInput

if TYPE_CHECKING:
    from cypher_templates.subject import SubjectRef
    from investigator.context_graph.audit import RunReader

SUBJECT_ENV = "INVESTIGATOR_SUBJECT"
TENANT_ENV = "INVESTIGATOR_TENANT"
MAX_SUBJECT_LENGTH = 200
HOW_TO_NAME = (
    "give --subject TENANT/ID (e.g. acme/user:alice), or --subject ID --tenant TENANT, "
    f"or set {SUBJECT_ENV} / {TENANT_ENV}, or a [subject] table (id, tenant) in the config file"
)

F = TypeVar("F", bound=Callable[..., Any])

# Precedence levels: a larger number wins.
_FLAG, _ENV, _FILE = 3, 2, 1


def subject_options(func: F) -> F:
    """Add `--subject` and `--tenant` to a command (same names and help everywhere)."""
    func = click.option(
        "--tenant",
        "tenant",
        metavar="TENANT",
        help=f"The subject's tenant (default: ${TENANT_ENV}, else the config file).",
    )(func)
    return click.option(
        "--subject",
        "subject",
        metavar="TENANT/ID",
        help=(
            f"Who asks, e.g. acme/user:alice (default: ${SUBJECT_ENV}, else the config "
            "file); grants are read from the KG, as of now."
        ),
    )(func)


def _config_subject() -> dict[str, str]:
    from investigator.settings import config_file_path, read_config_table

    section = read_config_table("subject")
    unknown = sorted(set(section) - {"id", "tenant"})
    if unknown:
        path = config_file_path()
        raise BadInput(f"config file {path}: [subject] has unknown keys {', '.join(unknown)}")
    return section


def _check_text(what: str, value: str) -> str:
    if (
        not value.isprintable()
        or value.strip() != value
        or not value
        or len(value) > MAX_SUBJECT_LENGTH
    ):
        raise BadInput(
            f"{what} {value[:60]!r} is not valid "
            f"(printable, no surrounding spaces, 1..{MAX_SUBJECT_LENGTH} characters)"
        )
    return value


def _is_qualified(text: str) -> bool:
    from cypher_templates.subject import TENANT_PATTERN

    head, sep, rest = text.partition("/")
    return bool(sep and rest and TENANT_PATTERN.fullmatch(head))


def subject_ref_from(flag_subject: str | None, flag_tenant: str | None) -> SubjectRef:
    """The tenant-qualified subject of a command (see the module doc for the precedence)."""
    file_cfg: dict[str, str] | None = None

    def from_file() -> dict[str, str]:
        nonlocal file_cfg
        if file_cfg is None:
            file_cfg = _config_subject()
        return file_cfg

    subject: tuple[int, str] | None = None
    if flag_subject is not None:
        subject = (_FLAG, flag_subject)
    elif os.environ.get(SUBJECT_ENV):
        subject = (_ENV, os.environ[SUBJECT_ENV])
    elif from_file().get("id"):
        subject = (_FILE, from_file()["id"])
    if subject is None:
        raise BadInput(f"no subject: {HOW_TO_NAME}")
    level, text = subject
    _check_text("--subject", text)

    tenant: tuple[int, str] | None = None
    if flag_tenant is not None:
        tenant = (_FLAG, flag_tenant)
    elif os.environ.get(TENANT_ENV):
        tenant = (_ENV, os.environ[TENANT_ENV])
    elif from_file().get("tenant"):
        tenant = (_FILE, from_file()["tenant"])
    if tenant is not None:
        _check_text("--tenant", tenant[1])

    ref = _subject_ref(text, level, tenant)
    if tenant is not None and tenant[0] == _ENV and ref.tenant == tenant[1]:
        try:
            file_tenant = from_file().get("tenant")
        except BadInput:
            file_tenant = None  # a config file this command does not use is not judged here
        _say_tenant_override(tenant[1], file_tenant)
    return ref


def _subject_ref(text: str, level: int, tenant: tuple[int, str] | None) -> SubjectRef:
    from cypher_templates.subject import SubjectRef, check_names_an_id, check_tenant_written

    if _is_qualified(text):
        # A tenant from a weaker source than the qualified subject does not apply to it.
        checked = tenant[1] if tenant is not None and tenant[0] >= level else None
        return SubjectRef.parse(text, checked)
    check_names_an_id(text)
    if tenant is None:
        check_tenant_written(text)
        raise BadInput(f"subject {text[:60]!r} has no tenant: {HOW_TO_NAME}")
    return SubjectRef.parse(text, tenant[1])


def _say_tenant_override(env_tenant: str, file_tenant: str | None) -> None:
    """One stderr line per command when INVESTIGATOR_TENANT replaces another tenant named by
    the config file's [subject] table: a user who set one tenant there must not read
    another's results unawares. Names the two tenants and the file only."""
    if not file_tenant or file_tenant == env_tenant:
        return
    # Once per command, kept on its root context (a warm process runs many commands).
    ctx = click.get_current_context(silent=True)
    said = (
        ctx.find_root().meta.setdefault("investigator.tenant_override_said", set())
        if ctx
        else set()
    )
    if (env_tenant, file_tenant) in said:
        return
    said.add((env_tenant, file_tenant))
    from investigator.settings import config_file_path
    from investigator.terminal import one_line

    click.echo(
        f"note: tenant {one_line(env_tenant, 60)!r} from {TENANT_ENV} overrides tenant "
        f"{one_line(file_tenant, 60)!r} of [subject] in the config file "
        f"{one_line(config_file_path(), 200)}",
        err=True,
    )


def subject_id_from(flag_value: str | None, flag_tenant: str | None = None) -> str:
    """The qualified subject text `tenant/id` (for callers that still pass a string)."""
    return str(subject_ref_from(flag_value, flag_tenant))


def purpose_option(func: F) -> F:
    """`--purpose` of the audit commands: `audit` reads the tenant's runs, not only one's own."""
    return click.option(
        "--purpose",
        "purpose",
        metavar="P",
        default=None,
        help=(
            "Read under this purpose (must be allowed for the subject); with `audit` the "
            "runs of the subject's whole tenant are readable, else only its own."
        ),
    )(func)


def reader_inputs(
    flag_subject: str | None, flag_tenant: str | None, purpose: str | None
) -> tuple[SubjectRef, str | None]:
    """The subject and `--purpose` of runs/trace/replay, checked before any connection."""
    return subject_ref_from(flag_subject, flag_tenant), checked_purpose(purpose)


def checked_purpose(purpose: str | None) -> str | None:
    """`--purpose` as given; malformed (not printable, padded, too long or empty): exit 2."""
    if purpose is not None:
        _check_text("--purpose", purpose)
    return purpose


def load_run_reader(
    driver: Any, database: str | None, ref: SubjectRef, purpose: str | None
) -> RunReader:
    """The reader of runs, loaded as of now in its tenant (exit 3 if unknown or not allowed).

    `purpose` is not checked here: pass one `reader_inputs` or `checked_purpose` returned.
    """
    from cypher_templates.executor import TemplateExecutor
    from investigator.context_graph.audit import load_reader

    return load_reader(TemplateExecutor(driver, database=database), ref, purpose)
