"""An imported (untrusted) runbook cannot retire or displace the team's trusted one.

Found by trying it as an attacker: a Markdown file dropped into an imported folder, with
`supersedes: runbook:payment-recovery@v4` in its front matter, made the trusted v4
`rejected_superseded`; one without it, valid from a later day, became *the* runbook in force
(card and investigation alike), its steps "fail over payment-db --force" shown as the ones to
follow. docs/security.md rule 8.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j

DATASET = Path(__file__).resolve().parent.parent / "datasets" / "payments-incident"
STEPS = """
# Payment recovery

When payment-api returns PAY-4097:
1. Fail over payment-db with `dbctl failover payment-db --force`.
2. Do not roll back the release.
"""


def _runbook(folder: Path, name: str, front: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(f"---\nname: {name}\n{front}---\n{STEPS}")
    return folder


def _kg_records(driver: neo4j.Driver) -> int:
    records, _, _ = driver.execute_query("MATCH (n:KG) RETURN count(n) AS n")
    return int(records[0]["n"])


def _import(invoke, folder: Path, *extra: str):  # type: ignore[no-untyped-def]
    return invoke(
        "ingest", str(folder), "--format", "markdown-runbooks", "--tenant", "acme",
        "--acl", "internal", *extra,
    )  # fmt: skip


def test_an_untrusted_file_may_not_supersede_the_teams_runbook(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, tmp_path
) -> None:
    folder = _runbook(
        tmp_path / "rb",
        "payment-recovery",
        "title: Payment recovery runbook v6\nversion: 6\n"
        "supersedes: runbook:payment-recovery@v4\nservices: [svc:payment-api]\n"
        "valid_from: 2026-07-26T00:00:00Z\n",
    )
    before = _kg_records(demo_graph)
    refused = _import(invoke, folder)
    assert refused.code == 2, refused
    assert refused.err == (
        "error: ingest refused: runbook:payment-recovery@v4 is held by source "
        "src:wiki-runbooks; untrusted runbook:payment-recovery@v6 of source src:runbooks:rb "
        "may not supersede it\n"
    ), refused.err
    assert refused.err.count("\n") == 1
    assert _kg_records(demo_graph) == before  # nothing written
    card = json.loads(
        invoke("runbook", "--error-code", "PAY-4097", "--as-of", "2026-07-27T00:00:00Z",
               "--subject", "acme/user:oncall", "--json").out
    )  # fmt: skip
    assert card["runbook"]["id"] == "runbook:payment-recovery@v4"


def test_a_newer_untrusted_runbook_does_not_displace_the_trusted_one(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, tmp_path
) -> None:
    folder = _runbook(
        tmp_path / "rb-new",
        "payment-recovery-new",
        "title: Payment recovery runbook v5\nversion: 5\nservices: [svc:payment-api]\n"
        "valid_from: 2026-07-20T00:00:00Z\n",
    )
    assert _import(invoke, folder).code == 0
    at = ["--as-of", "2026-07-23T10:03:00Z"]
    card = json.loads(
        invoke("runbook", "--service", "svc:payment-api", *at, "--subject", "acme/user:bob",
               "--json").out
    )  # fmt: skip
    assert card["runbook"]["id"] == "runbook:payment-recovery@v3"
    assert card["runbook"]["trust"] == "trusted"
    lost = [r for r in card["rejected"] if r["element_id"] == "runbook:payment-recovery-new@v5"]
    assert [r["reason"] for r in lost] == ["conflict_loser"], card["rejected"]
    # The investigation states one runbook in force, the trusted one.
    doc = json.loads(
        invoke("investigate", "Which runbook applies to payment-api?", "--service",
               "svc:payment-api", *at, "--subject", "acme/user:bob", "--json").out
    )  # fmt: skip
    in_force = [c["statement"] for c in doc["claims"] if "in force" in c["statement"]]
    assert len(in_force) == 1 and "runbook:payment-recovery@v3" in in_force[0], in_force
    assert "dbctl failover" not in json.dumps(doc["claims"])
    # Where no trusted runbook applies, the imported one answers as before: imported
    # runbooks are admissible, only never above the team's.
    ledger = _runbook(
        tmp_path / "rb-ledger",
        "ledger-recovery",
        "title: Ledger recovery\nservices: [svc:ledger]\nvalid_from: 2026-07-20T00:00:00Z\n",
    )
    assert _import(invoke, ledger).code == 0
    other = json.loads(
        invoke("runbook", "--service", "svc:ledger", *at, "--subject", "acme/user:bob",
               "--json").out
    )  # fmt: skip
    assert other["runbook"]["id"] == "runbook:ledger-recovery"
    assert other["runbook"]["trust"] == "untrusted"
