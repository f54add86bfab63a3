"""The audit surface holds the templates' rules (docs/context-graph.md, docs/security.md
rules 5 and 6), through the real CLI on the real server.

alice records a run about a service (svc:intake); auditors and alice read it back after:
- a record one of its calls read and did not keep is relabelled: the call's `rows_hash`
  covers a row no reader may read now, so it is withheld like a hash after withheld content;
- a withheld evidence node says `[withheld]` for its own hash, as every later node does;
- alice is retracted and never written again: replay refuses in one line, exit 3, saying
  who, why and what works; written again, the refusal's hint names what works for replay.

The tests of this module share one graph and one recorded run, in the order written.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest
from conftest import alices_run_beside

from investigator.context_graph.lineage import load_lineage

QUESTION = "What does the incident report say about customers?"
AUDITORS = """\
tenant: acme
principals:
  - {id: user:aud3, labels: [internal, incident, pii], purposes: [audit], source_id: src:iam,
     recorded_at: "2026-01-05T09:00:00Z"}
  - {id: user:aud2, labels: [internal], purposes: [audit], source_id: src:iam,
     recorded_at: "2026-01-05T09:00:00Z"}
nodes:
  - {id: svc:intake, label: Service, name: intake-gateway, acl: [internal],
     source_id: src:service-catalog, locator: "catalog/acme.yaml#svc:intake",
     valid_from: "2025-01-01T00:00:00Z", recorded_at: "2026-01-05T09:00:00Z"}
"""
# The record alice's run reads (resolving the service it is asked about) and keeps no record
# of, relabelled by the test, as the catalog would write it.
RELABELLED = """\
tenant: acme
nodes:
  - {id: svc:intake, label: Service, name: intake-gateway, acl: [legal-hold],
     source_id: src:service-catalog, locator: "catalog/acme.yaml#svc:intake",
     valid_from: "2025-01-01T00:00:00Z"}
"""
AUDIT = ("--purpose", "audit")
ALICE = "acme/user:alice"
_STATE: dict[str, str] = {}


@pytest.fixture()
def run_id(driver, cli_env, invoke, tmp_path_factory) -> str:  # type: ignore[no-untyped-def]
    """alice's recorded run (the graph and run are set up once for the module)."""
    if "run" not in _STATE:
        folder = tmp_path_factory.mktemp("auditors")
        _STATE["run"] = alices_run_beside(
            driver, invoke, folder, AUDITORS, QUESTION, service="svc:intake"
        )
    return _STATE["run"]


def _trace_json(invoke, run: str, *who: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    res = invoke("trace", run, "--subject", *who, "--json")
    assert res.code == 0, res
    return json.loads(res.out)  # type: ignore[no-any-return]


def _unkept_calls(driver, run: str) -> dict[int, str]:  # type: ignore[no-untyped-def]
    """seq -> rows hash of each call that read rows the run did not keep."""
    lineage = load_lineage(driver, run)
    kept: dict[str, int] = {}
    for node in [n for n in lineage.nodes if n.kind in ("evidence", "rejection")]:
        call = str(node.properties["tool_call_id"])
        kept[call] = kept.get(call, 0) + 1
    return {
        n.seq: str(n.properties["rows_hash"])
        for n in lineage.nodes
        if n.kind == "tool_call"
        and n.properties["row_count"] > kept.get(str(n.properties["tool_call_id"]), 0)
    }


def test_a_withheld_evidence_node_says_withheld_for_its_own_hash_as_later_nodes_do(  # type: ignore[no-untyped-def]
    run_id, invoke
) -> None:
    # aud2 lacks `incident`: the incident's evidence is withheld (before: its `hash` was null
    # while every later node read "[withheld]").
    doc = _trace_json(invoke, run_id, "acme/user:aud2", *AUDIT)
    withheld = [n for n in doc["nodes"] if n["properties"].get("withheld")]
    assert withheld, "the premise: aud2 is withheld some evidence"
    for node in withheld:
        assert node["hash"] == "[withheld]", node
        assert node["properties"]["hash"] == "[withheld]", node
    start = doc["hashes_withheld_from"]
    assert all(n["hash"] == "[withheld]" for n in doc["nodes"] if n["seq"] >= start)
    assert None not in {n["hash"] for n in doc["nodes"]}


def _call_lines(tree: str, calls: dict[str, int]) -> dict[str, str]:
    """tool call id -> its line in a trace tree."""
    lines = {}
    for line in tree.splitlines():
        words = line.split()
        if "tool_call" in words and words[words.index("tool_call") + 1] in calls:
            lines[words[words.index("tool_call") + 1]] = line
    assert set(lines) == set(calls), (tree, calls)
    return lines


def _counted_calls(driver, run: str) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """tool call id -> row count of each call that read rows the run did not keep."""
    lineage = load_lineage(driver, run)
    unkept = _unkept_calls(driver, run)
    return {
        str(n.properties["tool_call_id"]): int(n.properties["row_count"])
        for n in lineage.nodes
        if n.seq in unkept
    }


def test_a_row_count_over_rows_the_reader_may_not_read_is_withheld(  # type: ignore[no-untyped-def]
    run_id, invoke, driver
) -> None:
    """An explorer's finding: `trace` printed `rows=N` on a call whose rows the reader may
    not read (its rows hash withheld): a count is information too (how many rows the reader
    is not shown). It is withheld where the rows hash is, in every format; a reader shown the
    whole run that reads those rows now is shown it as recorded."""
    calls = _counted_calls(driver, run_id)
    assert calls and any(n > 0 for n in calls.values()), "the premise: calls with unkept rows"
    # aud3 holds every label alice's run read: the counts, as recorded.
    tree = invoke("trace", run_id, "--subject", "acme/user:aud3", *AUDIT)
    assert tree.code == 0, tree
    for call, line in _call_lines(tree.out, calls).items():
        assert f" rows={calls[call]} " in line, line
    # aud2 lacks `incident`: withheld some evidence, it is not shown these calls' counts.
    who = ("acme/user:aud2", *AUDIT)
    tree = invoke("trace", run_id, "--subject", *who)
    assert tree.code == 0, tree
    for line in _call_lines(tree.out, calls).values():
        assert " rows=[withheld] " in line and "truncated" not in line, line
    doc = _trace_json(invoke, run_id, *who)
    shown = {n["properties"].get("tool_call_id"): n["properties"] for n in doc["nodes"]}
    for call in calls:
        assert shown[call]["row_count"] == "[withheld]", shown[call]
        assert shown[call]["rows_hash"] == "[withheld]", shown[call]
    mermaid = invoke("trace", run_id, "--subject", *who, "--format", "mermaid")
    for call in calls:
        (box,) = [line for line in mermaid.out.splitlines() if f"tool_call {call} " in line]
        assert "rows=#91;withheld#93;" in box, box  # mermaid escapes the brackets
    prov = json.loads(invoke("trace", run_id, "--subject", *who, "--format", "prov-json").out)
    activities = [a for a in prov["activity"].values() if a.get("inv:tool_call_id") in calls]
    assert len(activities) == len(calls), prov["activity"]
    assert all(a["inv:row_count"] == "[withheld]" for a in activities), activities


def test_a_rows_hash_over_a_row_relabelled_since_is_withheld_from_every_reader(  # type: ignore[no-untyped-def]
    run_id, invoke, driver, tmp_path
) -> None:
    unkept = _unkept_calls(driver, run_id)
    assert unkept, "the premise: a call read rows the run did not keep"
    # Before the relabel, alice and aud3 (all of alice's labels) are shown the whole run.
    for who in ((ALICE,), ("acme/user:aud3", *AUDIT)):
        doc = _trace_json(invoke, run_id, *who)
        assert doc["hashes_withheld_from"] is None, who
        shown = {n["seq"]: n["properties"].get("rows_hash") for n in doc["nodes"]}
        assert all(shown[seq] == h for seq, h in unkept.items()), who
    (tmp_path / "relabel.yaml").write_text(RELABELLED)
    assert invoke("ingest", str(tmp_path / "relabel.yaml")).code == 0
    for who in ((ALICE,), ("acme/user:aud3", *AUDIT)):
        doc = _trace_json(invoke, run_id, *who)
        # Nothing recorded is withheld, but a call read a row no one may read now.
        assert not [n for n in doc["nodes"] if n["properties"].get("withheld")], who
        start = doc["hashes_withheld_from"]
        assert isinstance(start, int) and start <= min(unkept), (who, start)
        # No format shows a rows hash over the row (nor any chain hash after it): before,
        # every reader was shown them, and the tree its head.
        prov = invoke("trace", run_id, "--subject", *who, "--format", "prov-json")
        tree = invoke("trace", run_id, "--subject", *who)
        assert tree.code == 0 and prov.code == 0, (tree, prov)
        for shown in (json.dumps(doc), prov.out, tree.out):
            assert not [h for h in unkept.values() if h in shown], who
        assert tree.out.splitlines()[-1].endswith(
            f"hashes from #{start} on withheld: they chain over content withheld from you)"
        ), tree.out
        # Nor how many rows those calls read (a count of rows no one may read now).
        calls = _counted_calls(driver, run_id)
        for line in _call_lines(tree.out, calls).values():
            assert " rows=[withheld] " in line, (who, line)


def test_replay_of_a_retracted_principals_run_is_refused_in_one_line(  # type: ignore[no-untyped-def]
    run_id, invoke, tmp_path
) -> None:
    at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    retraction = f'tenant: acme\nretractions:\n  - {{id: user:alice, reason: left, at: "{at}"}}\n'
    (tmp_path / "retract.yaml").write_text(retraction)
    assert invoke("ingest", str(tmp_path / "retract.yaml")).code == 0
    # Before: `subject_unavailable` drift, exit 1 (as if the run were not reproduced).
    res = invoke("replay", run_id, "--subject", "acme/user:aud3", *AUDIT)
    assert res.code == 3 and res.out == "", res
    (line,) = res.err.splitlines()
    assert f"{ALICE} was retracted 20" in line and "holds no grants now" in line, line
    # What the line names works as pasted: with the subject typed (before, `--subject` was
    # dropped, and with no default subject set `trace` said "error: no subject").
    assert _hinted(line) == [
        ["trace", run_id, "--subject", "acme/user:aud3", *AUDIT],
        ["verify", run_id, "--subject", "acme/user:aud3", *AUDIT],
    ], line
    for command in _hinted(line):
        assert invoke(*command).code == 0, command


def _hinted(line: str) -> list[list[str]]:
    """The `investigator ...` commands a refusal line hints, as argument lists."""
    return [c.split()[1:] for c in re.findall(r"`(investigator [^`]+)`", line)]


def test_a_re_created_principals_hint_names_what_works_for_replay(  # type: ignore[no-untyped-def]
    run_id, invoke, tmp_path
) -> None:
    (tmp_path / "alice-new.yaml").write_text(
        "tenant: acme\nprincipals:\n  - {id: user:alice, labels: [internal], "
        "purposes: [incident_investigation, audit], source_id: src:iam}\n"
    )
    assert invoke("ingest", str(tmp_path / "alice-new.yaml")).code == 0
    res = invoke("replay", run_id, "--subject", ALICE)
    assert res.code == 3 and res.out == "", res
    # Before: "reads it only with --purpose audit", which replay then refused too.
    assert "reads it only with --purpose audit" not in res.err, res
    assert invoke("replay", run_id, "--subject", ALICE, *AUDIT).code == 3
    # The hint's commands work for the new holder, as pasted (the subject typed in them).
    assert _hinted(res.err) == [
        ["trace", run_id, "--subject", ALICE, *AUDIT],
        ["verify", run_id, "--subject", ALICE, *AUDIT],
    ], res.err
    for command in _hinted(res.err):
        assert invoke(*command).code == 0, command
    # trace and runs of its own follow the incarnation rule: none of the earlier holder's.
    assert invoke("trace", run_id, "--subject", ALICE).code == 3
    listed = invoke("runs", "--subject", ALICE, "--json")
    assert listed.code == 0 and run_id not in listed.out, listed
