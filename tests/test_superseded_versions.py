"""A version superseded while it had no end is not claimed in force beside its successor.

Found after the fact: a trusted file superseding runbook v4 (which has no `valid_to`) from
2026-07-26 made the card answer v6, while `investigate` at 2026-07-27 claimed both v4 and
v6 "the version in force". A version holds at an instant only where the version that
supersedes it does not; one that alone held at an instant the question names stays, and its
claim names that instant only.
"""

from __future__ import annotations

import json
from pathlib import Path

V6 = """---
name: payment-recovery
title: Payment recovery runbook v6
version: 6
supersedes: runbook:payment-recovery@v4
services: [svc:payment-api]
valid_from: 2026-07-26T00:00:00Z
---
# Payment recovery v6

## Steps
1. Check the pool metrics, then roll back the release.
"""
AT = ["--service", "svc:payment-api", "--as-of", "2026-07-27T00:00:00Z"]
WHO = ["--subject", "acme/user:oncall", "--json"]


def _in_force(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"] if "in force" in c["statement"]]


def test_a_superseded_open_version_is_not_claimed_in_force(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke, tmp_path: Path
) -> None:
    folder = tmp_path / "rb"
    folder.mkdir()
    (folder / "payment-recovery.md").write_text(V6)
    ingest = invoke(
        "ingest", str(folder), "--format", "markdown-runbooks", "--tenant", "acme",
        "--acl", "internal", "--trusted",
    )  # fmt: skip
    assert ingest.code == 0, ingest

    card = json.loads(invoke("runbook", *AT, *WHO).out)
    assert card["runbook"]["id"] == "runbook:payment-recovery@v6"

    now = json.loads(invoke("investigate", "Which runbook applies to payment-api?", *AT, *WHO).out)
    in_force = _in_force(now)
    assert len(in_force) == 1 and "runbook:payment-recovery@v6" in in_force[0], in_force
    v4 = [r for r in now["rejected"] if r["element_id"] == "runbook:payment-recovery@v4"]
    assert [(r["reason"], r["replacement"]) for r in v4] == [
        ("rejected_superseded", "runbook:payment-recovery@v6")
    ], now["rejected"]

    # Asked about an instant when v4 alone held, v4 is claimed for that instant only.
    then = json.loads(
        invoke("investigate", "Which runbook applied on 25 July 2026 at 12:00 UTC?", *AT, *WHO).out
    )
    by_id = {
        rb: s
        for s in _in_force(then)
        for rb in ("@v4", "@v6")
        if f"runbook:payment-recovery{rb}" in s
    }
    assert set(by_id) == {"@v4", "@v6"}, _in_force(then)
    assert "2026-07-25T12:00:00Z" in by_id["@v4"] and "as_of" not in by_id["@v4"], by_id["@v4"]
    assert "as_of, 2026-07-27T00:00:00Z" in by_id["@v6"], by_id["@v6"]
