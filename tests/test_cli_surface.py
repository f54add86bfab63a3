"""What the user reads, through the real CLI on a real Neo4j with the demo dataset.

- Ctrl-C exits 130 with one line, the run is marked failed (stop reason `interrupted`), and
  `replay` says plainly that an interrupted run has no pack to compare instead of printing a
  hash next to itself (issues 16, 18).
- A `--service` that resolves to nothing is said so in one line, with visible close matches,
  never another tenant's (issue 10).
- `runbook --error-code` names the owner to page (the service's owner at as_of) as
  `--service` does, and the runbook's own owner as such (issue 12).
- `runbook --alert` with no runbook says why: none is linked, and when the alert fired
  (issue 13).
- Every `--help` example of these commands runs as written; `runs --limit` shows N (issue 17).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import neo4j
import pytest

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO / "datasets" / "payments-incident"
QUESTION = "Was the 10:02 release of payment-api related to the PAY-4097 errors?"
GLOBEX = ("globex", "svc:globex-payment-api")


@pytest.fixture(scope="module")
def demo(demo_graph: neo4j.Driver) -> neo4j.Driver:
    """The demo dataset, ingested once for this module."""
    return demo_graph


def _process(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "investigator", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "INVESTIGATOR_WARM": "0"},
    )


def _run_started(driver: neo4j.Driver, question: str) -> bool:
    # The run's first write (its CtxRun, status incomplete) overlaps its first round.
    records, _, _ = driver.execute_query(
        "MATCH (r:CtxRun {question: $q, status: 'incomplete'}) RETURN count(r) AS c",
        q=question,
    )
    return int(records[0]["c"]) > 0


def _interrupt_mid_run(driver: neo4j.Driver, question: str) -> tuple[int, str, str]:
    """Start `investigate`, press Ctrl-C once its run has started.

    The tenant's ledger head is held under a write lock meanwhile, so the run cannot finish
    (its finish waits for that lock) and the signal always lands mid-run, however fast the
    run is. The lock is let go once the signal is sent: the run then records its failure.
    """
    with driver.session() as session, session.begin_transaction() as held:
        held.run(
            "MERGE (h:CtxLedgerHead {tenant: 'acme'}) "
            "ON CREATE SET h.seq = -1, h.created_by_test = true "
            "SET h.held_by_test = true"
        ).consume()
        proc = _process(
            "investigate", question, "--service", "svc:payment-api", "--subject", "acme/user:bob"
        )
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if _run_started(driver, question):
                time.sleep(0.3)  # into its finish, waiting for the ledger head
                proc.send_signal(signal.SIGINT)
                break
            time.sleep(0.02)
        time.sleep(0.3)  # the signal lands while the lock is still held
        held.rollback()
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


# -- issues 18 and 16: Ctrl-C, then replaying the failed run ---------------------------------


def test_ctrl_c_exits_130_and_replay_explains_the_failed_run(  # type: ignore[no-untyped-def]
    demo: neo4j.Driver, cli_env, invoke
) -> None:
    question = f"{QUESTION} (interrupted)"
    code, out, err = _interrupt_mid_run(demo, question)
    assert code == 130, (code, out, err)
    assert err.splitlines() == ["error: interrupted (Ctrl-C)"], repr(err)  # no empty line
    assert "Traceback" not in err
    runs = json.loads(
        invoke("runs", "--subject", "acme/user:alice", "--purpose", "audit", "--json").out
    )["runs"]
    failed = [r for r in runs if r["question"] == question]
    assert [(r["status"], r["stop_reason"]) for r in failed] == [("failed", "interrupted")], (
        json.dumps(failed, indent=1)
    )
    run_id = failed[0]["run_id"]

    audit = ("--subject", "acme/user:alice", "--purpose", "audit")
    text = invoke("replay", run_id, *audit)
    assert text.code == 1, text
    line = next(x for x in text.out.splitlines() if x.startswith("pack_hash_match:"))
    assert "not compared: the run was interrupted (Ctrl-C) before it finished" in line, line
    # Never a hash shown next to itself as "recorded" and "replayed".
    hashes = re.findall(r"sha256:[0-9a-f]{64}", line)
    assert len(hashes) == len(set(hashes)) and "replayed sha256" not in line, line
    assert "run_failed" in text.out and "run_failed" in text.err

    doc = json.loads(invoke("replay", run_id, *audit, "--json").out)
    assert doc["verified"] is False and doc["pack_hash_match"] is False
    assert doc["status"] == "failed"
    assert doc["replayed_pack_hash"] is None  # nothing was re-run
    assert doc["pack_hash_note"].startswith("not compared: the run was interrupted (Ctrl-C)")
    if doc["recorded_pack_hash"] is None:
        assert doc["pack_hash_note"].endswith("no pack was recorded")


# -- an open root-cause question lists the candidate causes ---------------------------------


def test_what_caused_lists_the_candidate_causes_without_a_verdict(  # type: ignore[no-untyped-def]
    demo: neo4j.Driver, cli_env, invoke
) -> None:
    args = ("investigate", "What caused PAY-4097?", "--subject", "acme/user:bob")
    text = invoke(*args, "--as-of", "2026-07-23T12:00:00Z")
    assert text.code == 0, text
    heading = text.out.split("Candidate causes\n", 1)
    assert len(heading) == 2 and "Confounders" not in text.out, text.out
    listed = heading[1].split("\n\n", 1)[0]
    assert "deploy:release-2026.07.23.1" in listed and "change:risk-rules-RR-2026-07-23a" in listed
    assert "Candidate cause: release deploy:release-2026.07.23.1" in text.out
    # Each line says what the mechanism evidence says of that candidate.
    lines = {line.split()[0]: line for line in listed.splitlines()}
    assert ": ruled out by ev:" in lines["change:risk-rules-RR-2026-07-23a"], listed
    assert ": named as the cause by ev:" in lines["deploy:release-2026.07.23.1"], listed

    doc = json.loads(invoke(*args, "--as-of", "2026-07-23T12:00:00Z", "--json").out)
    assert doc["verdict"] is None
    assert sorted(c["element_id"] for c in doc["confounders"]) == [
        "change:risk-rules-RR-2026-07-23a",
        "deploy:release-2026.07.23.1",
    ]
    assessed = {c["element_id"]: c["assessment"] for c in doc["confounders"]}
    assert assessed == {
        "change:risk-rules-RR-2026-07-23a": "ruled_out",
        "deploy:release-2026.07.23.1": "named_as_cause",
    }


def test_what_changed_lists_the_changes_under_their_own_heading(  # type: ignore[no-untyped-def]
    demo: neo4j.Driver, cli_env, invoke
) -> None:
    text = invoke("investigate", "What changed before the PAY-4097 errors?", "--subject",
                  "acme/user:bob", "--as-of", "2026-07-23T12:00:00Z")  # fmt: skip
    assert text.code == 0, text
    listed = text.out.split("Changes before the first error\n", 1)[1].split("\n\n", 1)[0]
    lines = {line.split()[0]: line for line in listed.splitlines()}
    assert set(lines) == {"deploy:release-2026.07.23.1", "change:risk-rules-RR-2026-07-23a"}
    assert "Candidate causes" not in text.out and "Confounders" not in text.out
    assert "verdict:" not in text.out


# -- issue 10: a --service that resolves to nothing -------------------------------------------


@pytest.mark.parametrize(
    "typed", ["svc:Payment-API", "payment_api", "payments-api", "svc:paymnet-api"]
)
def test_investigate_says_an_unresolved_service_did_not_resolve(  # type: ignore[no-untyped-def]
    demo: neo4j.Driver, cli_env, invoke, typed: str
) -> None:
    args = ("investigate", "who owned it then?", "--service", typed)
    res = invoke(*args, "--subject", "acme/user:bob", "--max-rounds", "1")
    assert res.code == 0, res  # a partial answer is still an answer (design section 9)
    notes = [x for x in res.out.splitlines() if x.startswith("Service ")]
    assert len(notes) == 1, res.out
    assert f"--service {typed!r} did not resolve to a service visible to acme/user:bob" in notes[0]
    assert "did you mean svc:payment-api?" in notes[0]
    assert not any(g in res.out + res.err for g in GLOBEX)

    as_json = invoke(*args, "--subject", "acme/user:bob", "--max-rounds", "1", "--json")
    assert as_json.code == 0, as_json
    doc = json.loads(as_json.out)  # stdout is exactly one document; the note is on stderr
    assert as_json.err.startswith("note: --service") and "svc:payment-api" in as_json.err
    # The document says it too (a script or agent reads no stderr), and does not echo the
    # unresolved id as the service the answer is about.
    [unresolved] = doc["unresolved_names"]
    assert unresolved["text"] == typed and unresolved["given_as"] == "service"
    assert unresolved["suggestions"] == ["svc:payment-api"]
    assert unresolved["note"] == as_json.err.splitlines()[0].removeprefix("note: ")
    assert doc["service_id"] is None


def test_only_an_unresolved_service_gets_a_note_with_its_tenants_ids(cli_env, demo, invoke) -> None:  # type: ignore[no-untyped-def]
    res = invoke(
        "investigate", "who owned it then?", "--service", "svc:Payment-API",
        "--subject", "globex/user:mallory", "--max-rounds", "1",
    )  # fmt: skip
    assert res.code == 0, res
    assert "did you mean svc:globex-payment-api?" in res.out
    # Two tenants' subjects may share an id: each answer names its tenant.
    for subject, tenant in (("globex/user:mallory", "globex"), ("acme/user:alice", "acme")):
        card = json.loads(
            invoke("runbook", "--service", "svc:x", "--subject", subject, "--json").out
        )
        assert (card["tenant"], card["subject"]) == (tenant, subject.split("/", 1)[1])
    assert "svc:payment-api" not in res.out.replace("svc:globex-payment-api", "")
    # An id or a name that resolves gets no note.
    for given in ("svc:payment-api", "payment-api"):
        res = invoke(
            "investigate", "who owned it then?", "--service", given,
            "--subject", "acme/user:bob", "--max-rounds", "1",
        )  # fmt: skip
        assert res.code == 0, res
        assert "did not resolve" not in res.out, res.out


@pytest.mark.parametrize(
    ("question", "typed", "hint"),
    [
        ("Who owns payments-api?", "payments-api", "did you mean svc:payment-api?"),
        ("What caused PAY-4098?", "PAY-4098", "did you mean err:PAY-4097?"),
        ("Who owns svc:Payment-API?", "svc:Payment-API", "did you mean svc:payment-api?"),
        # A slip inside one word shares no term with the name: fuzzy terms find it.
        (
            "Which runbook applies when PaymentApiHighErrrorRate fires?",
            "PaymentApiHighErrrorRate",
            "did you mean alert:PaymentApiHighErrorRate?",
        ),
    ],
)
def test_a_name_in_the_question_that_resolves_to_nothing_is_said_with_close_matches(  # type: ignore[no-untyped-def]
    demo: neo4j.Driver, cli_env, invoke, question: str, typed: str, hint: str
) -> None:
    # Before, the answer ended partial with no claim and no word about the typo.
    res = invoke("investigate", question, "--subject", "acme/user:bob", "--max-rounds", "1")
    assert res.code == 0, res
    notes = [x for x in res.out.splitlines() if x.startswith("Name ")]
    assert notes == [
        f"Name       {typed!r} in the question matched nothing visible to acme/user:bob; "
        f"{hint} The answer does not cover it."
    ], res.out
    as_json = invoke("investigate", question, "--subject", "acme/user:bob", "--max-rounds", "1",
                     "--json")  # fmt: skip
    doc = json.loads(as_json.out)  # stdout is exactly one document; the note is on stderr
    assert as_json.err == f"note: {notes[0].removeprefix('Name       ')}\n"
    # In the document too: "no OWNS relationship" alone read as "nobody owned it".
    assert doc["unresolved_names"] == [
        {
            "text": typed,
            "given_as": "question",
            "suggestions": [hint.removeprefix("did you mean ").removesuffix("?")],
            "note": notes[0].removeprefix("Name       "),
        }
    ]
    # `subject_id` is unique only within a tenant: the document names the tenant too.
    assert (doc["tenant"], doc["subject_id"]) == ("acme", "user:bob")


def test_a_run_id_in_the_question_points_to_trace_and_replay(  # type: ignore[no-untyped-def]
    demo: neo4j.Driver, cli_env, invoke
) -> None:
    """Finding m13: a run id pasted into a question ("why did run-e8a0... say likely?") got
    "matched nothing visible ...; no visible id is close to it". The line says what reads a
    run; nothing is looked up, so it is the same for bob's own run, another tenant's, a part
    of one, or none."""
    own = invoke("investigate", "Who owns payment-api?", "--subject", "acme/user:bob", "--json")
    mine = json.loads(own.out)["run_id"]
    for typed in (mine, mine[:12], "run-" + "0" * 32):
        question = f"Why did {typed} say likely?"
        res = invoke("investigate", question, "--subject", "acme/user:bob", "--max-rounds", "1")
        assert res.code == 0, res
        notes = [x for x in res.out.splitlines() if x.startswith("Name ")]
        note = (
            f"{typed!r} in the question is a run id: an investigation reads the Knowledge "
            f"Graph, not recorded runs; `investigator trace {typed} --subject acme/user:bob` "
            "shows what that run read and claimed, `investigator replay "
            f"{typed} --subject acme/user:bob` checks that it reproduces (served: the `trace` "
            "and `replay` tools). The answer does not cover it."
        )
        assert notes == [f"Name       {note}"], res.out
        as_json = invoke("investigate", question, "--subject", "acme/user:bob", "--max-rounds",
                         "1", "--json")  # fmt: skip
        doc = json.loads(as_json.out)
        assert doc["unresolved_names"] == [
            {"text": typed, "given_as": "question", "suggestions": [], "note": note}
        ]


def test_a_run_id_in_capitals_in_the_question_points_to_trace_and_replay(  # type: ignore[no-untyped-def]
    demo: neo4j.Driver, cli_env, invoke
) -> None:
    """A run id typed in capitals ("what happened in RUN-54298D42?", `Run-54298d42`) is a
    run id too: the same Name line as in lower case, its commands naming the id as run ids
    are written (lower case). Before, it was no name at all: the line was missing and its
    words were said unread ("the question's words 'happened RUN 54298D42' ...")."""
    own = invoke("investigate", "Who owns payment-api?", "--subject", "acme/user:bob", "--json")
    mine = json.loads(own.out)["run_id"]
    for typed in (mine[:12].upper(), "Run-" + mine[4:12], "RUN-" + mine[4:]):
        question = f"what happened in {typed}?"
        res = invoke("investigate", question, "--subject", "acme/user:bob", "--max-rounds", "1")
        assert res.code == 0, res
        notes = [x for x in res.out.splitlines() if x.startswith("Name ")]
        run = typed.lower()
        note = (
            f"{typed!r} in the question is a run id: an investigation reads the Knowledge "
            f"Graph, not recorded runs; `investigator trace {run} --subject acme/user:bob` "
            "shows what that run read and claimed, `investigator replay "
            f"{run} --subject acme/user:bob` checks that it reproduces (served: the `trace` "
            "and `replay` tools). The answer does not cover it."
        )
        assert notes == [f"Name       {note}"], res.out
        # Its words are a name, not words the question asks that nothing reads.
        assert "the question's words 'happened' ask something it does not read" in res.out
        as_json = invoke("investigate", question, "--subject", "acme/user:bob", "--max-rounds",
                         "1", "--json")  # fmt: skip
        doc = json.loads(as_json.out)
        assert doc["unresolved_names"] == [
            {"text": typed, "given_as": "question", "suggestions": [], "note": note}
        ]


def test_a_name_of_another_tenant_or_a_hidden_record_gets_no_hint_about_it(  # type: ignore[no-untyped-def]
    demo: neo4j.Driver, cli_env, invoke
) -> None:
    # globex's service, asked by acme's bob: nothing visible, and nothing of globex named.
    res = invoke("investigate", "Who owns globex-payment-api?", "--subject", "acme/user:bob",
                 "--max-rounds", "1")  # fmt: skip
    assert "'globex-payment-api' in the question matched nothing visible" in res.out
    assert "no visible id is close to it." in res.out
    assert "svc:globex" not in res.out
    # The incident is hidden from carol (no `incident` label): no hint names it.
    carol = invoke("investigate", "What happened in inc:2026-07-23-payment?", "--subject",
                   "acme/user:carol", "--max-rounds", "1")  # fmt: skip
    assert "'inc:2026-07-23-payment' in the question matched nothing visible" in carol.out
    assert "inc:2026-07-23-payments" not in carol.out
    slip = invoke("investigate", "What happened in inc:2026-07-23-paymnets?", "--subject",
                  "acme/user:carol", "--max-rounds", "1")  # fmt: skip
    assert "no visible id is close to it." in slip.out
    assert "inc:2026-07-23-payments" not in slip.out
    # bob may see it: his hint names it.
    bob = invoke("investigate", "What happened in inc:2026-07-23-payment?", "--subject",
                 "acme/user:bob", "--max-rounds", "1")  # fmt: skip
    assert "did you mean inc:2026-07-23-payments?" in bob.out
    # Names that resolve get no line.
    ok = invoke("investigate", "Who owns payment-api?", "--subject", "acme/user:bob")
    assert "Name " not in ok.out and "matched nothing" not in ok.out


@pytest.mark.parametrize(
    "typed", ["svc:Payment-API", "payment_api", "payments-api", "svc:paymnet-api"]
)
def test_runbook_suggests_visible_close_matches(cli_env, demo, invoke, typed: str) -> None:  # type: ignore[no-untyped-def]
    res = invoke("runbook", "--service", typed, "--subject", "acme/user:bob")
    assert res.code == 0, res
    first = res.out.splitlines()[0]
    assert first == (
        f"No runbook: no service matching {typed!r} is visible to acme/user:bob; "
        "did you mean svc:payment-api?"
    ), res.out
    assert "Owner     unknown: the target did not resolve" in res.out
    assert not any(g in res.out for g in GLOBEX)
    doc = json.loads(
        invoke("runbook", "--service", typed, "--subject", "acme/user:bob", "--json").out
    )
    assert doc["runbook"] is None and doc["owner"] is None
    assert doc["suggestions"] == ["svc:payment-api"]


@pytest.mark.parametrize("typed", ["payment", "svc:payment", "pay", "Paym"])
def test_a_name_typed_in_part_suggests_every_visible_id_it_starts(  # type: ignore[no-untyped-def]
    cli_env, demo, invoke, typed: str
) -> None:
    """Finding 16: `--service payment` suggested only svc:payment-db (the nearer spelling),
    never svc:payment-api, the incident's service; `--service pay` said "no visible id is
    close to it". Both ids start with it: both are named, by id; globex's never."""
    res = invoke("runbook", "--service", typed, "--subject", "acme/user:bob")
    assert res.code == 0, res
    assert res.out.splitlines()[0] == (
        f"No runbook: no service matching {typed!r} is visible to acme/user:bob; "
        "did you mean svc:payment-api or svc:payment-db?"
    ), res.out
    assert not any(g in res.out for g in GLOBEX)
    doc = json.loads(
        invoke("runbook", "--service", typed, "--subject", "acme/user:bob", "--json").out
    )
    assert doc["suggestions"] == ["svc:payment-api", "svc:payment-db"]
    # globex's subject: its own service of that name only.
    mallory = invoke("runbook", "--service", typed, "--subject", "globex/user:mallory", "--json")
    assert json.loads(mallory.out)["suggestions"] == ["svc:globex-payment-api"], mallory
    # investigate says it of --service alike.
    asked = invoke("investigate", "Who owns it?", "--service", typed, "--subject",
                   "acme/user:bob", "--max-rounds", "1", "--json")  # fmt: skip
    names = json.loads(asked.out)["unresolved_names"]
    assert [(n["given_as"], n["suggestions"]) for n in names] == [
        ("service", ["svc:payment-api", "svc:payment-db"])
    ], names


def test_runbook_with_nothing_close_says_so(cli_env, demo, invoke) -> None:  # type: ignore[no-untyped-def]
    res = invoke("runbook", "--service", "svc:no-such-thing", "--subject", "acme/user:bob")
    assert res.code == 0, res
    assert "no visible id is close to it" in res.out.splitlines()[0]


# -- issue 12: the owner to page, whichever flag ----------------------------------------------


def test_error_code_and_service_name_the_same_owner_to_page(cli_env, demo, invoke) -> None:  # type: ignore[no-untyped-def]
    when = ("--as-of", "2026-07-24T12:00:00Z", "--subject", "acme/user:bob", "--json")
    by_code = json.loads(invoke("runbook", "--error-code", "PAY-4097", *when).out)
    by_service = json.loads(invoke("runbook", "--service", "svc:payment-api", *when).out)
    assert by_code["runbook"]["id"] == by_service["runbook"]["id"] == "runbook:payment-recovery@v3"
    # payment-api moved to payments-platform on 07-24: that is the team to page.
    assert by_code["owner"] == by_service["owner"] == "team:payments-platform"
    assert by_code["owner_detail"]["basis"].startswith("service svc:payment-api")
    # The runbook's own OWNS edge (v3 is payments-core's) is shown as such.
    assert by_code["runbook_owner"]["team"] == "team:payments-core"
    assert by_code["runbook_owner"]["basis"] == "runbook runbook:payment-recovery@v3"
    card = invoke("runbook", "--error-code", "PAY-4097", *when[:-1]).out
    owner_lines = [x for x in card.splitlines() if "owner" in x.lower()]
    assert owner_lines[0].startswith("Owner     team:payments-platform"), card
    assert "runbook's own owner: team:payments-core" in owner_lines[1], card


def test_error_code_on_the_incident_day_pages_the_owner_then(cli_env, demo, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(
        invoke(
            "runbook", "--error-code", "PAY-4097", "--as-of", "2026-07-23T10:30:00Z",
            "--subject", "acme/user:bob", "--json",
        ).out
    )  # fmt: skip
    assert doc["owner"] == "team:payments-core"
    # It emitted PAY-4097 at as_of: the owner comes through that edge.
    assert doc["owner_detail"]["basis"] == "service svc:payment-api (emitted it at as_of)"


# -- runbook --known-at: what on-call could have found then -----------------------------------


def test_runbook_known_at_shows_the_version_known_then(cli_env, demo, invoke) -> None:  # type: ignore[no-untyped-def]
    """v4 (valid from 07-25) was recorded 07-24 17:00: known after, not before."""
    ask = ("runbook", "--service", "svc:payment-api", "--as-of", "2026-07-26T00:00:00Z",
           "--subject", "acme/user:bob", "--json")  # fmt: skip
    now = json.loads(invoke(*ask).out)
    assert now["runbook"]["id"] == "runbook:payment-recovery@v4"  # the control
    after = json.loads(invoke(*ask, "--known-at", "2026-07-24T18:00:00Z").out)
    assert after["runbook"]["id"] == "runbook:payment-recovery@v4"
    assert after["known_at"] == "2026-07-24T18:00:00Z"
    before = invoke(*ask, "--known-at", "2026-07-24T12:00:00Z")
    assert before.code == 0, before
    doc = json.loads(before.out)
    assert doc["runbook"] is None and doc["known_at"] == "2026-07-24T12:00:00Z"
    assert "runbook:payment-recovery@v4" not in before.out  # not known yet, not even rejected
    # The lookup is recorded at that known_at: its replay reproduces it.
    replay = invoke("replay", doc["run_id"], "--subject", "acme/user:bob", "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["verified"] is True


@pytest.mark.parametrize(
    ("known_at", "says"),
    [
        ("2099-01-01T00:00:00Z", "is in the future"),
        ("2026-07-24T12:00:00", "has no zone"),
        # a day alone: it said "has no zone", which a time-less date does not explain
        (
            "2026-07-24",
            "is a day without a time: write its instant with a zone, e.g. 2026-07-24T00:00:00Z",
        ),
        ("yesterday", "is not an ISO-8601 time"),
        ("2026-13-01T00:00:00Z", "is not an ISO-8601 time"),
    ],
)
def test_runbook_known_at_refuses_bad_times_in_one_line(  # type: ignore[no-untyped-def]
    cli_env, demo, invoke, driver, known_at: str, says: str
) -> None:
    def runs() -> int:
        records, _, _ = driver.execute_query("MATCH (r:CtxRun) RETURN count(r) AS c")
        return int(records[0]["c"])

    before = runs()
    res = invoke("runbook", "--service", "svc:payment-api", "--known-at", known_at,
                 "--subject", "acme/user:bob")  # fmt: skip
    assert res.code == 2, res
    assert res.out == "" and res.err.count("\n") == 1 and says in res.err, res
    assert runs() == before  # nothing recorded


# -- issue 13: an alert with no runbook ---------------------------------------------------------


def test_alert_without_a_runbook_says_the_real_reason(cli_env, demo, invoke) -> None:  # type: ignore[no-untyped-def]
    res = invoke("runbook", "--alert", "PaymentApiHighErrorRate", "--subject", "acme/user:bob")
    assert res.code == 0, res
    first = res.out.splitlines()[0]
    assert first.startswith(
        "No runbook: no runbook is linked to alert:PaymentApiHighErrorRate (none APPLIES_TO it)"
    ), first
    assert "it fired on svc:payment-api 2026-07-23T10:03:10Z -> 2026-07-23T10:50:00Z" in first, (
        first
    )
    assert "no runbook version is valid at as_of" not in res.out
    # The alert's OWNS edge is open (valid since 2025-06-01): its owner now.
    assert "Owner     team:payments-core  via alert alert:PaymentApiHighErrorRate" in res.out


def test_an_alert_firing_not_yet_recorded_is_not_told_as_hidden(cli_env, demo, invoke) -> None:  # type: ignore[no-untyped-def]
    # The firing was recorded at 10:03:12: at known_at 10:03:11 oncall read "it fired on no
    # service visible to user:oncall", which reads like an access rule hiding it.
    res = invoke("runbook", "--alert", "PaymentApiHighErrorRate", "--as-of", "2026-07-23T10:03:09Z",
                 "--known-at", "2026-07-23T10:03:11Z", "--subject", "acme/user:oncall")  # fmt: skip
    assert res.code == 0, res
    first = res.out.splitlines()[0]
    assert first.endswith(
        "it fired on no service that acme/user:oncall may read, as recorded by known_at "
        "2026-07-23T10:03:11Z"
    ), first


# -- issue 17: --help examples run as written ---------------------------------------------------


def _examples(command: list[str], invoke) -> list[list[str]]:  # type: ignore[no-untyped-def]
    text = invoke(*command, "--help").out
    block = text.split("Example", 1)[1].split("\n\n", 1)[0]
    lines = block.replace("\\\n", " ").splitlines()[1:]
    found = []
    for line in lines:
        words = shlex.split(line.split("#", 1)[0], posix=True)
        while words and "=" in words[0]:
            words = words[1:]  # an environment assignment before the command
        if words and words[0] == "investigator":
            found.append(words[1:])
    return found


# The commands whose examples lacked a --subject (the others' examples were checked by hand:
# `verify` depends on this machine's anchors, which a wiped test database contradicts).
@pytest.mark.parametrize("command", [["runbook"], ["warm", "stop"]])
def test_help_examples_run_as_written(cli_env, demo, invoke, monkeypatch, command) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("INVESTIGATOR_TENANT", raising=False)  # as a user's shell has it
    examples = [
        e for e in _examples(command, invoke) if "run-0123abcd" not in e and e[:1] != ["warm"]
    ]
    assert examples, command
    for example in examples:
        res = invoke(*example)
        assert res.code == 0, (example, res)


def test_integer_options_show_an_integer_metavar(cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    assert re.search(r"--limit N\s", invoke("runs", "--help").out)
    assert "TEXT" not in invoke("runs", "--help").out
    assert re.search(r"--runs N\s", invoke("db", "warm-plans", "--help").out)
    assert "--limit" in invoke("runs", "--limit", "x", "--subject", "acme/user:bob").err


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["runs", "--subject", "acme/user:bob", "--limit", "１"], "--limit"),
        (["runs", "--subject", "acme/user:bob", "--limit", "1_0"], "--limit"),
        (["runs", "--subject", "acme/user:bob", "--limit", " 5"], "--limit"),
        (["investigate", "q", "--subject", "acme/user:bob", "--max-rounds", "٣"], "--max-rounds"),
        (
            ["investigate", "q", "--subject", "acme/user:bob", "--budget-tokens", "9_000"],
            "--budget",
        ),
        (["investigate", "q", "--subject", "acme/user:bob", "--deadline-seconds", "nan"], "--dead"),
        (["investigate", "q", "--subject", "acme/user:bob", "--deadline-seconds", "inf"], "--dead"),
        (["investigate", "q", "--subject", "acme/user:bob", "--deadline-seconds", "1e3"], "--dead"),
        (["ingest", "datasets/payments-incident", "--batch-size", "５"], "--batch-size"),
        (["generate", "--services", "２", "--out", "/tmp/never.json"], "--services"),
        (["db", "warm-plans", "--runs", "２"], "--runs"),
    ],
)
def test_numbers_are_written_in_ascii_digits(  # type: ignore[no-untyped-def]
    invoke, monkeypatch, args: list[str], option: str
) -> None:
    """Python's int() and float() take `１`, `٣`, `1_0`, padding, `nan` and `inf`: a count or a
    number of seconds is none of these. One line, exit 2, before any connection."""
    monkeypatch.setenv("NEO4J_URI", "neo4j://127.0.0.1:1")
    monkeypatch.setenv("NEO4J_PASSWORD", "x")
    monkeypatch.setenv("INVESTIGATOR_WARM", "0")
    res = invoke(*args)
    assert res.code == 2, res
    assert res.err.count("\n") == 1 and option in res.err, res.err
    assert not Path("/tmp/never.json").exists()


def test_plain_numbers_still_work(cli_env, demo, invoke) -> None:  # type: ignore[no-untyped-def]
    res = invoke("runs", "--subject", "acme/user:bob", "--limit", "3", "--json")
    assert res.code == 0, res
    res = invoke(
        "investigate",
        "Who owned payment-api?",
        "--subject",
        "acme/user:bob",
        "--service",
        "svc:payment-api",
        "--max-rounds",
        "2",
        "--deadline-seconds",
        "30.5",
        "--json",
    )
    assert res.code == 0, res
