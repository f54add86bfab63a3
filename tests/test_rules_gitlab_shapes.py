"""Rule files shaped as GitLab's generated ones (its runbooks repository): one alert name over
many rules of which one links a runbook, runbook links templated on a firing's labels or put
under `labels`, `Foo_BarBaz` names, and many recording rules. On a real Neo4j, through the CLI.

Before: `runbook --alert NAME` read 5 of the name's rules (in id order) and said "no runbook
is linked" when the linked rule was not among them; a templated link or a `labels.runbook`
was dropped without a word; `--alert db-connections-too-high` did not find
`Db_ConnectionsTooHigh`; and each recording rule had its own `skipped:` line.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
from conftest import import_runbooks_and_rules

WRAPAROUND = """# Transaction ID wraparound

## Resolution

Find and terminate any very old transactions first, then run a manual vacuum freeze.
"""

POSTGRES = """# Postgres troubleshooting

## Connections

Count the connections per user and raise max_connections only after checking the pooler.

## Long running transactions

Find the oldest transaction and ask its owner before cancelling it.
"""

CACHE = """# Cache overview

## Evictions

Check the memory limit and the largest keys before resizing the cache.
"""

_TEMPLATED = "docs/{{ $labels.type }}/README.md"


def _saturation_rule(position: int) -> str:
    # Rule 7 of 8 links its own page; the others a path templated on the firing's `type`.
    link = "docs/db/xid-wraparound.md" if position == 7 else _TEMPLATED
    return f"""      - alert: resource_saturation_out_of_bounds
        expr: saturation:ratio{{component="c{position}"}} > 0.9
        labels: {{severity: s4}}
        annotations:
          title: The c{position} resource of the {{{{ $labels.type }}}} service is saturated.
          runbook: {link}
"""


RULES = (
    """groups:
  - name: saturation
    rules:
      - record: saturation:ratio
        expr: max(x)
      - record: saturation:ratio
        expr: max(y)
      - record: slo:max:soft:saturation:ratio
        expr: vector(0.8)
      - record: slo:max:hard:saturation:ratio
        expr: vector(0.9)
      - record: saturation:ratio:avg_1h
        expr: avg_over_time(saturation:ratio[1h])
"""
    + "".join(_saturation_rule(n) for n in range(1, 9))
    + """  - name: cause
    rules:
      - alert: DbLongTransaction
        expr: pg_oldest_transaction_seconds > 600
        labels:
          severity: s3
          runbook: docs/db/postgres.md#long-running-transactions
        annotations:
          title: A transaction has been running for more than 10 minutes.
      - alert: Db_ConnectionsTooHigh
        expr: pg_connections > 400
        labels: {severity: s3}
        annotations:
          title: Too many connections.
          runbook: docs/db/postgres.md#connections
      - alert: CacheEvictions
        expr: rate(cache_evictions_total[5m]) > 10
        labels: {severity: s4, type: cache}
        annotations:
          title: The cache evicts keys.
          runbook: docs/{{ $labels.type }}/overview.md#evictions
"""
)

PAGES = {
    "docs/db/xid-wraparound.md": WRAPAROUND,
    "docs/db/postgres.md": POSTGRES,
    "docs/cache/overview.md": CACHE,
}
SUBJECT = ("--subject", "glco/user:oncall")


def _import(invoke, tmp_path: Path):  # type: ignore[no-untyped-def]
    return import_runbooks_and_rules(
        invoke, tmp_path, "glco", runbooks=PAGES, rules=RULES, folder="runbooks"
    )


def test_a_name_of_many_rules_finds_the_one_a_runbook_is_linked_to(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    _import(invoke, tmp_path)
    card = invoke("runbook", "--alert", "resource_saturation_out_of_bounds", *SUBJECT, "--json")
    assert card.code == 0, card
    answer = json.loads(card.out)
    note = answer["note"]
    # Before: "no runbook is linked to ...@1, ...@2, ...@3, ...@4, ...@5" (5 of 8 rules read).
    assert "no runbook is linked" not in note, note
    assert "8 alert rules are named resource_saturation_out_of_bounds" in note, note
    assert "resource_saturation_out_of_bounds@7" in note, note
    assert "runbook:xid-wraparound" in note, note
    assert "the other 7 link no runbook" in note, note
    assert "--alert resource_saturation_out_of_bounds@7" in note, note
    assert "alert:resource_saturation_out_of_bounds@7" in answer["resolved"], answer["resolved"]

    text = invoke("runbook", "--alert", "resource_saturation_out_of_bounds", *SUBJECT)
    assert "8 alert rules are named" in text.out + text.err, text


def test_templated_and_label_links_are_said_or_linked(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    rules = _import(invoke, tmp_path)
    # Before: the 7 templated links and the labels.runbook said nothing at all.
    assert (
        "ingest: unresolved: 7 rules name a templated runbook link (annotations.runbook "
        "'docs/{{ $labels.type }}/README.md', e.g. alert:resource_saturation_out_of_bounds@1): "
        "not linked (the alert's firing sets type, the rule's own labels do not)"
    ) in rules.err, rules.err
    assert (
        "ingest: linked: runbook:postgres APPLIES_TO alert:DbLongTransaction (labels.runbook)"
    ) in rules.err, rules.err
    # The rule's own labels set `type`: the template is filled, and linked.
    assert (
        "ingest: linked: runbook:overview APPLIES_TO alert:CacheEvictions (annotations.runbook)"
    ) in rules.err, rules.err

    card = invoke("runbook", "--alert", "DbLongTransaction", *SUBJECT, "--json")
    assert card.code == 0, card
    runbook = json.loads(card.out)["runbook"]
    assert runbook is not None and runbook["id"].startswith("runbook:postgres"), card.out
    assert runbook["steps_locator"].endswith("#long-running-transactions"), runbook

    card = invoke("runbook", "--alert", "resource_saturation_out_of_bounds@2", *SUBJECT, "--json")
    links = json.loads(card.out)["external_links"]
    assert [(x["url"], x["key"]) for x in links] == [(_TEMPLATED, "annotations.runbook")], links


def test_an_underscored_name_is_found_in_hyphenated_words(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    _import(invoke, tmp_path)
    for asked in ("db-connections-too-high", "db_connections_too_high", "DbConnectionsTooHigh"):
        card = invoke("runbook", "--alert", asked, *SUBJECT, "--json")
        assert card.code == 0, card
        answer = json.loads(card.out)
        # Before: "no alert matching 'db-connections-too-high' is visible ..."
        assert answer["runbook"] is not None, (asked, answer["note"])
        assert answer["resolved"] == ["alert:Db_ConnectionsTooHigh"], answer["resolved"]
        assert answer["runbook"]["steps_locator"].endswith("#connections"), answer["runbook"]


def test_recording_rules_are_one_counted_line(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    rules = _import(invoke, tmp_path)
    recording = [line for line in rules.err.splitlines() if "recording rule" in line]
    # Before: one `skipped: ...: recording rule saturation:ratio` line per rule (5).
    assert recording == [
        "ingest: skipped: 5 recording rules, not alerts (no runbook applies): saturation:ratio, "
        "slo:max:soft:saturation:ratio, slo:max:hard:saturation:ratio, "
        "saturation:ratio:avg_1h (4 series)"
    ], recording
