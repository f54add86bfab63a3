"""The current imported records whose trust was never recorded (written before their importer
stored it): what `schema apply` tells an operator to import again.

Such a record reads as untrusted and none of its words is quoted (investigator/evidence.py
`trust_of`), so nothing is unsafe; but only a new import of its file records the import's
trust (a new version: no record is rewritten in place). Counted per tenant and source.
"""

from __future__ import annotations

import neo4j
from pydantic import BaseModel, ConfigDict

from graph_schema.kg_types import TRUST_RECORDING_METHODS, RecordStatus

_UNRECORDED = (
    "MATCH (a:KG:Alert) WHERE a.trust IS NULL AND a.method IN $methods "
    "AND a.superseded_at IS NULL AND a.status = $active "
    "RETURN a.tenant AS tenant, a.source_id AS source_id, count(a) AS rules "
    "ORDER BY tenant, source_id"
)


class UnrecordedTrust(BaseModel):
    """A source's current rule records of one tenant with no trust recorded."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    source_id: str
    rules: int

    def line(self) -> str:
        """One line for `schema apply`."""
        return (
            f"note: {self.rules} alert rule(s) of {self.source_id} in tenant {self.tenant} were "
            "imported before their import's trust was recorded: read as untrusted, nothing of "
            "them quoted; import their rule files again to record it"
        )


def unrecorded_trust(driver: neo4j.Driver, database: str | None = None) -> list[UnrecordedTrust]:
    """The current rule records with no trust, by tenant and source (sorted)."""
    records, _, _ = driver.execute_query(
        _UNRECORDED,
        methods=sorted(TRUST_RECORDING_METHODS),
        active=RecordStatus.ACTIVE.value,
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    return [
        UnrecordedTrust(
            tenant=str(r["tenant"]), source_id=str(r["source_id"]), rules=int(r["rules"])
        )
        for r in records
    ]
