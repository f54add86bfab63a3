"""An on-call engineer asks "how do I <verb> <service>?" with a verb the runbook rule does not
list ("fail over", "promote"): the question asks what to do at that place, so the runbook that
applies to the service answers it, as `investigator runbook --service` does. On a real Neo4j.

Before, "How do I fail over card-auth?" was refused as a question whose words 'fail' it does
not read (`partial`, only the service's name read back), while the service had a runbook.

The page is written here; no public corpus text.
"""

from __future__ import annotations

from pathlib import Path

import neo4j
import pytest
from conftest import import_runbook_folder, investigate_json

PAGE = """---
title: Card-auth standby promotion
services: [svc:card-auth]
---
# Card-auth standby promotion

When the card-auth primary is lost, fail over to the standby:

1. Fence the old primary so it takes no writes.
2. Promote the standby replica and point the card-auth writers at it.
"""


@pytest.fixture()
def failover(driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    folder = tmp_path / "acme"
    folder.mkdir()
    (folder / "card-auth-failover.md").write_text(PAGE, encoding="utf-8")
    import_runbook_folder(driver, invoke, folder)
    return driver


@pytest.mark.parametrize(
    "question",
    ["How do I fail over card-auth?", "how do I promote the card-auth standby?"],
)
def test_how_do_i_with_any_verb_gets_the_services_runbook(failover, invoke, question) -> None:  # type: ignore[no-untyped-def]
    doc = investigate_json(invoke, question, "--subject", "acme/user:oncall")
    assert "applicable_runbook" in doc["intents"], doc["intents"]
    assert not [m for m in doc["missing_evidence"] if m["evidence_type"] == "question"]
    runbook_claims = [c for c in doc["claims"] if c["intent"] == "applicable_runbook"]
    assert runbook_claims, doc["claims"]
    assert "card-auth-failover" in " ".join(c["statement"] for c in runbook_claims)
    assert doc["status"] == "complete", doc["missing_evidence"]
    report = invoke("investigate", question, "--subject", "acme/user:oncall")
    assert report.code == 0, report
    assert "ask something it does not read" not in report.out
