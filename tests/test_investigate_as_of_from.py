"""Where an investigation's as_of came from, in its JSON: `investigate --json` and the served
`investigate` say `as_of_from` (`given` | `now`), as the report's `As of` line, the run's
record and `trace` do. On the real Neo4j of the test session with the demo dataset; the
served tool through the SDK's real client over stdio.

Before: only the text report said "(given)" or "(now: none given)"; a script or an agent
reading the JSON could not tell an answer at a time it chose from one at the time it ran
(session 32's runbook JSON said it; investigate's did not).
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema import validators
from test_serving_mcp import ok, run_async, server_env, stdio

__all__ = ["server_env"]  # module fixture, used by name

QUESTION = "who owns payment-api?"
AS_OF = "2026-07-23T10:30:00Z"


def test_investigate_json_says_whether_as_of_was_given(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    given = invoke(
        "investigate", QUESTION, "--as-of", AS_OF, "--subject", "acme/user:bob", "--json"
    )
    assert given.code == 0, given
    doc = json.loads(given.out)
    assert (doc["as_of"], doc["as_of_from"]) == (AS_OF, "given")
    assert list(doc)[-1] == "as_of_from"  # added last, as runbook --json adds its own

    now = invoke("investigate", QUESTION, "--subject", "acme/user:bob", "--json")
    assert now.code == 0, now
    assert json.loads(now.out)["as_of_from"] == "now"
    # `--as-of now` is the default said aloud: no time was chosen.
    said_now = invoke(
        "investigate", QUESTION, "--as-of", "now", "--subject", "acme/user:bob", "--json"
    )
    assert said_now.code == 0, said_now
    assert json.loads(said_now.out)["as_of_from"] == "now"


def test_served_investigate_says_whether_as_of_was_given(  # type: ignore[no-untyped-def]
    demo_graph, server_env
) -> None:
    got: dict[str, Any] = {}

    async def main() -> None:
        async with stdio(server_env, "--subject", "acme/user:bob") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            schema = tools["investigate"].output_schema
            assert schema is not None and "as_of_from" in schema["properties"], schema
            for name, args in (
                ("given", {"question": QUESTION, "as_of": AS_OF}),
                ("now", {"question": QUESTION}),
            ):
                result = await client.call_tool("investigate", args)
                doc = ok(result)
                validators.validator_for(schema)(schema).validate(doc)
                got[name] = (doc, str(getattr(result.content[0], "text", "")))

    run_async(main)
    doc, summary = got["given"]
    assert doc["as_of_from"] == "given"
    assert f"as_of {AS_OF} (given), known_at" in summary, summary
    doc, summary = got["now"]
    assert doc["as_of_from"] == "now"
    assert " (now: none given), known_at" in summary, summary
