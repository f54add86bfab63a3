"""A principal's grants changing while `investigator mcp` serves it (stdio and HTTP), through
the SDK's real clients on the real Neo4j (h36-attack-identity).

The next call after a narrowed grant or a retraction is answered with the grants of now
(nothing is cached per subject). A principal id retracted and written again names someone
new (docs/security.md, rule 5): before, a server started for the earlier holder (its fixed
stdio subject, or a bearer token given to it) went on acting as the new holder, with his
grants and his runs. Now such a call is refused, one line, and nothing runs.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import neo4j
import yaml
from mcp import Client
from test_principal_incarnation import SOURCE  # the identity source of that tenant's world
from test_serving_mcp import http, http_server_with, ok, refused, run_async, server_environ, stdio

from investigator.serving.mcp_server import token_sha256

TENANT = "t36"
FRANK = f"{TENANT}/user:frank"
TOKEN = "test-token-frank-0123456789"
ON = {"source_id": "src:iam", "source_version": "c@1", "valid_from": "2025-01-01T00:00:00Z",
      "recorded_at": "2026-01-01T00:00:00Z"}  # fmt: skip
FRANK_OLD = {"id": "user:frank", "name": "Frank Old", "labels": ["internal", "incident"],
             "purposes": ["incident_investigation"], "source_id": "src:iam"}  # fmt: skip
WORLD = {
    "tenant": TENANT,
    "sources": [SOURCE],
    "principals": [dict(FRANK_OLD, recorded_at="2026-01-01T00:00:00Z")],
    "nodes": [
        {"id": "svc:secret", "label": "Service", "name": "secret-service",
         "acl": ["internal", "incident"], "locator": "c#secret", **ON},
        {"id": "team:core", "label": "Team", "name": "core", "acl": ["internal"],
         "locator": "c#core", **ON},
    ],
    "edges": [
        {"type": "OWNS", "from": "team:core", "to": "svc:secret",
         "acl": ["internal", "incident"], "locator": "c#owns", **ON},
    ],
}  # fmt: skip
QUESTION = {"question": "who owns svc:secret?", "deadline_seconds": 600}
OWNS = "team:core OWNS svc:secret"


def _ingest(invoke: Any, tmp_path: Path, name: str, bundle: dict[str, Any]) -> None:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(bundle), encoding="utf-8")
    res = invoke("ingest", str(path))
    assert res.code == 0, res


def _write_frank_again(invoke: Any, tmp_path: Path) -> None:
    """Frank's id retracted now, then written again for someone new (incarnation + 1)."""
    at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    retraction = {"id": "user:frank", "reason": "Frank Old left", "at": at}
    _ingest(invoke, tmp_path, "retract.yaml", {"tenant": TENANT, "retractions": [retraction]})
    new = dict(FRANK_OLD, name="Frank New")
    _ingest(invoke, tmp_path, "new.yaml", {"tenant": TENANT, "principals": [new]})


def _runs(driver: neo4j.Driver) -> int:
    records, _, _ = driver.execute_query("MATCH (r:CtxRun) RETURN count(r) AS n")
    return int(records[0]["n"])


def _claims(doc: dict[str, Any]) -> str:
    return " ".join(c["statement"] for c in doc["claims"])


def test_a_served_principal_acts_with_its_grants_of_now_and_never_as_its_ids_next_holder(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env, invoke, tmp_path: Path, request
) -> None:
    assert invoke("schema", "apply").code == 0
    _ingest(invoke, tmp_path, "world.yaml", WORLD)
    config = tmp_path / "config.toml"
    config.write_text(
        f'[mcp]\n[[mcp.tokens]]\nsha256 = "{token_sha256(TOKEN)}"\nsubject = "{FRANK}"\n',
        encoding="utf-8",
    )
    env = server_environ(("INVESTIGATOR_", "OTEL_"))
    env["INVESTIGATOR_CONFIG"] = str(config)

    with http_server_with(config, request.node) as (url, _):

        async def main() -> None:
            served: Client = http(url, TOKEN)
            fixed: Client = stdio(env, "--subject", FRANK)
            async with served as over_http, fixed as over_stdio:
                first = ok(await over_http.call_tool("investigate", QUESTION))
                assert OWNS in _claims(first), first["claims"]

                # Narrowed while serving: the next call reads with the grants of now.
                narrowed = dict(FRANK_OLD, labels=["internal"])
                narrowing = {"tenant": TENANT, "principals": [narrowed]}
                _ingest(invoke, tmp_path, "narrowed.yaml", narrowing)
                after = ok(await over_http.call_tool("investigate", QUESTION))
                assert OWNS not in json.dumps(after), after["claims"]

                # Retracted, then the id written again for someone else.
                at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
                retraction = {"id": "user:frank", "reason": "Frank Old left", "at": at}
                retracting = {"tenant": TENANT, "retractions": [retraction]}
                _ingest(invoke, tmp_path, "retract.yaml", retracting)
                for client in (over_http, over_stdio):
                    refused(await client.call_tool("investigate", QUESTION),
                            "not authorized: unknown subject 'user:frank'")  # fmt: skip
                new = dict(FRANK_OLD, name="Frank New")
                _ingest(invoke, tmp_path, "new.yaml", {"tenant": TENANT, "principals": [new]})

                before = _runs(clean_db)
                for client in (over_http, over_stdio):
                    line = refused(await client.call_tool("investigate", QUESTION),
                                   "not authorized")  # fmt: skip
                    assert "t36/user:frank was retracted and written again" in line, line
                    assert "investigator mcp token" in line, line
                    line = refused(await client.call_tool("trace", {"run_id": first["run_id"]}),
                                   "not authorized")  # fmt: skip
                    assert "retracted and written again" in line, line
                assert _runs(clean_db) == before  # nothing ran for the new holder

        run_async(main)

    # The new holder itself (a subject declared anew) is served as usual.
    res = invoke("investigate", QUESTION["question"], "--subject", FRANK, "--json")
    assert res.code == 0, res
    assert OWNS in _claims(json.loads(res.out))


def test_an_id_written_again_during_a_served_call_never_lets_the_call_act_as_its_new_holder(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env, invoke, tmp_path: Path, monkeypatch
) -> None:
    """Re-created right after the call's first principal read (no timing: in that read).
    Before, that read was a separate holder check: it saw the served holder, then the
    call loaded the new one and ran as him (a run of incarnation 2 he never asked for)."""
    from cypher_templates.executor import TemplateExecutor
    from cypher_templates.subject import SubjectRef
    from investigator.serving.backend import InvestigateInput, ServingBackend

    assert invoke("schema", "apply").code == 0
    _ingest(invoke, tmp_path, "world.yaml", WORLD)
    backend = ServingBackend(cli_env, driver=clean_db)
    frank = SubjectRef.parse(FRANK)
    assert backend.principal_problem(frank) is None  # served from the start, as the CLI does

    read = TemplateExecutor.read_principals
    armed = [True]

    def read_then_recreate(self, subject, known_at=None):  # type: ignore[no-untyped-def]
        records = read(self, subject, known_at)
        if armed[0]:
            armed[0] = False
            _write_frank_again(invoke, tmp_path)
        return records

    monkeypatch.setattr(TemplateExecutor, "read_principals", read_then_recreate)
    backend.investigate(frank, InvestigateInput(**QUESTION))
    assert not armed[0]  # the id was written again during the call

    records, _, _ = clean_db.execute_query(
        "MATCH (r:CtxRun {subject_id: 'user:frank'}) RETURN r.subject_incarnation AS holder"
    )
    assert [r["holder"] for r in records] == [1]  # the served holder's run, never the new one's
    backend.close()


def _issued(invoke: Any) -> tuple[str, str]:
    """`investigator mcp token --subject FRANK`: the token and its [[mcp.tokens]] entry."""
    res = invoke("mcp", "token", "--subject", FRANK)
    assert res.code == 0, res
    first, _, entry = res.out.partition("\n\n")
    return first.removeprefix("token: ").strip(), entry


def test_a_token_issued_for_an_ids_earlier_holder_is_refused_whenever_the_server_started(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env, invoke, tmp_path: Path, request
) -> None:
    """The server starts after the id was written again: it never saw the earlier holder.
    Before, `mcp token` recorded no holder, and the earlier holder's token acted as the new
    one, with his grants and his runs."""
    assert invoke("schema", "apply").code == 0
    _ingest(invoke, tmp_path, "world.yaml", WORLD)
    old_token, old_entry = _issued(invoke)
    assert "incarnation = 1" in old_entry, old_entry
    _write_frank_again(invoke, tmp_path)
    new_token, new_entry = _issued(invoke)
    assert "incarnation = 2" in new_entry, new_entry
    config = tmp_path / "config.toml"
    config.write_text(f"[mcp]\n{old_entry}\n{new_entry}", encoding="utf-8")

    with http_server_with(config, request.node) as (url, _):

        async def main() -> None:
            async with http(url, new_token) as new_holders, http(url, old_token) as old_holders:
                before = _runs(clean_db)
                line = refused(await old_holders.call_tool("investigate", QUESTION),
                               "not authorized")  # fmt: skip
                assert "t36/user:frank was retracted and written again since this call's " \
                       "token was issued" in line, line  # fmt: skip
                assert "investigator mcp token" in line, line
                assert _runs(clean_db) == before  # nothing ran for the new holder
                answer = ok(await new_holders.call_tool("investigate", QUESTION))
                assert OWNS in _claims(answer), answer["claims"]

        run_async(main)


def test_a_principal_read_on_a_worker_thread_of_a_call_expects_the_calls_token_holder(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env, invoke, tmp_path: Path, monkeypatch
) -> None:
    """The server first served frank's earlier holder; the new holder's token (issued for
    incarnation 2) is served. A call's grouped reads run on the read pool's threads: a
    principal read there (as a template needing the subject's grants would make) did not
    see the call's token holder and fell back to the first-seen holder, refusing the new
    holder's own call as if it were an earlier holder's."""
    import threading

    from cypher_templates.executor import TemplateExecutor
    from cypher_templates.subject import SubjectRef
    from investigator.serving.backend import InvestigateInput, ServingBackend
    from investigator.serving.mcp_server import _serve

    assert invoke("schema", "apply").code == 0
    _ingest(invoke, tmp_path, "world.yaml", WORLD)
    backend = ServingBackend(cli_env, driver=clean_db)
    frank = SubjectRef.parse(FRANK)
    assert backend.principal_problem(frank) is None  # the earlier holder, served first
    _write_frank_again(invoke, tmp_path)

    caller = threading.get_ident()
    read_on: list[int] = []
    together = TemplateExecutor.run_together

    def principal_read_then_together(self, steps, subject, known_at, **kwargs):  # type: ignore[no-untyped-def]
        read_on.append(threading.get_ident())
        self.read_principals(f"{subject.tenant}/{subject.id}")
        return together(self, steps, subject, known_at, **kwargs)

    monkeypatch.setattr(TemplateExecutor, "run_together", principal_read_then_together)
    served = _serve(
        lambda: backend.investigate(frank, InvestigateInput(**QUESTION)), "investigate", 2
    )
    assert read_on and caller not in read_on  # the read happened on a worker thread
    assert not served.is_error, served.content
    assert OWNS in _claims(served.structured_content or {})
    backend.close()


def test_a_run_replayed_while_its_id_is_written_again_is_refused_never_re_run_as_the_new_holder(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env, invoke, tmp_path: Path, monkeypatch
) -> None:
    """Frank's earlier holder replays his own run over MCP; the id is retracted and written
    again right after replay's holder check (no timing: in that check). Before, replay then
    loaded the run's subject again, got the new holder, and re-executed the earlier holder's
    calls with the new holder's grants, answering with what they read."""
    from cypher_templates.subject import SubjectRef
    from investigator import replay
    from investigator.serving.backend import InvestigateInput, ServingBackend
    from investigator.serving.mcp_server import _serve

    assert invoke("schema", "apply").code == 0
    _ingest(invoke, tmp_path, "world.yaml", WORLD)
    backend = ServingBackend(cli_env, driver=clean_db)
    frank = SubjectRef.parse(FRANK)
    answered = _serve(
        lambda: backend.investigate(frank, InvestigateInput(**QUESTION)), "investigate", 1
    )
    assert not answered.is_error, answered.content
    run_id = (answered.structured_content or {})["run_id"]

    check = replay._refuse_an_earlier_holders_run
    armed = [True]

    def check_then_recreate(*args, **kwargs):  # type: ignore[no-untyped-def]
        check(*args, **kwargs)
        if armed[0]:
            armed[0] = False
            _write_frank_again(invoke, tmp_path)

    monkeypatch.setattr(replay, "_refuse_an_earlier_holders_run", check_then_recreate)
    replayed = _serve(lambda: backend.replay(frank, run_id), "replay", 1)
    assert not armed[0]  # the id was written again during the replay
    assert replayed.is_error, replayed.structured_content
    line = replayed.content[0].text  # type: ignore[union-attr]
    assert line.startswith("not authorized: "), line
    assert f"run {run_id} is an earlier principal's run" in line, line
    backend.close()
