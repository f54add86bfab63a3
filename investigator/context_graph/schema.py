"""The Context Graph's constraints and indexes: checked with one read, created only if missing.

Every process that records used to send each `CREATE ... IF NOT EXISTS` (and the one `DROP
... IF EXISTS`) as its own schema transaction before its first run: a dozen transactions
and server CPU per CLI call, to change nothing. Now one `SHOW INDEXES` (a constraint's
backing index carries the constraint's name) tells whether the database already has the
schema the statements describe; only when something is missing (a fresh database, a schema
dropped by hand, a new statement in a newer release) are the statements run. Callers keep
the answer in memory (a recorder for its life), never in a file: a database can be wiped or
replaced under the same address, and one read is cheap.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import neo4j

_CREATE_CONSTRAINT = re.compile(r"^CREATE CONSTRAINT (\w+) IF NOT EXISTS ")
_CREATE_INDEX = re.compile(r"^CREATE INDEX (\w+) IF NOT EXISTS ")
_DROP_CONSTRAINT = re.compile(r"^DROP CONSTRAINT (\w+) IF EXISTS$")
_SHOW = (
    "SHOW INDEXES YIELD name, owningConstraint WHERE name IN $names "
    "RETURN name, owningConstraint AS constraint"
)


class _Expected:
    """What the statements leave behind: constraints and plain indexes present, some absent."""

    def __init__(self, statements: Sequence[str]) -> None:
        self.constraints: set[str] = set()
        self.indexes: set[str] = set()
        self.absent: set[str] = set()
        for statement in statements:
            if m := _CREATE_CONSTRAINT.match(statement):
                self.constraints.add(m.group(1))
            elif m := _CREATE_INDEX.match(statement):
                self.indexes.add(m.group(1))
            elif m := _DROP_CONSTRAINT.match(statement):
                self.absent.add(m.group(1))
            else:  # a statement this check cannot judge: always run the statements
                raise ValueError(f"not a checkable schema statement: {statement[:60]!r}")

    def met_by(self, found: dict[str, str | None]) -> bool:
        return (
            all(found.get(name, "") == name for name in self.constraints)
            and all(name in found and found[name] is None for name in self.indexes)
            and not any(found.get(name, "") == name for name in self.absent)
        )

    @property
    def names(self) -> list[str]:
        return sorted(self.constraints | self.indexes | self.absent)


def schema_in_place(driver: neo4j.Driver, statements: Sequence[str], database: str | None) -> bool:
    """Whether the database already has what `statements` would create (and not what they
    would drop): one `SHOW INDEXES` read."""
    expected = _Expected(statements)
    records, _, _ = driver.execute_query(
        _SHOW,
        names=expected.names,
        database_=database,
        routing_=neo4j.RoutingControl.READ,
    )
    return expected.met_by({r["name"]: r["constraint"] for r in records})


def apply_missing(driver: neo4j.Driver, statements: Sequence[str], database: str | None) -> bool:
    """Make sure `statements` (idempotent DDL) hold on `database`: one read when they do,
    the statements themselves when not. Returns whether anything had to be run."""
    if schema_in_place(driver, statements, database):
        return False
    for statement in statements:
        driver.execute_query(statement, database_=database)
    return True
