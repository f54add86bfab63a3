"""What a running Neo4j server says about itself (no settings, no local server: a leaf)."""

from __future__ import annotations

import neo4j


def server_version(driver: neo4j.Driver, database: str | None = None) -> tuple[str, str]:
    """Return the server's (version, edition), e.g. ("5.26.30", "community")."""
    records, _, _ = driver.execute_query(
        "CALL dbms.components() YIELD name, versions, edition "
        "WHERE name = 'Neo4j Kernel' RETURN versions[0] AS version, edition",
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    return str(records[0]["version"]), str(records[0]["edition"])
