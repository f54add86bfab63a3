"""No id of a claim built on withheld content (docs/security.md rule 6).

A claim id is `claim:` + an unkeyed sha256 of the claim's statement, status and evidence ids
(investigator/claims/wording.py). An auditor without `incident` was shown `#79 claim claim:22c9...
[inference] [withheld]`: the statement withheld, its hash printed, so a guess of the statement
(severity, times, services) and of the withheld evidence's id (itself a hash of guessable
parts) was confirmed offline. Reproduced through the real CLI and the MCP server on the demo
dataset: alice (labels internal, incident, pii) asks the README's question; dave, an auditor
without `incident`, reads her run. Now a claim citing withheld evidence is shown by its place
in the run (`withheld#<seq>`) in every format, and the stored ids are unchanged.

The tests of this module share one graph and one recorded run, set up by the first of them.
"""

from __future__ import annotations

import json

import pytest
from conftest import alices_run_beside
from test_serving_mcp import ok, run_async, server_environ, stdio

from investigator.context_graph.lineage import RunLineage, load_lineage

QUESTION = (
    "Was the 10:02 release of payment-api related to the PAY-4097 errors? "
    "Who owned payment-api at that moment? Which runbook version applied?"
)
FORMATS = ("tree", "mermaid", "json", "prov-json")
DAVE = """\
tenant: acme
principals:
  - {id: user:dave, labels: [internal], purposes: [audit], source_id: src:iam,
     recorded_at: "2026-01-05T09:00:00Z"}
"""
AUDIT = ("--subject", "acme/user:dave", "--purpose", "audit")

_STATE: dict[str, str] = {}


@pytest.fixture()
def run_id(driver, cli_env, invoke, tmp_path_factory) -> str:  # type: ignore[no-untyped-def]
    """alice's recorded run (the graph and run are set up once for the module)."""
    if "run" not in _STATE:
        folder = tmp_path_factory.mktemp("dave")
        _STATE["run"] = alices_run_beside(driver, invoke, folder, DAVE, QUESTION)
    return _STATE["run"]


def _out(invoke, *args: str) -> str:  # type: ignore[no-untyped-def]
    """What a command prints, exit 0 and nothing on stderr."""
    result = invoke(*args)
    assert result.code == 0 and result.err == "", result
    return str(result.out)


def _claim_ids(lineage: RunLineage) -> dict[int, str]:
    """The stored claim id of each claim node, by its seq."""
    return {n.seq: str(n.properties["claim_id"]) for n in lineage.nodes if n.kind == "claim"}


def _withheld_claim_seqs(doc: dict) -> list[int]:  # type: ignore[type-arg]
    """The seqs of the claims whose statement `trace --json` withholds from its reader."""
    return [
        n["seq"]
        for n in doc["nodes"]
        if n["kind"] == "claim" and n["properties"]["statement"] == "[withheld]"
    ]


def test_an_auditor_is_shown_no_id_of_a_claim_built_on_withheld_evidence(  # type: ignore[no-untyped-def]
    run_id, invoke, driver
) -> None:
    stored = _claim_ids(load_lineage(driver, run_id))
    shown = {fmt: _out(invoke, "trace", run_id, *AUDIT, "--format", fmt) for fmt in FORMATS}
    shown["replay"] = _out(invoke, "replay", run_id, *AUDIT, "--json")
    shown["runs"] = _out(invoke, "runs", *AUDIT, "--json")
    doc = json.loads(shown["json"])
    withheld = _withheld_claim_seqs(doc)
    assert withheld, "dave is withheld some claim: the premise"
    for name, out in shown.items():
        for seq in withheld:
            assert stored[seq] not in out, (name, seq)
    # Shown by its place in the run, in each format, as a withheld evidence is.
    nodes = {n["seq"]: n for n in doc["nodes"]}
    prov = json.loads(shown["prov-json"])
    prov_ids = {
        e.get("inv:claim_id")
        for kind in ("entity", "activity")
        for e in prov.get(kind, {}).values()
    }
    for seq in withheld:
        assert nodes[seq]["properties"]["claim_id"] == f"withheld#{seq}"
        assert nodes[seq]["content"]["claim_id"] == f"withheld#{seq}"
        assert f"#{seq} claim withheld#{seq} [" in shown["tree"]
        assert f"seq {seq}: claim withheld#35;{seq} " in shown["mermaid"]
        assert f"withheld#{seq}" in prov_ids
    # A claim the reader may read keeps its id.
    readable = [seq for seq in stored if seq not in withheld]
    assert readable, "dave reads some claim: the premise"
    for seq in readable:
        assert nodes[seq]["properties"]["claim_id"] == stored[seq]
        assert f"#{seq} claim {stored[seq]} [" in shown["tree"]


def test_a_reader_entitled_to_everything_sees_every_claim_id_as_stored(  # type: ignore[no-untyped-def]
    run_id, invoke, driver
) -> None:
    stored = _claim_ids(load_lineage(driver, run_id))
    tree = _out(invoke, "trace", run_id, "--subject", "acme/user:alice")
    assert stored
    for seq, claim_id in stored.items():
        assert f"#{seq} claim {claim_id} [" in tree


def test_the_served_trace_shows_no_id_of_a_withheld_claim(  # type: ignore[no-untyped-def]
    run_id, driver, neo4j_settings
) -> None:
    # The MCP server's trace and replay tools answer what the CLI prints, re-filtered alike.
    stored = _claim_ids(load_lineage(driver, run_id))
    env = server_environ(("INVESTIGATOR_", "NEO4J_"))
    env.update(
        NEO4J_URI=neo4j_settings.uri,
        NEO4J_USER=neo4j_settings.user,
        NEO4J_PASSWORD=neo4j_settings.password.get_secret_value(),
    )
    served: dict[str, str] = {}

    async def main() -> None:
        async with stdio(env, *AUDIT) as client:
            for fmt in ("json", "prov-json"):
                doc = ok(await client.call_tool("trace", {"run_id": run_id, "format": fmt}))
                served[fmt] = json.dumps(doc)
            served["replay"] = json.dumps(ok(await client.call_tool("replay", {"run_id": run_id})))

    run_async(main)
    withheld = _withheld_claim_seqs(json.loads(served["json"]))
    assert withheld, "dave is withheld some claim: the premise"
    for name, out in served.items():
        for seq in withheld:
            assert stored[seq] not in out, (name, seq)
