"""Big runbook pages in the shape of GitLab's (a DocToc table of contents, tool names as
hyphenated headings, a "Troubleshooting Pointers" list of links, a page with no steps
section), through the CLI on a real Neo4j, with the on-call's words.

Before (e26-gitlab findings 2, 3, 7): `investigate "RedisReplicasFlapping is firing, how do I
fix it?"` exited 2 at the default budget ("--budget-tokens 8000 is too small"); two headings
`### redis-memory-analyzer` and `#### client-output-buffer-limit` made the page "one section
per error code", so every card showed the table of contents and a free text's words chose no
section; a list of links was shown as steps with no note; a page with no steps section showed
its opening text run on into its next section ("Increase the node count", for PatroniIsDown).
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import import_runbooks_and_rules, investigate_json

TENANT = "gl"
SUBJECT = f"{TENANT}/user:oncall"


def _filler(topic: str, count: int) -> str:
    """`count` sections of notes on `topic`, written for these tests: a long page."""
    return "".join(
        f"### {topic} note {n} ###\n\n"
        + " ".join(
            f"The {topic} panel {n} row {k} shows the rate of sampled keys per second."
            for k in range(12)
        )
        + "\n\n"
        for n in range(count)
    )


REDIS = (
    """<!-- START doctoc generated TOC please keep comment here to allow auto update -->
**Table of Contents**  *generated with [DocToc](https://github.com/thlorenz/doctoc)*

- [Troubleshooting](#troubleshooting)
  - [How to get redis stats?](#how-to-get-redis-stats)
  - [redis-memory-analyzer](#redis-memory-analyzer)
- [Replication issues](#replication-issues)
<!-- END doctoc generated TOC please keep comment here to allow auto update -->

# Troubleshooting #

## How to get redis stats? ##

Run `redis-cli info stats` on the primary and compare `instantaneous_ops_per_sec`.

### redis-memory-analyzer ###

A tool that reads a dump and reports the memory used per key pattern.

"""
    + _filler("keyspace", 40)
    + """# Failover and Recovery procedures #

## Replication issues

### Possible checks ###

#### client-output-buffer-limit

Compare the replica's buffer limit with the primary's traffic.

## Replication flapping

### Possible fixes ###

1. Raise `client-output-buffer-limit` for replicas on the primary.
2. Restart the flapping replica's sync with `redis-cli replicaof`.
"""
)

PATRONI = """# Patroni

## About

Patroni keeps one PostgreSQL primary per cluster and fails over when it is lost.

## Scaling the cluster up

1. Increase the node count of `patroni` in terraform.
2. Apply the terraform and wait for chef to converge.

""" + _filler("replication", 40)

PGBOUNCER = """# Pgbouncer Service

## Troubleshooting Pointers

* [Interacting with Consul](../consul/interaction.md)
* [Patroni](../patroni/patroni-management.md)
* [Log analysis](../patroni/log_analysis.md)

## PgBouncer Commands

1. Connect with `pgb-console` and run `SHOW POOLS;`.
"""


def _rule(name: str, page: str, title: str) -> str:
    return (
        f"      - alert: {name}\n"
        "        expr: up == 0\n"
        "        labels: {severity: s2}\n"
        f"        annotations: {{title: '{title}', runbook: '{page}'}}\n"
    )


RULES = "groups:\n  - name: gl\n    rules:\n" + "".join(
    (
        _rule("RedisReplicasFlapping", "docs/redis/redis.md", "Redis replicas are flapping"),
        _rule("PatroniIsDown", "docs/patroni/patroni-management.md", "Patroni is down"),
        _rule("PGBouncerCannotProcess", "docs/pgbouncer/pgbouncer.md", "Pgbouncer is stuck"),
    )
)


@pytest.fixture()
def pages(tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke) -> Path:  # type: ignore[no-untyped-def]
    """The tenant's principal, the three pages (under docs/, as GitLab's) and their rules."""
    runbooks = {
        "docs/redis/redis.md": REDIS,
        "docs/patroni/patroni-management.md": PATRONI,
        "docs/pgbouncer/pgbouncer.md": PGBOUNCER,
    }
    result = import_runbooks_and_rules(
        invoke, tmp_path, TENANT, runbooks=runbooks, rules=RULES, folder="corpus"
    )
    assert result.err.count("ingest: linked: ") == 3, result.err
    return tmp_path


def _card(invoke, *args: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("runbook", *args, "--subject", SUBJECT, "--json")
    assert result.code == 0, result
    return json.loads(result.out)["runbook"]  # type: ignore[no-any-return]


def test_a_page_too_long_for_the_default_budget_answers_with_the_part_the_card_shows(  # type: ignore[no-untyped-def]
    pages: Path, invoke
) -> None:
    assert len(REDIS) > 4 * 8000 and len(PATRONI) > 4 * 8000  # neither fits the default
    for question in (
        "RedisReplicasFlapping is firing, how do I fix it?",
        "PatroniIsDown is firing, how do I fix it?",
        "redis replica sync keeps flapping, what do I do?",
    ):
        # No --budget-tokens: the default, which the whole page does not fit.
        answer = investigate_json(invoke, question, "--subject", SUBJECT)
        [runbook] = [ev for ev in answer["evidence"] if "runbook" in ev["evidence_types"]]
        assert "budget_cut" in runbook["transformations"], runbook
        assert len(runbook["content"]) < 4 * 8000
        [claim] = [c for c in answer["claims"] if c["statement"].startswith("Runbook ")]
        # What was cut, and how to read the rest.
        assert (
            "does not fit --budget-tokens: `investigator runbook` shows the card, a larger "
            "--budget-tokens reads it whole]"
        ) in claim["statement"], claim
        if question.startswith("PatroniIsDown"):
            # The opening text the card shows, not the next section's steps.
            assert runbook["content"].startswith("# Patroni\n\n## About\n"), runbook
            assert "Increase the node count" not in runbook["content"]
        replay = invoke("replay", answer["run_id"], "--subject", SUBJECT, "--json")
        assert replay.code == 0 and json.loads(replay.out)["verified"] is True, replay.out
    # The redis page's answer is the section its card shows, whole.
    redis = investigate_json(invoke, "RedisReplicasFlapping is firing", "--subject", SUBJECT)
    [runbook] = [ev for ev in redis["evidence"] if ev["element_id"] == "runbook:redis"]
    card = _card(invoke, "--alert", "RedisReplicasFlapping")
    assert (
        runbook["locator"]
        == card["steps_locator"]
        # `## Replication flapping`'s fixes: replicas and replication share a stem (h27-rules;
        # before, the whole `# Failover and Recovery procedures`).
        == ("docs/redis/redis.md#possible-fixes")
    )
    assert "redis-cli replicaof" in runbook["content"]
    # A budget that holds the page reads it whole, as before.
    whole = investigate_json(
        invoke, "RedisReplicasFlapping is firing", "--subject", SUBJECT, "--budget-tokens", "40000"
    )
    [runbook] = [ev for ev in whole["evidence"] if ev["element_id"] == "runbook:redis"]
    assert runbook["transformations"] == [] and runbook["content"].startswith("<!-- START")


def test_tool_names_as_hyphenated_headings_are_no_error_codes(  # type: ignore[no-untyped-def]
    pages: Path, invoke
) -> None:
    card = _card(invoke, "--alert", "RedisReplicasFlapping")
    # Not the table of contents, and no "sections headed by an error code".
    assert not any("DocToc" in line or "](#" in line for line in card["steps"]), card
    assert "error code" not in (card["steps_note"] or ""), card
    # Free text's words choose the section headed by them.
    stats = _card(invoke, "how do I get redis stats")
    assert stats["steps_locator"] == "docs/redis/redis.md#how-to-get-redis-stats", stats
    assert stats["steps"][0] == (
        "Run `redis-cli info stats` on the primary and compare `instantaneous_ops_per_sec`."
    )
    # A tool named by --error-code still shows its own section.
    tool = _card(invoke, "--error-code", "redis-memory-analyzer")
    assert tool["steps_locator"] == "docs/redis/redis.md#redis-memory-analyzer", tool


def test_a_list_of_links_and_an_opening_text_are_said_as_what_they_are(  # type: ignore[no-untyped-def]
    pages: Path, invoke
) -> None:
    links = _card(invoke, "--alert", "PGBouncerCannotProcess")
    assert links["steps_locator"] == "docs/pgbouncer/pgbouncer.md#troubleshooting-pointers"
    assert links["steps_note"] == (
        "the steps shown are a list of links to other pages (pointers), not steps: "
        "follow the one that applies"
    ), links
    patroni = _card(invoke, "--alert", "PatroniIsDown")
    # The opening text ends at the next section: no step of scaling the cluster up.
    assert patroni["steps"] == [
        "Patroni keeps one PostgreSQL primary per cluster and fails over when it is lost."
    ], patroni
    assert patroni["steps_note"] == (
        "the runbook has no section of steps: shown is its opening text, up to its next "
        "section; the sections after it (Scaling the cluster up) are not shown"
    ), patroni
