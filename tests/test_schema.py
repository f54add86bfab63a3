"""`investigator schema apply` against a real Neo4j: creates what is missing, then nothing."""

from __future__ import annotations

import json

import neo4j
import pytest

from graph_schema.schema_ddl import (
    FULLTEXT_INDEX,
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
    assert f"created fulltext index {FULLTEXT_INDEX}" in first.out

    second = invoke("schema", "apply", "--json")
    assert second.code == 0, second
    report = json.loads(second.out)
    assert report["created"] == []
    tenant_indexes = {tenant_fulltext_index(t) for t in tenants_in_graph(driver)}
    assert set(report["present"]) == {item.name for item in schema_items()} | tenant_indexes
    assert "up to date" in invoke("schema", "apply").out

    fulltext = driver.execute_query(
        "SHOW FULLTEXT INDEXES YIELD name, labelsOrTypes, properties, state "
        "WHERE name = $name RETURN *",
        name=FULLTEXT_INDEX,
    ).records
    assert fulltext[0]["labelsOrTypes"] == ["KG"]
    assert set(fulltext[0]["properties"]) == {"search_text", "name", "title"}
    assert fulltext[0]["state"] == "ONLINE"


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
        rf"CREATE CONSTRAINT {ident} IF NOT EXISTS FOR \(n:KG\) REQUIRE \({props}\) IS UNIQUE"
        rf"|CREATE RANGE INDEX {ident} IF NOT EXISTS FOR \(n:{ident}\) ON \({props}\)"
        rf"|CREATE RANGE INDEX {ident} IF NOT EXISTS FOR \(\)-\[r:{ident}\]-\(\) ON \({props}\)"
        rf"|CREATE FULLTEXT INDEX {ident} IF NOT EXISTS FOR \(n:KG\) ON EACH \[{props}\]"
    )
    items = schema_items()
    assert items
    for item in items:
        assert allowed.fullmatch(item.statement), item.statement
