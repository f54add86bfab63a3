"""A hurried on-call engineer types the symptom, not a question: `investigate "pgbouncer
saturation"` gets the runbook `investigator runbook "pgbouncer saturation"` shows (its steps'
locator, its version, its owner), claimed as an inference from the words, with what no
record ties said as gaps; a word no runbook fits ("banana") still finds nothing, and
another tenant's runbooks never answer. On a real Neo4j.

Before, a bare symptom was an entity lookup: `partial`, no claim, the runbook the card
shows rejected as `low_relevance`.

The runbooks are written here (a folder of Markdown files as a team keeps them, no alert
rules), not copied from any public corpus.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import neo4j
import pytest
from conftest import import_runbook_folder, ingest_as, investigate_json

GLOBEX_CATALOG = Path(__file__).parent / "fixtures" / "runbooks" / "catalogs" / "globex.yaml"

ACME_RUNBOOKS = {
    # Owned by a team of its own (front matter `owner:`, an OWNS record).
    "pgbouncer-saturation.md": (
        "---\nowner: team:sre\n---\n# PgBouncer saturation\n\nPgBouncer hands out a fixed "
        "pool of server connections; when every one is taken, clients wait in the queue and "
        "then time out.\n\n## Mitigation\n\n1. Open the pooler dashboard and find the "
        "database whose waiting clients keep growing.\n2. End the long transactions that "
        "hold server connections.\n3. Raise the pool size only after the database team "
        "agrees.\n"
    ),
    # Owned through the service it applies to (card-auth moved to card-platform on 07-24).
    "etcd-disk-latency.md": (
        "---\nservices: [svc:card-auth]\n---\n# Etcd disk latency is high\n\nEtcd waits for "
        "the disk to sync every write of its log; a slow disk makes leader elections flap."
        "\n\n## Steps\n\n1. Check the fsync duration of the etcd members on the storage "
        "dashboard.\n2. Move the etcd data directory to a dedicated disk if it stays high.\n"
    ),
    # No owner of record at all.
    "queue-backlog.md": (
        "# Queue backlog\n\nConsumers fall behind the producers and the backlog grows.\n\n"
        "## Steps\n\n1. Scale the consumers up.\n"
    ),
}
# Another tenant: a runbook of the same name with its own text, and one acme has not.
GLOBEX_RUNBOOKS = {
    "pgbouncer-saturation.md": (
        "# PgBouncer saturation\n\nGlobex only: restart every globex pooler at once.\n"
    ),
    "kafka-consumer-lag.md": (
        "# Kafka consumer lag\n\nGlobex only: the globex consumers fall behind.\n\n"
        "## Steps\n\n1. Add globex consumer replicas.\n"
    ),
}


def _write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture()
def symptoms(driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    import_runbook_folder(driver, invoke, _write(tmp_path / "acme", ACME_RUNBOOKS))
    assert invoke("ingest", str(GLOBEX_CATALOG)).code == 0
    globex = _write(tmp_path / "globex", GLOBEX_RUNBOOKS)
    ingest_as(invoke, globex, "markdown-runbooks", "globex", acl="internal")
    return driver


def _investigate(invoke, question: str, subject: str = "user:oncall") -> dict:  # type: ignore[no-untyped-def,type-arg]
    return investigate_json(invoke, question, "--subject", subject)  # type: ignore[no-any-return]


def _card(invoke, text: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("runbook", text, "--subject", "user:oncall", "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def _runbook_claim(doc: dict) -> dict:  # type: ignore[type-arg]
    (claim,) = [c for c in doc["claims"] if c["statement"].startswith("Runbook ")]
    return claim  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("symptom", "owner"),
    [("pgbouncer saturation", "team:sre"), ("etcd disk latency high", "team:card-platform")],
)
def test_a_bare_symptom_gets_the_runbook_the_card_shows(  # type: ignore[no-untyped-def]
    symptoms, invoke, symptom: str, owner: str
) -> None:
    card = _card(invoke, symptom)
    runbook = card["runbook"]
    assert runbook is not None, card["note"]
    assert card["owner"] == owner

    doc = _investigate(invoke, symptom)
    assert doc["status"] == "complete", doc["missing_evidence"]
    assert doc["intents"] == ["applicable_runbook"]
    claim = _runbook_claim(doc)
    # Its words matching is what ties it to the symptom: an inference, not a recorded fact.
    assert claim["epistemic_status"] == "inference"
    version = re.fullmatch(r"sha256:([0-9a-f]{12})[0-9a-f]*", runbook["source_version"])
    assert version is not None, runbook["source_version"]
    assert claim["statement"].startswith(
        f"Runbook {runbook['title']} ({runbook['id']}, "
        f"sha256:{version.group(1)}), found by the words of the question alone"
    ), claim["statement"]
    # Where its steps are, as the card's Locator line: the section, not the file.
    assert claim["statement"].endswith(f"[{runbook['steps_locator']}]"), claim["statement"]
    assert "#" in runbook["steps_locator"]
    [evidence] = [ev for ev in doc["evidence"] if ev["evidence_id"] in claim["evidence_ids"]]
    assert evidence["element_id"] == runbook["id"]
    assert runbook["steps"][0].removeprefix("1. ") in evidence["content"]

    # The owner the card names, as a fact bound to that OWNS record.
    (owned,) = [c for c in doc["claims"] if c is not claim]
    assert owned["epistemic_status"] == "fact"
    assert f"{owner} OWNS " in owned["statement"], owned["statement"]
    [owns] = [ev for ev in doc["evidence"] if ev["evidence_id"] in owned["evidence_ids"]]
    assert owns["evidence_id"] == card["owner_detail"]["evidence_id"]

    # What no record ties is said, without making the answer partial.
    gaps = {m["evidence_type"]: m for m in doc["missing_evidence"]}
    assert set(gaps) == {"entity"}, gaps
    assert gaps["entity"]["required"] is False
    assert "by the runbook search's best fit for its words alone" in gaps["entity"]["description"]

    replay = invoke("replay", doc["run_id"], "--subject", "user:oncall", "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["verified"] is True


def test_a_bare_symptom_is_answered_as_asking_what_to_do(symptoms, invoke) -> None:  # type: ignore[no-untyped-def]
    bare = _investigate(invoke, "pgbouncer saturation")
    asked = _investigate(invoke, "pgbouncer saturation, what do I do?")

    def claims(doc: dict) -> list[tuple[str, str]]:  # type: ignore[type-arg]
        at = doc["as_of"].replace("+00:00", "Z")
        return sorted(
            (c["epistemic_status"], c["statement"].replace(at, "AS_OF")) for c in doc["claims"]
        )

    assert claims(bare) == claims(asked)
    assert sorted(e for c in bare["claims"] for e in c["evidence_ids"]) == sorted(
        e for c in asked["claims"] for e in c["evidence_ids"]
    )
    assert bare["missing_evidence"] == asked["missing_evidence"]


def test_a_symptom_whose_runbook_has_no_owner_says_so(symptoms, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _investigate(invoke, "queue backlog")
    assert doc["status"] == "complete", doc["missing_evidence"]
    claim = _runbook_claim(doc)
    assert "(runbook:queue-backlog, sha256:" in claim["statement"]
    assert [c["claim_id"] for c in doc["claims"]] == [claim["claim_id"]]
    gaps = {m["evidence_type"]: m for m in doc["missing_evidence"]}
    assert gaps["ownership"]["required"] is False
    assert gaps["ownership"]["description"] == (
        "no owner of runbook:queue-backlog at as_of the subject may read: no OWNS record of "
        "it, nor of a service it applies to"
    )
    text = invoke("investigate", "queue backlog", "--subject", "user:oncall")
    assert "  ownership (would strengthen): no owner of runbook:queue-backlog" in text.out


def test_a_word_no_runbook_fits_still_finds_nothing(symptoms, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = _investigate(invoke, "banana")
    assert doc["status"] == "partial"
    assert doc["claims"] == []
    assert doc["evidence"] == []
    assert [(m["evidence_type"], m["required"]) for m in doc["missing_evidence"]] == [
        ("entity", True)
    ]
    assert doc["intents"] == ["entity_lookup"]


def test_another_tenants_runbooks_never_answer_a_symptom(symptoms, invoke) -> None:  # type: ignore[no-untyped-def]
    # Only globex has a runbook for it: acme finds nothing.
    doc = _investigate(invoke, "kafka consumer lag")
    assert doc["status"] == "partial"
    assert doc["claims"] == []
    assert "kafka-consumer-lag" not in json.dumps(doc)
    assert "Globex only" not in json.dumps(doc)
    # A runbook of the same name in both: each tenant gets its own.
    acme = json.dumps(_investigate(invoke, "pgbouncer saturation"))
    assert "Globex only" not in acme
    assert "waiting clients keep growing" in acme
    globex = _investigate(invoke, "pgbouncer saturation", subject="globex/user:mallory")
    assert _runbook_claim(globex)["epistemic_status"] == "inference"
    assert "Globex only" in json.dumps(globex["evidence"])
    assert "waiting clients keep growing" not in json.dumps(globex)


@pytest.mark.parametrize(
    "asked", ["pgbouncer saturation?", "pgbouncer saturation ??", "pgbouncer saturation pls?"]
)
def test_a_symptom_asked_with_a_question_mark_is_answered_as_the_symptom(  # type: ignore[no-untyped-def]
    symptoms, invoke, asked: str
) -> None:
    # Before, the question mark stopped the symptom reading: `partial`, no claim, and a gap
    # saying its words ask something the run does not read.
    bare = _investigate(invoke, "pgbouncer saturation")
    doc = _investigate(invoke, asked)
    assert doc["status"] == "complete", doc["missing_evidence"]
    assert doc["intents"] == ["applicable_runbook"]

    def statements(answer: dict) -> list[str]:  # type: ignore[type-arg]
        at = answer["as_of"].replace("+00:00", "Z")
        return [c["statement"].replace(at, "AS_OF") for c in answer["claims"]]

    assert statements(doc) == statements(bare)
    assert "does not read" not in json.dumps(doc["missing_evidence"])


def test_a_plea_with_a_question_mark_is_no_symptom(symptoms, invoke) -> None:  # type: ignore[no-untyped-def]
    # Its words name nothing: no runbook is claimed for "please help".
    doc = _investigate(invoke, "please help, anyone?")
    assert doc["status"] == "partial"
    assert doc["claims"] == []
