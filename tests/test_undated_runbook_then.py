"""A runbook file states no validity: asked about "then" (the anchor event), or reached
through a pointer or as a fallback, the version shown is the one recorded by that time, not
a later re-import's text, on a real Neo4j (docs/runbooks.md, "A runbook that states no
validity").

Before, only the one explicit time of a question (or --as-of) got the rule: "which runbook
applied then?" claimed the re-import's text in force at the first error, a first error
before any import was answered at as_of alone and `complete`, and the runbook a pointer
points at, or a service's runbook shown as a fallback, was the newest import's at every
--as-of.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import neo4j
import pytest

FIXTURES = Path(__file__).parent / "fixtures"
CATALOG = FIXTURES / "runbooks" / "catalogs" / "acme.yaml"
BASE = "https://git.example.com/runbooks/blob/main/alerts"
OLD_STEP = "Fail over to the standby card-auth pool."
NEW_STEP = "Check the HSM first, then fail over to the standby pool."
OLD_QUEUE = "Scale the consumers up by two replicas."
NEW_QUEUE = "Pause the producers, then scale the consumers up."
SUBJECT = ("--subject", "user:oncall")


def _now() -> str:
    time.sleep(0.05)
    stamp = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    time.sleep(0.05)
    return stamp


def _emitted(path: Path, code: str, first_seen: str) -> Path:
    """An error code card-auth emitted, first seen at `first_seen`."""
    path.write_text(
        "tenant: acme\nnodes:\n"
        f"  - {{id: 'err:{code}', label: ErrorCode, name: {code}, acl: [internal], "
        f"source_id: src:test-catalog, valid_from: '2025-01-01T00:00:00Z', "
        f"props: {{code: {code}}}}}\n"
        "edges:\n"
        f"  - {{type: EMITTED, from: 'svc:card-auth', to: 'err:{code}', acl: [internal], "
        f"source_id: src:test-catalog, valid_from: '{first_seen}', "
        f"props: {{first_seen: '{first_seen}'}}}}\n",
        encoding="utf-8",
    )
    return path


def _write_folder(root: Path) -> Path:
    """card-auth's runbook, and a pointer the alert's rule links to another file."""
    folder = root / "rb"
    (folder / "alerts" / "old-op").mkdir(parents=True)
    (folder / "alerts" / "new-op").mkdir(parents=True)
    (folder / "card-auth-recovery.md").write_text(
        f"---\nservices: [svc:card-auth]\n---\n# Card auth recovery\n\n## Mitigation\n\n"
        f"{OLD_STEP}\n",
        encoding="utf-8",
    )
    (folder / "alerts" / "old-op" / "QueueBacklogHigh.md").write_text(
        "# QueueBacklogHigh\n\nThis alert has been moved to "
        f"[alerts/new-op/queue-backlog.md]({BASE}/new-op/queue-backlog.md)\n",
        encoding="utf-8",
    )
    (folder / "alerts" / "new-op" / "queue-backlog.md").write_text(
        f"# Queue backlog\n\n## Mitigation\n\n{OLD_QUEUE}\n", encoding="utf-8"
    )
    return folder


@pytest.fixture()
def history(driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """CARD-502 first seen in July; the folder imported; CARD-503 first seen; both runbooks
    edited and imported again. The times between those steps."""
    from test_runbook_lookup import wipe

    wipe(driver)
    assert invoke("ingest", str(CATALOG)).code == 0
    july = _emitted(tmp_path / "july.yaml", "CARD-502", "2026-07-01T10:00:00Z")
    assert invoke("ingest", str(july)).code == 0
    folder = _write_folder(tmp_path)
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "groups:\n- name: q\n  rules:\n  - alert: QueueBacklogHigh\n    expr: queue_depth > 1000\n"
        f"    annotations:\n      runbook_url: {BASE}/old-op/QueueBacklogHigh.md\n",
        encoding="utf-8",
    )
    args = ("--format", "markdown-runbooks", "--tenant", "acme", "--acl", "internal", "--trusted")
    times = {"before": _now()}
    assert invoke("ingest", str(folder), *args).code == 0
    ruled = invoke("ingest", str(rules), "--format", "prometheus-rules", "--tenant", "acme",
                   "--acl", "internal")  # fmt: skip
    assert ruled.code == 0, ruled
    times["between"] = _now()
    times["error"] = _now()
    assert (
        invoke("ingest", str(_emitted(tmp_path / "now.yaml", "CARD-503", times["error"]))).code == 0
    )
    times["known"] = _now()
    for page, old, new in (
        (folder / "card-auth-recovery.md", OLD_STEP, NEW_STEP),
        (folder / "alerts" / "new-op" / "queue-backlog.md", OLD_QUEUE, NEW_QUEUE),
    ):
        page.write_text(page.read_text().replace(old, new))
    again = invoke("ingest", str(folder), *args)
    assert again.code == 0, again
    assert "changed: alerts/new-op/queue-backlog.md, card-auth-recovery.md" in again.err
    times["after"] = _now()
    return times


def _investigate(invoke, *args: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("investigate", "Which runbook applied then?", "--service", "svc:card-auth",
                    *SUBJECT, "--json", *args)  # fmt: skip
    assert result.code == 0, result
    doc = json.loads(result.out)
    replay = invoke("replay", doc["run_id"], *SUBJECT, "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["verified"] is True
    return doc  # type: ignore[no-any-return]


def _runbook_claims(doc: dict) -> list[tuple[dict, dict]]:  # type: ignore[type-arg]
    """Each claim about the runbook with the one evidence it cites."""
    by_id = {ev["evidence_id"]: ev for ev in doc["evidence"]}
    return [
        (c, by_id[c["evidence_ids"][0]])
        for c in doc["claims"]
        if "runbook:card-auth-recovery" in c["statement"]
    ]


def test_then_is_the_version_recorded_by_the_first_error(  # type: ignore[no-untyped-def]
    history: dict[str, str], invoke
) -> None:
    doc = _investigate(invoke)
    claims = _runbook_claims(doc)
    # The first CARD-503 error lies between the two imports: the first import's text then,
    # the re-import's at as_of (before, the re-import's text was claimed at both).
    [(then, then_ev)] = [
        (c, ev) for c, ev in claims if "the question says 'then'" in c["statement"]
    ]
    assert then["epistemic_status"] == "fact"
    assert "the first CARD-503 error" in then["statement"]
    assert "replaced by a re-import at" in then["statement"]
    assert OLD_STEP in then_ev["content"] and NEW_STEP not in then_ev["content"]
    [(now, now_ev)] = [(c, ev) for c, ev in claims if c is not then]
    assert now["epistemic_status"] == "fact" and "at as_of" in now["statement"]
    assert NEW_STEP in now_ev["content"]
    assert doc["status"] == "complete"

    # Known only as of before the re-import: the first import's text, then and at as_of.
    known = _investigate(invoke, "--known-at", history["known"])
    [(claim, ev)] = _runbook_claims(known)
    assert "the question says 'then'" in claim["statement"] and "at as_of" in claim["statement"]
    assert OLD_STEP in ev["content"] and NEW_STEP not in ev["content"]


def test_then_before_the_first_import_is_not_known_and_the_run_is_partial(  # type: ignore[no-untyped-def]
    history: dict[str, str], invoke
) -> None:
    # At as_of `between`, "then" is the July CARD-502 error, months before any import.
    doc = _investigate(invoke, "--as-of", history["between"])
    claims = _runbook_claims(doc)
    [(guess, ev)] = [(c, ev) for c, ev in claims if c["epistemic_status"] != "fact"]
    assert "its earliest version was recorded at" in guess["statement"]
    assert "what it said at 2026-07-01T10:00:00Z is not known" in guess["statement"]
    assert OLD_STEP in ev["content"]
    [(fact, _)] = [(c, ev) for c, ev in claims if c["epistemic_status"] == "fact"]
    assert "at as_of" in fact["statement"] and "'then'" not in fact["statement"]
    [missing] = [m for m in doc["missing_evidence"] if m["evidence_type"] == "runbook"]
    assert missing["required"] is True
    assert "recorded by 2026-07-01T10:00:00Z" in missing["description"]
    # The question asked what applied then; the KG cannot say: not a complete answer.
    assert doc["status"] == "partial"


@pytest.mark.parametrize(
    ("target", "old", "new", "shown"),
    [
        # The alert's rule links a pointer, which points at queue-backlog.md.
        (("--alert", "QueueBacklogHigh"), OLD_QUEUE, NEW_QUEUE, "Also      QueueBacklogHigh"),
        # CARD-502 has no runbook of its own: card-auth's, which emitted it.
        (("--error-code", "CARD-502"), OLD_STEP, NEW_STEP, "Fallback  via err:CARD-502 <- "),
    ],
    ids=["pointer", "fallback"],
)
def test_pointer_and_fallback_runbooks_at_a_past_time_are_the_text_recorded_then(  # type: ignore[no-untyped-def]
    target: tuple[str, str], old: str, new: str, shown: str, history: dict[str, str], invoke
) -> None:
    card = invoke("runbook", *target, "--as-of", history["between"], *SUBJECT)
    assert card.code == 0, card
    assert shown in card.out
    assert old in card.out and new not in card.out, card.out
    note = next(line for line in card.out.splitlines() if line.startswith("Note"))
    assert "the version recorded " in note and "a re-import replaced it at " in note

    after = invoke("runbook", *target, "--as-of", history["after"], *SUBJECT)
    assert new in after.out and old not in after.out, after.out

    doc = json.loads(
        invoke("runbook", *target, "--as-of", history["between"], *SUBJECT, "--json").out
    )
    assert doc["runbook"]["record_version"] == 1
    replay = invoke("replay", doc["run_id"], *SUBJECT, "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["verified"] is True


def _asked_at(invoke, at: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("investigate", f"Which runbook applied at {at}?", "--service",
                    "svc:card-auth", *SUBJECT, "--json")  # fmt: skip
    assert result.code == 0, result
    doc = json.loads(result.out)
    replay = invoke("replay", doc["run_id"], *SUBJECT, "--json")
    assert json.loads(replay.out)["verified"] is True
    return doc  # type: ignore[no-any-return]


def test_a_time_written_in_the_question_is_claimed_beside_as_of_as_then_is(  # type: ignore[no-untyped-def]
    history: dict[str, str], invoke
) -> None:
    # At the time of the CARD-503 error, written out (between the imports): the first
    # import's text then, the re-import's at as_of, as for "then" (before, only the text of
    # the time written, nothing at as_of).
    at = history["error"]
    claims = _runbook_claims(_asked_at(invoke, at))
    [(then, then_ev)] = [(c, ev) for c, ev in claims if "the time named in the question" in
                         c["statement"]]  # fmt: skip
    assert then["epistemic_status"] == "fact"
    assert f"in force at the time named in the question, {at} (explicit)" in then["statement"]
    assert "replaced by a re-import at" in then["statement"] and "as_of" not in then["statement"]
    assert OLD_STEP in then_ev["content"] and NEW_STEP not in then_ev["content"]
    [(now, now_ev)] = [(c, ev) for c, ev in claims if c is not then]
    assert now["epistemic_status"] == "fact" and "in force at as_of" in now["statement"]
    assert NEW_STEP in now_ev["content"]

    # After the re-import: one version, claimed at both instants.
    after = history["after"]
    [(both, ev)] = _runbook_claims(_asked_at(invoke, after))
    assert f"the time named in the question, {after} (explicit) and at as_of" in both["statement"]
    assert NEW_STEP in ev["content"]

    # Before the first import: what it said then is not known (partial), and at as_of the
    # re-import's text is a fact.
    before = history["before"]
    doc = _asked_at(invoke, before)
    claims = _runbook_claims(doc)
    [(guess, _)] = [(c, ev) for c, ev in claims if c["epistemic_status"] != "fact"]
    assert f"what it said at {before} is not known" in guess["statement"]
    [(fact, fact_ev)] = [(c, ev) for c, ev in claims if c["epistemic_status"] == "fact"]
    assert "in force at as_of" in fact["statement"] and NEW_STEP in fact_ev["content"]
    assert doc["status"] == "partial"
