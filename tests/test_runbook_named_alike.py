"""Runbooks whose names differ in case only, as KubeVirt's runbooks and deprecated_runbooks
folders have them (KubeMacPoolDown.md, replaced by KubemacpoolDown.md). On a real Neo4j,
through the CLI, without alert rules (the name is the only tie).

Before: of two runbooks named alike, `--alert NAME` showed the one whose id sorted last, and
said it "is named after it" whatever the case: `--alert PoolMgrDown` showed PoolmgrDown,
"named after it", and said nothing of PoolMgrDown.md, which is; `--alert QueueStuck` showed
Queuestuck.md rather than QueueStuck.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
from conftest import import_runbooks_and_rules

CURRENT = "# PoolmgrDown\n\n## Mitigation\n\nRestart the pool manager deployment.\n"
DEPRECATED = (
    "# PoolMgrDown [Deprecated]\n\n"
    "**Note:** Starting from 4.14, this runbook was replaced by "
    "[PoolmgrDown runbook](https://rb.example.com/runbooks/PoolmgrDown.html).\n\n"
    "## Mitigation\n\nDelete the pool manager pod.\n"
)


def test_of_runbooks_named_alike_the_card_says_which_is_named_after_the_alert(  # type: ignore[no-untyped-def]
    tmp_path: Path, clean_db: neo4j.Driver, cli_env: object, invoke
) -> None:
    docs = {
        "runbooks/PoolmgrDown.md": CURRENT,
        "deprecated_runbooks/PoolMgrDown.md": DEPRECATED,
        "runbooks/QueueStuck.md": "# QueueStuck\n\n## Mitigation\n\nA.\n",
        "deprecated_runbooks/Queuestuck.md": "# Queuestuck\n\nB.\n",
    }
    import_runbooks_and_rules(invoke, tmp_path, "lnka", runbooks=docs, folder="docs")

    def card(alert: str) -> dict:  # type: ignore[type-arg]
        result = invoke("runbook", "--alert", alert, "--subject", "lnka/user:oncall", "--json")
        assert result.code == 0, result
        return json.loads(result.out)  # type: ignore[no-any-return]

    # The file named exactly after the alert says the other replaced it: that one is shown,
    # and the note says so instead of calling it "named after" the alert.
    old = card("PoolMgrDown")
    assert old["runbook"]["id"] == "runbook:PoolmgrDown"
    assert "runbook:PoolmgrDown is named like it (PoolmgrDown)" in old["note"], old["note"]
    assert (
        "runbook:PoolMgrDown, named exactly after it, says it was replaced by "
        "runbook:PoolmgrDown, so the card shows that runbook"
    ) in old["note"], old["note"]
    assert [a["id"] for a in old["alternatives"]] == ["runbook:PoolMgrDown"]
    new = card("PoolmgrDown")
    assert new["runbook"]["id"] == "runbook:PoolmgrDown"
    assert "runbook:PoolmgrDown is named after it" in new["note"], new["note"]
    assert "replaced" not in new["note"], new["note"]
    # No file says it was replaced: the one named exactly after the alert is shown.
    for alert in ("QueueStuck", "Queuestuck"):
        shown = card(alert)
        assert shown["runbook"]["id"] == f"runbook:{alert}", (alert, shown["note"])
        assert f"runbook:{alert} is named after it" in shown["note"], shown["note"]
