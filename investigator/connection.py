"""Opening a Neo4j driver with bounded waits, so an absent server fails fast (exit 4)."""

from __future__ import annotations

import neo4j
from neo4j.exceptions import AuthError, DriverError, Neo4jError, ServiceUnavailable

from investigator.errors import Neo4jUnavailable
from investigator.server_info import server_version
from investigator.settings import ConnectionSettings

__all__ = ["open_driver", "server_version"]

# Bounded so that `exit 4 within 10 s when nothing listens` holds.
CONNECTION_TIMEOUT_S = 3.0
MAX_RETRY_TIME_S = 5.0


def open_driver(settings: ConnectionSettings, *, verify: bool = True) -> neo4j.Driver:
    """Create a driver for `settings`; with `verify`, prove the server answers first."""
    try:
        driver = neo4j.GraphDatabase.driver(
            settings.uri,
            auth=(settings.user, settings.password.get_secret_value()),
            connection_timeout=CONNECTION_TIMEOUT_S,
            connection_acquisition_timeout=CONNECTION_TIMEOUT_S * 2,
            max_transaction_retry_time=MAX_RETRY_TIME_S,
            user_agent="graph-investigator",
            # Bookkeeping properties and labels appear only once written (a new store has no
            # ingest mark, no :MissingFile): the server's "does not exist" warnings are noise
            # that a library caller would otherwise see on stderr for every such read.
            notifications_disabled_classifications=[
                neo4j.NotificationDisabledClassification.UNRECOGNIZED
            ],
        )
    except (ValueError, DriverError) as exc:
        raise Neo4jUnavailable(f"cannot use Neo4j URI {settings.uri!r}: {exc}") from exc
    if verify:
        try:
            driver.verify_connectivity()
        except AuthError as exc:
            driver.close()
            raise Neo4jUnavailable(
                f"Neo4j at {settings.uri} refused the credentials ({settings.origin})"
            ) from exc
        except (ServiceUnavailable, DriverError, Neo4jError, OSError) as exc:
            driver.close()
            raise Neo4jUnavailable(
                f"Neo4j is unavailable at {settings.uri} ({settings.origin}): "
                f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
            ) from exc
    return driver
