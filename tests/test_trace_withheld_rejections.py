"""A rejected candidate the reader may not read now is withheld like evidence (docs/security.md
rule 6).

Before, `trace` re-checked only admitted evidence against the reader's grants. A rejection
of a record the run's subject could read but the reader cannot still printed its element
id, version and detail: an auditor without `incident` reading alice's seed run saw
`AFFECTED_BY|svc:checkout|...` (the relationship type and the visible end of an
incident-only relationship) and its valid-from time. An idempotent retry after the rejected
record was tightened returned the recorded answer's `rejected` list unfiltered.

A relationship is withheld the same way when the reader may not read one of its two nodes
now (a template never reads it then either).

The tests of this module share one graph and one recorded run, set up by the first of them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import json_error, wipe

DATASET = Path(__file__).resolve().parents[1] / "datasets" / "payments-incident"
QUESTION = (
    "Was release-2026.07.23.1 related to PAY-4097? Who owned payment-api then? "
    "Which runbook applied?"
)
AUDITOR = """\
tenant: acme
principals:
  - {id: user:aud2, labels: [internal], purposes: [audit], source_id: src:iam,
     recorded_at: "2026-01-05T09:00:00Z"}
"""
# An incident-only relationship valid after the seed's as_of: alice's run rejects it
# (`rejected_temporal`); an auditor without `incident` may not read it.
HIDDEN_KEY = "AFFECTED_BY|svc:checkout|inc:2026-07-23-payments"
HIDDEN_DETAIL = "2026-07-23T10:03:30"
FORMATS = ("tree", "mermaid", "json", "prov-json")

_STATE: dict[str, str] = {}


def _investigate(invoke, *extra: str) -> Any:  # type: ignore[no-untyped-def]
    return invoke(
        "investigate", QUESTION, "--service", "svc:payment-api",
        "--as-of", "2026-07-23T10:03:00Z", "--subject", "acme/user:alice",
        "--deadline-seconds", "600", "--json", *extra,
    )  # fmt: skip


@pytest.fixture()
def run_id(driver, cli_env, invoke, tmp_path_factory) -> str:  # type: ignore[no-untyped-def]
    """alice's recorded seed run, with an idempotency key (set up once for the module)."""
    if "run" not in _STATE:
        wipe(driver)
        folder = tmp_path_factory.mktemp("auditor")
        (folder / "auditor.yaml").write_text(AUDITOR)
        for args in (["schema", "apply"], ["ingest", str(DATASET)], ["ingest", str(folder)]):
            result = invoke(*args)
            assert result.code == 0, (args, result)
        result = _investigate(invoke, "--idempotency-key", "seed-1")
        assert result.code == 0, result
        answer = json.loads(result.out)
        # The control: the run did reject the incident-only relationship.
        assert HIDDEN_KEY in {r["element_id"] for r in answer["rejected"]}
        _STATE["run"] = answer["run_id"]
    return _STATE["run"]


def _trace(invoke, run: str, subject: str, fmt: str, *extra: str) -> str:  # type: ignore[no-untyped-def]
    result = invoke("trace", run, "--subject", subject, "--format", fmt, *extra)
    assert result.code == 0, result
    assert result.err == "", result
    return str(result.out)


def test_a_rejection_the_auditor_may_not_read_shows_only_its_candidate_id(  # type: ignore[no-untyped-def]
    run_id, invoke
) -> None:
    own = json.loads(_trace(invoke, run_id, "acme/user:alice", "json"))
    hidden = {
        n["properties"]["candidate_id"]: n
        for n in own["nodes"]
        if n["kind"] == "rejection" and n["content"]["element_id"] == HIDDEN_KEY
    }
    assert hidden
    outputs = {
        fmt: _trace(invoke, run_id, "acme/user:aud2", fmt, "--purpose", "audit") for fmt in FORMATS
    }
    for fmt, out in outputs.items():
        assert "AFFECTED_BY|svc:checkout" not in out, fmt
        assert HIDDEN_DETAIL not in out, fmt
    doc = json.loads(outputs["json"])
    nodes = {n["seq"]: n for n in doc["nodes"]}
    for cand_id, recorded in hidden.items():
        node = nodes[recorded["seq"]]
        assert node["properties"]["withheld"] == "acl"
        # Its candidate id is an evidence id (a hash of the record's key and text): masked
        # by its place in the run, and no hash over its content is shown.
        mask = f"withheld#{node['seq']}"
        assert node["properties"]["candidate_id"] == mask and node["hash"] == "[withheld]"
        assert not {"reason", "replacement"} & set(node["properties"])
        assert node["content"] == {"withheld": "acl"}
        assert f"rejected {mask} [withheld: acl]" in outputs["tree"]
        for fmt, out in outputs.items():
            assert cand_id not in out and recorded["hash"] not in out, fmt
        entity = json.loads(outputs["prov-json"])["entity"][f"ctx:rejection-{node['seq']}"]
        assert entity["inv:withheld"] == "acl" and "inv:reason" not in entity
    # A rejection the auditor may read stays as recorded, with its replacement.
    assert "-> runbook:payment-recovery@v3" in outputs["tree"]


def test_an_idempotent_retry_after_a_rejected_record_was_tightened_is_refused(  # type: ignore[no-untyped-def]
    run_id, invoke, tmp_path: Path
) -> None:
    again = _investigate(invoke, "--idempotency-key", "seed-1")
    assert again.code == 0, again
    assert json.loads(again.out)["run_id"] == run_id  # the control: the key returns the run
    tightened = tmp_path / "tightened.yaml"
    tightened.write_text(
        "tenant: acme\n"
        "edges:\n"
        "  - {type: AFFECTED_BY, from: svc:checkout, to: inc:2026-07-23-payments,\n"
        "     acl: [internal, incident, legal], source_id: src:incident-reports,\n"
        '     valid_from: "2026-07-23T10:03:30Z"}\n'
    )
    result = invoke("ingest", str(tightened))
    assert result.code == 0, result
    refused = _investigate(invoke, "--idempotency-key", "seed-1")
    assert refused.code == 3, refused
    # With --json, the one error object (its message the stderr line's), nothing else.
    assert refused.out == "" or json_error(refused)["exit_code"] == 3, refused
    assert refused.err.count("\n") == 1, refused.err
    assert "may no longer read (acl)" in refused.err
    assert "AFFECTED_BY" not in refused.err


def test_a_relationship_whose_end_the_reader_may_not_read_is_withheld(  # type: ignore[no-untyped-def]
    run_id, invoke, tmp_path: Path
) -> None:
    # A template reads a relationship only when both its nodes are visible; trace re-checks
    # both ends too. Before, tightening the incident's own record withheld its evidence but
    # not the relationships to it, and their keys and text showed the incident's id.
    def affected(doc: dict[str, Any]) -> dict[int, dict[str, Any]]:
        return {
            n["seq"]: n
            for n in doc["nodes"]
            if n["kind"] == "evidence"
            and str(n["content"].get("element_id", "")).startswith("AFFECTED_BY|svc:payment-api|")
        }

    auditor = ("acme/user:auditor", "--purpose", "audit")  # labels internal, incident, pii
    before = affected(json.loads(_trace(invoke, run_id, auditor[0], "json", *auditor[1:])))
    assert before, "the control: the auditor reads the incident's relationships today"
    tightened = tmp_path / "incident.yaml"
    tightened.write_text(
        "tenant: acme\n"
        "nodes:\n"
        "  - {id: inc:2026-07-23-payments, label: Incident, acl: [internal, incident, legal],\n"
        '     name: "Payments authorization failures 2026-07-23",\n'
        "     source_id: src:incident-reports,\n"
        '     valid_from: "2026-07-23T10:02:38Z", valid_to: "2026-07-23T10:48:00Z"}\n'
    )
    result = invoke("ingest", str(tightened))
    assert result.code == 0, result
    outputs = {fmt: _trace(invoke, run_id, auditor[0], fmt, *auditor[1:]) for fmt in FORMATS}
    for fmt, out in outputs.items():
        assert "inc:2026-07-23-payments" not in out, fmt
    nodes = {n["seq"]: n for n in json.loads(outputs["json"])["nodes"]}
    for seq in before:
        assert nodes[seq]["properties"]["withheld"] == "acl"
