"""What an ingest may write, through the real CLI against a real Neo4j: only its own tenant,
only the files it was pointed at (never through a symbolic link), only values Neo4j can index;
and a file that is not what it claims is refused in one line that does not quote it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import neo4j
import pytest
import yaml
from test_ingest import SOURCE, counts, small_bundle, write

from graph_schema.schema_ddl import tenant_fulltext_index

SECRET = 'secret_password = "hunter2-TOPSECRET"\n'


def refused(result: Any, *expected: str) -> list[str]:
    """Exit 2, nothing on stdout, each expected text on stderr, the last line the verdict."""
    assert result.code == 2, result
    assert result.out == "", result
    for text in expected:
        assert text in result.err, result.err
    lines: list[str] = result.err.rstrip().splitlines()
    assert lines[-1].startswith("error: "), result.err
    assert "hunter2" not in result.err  # nothing of a secret file is echoed
    return lines


def principal_of(driver: neo4j.Driver, tenant: str, ident: str) -> dict[str, Any] | None:
    rows = driver.execute_query(
        "MATCH (p:KG:Principal {tenant: $tenant, id: $id}) WHERE p.superseded_at IS NULL "
        "RETURN properties(p) AS p",
        tenant=tenant,
        id=ident,
    ).records
    return dict(rows[0]["p"]) if rows else None


def drop_tenant_index(driver: neo4j.Driver, tenant: str) -> None:
    """Indexes outlive `clean_db`: another test module may have ingested this tenant."""
    driver.execute_query(f"DROP INDEX `{tenant_fulltext_index(tenant)}` IF EXISTS")


def tenant_index_exists(driver: neo4j.Driver, tenant: str) -> bool:
    rows = driver.execute_query(
        "SHOW INDEXES YIELD name WHERE name = $name RETURN name",
        name=tenant_fulltext_index(tenant),
    ).records
    return bool(rows)


# -- a bundle writes only its own tenant (issue 17) -------------------------------------------

GLOBEX = {
    "tenant": "globex",
    "sources": [SOURCE],
    "principals": [
        {
            "id": "user:mallory",
            "labels": ["internal"],
            "purposes": ["incident_investigation", "audit"],
        }
    ],
}
HOSTILE = {
    "tenant": "acme",
    "principals": [
        {
            "id": "user:mallory",
            "tenant": "globex",
            "labels": ["internal"],
            "purposes": ["incident_investigation"],
        },
        {
            "id": "user:evil-counsel",
            "tenant": "globex",
            "labels": ["internal", "incident", "pii"],
            "purposes": ["legal", "audit", "incident_investigation"],
        },
    ],
}


def test_a_bundle_cannot_write_another_tenants_principals(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    assert invoke("ingest", str(write(tmp_path, GLOBEX, "globex.yaml"))).code == 0
    hostile = write(tmp_path, HOSTILE, "hostile.yaml")
    expected = "tenant 'globex' is not the bundle's tenant 'acme'"
    # acme empty (the first-ingest path), then acme with records (the comparing path).
    for setup in ([], [str(write(tmp_path, small_bundle(), "acme.yaml"))]):
        for path in setup:
            assert invoke("ingest", path).code == 0
        before = counts(clean_db)
        for extra in ([], ["--tenant", "acme"]):
            lines = refused(invoke("ingest", str(hostile), *extra), expected)
            assert lines[0].startswith(f"{hostile}: principals[0] user:mallory: ")
            assert lines[1].startswith(f"{hostile}: principals[1] user:evil-counsel: ")
            assert lines[-1] == "error: bundle rejected: 2 problem(s), nothing written"
            assert counts(clean_db) == before
    mallory = principal_of(clean_db, "globex", "user:mallory")
    assert mallory is not None and "audit" in mallory["purposes"]
    assert principal_of(clean_db, "globex", "user:evil-counsel") is None
    # What the tester saw: globex's mallory keeps audit; no evil-counsel resolves in globex.
    assert invoke("runs", "--subject", "globex/user:mallory", "--purpose", "audit").code == 0
    counsel = invoke("runs", "--subject", "globex/user:evil-counsel", "--purpose", "audit")
    assert counsel.code == 3, counsel


def test_tenant_flag_says_what_it_replaced_and_moves_principals_only_when_asked(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    """e32 finding m8: `--tenant` replaced a file's tenant silently, and the file's
    principals (their labels and purposes: pii, audit) became the other tenant's."""
    bundle = small_bundle(
        principals=[
            {"id": "user:carol", "tenant": "acme", "labels": ["pii"], "purposes": ["audit"]}
        ]
    )
    path = write(tmp_path, bundle)
    before = counts(clean_db)
    lines = refused(
        invoke("ingest", str(path), "--tenant", "initech"),
        f"{path} says tenant acme and holds 1 principal (user:carol: pii, audit): --tenant "
        "initech would make it a principal of initech; nothing written. Ingest the file "
        "without --tenant, or give --move-principals to write them into initech",
    )
    assert len(lines) == 1, lines
    assert counts(clean_db) == before
    assert principal_of(clean_db, "initech", "user:carol") is None

    moved = invoke("ingest", str(path), "--tenant", "initech", "--move-principals")
    assert moved.code == 0, moved
    assert (
        f"ingest: {path} says tenant acme; written as initech (--tenant), its 1 principal too "
        "(--move-principals): user:carol\n"
    ) in moved.err, moved.err
    assert principal_of(clean_db, "initech", "user:carol") is not None
    assert principal_of(clean_db, "acme", "user:carol") is None
    rows = clean_db.execute_query("MATCH (n:KG) RETURN DISTINCT n.tenant AS t").records
    assert {r["t"] for r in rows} == {"initech"}

    # No principals: written, and said; the file's own tenant given: nothing to say.
    plain = write(tmp_path, small_bundle(), "plain.yaml")
    other = invoke("ingest", str(plain), "--tenant", "initech")
    assert other.code == 0, other
    assert f"ingest: {plain} says tenant acme; written as initech (--tenant)\n" in other.err
    same = invoke("ingest", str(plain), "--tenant", "acme")
    assert same.code == 0 and "says tenant" not in same.err, same
    # --move-principals names where to: without --tenant it is refused.
    refused(
        invoke("ingest", str(path), "--move-principals"),
        "--move-principals is for --tenant only",
    )


# -- symbolic links are not followed -----------------------------------------------------------


@pytest.fixture()
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "secret.txt"
    path.parent.mkdir()
    path.write_text(SECRET, encoding="utf-8")
    return path


def test_a_symlink_in_a_bundle_folder_is_refused(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path, secret: Path
) -> None:
    folder = tmp_path / "bundle"
    folder.mkdir()
    write(folder, small_bundle(), "a.yaml")
    (folder / "leak.yaml").symlink_to(secret)
    lines = refused(
        invoke("ingest", str(folder)), f"{folder / 'leak.yaml'}: file: a symbolic link: refused"
    )
    assert len(lines) == 2
    assert counts(clean_db) == (0, 0)


def test_a_symlinked_folder_inside_a_bundle_folder_is_refused(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write(elsewhere, small_bundle(), "a.yaml")
    folder = tmp_path / "bundle"
    folder.mkdir()
    write(folder, {"tenant": "acme", "sources": [SOURCE]}, "s.yaml")
    (folder / "more").symlink_to(elsewhere, target_is_directory=True)
    refused(invoke("ingest", str(folder)), f"{folder / 'more'}: folder: a symbolic link: refused")
    assert counts(clean_db) == (0, 0)


def test_a_path_that_is_a_symlink_is_refused(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path, secret: Path
) -> None:
    real = write(tmp_path, small_bundle(), "real.yaml")
    for target in (secret, real):
        link = tmp_path / f"link-to-{target.stem}.yaml"
        link.symlink_to(target)
        refused(invoke("ingest", str(link)), f"{link}: path: a symbolic link: refused")
    assert counts(clean_db) == (0, 0)


def test_importers_refuse_symlinks(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path, secret: Path
) -> None:
    runbooks = tmp_path / "runbooks"
    runbooks.mkdir()
    (runbooks / "a.md").write_text("# Restart\n\nRestart the service.\n", encoding="utf-8")
    (runbooks / "b.md").symlink_to(secret)
    args = ["--tenant", "t1", "--source-id", "src:s", "--acl", "internal"]
    result = invoke("ingest", str(runbooks), "--format", "markdown-runbooks", *args)
    refused(result, f"{runbooks / 'b.md'}: file: a symbolic link: refused")
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "a.yaml").write_text(
        "groups:\n  - name: g\n    rules:\n      - {alert: A, expr: up == 0}\n", encoding="utf-8"
    )
    (rules / "b.yaml").symlink_to(secret)
    result = invoke("ingest", str(rules), "--format", "prometheus-rules", *args)
    refused(result, f"{rules / 'b.yaml'}: file: a symbolic link: refused")
    assert counts(clean_db) == (0, 0)


# -- a file that is not what it claims: one line, none of its text ---------------------------


def test_a_parse_error_gives_a_position_not_the_files_text(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    text = "name: x\n" + SECRET + ": [\n"
    bundle = tmp_path / "b.yaml"
    bundle.write_text(text, encoding="utf-8")
    refused(invoke("ingest", str(bundle)), f"{bundle}: file: not parseable: line ")
    runbook = tmp_path / "md" / "r.md"
    runbook.parent.mkdir()
    runbook.write_text("---\n" + text + "---\n# R\n", encoding="utf-8")
    md = invoke("ingest", str(runbook.parent), "--format", "markdown-runbooks", "--tenant", "t1")
    refused(md, f"{runbook}: front matter: front matter is not valid YAML: line ")
    rules = tmp_path / "rules.yaml"
    rules.write_text(text, encoding="utf-8")
    prom = invoke("ingest", str(rules), "--format", "prometheus-rules", "--tenant", "t1")
    refused(prom, f"{rules}: file: not parseable YAML: line ")
    assert counts(clean_db) == (0, 0)


def test_a_front_matter_error_gives_the_files_lines(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    # Before: counted from the front matter's first line ("line 2, column 1 ... at line 1,
    # column 8" for an error on the file's line 2), while the gate counts the file's lines
    # (explorer e29, m4).
    folder = tmp_path / "md"
    folder.mkdir()
    page = folder / "badfm.md"
    page.write_text("---\ntitle: [unclosed\n---\n# x\n", encoding="utf-8")
    args = ("--format", "markdown-runbooks", "--tenant", "t1")
    refused(
        invoke("ingest", str(folder), *args),
        f"{page}: front matter: front matter is not valid YAML: line 3, column 1: did not find "
        "expected ',' or ']' (while parsing a flow sequence at line 2, column 8)",
    )
    page.write_text("---\ntitle: a\nowner: b\ntitle: c\n---\n# x\n", encoding="utf-8")
    refused(
        invoke("ingest", str(folder), *args),
        f"{page}: front matter: front matter is not valid YAML: line 4, column 1: duplicate "
        "key 'title'",
    )
    assert counts(clean_db) == (0, 0)


def test_a_lone_surrogate_escape_is_refused_in_one_line(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    # Found by an attacker: `\ud800` in a JSON bundle, front matter or a rule's annotation
    # failed deep in the ingest with exit 1 ("UnicodeEncodeError ... rerun with --debug").
    said = "holds a lone UTF-16 surrogate escape (such as \\ud800), which is no text"
    bundle = tmp_path / "s.json"
    bundle.write_text(
        '{"tenant": "t1", "nodes": [{"id": "svc:a", "label": "Service", "name": "a\\ud800"}]}',
        encoding="utf-8",
    )
    refused(invoke("ingest", str(bundle)), f"{bundle}: file: not parseable: {said}")
    runbook = tmp_path / "md" / "r.md"
    runbook.parent.mkdir()
    runbook.write_text('---\ntitle: "R \\uD800"\n---\n# R\n', encoding="utf-8")
    md = invoke("ingest", str(runbook.parent), "--format", "markdown-runbooks", "--tenant", "t1")
    refused(md, f"{runbook}: front matter:", said)
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up == 0\n"
        '        annotations: {summary: "\\uDC00"}\n',
        encoding="utf-8",
    )
    prom = invoke("ingest", str(rules), "--format", "prometheus-rules", "--tenant", "t1")
    refused(prom, f"{rules}: file: not parseable YAML: {said}")
    assert counts(clean_db) == (0, 0)
    # A well-formed pair is one character, and stays welcome.
    fine = tmp_path / "ok.json"
    fine.write_text(
        '{"tenant": "t1", "nodes": [{"id": "svc:a", "label": "Service", '
        '"name": "a \\ud83d\\ude00"}]}',
        encoding="utf-8",
    )
    assert "UTF-16" not in invoke("ingest", str(fine)).err


COMPLEX_KEYS = [
    "tenant: t1\n? [a, b]\n: c\n",
    "tenant: t1\n? {a: 1}\n: c\n",
    "tenant: t1\nnodes:\n  - id: svc:a\n    label: Service\n    ? [x]\n    : y\n",
]


@pytest.mark.parametrize("text", COMPLEX_KEYS)
def test_a_list_or_map_as_a_key_is_not_parseable(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path, text: str
) -> None:
    bundle = tmp_path / "k.yaml"
    bundle.write_text(text, encoding="utf-8")
    lines = refused(
        invoke("ingest", str(bundle)),
        f"{bundle}: file: not parseable: line ",
        "a key must be text or a number, not a list or map",
    )
    assert len(lines) == 2
    assert counts(clean_db) == (0, 0)


def test_a_list_key_in_front_matter_rules_and_cases_is_refused(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    needle = "a key must be text or a number, not a list or map"
    runbook = tmp_path / "md" / "r.md"
    runbook.parent.mkdir()
    runbook.write_text("---\ntitle: R\n? [a]\n: b\n---\n# R\n", encoding="utf-8")
    md = invoke("ingest", str(runbook.parent), "--format", "markdown-runbooks", "--tenant", "t1")
    refused(md, f"{runbook}: front matter:", needle)
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "groups:\n  - name: g\n    rules:\n      - alert: A\n        ? [x]\n        : y\n",
        encoding="utf-8",
    )
    prom = invoke("ingest", str(rules), "--format", "prometheus-rules", "--tenant", "t1")
    refused(prom, f"{rules}: file: not parseable YAML: line 5, column 11: {needle}")
    cases = tmp_path / "cases.yaml"
    cases.write_text("cases:\n  ? [x]\n  : y\n", encoding="utf-8")
    lines = refused(invoke("eval", "--cases", str(cases)), "not valid YAML", needle)
    assert len(lines) == 1
    assert counts(clean_db) == (0, 0)


# -- values Neo4j can index ------------------------------------------------------------------

BIG = "n" * 40_000


def _service(ident: str, **fields: Any) -> dict[str, Any]:
    return {"id": ident, "label": "Service", "source_id": "src:catalog", **fields}


OVERSIZED: dict[str, tuple[dict[str, Any], str]] = {
    "node name": (
        {"nodes": [_service("svc:first"), _service("svc:big", name=BIG)]},
        "nodes[1] svc:big: name is 40000 bytes long (UTF-8); an indexed property holds at "
        "most 4096",
    ),
    "node name in props": (
        {"nodes": [_service("svc:first"), _service("svc:big", props={"name": BIG})]},
        "nodes[1] svc:big: name is 40000 bytes",
    ),
    "multi-byte name": (
        {"nodes": [_service("svc:first"), _service("svc:big", name="\U0001f600" * 1025)]},
        "nodes[1] svc:big: name is 4100 bytes",
    ),
    "error code": (
        {
            "nodes": [
                _service("svc:first"),
                {
                    "id": "err:big",
                    "label": "ErrorCode",
                    "source_id": "src:catalog",
                    "props": {"code": BIG},
                },
            ]
        },
        "nodes[1] err:big: code is 40000 bytes",
    ),
    "deployment service": (
        {
            "nodes": [
                _service("svc:first"),
                {
                    "id": "deploy:big",
                    "label": "Deployment",
                    "source_id": "src:catalog",
                    "props": {"service": BIG},
                },
            ]
        },
        "nodes[1] deploy:big: service is 40000 bytes",
    ),
    "alert name": (
        {
            "nodes": [
                _service("svc:first"),
                {
                    "id": "alert:big",
                    "label": "Alert",
                    "source_id": "src:catalog",
                    "props": {"alertname": BIG},
                },
            ]
        },
        "nodes[1] alert:big: alertname is 40000 bytes",
    ),
    "document title": (
        {
            "nodes": [_service("svc:first")],
            "documents": [
                {
                    "id": "doc:big",
                    "kind": "runbook",
                    "title": BIG,
                    "content": "x",
                    "locator": "x.md",
                    "source_id": "src:catalog",
                }
            ],
        },
        "documents[0] doc:big: title (the record's indexed name) is 40000 bytes",
    ),
    "principal name": (
        {
            "nodes": [_service("svc:first")],
            "principals": [{"id": "user:big", "name": BIG, "purposes": ["audit"]}],
        },
        "principals[0] user:big: name is 40000 bytes",
    ),
    "source id": (
        {"nodes": [_service("svc:first"), _service("svc:big", source_id="src:" + BIG)]},
        "nodes[1] svc:big: source_id: id must be 1..200 characters",
    ),
}


@pytest.mark.parametrize("case", sorted(OVERSIZED))
def test_a_value_too_large_to_index_is_refused_before_anything_is_written(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path, case: str
) -> None:
    sections, expected = OVERSIZED[case]
    drop_tenant_index(clean_db, "t3")
    bundle = write(tmp_path, {"tenant": "t3", "sources": [SOURCE], **sections}, "t3.json")
    # Batches of one: before, the records ahead of the big one were written (half an ingest).
    lines = refused(invoke("ingest", str(bundle), "--batch-size", "1"), f"{bundle}: {expected}")
    assert len(lines) == 2
    assert counts(clean_db) == (0, 0)
    assert not tenant_index_exists(clean_db, "t3")


def test_values_at_the_bound_are_written(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    # The longest tenant, with the longest values in single and composite (tenant, ...) keys.
    tenant = "t" * 64
    at_bound = "\U0001f600" * 1024  # 4096 bytes in UTF-8
    bundle = {
        "tenant": tenant,
        "sources": [SOURCE],
        "principals": [{"id": "user:" + "p" * 195, "name": at_bound, "purposes": ["audit"]}],
        "nodes": [
            _service("svc:" + "s" * 196, name=at_bound),
            {
                "id": "deploy:d",
                "label": "Deployment",
                "source_id": "src:catalog",
                "props": {"service": "d" * 4096},
            },
            {
                "id": "err:e",
                "label": "ErrorCode",
                "source_id": "src:catalog",
                "props": {"code": at_bound},
            },
        ],
        "documents": [
            {
                "id": "doc:d",
                "kind": "runbook",
                "title": "t" * 4096,
                "content": "x",
                "locator": "x.md",
                "source_id": "src:catalog",
            }
        ],
    }
    result = invoke("ingest", str(write(tmp_path, bundle, "bound.json")), "--json")
    assert result.code == 0, result
    assert json.loads(result.out)["node_records_created"] == 6


def test_markdown_front_matter_name_too_large_to_index_is_refused(
    clean_db: neo4j.Driver, cli_env: Any, invoke: Any, tmp_path: Path
) -> None:
    runbook = tmp_path / "md" / "r.md"
    runbook.parent.mkdir()
    front = yaml.safe_dump({"name": "n" * 5000, "id": "runbook:r"})
    runbook.write_text(f"---\n{front}---\n# R\n\nRestart.\n", encoding="utf-8")
    drop_tenant_index(clean_db, "t1")
    args = ["--format", "markdown-runbooks", "--tenant", "t1", "--batch-size", "1"]
    result = invoke("ingest", str(runbook.parent), *args)
    refused(result, f"{runbook}: runbook:r: name is 5000 bytes")
    assert counts(clean_db) == (0, 0)
    assert not tenant_index_exists(clean_db, "t1")


# -- generate writes its own file, never through a link --------------------------------------


def test_generate_refuses_to_write_through_a_symlink(invoke: Any, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n", encoding="utf-8")
    link = tmp_path / "link.json"
    link.symlink_to(victim)
    result = invoke("generate", "--services", "1", "--out", str(link))
    assert result.code == 2, result
    assert (
        result.err.strip()
        == f"error: --out {link} is a symbolic link: refused (give the file's own path)"
    )
    assert victim.read_text(encoding="utf-8") == "keep me\n"
