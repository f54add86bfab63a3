"""`trace --format json|prov-json` shows nothing of evidence it withholds (docs/security.md rule 6).

A security tester found that the JSON formats printed the KG ids, locators, ACLs, sources,
times, redacted-view flags and scores of evidence the same output marked as withheld, and the
withheld incident's id in the plan, the tool-call parameters and other evidence's `context`.
The tree and Mermaid formats already withheld it. Reproduced through the real CLI on the demo
dataset: alice (labels internal, incident, pii) asks about the incident report; auditors
without `incident` (everything about the incident withheld, `acl`) or without `pii` (the
report withheld, `pii`) trace her run under `audit`. A reader entitled to everything sees
exactly the stored run, unfiltered.

An explorer then found the withheld evidence's id was itself an oracle: `ev:` + a hash of the
element id, version and text, so a guessed order number was confirmed offline from the printed
id. A withheld evidence is now `withheld#<seq>`, and no hash over its content is shown.

The tests of this module share one graph and one recorded run, set up by the first of them.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from conftest import alices_run_beside

from graph_schema.hashing import sha256_text
from investigator.context_graph.lineage import load_lineage
from investigator.context_graph.prov import prov_json
from investigator.context_graph.trace import render_mermaid, render_tree, trace_document
from investigator.evidence import evidence_id_for

QUESTION = "What does the incident report say about customers?"
FORMATS = ("tree", "mermaid", "json", "prov-json")
AUDITORS = """\
tenant: acme
principals:
  - {id: user:aud2, labels: [internal], purposes: [audit], source_id: src:iam,
     recorded_at: "2026-01-05T09:00:00Z"}
  - {id: user:aud3, labels: [internal, incident], purposes: [audit], source_id: src:iam,
     recorded_at: "2026-01-05T09:00:00Z"}
"""
INCIDENT = "inc:2026-07-23-payments"
REPORT = "doc:incident-report-2026-07-23-payments"
# What a withheld evidence node keeps in `trace --format json`: the chain's bookkeeping (its
# own hash as "[withheld]"), its masked evidence id and place in the run, and the reason.
KEPT = {
    "run_id", "kind", "seq", "ctx_id", "hash", "prev_hash", "prev_kind", "envelope", "model",
    "evidence_id", "tool_call_id", "tool_call_seq", "withheld",
}  # fmt: skip

_STATE: dict[str, str] = {}


@pytest.fixture()
def run_id(driver, cli_env, invoke, tmp_path_factory) -> str:  # type: ignore[no-untyped-def]
    """alice's recorded run (the graph and run are set up once for the module)."""
    if "run" not in _STATE:
        folder = tmp_path_factory.mktemp("auditors")
        _STATE["run"] = alices_run_beside(driver, invoke, folder, AUDITORS, QUESTION)
    return _STATE["run"]


def _trace(invoke, run: str, subject: str, fmt: str, *extra: str) -> str:  # type: ignore[no-untyped-def]
    result = invoke("trace", run, "--subject", subject, "--format", fmt, *extra)
    assert result.code == 0, result
    assert result.err == "", result
    return str(result.out)


def _dicts(value: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _recorded(invoke, run: str) -> dict[str, dict[str, Any]]:  # type: ignore[no-untyped-def]
    """alice's own view of her run: evidence id -> its recorded evidence (pack entry)."""
    doc = json.loads(_trace(invoke, run, "acme/user:alice", "json"))
    pack = next(n for n in doc["nodes"] if n["kind"] == "pack")
    return {e["evidence_id"]: e for e in pack["content"]["evidence"]}


@pytest.mark.parametrize(
    ("reader", "reason", "hidden_ids"),
    [
        ("acme/user:aud2", "acl", {INCIDENT, REPORT}),
        ("acme/user:aud3", "pii", {REPORT}),
    ],
)
def test_withheld_evidence_shows_no_metadata_in_any_format(  # type: ignore[no-untyped-def]
    run_id, invoke, reader: str, reason: str, hidden_ids: set[str]
) -> None:
    recorded = _recorded(invoke, run_id)
    stored = json.loads(_trace(invoke, run_id, "acme/user:alice", "json"))
    id_at = {n["seq"]: n["properties"]["evidence_id"] for n in stored["nodes"]
             if n["kind"] == "evidence"}  # fmt: skip
    doc = json.loads(_trace(invoke, run_id, reader, "json", "--purpose", "audit"))
    # Withheld evidence (a run may also hold withheld rejections: test_trace_withheld_rejections).
    masked = [
        n for n in doc["nodes"] if n["kind"] == "evidence" and n["properties"].get("withheld")
    ]
    # Each withheld evidence is shown by its place in the run, never by its evidence id.
    assert all(n["properties"]["evidence_id"] == f"withheld#{n['seq']}" for n in masked)
    withheld = {id_at[n["seq"]]: n for n in masked}
    assert withheld and {n["properties"]["withheld"] for n in withheld.values()} == {reason}
    shown = set(recorded) - set(withheld)
    assert shown, "the reader reads some of the run: the control that ids are masked, not all"
    hidden = {recorded[e]["element_id"] for e in withheld}
    hidden -= {recorded[e]["element_id"] for e in shown}
    assert hidden_ids <= hidden
    # The strings that must appear nowhere: the withheld elements' KG ids and locators.
    secrets = hidden | {recorded[e]["locator"] for e in withheld if recorded[e]["locator"]}
    # ... nor anything a guess of their text could be tested on: their evidence ids (the
    # explorer's oracle: recomputed here from the true text, as a right guess would be), the
    # chain hash of their nodes, the rows hash of the calls that read them, the pack's hash.
    for ev_id in withheld:
        ev = recorded[ev_id]
        guess = evidence_id_for(
            ev["element_id"], ev["version"], sha256_text(ev["content"]), ev["transformations"]
        )
        assert guess == ev_id  # the right guess, which the printed id confirmed before
    stored_nodes = {n["seq"]: n for n in stored["nodes"]}
    secrets |= set(withheld) | {stored_nodes[n["seq"]]["hash"] for n in masked}
    calls = {n["properties"]["tool_call_id"] for n in masked}
    reading = [n for n in stored["nodes"] if n["properties"].get("tool_call_id") in calls]
    secrets |= {n["properties"]["rows_hash"] for n in reading if n["kind"] == "tool_call"}
    secrets |= {n["properties"]["pack_hash"] for n in stored["nodes"] if n["kind"] == "pack"}
    outputs = {fmt: _trace(invoke, run_id, reader, fmt, "--purpose", "audit") for fmt in FORMATS}
    for fmt, out in outputs.items():
        for secret in secrets:
            assert secret not in out, (fmt, secret)
        assert not re.search(r'"has_redacted_view"\s*:\s*true', out), fmt
        assert "withheld" in out, fmt
    # tree: each withheld evidence with its mask and reason.
    for node in masked:
        assert f"evidence withheld#{node['seq']} [withheld: {reason}]\n" in outputs["tree"]
    # json: a withheld node keeps its mask, place in the run and reason, nothing else.
    for node in masked:
        assert set(node["properties"]) <= KEPT, set(node["properties"]) - KEPT
        assert node["content"] == {"withheld": reason} and node["hash"] == "[withheld]"
        assert node["properties"]["hash"] == "[withheld]"
    pack = next(n for n in doc["nodes"] if n["kind"] == "pack")
    masks = {n["properties"]["evidence_id"] for n in masked}
    entries = [e for e in pack["content"]["evidence"] if e["evidence_id"] in masks]
    assert entries and all(e == {"evidence_id": e["evidence_id"], "withheld": reason}
                           for e in entries)  # fmt: skip
    assert pack["properties"]["pack_hash"] == "[withheld]"
    # Claims cite a withheld evidence by the same mask, in their properties and content (the
    # incident's relationships are cited; the report, withheld for `pii`, is not).
    cited = {i for n in doc["nodes"] if n["kind"] == "claim"
             for i in n["properties"]["evidence_ids"] + n["content"]["evidence_ids"]}  # fmt: skip
    assert bool(cited & masks) == (reason == "acl")
    # No ACL naming a label the reader lacks, no source of a withheld element, anywhere.
    for item in _dicts(doc):
        if "acl" in item:
            assert set(item["acl"]) <= {"internal", "incident"} - (
                {"incident"} if reason == "acl" else set()
            ), item
    if reason == "acl":
        # The incident's id: gone from the plan, the tool call and the alert's context.
        plans = [n["content"] for n in doc["nodes"] if n["kind"] == "plan"]
        assert {"withheld": "acl"} in [e for p in plans for e in p["entities"]]
        calls = [n["content"] for n in doc["nodes"] if n["kind"] == "tool_call"]
        assert {"incident_id": "[withheld]"} in [c["params"] for c in calls]
    # The asker's question is the run's own metadata: shown as recorded, as the tree shows it.
    run = next(n for n in doc["nodes"] if n["kind"] == "run")
    assert run["properties"]["question"] == QUESTION
    assert QUESTION in outputs["tree"].splitlines()[0]
    # prov-json: a withheld entity carries its mask and reason only.
    prov = json.loads(outputs["prov-json"])
    for node in masked:
        entity = prov["entity"][f"ctx:evidence-{node['seq']}"]
        assert entity["inv:withheld"] == reason
        assert entity["inv:evidence_id"] == f"withheld#{node['seq']}"
        assert entity["inv:hash"] == "[withheld]"
        assert not {"inv:element_ids", "inv:source_id", "inv:source_version", "inv:locator",
                    "inv:content_hash"} & set(entity), entity  # fmt: skip


@pytest.mark.parametrize(
    "reader",
    [
        ("acme/user:alice",),
        ("acme/user:alice", "--purpose", "audit"),
        ("acme/user:auditor", "--purpose", "audit"),
    ],
)
def test_a_reader_entitled_to_everything_sees_the_stored_run_unchanged(  # type: ignore[no-untyped-def]
    run_id, invoke, driver, reader: tuple[str, ...]
) -> None:
    stored = load_lineage(driver, run_id)
    expected = {
        "tree": render_tree(stored),
        "mermaid": render_mermaid(stored),
        # Checked against its anchor and verified: marked so (docs/context-graph.md).
        "json": trace_document(stored, None, []).model_dump_json(),
        "prov-json": prov_json(stored, []),
    }
    subject, *extra = reader
    for fmt in FORMATS:
        out = _trace(invoke, run_id, subject, fmt, *extra)
        assert out == expected[fmt] + "\n", fmt
        if fmt in ("json", "prov-json"):  # the ids masked for the auditors are all there
            assert INCIDENT in out and REPORT in out, fmt
