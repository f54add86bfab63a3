"""A team's database runbooks: one page per task per engine (`docs/mariadb/restart.md`,
`docs/mongodb/restart.md`), as a DBA repository keeps them, imported as Markdown and asked
through the CLI on a real Neo4j. The pages are written here, in the shape of such a corpus.

Before (explorer of session 27 on a real DBA corpus):
- a pasted MariaDB `ERROR 1040 (HY000): Too many connections` was answered with another
  engine's page, and "too many connections" showed one engine's page with nothing said of the
  other engine's page that fits it too;
- a page that only mentions the words beat the page about them: "mongodb oplog window too
  small" answered with the health check's page, "set max_connections online" found none;
- `--alert restart` over two pages named restart said of the one shown that its name "is the
  only tie", and `--alert mongodb/restart` answered "did you mean runbook:mongodb/restart?";
- a page with no steps section whose opening text is under the `#` title, every other heading
  `##`, ended its card with "the sections after it () are not shown".
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import import_runbooks_and_rules

TENANT = "dbas"
SUBJECT = f"{TENANT}/user:oncall"

POSTGRES_CONNECTIONS = """# Too many connections

PostgreSQL turns a new session away with "sorry, too many clients already" once every
connection slot is taken. Too many connections nearly always means a client pool that leaks.

## Steps

1. Count the sessions of each role in pg_stat_activity.
2. End the idle sessions of the role that leaks.
"""

MARIADB_CONNECTIONS = """# MariaDB connection limits

Who holds the connections of a MariaDB server, and how to raise its limit while it runs.

## Steps

1. List the connections of each account with the connection-usage task.
2. When clients get too many connections, raise max_connections with set-runtime-param.
"""


OPLOG = """# MongoDB oplog

The oplog is the capped collection every secondary replays. Its size sets the replication
window: how far behind a secondary may fall before it needs a full resync.

## Resize

1. Read each member's window with oplog/status.
2. Grow the oplog of every member with oplog/resize.

## Notes

A busy primary with a small oplog leaves its secondaries little time after maintenance.
"""

HEALTH_CHECK = """# Task: health-check (MongoDB)

Three layers of checks: the pods, the connection, the replica set's state.

## Thresholds

| Check | warn | crit |
|-------|------|------|
| Replication lag | 15s | 60s |

When the MongoDB oplog window is too small, the check fails until the uptime passes the
threshold.
"""

SET_PARAMETER = """# MariaDB set runtime parameter

Sets a MariaDB global variable online with SET GLOBAL, for example raising max_connections
when clients run out of connections. The change is gone after a restart.

## Steps

1. Run the task with the variable's name and its new value.
2. Check the value on every pod.
"""


def _restart(engine: str, unit: str) -> str:
    return (
        f"# Task: restart ({engine})\n\nRolling restart of the {engine} {unit}, one pod at a "
        "time, the primary last.\n\n## Input\n\nThe namespace and the cluster's name.\n\n"
        "## Output\n\nA JSON document with the pods restarted.\n"
    )


@pytest.fixture()
def corpus(tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke) -> Path:  # type: ignore[no-untyped-def]
    runbooks = {
        "docs/postgresql/too-many-connections.md": POSTGRES_CONNECTIONS,
        "docs/mariadb/connection-limits.md": MARIADB_CONNECTIONS,
        "docs/mariadb/restart.md": _restart("MariaDB", "StatefulSet"),
        "docs/mongodb/restart.md": _restart("MongoDB", "replica set"),
        "docs/mongodb/oplog.md": OPLOG,
        "docs/mongodb/health-check.md": HEALTH_CHECK,
        "docs/mariadb/set-runtime-parameter.md": SET_PARAMETER,
    }
    import_runbooks_and_rules(invoke, tmp_path, TENANT, runbooks=runbooks, folder="db-runbooks")
    return tmp_path


def _answer(invoke, *args: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("runbook", *args, "--subject", SUBJECT, "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def test_a_question_naming_an_engine_is_answered_from_that_engines_pages(  # type: ignore[no-untyped-def]
    corpus: Path, invoke
) -> None:
    # A pasted MariaDB error: MariaDB's page, the other engine's set aside and said so.
    pasted = _answer(invoke, "ERROR 1040 (HY000): Too many connections")
    assert pasted["runbook"]["id"] == "runbook:connection-limits", pasted["note"]
    assert (
        "the text names MariaDB/MySQL (its error 'ERROR 1040 (HY000)'): runbooks of other "
        "engines are set aside (runbook:too-many-connections (PostgreSQL))"
    ) in pasted["note"], pasted["note"]
    # The engine named by its name.
    named = _answer(invoke, "mariadb too many connections")
    assert named["runbook"]["id"] == "runbook:connection-limits", named["note"]
    assert "set aside (runbook:too-many-connections (PostgreSQL))" in named["note"]
    postgres = _answer(invoke, "postgres too many connections")
    assert postgres["runbook"]["id"] == "runbook:too-many-connections", postgres["note"]
    # On the card, the line a user reads.
    card = invoke("runbook", "ERROR 1040 (HY000): Too many connections", "--subject", SUBJECT)
    assert card.code == 0, card
    assert "Runbook   MariaDB connection limits  [runbook:connection-limits," in card.out, card.out


def test_a_question_naming_no_engine_says_the_other_engines_pages_that_fit(  # type: ignore[no-untyped-def]
    corpus: Path, invoke
) -> None:
    answer = _answer(invoke, "too many connections")
    assert answer["runbook"]["id"] == "runbook:too-many-connections", answer["note"]
    assert (
        "the text names no database engine, and runbooks of other engines fit it too "
        "(runbook:connection-limits (MariaDB/MySQL)): the card shows "
        "runbook:too-many-connections (PostgreSQL), the best ranked: name the engine to choose"
    ) in answer["note"], answer["note"]


def test_an_opening_text_under_the_title_names_the_sections_after_it(  # type: ignore[no-untyped-def]
    corpus: Path, invoke
) -> None:
    answer = _answer(invoke, "rolling restart of the MongoDB replica set")
    assert answer["runbook"]["id"] == "runbook:mongodb/restart", answer["note"]
    steps_note = answer["runbook"]["steps_note"]
    assert steps_note == (
        "the runbook has no section of steps: shown is its opening text, up to its next "
        "section; the sections after it (Input, Output) are not shown"
    ), steps_note
    card = invoke("runbook", "rolling restart of the MongoDB replica set", "--subject", SUBJECT)
    assert "()" not in card.out, card.out


def test_pages_named_alike_are_counted_and_a_path_finds_its_page(  # type: ignore[no-untyped-def]
    corpus: Path, invoke
) -> None:
    both = _answer(invoke, "--alert", "restart")
    assert both["runbook"]["id"] in ("runbook:mariadb/restart", "runbook:mongodb/restart")
    assert (
        "2 runbooks are named after it (runbook:mariadb/restart, runbook:mongodb/restart), and "
        "that name is their only tie"
    ) in both["note"], both["note"]
    assert "is the only tie" not in both["note"], both["note"]
    assert "(--alert mariadb/restart or --alert mongodb/restart)" in both["note"], both["note"]
    # The path the note gives finds its page, and is never suggested to itself.
    for engine in ("mariadb", "mongodb"):
        one = _answer(invoke, "--alert", f"{engine}/restart")
        assert one["runbook"]["id"] == f"runbook:{engine}/restart", one["note"]
        assert "did you mean" not in one["note"], one["note"]
        assert f"runbook:{engine}/restart has that path as its id" in one["note"], one["note"]
    # A path no page has: none matches, and the input is not offered back.
    none = _answer(invoke, "--alert", "redis/restart")
    assert none["runbook"] is None
    assert "runbook:redis/restart" not in none["note"], none["note"]
    assert "redis/restart?" not in none["note"], none["note"]


def test_the_page_about_the_words_outranks_a_page_that_mentions_them(  # type: ignore[no-untyped-def]
    corpus: Path, invoke
) -> None:
    # The health check's threshold line has the words together; the oplog page is about them.
    oplog = _answer(invoke, "mongodb oplog window too small")
    assert oplog["runbook"]["id"] == "runbook:oplog", oplog["note"]
    # Before: "no runbook fits ... not with its words together".
    online = invoke("runbook", "set max_connections online", "--subject", SUBJECT)
    assert online.code == 0, online
    assert online.out.startswith(
        "Runbook   MariaDB set runtime parameter  [runbook:set-runtime-parameter,"
    ), online.out
