"""`investigator trace` and `investigator runs` through the real CLI and a real Neo4j."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import json_error
from test_context_graph_support import record_full_run, request

from investigator.context_graph import RunRecorder

IDENTITY = Path(__file__).parent / "fixtures" / "identity"


@pytest.fixture()
def clean_db(clean_db, cli_env, invoke):  # type: ignore[no-untyped-def]
    """acme's principals (`trace` and `runs` load their reader) and the records runs cite."""
    for name in ("acme-principals.yaml", "acme-trace-elements.yaml"):
        result = invoke("ingest", str(IDENTITY / name))
        assert result.code == 0, result
    return clean_db


# The runs of test_context_graph_support are acme/user:alice's.
ALICE = ("--subject", "acme/user:alice")
HOSTILE_QUESTION = 'Was it "x"]\n  n0 --> evil["pwned"] %% <script>alert(1)</script> | `rm -rf` #1;'


def test_trace_tree_shows_the_lineage(clean_db, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    run_id = record_full_run(RunRecorder(clean_db))
    res = invoke("trace", run_id, *ALICE)
    assert res.code == 0, res
    out = res.out
    assert out.splitlines()[0].startswith(f"run {run_id} [complete]")
    # Times as the rest of the output writes them, not the stored `10:03:00.000000Z`, each
    # with where it came from (this request does not say where its as_of came from).
    assert out.splitlines()[0].endswith(
        "as_of 2026-07-23T10:03:00Z (source not recorded), known_at 2026-07-24T00:00:00Z (given))"
    ), out.splitlines()[0]
    for text in (
        "agent investigator/",
        "goal relate the release to the errors",
        "plan plan-1",
        "tool_call tc-1 deployments_for_service@1 rows=1",
        "evidence ev:1 from src:deployments@v1",
        "rejected ev:old: rejected_superseded -> runbook:payment-recovery@v3",
        "claim c-2 [inference] PAY-4097 errors began after the release <- ev:2, ev:3",
        "outcome complete (evidence_sufficient)",
        "chain: valid (14 nodes",
    ):
        assert text in out, text
    # Evidence hangs under its tool call, which hangs under the plan.
    lines = out.splitlines()
    tc = next(i for i, line in enumerate(lines) if "tool_call tc-1" in line)
    ev = next(i for i, line in enumerate(lines) if "evidence ev:1" in line)
    assert ev == tc + 1
    assert lines[ev].index("#5") > lines[tc].index("#4")


def test_a_rejections_replacement_the_reader_may_not_read_is_masked(  # type: ignore[no-untyped-def]
    clean_db, cli_env, invoke, tmp_path: Path
) -> None:
    run_id = record_full_run(RunRecorder(clean_db))
    shown = "rejected ev:old: rejected_superseded -> runbook:payment-recovery@v3"
    assert shown in invoke("trace", run_id, *ALICE).out  # the control
    # The replacement's record is tightened to a label alice lacks; the rejected v2 is not.
    tightened = tmp_path / "tightened.yaml"
    tightened.write_text(
        "tenant: acme\n"
        "documents:\n"
        "  - {id: runbook:payment-recovery@v3, kind: runbook, title: payment recovery v3,\n"
        '     content: "Fail over to the standby processor.", acl: [internal, legal],\n'
        "     source_id: src:wiki-runbooks, source_version: v3, locator: wiki#v3,\n"
        '     valid_from: "2026-07-01T00:00:00Z", supersedes: runbook:payment-recovery@v2}\n'
    )
    assert invoke("ingest", str(tightened)).code == 0
    for fmt in ("tree", "json", "mermaid", "prov-json"):
        res = invoke("trace", run_id, *ALICE, "--format", fmt)
        assert res.code == 0, res
        assert "payment-recovery@v3" not in res.out, fmt
        if fmt == "json":  # the rejected v2 itself is readable: shown
            assert "runbook:payment-recovery@v2" in res.out
    tree = invoke("trace", run_id, *ALICE).out
    assert "rejected ev:old: rejected_superseded -> [withheld]" in tree


def test_trace_json_has_every_node_and_relationship(clean_db, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    run_id = record_full_run(RunRecorder(clean_db))
    res = invoke("trace", run_id, *ALICE, "--format", "json")
    assert res.code == 0, res
    doc = json.loads(res.out)
    assert doc["run_id"] == run_id and doc["status"] == "complete" and doc["chain_valid"]
    assert [n["seq"] for n in doc["nodes"]] == list(range(14))
    claim = next(n for n in doc["nodes"] if n["kind"] == "claim")
    assert claim["content"]["statement"] == "release-2026.07.23.1 was deployed at 10:02"
    assert claim["labels"] == ["CtxClaim", "CtxEvent"]
    assert {"from_seq": 11, "type": "WAS_DERIVED_FROM", "to_seq": 5} in doc["edges"]
    assert {"from_seq": 5, "type": "WAS_GENERATED_BY", "to_seq": 4} in doc["edges"]


def test_trace_json_reports_a_tampered_chain(clean_db, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    run_id = record_full_run(RunRecorder(clean_db))
    clean_db.execute_query(
        "MATCH (n:CtxClaim {run_id: $r, seq: 11}) SET n.statement = 'forged'", r=run_id
    )
    doc = json.loads(invoke("trace", run_id, *ALICE, "--format", "json").out)
    assert doc["chain_valid"] is False
    assert any(p.startswith(f"run {run_id} seq 11 (claim)") for p in doc["problems"])
    tree = invoke("trace", run_id, *ALICE).out
    assert "chain: INVALID" in tree and f"run {run_id} seq 11 (claim)" in tree


def test_trace_mermaid_is_a_flowchart_that_hostile_text_cannot_break(
    clean_db, cli_env, invoke
) -> None:  # type: ignore[no-untyped-def]
    run_id = record_full_run(RunRecorder(clean_db), request(question=HOSTILE_QUESTION))
    res = invoke("trace", run_id, *ALICE, "--format", "mermaid")
    assert res.code == 0, res
    lines = res.out.strip().splitlines()
    assert lines[0] == "flowchart TD"
    boxes = [line for line in lines if line.startswith("  n") and '["' in line]
    assert len(boxes) == 14
    for box in boxes:
        # Exactly one quoted label per box: no quote, bracket or newline escaped the label.
        inner = box.split('["', 1)[1]
        assert inner.endswith('"]') and '"' not in inner[:-2] and "]" not in inner[:-2]
        assert "<" not in inner and "|" not in inner
    assert "evil" not in "\n".join(line for line in lines if not line.startswith("  n0["))
    arrows = [line for line in lines if "-->|" in line]
    assert "  n11 -->|WAS_DERIVED_FROM| n5" in arrows
    doc = json.loads(invoke("trace", run_id, *ALICE, "--format", "json").out)
    assert len(arrows) == len(doc["edges"])


def test_runs_lists_recent_runs(clean_db, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    rec = RunRecorder(clean_db)
    first = record_full_run(rec)
    second = rec.start_run(request(question="Who owned checkout at 03:12?")).run_id
    res = invoke("runs", *ALICE, "--json")
    assert res.code == 0, res
    runs = json.loads(res.out)["runs"]
    assert [(r["run_id"], r["status"]) for r in runs] == [
        (second, "incomplete"),
        (first, "complete"),
    ]
    assert runs[1]["question"].startswith("Was release") and runs[1]["subject_id"] == "user:alice"
    assert runs[1]["stop_reason"] == "evidence_sufficient" and runs[1]["started_at"].endswith("Z")
    text = invoke("runs", *ALICE, "--limit", "1")
    assert text.code == 0 and second in text.out and first not in text.out
    assert "incomplete" in text.out and "Who owned checkout" in text.out


def test_runs_on_an_empty_graph(clean_db, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    assert invoke("runs", *ALICE).out.strip() == "no runs recorded"
    assert json.loads(invoke("runs", *ALICE, "--json").out) == {"runs": []}


@pytest.mark.parametrize("limit", ["0", "-1", "1001", "abc", "1e3", "", "9" * 40])
def test_runs_rejects_a_bad_limit(cli_env, invoke, limit: str) -> None:  # type: ignore[no-untyped-def]
    res = invoke("runs", *ALICE, "--limit", limit, "--json")
    assert res.code == 2, res
    assert json_error(res)["code"] == "bad_input"
    assert len(res.err.strip().splitlines()) == 1 and res.err.startswith("error: ")


@pytest.mark.parametrize(
    "run_id",
    [
        "run-does-not-exist",
        "x" * 5000,
        "run-\x00\x1b[31m",
        " run-1",
        "'; MATCH (n) DETACH DELETE n //",
    ],
)
def test_trace_of_an_unknown_or_hostile_run_id_is_one_line_exit_2(  # type: ignore[no-untyped-def]
    clean_db, cli_env, invoke, run_id: str
) -> None:
    keep = RunRecorder(clean_db).start_run(request()).run_id
    for fmt in ("tree", "json", "mermaid"):
        res = invoke("trace", run_id, *ALICE, "--format", fmt)
        assert res.code == 2, res
        # In the JSON format the error is one JSON document on stdout (docs/contracts.md).
        assert json_error(res) if fmt == "json" else res.out == "", res
        assert "\x1b" not in res.out
        assert len(res.err.strip().splitlines()) == 1 and res.err.startswith("error: ")
        assert "\x1b" not in res.err
    # Nothing was deleted by the hostile id.
    assert invoke("trace", keep, *ALICE, "--format", "json").code == 0


@pytest.mark.parametrize("fmt", ["dot", "", "JSON", "tree;rm"])
def test_trace_rejects_an_unknown_format(cli_env, invoke, fmt: str) -> None:  # type: ignore[no-untyped-def]
    res = invoke("trace", "run-1", *ALICE, "--format", fmt)
    assert res.code == 2 and res.out == "" and len(res.err.strip().splitlines()) == 1


def test_trace_and_runs_without_neo4j_exit_4(monkeypatch, invoke) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:9")
    monkeypatch.setenv("NEO4J_PASSWORD", "x")
    for args in (("runs", *ALICE), ("trace", "run-1", *ALICE)):
        res = invoke(*args)
        assert res.code == 4, res
        assert len(res.err.strip().splitlines()) == 1


def test_a_partial_run_id_names_the_readers_runs_that_start_with_it(  # type: ignore[no-untyped-def]
    clean_db, cli_env, invoke
) -> None:
    """Finding m7: `trace run-a06a2c1b` (a run id cut short when pasted) said only "unknown
    run". It says that run ids are whole and which of the reader's own runs start with it;
    never another subject's (but under audit, its tenant's) and never another tenant's."""
    assert invoke("ingest", str(IDENTITY / "initech-same-ids.yaml")).code == 0
    rec = RunRecorder(clean_db)
    first = record_full_run(rec)
    alices = [first] + [rec.start_run(request(f"question {n}")).run_id for n in range(3)]
    bob = rec.start_run(request("bob's", subject_id="acme/user:bob")).run_id
    # Another tenant's subject of the same id (initech/user:alice): never named to acme's.
    other = rec.start_run(request("initech's", subject_id="initech/user:alice")).run_id
    newest = [r["run_id"] for r in json.loads(invoke("runs", *ALICE, "--json").out)["runs"]]
    assert sorted(newest) == sorted(alices)
    whole = "run ids are whole (run- and 32 hex digits)"

    def line(*args: str) -> str:
        res = invoke(*args)
        assert res.code == 2 and res.out == "", res
        return res.err

    for command in ("trace", "replay", "verify"):
        assert line(command, first[:14], *ALICE) == (
            f"error: unknown run {first[:14]}: {whole}; your runs starting with it: {first}\n"
        )
    # The id without `run-`, or in capitals: the same runs.
    assert line("trace", first[4:14], *ALICE).endswith(f"starting with it: {first}\n")
    assert line("trace", first.upper(), *ALICE).endswith(f"starting with it: {first}\n")
    # A prefix many share: the newest three, and that there are more.
    assert line("trace", "run-", *ALICE) == (
        f"error: unknown run run-: {whole}; your runs starting with it: "
        f"{', '.join(newest[:3])}, and more (investigator runs lists them)\n"
    )
    # Another tenant's run and another subject's are answered as an id never recorded.
    none = f"{whole}; none of your runs starts with it (investigator runs lists them)\n"
    for typed in (other[:14], bob[:14], "run-0000"):
        assert line("trace", typed, *ALICE) == f"error: unknown run {typed}: {none}", typed
    # A whole id of another tenant's run: the line it always was.
    assert line("trace", other, *ALICE) == f"error: unknown run {other}\n"
    # An auditor reads the tenant's runs: bob's is named, initech's never.
    auditor = ("--subject", "acme/user:auditor", "--purpose", "audit")
    assert line("trace", bob[:14], *auditor) == (
        f"error: unknown run {bob[:14]}: {whole}; your tenant's runs starting with it: {bob}\n"
    )
    assert "none of your tenant's runs starts with it" in line("trace", other[:14], *auditor)


def test_a_run_id_typed_in_capitals_names_the_readers_run_in_lower_case(  # type: ignore[no-untyped-def]
    clean_db, cli_env, invoke
) -> None:
    """Run ids are lower-case (`run-` and 32 hex digits). One typed in capitals, whole or a
    part (`RUN-54298D42`, `Run-54298d42`), is refused with one line, exit 2, that says so
    and names the reader's own run it is, in lower case; never another subject's or another
    tenant's run. Before, the line said only that run ids are whole, for a whole id too."""
    assert invoke("ingest", str(IDENTITY / "initech-same-ids.yaml")).code == 0
    rec = RunRecorder(clean_db)
    mine = record_full_run(rec)
    bob = rec.start_run(request("bob's", subject_id="acme/user:bob")).run_id
    other = rec.start_run(request("initech's", subject_id="initech/user:alice")).run_id
    lower = "run ids are whole and lower-case (run- and 32 hex digits)"
    typed_forms = (mine.upper(), "Run-" + mine[4:], mine[:14].upper(), "Run-" + mine[4:14])
    for command in ("trace", "replay", "verify"):
        for typed in typed_forms:
            res = invoke(command, typed, *ALICE)
            assert (res.code, res.out) == (2, ""), res
            assert res.err == (
                f"error: unknown run {typed}: {lower}; your runs starting with it: {mine}\n"
            ), res.err
    # Another subject's run and another tenant's, in capitals: as an id never recorded.
    for typed in (bob.upper(), other.upper(), other[:14].upper()):
        res = invoke("trace", typed, *ALICE)
        assert res.code == 2, res
        assert res.err == (
            f"error: unknown run {typed}: {lower}; none of your runs starts with it "
            "(investigator runs lists them)\n"
        ), res.err
