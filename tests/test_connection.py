"""The driver the investigator opens, against a real Neo4j."""

from __future__ import annotations

import neo4j

from investigator.connection import open_driver
from investigator.settings import ConnectionSettings


def _warnings(summary: neo4j.ResultSummary) -> list[str]:
    return [s.status_description for s in summary.gql_status_objects if s.is_notification]


def test_reads_of_properties_no_record_has_yet_bring_no_server_warning(
    neo4j_settings: ConnectionSettings,
) -> None:
    """A new store has no ingest mark and no bookkeeping properties yet: reading them is
    normal, and a library caller must not get a "property key does not exist" warning on
    stderr for it (the ingest's first read made three)."""
    own = open_driver(neo4j_settings)
    try:
        _, summary, _ = own.execute_query(
            "OPTIONAL MATCH (m:NoSuchLabelEverWritten) "
            "RETURN m.no_such_property_ever_written AS value"
        )
    finally:
        own.close()
    assert _warnings(summary) == []
    # The server does report it to a driver opened without the setting: the test reads it.
    auth = (neo4j_settings.user, neo4j_settings.password.get_secret_value())
    with neo4j.GraphDatabase.driver(neo4j_settings.uri, auth=auth) as plain_driver:
        _, plain, _ = plain_driver.execute_query(
            "OPTIONAL MATCH (m:NoSuchLabelEverWritten) RETURN m.no_such_property_ever_written AS v"
        )
    assert any("does not exist" in w for w in _warnings(plain))
