"""No chain hash after withheld content (docs/security.md rule 6, docs/context-graph.md).

Each recorded node's `hash` covers the one before it (`prev_hash`), so once a node is
withheld, the hash of the next node (and every one after it, and the run's `head_hash`) is a
function of the withheld node's recorded payload and of what the reader sees. A reader who
guessed that payload exactly (text, times, ranks, scores) confirmed the guess offline by
recomputing the next node's hash and finding it printed. Reproduced through the real CLI on
the demo dataset: alice (labels internal, incident, pii) asks about the incident report; an
auditor without `pii` (aud3), one without `incident` (aud2), and alice herself once `pii` is
revoked read her run. Now none of them is shown a chain hash from the first node it is
shown altered on, in any format, nor in `runs --json`, `replay` or `verify`; the tree says
so in one line, and the chain is still verified (on the stored run).

The tests of this module share one graph and one recorded run, set up by the first of them;
the last one revokes alice's `pii`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from conftest import alices_run_beside
from test_serving_mcp import ok, run_async, server_environ, stdio

from investigator.context_graph.chain import node_hash
from investigator.context_graph.lineage import load_lineage

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
AUDIT = ("--purpose", "audit")

_STATE: dict[str, str] = {}


@pytest.fixture()
def run_id(driver, cli_env, invoke, tmp_path_factory) -> str:  # type: ignore[no-untyped-def]
    """alice's recorded run (the graph and run are set up once for the module)."""
    if "run" not in _STATE:
        folder = tmp_path_factory.mktemp("auditors")
        _STATE["run"] = alices_run_beside(driver, invoke, folder, AUDITORS, QUESTION)
    return _STATE["run"]


def _out(invoke, *args: str, code: int = 0) -> str:  # type: ignore[no-untyped-def]
    """What a command prints, stderr too (the exit code checked)."""
    result = invoke(*args)
    assert result.code == code, result
    assert code != 0 or result.err == "", result
    return str(result.out) + str(result.err)


def _outputs(invoke, run: str, subject: str, *extra: str, replay: int = 0) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Everything `subject` is shown of run `run`: each trace format, replay (exiting
    `replay`), verify, runs."""
    shown = {
        fmt: _out(invoke, "trace", run, "--subject", subject, "--format", fmt, *extra)
        for fmt in FORMATS
    }
    shown["replay"] = _out(
        invoke, "replay", run, "--subject", subject, "--json", *extra, code=replay
    )
    shown["verify"] = _out(invoke, "verify", run, "--subject", subject, "--json", *extra)
    shown["runs"] = _out(invoke, "runs", "--subject", subject, "--json", *extra)
    return shown


def _guess_confirms(stored: dict[int, Any], seq: int) -> str:
    """The attack: the withheld node at `seq` guessed exactly (here: its stored properties,
    as a right guess would be), chained into the next node as the reader would recompute
    it. Returns the hash the guess predicts for the next node."""
    guessed = dict(stored[seq].properties)
    follower = dict(stored[seq + 1].properties)
    follower["prev_hash"] = node_hash(guessed, stored[seq].kind)
    return node_hash(follower, stored[seq + 1].kind)


@pytest.mark.parametrize(
    ("reader", "reason"), [("acme/user:aud3", "pii"), ("acme/user:aud2", "acl")]
)
def test_a_guessed_withheld_payload_cannot_be_confirmed_on_a_later_hash(  # type: ignore[no-untyped-def]
    run_id, invoke, driver, reader: str, reason: str
) -> None:
    lineage = load_lineage(driver, run_id)
    stored = {n.seq: n for n in lineage.nodes}
    head = stored[0].properties["head_hash"]
    shown = _outputs(invoke, run_id, reader, *AUDIT)
    doc = json.loads(shown["json"])
    withheld = [n["seq"] for n in doc["nodes"] if n["properties"].get("withheld") == reason]
    assert withheld, "the reader is withheld some evidence: the premise"
    first = withheld[0]
    # The right guess predicts the next node's recorded hash: printed, it confirmed the guess.
    predicted = _guess_confirms(stored, first)
    assert predicted == stored[first + 1].properties["hash"]
    # No chain hash from the first node shown altered on (at or before the withheld one), nor
    # the run's head, in any format, replay, verify or the run listing.
    start = doc["hashes_withheld_from"]
    assert isinstance(start, int) and start <= first
    secrets = {predicted, head} | {n.properties["hash"] for n in lineage.nodes if n.seq >= start}
    for name, out in shown.items():
        for secret in secrets:
            assert secret not in out, (name, secret)
    # The hashes before it are shown as recorded: the reader can still anchor its part.
    for node in doc["nodes"]:
        if node["seq"] < start:
            assert node["hash"] == stored[node["seq"]].properties["hash"], node["seq"]
    # Said in one line of the tree; the verdict is the stored run's, still verified.
    assert shown["tree"].splitlines()[-1] == (
        f"chain: valid ({len(stored)} nodes; hashes from #{start} on withheld: "
        "they chain over content withheld from you)"
    )
    assert doc["chain_valid"] is True and doc["verified"] is True
    assert json.loads(shown["verify"])["verified"] is True
    assert json.loads(shown["replay"])["chain_valid"] is True
    prov = json.loads(shown["prov-json"])
    (run_activity,) = [a for a in prov["activity"].values() if a.get("inv:kind") == "run"]
    assert run_activity["inv:hashes_withheld_from"] == {"$": str(start), "type": "xsd:int"}


def test_the_rows_hash_of_a_call_that_kept_no_record_of_its_rows_is_withheld(  # type: ignore[no-untyped-def]
    run_id, invoke, driver
) -> None:
    # A call's rows hash covers every row it read; a call that kept no record of some rows
    # (entity resolution, the dependency neighbourhood) cannot be checked row by row, so a
    # reader shown less than the whole run is not shown it.
    lineage = load_lineage(driver, run_id)
    kept: dict[str, int] = {}
    for node in lineage.nodes:
        if node.kind in ("evidence", "rejection"):
            call = str(node.properties["tool_call_id"])
            kept[call] = kept.get(call, 0) + 1
    unkept = {
        n.properties["rows_hash"]
        for n in lineage.nodes
        if n.kind == "tool_call"
        and n.properties["row_count"] > kept.get(str(n.properties["tool_call_id"]), 0)
    }
    assert unkept, "the run has such a call: the premise"
    for reader in ("acme/user:aud2", "acme/user:aud3"):
        for name, out in _outputs(invoke, run_id, reader, *AUDIT).items():
            for secret in unkept:
                assert secret not in out, (reader, name, secret)
    # A reader shown the whole run sees every hash as recorded, the head in the tree too.
    own = _outputs(invoke, run_id, "acme/user:alice")
    assert unkept <= {n["properties"].get("rows_hash") for n in json.loads(own["json"])["nodes"]}
    assert json.loads(own["json"])["hashes_withheld_from"] is None
    head = lineage.run_properties["head_hash"]  # type: ignore[index]
    assert own["tree"].splitlines()[-1] == f"chain: valid ({len(lineage.nodes)} nodes, head {head})"


def test_the_served_tools_show_no_hash_after_withheld_content(  # type: ignore[no-untyped-def]
    run_id, driver, neo4j_settings
) -> None:
    # The MCP server's trace and replay tools answer what the CLI prints, re-filtered alike.
    lineage = load_lineage(driver, run_id)
    stored = {n.seq: n for n in lineage.nodes}
    env = server_environ(("INVESTIGATOR_", "NEO4J_"))
    env.update(
        NEO4J_URI=neo4j_settings.uri,
        NEO4J_USER=neo4j_settings.user,
        NEO4J_PASSWORD=neo4j_settings.password.get_secret_value(),
    )
    served: dict[str, str] = {}

    async def main() -> None:
        async with stdio(env, "--subject", "acme/user:aud3", "--purpose", "audit") as client:
            for fmt in ("json", "prov-json"):
                doc = ok(await client.call_tool("trace", {"run_id": run_id, "format": fmt}))
                served[fmt] = json.dumps(doc)
            served["replay"] = json.dumps(ok(await client.call_tool("replay", {"run_id": run_id})))

    run_async(main)
    doc = json.loads(served["json"])
    start = doc["hashes_withheld_from"]
    first = next(n["seq"] for n in doc["nodes"] if n["properties"].get("withheld") == "pii")
    secrets = {_guess_confirms(stored, first), stored[0].properties["head_hash"]}
    secrets |= {n.properties["hash"] for n in lineage.nodes if n.seq >= start}
    for name, out in served.items():
        for secret in secrets:
            assert secret not in out, (name, secret)


def test_a_subject_whose_pii_was_revoked_reads_no_hash_after_its_withheld_report(  # type: ignore[no-untyped-def]
    run_id, invoke, driver, tmp_path
) -> None:
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    (tmp_path / "revoke.yaml").write_text(
        "tenant: acme\nprincipals:\n"
        "  - {id: user:alice, name: Alice (payments on-call), labels: [internal, incident], "
        "purposes: [incident_investigation, audit], source_id: src:iam, "
        f'recorded_at: "{now}"}}\n'
    )
    assert invoke("ingest", str(tmp_path / "revoke.yaml")).code == 0
    lineage = load_lineage(driver, run_id)
    stored = {n.seq: n for n in lineage.nodes}
    # Replay says her grants changed, not the run (exit 3, docs/security.md rule 6).
    shown = _outputs(invoke, run_id, "acme/user:alice", replay=3)
    assert '"differs_by_grants_only":true' in shown["replay"]
    doc = json.loads(shown["json"])
    first = next(n["seq"] for n in doc["nodes"] if n["properties"].get("withheld") == "pii")
    secrets = {_guess_confirms(stored, first), stored[0].properties["head_hash"]}
    for name, out in shown.items():
        for secret in secrets:
            assert secret not in out, (name, secret)
    assert "hashes from #" in shown["tree"].splitlines()[-1]
