"""The first thing that must hold: a real Neo4j 5.26 answers over Bolt."""

from __future__ import annotations

import neo4j

from investigator.connection import server_version


def test_return_one(driver: neo4j.Driver) -> None:
    records, _, _ = driver.execute_query("RETURN 1 AS one")
    assert records[0]["one"] == 1


def test_server_is_neo4j_5_26(driver: neo4j.Driver) -> None:
    version, edition = server_version(driver)
    assert version.startswith("5.26."), version
    assert edition in {"community", "enterprise"}


def test_wipe_empties_a_non_empty_graph(driver: neo4j.Driver) -> None:
    from conftest import wipe

    driver.execute_query("UNWIND range(1, 50) AS i CREATE (:Scratch {v: i})-[:R]->(:Scratch)")
    wipe(driver)
    records, _, _ = driver.execute_query("MATCH (n) RETURN count(n) AS c")
    assert records[0]["c"] == 0
