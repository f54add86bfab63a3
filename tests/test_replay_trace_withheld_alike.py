"""`replay` and `trace` withhold the same counts and hashes (docs/security.md rule 6), and an
auditor holding every label a run read is shown it whole, through the CLI on the real server.

An explorer's findings:
1. After an ACL tightening (`ingest ... --acl internal,pii --acl-change`), the on-call's
   `replay` of its own runbook run printed `rows hash ..., recorded [withheld] (0 rows now,
   4 recorded)` and the recorded answer's digest, both withheld by `trace`; the line also
   said "a record named above" though the record's line is below it (and withheld).
2. The auditor (every label bob's run read, purpose `audit`) was shown `rows=[withheld]` on
   every call that kept no record of its rows, and "hashes from #4 on withheld", though
   nothing of the run is withheld from it: the audit-only policy the auditor also reads
   (its `audit` purpose) made its re-read of one call differ from bob's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import REPO, import_runbook_folder, investigate_json, wipe

PAGE = "# {name}\n\nDisk full on the node: the disk is full.\n\n## Mitigation\n\nFree {name}.\n"
ONCALL = ("--subject", "acme/user:oncall")


def test_replay_withholds_the_count_and_answer_digest_trace_withholds(  # type: ignore[no-untyped-def]
    driver, cli_env, invoke, tmp_path: Path
) -> None:
    pages = tmp_path / "pages"
    pages.mkdir()
    for name in ("DiskFull", "DiskFilling", "DiskFullLogs", "DiskFullTmp"):
        (pages / f"{name}.md").write_text(PAGE.format(name=name), encoding="utf-8")
    import_runbook_folder(driver, invoke, pages)
    looked_up = invoke("runbook", "disk full", *ONCALL, "--json")
    assert looked_up.code == 0, looked_up
    run = json.loads(looked_up.out)["run_id"]
    before = invoke("replay", run, *ONCALL, "--json")
    assert before.code == 0, before
    digest = json.loads(before.out)["recorded_pack_hash"]
    assert digest and digest.startswith("sha256:"), before.out

    # The pages re-labelled with `pii`, which the on-call lacks.
    flags = ("--format", "markdown-runbooks", "--tenant", "acme", "--acl", "internal,pii")
    assert invoke("ingest", str(pages), *flags, "--acl-change").code == 0

    trace = invoke("trace", run, *ONCALL, "--json")
    assert trace.code == 0, trace
    nodes = [n for n in json.loads(trace.out)["nodes"] if n["kind"] == "tool_call"]
    calls = {n["properties"]["tool_call_id"]: n["properties"] for n in nodes}
    withheld = {c for c, p in calls.items() if p["rows_hash"] == "[withheld]"}
    assert withheld, "the premise: trace withholds a call's rows hash"
    assert all(calls[c]["row_count"] == "[withheld]" for c in withheld), calls
    # Nor does the call's recorded content repeat it (before: "row_count": 4 there).
    for node in nodes:
        if node["properties"]["tool_call_id"] in withheld:
            content = node["content"]
            assert (content["row_count"], content["truncated"]) == ("[withheld]",) * 2, content

    text = invoke("replay", run, *ONCALL)
    assert text.code == 3, text
    lines = {
        m.group(1): line
        for line in text.out.splitlines()
        if (m := re.search(r"tool call (tc-\S+) ", line))
    }
    searched = [lines[c] for c in withheld if c in lines and "rows hash" in lines[c]]
    assert searched, text.out
    for line in searched:
        # Before: "(0 rows now, 4 recorded)" beside the withheld hash.
        assert re.search(r"recorded \[withheld\] \(\d+ rows now, \[withheld\] recorded\)", line)
        # Before: "a record named above", though its line is below and withheld.
        assert "named above" not in line and "its data_not_visible line" in line, line
    # The recorded answer's digest is withheld as the chain hashes are (before: printed).
    assert digest not in text.out + text.err
    assert "pack_hash_match: false  (recorded [withheld], replayed sha256:" in text.out
    doc = json.loads(invoke("replay", run, *ONCALL, "--json").out)
    assert doc["recorded_pack_hash"] == "[withheld]", doc
    details = [d["detail"] for d in doc["drift"] if d["tool_call_id"] in withheld]
    assert not [d for d in details if re.search(r"\d+ recorded", d)], details


QUESTION = (
    "Was the 10:02 release of payment-api related to the PAY-4097 errors? Who owned "
    "payment-api at that moment? Which runbook version applied?"
)
AUDITOR = ("--subject", "acme/user:auditor", "--purpose", "audit")
# Lacks `incident` (the incident records bob's run read): withheld some of the run.
NARROW = """\
tenant: acme
principals:
  - {id: user:aud-internal, labels: [internal], purposes: [audit], source_id: src:iam,
     recorded_at: "2026-01-05T09:00:00Z"}
"""


def test_an_auditor_holding_every_label_the_run_read_is_shown_it_whole(  # type: ignore[no-untyped-def]
    driver, cli_env, invoke, tmp_path: Path
) -> None:
    wipe(driver)
    (tmp_path / "narrow.yaml").write_text(NARROW, encoding="utf-8")
    demo = REPO / "datasets" / "payments-incident"
    for args in (["schema", "apply"], ["ingest", str(demo)], ["ingest", str(tmp_path)]):
        assert invoke(*args).code == 0, args
    run = investigate_json(
        invoke, QUESTION, "--service", "svc:payment-api", "--as-of", "2026-07-23T10:03:00Z",
        "--subject", "acme/user:bob", "--deadline-seconds", "600",
    )["run_id"]  # fmt: skip
    own = invoke("trace", run, "--subject", "acme/user:bob")
    assert own.code == 0 and "rows=[withheld]" not in own.out, own
    head = own.out.splitlines()[-1]
    assert re.search(r"head sha256:[0-9a-f]{64}\)$", head), head

    # The auditor holds bob's labels and more (pii), and reads under `audit`, which the
    # demo's audit-only policy is open to: what bob's calls read it reads too.
    audited = invoke("trace", run, *AUDITOR)
    assert audited.code == 0, audited
    assert "rows=[withheld]" not in audited.out, audited.out
    assert "withheld" not in audited.out.splitlines()[-1]
    assert audited.out.splitlines()[-1] == head  # the chain's head, as bob is shown it
    doc = json.loads(invoke("trace", run, *AUDITOR, "--json").out)
    assert doc["hashes_withheld_from"] is None
    counts = [n["properties"]["row_count"] for n in doc["nodes"] if n["kind"] == "tool_call"]
    assert counts and all(isinstance(c, int) for c in counts), counts

    # A reader lacking `incident` is still withheld what it may not read.
    narrow = invoke("trace", run, "--subject", "acme/user:aud-internal", "--purpose", "audit")
    assert narrow.code == 0, narrow
    assert "rows=[withheld]" in narrow.out
    assert narrow.out.splitlines()[-1].endswith("they chain over content withheld from you)")
