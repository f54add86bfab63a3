"""`--service` names one service and the question's words another: both are named, so an
owner question states both owners (e29-qa finding 1: "Who owned payment-api?" asked with a
`--service svc:checkout` left in the shell's history answered checkout's owner alone,
`complete`)."""

from __future__ import annotations

import neo4j
import pytest

BOB = "acme/user:bob"
AT = "2026-07-23T10:03:00Z"
PAYMENTS_CORE = f"[fact      ] At {AT}: team:payments-core OWNS svc:payment-api"
SRE_PLATFORM = f"[fact      ] At {AT}: team:sre-platform OWNS svc:checkout"


@pytest.mark.parametrize("named", ["payment-api", "svc:payment-api"])
def test_the_owner_of_the_service_the_words_name_is_stated_beside_the_given_one(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, named: str
) -> None:
    res = invoke(
        "investigate", f"Who owned {named}?", "--service", "svc:checkout",
        "--as-of", AT, "--subject", BOB,
    )  # fmt: skip
    assert res.code == 0, res
    assert PAYMENTS_CORE in res.out, res.out
    assert SRE_PLATFORM in res.out, res.out


def test_the_given_service_alone_still_answers_with_its_owner_only(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    res = invoke(
        "investigate", "Who owned it?", "--service", "svc:checkout",
        "--as-of", AT, "--subject", BOB,
    )  # fmt: skip
    assert res.code == 0, res
    assert SRE_PLATFORM in res.out, res.out
    assert "OWNS svc:payment-api" not in res.out
