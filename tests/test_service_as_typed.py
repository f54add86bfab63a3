"""`--service` written as a user types it ("payment-api", "Payment-API") answers exactly like the
id it resolves to (`svc:payment-api`), on the demo dataset over a real Neo4j.

Before, the loop's later lookups (the owner "then" among them) and the claims' focus used the
text as typed, which matches no record: the owner at the first error was rejected and only
today's owner was stated.
"""

from __future__ import annotations

import json
from typing import Any

import neo4j
import pytest

QUESTION = "who owned payment-api then?"
# After the ownership change (2026-07-24), fixed so results do not follow the wall clock.
AFTER = "2026-08-01T00:00:00Z"


def _claims(invoke: Any, service: str) -> list[str]:
    res = invoke(
        "investigate",
        QUESTION,
        "--service",
        service,
        "--as-of",
        AFTER,
        "--subject",
        "acme/user:bob",
        "--json",
    )
    assert res.code == 0, res
    return [c["statement"] for c in json.loads(res.out)["claims"]]


@pytest.mark.parametrize("typed", ["payment-api", "Payment-API"])
def test_a_service_as_typed_gets_the_owner_then_and_now(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, typed: str
) -> None:
    by_id = _claims(invoke, "svc:payment-api")
    owners = [s for s in by_id if " OWNS svc:payment-api" in s]
    assert any("team:payments-core" in s and "'then'" in s for s in owners), by_id
    assert any("team:payments-platform" in s for s in owners), by_id
    assert _claims(invoke, typed) == by_id


def test_a_service_that_resolves_to_nothing_is_still_said_to(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    res = invoke("investigate", QUESTION, "--service", "svc:nope", "--subject", "acme/user:bob")
    assert res.code == 0, res
    assert "did not resolve" in res.out
