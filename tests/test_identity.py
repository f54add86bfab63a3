"""Issue 17: a subject is always named within a tenant; another tenant's ids change nothing.

The reproduction (a principal id added by another tenant locked the first tenant's user out
with "ambiguous across tenants") runs against the real server in both orders. The rest checks
how a user names themselves (flag > environment > config file) and that every command that
takes `--subject` answers malformed or hostile input with one line and exit 2, before any
query.
"""

from __future__ import annotations

from pathlib import Path

import neo4j
import pytest

from cypher_templates.executor import TemplateExecutor
from cypher_templates.subject import SubjectRef, load_subject
from investigator.cli.subject import subject_ref_from
from investigator.errors import BadInput, NotAuthorized

FIXTURES = Path(__file__).parent / "fixtures" / "identity"
GLOBEX = FIXTURES / "globex-victim.yaml"
INITECH = FIXTURES / "initech-same-ids.yaml"
ACME = FIXTURES / "acme-principals.yaml"
UNREACHABLE = "neo4j://127.0.0.1:1"


def _one_line(result, code: int) -> None:  # type: ignore[no-untyped-def]
    assert result.code == code, result
    assert result.out == "", result
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result
    assert "Traceback" not in result.err and "\x1b" not in result.err


# -- naming a subject (no database) ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tenant", "expected"),
    [
        ("acme/user:alice", None, ("acme", "user:alice")),
        ("user:alice", "acme", ("acme", "user:alice")),
        ("acme/user:alice", "acme", ("acme", "user:alice")),
        ("acme/team/x", None, ("acme", "team/x")),
        ("my_org.eu-1/svc-bot", None, ("my_org.eu-1", "svc-bot")),
    ],
)
def test_a_subject_is_parsed_with_its_tenant(
    text: str, tenant: str | None, expected: tuple[str, str]
) -> None:
    ref = SubjectRef.parse(text, tenant)
    assert (ref.tenant, ref.id) == expected
    assert str(ref) == f"{expected[0]}/{expected[1]}"


@pytest.mark.parametrize(
    ("text", "tenant", "message"),
    [
        ("user:alice", None, "has no tenant"),
        ("acme/user:alice", "globex", "names tenant 'acme' but the tenant given is 'globex'"),
        ("user:alice", "ac me", "not a tenant name"),
        ("user:alice", "x" * 101, "not a tenant name"),
        ("user:alice", "", "not a tenant name"),
        ("acme/", None, "names tenant 'acme' but no id after the '/'"),
        # a tenant was meant, but is no tenant name (it said "has no tenant")
        ("acme /user:bob", None, "'acme ' before the '/' is not a tenant name"),
        ("*/user:bob", None, "'*' before the '/' is not a tenant name"),
        ("acme/", "acme", "names tenant 'acme' but no id after the '/'"),
        ("acme/user: alice", None, "not a principal id"),
        ("acme/user:\x00", None, "not a principal id"),
        ("acme/" + "u" * 201, None, "not a principal id"),
        ("", "acme", "empty"),
    ],
)
def test_a_malformed_subject_is_bad_input(text: str, tenant: str | None, message: str) -> None:
    with pytest.raises(BadInput, match=message.replace("(", r"\(")):
        SubjectRef.parse(text, tenant)


@pytest.fixture()
def no_subject_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No subject in the environment, and an empty config file (a named one must exist)."""
    monkeypatch.delenv("INVESTIGATOR_SUBJECT", raising=False)
    monkeypatch.delenv("INVESTIGATOR_TENANT", raising=False)
    config = tmp_path / "config.toml"
    config.write_text("", encoding="utf-8")
    monkeypatch.setenv("INVESTIGATOR_CONFIG", str(config))
    return config


def test_flag_beats_environment_beats_config_file(
    no_subject_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_subject_env.write_text('[subject]\nid = "user:carol"\ntenant = "acme"\n')
    assert str(subject_ref_from(None, None)) == "acme/user:carol"
    monkeypatch.setenv("INVESTIGATOR_SUBJECT", "user:bob")
    assert str(subject_ref_from(None, None)) == "acme/user:bob"
    monkeypatch.setenv("INVESTIGATOR_TENANT", "globex")
    assert str(subject_ref_from(None, None)) == "globex/user:bob"
    assert str(subject_ref_from("user:alice", None)) == "globex/user:alice"
    assert str(subject_ref_from("user:alice", "initech")) == "initech/user:alice"
    # A qualified flag ignores the weaker environment tenant, and conflicts with --tenant.
    assert str(subject_ref_from("acme/user:alice", None)) == "acme/user:alice"
    with pytest.raises(BadInput, match="names tenant 'acme'"):
        subject_ref_from("acme/user:alice", "initech")


def test_a_qualified_config_subject_and_a_missing_tenant(no_subject_env: Path) -> None:
    with pytest.raises(BadInput, match="no subject: give --subject TENANT/ID"):
        subject_ref_from(None, None)
    no_subject_env.write_text('[subject]\nid = "acme/user:bob"\n')
    assert str(subject_ref_from(None, None)) == "acme/user:bob"
    no_subject_env.write_text('[subject]\nid = "user:bob"\n')
    with pytest.raises(BadInput, match="has no tenant: give --subject TENANT/ID"):
        subject_ref_from(None, None)
    no_subject_env.write_text('[subject]\nid = "user:bob"\nrole = "admin"\n')
    with pytest.raises(BadInput, match="unknown keys role"):
        subject_ref_from(None, None)
    no_subject_env.write_text("[subject\n")
    with pytest.raises(BadInput, match="not valid TOML"):
        subject_ref_from(None, None)


_COMMANDS = [
    ["investigate", "Who owned payment-api?"],
    ["runbook", "--alert", "KubePodCrashLooping"],
    ["runs"],
    ["trace", "run-1"],
    ["replay", "run-1"],
]


@pytest.mark.parametrize("command", _COMMANDS, ids=lambda c: c[0])
@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--subject", "user:bob"], "has no tenant"),
        (["--subject", "acme/"], "but no id after the '/'"),
        ([], "no subject"),
        (["--subject", "acme/user:bob", "--tenant", "globex"], "names tenant 'acme'"),
        (["--subject", "user:bob", "--tenant", "acme; DROP"], "not a tenant name"),
        (["--subject", "user:bob", "--tenant", "a" * 300], "--tenant"),
        (["--subject", "acme/user:bob\u202e"], "--subject"),
        (["--subject", "acme/user:\x1b[2J"], "--subject"),
        (["--subject", " acme/user:bob"], "--subject"),
    ],
    ids=[
        "bare-id",
        "tenant-only",
        "none",
        "contradiction",
        "hostile-tenant",
        "long-tenant",
        "rtl",
        "ansi",
        "space",
    ],
)
def test_every_command_refuses_a_bad_subject_before_any_query(  # type: ignore[no-untyped-def]
    no_subject_env, monkeypatch, invoke, command: list[str], options: list[str], message: str
) -> None:
    # Nothing listens there: exit 2 (not 4) proves the check happens before connecting.
    monkeypatch.setenv("NEO4J_URI", UNREACHABLE)
    monkeypatch.setenv("NEO4J_PASSWORD", "x")
    result = invoke(*command, *options)
    _one_line(result, 2)
    assert message in result.err


@pytest.mark.parametrize("command", _COMMANDS, ids=lambda c: c[0])
def test_every_command_documents_the_subject_form(invoke, command: list[str]) -> None:  # type: ignore[no-untyped-def]
    result = invoke(command[0], "--help")
    assert result.code == 0
    assert "--subject TENANT/ID" in result.out and "--tenant TENANT" in result.out


# -- the reproduction of issue 17, against the real server --------------------------------------


def _ingest(invoke, *paths: Path) -> None:  # type: ignore[no-untyped-def]
    for path in paths:
        result = invoke("ingest", str(path))
        assert result.code == 0, result


@pytest.mark.parametrize("order", ["victim-first", "impostor-first"])
def test_another_tenants_principal_with_the_same_id_changes_nothing(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env, invoke, monkeypatch, order: str
) -> None:
    monkeypatch.delenv("INVESTIGATOR_TENANT")
    _ingest(invoke, *((GLOBEX, INITECH) if order == "victim-first" else (INITECH, GLOBEX)))
    executor = TemplateExecutor(clean_db)
    victim = load_subject(
        executor, SubjectRef.parse("globex/user:globex-victim"), "incident_investigation"
    )
    assert (victim.tenant, victim.labels) == ("globex", ("internal",))
    impostor = load_subject(
        executor, SubjectRef.parse("initech/user:globex-victim"), "runbook_lookup"
    )
    assert (impostor.tenant, impostor.labels) == ("initech", ())
    # Each tenant's grants are its own: initech's record does not allow what globex's does.
    with pytest.raises(NotAuthorized, match="not allowed purpose 'incident_investigation'"):
        load_subject(
            executor, SubjectRef.parse("initech/user:globex-victim"), "incident_investigation"
        )
    # Through the CLI, every way of naming the globex user works; nothing is ambiguous.
    for args in (
        ["--subject", "globex/user:globex-victim"],
        ["--subject", "user:globex-victim", "--tenant", "globex"],
    ):
        result = invoke("runs", *args)
        assert result.code == 0, result
        assert result.out.strip() == "no runs recorded" and "ambiguous" not in result.err
    monkeypatch.setenv("INVESTIGATOR_SUBJECT", "user:globex-victim")
    monkeypatch.setenv("INVESTIGATOR_TENANT", "globex")
    assert invoke("runs").code == 0
    # The same id in a tenant that does not have it is unknown there: exit 3, one line.
    unknown = invoke("runs", "--subject", "acme/user:globex-victim")
    _one_line(unknown, 3)
    assert "unknown subject 'user:globex-victim' in tenant 'acme'" in unknown.err


def test_the_bundled_subjects_keep_working_when_another_tenant_reuses_their_ids(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env, invoke
) -> None:
    _ingest(invoke, ACME, INITECH)
    executor = TemplateExecutor(clean_db)
    alice = load_subject(executor, SubjectRef.parse("acme/user:alice"), "audit")
    assert alice.labels == ("incident", "internal", "pii")
    # A bare id names nobody, even where only one tenant has it: never looked up by id alone.
    assert load_subject(executor, "acme/user:bob", "incident_investigation").tenant == "acme"
    for bare in ("user:bob", "user:alice"):
        with pytest.raises(BadInput, match="has no tenant"):
            load_subject(executor, bare, "incident_investigation")
        with pytest.raises(BadInput, match="has no tenant"):
            executor.read_principals(bare)
    assert invoke("runs", "--subject", "acme/user:alice").code == 0
    assert invoke("runs", "--subject", "initech/user:alice", "--purpose", "audit").code == 0
    denied = invoke(
        "runs", "--subject", "initech/user:alice", "--purpose", "incident_investigation"
    )
    _one_line(denied, 3)


@pytest.mark.parametrize(
    "command", [["runs"], ["trace", "run-1"], ["replay", "run-1"], ["verify"], ["verify", "run-1"]]
)
@pytest.mark.parametrize("purpose", ["audit\x1b[2J", " audit", "a" * 201, ""])
def test_audit_commands_refuse_a_bad_purpose_before_any_query(  # type: ignore[no-untyped-def]
    no_subject_env, monkeypatch, invoke, command: list[str], purpose: str
) -> None:
    monkeypatch.setenv("NEO4J_URI", UNREACHABLE)
    monkeypatch.setenv("NEO4J_PASSWORD", "x")
    result = invoke(*command, "--subject", "acme/user:auditor", "--purpose", purpose)
    _one_line(result, 2)
    assert "--purpose" in result.err


def test_an_environment_tenant_that_overrides_the_config_files_is_said(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env, invoke, monkeypatch, tmp_path: Path
) -> None:
    """A user whose config file names tenant acme, with INVESTIGATOR_TENANT=globex left in the
    shell, reads globex: one stderr line names both tenants, once per command."""
    _ingest(invoke, ACME, GLOBEX)
    config = tmp_path / "config.toml"
    config.write_text('[subject]\nid = "user:globex-victim"\ntenant = "acme"\n', encoding="utf-8")
    monkeypatch.setenv("INVESTIGATOR_CONFIG", str(config))
    monkeypatch.setenv("INVESTIGATOR_TENANT", "globex")

    result = invoke("runs")
    assert result.code == 0 and result.out.strip() == "no runs recorded", result
    assert result.err == (
        "note: tenant 'globex' from INVESTIGATOR_TENANT overrides tenant 'acme' of [subject] "
        f"in the config file {config}\n"
    )
    # Said by every command that names a subject, not only `runs`; said again per command.
    assert invoke("trace", "run-unknown").err.startswith("note: tenant 'globex' from ")
    assert invoke("runs").err.count("note: tenant") == 1
    # Not said when the tenant comes from a flag, or the two agree.
    assert invoke("runs", "--tenant", "globex").err == ""
    config.write_text('[subject]\nid = "user:globex-victim"\ntenant = "globex"\n')
    assert invoke("runs").err == ""
