"""`investigator schema apply` against a real Neo4j: creates what is missing, then nothing."""

from __future__ import annotations

import json

import neo4j
import pytest
from conftest import REPO

from graph_schema.schema_ddl import (
    FULLTEXT_INDEX,
    retired_index_names,
    schema_items,
    tenant_fulltext_index,
    tenants_in_graph,
)


def _drop_kg_schema(driver: neo4j.Driver) -> None:
    names = {item.name for item in schema_items()}
    for record in driver.execute_query("SHOW CONSTRAINTS YIELD name").records:
        if record["name"] in names:
            driver.execute_query(f"DROP CONSTRAINT {record['name']} IF EXISTS")
    for record in driver.execute_query("SHOW INDEXES YIELD name").records:
        if record["name"] in names:
            driver.execute_query(f"DROP INDEX {record['name']} IF EXISTS")


def test_schema_apply_is_idempotent_and_says_what_changed(driver, cli_env, invoke) -> None:
    _drop_kg_schema(driver)
    first = invoke("schema", "apply")
    assert first.code == 0, first
    assert "created constraint kg_record_identity" in first.out
    assert f"created fulltext index {FULLTEXT_INDEX}" not in first.out

    second = invoke("schema", "apply", "--json")
    assert second.code == 0, second
    report = json.loads(second.out)
    assert report["created"] == []
    tenant_indexes = {tenant_fulltext_index(t) for t in tenants_in_graph(driver)}
    assert set(report["present"]) == {item.name for item in schema_items()} | tenant_indexes
    assert "up to date" in invoke("schema", "apply").out

    # No index over every tenant's records: fulltext is per tenant only.
    fulltext = driver.execute_query(
        "SHOW FULLTEXT INDEXES YIELD name, labelsOrTypes RETURN name, labelsOrTypes"
    ).records
    assert fulltext
    assert all(r["labelsOrTypes"][0].startswith("KGTenant_") for r in fulltext), fulltext


def _index_names(driver: neo4j.Driver) -> set[str]:
    return {str(r["name"]) for r in driver.execute_query("SHOW INDEXES YIELD name").records}


def _create_retired(driver: neo4j.Driver) -> None:
    # What an older schema left in a store (docs/kg-model.md lists what was retired).
    driver.execute_query(
        "CREATE RANGE INDEX kg_recorded_at IF NOT EXISTS FOR (n:KG) ON (n.recorded_at)"
    )
    driver.execute_query(
        "CREATE RANGE INDEX kg_rel_owns_valid_from IF NOT EXISTS "
        "FOR ()-[r:OWNS]-() ON (r.valid_from)"
    )
    driver.execute_query(
        f"CREATE FULLTEXT INDEX {FULLTEXT_INDEX} IF NOT EXISTS "
        "FOR (n:KG) ON EACH [n.search_text, n.name, n.title]"
    )
    assert {"kg_recorded_at", "kg_rel_owns_valid_from", FULLTEXT_INDEX} <= _index_names(driver)


def test_schema_apply_drops_the_indexes_an_older_schema_left(driver, cli_env, invoke) -> None:
    """An index nothing reads still costs every write of its label (issue 12)."""
    assert invoke("schema", "apply").code == 0
    _create_retired(driver)
    result = invoke("schema", "apply")
    assert result.code == 0, result
    for name in ("kg_recorded_at", "kg_rel_owns_valid_from", FULLTEXT_INDEX):
        assert f"dropped index {name}" in result.out
    assert "3 dropped" in result.out
    names = _index_names(driver)
    assert not names & set(retired_index_names())
    assert {item.name for item in schema_items()} <= names | {
        r["name"] for r in driver.execute_query("SHOW CONSTRAINTS YIELD name").records
    }
    again = invoke("schema", "apply", "--json")
    assert json.loads(again.out)["dropped"] == []


def test_an_ingest_drops_them_too(clean_db, cli_env, invoke, tmp_path) -> None:
    """A user who upgrades and only ingests gets the faster schema as well."""
    driver = clean_db  # the demo's ingest must not meet records another test left
    assert invoke("schema", "apply").code == 0
    _create_retired(driver)
    result = invoke("ingest", str(REPO / "datasets" / "payments-incident"))
    assert result.code == 0, result
    assert not _index_names(driver) & set(retired_index_names())


def test_no_retired_index_is_created_again() -> None:
    live = {item.name for item in schema_items()}
    assert not live & set(retired_index_names())


def test_record_identity_is_unique_per_tenant_id_version(driver, cli_env, invoke) -> None:
    assert invoke("schema", "apply").code == 0
    driver.execute_query("MATCH (n:KG {id: 'test:dup'}) DETACH DELETE n")
    driver.execute_query("CREATE (:KG {tenant: 'acme', id: 'test:dup', version: 1})")
    # Same id in another tenant is a different record.
    driver.execute_query("CREATE (:KG {tenant: 'globex', id: 'test:dup', version: 1})")
    with pytest.raises(neo4j.exceptions.ConstraintError):
        driver.execute_query("CREATE (:KG {tenant: 'acme', id: 'test:dup', version: 1})")
    driver.execute_query("MATCH (n:KG {id: 'test:dup'}) DETACH DELETE n")


def test_schema_apply_without_neo4j_is_exit_4(invoke, monkeypatch) -> None:
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:9")
    monkeypatch.setenv("NEO4J_PASSWORD", "x")
    result = invoke("schema", "apply")
    assert result.code == 4 and result.err.count("\n") == 1


def test_schema_ddl_text_is_built_from_identifiers_only() -> None:
    """DDL takes no parameters, so its text is assembled: prove only identifiers go in."""
    import re

    from graph_schema.schema_ddl import schema_items

    ident = r"[A-Za-z_][A-Za-z0-9_]*"
    props = rf"{ident}\.{ident}(, {ident}\.{ident})*"
    allowed = re.compile(
        rf"CREATE CONSTRAINT {ident} IF NOT EXISTS FOR \(n:{ident}\) REQUIRE \({props}\) IS UNIQUE"
        rf"|CREATE RANGE INDEX {ident} IF NOT EXISTS FOR \(n:{ident}\) ON \({props}\)"
        rf"|CREATE RANGE INDEX {ident} IF NOT EXISTS FOR \(\)-\[r:{ident}\]-\(\) ON \({props}\)"
        rf"|CREATE FULLTEXT INDEX {ident} IF NOT EXISTS FOR \(n:KG\) ON EACH \[{props}\]"
    )
    items = schema_items()
    assert items
    for item in items:
        assert allowed.fullmatch(item.statement), item.statement
