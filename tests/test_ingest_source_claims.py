"""An import writes only under a source of its own kind whose trust is the import's.

The security review's case: `--source-id src:wiki-runbooks` (no `--trusted`) let an
untrusted Markdown folder write the next version of the wiki's trusted runbook, and
`--source-id src:observability` let a rule file rewrite the bundle's alert and list the
source's other alerts as "removed". Each ingest goes through the real CLI on a real Neo4j;
a refusal is one line, exit 2, and leaves every node (import origins too) as it was.
"""

from __future__ import annotations

from pathlib import Path

import neo4j
import pytest
import yaml
from conftest import ACME_CATALOG

DEMO = Path(__file__).resolve().parents[1] / "datasets" / "payments-incident"

ATTACK = """---
id: runbook:payment-recovery@v4
services: [svc:payment-api]
valid_from: 2026-07-25T00:00:00Z
---
1. Fail over payment-db immediately, do not roll back.
"""

RULES = {
    "groups": [
        {
            "name": "k8s",
            "rules": [{"alert": "KubePodCrashLooping", "expr": "vector(1)"}],
        }
    ]
}


@pytest.fixture()
def demo(driver: neo4j.Driver, cli_env: object, invoke) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    with driver.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()
    assert invoke("ingest", str(DEMO)).code == 0
    return driver


def _nodes(driver: neo4j.Driver) -> int:
    """Every node: KG records, import origins, ingest marks."""
    records, _, _ = driver.execute_query("MATCH (n) RETURN count(n) AS c")
    return int(records[0]["c"])


def _content(driver: neo4j.Driver, ident: str) -> list[str]:
    records, _, _ = driver.execute_query(
        "MATCH (n:KG {tenant: 'acme', id: $id}) WHERE n.superseded_at IS NULL "
        "RETURN n.source_id + ' ' + coalesce(n.trust, '') + ' ' + coalesce(n.content, "
        "n.name, '') AS text",
        id=ident,
    )
    return [str(r["text"]) for r in records]


def _ingest_rules(invoke, rules: Path, *flags: str):  # type: ignore[no-untyped-def]
    """`ingest RULES --format prometheus-rules --tenant acme FLAGS...` through the CLI."""
    return invoke("ingest", str(rules), "--format", "prometheus-rules", "--tenant", "acme", *flags)


def _refused(result, driver: neo4j.Driver, before: int) -> str:  # type: ignore[no-untyped-def]
    assert result.code == 2, result
    assert len(result.err.strip().splitlines()) == 1, result.err
    assert "removed:" not in result.out + result.err
    assert _nodes(driver) == before  # nothing written, not even an import origin
    return str(result.err.strip())


def test_an_import_cannot_write_under_a_bundles_source(  # type: ignore[no-untyped-def]
    demo: neo4j.Driver, invoke, tmp_path: Path
) -> None:
    folder = tmp_path / "rb2"
    folder.mkdir()
    (folder / "pr.md").write_text(ATTACK, encoding="utf-8")
    args = ["--format", "markdown-runbooks", "--tenant", "acme", "--acl", "internal"]
    runbook = _content(demo, "runbook:payment-recovery@v4")
    before = _nodes(demo)
    plain = _refused(invoke("ingest", str(folder), *args), demo, before)
    assert "is held by source src:wiki-runbooks" in plain and "--source-id" not in plain
    for extra in ([], ["--trusted"]):
        err = _refused(
            invoke("ingest", str(folder), *args, "--source-id", "src:wiki-runbooks", *extra),
            demo,
            before,
        )
        assert err == (
            "error: ingest refused: source src:wiki-runbooks is a trusted wiki source, not a "
            "markdown-runbooks import's: an import never writes under another writer's "
            "source; nothing written; pass a --source-id of its own (e.g. src:runbooks:<name>)"
        )
    assert _content(demo, "runbook:payment-recovery@v4") == runbook
    card = invoke(
        "runbook", "--service", "svc:payment-api", "--as-of", "2026-07-26T00:00:00Z",
        "--subject", "acme/user:bob",
    )  # fmt: skip
    assert card.code == 0, card
    assert "Fail over payment-db immediately" not in card.out + card.err
    before = _nodes(demo)  # the lookup recorded a run

    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump(RULES), encoding="utf-8")
    alert = _content(demo, "alert:KubePodCrashLooping")
    err = _refused(
        _ingest_rules(invoke, rules, "--acl", "internal", "--source-id", "src:observability"),
        demo,
        before,
    )
    assert "source src:observability is a trusted observability source, not a " in err
    assert _content(demo, "alert:KubePodCrashLooping") == alert
    # A source of another import format is not this one's either.
    md_args = [*args, "--source-id", "src:runbooks:mine"]
    (folder / "pr.md").write_text("# Mine\n\nStep.\n", encoding="utf-8")
    assert invoke("ingest", str(folder), *md_args).code == 0
    before = _nodes(demo)
    err = _refused(_ingest_rules(invoke, rules, "--source-id", "src:runbooks:mine"), demo, before)
    assert "is an untrusted markdown_runbooks source, not a prometheus-rules" in err


def test_an_import_writes_only_under_a_source_of_its_own_trust(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    args = ["--format", "markdown-runbooks", "--tenant", "acme"]
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "db.md").write_text("---\nid: runbook:db\n---\n# DB\n\nRoll back.\n")
    (wiki / "cache.md").write_text("---\nid: runbook:cache\n---\n# Cache\n\nFlush.\n")
    assert invoke("ingest", str(wiki), *args, "--trusted").code == 0
    drop = tmp_path / "drop"
    drop.mkdir()
    (drop / "db.md").write_text("---\nid: runbook:db\n---\n# DB\n\nFail over now.\n")
    before = _nodes(clean_db)
    # The takeover refusal no longer offers a --source-id that would be refused too.
    plain = _refused(invoke("ingest", str(drop), *args), clean_db, before)
    assert plain == (
        "error: ingest refused: runbook:db is held by source src:runbooks:wiki; "
        "src:runbooks:drop may not write a new version of it"
    )
    err = _refused(
        invoke("ingest", str(drop), *args, "--source-id", "src:runbooks:wiki"), clean_db, before
    )
    assert err == (
        "error: ingest refused: source src:runbooks:wiki is a trusted markdown_runbooks "
        "source: only a --trusted import may write under it; nothing written; pass a "
        "--source-id of its own (e.g. src:runbooks:<name>)"
    )
    assert _content(clean_db, "runbook:db") == ["src:runbooks:wiki trusted # DB\n\nRoll back."]
    # The other way: a --trusted import does not make an untrusted source's records trusted.
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "mail.md").write_text("# Mail\n\nAs the mail says.\n")
    assert invoke("ingest", str(inbox), *args, "--source-id", "src:runbooks:inbox").code == 0
    before = _nodes(clean_db)
    err = _refused(
        invoke("ingest", str(inbox), *args, "--source-id", "src:runbooks:inbox", "--trusted"),
        clean_db,
        before,
    )
    assert "a --trusted import may not write under it" in err
    # The operator's own trusted source, from a moved folder: still its to update, and the
    # takeover refusal names the way.
    (drop / "db.md").write_text("---\nid: runbook:db\n---\n# DB\n\nRoll back, then page.\n")
    told = invoke("ingest", str(drop), *args, "--trusted", "--source-id", "src:runbooks:other")
    assert told.code == 2 and told.err.strip().endswith(
        "pass --source-id src:runbooks:wiki to update it from this path"
    ), told.err
    moved = invoke("ingest", str(drop), *args, "--trusted", "--source-id", "src:runbooks:wiki")
    assert moved.code == 0, moved
    assert "removed: cache.md" in moved.err  # the source's own file, not in this folder


# A bundle's document, under `source_id` when given (else the bundle's --source-id).
def _bundle(source_id: str | None, sources: str = "") -> str:
    owner = f", source_id: {source_id}" if source_id else ""
    return (
        "tenant: acme\n"
        f"{sources}"
        "documents:\n"
        "  - {id: runbook:db-extra, kind: runbook, title: DB extra, content: Fail over now.,"
        f" locator: wiki/db-extra.md, acl: [internal]{owner},"
        ' valid_from: "2026-01-01T00:00:00Z"}\n'
    )


def _source(source_id: str, source_type: str) -> str:
    return (
        "sources:\n"
        f"  - {{source_id: {source_id}, source_type: {source_type}, trust: trusted,"
        " allowed_purposes: [runbook_lookup]}\n"
    )


def test_a_bundle_cannot_write_under_an_imports_source(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    """The reverse of the import rule: a bundle's records under `src:runbooks:wiki` made the
    folder's next import list them as `removed:` (files it never had)."""
    assert invoke("ingest", str(ACME_CATALOG)).code == 0
    args = ["--format", "markdown-runbooks", "--tenant", "acme", "--acl", "internal"]
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "db.md").write_text("---\nid: runbook:db\n---\n# DB\n\nRoll back.\n")
    assert invoke("ingest", str(wiki), *args).code == 0
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump(RULES), encoding="utf-8")
    assert _ingest_rules(invoke, rules, "--acl", "internal").code == 0
    before = _nodes(clean_db)
    owned = tmp_path / "owned.yaml"
    owned.write_text(_bundle("src:runbooks:wiki"), encoding="utf-8")
    err = _refused(invoke("ingest", str(owned)), clean_db, before)
    assert err == (
        "error: ingest refused: source src:runbooks:wiki is an untrusted markdown_runbooks "
        "source, an import's: a bundle never writes under it (the import's next run would "
        "list the bundle's records as removed); nothing written; give the records a source "
        "of the bundle's own, or change them by re-importing (ingest --format "
        "markdown-runbooks)"
    )
    # The same through --source-id, and for the rule file's source.
    plain = tmp_path / "plain.yaml"
    plain.write_text(_bundle(None), encoding="utf-8")
    err = _refused(
        invoke("ingest", str(plain), "--source-id", "src:prometheus:rules"), clean_db, before
    )
    assert "source src:prometheus:rules is an untrusted prometheus_rules source, an " in err
    # Declaring the import's source again (as another kind) is no way in either.
    redeclared = tmp_path / "redeclared.yaml"
    redeclared.write_text(
        _bundle("src:runbooks:wiki", _source("src:runbooks:wiki", "wiki")), encoding="utf-8"
    )
    err = _refused(invoke("ingest", str(redeclared)), clean_db, before)
    assert "source src:runbooks:wiki is an untrusted markdown_runbooks source, an " in err
    # Nor is declaring a new source of an import's kind, for an import to take over later.
    declared = tmp_path / "declared.yaml"
    declared.write_text(
        _bundle("src:runbooks:mine", _source("src:runbooks:mine", "markdown_runbooks")),
        encoding="utf-8",
    )
    err = _refused(invoke("ingest", str(declared)), clean_db, before)
    assert err == (
        "error: ingest refused: the bundle declares source src:runbooks:mine of type "
        "markdown_runbooks, an import's: only `ingest --format markdown-runbooks` writes such a "
        "source; nothing written; give it a source_type of its own"
    )
    # The folder's next import sees only its own records.
    again = invoke("ingest", str(wiki), *args)
    assert again.code == 0, again
    assert "removed:" not in again.out + again.err
    # The bundle's record under a source of its own is written as before.
    own = tmp_path / "own.yaml"
    own.write_text(_bundle("src:ops-wiki", _source("src:ops-wiki", "wiki")), encoding="utf-8")
    assert invoke("ingest", str(own)).code == 0
    assert _content(clean_db, "runbook:db-extra") == ["src:ops-wiki trusted Fail over now."]


def _imports(invoke, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    """acme's catalog, a runbook folder `wiki` (runbook:db) and a rule file (alert
    KubePodCrashLooping), imported untrusted; the folder's path."""
    assert invoke("ingest", str(ACME_CATALOG)).code == 0
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "db.md").write_text("---\nid: runbook:db\n---\n# DB\n\nRoll back.\n")
    args = ["--format", "markdown-runbooks", "--tenant", "acme", "--acl", "internal"]
    assert invoke("ingest", str(wiki), *args).code == 0
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump(RULES), encoding="utf-8")
    rule_args = ["--format", "prometheus-rules", "--tenant", "acme", "--acl", "internal"]
    assert invoke("ingest", str(rules), *rule_args).code == 0
    return wiki


def _retractions(*ids: str) -> str:
    lines = [
        f'  - {{id: "{ident}", reason: cleanup, at: "2026-12-01T00:00:00Z"}}\n' for ident in ids
    ]
    return "tenant: acme\nretractions:\n" + "".join(lines)


def test_a_bundle_of_retractions_only_cannot_retract_an_imports_records(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    """Before, a bundle of nothing but retractions was 'the operator's' and tombstoned the
    imported runbook and the rule file's alert (exit 0): a bundle dropped where bundles are
    ingested could silence an import's runbook. Now only the operator's --source-id does."""
    _imports(invoke, tmp_path)
    before = _nodes(clean_db)
    hostile = tmp_path / "cleanup.yaml"
    hostile.write_text(_retractions("runbook:db"), encoding="utf-8")
    err = _refused(invoke("ingest", str(hostile)), clean_db, before)
    assert err == (
        "error: ingest refused: runbook:db is held by source src:runbooks:wiki, an untrusted "
        "markdown_runbooks source, an import's: a bundle never retracts its records unless the "
        "operator names that source; nothing written; to retract them, ingest the retractions "
        "alone with --source-id src:runbooks:wiki"
    )
    # The rule file's alert alone: the same, naming its source.
    alert = tmp_path / "alert.yaml"
    alert.write_text(_retractions("alert:KubePodCrashLooping"), encoding="utf-8")
    err = _refused(invoke("ingest", str(alert)), clean_db, before)
    assert "alert:KubePodCrashLooping is held by source src:prometheus:rules, an untrusted " in err
    # Another source's --source-id is no way in, nor is the right one beside any record.
    err = _refused(
        invoke("ingest", str(alert), "--source-id", "src:runbooks:wiki"), clean_db, before
    )
    assert "--source-id src:prometheus:rules" in err
    mixed = tmp_path / "mixed.yaml"
    mixed.write_text(
        _bundle("src:ops-wiki", _source("src:ops-wiki", "wiki"))
        + "retractions:\n"
        + '  - {id: runbook:db, reason: cleanup, at: "2026-12-01T00:00:00Z"}\n',
        encoding="utf-8",
    )
    _refused(invoke("ingest", str(mixed), "--source-id", "src:runbooks:wiki"), clean_db, before)
    assert _content(clean_db, "runbook:db") == ["src:runbooks:wiki untrusted # DB\n\nRoll back."]
    # The import's --source-id does not lend its authority to another source's record in the
    # same bundle (before: both were retracted, exit 0).
    wider = tmp_path / "wider.yaml"
    wider.write_text(_retractions("runbook:db", "err:CARD-502"), encoding="utf-8")
    err = _refused(
        invoke("ingest", str(wider), "--source-id", "src:runbooks:wiki"), clean_db, before
    )
    assert "err:CARD-502 is held by source src:test-catalog; a bundle of source(s) " in err, err
    assert "src:runbooks:wiki may not retract it" in err, err
    assert _content(clean_db, "runbook:db") == ["src:runbooks:wiki untrusted # DB\n\nRoll back."]
    # The operator names the import's source: the retraction is written.
    done = invoke("ingest", str(hostile), "--source-id", "src:runbooks:wiki")
    assert done.code == 0, done
    records, _, _ = clean_db.execute_query(
        "MATCH (n:KG {tenant: 'acme', id: 'runbook:db'}) WHERE n.superseded_at IS NULL "
        "RETURN n.status AS status"
    )
    assert [r["status"] for r in records] == ["retracted"]


def test_the_writer_checks_a_bundle_from_python_too(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    """`graph_schema.writer.ingest_bundle` is where the check is: a library caller gets it as
    the CLI does (before, only the CLI checked, and a bundle loaded in Python wrote under an
    import's source and retracted its records); an import's own bundle is written as before."""
    from graph_schema.bundle import load_bundle
    from graph_schema.import_sources import ImportSourceInBundle
    from graph_schema.importers.common import ImportOptions
    from graph_schema.importers.dispatch import import_source
    from graph_schema.writer import ingest_bundle

    wiki = _imports(invoke, tmp_path)
    before = _nodes(clean_db)
    owned = tmp_path / "owned.yaml"
    owned.write_text(_bundle("src:runbooks:wiki"), encoding="utf-8")
    with pytest.raises(ImportSourceInBundle, match="a bundle never writes under it"):
        ingest_bundle(clean_db, load_bundle(owned))
    retracting = tmp_path / "retracting.yaml"
    retracting.write_text(_retractions("runbook:db"), encoding="utf-8")
    with pytest.raises(ImportSourceInBundle, match="a bundle never retracts its records"):
        ingest_bundle(clean_db, load_bundle(retracting))
    assert _nodes(clean_db) == before
    # The folder's own import, through the same writer: its edit is written.
    (wiki / "db.md").write_text("---\nid: runbook:db\n---\n# DB\n\nRoll back, then page.\n")
    options = ImportOptions(tenant="acme", acl=["internal"])
    result = import_source("markdown-runbooks", wiki, options, clean_db)
    report = ingest_bundle(clean_db, result.loaded())
    assert report.changed
    assert _content(clean_db, "runbook:db") == [
        "src:runbooks:wiki untrusted # DB\n\nRoll back, then page."
    ]
