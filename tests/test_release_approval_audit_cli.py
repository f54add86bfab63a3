"""An auditor asks, after the fact, whether the release was approved (h35), as a CLI user
sees it (demo dataset, real Neo4j).

Before: "was the release approved?" asked by acme/user:auditor under `--purpose audit` took
a text hit's record as the release, rejected the release's own record ("supports none of
the evidence types the plan needs") and never read the change-management policy governing
payment-api; "did the payment-api release comply with change management?" was `complete`
with two release times. Now the release is chosen as a correlation question's is, the policy
governing its service when it finished is read (runbooks_for, GOVERNED_BY) and its rule
quoted, the pool lowered 50 -> 10 is quoted from the release's own record, an inference says
the change falls under the rule, and the approval gap says whether it was approved is
unknown, never "not approved". Subjects who may not read the policy get no word of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import neo4j
import pytest
from conftest import ingest_text, investigate_json

pytestmark = pytest.mark.usefixtures("patient_reads")

AUDITOR = ["--subject", "acme/user:auditor", "--purpose", "audit"]
AT_1003 = ["--as-of", "2026-07-23T10:03:00Z", "--deadline-seconds", "600"]
POLICY = "policy:payments-change-management"
RULE = "need a second reviewer and may not lower capacity settings"
RELEASE = "deploy:release-2026.07.23.1"


def claims(doc: dict[str, Any], status: str) -> list[dict[str, Any]]:
    return [c for c in doc["claims"] if c["epistemic_status"] == status]


def evidence_of(doc: dict[str, Any], element_id: str) -> str:
    return next(e["evidence_id"] for e in doc["evidence"] if e["element_id"] == element_id)


def assert_audit_answer(doc: dict[str, Any]) -> None:
    """The policy in force then, quoted; the pool change from the release's own record; the
    change under the rule (an inference); approval unknown (a required gap), no verdict."""
    policy_ev = evidence_of(doc, POLICY)
    release_ev = evidence_of(doc, RELEASE)
    governed = [
        c for c in claims(doc, "fact") if POLICY in c["statement"] and RULE in c["statement"]
    ]
    assert governed, doc["claims"]
    assert "when release release-2026.07.23.1" in governed[0]["statement"]
    assert "finished at 2026-07-23T10:02:00Z" in governed[0]["statement"]
    assert policy_ev in governed[0]["evidence_ids"]
    assert any(
        "db.pool.max_size lowered from 50 to 10" in c["statement"]
        and c["evidence_ids"] == [release_ev]
        for c in claims(doc, "fact")
    ), doc["claims"]
    falls = [c for c in claims(doc, "inference") if "falls under that rule" in c["statement"]]
    assert falls and "lowered db.pool.max_size from 50 to 10" in falls[0]["statement"], falls
    assert {policy_ev, release_ev} <= set(falls[0]["evidence_ids"])
    approval = [m for m in doc["missing_evidence"] if m["evidence_type"] == "approval"]
    assert approval and approval[0]["required"] is True
    assert "the KG records no review of the release" in approval[0]["description"]
    assert "approved is unknown, not absent" in approval[0]["description"]
    assert doc["status"] == "partial"
    assert "not approved" not in str(doc["claims"]).lower()


def test_was_the_release_approved_reads_the_policy_in_force_for_the_auditor(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    doc = investigate_json(invoke, "was the release approved?", *AUDITOR, *AT_1003)
    assert_audit_answer(doc)
    # The release meant: the one the incident's service shipped, chosen and said in a note.
    assert any(RELEASE in n for n in doc["search_notes"]), doc["search_notes"]
    doc = investigate_json(
        invoke, "was the release approved?", *AUDITOR, "--service", "svc:payment-api",
        "--deadline-seconds", "600",
    )  # fmt: skip
    assert_audit_answer(doc)
    # The older release read beside it is not the one asked about.
    assert not any(
        "release-2026.07.20.2" in c["statement"] and POLICY in c["statement"] for c in doc["claims"]
    )


@pytest.mark.parametrize(
    ("question", "flags"),
    [
        ("did the payment-api release comply with change management?", AT_1003),
        ("did the 10:02 release follow the change policy?", AT_1003),
        ("was release 2026.07.23.1 reviewed?", ["--deadline-seconds", "600"]),
    ],
)
def test_an_auditors_wordings_read_the_policy(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, question: str, flags: list[str]
) -> None:
    doc = investigate_json(invoke, question, *AUDITOR, *flags)
    assert_audit_answer(doc)


def test_subjects_who_may_not_read_the_policy_get_no_word_of_it(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, tmp_path: Path
) -> None:
    result = ingest_text(
        invoke,
        tmp_path / "pat.yaml",
        "tenant: acme\nprincipals:\n"
        '  - {id: user:pat, name: "Pat (audit, no internal)", labels: [incident], '
        "purposes: [audit]}\n",
    )
    assert result.code == 0, result
    for subject in (
        ["--subject", "acme/user:pat", "--purpose", "audit"],  # no `internal` label
        ["--subject", "acme/user:bob"],  # no `audit` purpose (src:compliance is audit only)
    ):
        card = invoke("investigate", "was the release approved?", *subject, *AT_1003)
        assert card.code == 0, card
        assert "approval (required): no approval or sign-off record" in card.out, card.out
        for word in ("change-management", "second reviewer", "falls under", POLICY):
            assert word not in card.out, (subject, word, card.out)


def test_a_release_recorded_after_known_at_is_never_the_release(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke
) -> None:
    # h34 saw "which release caused PAY-4097?" at a known_at before the release's records
    # (both recorded 10:02:05Z) take its CI/CD record as "the release". Checked in h35: it no
    # longer does (a guard; it passed before h35's change too).
    for flags in ([], ["--as-of", "2026-07-23T10:03:00Z"]):
        doc = investigate_json(
            invoke, "which release caused PAY-4097?", "--subject", "acme/user:alice",
            "--known-at", "2026-07-23T10:02:03Z", "--deadline-seconds", "600", *flags,
        )  # fmt: skip
        seen = str([doc["claims"], doc["evidence"], doc["search_notes"]])
        assert "release-2026.07.23.1" not in seen, (flags, seen)
        assert "cicd-release-2026.07.23.1" not in seen, (flags, seen)
        assert doc["verdict"] != "confirmed"
