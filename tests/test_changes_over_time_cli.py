"""What changed over a period is more than releases (e32-qa J): an owner handover, a runbook
version put in force, a service decommissioned are changes the KG versions, listed in time
order with their kind, each bound to its records, as of as_of and known_at. Through the CLI
against a real Neo4j. Before, "what changed since the incident?" (as_of 07-26) said "no
release of the services asked about and no other change the subject may read is recorded"
while payment-api passed from payments-core to payments-platform on 07-24 and runbook
payment-recovery went v3 -> v4 on 07-25."""

from __future__ import annotations

from conftest import investigate_json

HANDOVER = (
    "Owner handover of svc:payment-api at 2026-07-24T00:00:00Z, in the period asked, {span}: "
    "team:payments-core OWNS svc:payment-api until then (valid 2025-01-01T00:00:00Z to "
    "2026-07-24T00:00:00Z); team:payments-platform OWNS svc:payment-api from then (valid "
    "2026-07-24T00:00:00Z to open)"
)
RUNBOOK_V4 = (
    "Runbook version runbook:payment-recovery@v4 (Payment recovery runbook v4) in force from "
    "2026-07-25T00:00:00Z, in the period asked, {span}; it replaced runbook:payment-recovery@v3 "
    "(valid 2026-07-01T00:00:00Z to 2026-07-25T00:00:00Z)"
)
SINCE = "from 2026-07-23T10:48:01Z to 2026-07-26T12:00:00Z ('since the incident')"
ON_24 = "from 2026-07-24T00:00:00Z to 2026-07-24T23:59:59Z ('on 2026-07-24')"
ON_25 = "from 2026-07-25T00:00:00Z to 2026-07-25T23:59:59Z ('on 2026-07-25')"


def _ask(invoke, question: str, *flags: str, subject: str = "acme/user:bob") -> dict:  # type: ignore[no-untyped-def,type-arg]
    return investigate_json(
        invoke, question, "--subject", subject, "--deadline-seconds", "300", *flags
    )


def _statements(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["statement"] for c in doc["claims"]]


def _cited(doc: dict, statement: str) -> set[str]:  # type: ignore[type-arg]
    """The element ids of the evidence a claim cites."""
    claim = next(c for c in doc["claims"] if c["statement"] == statement)
    by_id = {ev["evidence_id"]: ev["element_id"] for ev in doc["evidence"]}
    return {by_id[e] for e in claim["evidence_ids"]}


def test_since_the_incident_lists_the_handover_then_the_runbook_version(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = _ask(invoke, "what changed since the incident?", "--as-of", "2026-07-26T12:00:00Z")
    statements = _statements(doc)
    handover, runbook = HANDOVER.format(span=SINCE), RUNBOOK_V4.format(span=SINCE)
    assert statements == [handover, runbook], statements
    assert _cited(doc, handover) == {
        "OWNS|team:payments-core|svc:payment-api|2025-01-01",
        "OWNS|team:payments-platform|svc:payment-api|2026-07-24",
    }
    assert _cited(doc, runbook) == {
        "runbook:payment-recovery@v3",
        "runbook:payment-recovery@v4",
    }
    assert doc["missing_evidence"] == [], doc["missing_evidence"]
    assert doc["status"] == "complete"


def test_each_day_lists_its_own_change(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    later = ["--as-of", "2026-07-26T12:00:00Z"]
    doc = _ask(invoke, "what changed on payment-api on 2026-07-24?", *later)
    assert _statements(doc) == [HANDOVER.format(span=ON_24)], _statements(doc)
    doc = _ask(invoke, "what changed on payment-api on 2026-07-25?", *later)
    assert _statements(doc) == [RUNBOOK_V4.format(span=ON_25)], _statements(doc)


def test_before_the_handover_nothing_later_is_listed(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # Asked the evening of the incident: the period ends at as_of, before both changes.
    doc = _ask(invoke, "what changed since the incident?", "--as-of", "2026-07-23T18:00:00Z")
    assert doc["claims"] == [], _statements(doc)
    gaps = [m["description"] for m in doc["missing_evidence"]]
    assert gaps == [
        "no release of the services asked about and no other change the subject may read is "
        "recorded from 2026-07-23T10:48:01Z to 2026-07-23T18:00:00Z ('since the incident'); "
        "nor an owner handover, a runbook version or a dependency of svc:payment-api beginning or "
        "ending in it"
    ], gaps


def test_known_at_before_the_records_lists_only_what_was_recorded(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    later = ["--as-of", "2026-07-26T12:00:00Z"]
    # payments-platform's OWNS record was made 2026-07-20T16:00: at 15:00 only the end of
    # payments-core's is known, and no successor.
    doc = _ask(
        invoke,
        "what changed on payment-api on 2026-07-24?",
        *later,
        "--known-at",
        "2026-07-20T15:00:00Z",
    )
    assert _statements(doc) == [
        "Owner of svc:payment-api ended at 2026-07-24T00:00:00Z, in the period asked, "
        f"{ON_24}: team:payments-core OWNS svc:payment-api (valid 2025-01-01T00:00:00Z to "
        "2026-07-24T00:00:00Z); no later owner of svc:payment-api the subject may read is "
        "recorded by known_at"
    ], _statements(doc)
    # v4 was recorded 2026-07-24T17:00: at 12:00 v3's end is known, not its successor.
    doc = _ask(
        invoke,
        "what changed on payment-api on 2026-07-25?",
        *later,
        "--known-at",
        "2026-07-24T12:00:00Z",
    )
    assert _statements(doc) == [
        "Runbook version runbook:payment-recovery@v3 (Payment recovery runbook v3) out of "
        f"force from 2026-07-25T00:00:00Z, in the period asked, {ON_25}; no later version the "
        "subject may read is recorded by known_at"
    ], _statements(doc)
    # Known after both records: the handover itself.
    doc = _ask(
        invoke,
        "what changed on payment-api on 2026-07-24?",
        *later,
        "--known-at",
        "2026-07-25T00:00:00Z",
    )
    assert _statements(doc) == [HANDOVER.format(span=ON_24)], _statements(doc)


def test_a_decommissioned_service_is_a_change_of_its_month(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = _ask(
        invoke, "what changed on legacy-fraud in June 2026?", "--as-of", "2026-07-23T10:30:00Z"
    )
    assert _statements(doc) == [
        "Service svc:legacy-fraud ended at 2026-06-30T00:00:00Z (decommissioned), in the "
        "period asked, from 2026-06-01T00:00:00Z to 2026-06-30T23:59:59Z ('in June 2026'): "
        "its record is valid 2024-01-01T00:00:00Z to 2026-06-30T00:00:00Z"
    ], _statements(doc)


def test_visibility_carol_and_mallory(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    later = ["--as-of", "2026-07-26T12:00:00Z"]
    # carol (internal only) may read the catalog's OWNS records: the same handover.
    doc = _ask(
        invoke, "what changed on payment-api on 2026-07-24?", *later, subject="acme/user:carol"
    )
    assert _statements(doc) == [HANDOVER.format(span=ON_24)], _statements(doc)
    # mallory (globex) asks of globex's own payment-api: nothing of acme's.
    doc = _ask(
        invoke,
        "what changed on payment-api on 2026-07-24?",
        *later,
        subject="globex/user:mallory",
    )
    text = repr(doc["claims"]) + repr(doc["evidence"])
    assert "payments-core" not in text and "payment-recovery" not in text, text


def _gaps(doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [m["description"] for m in doc["missing_evidence"] if m["evidence_type"] == "ownership"]


def test_owner_of_a_decommissioned_service_says_it_ended(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # e32-qa m11: was the bare "no OWNS relationship valid at as_of".
    doc = _ask(invoke, "who owns legacy-fraud?", "--as-of", "2026-07-23T10:30:00Z")
    assert _gaps(doc) == [
        "no OWNS relationship valid at as_of: svc:legacy-fraud itself ended at "
        "2026-06-30T00:00:00Z (decommissioned), before as_of 2026-07-23T10:30:00Z (its record: "
        "valid 2024-01-01T00:00:00Z to 2026-06-30T00:00:00Z), so no owner of it holds at as_of; "
        "ask with an --as-of before its end for its owner then"
    ], doc["missing_evidence"]
    assert doc["status"] == "partial"


def test_owner_under_a_stale_known_at_names_the_last_owner_recorded(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # e32-qa m3: before payments-platform's OWNS record was made (2026-07-20T16:00).
    doc = _ask(
        invoke,
        "who owns payment-api?",
        "--as-of",
        "2026-07-26T00:00:00Z",
        "--known-at",
        "2026-07-20T15:00:00Z",
    )
    assert _gaps(doc) == [
        "no OWNS relationship valid at as_of: the last owner of svc:payment-api recorded by "
        "known_at 2026-07-20T15:00:00Z, team:payments-core OWNS svc:payment-api (valid "
        "2025-01-01T00:00:00Z to 2026-07-24T00:00:00Z), ended before as_of "
        "2026-07-26T00:00:00Z; no later owner of svc:payment-api is recorded by known_at "
        "2026-07-20T15:00:00Z (a record made later is not read then)"
    ], doc["missing_evidence"]
    # Known after the record: today's owner, no gap.
    doc = _ask(
        invoke,
        "who owns payment-api?",
        "--as-of",
        "2026-07-26T00:00:00Z",
        "--known-at",
        "2026-07-21T00:00:00Z",
    )
    assert _gaps(doc) == [], doc["missing_evidence"]
    assert any("team:payments-platform OWNS svc:payment-api" in s for s in _statements(doc))


def test_a_known_at_before_every_record_says_nothing_was_recorded_by_then(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # e32-qa m3: was "'payment-api' resolved to nothing this subject may see".
    doc = _ask(
        invoke,
        "who owns payment-api?",
        "--as-of",
        "2026-07-23T10:30:00Z",
        "--known-at",
        "2020-01-01T00:00:00Z",
    )
    assert _gaps(doc) == [
        "'payment-api' matched nothing this subject may read that was recorded by known_at "
        "2020-01-01T00:00:00Z (a record made later is not read then), so no owner was looked "
        "for: ask with a later --known-at, or a visible id"
    ], doc["missing_evidence"]
    # Without --known-at (now, after as_of) an unknown name keeps its words.
    doc = _ask(invoke, "who owns no-such-service?", "--as-of", "2026-07-23T10:30:00Z")
    assert any("resolved to nothing this subject may see" in g for g in _gaps(doc)), _gaps(doc)


RETRACTED = (
    "A record of svc:payment-api DEPENDS_ON svc:legacy-fraud (valid 2024-01-01T00:00:00Z to "
    "open) was retracted at 2026-07-10T08:00:00Z: recorded in error: payment-api never called "
    "legacy-fraud; it is no dependency (no current record of this edge is read)"
)


def test_a_retracted_dependency_is_said_as_retracted(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # e32-qa m11: listed the three current dependencies and never the retracted record.
    question = "does payment-api depend on legacy-fraud?"
    at = ["--as-of", "2026-07-23T10:30:00Z"]
    doc = _ask(invoke, question, *at)
    statements = _statements(doc)
    assert statements[0] == RETRACTED, statements
    assert _cited(doc, RETRACTED) == {"DEPENDS_ON|svc:payment-api|svc:legacy-fraud"}
    assert (
        "At 2026-07-23T10:30:00Z: svc:payment-api DEPENDS_ON svc:payment-db (valid "
        in (statements[2])
    ), statements
    # carol may read the catalog's records: the same.
    doc = _ask(invoke, question, *at, subject="acme/user:carol")
    assert RETRACTED in _statements(doc), _statements(doc)
    # Known before the retraction was recorded: the record is current then, no retraction.
    doc = _ask(invoke, question, *at, "--known-at", "2026-07-09T00:00:00Z")
    statements = _statements(doc)
    assert RETRACTED not in statements
    assert any(
        s.startswith("At 2026-07-23T10:30:00Z: svc:payment-api DEPENDS_ON svc:legacy-fraud")
        for s in statements
    ), statements
    # mallory (globex) reads nothing of acme's records.
    doc = _ask(invoke, question, *at, subject="globex/user:mallory")
    assert "legacy-fraud (valid" not in repr(doc["claims"]), doc["claims"]


def test_runbook_card_of_a_decommissioned_service_says_it_ended(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    # e32-qa m11: said only "no runbook is linked to svc:legacy-fraud".
    flags = ["--service", "svc:legacy-fraud", "--subject", "acme/user:bob"]
    result = invoke("runbook", *flags, "--as-of", "2026-07-23T10:30:00Z")
    assert result.code == 0, result
    assert result.out.splitlines()[0] == (
        "No runbook: no runbook is linked to svc:legacy-fraud (none APPLIES_TO it); "
        "svc:legacy-fraud itself ended at 2026-06-30T00:00:00Z (decommissioned), before as_of "
        "(its record: valid 2024-01-01T00:00:00Z to 2026-06-30T00:00:00Z)"
    ), result.out
    # Before its end the service was in force: nothing of an end.
    result = invoke("runbook", *flags, "--as-of", "2026-06-01T10:30:00Z")
    assert result.code == 0, result
    assert "ended" not in result.out.splitlines()[0], result.out


def test_dependencies_and_owner_begun_in_a_month(  # type: ignore[no-untyped-def]
    demo_graph, cli_env, invoke
) -> None:
    doc = _ask(
        invoke, "what changed on payment-api in January 2025?", "--as-of", "2026-07-23T10:30:00Z"
    )
    span = "from 2025-01-01T00:00:00Z to 2025-01-31T23:59:59Z ('in January 2025')"
    assert _statements(doc) == [
        # Session 34: its own start first (it was not listed).
        f"Service svc:payment-api began at 2025-01-01T00:00:00Z, in the period asked, {span}: "
        "its first record is valid 2025-01-01T00:00:00Z to open",
        *(
            f"Dependency added at 2025-01-01T00:00:00Z, in the period asked, {span}: "
            f"svc:payment-api DEPENDS_ON svc:{to} (valid 2025-01-01T00:00:00Z to open)"
            for to in ("ledger", "payment-db", "risk-engine")
        ),
        f"New owner of svc:payment-api from 2025-01-01T00:00:00Z, in the period asked, {span}: "
        "team:payments-core OWNS svc:payment-api (valid 2025-01-01T00:00:00Z to "
        "2026-07-24T00:00:00Z)",
    ], _statements(doc)
