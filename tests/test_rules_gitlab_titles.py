"""Rules that page with GitLab's `title` annotation (no `summary`), read as a hurried on-call
reads them: the title pasted, the alert name typed hyphenated, a section heading that says
"replication" for an alert named "replicas". On a real Neo4j, through the CLI.

Before: a pasted title matched no rule of a name shared by many rules ("no runbook fits"),
and `investigate` cited the runbook "found by the words of the question alone"; an alert
named `KvReplicasFlapping` did not reach the page's `## Replication flapping` section (the
stems `replica` and `replic` differed), nor did its pasted title or its words (the section
was looked for under the rule's id, `KvReplicasFlapping@s1`, no heading's name).
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

# A long page of procedures, none headed by an alert's name (GitLab's redis.md).
KV = (
    """# Troubleshooting

## Is kv running?

Check the process list and the service status on the host.

"""
    + "".join(
        f"## Panel {n}\n\n"
        + " ".join(f"Panel {n} row {k} plots sampled keys." for k in range(40))
        + "\n\n"
        for n in range(40)
    )
    + """# Failover and recovery procedures

## Accessing the kv console

Open the console on the primary and never run KEYS on it.

## Replication issues

### Resolution

Restart the secondary that lags and watch its offset catch up.

## Replication flapping

### Possible causes

A secondary loses its connection to the primary and reconnects in a loop.

### Possible fixes

Raise the client output buffer limit on the primary, then revert it once stable.

## Kv is down

Start the service and page the database team if it does not come back.
"""
)

# What tells the saturation rules apart, GitLab's resources: rule 7 is the linked one.
RESOURCES = (
    "Disk Space",
    "Memory",
    "CPU",
    "Open Files",
    "Connection Pool",
    "Disk IOPS",
    "Transaction ID Wraparound",
    "Autovacuum Activity",
)


def _saturation_rule(position: int, resource: str) -> str:
    link = "docs/db/xid-wraparound.md" if position == 7 else "docs/{{ $labels.type }}/README.md"
    return f"""      - alert: component_saturation_out_of_bounds
        expr: saturation:ratio{{component="c{position}"}} > 0.9
        labels: {{severity: s{1 if position == 7 else 3}}}
        annotations:
          title: The {resource} resource of the {{{{ $labels.type }}}} service ({{{{
            $labels.stage }}}} stage) has a saturation exceeding SLO and is close to its
            capacity limit.
          description: Details of the {resource} resource.
          runbook: {link}
"""


RULES = (
    """groups:
  - name: saturation
    rules:
"""
    + "".join(_saturation_rule(n, r) for n, r in enumerate(RESOURCES, start=1))
    + """  - name: kv
    rules:
      - alert: KvReplicasFlapping
        expr: changes(kv_connected_secondaries[5m]) > 2
        labels: {severity: s4}
        annotations:
          title: Connection of kv replicas to the primary is flapping
          runbook: docs/kv/kv.md
      - alert: KvReplicasFlapping
        expr: changes(kv_connected_secondaries[1h]) > 4
        labels: {severity: s1}
        annotations:
          title: Connection of kv replicas to the primary is flapping
          runbook: docs/kv/kv.md
      - alert: KvDown
        expr: kv_up == 0
        labels: {severity: s1}
        annotations:
          title: The kv primary is down
          runbook: docs/kv/kv.md
"""
)

PAGES = {"docs/db/xid-wraparound.md": WRAPAROUND, "docs/kv/kv.md": KV}
SUBJECT = ("--subject", "glco/user:oncall")
# Rule 7's title as the page shows it, Alertmanager having filled in the labels.
PASTED = (
    "The Transaction ID Wraparound resource of the patroni service (main stage) has a "
    "saturation exceeding SLO and is close to its capacity limit."
)


def _import(invoke, tmp_path: Path):  # type: ignore[no-untyped-def]
    return import_runbooks_and_rules(
        invoke, tmp_path, "glco", runbooks=PAGES, rules=RULES, folder="runbooks"
    )


def test_a_pasted_title_leads_to_its_rule_then_its_runbook(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    _import(invoke, tmp_path)
    for pasted in (PASTED, f"[FIRING:1] component_saturation_out_of_bounds {PASTED}"):
        card = invoke("runbook", pasted, *SUBJECT, "--json")
        assert card.code == 0, card
        answer = json.loads(card.out)
        # Before: "No runbook: no runbook fits: the closest, runbook:xid-wraparound, covers
        # ...% of the query but ... nor has an alert whose text matches it".
        assert answer["runbook"] is not None, answer["note"]
        assert answer["runbook"]["id"].startswith("runbook:xid-wraparound"), answer["runbook"]
        best = answer["text_matches"][0]
        assert best["matched_alert"] == "alert:component_saturation_out_of_bounds@s1", best
        assert best["fits_by"] == "alert", best

    # Another resource's title leads to no runbook of its own, and not to rule 7's.
    other = PASTED.replace("Transaction ID Wraparound", "Open Files")
    card = json.loads(invoke("runbook", other, *SUBJECT, "--json").out)
    assert card["runbook"] is None or not card["runbook"]["id"].startswith(
        "runbook:xid-wraparound"
    ), card

    # investigate: through the alert, a fact, not the runbook search's guess.
    result = invoke("investigate", f"{PASTED} What do I do?", *SUBJECT, "--json")
    assert result.code == 0, result
    report = json.loads(result.out)
    [claim] = [c for c in report["claims"] if "runbook:xid-wraparound" in c["statement"]]
    assert claim["epistemic_status"] == "fact", claim
    assert "words of the question alone" not in claim["statement"], claim


def test_replicas_reach_the_replication_section(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    _import(invoke, tmp_path)
    asked = [
        ("--alert", "KvReplicasFlapping"),
        ("--alert", "kv-replicas-flapping"),
        ("kv replicas flapping",),
        ("Connection of kv replicas to the primary is flapping",),
    ]
    for words in asked:
        card = invoke("runbook", *words, *SUBJECT, "--json")
        assert card.code == 0, card
        runbook = json.loads(card.out)["runbook"]
        assert runbook is not None, (words, card.out)
        # Before: the opening section's steps ("Check the process list ...") or the first
        # procedure's, never those of `## Replication flapping`.
        assert runbook["steps_locator"] == "docs/kv/kv.md#possible-fixes", (words, runbook)
        assert any("client output buffer" in line for line in runbook["steps"]), runbook

    # The words of another section still choose that one.
    card = json.loads(invoke("runbook", "kv is down", *SUBJECT, "--json").out)
    assert card["runbook"]["steps_locator"] == "docs/kv/kv.md#kv-is-down", card["runbook"]


def test_two_alerts_of_a_big_page_are_each_answered_from_their_own_section(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    _import(invoke, tmp_path)
    assert len(KV) > 4 * 8000  # the page does not fit the default budget
    question = "KvReplicasFlapping and KvDown are firing, what do I do?"
    result = invoke("investigate", question, *SUBJECT, "--json")
    assert result.code == 0, result
    answer = json.loads(result.out)
    [runbook] = [ev for ev in answer["evidence"] if ev["element_id"] == "runbook:kv"]
    # Before: the first alert's section only ("Raise the client output buffer ..."), the
    # second alert's steps nowhere in the run.
    assert "client output buffer" in runbook["content"], runbook["content"]
    assert "Start the service" in runbook["content"], runbook["content"]
    assert "Panel 3 row" not in runbook["content"]
    assert runbook["props"]["budget_cut"]["parts"] == [
        "docs/kv/kv.md#possible-fixes",
        "docs/kv/kv.md#kv-is-down",
    ], runbook["props"]
    [claim] = [c for c in answer["claims"] if c["statement"].startswith("Runbook ")]
    assert (
        "the sections the card shows for each alert asked (#possible-fixes, #kv-is-down)"
    ) in claim["statement"], claim
    replay = invoke("replay", answer["run_id"], *SUBJECT, "--json")
    assert replay.code == 0 and json.loads(replay.out)["verified"] is True, replay.out

    # One alert asked: its section only, as before.
    one = json.loads(invoke("investigate", "KvDown is firing", *SUBJECT, "--json").out)
    [runbook] = [ev for ev in one["evidence"] if ev["element_id"] == "runbook:kv"]
    assert "Start the service" in runbook["content"], runbook["content"]
    assert "client output buffer" not in runbook["content"], runbook["content"]
