"""A `--service` or a service name that resolves to nothing the subject may see, as a user of
the CLI sees it on the demo dataset: the reads "then", the releases and the errors are of the
service the answer covers (never of an id that reads nothing), and when none is read no line
says "no first error"/"no release" was found: the Time line and the gaps blame the name. An
id one hyphen from a visible one is suggested."""

from __future__ import annotations

import json

AS_OF = ["--as-of", "2026-07-23T10:05:00Z", "--deadline-seconds", "300"]
MALLORY = ["--subject", "globex/user:mallory"]
BOB = ["--subject", "acme/user:bob"]
NOT_FOUND = "no first error is found"


def test_a_service_given_as_another_tenants_id_reads_the_one_the_answer_covers(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    wrong = ["--service", "svc:payment-api", *MALLORY, *AS_OF]
    owner = invoke("investigate", "Who owned payment-api then?", *wrong)
    assert owner.code == 0, owner
    assert "did you mean svc:globex-payment-api? The answer covers svc:globex-payment-api" in (
        owner.out
    )
    # "then" is the globex service's first error, as with the right id.
    assert "globex-PAY-4097 first seen at 2026-07-23T10:01:30Z" in owner.out, owner.out
    assert "At the first globex-PAY-4097 error, 2026-07-23T10:01:30Z" in owner.out, owner.out
    assert "Time       " not in owner.out, owner.out
    related = invoke(
        "investigate", "Was the release of payment-api related to the errors then?", *wrong
    )
    assert related.code == 0, related
    assert "verdict: likely" in related.out, related.out
    assert "deploy:globex-payment-api-2026.07.23.7" in related.out
    assert "deployment_time (required)" not in related.out, related.out
    assert NOT_FOUND not in related.out


def test_a_misspelt_name_then_blames_the_name_not_a_missing_error(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    result = invoke("investigate", "Who owned paymnt-api then?", *BOB, *AS_OF)
    assert result.code == 0, result
    assert "did you mean svc:payment-api?" in result.out
    assert NOT_FOUND not in result.out, result.out
    assert (
        "Time       not resolved: 'then'; the answer is at as_of: no first error is looked "
        "for: 'paymnt-api' resolved to nothing this subject may see (see above); ask with a "
        "visible id"
    ) in result.out, result.out
    doc = json.loads(
        invoke("investigate", "Who owned paymnt-api then?", *BOB, *AS_OF, "--json").out
    )
    assert [r["reason"] for r in doc["unresolved_time_reasons"]] == ["name_unresolved"]
    gaps = {m["evidence_type"]: m["description"] for m in doc["missing_evidence"]}
    assert gaps["error_first_seen"].startswith(
        "'paymnt-api' resolved to nothing this subject may see"
    ), gaps
    assert "no owner was looked for" in gaps["ownership"], gaps


def test_an_id_typed_without_its_hyphen_is_suggested_and_no_release_is_said_missing(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    result = invoke(
        "investigate",
        "Was the release related to the errors then?",
        "--service",
        "svc:paymentapi",
        *BOB,
        *AS_OF,
    )
    assert result.code == 0, result
    assert (
        "--service 'svc:paymentapi' did not resolve to a service visible to acme/user:bob; "
        "did you mean svc:payment-api? The answer covers svc:payment-api, which its claims cite."
    ) in result.out, result.out
    assert "no release/deployment time for the service" not in result.out, result.out
    assert NOT_FOUND not in result.out
    # Since h31-cause a question naming no service takes the service of the last release found
    # by as_of, and says so: the typo'd --service is named unresolved above, never read.
    assert (
        "the question names no service: svc:payment-api is read as the one asked about, the "
        "service of deploy:release-2026.07.23.1, the last release found by as_of"
    ) in result.out, result.out
