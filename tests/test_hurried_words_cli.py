"""Questions a hurried on-call types, read for what they ask. Through the CLI, on a real
Neo4j: the demo dataset plus one one-word service (`vault`) readable with the `incident`
label only (bob has it, carol not).

Before (e31-qa findings 3, 5, 9, 10 and m2): "was it payment-db?" and "could it be
risk-engine?" were `complete` with the service's name alone; "is checkout affected?" and
"checkout?" said "no matching entity the subject may read" though bob reads svc:checkout (now:
its state and owner, as any service typed alone);
"is PaymentApiHighErrorRate still firing?" was a runbook lookup that never said whether the
alert fired at as_of; `--as-of 9999-12-31T23:59:59Z` was answered with no word that it is a
projection of today's records; `--as-of now` and `2026-07-23t10:30:00z` were refused.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import neo4j
import pytest

BOB = ["--subject", "acme/user:bob", "--deadline-seconds", "600"]
CAROL = ["--subject", "acme/user:carol", "--deadline-seconds", "600"]
DURING = ["--as-of", "2026-07-23T10:30:00Z"]

VAULT = (
    "tenant: acme\nnodes:\n"
    '  - {id: "svc:vault", label: Service, name: "vault", acl: [internal, incident], '
    'locator: "catalog/acme.yaml#svc:vault", source_id: src:service-catalog, '
    'source_version: "catalog@2026-01-05", valid_from: "2025-01-01T00:00:00Z", '
    'recorded_at: "2026-01-05T09:00:00Z"}\n'
)


@pytest.fixture(scope="module")
def words_graph(demo_graph: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> neo4j.Driver:
    """The demo dataset plus svc:vault (label `incident`: bob reads it, carol not)."""
    from graph_schema.bundle import load_bundle
    from graph_schema.writer import ingest_bundle

    path: Path = tmp_path_factory.mktemp("words") / "vault.yaml"
    path.write_text(VAULT, encoding="utf-8")
    ingest_bundle(demo_graph, load_bundle(path))
    demo_graph.execute_query("CALL db.awaitIndexes(300)")
    return demo_graph


def _ask(invoke: Any, question: str, *args: str) -> tuple[dict[str, Any], str]:
    doc = invoke("investigate", question, *args, "--json")
    assert doc.code == 0, doc
    report = invoke("investigate", question, *args)
    assert report.code == 0, report
    return json.loads(doc.out), report.out


def _statements(doc: dict[str, Any]) -> list[str]:
    return [c["statement"] for c in doc["claims"]]


def _gaps(doc: dict[str, Any]) -> list[str]:
    return [m["description"] for m in doc["missing_evidence"]]


def test_was_it_a_named_service_is_a_cause_question(words_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    for question in ("was it payment-db?", "could it be risk-engine?", "is risk-engine to blame?"):
        doc, report = _ask(invoke, question, *BOB, *DURING)
        assert doc["intents"] == ["root_cause"], (question, doc["intents"])
        # The postmortem's account of the cause is read, not the service's name alone.
        assert any(
            s.startswith("Mechanism: Root cause: release 2026.07.23.1") for s in _statements(doc)
        ), question
        assert not any(s.startswith("Service svc:") for s in _statements(doc)), question
        assert "Mechanism: Root cause: release 2026.07.23.1" in report
    # "Was it fixed?" names no suspect: still a lookup, its words said unread.
    doc, _ = _ask(invoke, "was it fixed?", *BOB, *DURING)
    assert doc["intents"] == ["entity_lookup"] and doc["status"] == "partial"


def test_a_one_word_service_name_is_linked(words_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    at = ["--as-of", "2026-07-23T10:10:00Z"]
    doc, report = _ask(invoke, "is checkout affected?", *BOB, *at)
    assert doc["intents"] == ["incident_lookup"]
    assert "no matching entity the subject may read" not in _gaps(doc)
    affected = [s for s in _statements(doc) if s.startswith("Services affected by incident")]
    assert affected and "svc:checkout (valid 2026-07-23T10:03:30Z" in affected[0]
    assert "no matching entity" not in report
    # Typed alone, a one-word service is asked its state and owner (session 34; before, its
    # name was read back: "Service svc:checkout: checkout").
    doc, report = _ask(invoke, "checkout?", *BOB, *at)
    assert doc["status"] == "complete", doc["missing_evidence"]
    assert (
        "svc:checkout at as_of 2026-07-23T10:10:00Z: incident inc:2026-07-23-payments open "
        "(Payments authorization failures 2026-07-23, started 2026-07-23T10:02:38Z, not "
        "resolved by as_of)"
    ) in _statements(doc)
    doc, _ = _ask(invoke, "vault?", *BOB, *at)
    assert any(
        s.startswith("svc:vault at as_of 2026-07-23T10:10:00Z (")
        and s.endswith("no incident open, no alert firing, no release rolling out")
        for s in _statements(doc)
    ), _statements(doc)


def _without_ids(text: str) -> str:
    text = re.sub(r"run-[0-9a-f]{32}|sha256:[0-9a-f]{64}|ev:[0-9a-f]+", "<id>", text)
    return re.sub(r"known at [0-9T:.Z-]+", "known at <t>", text)


def test_a_name_the_subject_may_not_read_answers_as_an_unknown_one(
    words_graph, cli_env, invoke
) -> None:  # type: ignore[no-untyped-def]
    at = ["--as-of", "2026-07-23T10:10:00Z"]
    for asked, unknown in (("vault?", "qzxv?"), ("is vault affected?", "is qzxv affected?")):
        doc, report = _ask(invoke, asked, *CAROL, *at)
        other_doc, other = _ask(invoke, unknown, *CAROL, *at)
        assert "svc:vault" not in report and "svc:vault" not in json.dumps(doc)
        # (a gap may quote the name typed: "'vault' names no service ...")
        assert (doc["status"], _statements(doc), _gaps(doc)) == (
            other_doc["status"],
            _statements(other_doc),
            [
                g.replace(repr(unknown.rstrip("?")), repr(asked.rstrip("?")))
                for g in _gaps(other_doc)
            ],
        )
        assert _without_ids(report).replace(asked, "Q").replace(
            repr(asked.rstrip("?")), "'Q'"
        ) == _without_ids(other).replace(unknown, "Q").replace(repr(unknown.rstrip("?")), "'Q'")


def test_is_a_named_alert_still_firing_reads_its_firings(words_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    question = "is PaymentApiHighErrorRate still firing?"
    doc, report = _ask(invoke, question, *BOB, "--as-of", "2026-07-23T10:55:00Z")
    assert doc["intents"] == ["alert_firing"] and doc["status"] == "complete"
    assert _statements(doc) == [
        "Alert alert:PaymentApiHighErrorRate fired on svc:payment-api at 2026-07-23T10:03:10Z "
        "(until 2026-07-23T10:50:00Z)"
    ]
    assert "Runbook" not in report
    doc, _ = _ask(invoke, "is PaymentApiHighErrorRate firing now?", *BOB, *DURING)
    assert _statements(doc) == [
        "Alert alert:PaymentApiHighErrorRate fired on svc:payment-api at 2026-07-23T10:03:10Z "
        "(still firing at as_of)"
    ]
    # Before it fired: no firing read, `partial`, said.
    doc, _ = _ask(
        invoke, "is alert:PaymentApiHighErrorRate firing?", *BOB, "--as-of", "2026-07-23T10:03:09Z"
    )
    assert doc["intents"] == ["alert_firing"] and doc["status"] == "partial"
    assert any(g.startswith("no alert recorded as firing") for g in _gaps(doc))


def test_an_as_of_after_known_at_is_said(words_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc, report = _ask(invoke, "who owns payment-api?", *BOB, "--as-of", "9999-12-31T23:59:59Z")
    note = doc["time_notes"][0]
    assert note.startswith("as_of 9999-12-31T23:59:59Z is after known_at ")
    assert note.endswith(": what holds then as recorded by known_at; later records may change it")
    # The report is its own run (its own known_at).
    assert re.search(
        r"\nTime       as_of 9999-12-31T23:59:59Z is after known_at \S+: what holds then as "
        r"recorded by known_at; later records may change it\n",
        report,
    ), report
    # The served summary (the same JSON document) says it too.
    from investigator.serving.results import summary_text

    assert f"Note: {note}" in summary_text("investigate", doc)
    past = ["--as-of", "2026-07-23T10:30:00Z", "--known-at", "2026-12-01T00:00:00Z"]
    doc, _ = _ask(invoke, "who owns payment-api?", *BOB, *past)
    assert not any("is after known_at" in n for n in doc["time_notes"])
    doc, _ = _ask(invoke, "who owns payment-api?", *BOB)
    assert not any("is after known_at" in n for n in doc["time_notes"])


def test_as_of_now_and_lower_case_rfc3339_are_read(words_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc, _ = _ask(invoke, "who owns payment-api?", *BOB, "--as-of", "now")
    assert doc["claims"][0]["statement"].split(": ", 1)[1].startswith("team:payments-platform OWNS")
    lower, _ = _ask(invoke, "who owns payment-api?", *BOB, "--as-of", "2026-07-23t10:30:00z")
    assert lower["as_of"] == "2026-07-23T10:30:00Z"
    assert _statements(lower)[0].startswith("At 2026-07-23T10:30:00Z: team:payments-core OWNS")
    card = invoke(
        "runbook",
        "--service",
        "svc:payment-api",
        *BOB[:2],
        "--as-of",
        "2026-07-23t10:30:00z",
        "--json",
    )
    assert card.code == 0, card
    known = invoke("investigate", "who owns payment-api?", *BOB, "--known-at", "NOW", "--json")
    assert known.code == 0, known
    bad = invoke("investigate", "who owns payment-api?", *BOB, "--as-of", "nowish")
    assert bad.code == 2 and "is not an ISO-8601 time" in bad.err


def test_a_served_call_reads_its_times_as_the_cli_does() -> None:
    from investigator.serving.backend import zoned_time

    assert zoned_time("as_of", "now") is None
    parsed = zoned_time("as_of", "2026-07-23t10:30:00z")
    assert parsed is not None and parsed.isoformat() == "2026-07-23T10:30:00+00:00"
