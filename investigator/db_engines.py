"""Database engines a question names, and the engine a runbook page is about.

A team's database runbooks are mostly one page per task per engine
(`docs/mariadb/restart.md`, `docs/mongodb/restart.md`), and the words of a symptom ("too
many connections") are every engine's. So a question that names an engine, by its name or
by pasting an error only that engine prints (`ERROR 1040 (HY000): Too many connections` is
MariaDB's or MySQL's), is answered from that engine's pages and pages of no engine; a page of
another engine is set aside (`investigator/runbook_search.py`), and the card says so. A
question that names none is answered as before, and when pages of other engines fit it too
the card names them (`investigator/runbook_lookup.py`).

A page's engine is read from its id, its title and the path of its file (never from its
text: a MariaDB page may compare itself with PostgreSQL); a page naming two engines is of
both. MariaDB and MySQL are one family here: they print the same errors and share their
tools.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from investigator.evidence import Evidence

# Engine (as the card names it) -> the words that name it. Only words that name nothing
# else: `pg` is also a Ceph placement group, `mongo` is MongoDB's shell and driver.
ENGINES: dict[str, frozenset[str]] = {
    "PostgreSQL": frozenset({"postgres", "postgresql", "psql", "pgsql", "patroni", "pgbouncer"}),
    "MariaDB/MySQL": frozenset({"mariadb", "mysql", "mysqld", "mariadbd", "galera"}),
    "MongoDB": frozenset({"mongodb", "mongo", "mongod", "mongos", "mongosh"}),
    "Redis": frozenset({"redis", "valkey"}),
    "Cassandra": frozenset({"cassandra", "cqlsh"}),
    "SQL Server": frozenset({"mssql", "sqlserver"}),
}

# Errors only one engine prints, as a user pastes them.
ENGINE_ERRORS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # `ERROR 1040 (HY000): Too many connections`, `ERROR 2002 (HY000): Can't connect ...`
    ("MariaDB/MySQL", re.compile(r"\bERROR\s+[0-9]{4}\s+\([0-9A-Z]{5}\)")),
    # `MongoServerError: ...`, `MongoNetworkTimeoutError: ...`
    ("MongoDB", re.compile(r"\bMongo[A-Za-z]*Error\b")),
)

_WORD = re.compile(r"[a-z0-9]+")


def _engines_of_words(words: Iterable[str]) -> set[str]:
    said = set(words)
    return {engine for engine, names in ENGINES.items() if names & said}


def engines_named(text: str) -> tuple[set[str], str | None]:
    """The engines `text` names by word or by a pasted error, and the first error pasted
    (as typed), if any."""
    engines = _engines_of_words(_WORD.findall(text.lower()))
    pasted = None
    for engine, pattern in ENGINE_ERRORS:
        if (found := pattern.search(text)) is not None:
            engines.add(engine)
            pasted = pasted or found.group(0)
    return engines, pasted


def page_engines(hit: Evidence) -> set[str]:
    """The engines a runbook page is about: named in its id, title or file's path."""
    path = (hit.locator or "").partition("#")[0].partition("@")[0]
    text = " ".join((hit.element_id.split(":", 1)[-1], hit.title or "", path)).lower()
    return _engines_of_words(_WORD.findall(text))


def of_another_engine(hit: Evidence, engine: str) -> bool:
    """Whether `hit` is a page of an engine, and not of `engine`."""
    engines = page_engines(hit)
    return bool(engines) and engine not in engines


def without_errors(text: str) -> str:
    """`text` without the engine errors' codes it pastes (`ERROR 1040 (HY000)`): they name
    the engine, not what went wrong, which is the message after them."""
    for _, pattern in ENGINE_ERRORS:
        text = pattern.sub(" ", text)
    return text


def engine_word(hits: Iterable[Evidence], engine: str) -> str | None:
    """The word the pages of `engine` among `hits` name it by (the most used, then the first
    by spelling): what a pasted error's engine is searched as, as if typed."""
    counts: dict[str, int] = {}
    for hit in hits:
        path = (hit.locator or "").partition("#")[0].partition("@")[0]
        text = " ".join((hit.element_id.split(":", 1)[-1], hit.title or "", path)).lower()
        for word in set(_WORD.findall(text)) & ENGINES[engine]:
            counts[word] = counts.get(word, 0) + 1
    return min(counts, key=lambda w: (-counts[w], w)) if counts else None
