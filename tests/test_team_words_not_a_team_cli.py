"""Words that look like a team question but are not one, and "team X" alone, through the CLI
against the demo dataset on a real Neo4j (found by a pre-release check of the team-side
wordings): "What was the release responsible for?" was told `no team named 'release'`, "the
checkout team services are failing since the release" said 'checkout' was the name of no
record visible (svc:checkout is), and "team payments-core" alone had no claim."""

from __future__ import annotations

from conftest import investigate_json

ALICE = ["--subject", "acme/user:alice", "--deadline-seconds", "600"]


def _said(doc: dict) -> str:  # type: ignore[type-arg]
    return " ".join(
        [c["statement"] for c in doc["claims"]]
        + [m["description"] for m in doc["missing_evidence"]]
        + [str(doc.get("unresolved_names", ""))]
    )


def test_a_record_responsible_for_something_is_no_team(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = investigate_json(invoke, "What was the release responsible for on 2026-07-23?", *ALICE)
    assert "no team named" not in _said(doc), _said(doc)


def test_a_symptom_of_a_team_s_services_is_no_team_question(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = investigate_json(
        invoke, "the checkout team services are failing since the release", *ALICE
    )
    said = _said(doc)
    assert "no team named 'checkout'" not in said, said
    assert "OWNS record of team" not in said, said


def test_a_team_named_alone_lists_what_it_owns(demo_graph, cli_env, invoke) -> None:  # type: ignore[no-untyped-def]
    doc = investigate_json(invoke, "team payments-core", *ALICE)
    assert any("team:payments-core OWNS svc:ledger" in c["statement"] for c in doc["claims"]), (
        _said(doc)
    )
