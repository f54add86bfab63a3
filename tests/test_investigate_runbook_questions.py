"""An on-call engineer asks `investigate` for the runbook in their own words ("ingesters are
unhealthy in prod, what's the runbook?"), or pastes the alert's page: the answer is the
section `investigator runbook` shows for the same words, with its version, claimed as an
inference when the words alone tie it; another tenant's runbooks never answer. On a real
Neo4j.

Before, a page with a section per alert and alert rules linking to the sections (Grafana
Mimir's shape) gave `partial (no_progress)`, no claim, the right alert and runbook rejected as
`low_relevance`, and a Missing line saying no runbook applied; the pasted message was
`complete` with only the alert's name read back.

The page and rules are written here, in that shape; no public corpus text.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import import_runbook_folder, ingest_as, investigate_json

from investigator.context_graph import RunRecorder
from investigator.investigation import InvestigationRequest, investigate

GLOBEX_CATALOG = Path(__file__).parent / "fixtures" / "runbooks" / "catalogs" / "globex.yaml"

PAGE = """# Store runbooks

This page holds a section per alert of the store.

## Alerts

### StoreIngesterUnhealthy

This alert fires when one or more ingesters are unhealthy: not ACTIVE in the ring of the
cluster (prod or any other).

How to **fix** it:

- Check the ring page and forget the ingester that left for good.
- Restart the ingester pod that is stuck in LEAVING.

### StoreIngesterRestarts

This alert fires when ingesters keep restarting: more than twice in half an hour.

How to **investigate** it:

- Read the previous container log of the ingester for an out-of-memory kill.
- Scale the ingesters out when their memory is near the limit.

### StoreCompactorHasRunOutOfDiskSpace

This alert fires when the compactor has run out of disk space on its volume.

How to **fix** it:

- Grow the compactor's persistent volume by a half.
- Delete the compactor's scratch directory after the pod stops.
"""

RULES = """groups:
  - name: store
    rules:
      - alert: StoreIngesterUnhealthy
        expr: min by (cluster) (store_ring_members{state="Unhealthy"}) > 0
        annotations:
          message: Store cluster {{ $labels.cluster }} has {{ $value }} unhealthy ingester(s).
          runbook_url: https://example.com/docs/store-runbooks/#storeingesterunhealthy
      - alert: StoreIngesterRestarts
        expr: increase(kube_pod_container_status_restarts_total[30m]) > 2
        annotations:
          message: Store ingester {{ $labels.pod }} has restarted {{ $value }} times.
          runbook_url: https://example.com/docs/store-runbooks/#storeingesterrestarts
      - alert: StoreCompactorHasRunOutOfDiskSpace
        expr: increase(store_compactor_disk_out_of_space_errors_total[24h]) >= 1
        annotations:
          message: Store compactor {{ $labels.pod }} has run out of disk space.
          runbook_url: https://example.com/docs/store-runbooks/#storecompactorhasrunoutofdiskspace
"""

# Another tenant with a page of the same shape and its own text.
GLOBEX_PAGE = """# Store runbooks

### StoreIngesterUnhealthy

This alert fires when one or more ingesters are unhealthy in prod.

How to **fix** it:

- Globex only: page the globex storage team.

### StoreIngesterRestarts

How to **fix** it:

- Globex only: roll the globex ingesters.
"""

# (the question, the symptom the card is given, the section both show)
QUESTIONS = [
    ("ingesters are unhealthy in prod, what's the runbook?", "ingesters are unhealthy in prod",
     "#storeingesterunhealthy"),
    ("the compactor has run out of disk space, how do I fix it?",
     "the compactor has run out of disk space", "#storecompactorhasrunoutofdiskspace"),
    ("ingesters keep restarting, which runbook applies?", "ingesters keep restarting",
     "#storeingesterrestarts"),
]  # fmt: skip
PASTED = "Store cluster prod-eu-1 has 2 unhealthy ingester(s)."


def _folder(root: Path, page: str) -> Path:
    folder = root / "store-runbooks"
    folder.mkdir(parents=True)
    (folder / "_index.md").write_text(page, encoding="utf-8")
    return folder


@pytest.fixture()
def store(driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path) -> neo4j.Driver:  # type: ignore[no-untyped-def]
    import_runbook_folder(driver, invoke, _folder(tmp_path / "acme", PAGE))
    rules = tmp_path / "store-alerts.yaml"
    rules.write_text(RULES, encoding="utf-8")
    ingest_as(invoke, rules, "prometheus-rules", "acme", acl="internal")
    assert invoke("ingest", str(GLOBEX_CATALOG)).code == 0
    globex = _folder(tmp_path / "globex", GLOBEX_PAGE)
    ingest_as(invoke, globex, "markdown-runbooks", "globex", acl="internal")
    return driver


def _investigate(invoke, question: str, subject: str = "user:oncall") -> dict:  # type: ignore[no-untyped-def,type-arg]
    return investigate_json(invoke, question, "--subject", subject)  # type: ignore[no-any-return]


def _card(invoke, text: str, subject: str = "user:oncall") -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("runbook", text, "--subject", subject, "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def _runbook_claims(doc: dict) -> list[dict]:  # type: ignore[type-arg]
    return [c for c in doc["claims"] if c["statement"].startswith("Runbook ")]


def _verified(invoke, doc: dict, subject: str = "user:oncall") -> None:  # type: ignore[no-untyped-def,type-arg]
    replay = invoke("replay", doc["run_id"], "--subject", subject, "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["verified"] is True


@pytest.mark.parametrize(("question", "symptom", "anchor"), QUESTIONS)
def test_a_runbook_asked_for_in_own_words_is_the_cards_section(  # type: ignore[no-untyped-def]
    store, invoke, question: str, symptom: str, anchor: str
) -> None:
    card = _card(invoke, symptom)
    assert card["runbook"]["steps_locator"] == "_index.md" + anchor

    doc = _investigate(invoke, question)
    assert doc["status"] == "complete", doc["missing_evidence"]
    (claim,) = _runbook_claims(doc)
    # Its words are the only tie: an inference, named with its version, at the card's section.
    assert claim["epistemic_status"] == "inference"
    assert claim["statement"].startswith(
        "Runbook Store runbooks (runbook:store-runbooks, sha256:"
    ), claim["statement"]
    assert "found by the words of the question alone" in claim["statement"]
    assert claim["statement"].endswith(f"[{card['runbook']['steps_locator']}]")
    [evidence] = [ev for ev in doc["evidence"] if ev["evidence_id"] in claim["evidence_ids"]]
    # The pack holds that section, not the whole page of three alerts.
    assert card["runbook"]["steps"][1].lstrip("- ") in evidence["content"]
    assert evidence["content"].count("### ") == 1
    # Its owner is not known (no OWNS record): said, not guessed.
    gaps = {m["evidence_type"]: m for m in doc["missing_evidence"]}
    assert gaps["ownership"]["required"] is False
    assert "Globex only" not in json.dumps(doc)
    _verified(invoke, doc)


def test_the_alerts_pasted_message_gets_its_runbook_section(store, invoke) -> None:  # type: ignore[no-untyped-def]
    card = _card(invoke, PASTED)
    assert card["runbook"]["steps_locator"] == "_index.md#storeingesterunhealthy"

    doc = _investigate(invoke, PASTED)
    assert doc["status"] == "complete", doc["missing_evidence"]
    assert doc["intents"] == ["applicable_runbook", "entity_lookup"]
    (claim,) = _runbook_claims(doc)
    # Linked by the alert's runbook_url: the APPLIES_TO record is the tie.
    assert claim["epistemic_status"] == "fact"
    assert claim["statement"].endswith("[_index.md#storeingesterunhealthy]"), claim["statement"]
    [evidence] = [ev for ev in doc["evidence"] if ev["evidence_id"] in claim["evidence_ids"]]
    assert "forget the ingester that left for good" in evidence["content"]
    assert "Grow the compactor" not in evidence["content"]
    _verified(invoke, doc)


def test_another_tenants_runbooks_never_answer(store, invoke) -> None:  # type: ignore[no-untyped-def]
    # Globex has no compactor section: its subject gets nothing of acme's.
    compactor = _investigate(invoke, QUESTIONS[1][0], subject="globex/user:mallory")
    assert compactor["status"] == "partial"
    assert _runbook_claims(compactor) == []
    assert "Grow the compactor" not in json.dumps(compactor)
    # Its own page of the same shape answers with its own section.
    own = _investigate(invoke, QUESTIONS[0][0], subject="globex/user:mallory")
    assert own["status"] == "complete", own["missing_evidence"]
    (claim,) = _runbook_claims(own)
    assert claim["epistemic_status"] == "inference"
    [evidence] = [ev for ev in own["evidence"] if ev["evidence_id"] in claim["evidence_ids"]]
    assert "Globex only: page the globex storage team." in evidence["content"]
    assert "forget the ingester" not in json.dumps(own)
    _verified(invoke, own, subject="globex/user:mallory")


def test_a_runbook_retrieved_and_not_used_is_said_so(store, invoke) -> None:  # type: ignore[no-untyped-def]
    # Words the page has, but that match none of its sections: the runbook is found by text
    # and rejected; the Missing line says so, never that no runbook applies.
    doc = _investigate(invoke, "store runbooks page, what's the runbook?")
    assert doc["status"] == "partial"
    rejected = {r["element_id"] for r in doc["rejected"]}
    assert "runbook:store-runbooks" in rejected
    (gap,) = [m for m in doc["missing_evidence"] if m["evidence_type"] == "runbook"]
    assert "applies" not in gap["description"]
    assert gap["description"].startswith(
        "no runbook was used: retrieved and not used, runbook:store-runbooks (found by text "
        "only: no record ties it to what the question names"
    ), gap["description"]


def test_a_runbook_search_cut_by_the_deadline_is_said_cut_short(store, invoke) -> None:  # type: ignore[no-untyped-def]
    # The deadline as replay applies it: right after round one, before the runbook search
    # (on a loaded machine a cold first run takes the whole 60 s there). Before, the run said
    # `no_progress`, as if the search had found nothing, and its replay asked the search.
    def run(**kw: object):  # type: ignore[no-untyped-def]
        request = InvestigationRequest(
            question=QUESTIONS[0][0],
            subject_id="acme/user:oncall",
            deadline_s=600,
            **kw,  # type: ignore[arg-type]
        )
        return investigate(request, driver=store, recorder=RunRecorder(store))

    full = run()
    assert full.status.value == "complete"
    first_round = sum(1 for tc in full.tool_calls if tc.round == 1)
    cut = run(deadline_after_calls=first_round)
    assert (cut.stop_reason, cut.rounds, cut.search_cut_short) == ("deadline", 1, True)
    (gap,) = [m for m in cut.missing_evidence if m.evidence_type == "runbook"]
    assert gap.description.startswith("unknown, not absent: the run stopped (deadline)")
    replay = invoke("replay", cut.run_id, "--subject", "user:oncall", "--json")
    assert replay.code == 0, replay
    assert json.loads(replay.out)["verified"] is True
